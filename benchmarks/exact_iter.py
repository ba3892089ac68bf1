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
    ap.add_argument("--passes", action="store_true",
                    help="also the median time of each kernel call per evaluation (the passes)")
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
    calls = _time_kernels() if args.passes else None
    passes = {name: [] for name in names}
    for _ in range(args.reps):
        for name in names:
            method, engine, state = runs[name]
            if calls is not None:
                calls.clear()
            start = time.perf_counter()
            engine.evaluate(method, state, Y, 1.0, cost=not args.grad_only)
            times[name].append(time.perf_counter() - start)
            if calls is not None:
                passes[name].append(dict(calls))
    base = statistics.median(times["tsne"])
    print(f"n = {args.n}, k = {args.k}, {args.reps} reps"
          f"{', gradient only' if args.grad_only else ''}, load {os.getloadavg()[0]:.1f}")
    for name in names:
        t = statistics.median(times[name])
        print(f"{name:9s} {t * 1000:9.1f} ms  {t / base:5.2f}x tsne")
        if calls is not None:
            for kernel in passes[name][0]:
                k = statistics.median(p.get(kernel, 0.0) for p in passes[name])
                print(f"    {kernel:28s} {k * 1000:9.1f} ms  {k / base:5.2f}x tsne")
    return 0


def _time_kernels() -> dict:
    """Wrap the fused exact engine's parallel kernels so that each call adds its seconds to the
    returned dict (kernel name: seconds), from now on in this process."""
    from smallvis.engines import (exact_ab_kernels, exact_asymmetric_kernels, exact_kernels,
                                  exact_nce_kernels, exact_nerv_kernels, exact_pair_kernels)

    calls = {}

    def wrap(name, fn):
        def timed(*a, **kw):
            start = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                calls[name] = calls.get(name, 0.0) + time.perf_counter() - start
        return timed

    for mod in (exact_kernels, exact_asymmetric_kernels, exact_pair_kernels, exact_ab_kernels,
                exact_nce_kernels, exact_nerv_kernels):
        for attr, fn in list(vars(mod).items()):
            if getattr(getattr(fn, "targetoptions", None), "get", lambda k: None)("parallel"):
                setattr(mod, attr, wrap(attr, fn))
    # the NeRV / JSE row minima from a k-d tree (numpy and scipy, not a kernel)
    from smallvis.engines import exact_nerv
    if hasattr(exact_nerv, "nearest_d2"):
        exact_nerv.nearest_d2 = wrap("nearest_d2", exact_nerv.nearest_d2)
    return calls


if __name__ == "__main__":
    sys.exit(main())
