"""Local process pools shared by ``smallvis_rep`` and sweeps: how many workers, and their threads."""

from __future__ import annotations

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
