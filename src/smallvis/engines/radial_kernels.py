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
``y_i - y_j``.

The functions of ``q = w / Z`` (codes from ``Q_FAMILY``, :func:`q_code`; the AB-divergence of
:mod:`.approx_ab`) read their parameters from slots after the kernel's in ``kp``
(:func:`q_params`): ``q^x (log q)^m`` or ``expm1(x log q) (log q)^m`` (the slot's ``split``) for
``m`` in 0, 1, 2 and one of two exponents ``x`` (or ``q^0 = 1``), with ``log q = log w - log Z``
floored at ``log_floor`` (``-inf``: none), optionally times the gradient factor ``g`` of the
unfloored kernel (the vector sums).

``PAIR_COST``, ``PAIR_FORCE`` and ``PAIR_S`` (codes after the q family) are the cost, the stiffness
and the share of a global sum of an un-normalised (or normalised cross-entropy) pair cost on a pair P does
not store (:func:`.approx_pair_kernels.zero_p_term`, its parameters in
``kp``; the kernel's ``w`` unused). ``NCE_SIG``, ``NCE_SIG2``, ``NCE_COST`` and ``NCE_FORCE``
are NCVis's pair terms (:func:`.approx_nce_kernels.nce_term`, its parameters in ``kp``; the
kernel's ``w`` is the ``qhat`` they read: the code of UMAP's curve).
"""

from __future__ import annotations


import math

import numpy as np

from .._util.jit import njit
from . import output_kernel_dispatch as kernels
from .approx_nce_kernels import nce_term
from .approx_pair_kernels import zero_p_term
from .output_kernel_functions import KP_GR_EPS, N_PARAMS, UMAP_KERNEL

# the radial functions an all-pairs sum adds up (see the module docstring)
W, W_LOG_W, WG, WG_LOG_W = 0, 1, 2, 3
NAMES = {W: "w", W_LOG_W: "w log w", WG: "w g", WG_LOG_W: "w g log w"}
# the zero-P pair terms of largevis, umap, tumap, ntumap, cetsne (.approx_pair_kernels: their
# order there), after the functions of q (Q_FAMILY .. Q_FAMILY + 17)
PAIR_COST, PAIR_FORCE, PAIR_S = 40, 41, 42
NAMES.update({PAIR_COST: "pair cost at P = 0", PAIR_FORCE: "pair stiffness at P = 0",
              PAIR_S: "pair share of S at P = 0"})
# NCVis's pair terms (.approx_nce_kernels: their order there)
NCE_SIG, NCE_SIG2, NCE_COST, NCE_FORCE = 50, 51, 52, 53
NAMES.update({NCE_SIG: "nce sigma", NCE_SIG2: "nce sigma (1 - sigma)",
              NCE_COST: "nce noise cost", NCE_FORCE: "nce noise stiffness"})

# the functions of q (see the module docstring): Q_FAMILY + times_g + 2 (slot + 3 m)
Q_FAMILY = 16
# slots of kp after the kernel's: the exponents x of slots 0 and 1 with their split flags, log Z,
# the floor on log q
QX0, QSPLIT0, QX1, QSPLIT1, QLOGZ, QLOGFLOOR = range(N_PARAMS, N_PARAMS + 6)
ONE = 2  # the slot whose exponent is 0 (q^0 = 1)


def q_code(slot: int, m: int = 0, times_g: bool = False) -> int:
    """The radial-function code of ``q^x (log q)^m`` with the exponent of ``slot`` (0, 1; ``ONE``:
    none), times ``g`` where ``times_g``."""
    return Q_FAMILY + int(times_g) + 2 * (slot + 3 * m)


def q_params(kp, log_z: float, log_floor: float = -math.inf, x0: float = 0.0, split0=False,
             x1: float = 0.0, split1=False) -> np.ndarray:
    """``kp`` extended with the slots the functions of ``q`` read."""
    out = np.empty(N_PARAMS + 6)
    out[:N_PARAMS] = kp[:N_PARAMS]
    out[QX0], out[QSPLIT0], out[QX1], out[QSPLIT1] = x0, float(split0), x1, float(split1)
    out[QLOGZ], out[QLOGFLOOR] = log_z, log_floor
    return out


@njit(cache=True, error_model="numpy")
def q_function(rel, code, kp, d2, w):
    """The function of ``q`` with relative code ``rel = fn - Q_FAMILY`` at ``d2``."""
    lq = kernels.log_weight(code, kp, d2) - kp[QLOGZ]
    if lq < kp[QLOGFLOOR]:
        lq = kp[QLOGFLOOR]
    slot = (rel // 2) % 3
    m = (rel // 2) // 3
    v = 1.0
    if slot != ONE:
        x = kp[QX0 + 2 * slot]
        v = math.expm1(x * lq) if kp[QSPLIT0 + 2 * slot] != 0.0 else math.exp(x * lq)
    if m == 1:
        v *= lq
    elif m == 2:
        v *= lq * lq
    if rel % 2 == 1:
        v *= grad_factor(code, kp, d2, w)
    return v


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
    if fn >= NCE_SIG:
        return nce_term(fn - NCE_SIG, kp, d2, w)
    if fn >= PAIR_COST:
        return zero_p_term(fn - PAIR_COST, kp, d2)
    if fn == W:
        return w
    if fn >= Q_FAMILY:
        return q_function(fn - Q_FAMILY, code, kp, d2, w)
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
