"""The FFT engine's repulsion when most points are frozen (a transform, :meth:`FFTEngine.freeze`).

With the frozen points ``F`` still and the moving points ``M`` free, the t-SNE repulsion of a moving
point and the normaliser split as

.. math::
    R_i = \\sum_{j \\in F} w_{ij}^{1+\\alpha} (y_i - y_j) + \\sum_{j \\in M} w_{ij}^{1+\\alpha} (y_i - y_j),
    \\qquad Z = Z_{FF} + 2 \\sum_{i \\in M} \\sum_{j \\in F} w_{ij} + Z_{MM}.

The frozen points' part is a fixed field: their charges are spread once onto a fixed grid (the
bounding box of every point at the first evaluation, widened by ``MARGIN`` of its width on each
side), convolved once, and the node potentials of ``w`` and ``w^(1+alpha)`` (charges 1 and ``y``)
kept with ``Z_FF``; each evaluation only interpolates them at the moving points (rebuilt when a
moving point leaves the box). The moving points' own part ``Z_MM``, ``R_MM`` comes from a
Barnes-Hut tree of the moving points alone (``theta``): one FFT of the whole grid per iteration is
what dominates a transform, and a tree of the few moving points is far cheaper.
"""

from __future__ import annotations

import numpy as np

MARGIN = 0.1  # the fixed grid's box: every point's at the start, widened by this much on each side


class FrozenField:
    """The frozen points' potentials on a fixed grid of ``engine`` (an :class:`.fft.FFTEngine`):
    built from ``Yf`` (the frozen coordinates) over a box that holds ``Y_all``."""

    def __init__(self, engine, Yf: np.ndarray, Y_all: np.ndarray, code: int, alpha: float):
        import numba

        from . import fft_kernels as kern
        from .fft_transforms import (backward as _backward, forward as _forward,
                                     spectrum as _spectrum)

        nf, k = Yf.shape
        lo, hi = Y_all.min(axis=0), Y_all.max(axis=0)
        pad = MARGIN * float(np.max(hi - lo))
        lo = lo - pad
        self.n_boxes, self.h, L = engine.grid(float(np.max(hi - lo)) + pad, k)
        self.p = p = engine.n_interp
        self.lo, self.k = lo, k
        self.hi = lo + self.n_boxes * self.h
        self.centre = lo + 0.5 * self.n_boxes * self.h
        N, M = self.n_boxes * p, 2 * L
        workers = numba.get_num_threads()
        Yf = np.ascontiguousarray(Yf, dtype=np.float64)
        cell, lw = np.empty((nf, k), dtype=np.int64), np.empty((nf, k, p))
        kern.interpolation_weights(Yf, lo, self.h, self.n_boxes, cell, lw)
        start, order = np.empty(self.n_boxes + 1, dtype=np.int64), np.empty(nf, dtype=np.int64)
        kern.sort_by_column(cell[:, 0], self.n_boxes, start, order)
        charges = np.zeros((1 + k,) + (N,) * (k - 1) + (M,))
        (kern.spread_1d if k == 1 else kern.spread_2d)(order, start, cell, lw, Yf - self.centre,
                                                       charges, np.empty(0))
        quad = (L + 1 if k == 2 else 1, L + 1)
        w, w1a = np.empty(quad), np.empty(quad)
        kern.kernel_samples(code, alpha, self.h / p, w, w1a)
        selfw = np.empty(nf)
        kern.self_weights(lw, w[:p, :p], selfw)
        F = _forward(charges, M, workers)
        spec_w = _spectrum(w, k, workers)
        power = F[0].real ** 2 + F[0].imag ** 2
        power[..., 1:L] *= 2.0
        self.Z_FF = float(np.sum(power * spec_w)) / float(M) ** k - float(np.sum(selfw))
        self.phi_w = np.ascontiguousarray(_backward(F[:1] * spec_w, N, M, workers))
        self.phi_f = np.ascontiguousarray(_backward(F * _spectrum(w1a, k, workers), N, M, workers))

    def covers(self, Y: np.ndarray) -> bool:
        """Whether every point of ``Y`` lies inside the grid's box."""
        return bool(np.all(Y >= self.lo) and np.all(Y < self.hi))

    def at(self, Y: np.ndarray, forces: bool):
        """``(S, R)`` at the points ``Y`` (m, k): ``S_i = sum_{j in F} w_ij`` and
        ``R_i = sum_{j in F} w_ij^(1+alpha) (y_i - y_j)`` (None unless ``forces``)."""
        from . import fft_kernels as kern

        m, k = Y.shape
        cell, lw = np.empty((m, k), dtype=np.int64), np.empty((m, k, self.p))
        kern.interpolation_weights(Y, self.lo, self.h, self.n_boxes, cell, lw)
        S = np.empty((m, 1))
        (kern.gather_channels_1d if k == 1 else kern.gather_channels_2d)(cell, lw, self.phi_w, S)
        if not forces:
            return S[:, 0], None
        R = np.empty((m, k))
        (kern.gather_1d if k == 1 else kern.gather_2d)(cell, lw, self.phi_f, Y - self.centre, R)
        return S[:, 0], R


def frozen_repulsion(engine, Y, code, alpha, forces, eps, rows, store, theta, apart=False):
    """``(Z, R_rows)`` of :meth:`.fft.FFTEngine.repulsion_rows`: the frozen field (made once, kept in
    ``store``) at the moving rows plus the moving points' own sums from a Barnes-Hut tree of them
    (``theta``); with ``apart`` the field alone, ``Z = Z_FF + 2 sum_{i in M} S_i``."""
    from .bh import BarnesHutEngine

    n = Y.shape[0]
    Ym = np.ascontiguousarray(Y[rows])
    key = ("field", code, alpha)
    field = store.get(key)
    if field is None or not field.covers(Ym):
        moving = np.zeros(n, dtype=bool)
        moving[rows] = True
        field = store[key] = FrozenField(engine, Y[~moving], Y, code, alpha)
    S, R = field.at(Ym, forces)
    if apart:
        return field.Z_FF + 2.0 * float(S.sum()), R
    if len(Ym) > 1:
        z_mm, R_mm = BarnesHutEngine(theta).repulsion(Ym, code, alpha, forces, eps)
        z_mm -= eps
    else:
        z_mm, R_mm = 0.0, np.zeros_like(Ym)
    Z = field.Z_FF + 2.0 * float(S.sum()) + z_mm
    return Z, (R + R_mm if forces else None)
