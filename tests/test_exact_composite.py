"""The fused exact engine on the methods declared as compositions (issue 19): g-SNE's sum of two KL
terms, the AB-divergence's branches, dhssne's per-epoch alpha with its stale first gradient, and
NCVis's profiled normaliser. Their agreement with the dense engine at one evaluation is the
catalog-driven ``check_exact`` (tests/test_exact_engine.py); here: the declarations, whole runs,
and what one evaluation does not show."""

import numpy as np
import pytest

from smallvis import smallvis
from smallvis.engines import DenseEngine, ExactEngine
from smallvis.engines.exact import native_form
from smallvis.io.data import InputData
from smallvis.methods import build_method
from smallvis.methods.base import FusedForm, MethodState, PairForm, SumForm

from engine_checks import assert_same, exact_Y, x60


def test_declarations():
    state = MethodState()
    gsne = build_method("gsne").fused_form(state)
    assert isinstance(gsne, SumForm) and [w for w, _ in gsne.terms] == [1.0, 1.0]
    assert [(t.kernel, t.input) for _, t in gsne.terms] == [(0, "P"), (4, "P_global")]
    assert build_method(("gsne", {"lambda": 0.0})).fused_form(state) == FusedForm(0)
    ab = build_method(("absne", {"alpha": 0.5, "lambda": 0.5})).pair_form(state)
    assert ab.divergence == "absneb0" and ab.weight == "t" and ab.params[:3] == (0.5, 0.0, 0.5)
    abssne = build_method("abssne").pair_form(state)
    assert abssne.divergence == "absne" and abssne.weight == "gaussian"
    assert abssne.params[3:] == (True, True, False)  # P floored; beta nudged: expm1 form
    nce = build_method(("ncvis", {"corrected": True, "noise_ratio": 3})).pair_form(state)
    assert isinstance(nce, PairForm) and nce.divergence == "nce" and nce.params == (3.0, True)
    dh = build_method(("dhssne", {"alpha": 0.3})).fused_form(state)
    assert dh.kernel == 5 and dh.alpha == dh.b == 0.3 and dh.grad_form is None


def _prepared(spec):
    method = build_method(spec, perplexity=10)
    return method, method.prepare(InputData(x60()))


def test_dhssne_stale_gradient_through_the_engine():
    """The epoch's alpha search evaluates its candidates through the engine; the first gradient
    after a change reads the epoch's weights (old alpha) with the new exponent, once."""
    results = {}
    for engine in (DenseEngine(), ExactEngine()):
        method, state = _prepared("dhssne")
        Y = exact_Y(method, 2)
        method.on_epoch(Y, state, 10, np.inf,
                        pcost=lambda Z: engine.evaluate(method, state, Z, grad=False)[0])
        assert state.data["alpha"] != 0.5
        form = native_form(method, state)
        if isinstance(engine, ExactEngine):
            assert form.grad_form is not None and form.grad_form.alpha == 0.5
        first = engine.evaluate(method, state, Y)
        second = engine.evaluate(method, state, Y)
        assert native_form(method, state).grad_form is None
        assert np.abs(first[1] - second[1]).max() > 1e-6 * np.abs(second[1]).max()
        results[engine.name] = (state.data["alpha"], first, second)
    dense, exact = results["dense"], results["exact"]
    assert dense[0] == exact[0]
    assert_same(dense[1], exact[1])
    assert_same(dense[2], exact[2])


def test_dhssne_run_matches_the_dense_run(iris):
    """30 iterations on iris, alpha searched every 5: the same alphas, the same coordinates."""
    kw = dict(method="dhssne", max_iter=30, epoch=5, eta=10.0, Y_init="spca", ret_extra=("alpha",),
              exaggeration_factor=4, stop_lying_iter=10)
    dense, exact = smallvis(iris, **kw), smallvis(iris, engine="exact", **kw)
    assert exact.alpha == dense.alpha != 0.5
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=0, atol=1e-8 * np.abs(dense.Y).max())


@pytest.mark.parametrize("method", ["gsne", ("absne", {"alpha": 0.5, "lambda": 1.5}), "ncvis"],
                         ids=str)
def test_run_matches_the_dense_run(iris10, iris10_Y, method):
    kw = dict(Y_init=iris10_Y, method=method, perplexity=5, eta=0.1, max_iter=50, ret_extra=True)
    dense, exact = smallvis(iris10, **kw), smallvis(iris10, engine="exact", **kw)
    np.testing.assert_allclose(exact.Y, dense.Y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(exact.costs, dense.costs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params", [{}, {"corrected": True}, {"noise_ratio": 1}])
def test_ncvis_profile_from_scratch(params):
    """Without a warm start: the initial guess and the Newton iteration on the engine's passes give
    the dense engine's normaliser, cost and gradient."""
    method, dense_state = _prepared(("ncvis", params))
    exact_state = method.prepare(InputData(x60()))
    for k in (2, 3):
        Y = exact_Y(method, k)
        for state in (dense_state, exact_state):
            state.data.pop("Q", None)
        dense = DenseEngine().evaluate(method, dense_state, Y, 2.0)
        exact = ExactEngine().evaluate(method, exact_state, Y, 2.0)
        assert exact_state.data["logZ"] == pytest.approx(dense_state.data["logZ"], abs=1e-12)
        assert_same(dense, exact)


@pytest.mark.parametrize("spec", ["gsne", "absne", "ncvis"])
def test_no_dense_fallback(spec, caplog):
    import logging

    method, state = _prepared(spec)
    with caplog.at_level(logging.INFO, logger="smallvis"):
        ExactEngine().evaluate(method, state, exact_Y(method, 2))
    assert "evaluated by the dense engine" not in caplog.text


def test_ncvis_last_newton_pass_gives_the_forces(monkeypatch):
    """The pass at the last Newton iterate also gives the costs and forces (no pass after the
    solve): ``nce_terms``' dC/dQ sums are ``nce_dq``'s bits, so the solve takes the same path
    and ends at the same normaliser as with a ``nce_dq`` pass per step; costs and forces within
    Q_TOL of those at the root."""
    from smallvis.engines import exact_nce, exact_nce_kernels as nk

    method, state = _prepared("ncvis")
    Y = exact_Y(method, 2)
    engine = ExactEngine()
    engine.evaluate(method, state, Y)  # Q* at Y: the next solve is warm-started from it
    Y2 = 1.01 * Y + 0.01
    calls = []

    def counted(name):
        fn = getattr(nk, name)

        def wrapped(*args):
            calls.append(name if name == "nce_dq" else (name, args[8]))
            return fn(*args)
        return wrapped

    for name in ("nce_dq", "nce_terms"):
        monkeypatch.setattr(nk, name, counted(name))
    q0 = state.data["Q"]
    fused = engine.evaluate(method, state, Y2)
    assert calls[-1] == ("nce_terms", True) and calls.count("nce_dq") >= 1
    q_fused = state.data["Q"]
    calls.clear()
    monkeypatch.setattr(exact_nce, "FUSE_STEP", 0.0)  # never fused: a pass after the solve
    state.data["Q"] = q0
    plain = engine.evaluate(method, state, Y2)
    assert calls[-1] == ("nce_terms", False)
    assert state.data["Q"] == q_fused  # the same Newton path, bit for bit
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14 * np.abs(b).max())


def test_nce_terms_dq_sums_are_nce_dq_bits():
    """nce_terms' derivative sums are nce_dq's bits; they are dC/dQ's first three derivatives
    (central differences in Q: ``ec`` scales as ``e^-Q``)."""
    method, state = _prepared(("ncvis", {"corrected": True}))
    n = state.P.shape[0]
    from smallvis.engines import exact_nce_kernels as nk
    from smallvis.engines.exact_pairs import Workspace

    ws = Workspace(n, 2)
    Yt = np.ascontiguousarray(exact_Y(method, 2).T)
    rng = np.random.default_rng(3)
    ec, neg = rng.uniform(0.1, 10.0, n), rng.uniform(0.0, 1e-3, n)
    prm = np.array([1.0, 1.6, 0.8])
    scratch = [np.empty((ws.chunks, n)) for _ in range(7)]
    G, pcost = np.empty((n, 2)), np.empty(n)

    def dq(h=0.0):
        return nk.nce_dq(Yt, state.P, ec * np.exp(-h), neg, prm, ws.bounds,
                         *scratch[:2], *scratch[4:])

    def terms(want_dq):
        return nk.nce_terms(Yt, state.P, ec, neg, prm, ws.bounds, True, True, want_dq, *scratch,
                            np.empty((ws.chunks, 2, n)), np.empty((ws.chunks, n)), G, pcost)

    F, dF, d2F = dq()
    assert terms(True) == (F, dF, d2F) and dF > 0 and d2F != 0
    assert terms(False) == (0.0, 0.0, 0.0)
    h = 1e-4
    up, down = dq(h), dq(-h)
    assert (up[0] - down[0]) / (2 * h) == pytest.approx(dF, rel=1e-6)
    assert (up[1] - down[1]) / (2 * h) == pytest.approx(d2F, rel=1e-5)


def test_halley_slope():
    from smallvis.engines.exact_nce import halley_slope

    F, dF, d2F = 0.1, 2.0, 3.0
    assert F / halley_slope(F, dF, d2F) == pytest.approx(F / (dF - F * d2F / (2 * dF)))
    assert halley_slope(1.0, 1.0, 5.0) == 1.0  # far from the root: Newton's slope
    assert halley_slope(1.0, 0.0, 5.0) == 0.0
