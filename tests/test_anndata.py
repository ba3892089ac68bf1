"""Single-cell data: ``embed_anndata`` on an AnnData-like object, and ``.h5ad`` files on the command
line (written here with h5py in anndata's on-disk layout: dense and CSR matrices, categorical obs)."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.datasets import make_blobs

from smallvis import SmallVis, embed_anndata
from smallvis.cli import main


class FakeAnnData:
    """What embed_anndata reads and writes: X, obs, obsm, layers, uns."""

    def __init__(self, X, obs=None, obsm=None, layers=None):
        self.X, self.obs = X, obs
        self.obsm, self.layers, self.uns = dict(obsm or {}), dict(layers or {}), {}


@pytest.fixture(scope="module")
def cells():
    X, y = make_blobs(300, 20, centers=4, random_state=0)
    X = np.abs(X)
    pcs = X[:, :5] - X[:, :5].mean(axis=0)
    names = np.array(["T", "B", "NK", "mono"])[y]
    return X, pcs, names


def test_embed_anndata_writes_obsm_and_uns(cells):
    X, pcs, names = cells
    ad = FakeAnnData(sparse.csr_matrix(X), obs=pd.DataFrame({"cell_type": names}),
                     obsm={"X_pca": pcs}, layers={"raw": X * 2})
    est = embed_anndata(ad, "tsne", max_iter=100, random_state=0)
    assert isinstance(est, SmallVis)
    assert ad.obsm["X_tsne"].shape == (300, 2)
    assert ad.uns["smallvis_tsne"]["params"]["use_rep"] == "obsm['X_pca']"  # scanpy's default
    np.testing.assert_array_equal(
        ad.obsm["X_tsne"], SmallVis("tsne", max_iter=100, random_state=0).fit_transform(pcs))
    embed_anndata(ad, "umap", layer="raw", key_added="X_umap_raw", y="cell_type", random_state=0)
    assert ad.obsm["X_umap_raw"].shape == (300, 2)
    assert ad.uns["smallvis_umap_raw"]["params"]["use_rep"] == "layers['raw']"
    with pytest.raises(KeyError, match="has no 'X_harmony'"):
        embed_anndata(ad, use_rep="X_harmony")
    with pytest.raises(KeyError, match="layers has no"):
        embed_anndata(ad, layer="spliced")


def _write_h5ad(path, X, names, pcs):
    """A minimal .h5ad in anndata's layout (CSR X, a dense layer, categorical obs, obsm)."""
    h5py = pytest.importorskip("h5py")  # the test extras install it
    M = sparse.csr_matrix(X)
    cats, codes = np.unique(names, return_inverse=True)
    with h5py.File(path, "w") as f:
        g = f.create_group("X")
        g.attrs["encoding-type"], g.attrs["shape"] = "csr_matrix", M.shape
        g["data"], g["indices"], g["indptr"] = M.data, M.indices, M.indptr
        obs = f.create_group("obs")
        obs.attrs["_index"] = "_index"
        obs["_index"] = np.array([f"c{i}".encode() for i in range(len(names))])
        ct = obs.create_group("cell_type")
        ct.attrs["encoding-type"] = "categorical"
        ct["codes"] = codes.astype(np.int8)
        ct["categories"] = np.array([c.encode() for c in cats])
        var = f.create_group("var")
        var.attrs["_index"] = "_index"
        var["_index"] = np.array([f"gene{j}".encode() for j in range(X.shape[1])])
        f.create_group("obsm")["X_pca"] = pcs
        f.create_group("layers")["counts"] = X


def test_cli_reads_h5ad(tmp_path, cells, capsys):
    X, pcs, names = cells
    path = tmp_path / "cells.h5ad"
    _write_h5ad(path, X, names, pcs)
    out = tmp_path / "emb.csv"
    assert main(["embed", str(path), "--labels", "cell_type", "--max-iter", "100", "--seed", "0",
                 "--out", str(out), "--plot", str(tmp_path / "cells.png"), "-q"]) == 0
    emb = pd.read_csv(out)
    assert emb.shape == (300, 3) and set(emb["cell_type"]) == {"T", "B", "NK", "mono"}
    for flag in (["--obsm", "X_pca"], ["--layer", "counts"]):
        assert main(["embed", str(path), *flag, "--max-iter", "50", "-q"]) == 0
    assert main(["embed", str(path), "--labels", "tissue"]) == 2
    assert "no obs column 'tissue'; it has: _index, cell_type" in capsys.readouterr().err
    assert main(["embed", str(path), "--obsm", "X_umap"]) == 2
    assert "no obsm entry 'X_umap'; it has: X_pca" in capsys.readouterr().err
    csv = tmp_path / "t.csv"
    pd.DataFrame(X).to_csv(csv, index=False)
    assert main(["embed", str(csv), "--layer", "counts"]) == 2
    assert "for AnnData .h5ad files" in capsys.readouterr().err


def test_h5ad_from_anndata_itself(tmp_path, cells):
    anndata = pytest.importorskip("anndata")
    X, pcs, names = cells
    ad = anndata.AnnData(X=X, obs=pd.DataFrame({"cell_type": pd.Categorical(names)},
                                                index=[f"c{i}" for i in range(len(X))]))
    ad.obsm["X_pca"] = pcs
    ad.write_h5ad(tmp_path / "a.h5ad")
    assert main(["embed", str(tmp_path / "a.h5ad"), "--labels", "cell_type", "--obsm", "X_pca",
                 "--max-iter", "50", "-q"]) == 0
    embed_anndata(ad, "tsne", max_iter=50)
    assert ad.obsm["X_tsne"].shape == (300, 2)
