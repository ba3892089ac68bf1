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
- ``adam``: Adam with eta 0.01 (per-coordinate, scale-free), no exaggeration;
- ``ex12c``: exaggeration 12, reset, constant eta 1;
- ``ex12t_sd1``: as ``ex12t`` from PCA with the first column's sd 1 (not 1e-4);
- ``pca_x100``: as ``pca`` with ``ETA_G * 100``;
- ``pcat``: no exaggeration, t-SNE's modern rule;
- ``spca750``: the gallery's init (spca) and eta, 750 iterations;
- ``sgd``: the ``sgd`` engine with its own defaults (init, epochs, learning rate, parameters).
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
from smallvis.methods.step_sizes import DEFAULT_ETA, REFERENCE_N, step_rule

TSNE_RULE = ["n", 1 / 48, 50]
# the distance-stress methods, and those with a gallery step size of their own (MethodSpec.step)
DISTANCE_FAMILY = tuple(m for m, spec in REGISTRY.items() if spec.step.scaling == "distance")
TUNED_ETA = tuple(m for m, spec in REGISTRY.items() if spec.step.eta != DEFAULT_ETA)
NO_EXAGGERATION = set(DISTANCE_FAMILY) | {"ee", "tee"}  # ee/tee ignore it (the original's quirk)


def gallery_rule(m):
    """``step_sizes.suggested_eta`` as an ``eta`` rule."""
    rule = step_rule(m)
    if rule.scaling == "constant":
        return ["1", rule.eta]
    if rule.scaling == "distance":
        return ["1/n", rule.eta * REFERENCE_N]
    return ["n", rule.eta / REFERENCE_N]


def scaled(rule, f):
    return [rule[0], rule[1] * f, *[x * f for x in rule[2:]]]


EXTRA = {}


def candidate(m, cand):
    if cand in EXTRA:
        return EXTRA[cand]
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
        "sgd": {"engine": "sgd"},
        "ex12c": {**base, **ex, "eta": ["1", 1.0]},
        "pcat": {**base, "eta": TSNE_RULE},
        "pca_x100": {**base, "eta": scaled(g, 100)},
        "ex12t_sd1": {**base, **ex, "eta": TSNE_RULE, "init_sd": 1.0},
        "spca750": {**base, "init": "spca", "eta": g},
    }.get(cand)


SGD = ("largevis", "umap", "tumap", "ncvis")


def auto_candidates(m):
    if m in SGD:
        return ["gal", "sgd"]
    if m in NO_EXAGGERATION:
        return ["gal", "pca"]
    return ["gal", "pca", rec_candidate(m)]


# usne (UMAP's output curve, b < 1): from sd 1e-4 it stalls at the init (s1k, with or without
# exaggeration, eta 50 or 500: the tolerance stops it by iteration 150); from PCA with sd 1 the
# t-SNE set works (ex12t_sd1)
NO_EE_T = ()
INIT_SD1 = ("usne",)
# btsne, bssne: on the gallery's eta (1e-3 n / 150) they stall at the init on s1k and digits (kNN
# 0.11-0.17, stopped by the tolerance at iteration 100-150); 10 times that works on s1k but stalls
# on digits; 100 times (0.1 n / 150, ssne's) works at every size
# sjse (symmetric JSE, Gaussian Q): the same stall on s1k (gallery 0.124, PCA 0.149); 10 and 100
# times the eta give 0.454 / 0.455
ETA_X100 = ("btsne", "bssne", "sjse")
ROW_Q_T = ("tasne", "trsrsne")  # row-normalised Student-t Q on t-SNE's eta: forces ~n times t-SNE's


def rec_candidate(m):
    """The second guess, after iris and the first s1k runs: t-SNE's modern settings for the
    matrix-normalised methods on t-SNE's eta; exaggeration with a constant eta 1 for the
    row-normalised Student-t ones (``ex12c``); no exaggeration (it collapses Gaussian output
    kernels at s1k) with the gallery's eta for the methods with a step size of their own
    (``MethodSpec.step``) and the distance family and ee/tee; sgd for the four stochastic
    methods."""
    if m in SGD:
        return "sgd"
    if m in ROW_Q_T:
        return "ex12c"
    if m in INIT_SD1:
        return "ex12t_sd1"
    if m in ETA_X100:
        return "pca_x100"
    if m in DISTANCE_FAMILY:
        return "spca750"  # iris: pcascaled loses 0.013 on knnmmds; spca is at least the gallery
    if m in TUNED_ETA or m in NO_EXAGGERATION or m in NO_EE_T:
        return "pca"
    return "ex12t"


def summary(paths):
    """Markdown: per method and dataset, kNN@15 / triplet accuracy of every candidate run."""
    runs = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            runs[(r["method"], r["dataset"], r["cand"])] = r
    cands = list(dict.fromkeys(c for _, _, c in runs))
    dss = [d for d in ("iris", "s1k", "digits") if any(k[1] == d for k in runs)]
    out = ["| method | dataset | " + " | ".join(cands) + " |", "|---|---|" + "---|" * len(cands)]
    for m in [m for m in REGISTRY if any(k[0] == m for k in runs)]:
        for d in dss:
            if not any((m, d, c) in runs for c in cands):
                continue
            cells = []
            for c in cands:
                r = runs.get((m, d, c))
                if r is None:
                    cells.append("")
                elif r["knn"] != r["knn"]:
                    cells.append("diverged" if r.get("diverged") else "error")
                else:
                    cells.append(f"{r['knn']:.3f} / {r['triplet']:.2f}")
            out.append(f"| {m} | {d} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", nargs="+", default=None, metavar="LOG",
                    help="print the markdown summary of these logs and exit")
    ap.add_argument("--datasets", default="iris,s1k")
    ap.add_argument("--methods", default=None)
    ap.add_argument("--candidates", default="auto",
                    help="comma-separated; 'auto': gal, pca, and ex12t for the methods on t-SNE's "
                         "eta 500 (ex12 for the others), no exaggeration for the distance family "
                         "and ee/tee; 'rec': gal and the first guess only")
    ap.add_argument("--log", default="explore.jsonl")
    ap.add_argument("--setting", action="append", default=[],
                    help="TAG=JSON: an extra candidate, a defaults_table.json settings dict")
    args = ap.parse_args(argv)
    if args.summary:
        print(summary(args.summary))
        return
    for item in args.setting:
        tag, _, text = item.partition("=")
        EXTRA[tag] = json.loads(text)
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
            if args.candidates == "auto":
                cands = auto_candidates(m)
            elif args.candidates == "rec":
                cands = ["gal", rec_candidate(m)]
            else:
                cands = args.candidates.split(",")
            for cand in cands:
                if (m, ds, cand) in done:
                    continue
                if cand in ("ex12", "ex4", "ex12t", "ex12_lo", "ex12_hi") and m in NO_EXAGGERATION:
                    continue
                st = None if cand == "gal" else candidate(m, cand)
                start = time.perf_counter()
                err = None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        Y, info = run_gallery(X, m) if st is None else run_settings(X, m, st)
                    except Exception as exc:
                        Y, info, err = None, {}, f"{type(exc).__name__}: {str(exc)[:200]}"
                div = info.get("diverged", True)
                secs = time.perf_counter() - start
                knn, trip = quality(X, Y)
                r = dict(method=m, dataset=ds, cand=cand, settings=st, knn=knn, triplet=trip,
                         secs=round(secs, 2), **info, error=err)
                with log.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
                print(f"{ds:7s} {m:9s} {cand:8s} knn {knn:.3f} trip {trip:.3f} "
                      f"{secs:6.1f}s it {info.get('iter')} sd {info.get('sd') or 0:.3g}"
                      f"{' DIVERGED' if div else ''}{' ' + err if err else ''}",
                      flush=True)


if __name__ == "__main__":
    main()
