"""The library's own approximate neighbour search (smallvis.io.nndescent): recall against the exact
search under every metric it serves, the same bits for a seed with 1 or 2 threads, the point itself
never listed, duplicates, degenerate cosine rows, bad input, and the "auto" choice."""

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from smallvis.io import neighbors as nb
from smallvis.io.data import InputData
from smallvis.io.metric import resolve_metric
from smallvis.io.nndescent import METRICS, approximate_neighbors

METRIC_CASES = ["euclidean", "sqeuclidean", "manhattan", "chebyshev", ("minkowski", {"p": 3}),
                "cosine", "correlation"]


@pytest.fixture(scope="module")
def clustered():
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=5, size=(12, 12))
    return centres[rng.integers(0, 12, 1500)] + rng.normal(size=(1500, 12))


def _recall(idx, exact):
    return np.mean([np.intersect1d(a, b).size for a, b in zip(idx, exact)]) / exact.shape[1]


@pytest.mark.parametrize("metric", METRIC_CASES, ids=str)
def test_recall_and_distances_under_each_metric(clustered, metric):
    X = clustered
    idx, dist = approximate_neighbors(X, 10, metric=metric, random_state=1)
    exact, exact_d = nb.nearest_neighbors(X, 10, method="exact", metric=metric)
    assert idx.shape == (1500, 10) and idx.dtype == np.int64 and dist.dtype == np.float64
    assert _recall(idx, exact) >= 0.95
    assert not np.any(idx == np.arange(1500)[:, None])
    assert np.all(np.diff(dist, axis=1) >= 0)
    # every distance is the metric's (float64), nearest first
    m = resolve_metric(metric)
    np.testing.assert_allclose(dist, m.to_candidates(X, np.arange(1500), idx), rtol=1e-12,
                               atol=1e-12)
    assert np.all(np.sort(idx, axis=1)[:, 1:] != np.sort(idx, axis=1)[:, :-1])


def test_euclidean_distances_are_the_exact_search_bits(clustered):
    idx, dist = approximate_neighbors(clustered, 8, random_state=2)
    exact, exact_d = nb.nearest_neighbors(clustered, 8, method="exact")
    same = np.all(idx == exact, axis=1)
    assert same.mean() > 0.9
    np.testing.assert_array_equal(dist[same], exact_d[same])


def test_same_seed_same_bits_with_one_or_two_threads(clustered):
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba was started with one thread")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = approximate_neighbors(clustered, 12, random_state=5, max_candidates=12)
        numba.set_num_threads(2)
        two = approximate_neighbors(clustered, 12, random_state=5, max_candidates=12)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    again = approximate_neighbors(clustered, 12, random_state=5, max_candidates=12)
    np.testing.assert_array_equal(one[0], again[0])
    # a Generator gives a seed (the same Generator state, the same answer)
    g1 = approximate_neighbors(clustered, 12, random_state=np.random.default_rng(3))
    g2 = approximate_neighbors(clustered, 12, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(g1[0], g2[0])


def test_duplicates_and_ties():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 6))
    Xd = np.vstack([X, X[:40], X[:40]])  # the first 40 points have two exact copies each
    idx, dist = approximate_neighbors(Xd, 5, random_state=1)
    assert not np.any(idx == np.arange(len(Xd))[:, None])
    assert np.all(dist[:40, :2] == 0.0)
    np.testing.assert_array_equal(idx[:40, :2], np.c_[np.arange(400, 440), np.arange(440, 480)])
    # all points equal (no hyperplane separates them): k other points at distance 0, in index
    # order (which of the tied points are found is up to the search)
    idx, dist = approximate_neighbors(np.ones((300, 3)), 4, random_state=0)
    assert not np.any(idx == np.arange(300)[:, None])
    assert np.all(np.diff(idx, axis=1) > 0) and np.all(dist == 0.0)


@pytest.mark.parametrize("metric", ["cosine", "correlation"])
def test_degenerate_rows(clustered, metric):
    """All-zero (cosine) or constant (correlation) rows: distance 1 to every other point, 0 to
    each other, as smallvis.io.metric defines them; the answer equals the exact search's."""
    X = clustered[:600].copy()
    X[[3, 50, 51, 400]] = 0.0 if metric == "cosine" else 2.5
    idx, dist = approximate_neighbors(X, 6, metric=metric, random_state=0)
    exact, exact_d = nb.nearest_neighbors(X, 6, method="exact", metric=metric)
    for r in (3, 50, 51, 400):
        np.testing.assert_array_equal(idx[r], exact[r])
        np.testing.assert_allclose(dist[r], exact_d[r])
    assert _recall(idx, exact) >= 0.95
    # nearly all degenerate: searched exactly
    Z = np.zeros((50, 4))
    Z[:3] = clustered[:3, :4]
    idx, dist = approximate_neighbors(Z, 5, metric=metric, random_state=0)
    exact, exact_d = nb.nearest_neighbors(Z, 5, method="exact", metric=metric)
    np.testing.assert_array_equal(idx, exact)
    np.testing.assert_allclose(dist, exact_d, atol=1e-15)


def test_bad_input_is_named(clustered):
    X = clustered[:100]
    with pytest.raises(ValueError, match="n - 1 = 99"):
        approximate_neighbors(X, 100)
    with pytest.raises(ValueError, match="n - 1"):
        approximate_neighbors(X, 0)
    bad = X.copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        approximate_neighbors(bad, 5)
    with pytest.raises(ValueError, match="hamming.*euclidean"):
        approximate_neighbors(X, 5, metric="hamming")
    with pytest.raises(ValueError, match="dense rows"):
        approximate_neighbors(sp.csr_matrix(X), 5)
    with pytest.raises(ValueError, match="n_trees"):
        approximate_neighbors(X, 5, n_trees=0)
    with pytest.raises(ValueError, match="delta"):
        approximate_neighbors(X, 5, delta=2.0)
    with pytest.raises(ValueError, match="2-d"):
        approximate_neighbors(X[0], 5)
    with pytest.raises(ValueError, match="kNN method"):
        nb.nearest_neighbors(X, 5, method="annoy")


def test_auto_uses_it_above_the_exact_limit(clustered, monkeypatch, caplog):
    X = clustered[:800]
    with caplog.at_level(logging.INFO, logger="smallvis"):
        idx, dist = nb.nearest_neighbors(X, 7, random_state=3, exact_max_n=500)
    assert "kNN: nndescent (the library's approximate search) for 800 points" in caplog.text
    ours = approximate_neighbors(X, 7, random_state=3)
    np.testing.assert_array_equal(idx, ours[0])
    np.testing.assert_array_equal(dist, ours[1])
    # the module's limit is read at call time, also by InputData
    monkeypatch.setattr(nb, "EXACT_MAX_N", 500)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        again = InputData(X).neighbors(7, random_state=3)
    assert "kNN: nndescent" in caplog.text
    np.testing.assert_array_equal(again[0], idx)
    # many neighbours (t-SNE's 3 x perplexity): exact while n^2 D is small (faster there, and a
    # fraction of pynndescent's memory), then pynndescent; by InputData too
    many = nb.AUTO_OWN_MAX_K + 1
    assert nb.auto_knn_method(70_000, 90, 64) == "exact"
    assert nb.auto_knn_method(70_000, 90, 784) == "pynndescent"
    assert nb.auto_knn_method(70_000, 90, 64, euclidean_rows=False) == "pynndescent"
    assert nb.auto_knn_method(70_000, 15, 64) == "nndescent"
    for work, search in ((nb.EXACT_MANY_K_WORK, "exact brute force"), (0.0, "pynndescent")):
        monkeypatch.setattr(nb, "EXACT_MANY_K_WORK", work)
        for run in (lambda: nb.nearest_neighbors(X, many, random_state=3, exact_max_n=500),
                    lambda: InputData(X).neighbors(many, random_state=3)):
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="smallvis"):
                run()
            assert f"kNN: {search}" in caplog.text
    # at or below the limit: exact, as before
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        nb.nearest_neighbors(X[:400], 7)
    assert "exact brute force" in caplog.text


def test_what_it_serves():
    metric = resolve_metric
    X = np.zeros((5, 2))
    assert all(nb.own_search_applies(X, metric(m)) for m in METRIC_CASES)
    assert set(METRICS) == {"euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski",
                            "cosine", "correlation"}
    assert not nb.own_search_applies(X, metric("hamming"))
    assert not nb.own_search_applies(sp.csr_matrix(X), metric("cosine"))


def test_candidates_are_the_nearest_entries():
    """Each iteration explores from a point's nearest new (and old) neighbours and reverse
    neighbours, ties to the lower index; the new ones taken are flagged old."""
    from smallvis.io import nndescent_kernels as kern

    rng = np.random.default_rng(0)
    n, k, c = 40, 6, 4
    hi = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(n)])
    D = rng.integers(1, 5, size=(n, n)).astype(float)  # many ties
    D = np.minimum(D, D.T)
    hd = np.take_along_axis(D, hi, axis=1)
    hf = rng.integers(0, 2, size=(n, k)).astype(np.uint8)
    flags = hf.copy()
    ptr, rev, rdist, rflag = kern._reverse(hd, hi, hf)
    new_c, old_c = kern._candidates(hd, hi, hf, ptr, rev, rdist, rflag, c)
    for j in range(n):
        entries = {}  # index -> (distance, new) over the row and the reverse entries
        for t in range(k):
            entries.setdefault(hi[j, t], []).append((hd[j, t], flags[j, t]))
        for i, t in zip(*np.nonzero(hi == j)):
            entries.setdefault(i, []).append((hd[i, t], flags[i, t]))
        for got, want_new in ((new_c[j], 1), (old_c[j], 0)):
            pool = sorted({(d, i) for i, es in entries.items() for d, f in es if f == want_new})
            want = [i for _, i in pool[:c]]
            assert sorted(got[got >= 0].tolist()) == sorted(set(want))
        taken = np.isin(hi[j], new_c[j]) & (flags[j] == 1)
        assert np.all(hf[j][taken] == 0) and np.all(hf[j][~taken] == flags[j][~taken])


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan"])
def test_many_neighbours_settings(clustered, metric):
    """More than 30 neighbours (t-SNE's 3 x perplexity) use fewer trees, more candidates and a
    looser stop; the recall stays high and the answer is the same with 1 or 2 threads."""
    from smallvis.io.nndescent import default_settings

    assert default_settings(70_000, 15)["max_candidates"] == 30
    many = default_settings(70_000, 90)
    assert many["n_trees"] < default_settings(70_000, 15)["n_trees"]
    assert many["delta"] > default_settings(70_000, 15)["delta"]
    idx, dist = approximate_neighbors(clustered, 45, metric=metric, random_state=2)
    exact, _ = nb.nearest_neighbors(clustered, 45, method="exact", metric=metric)
    assert _recall(idx, exact) >= 0.95
    assert np.all(np.diff(dist, axis=1) >= 0)
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        return
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = approximate_neighbors(clustered, 45, metric=metric, random_state=2)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one[0], idx)
    np.testing.assert_array_equal(one[1], dist)


def test_join_keeps_the_nearest_of_each_batch():
    """One local join: each point's heap becomes the k nearest (distance, index) pairs of its heap
    and its batch (its new candidates, their new and old candidates, its old candidates' new
    candidates; itself excluded), each batch member's distance computed once."""
    from smallvis.io import nndescent_kernels as kern

    rng = np.random.default_rng(1)
    n, k, c = 60, 5, 4
    X = np.zeros((n, 8), dtype=np.float32)
    X[:, :3] = rng.integers(0, 4, size=(n, 3))  # many ties
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1).astype(float)
    hi = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(n)])
    hd = np.take_along_axis(D, hi, axis=1)
    order = np.lexsort((-hi, -hd), axis=-1)  # decreasing (distance, index): a valid max-heap
    hi = np.take_along_axis(hi, order, axis=1)
    hd = np.take_along_axis(hd, order, axis=1)
    new_c = np.where(rng.random((n, c)) < 0.8, rng.integers(0, n, (n, c)), -1)
    old_c = np.where(rng.random((n, c)) < 0.5, rng.integers(0, n, (n, c)), -1)
    hf = rng.integers(0, 2, size=(n, k)).astype(np.uint8)
    work = (hd.copy(), hi.copy(), hf.copy())
    _, evaluated = kern._join(X, *work, new_c, old_c, kern.SQEUCLIDEAN, 2.0)
    want_evals = 0
    for i in range(n):
        batch = set(new_c[i][new_c[i] >= 0])
        for v in new_c[i][new_c[i] >= 0]:
            batch |= set(new_c[v][new_c[v] >= 0]) | set(old_c[v][old_c[v] >= 0])
        for v in old_c[i][old_c[i] >= 0]:
            batch |= set(new_c[v][new_c[v] >= 0])
        batch -= {i} | set(hi[i])
        want_evals += len(batch)
        pool = sorted({(D[i, j], j) for j in batch | set(hi[i])})[:k]
        got = sorted(zip(work[0][i], work[1][i]))
        assert got == pool
        was = dict(zip(hi[i], hf[i]))  # entries kept keep their flags, new ones are new
        assert [int(f) for f in work[2][i]] == [int(was.get(j, 1)) for j in work[1][i]]
    assert evaluated == want_evals
