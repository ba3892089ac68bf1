import contextlib
import functools
import os

try:
    import fcntl
except ImportError:  # not POSIX: no lock (numba's own behaviour)
    fcntl = None

import pytest
from sklearn.datasets import load_iris

from smallvis.io.preprocess import pca_scores


@contextlib.contextmanager
def _cache_folder_lock(folder):
    """An exclusive lock on ``folder``'s lock file, held by one process at a time (none when the
    folder cannot hold one: then numba's own behaviour is kept)."""
    if fcntl is None:
        yield
        return
    try:
        handle = open(os.path.join(folder, ".smallvis-tests.lock"), "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lock_numba_cache_files():
    """Make numba's saves and loads of a cache index and its data atomic across processes.

    The suite runs in two pytest-xdist workers that share numba's cache folder. numba saves a new
    compilation by reading the kernel's index, picking the first free data-file number, writing the
    index, then the data file; two workers saving two signatures of one kernel at the same moment
    can both pick the same number, and the index then names data compiled for the other signature
    (numba issue 4807). One lock per cache folder around each save and load rules that out."""
    try:
        from numba.core.caching import IndexDataCacheFile
        save, load = IndexDataCacheFile.save, IndexDataCacheFile.load
    except (ImportError, AttributeError):  # numba internals moved: keep numba's behaviour
        return

    def locked(method):
        @functools.wraps(method)
        def call(self, *args):
            with _cache_folder_lock(self._cache_path):
                return method(self, *args)
        return call

    if not getattr(save, "_smallvis_locked", False):
        IndexDataCacheFile.save, IndexDataCacheFile.load = locked(save), locked(load)
        IndexDataCacheFile.save._smallvis_locked = True


_lock_numba_cache_files()


@pytest.fixture(scope="session")
def iris():
    return load_iris().data


@pytest.fixture(scope="session")
def iris10(iris):
    """Numeric columns of R's iris[1:10, ]."""
    return iris[:10].copy()


@pytest.fixture(scope="session")
def iris10_Y(iris10):
    """PCA scores of raw iris10 (the original's test init)."""
    return pca_scores(iris10, 2)


@pytest.fixture(scope="session")
def ui10(iris):
    """Rows 6-15 of unique(iris): iris rows 6-15 (no ties among neighbours)."""
    return iris[5:15].copy()
