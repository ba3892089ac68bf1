"""The exact engine's split row loops (exact_row_kernels) and g-SNE's two-pass evaluation (exact_sum):
the generated kernels' bits where promised, the dense engine's numbers everywhere."""

import numpy as np
import pytest

from smallvis.engines import ExactEngine
from smallvis.engines import exact_sum
from smallvis.engines.exact_kernels import add_pair_forces, kernel_params
from smallvis.engines.exact_row_kernels import (add_kl_forces_2d, add_two_forces_2d,
                                                rational_power, row_costly_weights,
                                                row_costly_weights_inplace)
from smallvis.engines.output_kernel_dispatch import row_weights_grads, row_weights_inplace
from smallvis.engines.output_kernel_functions import (GAUSSIAN_KERNEL, HEAVY_TAILED_KERNEL,
                                                      POWER_HEAVY_KERNEL, T_KERNEL, TDOF_KERNEL,
                                                      UMAP_KERNEL)
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import assert_same, x60


def _d2(m=1001):
    d2 = np.random.default_rng(5).exponential(30.0, size=m)
    d2[:4] = (0.0, 1e-300, 1e-12, 1e6)
    return d2


def _both(code, kp, d2):
    m = d2.size
    w1, g1, w2, g2 = (np.full(m, np.nan) for _ in range(4))
    row_costly_weights(code, kp, d2, w1, g1, m)
    row_weights_grads(code, kp, d2, w2, g2, m)
    return w1, g1, w2, g2


@pytest.mark.parametrize("code, kp", [
    (HEAVY_TAILED_KERNEL, kernel_params(alpha=0.7)), (HEAVY_TAILED_KERNEL, kernel_params(alpha=1e-8)),
    (HEAVY_TAILED_KERNEL, kernel_params(alpha=2.0)),
    (UMAP_KERNEL, kernel_params(a=1.58, b=0.9, gr_eps=0.1)), (UMAP_KERNEL, kernel_params(a=1.9, b=1.0)),
    (UMAP_KERNEL, kernel_params(a=0.6, b=2.0, gr_eps=0.0)), (T_KERNEL, kernel_params()),
    (POWER_HEAVY_KERNEL, kernel_params(alpha=1.0, b=1.0)),
    (POWER_HEAVY_KERNEL, kernel_params(alpha=-2.0, b=0.7)),
    (TDOF_KERNEL, kernel_params(dof=0.5)), (TDOF_KERNEL, kernel_params(dof=3.0)),
    (TDOF_KERNEL, kernel_params(dof=1.0)), (TDOF_KERNEL, kernel_params(dof=1e-3))])
def test_split_loops_give_the_generated_kernels_bits(code, kp):
    w1, g1, w2, g2 = _both(code, kp, _d2())
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize("code, kp", [
    (UMAP_KERNEL, kernel_params(a=1.58, b=0.9)), (UMAP_KERNEL, kernel_params(a=1.9, b=1.0)),
    (POWER_HEAVY_KERNEL, kernel_params(alpha=0.5)), (POWER_HEAVY_KERNEL, kernel_params(alpha=-2.0)),
    (POWER_HEAVY_KERNEL, kernel_params(alpha=1.0)), (TDOF_KERNEL, kernel_params(dof=0.5)),
    (TDOF_KERNEL, kernel_params(dof=3.0)), (HEAVY_TAILED_KERNEL, kernel_params(alpha=0.7)),
    (GAUSSIAN_KERNEL, kernel_params()), (T_KERNEL, kernel_params())])
def test_split_weights_in_place_give_the_generated_kernels_bits(code, kp):
    d2 = _d2()
    split, generated = d2.copy(), d2.copy()
    row_costly_weights_inplace(code, kp, split, d2.size)
    row_weights_inplace(code, kp, generated, d2.size)
    np.testing.assert_array_equal(split, generated)


@pytest.mark.parametrize("alpha, n", [(1.0, 1), (0.5, 2), (1.0 / 3.0, 3), (0.25, 4), (0.2, 0),
                                      (0.7, 0), (2.0, 0)])
def test_heavy_tailed_weights_are_powers_of_the_gradient_factor_where_one_over_alpha_is_small(
        alpha, n):
    """hssne's default alpha 0.5: ``(1 + alpha x)^-2`` as ``r * r``, no ``exp`` or ``log1p``,
    within a few ulps of the generated kernel; in place and not the same bits."""
    assert rational_power(alpha) == n
    d2 = _d2()
    kp = kernel_params(alpha=alpha)
    w1, g1, w2, g2 = _both(HEAVY_TAILED_KERNEL, kp, d2)
    in_place = d2.copy()
    row_costly_weights_inplace(HEAVY_TAILED_KERNEL, kp, in_place, d2.size)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(in_place, w1)
    if n:
        powers = {1: g1, 2: g1 * g1, 3: g1 * g1 * g1, 4: (g1 * g1) * (g1 * g1)}
        np.testing.assert_array_equal(w1, powers[n])
        np.testing.assert_allclose(w1, w2, rtol=1e-14, atol=0.0)
    else:
        np.testing.assert_array_equal(w1, w2)


@pytest.mark.parametrize("alpha, b", [(0.5, 0.5), (0.6, 0.6), (0.3, 0.4), (1.7, 1.5), (0.6, 0.5)])
def test_power_form_from_one_log(alpha, b):
    """dhssne's weights keep their bits; ``g = w^b`` from the same log is within a few ulps of
    ``pow(w, b)`` (exactly ``1 / (alpha x + 1)`` for ``b = alpha``)."""
    d2 = _d2()
    w1, g1, w2, g2 = _both(POWER_HEAVY_KERNEL, kernel_params(alpha=alpha, b=b), d2)
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_allclose(g1, g2, rtol=4e-15, atol=0.0)
    if b == alpha:
        np.testing.assert_array_equal(g1, 1.0 / (alpha * d2 + 1.0))


@pytest.mark.parametrize("m", [0, 1, 7, 9, 300])
def test_2d_force_pairs_in_one_loop_give_the_same_bits(m):
    """Two force sums in one loop: the bits of a loop per sum and dimension."""
    rng = np.random.default_rng(m)
    i = 2
    n = m + i + 1
    Yt = rng.normal(size=(2, n))
    ka, kb, prow, w, g = (rng.normal(size=n) for _ in range(5))

    def buffers():
        return [np.linspace(-1.0, 1.0, 2 * n).reshape(2, n) for _ in range(2)]

    ref = buffers()
    add_pair_forces(Yt, i, ka, ref[0], m, np.empty(n))
    add_pair_forces(Yt, i, kb, ref[1], m, np.empty(n))
    two = buffers()
    add_two_forces_2d(Yt, i, ka, kb, two[0], two[1], m, *(np.empty(n) for _ in range(4)))
    np.testing.assert_array_equal(np.array(two), np.array(ref))
    # the one-pass KL's: attraction 4 f P g, repulsion 4 w g
    f4 = 4.0 * 1.7
    kl = buffers()
    add_kl_forces_2d(Yt, i, f4, prow, w, g, kl[0], kl[1], m,
                     *(np.empty(n) for _ in range(4)))
    ref = buffers()
    add_pair_forces(Yt, i, f4 * prow[:m] * g[:m], ref[0], m, np.empty(n))
    add_pair_forces(Yt, i, 4.0 * w[:m] * g[:m], ref[1], m, np.empty(n))
    np.testing.assert_array_equal(np.array(kl), np.array(ref))


@pytest.fixture(scope="module")
def X60():
    return x60()


@pytest.mark.parametrize("lam", [1.0, 0.01, 10.0])
def test_gsne_in_two_passes(X60, lam, monkeypatch):
    """g-SNE's two passes: the term-by-term costs bit for bit, its gradient to rounding, in 1-3
    dimensions, exaggerated or not; the fused route is the one taken."""
    method = build_method(("gsne", {"lambda": lam}), perplexity=10)
    state = method.prepare(InputData(X60))
    taken = []
    fused = exact_sum.evaluate_gsne

    def spy(*a, **kw):
        taken.append(True)
        return fused(*a, **kw)

    for k in (1, 2, 3):
        Y = np.random.default_rng(k).normal(scale=3.0, size=(X60.shape[0], k))
        for f in (1.0, 4.0):
            monkeypatch.setattr(exact_sum, "evaluate_gsne", spy)
            two = ExactEngine().evaluate(method, state, Y, f)
            monkeypatch.setattr(exact_sum, "is_gsne", lambda form, plans: False)
            terms = ExactEngine().evaluate(method, state, Y, f)
            monkeypatch.undo()
            np.testing.assert_array_equal(two[0], terms[0])
            assert_same(terms, two, rtol=1e-12)
    assert len(taken) == 6


def test_only_gsne_takes_the_two_passes(X60):
    from smallvis.methods.base import FusedForm, SumForm

    method = build_method("gsne", perplexity=10)
    state = method.prepare(InputData(X60))
    form = method.fused_form(state)
    plans = (("kl", None, None), ("kl", None, None))
    assert exact_sum.is_gsne(form, plans)
    assert not exact_sum.is_gsne(form, (("kl", None, None), ("kl-general", None, None)))
    t = FusedForm(0)
    assert not exact_sum.is_gsne(SumForm(((1.0, t), (1.0, t))), plans)
    assert not exact_sum.is_gsne(SumForm(((2.0, t), form.terms[1])), plans)
