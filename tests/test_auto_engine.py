"""engine="auto": the choice by number of points, method and output dimension, and its log line."""

import logging

import pytest

from smallvis.engines import ENGINES, resolve_engine
from smallvis.engines.auto import AUTO_APPROX_N, AUTO_EXACT_N, choose_engine
from smallvis.engines.catalog import served_by
from smallvis.engines.sgd import AUTO_SGD_N
from smallvis.methods import REGISTRY, build_method

ALL = ENGINES


def info_engines(name):
    return [engine for engine in ENGINES if name in served_by(engine)]


def only(*names):
    return {name: ENGINES[name] for name in names}


@pytest.mark.parametrize("method, n, k, expected", [
    ("tsne", 150, 2, "dense"),
    ("tsne", AUTO_EXACT_N, 2, "exact"),
    ("hssne", AUTO_APPROX_N, 2, "exact"),
    ("tsne", AUTO_APPROX_N + 1, 2, "fft"),
    ("tsne", AUTO_APPROX_N + 1, 1, "fft"),
    (("hssne", {"alpha": 0.5}), AUTO_APPROX_N + 1, 2, "fft"),
    ("tsne", AUTO_APPROX_N + 1, 3, "bh"),
    (("tsne", {"inp_kernel": "knn"}), AUTO_APPROX_N + 1, 3, "bh"),
    ("btsne", AUTO_APPROX_N + 1, 2, "bh"),  # per-point output bandwidths: Barnes-Hut only
    ("umap", AUTO_SGD_N + 1, 2, "sgd"),
    ("largevis", AUTO_SGD_N + 1, 2, "sgd"),
    (("rklsne", {"symmetrize": "none"}), 5000, 2, "dense"),  # no fused kernels: the dense engine
    ("gsne", 5000, 2, "exact"),
    ("dhssne", AUTO_APPROX_N + 1, 2, "fft"),
    ("snerv", AUTO_APPROX_N + 1, 2, "fft"),
    ("gsne", AUTO_APPROX_N + 1, 2, "fft"),
    ("bnerv", AUTO_APPROX_N + 1, 2, "bh"),  # per-point output bandwidths: Barnes-Hut only
    ("mmds", 100, 2, "dense"),
    ("umap", 2000, 2, "exact"),
    ("sammon", 2000, 2, "exact"),
])
def test_the_choice(method, n, k, expected):
    name, reason = choose_engine(build_method(method), n, k, ALL)
    assert name == expected, reason
    assert reason


def test_only_registered_engines_are_chosen():
    name, _ = choose_engine(build_method("tsne"), AUTO_APPROX_N + 1, 2, only("dense", "exact", "sgd"))
    assert name == "exact"
    name, _ = choose_engine(build_method("tsne"), AUTO_APPROX_N + 1, 2, only("dense", "exact", "bh"))
    assert name == "bh"  # fft preferred in 2-D, Barnes-Hut where fft is not there


@pytest.mark.parametrize("n", [500, AUTO_EXACT_N, AUTO_APPROX_N + 1, 50_000])
def test_every_method_goes_to_an_engine_that_serves_it(n):
    """The choice follows the catalog: a large run goes to an approximate or stochastic engine that
    claims the method (sgd: the peers' methods, ``StochasticPlan.auto``), an exact-size run to the fused kernels where they are native, never to an
    engine that does not serve the method (dense runs every method)."""
    for name in REGISTRY:
        method = build_method(name)
        chosen, reason = choose_engine(method, n, 2, ALL)
        assert chosen == "dense" or name in served_by(chosen), (name, chosen, reason)
        if n > max(AUTO_APPROX_N, AUTO_SGD_N) and chosen in ("dense", "exact"):
            plan = method.stochastic_plan()
            routed = {"bh", "fft"} | ({"sgd"} if plan is not None and plan.auto else set())
            assert not routed & set(info_engines(name)), (name, chosen)


class _Claims:
    """An engine that serves one named method (for the rule's own test)."""

    def __init__(self, name):
        self.method = name

    def serves(self, method):
        return method.name == self.method


def test_a_method_that_gains_an_engine_is_routed_to_it():
    engines = {**ENGINES, "fft": _Claims("ssne"), "bh": _Claims("nobody")}
    name, reason = choose_engine(build_method("ssne"), AUTO_APPROX_N + 1, 2, engines)
    assert name == "fft" and "approximate" in reason
    engines = {**engines, "bh": _Claims("btsne"), "fft": _Claims("nobody")}
    assert choose_engine(build_method("btsne"), AUTO_APPROX_N + 1, 2, engines)[0] == "bh"


def test_the_choice_is_logged(caplog):
    with caplog.at_level(logging.INFO, logger="smallvis"):
        eng = resolve_engine("auto", build_method("tsne"), 2000, 2)
    assert eng.name == "exact"
    assert "engine='auto': using the exact engine" in caplog.text


def test_auto_takes_no_options():
    with pytest.raises(ValueError, match="'auto' takes no options"):
        resolve_engine(("auto", {"theta": 0.5}), build_method("tsne"), 100)


def test_memory_decides_when_the_dense_matrices_do_not_fit(monkeypatch):
    from smallvis.engines import auto

    monkeypatch.setattr(auto, "available_memory", lambda: 8 * 500**2 * 3)
    knn_tsne = build_method(("tsne", {"inp_kernel": "knn"}), perplexity=10)
    unfused = build_method(("rklsne", {"symmetrize": "none"}))
    assert choose_engine(unfused, 500, 2, ALL)[0] == "dense"  # the guard will refuse
    assert choose_engine(build_method("tsne"), 500, 2, ALL)[0] == "exact"  # P's 1.4 arrays fit
    mmds_engine, why = choose_engine(build_method("mmds"), 500, 2, ALL)  # R's 2.2 fit
    assert mmds_engine == "exact" and "2.2" in why
    # sammon's R and its weights (3.6 arrays at its peak) do not: sampled pairs instead of an
    # out-of-memory kill halfway through
    assert choose_engine(build_method("sammon"), 500, 2, ALL)[0] == "sgd"
    assert choose_engine(build_method("ee"), 500, 2, ALL)[0] == "sgd"
    assert choose_engine(knn_tsne, 500, 2, ALL)[0] == "exact"  # sparse P fits
    monkeypatch.setattr(auto, "available_memory", lambda: 8 * 2000**2 // 2)
    assert choose_engine(knn_tsne, 2000, 2, ALL)[0] == "exact"
    name, reason = choose_engine(build_method("tsne"), 2000, 2, ALL)
    assert name == "fft" and "sparse" in reason
