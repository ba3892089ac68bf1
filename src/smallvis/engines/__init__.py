"""Engines compute a method's cost and gradient; ``auto`` picks one and logs why."""

from __future__ import annotations

from .._logging import logger
from .._names import match_name
from .dense import DenseEngine, force_gradient

ENGINES = {"dense": DenseEngine}
PLANNED = ("exact", "bh", "fft", "sgd")


def resolve_engine(engine, method, n: int):
    """An engine instance for ``engine`` (a name, ``(name, {options})`` or ``"auto"``)."""
    options = {}
    if isinstance(engine, (tuple, list)):
        engine, options = engine[0], dict(engine[1]) if len(engine) > 1 else {}
    name = match_name(engine, ("auto",) + tuple(ENGINES) + PLANNED, "engine")
    if name == "auto":
        logger.info("engine='auto': using the exact dense engine for %d points", n)
        name = "dense"
    if name not in ENGINES:
        raise ValueError(
            f"engine {name!r} is not available in this version; available: "
            f"{', '.join(('auto',) + tuple(ENGINES))}"
        )
    if options:
        raise ValueError(f"engine {name!r} takes no options; got {sorted(options)}")
    return ENGINES[name]()


__all__ = ["ENGINES", "DenseEngine", "force_gradient", "resolve_engine"]
