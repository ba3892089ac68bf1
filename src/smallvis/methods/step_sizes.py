"""Step sizes that work for each method, for running many methods side by side (``compare``, the
benchmark gallery).

The original's delta-bar-delta default (``eta = 500``) is tuned for t-SNE-like gradients; methods whose
gradients are larger (Gaussian output kernels, input bandwidths, distance stress) need a smaller
``eta`` (so do rklsne and chsne, whose forces on far pairs are strong). The values below work on iris
(n = 150) and are rescaled with n as the forces scale:

- matrix-normalised P: forces shrink like ``1 / n``, so ``eta`` grows like ``n / 150``;
- distance stress (the MDS family): forces grow like ``n``, so ``eta`` shrinks like ``150 / n``;
- conditional (row-normalised) or un-normalised P, and the f-divergences whose forces on far pairs
  grow with ``1 / Q``: forces do not scale with n, nor does ``eta``.
"""

from __future__ import annotations

import math

DEFAULT_ETA = 500.0
REFERENCE_N = 150  # the size the ETA values were chosen on (iris)

ETA = {
    **dict.fromkeys(["ssne", "hssne", "bhssne", "wssne", "dhssne", "snerv", "sjse", "abssne",
                     "asne", "arsrsne", "nerv", "rsrnerv", "jse", "rsrjse", "ee"], 0.1),
    **dict.fromkeys(["bssne", "basne", "bnerv", "btasne", "btsne"], 1e-3),
    **dict.fromkeys(["mmds", "gmmds", "ballmmds", "knnmmds", "sammon"], 1e-2),
    "smmds": 1e-4,
    "rklsne": 10.0,
    "chsne": 10.0,
    **dict.fromkeys(["largevis", "umap", "tumap"], 1.0),
}
DISTANCE_FAMILY = ("mmds", "smmds", "sammon", "gmmds", "ballmmds", "knnmmds")
CONDITIONAL = ("asne", "arsrsne", "nerv", "rsrnerv", "jse", "rsrjse", "basne", "bnerv", "btasne",
               "largevis", "umap", "tumap", "rklsne", "chsne")
# tee's cost is negative by construction: it may only stop on the tolerance
MIN_COST = {"tee": -math.inf}


def suggested_eta(method: str, n: int) -> float:
    """A delta-bar-delta learning rate that works for ``method`` (a canonical name) on ``n`` points:
    ``ETA[method] * s`` with ``s = n / 150`` (matrix-normalised P), ``150 / n`` (distance stress) or
    1 (conditional P), and ``DEFAULT_ETA`` for the methods not listed (t-SNE and its kin)."""
    if method not in ETA:
        return DEFAULT_ETA
    if method in CONDITIONAL:
        return ETA[method]
    scale = REFERENCE_N / n if method in DISTANCE_FAMILY else n / REFERENCE_N
    return ETA[method] * scale


def suggested_settings(method: str, n: int) -> dict:
    """The ``smallvis()`` arguments a side-by-side run of ``method`` on ``n`` points uses: ``eta``
    (:func:`suggested_eta`) and, for methods whose cost can be negative, ``min_cost``."""
    settings = {"eta": suggested_eta(method, n)}
    if method in MIN_COST:
        settings["min_cost"] = MIN_COST[method]
    return settings


def suggested_params(method: str, n: int, given: dict | None = None) -> dict:
    """Method parameters a side-by-side run of ``method`` on ``n`` points changes from the defaults
    (``given``: the parameters a user set, which win and may make a suggestion moot).

    LargeVis: ``gamma = 1 / n``. Its default P is normalised (it sums to 1) while the repulsion
    ``gamma`` weighs all n^2 pairs, so the default ``gamma = 1`` lets repulsion win by a factor of
    about n: every dataset becomes a uniform disc (kNN@15 0.48 on iris, 0.04 on s1k; with
    ``gamma = 1 / n``, 0.79 and 0.27, against t-SNE's 0.81 and 0.41). Not with ``normalize=False``.
    """
    given = given or {}
    if method == "largevis" and given.get("normalize", True):
        return {"gamma": 1.0 / n}
    return {}
