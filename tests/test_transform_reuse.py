"""What a transform reuses from the fit on the kNN-graph engines: the fitted points' neighbours and
input kernel values (only the new rows are searched and calibrated), one neighbour search for the
start and the joint graph, and the fallback for models saved without kernel values."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_digits
from sklearn.neighbors import NearestNeighbors

from smallvis import SmallVis
from smallvis.api.transform import START_NEIGHBOURS, new_neighbors


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(X))
    return X[perm], y[perm]


@pytest.fixture(scope="module", params=[("tsne", "fft"), ("tsne", "bh"), ("umap", "sgd")],
                ids=["tsne-fft", "tsne-bh", "umap-sgd"])
def fitted(request, digits):
    method, engine = request.param
    X, _ = digits
    est = SmallVis(method, engine=engine, random_state=0, max_iter=200).fit(X[:800])
    return method, engine, est


def test_models_keep_the_fitted_kernel_values(fitted):
    _, _, est = fitted
    V = est.model_.kernel_rows
    assert sparse.issparse(V) and V.shape == (800, 800)
    idx = est.model_.neighbors[0]
    rows = np.repeat(np.arange(800), np.diff(V.indptr))
    # every stored value sits on one of the row's kept neighbours
    assert np.all((idx[rows] == V.indices[:, None]).any(axis=1))


def test_one_search_gives_the_joint_neighbours_and_the_start(digits, fitted):
    _, _, est = fitted
    X, _ = digits
    model = est.model_
    noise = np.random.default_rng(1).normal(scale=0.01, size=(100, X.shape[1]))  # no tied distances
    Xn = model.input_map.apply(X[800:900] + noise)
    (idx, dist), nearest = new_neighbors(model, Xn, joint=True)
    k = model.neighbors[0].shape[1]
    joint = np.vstack([model.X, Xn])
    want_d, want_i = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(joint).kneighbors(
        joint[800:])
    np.testing.assert_array_equal(idx[:800], model.neighbors[0])
    np.testing.assert_array_equal(idx[800:], want_i[:, 1:])
    np.testing.assert_allclose(dist[800:], want_d[:, 1:], rtol=1e-9, atol=1e-9)
    start = NearestNeighbors(n_neighbors=START_NEIGHBOURS).fit(model.X).kneighbors(
        Xn, return_distance=False)
    np.testing.assert_array_equal(nearest, start)
    # the default (each new point against the fitted ones): its k nearest fitted points
    (idx, dist), nearest_again = new_neighbors(model, Xn)
    want_d, want_i = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(model.X).kneighbors(Xn)
    np.testing.assert_array_equal(idx[:800], model.neighbors[0])
    np.testing.assert_array_equal(idx[800:], want_i)
    np.testing.assert_allclose(dist[800:], want_d, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(nearest_again, start)


def test_fitted_rows_keep_their_affinities(digits, fitted):
    """The joint run's kernel values: the fitted rows are the fit's, the new rows calibrated."""
    from smallvis.affinity import sparse_affinities
    from smallvis.io.data import InputData
    from smallvis.methods import build_method
    from smallvis.run.presets import preset_perplexity

    method, _, est = fitted
    X, _ = digits
    model = est.model_
    Xn = model.input_map.apply(X[800:900])
    neighbors, _ = new_neighbors(model, Xn)
    m = build_method(method, perplexity=preset_perplexity("auto", method))  # the fit's
    data = InputData(np.vstack([model.X, Xn]))
    data.set_neighbors(*neighbors)
    data.fitted_V = model.kernel_rows
    stitched = sparse_affinities(data, m.perplexity(), m.recipe).V
    full = InputData(np.vstack([model.X, Xn]))
    full.set_neighbors(*neighbors)
    again = sparse_affinities(full, m.perplexity(), m.recipe).V
    V = model.kernel_rows
    top = sparse.csr_matrix((V.data, V.indices, V.indptr), shape=(800, 900))
    assert abs(stitched[:800] - top).max() == 0
    # the new rows: the same calibration as a full run's (the first new row starts afresh)
    np.testing.assert_allclose(stitched[800:].toarray(), again[800:].toarray(), rtol=1e-3,
                               atol=1e-6 * again[800:].max())


def test_training_points_land_near_their_fitted_positions(digits, fitted):
    _, _, est = fitted
    X, _ = digits
    Y = est.transform(X[:200].copy() + 0.0)
    d = np.linalg.norm(Y[:, None] - est.embedding_[None], axis=2)
    own = d[np.arange(200), np.arange(200)]
    rank = (d < own[:, None]).sum(axis=1)
    assert np.median(rank) <= 3 and np.mean(rank <= 15) >= 0.85


def test_models_without_kernel_values_still_transform(digits, fitted):
    """A model pickled before the kernel values were kept: every row is calibrated again."""
    import copy

    _, _, est = fitted
    X, y = digits
    old = copy.deepcopy(est.model_)
    del old.__dict__["kernel_rows"]  # as unpickled from an older version
    assert old.kernel_rows is None
    from smallvis.api.transform import smallvis_transform

    Y_old = smallvis_transform(old, X[800:1000])
    Y_new = est.transform(X[800:1000])
    assert np.isfinite(Y_old).all() and Y_old.shape == Y_new.shape
    from sklearn.neighbors import KNeighborsClassifier

    knn = KNeighborsClassifier(10).fit(est.embedding_, y[:800])
    assert knn.score(Y_old, y[800:1000]) > 0.85 and knn.score(Y_new, y[800:1000]) > 0.85


def test_a_transform_nobody_watches_costs_nothing(digits, fitted, monkeypatch):
    """Without ``verbose`` or ``ret_extra`` no cost is evaluated (a watched run evaluates one every
    tenth iteration); the coordinates are those of a run that records them (70 iterations: neither
    t-SNE nor umap stops early on its tolerance by then; t-SNE on bh, quadrupole, stops at the 80th
    of the default 100, where the quiet run, which evaluates no cost, goes on)."""
    from smallvis.api.transform import smallvis_transform
    from smallvis.run.optim.base import Objective

    _, _, est = fitted
    X, _ = digits
    calls = []
    original = Objective.pcost
    monkeypatch.setattr(Objective, "pcost",
                        lambda self, Y, exaggeration=None: calls.append(1) or original(
                            self, Y, exaggeration))
    Y = smallvis_transform(est, X[800:1000], max_iter=70)
    quiet = len(calls)
    watched = smallvis_transform(est, X[800:1000], max_iter=70, ret_extra=True)
    assert quiet == 0 and len(calls) >= 7 and len(watched.itercosts) >= 7
    np.testing.assert_array_equal(Y, watched.Y)


def test_joint_placement_is_kept_as_an_option(digits, fitted):
    """``joint=True`` places the batch jointly (new points neighbours of one another); both ways
    land held-out digits in their class, and they differ."""
    from sklearn.neighbors import KNeighborsClassifier

    from smallvis.api.transform import smallvis_transform

    _, _, est = fitted
    X, y = digits
    knn = KNeighborsClassifier(10).fit(est.embedding_, y[:800])
    apart = smallvis_transform(est, X[800:1000])
    joint = smallvis_transform(est, X[800:1000], joint=True)
    assert not np.array_equal(apart, joint)
    assert knn.score(apart, y[800:1000]) > 0.85 and knn.score(joint, y[800:1000]) > 0.85


def test_cli_joint_flag(tmp_path, digits, fitted):
    """``smallvis transform --joint`` is ``smallvis_transform(..., joint=True)``."""
    import pickle

    import pandas as pd

    from smallvis.api.transform import smallvis_transform
    from smallvis.cli import main

    _, _, est = fitted
    X, _ = digits
    with open(tmp_path / "m.pkl", "wb") as fh:
        pickle.dump(est.model_, fh)
    pd.DataFrame(X[800:900]).to_csv(tmp_path / "new.csv", index=False, header=False)
    placed = {}
    for flag, joint in (([], False), (["--joint"], True)):
        out = tmp_path / f"xy{joint}.npy"
        assert main(["transform", str(tmp_path / "new.csv"), "--model", str(tmp_path / "m.pkl"),
                     "--out", str(out), "-q"] + flag) == 0
        placed[joint] = np.load(out)
    for joint in (False, True):
        np.testing.assert_array_equal(placed[joint], smallvis_transform(est, X[800:900],
                                                                        joint=joint))
