"""Numba functions of the output kernels as radial functions of the squared distance ``d2`` (compiled
on first use and cached on disk), shared by the approximate engines' all-pairs sums (Barnes-Hut,
FFT interpolation) and their passes over the stored entries of a sparse P.

The kernels are those of :class:`~smallvis.methods.base.FusedForm` (codes and the parameter vector
``kp`` of :func:`.exact_kernels.kernel_params`): Student-t ``w = 1 / (1 + d2)``, Gaussian
``exp(-d2)``, heavy-tailed ``(1 + alpha d2)^(-1/alpha)``, UMAP's curve ``1 / (1 + a d2^b)``; with
``g = -d log w / d d2`` their gradient factor (``w``, ``1``, ``1 / (1 + alpha d2)``,
``b (1 - w) / (d2 + gr_eps)``).

An all-pairs sum adds up one of the radial functions ``fn`` of :func:`radial` over the points
``j != i``: ``W`` (``w``), ``W_LOG_W`` (``w log w``), ``WG`` (``max(w, floor) g``, the force
factor; ``floor`` 0: none) and ``WG_LOG_W`` (``w g log w``), the vector ones times
``y_i - y_j``.
"""

from __future__ import annotations

import math

from .._util.jit import njit
from .exact_kernels import umap_weight
from .output_kernel_functions import (GAUSSIAN_KERNEL, HEAVY_TAILED_KERNEL, KP_A, KP_ALPHA, KP_B,
                                      KP_GR_EPS, T_KERNEL)

# the radial functions an all-pairs sum adds up (see the module docstring)
W, W_LOG_W, WG, WG_LOG_W = 0, 1, 2, 3
NAMES = {W: "w", W_LOG_W: "w log w", WG: "w g", WG_LOG_W: "w g log w"}


@njit(cache=True, error_model="numpy")
def weight(code, kp, d2):
    """The output weight ``w(d2)`` (the expressions of the exact engine's kernels)."""
    if code == T_KERNEL:
        return 1.0 / (1.0 + d2)
    if code == GAUSSIAN_KERNEL:
        return math.exp(-d2)
    if code == HEAVY_TAILED_KERNEL:
        alpha = kp[KP_ALPHA]
        return math.exp(-math.log1p(alpha * d2) / alpha)
    return umap_weight(kp[KP_A], kp[KP_B], max(d2, 0.0))


@njit(cache=True, error_model="numpy")
def grad_factor(code, kp, d2, w):
    """``g = -d log w / d d2`` at ``d2`` given ``w = w(d2)``; UMAP's curve is softened by
    ``gr_eps`` and taken as 0 at ``d2 = 0`` (the self pair, which the sums leave out anyway)."""
    if code == T_KERNEL:
        return w
    if code == GAUSSIAN_KERNEL:
        return 1.0
    if code == HEAVY_TAILED_KERNEL:
        return 1.0 / (1.0 + kp[KP_ALPHA] * d2)
    x = max(d2, 0.0)
    den = x + kp[KP_GR_EPS]
    return kp[KP_B] * (1.0 - w) / den if den > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def log_weight(code, kp, d2, w):
    """``log w(d2)`` without the rounding of ``log(w)`` for small weights."""
    if code == T_KERNEL:
        return -math.log1p(d2)
    if code == GAUSSIAN_KERNEL:
        return -d2
    if code == HEAVY_TAILED_KERNEL:
        alpha = kp[KP_ALPHA]
        return -math.log1p(alpha * d2) / alpha
    x = max(d2, 0.0)
    return -math.log1p(kp[KP_A] * math.pow(x, kp[KP_B])) if x > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def radial_of(fn, code, kp, floor, d2, w):
    """The radial function ``fn`` (``W``, ``W_LOG_W``, ``WG``, ``WG_LOG_W``) at ``d2`` given
    ``w = weight(code, kp, d2)``; ``floor``: the least weight ``WG`` uses (0: none)."""
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
