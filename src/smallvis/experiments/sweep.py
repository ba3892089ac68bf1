"""Parameter sweeps: every run of a grid (methods x parameters x seeds), locally or on Dask.

>>> table = sweep(X, {"method": ["tsne", "umap"], "params": {"perplexity": [5, 30]}}, "out")

The output folder holds ``runs/<id>.npy`` (coordinates) and ``runs/<id>.json`` (settings, final cost,
iterations, time, metrics, cost history), ``results.csv`` (one row per run), ``grid.json`` (the grid),
``sweep.json`` (the input's fingerprint) and ``grid.png`` (small multiples). Every file is written
atomically and ``results.csv`` after each run, so an interrupted sweep keeps every finished run, and a
rerun skips them. The grid schema is in :mod:`smallvis.experiments.sweep_grid`.

Runs execute in this process (``n_jobs=1``), in ``n_jobs`` spawned processes, or on a Dask cluster
(``scheduler="tcp://host:port"`` or a ``distributed.Client``); each gets its seed as
``random_state``, so the coordinates do not depend on where it ran.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .._util.files import atomic_write, jsonable
from .._util.folder_lock import LOCK_NAME, FolderLock
from .._util.log import logger, verbose_logging
from .._util.parallel import resolve_jobs
from .._version import __version__
from ..metrics import METRIC_K
from .sweep_exec import address, connect, run_dask, run_one, run_pool, run_spec
from .sweep_grid import Grid, Run, load_grid

MANIFEST = "sweep.json"
FINISHED = ("ok", "diverged")  # statuses a rerun skips; "error" runs are tried again
METRIC_COLUMNS = {f"knn_{METRIC_K}": "knn_preservation",
                  f"trustworthiness_{METRIC_K}": "trustworthiness"}


def sweep(X, grid, out_dir, *, labels=None, label_name=None, name=None, n_jobs: int = 1,
          scheduler=None, connect_timeout: float = 10.0, resume: bool = True, force: bool = False,
          plot: bool = True, verbose: bool = False, report=None):
    """Run every point of ``grid`` on ``X``, writing the results to ``out_dir``; return the table.

    Parameters
    ----------
    X : array (n, p), DataFrame, or str
        The data; a string names a file or a built-in dataset (whose labels colour the plot).
    grid : dict or path
        The grid (see :mod:`smallvis.experiments.sweep_grid`), or a ``.yaml``/``.yml``/``.json`` file holding it.
    out_dir : path
        Output folder (created). A folder from another input is refused unless ``force``.
    labels : array (n,), optional
        Colours of the small multiples (classes or a continuous value).
    label_name : str, optional
        Legend title.
    name : str, optional
        What the data are, for the plot title and ``sweep.json`` (default: the dataset or file
        name when ``X`` is one, else "data").
    n_jobs : int
        Runs at once in local processes (1: in this process; -1: one per CPU).
    scheduler : str or distributed.Client, optional
        A Dask scheduler address (``tcp://host:port``) or client; needs ``smallvis[dask]``. The
        scheduler is contacted (for at most ``connect_timeout`` seconds) before anything is written.
    resume : bool
        Skip the runs already finished in ``out_dir`` (False: run them again).
    plot : bool
        Draw ``grid.png``.
    verbose : bool
        Log a line per finished run.
    report : callable(str), optional
        Receives the progress lines instead of the log.

    Returns
    -------
    pandas.DataFrame
        One row per run (``results.csv``); ``attrs`` holds ``out_dir``, ``skipped``, ``ran`` and
        ``failed`` counts.
    """
    with verbose_logging(verbose):
        return _sweep(X, grid, out_dir, labels=labels, label_name=label_name, name=name,
                      n_jobs=n_jobs, scheduler=scheduler,
                      connect_timeout=connect_timeout, resume=resume, force=force, plot=plot,
                      report=report or logger.info)


def _sweep(X, grid, out_dir, *, labels, label_name, name, n_jobs, scheduler, connect_timeout,
           resume, force, plot, report):
    from ..io.preprocess import as_numeric_matrix

    grid = load_grid(grid)
    runs = grid.runs()
    label_kind = "auto"
    if isinstance(X, (str, Path)):
        from ..io.source import load_source

        data = load_source(str(X))
        name = name or data.info.get("name") or Path(X).name
        X, label_kind = data.X, data.label_kind
        if labels is None:
            labels, label_name = data.labels, label_name or data.label_name
    name = name or "data"
    X = as_numeric_matrix(X)
    labels = None if labels is None else np.asarray(labels)
    if labels is not None and labels.shape != (len(X),):
        raise ValueError(f"labels must have one entry per point ({len(X)}); got shape {labels.shape}")
    n_jobs = _check_jobs(n_jobs, scheduler)
    fingerprint = {"n": int(X.shape[0]), "dims": int(X.shape[1]),
                   "sha256": hashlib.sha256(X.tobytes()).hexdigest()}
    out = Path(out_dir)
    _check_folder(out, fingerprint, force)
    lock = FolderLock(out) if out.is_dir() else None  # a busy folder is refused before connecting
    try:
        client, owned = connect(scheduler, connect_timeout)  # before anything is written
        try:
            if lock is None:
                out.mkdir(parents=True, exist_ok=True)
                lock = FolderLock(out)
            _check_folder(out, fingerprint, force)  # again: another sweep may have written
        except BaseException:
            if owned:
                client.close()
            raise
        return _run(out, X, grid, runs, fingerprint, name, labels, label_kind, label_name, n_jobs,
                    client, owned, resume, plot, report)
    finally:
        if lock is not None:
            lock.release()


def _run(out, X, grid, runs, fingerprint, name, labels, label_kind, label_name, n_jobs, client,
         owned, resume, plot, report):
    """The sweep proper, in a folder this process holds."""
    try:
        runs_dir = out / "runs"
        runs_dir.mkdir(parents=True, exist_ok=True)
        manifest = {"smallvis_version": __version__, "input": {"name": name, **fingerprint}}
        _write_json(out / MANIFEST, manifest)
        _write_json(out / "grid.json", grid.to_dict())
        runs, records = _finished(runs, runs_dir, fingerprint, resume)
        skipped = len(records)
        todo = [r for r in runs if r.id not in records]
        where = (f"on Dask at {address(client)}" if client is not None else
                 f"in {n_jobs} processes" if n_jobs > 1 else "in this process")
        report(f"sweep: {len(runs)} runs ({_shape(grid)}) on {name} ({X.shape[0]} x {X.shape[1]}) "
               f"-> {out}; {skipped} finished already (skipped), {len(todo)} to run {where}")
        table_path = out / "results.csv"
        _write_table(table_path, runs, records)
        if client is not None:
            outcomes = run_dask(client, X, todo)
        elif n_jobs > 1:
            outcomes = run_pool(X, todo, n_jobs, scratch=out)
        else:
            outcomes = ((run, run_one(X, run_spec(run))) for run in todo)
        with contextlib.closing(outcomes):  # an interrupt stops the workers at once
            for done, (run, outcome) in enumerate(outcomes, 1):
                records[run.id] = _save_run(runs_dir, run, outcome, fingerprint)
                _write_table(table_path, runs, records)
                report(_progress_line(run, records[run.id], done, len(todo)))
    finally:
        if owned:
            client.close()
    table = _table(runs, records)
    if plot:
        from .sweep_plot import plot_sweep

        plot_sweep(out / "grid.png", grid, runs, records, runs_dir, labels, label_kind,
                   label_name, f"{name} ({X.shape[0]} points)")
    from .report import report_after_run

    report_after_run(out)
    failed = int((table["status"] == "error").sum())
    table.attrs.update(out_dir=str(out), skipped=skipped, ran=len(todo), failed=failed)
    return table


def _check_jobs(n_jobs, scheduler) -> int:
    n_jobs = resolve_jobs(n_jobs)
    if scheduler is not None and n_jobs > 1:
        raise ValueError("give either n_jobs > 1 (local processes) or a Dask scheduler, not both")
    return n_jobs


def _shape(grid: Grid) -> str:
    """``2 methods x 3 perplexity x 2 seeds; umap also x 2 spread``."""
    sizes = [f"{len(grid.methods)} method{'s' if len(grid.methods) > 1 else ''}"]
    sizes += [f"{len(v)} {k}" for k, v in grid.swept.items()]
    sizes.append(f"{len(grid.seeds)} seed{'s' if len(grid.seeds) > 1 else ''}")
    own = [f"{m} also x " + " x ".join(f"{len(v)} {k}" for k, v in params.items())
           for m, params in grid.method_swept.items() if params]
    return " x ".join(sizes) + "".join(f"; {text}" for text in own)


# ---------------------------------------------------------------------------------------------------
# the output folder


def _check_folder(out: Path, fingerprint: dict, force: bool) -> None:
    """Refuse (unless ``force``) a folder of another input, or a non-empty folder that is no sweep's."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"sweep output {out} exists and is not a folder")
    if not out.exists() or force:
        return
    manifest = out / MANIFEST
    if not manifest.exists():
        if any(not _ours(path.name) for path in out.iterdir()):
            raise ValueError(f"sweep output {out} is not empty and holds no sweep ({MANIFEST} "
                             "missing): choose another output folder, or force (--force) to write "
                             "into it")
        return
    try:
        old = json.loads(manifest.read_text(encoding="utf-8"))["input"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"{manifest} is unreadable: choose another output folder, or force "
                         "(--force)") from None
    if any(old.get(k) != fingerprint[k] for k in fingerprint):
        same_shape = (old.get("n"), old.get("dims")) == (fingerprint["n"], fingerprint["dims"])
        raise ValueError(
            f"sweep output {out} holds results for another input ({old.get('name', '?')}, "
            f"{old.get('n')} x {old.get('dims')}"
            + (", other values" if same_shape else "")
            + f"; this one is {fingerprint['n']} x {fingerprint['dims']}): choose another output "
            "folder, or force (--force) to recompute there")


def _ours(name: str) -> bool:
    """A file a sweep keeps in its folder while it runs (the lock, the workers' input elsewhere
    than Linux), not something the user put there."""
    return name == LOCK_NAME or name.startswith(".smallvis-input-")


def _finished(runs, runs_dir: Path, fingerprint: dict, resume: bool):
    """Runs renamed to the ids they were saved under, and the records of those finished."""
    by_hash = {}
    for path in runs_dir.glob("*.json"):
        by_hash.setdefault(path.stem.rsplit("-", 1)[-1], path.stem)
    out, records = [], {}
    for run in runs:
        old = by_hash.get(run.hash)
        if old is not None and old != run.id:
            run = Run(old, run.hash, run.method, run.method_params, run.params, run.seed, run.columns)
        out.append(run)
        if old is not None and resume:
            record = _load_finished(runs_dir, run.id, fingerprint)
            if record is not None:
                records[run.id] = record
    return out, records


def _load_finished(runs_dir: Path, run_id: str, fingerprint: dict) -> dict | None:
    """The record of a run that finished on this input (its JSON, then a loadable .npy), else None."""
    try:
        record = json.loads((runs_dir / f"{run_id}.json").read_text(encoding="utf-8"))
        if (record.get("status") not in FINISHED
                or record.get("input", {}).get("sha256") != fingerprint["sha256"]):
            return None
        Y = np.load(runs_dir / f"{run_id}.npy")
    except (OSError, ValueError, AttributeError):
        return None
    return record if Y.ndim == 2 and Y.shape[0] == fingerprint["n"] else None


def _write_json(path: Path, value) -> None:
    atomic_write(path, lambda fh: fh.write(json.dumps(jsonable(value), indent=1) + "\n"))


def _save_run(runs_dir: Path, run: Run, outcome: dict, fingerprint: dict) -> dict:
    """Write ``<id>.npy`` (when it succeeded), then ``<id>.json``; return the record."""
    Y = outcome.pop("Y", None)
    if Y is not None:
        atomic_write(runs_dir / f"{run.id}.npy", lambda fh: np.save(fh, Y), binary=True)
    first = {k: outcome.pop(k, None) for k in ("status", "error")}
    last = {k: outcome.pop(k) for k in ("result", "itercosts") if k in outcome}
    record = {"id": run.id, "hash": run.hash, **first, "settings": run.settings(),
              "swept": run.columns, **outcome, "input": fingerprint,
              "smallvis_version": __version__,
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), **last}
    record = jsonable(record)
    _write_json(runs_dir / f"{run.id}.json", record)
    return record


def _row(run: Run, record: dict | None) -> dict:
    row = {"id": run.id, "method": run.method, **{k: _cell(v) for k, v in run.columns.items()},
           "seed": run.seed}
    record = record or {}
    metrics = record.get("metrics") or {}
    row.update(final_cost=record.get("final_cost"), iter=record.get("iter"),
               time_secs=record.get("time_secs"), wall_secs=record.get("wall_secs"),
               **{col: metrics.get(key) for col, key in METRIC_COLUMNS.items()},
               status=record.get("status", "pending"), error=record.get("error") or "")
    return row


def _cell(value):
    return json.dumps(jsonable(value)) if isinstance(value, (list, tuple, dict)) else value


def _table(runs, records):
    import pandas as pd

    rows = [_row(run, records.get(run.id)) for run in runs]
    swept = list(dict.fromkeys(k for run in runs for k in run.columns))  # first-seen order
    order = ["id", "method", *swept, *[k for k in rows[0] if k not in swept and k not in
                                       ("id", "method")]]
    frame = pd.DataFrame(rows, columns=order)
    for col in ("final_cost", "time_secs", "wall_secs", *METRIC_COLUMNS):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    frame["iter"] = pd.array(frame["iter"], dtype="Int64")
    return frame


def _write_table(path: Path, runs, records) -> None:
    frame = _table(runs, records)
    atomic_write(path, lambda fh: frame.to_csv(fh, index=False, lineterminator="\n"))


def _progress_line(run: Run, record: dict, done: int, total: int) -> str:
    head = f"[{done}/{total}] {run.id}"
    if record["status"] == "error":
        return f"{head}  FAILED: {record.get('error')}"
    cost, knn = record.get("final_cost"), (record.get("metrics") or {}).get("knn_preservation")
    return (head + (f"  cost {cost:.4g}" if cost is not None else "  cost -")
            + (f"  kNN@{METRIC_K} {knn:.3f}" if knn is not None else "")
            + f"  {record['time_secs']:.2f} s"
            + ("  DIVERGED" if record["status"] == "diverged" else ""))
