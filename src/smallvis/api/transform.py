"""Out-of-sample embedding: new points placed next to a fitted embedding, the embedding held still.

A fitted :class:`~smallvis.api.model.Model` keeps what the run needs to be continued.
:func:`smallvis_transform` maps the new rows with the fit's constants, starts each new point at the
median of its nearest training points' coordinates (in the input space), and runs **the same
method, on the same engine**, on the training and new points together with the training coordinates
frozen: only the new points move, under the method's own cost, without exaggeration. On the
kNN-graph engines the training rows keep the fit's neighbours and kernel values, only the new rows
are searched and calibrated, and the engine computes only the new rows' gradient; by default each
new point's neighbours are training points and (``bh``, ``fft``) it is repelled by the training
points only, as in openTSNE and umap-learn (``joint=True``: the batch placed jointly, the new points
neighbours of one another). The other engines place the batch jointly.
So every method and every engine that can fit can also transform; see docs/transform.md.
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger, verbose_logging
from .._util.parallel import run_threads
from ..io.metric import parse_metric
from ..io.neighbors import query_neighbors
from ..io.preprocess import as_numeric_matrix, as_sparse_matrix, check_finite
from ..run.config import RunConfig
from .model import Model

__all__ = ["Model", "smallvis_transform"]

# iterations of a transform on a gradient engine: from the neighbours' median the new points settle
# within about 75 (held-out digits: the joint cost is flat from there, and the placement at 100
# iterations is that at 1,000 to within a tenth of the fitted points' nearest-neighbour spacing;
# openTSNE's transform runs 250 smaller steps); on the sgd engine umap-learn's transform: 100 epochs
# up to 10,000 points, 30 above, at a quarter of the fit's learning rate
TRANSFORM_ITER = 100
TRANSFORM_EPOCHS = (100, 30)
SGD_RATE = 0.25
START_NEIGHBOURS = 10  # a new point starts at the median of this many nearest training points
GRAPH_REVERSE_K = 30  # the graph walk adds the reverse edges up to this many neighbours

# settings of the fit that a transform must not reuse: the start, its spread, the exaggeration
# stages, the input processing (the model's rows are already processed), callbacks and outputs
_RESET = dict(Y_init=None, Y_init_sdev=None, exaggeration_factor=1.0, stop_lying_iter=None,
              late_exaggeration_factor=1.0, start_late_lying_iter=None, ee_mon_epoch=None,
              scale="none", pca=False, epoch_callback=None, progress=False, ret_extra=False,
              max_iter=None)


def smallvis_transform(model, X_new, *, max_iter=None, random_state=None, verbose=False,
                       n_threads=None, ret_extra=False, joint=False):
    """Place new points ``X_new`` next to a fitted embedding, which does not move.

    Parameters
    ----------
    model : Model, SmallVisResult or SmallVis
        A fitted model: ``SmallVis(...).fit(X)`` (or its ``model_``), or the result of
        ``smallvis(X, ..., ret_extra=["model"])``.
    X_new : array (m, p) or DataFrame
        New points, with the columns the model was fitted on.
    max_iter : int, optional
        Iterations (gradient engines; default 100) or epochs (``sgd``; default 100, 30 above 10,000
        points in all).
    random_state : int, optional
        Seed of the joint run (the fit's seed when None).
    verbose : bool
        Log the run.
    n_threads : int, optional
        Threads (the fit's setting when None).
    ret_extra : bool
        Return the joint run's :class:`~smallvis.SmallVisResult` (its ``Y`` the new points' only)
        instead of the coordinates.
    joint : bool
        On the kNN-graph engines (``bh``, ``fft``, ``sgd``): False (the default, as openTSNE and
        umap-learn) gives each new point neighbours among the fitted points only and, on ``bh``
        and ``fft`` for t-SNE and its heavy-tailed relatives, no repulsion from the other new
        points: each is placed against the fitted embedding. True places the batch jointly: the
        new points' neighbours among the fitted and the new points, and their repulsion of one
        another (a cluster absent from the fit forms its own cluster; slower). The other engines
        always place the batch jointly.

    Returns
    -------
    array (m, k), or a result with ``ret_extra=True``.
    """
    model = as_model(model)
    if _is_sparse(X_new):
        X_new = as_sparse_matrix(X_new, what="X_new")
    else:
        X_new = as_numeric_matrix(X_new, what="X_new")
        if X_new.ndim != 2 or X_new.shape[0] < 1:
            raise ValueError(f"X_new must be a 2-D array with at least one row; got shape "
                             f"{X_new.shape}")
        check_finite(X_new, what="X_new")
    Xn = model.input_map.apply(X_new)
    if Xn.shape[1] != model.X.shape[1]:  # only a corrupt model gets here
        raise ValueError(f"the mapped new points have {Xn.shape[1]} columns, the model {model.X.shape[1]}")
    threads = model.arguments.get("n_threads", 0) if n_threads is None else n_threads
    with verbose_logging(verbose), run_threads(threads):
        return _transform(model, Xn, max_iter=max_iter, random_state=random_state,
                          verbose=verbose, ret_extra=ret_extra, joint=bool(joint))


def as_model(fitted) -> Model:
    """The :class:`Model` inside an estimator, a result, or the model itself."""
    if isinstance(fitted, Model):
        return fitted
    model = getattr(fitted, "model_", None)
    if model is None and hasattr(fitted, "extras"):
        model = fitted.extras.get("model")
    if isinstance(model, Model):
        return model
    if hasattr(fitted, "get_params") and not hasattr(fitted, "embedding_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"this {type(fitted).__name__} is not fitted yet: call fit(X) first")
    raise TypeError("transform needs a fitted model: a fitted SmallVis, or the result of "
                    "smallvis(X, ..., ret_extra=['model'])"
                    + (" (this result was run without ret_extra=['model'])"
                       if hasattr(fitted, "extras") else f"; got {type(fitted).__name__}"))


def _transform(model: Model, Xn: np.ndarray, *, max_iter, random_state, verbose, ret_extra,
               joint=False):
    from .pipeline import embed

    n, m = model.n, Xn.shape[0]
    if _is_sparse(model.X) or _is_sparse(Xn):
        import scipy.sparse as sp

        data = sp.vstack([sp.csr_matrix(model.X), sp.csr_matrix(Xn)], format="csr")
    else:
        data = np.vstack([model.X, Xn])
    seed = model.arguments.get("random_state") if random_state is None else random_state
    rng = np.random.default_rng(seed if seed is not None else 0)
    neighbors, nearest = new_neighbors(model, Xn, joint=joint)
    start = np.vstack([model.Y, start_positions(model, Xn, rng, nearest)])
    frozen = np.zeros(n + m, dtype=bool)
    frozen[:n] = True
    stochastic = _engine_name(model.engine) == "sgd"
    if max_iter is None:
        max_iter = (TRANSFORM_EPOCHS[0] if n + m <= 10_000 else TRANSFORM_EPOCHS[1]) if stochastic \
            else TRANSFORM_ITER
    arguments = {**model.arguments, **_RESET, "Y_init": start, "max_iter": int(max_iter),
                 "engine": model.engine, "random_state": seed,
                 "ret_extra": bool(ret_extra), "verbose": verbose}
    arguments.pop("n_threads", None)
    if arguments.get("y") is not None:  # the fitted points keep their labels, the new are unlabelled
        arguments["y"] = np.concatenate([np.asarray(arguments["y"], dtype=object),
                                         np.full(m, None, dtype=object)])
    if stochastic and model.info.get("eta") is not None:
        arguments["eta"] = SGD_RATE * float(model.info["eta"])
    logger.info("transform: %d new points next to %d fitted ones, %s, %d %s", m, n,
                model.info.get("method"), max_iter, "epochs" if stochastic else "iterations")
    # the fitted rows' kernel values are reused where the fitted rows keep their neighbours
    fitted_V = getattr(model, "kernel_rows", None) if neighbors is not None else None
    res = embed(data, RunConfig.from_arguments(**arguments), frozen=frozen,
                neighbors=neighbors, fitted_V=fitted_V, apart=not joint)
    if not ret_extra:  # the coordinates only (nor the joint costs nor their record computed)
        return np.ascontiguousarray(res[n:])
    Y = np.ascontiguousarray(res.Y[n:])
    res.Y = Y
    return res


def new_neighbors(model: Model, Xn, joint: bool = False):
    """One search of the new points' neighbours: ``(neighbours, nearest)``.

    ``neighbours``: the joint data's neighbours when the fit found its own (the sparse-P engines),
    the fitted points keeping theirs and each new point's ``k`` nearest fitted points (``joint``:
    its ``k`` nearest among the fitted and the other new points); None otherwise (the run then
    searches, or computes all distances, as a fit does).
    ``nearest`` (m, ``START_NEIGHBOURS``): each new point's nearest fitted points, for its start.
    Both come from the same search of the new points among the fitted ones (exact, brute force, or
    the walk on the fitted points' neighbour graph where :func:`walks_graph`), with ``joint``
    merged with an exact search among the new points."""
    k_start = min(START_NEIGHBOURS, model.n)
    k = 0 if model.neighbors is None else model.neighbors[0].shape[1]
    k_fit = min(max(k, k_start), model.n)
    if walks_graph(model, Xn, k_fit):
        from ..io.graph_query import graph_neighbors

        # umap's few neighbours need the reverse edges to leave a tight clump; t-SNE's many do not,
        # and half the edges halve the walk's distances
        graph, trees = model.search_index(reverse=k_fit <= GRAPH_REVERSE_K)
        i_fit, d_fit = graph_neighbors(model.X, Xn, model.neighbors[0], k_fit, graph=graph,
                                       trees=trees)
    else:
        d_fit, i_fit = _search(model, Xn, model.X, k_fit)
    nearest = i_fit[:, :k_start]
    if model.neighbors is None:
        return None, nearest
    idx, dist = model.neighbors
    n, m = model.n, Xn.shape[0]
    if not joint:
        return ((np.vstack([idx, i_fit[:, :k]]).astype(idx.dtype, copy=False),
                 np.vstack([dist, d_fit[:, :k]])), nearest)
    d_new, i_new = _search(model, Xn, Xn, min(k + 1, m))
    i_new = i_new + n
    d_new = np.where(i_new == np.arange(n, n + m)[:, None], np.inf, d_new)  # the point itself
    D = np.hstack([d_fit[:, :k], d_new])
    I = np.hstack([i_fit[:, :k], i_new])
    order = np.argsort(D, axis=1, kind="stable")[:, :k]  # ties: fitted points, lower index first
    new_idx = np.take_along_axis(I, order, axis=1)
    new_dist = np.take_along_axis(D, order, axis=1)
    return ((np.vstack([idx, new_idx]).astype(idx.dtype, copy=False), np.vstack([dist, new_dist])),
            nearest)


def walks_graph(model: Model, Xn, k: int) -> bool:
    """Whether the new points' neighbours among the fitted ones come from the walk on the fitted
    points' neighbour graph (:func:`smallvis.io.graph_query.graph_neighbors`: approximate,
    deterministic) rather than an exact search: where the fit's own neighbours were approximate
    (``knn="auto"`` where :func:`~smallvis.io.neighbors.auto_knn_method` picks an approximate
    search, or ``"nndescent"``, ``"pynndescent"``), on dense Euclidean rows. At 60,000 + 10,000
    resampled digits: umap's 14 neighbours 4x faster than the exact search, recall 0.9999; t-SNE's
    90 (the walk on the forward edges only) 1.6x faster, recall 0.9997."""
    from ..io.neighbors import auto_knn_method

    if model.neighbors is None or _is_sparse(model.X) or _is_sparse(Xn):
        return False
    if not model_metric(model).euclidean:
        return False
    engine = model.engine
    options = engine[1] if isinstance(engine, (tuple, list)) and len(engine) > 1 else {}
    knn = str((options or {}).get("knn", "auto")).strip().lower()
    if knn in ("nndescent", "pynndescent"):
        return True
    return knn == "auto" and auto_knn_method(model.n, model.neighbors[0].shape[1],
                                             model.X.shape[1]) != "exact"


def _search(model: Model, Q, X, k: int):
    """``(distances, indices)`` (len(Q), k) of each row of ``Q``'s ``k`` nearest rows of ``X``."""
    idx, dist = query_neighbors(Q, X, k, model_metric(model))
    return dist, idx


def start_positions(model: Model, Xn: np.ndarray, rng, nearest=None) -> np.ndarray:
    """Each new point at the median coordinates of its nearest training points (input space;
    ``nearest`` their indices when already found), with a jitter of 1e-4 of the embedding's spread
    so that identical new points do not coincide."""
    if nearest is None:
        nearest = new_neighbors(model, Xn)[1]
    Y = np.median(model.Y[nearest], axis=1)
    spread = float(np.std(model.Y)) or 1.0
    return Y + rng.normal(scale=1e-4 * spread, size=Y.shape)


def model_metric(model: Model):
    """The input metric the model was fitted with (Euclidean for models saved before metrics)."""
    return parse_metric(model.arguments.get("metric", "euclidean"),
                        model.arguments.get("metric_kwds"))[1]


def _is_sparse(X) -> bool:
    return hasattr(X, "tocsr")


def _engine_name(engine) -> str:
    name = engine[0] if isinstance(engine, (tuple, list)) else engine
    return str(name).strip().lower()
