"""Transform: new points placed next to a fitted embedding, ours against openTSNE's and umap-learn's.

    python benchmarks/transform.py                          # 60,000 fitted + 10,000 new points
    python benchmarks/transform.py --n-train 6000 --n-new 1000 --tools smallvis-tsne,opentsne

Data: scikit-learn's 8x8 digits resampled with replacement to ``n_train + n_new`` points plus
N(0, 0.5^2) pixel noise (class structure of real images at any size, no download); the new points
are drawn independently of the fitted ones. Every tool runs with its defaults (2 threads, seed 0):
``SmallVis()`` (t-SNE) and ``SmallVis("umap")`` with ``transform``; ``openTSNE.TSNE(n_jobs=2)``
with ``fit`` then ``embedding.transform``; ``umap.UMAP()`` with ``fit`` then ``transform``.
Each tool runs in a fresh process (its compile and neighbour-index start-up included in its times).

Reported per tool: fit time, transform time, and the 10-NN classification accuracy of the new points
on the embedding (a classifier trained on the fitted points' coordinates and labels), next to the
fitted points' own accuracy. Target (issue "What openTSNE and umap-learn users expect"): transform no
slower than the faster peer, accuracy within 0.01.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

THREADS = 2
TOOLS = ("smallvis-tsne", "smallvis-umap", "opentsne", "umap-learn")
MARK = "@@transform "


def load(n: int, seed: int = 0):
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(seed)
    d = load_digits()
    rows = rng.integers(0, d.data.shape[0], n)
    X = d.data[rows] + rng.normal(scale=0.5, size=(n, d.data.shape[1]))
    return np.ascontiguousarray(X, dtype=np.float64), d.target[rows]


def child(tool: str, n_train: int, n_new: int) -> dict:
    import warnings

    from sklearn.neighbors import KNeighborsClassifier

    warnings.simplefilter("ignore")
    X, y = load(n_train + n_new)
    Xt, yt, Xn, yn = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    t0 = time.perf_counter()
    if tool.startswith("smallvis"):
        from smallvis import SmallVis

        est = SmallVis("tsne" if tool.endswith("tsne") else "umap", n_threads=THREADS,
                       random_state=0).fit(Xt)
        Yt = est.embedding_
        t1 = time.perf_counter()
        Yn = est.transform(Xn)
    elif tool == "opentsne":
        from openTSNE import TSNE

        emb = TSNE(n_jobs=THREADS, random_state=0).fit(Xt)
        Yt = np.asarray(emb)
        t1 = time.perf_counter()
        Yn = np.asarray(emb.transform(Xn))
    elif tool == "umap-learn":
        from umap import UMAP

        est = UMAP(n_jobs=THREADS, random_state=None).fit(Xt)  # a seed forces one thread
        Yt = est.embedding_
        t1 = time.perf_counter()
        Yn = est.transform(Xn)
    else:
        raise ValueError(f"unknown tool {tool!r}; valid: {', '.join(TOOLS)}")
    t2 = time.perf_counter()
    knn = KNeighborsClassifier(10).fit(Yt, yt)
    return {"tool": tool, "fit_s": t1 - t0, "transform_s": t2 - t1,
            "train_acc": float(knn.score(Yt, yt)), "new_acc": float(knn.score(Yn, yn))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=60_000)
    ap.add_argument("--n-new", type=int, default=10_000)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--out", help="write the rows as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(MARK + json.dumps(child(args.child, args.n_train, args.n_new)), flush=True)
        return 0
    env = {**os.environ, **{v: str(THREADS) for v in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS",
                                                        "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}}
    rows = []
    for tool in args.tools.split(","):
        proc = subprocess.run([sys.executable, __file__, "--child", tool, "--n-train",
                               str(args.n_train), "--n-new", str(args.n_new)],
                              capture_output=True, text=True, env=env)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
        if not lines:
            rows.append({"tool": tool, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]})
        else:
            rows.append(json.loads(lines[-1][len(MARK):]))
        print(rows[-1], flush=True)
    ok = [r for r in rows if "error" not in r]
    peers = [r["transform_s"] for r in ok if not r["tool"].startswith("smallvis")]
    best = min(peers) if peers else None
    print(f"\n{args.n_train:,} fitted + {args.n_new:,} new resampled noisy digits, {THREADS} threads")
    print("| tool | fit s | transform s | x fastest peer | fitted acc | new acc |")
    print("|---|--:|--:|--:|--:|--:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['tool']} | failed: {r['error']} | | | | |")
            continue
        ratio = f"{r['transform_s'] / best:.2f}" if best else ""
        print(f"| {r['tool']} | {r['fit_s']:.1f} | {r['transform_s']:.1f} | {ratio} | "
              f"{r['train_acc']:.3f} | {r['new_acc']:.3f} |")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
