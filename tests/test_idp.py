"""Intrinsic dimensionality, IDP and multiscale perplexities
(docs/original.md#intrinsic-dimensionality-and-idp, docs/original.md#multiscale-perplexities)."""

import numpy as np
import pytest

from smallvis import idp_perps, intrinsic_dimensionality, smallvis
from smallvis.affinity.idp import dint_from_affinities, dint_from_beta, first_maximum
from smallvis.affinity.perplexity import calibrate_rows, check_perplexity
from smallvis.io.distances import squared_distances


# --- the original's published behaviour --------------------------------------------------------

@pytest.mark.parametrize("n, expected", [(10, [4]), (150, [4, 8, 16, 32, 64]),
                                         (6000, [4, 8, 16, 32, 64, 128]), (20, [4, 8]),
                                         (4, [2]), (3, [2])])
def test_default_candidates(n, expected):
    np.testing.assert_array_equal(idp_perps(n), expected)


def test_idp_with_one_default_perplexity(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity="idp", ret_extra=True)
    assert res.perplexity == 4


def test_idp_with_given_candidates(iris10, iris10_Y):
    res = smallvis(iris10, Y_init=iris10_Y, perplexity=("idp", [2, 3, 4]), ret_extra=["idp"])
    assert res.perplexity == 3 and res.idp == 3


def test_first_local_maximum_rule():
    assert first_maximum([1.0, 2.0, 1.5, 3.0]) == 1  # stops at the first drop, not the global max
    assert first_maximum([1.0, 1.0, 2.0]) == 0  # "not above the best" also stops
    assert first_maximum([3.0]) == 0
    assert first_maximum([1.0, 2.0, 3.0]) == 2


# --- the analytic dimension ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def blob():
    return np.random.default_rng(4).normal(size=(200, 3))


def test_beta_form_equals_affinity_form_equals_calibration(blob):
    D2 = squared_distances(blob)
    cal = calibrate_rows(D2, check_perplexity(15, 200))
    off = ~np.eye(200, dtype=bool)
    D = D2[off].reshape(200, 199)
    V = cal.V[off].reshape(200, 199)
    np.testing.assert_allclose(dint_from_beta(D, cal.beta), dint_from_affinities(V), rtol=1e-9)
    np.testing.assert_allclose(dint_from_beta(D, cal.beta), cal.dint, rtol=1e-6)


def test_newton_calibration_agrees_with_the_r_path(blob):
    res = intrinsic_dimensionality(blob, [5, 15, 40])
    for k, u in enumerate([5, 15, 40]):
        cal = calibrate_rows(squared_distances(blob), check_perplexity(u, 200))
        np.testing.assert_allclose(res.beta[:, k], cal.beta, rtol=1e-3)
        np.testing.assert_allclose(res.dint[:, k], cal.dint, rtol=1e-3, atol=1e-6)
    off = ~np.eye(200, dtype=bool)
    D = squared_distances(blob)[off].reshape(200, 199)
    np.testing.assert_allclose(res.dint[:, 1], dint_from_beta(D, res.beta[:, 1]), rtol=1e-8)


def test_analytic_and_finite_difference_estimates_agree_on_smooth_data():
    X = np.random.default_rng(0).normal(size=(1500, 4))
    U = 2.0 ** np.linspace(3, 5, 9)
    res = intrinsic_dimensionality(X, U)
    mid = 0.5 * (res.mean_dint[1:] + res.mean_dint[:-1])
    np.testing.assert_allclose(res.dint_fd.mean(axis=0), mid, rtol=0.02)
    np.testing.assert_allclose(res.fd_perplexities, np.sqrt(U[1:] * U[:-1]))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_dimension_of_uniform_data(d):
    """delta ~ d for data filling d dimensions (edge effects lower it a little at this size)."""
    X = np.random.default_rng(d).uniform(size=(3000, d))
    res = intrinsic_dimensionality(X, [10, 20])
    assert abs(res.D - d) < 0.15 * d


def test_result_fields_and_classes(iris):
    labels = np.repeat(["a", "b", "c"], 50)
    res = intrinsic_dimensionality(iris, labels=labels)
    np.testing.assert_array_equal(res.perplexities, [4, 8, 16, 32, 64])
    assert res.dint.shape == (150, 5) and res.beta.shape == (150, 5)
    np.testing.assert_allclose(res.mean_dint, res.dint.mean(axis=0))
    assert res.D == res.mean_dint.max() and res.idp == res.perplexities[np.argmax(res.mean_dint)]
    assert set(res.class_idp) == {"a", "b", "c"} and res.class_mean_dint.shape == (3, 5)
    frame = res.to_frame()
    assert list(frame.columns[:2]) == ["perplexity", "mean_dint"] and len(frame) == 5
    assert "mean_dint[a]" in frame.columns


# --- multiscale --------------------------------------------------------------------------------

def test_multiscale_with_one_perplexity_is_that_perplexity(iris10, iris10_Y):
    one = smallvis(iris10, Y_init=iris10_Y, perplexity=("multiscale", [4]), ret_extra=["P"],
                   max_iter=20)
    plain = smallvis(iris10, Y_init=iris10_Y, perplexity=4, ret_extra=["P"], max_iter=20,
                     method=("tsne", {"inp_kernel": "gauss"}))
    np.testing.assert_allclose(one.P, plain.P, rtol=1e-12)
    np.testing.assert_allclose(one.Y, plain.Y, rtol=1e-9)
    assert one.perplexity == ("multiscale", [4.0])


def test_multiscale_is_the_mean_of_its_scales(iris10, iris10_Y):
    both = smallvis(iris10, perplexity=("multiscale", [3, 5]), ret_extra=["P"], max_iter=0)
    p3 = smallvis(iris10, perplexity=3, ret_extra=["P"], max_iter=0,
                  method=("tsne", {"inp_kernel": "gauss"})).P
    p5 = smallvis(iris10, perplexity=5, ret_extra=["P"], max_iter=0,
                  method=("tsne", {"inp_kernel": "gauss"})).P
    np.testing.assert_allclose(both.P, 0.5 * (p3 + p5), rtol=1e-12)


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("perplexity, match", [
    (("idp", []), "non-empty"),
    (("idp", [8, 4]), "strictly increasing"),
    (("multiscale", [2, 2]), "strictly increasing"),
    (("idp", [2, 10]), "too large for 10 points"),
    (("idp", [-1, 2]), "positive"),
    ("idq", "perplexity mode"),
    (("idp", [2], 3), "one list"),
])
def test_bad_perplexity_modes(iris10, perplexity, match):
    with pytest.raises(ValueError, match=match):
        smallvis(iris10, perplexity=perplexity, max_iter=1)


def test_idp_refuses_the_knn_kernel(iris10):
    with pytest.raises(ValueError, match="Gaussian input kernel"):
        smallvis(iris10, method=("tsne", {"inp_kernel": "knn"}), perplexity="idp", max_iter=1)


@pytest.mark.parametrize("perplexities, match", [([], "non-empty"), ([4, 4], "increasing"),
                                                  ([4, 200], "too large")])
def test_bad_candidates_for_intrinsic_dimensionality(iris, perplexities, match):
    with pytest.raises(ValueError, match=match):
        intrinsic_dimensionality(iris, perplexities)


# --- class-wise IDP ----------------------------------------------------------------------------

def test_class_idp_gives_a_per_point_perplexity_vector(iris):
    labels = np.repeat(["setosa", "versicolor", "virginica"], 50)
    res = smallvis(iris, perplexity=("idp-class", labels), ret_extra=["idp"], max_iter=5)
    U = np.asarray(res.perplexity)
    assert U.shape == (150,)
    ref = intrinsic_dimensionality(iris, labels=labels)
    for c in ("setosa", "versicolor", "virginica"):
        assert np.all(U[labels == c] == ref.class_idp[c])
    # the per-point vector then calibrates as a plain per-point perplexity would
    plain = smallvis(iris, perplexity=U, ret_extra=["P"], max_iter=0)
    again = smallvis(iris, perplexity=("idp-class", labels), ret_extra=["P"], max_iter=0)
    np.testing.assert_allclose(again.P, plain.P, rtol=1e-12)


@pytest.mark.parametrize("perplexity, match", [("idp-class", "needs the classes"),
                                               (("idp-class", [1, 2]), "one value per point")])
def test_bad_class_idp(iris10, perplexity, match):
    with pytest.raises(ValueError, match=match):
        smallvis(iris10, perplexity=perplexity, max_iter=1)


def test_knn_restricted_dimension_is_close_to_the_dense_one():
    X = np.random.default_rng(5).normal(size=(800, 3))
    dense = intrinsic_dimensionality(X, [5, 10, 20])
    knn = intrinsic_dimensionality(X, [5, 10, 20], n_neighbors=100)
    np.testing.assert_allclose(knn.mean_dint, dense.mean_dint, rtol=0.02)
    short = intrinsic_dimensionality(X, [5, 10, 20], n_neighbors=60)
    assert short.mean_dint[-1] < dense.mean_dint[-1]  # a truncated tail lowers the variance
    assert knn.idp == dense.idp
    with pytest.raises(ValueError, match="must exceed the largest candidate"):
        intrinsic_dimensionality(X, [5, 10, 20], n_neighbors=20)


@pytest.mark.parametrize("name, lo, hi", [("gauss2d", 1.8, 2.3), ("gauss5d", 3.8, 5.0),
                                          ("ball", 2.4, 3.1), ("sphere", 1.8, 2.2),
                                          ("swissroll", 1.8, 2.5)])
def test_dimensionality_of_the_synthetic_families(name, lo, hi):
    """The docs' picture: the estimate follows the dimension the data fill (underestimating a
    little at this size: edges and too few points for 5-D)."""
    from smallvis.datasets import load_dataset

    assert lo <= intrinsic_dimensionality(load_dataset(name).X).D <= hi


def test_intrinsic_dimensionality_bad_labels_and_metric(iris):
    with pytest.raises(ValueError, match="one value per point"):
        intrinsic_dimensionality(iris, labels=[1, 2, 3])
    with pytest.raises(ValueError, match="metric"):
        intrinsic_dimensionality(iris, metric="cosine")
    with pytest.raises(ValueError, match="at least 3 points"):
        intrinsic_dimensionality(iris[:2])
