"""The AB-divergence (absne, abssne) on the approximate engines (issue 19 item 3): every branch,
not only the defaults the catalog-driven checks cover; a truly sparse P, whose unstored pairs the
dense engine floors; the sums of the functions of q; threads; the refusal; the auto engine."""

import math

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.engines.approx import approx_plan
from smallvis.engines.approx_terms import Sums
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.exact_kernels import kernel_params
from smallvis.engines.fft import FFTEngine
from smallvis.io.data import InputData
from smallvis.methods import REGISTRY, build_method
from smallvis.methods.base import MethodState

from engine_checks import check_bh, check_thread_independent, fft_data, numeric_gradient, rel, x80

# every branch: the specs' finite-difference variants (absne's branches and general cases,
# abssne's nudged limits)
VARIANTS = [(name, v) for name in ("absne", "abssne") for v in REGISTRY[name].fd_variants]


@pytest.mark.parametrize("spec", VARIANTS, ids=str)
def test_every_branch_on_barnes_hut_at_theta_0_is_the_dense_engine(spec):
    """1-3 dimensions, exaggeration 1 and 4, P stored in full: 1e-9."""
    check_bh(spec)


def _knn_states(spec, n=80, perplexity=5):
    """A kNN-restricted P and a dense state holding the same P (zeros where it stores nothing)."""
    method = build_method(spec, perplexity=perplexity)
    sp = method.prepare_sparse(InputData(x80()[:n]), knn_method="exact")
    assert sp.P.nnz < 0.3 * n * n
    dense = MethodState(P=sp.P.toarray(), affinities=sp.affinities)
    return method, dense, sp


SPARSE = ["absne", "abssne"] + VARIANTS


@pytest.mark.parametrize("spec", SPARSE, ids=str)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_pairs_p_does_not_store_match_the_dense_floor(spec, factor):
    """Most pairs are not stored: bh at theta = 0 equals the dense engine on the same P (1e-9),
    whose eps floors (where the branch has them) put eps on those pairs."""
    method, dense, sp = _knn_states(spec)
    scale = 0.3 if spec == "abssne" or spec[0] == "abssne" else 1.0
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(scale=scale, size=(80, k))
        cd, Gd = DenseEngine().evaluate(method, dense, Y, factor)
        cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
        np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())


# abssne's nudged limits divide its cost by 1e-5 (rounding noise at finite-difference steps)
FD = ["absne", "abssne"] + [s for s in VARIANTS if s[0] == "absne"] + [
    ("abssne", {"alpha": 0.5, "lambda": 1.5}), ("abssne", {"alpha": 2.0, "lambda": 0.5})]


@pytest.mark.parametrize("spec", FD, ids=str)
def test_the_sparse_gradient_is_the_derivative_of_the_sparse_cost(spec):
    """bh at theta = 0 on a kNN P: central differences of its cost give its gradient."""
    method, _, sp = _knn_states(spec, n=30, perplexity=2)
    Y = np.random.default_rng(3).normal(scale=0.5, size=(30, 2))
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


@pytest.mark.parametrize("code", [0, 1])
@pytest.mark.parametrize("k", [1, 2])
def test_sums_of_functions_of_q_match_numpy(code, k):
    """``sum_j q^x (log q)^m`` and ``sum_j g q^x (log q)^m (y_i - y_j)`` (the expm1 form, the
    floor on log q) from a tree at theta = 0 (1e-9) and the grid (1e-4)."""
    from smallvis.engines.radial_kernels import ONE, q_code, q_params

    rng = np.random.default_rng(k)
    Y = rng.normal(scale=0.7, size=(300, k))
    diff = Y[:, None] - Y[None]
    d2 = np.sum(diff ** 2, axis=-1)
    off = ~np.eye(len(Y), dtype=bool)
    logw = -np.log1p(d2) if code == 0 else -d2
    g = np.exp(logw) if code == 0 else np.ones_like(d2)
    Z = float(np.sum(np.exp(logw)[off]))
    log_floor = math.log(1e-5) if code == 1 else -math.inf
    lq = np.maximum(logw - math.log(Z), log_floor)
    kp = q_params(kernel_params(), math.log(Z), log_floor, x0=0.7, x1=1e-4, split1=True)
    cases = {q_code(0): np.exp(0.7 * lq), q_code(1, 1): np.expm1(1e-4 * lq) * lq,
             q_code(ONE, 2): lq * lq, q_code(0, 1): np.exp(0.7 * lq) * lq}
    for engine, tol, eps in ((BarnesHutEngine(theta=0.0), 1e-9, 1e-300),
                             (FFTEngine(), 1e-4, 0.0)):
        summer = engine.radial(Y, eps)
        for fn, values in cases.items():
            S = summer.sums(Sums(code, kp, scalars=(fn,)))[1][:, 0]
            assert rel(S, np.sum(np.where(off, values, 0.0), axis=1)) < tol, (engine.name, fn)
            V = summer.sums(Sums(code, kp, vectors=(fn + 1,)))[2][:, 0]
            V0 = np.einsum("ij,ijd->id", np.where(off, g * values, 0.0), diff)
            assert rel(V, V0) < tol, (engine.name, fn)


@pytest.mark.parametrize("name", ["absne", "abssne", ("absne", {"alpha": 0.0, "lambda": 0.0})],
                         ids=str)
@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine, name):
    check_thread_independent(engine, name, scale=1.0)


@pytest.mark.parametrize("params", [{"alpha": -0.5, "lambda": 1.0}, {"alpha": 0.5, "lambda": -1.0}])
def test_an_infinite_unstored_term_is_refused_with_the_reason(params):
    method = build_method(("absne", params))
    plan, why = approx_plan(method)
    assert plan is None and "P = 0" in why
    with pytest.raises(ValueError, match="engine 'bh' cannot run method 'absne'.*infinite"):
        BarnesHutEngine().plan(method)


@pytest.mark.parametrize("name", ["absne", "abssne"])
def test_auto_routes_to_fft_above_the_approximate_threshold(name):
    from smallvis.engines import ENGINES
    from smallvis.engines.auto import AUTO_APPROX_N, choose_engine

    assert choose_engine(build_method(name), AUTO_APPROX_N + 1, 2, ENGINES)[0] == "fft"
    assert choose_engine(build_method(name), AUTO_APPROX_N + 1, 3, ENGINES)[0] == "bh"


def test_a_short_run_on_fft_and_bh():
    """A run through the optimiser (the dense engine's run, 30 iterations, spans about 31)."""
    from smallvis import smallvis

    for engine in ("fft", "bh"):
        Y = smallvis(fft_data()[:300], method="absne", engine=engine, perplexity=10, max_iter=30,
                     random_state=1)
        assert np.isfinite(Y).all() and 20 < np.ptp(Y) < 40


@pytest.mark.parametrize("spec", ["abssne", "absne"])
def test_the_stored_p_terms_follow_the_exaggeration_on_one_state(spec):
    """The stored entries' P terms are made once per exaggeration and kept on the state: after an
    evaluation at another factor, the state's next one is the dense engine's at its own factor."""
    method, dense, sp = _knn_states(spec)
    Y = np.random.default_rng(3).normal(scale=0.3, size=(80, 2))
    engine = BarnesHutEngine(theta=0.0)
    for factor in (4.0, 1.0, 4.0):
        cd, Gd = DenseEngine().evaluate(method, dense, Y, factor)
        cb, Gb = engine.evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
        np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())
