"""The un-normalised pair costs (largevis, umap, tumap) on the Barnes-Hut engine and the normalised
cross-entropy (ntumap, cetsne) on bh and fft (:mod:`smallvis.engines.approx_unnormalised`): on a
kNN-restricted P, Barnes-Hut at theta = 0 gives the exact engine's numbers on the same P; its
gradient is the derivative of its cost; the results do not depend on the number of threads; the
FFT engine refuses the un-normalised costs, saying why, and serves the normalised ones;
engine="auto" keeps the peers' methods on sgd at scale. (The catalog-driven checks of
test_bh_engine, test_fft_engine and test_approx_engines run them as well, on a P with every pair
stored.)"""

import numpy as np
import pytest

from smallvis.engines import ENGINES, ExactEngine
from smallvis.engines.approx import approx_plan
from smallvis.engines.auto import choose_engine
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.fft import FFTEngine
from smallvis.engines.sgd import AUTO_SGD_N
from smallvis.io.data import InputData
from smallvis.methods import REGISTRY, build_method

from engine_checks import check_thread_independent, fft_data, numeric_gradient

UNNORMALISED = ["umap", "tumap", "largevis"]
NORMALISED = ["ntumap", "cetsne"]  # the cross-entropy with Q = W / Z: bh and fft
METHODS = UNNORMALISED + NORMALISED
# variants whose zero-P terms take other branches of the kernel
VARIANTS = [("umap", {"min_dist": 0.5, "spread": 2.0}), ("tumap", {"gr_eps": 0.01}),
            ("largevis", {"gr_form": "1-w"}), ("largevis", {"out_kernel": "cauchy", "alpha": 3.0}),
            ("largevis", {"out_kernel": "exp"}), ("largevis", {"normalize": False, "gamma": 7.0}),
            ("ntumap", {"inp_kernel": "gaussian", "symmetrize": "symmetric"})]


def _states(spec, n=300, perplexity=10):
    """The method, the exact engine, a dense state holding the kNN-restricted P of the sparse
    state (the pairs P does not store are zeros), and the sparse state."""
    from smallvis.methods.base import MethodState

    method = build_method(spec, perplexity=perplexity)
    X = fft_data()[:n]
    sp = method.prepare_sparse(InputData(X), knn_method="exact")
    assert sp.P.nnz < 0.2 * n * n
    dense = MethodState(P=sp.P.toarray(), affinities=sp.affinities,
                        data=method.prepare(InputData(X)).data)
    return method, ExactEngine(), dense, sp


@pytest.mark.parametrize("spec", METHODS + VARIANTS, ids=str)
def test_served_by_both_engines(spec):
    plan, why = approx_plan(build_method(spec))
    assert why is None and plan.kind == "pairs"


@pytest.mark.parametrize("spec", METHODS + VARIANTS, ids=str)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_theta_zero_is_the_exact_engine_on_a_knn_p(spec, factor):
    """bh at theta = 0 on a kNN P (most pairs not stored): the exact engine's cost and gradient
    (1e-9) in 1-3 output dimensions, with and without exaggeration."""
    method, exact, ex, sp = _states(spec)
    for k in (1, 2, 3):
        Y = np.random.default_rng(k).normal(scale=2.0, size=(300, k))
        with np.errstate(invalid="ignore"):  # umap's constant at exaggeration 4: log(1 - 4P)
            ce, Ge = exact.evaluate(method, ex, Y, factor)
            cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Ge, rtol=1e-9, atol=1e-12 * np.abs(Ge).max())
        np.testing.assert_allclose(cb, ce, rtol=1e-9, atol=1e-12 * np.abs(np.nan_to_num(ce)).max())


@pytest.mark.parametrize("name", METHODS)
def test_the_sparse_gradient_is_the_derivative_of_the_sparse_cost(name):
    """bh at theta = 0 on a kNN P with the spec's finite-difference parameters (no softening):
    central differences of its cost give its gradient."""
    method = build_method((name, dict(REGISTRY[name].fd_base)), perplexity=3)
    sp = method.prepare_sparse(InputData(fft_data()[:30]), knn_method="exact")
    Y = np.random.default_rng(3).normal(scale=0.5, size=(30, 2))
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


@pytest.mark.parametrize("spec", UNNORMALISED + VARIANTS[:-1], ids=str)
def test_fft_refuses_them_and_says_why(spec):
    """Accurate on a compact embedding, but a run spreads the points apart, where the grid's
    forces are wrong by their own size: fft refuses, saying why and naming bh."""
    from smallvis import smallvis

    method = build_method(spec)
    assert BarnesHutEngine.serves(method) and not FFTEngine.serves(method)
    assert "spread-out embeddings" in FFTEngine.refusal(method)
    with pytest.raises(ValueError, match="engine 'fft' cannot run.*engine 'bh' runs it"):
        smallvis(fft_data()[:50], method=spec, engine="fft", max_iter=1)


@pytest.mark.parametrize("spec", NORMALISED + VARIANTS[-1:], ids=str)
def test_fft_serves_the_normalised_cross_entropy(spec):
    """Its zero-P terms are smooth (q ~ 1 / n^2): on a kNN P, 500 points spanning ~6 units, the
    fft gradient within 1e-3 of the exact engine's, the cost within 1e-5 in total and 1e-4 of the
    largest per point (per-point all-pairs sums), in 1-D and 2-D."""
    from engine_checks import rel

    method, exact, ex, sp = _states(spec, n=500, perplexity=15)
    assert FFTEngine.serves(method)
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(size=(500, k))
        ce, Ge = exact.evaluate(method, ex, Y)
        cf, Gf = FFTEngine().evaluate(method, sp, Y)
        assert rel(Gf, Ge) < 1e-3, rel(Gf, Ge)
        assert abs(cf.sum() / ce.sum() - 1.0) < 1e-5
        np.testing.assert_allclose(cf, ce, rtol=0, atol=1e-4 * np.abs(ce).max())


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine, name):
    check_thread_independent(engine, name, exaggeration=1.0)


@pytest.mark.parametrize("name", UNNORMALISED)
def test_auto_keeps_them_on_sgd_at_scale(name):
    """bh and fft serve them, but engine="auto" sends them to their stochastic engine at scale (and
    to the exact engine below); bh and fft are an explicit choice."""
    method = build_method(name)
    assert choose_engine(method, AUTO_SGD_N + 1, 2, ENGINES)[0] == "sgd"
    assert choose_engine(method, AUTO_SGD_N + 1, 3, ENGINES)[0] == "sgd"
    assert choose_engine(method, 5000, 2, ENGINES)[0] == "exact"


def test_a_bh_run_finds_what_the_exact_run_finds():
    """Short runs from the scaled-PCA start at the dense runs' step size: finite, and the
    neighbourhoods preserved as well as on the exact engine (measured 0.461 and 0.466)."""
    from smallvis import smallvis
    from smallvis.metrics import knn_preservation

    X = fft_data()[:300]
    scores = {}
    for engine in ("exact", "bh"):
        Y = smallvis(X, method="umap", engine=engine, perplexity=15, max_iter=200, eta=0.05,
                     Y_init="spca", random_state=1)
        assert np.isfinite(Y).all()
        scores[engine] = knn_preservation(X, Y, 15)
    assert scores["exact"] > 0.3
    assert abs(scores["bh"] - scores["exact"]) < 0.03


def test_radial_function_codes_do_not_overlap():
    """Each radial function has its own code: the zero-P pair terms come after the q family."""
    from smallvis.engines import radial_kernels as rk

    q_codes = {rk.q_code(slot, m, g) for slot in (0, 1, rk.ONE) for m in (0, 1, 2)
               for g in (False, True)}
    plain = {rk.W, rk.W_LOG_W, rk.WG, rk.WG_LOG_W}
    pair = {rk.PAIR_COST, rk.PAIR_FORCE, rk.PAIR_S}
    assert len(q_codes) == 18 and not (q_codes & plain) and not (q_codes & pair)
    assert min(pair) > max(q_codes) and min(q_codes) > max(plain)
