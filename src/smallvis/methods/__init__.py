"""The method registry: every cost function by name, built from its spec.

``resolve_method("tsne")`` or ``resolve_method(("tsne", {"perplexity": 10}))`` returns a ``Method``.
Adding a method means adding a ``MethodSpec`` to one of the family modules' ``SPECS`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._names import match_name
from .base import EPS, Method, MethodSpec, MethodState
from . import sne

REGISTRY: dict[str, MethodSpec] = {spec.name: spec for module in (sne,) for spec in module.SPECS}


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


def list_methods() -> list[MethodInfo]:
    """Every registered method with its family, parameters (with defaults), description and engines."""
    return [MethodInfo(s.name, s.family, dict(s.params), s.description, s.engines)
            for s in REGISTRY.values()]


def split_spec(method) -> tuple[str, dict, bool]:
    """``"name"`` or ``(name, {params})`` (or ``[name, {params}]``) -> (canonical name, params, bare)."""
    if isinstance(method, str):
        return match_name(method, REGISTRY, "method"), {}, True
    if isinstance(method, (tuple, list)) and len(method) in (1, 2) and isinstance(method[0], str):
        params = dict(method[1]) if len(method) == 2 else {}
        return match_name(method[0], REGISTRY, "method"), params, False
    raise ValueError(
        f"method must be a name such as 'tsne' or a (name, {{param: value}}) pair; got {method!r}"
    )


def build_method(method, *, perplexity=None, eps: float = EPS) -> Method:
    """Build a method from its spec, applying the original's eps rule (spec §4.3).

    A bare name receives the top-level ``eps``; the ``(name, params)`` form keeps the method's default.
    The top-level ``perplexity`` fills the method's neighbour parameter unless the params give it.
    """
    name, params, bare = split_spec(method)
    spec = REGISTRY[name]
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        valid = ", ".join(spec.params)
        raise ValueError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for method {name!r}; "
            f"valid: {valid}"
        )
    if bare and "eps" in spec.params:
        params["eps"] = eps
    if spec.neighbour_param and spec.neighbour_param not in params and perplexity is not None:
        params[spec.neighbour_param] = perplexity
    values = {**spec.params, **params}
    return spec.factory(**values)


__all__ = ["EPS", "Method", "MethodInfo", "MethodSpec", "MethodState", "REGISTRY", "build_method",
           "list_methods", "split_spec"]
