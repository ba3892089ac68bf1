"""``engine="auto"``: which engine runs a method, from the number of points, the method and the output
dimension.

The choice asks each registered engine whether it runs the method natively (its ``serves(method)``,
the same answer the catalog and the README's method table give), so a method that gains an engine
is routed to it with no edit here. The rule keeps every method on an exact engine (the original's
numbers) while that is practical:

1. Above ``AUTO_APPROX_N`` points, a method an approximate sparse-P engine serves goes to it:
   ``fft`` for 1-D and 2-D output (``bh`` where fft does not serve it), ``bh`` for 3-D; not the
   peers' stochastic methods (rule 2: their own engine at scale; bh and fft are an explicit
   choice for them).
2. Above ``AUTO_SGD_N`` points, the peers' stochastic methods (largevis, umap, tumap, ncvis: their
   ``StochasticPlan.auto``) go to ``sgd``; the other methods sgd runs (ee, tee, mmds, smmds,
   sammon) stay on the exact engines while they fit (rule 4).
3. Otherwise ``exact`` (fused kernels, same numbers as dense) from ``AUTO_EXACT_N`` points for the
   methods it serves natively, ``dense`` below (no compilation: small runs start at once) and for the
   rest.
4. When the dense engine's matrices would not fit in memory, ``exact`` (its own peak arrays,
   ``Method.exact_matrices``: P and the calibration's blocks, or a sparse P) is
   tried, then the approximate engines, then ``sgd``; if nothing fits, ``dense``, whose memory guard
   explains what to do.

The choice and its reason are logged (``verbose=True``).
"""

from __future__ import annotations

from .._util.log import logger
from .dense import DENSE_MATRICES, available_memory
from .sgd import AUTO_SGD_N

AUTO_EXACT_N = 1_000  # from here the fused exact engine pays for its (cached) compilation
AUTO_APPROX_N = 10_000  # above this many points: an approximate engine where one serves the method

# approximate engines by output dimension, in order of preference
_APPROX_BY_DIM = {1: ("fft", "bh"), 2: ("fft", "bh"), 3: ("bh",)}


def _fits(n: int, matrices: float) -> bool:
    budget = available_memory()
    return budget is None or matrices * 8 * n * n <= 0.8 * budget


def _sparse_p(method) -> bool:
    from .exact import sparse_input

    return sparse_input(method)


def native_engines(method, engines) -> set:
    """Names of the engines in ``engines`` (name -> engine class) that run ``method`` natively."""
    return {name for name, engine in engines.items()
            if getattr(engine, "serves", None) is not None and engine.serves(method)}


def choose_engine(method, n: int, k: int, engines) -> tuple[str, str]:
    """``(engine name, reason)`` for ``engine="auto"``; ``engines``: the registered engines, name ->
    engine class (``smallvis.engines.ENGINES``)."""
    native = native_engines(method, engines)
    approx = next((name for name in _APPROX_BY_DIM.get(k, ()) if name in native), None)
    plan = method.stochastic_plan() if "sgd" in native else None
    stochastic = plan is not None
    if stochastic and plan.auto:  # sgd at scale (rule 2); bh and fft only when asked for
        approx = None
    fused = "exact" in native
    own = float(getattr(method, "exact_matrices", 1))  # the exact engine's peak (n, n) arrays
    if approx and n > AUTO_APPROX_N:
        return approx, (f"{n} points > {AUTO_APPROX_N} and method {method.name} has a sparse "
                        f"approximate version for {k}-D output")
    if stochastic and plan.auto and n > AUTO_SGD_N:
        return "sgd", (f"{n} points > {AUTO_SGD_N} and method {method.name} has a stochastic "
                       f"version")
    if fused and n >= AUTO_EXACT_N and (_fits(n, own) or _sparse_p(method)):
        return "exact", f"{n} points >= {AUTO_EXACT_N}: fused exact kernels"
    if _fits(n, DENSE_MATRICES):
        why = "few points" if n < AUTO_EXACT_N else f"method {method.name} has no fused kernels"
        return "dense", f"{n} points, {why}"
    if fused and _sparse_p(method):
        return "exact", "the dense engine's matrices would not fit in memory; a sparse P does"
    if fused and _fits(n, own):
        return "exact", (f"the dense engine's matrices would not fit in memory; the exact "
                         f"engine's {own:g} do")
    if approx:
        return approx, "the exact engine's n x n arrays would not fit in memory: sparse P"
    if stochastic:
        return "sgd", "the dense matrices would not fit in memory: sparse P"
    return "dense", "nothing smaller serves this method (the memory guard decides)"


def resolve_auto(method, n: int, k: int, engines) -> str:
    name, reason = choose_engine(method, n, k, engines)
    logger.info("engine='auto': using the %s engine (%s)", name, reason)
    return name
