"""What the library offers, described: every registered method with the engines that serve it.

This sits above :mod:`smallvis.methods` (the registry) and :mod:`smallvis.engines` (which of them
runs a method natively is the engines' knowledge), so that neither imports the other back. The
catalog decides nothing itself: it asks every registered engine (``smallvis.engines.ENGINES``)
through the engine's own ``serves(method)``, for each method built with its defaults.
``smallvis.list_methods`` and ``smallvis.methods.list_methods`` are this module's ``list_methods``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ENGINES
from ..methods import REGISTRY, MethodSpec, build_method

__all__ = ["MethodInfo", "engine_names", "list_methods", "method_engines", "refusal", "served_by"]


@dataclass(frozen=True)
class MethodInfo:
    """What ``list_methods()`` returns for one method."""

    name: str
    family: str
    params: dict
    description: str
    engines: tuple

    def __str__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name} [{self.family}] {self.description} ({params})"


def engine_names() -> tuple:
    """The registered engines, in their registry order (dense first: the reference)."""
    return tuple(ENGINES)


def method_engines(spec: MethodSpec) -> tuple:
    """The engines that run a method natively with its default parameters: those whose
    ``serves(method)`` says so (``exact`` runs every method, through the dense evaluation where it
    has no fused kernels: listed only where native)."""
    method = build_method(spec.name)
    return tuple(name for name, engine in ENGINES.items() if engine.serves(method))


def refusal(engine: str, name: str) -> str | None:
    """Why ``engine`` does not run method ``name`` (with its default parameters) natively; None
    when it does. The engine's own reason (``refusal(method)``) where it has one."""
    method = build_method(name)
    cls = ENGINES[engine]
    if cls.serves(method):
        return None
    why = getattr(cls, "refusal", None)
    return (why(method) if why is not None else None) or "not served"


def served_by(engine: str) -> list[str]:
    """Names of the registered methods ``engine`` runs natively with their default parameters."""
    return [info.name for info in list_methods() if engine in info.engines]


def list_methods() -> list[MethodInfo]:
    """Every registered method with its family, parameters (with defaults), description and the
    engines that run it natively."""
    return [MethodInfo(s.name, s.family, dict(s.params), s.description, method_engines(s))
            for s in REGISTRY.values()]
