"""The dense NumPy engine: exact O(n^2) costs and gradients. The oracle every other engine is tested against."""

from __future__ import annotations

import numpy as np

from ..input.distances import squared_distances


def force_gradient(K: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``G_i = sum_j K_ij (y_i - y_j)`` for a stiffness matrix K (n, n) and coordinates Y (n, k)."""
    return K.sum(axis=1)[:, None] * Y - K @ Y


# (n, n) float64 matrices alive at once during a dense run: P, distances, weights, stiffness and
# temporaries of the affinity calibration and the gradient.
DENSE_MATRICES = 8


def available_memory() -> int | None:
    """Physical memory in bytes (None where it cannot be read)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_dense_memory(n: int, budget: int | None = None) -> None:
    """Refuse, before allocating anything, a dense run that cannot fit in memory."""
    need = DENSE_MATRICES * 8 * n * n
    budget = available_memory() if budget is None else budget
    if budget is not None and need > 0.8 * budget:
        raise MemoryError(
            f"the exact dense engine needs about {need / 2**30:.0f} GiB for {n} points "
            f"({DENSE_MATRICES} n x n float64 matrices) but this machine has "
            f"{budget / 2**30:.0f} GiB: use fewer points (e.g. a random sample), or a sparse kernel "
            f"with an approximate engine when available"
        )


class DenseEngine:
    """Evaluate a method on full (n, n) matrices."""

    name = "dense"

    def check(self, n: int) -> None:
        check_dense_memory(n)

    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``."""
        d2 = squared_distances(Y)
        pcost, K = method.terms(d2, state, exaggeration, cost=cost, grad=grad)
        G = force_gradient(K, Y) if grad else None
        return pcost, G
