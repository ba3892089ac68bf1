"""Supervised and semi-supervised affinities: labels weaken the pairs that cross classes.

Given labels ``y`` (integers or any values; ``-1``, ``NaN`` or ``None`` mean unlabelled) and a
``target_weight`` ``w`` in [0, 1], every stored affinity ``P_ij`` is multiplied by

    f_ij = exp(-far)  if i and j are both labelled and their labels differ,  far = 2.5 / (1 - w)
    f_ij = 1          otherwise (same label, or either point unlabelled),

so ``w = 0.5`` divides cross-class affinities by e^5 (about 150), ``w = 1`` removes them, and ``w = 0``
still divides them by e^2.5 (umap-learn's ``target_weight`` and ``far_dist``). Then P is made what
the method expects again:

- a matrix-normalised P (t-SNE, SSNE, ...): divided by its new total (sums to 1);
- a fuzzy set (umap, tumap: ``symmetrize="fuzzy"``): umap-learn's ``reset_local_connectivity``,
  each row divided by its largest entry, then the fuzzy union ``P + P^T - P * P^T``;
- a row-normalised, unsymmetrised P (asne, ...): each row scaled back to its previous sum;
- anything else: left as multiplied.

umap-learn also weakens the edges of unlabelled points (by e^-1); here they keep their weight, so that
``y`` with every point unlabelled is exactly the unsupervised run.

A continuous target (``target_metric="l2"``: numbers, NaN for unlabelled) weakens each stored pair by
how far apart its targets are, on the scale of the targets' differences along the stored pairs:

    f_ij = exp(-w / (1 - w) * (y_i - y_j)^2 / s^2),   s^2 = median of (y_i - y_j)^2 > 0 over them,

so ``w = 0`` changes nothing, ``w = 0.5`` weakens a pair with a typical difference by e^-1, and
``w = 1`` keeps only pairs with equal targets; then P is re-scaled as above.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import sparse

from .._util.names import match_name

__all__ = ["check_labels", "supervise"]

UNLABELLED = -1
FAR = 2.5
TARGET_METRICS = ("categorical", "l2")


def check_target_metric(value) -> str:
    """``"categorical"`` (classes) or ``"l2"`` (a continuous target; alias ``"euclidean"``)."""
    if isinstance(value, str) and value.strip().lower() in ("euclidean", "continuous"):
        return "l2"
    return match_name(value, TARGET_METRICS, "target_metric")


def check_labels(y, n: int, target_metric: str = "categorical") -> np.ndarray | None:
    """``y`` as integer class codes (``-1``: unlabelled), or, for ``target_metric="l2"``, as float
    targets (NaN: unlabelled); None when every point is unlabelled.

    Classes may be integers, strings or any hashable values; ``-1``, ``NaN`` and ``None`` mark
    unlabelled points (a continuous target: ``NaN`` and ``None``)."""
    y = np.asarray(y, dtype=object if not hasattr(y, "dtype") else None)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y (labels for supervised embedding) must have one value per point "
                         f"({n}); got shape {y.shape}")
    if check_target_metric(target_metric) == "l2":
        try:
            values = np.array([np.nan if v is None else v for v in y], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("target_metric='l2' needs a numeric y (NaN or None: unlabelled)") \
                from None
        if np.isinf(values).any():
            raise ValueError("y has infinite values")
        return None if np.isnan(values).all() else values
    missing = np.array([_unlabelled(v) for v in y], dtype=bool)
    codes = np.full(n, UNLABELLED, dtype=np.int64)
    if (~missing).any():
        _, codes[~missing] = np.unique(np.asarray(y[~missing]).astype(str), return_inverse=True)
    return None if missing.all() else codes


def _unlabelled(v) -> bool:
    if v is None:
        return True
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
        return not np.isfinite(v) or v == UNLABELLED
    return False


def check_target_weight(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"target_weight must be a number between 0 and 1; got {value!r}")
    return float(value)


def cross_factor(target_weight: float) -> float:
    """The factor of a cross-class pair: ``exp(-2.5 / (1 - w))`` (0 at ``w = 1``)."""
    return 0.0 if target_weight >= 1.0 else float(np.exp(-FAR / (1.0 - target_weight)))


def supervise(P, labels: np.ndarray, target_weight: float, recipe):
    """``P`` (dense array or sparse matrix) with the cross-class pairs weakened and re-scaled as the
    method's ``recipe`` scales its affinities (see the module docstring). Returns a new matrix."""
    before = np.asarray(P.sum(axis=1)).ravel()
    if labels.dtype.kind == "f":
        P = _weaken_continuous(P, labels, target_weight)
    else:
        P = _weaken_classes(P, labels, cross_factor(target_weight))
    return _rescale(P, before, recipe)


def _weaken_continuous(P, y: np.ndarray, target_weight: float):
    """Each stored pair times ``exp(-w/(1-w) (y_i - y_j)^2 / s^2)`` (module docstring)."""
    if sparse.issparse(P):
        P = sparse.csr_matrix(P, dtype=np.float64, copy=True)
        rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
        diff2 = (y[rows] - y[P.indices]) ** 2
        stored = P.data > 0
    else:
        P = np.array(P, dtype=np.float64, copy=True)
        diff2 = (y[:, None] - y[None, :]) ** 2
        stored = P > 0
    known = stored & np.isfinite(diff2)
    positive = diff2[known & (diff2 > 0)]
    scale = float(np.median(positive)) if positive.size else 1.0
    if target_weight >= 1.0:
        factor = np.where(diff2 > 0, 0.0, 1.0)
    else:
        factor = np.exp(-target_weight / (1.0 - target_weight) * diff2 / scale)
    factor[~np.isfinite(diff2)] = 1.0  # an unlabelled end: untouched
    if sparse.issparse(P):
        P.data *= factor
        P.eliminate_zeros()
    else:
        P *= factor
    return P


def _weaken_classes(P, labels: np.ndarray, factor: float):
    if sparse.issparse(P):
        P = sparse.csr_matrix(P, dtype=np.float64, copy=True)
        rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
        li, lj = labels[rows], labels[P.indices]
        cross = (li != lj) & (li != UNLABELLED) & (lj != UNLABELLED)
        P.data[cross] *= factor
        P.eliminate_zeros()
    else:
        P = np.array(P, dtype=np.float64, copy=True)
        cross = (labels[:, None] != labels[None, :]) & (labels[:, None] != UNLABELLED) \
            & (labels[None, :] != UNLABELLED)
        P[cross] *= factor
    return P


def _rescale(P, before: np.ndarray, recipe):
    """P made what the method expects again (module docstring)."""
    how = match_name(recipe.symmetrize, ("none", "symmetric", "average", "mutual", "umap", "fuzzy"),
                     "symmetrization")
    if recipe.normalize:
        return P / P.sum()
    if how in ("umap", "fuzzy"):
        return _reset_local_connectivity(P)
    if recipe.row_normalize not in (False, None) and how == "none":
        after = np.asarray(P.sum(axis=1)).ravel()
        scale = np.divide(before, after, out=np.ones_like(before), where=after > 0)
        return sparse.diags(scale) @ P if sparse.issparse(P) else P * scale[:, None]
    return P


def _reset_local_connectivity(P):
    """Each row divided by its largest entry, then the fuzzy union ``P + P^T - P * P^T``."""
    top = np.asarray(P.max(axis=1).todense() if sparse.issparse(P) else P.max(axis=1)).ravel()
    scale = np.divide(1.0, top, out=np.zeros_like(top), where=top > 0)
    if sparse.issparse(P):
        P = sparse.csr_matrix(sparse.diags(scale) @ P)
        T = P.T.tocsr()
        return sparse.csr_matrix(P + T - P.multiply(T))
    P = P * scale[:, None]
    return P + P.T - P * P.T
