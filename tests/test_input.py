"""Input processing (docs/original.md#input-processing): numeric columns, scaling modes, PCA and
whitening, distance input."""

import numpy as np
import pandas as pd
import pytest

from smallvis import smallvis
from smallvis.io.preprocess import (as_numeric_matrix, pca_scores, pca_whiten, resolve_scale,
                                    scale_input)


def test_dataframe_keeps_numeric_columns(iris10):
    df = pd.DataFrame(iris10, columns=list("abcd"))
    df["species"] = "setosa"
    with pytest.warns(UserWarning, match=r"non-numeric column\(s\) 'species' dropped"):
        X = as_numeric_matrix(df)
    np.testing.assert_array_equal(X, iris10)


def test_dataframe_without_numeric_columns():
    with pytest.raises(ValueError, match="no numeric columns"):
        as_numeric_matrix(pd.DataFrame({"a": ["x", "y", "z"]}))


def test_absmax_divides_by_abs_of_largest_signed_element():
    X = np.array([[0.0], [0.0], [-10.0]])  # centred: 3.33, 3.33, -6.67
    np.testing.assert_allclose(scale_input(X, "absmax").ravel(), [1, 1, -2])


def test_absmax_iris10(iris10):
    Xs = scale_input(iris10, "absmax")
    centred = iris10 - iris10.mean(axis=0)
    np.testing.assert_allclose(Xs, centred / abs(centred.max()))
    assert abs(centred.max()) == pytest.approx(0.59)


def test_range_is_global():
    X = np.array([[1.0, 10.0], [3.0, 5.0]])
    np.testing.assert_allclose(scale_input(X, "range"), (X - 1) / 9)


def test_scale_drops_constant_columns_and_zscores():
    X = np.array([[1.0, 5.0, 2.0], [2.0, 5.0, 4.0], [3.0, 5.0, 9.0]])
    Xs = scale_input(X, "scale")
    assert Xs.shape == (3, 2)
    np.testing.assert_allclose(Xs.std(axis=0, ddof=1), 1)
    np.testing.assert_allclose(Xs.mean(axis=0), 0, atol=1e-12)


@pytest.mark.parametrize("given, mode", [(None, "none"), (False, "none"), (True, "scale"),
                                         ("abs", "absmax"), ("RANGE", "range"), ("sc", "scale")])
def test_scale_names(given, mode):
    assert resolve_scale(given) == mode


def test_pca_and_whitening(iris):
    S = pca_scores(iris, 3)
    np.testing.assert_allclose(S.mean(axis=0), 0, atol=1e-12)
    ref = np.linalg.svd(iris - iris.mean(axis=0), compute_uv=False)[:3]
    np.testing.assert_allclose(np.linalg.norm(S, axis=0), ref)
    Wh = pca_whiten(iris, 3)
    np.testing.assert_allclose(Wh.std(axis=0, ddof=1), 1, atol=1e-4)


def test_pca_reported_and_used_for_pca_init(iris):
    res = smallvis(iris, pca=True, initial_dims=3, max_iter=0, Y_init="pca", perplexity=10,
                   ret_extra=["X"])
    assert res.pca_dims == 3 and res.origD == 3 and res.whiten_dims is None
    np.testing.assert_allclose(res.Y, res.X[:, :2])
    res = smallvis(iris, pca="whiten", initial_dims=3, max_iter=0, perplexity=10, ret_extra=True)
    assert res.whiten_dims == 3 and res.pca_dims is None


def test_pca_skipped_when_initial_dims_too_large(iris10):
    res = smallvis(iris10, pca=True, initial_dims=5, max_iter=0, perplexity=3, ret_extra=True)
    assert res.origD == 4 and res.pca_dims is None


def test_pca_needs_initial_dims_at_least_k(iris):
    with pytest.raises(ValueError, match="initial_dims"):
        smallvis(iris, pca=True, initial_dims=1, max_iter=0)


def test_precomputed_distances_calibrate_on_unsquared_distances(iris10):
    from scipy.spatial.distance import cdist

    D = cdist(iris10, iris10)
    res_d = smallvis(D, metric="precomputed", perplexity=5, max_iter=0, ret_extra=["P", "beta"])
    res_x = smallvis(iris10, scale=None, perplexity=5, max_iter=0, ret_extra=["P"])
    assert res_d.origD is None
    assert not np.allclose(res_d.P, res_x.P, atol=1e-4)  # the original's quirk, kept
    # same as a "gauss"-less calibration of exp(-beta r)
    V = np.exp(-res_d.beta[:, None] * D)
    np.fill_diagonal(V, 0)
    P = V / V.sum(1, keepdims=True)
    P = (P + P.T) / 2
    np.testing.assert_allclose(res_d.P, P / P.sum(), atol=1e-12)
