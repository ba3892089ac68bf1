"""The dense NumPy engine: exact O(n^2) costs and gradients. The oracle every other engine is tested against."""

from __future__ import annotations

import numpy as np

from ..input.distances import squared_distances


def force_gradient(K: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``G_i = sum_j K_ij (y_i - y_j)`` for a stiffness matrix K (n, n) and coordinates Y (n, k)."""
    return K.sum(axis=1)[:, None] * Y - K @ Y


class DenseEngine:
    """Evaluate a method on full (n, n) matrices."""

    name = "dense"

    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``."""
        d2 = squared_distances(Y)
        pcost, K = method.terms(d2, state, exaggeration, cost=cost, grad=grad)
        G = force_gradient(K, Y) if grad else None
        return pcost, G
