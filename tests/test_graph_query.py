"""The transform's approximate neighbour search: a walk on the fitted points' neighbour graph from
random-projection-tree leaves (smallvis.io.graph_query), and when a transform uses it."""

import numpy as np
import pytest

from smallvis.api.model import Model
from smallvis.api.transform import walks_graph
from smallvis.io.graph_query import graph_neighbors, recall, search_graph, search_trees
from smallvis.io.neighbors import EXACT_MAX_N, nearest_neighbors, query_neighbors


@pytest.fixture(scope="module")
def clumps():
    """Tight clumps (copies of 150 centres with noise), as resampled data: a 15-NN graph of them
    falls apart into pieces, so the walk must start in the query's own clump."""
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=10.0, size=(150, 12))
    X = centres[rng.integers(0, 150, 3000)] + rng.normal(scale=0.5, size=(3000, 12))
    Q = centres[rng.integers(0, 150, 400)] + rng.normal(scale=0.5, size=(400, 12))
    idx, _ = nearest_neighbors(X, 15, method="exact")
    return X, Q, idx


def test_the_walk_finds_the_exact_neighbours(clumps):
    X, Q, graph = clumps
    idx, dist = graph_neighbors(X, Q, graph, 15)
    want_i, want_d = query_neighbors(Q, X, 15)
    assert recall(idx, want_i) >= 0.99
    same = idx == want_i
    np.testing.assert_allclose(dist[same], want_d[same], rtol=1e-12)
    assert np.all(np.diff(dist, axis=1) >= 0)  # nearest first


def test_the_walk_does_not_depend_on_the_threads(clumps):
    import numba

    X, Q, graph = clumps
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = graph_neighbors(X, Q, graph, 15)
        trees_one = search_trees(X)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = graph_neighbors(X, Q, graph, 15)
        trees_two = search_trees(X)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    for a, b in zip(trees_one, trees_two):
        np.testing.assert_array_equal(a, b)


def test_trees_partition_every_point(clumps):
    X, *_ = clumps
    trees, orders = search_trees(X, n_trees=2, leaf_size=16)
    for t in range(2):
        assert np.array_equal(np.sort(orders[t]), np.arange(len(X)))
        a, b, left, right, start, end = trees[t]
        used = left >= 0
        leaves = np.flatnonzero((left < 0) & (end > start))
        assert (end[leaves] - start[leaves]).max() <= 16
        assert (end[leaves] - start[leaves]).sum() == len(X)
        assert np.all(start[left[used]] == start[used]) and np.all(end[right[used]] == end[used])


def test_bad_input_is_named(clumps):
    X, Q, graph = clumps
    with pytest.raises(ValueError, match="k must be"):
        graph_neighbors(X, Q, graph, len(X) + 1)
    with pytest.raises(ValueError, match="same columns|shape"):
        graph_neighbors(X, Q[:, :3], graph, 5)
    with pytest.raises(ValueError, match="ef"):
        graph_neighbors(X, Q, graph, 15, ef=5)


def _model(n, k, engine="sgd", metric="euclidean"):
    X = np.zeros((n, 2))
    return Model(X=X, Y=X, input_map=None, arguments={"metric": metric}, engine=engine,
                 neighbors=(np.zeros((n, k), dtype=np.int64), np.zeros((n, k))))


def test_a_transform_walks_only_where_the_fit_searched_approximately(monkeypatch):
    import smallvis.io.neighbors as nb

    Xn = np.zeros((5, 2))
    big = EXACT_MAX_N + 1
    assert walks_graph(_model(big, 15), Xn, 15)
    assert not walks_graph(_model(EXACT_MAX_N, 15), Xn, 15)  # the fit searched exactly
    assert not walks_graph(_model(big, 90), Xn, 90)  # many neighbours, little work: exact too
    monkeypatch.setattr(nb, "EXACT_MANY_K_WORK", 0.0)
    assert walks_graph(_model(big, 90), Xn, 90)
    assert not walks_graph(_model(big, 15, engine=("sgd", {"knn": "exact"})), Xn, 15)
    assert walks_graph(_model(1000, 15, engine=("sgd", {"knn": "nndescent"})), Xn, 15)
    assert not walks_graph(_model(big, 15, metric="manhattan"), Xn, 15)


def test_the_forward_graph_is_the_listed_neighbours(clumps):
    """Without the reverse edges the walk's graph is each point's neighbours as listed (t-SNE's
    many neighbours); with them every edge appears both ways, once."""
    X, Q, graph = clumps
    indptr, indices = search_graph(graph, reverse=False)
    np.testing.assert_array_equal(indices.reshape(graph.shape), graph)
    indptr, indices = search_graph(graph)
    rows = np.repeat(np.arange(len(X)), np.diff(indptr))
    pairs = set(zip(rows.tolist(), indices.tolist()))
    assert len(pairs) == len(indices) and all((j, i) in pairs for i, j in pairs)
    idx, _ = graph_neighbors(X, Q, graph, 15, graph=search_graph(graph, reverse=False))
    assert recall(idx, query_neighbors(Q, X, 15)[0]) >= 0.9


def test_a_model_builds_its_search_index_once_and_does_not_pickle_it(clumps, monkeypatch):
    """Repeated transforms of one model reuse the walk's graph and trees; a pickled model drops
    them (rebuilt on first use) and finds the same neighbours."""
    import pickle

    from smallvis.api.transform import new_neighbors
    from smallvis.io import graph_query

    X, Q, graph = clumps
    dist = np.ones(graph.shape)  # (not read by the search)
    model = _model(len(X), 15, engine=("sgd", {"knn": "nndescent"}))
    model.X, model.neighbors = X, (graph, dist)
    calls = []
    real = graph_query.search_trees
    monkeypatch.setattr(graph_query, "search_trees", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = new_neighbors(model, Q)
    second = new_neighbors(model, Q)
    assert len(calls) == 1
    np.testing.assert_array_equal(first[0][0], second[0][0])
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded._search == {} and model._search
    third = new_neighbors(loaded, Q)
    assert len(calls) == 2
    np.testing.assert_array_equal(first[0][0], third[0][0])
    np.testing.assert_array_equal(first[1], third[1])
