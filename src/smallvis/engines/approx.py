"""The seam shared by the engines that keep P sparse (Barnes-Hut, FFT interpolation, exact pairs).

For KL(P || W/Z) with a symmetric P, a matrix-normalised Q and a Student-t or heavy-tailed output
kernel ``w = (1 + alpha d2)^(-1/alpha)`` (alpha = 1: t-SNE) the gradient splits into

.. math::
    \\partial C / \\partial y_i = 4 \\Big( f \\sum_j P_{ij} w_{ij}^{\\alpha} (y_i - y_j)
        - \\frac{1}{Z} \\sum_j w_{ij}^{1+\\alpha} (y_i - y_j) \\Big), \\qquad Z = \\sum_{i \\ne j} w_{ij}

(``f`` the exaggeration). The attraction runs exactly over the stored entries of P
(:mod:`.attraction_kernels`); a subclass supplies only the repulsion: ``Z`` and
``R_i = sum_j w_ij^(1+alpha) (y_i - y_j)``, approximately (a tree, an interpolation grid) or exactly.

The per-point cost is ``sum_j fP_ij log(fP_ij / q_ij)`` over the stored entries: the dense engine's
cost less its ``eps`` terms on the pairs P does not store.
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger
from .._util.rng import child
from .._util.parallel import fit_threads
from ..methods.base import EPS, MethodState

# kernels these engines serve (codes of methods.base.FusedForm)
T_KERNEL, HEAVY_TAILED_KERNEL = 0, 2

_FORM_KEY = "_sparse_engine_form"

# pair evaluations per point in one kernel call (~3 perplexity neighbours, tree cells or
# interpolation nodes): decides whether a run pays for threads (smallvis._util.parallel.fit_threads)
WORK_PER_POINT = 100


def served_form(method, state=None):
    """The method's :class:`~smallvis.methods.base.FusedForm` when a sparse-P engine can run it
    (KL with symmetric P, matrix-normalised Q, Student-t or heavy-tailed kernel, possibly with a
    constant output precision), else None."""
    try:
        form = method.fused_form(MethodState() if state is None else state)
    except (AttributeError, TypeError, ValueError):
        return None
    if form is None or not form.plain or form.kernel not in (T_KERNEL, HEAVY_TAILED_KERNEL):
        return None
    return form


def served_methods() -> list[str]:
    """Names of the registered methods a sparse-P engine runs with their default parameters."""
    from ..methods import methods_where

    return methods_where(SparseKLEngine.serves)


class SparseKLEngine:
    """Base of the engines that keep P sparse: exact attraction, a subclass's repulsion."""

    name = "sparse"
    sparse_input = True
    OPTIONS = ("knn",)

    @staticmethod
    def serves(method) -> bool:
        """True for KL with a symmetric P, a matrix-normalised Q and a Student-t or heavy-tailed
        output kernel (:func:`served_form`): the methods the subclasses (bh, fft) run."""
        return served_form(method) is not None

    def __init__(self, knn: str = "auto"):
        from .._util.names import match_name

        self.knn = match_name(knn, ("auto", "exact", "nndescent"), f"engine {self.name!r} option knn")

    # -- set-up ---------------------------------------------------------------------------------
    def plan(self, method):
        """Refuse, before any work, a method this engine cannot run (naming those it can)."""
        form = served_form(method)
        if form is None:
            reason = method.unserved_reason(self.name)
            advice = reason if reason else "use engine 'exact' or 'dense'"
            raise ValueError(
                f"engine {self.name!r} runs KL methods with a symmetric P, a matrix-normalised Q and "
                f"a Student-t or heavy-tailed output kernel; method {method.name!r} is not one of "
                f"them (methods it runs: {', '.join(served_methods())}); {advice}")
        return form

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
        self.evaluate(method, MethodState(P=ring), Y, 1.0)
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

    # -- the subclass's part --------------------------------------------------------------------
    def repulsion(self, Y: np.ndarray, code: int, alpha: float, forces: bool, eps: float = EPS):
        """``(Z, R)``: ``Z = sum_{i != j} w_ij`` and ``R`` (n, k) with
        ``R_i = sum_j w_ij^(1 + alpha) (y_i - y_j)`` (None unless ``forces``); ``eps`` is the
        method's (a Barnes-Hut tree softens distances and merges points with it)."""
        raise NotImplementedError

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``."""
        from .attraction_kernels import attraction, attraction_cost

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
        Z, R = self.repulsion(Y, code, alpha, bool(grad), float(form.eps))
        G = pcost = None
        if grad:
            A = np.empty((n, k))
            attraction(indptr, indices, data, Y, code, alpha, A)
            G = 4.0 * (f * A - R / Z)
            if root != 1.0:
                G *= root
        if cost:
            logw, plogp = np.empty(n), np.empty(n)
            attraction_cost(indptr, indices, data, Y, code, alpha, logw, plogp)
            # sum_j fP log(fP) - fP (log w - log Z)
            with np.errstate(divide="ignore"):
                logf = np.log(f) if f > 0 else 0.0
            pcost = f * (plogp + logf * rowsum) - f * (logw - rowsum * np.log(Z))
        return pcost, G
