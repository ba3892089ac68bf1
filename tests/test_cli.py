"""The command line through ``main([...])``, plus one real run of the installed console script."""

import json
import logging
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from smallvis import __version__
from smallvis.cli.embed import _smallvis_kwargs
from smallvis.cli.main import build_parser, main
from smallvis.cli.options import parse_params, parse_value

FAST = ["--max-iter", "50", "--seed", "1"]


def read_png(path):
    from matplotlib.image import imread

    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    return image


def embed(*args):
    return main(["embed", *args])


def test_embed_iris_round_trip(tmp_path, capsys):
    out, png = tmp_path / "x.csv", tmp_path / "x.png"
    assert embed("iris", *FAST, "--out", str(out), "--plot", str(png), "--metrics") == 0
    stdout = capsys.readouterr().out
    assert "tsne: 150 points" in stdout and "50 iterations" in stdout and "x.png" in stdout
    assert "knn preservation@15" in stdout
    coords = pd.read_csv(out)
    assert list(coords.columns) == ["Y1", "Y2", "Species"]
    assert coords.shape == (150, 3) and coords["Species"].iloc[0] == "setosa"
    read_png(png)
    record = json.loads((tmp_path / "x.json").read_text())
    assert record["smallvis_version"] == __version__
    assert record["seed"] == 1 and record["parameters"]["random_state"] == 1
    assert record["parameters"]["max_iter"] == 50 and record["parameters"]["method"] == "tsne"
    assert record["input"]["name"] == "iris" and record["input"]["n"] == 150
    result = record["result"]
    assert result["iter"] == 50 and result["method_name"] == "tsne"
    assert list(result["itercosts"]) == ["5", "10", "15", "20", "25", "30", "35", "40", "45", "50"]
    assert result["final_cost"] == pytest.approx(result["itercosts"]["50"])
    # the command line's modern defaults (--defaults auto), recorded with what they chose
    assert result["opt"]["eta"] == 50 and result["opt"]["reset_gains"] is True
    assert record["parameters"]["defaults"] == "auto" and result["defaults"] == "auto"
    assert result["settings"]["Y_init"] == record["parameters"]["Y_init"] == "pcascaled"
    assert result["exaggeration_factor"] == 12 and result["stop_lying_iter"] == 17
    assert 0 < record["metrics"]["knn_preservation"] <= 1
    assert 0 < record["metrics"]["trustworthiness"] <= 1
    assert record["outputs"]["plot"] == str(png)


def test_out_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "x.csv"
    assert embed("iris", *FAST, "--out", str(out)) == 0
    before = out.read_bytes(), (tmp_path / "x.json").read_bytes()
    capsys.readouterr()
    assert embed("iris", "--max-iter", "50", "--seed", "2", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("smallvis: error:") and "--force" in err
    assert (out.read_bytes(), (tmp_path / "x.json").read_bytes()) == before
    # (another seed alone would give the same picture: the default PCA start draws nothing)
    assert embed("iris", "--max-iter", "40", "--seed", "2", "--out", str(out), "--force") == 0
    assert out.read_bytes() != before[0]
    assert json.loads((tmp_path / "x.json").read_text())["seed"] == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


def test_out_refuses_when_only_the_sidecar_exists(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert embed("iris", *FAST, "--out", str(tmp_path / "x.npy")) == 2
    assert "x.json already exists" in capsys.readouterr().err
    assert not (tmp_path / "x.npy").exists()


def test_npy_output_and_seed_reproducibility(tmp_path):
    assert embed("iris", *FAST, "--out", str(tmp_path / "a.npy")) == 0
    assert embed("iris", *FAST, "--out", str(tmp_path / "b.npy"), "--quiet") == 0
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    assert a.shape == (150, 2)
    np.testing.assert_array_equal(a, b)


def test_plot_may_overwrite(tmp_path):
    png = tmp_path / "p.png"
    png.write_bytes(b"old")
    assert embed("iris", *FAST, "--plot", str(png)) == 0
    read_png(png)


def test_csv_with_header_text_column_and_labels(tmp_path, capsys):
    from smallvis.datasets import load_dataset

    ds = load_dataset("iris")
    frame = pd.DataFrame(ds.X, columns=list(ds.columns))
    frame["species"] = ds.labels
    frame.to_csv(tmp_path / "iris.csv", index=False)
    assert embed(str(tmp_path / "iris.csv"), *FAST) == 0
    stdout = capsys.readouterr().out
    assert "'species' not used" in stdout and "--plot" in stdout  # the hint when nothing is saved
    out = tmp_path / "e.csv"
    assert embed(str(tmp_path / "iris.csv"), *FAST, "--labels", "species", "--out", str(out),
                 "--plot", str(tmp_path / "e.png")) == 0
    assert list(pd.read_csv(out).columns) == ["Y1", "Y2", "species"]
    record = json.loads((tmp_path / "e.json").read_text())
    assert record["input"]["columns"] == list(ds.columns)
    assert record["input"]["label_column"] == "species"
    # same data and seed as the built-in dataset: same coordinates
    assert embed("iris", *FAST, "--out", str(tmp_path / "d.csv")) == 0
    np.testing.assert_array_equal(pd.read_csv(out)[["Y1", "Y2"]], pd.read_csv(tmp_path / "d.csv")[["Y1", "Y2"]])


@pytest.mark.parametrize("name, sep, header", [("x.tsv", "\t", True), ("x.csv", ",", False),
                                                ("x.txt", " ", False)])
def test_tsv_and_headerless_inputs(tmp_path, name, sep, header):
    X = np.random.default_rng(0).normal(size=(40, 3))
    pd.DataFrame(X, columns=["a", "b", "c"]).to_csv(tmp_path / name, sep=sep, header=header, index=False)
    out = tmp_path / "o.csv"
    assert embed(str(tmp_path / name), *FAST, "--perplexity", "5", "--out", str(out)) == 0
    assert pd.read_csv(out).shape == (40, 2)
    columns = json.loads((tmp_path / "o.json").read_text())["input"]["columns"]
    assert columns == (["a", "b", "c"] if header else ["V1", "V2", "V3"])


def test_npy_input_with_label_index_and_matrix_init(tmp_path):
    rng = np.random.default_rng(0)
    M = np.column_stack([rng.normal(size=(30, 4)), np.repeat([0, 1, 2], 10)])
    np.save(tmp_path / "m.npy", M)
    np.save(tmp_path / "init.npy", rng.normal(size=(30, 2)) * 1e-4)
    assert embed(str(tmp_path / "m.npy"), *FAST, "--perplexity", "5", "--labels", "4",
                 "--init", str(tmp_path / "init.npy"), "--out", str(tmp_path / "o.csv"),
                 "--plot", str(tmp_path / "o.png")) == 0
    record = json.loads((tmp_path / "o.json").read_text())
    assert record["input"]["dims"] == 4
    assert record["parameters"]["Y_init"].startswith("matrix from")
    read_png(tmp_path / "o.png")


def test_three_dimensional_output(tmp_path):
    assert embed("iris", *FAST, "--k", "3", "--out", str(tmp_path / "o.csv"),
                 "--plot", str(tmp_path / "o.png")) == 0
    assert list(pd.read_csv(tmp_path / "o.csv").columns) == ["Y1", "Y2", "Y3", "Species"]


def bad_csv(tmp_path):
    (tmp_path / "nan.csv").write_text("a,b\n1,2\n3,NA\n5,6\n")
    (tmp_path / "text.csv").write_text("a,b\nx,y\nz,w\n")
    (tmp_path / "ok.csv").write_text("a,b,name\n1,2,x\n3,4,y\n5,6,z\n7,8,w\n")


@pytest.mark.parametrize("args, message", [
    (["iris", "--method", "tnse"], r"unknown method 'tnse'\. Did you mean 'tsne'\?"),
    (["iris", "--opt", "nosuchopt"], r"unknown optimizer 'nosuchopt'"),
    (["iris", "--init", "spectralx"], r"unknown initialization 'spectralx'"),
    (["iris", "--scale", "q"], r"unknown scale mode 'q'"),
    (["iris", "--engine", "warp"], r"engine 'warp'"),
    (["iris", "--perplexity", "200"], r"perplexity 200 is too large"),
    (["iris", "--param", "eps"], r"--param expects KEY=VALUE"),
    (["iris", "--param", "nosuch=1"], r"parameter.*'nosuch'.*tsne"),
    (["iris", "--opt-param", "=3"], r"--opt-param expects KEY=VALUE"),
    (["iris", "--eta", "fast"], r"eta .*'optsne'"),
    (["iris", "--labels", "x"], r"--labels is for files"),
    (["irsi"], r"no file named 'irsi', and unknown dataset 'irsi'\. Did you mean 'iris'\?"),
    (["missing.csv"], r"input file not found: missing\.csv"),
    (["{tmp}/nan.csv"], r"missing value at data row 2 \(line 3\), column 'b'"),
    (["{tmp}/text.csv"], r"no numeric columns found"),
    (["{tmp}/ok.csv", "--labels", "colour"], r"label column 'colour' not found.*a, b, name"),
    (["iris", "--out", "{tmp}/x.json"], r"--out must name a \.csv or \.npy file"),
    (["iris", "--out", "{tmp}/nodir/x.csv"], r"does not exist"),
    (["iris", "--plot", "{tmp}/x.xyz"], r"cannot write a plot to .*x\.xyz"),
    (["iris", "--init", "{tmp}/missing.npy"], r"--init file not found"),
    (["iris", "--exaggeration", "4", "--stop-lying-iter", "0"], r"stop_lying_iter"),
    (["iris", "--max-iter", "ten"], r"argument --max-iter: expected a whole number >= 0, got 'ten'"),
    (["iris", "--max-iter", "-1"], r"argument --max-iter: expected a whole number >= 0, got '-1'"),
    (["iris", "--seed", "-1"], r"argument --seed: expected a whole number >= 0, got '-1'"),
    (["iris", "--exaggeration", "nan"], r"argument --exaggeration: expected a positive number, "
                                        r"got 'nan'"),
    (["iris", "--exaggeration", "0"], r"argument --exaggeration: expected a positive number"),
    (["iris", "--late-exaggeration", "-2"], r"argument --late-exaggeration: expected a positive"),
    (["iris", "--init-sdev", "0"], r"argument --init-sdev: expected a positive number"),
    (["iris", "--k", "0"], r"k \(output dimensions\) must be a whole number >= 1; got 0"),
    (["iris", "--bogus"], r"unrecognized arguments: --bogus"),
    (["iris", "--verbose", "--quiet"], r"not allowed with argument"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    bad_csv(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert embed(*args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("smallvis: error: ")
    assert captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    import re

    assert re.search(message, captured.err), captured.err


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "smallvis: error:" in capsys.readouterr().err


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"smallvis {__version__}"


def test_help(capsys):
    assert main(["embed", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--method", "--param", "--perplexity", "--k", "--init", "--init-sdev", "--scale",
                 "--pca", "--whiten", "--max-iter", "--eta", "--opt", "--opt-param",
                 "--exaggeration", "--stop-lying-iter", "--late-exaggeration",
                 "--start-late-lying-iter", "--engine", "--seed", "--labels", "--plot", "--out",
                 "--force", "--metrics", "--verbose", "--quiet"):
        assert flag in out


def test_methods_listing(capsys):
    from smallvis.methods import list_methods

    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NAME")
    for info in list_methods():
        assert info.name in out
    assert "perplexity=" in out


def test_methods_detail(capsys):
    assert main(["methods", "TSNE"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tsne") and "perplexity" in out and "--param" in out
    assert main(["methods", "tnse"]) == 2
    assert "Did you mean 'tsne'" in capsys.readouterr().err


def test_datasets_listing(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "iris" in out and "150 x 4" in out and "s1k" in out and "1000 x 9" in out


def kwargs_for(*args, defaults="auto"):
    """The smallvis() arguments of ``smallvis embed iris ARGS`` but ``defaults`` (checked here)."""
    kw = _smallvis_kwargs(build_parser().parse_args(["embed", "iris", *args]))
    assert kw.pop("defaults") == defaults
    return kw


def test_argument_mapping():
    assert kwargs_for() == {}
    assert kwargs_for("--defaults", "smallvis", defaults="smallvis") == {}
    assert kwargs_for("--method", "tsne") == {"method": "tsne"}  # bare name: top-level eps rule
    assert kwargs_for("--param", "eps=1e-9") == {"method": ("tsne", {"eps": 1e-9})}
    assert kwargs_for("--opt", "dbd") == {"opt": "dbd"}
    assert kwargs_for("--opt-param", "min_gain=0.1") == {"opt": ("dbd", {"min_gain": 0.1})}
    assert kwargs_for("--pca", "3") == {"pca": True, "initial_dims": 3}
    assert kwargs_for("--pca", "3", "--whiten") == {"pca": "whiten", "initial_dims": 3}
    assert kwargs_for("--eta", "optsne", "--perplexity", "12.5") == {"eta": "optsne", "perplexity": 12.5}
    assert kwargs_for("--exaggeration", "4", "--stop-lying-iter", "50", "--late-exaggeration", "2",
                      "--start-late-lying-iter", "900", "--init-sdev", "1", "--init", "spca",
                      "--k", "3", "--scale", "none", "--engine", "dense", "--max-iter", "7") == {
        "exaggeration_factor": 4.0, "stop_lying_iter": 50, "late_exaggeration_factor": 2.0,
        "start_late_lying_iter": 900, "Y_init_sdev": 1.0, "Y_init": "spca", "k": 3,
        "scale": "none", "engine": "dense", "max_iter": 7}


def test_parse_value_and_params():
    assert parse_value("3") == 3 and isinstance(parse_value("3"), int)
    assert parse_value("1e-9") == 1e-9
    assert parse_value("TRUE") is True and parse_value("false") is False
    assert parse_value("none") is None
    assert parse_value("[5, 30]") == [5, 30]
    assert parse_value("knn") == "knn"
    assert parse_params(["a=1", "b = x", "c=1.5"], "--param") == {"a": 1, "b": "x", "c": 1.5}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_params(["1a=3"], "--param")


def test_library_warnings_become_one_line(monkeypatch, capsys):
    import smallvis.api

    original = smallvis.api.smallvis

    def noisy(*args, **kwargs):
        warnings.warn("perplexity calibration failed for 3 points", RuntimeWarning)
        logging.getLogger("smallvis").warning("something odd\nwith two lines? no: %s", "one")
        return original(*args, **kwargs)

    monkeypatch.setattr(smallvis.api, "smallvis", noisy)
    assert embed("iris", *FAST) == 0
    err = capsys.readouterr().err
    assert "smallvis: warning: perplexity calibration failed for 3 points\n" in err
    assert "smallvis: warning: something odd" in err
    assert "Traceback" not in err
    assert not logging.getLogger("smallvis").handlers or all(
        isinstance(h, logging.NullHandler) for h in logging.getLogger("smallvis").handlers)


def test_verbose_logs_and_quiet_is_silent(capsys):
    assert embed("iris", *FAST, "--verbose") == 0
    assert "points" in capsys.readouterr().err
    assert embed("iris", *FAST, "--quiet") == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_console_script_runs(tmp_path):
    exe = shutil.which("smallvis")
    command = [exe] if exe else [sys.executable, "-m", "smallvis.cli"]
    png = tmp_path / "iris.png"
    proc = subprocess.run([*command, "embed", "iris", "--max-iter", "20", "--plot", str(png)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert png.exists() and "20 iterations" in proc.stdout
    read_png(png)


def test_embed_with_the_sgd_engine_and_its_options(tmp_path, capsys):
    out = tmp_path / "u.csv"
    assert embed("iris", "--method", "umap", "--engine", "sgd", "--engine-param",
                 "negative_sample_rate=3", "--perplexity", "15", "--max-iter", "20", "--seed", "2",
                 "--out", str(out)) == 0
    stdout = capsys.readouterr().out
    assert "umap: 150 points" in stdout and "20 epochs (sgd)" in stdout
    record = json.loads((tmp_path / "u.json").read_text())
    assert record["result"]["opt"]["name"] == "sgd"
    assert record["result"]["opt"]["negative_sample_rate"] == 3
    assert pd.read_csv(out).shape == (150, 3)


def test_sgd_engine_errors_are_one_line(capsys):
    assert embed("iris", "--method", "tsne", "--engine", "sgd", "--max-iter", "5") == 2
    err = capsys.readouterr().err
    assert "no stochastic version" in err and "umap" in err and "Traceback" not in err
    assert embed("iris", "--method", "umap", "--engine", "sgd", "--engine-param", "bogus=1") == 2
    assert "unknown option(s) 'bogus' for engine 'sgd'" in capsys.readouterr().err


def test_plot_title_marks_the_sampled_cost():
    from smallvis import smallvis
    from smallvis.cli.embed import plot_title
    from smallvis.datasets import load_dataset

    X = load_dataset("iris").X
    res = smallvis(X, method="umap", engine="sgd", perplexity=15, max_iter=5, random_state=0,
                   ret_extra=True)
    assert plot_title(res).startswith("umap (sgd), perplexity 15 — final cost ~")
    exact = smallvis(X, method="tsne", max_iter=5, random_state=0, ret_extra=True)
    assert "~" not in plot_title(exact) and "(sgd)" not in plot_title(exact)
