"""The public entry points: :func:`smallvis` (:mod:`.embed`, the R-compatible function), the
scikit-learn estimator :class:`SmallVis` (:mod:`.estimator`), :func:`smallvis_perpstep`
(:mod:`.perpstep`) and :func:`smallvis_rep` (:mod:`.rep`). The submodules load on first use."""

from .embed import DivergenceError, smallvis

__all__ = ["DivergenceError", "SmallVis", "smallvis", "smallvis_perpstep", "smallvis_rep"]

_LAZY = {"SmallVis": "estimator", "smallvis_perpstep": "perpstep", "smallvis_rep": "rep"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
