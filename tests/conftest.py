import pytest
from sklearn.datasets import load_iris

from smallvis.io.preprocess import pca_scores


@pytest.fixture(scope="session")
def iris():
    return load_iris().data


@pytest.fixture(scope="session")
def iris10(iris):
    """Numeric columns of R's iris[1:10, ]."""
    return iris[:10].copy()


@pytest.fixture(scope="session")
def iris10_Y(iris10):
    """PCA scores of raw iris10 (the original's test init)."""
    return pca_scores(iris10, 2)


@pytest.fixture(scope="session")
def ui10(iris):
    """Rows 6-15 of unique(iris): iris rows 6-15 (no ties among neighbours)."""
    return iris[5:15].copy()
