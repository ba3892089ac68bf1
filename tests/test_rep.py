"""smallvis_rep: repeats from random starts, the best by final cost, bookkeeping, parallel runs."""

import numpy as np
import pytest

from smallvis import smallvis, smallvis_rep

SETTINGS = dict(perplexity=5, max_iter=60, eta=100)


def test_best_run_and_all_costs(iris10):
    res = smallvis_rep(iris10, nrep=4, random_state=3, ret_extra=True, **SETTINGS)
    assert res.all_costs.shape == (4,)
    assert np.all(np.isfinite(res.all_costs))
    assert list(res.itercosts.values())[-1] == res.all_costs.min()
    assert res.Y_init == "rand"
    assert "all_costs" in res.to_dict()


def test_first_minimum_wins_and_costs_are_the_final_itercosts(iris10):
    runs = smallvis_rep(iris10, nrep=3, keep_all=True, random_state=5, ret_extra=True, **SETTINGS)
    costs = np.array([list(r.itercosts.values())[-1] for r in runs])
    for r in runs:
        np.testing.assert_array_equal(r.all_costs, costs)
        assert r.best_rep == int(np.argmin(costs))
    # each repeat is a plain smallvis run with its own child seed
    seeds = np.random.SeedSequence(5).spawn(3)
    again = smallvis(iris10, Y_init="rand", random_state=np.random.default_rng(seeds[1]), **SETTINGS)
    np.testing.assert_array_equal(again, runs[1].Y)


def test_shapes_without_extras(iris10):
    Y = smallvis_rep(iris10, nrep=2, random_state=1, **SETTINGS)
    assert isinstance(Y, np.ndarray) and Y.shape == (10, 2)
    Ys = smallvis_rep(iris10, nrep=3, keep_all=True, random_state=1, k=3, **SETTINGS)
    assert isinstance(Ys, list) and len(Ys) == 3 and all(y.shape == (10, 3) for y in Ys)
    best = smallvis_rep(iris10, nrep=3, random_state=1, ret_extra=True, k=3, **SETTINGS)
    assert any(np.array_equal(best.Y, y) for y in Ys)


def test_extras_by_name_are_kept(iris10):
    res = smallvis_rep(iris10, nrep=2, random_state=1, ret_extra=["P"], **SETTINGS)
    assert res.P.shape == (10, 10) and res.all_costs.shape == (2,)


@pytest.mark.slow
def test_parallel_repeats_equal_sequential_ones(iris10):
    one = smallvis_rep(iris10, nrep=3, keep_all=True, random_state=7, **SETTINGS)
    two = smallvis_rep(iris10, nrep=3, keep_all=True, random_state=7, n_jobs=2, **SETTINGS)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_y_init_is_ignored_with_a_warning(iris10, iris10_Y):
    with pytest.warns(UserWarning, match="always starts from Y_init='rand'"):
        res = smallvis_rep(iris10, nrep=1, Y_init=iris10_Y, ret_extra=True, **SETTINGS)
    assert res.Y_init == "rand"


@pytest.mark.parametrize("kwargs, message", [
    (dict(nrep=0), r"nrep must be a whole number >= 1"),
    (dict(nrep=2.5), r"nrep must be a whole number >= 1"),
    (dict(nrep=2, n_jobs=0), r"n_jobs must be a positive whole number or -1"),
    (dict(nrep=2, random_state="x"), r"random_state must be an int"),
    (dict(nrep=2, n_jobs=2, epoch_callback=lambda Y, i, c: None), r"must be picklable"),
    (dict(nrep=2, method="tnse"), r"unknown method 'tnse'"),
])
def test_bad_arguments(kwargs, message, iris10):
    with pytest.raises(ValueError, match=message):
        smallvis_rep(iris10, max_iter=5, perplexity=5, **kwargs)
