"""The ``nngaussian`` input kernel: Gaussian affinities on each point's ``3U`` nearest neighbours,
every point calibrated on its own (the affinities of Barnes-Hut t-SNE;
docs/original.md#knn-restricted-gaussian-nngaussian).

For point ``i`` with perplexity ``U_i`` and its ``k`` nearest other points at distances ``r_ij``:

.. math:: w_{ij} = e^{-\\beta_i r_{ij}^2}, \\qquad
          \\beta_i^{(0)} = \\frac{U_i k}{2 \\sum_j r_{ij}^2},

then the R path's bisection (tolerance 1e-5 nats, at most 50 halvings/doublings) over those ``k``
neighbours only; a point whose calibration fails gets ``1 / k`` on every neighbour.

``k = floor(3 max U)`` (the original's ``3 * perplexity`` truncated to a whole number of
neighbours, as its C++ does), at least 1, and at most ``n - 1`` (with a warning). A perplexity above
``n - 1`` is an error. Unlike the original, the precisions ``beta`` (1 for a failed point) and the
intrinsic dimensionality ``dint`` over the ``k`` neighbours (0 for a failed point) are kept.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._util.log import logger
from ..io.data import InputData
from .perplexity import check_perplexity, describe_perplexity, describe_sigma

__all__ = ["NNGaussian", "nngaussian_affinities"]


@dataclass
class NNGaussian:
    """Each point's ``k`` neighbours (``idx`` (n, k), nearest first) and their weights ``W``
    (n, k), with ``beta``, ``dint`` and ``failed`` (n,)."""

    idx: np.ndarray
    W: np.ndarray
    beta: np.ndarray
    dint: np.ndarray
    failed: np.ndarray

    @property
    def n_failed(self) -> int:
        return int(self.failed.sum())


def neighbour_count(U: np.ndarray, n: int) -> int:
    """``k = floor(3 max U)``, at least 1; above ``n - 1``: a warning and ``n - 1``."""
    k = max(int(math.floor(3.0 * float(U.max()))), 1)
    if k > n - 1:
        warnings.warn(
            f"nngaussian kernel: 3 x perplexity = {k} neighbours, but there are only {n - 1} other "
            f"points; using {n - 1}",
            RuntimeWarning,
            stacklevel=4,
        )
        k = n - 1
    return k


def nngaussian_affinities(data: InputData, perplexity, *, knn_method: str = "exact",
                          random_state=None, tol: float = 1e-5,
                          max_tries: int = 50) -> NNGaussian:
    """Calibrate the nngaussian kernel of ``data`` (see the module docstring).

    Parameters
    ----------
    data : InputData
        Coordinates or a precomputed distance matrix.
    perplexity : float or array (n,)
        ``U``; at most ``n - 1``. Per-point values share ``k = floor(3 max U)``.
    knn_method : {"exact", "auto", "nndescent", "pynndescent"}
        Neighbour search (:meth:`InputData.neighbors`).
    random_state : None, int or numpy Generator
        Seed of the approximate neighbour search.
    tol, max_tries
        Bisection tolerance (nats) and number of halvings/doublings.
    """
    from . import calibration_kernels as ck

    n = data.n
    U = check_perplexity(perplexity, n)
    if np.any(U > n - 1):
        raise ValueError(
            f"the nngaussian kernel needs perplexity <= n - 1 = {n - 1} for {n} points; got "
            f"{U.max():g}"
        )
    k = neighbour_count(U, n)
    idx, dist = data.neighbors(k, method=knn_method, random_state=random_state)
    D = np.ascontiguousarray(dist, dtype=np.float64) ** 2
    W, beta, dint, failed = ck.calibrate_knn_independent(D, U, float(tol), int(max_tries))
    res = NNGaussian(idx=idx, W=W, beta=beta, dint=dint, failed=failed)
    logger.info("nngaussian kernel: perplexity %s on the k = %d nearest neighbours of %d "
                "points: %s", describe_perplexity(U), k, n, describe_sigma(beta, failed))
    if res.n_failed:
        warnings.warn(
            f"{res.n_failed} perplexity calibrations failed: those points get equal weights 1/{k} "
            f"on their {k} nearest neighbours",
            RuntimeWarning,
            stacklevel=3,
        )
    return res

