"""Every registered method on one dataset: a grid of small multiples and a table of costs and kNN
preservation, to check that each method has its character (compact clusters for t-SNE-like
methods, spread-out layouts for MDS, ...).

    python benchmarks/gallery.py iris gallery-iris.png
    python benchmarks/gallery.py s1k gallery-s1k.png --max-iter 1000

Step sizes (and tee's min_cost) come from :func:`smallvis.methods.step_sizes.suggested_settings`, the rule
``smallvis compare`` uses. Duplicate rows are removed first (Sammon's stress divides by the input
distance).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from smallvis import smallvis
from smallvis.datasets import load_dataset
from smallvis.methods import REGISTRY
from smallvis.metrics import knn_preservation
from smallvis.plot import plot_grid
from smallvis.methods.step_sizes import suggested_params, suggested_settings


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    ap.add_argument("plot")
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--perplexity", type=float, default=30)
    ap.add_argument("--methods", default=None, help="comma-separated (default: all)")
    args = ap.parse_args(argv)
    ds = load_dataset(args.dataset)
    X, first = np.unique(ds.X, axis=0, return_index=True)
    labels = None if ds.labels is None else np.asarray(ds.labels)[first]
    names = args.methods.split(",") if args.methods else list(REGISTRY)
    panels = []
    print(f"{'method':10s} {'cost':>10s} {'iter':>5s} {'knn15':>6s} {'secs':>6s}")
    for name in names:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params = suggested_params(name, len(X))
            res = smallvis(X, method=(name, params) if params else name,
                           perplexity=args.perplexity, Y_init="spca",
                           max_iter=args.max_iter, random_state=42, ret_extra=True,
                           **suggested_settings(name, len(X)))
        secs = time.perf_counter() - start
        ok = np.all(np.isfinite(res.Y)) and not res.diverged
        knn = knn_preservation(X, res.Y, 15) if ok else float("nan")
        cost = list(res.itercosts.values())[-1] if res.itercosts else float("nan")
        print(f"{name:10s} {cost:10.4g} {res.iter:5d} {knn:6.3f} {secs:6.2f}", flush=True)
        panels.append((f"{name}  knn15 {knn:.2f}", res.Y if ok else None))
    plot_grid(panels, labels, args.plot, ncols=7)


if __name__ == "__main__":
    main()
