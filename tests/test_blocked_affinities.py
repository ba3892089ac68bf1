"""The blocked dense calibration and in-place scaling equal the reference NumPy path."""

import math
import tracemalloc

import numba
import numpy as np
import pytest

from smallvis.affinity import AffinityRecipe, input_affinities
from smallvis.affinity import calibration_kernels as ck
from smallvis.affinity.blocked import calibrate_dense
from smallvis.affinity.perplexity import (calibrate_rows, calibrate_rows_independent,
                                          check_perplexity)
from smallvis.affinity.scale import (effective_perplexity, scale_affinities_inplace,
                                     symmetrize)
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances

N = 300


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(7)
    centres = rng.normal(scale=4.0, size=(3, 6))
    return centres[rng.integers(0, 3, N)] + rng.normal(size=(N, 6))


def _reference_input(data: InputData, kernel: str) -> np.ndarray:
    """The matrix the R path calibrates (squared unless exp, or gaussian on distances)."""
    if kernel == "exp" or (kernel == "gaussian" and data.precomputed):
        return data.distances()
    return data.squared_distances()


def _assert_calibration(new, ref):
    np.testing.assert_array_equal(new.failed, ref.failed)
    np.testing.assert_allclose(new.V, ref.V, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(new.beta, ref.beta, rtol=1e-12)
    np.testing.assert_allclose(new.dint, ref.dint, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kernel", ["gaussian", "gauss", "exp"])
def test_blocked_equals_r_path(X, kernel):
    U = check_perplexity(25.0, N)
    ref = calibrate_rows(_reference_input(InputData(X), kernel), U)
    new = calibrate_dense(InputData(X), U, squared=kernel != "exp")
    _assert_calibration(new, ref)


def test_blocked_per_point_perplexity_and_precomputed(X):
    U = check_perplexity(np.linspace(5, 60, N), N)
    R = np.sqrt(squared_distances(X))
    for kernel, squared in [("gaussian", False), ("gauss", True)]:
        ref = calibrate_rows(_reference_input(InputData(R, precomputed=True), kernel), U)
        new = calibrate_dense(InputData(R, precomputed=True), U, squared=squared)
        _assert_calibration(new, ref)


def test_blocked_spans_blocks(X, monkeypatch):
    # the warm start runs on from one block to the next: tiny blocks give the same numbers
    from smallvis.affinity import blocked

    U = check_perplexity(15.0, N)
    one = calibrate_dense(InputData(X), U, squared=True)
    monkeypatch.setattr(blocked, "_BLOCK_ROWS", 7)
    many = calibrate_dense(InputData(X), U, squared=True)
    np.testing.assert_array_equal(many.beta, one.beta)
    np.testing.assert_allclose(many.V, one.V, rtol=1e-13, atol=1e-300)


def test_blocked_independent_equals_reference(X):
    U = check_perplexity(25.0, N)
    ref = calibrate_rows_independent(InputData(X).squared_distances(), U)
    new = calibrate_dense(InputData(X), U, squared=True, independent=True)
    assert new.beta is None and new.dint is None
    np.testing.assert_array_equal(new.failed, ref.failed)
    # each point's start is a sum in another order: the paths agree to the bisection's last bits
    np.testing.assert_allclose(new.V, ref.V, rtol=1e-11, atol=1e-300)


def test_independent_is_thread_count_independent(X):
    U = check_perplexity(25.0, N)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = calibrate_dense(InputData(X), U, squared=True, independent=True)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = calibrate_dense(InputData(X), U, squared=True, independent=True)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one.V, many.V)


@pytest.mark.parametrize("independent", [False, True])
def test_failed_calibrations_match_reference(independent):
    # equidistant points: the entropy does not depend on beta, every calibration fails
    X = np.eye(10)
    U = check_perplexity(5.0, 10)
    ref_fn = calibrate_rows_independent if independent else calibrate_rows
    ref = ref_fn(InputData(X).squared_distances(), U)
    new = calibrate_dense(InputData(X), U, squared=True, independent=independent)
    assert new.failed.all() and ref.failed.all()
    np.testing.assert_array_equal(new.V, ref.V)
    if not independent:
        np.testing.assert_array_equal(new.beta, ref.beta)  # the start value 1
        np.testing.assert_array_equal(new.dint, ref.dint)  # 0


RECIPES = [
    AffinityRecipe(),  # tsne
    AffinityRecipe(symmetrize="none", normalize=False),  # asne
    AffinityRecipe("exp", "mutual"),
    AffinityRecipe("gauss", "umap", row_normalize=2.5, normalize=False),
    AffinityRecipe(symmetrize="fuzzy", renormalize_rows=True),
    AffinityRecipe(calibration="independent"),
]


def _reference_P(V, recipe):
    """The scaling (docs/original.md#scaling-the-affinities) with whole-matrix NumPy expressions."""
    P = V.copy()
    if recipe.row_normalize is not False:
        r = 1.0 if recipe.row_normalize is True else recipe.row_normalize
        P = r * P / P.sum(axis=1, keepdims=True)
    P = symmetrize(P, recipe.symmetrize)
    if recipe.normalize:
        P = P / P.sum()
    if recipe.renormalize_rows:
        P = P / P.sum(axis=1, keepdims=True)
    return P


@pytest.mark.parametrize("recipe", RECIPES,
                         ids=lambda r: f"{r.kernel}-{r.symmetrize}-{r.calibration}")
def test_input_affinities_equal_reference(X, recipe):
    data = InputData(X)
    U = check_perplexity(20.0, N)
    if recipe.calibration == "independent":
        ref = calibrate_rows_independent(data.squared_distances(), U)
    else:
        ref = calibrate_rows(_reference_input(data, recipe.kernel), U)
    aff = input_affinities(InputData(X), 20.0, recipe)
    np.testing.assert_allclose(aff.P, _reference_P(ref.V, recipe), rtol=1e-11, atol=1e-300)
    if recipe.calibration == "r":
        np.testing.assert_allclose(aff.beta, ref.beta, rtol=1e-12)


def test_no_distance_matrix_is_cached(X):
    data = InputData(X)
    input_affinities(data, 20.0, AffinityRecipe())
    assert "D2" not in data._cache and "R" not in data._cache


def test_V_recomputed_on_demand_or_kept(X):
    lazy = input_affinities(InputData(X), 20.0, AffinityRecipe())
    kept = input_affinities(InputData(X), 20.0, AffinityRecipe(), frozenset({"V"}))
    np.testing.assert_array_equal(lazy.P, kept.P)
    assert kept.V is not kept.P
    np.testing.assert_array_equal(lazy.V, kept.V)  # the same calibration again
    assert lazy.V is lazy.V  # computed once
    assert np.all(np.diag(kept.V) == 0) and kept.V.max() <= 1.0


def test_degree_extras(X):
    names = frozenset({"V", "adegin", "adegout", "adegc", "pdeg"})
    aff = input_affinities(InputData(X), 20.0, AffinityRecipe(), names)
    np.testing.assert_array_equal(aff.extras["adegin"], aff.V.sum(axis=0))
    np.testing.assert_array_equal(aff.extras["adegout"], aff.V.sum(axis=1))
    np.testing.assert_allclose(aff.extras["adegc"], 0.5 * (aff.V.sum(axis=0) + aff.V.sum(axis=1)))
    np.testing.assert_array_equal(aff.extras["pdeg"], aff.P.sum(axis=0))


@pytest.mark.parametrize("how", ["none", "symmetric", "average", "mutual", "umap", "fuzzy"])
def test_tiled_symmetrisation_is_exact(how):
    # 600 rows: full tiles, a partial tile, and diagonal tiles
    P = np.random.default_rng(1).random((600, 600))
    expected = symmetrize(P, how)
    got = scale_affinities_inplace(P.copy(), symmetrize_how=how, row_normalize=False,
                                   normalize=False)
    np.testing.assert_array_equal(got, expected)
    if how != "none":
        np.testing.assert_array_equal(got, got.T)


def test_effective_perplexity_in_blocks():
    P = np.random.default_rng(2).random((600, 600))
    R = P / P.sum(axis=1, keepdims=True)
    expected = np.median(np.exp(-np.sum(R * np.log(R + np.finfo(float).eps), axis=1)))
    assert effective_perplexity(P) == pytest.approx(expected, rel=1e-14)


def test_distance_rows_equal_squared_distances(X):
    sq = np.einsum("ij,ij->i", X, X)
    G = X @ X.T
    ck.finish_distances(G, sq, 0, False)
    D2 = squared_distances(X)
    np.testing.assert_allclose(G, D2, rtol=0, atol=1e-12 * D2.max())
    assert np.all(np.diag(G) == 0) and G.min() >= 0


def test_exp_and_log_kernels_accuracy():
    rng = np.random.default_rng(3)
    d = np.concatenate([rng.uniform(0, 760, 200_000), [0.0, 1e-300, 708.4, 745.1, 745.2, 1e6]])
    w = np.empty_like(d)
    ck.exp_neg(1.0, d, w, np.empty(d.size, dtype=np.int64))
    ref = np.exp(-d)
    normal = ref >= np.finfo(float).tiny
    assert np.all(np.abs(w - ref)[normal] <= 2.5 * np.spacing(ref[normal]))
    assert np.all(np.abs(w - ref)[~normal] <= 2 * np.finfo(float).smallest_subnormal)
    x = np.exp(-rng.uniform(0, 700, 200_000)) + np.finfo(float).eps
    out = np.empty_like(x)
    ck.log_pos(x, out, np.empty(x.size, dtype=np.int64))
    ref = np.log(x)
    assert np.all(np.abs(out - ref) <= 2.5 * np.spacing(np.abs(ref)))


def test_peak_memory_is_one_matrix():
    # the numpy arrays alive at the peak: P (n x n) plus O(n) vectors, a block of X and a few
    # (256 x 256) tiles of the symmetrisation
    n = 1500
    X = np.random.default_rng(4).normal(size=(n, 10))
    input_affinities(InputData(X[:50]), 10.0, AffinityRecipe())  # compile / load the kernels
    tracemalloc.start()
    try:
        aff = input_affinities(InputData(X), 30.0, AffinityRecipe())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert math.isclose(aff.P.sum(), 1.0, rel_tol=1e-12)
    assert peak <= 8 * n * n + 4 * 2**20, peak / (8 * n * n)
