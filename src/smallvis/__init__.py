"""smallvis: neighbour-embedding visualisation (t-SNE and relatives), compatible with the R package.

Importing is cheap: the heavy modules load on first use.
"""

from ._version import __version__

__all__ = [
    "smallvis",
    "smallvis_perpstep",
    "smallvis_rep",
    "smallvis_transform",
    "embed_anndata",
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
    "smallvis": ("api.embed", "smallvis"),
    "smallvis_perpstep": ("api.perpstep", "smallvis_perpstep"),
    "smallvis_rep": ("api.rep", "smallvis_rep"),
    "smallvis_transform": ("api.transform", "smallvis_transform"),
    "embed_anndata": ("api.adata", "embed_anndata"),
    "SmallVis": ("api.estimator", "SmallVis"),
    "SmallVisResult": ("run.result", "SmallVisResult"),
    "DivergenceError": ("api.embed", "DivergenceError"),
    "calibrate_perplexity": ("affinity", "calibrate_perplexity"),
    "compare": ("experiments.compare", "compare"),
    "fuzzy_set_union": ("affinity", "fuzzy_set_union"),
    "idp_perps": ("affinity", "idp_perps"),
    "intrinsic_dimensionality": ("affinity", "intrinsic_dimensionality"),
    "list_methods": ("engines.catalog", "list_methods"),
    "smooth_knn_distances": ("affinity", "smooth_knn_distances"),
    "sweep": ("experiments.sweep", "sweep"),
    "umap_ab": ("methods.umap_curve", "umap_ab"),
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
