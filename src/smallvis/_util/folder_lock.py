"""One sweep at a time per output folder.

Two sweeps writing one folder (say with different grids) both "succeed" and leave a table that
matches neither grid. A sweep therefore holds ``FOLDER/.sweep.lock`` while it runs: a file holding
its pid, host and command, locked with ``fcntl.flock``. The kernel drops the lock when the process
dies however it dies, so a lock file left by a killed sweep is simply taken over; where ``flock``
does not exist the file is created with ``O_EXCL`` and a file naming a dead pid on this host counts
as stale.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path

LOCK_NAME = ".sweep.lock"


class FolderBusy(ValueError):
    """Another live process holds the folder."""


def _owner_text() -> str:
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                       "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                       "command": " ".join(sys.argv)[:500]}) + "\n"


def _describe(path: Path) -> str:
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
        return (f"process {owner['pid']} on {owner['host']}, started {owner['started']}: "
                f"{owner['command']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _busy(folder: Path, path: Path) -> FolderBusy:
    return FolderBusy(f"sweep output {folder} is in use by another sweep ({_describe(path)}): "
                      f"wait for it to finish or choose another output folder (lock file {path})")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class FolderLock:
    """Hold ``folder``'s lock (the folder must exist); :meth:`release` gives it back."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd = None
        try:
            import fcntl  # noqa: F401
        except ImportError:  # pragma: no cover - Windows
            self._acquire_exclusive()
        else:
            self._acquire_flock()

    def _acquire_flock(self) -> None:
        import fcntl

        for _ in range(10):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise _busy(self.folder, self.path) from None
            try:  # the holder may have removed the file between our open and our lock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, _owner_text().encode())
                self._fd = fd
                return
            os.close(fd)
        raise _busy(self.folder, self.path)

    def _acquire_exclusive(self) -> None:  # pragma: no cover - Windows
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    owner = json.loads(self.path.read_text(encoding="utf-8"))
                    stale = owner["host"] == socket.gethostname() and not _alive(int(owner["pid"]))
                except (OSError, ValueError, KeyError, TypeError):
                    stale = False
                if not stale:
                    raise _busy(self.folder, self.path) from None
                self.path.unlink(missing_ok=True)
                continue
            os.write(fd, _owner_text().encode())
            os.close(fd)
            return
        raise _busy(self.folder, self.path)

    def release(self) -> None:
        """Remove the lock file, then unlock (in that order, so no one locks a removed file)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
