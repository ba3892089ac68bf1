"""Input processing: validation, scaling, PCA/whitening and distances
(docs/original.md#input-processing)."""

from .preprocess import SCALE_MODES, as_numeric_matrix, pca_scores, pca_whiten, scale_input
from .distances import distances_from_input, squared_distances

__all__ = [
    "SCALE_MODES",
    "as_numeric_matrix",
    "pca_scores",
    "pca_whiten",
    "scale_input",
    "distances_from_input",
    "squared_distances",
]
