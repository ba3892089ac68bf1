"""The method registry: every cost function by name, built from its spec.

``resolve_method("tsne")`` or ``resolve_method(("tsne", {"perplexity": 10}))`` returns a ``Method``.
Adding a method means adding a ``MethodSpec`` to one of the family modules' ``SPECS`` lists.
"""

from __future__ import annotations

import importlib

from .._util.names import match_name
from .base import EPS, Method, MethodSpec, MethodState

# one module per family; each exposes a ``SPECS`` list (imported here: the modules only define things)
FAMILY_MODULES = ("sne", "dynamic", "nerv", "ee", "fdiv", "gsne", "absne", "largevis", "umap",
                  "ncvis", "mmds")

REGISTRY: dict[str, MethodSpec] = {
    spec.name: spec
    for module in FAMILY_MODULES
    for spec in importlib.import_module(f"{__name__}.{module}").SPECS
}


def __getattr__(name):
    # ``list_methods`` and ``MethodInfo`` live in :mod:`smallvis.engines.catalog`, above the methods and the
    # engines (which engines serve a method is the engines' knowledge); kept here by name, imported
    # on first use, never when this package loads: no cycle with the engines
    if name in ("MethodInfo", "list_methods"):
        from ..engines import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def build_method(method, *, perplexity=None, eps: float = EPS, use_cpp: bool = False) -> Method:
    """Build a method from its spec, applying the original's eps and use_cpp rules
    (docs/original.md#the-eps-rule).

    A bare name receives the top-level ``eps`` and ``use_cpp``; the ``(name, params)`` form keeps the
    method's defaults. ``use_cpp`` switches a Gaussian-kernel method to the independent (the original's
    C++) perplexity calibration (docs/original.md#independent-calibration-use_cpp). The top-level
    ``perplexity`` fills the method's neighbour parameter unless the params give it.
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
    built = spec.factory(**values)
    built.name = name
    recipe = getattr(built, "recipe", None)
    if bare and use_cpp and recipe is not None and recipe.kernel == "gaussian":
        import dataclasses

        built.recipe = dataclasses.replace(recipe, calibration="independent")
    return built


def methods_where(test) -> list[str]:
    """Names of the registered methods that ``test(method)`` accepts, each built with its defaults
    (an engine's ``serves``: how an engine names the methods it runs). A method that cannot be built
    with its defaults is left out."""
    names = []
    for name in REGISTRY:
        try:
            method = build_method(name)
        except Exception:  # noqa: BLE001 - a method that cannot be built with defaults is not served
            continue
        if test(method):
            names.append(name)
    return names


__all__ = ["EPS", "Method", "MethodInfo", "MethodSpec", "MethodState", "REGISTRY", "build_method",
           "list_methods", "methods_where", "split_spec"]
