"""The Barnes-Hut tree with per-point output precisions (:mod:`.approx_bandwidth`,
:mod:`.approx_bnerv`): sums at the query's precision and at the sources' (their log moments per
cell, :mod:`.approx_bandwidth_kernels`), and the arrays of P a bandwidth plan reads."""

from __future__ import annotations

import numpy as np

_DATA_KEY = "_sparse_engine_bandwidth"


def prepared(method, state, form):
    """P's CSR arrays and those of its transpose, the column sums of ``P log P`` and of P, the
    precisions: made once per state."""
    if _DATA_KEY in state.data:
        return state.data[_DATA_KEY]
    from scipy import sparse

    from .attraction_kernels import csr_arrays
    from .exact_kernels import form_params

    P = sparse.csr_matrix(state.P, dtype=np.float64)
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
    Pt = P.T.tocsr()
    beta = np.ascontiguousarray(np.asarray(method.output_bandwidths(state), dtype=np.float64))
    if beta.shape != (P.shape[0],) or not (np.all(np.isfinite(beta)) and np.all(beta > 0)):
        raise ValueError(f"method {method.name!r}: the output bandwidths must be {P.shape[0]} "
                         f"positive finite precisions, one per point")
    cols = np.repeat(np.arange(P.shape[0]), np.diff(Pt.indptr))
    pos = Pt.data > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(pos, Pt.data * np.log(np.where(pos, Pt.data, 1.0)), 0.0)
    prep = {"P": csr_arrays(P), "Pt": csr_arrays(Pt), "beta": beta,
            "kp": form_params(form) if hasattr(form, "alpha") else None,
            "plogp": np.bincount(cols, weights=plogp, minlength=P.shape[0]),
            "colsum": np.bincount(cols, weights=np.where(pos, Pt.data, 0.0),
                                  minlength=P.shape[0])}
    state.data[_DATA_KEY] = prep
    return prep


class BandwidthTree:
    """A Barnes-Hut tree (:class:`.bh.TreeSums`) with the points' precisions ``beta``: sums at the
    query's precision (:meth:`query`) and at the sources' (:meth:`source`)."""

    def __init__(self, tree, beta):
        self.tree, self.beta, self.eps = tree, beta, tree.eps
        self.logb = np.log(beta)

    def query(self, code, kp, scalars=(), vectors=()):
        """``(S (n, scalars), V (n, vectors, k))``: ``sum_{j != i} fn(beta_i d2_ij)`` and times
        ``y_i - y_j``."""
        from .bh_radial_kernels import radial_sums

        t = self.tree
        n, k = t.Y.shape
        S, V = np.empty((n, len(scalars))), np.empty((n, len(vectors), k))
        radial_sums(t.Y, t.node, t.skip, t.order, t.theta, t.eps, t.tol, code, kp, 0.0, self.beta,
                    t.quad, np.array(scalars, dtype=np.int64), np.array(vectors, dtype=np.int64),
                    S, V)
        return S, V

    def source(self, code, kp, fn, charges=None):
        """``sum_{j != i} c_j beta_j fn(beta_j d2_ij) (y_i - y_j)`` (n, k), charges ``c`` >= 0
        (None: 1)."""
        from . import approx_bandwidth_kernels as kern

        t = self.tree
        n, k = t.Y.shape
        c = np.ones(n) if charges is None else np.ascontiguousarray(charges, dtype=np.float64)
        bnode, first = kern.beta_nodes(t.Y, t.node, t.skip, t.order, c, self.logb)
        V = np.empty((n, k))
        kern.source_sums(t.Y, bnode, t.skip, t.order, first, t.theta, t.eps, t.tol, code, kp,
                         int(fn), c, self.beta, t.quad, V)
        return V


def bandwidth_tree(engine, Y, beta, eps):
    """:class:`BandwidthTree` of ``engine``'s tree at ``Y``."""
    return BandwidthTree(engine.radial(Y, eps), beta)
