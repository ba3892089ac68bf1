"""How much slower a run gets when every core is busy with another process, for 1 and 2 numba threads.

    python benchmarks/contention.py                      # small + medium jobs, 1 and 2 threads
    python benchmarks/contention.py --jobs small --repeats 5
    python benchmarks/contention.py --env OMP_WAIT_POLICY=active   # compare a setting

Each (job, threads, condition) cell runs in a fresh subprocess (numba's threading layer and thread
count are per process): it warms up once (compilation or cache load, first-call costs), then times
the same call ``--repeats`` times; the cell reports the median wall time. "busy" starts one
CPU-bound competitor per core (a Python busy loop, which never sleeps) before the subprocess and
stops it after. The slowdown is busy / quiet for the same job and thread count.

The "quiet" condition is only as quiet as the machine: the load average before each cell is
printed, so a noisy baseline can be seen for what it is.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

JOBS = {
    # name: (dataset or points, engine, max_iter)
    "small": (50, "exact", 700),
    "digits-exact": ("digits", "exact", 200),
    "digits-fft": ("digits", "fft", 200),
}
MARK = "@@cell "


def _data(source):
    import numpy as np

    if isinstance(source, int):
        return np.random.default_rng(0).normal(size=(source, 8))
    from smallvis.datasets import load_dataset

    return load_dataset(source).X


def child(job: str, threads: int, repeats: int) -> None:
    """Time one job in this process and print one JSON line."""
    import numba

    from smallvis import smallvis

    source, engine, max_iter = JOBS[job]
    X = _data(source)
    perplexity = 10 if isinstance(source, int) else 30
    run = dict(engine=engine, perplexity=perplexity, max_iter=max_iter, random_state=0,
               n_threads=threads)
    smallvis(X, **run)  # warm-up: compilation or cache load
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        smallvis(X, **run)
        times.append(time.perf_counter() - start)
    times.sort()
    print(MARK + json.dumps({"median": times[len(times) // 2], "min": times[0],
                             "layer": numba.threading_layer()}), flush=True)


def _competitors(n):
    # spins until its parent is gone (no orphans if this script is killed)
    code = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def _cell(job, threads, repeats, busy, env):
    procs = _competitors(os.cpu_count() or 1) if busy else []
    try:
        time.sleep(0.5 if busy else 0.0)
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", job, str(threads), str(repeats)],
                             capture_output=True, text=True, env={**os.environ, **env},
                             timeout=1800)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            return {**json.loads(line[len(MARK):]), "load": load}
    raise RuntimeError(f"{job} with {threads} threads failed:\n{out.stderr[-2000:]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default=",".join(JOBS), help="comma-separated: " + ", ".join(JOBS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment of the timed subprocesses (e.g. NUMBA_THREADING_LAYER=omp)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the competitors on the way out
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return 0
    env = dict(item.split("=", 1) for item in args.env)
    print(f"{os.cpu_count()} cores; competitors when busy: {os.cpu_count()}; env {env or '-'}")
    print(f"{'job':14} {'threads':>7} {'quiet s':>8} {'(load)':>6} {'busy s':>8} {'(load)':>6} "
          f"{'slowdown':>8}  layer")
    for job in args.jobs.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            quiet = _cell(job, threads, args.repeats, False, env)
            busy = _cell(job, threads, args.repeats, True, env)
            print(f"{job:14} {threads:7d} {quiet['median']:8.3f} {quiet['load']:6.1f} "
                  f"{busy['median']:8.3f} {busy['load']:6.1f} "
                  f"{busy['median'] / quiet['median']:7.1f}x  {busy['layer']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
