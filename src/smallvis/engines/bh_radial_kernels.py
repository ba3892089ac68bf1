"""Numba kernels of the Barnes-Hut engine's sums of radial functions (:mod:`.radial_kernels`) over
the preordered tree of :mod:`.bh_kernels`, with point charges (compiled on first use and cached on
disk).

A summarised cell adds its quadrupole terms (``quad``): the second-order expansion of the sum over
its points about their (charge-weighted) centre, which needs the first two derivatives of each
radial function in ``d2``. They are central differences of the function itself at
``x (1 +- 2^-7)``, so any declared kernel and any radial function gets them: truncation about 1e-4
of the derivative (1e-6 of a sum at most: the terms they multiply are about theta^2 of it, far
below the expansion's own error), rounding about 1e-12 (a smaller step was noisier: NCVis's
Newton solve for ``Q*``, which reads these sums at slightly different scales, then wandered by
1e-12 between calls instead of settling). Where a function is not smooth at ``x`` (``WG``'s floor
on the weight, the floor on ``log q``) the second difference is large and the cell falls back to
its monopole term (a smooth function passes up to ``x^-32`` or a Gaussian at ``d2 = 32``).

Every point's sums are sequential over the same tree in the same order, and points are
independent, so the results do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._util.jit import njit
from .bh_kernels import moments, second_moments
from .radial_kernels import radial_of, weight as radial_weight

# the central differences' step, relative to the argument x
H_REL = 2.0 ** -7
# a second difference times the step above this share of the function's scale (|phi'| + |phi| / x)
# is a kink
KINK = 0.25


@njit(cache=True, error_model="numpy", inline="always")
def taylor(fn, code, kp, floor, x, h, w0, wp, wm, scale):
    """``(phi, phi', phi'')`` of the radial function ``fn`` at ``x`` from its values at
    ``x``, ``x + h``, ``x - h`` (the weights there ``w0``, ``wp``, ``wm``), the derivatives times
    ``scale`` and ``scale^2`` (the chain rule of ``x = scale d2``); both 0 at a kink."""
    f0 = radial_of(fn, code, kp, floor, x, w0)
    fp = radial_of(fn, code, kp, floor, x + h, wp)
    fm = radial_of(fn, code, kp, floor, x - h, wm)
    d1 = (fp - fm) / (2.0 * h)
    d2 = ((fp - f0) + (fm - f0)) / (h * h)
    if not abs(d2) * h <= KINK * (abs(d1) + abs(f0) / x):
        return f0, 0.0, 0.0
    return f0, d1 * scale, d2 * (scale * scale)


@njit(cache=True, error_model="numpy")
def charge_nodes(Y, node, skip, order, c):
    """The preordered ``node`` array (:func:`preorder`) for point charges ``c`` (n,): each node's
    count replaced by the sum of its points' charges and the centre of mass of an internal node by
    their charge-weighted mean (a node whose charges sum to 0 keeps its centre). A leaf keeps its
    location, which a point recognises as its own (its points are within ``tol`` of it: the
    weighting would move it by rounding only, and a point would no longer skip itself). The points
    of a leaf are the next ``count`` entries of ``order`` (leaves in preorder); a node's children
    are the positions ``p + 1, skip[p + 1], ...`` before ``skip[p]``. The second moments are the
    charge-weighted ones about these centres (:func:`.bh_kernels.second_moments`)."""
    m = skip.shape[0]
    k = Y.shape[1]
    out = node.copy()
    cy = np.zeros((m, k))
    charge = np.zeros(m)
    t = 0
    for p in range(m):
        if skip[p] == p + 1:
            for e in range(t, t + int(node[p, k])):
                i = order[e]
                charge[p] += c[i]
                for d in range(k):
                    cy[p, d] += c[i] * Y[i, d]
            t += int(node[p, k])
    for p in range(m - 1, -1, -1):
        if skip[p] != p + 1:
            q = p + 1
            while q < skip[p]:
                charge[p] += charge[q]
                for d in range(k):
                    cy[p, d] += cy[q, d]
                q = skip[q]
    for p in range(m):
        out[p, k] = charge[p]
        if charge[p] != 0.0 and skip[p] != p + 1:
            for d in range(k):
                out[p, d] = cy[p, d] / charge[p]
    second_moments(out, skip, k, k + 2)
    return out



@njit(parallel=True, cache=True, error_model="numpy")
def radial_sums(Y, node, skip, order, theta, eps, tol, code, kp, floor, beta, quad, fs, fv, S, V):
    """Barnes-Hut sums of radial functions (:mod:`.radial_kernels`) for every point ``i``, over the
    preordered tree as :func:`.bh_kernels.repulsion_sums` (the same cells are summarised and
    skipped): ``S[i, s] = sum_c N_c fs[s](d2)`` and ``V[i, v] = sum_c N_c fv[v](d2) (y_i - com_c)``
    with ``N_c`` the node's count or charge (:func:`charge_nodes`), ``d2 = eps + |com_c - y_i|^2``;
    at most three scalar and two vector functions; ``kp``: the kernel's parameters (longer for the
    pair terms ``PAIR_*``: :func:`.approx_pair_kernels.pair_kp`; NCVis's ``NCE_*``, with UMAP's
    curve: :func:`.approx_nce_kernels.nce_kp`), ``floor``: ``WG``'s; ``beta`` (n,): each query
    point's precision, the functions then read ``beta_i d2`` (the per-point bandwidths of
    :mod:`.approx_bandwidth`), or empty for none. With ``quad`` a summarised internal node adds
    its quadrupole terms (:func:`.bh_kernels.repulsion_sums`; derivatives from :func:`taylor`):
    ``N phi + phi' tr M + 2 phi'' r^T M r`` and ``r (N psi + psi' tr M + 2 psi'' r^T M r) +
    2 psi' M r``. (numba's disk cache follows this file, not :mod:`.radial_kernels`: edit this
    docstring when the radial functions change, or a development tree keeps the old ones.)"""
    n, k = Y.shape
    m = skip.shape[0]
    ns, nv = fs.shape[0], fv.shape[0]
    theta2 = theta * theta
    scaled = beta.shape[0] > 0
    for t in prange(n):
        i = order[t]
        y0 = Y[i, 0]
        y1 = Y[i, 1] if k > 1 else 0.0
        y2 = Y[i, 2] if k > 2 else 0.0
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        b0 = 0.0
        b1 = 0.0
        b2 = 0.0
        sc = beta[i] if scaled else 1.0
        p = 0
        while p < m:
            nxt = skip[p]
            rec = node[p]
            e0 = y0 - rec[0]
            e1 = y1 - rec[1] if k > 1 else 0.0
            e2 = y2 - rec[2] if k > 2 else 0.0
            d2 = eps + (e0 * e0 + e1 * e1 + e2 * e2)
            leaf = nxt == p + 1
            if leaf:
                if abs(e0) < tol and abs(e1) < tol and abs(e2) < tol:
                    p = nxt
                    continue
            elif not rec[k + 1] < theta2 * d2:
                p += 1
                continue
            c = rec[k]
            x = beta[i] * d2 if scaled else d2
            if quad and not leaf:
                m00, m01, m02, m11, m12, m22 = moments(rec, k, k + 2)
                q0 = m00 * e0 + m01 * e1 + m02 * e2
                q1 = m01 * e0 + m11 * e1 + m12 * e2
                q2 = m02 * e0 + m12 * e1 + m22 * e2
                tr = m00 + m11 + m22
                rmr2 = 2.0 * (e0 * q0 + e1 * q1 + e2 * q2)
                h = H_REL * x
                w = radial_weight(code, kp, x)
                wp = radial_weight(code, kp, x + h)
                wm = radial_weight(code, kp, x - h)
                if ns > 0:
                    f, g1, g2 = taylor(fs[0], code, kp, floor, x, h, w, wp, wm, sc)
                    s0 += c * f + g1 * tr + g2 * rmr2
                if ns > 1:
                    f, g1, g2 = taylor(fs[1], code, kp, floor, x, h, w, wp, wm, sc)
                    s1 += c * f + g1 * tr + g2 * rmr2
                if ns > 2:
                    f, g1, g2 = taylor(fs[2], code, kp, floor, x, h, w, wp, wm, sc)
                    s2 += c * f + g1 * tr + g2 * rmr2
                if nv > 0:
                    f, g1, g2 = taylor(fv[0], code, kp, floor, x, h, w, wp, wm, sc)
                    f = c * f + g1 * tr + g2 * rmr2
                    g1 *= 2.0
                    a0 += f * e0 + g1 * q0
                    a1 += f * e1 + g1 * q1
                    a2 += f * e2 + g1 * q2
                if nv > 1:
                    f, g1, g2 = taylor(fv[1], code, kp, floor, x, h, w, wp, wm, sc)
                    f = c * f + g1 * tr + g2 * rmr2
                    g1 *= 2.0
                    b0 += f * e0 + g1 * q0
                    b1 += f * e1 + g1 * q1
                    b2 += f * e2 + g1 * q2
                p = nxt
                continue
            w = radial_weight(code, kp, x)
            if ns > 0:
                s0 += c * radial_of(fs[0], code, kp, floor, x, w)
            if ns > 1:
                s1 += c * radial_of(fs[1], code, kp, floor, x, w)
            if ns > 2:
                s2 += c * radial_of(fs[2], code, kp, floor, x, w)
            if nv > 0:
                f = c * radial_of(fv[0], code, kp, floor, x, w)
                a0 += f * e0
                a1 += f * e1
                a2 += f * e2
            if nv > 1:
                f = c * radial_of(fv[1], code, kp, floor, x, w)
                b0 += f * e0
                b1 += f * e1
                b2 += f * e2
            p = nxt
        if ns > 0:
            S[i, 0] = s0
        if ns > 1:
            S[i, 1] = s1
        if ns > 2:
            S[i, 2] = s2
        for v in range(nv):
            V[i, v, 0] = a0 if v == 0 else b0
            if k > 1:
                V[i, v, 1] = a1 if v == 0 else b1
            if k > 2:
                V[i, v, 2] = a2 if v == 0 else b2
