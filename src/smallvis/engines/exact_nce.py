"""The fused exact engine's evaluation of NCVis's expected NCE cost (the pair form ``"nce"``; the
formulas of :mod:`smallvis.methods.ncvis`).

The cost is reported at the profile optimum ``Q*(Y)`` of the log-normaliser, the root of
``dC/dQ``: :func:`smallvis.methods.ncvis.profile_logz` runs the method's safeguarded Newton
iteration (warm-started from the previous evaluation) with ``dC/dQ`` and a slope from a pass over
the pairs (:func:`.exact_nce_kernels.nce_dq`, a few per evaluation): the slope makes its steps
Halley's (:func:`halley_slope`, from the third derivative the pass also sums), two passes from a
warm start where Newton's steps took three. The per-point costs and the forces come from
:func:`.exact_nce_kernels.nce_terms`: at the last iterate when a step below ``FUSE_STEP`` predicts
that it is the last (that pass then also gives the derivatives, the same bits as ``nce_dq``'s, so
the solve takes the same path: the costs and forces are those at an iterate within ``Q_TOL`` =
1e-13 of ``Q*``), else in one more pass at ``Q*``. The initial guess (first evaluation only) needs
``sum qhat``: the UMAP-curve weight total of :func:`.exact_kernels.kernel_total`. Nothing (n, n) is
formed besides P.
"""

from __future__ import annotations

import math

import numpy as np

from . import exact_nce_kernels as nk
from .output_kernel_functions import UMAP_KERNEL

# a (Halley) step below this makes the next one (about its cube: dC/dQ is a sum of sigmoids,
# whose derivatives are at most its own in size) fall below the profile's tolerance: that pass is
# the last, and also gives the costs and forces
FUSE_STEP = 1e-5


def halley_slope(F, dF, d2F):
    """The slope that makes the profile's Newton step ``F / slope`` Halley's step
    ``F / (dF - F d2F / (2 dF))`` (cubic convergence: one pass fewer from a warm start), or
    ``dF`` itself where the correction exceeds a quarter of it (far from the root)."""
    if dF > 0.0 and abs(F * d2F) <= 0.5 * dF * dF:
        return dF - F * d2F / (2.0 * dF)
    return dF


def evaluate_nce(form, state, P, Y, f, ws, *, cost, grad, X2=None):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of the NCE pair form at ``Y`` (``P``: the
    (n, n) symmetric data distribution, C-ordered; ``X2`` unused). Stores ``Q*`` in the state as
    the dense evaluation does."""
    from ..methods.ncvis import Q_TOL, profile_logz
    from . import exact_kernels as kern

    nu, corrected = form.params
    rows = state.data["row_mass"]  # the noise distribution: the unexaggerated row masses
    n, k = Y.shape
    chunks = ws.chunks
    Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
    if corrected:
        with np.errstate(divide="ignore"):
            lnp = math.log(nu) + np.log(rows / (n - 1))
    else:
        lnp = np.full(n, math.log(nu) - math.log(n * (n - 1.0)))
    neg = (nu / (n - 1)) * rows
    pos_sum = state.cached(("exact_nce", "pos"), f, lambda: f * float(P.sum() - np.trace(P)))
    neg_sum = float(neg.sum()) * (n - 1)
    prm = np.zeros(nk.N_PARAMS)
    prm[nk.F], prm[nk.A], prm[nk.B] = f, form.a, form.b

    def scale(Q):  # e^t = qhat e^(-log(nu pi_i) - Q) (inf on a row without noise: never read)
        with np.errstate(over="ignore"):
            return np.exp(-lnp - Q)

    G = np.empty((n, k)) if grad else np.empty((0, 0))
    pcost = np.empty(n) if cost else np.empty(0)
    fused = []  # the Q of a pass that also gave the costs and forces (into pcost, G)

    def terms(Q, want_dq):
        return nk.nce_terms(Yt, P, scale(Q), neg, prm, ws.bounds, bool(cost), bool(grad),
                            want_dq, ws("d2", chunks, n), ws("g", chunks, n), ws("kk", chunks, n),
                            ws("cc", chunks, n), ws("fa", chunks, n), ws("fb", chunks, n),
                            ws("fc", chunks, n),
                            ws("gbuf", chunks, k, n), ws("cbuf", chunks, n), G, pcost)

    last = []  # the previous pass's Q and step

    def dQ(Q):
        if last and abs(Q - last[0]) <= FUSE_STEP and abs(last[1]) <= FUSE_STEP:
            F, dF, d2F = terms(Q, True)  # after a step this small the next is below Q_TOL
            fused[:] = [Q]
        else:
            F, dF, d2F = nk.nce_dq(Yt, P, scale(Q), neg, prm, ws.bounds, ws("d2", chunks, n),
                                   ws("g", chunks, n), ws("kk", chunks, n), ws("cc", chunks, n),
                                   ws("fa", chunks, n))
            fused.clear()
        dF = halley_slope(F, dF, d2F)
        last[:] = [Q, F / dF if dF > 0.0 else np.inf]
        return F, dF

    def guess():
        kp = kern.kernel_params(a=form.a, b=form.b)
        log_z = math.log(kern.kernel_total(Yt, UMAP_KERNEL, kp, ws.bounds,
                                           ws("d2", chunks, n))) if n > 1 else 0.0
        return log_z - math.log(pos_sum) if pos_sum > 0 else log_z

    Q = profile_logz(state, dQ, guess, pos_sum, neg_sum)
    if not (fused and abs(Q - fused[0]) <= Q_TOL):  # else the last pass gave them, within Q_TOL
        terms(Q, False)
    return (pcost if cost else None), (G if grad else None)
