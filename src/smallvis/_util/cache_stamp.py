"""A cached kernel is compiled again when any kernel source of the package changes, not only its own.

numba stamps a kernel's disk cache with its own source file's modification time and size. The
machine code it stores also holds the jitted functions the kernel calls, from whatever file, and the
constants it reads from other modules: edit one of those (a ``git pull``, a checkout of another
commit, an editable install) and the caller's cache, its own file unchanged, still runs the old
callee, silently giving the old numbers. Here each cached kernel's stamp also carries a digest of
the text of every module of the package that holds jitted code (the files that mention ``njit``),
so that a change to any of them compiles every cached kernel again, once. The digest is computed
once per process, when the first cached kernel is decorated (about 5 ms).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def sources_digest(root: Path) -> str:
    """Digest of the path and text of every ``*.py`` under ``root`` that mentions ``njit`` ("" when
    the files cannot be read, e.g. from a zip archive: numba's own stamp alone then)."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        for path in sorted(root.rglob("*.py")):
            text = path.read_bytes()
            if b"njit" in text:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    except OSError:
        return ""
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def kernel_sources_digest() -> str:
    """:func:`sources_digest` of this package, once per process."""
    return sources_digest(PACKAGE)


def stamp_with_kernel_sources(dispatcher):
    """Make ``dispatcher``'s cache index valid only for today's kernel sources; returns it. A
    dispatcher without a disk cache, or numba internals that moved, are left as they are."""
    try:
        files = dispatcher._cache._cache_file
        stamp = files._source_stamp
    except AttributeError:
        return dispatcher
    digest = kernel_sources_digest()
    if digest and not getattr(files, "_smallvis_stamped", False):
        files._source_stamp = (stamp, digest)
        files._smallvis_stamped = True
    return dispatcher
