"""Reading a CSV: smallvis's ``read_table`` against ``pandas.read_csv`` on the same file.

    python benchmarks/csv_read.py [--rows 20000] [--cols 65] [--repeats 3]

Writes a ``rows x cols`` CSV of random numbers (with a header and a text label column, as a user's
table has) to a temporary folder, then reads it in a fresh process per reader and repeat, so each
measures its own peak: wall time, the peak resident memory above the process's size after its
imports (``ru_maxrss``), and the peak traced by ``tracemalloc`` (NumPy and Python objects; pandas'
C parser buffers are not traced, hence both). ``read_table`` also checks the header, the column
types and the values; pandas is given the header and reads the numbers only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np, pandas as pd
from smallvis.io.tabular import read_table
path, which, traced = sys.argv[1], sys.argv[2], sys.argv[3] == "traced"
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if traced:  # tracing slows every Python allocation down: a separate run, not timed
    tracemalloc.start()
start = time.perf_counter()
if which == "pandas":
    X = pd.read_csv(path).select_dtypes("number").to_numpy(dtype=np.float64)
else:
    X = read_table(path).X
secs = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"secs": secs, "rss_mib": (peak - base) / 1024,
                  "traced_mib": tracemalloc.get_traced_memory()[1] / 2**20 if traced else None,
                  "shape": list(X.shape)}))
"""


def write_table(path: Path, rows: int, cols: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(rows, cols))
    labels = np.array(["alpha", "beta", "gamma"])[np.arange(rows) % 3]
    with open(path, "w") as fh:
        fh.write(",".join(f"x{j + 1}" for j in range(cols)) + ",label\n")
        for row, label in zip(X, labels):
            fh.write(",".join(repr(float(v)) for v in row) + f",{label}\n")
    return X


def measure(path: Path, which: str, how: str = "timed") -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), which, how],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--cols", type=int, default=65)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.csv"
        X = write_table(path, args.rows, args.cols)
        size = path.stat().st_size / 2**20
        print(f"{args.rows} x {args.cols} CSV (+ a label column), {size:.1f} MiB")
        results = {}
        for which in ("pandas", "smallvis"):
            runs = [measure(path, which) for _ in range(args.repeats)]
            assert all(r["shape"] == list(X.shape) for r in runs), runs
            results[which] = {k: min(r[k] for r in runs) for k in ("secs", "rss_mib")}
            results[which]["traced_mib"] = measure(path, which, "traced")["traced_mib"]
        print(f"{'reader':<28}{'time (s)':>10}{'peak RSS (MiB)':>16}{'traced (MiB)':>14}")
        for which, label in (("pandas", "pandas.read_csv"), ("smallvis", "smallvis read_table")):
            r = results[which]
            print(f"{label:<28}{r['secs']:>10.3f}{r['rss_mib']:>16.1f}{r['traced_mib']:>14.1f}")
        p, s = results["pandas"], results["smallvis"]
        print(f"ratio smallvis / pandas: time {s['secs'] / p['secs']:.2f}, peak RSS "
              f"{s['rss_mib'] / max(p['rss_mib'], 1e-9):.2f}, traced "
              f"{s['traced_mib'] / max(p['traced_mib'], 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
