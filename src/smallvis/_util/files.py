"""Files the command line and sweeps write: atomically, and as plain JSON."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path


def check_output_folder(path, what: str) -> Path:
    """Raise ``ValueError`` naming ``what`` (e.g. ``"a plot"``) unless ``path``'s folder exists, is
    a folder and is writable: checked before a long run, not after it. Returns ``Path(path)``."""
    path = Path(path)
    folder = path.parent
    if not folder.exists():
        raise ValueError(f"cannot write {what} to {path}: folder {folder} does not exist")
    if not folder.is_dir():
        raise ValueError(f"cannot write {what} to {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {what} to {path}: folder {folder} is not writable")
    if path.is_dir():
        raise ValueError(f"cannot write {what} to {path}: it is a folder")
    return path


def atomic_write(path: Path, write, binary: bool = False, exclusive: bool = False) -> None:
    """Write through a temporary file in the same folder, then publish it as ``path`` at once.

    ``exclusive``: publish by hard-linking, which fails if ``path`` exists by then, so a file that
    appeared while we computed (another run given the same ``--out``) is never overwritten; raises
    ``FileExistsError``. Where hard links are not supported, ``path`` is reserved with ``O_EXCL``
    and then replaced.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"newline": ""})) as fh:
            write(fh)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if exclusive:
            _publish_exclusive(tmp, path)
        else:
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _publish_exclusive(tmp: str, path: Path) -> None:
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.replace(tmp, path)
    else:
        Path(tmp).unlink(missing_ok=True)


def jsonable(value):
    """Plain JSON data: numpy scalars/arrays to Python, tuples to lists, non-finite floats to None."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
