"""What an optimiser sees: an objective with an exaggeration factor, evaluated through an engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Objective:
    """Cost and gradient of one method on one engine; ``exaggeration`` is set by the driver's schedule."""

    def __init__(self, method, state, engine, frozen: np.ndarray | None = None, apart: bool = False):
        self.method = method
        self.state = state
        self.engine = engine
        self.exaggeration = 1.0
        self.counts = {"fn": 0, "gr": 0}
        # rows that do not move (transform: the reference points); their gradient is zero, so every
        # optimiser (momentum, gains, line searches, L-BFGS) leaves them where they are
        self.frozen = frozen
        # an engine that can evaluate the moving rows alone is told which they are (the others'
        # gradient then comes back zero, and their per-point costs as before); ``apart``: the
        # moving rows are not repelled by one another where the engine serves it (a transform)
        freeze = getattr(engine, "freeze", None)
        moving = None if frozen is None else ~np.asarray(frozen, dtype=bool)
        self.fast = bool(frozen is not None and freeze is not None
                         and (freeze(method, state, moving, apart=True) if apart
                              else freeze(method, state, moving)))

    def _held(self, G: np.ndarray) -> np.ndarray:
        if self.frozen is not None:
            G = G.copy()
            G[self.frozen] = 0.0
        return G

    def gradient(self, Y: np.ndarray) -> np.ndarray:
        self.counts["gr"] += 1
        return self._held(
            self.engine.evaluate(self.method, self.state, Y, self.exaggeration, cost=False)[1])

    def pcost(self, Y: np.ndarray, exaggeration: float | None = None) -> np.ndarray:
        """Per-point costs at ``Y`` (with the current exaggeration unless one is given)."""
        self.counts["fn"] += 1
        f = self.exaggeration if exaggeration is None else exaggeration
        return self.engine.evaluate(self.method, self.state, Y, f, grad=False)[0]

    def epoch_pcost(self, Y: np.ndarray) -> np.ndarray:
        """Per-point costs at ``Y`` with the current exaggeration, not counted as an evaluation of
        the optimiser (a method's epoch hook: dhssne's alpha search)."""
        return self.engine.evaluate(self.method, self.state, Y, self.exaggeration, grad=False)[0]

    def value_and_gradient(self, Y: np.ndarray) -> tuple[float, np.ndarray]:
        """Total cost and gradient at ``Y`` from one evaluation (line searches)."""
        self.counts["fn"] += 1
        self.counts["gr"] += 1
        pcost, G = self.engine.evaluate(self.method, self.state, Y, self.exaggeration)
        return float(np.sum(pcost)), self._held(G)

    def cost(self, Y: np.ndarray) -> float:
        return float(np.sum(self.pcost(Y)))


@dataclass
class StepResult:
    """One optimiser iteration: the new coordinates, the gradient at the old ones, and (line-search
    optimisers) the cost at the new coordinates and whether the optimiser declares convergence."""

    Y: np.ndarray
    G: np.ndarray
    cost: float | None = None
    converged: bool = False
