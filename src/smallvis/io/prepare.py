"""The input as ``smallvis()`` processes it: numeric matrix, distance-matrix checks, scaling, PCA or
whitening, in one function that ``smallvis()`` and ``smallvis idp`` share (so they agree)."""

from __future__ import annotations

import warnings

import numpy as np

from .._util.log import logger
from .data import InputData
from .preprocess import as_numeric_matrix, pca_scores, pca_whiten, resolve_scale, scale_input
from .validate import check_distance_matrix

# absmax divides every column by one number; beyond this ratio of the widest column's range to the
# median column's, the widest columns decide the distances (wine: 370; iris 2, digits and MNIST 1)
RANGE_RATIO = 100.0


def prepare_input(X, *, precomputed, scale, pca, initial_dims, k, rng, stacklevel: int = 1):
    """Processed input and what was done to it: ``(InputData, pca_dims, whiten_dims, pca_applied)``.

    ``X`` is data (or, with ``precomputed``, a distance matrix, only checked); ``scale`` a scale mode
    (:func:`~smallvis.io.preprocess.resolve_scale`); ``pca`` True, False or ``"whiten"``, keeping
    ``initial_dims`` (at least ``k``) components unless that is not below ``min(n, p)``. The warning
    about very different column ranges points at the caller ``stacklevel`` frames up (1: the one
    calling this function).
    """
    X = as_numeric_matrix(X)
    if precomputed:
        check_distance_matrix(X)
        return InputData(X, precomputed=True), None, None, False
    mode = resolve_scale(scale)
    if mode == "absmax":
        _warn_column_ranges(X, stacklevel=stacklevel + 2)
    X = scale_input(X, mode)
    whiten = isinstance(pca, str) and pca.lower().startswith("w")
    if isinstance(pca, str) and not whiten:
        raise ValueError(f"pca must be True, False or 'whiten'; got {pca!r}")
    if not (pca or whiten):
        return InputData(X), None, None, False
    if initial_dims < k:
        raise ValueError(f"initial_dims ({initial_dims}) must be at least k ({k}) when using PCA")
    if min(X.shape) < initial_dims:
        logger.info("PCA skipped: initial_dims = %d is not below min(n, p) = %d", initial_dims,
                    min(X.shape))
        return InputData(X), None, None, False
    if whiten:
        logger.info("Whitening to %d dimensions", initial_dims)
        return InputData(pca_whiten(X, initial_dims, rng)), None, initial_dims, True
    logger.info("PCA: keeping %d dimensions", initial_dims)
    return InputData(pca_scores(X, initial_dims, rng)), initial_dims, None, True


def _warn_column_ranges(X: np.ndarray, *, stacklevel: int) -> None:
    """Warn when absmax scaling keeps columns on very different scales (features in different
    units): ``scale="scale"`` is then usually wanted. ``stacklevel`` is ``warnings.warn``'s."""
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] < 2:
        return
    ranges = np.ptp(X, axis=0)
    varying = ranges[ranges > 0]
    if varying.size < 2:
        return
    median = float(np.median(varying))
    widest = int(np.argmax(ranges))
    if median > 0 and ranges[widest] / median > RANGE_RATIO:
        warnings.warn(
            f"the input's column ranges differ widely (column {widest + 1} spans "
            f"{ranges[widest]:.4g}, the median column {median:.4g}): scale='absmax' keeps those "
            "differences, so the widest columns decide the distances; scale='scale' (each column to "
            "unit variance; on the command line --scale scale) may be wanted", UserWarning,
            stacklevel=stacklevel)
