"""Smooth kNN distances ("skd" kernel, docs/original.md#smooth-knn-distances), the fuzzy set union
(docs/original.md#scaling-the-affinities) and the UMAP curve fit (docs/methods.md#the-umap-curve):
the original's published values, then properties and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.distance import cdist

import smallvis
from smallvis import fuzzy_set_union, smallvis as run_smallvis, smooth_knn_distances, umap_ab
from smallvis.affinity import AffinityRecipe, input_affinities
from smallvis.affinity.smooth_knn import knn_to_csr, knn_to_dense, smooth_knn_core
from smallvis.io.data import InputData


def sparse_matrix(entries, n=10):
    """Dense matrix from 1-based (row, column, value) entries, as the R tests write them."""
    M = np.zeros((n, n))
    for i, j, v in entries:
        M[i - 1, j - 1] = v
    return M


def assert_same_matrix(actual, expected, rtol):
    """Same non-zero pattern, values within ``rtol``."""
    np.testing.assert_array_equal(actual != 0, expected != 0)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)


# --- the original's published values (tests/testthat/test_smooth_knn_dist.R), iris[1:10, ] --------

SIGMA_K8 = [0.2567215, 0.22098923, 0.08285332, 0.09981823, 0.28608322, 0.17873764, 0.15968704,
            0.17134094, 0.25434113, 0.19572449]
SIGMA_K4 = [0.17993927, 0.20488739, 0.0493803, 0.09060478, 0.24940491, 0.00390625, 0.15367126,
            0.13551712, 0.24542618, 0.20633698]
RHO = [0.14142136, 0.17320508, 0.24494897, 0.24494897, 0.14142136, 0.6164414, 0.26457513, 0.17320508,
       0.3, 0.17320508]

# from UMAP's Python source (k = 4)
P_K4 = sparse_matrix([
    (1, 5, 1.0), (1, 8, 0.838084924053286), (1, 10, 0.1619080617920443),
    (2, 3, 0.5385624888941846), (2, 4, 0.46144714836635475), (2, 10, 1.0),
    (3, 2, 0.32796848436705417), (3, 4, 1.0), (3, 7, 0.6720321472619579),
    (4, 3, 1.0), (4, 9, 0.5446591215696793), (4, 10, 0.4553449084802392),
    (5, 1, 1.0), (5, 8, 0.7192644685443685), (5, 7, 0.28072806955243307),
    (6, 1, 1.0), (6, 5, 1.0), (6, 8, 5.128685589309561e-10),
    (7, 3, 1.0), (7, 4, 0.6462531113433841), (7, 8, 0.35375192447644943),
    (8, 1, 1.0), (8, 5, 0.6894084285873151), (8, 10, 0.3105906239414311),
    (9, 4, 1.0), (9, 3, 0.5748250840738938), (9, 2, 0.4251747827928667),
    (10, 2, 1.0), (10, 3, 0.4999980790544043), (10, 4, 0.49999807905434984),
])

# from UMAP's Python fuzzy_simplicial_set
P_UNION = sparse_matrix([
    (1, 5, 1.0), (1, 6, 1.0), (1, 8, 1.0), (1, 10, 0.1619080617920443),
    (2, 3, 0.6898994500416646), (2, 4, 0.46144714836635475), (2, 9, 0.4251747827928667), (2, 10, 1.0),
    (3, 2, 0.6898994500416646), (3, 4, 1.0), (3, 7, 1.0), (3, 9, 0.5748250840738938),
    (3, 10, 0.4999980790544043),
    (4, 2, 0.46144714836635475), (4, 3, 1.0), (4, 7, 0.6462531113433841), (4, 9, 1.0),
    (4, 10, 0.7276714079872907),
    (5, 1, 1.0), (5, 6, 1.0), (5, 7, 0.28072806955243307), (5, 8, 0.9128059101338203),
    (6, 1, 1.0), (6, 5, 1.0), (6, 8, 5.128685589309561e-10),
    (7, 3, 1.0), (7, 4, 0.6462531113433841), (7, 5, 0.28072806955243307), (7, 8, 0.35375192447644943),
    (8, 1, 1.0), (8, 5, 0.9128059101338203), (8, 6, 5.128685589309561e-10),
    (8, 7, 0.35375192447644943), (8, 10, 0.3105906239414311),
    (9, 2, 0.4251747827928667), (9, 3, 0.5748250840738938), (9, 4, 1.0),
    (10, 1, 0.1619080617920443), (10, 2, 1.0), (10, 3, 0.4999980790544043),
    (10, 4, 0.7276714079872907), (10, 8, 0.3105906239414311),
])

P_MIX_HALF = sparse_matrix([
    (1, 5, 1.0), (1, 6, 0.5), (1, 8, 0.9190424620266431), (1, 10, 0.08095403089602216),
    (2, 3, 0.43326548663061937), (2, 4, 0.23072357418317738), (2, 9, 0.21258739139643335),
    (2, 10, 1.0),
    (3, 2, 0.43326548663061937), (3, 4, 1.0), (3, 7, 0.836016073630979), (3, 9, 0.2874125420369469),
    (3, 10, 0.24999903952720215),
    (4, 2, 0.23072357418317738), (4, 3, 1.0), (4, 7, 0.3231265556716921), (4, 9, 0.7723295607848397),
    (4, 10, 0.4776714937672945),
    (5, 1, 1.0), (5, 6, 0.5), (5, 7, 0.14036403477621653), (5, 8, 0.7043364485658419),
    (6, 1, 0.5), (6, 5, 0.5), (6, 8, 2.5643427946547806e-10),
    (7, 3, 0.836016073630979), (7, 4, 0.3231265556716921), (7, 5, 0.14036403477621653),
    (7, 8, 0.17687596223822472),
    (8, 1, 0.9190424620266431), (8, 5, 0.7043364485658419), (8, 6, 2.5643427946547806e-10),
    (8, 7, 0.17687596223822472), (8, 10, 0.15529531197071555),
    (9, 2, 0.21258739139643335), (9, 3, 0.2874125420369469), (9, 4, 0.7723295607848397),
    (10, 1, 0.08095403089602216), (10, 2, 1.0), (10, 3, 0.24999903952720215),
    (10, 4, 0.4776714937672945), (10, 8, 0.15529531197071555),
])

P_INTERSECTION = sparse_matrix([
    (1, 5, 1.0), (1, 8, 0.838084924053286),
    (2, 3, 0.17663152321957415), (2, 10, 1.0),
    (3, 2, 0.17663152321957415), (3, 4, 1.0), (3, 7, 0.6720321472619579),
    (4, 3, 1.0), (4, 9, 0.5446591215696793), (4, 10, 0.22767157954729833),
    (5, 1, 1.0), (5, 8, 0.49586698699786347),
    (7, 3, 0.6720321472619579),
    (8, 1, 0.838084924053286), (8, 5, 0.49586698699786347),
    (9, 4, 0.5446591215696793),
    (10, 2, 1.0), (10, 4, 0.22767157954729833),
])

# local_connectivity = 1.5, k = 4
SIGMA_LC15 = [0.13976288, 0.11270523, 0.03319359, 0.05047989, 0.17582703, 0.00390625, 0.1002903,
              0.09278679, 0.14465714, 0.10316849]
RHO_LC15 = [0.15731322, 0.23660254, 0.25476205, 0.27247449, 0.18251408, 0.6164414, 0.29811881,
            0.19840594, 0.36794495, 0.24471642]
P_LC15 = sparse_matrix([
    (1, 5, 1.0), (1, 8, 0.8925204178669899), (1, 10, 0.10748447876830035),
    (2, 3, 0.569778945418246), (2, 4, 0.4302286057469135), (2, 10, 1.0),
    (3, 2, 0.255929829694113), (3, 4, 1.0), (3, 7, 0.7440613820135572),
    (4, 3, 1.0), (4, 9, 0.5796812988186044), (4, 10, 0.42031672929651537),
    (5, 1, 1.0), (5, 8, 0.7915905048023626), (5, 7, 0.20840631064514223),
    (6, 1, 1.0), (6, 5, 1.0), (6, 8, 5.128685589309561e-10),
    (7, 3, 1.0), (7, 4, 0.7157203287723206), (7, 8, 0.28427839448271264),
    (8, 1, 1.0), (8, 5, 0.762159337934477), (8, 10, 0.2378396564365533),
    (9, 2, 0.3748106659309435), (9, 3, 0.6251919975207915), (9, 4, 1.0),
    (10, 2, 1.0), (10, 3, 0.4999980790544043), (10, 4, 0.49999807905429533),
])

# published values have 8 significant digits; the sigmas are exact dyadic bisection values
SIG8 = dict(rtol=1e-7, atol=1e-9)


def test_published_k8(iris10):
    res = smooth_knn_distances(iris10, k=8)
    np.testing.assert_allclose(res.sigma, SIGMA_K8, **SIG8)
    np.testing.assert_allclose(res.rho, RHO, **SIG8)
    assert res.converged.all()


def test_published_k4(iris10):
    res = smooth_knn_distances(iris10, k=4)
    np.testing.assert_allclose(res.sigma, SIGMA_K4, **SIG8)
    np.testing.assert_allclose(res.rho, RHO, **SIG8)
    assert res.sigma[5] == 2.0**-8  # exact bisection value
    assert_same_matrix(res.P, P_K4, rtol=1e-11)


def test_published_distance_matrix(iris10):
    res = smooth_knn_distances(cdist(iris10, iris10), k=4, metric="precomputed")
    np.testing.assert_allclose(res.sigma, SIGMA_K4, **SIG8)
    np.testing.assert_allclose(res.rho, RHO, **SIG8)
    assert_same_matrix(res.P, P_K4, rtol=1e-11)


@pytest.mark.parametrize("mix, expected", [(1.0, P_UNION), (0.5, P_MIX_HALF), (0.0, P_INTERSECTION)])
def test_published_fuzzy_set_union(iris10, mix, expected):
    P = smooth_knn_distances(iris10, k=4).P
    result = fuzzy_set_union(P) if mix == 1.0 else fuzzy_set_union(P, set_op_mix_ratio=mix)
    assert_same_matrix(result, expected, rtol=1e-11)


def test_published_local_connectivity(iris10):
    res = smooth_knn_distances(iris10, k=4, local_connectivity=1.5)
    np.testing.assert_allclose(res.sigma, SIGMA_LC15, **SIG8)
    np.testing.assert_allclose(res.rho, RHO_LC15, **SIG8)
    assert_same_matrix(res.P, P_LC15, rtol=1e-11)


# --- the UMAP curve: the original's reference fits (R nls) --------------------------------------

UMAP_AB_REL = 3e-8  # what differs across CPUs and LAPACK builds, with a margin


@pytest.mark.parametrize("spread, min_dist, a, b", [
    (1.0, 0.001, 1.9290733961, 0.7915045335),
    (1.0, 0.1, 1.5769434605, 0.8950608782),
    (10.0, 0.01, 0.05038947019, 0.79150448310),
    (0.5, 1e-4, 5.7818652597, 0.7906969369),
])
def test_umap_ab_reference_fits(spread, min_dist, a, b):
    fit_a, fit_b = umap_ab(spread, min_dist)
    # The published values have 10 digits, but the fit's last digits depend on the CPU and LAPACK
    # (5e-9 apart on two machines). 3e-8 still tells nls's stopping point from the exact least-
    # squares minimum, which is 1e-7 to 1.5e-6 away (test_umap_ab_is_near_the_least_squares_fit).
    assert fit_a == pytest.approx(a, rel=UMAP_AB_REL)
    assert fit_b == pytest.approx(b, rel=UMAP_AB_REL)
    assert isinstance(fit_a, float) and isinstance(fit_b, float)


def test_umap_ab_defaults_and_cache():
    assert umap_ab() == umap_ab(1, 0.001) == umap_ab(spread=1.0, min_dist=0.001)
    assert umap_ab()[0] == pytest.approx(1.9290733961, rel=UMAP_AB_REL)


def test_umap_ab_is_near_the_least_squares_fit():
    """nls stops at a relative offset of 1e-5: close to, not at, the exact minimum."""
    from scipy.optimize import least_squares

    from smallvis.methods.umap_curve import umap_curve_target

    x, y = umap_curve_target(1.0, 0.001)
    exact = least_squares(lambda p: 1 / (1 + p[0] * x ** (2 * p[1])) - y, [1.0, 1.0],
                          xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    np.testing.assert_allclose(umap_ab(1.0, 0.001), exact, rtol=1e-5)


def test_umap_ab_small_spread_is_fitted_in_units_of_spread():
    # the original's fit fails from a = b = 1 here; b does not depend on the units, a scales
    a, b = umap_ab(0.1, 0.01)
    a1, b1 = umap_ab(1.0, 0.01 / 0.1)
    assert b == pytest.approx(b1, rel=1e-12)
    assert a == pytest.approx(a1 * 0.1 ** (-2 * b1), rel=1e-12)
    x = np.linspace(0, 0.3, 300)
    y = np.where(x < 0.01, 1.0, np.exp(-(x - 0.01) / 0.1))
    assert np.abs(1 / (1 + a * x ** (2 * b)) - y).max() < 0.1


@pytest.mark.parametrize("kw, pattern", [
    (dict(spread=0), r"spread must be a finite number > 0"),
    (dict(spread=-1), r"spread must be a finite number > 0"),
    (dict(spread=float("inf")), r"spread must be a finite number > 0"),
    (dict(spread="1"), r"spread must be a number"),
    (dict(min_dist=-0.1), r"min_dist must be a finite number >= 0"),
    (dict(min_dist=float("nan")), r"min_dist must be a finite number >= 0"),
    (dict(spread=1, min_dist=3), r"min_dist \(3\) must be less than 3 \* spread"),
    (dict(spread=1, min_dist=2.9), r"can't fit the UMAP curve parameters a, b for spread = 1, "
                                   r"min_dist = 2.9"),
])
def test_umap_ab_bad_input(kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        umap_ab(**kw)


# --- properties -------------------------------------------------------------------------------


def _membership_sums(res):
    """Sum over the k - 1 non-self neighbours of exp(-max(0, d - rho) / sigma): the bisection's sum."""
    shifted = np.maximum(0.0, res.knn_dists[:, 1:] - res.rho[:, None])
    return np.exp(-shifted / res.sigma[:, None]).sum(axis=1)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(5, 40), dim=st.integers(1, 5), seed=st.integers(0, 10**6),
       frac=st.floats(0.0, 1.0), bandwidth=st.sampled_from([1.0, 0.5, 1.5]))
def test_target_sum_is_reached(n, dim, seed, frac, bandwidth):
    X = np.random.default_rng(seed).normal(size=(n, dim))
    k = 2 + int(round(frac * (n - 2)))
    res = smooth_knn_distances(X, k, bandwidth=bandwidth)
    target = math.log2(k) * bandwidth
    floor = 1e-3 * res.knn_dists.mean(axis=1)
    ok = res.converged & (res.sigma > floor)
    np.testing.assert_allclose(_membership_sums(res)[ok], target, atol=1e-5)
    if bandwidth == 1.0:
        # the weights themselves: rows of P sum to log2(k)
        np.testing.assert_allclose(res.P.sum(axis=1)[ok], target, atol=1e-5)
    # rho is the nearest non-zero distance (local_connectivity = 1), column 0 is the point itself
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    np.testing.assert_allclose(res.rho, D.min(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(res.knn_indices[:, 0], np.arange(n))
    assert np.all(res.knn_dists[:, 0] == 0)
    # memberships: in [0, 1], 1 for the nearest neighbour, zero diagonal, k - 1 entries per row
    assert np.all((res.P >= 0) & (res.P <= 1))
    assert np.all(np.diag(res.P) == 0)
    assert np.all(res.P.max(axis=1) == 1.0)
    assert np.all((res.P > 0).sum(axis=1) <= k - 1)
    # precomputed distances give the same
    pre = smooth_knn_distances(cdist(X, X), k, metric="precomputed", bandwidth=bandwidth)
    np.testing.assert_allclose(pre.sigma, res.sigma, rtol=1e-10)
    np.testing.assert_allclose(pre.P, res.P, rtol=1e-9, atol=1e-14)


def test_sigmas_are_dyadic_bisection_values(iris10):
    res = smooth_knn_distances(iris10, k=5)
    for s in res.sigma:
        mantissa, _ = math.frexp(s)
        assert (mantissa * 2**40).is_integer()


def test_k_equal_n_uses_every_point(iris10):
    res = smooth_knn_distances(iris10, k=10)
    assert np.all((res.P > 0) == ~np.eye(10, dtype=bool))


def test_k2_one_neighbour_weight_one(iris10):
    res = smooth_knn_distances(iris10, k=2)
    assert np.all(res.sigma == 1.0)  # the sum is exactly log2(2) = 1 at the start
    assert np.all((res.P == 1).sum(axis=1) == 1) and np.all((res.P > 0).sum(axis=1) == 1)


def test_duplicates_rho_uses_first_non_zero_distance():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [0.0, 0.0]])
    for data, metric in ((X, "euclidean"), (cdist(X, X), "precomputed")):
        res = smooth_knn_distances(data, k=4, metric=metric)
        # the point itself comes first even though its duplicates are also at distance 0
        np.testing.assert_array_equal(res.knn_indices[:, 0], np.arange(6))
        np.testing.assert_array_equal(res.knn_indices[0], [0, 1, 5, 2])
        np.testing.assert_array_equal(res.knn_indices[5], [5, 0, 1, 2])
        assert res.rho[0] == res.rho[1] == res.rho[5] == 1.0
        assert res.rho[2] == 1.0 and res.rho[3] == 2.0
        # duplicates are full members of each other's neighbourhood
        assert res.P[0, 1] == res.P[0, 5] == res.P[5, 0] == 1.0
        assert np.all(np.diag(res.P) == 0)
        # 2 duplicates + the nearest non-zero neighbour already exceed log2(4) = 2: no sigma can
        # reach the target, the bisection runs out and sigma is floored at 1e-3 * the row mean
        assert not res.converged[0]
        assert res.sigma[0] == pytest.approx(1e-3 * np.mean([0.0, 0.0, 0.0, 1.0]))


def test_duplicates_only_rho_zero_uses_global_floor():
    X = np.array([[0.0], [0.0], [0.0], [5.0], [7.0]])
    res = smooth_knn_distances(X, k=3)
    assert res.rho[0] == 0.0 and res.rho[1] == 0.0
    assert res.sigma[0] == pytest.approx(1e-3 * res.knn_dists.mean())
    assert res.P[0, 1] == res.P[0, 2] == 1.0


def test_local_connectivity_edges(iris10):
    D = np.sort(cdist(iris10, iris10), axis=1)
    # 0: no shift at all
    assert np.all(smooth_knn_distances(iris10, 4, local_connectivity=0).rho == 0)
    # fractional below 1: a fraction of the nearest distance
    np.testing.assert_allclose(smooth_knn_distances(iris10, 4, local_connectivity=0.25).rho,
                               0.25 * D[:, 1], rtol=1e-12)
    # 2: the second nearest
    np.testing.assert_allclose(smooth_knn_distances(iris10, 4, local_connectivity=2).rho, D[:, 2],
                               rtol=1e-12)
    # more than the k - 1 neighbours: the largest neighbour distance
    np.testing.assert_allclose(smooth_knn_distances(iris10, 4, local_connectivity=7.5).rho,
                               D[:, 3], rtol=1e-12)


def test_sparse_and_dense_agree(iris10):
    res = smooth_knn_distances(iris10, k=5)
    S = res.sparse()
    assert S.format == "csr" and S.nnz == (res.P > 0).sum()
    np.testing.assert_array_equal(S.toarray(), res.P)
    np.testing.assert_array_equal(knn_to_csr(res.knn_indices, res.vals, 10).toarray(),
                                  knn_to_dense(res.knn_indices, res.vals, 10))
    for mix in (1.0, 0.3, 0.0):
        np.testing.assert_allclose(fuzzy_set_union(S, mix).toarray(), fuzzy_set_union(res.P, mix),
                                   rtol=1e-15, atol=1e-300)


def test_core_on_neighbour_arrays(iris10):
    res = smooth_knn_distances(iris10, k=4)
    sigma, rho, vals, converged = smooth_knn_core(res.knn_indices, res.knn_dists)
    np.testing.assert_array_equal(sigma, res.sigma)
    np.testing.assert_array_equal(vals, res.vals)
    assert np.all(vals[:, 0] == 0)


def test_deterministic_and_translation_invariant(ui10):
    # ui10 has no tied neighbour distances (iris10 has: rounding would decide which tied point is in)
    a = smooth_knn_distances(ui10, 5)
    b = smooth_knn_distances(ui10 + 100.0, 5)
    np.testing.assert_array_equal(a.P, smooth_knn_distances(ui10, 5).P)
    np.testing.assert_allclose(b.P, a.P, rtol=1e-9, atol=1e-12)


# --- the "skd" input kernel -----------------------------------------------------------------------


def test_skd_kernel_recipe(iris10):
    data = InputData(iris10)
    recipe = AffinityRecipe(kernel="skd", symmetrize="fuzzy", row_normalize=False, normalize=False)
    aff = input_affinities(data, 4, recipe, frozenset({"V"}))
    expected_V = smooth_knn_distances(iris10, 4).P
    np.testing.assert_array_equal(aff.V, expected_V)
    assert_same_matrix(aff.P, P_UNION, rtol=1e-11)
    assert aff.beta is None and aff.dint is None and aff.n_failed == 0
    umap_sym = input_affinities(data, 4, AffinityRecipe(kernel="skd", symmetrize="umap",
                                                        row_normalize=False, normalize=False))
    np.testing.assert_array_equal(umap_sym.P, aff.P)


def test_skd_kernel_never_row_normalises(iris10):
    data = InputData(iris10)
    plain = input_affinities(data, 4, AffinityRecipe(kernel="skd", symmetrize="fuzzy",
                                                     row_normalize=False, normalize=True))
    rownorm = input_affinities(data, 4, AffinityRecipe(kernel="skd", symmetrize="fuzzy",
                                                       row_normalize=True, normalize=True))
    np.testing.assert_array_equal(plain.P, rownorm.P)
    np.testing.assert_allclose(plain.P.sum(), 1.0)
    np.testing.assert_allclose(plain.P, P_UNION / P_UNION.sum(), rtol=1e-11)


def test_skd_kernel_through_smallvis(iris10):
    # the original's skdtsne: t-SNE on the normalised fuzzy union of smooth kNN memberships
    res = run_smallvis(iris10, method=("tsne", {"inp_kernel": "skd", "symmetrize": "fuzzy"}),
                       perplexity=4, max_iter=0, scale=None, ret_extra=["P", "V"])
    np.testing.assert_allclose(res.P, P_UNION / P_UNION.sum(), rtol=1e-11)
    assert_same_matrix(res.V, P_K4, rtol=1e-11)


def test_skd_kernel_bad_k(iris10):
    data = InputData(iris10)
    recipe = AffinityRecipe(kernel="skd", symmetrize="fuzzy", row_normalize=False, normalize=False)
    with pytest.raises(ValueError, match=r"perplexity = 30 neighbours .* too many for 10 points"):
        input_affinities(data, 30, recipe)
    with pytest.raises(ValueError, match=r"perplexity .* must be a whole number"):
        input_affinities(data, 4.5, recipe)
    with pytest.raises(ValueError, match=r"perplexity .* single whole number"):
        input_affinities(data, np.full(10, 4.0), recipe)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k, kw, pattern", [
    (1, {}, r"k \(number of neighbours .*\) must be at least 2; got 1"),
    (0, {}, r"k .* must be at least 2"),
    (11, {}, r"k = 11 neighbours \(the point itself included\) is too many for 10 points"),
    (4.5, {}, r"k .* must be a whole number; got 4.5"),
    (float("nan"), {}, r"k .* must be a whole number"),
    ("4", {}, r"k .* must be a single whole number; got '4'"),
    (True, {}, r"k .* must be a single whole number"),
    ([4], {}, r"k .* must be a single whole number"),
    (4, dict(local_connectivity=-1), r"local_connectivity must be a finite number >= 0"),
    (4, dict(local_connectivity=float("inf")), r"local_connectivity must be a finite number >= 0"),
    (4, dict(bandwidth=0), r"bandwidth must be a finite number > 0"),
    (4, dict(bandwidth=-1.0), r"bandwidth must be a finite number > 0"),
    (4, dict(n_iter=0), r"n_iter must be a whole number >= 1"),
    (4, dict(n_iter=2.5), r"n_iter must be a whole number >= 1"),
    (4, dict(tol=0), r"tol must be a finite number > 0"),
    (4, dict(min_k_dist_scale=-1e-3), r"min_k_dist_scale must be a finite number >= 0"),
    (4, dict(metric="cosine"), r"unknown metric 'cosine'"),
])
def test_bad_input(iris10, k, kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        smooth_knn_distances(iris10, k, **kw)


def test_bad_data():
    with pytest.raises(ValueError, match=r"square distance matrix"):
        smooth_knn_distances(np.ones((4, 3)), 2, metric="precomputed")
    X = np.ones((5, 2))
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN"):
        smooth_knn_distances(X, 2)
    with pytest.raises(ValueError, match=r"2-D"):
        smooth_knn_distances(np.arange(5.0), 2)


@pytest.mark.parametrize("mix", [-0.1, 1.5, float("nan"), "half"])
def test_fuzzy_set_union_bad_mix(mix):
    with pytest.raises(ValueError, match=r"set_op_mix_ratio must be between 0 and 1"):
        fuzzy_set_union(np.eye(3), mix)


def test_top_level_exports():
    for name in ("smooth_knn_distances", "fuzzy_set_union", "umap_ab"):
        assert name in smallvis.__all__ and callable(getattr(smallvis, name))
