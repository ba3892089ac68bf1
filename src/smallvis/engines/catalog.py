"""What the library offers, described: every registered method with the engines that serve it.

This sits above :mod:`smallvis.methods` (the registry) and :mod:`smallvis.engines` (which of them
runs a method natively is the engines' knowledge), so that neither imports the other back.
``smallvis.list_methods`` and ``smallvis.methods.list_methods`` are this module's ``list_methods``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .approx import served_form
from .exact import native_form
from ..methods import REGISTRY, MethodSpec, build_method

__all__ = ["MethodInfo", "list_methods", "method_engines"]


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


def method_engines(spec: MethodSpec) -> tuple:
    """The engines that run a method natively with its default parameters (``exact`` serves every
    method, through the dense evaluation where it has no fused kernels: listed only when native)."""
    method = build_method(spec.name)
    found = ["dense"]
    if native_form(method) is not None:
        found.append("exact")
    if served_form(method) is not None:
        found += ["bh", "fft"]
    return tuple(found) + tuple(e for e in spec.engines if e not in found)


def list_methods() -> list[MethodInfo]:
    """Every registered method with its family, parameters (with defaults), description and the
    engines that run it natively."""
    return [MethodInfo(s.name, s.family, dict(s.params), s.description, method_engines(s))
            for s in REGISTRY.values()]
