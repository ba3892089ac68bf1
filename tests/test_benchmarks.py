"""Smoke test of the benchmark command (benchmarks/run.py): two of our engines on 300 digits."""

import json
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
TOOLS = ("smallvis-dense", "smallvis-exact")


def test_quick_run_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--datasets", "digits", "--tools", ",".join(TOOLS),
         "--out", str(out)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    number = r"\d+(\.\d+)?"
    for tool in TOOLS:
        # dataset | n | tool | wall | CPU | compile | peak | base | kNN@15 | trust@15 | note
        cells = rf"\| digits \| 300 \| {tool} \| " + r" \| ".join([number] * 7) + r" \|  \|"
        assert re.search(cells, proc.stdout), proc.stdout
    assert "Machine:" in proc.stdout and "numba" in proc.stdout

    result = json.loads(out.read_text())
    assert result["settings"]["quick"] is True
    rows = {r["tool"]: r for r in result["rows"]}
    assert set(rows) == set(TOOLS)
    for r in rows.values():
        assert r["status"] == "ok" and r["dataset"] == "digits" and r["n"] == 300
        assert r["iters"] == 750
        assert r["wall_s"] > 0 and r["compile_s"] > 0 and r["peak_mb"] >= r["base_mb"] > 0
        # 300 digits embed well: most neighbourhoods survive (random coordinates give ~0.05 / 0.5)
        assert 0.5 < r["knn15"] <= 1 and 0.9 < r["trust15"] <= 1
