"""Bad input gets a clear error naming the problem (no deep numpy tracebacks)."""

import numpy as np
import pandas as pd
import pytest

from smallvis import calibrate_perplexity, smallvis


def test_unknown_method_suggests_closest(iris10):
    with pytest.raises(ValueError, match=r"unknown method 'tnse'.*Did you mean 'tsne'"):
        smallvis(iris10, method="tnse")


def test_unknown_method_parameter(iris10):
    with pytest.raises(ValueError, match=r"unknown parameter.*'perplxity'.*method 'tsne'"):
        smallvis(iris10, method=("tsne", {"perplxity": 3}))


@pytest.mark.parametrize("kw, pattern", [
    (dict(opt="adma"), r"unknown optimizer 'adma'"),
    (dict(opt=("dbd", {"etaa": 1})), r"unknown parameter.*'etaa'.*optimizer 'dbd'"),
    (dict(Y_init="laplcian"), r"Did you mean 'laplacian'"),
    (dict(Y_init="random"), r"unknown initialization 'random'"),
    (dict(scale="zscore"), r"unknown scale mode"),
    (dict(method=("tsne", {"inp_kernel": "gausian"})), r"Did you mean 'gaussian'"),
    (dict(method=("tsne", {"inp_kernel": "gaus"})), r"input kernel 'gaus' is ambiguous"),
    (dict(engine="fast"), r"unknown engine"),
    (dict(ret_extra=["PP"]), r"unknown ret_extra item 'PP'"),
    (dict(eta="fast"), r"eta must be a positive number, 'auto' or 'optsne'"),
    (dict(eta=-1), r"eta .* must be positive"),
    (dict(metric="cosinus"), r"unknown metric 'cosinus'. Did you mean 'cosine'"),
    (dict(pca="yes"), r"pca must be True, False or 'whiten'"),
    (dict(k=0), r"k \(output dimensions\) must be a whole number >= 1"),
    (dict(exaggeration_factor=4, stop_lying_iter=0), r"stop_lying_iter must be >= 1"),
])
def test_bad_options(iris10, kw, pattern):
    kw.setdefault("perplexity", 5)
    with pytest.raises(ValueError, match=pattern):
        smallvis(iris10, max_iter=1, **kw)


def test_names_match_by_prefix_and_case(iris10):
    Y = smallvis(iris10, method="TSNE", perplexity=5, Y_init="SPC", scale="ABS", opt="DB",
                 max_iter=2)
    assert Y.shape == (10, 2)
    assert smallvis(iris10, method="Sam", max_iter=2).shape == (10, 2)


def test_ambiguous_method_prefix(iris10):
    with pytest.raises(ValueError, match=r"ambiguous.*tsne.*tsneu|ambiguous"):
        smallvis(iris10, method="TS", perplexity=5, max_iter=2)


def test_perplexity_too_large(iris10):
    with pytest.raises(ValueError, match=r"perplexity 30 is too large for 10 points"):
        smallvis(iris10)


def test_perplexity_vector_wrong_length(iris10):
    with pytest.raises(ValueError, match=r"one value per point \(10\); got 3"):
        smallvis(iris10, perplexity=[3, 4, 5])


def test_perplexity_not_positive(iris10):
    with pytest.raises(ValueError, match=r"perplexity must be finite and at least 1; got 0"):
        smallvis(iris10, perplexity=0)


def test_too_few_points():
    with pytest.raises(ValueError, match="at least 3 points"):
        smallvis(np.array([[0.0, 1.0], [1.0, 0.0]]), perplexity=1)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_rejected(iris10, bad):
    X = iris10.copy()
    X[3, 2] = bad
    with pytest.raises(ValueError, match=r"row 3, column 2"):
        smallvis(X, perplexity=5)


def test_non_square_precomputed():
    with pytest.raises(ValueError, match="square distance matrix"):
        smallvis(np.ones((5, 4)), metric="precomputed", perplexity=2)


def test_precomputed_not_symmetric():
    D = np.abs(np.random.default_rng(0).normal(size=(5, 5)))
    np.fill_diagonal(D, 0)
    with pytest.raises(ValueError, match="not symmetric"):
        calibrate_perplexity(D, 2, metric="precomputed")


def test_y_init_wrong_shape(iris10):
    with pytest.raises(ValueError, match=r"Y_init matrix must have shape \(10, 2\)"):
        smallvis(iris10, perplexity=5, Y_init=np.zeros((10, 3)))


@pytest.mark.parametrize("k", [0, 2.5, 10])
def test_knn_kernel_bad_k(iris10, k):
    with pytest.raises(ValueError, match="neighbours"):
        smallvis(iris10, method=("tsne", {"inp_kernel": "knn"}), perplexity=k, max_iter=1)


def test_no_numeric_columns():
    with pytest.raises(ValueError, match="no numeric columns"):
        smallvis(pd.DataFrame({"a": list("abcde")}))


def test_non_numeric_array():
    with pytest.raises(ValueError, match="must be numeric"):
        smallvis([["a", "b"], ["c", "d"], ["e", "f"]])


def test_one_dimensional_input():
    with pytest.raises(ValueError, match="2-D matrix"):
        smallvis(np.arange(10.0))


def test_dense_memory_refused_before_allocation():
    from smallvis.engines.dense import check_dense_memory

    with pytest.raises(MemoryError, match=r"needs about [\d.]+ GiB for 200000 points"):
        check_dense_memory(200_000, budget=24 * 2**30)
    check_dense_memory(1000, budget=24 * 2**30)


def test_memory_guard_names_the_sparse_options(monkeypatch, capsys, tmp_path):
    from smallvis.cli import main
    from smallvis.engines import auto, dense

    budget = lambda: 8 * 3000**2 * 2  # noqa: E731 - room for P, not for the dense engine
    monkeypatch.setattr(dense, "available_memory", budget)
    monkeypatch.setattr(auto, "available_memory", budget)
    X = np.random.default_rng(0).normal(size=(3000, 3))
    with pytest.raises(MemoryError, match=r"engine='fft'.*inp_kernel='nngaussian'"):
        smallvis(X, engine="dense", max_iter=1)
    data = tmp_path / "x.csv"
    np.savetxt(data, X, delimiter=",")
    assert main(["embed", str(data), "--engine", "dense", "--max-iter", "1"]) == 1
    assert "engine='fft' or 'bh'" in capsys.readouterr().err


@pytest.mark.parametrize("beta", [0, -1.0])
def test_bandwidth_beta_must_be_positive(iris10, beta):
    with pytest.raises(ValueError, match=r"beta \(output precision\) must be positive"):
        smallvis(iris10, method=("btsne", {"beta": beta}), perplexity=5, max_iter=1)


def test_bandwidth_methods_need_precisions(iris10):
    with pytest.raises(ValueError, match="needs input bandwidths"):
        smallvis(iris10, method=("btsne", {"inp_kernel": "knn"}), perplexity=3, max_iter=1)
