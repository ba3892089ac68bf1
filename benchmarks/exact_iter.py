"""One gradient + cost evaluation of the exact engine per method, timed in one process, interleaved
and repeated: the median seconds per evaluation and its ratio to tsne's measured alongside (only
ratios in the same process mean anything on a loaded machine).

    python benchmarks/exact_iter.py --n 8000 --methods ncvis,nerv --reps 5

Data: ``blobs`` of ``benchmarks/zoo_scale.py`` (20 Gaussian blobs in 50-D); each method's P from its
own ``prepare`` (perplexity 30, the modern defaults' method parameters), the coordinates a fixed
random start scaled to spread 10 (about what an optimisation reaches). Each method holds its own
(n, n) input (and a transpose for an asymmetric P): at 20,000 points time a few methods at a time.
Compile / cache load is done before the timings (one warm evaluation at the full size).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8000)
    ap.add_argument("--methods", default="ncvis,nerv,usne,btsne,cetsne,abssne")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--grad-only", action="store_true",
                    help="time the gradient alone (what an iteration without a cost evaluates)")
    args = ap.parse_args(argv)

    from zoo_scale import load

    from smallvis.engines import ExactEngine
    from smallvis.io.data import InputData
    from smallvis.methods import build_method

    X, _ = load("blobs", args.n)
    data = InputData(X)
    names = ["tsne"] + [m for m in args.methods.split(",") if m and m != "tsne"]
    Y = np.random.default_rng(1).normal(scale=10.0, size=(args.n, args.k))
    runs = {}
    for name in names:
        method = build_method(name, perplexity=30)
        engine = ExactEngine()
        state = engine.prepare(method, data)
        engine.evaluate(method, state, Y, 1.0)  # warm: compile or cache load, plans
        runs[name] = (method, engine, state)
        print(f"prepared {name}", file=sys.stderr, flush=True)
    times = {name: [] for name in names}
    for _ in range(args.reps):
        for name in names:
            method, engine, state = runs[name]
            start = time.perf_counter()
            engine.evaluate(method, state, Y, 1.0, cost=not args.grad_only)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["tsne"])
    print(f"n = {args.n}, k = {args.k}, {args.reps} reps"
          f"{', gradient only' if args.grad_only else ''}, load {os.getloadavg()[0]:.1f}")
    for name in names:
        t = statistics.median(times[name])
        print(f"{name:9s} {t * 1000:9.1f} ms  {t / base:5.2f}x tsne")
    return 0


if __name__ == "__main__":
    sys.exit(main())
