"""The processed input handed to affinity calibration and to the methods."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .distances import squared_distances


@dataclass
class InputData:
    """Coordinates (n, p) or, with ``precomputed=True``, a symmetric distance matrix (n, n).

    Distances are computed once, on first use, and shared by every consumer.
    """

    X: np.ndarray
    precomputed: bool = False
    _cache: dict = field(default_factory=dict, repr=False)
    # supervised embedding: integer class codes (-1: unlabelled) and the weight of the labels
    # (:mod:`smallvis.affinity.supervised`); None for an unsupervised run
    labels: np.ndarray | None = None
    target_weight: float = 0.5

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def squared_distances(self) -> np.ndarray:
        """Squared Euclidean distances (for precomputed input: the given distances, squared)."""
        if "D2" not in self._cache:
            self._cache["D2"] = self.X**2 if self.precomputed else squared_distances(self.X)
        return self._cache["D2"]

    def distances(self) -> np.ndarray:
        """Distances: the precomputed matrix itself, or Euclidean distances of the coordinates."""
        if "R" not in self._cache:
            self._cache["R"] = self.X if self.precomputed else np.sqrt(self.squared_distances())
        return self._cache["R"]

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
        from .neighbors import (EXACT_MAX_N, KNN_METHODS, _exact_matrix, check_neighbors_k,
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
        dense = None
        if self.precomputed:
            dense, squared = self.X, False
        elif "D2" in self._cache:
            dense, squared = self._cache["D2"], True
        elif "R" in self._cache:
            dense, squared = self._cache["R"], False
        if dense is not None:
            logger.info("kNN: exact, from the %s, for %d points, k = %d",
                        "precomputed distance matrix" if self.precomputed
                        else "dense distances already computed", self.n, k)
            result = _exact_matrix(dense, k, squared=squared,
                                   X=None if self.precomputed else self.X)
            self._cache[("neighbors", k, "exact")] = result
            return result
        if method == "auto" and self.n <= EXACT_MAX_N:
            method = "exact"
        cacheable = random_state is None or isinstance(random_state, (int, np.integer))
        key = ("neighbors", k, "exact") if method == "exact" else ("neighbors", k, method, random_state)
        if key in self._cache:
            return self._cache[key]
        result = nearest_neighbors(self.X, k, method=method, random_state=random_state)
        if method == "exact" or cacheable:
            self._cache[key] = result
        return result
