"""The UMAP output curve ``w = 1 / (1 + a d^(2b))``: fitting ``(a, b)`` to ``spread`` and ``min_dist``.

The target is the offset exponential ``y(x) = 1`` for ``x < min_dist``, ``exp(-(x - min_dist) / spread)``
otherwise, on 300 equally spaced ``x`` in ``[0, 3 spread]``. The original
fits it with R's ``nls`` at its defaults, which stops Gauss-Newton as soon as the relative-offset
criterion drops below ``1e-5``, i.e. a little before the exact least-squares minimum (the two differ in
the 7th significant digit). To give the original's numbers we run the same iteration: start at
``a = b = 1``; each step solves the linearised problem with a forward-difference Jacobian, halves the
step until the residual sum of squares does not increase (step factor back to ``min(2 f, 1)`` after a
success, error below 1/1024), at most 50 steps; convergence is tested before each step.

Where that fails from ``a = b = 1`` (the original then stops with an error; it happens for small
spreads such as 0.1), the same fit is done in units of ``spread`` and mapped back. See
docs/methods.md#the-umap-curve.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np

from .._util.log import logger

__all__ = ["umap_ab", "umap_curve_target"]

_N_POINTS = 300
_NLS_TOL = 1e-5
_NLS_MAX_ITER = 50
_NLS_MIN_FACTOR = 1.0 / 1024.0
_FD_STEP = math.sqrt(np.finfo(np.float64).eps)


def umap_curve_target(spread: float, min_dist: float) -> tuple[np.ndarray, np.ndarray]:
    """The fitted-to curve: ``x`` (300 points in ``[0, 3 spread]``) and ``y(x)``."""
    x = np.linspace(0.0, 3.0 * spread, _N_POINTS)
    y = np.ones_like(x)
    far = x >= min_dist
    y[far] = np.exp(-(x[far] - min_dist) / spread)
    return x, y


def _curve(params: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, b = params
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return 1.0 / (1.0 + a * x ** (2.0 * b))


def _jacobian(params: np.ndarray, x: np.ndarray, f0: np.ndarray) -> np.ndarray:
    """Forward differences, step ``|p| sqrt(eps)`` (``sqrt(eps)`` at 0), as R's ``numericDeriv``."""
    J = np.empty((x.size, params.size))
    for i in range(params.size):
        shifted = params.copy()
        delta = abs(shifted[i]) * _FD_STEP if shifted[i] != 0 else _FD_STEP
        shifted[i] += delta
        J[:, i] = (_curve(shifted, x) - f0) / delta
    return J


def _gauss_newton(x: np.ndarray, y: np.ndarray, start: tuple[float, float]) -> np.ndarray:
    params = np.array(start, dtype=np.float64)
    f = _curve(params, x)
    resid = y - f
    dev = float(resid @ resid)
    factor = 1.0
    for _ in range(_NLS_MAX_ITER):
        J = _jacobian(params, x, f)
        if not np.all(np.isfinite(J)) or np.linalg.matrix_rank(J) < params.size:
            raise _FitError("singular gradient")
        Q, R = np.linalg.qr(J)
        qr_resid = Q.T @ resid
        fitted = float(qr_resid @ qr_resid)
        rest = dev - fitted
        # relative offset convergence criterion (Bates & Watts)
        if rest <= 0 or math.sqrt(fitted / rest) <= _NLS_TOL:
            return params
        step = np.linalg.solve(R, qr_resid)
        while factor >= _NLS_MIN_FACTOR:
            trial = params + factor * step
            f_trial = _curve(trial, x)
            r_trial = y - f_trial
            dev_trial = float(r_trial @ r_trial)
            if dev_trial <= dev:  # NaN compares False: the step is halved
                params, f, resid, dev = trial, f_trial, r_trial, dev_trial
                factor = min(2.0 * factor, 1.0)
                break
            factor /= 2.0
        else:
            raise _FitError("step factor reduced below 1/1024")
    raise _FitError(f"no convergence in {_NLS_MAX_ITER} iterations")


class _FitError(RuntimeError):
    pass


def _check(spread, min_dist) -> tuple[float, float]:
    for name, value in (("spread", spread), ("min_dist", min_dist)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a number; got {value!r}")
    spread, min_dist = float(spread), float(min_dist)
    if not math.isfinite(spread) or spread <= 0:
        raise ValueError(f"spread must be a finite number > 0; got {spread!r}")
    if not math.isfinite(min_dist) or min_dist < 0:
        raise ValueError(f"min_dist must be a finite number >= 0; got {min_dist!r}")
    if min_dist >= 3.0 * spread:
        raise ValueError(
            f"min_dist ({min_dist:g}) must be less than 3 * spread ({3.0 * spread:g}): the UMAP curve "
            f"is fitted on [0, 3 * spread], where the target would otherwise be all ones"
        )
    return spread, min_dist


def umap_ab(spread: float = 1.0, min_dist: float = 0.001) -> tuple[float, float]:
    """Fit ``(a, b)`` of the UMAP output curve ``1 / (1 + a x^(2b))`` as the original does.

    Parameters
    ----------
    spread : float, default 1
        Scale of the exponential tail of the target curve; ``> 0``.
    min_dist : float, default 0.001
        Distance up to which the target is 1; ``0 <= min_dist < 3 spread``.

    Returns
    -------
    (a, b) : tuple of float
        E.g. ``(1.9290733961, 0.7915045335)`` for the defaults.

    Raises
    ------
    ValueError
        For invalid ``spread``/``min_dist``, or when the fit does not converge.
    """
    return _umap_ab(*_check(spread, min_dist))


@lru_cache(maxsize=64)
def _umap_ab(spread: float, min_dist: float) -> tuple[float, float]:
    try:
        a, b = _gauss_newton(*umap_curve_target(spread, min_dist), (1.0, 1.0))
    except _FitError as err:
        # The original stops here ("can't find a, b"); this happens for small spreads (e.g. 0.1),
        # where the first full step from a = b = 1 overshoots. The curve only depends on x / spread,
        # so fit in those units (spread 1) and map back: b is unchanged, a -> a spread^(-2b).
        try:
            a1, b = _gauss_newton(*umap_curve_target(1.0, min_dist / spread), (1.0, 1.0))
        except _FitError as err1:
            raise ValueError(
                f"can't fit the UMAP curve parameters a, b for spread = {spread:g}, min_dist = "
                f"{min_dist:g} (Gauss-Newton from a = b = 1: {err}; in units of spread: {err1})"
            ) from None
        a = a1 * spread ** (-2.0 * b)
        logger.info("UMAP curve fit from a = b = 1 failed for spread = %g, min_dist = %g (%s); "
                    "fitted in units of spread instead", spread, min_dist, err)
    if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
        raise ValueError(
            f"can't fit the UMAP curve parameters a, b for spread = {spread:g}, min_dist = "
            f"{min_dist:g} (the fit gave a = {a:g}, b = {b:g})"
        )
    logger.info("UMAP curve parameters a = %.7g, b = %.7g", a, b)
    return float(a), float(b)
