"""What ``run.py`` compares: the datasets, the tools with their shared settings, and the child
process that times one (dataset, tool) pair.

Settings shared by every tool, as far as each allows: perplexity 30; 750 iterations = 250 with early
exaggeration 12 and momentum 0.5, then 500 without and momentum 0.8; PCA initialisation (each
tool's own: ours ``spca``, PCA scores with each column scaled to sd 1e-4; openTSNE and scikit-learn
scale the first column to sd 1e-4); Barnes-Hut theta 0.5; 2 threads; seed 0; no early stopping.
Learning rate ``max(200, n / 12)`` in openTSNE's units: openTSNE's gradient is ``dC/dy / 4`` (it
leaves out the factor 4) while ours and scikit-learn's are ``dC/dy``, so those two get a quarter of
it, ``max(50, n / 48)``: the same steps.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import time
from dataclasses import dataclass

import numpy as np

PERPLEXITY = 30
EARLY_ITERS = 250
ITERS = 750
EXAGGERATION = 12.0
MOMENTUM, FINAL_MOMENTUM = 0.5, 0.8
THETA = 0.5
THREADS = 2
SEED = 0
WARM_N = 200  # our numba warm-up: this many random points, same engine, before the timed run
QUICK_N = 300  # --quick: every dataset subsampled to this many points
MARK = "@@row "  # prefixes the child's one JSON line on stdout
PACKAGES = {"smallvis": "smallvis", "opentsne": "openTSNE", "sklearn": "sklearn.manifold"}

BLOBS = {"blobs5k": 5_000, "blobs20k": 20_000, "blobs70k": 70_000}
DATASETS = ("digits", "s1k") + tuple(BLOBS)

# scikit-learn's exact t-SNE: seconds per iteration per n^2 on the reference machine (digits, 1000
# iterations in 37.7 s, measured once); above SKLEARN_EXACT_FREE_N points it runs only when the
# estimate is within SKLEARN_EXACT_BUDGET_S.
SKLEARN_EXACT_S = 1.2e-8
SKLEARN_EXACT_FREE_N = 2_000
SKLEARN_EXACT_BUDGET_S = 120.0


@dataclass(frozen=True)
class Tool:
    """One row kind: ``kind`` is the package, ``variant`` our engine or the peer's gradient
    method."""

    name: str
    kind: str  # "smallvis", "opentsne" or "sklearn"
    variant: str
    max_n: int | None = None
    iters: int = ITERS
    only_on: tuple = ()  # datasets it runs on (empty: all)


TOOLS = {t.name: t for t in (
    Tool("smallvis-exact", "smallvis", "exact", max_n=20_000),
    Tool("smallvis-dense", "smallvis", "dense", max_n=5_000),
    Tool("smallvis-bh", "smallvis", "bh"),
    Tool("smallvis-fft", "smallvis", "fft"),
    Tool("smallvis-exact-1000", "smallvis", "exact", max_n=20_000, iters=1000, only_on=("digits",)),
    Tool("opentsne-bh", "opentsne", "bh"),
    Tool("opentsne-fft", "opentsne", "fft"),
    Tool("opentsne-default", "opentsne", "default", only_on=("digits",)),
    Tool("sklearn-bh", "sklearn", "barnes_hut"),
    Tool("sklearn-exact", "sklearn", "exact", max_n=5_000),
)}


def learning_rate(n: int) -> float:
    """``max(200, n / 12)``, in openTSNE's units (its gradient is a quarter of ours and
    scikit-learn's)."""
    return max(200.0, n / 12.0)


def load(name: str, quick: bool = False) -> np.ndarray:
    """The dataset ``name`` as float64 (n, p); with ``quick`` a fixed random subset of ``QUICK_N``
    rows."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X = load_digits().data
    elif name == "s1k":
        from smallvis.datasets import load_dataset

        X = load_dataset("s1k").X
    elif name in BLOBS:
        from sklearn.datasets import make_blobs

        X = make_blobs(BLOBS[name], 50, centers=20, random_state=0)[0]
    else:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if quick and X.shape[0] > QUICK_N:
        X = X[np.sort(np.random.default_rng(SEED).choice(X.shape[0], QUICK_N, replace=False))]
    return X


def skip_reason(tool: Tool, n: int) -> str | None:
    """Why ``tool`` does not run on ``n`` points (None: it runs)."""
    if tool.max_n is not None and n > tool.max_n:
        return f"skipped: only run for n <= {tool.max_n:,}"
    if tool.name == "sklearn-exact" and n > SKLEARN_EXACT_FREE_N:
        estimate = SKLEARN_EXACT_S * n * n * tool.iters
        if estimate > SKLEARN_EXACT_BUDGET_S:
            return (f"skipped: O(n^2) per iteration, est. ~{estimate:.0f} s > "
                    f"{SKLEARN_EXACT_BUDGET_S:.0f} s")
    return None


def _smallvis_engine(tool: Tool, n: int, warm: bool):
    """Our engine spec: theta 0.5 for a Barnes-Hut engine that takes it; a warm-up on few points
    searches neighbours the way the timed run on ``n`` points will (pynndescent above the exact
    search's limit) so that its compilation lands in the warm-up too."""
    from smallvis.engines import ENGINES
    from smallvis.io.neighbors import EXACT_MAX_N

    options = {}
    allowed = getattr(ENGINES[tool.variant], "OPTIONS", ())
    if "theta" in allowed:
        options["theta"] = THETA
    if warm and "knn" in allowed and n > EXACT_MAX_N:
        options["knn"] = "nndescent"
    return (tool.variant, options) if options else tool.variant


def _run_smallvis(tool: Tool, X: np.ndarray, n_timed: int, warm: bool = False):
    import smallvis

    iters, early = (20, 10) if warm else (tool.iters, EARLY_ITERS)
    Y = smallvis.smallvis(
        X, method="tsne", engine=_smallvis_engine(tool, n_timed, warm), perplexity=PERPLEXITY,
        Y_init="spca", max_iter=iters, exaggeration_factor=EXAGGERATION, stop_lying_iter=early,
        momentum=MOMENTUM, final_momentum=FINAL_MOMENTUM, mom_switch_iter=early,
        eta=learning_rate(X.shape[0]) / 4, tol=0.0, epoch=5 if warm else None, random_state=SEED)
    return Y, iters


def _run_opentsne(tool: Tool, X: np.ndarray):
    import openTSNE

    if tool.variant == "default":
        model = openTSNE.TSNE(n_jobs=THREADS, random_state=SEED)
    else:
        model = openTSNE.TSNE(
            perplexity=PERPLEXITY, learning_rate=learning_rate(X.shape[0]),
            early_exaggeration_iter=EARLY_ITERS, early_exaggeration=EXAGGERATION,
            n_iter=tool.iters - EARLY_ITERS, initialization="pca", initial_momentum=MOMENTUM,
            final_momentum=FINAL_MOMENTUM, theta=THETA, negative_gradient_method=tool.variant,
            n_jobs=THREADS, random_state=SEED)
    return np.asarray(model.fit(X)), model.early_exaggeration_iter + model.n_iter


def _run_sklearn(tool: Tool, X: np.ndarray):
    from sklearn.manifold import TSNE

    # the exaggeration phase is scikit-learn's fixed 250 iterations, momentum 0.5 then 0.8
    model = TSNE(perplexity=PERPLEXITY, early_exaggeration=EXAGGERATION,
                 learning_rate=learning_rate(X.shape[0]) / 4, max_iter=tool.iters,
                 n_iter_without_progress=tool.iters, min_grad_norm=0.0, init="pca",
                 method=tool.variant, angle=THETA, n_jobs=THREADS, random_state=SEED)
    Y = model.fit_transform(X)
    return Y, int(model.n_iter_) + 1  # n_iter_ is the index of the last iteration


def _maxrss_mb() -> float:
    """This process's peak resident memory in MB: ``VmHWM``, the high-water mark of its own address
    space. ``ru_maxrss`` would do from a small launcher, but Linux carries the parent's resident
    size at the fork into a child's ``ru_maxrss``, and our parent holds the data and computes the
    metrics."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes there, KiB here


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(dataset: str, tool_name: str, quick: bool, y_path: str) -> None:
    """Time one pair in this (fresh) process; save the embedding to ``y_path`` and print one JSON
    line (prefixed by ``MARK``) with wall, compile and CPU seconds, peak and baseline MB."""
    tool = TOOLS[tool_name]
    importlib.import_module(PACKAGES[tool.kind])  # counted in the baseline, as is the data
    X = load(dataset, quick)
    row = {"base_mb": _maxrss_mb(), "compile_s": None}
    if tool.kind == "smallvis":
        warm_X = np.random.default_rng(SEED).normal(size=(WARM_N, X.shape[1]))
        t0 = time.perf_counter()
        _run_smallvis(tool, warm_X, X.shape[0], warm=True)
        row["compile_s"] = time.perf_counter() - t0
        row["warm_mb"] = _maxrss_mb()
    cpu0, t0 = _cpu_s(), time.perf_counter()
    if tool.kind == "smallvis":
        Y, iters = _run_smallvis(tool, X, X.shape[0])
    elif tool.kind == "opentsne":
        Y, iters = _run_opentsne(tool, X)
    else:
        Y, iters = _run_sklearn(tool, X)
    row["wall_s"] = time.perf_counter() - t0
    row["cpu_s"] = _cpu_s() - cpu0
    row["peak_mb"] = _maxrss_mb()
    row["iters"] = iters
    np.save(y_path, np.asarray(Y, dtype=np.float64))
    print(MARK + json.dumps(row), flush=True)
