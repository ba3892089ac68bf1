"""Engines compute a method's cost and gradient (or, stochastic ones, run the whole optimisation);
``auto`` picks one and logs why."""

from __future__ import annotations

from .._logging import logger
from .._names import match_name
from .dense import DENSE_MATRICES, DenseEngine, available_memory, force_gradient
from .exact import ExactEngine
from .sgd import AUTO_SGD_N, SGDEngine

ENGINES = {"dense": DenseEngine, "exact": ExactEngine, "sgd": SGDEngine}
PLANNED = ("bh", "fft")


def _dense_fits(n: int) -> bool:
    budget = available_memory()
    return budget is None or DENSE_MATRICES * 8 * n * n <= 0.8 * budget


def resolve_engine(engine, method, n: int):
    """An engine instance for ``engine`` (a name, ``(name, {options})`` or ``"auto"``).

    ``auto`` keeps every method on the exact dense engine (the original's numbers) unless the method
    has a stochastic version and there are more than ``AUTO_SGD_N`` points (or the dense matrices
    would not fit in memory); then it uses ``sgd``.
    """
    options = {}
    if isinstance(engine, (tuple, list)):
        if not engine or not isinstance(engine[0], str) or (
                len(engine) > 1 and not isinstance(engine[1], dict)):
            raise ValueError(f"engine must be a name or a (name, {{options}}) pair; got {engine!r}")
        engine, options = engine[0], dict(engine[1]) if len(engine) > 1 else {}
    name = match_name(engine, ("auto",) + tuple(ENGINES) + PLANNED, "engine")
    if name == "auto":
        stochastic = method.stochastic_plan() is not None
        if stochastic and (n > AUTO_SGD_N or not _dense_fits(n)):
            name = "sgd"
            logger.info("engine='auto': %d points, method %s has a stochastic version: using the "
                        "sgd engine (exact dense engine up to %d points)", n, method.name, AUTO_SGD_N)
        else:
            name = "dense"
            logger.info("engine='auto': using the exact dense engine for %d points", n)
    if name not in ENGINES:
        raise ValueError(
            f"engine {name!r} is not available in this version; available: "
            f"{', '.join(('auto',) + tuple(ENGINES))}"
        )
    cls = ENGINES[name]
    allowed = getattr(cls, "OPTIONS", ())
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        valid = f"valid: {', '.join(allowed)}" if allowed else "it takes none"
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for engine {name!r}; "
                         f"{valid}")
    eng = cls(**options)
    if name == "sgd":
        eng.plan(method)  # refuse methods without a stochastic version now, with the list
    return eng


__all__ = ["ENGINES", "DenseEngine", "ExactEngine", "SGDEngine", "force_gradient", "resolve_engine"]
