"""smallvis: neighbour-embedding visualisation (t-SNE and relatives), compatible with the R package.

Importing is cheap: the heavy modules load on first use.
"""

from ._version import __version__

__all__ = [
    "smallvis",
    "smallvis_perpstep",
    "smallvis_rep",
    "SmallVis",
    "SmallVisResult",
    "DivergenceError",
    "calibrate_perplexity",
    "compare",
    "fuzzy_set_union",
    "idp_perps",
    "intrinsic_dimensionality",
    "list_methods",
    "smooth_knn_distances",
    "sweep",
    "umap_ab",
    "__version__",
]

_LAZY = {
    "smallvis": ("api", "smallvis"),
    "smallvis_perpstep": ("perpstep", "smallvis_perpstep"),
    "smallvis_rep": ("rep", "smallvis_rep"),
    "SmallVis": ("estimator", "SmallVis"),
    "SmallVisResult": ("result", "SmallVisResult"),
    "DivergenceError": ("api", "DivergenceError"),
    "calibrate_perplexity": ("affinity", "calibrate_perplexity"),
    "compare": ("compare_runner", "compare"),  # as sweep: no module named compare
    "fuzzy_set_union": ("affinity", "fuzzy_set_union"),
    "idp_perps": ("affinity", "idp_perps"),
    "intrinsic_dimensionality": ("affinity", "intrinsic_dimensionality"),
    "list_methods": ("catalog", "list_methods"),
    "smooth_knn_distances": ("affinity", "smooth_knn_distances"),
    "sweep": ("sweep_runner", "sweep"),  # not a module named sweep: importing it would shadow this
    "umap_ab": ("umap_curve", "umap_ab"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'smallvis' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
