"""NeRV on the sparse-P engines (plan ``"nerv"`` of :func:`.approx.approx_plan`): nerv, snerv and
rsrnerv, ``lambda KL(P || Q) + (1 - lambda) KL(Q || P)`` with a Gaussian ``Q`` normalised per row
(nerv, rsrnerv) or over all pairs (snerv) and ``P`` floored at ``eps``.

On a pair P does not store, ``P = eps`` and both terms are functions of ``q`` alone:
``lambda eps (log eps - log q) + (1 - lambda) q log(q / eps)``, with ``log q = log w - log N_i``
(``w = exp(-d2)``, ``N_i`` the row's or the matrix's normaliser). So every pair is first counted as
if P stored nothing there, from the engine's all-pairs sums ``S = sum_j w``, ``sum_j w log w``,
``V = sum_j w (y_i - y_j)`` and ``VL = sum_j w log w (y_i - y_j)`` and the moments of Y
(``sum_j d2_ij``, ``sum_j (y_i - y_j)``), and the stored pairs then add the difference between
their true term and that one (:mod:`.approx_nerv_kernels`). With the row form of the stiffness
``k_ij = lambda (P - q) + (1 - lambda) q (log(P / q) + s_i)`` (``s_i`` the reverse KL of row i,
or its total over the matrix), on a pair P does not store
``k_ij = lambda eps + a_i w_ij + b_i (w log w)_ij`` with
``a_i = (-lambda + (1 - lambda)(log eps + log N_i + s_i)) / N_i`` and ``b_i = -(1 - lambda) / N_i``;
the gradient is ``2 sum_j (k_ij + k_ji) (y_i - y_j)`` per row (the transposed sums carry the
charges ``a_j``, ``b_j``) or ``4 sum_j k_ij (y_i - y_j)`` over the matrix.

Q's floor at ``eps`` (the dense engine's ``log max(q, eps)``) applies on the stored pairs only: on
the others an unfloored ``q < eps`` changes the cost and the forces by less than ``eps`` per pair
(docs/deviations.md).
"""

from __future__ import annotations

import math

import numpy as np

from .radial_kernels import W, W_LOG_W, WG, WG_LOG_W

GAUSSIAN = 1
# the stored-pair passes' tpos and AB where AB is not read (no transposed forces): not written
NO_STORE = (np.empty(0, dtype=np.int64), np.empty((0, 2)))
_DATA_KEY = "_sparse_engine_pairs"
_LOG_P_KEY = "_sparse_engine_nerv_log_p"
# a row-normalised Q on a grid whose sums are exact to an absolute error (the FFT engine's,
# ``signed_charges``) sums every pair of the rows whose grid sum of weights is under this
# (:func:`exact_rows`)
GRID_RESOLVED = 0.1


def stored_pairs(state):
    """``(P, T, tpos, AB)``, made once per state: P's CSR arrays ``(indptr, indices, data)`` (column
    indices sorted), ``T = (cols, starts)`` and ``tpos`` its entries in the order of blocks of
    columns (:func:`.approx_nerv_kernels.column_blocks`) and the per-entry buffer ``AB`` (nnz, 2) of
    the stiffness ``A + s B`` in that order (:func:`.approx_nerv_kernels.nerv_rows`), read by the
    transposed forces (:func:`.approx_nerv_kernels.transposed_forces`)."""
    if _DATA_KEY not in state.data:
        from scipy import sparse

        from .approx_nerv_kernels import column_blocks
        from .attraction_kernels import csr_arrays

        P = sparse.csr_matrix(state.P, dtype=np.float64)
        if P.shape[0] != P.shape[1]:
            raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
        P.sum_duplicates()  # canonical: sorted column indices
        arrays = csr_arrays(P)
        tpos, cols, starts = column_blocks(arrays[0], arrays[1], P.shape[0])
        state.data[_DATA_KEY] = (arrays, (cols, starts), tpos, np.empty((P.nnz, 2)))
    return state.data[_DATA_KEY]


def _log_p(state, data, f, eps):
    """``log max(f P, eps)`` per stored entry, made once per exaggeration ``f``."""
    held = state.data.get(_LOG_P_KEY)
    if held is None or held[0] != (f, eps):
        from .approx_nerv_kernels import log_p

        out = np.empty(data.shape[0])
        log_p(data, f, eps, out)
        held = state.data[_LOG_P_KEY] = ((f, eps), out)
    return held[1]


def _charged_forces(summer, kp, fn, c):
    """``sum_{j != i} c_j fn(d2_ij) (y_i - y_j)`` for charges of any sign: one request where the
    sums are linear in the charges (``signed_charges``: the FFT grid's); else the positive and
    negative charges summed apart (a tree summarises a cell by its charge-weighted centre)."""
    from .approx_terms import Sums

    if getattr(summer, "signed_charges", False):
        return summer.sums(Sums(GAUSSIAN, kp, vectors=(fn,), charges=c, total=False))[2][:, 0]
    total = None
    for sign in (1.0, -1.0):
        part = np.maximum(sign * c, 0.0)
        if not part.any():
            continue
        V = sign * summer.sums(Sums(GAUSSIAN, kp, vectors=(fn,), charges=part,
                                    total=False))[2][:, 0]
        total = V if total is None else total + V
    return 0.0 if total is None else total


def vector_functions(summer):
    """The radial functions of the force sums: ``WG`` and ``WG_LOG_W``, which for the Gaussian
    (``g = 1``) are ``W`` and ``W_LOG_W``, asked for as such on a grid (``signed_charges``), whose
    requests then share two kernel spectra."""
    return (W, W_LOG_W) if getattr(summer, "signed_charges", False) else (WG, WG_LOG_W)


def exact_rows(summer, S0):
    """The rows whose all-pairs sums are taken over every pair rather than from ``summer``: on a
    grid (``signed_charges``: sums with an absolute error), those whose sum of weights ``S0`` is
    under :data:`GRID_RESOLVED` (or not finite). A row-normalised Q divides them by that sum: a
    point far from every other (``S0`` 1e-16 at 70,000 points, grid error 3e-13) would get
    forces of 1e134 and charge its neighbours with them; a tree's error is relative and keeps its
    sums (none are listed)."""
    if not getattr(summer, "signed_charges", False):
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(~(S0 >= GRID_RESOLVED)).astype(np.int64)


def row_sums(Y, rows, eps):
    """``(log_norm, mass, rev, Fa, Fd)`` of :func:`.approx_nerv_kernels.row_terms` at ``rows``."""
    from .approx_nerv_kernels import row_terms

    m, k = rows.shape[0], Y.shape[1]
    order = np.argsort(Y[:, 0], kind="stable")
    out = np.empty(m), np.empty(m), np.empty(m), np.empty((m, k)), np.empty((m, k))
    row_terms(Y, order, np.ascontiguousarray(Y[order, 0]), rows, math.log(eps), *out)
    return out


def column_sums(Y, rows, log_norm, alpha, beta):
    """``sum_r (alpha_r - beta_r d2) q_ir (y_i - y_r)`` at every point ``i`` over the listed rows
    ``r`` (:func:`.approx_nerv_kernels.column_terms`)."""
    from .approx_nerv_kernels import CUT, column_terms

    by_x = np.argsort(Y[rows, 0], kind="stable")
    log_norm = np.ascontiguousarray(log_norm[by_x], dtype=np.float64)
    reach = math.sqrt(max(0.0, float(np.max(CUT - log_norm, initial=0.0))))
    F = np.empty(Y.shape)
    column_terms(Y, np.ascontiguousarray(rows[by_x]), np.ascontiguousarray(Y[rows[by_x], 0]),
                 reach, log_norm, np.ascontiguousarray(np.asarray(alpha)[by_x], dtype=np.float64),
                 np.ascontiguousarray(np.asarray(beta)[by_x], dtype=np.float64), F)
    return F


def evaluate_nerv(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of NeRV at ``Y``, exaggeration ``f``."""
    from .approx_terms import Sums
    from .exact_kernels import kernel_params

    if not (cost or grad):
        return None, None
    form = plan.form
    lam, eps = float(form.weight), float(form.eps)
    log_eps = math.log(eps)
    row = form.normalisation == "row"
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    kp = kernel_params()
    summer = engine.radial(Y, eps)
    vec = vector_functions(summer)
    Z, S, V = summer.sums(Sums(GAUSSIAN, kp, scalars=(W, W_LOG_W), vectors=vec if grad else ()))
    from . import approx_nerv_kernels as kern

    P, T, tpos, AB = stored_pairs(state)
    norm = S[:, 0] if row else np.full(n, Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_norm = np.log(norm)
    # a row's log N_i is at least the log-sum-exp of its stored pairs' weights, where sums of w
    # underflow (a point far from every other) or interpolate to 0
    floor = np.full(n, row)
    exact = exact_rows(summer, S[:, 0]) if row else np.empty(0, dtype=np.int64)
    if exact.size:  # every pair of the rows the grid does not resolve
        ex_norm, _, ex_rev, Fa, Fd = row_sums(Y, exact, eps)
        log_norm[exact] = ex_norm  # over every pair: at least the stored ones' lse
        floor[exact] = False
    # one pass over the stored pairs: the floored normalisers, the reverse KL per row (every
    # pair at P = eps, then the stored pairs' difference) and the rows' own stored forces
    rev_stored, fwd_stored = np.empty(n), np.empty(n)
    FA, FB = np.empty((n, k)), np.empty((n, k))
    # the stiffness per entry in the column blocks' order: only a row-normalised Q's transposed
    # forces read it
    tpos, AB = (tpos, AB) if row and grad else NO_STORE
    kern.nerv_rows(*P, tpos, _log_p(state, P[2], f, eps), Y, f, log_norm.copy(), floor, eps, lam,
                   bool(cost), log_norm, rev_stored, fwd_stored, FA, FB, AB)
    if row:
        norm = np.exp(log_norm)
    # a row whose normaliser underflows has all-pairs sums 0: they add nothing (not 0 / 0)
    inv = np.divide(1.0, norm, out=np.zeros(n), where=norm > 0)
    inv[exact] = 0.0  # their all-pairs terms are summed apart
    rev = (S[:, 1] - (log_norm + log_eps) * S[:, 0]) * inv + rev_stored
    if exact.size:
        rev[exact] += ex_rev
    Yc = Y - Y.mean(axis=0)
    pcost = G = None
    if cost:
        d2sum = n * np.einsum("ij,ij->i", Yc, Yc) + np.sum(Yc * Yc)  # sum_j d2_ij
        fwd = lam * (eps * ((n - 1) * (log_eps + log_norm) + d2sum) + fwd_stored)
        pcost = fwd + (1.0 - lam) * rev
    if grad:
        shift = rev if row else np.full(n, rev.sum())
        a = (-lam + (1.0 - lam) * (log_eps + log_norm + shift)) * inv
        b = -(1.0 - lam) * inv
        moment = n * Yc  # sum_j (y_i - y_j)
        own = lam * eps * moment + a[:, None] * V[:, 0] + b[:, None] * V[:, 1]
        if exact.size:  # the stiffness (alpha + beta log w) q with a = alpha / N, b = beta / N
            alpha = -lam + (1.0 - lam) * (log_eps + log_norm[exact] + shift[exact])
            beta = np.full(exact.size, -(1.0 - lam))
            own[exact] += alpha[:, None] * Fa - beta[:, None] * Fd
        stored = FA + shift[:, None] * FB
        if row:
            other = (lam * eps * moment + _charged_forces(summer, kp, vec[0], a)
                     + (_charged_forces(summer, kp, vec[1], b) if lam != 1.0 else 0.0))
            if exact.size:
                other = other + column_sums(Y, exact, log_norm[exact], alpha, beta)
            back = np.empty((n, k))  # sum_j dk_ji (y_i - y_j) over the stored (j, i)
            kern.transposed_forces(*T, AB, Y, shift, back)
            G = 2.0 * (own + other + stored + back)
        else:
            G = 4.0 * (own + stored)
    return pcost, G
