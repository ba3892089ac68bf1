"""The FFT-interpolation engine: its gradient, Z and cost against the dense engine on the same P."""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.engines import DenseEngine, resolve_engine
from smallvis.engines.fft import FFTEngine
from smallvis.methods import build_method
from smallvis.metrics import knn_preservation

from engine_checks import (FFT_N, check_fft, claimed, exact_Z, fft_data, ids, not_defaults, rel,
                           sparse_states)

SPECS = [("tsne", {}), ("hssne", {"alpha": 0.5}), ("hssne", {"alpha": 2.0}), ("tsne", {"dof": 0.6})]
N = FFT_N
# every method the catalog says fft runs (computed from the registry when this module is collected),
# a heavy-tailed kernel that is not hssne's default and a Student-t kernel with 0.6 degrees of freedom
CASES = claimed("fft") + not_defaults(SPECS)


@pytest.fixture(scope="module")
def prepared():
    """For each kernel of SPECS: (method, dense state, sparse state with the same P)."""
    return {params.get("alpha", 1.0): sparse_states(fft_data(), (name, params), perplexity=20)
            for name, params in SPECS}


@pytest.mark.parametrize("spec", CASES, ids=ids)
def test_matches_the_dense_engine(spec):
    """Defaults, an embedding spanning ~6 units: measured gradient error <= 7e-5, Z <= 1e-6 (1-D
    and 2-D, with and without exaggeration)."""
    check_fft(spec)


@pytest.mark.parametrize("k", [1, 2])
def test_error_falls_with_more_interpolation_nodes(prepared, k):
    method, state, sstate = prepared[1.0]
    Y = np.random.default_rng(5).normal(scale=4.0, size=(N, k))  # extent ~25: h ~ 0.5
    G0 = DenseEngine().evaluate(method, state, Y, cost=False)[1]
    Z0 = exact_Z(Y, 1.0)
    errors, zerrors = [], []
    for p in (2, 3, 5):
        eng = FFTEngine(n_interp=p)
        errors.append(rel(eng.evaluate(method, sstate, Y, cost=False)[1], G0))
        zerrors.append(abs(eng.repulsion(Y, 0, 1.0, False)[0] / Z0 - 1.0))
    assert errors[0] > 3 * errors[1] > 9 * errors[2]
    assert zerrors[0] > zerrors[1] > zerrors[2]
    assert errors[2] < 2e-4  # measured 2e-5 (1-D), 6e-5 (2-D)


def test_cost_and_gradient_flags(prepared):
    method, _, sstate = prepared[0.5]
    Y = np.random.default_rng(2).normal(size=(N, 2))
    eng = FFTEngine()
    cost, G = eng.evaluate(method, sstate, Y, 2.0)
    c_only = eng.evaluate(method, sstate, Y, 2.0, grad=False)
    g_only = eng.evaluate(method, sstate, Y, 2.0, cost=False)
    assert c_only[1] is None and g_only[0] is None
    np.testing.assert_array_equal(c_only[0], cost)
    np.testing.assert_array_equal(g_only[1], G)
    assert eng.evaluate(method, sstate, Y, cost=False, grad=False) == (None, None)


def test_grid_follows_the_extent():
    eng = FFTEngine()
    n_boxes, h, L = eng.grid(1e-4, 2)  # early iterations: the minimum, fine intervals
    assert n_boxes >= 50 and n_boxes * h == pytest.approx(1e-4) and L >= 3 * n_boxes
    n_boxes, h, L = eng.grid(200.0, 2)
    assert n_boxes >= 200 and h <= 1.0 and L >= 3 * n_boxes
    for extent in (0.5, 37.0, 200.0, 999.0):  # FFT lengths with factors 2, 3 and 5 only
        L = eng.grid(extent, 1)[2]
        for f in (2, 3, 5):
            while L % f == 0:
                L //= f
        assert L == 1
    n_boxes, h, L = FFTEngine(min_intervals=7, interval_size=0.25, n_interp=2).grid(10.0, 1)
    assert n_boxes >= 40 and h <= 0.25


@pytest.mark.parametrize("k", [1, 2])
def test_tiny_and_large_embeddings(k):
    """Early iterations (extent ~1e-4) and a wide embedding (extent ~200) against brute force."""
    rng = np.random.default_rng(3)
    # measured: ~1e-15 and ~1e-15; Z 2e-7 to 3e-5 and R 1.5e-3 to 6e-3 (300 points: sparse)
    for Y, ztol, rtol in ((rng.normal(scale=3e-5, size=(300, k)), 1e-12, 1e-12),
                          (rng.uniform(-100.0, 100.0, size=(300, k)), 3e-4, 3e-2)):
        eng = FFTEngine(n_interp=5)
        Z, R = eng.repulsion(Y, 0, 1.0, True)
        diff = Y[:, None] - Y[None]
        w = 1.0 / (1.0 + np.sum(diff**2, axis=-1))
        R0 = np.einsum("ij,ijd->id", w * w, diff)
        assert abs(Z / (w.sum() - 300) - 1.0) < ztol
        assert rel(R, R0) < rtol
    assert eng.grid(np.ptp(Y), k)[0] >= 200


def test_three_dimensions_are_refused(prepared):
    method, _, sstate = prepared[1.0]
    Y = np.random.default_rng(0).normal(size=(N, 3))
    with pytest.raises(ValueError, match="1-D and 2-D.*'bh'.*'exact'"):
        FFTEngine().evaluate(method, sstate, Y)


def test_does_not_depend_on_the_number_of_threads(prepared):
    import numba

    method, _, sstate = prepared[1.0]
    Y = np.random.default_rng(4).normal(scale=5.0, size=(N, 2))
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            results.append(FFTEngine().evaluate(method, sstate, Y, 3.0))
    finally:
        numba.set_num_threads(before)
    (c1, G1), (c2, G2) = results
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(G1, G2)


@pytest.mark.parametrize("k", [1, 2])
def test_degenerate_embeddings_stay_finite(prepared, k):
    method, _, sstate = prepared[1.0]
    Y = np.full((N, k), 2.5)
    Z, R = FFTEngine().repulsion(Y, 0, 1.0, True)
    assert Z == pytest.approx(N * (N - 1), rel=1e-12)
    np.testing.assert_allclose(R, 0.0, atol=1e-6)
    Y[0] += 7.0  # all but one equal
    cost, G = FFTEngine().evaluate(method, sstate, Y)
    assert np.all(np.isfinite(cost)) and np.all(np.isfinite(G))
    assert FFTEngine().repulsion(Y, 0, 1.0, False)[0] == pytest.approx(exact_Z(Y, 1.0), rel=1e-3)
    Z, R = FFTEngine().repulsion(np.full((N, k), np.nan), 0, 1.0, True)
    assert np.isnan(Z) and np.all(np.isnan(R))


def test_end_to_end_like_the_dense_engine():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(loc=rng.normal(scale=4, size=10), size=(50, 10))
                        for _ in range(6)])
    kp = {}
    for engine in ("dense", "fft"):
        Y = smallvis(X, method="tsne", engine=engine, max_iter=200, random_state=0)
        assert Y.shape == (300, 2) and np.all(np.isfinite(Y))
        kp[engine] = knn_preservation(X, Y, 10)
    assert abs(kp["fft"] - kp["dense"]) < 0.05


def test_registered_with_options():
    eng = resolve_engine(("fft", {"n_interp": 4, "interval_size": 0.5}), build_method("tsne"),
                         100, 2)
    assert isinstance(eng, FFTEngine)
    assert eng.options() == {"knn": "auto", "n_interp": 4, "min_intervals": 50,
                             "interval_size": 0.5}
    with pytest.raises(ValueError, match="n_interp, min_intervals, interval_size"):
        resolve_engine(("fft", {"theta": 0.5}), build_method("tsne"), 100, 2)
    with pytest.raises(ValueError, match="method 'umap'"):
        resolve_engine("fft", build_method("umap"), 100, 2)


@pytest.mark.parametrize("option, value, message", [
    ("n_interp", 0, r"n_interp must be a whole number in \[1, 20\]"),
    ("n_interp", 2.5, r"n_interp must be a whole number in \[1, 20\]"),
    ("n_interp", True, r"n_interp must be a whole number"),
    ("n_interp", "3", r"n_interp must be a whole number"),
    ("min_intervals", 0, r"min_intervals must be a whole number in \[1, 10000\]"),
    ("interval_size", 0.0, "interval_size must be a positive finite number"),
    ("interval_size", float("inf"), "interval_size must be a positive finite number"),
    ("interval_size", float("nan"), "interval_size must be a positive finite number"),
    ("interval_size", "1", "interval_size must be a positive finite number"),
    ("knn", "kd", "engine 'fft' option knn"),
])
def test_bad_options(option, value, message):
    with pytest.raises(ValueError, match=message):
        FFTEngine(**{option: value})


def test_a_huge_extent_caps_the_grid_and_says_so(caplog):
    from smallvis.engines.fft import MAX_NODES

    eng = FFTEngine(interval_size=0.01)
    with caplog.at_level("WARNING", logger="smallvis"):
        n_boxes, h, L = eng.grid(100.0, 2)
        eng.grid(100.0, 2)
    assert n_boxes * 3 <= MAX_NODES[2] and h > 0.01 and n_boxes * h == pytest.approx(100.0)
    assert sum("less accurate" in r.getMessage() for r in caplog.records) == 1


def test_requests_on_one_grid_answer_as_on_fresh_grids():
    """The requests without charges share one forward transform: a sequence of requests, with and
    without charges, on one set-up gives each the bits of its own fresh set-up."""
    from smallvis.engines.approx_terms import Sums
    from smallvis.engines.exact_kernels import kernel_params
    from smallvis.engines.radial_kernels import W, W_LOG_W, WG

    rng = np.random.default_rng(3)
    Y = rng.normal(scale=3.0, size=(200, 2))
    c = rng.uniform(0.5, 2.0, 200)
    requests = [Sums(0, kernel_params(1.0), scalars=(W,)),
                Sums(2, kernel_params(0.5), scalars=(W_LOG_W,), vectors=(WG,), charges=c),
                Sums(0, kernel_params(1.0), scalars=(W, W_LOG_W), vectors=(WG,)),
                Sums(1, kernel_params(1.0), vectors=(WG,), charges=2.0 * c),
                # the row-normalised plan's pair: the same functions again, charged, then the
                # uncharged spectrum once more (a charged request's in-place product spares it)
                Sums(0, kernel_params(1.0), scalars=(W,), vectors=(WG,)),
                Sums(0, kernel_params(1.0), vectors=(WG, W), charges=c),
                Sums(0, kernel_params(1.0), vectors=(WG,), floor=1e-3),
                Sums(0, kernel_params(1.0), scalars=(W,), vectors=(WG,))]
    engine = FFTEngine()
    shared = engine.radial(Y)
    for req in requests:
        Z, S, V = shared.sums(req)
        Z0, S0, V0 = engine.radial(Y).sums(req)
        assert Z == Z0
        np.testing.assert_array_equal(S, S0)
        np.testing.assert_array_equal(V, V0)


@pytest.mark.parametrize("k", [1, 2])
def test_channel_by_channel_transforms_are_the_whole_array_ones(k):
    """forward and convolve run one channel at a time (one channel's transient arrays): the bits of
    scipy's transforms over all channels at once, with and without the in-place product."""
    from scipy import fft

    from smallvis.engines.fft_transforms import convolve, forward, quadrant_spectrum, spectrum

    rng = np.random.default_rng(k)
    N, L = 40, 54
    M = 2 * L
    charges = np.zeros((1 + k,) + (N,) * (k - 1) + (M,))
    charges[..., :N] = rng.normal(size=charges[..., :N].shape)
    F = forward(charges, M, 2)
    whole = fft.rfft(charges, axis=-1)
    if k == 2:
        padded = np.zeros((1 + k, M, L + 1), dtype=complex)
        padded[:, :N] = whole
        whole = fft.fft(padded, axis=1)
    np.testing.assert_array_equal(F, whole)
    K = rng.normal(size=(L + 1 if k == 2 else 1, L + 1))
    product = whole * spectrum(K, k, 2)
    if k == 2:
        product = fft.ifft(product, axis=1)[:, :N]
    expected = fft.irfft(product, n=M, axis=-1)[..., :N]
    S = quadrant_spectrum(K, k, 2)
    np.testing.assert_array_equal(convolve(F, S, N, M, 2, channels=1), expected[:1])
    np.testing.assert_array_equal(convolve(F.copy(), S, N, M, 2, in_place=True), expected)
    np.testing.assert_array_equal(F, whole)  # untouched without in_place


@pytest.mark.parametrize("k", [1, 2])
def test_a_scalar_also_asked_as_a_vector_and_requests_without_z_keep_their_bits(k):
    """A scalar function that is also a vector one is read off the vector's first channel, and a
    request with ``total=False`` skips Z (NaN): the scalars and vectors are the bits of the
    requests that convolve every function apart and make Z, charged or not."""
    from smallvis.engines.approx_terms import Sums
    from smallvis.engines.exact_kernels import kernel_params
    from smallvis.engines.radial_kernels import W, W_LOG_W, WG

    rng = np.random.default_rng(4)
    Y = rng.normal(scale=3.0, size=(300, k))
    c = rng.uniform(-1.0, 2.0, 300)
    engine = FFTEngine()
    kp = kernel_params()
    for charges in (None, c):
        both = engine.radial(Y).sums(Sums(1, kp, scalars=(W, W_LOG_W), vectors=(W, W_LOG_W),
                                          charges=charges))
        scalars = engine.radial(Y).sums(Sums(1, kp, scalars=(W, W_LOG_W), charges=charges))
        vectors = engine.radial(Y).sums(Sums(1, kp, vectors=(W, W_LOG_W), charges=charges))
        assert both[0] == scalars[0] == vectors[0] and np.isfinite(both[0])
        np.testing.assert_array_equal(both[1], scalars[1])
        np.testing.assert_array_equal(both[2], vectors[2])
        # a floored WG is not shared with the unfloored scalar WG
        floored = engine.radial(Y).sums(Sums(0, kp, scalars=(WG,), vectors=(WG,), floor=1e-2,
                                             charges=charges))
        alone = engine.radial(Y).sums(Sums(0, kp, scalars=(WG,), charges=charges))
        np.testing.assert_array_equal(floored[1], alone[1])
        no_z = engine.radial(Y).sums(Sums(1, kp, scalars=(W_LOG_W,), vectors=(W,),
                                          charges=charges, total=False))
        with_z = engine.radial(Y).sums(Sums(1, kp, scalars=(W_LOG_W,), vectors=(W,),
                                            charges=charges))
        assert np.isnan(no_z[0]) and np.isfinite(with_z[0])
        np.testing.assert_array_equal(no_z[1], with_z[1])
        np.testing.assert_array_equal(no_z[2], with_z[2])
