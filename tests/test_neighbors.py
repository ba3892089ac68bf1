"""Nearest neighbours without a dense distance matrix: exact blocked search and pynndescent."""

import logging
import sys

import numpy as np
import pytest

from smallvis.io import neighbors as nb
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances
from smallvis.io.neighbors import nearest_neighbors


def _grid(duplicates: int = 0):
    """Integer grid points in shuffled order (many exact ties), optionally with duplicated rows."""
    g = np.array([(i, j) for i in range(11) for j in range(9)], dtype=float)
    g = g[np.random.default_rng(1).permutation(len(g))]
    return np.vstack([g, g[:duplicates]]) if duplicates else g


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows, so that the blocked search crosses many block boundaries."""
    monkeypatch.setattr(nb, "_BLOCK_BYTES", 8 * 7 * 200)


@pytest.mark.parametrize("dups", [0, 12])
@pytest.mark.parametrize("k", [1, 4, 8, 31])
def test_exact_equals_dense_knn_with_ties(k, dups, small_blocks):
    X = _grid(dups)
    idx, dist = nearest_neighbors(X, k, method="exact")
    assert idx.dtype == np.int64 and dist.dtype == np.float64 and idx.shape == (len(X), k)
    np.testing.assert_array_equal(idx, InputData(X).knn(k))
    R = np.sqrt(squared_distances(X))
    np.testing.assert_array_equal(dist, np.take_along_axis(R, idx, axis=1))  # integer data: exact
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert not np.any(idx == np.arange(len(X))[:, None])


@pytest.mark.parametrize("k", [1, 3, 45])
def test_exact_many_ties(k, small_blocks):
    # 40 copies of one point (its rows have more tied candidates than the vectorised pass takes)
    X = np.vstack([_grid(), np.repeat(_grid()[:1], 40, axis=0)])
    idx, dist = nearest_neighbors(X, k)
    np.testing.assert_array_equal(idx, InputData(X).knn(k))
    # equidistant points given as a distance matrix: every row is one big tie
    E = np.sqrt(squared_distances(np.eye(60)))
    idx, dist = nearest_neighbors(E, k, precomputed=True)
    np.testing.assert_array_equal(idx, InputData(E, precomputed=True).knn(k))
    np.testing.assert_array_equal(dist, np.sqrt(2.0))


def test_exact_all_neighbours():
    X = _grid(5)
    n = len(X)
    idx, dist = nearest_neighbors(X, n - 1)
    np.testing.assert_array_equal(idx, InputData(X).knn(n - 1))
    np.testing.assert_array_equal(np.sort(idx, axis=1),
                                  np.array([np.delete(np.arange(n), i) for i in range(n)]))


def test_exact_random_data_accurate_distances(small_blocks):
    # a large offset: the expanded formula loses digits, the returned distances must not
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6)) + 1e4
    idx, dist = nearest_neighbors(X, 15)
    np.testing.assert_array_equal(idx, InputData(X).knn(15))
    direct = np.sqrt(((X[idx] - X[:, None, :]) ** 2).sum(axis=2))
    np.testing.assert_allclose(dist, direct, rtol=1e-14, atol=0)


def test_precomputed(small_blocks):
    X = _grid(3)
    R = np.sqrt(squared_distances(X))
    idx, dist = nearest_neighbors(R, 6, precomputed=True)
    np.testing.assert_array_equal(idx, InputData(R, precomputed=True).knn(6))
    np.testing.assert_array_equal(dist, np.take_along_axis(R, idx, axis=1))
    with pytest.raises(ValueError, match="square"):
        nearest_neighbors(X, 3, precomputed=True)


@pytest.mark.parametrize("k", [0, -1, 10, 11, 2.5, True, "3", None])
def test_bad_k(k):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"k .*n = 10") as err:
        nearest_neighbors(X, k)
    assert "9" in str(err.value)


def test_bad_method():
    with pytest.raises(ValueError, match="kNN method"):
        nearest_neighbors(np.eye(5), 2, method="annoy")


def test_method_logged(caplog):
    X = _grid()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        nearest_neighbors(X, 5, method="ex")
    assert f"kNN: exact brute force for {len(X)} points, k = 5" in caplog.text


def test_fallback_without_pynndescent(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "pynndescent", None)  # import fails
    X = _grid()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        idx, _ = nearest_neighbors(X, 5, method="pynndescent")
    assert "pynndescent is not installed" in caplog.text
    np.testing.assert_array_equal(idx, InputData(X).knn(5))


def test_inputdata_neighbors_cache(monkeypatch):
    X = np.random.default_rng(2).normal(size=(200, 4))
    data = InputData(X)
    idx, dist = data.neighbors(12)
    assert ("neighbors", 12, "exact") in data._cache
    assert "D2" not in data._cache and "R" not in data._cache
    np.testing.assert_array_equal(idx, InputData(X).knn(12))

    def boom(*args, **kwargs):
        raise AssertionError("searched again")

    monkeypatch.setattr(nb, "_exact_coordinates", boom)
    i5, d5 = data.neighbors(5)  # read off the cached k = 12
    np.testing.assert_array_equal(i5, idx[:, :5])
    np.testing.assert_array_equal(d5, dist[:, :5])


@pytest.mark.parametrize("cached", ["D2", "R"])
def test_inputdata_neighbors_from_dense(cached, monkeypatch):
    X = _grid(4)
    data = InputData(X)
    data.squared_distances() if cached == "D2" else data.distances()
    if cached == "R":
        del data._cache["D2"]
    monkeypatch.setattr(nb, "nearest_neighbors", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    idx, dist = data.neighbors(7, method="nndescent")  # dense distances at hand: exact
    np.testing.assert_array_equal(idx, data.knn(7))
    ref_idx, ref_dist = nb._exact_coordinates(X, 7)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(dist, ref_dist)


def test_seed_conversion():
    assert nb._seed(None) is None
    assert nb._seed(np.int64(5)) == 5
    a = nb._seed(np.random.default_rng(3))
    assert a == nb._seed(np.random.default_rng(3)) and isinstance(a, int)
    with pytest.raises(TypeError):
        nb._seed("x")


@pytest.mark.slow
def test_pynndescent_recall_and_reproducible():
    """pynndescent compiles for ~20 s on first use in a process: one test does all the checks."""
    pytest.importorskip("pynndescent")
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=6, size=(10, 8))
    X = centres[rng.integers(0, 10, 3000)] + rng.normal(size=(3000, 8))
    exact, exact_d = nearest_neighbors(X, 15, method="exact")
    idx, dist = nearest_neighbors(X, 15, method="pynndescent", random_state=42)
    assert idx.shape == (3000, 15) and idx.dtype == np.int64 and dist.dtype == np.float64
    assert not np.any(idx == np.arange(3000)[:, None])
    assert np.all(np.diff(dist, axis=1) >= 0)
    direct = np.sqrt(((X[idx] - X[:, None, :]) ** 2).sum(axis=2))
    np.testing.assert_allclose(dist, direct, rtol=1e-14)
    recall = np.mean([np.intersect1d(a, b).size for a, b in zip(idx, exact)]) / 15
    assert recall >= 0.95
    # pynndescent is deterministic for a fixed seed; a Generator is turned into a seed
    again = nearest_neighbors(X, 15, method="pynndescent", random_state=42)
    np.testing.assert_array_equal(idx, again[0])
    np.testing.assert_array_equal(dist, again[1])
    g1 = nearest_neighbors(X, 15, method="pynn", random_state=np.random.default_rng(7))
    g2 = nearest_neighbors(X, 15, method="pynn", random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(g1[0], g2[0])
    # duplicated points: the point itself is dropped wherever pynndescent lists it
    Xd = np.vstack([X[:500], X[:40], X[:40]])
    idx, dist = nearest_neighbors(Xd, 5, method="pynndescent", random_state=1)
    assert not np.any(idx == np.arange(len(Xd))[:, None])
    assert np.all(dist[:40, :2] == 0.0)  # each of the first 40 has two exact copies
    assert np.all(np.sort(idx, axis=1)[:, 1:] != np.sort(idx, axis=1)[:, :-1])
