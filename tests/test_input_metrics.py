"""Input metrics other than Euclidean (io/metric.py): neighbours, distances, P, runs and errors."""

import numpy as np
import pytest
from scipy import sparse
from scipy.spatial.distance import cdist

from smallvis import SmallVis, smallvis
from smallvis.cli import main
from smallvis.io.data import InputData
from smallvis.io.metric import METRICS, SPARSE_METRICS, parse_metric, resolve_metric
from smallvis.io.neighbors import nearest_neighbors, query_neighbors


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 6)) * 4
    X = np.vstack([c + rng.normal(size=(40, 6)) for c in centres])
    return np.abs(X) + 0.1, np.repeat(np.arange(4), 40)


SCIPY = {"manhattan": "cityblock"}


def _reference_knn(D, k):
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(D, order, axis=1)


@pytest.mark.parametrize("name", [m for m in METRICS if m != "haversine"])
def test_exact_neighbours_match_scipy(blobs, name):
    X = blobs[0]
    kwds = {"p": 3.0} if name == "minkowski" else {}
    Xm = (X > np.median(X)).astype(float) if name in ("hamming", "jaccard") else X
    idx, dist = nearest_neighbors(Xm, 7, method="exact", metric=(name, kwds))
    ref_idx, ref_dist = _reference_knn(cdist(Xm, Xm, SCIPY.get(name, name), **kwds), 7)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12, atol=1e-14)
    if name not in ("hamming", "jaccard"):  # binary data tie heavily; the distances decide
        np.testing.assert_array_equal(idx, ref_idx)


def test_haversine_great_circle():
    # London, Paris, New York, Sydney (degrees) -> radians
    pts = np.radians([[51.5, -0.13], [48.86, 2.35], [40.71, -74.0], [-33.87, 151.2]])
    D = resolve_metric("haversine").pairwise(pts, pts) * 6371.0
    assert abs(D[0, 1] - 343) < 5 and abs(D[0, 2] - 5570) < 20 and abs(D[0, 3] - 16990) < 50
    with pytest.raises(ValueError, match="haversine' needs 2 columns"):
        smallvis(np.random.default_rng(0).random((20, 3)), metric="haversine", perplexity=5)


def test_cosine_P_equals_precomputed_cosine_P(blobs):
    X = blobs[0]
    D = cdist(X, X, "cosine")
    np.fill_diagonal(D, 0.0)
    kw = dict(method="tsne", perplexity=10, max_iter=0, ret_extra=["P"], defaults="auto",
              Y_init="rand", random_state=0)
    P_metric = smallvis(X, metric="cosine", **kw).extras["P"]
    P_matrix = smallvis(D, metric="precomputed", **kw).extras["P"]
    np.testing.assert_allclose(P_metric, P_matrix, rtol=1e-9, atol=1e-15)


def test_precomputed_squared_unless_the_original_quirk(blobs):
    """defaults='auto': a distance matrix gives the P of the coordinates it came from; the
    original's defaults keep its quirk (the Gaussian reads the distances unsquared)."""
    X = blobs[0]
    D = cdist(X, X)
    kw = dict(method="tsne", perplexity=10, max_iter=0, ret_extra=["P"], Y_init="rand",
              random_state=0, scale="none")
    P_coords = smallvis(X, defaults="auto", **kw).extras["P"]
    P_auto = smallvis(D, metric="precomputed", defaults="auto", **kw).extras["P"]
    P_quirk = smallvis(D, metric="precomputed", **kw).extras["P"]
    P_unsquared = smallvis(X, method=("tsne", {"inp_kernel": "exp", "perplexity": 10}),
                           max_iter=0, ret_extra=["P"], Y_init="rand", random_state=0,
                           scale="none").extras["P"]
    np.testing.assert_allclose(P_auto, P_coords, rtol=1e-8, atol=1e-15)
    np.testing.assert_allclose(P_quirk, P_unsquared, rtol=1e-8, atol=1e-15)
    assert np.abs(P_quirk - P_coords).max() > 1e-4


def test_numba_and_python_callables_equal_the_named_metric(blobs):
    from numba import njit

    X = blobs[0]

    @njit
    def l1(x, y):
        total = 0.0
        for i in range(x.shape[0]):
            total += abs(x[i] - y[i])
        return total

    ref = nearest_neighbors(X, 5, method="exact", metric="manhattan")
    for func in (l1, l1.py_func):
        idx, dist = nearest_neighbors(X, 5, method="exact", metric=func)
        np.testing.assert_array_equal(idx, ref[0])
        np.testing.assert_allclose(dist, ref[1], rtol=1e-12)
    kw = dict(method="umap", random_state=0, max_iter=30, scale="none")  # callables: unscaled
    np.testing.assert_array_equal(SmallVis(metric=l1, **kw).fit_transform(X),
                                  SmallVis(metric="manhattan", **kw).fit_transform(X))


def test_metric_changes_the_run_and_is_logged(blobs, caplog):
    import logging

    X = blobs[0]
    with caplog.at_level(logging.INFO, logger="smallvis"):
        Y_cos = smallvis(X, metric="cosine", perplexity=10, max_iter=50, random_state=0)
    assert "metric cosine" in caplog.text
    assert "scale='absmax' not applied" in caplog.text  # cosine reads the data as given
    Y_euc = smallvis(X, perplexity=10, max_iter=50, random_state=0)
    assert not np.allclose(Y_cos, Y_euc)


@pytest.mark.parametrize("method", ["tsne", "umap", "largevis", "mmds", "sammon", "ee"])
def test_every_family_runs_with_a_metric(blobs, method):
    X, y = blobs
    Y = SmallVis(method, metric="correlation", random_state=0, max_iter=100).fit_transform(X)
    assert np.isfinite(Y).all()


def test_bad_metric_options():
    X = np.random.default_rng(0).random((30, 4))
    with pytest.raises(ValueError, match="unknown metric 'cosinus'. Did you mean 'cosine'"):
        smallvis(X, metric="cosinus", perplexity=5)
    with pytest.raises(ValueError, match="unknown metric_kwds 'q' for metric 'minkowski'; valid: p"):
        smallvis(X, metric="minkowski", metric_kwds={"q": 2}, perplexity=5)
    with pytest.raises(ValueError, match="p >= 1"):
        smallvis(X, metric="minkowski", metric_kwds={"p": 0.5}, perplexity=5)
    with pytest.raises(ValueError, match="metric_kwds do not apply to metric='precomputed'"):
        smallvis(cdist(X, X), metric="precomputed", metric_kwds={"p": 2}, perplexity=5)

    def bad(x, y):
        return -1.0

    with pytest.raises(ValueError, match="negative or non-finite distances"):
        smallvis(X, metric=bad, perplexity=5)
    assert parse_metric("L1") == ("data", resolve_metric("manhattan")) or \
        parse_metric("L1")[1].name == "manhattan"


def test_degenerate_rows_under_cosine():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    D = resolve_metric("cosine").pairwise(X, X)
    assert D[0, 1] == 0.0 and D[0, 2] == 1.0 and np.isfinite(D).all()


# --- sparse input ---------------------------------------------------------------------------


TOPICS = {"sport": "goal match team player score league coach win season ball".split(),
          "food": "recipe cook bake flour sugar oven taste dinner salad soup".split(),
          "tech": "computer software code python data network server cloud chip app".split()}
COMMON = "the a of and to in is it for on".split()


@pytest.fixture(scope="module")
def tfidf():
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.default_rng(1)
    docs, labels = [], []
    for t, words in enumerate(TOPICS.values()):
        for _ in range(80):
            w = list(rng.choice(words, 5)) + list(rng.choice(COMMON, 5))
            w += list(rng.choice(sum(TOPICS.values(), []), 2))  # a little cross-topic noise
            docs.append(" ".join(rng.permutation(w)))
            labels.append(t)
    return TfidfVectorizer().fit_transform(docs).tocsr(), np.array(labels)


def _knn_accuracy(Y, y):
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    return cross_val_score(KNeighborsClassifier(10), Y, y, cv=5).mean()


@pytest.mark.parametrize("name", SPARSE_METRICS)
def test_sparse_neighbours_equal_dense(tfidf, name):
    X = tfidf[0]
    idx_s, dist_s = nearest_neighbors(X, 10, method="exact", metric=name)
    idx_d, dist_d = nearest_neighbors(X.toarray(), 10, method="exact", metric=name)
    np.testing.assert_allclose(dist_s, dist_d, rtol=1e-9, atol=1e-12)
    assert (idx_s == idx_d).mean() > 0.99  # the odd exact tie may be ordered by rounding


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_sparse_tfidf_cosine_separates_topics(tfidf, method):
    X, y = tfidf
    Y = SmallVis(method, metric="cosine", random_state=0).fit_transform(X)
    assert _knn_accuracy(Y, y) > 0.9


def test_sparse_euclidean_P_equals_dense(tfidf):
    X = tfidf[0]
    kw = dict(method="tsne", perplexity=15, max_iter=0, ret_extra=["P"], Y_init="rand",
              random_state=0)
    np.testing.assert_allclose(smallvis(X, **kw).extras["P"],
                               smallvis(X.toarray(), **kw).extras["P"], rtol=1e-7, atol=1e-14)


def test_sparse_scaling_and_pca(tfidf):
    X = tfidf[0]
    data = InputData(X)
    from smallvis.io.prepare import prepare_input

    # scale="scale" divides each column by its sd without centring: the same distances as dense
    sp_data = prepare_input(X, precomputed=False, scale="scale", pca=False, initial_dims=50,
                            k=2, rng=None)[0]
    de_data = prepare_input(X.toarray(), precomputed=False, scale="scale", pca=False,
                            initial_dims=50, k=2, rng=None)[0]
    assert sp_data.sparse and not de_data.sparse
    np.testing.assert_allclose(sp_data.distances(), de_data.distances(), rtol=1e-9, atol=1e-9)
    # PCA of sparse input: the dense PCA's scores up to each column's sign
    sp_pca = prepare_input(X, precomputed=False, scale="none", pca=True, initial_dims=5, k=2,
                           rng=np.random.default_rng(0))[0].X
    de_pca = prepare_input(X.toarray(), precomputed=False, scale="none", pca=True,
                           initial_dims=5, k=2, rng=np.random.default_rng(0))[0].X
    np.testing.assert_allclose(np.abs(sp_pca), np.abs(de_pca), rtol=1e-6, atol=1e-8)
    assert data.sparse


def test_sparse_bad_input():
    X = sparse.random(30, 10, density=0.3, format="csr", random_state=0)
    X.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite value"):
        smallvis(X, perplexity=5)
    with pytest.raises(ValueError, match="needs dense rows and the sparse input"):
        from smallvis.io.metric import check_sparse_metric

        check_sparse_metric(resolve_metric("canberra"), sparse.random(10, 10, format="csr"),
                            limit_bytes=10)


def test_sparse_transform_and_model(tfidf):
    X, y = tfidf
    est = SmallVis("umap", metric="cosine", random_state=0).fit(X[::2])
    Yn = est.transform(X[1::2])
    from sklearn.neighbors import KNeighborsClassifier

    clf = KNeighborsClassifier(10).fit(est.embedding_, y[::2])
    assert clf.score(Yn, y[1::2]) > 0.85
    np.testing.assert_array_equal(est.transform(X[::2]), est.embedding_)


def test_metric_transform_held_out_digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    est = SmallVis("tsne", metric="cosine", random_state=0, max_iter=300).fit(X[:900])
    Yn = est.transform(X[900:1200])
    from sklearn.neighbors import KNeighborsClassifier

    clf = KNeighborsClassifier(10).fit(est.embedding_, y[:900])
    assert clf.score(Yn, y[900:1200]) > 0.9


def test_query_neighbors_metric(blobs):
    X = blobs[0]
    idx, dist = query_neighbors(X[:10], X, 3, resolve_metric("chebyshev"))
    ref = np.argsort(cdist(X[:10], X, "chebyshev"), axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(idx, ref)
    assert (idx[:, 0] == np.arange(10)).all() and (dist[:, 0] == 0).all()


def test_cli_metric(tmp_path, blobs):
    import pandas as pd

    X = blobs[0]
    path = tmp_path / "x.csv"
    pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).to_csv(path, index=False)
    out = tmp_path / "y.csv"
    assert main(["embed", str(path), "--metric", "minkowski", "--metric-param", "p=3",
                 "--max-iter", "50", "--seed", "0", "--out", str(out), "-q"]) == 0
    Y = pd.read_csv(out).to_numpy()[:, :2]
    ref = SmallVis(metric="minkowski", metric_kwds={"p": 3}, max_iter=50,
                   random_state=0).fit_transform(X)
    np.testing.assert_allclose(Y, ref, rtol=1e-6, atol=1e-6)
    assert main(["embed", str(path), "--metric", "cosinus", "-q"]) != 0


@pytest.mark.slow
def test_pynndescent_with_a_metric(tfidf):
    """Above the exact limit the approximate search runs under the same metric (pynndescent), on
    sparse rows too; every distance it returns is recomputed exactly."""
    X = tfidf[0]
    exact_idx, exact_dist = nearest_neighbors(X, 10, method="exact", metric="cosine")
    idx, dist = nearest_neighbors(X, 10, method="nndescent", metric="cosine", random_state=0)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(idx, exact_idx)])
    assert recall > 0.95
    np.testing.assert_allclose(dist, resolve_metric("cosine").to_candidates(
        X, np.arange(X.shape[0]), idx), rtol=1e-9, atol=1e-12)


def test_quality_metrics_under_the_input_metric(tfidf):
    from smallvis.metrics import compute_metrics, knn_preservation

    X, y = tfidf
    Y = SmallVis("umap", metric="cosine", random_state=0).fit_transform(X)
    out = compute_metrics(X, Y, metric="cosine")
    assert set(out) == {"k", "knn_preservation", "trustworthiness", "continuity", "rnx_auc"}
    assert all(0 < out[name] <= 1 for name in out if name != "k")
    D = resolve_metric("cosine").pairwise(X, X)
    np.fill_diagonal(D, 0.0)
    assert knn_preservation(D, Y, 15, metric="precomputed") == pytest.approx(
        out["knn_preservation"], abs=0.02)  # tied cosine distances may swap a neighbour
    # the rank metrics read the same cosine distances, from the rows or from the matrix
    from_matrix = compute_metrics(D, Y, metric="precomputed")
    for name in ("trustworthiness", "continuity", "rnx_auc"):
        assert from_matrix[name] == pytest.approx(out[name], abs=1e-12)
    G = sparse.csr_matrix(np.where(D <= np.sort(D, axis=1)[:, [15]], D, 0.0))
    assert knn_preservation(G, Y, 10, metric="precomputed") > 0
    assert set(compute_metrics(G, Y, 10, metric="precomputed")) == {"k", "knn_preservation"}


@pytest.mark.parametrize("metric", ["cosine", "manhattan", ("minkowski", {"p": 3})])
def test_rank_metrics_under_a_metric_match_scikit_learn(metric):
    """Trustworthiness under the input's metric equals scikit-learn's (distinct distances); the
    triplets read the same distances from rows or from the matrix."""
    from sklearn.manifold import trustworthiness as sk_trustworthiness

    from smallvis.metrics import random_triplet_accuracy, trustworthiness

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 8))
    Y = X[:, :2] + 0.3 * rng.normal(size=(120, 2))
    m = resolve_metric(metric)
    D = m.pairwise(X, X)
    ours = trustworthiness(X, Y, 7, metric=metric)
    assert ours == pytest.approx(sk_trustworthiness(D, Y, n_neighbors=7, metric="precomputed"),
                                 abs=1e-12)
    assert ours != pytest.approx(trustworthiness(X, Y, 7), abs=1e-6)  # the metric mattered
    assert random_triplet_accuracy(X, Y, 5000, metric=metric) == \
        random_triplet_accuracy(D, Y, 5000, metric="precomputed")


def test_rank_metrics_refuse_a_knn_graph():
    from smallvis.metrics import random_triplet_accuracy, trustworthiness

    X = np.random.default_rng(0).normal(size=(50, 3))
    G = sparse.csr_matrix(np.where(X[:, :1] > 0, 1.0, 0.0) @ np.ones((1, 50)))
    with pytest.raises(ValueError, match="kNN graph"):
        trustworthiness(G, X[:, :2], 5, metric="precomputed")
    with pytest.raises(ValueError, match="kNN graph"):
        random_triplet_accuracy(G, X[:, :2], metric="precomputed")
    with pytest.raises(ValueError, match="square distance matrix"):
        trustworthiness(X, X[:, :2], 5, metric="precomputed")


@pytest.mark.parametrize("name", METRICS)
def test_paired_distances_equal_pairwise(name):
    """Metric.paired (triplets) gives the entries of Metric.pairwise, degenerate rows included."""
    rng = np.random.default_rng(0)
    if name == "haversine":
        X = rng.uniform(-1.5, 1.5, size=(30, 2))
    elif name in ("hamming", "jaccard"):
        X = (rng.random((30, 6)) > 0.5).astype(float)
        X[2] = 0.0
    else:
        X = rng.normal(size=(30, 6))
        X[3], X[7], X[10] = 0.0, 5.0, X[11]  # zero, constant and duplicate rows
    a, b = rng.integers(30, size=400), rng.integers(30, size=400)
    m = resolve_metric(name)
    np.testing.assert_allclose(m.paired(X, a, b), m.pairwise(X, X)[a, b], rtol=1e-12, atol=1e-12)
    if name in SPARSE_METRICS:
        S = sparse.csr_matrix(X)
        np.testing.assert_allclose(m.paired(S, a, b), m.pairwise(S, S)[a, b], rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("name", METRICS)
def test_sampling_kernel_distances_equal_pairwise(name):
    """The sgd engine's on-the-fly input distances (io/metric_kernels.py) are Metric.pairwise's,
    degenerate rows included: every row's exact mean distance agrees."""
    from smallvis.engines.sgd_pair_kernels import distance_row_means
    from smallvis.io.metric import kernel_rows

    rng = np.random.default_rng(1)
    if name == "haversine":
        X = rng.uniform(-1.5, 1.5, size=(40, 2))
    elif name in ("hamming", "jaccard"):
        X = (rng.random((40, 6)) > 0.5).astype(float)
    else:
        X = rng.normal(size=(40, 6))
        X[3], X[7] = 0.0, 5.0  # a zero and a constant row (degenerate for cosine, correlation)
    m = resolve_metric(name)
    D = m.pairwise(X, X)
    np.fill_diagonal(D, 0.0)
    rows, code, p = kernel_rows(m, X)
    means = distance_row_means(rows, np.int64(code), p, 0, np.uint64(0))
    np.testing.assert_allclose(means, D.sum(axis=1) / 39, rtol=1e-12, atol=1e-14)


def test_sgd_stress_under_a_metric():
    """mmds on the sgd engine fits the cosine distances it is given (before: refused), close to
    the exact engine's fit of the same distances."""
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(300, 12))) + np.repeat(3 * np.eye(12), 25, axis=0)
    R = resolve_metric("cosine").pairwise(X, X)
    np.fill_diagonal(R, 0.0)

    def stress(Y):
        return float(np.sum((R - cdist(Y, Y)) ** 2))

    sgd = SmallVis("mmds", engine="sgd", metric="cosine", random_state=0).fit_transform(X)
    exact = SmallVis("mmds", engine="exact", metric="cosine", random_state=0).fit_transform(X)
    euclid = SmallVis("mmds", engine="sgd", random_state=0).fit_transform(X)
    assert stress(sgd) < 1.1 * stress(exact)
    assert stress(sgd) < 0.5 * stress(euclid)  # it fitted the cosine distances, not Euclidean


def test_sgd_stress_refuses_what_its_kernels_cannot_read():
    X = sparse.random(60, 8, density=0.5, format="csr", random_state=0)
    with pytest.raises(ValueError, match="sparse rows"):
        smallvis(X, method="mmds", engine="sgd", metric="manhattan", max_iter=5)
    with pytest.raises(ValueError, match="callable metric"):
        smallvis(X.toarray(), method="mmds", engine="sgd", metric=lambda a, b: 1.0, max_iter=5)


def test_braycurtis_between_zero_rows_is_zero():
    """Two all-zero rows (0 / 0 for scipy: NaN) are at distance 0 under braycurtis in every path:
    the distance matrix, the paired distances and the sampling kernels; a zero row is at 1 from
    the others. (Before: NaN rows, and their perplexity calibrations failed.)"""
    from smallvis.engines.sgd_pair_kernels import distance_row_means
    from smallvis.io.metric import kernel_rows

    X = np.abs(np.random.default_rng(2).normal(size=(12, 4)))
    X[[0, 5]] = 0.0
    m = resolve_metric("braycurtis")
    D = m.pairwise(X, X)
    assert np.isfinite(D).all() and D[0, 5] == 0.0 and D[0, 0] == 0.0 and D[0, 1] == 1.0
    np.testing.assert_array_equal(m.paired(X, [0, 0, 1], [5, 0, 0]), [0.0, 0.0, 1.0])
    rows, code, p = kernel_rows(m, X)
    means = distance_row_means(rows, np.int64(code), p, 0, np.uint64(0))
    np.testing.assert_allclose(means, D.sum(axis=1) / 11, rtol=1e-12)
