"""Supervised and semi-supervised embedding: labels weaken affinities across classes, on dense and
sparse P, for the SNE family and the fuzzy-set methods; the estimator's ``fit(X, y)`` and the CLI."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from smallvis import SmallVis, smallvis
from smallvis.affinity import AffinityRecipe
from smallvis.affinity.supervised import check_labels, cross_factor, supervise
from smallvis.cli import main


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[::2], y[::2]  # 899 points


def _knn_accuracy(Y, y):
    return cross_val_score(KNeighborsClassifier(10), Y, y, cv=5).mean()


@pytest.mark.parametrize("method", ["tsne", "umap", "asne"])
def test_labels_separate_the_classes(digits, method):
    """Supervised embeddings of digits classify (10-NN, cross-validated) clearly better than the
    unsupervised ones: t-SNE (matrix-normalised P), umap on sgd (a fuzzy set), asne (row P)."""
    X, y = digits
    plain = smallvis(X, method=method, defaults="auto", random_state=0)
    supervised = smallvis(X, method=method, defaults="auto", random_state=0, y=y)
    assert _knn_accuracy(supervised, y) > max(_knn_accuracy(plain, y) + 0.01, 0.98)


@pytest.mark.parametrize("engine", ["exact", "fft"])
def test_every_point_unlabelled_is_the_unsupervised_run(digits, engine):
    X, _ = digits
    kw = dict(method="tsne", engine=engine, defaults="auto", random_state=0, max_iter=40)
    plain = smallvis(X, **kw)
    for missing in (np.full(len(X), -1), np.full(len(X), np.nan), [None] * len(X)):
        np.testing.assert_array_equal(smallvis(X, y=missing, **kw), plain)


def test_weighting_rule_on_dense_and_sparse_p():
    """Cross-class pairs by exp(-2.5 / (1 - w)), unlabelled pairs untouched, then rescaled as the
    recipe scales P; the dense and sparse forms agree."""
    rng = np.random.default_rng(0)
    A = rng.uniform(size=(6, 6))
    P = (A + A.T) * (1 - np.eye(6))
    P /= P.sum()
    labels = check_labels(["a", "a", "b", "b", -1, "b"], 6)
    assert list(labels) == [0, 0, 1, 1, -1, 1]
    recipe = AffinityRecipe()  # symmetric, normalised
    dense = supervise(P, labels, 0.5, recipe)
    f = np.exp(-2.5 / 0.5)
    expect = P.copy()
    for i in range(6):
        for j in range(6):
            if labels[i] >= 0 and labels[j] >= 0 and labels[i] != labels[j]:
                expect[i, j] *= f
    np.testing.assert_allclose(dense, expect / expect.sum(), rtol=1e-14)
    np.testing.assert_allclose(supervise(sparse.csr_matrix(P), labels, 0.5, recipe).toarray(),
                               dense, rtol=1e-14)
    assert cross_factor(1.0) == 0.0 and cross_factor(0.0) == pytest.approx(np.exp(-2.5))
    fuzzy = AffinityRecipe(kernel="skd", symmetrize="fuzzy", normalize=False)
    out = supervise(P * 10, labels, 0.5, fuzzy)
    np.testing.assert_allclose(out, out.T)  # the fuzzy union is symmetric again
    assert out.max() <= 1.0 + 1e-15


def test_bad_labels_are_named(digits):
    X, y = digits
    with pytest.raises(ValueError, match="one value per point"):
        smallvis(X, y=y[:-1], max_iter=5)
    with pytest.raises(ValueError, match="target_weight"):
        smallvis(X, y=y, target_weight=1.5, max_iter=5)
    with pytest.raises(ValueError, match="input affinities"):
        smallvis(X[:100], method="mmds", y=y[:100], max_iter=5)


def test_estimator_fit_with_labels_and_transform(digits):
    """fit(X, y) supervises; transform places unlabelled new points next to the supervised layout."""
    X, y = digits
    est = SmallVis(random_state=0, target_weight=0.8).fit(X[:700], y[:700])
    assert est.result_.Y.shape == (700, 2)
    Y_new = est.transform(X[700:])
    knn = KNeighborsClassifier(10).fit(est.embedding_, y[:700])
    assert knn.score(Y_new, y[700:]) > 0.9


def test_cli_supervised(tmp_path, digits, capsys):
    import pandas as pd

    X, y = digits
    frame = pd.DataFrame(X[:300])
    frame["digit"] = y[:300]
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "e.csv"
    assert main(["embed", str(tmp_path / "d.csv"), "--labels", "digit", "--supervised",
                 "--target-weight", "0.7", "--max-iter", "100", "--out", str(out), "-q"]) == 0
    assert '"y": "labels from column digit"' in (tmp_path / "e.json").read_text()
    assert main(["embed", str(tmp_path / "d.csv"), "--supervised"]) == 2
    assert "--supervised needs --labels" in capsys.readouterr().err


def test_continuous_target():
    """target_metric='l2': pairs weakened by how far apart their targets are (a swiss-roll-like
    ribbon whose position along it is the target)."""
    from smallvis.affinity.supervised import check_labels

    rng = np.random.default_rng(0)
    t = rng.uniform(0, 10, 400)
    X = np.column_stack([np.cos(t), np.sin(t), rng.normal(scale=0.6, size=400)])
    base = smallvis(X, method="umap", defaults="auto", random_state=0, ret_extra=["P"])
    sup = smallvis(X, method="umap", defaults="auto", random_state=0, y=t, target_metric="l2",
                   target_weight=0.9, ret_extra=["P"])
    # P pairs with far-apart targets lose weight
    def spread(P):
        P = P.tocoo()
        return np.average(np.abs(t[P.row] - t[P.col]), weights=P.data)
    assert spread(sup.extras["P"]) < 0.8 * spread(base.extras["P"])
    # all unlabelled: exactly unsupervised; w = 0: nothing changes either
    none = smallvis(X, method="umap", defaults="auto", random_state=0,
                    y=np.full(400, np.nan), target_metric="l2")
    np.testing.assert_array_equal(none, base.Y)
    zero = smallvis(X, method="tsne", perplexity=20, max_iter=0, ret_extra=["P"], y=t,
                    target_metric="l2", target_weight=0.0, Y_init="rand", random_state=0)
    plain = smallvis(X, method="tsne", perplexity=20, max_iter=0, ret_extra=["P"],
                     Y_init="rand", random_state=0)
    np.testing.assert_allclose(zero.extras["P"], plain.extras["P"], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="needs a numeric y"):
        check_labels(np.array(["a", "b"]), 2, "l2")
    with pytest.raises(ValueError, match="target_metric"):
        smallvis(X, y=t, target_metric="cosine", max_iter=1)
