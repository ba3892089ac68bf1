"""The catalog above methods and engines: it asks every registered engine which methods it serves
(``serves(method)``, owned by the engine), ``list_methods()`` and ``smallvis methods`` report it,
README.md's method x engine table is generated from it, and a method registered at test time is
listed, gradient-checked and compared with the dense engine on every engine that claims it."""

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

from smallvis import SmallVis

from smallvis.affinity import AffinityRecipe
from smallvis.engines import ENGINES
from smallvis.engines.catalog import engine_names, list_methods, method_engines, served_by
from smallvis.methods import REGISTRY, MethodSpec, build_method
from smallvis.methods.base import EPS
from smallvis.methods.kernels import StudentT
from smallvis.methods.sne import KLEmbedding

from engine_checks import ENGINE_CHECKS, check_against_dense, check_fd_gradient, claimed, fd_cases

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("method_table", ROOT / "scripts" / "method_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the catalog asks the engines ---------------------------------------------------------------------

def test_the_catalog_is_what_every_engine_says():
    assert engine_names() == tuple(ENGINES)
    assert engine_names()[0] == "dense"
    for info in list_methods():
        method = build_method(info.name)
        assert info.engines == tuple(n for n, e in ENGINES.items() if e.serves(method)), info.name
        assert "dense" in info.engines  # the reference serves every method


def test_what_the_catalog_reports():
    engines = {info.name: info.engines for info in list_methods()}
    assert engines["tsne"] == ("dense", "exact", "bh", "fft")
    assert engines["ssne"] == ("dense", "exact", "bh", "fft")
    assert engines["umap"] == ("dense", "exact", "bh", "sgd")
    assert engines["ncvis"] == ("dense", "exact", "bh", "fft", "sgd")
    assert engines["wtsne"] == ("dense", "exact", "bh", "fft")
    assert engines["btsne"] == ("dense", "exact", "bh")  # per-point bandwidths: not on fft
    assert engines["absne"] == engines["abssne"] == ("dense", "exact", "bh", "fft")
    assert engines["dhssne"] == engines["nerv"] == engines["gsne"] == ("dense", "exact", "bh",
                                                                       "fft")
    assert engines["bnerv"] == ("dense", "exact", "bh")
    assert engines["jse"] == engines["sjse"] == engines["rsrjse"] == ("dense", "exact", "bh", "fft")
    assert set(served_by("sgd")) == {"largevis", "umap", "tumap", "ncvis", "ee", "tee", "mmds",
                                     "smmds", "sammon"}
    assert engines["mmds"] == ("dense", "exact", "sgd") and engines["gmmds"] == ("dense", "exact")
    # every cost whose all-pairs part is a sum of radial functions of the output distance
    # bh also the un-normalised pair costs and the per-point bandwidths (fft refuses them)
    assert set(served_by("bh")) == set(served_by("fft")) | {"umap", "tumap", "largevis"} | {
        "btsne", "bssne", "basne", "btasne", "bnerv"}
    assert set(served_by("fft")) == {
        "tsne", "ssne", "hssne", "bhssne", "wtsne", "wssne", "asne", "tasne", "trmsne", "tmsne",
        "trsrsne", "arsrsne", "tsneu", "pstsne", "tee", "rklsne", "jssne", "chsne", "hlsne",
        "skdtsne", "usne", "dhssne", "nerv", "snerv", "rsrnerv",
        "gsne", "absne", "abssne", "jse", "sjse", "rsrjse", "ntumap", "cetsne", "ncvis"}


def test_the_catalog_follows_an_engines_capability(monkeypatch):
    """Nothing is hard-coded: an engine that stops serving a method drops out of the listing."""
    bh = ENGINES["bh"]
    monkeypatch.setattr(bh, "serves", staticmethod(lambda method: method.name == "tsne"))
    assert method_engines(REGISTRY["hssne"]) == ("dense", "exact", "fft")
    assert method_engines(REGISTRY["tsne"]) == ("dense", "exact", "bh", "fft")


def test_every_engine_has_a_check_against_dense():
    """The reference needs none; every other engine is compared with it (engine_checks)."""
    assert set(ENGINE_CHECKS) == set(ENGINES) - {"dense"}


def test_the_command_line_lists_the_engines(capsys):
    from smallvis.cli import main

    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "engines: dense, exact, bh, fft" in out and "engines: dense, exact, sgd" in out
    assert main(["methods", "umap"]) == 0
    assert "engines: dense, exact, bh, sgd" in capsys.readouterr().out


# -- README.md's method x engine table ------------------------------------------------------------------

def test_readme_method_table_is_generated_from_the_catalog():
    script = _script()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert script.current_table(text) == script.render(), (
        f"README.md's method x engine table is not the catalog's: regenerate it with "
        f"`{script.COMMAND}`")


def test_docs_coverage_is_generated_from_the_catalog():
    script = _script()
    text = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert text == script.render_coverage(), (
        f"docs/coverage.md is not the catalog's: regenerate it with `{script.COMMAND}`")


@pytest.mark.parametrize("engine, name, reason", [
    ("every engine", None, None),
    ("fft", "btsne", "per-point bandwidths"),
    ("fft", "bnerv", "per-point bandwidths"),
    ("sgd", "tsne", "normalised"),
    ("sgd", "gmmds", "shortest paths"),
    ("bh", "mmds", "distance cost"),
])
def test_every_refusal_says_why(engine, name, reason):
    from smallvis.engines.catalog import refusal

    if name is None:  # what every engine serves has no reason
        for engine_name in engine_names():
            for method in served_by(engine_name):
                assert refusal(engine_name, method) is None
        return
    why = refusal(engine, name)
    assert reason in why
    with pytest.raises(ValueError) as err:  # the same reason in the engine's refusal
        SmallVis(name, engine=engine).fit(np.random.default_rng(0).normal(size=(40, 3)))
    assert why in str(err.value)


def test_the_table_script_replaces_only_its_block():
    script = _script()
    text = f"intro\n{script.START}\nold\n{script.END}\noutro\n"
    new = script.replace_table(text, "| a |")
    assert new == f"intro\n{script.START}\n| a |\n{script.END}\noutro\n"
    assert script.current_table(new) == "| a |"
    with pytest.raises(ValueError, match="method-table"):
        script.replace_table("no markers", "| a |")


# -- one source of defaults ----------------------------------------------------------------------------

def default_disagreements(spec: MethodSpec) -> dict:
    """Where the factory's own defaults disagree with ``spec.params``: ``{name: (factory's,
    spec's)}``. A parameter the factory takes through ``**params`` (``lambda``, a Python keyword) is
    checked by building the factory without it."""
    signature = inspect.signature(spec.factory)
    named = {k: p for k, p in signature.parameters.items()
             if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    found = {}
    for key, value in spec.params.items():
        if key in named:
            default = named[key].default
            if default is inspect.Parameter.empty or default != value:
                found[key] = (default, value)
    hidden = [k for k in spec.params if k not in named]
    if hidden:
        built = spec.factory(**{k: v for k, v in spec.params.items() if k in named})
        found.update({k: (built.params.get(k), spec.params[k]) for k in hidden
                      if built.params.get(k) != spec.params[k]})
    return found


@pytest.mark.parametrize("name", list(REGISTRY))
def test_factory_defaults_are_the_specs(name):
    """``MethodSpec.params`` is what ``list_methods()`` and the CLI report and what
    ``build_method`` passes; the factory's own defaults (used when it is called directly) say the
    same."""
    assert default_disagreements(REGISTRY[name]) == {}


# -- a method registered at test time ------------------------------------------------------------------

def _exp_tsne(perplexity=30.0, eps=EPS):
    """t-SNE on exponential-kernel input affinities, from the registry's pieces."""
    recipe = AffinityRecipe(kernel="exp", symmetrize="symmetric", row_normalize=True,
                            normalize=True)
    return KLEmbedding(recipe=recipe, kernel=StudentT(), perplexity=perplexity,
                       inp_kernel="exp", eps=eps)


NEW = MethodSpec("exptsne", "sne", "t-SNE with exponential input affinities (registered by a test)",
                 dict(perplexity=30.0, eps=EPS), _exp_tsne)


def test_a_registered_method_is_listed_checked_and_compared_on_every_engine(monkeypatch):
    monkeypatch.setitem(REGISTRY, NEW.name, NEW)
    # listed, with the engines that claim it (they say so themselves)
    (info,) = [m for m in list_methods() if m.name == NEW.name]
    assert info.engines == ("dense", "exact", "bh", "fft")
    assert info.params == NEW.params and info.family == "sne"
    # the parametrised tests' lists, computed from the registry at collection time, now hold it
    assert NEW.name in claimed("exact") and NEW.name in claimed("bh")
    assert NEW.name not in claimed("sgd")
    assert [p.values for p in fd_cases() if p.values[0] == NEW.name] == [(NEW.name, {})]
    assert default_disagreements(NEW) == {}
    # what those tests run on it: finite differences, then every claimed engine against dense
    check_fd_gradient(NEW.name, {})
    assert check_against_dense(NEW.name) == ["exact", "bh", "fft"]
    # and it runs end to end on each
    import numpy as np

    from smallvis import smallvis

    X = np.random.default_rng(0).normal(size=(40, 4))
    for engine in info.engines:
        Y = smallvis(X, method=NEW.name, perplexity=8, max_iter=20, engine=engine,
                     random_state=1)
        assert Y.shape == (40, 2) and np.isfinite(Y).all(), engine


# -- step sizes live in the method's spec ------------------------------------------------------------

def test_suggested_step_sizes_read_the_spec(monkeypatch):
    import dataclasses
    import math

    from smallvis.methods.base import StepRule
    from smallvis.methods.step_sizes import suggested_eta, suggested_params, suggested_settings

    monkeypatch.setitem(REGISTRY, NEW.name, NEW)
    assert NEW.step == StepRule()  # none given: the original's 500, whatever n
    assert suggested_settings(NEW.name, 3000) == {"eta": 500.0}
    assert suggested_params(NEW.name, 3000) == {}
    ruled = dataclasses.replace(NEW, step=StepRule(0.2, "distance", min_cost=-math.inf,
                                                   params=lambda n, given: {"perplexity": n / 10}))
    monkeypatch.setitem(REGISTRY, NEW.name, ruled)
    assert suggested_eta(NEW.name, 300) == pytest.approx(0.1)
    assert suggested_settings(NEW.name, 75) == {"eta": pytest.approx(0.4), "min_cost": -math.inf}
    assert suggested_params(NEW.name, 300) == {"perplexity": 30.0}
    assert StepRule(0.1, "matrix").eta_for(300) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="scaling must be one of matrix, distance, constant"):
        StepRule(0.1, "rows")
