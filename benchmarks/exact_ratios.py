"""Each method's exact-engine evaluation against tsne's, timed in one process and interleaved
(tsne, m, tsne, m, ..., tsne): the median of the ratios of each of its times to the mean of
tsne's either side, so that the load other jobs put on the machine cancels (the answer to "how
many tsne evaluations is one of this method's").

    python benchmarks/exact_ratios.py --n 20000                    # every natively served method
    python benchmarks/exact_ratios.py --n 4000 --methods hssne,ncvis --rounds 5 --grad-only

Data: ``blobs`` of ``benchmarks/zoo_scale.py`` (20 Gaussian blobs in 50-D); each method's P from its
own ``prepare`` (perplexity 30); the coordinates a fixed random start scaled to spread 10 and, in
turn with it, that start moved by about 1 % (a step: NCVis's profiled normaliser then takes an
optimisation's Newton steps, not the one pass of a converged start). Methods whose P is made by the
same recipe share one P (each its own state): at 20,000 points P is 3.2 GB, and at most tsne's P,
one other P (and its transpose, for an asymmetric one) and the data's distances while a P is made
are alive at once. The NeRV / JSE family is left out by default (its own benchmark,
``exact_iter.py --passes``). One warm evaluation of each method (compile or cache load, the
engine's plan) comes before its rounds. Prints a line per method as it is measured.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

MIXTURES = ("nerv", "snerv", "bnerv", "rsrnerv", "jse", "sjse", "rsrjse")


def _shared_affinities():
    """Make ``Method.prepare`` reuse the last P of the same recipe and perplexity (a cache of one
    besides tsne's, which ``keep`` pins); returns the cache (key: affinities)."""
    from smallvis.methods import base

    cache = {}
    make = base.input_affinities

    def shared(data, perplexity, recipe, extras=frozenset()):
        key = (repr(perplexity), repr(recipe), tuple(sorted(extras)))
        if key not in cache:
            for old in [k for k in cache if k != "keep" and k != cache.get("keep")]:
                del cache[old]
            cache[key] = make(data, perplexity, recipe, extras)
            data.release()
        return cache[key]

    base.input_affinities = shared
    return cache


def _evaluate(run, Ys, cost):
    """Seconds of one evaluation of ``run`` at the next of the layouts ``Ys`` (in turn: NCVis's
    profiled normaliser then takes the Newton steps of an optimisation, not the one pass of a
    converged start)."""
    method, engine, state, turn = run
    Y = Ys[turn[0] % len(Ys)]
    turn[0] += 1
    start = time.perf_counter()
    engine.evaluate(method, state, Y, 1.0, cost=cost)
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--methods", default="",
                    help="comma-separated, measured in this order (those of one recipe together: "
                         "one P besides tsne's is kept); default: every method the exact engine "
                         "serves natively but the NeRV / JSE family")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--grad-only", action="store_true", help="time the gradient alone")
    args = ap.parse_args(argv)

    from zoo_scale import load

    from smallvis.engines import ExactEngine
    from smallvis.engines.exact import fused_methods
    from smallvis.io.data import InputData
    from smallvis.methods import build_method

    names = [m for m in args.methods.split(",") if m and m != "tsne"]
    methods = {m: build_method(m, perplexity=30)
               for m in ["tsne"] + (names or list(fused_methods()))}
    if not names:  # tsne's P first, then each other recipe's methods together
        recipe = {m: repr(getattr(methods[m], "recipe", None)) for m in methods}
        order = list(dict.fromkeys(recipe.values()))
        names = sorted((m for m in methods if m != "tsne" and m not in MIXTURES),
                       key=lambda m: order.index(recipe[m]))
    cache = _shared_affinities()
    data = InputData(load("blobs", args.n)[0])
    rng = np.random.default_rng(1)
    Y = rng.normal(scale=10.0, size=(args.n, args.k))
    Y = (Y, 1.01 * Y + rng.normal(scale=0.01, size=Y.shape))  # two nearby layouts, in turn
    cost = not args.grad_only

    def ready(name):
        engine = ExactEngine()
        state = engine.prepare(methods[name], data)
        data.release()
        run = (methods[name], engine, state, [0])
        _evaluate(run, Y, cost)  # warm
        return run

    tsne = ready("tsne")
    cache["keep"] = next(k for k in cache if k != "keep")
    print(f"n = {args.n}, k = {args.k}, {args.rounds} rounds, "
          f"{'gradient only' if args.grad_only else 'cost and gradient'}; "
          f"method  median s  tsne median s  x tsne (median of rounds)  load", flush=True)
    for name in names:
        try:
            run = ready(name)
        except (MemoryError, ValueError) as err:
            print(f"{name:9s} not run: {err}", flush=True)
            continue
        mine, base, ratios = [], [_evaluate(tsne, Y, cost)], []
        for _ in range(args.rounds):  # each of its times against the mean of tsne's either side
            mine.append(_evaluate(run, Y, cost))
            base.append(_evaluate(tsne, Y, cost))
            ratios.append(mine[-1] / (0.5 * (base[-2] + base[-1])))
        print(f"{name:9s} {statistics.median(mine):8.2f} {statistics.median(base):8.2f} "
              f"{statistics.median(ratios):6.2f}x  (min {min(ratios):.2f}, max {max(ratios):.2f})"
              f"  load {os.getloadavg()[0]:.1f}", flush=True)
        del run
    return 0


if __name__ == "__main__":
    sys.exit(main())
