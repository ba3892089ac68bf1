"""The sgd engine's un-normalised pair costs (ee, tee) and SGD-MDS (mmds, smmds, sammon): their set-up
and sampled cost estimates (docs/engines.md#negative-sampling-sgd; kernels in
:mod:`.sgd_pair_kernels`).

Pair costs (``forces="pairs"``). The cost is the exact method's, with P its sparse (kNN-restricted)
version:

.. math:: C = \\sum_{e} P_e A(d^2_e) + \\sum_{i \\ne j} c_{ij} B(d^2_{ij})

ee: ``A = d2``, ``B = exp(-d2)``, ``c_ij = lambda R_ij / sum R`` (``neg_weights``; ``R`` the input
distances) or ``lambda``; tee: ``A = log(1 + d2)``, ``B = 1 / (1 + d2)``, ``c = lambda / N`` (plus its
constant). Edges are due as in umap-learn, every ``max(P) / P_e`` epochs (edges due less than once in
the run dropped), and pull both ends by ``-lr grad A``; each point draws ``nu = M sum_e(P_e / max P) / n``
uniform partners per epoch (``M`` the negative sample rate: M partners per edge sample on average),
each pair pushing both ends by ``-lr s grad(c B)`` with ``s = (n - 1) / (nu max P)``. In expectation an
epoch moves the points by ``-(lr / max P) grad C`` (before the clip at 4 of each gradient coordinate):
no per-pair reweighting, so ``itercosts`` estimate the method's own cost.

SGD-MDS (``forces="stress"``). Each epoch every point draws ``M`` partners uniformly and moves by
``mu (D - R)`` along its difference with each (the partner stays), ``mu = min(1, eta_e w)``, with
``w`` the pair's stress weight relative to metric MDS (mmds 1, sammon ``Rbar / R``, smmds
``D (D + R) / (2 Rbar^2)``, ``Rbar`` the mean input distance) and ``eta_e`` decaying exponentially
from ``eta`` to ``eta / 100``. Below the cap a step is ``eta_e / 2`` (mmds) times the pair's stress
gradient, so an epoch moves the points by ``-(eta_e M / (4 (n - 1))) grad C`` in expectation; at the
cap it makes the pair's output distance its input distance (after Zheng, Pawar & Goodman 2019,
"Graph drawing by stochastic gradient descent", who move both ends by half). Memory O(n): the input
distance of each sampled pair is computed from the input rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._util.log import logger

EXACT_MEAN_N = 4096  # the mean input distance is exact up to this many points, else sampled
MEAN_PARTNERS = 256  # partners per point for the sampled mean
STRESS_ETA_END = 0.01  # SGD-MDS's last step size relative to its first
PAIR_KINDS = {"ee": 0, "tee": 1}
STRESS_KINDS = {"mmds": 0, "sammon": 1, "smmds": 2}


@dataclass(frozen=True)
class InputRows:
    """What the sampled pairs' input distances are computed from: the rows ``X`` as
    :func:`smallvis.io.metric_kernels.pair_distance` reads them, the metric's ``code``
    (``SOURCE_PRECOMPUTED``: ``X`` is the distance matrix) and minkowski's ``p``."""

    X: np.ndarray
    code: int
    p: float = 2.0

    @property
    def precomputed(self) -> bool:
        from ..io.metric_kernels import SOURCE_PRECOMPUTED

        return self.code == SOURCE_PRECOMPUTED

    @property
    def args(self) -> tuple:
        return self.X, np.int64(self.code), float(self.p)


NO_ROWS = InputRows(np.zeros((1, 1)), 0)


def input_rows(state) -> InputRows:
    """The input the sampled pairs' distances come from, under the run's metric (sparse rows and
    callable metrics are refused with the reason: the kernels read dense rows by metric code)."""
    from ..io.metric import kernel_rows
    from ..io.metric_kernels import SOURCE_PRECOMPUTED

    data = state.data["input"]
    if data.precomputed:
        return InputRows(np.ascontiguousarray(data.X, dtype=np.float64), SOURCE_PRECOMPUTED)
    try:
        return InputRows(*kernel_rows(data.metric, data.X))
    except ValueError as err:
        raise ValueError(f"the sgd engine computes the input distances of sampled pairs on the "
                         f"fly: {err}; or use engine='exact'") from None


def mean_input_distance(rows: InputRows, seed) -> float:
    """Mean input distance over ordered pairs: exact up to ``EXACT_MEAN_N`` points (a read of the
    matrix when it is precomputed), else from ``MEAN_PARTNERS`` uniform partners per point
    (relative error about 1e-3 or less)."""
    from . import sgd_pair_kernels as k

    n = rows.X.shape[0]
    if rows.precomputed:
        return float(rows.X.sum() / (n * (n - 1.0)))
    m = 0 if n <= EXACT_MEAN_N else MEAN_PARTNERS
    return float(k.distance_row_means(*rows.args, m, np.uint64(seed)).mean())


def _cost_partners(n: int) -> int:
    return int(min(100, max(10, 2_000_000 // n)))


def pair_epochs(plan, state, P, *, negatives, blocks, n_epochs, eta, seed, cost_seed):
    """``(step, rate)`` of an un-normalised pair cost (ee, tee) on the graph ``P`` (CSR, pruned):
    ``step(Y, e)`` the coordinates after epoch ``e``, ``rate(e)`` its learning rate. ``negatives``:
    the negative sample rate; ``blocks``: the fixed partition of the points."""
    from . import sgd_kernels as base
    from . import sgd_pair_kernels as k

    n = P.shape[0]
    o = plan.options
    kind = PAIR_KINDS[o["kind"]]
    weights = P.data.copy()
    top = weights.max()
    epochs_per_sample = top / weights
    next_sample = epochs_per_sample.copy()
    neg_rate = negatives * float(np.sum(weights / top)) / n  # partners per point per epoch
    c = float(o["lambda"])
    if o.get("norm"):
        c /= float(state.data[o["norm"]])
    rows = NO_ROWS
    weighted = bool(o.get("weights"))
    if weighted:
        rows = input_rows(state)
        rbar = mean_input_distance(rows, cost_seed ^ np.uint64(1))
        c /= n * (n - 1.0) * rbar  # c_ij = lambda R_ij / sum R
    scale = (n - 1.0) / (neg_rate * top) if neg_rate > 0 else 0.0
    sgd = state.data.setdefault("sgd", {})
    sgd.update(indptr=P.indptr, indices=P.indices, edge_w=weights, kind=kind, rep_c=c,
               rep_scale=scale * c, neg_rate=neg_rate, weighted=weighted, rows=rows, seed=seed, cost_seed=cost_seed, max_weight=top,
               const=state.data.get("const") if o["kind"] == "tee" else None)
    tails = None

    def rate(e):
        return eta * (1.0 - e / n_epochs)

    def step(Y, e):
        nonlocal tails
        if tails is None:
            tails = np.zeros((blocks.shape[0] - 1,) + Y.shape)
        new = Y.copy()
        k.pair_epoch(new, Y, tails, P.indptr, P.indices, epochs_per_sample, next_sample, blocks,
                     kind, neg_rate, scale * c, weighted, *rows.args, base.CLIP, rate(e), e,
                     seed)
        base.apply_tails(new, tails)
        return new

    logger.info("sgd: %d points, %d edges, %d epochs, learning rate %g, %s: %.3g partners per point "
                "per epoch, repulsion weight %.4g%s", n, P.nnz, n_epochs, eta, o["kind"], neg_rate,
                c, " x input distance" if weighted else "")
    return step, rate


def pair_costs(sgd, Y) -> np.ndarray:
    """Per-point estimate of the pair cost (the attraction exact over the edges, tee's constant
    added)."""
    from . import sgd_pair_kernels as k

    costs = k.pair_point_costs(Y, sgd["indptr"], sgd["indices"], sgd["edge_w"], sgd["kind"],
                               sgd["rep_c"], sgd["weighted"], *sgd["rows"].args,
                               sgd["cost_seed"], _cost_partners(Y.shape[0]))
    return costs if sgd["const"] is None else costs + sgd["const"]


def stress_epochs(plan, state, *, pairs, blocks, n_epochs, eta, rng):
    """``(step, rate)`` of SGD-MDS (mmds, smmds, sammon), as :func:`pair_epochs`; ``pairs``: the
    partners each point draws per epoch. Draws the sampling and cost seeds from ``rng``."""
    from . import sgd_pair_kernels as k

    rows = input_rows(state)
    n = rows.X.shape[0]
    seed = np.uint64(int(rng.integers(2**63)))
    cost_seed = np.uint64(int(rng.integers(2**63)))
    kind = STRESS_KINDS[plan.options["kind"]]
    rbar = mean_input_distance(rows, cost_seed ^ np.uint64(1))
    m = pairs
    sgd = state.data.setdefault("sgd", {})
    sgd.update(kind=kind, rows=rows, rscale=rbar, pairs=m, seed=seed,
               cost_seed=cost_seed, norm=n * (n - 1.0) * rbar if kind == 1 else 1.0)
    decay = np.log(STRESS_ETA_END) / max(1, n_epochs - 1)

    def rate(e):
        return eta * float(np.exp(decay * e))

    def step(Y, e):
        new = Y.copy()
        k.stress_epoch(new, Y, blocks, kind, m, *rows.args, rbar, rate(e), e, seed)
        return new

    logger.info("sgd: SGD-MDS (%s), %d points, %d epochs, %d pairs per point per epoch, step %g "
                "decaying to %g, mean input distance %.4g", plan.options["kind"], n, n_epochs, m,
                eta, eta * STRESS_ETA_END, rbar)
    return step, rate


def stress_costs(sgd, Y, eps) -> np.ndarray:
    """Per-point estimate of the stress (sammon's divided by ``sum R``, itself estimated above
    ``EXACT_MEAN_N`` points)."""
    from . import sgd_pair_kernels as k

    costs = k.stress_point_costs(Y, sgd["kind"], *sgd["rows"].args, eps,
                                 sgd["cost_seed"], _cost_partners(Y.shape[0]))
    return costs / sgd["norm"]
