"""Sparse input affinities: P as a CSR matrix from each point's nearest neighbours, O(n k) memory.

:func:`sparse_affinities` follows :func:`smallvis.affinity.input_affinities` step by step (input
kernel, row step, symmetrisation, matrix normalisation, optional second row normalisation) but never
forms an (n, n) array: the neighbours come from :meth:`InputData.neighbors` (exact blocked search, or
an approximate one above 20,000 points) and every later step works on the sparse matrix.

Kernels:

* ``gaussian``, ``gauss``, ``exp``: the original's R-path calibration
  (docs/original.md#perplexity-calibration),
  restricted to each point's ``k = min(n - 1, floor(3 max U))`` nearest neighbours (as the real
  LargeVis and openTSNE do); with ``k = n - 1`` it is the dense calibration.
* ``nngaussian``: the same restriction to ``floor(3 U)`` neighbours, but every point calibrated on
  its own (:mod:`.nngaussian`); identical to the dense ``nngaussian`` kernel's P when
  the neighbours are exact.
* ``knn``: weight 1 on the ``perplexity`` nearest other points.
* ``skd``: UMAP's smooth kNN distances on ``perplexity`` neighbours, the point itself included.

Whenever the neighbourhoods hold the same entries as the dense matrix the result equals the dense
``P`` to rounding.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import sparse

from .._util.log import logger
from .._util.names import match_name
from ..io.data import InputData
from .nngaussian import nngaussian_affinities
from .perplexity import EPS, check_perplexity, describe_perplexity
from .scale import SYMMETRIZE, fuzzy_set_union
from .smooth_knn import check_k, knn_to_csr, smooth_knn_core

__all__ = ["scale_sparse_affinities", "sparse_affinities"]

# kernels with a sparse version, and how each Gaussian kernel treats the distances
_SQUARED = {"gaussian": True, "gauss": True, "exp": False}


# --- the restricted perplexity calibration -----------------------------------------------------------


def calibrate_knn_rows(D: np.ndarray, U: np.ndarray, *, tol: float = 1e-5, max_tries: int = 50):
    """Perplexity calibration of the R path (docs/original.md#perplexity-calibration) on neighbour
    distances ``D`` (n, k).

    Each row holds the values entering ``exp(-beta D)`` for that point's ``k`` neighbours (squared
    or plain distances, nearest first). Point 0 starts from ``0.5 U / mean(D[0])``, every later point
    from the previous point's converged beta; a point that fails gets weight ``1 / floor(U)`` on its
    ``floor(U)`` nearest neighbours, ``beta = 1`` and ``dint = 0``, as :func:`calibrate_rows`. The
    row kernel is the dense calibration's (:mod:`.calibration_kernels`).

    Returns ``(W, beta, dint, failed)`` with ``W`` the (n, k) un-normalised weights.
    """
    from .calibration_kernels import calibrate_knn_warm

    D = np.ascontiguousarray(D, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    n, k = D.shape
    mean_d = float(D[0].mean())
    beta0 = 0.5 * float(U[0]) / mean_d if mean_d > 0 else 1.0
    n_fallback = np.clip(np.floor(U), 1, k).astype(np.int64)
    W, beta, dint = np.empty((n, k)), np.empty(n), np.empty(n)
    failed = np.zeros(n, dtype=bool)
    calibrate_knn_warm(D, np.log(U), n_fallback, beta0, float(tol), int(max_tries), W, beta, dint,
                       failed)
    return W, beta, dint, failed


# --- kernels -----------------------------------------------------------------------------------------


def _csr(rows_idx: np.ndarray, vals: np.ndarray, n: int) -> sparse.csr_matrix:
    rows = np.repeat(np.arange(n), rows_idx.shape[1])
    P = sparse.csr_matrix((np.asarray(vals, dtype=np.float64).ravel(), (rows, rows_idx.ravel())),
                          shape=(n, n))
    P.sum_duplicates()
    P.eliminate_zeros()
    return P


def _fitted_rows(data: InputData) -> int:
    """How many leading rows have kernel values from a fit (``data.fitted_V``; 0: none)."""
    return 0 if data.fitted_V is None else int(data.fitted_V.shape[0])


def _stitched(data: InputData, idx: np.ndarray, vals: np.ndarray) -> sparse.csr_matrix:
    """The fitted rows' kernel values (``data.fitted_V``) on top of the rows after them (``idx``,
    ``vals``: their neighbours and values, one row each), as one (n, n) CSR matrix (zero diagonal, no
    explicit zeros)."""
    n, fit = data.n, _fitted_rows(data)
    F = data.fitted_V
    top = sparse.csr_matrix((F.data, F.indices, F.indptr), shape=(fit, n))
    rows = np.repeat(np.arange(fit, n), idx.shape[1])
    vals = np.where(idx.ravel() == rows, 0.0, np.asarray(vals, dtype=np.float64).ravel())
    new = sparse.csr_matrix((vals, (rows - fit, idx.ravel())), shape=(n - fit, n))
    new.sum_duplicates()
    new.eliminate_zeros()
    return sparse.vstack([top, new], format="csr")


def _sparse_gaussian(data: InputData, perplexity, kernel: str, knn_method, random_state):
    n = data.n
    U = check_perplexity(perplexity, n)
    k = max(1, min(n - 1, int(math.floor(3.0 * float(U.max())))))
    if data.max_neighbors is not None and k > data.max_neighbors:
        # openTSNE's rule for precomputed neighbours: the perplexity they can support
        k = data.max_neighbors
        U = np.minimum(U, k / 3.0)
        warnings.warn(f"the kNN graph gives {k} neighbours per point, fewer than 3 x perplexity: "
                      f"perplexity lowered to {k / 3.0:.4g}", UserWarning, stacklevel=5)
    # the original's quirk (see _kernel_gaussian): precomputed distances are not squared by "gaussian"
    squared = _SQUARED[kernel] and not (kernel == "gaussian" and data.gaussian_unsquared)
    idx, dist = data.neighbors(k, method=knn_method, random_state=random_state)
    fit = _fitted_rows(data)
    if fit:  # a transform: only the new rows are calibrated, the fitted rows keep their values
        idx, dist, U = idx[fit:], dist[fit:], U[fit:]
    D = dist * dist if squared else np.array(dist, dtype=np.float64)
    W, beta, dint, failed = calibrate_knn_rows(D, U)
    ok = ~failed
    if ok.any():
        sigma = 1.0 / np.sqrt(beta[ok])
        logger.info("Calibrated perplexity %s for %d points, kNN-restricted to k = %d neighbours "
                    "(%s distances): sigma min %.4g, median %.4g, max %.4g",
                    describe_perplexity(U), n, k,
                    "squared" if squared else "unsquared", sigma.min(), np.median(sigma),
                    sigma.max())
    n_failed = int(failed.sum())
    if n_failed:
        warnings.warn(
            f"{n_failed} perplexity calibrations failed: those points get uniform weights on "
            f"their nearest neighbours",
            RuntimeWarning,
            stacklevel=3,
        )
    if fit:
        return _stitched(data, idx, W), None, None, n_failed
    return _csr(idx, W, n), beta, dint, n_failed


def _sparse_nngaussian(data: InputData, perplexity, knn_method, random_state):
    res = nngaussian_affinities(data, perplexity, knn_method=knn_method, random_state=random_state)
    return _csr(res.idx, res.W, data.n), res.beta, res.dint, res.n_failed


def _sparse_knn(data: InputData, perplexity, knn_method, random_state):
    from . import _check_k

    k = _check_k(perplexity, data.n, "perplexity")
    idx, _ = data.neighbors(k, method=knn_method, random_state=random_state)
    logger.info("kNN affinities: weight 1 on the %d nearest neighbours of %d points", k, data.n)
    fit = _fitted_rows(data)
    if fit:
        return _stitched(data, idx[fit:], np.ones(idx[fit:].shape))
    return _csr(idx, np.ones(idx.shape), data.n)


def _sparse_skd(data: InputData, perplexity, knn_method, random_state):
    n = data.n
    k = check_k(perplexity, n, "perplexity")  # the point itself included
    others, odist = data.neighbors(k - 1, method=knn_method, random_state=random_state)
    idx = np.concatenate([np.arange(n, dtype=np.int64)[:, None], others], axis=1)
    dist = np.concatenate([np.zeros((n, 1)), odist], axis=1)
    fit = _fitted_rows(data)
    if fit:  # a transform: the new rows' bandwidths only
        # indices shifted to the new rows' own numbering: the core finds each row's self by it
        sigma, rho, vals, converged = smooth_knn_core(idx[fit:] - fit, dist[fit:])
        return _stitched(data, idx[fit:], vals)
    sigma, rho, vals, converged = smooth_knn_core(idx, dist)
    logger.info("Smooth kNN distances for k = %d (%d points, sparse): sigma min %.4g, median %.4g, "
                "max %.4g", k, n, sigma.min(), np.median(sigma), sigma.max())
    if not converged.all():
        logger.info("Smooth kNN bandwidth search did not converge for %d points (kept the last "
                    "bisection value, floored)", int((~converged).sum()))
    return knn_to_csr(idx, vals, n)


# --- scaling -------------------------------------------------------------------------------------------


def _scale_rows(P: sparse.csr_matrix, target) -> sparse.csr_matrix:
    """Each non-empty row multiplied to sum to ``target`` (empty rows stay empty)."""
    sums = np.asarray(P.sum(axis=1)).ravel()
    sums[sums == 0] = 1.0
    P = P.copy()
    P.data *= np.repeat(target / sums, np.diff(P.indptr))
    return P


def scale_sparse_affinities(P, *, symmetrize_how: str = "symmetric", row_normalize=True,
                            normalize: bool = True) -> sparse.csr_matrix:
    """:func:`~smallvis.affinity.scale.scale_affinities` for a sparse matrix (CSR, a new one): the
    row step, then symmetrise, then matrix-normalise, over the stored entries."""
    how = match_name(symmetrize_how, SYMMETRIZE, "symmetrization")
    P = sparse.csr_matrix(P, dtype=np.float64)
    if row_normalize is not False and row_normalize is not None:
        P = _scale_rows(P, 1.0 if row_normalize is True else float(row_normalize))
    P = _symmetrize(P, how)
    return P / P.sum() if normalize else P


def _symmetrize(P: sparse.csr_matrix, how: str) -> sparse.csr_matrix:
    if how == "none":
        return P
    Pt = P.T.tocsr()
    if how in ("symmetric", "average"):
        return (0.5 * (P + Pt)).tocsr()
    if how == "mutual":
        return P.multiply(Pt).tocsr().sqrt()
    return fuzzy_set_union(P)


def _effective_perplexity(P: sparse.csr_matrix, eps: float = EPS) -> float:
    """As :func:`~smallvis.affinity.scale.effective_perplexity`, from the stored entries only."""
    counts = np.diff(P.indptr)
    sums = np.asarray(P.sum(axis=1)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        R = P.data / np.repeat(sums, counts)
        terms = R * np.log(R + eps)
    H = np.zeros(P.shape[0])
    nonempty = counts > 0
    H[nonempty] = -np.add.reduceat(terms, P.indptr[:-1][nonempty])
    H[~nonempty] = np.nan
    return float(np.median(np.exp(H)))


def _finalize(P) -> sparse.csr_matrix:
    P = sparse.csr_matrix(P, dtype=np.float64)
    P.sum_duplicates()
    P.eliminate_zeros()
    return P


# --- public entry point --------------------------------------------------------------------------------


def sparse_affinities(data: InputData, perplexity, recipe, *, knn_method: str = "auto",
                      random_state=None):
    """Input affinities of ``recipe`` as a sparse matrix, without forming any (n, n) array.

    Parameters
    ----------
    data : InputData
        Coordinates or a precomputed distance matrix (neighbours are then read from its rows).
    perplexity : float, array (n,) or int
        Perplexity (one per point allowed) for the Gaussian kernels and ``nngaussian``, the number
        of neighbours for ``knn`` and ``skd`` (``skd`` counts the point itself).
    recipe : AffinityRecipe
        Kernel and scaling steps, as for :func:`input_affinities`. The ``sigma`` kernel has no sparse
        version; the ``"independent"`` calibration is replaced by the R-path calibration.
    knn_method : {"auto", "exact", "nndescent", "pynndescent"}
        Neighbour search (see :func:`smallvis.io.neighbors.nearest_neighbors`).
    random_state : None, int or numpy Generator
        Seed of the approximate neighbour search.

    Returns
    -------
    Affinities
        ``.P`` a float64 ``scipy.sparse.csr_matrix`` (n, n), zero diagonal, no explicit zeros;
        ``.V`` the un-normalised kernel values (CSR); ``.beta``, ``.dint`` for the Gaussian kernels
        and ``nngaussian``.
    """
    from . import (CALIBRATIONS, GAUSSIAN_KERNELS, INPUT_KERNELS, _NO_ROW_NORMALIZE, Affinities,
                   _supervised, given_affinities)

    kernel = match_name(recipe.kernel, INPUT_KERNELS, "input kernel")
    if data.given_P is not None:
        return _supervised(given_affinities(data.given_P, recipe, sparse=True), data, recipe)
    if isinstance(perplexity, str) or isinstance(perplexity, tuple):
        raise ValueError(
            f"perplexity {perplexity!r} is not available yet: give a number or one value per point"
        )
    calibration = match_name(recipe.calibration, CALIBRATIONS, "perplexity calibration")
    how = match_name(recipe.symmetrize, SYMMETRIZE, "symmetrization")
    if kernel == "sigma":
        raise ValueError(
            "the sigma input kernel has no sparse version (it gives every pair a non-zero weight); "
            "use the gaussian, knn or skd kernel with sparse affinities"
        )
    beta = dint = None
    n_failed = 0
    if kernel in GAUSSIAN_KERNELS:
        if calibration == "independent":
            logger.info("The independent perplexity calibration has no sparse version: using the "
                        "R-path calibration (warm start from the previous point) instead")
        V, beta, dint, n_failed = _sparse_gaussian(data, perplexity, kernel, knn_method,
                                                   random_state)
    elif kernel == "nngaussian":
        V, beta, dint, n_failed = _sparse_nngaussian(data, perplexity, knn_method, random_state)
    elif kernel == "knn":
        V = _sparse_knn(data, perplexity, knn_method, random_state)
    else:
        V = _sparse_skd(data, perplexity, knn_method, random_state)

    row_normalize = False if kernel in _NO_ROW_NORMALIZE else recipe.row_normalize
    P = V
    if row_normalize is not False and row_normalize is not None:
        P = _scale_rows(P, 1.0 if row_normalize is True else float(row_normalize))
    P = _symmetrize(P, how)
    if recipe.normalize:
        P = P / P.sum()
    if recipe.renormalize_rows:
        P = _scale_rows(sparse.csr_matrix(P), 1.0)
    P = _finalize(P)
    logger.info("Effective perplexity of P approx = %.4g (sparse, %d stored entries)",
                _effective_perplexity(P), P.nnz)
    from . import _supervised

    return _supervised(Affinities(P=P, V=V, beta=beta, dint=dint, perplexity=perplexity,
                                  n_failed=n_failed), data, recipe)


def transform_bandwidths(data: InputData, perplexity, recipe, *, knn_method: str = "auto",
                         random_state=None):
    """The precisions ``beta`` (n,) of every row of a transform's joint data, or None (not a
    transform, or a kernel without precisions). A transform calibrates its new rows only
    (:func:`sparse_affinities` keeps the fitted rows' kernel values); the methods whose output kernel
    reads every point's precision (btsne, bnerv, ...) get the fitted rows' from the same
    calibration on their own neighbours, as the fit made them, and the new rows' as the transform
    made them."""
    from . import GAUSSIAN_KERNELS, INPUT_KERNELS

    fit = _fitted_rows(data)
    kernel = match_name(recipe.kernel, INPUT_KERNELS, "input kernel")
    if not fit or kernel not in GAUSSIAN_KERNELS:
        return None
    U = check_perplexity(perplexity, data.n)
    k = max(1, min(data.n - 1, int(math.floor(3.0 * float(U.max())))))
    if data.max_neighbors is not None and k > data.max_neighbors:
        k = data.max_neighbors
        U = np.minimum(U, k / 3.0)
    squared = _SQUARED[kernel] and not (kernel == "gaussian" and data.gaussian_unsquared)
    idx, dist = data.neighbors(k, method=knn_method, random_state=random_state)
    D = dist * dist if squared else np.array(dist, dtype=np.float64)
    return np.concatenate([calibrate_knn_rows(D[:fit], U[:fit])[1],
                           calibrate_knn_rows(D[fit:], U[fit:])[1]])
