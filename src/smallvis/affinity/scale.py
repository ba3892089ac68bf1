"""Row normalisation, symmetrisation and matrix normalisation of affinities (spec §3.8)."""

from __future__ import annotations

import numpy as np

from .._names import match_name

SYMMETRIZE = ("none", "symmetric", "average", "mutual", "umap", "fuzzy")
TRUE_SYMMETRIZE = ("symmetric", "average", "mutual", "umap", "fuzzy")


def fuzzy_set_union(P: np.ndarray, set_op_mix_ratio: float = 1.0) -> np.ndarray:
    """``m (P + P^T - P*P^T) + (1 - m) P*P^T``; ``m = 1`` is the fuzzy union, ``m = 0`` the intersection."""
    prod = P * P.T
    return set_op_mix_ratio * (P + P.T - prod) + (1.0 - set_op_mix_ratio) * prod


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
