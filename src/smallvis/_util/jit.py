"""numba's ``njit`` with the on-disk cache when a cache folder is writable, and without it otherwise.

With ``cache=True`` numba stores compiled kernels next to the source (``__pycache__``), in
``NUMBA_CACHE_DIR`` or in the user's cache folder. Where none of them is writable (a read-only
install, a locked-down container) numba either refuses to decorate or fails when it saves the first
compilation. Here such a function is compiled in memory instead (once per process), and the user is
told once how to keep the compilations.

No fastmath, ever: a ``fastmath`` option is dropped here. The flags let LLVM pick the order of
a sum (``reassoc``), fuse a multiply and an add (``contract``), use reciprocals (``arcp``), ignore
the sign of zero (``nsz``), approximate functions (``afn``): the result then depends on how the
optimiser happened to see the code, and numba optimises the *same* kernel more than once. A kernel
called from another is compiled on its own and also linked, as a weak ``linkonce_odr`` copy, into
each caller's module, where it is optimised again; at run time the first copy loaded into the
process serves every call. After a fresh compilation that is the callee's own copy; after a load
from the disk cache (which stores only the caller's object code) it is the caller's copy. With
fastmath the two copies vectorised a reduction differently, so a run whose kernels were just
compiled (the first run, a read-only install) differed in the last bits from one that loaded them
from the cache, and diverged to ~1 % of the coordinates after 200 iterations (issue 17). Without
fastmath every copy computes the IEEE result of the source's order of operations: the same bits
whichever copy runs. Kernels that need vector speed in a sum spell out independent partial sums.

Processes sharing a cache folder save and load its files one at a time (:mod:`.cache_lock`); a
cached kernel is compiled again when any kernel source of the package changes (:mod:`.cache_stamp`).
"""

from __future__ import annotations

from numba import njit as _numba_njit

from .cache_lock import lock_cache_files
from .cache_stamp import stamp_with_kernel_sources
from .log import logger

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
    """``numba.njit`` (same arguments) that falls back to ``cache=False`` when caching is impossible
    and ignores ``fastmath`` (see the module docstring: results must not depend on the cache)."""
    options.pop("fastmath", None)
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
                return lock_cache_files(stamp_with_kernel_sources(dispatcher))
            _tell(func, "the cache folder is not writable")
        return _numba_njit(*args, **{**options, "cache": False})(func)

    return decorate
