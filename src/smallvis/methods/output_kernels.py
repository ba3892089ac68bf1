"""The output kernels, declared once: each is data (:class:`KernelDecl`) the engines are built from.

A declaration gives the weight ``w(d2, *params)`` of a squared output distance and the gradient
factor ``g(d2, w, *params) = -d log w / d d2`` (so ``dw/dd2 = -w g``, :meth:`KernelDecl.dweight`),
as small plain-Python functions written with operators and NumPy's ufuncs:

- the dense engine evaluates them on whole (n, n) arrays (:mod:`smallvis.methods.kernels`);
- ``scripts/output_kernels.py`` copies them into the numba modules
  ``smallvis/engines/output_kernel_functions.py`` (the functions, compiled for scalars and cached on
  disk) and ``output_kernel_dispatch.py`` (selection by the integer ``code`` and the row loops the
  fused exact engine calls), checked in and checked current by a test.

A new kernel is one :class:`KernelDecl` in :data:`KERNELS` (then ``python scripts/output_kernels.py``).
The functions must stay numba-compilable for scalars and give NumPy's result on arrays: no branches
on the value of ``d2``, only ``np`` ufuncs, ``+ - * / **`` and the parameters named in ``params``
(whose values the engines read from the kernel parameter vector ``kp``, slot ``PARAMS.index(name)``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np

# every kernel parameter, in the order of the engines' parameter vector ``kp``
PARAMS = ("alpha", "a", "b", "gr_eps", "dof")
# the value of a parameter a kernel does not use
PARAM_DEFAULTS = {"alpha": 1.0, "a": 1.0, "b": 1.0, "gr_eps": 0.0, "dof": 1.0}


@dataclass(frozen=True)
class KernelDecl:
    """One output kernel.

    ``name``: the registry key; ``code``: the integer the engines dispatch on (``FusedForm.kernel``);
    ``weight(d2, ...)``, ``grad_factor(d2, w, ...)`` and ``log_weight(d2, ...)`` (``log w``
    without the rounding of a small ``w``), whose further arguments are parameters named as in
    :data:`PARAMS` (:attr:`weight_params`, :attr:`grad_params`); ``radial``: ``w`` is a function of
    the output distance alone (what Barnes-Hut and FFT interpolation sum); ``clamp_q``: Q from this
    kernel is floored at eps (weights that underflow); ``doc``: one line for the docs.
    """

    name: str
    code: int
    weight: Callable
    grad_factor: Callable
    log_weight: Callable
    radial: bool = True
    clamp_q: bool = False
    doc: str = ""

    @property
    def weight_params(self) -> tuple:
        """The parameters ``weight`` takes after ``d2``."""
        return tuple(inspect.signature(self.weight).parameters)[1:]

    @property
    def grad_params(self) -> tuple:
        """The parameters ``grad_factor`` takes after ``d2`` and ``w``."""
        return tuple(inspect.signature(self.grad_factor).parameters)[2:]

    @property
    def log_params(self) -> tuple:
        """The parameters ``log_weight`` takes after ``d2``."""
        return tuple(inspect.signature(self.log_weight).parameters)[1:]

    @property
    def params(self) -> tuple:
        """Every parameter of the kernel, in :data:`PARAMS` order."""
        used = set(self.weight_params) | set(self.grad_params) | set(self.log_params)
        return tuple(p for p in PARAMS if p in used)

    def w(self, d2, **params):
        """``weight`` at ``d2`` with the values of ``params`` (missing ones: :data:`PARAM_DEFAULTS`)."""
        values = {**PARAM_DEFAULTS, **params}
        return self.weight(d2, *(values[p] for p in self.weight_params))

    def g(self, d2, w, **params):
        """``grad_factor`` at ``d2`` and ``w`` with the values of ``params``."""
        values = {**PARAM_DEFAULTS, **params}
        return self.grad_factor(d2, w, *(values[p] for p in self.grad_params))

    def log_w(self, d2, **params):
        """``log_weight`` at ``d2`` with the values of ``params``."""
        values = {**PARAM_DEFAULTS, **params}
        return self.log_weight(d2, *(values[p] for p in self.log_params))

    def dweight(self, d2, **params):
        """``dw/dd2 = -w g``."""
        w = self.w(d2, **params)
        return -w * self.g(d2, w, **params)


# -- the declarations ----------------------------------------------------------------------------
# Written as the dense engine has always computed them (its numbers are the original's, bit for bit).

def t_weight(d2):
    return 1.0 / (1.0 + d2)


def t_grad(d2, w):
    return w


def t_log(d2):
    return -np.log1p(d2)


def gaussian_weight(d2):
    return np.exp(-d2)


def gaussian_grad(d2, w):
    return 1.0


def gaussian_log(d2):
    return -d2


def heavy_tailed_weight(d2, alpha):
    # exp(-log1p(a d2) / a) keeps full precision as alpha -> 0, where the power form does not
    return np.exp(-np.log1p(alpha * d2) / alpha)


def heavy_tailed_grad(d2, w, alpha):
    return 1.0 / (1.0 + alpha * d2)


def heavy_tailed_log(d2, alpha):
    return -np.log1p(alpha * d2) / alpha


def umap_weight(d2, a, b):
    return 1.0 / (1.0 + a * np.maximum(d2, 0.0) ** b)


def umap_grad(d2, w, b, gr_eps):
    return b * (1.0 - w) / (np.maximum(d2, 0.0) + gr_eps)


def umap_log(d2, a, b):
    return -np.log1p(a * np.maximum(d2, 0.0) ** b)


def inverse_t_weight(d2):
    return 1.0 + d2


def inverse_t_grad(d2, w):
    return -1.0 / (1.0 + d2)


def inverse_t_log(d2):
    return np.log1p(d2)


def power_heavy_weight(d2, alpha):
    return (alpha * d2 + 1.0) ** (-1.0 / alpha)


def power_heavy_grad(d2, w, b):
    return w ** b


def power_heavy_log(d2, alpha):
    return np.log(alpha * d2 + 1.0) * (-1.0 / alpha)


def tdof_weight(d2, dof):
    return (1.0 + d2 / dof) ** (-0.5 * (dof + 1.0))


def tdof_grad(d2, w, dof):
    return 0.5 * (dof + 1.0) / (dof + d2)


def tdof_log(d2, dof):
    return -0.5 * (dof + 1.0) * np.log1p(d2 / dof)


KERNELS = {
    "t": KernelDecl("t", 0, t_weight, t_grad, t_log,
                    doc="Student-t (Cauchy) ``1 / (1 + d2)``, ``g = w``"),
    "gaussian": KernelDecl("gaussian", 1, gaussian_weight, gaussian_grad, gaussian_log, clamp_q=True,
                           doc="Gaussian ``exp(-d2)``, ``g = 1``"),
    "heavy-tailed": KernelDecl("heavy-tailed", 2, heavy_tailed_weight,
                               heavy_tailed_grad, heavy_tailed_log,
                               doc="heavy-tailed ``(1 + alpha d2)^(-1/alpha)``, "
                                   "``g = 1 / (1 + alpha d2)``"),
    "umap": KernelDecl("umap", 3, umap_weight, umap_grad, umap_log,
                       doc="UMAP's curve ``1 / (1 + a d2^b)``, ``g = b (1 - w) / (d2 + gr_eps)``"),
    "inverse-t": KernelDecl("inverse-t", 4, inverse_t_weight, inverse_t_grad, inverse_t_log, radial=False,
                            doc="inverse Student-t ``1 + d2``, ``g = -1 / (1 + d2)`` (g-SNE's "
                                "global term)"),
    "power-heavy": KernelDecl("power-heavy", 5, power_heavy_weight,
                              power_heavy_grad, power_heavy_log,
                              doc="dhssne's power form ``(alpha d2 + 1)^(-1/alpha)``, ``g = w^b``"),
    "tdof": KernelDecl("tdof", 6, tdof_weight, tdof_grad, tdof_log,
                       doc="Student-t with ``dof`` degrees of freedom "
                           "``(1 + d2/dof)^(-(dof + 1)/2)``, ``g = (dof + 1) / (2 (dof + d2))``"),
}


def by_code(code: int) -> KernelDecl:
    """The declaration whose ``code`` is ``code``."""
    for decl in KERNELS.values():
        if decl.code == code:
            return decl
    raise KeyError(f"no output kernel has the code {code}")


def radial_codes() -> tuple:
    """The codes of the radial kernels (those Barnes-Hut and FFT interpolation can sum)."""
    return tuple(sorted(d.code for d in KERNELS.values() if d.radial))
