"""engine="auto": the choice by number of points, method and output dimension, and its log line."""

import logging

import pytest

from smallvis.engines import resolve_engine
from smallvis.engines.auto import AUTO_APPROX_N, AUTO_EXACT_N, choose_engine
from smallvis.engines.sgd import AUTO_SGD_N
from smallvis.methods import build_method

ALL = ("dense", "exact", "sgd", "bh", "fft")


@pytest.mark.parametrize("method, n, k, expected", [
    ("tsne", 150, 2, "dense"),
    ("tsne", AUTO_EXACT_N, 2, "exact"),
    ("hssne", AUTO_APPROX_N, 2, "exact"),
    ("tsne", AUTO_APPROX_N + 1, 2, "fft"),
    ("tsne", AUTO_APPROX_N + 1, 1, "fft"),
    (("hssne", {"alpha": 0.5}), AUTO_APPROX_N + 1, 2, "fft"),
    ("tsne", AUTO_APPROX_N + 1, 3, "bh"),
    ("ssne", AUTO_APPROX_N + 1, 2, "exact"),  # Gaussian output: no approximate version
    ("umap", AUTO_SGD_N + 1, 2, "sgd"),
    ("largevis", AUTO_SGD_N + 1, 2, "sgd"),
    (("rklsne", {"symmetrize": "none"}), 5000, 2, "dense"),  # no fused kernels: the dense engine
    ("gsne", 5000, 2, "exact"),
    ("mmds", 100, 2, "dense"),
    ("umap", 2000, 2, "exact"),
    ("sammon", 2000, 2, "exact"),
])
def test_the_choice(method, n, k, expected):
    name, reason = choose_engine(build_method(method), n, k, ALL)
    assert name == expected, reason
    assert reason


def test_only_registered_engines_are_chosen():
    name, _ = choose_engine(build_method("tsne"), AUTO_APPROX_N + 1, 2, ("dense", "exact", "sgd"))
    assert name == "exact"


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
    assert choose_engine(build_method("sammon"), 500, 2, ALL)[0] == "exact"  # R alone fits
    assert choose_engine(knn_tsne, 500, 2, ALL)[0] == "exact"  # sparse P fits
    monkeypatch.setattr(auto, "available_memory", lambda: 8 * 2000**2 // 2)
    assert choose_engine(knn_tsne, 2000, 2, ALL)[0] == "exact"
    name, reason = choose_engine(build_method("tsne"), 2000, 2, ALL)
    assert name == "fft" and "sparse" in reason
