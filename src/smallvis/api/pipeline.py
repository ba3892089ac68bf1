"""The pipeline of one run: a :class:`~smallvis.run.config.RunConfig` in, an embedding out.

input -> method -> engine -> resolved plan -> affinities -> start -> optimiser -> driver -> result.
Every engine runs through the one driver loop (:func:`smallvis.run.driver.run`): a gradient engine
with an optimiser from :mod:`smallvis.run.optim`, the stochastic engine with its epochs
(:class:`smallvis.run.optim.sgd.EpochStepper`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time

import numpy as np

from .._util.log import logger
from .._util.names import match_name
from .._util.rng import as_generator
from ..engines import resolve_engine
from ..io.metric import parse_metric
from ..io.prepare import prepare_input
from ..methods import build_method, split_spec
from ..methods.base import Method
from ..run import driver, presets
from ..run.config import RunConfig, RunPlan, resolve
from ..run.init import InitContext, initial_layout, rescale, check_init_matrix, resolve_init
from ..run.optim import Objective, build_optimizer
from ..run.optim.sgd import EpochStepper
from ..run.result import SmallVisResult
from .diagnostics import teach

EXTRA_NAMES = ("X", "P", "Q", "DX", "DY", "V", "beta", "dint", "adegin", "adegout", "adegc",
               "pdeg", "alpha", "geo", "logZ", "idp", "model")


def embed(X, config: RunConfig, *, frozen: np.ndarray | None = None, neighbors=None,
          fitted_V=None, apart: bool = False):
    """Run ``config`` on ``X``: the coordinates (n, k), or a :class:`SmallVisResult` when
    ``config.output.ret_extra`` asks for one.

    ``frozen`` (transform, :mod:`.transform`): a boolean mask of the rows that keep the coordinates
    of the ``Y_init`` matrix; the others are optimised against them, and nothing is recentred;
    ``neighbors``: ``(indices, distances)`` known in advance, read by any neighbour search;
    ``fitted_V``: the leading rows' sparse input kernel values (a transform's fitted points),
    reused by the sparse calibration, which then calibrates only the rows after them; ``apart``:
    the moving rows are not repelled by one another (engines that serve it: ``bh``, ``fft``)."""
    start = time.perf_counter()
    rng = as_generator(config.random_state)
    k, mc, inp = config.k, config.method, config.input
    source, metric = parse_metric(inp.metric, inp.metric_kwds)
    precomputed = source != "data"
    defaults = presets.resolve_defaults_name(config.defaults)
    _, method_params, _ = split_spec(mc.method)
    m, engine, perplexity = _method_and_engine(mc, defaults, config.engine)
    Y_init = config.init.Y_init
    if Y_init is not None:
        resolve_init(Y_init)  # a bad name fails before any work
    want_result, extras = _resolve_extras(config.output.ret_extra)
    out_dtype = _output_dtype(config.output.dtype)

    data, pca_dims, whiten_dims, pca_applied = prepare_input(
        X, precomputed=precomputed, scale=inp.scale, pca=inp.pca, initial_dims=inp.initial_dims,
        k=k, rng=rng, stacklevel=3,  # the warning points at smallvis()'s caller
        metric=metric, gaussian_unsquared=source == "precomputed" and defaults == "smallvis",
        source=source)
    if neighbors is not None:
        data.set_neighbors(*neighbors)
    data.fitted_V = fitted_V
    n = data.n
    if inp.y is not None:
        _set_labels(data, inp.y, inp.target_weight, m, inp.target_metric)
    if n < 3:
        raise ValueError(f"need at least 3 points to embed; got {n}")
    if Y_init is not None and not isinstance(Y_init, str):
        check_init_matrix(Y_init, n, k)
    eng = resolve_engine(engine, m, n, k)
    sgd_plan = eng.plan(m) if getattr(eng, "stochastic", False) else None
    plan = resolve(config, method_name=m.name, given_params=method_params, n=n,
                   default_init=m.default_init if sgd_plan is None else sgd_plan.init,
                   stochastic_plan=sgd_plan)
    method = mc.method
    if plan.method_params:
        method = _with_params(method, plan.method_params, mc.eps)
        m = build_method(method, perplexity=perplexity)
    eng.check(n)
    compile_secs = _warm_up(eng, m, k)
    logger.info("%s: %d points, %s input dims%s, method %s, engine %s", "smallvis", n,
                "precomputed" if precomputed else data.X.shape[1],
                "" if precomputed or metric.euclidean else f", metric {metric.describe()}",
                m.name, eng.name)
    out, run, plan = _run_retrying(eng, m, data, plan, config, rng=rng, extras=extras,
                                   pca_applied=pca_applied, record=want_result, frozen=frozen,
                                   apart=apart)
    teach(out, m.name, run["opt"].get("eta"), defaults=plan.defaults)
    if not want_result:
        return out.Y.astype(out_dtype, copy=False)
    res = SmallVisResult(
        Y=out.Y.astype(out_dtype, copy=False), N=n, origD=None if precomputed else data.X.shape[1], scale=inp.scale,
        Y_init=plan.init, method=method, iter=out.iter, time_secs=time.perf_counter() - start,
        G2norm=out.G2norm, costs=run["pcost"](out.Y), opt=run["opt"],
        perplexity=_reported_perplexity(m, run["state"]), itercosts=out.itercosts,
        pca_dims=pca_dims, whiten_dims=whiten_dims, diverged=out.diverged, defaults=plan.defaults,
        settings=_plain_settings(plan.chosen))
    res.engine, res.compile_secs = eng.name, compile_secs
    for key, value in _stages(m, plan, out).items():
        setattr(res, key, value)
    res.extras = _collect_extras(extras - {"model"}, m, run["state"], data, out.Y)
    if "model" in extras:  # what smallvis_transform needs to place new points next to these
        from .model import build_model

        res.extras["model"] = build_model(X, data, config, res, run["state"])
    return res


def _output_dtype(dtype) -> np.dtype:
    """``dtype`` of the returned coordinates: float64 or float32."""
    try:
        kind = np.dtype(dtype)
    except TypeError:
        kind = None
    if kind not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be 'float64' or 'float32'; got {dtype!r}")
    return kind


def _set_labels(data, y, target_weight, m, target_metric="categorical") -> None:
    """Supervised embedding: the labels ride on the input data to the affinities."""
    from ..affinity.supervised import check_labels, check_target_weight

    weight = check_target_weight(target_weight)
    labels = check_labels(y, data.n, target_metric)
    if not m.uses_affinities:
        raise ValueError(f"y (supervised embedding) needs a method with input affinities; "
                         f"{m.name!r} fits input distances")
    data.labels, data.target_weight = labels, weight
    if labels is None:
        logger.info("y: every point is unlabelled, the run is unsupervised")


def _method_and_engine(mc, defaults: str, engine):
    """The method built from its settings, the engine asked for (the defaults' choice, or the
    original's ``bh=True``), and the perplexity used."""
    name = split_spec(mc.method)[0]
    perplexity = mc.perplexity
    if perplexity is None:
        perplexity = presets.preset_perplexity(defaults, name)
    engine = presets.preset_engine(defaults, name, engine)
    m = build_method(mc.method, perplexity=perplexity, eps=mc.eps, use_cpp=bool(mc.use_cpp))
    if mc.bh:
        engine = _barnes_hut_tsne(m, mc.method, engine, theta=mc.theta, inp_kernel=mc.inp_kernel,
                                  nn=mc.nn)
    elif mc.inp_kernel is not None or mc.nn is not None:
        given = "inp_kernel" if mc.inp_kernel is not None else "nn"
        raise ValueError(
            f"{given} only applies with bh=True (the original ignores it otherwise); to change the "
            f"input kernel of another run, give it to the method, e.g. method=({m.name!r}, "
            "{'inp_kernel': 'nngaussian'}); the sparse engines take neighbours as an option, e.g. "
            "engine=('fft', {'knn': 'exact'})")
    return m, engine, perplexity


# a run whose step size the modern defaults chose, and which diverges, is run again from the same
# start with a step this many times smaller, at most RETRIES times (the data, not the method, decide
# how large a fixed step a method takes: asne's 0.1 is right on digits and diverges on 3,000 points
# of 50-D blobs, whose hubs pull with a force many times a typical point's)
RETRY_FACTOR = 4.0
RETRIES = 3


def _run_retrying(eng, m, data, plan: RunPlan, config: RunConfig, *, rng, **kwargs):
    """:func:`_run`, run again with a smaller step when it diverged with a step size that the modern
    defaults chose (never one the user gave, never a transform): the same draws as a run given that
    step, so the result is that run's. Returns ``(outcome, what the result needs, the plan used)``."""
    draws = rng.bit_generator.state
    for attempt in range(RETRIES + 1):
        out, run = _run(eng, m, data, plan, config, rng=rng, **kwargs)
        eta = plan.optimizer[1].get("eta") if plan.optimizer is not None else None
        if not (out.diverged and attempt < RETRIES and "eta" in plan.chosen
                and isinstance(eta, (int, float)) and kwargs.get("frozen") is None):
            return out, run, plan
        smaller = float(eta) / RETRY_FACTOR
        logger.warning("%s diverged at iteration %d with eta=%.3g (chosen by defaults='auto'): "
                       "running again with eta=%.3g", m.name, out.diverged_at, eta, smaller)
        name, params = plan.optimizer
        plan = dataclasses.replace(plan, eta=smaller, optimizer=(name, {**params, "eta": smaller}),
                                   chosen={**plan.chosen, "eta": smaller})
        out = run = None  # the diverged attempt's state is not held during the next one
        rng.bit_generator.state = draws
    return out, run, plan


def _run(eng, m, data, plan: RunPlan, config: RunConfig, *, rng, extras, pca_applied, record,
         frozen=None, apart=False):
    """Prepare the method on the engine, start, and run the driver: (outcome, what the result
    needs). The random draws keep their order on every engine: affinities (the sgd engine's kNN
    seed from a child stream), the start, the optimiser's seeds."""
    out_cfg, s = config.output, plan.schedule
    stochastic = getattr(eng, "stochastic", False)
    if not stochastic:
        optimizer = build_optimizer(*plan.optimizer)  # a bad setting fails before any work
    state = eng.prepare(m, data, extras=extras, rng=rng)
    context = InitContext(data=data, method=m, state=state, k=config.k, rng=rng,
                          pca_applied=pca_applied, matrix=plan.Y_init)
    if stochastic:
        Y = initial_layout(plan.init, context)
        if plan.init != "matrix":
            Y = _stochastic_scale(Y, eng.plan(m).forces)
        if plan.Y_init_sdev is not None and frozen is None:
            Y = rescale(Y, float(plan.Y_init_sdev))
        Y = np.ascontiguousarray(Y, dtype=np.float64)
    else:
        Y = initial_layout(plan.init, context, None if frozen is not None else plan.Y_init_sdev)
    data.release()  # what the method keeps is in its state: no (n, n) distances while it runs
    objective = Objective(m, state, eng, frozen=frozen, apart=apart)
    if stochastic:  # the engine's epochs, run as the driver's optimiser
        optimizer = EpochStepper(eng.epochs(m, state, n_epochs=s.max_iter, eta=plan.eta,
                                            rng=rng)) if s.max_iter > 0 else None
    # a transform nobody watches evaluates no cost (a method with an epoch hook needs it)
    costed = frozen is None or bool(out_cfg.verbose or record or out_cfg.epoch_callback) \
        or type(m).on_epoch is not Method.on_epoch
    schedule = driver.Schedule(**{**vars(s), "record": record, "frozen": frozen, "costed": costed,
                                  "iter0_cost": s.iter0_cost and (out_cfg.verbose or record)})
    if s.max_iter < 1:
        out = driver.RunOutcome(Y=Y, iter=0, G2norm=None, stop_lying_iter=s.stop_lying_iter)
        if out_cfg.epoch_callback is not None:
            out_cfg.epoch_callback(Y, 0, None)
    else:
        label = f"{m.name} (sgd)" if stochastic else m.name
        with _progress_hook(out_cfg.progress, s.max_iter, label) as hook:
            out = driver.run(objective, optimizer, Y, schedule, callback=out_cfg.epoch_callback,
                             on_iteration=hook)
    pcost = lambda Y: objective.pcost(Y, exaggeration=1.0)  # noqa: E731
    if optimizer is None:  # sgd with no epochs: no sampling structures, no estimate
        opt = {"name": "sgd", "eta": float(plan.eta), "n_epochs": 0, **eng.options()}
        pcost = lambda Y: np.full(data.n, np.nan)  # noqa: E731
    else:
        opt = optimizer.params()
    if not stochastic:
        opt["counts"] = dict(getattr(optimizer, "counts", objective.counts))
    elif "logZ" in state.data:
        opt["logZ"] = state.data["logZ"]
    return out, dict(state=state, opt=opt, pcost=pcost)


def _stages(m, plan: RunPlan, out) -> dict:
    """The exaggeration stages the run used, for the result."""
    s = plan.schedule
    stages = {}
    if s.exaggeration_factor != 1 and m.uses_affinities:
        stages.update(exaggeration_factor=s.exaggeration_factor,
                      stop_lying_iter=out.stop_lying_iter)
    used_late = s.late_exaggeration_factor != 1 and m.uses_affinities and (
        s.exaggeration_factor == 1 or out.start_late_lying_iter <= out.iter)
    if used_late:
        stages.update(late_exaggeration_factor=s.late_exaggeration_factor,
                      start_late_lying_iter=out.start_late_lying_iter)
    return stages


def _resolve_extras(ret_extra):
    if ret_extra is False or ret_extra is None:
        return False, frozenset()
    if ret_extra is True:
        return True, frozenset()
    names = [ret_extra] if isinstance(ret_extra, str) else list(ret_extra)
    lookup = {n.lower(): n for n in EXTRA_NAMES}
    out = set()
    for name in names:
        if not isinstance(name, str) or name.lower() not in lookup:
            raise ValueError(f"unknown ret_extra item {name!r}; valid: {', '.join(EXTRA_NAMES)}")
        out.add(lookup[name.lower()])
    return True, frozenset(out)



def _with_params(method, extra: dict, eps: float):
    """``method`` as ``(name, params)`` with ``extra`` added; a bare name keeps the top-level ``eps``
    it would have received (the original's eps rule), so only ``extra`` changes."""
    from ..methods import REGISTRY

    name, params, bare = split_spec(method)
    params = {**params, **extra}
    if bare and "eps" in REGISTRY[name].params:
        params.setdefault("eps", eps)
    return (name, params)



def _plain_settings(chosen: dict) -> dict:
    """What the defaults chose, as plain values (the optimiser's ``(name, {..})`` as given)."""
    return {key: (list(value) if isinstance(value, tuple) else value) for key, value in chosen.items()}



def _warm_up(eng, m, k) -> float:
    """Compile (or load from numba's disk cache) the engine's kernels before the run, so the run's
    timings and progress do not include it; the time is logged and kept in ``res.compile_secs``."""
    if not hasattr(eng, "warm_up"):
        return 0.0
    secs = eng.warm_up(m, k)
    logger.info("engine %s: kernels ready in %.2f s (compiled on first use, later loaded from the "
                "disk cache)", eng.name, secs)
    return secs



def _barnes_hut_tsne(m, method, engine, *, theta, inp_kernel, nn):
    """The original's ``bh=TRUE``: t-SNE on the Barnes-Hut engine with sparse P from the
    ``nngaussian`` kernel (or ``inp_kernel``) and approximate neighbours unless ``nn="exact"``."""
    import dataclasses

    if m.name != "tsne":
        logger.info("bh=True only applies to method 'tsne'; ignored for %r", m.name)
        return engine
    _, params, _ = split_spec(method)
    kernel = inp_kernel if inp_kernel is not None else params.get("inp_kernel", "nngaussian")
    m.recipe = dataclasses.replace(m.recipe, kernel=kernel)
    # no nn: "auto" (exact up to 20,000 points, the library's NN-descent above)
    knn = "auto" if nn is None else {"approximate": "nndescent", "exact": "exact"}[
        match_name(nn, ("approximate", "exact"), "nn")]
    logger.info("bh=True: Barnes-Hut t-SNE, theta = %g, input kernel %s, %s neighbours", theta,
                kernel, knn)
    return ("bh", {"theta": theta, "knn": knn})



def _reported_perplexity(m, state):
    """The perplexity the method used: the chosen IDP for ``"idp"``, the candidates for
    ``"multiscale"``, else the method's value."""
    p = m.perplexity()
    aff = getattr(state, "affinities", None)
    if aff is not None and isinstance(p, (str, tuple)):
        return aff.perplexity
    return p



def _stochastic_scale(Y, forces):
    """Named inits on the sgd engine: each column to [0, 10] (umap-learn), or to mean 0 and sd 1
    (NCVis), or centred at its own scale (SGD-MDS: the PCA start at the input distances' scale)."""
    Y = Y - Y.mean(axis=0)
    if forces == "stress":
        return Y
    if forces == "nce":
        sd = Y.std(axis=0)
        return Y / np.where(sd > 0, sd, 1.0)
    lo, hi = Y.min(axis=0), Y.max(axis=0)
    return 10.0 * (Y - lo) / np.where(hi > lo, hi - lo, 1.0)



@contextlib.contextmanager
def _progress_hook(progress, total, label):
    """``progress=True``: a tqdm bar on stderr; a callable is used as is; otherwise no hook."""
    if callable(progress):
        yield progress
        return
    if not progress:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=label, unit="it", leave=False, mininterval=0.5)
    last = [0]

    def hook(iteration):
        bar.update(iteration - last[0])
        last[0] = iteration

    try:
        yield hook
    finally:
        bar.close()



def _collect_extras(extras, m, state, data, Y):
    from ..io.distances import squared_distances

    found = {}
    for name in sorted(extras):
        if name == "X":
            value = data.X
        elif name == "DX":
            value = data.distances()
        elif name == "DY":
            value = np.sqrt(squared_distances(Y))
        else:
            value = m.export(state, name, Y)
        if value is None:
            raise ValueError(f"ret_extra item {name!r} is not available for method {m.name!r}")
        found[name] = value
    return found
