"""Generators of synthetic datasets (plain functions: sizes and a Generator in, arrays out)."""

from __future__ import annotations

import numpy as np


def simplex_vertices(n_vertices: int = 10, edge: float = 2.0) -> np.ndarray:
    """Vertices of a regular simplex in ``n_vertices - 1`` dimensions, centred on the origin.

    The scaled standard basis ``edge / sqrt(2) * e_i`` of R^m has all pairwise distances equal to
    ``edge``; it lies in a hyperplane ``sum(x) = const``. Centring it and writing it in the orthonormal
    Helmert basis of the sum-zero hyperplane gives the same points in ``m - 1`` coordinates. The basis
    is explicit (no eigen-solver), so the vertices are identical on every platform.

    Returns
    -------
    ndarray (n_vertices, n_vertices - 1)
    """
    m = int(n_vertices)
    if m < 2:
        raise ValueError(f"a simplex needs at least 2 vertices; got {n_vertices}")
    # Helmert rows h_j = (1, .., 1, -j, 0, .., 0) / sqrt(j (j + 1)), j = 1..m-1: orthonormal, sum zero.
    H = np.zeros((m - 1, m))
    for j in range(1, m):
        H[j - 1, :j] = 1.0
        H[j - 1, j] = -j
        H[j - 1] /= np.sqrt(j * (j + 1.0))
    # vertex i = centred (edge / sqrt 2) e_i in that basis = (edge / sqrt 2) * H[:, i]
    return edge / np.sqrt(2.0) * H.T


def fuzzy_simplex(rng: np.random.Generator, n_vertices: int = 10, n_per_vertex: int = 99,
                  edge: float = 2.0, sd: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The ``s1k`` construction: each simplex vertex plus ``n_per_vertex`` draws of N(vertex, sd^2 I).

    Rows are grouped by vertex: vertex ``i`` first, then its samples, all labelled ``i``.

    Returns
    -------
    X : ndarray (n_vertices * (n_per_vertex + 1), n_vertices - 1)
    labels : ndarray of int, same length
    """
    V = simplex_vertices(n_vertices, edge)
    dims = V.shape[1]
    blocks = []
    for v in V:
        noise = rng.normal(0.0, sd, size=(n_per_vertex, dims))
        blocks.append(np.vstack([v, v + noise]))
    labels = np.repeat(np.arange(n_vertices), n_per_vertex + 1)
    return np.vstack(blocks), labels
