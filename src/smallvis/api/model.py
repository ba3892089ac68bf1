"""What a fitted run keeps so that new points can be placed next to it (:mod:`.transform`).

The processed training input, its coordinates, the fitted input processing
(:class:`~smallvis.io.input_map.InputMap`), the run's settings and the engine it ran on: plain
arrays and settings, no compiled code, so a model pickles small and loads in any process of a
compatible version (:mod:`smallvis.run.saved`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..run.saved import check_saved_version
from .._version import __version__
from ..io.input_map import InputMap, fit_input_map
from ..io.metric import parse_metric
from ..io.prepare import SCALED_METRICS
from ..io.preprocess import as_numeric_matrix, as_sparse_matrix, resolve_scale
from ..run.config import RunConfig

__all__ = ["Model", "build_model"]


@dataclass
class Model:
    """What a fitted run keeps so that new points can be placed (plain arrays and settings).

    Stored: the processed training input ``X`` (n, p'), its coordinates ``Y`` (n, k), the input
    processing ``input_map``, the run's arguments (callbacks and the start left out), the engine
    the fit ran on, the neighbours the fit found (sparse-P engines), and the version of smallvis
    that fitted it (checked on loading: :mod:`smallvis.run.saved`).
    """

    X: np.ndarray
    Y: np.ndarray
    input_map: InputMap
    arguments: dict
    engine: object
    version: str = __version__
    info: dict = field(default_factory=dict)
    # the fit's neighbours of each training point among the training points (sparse-P engines):
    # a transform reuses them and searches only the new points' neighbours
    neighbors: tuple | None = None
    # the fit's un-normalised input kernel values of the training points (CSR (n, n), sparse-P
    # engines): a transform reuses these rows and calibrates only the new points' (None: models
    # saved before, or runs without them, calibrate every row again)
    kernel_rows: object = None
    # the walk's search structures over the fitted points (io.graph_query), made by the first
    # transform that walks the graph and kept for the next ones in this process (not pickled:
    # rebuilt after loading, which is cheaper than storing the graph)
    _search: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def search_index(self, reverse: bool):
        """``(graph, trees)`` of :func:`smallvis.io.graph_query.graph_neighbors` over the fitted
        points (the graph with or without its reverse edges), made once per model and process."""
        from ..io.graph_query import search_graph, search_trees

        if reverse not in self._search:
            self._search[reverse] = search_graph(self.neighbors[0], reverse=reverse)
        if "trees" not in self._search:
            self._search["trees"] = search_trees(self.X)
        return self._search[reverse], self._search["trees"]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_search"] = {}
        return state

    def __setstate__(self, state):
        check_saved_version(state.get("version"), "transform model")
        self.__dict__.update({"_search": {}, **state})


def build_model(X_raw, data, config: RunConfig, result, state=None) -> Model:
    """The model of a finished run: ``X_raw`` the input as given, ``data`` what the run embedded,
    ``state`` the method's state (its sparse kernel values are kept for a transform)."""
    if data.precomputed:
        raise ValueError("ret_extra 'model': a run on a precomputed distance matrix cannot place new "
                         "points from coordinates; fit on the coordinates instead")
    inp = config.input
    raw = as_sparse_matrix(X_raw) if hasattr(X_raw, "tocsr") else as_numeric_matrix(X_raw)
    mode = resolve_scale(inp.scale)
    if parse_metric(inp.metric, inp.metric_kwds)[1].name not in SCALED_METRICS:  # type: ignore
        mode = "none"  # as prepare_input: the scale modes apply to the Minkowski family only
    input_map = fit_input_map(raw, mode, data.X,
                              projected=bool(result.pca_dims or result.whiten_dims))
    arguments = {key: value for key, value in config.arguments().items()
                 if key not in ("epoch_callback", "progress", "Y_init", "ret_extra")}
    engine = config.engine
    if isinstance(engine, str) and engine.strip().lower() == "auto":
        engine = result.engine  # the engine auto chose: the joint run must not switch engines
    X = data.X.copy() if data.sparse else np.array(data.X, dtype=np.float64)
    return Model(X=X, Y=np.array(result.Y, dtype=np.float64),
                 input_map=input_map, arguments=arguments, engine=engine,
                 info={"method": result.method, "engine": result.engine,
                       "eta": result.opt.get("eta")},
                 neighbors=data.known_neighbors(), kernel_rows=_kernel_rows(data, state))


def _kernel_rows(data, state):
    """The fit's sparse input kernel values (CSR, int32 indices) when its neighbours are kept."""
    from scipy import sparse

    V = getattr(getattr(state, "affinities", None), "kept_V", None)  # never recomputed here
    if V is None or not sparse.issparse(V) or data.known_neighbors() is None:
        return None
    V = sparse.csr_matrix(V, dtype=np.float64)
    return sparse.csr_matrix((V.data, V.indices.astype(np.int32), V.indptr.astype(np.int32)),
                             shape=V.shape)
