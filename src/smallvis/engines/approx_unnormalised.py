"""The un-normalised pair costs on the sparse-P engines (plan ``"pairs"`` of :mod:`.approx`):
umap and tumap (UMAP's fuzzy cross-entropy) and largevis, and the normalised cross-entropy of
ntumap and cetsne.

These costs have no normaliser and are affine in P (:mod:`.exact_pairs`). Every pair contributes
its terms at ``P = 0``, a function of its output distance alone
(:func:`.approx_pair_kernels.zero_p_term`), which the engine sums over all pairs (a Barnes-Hut
tree, an interpolation grid: the radial functions ``PAIR_COST`` and ``PAIR_FORCE`` of
:mod:`.radial_kernels`); the stored entries of P add what their P value contributes, exactly
(:func:`.exact_pair_kernels.stored_pair_terms`, the exact engine's sparse-P pass), and umap's
per-point constant ``sum_j p log(p + eps) + (1 - p) log(1 - p + eps)`` is the exact engine's.
With ``G_i = sum_j K_ij (y_i - y_j)``:

- umap (``w = 1 / (1 + a d2^b)``): ``K = 4 b (p - w) / (d2 + eps + gr_eps)``; tumap
  (``w = 1 / (1 + d2)``): ``K = 4 w (p - w) / (1 - w + eps + gr_eps)``; per pair the cost
  ``-p log(w + eps) - (1 - p) log(1 - w + eps)``;
- largevis: ``K = 4 (p g - gamma r)``, per pair the cost ``-p log w - gamma log(1 - w + eps)``;
- ntumap, cetsne (``q = w / Z``, Student-t): ``K = 4 w (C - S q)`` with ``C = (p - q) / (1 - q)``
  and ``S = sum C`` over all pairs, per pair the cost ``-p log q - (1 - p) log(1 - q + eps)`` and
  the per-point constant of :func:`_ce_constant`. These need ``Z`` before the zero-P terms: a sum
  of ``w`` first, then the sums at that ``Z``. ``q`` is of order ``1 / n^2``, so the zero-P terms
  are smooth (``-log(1 - q + eps) ~ q``, ``4 w C ~ -4 w q``) and the FFT engine serves them too.

At ``theta = 0`` the tree gives the exact engine's numbers (the tree adds machine epsilon to every
squared distance); at its default ``theta`` (0.35, with the quadrupole terms) the gradient is
within 1e-3 of the exact one on 2,000 points (the monopole at ``theta = 0.5``: about 1e-2, and
the cost within 6e-3).

The FFT engine serves ntumap and cetsne, not umap, tumap and largevis (:func:`refusal`). Its
interpolation is accurate on a compact embedding (2,000 points spanning 7 units: gradient within
2e-4 of the exact one), but the un-normalised cost's zero-P term ``-log(1 - w + eps)`` is singular
at ``d -> 0`` (cut only by ``eps``), the force peaks over a width ``~ sqrt(gr_eps)`` (unbounded for
``gr_eps = 0``), and the cost repels every pair, so that a run spreads its points about a unit
apart or more: a 2,000-point umap run spans 700 units, where few points share an interval and the
interpolated forces are wrong by their own size (the run's kNN@15 preservation 0.16 against the
exact engine's 0.32; the grid, capped at 1536 nodes a side, made it 100 times slower than
Barnes-Hut).
"""

from __future__ import annotations

import numpy as np

from ..methods.base import EPS

# the cost names and their codes in .exact_pairs
DIVERGENCES = ("umap", "largevis", "ntumap", "cetsne")
# the normalised cross-entropy (Q = W / Z): served by both engines
NORMALISED = ("ntumap", "cetsne")
_DATA_KEY = "_sparse_engine_pairs"


def refusal(engine: str, form) -> str | None:
    """Why ``engine`` cannot run the pair form ``form`` (None: it can): the FFT engine runs only the
    normalised cross-entropy (the module docstring)."""
    if engine != "fft" or form.divergence in NORMALISED:
        return None
    return ("its all-pairs cost term -log(1 - w + eps) is singular at d -> 0 (cut only by eps) "
            "and its force peaks over a width ~ sqrt(gr_eps): the interpolation grid does not "
            "resolve them where few points share an interval, as in the spread-out embeddings "
            "these costs give (umap, 2,000 points: 700 units wide; kNN@15 preservation 0.16 on "
            "fft against 0.32 exact); engine 'bh' runs it")


# the pair forms' weights as codes of .exact_pair_kernels
_WEIGHTS = {"t": 0, "cauchy": 1, "umap": 2, "logistic": 3}


def _prepared(state):
    """The CSR arrays of the sparse P, made once per state."""
    if _DATA_KEY not in state.data:
        from scipy import sparse

        from .attraction_kernels import csr_arrays

        P = sparse.csr_matrix(state.P, dtype=np.float64)
        if P.shape[0] != P.shape[1]:
            raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
        state.data[_DATA_KEY] = csr_arrays(P)
    return state.data[_DATA_KEY]


def _pair_params(form, f: float) -> np.ndarray:
    """The parameter vector ``prm`` of :mod:`.exact_pair_kernels` for these forms (the exact
    engine's)."""
    from . import exact_pair_kernels as pk

    prm = np.zeros(pk.N_PARAMS)
    prm[pk.F], prm[pk.GAMMA], prm[pk.GR_EPS], prm[pk.EPS] = f, form.gamma, form.gr_eps, form.eps
    prm[pk.A], prm[pk.B] = form.a, form.b
    prm[pk.GR_1MW] = 1.0 if form.gr_form == "1-w" else 0.0
    return prm


def _cross_entropy_constant(csr, n, f, eps):
    """UMAP's per-point constant ``sum_{j != i} p log(p + eps) + (1 - p) log(1 - p + eps)``
    (``p = f P_ij``) over a sparse P: a stored entry replaces the ``(n - 1)`` zero-P pairs'
    ``log(1 + eps)`` by its own term (the exact engine's arithmetic)."""
    indptr, _, data = csr
    p = f * data
    terms = p * np.log(p + eps) + (1.0 - p) * np.log1p(-p + eps) - np.log1p(eps)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(rows, weights=terms, minlength=n) + (n - 1) * np.log1p(eps)


def evaluate_pairs(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of an un-normalised pair cost at ``Y`` on
    ``engine`` (the module docstring)."""
    if not (cost or grad):
        return None, None
    from . import exact_pair_kernels as pk
    from .approx_pair_kernels import pair_kp
    from .approx_terms import Sums
    from .radial_kernels import PAIR_COST, PAIR_FORCE

    form = plan.form
    if form.divergence in NORMALISED:
        return _normalised(engine, plan, state, Y, f, cost, grad)
    csr = _prepared(state)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n = Y.shape[0]
    div = pk.UMAP if form.divergence == "umap" else pk.LARGEVIS
    wk = _WEIGHTS[form.weight]
    prm = _pair_params(form, f)
    _, S, V = engine.radial(Y, EPS).sums(Sums(plan.code, pair_kp(prm, div, wk),
                                              (PAIR_COST,) if cost else (),
                                              (PAIR_FORCE,) if grad else ()))
    G = np.ascontiguousarray(V[:, 0]) if grad else np.empty((0, 0))
    pcost = np.ascontiguousarray(S[:, 0]) if cost else np.empty(0)
    pk.stored_pair_terms(*csr, Y, div, wk, prm, bool(grad), bool(cost), G, pcost)
    if cost and form.divergence == "umap":
        with np.errstate(invalid="ignore"):  # exaggerated: log(1 - p) of p > 1 is NaN, as dense
            const = state.cached("sparse_cross_entropy", f,
                                 lambda: _cross_entropy_constant(csr, n, f, form.eps))
        pcost += const
    return (pcost if cost else None), (G if grad else None)


def _ce_constant(csr, n, f, eps, clamp):
    """The normalised cross-entropy's per-point constant as the exact engine adds it: over every
    ``j`` (the diagonal included) ``p log(p + eps) + (1 - p) log(1 - p + eps)`` (``clamp``, cetsne:
    ``p log p + (1 - p) log(1 - p)`` with ``p`` floored at eps), less the diagonal's
    ``log(1 + eps)``; each pair P does not store counts at ``p = 0``."""
    indptr, _, data = csr
    p = f * data
    if clamp:
        p = np.maximum(p, eps)
        terms = p * np.log(p) + (1.0 - p) * np.log1p(-p)
        zero = eps * np.log(eps) + (1.0 - eps) * np.log1p(-eps)
    else:
        terms = p * np.log(p + eps) + (1.0 - p) * np.log1p(-p + eps)
        zero = np.log1p(eps)
    counts = np.diff(indptr)
    rows = np.repeat(np.arange(n), counts)
    return (np.bincount(rows, weights=terms, minlength=n) + (n - counts) * zero
            - np.log1p(eps))


def _normalised(engine, plan, state, Y, f, cost, grad):
    """ntumap, cetsne: ``Z`` first, then the zero-P sums at that ``Z`` (``PAIR_S``: the global sum
    ``S``; ``PAIR_FORCE`` and the t-SNE repulsion ``WG``: the forces; ``PAIR_COST``), the stored
    entries' share from :func:`.approx_pair_kernels.normalised_ce_stored`."""
    from . import exact_pair_kernels as pk
    from .approx_pair_kernels import normalised_ce_stored, pair_kp
    from .approx_terms import Sums
    from .radial_kernels import PAIR_COST, PAIR_FORCE, PAIR_S, W, WG

    form = plan.form
    csr = _prepared(state)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    prm = _pair_params(form, f)
    summer = engine.radial(Y, EPS)
    Z = summer.sums(Sums(plan.code, pair_kp(prm, pk.NORMALISED_CE, 0)))[0]
    prm[pk.INV_Z] = 1.0 / Z
    kp = pair_kp(prm, pk.NORMALISED_CE, 0)
    c, t = np.empty(n), np.empty(n)
    F = np.empty((n, k)) if grad else np.empty((0, 0))
    normalised_ce_stored(*csr, Y, float(f), 1.0 / Z, float(form.eps), bool(grad),
                         bool(cost), c, t, F)
    G = pcost = None
    if grad:
        _, S, V = summer.sums(Sums(plan.code, kp, (W, PAIR_S), (PAIR_FORCE, WG)))
        total = float(np.sum(S[:, 1])) + float(np.sum(t))
        G = V[:, 0] + F - (4.0 * total / Z) * V[:, 1]
    if cost:
        S = summer.sums(Sums(plan.code, kp, (W, PAIR_COST)))[1]
        clamp = form.divergence == "cetsne"
        const = state.cached("sparse_normalised_ce", f,
                             lambda: _ce_constant(csr, n, f, form.eps, clamp))
        pcost = const + S[:, 1] + c
    return pcost, G
