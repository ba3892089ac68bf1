"""The frozen-row fast path of a transform (``engine.freeze``): the moving rows' gradient and every
row's cost are those of the full evaluation, whose frozen rows are then masked."""

import numpy as np
import pytest
from scipy import sparse

from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.fft import FFTEngine
from smallvis.engines.sgd import SGDEngine
from smallvis.methods.base import EPS, MethodState
from smallvis.run.optim import Objective

from engine_checks import sparse_states, x80

N = 80
MOVING = np.zeros(N, dtype=bool)
MOVING[::5] = True  # 16 moving rows among the 80


def _pair(spec, engine_factory, k, f):
    method, _, sp = sparse_states(x80(), spec)
    Y = np.random.default_rng(k).normal(scale=2.0, size=(N, k))
    full = engine_factory().evaluate(method, sp, Y, f)
    fast_state = MethodState(P=sp.P, affinities=sp.affinities, data=dict(sp.data))
    for key in [key for key in fast_state.data if key.startswith("_")]:
        del fast_state.data[key]
    eng = engine_factory()
    assert eng.freeze(method, fast_state, MOVING)
    return full, eng.evaluate(method, fast_state, Y, f), eng, method, fast_state, Y


@pytest.mark.parametrize("spec", ["tsne", ("hssne", {"alpha": 0.5})])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("f", [1.0, 4.0])
def test_fft_rows_path_is_the_masked_evaluation(spec, k, f):
    """Without the frozen field: the FFT grid of every point, read back at the moving rows, gives
    the same numbers."""
    def engine():
        eng = FFTEngine()
        eng.frozen_field = False
        return eng

    (cost, G), (fcost, fG), *_ = _pair(spec, engine, k, f)
    np.testing.assert_array_equal(fG[MOVING], G[MOVING])
    assert not fG[~MOVING].any()
    # the frozen pairs' log w summed once: each row's sum in another order
    np.testing.assert_allclose(fcost, cost, rtol=1e-12, atol=1e-14 * np.abs(cost).max())


@pytest.mark.parametrize("spec", ["tsne", ("hssne", {"alpha": 0.5})])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("f", [1.0, 4.0])
def test_fft_frozen_field_matches_the_masked_evaluation(spec, k, f):
    """The frozen points' field on a fixed grid plus the moving points' exact sums (theta 0): the
    masked evaluation to the interpolation's accuracy."""
    def engine():
        eng = FFTEngine(n_interp=5)
        eng.transform_theta = 0.0
        return eng

    (cost, G), (fcost, fG), *_ = _pair(spec, engine, k, f)
    np.testing.assert_allclose(fG[MOVING], G[MOVING], rtol=1e-3, atol=1e-4 * np.abs(G).max())
    assert not fG[~MOVING].any()
    np.testing.assert_allclose(fcost, cost, rtol=1e-5, atol=1e-5 * np.abs(cost).max())


def test_fft_frozen_field_is_made_once_and_rebuilt_when_a_point_leaves_it():
    *_, eng, method, state, Y = _pair("tsne", FFTEngine, 2, 1.0)
    store = state.data["_frozen_sums"]
    field = store[("field", 0, 1.0)]
    Y2 = Y.copy()
    Y2[MOVING] += 0.01
    eng.evaluate(method, state, Y2, 1.0)
    assert store[("field", 0, 1.0)] is field
    Y2[np.flatnonzero(MOVING)[0]] = 1e3  # far outside the grid's box
    eng.evaluate(method, state, Y2, 1.0)
    assert store[("field", 0, 1.0)] is not field
    assert store[("field", 0, 1.0)].covers(Y2[MOVING])


@pytest.mark.parametrize("spec", ["tsne", ("hssne", {"alpha": 2.0})])
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("f", [1.0, 4.0])
def test_bh_fast_path_is_the_masked_evaluation_at_theta_zero(spec, k, f):
    """theta = 0: Z from the frozen points' own sum, the moving rows' and the moving points' own
    sum equals the full tree's up to rounding; the moving rows' forces are the same numbers."""
    (cost, G), (fcost, fG), *_ = _pair(spec, lambda: BarnesHutEngine(theta=0.0), k, f)
    np.testing.assert_allclose(fG[MOVING], G[MOVING], rtol=1e-12, atol=1e-14 * np.abs(G).max())
    assert not fG[~MOVING].any()
    np.testing.assert_allclose(fcost, cost, rtol=1e-12, atol=1e-12 * np.abs(cost).max())


def test_bh_fast_path_stays_close_at_the_default_theta():
    (cost, G), (fcost, fG), *_ = _pair("tsne", BarnesHutEngine, 2, 1.0)
    np.testing.assert_allclose(fG[MOVING], G[MOVING], rtol=0.05, atol=0.02 * np.abs(G).max())
    np.testing.assert_allclose(fcost.sum(), cost.sum(), rtol=0.01)


def test_frozen_sum_is_made_once_and_reused():
    *_, eng, method, state, Y = _pair("tsne", lambda: BarnesHutEngine(theta=0.0), 2, 1.0)
    store = state.data["_frozen_sums"]
    assert set(store) == {("Z_FF", 0, 1.0, EPS), "cost"}
    before = dict(store)
    Y2 = Y.copy()
    Y2[MOVING] += 0.3
    eng.evaluate(method, state, Y2, 1.0)
    assert store == before


def test_objective_uses_the_fast_path_where_served():
    method, _, sp = sparse_states(x80(), "tsne")
    frozen = ~MOVING
    Y = np.random.default_rng(0).normal(size=(N, 2))
    eng = FFTEngine()
    eng.frozen_field = False
    fast = Objective(method, sp, eng, frozen=frozen)
    assert fast.fast
    method2, _, sp2 = sparse_states(x80(), "tsne")
    G_masked = FFTEngine().evaluate(method2, sp2, Y, 1.0, cost=False)[1]
    G_masked[frozen] = 0.0
    np.testing.assert_array_equal(fast.gradient(Y), G_masked)
    # a plan the fast path does not serve (row-normalised Q): today's masked evaluation
    method3, _, sp3 = sparse_states(x80(), "asne")
    assert not Objective(method3, sp3, FFTEngine(), frozen=frozen).fast


def _umap_epoch(Y0, P, moving, lr):
    from smallvis.engines import sgd_kernels as kern
    from smallvis.engines.sgd import block_starts
    from smallvis.methods.umap_curve import umap_ab

    a, b = umap_ab(1.0, 0.1)
    eps = P.data.max() / P.data
    Y = Y0.copy()
    blocks = block_starts(len(Y))
    tails = np.zeros((len(blocks) - 1,) + Y.shape)
    kern.umap_epoch(Y, Y0, tails, P.indptr, P.indices, eps, np.ones(P.nnz), eps / 5,
                    np.zeros(P.nnz), blocks, a, b, 1.0, 0.001, lr, 1, np.uint64(3), moving)
    kern.apply_tails(Y, tails)
    return Y


def _graph():
    _, _, sp = sparse_states(x80(), "tsne")
    P = sparse.csr_matrix(sp.P)
    P.sort_indices()
    return P


def test_sgd_epoch_with_every_point_moving_is_the_plain_epoch():
    P = _graph()
    Y0 = np.random.default_rng(0).normal(size=(N, 2))
    np.testing.assert_array_equal(_umap_epoch(Y0, P, np.ones(N, dtype=bool), 0.5),
                                  _umap_epoch(Y0, P, np.zeros(0, dtype=bool), 0.5))


def test_sgd_epoch_holds_frozen_points_and_moves_the_others_as_the_masked_epoch():
    """Frozen points do not move; the moving points' steps are the masked epoch's to first order in
    the learning rate (the masked epoch lets a frozen point drift within the epoch, and puts it
    back only at its end)."""
    P = _graph()
    Y0 = np.random.default_rng(0).normal(size=(N, 2))
    lr = 1e-7
    fast = _umap_epoch(Y0, P, MOVING, lr)
    masked = _umap_epoch(Y0, P, np.zeros(0, dtype=bool), lr)
    np.testing.assert_array_equal(fast[~MOVING], Y0[~MOVING])
    step, want = fast[MOVING] - Y0[MOVING], masked[MOVING] - Y0[MOVING]
    assert np.abs(step).max() > 0
    np.testing.assert_allclose(step, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_sgd_freeze_is_served_for_the_umap_forces_only():
    from smallvis.methods import build_method

    state = MethodState()
    assert SGDEngine().freeze(build_method("umap"), state, MOVING)
    assert state.data["sgd"]["moving"].dtype == np.bool_
    assert not SGDEngine().freeze(build_method("ncvis"), MethodState(), MOVING)


def _apart_gradient(spec, alpha, engine, k, f):
    """The fast path with ``apart`` (the moving rows repel the frozen ones only) and the exact
    gradient of that objective: every pair but those of two moving rows in the repulsion and
    ``Z``, the attraction over all stored entries."""
    method, _, sp = sparse_states(x80(), spec)
    Y = np.random.default_rng(k).normal(scale=2.0, size=(N, k))
    assert engine.freeze(method, sp, MOVING, apart=True)
    _, G = engine.evaluate(method, sp, Y, f, cost=False)
    P = sparse.csr_matrix(sp.P).toarray()
    diff = Y[:, None] - Y[None]
    W = (1.0 + alpha * (EPS + (diff ** 2).sum(-1))) ** (-1.0 / alpha)
    np.fill_diagonal(W, 0.0)
    Wk = np.where(MOVING[:, None] & MOVING[None], 0.0, W)
    A = ((P * W ** alpha)[..., None] * diff).sum(1)
    R = ((Wk ** (1.0 + alpha))[..., None] * diff).sum(1)
    return G, 4.0 * (f * A - R / (Wk.sum() + EPS))


APART = [("tsne", 1.0), (("hssne", {"alpha": 2.0}), 2.0)]


@pytest.mark.parametrize("spec, alpha", APART, ids=["tsne", "hssne"])
@pytest.mark.parametrize("k", [1, 2])
def test_bh_apart_leaves_out_the_moving_pairs(spec, alpha, k):
    """``apart`` on bh (theta 0): the moving rows' gradient of the objective without the pairs of
    two moving rows (a transform whose new points see only the fitted ones)."""
    G, want = _apart_gradient(spec, alpha, BarnesHutEngine(theta=0.0), k, 1.0)
    np.testing.assert_allclose(G[MOVING], want[MOVING], rtol=1e-10, atol=1e-13 * np.abs(want).max())
    assert not G[~MOVING].any()


@pytest.mark.parametrize("spec, alpha", APART, ids=["tsne", "hssne"])
@pytest.mark.parametrize("k", [1, 2])
def test_fft_apart_is_the_frozen_field_alone(spec, alpha, k):
    """``apart`` on fft: the frozen field alone, to the interpolation's accuracy; no tree of the
    moving points is made."""
    eng = FFTEngine(n_interp=5)
    G, want = _apart_gradient(spec, alpha, eng, k, 4.0)
    np.testing.assert_allclose(G[MOVING], want[MOVING], rtol=1e-3, atol=1e-4 * np.abs(want).max())
    assert not G[~MOVING].any()


def test_apart_is_ignored_where_not_served():
    """The FFT engine without its frozen field cannot leave the moving pairs out: the flag is
    ignored and the joint gradient served."""
    method, _, sp = sparse_states(x80(), "tsne")
    eng = FFTEngine()
    eng.frozen_field = False
    assert eng.freeze(method, sp, MOVING, apart=True)
    assert sp.data["_moving_apart"] is False
