"""Numba functions of the un-normalised pair costs' terms on the pairs a sparse P does not store
(largevis, umap, tumap), as radial functions of the output squared distance for the approximate
engines' all-pairs sums (compiled on first use and cached on disk).

These costs are affine in P (:mod:`.exact_pairs`): a pair's cost and stiffness are those it has
with ``P_ij = 0`` plus what its P value adds. The ``P = 0`` part is a function of ``d2`` alone, the
same for every pair, so a Barnes-Hut tree or an interpolation grid sums it over all pairs; the part
P adds is computed over the stored entries (:func:`.exact_pair_kernels.stored_pair_terms`). Per
pair, as the exact engine's row functions (:mod:`.exact_pair_kernels`) at ``p = 0``:

- largevis: cost ``-gamma log(1 - w + eps)``, stiffness ``-4 gamma r`` with the softened
  repulsion ``r`` of :mod:`smallvis.methods.largevis` (``w / (d2 + gr_eps)`` in the original's
  arrangement for the t weight, ``g w / (1 - w + gr_eps)`` with ``gr_form="1-w"``; ``w`` for the
  logistic weight);
- umap, tumap: cost ``-log(1 - w + eps)``, stiffness ``-4 b w / (d2 + eps + gr_eps)`` (UMAP's
  curve) or ``-4 w^2 / (1 - w + eps + gr_eps)`` (Student-t);
- the normalised cross-entropy (ntumap, cetsne; ``q = w / Z``, Student-t ``w``, ``Z`` known from
  an earlier sum): cost ``-log(1 - q + eps)``, stiffness ``4 w C`` and share of the global sum
  ``S = sum C`` the term ``C = -q / (1 - q)`` (the force's ``-4 S q w`` is the t-SNE repulsion
  times ``S / Z``); what a stored entry adds: :func:`normalised_ce_stored`.

The parameters travel in the radial functions' parameter vector ``kp`` (:mod:`.radial_kernels`):
the output kernels' slots, then the pair form's ``prm`` (the slots of :mod:`.exact_pair_kernels`),
then the divergence's and the weight's codes (:func:`pair_kp`).
"""

from __future__ import annotations

import math

import numpy as np

from numba import prange

from .._util.jit import njit
from .exact_pair_kernels import (A, B, EPS, GAMMA, GR_1MW, GR_EPS, INV_Z, LARGEVIS, N_PARAMS,
                                 NORMALISED_CE, W_LOGISTIC, W_T, W_UMAP, _log1pexp, _umap_weight)
from .output_kernel_functions import N_PARAMS as KERNEL_SLOTS

# where the pair form's parameters start in kp, and the slots of the divergence and weight codes
OFFSET = KERNEL_SLOTS
DIV_SLOT = OFFSET + N_PARAMS
WK_SLOT = DIV_SLOT + 1


def pair_kp(prm: np.ndarray, div: int, wk: int) -> np.ndarray:
    """The parameter vector ``kp`` of :func:`zero_p_term`: the output kernels' defaults
    (:func:`.exact_kernels.kernel_params`), ``prm`` and the codes ``div`` and ``wk``."""
    from .exact_kernels import kernel_params

    return np.concatenate([kernel_params(), np.asarray(prm, dtype=np.float64),
                           np.array([div, wk], dtype=np.float64)])


# which term zero_p_term gives: the cost, the stiffness, the share of the global sum S
COST, FORCE, S_TERM = 0, 1, 2


@njit(cache=True, error_model="numpy")
def zero_p_term(which, kp, x):
    """The cost (``which`` ``COST``), the stiffness (``FORCE``) or the share of the global sum
    (``S_TERM``, the normalised cross-entropy only) of a pair with ``P = 0`` at squared distance
    ``x`` (see the module docstring; ``kp`` of :func:`pair_kp`)."""
    div, wk = int(kp[DIV_SLOT]), int(kp[WK_SLOT])
    eps, gr_eps = kp[OFFSET + EPS], kp[OFFSET + GR_EPS]
    force = which == FORCE
    if div == NORMALISED_CE:
        w = 1.0 / (1.0 + x)
        q = w * kp[OFFSET + INV_Z]
        if which == COST:
            return -math.log1p(-q + eps)
        c = -q / (1.0 - q)
        return 4.0 * w * c if force else c
    if div == LARGEVIS:
        gamma = kp[OFFSET + GAMMA]
        if wk == W_LOGISTIC:
            if force:
                return -4.0 * gamma * math.exp(-_log1pexp(x))
            omw = math.exp(-math.log1p(math.exp(-x)))
            return -gamma * math.log(omw + eps)
        s = kp[OFFSET + A]
        w = 1.0 / (1.0 + s * x)
        if not force:
            return -gamma * math.log(1.0 - w + eps)
        if kp[OFFSET + GR_1MW] != 0.0:
            r = s * w * w / (1.0 - w + gr_eps)
        elif wk == W_T:
            r = w * w / (1.0 + (gr_eps - 1.0) * w)
        else:
            r = w / (x + gr_eps)
        return -4.0 * gamma * r
    if wk == W_UMAP:
        b = kp[OFFSET + B]
        w = _umap_weight(math.log(kp[OFFSET + A]), b, x)
        if force:
            return -4.0 * b * w / (x + eps + gr_eps)
    else:
        w = 1.0 / (1.0 + x)
        if force:
            return -4.0 * w * w / (1.0 - w + eps + gr_eps)
    return -math.log1p(-w + eps)


@njit(parallel=True, cache=True, error_model="numpy")
def normalised_ce_stored(indptr, indices, data, Y, f, inv_z, eps, want_grad, want_cost, c, t, F):
    """What the stored entries of the symmetric CSR matrix ``P`` add to the normalised
    cross-entropy's zero-P terms (``p = f P_ij``, ``w = 1 / (1 + d2)``, ``q = w inv_z``), per point
    ``i``: the cost ``c_i = sum_j p (log(1 - q + eps) - log q)`` (``want_cost``; its two logs per
    entry are most of this pass's time), the share of ``S`` ``t_i = sum_j p / (1 - q)`` and the
    forces ``F_i = sum_j 4 w p / (1 - q) (y_i - y_j)`` (``want_grad``), summed in registers. Rows
    are independent: the result does not depend on the number of threads."""
    n, k = Y.shape
    for i in prange(n):
        ci = 0.0
        ti = 0.0
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            e0 = y0 - Y[j, 0]
            e1 = y1 - Y[j, 1] if k > 1 else 0.0
            e2 = y2 - Y[j, 2] if k > 2 else 0.0
            x = e0 * e0
            if k > 1:
                x += e1 * e1
            if k > 2:
                x += e2 * e2
            w = 1.0 / (1.0 + x)
            q = w * inv_z
            p = f * data[e]
            if want_cost:
                ci += p * (math.log1p(-q + eps) - math.log(q))
            r = p / (1.0 - q)
            ti += r
            if want_grad:
                s = 4.0 * w * r
                a0 += s * e0
                a1 += s * e1
                a2 += s * e2
        if want_grad:
            F[i, 0] = a0
            if k > 1:
                F[i, 1] = a1
            if k > 2:
                F[i, 2] = a2
        c[i] = ci
        t[i] = ti
