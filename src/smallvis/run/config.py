"""The run configuration: what one embedding run is asked to do, typed and grouped.

:class:`RunConfig` is built once (:meth:`RunConfig.from_arguments`) from ``smallvis()``'s keyword
arguments, which the estimator's parameters and the command line's flags become. Values left at None
are filled in by :func:`resolve`, the one place where the original's lazy defaults (``stop_lying_iter
= max_iter / 10``, ``mom_switch_iter = stop_lying_iter + 150``, ...), the modern set's choices
(:mod:`.presets`) and the stochastic engine's epochs and learning rate are decided, once the number
of points, the method and the engine are known. The pipeline (:mod:`smallvis.api.pipeline`) runs the
resolved :class:`RunPlan`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from .._util.log import logger
from ..methods import EPS
from . import presets
from .driver import Schedule
from .init import resolve_init


@dataclass(frozen=True)
class MethodSettings:
    """Which cost function, and the settings that build it."""

    method: Any = "tsne"
    perplexity: Any = None
    eps: float = EPS
    use_cpp: bool = False
    bh: bool = False
    theta: float = 1.0
    inp_kernel: str | None = None
    nn: str | None = None


@dataclass(frozen=True)
class InputSettings:
    """How the input becomes the data the method sees."""

    scale: Any = "absmax"
    pca: Any = False
    initial_dims: int = 50
    metric: Any = "euclidean"
    metric_kwds: Any = None
    y: Any = None  # labels for supervised embedding (-1: unlabelled)
    target_weight: float = 0.5
    target_metric: str = "categorical"  # or "l2": a continuous target


@dataclass(frozen=True)
class InitSettings:
    """Where the coordinates start: an init name or an (n, k) array, and its spread."""

    Y_init: Any = None
    Y_init_sdev: float | None = None


@dataclass(frozen=True)
class OptimizerSettings:
    """The optimiser (``opt``: a name or ``(name, {params})``) and the delta-bar-delta settings."""

    opt: Any = None
    eta: Any = None
    momentum: float = 0.5
    final_momentum: float = 0.8
    mom_switch_iter: int | None = None
    min_gain: float = 0.01


@dataclass(frozen=True)
class ScheduleSettings:
    """Iterations, exaggeration stages and stopping rules as given (None: a default decides)."""

    max_iter: int | None = None
    epoch: int | None = None
    min_cost: float | None = None
    tol: float = 1e-7
    g2tol: float | None = None
    tol_wait: int = 15
    exaggeration_factor: float | None = None
    stop_lying_iter: int | None = None
    late_exaggeration_factor: float = 1.0
    start_late_lying_iter: int | None = None
    ee_mon_epoch: int | None = None
    ee_mon_wait: int = 15
    ee_mon_buffer: int = 2
    iter0_cost: bool = False


@dataclass(frozen=True)
class OutputSettings:
    """What comes back and what is shown on the way."""

    ret_extra: Any = False
    verbose: bool = False
    progress: Any = False
    epoch_callback: Callable | None = None
    dtype: Any = "float64"  # of the returned coordinates (the run itself is float64)


GROUPS = {"method": MethodSettings, "input": InputSettings, "init": InitSettings,
          "optimizer": OptimizerSettings, "schedule": ScheduleSettings, "output": OutputSettings}


@dataclass(frozen=True)
class RunConfig:
    """Everything ``smallvis()`` is asked to do, grouped; see :meth:`from_arguments`."""

    k: int = 2
    engine: Any = "auto"
    n_threads: int = 0
    random_state: Any = None
    defaults: str = "smallvis"
    method: MethodSettings = field(default_factory=MethodSettings)
    input: InputSettings = field(default_factory=InputSettings)
    init: InitSettings = field(default_factory=InitSettings)
    optimizer: OptimizerSettings = field(default_factory=OptimizerSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    output: OutputSettings = field(default_factory=OutputSettings)

    @classmethod
    def from_arguments(cls, **arguments) -> RunConfig:
        """The configuration of ``smallvis(**arguments)`` (its keyword names, ``X`` excepted)."""
        grouped: dict[str, dict] = {name: {} for name in GROUPS}
        top = {}
        for name, value in arguments.items():
            group = _GROUP_OF.get(name)
            if group is None:
                if name not in _TOP:
                    raise TypeError(f"unknown argument {name!r}")
                top[name] = value
            else:
                grouped[group][name] = value
        return cls(**top, **{g: GROUPS[g](**values) for g, values in grouped.items()})

    def arguments(self) -> dict:
        """The flat keyword arguments this configuration was built from (every one of them)."""
        flat = {name: getattr(self, name) for name in _TOP}
        for group in GROUPS:
            flat.update(dataclasses.asdict(getattr(self, group)))
        return flat


_TOP = ("k", "engine", "n_threads", "random_state", "defaults")
_GROUP_OF = {f.name: group for group, kind in GROUPS.items() for f in dataclasses.fields(kind)}


@dataclass
class RunPlan:
    """A configuration resolved for one run: every number decided.

    ``init``: the init's name (``"matrix"`` for an array, then in ``Y_init``); ``optimizer``: the
    optimiser's ``(name, params)`` on a gradient engine, None on the stochastic one (which takes
    ``eta`` and ``schedule.max_iter`` epochs); ``chosen``: what the defaults filled in (for the log
    and ``res.settings``); ``method_params``: parameters the defaults add to the method."""

    defaults: str
    init: str
    Y_init: Any
    Y_init_sdev: float | None
    eta: Any
    schedule: Schedule
    optimizer: tuple | None
    chosen: dict = field(default_factory=dict)
    method_params: dict = field(default_factory=dict)


def resolve(config: RunConfig, *, method_name: str, given_params: dict, n: int, default_init: str,
            stochastic_plan=None) -> RunPlan:
    """Fill every value ``config`` leaves at None, for ``method_name`` on ``n`` points: the modern
    set's or the original's choices (:mod:`.presets`), then the original's lazy defaults (gradient
    engines) or, given the method's ``stochastic_plan`` (the sgd engine), its epochs and learning
    rate. ``given_params``: the method parameters the user gave; ``default_init``: the method's (or
    the engine's) init when none is given."""
    stochastic = stochastic_plan is not None
    s, o, i = config.schedule, config.optimizer, config.init
    defaults = presets.resolve_defaults_name(config.defaults)
    settings = presets.resolve(
        defaults, method_name, n=n, stochastic=stochastic, method_params=given_params,
        given=dict(Y_init=i.Y_init, Y_init_sdev=i.Y_init_sdev, max_iter=s.max_iter, eta=o.eta,
                   opt=o.opt, exaggeration_factor=s.exaggeration_factor,
                   stop_lying_iter=s.stop_lying_iter, mom_switch_iter=o.mom_switch_iter,
                   min_cost=s.min_cost))
    logger.info("%s", presets.describe(settings))
    v = settings.values
    init = resolve_init(default_init if v["Y_init"] is None else v["Y_init"])
    common = dict(defaults=defaults, init=init, Y_init=v["Y_init"], Y_init_sdev=v["Y_init_sdev"],
                  chosen=settings.chosen, method_params=settings.method_params)
    if stochastic:
        return RunPlan(**common, **_stochastic(config, v, stochastic_plan, n))
    return RunPlan(**common, **_gradient(config, v, n))


def _gradient(config: RunConfig, v: dict, n: int) -> dict:
    """The original's lazy defaults for a gradient engine (its iteration loop and optimiser)."""
    s, o = config.schedule, config.optimizer
    max_iter = 1000 if v["max_iter"] is None else v["max_iter"]
    exaggeration = v["exaggeration_factor"]
    late = s.late_exaggeration_factor
    stop_lying = max(1, max_iter // 10) if v["stop_lying_iter"] is None else v["stop_lying_iter"]
    start_late = (max_iter - max(1, max_iter // 10) if s.start_late_lying_iter is None
                  else s.start_late_lying_iter)
    if exaggeration != 1 and stop_lying < 1:
        raise ValueError("stop_lying_iter must be >= 1 when exaggeration_factor != 1")
    if late != 1 and start_late < 1:
        raise ValueError("start_late_lying_iter must be >= 1 when late_exaggeration_factor != 1")
    if exaggeration != 1 and late != 1 and start_late < stop_lying:
        raise ValueError("start_late_lying_iter must be >= stop_lying_iter when both "
                         "exaggerations are used")
    mom_switch = stop_lying + 150 if v["mom_switch_iter"] is None else v["mom_switch_iter"]
    schedule = Schedule(
        max_iter=max_iter, epoch=max(1, round(max_iter / 10)) if s.epoch is None else s.epoch,
        min_cost=v["min_cost"], tol=s.tol, g2tol=s.g2tol, tol_wait=s.tol_wait,
        exaggeration_factor=exaggeration, stop_lying_iter=stop_lying,
        late_exaggeration_factor=late, start_late_lying_iter=start_late,
        ee_mon_epoch=s.ee_mon_epoch, ee_mon_wait=s.ee_mon_wait, ee_mon_buffer=s.ee_mon_buffer,
        iter0_cost=s.iter0_cost)
    name, params = _optimizer(v["opt"], n=n, exaggeration=exaggeration,
                              eta=500.0 if v["eta"] is None else v["eta"], momentum=o.momentum,
                              final_momentum=o.final_momentum, mom_switch_iter=mom_switch,
                              min_gain=o.min_gain)
    return dict(eta=params.get("eta"), schedule=schedule, optimizer=(name, params))


def _optimizer(opt, *, n: int, exaggeration: float, **dbd) -> tuple:
    """``(name, params)``; the delta-bar-delta optimisers take the top-level step-size settings
    under what ``opt``'s own params say, with a learning-rate rule given by name resolved."""
    from .optim import split_opt

    name, params = split_opt(opt)
    if name in ("dbd", "ndbd"):
        params = {**dbd, **params}
        params["eta"] = _eta_rule(params["eta"], n, exaggeration)
    return name, params


def _eta_rule(eta, n: int, exaggeration: float):
    """A learning-rate rule by name (``"auto"``, ``"optsne"``) as a number; a number as is (a bad
    value is the optimiser's to refuse, naming it)."""
    if not isinstance(eta, str):
        return eta
    rule = eta.strip().lower()
    if rule == "optsne":
        value = n / exaggeration
        logger.info("opt-SNE learning rate (the original's): eta = n / %g = %g", exaggeration, value)
        return value
    if rule == "auto":
        value = presets.auto_eta(n, exaggeration)
        logger.info("learning rate 'auto': eta = max(n / (4 x %g), %g) = %g", exaggeration,
                    presets.ETA_FLOOR, value)
        return value
    raise ValueError(f"eta must be a positive number, 'auto' or 'optsne'; got {eta!r}")


def _stochastic(config: RunConfig, v: dict, plan, n: int) -> dict:
    """The sgd engine: ``max_iter`` epochs (umap-learn's rule or NCVis's 50 by default), initial
    learning rate ``eta`` (the plan's: 1, ee 0.1); the settings that mean nothing there are refused, not ignored."""
    from ..engines.sgd import default_epochs

    s = config.schedule
    if v["exaggeration_factor"] != 1 or s.late_exaggeration_factor != 1 or \
            s.ee_mon_epoch is not None:
        raise ValueError("engine 'sgd' does not use exaggeration (exaggeration_factor, "
                         "late_exaggeration_factor, ee_mon_epoch): use an exact engine, or leave "
                         "them at their defaults")
    opt = v["opt"]
    if not (isinstance(opt, str) and opt.lower() == "dbd"):
        raise ValueError(f"engine 'sgd' has its own optimiser (SGD with a decaying learning rate "
                         f"eta); opt={opt!r} does not apply")
    n_epochs = default_epochs(plan.epochs, n) if v["max_iter"] is None else v["max_iter"]
    eta = plan.eta if v["eta"] is None else v["eta"]
    if isinstance(eta, str) or not float(eta) > 0:
        raise ValueError(f"engine 'sgd': eta (the initial learning rate) must be a positive "
                         f"number; got {eta!r}")
    # the cost is a sampled estimate: it stops nothing (every epoch runs)
    schedule = Schedule(max_iter=n_epochs, epoch=max(1, round(n_epochs / 10)) if s.epoch is None
                        else s.epoch, min_cost=-math.inf, tol=0.0, iter0_cost=s.iter0_cost)
    return dict(eta=float(eta), schedule=schedule, optimizer=None)
