"""Per-point output bandwidths on the Barnes-Hut engine (plans ``"bandwidth"`` and
``"bandwidth-row"`` of :func:`.approx.approx_plan`): btsne, bssne (Q over all pairs, P
symmetric) and basne, btasne (Q per row, P conditional), whose output weights
``w_ij = w(beta_i d2_ij)`` use the input precision of the row's point (or the method's constant
``beta``).

With ``g`` the kernel's ``-d log w / d d2``, ``phi = w g`` and ``dy = y_i - y_j``, the dense
stiffness ``K_ij = 2 (f P_ij - q_ij) beta_i g(beta_i d2_ij)``, symmetrised, gives

.. math::
    G_i = 2 f \\sum_j (P_{ij} g_{ij} + P_{ji} g_{ji}) dy
        - 2 \\frac{\\beta_i}{Z_i} \\sum_j \\phi(\\beta_i d^2_{ij}) dy
        - 2 \\sum_j \\frac{\\beta_j}{Z_j} \\phi(\\beta_j d^2_{ij}) dy

with ``g_ij = beta_i g(beta_i d2_ij)``, ``Z_i = sum_j w(beta_i d2_ij)`` per row, or ``Z = sum_i
Z_i`` for every ``i`` over the matrix. The first sum runs over the stored entries of P and of its
transpose (:func:`.approx_bandwidth_kernels.stored_attraction`); the second is a Barnes-Hut sum
at the query point's precision, each summarised cell evaluated at ``beta_i`` (exact as far as the
tree goes: :func:`.bh_radial_kernels.radial_sums` with ``beta``); the third carries the sources'
precisions, which a cell summarises by the first two moments of its sources' ``log beta``
(:func:`.approx_bandwidth_kernels.source_sums`; leaves are summed point by point, so ``theta = 0``
is exact). Costs are the dense engine's over the stored entries: by columns over the matrix, by
rows per row (the dense engine's attribution), less its ``eps`` terms on the pairs P does not store.
Q's floor at ``eps`` (Gaussian kernels) applies to the cost only, as for the other non-radial
floors (docs/deviations.md).

bnerv (a NeRV ``MixtureForm`` with bandwidths) takes the row plan: :mod:`.approx_bnerv`. The
FFT engine refuses them (:func:`refusal`, with what was measured).
"""

from __future__ import annotations

import numpy as np

from .approx_bandwidth_tree import bandwidth_tree, prepared
from .radial_kernels import W, WG

ENGINES = ("bh",)


def refusal(engine: str, form) -> str | None:
    """Why ``engine`` cannot run a bandwidth plan (None: it can)."""
    if engine in ENGINES:
        return None
    return ("its output kernel has per-point bandwidths, w(beta_i d2_ij): not a function of the "
            "output distance alone, which the interpolation grid needs. One grid per precision "
            "(at sqrt(beta) Y, interpolated in log beta; docs/engines.md) reached 1e-4 of the "
            "gradient but took 9x to 15x tsne's time at 20,000 points (bh 4x to 8x), and its "
            "grid grows with the largest precision times the embedding's area (btsne on digits: "
            "10x bh's time per iteration); engine 'bh' runs it")


def evaluate_bandwidth(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of a bandwidth plan at ``Y``."""
    from .approx_bandwidth_kernels import stored_attraction, stored_cross

    if not (cost or grad):
        return None, None
    form = plan.form
    if getattr(form, "divergence", None) == "nerv":  # bnerv
        from .approx_bnerv import evaluate_bnerv

        return evaluate_bnerv(engine, plan, method, state, Y, f, cost=cost, grad=grad)
    prep = prepared(method, state, form)
    beta, kp, code = prep["beta"], prep["kp"], form.kernel
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    tree = bandwidth_tree(engine, Y, beta, form.eps)
    row = form.normalisation == "row"
    S, V = tree.query(code, kp, scalars=(W,), vectors=(WG,) if grad else ())
    if row:
        Zi = S[:, 0]
        inv = np.divide(1.0, Zi, out=np.zeros(n), where=Zi > 0)  # underflowed rows add nothing
    else:
        Z = float(S[:, 0].sum()) + tree.eps
        inv = np.full(n, 1.0 / Z)
    G = pcost = None
    if grad:
        A, At = np.empty((n, k)), np.empty((n, k))
        stored_attraction(*prep["P"], Y, code, kp, beta, True, A)
        stored_attraction(*prep["Pt"], Y, code, kp, beta, False, At)
        fg = f if form.exaggerate_forces else 1.0
        Vb = tree.source(code, kp, WG, inv if row else None)
        if not row:
            Vb *= inv[0]
        G = 2.0 * (fg * (A + At) - (beta * inv)[:, None] * V[:, 0] - Vb)
    if cost:
        cross = np.empty(n)
        with np.errstate(divide="ignore"):
            log_z = np.log(Zi) if row else np.array([np.log(Z)])
        # per row: point i's own row of P, q_ij at beta_i; over the matrix: point j's column,
        # the rows of P^T, q_ij at beta_i (the other point's)
        stored_cross(*prep["P" if row else "Pt"], Y, code, kp, beta, row, log_z,
                     bool(form.clamp_q), float(form.eps), cross)
        with np.errstate(divide="ignore"):
            logf = np.log(f) if f > 0 else 0.0
        pcost = f * (prep["plogp"] + logf * prep["colsum"]) - f * cross
    return pcost, G
