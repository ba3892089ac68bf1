"""Row functions of the fused exact engine's KL passes (the one-pass
:func:`.exact_kernels.kl_terms_unnormalised`, the Z passes, the general pass of
:mod:`.exact_asymmetric_kernels`) for the costly output kernels (compiled on first use and cached
on disk).

:func:`row_costly_weights` gives the weights ``w`` and gradient factors ``g`` of one row's pairs as
:func:`.output_kernel_dispatch.row_weights_grads` does, but with one loop per transcendental
function (a log pass, then an exp pass: one loop holding both polynomials' constants runs slower,
see :mod:`smallvis._util.vmath`), the exponent's special cases chosen outside the loops:

- heavy-tailed (hssne, bhssne): ``log1p(alpha x)``, then ``w = exp(-l / alpha)``; ``g = 1 / (1 +
  alpha x)``: the generated kernel's bits; where ``1 / alpha`` is an integer ``n`` up to 4
  (:func:`rational_power`; the default alpha 0.5), ``w = g^n``, no transcendental (within a few
  ulps of the generated weight: the exact engine's numbers move in the last bits, not the
  dense engine's);
- UMAP's curve (usne): ``log x``, then ``w = 1 / (1 + a exp(b l))``, ``g = b (1 - w) / (x +
  gr_eps)``: the generated kernel's bits (``pow`` is ``exp(b log x)`` there too);
- dhssne's power form: ``l = log(alpha x + 1)`` once, ``w = exp(-l / alpha)`` and ``g = w^b`` from
  the same ``l`` (``exp(b (-l / alpha))``; ``1 / (alpha x + 1)`` for ``b = alpha``, its value):
  one log and one exp per pair instead of two of each (the last bits of ``g`` differ from
  ``pow(w, b)``'s).

Any other kernel, or an exponent with a special case, goes to the generated row function.
:func:`row_costly_weights_inplace` gives the weights alone the same way (the Z passes: the
exact engine's ``kernel_total`` and the general KL pass's ``weight_rows``); the general KL pass
(:mod:`.exact_asymmetric_kernels`) takes its weights and factors from :func:`row_costly_weights`
too.
:func:`add_two_forces_2d` and :func:`add_kl_forces_2d` add two force sums of a 2-D row in one
loop over the pairs (the bits of :func:`.exact_kernels.add_pair_forces` of each, a loop per sum
and dimension).
"""

from __future__ import annotations

from .._util.jit import njit
from .._util.sums import pairwise_sum
from .._util.vmath import exp1, log1, log1p1
from .output_kernel_dispatch import row_weights_grads, row_weights_inplace
from .output_kernel_functions import (HEAVY_TAILED_KERNEL, KP_A, KP_ALPHA, KP_B, KP_DOF,
                                      KP_GR_EPS, POWER_HEAVY_KERNEL, TDOF_KERNEL, UMAP_KERNEL)


@njit(cache=True, error_model="numpy", inline="always")
def _special(e):
    """True for the exponents :func:`.output_kernel_functions.power` treats apart."""
    return e == 1.0 or e == 2.0 or e == 0.5 or e == -1.0 or e == 0.0


@njit(cache=True, error_model="numpy", inline="always")
def rational_power(alpha):
    """``n`` where ``1 / alpha`` is the integer ``n`` in 1..4 (hssne's and bhssne's default alpha
    0.5: 2), else 0: the heavy-tailed weight ``(1 + alpha x)^(-1 / alpha)`` is then ``r^n`` with
    ``r = 1 / (1 + alpha x)``, its gradient factor."""
    inv = 1.0 / alpha if alpha > 0.0 else 0.0
    for n in range(1, 5):
        if inv == n:
            return n
    return 0


@njit(cache=True, error_model="numpy")
def _powers(r, w, n, m):
    """``w[j] = r[j]^n`` for ``j < m`` and ``n`` in 1..4 (distinct arrays; a loop per ``n``, each
    vectorised)."""
    if n == 1:
        for j in range(m):
            w[j] = r[j]
    elif n == 2:
        for j in range(m):
            w[j] = r[j] * r[j]
    elif n == 3:
        for j in range(m):
            rj = r[j]
            w[j] = rj * rj * rj
    else:
        for j in range(m):
            sq = r[j] * r[j]
            w[j] = sq * sq


@njit(cache=True, error_model="numpy")
def _heavy_powers_inplace(alpha, n, w, m):
    """``w[j] = r^n`` with ``r = 1 / (1 + alpha w[j])`` (:func:`rational_power`), in place."""
    if n == 1:
        for j in range(m):
            w[j] = 1.0 / (1.0 + alpha * w[j])
    elif n == 2:
        for j in range(m):
            r = 1.0 / (1.0 + alpha * w[j])
            w[j] = r * r
    elif n == 3:
        for j in range(m):
            r = 1.0 / (1.0 + alpha * w[j])
            w[j] = r * r * r
    else:
        for j in range(m):
            r = 1.0 / (1.0 + alpha * w[j])
            sq = r * r
            w[j] = sq * sq


@njit(cache=True, error_model="numpy")
def _heavy(alpha, d2, w, g, m):
    n = rational_power(alpha)
    if n > 0:
        for j in range(m):
            g[j] = 1.0 / (1.0 + alpha * d2[j])
        _powers(g, w, n, m)
        return
    for j in range(m):
        ax = alpha * d2[j]
        w[j] = log1p1(ax)
        g[j] = 1.0 / (1.0 + ax)
    for j in range(m):
        w[j] = exp1(-w[j] / alpha)


@njit(cache=True, error_model="numpy")
def _umap(a, b, gr_eps, d2, w, g, m):
    for j in range(m):
        w[j] = log1(max(d2[j], 0.0))
    for j in range(m):
        wj = 1.0 / (1.0 + a * exp1(b * w[j]))
        w[j] = wj
        g[j] = b * (1.0 - wj) / (max(d2[j], 0.0) + gr_eps)


@njit(cache=True, error_model="numpy")
def _power_heavy(alpha, b, d2, w, g, m):
    y = -1.0 / alpha
    for j in range(m):
        base = alpha * d2[j] + 1.0
        w[j] = y * log1(base)
        g[j] = 1.0 / base
    if b == alpha:  # w^alpha = 1 / (alpha x + 1)
        for j in range(m):
            w[j] = exp1(w[j])
    else:
        for j in range(m):
            t = w[j]
            w[j] = exp1(t)
            g[j] = exp1(b * t)


@njit(cache=True, error_model="numpy")
def _tdof(dof, d2, w, g, m):
    e = -0.5 * (dof + 1.0)
    half = 0.5 * (dof + 1.0)
    for j in range(m):
        x = d2[j]
        w[j] = log1(1.0 + x / dof)
        g[j] = half / (dof + x)
    for j in range(m):
        w[j] = exp1(e * w[j])


@njit(cache=True, error_model="numpy")
def row_costly_weights(code, kp, d2, w, g, m):
    """``w[j] = w(d2[j])`` and ``g[j] = g(d2[j], w[j])`` for ``j < m`` (distinct arrays): the split
    loops of the heavy-tailed kernel, UMAP's curve, the power form and the Student-t with ``dof``
    degrees of freedom, else the generated
    :func:`.output_kernel_dispatch.row_weights_grads`."""
    if code == HEAVY_TAILED_KERNEL:
        _heavy(kp[KP_ALPHA], d2, w, g, m)
    elif code == UMAP_KERNEL and not _special(kp[KP_B]):
        _umap(kp[KP_A], kp[KP_B], kp[KP_GR_EPS], d2, w, g, m)
    elif (code == POWER_HEAVY_KERNEL and not _special(-1.0 / kp[KP_ALPHA])
          and (kp[KP_B] == kp[KP_ALPHA] or not _special(kp[KP_B]))):
        _power_heavy(kp[KP_ALPHA], kp[KP_B], d2, w, g, m)
    elif code == TDOF_KERNEL and not _special(-0.5 * (kp[KP_DOF] + 1.0)):
        _tdof(kp[KP_DOF], d2, w, g, m)
    else:
        row_weights_grads(code, kp, d2, w, g, m)


@njit(cache=True, error_model="numpy")
def add_two_forces_2d(Yt, i, ka, kb, ga, gb, m, t0, t1, t2, t3):
    """The forces of two stiffness rows in 2-D in one loop over the pairs: ``ka`` into ``ga`` and
    ``kb`` into ``gb``, the bits of :func:`.exact_kernels.add_pair_forces` of each (one loop of
    both runs faster than two loops, and one loop per dimension no faster); ``t0``-``t3``:
    scratch (n,) for the terms."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    a0, a1 = ga[0, i + 1:], ga[1, i + 1:]
    b0, b1 = gb[0, i + 1:], gb[1, i + 1:]
    for j in range(m):
        kaj = ka[j]
        kbj = kb[j]
        dx = a - y0[j]
        dy = b - y1[j]
        u0 = kaj * dx
        u1 = kaj * dy
        v0 = kbj * dx
        v1 = kbj * dy
        t0[j] = u0
        t1[j] = u1
        t2[j] = v0
        t3[j] = v1
        a0[j] -= u0
        a1[j] -= u1
        b0[j] -= v0
        b1[j] -= v1
    ga[0, i] += pairwise_sum(t0, m)
    ga[1, i] += pairwise_sum(t1, m)
    gb[0, i] += pairwise_sum(t2, m)
    gb[1, i] += pairwise_sum(t3, m)


@njit(cache=True, error_model="numpy")
def add_kl_forces_2d(Yt, i, four_f, prow, w, g, ga, gr, m, t0, t1, t2, t3):
    """The one-pass KL's two 2-D force sums in one loop over the pairs: the attraction
    ``ka = 4 f P g`` into ``ga`` and the repulsion ``kr = 4 w g`` into ``gr`` (the bits of
    :func:`.exact_kernels.add_pair_forces` of each; ``t0``-``t3``: scratch (n,) for the terms)."""
    a, b = Yt[0, i], Yt[1, i]
    y0, y1 = Yt[0, i + 1:], Yt[1, i + 1:]
    a0, a1 = ga[0, i + 1:], ga[1, i + 1:]
    r0, r1 = gr[0, i + 1:], gr[1, i + 1:]
    for j in range(m):
        gj = g[j]
        ka = four_f * prow[j] * gj
        kr = 4.0 * w[j] * gj
        dx = a - y0[j]
        dy = b - y1[j]
        u0 = ka * dx
        u1 = ka * dy
        v0 = kr * dx
        v1 = kr * dy
        t0[j] = u0
        t1[j] = u1
        t2[j] = v0
        t3[j] = v1
        a0[j] -= u0
        a1[j] -= u1
        r0[j] -= v0
        r1[j] -= v1
    ga[0, i] += pairwise_sum(t0, m)
    ga[1, i] += pairwise_sum(t1, m)
    gr[0, i] += pairwise_sum(t2, m)
    gr[1, i] += pairwise_sum(t3, m)


@njit(cache=True, error_model="numpy")
def row_costly_weights_inplace(code, kp, w, m):
    """``w[j] = w(w[j])`` for ``j < m`` (the squared distances replaced by their weights, as
    :func:`.output_kernel_dispatch.row_weights_inplace`, with its bits): a log pass, then an exp
    pass, for UMAP's curve, the power form and the Student-t with ``dof`` degrees of freedom
    (their one loop of both runs 5-8x slower); the heavy-tailed kernel's powers of ``1 / (1 +
    alpha x)`` where :func:`rational_power` gives one (within a few ulps); any other kernel, or an
    exponent with a special case, goes to the generated row function."""
    if code == HEAVY_TAILED_KERNEL and rational_power(kp[KP_ALPHA]) > 0:
        _heavy_powers_inplace(kp[KP_ALPHA], rational_power(kp[KP_ALPHA]), w, m)
    elif code == UMAP_KERNEL and not _special(kp[KP_B]):
        a, b = kp[KP_A], kp[KP_B]
        for j in range(m):
            w[j] = log1(max(w[j], 0.0))
        for j in range(m):
            w[j] = 1.0 / (1.0 + a * exp1(b * w[j]))
    elif code == POWER_HEAVY_KERNEL and not _special(-1.0 / kp[KP_ALPHA]):
        alpha = kp[KP_ALPHA]
        e = -1.0 / alpha
        for j in range(m):
            w[j] = log1(alpha * w[j] + 1.0)
        for j in range(m):
            w[j] = exp1(e * w[j])
    elif code == TDOF_KERNEL and not _special(-0.5 * (kp[KP_DOF] + 1.0)):
        dof = kp[KP_DOF]
        e = -0.5 * (dof + 1.0)
        for j in range(m):
            w[j] = log1(1.0 + w[j] / dof)
        for j in range(m):
            w[j] = exp1(e * w[j])
    else:
        row_weights_inplace(code, kp, w, m)
