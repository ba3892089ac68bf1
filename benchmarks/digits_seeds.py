"""Exact t-SNE against openTSNE's default run on digits, over seeds: wall time and kNN@15.

    python benchmarks/digits_seeds.py               # seeds 0-4 (about a minute)
    python benchmarks/digits_seeds.py --seeds 10

A kNN@15 difference of a few thousandths on digits is within the spread between seeds, so one run
per tool (``run.py``) cannot say which keeps more neighbours. This runs every row once per seed in
one process, ours after a warm-up that compiles or loads the kernels (reported apart), and prints the
median wall time and the mean, min and max kNN@15.

Rows: openTSNE's ``TSNE(n_jobs=2, random_state=seed)`` with every default (750 iterations; PCA
initialisation, so the seed changes only its approximate neighbours); ours, the exact engine for
1000 iterations with ``run.py``'s settings (early exaggeration 12 for 250 iterations, momentum 0.5
then 0.8, eta 50 = openTSNE's learning rate 200 in our units) from a seeded random initialisation,
once with the original's dense Gaussian P and once with the kNN-restricted Gaussian P (``nngaussian``,
3 x perplexity neighbours) that openTSNE and every approximate engine use; and both with the
deterministic ``spca`` initialisation (the same for every seed: one run).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "2")

import numpy as np  # noqa: E402

PERPLEXITY, ITERS, EARLY, EXAGGERATION, ETA = 30, 1000, 250, 12.0, 50.0


def ours(X, kernel, init, seed):
    import smallvis

    return smallvis.smallvis(
        X, method=("tsne", {"inp_kernel": kernel}), engine="exact", perplexity=PERPLEXITY,
        Y_init=init, max_iter=ITERS, exaggeration_factor=EXAGGERATION, stop_lying_iter=EARLY,
        momentum=0.5, final_momentum=0.8, mom_switch_iter=EARLY, eta=ETA, tol=0.0,
        random_state=seed)


def opentsne_default(X, seed):
    import openTSNE

    return np.asarray(openTSNE.TSNE(n_jobs=2, random_state=seed).fit(X))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 (default 5)")
    args = parser.parse_args(argv)
    from sklearn.datasets import load_digits

    from smallvis.metrics import knn_preservation

    X = np.ascontiguousarray(load_digits().data, dtype=np.float64)
    t0 = time.perf_counter()
    for kernel in ("gaussian", "nngaussian"):
        import smallvis

        smallvis.smallvis(X[:200], method=("tsne", {"inp_kernel": kernel}), engine="exact",
                          max_iter=20, random_state=0)
    print(f"our warm-up (kernel compilation or cache loading): {time.perf_counter() - t0:.2f} s")

    rows = {
        "openTSNE default": lambda s: opentsne_default(X, s),
        "exact, dense Gaussian P, rand": lambda s: ours(X, "gaussian", "rand", s),
        "exact, nngaussian P, rand": lambda s: ours(X, "nngaussian", "rand", s),
        "exact, dense Gaussian P, spca": lambda s: ours(X, "gaussian", "spca", 0),
        "exact, nngaussian P, spca": lambda s: ours(X, "nngaussian", "spca", 0),
    }
    print(f"\ndigits, n = {len(X)}, seeds 0-{args.seeds - 1}\n")
    print("| run | runs | median wall s | kNN@15 mean | min | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, run in rows.items():
        seeds = range(1 if name.endswith("spca") else args.seeds)
        walls, knn = [], []
        for seed in seeds:
            t0 = time.perf_counter()
            Y = run(seed)
            walls.append(time.perf_counter() - t0)
            knn.append(knn_preservation(X, Y, 15))
        print(f"| {name} | {len(knn)} | {np.median(walls):.2f} | {np.mean(knn):.4f} | "
              f"{min(knn):.4f} | {max(knn):.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
