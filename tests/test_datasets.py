"""Built-in datasets: iris as in R, the s1k fuzzy simplex, the registry."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from smallvis._util.names import InvalidNameError
from smallvis.datasets import (DATASETS, Dataset, DatasetSpec, list_datasets, load_dataset,
                               register_dataset)
from smallvis.datasets.synthetic import fuzzy_simplex, simplex_vertices


def test_registry_lists_the_builtins():
    specs = {s.name: s for s in list_datasets()}
    assert {"iris", "s1k", "digits"} <= set(specs)
    assert (specs["iris"].n, specs["iris"].dims, specs["iris"].label_kind) == (150, 4, "class")
    assert (specs["s1k"].n, specs["s1k"].dims) == (1000, 9)
    for spec in specs.values():
        assert spec.description and spec.label_kind in ("class", "continuous", "none")


def test_iris_is_r_iris():
    ds = load_dataset("iris")
    assert isinstance(ds, Dataset)
    assert ds.X.shape == (150, 4) and ds.X.dtype == np.float64
    np.testing.assert_array_equal(ds.X[0], [5.1, 3.5, 1.4, 0.2])
    # rows 35 and 38 (1-based) differ between R and the erroneous UCI copy
    np.testing.assert_array_equal(ds.X[34], [4.9, 3.1, 1.5, 0.2])
    np.testing.assert_array_equal(ds.X[37], [4.9, 3.6, 1.4, 0.1])
    assert list(ds.labels[[0, 50, 100]]) == ["setosa", "versicolor", "virginica"]
    assert ds.label_name == "Species"
    assert ds.columns == ("Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width")


def test_iris_matches_scikit_learn_copy():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    np.testing.assert_array_equal(load_dataset("iris").X, sklearn_datasets.load_iris().data)


def test_iris10_is_first_ten_rows():
    np.testing.assert_array_equal(load_dataset("iris10").X, load_dataset("iris").X[:10])


@pytest.mark.parametrize("name", ["IRIS", "Iris", "s1", "S1K", "dig"])
def test_names_match_case_insensitively_and_by_prefix(name):
    assert load_dataset(name).name.lower().startswith(name.lower())


def test_unknown_dataset_suggests_closest():
    with pytest.raises(InvalidNameError, match=r"unknown dataset 'irsi'.*Did you mean 'iris'"):
        load_dataset("irsi")


def test_s1k_shape_labels_and_vertices():
    ds = load_dataset("s1k")
    assert ds.X.shape == (1000, 9)
    assert ds.label_name == "Label"
    np.testing.assert_array_equal(np.bincount(ds.labels), [100] * 10)
    vertices = ds.X[::100]  # each group starts with its vertex
    np.testing.assert_array_equal(ds.labels[::100], np.arange(10))
    np.testing.assert_allclose(pdist(vertices), 2.0, rtol=1e-12)
    # the samples around a vertex have sd 0.5 per coordinate
    spread = ds.X[1:100] - vertices[0]
    assert 0.4 < spread.std() < 0.6


def test_s1k_is_deterministic():
    a, b = load_dataset("s1k"), load_dataset("s1k")
    np.testing.assert_array_equal(a.X, b.X)
    c, d = load_dataset("s1k", random_state=7), load_dataset("s1k", random_state=7)
    np.testing.assert_array_equal(c.X, d.X)
    assert not np.array_equal(a.X, c.X)


@pytest.mark.parametrize("m, edge", [(2, 1.0), (3, 2.0), (10, 2.0), (25, 0.5)])
def test_simplex_vertices_are_equidistant_and_centred(m, edge):
    V = simplex_vertices(m, edge)
    assert V.shape == (m, m - 1)
    np.testing.assert_allclose(pdist(V), edge, rtol=1e-12)
    np.testing.assert_allclose(V.mean(axis=0), 0.0, atol=1e-12)


def test_fuzzy_simplex_sizes():
    X, y = fuzzy_simplex(np.random.default_rng(0), n_vertices=4, n_per_vertex=5)
    assert X.shape == (24, 3)
    np.testing.assert_array_equal(y, np.repeat(np.arange(4), 6))


def test_digits():
    ds = load_dataset("digits")
    assert ds.X.shape == (1797, 64)
    assert set(np.unique(ds.labels)) == set(range(10))


def test_register_dataset_extends_the_registry(monkeypatch):
    monkeypatch.setattr("smallvis.datasets.DATASETS", dict(DATASETS))
    register_dataset(DatasetSpec("toy", 5, 2, "five points", "continuous",
                                 lambda rng: (np.arange(10.0).reshape(5, 2), np.arange(5.0), "t")))
    ds = load_dataset("toy")
    assert ds.X.shape == (5, 2) and ds.label_kind == "continuous" and ds.label_name == "t"
    with pytest.raises(ValueError, match="label_kind"):
        register_dataset(DatasetSpec("bad", 1, 1, "", "colour", lambda rng: None))
