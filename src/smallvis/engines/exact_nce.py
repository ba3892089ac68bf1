"""The fused exact engine's evaluation of NCVis's expected NCE cost (the pair form ``"nce"``; the
formulas of :mod:`smallvis.methods.ncvis`).

The cost is reported at the profile optimum ``Q*(Y)`` of the log-normaliser, the root of
``dC/dQ``: :func:`smallvis.methods.ncvis.profile_logz` runs the method's safeguarded Newton
iteration (warm-started from the previous evaluation) with ``dC/dQ`` and ``d2C/dQ2`` from a pass
over the pairs (:func:`.exact_nce_kernels.nce_dq`, a few per evaluation), and the per-point costs
and the forces come from :func:`.exact_nce_kernels.nce_terms`: at the last Newton iterate when a
step below ``FUSE_STEP`` predicts that it is the last (that pass then also gives ``dC/dQ``, the
same bits as ``nce_dq``'s, so Newton takes the same path: the costs and forces are those at an
iterate within ``Q_TOL`` = 1e-13 of ``Q*``), else in one more pass at ``Q*``. The initial guess (first evaluation only) needs
``sum qhat``: the UMAP-curve weight total of :func:`.exact_kernels.kernel_total`. Nothing (n, n) is
formed besides P.
"""

from __future__ import annotations

import math

import numpy as np

from . import exact_nce_kernels as nk
from .output_kernel_functions import UMAP_KERNEL

# a Newton step below this makes the next one (at most about half its square: d2C/dQ2 is at most
# dC/dQ's derivative in size, a sum of sigmoids) fall below the profile's tolerance: that pass is
# the last, and also gives the costs and forces
FUSE_STEP = 1e-7


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
                            ws("gbuf", chunks, k, n), ws("cbuf", chunks, n), G, pcost)

    last = []  # the previous pass's (Q, dC/dQ, d2C/dQ2)

    def dQ(Q):
        if last and abs(Q - last[0]) <= FUSE_STEP and abs(last[1]) <= FUSE_STEP * last[2]:
            F, dF = terms(Q, True)  # after a step this small the next is below Q_TOL: the last
            fused[:] = [Q]
        else:
            F, dF = nk.nce_dq(Yt, P, scale(Q), neg, prm, ws.bounds, ws("d2", chunks, n),
                              ws("g", chunks, n), ws("kk", chunks, n), ws("cc", chunks, n))
            fused.clear()
        last[:] = [Q, F, dF]
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
