"""Embedding quality metrics: arrays in, numbers out.

- :mod:`.quality` — kNN preservation, random-triplet accuracy, PBIC and :func:`compute_metrics`, the
  table the command line and the experiments print;
- :mod:`.rank` — the rank metrics (trustworthiness, continuity, R_NX and its AUC), blocked so that
  memory stays O(n · block).
"""

from .quality import (K_METRICS, METRIC_K, METRIC_NAMES, RANK_MAX_N, compute_metrics, continuity,
                      knn_preservation, pbic, pbic_inputs, random_triplet_accuracy, rnx_auc,
                      rnx_curve, trustworthiness)

__all__ = ["K_METRICS", "METRIC_K", "METRIC_NAMES", "RANK_MAX_N", "compute_metrics", "continuity",
           "knn_preservation", "pbic", "pbic_inputs", "random_triplet_accuracy", "rnx_auc",
           "rnx_curve", "trustworthiness"]
