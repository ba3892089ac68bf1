"""The processed input handed to affinity calibration and to the methods."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .distances import squared_distances
from .metric import EUCLIDEAN, Metric


@dataclass
class InputData:
    """Coordinates (n, p), dense or scipy CSR, or, with ``precomputed=True``, a symmetric distance
    matrix (n, n).

    Distances are those of ``metric`` (:mod:`smallvis.io.metric`; Euclidean by default), computed
    once, on first use, and shared by every consumer.
    """

    X: np.ndarray
    precomputed: bool = False
    _cache: dict = field(default_factory=dict, repr=False)
    metric: Metric = EUCLIDEAN
    # the original's quirk (defaults="smallvis"): its Gaussian kernels read a precomputed distance
    # matrix unsquared, exp(-beta d), where coordinates give exp(-beta d^2); False squares it too
    gaussian_unsquared: bool = False
    # a kNN graph (X its CSR distance graph, the neighbours set): no distance beyond each point's
    # stored neighbours exists
    graph: bool = False
    # the input affinities themselves (metric="affinities"): X is P
    given_P: object = None
    # supervised embedding: integer class codes (-1: unlabelled) and the weight of the labels
    # (:mod:`smallvis.affinity.supervised`); None for an unsupervised run
    labels: np.ndarray | None = None
    target_weight: float = 0.5
    # transform: the fitted rows' un-normalised kernel values (CSR, the first rows of these points),
    # which the sparse calibration reuses, calibrating only the rows after them
    fitted_V: object = None

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def sparse(self) -> bool:
        """The coordinates are a scipy sparse (CSR) matrix."""
        return hasattr(self.X, "tocsr")

    @property
    def coordinates_euclidean(self) -> bool:
        """Dense coordinates under the Euclidean metric: the original's case, with its fast and
        cancellation-free paths (blocked distances, squared-distance kernels)."""
        return not self.precomputed and not self.sparse and self.metric.euclidean

    @property
    def max_neighbors(self) -> int | None:
        """Neighbours per point a kNN graph gives (None: any number can be searched)."""
        if not self.graph:
            return None
        found = self.known_neighbors()
        return None if found is None else found[0].shape[1]

    def require_distances(self) -> None:
        """Refuse a kNN graph or given affinities, with the reason, where every pair's input
        distance will be read (the sgd engine's sampled pairs read them from the input on the
        fly, so it asks before it starts)."""
        if self.graph:
            self._no_distances()

    def _no_distances(self):
        what = ("the input affinities P (metric='affinities')" if self.given_P is not None
                else f"a kNN graph ({self.max_neighbors} neighbours per point)")
        raise ValueError(f"this needs all pairwise input distances, and the input is {what}: use a "
                         f"method that works from neighbours or affinities (tsne, umap, largevis, "
                         f"...), or give the data or a full distance matrix")

    def squared_distances(self) -> np.ndarray:
        """Squared distances (precomputed input: the given distances, squared)."""
        if self.graph:
            self._no_distances()
        if "D2" not in self._cache:
            if self.coordinates_euclidean:
                self._cache["D2"] = squared_distances(self.X)
            else:
                self._cache["D2"] = self.distances() ** 2
        return self._cache["D2"]

    def distances(self) -> np.ndarray:
        """Distances: the precomputed matrix itself, or the metric's distances of the coordinates."""
        if self.graph:
            self._no_distances()
        if "R" not in self._cache:
            if self.precomputed:
                self._cache["R"] = self.X
            elif self.coordinates_euclidean:
                self._cache["R"] = np.sqrt(self.squared_distances())
            else:
                from .._util.log import logger

                logger.info("distances: %s, %d x %d", self.metric.describe(), self.n, self.n)
                R = self.metric.pairwise(self.X, self.X)
                np.fill_diagonal(R, 0.0)
                self._cache["R"] = R
        return self._cache["R"]

    def release(self, *names: str) -> None:
        """Forget the cached (n, n) matrices ``names`` (``"D2"``, ``"R"``; both when none are
        named): a later call computes them again, with the same values. The run calls it once the
        method and the start have what they need, so that an exact run does not carry the input
        distances through the optimisation."""
        for name in names or ("D2", "R"):
            self._cache.pop(name, None)

    def kernel_distances(self, squared: bool) -> np.ndarray:
        """The matrix a Gaussian-type kernel ``exp(-beta D)`` reads: squared distances when
        ``squared`` (unless :attr:`gaussian_unsquared`, the original's quirk), else distances."""
        if squared and not self.gaussian_unsquared:
            return self.squared_distances()
        return self.distances()

    def pair_distances(self, rows: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """Distances (b, m) from point ``rows[r]`` to points ``cand[r, j]``, from the coordinates
        (or read from the precomputed matrix)."""
        if self.precomputed:
            return np.take_along_axis(self.X[rows], cand, axis=1)
        if self.coordinates_euclidean:
            from .neighbors import _exact_sq

            return np.sqrt(_exact_sq(self.X, rows, cand))
        return self.metric.to_candidates(self.X, rows, cand)

    def knn(self, k: int) -> np.ndarray:
        """Indices (n, k) of each point's ``k`` nearest other points, nearest first (ties: lower index):
        the exact search of :meth:`neighbors`, so a dense and a sparse path pick the same neighbours
        even where distances tie (the expanded-form distances of the dense matrix would break ties by
        rounding)."""
        return self.neighbors(k, "exact")[0]

    def set_neighbors(self, indices: np.ndarray, distances: np.ndarray) -> None:
        """Neighbours known in advance (each row's nearest other points, nearest first): every
        search for at most as many neighbours reads them instead of searching (transform: the fitted
        points' own neighbours and the new points' searched ones)."""
        self._cache[("neighbors", indices.shape[1], "exact")] = (indices, distances)

    def known_neighbors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The most neighbours per point found so far, ``(indices, distances)``, or None."""
        found = [key for key in self._cache if isinstance(key, tuple) and key[0] == "neighbors"]
        return self._cache[max(found, key=lambda key: key[1])] if found else None

    def neighbors(self, k: int, method: str = "auto", random_state=None) -> tuple[np.ndarray, np.ndarray]:
        """Each point's ``k`` nearest other points and their distances, ``(indices, distances)``,
        each (n, k), nearest first (see :func:`smallvis.io.neighbors.nearest_neighbors`).

        No (n, n) array is formed unless the dense distances are already cached, in which case the
        exact answer is read from them (whatever ``method``). Exact answers are cached per ``k`` and a
        smaller ``k`` is read off a larger cached one; approximate answers are cached per ``k`` and
        integer/None ``random_state`` (not for a Generator, whose state would be consumed).
        """
        from .._util.log import logger
        from .neighbors import (KNN_METHODS, _exact_matrix, auto_knn_method, check_neighbors_k,
                                nearest_neighbors)
        from .._util.names import match_name

        method = match_name(method, KNN_METHODS, "kNN method")
        k = check_neighbors_k(k, self.n)
        exact_keys = [key for key in self._cache
                      if isinstance(key, tuple) and key[0] == "neighbors" and key[2] == "exact"
                      and key[1] >= k]
        if exact_keys:
            idx, dist = self._cache[min(exact_keys, key=lambda key: key[1])]
            return idx[:, :k], dist[:, :k]
        if self.graph:
            if self.given_P is not None:
                self._no_distances()
            raise ValueError(f"the kNN graph gives {self.max_neighbors} neighbours per point; "
                             f"{k} are needed here (the method's number of neighbours, or 3 x "
                             f"perplexity for a perplexity calibration): give a graph with more "
                             f"neighbours, or ask for fewer")
        dense = None
        if self.precomputed:
            dense, squared = self.X, False
        elif "R" in self._cache and not self.coordinates_euclidean:
            dense, squared = self._cache["R"], False
        elif "D2" in self._cache and self.coordinates_euclidean:
            dense, squared = self._cache["D2"], True
        elif "R" in self._cache:
            dense, squared = self._cache["R"], False
        if dense is not None:
            logger.info("kNN: exact, from the %s, for %d points, k = %d",
                        "precomputed distance matrix" if self.precomputed
                        else "dense distances already computed", self.n, k)
            result = _exact_matrix(dense, k, squared=squared,
                                   X=self.X if self.coordinates_euclidean else None)
            self._cache[("neighbors", k, "exact")] = result
            return result
        if method == "auto":
            method = auto_knn_method(self.n, k, self.X.shape[1],
                                     euclidean_rows=self.coordinates_euclidean)
        cacheable = random_state is None or isinstance(random_state, (int, np.integer))
        key = ("neighbors", k, "exact") if method == "exact" else ("neighbors", k, method, random_state)
        if key in self._cache:
            return self._cache[key]
        result = nearest_neighbors(self.X, k, method=method, random_state=random_state,
                                   metric=self.metric)
        if method == "exact" or cacheable:
            self._cache[key] = result
        return result
