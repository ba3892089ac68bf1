"""g-SNE on the sparse-P engines (plan ``"gsne"`` of :func:`.approx.approx_plan`): t-SNE's KL (the
``kl`` plan's terms) plus lambda times the KL between the global affinities
``P^_ij = (1 + r2_ij) / S`` (``r2`` the squared input distance, ``S`` their sum over ``i != j``)
and the inverse Student-t weights ``1 + d2_ij`` normalised by ``Z^ = sum_{i != j} (1 + d2_ij)``.

The global term's force is ``-4 lambda (sum_j P^_ij w_ij (y_i - y_j) - sum_j (y_i - y_j) / Z^)``
with the Student-t ``w = 1 / (1 + d2)``. With the centred coordinates, ``sum_j (y_i - y_j)``,
``Z^`` and ``S`` are exact in O(n) from moments of X and Y, and
``sum_j (1 + r2_ij) w_ij (y_i - y_j) = (1 + |x_i|^2) V[1] - 2 sum_d x_id V[x_d] + V[|x|^2]`` is
``D + 2`` charged sums ``V[c]_i = sum_j c_j w_ij (y_i - y_j)`` of the engine (``D`` the input
dimension; each coordinate shifted to be non-negative, so a tree can summarise it by its
charge-weighted centre). Its cost needs ``sum_j P^_ij log(1 + d2_ij) = -sum_j P^_ij log w_ij``, the
same expansion with the radial function ``log w`` (one more scalar per charged request: the cost
and the gradient share the ``D + 2`` requests), and the constant ``sum_j P^ log P^`` once per run,
summed over all pairs by :func:`.global_kernels.global_plogp_rows` (O(n^2 D) time, O(n) memory).
"""

from __future__ import annotations

import math

import numpy as np

_PLOGP_KEY = "_sparse_engine_gsne_plogp"


def _moments(X, Y):
    """``(sum_j (y_i - y_j), S, Z^, |x_i|^2, sum |x|^2)`` (centred coordinates)."""
    n = X.shape[0]
    Yc = Y - Y.mean(axis=0)
    sx = np.einsum("ij,ij->i", X, X)
    sx2 = float(sx.sum())
    S = n * (n - 1.0) + 2.0 * n * sx2
    Zg = n * (n - 1.0) + 2.0 * n * float(np.sum(Yc * Yc))
    return n * Yc, S, Zg, sx, sx2


def _charged(summer, c, scalars, vectors):
    """``(S, V)``: ``S_i = sum_{j != i} c_j log w_ij`` (``scalars``; else None) and ``V_i = sum_{j
    != i} c_j w_ij (y_i - y_j)`` (``vectors``; else None), Student-t ``w``, for charges of any
    sign: one request where the sums are linear in the charges (``signed_charges``: the FFT
    grid's); else the positive and negative charges summed apart (a tree summarises a cell by its
    charge-weighted centre)."""
    from .approx_terms import Sums
    from .exact_kernels import kernel_params
    from .radial_kernels import ONE, W, q_code, q_params

    kp = q_params(kernel_params(), 0.0)  # log q with log Z = 0: log w
    req = dict(scalars=(q_code(ONE, 1),) if scalars else (), vectors=(W,) if vectors else (),
               total=False)
    signs = ((1.0, c),) if getattr(summer, "signed_charges", False) else (
        (1.0, np.maximum(c, 0.0)), (-1.0, np.maximum(-c, 0.0)))
    S = V = 0.0
    for sign, part in signs:
        if part.any():
            _, s, v = summer.sums(Sums(0, kp, charges=part, **req))
            S = S + sign * s[:, 0] if scalars else None
            V = V + sign * v[:, 0] if vectors else None
    return S, V


def _pair_sums(summer, X, sx, cost, grad):
    """``(L, T)``: ``L_i = sum_j (1 + r2_ij) log w_ij`` (``cost``) and ``T_i = sum_j (1 + r2_ij)
    w_ij (y_i - y_j)`` (``grad``), from the charged sums with the charges 1, ``|x_j|^2`` and each
    coordinate ``x_jd`` (``r2_ij = |x_i|^2 + |x_j|^2 - 2 x_i . x_j``; on a tree shifted to ``x_jd -
    min_j x_jd >= 0``, one sum each: ``V[x_d] = V[x_d - m] + m V[1]``)."""
    signed = getattr(summer, "signed_charges", False)
    L1, V1 = _charged(summer, np.ones(len(sx)), cost, grad)
    Ls, Vs = _charged(summer, sx, cost, grad)
    L = (1.0 + sx) * L1 + Ls if cost else None
    T = (1.0 + sx)[:, None] * V1 + Vs if grad else None
    for d in range(X.shape[1]):
        m = 0.0 if signed else float(X[:, d].min())
        Ld, Vd = _charged(summer, X[:, d] - m, cost, grad)
        if cost:
            L = L - 2.0 * X[:, d] * (Ld + m * L1)
        if grad:
            T = T - 2.0 * X[:, d:d + 1] * (Vd + m * V1)
    return L, T


def evaluate_gsne(engine, plan, tsne_plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of g-SNE at ``Y``, exaggeration ``f`` (of
    the t-SNE term only); ``tsne_plan``: the ``kl`` plan of its t-SNE term."""
    from .approx_terms import _kl_form, _prepared

    if not (cost or grad):
        return None, None
    lam = float(plan.form.terms[1][0])
    tsne = tsne_plan.form
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    prep = _prepared(tsne_plan, method, state)
    pcost, G = _kl_form(engine, tsne, method, state, prep, Y, f, cost, grad)
    X = state.data.get("X_global")
    if X is None:
        raise ValueError("method 'gsne': the state has no input coordinates for its global term "
                         "(prepare it with method.prepare_sparse)")
    n = Y.shape[0]
    moment, S, Zg, sx, sx2 = _moments(X, Y)
    L, T = _pair_sums(engine.radial(Y, method.eps), X, sx, cost, grad)
    if grad:
        G = G - (4.0 * lam) * (T / S - moment / Zg)
    if cost:
        from .global_kernels import global_plogp_rows

        if _PLOGP_KEY not in state.data:  # the diagonal's max(0, eps) as the dense constant has it
            plogp = np.empty(n)
            global_plogp_rows(X, np.ascontiguousarray(X.T), 1.0 / S, float(method.eps), plogp)
            state.data[_PLOGP_KEY] = plogp + float(method.eps) * math.log(float(method.eps))
        rows = ((n - 1.0) + n * sx + sx2) / S  # sum_j P^_ij
        pcost = pcost + lam * (state.data[_PLOGP_KEY] + L / S + math.log(Zg) * rows)
    return pcost, G
