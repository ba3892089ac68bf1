"""Element-wise matrix helpers with the original's diagonal conventions
(docs/original.md#diagonal-handling).

Pair matrices have a meaningless diagonal (i = j). The original evaluates logs, ratios and powers with
a placeholder on the diagonal and then zeroes it, so that self-pairs never produce inf or NaN and never
contribute to a sum. These helpers do the same, without warnings.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp


def _with_diagonal(M: np.ndarray, value: float) -> np.ndarray:
    M = np.array(M, dtype=np.float64, copy=True)
    np.fill_diagonal(M, value)
    return M


def logm(M: np.ndarray) -> np.ndarray:
    """``log(M)`` with a zero diagonal."""
    with np.errstate(divide="ignore"):
        L = np.log(_with_diagonal(M, 1.0))
    np.fill_diagonal(L, 0.0)
    return L


def divm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A / B`` with a zero diagonal."""
    with np.errstate(divide="ignore", invalid="ignore"):
        R = _with_diagonal(A, 1.0) / _with_diagonal(B, 1.0)
    np.fill_diagonal(R, 0.0)
    return R


def powm(M: np.ndarray, a: float) -> np.ndarray:
    """``M ** a`` with a zero diagonal."""
    with np.errstate(divide="ignore"):
        R = _with_diagonal(M, 1.0) ** a
    np.fill_diagonal(R, 0.0)
    return R


def gaussian_probabilities(d2: np.ndarray, normalisation: str, eps: float,
                           beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian output probabilities ``Q`` (floored at eps, zero diagonal) and ``log Q``.

    ``Q_ij = exp(-beta_i d2_ij) / Z`` with ``Z`` the sum over the row (``"row"``) or over all pairs
    (``"matrix"``). The normaliser is a log-sum-exp over off-diagonal pairs, so rows whose
    distances are all large (where ``exp`` underflows to 0 and the plain formula gives 0/0) stay
    exact. ``log Q`` is ``log(max(Q, eps))`` with a zero diagonal.
    """
    A = -(d2 if beta is None else beta[:, None] * d2)
    np.fill_diagonal(A, -np.inf)
    if normalisation == "row":
        logZ = logsumexp(A, axis=1, keepdims=True)
    else:
        logZ = logsumexp(A)
    logQ = A - logZ
    np.maximum(logQ, np.log(eps), out=logQ)
    Q = np.exp(logQ)
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(logQ, 0.0)
    return Q, logQ
