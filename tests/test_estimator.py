"""The scikit-learn estimator ``SmallVis``: sklearn's own checks, and agreement with ``smallvis()``."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from smallvis import SmallVis, SmallVisResult, smallvis
from smallvis.api import estimator as estimator_module

FAST = dict(perplexity=2, max_iter=50, random_state=0)


# transform places a batch of new points together (they are neighbours of one another in the joint
# run, as in a fit), so a batch's result depends on which other points are in it and in what order
# their starts are jittered: sklearn's invariance checks of a per-sample transform do not apply
BATCH_TRANSFORM = {
    "check_methods_sample_order_invariance": "transform places a batch jointly",
    "check_methods_subset_invariance": "transform places a batch jointly",
}

# fitted on distances, transform can only give back the fitted matrix's embedding (new points would
# need their distances to each other as well): the checks that transform other matrices cannot pass
PRECOMPUTED = {**BATCH_TRANSFORM, "check_fit_idempotent": "transform needs coordinates"}


@parametrize_with_checks([
    SmallVis(**FAST),
    SmallVis(Y_init="pca", **FAST),
    SmallVis(Y_init="laplacian", exaggeration_factor=4, stop_lying_iter=10, **FAST),
    SmallVis(metric="precomputed", **FAST),
], expected_failed_checks=lambda est: PRECOMPUTED if est.metric == "precomputed" else BATCH_TRANSFORM)
# iris (used by some checks) has duplicate rows, where perplexity 2 cannot be reached: smallvis warns
@pytest.mark.filterwarnings("ignore:.*perplexity calibrations failed:RuntimeWarning")
def test_sklearn_estimator_checks(estimator, check, monkeypatch):
    # sklearn skips its array-API check unless this is set (its own CI sets it); with it set, the check
    # runs: SmallVis must work with array_api_dispatch on and NumPy input
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


@pytest.fixture(scope="module")
def X(iris):
    return iris[::3]  # 50 points


def test_fit_transform_equals_smallvis(X):
    params = dict(perplexity=10, max_iter=60, Y_init="spca", eta=100.0, random_state=3)
    est = SmallVis(**params)
    Y = est.fit_transform(X)
    np.testing.assert_array_equal(Y, smallvis(X, defaults="auto", **params))
    assert Y is est.embedding_
    assert Y.shape == (len(X), 2) and Y.dtype == np.float64


def test_fitted_attributes(X):
    est = SmallVis(perplexity=10, max_iter=40, random_state=0).fit(X)
    assert isinstance(est.result_, SmallVisResult)
    assert est.embedding_ is est.result_.Y
    assert est.n_iter_ == est.result_.iter == 40
    assert est.cost_ == est.result_.cost == pytest.approx(np.sum(est.result_.costs))
    assert est.n_features_in_ == X.shape[1]
    assert not hasattr(est, "feature_names_in_")
    np.testing.assert_array_equal(est.get_feature_names_out(), ["smallvis0", "smallvis1"])


def test_same_seed_same_embedding(X):
    est = SmallVis(perplexity=10, max_iter=40, random_state=7)
    Y1 = est.fit_transform(X)
    Y2 = clone(est).fit_transform(X)
    np.testing.assert_array_equal(Y1, Y2)
    np.testing.assert_array_equal(Y1, est.fit_transform(X))  # refitting the same instance too
    # the modern defaults start from PCA, which draws nothing: a random start to see the seed
    Y7 = SmallVis(perplexity=10, max_iter=40, random_state=7, Y_init="rand").fit_transform(X)
    Y8 = SmallVis(perplexity=10, max_iter=40, random_state=8, Y_init="rand").fit_transform(X)
    assert not np.array_equal(Y7, Y8)


def test_get_set_params_round_trip(X):
    est = SmallVis("tsne", perplexity=10, max_iter=40, random_state=0)
    params = est.get_params()
    assert params["method"] == "tsne" and params["perplexity"] == 10
    assert SmallVis(**params).get_params() == params
    Y10 = est.fit_transform(X)
    assert est.set_params(perplexity=5) is est
    assert est.get_params()["perplexity"] == 5
    Y5 = est.fit_transform(X)
    assert not np.allclose(Y5, Y10)
    np.testing.assert_array_equal(
        Y5, smallvis(X, method="tsne", perplexity=5, max_iter=40, random_state=0, defaults="auto"))
    assert est.result_.perplexity == 5


def test_every_parameter_reaches_smallvis(monkeypatch, X):
    """fit passes each stored parameter, unchanged, to smallvis() (propagation, not just storage)."""
    seen = {}

    def spy(X, **kwargs):
        seen.update(kwargs)
        return smallvis(X, **kwargs)

    monkeypatch.setattr(estimator_module, "smallvis", spy)
    sentinel = np.zeros((len(X), 3)) + np.arange(3)  # an init matrix: an object, not a name
    est = SmallVis(("tsne", {}), k=3, Y_init=sentinel, perplexity=7, max_iter=20, eta=50.0, tol=0.0,
                   random_state=1)
    est.fit(X)
    assert seen.pop("ret_extra") == ["model"]  # what transform needs
    assert seen.keys() == est.get_params().keys()
    for name, value in est.get_params().items():
        assert seen[name] is value, name
    assert est.embedding_.shape == (len(X), 3)


def test_memory_layout_does_not_matter(X):
    est = SmallVis(perplexity=10, max_iter=40, random_state=0)
    np.testing.assert_array_equal(est.fit_transform(X), est.fit_transform(np.asfortranarray(X)))


def test_dataframe_with_text_column(iris):
    frame = pd.DataFrame(iris[:40], columns=["sl", "sw", "pl", "pw"])
    frame.insert(2, "species", ["setosa"] * 20 + ["versicolor"] * 20)
    est = SmallVis(perplexity=5, max_iter=40, random_state=0)
    with pytest.warns(UserWarning, match=r"non-numeric column\(s\) 'species' dropped"):
        Y = est.fit_transform(frame)
    np.testing.assert_array_equal(Y, smallvis(iris[:40], perplexity=5, max_iter=40, random_state=0,
                                              defaults="auto"))
    np.testing.assert_array_equal(est.feature_names_in_, ["sl", "sw", "pl", "pw"])
    assert est.n_features_in_ == 4


def test_dataframe_without_numeric_columns():
    frame = pd.DataFrame({"a": list("xyzw"), "b": list("pqrs")})
    with pytest.raises(ValueError, match="no numeric columns.*a, b"):
        SmallVis(perplexity=2).fit(frame)


def test_set_output_pandas(iris):
    frame = pd.DataFrame(iris[:30], columns=["a", "b", "c", "d"], index=range(100, 130))
    out = SmallVis(**FAST).set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == ["smallvis0", "smallvis1"]
    assert list(out.index) == list(range(100, 130))


def test_bad_method_fails_at_fit_not_construction(X):
    est = SmallVis("tnse")  # __init__ only stores
    assert est.method == "tnse"
    with pytest.raises(ValueError, match="tsne"):
        est.fit(X)


def test_smallvis_errors_pass_through(X):
    with pytest.raises(ValueError, match="perplexity 60 is too large"):
        SmallVis(perplexity=60).fit(X)
    with pytest.raises(ValueError, match="minimum of 3 is required"):
        SmallVis(perplexity=1).fit(X[:2])


def test_precomputed_distances(X):
    from scipy.spatial.distance import pdist, squareform

    D = squareform(pdist(X))
    params = dict(perplexity=10, max_iter=40, random_state=2)
    est = SmallVis(metric="precomputed", **params)
    np.testing.assert_array_equal(
        est.fit_transform(D), smallvis(D, metric="precomputed", defaults="auto", **params))
    assert est.n_features_in_ == len(X)
    with pytest.raises(ValueError, match="square"):
        est.fit(X)


@pytest.mark.parametrize("metric, pairwise", [
    ("euclidean", False), ("precomputed", True), ("Pre", True), ("", False), (None, False),
])
def test_pairwise_tag(metric, pairwise):
    tags = SmallVis(metric=metric).__sklearn_tags__()
    assert tags.input_tags.pairwise is pairwise
    assert tags.input_tags.positive_only is pairwise  # distances are never negative
    assert tags.transformer_tags is not None and tags.requires_fit


def test_transform_only_from_coordinates(X):
    """New points are placed from their coordinates; fitted on a distance matrix, the estimator
    gives back the fitted matrix's embedding and refuses other input, saying why."""
    from scipy.spatial.distance import pdist, squareform

    D = squareform(pdist(X))
    est = SmallVis(metric="precomputed", **FAST).fit(D)
    np.testing.assert_array_equal(est.transform(D), est.embedding_)
    with pytest.raises(ValueError, match="precomputed distance matrix"):
        est.transform(D[::-1])


def test_in_a_pipeline(X):
    pipe = make_pipeline(StandardScaler(), SmallVis(perplexity=10, max_iter=30, random_state=0))
    Y = pipe.fit_transform(X)
    expected = smallvis(StandardScaler().fit_transform(X), perplexity=10, max_iter=30,
                        random_state=0, defaults="auto")
    np.testing.assert_array_equal(Y, expected)
