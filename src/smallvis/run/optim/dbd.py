"""Delta-bar-delta with momentum: the classic t-SNE optimiser, and its Nesterov variant
(``dbd`` and ``ndbd``; docs/original.md#delta-bar-delta).

Per element, with ``uY`` the previous update (momentum included):

- gains grow by 0.2 where the gradient sign differs from the previous update's sign, else shrink by x0.8,
  and never fall below ``min_gain``;
- ``uY <- mu uY - eta * gain * G`` (``ndbd`` adds a Nesterov correction, see its docstring);
- ``mu`` is ``momentum`` up to and including iteration ``mom_switch_iter`` and ``final_momentum`` after.
  The driver may move ``mom_switch_iter`` (when opt-SNE monitoring ends exaggeration early).
- ``reset_gains=True`` (not in the original; scikit-learn's and openTSNE's behaviour): when early
  exaggeration ends, the update is zeroed and the gains set back to 1, so the second stage starts fresh
  instead of carrying the first stage's momentum and gains into the un-exaggerated cost. Without it
  t-SNE with exaggeration 12 on scikit-learn's trustworthiness test ends at KL 0.2-0.4 instead of 0.035.
"""

from __future__ import annotations

import numpy as np

from ._common import InternalOptimizer, flag, fraction, nonnegative, positive, whole

_DBD_CHECKS = dict(eta=positive, momentum=fraction, final_momentum=fraction,
                   mom_switch_iter=whole, min_gain=nonnegative, reset_gains=flag)


def update_gains(gain: np.ndarray, G: np.ndarray, uY: np.ndarray, min_gain: float) -> np.ndarray:
    """The delta-bar-delta rule: +0.2 where sign(G) != sign(uY) (so wherever G != 0 while uY is still
    zero), x0.8 elsewhere, floored at ``min_gain``."""
    flip = np.sign(G) != np.sign(uY)
    gain = np.where(flip, gain + 0.2, gain * 0.8)
    return np.maximum(gain, min_gain, out=gain)


class DeltaBarDelta(InternalOptimizer):
    """``uY <- mu uY - eta * gain * G`` with delta-bar-delta gains."""

    name = "dbd"
    defaults = dict(eta=500.0, momentum=0.5, final_momentum=0.8, mom_switch_iter=250, min_gain=0.01,
                    reset_gains=False)
    checks = _DBD_CHECKS

    def __init__(self, **params):
        super().__init__(**params)
        self.mu = self.momentum

    def start(self, Y):
        self.uY = np.zeros_like(Y)
        self.gain = np.ones_like(Y)

    def end_exaggeration(self, iteration: int) -> None:
        """Called by the driver after the last exaggerated iteration: with ``reset_gains``, start the
        next stage from a zero update and unit gains."""
        if self.reset_gains and self._started:
            self.start(self.uY)

    def switch_momentum(self, iteration: int) -> None:
        if iteration == self.mom_switch_iter:
            self.mu = self.final_momentum

    def update(self, G, iteration):
        self.gain = update_gains(self.gain, G, self.uY, self.min_gain)
        self.uY = self.mu * self.uY - self.eta * self.gain * G
        self.switch_momentum(iteration)
        return self.uY


class NesterovDeltaBarDelta(DeltaBarDelta):
    """Delta-bar-delta with Nesterov-style momentum. With ``gd = eta * gain * G`` (``G`` first divided
    by its 2-norm if ``scale_grad``), ``uY = -gd`` on the first iteration, then
    ``uY <- mu uY - gd + beta * mu * (gd_prev - gd)`` (``beta = 0``: classical momentum)."""

    name = "ndbd"
    defaults = dict(DeltaBarDelta.defaults, beta=1.0, scale_grad=False)
    checks = dict(_DBD_CHECKS, beta=nonnegative, scale_grad=flag)

    def start(self, Y):
        super().start(Y)
        self.gd = None

    def update(self, G, iteration):
        if self.scale_grad:
            norm = np.sqrt(np.sum(G * G))
            # a zero gradient is left as it is (the original divides 0 by 0)
            if norm > 0:
                G = G / norm
        self.gain = update_gains(self.gain, G, self.uY, self.min_gain)
        gd = self.eta * self.gain * G
        if self.gd is None:
            uY = -gd
        else:
            uY = self.mu * self.uY - gd
            if self.beta != 0:
                uY = uY + self.beta * self.mu * (self.gd - gd)
        self.uY, self.gd = uY, gd
        self.switch_momentum(iteration)
        return uY
