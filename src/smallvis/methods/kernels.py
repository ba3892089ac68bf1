"""Output kernels ``w(d^2)`` and their gradient factor ``g = -d log w / d d^2`` on (n, n) arrays.

The kernels themselves are declared once in :mod:`.output_kernels` (the numba engines are generated
from the same declarations); the classes here evaluate them with NumPy (the dense engine) and
compose them (per-point bandwidths, importance weights).

With ``g`` a divergence can write its force constants without knowing the kernel: e.g. for
KL(P || W/Z) the stiffness is ``K = 4 (P - W/Z) * g`` (``g = W`` for Student-t gives t-SNE,
``g = 1`` for the Gaussian gives SSNE, ``g = W^alpha`` for the heavy-tailed kernel gives HSSNE).
All arrays are (n, n); weights have a zero diagonal.
"""

from __future__ import annotations

import numpy as np

from .output_kernels import KERNELS


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


class Declared(OutputKernel):
    """A kernel of :data:`~smallvis.methods.output_kernels.KERNELS` evaluated by NumPy on the whole
    matrix: the declaration's functions, the diagonal of W zeroed (and of g with
    ``zero_grad_diagonal``), a constant g broadcast to W's shape. ``params``: the values of the
    kernel's parameters (``alpha``, ``a``, ``b``, ...), also attributes of the kernel."""

    kernel_name = ""
    zero_grad_diagonal = False
    errstate = {}

    def __init__(self, **params):
        self.decl = KERNELS[self.kernel_name]
        self.params = {name: float(value) for name, value in params.items()}
        for name, value in self.params.items():
            setattr(self, name, value)
        self.clamp_q = self.decl.clamp_q

    def weights(self, d2):
        with np.errstate(**self.errstate):
            W = self.decl.w(d2, **self.params)
        np.fill_diagonal(W, 0.0)
        return W

    def grad_factor(self, d2, W):
        with np.errstate(**self.errstate):
            g = self.decl.g(d2, W, **self.params)
        if np.ndim(g) == 0:
            return np.full_like(W, g)
        if self.zero_grad_diagonal:
            np.fill_diagonal(g, 0.0)
        return g


class StudentT(Declared):
    """Cauchy / Student-t with one degree of freedom: ``w = 1 / (1 + d^2)``, ``g = w``."""

    name = kernel_name = "t"

    def __init__(self):
        super().__init__()


class StudentTDof(Declared):
    """Student-t with ``dof`` degrees of freedom: ``w = (1 + d^2/dof)^(-(dof + 1)/2)``,
    ``g = (dof + 1) / (2 (dof + d^2))`` (``dof = 1`` is :class:`StudentT`; large ``dof`` tends to
    the Gaussian ``exp(-d^2/2)``)."""

    kernel_name = "tdof"

    def __init__(self, dof: float):
        super().__init__(dof=dof)
        self.name = f"t (dof={self.dof:g})"


class Gaussian(Declared):
    """``w = exp(-d^2)``, ``g = 1``."""

    name = kernel_name = "gaussian"

    def __init__(self):
        super().__init__()


class HeavyTailed(Declared):
    """``w = (alpha d^2 + 1)^(-1/alpha)``, ``g = 1 / (1 + alpha d^2)``: alpha -> 0 is Gaussian,
    alpha = 1 Student-t (alpha floored at 1e-8)."""

    name = kernel_name = "heavy-tailed"

    def __init__(self, alpha: float):
        super().__init__(alpha=max(float(alpha), 1e-8))


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


class InverseStudentT(Declared):
    """The reciprocal of the Student-t kernel, ``w = 1 + d^2``, ``g = -1 / (1 + d^2)`` (g-SNE's global
    term: it grows with distance, so matching it to far-pair input weights spreads clusters)."""

    name = kernel_name = "inverse-t"

    def __init__(self):
        super().__init__()


class UMAPCurve(Declared):
    """UMAP's output curve ``w = 1 / (1 + a d^(2b))`` (``d^2`` clamped at 0).

    ``g = -d log w / d d^2 = b (1 - w) / d^2``, softened to ``b (1 - w) / (d^2 + gr_eps)`` as the
    original does (exact for ``gr_eps = 0``); zero on the diagonal.
    """

    name = kernel_name = "umap"
    zero_grad_diagonal = True
    errstate = dict(divide="ignore", invalid="ignore")  # the diagonal, zeroed

    def __init__(self, a: float, b: float, gr_eps: float = 0.0):
        super().__init__(a=a, b=b, gr_eps=gr_eps)
