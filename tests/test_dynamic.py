"""Methods that adapt at each epoch: pstsne's frozen normaliser and dhssne's alpha search."""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method


@pytest.fixture(scope="module")
def data(iris10):
    return InputData(scale_input(iris10, "absmax"))


@pytest.fixture
def Y():
    return np.random.default_rng(3).normal(scale=0.5, size=(10, 2))


def gradient(method, state, Y, exaggeration=1.0):
    return DenseEngine().evaluate(method, state, Y, exaggeration, cost=False)[1]


def test_pstsne_forces_use_the_frozen_normaliser(data, Y):
    m = build_method("pstsne", perplexity=5)
    state = m.prepare(data)
    W = 1 / (1 + squared_distances(Y))
    np.fill_diagonal(W, 0)
    V, N = state.data["V"], state.data["N"]
    assert N == pytest.approx(10.0)
    expected = 4 / N * W * (V - W / 100.0 * N)  # Z = n^2 before the first epoch
    from smallvis.engines.dense import force_gradient

    np.testing.assert_allclose(gradient(m, state, Y), force_gradient(expected, Y), rtol=1e-12)


def test_pstsne_equals_tsne_right_after_an_epoch(data, Y):
    ps, ts = build_method("pstsne", perplexity=5), build_method("tsne", perplexity=5)
    s_ps, s_ts = ps.prepare(data), ts.prepare(data)
    ps.on_epoch(Y, s_ps, 100, 0.0)
    np.testing.assert_allclose(gradient(ps, s_ps, Y), gradient(ts, s_ts, Y), rtol=1e-10)
    c_ps = DenseEngine().evaluate(ps, s_ps, Y, grad=False)[0]
    c_ts = DenseEngine().evaluate(ts, s_ts, Y, grad=False)[0]
    np.testing.assert_allclose(c_ps, c_ts, rtol=1e-10)
    # elsewhere the frozen Z makes the forces differ from t-SNE's
    Y2 = 2 * Y
    assert not np.allclose(gradient(ps, s_ps, Y2), gradient(ts, s_ts, Y2), rtol=1e-3)


def test_pstsne_normaliser_resets_when_exaggeration_changes(data, Y):
    m = build_method("pstsne", perplexity=5)
    state = m.prepare(data)
    m.on_epoch(Y, state, 100, 0.0, exaggeration=4.0)
    assert state.data["Z"] != 100.0
    gradient(m, state, Y, exaggeration=1.0)
    assert state.data["Z"] == 100.0


@pytest.mark.parametrize("name", ["tsneu", "pstsne"])
def test_unnormalised_forces_ignore_exaggeration(data, Y, name):
    """The original's quirk: exaggeration scales P (the cost) but not V (the forces)."""
    m = build_method(name, perplexity=5)
    state = m.prepare(data)
    np.testing.assert_array_equal(gradient(m, state, Y, 4.0), gradient(m, state, Y, 1.0))
    c1 = DenseEngine().evaluate(m, state, Y, 1.0, grad=False)[0].sum()
    c4 = DenseEngine().evaluate(m, state, Y, 4.0, grad=False)[0].sum()
    assert c4 != pytest.approx(c1)


def _hssne_cost(data, Y, alpha):
    m = build_method(("hssne", {"alpha": alpha}), perplexity=5)
    return float(DenseEngine().evaluate(m, m.prepare(data), Y, grad=False)[0].sum())


def test_dhssne_moves_alpha_to_the_cheapest_neighbour(data, Y):
    m = build_method("dhssne", perplexity=5)
    state = m.prepare(data)
    costs = {a: _hssne_cost(data, Y, a) for a in (0.6, 0.4, 0.5)}
    m.on_epoch(Y, state, 50, costs[0.5])
    assert state.data["alpha"] == pytest.approx(min(costs, key=costs.get))
    # the current alpha stays when the epoch cost is lowest
    state.data["alpha"] = 0.5
    m.on_epoch(Y, state, 50, -1.0)
    assert state.data["alpha"] == 0.5


def _heavy(alpha, d2):
    W = (alpha * d2 + 1.0) ** (-1.0 / alpha)
    np.fill_diagonal(W, 0.0)
    return W


def test_dhssne_first_gradient_after_a_change_reads_the_epoch_weights(data, Y):
    """The original's quirk (docs/methods.md#dynamic-methods): the first gradient after the alpha
    search uses the weights and normaliser of the epoch's cost (old alpha) raised to the new alpha;
    the next ones are HSSNE's at the new alpha."""
    from smallvis.engines.dense import force_gradient

    m = build_method("dhssne", perplexity=5)
    state = m.prepare(data)
    m.on_epoch(Y, state, 50, np.inf)  # any candidate beats an infinite epoch cost
    new = state.data["alpha"]
    assert new != 0.5
    d2 = squared_distances(Y)
    W = _heavy(0.5, d2)  # the epoch's weights, at the old alpha
    K = 4.0 * (state.P - W / W.sum()) * W**new
    np.testing.assert_allclose(gradient(m, state, Y), force_gradient(K, Y), rtol=1e-12)
    hs = build_method(("hssne", {"alpha": new}), perplexity=5)
    np.testing.assert_allclose(gradient(m, state, Y), gradient(hs, hs.prepare(data), Y),
                               rtol=1e-12)


def test_dhssne_weights_in_the_power_form(data, Y):
    """Five steps down from 0.5 reach alpha = 2.8e-17 (not 0), where 1 + alpha d2 rounds to 1 for
    d2 < 4: those weights are 1, as in the original (the log1p form gives a Gaussian kernel there,
    whose lower cost would carry alpha below 0)."""
    m = build_method("dhssne", perplexity=5)
    state = m.prepare(data)
    state.data["alpha"] = 0.5 - 0.1 - 0.1 - 0.1 - 0.1 - 0.1
    assert 0.0 < state.data["alpha"] < 1e-16
    d2 = squared_distances(Y)
    W = m.output_kernel(state).weights(d2)
    near = (d2 < 4.0) & ~np.eye(10, dtype=bool)
    assert near.any() and np.all(W[near] == 1.0)


def test_dhssne_reports_alpha(iris10):
    res = smallvis(iris10, method="dhssne", perplexity=5, max_iter=100, epoch=25,
                   Y_init="pca", ret_extra=["alpha"])
    assert isinstance(res.alpha, float)
    steps = (res.alpha - 0.5) / 0.1  # alpha moves from 0.5 in steps of 0.1
    assert steps == pytest.approx(round(steps), abs=1e-9)
