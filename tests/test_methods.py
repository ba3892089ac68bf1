"""Agreements between methods that the theory says coincide."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method


@pytest.fixture(scope="module")
def data(iris10):
    return InputData(scale_input(iris10, "absmax"))


def evaluate(name, data, Y, **params):
    m = build_method((name, params), perplexity=5)
    return DenseEngine().evaluate(m, m.prepare(data), Y)


@pytest.mark.parametrize("a, pa, b, pb, rtol", [
    ("hssne", {"alpha": 1.0}, "tsne", {}, 1e-12),
    ("hssne", {"alpha": 1e-8}, "ssne", {}, 1e-6),
    ("bhssne", {"beta": 1.0}, "hssne", {}, 1e-12),
    ("tsneu", {}, "tsne", {}, 1e-12),
    ("nerv", {"lambda": 1.0}, "asne", {}, 1e-9),
    ("snerv", {"lambda": 1.0}, "ssne", {}, 1e-9),
    ("rsrnerv", {"lambda": 1.0}, "arsrsne", {}, 1e-9),
    ("bnerv", {"lambda": 1.0}, "basne", {}, 1e-9),
])
def test_methods_coincide(data, a, pa, b, pb, rtol):
    Y = np.random.default_rng(0).normal(size=(10, 2))
    ca, ga = evaluate(a, data, Y, **pa)
    cb, gb = evaluate(b, data, Y, **pb)
    np.testing.assert_allclose(ca.sum(), cb.sum(), rtol=rtol)
    np.testing.assert_allclose(ga, gb, rtol=rtol, atol=1e-12)


def test_conditional_methods_have_row_stochastic_p(data):
    for name in ("asne", "tasne"):
        m = build_method(name, perplexity=5)
        np.testing.assert_allclose(m.prepare(data).P.sum(axis=1), 1)
    m = build_method("trsrsne", perplexity=5)
    P = m.prepare(data).P
    np.testing.assert_allclose(P.sum(axis=1), 1)
    m = build_method("tmsne", perplexity=5)
    assert m.prepare(data).P.sum() == pytest.approx(1)


@pytest.mark.parametrize("a, pa, b, pb", [
    ("jse", {"kappa": 0.0}, "asne", {}),
    ("jse", {"kappa": 1.0}, "nerv", {"lambda": 0.0}),
    ("sjse", {"kappa": 0.0}, "ssne", {}),
    ("sjse", {"kappa": 1.0}, "snerv", {"lambda": 0.0}),
])
def test_jse_limits(data, a, pa, b, pb):
    """kappa is clamped to [1e-5, 1 - 1e-5]: the limits hold where kappa P / Q and (1 - kappa) Q / P
    are small: output distances comparable to the input ones and a broad P (perplexity 8 of 10)."""
    Y = np.random.default_rng(0).normal(scale=0.1, size=(10, 2))

    def run(name, params):
        m = build_method((name, params), perplexity=8)
        return DenseEngine().evaluate(m, m.prepare(data), Y)

    ca, ga = run(a, pa)
    cb, gb = run(b, pb)
    np.testing.assert_allclose(ca.sum(), cb.sum(), rtol=1e-3)
    np.testing.assert_allclose(ga, gb, rtol=1e-3, atol=1e-3 * np.abs(gb).max())


def test_bhssne_precision_is_a_rescaling_of_the_output(data):
    """w(alpha beta d2) means bhssne at Y equals hssne at sqrt(beta) Y (gradients scale by sqrt(beta))."""
    Y = np.random.default_rng(1).normal(size=(10, 2))
    beta = 3.0
    c1, g1 = evaluate("bhssne", data, Y, beta=beta, alpha=0.7)
    c2, g2 = evaluate("hssne", data, np.sqrt(beta) * Y, alpha=0.7)
    np.testing.assert_allclose(c1, c2, rtol=1e-12)
    np.testing.assert_allclose(g1, np.sqrt(beta) * g2, rtol=1e-10)


def test_weighted_sne_importance_is_degree_outer_product(data):
    m = build_method("wtsne", perplexity=5)
    state = m.prepare(data)
    deg = state.P.sum(axis=0)
    np.testing.assert_allclose(m.output_kernel(state).M, np.outer(deg, deg))
    Y = np.random.default_rng(2).normal(size=(10, 2))
    Q = m.export(state, "Q", Y)
    assert Q.sum() == pytest.approx(1.0)
    # pairs between high-degree points get more output probability than the t-kernel alone gives
    W = 1 / (1 + ((Y[:, None] - Y[None]) ** 2).sum(-1))
    np.fill_diagonal(W, 0)
    np.testing.assert_allclose(Q, np.outer(deg, deg) * W / (np.outer(deg, deg) * W).sum())


def test_tee_is_scaled_unnormalised_largevis(data):
    """tee with lambda = 1 has the forces of un-normalised largevis with gamma = 1, gr_eps = 1,
    divided by N = sum V: steepest descent with eta * N follows the same path."""
    Y = np.random.default_rng(4).normal(size=(10, 2))
    tee = build_method(("tee", {"lambda": 1.0}), perplexity=5)
    lv = build_method(("largevis", {"normalize": False, "gamma": 1.0, "gr_eps": 1.0}),
                      perplexity=5)
    s_tee = tee.prepare(data)
    g_tee = DenseEngine().evaluate(tee, s_tee, Y, cost=False)[1]
    g_lv = DenseEngine().evaluate(lv, lv.prepare(data), Y, cost=False)[1]
    np.testing.assert_allclose(s_tee.data["N"] * g_tee, g_lv, rtol=1e-10)
