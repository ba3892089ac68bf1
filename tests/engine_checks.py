"""Checks the catalog-driven tests share (not a test module: pytest collects ``test_*.py`` only).

The parametrised tests compute their parameter lists here, from the registry and the catalog, when
they are collected: a method added to ``smallvis.methods.REGISTRY`` is checked by finite differences
and against the dense engine on every engine that claims it (``smallvis.list_methods()``), with no
edit to any test. ``tests/test_catalog.py`` registers a method at test time and calls these same
functions on it.

Tolerances per engine: ``exact`` gives the dense engine's numbers (relative 1e-10); ``bh`` at
``theta = 0`` opens every cell (1e-9); ``fft`` interpolates (gradient within 1e-3, cost 1e-5; a
cost that reads per-point all-pairs sums, 1e-5 in total and 1e-4 of the largest per point);
``sgd`` optimises stochastically, so it is compared with a dense run by the clusters both find (and,
where its sampled objective is the method's own cost, by the cost both reach).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import sparse

from smallvis.engines import DenseEngine, ExactEngine
from smallvis.engines.approx import approx_plan
from smallvis.engines.approx_terms import Sums
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.catalog import served_by
from smallvis.engines.exact import native_form
from smallvis.engines.fft import FFTEngine
from smallvis.io.data import InputData
from smallvis.methods import REGISTRY, build_method
from smallvis.methods.base import MethodState, MixtureForm, PairForm, SumForm


def ids(value):
    return str(value) if value else ""


def claimed(engine: str) -> list[str]:
    """The registered methods the catalog says ``engine`` runs natively (with their defaults)."""
    return served_by(engine)


def not_defaults(cases) -> list:
    """The ``(name, params)`` cases whose params change a default (the defaults are checked
    through :func:`claimed`)."""
    return [(name, params) for name, params in cases
            if any(REGISTRY[name].params.get(k, object()) != v for k, v in params.items())]


def _build(spec, perplexity):
    return build_method(spec, perplexity=perplexity)


# -- finite differences (dense engine) --------------------------------------------------------------

def fd_cases():
    """``(name, variant)`` for every registered method: its defaults and its spec's
    ``fd_variants`` (skipped with the spec's reason where ``fd_exempt``)."""
    for name, spec in REGISTRY.items():
        marks = [pytest.mark.skip(reason=spec.fd_exempt)] if spec.fd_exempt else []
        for variant in ({},) + tuple(spec.fd_variants):
            label = name + "".join(f"-{k}={v}" for k, v in variant.items())
            yield pytest.param(name, variant, id=label, marks=marks)


def numeric_gradient(f, Y, h=6e-6):
    G = np.zeros_like(Y)
    for idx in np.ndindex(*Y.shape):
        Yp, Ym = Y.copy(), Y.copy()
        Yp[idx] += h
        Ym[idx] -= h
        G[idx] = (f(Yp) - f(Ym)) / (2 * h)
    return G


@functools.cache
def fd_setup():
    """Ten iris rows scaled to [-1, 1] and small output coordinates: Gaussian output weights with
    input precisions (beta ~ 50 here) must not underflow to the eps floor on Q, where the cost is
    flat but the force is not."""
    from sklearn.datasets import load_iris

    from smallvis.io.preprocess import scale_input

    X = scale_input(load_iris().data[:10].copy(), "absmax")
    Y = np.random.default_rng(42).normal(scale=0.1, size=(10, 2))
    return InputData(X), Y


def check_fd_gradient(name: str, variant: dict | None = None) -> None:
    """The dense engine's gradient is the derivative of its cost (central differences)."""
    data, Y = fd_setup()
    method = build_method((name, {**REGISTRY[name].fd_base, **(variant or {})}), perplexity=5)
    state = method.prepare(data)
    engine = DenseEngine()

    def cost(Y):
        return float(np.sum(engine.evaluate(method, state, Y, cost=True, grad=False)[0]))

    _, G = engine.evaluate(method, state, Y, cost=False, grad=True)
    G_fd = numeric_gradient(cost, Y)
    np.testing.assert_allclose(G, G_fd, rtol=1e-5, atol=1e-8 * np.abs(G_fd).max())


# -- exact -------------------------------------------------------------------------------------------

@functools.cache
def x60():
    return np.random.default_rng(7).normal(size=(60, 5))


def exact_Y(method, k, seed=3, n=60):
    """Output coordinates for an exact comparison: small for Gaussian output weights (or every Q
    sits on the eps floor); in 1-D without near-coincident points (the dense engine's distances
    |y_i|^2 + |y_j|^2 - 2 y_i y_j lose their relative precision there, and log(1 - w) or 1 / D
    magnify it)."""
    form = native_form(method, MethodState())
    gaussian = getattr(form, "kernel", None) == 1 or getattr(form, "weight", None) == "gaussian"
    scale = 0.3 if gaussian else 2.0
    rng = np.random.default_rng(seed + k)
    if k == 1:
        return (rng.permutation(n) + rng.uniform(-0.2, 0.2, n))[:, None] * (4.0 * scale / n)
    return rng.normal(scale=scale, size=(n, k))


def assert_same(a, b, rtol=1e-10, err_msg=""):
    (ca, Ga), (cb, Gb) = a, b
    np.testing.assert_allclose(cb, ca, rtol=rtol, atol=1e-14 * np.abs(ca).max(), err_msg=err_msg)
    np.testing.assert_allclose(Gb, Ga, rtol=rtol, atol=1e-12 * np.abs(Ga).max(), err_msg=err_msg)


def exact_route(form) -> str:
    """The route the exact engine must take for a native form (not the dense fallback)."""
    if isinstance(form, PairForm):
        return "pairs"
    if isinstance(form, MixtureForm):
        return "mixture"
    if isinstance(form, SumForm):  # a sum of KL terms (gsne)
        return "sum"
    return "kl" if form.plain else "kl-general"


def check_exact(spec, ks=(1, 2, 3), factors=(1.0, 4.0)) -> None:
    """The fused exact engine gives the dense engine's cost and gradient (relative 1e-10), by its
    fused route, in 1-3 output dimensions, with and without exaggeration (methods with a P)."""
    method = _build(spec, 10)
    state = method.prepare(InputData(x60()))
    form = native_form(method, state)
    assert form is not None, f"{spec}: no fused form, but the catalog claims 'exact'"
    for k in ks:
        for f in factors if method.uses_affinities else (1.0,):
            Y = exact_Y(method, k)
            with np.errstate(invalid="ignore"):  # umap at exaggeration 4: log(1 - 4P) is NaN
                dense = DenseEngine().evaluate(method, state, Y, f)
                exact = ExactEngine().evaluate(method, state, Y, f)
            assert exact[0].shape == (60,) and exact[1].shape == (60, k)
            assert state.data["_exact_engine_plan"][0] == exact_route(form)
            assert_same(dense, exact, err_msg=f"{spec}, k={k}, exaggeration={f}")


# -- Barnes-Hut ----------------------------------------------------------------------------------------

@functools.cache
def x80():
    return np.random.default_rng(7).normal(size=(80, 5))


def sparse_states(X, spec, perplexity=10):
    """The method, its dense state, and a sparse state holding the same P (and the same method
    data, its (n, n) matrices as CSR: tee's V)."""
    method = _build(spec, perplexity)
    dense = method.prepare(InputData(X))
    data = {key: sparse.csr_matrix(value) if isinstance(value, np.ndarray) and value.ndim == 2
            and value.shape[0] == value.shape[1] == len(X) else value
            for key, value in dense.data.items()}
    return method, dense, MethodState(P=sparse.csr_matrix(dense.P), affinities=dense.affinities,
                                      data=data)


def check_bh(spec, ks=(1, 2, 3), factors=(1.0, 4.0)) -> None:
    """theta = 0 opens every cell: the dense engine's numbers up to the eps in d2 and Z."""
    method, dense, sp = sparse_states(x80(), spec)
    for k in ks:
        for f in factors:
            Y = np.random.default_rng(k).normal(scale=2.0, size=(80, k))
            cd, Gd = DenseEngine().evaluate(method, dense, Y, f)
            cb, Gb = BarnesHutEngine(theta=0.0).evaluate(method, sp, Y, f)
            msg = f"{spec}, k={k}, exaggeration={f}"
            assert cb.shape == (80,) and Gb.shape == (80, k)
            np.testing.assert_allclose(Gb, Gd, rtol=1e-9, atol=1e-12 * np.abs(Gd).max(),
                                       err_msg=msg)
            # the dense cost also has eps-floored terms on the pairs P does not store (the diagonal)
            np.testing.assert_allclose(cb, cd, rtol=1e-9, atol=1e-9 * np.abs(cd).max(),
                                       err_msg=msg)


# -- FFT -------------------------------------------------------------------------------------------------

FFT_N = 500


@functools.cache
def fft_data():
    """Five clusters in 8-D (the interpolation's accuracy is measured on 500 points)."""
    rng = np.random.default_rng(1)
    return np.concatenate([rng.normal(loc=rng.normal(scale=3, size=8), size=(FFT_N // 5, 8))
                           for _ in range(5)])


def check_thread_independent(engine, name, *, scale=3.0, exaggeration=4.0) -> None:
    """``engine`` evaluates method ``name`` (a name or ``(name, params)``) on :func:`fft_data`'s
    kNN P to the same bits with 1 and 2 threads (skipped without 2 threads, or where the engine
    does not serve the method)."""
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 threads")
    method = build_method(name, perplexity=15)
    if not engine.serves(method):
        pytest.skip(f"{engine.name} does not serve {name}")
    state = method.prepare_sparse(InputData(fft_data()), knn_method="exact")
    Y = np.random.default_rng(4).normal(scale=scale, size=(len(fft_data()), 2))
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            results.append(engine().evaluate(method, state, Y, exaggeration))
    finally:
        numba.set_num_threads(before)
    (c1, G1), (c2, G2) = results
    assert np.array_equal(c1, c2) and np.array_equal(G1, G2)


def kernel_weights(d2, code=0, kp=None):
    """The output kernel ``w(d2)`` of a ``FusedForm`` code, in NumPy (``kp``: the parameters of
    ``smallvis.engines.exact_kernels.kernel_params``): its declaration's weight."""
    from smallvis.engines.exact_kernels import kernel_params
    from smallvis.methods.output_kernels import PARAMS, by_code

    kp = kernel_params() if kp is None else kp
    return by_code(code).w(d2, **dict(zip(PARAMS, kp)))


def exact_Z(Y, alpha=1.0, code=None, kp=None):
    """``sum_{i != j} w_ij``: the heavy-tailed kernel with ``alpha`` (Student-t for 1), or the
    kernel ``code`` with the parameters ``kp``."""
    from smallvis.engines.exact_kernels import kernel_params

    d2 = np.sum((Y[:, None] - Y[None]) ** 2, axis=-1)
    if code is None:
        code, kp = 2, kernel_params(alpha)
    return np.sum(kernel_weights(d2, code, kp)) - len(Y) * kernel_weights(0.0, code, kp)


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# the plans whose per-point cost reads per-point all-pairs sums (not Z alone): interpolated per
# point, their costs are compared in total (1e-5) and per point against the largest (1e-4)
PER_POINT_SUMS = ("kl-row", "fdiv", "tee", "ee", "nerv", "jse", "pairs")


def check_fft(spec, ks=(1, 2), factors=(1.0, 4.0)) -> None:
    """Default options, an embedding spanning ~6 units: measured gradient error <= 2e-4 (bound
    1e-3), Z <= 1e-6 (bound 1e-4); the sparse cost drops only the dense engine's eps terms. A cost
    with per-point all-pairs sums (:data:`PER_POINT_SUMS`): measured <= 5e-6 in total, <= 2e-5 of
    the largest per point."""
    from smallvis.engines.exact_kernels import form_params, kernel_params

    method, state, sstate = sparse_states(fft_data(), spec, perplexity=20)
    plan = approx_plan(method, sstate)[0]
    kp = form_params(plan.form) if hasattr(plan.form, "alpha") else kernel_params()
    for k in ks:
        for f in factors:
            Y = np.random.default_rng(k).normal(size=(FFT_N, k))
            cost0, G0 = DenseEngine().evaluate(method, state, Y, f)
            cost1, G1 = FFTEngine().evaluate(method, sstate, Y, f)
            msg = f"{spec}, k={k}, exaggeration={f}"
            assert G1.shape == (FFT_N, k) and cost1.shape == (FFT_N,)
            assert rel(G1, G0) < 1e-3, (msg, rel(G1, G0))
            if plan.kind in PER_POINT_SUMS:
                assert abs(cost1.sum() / cost0.sum() - 1.0) < 1e-5, msg
                np.testing.assert_allclose(cost1, cost0, rtol=0,
                                           atol=1e-4 * np.abs(cost0).max(), err_msg=msg)
            else:
                np.testing.assert_allclose(cost1, cost0, rtol=1e-5, atol=1e-9, err_msg=msg)
            Z = FFTEngine().radial(Y).sums(Sums(plan.code, kp))[0]
            assert abs(Z / exact_Z(Y, code=plan.code, kp=kp) - 1.0) < 1e-4, msg


# -- both approximate engines at their defaults, 2,000 points ---------------------------------------

APPROX_N = 2000
# bound on the relative gradient error at the engines' defaults: fft 1e-3 (measured <= 2.3e-4,
# rklsne; t-SNE 6e-5); bh 1e-3 (quadrupole at theta = 0.35: measured <= 7.4e-4, rklsne; bnerv
# 7.0e-4; t-SNE 2.0e-4)
APPROX_BOUND = {"fft": 1e-3, "bh": 1e-3}


@functools.cache
def approx_data():
    """2,000 points in eight clusters in 10-D, and output coordinates spanning ~7 units."""
    rng = np.random.default_rng(0)
    labels = rng.integers(8, size=APPROX_N)
    X = rng.normal(scale=5.0, size=(8, 10))[labels] + rng.normal(size=(APPROX_N, 10))
    return X, np.random.default_rng(2).normal(size=(APPROX_N, 2))


def check_approx_defaults(spec, engines=("bh", "fft")) -> dict:
    """The engines that claim ``spec``, at their default options, against the exact engine on the
    same P (2,000 points, 2-D): relative gradient error within :data:`APPROX_BOUND`. Returns the
    errors."""
    X, Y = approx_data()
    method, dense, sp = sparse_states(X, spec, perplexity=30)
    G0 = ExactEngine().evaluate(method, dense, Y, cost=False)[1]
    errors = {}
    for name in engines:
        engine = {"bh": BarnesHutEngine, "fft": FFTEngine}[name]()
        errors[name] = rel(engine.evaluate(method, sp, Y, cost=False)[1], G0)
        assert errors[name] < APPROX_BOUND[name], (spec, name, errors[name])
    return errors


# -- SGD -------------------------------------------------------------------------------------------------

# what a dense run of these methods needs to find the clusters (others: the gallery's step size)
SGD_DENSE_ETA = {"umap": 0.05, "tumap": 0.05, "largevis": 1.0, "ncvis": 200.0}
SGD_DENSE_PARAMS = {"largevis": {"gamma": 0.001}}


@functools.cache
def sgd_blobs():
    from sklearn.datasets import make_blobs

    return make_blobs(n_samples=300, n_features=10, centers=4, cluster_std=1.0, random_state=3)


# the sgd result's cost (the dense engine's) may exceed the dense run's by this fraction, for the
# methods whose sampled objective is their own cost (measured: ee 0.05 %, mmds 1.4 %, smmds 1.0 %;
# tee and sammon end lower than the dense run)
SGD_COST_SLACK = 0.05


def check_sgd(spec) -> None:
    """Same cost, two optimisers: the same cluster structure, measured by neighbours, not
    coordinates (the dense run starts where the method's stochastic plan does, scaled PCA for the
    spectral start); where the sgd engine descends the method's own cost (ee, tee, the stress
    methods: ``forces`` "pairs" and "stress"), also a cost as low as the dense run's."""
    from sklearn.neighbors import NearestNeighbors

    from smallvis import smallvis
    from smallvis.methods.step_sizes import suggested_eta
    from smallvis.metrics import knn_preservation

    X, y = sgd_blobs()
    name = spec if isinstance(spec, str) else spec[0]
    params = {**SGD_DENSE_PARAMS.get(name, {}), **({} if isinstance(spec, str) else spec[1])}
    eta = SGD_DENSE_ETA.get(name) or suggested_eta(name, len(X))
    plan = build_method(spec).stochastic_plan()
    init = "power" if plan.init == "power" else "spca"
    res = smallvis(X, method=(name, params), perplexity=15, engine="dense", Y_init=init,
                   eta=eta, max_iter=300, random_state=1, ret_extra=["X"])
    exact = res.Y
    stoch = smallvis(X, method=spec, perplexity=15, engine="sgd", random_state=42)
    if plan.forces in ("pairs", "stress"):
        method = build_method(spec, perplexity=15)
        state = method.prepare(InputData(res.extras["X"]))  # the input as the runs scaled it

        def cost(Y):
            return float(np.sum(DenseEngine().evaluate(method, state, Y, grad=False)[0]))

        assert cost(stoch) <= cost(exact) + SGD_COST_SLACK * abs(cost(exact)), name

    def same_label_neighbours(Y):
        idx = NearestNeighbors(n_neighbors=11).fit(Y).kneighbors(Y, return_distance=False)[:, 1:]
        return np.mean(y[idx] == y[:, None])

    assert same_label_neighbours(stoch) > 0.98
    assert same_label_neighbours(exact) > 0.98
    assert abs(knn_preservation(X, stoch, 15) - knn_preservation(X, exact, 15)) < 0.15


# every engine but the reference, with the check that compares it with the dense engine
ENGINE_CHECKS = {"exact": check_exact, "bh": check_bh, "fft": check_fft, "sgd": check_sgd}


def check_against_dense(name: str) -> list[str]:
    """Every check of ``name`` against the dense engine on the engines the catalog claims for it;
    the engines checked."""
    engines = [e for e in claimed_engines(name) if e != "dense"]
    for engine in engines:
        ENGINE_CHECKS[engine](name)
    return engines


def claimed_engines(name: str) -> tuple:
    from smallvis.engines.catalog import method_engines

    return method_engines(REGISTRY[name])
