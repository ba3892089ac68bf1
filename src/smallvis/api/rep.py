"""Best of several random starts (``smallvis_rep``; docs/original.md#repeated-starts)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util.log import logger, verbose_logging
from .._util.parallel import limit_threads, resolve_jobs, worker_threads


def smallvis_rep(X, nrep: int = 10, keep_all: bool = False, *, n_jobs: int = 1, **kwargs):
    """Run :func:`smallvis.smallvis` ``nrep`` times from random starts and keep the lowest final cost.

    Every repeat uses ``Y_init="rand"`` and its own child of ``random_state``
    (``numpy.random.SeedSequence.spawn``), so the repeats and the choice do not depend on
    ``n_jobs``. The final cost of a run is the last entry of its ``itercosts``.

    Parameters
    ----------
    X : array-like
        As for :func:`smallvis.smallvis`.
    nrep : int
        Number of repeats (at least 1).
    keep_all : bool
        False: return the best run. True: return every run, in order.
    n_jobs : int
        Repeats run at once in separate processes (-1: one per CPU). The arguments must then be
        picklable (no lambda callbacks).
    **kwargs
        Any :func:`smallvis.smallvis` parameter; ``Y_init`` is ignored (always ``"rand"``).

    Returns
    -------
    Without ``ret_extra``: the best run's coordinates, or (``keep_all``) a list of every run's
    coordinates. With ``ret_extra``: the best :class:`SmallVisResult` with ``all_costs`` (the final
    cost of every repeat), or (``keep_all``) the list of every result, each with ``all_costs`` and
    ``best_rep`` (the 0-based index of the lowest cost; the first wins ties).
    """
    if isinstance(nrep, bool) or int(nrep) != nrep or nrep < 1:
        raise ValueError(f"nrep must be a whole number >= 1; got {nrep!r}")
    nrep = int(nrep)
    jobs = resolve_jobs(n_jobs, nrep)
    given = kwargs.get("Y_init")
    if given is not None and not (isinstance(given, str) and given.lower() == "rand"):
        warnings.warn("smallvis_rep always starts from Y_init='rand'; the Y_init given is ignored",
                      UserWarning, stacklevel=2)
    kwargs["Y_init"] = "rand"
    want_extra = kwargs.get("ret_extra", False) not in (False, None)
    if not want_extra:
        kwargs["ret_extra"] = True
    seeds = _child_seeds(kwargs.pop("random_state", None), nrep)

    with verbose_logging(kwargs.get("verbose", False)):
        results = _run_all(X, kwargs, seeds, jobs)
    all_costs = np.array([_final_cost(res) for res in results])
    best = int(np.argmin(np.where(np.isnan(all_costs), np.inf, all_costs)))
    with verbose_logging(kwargs.get("verbose", False)):
        logger.info("Best of %d repeats: #%d (final cost %.6g; range %.6g to %.6g)", nrep, best + 1,
                    all_costs[best], np.nanmin(all_costs), np.nanmax(all_costs))
    if not keep_all:
        res = results[best]
        if not want_extra:
            return res.Y
        res.extras["all_costs"] = all_costs
        return res
    if not want_extra:
        return [res.Y for res in results]
    for res in results:
        res.extras["all_costs"] = all_costs
        res.extras["best_rep"] = best
    return results


def _child_seeds(random_state, nrep: int) -> list:
    """One independent seed per repeat, derived from ``random_state`` (an int, a Generator or None)."""
    if isinstance(random_state, np.random.Generator):
        random_state = int(random_state.integers(2**63))
    if random_state is not None and not isinstance(random_state, (int, np.integer)):
        raise ValueError(f"random_state must be an int, a numpy Generator or None; "
                         f"got {random_state!r}")
    return np.random.SeedSequence(random_state).spawn(nrep)


def _one_run(X, kwargs: dict, seed, index: int, nrep: int):
    from .embed import smallvis

    logger.info("Starting embedding # %d of %d", index + 1, nrep)
    return smallvis(X, random_state=np.random.default_rng(seed), **kwargs)


def _run_all(X, kwargs: dict, seeds: list, jobs: int) -> list:
    nrep = len(seeds)
    if jobs == 1:
        return [_one_run(X, kwargs, seed, i, nrep) for i, seed in enumerate(seeds)]
    import multiprocessing
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    try:
        pickle.dumps(kwargs)
    except Exception as err:
        raise ValueError(f"with n_jobs > 1 every argument must be picklable (e.g. no lambda "
                         f"epoch_callback): {err}") from None
    context = multiprocessing.get_context("spawn")  # safe with numba's threads in the parent
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=limit_threads,
                             initargs=(worker_threads(jobs),)) as pool:
        futures = [pool.submit(_one_run, X, kwargs, seed, i, nrep) for i, seed in enumerate(seeds)]
        return [f.result() for f in futures]


def _final_cost(res) -> float:
    if res.itercosts:
        return float(list(res.itercosts.values())[-1])
    return math.nan
