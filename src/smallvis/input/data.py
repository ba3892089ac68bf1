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
        """Indices (n, k) of each point's ``k`` nearest other points, nearest first (ties: lower index)."""
        key = ("knn", k)
        if key not in self._cache:
            D = self.distances().copy()
            np.fill_diagonal(D, np.inf)
            idx = np.argsort(D, axis=1, kind="stable")[:, :k]
            self._cache[key] = idx
        return self._cache[key]
