"""The fused exact engine's evaluation of the costs described by ``Method.pair_form`` (largevis, umap,
tumap, the f-divergences, the distance costs) and of KL with a sparse P.

Every cost here is a sum over ordered pairs of a term of the pair's input value and output squared
distance, so one pass over the unordered pairs (:func:`.exact_pair_kernels.pair_pass`) gives the
per-point costs and the forces, after at most one earlier pass for the normaliser ``Z = sum W``
(the f-divergences). Per divergence (``p = f P_ij``, ``w`` the output weight, ``q = w / Z``):

- largevis, umap, tumap: the terms of :mod:`smallvis.methods.largevis` / :mod:`smallvis.methods.umap`
  pair by pair; UMAP's constant ``sum P log P + (1 - P) log(1 - P)`` is computed once per
  exaggeration;
- rklsne, jssne, chsne, hlsne: the gradient ``K = q w (kk' + c S)`` needs the global sum ``S``
  (``sum Q log(Q/P)``, ``sum Q log(Q/M)``, ``sum P^2/Q``, ``sum sqrt(PQ)``; ``c = 4, 2, -4, -4``),
  known only after the pass: the pass returns the forces of ``q w`` apart and
  ``G = G_kk + c S G_qw``; the normalised cross-entropy of ntumap and cetsne likewise, with
  ``C = (p - q) / (1 - q)``, ``S = sum C``, ``K = 4 w C - 4 S q w`` and its constant
  ``sum P log P + (1 - P) log(1 - P)`` (P floored at eps for cetsne) added per point;
- mmds (gmmds, ballmmds), smmds, sammon: read the input distances ``R`` once (no P, no
  exaggeration); sammon's costs are divided by ``sum R`` at the end;
- ee, tee (no exaggeration): ee reads P and, with ``neg_weights``, its repulsion weights ``Vn`` as
  a second input matrix; tee reads its un-normalised affinities ``V``, and its costs are divided by
  ``N = sum V`` and its per-point constant added at the end.

With a sparse P (largevis, umap, tumap) the pass runs with every P value 0 (the repulsion, which
does not involve P, over all pairs) and :func:`.exact_pair_kernels.stored_pair_terms` adds what the
stored entries contribute (these costs are affine in P). KL with a sparse P is the
:class:`.approx.SparseKLEngine` seam with an exact repulsion pass (:class:`ExactSparseKL`).
"""

from __future__ import annotations

import numpy as np

from .approx import SparseKLEngine

# codes of .exact_pair_kernels
DIVERGENCES = {"largevis": 1, "umap": 2, "rklsne": 3, "jssne": 4, "chsne": 5, "hlsne": 6,
               "mmds": 7, "smmds": 8, "sammon": 9, "ee": 10, "tee": 11}
WEIGHTS = {"t": 0, "cauchy": 1, "umap": 2, "logistic": 3, "none": 0}
# the f-divergences: the multiple of the global sum S in the gradient
S_FACTOR = {"rklsne": 4.0, "jssne": 2.0, "chsne": -4.0, "hlsne": -4.0}
# the cross-entropy with Q = W / Z (ntumap; cetsne, whose constant floors P at eps): K = 4 w C -
# 4 S q w with S = sum C
DIVERGENCES.update(ntumap=20, cetsne=20)
S_FACTOR.update(ntumap=-4.0, cetsne=-4.0)
# the costs that read the input distances R instead of P
DISTANCE_COSTS = ("mmds", "smmds", "sammon")
# the costs a sparse P serves (affine in P: attraction over the stored entries)
SPARSE_COSTS = ("largevis", "umap")


class Workspace:
    """Scratch arrays of the fused passes for one (n, k): the chunk bounds, and per-chunk buffers
    allocated on first use and reused by every later evaluation."""

    def __init__(self, n: int, k: int):
        from .exact_kernels import N_CHUNKS, chunk_bounds

        self.n, self.k, self.chunks = n, k, N_CHUNKS
        self.bounds = chunk_bounds(n, N_CHUNKS)
        self.zeros = np.zeros((1, n))  # the P row of a pass without P
        self.ones = np.ones((1, n))  # the second input's row of a pass without one
        self._arrays = {}

    def __call__(self, name: str, *shape: int) -> np.ndarray:
        a = self._arrays.get(name)
        if a is None or a.shape != shape:
            a = self._arrays[name] = np.empty(shape)
        return a

    def run(self, Yt, X, div, wk, prm, *, cost, grad, two_forces=False, X2=None):
        """Run :func:`.exact_pair_kernels.pair_pass` (``X2``: the second (n, n) input, None for
        none); returns ``(S, G or None, pcost or None)`` (``G`` (n, 2k) with ``two_forces``)."""
        from .exact_pair_kernels import pair_pass

        n, k, chunks = self.n, self.k, self.chunks
        nf = 2 * k if two_forces else k
        G = np.empty((n, nf)) if grad else np.empty((0, 0))
        pcost = np.empty(n) if cost else np.empty(0)
        S = pair_pass(Yt, X, self.ones if X2 is None else X2, div, wk, prm, self.bounds,
                      bool(cost), bool(grad), bool(two_forces),
                      self("d2", chunks, n), self("kk", chunks, n), self("k2", chunks, n),
                      self("cc", chunks, n),
                      self("t2", chunks, 2, n) if two_forces and k == 2 else np.empty((0, 0, 0)),
                      self("gbuf2" if two_forces else "gbuf", chunks, nf, n),
                      self("cbuf", chunks, n), G, pcost)
        return S, (G if grad else None), (pcost if cost else None)


def _params(form, f: float) -> np.ndarray:
    from . import exact_pair_kernels as pk

    prm = np.zeros(pk.N_PARAMS)
    prm[pk.F], prm[pk.GAMMA], prm[pk.GR_EPS], prm[pk.EPS] = f, form.gamma, form.gr_eps, form.eps
    prm[pk.A], prm[pk.B], prm[pk.RMAX], prm[pk.NORM] = form.a, form.b, form.rmax, form.norm
    prm[pk.GR_1MW] = 1.0 if form.gr_form == "1-w" else 0.0
    prm[pk.SIGNED] = 1.0 if form.signed_drop else 0.0
    return prm


def csr_parts(P):
    """``(indptr, indices, data)`` of a sparse P as int64 / float64 arrays."""
    from scipy import sparse

    from .attraction_kernels import csr_arrays

    return csr_arrays(sparse.csr_matrix(P, dtype=np.float64))


def pair_evaluator(form):
    """The function that evaluates a pair form: :func:`evaluate_pairs`, or the AB-divergence's
    (:func:`.exact_ab.evaluate_ab`) and NCE's (:func:`.exact_nce.evaluate_nce`), with the same
    arguments."""
    from .exact_ab import DIVERGENCES as AB_DIVERGENCES

    if form.divergence in AB_DIVERGENCES:
        from .exact_ab import evaluate_ab

        return evaluate_ab
    if form.divergence == "nce":
        from .exact_nce import evaluate_nce

        return evaluate_nce
    return evaluate_pairs


def evaluate_pairs(form, state, X, Y, f, ws, *, cost, grad, X2=None):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of a pair form at ``Y``.

    ``X``: the (n, n) input values (P, R or V, C-ordered, symmetric), or a sparse P's
    ``(indptr, indices, data)`` (:func:`csr_parts`; largevis and umap only); ``X2``: the second
    (n, n) input (``form.weights``: ee's ``Vn``, C-ordered, symmetric) or None.
    """
    from . import exact_kernels as kern
    from . import exact_pair_kernels as pk

    name = form.divergence
    div, wk = DIVERGENCES[name], WEIGHTS[form.weight]
    n, k = Y.shape
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    Yt = np.ascontiguousarray(Y.T)
    prm = _params(form, f)
    fdiv = name in S_FACTOR
    if fdiv:
        prm[pk.INV_Z] = 1.0 / kern.weight_total(Yt, kern.T_KERNEL, 1.0, ws.bounds,
                                                ws("d2", ws.chunks, n))
    csr = X if isinstance(X, tuple) else None
    S, G, pcost = ws.run(Yt, ws.zeros if csr is not None else X, div, wk, prm, cost=cost,
                         grad=grad, two_forces=fdiv, X2=X2)
    if csr is not None:
        pk.stored_pair_terms(*csr, Y, div, wk, prm, bool(grad), bool(cost),
                             G if grad else np.empty((0, 0)), pcost if cost else np.empty(0))
    if grad and fdiv:
        G = G[:, :k] + (S_FACTOR[name] * S) * G[:, k:]
    if cost:
        if name in ("ntumap", "cetsne"):  # the constant, less the diagonal's log(1 + eps)
            pcost += state.cached("exact_normalised_ce", f, lambda: kern.cross_entropy_rows(
                X, f, form.eps, name == "cetsne", False) - np.log1p(form.eps))
        if name == "umap":
            pcost += state.cached("exact_cross_entropy", f,
                                  lambda: _cross_entropy_constant(X, n, f, form.eps))
        elif name == "jssne":
            pcost += 0.5 * state.cached("plogp_exact", f, lambda: kern.plogp_rows(X, f, form.eps))
        elif name == "sammon":
            pcost /= form.norm
        elif name == "tee":
            pcost /= form.norm
            pcost += state.data["const"]
    return pcost, G


def _cross_entropy_constant(X, n, f, eps):
    """Per point ``sum_{j != i} p log(p + eps) + (1 - p) log(1 - p + eps)`` (``p = f P_ij``) of the
    (n, n) P or a sparse P's CSR arrays."""
    from .exact_kernels import cross_entropy_rows

    if not isinstance(X, tuple):
        return cross_entropy_rows(X, f, eps, False, True)
    indptr, _, data = X
    p = f * data
    # a stored entry replaces the (n - 1) zero-P pairs' log(1 + eps) by its own term
    terms = p * np.log(p + eps) + (1.0 - p) * np.log1p(-p + eps) - np.log1p(eps)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(rows, weights=terms, minlength=n) + (n - 1) * np.log1p(eps)


class ExactSparseKL(SparseKLEngine):
    """KL with a sparse P (Student-t or heavy-tailed kernel): :class:`.approx.SparseKLEngine`'s
    attraction over the stored entries and an exact, deterministic all-pairs repulsion; the
    per-point cost is the dense engine's (with its ``eps`` terms for the pairs P does not store)."""

    name = "exact"

    def __init__(self, workspace):
        super().__init__(knn="exact")
        self._workspace = workspace  # (n, k) -> Workspace

    def repulsion(self, Y, code, alpha, forces, eps=0.0):
        """``Z = sum_{i != j} w_ij`` and ``R_i = sum_j w_ij^(1 + alpha) (y_i - y_j)``, each pair once
        (exact: ``eps`` is not needed)."""
        from . import exact_pair_kernels as pk

        n, k = Y.shape
        ws = self._workspace(n, k)
        prm = np.zeros(pk.N_PARAMS)
        prm[pk.A] = alpha
        wk = pk.W_T if code == 0 else pk.W_HEAVY
        Z, R, _ = ws.run(np.ascontiguousarray(Y.T), ws.zeros, pk.KL_REPULSION, wk, prm,
                           cost=False, grad=forces)
        return Z, R

    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        pcost, G = super().evaluate(method, state, Y, exaggeration, cost=cost, grad=grad)
        if pcost is not None:
            f, eps = float(exaggeration), self._form(method, state)[0].eps
            pcost = pcost + state.cached("exact_clamp_terms", f,
                                         lambda: _clamped_plogp_terms(state.P, f, eps))
        return pcost, G


def _clamped_plogp_terms(P, f, eps):
    """What the dense cost's constant ``sum_j Pc log Pc`` (``Pc = max(f P, eps)``, every j, the
    diagonal included) adds to ``sum_j fP log fP`` over the stored entries."""
    from scipy import sparse
    from scipy.special import xlogy

    P = sparse.csr_matrix(P)
    n = P.shape[0]
    p = f * P.data
    pc = np.maximum(p, eps)
    counts = np.diff(P.indptr)
    rows = np.repeat(np.arange(n), counts)
    stored = np.bincount(rows, weights=pc * np.log(pc) - xlogy(p, p), minlength=n)
    return stored + (n - counts) * (eps * np.log(eps))
