"""JSE (jse, sjse, rsrjse) on the approximate engines (issue 19 item 3): what the catalog-driven
checks (the defaults, P stored in full) do not show: every kappa, a truly sparse P, the floors on
the pairs P does not store (docs/deviations.md), threads, Barnes-Hut's finer theta, auto."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.fft import FFTEngine
from smallvis.io.data import InputData
from smallvis.methods import REGISTRY, build_method
from smallvis.methods.base import MethodState

from engine_checks import check_bh, check_thread_independent, fft_data, numeric_gradient, x80

VARIANTS = [(name, v) for name in ("jse", "sjse") for v in REGISTRY[name].fd_variants]


@pytest.mark.parametrize("spec", VARIANTS, ids=str)
def test_every_kappa_on_barnes_hut_at_theta_0_is_the_dense_engine(spec):
    """1-3 dimensions, exaggeration 1 and 4, P stored in full: 1e-9 (kappa at both clamps)."""
    check_bh(spec)


def _knn_states(spec, n=80, perplexity=5):
    method = build_method(spec, perplexity=perplexity)
    sp = method.prepare_sparse(InputData(x80()[:n]), knn_method="exact")
    assert sp.P.nnz < 0.3 * n * n
    return method, MethodState(P=sp.P.toarray(), affinities=sp.affinities), sp


SPARSE = ["jse", "sjse", "rsrjse", ("jse", {"kappa": 0.1}), ("sjse", {"kappa": 0.9})]


@pytest.mark.parametrize("spec", SPARSE, ids=str)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_pairs_p_does_not_store_match_the_dense_engine(spec, factor):
    """Most pairs are not stored (P asymmetric for jse): bh at theta = 0 equals the dense engine
    on the same P (1e-9) where no unstored q is below the floors."""
    method, dense, sp = _knn_states(spec)
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(scale=0.5, size=(80, k))
        cd, Gd = DenseEngine().evaluate(method, dense, Y, factor)
        cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
        np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())


@pytest.mark.parametrize("spec", ["jse", "sjse"])
def test_the_floors_on_unstored_pairs_are_left_out_within_the_documented_bound(spec):
    """Points 8 units apart: q of the unstored pairs far below eps, where the dense engine floors
    q and the mixture. The difference stays below eps (log(1 / eps) + d2) / kappa per pair."""
    method, dense, sp = _knn_states(spec)
    Y = np.random.default_rng(1).normal(scale=0.5, size=(80, 2))
    Y[40:] += 8.0
    cd, Gd = DenseEngine().evaluate(method, dense, Y)
    cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y)
    eps, kappa = method.eps, method.kappa()
    bound = 80 * eps * (np.log(1 / eps) + 2 * np.ptp(Y) ** 2) / kappa
    assert np.abs(cb - cd).max() < bound
    assert np.abs(Gb - Gd).max() < 8 * bound  # each pair's force is its stiffness times y_i - y_j
    assert not np.array_equal(cb, cd)


@pytest.mark.parametrize("spec", SPARSE[:3], ids=str)
def test_the_sparse_gradient_is_the_derivative_of_the_sparse_cost(spec):
    method, _, sp = _knn_states(spec, n=30, perplexity=2)
    Y = np.random.default_rng(3).normal(scale=0.5, size=(30, 2))
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


@pytest.mark.parametrize("name", ["jse", "sjse", "rsrjse"])
@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine, name):
    check_thread_independent(engine, name, scale=1.0)


def test_barnes_hut_sums_at_a_quarter_of_its_theta():
    """bh at theta 0.5 gives what its sums at 0.125 give."""
    method = build_method("jse", perplexity=15)
    state = method.prepare_sparse(InputData(fft_data()[:200]), knn_method="exact")
    Y = np.random.default_rng(4).normal(scale=1.0, size=(200, 2))
    a = BarnesHutEngine(theta=0.5).evaluate(method, state, Y)
    from smallvis.engines import approx_jse

    approx_jse.THETA_FACTOR, before = 1.0, approx_jse.THETA_FACTOR
    try:
        b = BarnesHutEngine(theta=0.125).evaluate(method, state, Y)
        c = BarnesHutEngine(theta=0.5).evaluate(method, state, Y)
    finally:
        approx_jse.THETA_FACTOR = before
    assert np.array_equal(a[1], b[1]) and not np.array_equal(a[1], c[1])


@pytest.mark.parametrize("name", ["jse", "sjse", "rsrjse"])
def test_auto_routes_to_fft_above_the_approximate_threshold(name):
    from smallvis.engines import ENGINES
    from smallvis.engines.auto import AUTO_APPROX_N, choose_engine

    assert choose_engine(build_method(name), AUTO_APPROX_N + 1, 2, ENGINES)[0] == "fft"


@pytest.mark.parametrize("name", ["nerv", "snerv", "rsrnerv", "jse", "sjse", "rsrjse"])
def test_the_buffers_held_per_state_do_not_carry_between_evaluations(name):
    """The stored-pair pass keeps per-entry buffers and NeRV's log p (per exaggeration) in the
    state: an evaluation after others at another exaggeration and layout gives the bits of a fresh
    state's."""
    method = build_method(name, perplexity=10)
    X = fft_data()[:150]
    used = method.prepare_sparse(InputData(X), knn_method="exact")
    fresh = method.prepare_sparse(InputData(X), knn_method="exact")
    rng = np.random.default_rng(5)
    Y, Y2 = rng.normal(size=(150, 2)), rng.normal(scale=3.0, size=(150, 2))
    engine = FFTEngine()
    engine.evaluate(method, used, Y2, 4.0)
    engine.evaluate(method, used, Y, 4.0)
    a = engine.evaluate(method, used, Y, 1.0)
    b = engine.evaluate(method, fresh, Y, 1.0)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    c = engine.evaluate(method, fresh, Y, 4.0)
    assert not np.array_equal(a[1], c[1])
