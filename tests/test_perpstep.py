"""Perplexity stepping (docs/original.md#perplexity-stepping)."""

import numpy as np
import pytest

from smallvis import smallvis, smallvis_perpstep
from smallvis.api.perpstep import step_perplexities


@pytest.mark.parametrize("n, target, expected", [(150, 40, [64]), (150, 30, [64, 32]),
                                                 (1000, 30, [256, 128, 64, 32]), (100, 32, []),
                                                 (10, 30, [])])
def test_step_perplexities(n, target, expected):
    assert step_perplexities(n, target) == expected


def test_steps_then_target_as_the_original(iris):
    X = iris[:100]
    res = smallvis_perpstep(X, step_iter=40, max_iter=100, perplexity=20, Y_init="spca",
                            random_state=3, ret_extra=True)
    # by hand: steps 32 (20 its each: 40 // 2) ... n = 100 -> m = 32 only
    assert step_perplexities(100, 20) == [32]
    Y = smallvis(X, perplexity=32, max_iter=40, epoch=40, tol=0, Y_init="spca", random_state=3)
    manual = smallvis(X, perplexity=20, max_iter=60, epoch=40, tol=0, Y_init=Y, random_state=3,
                      ret_extra=True)
    np.testing.assert_allclose(res.Y, manual.Y, rtol=1e-10)
    assert res.perplexity == 20 and res.iter == 60
    assert list(res.itercosts) == [40, 60]  # the step's epoch length carries over, as in the original


def test_given_settings_apply_to_the_final_run(iris):
    res = smallvis_perpstep(iris, step_iter=20, max_iter=60, perplexity=30, epoch=10,
                            Y_init="spca", ret_extra=True)
    assert list(res.itercosts) == [10, 20, 30, 40]


def test_init_sdev_applies_at_every_stage(iris):
    a = smallvis_perpstep(iris, step_iter=2, max_iter=3, perplexity=40, Y_init="spca",
                          Y_init_sdev=1.0, eta=1e-9, momentum=0, final_momentum=0)
    np.testing.assert_allclose(a.std(axis=0, ddof=1), 1.0, rtol=1e-3)  # R's sd


def test_without_step_perplexities_it_is_one_plain_run(iris10, iris10_Y):
    got = smallvis_perpstep(iris10, step_iter=10, max_iter=50, perplexity=4, Y_init=iris10_Y)
    want = smallvis(iris10, max_iter=50, perplexity=4, Y_init=iris10_Y)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kw, match", [(dict(step_iter=500), "must be greater than step_iter"),
                                       (dict(step_iter=-1), "step_iter"),
                                       (dict(perplexity="idp"), "single target perplexity")])
def test_bad_settings(iris10, kw, match):
    with pytest.raises(ValueError, match=match):
        smallvis_perpstep(iris10, **{"max_iter": 500, **kw})
