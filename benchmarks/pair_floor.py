"""What one pair costs on the exact engine, per output kernel, against tsne's Student-t: the floor
under the issue's "within 2x of tsne" targets.

    NUMBA_NUM_THREADS=1 python benchmarks/pair_floor.py [--n 20000] [--reps 5]

Each line times one row loop of the library over the pairs ``(i, j > i)`` of every fourth row of
``n`` random 2-D points spread like a run's layout (spread 10): the squared distances (the exact
engine's ``_row_d2``), then the kernel's weights, or weights and gradient factors, through the
row loops the exact engine calls (the generated ``output_kernel_dispatch.row_weights``; the
weights with their gradient factors of ``exact_row_kernels.row_costly_weights``, split into one
vectorised loop per transcendental for the heavy-tailed kernel, UMAP's curve and the power form),
and the vectorised ``exp`` and ``log`` of :mod:`smallvis._util.vmath` on
their own. Best of ``--reps``, in ns per pair and as a multiple of the Student-t's weight loop
(tsne's). One thread: the numbers are of the arithmetic, not of the machine's free cores.

tsne's exact gradient is two such passes (Z, then the forces) of the Student-t's rational weight:
a method whose every pair needs an ``exp`` (a Gaussian Q), a ``pow`` (UMAP's curve, the power
form) or a ``log`` (a reverse KL, the f-divergences' terms) pays that function once per pass on
top, which is what its ratio to tsne's time at 20,000 points shows (benchmarks/README.md, "The
one run").
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _loops():
    from smallvis._util.jit import njit
    from smallvis._util.vmath import vexp, vlog
    from smallvis.engines.exact_kernels import _row_d2
    from smallvis.engines.exact_row_kernels import row_costly_weights, row_costly_weights_inplace
    from smallvis.engines.output_kernel_dispatch import row_weights

    @njit(error_model="numpy")
    def weights(Yt, code, kp, d2, w, g, mode, step):
        n = Yt.shape[1]
        total = 0.0
        for i in range(0, n, step):
            m = n - i - 1
            _row_d2(Yt, i, d2)
            if mode == 0:
                row_weights(code, kp, d2, w, m)
            elif mode == 1:
                row_costly_weights(code, kp, d2, w, g, m)
            elif mode == 2:
                for j in range(m):
                    d2[j] = -d2[j]
                vexp(d2, w, m)
            elif mode == 3:
                vlog(d2, w, m)
            elif mode == 5:  # a Z pass's weights (in place)
                row_costly_weights_inplace(code, kp, d2, m)
            else:  # the squared distances alone
                for j in range(m):
                    w[j] = d2[j]
            total += w[0] if m else 0.0
        return total

    return weights


def main(argv=None) -> int:
    from smallvis.engines.exact_kernels import kernel_params
    from smallvis.engines.output_kernel_functions import (GAUSSIAN_KERNEL, HEAVY_TAILED_KERNEL,
                                                          POWER_HEAVY_KERNEL, T_KERNEL,
                                                          TDOF_KERNEL, UMAP_KERNEL)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    if args.n < 8 or args.reps < 1:
        ap.error("--n must be at least 8 and --reps at least 1")
    rng = np.random.default_rng(0)
    Yt = np.ascontiguousarray(10.0 * rng.standard_normal((2, args.n)))
    step = 4
    pairs = sum(args.n - i - 1 for i in range(0, args.n, step))
    d2, w, g = (np.empty(args.n) for _ in range(3))
    weights = _loops()
    umap = kernel_params(a=1.93, b=0.79, gr_eps=0.1)  # usne's curve (min_dist 0.001)
    cases = [
        ("squared distances alone", T_KERNEL, kernel_params(), 4),
        ("Student-t weight (tsne)", T_KERNEL, kernel_params(), 0),
        ("Student-t weight + gradient factor", T_KERNEL, kernel_params(), 1),
        ("Gaussian weight (exp)", GAUSSIAN_KERNEL, kernel_params(), 0),
        ("Gaussian weight + gradient factor", GAUSSIAN_KERNEL, kernel_params(), 1),
        ("heavy-tailed, alpha 0.5: w + g", HEAVY_TAILED_KERNEL, kernel_params(alpha=0.5), 1),
        ("power form, alpha 0.5: w + g", POWER_HEAVY_KERNEL, kernel_params(alpha=0.5, b=0.5),
         1),
        ("Student-t, 3 degrees of freedom: w + g", TDOF_KERNEL, kernel_params(dof=3.0), 1),
        ("UMAP curve (usne's a, b): w + g", UMAP_KERNEL, umap, 1),
        ("UMAP curve: w alone, generated loop", UMAP_KERNEL, umap, 0),
        ("UMAP curve: w alone, split (Z passes)", UMAP_KERNEL, umap, 5),
        ("vexp alone", T_KERNEL, kernel_params(), 2),
        ("vlog alone", T_KERNEL, kernel_params(), 3),
    ]
    times = {}
    for name, code, kp, mode in cases:
        weights(Yt, code, kp, d2, w, g, mode, step)  # compile, warm
        best = np.inf
        for _ in range(args.reps):
            start = time.perf_counter()
            weights(Yt, code, kp, d2, w, g, mode, step)
            best = min(best, time.perf_counter() - start)
        times[name] = best / pairs * 1e9
    ref = times["Student-t weight (tsne)"]
    print(f"{args.n:,} points, {pairs:,} pairs per loop, best of {args.reps}, "
          f"{os.environ.get('NUMBA_NUM_THREADS')} thread(s)")
    print(f"{'row loop':40s} {'ns / pair':>10s} {'x tsne':>7s}")
    for name, ns in times.items():
        print(f"{name:40s} {ns:10.2f} {ns / ref:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
