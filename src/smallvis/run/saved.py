"""Saved objects (pickled estimators, results, transform models) carry the version that wrote them.

Rule: an object loads in the version of smallvis that wrote it and in any version with the same
major and minor number (``0.1.x``); anything else is refused with a message that says which version
wrote it. Within a minor series the pickled state (plain arrays and settings, no compiled code) keeps
its meaning; across series it may not, and a silently different object is worse than an error.
"""

from __future__ import annotations

from .._version import __version__

VERSION_KEY = "_smallvis_version"


def series(version: str) -> tuple[str, ...]:
    return tuple(str(version).split(".")[:2])


def check_saved_version(saved, what: str) -> None:
    """Refuse a pickled ``what`` written by an incompatible version (``saved``: its version or None)."""
    if saved is None:
        raise ValueError(f"this {what} was pickled without a smallvis version (not written by "
                         f"smallvis {__version__} or a compatible version); refit it")
    if series(saved) != series(__version__):
        major_minor = ".".join(series(__version__))
        raise ValueError(f"this {what} was saved by smallvis {saved}; this is smallvis "
                         f"{__version__}, which loads only what {major_minor}.x saved. Refit it, "
                         f"or load it with smallvis=={saved}")


def stamped(state: dict) -> dict:
    """``state`` with the current version added (for ``__getstate__``)."""
    return {**state, VERSION_KEY: __version__}


def unstamped(state: dict, what: str) -> dict:
    """``state`` checked and without its version (for ``__setstate__``)."""
    state = dict(state)
    check_saved_version(state.pop(VERSION_KEY, None), what)
    return state
