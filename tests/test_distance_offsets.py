"""Distances, and everything calibrated from them, do not lose precision under a common offset.

Squared distances in the expanded form ``|x|^2 + |y|^2 - 2 x.y`` keep only ``eps * |x|^2`` of
absolute precision; every place that expands first moves the origin to the column medians (a
translation changes no distance). The data are multiples of 1/8, so adding 1e8 is exact and any
difference in P is the distance computation's.
"""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.affinity.blocked import calibrate_dense
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances
from smallvis.io.neighbors import nearest_neighbors
from smallvis.io.preprocess import centre_columns, scale_input
from smallvis.metrics.rank import _corank


@pytest.fixture
def X():
    return np.random.default_rng(0).integers(-40, 40, size=(60, 5)) / 8.0


def _P(X, **kw):
    return smallvis(X, perplexity=10, max_iter=0, ret_extra=["P"], random_state=1, **kw).P


def test_squared_distances_ignore_an_offset(X):
    D2 = squared_distances(X)
    np.testing.assert_allclose(squared_distances(X + 1e8), D2, rtol=0, atol=1e-12 * D2.max())


def test_squared_distances_of_integers_stay_exact():
    """The shift is a data value (a median), so integer data stay integer: duplicates at exactly 0."""
    X = np.vstack([np.arange(12.0).reshape(4, 3) ** 2, [[0.0, 1.0, 4.0]]]) + 7
    D2 = squared_distances(X)
    diff = X[:, None, :] - X[None, :, :]
    np.testing.assert_array_equal(D2, np.einsum("ijk,ijk->ij", diff, diff))


def test_p_invariant_under_offset_without_scaling(X):
    P = _P(X, scale="none")
    np.testing.assert_allclose(_P(X + 1e8, scale="none"), P, rtol=1e-9, atol=1e-12 * P.max())


@pytest.mark.parametrize("scale", ["absmax", "scale"])
def test_constant_huge_column_changes_nothing(X, scale):
    """absmax centres every column (docs/original.md#scaling) before dividing by the largest entry:
    a constant column centres to exactly 0 (R's two-pass mean does), so it sets neither the divisor
    nor P."""
    C = np.hstack([X, np.full((X.shape[0], 1), 1e100)])
    P = _P(X, scale=scale)
    np.testing.assert_allclose(_P(C, scale=scale), P, rtol=1e-9, atol=1e-12 * P.max())


def test_absmax_constant_column_is_zero():
    # the rounded mean of ten 1e100s is not 1e100: a one-pass centring leaves ~1.9e84 behind
    C = np.column_stack([np.arange(10.0), np.full(10, 1e100), np.full(10, 0.1)])
    S = scale_input(C, "absmax")
    assert np.all(S[:, 1:] == 0.0)
    np.testing.assert_allclose(S[:, 0], (np.arange(10.0) - 4.5) / 4.5)


def test_centre_columns_two_passes():
    Xc = centre_columns(np.array([[1e8 + 0.125], [1e8 + 0.375], [1e8 - 0.5]]))
    np.testing.assert_allclose(Xc.ravel(), [0.125, 0.375, -0.5], rtol=0, atol=1e-15)


def test_blocked_calibration_invariant_under_offset(X):
    U = np.full(X.shape[0], 10.0)
    one = calibrate_dense(InputData(X), U, squared=True)
    two = calibrate_dense(InputData(X + 1e8), U, squared=True)
    assert not two.failed.any()
    np.testing.assert_allclose(two.V, one.V, rtol=1e-9, atol=1e-12)


def test_exact_neighbours_invariant_under_offset(X):
    idx, dist = nearest_neighbors(X, 7, method="exact")
    idx2, dist2 = nearest_neighbors(X + 1e8, 7, method="exact")
    np.testing.assert_array_equal(idx2, idx)
    np.testing.assert_allclose(dist2, dist, rtol=1e-12)


def test_rank_metrics_invariant_under_offset():
    # a finer grid than the fixture's: no tied distances, whose order would be the rounding's
    X = np.random.default_rng(2).integers(-2**20, 2**20, size=(60, 5)) / 2.0**20
    Y = X[:, :2] * 3.0
    one = _corank(X, Y, 5)
    two = _corank(X + 1e8, Y - 1e8, 5)
    np.testing.assert_array_equal(two[0], one[0])
    assert two[1:] == one[1:]


def test_duplicates_are_exactly_zero_and_close_pairs_precise():
    """The expanded form cancels for near neighbours; those entries come from differences."""
    from smallvis.io.distances import squared_distances

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 7)) * 3.7 + 11.0
    X[7] = X[3]                                     # a duplicate
    X[9] = X[4] + 1e-7                              # a very close pair
    D2 = squared_distances(X)
    assert D2[3, 7] == 0.0 and D2[7, 3] == 0.0
    assert D2[4, 9] == pytest.approx(7 * 1e-14, rel=1e-6)
    exact = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(D2, exact, rtol=1e-10, atol=1e-12)
