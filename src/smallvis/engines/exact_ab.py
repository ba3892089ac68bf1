"""The fused exact engine's evaluation of the AB-divergence (absne, abssne: the pair forms whose
divergence names a branch of :mod:`smallvis.methods.absne`).

Two passes over the unordered pairs: the normaliser ``Z = sum W`` (Student-t or Gaussian weights),
then :func:`.exact_pair_kernels.pair_pass` with the row function of :mod:`.exact_ab_kernels`, which
returns the forces of ``c g A`` and of ``g q`` apart and the Y-dependent part of ``S = sum A``:
``G = G_1 - c S G_2``. The per-point constants (sums of terms of P alone) are computed once per
exaggeration by :func:`.exact_ab_kernels.ab_constants`, without an (n, n) temporary.
"""

from __future__ import annotations

import numpy as np

from . import exact_ab_kernels as abk
from .output_kernel_functions import GAUSSIAN_KERNEL, T_KERNEL

DIVERGENCES = tuple(abk.BRANCHES)


def _params(form, f):
    """The parameter vector of :mod:`.exact_ab_kernels` (``1 / Z`` filled in later)."""
    alpha, beta, lam, floor_p, split_beta, split_lam = form.params
    prm = np.zeros(abk.N_PARAMS)
    prm[abk.F], prm[abk.EPS] = f, form.eps
    prm[abk.ALPHA], prm[abk.BETA], prm[abk.LAM] = alpha, beta, lam
    prm[abk.OB] = 1.0 if split_beta else 0.0
    prm[abk.OL] = 1.0 if split_lam else 0.0
    prm[abk.FLOOR] = 1.0 if floor_p else 0.0
    return prm


def evaluate_ab(form, state, P, Y, f, ws, *, cost, grad, X2=None):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of an AB-divergence pair form at ``Y``
    (``P``: the (n, n) symmetric input, C-ordered; ``X2`` unused)."""
    from . import exact_kernels as kern

    branch = abk.BRANCHES[form.divergence]
    code = GAUSSIAN_KERNEL if form.weight == "gaussian" else T_KERNEL
    n, k = Y.shape
    Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
    prm = _params(form, f)
    prm[abk.INV_Z] = 1.0 / kern.weight_total(Yt, code, 1.0, ws.bounds, ws("d2", ws.chunks, n))
    S, G, pcost = ws.run(Yt, P, abk.AB_BASE + branch, code, prm, cost=cost, grad=grad,
                         two_forces=True)
    consts = state.cached(("exact_ab", form.divergence), f,
                          lambda: abk.ab_constants(P, branch, prm))
    if grad:
        alpha, beta = form.params[:2]
        if branch == abk.LAMBDA0:  # S = sum R - n (n - 1)
            S = S - n * (n - 1)
        elif branch == abk.BETA0:  # S = sum P^a - sum Q^a
            S = consts[:, 1].sum() - S
        scale = 4.0 / beta if branch == abk.ALPHA0 else 4.0 if branch == abk.ZERO else 4.0 / alpha
        G = G[:, :k] - (scale * S) * G[:, k:]
    if cost:
        pcost += consts[:, 0]
    return pcost, G
