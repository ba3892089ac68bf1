"""NCVis's expected NCE cost (the pair form ``"nce"``, the formulas of
:mod:`smallvis.methods.ncvis`) on the sparse-P engines (plan ``"nce"`` of :mod:`.approx`).

The exact engine (:mod:`.exact_nce`) reports the cost at the profile optimum ``Q*(Y)`` of the
log-normaliser, found by a safeguarded Newton iteration
(:func:`smallvis.methods.ncvis.profile_logz`, warm-started from the previous evaluation) on
``dC/dQ`` and ``d2C/dQ2``. With the reference code's noise model (``corrected=False``: the constant
``pi = 1 / (n (n - 1))``) every pair's logit ``t = log qhat - Q - log(nu pi)`` is a function of its
output distance, so both sums are sums over all pairs of radial functions
(:mod:`.approx_nce_kernels`, the codes ``NCE_*`` of :mod:`.radial_kernels`) weighted by the head's
noise weight ``s_i = nu p_i / (n - 1)`` (``p_i`` the row mass of the unexaggerated P), plus the
data terms of the stored entries of P:

- ``dC/dQ = sum_stored p (1 - sigma) - sum_i s_i sum_{j != i} sigma_ij`` and
  ``d2C/dQ2 = sum_stored p sigma (1 - sigma) + sum_i s_i sum_{j != i} sigma_ij (1 - sigma_ij)``:
  one request per Newton step (one tree traversal, one grid pass; the tree or the grid's weights
  are set up once per evaluation);
- at ``Q*``, cost ``C_i = sum_stored p softplus(-t) + s_i sum_{j != i} softplus(t)`` and gradient
  ``G_i = sum_stored 4 g p (1 - sigma) dy - 2 s_i sum_j g sigma dy - 2 sum_j s_j g sigma dy``
  (``dy = y_i - y_j``): the last a sum with the charges ``s``.

The first evaluation's initial guess ``log sum qhat - log sum P`` takes ``sum qhat`` from the engine
(the ``Z`` of UMAP's curve). At ``theta = 0`` the tree gives the exact engine's numbers (it adds
machine epsilon to every squared distance).

The FFT engine interpolates every radial function on its grid. The force factor
``g = a b x^(b - 1) qhat`` has a cusp at ``x = 0`` for ``b < 1.5``, so the interpolated forces are
less accurate than the other methods' as ``b`` nears 1 (500 points spanning ~6 units: at the
defaults, ``b = 1.22``, within 6e-4 of the exact gradient in 1-D and 1.4e-4 in 2-D; ``b = 1.003``,
min_dist 0.2: 5e-3 and 1.3e-3), and it is unbounded for ``b < 1``, which the FFT engine refuses
(:func:`engine_refusal`; min_dist 0: 3.5e-2 and 1e-2).

Not served: the corrected noise model (``corrected=True``), whose logit has the per-point term
``log p_i``: ``sigma`` is then a function of the distance and of the head point, not of the distance
alone (:func:`refusal`).
"""

from __future__ import annotations

import math

import numpy as np

from ..methods.base import EPS

_DATA_KEY = "_sparse_engine_nce"
UMAP_KERNEL = 3  # the plan's output kernel: UMAP's curve (output_kernel_functions, without numba)


def engine_refusal(engine: str, form) -> str | None:
    """Why ``engine`` cannot run the NCE pair form ``form`` that the sparse-P engines serve (None:
    it can): the FFT engine needs ``b >= 1`` (the module docstring)."""
    if engine != "fft" or form.b >= 1.0:
        return None
    return (f"its force factor a b d^(2(b - 1)) qhat is unbounded at d -> 0 for b < 1 (here "
            f"b = {form.b:.4g}: min_dist below about 0.2 with spread 1), which the interpolation "
            f"grid does not resolve (min_dist = 0: gradient 3.5e-2 from the exact one on 500 "
            f"points in 1-D, 1e-2 in 2-D); engine 'bh' runs it")


def refusal(form) -> str | None:
    """Why the sparse-P engines cannot run the NCE pair form ``form`` (None: they can)."""
    if not form.params[1]:
        return None
    return ("with corrected=True its noise model has the per-point density s_ij = p_i / (n - 1): "
            "each pair's logit log qhat - Q - log(nu s_ij) depends on the head point, not on the "
            "output distance alone, which the tree and the interpolation grid need; "
            "corrected=False (the default) is served")


def _prepared(state, n):
    """The CSR arrays of P and the noise weights ``s_i``, made once per state."""
    if _DATA_KEY not in state.data:
        from scipy import sparse

        from .attraction_kernels import csr_arrays

        P = sparse.csr_matrix(state.P, dtype=np.float64)
        if P.shape[0] != P.shape[1]:
            raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
        rows = state.data.get("row_mass")
        if rows is None:  # the noise distribution: the unexaggerated row masses
            rows = np.asarray(P.sum(axis=1), dtype=np.float64).ravel()
        state.data[_DATA_KEY] = (csr_arrays(P), float(P.sum() - P.diagonal().sum()),
                                 np.ascontiguousarray(rows, dtype=np.float64))
    return state.data[_DATA_KEY]


def evaluate_nce(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of NCVis's cost at ``Y`` on ``engine``
    (the module docstring). Stores ``Q*`` in the state as the exact engine does."""
    if not (cost or grad):
        return None, None
    from ..methods.ncvis import profile_logz
    from .approx_nce_kernels import nce_kp, stored_curve, stored_dq_at, stored_terms
    from .approx_terms import Sums
    from .radial_kernels import NCE_COST, NCE_FORCE, NCE_SIG, NCE_SIG2

    form = plan.form
    nu = float(form.params[0])
    a, b = float(form.a), float(form.b)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    csr, p_total, rows = _prepared(state, n)
    neg = (nu / (n - 1)) * rows
    pos_sum = f * p_total
    neg_sum = float(neg.sum()) * (n - 1)
    lnp = math.log(nu) - math.log(n * (n - 1.0))
    summer = engine.radial(Y, EPS)
    F, dF = np.empty(n), np.empty(n)
    apb = np.empty(csr[1].shape[0])  # the stored entries' a x^b, for every pass
    stored_curve(csr[0], csr[1], Y, a, b, apb)

    def ec(Q):  # e^t = qhat ec
        with np.errstate(over="ignore"):
            return float(np.exp(-lnp - Q))

    def dQ(Q):
        c = ec(Q)
        S = summer.sums(Sums(plan.code, nce_kp(a, b, c), (NCE_SIG, NCE_SIG2)))[1]
        stored_dq_at(csr[0], csr[2], apb, f, c, F, dF)
        return (float(np.sum(F)) - float(np.sum(neg * S[:, 0])),
                float(np.sum(dF)) + float(np.sum(neg * S[:, 1])))

    def guess():
        log_z = math.log(summer.sums(Sums(plan.code, nce_kp(a, b, 1.0)))[0]) if n > 1 else 0.0
        return log_z - math.log(pos_sum) if pos_sum > 0 else log_z

    c = ec(profile_logz(state, dQ, guess, pos_sum, neg_sum))
    kp = nce_kp(a, b, c)
    pcost = np.empty(n) if cost else np.empty(0)
    G = np.empty((n, k)) if grad else np.empty((0, 0))
    stored_terms(*csr, apb, Y, f, b, c, bool(cost), bool(grad), pcost, G)
    _, S, V = summer.sums(Sums(plan.code, kp, (NCE_COST,) if cost else (),
                               (NCE_FORCE,) if grad else ()))
    if cost:
        pcost += neg * S[:, 0]
    if grad:
        Vs = summer.sums(Sums(plan.code, kp, (), (NCE_FORCE,), charges=neg))[2]
        G -= 2.0 * (neg[:, None] * V[:, 0] + Vs[:, 0])
    return (pcost if cost else None), (G if grad else None)
