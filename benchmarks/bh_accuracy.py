"""Barnes-Hut's gradient error and time per evaluation against its opening angle ``theta``, monopole
(centre of mass only) against quadrupole (the cells' second moments too), and openTSNE's BH.

    python benchmarks/bh_accuracy.py small              # every method bh serves, 2,000 points
    python benchmarks/bh_accuracy.py small --methods tsne,rklsne --thetas 0.5,0.6
    python benchmarks/bh_accuracy.py large --knn-cache /tmp/zk70     # t-SNE, 70,000 blobs

``small``: the 2,000-point set of ``tests/engine_checks.py`` (``check_approx_defaults``), the
relative gradient error ``||G - G_exact|| / ||G_exact||`` against the exact engine on the same P,
and the median time of 3 gradient evaluations. ``large``: a t-SNE layout of 70,000 points (the
kNN graph of ``benchmarks/zoo_scale.py --knn-cache``; 250 iterations on fft from the modern
defaults, exaggeration over by then), the error against bh at ``theta = 0`` (the exact repulsion;
the attraction is exact on every engine) and the time per evaluation, with openTSNE's
``kl_divergence_bh`` at its default ``theta = 0.5`` on the same P and layout (its gradient is
the t-SNE gradient over 4). Peers are timed side by side in one process, 2 threads; the machine
may be loaded by other work, so compare ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = 2


def _timed(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def _engine(theta, quad):
    from smallvis.engines.bh import BarnesHutEngine

    eng = BarnesHutEngine(theta=theta)
    eng.quadrupole = quad
    return eng


def small(methods, thetas_mono, thetas_quad):
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from engine_checks import approx_data, claimed, rel, sparse_states

    from smallvis.engines import ExactEngine

    X, Y = approx_data()
    configs = [("mono", t) for t in thetas_mono] + [("quad", t) for t in thetas_quad]
    print("method  " + "  ".join(f"{kind} {t}" for kind, t in configs))
    for name in methods or claimed("bh"):
        method, dense, sp = sparse_states(X, name, perplexity=30)
        G0 = ExactEngine().evaluate(method, dense, Y, cost=False)[1]
        cells = []
        for kind, theta in configs:
            eng = _engine(theta, kind == "quad")
            eng.evaluate(method, sp, Y, cost=False)  # compile, prepare
            (_, G), secs = _timed(lambda: eng.evaluate(method, sp, Y, cost=False))
            cells.append(f"{rel(G, G0):.1e} {1e3 * secs:.0f}ms")
        print(f"{name}  " + "  ".join(cells), flush=True)


def _layout(knn_file, folder, iterations=250):
    """A t-SNE layout of the cached graph and its P (kept in ``folder``)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"bh_accuracy_layout_{iterations}.npz")
    if os.path.exists(path):
        with np.load(path) as f:
            from scipy import sparse

            return f["Y"], sparse.csr_matrix((f["data"], f["indices"], f["indptr"]))
    from smallvis import smallvis

    with np.load(knn_file) as f:
        graph = (f["idx"], f["dist"])
    res = smallvis(graph, method="tsne", engine="fft", metric="precomputed", max_iter=iterations,
                   tol=0, defaults="auto", n_threads=THREADS, random_state=1,
                   ret_extra=["P"])
    P = res.P.tocsr()
    np.savez(path, Y=res.Y, data=P.data, indices=P.indices, indptr=P.indptr)
    return res.Y, P


def large(knn_file, folder, thetas_mono, thetas_quad):
    from openTSNE.tsne import kl_divergence_bh

    from smallvis.methods import build_method
    from smallvis.methods.base import MethodState

    Y, P = _layout(knn_file, folder)
    Y = np.ascontiguousarray(Y)
    method = build_method("tsne")
    state = MethodState(P=P, affinities=None, data={})
    print(f"{len(Y)} points, layout {np.ptp(Y, axis=0).round(1)} wide", flush=True)
    (_, G0), secs = _timed(lambda: _engine(0.0, False).evaluate(method, state, Y, cost=False), 1)
    print(f"reference bh theta 0: {secs:.1f} s", flush=True)
    norm = np.linalg.norm(G0)
    for kind, thetas in (("mono", thetas_mono), ("quad", thetas_quad)):
        for theta in thetas:
            eng = _engine(theta, kind == "quad")
            eng.evaluate(method, state, Y, cost=False)
            (_, G), secs = _timed(lambda: eng.evaluate(method, state, Y, cost=False))
            print(f"bh {kind} theta {theta}: error {np.linalg.norm(G - G0) / norm:.2e}, "
                  f"{secs:.3f} s per evaluation", flush=True)
    Pot = P.astype(np.float64)

    def ot():
        return kl_divergence_bh(Y, Pot, 1, {"theta": 0.5}, n_jobs=THREADS)[1]

    ot()
    G, secs = _timed(ot)
    print(f"openTSNE bh theta 0.5: error {np.linalg.norm(4.0 * G - G0) / norm:.2e}, "
          f"{secs:.3f} s per evaluation", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", choices=("small", "large"))
    ap.add_argument("--methods", default="", help="comma-separated (small; default: all bh serves)")
    ap.add_argument("--mono", default="0.2,0.5", help="monopole thetas")
    ap.add_argument("--thetas", default="0.3,0.4,0.5,0.6,0.7", help="quadrupole thetas")
    ap.add_argument("--knn-cache", default="/tmp/zk70", help="folder of knn_blobs_70000.npz")
    ap.add_argument("--layout-cache", default="/tmp/bh_accuracy", help="where the layout is kept")
    args = ap.parse_args(argv)
    import numba

    numba.set_num_threads(min(THREADS, numba.config.NUMBA_NUM_THREADS))
    mono = [float(t) for t in args.mono.split(",") if t]
    quad = [float(t) for t in args.thetas.split(",") if t]
    if args.which == "small":
        small([m for m in args.methods.split(",") if m], mono, quad)
    else:
        large(os.path.join(args.knn_cache, "knn_blobs_70000.npz"), args.layout_cache, mono, quad)
    return 0


if __name__ == "__main__":
    sys.exit(main())
