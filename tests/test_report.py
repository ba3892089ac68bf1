"""smallvis.experiments.report and 'smallvis report': the self-contained HTML page of a compare or sweep folder,
loaded in headless Chromium (no script errors, every panel, images decoded, the table sorts)."""

import json
import os
import re
import shutil
import subprocess

import pandas as pd
import pytest

import smallvis
from smallvis.cli import main
from smallvis.experiments.compare import compare
from smallvis.datasets import load_dataset
from smallvis.experiments.report import REPORT, build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="chromium is not installed (CI installs it: .ci/run)")


@pytest.fixture(scope="module")
def iris():
    return load_dataset("iris")


@pytest.fixture(scope="module")
def compare_dir(iris, tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "cmp"
    compare(iris.X, "tsne,mmds", out_dir=out, labels=iris.labels, random_state=1, max_iter=20,
            input_info={"name": "iris", "description": "Fisher's iris <flowers>"})
    return out


@pytest.fixture(scope="module")
def sweep_dir(iris, tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "sw"
    grid = {"method": "tsne", "params": {"perplexity": [5, 30], "max_iter": 20}}
    smallvis.sweep(iris.X, grid, out, labels=iris.labels, name="iris")
    return out


def selftest(page, tmp_path) -> dict:
    """Load ``page#selftest`` in headless Chromium; the page's own check results, after asserting
    that nothing was logged to the console (an uncaught error is)."""
    assert CHROMIUM is not None, "chromium is missing on CI (see .ci/run)"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri() + "#selftest"],
        capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    found = re.search(r'<pre id="selftest">(.*?)</pre>', proc.stdout, re.S)
    assert found, "the self-test did not run (a script error?)\n" + proc.stdout[-2000:]
    result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert result["errors"] == []
    assert all(result["panels"].values()), result["panels"]
    assert result["images"] and all(i["complete"] and i["width"] > 0 and i["height"] > 0
                                    for i in result["images"])
    return result


def _offline(page: str) -> None:
    links = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert all(link.startswith("data:") for link in links), links
    assert "http://" not in page and "https://" not in page


@needs_chromium
def test_compare_writes_a_report_that_works_in_a_browser(compare_dir, tmp_path):
    page = (compare_dir / REPORT).read_text(encoding="utf-8")
    _offline(page)
    record = json.loads((compare_dir / "compare.json").read_text())
    assert record["input"]["sha256"] in page and f"smallvis {smallvis.__version__}" in page
    assert record["created"] in page
    assert "Fisher&#x27;s iris &lt;flowers&gt;" in page  # escaped
    assert page.count('<details class="run">') == 2
    assert "&quot;defaults&quot;: &quot;auto&quot;" in page  # each run's parameters
    result = selftest(compare_dir / REPORT, tmp_path)
    assert result["runs"] == 2
    costs = pd.read_csv(compare_dir / "metrics.csv")["cost"]
    shown = [float(v) for v in result["sorted"]["ascending"]]
    assert shown == pytest.approx(sorted(costs), rel=1e-3)
    assert result["sorted"]["descending"] == result["sorted"]["ascending"][::-1]


@needs_chromium
def test_sort_is_numeric_with_missing_values_last(compare_dir, tmp_path):
    folder = tmp_path / "cmp"
    shutil.copytree(compare_dir, folder)
    table = pd.read_csv(folder / "metrics.csv")
    table = pd.concat([table] * 3, ignore_index=True)
    table["cost"] = [10, 9, None, 100, 2.5e-3, -1]  # as text, "10" < "100" < "9"
    table.to_csv(folder / "metrics.csv", index=False)
    assert main(["report", str(folder), "-q"]) == 0
    result = selftest(folder / REPORT, tmp_path)
    assert result["sorted"]["ascending"] == ["-1", "0.0025", "9", "10", "100", ""]
    assert result["sorted"]["descending"] == ["100", "10", "9", "0.0025", "-1", ""]


@needs_chromium
def test_sweep_writes_a_report_that_works_in_a_browser(sweep_dir, tmp_path):
    page = (sweep_dir / REPORT).read_text(encoding="utf-8")
    _offline(page)
    table = pd.read_csv(sweep_dir / "results.csv")
    for run_id in table["id"]:
        assert f"<summary>{run_id} " in page
    assert "Grid (grid.json)" in page
    result = selftest(sweep_dir / REPORT, tmp_path)
    assert result["runs"] == 2 and result["sorted"]["column"] == "final_cost"
    shown = [float(v) for v in result["sorted"]["ascending"]]
    assert shown == pytest.approx(sorted(table["final_cost"]), rel=1e-3)


def test_cli_rewrites_the_report_but_not_a_users_file(compare_dir, tmp_path, capsys):
    folder = tmp_path / "cmp"
    shutil.copytree(compare_dir, folder)
    (folder / REPORT).unlink()
    assert main(["report", str(folder)]) == 0
    assert f"saved {folder / REPORT}" in capsys.readouterr().out
    assert main(["report", str(folder), "-q"]) == 0  # our own report is replaced
    (folder / REPORT).write_text("my notes")
    assert main(["report", str(folder)]) == 2
    assert "was not written by smallvis" in capsys.readouterr().err
    assert (folder / REPORT).read_text() == "my notes"
    assert main(["report", str(folder), "--force", "-q"]) == 0
    assert (folder / REPORT).read_text().startswith("<!DOCTYPE html>")
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temp file left
    assert main(["report", str(tmp_path / "nowhere")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "neither compare.json" in capsys.readouterr().err


def test_a_run_keeps_a_users_report_html_and_warns(iris, tmp_path):
    out = tmp_path / "c"
    out.mkdir()
    (out / REPORT).write_text("mine")
    with pytest.warns(UserWarning, match="no HTML report written"):
        compare(iris.X[:40], "mmds", out_dir=out, force=True, max_iter=5, plot=False)
    assert (out / REPORT).read_text() == "mine"


def test_a_folder_without_grid_png_still_gives_a_page(compare_dir, tmp_path):
    folder = tmp_path / "cmp"
    shutil.copytree(compare_dir, folder)
    (folder / "grid.png").unlink()
    page = build_report(folder)
    assert "No grid.png in this folder" in page and 'id="metrics-table"' in page
