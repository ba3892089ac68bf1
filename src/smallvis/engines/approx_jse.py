"""JSE on the sparse-P engines (plan ``"jse"`` of :func:`.approx.approx_plan`): jse, sjse and
rsrjse, ``KL(P || M) / (1 - kappa) + KL(Q || M) / kappa`` with the mixture
``M = kappa P + (1 - kappa) Q`` and a Gaussian ``Q`` normalised per row (jse, rsrjse) or over all
pairs (sjse), floored at ``eps``, as the mixture. Barnes-Hut runs it at a quarter of its
``theta`` (:data:`THETA_FACTOR`).

On a pair P does not store, ``P = 0`` and ``M = (1 - kappa) q``: the forward term is the dense
constant ``eps log eps`` (P floored there) and ``log(q / M) = c = -log(1 - kappa)`` is a constant,
so the reverse term ``q log(q / M) = c q`` and the stiffness ``-q (c - s_i) / kappa`` (``s_i`` the
row's reverse KL ``sum_j q log(q / M)``, or its total over the matrix) are linear in ``q = w / N_i``.
So every pair is first counted so, from the engine's all-pairs sums ``S = sum_j w`` and
``V = sum_j w (y_i - y_j)`` (the transposed stiffness of a row-normalised Q a second sum with the
charges ``a_j = -(c - s_j) / (kappa N_j)``, :func:`.approx_nerv._charged_forces`), and the stored
pairs then add the difference between their true terms and those (:mod:`.approx_jse_kernels`).
The gradient is ``2 sum_j (K_ij + K_ji) (y_i - y_j)`` per row or ``4 sum_j K_ij (y_i - y_j)``
over the matrix, as on the dense engine.

The floors at ``eps`` of Q and of the mixture apply on the stored pairs only: on the others they
bite only where ``q < eps / (1 - kappa)``, and change each pair's cost and force by less than about
``eps (log(1 / eps) + d2) / kappa`` (docs/deviations.md), as nerv's floor on Q
(:mod:`.approx_nerv`). A row's normaliser is at least the log-sum-exp of its stored pairs'
weights, as nerv's.
"""

from __future__ import annotations

import math

import numpy as np

GAUSSIAN = 1
# Barnes-Hut evaluates JSE's sums at this fraction of its theta: its attraction on a stored pair,
# -q (L - s) / kappa ~ q log(kappa p / q) / kappa, scales with 1 / N_i, so the error of a row's
# normaliser becomes the gradient's. At the quadrupole default theta 0.35 on the 2,000-point set
# (tests/engine_checks.py check_approx_defaults) the gradient error is 8.0e-3 (jse), 7.9e-3 (rsrjse)
# and 4.1e-4 (sjse) at the full theta, 5.9e-4 / 5.7e-4 / 3.5e-5 at half and 3.8e-5 / 3.6e-5 /
# 3.5e-6 at a quarter: the full theta misses the 1e-3 bound, half meets it by 1.7x, a quarter by 26x
# (for about 1.2-1.8x the time of the full theta on the 2,000 points)
THETA_FACTOR = 0.25


def _radial(engine, Y, eps):
    """The engine's all-pairs sums at ``Y``; a tree at :data:`THETA_FACTOR` of its theta."""
    theta = getattr(engine, "theta", None)
    if theta is None:
        return engine.radial(Y, eps)
    import copy

    finer = copy.copy(engine)
    finer.theta = theta * THETA_FACTOR
    return finer.radial(Y, eps)


def evaluate_jse(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of JSE at ``Y``, exaggeration ``f``."""
    from . import approx_jse_kernels as kern
    from .approx_nerv import (NO_STORE, _charged_forces, column_sums, exact_rows, row_sums,
                              stored_pairs, vector_functions)
    from .approx_nerv_kernels import transposed_forces
    from .approx_terms import Sums
    from .exact_kernels import kernel_params
    from .radial_kernels import W

    if not (cost or grad):
        return None, None
    form = plan.form
    kappa, eps = float(form.weight), float(form.eps)
    log_eps = math.log(eps)
    c = -math.log1p(-kappa)
    row = form.normalisation == "row"
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    kp = kernel_params()
    summer = _radial(engine, Y, eps)
    vec = vector_functions(summer)[0]  # WG, or W on a grid (.approx_nerv)
    Z, S, V = summer.sums(Sums(GAUSSIAN, kp, scalars=(W,), vectors=(vec,) if grad else ()))
    P, T, tpos, AB = stored_pairs(state)
    norm = S[:, 0] if row else np.full(n, Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_norm = np.log(norm)
    # at least the log-sum-exp of the stored pairs' weights, per row (.approx_nerv)
    floor = np.full(n, row)
    exact = exact_rows(summer, S[:, 0]) if row else np.empty(0, dtype=np.int64)
    if exact.size:  # every pair of the rows a grid does not resolve (.approx_nerv)
        ex_norm, ex_mass, _, Fa, _ = row_sums(Y, exact, eps)
        log_norm[exact] = ex_norm
        floor[exact] = False
    kq_stored, fwd_stored = np.empty(n), np.empty(n)
    FA, FB = np.empty((n, k)), np.empty((n, k))
    tpos, AB = (tpos, AB) if row and grad else NO_STORE  # (.approx_nerv)
    kern.jse_rows(*P, tpos, Y, f, log_norm.copy(), floor, kappa, eps, bool(cost), log_norm,
                  kq_stored, fwd_stored, FA, FB, AB)
    if row:
        norm = np.exp(log_norm)
    inv = np.divide(1.0, norm, out=np.zeros(n), where=norm > 0)
    inv[exact] = 0.0  # their all-pairs terms are summed apart
    kq = c * S[:, 0] * inv + kq_stored  # sum_j q log(q / M) per row (the dense engine's attribution)
    if exact.size:
        kq[exact] += c * ex_mass
    pcost = G = None
    if cost:
        pcost = (n * eps * log_eps + fwd_stored) / (1.0 - kappa) + kq / kappa
    if grad:
        shift = kq if row else np.full(n, kq.sum())
        a = -(c - shift) / kappa * inv  # the counted stiffness is a_i w_ij
        own = a[:, None] * V[:, 0]
        if exact.size:
            alpha = -(c - shift[exact]) / kappa
            own[exact] += alpha[:, None] * Fa
        stored = FA + shift[:, None] * FB
        if row:
            back = np.empty((n, k))  # sum_j dK_ji (y_i - y_j) over the stored (j, i)
            transposed_forces(*T, AB, Y, shift, back)
            other = _charged_forces(summer, kp, vec, a)
            if exact.size:
                other = other + column_sums(Y, exact, log_norm[exact], alpha,
                                            np.zeros(exact.size))
            G = 2.0 * (own + other + stored + back)
        else:
            G = 4.0 * (own + stored)
    return pcost, G
