"""vmath's expm1 (the AB-divergence's split powers on the exact engine): accuracy in ulps against
60-digit decimal references, agreement with NumPy's expm1, the edge cases, the same bits in a
vectorised loop at any position."""

import math
from decimal import Decimal, getcontext

import numpy as np

from smallvis._util.jit import njit
from smallvis._util.vmath import EXPM1_NEAR, expm1_1, expm1_near


@njit(cache=False)
def _run(x, out):
    for j in range(x.size):
        out[j] = expm1_1(x[j])


def _expm1(x):
    x = np.asarray(x, dtype=np.float64)
    out = np.full_like(x, -12345.0)
    _run(x, out)
    return out


def test_a_few_ulps_of_the_true_value():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1, 1, 2000), rng.uniform(-0.36, 0.36, 2000),
                        np.exp(rng.uniform(-20, 0, 500)), -np.exp(rng.uniform(-20, 0, 500)),
                        rng.uniform(-40, 40, 500), [0.3465735902799726, 0.3465735902799727,
                                                    -0.3465735902799726, -0.3465735902799727]])
    y = _expm1(x)
    getcontext().prec = 80
    errs = [float(abs(Decimal(float(yi)) - (Decimal(float(xi)).exp() - 1))
                  / Decimal(math.ulp(float(Decimal(float(xi)).exp() - 1))))
            for xi, yi in zip(x, y)]
    assert max(errs) < 3.0


def test_tiny_arguments_and_edges():
    tiny = np.exp(np.random.default_rng(8).uniform(-700, -20, 1000))
    for x in (tiny, -tiny):
        np.testing.assert_array_max_ulp(_expm1(x), np.expm1(x), maxulp=1)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, 700.0, -800.0, 710.0])
    np.testing.assert_array_equal(_expm1(edge), np.expm1(edge))
    assert np.signbit(_expm1(np.array([-0.0]))[0])
    assert np.isnan(_expm1(np.array([np.nan]))[0])


def test_same_bits_wherever_a_value_sits():
    x = np.random.default_rng(9).uniform(-2, 2, 37)
    whole = _expm1(x)
    for lo in (0, 1, 5):
        np.testing.assert_array_equal(_expm1(x[lo:]), whole[lo:])
    np.testing.assert_array_equal(np.array([_expm1(x[i:i + 1])[0] for i in range(37)]), whole)


@njit(cache=False)
def _run_near(x, out):
    for j in range(x.size):
        out[j] = expm1_near(x[j])


def test_the_polynomial_alone_gives_expm1s_bits_near_0():
    """``expm1_near`` is what ``expm1_1`` selects for ``|x| <= ln2/2``: a caller that knows its
    arguments are that small (abssne's ``q^1e-5``) skips the ``exp``."""
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.uniform(-EXPM1_NEAR, EXPM1_NEAR, 5000),
                        np.exp(rng.uniform(-700, -1.06, 1000)) * rng.choice([-1, 1], 1000),
                        [EXPM1_NEAR, -EXPM1_NEAR, 0.0, -0.0]])
    near = np.empty_like(x)
    _run_near(x, near)
    np.testing.assert_array_equal(near, _expm1(x))


def test_the_ab_divergences_gaussian_powers_take_the_polynomial_where_every_argument_is_near_0():
    """gauss_q_power (abssne's ``expm1(b log q)``, ``log q`` in ``[log eps, log(1/Z)]``): the same
    bits whether or not its bound lets it skip the ``exp``."""
    from smallvis.engines.exact_ab_kernels import gauss_q_power

    d2 = np.random.default_rng(11).exponential(40.0, 3001)
    d2[:3] = (0.0, 1e-300, 1e4)
    log_inv_z, log_eps = math.log(1.0 / 3.7e7), math.log(2.2e-16)
    for b in (1e-5, -1e-5, 1e-2, 0.3):  # the first two within the bound, the rest not
        out, x = np.empty_like(d2), d2.copy()
        gauss_q_power(x, out, b, True, log_inv_z, log_eps, d2.size)
        log_q = np.maximum(log_inv_z - d2, log_eps)
        np.testing.assert_array_equal(x, b * log_q)
        np.testing.assert_array_equal(out, _expm1(b * log_q))
