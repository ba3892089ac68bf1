"""The AB-divergence on the sparse-P engines (plan ``"ab"`` of :func:`.approx.approx_plan`): absne
(Student-t ``q = w / Z``) and abssne (Gaussian, ``q`` floored at ``eps``) in every branch of
:mod:`smallvis.methods.absne`.

With the stiffness ``K = c g (A - q S)``, ``S = sum A`` (the fused exact engine's form,
:mod:`.exact_ab`), the pair term ``A`` and the cost term of a pair depend on ``P_ij`` and ``q_ij``
only. On a pair P does not store, ``P = 0`` (then floored at ``eps`` as the branch floors it: all
but absne's general branch), so both are functions of ``q`` alone, and with ``log q = log w -
log Z`` (floored at ``log eps`` for the Gaussian) of the output distance alone:

=========================  =========================================  ==========================
branch                     ``A`` at ``P = 0`` (``p0 = eps`` or 0)      cost term
=========================  =========================================  ==========================
general                    ``p0^a q^b - q^l``                          ``q^l / (a l) - p0^a q^b /
                                                                       (a b)``
``absneb0`` (b = 0)        ``eps^a - q^a``                             ``(q^a - eps^a log q^a) /
                                                                       a^2``
``absneamb`` (l = 0)       ``eps^a q^-a - 1``                          ``(log q^a + eps^a q^-a) /
                                                                       a^2``
``absnea0`` (a = 0)        ``q^b (L - b log q)``, ``L = log max(       ``(q^b log q^b - L q^b -
                           eps^b, eps)``                               q^b) / b^2``
``absne00``                ``log eps - log q``                         ``(log eps - log q)^2 / 2``
=========================  =========================================  ==========================

So every pair is first counted as if P stored nothing there, from the engine's all-pairs sums of
the functions of ``q`` of :mod:`.radial_kernels` (``sum_j q^x (log q)^m`` and
``sum_j g q^x (log q)^m (y_i - y_j)``; ``q^b`` and ``q^l`` in the ``expm1`` form where the
method splits them) and ``sum_j g q (y_i - y_j)`` (the t-SNE repulsion, or the Gaussian's with the
floor ``max(w, eps Z)``), and the stored pairs then add the difference between their true terms
and those (:mod:`.approx_ab_kernels`); the constants (sums of terms of P alone) are the dense
engine's, with the unstored pairs at ``P = 0``.

Refused: absne's general branch with ``alpha <= 0`` or ``lambda <= 0``, where ``P^alpha`` or
``P^lambda`` of an unstored pair (``P = 0``, not floored in that branch) is infinite.
"""

from __future__ import annotations

import math

import numpy as np

# the pair forms' divergences (.exact_ab_kernels.BRANCHES: the branches of methods.absne)
DIVERGENCES = ("absne", "absneb0", "absneamb", "absnea0", "absne00")
_DATA_KEY = "_sparse_engine_ab"
_P_TERMS_KEY = "_sparse_engine_ab_p"


def ab_refusal(form) -> str | None:
    """Why the sparse-P engines cannot run this AB-divergence pair form (None: they can)."""
    alpha, _, lam, floor_p = form.params[:4]
    if form.divergence == "absne" and not floor_p and (alpha <= 0.0 or lam <= 0.0):
        return (f"its general branch with alpha = {alpha:g}, lambda = {lam:g} does not floor P, "
                "and P^alpha or P^lambda of a pair P does not store (P = 0) is infinite")
    if form.weight not in ("t", "gaussian"):
        return f"its output weight {form.weight!r} is not implemented on these engines"
    return None


def _prepared(state):
    if _DATA_KEY not in state.data:
        from scipy import sparse

        from .attraction_kernels import csr_arrays

        P = sparse.csr_matrix(state.P, dtype=np.float64)
        if P.shape[0] != P.shape[1]:
            raise ValueError(f"a sparse-P engine needs a square P; got shape {P.shape}")
        state.data[_DATA_KEY] = csr_arrays(P)
    return state.data[_DATA_KEY]


def _p_terms(state, P, branch, prm):
    """The stored entries' P terms (:func:`.approx_ab_kernels.ab_p_terms`), made once per
    exaggeration: one array of P's size, the last one made kept."""
    from . import approx_ab_kernels as kern
    from .exact_ab_kernels import ALPHA, BETA, EPS, F, FLOOR

    key = (branch,) + tuple(float(prm[i]) for i in (F, EPS, ALPHA, BETA, FLOOR))
    held = state.data.get(_P_TERMS_KEY)
    if held is None or held[0] != key:
        out = np.empty(P[2].shape[0])
        kern.ab_p_terms(*P, branch, prm, out)
        held = state.data[_P_TERMS_KEY] = (key, out)
    return held[1]


def evaluate_ab(engine, plan, method, state, Y, f, *, cost, grad):
    """``(pcost (n,) or None, gradient (n, k) or None)`` of the AB-divergence at ``Y``,
    exaggeration ``f``."""
    from . import approx_ab_kernels as kern
    from .approx_terms import Sums
    from .exact_ab import _params
    from .exact_ab_kernels import ALPHA0, BETA0, BRANCHES, GENERAL, INV_Z, LAMBDA0
    from .exact_kernels import kernel_params
    from .output_kernel_functions import GAUSSIAN_KERNEL, T_KERNEL, power
    from .radial_kernels import ONE, W, WG, q_code, q_params

    if not (cost or grad):
        return None, None
    form = plan.form
    branch = BRANCHES[form.divergence]
    a, b, lam, floor_p, split_b, split_l = form.params
    gauss = form.weight == "gaussian"
    code = GAUSSIAN_KERNEL if gauss else T_KERNEL
    eps = float(form.eps)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    n, k = Y.shape
    P = _prepared(state)
    prm = _params(form, f)
    consts = state.cached(("sparse_ab", form.divergence), f,
                          lambda: kern.ab_sparse_constants(*P, n, branch, prm))

    # Z, sum_j g q (y_i - y_j) (times Z) and sum_j g (y_i - y_j)
    kp = kernel_params()
    summer = engine.radial(Y, eps)
    Z, _, V = summer.sums(Sums(code, kp, vectors=(WG,) if gauss else (WG, W),
                               floor=eps if gauss else 0.0))
    Vq = V[:, 0] / Z
    Vg = n * (Y - Y.mean(axis=0)) if gauss else V[:, 1]

    # the functions of q, every pair counted at P = 0
    log_floor = math.log(eps) if gauss else -math.inf
    one_log = q_code(ONE, 1)
    if branch == GENERAL:
        x = dict(x0=lam, split0=split_l, x1=b, split1=split_b)
        p0 = eps if floor_p else 0.0
        pa0 = power(p0, a) if p0 > 0.0 else 0.0
        scalars, vectors = (q_code(0), q_code(1)), (q_code(0, 0, True), q_code(1, 0, True))
    elif branch == BETA0:
        x = dict(x0=a)
        scalars, vectors = (q_code(0), one_log), (q_code(0, 0, True),)
    elif branch == LAMBDA0:
        x = dict(x0=-a)
        scalars, vectors = (q_code(0), one_log), (q_code(0, 0, True),)
    elif branch == ALPHA0:
        x = dict(x0=b)
        scalars, vectors = (q_code(0), q_code(0, 1)), (q_code(0, 0, True), q_code(0, 1, True))
    else:
        x = {}
        scalars, vectors = (one_log, q_code(ONE, 2)), (q_code(ONE, 1, True),)
    qkp = q_params(kp, math.log(Z), log_floor, **x)
    # one scalar per request: a tree pass sums two scalars at most, one of them the weight
    # (Z is not read again: a grid skips it)
    _, T, U = summer.sums(Sums(code, qkp, scalars=scalars[:1], vectors=vectors if grad else (),
                               total=False))
    s1, s2 = T[:, 0], summer.sums(Sums(code, qkp, scalars=scalars[1:], total=False))[1][:, 0]

    if branch == GENERAL:
        ob, ol = float(split_b), float(split_l)
        base = pa0 * ob - ol
        s0 = (n - 1) * base + pa0 * s2 - s1
        cc0 = s1 / (a * lam) - pa0 * s2 / (a * b)
        scale = 4.0 / a
        if grad:
            gA = base * Vg + pa0 * U[:, 1] - U[:, 0]
    elif branch == BETA0:
        ea = power(eps, a)
        s0 = s1  # sum q^a: S = sum P^a - sum q^a
        cc0 = (s1 - ea * a * s2) / (a * a)
        scale = 4.0 / a
        if grad:
            gA = ea * Vg - U[:, 0]
    elif branch == LAMBDA0:
        ea = power(eps, a)
        s0 = ea * s1  # sum R: S = sum R - n (n - 1)
        cc0 = (a * s2 + ea * s1) / (a * a)
        scale = 4.0 / a
        if grad:
            gA = ea * U[:, 0] - Vg
    elif branch == ALPHA0:
        L = math.log(max(power(eps, b), eps))
        s0 = L * s1 - b * s2
        cc0 = (b * s2 - (L + 1.0) * s1) / (b * b)
        scale = 4.0 / b
        if grad:
            gA = L * U[:, 0] - b * U[:, 1]
    else:
        L = math.log(eps)
        s0 = (n - 1) * L - s1
        cc0 = 0.5 * ((n - 1) * L * L - 2.0 * L * s1 + s2)
        scale = 4.0
        if grad:
            gA = L * Vg - U[:, 0]

    prm[INV_Z] = 1.0 / Z
    cc, ds, F = np.empty(n), np.empty(n), np.empty((n, k))
    kern.ab_stored(P[0], P[1], _p_terms(state, P, branch, prm), Y, branch, code, prm, bool(cost),
                   cc, ds, F)
    pcost = G = None
    if cost:
        pcost = consts[:, 0] + cc0 + cc
    if grad:
        S = float(np.sum(s0) + np.sum(ds))
        if branch == BETA0:
            S = float(np.sum(consts[:, 1])) - S
        elif branch == LAMBDA0:
            S -= n * (n - 1)
        G = scale * (gA - S * Vq) + F
    return pcost, G
