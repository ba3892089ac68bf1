"""The seam shared by the engines that keep P sparse (Barnes-Hut, FFT interpolation, exact pairs).

Every cost these engines serve splits into a part over the stored entries of the sparse P, computed
exactly (:mod:`.attraction_kernels`, :mod:`.stored_pair_kernels`), and an all-pairs part that is a
sum of radial functions of the output distance, which the subclass approximates (a tree, an
interpolation grid) or computes exactly. For KL(P || W/Z) with a symmetric P, a matrix-normalised
Q and a Student-t or heavy-tailed output kernel ``w = (1 + alpha d2)^(-1/alpha)`` (alpha = 1:
t-SNE) the gradient is

.. math::
    \\partial C / \\partial y_i = 4 \\Big( f \\sum_j P_{ij} w_{ij}^{\\alpha} (y_i - y_j)
        - \\frac{1}{Z} \\sum_j w_{ij}^{1+\\alpha} (y_i - y_j) \\Big), \\qquad Z = \\sum_{i \\ne j} w_{ij}

(``f`` the exaggeration): the subclass's :meth:`SparseKLEngine.repulsion` gives ``Z`` and
``R_i = sum_j w_ij^(1+alpha) (y_i - y_j)`` (tsne, hssne, bhssne, skdtsne and the exact engine's
sparse KL take this path). Every other served cost asks the subclass's :meth:`SparseKLEngine.radial`
for sums ``sum_{j != i} c_j phi(d2_ij)`` and ``sum_{j != i} c_j psi(d2_ij) (y_i - y_j)`` of the
radial functions of :mod:`.radial_kernels` (the weight ``w``, ``w log w``, the force factor ``w g``
with ``g = -d log w / d d2``, ``w g log w``) with optional per-point charges ``c``, and
:mod:`.approx_terms` puts them together:

- KL with any of the four kernels of ``FusedForm`` (ssne, usne), per-point output weights as
  charges (wtsne, wssne: ``w_ij = u_i u_j k(d2)``), an asymmetric P (trmsne, tmsne: the forces read
  ``(P + P^T) / 2``, the cost the columns of P), tsneu's unexaggerated forces and pstsne's fixed
  ``Z``, dhssne's power-form kernel with the alpha of the method's state (the form is read at
  every evaluation; its ``grad_form`` serves the first gradient after the epoch search);
  row-normalised Q (asne, tasne, trsrsne, arsrsne) with ``Z_i = sum_j w_ij`` per point and
  the transposed term as a second sum with the charges ``1 / Z_j``;
- the f-divergences rklsne, jssne, chsne, hlsne (Student-t ``q = w / Z``): on a pair P does not
  store each pair term is a function of ``q`` alone (``q log(q / eps)``, ``q log 2 / 2``, ``q``,
  ``q``), so the all-pairs part is ``Z``, ``sum w`` per point, the t-SNE repulsion and, for the
  reverse KL, ``sum w log w`` and ``sum w^2 log w (y_i - y_j)``;
- tee (its un-normalised affinities ``V`` sparse) and ee without input-derived repulsion weights;
- the AB-divergence (absne, abssne: :mod:`.approx_ab`), whose pair terms at ``P = 0`` are powers
  and logarithms of ``q`` alone; JSE (jse, sjse, rsrjse: :mod:`.approx_jse`), whose pair terms at
  ``P = 0`` are linear in ``q``.
- on Barnes-Hut only, the un-normalised pair costs of umap, tumap and largevis: each pair's
  terms at ``P = 0`` are radial, summed over all pairs, and the stored entries add what their P
  contributes (:mod:`.approx_unnormalised`; fft refuses them, :func:`.approx_unnormalised.refusal`);
  likewise the normalised cross-entropy of ntumap and cetsne (both engines), its zero-P terms
  radial once ``Z`` is known; ncvis's expected NCE cost (:mod:`.approx_nce`), its normaliser
  profiled by Newton steps whose sums are radial, as are the cost's and the forces' at the optimum.

Costs are those of the dense engine less the terms that its ``eps`` floor on P gives the pairs P
does not store (``eps log eps`` per pair, as in the KL cost); where the dense cost floors P inside a
term of a stored pair (rklsne's ``log max(P, eps)``, jssne's ``P log P``) or counts the pairs P does
not store at the floor (rklsne: ``q log(q / eps)``), so do these engines. The eps floor on a
Gaussian Q (ssne) enters the repulsion as the force factor ``max(w, eps Z)``; with per-point
weights or a row-normalised Q the floor is not a function of the distance alone and only the cost
applies it (its force is ``eps`` per pair; docs/deviations.md).

Per-point output bandwidths (btsne, bssne, basne, btasne, bnerv: ``w(beta_i d2_ij)``, not a
function of the distance alone): :mod:`.approx_bandwidth`, bh only. Not served: ee's repulsion weights
from the input distances (one per pair), and the costs that are not sums of pair terms of this
kind (the distance costs, ncvis's corrected noise model): :func:`approx_plan` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

import numpy as np

from .._util.log import logger
from .._util.rng import child
from .._util.parallel import fit_threads
from ..methods.base import EPS, FusedForm, MethodState, MixtureForm, PairForm, SumForm
from ..methods.output_kernels import radial_codes
from .approx_ab import DIVERGENCES as AB_DIVERGENCES, ab_refusal
from .approx_unnormalised import DIVERGENCES as UNNORMALISED

# kernels of the plain KL path (codes of methods.base.FusedForm)
T_KERNEL, HEAVY_TAILED_KERNEL = 0, 2
# every kernel whose declaration is radial (a function of the output distance alone)
KERNEL_CODES = radial_codes()

_FORM_KEY = "_sparse_engine_form"
_PLAN_KEY = "_sparse_engine_plan"
MOVING_KEY = "_moving_rows"  # a transform's moving rows (SparseKLEngine.freeze)
APART_KEY = "_moving_apart"  # a transform whose moving rows do not repel one another

# pair evaluations per point in one kernel call (~3 perplexity neighbours, tree cells or
# interpolation nodes): decides whether a run pays for threads (smallvis._util.parallel.fit_threads)
WORK_PER_POINT = 100

# the plan kinds evaluated by a module of their own: kind -> (module, function)
_EVALUATORS = {
    "ab": (".approx_ab", "evaluate_ab"), "jse": (".approx_jse", "evaluate_jse"),
    "nerv": (".approx_nerv", "evaluate_nerv"), "nce": (".approx_nce", "evaluate_nce"),
    "bandwidth": (".approx_bandwidth", "evaluate_bandwidth"),
    "bandwidth-row": (".approx_bandwidth", "evaluate_bandwidth"),
    "pairs": (".approx_unnormalised", "evaluate_pairs"),
}
# the plan kinds with limits of their own per engine: kind -> (module, function(engine, form))
_REFUSALS = {
    "pairs": (".approx_unnormalised", "refusal"), "nce": (".approx_nce", "engine_refusal"),
    "bandwidth": (".approx_bandwidth", "refusal"), "bandwidth-row": (".approx_bandwidth", "refusal"),
}

# PairForm divergences served: the f-divergences (Student-t Q), tee (Student-t), ee (Gaussian)
F_DIVERGENCES = ("rklsne", "jssne", "chsne", "hlsne")


def served_form(method, state=None):
    """The method's :class:`~smallvis.methods.base.FusedForm` when it is KL with a symmetric P, a
    matrix-normalised Q and a Student-t or heavy-tailed kernel, possibly with a constant output
    precision (the plain path, :meth:`SparseKLEngine.repulsion`; also the exact engine's sparse
    KL), else None."""
    try:
        form = method.fused_form(MethodState() if state is None else state)
    except (AttributeError, TypeError, ValueError):
        return None
    if form is None or not form.plain or form.kernel not in (T_KERNEL, HEAVY_TAILED_KERNEL):
        return None
    return form


@dataclass(frozen=True)
class ApproxPlan:
    """How a sparse-P engine evaluates a method: ``kind`` ``"plain"`` (:func:`served_form`),
    ``"kl"`` (matrix-normalised Q), ``"kl-row"`` (row-normalised Q), ``"fdiv"``, ``"tee"``,
    ``"ee"``, ``"ab"`` (:mod:`.approx_ab`), ``"nerv"`` (:mod:`.approx_nerv`), ``"bandwidth"``,
    ``"bandwidth-row"`` (:mod:`.approx_bandwidth`), ``"jse"`` (:mod:`.approx_jse`), ``"gsne"``
    (:mod:`.approx_gsne`), ``"pairs"`` (:mod:`.approx_unnormalised`) or ``"nce"``
    (:mod:`.approx_nce`); ``form``
    the method's ``FusedForm``, ``PairForm``, ``MixtureForm`` or ``SumForm``; ``code`` the output kernel
    (``FusedForm`` codes)."""

    kind: str
    form: object
    code: int


def approx_plan(method, state=None):
    """``(plan, None)`` when a sparse-P engine can run ``method`` (an :class:`ApproxPlan`), else
    ``(None, why not)``: decided from what the method declares (``fused_form``, ``pair_form``)."""
    state = MethodState() if state is None else state
    try:
        fused = method.fused_form(state)
        pair = None if fused is not None else method.pair_form(state)
    except (AttributeError, TypeError, ValueError, KeyError):
        fused = pair = None
    if isinstance(fused, FusedForm):
        return _kl_plan(fused)
    if isinstance(fused, SumForm):
        return _sum_plan(fused)
    if isinstance(pair, PairForm):
        return _pair_plan(pair)
    try:
        mixture = method.mixture_form(state)
    except (AttributeError, TypeError, ValueError, KeyError):
        mixture = None
    if isinstance(mixture, MixtureForm):
        return _mixture_plan(mixture)
    return None, ("its cost is not implemented on these engines (the method declares no KL form "
                  "or pair form, fused_form or pair_form, whose all-pairs part they could sum)")


def _kl_plan(form):
    if form.bandwidths:  # btsne, bssne, basne, btasne (.approx_bandwidth)
        if form.kernel not in (T_KERNEL, 1) or form.point_weights or form.fixed_z:
            return None, "per-point bandwidths are served with the Student-t or Gaussian kernel"
        kind = "bandwidth-row" if form.normalisation == "row" else "bandwidth"
        return ApproxPlan(kind, form, form.kernel), None
    if form.kernel not in KERNEL_CODES:
        return None, (f"its output kernel (FusedForm code {form.kernel}) is not implemented on "
                      "these engines")
    if form.plain and form.kernel in (T_KERNEL, HEAVY_TAILED_KERNEL):
        return ApproxPlan("plain", form, form.kernel), None
    if form.normalisation == "row":
        if form.point_weights or form.fixed_z or not form.exaggerate_forces:
            return None, "row-normalised Q is served without per-point weights or fixed Z only"
        return ApproxPlan("kl-row", form, form.kernel), None
    return ApproxPlan("kl", form, form.kernel), None


def _sum_plan(form):
    kernels = [(term.kernel, term.input, term.plain) for _, term in form.terms]
    if len(form.terms) == 2 and form.terms[0][0] == 1.0 and kernels == [
            (T_KERNEL, "P", True), (4, "P_global", True)]:
        return ApproxPlan("gsne", form, T_KERNEL), None
    return None, ("its cost is a sum of KL terms these engines do not serve (they serve g-SNE's "
                  "t-SNE term plus its global term)")


def _mixture_plan(form):
    if form.bandwidths:  # bnerv (.approx_bnerv)
        if form.divergence != "nerv" or form.kernel != 1 or form.normalisation != "row":
            return None, "per-point bandwidths are served with NeRV's row-normalised Q only"
        return ApproxPlan("bandwidth-row", form, 1), None
    if form.divergence == "jse" and form.kernel == 1:  # jse, sjse, rsrjse (.approx_jse)
        return ApproxPlan("jse", form, 1), None
    if form.divergence != "nerv" or form.kernel != 1:
        return None, (f"its cost ({form.divergence!r}, a KL to the mixture of P and Q, output "
                      f"kernel code {form.kernel}) is not implemented on these engines (they "
                      "serve NeRV's mix of the two KL directions and JSE, Gaussian Q)")
    return ApproxPlan("nerv", form, 1), None


def _pair_plan(form):
    div = form.divergence
    if div in AB_DIVERGENCES:  # absne, abssne (.approx_ab)
        why = ab_refusal(form)
        return (None, why) if why else (ApproxPlan("ab", form, 1 if form.weight == "gaussian"
                                                   else T_KERNEL), None)
    if div in F_DIVERGENCES and form.weight == "t":
        return ApproxPlan("fdiv", form, T_KERNEL), None
    if div in UNNORMALISED:
        return ApproxPlan("pairs", form, T_KERNEL), None
    if div == "tee" and form.weight == "t":
        return ApproxPlan("tee", form, T_KERNEL), None
    if div == "ee":
        if form.weights is not None:
            return None, ("its repulsion weights come from the input distances, one per pair "
                          "(ee with neg_weights=True): not a function of the output distance, and "
                          "not sparse")
        return ApproxPlan("ee", form, 1), None
    if div == "nce":  # ncvis (.approx_nce)
        from .approx_nce import UMAP_KERNEL, refusal

        why = refusal(form)
        return (None, why) if why else (ApproxPlan("nce", form, UMAP_KERNEL), None)
    if form.input != "P":
        return None, (f"its pair terms read the input {form.input} of every pair (a distance "
                      f"cost), which a sparse P does not keep")
    return None, (f"its cost ({div!r}) is not implemented on these engines (they serve KL, the "
                  f"f-divergences {', '.join(F_DIVERGENCES)}, tee, ee without input weights, the "
                  f"normalised cross-entropy of ntumap and cetsne and, on bh, the un-normalised "
                  f"costs of umap, tumap and largevis)")


def served_methods(engine=None) -> list[str]:
    """Names of the registered methods a sparse-P engine runs with their default parameters."""
    from ..methods import methods_where

    return methods_where((engine or SparseKLEngine).serves)


class SparseKLEngine:
    """Base of the engines that keep P sparse: exact stored-pair terms, a subclass's all-pairs
    sums."""

    name = "sparse"
    sparse_input = True
    OPTIONS = ("knn",)

    @classmethod
    def serves(cls, method) -> bool:
        """True when :meth:`engine_plan` has a plan for ``method``: KL with any output kernel of
        ``FusedForm`` but per-point bandwidths, the f-divergences, tee, ee without input weights,
        the normalised cross-entropy and (Barnes-Hut) the un-normalised pair costs."""
        return cls.engine_plan(method)[0] is not None

    @classmethod
    def refusal(cls, method) -> str | None:
        """Why these engines cannot run ``method`` (None: they can)."""
        return cls.engine_plan(method)[1]

    @classmethod
    def engine_plan(cls, method, state=None):
        """:func:`approx_plan` for this engine: ``(plan, None)`` or ``(None, why not)`` (the limits
        per engine of the un-normalised pair costs, ncvis and the bandwidth methods: ``_REFUSALS``)."""
        plan, why = approx_plan(method, state)
        if plan is not None and plan.kind in _REFUSALS:
            module, name = _REFUSALS[plan.kind]
            why = getattr(import_module(module, __package__), name)(cls.name, plan.form)
            plan = None if why else plan
        return plan, why

    def __init__(self, knn: str = "auto"):
        from .._util.names import match_name

        self.knn = match_name(knn, ("auto", "exact", "nndescent", "pynndescent"),
                              f"engine {self.name!r} option knn")

    # -- set-up ---------------------------------------------------------------------------------
    def plan(self, method):
        """Refuse, before any work, a method this engine cannot run (saying why, what to use
        instead, and naming those it can)."""
        plan, why = self.engine_plan(method)
        if plan is None:
            advice = method.unserved_reason(self.name) or "use engine 'exact' or 'dense'"
            raise ValueError(
                f"engine {self.name!r} cannot run method {method.name!r}: {why}; {advice} (methods "
                f"it runs: {', '.join(served_methods(type(self)))})")
        return plan

    def check(self, n: int) -> None:
        """Nothing to refuse: memory is O(n k)."""

    def options(self) -> dict:
        return {"knn": self.knn}

    def prepare(self, method, data, *, extras=frozenset(), rng=None):
        """Sparse (kNN-restricted) affinities; the (n, n) matrices are never formed."""
        fit_threads(data.n * WORK_PER_POINT)
        # from a child stream: rng is left as it was, so the init is the exact engines' one
        seed = None if rng is None else int(child(rng).integers(2**31 - 1))
        state = method.prepare_sparse(data, knn_method=self.knn, random_state=seed)
        logger.info("engine %r: sparse P with %d stored entries (%.1f per point)", self.name,
                    state.P.nnz, state.P.nnz / max(1, state.P.shape[0]))
        return state

    def warm_up(self, method, k: int) -> float:
        """Compile (or load from the disk cache) this engine's kernels on a tiny problem; seconds."""
        import time

        from scipy import sparse

        fit_threads(0)  # 16 points: serial
        start = time.perf_counter()
        n = 16
        ring = sparse.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr") / (2 * n - 2)
        Y = np.random.default_rng(0).normal(size=(n, k))
        state = MethodState(P=ring)
        kind = approx_plan(method)[0].kind
        if kind == "tee":
            state.data.update(V=ring * n, N=float(n), const=np.zeros(n))
        if kind == "gsne":
            state.data["X_global"] = Y - Y.mean(axis=0)
        state.data["output_beta"] = np.ones(n)  # the bandwidth methods' precisions
        self.evaluate(method, state, Y, 1.0)
        return time.perf_counter() - start

    def _form(self, method, state):
        if _FORM_KEY not in state.data:
            form = served_form(method, state)
            if form is None:
                self.plan(method)
            from scipy import sparse

            from .attraction_kernels import csr_arrays

            P = sparse.csr_matrix(state.P, dtype=np.float64)
            state.data[_FORM_KEY] = (form, csr_arrays(P), np.asarray(P.sum(axis=1)).ravel())
        return state.data[_FORM_KEY]

    # whether repulsion_rows can leave out the moving rows' repulsion of one another (apart=True)
    serves_apart = False

    def freeze(self, method, state, moving: np.ndarray, apart: bool = False) -> bool:
        """Evaluate only the rows where ``moving`` (bool, (n,)) is True (a transform: the fitted
        points held still); True when this engine does so for ``method``, False when it will go on
        evaluating every row (the caller then zeroes the frozen rows' gradient itself).

        Served: the plain path (:func:`served_form`: t-SNE and its heavy-tailed relatives). The
        gradient of a moving row is the full evaluation's: its attraction over its stored entries
        (:func:`.attraction_kernels.attraction_rows`) and its repulsion from every point
        (:meth:`repulsion_rows`); the frozen rows' gradient is zero; the per-point costs are those
        of every row, with the ``Z`` of :meth:`repulsion_rows`.

        ``apart``: the moving rows are repelled by the frozen ones only (their pairs left out of the
        repulsion and of ``Z``: a transform whose new points see only the fitted ones), where the
        engine :attr:`serves_apart` (``bh``, ``fft``); elsewhere the flag is ignored."""
        plan = approx_plan(method, state)[0]
        if plan is None or plan.kind != "plain":
            return False
        moving = np.asarray(moving, dtype=bool)
        state.data[MOVING_KEY] = np.ascontiguousarray(np.flatnonzero(moving), dtype=np.int64)
        state.data[APART_KEY] = bool(apart and self.serves_apart)
        return True

    # -- the subclass's part --------------------------------------------------------------------
    def repulsion_rows(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float,
                       rows: np.ndarray, store: dict, apart: bool = False):
        """``(Z, R_rows)``: :meth:`repulsion`'s ``Z`` and its ``R`` at ``rows`` only (m, k) (None
        unless ``forces``); ``store`` a dict kept with the run (for sums that do not change while
        the other rows are frozen); ``apart`` (engines that :attr:`serves_apart`): the pairs of two
        moving rows left out of both. This default evaluates every row."""
        Z, R = self.repulsion(Y, code, alpha, forces, eps)
        return Z, (None if R is None else R[rows])

    def repulsion(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float = EPS):
        """``(Z, R)``: ``Z = sum_{i != j} w_ij`` and ``R`` (n, k) with
        ``R_i = sum_j w_ij^(1 + alpha) (y_i - y_j)`` (None unless ``forces``) for the Student-t or
        heavy-tailed kernel; ``eps`` is the method's (a Barnes-Hut tree softens distances and
        merges points with it)."""
        raise NotImplementedError

    def radial(self, Y: np.ndarray, eps: float = EPS):
        """An object whose ``sums(request)`` answers a :class:`.approx_terms.Sums` request at ``Y``
        (the set-up at
        ``Y``, a tree or interpolation weights, shared by the requests)."""
        raise NotImplementedError

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``."""
        if _PLAN_KEY not in state.data:
            plan = self.engine_plan(method, state)[0]
            if plan is None:
                self.plan(method)
            state.data[_PLAN_KEY] = plan
        plan = state.data[_PLAN_KEY]
        if plan.kind == "gsne":
            from .approx_gsne import evaluate_gsne

            tsne = ApproxPlan("kl", FusedForm(T_KERNEL, eps=method.eps), T_KERNEL)
            return evaluate_gsne(self, plan, tsne, method, state, Y, float(exaggeration),
                                 cost=cost, grad=grad)
        if plan.kind in _EVALUATORS:
            module, name = _EVALUATORS[plan.kind]
            evaluate = getattr(import_module(module, __package__), name)
            return evaluate(self, plan, method, state, Y, float(exaggeration), cost=cost,
                            grad=grad)
        if plan.kind != "plain":
            from .approx_terms import evaluate_plan

            return evaluate_plan(self, plan, method, state, Y, float(exaggeration), cost=cost,
                                 grad=grad)
        return self._evaluate_plain(method, state, Y, exaggeration, cost=cost, grad=grad)

    def _evaluate_plain(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """KL with a symmetric P, a matrix-normalised Q and a Student-t or heavy-tailed kernel."""
        from .attraction_kernels import attraction_cost, attraction_rows

        form, (indptr, indices, data), rowsum = self._form(method, state)
        if not (cost or grad):
            return None, None
        f = float(exaggeration)
        # a constant output precision s (bhssne): w(s d2) at Y is w(d2) at sqrt(s) Y, and the
        # gradient is sqrt(s) times the one there
        root = 1.0 if form.scale == 1.0 else float(np.sqrt(form.scale))
        Y = np.ascontiguousarray(Y if root == 1.0 else root * Y, dtype=np.float64)
        n, k = Y.shape
        code, alpha = form.kernel, float(form.alpha)
        rows = state.data.get(MOVING_KEY)
        if rows is None:
            Z, R = self.repulsion(Y, code, alpha, bool(grad), float(form.eps))
        else:
            Z, R = self.repulsion_rows(Y, code, alpha, bool(grad), float(form.eps), rows,
                                       state.data.setdefault("_frozen_sums", {}),
                                       apart=bool(state.data.get(APART_KEY, False)))
        G = pcost = None
        if grad and rows is not None:  # the moving rows only; the frozen rows' gradient is 0
            A = np.empty((rows.shape[0], k))
            attraction_rows(indptr, indices, data, Y, rows, code, alpha, A)
            G = np.zeros((n, k))
            G[rows] = 4.0 * (f * A - R / Z)
            if root != 1.0:
                G *= root
        elif grad:
            A = np.empty((n, k))
            attraction_rows(indptr, indices, data, Y, np.arange(n, dtype=np.int64), code, alpha, A)
            G = 4.0 * (f * A - R / Z)
            if root != 1.0:
                G *= root
        if cost and rows is not None:
            logw, plogp = _frozen_cost_terms(state, P=(indptr, indices, data), Y=Y, code=code,
                                             alpha=alpha, rows=rows)
        elif cost:
            logw, plogp = np.empty(n), np.empty(n)
            attraction_cost(indptr, indices, data, Y, code, alpha, logw, plogp)
        if cost:
            # sum_j fP log(fP) - fP (log w - log Z)
            with np.errstate(divide="ignore"):
                logf = np.log(f) if f > 0 else 0.0
            pcost = f * (plogp + logf * rowsum) - f * (logw - rowsum * np.log(Z))
        return pcost, G


def _frozen_cost_terms(state, *, P, Y, code, alpha, rows):
    """``(logw, plogp)`` of :func:`.attraction_kernels.attraction_cost` with the rows other than
    ``rows`` frozen: the stored entries between two frozen points are summed once (their ``log w``
    does not change) and only the entries with a moving end at each call (each row's sum is then
    added in a different order: the same numbers up to rounding)."""
    from scipy import sparse

    from .attraction_kernels import attraction_cost, csr_arrays

    store = state.data.setdefault("_frozen_sums", {})
    n = Y.shape[0]
    if "cost" not in store:
        indptr, indices, data = P
        M = sparse.csr_matrix((data, indices, indptr), shape=(n, n))
        moving = np.zeros(n, dtype=bool)
        moving[rows] = True
        coo = M.tocoo()
        dyn = moving[coo.row] | moving[coo.col]
        def part(mask):
            return csr_arrays(sparse.csr_matrix((coo.data[mask], (coo.row[mask], coo.col[mask])),
                                                shape=(n, n)))
        const, plogp = np.empty(n), np.empty(n)
        attraction_cost(*part(~dyn), Y, code, alpha, const, np.empty(n))
        attraction_cost(indptr, indices, data, Y, code, alpha, np.empty(n), plogp)
        store["cost"] = (part(dyn), const, plogp)
    dyn, const, plogp = store["cost"]
    logw = np.empty(n)
    attraction_cost(*dyn, Y, code, alpha, logw, np.empty(n))
    return const + logw, plogp
