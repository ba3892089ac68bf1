"""A self-contained HTML report of a ``smallvis compare`` or ``smallvis sweep`` output folder.

>>> write_report("cmp-iris")          # -> cmp-iris/report.html

``report.html`` opens offline: the small multiples (``grid.png``) are embedded as a base64 data URI,
the table (``metrics.csv`` or ``results.csv``) sorts when a header is clicked (inline JavaScript,
numbers compared as numbers, missing values last), every run's parameters and resolved settings sit
in a collapsible block, and the head states the input (description and SHA-256 fingerprint), the
date and the smallvis version. Nothing outside the page is loaded.

Opened as ``report.html#selftest``, the page checks itself (errors raised, panels present, images
decoded, a click on a header sorts the table) and writes the outcome as JSON into
``<pre id="selftest">``; the test suite reads it from headless Chromium's DOM.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import warnings
from datetime import datetime, timezone
from pathlib import Path

from .._util.files import atomic_write
from .._version import __version__

REPORT = "report.html"
GENERATOR = "smallvis report"  # the <meta name="generator"> that marks a file as ours to replace
KINDS = {"compare.json": "compare", "sweep.json": "sweep"}
BULKY = ("itercosts", "costs", "Y")  # left out of the per-run blocks


def folder_kind(folder) -> str:
    """``"compare"`` or ``"sweep"``: what wrote ``folder`` (its ``compare.json`` or ``sweep.json``);
    ``ValueError`` otherwise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"report: {folder} is not a folder")
    for manifest, kind in KINDS.items():
        if (folder / manifest).is_file():
            return kind
    raise ValueError(f"report: {folder} holds neither compare.json (smallvis compare) nor "
                     "sweep.json (smallvis sweep)")


def write_report(folder, *, force: bool = False) -> Path:
    """Write ``folder/report.html`` (atomically) and return its path.

    An existing ``report.html`` is replaced when smallvis wrote it; another file of that name is
    refused (``ValueError``) unless ``force``. No other file is touched.
    """
    folder = Path(folder)
    page = build_report(folder)
    path = folder / REPORT
    if not force and path.exists() and not _is_ours(path):
        raise ValueError(f"report: {path} exists and was not written by smallvis; remove it or use "
                         "--force (force=True) to replace it")
    atomic_write(path, lambda fh: fh.write(page))
    return path


def report_after_run(folder) -> Path | None:
    """:func:`write_report` at the end of a compare or sweep run: a foreign ``report.html`` (or an
    unreadable folder) gives a warning instead of an error, so the finished run is never lost."""
    try:
        return write_report(folder)
    except (OSError, ValueError) as err:
        warnings.warn(f"no HTML report written: {err}", stacklevel=2)
        return None


def _is_ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(2048)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}' in head


# ---------------------------------------------------------------------------------------------------
# reading the folder


def build_report(folder) -> str:
    """The HTML page of ``folder`` (a compare or sweep output folder), as a string."""
    folder = Path(folder)
    kind = folder_kind(folder)
    data = _compare_data(folder) if kind == "compare" else _sweep_data(folder)
    return _page(kind, folder, data)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"report: cannot read {path}: {err}") from None


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    if not path.is_file():
        return [], []
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return (rows[0], rows[1:]) if rows else ([], [])


def _compare_data(folder: Path) -> dict:
    record = _read_json(folder / "compare.json")
    runs = []
    for run in record.get("runs", []):
        details = {"parameters": run.get("parameters"), "metrics": run.get("metrics"),
                   "resolved": _trim(run.get("result")), "error": run.get("error")}
        runs.append((run.get("method", "?"), run.get("status", "?"), details))
    columns, rows = _read_csv(folder / "metrics.csv")
    return {"input": record.get("input", {}), "created": record.get("created"),
            "version": record.get("smallvis_version"), "seed": record.get("seed"),
            "columns": columns, "rows": rows, "runs": runs, "table_file": "metrics.csv"}


def _sweep_data(folder: Path) -> dict:
    manifest = _read_json(folder / "sweep.json")
    columns, rows = _read_csv(folder / "results.csv")
    ids = [row[0] for row in rows] if columns[:1] == ["id"] else []
    runs, created = [], []
    for run_id in ids:
        path = folder / "runs" / f"{run_id}.json"
        if not path.is_file():
            runs.append((run_id, "pending", {}))
            continue
        record = _read_json(path)
        created.append(record.get("created") or "")
        details = {"settings": record.get("settings"), "swept": record.get("swept"),
                   "metrics": record.get("metrics"), "resolved": _trim(record.get("result")),
                   "error": record.get("error"), "host": record.get("host")}
        runs.append((run_id, record.get("status", "?"), details))
    grid = folder / "grid.json"
    return {"input": manifest.get("input", {}), "created": max(created, default=None),
            "version": manifest.get("smallvis_version"),
            "grid": _read_json(grid) if grid.is_file() else None,
            "columns": columns, "rows": rows, "runs": runs, "table_file": "results.csv"}


def _trim(result):
    return {k: v for k, v in result.items() if k not in BULKY} if isinstance(result, dict) else result


# ---------------------------------------------------------------------------------------------------
# writing the page


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _json_block(value) -> str:
    return f"<pre>{_e(json.dumps(value, indent=1, sort_keys=False))}</pre>"


def _page(kind: str, folder: Path, data: dict) -> str:
    info = data["input"]
    name = info.get("name") or "data"
    title = f"smallvis {kind}: {name}"
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta name="generator" content="{GENERATOR} {_e(__version__)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>", f"<style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _summary(kind, folder, data, now),
        _images(folder),
        _table(data),
        _runs(data["runs"]),
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _summary(kind: str, folder: Path, data: dict, now: str) -> str:
    info = data["input"]
    items = [("Input", info.get("name") or "data")]
    if info.get("description"):
        items.append(("Description", info["description"]))
    items.append(("Size", f"{info.get('n', '?')} points x {info.get('dims', '?')} dimensions"))
    items.append(("SHA-256", info.get("sha256", "?")))
    extra = {k: v for k, v in info.items()
             if k not in ("name", "description", "n", "dims", "sha256", "command")}
    items += [(k.replace("_", " ").capitalize(), v) for k, v in extra.items()]
    if info.get("command"):
        items.append(("Command", " ".join(map(str, info["command"]))))
    if data.get("seed") is not None:
        items.append(("Seed", data["seed"]))
    items.append(("Runs", f"{len(data['runs'])} ({kind} in {folder.name or folder})"))
    if data.get("created"):
        items.append(("Run date", data["created"]))
    items.append(("smallvis version", data.get("version") or "?"))
    items.append(("Report written", f"{now} by smallvis {__version__}"))
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in items)
    grid = ("" if data.get("grid") is None else
            f"<details><summary>Grid (grid.json)</summary>{_json_block(data['grid'])}</details>")
    return (f'<section id="summary" class="panel"><h2>Input and provenance</h2>'
            f'<table class="kv">{rows}</table>{grid}</section>')


def _images(folder: Path) -> str:
    path = folder / "grid.png"
    if not path.is_file():
        return ('<section id="images" class="panel"><h2>Embeddings</h2>'
                "<p>No grid.png in this folder (plotting was turned off).</p></section>")
    uri = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
    return ('<section id="images" class="panel"><h2>Embeddings</h2>'
            f'<img class="grid" src="{uri}" alt="small multiples: one panel per run"></section>')


def _table(data: dict) -> str:
    columns, rows = data["columns"], data["rows"]
    if not columns:
        return (f'<section id="metrics" class="panel"><h2>Metrics</h2><p>No '
                f'{_e(data["table_file"])} in this folder.</p></section>')
    head = "".join(f'<th scope="col" title="click to sort">{_e(c)}</th>' for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_cell(v))}</td>" for v in row) + "</tr>" for row in rows)
    return (f'<section id="metrics" class="panel"><h2>Metrics</h2>'
            f'<p class="note">From {_e(data["table_file"])}; click a column header to sort.</p>'
            f'<div class="scroll"><table id="metrics-table" class="sortable"><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div></section>")


def _cell(text: str) -> str:
    """Numbers shown to 4 significant figures (the sort uses the same shown value)."""
    try:
        number = float(text)
    except ValueError:
        return text
    if text.strip().lstrip("-").isdigit():
        return text
    return f"{number:.4g}"


def _runs(runs) -> str:
    blocks = []
    for label, status, details in runs:
        shown = {k: v for k, v in details.items() if v is not None}
        body = "".join(f"<h3>{_e(k)}</h3>{_json_block(v)}" for k, v in shown.items())
        blocks.append(f'<details class="run"><summary>{_e(label)} <span class="status '
                      f'{_e(status)}">{_e(status)}</span></summary>{body or "<p>No record.</p>"}'
                      "</details>")
    return ('<section id="runs" class="panel"><h2>Runs and their parameters</h2>'
            + "".join(blocks) + "</section>")


CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;
padding:1.5em;color:#1d2330;background:#f6f7f9}
h1{font-size:1.6em;margin:0 0 .6em}h2{font-size:1.2em;margin:0 0 .6em}h3{font-size:1em;margin:.8em 0 .3em}
.panel{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:1em 1.2em;margin:0 0 1.2em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
.kv th{text-align:left;padding:.2em 1em .2em 0;color:#556;font-weight:600;vertical-align:top}
.kv td{word-break:break-all}
.scroll{overflow-x:auto}
.sortable th,.sortable td{padding:.35em .7em;border-bottom:1px solid #e6e9ee;text-align:right;white-space:nowrap}
.sortable th{cursor:pointer;background:#eef1f5;position:sticky;top:0;user-select:none}
.sortable th:hover{background:#e0e6ee}
.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
.sortable th[aria-sort=descending]::after{content:" \\25BC"}
.sortable tbody tr:nth-child(even){background:#fafbfc}
img.grid{max-width:100%;height:auto;display:block;margin:auto}
details.run{border-top:1px solid #e6e9ee;padding:.4em 0}
summary{cursor:pointer;font-weight:600}
pre{background:#f3f5f8;border-radius:6px;padding:.6em .8em;overflow-x:auto;font-size:13px}
.status{font-size:.8em;font-weight:600;padding:.1em .5em;border-radius:1em;background:#e6e9ee}
.status.ok{background:#d8f0dd;color:#1b6b2c}.status.error{background:#f7d9d9;color:#8a1c1c}
.status.diverged{background:#fbecd0;color:#7a5200}
.note{color:#667;font-size:.9em;margin:.2em 0 .6em}
#selftest{display:none}
"""

SCRIPT = r"""
"use strict";
var errors = [];
window.addEventListener("error", function (e) { errors.push(String(e.message)); });
function cellValue(row, i) {
  var text = row.cells[i].textContent.trim();
  var num = Number(text);
  return {empty: text === "" || text.toLowerCase() === "nan", num: text !== "" && isFinite(num) ? num : null, text: text};
}
function compareCells(a, b) {
  if (a.empty || b.empty) { return a.empty === b.empty ? 0 : (a.empty ? 1 : -1); }
  if (a.num !== null && b.num !== null) { return a.num - b.num; }
  return a.text.localeCompare(b.text, undefined, {numeric: true});
}
function sortTable(table, i) {
  var th = table.tHead.rows[0].cells[i];
  var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows).map(function (r, k) { return [cellValue(r, i), k, r]; });
  rows.sort(function (x, y) {
    var empty = (x[0].empty ? 1 : 0) - (y[0].empty ? 1 : 0);  // missing values last either way
    return empty || dir * compareCells(x[0], y[0]) || x[1] - y[1];
  });
  rows.forEach(function (r) { body.appendChild(r[2]); });
}
Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener("click", function () { sortTable(table, i); });
  });
});
function selftest() {
  var out = {errors: errors, panels: {}, images: [], sorted: null};
  ["summary", "images", "metrics", "runs"].forEach(function (id) { out.panels[id] = !!document.getElementById(id); });
  Array.prototype.forEach.call(document.images, function (img) {
    out.images.push({complete: img.complete, width: img.naturalWidth, height: img.naturalHeight});
  });
  var table = document.getElementById("metrics-table");
  if (table) {
    var heads = table.tHead.rows[0].cells, cost = -1;
    Array.prototype.forEach.call(heads, function (th, i) {
      if (th.textContent === "cost" || th.textContent === "final_cost") { cost = i; }
    });
    var column = function () {
      return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[cost].textContent; });
    };
    if (cost >= 0) {
      heads[cost].click();
      var up = column();
      heads[cost].click();
      out.sorted = {column: heads[cost].textContent, ascending: up, descending: column()};
    }
  }
  out.runs = document.querySelectorAll("details.run").length;
  var pre = document.createElement("pre");
  pre.id = "selftest";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
if (location.hash === "#selftest") { window.addEventListener("load", selftest); }
"""
