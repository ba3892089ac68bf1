"""Numba kernels of the fused exact engine for the AB-divergence (absne, abssne; compiled on first
use and cached on disk): the row function :func:`row_ab`, which
:func:`.exact_pair_kernels.pair_pass` calls for the divergence codes from ``AB_BASE`` on, and the
per-point constants :func:`ab_constants`.

With ``p = f P_ij`` and ``q = w / Z`` (the Student-t weight, ``g = w``, or the Gaussian, ``g = 1``
and ``q`` floored at ``eps``), each branch of :mod:`smallvis.methods.absne` is a pair term ``A``
and a cost term of ``p`` and ``q``; the stiffness ``K = c g (A - q S)`` needs the global sum
``S = sum A``, known only after the pass, so the row function gives ``kk = c g A``, ``k2 = g q``
(the forces of ``k2`` come back apart: ``G = G_kk - c S G_k2``) and its share of ``S`` (the part
of ``S`` that depends on ``Y``; the rest comes from the constants). The Y-independent parts of the
per-point costs (sums over ``j`` of terms of ``p`` alone) are :func:`ab_constants`' rows, computed
once per exaggeration as the dense engine's cached constants are.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import EXPM1_NEAR, exp1, expm1_1, expm1_near, log1, pow1
from .output_kernel_functions import GAUSSIAN_KERNEL, power

# divergence codes of .exact_pair_kernels.pair_pass: AB_BASE + branch
AB_BASE = 30
# branches of smallvis.methods.absne (their names are the pair forms' divergences)
GENERAL, BETA0, LAMBDA0, ALPHA0, ZERO = range(5)
BRANCHES = {"absne": GENERAL, "absneb0": BETA0, "absneamb": LAMBDA0, "absnea0": ALPHA0,
            "absne00": ZERO}
# slots of the parameter vector: the exaggeration, eps, 1 / Z, alpha, beta, lambda, the offsets
# (0 or 1) of the expm1 forms of Q^beta and Q^lambda, P floored at eps (the general branch)
F, EPS, INV_Z, ALPHA, BETA, LAM, OB, OL, FLOOR = range(9)
N_PARAMS = 9


@njit(cache=True, error_model="numpy")
def row_q(gauss, inv_z, eps, d2, g, q, m):
    """``q[j]`` (the Gaussian floored at ``eps``, or the Student-t) and the kernel's ``g[j]``."""
    if gauss:
        for j in range(m):
            v = exp1(-d2[j]) * inv_z
            q[j] = eps if v < eps else v
            g[j] = 1.0
    else:
        for j in range(m):
            w = 1.0 / (1.0 + d2[j])
            g[j] = w
            q[j] = w * inv_z


@njit(cache=True, error_model="numpy")
def vpower(x, e, m):
    """``x[:m] = x[:m] ** e`` in place (:func:`.output_kernel_functions.power`'s cases, chosen
    outside the loops)."""
    if e == 1.0:
        return
    if e == 2.0:
        for j in range(m):
            x[j] = x[j] * x[j]
    elif e == 0.5:
        for j in range(m):
            x[j] = math.sqrt(x[j])
    elif e == -1.0:
        for j in range(m):
            x[j] = 1.0 / x[j]
    else:
        for j in range(m):
            x[j] = pow1(x[j], e)


@njit(cache=True, error_model="numpy", inline="always")
def gauss_q_power(d2, out, b, split, log_inv_z, log_eps, m):
    """``out[:m] = q^b`` of the floored Gaussian ``q = max(exp(-d2) / Z, eps)``, less 1 where
    ``split`` (``expm1(b log q)``), from ``log q = max(log(1/Z) - d2, log eps)`` (the grid's own
    form: no ``exp`` then ``log`` per entry); ``d2`` is overwritten with ``b log q``. ``log q``
    lies in ``[log eps, log(1/Z)]``: where ``|b|`` times the larger end's size is at most
    :data:`EXPM1_NEAR` (abssne's default ``b = 1e-5``), ``expm1``'s polynomial alone gives its
    bits."""
    for e in range(m):
        d2[e] = b * max(log_inv_z - d2[e], log_eps)
    if split and abs(b) * max(abs(log_eps), abs(log_inv_z)) <= EXPM1_NEAR:
        for e in range(m):
            out[e] = expm1_near(d2[e])
    elif split:
        for e in range(m):
            out[e] = expm1_1(d2[e])
    else:
        for e in range(m):
            out[e] = exp1(d2[e])


@njit(cache=True, error_model="numpy")
def vpow_part(q, x, split, out, tmp, m):
    """``out[:m] = q[:m] ** x`` less the offset 1 of the expm1 form (``split``: ``expm1(x log q)``,
    ``q > 0``) or whole, the case chosen outside the loops. The expm1 form is a log pass into the
    scratch ``tmp`` then an expm1 pass from it (one loop of both, or an expm1 pass in place, does
    not vectorise: 4x slower)."""
    if split:
        for j in range(m):
            tmp[j] = x * log1(q[j])
        for j in range(m):
            out[j] = expm1_1(tmp[j])
    else:
        for j in range(m):
            out[j] = q[j]
        vpower(out, x, m)


@njit(cache=True, error_model="numpy", inline="always")
def _general_tail(a, lam, ol, ml, d2, kk, k2, cc, j):
    """The general branch's pair ``j`` given ``Q^l``'s part ``ml``: ``d2[j]`` holds ``P^a Q^b``
    (whole), ``cc[j]`` ``P^a Q^b / (a b)``; ``A = P^a Q^b - Q^l``."""
    g, q = kk[j], k2[j]
    cc[j] = ml / (a * lam) - cc[j]
    A = (d2[j] - ml) - ol
    kk[j] = (4.0 / a) * g * A
    k2[j] = g * q
    d2[j] = A


@njit(cache=True, error_model="numpy")
def row_ab(branch, wk, prm, xrow, d2, kk, k2, cc, m, want_cost):
    """One row's pairs: ``kk = c g A``, ``k2 = g q``, ``cc`` the Y-dependent cost term (with
    ``want_cost``), and the row's share of ``S`` (returned; ``d2`` is overwritten by its terms).
    ``wk``: the output weight (:data:`.exact_kernels.T_KERNEL` or ``GAUSSIAN_KERNEL``). ``q`` and
    ``g`` first (in ``k2`` and ``kk``), then one loop per branch: no branch inside a loop, so
    the loops vectorise."""
    f, eps, inv_z = prm[F], prm[EPS], prm[INV_Z]
    a, b, lam = prm[ALPHA], prm[BETA], prm[LAM]
    ob, ol, floor = prm[OB], prm[OL], prm[FLOOR] != 0.0
    row_q(wk == GAUSSIAN_KERNEL, inv_z, eps, d2, kk, k2, m)
    if branch == GENERAL:  # c = Q^l / (a l) - P^a Q^b / (a b); A = P^a Q^b - Q^l
        # loops each of one form (the powers' cases chosen outside them), so that they vectorise:
        # Q^b's part in cc (d2 its scratch), P^a in d2, then P^a Q^b (plus P^a with the expm1
        # form of Q^b)
        if wk == GAUSSIAN_KERNEL:  # log q from d2 (no log of the exp), d2 its scratch
            gauss_q_power(d2, cc, b, ob != 0.0, log1(inv_z), log1(eps), m)
        else:
            vpow_part(k2, b, ob != 0.0, cc, d2, m)
        if floor:
            for j in range(m):
                d2[j] = max(f * xrow[j], eps)
        else:
            for j in range(m):
                d2[j] = f * xrow[j]
        vpower(d2, a, m)
        for j in range(m):
            pa = d2[j]
            pamb = pa * cc[j]
            cc[j] = pamb / (a * b)
            d2[j] = pamb + ob * pa
        if ol != 0.0:
            for j in range(m):
                _general_tail(a, lam, ol, expm1_1(lam * log1(k2[j])), d2, kk, k2, cc, j)
        elif lam == 1.0:
            for j in range(m):
                _general_tail(a, lam, ol, k2[j], d2, kk, k2, cc, j)
        else:
            for j in range(m):
                _general_tail(a, lam, ol, power(k2[j], lam), d2, kk, k2, cc, j)
    elif branch == BETA0:  # c = (Q^a - P^a log Q^a) / a^2; A = P^a - Q^a; S = sum P^a - sum Q^a
        for j in range(m):
            g, q, p = kk[j], k2[j], f * xrow[j]
            pa = power(max(p, eps), a)
            qa = power(q, a)
            if want_cost:
                cc[j] = (qa - pa * log1(qa)) / (a * a)
            kk[j] = (4.0 / a) * g * (pa - qa)
            k2[j] = g * q
            d2[j] = qa
    elif branch == LAMBDA0:  # R = P^a / Q^a; c = (log Q^a + R) / a^2; A = R - 1
        for j in range(m):
            g, q, p = kk[j], k2[j], f * xrow[j]
            pa = power(max(p, eps), a)
            qa = power(q, a)
            r = pa / qa if qa > 0.0 else pa
            if want_cost:
                cc[j] = (log1(qa) + r) / (a * a)
            kk[j] = (4.0 / a) * g * (r - 1.0)
            k2[j] = g * q
            d2[j] = r
    elif branch == ALPHA0:  # c = (Q^b log Q^b - Q^b log P^b - Q^b) / b^2; A = Q^b log(P^b/Q^b)
        for j in range(m):
            g, q, p = kk[j], k2[j], f * xrow[j]
            lpb = log1(max(power(max(p, eps), b), eps))
            qb = power(q, b)
            qlq = qb * log1(qb)
            qlp = qb * lpb
            A = qlp - qlq
            if want_cost:
                cc[j] = (qlq - qlp - qb) / (b * b)
            kk[j] = (4.0 / b) * g * A
            k2[j] = g * q
            d2[j] = A
    else:  # log-Euclidean: A = log P - log Q; c = A^2 / 2
        for j in range(m):
            g, q, p = kk[j], k2[j], f * xrow[j]
            A = log1(max(p, eps)) - log1(q)
            if want_cost:
                cc[j] = 0.5 * A * A
            kk[j] = 4.0 * g * A
            k2[j] = g * q
            d2[j] = A
    return pairwise_sum(d2, m)


@njit(parallel=True, cache=True, error_model="numpy")
def ab_constants(P, branch, prm):
    """Per point (rows, P symmetric: the dense engine's column sums), over ``j != i``: column 0 the
    Y-independent part of the cost, column 1 ``sum_j P^alpha`` (the constant part of ``S`` in the
    ``beta = 0`` branch). Rows are independent: the result does not depend on the threads."""
    n = P.shape[0]
    f, eps = prm[F], prm[EPS]
    a, b, lam = prm[ALPHA], prm[BETA], prm[LAM]
    floor = prm[FLOOR] != 0.0
    out = np.zeros((n, 2))
    for i in prange(n):
        s1 = 0.0
        s2 = 0.0
        for j in range(n):
            if j == i:
                continue
            p = f * P[i, j]
            if branch == GENERAL:  # sum P^lambda, sum P^alpha
                pp = max(p, eps) if floor else p
                s1 += power(pp, lam)
                s2 += power(pp, a)
            elif branch == BETA0:  # sum Pc log P^a, sum P^a (Pc = max(P, eps))
                pc = max(p, eps)
                pa = power(pc, a)
                s1 += pc * math.log(pa)
                s2 += pa
            elif branch == LAMBDA0:  # sum log max(P^a, eps)
                s1 += math.log(max(power(max(p, eps), a), eps))
            elif branch == ALPHA0:  # sum max(P^b, eps)
                s1 += max(power(max(p, eps), b), eps)
        if branch == GENERAL:
            out[i, 0] = (s1 / (b * lam) - prm[OB] * s2 / (a * b)
                         + prm[OL] * (n - 1) / (a * lam))
            out[i, 1] = s2
        elif branch == BETA0:
            out[i, 0] = (s1 - s2) / (a * a)
            out[i, 1] = s2
        elif branch == LAMBDA0:
            out[i, 0] = (-s1 - n) / (a * a)
        elif branch == ALPHA0:  # the diagonal's max(0, eps) included, as the dense constant
            out[i, 0] = (s1 + eps) / (b * b)
    return out
