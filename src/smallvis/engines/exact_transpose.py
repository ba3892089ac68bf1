"""What the fused exact passes read an asymmetric P's columns from (the general KL pass of
:mod:`.exact_asymmetric_kernels`, the row-normalised mixtures of :mod:`.exact_nerv_kernels`)."""

from __future__ import annotations

import numpy as np

from .._util.log import logger


def transpose_of(P: np.ndarray, budget: int | None = None) -> np.ndarray:
    """What the general KL pass reads P's columns from: P itself when it is symmetric, else a
    C-ordered copy of its transpose (one more (n, n) matrix: its columns are then contiguous rows,
    about twice as fast at 20,000 points) when half the available memory holds it, else an empty
    array (P's columns read with a stride). ``budget``: bytes available (None: measured)."""
    from . import exact_kernels as kern
    from .dense import available_memory

    if kern.is_symmetric(P):
        return P
    budget = available_memory() if budget is None else budget
    if budget is None or P.nbytes <= 0.5 * budget:
        return np.ascontiguousarray(P.T)
    logger.info("engine 'exact': P is not symmetric and its transpose does not fit in memory: "
                "its columns are read with a stride (slower)")
    return np.empty((0, 0))
