"""Numba functions of the output kernels as radial functions of the squared distance ``d2`` (compiled
on first use and cached on disk), shared by the approximate engines' all-pairs sums (Barnes-Hut,
FFT interpolation) and their passes over the stored entries of a sparse P.

The kernels are the radial ones declared in :data:`smallvis.methods.output_kernels.KERNELS`
(``radial=True``: Student-t, Gaussian, heavy-tailed, UMAP's curve, Student-t with ``dof`` degrees
of freedom), through the generated :mod:`.output_kernel_dispatch` (codes of
:class:`~smallvis.methods.base.FusedForm`, the parameter vector ``kp`` of
:func:`.exact_kernels.kernel_params`), with ``g = -d log w / d d2`` their gradient factor.

An all-pairs sum adds up one of the radial functions ``fn`` of :func:`radial` over the points
``j != i``: ``W`` (``w``), ``W_LOG_W`` (``w log w``), ``WG`` (``max(w, floor) g``, the force
factor; ``floor`` 0: none) and ``WG_LOG_W`` (``w g log w``), the vector ones times
``y_i - y_j``; ``PAIR_COST``, ``PAIR_FORCE`` and ``PAIR_S``, the cost, the stiffness and the
share of a global sum of an un-normalised (or normalised cross-entropy) pair cost on a pair P does
not store (:func:`.approx_pair_kernels.zero_p_term`, its parameters in
``kp``; the kernel's ``w`` unused).
"""

from __future__ import annotations


from .._util.jit import njit
from . import output_kernel_dispatch as kernels
from .approx_pair_kernels import zero_p_term
from .output_kernel_functions import KP_GR_EPS, UMAP_KERNEL

# the radial functions an all-pairs sum adds up (see the module docstring)
W, W_LOG_W, WG, WG_LOG_W = 0, 1, 2, 3
NAMES = {W: "w", W_LOG_W: "w log w", WG: "w g", WG_LOG_W: "w g log w"}
# the zero-P pair terms of largevis, umap, tumap, ntumap, cetsne (.approx_pair_kernels: their
# order there)
PAIR_COST, PAIR_FORCE, PAIR_S = 20, 21, 22
NAMES.update({PAIR_COST: "pair cost at P = 0", PAIR_FORCE: "pair stiffness at P = 0",
              PAIR_S: "pair share of S at P = 0"})


@njit(cache=True, error_model="numpy")
def weight(code, kp, d2):
    """The output weight ``w(d2)`` (the declaration's, as the exact engine computes it)."""
    return kernels.weight(code, kp, d2)


@njit(cache=True, error_model="numpy")
def grad_factor(code, kp, d2, w):
    """``g = -d log w / d d2`` at ``d2`` given ``w = w(d2)``; UMAP's curve is softened by
    ``gr_eps`` and taken as 0 at ``d2 = 0`` without it (the self pair, which the sums leave out
    anyway)."""
    if code == UMAP_KERNEL and max(d2, 0.0) + kp[KP_GR_EPS] <= 0.0:
        return 0.0
    return kernels.grad_factor(code, kp, d2, w)


@njit(cache=True, error_model="numpy")
def log_weight(code, kp, d2, w):
    """``log w(d2)`` without the rounding of ``log(w)`` for small weights (``w`` unused: the
    declaration's ``log_weight``)."""
    return kernels.log_weight(code, kp, d2)


@njit(cache=True, error_model="numpy")
def radial_of(fn, code, kp, floor, d2, w):
    """The radial function ``fn`` (``W``, ``W_LOG_W``, ``WG``, ``WG_LOG_W``) at ``d2`` given
    ``w = weight(code, kp, d2)``; ``floor``: the least weight ``WG`` uses (0: none)."""
    if fn >= PAIR_COST:
        return zero_p_term(fn - PAIR_COST, kp, d2)
    if fn == W:
        return w
    if fn == W_LOG_W:
        return w * log_weight(code, kp, d2, w) if w > 0.0 else 0.0
    g = grad_factor(code, kp, d2, w)
    if fn == WG:
        return (w if w > floor else floor) * g
    return w * g * log_weight(code, kp, d2, w) if w > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def radial(fn, code, kp, floor, d2):
    """:func:`radial_of` at ``d2``."""
    return radial_of(fn, code, kp, floor, d2, weight(code, kp, d2))
