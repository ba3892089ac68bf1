"""The output kernels declared once (smallvis.methods.output_kernels) and the numba modules generated
from them (scripts/output_kernels.py): derivatives, the generated code against the declarations,
the generated files current, and dense == exact for a method using each kernel."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from engine_checks import check_bh, check_exact, check_fd_gradient, check_fft
from smallvis.methods.output_kernels import KERNELS, PARAMS, by_code, radial_codes

ROOT = Path(__file__).resolve().parents[1]

# parameter values each kernel is checked at
KERNEL_PARAMS = {
    "t": [{}],
    "gaussian": [{}],
    "heavy-tailed": [dict(alpha=0.5), dict(alpha=1.0), dict(alpha=1.7), dict(alpha=1e-3)],
    "umap": [dict(a=1.58, b=0.9, gr_eps=0.0), dict(a=1.0, b=2.0, gr_eps=0.0),
             dict(a=1.0, b=2.0, gr_eps=0.1)],
    "inverse-t": [{}],
    "power-heavy": [dict(alpha=0.5, b=0.5), dict(alpha=1.0, b=1.0), dict(alpha=0.3, b=0.7)],
    "tdof": [dict(dof=0.5), dict(dof=1.0), dict(dof=3.0), dict(dof=50.0)],
}

# a method whose cost uses each kernel (with its parameters), for the dense == exact check
KERNEL_METHODS = {
    "t": "tsne",
    "gaussian": "ssne",
    "heavy-tailed": ("hssne", dict(alpha=0.3)),
    "umap": "usne",
    "inverse-t": "gsne",
    "power-heavy": "dhssne",
    "tdof": ("tsne", dict(dof=0.6)),
}

D2 = np.array([1e-3, 0.05, 0.3, 1.0, 2.5, 7.0, 30.0, 400.0])


def _script():
    spec = importlib.util.spec_from_file_location("output_kernels_script",
                                                  ROOT / "scripts" / "output_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kp(params):
    from smallvis.engines.exact_kernels import kernel_params

    return kernel_params(**params)


def _cases(exact_only=False):
    cases = []
    for name, values in KERNEL_PARAMS.items():
        for params in values:
            # g is -d log w / d d2 except for UMAP's softening (gr_eps > 0) and dhssne's stale
            # exponent (b != alpha), which the original's gradients use on purpose
            if exact_only and (params.get("gr_eps", 0.0) > 0.0
                               or params.get("b", params.get("alpha")) != params.get("alpha")):
                continue
            cases.append(pytest.param(name, params, id=name + "".join(
                f"-{k}={v}" for k, v in params.items())))
    return cases


def test_every_kernel_is_checked():
    assert set(KERNEL_PARAMS) == set(KERNELS) == set(KERNEL_METHODS)
    codes = [d.code for d in KERNELS.values()]
    assert len(set(codes)) == len(codes)
    assert all(by_code(d.code) is d for d in KERNELS.values())
    assert all(set(d.params) <= set(PARAMS) for d in KERNELS.values())
    assert radial_codes() == (0, 1, 2, 3, 5, 6)
    with pytest.raises(KeyError, match="no output kernel has the code 99"):
        by_code(99)


@pytest.mark.parametrize("name, params", _cases(exact_only=True))
def test_dweight_is_the_derivative_of_the_weight(name, params):
    decl = KERNELS[name]
    h = 1e-6 * D2
    fd = (decl.w(D2 + h, **params) - decl.w(D2 - h, **params)) / (2 * h)
    np.testing.assert_allclose(decl.dweight(D2, **params), fd, rtol=1e-6,
                               atol=1e-12 * np.abs(fd).max())


@pytest.mark.parametrize("name, params", _cases())
def test_generated_dispatch_equals_the_declaration(name, params):
    from smallvis.engines import output_kernel_dispatch as dispatch

    decl = KERNELS[name]
    kp = _kp(params)
    w_decl = decl.w(D2, **params)
    g_decl = decl.g(D2, w_decl, **params)
    w = np.array([dispatch.weight(decl.code, kp, x) for x in D2])
    g = np.array([dispatch.grad_factor(decl.code, kp, x, wx) for x, wx in zip(D2, w)])
    # vmath's exp and log1p are within 1 ulp of NumPy's: a few ulps after the arithmetic
    np.testing.assert_allclose(w, w_decl, rtol=1e-14, atol=0)
    np.testing.assert_allclose(g, g_decl, rtol=1e-14, atol=0)
    logw = np.array([dispatch.log_weight(decl.code, kp, x) for x in D2])
    np.testing.assert_allclose(logw, decl.log_w(D2, **params), rtol=1e-14, atol=1e-300)
    far = np.abs(w_decl - 1.0) > 0.1  # log(w) of a weight near 1 has lost the digits log_w keeps
    np.testing.assert_allclose(decl.log_w(D2, **params)[far], np.log(w_decl[far]), rtol=1e-12)
    # the row loops compute the scalar functions' numbers, bit for bit
    rw, rg, inplace = np.empty(len(D2)), np.empty(len(D2)), D2.copy()
    dispatch.row_weights_grads(decl.code, kp, D2, rw, rg, len(D2))
    assert np.array_equal(rw, w) and np.array_equal(rg, g)
    dispatch.row_weights(decl.code, kp, D2, rw, len(D2))
    dispatch.row_weights_inplace(decl.code, kp, inplace, len(D2))
    assert np.array_equal(rw, w) and np.array_equal(inplace, w)


def test_an_unknown_code_gives_nan():
    from smallvis.engines import output_kernel_dispatch as dispatch

    kp = _kp({})
    assert np.isnan(dispatch.weight(99, kp, 1.0)) and np.isnan(dispatch.grad_factor(99, kp, 1.0, 1.0))
    w = np.zeros(3)
    dispatch.row_weights(99, kp, D2, w, 3)
    assert np.isnan(w).all()


def test_tdof_with_one_degree_of_freedom_is_the_student_t_kernel():
    t, tdof = KERNELS["t"], KERNELS["tdof"]
    w = tdof.w(D2, dof=1.0)
    assert np.array_equal(w, t.w(D2)) and np.array_equal(tdof.g(D2, w, dof=1.0), t.g(D2, w))


def test_the_generated_modules_are_current():
    script = _script()
    assert script.main(["--check"]) == 0, f"run {script.COMMAND}"


def test_check_mode_finds_a_stale_module(tmp_path, monkeypatch, capsys):
    script = _script()
    for attr in ("FUNCTIONS", "DISPATCH"):
        copy = tmp_path / getattr(script, attr).name
        shutil.copy(getattr(script, attr), copy)
        monkeypatch.setattr(script, attr, copy)
    stale = tmp_path / script.DISPATCH.name
    stale.write_text(stale.read_text() + "\n# edited by hand\n")
    assert script.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert script.main([]) == 0 and script.main(["--check"]) == 0  # rewritten


def test_a_declaration_outside_the_numba_subset_is_refused():
    script = _script()

    def bad(d2):
        return np.tanh(d2)

    with pytest.raises(ValueError, match="np.tanh has no numba element function"):
        script.scalar_source(bad)


@pytest.mark.parametrize("name", sorted(KERNEL_METHODS))
def test_dense_equals_exact_for_a_method_with_each_kernel(name):
    check_exact(KERNEL_METHODS[name])


@pytest.mark.parametrize("dof", [0.5, 0.8, 2.0])
def test_tsne_dof_gradient_is_the_derivative_of_its_cost(dof):
    check_fd_gradient("tsne", dict(dof=dof))


def test_tsne_dof_on_the_exact_engine_with_an_asymmetric_p():
    check_exact(("tsne", dict(dof=0.7, symmetrize="none")))


def test_tsne_dof_is_validated():
    from smallvis.methods import build_method

    with pytest.raises(ValueError, match="'dof'"):
        build_method(("tsne", dict(dof=0.0)))
    with pytest.raises(ValueError, match="'dof'"):
        build_method(("tsne", dict(dof="many")))


def test_tsne_dof_runs_end_to_end_and_separates_clusters():
    from sklearn.datasets import make_blobs

    from smallvis import smallvis

    X, labels = make_blobs(150, 5, centers=3, random_state=1)
    gap = {}
    for dof in (1.0, 0.3):
        Y = smallvis(X, method=("tsne", dict(dof=dof)), engine="exact", max_iter=300, eta=50,
                     random_state=2, perplexity=15)
        assert np.isfinite(Y).all()
        centres = np.array([Y[labels == c].mean(axis=0) for c in range(3)])
        spread = np.mean([np.linalg.norm(Y[labels == c] - centres[c], axis=1).mean()
                          for c in range(3)])
        between = min(np.linalg.norm(centres[a] - centres[b]) for a in range(3)
                      for b in range(a))
        gap[dof] = between / spread
    # heavier tails (fewer degrees of freedom) push the clusters further apart for their size
    assert gap[0.3] > 1.1 * gap[1.0]


@pytest.mark.parametrize("name", sorted(KERNEL_METHODS))
def test_the_radial_kernels_are_summed_by_barnes_hut_and_fft(name):
    """A radial kernel's KL method runs on bh (theta = 0: the dense numbers) and fft (within the
    interpolation's accuracy); the others' methods are refused or served by other forms."""
    from smallvis.engines.approx import KERNEL_CODES, approx_plan
    from smallvis.methods import build_method

    decl = KERNELS[name]
    assert (decl.code in KERNEL_CODES) == decl.radial
    if not decl.radial:
        return
    spec = KERNEL_METHODS[name]
    plan, why = approx_plan(build_method(spec))
    assert plan is not None and plan.code == decl.code, why
    check_bh(spec, ks=(2,))
    check_fft(spec, ks=(2,))


@pytest.mark.parametrize("engine", ["bh", "fft"])
def test_tsne_dof_runs_through_the_estimator_on_the_approximate_engines(engine):
    from sklearn.datasets import make_blobs

    from smallvis import SmallVis

    X = make_blobs(200, 5, centers=3, random_state=0)[0]
    runs = [SmallVis(method=("tsne", {"dof": 0.5}), engine=engine, max_iter=60,
                     random_state=0).fit_transform(X) for _ in range(2)]
    assert runs[0].shape == (200, 2) and np.isfinite(runs[0]).all()
    assert np.array_equal(runs[0], runs[1])
