"""Search directions of the line-search optimisers (docs/optimisers.md#directions).

Vectors are the coordinates flattened column-major (all first coordinates, then all second ones), as
the original passes them. Every direction except steepest descent has a descent guard: a direction
with ``g . p >= 0`` is replaced by ``-g``. With ``y = g_k - g_{k-1}`` and ``s`` the last step taken,
a quasi-Newton update is skipped unless ``y . s > 1e-8 |y| |s|``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

EPS = 2.220446049250313e-16


def _guard(g, p):
    return -g if np.dot(g, p) >= 0 else p


def _curvature_ok(y, s) -> bool:
    ys, ny_ns = np.dot(y, s), np.linalg.norm(y) * np.linalg.norm(s)
    return bool(np.isfinite(ys) and np.isfinite(ny_ns) and ys > 1e-8 * ny_ns)


class SteepestDescentDirection:
    name = "sd"

    def direction(self, g, g_old, s_old, p_old):
        return -g


class ConjugateGradient:
    """Nonlinear CG: ``p = -g + beta p_old`` with ``beta`` from one of the classic updates."""

    UPDATES = ("PR+", "PR", "HZ+", "HZ", "FR", "CD", "DY", "HS", "HS+", "LS", "PRFR")

    def __init__(self, update: str = "PR+"):
        self.update = update

    def beta(self, g, g_old, p_old) -> float:
        y = g - g_old
        gg, gg_old = np.dot(g, g), np.dot(g_old, g_old)
        u = self.update
        if u in ("PR+", "PR", "PRFR"):
            pr = np.dot(g, y) / (gg_old + EPS)
            if u == "PR+":
                return max(0.0, pr)
            if u == "PRFR":
                fr = gg / (gg_old + EPS)
                return min(max(pr, -fr), fr)
            return pr
        if u in ("HZ", "HZ+"):
            D = np.dot(p_old, y) + EPS
            hz = np.dot(y, g) / D - 2.0 * np.dot(y, y) * np.dot(p_old, g) / D**2
            if u == "HZ":
                return hz
            eta = -1.0 / (np.dot(p_old, p_old) * min(0.01, gg_old))
            return max(eta, hz)
        if u == "FR":
            return gg / (gg_old + EPS)
        if u == "CD":
            return -gg / (np.dot(p_old, g_old) + EPS)
        if u == "DY":
            return gg / (np.dot(p_old, y) + EPS)
        if u in ("HS", "HS+"):
            hs = np.dot(y, g) / (np.dot(p_old, y) + EPS)
            return max(0.0, hs) if u == "HS+" else hs
        return -np.dot(y, g) / (np.dot(p_old, g_old) + EPS)  # LS

    def direction(self, g, g_old, s_old, p_old):
        if g_old is None:
            return -g
        return _guard(g, -g + self.beta(g, g_old, p_old) * p_old)


class LBFGS:
    """Limited-memory BFGS, two-loop recursion over the last ``memory`` (s, y) pairs.

    The initial inverse Hessian is ``h`` (a diagonal, first direction only) or, with ``scale_hess``,
    ``gamma = (y.s + eps) / (y.y + eps)`` from the newest stored pair.
    """

    def __init__(self, memory: int = 5, scale_hess: bool = True, h0=None):
        self.memory = memory
        self.scale_hess = scale_hess
        self.h0 = h0
        self.pairs: list[tuple[np.ndarray, np.ndarray, float]] = []

    def direction(self, g, g_old, s_old, p_old):
        if g_old is None:
            return _guard(g, -(self.h0 * g if self.h0 is not None else g))
        y = g - g_old
        if _curvature_ok(y, s_old):
            self.pairs.append((s_old, y, 1.0 / (np.dot(y, s_old) + EPS)))
            if len(self.pairs) > self.memory:
                self.pairs.pop(0)
        if not self.pairs:
            # the original errors here (every update so far skipped); steepest descent instead
            return -g
        q = g.copy()
        a = []
        for s, y, rho in reversed(self.pairs):
            a.append(rho * np.dot(s, q))
            q -= a[-1] * y
        if self.scale_hess:
            s, y, rho = self.pairs[-1]
            q *= 1.0 / (rho * (np.dot(y, y) + EPS))
        for (s, y, rho), ai in zip(self.pairs, reversed(a)):
            b = rho * np.dot(y, q)
            q += s * (ai - b)
        return _guard(g, -q)


class BFGS:
    """Dense BFGS on the inverse Hessian H (``h0`` diagonal or the identity), scaled once at k = 2."""

    def __init__(self, h0=None):
        self.h0 = h0
        self.H = None
        self.k = 0

    def direction(self, g, g_old, s_old, p_old):
        self.k += 1
        if self.H is None:
            self.H = np.diag(self.h0) if self.h0 is not None else np.eye(g.size)
        if g_old is not None:
            y = g - g_old
            if _curvature_ok(y, s_old):
                if self.k == 2:
                    self.H *= np.dot(s_old, y) / np.dot(y, y)
                rho = 1.0 / (np.dot(y, s_old) + EPS)
                Hy = self.H @ y
                # (I - rho s y') H (I - rho y s') + rho s s', expanded (H symmetric)
                self.H += (rho * rho * np.dot(y, Hy) + rho) * np.outer(s_old, s_old) \
                    - rho * (np.outer(Hy, s_old) + np.outer(s_old, Hy))
        return _guard(g, -(self.H @ g))


class SpectralDirection:
    """Spectral direction (partial Hessian): solve ``B P = -G`` per output column with the Cholesky
    factor of ``B = 4 (L+ + mu)``, ``L+`` the Laplacian of P (docs/optimisers.md#directions)."""

    def __init__(self, B: np.ndarray):
        try:
            self.factor = cho_factor(B, lower=False)
        except np.linalg.LinAlgError:
            raise ValueError("opt 'specd': the spectral Hessian 4(L + mu) is not positive definite "
                             "(is the affinity graph disconnected?); use another optimiser, e.g. "
                             "'l-bfgs'") from None
        self.n = B.shape[0]

    def direction(self, g, g_old, s_old, p_old):
        G = g.reshape(self.n, -1, order="F")
        return _guard(g, -cho_solve(self.factor, G).ravel(order="F"))


def spectral_hessian(P: np.ndarray) -> np.ndarray:
    """``B = 4 (L+ + mu)`` with ``L+ = diag(colSums P) - P`` and ``mu`` 1e-10 times the smallest
    positive entry of ``L+``, added to every entry (the original's choice)."""
    L = np.diag(P.sum(axis=0)) - P
    positive = L[L > 0]
    mu = 1e-10 * positive.min() if positive.size else 0.0
    return 4.0 * (L + mu)
