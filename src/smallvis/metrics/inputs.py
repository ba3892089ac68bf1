"""The input side of the quality metrics under a metric other than Euclidean.

The Euclidean metrics keep their own fast paths (expanded distances, k-d trees); every other input
goes through an :class:`InputSpace`: coordinates (dense or scipy sparse) with a
:class:`~smallvis.io.metric.Metric`, or a precomputed (n, n) distance matrix. A sparse kNN graph
(``metric="precomputed"`` with a sparse X) knows only each point's nearest distances: enough for kNN
preservation, not for the rank metrics or triplets, which need every pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io.metric import Metric, parse_metric

__all__ = ["InputSpace", "input_space"]


@dataclass(frozen=True)
class InputSpace:
    """Input points under ``metric`` (None: ``X`` is an (n, n) distance matrix)."""

    X: object
    metric: Metric | None

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def shape(self) -> tuple:
        return self.X.shape

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Distances (stop - start, n) from the points ``start .. stop - 1`` to every point."""
        if self.metric is None:
            return np.array(self.X[start:stop], dtype=np.float64)
        return self.metric.pairwise(self.X[start:stop], self.X)

    def pairs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Distances of the pairs ``(a[t], b[t])``."""
        if self.metric is None:
            return np.asarray(self.X[a, b], dtype=np.float64)
        return self.metric.paired(self.X, a, b)

    def take(self, keep: np.ndarray) -> "InputSpace":
        """The space of the points ``keep`` only."""
        if self.metric is None:
            return InputSpace(self.X[np.ix_(keep, keep)], None)
        return InputSpace(self.X[keep], self.metric)


def _is_sparse(X) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def input_space(X, metric, what: str = "this metric") -> InputSpace | None:
    """The :class:`InputSpace` of ``X`` under ``metric``, or None for dense Euclidean coordinates
    (the callers' fast paths). Raises ``ValueError`` for a sparse kNN graph (only its nearest
    distances are known) or a distance matrix that is not square, naming ``what`` needs more."""
    source, resolved = parse_metric(metric)
    if source == "affinities":
        raise ValueError(f"{what} needs input distances or coordinates, not affinities "
                         "(metric='affinities')")
    if source == "precomputed":
        if _is_sparse(X):
            raise ValueError(f"{what} needs the distances of every pair; a sparse kNN graph "
                             "(metric='precomputed') has only each point's nearest ones")
        D = np.asarray(X, dtype=np.float64)
        if D.ndim != 2 or D.shape[0] != D.shape[1]:
            raise ValueError(f"metric='precomputed' needs a square distance matrix; got shape "
                             f"{D.shape}")
        return InputSpace(D, None)
    if resolved.euclidean and not _is_sparse(X):
        return None
    if not _is_sparse(X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
    return InputSpace(X, resolved)
