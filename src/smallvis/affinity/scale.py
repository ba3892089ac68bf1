"""Row normalisation, symmetrisation and matrix normalisation of affinities
(docs/original.md#scaling-the-affinities)."""

from __future__ import annotations

import math

import numpy as np

from .._util.names import match_name

SYMMETRIZE = ("none", "symmetric", "average", "mutual", "umap", "fuzzy")
TRUE_SYMMETRIZE = ("symmetric", "average", "mutual", "umap", "fuzzy")


def fuzzy_set_union(P, set_op_mix_ratio: float = 1.0):
    """Fuzzy set union of memberships and their transpose, optionally mixed with the intersection.

    ``m (P + P^T - P*P^T) + (1 - m) P*P^T`` (``*`` elementwise); ``m = 1`` is the fuzzy union (UMAP's
    symmetrisation), ``m = 0`` the fuzzy intersection. ``P`` may be a dense array or a scipy sparse
    matrix (the result is then sparse too).
    """
    try:
        m = float(set_op_mix_ratio)
    except (TypeError, ValueError):
        m = math.nan
    if not 0.0 <= m <= 1.0:
        raise ValueError(f"set_op_mix_ratio must be between 0 and 1; got {set_op_mix_ratio!r}")
    if not isinstance(P, np.ndarray) and hasattr(P, "multiply") and hasattr(P, "tocsr"):
        P = P.tocsr()
        Pt = P.T.tocsr()
        prod = P.multiply(Pt).tocsr()
        result = m * (P + Pt - prod) + (1.0 - m) * prod
        result = result.tocsr()
        result.eliminate_zeros()
        return result
    P = np.asarray(P, dtype=np.float64)
    prod = P * P.T
    return m * (P + P.T - prod) + (1.0 - m) * prod


def symmetrize(P: np.ndarray, how: str) -> np.ndarray:
    """Symmetrise ``P`` by name: none, symmetric/average (mean), mutual (geometric mean), umap/fuzzy."""
    how = match_name(how, SYMMETRIZE, "symmetrization")
    if how == "none":
        return P
    if how in ("symmetric", "average"):
        return 0.5 * (P + P.T)
    if how == "mutual":
        return np.sqrt(P * P.T)
    return fuzzy_set_union(P)


def scale_affinities(P: np.ndarray, *, symmetrize_how: str = "symmetric", row_normalize=True,
                     normalize: bool = True, renormalize_rows: bool = False) -> np.ndarray:
    """Row step, then symmetrise, then matrix-normalise (returns a new array).

    ``row_normalize``: True divides each row by its sum; a number ``r`` makes each row sum to ``r``;
    False leaves rows alone. ``renormalize_rows`` divides each row by its sum once more at the end
    (the "RSR" recipes).
    """
    return scale_affinities_inplace(np.array(P, dtype=np.float64, copy=True),
                                    symmetrize_how=symmetrize_how, row_normalize=row_normalize,
                                    normalize=normalize, renormalize_rows=renormalize_rows)


def scale_affinities_inplace(P: np.ndarray, *, symmetrize_how: str = "symmetric",
                             row_normalize=True, normalize: bool = True,
                             renormalize_rows: bool = False) -> np.ndarray:
    """:func:`scale_affinities` overwriting ``P`` (a float64 (n, n) array), which is returned.

    Needs no (n, n) temporary: the symmetrisation works on pairs of (tile, transposed tile); the
    numbers are those of :func:`symmetrize` (each entry is the same expression of ``P_ij`` and
    ``P_ji``).
    """
    how = match_name(symmetrize_how, SYMMETRIZE, "symmetrization")
    if row_normalize is not False and row_normalize is not None:
        r = 1.0 if row_normalize is True else float(row_normalize)
        sums = P.sum(axis=1, keepdims=True)
        sums[sums == 0] = 1.0
        P *= r / sums
    if how != "none":
        _symmetrize_tiles(P, how)
    if normalize:
        P /= P.sum()
    if renormalize_rows:
        P /= P.sum(axis=1, keepdims=True)
    return P


_TILE = 256


def _symmetric_pair(a: np.ndarray, b: np.ndarray, how: str) -> np.ndarray:
    """The symmetrised values at ``a = P[I, J]`` given ``b = P[J, I].T`` (a new array)."""
    if how in ("symmetric", "average"):
        return 0.5 * (a + b)
    if how == "mutual":
        return np.sqrt(a * b)
    return (a + b) - a * b  # fuzzy set union (umap, fuzzy)


def _symmetrize_tiles(P: np.ndarray, how: str) -> None:
    """Symmetrise ``P`` in place, one (tile, transposed tile) pair at a time."""
    n = P.shape[0]
    for i0 in range(0, n, _TILE):
        for j0 in range(i0, n, _TILE):
            upper = P[i0:i0 + _TILE, j0:j0 + _TILE]
            lower = P[j0:j0 + _TILE, i0:i0 + _TILE]
            S = _symmetric_pair(upper, lower.T, how)
            upper[...] = S
            lower[...] = S.T


def effective_perplexity(P: np.ndarray, eps: float = np.finfo(float).eps) -> float:
    """Median over rows of ``exp(-sum_j p_ij log(p_ij + eps))`` of the row-normalised ``P``
    (computed a few rows at a time: the temporaries stay near 8 MB)."""
    n = P.shape[0]
    step = max(1, 2**20 // max(n, 1))
    H = np.empty(n)
    for start in range(0, n, step):
        rows = P[start:start + step]
        R = rows / rows.sum(axis=1, keepdims=True)
        H[start:start + step] = np.sum(R * np.log(R + eps), axis=1)
    return float(np.median(np.exp(-H)))
