"""Two named sets of defaults: the original's (``"smallvis"``) and a modern one (``"auto"``).

``smallvis()`` keeps the R package's defaults (``defaults="smallvis"``): its numbers are the contract.
The scikit-learn estimator and the command line use ``defaults="auto"``, which fills every setting the
user did not give with values that give a good picture for each method at every size:

- t-SNE (:data:`TSNE_LIKE`): openTSNE's and scikit-learn's recipe. PCA start scaled so
  that its first column has sd 1e-4 (``Y_init="pcascaled"``), early exaggeration 12 for 250
  iterations, ``eta="auto"`` (``max(n / (4 * 12), 50)`` in this package's gradient units, which include
  t-SNE's factor 4: scikit-learn's ``learning_rate="auto"``, openTSNE's ``n / 12``), delta-bar-delta
  whose gains and momentum restart when exaggeration ends (``reset_gains``), momentum 0.5 then 0.8,
  750 iterations (openTSNE's 250 + 500);
- largevis, umap, tumap, ncvis: the negative-sampling ``sgd`` engine at every size, as the real
  LargeVis, umap-learn and NCVis run (umap and tumap with umap-learn's 15 neighbours); on an exact
  engine, if asked for by name, a step size that works and LargeVis's ``gamma = 1 / n``;
- every other method (:data:`RECIPES`): a step size scaled with n as the method's forces scale, the
  scaled PCA start (the distance-stress family: ``spca``), 750 iterations, and t-SNE's early
  exaggeration for its Student-t relatives; chosen on iris, s1k and digits against each method's
  gallery run (``benchmarks/defaults.py``).

Nothing a user gives is changed; :func:`resolve` reports what it filled in, and ``smallvis()`` logs it
and keeps it in ``res.settings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._util.names import match_name
from ..methods.step_sizes import suggested_params, suggested_settings

DEFAULT_SETS = ("smallvis", "auto")

# the signature's None means these under the original's defaults (the other Nones are the original's
# own lazy defaults, resolved where they are used)
ORIGINAL = {"exaggeration_factor": 1.0, "opt": "dbd", "min_cost": 0.0}

SGD_METHODS = ("largevis", "umap", "tumap", "ncvis")

EARLY_EXAGGERATION = 12.0
EXAGGERATION_ITER = 250
TSNE_ITER = 750
ETA_FLOOR = 50.0  # scikit-learn's floor for learning_rate="auto"
UMAP_NEIGHBOURS = 15  # umap-learn's n_neighbors


def auto_eta(n: int, exaggeration_factor: float = 1.0) -> float:
    """``eta="auto"``: ``max(n / (4 * exaggeration_factor), 50)``. opt-SNE's and openTSNE's rate
    ``n / exaggeration`` in this package's gradient units (t-SNE's factor 4 included), with scikit-
    learn's floor; ``eta="optsne"`` keeps the original's ``n / exaggeration_factor``, four times larger."""
    return max(n / (4.0 * float(exaggeration_factor)), ETA_FLOOR)


def exaggeration_iterations(max_iter) -> int:
    """Early exaggeration's length: openTSNE's 250 iterations, or a third of a shorter run that the
    user asked for (so that it still has an un-exaggerated stage)."""
    if max_iter is None or max_iter >= TSNE_ITER:
        return EXAGGERATION_ITER
    return max(1, round(max_iter / 3))


def resolve_defaults_name(defaults) -> str:
    return match_name(defaults, DEFAULT_SETS, "defaults")


@dataclass
class Resolved:
    """The settings a run uses: ``values`` (every preset-controlled argument) and ``chosen`` (the ones
    the preset filled in, for the log and ``res.settings``)."""

    defaults: str
    values: dict
    chosen: dict = field(default_factory=dict)
    method_params: dict = field(default_factory=dict)


def preset_perplexity(defaults: str, name: str):
    """The perplexity (neighbour count) when none is given: umap-learn's 15 neighbours for umap and
    tumap under the modern set; else None (the method's own default)."""
    if defaults == "auto" and name in ("umap", "tumap"):
        return UMAP_NEIGHBOURS
    return None


def preset_engine(defaults: str, name: str, engine):
    """The engine under ``defaults``: the stochastic methods move to ``sgd`` at every size when the
    engine is left to ``"auto"`` under the modern set."""
    if defaults == "auto" and name in SGD_METHODS and isinstance(engine, str) \
            and engine.strip().lower() == "auto":
        return "sgd"
    return engine


def resolve(defaults: str, name: str, *, n: int, stochastic: bool, given: dict,
            method_params: dict) -> Resolved:
    """Fill the arguments left at None in ``given`` (Y_init, perplexity, max_iter, eta, opt,
    exaggeration_factor, stop_lying_iter, mom_switch_iter, min_cost) for method ``name`` on ``n``
    points. ``method_params``: the parameters the user gave the method (the preset adds its own only
    where they are absent)."""
    values = dict(given)
    if defaults == "smallvis":
        for key, value in ORIGINAL.items():
            if values.get(key) is None:
                values[key] = value
        return Resolved(defaults, values)
    modern = _modern(name, n, stochastic, given, method_params)
    chosen = {key: value for key, value in modern.items()
              if key != "method_params" and values.get(key) is None}
    values.update(chosen)
    for key, value in ORIGINAL.items():  # what the modern set leaves alone
        if values.get(key) is None:
            values[key] = value
    extra = {key: value for key, value in modern.get("method_params", {}).items()
             if key not in method_params}
    if extra:
        chosen["method_params"] = extra
    return Resolved(defaults, values, chosen, extra)


@dataclass(frozen=True)
class Recipe:
    """The modern settings of one method: a step-size rule, early exaggeration and the start.

    ``eta``: ``"auto"`` (:func:`auto_eta`), or ``(scale, c)`` for ``c * s`` with ``s = n``
    (matrix-normalised P: forces shrink like 1/n), ``1`` (conditional or un-normalised P) or ``1/n``
    (distance stress: forces grow like n). ``init_sd``: the first column's sd of the ``pcascaled``
    start."""

    eta: object
    exaggeration: float = 1.0
    init: str = "pcascaled"
    init_sd: float | None = None
    min_cost: float | None = None

    def step(self, n: int):
        if self.eta == "auto":
            return "auto"
        scale, c = self.eta
        return c * {"n": n, "1": 1, "1/n": 1.0 / n}[scale]


TSNE_LIKE = Recipe("auto", EARLY_EXAGGERATION)
# The evidence: benchmarks/defaults.py and explore_defaults.py, every method on iris, s1k and digits
# against its gallery run (benchmarks/README.md, "Defaults: evidence"). Step sizes are the gallery's
# (step_sizes.py) unless a better one was found; Student-t relatives take t-SNE's recipe.
RECIPES = {
    **dict.fromkeys(["tsne", "wtsne", "trmsne", "tmsne", "tsneu", "pstsne", "jssne", "hlsne", "gsne",
                     "absne", "ntumap", "cetsne", "skdtsne"], TSNE_LIKE),
    "usne": Recipe("auto", EARLY_EXAGGERATION, init_sd=1.0),
    # tasne, trsrsne: t-SNE's eta="auto" (n / (4 x 12) for a P that sums to 1) for their P, which
    # sums to n: 1 / 48. At eta 1 (the gallery's) the exaggerated attraction overshoots at the
    # start (each step 12x too long; hubs of the kNN graph much more): the embedding spreads to
    # hundreds of units by iteration 20 (blobs: 94 at 2,000 points, 1,060 at 70,000), which the
    # fft grid follows (benchmarks/README.md, zoo_scale.py, 2026-11-27)
    **dict.fromkeys(["tasne", "trsrsne"], Recipe(("1", 1.0 / (4.0 * EARLY_EXAGGERATION)),
                                                 EARLY_EXAGGERATION)),
    **dict.fromkeys(["ssne", "hssne", "bhssne", "wssne", "btsne", "bssne", "dhssne", "snerv", "ee",
                     "abssne"], Recipe(("n", 0.1 / 150))),
    "sjse": Recipe(("n", 10.0 / 150)),  # the gallery's step stalls at the start on s1k and digits
    # asne, arsrsne, nerv, rsrnerv: 0.02 (the gallery's 0.1 / 5). At 0.1 the Gaussian kernel's
    # springs overshoot when the start's uniform Q gives way (gains ~4 by then): 20,000 blobs spread
    # to 302 (nerv) and 168 (rsrnerv) units by iteration 18-21 and fall back to ~17 by 30, asne and
    # arsrsne diverge (the defaults' retry runs at 0.025), 70,000 reach 324 / 283 at iteration 20
    # (the fft grid follows: 999 / 864 nodes). At 0.02 the extent grows to its level without
    # overshoot (70,000: 18 units at iteration 100, peak 1029 / 1330 MB instead of 1643 / 1681),
    # to within 1.5 % of the old kNN@15 and triplets on digits, s1k and 20,000 blobs
    # (benchmarks/README.md, zoo_scale, tenth look).
    # jse, rsrjse: their start is slower (0.7 units at iteration 50 on 20,000 blobs): 0.1 kept
    **dict.fromkeys(["asne", "arsrsne", "nerv", "rsrnerv"], Recipe(("1", 0.02))),
    **dict.fromkeys(["jse", "rsrjse"], Recipe(("1", 0.1))),
    **dict.fromkeys(["basne", "btasne", "bnerv"], Recipe(("1", 1e-3))),
    # rklsne: 10 at iris, growing with n as its forces shrink like 1 / n (at a fixed 10 its start
    # slows with n: after 75 iterations the gradient is 200x smaller at 10,000 blobs than at 3,000;
    # digits and s1k: a lower cost at about the same kNN preservation);
    # chsne: 1 (at 10, the gallery's, it spreads to ~600 units by iteration 12 on 5,000 points of
    # blobs and to ~780 on 20,000, then contracts; at 30 it blows up on 3,000 points of blobs)
    "rklsne": Recipe(("n", 10.0 / 150)),
    "chsne": Recipe(("1", 1.0)),
    "tee": Recipe(("1", 500.0), min_cost=-math.inf),
    **dict.fromkeys(["mmds", "sammon", "gmmds", "ballmmds", "knnmmds"], Recipe(("1/n", 1.5),
                                                                              init="spca")),
    "smmds": Recipe(("1/n", 0.015), init="spca"),
}
MODERN_ITER = 750
MOMENTUM_SWITCH = 250


def _modern(name: str, n: int, stochastic: bool, given: dict, method_params: dict) -> dict:
    """The modern settings for ``name`` (before the user's own values are applied)."""
    if stochastic:  # the sgd engine has its own init, epochs and learning rate
        return {}
    recipe = RECIPES.get(name)
    if recipe is None:  # a stochastic method on an exact engine, or a method added later
        settings = suggested_settings(name, n)  # eta, and min_cost where the cost may be negative
        out = {"Y_init": "pcascaled", "max_iter": MODERN_ITER, "eta": settings.pop("eta"),
               "mom_switch_iter": MOMENTUM_SWITCH, **settings}
        params = suggested_params(name, n, method_params)
        if params:
            out["method_params"] = params
        return out
    out = {"Y_init": recipe.init, "max_iter": MODERN_ITER, "eta": recipe.step(n),
           "mom_switch_iter": MOMENTUM_SWITCH}
    if recipe.init_sd is not None:
        out["Y_init_sdev"] = recipe.init_sd
    if recipe.min_cost is not None:
        out["min_cost"] = recipe.min_cost
    exaggeration = given.get("exaggeration_factor")
    if recipe.exaggeration != 1 and (exaggeration is None or exaggeration != 1):
        stop = exaggeration_iterations(given.get("max_iter"))
        out.update(exaggeration_factor=recipe.exaggeration, stop_lying_iter=stop,
                   mom_switch_iter=stop, opt=("dbd", {"reset_gains": True}))
    return out


def describe(resolved: Resolved) -> str:
    """One line for the log: what the defaults chose."""
    if resolved.defaults == "smallvis":
        return "defaults='smallvis': the original's settings"
    if not resolved.chosen:
        return "defaults='auto': every preset setting was given"
    parts = ", ".join(f"{key}={value!r}" for key, value in resolved.chosen.items())
    return f"defaults='auto' chose {parts}"
