"""Per-element adaptive step sizes: AdaGrad, AdaDelta, RMSprop and the Adam family
(docs/original.md#other-gradient-optimisers). The arithmetic follows the original's expressions term
by term, including its bias corrections (running products ``beta^t``) and AdaMax's per-point
normaliser.

All state starts at zero on the first step; ``t`` below is the step number, from 1.
"""

from __future__ import annotations

import numpy as np

from ._common import InternalOptimizer, fraction, nonnegative, positive


class AdaGrad(InternalOptimizer):
    """``H <- H + G^2``; ``uY = -eta G / sqrt(H + eps)``."""

    name = "adagrad"
    defaults = dict(eta=0.01, eps=1e-8)
    checks = dict(eta=positive, eps=nonnegative)

    def start(self, Y):
        self.H = np.zeros_like(Y)

    def update(self, G, iteration):
        self.H = self.H + G * G
        return -(self.eta * G) / np.sqrt(self.H + self.eps)


class AdaDelta(InternalOptimizer):
    """``Eg <- rho Eg + (1 - rho) G^2``; ``uY = -G sqrt((Eu + eps) / (Eg + eps))`` with the previous
    ``Eu``; then ``Eu <- rho Eu + (1 - rho) uY^2``. No learning rate."""

    name = "adadelta"
    defaults = dict(rho=0.95, eps=1e-6)
    checks = dict(rho=fraction, eps=nonnegative)

    def start(self, Y):
        self.Eg = np.zeros_like(Y)
        self.Eu = np.zeros_like(Y)

    def update(self, G, iteration):
        rho = self.rho
        self.Eg = rho * self.Eg + (1 - rho) * G * G
        uY = -G * np.sqrt((self.Eu + self.eps) / (self.Eg + self.eps))
        self.Eu = rho * self.Eu + (1 - rho) * uY * uY
        return uY


class RMSprop(InternalOptimizer):
    """``Eg <- rho Eg + (1 - rho) G^2``; ``uY = -eta G / sqrt(Eg + eps)``."""

    name = "rmsprop"
    defaults = dict(eta=0.001, rho=0.9, eps=1e-6)
    checks = dict(eta=positive, rho=fraction, eps=nonnegative)

    def start(self, Y):
        self.Eg = np.zeros_like(Y)

    def update(self, G, iteration):
        self.Eg = self.rho * self.Eg + (1 - self.rho) * G * G
        return -G * self.eta / np.sqrt(self.Eg + self.eps)


class _AdamFamily(InternalOptimizer):
    """First and second moments ``m <- b1 m + (1 - b1) G``, ``v <- b2 v + (1 - b2) G^2``, with the
    running powers ``b1t = beta1^t``, ``b2t = beta2^t`` kept as products (as the original)."""

    defaults = dict(eta=0.002, beta1=0.9, beta2=0.999, eps=1e-8)
    checks = dict(eta=positive, beta1=fraction, beta2=fraction, eps=nonnegative)

    def start(self, Y):
        self.m = np.zeros_like(Y)
        self.v = np.zeros_like(Y)
        self.b1t, self.b2t = self.beta1, self.beta2

    def moments(self, G):
        self.m = self.beta1 * self.m + (1 - self.beta1) * G
        self.v = self.beta2 * self.v + (1 - self.beta2) * G * G

    def advance(self):
        self.b1t *= self.beta1
        self.b2t *= self.beta2


class Adam(_AdamFamily):
    """``uY = -eta m bc / (sqrt(v) + eps)`` with ``bc = sqrt(1 - beta2^t) / (1 - beta1^t)`` (the
    paper's section 2 form: eps is not bias-corrected)."""

    name = "adam"

    def denominator(self):
        return self.v

    def update(self, G, iteration):
        bc = np.sqrt(1 - self.b2t) / (1 - self.b1t)
        self.moments(G)
        uY = -self.eta * (self.m * bc / (np.sqrt(self.denominator()) + self.eps))
        self.advance()
        return uY


class AMSGrad(Adam):
    """As Adam, with the running maximum ``vhat <- max(vhat, v)`` in place of ``v``."""

    name = "amsgrad"

    def start(self, Y):
        super().start(Y)
        self.vhat = np.zeros_like(Y)

    def denominator(self):
        self.vhat = np.maximum(self.vhat, self.v)
        return self.vhat


class AdaMax(_AdamFamily):
    """``u_i <- max(beta2 u_i, max_d |G_id|)``; ``uY = -eta m / (1 - beta1^t) / u_i``.

    As in the original, ``u`` holds one number per point (the largest gradient component of the row),
    not one per element; ``eps`` is accepted but unused. A point whose ``u`` is still 0 (it has had
    only zero gradients, so ``m`` is 0 too) does not move, where the original computes 0/0.
    """

    name = "adamax"

    def start(self, Y):
        super().start(Y)
        self.u = np.zeros(Y.shape[0])

    def update(self, G, iteration):
        self.m = self.beta1 * self.m + (1 - self.beta1) * G
        self.u = np.maximum(self.beta2 * self.u, np.abs(G).max(axis=1))
        m_hat = self.m / (1 - self.b1t)
        u = np.where(self.u > 0, self.u, 1.0)[:, None]
        uY = -self.eta * (m_hat / u)
        self.advance()
        return uY


class Nadam(_AdamFamily):
    """Adam with Nesterov momentum: ``mhat = m / (1 - beta1^(t+1))``, ``vhat = v / (1 - beta2^t)``,
    ``mbar = beta1 mhat + (1 - beta1) G / (1 - beta1^t)``; ``uY = -eta mbar / (sqrt(vhat) + eps)``."""

    name = "nadam"

    def update(self, G, iteration):
        b1 = self.beta1
        self.moments(G)
        m_hat = self.m / (1 - self.b1t * b1)
        v_hat = self.v / (1 - self.b2t)
        m_bar = b1 * m_hat + ((1 - b1) * G) / (1 - self.b1t)
        uY = -(self.eta * m_bar) / (np.sqrt(v_hat) + self.eps)
        self.advance()
        return uY
