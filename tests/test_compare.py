"""smallvis.experiments.compare.compare and 'smallvis compare': runs, files, table, and the errors raised
before anything runs."""

import json

import numpy as np
import pandas as pd
import pytest

from smallvis import SmallVis
from smallvis.api import smallvis
from smallvis.cli import main
from smallvis.experiments.compare import compare
from smallvis.datasets import load_dataset
from smallvis.metrics import knn_preservation
from smallvis.methods.step_sizes import suggested_eta, suggested_settings


@pytest.fixture(scope="module")
def iris():
    return load_dataset("iris")


def test_step_size_rule_scales_with_n():
    assert suggested_eta("tsne", 1000) == 500.0
    assert suggested_eta("umap", 3000) == 1.0  # conditional P: no scaling
    assert suggested_eta("mmds", 300) == pytest.approx(5e-3)  # stress grows with n
    assert suggested_eta("ssne", 300) == pytest.approx(0.2)  # normalised P: forces shrink with n
    assert suggested_settings("tee", 150)["min_cost"] == -np.inf


def test_each_method_runs_as_the_estimator_would(iris):
    """The default (defaults="auto"): each panel is what SmallVis(method) gives."""
    cmp = compare(iris.X, "tsne,umap,nerv", params={"umap": {"spread": 2}}, random_state=3,
                  max_iter=60)
    for method in ("tsne", ("umap", {"spread": 2}), "nerv"):
        ref = SmallVis(method, random_state=3, max_iter=60).fit(iris.X).result_
        name = method if isinstance(method, str) else method[0]
        np.testing.assert_array_equal(cmp.results[name].Y, ref.Y)
        assert cmp.results[name].settings == ref.settings and ref.defaults == "auto"
    assert cmp.results["umap"].engine == "sgd"


def test_api_runs_each_method_as_smallvis_would(iris, tmp_path):
    out = tmp_path / "cmp"
    cmp = compare(iris.X, "tsne,mmds", params={"mmds": {"eps": 1e-6}}, out_dir=out,
                  labels=iris.labels, random_state=3, max_iter=50, defaults="smallvis")
    assert list(cmp.table["method"]) == ["tsne", "mmds"]
    for name, settings in (("tsne", {"eta": 500.0}),
                           ("mmds", {"eta": 1e-2, "method": ("mmds", {"eps": 1e-6})})):
        ref = smallvis(iris.X, **{"method": name, "Y_init": "spca", "max_iter": 50,
                                  "random_state": 3, **settings})
        np.testing.assert_array_equal(cmp.results[name].Y, ref)
        row = cmp.table.set_index("method").loc[name]
        assert row["knn_15"] == pytest.approx(knn_preservation(iris.X, ref, 15))
        assert row["iterations"] == 50 and row["status"] == "ok"
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "grid.png", "metrics.csv",
                                                        "report.html"]
    table = pd.read_csv(out / "metrics.csv")
    assert {"method", "cost", "iterations", "seconds", "knn_15", "trustworthiness_15",
            "rnx_auc"} <= set(table.columns)
    np.testing.assert_allclose(table["cost"], cmp.table["cost"])
    record = json.loads((out / "compare.json").read_text())
    assert record["input"]["n"] == 150 and len(record["input"]["sha256"]) == 64
    assert record["runs"][1]["parameters"]["method"] == ["mmds", {"eps": 1e-6}]
    assert record["runs"][0]["metrics"]["knn_preservation"] == pytest.approx(
        cmp.table["knn_15"][0])


def test_cli_writes_files_and_prints_the_table(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["compare", "iris", "--methods", "tsne,umap,mmds", "--max-iter", "30",
                 "--seed", "1", "--param", "umap.spread=2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:3] == ["method", "status", "cost"]
    assert all(any(line.startswith(m) for line in text.splitlines()) for m in ("tsne", "umap", "mmds"))
    record = json.loads((out / "compare.json").read_text())
    assert record["seed"] == 1 and record["input"]["name"] == "iris"
    assert record["runs"][1]["parameters"]["method"] == ["umap", {"spread": 2}]
    assert (out / "grid.png").stat().st_size > 0
    # an existing folder is refused, then --force writes into it
    assert main(["compare", "iris", "--methods", "mmds", "--max-iter", "5", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["compare", "iris", "--methods", "mmds", "--max-iter", "5", "--out", str(out),
                 "--force", "--quiet"]) == 0
    assert list(pd.read_csv(out / "metrics.csv")["method"]) == ["mmds"]


@pytest.mark.parametrize("argv, message", [
    (["--methods", "tsne,umpa"], "Did you mean 'umap'?"),
    (["--methods", "tsne,tsne"], "more than once"),
    (["--methods", "tsne", "--param", "umap.spread=2"], "not among the methods"),
    (["--methods", "umap", "--param", "umap.sprad=2"], "Did you mean 'spread'?"),
    (["--methods", "umap", "--param", "spread=2"], "METHOD.KEY=VALUE"),
    (["--methods", "tsne", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
    (["--methods", "tsne", "--max-iter", "-1"], "argument --max-iter: expected a whole number"),
])
def test_bad_methods_and_params_fail_before_anything_runs(tmp_path, capsys, argv, message):
    out = tmp_path / "never"
    assert main(["compare", "iris", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("smallvis: error:") and message in err
    assert not out.exists()


def test_a_file_in_place_of_the_folder_is_refused(tmp_path):
    target = tmp_path / "f"
    target.write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        compare(np.random.default_rng(0).normal(size=(30, 3)), ["mmds"], out_dir=target,
                force=True, max_iter=5)


def test_a_progress_bar_per_method(iris, tmp_path, capsys, monkeypatch):
    """progress=True: one bar per method on stderr, labelled with its name; the CLI shows them on
    a terminal only (not in logs or pipes)."""
    compare(iris.X, "tsne,umap", out_dir=tmp_path / "api", random_state=0, max_iter=30,
            progress=True, plot=False)
    err = capsys.readouterr().err
    assert "tsne:" in err and "umap (sgd):" in err and "/30 [" in err
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert main(["compare", "iris", "--methods", "tsne,largevis", "--max-iter", "20",
                 "--out", str(tmp_path / "cli")]) == 0
    err = capsys.readouterr().err
    assert "tsne:" in err and "largevis (sgd):" in err
    assert main(["compare", "iris", "--methods", "tsne", "--max-iter", "20", "--quiet",
                 "--out", str(tmp_path / "quiet")]) == 0
    assert "tsne:" not in capsys.readouterr().err


def test_largevis_gets_a_repulsion_weight_that_suits_n(iris, tmp_path):
    """With its normalised P, LargeVis's default gamma = 1 lets repulsion win (a uniform disc);
    compare runs it with gamma = 1 / n unless the user sets gamma or turns normalisation off."""
    from smallvis.experiments.compare import run_settings

    def settings(params, shared):
        return run_settings("largevis", params, 150, shared, defaults="smallvis")

    assert settings(None, {})["method"] == ("largevis", {"gamma": 1 / 150})
    assert settings({"gamma": 7.0}, {})["method"] == ("largevis", {"gamma": 7.0})
    assert settings({"normalize": False}, {})["method"] == ("largevis", {"normalize": False})
    assert settings(None, {"engine": "sgd"})["method"] == "largevis"
    cmp = compare(iris.X, "largevis", out_dir=tmp_path / "lv", random_state=0, plot=False,
                  defaults="smallvis")
    default = smallvis(iris.X, method="largevis", Y_init="spca", eta=1.0, random_state=0)
    assert cmp.table["knn_15"][0] > knn_preservation(iris.X, default, 15) + 0.2


def test_all_means_every_registered_method():
    from smallvis.experiments.compare import check_methods
    from smallvis.methods import REGISTRY

    assert check_methods("all") == check_methods(" ALL ") == list(REGISTRY)
