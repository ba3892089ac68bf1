"""Finite-difference gradient checks for every registered method, generated from the registry."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import REGISTRY, build_method


def _cases():
    for name, spec in REGISTRY.items():
        marks = [pytest.mark.skip(reason=spec.fd_exempt)] if spec.fd_exempt else []
        for variant in ({},) + tuple(spec.fd_variants):
            label = name + "".join(f"-{k}={v}" for k, v in variant.items())
            yield pytest.param(name, variant, id=label, marks=marks)


def numeric_gradient(f, Y, h=6e-6):
    G = np.zeros_like(Y)
    for idx in np.ndindex(*Y.shape):
        Yp, Ym = Y.copy(), Y.copy()
        Yp[idx] += h
        Ym[idx] -= h
        G[idx] = (f(Yp) - f(Ym)) / (2 * h)
    return G


@pytest.fixture(scope="module")
def setup(iris10):
    X = scale_input(iris10, "absmax")
    # small output distances: Gaussian output weights with input precisions (beta ~ 50 here) must not
    # underflow to the eps floor on Q, where the cost is flat but the force is not
    rng = np.random.default_rng(42)
    Y = rng.normal(scale=0.1, size=(10, 2))
    return InputData(X), Y


@pytest.mark.parametrize("name, variant", list(_cases()))
def test_gradient_matches_finite_differences(setup, name, variant):
    data, Y = setup
    method = build_method((name, {**REGISTRY[name].fd_base, **variant}), perplexity=5)
    state = method.prepare(data)
    engine = DenseEngine()

    def cost(Y):
        return float(np.sum(engine.evaluate(method, state, Y, cost=True, grad=False)[0]))

    _, G = engine.evaluate(method, state, Y, cost=False, grad=True)
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-8 * np.abs(G_fd).max())


def test_unnormalised_tsne_gradient_is_exaggerated_normalised_gradient(setup):
    """With normalize=False the gradient treats sum(P) like an exaggeration factor (the original's form)."""
    data, Y = setup
    raw = build_method(("tsne", {"normalize": False}), perplexity=5)
    norm = build_method("tsne", perplexity=5)
    s_raw, s_norm = raw.prepare(data), norm.prepare(data)
    total = s_raw.P.sum()
    assert total == pytest.approx(10.0)
    engine = DenseEngine()
    G_raw = engine.evaluate(raw, s_raw, Y, cost=False)[1]
    G_exag = engine.evaluate(norm, s_norm, Y, total, cost=False)[1]
    np.testing.assert_allclose(G_raw, G_exag, rtol=1e-12)


def test_no_nan_on_coincident_points(setup):
    data, _ = setup
    Y = np.zeros((10, 2))
    for name in REGISTRY:
        method = build_method(name, perplexity=5)
        state = method.prepare(data)
        pcost, G = DenseEngine().evaluate(method, state, Y)
        assert np.all(np.isfinite(pcost)) and np.all(np.isfinite(G)), name
