"""Defaults, side by side: for every method, its gallery run against the estimator's defaults, the
CLI's defaults, the recommended modern settings (``defaults_table.json``) and the peers.

    python benchmarks/defaults.py --out results.json
    python benchmarks/defaults.py --datasets iris,s1k --methods tsne,umap,nerv --skip-peers

Columns, per (method, dataset), each with kNN@15 (``smallvis.metrics.knn_preservation``), random-
triplet accuracy (``smallvis.metrics.random_triplet_accuracy``, 100,000 triplets: the global layout)
and wall seconds:

- **gallery**: as ``benchmarks/gallery.py``: duplicate rows removed, ``Y_init="spca"``, perplexity
  30, 500 iterations, ``step_sizes.suggested_settings`` / ``suggested_params``, seed 42.
- **table**: the recommended modern settings of ``defaults_table.json`` applied through plain
  ``smallvis()`` arguments (below), on the same de-duplicated data as the gallery, seed 42.
- **estimator**: ``SmallVis(method=m, random_state=0).fit_transform(X)``, nothing else set, on the
  dataset as loaded (the CLI does not remove duplicates either).
- **cli**: ``smallvis embed DS --method m --metrics --out tmp.csv --seed 0``; kNN@15 read back from
  the JSON sidecar. ``same`` says whether its coordinates equal the estimator's (they must).
- **peer**: openTSNE's default ``TSNE`` (tsne), umap-learn's default ``UMAP`` (umap), and for ncvis
  the kNN@15 of a locally patched ncvis 1.5.13, measured once (iris 0.769, digits 0.548; its s1k
  was a different s1k, so none is given).

The table prints as markdown; ``--out FILE.json`` keeps every row (rerun in parts with
``--datasets`` / ``--methods`` and merge by key).

``defaults_table.json`` format
------------------------------
``{"_doc": ..., "methods": {name: settings}}``; ``settings`` keys (all optional but ``eta``):

- ``eta``: ``[scale, c]`` or ``[scale, c, floor]``: the step size is ``max(c * s, floor)`` with
  ``s = n`` (``"n"``, matrix-normalised P), ``1`` (``"1"``, conditional/un-normalised P),
  ``1 / n`` (``"1/n"``, distance stress). For ``opt`` other than dbd it is that optimiser's eta.
- ``init``: ``"pcascaled"`` (PCA scores divided by the sd of the first score column, times 1e-4:
  openTSNE's), or any ``Y_init`` name (``"spca"``, ``"rand"``, ...).
- ``init_sd``: the sd of the first ``pcascaled`` column (default 1e-4).
- ``exaggeration``: early exaggeration factor (1 = none) for the first ``stop_lying_iter`` (250)
  iterations.
- ``max_iter``: iterations in all (exaggerated ones included).
- ``opt``: ``"dbd"`` (momentum 0.5, then 0.8 from iteration 250) or another optimiser name.
- ``reset``: gains and momentum state reset when exaggeration ends (scikit-learn). Emulated here by
  two calls: ``stop_lying_iter`` iterations with exaggeration and momentum 0.5, then the rest
  started from that ``Y`` (``Y_init=Y, Y_init_sdev=None``) with momentum 0.8.
- ``engine``: ``"sgd"`` for the stochastic methods (then eta/opt/exaggeration do not apply).
- ``params``: method parameters as in ``suggested_params`` (``"gamma": "1/n"`` for largevis).
- ``note``: free text.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from smallvis import smallvis
from smallvis.datasets import load_dataset
from smallvis.methods import REGISTRY
from smallvis.metrics import knn_preservation, random_triplet_accuracy
from smallvis.methods.step_sizes import suggested_params, suggested_settings

HERE = Path(__file__).resolve().parent
TABLE = HERE / "defaults_table.json"
# ncvis kNN@15 of a locally patched ncvis 1.5.13, measured once (that run's s1k was another s1k)
NCVIS_PEER = {"iris": 0.769, "digits": 0.548}
STOP_LYING = 250


def _exact_methods():
    from smallvis import list_methods

    return {m.name for m in list_methods() if "exact" in m.engines}


def load(name):
    """(full X, de-duplicated X) of a dataset, as float64."""
    X = np.asarray(load_dataset(name).X, dtype=float)
    return X, np.unique(X, axis=0)


def pcascaled(X, k=2, sd=1e-4):
    """openTSNE's PCA init: scores divided by the sd of the first column, times ``sd`` (1e-4)."""
    Xc = X - X.mean(axis=0)
    U, S, _ = np.linalg.svd(Xc, full_matrices=False)
    Y = U[:, :k] * S[:k]
    return Y / np.std(Y[:, 0]) * sd


def eta_of(rule, n):
    scale, c, *floor = rule
    s = {"n": n, "1": 1.0, "1/n": 1.0 / n}[str(scale)]
    return max(c * s, floor[0] if floor else -math.inf)


def quality(X, Y):
    if Y is None or not np.all(np.isfinite(Y)):
        return float("nan"), float("nan")
    return knn_preservation(X, Y, 15), random_triplet_accuracy(X, Y)


def _method_arg(name, n, params):
    params = dict(params or {})
    for key, value in list(params.items()):
        if value == "1/n":
            params[key] = 1.0 / n
    return (name, params) if params else name


def run_settings(X, name, st, seed=42, engine=None):
    """Run ``name`` on ``X`` with a ``defaults_table.json`` settings dict; returns ``(Y, info)``,
    info: ``diverged``, ``iter`` (iterations run, both calls), ``sd`` (of the final coordinates)."""
    n = len(X)
    method = _method_arg(name, n, st.get("params"))
    if engine is None:
        engine = st.get("engine") or ("exact" if name in _exact_methods() else "auto")
    common = dict(method=method, perplexity=st.get("perplexity", 30), random_state=seed,
                  ret_extra=True, engine=engine)
    if name == "tee":
        common["min_cost"] = -math.inf
    max_iter = st.get("max_iter", 750)
    if engine == "sgd":
        res = smallvis(X, Y_init=st.get("init"), max_iter=st.get("max_iter"), **common)
        return res.Y, _info(res)
    init = st.get("init", "pcascaled")
    Y0 = pcascaled(X, sd=st.get("init_sd", 1e-4)) if init == "pcascaled" else init
    eta = eta_of(st["eta"], n)
    opt = st.get("opt", "dbd")
    if opt != "dbd":
        opt = (opt, {"eta": eta}) if opt not in ("l-bfgs", "cg", "bfgs", "sd", "specd") else opt
    ex = st.get("exaggeration", 1)
    sli = st.get("stop_lying_iter", STOP_LYING)
    if st.get("reset") and ex != 1 and opt == "dbd":
        r1 = smallvis(X, Y_init=Y0, max_iter=sli, eta=eta, exaggeration_factor=ex,
                      stop_lying_iter=sli, momentum=0.5, final_momentum=0.5, tol=0, **common)
        if r1.diverged or not np.all(np.isfinite(r1.Y)):
            return r1.Y, _info(r1)
        res = smallvis(X, Y_init=r1.Y, Y_init_sdev=None, max_iter=max_iter - sli, eta=eta,
                       momentum=0.8, final_momentum=0.8, **common)
        return res.Y, _info(res, sli)
    else:
        kw = dict(exaggeration_factor=ex, stop_lying_iter=sli) if ex != 1 else {}
        res = smallvis(X, Y_init=Y0, max_iter=max_iter, eta=eta, opt=opt,
                       mom_switch_iter=STOP_LYING, **kw, **common)
    return res.Y, _info(res)


def _info(res, before=0):
    ok = np.all(np.isfinite(res.Y))
    return dict(diverged=bool(res.diverged) or not ok, iter=before + int(res.iter),
                sd=float(np.std(res.Y)) if ok else None)


def run_gallery(X, name):
    n = len(X)
    params = suggested_params(name, n)
    res = smallvis(X, method=(name, params) if params else name, perplexity=30, Y_init="spca",
                   max_iter=500, random_state=42, ret_extra=True, **suggested_settings(name, n))
    return res.Y, _info(res)


def run_estimator(X, name):
    from smallvis import SmallVis

    return SmallVis(method=name, random_state=0).fit_transform(X), None


def run_cli(ds, name):
    from smallvis.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "emb.csv"
        rc = cli_main(["embed", ds, "--method", name, "--metrics", "--out", str(out), "--seed",
                       "0", "--quiet"])
        if rc != 0:
            raise RuntimeError(f"cli exit {rc}")
        meta = json.loads(out.with_suffix(".json").read_text())
        import pandas as pd

        Y = pd.read_csv(out).select_dtypes("number").to_numpy()[:, :2]
    return Y, meta["metrics"].get("knn_preservation")


def run_peer(X, ds, name):
    if name == "tsne":
        from openTSNE import TSNE

        return np.asarray(TSNE(n_jobs=2, random_state=0).fit(X)), None
    if name == "umap":
        import umap

        return umap.UMAP(random_state=0).fit_transform(X), None
    if name == "ncvis" and ds in NCVIS_PEER:
        return None, NCVIS_PEER[ds]
    return None, None


def timed(fn, *args):
    """(fn's two outputs, seconds, error text or None): a column that errors must not stop the
    others."""
    start = time.perf_counter()
    err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(*args)
        except (Exception, SystemExit) as exc:
            err = f"{type(exc).__name__}: {str(exc)[:200]}"
            print(f"  ! {fn.__name__}{args[1:]}: {err}", file=sys.stderr)
            out = (None, None)
    return out, time.perf_counter() - start, err


def fmt(x, spec=".3f"):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


COLUMNS = ("gallery", "table", "estimator", "cli", "peer")


def run_one(ds, name, data, table, skip_peers, columns):
    X, Xu = data
    row = {"dataset": ds, "method": name}
    if "gallery" in columns:
        (Y, info), secs, err = timed(run_gallery, Xu, name)
        row["gallery"] = dict(zip(("knn", "triplet"), quality(Xu, Y)), secs=secs, **(info or {}),
                              error=err)
    if "table" in columns and name in table:
        (Y, info), secs, err = timed(run_settings, Xu, name, table[name])
        row["table"] = dict(zip(("knn", "triplet"), quality(Xu, Y)), secs=secs, **(info or {}),
                            error=err)
    Yest = None
    if "estimator" in columns:
        (Yest, _), secs, err = timed(run_estimator, X, name)
        row["estimator"] = dict(zip(("knn", "triplet"), quality(X, Yest)), secs=secs, error=err)
    if "cli" in columns:
        (Y, knn), secs, err = timed(run_cli, ds, name)
        same = None if Y is None or Yest is None else bool(
            np.allclose(Y, Yest, atol=1e-6, equal_nan=True))
        row["cli"] = dict(knn=knn, triplet=quality(X, Y)[1] if Y is not None else None,
                          secs=secs, same=same, error=err)
    if not skip_peers and "peer" in columns and name in ("tsne", "umap", "ncvis"):
        (Y, knn), secs, err = timed(run_peer, X, ds, name)
        if Y is not None:
            knn, trip = quality(X, Y)
            row["peer"] = dict(knn=knn, triplet=trip, secs=secs)
        elif knn is not None:
            row["peer"] = dict(knn=knn, triplet=None, secs=None, note="PEERS.md")
    return row


def markdown(rows, columns):
    head = "| method | dataset | " + " | ".join(
        f"{c} kNN | {c} trip | {c} s" for c in columns) + " | cli = est |"
    lines = [head, "|" + "---|" * (2 + 3 * len(columns) + 1)]
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c, {})
            knn = "error" if v.get("error") else fmt(v.get("knn"))
            if knn == "—" and c in ("gallery", "table", "estimator") and v:
                knn = "diverged"
            cells += [knn, fmt(v.get("triplet")), fmt(v.get("secs"), ".1f")]
        same = r.get("cli", {}).get("same")
        lines.append(f"| {r['method']} | {r['dataset']} | " + " | ".join(cells)
                     + f" | {'—' if same is None else ('yes' if same else 'NO')} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="iris,s1k,digits")
    ap.add_argument("--methods", default=None, help="comma-separated (default: all registered)")
    ap.add_argument("--columns", default=",".join(COLUMNS),
                    help=f"comma-separated subset of {','.join(COLUMNS)}")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--table", default=str(TABLE), help="the recommended-settings JSON")
    ap.add_argument("--out", default=None, help="write every row as JSON")
    args = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "2")
    table = json.loads(Path(args.table).read_text())["methods"] if Path(args.table).exists() else {}
    names = args.methods.split(",") if args.methods else list(REGISTRY)
    columns = [c for c in args.columns.split(",") if c in COLUMNS]
    rows = []
    for ds in args.datasets.split(","):
        data = load(ds)
        for name in names:
            row = run_one(ds, name, data, table, args.skip_peers, columns)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    rows.sort(key=lambda r: (names.index(r["method"]), r["dataset"]))
    shown = [c for c in columns if any(c in r for r in rows)]
    print(markdown(rows, shown))


if __name__ == "__main__":
    main()
