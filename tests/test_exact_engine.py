"""The fused exact engine: the dense engine's numbers, pair by pair, without n x n temporaries."""

import logging

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.affinity import INPUT_KERNELS
from smallvis.engines import DenseEngine, ExactEngine, resolve_engine
from smallvis.engines.exact import check_exact_memory, fused_methods, native_form
from smallvis.engines.exact_kernels import chunk_bounds
from smallvis.io.data import InputData
from smallvis.methods import REGISTRY, build_method
from smallvis.methods.base import MethodState

from engine_checks import assert_same, check_exact, claimed, exact_Y, ids, not_defaults, x60

FUSED = [("tsne", {}), ("ssne", {}), ("hssne", {"alpha": 0.5}), ("hssne", {"alpha": 2.0}),
         ("tsne", {"inp_kernel": "knn"})]
# asymmetric P, row-normalised Q or per-point output precisions (exact_asymmetric_kernels)
GENERAL = [("asne", {}), ("tasne", {}), ("trsrsne", {}), ("arsrsne", {}), ("trmsne", {}),
           ("tmsne", {}), ("tsne", {"symmetrize": "none"}), ("hssne", {"symmetrize": "none"}),
           ("btsne", {}), ("btsne", {"beta": 2.0}), ("bssne", {}), ("btasne", {}), ("basne", {})]
# the other pair costs (Method.pair_form) and the distance costs
PAIRS = [("largevis", {}), ("largevis", {"gamma": 7.0}), ("largevis", {"gr_form": "1-w"}),
         ("largevis", {"out_kernel": "cauchy", "alpha": 3.0}), ("largevis", {"out_kernel": "exp"}),
         ("umap", {}), ("umap", {"min_dist": 0.5, "spread": 2.0}), ("tumap", {}),
         ("tumap", {"gr_eps": 0.0}), ("rklsne", {}), ("rklsne", {"symmetrize": "mutual"}),
         ("jssne", {}), ("jssne", {"inp_kernel": "knn"}), ("chsne", {}),
         ("chsne", {"inp_kernel": "exp"}), ("hlsne", {}), ("hlsne", {"inp_kernel": "knn"})]
DISTANCES = [("mmds", {}), ("ballmmds", {}), ("ballmmds", {"f": 0.5}),
             ("smmds", {}), ("sammon", {})]
# the elastic embeddings (ee reads P and a second matrix, its repulsion weights; tee reads V)
ELASTIC = [("ee", {}), ("ee", {"neg_weights": False}), ("ee", {"lambda": 1.0}), ("tee", {}),
           ("tee", {"lambda": 1.0})]
# the mixes of forward and reverse KL (Method.mixture_form; exact_nerv): their specs' variants, and
# kNN input kernels (P with zeros: nerv floors them at eps, jse takes its p = 0 and p < eps cases)
MIXTURES = ([(name, {"lambda": v}) for name in ("nerv", "snerv") for v in (0.0, 0.5, 1.0)]
            + [("bnerv", {"lambda": 0.0}), ("bnerv", {"beta": 2.0})]
            + [(name, {"kappa": v}) for name in ("jse", "sjse") for v in (0.0, 1e-4, 0.999, 1.0)]
            + [("nerv", {"inp_kernel": "knn"}), ("jse", {"inp_kernel": "knn"}),
               ("sjse", {"inp_kernel": "knn"}), ("rsrjse", {"inp_kernel": "knn"})])
# the parameter settings the specs of the AB-divergences (every branch), gsne (lambda), dhssne
# (alpha) and ncvis (noise model) list for their finite-difference checks
SPEC_VARIANTS = [(name, variant) for name in ("absne", "abssne", "gsne", "dhssne", "ncvis")
                 for variant in REGISTRY[name].fd_variants]
# every method the catalog says the exact engine runs natively (with its defaults: computed from the
# registry when this module is collected), and the parameter settings above that are not defaults
CASES = claimed("exact") + not_defaults(FUSED + GENERAL + PAIRS + DISTANCES + ELASTIC +
                                        MIXTURES + SPEC_VARIANTS)


@pytest.fixture(scope="module")
def X60():
    return x60()


def _prepared(X, spec):
    method = build_method(spec, perplexity=10)
    return method, method.prepare(InputData(X))


def _Y(method, k, seed=3, n=60):
    return exact_Y(method, k, seed, n)


@pytest.mark.parametrize("spec", CASES, ids=ids)
def test_matches_the_dense_engine(spec):
    """Cost and gradient as the dense engine's (relative 1e-10) in 1-3 output dimensions, with and
    without exaggeration, by the fused route (kl, kl-general or pairs) the method's form names."""
    check_exact(spec)


@pytest.mark.parametrize("name, params", FUSED[:3] + [("tasne", {}), ("basne", {}),
                                                     ("trmsne", {}), ("nerv", {}), ("bnerv", {}),
                                                     ("sjse", {}), ("gsne", {}),
                                                     ("dhssne", {})],
                         ids=lambda v: str(v) if v else "")
def test_cost_and_gradient_flags(X60, name, params):
    method, state = _prepared(X60, (name, params))
    Y = _Y(method, 2)
    eng = ExactEngine()
    cost, G = eng.evaluate(method, state, Y, 2.0)
    c_only = eng.evaluate(method, state, Y, 2.0, grad=False)
    g_only = eng.evaluate(method, state, Y, 2.0, cost=False)
    assert c_only[1] is None and g_only[0] is None
    np.testing.assert_allclose(c_only[0], cost, rtol=1e-12)
    np.testing.assert_allclose(g_only[1], G, rtol=1e-12)
    assert eng.evaluate(method, state, Y, cost=False, grad=False) == (None, None)


@pytest.mark.parametrize("spec", ["ssne", "asne", "bssne"])
def test_clamped_q_matches_dense_far_apart(X60, spec):
    """Gaussian weights that underflow: Q floored at eps, as the dense engine does."""
    method, state = _prepared(X60, spec)
    Y = np.random.default_rng(0).normal(scale=20.0, size=(60, 2))
    assert_same(DenseEngine().evaluate(method, state, Y), ExactEngine().evaluate(method, state, Y))


@pytest.mark.parametrize("spec", ["nerv", "snerv", "bnerv", "jse", "sjse", "rsrjse",
                                  ("jse", {"kappa": 0.999})])
@pytest.mark.parametrize("scale", [2.0, 20.0])
def test_mixtures_match_dense_with_q_on_the_eps_floor(X60, spec, scale):
    """NeRV / JSE where part (scale 2) or nearly all (scale 20: every row's log-sum-exp is its
    nearest neighbour) of Q sits on the eps floor, and M (JSE) below eps."""
    method, state = _prepared(X60, spec)
    for k in (1, 2):
        Y = np.random.default_rng(k).normal(scale=scale, size=(60, k))
        for f in (1.0, 4.0):
            assert_same(DenseEngine().evaluate(method, state, Y, f),
                        ExactEngine().evaluate(method, state, Y, f))
    assert state.data["_exact_engine_plan"][0] == "mixture"


@pytest.mark.parametrize("spec", ["tsne", ("tsne", {"dof": 0.6}), "ssne", "hssne", "usne", "asne",
                                  "trsrsne", "trmsne", "btsne", "btasne",
                                  "gsne", "dhssne", "absne", ("absne", {"alpha": 0.5, "lambda": 1.5}),
                                  ("absne", {"alpha": 0.0, "lambda": 1.0}), "abssne", "ncvis",
                                  "nerv", "snerv", "bnerv", "rsrnerv", "jse", "sjse", "rsrjse"],
                         ids=ids)
def test_does_not_depend_on_the_number_of_threads(X60, spec):
    import numba

    method, state = _prepared(X60, spec)
    rng = np.random.default_rng(1)
    Y = rng.normal(scale=0.3, size=(60, 2))
    Y3 = rng.normal(scale=0.3, size=(60, 3))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = [ExactEngine().evaluate(method, state, y, 4.0) for y in (Y, Y3)]
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = [ExactEngine().evaluate(method, state, y, 4.0) for y in (Y, Y3)]
    finally:
        numba.set_num_threads(before)
    for (c1, G1), (c2, G2) in zip(one, many):
        np.testing.assert_array_equal(c1, c2)
        np.testing.assert_array_equal(G1, G2)


@pytest.mark.parametrize("n", [3, 4, 5, 33, 100, 1001])
def test_chunks_cover_every_row_with_balanced_pairs(n):
    b = chunk_bounds(n)
    assert b[0] == 0 and b[-1] == n and np.all(np.diff(b) >= 0)
    pairs = [sum(n - 1 - i for i in range(lo, hi)) for lo, hi in zip(b[:-1], b[1:])]
    assert sum(pairs) == n * (n - 1) // 2
    if n > 100:
        assert max(pairs) <= n * (n - 1) // 2 / (len(b) - 1) + n


@pytest.mark.parametrize("spec", [("rklsne", {"symmetrize": "none"}),
                                  ("largevis", {"symmetrize": "none"})], ids=ids)
def test_methods_without_a_fused_form_fall_back_to_dense(X60, spec, caplog):
    method, state = _prepared(X60, spec)
    assert native_form(method, state) is None
    Y = np.random.default_rng(5).normal(scale=0.3, size=(60, 2))
    dense = DenseEngine().evaluate(method, state, Y)
    eng = ExactEngine()
    with caplog.at_level(logging.INFO, logger="smallvis"):
        exact = eng.evaluate(method, state, Y)
        eng.evaluate(method, state, Y)
    assert caplog.text.count("evaluated by the dense engine") == 1
    for a, b in zip(dense, exact):
        np.testing.assert_array_equal(a, b)


def test_fused_forms():
    state = MethodState()
    assert build_method("tsne").fused_form(state).kernel == 0
    ssne = build_method("ssne").fused_form(state)
    assert ssne.kernel == 1 and ssne.clamp_q
    hssne = build_method(("hssne", {"alpha": 2.0})).fused_form(state)
    assert hssne.kernel == 2 and hssne.alpha == 2.0 and not hssne.clamp_q
    assert build_method("skdtsne").fused_form(state) is not None
    assert build_method("tsne").fused_form(state).plain
    unsym = build_method(("tsne", {"symmetrize": "none"})).fused_form(state)
    assert unsym.kernel == 0 and not unsym.symmetric_p and not unsym.plain
    asne = build_method("asne").fused_form(state)
    assert asne.kernel == 1 and asne.clamp_q and asne.normalisation == "row"
    assert not build_method("trsrsne").fused_form(state).symmetric_p
    btsne = build_method("btsne").fused_form(state)
    assert btsne.bandwidths and btsne.symmetric_p and not btsne.plain
    assert build_method("wtsne").fused_form(state) is not None


def test_mixture_forms():
    state = MethodState()
    nerv = build_method(("nerv", {"lambda": 0.3})).mixture_form(state)
    assert (nerv.divergence, nerv.weight, nerv.kernel, nerv.normalisation) == ("nerv", 0.3, 1, "row")
    assert not nerv.bandwidths and build_method("bnerv").mixture_form(state).bandwidths
    assert build_method("snerv").mixture_form(state).normalisation == "matrix"
    jse = build_method(("sjse", {"kappa": 1.0})).mixture_form(state)
    assert jse.divergence == "jse" and jse.weight == 1.0 - 1e-5 and jse.normalisation == "matrix"
    assert build_method("tsne").mixture_form(state) is None
    for name in ("nerv", "snerv", "bnerv", "rsrnerv", "jse", "sjse", "rsrjse"):
        assert ExactEngine.serves(build_method(name)), name


@pytest.mark.parametrize("spec", ["asne", "tasne", "trsrsne", "trmsne", "tmsne", "btsne", "basne",
                                  ("tsne", {"symmetrize": "none"}),
                                  ("tasne", {"inp_kernel": "knn"})])
def test_sparse_p_engines_do_not_take_the_general_forms(spec):
    from smallvis.engines.approx import served_form
    from smallvis.engines.exact import sparse_input

    method = build_method(spec)
    assert native_form(method) is not None
    assert served_form(method) is None and not sparse_input(method)


def test_sparse_p_engines_serve_only_plain_forms():
    """The exact engine's sparse KL (``served_form``) takes the plain forms only (bh and fft serve
    more, through their radial sums)."""
    from smallvis.engines.approx import served_form
    from smallvis.methods import methods_where

    served = methods_where(lambda method: served_form(method) is not None)
    assert "tsne" in served and "hssne" in served
    assert not {name for name, params in GENERAL if not params} & set(served)


def test_asymmetric_p_falls_back_to_dense(caplog):
    rng = np.random.default_rng(2)
    P = rng.random((20, 20))
    np.fill_diagonal(P, 0.0)
    P /= P.sum()
    method, Y = build_method("tsne"), rng.normal(size=(20, 2))
    with caplog.at_level(logging.INFO, logger="smallvis"):
        exact = ExactEngine().evaluate(method, MethodState(P=P), Y)
    assert "not exactly symmetric" in caplog.text
    dense = DenseEngine().evaluate(method, MethodState(P=P), Y)
    for a, b in zip(dense, exact):
        np.testing.assert_array_equal(a, b)


def test_end_to_end_matches_the_dense_run(iris10, iris10_Y):
    dense = smallvis(iris10, Y_init=iris10_Y, perplexity=5, ret_extra=True)
    exact = smallvis(iris10, Y_init=iris10_Y, perplexity=5, engine="exact", ret_extra=True)
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=1e-9, atol=1e-9)
    assert list(exact.itercosts) == list(dense.itercosts)
    np.testing.assert_allclose(list(exact.itercosts.values()), list(dense.itercosts.values()),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(exact.costs, dense.costs, rtol=1e-9, atol=1e-12)
    # the original's published numbers (tests/test_parity.py)
    np.testing.assert_allclose(list(exact.itercosts.values()),
                               [0.3087, 0.04999, 0.04132, 0.04129, 0.04129], atol=1e-4)


def test_end_to_end_with_a_fallback_method(iris10, iris10_Y):
    method = ("rklsne", {"symmetrize": "none"})
    dense = smallvis(iris10, Y_init=iris10_Y, method=method, perplexity=5, eta=0.1, max_iter=50)
    exact = smallvis(iris10, Y_init=iris10_Y, method=method, perplexity=5, eta=0.1, max_iter=50,
                     engine="exact")
    np.testing.assert_array_equal(exact, dense)


@pytest.mark.parametrize("method", ["asne", "btasne"])
def test_end_to_end_general_form_matches_the_dense_run(iris10, iris10_Y, method):
    kw = dict(Y_init=iris10_Y, method=method, perplexity=5, eta=0.1, max_iter=50, ret_extra=True)
    dense, exact = smallvis(iris10, **kw), smallvis(iris10, engine="exact", **kw)
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(exact.costs, dense.costs, rtol=1e-9, atol=1e-12)


def test_engine_registry():
    method = build_method("tsne")
    assert resolve_engine("exact", method, 100).name == "exact"
    assert resolve_engine("auto", method, 100).name == "dense"
    with pytest.raises(ValueError, match="unknown option.*engine 'exact'; it takes none"):
        resolve_engine(("exact", {"theta": 0.5}), method, 100)


def test_memory_refused_before_allocation(iris10, monkeypatch):
    with pytest.raises(MemoryError, match=r"exact engine needs about [\d.]+ GiB for 200000 points"):
        check_exact_memory(200_000, budget=24 * 2**30)
    check_exact_memory(30_000, budget=24 * 2**30)  # P fits where dense's 8 matrices would not
    from smallvis.engines.dense import check_dense_memory

    with pytest.raises(MemoryError):
        check_dense_memory(30_000, budget=24 * 2**30)

    import smallvis.engines.dense as dense_module

    monkeypatch.setattr(dense_module, "available_memory", lambda: 100)
    with pytest.raises(MemoryError, match="exact engine needs about"):
        smallvis(iris10, perplexity=5, engine="exact", max_iter=1)


@pytest.mark.parametrize("name, params", PAIRS + ELASTIC, ids=ids)
def test_pair_forms_name_their_cost(X60, name, params):
    method, state = _prepared(X60, (name, params))
    assert method.pair_form(state).divergence in (name, "umap")


def test_sammon_with_a_duplicate_point(X60):
    X = np.vstack([X60, X60[:1]])
    method = build_method("sammon")
    with pytest.warns(RuntimeWarning, match="1 pairs of input points coincide"):
        state = method.prepare(InputData(X))
    Y = np.random.default_rng(0).normal(size=(61, 2))
    dense, exact = DenseEngine().evaluate(method, state, Y), ExactEngine().evaluate(method, state, Y)
    assert exact[0][0] > 1e10  # the duplicate's stress over eps dominates
    assert_same(dense, exact)


@pytest.mark.parametrize("spec", ["largevis", "umap", "jssne", "chsne", "sammon", "ee", "tee",
                                  "absne", "abssne", "ncvis"])
def test_pair_form_cost_and_gradient_flags(X60, spec):
    method, state = _prepared(X60, spec)
    Y = _Y(method, 2)
    eng = ExactEngine()
    f = 1.0 if spec == "sammon" else 2.0
    cost, G = eng.evaluate(method, state, Y, f)
    c_only, g_only = eng.evaluate(method, state, Y, f, grad=False), eng.evaluate(method, state, Y,
                                                                                 f, cost=False)
    assert c_only[1] is None and g_only[0] is None
    np.testing.assert_allclose(c_only[0], cost, rtol=1e-12)
    np.testing.assert_allclose(g_only[1], G, rtol=1e-12)


def test_fused_methods():
    names = fused_methods()
    for name in ("tsne", "ssne", "hssne", "skdtsne", "largevis", "umap", "tumap", "rklsne",
                 "jssne", "chsne", "hlsne", "mmds", "ballmmds", "smmds", "sammon", "gmmds",
                 "knnmmds", "ee", "tee", "asne", "tasne", "trsrsne", "arsrsne", "trmsne",
                 "tmsne", "btsne", "bssne", "btasne", "basne", "wtsne", "wssne", "bhssne",
                 "ntumap", "cetsne", "usne", "tsneu", "pstsne", "nerv", "snerv", "bnerv",
                 "rsrnerv", "jse", "sjse", "rsrjse", "gsne", "absne", "abssne", "dhssne", "ncvis"):
        assert name in names
    for name in ():
        assert name not in names


# -- sparse P end to end -------------------------------------------------------------------------------

SPARSE = [("tsne", {"inp_kernel": "knn"}), ("hssne", {"inp_kernel": "knn", "alpha": 0.5}),
          ("skdtsne", {}), ("largevis", {"inp_kernel": "knn"}),
          ("largevis", {"inp_kernel": "knn", "out_kernel": "exp", "gamma": 7.0}),
          ("largevis", {"inp_kernel": "knn", "out_kernel": "cauchy", "alpha": 3.0}),
          ("umap", {}), ("umap", {"inp_kernel": "knn", "min_dist": 0.5, "spread": 2.0}),
          ("tumap", {}),
          pytest.param("tsne", {"inp_kernel": "nngaussian"}, marks=pytest.mark.skipif(
              "nngaussian" not in INPUT_KERNELS, reason="no nngaussian input kernel"))]


@pytest.mark.parametrize("exaggeration", [1.0, 4.0])
@pytest.mark.parametrize("name, params", SPARSE, ids=lambda v: str(v) if v else "")
def test_sparse_p_matches_the_dense_engine(X60, name, params, exaggeration):
    from scipy import sparse

    method = build_method((name, params), perplexity=10)
    dense_state = method.prepare(InputData(X60))
    eng = resolve_engine("exact", method, 60)
    state = eng.prepare(method, InputData(X60))
    assert sparse.issparse(state.P)
    np.testing.assert_allclose(state.P.toarray(), dense_state.P, rtol=1e-13, atol=0)
    for k in (1, 2, 3):
        Y = _Y(method, k)
        with np.errstate(invalid="ignore"):  # umap at exaggeration 4, as above
            dense = DenseEngine().evaluate(method, dense_state, Y, exaggeration)
            exact = eng.evaluate(method, state, Y, exaggeration)
        assert_same(dense, exact)


@pytest.mark.parametrize("spec", [("tsne", {"inp_kernel": "knn"}), "umap"])
def test_sparse_p_forms_nothing_n_by_n(spec, monkeypatch):
    import tracemalloc

    import smallvis.engines.dense as dense_module

    n = 1500
    X = np.random.default_rng(0).normal(size=(n, 4))
    Y = np.random.default_rng(1).normal(size=(n, 2))
    method = build_method(spec, perplexity=15)
    monkeypatch.setattr(dense_module, "available_memory", lambda: 2**20)  # 1 MiB: no n x n fits
    eng = resolve_engine("exact", method, n)
    eng.check(n)  # sparse P: nothing to refuse
    state = eng.prepare(method, InputData(X))
    eng.evaluate(method, state, Y)  # compiled, workspace allocated
    tracemalloc.start()
    try:
        cost, G = eng.evaluate(method, state, Y, 1.0 if spec == "umap" else 4.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * 8 * n * n and np.isfinite(G).all()
    with pytest.raises(MemoryError, match="exact engine needs"):
        resolve_engine("exact", build_method("tsne"), n).check(n)


@pytest.mark.parametrize("spec", ["ee", ("ee", {"neg_weights": False}), "tee"], ids=ids)
def test_elastic_embeddings_form_nothing_n_by_n(spec):
    """ee and tee on the pair pass: no (n, n) array is allocated per evaluation (ee's second
    input matrix, its repulsion weights, is read in place)."""
    import tracemalloc

    n = 1500
    X = np.random.default_rng(0).normal(size=(n, 4))
    Y = np.random.default_rng(1).normal(size=(n, 2))
    method = build_method(spec, perplexity=15)
    eng = resolve_engine("exact", method, n)
    state = eng.prepare(method, InputData(X))
    eng.evaluate(method, state, Y)  # compiled, planned, workspace allocated
    assert state.data["_exact_engine_plan"][0] == "pairs"
    tracemalloc.start()
    try:
        cost, G = eng.evaluate(method, state, Y, 4.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * 8 * n * n and np.isfinite(G).all() and np.isfinite(cost).all()


@pytest.mark.parametrize("spec", ["nerv", "bnerv", "sjse"])
def test_mixtures_form_nothing_n_by_n(spec):
    """NeRV / JSE on their passes: no (n, n) array per evaluation (Q, log Q and the log-ratios
    are formed pair by pair; only P is read)."""
    import tracemalloc

    n = 1500
    X = np.random.default_rng(0).normal(size=(n, 4))
    Y = np.random.default_rng(1).normal(size=(n, 2))
    method = build_method(spec, perplexity=15)
    eng = resolve_engine("exact", method, n)
    state = eng.prepare(method, InputData(X))
    eng.evaluate(method, state, Y, 4.0)  # compiled, planned, workspace and constants made
    assert state.data["_exact_engine_plan"][0] == "mixture"
    tracemalloc.start()
    try:
        cost, G = eng.evaluate(method, state, Y, 4.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * 8 * n * n and np.isfinite(G).all() and np.isfinite(cost).all()


def test_sparse_p_refused_where_it_cannot_be_used(X60):
    from scipy import sparse

    method, state = _prepared(X60, "rklsne")
    with pytest.raises(ValueError, match="cannot use a sparse P"):
        ExactEngine().evaluate(method, MethodState(P=sparse.csr_matrix(state.P)),
                               _Y(method, 2))


@pytest.mark.parametrize("method", [("tsne", {"inp_kernel": "knn"}), "umap"])
def test_sparse_end_to_end_matches_the_dense_run(X60, method):
    kw = dict(method=method, perplexity=10, max_iter=20, random_state=3, eta=1.0, ret_extra=("P",))
    dense = smallvis(X60, engine="dense", **kw)
    exact = smallvis(X60, engine="exact", **kw)
    assert not isinstance(exact.extras["P"], np.ndarray)
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(exact.costs, dense.costs, rtol=1e-8, atol=1e-12)


@pytest.mark.filterwarnings("ignore:1 perplexity calibrations failed")  # a duplicated point
@pytest.mark.parametrize("kernel", ["knn", "nngaussian", "skd"])
def test_sparse_p_on_tied_distances_matches_the_dense_run(kernel):
    """Integer data has many tied distances: the dense path (expanded-form distance matrix) and the
    sparse path (blocked exact search) must pick the same neighbours at a tie."""
    X = np.random.default_rng(5).integers(0, 3, size=(80, 6)).astype(float)
    X = np.vstack([X, X[:5]])  # duplicate points too
    kw = dict(method=("tsne", {"inp_kernel": kernel}), perplexity=7, max_iter=10,
              random_state=1, ret_extra=("P",))
    dense = smallvis(X, engine="dense", **kw)
    exact = smallvis(X, engine="exact", **kw)
    np.testing.assert_allclose(exact.extras["P"].toarray(), dense.extras["P"], rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=1e-6, atol=1e-8)  # duplicates: ulps grow


@pytest.mark.parametrize("spec, sparse_p", [("largevis", False), ("rklsne", False),
                                            ("mmds", False), ("ee", False), ("tee", False),
                                            (("tsne", {"inp_kernel": "knn"}), True),
                                            ("umap", True)])
def test_pair_passes_do_not_depend_on_the_number_of_threads(X60, spec, sparse_p):
    import numba

    method = build_method(spec, perplexity=10)
    eng = resolve_engine("exact", method, 60)
    state = eng.prepare(method, InputData(X60)) if sparse_p else method.prepare(InputData(X60))
    Ys = [_Y(method, k) for k in (2, 3)]
    f = 1.0 if spec in ("mmds", "umap") else 4.0  # umap's cost is NaN where f P > 1
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = [eng.evaluate(method, state, y, f) for y in Ys]
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = [eng.evaluate(method, state, y, f) for y in Ys]
    finally:
        numba.set_num_threads(before)
    for (c1, G1), (c2, G2) in zip(one, many):
        np.testing.assert_array_equal(c1, c2)
        np.testing.assert_array_equal(G1, G2)


@pytest.mark.parametrize("name", ["largevis", "umap", "tumap"])
def test_near_coincident_points_dense_and_exact_agree(X60, name):
    """Two points 1e-7 apart in coordinates of size ~100: the expanded form's squared distance is
    rounding noise (~1e-11 against a true 1e-14) and log(1 - w + eps) magnifies it; the dense engine
    recomputes such pairs from differences, as the fused engine does for all."""
    method, state = _prepared(X60, name)
    Y = 100.0 * np.random.default_rng(5).normal(size=(60, 2))
    Y[1] = Y[0] + [1e-7, 0.0]
    from smallvis.io.distances import squared_distances

    d2 = squared_distances(Y)
    assert d2[0, 1] == d2[1, 0] == pytest.approx(1e-14, rel=1e-6)
    dense = DenseEngine().evaluate(method, state, Y)[0]
    exact_engine = ExactEngine()
    exact_engine.plan(method)
    exact = exact_engine.evaluate(method, state, Y)[0]
    np.testing.assert_allclose(dense.sum(), exact.sum(), rtol=1e-10)


@pytest.mark.parametrize("method", ["asne", "basne", "wtsne"])
def test_general_form_reads_p_columns_from_its_transpose(X60, method, monkeypatch):
    """An asymmetric P's columns come from a C-ordered transpose (P itself when symmetric); with
    no memory for it they are read with a stride: the same numbers either way."""
    import smallvis.engines.exact_transpose as exact_transpose

    def run():
        return smallvis(X60, method=method, engine="exact", max_iter=20, random_state=0,
                        Y_init="rand", verbose=False, ret_extra=False)

    with_t = run()
    seen = []
    original = exact_transpose.transpose_of
    monkeypatch.setattr(exact_transpose, "transpose_of",
                        lambda P: seen.append(original(P, budget=1)) or seen[-1])
    strided = run()
    np.testing.assert_array_equal(with_t, strided)
    symmetric = method == "wtsne"
    assert seen and (seen[0].shape == (0, 0)) != symmetric


@pytest.mark.parametrize("method", ["nerv", "rsrjse", "sjse"])
def test_mixtures_read_p_columns_from_its_transpose(X60, method, monkeypatch):
    """A row-normalised mixture (nerv, rsrjse) reads P's columns from a C-ordered transpose; with
    no memory for it, with a stride: the same numbers either way. A matrix-normalised one (sjse)
    reads no columns (no transpose made)."""
    import smallvis.engines.exact_transpose as exact_transpose

    def run():
        return smallvis(X60, method=method, engine="exact", max_iter=20, random_state=0,
                        Y_init="rand", defaults="auto", verbose=False, ret_extra=False)

    with_t = run()
    seen = []
    original = exact_transpose.transpose_of
    monkeypatch.setattr(exact_transpose, "transpose_of",
                        lambda P: seen.append(original(P, budget=1)) or seen[-1])
    strided = run()
    np.testing.assert_array_equal(with_t, strided)
    if method == "sjse":
        assert not seen
    else:
        assert seen and seen[0].shape == (0, 0)


@pytest.mark.parametrize("spec", ["usne", "hssne", "bhssne", "dhssne", ("tsne", {"dof": 0.6})],
                         ids=ids)
def test_one_pass_kl_matches_the_two_passes(X60, spec, monkeypatch):
    """KL with a symmetric P, an unclamped Q and a costly kernel in one pass (Z factored out of the
    forces and the cross terms) gives the two passes' numbers to rounding, in 1-3 dimensions,
    exaggerated or not; tsne's cheap Student-t weights keep the two passes (the same bits)."""
    method, state = _prepared(X60, spec)
    for k in (1, 2, 3):
        Y = _Y(method, k)
        for f in (1.0, 4.0):
            monkeypatch.setattr(ExactEngine, "one_pass", True)
            one = ExactEngine().evaluate(method, state, Y, f)
            monkeypatch.setattr(ExactEngine, "one_pass", False)
            two = ExactEngine().evaluate(method, state, Y, f)
            assert_same(two, one, rtol=1e-12)
    method, state = _prepared(X60, "tsne")
    Y = _Y(method, 2)
    monkeypatch.setattr(ExactEngine, "one_pass", True)
    one = ExactEngine().evaluate(method, state, Y, 4.0)
    monkeypatch.setattr(ExactEngine, "one_pass", False)
    two = ExactEngine().evaluate(method, state, Y, 4.0)
    np.testing.assert_array_equal(one[1], two[1])
