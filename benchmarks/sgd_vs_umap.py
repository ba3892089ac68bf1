"""Our stochastic engine against umap-learn, side by side in one run on the same data.

    python benchmarks/sgd_vs_umap.py                       # every dataset and tool
    python benchmarks/sgd_vs_umap.py --datasets digits --tools umap-learn,smallvis-umap

Each (dataset, tool) pair runs in its own subprocess, twice: the first ("cold") run includes numba
compilation (umap-learn's and ours), the second ("warm") is what the ratios compare. Settings are
umap-learn's defaults on both sides: 15 neighbours, min_dist 0.1, n_epochs 500 up to 10,000 points
else 200, initial learning rate 1, 5 negative samples per edge sample. Our largevis uses perplexity 5
(3 x 5 = 15 neighbours); our ncvis its reference defaults (15 neighbours, 50 epochs). Reported: wall
time (cold, warm), peak resident memory of the subprocess, kNN preservation at 15 and (n <= 20,000)
trustworthiness at 15, and the ratio of warm times to umap-learn's. Requires ``pip install
umap-learn``. The ncvis package does not build against numpy 2: compare our ncvis rows with the
numbers of a locally patched ncvis 1.5.13 (digits: kNN@15 0.548 in 0.38 s, same machine kind).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

DATASETS = ("digits", "swissroll", "blobs20k", "blobs70k")
TOOLS = ("umap-learn", "smallvis-umap", "smallvis-largevis", "smallvis-ncvis")
TRUST_MAX_N = 20_000


def load(name):
    import numpy as np
    from sklearn import datasets

    if name == "digits":
        return datasets.load_digits().data.astype(np.float64)
    if name == "swissroll":
        return datasets.make_swiss_roll(n_samples=10_000, noise=0.05, random_state=0)[0]
    if name.startswith("blobs"):
        n = int(name[5:-1]) * 1000
        return datasets.make_blobs(n_samples=n, n_features=50, centers=20, random_state=0)[0]
    raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")


def embed(tool, X, seed):
    if tool == "umap-learn":
        import umap

        return umap.UMAP().fit_transform(X)
    import smallvis

    method = {"smallvis-umap": ("umap", {"min_dist": 0.1}),
              "smallvis-largevis": "largevis",
              "smallvis-ncvis": "ncvis"}[tool]
    perplexity = {"smallvis-largevis": 5}.get(tool, 15)
    return smallvis.smallvis(X, method=method, perplexity=perplexity, engine="sgd",
                             random_state=seed)


def child(dataset, tool):
    """Run one pair twice in this process and print one JSON line."""
    import resource

    from smallvis.metrics import knn_preservation, trustworthiness

    X = load(dataset)
    times = []
    for rep in range(2):
        t0 = time.perf_counter()
        Y = embed(tool, X, seed=rep)
        times.append(time.perf_counter() - t0)
    row = dict(dataset=dataset, tool=tool, n=X.shape[0], cold=times[0], warm=times[1],
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    row["knn15"] = knn_preservation(X, Y, 15)
    row["trust15"] = trustworthiness(X, Y, 15) if X.shape[0] <= TRUST_MAX_N else None
    print(json.dumps(row))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--child", nargs=2, metavar=("DATASET", "TOOL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    rows = []
    for dataset in args.datasets.split(","):
        for tool in args.tools.split(","):
            proc = subprocess.run([sys.executable, __file__, "--child", dataset, tool],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{dataset} / {tool} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"done: {dataset} / {tool}", file=sys.stderr)
    base = {r["dataset"]: r["warm"] for r in rows if r["tool"] == "umap-learn"}
    print("| dataset | n | tool | cold s | warm s | warm / umap-learn | peak MB | kNN@15 | trust@15 |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = r["warm"] / base[r["dataset"]] if r["dataset"] in base else float("nan")
        trust = "—" if r["trust15"] is None else f"{r['trust15']:.4f}"
        print(f"| {r['dataset']} | {r['n']} | {r['tool']} | {r['cold']:.2f} | {r['warm']:.2f} | "
              f"{ratio:.2f} | {r['peak_mb']:.0f} | {r['knn15']:.3f} | {trust} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
