"""NCVis, exact version: the NCE cost at fixed and profiled log-normaliser, the method, the power init."""

import numpy as np
from engine_checks import numeric_gradient
import pytest
from scipy import sparse

from smallvis import smallvis
from smallvis.engines import DenseEngine
from smallvis.engines.dense import force_gradient
from smallvis.run.init import power_iteration_init, resolve_init
from smallvis.io.data import InputData
from smallvis.io.distances import squared_distances
from smallvis.io.preprocess import scale_input
from smallvis.methods import build_method
from smallvis.methods.ncvis import nce_terms, solve_logz
from smallvis.methods.umap_curve import umap_ab

A, B = umap_ab(1.0, 0.4)


@pytest.fixture(scope="module")
def data(iris10):
    return InputData(scale_input(iris10, "absmax"))


@pytest.fixture(scope="module")
def knn_P(data):
    """The method's P on iris10 with 5 neighbours: the union graph has unequal degrees."""
    m = build_method("ncvis", perplexity=5)
    P = m.prepare(data).P
    assert np.ptp(P.sum(axis=1)) > 0
    return P


@pytest.fixture(scope="module")
def random_P():
    """A dense, non-symmetric P with very unequal rows (nce_terms makes no symmetry assumption)."""
    rng = np.random.default_rng(3)
    P = rng.random((10, 10)) * rng.random(10)[:, None] ** 3
    np.fill_diagonal(P, 0.0)
    return P / P.sum()


@pytest.fixture(scope="module")
def Y():
    return np.random.default_rng(7).normal(scale=0.7, size=(10, 2))


def _cost(Y, P, Q, **kw):
    return float(np.sum(nce_terms(squared_distances(Y), P, Q, **kw)[0]))


def _numeric_gradient(f, Y, h=1e-6):
    return numeric_gradient(f, Y, h=h)


KW = [dict(a=A, b=B, nu=5, corrected=False), dict(a=A, b=B, nu=5, corrected=True),
      dict(a=1.58, b=0.895, nu=1, corrected=True), dict(a=1.58, b=0.895, nu=10, corrected=False)]


@pytest.mark.parametrize("kw", KW, ids=lambda kw: f"nu={kw['nu']}-b={kw['b']:.3g}-"
                         f"{'corrected' if kw['corrected'] else 'reference'}")
@pytest.mark.parametrize("which", ["knn", "random"])
def test_nce_terms_derivatives_at_fixed_Q(knn_P, random_P, Y, kw, which):
    P = knn_P if which == "knn" else random_P
    d2 = squared_distances(Y)
    Q = solve_logz(d2, P, **kw) + 0.3  # away from the optimum, so dC/dQ is not zero
    pcost, K, dC_dQ = nce_terms(d2, P, Q, **kw)
    np.testing.assert_allclose(K, K.T)
    assert pcost.shape == (10,) and np.all(np.isfinite(pcost))
    h = 1e-5
    fd_Q = (_cost(Y, P, Q + h, **kw) - _cost(Y, P, Q - h, **kw)) / (2 * h)
    assert abs(dC_dQ) > 1e-3
    assert dC_dQ == pytest.approx(fd_Q, rel=1e-7)
    G = force_gradient(K, Y)
    G_fd = _numeric_gradient(lambda Z: _cost(Z, P, Q, **kw), Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-6, atol=1e-9 * np.abs(G_fd).max())


def test_nce_terms_cost_is_the_formula(random_P, Y):
    """The log-space evaluation equals the cost written out directly."""
    P, n, nu, Q = random_P, 10, 5, 4.0
    d2 = squared_distances(Y)
    q = np.exp(-Q) / (1.0 + A * d2**B)
    s = np.repeat(P.sum(axis=1)[:, None] / (n - 1), n, axis=1)
    off = ~np.eye(n, dtype=bool)
    for corrected in (False, True):
        pi = s if corrected else np.full((n, n), 1.0 / (n * (n - 1)))
        pair = -(P * np.log(q / (q + nu * pi)) + nu * s * np.log(nu * pi / (q + nu * pi)))
        expected = np.where(off, pair, 0.0).sum(axis=1)
        pcost = nce_terms(d2, P, Q, a=A, b=B, nu=nu, corrected=corrected)[0]
        np.testing.assert_allclose(pcost, expected, rtol=1e-12)


@pytest.mark.parametrize("corrected", [False, True])
def test_profile_optimum(knn_P, Y, corrected):
    kw = dict(a=A, b=B, nu=5, corrected=corrected)
    d2 = squared_distances(Y)
    Q = solve_logz(d2, knn_P, **kw)
    assert abs(nce_terms(d2, knn_P, Q, **kw)[2]) < 1e-12
    C = _cost(Y, knn_P, Q, **kw)
    for dq in (-0.1, 0.1, -1e-3, 1e-3):
        assert C < _cost(Y, knn_P, Q + dq, **kw)
    # the same root from far-away starting points (the warm start only saves work)
    for start in (Q - 40.0, Q + 40.0, Q + 1e-9, None):
        assert solve_logz(d2, knn_P, **kw, Q0=start) == pytest.approx(Q, abs=1e-12)


def test_many_noise_samples_make_Q_the_log_normaliser(knn_P, Y):
    """As nu -> infinity NCE becomes self-normalising: in the corrected form Q* -> log sum qhat
    (q then sums to 1 like P); in the reference form, with pi the constant 1/(n(n-1)) but noise drawn
    from s, Q* -> log(n sum_ij p_i qhat_ij), the degree-weighted normaliser."""
    d2 = squared_distances(Y)
    n = 10
    qhat = 1.0 / (1.0 + A * d2**B)
    np.fill_diagonal(qhat, 0.0)
    rows = knn_P.sum(axis=1)
    for nu in (1e6, 1e8):
        Q_corr = solve_logz(d2, knn_P, a=A, b=B, nu=nu, corrected=True)
        Q_ref = solve_logz(d2, knn_P, a=A, b=B, nu=nu, corrected=False)
        tol = 1.0 / nu  # the gap is O(1 / nu) (about 0.27 / nu here)
        assert Q_corr == pytest.approx(np.log(qhat.sum()), abs=tol)
        assert Q_ref == pytest.approx(np.log(n * np.sum(rows[:, None] * qhat)), abs=tol)
    # ... and not for small nu
    Q5 = solve_logz(d2, knn_P, a=A, b=B, nu=5, corrected=True)
    assert abs(Q5 - np.log(qhat.sum())) > 1e-3


def _regular_P(n=10, k=4):
    """A circulant graph: every point linked to its k nearest on a ring (all degrees k)."""
    V = np.zeros((n, n))
    for i in range(n):
        for j in range(1, k // 2 + 1):
            V[i, (i + j) % n] = V[i, (i - j) % n] = 1.0
    return V / V.sum()


def test_reference_and_corrected_agree_on_a_regular_graph(Y):
    d2 = squared_distances(Y)
    P = _regular_P()
    for nu in (1, 5):
        kw = dict(a=A, b=B, nu=nu)
        Q_ref = solve_logz(d2, P, corrected=False, **kw)
        Q_cor = solve_logz(d2, P, corrected=True, **kw)
        assert Q_ref == pytest.approx(Q_cor, abs=1e-12)
        ref = nce_terms(d2, P, Q_ref, corrected=False, **kw)
        cor = nce_terms(d2, P, Q_cor, corrected=True, **kw)
        np.testing.assert_allclose(ref[0], cor[0], rtol=1e-12)
        np.testing.assert_allclose(ref[1], cor[1], rtol=1e-10, atol=1e-14)


def test_reference_and_corrected_differ_when_degrees_differ(data, Y):
    ref = build_method(("ncvis", {"corrected": False}), perplexity=5)
    cor = build_method(("ncvis", {"corrected": True}), perplexity=5)
    s_ref, s_cor = ref.prepare(data), cor.prepare(data)
    np.testing.assert_array_equal(s_ref.P, s_cor.P)
    c_ref, g_ref = DenseEngine().evaluate(ref, s_ref, Y)
    c_cor, g_cor = DenseEngine().evaluate(cor, s_cor, Y)
    assert abs(c_ref.sum() - c_cor.sum()) > 1e-4
    assert np.abs(g_ref - g_cor).max() > 1e-3 * np.abs(g_ref).max()
    assert abs(ref.export(s_ref, "logZ", Y) - cor.export(s_cor, "logZ", Y)) > 1e-4


def test_method_affinities_parameters_and_exports(data, Y):
    m = build_method("ncvis", perplexity=5)
    assert m.perplexity() == 5 and m.params["n_neighbors"] == 5
    assert build_method("ncvis").perplexity() == 15
    assert m.params["noise_ratio"] == 5 and m.params["corrected"] is False
    assert m.params["noise_plan"] == "cubic" and m.params["alpha_Q"] == 1.0
    assert m.params["n_init_epochs"] == 20
    assert (m.params["a"], m.params["b"]) == umap_ab(1.0, 0.4)
    state = m.prepare(data)
    P = state.P
    # the OR of the binary 5-NN graph, normalised to sum 1
    idx = data.knn(5)
    V = np.zeros((10, 10))
    np.put_along_axis(V, idx, 1.0, axis=1)
    V = np.maximum(V, V.T)
    np.testing.assert_allclose(P, V / V.sum(), rtol=1e-14)
    # exports: Q = exp(-logZ) qhat (zero diagonal) at the profile optimum
    logZ = m.export(state, "logZ", Y)
    q = m.export(state, "Q", Y)
    qhat = 1.0 / (1.0 + m.params["a"] * squared_distances(Y) ** m.params["b"])
    np.fill_diagonal(qhat, 0.0)
    np.testing.assert_allclose(q, np.exp(-logZ) * qhat, rtol=1e-13)
    assert logZ == pytest.approx(solve_logz(squared_distances(Y), P, a=m.params["a"],
                                            b=m.params["b"], nu=5, corrected=False), abs=1e-12)
    np.testing.assert_array_equal(m.export(state, "P", Y), P)


def test_exaggeration_multiplies_the_data_term_only(data, Y):
    m = build_method("ncvis", perplexity=5)
    state = m.prepare(data)
    d2 = squared_distances(Y)
    rows = state.P.sum(axis=1)
    pc, K = m.terms(d2, state, 4.0, cost=True, grad=True)
    kw = dict(a=m.params["a"], b=m.params["b"], nu=5, corrected=False, noise=rows)
    Q = solve_logz(d2, 4.0 * state.P, **kw)
    assert state.data["Q"] == pytest.approx(Q, abs=1e-12)
    pc2, K2, _ = nce_terms(d2, 4.0 * state.P, Q, **kw)
    np.testing.assert_allclose(pc, pc2, rtol=1e-12)
    np.testing.assert_allclose(K, K2, rtol=1e-10, atol=1e-14)


def test_coincident_points_have_zero_force(data):
    m = build_method(("ncvis", {"min_dist": 0.1}), perplexity=5)  # b < 1: d^(2(b-1)) is infinite at 0
    assert m.params["b"] < 1
    state = m.prepare(data)
    Y = np.random.default_rng(0).normal(size=(10, 2))
    Y[3] = Y[5]
    pcost, G = DenseEngine().evaluate(m, state, Y)
    assert np.all(np.isfinite(pcost)) and np.all(np.isfinite(G))
    K = m.terms(squared_distances(Y), state, 1.0, cost=False, grad=True)[1]
    assert K[3, 5] == 0.0 and K[5, 3] == 0.0


@pytest.mark.parametrize("Y_init", [None, "pca"])
def test_runs_on_iris_with_dbd(iris, Y_init):
    kw = {} if Y_init is None else {"Y_init": Y_init}
    res = smallvis(iris, method="ncvis", perplexity=15, max_iter=100, eta=200, ret_extra=True,
                   random_state=1, **kw)
    assert res.Y.shape == (150, 2) and np.all(np.isfinite(res.Y))
    assert res.iter == 100 and not res.diverged
    costs = [res.itercosts[k] for k in sorted(res.itercosts)]
    assert np.all(np.isfinite(costs))
    assert costs[-1] < costs[0] - 0.01
    assert np.all(np.diff(costs) <= 1e-12)
    assert res.perplexity == 15
    assert np.sum(res.costs) == pytest.approx(costs[-1], rel=1e-9)


def test_returns_Q(iris10):
    res = smallvis(iris10, method="ncvis", perplexity=5, max_iter=20, eta=200, ret_extra=["Q"],
                   Y_init="pca")
    q = res.extras["Q"]
    off = ~np.eye(10, dtype=bool)
    assert q.shape == (10, 10) and np.all(np.diag(q) == 0) and np.all(q[off] > 0)


@pytest.mark.parametrize("params, pattern", [
    ({"noise_plan": "quadratic"}, r"method 'ncvis': parameter 'noise_plan'.*cubic, constant"),
    ({"noise_ratio": 0}, r"method 'ncvis': parameter 'noise_ratio' must be in \[1, inf\]; got 0"),
    ({"noise_ratio": 2.5}, r"method 'ncvis': parameter 'noise_ratio' must be a whole number"),
    ({"n_neighbors": 0}, r"method 'ncvis': parameter 'n_neighbors'"),
    ({"n_neighbors": 3.5}, r"method 'ncvis': parameter 'n_neighbors' must be a whole number"),
    ({"spread": 0}, r"method 'ncvis': parameter 'spread' must be in \(0, inf\]"),
    ({"min_dist": -1}, r"method 'ncvis': parameter 'min_dist'"),
    ({"alpha_Q": 0}, r"method 'ncvis': parameter 'alpha_Q' must be in \(0, inf\]"),
    ({"n_init_epochs": -1}, r"method 'ncvis': parameter 'n_init_epochs'"),
    ({"n_init_epochs": 1.5}, r"method 'ncvis': parameter 'n_init_epochs' must be a whole number"),
    ({"n_neighbors": 10}, r"method 'ncvis': parameter 'n_neighbors' .*\[1, 9\] for 10 points; got 10"),
    ({"corrected": "yes"}, r"method 'ncvis': parameter 'corrected' must be True or False"),
    ({"noise_ratoi": 5}, r"unknown parameter\(s\) 'noise_ratoi' for method 'ncvis'"),
])
def test_bad_input(iris10, params, pattern):
    with pytest.raises(ValueError, match=pattern):
        smallvis(iris10, method=("ncvis", params), max_iter=1)


def test_top_level_perplexity_is_the_neighbour_count(iris10):
    with pytest.raises(ValueError, match=r"method 'ncvis': parameter 'n_neighbors'.*got 15"):
        smallvis(iris10, method="ncvis", max_iter=1)  # the method's default 15 > n - 1
    with pytest.raises(ValueError, match=r"method 'ncvis': parameter 'n_neighbors'.*got 30"):
        smallvis(iris10, method="ncvis", perplexity=30, max_iter=1)
    assert smallvis(iris10, method="ncvis", perplexity=4, max_iter=0, ret_extra=True).perplexity == 4
    with pytest.raises(ValueError, match=r"method 'ncvis': parameter 'n_neighbors' must be a number"):
        smallvis(iris10, method="ncvis", perplexity=[5] * 10, max_iter=1)


def test_noise_plan_prefix():
    assert build_method(("ncvis", {"noise_plan": "CONST"})).params["noise_plan"] == "constant"


# -- power-iteration initialisation ------------------------------------------------------------------

def test_power_iteration_init(knn_P):
    Y = power_iteration_init(knn_P, 2, np.random.default_rng(42))
    assert Y.shape == (10, 2)
    np.testing.assert_allclose(Y.mean(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(Y.std(axis=0), 1.0, rtol=1e-14)
    again = power_iteration_init(knn_P, 2, np.random.default_rng(42))
    np.testing.assert_array_equal(Y, again)
    other = power_iteration_init(knn_P, 2, np.random.default_rng(43))
    assert not np.allclose(Y, other)


def test_power_iteration_init_dense_and_sparse_agree(knn_P):
    dense = power_iteration_init(knn_P, 3, np.random.default_rng(1), n_iter=25)
    for S in (sparse.csr_matrix(knn_P), sparse.csr_array(knn_P), sparse.coo_matrix(knn_P)):
        out = power_iteration_init(S, 3, np.random.default_rng(1), n_iter=25)
        assert isinstance(out, np.ndarray)
        np.testing.assert_allclose(out, dense, rtol=1e-12, atol=1e-12)


def test_power_iteration_init_is_the_reference_recursion(knn_P):
    """Uniform(0, 1) start; each round a neighbour average (sum / k), then standardised columns."""
    rng = np.random.default_rng(5)
    U = np.random.default_rng(5).uniform(size=(10, 2))
    V = (knn_P > 0).astype(float)
    Y = U
    for _ in range(3):
        Y = (V @ Y) / 5.0
        Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    np.testing.assert_allclose(power_iteration_init(V, 2, rng, n_iter=3), Y, rtol=1e-12)
    # no rounds: the uniform draw itself
    np.testing.assert_array_equal(power_iteration_init(V, 2, np.random.default_rng(5), n_iter=0),
                                  U)


@pytest.mark.parametrize("k, n_iter, pattern", [
    (0, 20, "k must be"), (2, -1, "n_iter must be"), (2, 1.5, "n_iter must be"),
])
def test_power_iteration_init_bad_input(knn_P, k, n_iter, pattern):
    with pytest.raises(ValueError, match=pattern):
        power_iteration_init(knn_P, k, np.random.default_rng(0), n_iter=n_iter)


def test_power_iteration_init_needs_a_square_matrix():
    with pytest.raises(ValueError, match="square"):
        power_iteration_init(np.ones((3, 4)), 2, np.random.default_rng(0))


def test_power_is_an_init_name():
    assert resolve_init("power") == "power"
    assert resolve_init("POW") == "power"
