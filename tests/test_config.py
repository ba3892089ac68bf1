"""The run configuration (one typed object built from smallvis()'s arguments, its defaults resolved
in one function), the init registry, and the stochastic engine's epochs run by the one driver."""

import inspect
import logging

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.run import driver, init
from smallvis.run.config import RunConfig, resolve
from smallvis.run.optim.sgd import EpochStepper


def test_config_defaults_are_smallvis_defaults():
    """The signature and the configuration state the same defaults (and the same names)."""
    signature = {name: p.default for name, p in inspect.signature(smallvis).parameters.items()
                 if name != "X"}
    assert RunConfig().arguments() == signature
    assert RunConfig.from_arguments(**signature) == RunConfig()


def test_config_groups_the_arguments():
    config = RunConfig.from_arguments(method="umap", eta=2.0, max_iter=7, Y_init="pca", k=3)
    assert config.method.method == "umap" and config.optimizer.eta == 2.0
    assert config.schedule.max_iter == 7 and config.init.Y_init == "pca" and config.k == 3
    with pytest.raises(TypeError, match="unknown argument 'etaa'"):
        RunConfig.from_arguments(etaa=1)


def test_the_originals_lazy_defaults_are_resolved_in_one_place():
    plan = resolve(RunConfig.from_arguments(max_iter=300, exaggeration_factor=4),
                   method_name="tsne", given_params={}, n=150, default_init="rand")
    s = plan.schedule
    assert (s.max_iter, s.epoch, s.stop_lying_iter, s.start_late_lying_iter) == (300, 30, 30, 270)
    name, params = plan.optimizer
    assert name == "dbd" and params["mom_switch_iter"] == 30 + 150 and params["eta"] == 500
    assert plan.init == "rand" and plan.defaults == "smallvis"
    plan = resolve(RunConfig.from_arguments(eta="optsne", exaggeration_factor=4), method_name="tsne",
                   given_params={}, n=400, default_init="rand")
    assert plan.schedule.max_iter == 1000 and plan.eta == 100


def test_the_sgd_engines_defaults_are_resolved_there_too():
    from smallvis.methods import build_method

    for name, n, epochs in [("umap", 500, 500), ("umap", 20_000, 200), ("ncvis", 500, 50)]:
        plan = resolve(RunConfig.from_arguments(method=name), method_name=name, given_params={},
                       n=n, default_init="normlaplacian",
                       stochastic_plan=build_method(name).stochastic_plan())
        assert plan.schedule.max_iter == epochs and plan.eta == 1.0 and plan.optimizer is None
        assert plan.schedule.min_cost == -np.inf  # a sampled cost stops nothing
    with pytest.raises(ValueError, match="does not use exaggeration"):
        resolve(RunConfig.from_arguments(method="umap", exaggeration_factor=4), method_name="umap",
                given_params={}, n=100, default_init="rand",
                stochastic_plan=build_method("umap").stochastic_plan())


def test_every_init_is_registered_and_a_new_one_plugs_in(monkeypatch, iris10):
    assert set(init.INITS) == {"rand", "pca", "spca", "laplacian", "normlaplacian", "power",
                               "pcascaled"}
    for name in init.INITS:
        Y = smallvis(iris10, method="tsne", perplexity=3, Y_init=name, max_iter=0)
        assert Y.shape == (10, 2) and np.all(np.isfinite(Y))

    def corner(context, sdev):
        return np.tile(np.arange(context.k, dtype=float), (context.data.n, 1)) + \
            np.arange(context.data.n)[:, None]

    monkeypatch.setitem(init.INITS, "corner", init.Init(corner, doc="a test init"))
    Y = smallvis(iris10, method="tsne", perplexity=3, Y_init="corner", max_iter=0)
    np.testing.assert_array_equal(Y, np.arange(10.0)[:, None] + [0.0, 1.0])


class _Epochs:
    """Fake epochs: each moves every point by +1; epoch ``bad`` writes NaN."""

    params = {"name": "fake"}

    def __init__(self, bad=None):
        self.bad = bad
        self.seen = []

    def step(self, Y, e):
        self.seen.append(e)
        out = Y + 1.0
        if e == self.bad:
            out[0, 0] = np.nan
        return out

    def note(self):
        return " (fake)"


class _Objective:
    method = type("M", (), {"uses_affinities": False, "on_epoch": lambda *a, **k: None})()
    state = None
    exaggeration = 1.0

    def __init__(self):
        self.calls = 0

    def pcost(self, Y, exaggeration=None):
        self.calls += 1
        return np.ones(Y.shape[0])


def test_epochs_run_through_the_driver(caplog):
    Y0 = np.arange(8.0).reshape(4, 2)
    epochs, objective = _Epochs(), _Objective()
    costs = []
    out = driver.run(objective, EpochStepper(epochs), Y0, driver.Schedule(
        max_iter=6, epoch=2, min_cost=-np.inf, tol=0.0, record=True),
        callback=lambda Y, it, cost: costs.append((it, cost)))
    assert epochs.seen == [0, 1, 2, 3, 4, 5]  # step it is epoch it - 1, every epoch runs
    np.testing.assert_array_equal(out.Y, Y0 - Y0.mean(axis=0))  # recentred once, at the end
    assert costs == [(0, None), (2, 4.0), (4, 4.0), (6, 4.0)] and out.G2norm is None
    assert out.itercosts == {2: 4.0, 4: 4.0, 6: 4.0} and out.cost_rose is None

    # nobody looks: the sampled cost is never computed
    objective = _Objective()
    driver.run(objective, EpochStepper(_Epochs()), Y0,
               driver.Schedule(max_iter=6, epoch=2, min_cost=-np.inf, tol=0.0))
    assert objective.calls == 0

    # the log names epochs and says the cost is sampled
    with caplog.at_level(logging.INFO, logger="smallvis"):
        driver.run(_Objective(), EpochStepper(_Epochs()), Y0,
                   driver.Schedule(max_iter=2, epoch=1, min_cost=-np.inf, tol=0.0))
    assert "Epoch 2 cost (sampled) = 4 (fake)" in caplog.text


def test_a_diverging_epoch_returns_the_last_finite_coordinates():
    Y0 = np.zeros((4, 2))
    out = driver.run(_Objective(), EpochStepper(_Epochs(bad=3)), Y0,
                     driver.Schedule(max_iter=10, epoch=5, min_cost=-np.inf, tol=0.0))
    assert out.diverged and out.diverged_at == 4 and out.iter == 4
    assert np.all(np.isfinite(out.Y))


def test_sgd_runs_report_through_the_driver(iris10):
    """The stochastic engine's run: callbacks on epochs with the sampled cost, recorded costs."""
    seen = []
    res = smallvis(iris10, method="umap", perplexity=4, engine="sgd", max_iter=20, epoch=5,
                   random_state=1, ret_extra=True,
                   epoch_callback=lambda Y, it, cost: seen.append(it))
    assert seen == [0, 5, 10, 15, 20] and list(res.itercosts) == [5, 10, 15, 20]
    assert res.opt["name"] == "sgd" and res.opt["n_epochs"] == 20 and res.iter == 20
