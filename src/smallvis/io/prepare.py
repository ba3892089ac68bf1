"""The input as ``smallvis()`` processes it: numeric matrix, distance-matrix checks, scaling, PCA or
whitening, in one function that ``smallvis()`` and ``smallvis idp`` share (so they agree)."""

from __future__ import annotations

import warnings

import numpy as np

from .._util.log import logger
from .data import InputData
from .graph import graph_neighbors, is_graph, knn_arrays_to_graph
from .metric import EUCLIDEAN, check_metric_data, check_sparse_metric
from .preprocess import (apply_sparse_scaling, as_numeric_matrix, as_sparse_matrix, pca_scores,
                         pca_whiten, resolve_scale, scale_input, sparse_scaling)
from .validate import check_distance_matrix

# metrics the scale modes apply to: a translation changes none of their distances and a scaling
# multiplies them (per column: reweights them); cosine of centred columns, jaccard of scaled
# binary data or haversine of scaled angles would not be what their names say, so the others read
# the data as given
SCALED_METRICS = ("euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski")

# absmax divides every column by one number; beyond this ratio of the widest column's range to the
# median column's, the widest columns decide the distances (wine: 370; iris 2, digits and MNIST 1)
RANGE_RATIO = 100.0


def prepare_input(X, *, precomputed, scale, pca, initial_dims, k, rng, stacklevel: int = 1,
                  metric=EUCLIDEAN, gaussian_unsquared: bool = False, source: str = "data"):
    """Processed input and what was done to it: ``(InputData, pca_dims, whiten_dims, pca_applied)``.

    ``X`` is data, dense or scipy sparse (or, with ``precomputed``, a distance matrix, only
    checked); ``scale`` a scale mode (:func:`~smallvis.io.preprocess.resolve_scale`), applied under
    the metrics of :data:`SCALED_METRICS` (sparse rows: without centring,
    :func:`~smallvis.io.preprocess.sparse_scaling`); ``pca`` True, False or ``"whiten"``, keeping
    ``initial_dims`` (at least ``k``) components unless that is not below ``min(n, p)``;
    ``metric`` a :class:`~smallvis.io.metric.Metric`; ``gaussian_unsquared`` the original's
    precomputed-distance quirk (:class:`InputData`). The warning about very different column
    ranges points at the caller ``stacklevel`` frames up (1: the one calling this function).
    ``source="affinities"``: ``X`` is the input affinities P (:mod:`smallvis.io.graph`).
    """
    if source == "affinities":
        return _prepare_affinities(X), None, None, False
    if precomputed and is_graph(X):
        return _prepare_graph(X), None, None, False
    if precomputed:
        X = as_numeric_matrix(X)
        check_distance_matrix(X)
        if gaussian_unsquared:
            logger.info("precomputed distances: the Gaussian kernels read them unsquared (the "
                        "original's quirk, defaults='smallvis')")
        return (InputData(X, precomputed=True, gaussian_unsquared=gaussian_unsquared),
                None, None, False)
    mode = resolve_scale(scale)
    if metric.name not in SCALED_METRICS and mode != "none":
        logger.info("scale=%r not applied: the %s metric reads the data as given", mode,
                    metric.describe())
        mode = "none"
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        return _prepare_sparse(as_sparse_matrix(X), mode, pca, initial_dims, k, rng, metric)
    X = as_numeric_matrix(X)
    check_metric_data(metric, X)
    if mode == "absmax":
        _warn_column_ranges(X, stacklevel=stacklevel + 2)
    X = scale_input(X, mode)
    whiten = isinstance(pca, str) and pca.lower().startswith("w")
    if isinstance(pca, str) and not whiten:
        raise ValueError(f"pca must be True, False or 'whiten'; got {pca!r}")
    if not (pca or whiten):
        return InputData(X, metric=metric), None, None, False
    if initial_dims < k:
        raise ValueError(f"initial_dims ({initial_dims}) must be at least k ({k}) when using PCA")
    if min(X.shape) < initial_dims:
        logger.info("PCA skipped: initial_dims = %d is not below min(n, p) = %d", initial_dims,
                    min(X.shape))
        return InputData(X, metric=metric), None, None, False
    if whiten:
        logger.info("Whitening to %d dimensions", initial_dims)
        return InputData(pca_whiten(X, initial_dims, rng), metric=metric), None, initial_dims, True
    logger.info("PCA: keeping %d dimensions", initial_dims)
    return InputData(pca_scores(X, initial_dims, rng), metric=metric), initial_dims, None, True


def _prepare_graph(X) -> InputData:
    """A kNN graph (sparse distance matrix, or ``(indices, distances)``) as input data."""
    if isinstance(X, tuple):
        X, _ = knn_arrays_to_graph(*X)
    idx, dist = graph_neighbors(X)
    logger.info("kNN graph input: %d points, %d neighbours each", idx.shape[0], idx.shape[1])
    data = InputData(X.tocsr(), precomputed=True, graph=True)
    data.set_neighbors(idx, dist)
    return data


def _prepare_affinities(P) -> InputData:
    """The input affinities P as input data (checked against the method when it reads them)."""
    if hasattr(P, "tocsr"):
        P = P.tocsr().astype(np.float64)
    else:
        P = as_numeric_matrix(P, what="P")
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"metric='affinities' takes the (n, n) input affinities P; got shape "
                         f"{P.shape}")
    logger.info("input affinities given: %d points, %s", P.shape[0],
                f"sparse, {P.nnz} stored" if hasattr(P, "tocsr") else "dense")
    return InputData(P, precomputed=True, graph=True, given_P=P)


def _prepare_sparse(X, mode: str, pca, initial_dims: int, k: int, rng, metric):
    """:func:`prepare_input` for a CSR matrix: scaled without centring; PCA (centred implicitly)
    gives dense scores; otherwise the rows stay sparse."""
    keep, divisor = sparse_scaling(X, mode)
    if mode != "none":
        logger.info("sparse input: scale=%r without centring (a translation no Minkowski distance "
                    "sees would make it dense)", mode)
    X = apply_sparse_scaling(X, keep, divisor)
    check_metric_data(metric, X)
    whiten = isinstance(pca, str) and pca.lower().startswith("w")
    if isinstance(pca, str) and not whiten:
        raise ValueError(f"pca must be True, False or 'whiten'; got {pca!r}")
    if (pca or whiten) and initial_dims < min(X.shape):
        if initial_dims < k:
            raise ValueError(f"initial_dims ({initial_dims}) must be at least k ({k}) when using PCA")
        scores = pca_whiten(X, initial_dims, rng) if whiten else pca_scores(X, initial_dims, rng)
        logger.info("%s sparse input to %d dimensions", "Whitening" if whiten else "PCA of the",
                    initial_dims)
        return (InputData(scores, metric=metric), None if whiten else initial_dims,
                initial_dims if whiten else None, True)
    X = check_sparse_metric(metric, X)
    return InputData(X, metric=metric), None, None, False


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
