"""Line-search optimisers: L-BFGS, BFGS, conjugate gradient, steepest descent and the spectral
direction, stepping exactly as the original's mize-based optimisers do (docs/optimisers.md).

One iteration is one direction plus one More-Thuente line search, which may evaluate the cost and
gradient several times. The cost and gradient at the accepted point are kept for the next iteration
(mize's cache), so the driver's recentring and exaggeration switches are not re-evaluated: the next
direction and line search use the cached values, as in the original. ``counts`` holds mize's
function and gradient evaluation counts.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import flag, nonnegative, positive
from .base import StepResult
from .directions import (BFGS, LBFGS, ConjugateGradient, SpectralDirection,
                         SteepestDescentDirection, spectral_hessian)
from .linesearch import EPS, Point, more_thuente

# convergence tests: all off unless given (rel_tol follows abs_tol when only abs_tol is given)
TOLERANCES = ("abs_tol", "rel_tol", "grad_tol", "ginf_tol", "step_tol", "max_fn", "max_gr", "max_fg")
COMMON = dict(c1=1e-4, ls_max_fn=20, **{name: None for name in TOLERANCES})


class LineSearchOptimizer:
    """Base of the mize-style optimisers; subclasses name the direction and the line-search
    constants (``c2``, ``try_newton_step``)."""

    name = "linesearch"
    defaults: dict = {}
    try_newton_step = True

    def __init__(self, **params):
        self._params = params
        self.c1 = positive(self.name, "c1", params["c1"])
        self.c2 = positive(self.name, "c2", params["c2"])
        if not self.c1 < self.c2 < 1:
            raise ValueError(f"{self.name}: the line search needs 0 < c1 < c2 < 1; "
                             f"got c1 = {self.c1:g}, c2 = {self.c2:g}")
        self.ls_max_fn = _count(self.name, "ls_max_fn", params["ls_max_fn"])
        tol = {name: params[name] for name in TOLERANCES}
        for name, value in tol.items():
            if value is not None:
                tol[name] = (nonnegative if name.endswith("tol") else positive)(self.name, name, value)
        for name in ("approx_hess", "scale_hess"):
            if name in params:
                flag(self.name, name, params[name])
        if tol["rel_tol"] is None:
            tol["rel_tol"] = tol["abs_tol"]
        self.tol = tol
        self.counts = {"fn": 0, "gr": 0}
        self.terminated: str | None = None
        self.direction = None
        self.g_old = self.s_old = self.p_old = None
        self.f = self.g = None  # cached cost and gradient at the current point
        self.f_prev_search = None  # f at the start of the previous line search
        self.f_checked = None  # f remembered by the previous convergence check
        self.last_search = None  # (initial step, accepted step, evaluations) of the last iteration

    def params(self) -> dict:
        out = {"name": self.name, **self._params}
        if self.terminated:
            out["terminated"] = self.terminated
        return out

    def make_direction(self, objective, n: int, k: int):
        raise NotImplementedError

    # -- one iteration -------------------------------------------------------------------------
    def step(self, objective, Y: np.ndarray, iteration: int) -> StepResult:
        n, k = Y.shape
        x = Y.ravel(order="F")

        def fg(z):
            f, G = objective.value_and_gradient(z.reshape(n, k, order="F"))
            return f, G.ravel(order="F")

        if self.direction is None:
            self.direction = self.make_direction(objective, n, k)
        if self.g is None:
            self.f, self.g = fg(x)  # the original evaluates gradient and cost by separate calls
            self.counts["fn"] += 1
            self.counts["gr"] += 1
        f, g = self.f, self.g
        if not np.all(np.isfinite(g)):
            self.terminated = "gr_inf"
            return StepResult(Y=Y, G=g.reshape(n, k, order="F"), cost=f, converged=True)

        p = self.direction.direction(g, self.g_old, self.s_old, self.p_old)
        alpha, f_new, g_new = 0.0, f, g
        if np.linalg.norm(p) >= EPS:
            d0 = float(np.dot(g, p))
            alpha0 = self._initial_step(f, d0)
            self.f_prev_search = f
            budget = self._budget()
            if budget > 0:
                def phi(a):
                    fa, ga = fg(x + a * p)
                    return fa, float(np.dot(ga, p)), ga

                res = more_thuente(phi, Point(0.0, f, d0, g), alpha0, c1=self.c1, c2=self.c2,
                                   max_fev=budget)
                self.counts["fn"] += res.nfev
                self.counts["gr"] += res.nfev
                alpha, f_new, g_new = res.alpha, res.f, res.payload
            self.last_search = (alpha0, alpha, 0 if budget <= 0 else res.nfev)
        step = alpha * p
        x_new = x + step
        self.p_old, self.g_old, self.s_old = p, g, step
        self.f, self.g = f_new, g_new
        converged = self._converged(step)
        return StepResult(Y=x_new.reshape(n, k, order="F"), G=g_new.reshape(n, k, order="F"),
                          cost=f_new, converged=converged)

    def _initial_step(self, f: float, d0: float) -> float:
        """mize's "quadratic" guess from the last two costs, or "rasmussen" on the first search."""
        if self.f_prev_search is not None:
            a = 2.0 * (f - self.f_prev_search) / d0
            if self.try_newton_step:
                a = min(1.0, 1.01 * a)
            a = max(EPS, a)
            if math.isfinite(a):
                return a
        a = 1.0 / (1.0 - d0)
        return min(1.0, 1.01 * a) if self.try_newton_step else a

    def _budget(self) -> int:
        left = [self.ls_max_fn]
        t, c = self.tol, self.counts
        if t["max_fn"] is not None:
            left.append(int(t["max_fn"]) - c["fn"])
        if t["max_gr"] is not None:
            left.append(int(t["max_gr"]) - c["gr"])
        if t["max_fg"] is not None:
            left.append((int(t["max_fg"]) - c["fn"] - c["gr"]) // 2)
        return min(left)

    def _converged(self, step: np.ndarray) -> bool:
        """mize's convergence check after a step; sets ``terminated`` to the reason."""
        t, c, f, g = self.tol, self.counts, self.f, self.g
        f_old, self.f_checked = self.f_checked, f
        checks = [
            ("max_fn", t["max_fn"] is not None and c["fn"] >= t["max_fn"]),
            ("max_gr", t["max_gr"] is not None and c["gr"] >= t["max_gr"]),
            ("max_fg", t["max_fg"] is not None and c["fn"] + c["gr"] >= t["max_fg"]),
            ("step_tol", t["step_tol"] is not None and np.linalg.norm(step) < t["step_tol"]),
            ("gr_inf", not np.all(np.isfinite(g))),
            ("grad_tol", t["grad_tol"] is not None and np.linalg.norm(g) <= t["grad_tol"]),
            ("ginf_tol", t["ginf_tol"] is not None and np.max(np.abs(g)) <= t["ginf_tol"]),
            ("fn_inf", not math.isfinite(f)),
        ]
        if f_old is not None and math.isfinite(f):
            df = abs(f_old - f)
            low = min(abs(f), abs(f_old))
            rel = 0.0 if df == 0 else (df / low if low > 0 else math.inf)
            checks += [("abs_tol", t["abs_tol"] is not None and df < t["abs_tol"]),
                       ("rel_tol", t["rel_tol"] is not None and rel < t["rel_tol"])]
        for reason, hit in checks:
            if hit:
                self.terminated = reason
                return True
        return False


def _count(opt: str, name: str, value) -> int:
    """A whole number >= 1 (a memory size, an evaluation budget)."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{opt}: {name} must be a whole number >= 1; got {value!r}")
    return int(value)


def _affinities(objective, opt: str) -> np.ndarray:
    """P as the cost sees it now (exaggerated during early exaggeration), dense."""
    P = objective.state.P
    if P is None:
        raise ValueError(f"opt {opt!r} needs input affinities P; method "
                         f"{objective.method.name!r} has none")
    P = P.toarray() if hasattr(P, "toarray") else np.asarray(P)
    return objective.exaggeration * P


def _approx_hess_diagonal(objective, opt: str, k: int) -> np.ndarray:
    """The inverse of the spectral Hessian's diagonal, ``1 / (4 colSums P)``, per output column."""
    return np.tile(1.0 / (4.0 * _affinities(objective, opt).sum(axis=0)), k)


class SteepestDescentLS(LineSearchOptimizer):
    name = "sd"
    defaults = dict(COMMON, c2=0.1)
    try_newton_step = False

    def make_direction(self, objective, n, k):
        return SteepestDescentDirection()


class ConjugateGradientLS(LineSearchOptimizer):
    name = "cg"
    defaults = dict(COMMON, c2=0.1, cg_update="PR+")
    try_newton_step = False

    def __init__(self, **params):
        update = str(params["cg_update"]).upper()
        if update not in ConjugateGradient.UPDATES:
            raise ValueError(f"cg: unknown cg_update {params['cg_update']!r}; valid: "
                             f"{', '.join(ConjugateGradient.UPDATES)}")
        super().__init__(**{**params, "cg_update": update})

    def make_direction(self, objective, n, k):
        return ConjugateGradient(self._params["cg_update"])


class LBFGSLS(LineSearchOptimizer):
    name = "l-bfgs"
    defaults = dict(COMMON, c2=0.9, memory=5, scale_hess=True, approx_hess=False)

    def __init__(self, **params):
        _count(self.name, "memory", params["memory"])
        super().__init__(**params)

    def make_direction(self, objective, n, k):
        h0 = _approx_hess_diagonal(objective, self.name, k) if self._params["approx_hess"] else None
        return LBFGS(int(self._params["memory"]), bool(self._params["scale_hess"]), h0)


class BFGSLS(LineSearchOptimizer):
    name = "bfgs"
    defaults = dict(COMMON, c2=0.9, approx_hess=False)

    def make_direction(self, objective, n, k):
        _check_dense_size(self.name, (n * k) ** 2, "an (n k) x (n k) inverse Hessian")
        h0 = _approx_hess_diagonal(objective, self.name, k) if self._params["approx_hess"] else None
        return BFGS(h0)


class SpectralDirectionLS(LineSearchOptimizer):
    name = "specd"
    defaults = dict(COMMON, c2=0.9)

    def make_direction(self, objective, n, k):
        _check_dense_size(self.name, n * n, "an n x n Cholesky factor")
        return SpectralDirection(spectral_hessian(_affinities(objective, self.name)))


def _check_dense_size(opt: str, entries: int, what: str) -> None:
    from ..._util.memory import describe
    from ...engines.dense import available_memory

    need, budget = 8 * 2 * entries, available_memory()
    if budget is not None and need > 0.5 * budget:
        raise MemoryError(f"opt {opt!r} needs {what}, about {need / 2**30:.0f} GiB, but "
                          f"{describe(budget)}; use opt='l-bfgs' for this many points")


LINE_SEARCH_OPTIMIZERS = {cls.name: cls for cls in
                          (LBFGSLS, BFGSLS, ConjugateGradientLS, SteepestDescentLS,
                           SpectralDirectionLS)}
