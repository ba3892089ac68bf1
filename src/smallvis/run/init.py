"""Output initialisation (docs/original.md#output-initialisation): rand, pca, spca, laplacian,
normlaplacian, a matrix; power, NCVis's power-iteration initialisation (docs/methods.md#ncvis);
and pcascaled, the PCA start of openTSNE and scikit-learn (the modern defaults' init for gradient
methods).

Spectral initialisations are component-aware: on a disconnected affinity graph (or if the eigensolver
does not converge) they fall back to PCA scaled to unit-norm columns and log why, instead of hanging or
returning NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._util.log import logger
from .._util.names import match_name
from ..io.preprocess import pca_scores

PCASCALED_SDEV = 1e-4  # the first column's standard deviation after scaling
DENSE_EIGEN_LIMIT = 3000


def resolve_init(Y_init) -> str:
    """Name of the init (``"matrix"`` for an array)."""
    if isinstance(Y_init, str):
        return match_name(Y_init, INITS, "initialization")
    return "matrix"


def rescale(Y: np.ndarray, sdev: float) -> np.ndarray:
    """Centre each column and scale it to sample standard deviation ``sdev``."""
    Y = Y - Y.mean(axis=0)
    sd = Y.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    return Y / (sd / sdev)


def scale_by_first_column(Y: np.ndarray, sdev: float = PCASCALED_SDEV) -> np.ndarray:
    """Centre ``Y`` and divide every column by the first column's (population) standard deviation,
    times ``sdev``: openTSNE's and scikit-learn's PCA start. Unlike ``spca`` (each column to sd
    1e-4), the columns keep their relative spread, so the start shows the data's aspect ratio."""
    Y = Y - Y.mean(axis=0)
    sd = Y[:, 0].std()
    return Y if sd == 0 else Y * (sdev / sd)


def check_init_matrix(Y, n: int, k: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape != (n, k):
        raise ValueError(f"Y_init matrix must have shape ({n}, {k}) (points x output dims); got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y_init matrix contains NaN or infinite values")
    return Y.copy()


def classical_mds(R: np.ndarray, k: int) -> np.ndarray:
    """Classical (Torgerson) MDS of a distance matrix: top-k eigenvectors of -J R^2 J / 2 times sqrt(eigenvalue)."""
    n = R.shape[0]
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ (R**2) @ J
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:k]
    return vecs[:, order] * np.sqrt(np.maximum(vals[order], 0.0))


def pca_init(X: np.ndarray, k: int, *, precomputed: bool, already_pca: bool, rng) -> np.ndarray:
    """PCA scores of the processed input (classical MDS for a distance matrix).

    When the input was already PCA-reduced its leading columns are the scores (the original takes
    columns 1:2 whatever ``k``; we take 1:k).
    """
    if precomputed:
        return classical_mds(X, k)
    if already_pca:
        return X[:, :k].copy()
    if X.shape[1] < k:
        raise ValueError(f"Y_init='pca' needs at least k={k} input columns; got n_features={X.shape[1]}")
    return pca_scores(X, k, rng)


def _unit_columns(Y: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(Y, axis=0)
    norms[norms == 0] = 1.0
    return Y / norms


def _components(A: np.ndarray) -> int:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    return connected_components(csr_matrix((A + A.T) > 0), directed=False)[0]


def _spectral_sparse(A, k: int, normalized: bool) -> np.ndarray:
    """:func:`_spectral` for a scipy sparse affinity matrix (the stochastic engine's graph): ARPACK on
    ``D^-1/2 A D^-1/2`` without densifying (a non-symmetric A is symmetrised first)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    A = sp.csr_matrix(A, dtype=np.float64)
    if abs(A - A.T).max() > 1e-12 * abs(A).max():
        A = 0.5 * (A + A.T)
    d = np.asarray(A.sum(axis=0)).ravel()
    isd = 1.0 / np.sqrt(d)
    S = sp.diags(isd) @ A @ sp.diags(isd)
    n = A.shape[0]
    # ~sqrt(n) Lanczos vectors: the leading eigenvalues of a kNN graph are close together
    ncv = min(n, max(2 * (k + 1) + 1, int(np.sqrt(n))))
    vals, vecs = eigsh(S, k=k + 1, which="LA" if normalized else "LM", tol=1e-4, ncv=ncv,
                       maxiter=5 * n, v0=np.sqrt(d / d.sum()))
    if normalized:
        order = np.argsort(1.0 - vals, kind="stable")[1:k + 1]
        return _unit_columns(vecs[:, order])
    order = np.argsort(-np.abs(vals), kind="stable")[1:k + 1]
    return _unit_columns(vecs[:, order] * isd[:, None])


def _spectral(A: np.ndarray, k: int, normalized: bool) -> np.ndarray:
    """Eigenvectors for the Laplacian eigenmap (``normalized=False``) or normalised Laplacian."""
    import scipy.sparse as sp

    if sp.issparse(A):
        return _spectral_sparse(A, k, normalized)
    d = A.sum(axis=0)
    n = A.shape[0]
    symmetric = np.allclose(A, A.T, rtol=1e-12, atol=1e-15)
    if not symmetric:
        if normalized:
            L = np.eye(n) - A / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]
            vals, vecs = np.linalg.eig(L)
            order = np.argsort(vals.real)[1:k + 1]
        else:
            vals, vecs = np.linalg.eig(A / d[:, None])
            order = np.argsort(-np.abs(vals))[1:k + 1]
        return _unit_columns(vecs[:, order].real)
    isd = 1.0 / np.sqrt(d)
    S = A * isd[:, None] * isd[None, :]
    if n <= DENSE_EIGEN_LIMIT:
        vals, vecs = np.linalg.eigh(S)
    else:
        from scipy.sparse.linalg import eigsh

        v0 = np.sqrt(d / d.sum())
        vals, vecs = eigsh(S, k=k + 1, which="LM" if not normalized else "LA", tol=1e-4,
                           maxiter=5 * n, v0=v0)
    if normalized:  # eigenvalues of L = 1 - eig(S), ascending; drop the smallest
        order = np.argsort(1.0 - vals, kind="stable")[1:k + 1]
        return _unit_columns(vecs[:, order])
    order = np.argsort(-np.abs(vals), kind="stable")[1:k + 1]
    return _unit_columns(vecs[:, order] * isd[:, None])


def spectral_init(A: np.ndarray, k: int, *, normalized: bool, fallback) -> np.ndarray:
    """Laplacian eigenmap / normalised-Laplacian init of affinity ``A``; ``fallback()`` on trouble."""
    name = "normlaplacian" if normalized else "laplacian"
    n = A.shape[0]
    if n < k + 2:
        logger.warning("%s init needs more than k + 1 points; using PCA instead", name)
        return _unit_columns(fallback())
    ncomp = _components(A)
    if ncomp > 1:
        logger.warning(
            "%s init: the affinity graph has %d disconnected components, so its eigenvectors only "
            "separate components; using PCA (unit-norm columns) instead", name, ncomp)
        return _unit_columns(fallback())
    try:
        Y = _spectral(A, k, normalized)
    except Exception as err:  # eigensolver failures of any kind
        logger.warning("%s init failed (%s); using PCA (unit-norm columns) instead", name, err)
        return _unit_columns(fallback())
    if not np.all(np.isfinite(Y)):
        logger.warning("%s init produced non-finite values; using PCA instead", name)
        return _unit_columns(fallback())
    return Y


def _standardise_columns(Y: np.ndarray) -> np.ndarray:
    """Each column to mean 0 and population standard deviation 1 (a constant column to 0)."""
    Y = Y - Y.mean(axis=0)
    sd = Y.std(axis=0)
    sd[sd == 0] = 1.0
    return Y / sd


def power_iteration_init(A, k: int, rng: np.random.Generator, n_iter: int = 20) -> np.ndarray:
    """NCVis's initialisation: a few rounds of power iteration on the affinity graph.

    ``Y`` starts Uniform(0, 1) (an (n, k) draw from ``rng``); each of ``n_iter`` rounds replaces it by
    ``A Y`` and standardises every column to mean 0 and population sd 1. ``A`` (n, n) is used as given,
    dense or scipy sparse (never densified); the reference divides the neighbour sum by the number of
    neighbours, which the standardisation removes. ``n_iter = 0`` returns the uniform draw, as the
    reference does.
    """
    shape = getattr(A, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"power iteration init needs a square (n, n) affinity matrix; got shape {shape}")
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"power iteration init: k must be a whole number >= 1; got {k!r}")
    if isinstance(n_iter, bool) or int(n_iter) != n_iter or n_iter < 0:
        raise ValueError(f"power iteration init: n_iter must be a whole number >= 0; got {n_iter!r}")
    Y = rng.uniform(0.0, 1.0, size=(shape[0], int(k)))
    for _ in range(int(n_iter)):
        Y = _standardise_columns(np.asarray(A @ Y, dtype=np.float64))
    return Y


# -- the registry: every init by name ---------------------------------------------------------------


@dataclass(frozen=True)
class InitContext:
    """What an init may use: the processed input, the method and its prepared state, the output
    dimension, the random stream, whether the input is already PCA scores, and the given matrix."""

    data: Any
    method: Any
    state: Any
    k: int
    rng: np.random.Generator
    pca_applied: bool = False
    matrix: Any = None


@dataclass(frozen=True)
class Init:
    """An init: ``make(context, sdev)`` returns (n, k) coordinates. ``rescaled``: the columns are
    then scaled to sd 1e-4 (or ``Y_init_sdev``) as the original does for ``rand`` and ``spca``;
    ``own_sdev``: ``make`` applies ``Y_init_sdev`` itself (otherwise a given ``Y_init_sdev``
    rescales every init)."""

    make: Callable[[InitContext, float | None], np.ndarray]
    rescaled: bool = False
    own_sdev: bool = False
    doc: str = ""


def _pca(c: InitContext, sdev=None) -> np.ndarray:
    if getattr(c.data, "graph", False):  # neighbours or affinities only: no coordinates to project
        A = c.method.laplacian_affinity(c.state)
        logger.info("init: a kNN graph or affinities have no principal components; the "
                    "normalised-Laplacian eigenmap of P instead")
        return spectral_init(A, c.k, normalized=True,
                             fallback=lambda: c.rng.standard_normal((c.data.n, c.k)))
    return pca_init(c.data.X, c.k, precomputed=c.data.precomputed, already_pca=c.pca_applied,
                    rng=c.rng)


def _pcascaled(c: InitContext, sdev) -> np.ndarray:
    return scale_by_first_column(_pca(c), PCASCALED_SDEV if sdev is None else float(sdev))


def _power(c: InitContext, sdev=None) -> np.ndarray:
    A = c.method.laplacian_affinity(c.state)
    if A is None:
        raise ValueError(f"Y_init='power' needs input affinities; method {c.method.name!r} has none")
    return power_iteration_init(A, c.k, c.rng, n_iter=int(c.method.params.get("n_init_epochs", 20)))


def _spectral_of(normalized: bool):
    def make(c: InitContext, sdev=None) -> np.ndarray:
        A = c.method.laplacian_affinity(c.state)
        if A is None:  # a method without P: the output kernel of the input distances
            A = 1.0 / (1.0 + c.data.distances())
            np.fill_diagonal(A, 0.0)
        return spectral_init(A, c.k, normalized=normalized, fallback=lambda: _pca(c))
    return make


INITS: dict[str, Init] = {
    "rand": Init(lambda c, sdev: c.rng.standard_normal((c.data.n, c.k)), rescaled=True,
                 doc="Gaussian noise, sd 1e-4"),
    "pca": Init(_pca, doc="PCA scores (classical MDS for distances)"),
    "spca": Init(_pca, rescaled=True, doc="PCA scores scaled to sd 1e-4"),
    "laplacian": Init(_spectral_of(False), doc="Laplacian eigenmap of the affinities"),
    "normlaplacian": Init(_spectral_of(True), doc="normalised-Laplacian eigenmap (UMAP's)"),
    "power": Init(_power, doc="NCVis's power iteration on the affinities"),
    "pcascaled": Init(_pcascaled, own_sdev=True,
                      doc="PCA with the first column at sd 1e-4 (openTSNE's)"),
}


def initial_layout(name: str, context: InitContext, sdev: float | None = None) -> np.ndarray:
    """The starting coordinates of init ``name`` (a registered name, or ``"matrix"`` for
    ``context.matrix``), with ``Y_init_sdev`` = ``sdev`` applied as the original does."""
    if name == "matrix":
        Y = check_init_matrix(context.matrix, context.data.n, context.k)
        init = Init(None)
    else:
        init = INITS[name]
        Y = init.make(context, sdev)
    if not init.own_sdev and (sdev is not None or init.rescaled):
        Y = rescale(Y, 1e-4 if sdev is None else float(sdev))
    return Y
