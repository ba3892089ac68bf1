"""Agreements between methods that the theory says coincide."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.input.data import InputData
from smallvis.input.preprocess import scale_input
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
