"""Parameter sweeps: ``smallvis.sweep`` and ``smallvis sweep`` (grid files, resume, interrupts, process
pools, a Dask LocalCluster, bad input)."""

import json
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import smallvis
from smallvis import api
from smallvis.cli import main
from smallvis.experiments.sweep_grid import load_grid

pytest.importorskip("matplotlib")

GRID = {"method": ["tsne", "umap"], "params": {"perplexity": [10, 20], "max_iter": 60},
        "seeds": [1]}
COLUMNS = ["id", "method", "perplexity", "seed", "final_cost", "iter", "time_secs", "wall_secs",
           "knn_15", "trustworthiness_15", "status", "error"]


@pytest.fixture(scope="module")
def iris_data():
    from smallvis.datasets import load_dataset

    return load_dataset("iris")


def coords(out, table):
    return {run_id: np.load(out / "runs" / f"{run_id}.npy") for run_id in table["id"]}


def same_coords(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def reference(iris_data, tmp_path_factory):
    """GRID run once in this process: (folder, table, coordinates)."""
    out = tmp_path_factory.mktemp("sweep") / "ref"
    table = smallvis.sweep(iris_data.X, GRID, out, labels=iris_data.labels)
    return out, table, coords(out, table)


def write_grid(path, text):
    path.write_text(text)
    return path


def read_png(path):
    from matplotlib.image import imread

    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200
    assert image[..., :3].std() > 0
    return image


# ---------------------------------------------------------------------------------------------------
# end to end


def test_two_by_two_grid_end_to_end(reference):
    out, table, Ys = reference
    assert list(table.columns) == COLUMNS
    assert len(table) == 4 and (table["status"] == "ok").all()
    assert table["method"].tolist() == ["tsne", "tsne", "umap", "umap"]
    assert table["perplexity"].tolist() == [10, 20, 10, 20]
    assert (table["iter"] == 60).all() and (table["seed"] == 1).all()
    for col in ("final_cost", "time_secs", "knn_15", "trustworthiness_15"):
        assert np.isfinite(table[col]).all(), col
    assert table["knn_15"].between(0, 1).all()
    assert table["id"].iloc[0].startswith("tsne-perplexity=10-seed=1-")
    csv = pd.read_csv(out / "results.csv")
    assert list(csv.columns) == COLUMNS and len(csv) == 4
    np.testing.assert_allclose(csv["final_cost"], table["final_cost"])
    assert len(list((out / "runs").glob("*.npy"))) == 4
    assert len(list((out / "runs").glob("*.json"))) == 4
    for run_id, Y in Ys.items():
        assert Y.shape == (150, 2) and np.isfinite(Y).all()
        record = json.loads((out / "runs" / f"{run_id}.json").read_text())
        assert record["status"] == "ok" and record["settings"]["seed"] == 1
        assert record["settings"]["params"]["max_iter"] == 60
        assert record["final_cost"] == pytest.approx(record["itercosts"]["60"])
        assert record["metrics"]["k"] == 15 and record["input"]["n"] == 150
    read_png(out / "grid.png")
    assert json.loads((out / "grid.json").read_text())["params"]["perplexity"] == [10, 20]
    # the same seed gives the same coordinates as a plain smallvis() call
    Y = api.smallvis(smallvis_input(), method="tsne", perplexity=10, max_iter=60, random_state=1)
    assert np.array_equal(Y, Ys[table["id"].iloc[0]])


def smallvis_input():
    from smallvis.datasets import load_dataset

    return load_dataset("iris").X


def test_cli_end_to_end_with_a_yaml_grid(tmp_path, capsys, reference):
    grid = write_grid(tmp_path / "grid.yaml", """
methods: [tsne, umap]
params:
  perplexity: [10, 20]
  max_iter: 60
seeds: [1]
""")
    out = tmp_path / "sw"
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "4 runs (2 methods x 2 perplexity x 1 seed) on iris (150 x 4)" in stdout
    assert "0 finished already (skipped), 4 to run in this process" in stdout
    assert re.search(r"^\[4/4\] umap-perplexity=20-seed=1-\w{8}  cost ", stdout, re.M)
    assert "done: 4 ok, 0 failed, 0 skipped" in stdout
    table = pd.read_csv(out / "results.csv")
    assert table["id"].tolist() == reference[1]["id"].tolist()  # stable ids
    assert same_coords(coords(out, table), reference[2])
    read_png(out / "grid.png")
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_default_output_folder_and_seed_count(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    grid = write_grid(tmp_path / "g.json", json.dumps(
        {"method": "mmds", "params": {"max_iter": 30}, "seeds": 2}))
    assert main(["sweep", "iris", "--grid", str(grid), "--no-plot"]) == 0
    table = pd.read_csv(tmp_path / "sweep-iris" / "results.csv")
    assert table["seed"].tolist() == [0, 1] and not (tmp_path / "sweep-iris" / "grid.png").exists()


def test_method_params_are_swept_per_method(tmp_path):
    grid = {"method": ["tsne", "umap"], "params": {"max_iter": 30, "perplexity": 10},
            "method_params": {"umap": {"spread": [1, 2], "min_dist": 0.1}}}
    table = smallvis.sweep(smallvis_input(), grid, tmp_path / "o", plot=False)
    assert len(table) == 3 and table["spread"].isna().tolist() == [True, False, False]
    record = json.loads((tmp_path / "o" / "runs" / f"{table['id'].iloc[2]}.json").read_text())
    assert record["settings"]["method_params"] == {"min_dist": 0.1, "spread": 2}
    assert record["result"]["method"] == ["umap", {"min_dist": 0.1, "spread": 2}]


# ---------------------------------------------------------------------------------------------------
# resume, interrupts, failures


def test_resume_recomputes_only_the_deleted_run(reference, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(reference[0], out)
    gone = reference[1]["id"].iloc[1]
    (out / "runs" / f"{gone}.npy").unlink()
    (out / "runs" / f"{gone}.json").unlink()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    lines = []
    table = smallvis.sweep(smallvis_input(), GRID, out, report=lines.append)
    assert (table.attrs["skipped"], table.attrs["ran"], table.attrs["failed"]) == (3, 1, 0)
    assert "3 finished already (skipped), 1 to run" in lines[0]
    assert len(lines) == 2 and lines[1].startswith(f"[1/1] {gone}")
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir() if p.name in kept} == kept
    assert same_coords(coords(out, table), reference[2])
    pd.testing.assert_frame_equal(table.drop(columns=["time_secs", "wall_secs"]),
                                  reference[1].drop(columns=["time_secs", "wall_secs"]))
    # a coordinates file that went missing also means "not finished"
    (out / "runs" / f"{gone}.npy").unlink()
    assert smallvis.sweep(smallvis_input(), GRID, out, plot=False).attrs["ran"] == 1


def test_a_grown_grid_keeps_the_finished_runs(reference, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(reference[0], out)
    grown = {**GRID, "params": {"perplexity": [10, 20, 30], "max_iter": [60]}}
    table = smallvis.sweep(smallvis_input(), grown, out, plot=False)
    assert (table.attrs["skipped"], table.attrs["ran"]) == (4, 2)
    assert set(reference[1]["id"]) <= set(table["id"])  # saved under their first ids
    assert "max_iter" in table.columns


def test_an_interrupted_sweep_keeps_its_finished_runs(tmp_path, monkeypatch):
    import functools

    calls = []
    real = api.smallvis

    @functools.wraps(real)  # the grid's argument check reads the signature
    def third_is_interrupted(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "smallvis", third_is_interrupted)
    out = tmp_path / "o"
    with pytest.raises(KeyboardInterrupt):
        smallvis.sweep(smallvis_input(), GRID, out)
    table = pd.read_csv(out / "results.csv")
    assert table["status"].tolist() == ["ok", "ok", "pending", "pending"]
    assert np.isfinite(table["final_cost"][:2]).all()
    assert len(list((out / "runs").glob("*.npy"))) == 2
    assert not list((out / "runs").glob(".*.tmp"))  # no temporary file left behind
    monkeypatch.setattr(api, "smallvis", real)
    table = smallvis.sweep(smallvis_input(), GRID, out, plot=False)
    assert (table.attrs["skipped"], table.attrs["ran"]) == (2, 2)
    assert (table["status"] == "ok").all()


def test_cli_interrupt_exits_130(tmp_path, monkeypatch, capsys):
    import functools

    @functools.wraps(api.smallvis)
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "smallvis", interrupted)
    grid = write_grid(tmp_path / "g.json", json.dumps(GRID))
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(tmp_path / "o")]) == 130
    assert "smallvis: interrupted" in capsys.readouterr().err


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path, capsys):
    grid = write_grid(tmp_path / "g.yaml", "method: tsne\nparams: {perplexity: [10, 500], "
                                           "max_iter: 30}\n")
    out = tmp_path / "o"
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert re.search(r"\[2/2\] tsne-perplexity=500-seed=0-\w+  FAILED: ValueError: perplexity",
                     captured.out)
    assert "done: 1 ok, 1 failed" in captured.out
    assert re.search(r"^smallvis: run tsne-perplexity=500\S+ failed: ValueError", captured.err, re.M)
    table = pd.read_csv(out / "results.csv")
    assert table["status"].tolist() == ["ok", "error"] and "too large" in table["error"][1]
    read_png(out / "grid.png")  # the failed run has an empty panel
    assert len(list((out / "runs").glob("*.npy"))) == 1
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out)]) == 1  # retried
    assert "1 finished already (skipped), 1 to run" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------
# where runs execute


def test_processes_give_the_same_results(reference, tmp_path):
    table = smallvis.sweep(smallvis_input(), GRID, tmp_path / "o", n_jobs=2, plot=False)
    assert table["id"].tolist() == reference[1]["id"].tolist()
    assert same_coords(coords(tmp_path / "o", table), reference[2])
    np.testing.assert_array_equal(table["final_cost"], reference[1]["final_cost"])


def test_a_dask_cluster_gives_the_same_results(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        lines = []
        table = smallvis.sweep(smallvis_input(), GRID, tmp_path / "o",
                               scheduler=cluster.scheduler_address, report=lines.append)
        assert f"to run on Dask at {cluster.scheduler_address}" in lines[0]
        with distributed.Client(cluster) as client:  # a client object works too
            again = smallvis.sweep(smallvis_input(), GRID, tmp_path / "o2", scheduler=client,
                                   plot=False)
            assert client.status == "running"  # not closed by the sweep
    assert (table["status"] == "ok").all()
    assert table["id"].tolist() == reference[1]["id"].tolist()
    assert same_coords(coords(tmp_path / "o", table), reference[2])
    assert same_coords(coords(tmp_path / "o2", again), reference[2])
    np.testing.assert_array_equal(table["final_cost"], reference[1]["final_cost"])
    record = json.loads((tmp_path / "o" / "runs" / f"{table['id'][0]}.json").read_text())
    assert record["pid"] != __import__("os").getpid()  # it ran in the worker process


def test_an_unreachable_scheduler_fails_fast_and_writes_nothing(tmp_path, capsys):
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=r"no Dask scheduler answered at tcp://127\.0\.0\.1:1 "
                                              r"within 1 s"):
        smallvis.sweep(smallvis_input(), GRID, out, scheduler="tcp://127.0.0.1:1",
                       connect_timeout=1)
    assert time.perf_counter() - start < 8
    assert not out.exists()
    grid = write_grid(tmp_path / "g.json", json.dumps(GRID))
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out), "--scheduler",
                 "tcp://127.0.0.1:1", "--connect-timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("smallvis: error: no Dask scheduler answered") and err.count("\n") == 1
    assert not out.exists()


def test_importing_smallvis_does_not_import_dask_or_the_sweep():
    code = ("import sys, smallvis; f = smallvis.sweep; "
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    import importlib

    importlib.import_module("smallvis.experiments.sweep")  # importing the module does not shadow it
    assert callable(smallvis.sweep)


# ---------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("text, message", [
    ("method: tsne\nparms: {perplexity: 5}\n", r"parms: unknown key \(did you mean 'params'\?\)"),
    ("params: {perplxity: [5, 30]}\n",
     r"params\.perplxity: unknown smallvis\(\) argument \(did you mean 'perplexity'\?\)"),
    ("method: [tsne, tnse]\n", r"method\[1\]: unknown method 'tnse'\. Did you mean 'tsne'\?"),
    ("params: {perplexity: []}\n", r"params\.perplexity: empty list"),
    ("method: []\n", r"method: empty list"),
    ("seeds: [1, 2.5]\n", r"seeds\[1\]: seeds must be whole numbers >= 0; got 2\.5"),
    ("seeds: [1, 1]\n", r"seeds\[1\]: seed 1 is listed twice"),
    ("seeds: 0\n", r"seeds: a number of seeds must be at least 1"),
    ("seeds: one\n", r"seeds: expected a list of whole numbers"),
    ("params: {random_state: 1}\n", r"params\.random_state: not allowed.*'seeds'"),
    ("params: {method: umap}\n", r"params\.method: not allowed.*top-level 'method'"),
    ("params: [perplexity]\n", r"params: expected a mapping"),
    ("method_params: {umap: {sprad: [1, 2]}}\nmethod: umap\n",
     r"method_params\.umap\.sprad: unknown parameter of method 'umap' \(did you mean 'spread'\?\)"),
    ("method_params: {umap: {spread: 2}}\n", r"method_params\.umap: method 'umap' is not in"),
    ("method: tsne\nmethods: umap\n", r"methods: give either 'method' or 'methods'"),
    ("params: {perplexity: [5, 5]}\n", r"params\.perplexity: value 5 is listed twice"),
    ("params: {perplexity: [5, 30\n", r"invalid YAML: .* at line \d+, column \d+"),
    ("- tsne\n", r"expected a mapping with keys method, params, method_params, seeds; got list"),
    ("", r"the file is empty"),
])
def test_malformed_grid_files(tmp_path, capsys, text, message):
    path = write_grid(tmp_path / "grid.yaml", text)
    with pytest.raises(ValueError, match=f"grid file {re.escape(str(path))}: {message}"):
        load_grid(path)
    out = tmp_path / "o"
    assert main(["sweep", "iris", "--grid", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("smallvis: error: grid file ") and err.count("\n") == 1, err
    assert re.search(message, err) and not out.exists()


def test_grid_file_errors(tmp_path, capsys):
    bad_json = write_grid(tmp_path / "g.json", '{"method": "tsne",}')
    with pytest.raises(ValueError, match=r"g\.json: invalid JSON: .* line 1, column 19"):
        load_grid(bad_json)
    with pytest.raises(ValueError, match=r"use a \.yaml, \.yml or \.json file"):
        load_grid(write_grid(tmp_path / "g.txt", "method: tsne"))
    with pytest.raises(FileNotFoundError, match=r"grid file not found: .*nope\.yaml"):
        load_grid(tmp_path / "nope.yaml")
    with pytest.raises(ValueError, match=r"^grid: params\.eta: empty list"):
        load_grid({"params": {"eta": []}})
    assert main(["sweep", "iris", "--grid", str(tmp_path / "nope.yaml")]) == 2
    assert "grid file not found" in capsys.readouterr().err


def test_bad_options_exit_2(tmp_path, capsys):
    grid = write_grid(tmp_path / "g.json", json.dumps(GRID))
    cases = [(["--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], r"either --jobs or --scheduler"),
             (["--jobs", "0"], r"argument --jobs/-j: expected a positive whole number or -1"),
             (["--connect-timeout", "0"], r"expected a positive number of seconds"),
             (["--scheduler", "bogus://x"], r"Dask scheduler address 'bogus://x': unknown address")]
    for extra, message in cases:
        assert main(["sweep", "iris", "--grid", str(grid), "--out", str(tmp_path / "o"),
                     *extra]) == 2
        err = capsys.readouterr().err
        assert re.search(message, err) and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()
    assert main(["sweep", "irsi", "--grid", str(grid)]) == 2
    assert "Did you mean 'iris'?" in capsys.readouterr().err


def test_another_input_in_the_folder_is_refused_without_force(reference, tmp_path):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(reference[0], out)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in out.rglob("*"))
    X = smallvis_input()[::-1].copy()  # same shape, other order
    with pytest.raises(ValueError, match=r"holds results for another input \(data, 150 x 4, "
                                         r"other values; this one is 150 x 4\).*force"):
        smallvis.sweep(X, GRID, out)
    with pytest.raises(ValueError, match=r"another input \(data, 150 x 4; this one is 100 x 4\)"):
        smallvis.sweep(X[:100], GRID, out)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in out.rglob("*")) == before
    table = smallvis.sweep(X, GRID, out, force=True, plot=False)
    assert (table.attrs["skipped"], table.attrs["ran"]) == (0, 4)  # nothing mixed in
    record = json.loads((out / "runs" / f"{table['id'][0]}.json").read_text())
    assert record["input"]["sha256"] != json.loads(
        (reference[0] / "runs" / f"{table['id'][0]}.json").read_text())["input"]["sha256"]


def test_a_folder_with_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"is not empty and holds no sweep"):
        smallvis.sweep(smallvis_input(), GRID, tmp_path)
    table = smallvis.sweep(smallvis_input(), {"method": "tsne", "params": {"max_iter": 5}},
                           tmp_path, force=True, plot=False)
    assert len(table) == 1 and (tmp_path / "notes.txt").read_text() == "mine"


def test_a_diverged_run_is_kept_and_not_retried(tmp_path, capsys):
    grid = write_grid(tmp_path / "g.yaml", "method: mmds\nparams: {max_iter: 50, eta: [0.001, 5.0e+6]}\n")
    out = tmp_path / "o"
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert re.search(r"\[2/2\] mmds-eta=5e\+06-seed=0-\w+  cost -  \d\.\d\d s  DIVERGED", stdout)
    assert "done: 1 ok, 1 diverged, 0 failed" in stdout
    table = pd.read_csv(out / "results.csv")
    assert table["status"].tolist() == ["ok", "diverged"] and np.isnan(table["knn_15"][1])
    read_png(out / "grid.png")
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out)]) == 0
    assert "2 finished already (skipped), 0 to run" in capsys.readouterr().out


def test_a_run_whose_coordinates_explode_counts_as_diverged(tmp_path):
    # finite but useless: mmds with a step size far too large for 150 points
    with pytest.warns(RuntimeWarning, match="grew beyond"):
        table = smallvis.sweep("iris", {"method": "mmds", "params": {"max_iter": 50, "eta": 0.1}},
                               tmp_path / "o", plot=False)
    assert table["status"].tolist() == ["diverged"]
    assert "grew beyond 1e+12" in table["error"][0]
