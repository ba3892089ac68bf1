"""Input processing: validation, scaling, PCA/whitening and distances
(docs/original.md#input-processing)."""

from .preprocess import SCALE_MODES, as_numeric_matrix, pca_scores, pca_whiten, scale_input
from .distances import distances_from_input, squared_distances
from .prepare import prepare_input

__all__ = [
    "SCALE_MODES",
    "as_numeric_matrix",
    "pca_scores",
    "pca_whiten",
    "scale_input",
    "distances_from_input",
    "squared_distances",
    "prepare_input",
    "load_source",
    "read_table",
]

# what the command line reads its input with: a built-in dataset's name or a file (loaded on use)
_LAZY = {"load_source": "source", "read_table": "tabular"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
