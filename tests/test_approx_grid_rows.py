"""Rows a grid does not resolve (issue 19): on the FFT engine a row-normalised Gaussian Q (nerv,
rsrnerv, jse, rsrjse) divides each row's all-pairs sums by the row's sum of weights, whose
interpolation error is absolute; a point far from every other used to get forces of 1e29 to 1e93
and charge its neighbours with them. Those rows are summed over every pair
(:func:`smallvis.engines.approx_nerv.exact_rows`)."""

import numba
import numpy as np
import pytest

from smallvis.engines import approx_nerv
from smallvis.engines.approx_terms import Sums
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.exact_kernels import kernel_params
from smallvis.engines.fft import FFTEngine
from smallvis.engines.radial_kernels import W
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import rel, x80

ROW_NORMALISED = ["nerv", "rsrnerv", "jse", "rsrjse"]


def _isolated(name, k):
    method = build_method(name, perplexity=5)
    sp = method.prepare_sparse(InputData(x80()), knn_method="exact")
    Y = np.random.default_rng(k).normal(scale=0.5, size=(80, k))
    Y[3] += 9.0  # its sum of weights ~1e-35
    Y[7] -= 4.0  # ~1e-7
    return method, sp, Y


@pytest.mark.parametrize("name", ROW_NORMALISED)
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_far_points_on_fft_match_barnes_hut_at_theta_0(name, k, factor):
    method, sp, Y = _isolated(name, k)
    cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, factor)
    engine = FFTEngine()
    summer = engine.radial(Y)
    S0 = summer.sums(Sums(1, kernel_params(), scalars=(W,)))[1][:, 0]
    assert {3, 7} <= set(approx_nerv.exact_rows(summer, S0).tolist())
    cf, Gf = engine.evaluate(method, sp, Y, factor)
    assert rel(Gf, Gb) < 2e-3
    assert abs(cf.sum() - cb.sum()) < 1e-4 * abs(cb.sum())
    for i in (3, 7):
        np.testing.assert_allclose(Gf[i], Gb[i], rtol=1e-3, atol=1e-3 * np.abs(Gb).max())


def test_a_tree_lists_no_row():
    method, sp, Y = _isolated("nerv", 2)
    summer = BarnesHutEngine(theta=0.5).radial(Y, 1e-12)
    assert approx_nerv.exact_rows(summer, np.zeros(80)).size == 0


@pytest.mark.parametrize("name", ["nerv", "jse"])
def test_the_rows_summed_apart_do_not_depend_on_the_number_of_threads(name):
    method, sp, Y = _isolated(name, 2)
    before = numba.get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            out.append(FFTEngine().evaluate(method, sp, Y, 1.0))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])


def test_rows_summed_apart_match_every_pair():
    """The scan along the first coordinate leaves out only weights under exp(-60) of a row's
    largest: the sums over every pair to rounding."""
    rng = np.random.default_rng(5)
    Y = rng.normal(scale=3.0, size=(400, 2))
    Y[:5] += 12.0 * rng.normal(size=(5, 2))
    rows = np.array([0, 1, 2, 3, 4, 17, 200], dtype=np.int64)
    log_norm, mass, rev, Fa, Fd = approx_nerv.row_sums(Y, rows, 1e-12)
    alpha, beta = rng.normal(size=7), rng.normal(size=7)
    C = approx_nerv.column_sums(Y, rows, log_norm, alpha, beta)
    C_all = np.zeros_like(Y)
    for r, i in enumerate(rows):
        dy = Y[i] - Y
        d2 = np.sum(dy * dy, axis=1)
        d2[i] = np.inf
        ln = np.log(np.sum(np.exp(-d2)))
        q = np.exp(-d2 - ln)
        d2[i] = 0.0  # q_ii = 0
        np.testing.assert_allclose(log_norm[r], ln, rtol=1e-12)
        np.testing.assert_allclose(mass[r], 1.0, rtol=1e-12)
        np.testing.assert_allclose(rev[r], np.sum(q * (-d2 - ln - np.log(1e-12))), rtol=1e-10)
        np.testing.assert_allclose(Fa[r], q @ dy, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(Fd[r], (d2 * q) @ dy, rtol=1e-10, atol=1e-14)
        C_all -= ((alpha[r] - beta[r] * d2) * q)[:, None] * dy
    np.testing.assert_allclose(C, C_all, rtol=1e-9, atol=1e-14 * np.abs(C_all).max())
