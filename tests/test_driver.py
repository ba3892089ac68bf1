"""Behaviour of the optimisation loop: epochs, stopping, exaggeration bookkeeping, callbacks
(docs/original.md#the-optimisation-loop)."""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method


def run(iris10, iris10_Y, **kw):
    kw.setdefault("perplexity", 5)
    kw.setdefault("Y_init", iris10_Y)
    return smallvis(iris10, ret_extra=True, **kw)


def cost_at(iris10, Y, factor=1.0):
    m = build_method("tsne", perplexity=5)
    state = m.prepare(InputData(scale_input(iris10, "absmax")))
    return float(np.sum(DenseEngine().evaluate(m, state, Y, factor, grad=False)[0]))


def test_default_epoch_is_tenth_of_max_iter_round_half_even(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=25, tol=0)
    assert list(res.itercosts) == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 25]


def test_callback_called_at_zero_and_every_epoch(iris10, iris10_Y):
    calls = []
    run(iris10, iris10_Y, max_iter=30, epoch=10, tol=0,
        epoch_callback=lambda Y, it, cost: calls.append((it, cost, Y.shape)))
    assert [c[0] for c in calls] == [0, 10, 20, 30]
    assert calls[0][1] is None and all(c[1] > 0 for c in calls[1:])


def test_iter0_cost_recorded(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=10, iter0_cost=True)
    assert 0 in res.itercosts
    assert res.itercosts[0] == pytest.approx(cost_at(iris10, iris10_Y))


def test_early_exaggeration_costs_use_exaggerated_p(iris10, iris10_Y):
    seen = {}
    res = run(iris10, iris10_Y, max_iter=40, epoch=10, exaggeration_factor=4, stop_lying_iter=25,
              tol=0, epoch_callback=lambda Y, it, cost: seen.setdefault(it, (Y.copy(), cost)))
    assert res.exaggeration_factor == 4 and res.stop_lying_iter == 25
    Y10, c10 = seen[10]
    assert c10 == pytest.approx(cost_at(iris10, Y10, 4.0))
    Y30, c30 = seen[30]
    assert c30 == pytest.approx(cost_at(iris10, Y30, 1.0))
    # P is returned un-exaggerated
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, max_iter=5, exaggeration_factor=4,
                   ret_extra=["P"])
    assert res.P.sum() == pytest.approx(1.0)


def test_unused_exaggeration_fields_are_none(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=10)
    assert res.exaggeration_factor is None and res.stop_lying_iter is None
    assert res.late_exaggeration_factor is None and res.start_late_lying_iter is None


def test_late_exaggeration_bookkeeping(iris10, iris10_Y):
    seen = {}
    res = run(iris10, iris10_Y, max_iter=50, epoch=10, tol=0, late_exaggeration_factor=2,
              start_late_lying_iter=30,
              epoch_callback=lambda Y, it, cost: seen.setdefault(it, (Y.copy(), cost)))
    assert res.late_exaggeration_factor == 2 and res.start_late_lying_iter == 30
    assert seen[30][1] == pytest.approx(cost_at(iris10, seen[30][0], 2.0))
    assert seen[20][1] == pytest.approx(cost_at(iris10, seen[20][0], 1.0))
    # the final per-point costs are un-exaggerated
    assert res.costs.sum() == pytest.approx(cost_at(iris10, res.Y, 1.0))


def test_tolerance_waits_tol_wait_iterations_after_exaggeration(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=1000, epoch=5, exaggeration_factor=4, stop_lying_iter=50,
              tol=1e-3)
    assert res.iter > 50 + 15


def test_tolerance_can_end_early_exaggeration(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=600, epoch=10, exaggeration_factor=4,
              stop_lying_iter=400, tol=1e-4, eta=1)
    # stopped during exaggeration: exaggeration ends one iteration later, the run continues, and
    # the momentum switch keeps its distance from the end of exaggeration
    assert res.stop_lying_iter < 400 and res.stop_lying_iter % 10 == 1
    assert res.opt["mom_switch_iter"] == res.stop_lying_iter + 150
    assert res.iter > res.stop_lying_iter


def test_min_cost_stops(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=100, epoch=10, min_cost=10.0)
    assert res.iter == 10


def test_g2tol_stops(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=1000, epoch=10, g2tol=1e-3, tol=0)
    assert res.iter < 1000 and res.G2norm < 1e-3


def test_ee_monitoring_ends_exaggeration(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=300, exaggeration_factor=4, ee_mon_epoch=3,
              eta="optsne")
    assert res.stop_lying_iter < 300
    assert res.opt["eta"] == pytest.approx(10 / 4)
    assert list(res.itercosts)[:3] == [3, 6, 9]


def test_optsne_learning_rate(iris10, iris10_Y):
    assert run(iris10, iris10_Y, max_iter=5, eta="optsne").opt["eta"] == 10
    assert run(iris10, iris10_Y, max_iter=5, eta="optsne",
               exaggeration_factor=4).opt["eta"] == 2.5


def test_opt_list_params_win_over_smallvis_args(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=5, eta=100, opt=("dbd", {"eta": 50}))
    assert res.opt["eta"] == 50 and res.opt["mom_switch_iter"] == 151


def test_max_iter_zero_returns_initialisation(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=0)
    np.testing.assert_array_equal(res.Y, iris10_Y)
    assert res.iter == 0
    assert res.costs.sum() == pytest.approx(cost_at(iris10, iris10_Y))


def test_result_is_recentred(iris10, iris10_Y):
    res = run(iris10, iris10_Y, max_iter=20)
    np.testing.assert_allclose(res.Y.mean(axis=0), 0, atol=1e-10)


def test_random_state_reproducible(iris10):
    a = smallvis(iris10, perplexity=5, max_iter=50, random_state=1)
    b = smallvis(iris10, perplexity=5, max_iter=50, random_state=1)
    c = smallvis(iris10, perplexity=5, max_iter=50, random_state=2)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    rng = np.random.default_rng(5)
    assert smallvis(iris10, perplexity=5, max_iter=5, random_state=rng).shape == (10, 2)


def test_divergence_is_reported(iris10, iris10_Y):
    with pytest.warns(RuntimeWarning, match="diverged"):
        res = run(iris10, iris10_Y * 1e-3, max_iter=200, eta=1e300, momentum=0.99,
                  final_momentum=0.99)
    assert res.diverged


def test_momentum_switches_after_mom_switch_iter(iris10, iris10_Y, monkeypatch):
    from smallvis.run.optim.dbd import DeltaBarDelta

    seen = {}
    original = DeltaBarDelta.step

    def spy(self, objective, Y, iteration):
        seen[iteration] = self.mu
        return original(self, objective, Y, iteration)

    monkeypatch.setattr(DeltaBarDelta, "step", spy)
    run(iris10, iris10_Y, max_iter=30, mom_switch_iter=10, tol=0)
    assert seen[10] == 0.5 and seen[11] == 0.8
