"""``smallvis idp``: the intrinsic-dimensionality table, its CSV and plot; and ``plot_dimensionality``."""

import re

import numpy as np
import pandas as pd
import pytest

from smallvis.affinity.idp import intrinsic_dimensionality
from smallvis.cli import main

pytest.importorskip("matplotlib")

D_LINE = re.compile(r"^intrinsic dimensionality D = ([0-9.]+) at perplexity ([0-9.]+)$", re.M)


def read_png(path):
    from matplotlib.image import imread

    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0
    return image


def table_rows(stdout):
    """The perplexity rows of the printed table: {perplexity: [values...]}."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["perplexity", "mean"])
    rows = {}
    for line in lines[start + 1:]:
        if line.startswith("intrinsic dimensionality"):
            break
        cells = line.split()
        rows[float(cells[0])] = [float(c) for c in cells[1:]]
    return lines[start].split(), rows


def iris_csv(tmp_path):
    from sklearn.datasets import load_iris

    data = load_iris()
    frame = pd.DataFrame(data.data, columns=["sl", "sw", "pl", "pw"])
    frame["species"] = data.target_names[data.target]
    path = tmp_path / "iris.csv"
    frame.to_csv(path, index=False)
    return path


def test_iris_default_perplexities_and_plot(tmp_path, capsys):
    png = tmp_path / "dims.png"
    assert main(["idp", "iris", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    header, rows = table_rows(out)
    assert list(rows) == [4, 8, 16, 32, 64]
    assert header == ["perplexity", "mean", "setosa", "versicolor", "virginica"]  # dataset classes
    match = D_LINE.search(out)
    assert match is not None, out
    D, idp = float(match.group(1)), float(match.group(2))
    means = {u: values[0] for u, values in rows.items()}
    assert idp == max(means, key=means.get)
    assert D == pytest.approx(max(means.values()), abs=0.01)
    assert 1.5 < D < 4  # iris: 4 columns, mostly a 2-3 dimensional cloud
    assert "Species setosa: D = " in out
    read_png(png)
    assert main(["idp", "iris", "--plot", str(png), "--perplexities", "5,10"]) == 0  # may overwrite
    read_png(png)


def test_table_matches_the_library_on_scaled_input(capsys):
    from smallvis.datasets import load_dataset
    from smallvis.io.preprocess import scale_input

    assert main(["idp", "iris", "--perplexities", "4 8 16", "--scale", "range"]) == 0
    _, rows = table_rows(capsys.readouterr().out)
    ds = load_dataset("iris")
    res = intrinsic_dimensionality(scale_input(ds.X, "range"), [4, 8, 16])
    np.testing.assert_allclose([rows[u][0] for u in (4, 8, 16)], res.mean_dint, atol=6e-4)


def test_perplexities_restrict_the_rows(capsys):
    assert main(["idp", "iris", "--perplexities", "4,8"]) == 0
    out = capsys.readouterr().out
    assert list(table_rows(out)[1]) == [4, 8]
    assert D_LINE.search(out).group(2) in ("4", "8")


def test_pca_option(capsys):
    assert main(["idp", "digits", "--pca", "5", "--perplexities", "10,20"]) == 0
    out = capsys.readouterr().out
    assert "PCA to 5 dims" in out
    assert float(D_LINE.search(out).group(1)) < 5.5  # cannot exceed much the 5 kept dimensions


def test_csv_labels_give_class_columns_and_out(tmp_path, capsys):
    path, out = iris_csv(tmp_path), tmp_path / "dims.csv"
    assert main(["idp", str(path), "--labels", "species", "--perplexities", "4,8,16",
                 "--out", str(out), "--plot", str(tmp_path / "d.png")]) == 0
    stdout = capsys.readouterr().out
    header, rows = table_rows(stdout)
    assert header == ["perplexity", "mean", "setosa", "versicolor", "virginica"]
    assert all(len(values) == 4 for values in rows.values())
    assert "species virginica: D = " in stdout
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["perplexity", "mean_dint", "mean_dint[setosa]",
                                   "mean_dint[versicolor]", "mean_dint[virginica]"]
    assert frame["perplexity"].tolist() == [4, 8, 16]
    np.testing.assert_allclose(frame["mean_dint"], [rows[u][0] for u in (4, 8, 16)], atol=6e-4)
    read_png(tmp_path / "d.png")
    # without --labels the text column is not used (and a note says so)
    assert main(["idp", str(path), "--perplexities", "4,8"]) == 0
    stdout = capsys.readouterr().out
    assert table_rows(stdout)[0] == ["perplexity", "mean"]
    assert "--labels species" in stdout


def test_out_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["idp", "iris", "--perplexities", "4,8", "--out", str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main(["idp", "iris", "--perplexities", "4,8,16", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("smallvis: error:") and "--force" in err
    assert out.read_bytes() == before
    assert main(["idp", "iris", "--perplexities", "4,8,16", "--out", str(out), "--force"]) == 0
    assert pd.read_csv(out)["perplexity"].tolist() == [4, 8, 16]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


@pytest.mark.parametrize("args, message", [
    (["irsi"], r"no file named 'irsi', and unknown dataset 'irsi'"),
    (["iris", "--perplexities", "4,eight"], r"argument --perplexities: expected numbers.*'4,eight'"),
    (["iris", "--perplexities", ","], r"argument --perplexities: expected numbers"),
    (["iris", "--perplexities", "8,4"], r"strictly increasing; got \[8\.0, 4\.0\]"),
    (["iris", "--perplexities", "4,4"], r"strictly increasing"),
    (["iris", "--perplexities=-4,8"], r"must be positive"),
    (["iris", "--perplexities", "4,150"], r"candidate perplexity 150 is too large for 150 points"),
    (["missing.csv"], r"input file not found: missing\.csv"),
    (["{tmp}/bad.csv"], r"no numeric columns found"),
    (["{tmp}/bin.csv"], r"binary file"),
    (["{tmp}/iris.csv", "--labels", "colour"], r"label column 'colour' not found"),
    (["iris", "--labels", "x"], r"--labels is for files"),
    (["iris", "--scale", "q"], r"unknown scale mode 'q'"),
    (["iris", "--pca", "0"], r"--pca must be at least 1"),
    (["iris", "--out", "{tmp}/t.npy"], r"--out must name a \.csv file"),
    (["iris", "--out", "{tmp}/nodir/t.csv"], r"does not exist"),
    (["iris", "--plot", "{tmp}/p.xyz"], r"cannot write a plot to .*p\.xyz"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    iris_csv(tmp_path)
    (tmp_path / "bad.csv").write_text("a,b\nx,y\nz,w\n")
    (tmp_path / "bin.csv").write_bytes(b"a,b\n\x00\x01\x02\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["idp", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("smallvis: error: ")
    assert captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    assert re.search(message, captured.err), captured.err
    assert captured.out == ""


def test_help_lists_idp(capsys):
    assert main(["--help"]) == 0
    assert "idp" in capsys.readouterr().out
    assert main(["idp", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--perplexities" in out and "--labels" in out


# --- plot_dimensionality ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iris_dims():
    from sklearn.datasets import load_iris

    data = load_iris()
    return intrinsic_dimensionality(data.data, labels=data.target_names[data.target])


def test_plot_dimensionality_with_classes(tmp_path, iris_dims):
    from matplotlib.figure import Figure

    from smallvis.plot import plot_dimensionality

    path = tmp_path / "d.png"
    fig = plot_dimensionality(iris_dims, path, title="iris")
    assert isinstance(fig, Figure)
    read_png(path)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_title() == "iris"
    np.testing.assert_array_equal(ax.get_xticks(), iris_dims.perplexities)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16", "32", "64"]
    curves = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in curves] == ["setosa", "versicolor", "virginica",
                                                     "all points"]
    mean = curves[-1]
    np.testing.assert_allclose(mean.get_ydata(), iris_dims.mean_dint)
    assert mean.get_linewidth() > curves[0].get_linewidth()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [line.get_label() for line in curves]
    notes = [t.get_text() for t in ax.texts]
    assert notes == [f"D = {iris_dims.D:.3g} at perplexity 4"]
    # the IDP marker, and each class's IDP on its curve
    markers = [line for line in ax.get_lines() if line.get_label().startswith("_")]
    points = {(float(m.get_xdata()[0]), round(float(m.get_ydata()[0]), 9)) for m in markers}
    assert (iris_dims.idp, round(iris_dims.D, 9)) in points
    for c, curve in zip(iris_dims.classes, iris_dims.class_mean_dint):
        j = list(iris_dims.perplexities).index(iris_dims.class_idp[c])
        assert (iris_dims.class_idp[c], round(float(curve[j]), 9)) in points


def test_plot_dimensionality_without_classes_and_into_axes(tmp_path):
    from matplotlib.figure import Figure

    from smallvis.plot import plot_dimensionality

    X = np.random.default_rng(0).normal(size=(200, 3))
    res = intrinsic_dimensionality(X, [3, 6.5, 12, 24])
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_dimensionality(res, ax=ax) is fig
    assert ax.get_xscale() == "log" and ax.get_legend() is None
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", "6.5", "12", "24"]
    assert "D = " in ax.texts[0].get_text()
    plot_dimensionality(res, tmp_path / "d.svg")
    assert (tmp_path / "d.svg").read_text().lstrip().startswith("<?xml")
    one = intrinsic_dimensionality(X, [10])
    plot_dimensionality(one, tmp_path / "one.png")  # a single candidate still plots
    read_png(tmp_path / "one.png")


def test_continuous_label_column_gives_no_class_curves(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    frame["t"] = rng.uniform(size=60)
    frame.to_csv(tmp_path / "c.csv", index=False)
    assert main(["idp", str(tmp_path / "c.csv"), "--labels", "t", "--perplexities", "4,8"]) == 0
    captured = capsys.readouterr()
    assert "labels 't' look continuous" in captured.err
    assert table_rows(captured.out)[0] == ["perplexity", "mean"]
