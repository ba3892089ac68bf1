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
charge-weighted centre). Its cost needs
``sum_j P^_ij log(1 + d2_ij)``, which is no radial sum: it is summed over all pairs, exactly, by
:func:`.global_kernels.global_cost_rows` (O(n^2 (D + k)) time, O(n) memory) only when a cost is
asked for (the optimisers ask once per epoch), and the constant ``sum_j P^ log P^`` once per run.
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


def _charged(summer, c):
    """``sum_{j != i} c_j w_ij (y_i - y_j)`` (Student-t ``w``) for charges of any sign (a tree
    summarises a cell by its charge-weighted centre: the signs are summed apart)."""
    from .approx_terms import Sums
    from .exact_kernels import kernel_params
    from .radial_kernels import W

    total = 0.0
    for sign in (1.0, -1.0):
        part = np.maximum(sign * c, 0.0)
        if part.any():
            total = total + sign * summer.sums(
                Sums(0, kernel_params(), vectors=(W,), charges=part))[2][:, 0]
    return total


def _pair_forces(summer, X, sx):
    """``T_i = sum_j (1 + r2_ij) w_ij (y_i - y_j)`` from the charged sums with the charges 1,
    ``|x_j|^2`` and each coordinate ``x_jd`` (shifted to ``x_jd - min_j x_jd >= 0``, one sum each:
    ``V[x_d] = V[x_d - m] + m V[1]``)."""
    ones = _charged(summer, np.ones(len(sx)))
    T = (1.0 + sx)[:, None] * ones + _charged(summer, sx)
    for d in range(X.shape[1]):
        m = float(X[:, d].min())
        T = T - 2.0 * X[:, d:d + 1] * (_charged(summer, X[:, d] - m) + m * ones)
    return T


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
    moment, S, Zg, sx, sx2 = _moments(X, Y)
    if grad:
        T = _pair_forces(engine.radial(Y, method.eps), X, sx)
        G = G - (4.0 * lam) * (T / S - moment / Zg)
    if cost:
        from .global_kernels import global_cost_rows

        n = Y.shape[0]
        eps = float(method.eps)
        fresh = _PLOGP_KEY not in state.data
        cross, plogp = np.empty(n), np.empty(n)
        global_cost_rows(X, Y, 1.0 / S, eps, fresh, cross, plogp)
        if fresh:  # the diagonal's max(0, eps) as the dense constant has it
            state.data[_PLOGP_KEY] = plogp + eps * math.log(eps)
        rows = ((n - 1.0) + n * sx + sx2) / S  # sum_j P^_ij
        pcost = pcost + lam * (state.data[_PLOGP_KEY] - cross + math.log(Zg) * rows)
    return pcost, G
