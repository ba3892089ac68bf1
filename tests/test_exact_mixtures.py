"""The exact engine's NeRV / JSE passes (smallvis.engines.exact_nerv): the one-exponential path of a
row-normalised Q without precisions against the two-exponential one and the dense engine."""

from __future__ import annotations

import numpy as np
import pytest

import smallvis.engines.exact_nerv as exact_nerv
from smallvis.engines import DenseEngine, ExactEngine
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import assert_same, x60


@pytest.fixture(scope="module")
def X60():
    return x60()


def test_exp_ratios_are_per_point_factors_of_pair_ratios():
    a = np.array([-3.0, 0.5, 250.0, -340.0])
    r = exact_nerv.exp_ratios(a)
    assert r.shape == (2, 4)
    ratio = r[0][:, None] * r[1][None, :]
    np.testing.assert_allclose(ratio, np.exp(a[:, None] - a[None, :]), rtol=1e-12)
    assert exact_nerv.exp_ratios(np.array([0.0, 700.0])).shape == (0, 0)  # too wide: not used
    assert exact_nerv.exp_ratios(np.array([0.0, np.nan])).shape == (0, 0)


@pytest.mark.parametrize("spec", ["nerv", "rsrnerv", "jse", "rsrjse", ("nerv", {"lambda": 0.0}),
                                  ("jse", {"kappa": 0.999})])
@pytest.mark.parametrize("scale", [0.3, 2.0, 20.0])
def test_one_exponential_per_pair_matches_two_and_dense(X60, spec, scale, monkeypatch):
    """A row-normalised Q without precisions takes a pair's second q from its first (one exp per
    pair, :func:`~smallvis.engines.exact_nerv.exp_ratios`); with the span set below every range,
    both are computed: the same numbers up to rounding, and the dense engine's."""
    method = build_method(spec, perplexity=10)
    state = method.prepare(InputData(X60))
    Y = np.random.default_rng(4).normal(scale=scale, size=(60, 2))
    dense = DenseEngine().evaluate(method, state, Y, 4.0)
    calls = []
    original = exact_nerv.exp_ratios
    monkeypatch.setattr(exact_nerv, "exp_ratios", lambda a: calls.append(original(a)) or calls[-1])
    one = ExactEngine().evaluate(method, state, Y, 4.0)
    assert calls and all(r.shape == (2, 60) for r in calls)  # the one-exponential path ran
    monkeypatch.setattr(exact_nerv, "RATIO_SPAN", -1.0)
    calls.clear()
    two = ExactEngine().evaluate(method, state, Y, 4.0)
    assert calls and all(r.shape == (0, 0) for r in calls)
    assert_same(two, one, rtol=1e-12)
    assert_same(dense, one)
    assert_same(dense, two)
