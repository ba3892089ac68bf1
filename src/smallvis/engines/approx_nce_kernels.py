"""Numba functions of NCVis's expected NCE cost (the pair form ``"nce"``, ``corrected=False``) on
the sparse-P engines (compiled on first use and cached on disk): its all-pairs terms as radial functions
of the output squared distance, and the terms of the stored entries of P.

With ``x = d_ij^2``, ``qhat = 1 / (1 + a x^b)``, the constant ``ec = e^(-Q) / (nu pi)`` of the
uncorrected noise model (:mod:`.exact_nce_kernels`: ``e^t = qhat ec``), ``sigma = expit(t)`` and
``g = a b x^b qhat / x`` (0 at ``x = 0``), a pair's noise terms are functions of ``x`` alone (its
noise weight ``s_i`` a per-point factor), and so are its data terms given ``p = f P_ij``:

- ``NCE_SIG``: ``sigma`` (``dC/dQ``'s noise term is ``-s_i sigma``);
- ``NCE_SIG2``: ``sigma (1 - sigma)`` (``d2C/dQ2``'s term is ``(p + s_i) sigma (1 - sigma)``);
- ``NCE_COST``: ``softplus(t) = log(1 + qhat ec)`` (the noise cost is ``s_i softplus(t)``);
- ``NCE_FORCE``: ``g sigma`` (the stiffness's noise part is ``-2 g sigma (s_i + s_j)``).

The radial functions read ``a``, ``b`` from the kernel slots of ``kp`` (UMAP's curve,
:func:`.exact_kernels.kernel_params`) and ``ec`` from the slot ``EC`` after them (:func:`nce_kp`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._util.jit import njit
from .._util.vmath import exp1, log1
from .csr_row_kernels import widest_row
from .output_kernel_functions import KP_A, KP_B, N_PARAMS


@njit(cache=True, error_model="numpy", inline="always")
def _logistic(r):
    """``(sigma, 1 - sigma)`` of the logit ``log r`` (``r`` in [0, inf]): ``r / (1 + r)`` up to
    ``r = 1``, ``1 / (1 + 1 / r)`` above; both computed and one selected. The exact engine's
    one-division form (:func:`.exact_nce_kernels._logistic`) is not used here: with it Barnes-Hut's
    ncvis gradient differed in the last bits between 1 and 2 threads
    (tests/test_approx_nce.py::test_does_not_depend_on_the_number_of_threads; cause not found)."""
    om = 1.0 / (1.0 + r)
    low = r * om
    high = 1.0 / (1.0 + 1.0 / r)
    return (low if r <= 1.0 else high), om


# the slot of ec in kp
EC = N_PARAMS
# rows are cut into this many blocks (scratch made once per block), any thread count
CHUNKS = 256
# which term nce_term gives (the radial codes NCE_SIG .. NCE_FORCE of .radial_kernels, in order)
SIG, SIG2, COST, FORCE = range(4)


def nce_kp(a: float, b: float, ec: float) -> np.ndarray:
    """The parameter vector ``kp`` of :func:`nce_term`: UMAP's curve ``a``, ``b`` in the kernel
    slots, ``ec`` after them."""
    from .exact_kernels import kernel_params

    return np.concatenate([kernel_params(a=a, b=b), np.array([ec], dtype=np.float64)])


@njit(cache=True, error_model="numpy")
def _curve(a, b, x):
    """``(qhat, g)`` at ``x`` as :func:`.exact_nce_kernels._row_curve` computes them."""
    x = max(x, 0.0)
    apb = a * math.pow(x, b)
    qhat = 1.0 / (1.0 + apb)
    return qhat, (b * apb * qhat / x if x > 0.0 else 0.0)


@njit(cache=True, error_model="numpy")
def nce_term(which, kp, x, qhat):
    """The term ``which`` (``SIG``, ``SIG2``, ``COST``, ``FORCE``) of a pair at squared distance
    ``x`` (the module docstring; ``kp`` of :func:`nce_kp`) given ``qhat``, the weight of UMAP's
    curve with the ``a``, ``b`` of ``kp`` (the radial sums' ``w``: computed once per pair or
    cell, as :func:`_curve` computes it); only ``FORCE`` evaluates the curve again, for ``g``."""
    g = 0.0
    if which == FORCE:
        qhat, g = _curve(kp[KP_A], kp[KP_B], x)
    r = qhat * kp[EC]
    if which == COST:
        return math.log1p(r)
    sig, om = _logistic(r)
    if which == SIG:
        return sig
    if which == SIG2:
        return sig * om
    return g * sig


@njit(parallel=True, cache=True, error_model="numpy")
def stored_curve(indptr, indices, Y, a, b, apb):
    """``a x^b`` (UMAP's curve ``qhat = 1 / (1 + a x^b)``) of every stored entry of P at ``Y`` (-1
    on the diagonal), made once per evaluation for the Newton steps' passes (:func:`stored_dq_at`)
    and the final one (:func:`stored_terms`): a row's squared distances, then ``x^b`` as
    :func:`smallvis._util.vmath.pow1`'s ``exp(b log x)`` in a log pass and an exp pass (its bits;
    loops over a row's slice from 0, so that LLVM vectorises them: 5x faster than one loop of
    ``pow1`` over ``range(lo, hi)``)."""
    n, k = Y.shape
    for i in prange(n):
        lo, hi = indptr[i], indptr[i + 1]
        m = hi - lo
        row = apb[lo:hi]
        cols = indices[lo:hi]
        for e in range(m):
            j = cols[e]
            x = 0.0
            for d in range(k):
                diff = Y[i, d] - Y[j, d]
                x += diff * diff
            row[e] = max(x, 0.0)
        for e in range(m):
            row[e] = log1(row[e])
        if b != 0.0:
            for e in range(m):
                row[e] = a * exp1(b * row[e])
        else:  # pow1's x^0 = 1
            for e in range(m):
                row[e] = a
        for e in range(m):
            if cols[e] == i:
                row[e] = -1.0


@njit(parallel=True, cache=True, error_model="numpy")
def stored_dq_at(indptr, data, apb, f, ec, F, dF):
    """Per row ``i`` of the CSR matrix P, over its stored entries (``p = f P_ij``, ``a x^b`` of
    :func:`stored_curve`): ``F_i = sum_j p (1 - sigma)`` and ``dF_i = sum_j p sigma (1 - sigma)``,
    the data terms of ``dC/dQ`` and ``d2C/dQ2``. A row's terms in one vectorised pass, then its
    sums in the stored order (the diagonal, ``a x^b = -1``, left out); rows in ``CHUNKS`` blocks,
    each writing its own rows only: the result does not depend on the number of threads."""
    n = indptr.shape[0] - 1
    width = widest_row(indptr)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        t1 = np.empty(width)
        t2 = np.empty(width)
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo, hi = indptr[i], indptr[i + 1]
            m = hi - lo
            arow, prow = apb[lo:hi], data[lo:hi]
            for e in range(m):
                sig, om = _logistic((1.0 / (1.0 + arow[e])) * ec)
                p = f * prow[e]
                t1[e] = p * om
                t2[e] = p * sig * om
            s1 = 0.0
            s2 = 0.0
            for e in range(m):
                if arow[e] < 0.0:
                    continue
                s1 += t1[e]
                s2 += t2[e]
            F[i] = s1
            dF[i] = s2


@njit(parallel=True, cache=True, error_model="numpy")
def stored_terms(indptr, indices, data, apb, Y, f, b, ec, want_cost, want_grad, cost, G):
    """Per row ``i`` of the symmetric CSR matrix P, over its stored entries (``p = f P_ij``, ``a x^b``
    of :func:`stored_curve`): the data cost ``cost_i = sum_j p softplus(-t)`` and the data forces
    ``G_i = sum_j 4 g p (1 - sigma) (y_i - y_j)`` (each pair's two directions). A row's squared
    distances, then its stiffnesses in one vectorised pass, then the sums in the stored order (the
    diagonal and ``p = 0`` left out); rows in ``CHUNKS`` blocks, each writing its own rows only."""
    n, k = Y.shape
    width = widest_row(indptr)
    blocks = min(CHUNKS, n)
    for blk in prange(blocks):
        xs = np.empty(width)
        kk = np.empty(width)
        for i in range(blk * n // blocks, (blk + 1) * n // blocks):
            lo, hi = indptr[i], indptr[i + 1]
            m = hi - lo
            cols, prow, arow = indices[lo:hi], data[lo:hi], apb[lo:hi]
            if want_grad:
                for e in range(m):
                    j = cols[e]
                    x = 0.0
                    for d in range(k):
                        diff = Y[i, d] - Y[j, d]
                        x += diff * diff
                    xs[e] = max(x, 0.0)
                for e in range(m):  # vectorised: both sides of the select computed
                    x = xs[e]
                    qhat = 1.0 / (1.0 + arow[e])
                    om = 1.0 / (1.0 + qhat * ec)  # _logistic's 1 - sigma
                    g = b * arow[e] * qhat / x
                    kk[e] = 4.0 * (g if x > 0.0 else 0.0) * (f * prow[e]) * om
                for d in range(k):
                    G[i, d] = 0.0
            ci = 0.0
            for e in range(m):
                j = cols[e]
                p = f * prow[e]
                if j == i or p == 0.0:
                    continue
                if want_cost:
                    ci += p * math.log1p(1.0 / ((1.0 / (1.0 + arow[e])) * ec))
                if want_grad:
                    ke = kk[e]
                    for d in range(k):
                        G[i, d] += ke * (Y[i, d] - Y[j, d])
            if want_cost:
                cost[i] = ci
