"""What the sgd engine must show for every method it claims (parametrised from the catalog): its
sampled objective decreases over a run, and the expected update of an epoch is the gradient field
the docs say it is (docs/engines.md#negative-sampling-sgd).

The expected update is measured by running many epochs from the same coordinates at a tiny learning
rate (``Epochs.rate``): each epoch's displacement divided by its rate is one sample of the update
direction (to first order in the rate; no clipping at the layouts chosen here). The mean over ``S``
epochs is compared coordinate by coordinate with the reference field, within 5 standard errors
measured from the same samples, and the test has power: the standard error is below 5 % of the
field's norm, so a wrong weight on the attraction or the repulsion (a factor 2, a missing n) fails.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from smallvis import smallvis
from smallvis.engines import DenseEngine
from smallvis.engines.sgd import SGDEngine
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import claimed

N = 30
EPOCHS = 4000
ETA = 1e-8
# method parameters that keep every sampled step below the clip at 4 on these layouts while both
# attraction and repulsion matter (ee's default lambda = 100 would clip its repulsion)
PARAMS = {"ee": {"lambda": 1.0}, "tee": {"lambda": 0.5},
          "ncvis": {"noise_plan": "constant", "alpha_Q": 1e-12}}
SPACING = {"largevis": 2.5, "ee": 0.3}  # grid spacing of the layout (default 1)


# -- (a) the sampled objective decreases over a run ---------------------------------------------------

@pytest.fixture(scope="module")
def blobs():
    return make_blobs(n_samples=300, n_features=10, centers=4, cluster_std=1.0, random_state=3)


@pytest.mark.parametrize("method", claimed("sgd"))
def test_sampled_objective_decreases_over_a_run(blobs, method):
    X, _ = blobs
    res = smallvis(X, method=method, engine="sgd", perplexity=15, random_state=42, max_iter=100,
                   epoch=10, iter0_cost=True, ret_extra=True)
    costs = [res.itercosts[e] for e in sorted(res.itercosts)]
    assert sorted(res.itercosts) == list(range(0, 101, 10))
    assert costs[-1] < costs[0], costs
    assert np.all(np.isfinite(res.costs)) and res.cost == pytest.approx(costs[-1])


# -- (b) the expected update is the documented gradient field ------------------------------------------

def _layout(spacing, seed=0):
    """30 points on a jittered 6 x 5 grid: no two closer than 0.6 spacing."""
    rng = np.random.default_rng(seed)
    grid = np.array([(i, j) for i in range(6) for j in range(5)], dtype=float)
    return spacing * (grid + rng.uniform(-0.2, 0.2, grid.shape))


def _sampled_updates(name):
    """The method, its sgd state, the start and the epochs' displacements per unit rate (S, n, 2)."""
    X, _ = make_blobs(n_samples=N, n_features=5, centers=3, cluster_std=2.0, random_state=1)
    method = build_method((name, PARAMS.get(name, {})), perplexity=5)
    engine = SGDEngine()
    rng = np.random.default_rng(0)
    data = InputData(X)
    state = engine.prepare(method, data, rng=rng)
    # so many epochs that no edge is pruned and the rate barely decays
    epochs = engine.epochs(method, state, n_epochs=10**6, eta=ETA, rng=rng)
    Y0 = _layout(SPACING.get(name, 1.0))
    if engine.plan(method).forces == "stress":  # at the input distances' scale
        Y0 = Y0 * (state.data["sgd"]["rscale"] / 2.0)
    steps = np.array([(epochs.step(Y0, e) - Y0) / epochs.rate(e) for e in range(EPOCHS)])
    return method, state, data, Y0, steps


def _differences(Y):
    diff = Y[:, None, :] - Y[None, :, :]
    return diff, np.sum(diff**2, axis=-1)


def _umap_field(method, state, Y):
    """UMAP-style forces: edge ``e`` is due ``r_e = p_e / max p`` times an epoch and pulls both ends
    along ``-grad(-log w)``; its ``M`` negatives per sample push the head along
    ``-grad(-gamma log(1 - w))`` softened by ``gr_eps``, i.e. pair ``(i, k)`` with weight
    ``M r_i / (n - 1)``, ``r_i`` the row sums of ``r``."""
    plan, sgd = SGDEngine.plan(method), state.data["sgd"]
    a, b, gamma, M = plan.a, plan.b, sgd["repulsion"], sgd["negatives"]
    n = Y.shape[0]
    r = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(sgd["indptr"]))
    r[rows, sgd["indices"]] = sgd["edge_p"] / sgd["edge_p"].max()
    diff, d2 = _differences(Y)
    np.fill_diagonal(d2, 1.0)
    d2b = d2**b
    attract = -2.0 * a * b * (d2b / d2) / (1.0 + a * d2b) * (r + r.T)
    repel = 2.0 * gamma * b / ((plan.gr_eps + d2) * (1.0 + a * d2b)) * (M * r.sum(axis=1)[:, None]
                                                                        / (n - 1))
    K = attract + repel
    np.fill_diagonal(K, 0.0)
    return np.einsum("ij,ijd->id", K, diff)


def _nce_field(method, state, Y):
    """NCVis: every edge once an epoch (both ends move, each with its head's offset), ``nu``
    negatives per edge from the head's row, both ends moving."""
    plan, sgd = SGDEngine.plan(method), state.data["sgd"]
    a, b, nu, off = plan.a, plan.b, plan.options["noise_ratio"], sgd["offset"] + sgd["Q"]
    n = Y.shape[0]
    A = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(sgd["indptr"]))
    A[rows, sgd["indices"]] = 1.0
    diff, d2 = _differences(Y)
    np.fill_diagonal(d2, 1.0)
    d2b = d2**b
    q = 1.0 / (1.0 + a * d2b)
    wp = q / (nu * np.exp(off))[:, None]  # head i's noise ratio in row i
    base = 2.0 * q * a * b * d2b / d2  # times w, the sample's weight
    pos = base / (1.0 + wp)
    neg = -base * wp / (1.0 + wp) * (nu * A.sum(axis=1) / (n - 1))[:, None]
    K = A * pos + (A * pos).T + neg + neg.T  # head i's move, then its partner's
    np.fill_diagonal(K, 0.0)
    return -np.einsum("ij,ijd->id", K, diff)  # towards the partner: y_j - y_i


def _exact_gradient(method, state, data, Y):
    """The dense engine's gradient of the method, on the sgd engine's P (ee, tee) or input
    distances (the stress methods)."""
    dense = method.prepare(data)
    if state.P is not None:
        P = state.P.toarray()
        dense.P = P
        if "V" in dense.data:  # tee reads V = N P
            dense.data["V"] = P * state.data["N"]
    return DenseEngine().evaluate(method, dense, Y, cost=False)[1]


def _expected(method, state, data, Y):
    """The documented expected update per unit learning rate."""
    plan, sgd = SGDEngine.plan(method), state.data["sgd"]
    if plan.forces == "umap":
        return _umap_field(method, state, Y)
    if plan.forces == "nce":
        return _nce_field(method, state, Y)
    G = _exact_gradient(method, state, data, Y)
    if plan.forces == "pairs":  # -(1 / max P) grad C
        return -G / sgd["max_weight"]
    n, m, rbar = Y.shape[0], sgd["pairs"], sgd["rscale"]
    factor = {"mmds": m / (4 * (n - 1)), "sammon": m * n * rbar**2 / 4,
              "smmds": m / (16 * rbar**2 * (n - 1))}[plan.options["kind"]]
    return -factor * G


@pytest.mark.parametrize("name", claimed("sgd"))
def test_expected_update_is_the_gradient_of_the_sampled_objective(name):
    method, state, data, Y0, steps = _sampled_updates(name)
    mean = steps.mean(axis=0)
    se = steps.std(axis=0, ddof=1) / np.sqrt(EPOCHS)
    expected = _expected(method, state, data, Y0)
    scale = np.linalg.norm(expected)
    assert np.linalg.norm(se) < 0.05 * scale, "too few epochs to tell"
    z = (mean - expected) / np.maximum(se, 1e-6 * scale)
    assert np.abs(z).max() < 5.0, (name, np.abs(z).max(), np.linalg.norm(mean - expected) / scale)
