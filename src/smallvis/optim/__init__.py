"""Optimisers by name. Each one takes an :class:`Objective` and returns the next Y."""

from __future__ import annotations

from .._names import match_name
from .base import Objective, StepResult
from .dbd import DeltaBarDelta

OPTIMIZERS = {"dbd": DeltaBarDelta}


def split_opt(opt) -> tuple[str, dict]:
    """``"dbd"`` or ``("adam", {..})`` -> (canonical name, params)."""
    if isinstance(opt, str):
        return match_name(opt, OPTIMIZERS, "optimizer"), {}
    if isinstance(opt, (tuple, list)) and len(opt) in (1, 2) and isinstance(opt[0], str):
        return match_name(opt[0], OPTIMIZERS, "optimizer"), dict(opt[1]) if len(opt) == 2 else {}
    raise ValueError(f"opt must be a name such as 'dbd' or a (name, {{param: value}}) pair; got {opt!r}")


def build_optimizer(name: str, params: dict):
    cls = OPTIMIZERS[name]
    unknown = sorted(set(params) - set(cls.defaults))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for optimizer {name!r}; "
            f"valid: {', '.join(cls.defaults)}"
        )
    return cls(**{**cls.defaults, **params})


__all__ = ["OPTIMIZERS", "Objective", "StepResult", "build_optimizer", "split_opt"]
