"""Out-of-sample embedding (``transform``): new points placed next to a fitted embedding that does
not move, for every method on every engine that runs it; models that pickle and say their version."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KNeighborsClassifier

from smallvis import SmallVis, list_methods, smallvis, smallvis_transform
from smallvis.api.pipeline import embed
from smallvis.api.model import Model
from smallvis.cli import main
from smallvis.io.input_map import fit_input_map
from smallvis.io.prepare import prepare_input
from smallvis.run.config import RunConfig


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(X))
    return X[perm], y[perm]


CASES = [(info.name, engine) for info in list_methods() for engine in info.engines
         if not (engine == "dense" and "exact" in info.engines)]


@pytest.mark.parametrize("method, engine", CASES, ids=[f"{m}-{e}" for m, e in CASES])
def test_every_method_on_every_engine_transforms(iris, method, engine):
    """Catalog-driven: the fit's model places new points on the fit's engine, finite, and the fitted
    coordinates in the joint run stay exactly where they were.

    Ten iterations of the fit (all of them exaggerated, as forty were): the 60 points then span
    about 35 units, not the 300 to 460 of forty, where the fft engine's grid reaches its cap
    (1536 nodes a side) and each evaluation of a fit or a transform costs a second."""
    X = iris[::2]  # 75 points: 60 fitted, 15 new
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs of some methods warn that they did not settle
        res = smallvis(X[:60], method=method, engine=engine, max_iter=10, defaults="auto",
                       perplexity=None if method in ("umap", "tumap", "largevis") else 10,
                       random_state=0, ret_extra=["model"])
        model = res.model
        assert model.engine == engine
        Y0 = model.Y.copy()
        out = smallvis_transform(res, X[60:], max_iter=20, ret_extra=True)
    assert out.engine == engine
    assert out.Y.shape == (15, 2) and np.isfinite(out.Y).all()
    np.testing.assert_array_equal(model.Y, Y0)


@pytest.mark.parametrize("engine", ["exact", "sgd"])
def test_frozen_rows_do_not_move(iris, engine):
    """The driver holds frozen rows bit for bit (gradient optimisers and sgd epochs alike)."""
    X = iris[::2]
    Y0 = np.random.default_rng(1).normal(size=(len(X), 2))
    frozen = np.arange(len(X)) < 50
    config = RunConfig.from_arguments(method="umap" if engine == "sgd" else "tsne", engine=engine,
                                      Y_init=Y0, max_iter=30, perplexity=10, ret_extra=True,
                                      scale="none", defaults="auto", random_state=0)
    res = embed(X, config, frozen=frozen)
    np.testing.assert_array_equal(res.Y[frozen], Y0[frozen])
    assert not np.array_equal(res.Y[~frozen], Y0[~frozen])


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_training_points_land_at_their_fitted_positions(digits, method):
    """Transforming fitted points (not the fitted array itself) puts each next to its own fitted
    position: it is nearer to it than to almost every other fitted point."""
    X, _ = digits
    est = SmallVis(method, random_state=0).fit(X[:1000])
    Y = est.transform(X[:200].copy() + 0.0)  # a copy: the same values take the joint-run route
    assert np.array_equal(est.transform(X[:1000]), est.embedding_)  # the fitted array: no run
    d = np.linalg.norm(Y[:, None] - est.embedding_[None], axis=2)
    own = d[np.arange(200), np.arange(200)]
    rank = (d < own[:, None]).sum(axis=1)  # fitted points nearer than the point's own position
    assert np.median(rank) <= 2 and np.mean(rank <= 10) >= 0.9


@pytest.mark.parametrize("method, engine", [("tsne", "exact"), ("tsne", "fft"), ("umap", "sgd")])
def test_held_out_digits_land_in_their_class(digits, method, engine):
    """kNN classification of held-out digits on their transformed positions is within a few points
    of the training points' own accuracy."""
    X, y = digits
    est = SmallVis(method, engine=engine, random_state=0).fit(X[:1300])
    Y_new = est.transform(X[1300:])
    knn = KNeighborsClassifier(10).fit(est.embedding_, y[:1300])
    train_acc = knn.score(est.embedding_, y[:1300])
    assert knn.score(Y_new, y[1300:]) >= train_acc - 0.04


def test_input_processing_is_the_fits(digits):
    """The fitted scaling and PCA map new rows with the fit's constants: applied to the training
    rows they reproduce the processed training data."""
    X = digits[0][:300]
    rng = np.random.default_rng(0)
    for scale in ("absmax", "scale", "range", "none"):
        for pca in (False, True, "whiten"):
            data, pca_dims, whiten_dims, applied = prepare_input(
                X, precomputed=False, scale=scale, pca=pca, initial_dims=10, k=2, rng=rng)
            m = fit_input_map(X, scale, data.X, projected=applied)
            got = m.apply(X)
            np.testing.assert_allclose(got, data.X, atol=1e-9 * np.abs(data.X).max(),
                                       err_msg=f"{scale}, {pca}")


def test_bad_input_is_named(digits):
    X, _ = digits
    with pytest.raises(NotFittedError):
        SmallVis().transform(X[:5])
    est = SmallVis(max_iter=50, random_state=0).fit(X[:200])
    with pytest.raises(ValueError, match="64 features"):
        est.transform(X[:5, :10])
    bad = X[:5].copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.transform(bad)
    res = smallvis(X[:100], max_iter=10)
    with pytest.raises(TypeError, match="fitted model"):
        smallvis_transform(res, X[:5])
    res = smallvis(X[:100], max_iter=10, ret_extra=True)
    with pytest.raises(TypeError, match="ret_extra=\\['model'\\]"):
        smallvis_transform(res, X[:5])
    with pytest.raises(ValueError, match="64 columns"):
        smallvis_transform(est.model_, X[:5, :10])


def test_models_pickle_with_their_version(digits):
    X, _ = digits
    est = SmallVis(max_iter=100, random_state=0).fit(X[:300])
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(X[300:340]), est.transform(X[300:340]))
    res = smallvis(X[:100], max_iter=10, ret_extra=["model"])
    assert isinstance(pickle.loads(pickle.dumps(res)).model, Model)
    for obj in (est, res, est.model_):
        state = obj.__getstate__() if not isinstance(obj, Model) else dict(vars(obj))
        key = "version" if isinstance(obj, Model) else "_smallvis_version"
        state[key] = "99.0.0"
        fresh = type(obj).__new__(type(obj))
        with pytest.raises(ValueError, match="saved by smallvis 99.0.0"):
            fresh.__setstate__(state)


def test_cli_saves_a_model_and_transforms(tmp_path, digits, capsys):
    import pandas as pd

    X, y = digits
    frame = pd.DataFrame(X)
    frame["digit"] = y
    frame[:400].to_csv(tmp_path / "train.csv", index=False)
    frame[400:500].to_csv(tmp_path / "new.csv", index=False)
    model = tmp_path / "m.pkl"
    assert main(["embed", str(tmp_path / "train.csv"), "--labels", "digit", "--max-iter", "100",
                 "--seed", "1", "--save-model", str(model), "-q"]) == 0
    out = tmp_path / "new_xy.csv"
    assert main(["transform", str(tmp_path / "new.csv"), "--model", str(model), "--labels",
                 "digit", "--out", str(out), "--plot", str(tmp_path / "new.png")]) == 0
    placed = pd.read_csv(out)
    assert placed.shape == (100, 3) and (tmp_path / "new.png").stat().st_size > 0
    # nothing is overwritten without --force; a file that is not a model is named
    assert main(["transform", str(tmp_path / "new.csv"), "--model", str(model), "--out",
                 str(out)]) == 2
    assert main(["embed", str(tmp_path / "train.csv"), "--save-model", str(model)]) == 2
    assert main(["transform", str(tmp_path / "new.csv"), "--model",
                 str(tmp_path / "train.csv")]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "not a smallvis model" in err


def test_dataframes_in_and_out_keep_the_index(iris):
    """scikit-learn's set_output: a DataFrame in gives a DataFrame out, with the input's index and
    the estimator's feature names, from fit_transform and from transform alike."""
    import pandas as pd

    X = pd.DataFrame(iris, columns=list("abcd"), index=[f"p{i}" for i in range(len(iris))])
    est = SmallVis(max_iter=50, random_state=0).set_output(transform="pandas")
    Y = est.fit_transform(X)
    assert list(Y.columns) == ["smallvis0", "smallvis1"] and Y.index.equals(X.index)
    new = X.iloc[:5] + 0.01
    Z = est.transform(new)
    assert isinstance(Z, pd.DataFrame) and Z.index.equals(new.index)
    assert list(est.feature_names_in_) == list("abcd")


def test_float32_output(iris):
    """dtype='float32' returns float32 coordinates (the run is float64: the same numbers, rounded),
    from smallvis(), the estimator and its transform."""
    Y64 = smallvis(iris, max_iter=30, random_state=0)
    Y32 = smallvis(iris, max_iter=30, random_state=0, dtype="float32")
    assert Y32.dtype == np.float32
    np.testing.assert_array_equal(Y32, Y64.astype(np.float32))
    est = SmallVis(max_iter=30, random_state=0, dtype=np.float32).fit(iris[:100])
    assert est.embedding_.dtype == np.float32 and est.transform(iris[100:]).dtype == np.float32
    with pytest.raises(ValueError, match="dtype must be"):
        smallvis(iris, max_iter=5, dtype="int8")
