"""Parity with the original R package on small iris subsets.

Reference numbers are the original's published results for these settings (its own test-suite values),
reproduced to the precision it reports.
"""

import numpy as np
import pytest

from smallvis import smallvis

EXPECTED_Y = np.array([
    [-188.6, 160.2, 81.5, 182.8, -247, -266.6, 41.8, -125.2, 298.6, 62.5],
    [-25.6, 62.1, -66.6, -94.2, 54, 190.9, -166.5, 61.4, -93.1, 77.7],
]).T


def test_tsne_defaults_with_matrix_init(iris10, iris10_Y):
    Y = smallvis(iris10, Y_init=iris10_Y, perplexity=5)
    np.testing.assert_allclose(Y, EXPECTED_Y, atol=0.1)


def test_tsne_extra_return_values(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, ret_extra=True)
    assert res.N == 10 and res.origD == 4 and res.scale == "absmax"
    assert res.Y_init == "matrix" and res.method == "tsne" and res.perplexity == 5
    assert list(res.itercosts) == [100, 200, 300, 400, 500]
    np.testing.assert_allclose(list(res.itercosts.values()),
                               [0.3087, 0.04999, 0.04132, 0.04129, 0.04129], atol=1e-4)
    np.testing.assert_allclose(
        res.costs,
        [0.005045, 0.0005255, -0.005447, 0.003863, 0.0005298, 0.006410, 0.01191, 0.007799,
         0.003098, 0.007556], atol=1e-5)
    np.testing.assert_allclose(res.Y, EXPECTED_Y, atol=0.1)
    assert res.iter == 500


def test_equal_per_point_perplexities_match_scalar(iris10, iris10_Y):
    Y = smallvis(iris10, Y_init=iris10_Y, perplexity=np.full(10, 5.0))
    np.testing.assert_allclose(Y, EXPECTED_Y, atol=0.1)


def test_per_point_perplexities(iris10, iris10_Y):
    Y = smallvis(iris10, Y_init=iris10_Y, perplexity=[5] * 5 + [6] * 5)
    expected = np.array([
        [-335.8, 169.9, 354.1, 250, -412, -629.5, 511.4, -193.4, 237.1, 48.18],
        [271.5, 120.7, -35.23, -208.6, 87.18, 284, -171.8, 121.4, -436.3, -32.79],
    ]).T
    np.testing.assert_allclose(Y, expected, rtol=1e-3, atol=0.05)


def test_iris10_pca_init_fixture(iris10_Y):
    # PCA of raw iris10 with LAPACK signs, as the original's tests use.
    np.testing.assert_allclose(iris10_Y[0], [-0.28600351, 0.04691972], atol=1e-7)
