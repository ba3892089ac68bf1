"""The exact engine's NeRV / JSE passes (smallvis.engines.exact_nerv): the one-exponential path of a
row-normalised Q without precisions against the two-exponential one and the dense engine."""

from __future__ import annotations

import numpy as np
import pytest

import smallvis.engines.exact_nerv as exact_nerv
from smallvis.engines import DenseEngine, ExactEngine
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import assert_same, x60


@pytest.fixture(scope="module")
def X60():
    return x60()


def test_exp_ratios_are_per_point_factors_of_pair_ratios():
    a = np.array([-3.0, 0.5, 250.0, -340.0])
    r = exact_nerv.exp_ratios(a)
    assert r.shape == (2, 4)
    ratio = r[0][:, None] * r[1][None, :]
    np.testing.assert_allclose(ratio, np.exp(a[:, None] - a[None, :]), rtol=1e-12)
    assert exact_nerv.exp_ratios(np.array([0.0, 700.0])).shape == (0, 0)  # too wide: not used
    assert exact_nerv.exp_ratios(np.array([0.0, np.nan])).shape == (0, 0)


@pytest.mark.parametrize("spec", ["nerv", "rsrnerv", "jse", "rsrjse", ("nerv", {"lambda": 0.0}),
                                  ("jse", {"kappa": 0.999})])
@pytest.mark.parametrize("scale", [0.3, 2.0, 20.0])
def test_one_exponential_per_pair_matches_two_and_dense(X60, spec, scale, monkeypatch):
    """A row-normalised Q without precisions takes a pair's second q from its first (one exp per
    pair, :func:`~smallvis.engines.exact_nerv.exp_ratios`); with the span set below every range,
    both are computed: the same numbers up to rounding, and the dense engine's."""
    method = build_method(spec, perplexity=10)
    state = method.prepare(InputData(X60))
    Y = np.random.default_rng(4).normal(scale=scale, size=(60, 2))
    dense = DenseEngine().evaluate(method, state, Y, 4.0)
    calls = []
    original = exact_nerv.exp_ratios
    monkeypatch.setattr(exact_nerv, "exp_ratios", lambda a: calls.append(original(a)) or calls[-1])
    one = ExactEngine().evaluate(method, state, Y, 4.0)
    assert calls and all(r.shape == (2, 60) for r in calls)  # the one-exponential path ran
    monkeypatch.setattr(exact_nerv, "RATIO_SPAN", -1.0)
    calls.clear()
    two = ExactEngine().evaluate(method, state, Y, 4.0)
    assert calls and all(r.shape == (0, 0) for r in calls)
    assert_same(two, one, rtol=1e-12)
    assert_same(dense, one)
    assert_same(dense, two)


def _pass_minima(Y):
    from smallvis.engines import exact_nerv_kernels as nk
    from smallvis.engines.exact_kernels import chunk_bounds

    n = Y.shape[0]
    bounds = chunk_bounds(n)
    chunks = bounds.shape[0] - 1
    out = np.empty(n)
    nk.row_min_d2(np.ascontiguousarray(Y.T), bounds, np.empty((chunks, n)), np.empty((chunks, n)),
                  out)
    return out


@pytest.mark.parametrize("k", [1, 2, 3])
def test_nearest_d2_is_the_pass_bit_for_bit(k):
    """The k-d tree's row minima are the pass's, bit for bit: spread points, points on a lattice
    (many equal distances) and duplicated points (ties at 0, more than the neighbours asked for)."""
    rng = np.random.default_rng(7)
    spread = rng.normal(scale=30.0, size=(300, k))
    lattice = np.stack(np.meshgrid(*[np.arange(7.0)] * k), axis=-1).reshape(-1, k)[:300] * 0.1
    dup = np.concatenate([spread[:100], np.repeat(spread[100:101], 9, axis=0), spread[150:]])
    for Y in (spread, lattice, dup, spread[:2]):
        got = exact_nerv.nearest_d2(Y)
        assert got is not None
        np.testing.assert_array_equal(got, _pass_minima(Y))


def test_nearest_d2_leaves_what_it_does_not_serve_to_the_pass():
    rng = np.random.default_rng(8)
    assert exact_nerv.nearest_d2(rng.normal(size=(50, 4))) is None  # too many dimensions
    Y = rng.normal(size=(50, 2))
    Y[3, 1] = np.nan
    assert exact_nerv.nearest_d2(Y) is None
    assert exact_nerv.nearest_d2(np.zeros((200, 2))) is None  # every row ties: a pass is cheaper
    assert exact_nerv.nearest_d2(rng.normal(scale=1e200, size=(50, 2))) is None  # d2 overflows


def test_engine_fits_match_with_and_without_the_tree(X60, monkeypatch):
    """The engine's numbers do not depend on where the row minima come from."""
    method = build_method("nerv", perplexity=10)
    state = method.prepare(InputData(X60))
    Y = np.random.default_rng(4).normal(scale=2.0, size=(60, 2))
    tree = ExactEngine().evaluate(method, state, Y, 1.0)
    monkeypatch.setattr(exact_nerv, "TREE_DIMS", 0)
    passed = ExactEngine().evaluate(method, state, Y, 1.0)
    np.testing.assert_array_equal(tree[0], passed[0])
    np.testing.assert_array_equal(tree[1], passed[1])


@pytest.mark.parametrize("spec", ["nerv", "snerv", "bnerv", "jse"])
def test_rows_longer_than_a_block_match_dense_with_any_thread_count(spec):
    """Rows of more than one block (exact_nerv_kernels.BLOCK pairs): the dense engine's numbers,
    and the same bits with one thread as with all."""
    import numba

    from smallvis.engines import exact_nerv_kernels as nk

    n = nk.BLOCK * 2 + 37
    rng = np.random.default_rng(11)
    X = rng.normal(size=(n, 5))
    X[: n // 2] += 4.0
    method = build_method(spec, perplexity=15)
    state = method.prepare(InputData(X))
    Y = rng.normal(scale=3.0, size=(n, 2))
    dense = DenseEngine().evaluate(method, state, Y, 2.0)
    exact = ExactEngine().evaluate(method, state, Y, 2.0)
    assert_same(dense, exact)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ExactEngine().evaluate(method, state, Y, 2.0)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one[0], exact[0])
    np.testing.assert_array_equal(one[1], exact[1])


@pytest.mark.parametrize("spec", ["nerv", "snerv", "bnerv"])
def test_log_p_cache_gives_the_same_bits_and_follows_the_factor(spec, monkeypatch):
    """NeRV's cached ``log max(f P, eps)`` (exact_nerv.log_p_cache, packed both directions in one
    (n, n) array) gives the bits of the logarithms computed in the pass, rows over a block
    included; a new exaggeration replaces the cache (one held at a time)."""
    from smallvis.engines import exact_nerv_kernels as nk

    n = nk.BLOCK + 45
    rng = np.random.default_rng(12)
    X = rng.normal(size=(n, 4))
    X[: n // 3] += 3.0
    method = build_method(spec, perplexity=15)
    state = method.prepare(InputData(X))
    Y = rng.normal(scale=2.0, size=(n, 2))
    share = exact_nerv.LOG_CACHE_SHARE
    for f in (4.0, 1.0):
        cached = ExactEngine().evaluate(method, state, Y, f)
        tag, logp = state.data[exact_nerv._LOG_KEY]
        assert tag[0] == f and logp.shape == (n, n)
        monkeypatch.setattr(exact_nerv, "LOG_CACHE_SHARE", 0.0)  # too small: computed
        state.data.pop(exact_nerv._LOG_KEY)
        computed = ExactEngine().evaluate(method, state, Y, f)
        assert exact_nerv._LOG_KEY not in state.data
        monkeypatch.setattr(exact_nerv, "LOG_CACHE_SHARE", share)
        np.testing.assert_array_equal(cached[0], computed[0])
        np.testing.assert_array_equal(cached[1], computed[1])


def test_log_p_cache_packing():
    """The packed layout: the upper triangle is row i's pairs with later points, the lower
    triangle's row n - 1 - i the other direction of the same pairs, in the same order; with or
    without P's transpose."""
    from smallvis.engines.exact_nerv_cache_kernels import packed_log_floored

    rng = np.random.default_rng(13)
    n, f, eps = 9, 3.0, 0.05
    P = rng.uniform(size=(n, n)) * (rng.uniform(size=(n, n)) > 0.3)
    want = np.log(np.maximum(f * P, eps))
    for PT in (np.ascontiguousarray(P.T), np.empty((0, 0))):
        out = np.full((n, n), np.nan)
        packed_log_floored(P, PT, f, eps, True, out)
        for i in range(n):
            np.testing.assert_allclose(out[i, i + 1:], want[i, i + 1:], rtol=1e-15)
            np.testing.assert_allclose(out[n - 1 - i, :n - 1 - i], want[i + 1:, i], rtol=1e-15)
        assert np.isnan(np.diag(out)).all()
    state = build_method("nerv", perplexity=3).prepare(InputData(rng.normal(size=(20, 3))))
    assert exact_nerv.log_p_cache(state, state.P, state.P, 1.0, eps, True,
                                  budget=state.P.nbytes).shape == (0, 0)  # over the share


@pytest.mark.parametrize("spec", ["nerv", "snerv", "jse", "sjse"])
def test_subnormal_p_entries_read_as_zero_keep_the_bits(X60, spec):
    """P's subnormal entries are read as 0 where that gives the same bits (exact_nerv_kernels'
    ``_flush``): the gradient with subnormal entries is that with zeros there, and the dense
    engine's."""
    method = build_method(spec, perplexity=10)
    state = method.prepare(InputData(X60))
    rng = np.random.default_rng(14)
    spots = rng.uniform(size=state.P.shape) < 0.2
    np.fill_diagonal(spots, False)
    spots &= spots.T  # symmetric P stays symmetric
    P = state.P.copy()
    P[spots] = 3e-310
    state.P = P
    Y = rng.normal(scale=2.0, size=(60, 2))
    dense = DenseEngine().evaluate(method, state, Y, 4.0)
    sub = ExactEngine().evaluate(method, state, Y, 4.0, cost=False)[1]
    assert_same(dense, ExactEngine().evaluate(method, state, Y, 4.0))
    state.P = np.where(spots, 0.0, P)
    state.data.clear()
    zero = ExactEngine().evaluate(method, state, Y, 4.0, cost=False)[1]
    np.testing.assert_array_equal(sub, zero)
