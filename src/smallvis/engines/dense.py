"""The dense NumPy engine: exact O(n^2) costs and gradients. The oracle every other engine is tested against."""

from __future__ import annotations

import numpy as np

from ..io.distances import squared_distances


def force_gradient(K: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``G_i = sum_j K_ij (y_i - y_j)`` for a stiffness matrix K (n, n) and coordinates Y (n, k)."""
    return K.sum(axis=1)[:, None] * Y - K @ Y


# (n, n) float64 matrices alive at once during a dense run: P, distances, weights, stiffness and
# temporaries of the affinity calibration and the gradient.
DENSE_MATRICES = 8


def available_memory():
    """The bytes this process may still allocate (an int whose ``.source`` names the limit), or None:
    the smallest of the available memory, the cgroup limit and ``ulimit -v`` (see
    :mod:`smallvis._util.memory`; physical memory alone lets through runs a container then kills)."""
    from .._util.memory import available_memory as budget

    return budget()


def check_memory(n: int, matrices: float, engine: str, budget: int | None = None) -> None:
    """Refuse, before allocating anything, a run whose ``matrices`` (n, n) float64 arrays cannot fit
    in memory."""
    from .._util.memory import describe, gib

    need = int(matrices * 8 * n * n)
    budget = available_memory() if budget is None else budget
    if budget is not None and need > 0.8 * budget:
        what = "P, an n x n float64 matrix" if matrices == 1 else \
            f"{matrices:g} n x n float64 matrices at its peak"
        raise MemoryError(
            f"the {engine} engine needs about {gib(need)} for {n} points ({what}) but "
            f"{describe(budget)}. Keep P sparse instead: engine='fft' or "
            f"'bh' (t-SNE family, kNN-restricted P), engine='sgd' (largevis, umap, tumap, ncvis, "
            f"ee, tee, mmds, smmds, sammon), "
            f"or a sparse input kernel such as inp_kernel='nngaussian' or 'knn' with "
            f"engine='exact'; or embed a random sample"
        )


def check_dense_memory(n: int, budget: int | None = None) -> None:
    """Refuse, before allocating anything, a dense run that cannot fit in memory."""
    check_memory(n, DENSE_MATRICES, "exact dense", budget)


class DenseEngine:
    """Evaluate a method on full (n, n) matrices."""

    name = "dense"

    @staticmethod
    def serves(method) -> bool:
        """Every method: the dense engine evaluates ``Method.terms`` itself (the reference)."""
        return True

    def check(self, n: int) -> None:
        check_dense_memory(n)

    def prepare(self, method, data, *, extras=frozenset(), rng=None):
        """The method's input affinities as (n, n) arrays (a kNN graph's sparse ones made dense:
        ``Method.terms`` computes on arrays)."""
        from scipy import sparse

        state = method.prepare(data, extras=extras)
        if sparse.issparse(state.P):
            state.P = state.P.toarray()
        for name, value in state.data.items():
            if sparse.issparse(value):
                state.data[name] = value.toarray()
        return state

    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``."""
        d2 = squared_distances(Y)
        pcost, K = method.terms(d2, state, exaggeration, cost=cost, grad=grad)
        G = force_gradient(K, Y) if grad else None
        return pcost, G
