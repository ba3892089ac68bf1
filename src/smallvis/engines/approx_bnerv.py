"""bnerv on Barnes-Hut (plan ``"bandwidth-row"`` of :func:`.approx.approx_plan`, a NeRV
``MixtureForm``): Venna et al.'s NeRV, ``Q_ij = exp(-beta_i d2_ij) / N_i`` per row with each
point's input precision, ``lambda KL(P || Q) + (1 - lambda) KL(Q || P)`` with P floored at ``eps``.

As nerv on these engines (:mod:`.approx_nerv`), every pair is first counted as if P stored nothing
there (``P = eps``), where the row-form stiffness is ``k_ij = lambda eps + a_i w_ij + b_i (w log
w)_ij`` with ``w_ij = exp(-beta_i d2_ij)``, and the stored pairs add the difference to their true
terms (:mod:`.approx_nerv_kernels` with ``beta``). The original's stiffness is ``beta_i k_ij``, symmetrised:

.. math::
    G_i = 2 \\sum_j (\\beta_i k_{ij} + \\beta_j k_{ji}) (y_i - y_j)

so the first half is a sum at the query's precision and the second one at the sources'
precisions with the charges ``a_j``, ``b_j`` (:class:`.approx_bandwidth_tree.BandwidthTree`),
its ``lambda eps`` part the moment ``sum_j beta_j (y_i - y_j)``. Q's floor at ``eps`` applies on
the stored pairs only, as for nerv (docs/deviations.md).
"""

from __future__ import annotations

import math

import numpy as np

from .approx_bandwidth_tree import bandwidth_tree, prepared
from .radial_kernels import W, W_LOG_W, WG, WG_LOG_W

GAUSSIAN = 1


def _source(tree, kp, fn, c):
    """``sum_{j != i} c_j beta_j fn(beta_j d2_ij) (y_i - y_j)`` for charges of any sign (a cell is
    summarised by its charge-weighted centre: the two signs are summed apart)."""
    total = 0.0
    for sign in (1.0, -1.0):
        part = np.maximum(sign * c, 0.0)
        if part.any():
            total = total + sign * tree.source(GAUSSIAN, kp, fn, part)
    return total


def evaluate_bnerv(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of bnerv at ``Y``, exaggeration ``f``."""
    from . import approx_nerv_kernels as kern
    from .exact_kernels import kernel_params

    if not (cost or grad):
        return None, None
    form = plan.form
    lam, eps = float(form.weight), float(form.eps)
    log_eps = math.log(eps)
    prep = prepared(method, state, form)
    P, Pt, beta = prep["P"], prep["Pt"], prep["beta"]
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    kp = kernel_params()
    tree = bandwidth_tree(engine, Y, beta, eps)
    S, V = tree.query(GAUSSIAN, kp, scalars=(W, W_LOG_W), vectors=(WG, WG_LOG_W) if grad else ())
    with np.errstate(divide="ignore", invalid="ignore"):
        log_norm = np.log(S[:, 0])
    lse = np.empty(n)  # log N_i is at least the log-sum-exp of the stored pairs' weights
    kern.stored_logsumexp(P[0], P[1], Y, beta, lse)
    log_norm = np.fmax(log_norm, lse)
    norm = np.exp(log_norm)
    inv = np.divide(1.0, norm, out=np.zeros(n), where=norm > 0)
    rev_stored, fwd_stored = np.empty(n), np.empty(n)
    kern.stored_sums(*P, Y, beta, f, log_norm, eps, rev_stored, fwd_stored)
    rev = (S[:, 1] - (log_norm + log_eps) * S[:, 0]) * inv + rev_stored
    Yc = Y - Y.mean(axis=0)
    pcost = G = None
    if cost:
        d2sum = n * np.einsum("ij,ij->i", Yc, Yc) + np.sum(Yc * Yc)  # sum_j d2_ij
        fwd = lam * (eps * ((n - 1) * (log_eps + log_norm) + beta * d2sum) + fwd_stored)
        pcost = fwd + (1.0 - lam) * rev
    if grad:
        a = (-lam + (1.0 - lam) * (log_eps + log_norm + rev)) * inv
        b = -(1.0 - lam) * inv
        own = beta[:, None] * (lam * eps * n * Yc + a[:, None] * V[:, 0] + b[:, None] * V[:, 1])
        moment = beta.sum() * Yc - beta @ Yc  # sum_j beta_j (y_i - y_j)
        other = lam * eps * moment + _source(tree, kp, WG, a)
        if lam != 1.0:
            other = other + _source(tree, kp, WG_LOG_W, b)
        stored, back = np.empty((n, k)), np.empty((n, k))
        kern.stored_forces(*P, Y, beta, f, log_norm, rev, lam, eps, True, stored)
        kern.stored_forces(*Pt, Y, beta, f, log_norm, rev, lam, eps, False, back)
        G = 2.0 * (own + other + stored + back)
    return pcost, G
