"""UMAP's smooth kNN distances: the ``"skd"`` input kernel (docs/original.md#smooth-knn-distances).

Each point ``i`` has ``k`` neighbours *including itself* (listed first, distance 0), so ``k - 1`` real
ones. With ``rho_i`` the distance to the nearest neighbour at a non-zero distance (interpolated for a
fractional ``local_connectivity``), the memberships are

.. math:: v_{ij} = \\exp(-\\max(0, d_{ij} - \\rho_i) / (\\sigma_i \\, \\mathrm{bandwidth}))

for the listed neighbours (0 elsewhere and on the diagonal), where ``sigma_i`` is found by bisection
(from 1, doubling until bracketed) so that ``sum_{j != i} exp(-max(0, d_ij - rho_i) / sigma_i)``
equals ``log2(k) * bandwidth``, then floored at ``min_k_dist_scale`` times a mean neighbour distance.
Memberships are not normalised; :func:`~smallvis.affinity.scale.fuzzy_set_union` symmetrises them.

The computation works on the ``(n, k)`` neighbour arrays (:func:`smooth_knn_core`), so the same code
serves the dense matrix here (:func:`knn_to_dense`) and a sparse one (:func:`knn_to_csr`) for large n.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._util.log import logger
from ..io.data import InputData

__all__ = [
    "SmoothKNN",
    "check_k",
    "knn_to_csr",
    "knn_to_dense",
    "smooth_knn_core",
    "smooth_knn_distances",
    "smooth_knn_neighbours",
]


@dataclass(frozen=True)
class SmoothKNN:
    """Result of :func:`smooth_knn_distances`.

    Attributes
    ----------
    sigma : ndarray (n,)
        Per-point bandwidths (after the floor).
    rho : ndarray (n,)
        Per-point distance to the (interpolated) nearest neighbour at a non-zero distance.
    P : ndarray (n, n)
        Un-symmetrised memberships ``v_ij`` (zero diagonal; row ``i`` non-zero only on its neighbours).
    knn_indices, knn_dists : ndarray (n, k)
        The neighbours used, the point itself first, then by increasing distance.
    vals : ndarray (n, k)
        The memberships of those neighbours (0 for the point itself).
    converged : ndarray of bool (n,)
        Rows whose bisection reached ``|sum - log2(k) bandwidth| < tol`` within ``n_iter`` steps.
    """

    sigma: np.ndarray
    rho: np.ndarray
    P: np.ndarray
    knn_indices: np.ndarray
    knn_dists: np.ndarray
    vals: np.ndarray
    converged: np.ndarray

    @property
    def n_unconverged(self) -> int:
        return int((~self.converged).sum())

    def sparse(self):
        """The memberships as a ``scipy.sparse.csr_matrix`` (n, n), explicit zeros removed."""
        return knn_to_csr(self.knn_indices, self.vals, self.P.shape[0])


# --- validation --------------------------------------------------------------------------------


def check_k(k, n: int, what: str = "k") -> int:
    """``k`` neighbours *including the point itself*: a whole number with ``2 <= k <= n``."""
    if isinstance(k, np.ndarray) and k.ndim == 0:
        k = k.item()
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) or np.ndim(k) != 0:
        raise ValueError(
            f"{what} (number of neighbours for smooth kNN distances, the point itself included) must "
            f"be a single whole number; got {k!r}"
        )
    if not math.isfinite(k) or k != int(k):
        raise ValueError(
            f"{what} (number of neighbours for smooth kNN distances, the point itself included) must "
            f"be a whole number; got {k!r}"
        )
    k = int(k)
    if k < 2:
        raise ValueError(
            f"{what} (number of neighbours for smooth kNN distances, the point itself included) must "
            f"be at least 2; got {k}"
        )
    if k > n:
        raise ValueError(
            f"{what} = {k} neighbours (the point itself included) is too many for {n} points "
            f"(at most {n})"
        )
    return k


def _check_number(name: str, value, *, positive: bool) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number; got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {value!r}")
    return value


def _check_options(local_connectivity, bandwidth, n_iter, tol, min_k_dist_scale):
    local_connectivity = _check_number("local_connectivity", local_connectivity, positive=False)
    bandwidth = _check_number("bandwidth", bandwidth, positive=True)
    tol = _check_number("tol", tol, positive=True)
    min_k_dist_scale = _check_number("min_k_dist_scale", min_k_dist_scale, positive=False)
    if (isinstance(n_iter, (bool, np.bool_)) or not isinstance(n_iter, numbers.Real)
            or not math.isfinite(n_iter) or n_iter != int(n_iter) or n_iter < 1):
        raise ValueError(f"n_iter must be a whole number >= 1; got {n_iter!r}")
    return local_connectivity, bandwidth, int(n_iter), tol, min_k_dist_scale


# --- neighbours --------------------------------------------------------------------------------


def smooth_knn_neighbours(data: InputData, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact neighbours ``(indices, distances)``, each (n, k): the point itself first, then its
    ``k - 1`` nearest other points by increasing distance (ties: lower index first).

    The point itself comes first even when duplicates of it are at distance 0 too. For coordinate
    input the selected distances are recomputed directly from the coordinates, so duplicates are at
    exactly 0 and the distances carry no cancellation error.
    """
    n = data.n
    rows = np.arange(n)
    if data.precomputed:  # read from the matrix's rows, or the graph's
        others, dists = data.neighbors(k - 1, "exact")
        dists = np.array(dists, dtype=np.float64)
    elif not data.coordinates_euclidean:  # the metric's distances, recomputed pair by pair
        others = data.knn(k - 1)  # k >= 2
        dists = data.pair_distances(rows, others)
        order = np.argsort(dists, axis=1, kind="stable")
        others = np.take_along_axis(others, order, axis=1)
        dists = np.take_along_axis(dists, order, axis=1)
    else:
        others = data.knn(k - 1)
        X = data.X
        dists = np.empty(others.shape)
        for j in range(others.shape[1]):  # one neighbour column at a time: (n, p) temporaries
            diff = X[others[:, j]] - X
            dists[:, j] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        # re-sort by the exact distances (stable: the kNN order survives exact ties)
        order = np.argsort(dists, axis=1, kind="stable")
        others = np.take_along_axis(others, order, axis=1)
        dists = np.take_along_axis(dists, order, axis=1)
    idx = np.concatenate([rows[:, None], others], axis=1)
    dist = np.concatenate([np.zeros((n, 1)), dists], axis=1)
    return idx, dist


# --- the calibration on (n, k) arrays ----------------------------------------------------------


def _rho(dists: np.ndarray, local_connectivity: float, tol: float) -> np.ndarray:
    """Distance to the ``local_connectivity``-th non-zero neighbour distance, interpolated."""
    n, k = dists.shape
    positive = dists > 0.0
    n_pos = positive.sum(axis=1)
    # the positive distances of each row, in listed order, packed to the left
    order = np.argsort(~positive, axis=1, kind="stable")
    nz = np.take_along_axis(dists, order, axis=1)
    index = math.floor(local_connectivity)
    frac = local_connectivity - index
    rho = np.zeros(n)
    enough = n_pos >= local_connectivity
    if index > 0:
        lo = nz[:, min(index, k) - 1]
        if frac <= tol:
            interp = lo
        else:
            hi = nz[:, min(index + 1, k) - 1]
            interp = lo + frac * (hi - lo)
    else:
        interp = frac * nz[:, 0] if k > 0 else np.zeros(n)
        interp = np.where(n_pos > 0, interp, 0.0)
    rho[enough] = interp[enough]
    fewer = ~enough & (n_pos > 0)
    rho[fewer] = dists[fewer].max(axis=1)
    return rho


def smooth_knn_core(knn_indices: np.ndarray, knn_dists: np.ndarray, *,
                    local_connectivity: float = 1.0, bandwidth: float = 1.0, n_iter: int = 64,
                    tol: float = 1e-5, min_k_dist_scale: float = 1e-3):
    """Smooth kNN calibration on neighbour arrays (no validation).

    Parameters
    ----------
    knn_indices : int ndarray (n, k)
        Neighbours of each point, the point itself in column 0.
    knn_dists : float ndarray (n, k)
        Their distances (column 0 is 0), non-zero distances in increasing order.
    local_connectivity, bandwidth, n_iter, tol, min_k_dist_scale
        As in :func:`smooth_knn_distances`.

    Returns
    -------
    sigma : ndarray (n,)
    rho : ndarray (n,)
    vals : ndarray (n, k)
        Memberships of the listed neighbours, 0 where the neighbour is the point itself.
    converged : bool ndarray (n,)
        Whether each row's bisection met the tolerance.
    """
    knn_dists = np.asarray(knn_dists, dtype=np.float64)
    n, k = knn_dists.shape
    target = math.log2(k) * bandwidth
    rho = _rho(knn_dists, local_connectivity, tol)

    # shifted distances of the k - 1 neighbours after the point itself (column 0 is excluded)
    shifted = np.maximum(0.0, knn_dists[:, 1:] - rho[:, None])
    lo = np.zeros(n)
    hi = np.full(n, np.inf)
    mid = np.ones(n)
    active = np.ones(n, dtype=bool)
    for _ in range(n_iter):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        m = mid[rows]
        s = np.zeros(rows.size)
        for j in range(k - 1):  # summed in neighbour order, as the original does
            s += np.exp(-(shifted[rows, j] / m))
        done = np.abs(s - target) < tol
        active[rows[done]] = False
        rows, s, m = rows[~done], s[~done], m[~done]
        above = s > target
        r_hi = rows[above]
        hi[r_hi] = m[above]
        mid[r_hi] = (lo[r_hi] + hi[r_hi]) / 2.0
        r_lo = rows[~above]
        lo[r_lo] = m[~above]
        mid[r_lo] = np.where(np.isinf(hi[r_lo]), m[~above] * 2, (lo[r_lo] + hi[r_lo]) / 2.0)
    converged = ~active
    sigma = mid

    # floors: a fraction of the row's mean neighbour distance (self's 0 included), or of the mean of
    # all neighbour distances where rho is 0
    has_rho = rho > 0.0
    if has_rho.any():
        sigma[has_rho] = np.maximum(sigma[has_rho],
                                    min_k_dist_scale * knn_dists[has_rho].mean(axis=1))
    if (~has_rho).any():
        sigma[~has_rho] = np.maximum(sigma[~has_rho], min_k_dist_scale * knn_dists.mean())

    delta = knn_dists - rho[:, None]
    with np.errstate(over="ignore"):
        vals = np.exp(-delta / (sigma * bandwidth)[:, None])
    vals[delta <= 0] = 1.0
    vals[np.asarray(knn_indices) == np.arange(n)[:, None]] = 0.0
    return sigma, rho, vals, converged


def knn_to_dense(knn_indices: np.ndarray, vals: np.ndarray, n: int) -> np.ndarray:
    """Place (n, k) neighbour values into a dense (n, n) matrix with a zero diagonal."""
    P = np.zeros((n, n))
    np.put_along_axis(P, np.asarray(knn_indices), vals, axis=1)
    np.fill_diagonal(P, 0.0)
    return P


def knn_to_csr(knn_indices: np.ndarray, vals: np.ndarray, n: int):
    """Place (n, k) neighbour values into a ``scipy.sparse.csr_matrix`` (n, n): zero diagonal, no
    explicit zeros."""
    from scipy import sparse

    knn_indices = np.asarray(knn_indices)
    rows = np.repeat(np.arange(knn_indices.shape[0]), knn_indices.shape[1])
    data = np.where(knn_indices.ravel() == rows, 0.0, np.asarray(vals, dtype=np.float64).ravel())
    P = sparse.csr_matrix((data, (rows, knn_indices.ravel())), shape=(n, n))
    P.eliminate_zeros()
    return P


# --- public entry points -----------------------------------------------------------------------


def smooth_knn_from_data(data: InputData, k: int, *, local_connectivity: float = 1.0,
                         bandwidth: float = 1.0, n_iter: int = 64, tol: float = 1e-5,
                         min_k_dist_scale: float = 1e-3) -> SmoothKNN:
    """Smooth kNN distances of processed input (``k`` already validated)."""
    idx, dist = smooth_knn_neighbours(data, k)
    sigma, rho, vals, converged = smooth_knn_core(
        idx, dist, local_connectivity=local_connectivity, bandwidth=bandwidth, n_iter=n_iter,
        tol=tol, min_k_dist_scale=min_k_dist_scale)
    logger.info("Smooth kNN distances for k = %d (%d points): sigma min %.4g, median %.4g, max %.4g",
                k, data.n, sigma.min(), np.median(sigma), sigma.max())
    if not converged.all():
        logger.info("Smooth kNN bandwidth search did not converge for %d points (kept the last "
                    "bisection value, floored)", int((~converged).sum()))
    return SmoothKNN(sigma=sigma, rho=rho, P=knn_to_dense(idx, vals, data.n), knn_indices=idx,
                     knn_dists=dist, vals=vals, converged=converged)


def smooth_knn_distances(X, k, *, metric: str = "euclidean", local_connectivity: float = 1.0,
                         bandwidth: float = 1.0, n_iter: int = 64, tol: float = 1e-5,
                         min_k_dist_scale: float = 1e-3) -> SmoothKNN:
    """UMAP's smooth kNN distances (memberships of each point's ``k``-neighbourhood), as the original.

    Parameters
    ----------
    X : array (n, p), or (n, n) distances with ``metric="precomputed"``
    k : int
        Neighbours per point *including the point itself* (so ``k - 1`` real neighbours),
        ``2 <= k <= n``; the target of the bandwidth search is ``log2(k) * bandwidth``.
    metric : {"euclidean", "precomputed"}
    local_connectivity : float, default 1
        Which non-zero neighbour distance is ``rho`` (fractional values interpolate); ``>= 0``.
    bandwidth : float, default 1
        Scales the target sum and the bandwidths of the weights; ``> 0``.
    n_iter : int, default 64
        Maximum bisection steps.
    tol : float, default 1e-5
        Tolerance on the sum of memberships (also on the fractional part of ``local_connectivity``).
    min_k_dist_scale : float, default 1e-3
        Floor of sigma as a fraction of the mean neighbour distance.

    Returns
    -------
    SmoothKNN
        ``.sigma`` (n,), ``.rho`` (n,), ``.P`` (n, n) un-symmetrised memberships with zero diagonal
        (``.sparse()`` gives them as a CSR matrix), plus the neighbour arrays and ``.converged``.
    """
    from .._util.names import match_name
    from ..io.preprocess import as_numeric_matrix

    metric = match_name(metric, ("euclidean", "precomputed"), "metric")
    X = as_numeric_matrix(X)  # 2-D, finite
    precomputed = metric == "precomputed"
    if precomputed:
        from ..io.validate import check_distance_matrix

        check_distance_matrix(X)
    k = check_k(k, X.shape[0])
    options = _check_options(local_connectivity, bandwidth, n_iter, tol, min_k_dist_scale)
    local_connectivity, bandwidth, n_iter, tol, min_k_dist_scale = options
    return smooth_knn_from_data(InputData(X, precomputed=precomputed), k,
                                local_connectivity=local_connectivity, bandwidth=bandwidth,
                                n_iter=n_iter, tol=tol, min_k_dist_scale=min_k_dist_scale)
