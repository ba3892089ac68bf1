"""The Barnes-Hut engine: the original's Barnes-Hut t-SNE (``bh=TRUE``), generalised to 1-D and 3-D
output and to heavy-tailed kernels.

The attraction and the cost are exact over the stored entries of the sparse P
(:class:`~.approx.SparseKLEngine`); the repulsion comes from a space-partitioning tree over the output
coordinates (:mod:`.bh_kernels`, rebuilt at every evaluation). For point ``i`` a cell ``c`` with
``N_c`` points, centre of mass ``com_c`` and side ``s_c`` is summarised as one point when it is a
leaf or when

.. math::
    s_c^2 < \\theta^2 d^2, \\qquad d^2 = \\epsilon + |com_c - y_i|^2,

contributing ``N_c w`` to ``Z`` and ``N_c w^(1 + alpha) (y_i - com_c)`` to the repulsion, with
``w = (1 + alpha d^2)^(-1/alpha)`` (``alpha = 1``: Student-t); otherwise its children are visited.
``Z = sum_i Z_i + eps``. With ``theta = 0`` every cell is opened down to its leaves: the exact
gradient, except for the ``eps`` added to every squared distance and that points within ``eps``
times the embedding's width of each other (exact duplicates) share a leaf and do not repel each
other (the original merges within an absolute ``eps``, which merges every point once early
exaggeration has shrunk the embedding to ~1e-15).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..methods.base import EPS
from .approx import SparseKLEngine

DIMENSIONS = (1, 2, 3)


def check_theta(theta) -> float:
    """``theta`` as a float, or a ValueError saying what it must be."""
    ok = isinstance(theta, numbers.Real) and not isinstance(theta, bool)
    if ok:
        theta = float(theta)
        ok = math.isfinite(theta) and theta >= 0.0
    if not ok:
        raise ValueError(
            f"engine 'bh' option theta must be a finite number >= 0 (0: exact repulsion; the "
            f"default 0.5; larger is faster and rougher); got {theta!r}")
    return theta


class BarnesHutEngine(SparseKLEngine):
    """Sparse P, exact attraction, Barnes-Hut repulsion with opening angle ``theta``.

    Parameters
    ----------
    theta : float
        The accuracy/speed trade-off: a cell is summarised when its side is below ``theta`` times
        its distance to the point (0: no summaries, exact up to ``eps``).
    knn : {"auto", "exact", "nndescent"}
        How the neighbours of the sparse P are found.
    """

    name = "bh"
    OPTIONS = ("theta", "knn")

    def __init__(self, theta: float = 0.5, knn: str = "auto"):
        super().__init__(knn)
        self.theta = check_theta(theta)

    def options(self) -> dict:
        return {"theta": self.theta, "knn": self.knn}

    def repulsion(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float = EPS):
        """``(Z, R)`` from the tree: ``Z = sum_i Z_i + eps`` and ``R`` (n, k) (None unless
        ``forces``)."""
        n, k = Y.shape
        if k not in DIMENSIONS:
            raise ValueError(
                f"engine 'bh' builds its tree in {', '.join(map(str, DIMENSIONS))} output "
                f"dimensions; got k = {k}: use engine 'exact' (any k, exact gradient) instead")
        from . import bh_kernels as kern

        Y = np.ascontiguousarray(Y, dtype=np.float64)
        side = float(np.max(np.ptp(Y, axis=0))) if n else 0.0
        # points closer than eps relative to the embedding's size share a leaf: the original's
        # absolute eps where the embedding is about 1 wide, without merging everything when early
        # exaggeration shrinks it to nearly a point
        tol = eps * side if side > 0 else eps
        node, skip, order = kern.preorder(*kern.build_tree(Y, tol))
        zrow = np.empty(n)
        R = np.empty((n, k)) if forces else np.empty((0, k))
        kern.repulsion_sums(Y, node, skip, order, self.theta, eps, tol, code, alpha, forces, zrow,
                            R)
        return float(zrow.sum()) + eps, (R if forces else None)
