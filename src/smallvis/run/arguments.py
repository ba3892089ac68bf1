"""Checks of the scalar arguments of ``smallvis()``, before any work is done.

Why a layer of its own: without it a bad value either runs and returns something wrong (a negative
``max_iter`` returned the initial coordinates, ``exaggeration_factor=nan`` a NaN embedding) or fails
deep inside numpy with a message that names no parameter ("expected non-negative integer",
"'>=' not supported between instances of 'str' and 'int'"). Every error here is a ``TypeError``
(wrong kind of value) or ``ValueError`` (right kind, out of range) that names the parameter, the
value given and what is allowed.

Only values the original (docs/original.md#arguments-and-defaults) could not use meaningfully are
refused:
``max_iter=0`` still returns the initialisation, ``eta="optsne"`` is a learning rate, and a late
exaggeration below 1 (a late *shrinking* of the attraction) is allowed; only factors that are not
positive are refused. Names (methods, inits, optimisers, ...) are checked where they are resolved.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_arguments"]


def _describe(value) -> str:
    return f"{value!r} (type {type(value).__name__})"


def _whole(name: str, value, minimum: int, *, optional: bool = False, hint: str = ""):
    """An int >= ``minimum`` (a float with an integer value is accepted, as R's numbers are)."""
    if value is None and optional:
        return None
    allowed = f"a whole number >= {minimum}{hint}" + (" or None" if optional else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {allowed}; got {_describe(value)}")
    if not math.isfinite(value) or value != int(value) or int(value) < minimum:
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    return int(value)


def _real(name: str, value, *, positive: bool = False, nonnegative: bool = False,
          optional: bool = False, what: str = ""):
    """A finite real number (> 0 or >= 0 when asked)."""
    if value is None and optional:
        return None
    rule = "a positive" if positive else "a non-negative" if nonnegative else "a"
    allowed = f"{rule} finite number{what}" + (" or None" if optional else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {allowed}; got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value) or (positive and value <= 0) or (nonnegative and value < 0):
        raise ValueError(f"{name} must be {allowed}; got {value!r}")
    return value


def _random_state(value):
    if value is None or isinstance(value, (np.random.Generator, np.random.RandomState,
                                           np.random.SeedSequence)):
        return value
    allowed = "None, a non-negative integer seed or a numpy Generator"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"random_state must be {allowed}; got {_describe(value)}")
    if value < 0:
        raise ValueError(f"random_state must be {allowed}; got {value!r}")
    return int(value)


def _perplexity(value):
    """``True`` is not a perplexity of 1. The range of a number depends on what the method reads it
    as, so it is checked there: a perplexity (>= 1, by the calibration), a neighbour count, or the
    ``sigma`` kernel's bandwidth (which may be below 1)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"perplexity must be a number, a vector with one per point, 'idp' or "
                        f"'multiscale'; got {value!r}")
    return value


def _y_init(value):
    if value is None or not isinstance(value, str):
        return value  # an array: its shape is checked once n is known
    from .._util.names import InvalidNameError
    from .init import resolve_init

    try:
        resolve_init(value)
    except InvalidNameError as err:
        raise InvalidNameError(f"Y_init: {err} (or give an (n, k) array of coordinates)") from None
    return value


def _epoch_callback(value):
    if value is None or value is False:
        return None
    if not callable(value):
        raise TypeError(f"epoch_callback must be None or a function callback(Y, iter, cost); got "
                        f"{_describe(value)}")
    return value


def check_arguments(args: dict) -> dict:
    """``args`` (the keyword arguments of ``smallvis()``) with the scalar ones checked and
    normalised (whole numbers as ``int``, factors as ``float``); raises ``TypeError`` /
    ``ValueError`` naming the first bad one."""
    a = dict(args)
    a["k"] = _whole("k (output dimensions)", a["k"], 1)
    a["max_iter"] = _whole("max_iter", a["max_iter"], 0, optional=True,
                           hint=" (0 returns the initial coordinates)")
    a["epoch"] = _whole("epoch", a["epoch"], 1, optional=True)
    a["initial_dims"] = _whole("initial_dims", a["initial_dims"], 1)
    for name in ("stop_lying_iter", "start_late_lying_iter", "mom_switch_iter"):
        a[name] = _whole(name, a[name], 0, optional=True)
    a["ee_mon_epoch"] = _whole("ee_mon_epoch", a["ee_mon_epoch"], 1, optional=True)
    for name in ("ee_mon_wait", "ee_mon_buffer", "tol_wait", "n_threads"):
        a[name] = _whole(name, a[name], 0)
    a["exaggeration_factor"] = _real("exaggeration_factor", a["exaggeration_factor"], positive=True,
                                     optional=True, what=" (1 = off; None: the defaults' choice)")
    a["late_exaggeration_factor"] = _real("late_exaggeration_factor", a["late_exaggeration_factor"],
                                          positive=True, what=" (1 = off)")
    a["Y_init_sdev"] = _real("Y_init_sdev", a["Y_init_sdev"], positive=True, optional=True)
    a["theta"] = _real("theta", a["theta"], nonnegative=True)
    a["eps"] = _real("eps", a["eps"], nonnegative=True)
    a["perplexity"] = _perplexity(a["perplexity"])
    a["Y_init"] = _y_init(a["Y_init"])
    a["random_state"] = _random_state(a["random_state"])
    a["epoch_callback"] = _epoch_callback(a["epoch_callback"])
    return a
