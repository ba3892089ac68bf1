"""Optimisers by name. Each one takes an :class:`Objective` and returns the next Y."""

from __future__ import annotations

import difflib

from ..._util.names import match_name
from .base import Objective, StepResult
from .adaptive import AdaDelta, AdaGrad, AdaMax, Adam, AMSGrad, Nadam, RMSprop
from .dbd import DeltaBarDelta, NesterovDeltaBarDelta
from .mize import LINE_SEARCH_OPTIMIZERS
from .momentum import GeneralizedMomentum, Momentum, NesterovMomentum, SteepestDescent

OPTIMIZERS = {"dbd": DeltaBarDelta}
# the original's other internal (one gradient per iteration) optimisers
OPTIMIZERS.update({cls.name: cls for cls in (
    NesterovDeltaBarDelta, AdaGrad, AdaDelta, RMSprop, Adam, AMSGrad, AdaMax, Nadam,
    SteepestDescent, Momentum, NesterovMomentum, GeneralizedMomentum)})
# line-search optimisers (the original's mize-based ones)
OPTIMIZERS.update(LINE_SEARCH_OPTIMIZERS)
# other spellings of the same optimisers, recognised when written in full
ALIASES = {"lbfgs": "l-bfgs", "phess": "specd", "conjugate-gradient": "cg"}


def _match(name: str) -> str:
    alias = ALIASES.get(name.strip().lower()) if isinstance(name, str) else None
    return alias or match_name(name, OPTIMIZERS, "optimizer")


def split_opt(opt) -> tuple[str, dict]:
    """``"dbd"`` or ``("adam", {..})`` -> (canonical name, params)."""
    if isinstance(opt, str):
        return _match(opt), {}
    if isinstance(opt, (tuple, list)) and len(opt) in (1, 2) and isinstance(opt[0], str):
        return _match(opt[0]), dict(opt[1]) if len(opt) == 2 else {}
    raise ValueError(f"opt must be a name such as 'dbd' or a (name, {{param: value}}) pair; got {opt!r}")


def build_optimizer(name: str, params: dict):
    cls = OPTIMIZERS[name]
    unknown = sorted(set(params) - set(cls.defaults))
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), list(cls.defaults), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for optimizer {name!r}{hint}; "
            f"valid: {', '.join(cls.defaults)}"
        )
    return cls(**{**cls.defaults, **params})


__all__ = ["OPTIMIZERS", "Objective", "StepResult", "build_optimizer", "split_opt"]
