"""Perplexity stepping (docs/original.md#perplexity-stepping): start at a large perplexity and halve
it towards the target, each step starting from the previous step's coordinates (the NeRV/JSE
annealing)."""

from __future__ import annotations

import math

import numpy as np

from .._util.log import logger, verbose_logging
from .._util.rng import as_generator

# what every step run sets; the final run keeps them unless the caller gave them (the original's
# behaviour: e.g. tol = 0 and epoch = the step length carry over into the final run)
_STEP_SETTINGS = ("tol", "epoch", "exaggeration_factor", "ret_extra")


def step_perplexities(n: int, target: float) -> list[float]:
    """``m, m/2, m/4, ...`` while above ``target``, with ``m = 2^floor(log2(n/2))`` (empty when
    ``m <= target``)."""
    m = 2.0 ** math.floor(math.log2(n / 2.0))
    perps = []
    while m > target:
        perps.append(m)
        m /= 2.0
    return perps


def smallvis_perpstep(X, step_iter: int = 250, **kwargs):
    """:func:`smallvis.smallvis` with perplexity stepping.

    The first ``step_iter`` iterations are shared evenly by the step perplexities
    (:func:`step_perplexities`: powers of two from about ``n/2`` down to just above the target
    ``perplexity``, default 30), each run with ``tol = 0``, ``epoch`` = its length, no exaggeration and
    starting from the previous step's result; then ``max_iter - step_iter`` iterations run at the
    target perplexity. As in the original, ``tol``, ``epoch``, ``exaggeration_factor`` and
    ``ret_extra`` of the final run are the step values unless given, and ``Y_init_sdev`` is applied
    at every stage. Unlike the original, when no step perplexity exceeds the target this is a plain
    ``smallvis()`` run with all ``max_iter`` iterations instead of an error.

    Parameters
    ----------
    X : array-like
        As for :func:`smallvis.smallvis`.
    step_iter : int
        Iterations spent on the step perplexities (must be below ``max_iter``, default 1000).
    **kwargs
        Any :func:`smallvis.smallvis` parameter.
    """
    from .embed import smallvis
    from ..io.preprocess import as_numeric_matrix

    max_iter = kwargs.pop("max_iter", None)
    max_iter = 1000 if max_iter is None else max_iter
    if isinstance(step_iter, bool) or int(step_iter) != step_iter or step_iter < 0:
        raise ValueError(f"step_iter must be a whole number >= 0; got {step_iter!r}")
    if max_iter <= step_iter:
        raise ValueError(f"max_iter ({max_iter}) must be greater than step_iter ({step_iter})")
    target = kwargs.pop("perplexity", None)
    target = 30.0 if target is None else target
    if isinstance(target, (str, tuple)) or np.ndim(target) != 0:
        raise ValueError("perplexity stepping needs a single target perplexity")
    rng = as_generator(kwargs.pop("random_state", None))
    verbose = kwargs.get("verbose", False)
    n = as_numeric_matrix(X).shape[0]
    perps = step_perplexities(n, float(target))
    if not perps:
        with verbose_logging(verbose):
            logger.info("perplexity stepping: no step perplexity above %g for %d points; one run",
                        target, n)
        return smallvis(X, perplexity=target, max_iter=max_iter, random_state=rng, **kwargs)
    length = max(1, int(step_iter) // len(perps))
    steps = dict(tol=0.0, epoch=length, exaggeration_factor=1.0, ret_extra=False)
    passed = {k: v for k, v in kwargs.items() if k not in _STEP_SETTINGS}
    Y = kwargs.get("Y_init")
    for u in perps:
        with verbose_logging(verbose):
            logger.info("perplexity stepping: %d iterations at perplexity %g", length, u)
        Y = smallvis(X, **{**passed, "Y_init": Y}, perplexity=u, max_iter=length,
                     random_state=rng, **steps)
    final = {**passed, **steps, **{k: kwargs[k] for k in _STEP_SETTINGS if k in kwargs}}
    with verbose_logging(verbose):
        logger.info("perplexity stepping: %d iterations at the target perplexity %g",
                    max(1, max_iter - int(step_iter)), target)
    return smallvis(X, **{**final, "Y_init": Y}, perplexity=target,
                    max_iter=max(1, max_iter - int(step_iter)), random_state=rng)
