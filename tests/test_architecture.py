"""The import architecture: the library never imports the command line, the method registry never
imports the engines, no import cycles (pyproject.toml's [tool.importlinter] contracts, checked
with import-linter)."""

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import smallvis

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
CLI_MODULES = {"__main__", "cli", "cli_compare", "cli_idp", "cli_options", "cli_report",
               "cli_sweep"}


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


def test_library_contract_names_every_library_module():
    """A new module is covered: the contract lists every top-level module but the command line's."""
    contract = _contracts()["library-not-cli"]
    listed = {m.removeprefix("smallvis.") for m in contract["source_modules"]}
    forbidden = {m.removeprefix("smallvis.") for m in contract["forbidden_modules"]}
    present = {m.name for m in pkgutil.iter_modules(smallvis.__path__)}
    assert forbidden == CLI_MODULES
    assert present - CLI_MODULES == listed, (
        f"add to pyproject.toml's library-not-cli source_modules: "
        f"{sorted(present - CLI_MODULES - listed)}; remove: {sorted(listed - present)}")


def test_loading_the_library_loads_neither_cli_nor_engines():
    """At run time too: the library modules leave the CLI unloaded, the registry the engines."""
    code = """if True:
        import sys
        import smallvis.methods
        assert not any(m.startswith("smallvis.engines") for m in sys.modules), "methods -> engines"
        import smallvis.compare_runner, smallvis.sweep_runner, smallvis.source, smallvis.catalog
        import smallvis.metrics, smallvis.api, smallvis.estimator, smallvis.report
        cli = sorted(m for m in sys.modules if m.startswith(("smallvis.cli", "smallvis.__main__")))
        assert not cli, cli
        from smallvis.catalog import list_methods
        assert smallvis.methods.list_methods is list_methods
        assert smallvis.list_methods is list_methods
        assert smallvis.methods.MethodInfo is smallvis.catalog.MethodInfo
        """
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
