"""The fused exact engine's evaluation of g-SNE's ``SumForm`` (t-SNE's KL plus ``lambda`` times the
KL of the global affinities and the inverse Student-t weights) in two passes over the pairs
(:mod:`.exact_sum_kernels`) instead of two per term: the normalisers together, then the summed
stiffness's forces and both terms' cross sums. Any other ``SumForm`` is evaluated term by term.
"""

from __future__ import annotations

import numpy as np


def is_gsne(form, plans) -> bool:
    """True when ``form`` is t-SNE's KL (on P, exaggerated) plus a multiple of an inverse
    Student-t KL on another input, both plain and unclamped, their inputs dense (``"kl"`` plans)."""
    from ..methods.base import FusedForm
    from .output_kernel_functions import INVERSE_T_KERNEL, T_KERNEL

    if len(form.terms) != 2 or any(plan[0] != "kl" for plan in plans):
        return False
    (w1, t1), (_, t2) = form.terms
    return (w1 == 1.0 and all(isinstance(t, FusedForm) and t.plain and not t.clamp_q
                              and t.scale == 1.0 and t.grad_form is None for t in (t1, t2))
            and t1.kernel == T_KERNEL and t1.input == "P"
            and t2.kernel == INVERSE_T_KERNEL and t2.input != "P")


def evaluate_gsne(form, state, plans, Y, f, ws, cost, grad):
    """``(pcost or None, G or None)`` of the g-SNE ``SumForm`` (:func:`is_gsne`): the same
    per-point costs as the term-by-term evaluation; the gradient from one summed stiffness."""
    from . import exact_kernels as kern
    from . import exact_sum_kernels as sk

    (_, tsne), (lam, glob) = form.terms
    P, Pg = plans[0][2], plans[1][2]
    n, k = Y.shape
    chunks = ws.chunks
    Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
    Z, Zh = sk.gsne_totals(Yt, ws.bounds, ws("d2", chunks, n), ws("k2", chunks, n))
    G = np.empty((n, k)) if grad else np.empty((0, 0))
    cross = np.empty(n) if cost else np.empty(0)
    cross_h = np.empty(n) if cost else np.empty(0)
    sk.gsne_terms(P, Pg, Yt, f, float(lam), Z, Zh, ws.bounds, bool(cost), bool(grad),
                  ws("d2", chunks, n), ws("k2", chunks, n), ws("qh", chunks, n),
                  ws("kk", chunks, n), ws("gbuf", chunks, k, n), ws("cbuf", chunks, n),
                  ws("hbuf", chunks, n), G, cross, cross_h)
    pcost = None
    if cost:  # the constants and their cache keys of ExactEngine._kl (the global input: f = 1)
        const = state.cached("plogp_exact", f, lambda: kern.plogp_rows(P, f, tsne.eps))
        const_h = state.cached(("plogp_exact", glob.input), 1.0,
                               lambda: kern.plogp_rows(Pg, 1.0, glob.eps))
        pcost = (const - cross) + lam * (const_h - cross_h)
    return pcost, (G if grad else None)
