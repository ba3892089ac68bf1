"""benchmarks/zoo_scale.py's shared layout (``--common-layout``) and its bad input."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "zoo_scale.py"


def _zoo():
    spec = importlib.util.spec_from_file_location("zoo_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_common_layout_spans_its_extent_with_one_cluster_per_class():
    labels = np.repeat(np.arange(5), 40)
    Y = _zoo().common_layout(labels, 100.0)
    assert Y.shape == (200, 2) and Y.flags.c_contiguous
    assert np.max(Y.max(axis=0) - Y.min(axis=0)) == pytest.approx(100.0)
    centres = np.array([Y[labels == c].mean(axis=0) for c in range(5)])
    spread = max(np.linalg.norm(Y[labels == c] - centres[c], axis=1).max() for c in range(5))
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1)[np.triu_indices(5, 1)]
    assert spread < gaps.min() / 2  # the classes are apart: every gradient sees the same grid
    np.testing.assert_array_equal(Y, _zoo().common_layout(labels, 100.0))  # the same every run


@pytest.mark.parametrize("extent", ["-1", "nan", "inf"])
def test_a_bad_common_layout_extent_is_refused(extent, capsys):
    with pytest.raises(SystemExit):
        _zoo().main(["--common-layout", extent, "--sizes", "100"])
    assert "--common-layout must be a finite extent >= 0" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["tasne", "usne", "mmds"])
def test_a_graph_run_is_given_the_start_a_user_with_the_data_gets(method):
    # pcascaled at sd 1e-4 (tasne), pcascaled at sd 1 (usne), spca (mmds): as smallvis() starts
    from smallvis import smallvis

    zoo = _zoo()
    X, _ = zoo.load("blobs", 200)
    start = zoo.user_start(X, method, "exact")
    res = smallvis(X, method=method, engine="exact", defaults="auto", max_iter=0, random_state=1,
                   ret_extra=True)
    assert start.shape == (200, 2)
    np.testing.assert_allclose(start, res.Y, rtol=0, atol=1e-12 * np.abs(res.Y).max())


def test_a_start_from_the_graph_is_left_to_the_graph_run():
    assert _zoo().user_start(np.random.default_rng(0).normal(size=(50, 5)), "umap", "sgd") is None


def test_a_short_run_is_given_the_whole_runs_schedule():
    from smallvis.run.presets import EXAGGERATION_ITER, MOMENTUM_SWITCH

    zoo = _zoo()
    assert zoo.run_schedule("fft") == {"stop_lying_iter": EXAGGERATION_ITER,
                                       "mom_switch_iter": MOMENTUM_SWITCH}
    assert zoo.run_schedule("sgd") == {}


def test_a_run_on_the_cached_graph_starts_from_the_datas_pca(tmp_path, monkeypatch):
    import smallvis

    zoo = _zoo()
    path = zoo.neighbours("blobs", 300, str(tmp_path))
    seen = {}
    original = smallvis.smallvis

    def spy(X, **kwargs):
        seen.update(kwargs)
        return original(X, **kwargs)

    monkeypatch.setattr(smallvis, "smallvis", spy)
    row = zoo.child("blobs", 300, "tasne", "fft", 3, knn_file=path)
    assert row["status"] == "ok" and row["iterations"] == 3
    assert seen["metric"] == "precomputed" and seen["stop_lying_iter"] == 250
    X = zoo.load("blobs", 300)[0]
    np.testing.assert_array_equal(seen["Y_init"], zoo.user_start(X, "tasne", "fft"))


def _row(method, engine, per_iter, n=100, **extra):
    return {"data": "blobs", "n": n, "method": method, "engine": engine, "status": "ok",
            "per_iter_s": per_iter, "knn15": 0.5, "peak_mb": 100, "diverged": False, **extra}


def test_the_tables_give_each_method_its_time_and_ratio_to_tsne_per_engine():
    rows = [_row("tsne", "exact", 0.010), _row("tsne", "fft", 0.002, peak_mb=300),
            _row("ee", "exact", 0.030), _row("ee", "fft", 2.5, peak_mb=900),
            {"data": "blobs", "n": 100, "method": "mmds", "engine": "exact",
             "status": "refused: too large"},
            _row("tsne", "exact", 0.020, n=200)]
    text = _zoo().tables(rows)
    assert "**blobs, 100 points**" in text and "**blobs, 200 points**" in text
    first = text.split("**blobs, 200 points**")[0]
    lines = {ln.split(" | ")[0]: ln for ln in first.splitlines() if ln.startswith("| ")}
    assert lines["| method"] == "| method | exact | fft | peak MB (bh, fft, sgd) |"
    assert "10 ms · 1.00× · 0.500" in lines["| tsne"] and lines["| tsne"].endswith("| 300 |")
    assert "30 ms · 3.00×" in lines["| ee"] and "2.50 s · 1250.00×" in lines["| ee"]
    assert lines["| mmds"] == "| mmds | refused | · | · |"


def test_a_resumed_run_keeps_its_rows_and_runs_only_the_missing_cells(tmp_path, monkeypatch):
    import json
    import subprocess

    zoo = _zoo()
    out = tmp_path / "zoo.json"
    crashed = {**_row("tsne", "bh", 0.0, n=60), "status": "failed: ['KeyError']"}
    no_graph = {**_row("tsne", "fft", 0.0, n=60), "status": "refused: ... needs input coordinates"}
    out.write_text(json.dumps([_row("tsne", "exact", 0.01, n=60), crashed, no_graph]))
    ran = []

    class Done:
        stdout = zoo.MARK + json.dumps({"status": "ok", "per_iter_s": 0.02, "knn15": 0.4,
                                        "peak_mb": 1, "diverged": False, "setup_s": 0.0})
        stderr = ""

    def fake_run(cmd, **kwargs):
        ran.append(json.loads(cmd[-1]))
        return Done()

    monkeypatch.setattr(subprocess, "run", fake_run)
    zoo.main(["--sizes", "60", "--methods", "tsne", "--engines", "exact,dense,bh,fft", "--data",
              "blobs", "--iterations", "20", "--exact-iterations", "4", "--resume", "--out",
              str(out)])
    # exact was there; the crash and the graph refusal are run again
    assert sorted((s["engine"], s["iterations"]) for s in ran) == [("bh", 20), ("dense", 4),
                                                                    ("fft", 20)]
    rows = json.loads(out.read_text())
    assert sorted(r["engine"] for r in rows) == ["bh", "dense", "exact", "fft"]
    assert all(r["status"] == "ok" for r in rows)


def test_a_method_that_needs_every_input_distance_is_given_the_data(tmp_path):
    zoo = _zoo()
    path = zoo.neighbours("blobs", 200, str(tmp_path))
    row = zoo.child("blobs", 200, "mmds", "sgd", 2, knn_file=path)
    assert row["status"] == "ok" and row["input"] == "data"
    assert zoo.child("blobs", 200, "umap", "sgd", 2, knn_file=path)["input"] == "graph"
    assert zoo.child("blobs", 200, "gsne", "fft", 2, knn_file=path)["input"] == "data"


@pytest.mark.parametrize("option, value", [("--iterations", "0"), ("--exact-iterations", "-1")])
def test_a_run_of_no_iterations_is_refused(option, value, capsys):
    with pytest.raises(SystemExit):
        _zoo().main([option, value, "--sizes", "100"])
    assert "--iterations and --exact-iterations must be at least 1" in capsys.readouterr().err


def test_an_unreadable_results_file_is_named(tmp_path, capsys):
    bad = tmp_path / "zoo.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(SystemExit):
            _zoo().main(["--table", str(path)])
        assert f"cannot read results file {str(path)!r}" in capsys.readouterr().err


def test_a_paired_run_times_its_gradient_beside_tsnes_and_the_table_gives_that_ratio():
    zoo = _zoo()
    row = zoo.child("blobs", 200, "asne", "exact", 2, paired=True)
    beside = row["beside_tsne"]
    assert beside["eval_s"] > 0 and beside["tsne_eval_s"] > 0
    assert beside["ratio"] == pytest.approx(beside["eval_s"] / beside["tsne_eval_s"])
    assert "beside_tsne" not in zoo.child("blobs", 200, "tsne", "exact", 2, paired=True)
    beside = {"beside_tsne": {"eval_s": 3.0, "tsne_eval_s": 2.0, "ratio": 1.5}}
    rows = [_row("tsne", "exact", 0.010), {**_row("asne", "exact", 0.040), **beside},
            _row("tsne", "fft", 0.010), {**_row("asne", "fft", 0.040), **beside}]
    line = next(x for x in zoo.tables(rows).splitlines() if x.startswith("| asne"))
    # exact: the time per iteration over tsne's run (the target's ratio), then the gradients';
    # fft: the gradients' (steady where the machine's speed drifts between runs)
    assert line.startswith("| asne | 40 ms · 4.00× (g 1.50×) · 0.500 | 40 ms · 1.50× · 0.500 |")
