"""The import architecture: each part of the package imports only the parts below it (so the
library never imports the command line and the method registry never imports the engines), no
import cycles (pyproject.toml's [tool.importlinter] contracts, checked
with import-linter)."""

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import smallvis

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def _env():
    """The subprocess sees the smallvis this test imported (this checkout's src/)."""
    src = str(Path(smallvis.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([src, env["PYTHONPATH"]]) if env.get("PYTHONPATH") else src
    return env


def _contracts() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomli on 3.10")
    with open(PYPROJECT, "rb") as fh:
        config = tomllib.load(fh)
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def test_import_contracts_hold():
    pytest.importorskip("importlinter", reason="import-linter is not installed (pip install "
                                               "'smallvis[test]' or pip install import-linter)")
    # importlinter.cli has no __main__ block: call its click command (what `lint-imports` runs)
    code = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "--config", str(PYPROJECT), "--no-cache"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "0 broken" in proc.stdout


def test_layers_name_every_part():
    """A new top-level module or subpackage is placed in the layers (or the contract fails to say
    where it belongs), and the top of the package stays small enough to read at a glance."""
    layers = _contracts()["layers"]["layers"]
    named = {part.strip() for layer in layers for part in layer.split("|")}
    present = {m.name for m in pkgutil.iter_modules(smallvis.__path__)}
    assert present == named, (f"add to pyproject.toml's layers: {sorted(present - named)}; "
                              f"remove: {sorted(named - present)}")
    assert len(present - {"__main__", "_version"}) <= 12, sorted(present)


def test_no_module_is_long():
    """No module over ~500 lines: a longer one is two subjects."""
    src = Path(smallvis.__file__).resolve().parent
    long = {str(p.relative_to(src)): n for p in src.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 520}
    assert not long, long


def test_loading_the_library_loads_neither_cli_nor_engines():
    """At run time too: the library modules leave the CLI unloaded, the registry the engines."""
    code = """if True:
        import sys
        import smallvis.methods
        assert not any(m.startswith("smallvis.engines") for m in sys.modules), "methods -> engines"
        import smallvis.experiments.compare, smallvis.experiments.sweep, smallvis.io.source
        import smallvis.metrics, smallvis.plot, smallvis.api.estimator, smallvis.experiments.report
        import smallvis.engines.catalog
        cli = sorted(m for m in sys.modules if m.startswith(("smallvis.cli", "smallvis.__main__")))
        assert not cli, cli
        from smallvis.engines.catalog import list_methods
        assert smallvis.methods.list_methods is list_methods
        assert smallvis.list_methods is list_methods
        assert smallvis.methods.MethodInfo is smallvis.engines.catalog.MethodInfo
        """
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _private_imports_across_parts(src: Path) -> list:
    """``from X import _name`` in the package under ``src`` where X lies in another part (the first
    component under smallvis; the root's own modules are each a part) than the importing module:
    ``"path:line: from X import _name"`` for each. Dunders (``__version__``) are not private, and
    ``from smallvis import _util`` imports a part itself, not a private name of one."""
    parts = {m.name for m in pkgutil.iter_modules([str(src)])}
    found = []
    for path in sorted(src.rglob("*.py")):
        module = ["smallvis", *path.relative_to(src).with_suffix("").parts]
        package = module[:-1]  # what a relative import starts from
        if module[-1] == "__init__":
            module = module[:-1]
        part = module[1] if len(module) > 1 else ""
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            if target[0] != "smallvis":
                continue
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                    continue
                if len(target) == 1 and name in parts:
                    continue  # the part itself
                if (target[1] if len(target) > 1 else "") != part:
                    found.append(f"{path.relative_to(src)}:{node.lineno}: "
                                 f"from {'.'.join(target)} import {name}")
    return found


def test_no_private_name_crosses_parts():
    """A part uses another part only through its public names: a private helper that a second part
    needs gets a public name (and a home in the lower of the two parts)."""
    src = Path(smallvis.__file__).resolve().parent
    found = _private_imports_across_parts(src)
    assert not found, "\n".join(found)


def test_the_private_import_check_sees_them(tmp_path):
    """The check above resolves relative imports and tells parts apart (else it would pass vacuously)."""
    pkg = tmp_path / "smallvis"
    for folder, text in {"a": "from ..b.m import _hidden, shown\nfrom .m import _own\n",
                         "b": "from .._util.x import _shared\nfrom .. import _util, __version__\n",
                         "_util": ""}.items():
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
        (pkg / folder / "m.py").write_text(text)
    (pkg / "__init__.py").write_text("from .a.m import _root\n")
    assert _private_imports_across_parts(pkg) == [
        "__init__.py:1: from smallvis.a.m import _root",
        "a/m.py:1: from smallvis.b.m import _hidden",
        "b/m.py:1: from smallvis._util.x import _shared"]


def test_public_import_paths_keep_working():
    """The layered packages keep the paths users import from."""
    from smallvis import SmallVis, compare, list_methods, smallvis, sweep  # noqa: F401
    from smallvis.api import DivergenceError, SmallVis as Estimator, smallvis as function
    from smallvis.cli import main  # noqa: F401  (the console script's entry point)
    from smallvis.datasets import list_datasets, load_dataset  # noqa: F401
    from smallvis.io import load_source, read_table  # noqa: F401
    from smallvis.metrics import (compute_metrics, knn_preservation,  # noqa: F401
                                  random_triplet_accuracy, trustworthiness)
    from smallvis.plot import plot_costs, plot_embedding, plot_grid  # noqa: F401

    assert function is smallvis and Estimator is SmallVis
    assert smallvis.__module__ == "smallvis.api.embed"
    assert issubclass(DivergenceError, RuntimeError)
