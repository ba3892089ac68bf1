"""The FFT-interpolation engine (FIt-SNE style; Linderman et al. 2019, "Fast interpolation-based
t-SNE for improved visualization of single-cell RNA-seq data"): sparse P, exact attraction, and the
repulsion from polynomial interpolation on an equispaced grid with FFT convolution, for 1-D and 2-D
output.

The repulsion needs, for every point ``i``, with ``w = (1 + alpha d2)^(-1/alpha)`` (alpha = 1:
Student-t)

.. math::
    S^0_i = \\sum_j w_{ij}, \\quad S^1_i = \\sum_j w_{ij}^{1+\\alpha}, \\quad
    S^y_i = \\sum_j w_{ij}^{1+\\alpha} y_j, \\qquad
    Z = \\sum_i S^0_i - n, \\quad R_i = y_i S^1_i - S^y_i

(the sums include ``j = i``: ``w_ii = 1`` is removed from ``Z`` and cancels in ``R``). Each sum is a
convolution of charges (1 or a coordinate) with a translation-invariant kernel (``w`` or
``w^(1+alpha) = w / (1 + alpha d2)``). The bounding box of the embedding (a square in 2-D) is cut
into ``n_boxes = max(min_intervals, ceil(extent / interval_size))`` intervals per dimension, raised
until ``n_boxes * n_interp`` fills an FFT length with only the factors 2, 3 and 5; each interval
holds ``n_interp`` evenly spaced nodes (:mod:`.fft_kernels`). Charges are spread onto the nodes with
Lagrange weights, convolved with the kernel sampled on the node grid (a circulant embedding of
twice the size, whose spectrum is real: a DCT-I of one quadrant), and the potentials interpolated
back with the same weights.

``Z`` is the quadratic form ``c^T K c`` of the node charges ``c`` of the charge 1, read off the
spectrum (Parseval: no inverse transform), less the interpolated self terms
``s_i = sum_{t, s} L_t(y_i) L_s(y_i) w(x_t - x_s)`` rather than ``n``: the pairs ``i != j`` are then
all that is left, and the interpolation error of the ``n`` self terms does not enter ``Z``.

Coordinates are taken relative to the centre of the box, which keeps the cancellation in
``y_i S^1_i - S^y_i`` small. The error falls quickly with ``n_interp`` and with narrower intervals.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from .._util.log import logger
from .approx import SparseKLEngine
from .fft_transforms import (backward as _backward, convolve as _convolve, forward as _forward,
                             mirror as _mirror, quadrant_spectrum as _quadrant,
                             spectrum as _spectrum)

# the largest node grid (nodes per dimension) before the intervals are widened past interval_size
MAX_NODES = {1: 2**20, 2: 1536}


def _whole(value, name: str, low: int, high: int) -> int:
    ok = not isinstance(value, (bool, np.bool_))
    try:
        ok = ok and int(value) == value and low <= int(value) <= high
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"engine 'fft' option {name} must be a whole number in [{low}, {high}]; "
                         f"got {value!r}")
    return int(value)


def fft_length(nodes: int) -> int:
    """The smallest length >= ``nodes`` whose only prime factors are 2, 3 and 5."""
    from scipy.fft import next_fast_len

    return next_fast_len(int(nodes), real=True)


class FFTEngine(SparseKLEngine):
    """Sparse P, exact attraction, repulsion by interpolation on a grid and FFT convolution (1-D and
    2-D output).

    Parameters
    ----------
    knn : str
        Neighbour search for the sparse P: ``auto``, ``exact``, ``nndescent`` or ``pynndescent``.
    n_interp : int
        Interpolation nodes per interval and dimension (1 to 20; default 3).
    min_intervals : int
        Fewest intervals per dimension (1 to 10,000; default 50).
    interval_size : float
        Widest interval, in output units, while the grid stays under ``MAX_NODES`` (default 1).
    """

    name = "fft"
    OPTIONS = ("knn", "n_interp", "min_intervals", "interval_size")
    # a transform's repulsion (repulsion_rows): the frozen points' field made once, and the moving
    # points' own repulsion from a Barnes-Hut tree with this theta
    frozen_field = True
    transform_theta = 0.5

    def __init__(self, knn: str = "auto", n_interp: int = 3, min_intervals: int = 50,
                 interval_size: float = 1.0):
        super().__init__(knn)
        self.n_interp = _whole(n_interp, "n_interp", 1, 20)
        self.min_intervals = _whole(min_intervals, "min_intervals", 1, 10_000)
        if (isinstance(interval_size, (bool, np.bool_)) or not isinstance(interval_size, Real)
                or not 0.0 < float(interval_size) < math.inf):
            raise ValueError(f"engine 'fft' option interval_size must be a positive finite number; "
                             f"got {interval_size!r}")
        self.interval_size = float(interval_size)
        self._warned = False
        self._work = {}

    def options(self) -> dict:
        return {**super().options(), "n_interp": self.n_interp,
                "min_intervals": self.min_intervals, "interval_size": self.interval_size}

    # -- the grid -------------------------------------------------------------------------------
    def grid(self, extent: float, k: int):
        """``(n_boxes, h, L)`` for an embedding spanning ``extent`` in ``k`` dimensions: intervals
        per dimension, their width, and half the FFT length (``n_boxes * n_interp <= L``).

        Beyond ``MAX_NODES[k]`` nodes per dimension the intervals widen past ``interval_size``
        (logged once per engine); a zero extent gets intervals of width 1e-8.
        """
        p = self.n_interp
        want = self.min_intervals
        if extent > 0.0:
            want = max(want, math.ceil(extent / self.interval_size))
        cap = max(1, MAX_NODES[k] // p)
        if want > cap:
            if not self._warned:
                logger.warning(
                    "engine 'fft': the embedding spans %.4g, which needs %d intervals per dimension "
                    "at interval_size %g; using %d (wider intervals: a less accurate repulsion)",
                    extent, want, self.interval_size, cap)
                self._warned = True
            want = cap
        L = fft_length(want * p)
        n_boxes = min(L // p, cap)
        h = extent / n_boxes
        if not h >= np.finfo(np.float64).tiny:
            # all points (nearly) equal: intervals so narrow that the kernels are flat on the grid
            h = 1e-8
        return n_boxes, h, L

    # -- the repulsion --------------------------------------------------------------------------
    def repulsion(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float = 0.0):
        """``(Z, R)`` by interpolation (see the module docstring); ``eps`` is not needed."""
        return self._repulsion(Y, code, alpha, forces, None)

    @property
    def serves_apart(self) -> bool:
        """The frozen field can leave out the moving points' own repulsion (``apart``)."""
        return self.frozen_field

    def repulsion_rows(self, Y, code, alpha, forces, eps, rows, store, apart=False):
        """``(Z, R_rows)`` with the rows other than ``rows`` frozen: with ``frozen_field`` (the
        default) the frozen points' potentials on a fixed grid, made once, plus the moving points'
        own sums from a Barnes-Hut tree of them with ``transform_theta``, or without them when
        ``apart`` (:mod:`.fft_frozen`; docs/deviations.md); else the grid of every point at every
        call, interpolated back at ``rows`` only (:meth:`repulsion`'s numbers)."""
        if self.frozen_field:
            from .fft_frozen import frozen_repulsion

            return frozen_repulsion(self, Y, code, alpha, forces, eps, rows, store,
                                    self.transform_theta, apart=apart)
        return self._repulsion(Y, code, alpha, forces, rows)

    def _repulsion(self, Y, code, alpha, forces, rows):
        import numba

        from . import fft_kernels as kern

        n, k = Y.shape
        if k not in (1, 2):
            raise ValueError(f"engine 'fft' handles 1-D and 2-D output only; got {k}-D: use "
                             f"engine 'bh' (Barnes-Hut) or 'exact'")
        lo, hi = np.empty(k), np.empty(k)
        if not kern.bounding_box(Y, lo, hi):
            m = n if rows is None else rows.shape[0]
            return math.nan, (np.full((m, k), math.nan) if forces else None)
        n_boxes, h, L = self.grid(float(np.max(hi - lo)), k)
        p = self.n_interp
        N, M = n_boxes * p, 2 * L
        workers = numba.get_num_threads()

        cell = self._buffer("cell", (n, k), np.int64)
        lw = self._buffer("lw", (n, k, p))
        kern.interpolation_weights(Y, lo, h, n_boxes, cell, lw)
        start = self._buffer("start", (n_boxes + 1,), np.int64)
        order = self._buffer("order", (n,), np.int64)
        kern.sort_by_column(cell[:, 0], n_boxes, start, order)
        Yc = Y - (lo + 0.5 * n_boxes * h)  # relative to the box's centre
        # node charges, zero-padded to M along the last axis (rfft's; _forward pads the first):
        # the spread writes only the nodes, so the padding stays zero
        charges = self._buffer("charges", (1 + k,) + (N,) * (k - 1) + (M,))
        (kern.spread_1d if k == 1 else kern.spread_2d)(order, start, cell, lw, Yc, charges,
                                                       np.empty(0))

        # kernels on one quadrant of the node offsets (1-D: a single row)
        quad = (L + 1 if k == 2 else 1, L + 1)
        w, w1a = self._buffer("w", quad), self._buffer("w1a", quad)
        kern.kernel_samples(code, alpha, h / p, w, w1a)
        selfw = self._buffer("selfw", (n,))
        kern.self_weights(lw, w[:p, :p], selfw)
        F = _forward(charges, M, workers)
        # Z = c^T K c - sum_i self_i with c the node charges of the charge 1; by Parseval
        # c^T K c = M^-k sum_f |c_f|^2 K_f over the full spectrum, whose interior last-axis bins
        # appear once in the half spectrum and count twice
        power = F[0].real ** 2 + F[0].imag ** 2
        power[..., 1:L] *= 2.0
        Z = float(np.sum(power * _spectrum(w, k, workers))) / float(M) ** k - float(np.sum(selfw))
        if not forces:
            return Z, None
        F *= _spectrum(w1a, k, workers)
        phi = _backward(F, N, M, workers)
        gather = kern.gather_1d if k == 1 else kern.gather_2d
        if rows is None:
            R = np.empty((n, k))
            gather(cell, lw, phi, Yc, R)
        else:  # the same interpolation, at the moving rows only
            R = np.empty((rows.shape[0], k))
            gather(cell[rows], lw[rows], phi, Yc[rows], R)
        return Z, R

    def radial(self, Y: np.ndarray, eps: float = 0.0) -> "GridSums":
        """The interpolation set-up at ``Y``, answering :class:`~.approx_terms.Sums` requests
        (``GridSums.sums``); ``eps`` is not needed."""
        return GridSums(self, Y)

    def _buffer(self, name: str, shape: tuple, dtype=np.float64) -> np.ndarray:
        """A work array kept between calls while its shape holds (zeroed when first made)."""
        buf = self._work.get(name)
        if buf is None or buf.shape != shape:
            buf = self._work[name] = np.zeros(shape, dtype=dtype)
        return buf


class GridSums:
    """The interpolation weights of the points of ``Y`` on the engine's grid, and the all-pairs sums
    of radial functions through it: charges ``c_i`` and ``c_i y_i`` spread onto the nodes; ``Z``
    from the spectrum as in :meth:`FFTEngine.repulsion` (less ``sum_i c_i^2 s_i``); a per-point
    sum ``S_i = sum_{j != i} c_j phi(d2_ij)`` is the interpolated potential of ``phi`` less the
    point's own interpolated ``c_i phi`` (:func:`.fft_kernels.self_weights`); a vector sum is
    ``y_i Phi_i - Phi^y_i`` of the potentials of the charges ``c`` and ``c y``. A ``floor`` is
    applied to the sampled ``WG`` once ``Z`` is known (one spectrum, no extra transform). The
    requests without charges share one forward transform (the first one's), and every request the
    samples and spectrum of a radial function already made on this grid (the row-normalised plan
    asks for ``W`` and ``WG`` twice). The node charges are spread into the engine's work array; a
    charged request's spectrum is multiplied in place by its last kernel. A scalar function that is
    also a vector one is read off the vector's first channel (one convolution), and a request that
    does not ask for ``Z`` (``total``) gets NaN there and makes neither its spectrum sum nor its
    self terms. The sums are linear in the charges, which may have any sign
    (``signed_charges``)."""

    signed_charges = True

    def __init__(self, engine: FFTEngine, Y: np.ndarray):
        from . import fft_kernels as kern

        n, k = Y.shape
        if k not in (1, 2):
            raise ValueError(f"engine 'fft' handles 1-D and 2-D output only; got {k}-D: use "
                             f"engine 'bh' (Barnes-Hut) or 'exact'")
        self.engine = engine
        self.Y = Y = np.ascontiguousarray(Y, dtype=np.float64)
        lo, hi = np.empty(k), np.empty(k)
        self.finite = bool(kern.bounding_box(Y, lo, hi))
        if not self.finite:
            return
        self.n_boxes, self.h, self.L = engine.grid(float(np.max(hi - lo)), k)
        self.p = p = engine.n_interp
        self.cell = np.empty((n, k), dtype=np.int64)
        self.lw = np.empty((n, k, p))
        kern.interpolation_weights(Y, lo, self.h, self.n_boxes, self.cell, self.lw)
        self.start = np.empty(self.n_boxes + 1, dtype=np.int64)
        self.order = np.empty(n, dtype=np.int64)
        kern.sort_by_column(self.cell[:, 0], self.n_boxes, self.start, self.order)
        self.Yc = Y - (lo + 0.5 * self.n_boxes * self.h)
        self._uncharged = None  # the spectra of the charges 1 and y (the first request's)
        self._kernels = {}  # (function, code, kp, floor): its quadrant spectrum and samples

    def _samples(self, fn, req, floor=0.0):
        """The quadrant spectrum (:func:`.fft_transforms.quadrant_spectrum`) of ``fn`` on the node
        grid and its first ``p x p`` samples (all the self terms read), made once per grid."""
        import numba

        from . import fft_kernels as kern

        key = (fn, req.code, np.asarray(req.kp, dtype=np.float64).tobytes(), float(floor))
        if key not in self._kernels:
            k = self.Y.shape[1]
            quad = np.empty((self.L + 1 if k == 2 else 1, self.L + 1))
            kern.radial_samples(fn, req.code, req.kp, floor, self.h / self.p, quad)
            # the self terms read the first p x p samples only
            self._kernels[key] = (_quadrant(quad, k, numba.get_num_threads()),
                                  quad[:self.p, :self.p].copy())
        return self._kernels[key]

    def _spread(self, c):
        """The half spectrum of the node charges ``c`` and ``c y`` (``c`` empty: 1)."""
        import numba

        from . import fft_kernels as kern

        k = self.Y.shape[1]
        N, M = self.n_boxes * self.p, 2 * self.L
        # the engine's work array: the spread writes only the nodes, so the padding stays zero
        grid = self.engine._buffer("charges", (1 + k,) + (N,) * (k - 1) + (M,))
        (kern.spread_1d if k == 1 else kern.spread_2d)(self.order, self.start, self.cell,
                                                       self.lw, self.Yc, grid, c)
        return _forward(grid, M, numba.get_num_threads())

    def sums(self, req):
        """``(Z, S (n, scalars), V (n, vectors, k))`` for a :class:`~.approx_terms.Sums` request."""
        import numba

        from . import fft_kernels as kern
        from .radial_kernels import W, WG

        n, k = self.Y.shape
        if not self.finite:
            return (math.nan, np.full((n, len(req.scalars)), math.nan),
                    np.full((n, len(req.vectors), k), math.nan))
        workers = numba.get_num_threads()
        p, L = self.p, self.L
        N, M = self.n_boxes * p, 2 * L
        c = np.empty(0) if req.charges is None else np.ascontiguousarray(req.charges, dtype=float)
        F = self._uncharged if req.charges is None else None
        if F is None:
            F = self._spread(c)
            if req.charges is None:  # kept: the next request without charges transforms no grid
                self._uncharged = F
        gather = kern.gather_channels_1d if k == 1 else kern.gather_channels_2d
        c2 = 1.0 if req.charges is None else c * c

        def self_terms(quad):
            out = np.empty(n)
            kern.self_weights(self.lw, quad[:p, :p], out)
            return out

        Z = math.nan
        if req.total or (req.floor and WG in req.vectors):
            spec_w, quad_w = self._samples(W, req)
            power = F[0].real ** 2 + F[0].imag ** 2
            power[..., 1:L] *= 2.0
            Z = (float(np.sum(power * _mirror(spec_w))) / float(M) ** k
                 - float(np.sum(c2 * self_terms(quad_w))))
            del power
        # a scalar function also asked for as a vector reads the vector's first channel: each
        # channel is transformed and gathered alone, so these are the bits of its own convolution
        shared = {fn for fn in req.vectors if fn != WG or not req.floor}
        S = np.empty((n, len(req.scalars)))
        charge = 1.0 if req.charges is None else c
        for s, fn in enumerate(req.scalars):
            if fn in shared:
                continue
            spec, quad = self._samples(fn, req)
            out = np.empty((n, 1))
            gather(self.cell, self.lw, _convolve(F, spec, N, M, workers, channels=1), out)
            S[:, s] = out[:, 0] - charge * self_terms(quad)
        V = np.empty((n, len(req.vectors), k))
        last = len(req.vectors) - 1
        for v, fn in enumerate(req.vectors):
            spec, quad = self._samples(fn, req, req.floor * Z if fn == WG else 0.0)
            out = np.empty((n, 1 + k))
            phi = _convolve(F, spec, N, M, workers,
                            in_place=v == last and req.charges is not None)
            gather(self.cell, self.lw, phi, out)
            V[:, v] = self.Yc * out[:, :1] - out[:, 1:]
            for s, sfn in enumerate(req.scalars):
                if sfn == fn and fn in shared:
                    S[:, s] = out[:, 0] - charge * self_terms(quad)
        return Z, S, V
