"""Shared plumbing of the original's internal optimisers: parameter checks and the one-gradient step.

Each internal optimiser takes one gradient per iteration and moves every coordinate by an update
``uY`` computed from it. Subclasses declare ``name``, ``defaults`` (also the
list of valid parameter names) and ``checks`` (a validator per parameter), create their state in
``start`` (called on the first step, as the original's ``opt_init`` on iteration 1) and return ``uY``
from ``update`` (docs/original.md#optimisers).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from .base import StepResult


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def positive(opt: str, key: str, value) -> float:
    """A positive finite number, e.g. a learning rate."""
    label = "eta (learning rate)" if key == "eta" else key
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise ValueError(f"{opt}: {label} must be positive and finite; got {value!r}")
    return float(value)


def nonnegative(opt: str, key: str, value) -> float:
    if not (_is_number(value) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{opt}: {key} must be a finite number >= 0; got {value!r}")
    return float(value)


def fraction(opt: str, key: str, value) -> float:
    """A decay rate or momentum: a number in [0, 1)."""
    if not (_is_number(value) and 0 <= value < 1):
        raise ValueError(f"{opt}: {key} must be a number in [0, 1); got {value!r}")
    return float(value)


def momentum_or_schedule(opt: str, key: str, value):
    """A fixed momentum in [0, 1), or any string (e.g. ``"nesterov"``) for the schedule 1 - 3/(5 + t)."""
    if isinstance(value, str):
        return value
    if not (_is_number(value) and 0 <= value < 1):
        raise ValueError(f"{opt}: {key} must be a number in [0, 1) or a string such as 'nesterov' "
                         f"(the schedule 1 - 3 / (5 + iteration)); got {value!r}")
    return float(value)


def whole(opt: str, key: str, value) -> int:
    """A whole number >= 0 (an iteration)."""
    if not (_is_number(value) and math.isfinite(value) and value >= 0 and value == int(value)):
        raise ValueError(f"{opt}: {key} must be a whole number >= 0; got {value!r}")
    return int(value)


def flag(opt: str, key: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{opt}: {key} must be True or False; got {value!r}")
    return bool(value)


class InternalOptimizer:
    """Base class: validated parameters as attributes, ``params()`` for ``res.opt``, the step loop."""

    name: str = ""
    defaults: dict = {}
    checks: dict = {}

    def __init__(self, **params):
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))} for optimizer "
                             f"{self.name!r}; valid: {', '.join(self.defaults)}")
        for key, value in {**self.defaults, **params}.items():
            setattr(self, key, self.checks[key](self.name, key, value))
        self._started = False

    def params(self) -> dict:
        return {"name": self.name, **{key: getattr(self, key) for key in self.defaults}}

    def start(self, Y: np.ndarray) -> None:
        """Create the optimiser's state (zeros shaped like ``Y``); called on the first step."""

    def update(self, G: np.ndarray, iteration: int) -> np.ndarray:
        """The update ``uY`` for gradient ``G`` at ``iteration`` (from 1)."""
        raise NotImplementedError

    def step(self, objective, Y: np.ndarray, iteration: int) -> StepResult:
        G = objective.gradient(Y)
        if not self._started:
            self.start(Y)
            self._started = True
        return StepResult(Y=Y + self.update(G, iteration), G=G)
