"""The nngaussian input kernel (docs/original.md#knn-restricted-gaussian-nngaussian): dense and
sparse versions, against a direct loop."""

import math
import warnings

import numba
import numpy as np
import pytest
from scipy import sparse

from smallvis import smallvis
from smallvis.affinity import AffinityRecipe, input_affinities, sparse_affinities
from smallvis.affinity import calibration_kernels as ck
from smallvis.affinity.nngaussian import nngaussian_affinities
from smallvis.affinity.perplexity import _bisect
from smallvis.io.data import InputData
from smallvis.methods import build_method


def _data(n=150, p=5, seed=11):
    return np.random.default_rng(seed).normal(size=(n, p))


def _reference(X, U, k):
    """Direct loop of the nngaussian calibration with the reference bisection: (neighbours,
    weights, beta, failed)."""
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D2, np.inf)
    idx = np.argsort(D2, axis=1, kind="stable")[:, :k]
    W = np.empty((len(X), k))
    beta = np.ones(len(X))
    failed = np.zeros(len(X), dtype=bool)
    for i, nbrs in enumerate(idx):
        d = D2[i, nbrs]
        b, H, w, Z, ok = _bisect(d, math.log(U), 0.5 * U * k / d.sum(), 1e-5, 50)
        if ok:
            W[i], beta[i] = w, b
        else:
            W[i], failed[i] = 1.0 / k, True
    return idx, W, beta, failed


def test_matches_direct_loop():
    X = _data()
    res = nngaussian_affinities(InputData(X), 10.0)
    idx, W, beta, failed = _reference(X, 10.0, 30)
    np.testing.assert_array_equal(res.idx, idx)
    np.testing.assert_array_equal(res.failed, failed)
    np.testing.assert_allclose(res.beta, beta, rtol=1e-12)
    np.testing.assert_allclose(res.W, W, rtol=1e-12, atol=1e-300)
    # each row reaches the perplexity over its k neighbours
    p = res.W / res.W.sum(axis=1, keepdims=True)
    H = -np.sum(p * np.log(p), axis=1)
    np.testing.assert_allclose(H, math.log(10.0), atol=1e-5)
    # dint over the neighbours: 2 beta^2 Var_p(d^2)
    # (docs/original.md#intrinsic-dimensionality-and-idp)
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)[np.arange(len(X))[:, None], idx]
    var = np.sum(p * d2**2, axis=1) - np.sum(p * d2, axis=1) ** 2
    np.testing.assert_allclose(res.dint, 2 * res.beta**2 * var, rtol=1e-6)


def test_non_integer_3u_is_truncated():
    # 3 x 5.5 = 16.5 -> 16 neighbours per row
    aff = input_affinities(InputData(_data()), 5.5, AffinityRecipe("nngaussian"),
                           frozenset({"V"}))
    assert np.all(np.count_nonzero(aff.V, axis=1) == 16)
    assert np.all(np.diag(aff.V) == 0)


@pytest.mark.parametrize("recipe", [
    AffinityRecipe("nngaussian"),
    AffinityRecipe("nngaussian", "none", normalize=False),
    AffinityRecipe("nngaussian", "umap", row_normalize=False),
    AffinityRecipe("nngaussian", "mutual", renormalize_rows=True),
])
def test_dense_equals_sparse(recipe):
    X = _data()
    dense = input_affinities(InputData(X), 8.0, recipe, frozenset({"V"}))
    sp = sparse_affinities(InputData(X), 8.0, recipe, knn_method="exact")
    assert sparse.isspmatrix_csr(sp.P)
    np.testing.assert_allclose(sp.P.toarray(), dense.P, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(sp.V.toarray(), dense.V)
    np.testing.assert_array_equal(sp.beta, dense.beta)
    np.testing.assert_array_equal(sp.dint, dense.dint)


def test_sparse_passes_knn_method(monkeypatch):
    seen = []
    original = InputData.neighbors

    def spy(self, k, method="auto", random_state=None):
        seen.append((k, method, random_state))
        return original(self, k, "exact")

    monkeypatch.setattr(InputData, "neighbors", spy)
    sparse_affinities(InputData(_data()), 4.0, AffinityRecipe("nngaussian"),
                      knn_method="nndescent", random_state=3)
    input_affinities(InputData(_data()), 4.0, AffinityRecipe("nngaussian"))
    assert seen == [(12, "nndescent", 3), (12, "exact", None)]


def test_precomputed_distances():
    X = _data()
    R = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    a = input_affinities(InputData(R, precomputed=True), 8.0, AffinityRecipe("nngaussian"))
    b = input_affinities(InputData(X), 8.0, AffinityRecipe("nngaussian"))
    np.testing.assert_allclose(a.P, b.P, rtol=1e-10, atol=1e-300)


def test_too_many_neighbours_warns_and_uses_all():
    X = _data(20)
    with pytest.warns(RuntimeWarning, match="30 neighbours.*only 19 other points; using 19"):
        aff = input_affinities(InputData(X), 10.0, AffinityRecipe("nngaussian"),
                               frozenset({"V"}))
    assert np.all(np.count_nonzero(aff.V, axis=1) == 19)


@pytest.mark.parametrize("U", [19.5, np.r_[np.full(19, 5.0), 19.2]])
def test_perplexity_above_n_minus_1_is_an_error(U):
    with pytest.raises(ValueError, match="nngaussian kernel needs perplexity <= n - 1 = 19"):
        input_affinities(InputData(_data(20)), U, AffinityRecipe("nngaussian"))


def test_failed_points_get_uniform_weights():
    # equidistant points: the entropy does not depend on beta
    X = np.eye(10)
    with pytest.warns(RuntimeWarning, match="10 perplexity calibrations failed.*1/9"):
        res = nngaussian_affinities(InputData(X), 3.0)
    assert res.failed.all()
    np.testing.assert_array_equal(res.W, np.full((10, 9), 1 / 9))
    np.testing.assert_array_equal(res.beta, np.ones(10))
    np.testing.assert_array_equal(res.dint, np.zeros(10))


def test_per_point_perplexity():
    X = _data()
    U = np.linspace(3, 9, len(X))
    res = nngaussian_affinities(InputData(X), U)
    assert res.idx.shape == (len(X), 27)  # floor(3 max U)
    p = res.W / res.W.sum(axis=1, keepdims=True)
    H = -np.sum(p * np.log(p), axis=1)
    np.testing.assert_allclose(H, np.log(U), atol=1e-5)


def test_thread_count_independent():
    D = np.sort(np.random.default_rng(5).random((400, 30)) * 4, axis=1)
    U = np.full(400, 7.0)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ck.calibrate_knn_independent(D, U, 1e-5, 50)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = ck.calibrate_knn_independent(D, U, 1e-5, 50)
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)


def test_methods_accept_the_kernel(iris):
    m = build_method(("tsne", {"inp_kernel": "nngauss"}))  # partial names are matched
    assert m.recipe.kernel == "nngaussian"
    X = iris[::3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = smallvis(X, method=("tsne", {"inp_kernel": "nngaussian"}), perplexity=5,
                       max_iter=20, random_state=1, ret_extra=["P", "beta", "dint"])
    assert res.P.shape == (len(X), len(X)) and np.allclose(res.P, res.P.T)
    assert np.all(res.beta > 0) and np.all(res.dint > 0)
