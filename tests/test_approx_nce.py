"""NCVis's expected NCE cost on the Barnes-Hut and FFT engines (:mod:`smallvis.engines.approx_nce`):
on a kNN-restricted P, Barnes-Hut at theta = 0 gives the exact engine's cost, gradient and profiled
normaliser; its gradient is the derivative of its cost; the FFT engine interpolates within the
bounds of the other methods; the results do not depend on the number of threads; the corrected
noise model is refused, saying why; engine="auto" keeps ncvis on sgd at scale. (The catalog-driven
checks of test_bh_engine, test_fft_engine and test_approx_engines run it as well, on a P with every
pair stored.)"""

import numpy as np
import pytest

from smallvis.engines import ENGINES, ExactEngine
from smallvis.engines.approx import approx_plan
from smallvis.engines.auto import choose_engine
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.fft import FFTEngine
from smallvis.engines.sgd import AUTO_SGD_N
from smallvis.io.data import InputData
from smallvis.methods import build_method
from smallvis.methods.base import MethodState

from engine_checks import check_thread_independent, fft_data, numeric_gradient, rel

# the defaults and variants that move the curve (a, b) and the noise ratio; the last has b < 1 (an
# unbounded force factor at d -> 0), which bh serves and fft refuses
SPECS = ["ncvis", ("ncvis", {"noise_ratio": 1}), ("ncvis", {"min_dist": 0.3, "spread": 0.5}),
         ("ncvis", {"min_dist": 0.1, "noise_ratio": 10})]
FFT_SPECS = SPECS[:3]


def _states(spec, n=300, perplexity=10):
    """The method, a dense state holding the kNN-restricted P of the sparse state (the pairs P
    does not store are zeros) and the method's data, and the sparse state."""
    method = build_method(spec, perplexity=perplexity)
    X = fft_data()[:n]
    sp = method.prepare_sparse(InputData(X), knn_method="exact")
    assert sp.P.nnz < 0.2 * n * n
    dense = MethodState(P=sp.P.toarray(), affinities=sp.affinities,
                        data=method.prepare(InputData(X)).data)
    return method, dense, sp


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_served_by_bh_and_by_fft_where_b_is_at_least_1(spec):
    method = build_method(spec)
    plan, why = approx_plan(method)
    assert why is None and plan.kind == "nce"
    assert BarnesHutEngine.serves(method)
    assert FFTEngine.serves(method) == (spec in FFT_SPECS) == (method.params["b"] >= 1.0)


def test_fft_refuses_b_below_1_saying_why():
    """min_dist 0.1 (b = 0.90): the force factor a b d^(2(b - 1)) qhat is unbounded at d -> 0."""
    from smallvis import smallvis

    spec = ("ncvis", {"min_dist": 0.1})
    assert "unbounded at d -> 0 for b < 1" in FFTEngine.refusal(build_method(spec))
    with pytest.raises(ValueError, match="engine 'fft' cannot run.*engine 'bh' runs it"):
        smallvis(fft_data()[:50], method=spec, engine="fft", max_iter=1)


def test_the_corrected_noise_model_is_refused_saying_why():
    """corrected=True: each pair's logit depends on its head point, not on the distance alone."""
    from smallvis import smallvis

    method = build_method(("ncvis", {"corrected": True}))
    for engine in (BarnesHutEngine, FFTEngine):
        assert not engine.serves(method)
        assert "depends on the head point" in engine.refusal(method)
    with pytest.raises(ValueError, match="engine 'bh' cannot run method 'ncvis'.*corrected"):
        smallvis(fft_data()[:50], method=("ncvis", {"corrected": True}), engine="bh", max_iter=1)


@pytest.mark.parametrize("spec", SPECS, ids=str)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_theta_zero_is_the_exact_engine_on_a_knn_p(spec, factor):
    """bh at theta = 0 on a kNN P (most pairs not stored): the exact engine's cost, gradient
    (1e-9) and profiled normaliser Q* (1e-12) in 1-3 output dimensions, with and without
    exaggeration (the Newton steps' sums over all pairs from the tree)."""
    method, ex, sp = _states(spec)
    for k in (1, 2, 3):
        Y = np.random.default_rng(k).normal(scale=2.0, size=(300, k))
        ce, Ge = ExactEngine().evaluate(method, ex, Y, factor)
        cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Ge, rtol=1e-9, atol=1e-12 * np.abs(Ge).max())
        np.testing.assert_allclose(cb, ce, rtol=1e-9, atol=1e-12 * np.abs(ce).max())
        assert sp.data["logZ"] == pytest.approx(ex.data["logZ"], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("spec", SPECS[:2], ids=str)
def test_the_sparse_gradient_is_the_derivative_of_the_sparse_cost(spec):
    """bh at theta = 0 on a kNN P: central differences of its cost (at the profiled Q*, which the
    envelope theorem lets the gradient ignore) give its gradient."""
    method = build_method(spec, perplexity=3)
    sp = method.prepare_sparse(InputData(fft_data()[:30]), knn_method="exact")
    Y = np.random.default_rng(3).normal(scale=0.5, size=(30, 2))
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


@pytest.mark.parametrize("spec", FFT_SPECS, ids=str)
def test_fft_interpolates_it(spec):
    """500 points spanning ~6 units on a kNN P: the fft gradient within 1e-3 of the exact
    engine's (measured <= 6.1e-4, the defaults in 1-D), the cost within 1e-5 in total and 1e-4 of the largest per point (per-point all-pairs
    sums), Q* within 1e-5, in 1-D and 2-D."""
    method, ex, sp = _states(spec, n=500, perplexity=15)
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(size=(500, k))
        ce, Ge = ExactEngine().evaluate(method, ex, Y)
        cf, Gf = FFTEngine().evaluate(method, sp, Y)
        assert rel(Gf, Ge) < 1e-3, rel(Gf, Ge)
        assert abs(cf.sum() / ce.sum() - 1.0) < 1e-5
        np.testing.assert_allclose(cf, ce, rtol=0, atol=1e-4 * np.abs(ce).max())
        assert abs(sp.data["logZ"] - ex.data["logZ"]) < 1e-5


def test_bh_at_its_default_theta():
    """theta = 0.35 (quadrupole) on 500 points: the gradient within 1e-3 of the exact one
    (measured 3.9e-4; the other methods' bound at bh's default), log Q* within 1e-4 (measured
    2.5e-5)."""
    method, ex, sp = _states("ncvis", n=500, perplexity=15)
    Y = np.random.default_rng(5).normal(size=(500, 2))
    Ge = ExactEngine().evaluate(method, ex, Y, cost=False)[1]
    Gb = BarnesHutEngine().evaluate(method, sp, Y, cost=False)[1]
    assert rel(Gb, Ge) < 1e-3
    assert abs(sp.data["logZ"] - ex.data["logZ"]) < 1e-4


@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine):
    check_thread_independent(engine, "ncvis")


def test_auto_keeps_it_on_sgd_at_scale():
    """bh and fft serve it, but engine="auto" sends it to its stochastic engine at scale (and to
    the exact engine below); bh and fft are an explicit choice."""
    method = build_method("ncvis")
    assert choose_engine(method, AUTO_SGD_N + 1, 2, ENGINES)[0] == "sgd"
    assert choose_engine(method, 5000, 2, ENGINES)[0] == "exact"


def test_radial_codes_of_its_terms():
    """Its four radial functions have their own codes, 50-53, after the pair terms."""
    from smallvis.engines import radial_kernels as rk

    codes = {rk.NCE_SIG, rk.NCE_SIG2, rk.NCE_COST, rk.NCE_FORCE}
    assert codes == set(range(50, 54))
    assert min(codes) > max(rk.PAIR_COST, rk.PAIR_FORCE, rk.PAIR_S)


def test_runs_find_what_the_exact_run_finds():
    """Short runs from the same start on bh and fft: finite, and the neighbourhoods preserved as
    well as on the exact engine."""
    from smallvis import smallvis
    from smallvis.metrics import knn_preservation

    X = fft_data()[:300]
    scores = {}
    for engine in ("exact", "bh", "fft"):
        Y = smallvis(X, method="ncvis", engine=engine, max_iter=150, Y_init="spca",
                     random_state=1)
        assert np.isfinite(Y).all()
        scores[engine] = knn_preservation(X, Y, 15)
    assert scores["exact"] > 0.3
    assert abs(scores["bh"] - scores["exact"]) < 0.03
    assert abs(scores["fft"] - scores["exact"]) < 0.03


def test_the_plan_names_umaps_curve():
    """The plan's kernel code (kept in approx_nce, whose import must not load numba) is UMAP's."""
    from smallvis.engines.approx_nce import UMAP_KERNEL
    from smallvis.engines.output_kernel_functions import UMAP_KERNEL as CODE

    assert UMAP_KERNEL == CODE == approx_plan(build_method("ncvis"))[0].code
