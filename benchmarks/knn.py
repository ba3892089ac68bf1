"""Nearest-neighbour searches side by side: exact, our NN-descent, pynndescent.

    python benchmarks/knn.py                                   # 20k and 70k x 50, k = 15 and 90
    python benchmarks/knn.py --sizes 20000 --ks 15 --tools nndescent,pynndescent
    python benchmarks/knn.py --sizes 70000 --no-compile   # fresh and warm only (numba's usual cache)

Data: ``make_blobs(n, 50, centers=20, random_state=0)`` (blobs20k / blobs70k of the other
benchmarks: 20 Gaussian clusters, 50-D inside each, a hard case for graph-based searches). Each
(n, k, tool) runs in its own subprocess, three ways for the approximate searches:

- **compile s**: a fresh process whose numba cache folder (``NUMBA_CACHE_DIR``) is empty: import,
  compilation and the search;
- **fresh s**: a fresh process with the cache filled by the previous one: import, loading the
  compiled kernels and the search (what a user sees from the second run on);
- **warm s**: the same search again in that process.

The exact search runs once (fresh). **recall** is the mean fraction of the true ``k`` nearest
neighbours found, over 2,000 random rows (exact neighbours of those rows by brute force). Seeds are
fixed; threads are the machine's (numba's default). Timings depend on the machine's load: compare
rows of one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TOOLS = ("exact", "nndescent", "pynndescent")
SAMPLE = 2000


def load(n):
    import numpy as np
    from sklearn.datasets import make_blobs

    return np.ascontiguousarray(make_blobs(n_samples=n, n_features=50, centers=20,
                                           random_state=0)[0])


def child(n, k, tool, reps):
    X = load(n)
    t0 = time.perf_counter()
    from smallvis.io.neighbors import nearest_neighbors

    imported = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        idx, _ = nearest_neighbors(X, k, method=tool, random_state=0)
        times.append(time.perf_counter() - t)
    fresh = imported + times[0]  # the import counts to the first search
    import numpy as np

    from smallvis.io.neighbors import query_neighbors

    rows = np.random.default_rng(0).choice(n, size=min(SAMPLE, n), replace=False)
    true = query_neighbors(X[rows], X, k + 1)[0]
    recall = np.mean([np.intersect1d(idx[r], t[t != r][:k]).size for r, t in zip(rows, true)]) / k
    print(json.dumps({"n": n, "k": k, "tool": tool, "fresh": fresh,
                      "warm": times[1] if reps > 1 else None, "recall": float(recall)}))


def run_child(n, k, tool, reps, env=None):
    proc = subprocess.run([sys.executable, __file__, "--child", str(n), str(k), tool, str(reps)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        print(f"{n} / {k} / {tool} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,70000")
    parser.add_argument("--ks", default="15,90")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the empty-cache run: fresh and warm with numba's cache as "
                        "it is (fill it first, e.g. with a small run)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        n, k, tool, reps = args.child
        child(int(n), int(k), tool, int(reps))
        return 0
    rows = []
    for n in map(int, args.sizes.split(",")):
        for k in map(int, args.ks.split(",")):
            for tool in args.tools.split(","):
                if tool == "exact":
                    row = run_child(n, k, tool, 1)
                    if row:
                        row["compile"] = None
                elif args.no_compile:
                    row = run_child(n, k, tool, 2)  # numba's cache as it is
                    if row:
                        row["compile"] = None
                else:
                    with tempfile.TemporaryDirectory() as cache:
                        cold = run_child(n, k, tool, 1, {"NUMBA_CACHE_DIR": cache})
                        row = run_child(n, k, tool, 2, {"NUMBA_CACHE_DIR": cache})
                    if row:
                        row["compile"] = cold["fresh"] if cold else None
                if row:
                    rows.append(row)
                    print(f"done: {json.dumps(row)}", file=sys.stderr, flush=True)
    print(f"{os.cpu_count()} CPUs, load average (1, 5, 15 min) at the end: "
          f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("| n | k | search | compile s | fresh s | warm s | recall |")
    print("|---:|---:|---|---:|---:|---:|---:|")

    def fmt(v):
        return "—" if v is None else f"{v:.2f}"

    for r in rows:
        print(f"| {r['n']} | {r['k']} | {r['tool']} | {fmt(r['compile'])} | {fmt(r['fresh'])} | "
              f"{fmt(r['warm'])} | {r['recall']:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
