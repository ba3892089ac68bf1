"""Local process pools that leave nothing behind when their parent is killed.

A sweep with ``--jobs N`` starts N worker processes of a few hundred MB each. When the parent dies
(SIGKILL from a time limit, SIGTERM from SLURM or ``docker stop``), Python's pool does nothing for
them: they finish their runs, keep the parent's output open and waste the machine. Three pieces fix
that:

- :func:`die_with_parent`, called first in every worker, asks Linux to kill the worker when its
  parent dies (``PR_SET_PDEATHSIG``), and elsewhere (or as a backstop) starts a thread that exits
  the worker once its parent pid changes;
- :func:`terminate_workers` kills the workers of a pool at once (``shutdown`` alone lets running
  tasks finish);
- :func:`shared_array` hands the input to the workers without a named temporary file: a killed
  parent cannot remove one, so the data stayed in the temp folder. On Linux the file has no name
  from the start (workers open the parent's descriptor through ``/proc``); elsewhere it is a hidden
  file in a folder the caller owns (the sweep's output folder), removed at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path

_PR_SET_PDEATHSIG = 1
WATCH_INTERVAL = 0.5  # seconds between the backstop thread's looks at the parent pid


def die_with_parent(parent_pid: int) -> None:
    """Make this process exit when ``parent_pid`` (the process that started it) dies."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the thread below
            pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
    watcher = threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                               name="smallvis-parent-watch")
    watcher.start()


def _watch_parent(parent_pid: int) -> None:
    """Backstop for systems without PR_SET_PDEATHSIG: exit once the parent is gone (the worker is
    then adopted by another process, so its parent pid changes)."""
    import time

    while os.getppid() == parent_pid:
        time.sleep(WATCH_INTERVAL)
    os._exit(1)


def terminate_workers(pool) -> None:
    """Stop a ``ProcessPoolExecutor`` now: pending tasks cancelled, running workers killed."""
    stop = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if stop is not None:
        with contextlib.suppress(Exception):
            stop()
        return
    # shutdown() forgets the processes, so take them first
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(5)


@contextlib.contextmanager
def shared_array(X, scratch: Path | None = None):
    """Save ``X`` as ``.npy`` where the workers can load it; yields the path they open.

    On Linux: an unnamed temporary file (nothing to clean up, whatever kills us), opened by the
    workers as ``/proc/<our pid>/fd/<n>``. Elsewhere: a hidden file in ``scratch`` (default: the
    temp folder), removed on the way out.
    """
    import numpy as np

    if Path(f"/proc/{os.getpid()}/fd").is_dir():
        with tempfile.TemporaryFile(prefix="smallvis-sweep-", suffix=".npy") as fh:
            np.save(fh, X)
            fh.flush()
            yield f"/proc/{os.getpid()}/fd/{fh.fileno()}"
        return
    fd, path = tempfile.mkstemp(prefix=".smallvis-input-", suffix=".npy",
                                dir=None if scratch is None else str(scratch))
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, X)
        yield path
    finally:
        Path(path).unlink(missing_ok=True)
