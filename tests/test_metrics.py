"""Quality metrics against hand-computed examples and brute-force references."""

import json
import math
from itertools import permutations

import numpy as np
import pytest

from smallvis.metrics import quality as metrics
from smallvis.metrics import rank as metrics_rank
from smallvis.cli import main
from smallvis.metrics import (compute_metrics, continuity, knn_preservation, pbic,
                              random_triplet_accuracy, rnx_auc, rnx_curve, trustworthiness)

# 1-D points with distinct distances in every row; Y swaps the two ends. Worked by hand at k = 1:
# the output neighbours 3, 4, 1, 2, 1 have input ranks 3, 4, 1, 1, 3 -> penalty 2 + 3 + 0 + 0 + 2 = 7,
# T = 1 - 2 / (n k (2n - 3k - 1)) * 7 = 1 - 7 / 15; continuity likewise; two of five nearest
# neighbours kept; K-neighbourhood overlaps 2, 6, 12 for K = 1, 2, 3 give R_NX = 0.2 at each K.
X_HAND = np.array([0.0, 1.0, 3.0, 7.0, 15.0])
Y_HAND = np.array([15.0, 1.0, 3.0, 7.0, 0.0])


def data(n=120, p=8, noise=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, :2] + noise * rng.normal(size=(n, 2))


def test_hand_example():
    assert trustworthiness(X_HAND, Y_HAND, 1) == pytest.approx(8 / 15)
    assert continuity(X_HAND, Y_HAND, 1) == pytest.approx(8 / 15)
    assert knn_preservation(X_HAND, Y_HAND, 1) == pytest.approx(2 / 5)
    np.testing.assert_allclose(rnx_curve(X_HAND, Y_HAND), [0.2, 0.2, 0.2])
    assert rnx_auc(X_HAND, Y_HAND) == pytest.approx(0.2)
    # every ordered triplet of (0, 1, 3) -> (0, 3, 1) reverses its order
    assert random_triplet_accuracy([0.0, 1.0, 3.0], [0.0, 3.0, 1.0], n_triplets=50) == 0.0


def test_identity_is_perfect_and_permutation_is_poor():
    X, _ = data()
    Y = X[:, :3] * 2.0 + 1.0  # same distance order as X[:, :3]
    Z = X[:, :3]
    for f in (trustworthiness, continuity, knn_preservation):
        assert f(Z, Y, 10) == pytest.approx(1.0)
    np.testing.assert_allclose(rnx_curve(Z, Y), 1.0)
    assert rnx_auc(Z, Y) == pytest.approx(1.0)
    assert random_triplet_accuracy(Z, -Y) == 1.0
    shuffled = np.random.default_rng(3).permutation(Z)
    assert knn_preservation(Z, shuffled, 10) < 0.2
    assert abs(rnx_auc(Z, shuffled)) < 0.1
    assert trustworthiness(Z, shuffled, 10) < 0.7
    assert abs(random_triplet_accuracy(Z, shuffled) - 0.5) < 0.02


def test_trustworthiness_matches_sklearn_and_continuity_swaps_roles():
    from sklearn.manifold import trustworthiness as sk_trustworthiness

    X, Y = data()
    for k in (1, 5, 30):
        assert trustworthiness(X, Y, k) == pytest.approx(sk_trustworthiness(X, Y, n_neighbors=k))
        assert continuity(X, Y, k) == pytest.approx(trustworthiness(Y, X, k))


def test_rnx_matches_brute_force_overlaps():
    X, Y = data(n=60)
    n = 60
    rx = np.argsort(np.argsort(((X[:, None] - X[None]) ** 2).sum(-1), axis=1), axis=1)
    ry = np.argsort(np.argsort(((Y[:, None] - Y[None]) ** 2).sum(-1), axis=1), axis=1)
    curve = rnx_curve(X, Y)
    assert curve.shape == (n - 2,)
    for K in (1, 7, 58):
        q = np.sum((rx <= K) & (ry <= K) & (rx > 0)) / (K * n)
        assert curve[K - 1] == pytest.approx(((n - 1) * q - K) / (n - 1 - K))
    np.testing.assert_array_equal(rnx_curve(X, Y, ks=[1, 7, 58]), curve[[0, 6, 57]])
    weights = 1 / np.arange(1, n - 1)
    assert rnx_auc(X, Y) == pytest.approx(np.sum(curve * weights) / np.sum(weights))


def test_row_blocks_do_not_change_results(monkeypatch):
    X, Y = data()
    whole = trustworthiness(X, Y, 7), continuity(X, Y, 7), rnx_curve(X, Y)
    monkeypatch.setattr(metrics_rank, "_BLOCK_BYTES", 8 * 120 * 13)  # 13-row blocks
    blocked = trustworthiness(X, Y, 7), continuity(X, Y, 7), rnx_curve(X, Y)
    assert blocked[:2] == whole[:2]
    np.testing.assert_array_equal(blocked[2], whole[2])


def test_triplets_estimate_the_exact_fraction():
    X, Y = data(n=6, noise=1.0, seed=4)
    d = lambda Z, a, b: np.sum((Z[a] - Z[b]) ** 2)  # noqa: E731
    exact = np.mean([(d(X, i, j) < d(X, i, h)) == (d(Y, i, j) < d(Y, i, h))
                     for i, j, h in permutations(range(6), 3)])
    estimate = random_triplet_accuracy(X, Y, n_triplets=200_000, random_state=1)
    assert abs(estimate - exact) < 0.005
    assert random_triplet_accuracy(X, Y, 1000, random_state=2) == \
        random_triplet_accuracy(X, Y, 1000, random_state=2)


def test_pbic_formula():
    assert pbic(1.5, 30, 1000) == pytest.approx(3.0 + 0.03 * math.log(1000))
    with pytest.raises(ValueError, match="perplexity"):
        pbic(1.0, 0, 100)


def test_subsample_is_reproducible(monkeypatch):
    X, Y = data(n=150)
    a = rnx_curve(X, Y, max_n=80)
    assert a.shape == (78,)
    np.testing.assert_array_equal(a, rnx_curve(X, Y, max_n=80))
    assert not np.array_equal(a, rnx_curve(X, Y, max_n=80, random_state=5))
    monkeypatch.setattr(metrics, "RANK_MAX_N", 80)
    out = compute_metrics(X, Y, 10)
    assert set(out) == {"k", "knn_preservation", "rnx_auc", "rank_subsample"}
    assert out["rank_subsample"] == 80
    assert out["rnx_auc"] == rnx_auc(X, Y, max_n=80)
    asked = compute_metrics(X, Y, 10, which=["trust", "continuity", "random_triplet_accuracy"])
    assert asked["trustworthiness"] == trustworthiness(X, Y, 10, max_n=80)
    assert asked["continuity"] == continuity(X, Y, 10, max_n=80)
    assert asked["random_triplet_accuracy"] == random_triplet_accuracy(X, Y)


def test_compute_metrics_default_set():
    X, Y = data()
    out = compute_metrics(X, Y, 10, cost=1.25, perplexity=30)
    assert out == pytest.approx({
        "k": 10, "knn_preservation": knn_preservation(X, Y, 10),
        "trustworthiness": trustworthiness(X, Y, 10), "continuity": continuity(X, Y, 10),
        "rnx_auc": rnx_auc(X, Y), "pbic": pbic(1.25, 30, 120)})
    assert compute_metrics(X[:5], Y[:5], 10) == {"k": 10}


def test_bad_arguments():
    X, Y = data(n=20)
    with pytest.raises(ValueError, match="same number of rows"):
        knn_preservation(X, Y[:19], 3)
    for k in (0, 20, 2.5, True):
        with pytest.raises(ValueError, match="k must be a whole number between 1 and n - 1 = 19"):
            trustworthiness(X, Y, k)
    with pytest.raises(ValueError, match="k < n / 2"):
        continuity(X, Y, 10)
    with pytest.raises(ValueError, match="ks must be"):
        rnx_curve(X, Y, ks=[0, 3])
    with pytest.raises(ValueError, match="n_triplets"):
        random_triplet_accuracy(X, Y, n_triplets=0)
    with pytest.raises(ValueError, match="Valid names: knn_preservation, trustworthiness"):
        compute_metrics(X, Y, 3, which=["trustworthyness", "bogus"])
    with pytest.raises(ValueError, match="pbic"):
        compute_metrics(X, Y, 3, which="pbic")


def test_cli_metrics_json_has_the_new_keys(tmp_path, capsys):
    out = tmp_path / "x.csv"
    assert main(["embed", "iris", "--max-iter", "50", "--seed", "1", "--out", str(out),
                 "--metrics"]) == 0
    stdout = capsys.readouterr().out
    assert "continuity@15" in stdout and "rnx auc" in stdout and "pbic" in stdout
    record = json.loads((tmp_path / "x.json").read_text())
    m = record["metrics"]
    assert set(m) == {"k", "knn_preservation", "trustworthiness", "continuity", "rnx_auc", "pbic"}
    assert m["pbic"] == pytest.approx(2 * record["result"]["final_cost"] + 30 / 150 * math.log(150))
    assert 0 < m["continuity"] <= 1 and 0 < m["rnx_auc"] <= 1
