"""Properties of the method zoo the theory fixes: minima, limits, exaggeration, parameter ranges."""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.cli import main
from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances
from smallvis.io.preprocess import scale_input
from smallvis.methods import REGISTRY, build_method


@pytest.fixture(scope="module")
def data(iris10):
    return InputData(scale_input(iris10, "absmax"))


@pytest.fixture
def Y():
    return np.random.default_rng(5).normal(scale=0.7, size=(10, 2))


@pytest.mark.parametrize("name", ["tsne", "rklsne", "jssne", "chsne", "hlsne"])
def test_divergence_vanishes_with_its_gradient_when_q_equals_p(data, Y, name):
    """Every f-divergence is zero, and stationary, where the output probabilities equal P."""
    m = build_method(name, perplexity=5)
    state = m.prepare(data)
    W = 1 / (1 + squared_distances(Y))
    np.fill_diagonal(W, 0)
    state.P = W / W.sum()
    state._by_factor.clear()
    pcost, G = DenseEngine().evaluate(m, state, Y)
    assert abs(pcost.sum()) < 1e-12
    np.testing.assert_allclose(G, 0, atol=1e-12)
    # and positive elsewhere
    assert DenseEngine().evaluate(m, state, 1.5 * Y, grad=False)[0].sum() > 1e-6


def test_gsne_without_the_global_term_is_tsne(data, Y):
    a = build_method(("gsne", {"lambda": 0.0}), perplexity=5)
    b = build_method("tsne", perplexity=5)
    ca, ga = DenseEngine().evaluate(a, a.prepare(data), Y)
    cb, gb = DenseEngine().evaluate(b, b.prepare(data), Y)
    np.testing.assert_allclose(ca, cb, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-12)


def test_gsne_global_term_spreads_the_embedding(iris):
    """The global term pushes far pairs apart: the embedding spreads as lambda grows."""
    X = iris[::5]
    spread = [np.ptp(smallvis(X, method=("gsne", {"lambda": lam}), perplexity=10, max_iter=300,
                              Y_init="pca", random_state=1), axis=0).sum() for lam in (0, 10)]
    assert spread[1] > spread[0]


@pytest.mark.parametrize("name", ["ee", "tee"])
def test_elastic_embeddings_ignore_exaggeration(data, Y, name):
    m = build_method(name, perplexity=5)
    state = m.prepare(data)
    c1, g1 = DenseEngine().evaluate(m, state, Y, 1.0)
    c4, g4 = DenseEngine().evaluate(m, state, Y, 4.0)
    np.testing.assert_array_equal(g1, g4)
    np.testing.assert_array_equal(c1, c4)


def test_ee_repulsion_weights(data, Y):
    """neg_weights=True weighs repulsion by normalised input distances, False uniformly."""
    on = build_method("ee", perplexity=5)
    off = build_method(("ee", {"neg_weights": False}), perplexity=5)
    s_on, s_off = on.prepare(data), off.prepare(data)
    R = data.distances()
    np.testing.assert_allclose(s_on.data["Vn"], R / R.sum())
    np.testing.assert_array_equal(s_off.data["Vn"], 1.0)
    # without attraction (P = 0) the forces are pure repulsion, lambda-weighted
    s_off.P = np.zeros_like(s_off.P)
    W = np.exp(-squared_distances(Y))
    np.fill_diagonal(W, 0)
    from smallvis.engines.dense import force_gradient

    G = DenseEngine().evaluate(off, s_off, Y, cost=False)[1]
    np.testing.assert_allclose(G, force_gradient(-400 * W, Y), rtol=1e-12)


def test_tee_cost_is_an_i_divergence(data):
    """With lambda = 1 the tee cost is the I-divergence sum V log(V/W) - V + W, zero at W = V."""
    m = build_method(("tee", {"lambda": 1.0}), perplexity=5)
    state = m.prepare(data)
    V, N = state.data["V"], state.data["N"]
    Y = np.random.default_rng(0).normal(size=(10, 2))
    d2 = squared_distances(Y)
    W = 1 / (1 + d2)
    np.fill_diagonal(W, 0)
    off = ~np.eye(10, dtype=bool)
    V, W = V[off], W[off]
    expected = np.sum(V * np.log(V / W) - V + W) / N
    cost = DenseEngine().evaluate(m, state, Y, grad=False)[0].sum()
    assert cost == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("method, pattern", [
    (("jse", {"kappa": 1.5}), r"method 'jse': parameter 'kappa' must be in \[0, 1\]; got 1.5"),
    (("sjse", {"kappa": -0.1}), r"'sjse'.*'kappa' must be in \[0, 1\]"),
    (("nerv", {"lambda": 2}), r"method 'nerv': parameter 'lambda' must be in \[0, 1\]"),
    (("snerv", {"lambda": -1}), r"'snerv'.*'lambda'"),
    (("bnerv", {"beta": 0}), r"'bnerv'.*'beta' must be in \(0, inf\]"),
    (("hssne", {"alpha": 0}), r"method 'hssne': parameter 'alpha' must be in \(0, inf\]"),
    (("dhssne", {"alpha": -1}), r"'dhssne'.*'alpha'"),
    (("bhssne", {"beta": -2}), r"'bhssne'.*'beta'"),
    (("ee", {"lambda": -1}), r"method 'ee': parameter 'lambda' must be in \[0, inf\]"),
    (("tee", {"lambda": -0.5}), r"'tee'.*'lambda'"),
    (("gsne", {"lambda": -1}), r"'gsne'.*'lambda'"),
    (("jse", {"kappa": "half"}), r"'jse'.*'kappa' must be a number; got 'half'"),
    (("nerv", {"lambda": float("nan")}), r"'nerv'.*'lambda'"),
    (("nerv", {"lamda": 0.5}), r"unknown parameter\(s\) 'lamda' for method 'nerv'"),
    (("largevis", {"gamma": -1}), r"'largevis'.*'gamma' must be in \[0, inf\]"),
    (("largevis", {"gr_eps": -0.1}), r"'largevis'.*'gr_eps'"),
    (("largevis", {"out_kernel": "gauss"}), r"largevis output kernel"),
    (("largevis", {"alpha": 0}), r"'largevis'.*'alpha' must be in \(0, inf\]"),
    (("largevis", {"gr_form": "sqrt"}), r"largevis gr_form"),
    (("largevis", {"row_weight": 0}), r"'largevis'.*'row_weight' must be in \(0, inf\]"),
    (("umap", {"spread": 0}), r"method 'umap': parameter 'spread' must be in \(0, inf\]"),
    (("umap", {"min_dist": -0.1}), r"'umap'.*'min_dist' must be in \[0, inf\]"),
    (("umap", {"gr_eps": -1}), r"'umap'.*'gr_eps'"),
    (("tumap", {"row_weight": -1}), r"'tumap'.*'row_weight'"),
    (("usne", {"spread": -1}), r"'usne'.*'spread'"),
])
def test_parameters_out_of_range(iris10, method, pattern):
    with pytest.raises(ValueError, match=pattern):
        smallvis(iris10, method=method, perplexity=5, max_iter=1)


def test_kappa_is_clamped_inside_the_range(data, Y):
    """kappa = 0 and 1 are valid and clamped to 1e-5 and 1 - 1e-5, as in the original."""
    for kappa, clamped in ((0.0, 1e-5), (1.0, 1 - 1e-5)):
        a = build_method(("jse", {"kappa": kappa}), perplexity=5)
        b = build_method(("jse", {"kappa": clamped}), perplexity=5)
        ca = DenseEngine().evaluate(a, a.prepare(data), Y)[0]
        cb = DenseEngine().evaluate(b, b.prepare(data), Y)[0]
        np.testing.assert_array_equal(ca, cb)


def test_every_method_lists_family_description_and_documented_maths():
    for name, spec in REGISTRY.items():
        assert spec.family and spec.description, name
        module = __import__(spec.factory.__module__, fromlist=["x"])
        assert ":math:" in module.__doc__ or ".. math::" in module.__doc__, name


@pytest.mark.parametrize("args", [
    ["--method", "nerv", "--param", "lambda=0.5"],
    ["--method", "jse", "--param", "kappa=0.2"],
    ["--method", "ee", "--param", "neg_weights=false"],
    ["--method", "gsne", "--param", "lambda=2"],
])
def test_cli_method_parameters(tmp_path, args):
    out = tmp_path / "y.csv"
    rc = main(["embed", "iris10", "--perplexity", "5", "--max-iter", "20", "--eta", "0.1",
               "--out", str(out), *args])
    assert rc == 0
    Y = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1))
    assert Y.shape == (10, 2) and np.all(np.isfinite(Y))


def test_exploding_coordinates_are_reported(iris10):
    """t-SNE's default eta is far too large for a Gaussian-output method on 10 points."""
    with pytest.warns(RuntimeWarning, match="grew beyond.*smaller eta"):
        smallvis(iris10, method="nerv", perplexity=5, max_iter=20, Y_init="pca")
