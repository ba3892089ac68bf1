"""Several methods on the same input, side by side: one run each, a table of final costs, times and
quality metrics, small multiples, and a JSON record of every run.

>>> cmp = compare(X, ["tsne", "umap", "mmds"], out_dir="cmp-iris", labels=y)
>>> cmp.table[["method", "cost", "knn_15"]]

Each method runs with a step size that suits it (:func:`smallvis.methods.step_sizes.suggested_settings`; and
LargeVis with ``gamma = 1 / n``, :func:`~smallvis.methods.step_sizes.suggested_params`) from
the scaled-PCA initialisation, with the same seed; ``out_dir`` receives ``metrics.csv`` (the table),
``compare.json`` (each run's resolved parameters, the input's fingerprint, the metrics) and
``grid.png`` (one panel per method).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .._util.files import atomic_write, jsonable
from .._version import __version__
from ..metrics import K_METRICS, METRIC_K, compute_metrics, pbic_inputs

DEFAULT_METHODS = ("tsne", "umap", "largevis", "mmds")
DEFAULT_INIT = "spca"  # one deterministic start for every method (random starts hide structure)
OUTPUTS = ("grid.png", "metrics.csv", "compare.json", "report.html")


@dataclass
class Comparison:
    """What :func:`compare` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method: ``method``, ``status`` (ok, diverged or error), ``cost``, ``iterations``,
        ``seconds`` and the metrics (``knn_15``, ``trustworthiness_15``, ...; see :func:`metric_column`).
    results : dict
        Method name -> :class:`~smallvis.run.result.SmallVisResult` (None for a run that raised).
    record : dict
        The contents of ``compare.json``.
    """

    table: object
    results: dict = field(default_factory=dict)
    record: dict = field(default_factory=dict)


def metric_column(name: str, k: int = METRIC_K) -> str:
    """Column of a metric in the table: ``knn_<k>`` for kNN preservation, ``<name>_<k>`` for the other
    metrics that depend on k, the metric's name otherwise."""
    if name == "knn_preservation":
        return f"knn_{k}"
    return f"{name}_{k}" if name in K_METRICS else name


def check_methods(methods) -> list[str]:
    """Canonical method names (did-you-mean error for an unknown one; duplicates refused);
    ``"all"``: every registered method, in registry order."""
    from ..methods import REGISTRY, split_spec

    if isinstance(methods, str):
        if methods.strip().lower() == "all":
            return list(REGISTRY)
        methods = [m for m in methods.split(",") if m.strip()]
    names = [split_spec(m.strip())[0] for m in methods]
    if not names:
        raise ValueError("compare needs at least one method")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"method(s) {', '.join(map(repr, twice))} given more than once")
    return names


def check_params(params, methods: list[str]) -> dict:
    """``{method: {key: value}}`` with canonical method names, each among ``methods``, and keys that
    are parameters of that method; ``ValueError`` naming the bad entry otherwise."""
    from .._util.names import match_name
    from ..methods import REGISTRY

    out = {}
    for given, values in (params or {}).items():
        name = match_name(given, REGISTRY, "method")
        if name not in methods:
            raise ValueError(f"parameters given for method {name!r}, which is not among the methods "
                             f"compared ({', '.join(methods)})")
        valid = REGISTRY[name].params
        for key in values:
            if key not in valid:
                match_name(key, valid, f"{name} parameter")  # raises, with a hint
                raise ValueError(f"unknown parameter {key!r} of method {name!r}; valid: "
                                 f"{', '.join(valid)}")
        out.setdefault(name, {}).update(values)
    return out


def check_out_dir(out_dir, force: bool) -> Path:
    """The output folder, refused when it exists (unless ``force``), is not a folder, or cannot be
    created or written. Nothing is created here."""
    import os

    out = Path(out_dir)
    if out.exists():
        if not out.is_dir():
            raise ValueError(f"output folder {out} exists and is not a folder")
        if not force:
            raise ValueError(f"output folder {out} already exists: use --force (force=True) to "
                             f"write into it (its {', '.join(OUTPUTS)} are replaced)")
        if not os.access(out, os.W_OK | os.X_OK):
            raise ValueError(f"output folder {out} is not writable")
        return out
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create output folder {out}: {parent} is not writable")
    return out


def compare(X, methods=DEFAULT_METHODS, *, params=None, out_dir=None, force: bool = False,
            labels=None, label_name=None, label_kind="auto", input_info=None, random_state=0,
            progress=False, plot: bool = True, defaults="auto", **kwargs) -> Comparison:
    """Run each of ``methods`` on ``X`` with the same settings and seed; tabulate and plot them.

    Parameters
    ----------
    X : array (n, p) or DataFrame
        The data.
    methods : sequence of str or str
        Method names (or one comma-separated string); unknown names fail before anything runs.
    params : dict, optional
        Per-method parameters, ``{"umap": {"spread": 2}}``: each method must be among ``methods`` and
        each key one of its parameters (``list_methods()``).
    out_dir : path, optional
        Folder for ``grid.png``, ``metrics.csv`` and ``compare.json`` (created). An existing folder is
        refused unless ``force``. None: nothing is written.
    labels : array (n,), optional
        Colours of the panels; ``label_name`` and ``label_kind`` as in :func:`smallvis.plot.plot_grid`.
    input_info : dict, optional
        What the input is (e.g. the dataset name), recorded in ``compare.json`` beside its
        fingerprint (n, dims and the SHA-256 of the data).
    random_state : int
        Seed of every run.
    progress : bool
        A progress bar per method.
    plot : bool
        Draw ``grid.png`` (with ``out_dir``).
    defaults : {"auto", "smallvis"}
        ``"auto"`` (default): each method runs with the modern defaults (:mod:`smallvis.run.presets`),
        what ``SmallVis(method)`` and ``smallvis embed --method`` give. ``"smallvis"``: the
        original's defaults with a step size that suits each method
        (:func:`~smallvis.methods.step_sizes.suggested_settings`, LargeVis's ``gamma = 1 / n``) and one
        ``spca`` start for every method.
    **kwargs
        Further ``smallvis()`` arguments shared by every run (``perplexity``, ``max_iter``,
        ``engine``, ...); under ``defaults="smallvis"``, ``Y_init`` defaults to ``"spca"`` and
        ``eta`` and ``min_cost`` to each method's suggested settings (no ``eta`` on the ``sgd``
        engine, whose default learning rate is already per method).

    Returns
    -------
    Comparison
    """
    from ..io.preprocess import as_numeric_matrix

    from ..run.presets import resolve_defaults_name

    names = check_methods(methods)
    params = check_params(params, names)
    defaults = resolve_defaults_name(defaults)
    bad = sorted({"X", "method", "random_state", "ret_extra", "progress"} & set(kwargs))
    if bad:
        raise ValueError(f"compare sets {', '.join(bad)} itself; pass methods=, params=, "
                         "random_state= instead")
    out = None if out_dir is None else check_out_dir(out_dir, force)
    X = as_numeric_matrix(X)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (len(X),):
            raise ValueError(f"labels must have one entry per point ({len(X)}); got shape "
                             f"{labels.shape}")
    fingerprint = {"n": int(X.shape[0]), "dims": int(X.shape[1]),
                   "sha256": hashlib.sha256(X.tobytes()).hexdigest()}
    rows, runs, results = [], [], {}
    for name in names:
        settings = run_settings(name, params.get(name), len(X), kwargs, defaults=defaults)
        row, run, res = _run(X, name, settings, random_state, progress)
        rows.append(row)
        runs.append(run)
        results[name] = res
    import pandas as pd

    table = pd.DataFrame(rows)
    record = jsonable({
        "smallvis_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input": {**(input_info or {}), **fingerprint},
        "seed": random_state,
        "methods": names,
        "runs": runs,
    })
    if out is not None:
        _write(out, table, record, results, labels, label_kind, plot)
        from .report import report_after_run

        report_after_run(out)
    return Comparison(table, results, record)


def run_settings(name: str, params: dict | None, n: int, shared: dict, *,
                 defaults: str = "auto") -> dict:
    """The ``smallvis()`` arguments of one method's run (without ``X`` and the seed)."""
    from ..methods.step_sizes import suggested_params, suggested_settings

    if defaults == "auto":  # the presets choose per method, as for SmallVis(name)
        return {**shared, "defaults": "auto", "method": (name, params) if params else name}

    settings = {"Y_init": DEFAULT_INIT}
    suggested = suggested_settings(name, n)
    engine = shared.get("engine", "auto")
    engine_name = engine if isinstance(engine, str) else engine[0]
    sgd = str(engine_name).lower() == "sgd"  # its own learning rate and repulsion weight
    if sgd:
        suggested.pop("eta")
    settings.update(suggested)
    settings.update(shared)
    params = {**({} if sgd else suggested_params(name, n, params)), **(params or {})}
    settings["method"] = (name, params) if params else name
    return settings


def _run(X, name: str, settings: dict, seed, progress):
    """One method: (table row, JSON record, result or None)."""
    from ..api import smallvis
    from ..run.driver import EXPLODING

    start = time.perf_counter()
    try:
        res = smallvis(X, ret_extra=True, random_state=seed, progress=progress, **settings)
    except Exception as err:  # noqa: BLE001 - recorded; the other methods still run
        message = f"{type(err).__name__}: {' '.join(str(err).split())}"
        row = {"method": name, "status": "error", "cost": float("nan"), "iterations": 0,
               "seconds": time.perf_counter() - start, "error": message}
        return row, {"method": name, "status": "error", "error": message,
                     "parameters": settings}, None
    seconds = time.perf_counter() - start
    Y = np.asarray(res.Y)
    finite = bool(np.isfinite(Y).all())
    exploded = finite and Y.size > 0 and float(np.abs(Y).max()) > EXPLODING
    status = "diverged" if res.diverged or not finite or exploded else "ok"
    # a diverged run's last finite coordinates may be too large for distances: no metrics
    res.metrics = (compute_metrics(X, Y, **pbic_inputs(res)) if status == "ok"
                   else {"k": METRIC_K})
    k = res.metrics["k"]
    row = {"method": name, "status": status, "cost": res.cost, "iterations": res.iter,
           "seconds": seconds}
    row.update({metric_column(m, k): v for m, v in res.metrics.items()
                if m not in ("k", "rank_subsample")})
    result = res.to_dict()
    for bulky in ("Y", "costs", "metrics"):
        result.pop(bulky, None)
    run = {"method": name, "status": status, "parameters": settings, "result": result,
           "final_cost": res.cost, "seconds": seconds, "metrics": res.metrics}
    return row, run, res


def panel_title(name: str, res) -> str:
    """``"<method>\\ncost <c>, kNN@15 <v>"`` (the sgd engine's sampled cost marked ``~``)."""
    if res is None:
        return f"{name}\nerror"
    sgd = res.opt.get("name") == "sgd"
    knn = res.metrics.get("knn_preservation")
    shown = f"{knn:.2f}" if knn is not None else "-"
    return (f"{name}{' (sgd)' if sgd else ''}\ncost {'~' if sgd else ''}{res.cost:.4g}, "
            f"kNN@{res.metrics['k']} {shown}")


def _write(out: Path, table, record, results, labels, label_kind, plot) -> None:
    import json

    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "metrics.csv", lambda fh: table.to_csv(fh, index=False, lineterminator="\n"))
    atomic_write(out / "compare.json", lambda fh: fh.write(json.dumps(record, indent=1) + "\n"))
    if plot:
        from ..plot import plot_grid

        panels = [(panel_title(name, res), None if res is None else np.asarray(res.Y))
                  for name, res in results.items()]
        plot_grid(panels, labels, out / "grid.png", label_kind=label_kind)
