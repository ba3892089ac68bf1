"""Output initialisation (docs/original.md#output-initialisation), including robustness of the
spectral inits."""

import logging

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.run.init import spectral_init


def initial(X, **kw):
    kw.setdefault("perplexity", 5)
    return smallvis(X, max_iter=0, ret_extra=True, **kw).Y


def test_rand_init_sd_1e4_and_centred(iris10):
    Y = initial(iris10, random_state=0)
    np.testing.assert_allclose(Y.std(axis=0, ddof=1), 1e-4)
    np.testing.assert_allclose(Y.mean(axis=0), 0, atol=1e-18)


def test_pca_init_is_pca_of_scaled_input(iris10, iris10_Y):
    Y = initial(iris10, Y_init="pca", scale=None)
    np.testing.assert_allclose(Y, iris10_Y)


def test_spca_is_pca_rescaled(iris10, iris10_Y):
    Y = initial(iris10, Y_init="spca", scale=None)
    np.testing.assert_allclose(Y.std(axis=0, ddof=1), 1e-4)
    ref = iris10_Y - iris10_Y.mean(0)
    np.testing.assert_allclose(Y, ref / ref.std(0, ddof=1) * 1e-4)


def test_init_sdev_rescales_any_init(iris10, iris10_Y):
    Y = initial(iris10, Y_init=iris10_Y, Y_init_sdev=2.0)
    np.testing.assert_allclose(Y.std(axis=0, ddof=1), 2.0)
    Y = initial(iris10, Y_init="pca", Y_init_sdev=1)
    np.testing.assert_allclose(Y.std(axis=0, ddof=1), 1.0)


def test_matrix_init_unchanged(iris10, iris10_Y):
    np.testing.assert_array_equal(initial(iris10, Y_init=iris10_Y), iris10_Y)


def test_laplacian_eigenmap_solves_random_walk_eigenproblem(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=0, Y_init="lap", ret_extra=["P"])
    P, Y = res.P, res.Y
    M = P / P.sum(axis=0)[:, None]
    np.testing.assert_allclose(np.linalg.norm(Y, axis=0), 1)
    for c in range(2):
        lam = (Y[:, c] @ M @ Y[:, c]) / (Y[:, c] @ Y[:, c])
        np.testing.assert_allclose(M @ Y[:, c], lam * Y[:, c], atol=1e-10)
    vals = np.sort(np.abs(np.linalg.eigvals(M)))[::-1]
    got = sorted(abs((Y[:, c] @ M @ Y[:, c])) for c in range(2))
    np.testing.assert_allclose(got, sorted(vals[1:3]), rtol=1e-8)


def test_normalized_laplacian(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=0, Y_init="normlap", ret_extra=["P"])
    P, Y = res.P, res.Y
    d = P.sum(0)
    L = np.eye(10) - P / np.sqrt(np.outer(d, d))
    vals = np.linalg.eigvalsh(L)
    lams = [Y[:, c] @ L @ Y[:, c] for c in range(2)]
    np.testing.assert_allclose(lams, vals[1:3], atol=1e-10)
    assert lams[0] <= lams[1]


def two_far_clusters():
    rng = np.random.default_rng(0)
    return np.vstack([rng.normal(size=(15, 3)), rng.normal(size=(15, 3)) + 1000])


@pytest.mark.parametrize("init", ["laplacian", "normlaplacian"])
def test_spectral_init_on_disconnected_graph_falls_back(init, caplog):
    X = two_far_clusters()
    with caplog.at_level(logging.WARNING, logger="smallvis"):
        Y = initial(X, method=("tsne", {"inp_kernel": "knn"}), perplexity=3, Y_init=init)
    assert np.all(np.isfinite(Y))
    assert "disconnected components" in caplog.text
    np.testing.assert_allclose(np.linalg.norm(Y, axis=0), 1)


def test_spectral_init_with_isolated_point_falls_back(caplog):
    A = np.ones((6, 6)) - np.eye(6)
    A[5, :] = A[:, 5] = 0
    with caplog.at_level(logging.WARNING, logger="smallvis"):
        Y = spectral_init(A, 2, normalized=False, fallback=lambda: np.arange(12.0).reshape(6, 2))
    assert np.all(np.isfinite(Y)) and "components" in caplog.text


def test_spectral_init_large_n_uses_sparse_solver(monkeypatch):
    import smallvis.run.init as init

    monkeypatch.setattr(init, "DENSE_EIGEN_LIMIT", 10)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    A = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(A, 0)
    for normalized in (False, True):
        Y = spectral_init(A, 2, normalized=normalized, fallback=None)
        assert Y.shape == (60, 2) and np.all(np.isfinite(Y))


@pytest.mark.parametrize("normalized", [True, False])
def test_sparse_affinities_give_the_dense_spectral_init(normalized):
    """The sgd engine's sparse P: same eigenvectors (up to sign, to the solver's tolerance)."""
    import scipy.sparse as sp
    from sklearn.datasets import make_swiss_roll

    from smallvis.affinity import sparse_affinities
    from smallvis.io.data import InputData
    from smallvis.methods import build_method

    X = make_swiss_roll(n_samples=400, noise=0.05, random_state=0)[0]
    m = build_method("umap", perplexity=15)
    P = sparse_affinities(InputData(X), 15, m.recipe).P
    assert sp.issparse(P)
    sparse_Y = spectral_init(P, 2, normalized=normalized, fallback=None)
    dense_Y = spectral_init(P.toarray(), 2, normalized=normalized, fallback=None)
    signs = np.sign(np.sum(sparse_Y * dense_Y, axis=0))
    np.testing.assert_allclose(sparse_Y * signs, dense_Y, atol=1e-3)
