"""Finite-difference gradient checks for every registered method, generated from the registry."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.methods import REGISTRY, build_method

from engine_checks import check_fd_gradient, fd_cases, fd_setup


@pytest.fixture(scope="module")
def setup():
    return fd_setup()


# the cases come from the registry when this module is collected (engine_checks.fd_cases)
@pytest.mark.parametrize("name, variant", list(fd_cases()))
def test_gradient_matches_finite_differences(name, variant):
    check_fd_gradient(name, variant)


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
