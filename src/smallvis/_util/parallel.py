"""Local process pools shared by ``smallvis_rep`` and sweeps: how many workers, and their threads."""

from __future__ import annotations

import contextlib
import contextvars
import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def resolve_jobs(n_jobs, n_tasks: int | None = None) -> int:
    """``n_jobs`` as scikit-learn reads it (a positive whole number, or -1 for one per CPU), capped at
    the number of tasks."""
    try:
        ok = not isinstance(n_jobs, bool) and int(n_jobs) == n_jobs and (n_jobs >= 1 or n_jobs == -1)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"n_jobs must be a positive whole number or -1 (one per CPU); "
                         f"got {n_jobs!r}")
    jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    return max(1, jobs if n_tasks is None else min(jobs, n_tasks))


def limit_threads(threads: int) -> None:
    """In a pool worker: share the CPUs among the workers (each would otherwise use all of them).
    Libraries loaded later read the variables; those loaded already are told through threadpoolctl."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:  # pragma: no cover - scikit-learn depends on it
        pass


def worker_threads(n_jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // n_jobs)


# -- numba threads of one run ------------------------------------------------------------------------
# A run's numba kernels launch a parallel region per call, several per iteration. Each launch wakes
# the worker threads and waits for the slowest: on a quiet machine that costs microseconds, but when
# other processes hold the cores a worker may wait a whole scheduler time slice to run, every launch
# (issue 17: a 50-point, 700-iteration exact run took 0.06 s on 1 thread and 13-23 s on 2). So a run
# uses threads only when each launch has enough work to pay for them. Serial and threaded runs give
# the same bits: every kernel cuts its work into a fixed number of chunks, whatever the thread count.

# pair (or edge) evaluations per kernel call below which a run is serial: ~0.2 ms of work, a few
# times a launch on a quiet machine
SERIAL_BELOW = 250_000

# the current run's thread settings (per Python thread, as numba's own thread count is)
_RUN = contextvars.ContextVar("smallvis_run_threads", default=None)


def check_threads(n_threads) -> int:
    """``n_threads`` as a whole number >= 0 (0: numba's default), or a ValueError naming it."""
    try:
        ok = not isinstance(n_threads, bool) and int(n_threads) == n_threads and n_threads >= 0
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"n_threads must be a whole number >= 0 (0: all the threads numba may use, "
                         f"NUMBA_NUM_THREADS); got {n_threads!r}")
    return int(n_threads)


@contextlib.contextmanager
def run_threads(n_threads):
    """Scope of one run: ``n_threads`` numba threads (0: numba's current setting, by default all of
    ``NUMBA_NUM_THREADS``), fewer when the engine's work is too small to pay for them (see
    :func:`fit_threads`). numba's thread count is restored on the way out. numba is imported only to
    check a count other than 0, or by :func:`fit_threads`."""
    requested = check_threads(n_threads)
    state = {"requested": requested, "restore": None}
    if requested:
        _numba_threads(requested)  # an impossible count fails before any work
    token = _RUN.set(state)
    try:
        yield
    finally:
        _RUN.reset(token)
        if state["restore"] is not None:
            import numba

            numba.set_num_threads(state["restore"])


def fit_threads(work: float) -> int | None:
    """Called by an engine before its kernels run, with the pair (or edge) evaluations of one kernel
    call: set numba's thread count for the rest of the run (1 below :data:`SERIAL_BELOW`, else the
    run's ``n_threads``) and return it. Outside :func:`run_threads` (an engine used on its own) it
    changes nothing and returns None."""
    state = _RUN.get()
    if state is None:
        return None
    import numba

    if state["restore"] is None:  # the run's first call
        quiet_openmp()  # before anything starts numba's threads
        state["restore"] = numba.get_num_threads()
        state["wanted"] = state["requested"] or state["restore"]
    threads = 1 if work < SERIAL_BELOW else state["wanted"]
    numba.set_num_threads(threads)
    return threads


def _numba_threads(requested: int) -> int:
    from numba import config

    most = config.NUMBA_NUM_THREADS
    if requested > most:
        raise ValueError(f"n_threads={requested} is more than the {most} threads numba was started "
                         f"with (NUMBA_NUM_THREADS={most}); set NUMBA_NUM_THREADS before starting "
                         "Python to allow more")
    return requested


def quiet_openmp() -> bool:
    """Before numba starts its threads: make GNU OpenMP (numba's "omp" layer, picked when TBB is
    missing) wait for work asleep instead of spinning. Returns whether it set anything.

    libgomp's workers spin between parallel regions by default (``OMP_WAIT_POLICY`` unset). With one
    region per kernel call, a few per iteration, they spin most of the time; when other processes
    hold the cores the spinning takes the CPU the work needs: digits, 200 exact iterations, 2 threads
    under a load of 12 on 2 cores took 13.3 s wall and 7.1 s CPU, against 2.5 s and 1.5 s with
    passive waiting (and 2.9 s on 1 thread); TBB and numba's workqueue wait without spinning. Only
    when the user set neither ``OMP_WAIT_POLICY`` nor ``GOMP_SPINCOUNT`` nor numba's threading layer,
    and before numba loads its layer (libgomp reads the variable when it is loaded); the layer itself
    is left to numba (workqueue is not safe with runs in several Python threads)."""
    if any(os.environ.get(name) for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        return False
    import numba

    if str(numba.config.THREADING_LAYER).lower() not in ("default", "omp"):
        return False
    try:
        from numba.np.ufunc import parallel

        if parallel._is_initialized:  # too late: the layer (and libgomp) is loaded
            return False
    except (ImportError, AttributeError):  # numba internals moved: try anyway
        pass
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True
