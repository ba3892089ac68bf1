"""The search behind ``defaults_table.json``: candidate modern settings per method against its gallery
run, on the de-duplicated datasets (kNN@15, random-triplet accuracy, seconds). Appends one JSON line
per run to ``--log`` and skips (method, dataset, candidate) triples already there, so it can be
stopped and resumed.

    python benchmarks/explore_defaults.py --datasets iris,s1k --log explore.jsonl
    python benchmarks/explore_defaults.py --datasets digits --methods nerv,ssne --candidates gal,ex12

Candidates (``ETA_G`` = the gallery's ``step_sizes.suggested_eta`` rule; every candidate but
``gal`` starts from openTSNE-scaled PCA and runs 750 iterations; "reset" = gains and momentum reset
when exaggeration ends, emulated by two calls):

- ``gal``: the gallery run (spca, 500 iterations, ``ETA_G``);
- ``pca``: no exaggeration, ``ETA_G``;
- ``ex12``: exaggeration 12 for 250 iterations, reset, ``ETA_G``;
- ``ex4``: exaggeration 4 for 250 iterations, reset, ``ETA_G``;
- ``ex12t``: exaggeration 12, reset, t-SNE's modern rule ``max(n / 48, 50)``;
- ``pca_lo`` / ``ex12_lo``: as ``pca`` / ``ex12`` with ``ETA_G / 10``;
- ``pca_hi`` / ``ex12_hi``: as ``pca`` / ``ex12`` with ``ETA_G * 10``;
- ``lbfgs``: L-BFGS (no step size), no exaggeration;
- ``adam``: Adam with eta 0.01 (per-coordinate, scale-free), no exaggeration.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

from defaults import load, quality, run_gallery, run_settings
from smallvis.methods import REGISTRY
from smallvis.step_sizes import CONDITIONAL, DISTANCE_FAMILY, ETA, REFERENCE_N

TSNE_RULE = ["n", 1 / 48, 50]
NO_EXAGGERATION = set(DISTANCE_FAMILY) | {"ee", "tee"}  # ee/tee ignore it (the original's quirk)


def gallery_rule(m):
    """``step_sizes.suggested_eta`` as an ``eta`` rule."""
    if m not in ETA:
        return ["1", 500.0]
    if m in CONDITIONAL:
        return ["1", ETA[m]]
    if m in DISTANCE_FAMILY:
        return ["1/n", ETA[m] * REFERENCE_N]
    return ["n", ETA[m] / REFERENCE_N]


def scaled(rule, f):
    return [rule[0], rule[1] * f, *[x * f for x in rule[2:]]]


def candidate(m, cand):
    g = gallery_rule(m)
    base = {"init": "pcascaled", "max_iter": 750, "opt": "dbd"}
    ex = {"exaggeration": 12, "reset": True}
    return {
        "pca": {**base, "eta": g},
        "ex12": {**base, **ex, "eta": g},
        "ex4": {**base, "exaggeration": 4, "reset": True, "eta": g},
        "ex12t": {**base, **ex, "eta": TSNE_RULE},
        "pca_lo": {**base, "eta": scaled(g, 0.1)},
        "ex12_lo": {**base, **ex, "eta": scaled(g, 0.1)},
        "pca_hi": {**base, "eta": scaled(g, 10)},
        "ex12_hi": {**base, **ex, "eta": scaled(g, 10)},
        "lbfgs": {**base, "opt": "l-bfgs", "eta": g},
        "adam": {**base, "opt": "adam", "eta": ["1", 0.01]},
    }.get(cand)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="iris,s1k")
    ap.add_argument("--methods", default=None)
    ap.add_argument("--candidates", default="gal,pca,ex12,ex4")
    ap.add_argument("--log", default="explore.jsonl")
    args = ap.parse_args(argv)
    log = Path(args.log)
    done = set()
    if log.exists():
        for line in log.read_text().splitlines():
            r = json.loads(line)
            done.add((r["method"], r["dataset"], r["cand"]))
    names = args.methods.split(",") if args.methods else list(REGISTRY)
    for ds in args.datasets.split(","):
        _, X = load(ds)
        for m in names:
            for cand in args.candidates.split(","):
                if (m, ds, cand) in done:
                    continue
                if cand != "gal" and "ex" in cand and m in NO_EXAGGERATION:
                    continue
                st = None if cand == "gal" else candidate(m, cand)
                start = time.perf_counter()
                err = None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        Y, div = run_gallery(X, m) if st is None else run_settings(X, m, st)
                    except Exception as exc:
                        Y, div, err = None, True, f"{type(exc).__name__}: {str(exc)[:200]}"
                secs = time.perf_counter() - start
                knn, trip = quality(X, Y)
                r = dict(method=m, dataset=ds, cand=cand, settings=st, knn=knn, triplet=trip,
                         secs=round(secs, 2), diverged=div, error=err)
                with log.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
                print(f"{ds:7s} {m:9s} {cand:8s} knn {knn:.3f} trip {trip:.3f} "
                      f"{secs:6.1f}s{' DIVERGED' if div else ''}{' ' + err if err else ''}",
                      flush=True)


if __name__ == "__main__":
    main()
