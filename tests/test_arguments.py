"""The top-level arguments of ``smallvis()``: a bad value is refused with an error that names the
parameter, the value and what is allowed (no wrong result, no numpy message), and nothing the
original accepts as meaningful is refused (``max_iter=0``, ``eta="optsne"``, late exaggeration < 1).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from smallvis import SmallVis, smallvis


def run(X, **kw):
    kw.setdefault("perplexity", 3)
    kw.setdefault("max_iter", 2)
    return smallvis(X, **kw)


@pytest.mark.parametrize("kw, error, pattern", [
    (dict(max_iter=-1), ValueError, r"max_iter must be a whole number >= 0 .*; got -1"),
    (dict(max_iter=float("nan")), ValueError, r"max_iter must be .*; got nan"),
    (dict(max_iter="50"), TypeError, r"max_iter must be a whole number .*; got '50' \(type str\)"),
    (dict(max_iter=2.5), ValueError, r"max_iter must be a whole number"),
    (dict(k="23"), TypeError, r"k \(output dimensions\) must be a whole number >= 1; got '23'"),
    (dict(k="abc"), TypeError, r"k \(output dimensions\) must be .*'abc'"),
    (dict(k=True), TypeError, r"k \(output dimensions\)"),
    (dict(exaggeration_factor=float("nan")), ValueError,
     r"exaggeration_factor must be a positive finite number \(1 = off.*; got nan"),
    (dict(exaggeration_factor=0), ValueError, r"exaggeration_factor must be a positive"),
    (dict(exaggeration_factor=-4), ValueError, r"exaggeration_factor must be a positive"),
    (dict(exaggeration_factor="4"), TypeError, r"exaggeration_factor must be .*'4' \(type str\)"),
    (dict(late_exaggeration_factor=0), ValueError, r"late_exaggeration_factor must be a positive"),
    (dict(Y_init_sdev=0), ValueError, r"Y_init_sdev must be a positive finite number or None"),
    (dict(Y_init_sdev=float("inf")), ValueError, r"Y_init_sdev must be a positive"),
    (dict(Y_init="foo"), ValueError, r"Y_init: unknown initialization 'foo'.*\(n, k\) array"),
    (dict(random_state=-1), ValueError,
     r"random_state must be None, a non-negative integer seed or a numpy Generator; got -1"),
    (dict(random_state="1"), TypeError, r"random_state must be .*'1' \(type str\)"),
    (dict(epoch_callback=5), TypeError, r"epoch_callback must be None or a function.*got 5"),
    (dict(epoch=0), ValueError, r"epoch must be a whole number >= 1"),
    (dict(stop_lying_iter="10"), TypeError, r"stop_lying_iter must be a whole number"),
    (dict(initial_dims=0, pca=True), ValueError, r"initial_dims must be a whole number >= 1"),
    (dict(theta=-0.5), ValueError, r"theta must be a non-negative finite number"),
    (dict(perplexity=True), TypeError, r"perplexity must be a number.*got True"),
    (dict(perplexity=0.5), ValueError, r"perplexity must be finite and at least 1; got 0.5"),
    (dict(perplexity=float("nan")), ValueError, r"perplexity must be finite and at least 1; got nan"),
])
def test_bad_argument_named(iris10, kw, error, pattern):
    with pytest.raises(error, match=pattern):
        run(iris10, **kw)


def test_legitimate_values_still_accepted(iris10):
    assert run(iris10, max_iter=0).shape == (10, 2)          # the initialisation
    assert run(iris10, max_iter=4.0, k=3.0).shape == (10, 3)  # R's numbers are doubles
    assert run(iris10, eta="optsne", exaggeration_factor=4).shape == (10, 2)
    assert run(iris10, late_exaggeration_factor=0.5, max_iter=20).shape == (10, 2)
    assert run(iris10, exaggeration_factor=0.5).shape == (10, 2)
    assert run(iris10, random_state=np.random.default_rng(1)).shape == (10, 2)
    assert run(iris10, random_state=np.int64(3), epoch_callback=False).shape == (10, 2)
    Y = smallvis(iris10, method=("tsne", {"inp_kernel": "sigma"}), perplexity=0.5, max_iter=0)
    assert Y.shape == (10, 2)  # the sigma kernel's bandwidth may be below 1


def test_complex_input_refused(iris10):
    with pytest.raises(TypeError, match=r"X has complex values"):
        run(iris10 + 1j)
    with pytest.raises(TypeError, match=r"X column\(s\) 'c' hold complex values"):
        run(pd.DataFrame({"a": iris10[:, 0], "b": iris10[:, 1], "c": iris10[:, 2] + 1j}))


def test_masked_entries_refused(iris10):
    X = np.ma.masked_array(iris10, mask=np.zeros(iris10.shape, bool))
    assert np.array_equal(run(X, random_state=1), run(iris10, random_state=1))  # nothing masked
    X[2, 3] = np.ma.masked
    with pytest.raises(ValueError, match=r"X is a masked array with 1 masked value\(s\), first at "
                                         r"\(2, 3\): missing data is not allowed"):
        run(X)


def test_sparse_input_gives_the_dense_result(iris10):
    """scipy sparse input is embedded as its dense twin (absmax without centring: the same
    distances up to the divisor, which the perplexity calibration absorbs)."""
    from scipy import sparse

    np.testing.assert_allclose(run(sparse.csr_matrix(iris10), scale="none", random_state=0),
                               run(iris10, scale="none", random_state=0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("X", [np.empty((0, 4)), pd.DataFrame(np.empty((0, 4)))])
def test_no_rows(X):
    with pytest.raises(ValueError, match=r"X has no rows \(shape \(0, 4\)\)"):
        run(X)


def test_dropped_columns_warned(iris10):
    df = pd.DataFrame(iris10, columns=list("abcd"))
    df["species"] = "setosa"
    df["kind"] = pd.Categorical(["x", "y"] * 5)
    with pytest.warns(UserWarning, match=r"X: non-numeric column\(s\) 'species', 'kind' dropped"):
        run(df)
    with pytest.warns(UserWarning, match=r"non-numeric column\(s\) 'species', 'kind' dropped"):
        SmallVis(perplexity=3, max_iter=2).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(df[list("abcd")])  # nothing dropped, nothing said


def test_same_seed_same_start_on_every_engine(iris):
    """The bh engine's kNN seed comes from a child stream: the init is the exact engine's."""
    exact = smallvis(iris, perplexity=10, max_iter=0, random_state=7, engine="exact")
    bh = smallvis(iris, perplexity=10, max_iter=0, random_state=7, engine="bh")
    fft = smallvis(iris, perplexity=10, max_iter=0, random_state=7, engine="fft")
    np.testing.assert_array_equal(bh, exact)
    np.testing.assert_array_equal(fft, exact)


def test_same_seed_same_random_draws_on_the_sgd_engine(iris):
    """sgd rescales a named init (each column to [0, 10]), from the same draws as the exact engines."""
    exact = smallvis(iris, method="umap", Y_init="rand", max_iter=0, random_state=7,
                     engine="exact")
    sgd = smallvis(iris, method="umap", Y_init="rand", max_iter=0, random_state=7, engine="sgd")
    centred = exact - exact.mean(axis=0)
    lo, hi = centred.min(axis=0), centred.max(axis=0)
    np.testing.assert_allclose(sgd, 10 * (centred - lo) / (hi - lo), rtol=1e-12, atol=1e-12)
