"""Result object, extras, verbose logging and the eps rule."""

import json

import numpy as np
import pytest

from smallvis import list_methods, smallvis
from smallvis.methods import EPS, build_method


def test_ndarray_without_ret_extra(iris10):
    Y = smallvis(iris10, perplexity=5, max_iter=10)
    assert type(Y) is np.ndarray and Y.shape == (10, 2)


def test_extras(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=10, ret_extra=["x", "P", "Q", "DX", "DY"])
    assert res.X.shape == (10, 4)
    np.testing.assert_allclose(res.Q.sum(), 1)
    from scipy.spatial.distance import cdist

    np.testing.assert_allclose(res.DX, cdist(res.X, res.X), atol=1e-12)
    np.testing.assert_allclose(res.DY, cdist(res.Y, res.Y), atol=1e-10)
    with pytest.raises(AttributeError, match="extras available"):
        res.beta


def test_to_dict_is_json_serialisable(iris10):
    res = smallvis(iris10, perplexity=5, max_iter=20, ret_extra=["P"])
    d = res.to_dict()
    text = json.dumps(d)
    assert json.loads(text)["itercosts"]["20"] == pytest.approx(res.itercosts[20])
    assert len(d["P"]) == 10 and d["N"] == 10
    assert res.cost == pytest.approx(res.costs.sum())


def test_k_three(iris10):
    assert smallvis(iris10, k=3, perplexity=5, max_iter=10).shape == (10, 3)
    assert smallvis(iris10, k=1, perplexity=5, max_iter=10).shape == (10, 1)


def test_eps_rule():
    assert build_method("tsne", eps=1e-3).eps == 1e-3
    assert build_method(("tsne", {}), eps=1e-3).eps == EPS
    assert build_method(("tsne", {"eps": 1e-6}), eps=1e-3).eps == 1e-6


def test_top_level_perplexity_fills_method(iris10):
    assert build_method("tsne", perplexity=7).perplexity() == 7
    assert build_method(("tsne", {"perplexity": 3}), perplexity=7).perplexity() == 3


def test_list_methods_describes_tsne():
    (tsne,) = [m for m in list_methods() if m.name == "tsne"]
    assert tsne.family == "sne" and tsne.params["perplexity"] == 30
    assert "dense" in tsne.engines and "t-SNE" in tsne.description


def test_verbose_logs_calibration_and_epochs(iris10, capsys):
    smallvis(iris10, perplexity=5, max_iter=20, verbose=True)
    err = capsys.readouterr().err
    assert "Calibrated perplexity 5 for 10 points" in err
    assert "engine='auto'" in err and "Iter 20 cost" in err
    smallvis(iris10, perplexity=5, max_iter=20)
    assert capsys.readouterr().err == ""


def test_dataframe_input(iris10):
    import pandas as pd

    df = pd.DataFrame(iris10, columns=["a", "b", "c", "d"]).assign(label="x")
    np.testing.assert_allclose(smallvis(df, perplexity=5, max_iter=10, random_state=0),
                               smallvis(iris10, perplexity=5, max_iter=10, random_state=0))


def test_progress_callable(iris10):
    seen = []
    smallvis(iris10, perplexity=5, max_iter=7, progress=seen.append)
    assert seen == list(range(1, 8))
