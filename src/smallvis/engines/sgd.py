"""Engine ``sgd``: the edge-sampling, negative-sampling stochastic gradient descent that LargeVis, UMAP
and NCVis really use (docs/engines.md#negative-sampling-sgd), for every method with a
``stochastic_plan``.

Contract: ``max_iter`` counts epochs (default by size, as umap-learn: 500 up
to 10,000 points, else 200; NCVis 50), ``eta`` is the initial learning rate (default 1; linear decay,
NCVis's quadratic decay), ``opt`` does not apply, exaggeration is an error, and ``itercosts`` holds a
sampled estimate of the cost. Memory is O(n k): the sparse graph, two clocks per edge and the
coordinates.

UMAP-style forces (umap, tumap, largevis): each epoch an edge ``e`` of weight ``w_e`` is due every
``max(w) / w_e`` epochs (edges due less than once in the run are dropped, as umap-learn does); a due
edge pulls its head along ``-log w`` and then draws ``negative_sample_rate`` uniform negatives per
sample, each pushing along ``-gamma log(1 - w)``; gradient coordinates are clipped at 4. The sampled
objective is

.. math:: C = \\sum_e p_e (-\\log w_e) + \\gamma M \\sum_i p_i \\, \\mathrm{mean}_k [-\\log(1 - w_{ik})]

(``p_e`` the normalised edge weights, ``p_i`` their row sums, ``M`` the negative sample rate): the
exact method's cost with its repulsion weighted by ``gamma M p_i / n`` per pair. ``itercosts`` and
``res.costs`` estimate it (the attraction exactly, the repulsion from a fixed sample of partners).

NCVis (``forces="nce"``): every edge once per epoch, ``nu_e`` negatives per edge from the noise plan,
the learned log-normaliser ``Q`` with its own rate, updates clipped at 4 (docs/methods.md#ncvis).

ee and tee (``forces="pairs"``: edge sampling and uniform pair sampling of their own un-normalised
cost) and SGD-MDS (``forces="stress"``: mmds, smmds, sammon): :mod:`.sgd_pairs`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._util.log import logger
from .._util.parallel import fit_threads
from .._util.names import match_name
from .._util.rng import child

AUTO_SGD_N = 10_000  # engine="auto" moves sgd-capable methods to this engine above this many points
# edges per point sampled in an epoch, each with its negatives: whether a run pays for threads
WORK_PER_POINT = 15
N_BLOCKS = 16  # fixed partition of the points: results do not depend on the number of threads


def default_epochs(rule: str, n: int) -> int:
    """Epochs when ``max_iter`` is not given: umap-learn's rule, or NCVis's 50."""
    if rule == "ncvis":
        return 50
    return 500 if n <= 10_000 else 200


def noise_plan(kind: str, mean: int, n_epochs: int) -> np.ndarray:
    """Negatives per positive in each epoch: constant, or NCVis's cubic plan (few early, many late;
    ``mean * n_epochs`` in total before rounding, at least 1 per epoch)."""
    from ..methods.ncvis import NOISE_PLANS

    kind = match_name(kind, NOISE_PLANS, "ncvis noise_plan")
    if kind == "constant" or n_epochs < 2:
        return np.full(n_epochs, int(mean), dtype=np.int64)
    ramp = (np.arange(n_epochs) / (n_epochs - 1)) ** 3
    plan = np.round(ramp * (mean * n_epochs / ramp.sum()))
    return np.maximum(plan, 1).astype(np.int64)


def block_starts(n: int, n_blocks: int = N_BLOCKS) -> np.ndarray:
    """Boundaries of ``n_blocks`` contiguous blocks of points (fewer when n is small)."""
    return np.linspace(0, n, min(n_blocks, n) + 1).round().astype(np.int64)


def _check_option(name, value, *, minimum, whole=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or v < minimum or (whole and v != int(v)):
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"engine 'sgd': option {name!r} must be {kind} >= {minimum:g}; got {value!r}")
    return int(v) if whole else v


@dataclass
class Epochs:
    """The epochs of one run (:meth:`SGDEngine.epochs`): ``step(Y, e)`` returns the coordinates after
    epoch ``e`` (``Y`` is read, not written), ``rate(e)`` its learning rate, ``params`` the settings
    for ``res.opt``, ``note()`` a few words for each epoch's log line. :class:`smallvis.run.optim.sgd.EpochStepper` runs them as
    the driver's optimiser."""

    step: Callable[[np.ndarray, int], np.ndarray]
    params: dict
    nce: dict | None = None
    started: float = field(default_factory=time.perf_counter)
    rate: Callable[[int], float] | None = None  # the learning rate of epoch e

    def note(self) -> str:
        q = f" Q = {self.nce['Q']:.4g}" if self.nce is not None else ""
        return f"{q} ({time.perf_counter() - self.started:.2f} s)"


# why a method with input affinities has no stochastic version (unless it says otherwise)
NORMALISED_Q = ("its Q is normalised over all pairs (or each row), and an unbiased sample of the "
                "gradient needs the normaliser, a sum over all pairs: negative sampling serves "
                "un-normalised costs (ncvis learns its normaliser as a parameter); the sparse-P "
                "engines bh and fft sum all pairs")


class SGDEngine:
    """Negative-sampling SGD (``engine="sgd"`` or ``("sgd", {options})``).

    Options: ``negative_sample_rate`` (5; NCVis uses its own noise plan; SGD-MDS: pairs per point
    per epoch), ``repulsion_strength`` (alias ``gamma``; default: the method's, i.e. umap-learn's 1,
    LargeVis's 7; UMAP-style forces only), ``knn`` (``"auto"``, ``"exact"``, ``"nndescent"`` or
    ``"pynndescent"``: how neighbours are found).
    """

    name = "sgd"
    stochastic = True
    OPTIONS = ("negative_sample_rate", "repulsion_strength", "gamma", "knn")

    def __init__(self, negative_sample_rate=5, repulsion_strength=None, gamma=None, knn="auto"):
        self.negative_sample_rate = _check_option("negative_sample_rate", negative_sample_rate,
                                                  minimum=0, whole=True)
        if repulsion_strength is not None and gamma is not None:
            raise ValueError("engine 'sgd': give repulsion_strength or gamma, not both")
        rep = repulsion_strength if repulsion_strength is not None else gamma
        self.repulsion_strength = None if rep is None else _check_option(
            "repulsion_strength", rep, minimum=0)
        self.knn = match_name(knn, ("auto", "exact", "nndescent", "pynndescent"), "kNN method")

    def check(self, n: int) -> None:
        """Nothing to refuse: memory is O(n k)."""

    def options(self) -> dict:
        return {"negative_sample_rate": self.negative_sample_rate,
                "repulsion_strength": self.repulsion_strength, "knn": self.knn}

    @staticmethod
    def serves(method) -> bool:
        """True when ``method`` has a stochastic version (``Method.stochastic_plan``)."""
        return method.stochastic_plan() is not None

    @staticmethod
    def refusal(method) -> str | None:
        """Why this engine cannot run ``method`` (None: it can): the method's own reason, else
        that its Q is normalised."""
        if SGDEngine.serves(method):
            return None
        return method.unserved_reason("sgd") or NORMALISED_Q

    @staticmethod
    def plan(method):
        plan = method.stochastic_plan()
        if plan is None:
            from ..methods import methods_where

            capable = methods_where(SGDEngine.serves)
            raise ValueError(f"method {method.name!r} has no stochastic version for engine 'sgd': "
                             f"{SGDEngine.refusal(method)}; methods with one: "
                             f"{', '.join(capable)}")
        return plan

    # -- set-up ---------------------------------------------------------------------------------
    def prepare(self, method, data, *, extras=frozenset(), rng):
        """Sparse affinities and the sampling structures. The kNN seed comes from a child stream of
        ``rng``, which is left as it was: a random init draws what it draws on every engine."""
        self._check_options(method, self.plan(method))
        fit_threads(data.n * WORK_PER_POINT * (1 + self.negative_sample_rate))
        state = method.prepare_sparse(data, knn_method=self.knn,
                                      random_state=int(child(rng).integers(2**31 - 1)))
        if self.plan(method).forces in ("pairs", "stress"):
            state.data["input"] = data  # the input distances of sampled pairs, read on the fly
        return state

    def _check_options(self, method, plan) -> None:
        if plan.forces in ("pairs", "stress") and self.repulsion_strength is not None:
            what = "the method's lambda" if plan.forces == "pairs" else "the stress itself"
            raise ValueError(f"engine 'sgd' option repulsion_strength (gamma) applies to the "
                             f"UMAP-style forces (largevis, umap, tumap); method {method.name!r} "
                             f"has its own repulsion weight: {what}")

    def _graph(self, state, plan, n_epochs):
        """CSR arrays of P (pruned for the UMAP forces and ee/tee), normalised edge and row masses."""
        import scipy.sparse as sp

        P = sp.csr_matrix(state.P, dtype=np.float64)
        P.setdiag(0.0)
        P.eliminate_zeros()
        if plan.forces in ("umap", "pairs") and P.nnz:
            pruned = P.data < P.data.max() / n_epochs
            if pruned.any():
                P.data[pruned] = 0.0
                P.eliminate_zeros()
                logger.info("sgd: %d edges with weight below max/%d dropped (never sampled)",
                            int(pruned.sum()), n_epochs)
        P.sort_indices()
        if P.nnz == 0:
            raise ValueError("the affinity graph has no edges: nothing for the SGD to sample")
        edge_p = P.data / P.data.sum()
        # each row's sum; reduceat over the rows with edges only (it fails on trailing empty ones)
        row_p = np.zeros(P.shape[0])
        filled = np.diff(P.indptr) > 0
        row_p[filled] = np.add.reduceat(edge_p, P.indptr[:-1][filled])
        return P, edge_p, row_p

    # -- the optimisation -----------------------------------------------------------------------
    def epochs(self, method, state, *, n_epochs: int, eta: float, rng) -> Epochs:
        """The epochs the driver runs on this engine (``max_iter`` epochs, initial learning rate
        ``eta``), through :class:`smallvis.run.optim.sgd.EpochStepper`. Draws the sampling and cost
        seeds from ``rng``."""
        plan = self.plan(method)
        if plan.forces == "stress":
            from .sgd_pairs import stress_epochs

            step, rate = stress_epochs(plan, state, pairs=self.negative_sample_rate,
                                       blocks=block_starts(state.data["input"].n),
                                       n_epochs=n_epochs, eta=eta, rng=rng)
            return Epochs(step, self.run_params(eta, n_epochs), rate=rate)
        P, edge_p, row_p = self._graph(state, plan, n_epochs)
        n = P.shape[0]
        seed = np.uint64(int(rng.integers(2**63)))
        cost_seed = np.uint64(int(rng.integers(2**63)))
        if plan.forces == "pairs":
            from .sgd_pairs import pair_epochs

            step, rate = pair_epochs(plan, state, P, negatives=self.negative_sample_rate,
                                     blocks=block_starts(n), n_epochs=n_epochs, eta=eta,
                                     seed=seed, cost_seed=cost_seed)
            return Epochs(step, self.run_params(eta, n_epochs), rate=rate)
        repulsion = self._repulsion(plan)
        sgd = state.data.setdefault("sgd", {})
        sgd.update(edge_p=edge_p, row_p=row_p, indptr=P.indptr, indices=P.indices, seed=seed,
                   cost_seed=cost_seed, repulsion=repulsion)
        if plan.forces == "nce":
            rate = lambda e: eta * (1.0 - (e / n_epochs) ** 2)  # noqa: E731
            epoch_step = self._nce_setup(plan, sgd, state, row_p, n, n_epochs, rate)
        else:
            rate = lambda e: eta * (1.0 - e / n_epochs)  # noqa: E731
            epoch_step = self._umap_setup(plan, sgd, P, n_epochs, rate, repulsion)
        logger.info("sgd: %d points, %d edges, %d epochs, learning rate %g, %s", n, P.nnz,
                    n_epochs, eta, self._describe(plan, sgd))
        return Epochs(epoch_step, self.run_params(eta, n_epochs),
                      sgd if plan.forces == "nce" else None, rate=rate)

    def freeze(self, method, state, moving: np.ndarray, apart: bool = False) -> bool:
        """Hold the rows where ``moving`` is False still (a transform): True for the UMAP-style
        forces (umap, tumap, largevis), whose epochs then sample only what moves a moving point
        (:func:`.sgd_kernels.umap_epoch`); False for the others (the driver puts their frozen rows
        back after each epoch). Call before :meth:`epochs`. ``apart`` is ignored: a moving point's
        negative samples are drawn among all points (its edges are those of the graph)."""
        if self.plan(method).forces != "umap":
            return False
        state.data.setdefault("sgd", {})["moving"] = np.ascontiguousarray(moving, dtype=np.bool_)
        return True

    def run_params(self, eta, n_epochs) -> dict:
        """The settings ``res.opt`` reports."""
        return {"name": "sgd", "eta": float(eta), "n_epochs": n_epochs, **self.options()}

    def evaluate(self, method, state, Y, factor=1.0, *, cost=True, grad=True):
        """The engine's evaluation: a sampled estimate of the per-point costs; no gradient (the
        epochs move the points themselves)."""
        if grad:
            raise ValueError("engine 'sgd' has no gradient: its epochs move the points")
        return self.point_costs(method, state, Y), None

    def _repulsion(self, plan) -> float:
        return plan.repulsion if self.repulsion_strength is None else self.repulsion_strength

    def _describe(self, plan, sgd) -> str:
        if plan.forces == "nce":
            o = plan.options
            return (f"NCVis noise plan {o['noise_plan']} (mean {o['noise_ratio']}), alpha_Q "
                    f"{o['alpha_Q']:g}, {'corrected' if o['corrected'] else 'reference'} noise form")
        return (f"{self.negative_sample_rate} negatives per edge sample, repulsion "
                f"{sgd['repulsion']:g}, a = {plan.a:.6g}, b = {plan.b:.6g}")

    def _umap_setup(self, plan, sgd, P, n_epochs, rate, repulsion):
        from . import sgd_kernels as k

        epochs_per_sample = P.data.max() / P.data
        next_sample = epochs_per_sample.copy()
        negatives = self.negative_sample_rate
        epochs_per_negative = epochs_per_sample / negatives if negatives > 0 else np.full_like(
            epochs_per_sample, np.inf)
        next_negative = epochs_per_negative.copy()
        blocks = block_starts(P.shape[0])
        seed = sgd["seed"]
        sgd["negatives"] = negatives
        moving = sgd.get("moving", np.zeros(0, dtype=np.bool_))

        tails = None

        def step(Y, e):
            """Epoch ``e`` from ``Y`` (left as it is): the new coordinates."""
            nonlocal tails
            if tails is None:
                tails = np.zeros((blocks.shape[0] - 1,) + Y.shape)
            lr = rate(e)
            new = Y.copy()
            k.umap_epoch(new, Y, tails, P.indptr, P.indices, epochs_per_sample, next_sample,
                         epochs_per_negative, next_negative, blocks, plan.a, plan.b, repulsion,
                         plan.gr_eps, lr, e, seed, moving)
            k.apply_tails(new, tails)
            return new

        return step

    def _nce_setup(self, plan, sgd, state, row_p, n, n_epochs, rate):
        from . import sgd_kernels as k

        o = plan.options
        nus = noise_plan(o["noise_plan"], o["noise_ratio"], n_epochs)
        if o["corrected"]:
            with np.errstate(divide="ignore"):
                offset = np.where(row_p > 0, np.log(row_p * n), 0.0)
        else:
            offset = np.zeros(n)
        blocks = block_starts(n)
        Q_blocks = np.zeros(blocks.shape[0] - 1)
        indptr, indices = sgd["indptr"], sgd["indices"]
        sgd.update(Q=0.0, offset=offset, noise_plan=nus, negatives=int(o["noise_ratio"]))
        seed = sgd["seed"]

        tails = None

        def step(Y, e):
            """Epoch ``e`` from ``Y`` (left as it is): the new coordinates; the normaliser moves on."""
            nonlocal tails
            if tails is None:
                tails = np.zeros((blocks.shape[0] - 1,) + Y.shape)
            lr = rate(e)
            new = Y.copy()
            k.nce_epoch(new, Y, tails, indptr, indices, blocks, Q_blocks, sgd["Q"], offset,
                        plan.a, plan.b, int(nus[e]), o["alpha_Q"], lr, e, seed)
            k.apply_tails(new, tails)
            sgd["Q"] = float(Q_blocks.mean())
            state.data["logZ"] = sgd["Q"] + math.log(n * (n - 1.0))
            return new

        return step

    # -- costs ----------------------------------------------------------------------------------
    def point_costs(self, method, state, Y) -> np.ndarray:
        """Per-point sampled estimate of the objective the SGD descends (see the module docstring)."""
        from . import sgd_kernels as k

        plan = self.plan(method)
        sgd = state.data["sgd"]
        Y = np.ascontiguousarray(Y, dtype=np.float64)
        if plan.forces in ("pairs", "stress"):
            from .sgd_pairs import pair_costs, stress_costs

            return pair_costs(sgd, Y) if plan.forces == "pairs" else stress_costs(sgd, Y, method.eps)
        n = Y.shape[0]
        m = int(min(100, max(10, 2_000_000 // n)))
        if plan.forces == "nce":
            return k.nce_point_costs(Y, sgd["indptr"], sgd["indices"], sgd["edge_p"],
                                     sgd["row_p"], sgd["Q"], sgd["offset"], plan.a, plan.b,
                                     float(plan.options["noise_ratio"]), sgd["cost_seed"], m)
        weight = sgd["repulsion"] * sgd["negatives"]
        return k.umap_point_costs(Y, sgd["indptr"], sgd["indices"], sgd["edge_p"], sgd["row_p"],
                                  plan.a, plan.b, weight, 1e-9, sgd["cost_seed"], m)
