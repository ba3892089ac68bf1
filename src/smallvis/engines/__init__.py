"""Engines compute a method's cost and gradient (or, stochastic ones, run the whole optimisation);
``auto`` picks one and logs why."""

from __future__ import annotations

from .._util.names import match_name
from .dense import DenseEngine, force_gradient
from .auto import resolve_auto
from .exact import ExactEngine
from .sgd import SGDEngine
from .bh import BarnesHutEngine
from .fft import FFTEngine

# every engine, by name: the one list :func:`resolve_engine` and the catalog
# (:mod:`smallvis.engines.catalog`) read. Each engine class says which methods it runs natively
# through its ``serves(method) -> bool``.
ENGINES = {"dense": DenseEngine, "exact": ExactEngine, "bh": BarnesHutEngine, "fft": FFTEngine,
           "sgd": SGDEngine}
PLANNED = ()


def resolve_engine(engine, method, n: int, k: int = 2):
    """An engine instance for ``engine`` (a name, ``(name, {options})`` or ``"auto"``) running
    ``method`` on ``n`` points in ``k`` output dimensions; ``auto`` follows
    :func:`smallvis.engines.auto.choose_engine` and logs its choice."""
    options = {}
    if isinstance(engine, (tuple, list)):
        if not engine or not isinstance(engine[0], str) or (
                len(engine) > 1 and not isinstance(engine[1], dict)):
            raise ValueError(f"engine must be a name or a (name, {{options}}) pair; got {engine!r}")
        engine, options = engine[0], dict(engine[1]) if len(engine) > 1 else {}
    name = match_name(engine, ("auto",) + tuple(ENGINES) + PLANNED, "engine")
    if name == "auto":
        if options:
            raise ValueError("engine 'auto' takes no options: name the engine to pass options")
        name = resolve_auto(method, n, k, ENGINES)
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
    if hasattr(eng, "plan"):
        eng.plan(method)  # refuse a method the engine cannot run now, naming those it can
    return eng


__all__ = ["ENGINES", "DenseEngine", "ExactEngine", "SGDEngine", "force_gradient", "resolve_engine"]
