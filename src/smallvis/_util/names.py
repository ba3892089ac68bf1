"""Name matching shared by every registry: case-insensitive, unique prefix, as R's ``match.arg``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class InvalidNameError(ValueError):
    """A name (method, optimiser, init, scale mode, kernel, ...) that matches nothing or is ambiguous."""


def match_name(value: str, choices: Iterable[str], what: str) -> str:
    """Return the entry of ``choices`` that ``value`` names.

    A name matches exactly (ignoring case) or as a unique prefix, so ``"lap"`` finds ``"laplacian"``.
    An exact match wins over prefixes (``"tsne"`` is not ambiguous with ``"tsneu"``).

    Raises
    ------
    InvalidNameError
        Naming ``what`` the value is for, listing the valid names and suggesting the closest one.
    """
    choices = list(choices)
    if not isinstance(value, str):
        raise InvalidNameError(
            f"{what} must be a string naming one of: {', '.join(choices)}; got {value!r}"
        )
    key = value.strip().lower()
    lowered = {c.lower(): c for c in choices}
    if key in lowered:
        return lowered[key]
    hits = [c for c in choices if c.lower().startswith(key)] if key else []
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise InvalidNameError(
            f"{what} {value!r} is ambiguous: it could be any of {', '.join(hits)}"
        )
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=0.5)
    hint = f" Did you mean {lowered[close[0]]!r}?" if close else ""
    raise InvalidNameError(
        f"unknown {what} {value!r}.{hint} Valid names: {', '.join(choices)}"
    )
