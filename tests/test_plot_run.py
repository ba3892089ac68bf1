"""Run plots: cost curve, per-point cost colouring, animation, and their CLI flags."""

import numpy as np
import pytest
from PIL import Image

from smallvis import smallvis
from smallvis.cli import main
from smallvis.plot.run import animate, check_animation_path, frame_limits, plot_costs, plot_point_costs

pytest.importorskip("matplotlib")

RNG = np.random.default_rng(3)
X = np.vstack([RNG.normal(c, 0.3, size=(20, 4)) for c in (0.0, 3.0)])
LABELS = np.repeat(["a", "b"], 20)


@pytest.fixture(scope="module")
def run():
    snaps = []
    res = smallvis(X, perplexity=8, max_iter=40, epoch=10, random_state=1, ret_extra=True,
                   exaggeration_factor=4, stop_lying_iter=10, late_exaggeration_factor=2,
                   start_late_lying_iter=30,
                   epoch_callback=lambda Y, it, c: snaps.append((it, Y.copy(), c)))
    return res, snaps


def test_plot_costs_curve_and_phases(run, tmp_path):
    res, _ = run
    path = tmp_path / "costs.png"
    fig = plot_costs(res, path=path)
    ax = fig.axes[0]
    x, y = ax.lines[0].get_data()
    assert list(x) == sorted(res.itercosts) and np.allclose(y, [res.itercosts[i] for i in x])
    assert ax.get_yscale() == "log"
    texts = [t.get_text() for t in ax.texts]
    assert "early exaggeration ×4" in texts and "late exaggeration ×2" in texts
    spans = sorted(p.get_x() for p in ax.patches)
    assert spans == [0, 30]
    assert "tsne" in ax.get_title() and f"{res.cost:.4g}" in ax.get_title()
    assert Image.open(path).format == "PNG"


def test_plot_costs_without_exaggeration_and_empty():
    res = smallvis(X, perplexity=8, max_iter=20, epoch=5, random_state=1, ret_extra=True)
    ax = plot_costs(res).axes[0]
    assert not ax.patches and not ax.texts
    res.itercosts = {}
    with pytest.raises(ValueError, match="itercosts is empty"):
        plot_costs(res)


def test_point_cost_colouring(run, tmp_path):
    res, _ = run
    fig = plot_point_costs(res, path=tmp_path / "pc.png")
    ax, bar = fig.axes
    assert bar.get_ylabel() == "point cost"
    coll = ax.collections[0]
    order = np.random.default_rng(0).permutation(len(X))  # plot_embedding's drawing order
    assert np.allclose(coll.get_array(), res.costs[order])
    assert np.allclose(coll.get_offsets(), res.Y[order])
    assert Image.open(tmp_path / "pc.png").size[0] > 0


def test_animate_gif_frames(run, tmp_path):
    _, snaps = run
    path = animate(snaps, tmp_path / "run.gif", labels=LABELS, title="tsne")
    with Image.open(path) as im:
        assert im.format == "GIF" and im.n_frames == len(snaps) == 5


def test_animate_continuous_labels(run, tmp_path):
    _, snaps = run
    animate(snaps[:2], tmp_path / "c.gif", labels=np.linspace(0, 1, len(X)), label_name="t")
    with Image.open(tmp_path / "c.gif") as im:
        assert im.n_frames == 2


def test_animation_path_checks(tmp_path):
    with pytest.raises(ValueError, match="use a .gif or .mp4"):
        check_animation_path(tmp_path / "a.png")
    with pytest.raises(ValueError, match="does not exist"):
        check_animation_path(tmp_path / "missing" / "a.gif")
    (tmp_path / "a.gif").write_bytes(b"x")
    with pytest.raises(ValueError, match="already exists"):
        check_animation_path(tmp_path / "a.gif")
    assert check_animation_path(tmp_path / "a.gif", force=True).name == "a.gif"
    with pytest.raises(ValueError, match="k >= 2"):
        animate([(0, np.zeros((5, 1)), None)], tmp_path / "b.gif")


def test_frame_limits_follow_growth_smoothly():
    base = np.random.default_rng(0).normal(size=(30, 2))
    scales = [1.0, 4.0, 10.0, 2.0, 2.0, 2.0]
    centres, halves = frame_limits([base * s + 5.0 for s in scales])
    assert np.allclose(centres, base.mean(axis=0) * np.array(scales)[:, None] + 5.0)
    extent = np.abs(base - base.mean(axis=0)).max(axis=0)
    for s, h in zip(scales, halves):  # every point in view
        assert np.all(h >= s * extent * (1 - 1e-12))
    assert np.allclose(halves[:, 1] / halves[:, 0], halves[0, 1] / halves[0, 0])  # fixed box shape
    assert np.all(np.diff(halves[:3, 0]) > 0)
    assert np.allclose(halves[3:, 0] / halves[2:-1, 0], [0.85, 0.85, 0.85])  # gradual zoom in


def test_cli_animate_and_plot_costs(tmp_path, capsys):
    gif, costs = tmp_path / "a.gif", tmp_path / "c.png"
    args = ["embed", "iris", "--max-iter", "30", "--perplexity", "10", "--exaggeration", "4",
            "--seed", "1", "-q", "--animate", str(gif), "--animate-every", "10",
            "--plot-costs", str(costs)]
    assert main(args) == 0
    with Image.open(gif) as im:
        assert im.n_frames == 4  # iterations 0, 10, 20, 30
    assert Image.open(costs).format == "PNG"
    assert main(args) == 2  # the GIF exists now
    assert "already exists" in capsys.readouterr().err
    assert main(args + ["--force"]) == 0
    for bad, message in ([["--animate", str(tmp_path / "a.avi")], "use a .gif or .mp4"],
                         [["--animate-every", "5"], "needs --animate"],
                         [["--plot", str(costs), "--plot-costs", str(costs)], "different files"]):
        assert main(["embed", "iris", "--max-iter", "5", "-q", *bad]) == 2
        assert message in capsys.readouterr().err


def test_cli_plot_point_costs(tmp_path, capsys):
    from smallvis.plot import check_plot_path

    path = tmp_path / "worst.png"
    assert main(["embed", "iris", "--max-iter", "30", "--perplexity", "10", "--seed", "1", "-q",
                 "--plot-point-costs", str(path)]) == 0
    assert Image.open(path).format == "PNG"
    bad = tmp_path / "worst.txt"
    with pytest.raises(ValueError, match=r"cannot write a plot to .*worst\.txt: use one of"):
        check_plot_path(bad)
    assert main(["embed", "iris", "-q", "--plot-point-costs", str(bad)]) == 2
    assert "worst.txt: use one of" in capsys.readouterr().err and not bad.exists()


@pytest.mark.parametrize("option", ["--out", "--plot", "--plot-costs", "--plot-point-costs",
                                    "--animate"])
def test_every_output_folder_is_checked_before_the_run(tmp_path, capsys, monkeypatch, option):
    """A folder that is a file, or missing, fails at once, naming it: the run never starts."""
    import smallvis.api

    def never(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(smallvis.api, "smallvis", never)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    name = "x.gif" if option == "--animate" else "x.csv" if option == "--out" else "x.png"
    for folder, why in ((a_file, "is a file, not a folder"), (tmp_path / "missing", "does not exist")):
        assert main(["embed", "iris", "-q", option, str(folder / name)]) == 2
        err = capsys.readouterr().err
        assert f"{folder}" in err and why in err, err
    assert a_file.read_text() == "mine"
