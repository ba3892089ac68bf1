"""The fused exact engine's evaluation of the mixes of forward and reverse KL described by
``Method.mixture_form`` (nerv, snerv, bnerv, rsrnerv, jse, sjse, rsrjse): the dense engine's numbers
with nothing (n, n) beyond P (and its transpose) but, for NeRV where memory allows, a cache of
``log max(f P, eps)`` (:func:`log_p_cache`; kernels: :mod:`.exact_nerv_kernels`).

Q is Gaussian and normalised by a log-sum-exp, as the dense engine's
:func:`~smallvis.methods.elementwise.gaussian_probabilities`: the row minima of ``d2`` give each
row's (or the matrix's) largest exponent ``a_max``, then ``log Z = log sum exp(a - a_max) + a_max``,
so rows whose output distances are all large stay exact; in up to :data:`TREE_DIMS` dimensions
the row minima come from a k-d tree's nearest neighbours (:func:`nearest_d2`, the same bits as the
pass over every pair, which remains for the rest). The reverse KL's shift (per row, or its sum over
the matrix) enters every pair's stiffness; the pass that sums it also gives the forces of the rest
of the stiffness, and the shift's part comes after (:mod:`.exact_nerv_kernels`): three passes
over every pair with the gradient and a row-normalised Q, two otherwise.
"""

from __future__ import annotations

import numpy as np

from . import exact_nerv_kernels as nk

DIVERGENCES = {"nerv": nk.NERV, "jse": nk.JSE}
# the output dimensions up to which the row minima come from a k-d tree (nearest_d2), not a pass
TREE_DIMS = 3
# a k-d tree's nearest neighbours per point checked exactly; rows with more ties than that take
# every point within the tolerance, unless those are more than TREE_TIES per point in all (many
# equal points: the pass over every pair is taken)
TREE_NEIGHBOURS, TREE_TIES = 4, 8
# the widest range of per-point exponents whose pair ratios are taken as products of per-point
# factors (exp_ratios): factors within e^(+-300), and an exponential that underflows (below
# e^-708) hides only terms below e^-100 times the row's largest (Q's floor, eps, is above)
RATIO_SPAN = 600.0
# NeRV's log max(f P, eps) is kept for the current f (one more (n, n) array, packed:
# :mod:`.exact_nerv_cache_kernels`) when P's size is at most this share of the memory available
# when it is made; else each pass computes the logarithms
LOG_CACHE_SHARE = 0.5
_LOG_KEY = "exact_nerv_log_p"


def log_p_cache(state, P, PT, f, eps, both, budget=None):
    """NeRV's packed ``log max(f P, eps)`` for this ``f`` (made once per ``f``, kept in
    ``state.data``; the one of the previous ``f`` is dropped first), or an empty (0, 0) array where
    it does not fit (:data:`LOG_CACHE_SHARE`; ``budget``: the bytes available, None: measured).
    ``both``: both directions (a row-normalised Q), else the upper triangle alone."""
    from . import exact_nerv_cache_kernels as ck
    from .dense import available_memory

    tag = (float(f), float(eps), bool(both), P.shape[0])
    held = state.data.get(_LOG_KEY)
    if held is not None and held[0] == tag:
        return held[1]
    state.data.pop(_LOG_KEY, None)
    held = None  # the previous factor's cache is freed before the new one is made
    budget = available_memory() if budget is None else budget
    if budget is not None and P.nbytes > LOG_CACHE_SHARE * budget:
        return np.empty((0, 0))
    out = np.empty_like(P)
    ck.packed_log_floored(P, PT, float(f), float(eps), bool(both), out)
    state.data[_LOG_KEY] = (tag, out)
    return out


def exp_ratios(a, span=None):
    """``(2, n)``: ``e^(a_i - r)`` and ``e^(r - a_i)`` with ``r`` the middle of ``a``'s range, so
    that ``e^(a_i - a_j)`` is a product of two of them; empty (``(0, 0)``) when the range exceeds
    ``span`` (default :data:`RATIO_SPAN`: the factors could then overflow, or an underflowing
    exponential hide a term that counts)."""
    span = RATIO_SPAN if span is None else span
    lo, hi = float(a.min()), float(a.max())
    if not hi - lo <= span:
        return np.empty((0, 0))
    r = 0.5 * (lo + hi)
    h = a - r
    # a - r to twice the precision, h + e (TwoSum): e^(h + e) = e^h (1 + e) to an ulp or two, where
    # e^h alone would carry h's rounding, an error that grows with |a - r|
    bb = h - a
    e = (a - (h - bb)) + (-r - bb)
    up = np.exp(h) * (1.0 + e)
    down = np.exp(-h) * (1.0 - e)
    return np.stack([up, down])


def nearest_d2(Y):
    """``(n,)``: each point's smallest ``d2`` to another point, the same bits as the pass over every
    pair (:func:`.exact_nerv_kernels.row_min_d2`), from a k-d tree's nearest neighbours: each
    candidate's ``d2`` is recomputed as the kernels do (``sum_d (y_id - y_jd)^2`` in order), and
    every point within a relative 1e-9 of the tree's nearest distance is a candidate. ``None``
    where the tree does not serve (more than :data:`TREE_DIMS` dimensions, non-finite coordinates or
    distances, fewer than two points, or more than :data:`TREE_TIES` candidates per point)."""
    from scipy.spatial import cKDTree

    n, k = Y.shape
    if k > TREE_DIMS or n < 2 or not np.isfinite(Y).all():
        return None
    tree = cKDTree(Y)
    dist, idx = tree.query(Y, k=min(TREE_NEIGHBOURS, n))
    if not (idx < n).all():  # a neighbour not found (distances beyond the float range)
        return None
    rows = np.arange(n)[:, None]
    own = idx == rows
    dist[own] = np.inf
    tol = dist.min(axis=1) * (1.0 + 1e-9) + 1e-300
    lo, hi = np.minimum(idx, rows), np.maximum(idx, rows)
    out = np.where(own, np.inf, _pair_d2(Y, lo, hi)).min(axis=1)
    # rows whose last neighbour ties with the nearest: every point within the tolerance
    scan = np.flatnonzero(dist[:, -1] <= tol)
    if scan.size:
        counts = tree.query_ball_point(Y[scan], tol[scan], return_length=True)
        if counts.sum() > TREE_TIES * n:
            return None
        for i, near in zip(scan, tree.query_ball_point(Y[scan], tol[scan])):
            near = np.asarray(near, dtype=np.intp)
            near = near[near != i]
            out[i] = _pair_d2(Y, np.minimum(near, i), np.maximum(near, i)).min()
    return out


def _pair_d2(Y, lo, hi):
    """``d2`` of the pairs ``(lo, hi)`` (index arrays) as the kernels compute it: ``sum_d (y_lo,d -
    y_hi,d)^2`` in order (the same bits whichever point comes first)."""
    d2 = np.zeros(lo.shape)
    for d in range(Y.shape[1]):
        diff = Y[lo, d] - Y[hi, d]
        d2 += diff * diff
    return d2


def mixture_plan(method, state, form, n):
    """``(("mixture", form, (P, PT, beta)), None)`` when the kernels serve ``form`` on this state, else
    ``(None, reason)``: a Gaussian kernel, P a C-ordered (n, n) float64 array, symmetric with a
    matrix-normalised Q (which takes no per-point precisions). ``PT``: with a row-normalised Q,
    P's C-ordered transpose (P itself when symmetric; empty when it does not fit: strided reads),
    else empty."""
    from . import exact_transpose
    from .exact_kernels import is_symmetric
    from .output_kernel_functions import GAUSSIAN_KERNEL

    if form.divergence not in DIVERGENCES or form.kernel != GAUSSIAN_KERNEL:
        return None, f"its mixture form ({form.divergence}, kernel {form.kernel}) is not served"
    P = state.P
    if not (isinstance(P, np.ndarray) and P.dtype == np.float64 and P.shape == (n, n)
            and P.flags.c_contiguous):
        return None, "its P is not a C-ordered (n, n) float64 array"
    if form.normalisation == "matrix" and (form.bandwidths or not is_symmetric(P)):
        return None, "a matrix-normalised Q needs a symmetric P and no per-point precisions"
    beta = method.output_bandwidths(state) if form.bandwidths else ()
    # P's columns as rows (the second direction of a row-normalised Q reads them)
    PT = exact_transpose.transpose_of(P) if form.normalisation == "row" else np.empty((0, 0))
    return ("mixture", form, (P, PT, np.ascontiguousarray(beta, dtype=np.float64))), None


def evaluate_mixture(form, state, X, Y, f, ws, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of a mixture form at ``Y``; ``X``:
    ``(P, PT, beta)`` from :func:`mixture_plan` (``beta`` empty without precisions); ``ws``: the
    engine's :class:`.exact_pairs.Workspace`."""
    P, PT, beta = X
    n, k = Y.shape
    ch, bounds = ws.chunks, ws.bounds
    div, w, eps = DIVERGENCES[form.divergence], float(form.weight), float(form.eps)
    by_row = form.normalisation == "row"
    Yt = np.ascontiguousarray(np.asarray(Y, dtype=np.float64).T)
    d2 = ws("d2", ch, n)
    # log Z: the largest exponent -beta_i min_j d2_ij per row (or over the matrix; the minima from
    # a k-d tree in few dimensions, else a pass), then the sums
    dmin = nearest_d2(np.asarray(Y, dtype=np.float64))
    if dmin is None:
        dmin = np.empty(n)
        nk.row_min_d2(Yt, bounds, d2, ws("cbuf", ch, n), dmin)
    if by_row:
        amax = -(beta * dmin) if beta.size else -dmin
    else:
        amax = np.full(n, -dmin.min())
    sums = np.empty(n)
    # without precisions, a pair's second exponential is its first times a per-point ratio
    fast = by_row and not beta.size
    nk.shifted_exp_rows(Yt, beta, amax, exp_ratios(amax) if fast else np.empty((0, 0)),
                        not by_row, bounds, d2, ws("qa", ch, n), ws("cbuf", ch, n), sums)
    logz = np.log(sums) + amax if by_row else np.full(n, np.log(sums.sum()) + amax[0])
    ratio = exp_ratios(logz) if fast else np.empty((0, 0))
    # the per-point sums A (the cost's P term) and B = sum q L (the reverse KL's), and the forces of
    # the stiffness without the shift (with a matrix-normalised Q, also those of q: the shift is
    # one number, their factor)
    sym = not by_row
    scratch = [ws(name, ch, n) for name in ("d2", "qa", "la", "qb", "lb", "ta", "tb", "ka", "kb")]
    A = np.empty(n) if cost else np.empty(0)
    B = np.empty(n)
    G = np.empty((n, 2 * k if sym else k)) if grad else np.empty((0, 0))
    logp = (log_p_cache(state, P, PT, f, eps, by_row) if div == nk.NERV
            else np.empty((0, 0)))
    nk.mixture_sums(P, PT, logp, Yt, div, w, f, eps, beta, logz, ratio, sym, by_row, bounds, bool(cost),
                    bool(grad), *scratch, ws("cbuf", ch, n), ws("cbuf2", ch, n),
                    ws("gbuf2" if sym else "gbuf", ch, G.shape[1], n),
                    ws("fbuf2" if sym else "fbuf", ch, G.shape[1], n), A, B, G)
    shift = -B if div == nk.NERV else B
    pcost = None
    if cost:
        if div == nk.NERV:  # lambda KL(P||Q) + (1 - lambda) KL(Q||P)
            pcost = w * A + (1.0 - w) * shift
        else:  # KL(P||M) / (1 - kappa) + KL(Q||M) / kappa
            const = state.cached("plogp_excess_exact", f,
                                 lambda: nk.plogp_excess_rows(P, f, eps))
            pcost = (const - A) / (1.0 - w) + B / w
    if not grad:
        return pcost, None
    # the shift's part of the stiffness: c q s per direction (NeRV: c = 1 - lambda, JSE: 1 / kappa)
    coef = (1.0 - w) if div == nk.NERV else 1.0 / w
    if sym:
        return pcost, G[:, :k] + (4.0 * coef * shift.sum()) * G[:, k:]
    cs = 2.0 * coef * (beta * shift if beta.size else shift)
    G2 = np.empty((n, k))
    nk.shift_forces(Yt, beta, logz, ratio, eps, cs, bounds, ws("d2", ch, n), ws("qa", ch, n),
                    ws("qb", ch, n), ws("ka", ch, n), ws("la", ch, n), ws("gbuf", ch, k, n),
                    ws("fbuf", ch, k, n), G2)
    G += G2
    return pcost, G
