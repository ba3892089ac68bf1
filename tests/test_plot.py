"""Scatter plots: every label kind and output dimension writes a readable image."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402

from smallvis.plot import (categorical_colours, check_plot_path, infer_label_kind,  # noqa: E402
                           marker_size, plot_embedding)

RNG = np.random.default_rng(0)
Y2 = RNG.normal(size=(200, 2))


def check_png(path):
    image = imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0  # something was drawn


@pytest.mark.parametrize("labels, kind", [
    (np.repeat(["a", "b", "c", "d"], 50), "class"),
    (np.repeat(np.arange(10), 20), "class"),
    (RNG.uniform(size=200), "continuous"),
    (None, "none"),
])
def test_label_kinds_write_png(tmp_path, labels, kind):
    assert infer_label_kind(labels) == kind
    path = tmp_path / f"{kind}.png"
    fig = plot_embedding(Y2, labels, title="t", path=path, label_name="lab")
    check_png(path)
    ax = fig.axes[0]
    assert ax.get_title() == "t"
    assert ax.get_xticks().size == 0 and ax.get_yticks().size == 0
    if kind == "class":
        legend = ax.get_legend()
        assert legend is not None and legend.get_title().get_text() == "lab"
        assert len(legend.get_texts()) == len(np.unique(labels))
    if kind == "continuous":
        assert len(fig.axes) == 2  # the colour bar


def test_one_dimensional_embedding(tmp_path):
    fig = plot_embedding(Y2[:, 0], np.repeat([0, 1], 100), title="k1", path=tmp_path / "k1.png")
    check_png(tmp_path / "k1.png")
    assert "1-D" in fig.axes[0].get_title()


def test_one_dimensional_embedding_one_row_per_class(tmp_path):
    labels = np.repeat(["a", "b", "c"], [50, 70, 80])
    fig = plot_embedding(Y2[:, 0], labels, title="k1", path=tmp_path / "k1.png")
    check_png(tmp_path / "k1.png")
    ax = fig.axes[0]
    assert ax.get_title() == "k1 (1-D, one row per class)"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    y = np.vstack([np.asarray(c.get_offsets()) for c in ax.collections])[:, 1]
    assert sorted(np.round(y).astype(int)) == sorted(-np.repeat([0, 1, 2], [50, 70, 80]))


@pytest.mark.parametrize("k", [3, 5])
def test_three_dimensional_embedding_as_three_panels(tmp_path, k):
    Yk = RNG.normal(size=(200, k))
    labels = np.repeat(["x", "y"], 100)
    fig = plot_embedding(Yk, labels, title="k3", path=tmp_path / "k3.png", label_name="lab")
    check_png(tmp_path / "k3.png")
    assert fig.get_suptitle() == ("k3" if k == 3 else f"k3 (dims 1-3 of {k})")
    axes = fig.axes
    assert len(axes) == 3
    for ax, (i, j) in zip(axes, [(0, 1), (0, 2), (1, 2)]):
        assert (ax.get_xlabel(), ax.get_ylabel()) == (f"dim {i + 1}", f"dim {j + 1}")
        drawn = np.vstack([np.asarray(c.get_offsets()) for c in ax.collections])
        assert sorted(map(tuple, drawn)) == sorted(map(tuple, Yk[:, [i, j]]))
    assert len(fig.legends) == 1 and fig.legends[0].get_title().get_text() == "lab"


def test_three_dimensional_embedding_in_a_given_axes_draws_dims_1_2(tmp_path):
    from matplotlib.figure import Figure

    Y3 = RNG.normal(size=(200, 3))
    ax = Figure().add_subplot()
    plot_embedding(Y3, title="k3", ax=ax)
    assert ax.get_title() == "k3 (dims 1-2 of 3)"
    offsets = ax.collections[0].get_offsets()
    assert sorted(map(tuple, np.asarray(offsets))) == sorted(map(tuple, Y3[:, :2]))


def test_other_formats_and_existing_axes(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert plot_embedding(Y2, np.repeat(["x", "y"], 100), ax=ax) is fig
    plot_embedding(Y2, path=tmp_path / "p.svg")
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")


def test_many_classes_and_forced_kind(tmp_path):
    labels = np.arange(200) % 40
    assert infer_label_kind(labels) == "continuous"
    fig = plot_embedding(Y2, labels, label_kind="class", path=tmp_path / "c.png")
    assert len(fig.axes[0].get_legend().get_texts()) == 40
    check_png(tmp_path / "c.png")


def test_colours_are_distinct():
    for m in (3, 10, 20, 25, 70):
        colours = categorical_colours(m)
        assert len(colours) == m
        assert len({tuple(np.round(c[:3], 4)) for c in colours}) == m


def test_infer_label_kind_rules():
    assert infer_label_kind(np.array([True, False] * 5)) == "class"
    assert infer_label_kind(np.array([0.5, 1.5, 2.5])) == "class"
    assert infer_label_kind(np.arange(100)) == "continuous"
    assert infer_label_kind(np.array(["a"] * 100, dtype=object)) == "class"
    with pytest.raises(ValueError, match="label_kind"):
        infer_label_kind(np.arange(3), "colour")


def test_an_id_column_does_not_colour_the_plot(caplog, tmp_path):
    """Text with one value per point (more than 20 points) names the points: no colours, a warning
    that says why; a few named points, or the same names repeated, are still classes."""
    ids = np.array([f"p{i}" for i in range(60)], dtype=object)
    with caplog.at_level("WARNING", logger="smallvis"):
        assert infer_label_kind(ids) == "none"
    assert "different value for each of the 60 points" in caplog.text
    assert infer_label_kind(ids[:20]) == "class"
    assert infer_label_kind(np.concatenate([ids[:30], ids[:30]])) == "class"
    assert infer_label_kind(ids, "class") == "class"  # asked for explicitly
    fig = plot_embedding(np.random.default_rng(0).normal(size=(60, 2)), ids,
                         path=tmp_path / "ids.png")
    assert fig.axes[0].get_legend() is None and (tmp_path / "ids.png").is_file()


def test_marker_size_shrinks_with_n():
    assert marker_size(10) > marker_size(1000) > marker_size(100000) > 0


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="one entry per point"):
        plot_embedding(Y2, labels=np.arange(3))
    with pytest.raises(ValueError, match=r"cannot write a plot to .*\.xyz"):
        check_plot_path(tmp_path / "p.xyz")
    with pytest.raises(ValueError, match="does not exist"):
        check_plot_path(tmp_path / "nodir" / "p.png")


@pytest.mark.parametrize("labels", [None, np.repeat(["a", "b", "c"], 10), np.linspace(0, 1, 30)])
def test_grid_of_panels(tmp_path, labels):
    from matplotlib.image import imread

    from smallvis.plot import plot_grid

    rng = np.random.default_rng(0)
    panels = [(f"m{i}", rng.normal(size=(30, 2))) for i in range(4)] + [("broken", None)]
    path = tmp_path / "grid.png"
    fig = plot_grid(panels, labels, path, ncols=3)
    assert imread(path).shape[0] > 100
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["m0", "m1", "m2", "m3", "broken"]
    if labels is not None and labels.dtype.kind == "U":
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b", "c"]


def test_grid_needs_panels():
    from smallvis.plot import plot_grid

    with pytest.raises(ValueError, match="at least one"):
        plot_grid([])
