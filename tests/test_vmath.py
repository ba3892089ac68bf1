"""The vectorisable exp, log, log1p and powers of smallvis._util.vmath: accuracy in ulps against
60-digit decimal references and against the C library (math.*), the edge cases, the same bits for a
value wherever it sits in an array, in place or not; and a row of kernel weights as the engines sum
them, against the math.* loop."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from smallvis._util import vmath as V
from smallvis._util.jit import njit
from smallvis._util.sums import pairwise_sum

RNG_SEED = 20240611


def _run(f, x, *args):
    x = np.array(x, dtype=np.float64)
    out = np.full_like(x, -12345.0)
    f(x, *args, out, x.size)
    return out


def _ordered(a):
    """The doubles as integers in the same order (adjacent doubles differ by 1)."""
    i = np.asarray(a, dtype=np.float64).view(np.int64)
    return np.where(i < 0, np.int64(-2**63) - i, i)


def _ulp_diff(a, b):
    return np.abs(_ordered(a) - _ordered(b))


def _libm(fn, x):
    """``fn`` of the C library through ``math``, with IEEE results where math raises."""
    out = np.empty(len(x))
    for i, v in enumerate(x):
        try:
            out[i] = fn(v)
        except OverflowError:
            out[i] = math.inf
        except ValueError:  # log(0), log1p(-1): -inf; below the domain: NaN
            out[i] = -math.inf if v == 0.0 or v == -1.0 and fn is math.log1p else math.nan
    return out


def _ln1p(d):
    if abs(d) < Decimal("1e-3"):
        return sum((-1) ** (k + 1) * d ** k / k for k in range(1, 16))
    return (1 + d).ln()


def _true_ulps(y, x, ref):
    """Errors of ``y = f(x)`` in ulps of the true value (60-digit decimal ``ref``)."""
    getcontext().prec = 60
    errs = []
    for xi, yi in zip(x, y):
        true = ref(Decimal(float(xi)))
        ulp = Decimal(math.ulp(float(true)))
        errs.append(float(abs(Decimal(float(yi)) - true) / ulp))
    return np.array(errs)


def _samples(name, rng, n):
    if name == "exp":
        return np.concatenate([rng.uniform(-708, 709, n), rng.uniform(-1, 1, n),
                               rng.uniform(-745, -708, n // 8)])
    if name == "log":
        return np.concatenate([np.exp(rng.uniform(-700, 700, n)), rng.uniform(0.5, 2, n),
                               rng.uniform(0, 2.2e-308, n // 8)])
    return np.concatenate([rng.uniform(-1, 1, n), np.exp(rng.uniform(-700, 700, n)),
                           -np.exp(rng.uniform(-40, 0, n)), rng.uniform(-0.3, 0.42, n)])


CASES = {"exp": (V.vexp, lambda d: d.exp(), math.exp),
         "log": (V.vlog, lambda d: d.ln(), math.log),
         "log1p": (V.vlog1p, _ln1p, math.log1p)}


@pytest.mark.parametrize("name", list(CASES))
def test_error_below_one_ulp_of_the_true_value(name):
    """< 0.9 ulp on random samples over the whole domain (0.74, 0.83 and 0.82 the most measured; the
    functions are IEEE arithmetic only, so these are the same bits on every machine)."""
    f, ref, _ = CASES[name]
    x = _samples(name, np.random.default_rng(RNG_SEED), 1000)
    err = _true_ulps(_run(f, x), x, ref)
    assert err.max() < 0.9, (name, x[np.argmax(err)], err.max())


@pytest.mark.parametrize("name", list(CASES))
def test_within_an_ulp_of_the_c_library_on_dense_grids(name):
    """Faithful results differ from the C library's (faithful too) by at most one ulp; log1p gets
    two, for C libraries whose log1p errs by a whole ulp."""
    f, _, fn = CASES[name]
    grid = {"exp": np.linspace(-745.2, 709.8, 200_001),
            "log": np.concatenate([np.exp(np.linspace(-745, 709.7, 100_001)),
                                   np.linspace(0.5, 2.0, 100_001)]),
            "log1p": np.concatenate([np.linspace(-0.999, 3.0, 100_001),
                                     np.geomspace(1e-300, 1.0, 50_001),
                                     -np.geomspace(1e-300, 0.5, 50_001)])}[name]
    diff = _ulp_diff(_run(f, grid), _libm(fn, grid))
    assert diff.max() <= (2 if name == "log1p" else 1)
    assert np.mean(diff > 0) < 0.1  # mostly the same bits (glibc 2.36: 1.7 %, 3.8 %, 0.2 %)


def test_exp_edge_cases():
    tiny = np.nextafter(0.0, 1.0)
    x = [0.0, -0.0, tiny, -tiny, 1.0, math.inf, -math.inf, math.nan, 709.782712893384,
         709.7827128933841, -745.1332191019411, -745.1332191019412, -746.0, 1e308, -1e308]
    want = [1.0, 1.0, 1.0, 1.0, math.e, math.inf, 0.0, math.nan, 1.7976931348622732e308,
            math.inf, tiny, 0.0, 0.0, math.inf, 0.0]
    np.testing.assert_array_equal(_run(V.vexp, x), want)


def test_exp_underflows_where_the_c_library_does():
    """Gradual underflow: subnormal results within an ulp of libm's, 0 exactly where it gives 0."""
    x = np.linspace(-746.0, -707.0, 400_001)
    y, ref = _run(V.vexp, x), _libm(math.exp, x)
    np.testing.assert_array_equal(y == 0.0, ref == 0.0)
    assert _ulp_diff(y, ref).max() <= 1


def test_log_edge_cases():
    tiny = np.nextafter(0.0, 1.0)
    x = [0.0, -0.0, -1.0, -math.inf, math.inf, math.nan, 1.0, 2.0, 0.5, math.e, tiny,
         2.2250738585072014e-308, 1.7976931348623157e308]
    y = _run(V.vlog, x)
    np.testing.assert_array_equal(y[:10], [-math.inf, -math.inf, math.nan, math.nan, math.inf,
                                           math.nan, 0.0, math.log(2), -math.log(2), 1.0])
    assert _ulp_diff(y[10:], [math.log(v) for v in x[10:]]).max() <= 1


def test_log1p_edge_cases():
    tiny = np.nextafter(0.0, 1.0)
    x = [0.0, -0.0, -1.0, -1.5, -math.inf, math.inf, math.nan, tiny, -tiny, 1e-310, 1e-20,
         -1e-20, 2.0**-53]
    y = _run(V.vlog1p, x)
    np.testing.assert_array_equal(y[:7], [0.0, -0.0, -math.inf, math.nan, math.nan, math.inf,
                                          math.nan])
    assert np.signbit(y[1])
    np.testing.assert_array_equal(y[7:], x[7:])  # log1p(x) = x below 2^-53 (|x| rounded)
    big = [1.7976931348623157e308, 2.0**53, 1e16, -1 + 2.0**-53]
    assert _ulp_diff(_run(V.vlog1p, big), [math.log1p(v) for v in big]).max() <= 1


FUNCS = [(V.vexp, (), lambda r: r.uniform(-750, 712, 300)),
         (V.vexp_scaled, (-1.0,), lambda r: r.uniform(0, 800, 300)),
         (V.vlog, (), lambda r: np.exp(r.uniform(-740, 709, 300))),
         (V.vlog1p, (), lambda r: r.uniform(-1, 3, 300)),
         (V.vpow_pos, (0.7,), lambda r: r.uniform(0, 1e3, 300)),
         (V.vheavy_tail, (0.3,), lambda r: r.uniform(0, 1e4, 300)),
         (V.vumap_curve, (1.58, 0.9), lambda r: r.uniform(-1, 1e3, 300))]


@pytest.mark.parametrize("f, args, draw", FUNCS)
def test_same_bits_at_any_position_length_and_in_place(f, args, draw):
    """The vectorised body and the scalar remainder compute the same formula: a value's result
    does not depend on its offset, the array's length or in-place use; out[m:] is untouched."""
    x = draw(np.random.default_rng(RNG_SEED))
    full = _run(f, x, *args)
    for offset in range(6):
        for m in list(range(1, 19)) + [37, 64, 101]:
            xs = x[offset:offset + m]
            out = np.full(xs.size + 3, 7.0)
            f(xs, *args, out, xs.size)
            assert np.array_equal(out[:xs.size], full[offset:offset + m], equal_nan=True)
            assert np.all(out[xs.size:] == 7.0)
    inplace = x.copy()
    f(inplace, *args, inplace, 250)
    assert np.array_equal(inplace[:250], full[:250], equal_nan=True)
    np.testing.assert_array_equal(inplace[250:], x[250:])


def test_scalar_element_functions_match_the_array_ones():
    """exp1, log1, log1p1 and pow1 (for kernels' own fused loops) give the array functions' bits."""
    x = np.random.default_rng(RNG_SEED).uniform(-5, 5, 50)
    ax = np.abs(x)
    for scalar, vec, xs in ((V.exp1, V.vexp, x), (V.log1, V.vlog, ax), (V.log1p1, V.vlog1p, ax)):
        np.testing.assert_array_equal([scalar(v) for v in xs], _run(vec, xs))
    np.testing.assert_array_equal([V.pow1(v, 1.3) for v in ax], _run(V.vpow_pos, ax, 1.3))


def test_powers_and_kernel_weights():
    """``x^y``, the heavy-tailed and UMAP weights, to a relative error of about
    ``(1 + |y ln x|)`` ulps, as ``exp(y log x)`` with libm; the edge cases of ``x^y``."""
    rng = np.random.default_rng(RNG_SEED)
    x = np.exp(rng.uniform(-30, 30, 5000))
    for y in (0.5, 0.9, -1.0 / 0.3, 2.0):
        got, want = _run(V.vpow_pos, x, y), x ** y
        bound = (2.0 + np.abs(y * np.log(x))) * 2.0**-52
        assert np.all(np.abs(got - want) <= bound * want)
    np.testing.assert_array_equal(_run(V.vpow_pos, [0.0, math.inf, 1.0], 2.0), [0.0, math.inf, 1.0])
    assert _ulp_diff(_run(V.vpow_pos, [4.0, 9.0, 2.0], 2.0), [16.0, 81.0, 4.0]).max() <= 2
    assert _run(V.vpow_pos, [0.0], -2.0)[0] == math.inf
    assert _run(V.vpow_pos, [0.0, math.nan, 7.0], 0.0).tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(_run(V.vpow_pos, [-1.0, math.nan], 2.0)).all()
    d2 = np.concatenate([[0.0], rng.uniform(0, 1e4, 5000), [math.inf]])
    for alpha in (0.01, 0.5, 1.0, 8.0):
        want = np.exp(-np.log1p(alpha * d2) / alpha)
        np.testing.assert_allclose(_run(V.vheavy_tail, d2, alpha), want, rtol=1e-12, atol=0)
    want = np.where(d2 > 0, 1.0 / (1.0 + 1.58 * d2 ** 0.9), 1.0)
    np.testing.assert_allclose(_run(V.vumap_curve, np.concatenate([[-1.0], d2]), 1.58, 0.9),
                               np.concatenate([[1.0], want]), rtol=1e-14, atol=0)


# a row of the exact engine's weight sums (engines/exact_kernels.py's _row_weight_sum) for the
# Gaussian and heavy-tailed kernels: the math.* loops of today and the vectorised ones

@njit(error_model="numpy")
def libm_gaussian_row_sum(d2, m):
    for j in range(m):
        d2[j] = math.exp(-d2[j])
    return pairwise_sum(d2, m)


@njit(error_model="numpy")
def vec_gaussian_row_sum(d2, m):
    V.vexp_scaled(d2, -1.0, d2, m)
    return pairwise_sum(d2, m)


@njit(error_model="numpy")
def libm_heavy_row_sum(d2, alpha, m):
    inv_alpha = 1.0 / alpha
    for j in range(m):
        d2[j] = math.exp(-math.log1p(alpha * d2[j]) * inv_alpha)
    return pairwise_sum(d2, m)


@njit(error_model="numpy")
def vec_heavy_row_sum(d2, alpha, m):
    V.vheavy_tail(d2, alpha, d2, m)
    return pairwise_sum(d2, m)


def test_row_weight_sums_agree_with_the_libm_loops():
    rng = np.random.default_rng(RNG_SEED)
    y = rng.normal(scale=3.0, size=(2001, 2))
    d2 = ((y[1:] - y[0]) ** 2).sum(axis=1)
    m = d2.size
    np.testing.assert_allclose(vec_gaussian_row_sum(d2.copy(), m),
                               libm_gaussian_row_sum(d2.copy(), m), rtol=1e-14)
    for alpha in (0.1, 0.5, 2.0):
        np.testing.assert_allclose(vec_heavy_row_sum(d2.copy(), alpha, m),
                                   libm_heavy_row_sum(d2.copy(), alpha, m), rtol=1e-13)
