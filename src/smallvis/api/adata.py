"""Embedding an AnnData object (single-cell data) in place, as scanpy's ``tl.tsne``/``tl.umap`` do.

``embed_anndata(adata, "umap")`` embeds ``adata.obsm["X_pca"]`` when it exists (else ``adata.X``, or
the ``use_rep``/``layer`` asked for), writes the coordinates to ``adata.obsm["X_umap"]`` and the
settings to ``adata.uns["smallvis_umap"]``, and returns the fitted estimator (whose ``transform``
places new cells). Any object with AnnData's ``X``, ``obsm``, ``layers`` and ``uns`` works; anndata
itself is not imported.
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger
from ..methods import split_spec

__all__ = ["embed_anndata"]


def embed_anndata(adata, method="tsne", *, use_rep=None, layer=None, key_added=None, y=None,
                  **params):
    """Embed ``adata`` with :class:`~smallvis.SmallVis` and store the result on it.

    Parameters
    ----------
    adata : AnnData
    method : str or (str, dict)
    use_rep : str, optional
        An ``obsm`` key to embed (default: ``"X_pca"`` when present, as scanpy does, else ``X``).
    layer : str, optional
        A layer to embed instead of ``X``.
    key_added : str, optional
        Where the coordinates go: ``adata.obsm[key_added]`` (default ``"X_<method>"``); the
        settings go to ``adata.uns["smallvis_<method>"]`` (or ``key_added`` without ``X_``).
    y : str or array, optional
        Labels for a supervised embedding: an ``obs`` column name or an array.
    **params
        Any :class:`~smallvis.SmallVis` parameter.

    Returns
    -------
    SmallVis
        The fitted estimator.
    """
    from .estimator import SmallVis

    if use_rep is not None and layer is not None:
        raise ValueError("give use_rep or layer, not both")
    obsm = getattr(adata, "obsm", {})
    if use_rep is None and layer is None and "X_pca" in obsm:
        use_rep = "X_pca"
    if use_rep is not None:
        if use_rep not in obsm:
            raise KeyError(f"adata.obsm has no {use_rep!r}; it has: {', '.join(obsm) or 'nothing'}")
        X, what = obsm[use_rep], f"obsm[{use_rep!r}]"
    elif layer is not None:
        layers = getattr(adata, "layers", {})
        if layer not in layers:
            raise KeyError(f"adata.layers has no {layer!r}; it has: {', '.join(layers) or 'nothing'}")
        X, what = layers[layer], f"layers[{layer!r}]"
    else:
        X, what = adata.X, "X"
    if not hasattr(X, "tocsr"):  # sparse counts stay sparse
        X = np.asarray(X, dtype=np.float64)
    if isinstance(y, str):
        y = np.asarray(adata.obs[y], dtype=object)
    name = split_spec(method)[0]
    key = key_added or f"X_{name}"
    logger.info("embed_anndata: %s of %d cells -> obsm[%r]", what, np.shape(X)[0], key)
    est = SmallVis(method, **params).fit(X, y)
    adata.obsm[key] = est.embedding_
    uns_key = key[2:] if key.startswith("X_") else key
    adata.uns[f"smallvis_{uns_key}"] = {
        "params": {"method": name, "use_rep": what, **est.result_.settings,
                   **{k: v for k, v in params.items() if np.isscalar(v) or v is None}},
        "engine": est.result_.engine, "iterations": int(est.n_iter_), "cost": float(est.cost_)}
    return est
