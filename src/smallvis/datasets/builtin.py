"""The datasets that ship with smallvis (no network): iris, iris10, s1k, digits."""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np

from . import DatasetSpec, register_dataset
from .synthetic import fuzzy_simplex

S1K_SEED = 42


def _iris(rng):
    """R's ``datasets::iris`` (bundled CSV; rows 35 and 38 as in R, not the erroneous UCI copy)."""
    text = resources.files(__package__).joinpath("iris.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines()))
    header, body = rows[0], rows[1:]
    X = np.array([[float(v) for v in row[:4]] for row in body])
    species = np.array([row[4] for row in body], dtype=object)
    return X, species, header[4], header[:4]


def _iris10(rng):
    X, species, name, columns = _iris(rng)
    return X[:10], species[:10], name, columns


def _s1k(rng):
    X, labels = fuzzy_simplex(np.random.default_rng(S1K_SEED) if rng is None else rng)
    return X, labels, "Label", [f"D{i}" for i in range(X.shape[1])]


def _digits(rng):
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data, d.target, "Label"


register_dataset(DatasetSpec(
    "iris", 150, 4, "Fisher's iris flowers (R datasets::iris), 3 species", "class", _iris))
register_dataset(DatasetSpec(
    "iris10", 10, 4, "first 10 rows of iris (the original's test data)", "class", _iris10))
register_dataset(DatasetSpec(
    "s1k", 1000, 9,
    "fuzzy 9-D simplex: 10 vertices at distance 2, each with 99 N(vertex, 0.5^2 I) points "
    f"(seed {S1K_SEED} unless given)", "class", _s1k, random=True))
register_dataset(DatasetSpec(
    "digits", 1797, 64, "8x8 handwritten digits 0-9 (UCI, via scikit-learn)", "class", _digits))
