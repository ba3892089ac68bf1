"""Divergences between input affinities P and output weights W, in force form.

Each divergence returns per-point costs (column sums over the pair terms, as the original reports them)
and the stiffness ``K`` with ``grad_i = sum_j K_ij (y_i - y_j)``, given the kernel's gradient factor
``g = -d log w / d d^2``. ``P`` arrives already multiplied by the exaggeration factor.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy


def plogp_constant(P: np.ndarray, eps: float) -> np.ndarray:
    """Column sums of ``P_c log P_c`` with ``P_c = max(P, eps)`` (the original's clamped constant term)."""
    Pc = np.maximum(P, eps)
    return np.sum(Pc * np.log(Pc), axis=0)


class NormalisedKL:
    """``KL(P || Q)`` with ``Q = W / Z``, ``Z = sum_ij W_ij`` (symmetric SNE family).

    .. math:: C = \\sum_{ij} P_{ij} \\log (P_{ij} / Q_{ij}), \\qquad
              K = 4 (P - Q) \\circ g
    """

    name = "kl"

    def __init__(self, clamp_q: bool = False):
        self.clamp_q = clamp_q

    def terms(self, P, W, g, constant, eps, *, cost, grad):
        Z = W.sum()
        Q = W / Z
        pcost = K = None
        if cost:
            Ql = np.maximum(Q, eps) if self.clamp_q else Q
            np.fill_diagonal(Ql, 1.0)
            pcost = constant - np.sum(xlogy(P, Ql), axis=0)
        if grad:  # K = 4 (P - Q) g, built in place to limit (n, n) temporaries
            K = np.multiply(Q, -1.0)
            K += P
            K *= g
            K *= 4.0
        return pcost, K
