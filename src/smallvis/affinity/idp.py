"""Intrinsic dimensionality from the perplexity calibration, and the perplexity it suggests
(docs/original.md#intrinsic-dimensionality-and-idp).

For a Gaussian calibrated to perplexity ``U`` at point ``i`` (precision ``beta_i``, weights
``v_ij = exp(-beta_i D_ij)`` on squared distances, ``p_j = v_ij / V_i``), the analytic *soft correlation
dimension* is

.. math::
    \\delta_i = -2 \\frac{\\partial \\log U}{\\partial \\log \\beta_i} = 2 \\beta_i^2 \\mathrm{Var}_p(D_{i\\cdot})
             = \\frac{2}{V_i}\\left[\\sum_j v_{ij} (\\log v_{ij})^2 - \\frac{(\\sum_j v_{ij} \\log v_{ij})^2}{V_i}\\right]

(the β form and the V form; for data filling ``d`` dimensions ``U ∝ beta^{-d/2}`` and ``δ ≈ d``). The
finite-difference estimate of the multi-scale JSE paper replaces the derivative by the difference
between successive perplexities, ``-2 Δ log U / Δ log beta_i``.

- :func:`idp_perps` — the original's default candidate perplexities.
- :func:`intrinsic_dimensionality` — δ for every point and candidate (Newton on the entropy equation,
  warm-started from the previous candidate's precisions; distances computed once), the dataset mean
  per candidate, ``D`` = its maximum and ``idp`` = the smallest perplexity reaching it.
- :func:`select_idp` — what ``smallvis(perplexity="idp")`` does: the original's R-path calibration of
  each candidate in turn, stopping at the first candidate whose mean δ does not improve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._util.log import logger
from .perplexity import Calibration, calibrate_rows, check_perplexity

# Newton on the entropy equation: stop when |H - log U| is below this (nats)
NEWTON_TOL = 1e-10
_MAX_NEWTON = 100


def idp_perps(n: int) -> np.ndarray:
    """The original's default candidate perplexities for ``n`` points: powers of two from 4 (or less
    for tiny n) up to ``min(128, ceil(n / 2))``."""
    n = int(n)
    max_u = min(128, max(2, math.ceil(n / 2)))
    hi = int(math.floor(math.log2(max_u)))
    lo = min(2, hi)
    return 2.0 ** np.arange(lo, hi + 1)


def check_candidates(perplexities, n: int) -> np.ndarray:
    """Candidate perplexities: a non-empty, strictly increasing list of numbers in (0, n)."""
    if perplexities is None:
        return idp_perps(n)
    U = np.atleast_1d(np.asarray(perplexities, dtype=np.float64))
    if U.ndim != 1 or U.size == 0:
        raise ValueError("the candidate perplexities must be a non-empty list of numbers")
    if not np.all(np.isfinite(U)) or np.any(U <= 0):
        raise ValueError(f"the candidate perplexities must be positive numbers; got {U.tolist()}")
    if np.any(np.diff(U) <= 0):
        raise ValueError(f"the candidate perplexities must be strictly increasing; got {U.tolist()}")
    if U[-1] >= n:
        raise ValueError(f"candidate perplexity {U[-1]:g} is too large for {n} points: every "
                         f"candidate must be less than the number of points")
    return U


# --- the analytic dimension, two forms ---------------------------------------------------------


def dint_from_beta(D: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """β form: ``2 beta_i^2 Var_p(D_i.)`` for rows ``D`` (n, m) of distances to the other points."""
    logw = -beta[:, None] * D
    logw -= logw.max(axis=1, keepdims=True)
    w = np.exp(logw)
    p = w / w.sum(axis=1, keepdims=True)
    mean = np.sum(p * D, axis=1)
    var = np.sum(p * (D - mean[:, None]) ** 2, axis=1)
    return 2.0 * beta**2 * var


def dint_from_affinities(V: np.ndarray) -> np.ndarray:
    """V form: ``(2 / V_i) [sum_j v log^2 v - (sum_j v log v)^2 / V_i]`` from un-normalised Gaussian
    affinities ``V`` (rows over the other points; zeros are ignored)."""
    V = np.asarray(V, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logv = np.where(V > 0, np.log(np.where(V > 0, V, 1.0)), 0.0)
    total = V.sum(axis=1)
    s1 = np.sum(V * logv, axis=1)
    s2 = np.sum(V * logv**2, axis=1)
    return 2.0 / total * (s2 - s1**2 / total)


def _off_diagonal(D2: np.ndarray) -> np.ndarray:
    n = D2.shape[0]
    return D2[~np.eye(n, dtype=bool)].reshape(n, n - 1)


@dataclass
class IntrinsicDimensionality:
    """What :func:`intrinsic_dimensionality` returns.

    Attributes
    ----------
    perplexities : (U,) candidate perplexities
    dint : (n, U) analytic soft correlation dimension of every point at every perplexity
    mean_dint : (U,) its mean over the points
    D : float — the estimated intrinsic dimensionality, ``max(mean_dint)``
    idp : float — the smallest perplexity whose mean reaches ``D``
    beta : (n, U) the calibrated precisions
    dint_fd : (n, U - 1) the finite-difference estimate between successive perplexities, at
        ``fd_perplexities`` (their geometric means)
    classes, class_idp, class_mean_dint : with ``labels``: the classes, each one's IDP (first maximum
        of its points' mean) and its mean curve (n_classes, U)
    """

    perplexities: np.ndarray
    dint: np.ndarray
    mean_dint: np.ndarray
    D: float
    idp: float
    beta: np.ndarray
    dint_fd: np.ndarray
    fd_perplexities: np.ndarray
    classes: np.ndarray | None = None
    class_idp: dict = field(default_factory=dict)
    class_mean_dint: np.ndarray | None = None

    def to_frame(self):
        """A tidy pandas DataFrame: one row per perplexity (mean, and per class with labels)."""
        import pandas as pd

        frame = pd.DataFrame({"perplexity": self.perplexities, "mean_dint": self.mean_dint})
        if self.classes is not None:
            for c, curve in zip(self.classes, self.class_mean_dint):
                frame[f"mean_dint[{c}]"] = curve
        return frame


def intrinsic_dimensionality(X, perplexities=None, *, labels=None, metric: str = "euclidean",
                             n_neighbors: int | None = None,
                             tol: float = NEWTON_TOL) -> IntrinsicDimensionality:
    """Soft correlation dimension at each candidate perplexity, and the IDP.

    Parameters
    ----------
    X : array (n, p), DataFrame, or (n, n) distances with ``metric="precomputed"``
    perplexities : increasing list of numbers below n, optional
        Default :func:`idp_perps` (4, 8, ... up to min(128, n/2)).
    labels : array (n,), optional
        Also report each class's mean curve and IDP.
    n_neighbors : int, optional
        Calibrate on each point's ``n_neighbors`` nearest neighbours only (exact search up to 20,000
        points, pynndescent beyond) instead of all n - 1 others: O(n k) memory for large n, an
        approximation. The truncated tail lowers δ: with 5 times the largest candidate it is
        within about 2% (3 times, as perplexity calibrations usually use, loses about 10%).
    tol : float
        Entropy tolerance of the calibration (nats). The exact dense calibration of all candidates
        is solved by Newton's method, each candidate warm-started from the previous one's precisions.
    """
    from .._util.names import match_name
    from ..io.data import InputData
    from ..io.preprocess import as_numeric_matrix

    precomputed = match_name(metric, ("euclidean", "precomputed"), "metric") == "precomputed"
    X = as_numeric_matrix(X)
    if precomputed:
        from ..io.validate import check_distance_matrix

        check_distance_matrix(X)
    data = InputData(X, precomputed=precomputed)
    n = data.n
    if n < 3:
        raise ValueError(f"need at least 3 points; got {n}")
    U = check_candidates(perplexities, n)
    if n_neighbors is None:
        D = _off_diagonal(data.squared_distances())
    else:
        from ..io.neighbors import check_neighbors_k

        k = check_neighbors_k(n_neighbors, n)
        if k <= U[-1]:
            raise ValueError(f"n_neighbors ({k}) must exceed the largest candidate perplexity "
                             f"({U[-1]:g}); 5 or more times it keeps delta within about 2%")
        D = np.ascontiguousarray(data.neighbors(k)[1] ** 2)
        logger.info("intrinsic dimensionality on the %d nearest neighbours of each point "
                    "(an approximation)", k)
    betas = np.empty((n, U.size))
    dint = np.empty((n, U.size))
    mean_d = np.maximum(D.mean(axis=1), np.finfo(float).tiny)
    log_beta = np.log(0.5 * U[0] / mean_d)
    from ._idp_kernels import newton_rows

    ok = np.empty(n, dtype=np.bool_)
    b, d = np.empty(n), np.empty(n)
    for k, u in enumerate(U):
        newton_rows(D, np.full(n, math.log(u)), log_beta, tol, _MAX_NEWTON, b, d, ok)
        betas[:, k], dint[:, k] = b, d
        if not ok.all():
            logger.warning("intrinsic dimensionality: %d points did not reach perplexity %g",
                           int((~ok).sum()), u)
        log_beta = np.log(b)
    mean = dint.mean(axis=0)
    best = int(np.argmax(mean))
    dlogU = np.diff(np.log(U))
    dint_fd = -2.0 * dlogU[None, :] / np.diff(np.log(betas), axis=1) if U.size > 1 else \
        np.empty((n, 0))
    res = IntrinsicDimensionality(
        perplexities=U, dint=dint, mean_dint=mean, D=float(mean[best]), idp=float(U[best]),
        beta=betas, dint_fd=dint_fd, fd_perplexities=np.sqrt(U[1:] * U[:-1]))
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n,):
            raise ValueError(f"labels must have one value per point ({n}); got shape {labels.shape}")
        classes = np.unique(labels)
        curves = np.array([dint[labels == c].mean(axis=0) for c in classes])
        res.classes, res.class_mean_dint = classes, curves
        res.class_idp = {c: float(U[first_maximum(curve)]) for c, curve in zip(classes, curves)}
    logger.info("Intrinsic dimensionality: %s; D = %.3g at perplexity %g",
                ", ".join(f"{u:g}: {m:.3g}" for u, m in zip(U, mean)), res.D, res.idp)
    return res


def first_maximum(curve) -> int:
    """Index of the original's IDP rule: walk the candidates in order and stop at the first whose value
    does not improve on the best so far; the last improving one wins."""
    best, index = -math.inf, 0
    for k, value in enumerate(curve):
        if not value > best:
            break
        best, index = value, k
    return index


def select_idp(D: np.ndarray, candidates: np.ndarray, *, tol: float = 1e-5,
               max_tries: int = 50) -> tuple[float, Calibration, list]:
    """The original's IDP search: R-path calibration (``D`` squared distances) of each
    candidate in order, stopping at the first whose mean δ is not above the best so far.

    Returns ``(idp, its calibration, [(perplexity, mean dint), ...] as far as the search went)``.
    """
    n = D.shape[0]
    best, chosen, curve = -math.inf, None, []
    for u in candidates:
        cal = calibrate_rows(D, check_perplexity(u, n), tol=tol, max_tries=max_tries)
        mean = float(cal.dint.mean())
        curve.append((float(u), mean))
        if not mean > best:
            break
        best, chosen = mean, (float(u), cal)
    if chosen is None or chosen[0] <= 0:
        raise ValueError("no usable IDP perplexity: the candidates must be positive")
    logger.info("IDP search: %s -> perplexity %g",
                ", ".join(f"{u:g}: {m:.4g}" for u, m in curve), chosen[0])
    return chosen[0], chosen[1], curve


def select_class_idp(D: np.ndarray, candidates: np.ndarray, labels: np.ndarray, *,
                     tol: float = 1e-5, max_tries: int = 50) -> tuple[np.ndarray, dict]:
    """One IDP per class (the same search on each class's mean δ, all classes sharing the
    calibrations, which stop once every class has found its maximum); returns the per-point
    perplexity vector and ``{class: [(perplexity, class mean), ...]}``."""
    n = D.shape[0]
    classes = np.unique(labels)
    members = [labels == c for c in classes]
    best = np.full(classes.size, -math.inf)
    chosen = np.zeros(classes.size)
    active = np.ones(classes.size, dtype=bool)
    curves = {c: [] for c in classes}
    for u in candidates:
        if not active.any():
            break
        cal = calibrate_rows(D, check_perplexity(u, n), tol=tol, max_tries=max_tries)
        for k, (c, mask) in enumerate(zip(classes, members)):
            if not active[k]:
                continue
            mean = float(cal.dint[mask].mean())
            curves[c].append((float(u), mean))
            if mean > best[k]:
                best[k], chosen[k] = mean, float(u)
            else:
                active[k] = False
    U = np.empty(n)
    for k, mask in enumerate(members):
        U[mask] = chosen[k]
    logger.info("Class IDPs: %s", ", ".join(f"{c}: {u:g}" for c, u in zip(classes, chosen)))
    return U, curves
