"""The line-search optimisers (L-BFGS, BFGS, CG, SD, specd) against the original's published numbers
(docs/optimisers.md#reference-values), scipy's minimisers, and the strong Wolfe conditions."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize, rosen, rosen_der

from smallvis import smallvis
from smallvis.run.driver import recentre
from smallvis.engines.dense import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method
from smallvis.run.optim import Objective, build_optimizer, split_opt
from smallvis.run.optim.linesearch import Point, more_thuente


class Function:
    """A plain function of a vector, presented to the optimisers as an (n, 1) coordinate matrix."""

    def __init__(self, f, grad):
        self.f, self.grad = f, grad
        self.exaggeration = 1.0
        self.counts = {"fn": 0, "gr": 0}

    def value_and_gradient(self, Y):
        x = Y[:, 0]
        return float(self.f(x)), self.grad(x)[:, None]


def drive(opt, fun, x0, iterations):
    """Step an optimiser as mize_step would (no recentring); records (alpha0, alpha, nf, x)."""
    optimizer = build_optimizer(*split_opt(opt))
    Y = np.asarray(x0, float)[:, None]
    trace = []
    for it in range(1, iterations + 1):
        step = optimizer.step(fun, Y, it)
        Y = step.Y
        alpha0, alpha, _ = optimizer.last_search
        trace.append((alpha0, alpha, optimizer.counts["fn"], Y[:, 0].copy(), step.cost))
        if step.converged:
            break
    return optimizer, trace


def quadratic():
    a = np.array([1.0, 10.0])
    return Function(lambda x: 0.5 * np.sum(a * x * x), lambda x: a * x)


# -- the original's steps on f = (x1^2 + 10 x2^2) / 2 from (1, 1) ----------------------------------

def test_lbfgs_first_steps_on_a_quadratic():
    _, trace = drive("l-bfgs", quadratic(), [1.0, 1.0], 4)
    (a0, a, nf, x, _), (a0_2, a_2, nf2, x2, _) = trace[:2]
    assert a0 == pytest.approx(0.0099019607843, abs=1e-13)
    assert a == pytest.approx(0.049509803921568625, rel=1e-14)
    np.testing.assert_allclose(x, [0.95049019607843133, 0.50490196078431371], rtol=1e-14)
    assert nf == 3
    assert a0_2 == 1.0 and a_2 == 1.0 and nf2 == 4
    np.testing.assert_allclose(x2, [0.80830078830278806, -0.0080830078830276264], rtol=1e-12)
    np.testing.assert_allclose(trace[2][3], [0.72039227752488377, -0.01996786603192556], rtol=1e-12)
    assert trace[3][1] == pytest.approx(0.26054923810478664, rel=1e-10)
    np.testing.assert_allclose(trace[3][3], [0.53717913642277382, -0.018082308855944428], rtol=1e-10)
    assert trace[3][4] == pytest.approx(0.14591556177176737, rel=1e-12)
    assert trace[3][2] == 6


@pytest.mark.parametrize("opt", ["sd", "cg"])
def test_sd_and_cg_first_step_on_a_quadratic(opt):
    # c2 = 0.1: three trials, the last the exact minimiser along -g; the next guess is uncapped
    _, trace = drive(opt, quadratic(), [1.0, 1.0], 2)
    a0, a, nf, x, _ = trace[0]
    assert a0 == pytest.approx(1 / 102, rel=1e-12)
    assert a == pytest.approx(101 / 1001, rel=1e-10)
    np.testing.assert_allclose(x, [0.899100899, -0.008991009], rtol=1e-8)
    assert nf == 4
    assert trace[1][0] == pytest.approx(12.4816, rel=1e-5)


# -- the original's tsne on iris10, perplexity 5, 25 iterations ------------------------------------

TABLE = {  # (alpha0, alpha, f after the step, nf) at iterations 1, 2, 3 and 25
    "l-bfgs": [(0.9811652, 4.905826, 0.22340634, 3), (0.6145996, 0.6145996, 0.0764871707, 4),
               (1, 1, 0.0550469494, 5), (0.724539, 0.724539, 0.0259007631, 27)],
    "bfgs": [(0.9811652, 4.905826, 0.22340634, 3), (0.6145996, 0.6145996, 0.0764871707, 4),
             (1, 1, 0.0489421798, 5), (1, 1, 0.025896642, 27)],
    "cg": [(0.9714507, 15.38009, 0.119076881, 4), (102.0982, 18.19958, 0.0774566846, 7),
           (13.96012, 6.344492, 0.0592591593, 9), (13.81395, 13.81395, 0.0260584021, 50)],
    "cg-hz+": [(0.9714507, 15.38009, 0.119076881, 4), (93.77547, 19.95563, 0.0751260303, 7),
               (11.24969, 7.3847, 0.0477413058, 9), (18.10311, 13.84953, 0.0260678479, 51)],
    "sd": [(0.9714507, 15.38009, 0.119076881, 4), (105.9529, 16.1157, 0.0815656589, 6),
           (13.33721, 8.244714, 0.057909734, 8), (9.525329, 9.525329, 0.0309352137, 48)],
    "specd": [(0.829165, 0.829165, 0.19686753, 2), (1, 1, 0.125206823, 3),
              (1, 1, 0.0971538069, 4), (1, 5, 0.0279621744, 40)],
    "l-bfgs-approx": [(0.9399106, 4.699553, 0.111939135, 3), (1, 1, 0.0613279852, 4),
                      (1, 1, 0.0419890642, 5), (1, 1, 0.0258966392, 27)],
    "bfgs-approx": [(0.9399106, 4.699553, 0.111939135, 3), (1, 0.277021, 0.0786842032, 5),
                    (0.7220086, 0.7220086, 0.0645292521, 6), (1, 1, 0.0258960117, 30)],
}
OPTS = {"cg-hz+": ("cg", {"cg_update": "HZ+"}), "l-bfgs-approx": ("l-bfgs", {"approx_hess": True}),
        "bfgs-approx": ("bfgs", {"approx_hess": True})}


@pytest.mark.parametrize("case", list(TABLE))
def test_published_iris10_trajectories(case, iris10, iris10_Y):
    # the loop of smallvis(): one optimiser step, then recentring
    method = build_method("tsne", perplexity=5)
    state = method.prepare(InputData(scale_input(iris10, "absmax")))
    objective = Objective(method, state, DenseEngine())
    optimizer = build_optimizer(*split_opt(OPTS.get(case, case)))
    Y, rows = iris10_Y.copy(), {}
    for it in range(1, 26):
        step = optimizer.step(objective, Y, it)
        Y = recentre(step.Y)
        rows[it] = (*optimizer.last_search[:2], step.cost, optimizer.counts["fn"])
    for it, expected in zip((1, 2, 3, 25), TABLE[case]):
        a0, a, f, nf = rows[it]
        assert a0 == pytest.approx(expected[0], rel=1e-5), f"alpha0 at iteration {it}"
        assert a == pytest.approx(expected[1], rel=1e-5), f"alpha at iteration {it}"
        assert f == pytest.approx(expected[2], rel=1e-7), f"cost at iteration {it}"
        assert nf == expected[3], f"function count at iteration {it}"


def test_tsne_with_lbfgs_reproduces_the_original(iris10, iris10_Y):
    # the original's test "tsne with L-BFGS"
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt="L-BFGS", max_iter=25,
                   ret_extra=True)
    expected = np.array([-3.534, 2.266, 1.774, 3.28, -3.286, -5.684, 1.287, -2.035, 5.02, 0.9119,
                         0.7444, 1.769, -0.6249, -0.4774, -0.7323, -0.2723, -2.118, 0.4957,
                         -0.3813, 1.598]).reshape(2, 10).T
    np.testing.assert_allclose(res.Y, expected, atol=1e-3)
    assert res.itercosts[25] == pytest.approx(0.02590, abs=1e-4)
    assert res.opt["name"] == "l-bfgs" and res.opt["memory"] == 5
    assert res.opt["counts"] == {"fn": 27, "gr": 27}
    assert res.G2norm == pytest.approx(np.sqrt(np.sum(
        Objective(*_tsne_objective(iris10)).value_and_gradient(res.Y)[1] ** 2)), rel=1e-3)


def _tsne_objective(iris10):
    method = build_method("tsne", perplexity=5)
    return method, method.prepare(InputData(scale_input(iris10, "absmax"))), DenseEngine()


def test_exaggeration_switch_uses_the_stale_cost(iris10, iris10_Y):
    # docs/optimisers.md#interaction-with-the-driver: after early exaggeration ends, the first
    # line search starts from the cached exaggerated cost (6.9619804) while the new cost is
    # evaluated at the trials (0.35420073)
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt="l-bfgs", max_iter=6, epoch=1,
                   exaggeration_factor=4, stop_lying_iter=2, ret_extra=True)
    assert res.itercosts[2] == pytest.approx(6.9619804, rel=1e-7)
    assert res.itercosts[3] == pytest.approx(0.35420073, rel=1e-7)


# -- convergence on Rosenbrock, against scipy --------------------------------------------------

@pytest.mark.parametrize("opt", ["l-bfgs", "bfgs", ("cg", {"cg_update": "PR+"}),
                                 ("cg", {"cg_update": "HZ+"})])
def test_converges_on_rosenbrock_like_scipy(opt):
    x0 = np.array([-1.2, 1.0, -1.2, 1.0, 0.5, -0.5])
    name, params = split_opt(opt)
    fun = Function(rosen, rosen_der)
    optimizer, trace = drive((name, {**params, "grad_tol": 1e-8}), fun, x0, 5000)
    assert optimizer.params()["terminated"] == "grad_tol"
    ours = trace[-1][3]
    ref = minimize(rosen, x0, jac=rosen_der, method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    np.testing.assert_allclose(ours, np.ones_like(x0), atol=1e-6)


def test_steepest_descent_decreases_rosenbrock_every_step():
    _, trace = drive("sd", Function(rosen, rosen_der), [-1.2, 1.0], 200)
    costs = [rosen(np.array([-1.2, 1.0]))] + [t[4] for t in trace]
    assert np.all(np.diff(costs) <= 0)
    assert costs[-1] < 0.1 * costs[0]


# -- the line search itself ---------------------------------------------------------------------

FUNCTIONS = {
    "rosenbrock": (rosen, rosen_der, np.array([-1.2, 1.0])),
    "quartic": (lambda x: np.sum(x**4) + np.sum(x**2), lambda x: 4 * x**3 + 2 * x,
                np.array([1.5, -0.7, 0.3])),
    "exp-sum": (lambda x: np.sum(np.exp(x)) - np.sum(x) * 2, lambda x: np.exp(x) - 2,
                np.array([2.0, -1.0])),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("c2", [0.1, 0.9])
@pytest.mark.parametrize("alpha0", [1e-3, 1.0, 30.0])
def test_line_search_meets_strong_wolfe_like_scipy(name, c2, alpha0):
    from scipy.optimize import line_search

    f, g, x = FUNCTIONS[name]
    p = -g(x)
    d0 = float(g(x) @ p)

    def phi(a):
        return f(x + a * p), float(g(x + a * p) @ p), None

    res = more_thuente(phi, Point(0.0, f(x), d0), alpha0, c1=1e-4, c2=c2)
    assert res.info == 1 and res.nfev <= 20
    assert res.f <= f(x) + 1e-4 * res.alpha * d0
    assert abs(res.d) <= -c2 * d0
    # scipy's MINPACK-2 search (first trial 1) meets the same conditions; where it accepts its
    # first trial, so does ours from the same start
    ref = line_search(f, g, x, p, c1=1e-4, c2=c2)
    assert ref[0] is not None
    assert ref[3] <= f(x) + 1e-4 * ref[0] * d0 and abs(g(x + ref[0] * p) @ p) <= -c2 * d0
    if alpha0 == 1.0 and ref[0] == 1.0:
        assert res.alpha == 1.0 and res.nfev == 1


def test_line_search_accepts_a_first_trial_that_meets_the_conditions():
    # phi(a) = (a - 1)^2: the first trial a = 1 is the minimiser
    res = more_thuente(lambda a: ((a - 1) ** 2, 2 * (a - 1), None), Point(0.0, 1.0, -2.0), 1.0)
    assert (res.alpha, res.nfev, res.info) == (1.0, 1, 1)


def test_line_search_bisects_away_from_non_finite_values():
    def phi(a):
        if a > 2:
            return math.inf, math.nan, None
        return (a - 1) ** 2, 2 * (a - 1), None

    res = more_thuente(phi, Point(0.0, 1.0, -2.0), 10.0, c2=0.1)
    assert res.info == 1 and math.isfinite(res.f) and res.alpha <= 2


def test_line_search_returns_the_start_for_an_ascent_direction():
    res = more_thuente(lambda a: (a, 1.0, None), Point(0.0, 0.0, 1.0), 1.0)
    assert (res.alpha, res.nfev) == (0.0, 0)


# -- options, convergence tests and bad input ---------------------------------------------------

def test_convergence_options_end_the_run(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=("l-bfgs", {"max_fn": 10}),
                   max_iter=100, ret_extra=True)
    assert res.opt["terminated"] == "max_fn" and res.iter < 100
    assert res.opt["counts"]["fn"] <= 10
    assert list(res.itercosts)[-1] == res.iter  # the final cost is recorded
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=5, opt=("cg", {"abs_tol": 1e-6}),
                   max_iter=500, ret_extra=True)
    assert res.opt["terminated"] in ("abs_tol", "rel_tol") and res.iter < 500


def test_names_and_aliases(iris10, iris10_Y):
    for name in ("L-BFGS", "lbfgs", "l-b", "LBFGS"):
        assert split_opt(name)[0] == "l-bfgs"
    assert split_opt("phess")[0] == "specd"
    assert split_opt("BFGS")[0] == "bfgs"


def test_specd_and_bfgs_keep_descending_on_iris(iris):
    for opt in ("specd", ("bfgs", {"approx_hess": True})):
        res = smallvis(iris[::3], perplexity=10, opt=opt, max_iter=50, Y_init="spca",
                       random_state=1, ret_extra=True)
        costs = list(res.itercosts.values())
        assert costs[-1] < costs[0] and np.all(np.isfinite(res.Y))


@pytest.mark.parametrize("opt, message", [
    (("l-bfgs", {"memroy": 3}), r"unknown parameter.*'memroy'.*optimizer 'l-bfgs'.*memory"),
    (("l-bfgs", {"memory": 0}), r"l-bfgs: memory must be a whole number >= 1"),
    (("cg", {"cg_update": "XX"}), r"unknown cg_update 'XX'"),
    (("sd", {"c2": 1e-5}), r"0 < c1 < c2 < 1"),
    (("bfgs", {"c1": -1}), r"bfgs: c1 must be positive"),
    (("l-bfgs", {"grad_tol": "small"}), r"l-bfgs: grad_tol must be a finite number >= 0"),
    (("l-bfgs", {"approx_hess": "yes"}), r"l-bfgs: approx_hess must be True or False"),
    (("cg", {"ls_max_fn": 0}), r"cg: ls_max_fn must be a whole number >= 1"),
    (("cg", {"ls_max_fn": 2.5}), r"cg: ls_max_fn must be a whole number >= 1"),
    ("lbgfs", r"unknown optimizer 'lbgfs'.*Did you mean 'l-bfgs'"),
])
def test_bad_options(opt, message, iris10):
    with pytest.raises(ValueError, match=message):
        smallvis(iris10, perplexity=5, opt=opt, max_iter=2)


def test_specd_needs_affinities_and_a_connected_graph(iris10):
    with pytest.raises(ValueError, match=r"specd.*needs input affinities.*'mmds'"):
        smallvis(iris10, method="mmds", opt="specd", max_iter=2)
    far = np.vstack([np.random.default_rng(0).normal(size=(6, 3)),
                     np.random.default_rng(1).normal(size=(6, 3)) + 1e3])
    with pytest.raises(ValueError, match=r"not positive definite.*disconnected"):
        smallvis(far, method=("tsne", {"inp_kernel": "knn"}), perplexity=3, opt="specd",
                 max_iter=2, scale=None)
