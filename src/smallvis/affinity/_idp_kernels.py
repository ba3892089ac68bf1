"""Numba kernel of :func:`smallvis.affinity.idp.intrinsic_dimensionality`: Newton on every row's
entropy equation in one fused pass per step (compiled on first use, cached on disk)."""

from __future__ import annotations

import math

from numba import prange

from .._util.jit import njit


@njit(parallel=True, cache=True)
def newton_rows(D, target, log_beta, tol, max_iter, beta_out, dint_out, ok_out):
    """For each row i of ``D`` (n, m) (squared distances to the other points) find ``beta_i`` with
    entropy ``target_i`` (nats) by Newton's method in ``log beta`` from ``log_beta[i]``, bisecting when
    a step leaves the bracket. Writes the precision, ``2 beta^2 Var_p(D)`` and convergence."""
    n, m = D.shape
    for i in prange(n):
        dmin = math.inf
        for j in range(m):
            if D[i, j] < dmin:
                dmin = D[i, j]
        lb = log_beta[i]
        lo = -math.inf
        hi = math.inf
        ok = False
        dint = 0.0
        for _ in range(max_iter):
            beta = math.exp(lb)
            Z = 0.0
            s1 = 0.0
            s2 = 0.0
            for j in range(m):
                x = D[i, j] - dmin  # shifted: the largest weight is 1
                w = math.exp(-beta * x)
                Z += w
                s1 += w * x
                s2 += w * x * x
            mean = s1 / Z
            var = max(s2 / Z - mean * mean, 0.0)
            H = math.log(Z) + beta * mean
            dH = -beta * beta * var  # dH / dlog(beta)
            dint = -2.0 * dH
            err = H - target[i]
            if abs(err) <= tol:
                ok = True
                break
            if err > 0.0:  # entropy too high: beta too small
                lo = lb
            else:
                hi = lb
            if dH < 0.0:
                step = -err / dH
                step = min(8.0, max(-8.0, step))
                new = lb + step
            else:
                new = math.nan
            if not (lo < new < hi):
                if lo > -math.inf and hi < math.inf:
                    new = 0.5 * (lo + hi)
                elif err > 0.0:
                    new = lb + 1.0
                else:
                    new = lb - 1.0
            lb = new
        beta_out[i] = math.exp(lb)
        dint_out[i] = dint
        ok_out[i] = ok
