"""What the two approximate engines (bh, fft) share: every method either claims, at the engines'
defaults on 2,000 points, against the exact engine; the all-pairs sums of radial functions with
charges (:class:`smallvis.engines.approx_terms.Sums`) against NumPy; results that do not depend on
the number of threads; and the refusals, which say why."""

import numpy as np
import pytest

from smallvis.engines.approx import approx_plan
from smallvis.engines.approx_terms import Sums
from smallvis.engines.bh import BarnesHutEngine
from smallvis.engines.exact_kernels import kernel_params
from smallvis.engines.fft import FFTEngine
from smallvis.engines.radial_kernels import W, W_LOG_W, WG, WG_LOG_W
from smallvis.io.data import InputData
from smallvis.methods import build_method

from engine_checks import (check_approx_defaults, check_thread_independent, claimed, fft_data,
                           kernel_weights, rel)

CLAIMED = sorted(set(claimed("bh")) | set(claimed("fft")))


@pytest.mark.slow
@pytest.mark.parametrize("name", CLAIMED)
def test_defaults_against_the_exact_engine_on_2000_points(name):
    """fft within 1e-3 of the exact gradient (measured <= 2.3e-4), bh (quadrupole, theta 0.35)
    too (measured 3.5e-6, sjse, to 7.4e-4, rklsne)."""
    engines = [e for e in ("bh", "fft") if name in claimed(e)]
    assert check_approx_defaults(name, engines)


def _numpy_sums(Y, code, kp, c, floor, eps=0.0):
    """Brute-force Z, the sums of W, W_LOG_W and of WG, WG_LOG_W times y_i - y_j."""
    diff = Y[:, None] - Y[None]
    d2 = eps + np.sum(diff ** 2, axis=-1)
    w = kernel_weights(d2, code, kp)
    logw = np.log(w)
    g = {0: w, 1: np.ones_like(w), 2: 1.0 / (1.0 + kp[0] * d2)}[code]
    off = ~np.eye(len(Y), dtype=bool)
    cc = np.outer(np.ones(len(Y)), c) * off  # c_j, no self pairs
    Z = float(np.sum(c[:, None] * cc * w))
    wf = np.maximum(w, floor * Z) * g
    scal = {W: cc * w, W_LOG_W: cc * w * logw}
    vec = {WG: cc * wf, WG_LOG_W: cc * w * g * logw}
    return (Z, {fn: m.sum(axis=1) for fn, m in scal.items()},
            {fn: np.einsum("ij,ijd->id", m, diff) for fn, m in vec.items()})


CASES = [(0, None, 0.0), (1, None, 1e-3), (2, "charges", 0.0), (1, "charges", 0.0)]


@pytest.mark.parametrize("code, charged, floor", CASES)
@pytest.mark.parametrize("k", [1, 2])
def test_radial_sums_match_numpy(code, charged, floor, k):
    """theta = 0 opens every cell (1e-9; the tree softens d2 by eps); the grid interpolates
    (n_interp 5: measured <= 3e-6 for Z and the sums, bound 1e-4). A large floor (1e-3 of Z)
    makes the floor on the force factor visible."""
    rng = np.random.default_rng(k)
    Y = rng.normal(size=(300, k))
    kp = kernel_params(0.5)
    c = rng.uniform(0.5, 2.0, 300) if charged else np.ones(300)
    req = Sums(code, kp, scalars=(W, W_LOG_W), vectors=(WG, WG_LOG_W),
               charges=c if charged else None, floor=floor)
    for engine, tol, eps in ((BarnesHutEngine(theta=0.0), 1e-9, 1e-300),
                             (FFTEngine(n_interp=5), 1e-4, 0.0)):
        Z, S, V = engine.radial(Y, eps).sums(req)
        Z0, S0, V0 = _numpy_sums(Y, code, kp, c, floor)
        assert Z == pytest.approx(Z0, rel=tol)
        for s, fn in enumerate(req.scalars):
            assert rel(S[:, s], S0[fn]) < tol, (engine.name, fn)
        for v, fn in enumerate(req.vectors):
            assert rel(V[:, v], V0[fn]) < tol, (engine.name, fn)


@pytest.mark.parametrize("name", ["rklsne", "asne", "wssne", "tee"])
@pytest.mark.parametrize("engine", [BarnesHutEngine, FFTEngine])
def test_does_not_depend_on_the_number_of_threads(engine, name):
    check_thread_independent(engine, name)


def test_tee_prepares_a_sparse_v():
    """tee's V stays sparse (row-normalised, average-symmetrised: it sums to n), with the constant
    over its stored entries; the run is finite on both engines."""
    from scipy import sparse

    from smallvis import smallvis

    X = fft_data()[:200]
    method = build_method("tee", perplexity=10)
    state = method.prepare_sparse(InputData(X), knn_method="exact")
    V = state.data["V"]
    assert sparse.issparse(V) and (V != V.T).nnz == 0
    assert state.data["N"] == pytest.approx(200.0) and state.data["const"].shape == (200,)
    assert approx_plan(method, state)[0].form.norm == state.data["N"]
    for engine in ("bh", "fft"):
        Y = smallvis(X, method="tee", engine=engine, perplexity=10, max_iter=30, random_state=1)
        assert np.isfinite(Y).all()
