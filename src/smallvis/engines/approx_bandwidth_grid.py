"""Per-point output precisions on the FFT engine's interpolation grid (:mod:`.approx_bandwidth`,
:mod:`.approx_bnerv`): the sums of :class:`.approx_bandwidth_tree.BandwidthTree` interpolated in
``log beta`` between a few precisions ``b_m`` ("bins", log-spaced over the points' range, at most
:data:`BIN_WIDTH` apart), cubic Lagrange interpolation on the four nearest bins.

For one bin the kernel at ``b_m d2`` is the radial sum at the coordinates ``sqrt(b_m) Y`` (one
grid set-up per bin, its intervals as wide as the engine's in those units): a sum at the query's
precision interpolates the bins' sums at each target's ``log beta_i``; a sum at the sources'
precisions spreads each source's charge over its four bins with the same weights (charges of
either sign: the grid is linear in them). With every precision equal there is one bin, and the
sums are the grid's own.
"""

from __future__ import annotations

import math

import numpy as np

# the widest spacing of the bins in log beta: 0.5 left bnerv's gradient 1.6e-3 off and its
# per-point costs 1.6e-3 of the largest (500 points, 0.65 decades of beta); 0.25 gives <= 7e-5
BIN_WIDTH = 0.25
ORDER = 4  # Lagrange nodes per precision


def bin_weights(logb, width=BIN_WIDTH):
    """``(nodes (M,), weights (n, M))``: log-spaced bins over ``logb``'s range and each point's
    Lagrange weights on its ``min(ORDER, M)`` nearest bins (each row sums to 1)."""
    lo, hi = float(logb.min()), float(logb.max())
    M = 1 if hi - lo <= 1e-12 else max(ORDER, int(math.ceil((hi - lo) / width)) + 1)
    if M == 1:
        return np.array([lo]), np.ones((logb.shape[0], 1))
    nodes = np.linspace(lo, hi, M)
    h = nodes[1] - nodes[0]
    start = np.clip(np.floor((logb - lo) / h).astype(np.int64) - (ORDER // 2 - 1), 0, M - ORDER)
    W = np.zeros((logb.shape[0], M))
    rows = np.arange(logb.shape[0])
    for a in range(ORDER):
        w = np.ones(logb.shape[0])
        for c in range(ORDER):
            if c != a:
                w *= (logb - nodes[start + c]) / (nodes[start + a] - nodes[start + c])
        W[rows, start + a] = w
    return nodes, W


class BandwidthGrid:
    """The grid sums with per-point precisions: :meth:`query` and :meth:`source` as
    :class:`.approx_bandwidth_tree.BandwidthTree`'s."""

    eps = 0.0  # added to Z (the tree's softening)

    def __init__(self, engine, Y, beta):
        self.engine, self.Y, self.beta = engine, Y, beta
        self.nodes, self.weights = bin_weights(np.log(beta))
        self._grids = {}

    def _grid(self, m):
        if m not in self._grids:
            self._grids[m] = self.engine.radial(math.exp(0.5 * self.nodes[m]) * self.Y)
        return self._grids[m]

    def query(self, code, kp, scalars=(), vectors=()):
        from .approx_terms import Sums

        n, k = self.Y.shape
        S, V = np.zeros((n, len(scalars))), np.zeros((n, len(vectors), k))
        for m in range(self.nodes.shape[0]):
            wm = self.weights[:, m]
            if not wm.any():
                continue
            _, Sm, Vm = self._grid(m).sums(Sums(code, kp, tuple(scalars), tuple(vectors)))
            S += wm[:, None] * Sm
            V += (wm / math.exp(0.5 * self.nodes[m]))[:, None, None] * Vm
        return S, V

    def source(self, code, kp, fn, charges=None):
        from .approx_terms import Sums

        n, k = self.Y.shape
        c = np.ones(n) if charges is None else np.asarray(charges, dtype=np.float64)
        V = np.zeros((n, k))
        for m in range(self.nodes.shape[0]):
            cm = c * self.weights[:, m]
            if not cm.any():
                continue
            Vm = self._grid(m).sums(Sums(code, kp, vectors=(fn,), charges=cm))[2][:, 0]
            V += math.exp(0.5 * self.nodes[m]) * Vm  # b_m fn(b_m d2) (y_i - y_j)
        return V
