"""Fixed-step gradient descent: steepest descent, classical momentum, Nesterov momentum and a blend
of the two (``steepd``, ``mom``, ``nag``, ``gmom``; docs/original.md#other-gradient-optimisers).

``nag`` and ``gmom`` take ``mu`` as a number, or as any string (e.g. ``"nesterov"``) for Nesterov's
schedule ``mu_t = 1 - 3 / (5 + t)`` at iteration ``t`` (the original: any non-numeric ``mu``).
"""

from __future__ import annotations

import numpy as np

from ._common import InternalOptimizer, fraction, momentum_or_schedule, nonnegative, positive


class SteepestDescent(InternalOptimizer):
    """``uY = -eta G``."""

    name = "steepd"
    defaults = dict(eta=1.0)
    checks = dict(eta=positive)

    def update(self, G, iteration):
        return -self.eta * G


class Momentum(InternalOptimizer):
    """Classical momentum: ``uY <- -eta G + mu uY`` (``uY`` starts at 0)."""

    name = "mom"
    defaults = dict(eta=1.0, mu=0.9)
    checks = dict(eta=positive, mu=fraction)

    def start(self, Y):
        self.uY = np.zeros_like(Y)

    def update(self, G, iteration):
        self.uY = -self.eta * G + self.mu * self.uY
        return self.uY


class _ScheduledMomentum(InternalOptimizer):
    """Shared by ``nag`` and ``gmom``: ``gd = eta G``; steepest descent (``uY = -gd``) on the first
    step, then ``next_update`` with the previous update and ``gd``."""

    def mu_at(self, iteration: int) -> float:
        return 1 - 3 / (5 + iteration) if isinstance(self.mu, str) else self.mu

    def start(self, Y):
        self.uY = self.gd = None

    def update(self, G, iteration):
        gd = self.eta * G
        uY = -gd if self.gd is None else self.next_update(gd, self.mu_at(iteration))
        self.uY, self.gd = uY, gd
        return uY


class NesterovMomentum(_ScheduledMomentum):
    """Nesterov momentum (in the form of Sutskever et al.):
    ``uY <- mu_t (uY + gd_prev) - (1 + mu_t) gd``."""

    name = "nag"
    defaults = dict(eta=1.0, mu=0.9)
    checks = dict(eta=positive, mu=momentum_or_schedule)

    def next_update(self, gd, mu):
        return mu * (self.uY + self.gd) - (1 + mu) * gd


class GeneralizedMomentum(_ScheduledMomentum):
    """Between classical (``beta = 0``) and Nesterov (``beta = 1``) momentum:
    ``uY <- mu_t uY - gd + beta mu_t (gd_prev - gd)``."""

    name = "gmom"
    defaults = dict(eta=1.0, mu=0.9, beta=0.5)
    checks = dict(eta=positive, mu=momentum_or_schedule, beta=nonnegative)

    def next_update(self, gd, mu):
        uY = mu * self.uY - gd
        if self.beta != 0:
            uY = uY + self.beta * mu * (self.gd - gd)
        return uY
