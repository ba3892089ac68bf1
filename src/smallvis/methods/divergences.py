"""Divergences between input affinities P and output weights W, in force form.

Each divergence returns per-point costs and the stiffness ``K`` with ``grad_i = sum_j K_ij (y_i - y_j)``,
given the kernel's gradient factor ``g = -d log w / d d^2``. ``P`` arrives already multiplied by the
exaggeration factor.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy


def plogp_constant(P: np.ndarray, eps: float) -> np.ndarray:
    """Column sums of ``P_c log P_c`` with ``P_c = max(P, eps)`` (the original's clamped constant term).

    Accumulated row by row, the order of ``np.sum(..., axis=0)`` on a C-ordered (n, n) array (the
    same bits), without its three (n, n) temporaries."""
    P = np.asarray(P)
    if P.ndim != 2 or not P.flags.c_contiguous:
        Pc = np.maximum(P, eps)
        return np.sum(Pc * np.log(Pc), axis=0)
    total = np.zeros(P.shape[1])
    for row in P:
        pc = np.maximum(row, eps)
        total += pc * np.log(pc)
    return total


def output_probabilities(W: np.ndarray, normalisation: str, clamp: float | None) -> np.ndarray:
    """``Q = W / Z`` with ``Z`` the total (``"matrix"``) or each row's sum (``"row"``), optionally floored."""
    if normalisation == "row":
        Q = W / W.sum(axis=1, keepdims=True)
    else:
        Q = W / W.sum()
    if clamp is not None:
        np.maximum(Q, clamp, out=Q)
        np.fill_diagonal(Q, 0.0)
    return Q


class KL:
    """``KL(P || Q)`` with ``Q = W / Z`` normalised over the whole matrix or per row.

    .. math::
        C = \\sum_{ij} P_{ij} \\log (P_{ij} / Q_{ij}), \\qquad
        K = 4 (P - Q) \\circ g \\ (\\text{symmetric } P, Q), \\quad
        K = 2 (P - Q) \\circ g + [2 (P - Q) \\circ g]^T \\ \\text{otherwise}

    Per-point costs are column sums of the pair terms; with row normalisation the cross term is
    attributed by rows (the original's mixed attribution; the total is the same).
    """

    name = "kl"

    def __init__(self, normalisation: str = "matrix"):
        self.normalisation = normalisation

    def terms(self, P, W, g, constant, eps, *, clamp_q, symmetric, cost, grad):
        Q = output_probabilities(W, self.normalisation, eps if clamp_q else None)
        pcost = K = None
        if cost:
            logQ = Q.copy()
            np.fill_diagonal(logQ, 1.0)
            cross = xlogy(P, logQ)
            pcost = constant - (cross.sum(axis=1) if self.normalisation == "row" else cross.sum(axis=0))
        if grad:  # built in place to limit (n, n) temporaries
            K = np.multiply(Q, -1.0)
            K += P
            K *= g
            if symmetric and self.normalisation == "matrix":
                K *= 4.0
            else:
                K *= 2.0
                K += K.T.copy()
        return pcost, K
