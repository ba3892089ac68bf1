"""Rank-based embedding metrics: trustworthiness, continuity and the R_NX curve.

Each needs every point's full distance ranking in the input and in the output (the co-ranking of
Lee & Verleysen): O(n^2 log n) time, computed here in row blocks so memory stays O(block x n).
Above ``RANK_MAX_N`` points they can be computed on a fixed seeded random subsample (``RANK_SEED``).
Re-exported by :mod:`smallvis.metrics`.
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger
from ..io.distances import shift_origin
from .inputs import InputSpace, input_space

RANK_MAX_N = 5000  # the rank metrics' default limit: beyond it, a fixed random subsample
RANK_SEED = 0  # the subsample's seed
RANK_NAMES = ("trustworthiness", "continuity", "rnx_auc")
_BLOCK_BYTES = 1 << 25  # one float64 (block x n) distance block: 32 MiB


def _as_2d(Z, name: str) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2:
        raise ValueError(f"{name} must be a 1-D or 2-D array; got shape {Z.shape}")
    return Z


def _check(X, Y, k: int | None, metric="euclidean", what: str = "the rank metrics"):
    """``(X, Y, k)`` checked; ``X`` becomes an :class:`InputSpace` under a metric other than
    Euclidean (or precomputed distances)."""
    space = input_space(X, metric, what)
    X = _as_2d(X, "X") if space is None else space
    Y = _as_2d(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must be 2-D with the same number of rows; got {X.shape} and {Y.shape}")
    if k is not None:
        _check_k(k, X.shape[0])
    return X, Y, None if k is None else int(k)


def _check_k(k, n: int) -> None:
    if (isinstance(k, bool) or not isinstance(k, (int, np.integer, float)) or int(k) != k
            or not 1 <= k < n):
        raise ValueError(f"k must be a whole number between 1 and n - 1 = {n - 1}; got {k!r}")



def _subsample(X, Y, max_n: int | None, random_state):
    """``X`` (array or :class:`InputSpace`), ``Y`` restricted to a seeded random ``max_n`` of
    their rows when there are more."""
    n = X.shape[0] if not isinstance(X, InputSpace) else X.n
    if max_n is None or n <= max_n:
        return X, Y
    keep = np.sort(np.random.default_rng(random_state).choice(n, size=int(max_n), replace=False))
    logger.info("rank metrics on a random subsample of %d of %d points (seed %s)", max_n, n, random_state)
    return (X.take(keep) if isinstance(X, InputSpace) else X[keep]), Y[keep]


def _ranks(Z: np.ndarray, sq: np.ndarray, rows: slice) -> np.ndarray:
    """Rank (b, n) of every point in each row's Euclidean distance order (:func:`_rank_rows`)."""
    return _rank_rows(sq[rows, None] + sq[None, :] - 2.0 * (Z[rows] @ Z.T), rows.start)


def _rank_rows(D: np.ndarray, start: int) -> np.ndarray:
    """Rank (b, n) of every point in each row of the distances ``D`` of the points ``start ..``:
    0 for the point itself, 1 for its nearest neighbour, ..., n - 1 (ties broken by the sort, the
    same way for identical rows). ``D`` is overwritten."""
    rows = slice(start, start + D.shape[0])
    b = D.shape[0]
    D[np.arange(b), np.arange(rows.start, rows.start + b)] = -np.inf
    order = np.argsort(D, axis=1)
    ranks = np.empty(D.shape, dtype=np.int64)
    ranks[np.arange(b)[:, None], order] = np.arange(D.shape[1])
    return ranks


def _corank(X, Y: np.ndarray, k: int | None) -> tuple[np.ndarray, float, float]:
    """Summaries of the co-ranking of ``X`` and ``Y``, in row blocks.

    Returns ``overlap`` (n - 1,) with ``overlap[K - 1] = sum_i |N^X_K(i) ∩ N^Y_K(i)|`` (a pair is in
    both K-neighbourhoods iff ``max(r^X_ij, r^Y_ij) <= K``) and, for ``k``, the intrusion and
    extrusion sums ``sum_{r^Y_ij <= k < r^X_ij} (r^X_ij - k)`` and
    ``sum_{r^X_ij <= k < r^Y_ij} (r^Y_ij - k)`` (0 when ``k`` is None). ``X``: Euclidean
    coordinates or an :class:`InputSpace`.
    """
    space = X if isinstance(X, InputSpace) else None
    n = Y.shape[0]
    if space is None:
        X = shift_origin(X)  # expanded distances keep precision under offsets
        sqx = np.einsum("ij,ij->i", X, X)
    Y = shift_origin(Y)
    sqy = np.einsum("ij,ij->i", Y, Y)
    counts = np.zeros(n, dtype=np.int64)
    intrusion = extrusion = 0
    block = max(1, _BLOCK_BYTES // (8 * n))
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        rx = (_ranks(X, sqx, rows) if space is None
              else _rank_rows(space.rows(rows.start, rows.stop), rows.start))
        ry = _ranks(Y, sqy, rows)
        counts += np.bincount(np.maximum(rx, ry).ravel(), minlength=n)
        if k is not None:
            intruder = (ry <= k) & (rx > k)
            extruder = (rx <= k) & (ry > k)
            intrusion += int(np.sum(rx[intruder] - k))
            extrusion += int(np.sum(ry[extruder] - k))
    return np.cumsum(counts[1:]), float(intrusion), float(extrusion)


def _rank_penalty_score(penalty: float, n: int, k: int) -> float:
    return 1.0 - 2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0)) * penalty


def _check_half(k: int, n: int, name: str) -> None:
    if k >= n / 2:
        raise ValueError(f"{name} needs k < n / 2 = {n / 2:g}; got k = {k}")


def trustworthiness(X, Y, k: int = 15, *, max_n: int | None = None,
                    random_state=RANK_SEED, metric="euclidean") -> float:
    """Trustworthiness of the embedding at ``k`` neighbours (Venna & Kaski 2001).

    .. math:: T(k) = 1 - \\frac{2}{n k (2n - 3k - 1)} \\sum_i \\sum_{j \\in U_k(i)} (r^X_{ij} - k)

    where ``U_k(i)`` are the ``k`` nearest output neighbours of ``i`` that are not among its ``k``
    nearest input neighbours and ``r^X_ij`` is the rank of ``j`` in ``i``'s input distances (1 =
    nearest). 1 = no intrusions. Equal to ``sklearn.manifold.trustworthiness`` for distinct distances.

    Parameters
    ----------
    X, Y : arrays (n, p), (n, d)
        Input data (dense or scipy sparse; an (n, n) distance matrix with
        ``metric="precomputed"``) and embedding (Euclidean distances).
    k : int
        Neighbourhood size, ``1 <= k < n / 2``.
    max_n : int or None
        Above this many points, use a random subsample of ``max_n`` points seeded by
        ``random_state`` (None: all points; time O(n^2 log n), memory O(block x n)).
    metric : str, (str, dict) or callable
        The input's metric (:mod:`smallvis.io.metric`; Euclidean by default) or ``"precomputed"``.

    Returns
    -------
    float, at most 1
    """
    X, Y, k = _check(X, Y, k, metric, "trustworthiness")
    X, Y = _subsample(X, Y, max_n, random_state)
    _check_half(k, Y.shape[0], "trustworthiness")
    _, intrusion, _ = _corank(X, Y, k)
    return _rank_penalty_score(intrusion, Y.shape[0], k)


def continuity(X, Y, k: int = 15, *, max_n: int | None = None, random_state=RANK_SEED,
               metric="euclidean") -> float:
    """Continuity of the embedding at ``k`` neighbours (Venna & Kaski 2001): trustworthiness with the
    roles of ``X`` and ``Y`` swapped.

    .. math:: C(k) = 1 - \\frac{2}{n k (2n - 3k - 1)} \\sum_i \\sum_{j \\in V_k(i)} (r^Y_{ij} - k)

    where ``V_k(i)`` are the ``k`` nearest input neighbours of ``i`` that are not among its ``k``
    nearest output neighbours and ``r^Y_ij`` is the rank of ``j`` in ``i``'s output distances.
    1 = no extrusions. Parameters as :func:`trustworthiness`.
    """
    X, Y, k = _check(X, Y, k, metric, "continuity")
    X, Y = _subsample(X, Y, max_n, random_state)
    _check_half(k, Y.shape[0], "continuity")
    _, _, extrusion = _corank(X, Y, k)
    return _rank_penalty_score(extrusion, Y.shape[0], k)


def _rnx(overlap: np.ndarray) -> np.ndarray:
    """``R_NX(K)``, K = 1..n-2, from the neighbourhood overlap sums (n - 1,)."""
    n = overlap.size + 1
    K = np.arange(1, n - 1, dtype=np.float64)
    q = overlap[:-1] / (K * n)
    return ((n - 1.0) * q - K) / (n - 1.0 - K)


def rnx_curve(X, Y, ks=None, *, max_n: int | None = RANK_MAX_N, random_state=RANK_SEED,
              metric="euclidean") -> np.ndarray:
    """Rescaled neighbourhood agreement ``R_NX(K)`` (Lee, Peluffo-Ordóñez & Verleysen 2015).

    .. math::
        Q_{NX}(K) = \\frac{1}{K n} \\sum_i |N^X_K(i) \\cap N^Y_K(i)|, \\qquad
        R_{NX}(K) = \\frac{(n - 1) Q_{NX}(K) - K}{n - 1 - K}

    1 = every K-neighbourhood kept, 0 = no better than a random embedding.

    Parameters
    ----------
    X, Y : arrays (n, p), (n, d)
        Input data and embedding, ``n >= 3``; ``X`` as in :func:`trustworthiness`, under
        ``metric``.
    ks : array of int or None
        Neighbourhood sizes, each in ``1 .. m - 2`` where ``m`` is the number of points used
        (None: all of them).
    max_n : int or None
        Above this many points (default ``RANK_MAX_N`` = 5000) the curve is that of a random
        subsample of ``max_n`` points seeded by ``random_state``, ranked among themselves
        (None: all points; time O(n^2 log n), memory O(block x n)).

    Returns
    -------
    array of ``R_NX`` at ``ks`` (K = 1..m-2 when ``ks`` is None)
    """
    X, Y, _ = _check(X, Y, None, metric, "R_NX")
    X, Y = _subsample(X, Y, max_n, random_state)
    m = Y.shape[0]
    if m < 3:
        raise ValueError(f"R_NX needs at least 3 points; got {m}")
    curve = _rnx(_corank(X, Y, None)[0])
    if ks is None:
        return curve
    ks = np.asarray(ks)
    if ks.dtype.kind not in "iu" or ks.size == 0 or ks.min() < 1 or ks.max() > m - 2:
        raise ValueError(f"ks must be whole numbers between 1 and m - 2 = {m - 2}; got {ks!r}")
    return curve[ks - 1]


def _auc_log_k(curve: np.ndarray) -> float:
    weights = 1.0 / np.arange(1, curve.size + 1)
    return float(np.sum(curve * weights) / np.sum(weights))


def rnx_auc(X, Y, *, max_n: int | None = RANK_MAX_N, random_state=RANK_SEED,
            metric="euclidean") -> float:
    """Area under the ``R_NX`` curve with a logarithmic ``K`` axis (Lee et al. 2015).

    .. math:: \\mathrm{AUC} = \\frac{\\sum_{K=1}^{n-2} R_{NX}(K) / K}{\\sum_{K=1}^{n-2} 1 / K}

    Small neighbourhoods weigh most. Same subsampling as :func:`rnx_curve`.
    """
    return _auc_log_k(rnx_curve(X, Y, max_n=max_n, random_state=random_state, metric=metric))


def rank_metrics(X, Y, k: int, names, *, max_n: int | None = RANK_MAX_N,
                 random_state=RANK_SEED) -> dict:
    """The rank metrics among ``names`` (a subset of ``RANK_NAMES``) from one co-ranking pass.

    ``X`` (coordinates, or an :class:`InputSpace` under another metric), ``Y`` and ``k`` are
    checked by the caller. Above ``max_n`` points all of them use the same random subsample, and
    the result has ``"rank_subsample"``: its size.
    """
    n = Y.shape[0]
    X, Y = _subsample(X, Y, max_n, random_state)
    m = Y.shape[0]
    penalties = {"trustworthiness", "continuity"} & set(names)
    if penalties:
        _check_half(k, m, " and ".join(sorted(penalties)))
    overlap, intrusion, extrusion = _corank(X, Y, k if penalties else None)
    out = {}
    if "trustworthiness" in names:
        out["trustworthiness"] = _rank_penalty_score(intrusion, m, k)
    if "continuity" in names:
        out["continuity"] = _rank_penalty_score(extrusion, m, k)
    if "rnx_auc" in names:
        out["rnx_auc"] = _auc_log_k(_rnx(overlap))
    if m < n:
        out["rank_subsample"] = m
    return out
