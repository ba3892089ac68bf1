"""The methods the approximate engines serve by composing their all-pairs sums (issue 19 item 3):
what the catalog-driven checks (bh at theta = 0 and fft against dense, both at their defaults on
2,000 points against exact) do not show: dhssne's per-epoch alpha and its stale first gradient,
and results that do not depend on the number of threads."""

import numpy as np
import pytest

from smallvis.engines import DenseEngine
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.fft import FFTEngine
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import check_thread_independent, fft_data, sparse_states, x80


def test_dhssne_alpha_search_and_stale_gradient_on_barnes_hut():
    """The epoch's alpha search evaluates its candidates through the engine (bh at theta = 0: the
    dense costs, so the same alpha); the first gradient after a change reads the epoch's weights
    (old alpha) with the new exponent, once, as the dense engine's."""
    results = {}
    for engine in (DenseEngine(), BarnesHutEngine(theta=0.0)):
        method, dense, sp = sparse_states(x80(), "dhssne")
        state = dense if engine.name == "dense" else sp
        Y = np.random.default_rng(5).normal(scale=2.0, size=(80, 2))
        method.on_epoch(Y, state, 10, np.inf,
                        pcost=lambda Z: engine.evaluate(method, state, Z, grad=False)[0])
        assert state.data["alpha"] != 0.5
        first = engine.evaluate(method, state, Y)
        second = engine.evaluate(method, state, Y)
        assert np.abs(first[1] - second[1]).max() > 1e-6 * np.abs(second[1]).max()
        results[engine.name] = (state.data["alpha"], first, second)
    dense, bh = results["dense"], results["bh"]
    assert dense[0] == bh[0]
    for a, b in zip(dense[1:], bh[1:]):
        np.testing.assert_allclose(b[1], a[1], rtol=1e-9, atol=1e-12 * np.abs(a[1]).max())
        np.testing.assert_allclose(b[0], a[0], rtol=1e-9, atol=1e-9 * np.abs(a[0]).max())


def test_dhssne_runs_on_fft_and_reports_alpha():
    from smallvis import smallvis

    res = smallvis(fft_data()[:200], method="dhssne", engine="fft", perplexity=10, max_iter=60,
                   epoch=10, random_state=1, ret_extra=("alpha",))
    assert np.isfinite(res.Y).all() and res.alpha != 0.5


THREAD_CASES = ["dhssne", "nerv", "snerv", "gsne"]


@pytest.mark.parametrize("name", THREAD_CASES)
@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine, name):
    check_thread_independent(engine, name)


def _kNN_states(name, n=80, perplexity=5):
    """A truly sparse P (kNN-restricted) and a dense state holding the same P: the pairs P does not
    store are the dense engine's eps-floored zeros."""
    from smallvis.methods.base import MethodState

    method = build_method(name, perplexity=perplexity)
    sp = method.prepare_sparse(InputData(x80()[:n]), knn_method="exact")
    assert sp.P.nnz < 0.3 * n * n
    dense = method.prepare(InputData(x80()[:n]))
    dense = MethodState(P=sp.P.toarray(), affinities=sp.affinities, data=dense.data)
    return method, dense, sp


SPARSE_P_METHODS = ["nerv", "snerv", "rsrnerv", "gsne", ("gsne", {"lambda": 10.0})]


@pytest.mark.parametrize("name", SPARSE_P_METHODS, ids=str)
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_pairs_p_does_not_store_match_the_dense_floor(name, factor):
    """The catalog's checks give the sparse engines a P with every entry stored; here most pairs
    are not stored (kNN): bh at theta = 0 equals the dense engine on the same P (1e-9), whose
    floor puts eps on them."""
    method, dense, sp = _kNN_states(name)
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(scale=1.0, size=(80, k))
        cd, Gd = DenseEngine().evaluate(method, dense, Y, factor)
        cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
        np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max())
        np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-12 * np.abs(cd).max())


@pytest.mark.parametrize("name", SPARSE_P_METHODS, ids=str)
def test_the_sparse_gradient_is_the_derivative_of_the_sparse_cost(name):
    """bh at theta = 0 on a kNN P: central differences of its cost give its gradient."""
    from engine_checks import numeric_gradient

    method, _, sp = _kNN_states(name, n=30, perplexity=2)
    Y = np.random.default_rng(3).normal(scale=0.5, size=(30, 2))
    engine = BarnesHutEngine(theta=0.0)

    def cost(Z):
        return float(np.sum(engine.evaluate(method, sp, Z, grad=False)[0]))

    G = engine.evaluate(method, sp, Y, cost=False)[1]
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-7 * np.abs(G_fd).max())


def test_gsne_needs_coordinates_on_the_approximate_engines():
    """Its global affinities are summed from the input coordinates: a distance matrix is refused
    with the reason."""
    D = np.sqrt(np.sum((x80()[:, None] - x80()[None]) ** 2, axis=-1))
    with pytest.raises(ValueError, match="needs input coordinates"):
        build_method("gsne").prepare_sparse(InputData(D, precomputed=True), knn_method="exact")
