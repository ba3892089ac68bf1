"""Every method on every engine that serves it, at growing sizes: wall time per iteration, the time
before the first iteration (affinities, start, compile), peak memory and kNN@15.

    python benchmarks/zoo_scale.py                               # 5,000 / 20,000 / 70,000 points
    python benchmarks/zoo_scale.py --sizes 2000 --methods tsne,ee --iterations 10
    python benchmarks/zoo_scale.py --sizes 70000 --engines fft --data blobs --knn-cache /tmp/zk
    python benchmarks/zoo_scale.py --resume --out zoo.json ...   # go on with an interrupted run
    python benchmarks/zoo_scale.py --table zoo.json              # its markdown tables

Which engines serve a method comes from the catalog (``smallvis.list_methods()``); the dense engine
runs only up to ``--dense-max`` points (its n x n matrices), and a run the memory guard refuses is
recorded with its message. Each run is a fresh process (its own peak memory), with the modern
defaults (``defaults="auto"``, the method's own step size), ``tol=0`` (no early stop) and 2 threads.
A run of ``--iterations`` iterations is the first iterations of the modern defaults' whole run: it
is given that run's schedule (early exaggeration and momentum 0.5 until iteration 250), not the one
``defaults="auto"`` gives a short run. With ``--knn-cache`` each run on bh, fft or sgd is given the
cached neighbour graph (``metric="precomputed"``) and, where the method's start is a PCA of the
data, that start computed from the data: the graph alone would start it from the Laplacian
eigenmap. The exact and dense engines get the data, and so does a method that reads the input
itself (refused on a graph: sgd's mmds, gsne's moments on bh and fft).
Data: ``blobs`` (20 Gaussian blobs in 50-D) and ``digits`` (scikit-learn's 8x8 digits resampled with
replacement to n points plus N(0, 0.5^2) pixel noise: the class structure of real images at any
size, no download). One run per cell: the times are for orientation, not statistics; kNN@15 is that
of the embedding after ``--iterations`` iterations (a check that the run works, not its quality).

With ``--common-layout EXTENT`` each run on a sparse-P engine (bh, fft) also times one gradient
evaluation (no cost, no exaggeration; median of three after one warm call) at one layout shared by
every method: the dataset's classes as 20 Gaussian clusters on a circle, scaled to span ``EXTENT``
(about a converged t-SNE's: ~100 at 70,000 points), and at its own last layout; its extent and the
fft grid are recorded. The in-run time per iteration mixes a method's cost with the grid its
embedding has spread to by then (fft's grid follows the extent up to 1536 nodes per dimension); the
common layout compares the methods at one grid.

With ``--paired`` each run on the exact, dense, bh and fft engines also times one gradient of its
method alternately with one of tsne's (prepared on the same input and engine) at the run's last
layout, three times each after a warm call: the tables then give that ratio. Runs hours apart on a
busy host see its speed drift (tsne's 70,000-point fft iteration took 56 ms and 83-100 ms a few
hours later on the same machine and code), which the ratio of two runs carries and the alternated
ratio does not. It costs each cell tsne's setup: a few seconds on a graph, but on the exact engine
the data's all-pairs calibration (about 45 s at 20,000 points).

Targets (issue "Every cost function on every engine"): exact per-iteration time of every method at
20,000 points within 2x of tsne's on the same engine; fft per-iteration time of every served method at
70,000 points within 2x of tsne's on fft; no method above ~1.5 GB at 70,000 on an approximate engine.
The table printed at the end gives those ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

THREADS = 2
DATASETS = ("blobs", "digits")
MARK = "@@zoo "
NEEDS_DATA = ("needs all pairwise input distances", "needs input coordinates")  # graph refusals
KNN_CACHE_K = 90  # 3 x perplexity 30: what every method on a sparse-P engine reads at most


def load(name: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if name == "blobs":
        from sklearn.datasets import make_blobs

        X, y = make_blobs(n, 50, centers=20, random_state=seed)
    elif name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        rows = rng.integers(0, d.data.shape[0], n)
        X = d.data[rows] + rng.normal(scale=0.5, size=(n, d.data.shape[1]))
        y = d.target[rows]
    else:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    return np.ascontiguousarray(X, dtype=np.float64), y


def _peak_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def neighbours(data: str, n: int, folder: str) -> str:
    """The file of the 90 nearest neighbours of ``data`` at size ``n`` in ``folder``, searched once
    (``nearest_neighbors``' automatic choice) and reused by every run of ``--knn-cache``."""
    path = os.path.join(folder, f"knn_{data}_{n}.npz")
    if not os.path.exists(path):
        from smallvis.io.neighbors import nearest_neighbors

        idx, dist = nearest_neighbors(load(data, n)[0], KNN_CACHE_K, random_state=0)
        np.savez(path, idx=idx, dist=dist)
    return path


def _knn15_from(graph_idx: np.ndarray, Y: np.ndarray) -> float:
    """kNN@15 with the input neighbours taken from the cached graph (its first 15 columns)."""
    from sklearn.neighbors import NearestNeighbors

    out = NearestNeighbors(n_neighbors=16).fit(Y).kneighbors(Y, return_distance=False)[:, 1:]
    inp = graph_idx[:, :15]
    return float(np.mean([np.intersect1d(a, b).size / 15.0 for a, b in zip(inp, out)]))


def user_start(X: np.ndarray, method: str, engine: str, k: int = 2):
    """The start a user with the data ``X`` gets from ``defaults="auto"`` when it is computed from
    the coordinates (the PCA starts ``pcascaled`` and ``spca``), as a matrix for a run given the
    neighbour graph instead of ``X``; None where the start comes from the graph (the ``sgd``
    engine's, a spectral or power start), which the graph run computes itself.

    Without it a graph run (``metric="precomputed"``) starts from the normalised-Laplacian eigenmap,
    not where a user's run starts."""
    from smallvis.io.preprocess import pca_scores
    from smallvis.run.init import PCASCALED_SDEV, rescale, scale_by_first_column
    from smallvis.run.presets import resolve

    given = dict.fromkeys(("Y_init", "Y_init_sdev", "perplexity", "max_iter", "eta", "opt",
                           "exaggeration_factor", "stop_lying_iter", "mom_switch_iter",
                           "min_cost"))
    values = resolve("auto", method, n=X.shape[0], stochastic=engine == "sgd", given=given,
                     method_params={}).values
    name, sdev = values.get("Y_init"), values.get("Y_init_sdev")
    if name not in ("pcascaled", "spca"):
        return None
    scores = pca_scores(X, k)
    if name == "spca":
        return rescale(scores, PCASCALED_SDEV if sdev is None else float(sdev))
    return scale_by_first_column(scores, PCASCALED_SDEV if sdev is None else float(sdev))


def run_schedule(engine: str) -> dict:
    """The early-exaggeration and momentum schedule of the modern defaults' whole run (750
    iterations: exaggeration and momentum 0.5 until iteration 250), given explicitly so that a run
    of ``--iterations`` iterations is the first iterations of that run; without it a 20-iteration
    run gets the schedule ``defaults="auto"`` gives a short run (exaggeration for a third of it).
    Empty on the ``sgd`` engine (no such schedule)."""
    from smallvis.run.presets import MOMENTUM_SWITCH, exaggeration_iterations

    if engine == "sgd":
        return {}
    return {"stop_lying_iter": exaggeration_iterations(None), "mom_switch_iter": MOMENTUM_SWITCH}


def common_layout(labels: np.ndarray, extent: float, seed: int = 0) -> np.ndarray:
    """The shared 2-D layout of ``--common-layout``: each class a Gaussian cluster (sd 1/20 of the
    circle's radius) at its place on a circle, the whole scaled to span ``extent``."""
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    angle = 2.0 * np.pi * np.searchsorted(classes, labels) / classes.size
    Y = np.column_stack([np.cos(angle), np.sin(angle)]) + rng.normal(scale=0.05,
                                                                     size=(labels.size, 2))
    Y -= Y.min(axis=0)
    return np.ascontiguousarray(Y * (extent / float(np.max(Y.max(axis=0)))))


def _capture_evaluations() -> dict:
    """Record the (engine, method, state) of every engine's last evaluation (benchmark only: the
    run's own prepared state, for ``--common-layout`` and ``--paired``)."""
    from smallvis.engines.approx import SparseKLEngine
    from smallvis.engines.dense import DenseEngine
    from smallvis.engines.exact import ExactEngine

    seen = {}

    def patch(cls):
        original = cls.evaluate

        def evaluate(self, method, state, Y, *args, **kwargs):
            seen["last"] = (self, method, state)
            return original(self, method, state, Y, *args, **kwargs)

        cls.evaluate = evaluate

    for cls in (SparseKLEngine, ExactEngine, DenseEngine):
        patch(cls)
    return seen


def _gradient_seconds(engine, method, state, Y, reps: int = 3) -> float:
    engine.evaluate(method, state, Y, 1.0, cost=False, grad=True)  # warm: plans, buffers
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        engine.evaluate(method, state, Y, 1.0, cost=False, grad=True)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _layout_row(engine, method, state, Y) -> dict:
    extent = float(np.max(Y.max(axis=0) - Y.min(axis=0)))
    row = {"eval_s": _gradient_seconds(engine, method, state, Y), "extent": extent}
    if hasattr(engine, "grid") and Y.shape[1] in (1, 2):
        n_boxes, _, L = engine.grid(extent, Y.shape[1])
        row.update(nodes=n_boxes * engine.n_interp, fft_len=2 * L)
    return row


def _paired_row(found, reference, Y, reps: int = 3) -> dict:
    """One gradient of the run's method and one of tsne's, both at ``Y`` on the same engine,
    alternated ``reps`` times after one warm call each (medians): a ratio that a machine whose
    speed drifts over a long run (a busy host) changes far less than the ratio of two runs
    minutes or hours apart."""
    runs = {"eval_s": found, "tsne_eval_s": reference}
    for engine, method, state in runs.values():
        engine.evaluate(method, state, Y, 1.0, cost=False, grad=True)
    times = {key: [] for key in runs}
    for _ in range(reps):
        for key, (engine, method, state) in runs.items():
            start = time.perf_counter()
            engine.evaluate(method, state, Y, 1.0, cost=False, grad=True)
            times[key].append(time.perf_counter() - start)
    row = {key: float(np.median(t)) for key, t in times.items()}
    return {**row, "ratio": row["eval_s"] / row["tsne_eval_s"]}


def child(data: str, n: int, method: str, engine: str, iterations: int,
          knn_file: str | None = None, common: float = 0.0, paired: bool = False) -> dict:
    """One run in this process: the row of the table (with ``knn_file``, the input is that
    neighbour graph: ``metric="precomputed"``; with ``common``, the extent of the shared layout
    at which one gradient evaluation is timed after the run, with one at the run's last layout;
    with ``paired``, one gradient at the run's last layout timed alternately with tsne's on the
    same input and engine, :func:`_paired_row`)."""
    import warnings

    from smallvis import DivergenceError, smallvis
    from smallvis.metrics import knn_preservation

    warnings.simplefilter("ignore")
    X, labels = load(data, n)
    seen = _capture_evaluations() if (common or paired) else {}
    graph, begin = None, {}
    if knn_file:
        with np.load(knn_file) as f:
            graph = (f["idx"], f["dist"])
        Y0 = user_start(X, method, engine)
        begin = {} if Y0 is None else {"Y_init": Y0}
    marks = {}

    attempts = []

    def callback(Y, it, cost):
        if it == 0:  # a run the modern defaults retry with a smaller step starts again
            marks.clear()
            attempts.append(it)
        marks.setdefault(it, time.perf_counter())

    def run(given):
        return smallvis(given, method=method, engine=engine, max_iter=iterations, tol=0,
                        defaults="auto", n_threads=THREADS, random_state=1, ret_extra=True,
                        epoch=iterations, epoch_callback=callback,  # one cost, at the end
                        **run_schedule(engine),
                        **({} if given is X else {"metric": "precomputed", **begin}))

    start = time.perf_counter()
    try:
        try:
            res = run(X if graph is None else graph)
        except ValueError as err:  # a method that reads the input itself (mmds, gsne): the data
            if graph is None or not any(why in str(err) for why in NEEDS_DATA):
                raise
            graph, start = None, time.perf_counter()
            res = run(X)
    except (MemoryError, ValueError) as err:
        return {"status": f"refused: {err}"[:200], "peak_mb": round(_peak_mb())}
    except DivergenceError as err:  # the modern defaults' step size is too large here
        return {"status": f"diverged: {err}"[:200], "peak_mb": round(_peak_mb())}
    end = time.perf_counter()
    first, last = marks.get(0, start), max(marks) if marks else 0
    per_iter = (marks[last] - first) / last if last else float("nan")
    peak = round(_peak_mb())  # before the extra evaluations
    extra = {}
    if common and "last" in seen:
        found = seen["last"]
        extra = {"own": _layout_row(*found, np.ascontiguousarray(res.Y, dtype=np.float64)),
                 "common": _layout_row(*found, common_layout(labels, common))}
    if paired and method != "tsne" and "last" in seen:
        found = seen["last"]
        Y = np.ascontiguousarray(res.Y, dtype=np.float64)
        given = X if graph is None else graph
        smallvis(given, method="tsne", engine=engine, max_iter=1, n_threads=THREADS, Y_init=Y,
                 **({} if graph is None else {"metric": "precomputed"}))
        extra["beside_tsne"] = _paired_row(found, seen["last"], Y)
    return {**extra, "status": "ok", "engine_used": res.engine, "iterations": res.iter,
            "per_iter_s": per_iter, "setup_s": first - start - res.compile_secs,
            "compile_s": res.compile_secs, "total_s": end - start,
            "knn15": (float(knn_preservation(X, res.Y, 15)) if graph is None
                      else _knn15_from(graph[0], res.Y)), "peak_mb": peak,
            "diverged": bool(res.diverged), "attempts": len(attempts),
            "input": "data" if graph is None else "graph"}


def plan(sizes, methods, engines, dense_max):
    from smallvis import list_methods

    for info in list_methods():
        if methods and info.name not in methods:
            continue
        for engine in info.engines:
            if engines and engine not in engines:
                continue
            for n in sizes:
                if engine == "dense" and n > dense_max:
                    continue
                yield info.name, engine, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5000,20000,70000")
    ap.add_argument("--methods", default="", help="comma-separated; default: all")
    ap.add_argument("--engines", default="", help="comma-separated; default: all that serve")
    ap.add_argument("--data", default=",".join(DATASETS))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--exact-iterations", type=int, default=0,
                    help="iterations of the exact and dense engines' runs (0: --iterations)")
    ap.add_argument("--dense-max", type=int, default=5000)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--out", default="zoo_scale.json")
    ap.add_argument("--knn-cache", default="",
                    help="folder: search each dataset's 90 nearest neighbours once and give every "
                         "run on bh, fft and sgd that graph (metric='precomputed'; the PCA start "
                         "computed from the data; kNN@15 against the graph's first 15); the exact "
                         "and dense engines are given the data (their P is over all pairs)")
    ap.add_argument("--common-layout", type=float, default=0.0, metavar="EXTENT",
                    help="also time one gradient evaluation of each bh/fft run at a layout shared "
                         "by every method, spanning EXTENT (0: not)")
    ap.add_argument("--paired", action="store_true",
                    help="also time one gradient of each run's method alternately with one of "
                         "tsne's at the run's last layout (same input and engine): the ratio "
                         "the tables then give, steady on a machine whose speed drifts")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows already in --out and run only the cells it lacks (or "
                         "whose run crashed or was refused the graph)")
    ap.add_argument("--table", nargs="+", metavar="JSON",
                    help="print the markdown tables of these result files and exit")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not (np.isfinite(args.common_layout) and args.common_layout >= 0.0):
        ap.error(f"--common-layout must be a finite extent >= 0 (0: not timed); "
                 f"got {args.common_layout}")
    if args.child:
        row = child(**json.loads(args.child))
        print(MARK + json.dumps(row), flush=True)
        return 0
    if args.table:
        rows = []
        for path in args.table:
            try:
                with open(path) as fh:
                    rows += json.load(fh)
            except (OSError, ValueError) as err:
                ap.error(f"--table: cannot read results file {path!r}: {err}")
        print(tables(rows))
        return 0
    if min(args.iterations, args.exact_iterations or 1) < 1:
        ap.error("--iterations and --exact-iterations must be at least 1")
    sizes = [int(s) for s in args.sizes.split(",")]
    methods = set(filter(None, args.methods.split(",")))
    engines = set(filter(None, args.engines.split(",")))
    rows = []
    if args.resume and os.path.exists(args.out):
        with open(args.out) as fh:  # a crash ("failed") is run again: it may have been fixed;
            rows = [r for r in json.load(fh) if not _rerun(r)]  # so is a graph refusal
    done = {_cell(r) for r in rows}
    env = {**os.environ, "NUMBA_NUM_THREADS": str(THREADS)}
    for data in args.data.split(","):
        for method, engine, n in plan(sizes, methods, engines, args.dense_max):
            if (data, n, method, engine) in done:
                continue
            its = (args.exact_iterations or args.iterations) if engine in ("exact", "dense") \
                else args.iterations
            spec = dict(data=data, n=n, method=method, engine=engine, iterations=its)
            if args.common_layout and engine in ("bh", "fft"):
                spec["common"] = args.common_layout
            if args.paired and engine != "sgd":
                spec["paired"] = True
            if args.knn_cache and engine in ("bh", "fft", "sgd"):
                os.makedirs(args.knn_cache, exist_ok=True)
                spec["knn_file"] = neighbours(data, n, args.knn_cache)
            try:
                proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                                      capture_output=True, text=True, timeout=args.timeout, env=env)
                line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)), None)
                row = json.loads(line[len(MARK):]) if line else {
                    "status": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
            except subprocess.TimeoutExpired:
                row = {"status": f"timeout after {args.timeout} s"}
            row = {**spec, **row}
            rows.append(row)
            print(_format(row), flush=True)
            with open(args.out, "w") as fh:
                json.dump(rows, fh, indent=1)
    print(_ratios(rows))
    return 0


def _rerun(row: dict) -> bool:
    """Whether ``--resume`` runs this row's cell again: it crashed, or its method was refused the
    neighbour graph (the run now gives it the data)."""
    status = str(row.get("status"))
    return status.startswith("failed") or (status.startswith("refused")
                                           and any(why in status for why in NEEDS_DATA))


def _cell(row: dict) -> tuple:
    return row["data"], row["n"], row["method"], row["engine"]


ENGINES = ("dense", "exact", "bh", "fft", "sgd")


def tables(rows) -> str:
    """One markdown table per (dataset, size): a row per method, a column per engine with the
    time per iteration, its ratio to tsne's on that engine and kNN@15 (``ms · ×tsne · kNN``), and
    the largest peak memory of the approximate engines' runs (ratios: :func:`_ratio_text`). A later
    row of a cell replaces an earlier one (a rerun)."""
    cells = {_cell(r): r for r in rows}
    out = []
    for data, n in sorted({(c[0], c[1]) for c in cells}, key=lambda k: (k[0], k[1])):
        here = {c[2:]: r for c, r in cells.items() if c[:2] == (data, n)}
        engines = [e for e in ENGINES if any(e == key[1] for key in here)]
        methods = list(dict.fromkeys(key[0] for key in here))
        base = {e: here[("tsne", e)]["per_iter_s"] for e in engines
                if here.get(("tsne", e), {}).get("status") == "ok"}
        out += [f"**{data}, {n:,} points** (time per iteration · × tsne's on that engine · kNN@15)", "",
                "| method | " + " | ".join(engines) + " | peak MB (bh, fft, sgd) |",
                "|---|" + "--:|" * (len(engines) + 1)]
        for method in methods:
            line, peaks = [], []
            for e in engines:
                r = here.get((method, e))
                if r is None:
                    line.append("·")
                    continue
                if r.get("status") != "ok":
                    line.append(str(r.get("status") or "failed").split()[0].rstrip(":"))
                    continue
                ratio = _ratio_text(r, e, base)
                flag = " (diverged)" if r.get("diverged") else ""
                line.append(f"{_duration(r['per_iter_s'])}{ratio} · {r['knn15']:.3f}{flag}")
                if e in ("bh", "fft", "sgd") and r.get("peak_mb"):
                    peaks.append(r["peak_mb"])
            out.append(f"| {method} | " + " | ".join(line)
                       + f" | {max(peaks) if peaks else '·'} |")
        out.append("")
    return "\n".join(out)


def _ratio_text(row: dict, engine: str, base: dict) -> str:
    """A cell's ratio to tsne's: on the exact and dense engines the time per iteration over tsne's
    run's (the issue's target), with the ``--paired`` gradient ratio after it (``g``); on the
    others the paired ratio where the row has it, else the time per iteration over tsne's."""
    paired = row["beside_tsne"]["ratio"] if "beside_tsne" in row else None
    per_iter = row["per_iter_s"] / base[engine] if engine in base else None
    if engine in ("exact", "dense") and per_iter is not None:
        return f" · {per_iter:.2f}×" + (f" (g {paired:.2f}×)" if paired is not None else "")
    if paired is not None:
        return f" · {paired:.2f}×"
    return f" · {per_iter:.2f}×" if per_iter is not None else ""


def _duration(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1.0 else f"{seconds * 1000:.3g} ms"


def _format(row: dict) -> str:
    head = f"{row['data']:6s} {row['n']:6d} {row['method']:9s} {row['engine']:5s}"
    if row.get("status") != "ok":
        return f"{head}  {row.get('status')}"
    return (f"{head}  {row['per_iter_s'] * 1000:9.1f} ms/it  setup {row['setup_s']:7.1f} s  "
            f"kNN@15 {row['knn15']:.3f}  {row['peak_mb']:6d} MB"
            + ("  DIVERGED" if row["diverged"] else "")
            + (f"  ({row['attempts']} attempts)" if row.get("attempts", 1) > 1 else "")
            + "".join(f"\n{'':27s}{key} layout (extent {row[key]['extent']:.3g}"
                      + (f", {row[key]['nodes']} nodes" if "nodes" in row[key] else "")
                      + f"): {row[key]['eval_s'] * 1000:.1f} ms / gradient"
                      for key in ("own", "common") if key in row)
            + (f"\n{'':27s}beside tsne's (alternated): {row['beside_tsne']['eval_s'] * 1000:.1f} ms "
               f"/ {row['beside_tsne']['tsne_eval_s'] * 1000:.1f} ms per gradient = "
               f"{row['beside_tsne']['ratio']:.2f}x" if "beside_tsne" in row else ""))


def _ratios(rows) -> str:
    """Per-iteration time of each method over tsne's on the same (data, n, engine)."""
    ok = [r for r in rows if r.get("status") == "ok"]
    base = {(r["data"], r["n"], r["engine"]): r["per_iter_s"] for r in ok if r["method"] == "tsne"}
    lines = ["", "per-iteration time / tsne's on the same data, size and engine:"]
    for r in ok:
        b = base.get((r["data"], r["n"], r["engine"]))
        if b and r["method"] != "tsne":
            lines.append(f"  {r['data']:6s} {r['n']:6d} {r['engine']:5s} {r['method']:9s} "
                         f"{r['per_iter_s'] / b:5.2f}x")
    common = {(r["data"], r["n"], r["engine"]): r["common"]["eval_s"] for r in ok
              if r["method"] == "tsne" and "common" in r}
    if common:
        lines += ["", "one gradient at the common layout / tsne's there:"]
    for r in ok:
        b = common.get((r["data"], r["n"], r["engine"]))
        if b and r["method"] != "tsne" and "common" in r:
            lines.append(f"  {r['data']:6s} {r['n']:6d} {r['engine']:5s} {r['method']:9s} "
                         f"{r['common']['eval_s'] / b:5.2f}x")
    paired = [r for r in ok if "beside_tsne" in r]
    if paired:
        lines += ["", "one gradient / tsne's at the run's last layout, alternated (--paired):"]
    for r in paired:
        lines.append(f"  {r['data']:6s} {r['n']:6d} {r['engine']:5s} {r['method']:9s} "
                     f"{r['beside_tsne']['ratio']:5.2f}x")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
