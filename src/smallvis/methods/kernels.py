"""Output kernels ``w(d^2)`` and their gradient factor ``g = -d log w / d d^2``.

With ``g`` a divergence can write its force constants without knowing the kernel: e.g. for
KL(P || W/Z) the stiffness is ``K = 4 (P - W/Z) * g`` (``g = W`` for Student-t gives t-SNE,
``g = 1`` for the Gaussian gives SSNE, ``g = W^alpha`` for the heavy-tailed kernel gives HSSNE).
All arrays are (n, n); weights have a zero diagonal.
"""

from __future__ import annotations

import numpy as np


class OutputKernel:
    """Base class: ``weights(d2)`` and ``grad_factor(d2, W)``.

    ``clamp_q``: output probabilities from this kernel are floored at eps (Gaussian weights underflow).
    """

    name = "kernel"
    clamp_q = False
    symmetric = True  # W_ij = W_ji

    def weights(self, d2: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def grad_factor(self, d2: np.ndarray, W: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class StudentT(OutputKernel):
    """Cauchy / Student-t with one degree of freedom: ``w = 1 / (1 + d^2)``, ``g = w``."""

    name = "t"

    def weights(self, d2):
        W = 1.0 / (1.0 + d2)
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        return W


class Gaussian(OutputKernel):
    """``w = exp(-d^2)``, ``g = 1``."""

    name = "gaussian"
    clamp_q = True

    def weights(self, d2):
        W = np.exp(-d2)
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        return np.ones_like(W)


class HeavyTailed(OutputKernel):
    """``w = (alpha d^2 + 1)^(-1/alpha)``, ``g = w^alpha``: alpha -> 0 is Gaussian, alpha = 1 Student-t."""

    name = "heavy-tailed"

    def __init__(self, alpha: float):
        self.alpha = max(float(alpha), 1e-8)

    def weights(self, d2):
        # exp(-log1p(a d2) / a) keeps full precision as alpha -> 0, where the power form does not
        W = np.exp(-np.log1p(self.alpha * d2) / self.alpha)
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        return 1.0 / (1.0 + self.alpha * d2)


class RowScaled(OutputKernel):
    """A kernel evaluated at ``beta_i d^2_ij``: per-point output bandwidths (the "B" methods).

    ``w_ij = base(beta_i d^2_ij)`` and ``g_ij = beta_i g_base(beta_i d^2_ij)``; W is not symmetric
    unless every beta is the same.
    """

    def __init__(self, base: OutputKernel, beta: np.ndarray):
        self.base = base
        self.beta = np.asarray(beta, dtype=np.float64)[:, None]
        self.symmetric = bool(np.all(self.beta == self.beta[0]))
        self.name = f"{base.name} with input bandwidths"
        self.clamp_q = base.clamp_q

    def weights(self, d2):
        return self.base.weights(self.beta * d2)

    def grad_factor(self, d2, W):
        return self.beta * self.base.grad_factor(self.beta * d2, W)


class Weighted(OutputKernel):
    """A kernel times a fixed symmetric importance matrix: ``w_ij = M_ij base(d^2_ij)``.

    The gradient factor is the base kernel's (``M`` does not depend on the coordinates).
    """

    def __init__(self, base: OutputKernel, M: np.ndarray):
        self.base = base
        self.M = M
        self.name = f"importance-weighted {base.name}"
        self.clamp_q = base.clamp_q

    def weights(self, d2):
        return self.M * self.base.weights(d2)

    def grad_factor(self, d2, W):
        return self.base.grad_factor(d2, self.base.weights(d2))


class InverseStudentT(OutputKernel):
    """The reciprocal of the Student-t kernel, ``w = 1 + d^2``, ``g = -1 / (1 + d^2)`` (g-SNE's global
    term: it grows with distance, so matching it to far-pair input weights spreads clusters)."""

    name = "inverse-t"

    def weights(self, d2):
        W = 1.0 + d2
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        return -1.0 / (1.0 + d2)


class UMAPCurve(OutputKernel):
    """UMAP's output curve ``w = 1 / (1 + a d^(2b))`` (``d^2`` clamped at 0).

    ``g = -d log w / d d^2 = b (1 - w) / d^2``, softened to ``b (1 - w) / (d^2 + gr_eps)`` as the
    original does (exact for ``gr_eps = 0``).
    """

    name = "umap"

    def __init__(self, a: float, b: float, gr_eps: float = 0.0):
        self.a, self.b, self.gr_eps = float(a), float(b), float(gr_eps)

    def weights(self, d2):
        W = 1.0 / (1.0 + self.a * np.maximum(d2, 0.0) ** self.b)
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        with np.errstate(divide="ignore", invalid="ignore"):  # the diagonal, zeroed below
            g = self.b * (1.0 - W) / (np.maximum(d2, 0.0) + self.gr_eps)
        np.fill_diagonal(g, 0.0)
        return g
