"""Input affinities: calibrate, then row-normalise, symmetrise and normalise
(docs/original.md#input-affinities).

The input kernels live in one registry (``INPUT_KERNELS``); a method names one in its affinity recipe.
Each kernel returns un-normalised affinities ``V`` (n, n, zero diagonal) plus whatever diagnostics it
has (``beta``, ``dint``); :func:`input_affinities` then applies the method's scaling (in place, so
that P is the only (n, n) array left) and collects extras. The Gaussian kernels calibrate in row
blocks without a distance matrix (:mod:`.blocked`); ``nngaussian`` restricts each point to its
``3U`` nearest neighbours (:mod:`.nngaussian`).
"""

from __future__ import annotations

import functools
import logging
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._util.log import logger
from .._util.names import match_name
from ..io.data import InputData
from .blocked import calibrate_dense
from .nngaussian import nngaussian_affinities
from .perplexity import (Calibration, calibrate_rows, check_perplexity, describe_perplexity,
                         describe_sigma)
from .scale import (SYMMETRIZE, TRUE_SYMMETRIZE, effective_perplexity, fuzzy_set_union,
                    scale_affinities, scale_affinities_inplace, symmetrize)
from .idp import (IntrinsicDimensionality, check_candidates, idp_perps, intrinsic_dimensionality,
                  select_class_idp, select_idp)
from .smooth_knn import SmoothKNN, check_k, smooth_knn_distances, smooth_knn_from_data

__all__ = [
    "Affinities",
    "IntrinsicDimensionality",
    "idp_perps",
    "intrinsic_dimensionality",
    "AffinityRecipe",
    "INPUT_KERNELS",
    "calibrate_perplexity",
    "effective_perplexity",
    "fuzzy_set_union",
    "input_affinities",
    "scale_affinities",
    "smooth_knn_distances",
    "SmoothKNN",
    "scale_sparse_affinities",
    "sparse_affinities",
    "symmetrize",
    "SYMMETRIZE",
    "TRUE_SYMMETRIZE",
]


@dataclass(frozen=True)
class AffinityRecipe:
    """How a method turns input data into P: an input kernel, then the scaling steps of
    docs/original.md#scaling-the-affinities."""

    kernel: str = "gaussian"
    symmetrize: str = "symmetric"
    row_normalize: object = True
    normalize: bool = True
    renormalize_rows: bool = False  # a second row normalisation after symmetrising ("RSR")
    # perplexity calibration of the Gaussian kernels (docs/original.md#perplexity-calibration):
    # "r" = the original's R path (each point starts from the previous point's beta);
    # "independent" = its dense C++ path (use_cpp=TRUE: each point starts from its own guess, always
    # on squared distances, no beta/dint recorded)
    calibration: str = "r"


class Affinities:
    """Final P plus the diagnostics recorded during calibration (None where a kernel has none).

    Attributes
    ----------
    P : ndarray (n, n) or scipy.sparse.csr_matrix
    V : ndarray (n, n), sparse matrix or None
        The un-normalised affinities. ``V`` may be given as a function returning it: the dense
        path scales the calibrated affinities in place (so P is the only (n, n) array it keeps)
        and recomputes V the first time it is read.
    beta, dint : ndarray (n,) or None
    perplexity : the perplexity used (the chosen one for IDP)
    n_failed : int
    extras : dict
    """

    def __init__(self, P, V=None, beta=None, dint=None, perplexity=None, n_failed: int = 0,
                 extras: dict | None = None):
        self.P = P
        self._V = V
        self.beta = beta
        self.dint = dint
        self.perplexity = perplexity
        self.n_failed = n_failed
        self.extras = {} if extras is None else extras

    @property
    def V(self):
        if callable(self._V):
            self._V = self._V()
        return self._V

    @property
    def kept_V(self):
        """``V`` when it is kept (sparse kernels), None when reading it would recompute it."""
        return None if callable(self._V) else self._V


# --- input kernels: (data, perplexity) -> Calibration-like --------------------------------------


def _gaussian(data: InputData, perplexity, *, squared: bool, tol: float = 1e-5,
              max_tries: int = 50) -> Calibration:
    U = check_perplexity(perplexity, data.n)
    cal = calibrate_dense(data, U, squared=squared, tol=tol, max_tries=max_tries)
    logger.info("Calibrated perplexity %s for %d points (%s distances): %s", describe_perplexity(U),
                data.n, "squared" if squared else "unsquared", describe_sigma(cal.beta, cal.failed))
    if cal.n_failed:
        warnings.warn(
            f"{cal.n_failed} perplexity calibrations failed: those points get uniform weights on "
            f"their nearest neighbours",
            RuntimeWarning,
            stacklevel=4,
        )
    return cal


def _gaussian_independent(data: InputData, perplexity, *, tol: float = 1e-5,
                          max_tries: int = 50) -> Calibration:
    U = check_perplexity(perplexity, data.n)
    cal = calibrate_dense(data, U, squared=True, independent=True, tol=tol, max_tries=max_tries)
    logger.info("Calibrated perplexity %s for %d points (independent calibration, squared "
                "distances)", describe_perplexity(U), data.n)
    if cal.n_failed:
        warnings.warn(
            f"{cal.n_failed} perplexity calibrations failed: those points get equal weights on "
            f"their nearest neighbours and themselves",
            RuntimeWarning,
            stacklevel=4,
        )
    return cal


# kernels whose perplexity calibration ``AffinityRecipe.calibration = "independent"`` replaces (as
# use_cpp does in the original, whatever the kernel's own distance convention)
GAUSSIAN_KERNELS = ("gaussian", "gauss", "exp")
CALIBRATIONS = ("r", "independent")
# extras the independent calibration cannot provide (it keeps no beta, dint or un-normalised V)
_NOT_INDEPENDENT = ("V", "beta", "dint", "adegin", "adegout", "adegc")


def _kernel_gaussian(data, perplexity):
    # the original's quirk, kept under defaults="smallvis": a precomputed distance matrix is
    # calibrated without squaring (InputData.gaussian_unsquared)
    return _gaussian(data, perplexity, squared=not data.gaussian_unsquared)


def _kernel_gauss(data, perplexity):
    return _gaussian(data, perplexity, squared=True)


def _kernel_exp(data, perplexity):
    return _gaussian(data, perplexity, squared=False)


def _check_k(k, n: int, what: str = "k") -> int:
    if np.ndim(k) != 0:
        raise ValueError(f"the knn kernel needs a single number of neighbours {what}; got a vector")
    if k != int(k) or k < 1:
        raise ValueError(f"{what} (number of neighbours) must be a whole number >= 1; got {k}")
    if k > n - 1:
        raise ValueError(f"{what} = {int(k)} neighbours is too many for {n} points (at most {n - 1})")
    return int(k)


def _kernel_knn(data, perplexity):
    k = _check_k(perplexity, data.n, "perplexity")
    idx = data.knn(k)
    V = np.zeros((data.n, data.n))
    np.put_along_axis(V, idx, 1.0, axis=1)
    return Calibration(V=V, beta=None, dint=None, failed=np.zeros(data.n, dtype=bool))


def _kernel_sigma(data, perplexity):
    sigma = float(perplexity)
    if not sigma > 0 or not math.isfinite(sigma):
        raise ValueError(f"the sigma kernel needs a positive bandwidth (perplexity); got {perplexity}")
    V = np.exp(-data.squared_distances() / sigma**2)
    np.fill_diagonal(V, 0.0)
    beta = np.full(data.n, 1.0 / sigma**2)
    return Calibration(V=V, beta=beta, dint=None, failed=np.zeros(data.n, dtype=bool))


def _kernel_skd(data, perplexity):
    """UMAP smooth kNN distances with ``k = perplexity`` neighbours, the point itself included."""
    k = check_k(perplexity, data.n, "perplexity")
    res = smooth_knn_from_data(data, k)
    return Calibration(V=res.P, beta=None, dint=None, failed=np.zeros(data.n, dtype=bool))


def _kernel_nngaussian(data, perplexity):
    """Gaussian weights on each point's ``floor(3U)`` exact nearest neighbours, in an
    (n, n) matrix."""
    res = nngaussian_affinities(data, perplexity, knn_method="exact")
    V = np.zeros((data.n, data.n))
    np.put_along_axis(V, res.idx, res.W, axis=1)
    return Calibration(V=V, beta=res.beta, dint=res.dint, failed=res.failed)


INPUT_KERNELS = {
    "gaussian": _kernel_gaussian,
    "gauss": _kernel_gauss,
    "exp": _kernel_exp,
    "knn": _kernel_knn,
    "sigma": _kernel_sigma,
    "skd": _kernel_skd,
    "nngaussian": _kernel_nngaussian,
}
# kernels whose memberships are never row-normalised (the original forces row_normalize = FALSE)
_NO_ROW_NORMALIZE = ("skd",)


def calibrate_perplexity(X, perplexity, *, kernel: str = "gaussian", metric: str = "euclidean",
                         tol: float = 1e-5, max_tries: int = 50) -> Calibration:
    """Calibrate Gaussian affinities to a perplexity, as the original does.

    Parameters
    ----------
    X : array (n, p), or (n, n) distances with ``metric="precomputed"``
    perplexity : float or array (n,)
    kernel : {"gaussian", "exp"}
        ``exp`` calibrates ``exp(-beta r)`` on unsquared distances (the CRAN ``tsne`` kernel).
    metric : {"euclidean", "precomputed"}

    Returns
    -------
    Calibration
        ``.V`` (n, n) un-normalised affinities with zero diagonal, ``.P`` row-normalised,
        ``.beta``, ``.dint``, ``.n_failed``.
    """
    from ..io.preprocess import as_numeric_matrix

    kernel = match_name(kernel, ("gaussian", "exp"), "input kernel")
    metric = match_name(metric, ("euclidean", "precomputed"), "metric")
    X = as_numeric_matrix(X)
    precomputed = metric == "precomputed"
    if precomputed:
        from ..io.validate import check_distance_matrix

        check_distance_matrix(X)
    data = InputData(X, precomputed=precomputed)
    squared = kernel == "gaussian"
    return _gaussian(data, perplexity, squared=squared, tol=tol, max_tries=max_tries)


PERPLEXITY_MODES = ("idp", "multiscale", "idp-class")


def perplexity_mode(perplexity, n: int):
    """``"idp"``, ``"multiscale"``, ``(mode, [candidates])`` or ``("idp-class", labels[,
    candidates])`` -> (mode, checked candidates, labels or None); ``(None, None, None)`` for a number
    or a per-point vector."""
    if isinstance(perplexity, str):
        mode = match_name(perplexity, PERPLEXITY_MODES, "perplexity mode")
        if mode == "idp-class":
            raise ValueError("perplexity='idp-class' needs the classes: ('idp-class', labels)")
        return mode, idp_perps(n), None
    if isinstance(perplexity, tuple) and perplexity and isinstance(perplexity[0], str):
        mode = match_name(perplexity[0], PERPLEXITY_MODES, "perplexity mode")
        if mode == "idp-class":
            if len(perplexity) not in (2, 3):
                raise ValueError("perplexity=('idp-class', labels[, candidates]); got "
                                 f"{len(perplexity)} items")
            labels = np.asarray(perplexity[1])
            if labels.shape != (n,):
                raise ValueError(f"idp-class labels must have one value per point ({n}); got "
                                 f"shape {labels.shape}")
            cands = check_candidates(perplexity[2] if len(perplexity) == 3 else None, n)
            return mode, cands, labels
        if len(perplexity) != 2:
            raise ValueError(f"perplexity=({mode!r}, [candidates]) takes one list of candidate "
                             f"perplexities; got {perplexity!r}")
        return mode, check_candidates(perplexity[1], n), None
    return None, None, None


def _multiscale(data: InputData, candidates: np.ndarray) -> Affinities:
    """Multiscale P (docs/original.md#multiscale-perplexities): the mean over the candidates of the
    average-symmetrised, matrix-normalised Gaussian affinities (squared distances, R path), whatever
    the method's own scaling."""
    D = data.squared_distances()
    P = np.zeros_like(D)
    for u in candidates:
        cal = calibrate_rows(D, check_perplexity(u, data.n))
        P += scale_affinities_inplace(cal.V, symmetrize_how="symmetric", row_normalize=True,
                                      normalize=True)
    P /= len(candidates)
    logger.info("Multiscale affinities: mean over perplexities %s",
                ", ".join(f"{u:g}" for u in candidates))
    return Affinities(P=P, perplexity=("multiscale", [float(u) for u in candidates]))


def input_affinities(data: InputData, perplexity, recipe: AffinityRecipe,
                     extras: frozenset = frozenset()) -> Affinities:
    """Compute P for ``recipe`` and record the requested ``extras`` (V, beta, dint, adeg*, pdeg).

    The calibrated affinities are scaled in place, so P is the only (n, n) array kept (and the
    Gaussian kernels calibrate in row blocks, without a distance matrix): ``V`` is kept when
    ``"V"`` is in ``extras`` and otherwise recomputed on first access (see :class:`Affinities`).
    """
    kernel = match_name(recipe.kernel, INPUT_KERNELS, "input kernel")
    if data.given_P is not None:
        return _supervised(given_affinities(data.given_P, recipe, sparse=False), data, recipe)
    if data.graph:  # only the graph's neighbours have distances: the kNN-restricted calibration
        logger.info("kNN graph input: P from the graph's neighbours (kNN-restricted calibration)")
        aff = sparse_affinities(data, perplexity, recipe)
        aff.P = aff.P.toarray()
        return aff
    mode, candidates, classes = perplexity_mode(perplexity, data.n)
    if mode == "multiscale":
        return _supervised(_multiscale(data, candidates), data, recipe)
    if mode in ("idp", "idp-class") and kernel == "knn":
        raise ValueError(f"perplexity={mode!r} needs a Gaussian input kernel, not 'knn'")
    calibration = match_name(recipe.calibration, CALIBRATIONS, "perplexity calibration")
    independent = (calibration == "independent" and kernel in GAUSSIAN_KERNELS
                   and mode is None)
    idp_curve = None
    # ``calibrate()`` gives the un-normalised affinities again if V is read later
    if mode == "idp":  # calibrated by the IDP search (the original's kernel "gauss", R path)
        perplexity, cal, idp_curve = select_idp(data.squared_distances(), candidates)

        def calibrate():
            return calibrate_rows(data.squared_distances(), check_perplexity(perplexity, data.n))
    elif mode == "idp-class":
        perplexity, idp_curve = select_class_idp(data.squared_distances(), candidates, classes)

        def calibrate():
            return calibrate_rows(data.squared_distances(), perplexity)
        cal = calibrate()
    elif independent:
        missing = [name for name in _NOT_INDEPENDENT if name in extras]
        if missing:
            raise ValueError(
                f"ret_extra item(s) {', '.join(map(repr, missing))} are not available with the "
                f"independent perplexity calibration (the original's C++ path, used with "
                f"use_cpp=True and by absne's general case), which records only the affinities"
            )
        cal = _gaussian_independent(data, perplexity)
    else:
        def calibrate():
            return INPUT_KERNELS[kernel](data, perplexity)
        cal = calibrate()
    V = cal.V
    degrees = _degree_extras(V, extras)  # before V is overwritten
    keep_V = "V" in extras
    scale = scale_affinities if keep_V else scale_affinities_inplace
    P = scale(V, symmetrize_how=recipe.symmetrize,
              row_normalize=False if kernel in _NO_ROW_NORMALIZE else recipe.row_normalize,
              normalize=recipe.normalize, renormalize_rows=recipe.renormalize_rows)
    if logger.isEnabledFor(logging.INFO):
        logger.info("Effective perplexity of P approx = %.4g", effective_perplexity(P))
    if independent:
        V = None
    elif not keep_V:
        V = functools.partial(_recompute_V, calibrate)
    aff = Affinities(P=P, V=V, beta=cal.beta, dint=cal.dint, perplexity=perplexity,
                     n_failed=cal.n_failed, extras=degrees)
    if idp_curve is not None:
        aff.extras["idp"] = perplexity
        aff.extras["idp_curve"] = idp_curve
    if "pdeg" in extras:
        aff.extras["pdeg"] = P.sum(axis=0)
    return _supervised(aff, data, recipe)


def given_affinities(P, recipe: AffinityRecipe, *, sparse: bool) -> Affinities:
    """The input affinities given by the user (``metric="affinities"``), checked against what
    ``recipe`` makes: summing to 1 when it normalises P, symmetric when it symmetrises, each row
    summing to 1 when it only row-normalises (a conditional P). Dense or CSR as ``sparse``."""
    from scipy import sparse as sp

    from ..io.graph import check_affinities
    from .scale import TRUE_SYMMETRIZE

    symmetric = recipe.symmetrize in TRUE_SYMMETRIZE
    P = check_affinities(P, normalized=bool(recipe.normalize), symmetric=symmetric)
    if recipe.row_normalize is True and not recipe.normalize and not symmetric:
        rows = np.asarray(P.sum(axis=1)).ravel()
        if np.abs(rows - 1.0).max() > 1e-6:
            raise ValueError(f"the given P's rows sum to {rows.min():.6g} .. {rows.max():.6g}; this "
                             f"method's P is conditional, each row summing to 1")
    if sparse:
        P = sp.csr_matrix(P)
        P.eliminate_zeros()
    elif sp.issparse(P):
        P = P.toarray()
    logger.info("input affinities as given (%s, %d points)", "sparse" if sparse else "dense",
                P.shape[0])
    return Affinities(P=P, V=P, perplexity=None)


def _supervised(aff, data: InputData, recipe):
    """``aff`` with its P weakened across classes when the run has labels (supervised.py)."""
    if getattr(data, "labels", None) is not None:
        from .supervised import supervise

        aff.P = supervise(aff.P, data.labels, data.target_weight, recipe)
        logger.info("Supervised: cross-class affinities weakened (target_weight = %g)",
                    data.target_weight)
    return aff


def _degree_extras(V: np.ndarray, extras: frozenset) -> dict:
    """The requested ``adeg*`` extras: column sums (adegin), row sums (adegout), their mean."""
    out = {}
    if "adegin" in extras:
        out["adegin"] = V.sum(axis=0)
    if "adegout" in extras:
        out["adegout"] = V.sum(axis=1)
    if "adegc" in extras:
        out["adegc"] = 0.5 * (V.sum(axis=0) + V.sum(axis=1))
    return out


def _recompute_V(calibrate) -> np.ndarray:
    """The un-normalised affinities again (same numbers; warnings were given the first time)."""
    logger.info("Recomputing the un-normalised input affinities V (not kept, to save memory)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calibrate().V


# the sparse (O(n k) memory) counterpart of input_affinities; imported last, it uses the registries above
from .sparse import scale_sparse_affinities, sparse_affinities  # noqa: E402
