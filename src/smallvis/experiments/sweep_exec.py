"""Where the runs of a sweep execute: this process, spawned processes, or a Dask cluster.

Each backend yields ``(run, outcome)`` as runs finish; an outcome is plain data (:func:`run_one`), so
the caller (one process) writes every file. Every run gets its seed as ``random_state``, so where it
ran does not change its coordinates.
"""

from __future__ import annotations

import os
import socket
import time

import numpy as np

from .._util.parallel import limit_threads, worker_threads
from ..run.driver import EXPLODING
from ..metrics import METRIC_K, compute_metrics

# the columns of results.csv: cheap enough to compute after every run
SWEEP_METRICS = ("knn_preservation", "trustworthiness")


def run_spec(run) -> dict:
    """What a worker needs to know of a :class:`~smallvis.experiments.sweep_grid.Run` (plain, picklable)."""
    return {"id": run.id, "kwargs": run.kwargs(), "seed": run.seed}


def run_one(X, spec: dict) -> dict:
    """One run: ``smallvis(X, random_state=seed, **kwargs)`` and its metrics, as plain data.

    A top-level function, so that process pools and Dask workers can import it. An exception in the
    run is returned as ``status="error"`` with its message, not raised (a KeyboardInterrupt is).
    """
    from .. import api

    start = time.perf_counter()
    where = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        res = api.smallvis(X, ret_extra=True, random_state=spec["seed"], **spec["kwargs"])
        Y = np.asarray(res.Y)
        finite = bool(np.isfinite(Y).all())
        exploded = finite and Y.size > 0 and float(np.abs(Y).max()) > EXPLODING
        # a diverged run's last finite coordinates may be too large for distances: no metrics
        usable = finite and not exploded and not res.diverged
        metrics = (compute_metrics(X, Y, METRIC_K, which=SWEEP_METRICS) if usable
                   else {"k": METRIC_K})
    except Exception as err:  # noqa: BLE001 - recorded, the sweep goes on
        message = " ".join(str(err).split()) or type(err).__name__
        return {"status": "error", "error": f"{type(err).__name__}: {message}",
                "wall_secs": time.perf_counter() - start, **where}
    result = res.to_dict()
    for bulky in ("Y", "costs", "itercosts", "metrics"):
        result.pop(bulky, None)
    diverged = res.diverged or not finite or exploded
    why = (f"the coordinates grew beyond {EXPLODING:.0e} (step size too large)" if exploded
           else "the optimisation diverged")
    return {"status": "diverged" if diverged else "ok",
            "error": why if diverged else None, "Y": Y,
            "final_cost": res.cost, "iter": res.iter, "time_secs": res.time_secs,
            "wall_secs": time.perf_counter() - start, "metrics": metrics,
            "itercosts": res.itercosts, "result": result, **where}


def _failure(err: BaseException) -> dict:
    """The outcome of a run whose worker failed (rather than the run itself)."""
    message = " ".join(str(err).split()) or type(err).__name__
    if type(err).__name__ == "BrokenProcessPool":
        message += (" (killed, out of memory, or could not start: in a script, call sweep() under "
                    "'if __name__ == \"__main__\":')")
    return {"status": "error", "error": f"{type(err).__name__}: {message} (the worker failed)"}


_WORKER_X = None


def _pool_init(data_path: str, threads: int, parent_pid: int) -> None:
    """Tie the worker's life to the sweep's, load the data once and take a share of the CPUs."""
    global _WORKER_X
    from .._util.pool_safety import die_with_parent

    die_with_parent(parent_pid)
    _WORKER_X = np.load(data_path)
    limit_threads(threads)


def _pool_task(spec: dict) -> dict:
    return run_one(_WORKER_X, spec)


def run_pool(X, runs, n_jobs: int, scratch=None):
    """Runs on ``n_jobs`` spawned processes, yielded as they finish.

    The data reach the workers through a file (see :func:`~smallvis._util.pool_safety.shared_array`:
    unnamed on Linux, else hidden in ``scratch`` and removed at the end), not through the pipe that
    starts them: a worker that dies while starting (a script without an
    ``if __name__ == "__main__":`` guard) then breaks the pool instead of blocking it. The workers
    die with this process, and leaving early (an error, Ctrl-C, SIGTERM turned into an exception)
    kills them rather than letting their runs finish.
    """
    if not runs:
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from .._util.pool_safety import shared_array, terminate_workers

    n_jobs = min(n_jobs, len(runs))
    threads = worker_threads(n_jobs)
    with shared_array(X, scratch) as data_path:
        pool = ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_pool_init,
                                   initargs=(data_path, threads, os.getpid()))
        try:
            futures = {pool.submit(_pool_task, run_spec(run)): run for run in runs}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as err:  # noqa: BLE001 - e.g. a worker process killed
                    outcome = _failure(err)
                yield futures[future], outcome
        except BaseException:
            terminate_workers(pool)
            raise
        pool.shutdown(wait=True)


def connect(scheduler, timeout: float):
    """(client, whether we own it) for ``scheduler``; (None, False) without one."""
    if scheduler is None:
        return None, False
    try:
        from distributed import Client
    except ImportError:
        raise ImportError("sweeps on a Dask cluster need dask.distributed: "
                          "pip install 'smallvis[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786' or a "
                         f"distributed.Client; got {scheduler!r}")
    if isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"the connection timeout must be a positive number of seconds; got {timeout!r}")
    _check_address(scheduler)
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except ValueError as err:  # e.g. an unknown address scheme
        raise ValueError(f"Dask scheduler address {scheduler!r}: {err}") from None
    except OSError as err:  # refused, unreachable, or no answer within the timeout
        raise ConnectionError(f"no Dask scheduler answered at {scheduler} within {timeout:g} s "
                              f"({' '.join(str(err).split())}); nothing was written") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as err:
        client.close()
        raise ConnectionError(f"the Dask scheduler at {scheduler} has no workers (waited "
                              f"{timeout:g} s); nothing was written") from err
    return client, True


def _check_address(scheduler: str) -> None:
    """Refuse a malformed address before a ``Client`` exists: one that fails in its constructor
    cannot be closed, and its finaliser then hangs the exit for 20 s and prints a traceback."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(scheduler.strip())
        get_backend(scheme)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as err:
        message = " ".join(str(err).split())
        raise ValueError(f"Dask scheduler address {scheduler!r}: {message} (expected e.g. "
                         "tcp://host:8786)") from None


def address(client) -> str:
    return getattr(client.scheduler, "address", None) or str(client)


def run_dask(client, X, runs):
    """Runs as Dask tasks (the data scattered once to every worker), yielded as they finish."""
    if not runs:
        return
    from distributed import as_completed

    data = client.scatter(X, broadcast=True, hash=False)
    futures = {client.submit(run_one, data, run_spec(run), pure=False): run for run in runs}
    try:
        for future in as_completed(futures, loop=client.loop):
            try:
                outcome = future.result()
            except Exception as err:  # noqa: BLE001 - e.g. KilledWorker, smallvis missing there
                outcome = _failure(err)
            yield futures[future], outcome
    finally:
        client.cancel([f for f in futures if not f.done()])
