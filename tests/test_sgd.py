"""The negative-sampling SGD engine: its contract, reproducibility, and that it descends its objective."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from smallvis import smallvis
from smallvis.engines import sgd_kernels as kern
from smallvis.engines.sgd import block_starts, default_epochs, noise_plan
from smallvis.io.data import InputData
from smallvis.methods.umap_curve import umap_ab

from engine_checks import check_sgd, claimed


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=300, n_features=10, centers=4, cluster_std=1.0, random_state=3)
    return X, y


def sgd(X, method="umap", **kw):
    kw.setdefault("perplexity", 15)
    kw.setdefault("random_state", 42)
    return smallvis(X, method=method, engine="sgd", ret_extra=True, **kw)


SGD_METHODS = claimed("sgd")  # every method the catalog says sgd runs


# --- reproducibility --------------------------------------------------------------------------

@pytest.mark.parametrize("method", SGD_METHODS)
def test_same_seed_same_embedding(blobs, method):
    X, _ = blobs
    a = sgd(X, method, max_iter=30)
    b = sgd(X, method, max_iter=30)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert a.itercosts == b.itercosts
    c = sgd(X, method, max_iter=30, random_state=7)
    assert not np.array_equal(a.Y, c.Y)


@pytest.mark.parametrize("method", ["umap", "ncvis", "ee", "mmds"])
def test_result_does_not_depend_on_the_number_of_threads(blobs, method):
    import numba

    X, _ = blobs
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = sgd(X, method, max_iter=20).Y
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = sgd(X, method, max_iter=20).Y
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, many)


# --- behaviour --------------------------------------------------------------------------------

# the sampled objective decreasing over a run, for every method: tests/test_sgd_objective.py


# every method the catalog says sgd runs (computed from the registry when this module is collected)
@pytest.mark.parametrize("method", claimed("sgd"))
def test_exact_and_sgd_find_the_same_clusters(method):
    """Same cost, two optimisers: the same cluster structure, measured by neighbours, not coordinates."""
    check_sgd(method)


def test_default_epochs_and_learning_rate(blobs):
    X, _ = blobs
    res = sgd(X, "tumap")
    assert res.iter == 500 and res.opt["n_epochs"] == 500 and res.opt["eta"] == 1.0
    assert res.opt["name"] == "sgd" and res.Y_init == "normlaplacian"
    assert sgd(X, "ncvis").iter == 50
    assert default_epochs("umap", 10_000) == 500 and default_epochs("umap", 10_001) == 200
    ee = sgd(X, "ee", max_iter=2)
    assert ee.opt["eta"] == 0.1 and ee.Y_init == "normlaplacian"
    mmds = smallvis(X, method="mmds", engine="sgd", max_iter=0, ret_extra=["X"])
    assert mmds.opt["eta"] == 1.0 and mmds.Y_init == "pca"
    # SGD-MDS starts from the PCA scores at the input's scale (centred), not rescaled to [0, 10]
    from smallvis.io.preprocess import pca_scores

    pca = pca_scores(mmds.extras["X"], 2)
    np.testing.assert_allclose(np.abs(mmds.Y), np.abs(pca - pca.mean(axis=0)), rtol=1e-8,
                               atol=1e-12)


def test_max_iter_zero_returns_the_scaled_init(blobs):
    X, _ = blobs
    res = sgd(X, "umap", max_iter=0, Y_init="pca")
    assert res.iter == 0
    assert np.allclose(res.Y.min(axis=0), 0) and np.allclose(res.Y.max(axis=0), 10)


def test_engine_options_are_used(blobs):
    X, _ = blobs
    base = sgd(X, "umap", max_iter=20).Y
    strong = smallvis(X, method="umap", perplexity=15, random_state=42, max_iter=20,
                      engine=("sgd", {"repulsion_strength": 3.0}))
    alias = smallvis(X, method="umap", perplexity=15, random_state=42, max_iter=20,
                     engine=("sgd", {"gamma": 3.0}))
    np.testing.assert_array_equal(strong, alias)
    assert not np.array_equal(base, strong)
    assert np.ptp(strong) > np.ptp(base)


def test_auto_uses_sgd_for_large_n_only(blobs, caplog):
    import logging

    from smallvis.engines import resolve_engine
    from smallvis.methods import build_method

    m = build_method("umap")
    assert resolve_engine("auto", m, 500).name == "dense"
    with caplog.at_level(logging.INFO, logger="smallvis"):
        assert resolve_engine("auto", m, 20_000).name == "sgd"
    assert "sgd engine" in caplog.text


def test_the_sgd_path_never_builds_an_n_by_n_matrix(monkeypatch):
    X, _ = make_blobs(n_samples=3000, n_features=20, centers=5, random_state=0)

    def refuse(self):
        raise AssertionError("dense distances on the sgd path")

    monkeypatch.setattr(InputData, "distances", refuse)
    monkeypatch.setattr(InputData, "squared_distances", refuse)
    for method in SGD_METHODS:
        res = sgd(X, method, max_iter=5)
        assert res.Y.shape == (3000, 2)


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    (dict(exaggeration_factor=4), "does not use exaggeration"),
    (dict(late_exaggeration_factor=2), "does not use exaggeration"),
    (dict(opt="adam"), "has its own optimiser"),
    (dict(eta=-1.0), "initial learning rate"),
    (dict(eta="optsne"), "initial learning rate"),
])
def test_settings_that_do_not_apply_are_errors(blobs, kw, match):
    X, _ = blobs
    with pytest.raises(ValueError, match=match):
        sgd(X, "umap", max_iter=5, **kw)


@pytest.mark.parametrize("engine, match", [
    (("sgd", {"negative_sample_rate": -1}), "negative_sample_rate"),
    (("sgd", {"negative_sample_rate": 2.5}), "negative_sample_rate"),
    (("sgd", {"repulsion_strength": "x"}), "repulsion_strength"),
    (("sgd", {"gamma": 1, "repulsion_strength": 1}), "not both"),
    (("sgd", {"negative_rate": 3}), "unknown option.*negative_rate.*valid"),
    (("sgd", {"knn": "annoy"}), "kNN method"),
    (("dense", {"x": 1}), "unknown option.*takes none"),
    ("sgd ", None),
])
def test_bad_engine_options(blobs, engine, match):
    X, _ = blobs
    if match is None:  # names are matched leniently: trailing blanks are fine
        sgd(X, "umap", max_iter=2)
        return
    with pytest.raises(ValueError, match=match):
        smallvis(X, method="umap", perplexity=15, max_iter=2, engine=engine)


@pytest.mark.parametrize("method", ["tsne", ("largevis", {"out_kernel": "exp"}), "ntumap"])
def test_methods_without_a_stochastic_version(blobs, method):
    X, _ = blobs
    with pytest.raises(ValueError, match="no stochastic version.*; methods with one: ee, tee, "
                                         "largevis, umap, tumap, ncvis, mmds, smmds, sammon"):
        smallvis(X, method=method, engine="sgd", max_iter=2)


@pytest.mark.parametrize("method, engine, match", [
    ("gmmds", "sgd", "no stochastic version.*shortest paths on the kNN graph.*engine='exact'"),
    ("ballmmds", "sgd", "no stochastic version.*quantile of all.*engine='exact'"),
    ("knnmmds", "sgd", "no stochastic version.*the neighbourhood graph.*engine='exact'"),
    ("mmds", "bh", "own target distance.*no sum of a radial function.*engine='sgd'"),
    ("sammon", "fft", "own target distance.*no sum of a radial function.*engine='sgd'"),
    ("ee", "fft", "input distances.*engine='sgd'"),
])
def test_refusals_say_why_and_what_to_use(blobs, method, engine, match):
    X, _ = blobs
    with pytest.raises(ValueError, match=match):
        smallvis(X, method=method, engine=engine, max_iter=2)


@pytest.mark.parametrize("method", ["ee", "mmds"])
def test_repulsion_strength_is_refused_where_the_method_has_its_own(blobs, method):
    X, _ = blobs
    with pytest.raises(ValueError, match="repulsion_strength.*has its own repulsion weight"):
        smallvis(X, method=method, engine=("sgd", {"gamma": 2.0}), max_iter=2)


def test_auto_keeps_the_original_methods_on_exact_engines(monkeypatch):
    """ee, tee and the stress methods are served by sgd, but ``engine="auto"`` moves only the peers'
    methods there by size: the others keep the original's numbers while they fit."""
    from smallvis.engines import auto, resolve_engine
    from smallvis.methods import build_method

    monkeypatch.setattr(auto, "available_memory", lambda: None)  # everything fits
    for name in ("ee", "mmds"):
        assert resolve_engine("auto", build_method(name), 20_000).name == "exact"
    assert resolve_engine("auto", build_method("tee"), 20_000).name == "fft"  # its radial sums
    assert resolve_engine("auto", build_method("umap"), 20_000).name == "sgd"


# --- the kernels descend the documented per-sample objectives ---------------------------------

def _two_points(d=(1.3, -0.7)):
    return np.array([[0.0, 0.0], list(d)])


def test_umap_kernel_moves_along_the_gradient_of_its_objective():
    """Two points, one edge each way: an epoch moves a point by -lr (2 grad(-log w) + M grad(-g log(1-w)))
    (pulled as the head of one edge and as the tail of the other; pushed by its own negatives)."""
    a, b = umap_ab(1.0, 0.1)
    gamma, lr, M = 1.5, 1e-9, 4
    Y = _two_points()
    indptr, indices = np.array([0, 1, 2]), np.array([1, 0])
    eps = np.ones(2)
    Y0 = Y.copy()
    tails = np.zeros((2, 2, 2))
    kern.umap_epoch(Y, Y.copy(), tails, indptr, indices, eps, np.ones(2), eps / M, np.zeros(2),
                    block_starts(2), a, b, gamma, 0.0, lr, 1, np.uint64(5),
                    np.zeros(0, dtype=bool))
    assert np.any(tails != 0)  # each point's block pulled the other one: deferred
    kern.apply_tails(Y, tails)
    assert not np.any(tails)

    def objective(y0):
        d2 = np.sum((y0 - Y0[1]) ** 2)
        w = 1.0 / (1.0 + a * d2**b)
        return -2.0 * np.log(w) - M * gamma * np.log(1.0 - w)

    h = 1e-6
    grad = np.array([(objective(Y0[0] + h * e) - objective(Y0[0] - h * e)) / (2 * h)
                     for e in np.eye(2)])
    np.testing.assert_allclose((Y[0] - Y0[0]) / lr, -grad, rtol=1e-5)


@pytest.mark.parametrize("offset", [0.0, 0.7])
def test_nce_kernel_moves_along_the_gradient_of_the_nce_objective(offset):
    """One edge each way, nu negatives (the other point again), both ends moving: displacement
    2 step grad J, and Q moves by -alpha_Q sum(w) with w = dJ/dQ per sample."""
    a, b = umap_ab(1.0, 0.4)
    nu, step, alpha_Q, Q = 4, 1e-6, 1e-9, 0.3
    Y = _two_points((0.9, 0.4))
    Y0 = Y.copy()
    Qb = np.zeros(2)
    tails = np.zeros((2, 2, 2))
    kern.nce_epoch(Y, Y.copy(), tails, np.array([0, 1, 2]), np.array([1, 0]), block_starts(2), Qb,
                   Q, np.array([offset, offset]), a, b, nu, alpha_Q, step, 0, np.uint64(1))
    kern.apply_tails(Y, tails)

    def J(y0, q_log):
        d2 = np.sum((y0 - Y0[1]) ** 2)
        q = np.exp(-q_log) / (1.0 + a * d2**b)
        return np.log(q / (q + nu)) + nu * np.log(nu / (q + nu))

    h = 1e-6
    q0 = Q + offset
    grad = np.array([(J(Y0[0] + h * e, q0) - J(Y0[0] - h * e, q0)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose((Y[0] - Y0[0]) / step, 2.0 * grad, rtol=1e-5)
    dJdQ = (J(Y0[0], q0 + h) - J(Y0[0], q0 - h)) / (2 * h)
    np.testing.assert_allclose((Qb[0] - Q) / alpha_Q, dJdQ, rtol=1e-5)


def test_point_costs_attraction_is_exact_and_repulsion_unbiased():
    rng = np.random.default_rng(0)
    n = 60
    Y = rng.normal(size=(n, 2))
    import scipy.sparse as sp

    A = sp.random(n, n, density=0.1, random_state=1, format="csr")
    A = (A + A.T).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    edge_p = A.data / A.data.sum()
    row_p = np.asarray(A.sum(axis=1)).ravel() / A.data.sum()
    a, b = 1.2, 0.9
    D2 = np.sum((Y[:, None] - Y[None]) ** 2, axis=2)
    W = 1.0 / (1.0 + a * D2**b)
    attr = np.zeros(n)
    for i in range(n):
        for e in range(A.indptr[i], A.indptr[i + 1]):
            attr[i] += edge_p[e] * -np.log(W[i, A.indices[e]])
    off = ~np.eye(n, dtype=bool)
    rep = np.array([np.mean(-np.log(1.0 - W[i, off[i]] + 1e-9)) for i in range(n)])
    only_attr = kern.umap_point_costs(Y, A.indptr, A.indices, edge_p, row_p, a, b, 0.0, 1e-9,
                                      np.uint64(3), 10)
    np.testing.assert_allclose(only_attr, attr, rtol=1e-12)
    est = kern.umap_point_costs(Y, A.indptr, A.indices, edge_p, row_p, a, b, 2.0, 1e-9,
                                np.uint64(3), 4000) - attr
    np.testing.assert_allclose(est.sum(), 2.0 * np.sum(row_p * rep), rtol=0.05)


# --- schedules --------------------------------------------------------------------------------

def test_ncvis_noise_plan():
    plan = noise_plan("cubic", 5, 50)
    assert plan.shape == (50,) and plan.min() == 1 and plan[-1] == 20
    assert np.all(np.diff(plan) >= 0)
    assert abs(plan.sum() - 250) <= 25  # rounding and the floor of 1 add a little
    np.testing.assert_array_equal(noise_plan("constant", 3, 4), [3, 3, 3, 3])
    np.testing.assert_array_equal(noise_plan("cubic", 5, 1), [5])
    with pytest.raises(ValueError, match="noise_plan"):
        noise_plan("quadratic", 5, 10)


def test_block_partition_is_fixed_and_covers_every_point():
    b = block_starts(1000)
    assert b[0] == 0 and b[-1] == 1000 and len(b) == 17 and np.all(np.diff(b) > 0)
    assert len(block_starts(5)) == 6


def test_rows_left_without_edges_by_the_pruning_get_no_mass():
    # the last point's edges are below max / n_epochs: pruned, so its row is empty (a trailing
    # empty row once made np.add.reduceat fail)
    from types import SimpleNamespace

    from scipy import sparse

    from smallvis.engines.sgd import SGDEngine

    P = np.array([[0, 1.0, 0.5, 1e-4], [1.0, 0, 0.5, 0], [0.5, 0.5, 0, 0], [1e-4, 0, 0, 0]])
    state = SimpleNamespace(P=sparse.csr_matrix(P))
    P_kept, edge_p, row_p = SGDEngine()._graph(state, SimpleNamespace(forces="umap"), 100)
    assert P_kept.nnz == 6 and row_p.shape == (4,) and row_p[3] == 0.0
    np.testing.assert_allclose(row_p, [1.5 / 4, 1.5 / 4, 1 / 4, 0.0], rtol=1e-15)
    assert edge_p.sum() == pytest.approx(1.0)
