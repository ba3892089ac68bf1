"""What a finished run tells its user: a diverged run is refused (or, under the original's defaults,
returned with a warning), and a step size that is too large or a layout collapsed onto a line are
named with what to change."""

from __future__ import annotations

import warnings

import numpy as np

from ..run.driver import EXPLODING


class DivergenceError(RuntimeError):
    """The optimisation diverged (non-finite coordinates or cost): no picture to return."""


def teach(out, name: str, eta, *, defaults: str) -> None:
    """After a run of method ``name`` with step size ``eta`` (None: not a number): refuse a diverged
    one (``defaults="auto"``) or warn, and say what to change when the coordinates exploded, the cost
    rose, or the layout collapsed onto a line."""
    step = f"eta={eta:.3g}" if isinstance(eta, (int, float)) else "the step size"
    smaller = f"a smaller eta (e.g. eta={eta / 10:.3g})" if isinstance(eta, (int, float)) else \
        "a smaller eta"
    if out.diverged:
        message = (f"the optimisation of method {name!r} diverged at iteration {out.diverged_at} "
                   f"(non-finite coordinates or cost) with {step}: try {smaller}, "
                   "Y_init='pcascaled', or opt='l-bfgs'")
        if defaults == "auto":
            raise DivergenceError(message)
        warnings.warn(message + "; the last finite coordinates are returned (res.diverged is set)",
                      RuntimeWarning, stacklevel=4)
        return
    if out.exploding:
        warnings.warn(f"the coordinates grew beyond {EXPLODING:.0e}: {step} is too large for "
                      f"method {name!r}; try {smaller} or another optimiser", RuntimeWarning,
                      stacklevel=4)
    elif out.cost_rose is not None:
        best, best_it, final = out.cost_rose
        warnings.warn(f"the cost of method {name!r} rose from {best:.4g} (iteration {best_it}) to "
                      f"{final:.4g} at the end: {step} is too large for it to settle; try {smaller} "
                      "or more iterations", RuntimeWarning, stacklevel=4)
    flat = degenerate_layout(out.Y) if out.iter > 0 else None  # max_iter=0: the start, as asked
    if flat is not None:
        warnings.warn(f"the embedding is nearly one-dimensional (its spread along axis 2 is {flat:.1e} "
                      "of its spread along axis 1): if the data are not, the input's widest columns "
                      "may dominate the distances (try scale='scale'), or the step size is too large",
                      RuntimeWarning, stacklevel=4)



# below this ratio of the second to the first singular value, a 2-D+ layout is a line (wine under
# absmax scaling: 0.025; t-SNE of clustered data: 0.3 and above)
FLAT_RATIO = 0.05


def degenerate_layout(Y: np.ndarray) -> float | None:
    """The ratio of the second to the first singular value of the centred ``Y`` when it is below
    :data:`FLAT_RATIO` (a layout collapsed onto a line); None otherwise or for 1-D output."""
    if Y.ndim != 2 or Y.shape[1] < 2 or Y.shape[0] < 3 or not np.all(np.isfinite(Y)):
        return None
    s = np.linalg.svd(Y - Y.mean(axis=0), compute_uv=False)
    if s[0] == 0:
        return None
    ratio = s[1] / s[0]
    return float(ratio) if ratio < FLAT_RATIO else None
