"""Per-point output bandwidths on Barnes-Hut (btsne, bssne, basne, btasne, bnerv; issue 19 item
3): what the catalog-driven checks (theta = 0 against the dense engine, P stored in full) do not
show: a truly sparse and asymmetric P, the cost's derivative, the sources' precisions summarised
from afar, threads, a transform's precisions, fft's refusal."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.engines.approx_bandwidth_tree import bandwidth_tree
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.exact_kernels import kernel_params
from smallvis.engines.fft import FFTEngine
from smallvis.engines.radial_kernels import WG
from smallvis.io.data import InputData
from smallvis.methods import build_method
from smallvis.methods.base import MethodState

from engine_checks import check_thread_independent, kernel_weights, numeric_gradient, rel, x80

NAMES = ["btsne", "bssne", "basne", "btasne", "bnerv"]


def _knn_states(name, n=80, perplexity=5):
    method = build_method(name, perplexity=perplexity)
    sp = method.prepare_sparse(InputData(x80()[:n]), knn_method="exact")
    assert sp.P.nnz < 0.3 * n * n
    return method, MethodState(P=sp.P.toarray(), affinities=sp.affinities), sp


def _Y(name, n, k, seed=1):
    # Gaussian weights above the eps floor
    scale = 0.1 if name in ("bssne", "basne", "bnerv") else 1.0
    return np.random.default_rng(seed).normal(scale=scale, size=(n, k))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_a_sparse_p_on_barnes_hut_at_theta_0_is_the_dense_engine(name, factor):
    """kNN P (asymmetric for basne, btasne), most pairs unstored: 1e-9 in 1-3 dimensions."""
    method, dense, sp = _knn_states(name)
    for k in (1, 2, 3):
        Y = _Y(name, 80, k, seed=k)
        cd, Gd = DenseEngine().evaluate(method, dense, Y, factor)
        cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
        np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())


@pytest.mark.parametrize("name", NAMES)
def test_the_gradient_is_the_derivative_of_the_cost(name):
    method, _, sp = _knn_states(name, n=40, perplexity=2)
    Y = _Y(name, 40, 2, seed=3)
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


def _numpy_source(Y, beta, c, code):
    diff = Y[:, None] - Y[None]
    x = beta[None, :] * np.sum(diff ** 2, axis=-1)
    w = kernel_weights(x, code)
    g = w if code == 0 else np.ones_like(w)
    m = c[None, :] * beta[None, :] * w * g
    np.fill_diagonal(m, 0.0)
    return np.einsum("ij,ijd->id", m, diff)


@pytest.mark.parametrize("code", [0, 1])
def test_the_sources_precisions_are_summarised_by_their_log_moments(code):
    """Sum of c_j beta_j phi(beta_j d2) (y_i - y_j) on 400 random points: exact at theta = 0; at
    theta = 0.5 with precisions spread at random over two decades (no spatial order: harder than
    calibrated ones) measured 1.9e-2 Student-t, 4.4e-2 Gaussian (1.5e-2, 1.2e-2 from the tree's
    positions alone, all precisions equal); a cell summarised at its mean log precision alone is
    5 times further off."""
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(400, 2)) * (0.3 if code else 2.0)
    c = rng.uniform(0.5, 2.0, 400)
    rng.uniform(size=800)
    beta = np.exp(rng.uniform(-2.3, 2.3, 400))
    kp = kernel_params()
    V0 = _numpy_source(Y, beta, c, code)
    exact = bandwidth_tree(BarnesHutEngine(theta=0.0), Y, beta, 1e-300).source(code, kp, WG, c)
    assert rel(exact, V0) < 1e-10
    far = bandwidth_tree(BarnesHutEngine(theta=0.5), Y, beta, 1e-300)
    err = rel(far.source(code, kp, WG, c), V0)
    assert err < 6e-2
    far.logb = np.full(400, np.average(np.log(beta), weights=c))  # no spread at all
    assert rel(far.source(code, kp, WG, c), V0) > 3 * err


def test_a_constant_beta_is_bhssne():
    """btsne with a constant beta is HSSNE (alpha 1) with that output precision: the same tree
    cells at theta 0.5 (the criterion does not depend on the scale), the same numbers up to
    rounding and the truncation of the central differences in the quadrupole terms, on one side
    only (measured 3.4e-6 of an element at most)."""
    X = x80()
    a = build_method(("btsne", {"beta": 2.5}), perplexity=10)
    b = build_method(("bhssne", {"alpha": 1.0, "beta": 2.5}), perplexity=10)
    sa = a.prepare_sparse(InputData(X), knn_method="exact")
    sb = b.prepare_sparse(InputData(X), knn_method="exact")
    Y = np.random.default_rng(2).normal(size=(80, 2))
    ca, Ga = BarnesHutEngine(theta=0.5).evaluate(a, sa, Y, 4.0)
    cb, Gb = BarnesHutEngine(theta=0.5).evaluate(b, sb, Y, 4.0)
    np.testing.assert_allclose(Ga, Gb, rtol=1e-5, atol=1e-9 * np.abs(Gb).max())
    np.testing.assert_allclose(ca, cb, rtol=1e-5)


@pytest.mark.parametrize("name", ["btsne", "basne", "bnerv"])
def test_does_not_depend_on_the_number_of_threads(name):
    check_thread_independent(BarnesHutEngine, name, scale=1.0)


@pytest.mark.parametrize("name", NAMES)
def test_fft_refuses_saying_why(name):
    from smallvis.engines.catalog import refusal

    assert refusal("bh", name) is None
    why = refusal("fft", name)
    assert "per-point bandwidths" in why and "'bh'" in why
    with pytest.raises(ValueError, match="per-point bandwidths"):
        FFTEngine().plan(build_method(name))


@pytest.mark.parametrize("lam", [0.1, 1.0])
def test_bnerv_every_lambda_on_a_sparse_p_is_the_dense_engine(lam):
    """lambda 1 (no reverse KL: the w log w charges drop out) and a small one: 1e-9."""
    method, dense, sp = _knn_states(("bnerv", {"lambda": lam}))
    Y = _Y("bnerv", 80, 2)
    cd, Gd = DenseEngine().evaluate(method, dense, Y, 4.0)
    cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, 4.0)
    np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
    np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())


def test_a_full_run_on_barnes_hut():
    from smallvis import smallvis

    X = x80()
    Y = smallvis(X, method="btsne", engine="bh", perplexity=10, max_iter=50, random_state=1)
    assert Y.shape == (80, 2) and np.isfinite(Y).all()


@pytest.mark.parametrize("name", ["btsne", "bnerv"])
def test_a_transform_gives_every_row_its_precision(name):
    """A transform's sparse affinities calibrate the new rows only; the bandwidth methods get the
    fitted rows' precisions as the fit calibrated them (the same bits) and the new rows'."""
    import dataclasses

    X = x80()
    method = build_method(name, perplexity=10)
    fit = method.prepare_sparse(InputData(X), knn_method="exact")
    data = dataclasses.replace(InputData(X), fitted_V=fit.affinities.V[:60])
    state = method.prepare_sparse(data, knn_method="exact")
    beta = method.output_bandwidths(state)
    assert beta.shape == (80,) and np.all(np.isfinite(beta)) and np.all(beta > 0)
    assert np.array_equal(beta[:60], fit.affinities.beta[:60])
    assert build_method("tsne", perplexity=10).prepare_sparse(
        data, knn_method="exact").affinities.beta is None  # only where the method reads them
