"""Best-of-N single-thread timings on digits: calibrate_perplexity(X, 30), and 200 exact-engine
iterations (tol=0, random_state=1) for tsne, ssne, umap (smallvis defaults) and asne, mmds
(defaults="auto": the original's eta diverges). Usage: NUMBA_NUM_THREADS=1 python benchmarks/exact_speed.py [reps] [methods]."""
import os, sys, time, json, warnings
warnings.simplefilter('ignore')
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
import numpy as np
from sklearn.datasets import load_digits
import smallvis
from smallvis import smallvis as sv

X = load_digits().data.astype(float)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
methods = sys.argv[2].split(",") if len(sys.argv) > 2 else ["tsne", "ssne", "asne", "umap", "mmds"]
out = {}
def best(f):
    f()  # warm (compile / cache load)
    ts, cs = [], []
    for _ in range(reps):
        t = time.perf_counter(); c = time.process_time(); r = f()
        cs.append(time.process_time() - c); ts.append(time.perf_counter() - t)
    print(f"  cpu best {min(cs):.3f}", end="")
    return min(ts), r
t, cal = best(lambda: smallvis.calibrate_perplexity(X, 30))
out["P"] = t
print(f"calibrate_perplexity {t:.3f}", flush=True)
for m in methods:
    kw = dict(defaults="auto", tol=0) if m in ("asne", "mmds") else dict(tol=0)
    kw["random_state"] = 1
    t, r = best(lambda: sv(X, method=m, engine="exact", max_iter=200, ret_extra=True, **kw))
    out[m] = t
    import hashlib
    print(f"{m:6s} {t:.3f}  iter={r.iter} diverged={r.diverged} Y[0]={r.Y[0]} sha={hashlib.sha1(r.Y.tobytes()).hexdigest()[:10]}", flush=True)
json.dump(out, open(os.environ.get("BENCH_OUT", "exact_speed.json"), "w"))
