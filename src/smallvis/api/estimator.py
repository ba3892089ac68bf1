"""scikit-learn estimator over :func:`smallvis.smallvis`: ``SmallVis(...).fit_transform(X)``.

The estimator adds no behaviour of its own: ``__init__`` stores the parameters as given, ``fit`` checks
the array the scikit-learn way (so pipelines and ``check_estimator`` get the errors they expect) and
hands everything else, parameter checks included, to ``smallvis()``.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_non_negative, validate_data

from ..run.saved import stamped, unstamped
from .embed import DivergenceError, smallvis
from ..methods import EPS
from ..io.preprocess import is_dataframe, numeric_columns

MIN_SAMPLES = 3  # smallvis() embeds at least 3 points


class SmallVis(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Neighbour embedding (t-SNE and its relatives) as a scikit-learn estimator.

    A thin wrapper over :func:`smallvis.smallvis`: ``fit(X)`` runs
    ``smallvis(X, **self.get_params(), ret_extra=True)``, with one difference of default:
    ``defaults="auto"``, the modern settings (:mod:`smallvis.run.presets`: openTSNE's recipe for t-SNE,
    the ``sgd`` engine for umap/largevis/tumap/ncvis, a step size that works for every other method)
    instead of the R package's; ``defaults="smallvis"`` gives the original's numbers. A run that
    diverges raises :class:`smallvis.DivergenceError` rather than returning a broken embedding.
    ``transform(X_new)`` places new points next to the fitted embedding, which does not move
    (:func:`smallvis.smallvis_transform`: the same method on the same engine, only the new points
    optimised); transforming the very array that was fitted returns ``embedding_``, as umap-learn
    does. A fitted estimator pickles (the library version is stored and checked on loading).

    Parameters
    ----------
    method : str or (str, dict), default="tsne"
        The embedding method: a registered name (:func:`smallvis.list_methods`) or ``(name, params)``,
        e.g. ``("largevis", {"gamma": 1})``.
    %(shared)s
        Every other parameter of :func:`smallvis.smallvis` (all but ``X`` and ``ret_extra``), with the
        same name, default and meaning (but ``defaults``, ``"auto"`` here); see its documentation. They are stored as given and checked
        when ``fit`` runs. ``metric="precomputed"`` takes a square distance matrix as ``X``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, k)
        The embedding of the fitted points.
    result_ : SmallVisResult
        Everything the run produced: ``itercosts``, per-point ``costs``, the resolved ``opt`` and
        ``perplexity``, timings, exaggeration bookkeeping.
    n_iter_ : int
        Number of iterations run.
    cost_ : float
        Final total cost, without exaggeration (``result_.cost``).
    model_ : Model or None
        What ``transform`` needs (the processed training input, the embedding, the fitted input
        processing and the settings); None after a fit on a precomputed distance matrix.
    n_features_in_ : int
        Number of features used in ``fit``: the numeric columns of a DataFrame (others are dropped, as
        ``smallvis()`` does), or ``n_samples`` with ``metric="precomputed"``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of those features. Defined only when ``X`` is a DataFrame with string column names.

    See Also
    --------
    smallvis.smallvis : The functional interface that documents every parameter.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from smallvis import SmallVis
    >>> X = load_iris().data
    >>> est = SmallVis(perplexity=15, max_iter=100, random_state=0)
    >>> est.fit_transform(X).shape
    (150, 2)
    """

    def __init__(self, method="tsne", *, k=2, scale="absmax", Y_init=None, Y_init_sdev=None,
                 perplexity=None, max_iter=None, pca=False, initial_dims=50, epoch_callback=None,
                 epoch=None, min_cost=None, tol=1e-7, g2tol=None, momentum=0.5, final_momentum=0.8,
                 mom_switch_iter=None, eta=None, min_gain=0.01, opt=None, exaggeration_factor=None,
                 stop_lying_iter=None, late_exaggeration_factor=1.0, start_late_lying_iter=None,
                 iter0_cost=False, ee_mon_epoch=None, ee_mon_wait=15, ee_mon_buffer=2, tol_wait=15,
                 n_threads=0, use_cpp=False, bh=False, theta=1.0, eps=EPS, inp_kernel=None, nn=None,
                 verbose=False, metric="euclidean", engine="auto", random_state=None,
                 progress=False, defaults="auto", target_weight=0.5, dtype="float64",
                 metric_kwds=None, target_metric="categorical"):
        # store every parameter as given, under its own name (sklearn's get_params reads them back)
        for name, value in locals().items():
            if name != "self":
                setattr(self, name, value)

    def fit(self, X, y=None):
        """Embed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or (n_samples, n_samples)
            The points, one per row (non-numeric DataFrame columns are dropped), or their distances
            with ``metric="precomputed"``.
        y : array-like of shape (n_samples,), optional
            Labels for a supervised embedding (``-1``, NaN or None: unlabelled), weighted by
            ``target_weight`` (see ``smallvis()``'s ``y``). None: unsupervised.

        Returns
        -------
        self : SmallVis
            The fitted estimator.
        """
        precomputed = _is_precomputed(self.metric)
        if precomputed and isinstance(X, tuple):  # (indices, distances): checked by smallvis()
            self.n_features_in_ = np.shape(X[0])[0]
        else:
            # C order: the same numbers give the same embedding whatever their memory layout
            X = validate_data(self, _numeric_columns(X), dtype=np.float64, order="C",
                              ensure_min_samples=MIN_SAMPLES, accept_sparse="csr")
        if precomputed and not isinstance(X, tuple):  # what sklearn's positive_only tag asks for
            check_non_negative(X, f"SmallVis.fit with metric={self.metric!r}")
        labels = {} if y is None else {"y": y}
        result = smallvis(X, ret_extra=True if precomputed else ["model"], **labels,
                          **self.get_params(deep=False))
        if result.diverged:  # defaults="smallvis" returns it with a warning; an estimator does not
            raise DivergenceError(f"the optimisation of method {result.method!r} diverged: try a "
                                  "smaller eta, or defaults='auto'")
        self.result_ = result
        self.embedding_ = self.result_.Y
        self.n_iter_ = self.result_.iter
        self.cost_ = self.result_.cost
        self.model_ = None if precomputed else result.extras.pop("model")
        self._fit_digest = None if isinstance(X, tuple) else _digest(X)
        return self

    def __getstate__(self):
        return stamped(super().__getstate__())

    def __setstate__(self, state):
        super().__setstate__(unstamped(state, "SmallVis estimator"))

    def transform(self, X):
        """Place new points next to the fitted embedding (which does not move).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_new, n_features)
            New points with the fitted columns. The fitted array itself gives ``embedding_``.

        Returns
        -------
        ndarray of shape (n_new, k)
        """
        from sklearn.utils.validation import check_is_fitted

        from .transform import smallvis_transform

        check_is_fitted(self, "embedding_")
        X = validate_data(self, _numeric_columns(X), dtype=np.float64, order="C", reset=False,
                          accept_sparse="csr")
        if _digest(X) == self._fit_digest:
            return self.embedding_.copy()
        if self.model_ is None:
            raise ValueError("transform: this SmallVis was fitted on a precomputed distance matrix; "
                             "new points cannot be placed from their distances to the fitted ones "
                             "alone (fit on coordinates to transform new points)")
        return smallvis_transform(self.model_, X, verbose=self.verbose)

    def fit_transform(self, X, y=None):
        """Embed ``X`` and return the embedding.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or (n_samples, n_samples)
            As for :meth:`fit`.
        y : array-like of shape (n_samples,), optional
            Labels for a supervised embedding, as for :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples, k)
            The embedding (also stored as ``embedding_``).
        """
        return self.fit(X, y).embedding_

    @property
    def _n_features_out(self):
        """Number of output dimensions, for ``get_feature_names_out`` (``smallvis0``, ...)."""
        return self.embedding_.shape[1]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # distance matrices are indexed on both axes (cross-validation slices them so) and are >= 0
        tags.input_tags.pairwise = tags.input_tags.positive_only = _is_precomputed(self.metric)
        tags.input_tags.sparse = True
        return tags


def _digest(X: np.ndarray) -> str:
    """A fingerprint of an array's shape and values (is this the array that was fitted?)."""
    import hashlib

    if hasattr(X, "tocsr"):
        X = X.tocsr()
        digest = hashlib.sha256(repr(("csr", X.shape)).encode())
        for part in (X.data, X.indices, X.indptr):
            digest.update(np.ascontiguousarray(part).tobytes())
        return digest.hexdigest()
    X = np.ascontiguousarray(X)
    return hashlib.sha256(repr(X.shape).encode() + X.tobytes()).hexdigest()


def _numeric_columns(X):
    """A DataFrame's numeric and boolean columns (what ``smallvis()`` keeps); anything else as is."""
    return numeric_columns(X) if is_dataframe(X) else X


def _is_precomputed(metric) -> bool:
    """Whether ``metric`` says X holds distances, a kNN graph or affinities rather than points
    ("precomputed" or "affinities", as smallvis() matches names; an invalid name is not, and fails
    in fit with the list of valid ones)."""
    from ..io.metric import parse_metric

    try:
        return parse_metric(metric)[0] != "data"
    except (ValueError, TypeError):
        return False


# The Parameters entry names every shared parameter, read from the signature so it cannot drift.
_SHARED = [name for name in inspect.signature(SmallVis).parameters if name != "method"]
if SmallVis.__doc__:  # None under python -OO
    SmallVis.__doc__ = SmallVis.__doc__.replace("%(shared)s", ", ".join(_SHARED))
