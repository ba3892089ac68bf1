"""The Barnes-Hut engine: the original's Barnes-Hut t-SNE (``bh=TRUE``), generalised to 1-D and 3-D
output and to heavy-tailed kernels.

The attraction and the cost are exact over the stored entries of the sparse P
(:class:`~.approx.SparseKLEngine`); the repulsion comes from a space-partitioning tree over the output
coordinates (:mod:`.bh_kernels`, rebuilt at every evaluation). For point ``i`` a cell ``c`` with
``N_c`` points, centre of mass ``com_c``, second moment ``M_c`` about it and side ``s_c`` is
summarised when it is a leaf or when

.. math::
    s_c^2 < \\theta^2 d^2, \\qquad d^2 = \\epsilon + |com_c - y_i|^2,

contributing ``N_c w`` to ``Z`` and ``N_c w^(1 + alpha) (y_i - com_c)`` to the repulsion, with
``w = (1 + alpha d^2)^(-1/alpha)`` (``alpha = 1``: Student-t), plus the quadrupole terms of an
internal cell (the second-order expansion about ``com_c``, :func:`.bh_kernels.repulsion_sums`);
otherwise its children are visited. The default ``theta = 0.35`` keeps the gradient within 1e-3
of the exact one for every method the engine serves (2,000 points; the monopole, ``quadrupole =
False``, misses that at ``theta = 0.2``: rklsne 3.7e-3). ``Z = sum_i Z_i + eps``. With
``theta = 0`` every cell is opened down to its leaves: the exact gradient, except for the ``eps`` added to every squared distance and that points within ``eps``
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
# the default opening angle: with the quadrupole terms, gradient within 1e-3 of the exact one for
# every method bh serves on the 2,000-point set of tests/engine_checks.py (measured <= 7.4e-4,
# rklsne; t-SNE 2.0e-4); 0.4 reaches 1.2e-3 (rklsne), 0.5 2.7e-3 (benchmarks/README.md)
DEFAULT_THETA = 0.35
_NO_BETA = np.empty(0)  # radial_sums without per-point precisions


def check_theta(theta) -> float:
    """``theta`` as a float, or a ValueError saying what it must be."""
    ok = isinstance(theta, numbers.Real) and not isinstance(theta, bool)
    if ok:
        theta = float(theta)
        ok = math.isfinite(theta) and theta >= 0.0
    if not ok:
        raise ValueError(
            f"engine 'bh' option theta must be a finite number >= 0 (0: exact repulsion; the "
            f"default {DEFAULT_THETA}; larger is faster and rougher); got {theta!r}")
    return theta


class BarnesHutEngine(SparseKLEngine):
    """Sparse P, exact attraction, Barnes-Hut repulsion with opening angle ``theta``.

    Parameters
    ----------
    theta : float
        The accuracy/speed trade-off: a cell is summarised when its side is below ``theta`` times
        its distance to the point (0: no summaries, exact up to ``eps``; default 0.35).
    knn : {"auto", "exact", "nndescent", "pynndescent"}
        How the neighbours of the sparse P are found.
    """

    name = "bh"
    OPTIONS = ("theta", "knn")
    # summarised cells add their quadrupole terms (False: the monopole, centre of mass only; kept
    # for measurements: benchmarks/README.md)
    quadrupole = True

    def __init__(self, theta: float = DEFAULT_THETA, knn: str = "auto"):
        super().__init__(knn)
        self.theta = check_theta(theta)

    def options(self) -> dict:
        return {"theta": self.theta, "knn": self.knn}

    def repulsion(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float = EPS):
        """``(Z, R)`` from the tree: ``Z = sum_i Z_i + eps`` and ``R`` (n, k) (None unless
        ``forces``)."""
        from . import bh_kernels as kern

        tree = TreeSums(self.theta, Y, eps, self.quadrupole)
        n, k = tree.Y.shape
        zrow = np.empty(n)
        R = np.empty((n, k)) if forces else np.empty((0, k))
        kern.repulsion_sums(tree.Y, tree.node, tree.skip, tree.order, self.theta, eps, tree.tol,
                            code, alpha, forces, self.quadrupole, zrow, R)
        return float(zrow.sum()) + eps, (R if forces else None)

    serves_apart = True

    def repulsion_rows(self, Y, code, alpha, forces, eps, rows, store, apart=False):
        """``(Z, R_rows)`` with the other rows frozen: the tree of every point, traversed from
        ``rows`` only (``R_rows`` is :meth:`repulsion`'s), and
        ``Z = Z_FF + 2 sum_{i in rows} Z_i - Z_MM + eps`` with ``Z_FF`` the frozen points' own sum
        (a tree of them alone, made once) and ``Z_MM`` the moving points' (a tree of them alone):
        :meth:`repulsion`'s ``Z`` up to rounding with ``theta = 0``, otherwise each part is summarised
        on its own tree (docs/deviations.md). With ``apart`` the moving rows' sums come from the
        frozen points' tree alone (made once) and ``Z = Z_FF + 2 sum_{i in rows} Z_i + eps``: the
        pairs of two moving rows are left out."""
        from . import bh_kernels as kern

        if apart:
            return self._apart_rows(Y, code, alpha, forces, eps, rows, store)
        n, k = Y.shape
        moving = np.zeros(n, dtype=bool)
        moving[rows] = True
        key = ("Z_FF", code, alpha, eps)
        if key not in store:
            Yf = np.ascontiguousarray(Y[~moving])
            store[key] = self.repulsion(Yf, code, alpha, False, eps)[0] - eps if len(Yf) > 1 \
                else 0.0
        tree = TreeSums(self.theta, Y, eps, self.quadrupole)
        order = np.ascontiguousarray(tree.order[moving[tree.order]])
        zrow = np.zeros(n)
        R = np.zeros((n, k)) if forces else np.empty((0, k))
        kern.repulsion_sums(tree.Y, tree.node, tree.skip, order, self.theta, eps, tree.tol,
                            code, alpha, forces, self.quadrupole, zrow, R)
        Ym = np.ascontiguousarray(Y[rows])
        z_mm = self.repulsion(Ym, code, alpha, False, eps)[0] - eps if len(Ym) > 1 else 0.0
        Z = store[key] + 2.0 * float(zrow[rows].sum()) - z_mm + eps
        return Z, (R[rows] if forces else None)

    def _apart_rows(self, Y, code, alpha, forces, eps, rows, store):
        """:meth:`repulsion_rows` with ``apart``: the frozen points' tree and ``Z_FF``, made once,
        traversed from the moving rows (the kernel reads only the visiting point's coordinates)."""
        from . import bh_kernels as kern

        n, k = Y.shape
        key = ("tree_F", code, alpha, eps)
        if key not in store:
            moving = np.zeros(n, dtype=bool)
            moving[rows] = True
            tree = TreeSums(self.theta, np.ascontiguousarray(Y[~moving]), eps, self.quadrupole)
            nf = tree.Y.shape[0]
            zrow = np.empty(nf)
            kern.repulsion_sums(tree.Y, tree.node, tree.skip, tree.order, self.theta, eps,
                                tree.tol, code, alpha, False, self.quadrupole, zrow,
                                np.empty((0, k)))
            store[key] = (tree, float(zrow.sum()) if nf > 1 else 0.0)
        tree, z_ff = store[key]
        Ym = np.ascontiguousarray(Y[rows], dtype=np.float64)
        m = Ym.shape[0]
        zrow = np.empty(m)
        R = np.empty((m, k)) if forces else np.empty((0, k))
        kern.repulsion_sums(Ym, tree.node, tree.skip, np.arange(m, dtype=np.int64), self.theta,
                            eps, tree.tol, code, alpha, forces, self.quadrupole, zrow, R)
        return z_ff + 2.0 * float(zrow.sum()) + eps, (R if forces else None)

    def radial(self, Y: np.ndarray, eps: float = EPS) -> "TreeSums":
        """The tree at ``Y``, answering :class:`~.approx_terms.Sums` requests (``TreeSums.sums``)."""
        return TreeSums(self.theta, Y, eps, self.quadrupole)


class TreeSums:
    """A Barnes-Hut tree over ``Y`` and the all-pairs sums of radial functions over it.

    ``Z = sum_i c_i S_i + eps`` from the weights' sums (as :meth:`BarnesHutEngine.repulsion`); a
    request with charges summarises each cell by its charge and charge-weighted centre
    (:func:`.bh_kernels.charge_nodes`); with a ``floor`` the tree is traversed twice, for ``Z``
    and then for the forces.
    """

    def __init__(self, theta: float, Y: np.ndarray, eps: float, quad: bool = True):
        n, k = Y.shape
        if k not in DIMENSIONS:
            raise ValueError(
                f"engine 'bh' builds its tree in {', '.join(map(str, DIMENSIONS))} output "
                f"dimensions; got k = {k}: use engine 'exact' (any k, exact gradient) instead")
        from . import bh_kernels as kern

        self.theta, self.eps, self.quad = theta, eps, bool(quad)
        self.Y = Y = np.ascontiguousarray(Y, dtype=np.float64)
        side = float(np.max(np.ptp(Y, axis=0))) if n else 0.0
        # points closer than eps relative to the embedding's size share a leaf: the original's
        # absolute eps where the embedding is about 1 wide, without merging everything when early
        # exaggeration shrinks it to nearly a point
        self.tol = eps * side if side > 0 else eps
        self.node, self.skip, self.order = kern.preorder(*kern.build_tree(Y, self.tol))

    def sums(self, req):
        """``(Z, S (n, scalars), V (n, vectors, k))`` for a :class:`~.approx_terms.Sums` request."""
        from . import bh_radial_kernels as kern
        from .radial_kernels import W

        Y = self.Y
        n, k = Y.shape
        c = req.charges
        node = self.node if c is None else kern.charge_nodes(
            Y, self.node, self.skip, self.order, np.ascontiguousarray(c, dtype=np.float64))
        scalars = tuple(req.scalars) if W in req.scalars else (W,) + tuple(req.scalars)

        def run(fs, fv, floor):
            S, V = np.empty((n, len(fs))), np.empty((n, len(fv), k))
            kern.radial_sums(Y, node, self.skip, self.order, self.theta, self.eps, self.tol,
                             req.code, req.kp, floor, _NO_BETA, self.quad,
                             np.array(fs, dtype=np.int64), np.array(fv, dtype=np.int64), S, V)
            return S, V

        two_passes = req.floor > 0.0 and bool(req.vectors)
        S, V = run(scalars, () if two_passes else req.vectors, 0.0)
        zrow = S[:, scalars.index(W)]
        Z = float((zrow if c is None else c * zrow).sum()) + self.eps
        if two_passes:
            V = run((), req.vectors, req.floor * Z)[1]
        return Z, S[:, [scalars.index(fn) for fn in req.scalars]], V
