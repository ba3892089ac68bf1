"""The one optimisation loop: stages, exaggeration, epochs, stopping, callbacks
(docs/original.md#the-optimisation-loop).

Every engine runs through it: the gradient engines with an optimiser from :mod:`.optim`, the
stochastic engine with its epoch stepper (:meth:`smallvis.engines.sgd.SGDEngine.stepper`), which is an
optimiser whose step is one epoch of negative sampling. No method-specific code lives here: methods
adapt through ``on_epoch``, optimisers through ``step``. Exaggeration is a factor set on the objective,
never an edit of P.

What an optimiser may declare (all optional): ``unit`` (``"Iter"``; the stepper's ``"Epoch"``) names
its steps in the log; ``sampled_cost`` (False) says that the objective's cost is a stochastic
estimate: it is then computed only when someone looks (a callback, a record, the log), it never stops
the run, and a rise is not reported; ``recentres`` (True) whether the coordinates are recentred after
every step (always at the end); ``note()`` adds to each epoch's log line; ``counts`` counts
evaluations; ``end_exaggeration(it)`` and ``mom_switch_iter`` follow the exaggeration stage.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._util.log import logger


@dataclass
class Schedule:
    """Iteration counts, exaggeration stages and stopping rules, all resolved to numbers."""

    max_iter: int = 1000
    epoch: int = 100
    min_cost: float = 0.0
    tol: float = 1e-7
    g2tol: float | None = None
    tol_wait: int = 15
    exaggeration_factor: float = 1.0
    stop_lying_iter: int = 100
    late_exaggeration_factor: float = 1.0
    start_late_lying_iter: int = 900
    ee_mon_epoch: int | None = None
    ee_mon_wait: int = 15
    ee_mon_buffer: int = 2
    iter0_cost: bool = False
    record: bool = False
    # rows held in place (transform: the reference); the coordinates are then never recentred
    frozen: np.ndarray | None = None
    # False: no cost is evaluated (a transform nobody watches: no record, log or callback, and no
    # epoch hook); the run then goes to max_iter, stopped only by non-finite coordinates
    costed: bool = True


@dataclass
class RunOutcome:
    Y: np.ndarray
    iter: int
    G2norm: float | None
    itercosts: dict = field(default_factory=dict)
    stop_lying_iter: int = 0
    start_late_lying_iter: int = 0
    stages_used: tuple = ()
    diverged: bool = False  # Y is then the last finite coordinates, from iteration diverged_at - 1
    exploding: bool = False  # coordinates grew beyond EXPLODING (finite, but not a usable picture)
    diverged_at: int | None = None
    # (lowest cost, its iteration, final cost) when the cost of the last stage ended clearly above
    # its lowest value: the step size is too large to settle
    cost_rose: tuple | None = None


# coordinates this large mean the step size is far too big for the method (e.g. t-SNE's eta = 200
# with a Gaussian output kernel); the run goes on, as the original's would, but says so
EXPLODING = 1e12


def reltol(x: float, y: float) -> float:
    return abs(x - y) / min(abs(x), abs(y)) if min(abs(x), abs(y)) > 0 else math.inf


def recentre(Y: np.ndarray) -> np.ndarray:
    return Y - Y.mean(axis=0)


def run(objective, optimizer, Y: np.ndarray, s: Schedule, *,
        callback: Callable | None = None, on_iteration: Callable | None = None) -> RunOutcome:
    """Optimise ``Y`` under schedule ``s``; returns the final (recentred) Y and the bookkeeping.

    Overflow inside a diverging run is not reported number by number: the loop detects non-finite
    coordinates or costs, stops, and flags ``diverged``.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _run(objective, optimizer, Y, s, callback, on_iteration)


def _run(objective, optimizer, Y, s, callback, on_iteration):
    method, state = objective.method, objective.state
    has_p = method.uses_affinities
    stages = (["early"] if s.exaggeration_factor != 1 and has_p else []) + ["opt"] + (
        ["late"] if s.late_exaggeration_factor != 1 and has_p else [])
    stage = 0
    max_iter, epoch, tol = s.max_iter, s.epoch, s.tol
    stop_lying_iter, start_late = s.stop_lying_iter, s.start_late_lying_iter
    saved_epoch, saved_tol = epoch, tol
    if stages[0] == "early":
        objective.exaggeration = s.exaggeration_factor
        if s.ee_mon_epoch is not None:
            epoch, tol, stop_lying_iter = s.ee_mon_epoch, 0.0, max_iter
    else:
        stop_lying_iter = 0
    ee_buffer = s.ee_mon_buffer
    itercosts: dict[int, float] = {}

    unit = getattr(optimizer, "unit", "Iter")
    sampled = getattr(optimizer, "sampled_cost", False)
    recentres = getattr(optimizer, "recentres", True) and s.frozen is None
    held = None if s.frozen is None else Y[s.frozen].copy()
    costed = " cost (sampled)" if sampled else " cost"
    if s.iter0_cost:
        cost0 = float(np.sum(objective.pcost(Y, exaggeration=1.0)))
        logger.info("%s 0%s = %.6g", unit, costed, cost0)
        if s.record:
            itercosts[0] = cost0
    else:
        cost0 = None
    if callback is not None:
        callback(Y, 0, cost0)

    old_cost = rc_prev = None
    G2 = None
    it = 0
    diverged = exploding = False
    diverged_at = None
    finite_Y = Y
    stage_costs: list[tuple[int, float]] = []  # (iteration, cost) of the current stage
    while it < max_iter:
        it += 1
        step = optimizer.step(objective, Y, it)
        Y = step.Y
        if held is not None:  # an epoch of sampling moves both ends of an edge: put them back
            Y[s.frozen] = held
        G2 = None if step.G is None else float(np.sqrt(np.sum(step.G**2)))
        if stages[stage] == "early" and it == stop_lying_iter:
            objective.exaggeration = 1.0
            if hasattr(optimizer, "end_exaggeration"):
                optimizer.end_exaggeration(it)
            stage += 1
            stage_costs = []
            epoch, tol = saved_epoch, saved_tol
            logger.info("Iter %d: early exaggeration off", it)
        if stage < len(stages) - 1 and stages[stage + 1] == "late" and stages[stage] == "opt" \
                and it == start_late:
            objective.exaggeration = s.late_exaggeration_factor
            stage += 1
            stage_costs = []
            logger.info("Iter %d: late exaggeration on (x%g)", it, s.late_exaggeration_factor)
        if step.converged:
            max_iter = it
            logger.info("Iter %d: the optimiser reports convergence (%s)", it,
                        getattr(optimizer, "terminated", None) or "converged")
        if recentres:
            Y = recentre(Y)
        if on_iteration is not None:
            on_iteration(it)
        if not np.all(np.isfinite(Y)):
            diverged, diverged_at, Y = True, it, finite_Y
            logger.info("%s %d: the embedding diverged (non-finite coordinates)", unit, it)
            break
        finite_Y = Y
        if it % epoch != 0 and it != max_iter:
            continue

        if not exploding and np.abs(Y).max() > EXPLODING:
            exploding = True
            logger.info("%s %d: coordinates exceed %.0e", unit, it, EXPLODING)
        if sampled and not (s.record or callback is not None or logger.isEnabledFor(logging.INFO)):
            continue  # nobody looks at the estimate, and it stops nothing: do not spend time on it
        if not s.costed:
            continue
        cost = step.cost if step.cost is not None else float(np.sum(objective.pcost(Y)))
        tolval = reltol(cost, old_cost) / epoch if old_cost is not None and not sampled else None
        counts = getattr(optimizer, "counts", None)  # line-search optimisers count evaluations
        note = optimizer.note() if hasattr(optimizer, "note") else ""
        logger.info("%s %d%s = %.6g%s%s%s%s", unit, it, costed, cost,
                    "" if tolval is None else f" tol = {tolval:.4g}",
                    "" if G2 is None else f" ||G||2 = {G2:.4g}",
                    f" nf = {counts['fn']} ng = {counts['gr']}" if counts else "", note)
        if callback is not None:
            callback(Y, it, cost)
        if s.record:
            itercosts[it] = cost
        if not math.isfinite(cost):
            diverged, diverged_at = True, it
            logger.info("%s %d: the cost is not finite; the optimisation diverged", unit, it)
            break
        if sampled:  # an estimate: it neither stops the run nor adapts a method
            continue
        stage_costs.append((it, cost))

        stop = cost < s.min_cost
        past_wait = it > stop_lying_iter + s.tol_wait or stages[stage] != "opt"
        if tolval is not None and tolval < tol and cost <= old_cost and past_wait:
            stop = True
        if s.g2tol is not None and G2 < s.g2tol and past_wait:
            stop = True
        if s.ee_mon_epoch is not None and old_cost is not None:
            rc = (old_cost - cost) / old_cost
            if stages[stage] == "early" and it > s.ee_mon_wait and rc_prev is not None and rc < rc_prev:
                if ee_buffer < 1:
                    stop = True
                    logger.info("Iter %d: early-exaggeration monitor ends exaggeration", it)
                else:
                    ee_buffer -= 1
            rc_prev = rc
        if stop:
            if stage == len(stages) - 1:
                logger.info("Iter %d: stopping early", it)
                break
            if stages[stage] == "early":
                gap = getattr(optimizer, "mom_switch_iter", stop_lying_iter) - stop_lying_iter
                stop_lying_iter = it + 1
                if hasattr(optimizer, "mom_switch_iter"):
                    optimizer.mom_switch_iter = stop_lying_iter + gap
            elif stages[stage + 1] == "late":
                length = max_iter - start_late
                start_late = it + 1
                max_iter = start_late + length
        old_cost = cost
        method.on_epoch(Y, state, it, cost, exaggeration=objective.exaggeration,
                        pcost=getattr(objective, "epoch_pcost", None))

    objective.exaggeration = 1.0
    return RunOutcome(Y=Y if s.frozen is not None else recentre(Y), iter=it, G2norm=G2, itercosts=itercosts,
                      stop_lying_iter=stop_lying_iter, start_late_lying_iter=start_late,
                      stages_used=tuple(stages[: stage + 1]), diverged=diverged,
                      exploding=exploding, diverged_at=diverged_at,
                      cost_rose=None if diverged or stages[stage] != "opt" else
                      cost_rise(stage_costs))


# the final cost of a stage this far above the stage's lowest (relative to its size) is not noise
COST_RISE = 0.05
MIN_SPAN = 100  # iterations: a shorter stage is still finding its way


def cost_rise(costs: list[tuple[int, float]]) -> tuple | None:
    """``(lowest, its iteration, final)`` when the final cost of the last stage lies more than 5 % of
    the lowest's magnitude above the lowest cost of the stage's second half, else None. A settling run
    descends there (t-SNE's cost may climb early on, while clusters form); a step size that is too
    large makes it climb back or oscillate."""
    if len(costs) < 6 or costs[-1][0] - costs[0][0] < MIN_SPAN:
        return None
    late = costs[len(costs) // 2:]
    best_it, best = min(late, key=lambda c: c[1])
    final = late[-1][1]
    if final - best > COST_RISE * abs(best) and final - best > 1e-12:
        return best, best_it, final
    return None
