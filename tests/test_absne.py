"""AB-divergence SNE (docs/methods.md#ab-divergence) and the independent ("C++") perplexity
calibration (docs/original.md#independent-calibration-use_cpp)."""

import json
import math

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.affinity import AffinityRecipe, input_affinities
from smallvis.affinity.perplexity import calibrate_rows, calibrate_rows_independent
from smallvis.cli import main
from smallvis.engines import DenseEngine
from smallvis.io.data import InputData
from smallvis.io.preprocess import scale_input
from smallvis.methods import REGISTRY, build_method
from smallvis.methods.absne import select_branch


@pytest.fixture(scope="module")
def data(iris10):
    return InputData(scale_input(iris10, "absmax"))


@pytest.fixture(scope="module")
def Y():
    return np.random.default_rng(3).normal(size=(10, 2))


def evaluate(spec, data, Y, perplexity=5):
    method = build_method(spec, perplexity=perplexity)
    state = method.prepare(data)
    pcost, G = DenseEngine().evaluate(method, state, Y)
    return method, state, pcost.sum(), G


def row_entropy(V):
    P = V / V.sum(axis=1, keepdims=True)
    logP = np.log(np.where(P > 0, P, 1.0))
    return -(P * logP).sum(axis=1)


# --- A. independent calibration ---------------------------------------------------------------------


@pytest.mark.parametrize("U", [2.0, 5.0, 8.0])
def test_independent_calibration_reaches_each_perplexity(data, U):
    D2 = data.squared_distances()
    ind = calibrate_rows_independent(D2, np.full(10, U))
    ref = calibrate_rows(D2, np.full(10, U))
    assert not ind.failed.any() and ind.beta is None and ind.dint is None
    np.testing.assert_array_equal(np.diag(ind.V), 0.0)
    np.testing.assert_allclose(row_entropy(ind.V), math.log(U), atol=1e-5)
    # both paths meet the same tolerance from different starting points: close, not identical
    P_ind, P_ref = ind.P, ref.P
    assert not np.array_equal(P_ind, P_ref)
    np.testing.assert_allclose(P_ind, P_ref, atol=1e-4)


def test_independent_calibration_per_point_perplexities(data):
    U = np.linspace(2, 7, 10)
    ind = calibrate_rows_independent(data.squared_distances(), U)
    np.testing.assert_allclose(row_entropy(ind.V), np.log(U), atol=1e-5)


def test_independent_start_is_per_point(data):
    """Each row's result depends only on its own distances (no chaining from the previous point)."""
    D2 = data.squared_distances()
    full = calibrate_rows_independent(D2, np.full(10, 5.0))
    order = np.arange(10)[::-1]
    rev = calibrate_rows_independent(D2[np.ix_(order, order)], np.full(10, 5.0))
    np.testing.assert_allclose(rev.V, full.V[np.ix_(order, order)], rtol=1e-12, atol=0)
    # the R path chains the start values, so reordering the points changes it within the tolerance
    r_full = calibrate_rows(D2, np.full(10, 5.0)).V
    r_rev = calibrate_rows(D2[np.ix_(order, order)], np.full(10, 5.0)).V
    assert not np.allclose(r_rev, r_full[np.ix_(order, order)], rtol=1e-12, atol=0)


def test_independent_failure_fallback_includes_self():
    X = np.array([[0.0], [1.0], [2.0]])
    D2 = (X - X.T) ** 2
    # the middle point's two neighbours are equidistant: entropy >= log 2 > log 1.5
    cal = calibrate_rows_independent(D2, np.full(3, 1.5))
    assert cal.failed.tolist() == [False, True, False]
    np.testing.assert_array_equal(cal.V[1], [0.0, 1.0, 0.0])  # floor(1.5) = 1 smallest: itself
    # R path: 1/floor(U) on the nearest other points
    assert calibrate_rows(D2, np.full(3, 1.5)).V[1].tolist() == [1.0, 0.0, 0.0]
    # U = 2.5 > n - 1 fails everywhere; the 2 smallest entries include the point itself
    cal = calibrate_rows_independent(D2, np.full(3, 2.5))
    assert cal.failed.all()
    np.testing.assert_array_equal(cal.V, [[1, 1, 0], [1, 1, 0], [0, 1, 1]])


def test_recipe_calibration_field(data):
    r = input_affinities(data, 5, AffinityRecipe())
    i = input_affinities(data, 5, AffinityRecipe(calibration="independent"))
    assert r.beta is not None and i.beta is None and i.V is None and i.dint is None
    np.testing.assert_allclose(i.P, r.P, atol=1e-5)
    assert abs(i.P.sum() - 1) < 1e-12 and np.allclose(i.P, i.P.T)
    with pytest.raises(ValueError, match="perplexity calibration"):
        input_affinities(data, 5, AffinityRecipe(calibration="nonsense"))


def test_use_cpp_switches_bare_names_only():
    assert build_method("tsne", use_cpp=True).recipe.calibration == "independent"
    assert build_method("tsne").recipe.calibration == "r"
    assert build_method(("tsne", {}), use_cpp=True).recipe.calibration == "r"  # list form: ignored
    # a non-Gaussian input kernel is left alone
    assert build_method(("tsne", {"inp_kernel": "knn"}), use_cpp=True).recipe.calibration == "r"


def test_use_cpp_tsne_end_to_end(iris10):
    kw = dict(perplexity=5, random_state=1, ret_extra=["P"])
    r = smallvis(iris10, max_iter=300, **kw)
    c = smallvis(iris10, max_iter=300, use_cpp=True, **kw)
    assert not np.array_equal(c.P, r.P)
    np.testing.assert_allclose(c.P, r.P, atol=1e-6)
    final = list(r.itercosts.values())[-1]
    assert list(c.itercosts.values())[-1] == pytest.approx(final, rel=1e-4)
    # early on the coordinates differ only slightly (later the optimiser amplifies the difference)
    r10 = smallvis(iris10, max_iter=10, **kw).Y
    c10 = smallvis(iris10, max_iter=10, use_cpp=True, **kw).Y
    assert not np.array_equal(c10, r10)
    np.testing.assert_allclose(c10, r10, atol=1e-3 * np.abs(r10).max())
    # the (name, params) form does not receive use_cpp (docs/original.md#the-eps-rule)
    lst = smallvis(iris10, method=("tsne", {}), use_cpp=True, max_iter=300, **kw)
    np.testing.assert_array_equal(lst.Y, r.Y)


@pytest.mark.parametrize("extra", ["beta", "V", "dint"])
def test_use_cpp_extras_unavailable(iris10, extra):
    with pytest.raises(ValueError, match=f"'{extra}'.*independent perplexity calibration"):
        smallvis(iris10, perplexity=5, max_iter=1, use_cpp=True, ret_extra=[extra])


# --- B. branches ------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha, lam, branch", [
    (1.0, 1.0, "absneb0"), (0.5, 0.5, "absneb0"), (-2.0, -2.0, "absneb0"),
    (1.0, 0.0, "absneamb"), (0.5, 9e-6, "absneamb"), (-1.0, -9e-6, "absneamb"),
    (0.0, 1.0, "absnea0"), (9e-6, -0.5, "absnea0"),
    (0.0, 0.0, "absne00"), (9e-6, 9e-6, "absne00"), (-9e-6, -5e-6, "absne00"), (-9e-6, 5e-6, "absnea0"),
    (2.0, 0.5, "absne"), (0.5, 1.5, "absne"), (0.5, 1.0, "absne"), (-0.5, 0.5, "absne"),
    (2e-5, 1.0, "absne"), (1.0, 1.00002, "absne"), (1.0, 2e-5, "absne"),
])
def test_branch_selection(alpha, lam, branch):
    assert select_branch(alpha, lam).name == branch
    m = build_method(("absne", {"alpha": alpha, "lambda": lam}))
    assert m.branch.name == branch and m.name == "absne"
    assert m.params["alpha"] == alpha and m.params["lambda"] == lam
    # only the general case hard-wires the independent calibration
    assert m.recipe.calibration == ("independent" if branch == "absne" else "r")


def test_general_branch_nudges_as_the_original():
    # |alpha| == eps0 exactly is neither "> eps0" nor "< eps0": general, lambda nudged to +eps0
    b = select_branch(1e-5, 0.0)
    assert b.name == "absne" and b.lam == 1e-5 and b.beta == pytest.approx(-1e-5)
    s = build_method(("abssne", {"alpha": 0.0, "lambda": -3e-6})).branch
    assert (s.alpha, s.lam) == (1e-5, -1e-5) and s.beta == pytest.approx(-1e-5)


def test_absne_default_is_tsne(data, Y):
    _, _, c_t, G_t = evaluate("tsne", data, Y)
    m, _, c_a, G_a = evaluate("absne", data, Y)
    assert m.branch.name == "absneb0"
    assert c_a == pytest.approx(c_t, rel=1e-10)
    np.testing.assert_allclose(G_a, G_t, rtol=1e-10, atol=1e-12 * np.abs(G_t).max())


def test_absne_general_alpha_lambda_one_is_tsne_up_to_calibration(data, Y):
    """alpha = 1, lambda = 1 + 2e-5 is the general branch: t-SNE to O(beta), on the C++-style P."""
    _, _, c_t, G_t = evaluate("tsne", data, Y)
    m, _, c_g, G_g = evaluate(("absne", {"alpha": 1.0, "lambda": 1.00002}), data, Y)
    assert m.branch.name == "absne"
    assert c_g == pytest.approx(c_t, rel=1e-3)
    np.testing.assert_allclose(G_g, G_t, rtol=0, atol=1e-3 * np.abs(G_t).max())


def _cost(alpha, lam, data, Y):
    return evaluate(("absne", {"alpha": alpha, "lambda": lam}), data, Y)


@pytest.mark.parametrize("alpha", [1.0, 0.5, -0.7])
def test_continuity_lambda_zero(data, Y, alpha):
    """absneamb vs the general case next to it. The original's absneamb subtracts N (not N - 1) per
    point, so its cost is lower by n / alpha^2; gradients agree."""
    m0, _, c0, G0 = _cost(alpha, 0.0, data, Y)
    m1, _, c1, G1 = _cost(alpha, 2e-5, data, Y)
    assert (m0.branch.name, m1.branch.name) == ("absneamb", "absne")
    assert c1 == pytest.approx(c0 + 10 / alpha**2, rel=1e-3)
    np.testing.assert_allclose(G1, G0, atol=1e-3 * np.abs(G0).max())


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_continuity_beta_zero(data, Y, alpha):
    """absneb0 vs the general case next to it. The original's absneb0 constant is
    sum P log P^alpha (not P^alpha log P^alpha): an offset for alpha != 1; gradients agree."""
    m0, s0, c0, G0 = _cost(alpha, alpha, data, Y)
    m1, _, c1, G1 = _cost(alpha, alpha + 2e-5, data, Y)
    assert (m0.branch.name, m1.branch.name) == ("absneb0", "absne")
    Pc = np.maximum(s0.P, m0.eps)
    Pa = Pc**alpha
    np.fill_diagonal(Pa, 1.0)
    offset = np.sum((Pc - Pa) * np.log(Pa)) / alpha**2
    assert c1 == pytest.approx(c0 - offset, rel=1e-3)
    np.testing.assert_allclose(G1, G0, atol=1e-3 * np.abs(G0).max())


@pytest.mark.parametrize("near, far", [
    ((0.0, 1.0), (2e-5, 1.0)), ((0.0, 1.0), (-2e-5, 1.0)),  # absnea0 | general
    ((0.0, -0.5), (2e-5, -0.5)),
    ((0.0, 0.0), (3e-5, 5e-5)), ((0.0, 0.0), (2e-5, -1e-5)),  # absne00 | general
    ((0.0, 0.0), (0.0, 2e-5)),  # absne00 | absnea0
])
def test_continuity_alpha_zero(data, Y, near, far):
    m0, _, c0, G0 = _cost(*near, data, Y)
    m1, _, c1, G1 = _cost(*far, data, Y)
    assert m0.branch.name != m1.branch.name
    assert c1 == pytest.approx(c0, rel=1e-3)
    np.testing.assert_allclose(G1, G0, atol=1e-3 * np.abs(G0).max())


def test_branches_are_divergences(data):
    """Zero cost and zero gradient where Q = P (every branch and abssne) - up to the constant offsets
    of absneamb and absneb0 noted above."""
    from smallvis.methods.absne import ABEmbedding

    for alpha, lam in [(0.5, 1.5), (2.0, 0.5), (0.0, 1.0), (0.0, 0.0), (1.0, 1.0), (1.0, 0.0)]:
        m = build_method(("absne", {"alpha": alpha, "lambda": lam}), perplexity=5)
        assert isinstance(m, ABEmbedding)
        st = m.prepare(data)
        P = st.P.copy()
        consts = m.branch.constants(P, m.eps)
        pcost, A, sumA, _ = m.branch.pairs(P, consts, m.eps, 10, True)
        np.fill_diagonal(A, 0.0)
        np.testing.assert_allclose(A - P * sumA, 0.0, atol=1e-12)
        if m.branch.name not in ("absneamb", "absneb0"):
            assert abs(pcost.sum()) < 1e-8


def test_abssne_runs_and_differs_from_absne(data, Y):
    small = 0.1 * Y
    m, st, c, G = evaluate("abssne", data, small)
    assert m.kernel.name == "gaussian" and m.branch.name == "absne" and m.recipe.calibration == "r"
    assert np.isfinite(c) and np.all(np.isfinite(G))
    _, _, c_ssne, G_ssne = evaluate("ssne", data, small)
    # alpha = lambda = 1 (beta nudged to 1e-5, lambda left at 1 != alpha + beta) is SSNE up to
    # O(beta), except that the cost lacks the constant sum P log P and gains 1 (sum Q^lambda)
    Pc = np.maximum(st.P, m.eps)
    assert c == pytest.approx(c_ssne - np.sum(Pc * np.log(Pc)) + 1.0, rel=1e-3)
    np.testing.assert_allclose(G, G_ssne, atol=1e-3 * np.abs(G_ssne).max())


def test_exaggeration_multiplies_p(data, Y):
    m = build_method(("absne", {"alpha": 0.5, "lambda": 2.0}), perplexity=5)
    st = m.prepare(data)
    eng = DenseEngine()
    c1 = eng.evaluate(m, st, Y, 4.0)[0].sum()
    st2 = m.prepare(data)
    st2.P = 4.0 * st2.P
    c2 = eng.evaluate(m, st2, Y)[0].sum()
    assert c1 == pytest.approx(c2, rel=1e-12)
    assert eng.evaluate(m, st, Y)[0].sum() != pytest.approx(c1)  # cache is keyed by the factor


# --- end to end ---------------------------------------------------------------------------------------


def test_smallvis_absne_end_to_end(iris10):
    res = smallvis(iris10, method=("absne", {"alpha": 0.5, "lambda": 2}), perplexity=5,
                   max_iter=100, eta=50, random_state=1, ret_extra=["P", "Q"])
    assert res.Y.shape == (10, 2) and np.all(np.isfinite(res.Y))
    costs = list(res.itercosts.values())
    assert costs[-1] < costs[0] and np.isfinite(res.costs).all()
    assert res.Q.shape == (10, 10) and res.Q.sum() == pytest.approx(1.0)
    # general branch: P from the independent calibration, close to t-SNE's
    P_t = smallvis(iris10, perplexity=5, max_iter=0, ret_extra=["P"]).P
    assert not np.array_equal(res.P, P_t)
    np.testing.assert_allclose(res.P, P_t, atol=1e-5)


@pytest.mark.parametrize("method", ["absne", "abssne", ("absne", {"alpha": 0, "lambda": 0}),
                                    ("absne", {"alpha": 0, "lambda": 1}),
                                    ("absne", {"alpha": 1, "lambda": 0})])
def test_smallvis_other_branches_run(iris10, method):
    # Gaussian output on iris10 needs a small step (ssne diverges at eta = 500 too)
    res = smallvis(iris10, method=method, perplexity=5, max_iter=50, random_state=2,
                   Y_init="spca", eta=5, ret_extra=True)
    assert res.Y.shape == (10, 2) and np.all(np.isfinite(res.Y)) and not res.diverged
    costs = list(res.itercosts.values())
    assert costs[-1] <= costs[0]


def test_absne_default_string_equals_tsne_run(iris10):
    kw = dict(perplexity=5, max_iter=50, random_state=1)
    np.testing.assert_allclose(smallvis(iris10, method="absne", **kw), smallvis(iris10, **kw),
                               rtol=1e-6, atol=1e-9)


def test_cli_absne(tmp_path, capsys, iris10):
    src = tmp_path / "iris10.csv"
    np.savetxt(src, iris10, delimiter=",", header="a,b,c,d", comments="")
    out = tmp_path / "o.csv"
    assert main(["embed", str(src), "--method", "absne", "--param", "alpha=0.5", "--param",
                 "lambda=2", "--perplexity", "5", "--max-iter", "30", "--seed", "1", "--out",
                 str(out)]) == 0
    record = json.loads((tmp_path / "o.json").read_text())
    assert record["result"]["method_name"] == "absne"
    assert np.all(np.isfinite(np.loadtxt(out, delimiter=",", skiprows=1)))
    assert main(["embed", str(src), "--method", "absne", "--param", "alpha=0.5", "--perplexity",
                 "5", "--max-iter", "30", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["embed", str(src), "--method", "absne", "--param", "lambda=nan",
                 "--perplexity", "5", "--max-iter", "30"]) == 2
    err = capsys.readouterr().err
    assert "absne" in err and "lambda" in err


# --- registry and bad input ---------------------------------------------------------------------------


def test_registry_entries():
    for name in ("absne", "abssne"):
        spec = REGISTRY[name]
        assert spec.family == "ab-divergence" and spec.description
        assert spec.params["alpha"] == 1.0 and spec.params["lambda"] == 1.0
    branches = {select_branch(v.get("alpha", 1.0), v.get("lambda", 1.0)).name
                for v in ({},) + REGISTRY["absne"].fd_variants}
    assert branches == {"absneamb", "absneb0", "absnea0", "absne00", "absne"}


@pytest.mark.parametrize("method, params, match", [
    ("absne", {"alpha": float("nan")}, "'absne'.*'alpha'"),
    ("absne", {"lambda": float("inf")}, "'absne'.*'lambda'"),
    ("abssne", {"lambda": "big"}, "'abssne'.*'lambda'.*number"),
    ("abssne", {"alpha": -np.inf}, "'abssne'.*'alpha'"),
    ("absne", {"beta": 1.0}, "unknown parameter.*'beta'"),
    ("absne", {"symmetrize": "none"}, "symmetri"),
])
def test_bad_parameters(method, params, match):
    with pytest.raises(ValueError, match=match):
        build_method((method, params))


def test_absne_extras_in_general_branch(iris10):
    with pytest.raises(ValueError, match="'beta'.*independent"):
        smallvis(iris10, method=("absne", {"alpha": 2, "lambda": 0.5}), perplexity=5, max_iter=1,
                 ret_extra=["beta"])
    res = smallvis(iris10, method="absne", perplexity=5, max_iter=1, ret_extra=["beta"])
    assert res.beta.shape == (10,)
