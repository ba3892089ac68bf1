"""One process at a time reads or writes a numba cache folder's index and data files.

numba saves a new compilation by reading the kernel's index file, taking the first data-file number
not in it, writing the index, then the data file. Two processes that compile two signatures of one
kernel at the same moment (the workers of a parallel sweep, two notebooks on a fresh install, test
workers) can both take the same number: the index then names machine code compiled for the other
signature, and a later load runs it on the wrong argument types (numba issues 4807 and 10128). Each
cached kernel of this package therefore saves and loads under an exclusive ``flock`` on
``.smallvis-numba.lock`` in its cache folder. The lock is the kernel's only: other numba code in
the process is untouched. Where ``fcntl`` does not exist (Windows) or the lock file cannot be
opened, numba's own behaviour is kept.
"""

from __future__ import annotations

import contextlib
import functools
import os

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

LOCK_NAME = ".smallvis-numba.lock"


@contextlib.contextmanager
def folder_lock(folder: str):
    """Hold an exclusive lock on ``folder``'s :data:`LOCK_NAME` (nothing where none can be had)."""
    if fcntl is None:
        yield
        return
    try:
        handle = open(os.path.join(folder, LOCK_NAME), "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def lock_cache_files(dispatcher):
    """Make ``dispatcher``'s cache saves and loads hold its cache folder's lock; returns it.
    A dispatcher without a disk cache, or numba internals that moved, are left as they are."""
    try:
        files = dispatcher._cache._cache_file
        folder = files._cache_path
        save, load = files.save, files.load
    except AttributeError:
        return dispatcher
    if getattr(save, "_folder_locked", False):
        return dispatcher

    def locked(method):
        @functools.wraps(method)
        def call(*args, **kwargs):
            with folder_lock(folder):
                return method(*args, **kwargs)
        call._folder_locked = True
        return call

    files.save, files.load = locked(save), locked(load)
    return dispatcher
