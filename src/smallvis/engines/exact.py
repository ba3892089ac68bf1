"""The fused exact engine: the dense engine's costs and gradients, computed pair by pair in parallel
(numba) without (n, n) temporaries beyond P itself.

Methods opt in through ``Method.fused_form`` (for now: KL(P || W/Z) with a symmetric P,
matrix-normalised Q and a Student-t, Gaussian or heavy-tailed output kernel: tsne, ssne, hssne and
their input-kernel variants). Every other method is evaluated by the dense engine (logged once per
run), so ``engine="exact"`` gives the dense engine's numbers for every method.
"""

from __future__ import annotations

import numpy as np

from .._logging import logger
from .dense import DenseEngine, check_dense_memory, check_memory

# (n, n) float64 matrices the fused evaluation keeps alive: P only
EXACT_MATRICES = 1

_PLAN_KEY = "_exact_engine_plan"


def check_exact_memory(n: int, budget: int | None = None) -> None:
    """Refuse, before allocating anything, a run whose P alone cannot fit in memory."""
    check_memory(n, EXACT_MATRICES, "exact", budget)


class ExactEngine:
    """Evaluate a method's exact cost and gradient pair by pair (each unordered pair once)."""

    name = "exact"
    OPTIONS = ()

    def __init__(self):
        self._dense = DenseEngine()
        self._work = {}

    def check(self, n: int) -> None:
        check_exact_memory(n)

    # -- planning -------------------------------------------------------------------------------
    def _plan(self, method, state, n):
        """The fused form for this run, or None (dense fallback); decided once per state."""
        if _PLAN_KEY in state.data:
            return state.data[_PLAN_KEY]
        form, reason = method.fused_form(state), None
        P = state.P
        if form is None:
            reason = "it has no fused form yet"
        elif not (isinstance(P, np.ndarray) and P.dtype == np.float64 and P.shape == (n, n)
                  and P.flags.c_contiguous):
            form, reason = None, "its P is not a C-ordered (n, n) float64 array"
        else:
            from . import exact_kernels as kern

            if not kern.is_symmetric(P):
                form, reason = None, "its P is not exactly symmetric"
        if form is None:
            logger.info("engine 'exact': method %s is evaluated by the dense engine (%s)",
                        method.name, reason)
            check_dense_memory(n)
        state.data[_PLAN_KEY] = form
        return form

    def _workspace(self, n, k):
        from . import exact_kernels as kern

        key = (n, k)
        if key not in self._work:
            chunks = kern.N_CHUNKS
            self._work = {key: dict(
                bounds=kern.chunk_bounds(n, chunks),
                d2=np.empty((chunks, n)), q=np.empty((chunks, n)), kk=np.empty((chunks, n)),
                gbuf=np.empty((chunks, k, n)), cbuf=np.empty((chunks, n)))}
        return self._work[key]

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, method, state, Y, exaggeration=1.0, *, cost=True, grad=True):
        """Return ``(pcost (n,) or None, gradient (n, k) or None)`` at ``Y``: the dense engine's
        numbers up to floating-point reassociation."""
        n, k = Y.shape
        form = self._plan(method, state, n)
        if form is None:
            return self._dense.evaluate(method, state, Y, exaggeration, cost=cost, grad=grad)
        if not (cost or grad):
            return None, None
        from . import exact_kernels as kern

        f = float(exaggeration)
        P = state.P
        Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
        ws = self._workspace(n, k)
        Z = kern.weight_total(Yt, form.kernel, form.alpha, ws["bounds"], ws["d2"])
        G = np.empty((n, k)) if grad else np.empty((0, 0))
        cross = np.empty(n) if cost else np.empty(0)
        kern.kl_terms(P, Yt, f, form.kernel, form.alpha, bool(form.clamp_q), form.eps, Z,
                      ws["bounds"], bool(cost), bool(grad), ws["d2"], ws["q"], ws["kk"],
                      ws["gbuf"], ws["cbuf"], G, cross)
        pcost = None
        if cost:
            const = state.cached("plogp_exact", f, lambda: kern.plogp_rows(P, f, form.eps))
            pcost = const - cross
        return pcost, (G if grad else None)
