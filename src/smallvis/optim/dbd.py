"""Delta-bar-delta with momentum: the classic t-SNE optimiser (spec smallvis-R.md §7, ``dbd``).

Per element, with ``uY`` the previous update (momentum included):

- gains grow by 0.2 where the gradient sign differs from the previous update's sign, else shrink by x0.8,
  and never fall below ``min_gain``;
- ``uY <- mu uY - eta * gain * G``;
- ``mu`` is ``momentum`` up to and including iteration ``mom_switch_iter`` and ``final_momentum`` after.
"""

from __future__ import annotations

import numpy as np

from .base import StepResult


class DeltaBarDelta:
    name = "dbd"
    defaults = dict(eta=500.0, momentum=0.5, final_momentum=0.8, mom_switch_iter=250, min_gain=0.01)

    def __init__(self, eta, momentum, final_momentum, mom_switch_iter, min_gain):
        self.eta = float(eta)
        self.momentum = float(momentum)
        self.final_momentum = float(final_momentum)
        self.mom_switch_iter = int(mom_switch_iter)
        self.min_gain = float(min_gain)
        if not self.eta > 0:
            raise ValueError(f"eta (learning rate) must be positive; got {eta}")
        if self.min_gain < 0:
            raise ValueError(f"min_gain must be >= 0; got {min_gain}")
        self.mu = self.momentum
        self.update = None
        self.gain = None

    def params(self) -> dict:
        return dict(name=self.name, eta=self.eta, momentum=self.momentum,
                    final_momentum=self.final_momentum, mom_switch_iter=self.mom_switch_iter,
                    min_gain=self.min_gain)

    def step(self, objective, Y: np.ndarray, iteration: int) -> StepResult:
        G = objective.gradient(Y)
        if self.update is None:
            self.update = np.zeros_like(Y)
            self.gain = np.ones_like(Y)
        flip = np.sign(G) != np.sign(self.update)
        self.gain = np.where(flip, self.gain + 0.2, self.gain * 0.8)
        np.maximum(self.gain, self.min_gain, out=self.gain)
        self.update = self.mu * self.update - self.eta * self.gain * G
        if iteration == self.mom_switch_iter:
            self.mu = self.final_momentum
        return StepResult(Y=Y + self.update, G=G)
