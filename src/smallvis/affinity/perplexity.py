"""Gaussian perplexity calibration, exactly as the original's R path
(docs/original.md#perplexity-calibration).

For each point ``i`` a precision ``beta_i`` is found by bisection so that the Shannon entropy (nats) of
``p_j = exp(-beta_i D_ij) / Z`` over ``j != i`` equals ``log U_i``:

.. math:: H_i = \\log Z_i + \\beta_i \\sum_j D_{ij} w_{ij} / Z_i, \\qquad w_{ij} = e^{-\\beta_i D_{ij}}

The search starts point 1 at ``0.5 U / mean_j D_1j`` and every later point at the previous point's
converged ``beta``; it doubles/halves until bracketed, then bisects, for at most ``max_tries`` steps.
A point that does not reach ``|H - log U| <= tol`` gets weight ``1/floor(U)`` on its ``floor(U)``
nearest neighbours and ``dint = 0``. Alongside the affinities we return the analytic soft correlation
dimension ``dint_i = 2 beta_i^2 Var_p(D_i.)`` (docs/original.md#intrinsic-dimensionality-and-idp).

:func:`calibrate_rows_independent` is the original's dense C++ variant (``use_cpp=TRUE``):
the same bisection, but each point starts from its own ``0.5 U n / sum_j D_ij``, and a failed point's
fallback weights include the point itself.

Both take a full (n, n) matrix and are the NumPy reference implementations: the input kernels use
:func:`smallvis.affinity.blocked.calibrate_dense` (same numbers, numba, no distance matrix), while
the IDP and multiscale searches, which calibrate several perplexities on one distance matrix, use
:func:`calibrate_rows`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EPS = float(np.finfo(np.float64).eps)


@dataclass
class Calibration:
    """Result of a perplexity calibration.

    Attributes
    ----------
    V : ndarray (n, n)
        Un-normalised affinities ``exp(-beta_i D_ij)``, zero diagonal (except the self weight of a
        failed point in the independent calibration).
    beta : ndarray (n,) or None
        Precisions (the start value 1 is kept for a point whose calibration failed); None where the
        calibration does not record them (the independent/C++ path, the knn kernel).
    dint : ndarray (n,) or None
        Per-point soft correlation dimension (0 for failed points); None where not recorded.
    failed : ndarray of bool (n,)
        Points whose calibration did not reach the tolerance.
    """

    V: np.ndarray
    beta: np.ndarray | None
    dint: np.ndarray | None
    failed: np.ndarray

    @property
    def n_failed(self) -> int:
        return int(self.failed.sum())

    @property
    def P(self) -> np.ndarray:
        """Row-normalised (conditional) affinities."""
        return self.V / self.V.sum(axis=1, keepdims=True)


def _entropy(d: np.ndarray, beta: float):
    w = np.exp(-beta * d)
    Z = w.sum()
    if Z == 0.0:
        return 0.0, w, Z
    return math.log(Z) + beta * float(d @ w) / Z, w, Z


def _bisect(d: np.ndarray, logU: float, beta: float, tol: float, max_tries: int):
    """Bisection on the precision ``beta`` for one point's distances ``d`` (self excluded).

    Doubles/halves ``beta`` until the target entropy ``logU`` is bracketed, then bisects, for at most
    ``max_tries`` steps. Returns ``(beta, H, w, Z, converged)``.
    """
    bmin, bmax = -math.inf, math.inf
    H, w, Z = _entropy(d, beta)
    tries = 0
    while abs(H - logU) > tol and tries < max_tries:
        if H > logU:
            bmin = beta
            beta = beta * 2.0 if bmax == math.inf else (beta + bmax) / 2.0
        else:
            bmax = beta
            beta = beta / 2.0 if bmin == -math.inf else (beta + bmin) / 2.0
        H, w, Z = _entropy(d, beta)
        tries += 1
    return beta, H, w, Z, abs(H - logU) <= tol


def calibrate_rows(
    D: np.ndarray, perplexity: np.ndarray, *, tol: float = 1e-5, max_tries: int = 50
) -> Calibration:
    """Calibrate every row of the (n, n) matrix ``D`` used in ``exp(-beta D)`` (squared or plain distances).

    ``perplexity`` is an array of length n (one target per point). This is the original's R path
    (docs/original.md#perplexity-calibration): each point starts from the previous point's converged
    ``beta``.
    """
    n = D.shape[0]
    V = np.zeros((n, n))
    betas = np.ones(n)
    dint = np.zeros(n)
    failed = np.zeros(n, dtype=bool)
    mask = ~np.eye(n, dtype=bool)
    for i in range(n):
        d = D[i, mask[i]]
        U = float(perplexity[i])
        if i == 0:
            mean_d = d.mean()
            beta = 0.5 * U / mean_d if mean_d > 0 else 1.0
        else:
            beta = betas[i - 1]
        beta, H, w, Z, ok = _bisect(d, math.log(U), beta, tol, max_tries)
        if not ok:
            failed[i] = True
            nnbrs = max(int(math.floor(U)), 1)
            row = np.zeros(n - 1)
            row[np.argsort(d, kind="stable")[:nnbrs]] = 1.0 / nnbrs
            V[i, mask[i]] = row
            continue
        betas[i] = beta
        V[i, mask[i]] = w
        p = w / Z
        dint[i] = -2.0 * beta * float(np.sum(d * p * (np.log(p + EPS) + H)))
    return Calibration(V=V, beta=betas, dint=dint, failed=failed)


def calibrate_rows_independent(
    D2: np.ndarray, perplexity: np.ndarray, *, tol: float = 1e-5, max_tries: int = 50
) -> Calibration:
    """The original's dense C++ calibration (``use_cpp``): every point calibrated on its own.

    Same bisection, tolerance and number of tries as :func:`calibrate_rows`, but point ``i`` starts
    from ``beta_i = 0.5 U_i n / sum_j D2_ij`` (the sum includes the zero self-distance, so this is
    ``0.5 U_i`` over the mean of all ``n`` entries of the row), whatever the other points did. ``D2``
    must be squared distances. A point that fails gets weight 1 on its ``max(floor(U), 1)`` smallest
    entries of ``D2`` **including itself** (the usual row normalisation follows later), as the
    original does.

    Only the weights are produced: the returned :class:`Calibration` has ``beta = dint = None``.
    """
    n = D2.shape[0]
    V = np.zeros((n, n))
    failed = np.zeros(n, dtype=bool)
    mask = ~np.eye(n, dtype=bool)
    for i in range(n):
        U = float(perplexity[i])
        total = float(D2[i].sum())
        beta = 0.5 * U * n / total if total > 0 else 1.0
        d = D2[i, mask[i]]
        beta, H, w, Z, ok = _bisect(d, math.log(U), beta, tol, max_tries)
        if ok:
            V[i, mask[i]] = w
        else:
            failed[i] = True
            nnbrs = max(int(math.floor(U)), 1)
            V[i, np.argsort(D2[i], kind="stable")[:nnbrs]] = 1.0
    return Calibration(V=V, beta=None, dint=None, failed=failed)


def describe_perplexity(U: np.ndarray) -> str:
    """``"30"``, or ``"5-50 (per point)"`` for per-point perplexities (for log messages)."""
    return f"{U[0]:g}" if np.all(U == U[0]) else f"{U.min():g}-{U.max():g} (per point)"


def describe_sigma(beta: np.ndarray, failed: np.ndarray) -> str:
    """``"sigma min .., median .., max .."`` over the calibrated points (``sigma = 1/sqrt(beta)``)."""
    ok = ~failed
    if not ok.any():
        return "no point calibrated"
    sigma = 1.0 / np.sqrt(beta[ok])
    return (f"sigma min {sigma.min():.4g}, median {float(np.median(sigma)):.4g}, "
            f"max {sigma.max():.4g}")


def check_perplexity(perplexity, n: int) -> np.ndarray:
    """Validate a scalar or length-n perplexity and return it as a length-n float array."""
    U = np.asarray(perplexity, dtype=np.float64)
    if U.ndim == 0:
        U = np.full(n, float(U))
    elif U.ndim != 1 or U.shape[0] != n:
        raise ValueError(
            f"perplexity must be a number or a vector with one value per point ({n}); "
            f"got {U.shape[0] if U.ndim == 1 else U.shape} values"
        )
    if not np.all(np.isfinite(U)) or np.any(U < 1):
        # an effective number of neighbours: below 1 no distribution reaches it (log U < 0 is
        # an impossible entropy) and every point would end on the fallback weights
        bad = U[~(np.isfinite(U) & (U >= 1))]
        raise ValueError(f"perplexity must be finite and at least 1; got {bad[0]:g}")
    if np.any(U >= n):
        raise ValueError(
            f"perplexity {U.max():g} is too large for {n} points: it must be less than the number "
            f"of points (the largest reachable perplexity is {n - 1}); use a smaller perplexity"
        )
    return U
