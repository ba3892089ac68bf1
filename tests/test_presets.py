"""The two sets of defaults: the original's (``smallvis()``) and the modern one (estimator, CLI)."""

import json
import warnings

import numpy as np
import pytest
from sklearn.manifold import trustworthiness

from smallvis import DivergenceError, SmallVis, smallvis
from smallvis.cli import main
from smallvis.run.optim.dbd import DeltaBarDelta
from smallvis.run.presets import auto_eta, exaggeration_iterations


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=6.0, size=(3, 5))
    return np.vstack([c + rng.normal(size=(40, 5)) for c in centres])


def test_smallvis_keeps_the_originals_defaults(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=20, ret_extra=True, random_state=1)
    assert res.defaults == "smallvis" and res.settings == {}
    assert res.Y_init == "rand" and res.opt["eta"] == 500 and res.opt["reset_gains"] is False
    assert res.exaggeration_factor is None and res.iter == 20
    explicit = smallvis(iris10, perplexity=5, max_iter=20, random_state=1, opt="dbd",
                        exaggeration_factor=1.0, min_cost=0.0, defaults="smallvis")
    np.testing.assert_array_equal(res.Y, explicit)


def test_auto_tsne_is_the_opentsne_recipe(blobs):
    n = len(blobs)
    res = smallvis(blobs, defaults="auto", ret_extra=True, random_state=0)
    assert res.defaults == "auto"
    assert res.settings == {"Y_init": "pcascaled", "exaggeration_factor": 12.0,
                            "stop_lying_iter": 250, "mom_switch_iter": 250, "max_iter": 750,
                            "eta": "auto", "opt": ["dbd", {"reset_gains": True}]}
    assert res.Y_init == "pcascaled" and res.exaggeration_factor == 12
    assert res.stop_lying_iter == 250 and res.opt["mom_switch_iter"] == 250
    assert res.opt["eta"] == auto_eta(n, 12) == 50.0  # max(n / 48, 50)
    assert res.opt["reset_gains"] is True


def test_what_the_user_gives_wins(blobs):
    res = smallvis(blobs, defaults="auto", exaggeration_factor=1, eta=100, max_iter=90,
                   Y_init="spca", ret_extra=True, random_state=0)
    assert res.iter == 90 and res.opt["eta"] == 100 and res.Y_init == "spca"
    assert res.exaggeration_factor is None and res.opt["reset_gains"] is False
    assert "exaggeration_factor" not in res.settings and "eta" not in res.settings
    # a short run keeps a third of its iterations free of exaggeration
    short = smallvis(blobs, defaults="auto", max_iter=90, ret_extra=True, random_state=0)
    assert short.stop_lying_iter == exaggeration_iterations(90) == 30


def test_eta_auto_and_optsne():
    assert auto_eta(4800, 12) == 100 and auto_eta(480, 12) == 50 and auto_eta(4000, 1) == 1000


@pytest.mark.parametrize("rule, expected", [("auto", 50.0), ("optsne", 120 / 4)])
def test_eta_rules_in_a_run(blobs, rule, expected):
    res = smallvis(blobs, eta=rule, exaggeration_factor=4, max_iter=2, ret_extra=True)
    assert res.opt["eta"] == expected


def test_reset_gains_equals_two_separate_runs(blobs):
    """Resetting gains and momentum when exaggeration ends is exactly scikit-learn's two calls."""
    Y0 = np.random.default_rng(3).normal(scale=1e-4, size=(len(blobs), 2))
    common = dict(perplexity=10, eta=50.0, tol=0.0)
    one = smallvis(blobs, Y_init=Y0, exaggeration_factor=12, stop_lying_iter=40, mom_switch_iter=40,
                   max_iter=80, opt=("dbd", {"reset_gains": True}), **common)
    first = smallvis(blobs, Y_init=Y0, exaggeration_factor=12, stop_lying_iter=40, max_iter=40,
                     mom_switch_iter=40, **common)
    second = smallvis(blobs, Y_init=first, max_iter=40, momentum=0.8, **common)
    np.testing.assert_allclose(one, second, rtol=1e-10, atol=1e-12)
    carried = smallvis(blobs, Y_init=Y0, exaggeration_factor=12, stop_lying_iter=40,
                       mom_switch_iter=40, max_iter=80, **common)
    assert not np.allclose(carried, one)


def test_dbd_reset_only_with_the_option():
    opt = DeltaBarDelta(reset_gains=True)
    opt.start(np.zeros((3, 2)))
    opt.gain[:], opt.uY[:] = 5.0, 1.0
    opt._started = True
    opt.end_exaggeration(10)
    assert np.all(opt.gain == 1.0) and np.all(opt.uY == 0.0)
    keep = DeltaBarDelta()
    keep.start(np.zeros((3, 2)))
    keep.gain[:], keep._started = 5.0, True
    keep.end_exaggeration(10)
    assert np.all(keep.gain == 5.0)


@pytest.mark.parametrize("engine", ["exact", "bh"])
@pytest.mark.parametrize("init", ["rand", "pcascaled"])
def test_sklearn_preserve_trustworthiness(engine, init):
    """scikit-learn's test_preserve_trustworthiness_approximately (700 iterations, exaggeration 12
    for 250) with the modern defaults: trustworthiness >= 0.99 (the original's schedule: 0.90-0.95)."""
    X = np.random.RandomState(0).randn(50, 2).astype(np.float32)
    Y = SmallVis(Y_init=init, engine=engine, max_iter=700, random_state=0).fit_transform(X)
    assert trustworthiness(X, Y, n_neighbors=1) >= 0.99


def test_pcascaled_keeps_the_aspect_ratio(blobs):
    from smallvis.io.preprocess import pca_scores

    res = smallvis(blobs, Y_init="pcascaled", max_iter=0, ret_extra=True, random_state=0)
    pcs = pca_scores(blobs / np.abs(blobs).max(), 2, np.random.default_rng(0))
    assert res.Y[:, 0].std() == pytest.approx(1e-4)
    assert res.Y[:, 1].std() / res.Y[:, 0].std() == pytest.approx(pcs[:, 1].std() / pcs[:, 0].std())


@pytest.mark.parametrize("method", ["umap", "largevis", "tumap", "ncvis"])
def test_auto_runs_the_stochastic_methods_on_sgd(blobs, method):
    res = SmallVis(method, random_state=0, max_iter=20).fit(blobs).result_
    assert res.engine == "sgd"
    if method in ("umap", "tumap"):
        assert res.perplexity == 15  # umap-learn's n_neighbors
    # the original's defaults keep the exact engines below 10,000 points
    assert smallvis(blobs, method=method, max_iter=2, ret_extra=True).engine != "sgd"


def test_auto_gives_other_methods_a_working_step(blobs):
    res = SmallVis("ssne", random_state=0, max_iter=50).fit(blobs).result_
    assert res.settings["eta"] == pytest.approx(0.1 * len(blobs) / 150)
    assert res.settings["Y_init"] == "pcascaled"
    tee = SmallVis("tee", random_state=0, max_iter=5).fit(blobs).result_
    assert tee.settings["min_cost"] == -np.inf
    lv = SmallVis("largevis", engine="exact", random_state=0, max_iter=5).fit(blobs).result_
    assert lv.settings["method_params"] == {"gamma": 1 / len(blobs)}
    assert lv.method == ("largevis", {"gamma": 1 / len(blobs), "eps": np.finfo(float).eps})


def test_a_diverged_run_is_never_returned(iris):
    bad = dict(method="ssne", eta=1e8, max_iter=200, random_state=0, perplexity=10)
    with pytest.raises(DivergenceError, match=r"diverged at iteration \d+.*smaller eta"):
        SmallVis(**bad).fit(iris)
    with pytest.raises(DivergenceError, match="diverged"):
        SmallVis(defaults="smallvis", **bad).fit(iris)
    with pytest.warns(RuntimeWarning, match="last finite coordinates"):
        res = smallvis(iris, ret_extra=True, **bad)
    assert res.diverged and np.all(np.isfinite(res.Y))


def test_a_step_the_defaults_chose_is_made_smaller_when_it_diverges(iris, monkeypatch, caplog):
    from smallvis.run import presets

    # a step that diverges on iris (asne at eta=1 within ~10 iterations)
    monkeypatch.setitem(presets.RECIPES, "asne", presets.Recipe(("1", 1.0)))
    with caplog.at_level("WARNING", logger="smallvis"):
        est = SmallVis("asne", max_iter=60, random_state=0).fit(iris)
    assert "running again with eta=0.25" in caplog.text
    eta = est.result_.settings["eta"]
    assert eta < 1 and est.result_.opt["eta"] == eta and np.all(np.isfinite(est.embedding_))
    # the run is that of the smaller step given outright
    given = SmallVis("asne", max_iter=60, random_state=0, eta=eta).fit_transform(iris)
    np.testing.assert_array_equal(est.embedding_, given)
    # a step the user gave is theirs: no second run
    with pytest.raises(DivergenceError, match="eta=1"):
        SmallVis("asne", max_iter=60, random_state=0, eta=1.0).fit(iris)


def test_a_retried_run_lets_the_diverged_attempt_go(iris, monkeypatch):
    """The diverged attempt's outcome (and the state it carries) is not held while the next attempt
    runs: at 70,000 points that was a second copy of the prepared affinities."""
    import gc
    import weakref

    from smallvis.api import pipeline
    from smallvis.run import presets

    monkeypatch.setitem(presets.RECIPES, "asne", presets.Recipe(("1", 1.0)))
    held, alive = [], []
    original = pipeline._run

    def run(*args, **kwargs):
        gc.collect()
        alive.append(sum(ref() is not None for ref in held))
        out, kept = original(*args, **kwargs)
        held.append(weakref.ref(out))
        return out, kept

    monkeypatch.setattr(pipeline, "_run", run)
    SmallVis("asne", max_iter=60, random_state=0).fit(iris)
    assert len(alive) >= 2 and alive == [0] * len(alive)


def test_the_cli_refuses_a_diverged_run(tmp_path, capsys):
    out = tmp_path / "x.csv"
    code = main(["embed", "iris", "--method", "ssne", "--eta", "1e8", "--max-iter", "200",
                 "--seed", "0", "--out", str(out)])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("smallvis: error:") and "diverged" in err and err.count("\n") == 1
    assert not out.exists() and not out.with_suffix(".json").exists()


def test_cli_defaults_option(tmp_path):
    out = tmp_path / "r.csv"
    assert main(["embed", "iris", "--defaults", "smallvis", "--max-iter", "30", "--seed", "4",
                 "--out", str(out), "--quiet"]) == 0
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["parameters"]["defaults"] == "smallvis" and record["result"]["settings"] == {}
    assert record["result"]["opt"]["eta"] == 500


def test_absmax_warns_about_column_ranges(blobs):
    X = blobs.copy()
    X[:, 0] *= 1000.0
    with pytest.warns(UserWarning, match="scale='scale'"):
        smallvis(X, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        smallvis(X, max_iter=1, scale="scale")
        smallvis(blobs, max_iter=1)


def test_a_layout_on_a_line_is_reported():
    from smallvis.api.diagnostics import degenerate_layout

    t = np.linspace(0, 1, 50)
    assert degenerate_layout(np.c_[t, 1e-3 * np.sin(9 * t)]) is not None
    assert degenerate_layout(np.c_[t, np.sin(9 * t)]) is None
    assert degenerate_layout(t[:, None]) is None


def test_a_rising_cost_is_reported():
    from smallvis.run.driver import cost_rise

    settling = [(i * 50, 1.0 + 1.0 / i) for i in range(1, 11)]
    assert cost_rise(settling) is None
    rising = settling[:5] + [(300, 1.2), (350, 1.1), (400, 1.3), (450, 1.5), (500, 1.6)]
    assert cost_rise(rising) == (1.1, 350, 1.6)
    assert cost_rise(rising[:4]) is None  # too few to tell


def test_every_method_has_a_modern_recipe():
    from smallvis.methods import REGISTRY
    from smallvis.run.presets import RECIPES, SGD_METHODS

    assert set(RECIPES) | set(SGD_METHODS) == set(REGISTRY)
    assert not set(RECIPES) & set(SGD_METHODS)


def test_usne_starts_from_pca_with_sd_one(blobs):
    res = SmallVis("usne", max_iter=0).fit(blobs).result_
    assert res.settings["Y_init_sdev"] == 1.0
    assert res.Y[:, 0].std() == pytest.approx(1.0) and res.Y[:, 1].std() < 1.0


def test_every_method_gives_a_picture_with_no_settings():
    """The promise of the modern defaults: any method by name, nothing else, separates clear clusters
    (three blobs in 6-D; a 5-NN classifier on the embedding and kNN@10 preservation)."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    from smallvis.methods import REGISTRY
    from smallvis.metrics import knn_preservation

    rng = np.random.default_rng(0)
    centres = rng.normal(scale=6.0, size=(3, 6))
    X = np.vstack([c + rng.normal(size=(30, 6)) for c in centres])
    y = np.repeat([0, 1, 2], 30)
    poor = {}
    for name in REGISTRY:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Y = SmallVis(name, random_state=0).fit_transform(X)
        accuracy = cross_val_score(KNeighborsClassifier(5), Y, y, cv=3).mean()
        knn = knn_preservation(X, Y, 10)
        # a random layout: accuracy ~0.33, kNN@10 ~0.1; tee keeps only ~0.34 of the neighbours and
        # its last point's side depends on the BLAS build
        if accuracy < 0.95 or knn < 0.25:
            poor[name] = (accuracy, knn)
    assert poor == {}


def test_the_recipes_are_the_evidence_table():
    """presets.RECIPES encodes benchmarks/defaults_table.json, the settings the evidence chose."""
    from pathlib import Path

    from smallvis.run.presets import RECIPES, SGD_METHODS

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "defaults_table.json"
    table = json.loads(path.read_text())["methods"]
    assert set(table) == set(RECIPES) | set(SGD_METHODS)
    for name, row in table.items():
        if name in SGD_METHODS:
            assert row == {"engine": "sgd"}
            continue
        recipe, n = RECIPES[name], 1797
        scale, c, *floor = row["eta"]
        eta = max([c * {"n": n, "1": 1, "1/n": 1 / n}[scale], *floor])
        got = recipe.step(n)
        assert (auto_eta(n, 12) if got == "auto" else got) == pytest.approx(eta, rel=1e-5), name
        assert recipe.exaggeration == row["exaggeration"], name
        assert recipe.init == row["init"] and recipe.init_sd == row.get("init_sd"), name
        assert row["max_iter"] == 750 and row["reset"] == (row["exaggeration"] != 1), name
        assert recipe.min_cost == (-np.inf if "min_cost" in row else None), name


@pytest.mark.parametrize("kw, error, pattern", [
    (dict(defaults="moden"), ValueError, r"defaults.*'moden'.*(auto|smallvis)"),
    (dict(opt=("dbd", {"reset_gains": "yes"})), ValueError, r"reset_gains must be True or False"),
    (dict(eta="fast"), ValueError, r"eta must be a positive number, 'auto' or 'optsne'"),
    (dict(Y_init="pcascaledd"), ValueError, r"Y_init"),
])
def test_bad_new_options_are_named(iris10, kw, error, pattern):
    with pytest.raises(error, match=pattern):
        smallvis(iris10, perplexity=5, max_iter=2, **kw)


def test_cli_refuses_an_unknown_defaults_name(capsys):
    assert main(["embed", "iris", "--defaults", "modern"]) == 2
    assert "--defaults" in capsys.readouterr().err


@pytest.mark.parametrize("method, gallery_eta", [("tasne", 1.0), ("trsrsne", 1.0), ("chsne", 10.0)])
def test_the_modern_step_does_not_overshoot_at_the_start(method, gallery_eta):
    """tasne and trsrsne take t-SNE's auto rule for a P summing to n (1 / 48), chsne 1: at the
    gallery's steps their first 20 iterations spread 1,000 points of blobs over 15 to 85 units (the
    fft grid follows), at these under 4 (measured 0.10, 0.10, 3.6)."""
    from sklearn.datasets import make_blobs

    from smallvis.run.presets import EARLY_EXAGGERATION, RECIPES

    assert RECIPES[method].step(70_000) == (1.0 / (4 * EARLY_EXAGGERATION) if method != "chsne"
                                            else 1.0)
    X = make_blobs(1000, 20, centers=10, random_state=0)[0]
    common = dict(method=method, engine="exact", defaults="auto", max_iter=20, random_state=1, tol=0)
    assert np.ptp(smallvis(X, **common), axis=0).max() < 4.0
    assert np.ptp(smallvis(X, eta=gallery_eta, **common), axis=0).max() > 10.0


@pytest.mark.slow
def test_nerv_modern_step_does_not_overshoot_at_the_start():
    """asne, arsrsne, nerv and rsrnerv take eta 0.02 (jse and rsrjse keep 0.1): at the gallery's
    0.1 nerv's Gaussian springs overshoot once the start's uniform Q gives way, spreading 5,000
    points of blobs over ~100 units by iteration 20 (their level: ~20) and the fft grid with them;
    at 0.02 they are still under 1 unit there (measured 114 and 0.06 at iteration 18)."""
    from sklearn.datasets import make_blobs

    from smallvis.run.presets import RECIPES

    for method in ("asne", "arsrsne", "nerv", "rsrnerv"):
        assert RECIPES[method].step(70_000) == 0.02 and RECIPES[method].exaggeration == 1
    assert RECIPES["jse"].step(70_000) == RECIPES["rsrjse"].step(70_000) == 0.1
    X = make_blobs(5000, 50, centers=20, random_state=0)[0]
    common = dict(method="nerv", engine="fft", defaults="auto", max_iter=18, tol=0,
                  random_state=1, stop_lying_iter=250, mom_switch_iter=250)
    assert np.ptp(smallvis(X, **common), axis=0).max() < 1.0
    assert np.ptp(smallvis(X, eta=0.1, **common), axis=0).max() > 30.0
