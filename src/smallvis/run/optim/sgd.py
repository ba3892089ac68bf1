"""The stochastic engine's epochs as an optimiser of the one driver loop (:mod:`smallvis.run.driver`).

Step ``it`` is epoch ``it - 1`` of :class:`smallvis.engines.sgd.Epochs`. The points are recentred only
at the end (the forces depend on differences only), and the cost the driver logs and records is the
engine's sampled estimate: it stops nothing and costs nothing when nobody looks at it.
"""

from __future__ import annotations

from .base import StepResult


class EpochStepper:
    """Runs an engine's epochs (``engine.epochs(...)``) as the driver's optimiser."""

    unit = "Epoch"
    sampled_cost = True
    recentres = False

    def __init__(self, epochs):
        self.epochs = epochs

    def step(self, objective, Y, it) -> StepResult:
        return StepResult(Y=self.epochs.step(Y, it - 1), G=None)

    def note(self) -> str:
        return self.epochs.note()

    def params(self) -> dict:
        return dict(self.epochs.params)
