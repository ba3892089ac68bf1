"""The original's internal optimisers (docs/original.md#optimisers): update arithmetic against hand
computations, on a quadratic and on t-SNE at iris10 through smallvis(); progress over 200
iterations; parameter merging; bad input."""

import json
import re

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.cli import main
from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method
from smallvis.run.optim import OPTIMIZERS, build_optimizer, split_opt
from smallvis.run.optim.dbd import NesterovDeltaBarDelta

INTERNAL = ["dbd", "ndbd", "adagrad", "adadelta", "rmsprop", "adam", "amsgrad", "adamax", "nadam",
            "steepd", "mom", "nag", "gmom"]


# Hand computations: each returns upd(G, t) -> uY, its state in plain variables -------------------

def ref_dbd(eta, momentum, final_momentum, mom_switch_iter, min_gain, beta=None, scale_grad=False):
    """dbd (beta None) or ndbd; gains element by element."""
    s = dict(uY=None, gain=None, gd=None, mu=momentum)

    def upd(G, t):
        if scale_grad:
            G = G / np.sqrt((G**2).sum())
        if s["uY"] is None:
            s["uY"], s["gain"] = np.zeros_like(G), np.ones_like(G)
        gain = s["gain"].copy()
        for idx in np.ndindex(*G.shape):
            if np.sign(G[idx]) != np.sign(s["uY"][idx]):
                gain[idx] = gain[idx] + 0.2
            else:
                gain[idx] = gain[idx] * 0.8
            gain[idx] = max(gain[idx], min_gain)
        gd = eta * gain * G
        if beta is None:
            uY = s["mu"] * s["uY"] - gd
        elif s["gd"] is None:
            uY = -gd
        else:
            uY = s["mu"] * s["uY"] - gd + beta * s["mu"] * (s["gd"] - gd)
        s.update(uY=uY, gain=gain, gd=gd)
        if t == mom_switch_iter:
            s["mu"] = final_momentum
        return uY
    return upd


def ref_adagrad(eta, eps):
    s = dict(H=0.0)

    def upd(G, t):
        s["H"] = s["H"] + G**2
        return -eta * G / np.sqrt(s["H"] + eps)
    return upd


def ref_adadelta(rho, eps):
    s = dict(Eg=0.0, Eu=0.0)

    def upd(G, t):
        s["Eg"] = rho * s["Eg"] + (1 - rho) * G**2
        uY = -G * np.sqrt((s["Eu"] + eps) / (s["Eg"] + eps))
        s["Eu"] = rho * s["Eu"] + (1 - rho) * uY**2
        return uY
    return upd


def ref_rmsprop(eta, rho, eps):
    s = dict(Eg=0.0)

    def upd(G, t):
        s["Eg"] = rho * s["Eg"] + (1 - rho) * G**2
        return -eta * G / np.sqrt(s["Eg"] + eps)
    return upd


def ref_adam(eta, beta1, beta2, eps, ams=False):
    s = dict(m=0.0, v=0.0, vmax=0.0)

    def upd(G, t):
        s["m"] = beta1 * s["m"] + (1 - beta1) * G
        s["v"] = beta2 * s["v"] + (1 - beta2) * G**2
        s["vmax"] = np.maximum(s["vmax"], s["v"])
        bc = np.sqrt(1 - beta2**t) / (1 - beta1**t)
        return -eta * s["m"] * bc / (np.sqrt(s["vmax"] if ams else s["v"]) + eps)
    return upd


def ref_adamax(eta, beta1, beta2, eps):
    s = dict(m=0.0, u=None)

    def upd(G, t):
        n = G.shape[0]
        if s["u"] is None:
            s["u"] = [0.0] * n
        s["m"] = beta1 * s["m"] + (1 - beta1) * G
        # one u per point (row): the largest |gradient component| of the row
        s["u"] = [max(beta2 * s["u"][i], max(abs(G[i, 0]), abs(G[i, 1]))) for i in range(n)]
        m_hat = s["m"] / (1 - beta1**t)
        return np.array([-eta * m_hat[i] / s["u"][i] for i in range(n)])
    return upd


def ref_nadam(eta, beta1, beta2, eps):
    s = dict(m=0.0, v=0.0)

    def upd(G, t):
        s["m"] = beta1 * s["m"] + (1 - beta1) * G
        s["v"] = beta2 * s["v"] + (1 - beta2) * G**2
        m_hat = s["m"] / (1 - beta1 ** (t + 1))
        v_hat = s["v"] / (1 - beta2**t)
        m_bar = beta1 * m_hat + (1 - beta1) * G / (1 - beta1**t)
        return -eta * m_bar / (np.sqrt(v_hat) + eps)
    return upd


def ref_steepd(eta):
    return lambda G, t: -eta * G


def ref_mom(eta, mu):
    s = dict(uY=0.0)

    def upd(G, t):
        s["uY"] = -eta * G + mu * s["uY"]
        return s["uY"]
    return upd


def ref_nag(eta, mu, beta=None):
    """nag (beta None) or gmom."""
    s = dict(uY=None, gd=None)

    def upd(G, t):
        mu_t = 1 - 3 / (5 + t) if isinstance(mu, str) else mu
        gd = eta * G
        if s["gd"] is None:
            uY = -gd
        elif beta is None:
            uY = mu_t * (s["uY"] + s["gd"]) - (1 + mu_t) * gd
        else:
            uY = mu_t * s["uY"] - gd + beta * mu_t * (s["gd"] - gd)
        s.update(uY=uY, gd=gd)
        return uY
    return upd


DBD = dict(eta=10.0, momentum=0.4, final_momentum=0.7, mom_switch_iter=2, min_gain=0.9)
ADAM = dict(eta=0.1, beta1=0.8, beta2=0.5, eps=1e-3)
CASES = [
    ("dbd", DBD),
    ("ndbd", dict(DBD, beta=0.6)),
    ("ndbd", dict(DBD, beta=0.0, scale_grad=True)),
    ("adagrad", dict(eta=0.3, eps=1e-3)),
    ("adadelta", dict(rho=0.8, eps=1e-2)),
    ("rmsprop", dict(eta=0.05, rho=0.7, eps=1e-4)),
    ("adam", ADAM),
    ("amsgrad", ADAM),
    ("adamax", ADAM),
    ("nadam", ADAM),
    ("steepd", dict(eta=0.3)),
    ("mom", dict(eta=0.3, mu=0.6)),
    ("nag", dict(eta=0.3, mu=0.6)),
    ("nag", dict(eta=0.3, mu="nesterov")),
    ("gmom", dict(eta=0.3, mu=0.6, beta=0.4)),
    ("gmom", dict(eta=0.3, mu="nesterov", beta=0.0)),
]
# a fresh hand computation for each optimiser's parameters
REFS = {
    "dbd": ref_dbd, "ndbd": lambda **p: ref_dbd(**{"beta": 1.0, **p}), "adagrad": ref_adagrad,
    "adadelta": ref_adadelta, "rmsprop": ref_rmsprop, "adam": ref_adam,
    "amsgrad": lambda **p: ref_adam(**p, ams=True), "adamax": ref_adamax, "nadam": ref_nadam,
    "steepd": ref_steepd, "mom": ref_mom, "nag": ref_nag, "gmom": lambda **p: ref_nag(**{"beta": 0.5, **p}),
}


def cases():
    return [pytest.param(name, params, id=f"{name}-{i}") for i, (name, params) in enumerate(CASES)]


def test_every_internal_optimiser_is_registered_and_tested():
    assert set(INTERNAL) <= set(OPTIMIZERS)
    assert {name for name, _ in CASES} == set(INTERNAL)


# Quadratic f(Y) = 1/2 sum(a Y^2) -----------------------------------------------------------------

class Quadratic:
    def __init__(self, a):
        self.a = a
        self.exaggeration = 1.0
        self.counts = {"fn": 0, "gr": 0}

    def gradient(self, Y):
        self.counts["gr"] += 1
        return self.a * Y


@pytest.fixture
def quadratic():
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(5, 2))
    Y[0, 0] = 0.0  # a zero gradient component: no sign flip on the first step
    return Quadratic(rng.uniform(0.5, 3.0, size=(5, 2))), Y


@pytest.mark.parametrize("name, params", cases())
def test_three_steps_on_a_quadratic(quadratic, name, params):
    objective, Y = quadratic
    opt, ref = build_optimizer(name, params), REFS[name](**params)
    Y_ref = Y.copy()
    for t in (1, 2, 3):
        step = opt.step(objective, Y, t)
        np.testing.assert_array_equal(step.G, objective.a * Y)  # the unscaled gradient
        Y_ref = Y_ref + ref(objective.a * Y_ref, t)
        np.testing.assert_allclose(step.Y, Y_ref, rtol=1e-12, atol=1e-14)
        Y = step.Y
    assert objective.counts["gr"] == 3


def test_amsgrad_and_adamax_differ_from_adam_here(quadratic):
    """The cases above exercise the running maximum and the per-point normaliser."""
    objective, Y0 = quadratic

    def three(upd):
        Y = Y0.copy()
        for t in (1, 2, 3):
            Y = Y + upd(objective.a * Y, t)
        return Y

    assert not np.allclose(three(ref_adam(**ADAM)), three(ref_adam(**ADAM, ams=True)))

    def adamax_per_element(eta, beta1, beta2, eps):  # the paper's AdaMax
        s = dict(m=0.0, u=0.0)

        def upd(G, t):
            s["m"] = beta1 * s["m"] + (1 - beta1) * G
            s["u"] = np.maximum(beta2 * s["u"], np.abs(G))
            return -eta * s["m"] / (1 - beta1**t) / s["u"]
        return upd

    with np.errstate(invalid="ignore"):  # Y[0, 0] = 0: 0 / 0 per element, not per point
        per_element = three(adamax_per_element(**ADAM))
    assert not np.allclose(three(ref_adamax(**ADAM))[1:], per_element[1:])


def test_ndbd_honours_a_moved_momentum_switch(quadratic):
    objective, Y = quadratic
    opt = NesterovDeltaBarDelta(mom_switch_iter=250)
    opt.mom_switch_iter = 2  # as the driver does after opt-SNE monitoring
    mus = []
    for t in (1, 2, 3):
        mus.append(opt.mu)
        Y = opt.step(objective, Y, t).Y
    assert mus == [0.5, 0.5, 0.8]


def test_zero_gradients_do_not_make_nans(quadratic):
    """Where the original divides 0 by 0 (AdaMax's u of a point with only zero gradients; ndbd's
    scale_grad with a zero gradient), nothing moves."""
    objective, Y = quadratic
    Y = Y.copy()
    Y[0] = 0.0
    step = build_optimizer("adamax", {}).step(objective, Y, 1)
    assert np.all(np.isfinite(step.Y)) and np.all(step.Y[0] == 0) and np.all(step.Y[1:] != Y[1:])
    step = build_optimizer("ndbd", {"scale_grad": True}).step(objective, np.zeros_like(Y), 1)
    np.testing.assert_array_equal(step.Y, 0.0)


# t-SNE at iris10 through smallvis() ----------------------------------------------------------------

@pytest.fixture(scope="module")
def tsne_gradient(iris10):
    method = build_method("tsne", perplexity=5)
    state = method.prepare(InputData(scale_input(iris10, "absmax")))
    return lambda Y: DenseEngine().evaluate(method, state, Y, 1.0, cost=False)[1]


@pytest.mark.parametrize("name, params", cases())
def test_first_two_steps_of_tsne(iris10, iris10_Y, tsne_gradient, name, params):
    ref = REFS[name](**params)
    Y = iris10_Y.copy()
    for max_iter in (1, 2):
        Y = Y + ref(tsne_gradient(Y), max_iter)
        Y = Y - Y.mean(axis=0)  # the driver recentres after every step
        res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=(name, params), max_iter=max_iter,
                       epoch=100, ret_extra=True)
        np.testing.assert_allclose(res.Y, Y, rtol=1e-10, atol=1e-12)
        assert res.opt["name"] == name and res.opt["counts"]["gr"] == max_iter


SENSIBLE = {"dbd": {}, "ndbd": {"eta": 100}, "adagrad": {"eta": 1.0}, "adadelta": {},
            "rmsprop": {"eta": 0.1}, "adam": {"eta": 0.1}, "amsgrad": {"eta": 0.1},
            "adamax": {"eta": 0.1}, "nadam": {"eta": 0.1}, "steepd": {"eta": 5},
            "mom": {"eta": 5}, "nag": {"eta": 5}, "gmom": {"eta": 5}}


@pytest.mark.parametrize("name", INTERNAL)
def test_two_hundred_iterations_reduce_the_cost(iris10, iris10_Y, name):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=(name, SENSIBLE[name]), max_iter=200,
                   epoch=50, tol=0, iter0_cost=True, ret_extra=True)
    costs = list(res.itercosts.values())
    assert res.iter == 200 and not res.diverged and np.all(np.isfinite(res.Y))
    assert costs[-1] < 0.5 * costs[0], costs


def test_nesterov_schedule_runs(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=("nag", {"eta": 5, "mu": "nesterov"}),
                   max_iter=50, ret_extra=True)
    assert res.opt["mu"] == "nesterov" and np.all(np.isfinite(res.Y))


# Parameters: merging, resolution, names -----------------------------------------------------------

def run(iris10, iris10_Y, **kw):
    return smallvis(iris10, Y_init=iris10_Y, perplexity=5, max_iter=5, ret_extra=True, **kw)


def test_ndbd_takes_the_top_level_dbd_arguments(iris10, iris10_Y):
    res = run(iris10, iris10_Y, opt="ndbd", eta=100, momentum=0.3, final_momentum=0.6,
              mom_switch_iter=3, min_gain=0.05)
    assert res.opt == dict(name="ndbd", eta=100.0, momentum=0.3, final_momentum=0.6,
                           mom_switch_iter=3, min_gain=0.05, reset_gains=False, beta=1.0,
                           scale_grad=False,
                           counts=res.opt["counts"])
    assert run(iris10, iris10_Y, opt=("ndbd", {"eta": 50}), eta=100).opt["eta"] == 50
    assert run(iris10, iris10_Y, opt="ndbd", eta="optsne").opt["eta"] == 10
    # the default momentum switch follows the end of exaggeration, as for dbd
    assert run(iris10, iris10_Y, opt="ndbd").opt["mom_switch_iter"] == 151


def test_ndbd_momentum_switch_follows_early_end_of_exaggeration(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=("ndbd", {"eta": 1}), max_iter=600,
                   epoch=10, exaggeration_factor=4, stop_lying_iter=400, tol=1e-4, ret_extra=True)
    assert res.stop_lying_iter < 400
    assert res.opt["mom_switch_iter"] == res.stop_lying_iter + 150


def test_other_optimisers_keep_their_own_learning_rate(iris10, iris10_Y):
    res = run(iris10, iris10_Y, opt="adam", eta=100, momentum=0.3)
    assert res.opt == dict(name="adam", eta=0.002, beta1=0.9, beta2=0.999, eps=1e-8,
                           counts=res.opt["counts"])


@pytest.mark.parametrize("given, name", [
    ("adam", "adam"), ("ADAM", "adam"), ("adama", "adamax"), ("AMS", "amsgrad"), ("nd", "ndbd"),
    ("db", "dbd"), ("st", "steepd"), ("mom", "mom"), ("nag", "nag"), ("gm", "gmom"),
    ("adade", "adadelta"), ("adag", "adagrad"), ("rms", "rmsprop"), ("nad", "nadam"),
])
def test_names_resolve_exactly_first_then_by_prefix(given, name):
    assert split_opt(given) == (name, {})
    assert split_opt((given, {"eta": 1})) == (name, {"eta": 1})


@pytest.mark.parametrize("given", ["ada", "n", "a"])
def test_ambiguous_prefixes(given):
    with pytest.raises(ValueError, match=rf"optimizer '{given}' is ambiguous"):
        split_opt(given)


# Bad input --------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, closest", [("adamm", "adam"), ("rmsprob", "rmsprop"),
                                            ("stepd", "steepd"), ("nadma", "nadam")])
def test_unknown_optimiser_suggests_the_closest(iris10, given, closest):
    with pytest.raises(ValueError, match=rf"unknown optimizer '{given}'\. Did you mean '{closest}'"):
        smallvis(iris10, perplexity=5, max_iter=1, opt=given)


@pytest.mark.parametrize("name", INTERNAL)
def test_unknown_parameter_lists_the_valid_ones(iris10, name):
    valid = ", ".join(OPTIMIZERS[name].defaults)
    with pytest.raises(ValueError, match=rf"unknown parameter\(s\) 'bogus' for optimizer '{name}'; "
                                         rf"valid: {valid}$"):
        smallvis(iris10, perplexity=5, max_iter=1, opt=(name, {"bogus": 1}))


@pytest.mark.parametrize("name", [n for n in INTERNAL if "eta" in OPTIMIZERS[n].defaults])
@pytest.mark.parametrize("eta", [0, -1, float("inf"), float("nan"), "fast"])
def test_learning_rate_must_be_positive(name, eta):
    with pytest.raises(ValueError, match=rf"^{name}: eta \(learning rate\) must be positive and "
                                         rf"finite; got {re.escape(repr(eta))}$"):
        build_optimizer(name, {"eta": eta})


@pytest.mark.parametrize("name, params, message", [
    ("adadelta", {"rho": 1}, r"adadelta: rho must be a number in \[0, 1\); got 1"),
    ("rmsprop", {"rho": -0.1}, r"rmsprop: rho must be a number in \[0, 1\); got -0.1"),
    ("adam", {"beta1": 1.0}, r"adam: beta1 must be a number in \[0, 1\)"),
    ("nadam", {"beta2": 2}, r"nadam: beta2 must be a number in \[0, 1\)"),
    ("adagrad", {"eps": -1e-8}, r"adagrad: eps must be a finite number >= 0"),
    ("mom", {"mu": "nesterov"}, r"mom: mu must be a number in \[0, 1\)"),
    ("nag", {"mu": 1.5}, r"nag: mu must be a number in \[0, 1\) or a string such as 'nesterov'"),
    ("gmom", {"beta": -1}, r"gmom: beta must be a finite number >= 0"),
    ("ndbd", {"min_gain": -0.1}, r"ndbd: min_gain must be a finite number >= 0"),
    ("ndbd", {"scale_grad": "yes"}, r"ndbd: scale_grad must be True or False"),
    ("ndbd", {"mom_switch_iter": 2.5}, r"ndbd: mom_switch_iter must be a whole number >= 0"),
    ("dbd", {"momentum": 1.2}, r"dbd: momentum must be a number in \[0, 1\)"),
])
def test_bad_parameter_values(iris10, name, params, message):
    with pytest.raises(ValueError, match=message):
        smallvis(iris10, perplexity=5, max_iter=1, opt=(name, params))


def embed(tmp_path, *args):
    return main(["embed", "iris", "--max-iter", "5", "--seed", "1", "--out", str(tmp_path / "x.csv"),
                 *args])


@pytest.mark.parametrize("args, message", [
    (["--opt", "adamm"], r"unknown optimizer 'adamm'\. Did you mean 'adam'\?"),
    (["--opt", "adam", "--opt-param", "rho=0.5"], r"unknown parameter\(s\) 'rho'.*'adam'"),
    (["--opt", "rmsprop", "--opt-param", "eta=-1"], r"rmsprop: eta \(learning rate\) must be positive"),
    (["--opt", "adadelta", "--opt-param", "rho=1"], r"adadelta: rho must be a number in \[0, 1\)"),
])
def test_cli_bad_optimiser_input_exits_2(tmp_path, capsys, args, message):
    assert embed(tmp_path, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("smallvis: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert re.search(message, err), err


def test_cli_runs_an_internal_optimiser(tmp_path):
    assert embed(tmp_path, "--opt", "nag", "--opt-param", "mu=nesterov", "--opt-param", "eta=5") == 0
    opt = json.loads((tmp_path / "x.json").read_text())["result"]["opt"]
    assert opt["name"] == "nag" and opt["mu"] == "nesterov" and opt["eta"] == 5
