"""The library's logger. No handlers are attached unless the caller asks for ``verbose=True``."""

from __future__ import annotations

import contextlib
import logging
import sys

logger = logging.getLogger("smallvis")
logger.addHandler(logging.NullHandler())


@contextlib.contextmanager
def verbose_logging(verbose: bool):
    """Show INFO messages of ``smallvis`` on stderr for the duration of a call when ``verbose``.

    Nothing is attached if the application has configured the logger itself (it has a real handler
    or a level), so library users keep control of where messages go.
    """
    configured = any(not isinstance(h, logging.NullHandler) for h in logger.handlers)
    if not verbose or configured:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
