"""The result of ``smallvis(..., ret_extra=...)``: plain arrays and JSON-able values, no subclassing."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from .saved import stamped, unstamped


@dataclass
class SmallVisResult:
    """Everything a run produced.

    Attributes follow the original's returned list; quantities requested through
    ``ret_extra`` (``P``, ``Q``, ``DX``, ``DY``, ``V``, ``beta``, ``dint``, ...) are in ``extras`` and are
    also readable as attributes (``res.P``). See docs/original.md#result.
    """

    Y: np.ndarray
    N: int
    origD: int | None
    scale: object
    Y_init: str
    method: object
    iter: int
    time_secs: float
    G2norm: float | None
    costs: np.ndarray
    opt: dict
    perplexity: object
    itercosts: dict
    exaggeration_factor: float | None = None
    stop_lying_iter: int | None = None
    late_exaggeration_factor: float | None = None
    start_late_lying_iter: int | None = None
    pca_dims: int | None = None
    whiten_dims: int | None = None
    metrics: dict | None = None
    diverged: bool = False
    engine: str | None = None
    compile_secs: float = 0.0
    defaults: str = "smallvis"  # the set of defaults that filled the unset arguments
    settings: dict = field(default_factory=dict)  # what defaults="auto" chose
    extras: dict = field(default_factory=dict)

    def __getstate__(self):
        return stamped(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(unstamped(state, "SmallVisResult"))

    def __getattr__(self, name):
        extras = self.__dict__.get("extras", {})
        if name in extras:
            return extras[name]
        raise AttributeError(
            f"result has no attribute {name!r}"
            + (f" (extras available: {', '.join(extras)})" if extras else
               " (ask for extras with ret_extra=[...])")
        )

    @property
    def cost(self) -> float:
        """Final total cost (sum of the per-point costs)."""
        return float(np.sum(self.costs))

    def to_dict(self) -> dict:
        """Plain data: arrays become nested lists, keys of ``itercosts`` become strings."""

        def plain(v):
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, (np.floating, np.integer, np.bool_)):
                return v.item()
            if isinstance(v, dict):
                return {str(k): plain(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            return v

        out = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "extras"}
        out.update({k: plain(v) for k, v in self.extras.items()})
        return out
