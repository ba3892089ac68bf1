"""The number of neighbours a search is asked for, checked once for every search."""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_neighbors_k(k, n: int) -> int:
    """``k`` nearest *other* points: a whole number with ``1 <= k <= n - 1``."""
    if isinstance(k, np.ndarray) and k.ndim == 0:
        k = k.item()
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real):
        raise ValueError(
            f"k (number of nearest neighbours, the point itself excluded) must be a whole number "
            f"between 1 and n - 1 = {n - 1} for n = {n} points; got {k!r}"
        )
    if not math.isfinite(k) or k != int(k) or not 1 <= k <= n - 1:
        raise ValueError(
            f"k (number of nearest neighbours, the point itself excluded) must be a whole number "
            f"between 1 and n - 1 = {n - 1} for n = {n} points; got k = {k!r}"
        )
    return int(k)
