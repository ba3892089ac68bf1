"""Neighbours and affinities given instead of data (io/graph.py): kNN distance graphs,
(indices, distances) arrays, a KNeighborsTransformer pipeline, and P itself."""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_digits
from sklearn.neighbors import KNeighborsTransformer, NearestNeighbors, kneighbors_graph
from sklearn.pipeline import make_pipeline

from smallvis import SmallVis, smallvis
from smallvis.io.graph import graph_neighbors, knn_arrays_to_graph


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


def _accuracy(Y, y):
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    return cross_val_score(KNeighborsClassifier(10), Y, y, cv=5).mean()


def test_graph_neighbours_read_back(digits):
    X = digits[0]
    G = kneighbors_graph(X, 12, mode="distance")
    idx, dist = graph_neighbors(G)
    d, i = NearestNeighbors(n_neighbors=13).fit(X).kneighbors(X)
    np.testing.assert_allclose(dist, d[:, 1:], rtol=1e-10)
    G = G.tocsr()
    assert all(set(idx[r]) == set(G.indices[G.indptr[r]:G.indptr[r + 1]]) for r in range(len(X)))
    assert (np.diff(dist, axis=1) >= 0).all()
    # KNeighborsTransformer stores each point itself at distance 0: dropped
    T = KNeighborsTransformer(n_neighbors=12, mode="distance").fit_transform(X)
    idx_t, dist_t = graph_neighbors(T)
    np.testing.assert_allclose(dist_t, dist, rtol=1e-10)


def test_umap_on_a_graph_equals_umap_on_the_points(digits):
    """The graph of the 14 nearest neighbours gives umap (15 neighbours, the point itself
    included) the P it computes from the coordinates."""
    X, y = digits
    X = X + np.random.default_rng(0).normal(scale=1e-3, size=X.shape)  # no tied neighbours
    kw = dict(method="umap", max_iter=0, ret_extra=["P"], random_state=0, defaults="auto",
              scale="none")
    P_points = smallvis(X, **kw).extras["P"]
    P_graph = smallvis(kneighbors_graph(X, 14, mode="distance"), metric="precomputed",
                       **kw).extras["P"]
    np.testing.assert_allclose(P_graph.toarray(), P_points.toarray(), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("method", ["tsne", "umap", "largevis"])
def test_methods_on_a_graph(digits, method):
    X, y = digits
    G = kneighbors_graph(X, 90, mode="distance")
    Y = SmallVis(method, metric="precomputed", random_state=0).fit_transform(G)
    assert _accuracy(Y, y) > 0.9


def test_indices_and_distances(digits):
    X, y = digits
    d, i = NearestNeighbors(n_neighbors=16).fit(X).kneighbors(X)  # the point itself first
    G, k = knn_arrays_to_graph(i, d)
    assert k == 15 and G.nnz == 15 * len(X)
    kw = dict(method="umap", metric="precomputed", random_state=0, defaults="auto", max_iter=60)
    np.testing.assert_array_equal(smallvis((i, d), **kw), smallvis(G, **kw))
    est = SmallVis("umap", metric="precomputed", random_state=0).fit((i, d))
    assert est.embedding_.shape == (len(X), 2) and _accuracy(est.embedding_, y) > 0.9
    # too few neighbours for the perplexity: lowered, as openTSNE does, with a warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Y = smallvis((i, d), method="tsne", metric="precomputed", defaults="auto",
                     random_state=0, max_iter=100)
    assert any("perplexity lowered to 5" in str(w.message) for w in caught)
    assert np.isfinite(Y).all()


def test_kneighbors_transformer_pipeline(digits):
    X, y = digits
    pipe = make_pipeline(KNeighborsTransformer(n_neighbors=90, mode="distance"),
                         SmallVis(metric="precomputed", random_state=0))
    Y = pipe.fit_transform(X)
    assert Y.shape == (len(X), 2) and _accuracy(Y, y) > 0.9


def test_graph_errors(digits):
    X = digits[0]
    G = kneighbors_graph(X, 10, mode="distance")
    with pytest.raises(ValueError, match="10 neighbours per point; 14 are needed"):
        smallvis(G, method="umap", metric="precomputed", defaults="auto")
    with pytest.raises(ValueError, match="needs all pairwise input distances"):
        smallvis(G, method="mmds", metric="precomputed", defaults="auto")
    bad = G.copy()
    bad.data[5] = -1.0
    with pytest.raises(ValueError, match="negative distances"):
        smallvis(bad, method="umap", metric="precomputed")
    with pytest.raises(ValueError, match="SmallVis.fit with metric='precomputed'"):
        SmallVis("umap", metric="precomputed").fit(bad)
    i = np.tile(np.arange(5), (len(X), 1))
    with pytest.raises(ValueError, match="same shape"):
        smallvis((i, np.zeros((len(X), 4))), metric="precomputed")
    with pytest.raises(ValueError, match=r"indices must lie in \[0, n - 1\]"):
        smallvis((i - 1, np.ones_like(i, dtype=float)), metric="precomputed")
    est = SmallVis("umap", metric="precomputed", random_state=0).fit(
        kneighbors_graph(X, 20, mode="distance"))
    with pytest.raises(ValueError, match="new points cannot be placed"):
        est.transform(np.ones((5, len(X))))


# --- given affinities --------------------------------------------------------------------------


def test_given_P_reproduces_the_run(digits):
    X = digits[0]
    kw = dict(method="tsne", perplexity=20, max_iter=100, Y_init="rand", random_state=3)
    res = smallvis(X, ret_extra=["P"], **kw)
    Y = smallvis(res.extras["P"], metric="affinities", **kw)
    np.testing.assert_array_equal(Y, res.Y)
    # sparse P on the sparse engines
    res = smallvis(X, method="umap", defaults="auto", ret_extra=["P"], random_state=0)
    Y = smallvis(res.extras["P"], method="umap", metric="affinities", defaults="auto",
                 random_state=0)
    np.testing.assert_array_equal(Y, res.Y)


def test_given_P_is_checked(digits):
    X = digits[0][:100]
    P = smallvis(X, perplexity=10, max_iter=0, ret_extra=["P"]).extras["P"]
    run = dict(metric="affinities", perplexity=10, max_iter=5)
    with pytest.raises(ValueError, match="sums to 2; this method's P is a joint distribution"):
        smallvis(2 * P, **run)
    with pytest.raises(ValueError, match="negative entries"):
        smallvis(P - 1e-3, **run)
    asym = P.copy()
    asym[0, 1] += 1e-3
    asym /= asym.sum()
    with pytest.raises(ValueError, match="not symmetric"):
        smallvis(asym, **run)
    diag = P + np.eye(len(P)) * 1e-3
    with pytest.raises(ValueError, match="non-zero diagonal"):
        smallvis(diag / diag.sum(), **run)
    with pytest.raises(ValueError, match="each row summing to 1"):
        smallvis(P, method="asne", metric="affinities", max_iter=5)
    cond = P / P.sum(axis=1, keepdims=True)
    assert np.isfinite(smallvis(cond, method="asne", metric="affinities", max_iter=5, eta=50)).all()
    with pytest.raises(ValueError, match="needs all pairwise input distances"):
        smallvis(P, method="sammon", metric="affinities", max_iter=5)
    with pytest.raises(ValueError, match=r"\(n, n\) input affinities"):
        smallvis(P[:, :50], metric="affinities")
    assert np.isfinite(smallvis(sparse.csr_matrix(P), **run)).all()


# every method and engine on a graph: a picture, or a refusal that names what is missing
GRAPH_REFUSALS = ("needs all pairwise input distances", "needs input coordinates")


def _method_engines():
    from smallvis import list_methods

    return [(info.name, engine) for info in list_methods() for engine in info.engines]


@pytest.mark.slow
@pytest.mark.parametrize("method, engine", _method_engines())
def test_every_method_on_every_engine_takes_a_graph_or_says_why_not(digits, method, engine):
    X = digits[0][:200]
    G = kneighbors_graph(X, 90, mode="distance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            Y = smallvis(G, method=method, engine=engine, metric="precomputed", max_iter=3,
                         defaults="auto", random_state=0)
        except ValueError as err:
            assert any(reason in str(err) for reason in GRAPH_REFUSALS), str(err)
            return
    assert Y.shape == (200, 2) and np.isfinite(Y).all()


@pytest.mark.parametrize("method", ["tee", "tsneu", "pstsne"])
def test_a_graph_gives_the_same_run_on_exact_and_dense(digits, method):
    # the dense engine densifies the graph's sparse matrices; tee's V is made dense for exact
    G = kneighbors_graph(digits[0][:200], 90, mode="distance")
    kw = dict(method=method, metric="precomputed", max_iter=20, defaults="auto", random_state=0)
    np.testing.assert_allclose(smallvis(G, engine="exact", **kw), smallvis(G, engine="dense", **kw),
                               rtol=1e-7, atol=1e-9)
