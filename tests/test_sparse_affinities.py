"""Sparse input affinities equal the dense ones where the neighbourhoods cover the same entries."""

import logging
import math
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

from smallvis.affinity import AffinityRecipe, input_affinities, sparse_affinities
from smallvis.affinity.perplexity import _bisect
from smallvis.affinity.sparse import calibrate_knn_rows
from smallvis.io import neighbors as nb
from smallvis.io.data import InputData


def _data(n=120, p=5, seed=3):
    return np.random.default_rng(seed).normal(size=(n, p))


def _check_csr(P, n):
    assert sparse.isspmatrix_csr(P) and P.dtype == np.float64 and P.shape == (n, n)
    assert np.all(P.data != 0)
    assert np.all(P.diagonal() == 0)


def _compare(X, perplexity, recipe, precomputed=False):
    dense = input_affinities(InputData(X, precomputed=precomputed), perplexity, recipe)
    sp = sparse_affinities(InputData(X, precomputed=precomputed), perplexity, recipe)
    _check_csr(sp.P, X.shape[0])
    np.testing.assert_allclose(sp.P.toarray(), dense.P, rtol=1e-10, atol=1e-12)
    assert sp.n_failed == dense.n_failed
    return dense, sp


@pytest.mark.parametrize("normalize", [True, False])
def test_knn_kernel_umap(normalize):
    _compare(_data(), 15, AffinityRecipe("knn", "umap", normalize=normalize))


def test_knn_kernel_numeric_row_normalize():
    _compare(_data(), 10, AffinityRecipe("knn", "symmetric", row_normalize=2.5, normalize=False))


@pytest.mark.parametrize("row_normalize", [False, 3.0])
def test_skd(row_normalize):
    # skd is never row-normalised, whatever the recipe says (as the dense path)
    _compare(_data(), 15, AffinityRecipe("skd", "umap", row_normalize=row_normalize,
                                         normalize=False))


def test_skd_precomputed():
    X = _data()
    R = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    _compare(R, 12, AffinityRecipe("skd", "umap", row_normalize=False, normalize=False),
             precomputed=True)


@pytest.mark.parametrize("sym", ["symmetric", "average", "mutual", "none", "umap"])
def test_gaussian_full_neighbourhood(sym):
    # 3 U >= n - 1: the kNN-restricted calibration sees every point
    X = _data()
    dense, sp = _compare(X, 45, AffinityRecipe("gaussian", sym))
    np.testing.assert_allclose(sp.beta, dense.beta, rtol=1e-12)
    np.testing.assert_allclose(sp.dint, dense.dint, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sp.V.toarray(), dense.V, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("kernel", ["gauss", "exp"])
def test_other_gaussian_kernels(kernel):
    _compare(_data(), 50, AffinityRecipe(kernel, "mutual", renormalize_rows=True))


def test_gaussian_precomputed_unsquared():
    X = _data()
    R = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    _compare(R, 45, AffinityRecipe("gaussian"), precomputed=True)


def test_per_point_perplexity():
    X = _data()
    U = np.linspace(40, 60, X.shape[0])
    dense, sp = _compare(X, U, AffinityRecipe("gaussian", "symmetric"))
    np.testing.assert_allclose(sp.beta, dense.beta, rtol=1e-12)


def test_failed_calibrations_match_dense():
    # equidistant points: the entropy does not depend on beta, every calibration fails
    X = np.eye(10)
    with pytest.warns(RuntimeWarning, match="10 perplexity calibrations failed"):
        dense = input_affinities(InputData(X), 5, AffinityRecipe())
    with pytest.warns(RuntimeWarning, match="10 perplexity calibrations failed"):
        sp = sparse_affinities(InputData(X), 5, AffinityRecipe())
    assert sp.n_failed == 10
    np.testing.assert_allclose(sp.P.toarray(), dense.P, atol=1e-15)
    np.testing.assert_array_equal(sp.beta, dense.beta)
    np.testing.assert_array_equal(sp.dint, dense.dint)


def test_restricted_gaussian_reaches_perplexity(caplog):
    n, U = 500, 10.0
    X = _data(n, 4, seed=5)
    data = InputData(X)
    with caplog.at_level(logging.INFO, logger="smallvis"):
        aff = sparse_affinities(data, U, AffinityRecipe("gaussian"))
    assert "kNN-restricted to k = 30 neighbours" in caplog.text
    V = aff.V
    assert np.all(np.diff(V.indptr) == 30)
    cond = sparse.diags(1.0 / np.asarray(V.sum(axis=1)).ravel()) @ V
    H = np.array([-(row.data * np.log(row.data)).sum() for row in cond])
    np.testing.assert_allclose(H, math.log(U), atol=1e-5)
    P = aff.P
    _check_csr(P, n)
    assert abs(P - P.T).max() < 1e-18
    assert P.sum() == pytest.approx(1.0, abs=1e-12)


def _reference_knn_rows(D, U, tol=1e-5, max_tries=50):
    """The R path row by row with :func:`_bisect` (warm start from the previous point)."""
    n, k = D.shape
    W, betas, dint = np.zeros((n, k)), np.ones(n), np.zeros(n)
    failed = np.zeros(n, dtype=bool)
    beta = 0.5 * U[0] / D[0].mean()
    for i in range(n):
        if i > 0:
            beta = betas[i - 1]
        beta, H, w, Z, ok = _bisect(D[i], math.log(U[i]), beta, tol, max_tries)
        if not ok:
            failed[i] = True
            continue
        betas[i], W[i] = beta, w
        p = w / Z
        dint[i] = -2.0 * beta * float(np.sum(D[i] * p * (np.log(p + np.finfo(float).eps) + H)))
    return W, betas, dint, failed


def test_numba_matches_bisect():
    rng = np.random.default_rng(0)
    D = np.sort(rng.random((300, 40)) ** 2 * 10, axis=1)
    U = rng.uniform(3, 12, 300)
    W, beta, dint, failed = calibrate_knn_rows(D, U)
    W2, beta2, dint2, failed2 = _reference_knn_rows(D, U)
    np.testing.assert_array_equal(failed, failed2)
    np.testing.assert_allclose(W, W2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(beta, beta2, rtol=1e-12)
    np.testing.assert_allclose(dint, dint2, rtol=1e-10, atol=1e-12)
    # and the reference is _bisect itself, with the R path's warm start
    b = 0.5 * U[0] / D[0].mean()
    for i in range(3):
        b, H, w, Z, ok = _bisect(D[i], math.log(U[i]), b, 1e-5, 50)
        assert ok and b == beta2[i]


def test_sigma_kernel_rejected():
    with pytest.raises(ValueError, match="sigma.*no sparse version"):
        sparse_affinities(InputData(_data()), 1.0, AffinityRecipe("sigma"))


def test_independent_calibration_logged(caplog):
    X = _data()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        sp = sparse_affinities(InputData(X), 45, AffinityRecipe(calibration="independent"))
    assert "no sparse version" in caplog.text
    dense = input_affinities(InputData(X), 45, AffinityRecipe())
    np.testing.assert_allclose(sp.P.toarray(), dense.P, rtol=1e-10, atol=1e-12)


def test_bad_inputs():
    data = InputData(_data())
    with pytest.raises(ValueError, match="perplexity"):
        sparse_affinities(data, 200, AffinityRecipe())
    with pytest.raises(ValueError, match="perplexity"):
        sparse_affinities(data, np.ones(3) * 5, AffinityRecipe())
    with pytest.raises(ValueError, match="vector"):
        sparse_affinities(data, np.full(120, 5), AffinityRecipe("knn"))
    with pytest.raises(ValueError, match="input kernel"):
        sparse_affinities(data, 5, AffinityRecipe("nope"))
    with pytest.raises(ValueError, match="symmetrization"):
        sparse_affinities(data, 5, AffinityRecipe(symmetrize="nope"))


def test_never_dense(monkeypatch):
    """n = 5000: no dense distances are asked for and the memory stays far below n^2 floats."""

    def boom(self, *args, **kwargs):
        raise AssertionError("dense distances requested")

    for name in ("distances", "squared_distances", "knn"):
        monkeypatch.setattr(InputData, name, boom)
    monkeypatch.setattr(nb, "_BLOCK_BYTES", 4 * 2**20)
    n = 5000
    X = np.random.default_rng(0).normal(size=(n, 10))
    recipes = [(10, AffinityRecipe("gaussian")),
               (15, AffinityRecipe("skd", "umap", row_normalize=False, normalize=False))]
    for perplexity, recipe in recipes:  # imports and numba compilation outside the measurement
        sparse_affinities(InputData(X[:100]), perplexity, recipe, knn_method="exact")
    for perplexity, recipe in recipes:
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            aff = sparse_affinities(InputData(X), perplexity, recipe, knn_method="exact")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        _check_csr(aff.P, n)
        assert peak < 8 * n * n / 8, peak  # an (n, n) float64 array would be 8 n^2 bytes


def test_unknown_knn_method_is_named():
    with pytest.raises(ValueError, match="kNN method"):
        sparse_affinities(InputData(_data()), 10, AffinityRecipe(), knn_method="annoy")
