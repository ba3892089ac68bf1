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


# --------------------------------------------------------------------------------------------------
# The snedata generators of docs/original.md#datasets (on the idp, three-clusters, swisssne, ee and
# averaging pages). Each returns ``(X, labels)``: ``labels`` are class ids (1, 2, ...), a continuous
# value to colour by, or ``None``. Random ones take ``rng`` (a numpy Generator, an int seed, or
# ``None`` for fresh OS entropy); the same generator state gives the same data.
# --------------------------------------------------------------------------------------------------

def _count(value, name: str) -> int:
    """``value`` as an int >= 1 (whole floats such as ``1000.0`` are accepted), else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
    if not np.isfinite(value) or value != int(value) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
    return int(value)


def _real(value, name: str, *, minimum: float | None = None, strict: bool = True) -> float:
    """``value`` as a finite float, optionally ``> minimum`` (``>=`` when not ``strict``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        bound = "positive" if (minimum == 0 and strict) else f"{'>' if strict else '>='} {minimum:g}"
        raise ValueError(f"{name} must be {bound}; got {value!r}")
    return value


def _rng(rng) -> np.random.Generator:
    from .._util.rng import as_generator

    return as_generator(rng)


def _rotate_x(X: np.ndarray, angle: float) -> np.ndarray:
    """Rotate 3-D rows about the x axis: ``y' = c y + s z``, ``z' = -s y + c z``."""
    c, s = np.cos(angle), np.sin(angle)
    out = X.copy()
    out[:, 1] = c * X[:, 1] + s * X[:, 2]
    out[:, 2] = -s * X[:, 1] + c * X[:, 2]
    return out


def _equal_angles(n: int) -> np.ndarray:
    """``n`` equally spaced angles ``2 pi k / n``, ``k = 0 .. n-1`` (in ``[0, 2 pi)``)."""
    n = _count(n, "n")
    return np.arange(n) * (2.0 * np.pi / n)


def gaussian_data(n: int, dim: int, sd: float = 1.0, rng=None) -> tuple[np.ndarray, None]:
    """``n`` draws of the isotropic Gaussian N(0, sd^2 I) in ``dim`` dimensions (``snedata::gaussian_data``).

    Returns
    -------
    X : ndarray (n, dim)
    labels : None
    """
    n, dim = _count(n, "n"), _count(dim, "dim")
    sd = _real(sd, "sd", minimum=0.0)
    return _rng(rng).normal(0.0, sd, size=(n, dim)), None


def ball(n: int = 1000, rad: float = 1.0, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points uniform in the 3-D ball of radius ``rad`` (``snedata::ball``).

    A Gaussian direction scaled to length ``rad * U^(1/3)``, ``U ~ U(0, 1)``.

    Returns
    -------
    X : ndarray (n, 3)
    labels : ndarray (n,)
        Squared distance from the centre (continuous), the colouring snedata uses.
    """
    n = _count(n, "n")
    rad = _real(rad, "rad", minimum=0.0)
    rng = _rng(rng)
    u = rng.uniform(size=n)
    g = rng.normal(size=(n, 3))
    X = g * (rad * np.cbrt(u) / np.linalg.norm(g, axis=1))[:, None]
    return X, np.einsum("ij,ij->i", X, X)


def sphere(n: int = 1000, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points uniform on the unit sphere's surface (``snedata::sphere``).

    ``z ~ U(-1, 1)``, ``theta ~ U(-pi, pi)``, ``x = sin(theta) sqrt(1 - z^2)``,
    ``y = cos(theta) sqrt(1 - z^2)`` (Archimedes: uniform ``z`` is uniform on the surface).

    Returns
    -------
    X : ndarray (n, 3)
    labels : ndarray (n,)
        The azimuth ``theta`` (continuous): segments like an orange's, snedata's colouring.
    """
    n = _count(n, "n")
    rng = _rng(rng)
    z = rng.uniform(-1.0, 1.0, size=n)
    theta = rng.uniform(-np.pi, np.pi, size=n)
    r = np.sqrt(1.0 - z * z)
    return np.column_stack([np.sin(theta) * r, np.cos(theta) * r, z]), theta


def helix(n: int = 1000, rmajor: float = 3.0, rminor: float = 1.0,
          nwinds: float = 30.0) -> tuple[np.ndarray, np.ndarray]:
    """A helix wound ``nwinds`` times round a torus (``snedata::helix``); not random.

    ``u`` takes ``n`` equally spaced values from ``-pi`` to ``pi`` inclusive (so for ``n > 1`` the first
    and last points coincide, as in R's ``seq(-pi, pi, length.out = n)``);
    ``w = rmajor + rminor cos(nwinds u)``, ``x = w cos u``, ``y = w sin u``, ``z = rminor sin(nwinds u)``.
    The defaults are the values of the idp page (snedata's own are ``rmajor = 2, nwinds = 8``).

    Returns
    -------
    X : ndarray (n, 3)
    labels : ndarray (n,)
        Distance from the origin (continuous; it shows the position round the tube), snedata's colouring.
    """
    n = _count(n, "n")
    rmajor = _real(rmajor, "rmajor", minimum=0.0)
    rminor = _real(rminor, "rminor", minimum=0.0)
    nwinds = _real(nwinds, "nwinds", minimum=0.0, strict=False)
    u = np.linspace(-np.pi, np.pi, n)
    w = rmajor + rminor * np.cos(nwinds * u)
    X = np.column_stack([w * np.cos(u), w * np.sin(u), rminor * np.sin(nwinds * u)])
    return X, np.linalg.norm(X, axis=1)


def swiss_roll(n: int = 1000, min_phi: float = 1.5 * np.pi, max_phi: float = 4.5 * np.pi,
               max_z: float = 10.0, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """A swiss roll without noise (``snedata::swiss_roll``).

    ``phi ~ U(min_phi, max_phi)``, ``x = phi cos(phi)``, ``y = phi sin(phi)``, ``z ~ U(0, max_z)``.

    Returns
    -------
    X : ndarray (n, 3)
    labels : ndarray (n,)
        ``phi`` (continuous): the coordinate along the unrolled sheet.
    """
    n = _count(n, "n")
    min_phi = _real(min_phi, "min_phi")
    max_phi = _real(max_phi, "max_phi")
    if not min_phi < max_phi:
        raise ValueError(f"min_phi must be less than max_phi; got min_phi={min_phi!r}, max_phi={max_phi!r}")
    max_z = _real(max_z, "max_z", minimum=0.0)
    rng = _rng(rng)
    phi = rng.uniform(min_phi, max_phi, size=n)
    z = rng.uniform(0.0, max_z, size=n)
    return np.column_stack([phi * np.cos(phi), phi * np.sin(phi), z]), phi


def linked_rings(n: int = 100, angle: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    """Two linked unit circles of ``n`` points each (``snedata::link_data``); not random.

    With ``theta_k = 2 pi k / n``: ring 1 is ``(cos theta, sin theta, 0)``, ring 2
    ``(1 + cos theta, 0, sin theta)``; both are then rotated by ``angle`` (0.4 rad) about the x axis
    (``y' = c y + s z``, ``z' = -s y + c z``).

    Returns
    -------
    X : ndarray (2n, 3)
        Ring 1's points, then ring 2's.
    labels : ndarray of int (2n,)
        1 or 2: the ring.
    """
    theta = _equal_angles(n)
    angle = _real(angle, "angle")
    c, s, zero = np.cos(theta), np.sin(theta), np.zeros_like(theta)
    ring1 = np.column_stack([c, s, zero])
    ring2 = np.column_stack([1.0 + c, zero, s])
    X = _rotate_x(np.vstack([ring1, ring2]), angle)
    return X, np.repeat([1, 2], len(theta))


def circle_data(n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """``n`` equally spaced points on the 2-D unit circle (``snedata::circle_data``); not random.

    Returns
    -------
    X : ndarray (n, 2)
        ``(cos theta_k, sin theta_k)``, ``theta_k = 2 pi k / n``.
    labels : ndarray (n,)
        ``theta_k`` (continuous).
    """
    theta = _equal_angles(n)
    return np.column_stack([np.cos(theta), np.sin(theta)]), theta


def fuzzy_ring(n: int = 1000, inner: float = 2.0, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """A 2-D standard Gaussian of ``n`` points with a hole: the idp page's "Gaussian hole".

    Every point at distance ``<= inner`` from the centre (the origin) is removed, so **fewer than n
    points remain**: on average ``n exp(-inner^2 / 2)``, about 135 of 1000 for ``inner = 2``. The
    count depends on the seed.

    Returns
    -------
    X : ndarray (m, 2), m <= n
    labels : ndarray (m,)
        The polar angle ``atan2(y, x)`` in ``(-pi, pi]`` (continuous), so the ring shows its order.
    """
    n = _count(n, "n")
    inner = _real(inner, "inner", minimum=0.0, strict=False)
    X = _rng(rng).normal(size=(n, 2))
    X = X[np.hypot(X[:, 0], X[:, 1]) > inner]
    return X, np.arctan2(X[:, 1], X[:, 0])


def three_clusters(n: int = 50, dim: int = 50, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Three N(0, I) clusters of ``n`` points on a line (``snedata::three_clusters_data``).

    Cluster 2 is shifted by +10 along the first coordinate and cluster 3 by +50: the "How to Use
    t-SNE Effectively" data whose inter-cluster distances t-SNE does not keep.

    Returns
    -------
    X : ndarray (3n, dim)
    labels : ndarray of int (3n,)
        1, 2, 3: the cluster.
    """
    n, dim = _count(n, "n"), _count(dim, "dim")
    X = _rng(rng).normal(size=(3 * n, dim))
    X[n:2 * n, 0] += 10.0
    X[2 * n:, 0] += 50.0
    return X, np.repeat([1, 2, 3], n)


def subset_clusters(n: int = 75, dim: int = 50, big_sdev: float = 50.0,
                    rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Two concentric Gaussians of ``n`` points: sd 1 and sd ``big_sdev`` (``snedata::subset_clusters_data``).

    Returns
    -------
    X : ndarray (2n, dim)
        The small cluster's points, then the big one's.
    labels : ndarray of int (2n,)
        1 (small) or 2 (big).
    """
    n, dim = _count(n, "n"), _count(dim, "dim")
    big_sdev = _real(big_sdev, "big_sdev", minimum=0.0)
    rng = _rng(rng)
    small = rng.normal(size=(n, dim))
    big = rng.normal(0.0, big_sdev, size=(n, dim))
    return np.vstack([small, big]), np.repeat([1, 2], n)
