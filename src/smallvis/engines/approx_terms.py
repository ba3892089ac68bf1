"""The costs and gradients of the sparse-P engines' general plans (:class:`.approx.ApproxPlan`):
the terms over the stored entries of P (:mod:`.stored_pair_kernels`) and the engine's all-pairs
sums (:class:`Sums`) put together. With ``p = f P_ij`` (``f`` the exaggeration),
``dy = y_i - y_j``, ``S_i = sum_{j != i} w_ij`` and ``V_i = sum_{j != i} w_ij g_ij dy``:

- ``kl`` (matrix-normalised Q, weights ``u_i u_j w``, charges ``u``): ``G_i = 4 (f' A_i -
  u_i V_i / Z)`` with ``A_i = sum_j P^s_ij g_ij dy`` over the stored entries of
  ``P^s = (P + P^T) / 2`` and ``f' = f`` (1 where the forces are not exaggerated); ``Z`` the
  method's own where it fixes it. Cost ``sum_j p log(p / q_ij)`` over the stored entries of
  column ``i``;
- ``kl-row`` (``q_ij = w_ij / Z_i``): ``G_i = 4 f A_i - 2 V_i / Z_i - 2 V'_i`` with ``V'`` the
  force sum with the charges ``1 / Z_j``; cost ``sum_j p log p`` over column ``i`` less
  ``sum_j p log q_ij`` over row ``i`` (the dense engine's attribution);
- ``fdiv`` (Student-t ``q = w / Z``, P symmetric), with the stored pairs' pieces ``c_i``,
  ``t = sum_i t_i`` and ``F_i`` of :func:`.stored_pair_kernels.fdiv_stored`:
  rklsne ``C_i = (sum_j w log w - (log Z + log eps) S_i) / Z + c_i``,
  ``G_i = 4 / Z ((C + log Z + log eps) V_i - sum_j w^2 log w dy + F_i)`` (``C = sum C_i``);
  jssne ``C_i = c_i + S_i log 2 / (2 Z)``, ``G_i = 2 / Z (t V_i - F_i)``;
  chsne, hlsne ``C_i = c_i + S_i / Z``, ``G_i = 4 F_i - 4 t V_i / Z``;
- ``tee`` (un-normalised ``V``, ``N = sum V``, ``lambda``): ``G_i = 4 / N (sum_j V_ij w dy -
  lambda V_i)``, ``C_i = const_i + (lambda S_i + sum_j V_ij log(1 + d2)) / N``;
- ``ee`` (Gaussian ``w``, no exaggeration): ``G_i = 4 (sum_j P_ij dy - lambda V_i)``,
  ``C_i = sum_j P_ij d2 + lambda S_i``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .radial_kernels import W, W_LOG_W, WG, WG_LOG_W

_DATA_KEY = "_sparse_engine_terms"
_FDIV = {"rklsne": 0, "jssne": 1, "chsne": 2, "hlsne": 3}  # stored_pair_kernels' codes


@dataclass(frozen=True)
class Sums:
    """What an evaluation asks of :meth:`SparseKLEngine.radial`, at its coordinates: the output
    kernel ``code`` with the parameters ``kp`` (:func:`.exact_kernels.kernel_params`), the radial
    functions of :mod:`.radial_kernels` summed per point (``scalars``: ``S_i = sum_{j != i} c_j
    phi(d2_ij)``) and times ``y_i - y_j`` (``vectors``), at most two of each besides ``W`` (which
    the tree sums with them); ``charges`` ``c`` (n,) (None: 1); ``floor``: the least weight of
    ``WG`` relative to ``Z`` (``eps``: the eps floor on Q; 0: none). The answer is
    ``(Z, S (n, scalars), V (n, vectors, k))`` with ``Z = sum_{i != j} c_i c_j w_ij``; with
    ``total`` False the caller does not read ``Z``, which an engine may then skip (NaN; a tree
    sums it with the rest regardless)."""

    code: int
    kp: np.ndarray
    scalars: tuple = ()
    vectors: tuple = ()
    charges: np.ndarray | None = None
    floor: float = 0.0
    total: bool = True


def evaluate_plan(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of ``plan`` at ``Y`` on ``engine``."""
    if not (cost or grad):
        return None, None
    prep = _prepared(plan, method, state)
    run = {"kl": _kl, "kl-row": _kl_rows, "fdiv": _fdiv, "tee": _tee, "ee": _ee}[plan.kind]
    root = math.sqrt(plan.form.scale) if plan.kind == "kl" else 1.0
    Y = np.ascontiguousarray(Y if root == 1.0 else root * Y, dtype=np.float64)
    pcost, G = run(engine, plan, method, state, prep, Y, f, cost, grad)
    if G is not None and root != 1.0:  # w(s d2) at Y is w(d2) at sqrt(s) Y
        G *= root
    return pcost, G


def _prepared(plan, method, state) -> dict:
    """The CSR arrays and constants of a plan, made once per state."""
    if _DATA_KEY in state.data:
        return state.data[_DATA_KEY]
    from scipy import sparse

    from .exact_kernels import form_params, kernel_params

    form = plan.form
    source = state.data["V"] if plan.kind == "tee" else state.P
    P = sparse.csr_matrix(source, dtype=np.float64)
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
    symmetric = plan.kind in ("fdiv", "tee", "ee") or (
        plan.kind == "kl" and form.symmetric_p)
    Pt = P if symmetric else P.T.tocsr()
    prep = {"kp": form_params(form) if plan.kind in ("kl", "kl-row") else kernel_params(),
            "att": _arrays(P if symmetric else (0.5 * (P + Pt)).tocsr()),
            "cost": _arrays(P if symmetric or plan.kind == "kl-row" else Pt)}
    # sum_j p log p and sum_j p over the columns of P (= rows of P^T)
    cols = np.repeat(np.arange(P.shape[0]), np.diff(Pt.indptr))
    pos = Pt.data > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(pos, Pt.data * np.log(np.where(pos, Pt.data, 1.0)), 0.0)
    prep["plogp"] = np.bincount(cols, weights=plogp, minlength=P.shape[0])
    prep["colsum"] = np.bincount(cols, weights=np.where(pos, Pt.data, 0.0), minlength=P.shape[0])
    prep["u"] = None
    if plan.kind == "kl" and form.point_weights:
        prep["u"] = np.ascontiguousarray(np.asarray(method.output_weights(state),
                                                    dtype=np.float64).ravel())
    state.data[_DATA_KEY] = prep
    return prep


def _arrays(P):
    from .attraction_kernels import csr_arrays

    return csr_arrays(P)


def _attraction(prep, Y, code, which="att"):
    from .stored_pair_kernels import attraction

    A = np.empty(Y.shape)
    attraction(*prep[which], Y, code, prep["kp"], A)
    return A


def _cross(prep, Y, code, u, log_z, clamp, eps):
    """``sum_j P_ij log q_ij`` over the stored entries of each row of ``prep["cost"]``."""
    from .stored_pair_kernels import kl_cost

    cross = np.empty(Y.shape[0])
    kl_cost(*prep["cost"], Y, code, prep["kp"], np.empty(0) if u is None else u,
            np.atleast_1d(np.asarray(log_z, dtype=np.float64)), bool(clamp), float(eps), cross)
    return cross


def _kl_pcost(prep, cross, f):
    with np.errstate(divide="ignore"):
        logf = np.log(f) if f > 0 else 0.0
    return f * (prep["plogp"] + logf * prep["colsum"]) - f * cross


def _kl(engine, plan, method, state, prep, Y, f, cost, grad):
    """Matrix-normalised KL. The form is read again at every evaluation (dhssne's carries the alpha
    of its epoch search); right after an epoch that changed it, the gradient is that of its
    ``grad_form`` (the stale weights), after which the method is told (``grad_form_used``)."""
    form = method.fused_form(state)
    if form.kernel != plan.code:
        raise ValueError(f"method {method.name!r} changed its output kernel during the run "
                         f"(code {plan.code} to {form.kernel})")
    if grad and form.grad_form is not None:
        pcost = _kl_form(engine, form, method, state, prep, Y, f, cost, False)[0]
        G = _kl_form(engine, form.grad_form, method, state, prep, Y, f, False, True)[1]
        method.grad_form_used(state)
        return pcost, G
    return _kl_form(engine, form, method, state, prep, Y, f, cost, grad)


def _kl_form(engine, form, method, state, prep, Y, f, cost, grad):
    from .exact_kernels import form_params

    code, u = form.kernel, prep["u"]
    prep = {**prep, "kp": form_params(form)}
    floor = form.eps if form.clamp_q and u is None else 0.0
    Z, _, V = engine.radial(Y, form.eps).sums(
        Sums(code, prep["kp"], vectors=(WG,) if grad else (), charges=u, floor=floor))
    if form.fixed_z:
        Z = float(method.output_normaliser(state, f))
    G = pcost = None
    if grad:
        R = V[:, 0] if u is None else u[:, None] * V[:, 0]
        fg = f if form.exaggerate_forces else 1.0
        G = 4.0 * (fg * _attraction(prep, Y, code) - R / Z)
    if cost:
        pcost = _kl_pcost(prep, _cross(prep, Y, code, u, np.log(Z), form.clamp_q, form.eps), f)
    return pcost, G


def _kl_rows(engine, plan, method, state, prep, Y, f, cost, grad):
    form, code = plan.form, plan.code
    summer = engine.radial(Y, form.eps)
    _, S, V = summer.sums(Sums(code, prep["kp"], scalars=(W,), vectors=(WG,) if grad else ()))
    Zi = S[:, 0]
    G = pcost = None
    if grad:
        _, _, Vt = summer.sums(Sums(code, prep["kp"], vectors=(WG,), charges=1.0 / Zi))
        G = 4.0 * f * _attraction(prep, Y, code) - 2.0 * V[:, 0] / Zi[:, None] - 2.0 * Vt[:, 0]
    if cost:
        pcost = _kl_pcost(prep, _cross(prep, Y, code, None, np.log(Zi), form.clamp_q, form.eps), f)
    return pcost, G


def _fdiv(engine, plan, method, state, prep, Y, f, cost, grad):
    from .stored_pair_kernels import RKL, JS, fdiv_stored, rkl_log_p

    form = plan.form
    div = _FDIV[form.divergence]
    rkl = div == RKL
    scalars = (W, W_LOG_W) if rkl else ((W,) if cost else ())
    vectors = ((WG, WG_LOG_W) if rkl else (WG,)) if grad else ()
    Z, S, V = engine.radial(Y, form.eps).sums(Sums(plan.code, prep["kp"], scalars, vectors))
    n, k = Y.shape
    c, t, F = np.empty(n), np.empty(n), np.empty((n, k))
    log_p = np.empty(0)
    if rkl:
        data = prep["att"][2]

        def logs():
            out = np.empty_like(data)
            rkl_log_p(data, float(f), float(form.eps), out)
            return out

        log_p = state.cached("sparse_rkl_log_p", f, logs)
    fdiv_stored(div, *prep["att"], log_p, Y, f, Z, form.eps, bool(cost), c, t, F)
    G = pcost = None
    if rkl:
        shift = np.log(Z) + np.log(form.eps)
        pcost = (S[:, 1] - shift * S[:, 0]) / Z + c
        if grad:
            G = (4.0 / Z) * ((float(np.sum(pcost)) + shift) * V[:, 0] - V[:, 1] + F)
        return (pcost if cost else None), G
    total = float(np.sum(t))
    if div == JS:
        if cost:
            pcost = c + (0.5 * np.log(2.0) / Z) * S[:, 0]
        if grad:
            G = (2.0 / Z) * (total * V[:, 0] - F)
    else:
        if cost:
            pcost = c + S[:, 0] / Z
        if grad:
            G = 4.0 * F - (4.0 * total / Z) * V[:, 0]
    return pcost, G


def _pair_sums(engine, plan, prep, Y, eps, cost, grad):
    return engine.radial(Y, eps).sums(Sums(plan.code, prep["kp"], (W,) if cost else (),
                                           (WG,) if grad else ()))


def _tee(engine, plan, method, state, prep, Y, f, cost, grad):
    form = plan.form
    lam, N = float(form.gamma), float(form.norm)
    _, S, V = _pair_sums(engine, plan, prep, Y, form.eps, cost, grad)
    G = pcost = None
    if grad:  # no exaggeration
        G = (4.0 / N) * (_attraction(prep, Y, plan.code) - lam * V[:, 0])
    if cost:
        cross = _cross(prep, Y, plan.code, None, 0.0, False, form.eps)  # sum V log w
        pcost = state.data["const"] + (lam * S[:, 0] - cross) / N
    return pcost, G


def _ee(engine, plan, method, state, prep, Y, f, cost, grad):
    form = plan.form
    lam = float(form.gamma)
    _, S, V = _pair_sums(engine, plan, prep, Y, form.eps, cost, grad)
    G = pcost = None
    if grad:  # no exaggeration; Gaussian: g = 1
        G = 4.0 * (_attraction(prep, Y, plan.code) - lam * V[:, 0])
    if cost:
        cross = _cross(prep, Y, plan.code, None, 0.0, False, form.eps)  # -sum P d2
        pcost = lam * S[:, 0] - cross
    return pcost, G
