"""Row normalisation, symmetrisation and matrix normalisation of affinities (spec §3.8)."""

from __future__ import annotations

import math

import numpy as np

from .._names import match_name

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
                     normalize: bool = True) -> np.ndarray:
    """Row step, then symmetrise, then matrix-normalise (returns a new array).

    ``row_normalize``: True divides each row by its sum; a number ``r`` makes each row sum to ``r``;
    False leaves rows alone.
    """
    P = np.array(P, dtype=np.float64, copy=True)
    if row_normalize is not False and row_normalize is not None:
        r = 1.0 if row_normalize is True else float(row_normalize)
        sums = P.sum(axis=1, keepdims=True)
        sums[sums == 0] = 1.0
        P *= r / sums
    P = symmetrize(P, symmetrize_how)
    if normalize:
        P /= P.sum()
    return P


def effective_perplexity(P: np.ndarray, eps: float = np.finfo(float).eps) -> float:
    """Median over rows of ``exp(-sum_j p_ij log(p_ij + eps))`` of the row-normalised ``P``."""
    R = P / P.sum(axis=1, keepdims=True)
    return float(np.median(np.exp(-np.sum(R * np.log(R + eps), axis=1))))
