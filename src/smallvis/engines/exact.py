"""The fused exact engine: the dense engine's costs and gradients, computed pair by pair in parallel
(numba) without (n, n) temporaries beyond the method's input matrices (P, the input distances R,
ee's repulsion weights, tee's un-normalised affinities, gsne's global affinities).

Methods opt in through one of three hooks:

- ``Method.fused_form``: KL(P || W/Z) with a Student-t, Gaussian, heavy-tailed or UMAP-curve
  output kernel. With a symmetric P and matrix-normalised Q (tsne, ssne, hssne, bhssne, usne and
  their input-kernel variants): :func:`.exact_kernels.kl_terms`; with an asymmetric P, a
  row-normalised Q, per-point output precisions or weights, or the quirks of tsneu / pstsne (asne,
  tasne, trsrsne, arsrsne, trmsne, tmsne, btsne, bssne, basne, btasne, wtsne, wssne, tsneu,
  pstsne): :func:`.exact_asymmetric_kernels.kl_pair_terms`; two passes each (Z, then forces and
  costs), except an unclamped Q with a symmetric P and a costly kernel (``pow``, ``exp``: usne,
  hssne, bhssne, dhssne, tsne with other degrees of freedom): one pass,
  :func:`.exact_kernels.kl_terms_unnormalised`, each pair's weight evaluated once and the sums
  that need Z put together after it (``ExactEngine.one_pass``). A
  constant output precision ``s`` (``FusedForm.scale``, bhssne) is evaluated at the
  coordinates ``sqrt(s) Y``, the gradient multiplied by ``sqrt(s)``. The form is read again at every
  evaluation: dhssne's carries the alpha of its epoch search (the power-form heavy-tailed kernel),
  and right after a change a ``grad_form`` for the stale weights its first gradient reads. A
  ``SumForm`` (gsne: t-SNE's KL plus lambda times the KL of its global affinities, not
  exaggerated, and the inverse Student-t kernel) is evaluated term by term (route ``"sum"``);
- ``Method.pair_form``: the other costs that are sums of pair terms (largevis, umap, tumap, the
  f-divergences rklsne / jssne / chsne / hlsne, the normalised cross-entropy of ntumap / cetsne,
  mmds / gmmds / ballmmds / knnmmds, smmds, sammon, ee, tee): :mod:`.exact_pairs`, one pass (two
  for the f-divergences and the normalised cross-entropy, which need Z); the AB-divergence's
  branches (absne, abssne): :mod:`.exact_ab`, two passes; NCVis's expected NCE cost (ncvis):
  :mod:`.exact_nce`, a pass per Newton step of its profiled normaliser, then one for the costs and
  forces;
- ``Method.mixture_form``: the mixes of forward and reverse KL with a Gaussian Q (nerv, snerv,
  bnerv, rsrnerv, jse, sjse, rsrjse): :mod:`.exact_nerv`, four passes (the log-sum-exp's shift and
  sums, the reverse KL's per-row sums with the forces but the shift's, then the shift's; three with
  a matrix-normalised Q).

Sparse P: when the method's input kernel is a kNN kernel (``knn``, ``skd``, ``nngaussian``) and its
cost is KL with a Student-t or heavy-tailed kernel, or largevis / umap / tumap, :meth:`prepare`
builds P sparse (exact neighbours) and the evaluation runs the attraction over the stored entries
and an exact all-pairs repulsion pass: nothing (n, n) is formed. Every pass visits each unordered
pair once, in fixed chunks: the numbers do not depend on the number of threads.

Every other method is evaluated by the dense engine (logged once per run), so ``engine="exact"``
gives the dense engine's numbers for every method.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._util.log import logger
from .._util.parallel import fit_threads
from . import exact_transpose
from .dense import DenseEngine, check_dense_memory, check_memory

# (n, n) float64 matrices the fused evaluation keeps alive at the least: the input (P or R); a
# method's own peak (its ``exact_matrices``: calibration blocks, second input matrices) is what the
# engine's guard checks
EXACT_MATRICES = 1

# input kernels whose P is built sparse (those present in smallvis.affinity.INPUT_KERNELS)
SPARSE_KERNELS = ("knn", "skd", "nngaussian")

# ret_extra items only the dense affinities record
_DENSE_EXTRAS = frozenset({"adegin", "adegout", "adegc", "pdeg"})

_PLAN_KEY = "_exact_engine_plan"


def check_exact_memory(n: int, budget: int | None = None, matrices: float = EXACT_MATRICES) -> None:
    """Refuse, before allocating anything, a run whose ``matrices`` (n, n) float64 arrays (P alone
    by default; a method's ``exact_matrices``) cannot fit in memory."""
    check_memory(n, matrices, "exact", budget)


def native_form(method, state=None):
    """The method's ``FusedForm`` (KL), ``PairForm`` or ``MixtureForm`` when the exact engine
    evaluates it natively, else None (the dense fallback)."""
    from ..methods.base import MethodState

    state = MethodState() if state is None else state
    try:
        return method.fused_form(state) or method.pair_form(state) or method.mixture_form(state)
    except (AttributeError, TypeError, ValueError, KeyError):
        return None


def fused_methods() -> list[str]:
    """Names of the registered methods the exact engine evaluates natively with their default
    parameters (the rest fall back to the dense engine)."""
    from ..methods import methods_where

    return methods_where(ExactEngine.serves)


def sparse_input(method) -> bool:
    """True when the exact engine builds ``method``'s P sparse: a kNN input kernel (``knn``,
    ``skd``, ``nngaussian``), a single number of neighbours, and a cost served with sparse P (KL
    with a Student-t or heavy-tailed kernel; largevis, umap, tumap)."""
    from ..affinity import INPUT_KERNELS
    from .approx import served_form
    from .exact_pairs import SPARSE_COSTS

    recipe = getattr(method, "recipe", None)
    if recipe is None or recipe.kernel not in SPARSE_KERNELS or recipe.kernel not in INPUT_KERNELS:
        return False
    perplexity = method.perplexity()
    if isinstance(perplexity, bool) or not isinstance(perplexity, numbers.Real):
        return False
    if served_form(method) is not None:
        return True
    form = native_form(method)
    return getattr(form, "divergence", None) in SPARSE_COSTS


class ExactEngine:
    """Evaluate a method's exact cost and gradient pair by pair (each unordered pair once)."""

    name = "exact"
    OPTIONS = ()
    # KL with a matrix-normalised, unclamped Q in one pass (Z factored out of the sums); False:
    # the two passes (Z, then the terms), kept for comparison
    one_pass = True

    @staticmethod
    def serves(method) -> bool:
        """True when the fused kernels evaluate ``method`` natively (it has a ``FusedForm``, a
        ``PairForm`` or a ``MixtureForm``). The engine runs every method, the others through the
        dense evaluation (the same numbers): the catalog lists it only where it is native."""
        return native_form(method) is not None

    def __init__(self):
        self._dense = DenseEngine()
        self._ws = None
        self._sparse_p = False
        self._matrices = EXACT_MATRICES
        self._sparse_kl = None

    # -- set-up ---------------------------------------------------------------------------------
    def plan(self, method) -> None:
        """Note whether ``method``'s P will be sparse and its peak (n, n) arrays (for
        :meth:`check`). Refuses nothing: what the fused kernels do not serve is evaluated by the
        dense engine."""
        self._sparse_p = sparse_input(method)
        self._matrices = float(getattr(method, "exact_matrices", EXACT_MATRICES))

    def check(self, n: int) -> None:
        """Refuse a run whose (n, n) arrays cannot fit (nothing to refuse with sparse P)."""
        if not self._sparse_p:
            check_exact_memory(n, matrices=self._matrices)

    def prepare(self, method, data, *, extras=frozenset(), rng=None):
        """The method's input affinities: sparse, from exact neighbours, when
        :func:`sparse_input` (unless ``extras`` asks for what only dense affinities record); else
        as (n, n) arrays. ``rng`` is not drawn from (exact neighbours need no seed)."""
        fit_threads(data.n * (data.n - 1) / 2)  # every pass visits each pair once
        if sparse_input(method):
            dense_only = sorted(_DENSE_EXTRAS & set(extras))
            if not dense_only:
                state = method.prepare_sparse(data, knn_method="exact", random_state=None)
                logger.info("engine 'exact': sparse P with %d stored entries (%.1f per point)",
                            state.P.nnz, state.P.nnz / max(1, data.n))
                return state
            logger.info("engine 'exact': ret_extra %s needs the dense affinities; P is kept as an "
                        "n x n matrix", ", ".join(dense_only))
            check_exact_memory(data.n)
        return method.prepare(data, extras=extras)

    def warm_up(self, method, k: int) -> float:
        """Compile (or load from the disk cache) the kernels ``method`` uses, on 16 random points
        with a perplexity of 3; seconds (0 for a method evaluated by the dense engine)."""
        import copy
        import logging
        import time

        from ..io.data import InputData

        if native_form(method) is None:
            return 0.0
        fit_threads(0)  # 16 points: serial
        start = time.perf_counter()
        tiny = copy.copy(method)
        tiny.params = {**method.params}
        if tiny.perplexity() is not None:
            tiny.params["perplexity"] = 3
            if "k" in tiny.params:  # the kNN-based distance methods (gmmds, knnmmds)
                tiny.params["k"] = tiny.k = 3
        rng = np.random.default_rng(0)
        quiet = logger.level
        logger.setLevel(logging.WARNING)
        try:
            state = self.prepare(tiny, InputData(rng.normal(size=(16, 3))))
            ExactEngine().evaluate(tiny, state, rng.normal(size=(16, k)), 1.0)
        finally:
            logger.setLevel(quiet)
        return time.perf_counter() - start

    # -- planning -------------------------------------------------------------------------------
    def _plan(self, method, state, n):
        """``(route, form, input)`` for this run, or None (dense fallback); decided once per
        state. Routes: ``"kl"`` (dense symmetric P), ``"kl-general"`` (input: the (n, n) P, the
        output precisions and the per-point output weights, each empty without), ``"pairs"``
        (input: the (n, n) matrix the form reads (P, R or V) or a sparse P's CSR arrays, and the
        form's second (n, n) matrix or None), ``"sparse-kl"``, ``"mixture"`` (input: P, its
        transpose (empty when not read) and the output precisions, empty without)."""
        if _PLAN_KEY in state.data:
            return state.data[_PLAN_KEY]
        from scipy import sparse

        if sparse.issparse(state.P):
            plan = self._sparse_plan(method, state, n)
        else:
            plan, reason = self._dense_plan(method, state, n)
            if plan is None:
                logger.info("engine 'exact': method %s is evaluated by the dense engine (%s)",
                            method.name, reason)
                check_dense_memory(n)
        state.data[_PLAN_KEY] = plan
        return plan

    @classmethod
    def _dense_plan(cls, method, state, n, form=None):
        from ..methods.base import FusedForm, MixtureForm, SumForm

        form = native_form(method, state) if form is None else form
        if form is None:
            return None, "it has no fused form yet"
        if isinstance(form, MixtureForm):
            from .exact_nerv import mixture_plan

            return mixture_plan(method, state, form, n)
        if isinstance(form, SumForm):  # a plan per term
            parts = [cls._dense_plan(method, state, n, term) for _, term in form.terms]
            failed = [reason for plan, reason in parts if plan is None]
            if failed:
                return None, failed[0]
            return ("sum", form, tuple(plan for plan, _ in parts)), None
        kl = isinstance(form, FusedForm)
        names = [form.input] + ([form.weights] if not kl and form.weights else [])
        inputs = [state.P if name == "P" else state.data.get(name) for name in names]
        for what, X in zip(names, inputs):
            if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.shape == (n, n)
                    and X.flags.c_contiguous):
                return None, f"its {what} is not a C-ordered (n, n) float64 array"
        X = inputs[0]
        if kl and not form.plain:  # any P
            beta = method.output_bandwidths(state) if form.bandwidths else ()
            u = method.output_weights(state) if form.point_weights else ()
            PT = exact_transpose.transpose_of(X)
            return ("kl-general", form, (X, PT, np.ascontiguousarray(beta, dtype=np.float64),
                                         np.ascontiguousarray(u, dtype=np.float64))), None
        from . import exact_kernels as kern

        for what, M in zip(names, inputs):
            if not kern.is_symmetric(M):
                return None, f"its {what} is not exactly symmetric"
        if kl:
            return ("kl", form, X), None
        return ("pairs", form, (X, inputs[1] if form.weights else None)), None

    def _sparse_plan(self, method, state, n):
        from .approx import served_form
        from .exact_pairs import SPARSE_COSTS, csr_parts

        P = state.P
        if P.shape != (n, n) or (P != P.T).nnz:
            raise ValueError(f"engine 'exact': method {method.name!r} got a sparse P that is not a "
                             f"symmetric (n, n) matrix; the fused kernels need a symmetric P")
        if served_form(method, state) is not None:
            return ("sparse-kl", None, None)
        form = native_form(method, state)
        if getattr(form, "divergence", None) in SPARSE_COSTS:
            return ("pairs", form, (csr_parts(P), None))
        raise ValueError(f"engine 'exact': method {method.name!r} cannot use a sparse P (sparse P "
                         f"serves KL with a Student-t or heavy-tailed kernel, largevis, umap and "
                         f"tumap); build its P with method.prepare")

    def _workspace(self, n, k):
        from .exact_pairs import Workspace

        if self._ws is None or (self._ws.n, self._ws.k) != (n, k):
            self._ws = Workspace(n, k)
        return self._ws

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``: the dense engine's
        numbers up to floating-point reassociation."""
        n, k = Y.shape
        plan = self._plan(method, state, n)
        if plan is None:
            return self._dense.evaluate(method, state, Y, exaggeration, cost=cost, grad=grad)
        if not (cost or grad):
            return None, None
        route, form, X = plan
        if route in ("kl", "kl-general"):  # the form may follow the method's state (dhssne)
            form = native_form(method, state)
        f = float(exaggeration)
        if route == "sum":
            return self._sum(method, form, state, X, Y, f, cost, grad)
        if route == "sparse-kl":
            if self._sparse_kl is None:
                from .exact_pairs import ExactSparseKL

                self._sparse_kl = ExactSparseKL(self._workspace)
            return self._sparse_kl.evaluate(method, state, Y, f, cost=cost, grad=grad)
        ws = self._workspace(n, k)
        if route == "mixture":
            from .exact_nerv import evaluate_mixture

            return evaluate_mixture(form, state, X, Y, f, ws, cost=cost, grad=grad)
        if route == "pairs":
            from .exact_pairs import pair_evaluator

            return pair_evaluator(form)(form, state, X[0], Y, f, ws, cost=cost, grad=grad, X2=X[1])
        if grad and form.grad_form is not None:  # the gradient reads other weights (dhssne)
            pcost = self._kl_form(method, form, state, X, Y, f, ws, cost, False)[0]
            G = self._kl_form(method, form.grad_form, state, X, Y, f, ws, False, True)[1]
            method.grad_form_used(state)
            return pcost, G
        return self._kl_form(method, form, state, X, Y, f, ws, cost, grad)

    def _sum(self, method, form, state, plans, Y, f, cost, grad):
        """A :class:`~smallvis.methods.base.SumForm`: its terms' costs and gradients, weighted and
        added in order (g-SNE's in two passes: :mod:`.exact_sum`)."""
        from .exact_sum import evaluate_gsne, is_gsne

        if is_gsne(form, plans):
            return evaluate_gsne(form, state, plans, Y, f, self._workspace(*Y.shape), cost, grad)
        pcost = G = None
        for (weight, term), (_, _, X) in zip(form.terms, plans):
            c, g = self._kl_form(method, term, state, X, Y, f, self._workspace(*Y.shape), cost,
                                 grad)
            if cost:
                pcost = weight * c if pcost is None else pcost + weight * c
            if grad:
                G = weight * g if G is None else G + weight * g
        return pcost, G

    def _kl_form(self, method, form, state, X, Y, f, ws, cost, grad):
        """KL of one fused form: the ``"kl"`` pass (symmetric P) or the general one; an input other
        than P is not exaggerated."""
        if form.input != "P":
            f = 1.0
        root = 1.0 if form.scale == 1.0 else np.sqrt(form.scale)
        if root != 1.0:  # w(s d2) at Y is w(d2) at sqrt(s) Y: the gradient is sqrt(s) times the
            Y = root * Y  # one there
        if not form.plain:
            z = method.output_normaliser(state, f) if form.fixed_z else None
            pcost, G = self._kl_general(form, state, X, Y, f, z, ws, cost, grad)
        else:
            pcost, G = self._kl(form, state, X, Y, f, ws, cost, grad)
        if root != 1.0 and G is not None:
            G *= root
        return pcost, G

    @staticmethod
    def _kl(form, state, P, Y, f, ws, cost, grad):
        from . import exact_kernels as kern
        from .output_kernel_functions import INVERSE_T_KERNEL

        n, k = Y.shape
        chunks = ws.chunks
        Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
        kp = kern.form_params(form)
        # the Student-t kernels' weights are cheap: a second force buffer costs more than the Z pass
        cheap = form.kernel in (kern.T_KERNEL, INVERSE_T_KERNEL)
        if ExactEngine.one_pass and not form.clamp_q and not cheap:
            return ExactEngine._kl_one_pass(form, state, P, Yt, f, kp, ws, cost, grad)
        Z = kern.kernel_total(Yt, form.kernel, kp, ws.bounds, ws("d2", chunks, n))
        G = np.empty((n, k)) if grad else np.empty((0, 0))
        cross = np.empty(n) if cost else np.empty(0)
        kern.kl_terms(P, Yt, f, form.kernel, kp, bool(form.clamp_q), form.eps, Z,
                      ws.bounds, bool(cost), bool(grad), ws("d2", chunks, n),
                      ws("k2", chunks, n), ws("kk", chunks, n), ws("gbuf", chunks, k, n),
                      ws("cbuf", chunks, n), G, cross)
        pcost = None
        if cost:
            key = "plogp_exact" if form.input == "P" else ("plogp_exact", form.input)
            const = state.cached(key, f, lambda: kern.plogp_rows(P, f, form.eps))
            pcost = const - cross
        return pcost, (G if grad else None)

    @staticmethod
    def _kl_one_pass(form, state, P, Yt, f, kp, ws, cost, grad):
        """:meth:`_kl` for an unclamped Q with a costly kernel (not the Student-t ones, whose
        cheap weights make the second force buffer cost more than the Z pass): one pass evaluates
        each pair's weight once (for Z, the forces and the cost), the sums that depend on Z put
        together afterwards."""
        from . import exact_kernels as kern

        k, n = Yt.shape
        chunks = ws.chunks
        zpart = np.empty(chunks)
        attract = np.empty((n, k)) if grad else np.empty((0, 0))
        repel = np.empty((n, k)) if grad else np.empty((0, 0))
        cross_w = np.empty(n) if cost else np.empty(0)
        kern.kl_terms_unnormalised(
            P, Yt, f, form.kernel, kp, ws.bounds, bool(cost), bool(grad), ws("d2", chunks, n),
            ws("k2", chunks, n), ws("kk", chunks, n), ws("ka", chunks, n), ws("kr", chunks, n),
            ws("kt", chunks, n) if k == 2 else np.empty((0, 0)), ws("gbuf", chunks, k, n),
            ws("rbuf", chunks, k, n), ws("cbuf", chunks, n), zpart, attract, repel, cross_w)
        total = 0.0
        for part in zpart:  # in chunk order, as kernel_total
            total += float(part)
        Z = 2.0 * total
        pcost = None
        if cost:
            key = "plogp_exact" if form.input == "P" else ("plogp_exact", form.input)
            const = state.cached(key, f, lambda: kern.plogp_rows(P, f, form.eps))
            mass = state.cached(("p_mass_exact", form.input), f,  # sum_{j != i} f P_ij
                                lambda: f * (P.sum(axis=1) - np.diagonal(P)))
            pcost = const - (cross_w - np.log(Z) * mass)
        G = None
        if grad:
            G = attract
            G -= repel * (1.0 / Z)
        return pcost, G

    @staticmethod
    def _kl_general(form, state, X, Y, f, z, ws, cost, grad):
        """The general KL pass; ``z``: the method's fixed normaliser (``form.fixed_z``) or None."""
        from . import exact_asymmetric_kernels as ak
        from . import exact_kernels as kern

        P, PT, beta, u = X
        n, k = Y.shape
        chunks = ws.chunks
        Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
        kp = kern.form_params(form)
        fg = f if form.exaggerate_forces else 1.0
        scratch = [ws(name, chunks, n) for name in ("d2", "wa", "ga", "wb", "gb")]
        if z is not None:
            Z = np.full(n, float(z))
        elif form.normalisation == "matrix" and not beta.size and not u.size:
            Z = np.full(n, kern.kernel_total(Yt, form.kernel, kp, ws.bounds, scratch[0]))
        else:
            Z = np.empty(n)
            ak.weight_rows(Yt, form.kernel, kp, beta, u, ws.bounds, *scratch[:3],
                           ws("cbuf", chunks, n), Z)
            if form.normalisation == "matrix":
                Z = np.full(n, Z.sum())
        G = np.empty((n, k)) if grad else np.empty((0, 0))
        cross = np.empty(n) if cost else np.empty(0)
        ak.kl_pair_terms(P, PT, Yt, f, fg, form.kernel, kp, bool(form.clamp_q), form.eps,
                         form.normalisation == "row", 1.0 / Z, beta, u, ws.bounds, bool(cost),
                         bool(grad), *scratch, ws("qa", chunks, n), ws("qb", chunks, n),
                         ws("kk", chunks, n),
                         ws("pc", chunks, n) if PT.shape[0] != n else np.empty((0, 0)),
                         ws("gbuf", chunks, k, n), ws("cbuf", chunks, n), G, cross)
        pcost = None
        if cost:
            const = state.cached("plogp_cols_exact", f, lambda: ak.plogp_cols(P, f, form.eps))
            pcost = const - cross
        return pcost, (G if grad else None)
