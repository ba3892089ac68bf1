"""``engine="auto"``: which engine runs a method, from the number of points, the method and the output
dimension.

The rule keeps every method on an exact engine (the original's numbers) while that is practical:

1. t-SNE-family methods (KL with a symmetric P, a Student-t or heavy-tailed kernel) above
   ``AUTO_APPROX_N`` points go to an approximate engine with sparse P: ``fft`` for 1-D and 2-D
   output, ``bh`` for 3-D.
2. The peers' stochastic methods (largevis, umap, tumap, ncvis: ``StochasticPlan.auto``) above
   ``AUTO_SGD_N`` points go to ``sgd``; the other methods sgd runs (ee, tee, mmds, smmds, sammon)
   only when nothing exact fits in memory (rule 4).
3. Otherwise ``exact`` (fused kernels, same numbers as dense) from ``AUTO_EXACT_N`` points for the
   methods it serves natively, ``dense`` below (no compilation: small runs start at once) and for the
   rest.
4. When the dense engine's matrices would not fit in memory, ``exact`` (P alone) is tried, then the
   approximate engines; if nothing fits the memory guard explains what to do.
"""

from __future__ import annotations

from .._util.log import logger
from .dense import DENSE_MATRICES, available_memory
from .sgd import AUTO_SGD_N

AUTO_EXACT_N = 1_000  # from here the fused exact engine pays for its (cached) compilation
AUTO_APPROX_N = 10_000  # t-SNE family above this many points: FFT (1-D, 2-D) or Barnes-Hut (3-D)


def _fits(n: int, matrices: int) -> bool:
    budget = available_memory()
    return budget is None or matrices * 8 * n * n <= 0.8 * budget


def _fused(method) -> bool:
    """True when the exact engine evaluates ``method`` natively (not through the dense fallback)."""
    from .exact import native_form

    return native_form(method) is not None


def _sparse_p(method) -> bool:
    from .exact import sparse_input

    return sparse_input(method)


def choose_engine(method, n: int, k: int, available) -> tuple[str, str]:
    """``(engine name, reason)`` for ``engine="auto"``; ``available``: the registered engine names."""
    from .approx import served_form

    sparse_ok = served_form(method) is not None
    approx = ("fft" if k <= 2 else "bh") if k <= 3 else None
    if approx not in available:
        approx = None
    plan = method.stochastic_plan()
    stochastic = plan is not None and "sgd" in available
    fused = _fused(method)
    if sparse_ok and approx and n > AUTO_APPROX_N:
        return approx, (f"{n} points > {AUTO_APPROX_N} and method {method.name} has a sparse "
                        f"approximate version for {k}-D output")
    if stochastic and plan.auto and n > AUTO_SGD_N:
        return "sgd", (f"{n} points > {AUTO_SGD_N} and method {method.name} has a stochastic "
                       f"version")
    if fused and n >= AUTO_EXACT_N and (_fits(n, 1) or _sparse_p(method)):
        return "exact", f"{n} points >= {AUTO_EXACT_N}: fused exact kernels"
    if _fits(n, DENSE_MATRICES):
        why = "few points" if n < AUTO_EXACT_N else f"method {method.name} has no fused kernels"
        return "dense", f"{n} points, {why}"
    if fused and _sparse_p(method):
        return "exact", "the dense engine's matrices would not fit in memory; a sparse P does"
    if fused and _fits(n, 1):
        return "exact", "the dense engine's matrices would not fit in memory; P alone does"
    if sparse_ok and approx:
        return approx, "not even P would fit in memory as an n x n matrix: sparse P"
    if stochastic:
        return "sgd", "the dense matrices would not fit in memory: sparse P"
    return "dense", "nothing smaller serves this method (the memory guard decides)"


def resolve_auto(method, n: int, k: int, available) -> str:
    name, reason = choose_engine(method, n, k, available)
    logger.info("engine='auto': using the %s engine (%s)", name, reason)
    return name
