"""Turning user data into a float64 matrix: numeric columns, scaling, PCA and whitening.

See docs/original.md#input-processing. Every function takes and returns plain arrays.
"""

from __future__ import annotations

import numpy as np

from .._util.names import match_name

SCALE_MODES = ("none", "scale", "range", "absmax")


def numeric_columns(frame, *, what: str = "X", warn: bool = True):
    """The numeric (and boolean) columns of a DataFrame; ``ValueError`` if there are none.

    The original drops the other columns silently; here a ``UserWarning`` names them (unless
    ``warn=False``), since a text column of labels or a categorical feature that vanishes from the
    input changes the embedding without a trace.
    """
    numeric = frame.select_dtypes(include=["number", "bool"])
    if numeric.shape[1] == 0:
        raise ValueError(
            f"{what} has no numeric columns (columns: {', '.join(map(str, frame.columns))})"
        )
    complex_cols = [c for c, dt in numeric.dtypes.items() if np.issubdtype(dt, np.complexfloating)]
    if complex_cols:
        raise TypeError(f"{what} column(s) {', '.join(map(repr, complex_cols))} hold complex "
                        f"values: give the real part, the modulus, or real and imaginary parts "
                        f"as two columns")
    if warn and numeric.shape[1] < frame.shape[1]:
        import warnings

        dropped = [c for c in frame.columns if c not in set(numeric.columns)]
        warnings.warn(f"{what}: non-numeric column(s) {', '.join(map(repr, dropped))} dropped "
                      f"(only numeric and boolean columns are embedded)", UserWarning, stacklevel=3)
    return numeric


def is_dataframe(X) -> bool:
    return hasattr(X, "select_dtypes") and hasattr(X, "columns")


def _is_sparse(X) -> bool:
    """A scipy sparse matrix or array (recognised without importing scipy)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz") and hasattr(X, "shape")


def as_numeric_matrix(X, *, what: str = "X") -> np.ndarray:
    """A C-contiguous float64 2-D array from an array-like or a DataFrame (non-numeric columns dropped,
    with a warning naming them).

    Memory layout is normalised so that results do not depend on it. Raises ``ValueError`` or
    ``TypeError`` naming the problem for: a sparse matrix (not supported yet), complex values, masked
    entries, no numeric column, wrong dimensionality, no rows, missing or infinite values; a cast
    would otherwise drop the imaginary part or the mask without a word.
    """
    if _is_sparse(X):
        raise TypeError(f"{what} is a scipy sparse matrix of shape {X.shape}: this needs dense "
                        f"input; convert it with {what}.toarray()")
    if is_dataframe(X):
        X = numeric_columns(X, what=what).to_numpy(dtype=np.float64, na_value=np.nan)
    if np.ma.isMaskedArray(X):
        mask = np.ma.getmaskarray(X)
        if mask.any():
            where = np.argwhere(mask)[0]
            raise ValueError(f"{what} is a masked array with {int(mask.sum())} masked value(s), "
                             f"first at {tuple(int(i) for i in where)}: missing data is not "
                             f"allowed; fill them ({what}.filled(value)) or drop those rows")
        X = np.ma.getdata(X)
    try:
        X = np.asarray(X)
        if np.iscomplexobj(X):
            raise TypeError(f"{what} has complex values (dtype {X.dtype}): give the real part, "
                            f"the modulus, or real and imaginary parts as separate columns")
        X = np.ascontiguousarray(X, dtype=np.float64)
    except ValueError as err:
        raise ValueError(f"{what} must be numeric: {err}") from None
    except TypeError as err:
        if "complex values" in str(err):
            raise
        raise ValueError(f"{what} must be numeric: {err}") from None
    if X.ndim != 2:
        raise ValueError(f"{what} must be a 2-D matrix (points in rows); got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{what} has no rows (shape {X.shape}): there is nothing to embed")
    if X.shape[1] == 0:
        raise ValueError(f"{what} has no columns")
    check_finite(X, what=what)
    return X


def as_sparse_matrix(X, *, what: str = "X"):
    """A canonical CSR float64 copy of a scipy sparse matrix (sorted indices, duplicates summed,
    explicit zeros dropped), with the checks of :func:`as_numeric_matrix` on its stored values."""
    if np.iscomplexobj(X.data):
        raise TypeError(f"{what} has complex values (dtype {X.dtype}): give the real part or the "
                        "modulus")
    try:
        X = X.tocsr().astype(np.float64, copy=True)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be numeric: {err}") from None
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{what} must be a 2-D matrix with rows and columns; got shape {X.shape}")
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    bad = ~np.isfinite(X.data)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(X.indptr, first, side="right") - 1)
        raise ValueError(f"{what} contains {int(bad.sum())} NaN or infinite value(s), first at row "
                         f"{row}, column {int(X.indices[first])}: missing data is not allowed")
    return X


def sparse_scaling(X, mode: str):
    """The scaling of a CSR matrix under ``mode``, without centring: ``(keep, divisor)`` with
    ``keep`` the columns kept (``"scale"``: non-constant ones) or None, and ``divisor`` a number or
    one per kept column. A translation changes no Minkowski-type distance but would make the matrix
    dense; so ``absmax`` divides by the largest absolute entry, ``range`` by the range of all
    entries (zeros included), ``scale`` each column by its sample sd."""
    if mode == "none":
        return None, 1.0
    values = X.data
    if mode == "absmax":
        top = float(np.abs(values).max()) if values.size else 0.0
        return None, (top if top > 0 else 1.0)
    if mode == "range":
        n_cells = X.shape[0] * X.shape[1]
        lo = min(float(values.min()), 0.0) if values.size else 0.0
        hi = max(float(values.max()), 0.0) if values.size else 0.0
        if values.size == n_cells:
            lo, hi = float(values.min()), float(values.max())
        return None, (hi - lo if hi > lo else 1.0)
    if mode == "scale":
        n = X.shape[0]
        if n < 2:
            raise ValueError("scale='scale' needs at least 2 points")
        mean = np.asarray(X.sum(axis=0)).ravel() / n
        sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
        var = np.maximum(sq - n * mean * mean, 0.0) / (n - 1)
        sd = np.sqrt(var)
        keep = sd > 0
        if not keep.any():
            raise ValueError("scale='scale': every column has zero variance")
        return keep, sd[keep]
    raise ValueError(f"unknown scale mode {mode!r}")


def apply_sparse_scaling(X, keep, divisor):
    """``X[:, keep] / divisor`` for a CSR ``X`` (a new matrix), as :func:`sparse_scaling` gave them."""
    if keep is not None:
        X = X[:, np.flatnonzero(keep)]
        X.sort_indices()
    X = X.copy()
    if np.ndim(divisor):
        X.data /= np.asarray(divisor)[X.indices]
    else:
        X.data /= divisor
    return X


def check_finite(X: np.ndarray, *, what: str = "X") -> None:
    """Reject NaN / infinite entries with a message that says where the first one is."""
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        kind = "missing (NaN)" if np.isnan(X[row, col]) else "infinite"
        raise ValueError(
            f"{what} contains {int(bad.sum())} {kind if bad.sum() == 1 else 'NaN or infinite'} "
            f"value(s), first at row {row}, column {col}: missing data is not allowed"
        )


def centre_columns(X: np.ndarray) -> np.ndarray:
    """``X`` (n, p) less its column means (the centring of the absmax and z-score scalings).

    Two passes (the second removes the rounding of the first mean, as R's ``mean`` does), and a
    constant column becomes exactly 0: its rounded mean need not equal its value (a column of 1e100
    would otherwise leave a constant residue near 1e84, harmless to distances but not to scaling
    that divides by the largest entry).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return X.copy()
    Xc = X - X.mean(axis=0)
    Xc -= Xc.mean(axis=0)
    Xc[:, (X == X[0]).all(axis=0)] = 0.0
    return Xc


def resolve_scale(scale) -> str:
    """Map the ``scale`` argument (None/False/True or a name or prefix) to one of SCALE_MODES."""
    if scale is None or scale is False:
        return "none"
    if scale is True:
        return "scale"
    return match_name(scale, SCALE_MODES, "scale mode")


def scale_input(X: np.ndarray, mode: str) -> np.ndarray:
    """Scale ``X`` as the original does (mode already resolved by :func:`resolve_scale`).

    - ``none``: unchanged.
    - ``range``: ``(X - min(X)) / max(X - min(X))`` over the whole matrix.
    - ``absmax``: centre each column, then divide everything by ``|max(X_centred)|``: the absolute value
      of the largest *signed* element (the original's documented "max absolute value" is not what it does).
    - ``scale``: drop zero-variance columns, then z-score each column (sample sd).

    Centring is :func:`centre_columns` (two passes, constant columns exactly
    0), so a constant column, however large, neither sets the absmax divisor nor survives ``scale``.
    """
    X = np.array(X, dtype=np.float64, copy=True)
    if mode == "none":
        return X
    if mode == "range":
        X -= X.min()
        top = X.max()
        return X / top if top > 0 else X
    if mode == "absmax":
        X = centre_columns(X)  # a constant column is exactly 0, as R's two-pass mean leaves it
        top = abs(X.max())
        return X / top if top > 0 else X
    if mode == "scale":
        if X.shape[0] < 2:
            raise ValueError("scale='scale' needs at least 2 points")
        X = centre_columns(X)  # a constant column is exactly 0: zero variance, dropped
        sd = np.sqrt(np.einsum("ij,ij->j", X, X) / (X.shape[0] - 1))
        keep = sd > 0
        if not keep.any():
            raise ValueError("scale='scale': every column has zero variance")
        return X[:, keep] / sd[keep]
    raise ValueError(f"unknown scale mode {mode!r}")


def _centred_svd(X: np.ndarray, ncomp: int, rng=None):
    """Leading ``ncomp`` singular triplets of the column-centred ``X``.

    Exact LAPACK SVD (the original's path, same signs) whenever the matrix is small enough; a
    randomized truncated SVD otherwise (the original uses irlba there, which is not reproducible either).
    """
    if _is_sparse(X):
        return _centred_svd_sparse(X, ncomp, rng)
    Xc = X - X.mean(axis=0)
    n, p = Xc.shape
    if ncomp >= 0.5 * min(n, p) or n * p <= 4_000_000:
        U, d, _ = np.linalg.svd(Xc, full_matrices=False)
        return U[:, :ncomp], d[:ncomp]
    from sklearn.utils.extmath import randomized_svd

    seed = None if rng is None else int(rng.integers(2**31 - 1))
    U, d, _ = randomized_svd(Xc, ncomp, n_iter=7, random_state=seed)
    return U, d


def _centred_svd_sparse(X, ncomp: int, rng=None):
    """:func:`_centred_svd` of a CSR matrix, centred implicitly (ARPACK on a linear operator, the
    start vector from ``rng``): the matrix stays sparse. Signs: each column of U has its largest
    entry positive (ARPACK's signs are arbitrary)."""
    from scipy.sparse.linalg import LinearOperator, svds

    n, p = X.shape
    if ncomp >= min(n, p):
        raise ValueError(f"PCA of sparse input needs fewer components ({ncomp}) than min(n, p) = "
                         f"{min(n, p)}")
    mean = np.asarray(X.mean(axis=0)).ravel()
    Xt = X.T.tocsr()
    op = LinearOperator((n, p), dtype=np.float64,
                        matvec=lambda v: X @ np.ravel(v) - mean @ np.ravel(v),
                        rmatvec=lambda u: Xt @ np.ravel(u) - mean * np.ravel(u).sum(),
                        matmat=lambda V: X @ V - np.outer(np.ones(n), mean @ V),
                        rmatmat=lambda U: Xt @ U - np.outer(mean, U.sum(axis=0)))
    gen = np.random.default_rng(None if rng is None else int(rng.integers(2**31 - 1)))
    v0 = gen.uniform(-1.0, 1.0, min(n, p))
    U, d, _ = svds(op, k=ncomp, v0=v0, solver="arpack")
    order = np.argsort(d)[::-1]
    U, d = U[:, order], d[order]
    flip = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(ncomp)])
    flip[flip == 0] = 1.0
    return U * flip, d


def pca_scores(X: np.ndarray, ncomp: int, rng=None) -> np.ndarray:
    """PCA scores ``U[:, :ncomp] * d[:ncomp]`` of the column-centred data (no scaling)."""
    U, d = _centred_svd(X, ncomp, rng)
    return U * d


def pca_whiten(X: np.ndarray, ncomp: int, rng=None) -> np.ndarray:
    """PCA scores divided column-wise by ``sqrt(lambda_c + 1e-5)``, ``lambda_c = d_c^2 / (n - 1)``."""
    U, d = _centred_svd(X, ncomp, rng)
    lam = d**2 / (X.shape[0] - 1)
    return U * d / np.sqrt(lam + 1e-5)
