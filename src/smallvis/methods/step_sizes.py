"""Step sizes that work for each method, for running many methods side by side (``compare``, the
benchmark gallery).

The original's delta-bar-delta default (``eta = 500``) is tuned for t-SNE-like gradients; methods whose
gradients are larger (Gaussian output kernels, input bandwidths, distance stress) need a smaller
``eta`` (so do rklsne and chsne, whose forces on far pairs are strong). Each method's spec says which
(``MethodSpec.step``, a :class:`~smallvis.methods.base.StepRule`): a value that works on iris
(n = 150), rescaled with n as the forces scale:

- matrix-normalised P: forces shrink like ``1 / n``, so ``eta`` grows like ``n / 150``;
- distance stress (the MDS family): forces grow like ``n``, so ``eta`` shrinks like ``150 / n``;
- conditional (row-normalised) or un-normalised P, and the f-divergences whose forces on far pairs
  grow with ``1 / Q``: forces do not scale with n, nor does ``eta``.

The rule also carries the ``min_cost`` a method needs (tee's cost is negative by construction: it may
only stop on the tolerance) and the parameters a side-by-side run changes (LargeVis's ``gamma``).
"""

from __future__ import annotations

from . import REGISTRY
from .base import DEFAULT_ETA, REFERENCE_N, StepRule

__all__ = ["DEFAULT_ETA", "REFERENCE_N", "step_rule", "suggested_eta", "suggested_params",
           "suggested_settings"]


def step_rule(method: str) -> StepRule:
    """The step rule of ``method`` (a canonical name); the default rule (``DEFAULT_ETA``, not scaled)
    for a name that is not registered."""
    spec = REGISTRY.get(method)
    return StepRule() if spec is None else spec.step


def suggested_eta(method: str, n: int) -> float:
    """A delta-bar-delta learning rate that works for ``method`` (a canonical name) on ``n`` points:
    its spec's ``eta`` times ``n / 150`` (matrix-normalised P), ``150 / n`` (distance stress) or 1
    (conditional P), and ``DEFAULT_ETA`` for t-SNE and its kin."""
    return step_rule(method).eta_for(n)


def suggested_settings(method: str, n: int) -> dict:
    """The ``smallvis()`` arguments a side-by-side run of ``method`` on ``n`` points uses: ``eta``
    (:func:`suggested_eta`) and, for methods whose cost can be negative, ``min_cost``."""
    rule = step_rule(method)
    settings = {"eta": rule.eta_for(n)}
    if rule.min_cost is not None:
        settings["min_cost"] = rule.min_cost
    return settings


def suggested_params(method: str, n: int, given: dict | None = None) -> dict:
    """Method parameters a side-by-side run of ``method`` on ``n`` points changes from the defaults
    (``given``: the parameters a user set, which win and may make a suggestion moot); from the
    spec's step rule (LargeVis: ``gamma = 1 / n`` unless ``normalize=False``)."""
    rule = step_rule(method)
    return {} if rule.params is None else dict(rule.params(n, given or {}))
