"""Affinity calibration properties (docs/original.md#input-affinities): perplexity reached, sums,
symmetry, kernels, extras."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from smallvis import calibrate_perplexity, smallvis
from smallvis.affinity import fuzzy_set_union, scale_affinities, symmetrize
from smallvis.affinity.perplexity import calibrate_rows


def entropy_rows(P):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(P > 0, P * np.log(P), 0.0), axis=1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(8, 40), dim=st.integers(1, 5), seed=st.integers(0, 10**6),
       frac=st.floats(0.1, 0.8))
def test_perplexity_is_reached(n, dim, seed, frac):
    X = np.random.default_rng(seed).normal(size=(n, dim))
    U = max(3.0, frac * (n - 1))  # at U near 1 tied nearest neighbours make the target unreachable
    cal = calibrate_perplexity(X, U)
    assert cal.n_failed == 0
    np.testing.assert_allclose(entropy_rows(cal.P), np.log(U), atol=1e-4)
    np.testing.assert_allclose(cal.P.sum(axis=1), 1)
    assert np.all(np.diag(cal.V) == 0) and np.all(cal.V >= 0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), shift=st.floats(-100, 100), scale=st.floats(0.01, 100))
def test_p_invariant_to_translation_and_scale(seed, shift, scale):
    X = np.random.default_rng(seed).normal(size=(15, 3))
    a = calibrate_perplexity(X, 4).P
    b = calibrate_perplexity(X * scale + shift, 4).P
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_final_p_sums_to_one_and_is_symmetric(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=0, ret_extra=["P", "V", "beta", "dint"])
    assert res.P.sum() == pytest.approx(1)
    np.testing.assert_allclose(res.P, res.P.T)
    assert res.V.shape == (10, 10) and res.beta.shape == (10,) and np.all(res.dint > 0)


def test_dint_is_analytic_soft_correlation_dimension(iris10):
    cal = calibrate_perplexity(iris10, 5)
    V = cal.V
    Vi = V.sum(1)
    L = np.where(V > 0, np.log(np.where(V > 0, V, 1)), 0)
    delta = (2 / Vi) * (np.sum(V * L**2, 1) - np.sum(V * L, 1) ** 2 / Vi)
    np.testing.assert_allclose(cal.dint, delta, rtol=1e-6)


def test_calibration_failure_falls_back_to_uniform_neighbours(iris10):
    with pytest.warns(RuntimeWarning, match="10 perplexity calibrations failed"):
        cal = calibrate_perplexity(iris10, 9.5)
    np.testing.assert_allclose(cal.V[~np.eye(10, dtype=bool)], 1 / 9)
    assert np.all(cal.dint == 0)


def test_equidistant_neighbours_cannot_reach_lower_perplexity():
    # point 1's two neighbours are equidistant: its entropy is log 2 for every beta
    D = np.array([[0, 1, 4.0], [1, 0, 1.0], [4, 1, 0.0]])
    with pytest.warns(RuntimeWarning, match="1 perplexity calibrations failed"):
        cal = calibrate_perplexity(np.array([[0.0], [1.0], [2.0]]), 1.5)
    assert cal.failed.tolist() == [False, True, False]
    np.testing.assert_allclose(cal.V[1], [1.0, 0.0, 0.0])  # floor(1.5) = 1 nearest neighbour
    cal2 = calibrate_rows(D, np.array([1.5, 1.5, 1.5]))
    assert cal2.failed.tolist() == [False, True, False]


def test_exp_kernel_uses_unsquared_distances(iris10):
    cal = calibrate_perplexity(iris10, 5, kernel="exp")
    from scipy.spatial.distance import cdist

    R = cdist(iris10, iris10)
    V = np.exp(-cal.beta[:, None] * R)
    np.fill_diagonal(V, 0)
    np.testing.assert_allclose(cal.V, V, rtol=1e-10)


def test_knn_kernel(ui10):
    res = smallvis(ui10, method=("tsne", {"inp_kernel": "knn"}), perplexity=3, max_iter=0,
                   ret_extra=["V", "P"])
    assert np.all(res.V.sum(1) == 3) and set(np.unique(res.V)) == {0.0, 1.0}
    from scipy.spatial.distance import cdist

    D = cdist(ui10, ui10) + np.diag(np.full(10, np.inf))
    nn = np.argsort(D, axis=1)[:, :3]
    for i in range(10):
        assert set(np.flatnonzero(res.V[i])) == set(nn[i])
    assert res.P.sum() == pytest.approx(1)


def test_sigma_kernel(iris10):
    res = smallvis(iris10, method=("tsne", {"inp_kernel": "sigma"}), perplexity=0.5, scale=None,
                   max_iter=0, ret_extra=["V", "beta"])
    from scipy.spatial.distance import cdist

    V = np.exp(-cdist(iris10, iris10, "sqeuclidean") / 0.25)
    np.fill_diagonal(V, 0)
    np.testing.assert_allclose(res.V, V)
    np.testing.assert_allclose(res.beta, 4)


def test_symmetrisations():
    P = np.array([[0, 0.2, 0.8], [0.5, 0, 0.5], [0.1, 0.9, 0]])
    np.testing.assert_allclose(symmetrize(P, "average"), (P + P.T) / 2)
    np.testing.assert_allclose(symmetrize(P, "mutual"), np.sqrt(P * P.T))
    np.testing.assert_allclose(symmetrize(P, "fuzzy"), P + P.T - P * P.T)
    np.testing.assert_allclose(fuzzy_set_union(P, 0), P * P.T)
    out = scale_affinities(P, symmetrize_how="none", row_normalize=2.0, normalize=False)
    np.testing.assert_allclose(out.sum(1), 2)


def test_degree_extras(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=0,
                   ret_extra=["V", "adegin", "adegout", "adegc", "pdeg", "P"])
    np.testing.assert_allclose(res.adegin, res.V.sum(0))
    np.testing.assert_allclose(res.adegout, res.V.sum(1))
    np.testing.assert_allclose(res.adegc, 0.5 * (res.V.sum(0) + res.V.sum(1)))
    np.testing.assert_allclose(res.pdeg, res.P.sum(0))
