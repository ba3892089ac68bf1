"""The fused exact engine's evaluation of the mixes of forward and reverse KL described by
``Method.mixture_form`` (nerv, snerv, bnerv, rsrnerv, jse, sjse, rsrjse): the dense engine's numbers
with nothing (n, n) beyond P (kernels: :mod:`.exact_nerv_kernels`).

Q is Gaussian and normalised by a log-sum-exp, as the dense engine's
:func:`~smallvis.methods.elementwise.gaussian_probabilities`: the row minima of ``d2`` give each
row's (or the matrix's) largest exponent ``a_max``, then ``log Z = log sum exp(a - a_max) + a_max``,
so rows whose output distances are all large stay exact. The reverse KL's shift (per row, or its
sum over the matrix) enters every pair's stiffness, so the forces take a pass of their own after
the pass that sums it: four passes with the gradient, three without.
"""

from __future__ import annotations

import numpy as np

from . import exact_nerv_kernels as nk

DIVERGENCES = {"nerv": nk.NERV, "jse": nk.JSE}


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
    # log Z: the largest exponent -beta_i min_j d2_ij per row (or over the matrix), then the sums
    dmin = np.empty(n)
    nk.row_min_d2(Yt, bounds, d2, ws("cbuf", ch, n), dmin)
    if by_row:
        amax = -(beta * dmin) if beta.size else -dmin
    else:
        amax = np.full(n, -dmin.min())
    sums = np.empty(n)
    nk.shifted_exp_rows(Yt, beta, amax, bounds, d2, ws("qa", ch, n), ws("cbuf", ch, n), sums)
    logz = np.log(sums) + amax if by_row else np.full(n, np.log(sums.sum()) + amax[0])
    # the per-point sums A (the cost's P term) and B = sum q L (the reverse KL's)
    sym = not by_row
    scratch = [ws(name, ch, n) for name in ("d2", "qa", "la", "qb", "lb", "ta", "tb")]
    A = np.empty(n) if cost else np.empty(0)
    B = np.empty(n)
    nk.mixture_sums(P, PT, Yt, div, w, f, eps, beta, logz, sym, by_row, bounds, bool(cost), *scratch,
                    ws("cbuf", ch, n), ws("cbuf2", ch, n), A, B)
    shift = -B if div == nk.NERV else B
    pcost = G = None
    if cost:
        if div == nk.NERV:  # lambda KL(P||Q) + (1 - lambda) KL(Q||P)
            pcost = w * A + (1.0 - w) * shift
        else:  # KL(P||M) / (1 - kappa) + KL(Q||M) / kappa
            const = state.cached("plogp_excess_exact", f,
                                 lambda: nk.plogp_excess_rows(P, f, eps))
            pcost = (const - A) / (1.0 - w) + B / w
    if grad:
        if not by_row:
            shift = np.full(n, shift.sum())
        G = np.empty((n, k))
        nk.mixture_forces(P, PT, Yt, div, w, f, eps, beta, logz, sym, shift, bounds, *scratch,
                          ws("gbuf", ch, k, n), G)
    return pcost, G
