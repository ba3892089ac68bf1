"""Dense Gaussian perplexity calibration in row blocks, with no (n, n) distance matrix.

:func:`calibrate_dense` gives the numbers of :func:`~smallvis.affinity.perplexity.calibrate_rows`
(the original's R path: each point starts from the previous point's converged beta) and
:func:`~smallvis.affinity.perplexity.calibrate_rows_independent` (its dense C++ path) to
rounding, but the only (n, n) array it allocates is the result ``V``: each block of rows of the
distance matrix is computed straight into the rows of ``V`` (``X[rows] @ X.T`` with BLAS on the
columns shifted to their medians, finished as :func:`smallvis.io.distances.squared_distances`
does), calibrated there by the numba kernels of :mod:`.calibration_kernels` and overwritten by its
weights. The R path's warm start makes the rows a sequential chain; the independent calibration
runs its rows in parallel (docs/original.md#perplexity-calibration).
"""

from __future__ import annotations

import numpy as np

from ..io.data import InputData
from ..io.distances import shift_origin
from .perplexity import Calibration

__all__ = ["calibrate_dense"]

# rows per block: the block is computed straight into V, so its size costs no memory; large
# blocks keep the BLAS product efficient
_BLOCK_ROWS = 1024


def _fill_rows(data: InputData, X: np.ndarray, sq, out: np.ndarray, start: int, squared: bool):
    """Write rows ``start .. start + len(out) - 1`` of the matrix entering ``exp(-beta D)``
    (squared or plain distances, as the cached ``data.squared_distances()`` /
    ``data.distances()`` would hold them) into ``out``."""
    from . import calibration_kernels as ck

    stop = start + out.shape[0]
    if not (data.precomputed or data.coordinates_euclidean):  # another metric, or sparse rows
        out[...] = data.metric.pairwise(X[start:stop], X)
        out[np.arange(out.shape[0]), np.arange(start, stop)] = 0.0
        if squared:
            out *= out
        return
    if data.precomputed:
        if squared:
            np.multiply(X[start:stop], X[start:stop], out=out)
        else:
            out[...] = X[start:stop]
        return
    np.matmul(X[start:stop], X.T, out=out)
    ck.finish_distances(out, sq, start, not squared)


def calibrate_dense(data: InputData, U: np.ndarray, *, squared: bool, independent: bool = False,
                    tol: float = 1e-5, max_tries: int = 50) -> Calibration:
    """Perplexity calibration of every point against all others, in row blocks.

    Parameters
    ----------
    data : InputData
        Coordinates, or a precomputed distance matrix (read as it is, or squared).
    U : ndarray (n,)
        Checked perplexities (:func:`~smallvis.affinity.perplexity.check_perplexity`).
    squared : bool
        Calibrate ``exp(-beta d^2)`` (True) or ``exp(-beta d)`` on plain distances.
    independent : bool
        The original's C++ calibration (always on squared distances): each point starts from
        ``0.5 U n / sum_j d_ij^2``, a failed point gets weight 1 on its ``floor(U)`` smallest
        entries *including itself*; no beta or dint. Otherwise the R path: point 1 starts from
        ``0.5 U / mean_j d_1j``, every later point from the previous point's converged beta, a
        failed point gets ``1 / floor(U)`` on its ``floor(U)`` nearest neighbours, beta 1 and
        dint 0.
    tol, max_tries
        Bisection tolerance on the entropy (nats) and number of halvings/doublings.

    Returns
    -------
    Calibration
        ``V`` (n, n) the weights (zero diagonal, but a failed point's own weight in the independent
        calibration), ``beta``, ``dint`` (None for ``independent``), ``failed``.
    """
    from . import calibration_kernels as ck

    n = data.n
    if data.precomputed:
        X, sq = np.ascontiguousarray(data.X, dtype=np.float64), None
    elif not data.coordinates_euclidean:
        X, sq = data.X, None
    else:  # shifted as squared_distances() does: an offset common to all points costs no precision
        X = np.ascontiguousarray(shift_origin(data.X))
        sq = np.einsum("ij,ij->i", X, X)
    n_fallback = np.maximum(np.floor(U), 1).astype(np.int64)
    V = np.empty((n, n))
    failed = np.zeros(n, dtype=bool)
    step = _BLOCK_ROWS
    if independent:
        for start in range(0, n, step):
            block = V[start:start + step]
            _fill_rows(data, X, sq, block, start, True)
            ck.calibrate_block_independent(block, start, U, n_fallback, float(tol),
                                           int(max_tries), failed)
        return Calibration(V=V, beta=None, dint=None, failed=failed)
    log_u = np.log(U)
    betas = np.ones(n)
    dint = np.zeros(n)
    beta = 1.0
    for start in range(0, n, step):
        block = V[start:start + step]
        _fill_rows(data, X, sq, block, start, squared)
        if start == 0:
            mean_d = float(block[0, 1:].mean())
            beta = 0.5 * float(U[0]) / mean_d if mean_d > 0 else 1.0
        beta = ck.calibrate_block_warm(block, start, log_u, n_fallback, beta, float(tol),
                                       int(max_tries), betas, dint, failed)
    return Calibration(V=V, beta=betas, dint=dint, failed=failed)

