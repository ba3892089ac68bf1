"""The Barnes-Hut engine against the dense engine on the same P (the dense P stored as CSR)."""

import numba
import numpy as np
import pytest
from scipy import sparse

import smallvis
from smallvis.engines import resolve_engine
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.bh_kernels import MAX_DEPTH, build_tree
from smallvis.engines.dense import DenseEngine
from smallvis.io.data import InputData
from smallvis.metrics import knn_preservation
from smallvis.methods import build_method
from smallvis.methods.base import EPS

from engine_checks import check_bh, claimed, ids, not_defaults, sparse_states, x80

# every method the catalog says bh runs (computed from the registry when this module is collected),
# and a heavy-tailed kernel that is not hssne's default
KERNELS = claimed("bh") + not_defaults([("hssne", {"alpha": 2.0}), ("tsne", {"dof": 0.6})])


def _states(X, spec, perplexity=10):
    """The method, its dense state, and a sparse state holding the same P."""
    return sparse_states(X, spec, perplexity)


def _blobs(n, dim, centres=5, spread=6.0, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(centres, size=n)
    return rng.normal(scale=spread, size=(centres, dim))[labels] + rng.normal(size=(n, dim))


def _exact_repulsion(Y, alpha=1.0):
    """``Z = sum_{i != j} w_ij`` and ``R_i = sum_j w_ij^(1 + alpha) (y_i - y_j)`` in NumPy."""
    diff = Y[:, None, :] - Y[None, :, :]
    d2 = (diff ** 2).sum(axis=2)
    w = (1.0 + alpha * d2) ** (-1.0 / alpha)
    np.fill_diagonal(w, 0.0)
    return w.sum(), np.einsum("ij,ijd->id", w ** (1.0 + alpha), diff)


@pytest.fixture(scope="module")
def X80():
    return x80()


@pytest.mark.parametrize("spec", KERNELS, ids=ids)
def test_theta_zero_is_the_exact_gradient_and_cost(spec):
    """theta = 0 opens every cell: the dense engine's numbers up to the eps in d2 and Z (1-3
    output dimensions, with and without exaggeration)."""
    check_bh(spec)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_theta_zero_repulsion_matches_numpy(k, alpha):
    Y = np.random.default_rng(3).normal(size=(150, k))
    Z, R = BarnesHutEngine(theta=0.0).repulsion(Y, 0 if alpha == 1.0 else 2, alpha, True)
    Ze, Re = _exact_repulsion(Y, alpha)
    assert Z == pytest.approx(Ze, rel=1e-11)
    np.testing.assert_allclose(R, Re, rtol=1e-9, atol=1e-12 * np.abs(Re).max())


@pytest.mark.parametrize("data", ["random", "clustered"])
@pytest.mark.parametrize("spec, k", [("tsne", 2), ("tsne", 3), (("hssne", {"alpha": 0.5}), 2)],
                         ids=ids)
def test_gradient_error_against_theta(spec, k, data):
    """Relative gradient error ||G_bh - G|| / ||G|| at n = 500: at the default theta = 0.35
    measured 2.3e-4 to 6.8e-4 (bound 1e-3); at theta = 0.5 the quadrupole 1.2e-3 to 2.8e-3, the
    monopole (``quadrupole = False``) 8.5e-3 to 1.8e-2, at least 5x more (bound 3x); the error
    grows with theta (quadrupole at theta = 1: 1.9e-2 to 4.3e-2)."""
    n = 500
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 10)) if data == "random" else _blobs(n, 10, spread=5.0, seed=1)
    method, dense, sp = _states(X, spec, perplexity=30)
    Y = rng.normal(scale=3.0, size=(n, k)) if data == "random" else _blobs(n, k, seed=2)
    _, Gd = DenseEngine().evaluate(method, dense, Y)

    def error(engine):
        return np.linalg.norm(engine.evaluate(method, sp, Y)[1] - Gd) / np.linalg.norm(Gd)

    assert BarnesHutEngine().theta == 0.35
    errs = [error(BarnesHutEngine(theta=theta)) for theta in (0.25, 0.35, 0.5, 1.0)]
    mono = BarnesHutEngine(theta=0.5)
    mono.quadrupole = False
    assert errs[1] < 1e-3
    assert errs[2] < error(mono) / 3
    assert errs[0] < errs[1] < errs[2] < errs[3]


def _points_of(node, skip, order, k, p):
    """The points of preordered node ``p`` (the leaves between ``p`` and ``skip[p]``)."""
    leaves = [q for q in range(skip.shape[0]) if skip[q] == q + 1]
    start = sum(int(node[q, k]) for q in leaves if q < p)
    count = sum(int(node[q, k]) for q in leaves if p <= q < skip[p])
    return order[start:start + count]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_nodes_keep_their_second_moments(k):
    """Each internal node's second moment about its centre, from its children's (parallel-axis
    rule), is NumPy's over its points; with charges the charge-weighted one about the charged
    centre; a leaf's is 0."""
    from smallvis.engines.bh_radial_kernels import charge_nodes

    rng = np.random.default_rng(k)
    Y = rng.normal(size=(200, k))
    c = rng.uniform(0.0, 2.0, 200)
    tree = BarnesHutEngine().radial(Y)
    charged = charge_nodes(tree.Y, tree.node, tree.skip, tree.order, c)
    upper = np.triu_indices(k)
    assert tree.node.shape[1] == k + 2 + len(upper[0])
    for p in range(0, tree.skip.shape[0], 7):
        if tree.skip[p] == p + 1:
            assert not tree.node[p, k + 2:].any() and not charged[p, k + 2:].any()
            continue
        pts = Y[_points_of(tree.node, tree.skip, tree.order, k, p)]
        for weights, node in ((np.ones(len(pts)), tree.node), (c, charged)):
            w = weights[_points_of(tree.node, tree.skip, tree.order, k, p)] \
                if weights is c else weights
            centre = w @ pts / w.sum()
            np.testing.assert_allclose(node[p, :k], centre, rtol=1e-12, atol=1e-12)
            d = pts - centre
            M = (w[:, None, None] * d[:, :, None] * d[:, None, :]).sum(axis=0)
            np.testing.assert_allclose(node[p, k + 2:], M[upper], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("code", [0, 1, 2])
def test_quadrupole_radial_sums_beat_the_monopole(code):
    """Every radial function (``W``, ``W_LOG_W``, ``WG`` with and without a floor, ``WG_LOG_W``)
    with charges, at theta = 0.5 against NumPy: the quadrupole terms (their derivatives from
    central differences) cut the error at least 3x; where the floor puts a kink in ``WG`` a cell
    there falls back to its monopole: finite, no worse."""
    from smallvis.engines.approx_terms import Sums
    from smallvis.engines.exact_kernels import kernel_params
    from smallvis.engines.radial_kernels import W, W_LOG_W, WG, WG_LOG_W

    from test_approx_engines import _numpy_sums
    from engine_checks import rel

    rng = np.random.default_rng(4)
    Y = _blobs(600, 2, seed=3) / (3.0 if code == 1 else 1.0)
    kp = kernel_params(0.5)
    c = rng.uniform(0.5, 2.0, 600)
    for floor in (0.0, 1e-6):
        req = Sums(code, kp, scalars=(W, W_LOG_W), vectors=(WG, WG_LOG_W), charges=c, floor=floor)
        _, S0, V0 = _numpy_sums(Y, code, kp, c, floor, eps=EPS)
        errs = {}
        for quad in (False, True):
            eng = BarnesHutEngine(theta=0.5)
            eng.quadrupole = quad
            _, S, V = eng.radial(Y, EPS).sums(req)
            assert np.isfinite(S).all() and np.isfinite(V).all()
            errs[quad] = [rel(S[:, s], S0[fn]) for s, fn in enumerate(req.scalars)] + \
                [rel(V[:, v], V0[fn]) for v, fn in enumerate(req.vectors)]
        print(code, floor, np.round(errs[False], 6), np.round(errs[True], 6))
        gain = 3.0 if floor == 0.0 else 1.0  # cells across the kink: expansions of either order
        for mono, quad in zip(errs[False], errs[True]):
            assert quad < mono / gain, (floor, errs)


def test_exact_duplicates_share_a_leaf_and_do_not_repel_each_other():
    """Points within eps of each other are merged into one leaf, which each of them skips as its
    own location: the pair's weight w = 1 is missing from Z (once per ordered pair). Their force
    on each other is zero anyway (y_i - y_j = 0), so R is exact."""
    Y = np.random.default_rng(5).normal(size=(60, 2))
    Y[1] = Y[0]
    Y[7] = Y[3]
    Y[8] = Y[3]  # a triple: 6 ordered pairs
    Z, R = BarnesHutEngine(theta=0.0).repulsion(Y, 0, 1.0, True)
    Ze, Re = _exact_repulsion(Y)
    assert np.isfinite(Z) and np.isfinite(R).all()
    assert Z == pytest.approx(Ze - 2 - 6, rel=1e-11)
    np.testing.assert_allclose(R, Re, rtol=1e-9, atol=1e-12 * np.abs(Re).max())
    children, count, com, leaf, _ = build_tree(Y, EPS)
    assert leaf[0] == leaf[1] and leaf[3] == leaf[7] == leaf[8] and count[leaf[3]] == 3


def test_a_tiny_embedding_keeps_its_points_apart():
    """Early exaggeration can shrink an embedding to ~1e-15: distinct points must not merge (the
    merge tolerance is relative to the embedding's width), or Z collapses to eps."""
    Y = np.random.default_rng(1).normal(size=(200, 2)) * 1e-15
    Z, R = BarnesHutEngine(theta=0.5).repulsion(Y, 0, 1.0, True)
    Zx, Rx = _exact_repulsion(Y)
    # every distance is below sqrt(eps): w = 1 and whole cells are summarised, the point itself
    # included (each point counts itself once at most: Z <= Zx + n); with merged points Z was eps
    assert Zx - 1e-6 <= Z <= Zx + 200 + 1e-6
    assert np.linalg.norm(R - Rx) < 1e-3 * np.linalg.norm(Rx)


def test_degenerate_layouts_do_not_crash(X80):
    method, _, sp = _states(X80, "tsne")
    eng = BarnesHutEngine()
    # every point at the same place: one leaf that every point skips
    cost, G = eng.evaluate(method, sp, np.ones((80, 2)))
    assert np.isfinite(cost).all() and np.all(G == 0.0)
    # distinct points too close to be separated within MAX_DEPTH levels are merged (depth cap)
    Y = np.random.default_rng(0).normal(size=(80, 2))
    Y[:20] = 1.0 + np.arange(20)[:, None] * 4 * EPS
    cost, G = eng.evaluate(method, sp, Y)
    assert np.isfinite(cost).all() and np.isfinite(G).all()
    children, count, _, leaf, _ = build_tree(Y, EPS)
    assert len(set(leaf[:20])) < 20 and len(count) < 80 + 20 * MAX_DEPTH


@pytest.mark.parametrize("k", [2, 3])
def test_does_not_depend_on_the_number_of_threads(k):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    X = _blobs(1500, 6, seed=4)
    method = build_method("tsne", perplexity=15)
    state = method.prepare_sparse(InputData(X), knn_method="exact")
    Y = _blobs(1500, k, seed=5)
    eng = BarnesHutEngine(theta=0.5)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        c1, G1 = eng.evaluate(method, state, Y, 4.0)
        numba.set_num_threads(2)
        c2, G2 = eng.evaluate(method, state, Y, 4.0)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(c1, c2) and np.array_equal(G1, G2)


def test_cost_and_gradient_flags(X80):
    method, _, sp = _states(X80, "tsne")
    Y = np.random.default_rng(2).normal(size=(80, 2))
    eng = BarnesHutEngine()
    cost, G = eng.evaluate(method, sp, Y, 2.0)
    c_only, none = eng.evaluate(method, sp, Y, 2.0, grad=False)
    assert none is None and np.array_equal(c_only, cost)
    assert eng.evaluate(method, sp, Y, 2.0, cost=False)[0] is None


@pytest.mark.parametrize("method", ["tsne", ("hssne", {"alpha": 0.5})], ids=ids)
def test_end_to_end_matches_dense_quality(method):
    X = _blobs(300, 10, centres=6, seed=0)
    pres = {}
    for engine in ("dense", ("bh", {"theta": 0.5})):
        Y = smallvis.smallvis(X, method=method, engine=engine, max_iter=200, random_state=0)
        assert np.isfinite(Y).all()
        pres[engine[0] if isinstance(engine, tuple) else engine] = knn_preservation(X, Y, 10)
    assert pres["bh"] > 0.3
    assert abs(pres["bh"] - pres["dense"]) < 0.05


REFUSALS = [(("ncvis", {"corrected": True}), "depends on the head point, not on the output"),
            ("ee", "repulsion weights come from the input distances"),
            ("mmds", "read the input R of every pair")]


@pytest.mark.parametrize("method, why", REFUSALS, ids=[str(m) for m, _ in REFUSALS])
def test_refuses_methods_it_cannot_run_and_says_why(method, why):
    X = np.random.default_rng(0).normal(size=(20, 3))
    name = method if isinstance(method, str) else method[0]
    with pytest.raises(ValueError, match=rf"engine 'bh' cannot run method '{name}': .*{why}.*"
                                         r"methods it runs: tsne, ssne, hssne"):
        smallvis.smallvis(X, method=method, engine="bh", max_iter=1, perplexity=5)
    # a parameter that makes ee's repulsion radial: served
    assert BarnesHutEngine.serves(build_method(("ee", {"neg_weights": False})))


@pytest.mark.parametrize("theta", [-1, "x", float("nan"), float("inf"), True, None])
def test_bad_theta(theta):
    with pytest.raises(ValueError, match="option theta must be a finite number >= 0"):
        resolve_engine(("bh", {"theta": theta}), build_method("tsne"), 100)
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="theta"):
        smallvis.smallvis(X, engine=("bh", {"theta": theta}), max_iter=1)


def test_options_and_unsupported_dimensions(X80):
    eng = resolve_engine(("bh", {"theta": 0.25, "knn": "exact"}), build_method("tsne"), 100)
    assert isinstance(eng, BarnesHutEngine) and eng.options() == {"theta": 0.25, "knn": "exact"}
    with pytest.raises(ValueError, match="unknown option.*'thetta'.*valid: theta, knn"):
        resolve_engine(("bh", {"thetta": 0.5}), build_method("tsne"), 100)
    method, _, sp = _states(X80, "tsne")
    with pytest.raises(ValueError, match=r"1, 2, 3 output dimensions; got k = 4.*'exact'"):
        eng.evaluate(method, sp, np.zeros((80, 4)))


def test_the_originals_bh_switch():
    """``bh=True`` (the original's way): t-SNE on the bh engine with theta, nngaussian P (3 x
    perplexity neighbours per row before symmetrising) and exact neighbours with nn="exact"."""
    X = _blobs(200, 8, centres=4, seed=2)
    res = smallvis.smallvis(X, bh=True, theta=0.3, nn="exact", perplexity=10, max_iter=50,
                            random_state=0, ret_extra=["P"])
    assert res.engine == "bh" and res.method == "tsne"
    assert sparse.issparse(res.P) and abs(res.P.sum() - 1.0) < 1e-12
    assert np.diff(res.P.indptr).min() >= 30  # each row holds at least its own 30 neighbours
    knn_kernel = smallvis.smallvis(X, bh=True, inp_kernel="knn", nn="exact", perplexity=10,
                                   max_iter=50, random_state=0, ret_extra=["P"])
    # knn kernel: mutual neighbours get (1/10 + 1/10) / 2, normalised over 200 rows
    np.testing.assert_allclose(knn_kernel.P.data.max(), 1 / (200 * 10), rtol=1e-12)
    # ignored for other methods, as in the original
    other = smallvis.smallvis(X, method="ssne", bh=True, max_iter=5, ret_extra=True)
    assert other.engine == "dense"
    with pytest.raises(ValueError, match="nn"):
        smallvis.smallvis(X, bh=True, nn="sometimes", max_iter=5)
    # without bh=True the original drops inp_kernel and nn silently; here that is an error
    for given in ({"inp_kernel": "nngaussian"}, {"nn": "exact"}):
        with pytest.raises(ValueError, match=f"{next(iter(given))} only applies with bh=True.*"
                                             r"method=\('tsne', \{'inp_kernel'"):
            smallvis.smallvis(X, max_iter=5, **given)


def test_bh_from_the_command_line(tmp_path):
    from smallvis.cli import main

    out = tmp_path / "bh.csv"
    assert main(["embed", "iris", "--engine", "bh", "--engine-param", "theta=0.3", "--max-iter",
                 "50", "--seed", "1", "--out", str(out)]) == 0
    Y = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1))
    assert Y.shape == (150, 2) and np.isfinite(Y).all()
