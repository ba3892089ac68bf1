"""The More-Thuente line search as mize runs it (docs/optimisers.md#more-thuente-line-search).

A search along a descent direction for a step ``alpha`` that satisfies the strong Wolfe conditions

    phi(alpha) <= phi(0) + c1 alpha phi'(0)     and     |phi'(alpha)| <= -c2 phi'(0),

following MINPACK-1's ``cvsrch``/``cstep`` with mize's differences: every computed trial is evaluated
(no "evaluate the best point last" substitution), a non-finite trial is bisected back towards the
lower end, the unscaled cubic may be NaN and then falls back to a quadratic, the secant or the
midpoint, and a search that ends without meeting the conditions returns the best point stored so far
(possibly the start, ``alpha = 0``) without evaluating it again.

``phi(alpha)`` returns ``(f, slope, payload)``; the payload (the gradient vector) travels with its point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

EPS = 2.220446049250313e-16  # double machine epsilon; also the interval tolerance xtol
EXTRAPOLATE = 4.0  # xtrapf: an unbracketed trial may move at most this far beyond the best point
SHRINK = 0.66  # the interval must shrink by this factor per bracketed pass, else bisect
STAGE_SAFEGUARD = 0.66  # cstep keeps a bounded trial this far from the best point towards the other


@dataclass
class Point:
    alpha: float
    f: float
    d: float  # slope phi'(alpha)
    payload: Any = None


@dataclass
class SearchResult:
    alpha: float
    f: float
    d: float
    payload: Any
    nfev: int
    info: int  # 1 strong Wolfe; 2 interval too small; 3 evaluation limit; 6 rounding; 0 no search


def more_thuente(phi: Callable[[float], tuple], start: Point, alpha0: float, *, c1: float = 1e-4,
                 c2: float = 0.1, max_fev: int = 20) -> SearchResult:
    """Search from ``start`` (alpha 0, f0, slope d0 < 0) with first trial ``alpha0``."""
    f0, d0 = start.f, start.d
    if not d0 < 0 or max_fev < 1:
        return _result(start, 0, 0)
    best = other = start  # MINPACK's stx and sty
    alpha = alpha0
    bracketed, stage1 = False, True
    width = width_prev = math.inf
    nfev = 0
    while True:
        if bracketed:
            lo, hi = min(best.alpha, other.alpha), max(best.alpha, other.alpha)
        else:
            lo, hi = best.alpha, alpha + EXTRAPOLATE * (alpha - best.alpha)
        alpha = max(alpha, 0.0)

        trial = None
        while nfev < max_fev:
            f, d, payload = phi(alpha)
            nfev += 1
            if math.isfinite(f) and math.isfinite(d):
                trial = Point(alpha, f, d, payload)
                break
            alpha = 0.5 * (lo + alpha)  # a non-finite value: bisect back towards the lower end
        if trial is None:
            return _result(start, nfev, 3)

        armijo = trial.f <= f0 + c1 * alpha * d0
        info = 0
        if bracketed and (alpha <= lo or alpha >= hi):
            info = 6
        if nfev >= max_fev:
            info = 3
        if bracketed and hi - lo <= EPS * hi:
            info = 2
        if armijo and abs(trial.d) <= -c2 * d0:
            info = 1
        if info == 1:
            return _result(trial, nfev, 1)
        if info:
            return _result(best, nfev, info)

        if stage1 and armijo and trial.d > min(c1, c2) * d0:
            stage1 = False
        if stage1 and trial.f <= best.f and not armijo:
            # the modified function psi(a) = phi(a) - c1 a phi'(0) while no point has met the test
            shift = c1 * d0

            def mod(p):
                return (p.alpha, p.f - p.alpha * shift, p.d - shift)

            best_i, other_i, alpha, bracketed = _cstep(mod(best), mod(other), mod(trial),
                                                       bracketed, lo, hi)
        else:
            best_i, other_i, alpha, bracketed = _cstep(_v(best), _v(other), _v(trial),
                                                       bracketed, lo, hi)
        points = (best, other, trial)
        best, other = points[best_i], points[other_i]

        if bracketed:
            w = abs(other.alpha - best.alpha)
            if w >= SHRINK * width_prev:
                alpha = best.alpha + 0.5 * (other.alpha - best.alpha)
            width_prev, width = width, w


def _v(p: Point) -> tuple:
    return p.alpha, p.f, p.d


def _result(p: Point, nfev: int, info: int) -> SearchResult:
    return SearchResult(p.alpha, p.f, p.d, p.payload, nfev, info)


def _cubic(a1, f1, d1, a2, f2, d2) -> float:
    """Minimiser of the cubic through (a1, f1, d1) and (a2, f2, d2); NaN when the root is imaginary."""
    theta = d1 + d2 - 3.0 * (f1 - f2) / (a1 - a2)
    disc = theta * theta - d1 * d2
    if disc < 0 or a1 == a2:
        return math.nan
    gamma = math.copysign(math.sqrt(disc), a2 - a1)
    denom = d2 - d1 + 2.0 * gamma
    if denom == 0:
        return math.nan
    return a2 - (a2 - a1) * (d2 + gamma - theta) / denom


def _cstep(x, y, t, bracketed: bool, lo: float, hi: float):
    """One interval update (MINPACK-1 ``cstep``): the indices (0 best, 1 other, 2 trial) of the new
    best and other points, the next trial step and the bracketing flag."""
    ax, fx, dx = x
    ay, fy, dy = y
    at, ft, dt = t
    sgn = dt * math.copysign(1.0, dx) if dx != 0 else 0.0
    secant = ax + (at - ax) * dx / (dx - dt) if dx != dt else math.nan

    if ft > fx:  # case 1: higher value, the minimum is bracketed
        c = _cubic(ax, fx, dx, at, ft, dt)
        q = ax - 0.5 * dx * (at - ax) ** 2 / (ft - fx - dx * (at - ax))
        if math.isnan(c):
            nxt = q
        elif abs(c - ax) < abs(q - ax):
            nxt = c
        else:
            nxt = c + 0.5 * (q - c)
        bracketed, bound = True, True
    elif sgn < 0:  # case 2: lower value, slopes of opposite sign: bracketed
        c = _cubic(ax, fx, dx, at, ft, dt)
        if math.isnan(c):
            nxt = secant
        elif abs(c - at) > abs(secant - at):
            nxt = c
        else:
            nxt = secant
        bracketed, bound = True, False
    elif abs(dt) < abs(dx):  # case 3: lower value, same slope sign, slope magnitude decreases
        theta = 3.0 * (fx - ft) / (at - ax) + dx + dt
        s = max(abs(theta), abs(dx), abs(dt))
        gamma = s * math.sqrt(max(0.0, (theta / s) ** 2 - (dx / s) * (dt / s)))
        if at > ax:
            gamma = -gamma
        r = ((gamma - dt) + theta) / ((gamma + (dx - dt)) + gamma)
        if r < 0 and gamma != 0:
            c = at + r * (ax - at)
        else:
            c = hi if at > ax else lo
        if bracketed:
            nxt = c if abs(at - c) < abs(at - secant) else secant
        else:
            nxt = c if abs(at - c) > abs(at - secant) else secant
        bound = True
    else:  # case 4: lower value, same slope sign, slope magnitude does not decrease
        if bracketed:
            nxt = _cubic(ay, fy, dy, at, ft, dt)
            if math.isnan(nxt):
                nxt = 0.5 * (ay + at)
        else:
            nxt = hi if at > ax else lo
        bound = False

    if ft > fx:
        best_i, other_i = 0, 2
    else:
        other_i = 0 if sgn < 0 else 1
        best_i = 2
    nxt = max(lo, min(hi, nxt))
    if bracketed and bound:
        new_ax = (x, y, t)[best_i][0]
        new_ay = (x, y, t)[other_i][0]
        b = new_ax + STAGE_SAFEGUARD * (new_ay - new_ax)
        nxt = min(b, nxt) if new_ay > new_ax else max(b, nxt)
    return best_i, other_i, nxt, bracketed
