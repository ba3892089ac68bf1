"""numba's ``njit`` with the on-disk cache when a cache folder is writable, and without it otherwise.

With ``cache=True`` numba stores compiled kernels next to the source (``__pycache__``), in
``NUMBA_CACHE_DIR`` or in the user's cache folder. Where none of them is writable (a read-only
install, a locked-down container) numba either refuses to decorate or fails when it saves the first
compilation. Here such a function is compiled in memory instead (once per process), and the user is
told once how to keep the compilations.
"""

from __future__ import annotations

from numba import njit as _numba_njit

from ._logging import logger

_told = []


def _cache_writable(dispatcher) -> bool:
    """Whether numba can save this dispatcher's compilations (its cache folder is writable)."""
    try:
        locator = dispatcher._cache._impl.locator
    except AttributeError:  # numba internals moved: trust numba
        return True
    try:
        locator.ensure_cache_path()
    except OSError:
        return False
    return True


def _tell(func, why) -> None:
    if not _told:
        _told.append(True)
        logger.info("numba cannot cache %s (%s): compiling in memory for this session; set "
                    "NUMBA_CACHE_DIR to a writable folder to keep compiled kernels",
                    func.__qualname__, why)


def njit(*args, **options):
    """``numba.njit`` (same arguments) that falls back to ``cache=False`` when caching is impossible."""
    if args and callable(args[0]) and len(args) == 1:
        return njit(**options)(args[0])

    def decorate(func):
        if not options.get("cache"):
            return _numba_njit(*args, **options)(func)
        try:
            dispatcher = _numba_njit(*args, **options)(func)
        except RuntimeError as err:  # "cannot cache function ...: no locator available"
            _tell(func, err)
        else:
            if _cache_writable(dispatcher):
                return dispatcher
            _tell(func, "the cache folder is not writable")
        return _numba_njit(*args, **{**options, "cache": False})(func)

    return decorate
