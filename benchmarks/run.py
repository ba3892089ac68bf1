"""Our t-SNE engines against openTSNE and scikit-learn, side by side in one run on the same data.

    python benchmarks/run.py                          # every dataset and tool (an hour or more)
    python benchmarks/run.py --datasets digits,blobs5k --tools smallvis-exact,opentsne-bh
    python benchmarks/run.py --quick --out results.json  # every pair on 300 points

Each (dataset, tool) pair runs in a fresh subprocess with 2 threads. Ours first embeds 200 random
points with the same engine there (numba compilation: the "compile s" column), then the timed call.
Wall s times the embedding call alone (affinities, initialisation, 750 iterations); peak MB is the
child's peak resident memory, base MB the same after imports and data loading. The shared settings
are in ``_run_tools.py``. Quality: kNN@15 (exact neighbours, all points) and scikit-learn's
trustworthiness at 15 (on a fixed random 5,000 points when n > 5,000). Prints markdown tables (the
main one, then our wall time over each peer's); ``--out`` also writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _run_tools as rt  # noqa: E402

METRIC_K = 15
TRUST_MAX_N = 5_000  # trust@15 on a fixed random subsample of this many points above it
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")
VERSIONS = ("smallvis", "numpy", "scipy", "numba", "openTSNE", "scikit-learn", "pynndescent")


def machine() -> dict:
    """CPU model, cores, memory, OS and package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        ram = None
    versions = {"python": platform.python_version()}
    for name in VERSIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable, "ram_gib": ram,
            "os": platform.platform(), "versions": versions, "load_start": _load()}


def _load() -> float | None:
    """The 1-minute load average: other work on the machine inflates wall times."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def availability(tool: rt.Tool) -> str | None:
    """The note "not available" for one of our engines this build lacks, else None."""
    if tool.kind != "smallvis":
        return None
    from smallvis.engines import ENGINES

    return None if tool.variant in ENGINES else "not available"


def run_child(dataset: str, tool: str, quick: bool, timeout: float, workdir: str) -> dict:
    """Run one pair in a fresh process; the row (with ``status``) and the embedding under ``Y``."""
    y_path = os.path.join(workdir, f"{dataset}-{tool}.npy")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", dataset, tool, y_path]
    if quick:
        cmd.append("--quick")
    env = dict(os.environ, **{name: str(rt.THREADS) for name in THREAD_VARIABLES})
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": "timeout", "note": f"timeout: killed after {timeout:g} s"}
    lines = [line for line in out.splitlines() if line.startswith(rt.MARK)]
    if proc.returncode != 0 or not lines:
        last = (err.strip().splitlines() or ["no output"])[-1]
        print(f"{dataset} / {tool} failed:\n{err[-3000:]}", file=sys.stderr)
        return {"status": "failed", "note": f"failed: {last[:200]}"}
    row = json.loads(lines[-1][len(rt.MARK):])
    row.update(status="ok", note="", Y=np.load(y_path))
    os.remove(y_path)
    return row


def quality(X: np.ndarray, Y: np.ndarray, trust_idx) -> dict:
    """kNN@15 on every point (exact neighbours); trust@15 on ``trust_idx`` (None: every point)."""
    from smallvis.metrics import knn_preservation, trustworthiness

    if not np.all(np.isfinite(Y)):
        return {"knn15": None, "trust15": None, "note": "non-finite coordinates"}
    sub = slice(None) if trust_idx is None else trust_idx
    return {"knn15": knn_preservation(X, Y, METRIC_K),
            "trust15": trustworthiness(X[sub], Y[sub], METRIC_K)}


def run_dataset(name: str, tools: list[str], args, workdir: str) -> list[dict]:
    X = rt.load(name, args.quick)
    n = X.shape[0]
    trust_idx = None
    if n > TRUST_MAX_N:
        trust_idx = np.sort(np.random.default_rng(rt.SEED).choice(n, TRUST_MAX_N, replace=False))
    rows = []
    for tool_name in tools:
        tool = rt.TOOLS[tool_name]
        if tool.only_on and name not in tool.only_on:
            continue
        row = {"dataset": name, "n": n, "dims": X.shape[1], "tool": tool_name}
        reason = availability(tool) or rt.skip_reason(tool, n)
        if reason:
            row.update(status="not available" if reason == "not available" else "skipped",
                       note=reason)
        else:
            print(f"running {name} / {tool_name} ...", file=sys.stderr, flush=True)
            row["load_before"] = _load()
            row.update(run_child(name, tool_name, args.quick, args.timeout, workdir))
        if "Y" in row:
            row.update(quality(X, row.pop("Y"), trust_idx))
            print(f"  {row['wall_s']:.2f} s, kNN@15 {_num(row['knn15'], '.3f')}", file=sys.stderr)
        rows.append(row)
    return rows


def _num(value, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def main_table(rows: list[dict]) -> list[str]:
    columns = (("wall s", "wall_s", ".2f"), ("CPU s", "cpu_s", ".1f"),
               ("compile s", "compile_s", ".2f"), ("peak MB", "peak_mb", ".0f"),
               ("base MB", "base_mb", ".0f"), ("kNN@15", "knn15", ".3f"),
               ("trust@15", "trust15", ".4f"))
    out = ["| dataset | n | tool | " + " | ".join(c[0] for c in columns) + " | note |",
           "|---|---:|---|" + "---:|" * len(columns) + "---|"]
    for r in rows:
        cells = " | ".join(_num(r.get(key), fmt) for _, key, fmt in columns)
        out.append(f"| {r['dataset']} | {r['n']} | {r['tool']} | {cells} | {r['note']} |")
    return out


def ratio_table(rows: list[dict]) -> list[str]:
    """Our wall time over each peer's, per dataset (< 1: ours is faster)."""
    ok = [r for r in rows if r["status"] == "ok"]
    peers = [t for t in rt.TOOLS
             if rt.TOOLS[t].kind != "smallvis" and any(r["tool"] == t for r in ok)]
    ours = [r for r in ok if rt.TOOLS[r["tool"]].kind == "smallvis"]
    if not peers or not ours:
        return []
    out = ["| dataset | ours | " + " | ".join(f"/ {p}" for p in peers) + " |",
           "|---|---|" + "---:|" * len(peers)]
    for r in ours:
        wall = {p["tool"]: p["wall_s"] for p in ok if p["dataset"] == r["dataset"]}
        cells = [f"{r['wall_s'] / wall[p]:.2f}" if p in wall else "—" for p in peers]
        out.append(f"| {r['dataset']} | {r['tool']} | " + " | ".join(cells) + " |")
    return out


def header(info: dict, quick: bool) -> list[str]:
    v = info["versions"]
    ram = "?" if info["ram_gib"] is None else f"{info['ram_gib']:.1f} GiB"
    return [
        "# t-SNE: smallvis against openTSNE and scikit-learn" + (" (--quick: 300 points)" if quick
                                                                 else ""),
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable), "
        f"{ram} RAM; "
        f"{info['os']}; " + ", ".join(f"{k} {val}" for k, val in v.items() if val) + ". "
        f"1-minute load average at start {_num(info['load_start'], '.2f')}, at end "
        f"{_num(info['load_end'], '.2f')} (other work on the machine inflates wall times).",
        "",
        f"Settings (every tool, as far as each allows): perplexity {rt.PERPLEXITY}; {rt.ITERS} "
        f"iterations = {rt.EARLY_ITERS} with early exaggeration {rt.EXAGGERATION:g} (momentum "
        f"{rt.MOMENTUM}) then {rt.ITERS - rt.EARLY_ITERS} without (momentum {rt.FINAL_MOMENTUM}); "
        f"learning rate max(200, n/12) in openTSNE's units (ours and scikit-learn include the "
        f"gradient's factor 4 and get a quarter of it); PCA init; BH theta {rt.THETA}; "
        f"{rt.THREADS} threads; seed {rt.SEED}; no early stopping. opentsne-default: "
        f"openTSNE.TSNE(n_jobs={rt.THREADS}) with its defaults.",
        "",
        "Each row is a fresh process. wall s: the embedding call only; CPU s: its user + system "
        f"time (all threads). compile s: our numba warm-up ({rt.WARM_N} random points, same "
        "engine) before it, in the same process. peak MB: the process's peak resident memory "
        "(VmHWM: its ru_maxrss, less what Linux carries over from the parent; ours includes the "
        "warm-up's compilation); base MB: the same after imports and data loading. kNN@15: mean "
        "fraction of each point's exact 15 nearest input neighbours among its 15 nearest in the "
        "embedding (every point; exact, blocked search). trust@15: scikit-learn trustworthiness, "
        f"on a fixed random subsample of {TRUST_MAX_N:,} points when n > {TRUST_MAX_N:,}.",
        "",
    ]


def parse_names(value: str, choices, what: str) -> list[str]:
    from smallvis._util.names import match_name

    return [match_name(v, choices, what) for v in value.split(",") if v.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(rt.DATASETS),
                        help=f"comma-separated, from: {', '.join(rt.DATASETS)}")
    parser.add_argument("--tools", default=",".join(rt.TOOLS),
                        help=f"comma-separated, from: {', '.join(rt.TOOLS)} (smallvis-exact-1000 "
                             "and opentsne-default run on digits only)")
    parser.add_argument("--quick", action="store_true",
                        help=f"every dataset subsampled to {rt.QUICK_N} points (a smoke run)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per (dataset, tool) run before it is killed (default 900)")
    parser.add_argument("--out", help="also write machine, settings and rows to this JSON file")
    parser.add_argument("--child", nargs=3, metavar=("DATASET", "TOOL", "Y_PATH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        dataset, tool, y_path = args.child
        rt.child(dataset, tool, args.quick, y_path)
        return 0
    if args.timeout <= 0:
        parser.error(f"--timeout must be positive; got {args.timeout:g}")
    try:
        datasets = parse_names(args.datasets, rt.DATASETS, "dataset")
        tools = parse_names(args.tools, rt.TOOLS, "tool")
    except ValueError as exc:
        parser.error(str(exc))
    info = machine()
    rows = []
    with tempfile.TemporaryDirectory(prefix="smallvis-bench-") as workdir:
        for name in datasets:
            rows.extend(run_dataset(name, tools, args, workdir))
    info["load_end"] = _load()
    ratios = ratio_table(rows)
    lines = header(info, args.quick) + main_table(rows)
    if ratios:
        lines += ["", "Our wall time / the peer's (< 1: ours is faster):", ""] + ratios
    print("\n".join(lines))
    if args.out:
        settings = {"perplexity": rt.PERPLEXITY, "iters": rt.ITERS, "early_iters": rt.EARLY_ITERS,
                    "exaggeration": rt.EXAGGERATION, "momentum": [rt.MOMENTUM, rt.FINAL_MOMENTUM],
                    "learning_rate_opentsne_units": "max(200, n/12)", "theta": rt.THETA,
                    "threads": rt.THREADS, "seed": rt.SEED, "quick": args.quick,
                    "trust_max_n": TRUST_MAX_N, "timeout_s": args.timeout}
        with open(args.out, "w") as f:
            json.dump({"machine": info, "settings": settings, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
