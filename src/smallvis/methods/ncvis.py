"""NCVis (Artemenkov & Panov 2020, "NCVis: Noise Contrastive Approach for Scalable Visualization",
WWW, arXiv:2001.11411; docs/methods.md#ncvis), exact dense version.

NCVis fits UMAP's output curve :math:`\\hat q_{ij} = 1/(1 + a d_{ij}^{2b})` with a learned
log-normaliser :math:`Q`, :math:`q_{ij} = e^{-Q} \\hat q_{ij}`, by noise-contrastive estimation.
P is the binary union ("OR") kNN graph normalised to sum 1; with :math:`p_{i\\cdot} = \\sum_j P_{ij}`,
a noise pair is a head :math:`i` of a sampled edge and a tail drawn uniformly from the other points,
so the noise distribution is :math:`s_{ij} = p_{i\\cdot} / (n - 1)` (:math:`j \\ne i`). The model
assumes the noise density :math:`\\pi_{ij}`: the constant :math:`1/(n(n-1))` in the reference code
(``corrected=False``), or the true :math:`s_{ij}` (``corrected=True``, the seed's correction
:math:`Q' = Q + \\log p_i^-`). With :math:`\\nu` noise pairs per edge, the expected NCE loss is

.. math::
    C(Y, Q) = -\\sum_{i \\ne j} \\left[ P_{ij} \\log \\frac{q_{ij}}{q_{ij} + \\nu \\pi_{ij}}
              + \\nu s_{ij} \\log \\frac{\\nu \\pi_{ij}}{q_{ij} + \\nu \\pi_{ij}} \\right]

With :math:`\\sigma_{ij} = q_{ij} / (q_{ij} + \\nu \\pi_{ij})`, i.e. the logistic function of
:math:`t_{ij} = \\log \\hat q_{ij} - Q - \\log(\\nu \\pi_{ij})`, each pair costs
:math:`P_{ij} \\log(1 + e^{-t_{ij}}) + \\nu s_{ij} \\log(1 + e^{t_{ij}})` and

.. math::
    f_{ij} = \\frac{\\partial C}{\\partial Q}\\Big|_{ij} = P_{ij} (1 - \\sigma_{ij}) - \\nu s_{ij} \\sigma_{ij},
    \\qquad
    \\frac{\\partial C}{\\partial Q} = \\sum_{i \\ne j} f_{ij},
    \\qquad
    \\frac{\\partial^2 C}{\\partial Q^2} = \\sum_{i \\ne j} (P_{ij} + \\nu s_{ij}) \\sigma_{ij} (1 - \\sigma_{ij})

.. math::
    G_{ij} = \\frac{\\partial C}{\\partial d_{ij}^2} = a b\\, d_{ij}^{2(b-1)} \\hat q_{ij} f_{ij},
    \\qquad K = 2 (G + G^T)

(:math:`\\partial \\hat q / \\partial d^2 = -a b d^{2(b-1)} \\hat q^2`; :math:`G` is not symmetric
because :math:`s` and :math:`\\pi` depend on the row; coincident points get zero force).
:math:`\\partial C / \\partial Q` rises from :math:`-\\nu \\sum s` to :math:`\\sum P`, so the profile
optimum :math:`Q^*(Y)` is unique; the exact path reports :math:`C(Y, Q^*(Y))` and, by the envelope
theorem, its gradient is the force above at :math:`Q^*`. :math:`Q^*` is found by safeguarded Newton
(warm-started from the previous evaluation). Exaggeration multiplies the data term's P only; the
noise distribution is the sampler's and stays that of the unexaggerated P.

``alpha_Q``, ``noise_plan`` and ``n_init_epochs`` are the stochastic algorithm's (learning rate of
Q, the schedule of negatives per edge, the power-iteration rounds of its initialisation); the exact
path validates and stores them but its cost uses the constant ``noise_ratio``. Extras: ``Q`` (the
normalised :math:`q_{ij}` at :math:`Q^*`) and ``logZ`` (:math:`Q^*`). The cost is evaluated in log
space (:math:`\\log \\hat q = -\\log(1 + a d^{2b})`, softplus of :math:`\\pm t`), so no logarithm
needs a guard: ``eps`` is accepted and validated like the other methods' but does not change the
cost.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from .._util.names import InvalidNameError, match_name
from ..io.distances import squared_distances
from .base import EPS, Method, MethodSpec, PairForm, StochasticPlan, affinity_recipe, check_range

NOISE_PLANS = ("cubic", "constant")

# the profile solve: stop when a Newton step moves Q by less than this
Q_TOL = 1e-13
_MAX_NEWTON = 200
_MAX_STEP = 4.0  # largest Newton step in Q (e^4 in q): F is a sum of sigmoids, flat in its tails


class _Pairs:
    """The Q-independent pieces of the cost at fixed d2 and P, off-diagonal pairs only.

    ``t0 - Q`` is the logit of sigma; ``pos`` the data weights P, ``neg`` the noise weights nu * s;
    ``g`` the factor a b d^(2(b-1)) qhat turning ``f = dC/dQ`` per pair into ``dC/dd2``.
    """

    def __init__(self, d2, P, *, a, b, nu, corrected, noise=None):
        d2 = np.maximum(np.asarray(d2, dtype=np.float64), 0.0)
        P = np.asarray(P, dtype=np.float64)
        n = d2.shape[0]
        self.n = n
        rows = P.sum(axis=1) if noise is None else np.asarray(noise, dtype=np.float64)
        self.off = ~np.eye(n, dtype=bool)
        pb = d2**b
        log_qhat = -np.log1p(a * pb)
        self.log_qhat = log_qhat
        with np.errstate(divide="ignore", invalid="ignore"):
            # a b d^(2(b-1)) qhat, written as a b d^(2b) qhat / d^2: zero at d = 0 (no force there)
            self.g = np.where(d2 > 0.0, a * b * pb * np.exp(log_qhat) / d2, 0.0)
            if corrected:
                log_nu_pi = math.log(nu) + np.log(rows / (n - 1))[:, None]
            else:
                log_nu_pi = math.log(nu) - math.log(n * (n - 1.0))
        self.t0 = log_qhat - log_nu_pi  # inf on the rows of a corrected, empty-row P (no weight)
        self.pos = np.where(self.off, P, 0.0)
        self.neg = np.where(self.off, (nu / (n - 1)) * rows[:, None], 0.0)
        self.pos_sum = float(self.pos.sum())
        self.neg_sum = float(self.neg.sum())
        live = self.off & ((self.pos > 0) | (self.neg > 0))
        self._t0 = self.t0[live]
        self._pos = self.pos[live]
        self._neg = self.neg[live]

    # -- the profile in Q ------------------------------------------------------------------------
    def dQ(self, Q: float) -> tuple[float, float]:
        """``dC/dQ`` and ``d2C/dQ2`` at ``Q``."""
        u = self._t0 - Q
        sig, one_minus = expit(u), expit(-u)
        F = float(np.sum(self._pos * one_minus) - np.sum(self._neg * sig))
        dF = float(np.sum((self._pos + self._neg) * sig * one_minus))
        return F, dF

    def initial_guess(self) -> float:
        """``log sum qhat - log sum P``: the root in the corrected form as nu -> infinity."""
        log_z = np.logaddexp.reduce(self.log_qhat[self.off]) if self.n > 1 else 0.0
        return float(log_z - math.log(self.pos_sum)) if self.pos_sum > 0 else float(log_z)

    def solve(self, Q0: float | None = None, tol: float = Q_TOL) -> float:
        """The unique root of ``dC/dQ`` (safeguarded Newton; bisection when Newton leaves the bracket)."""
        _check_masses(self.pos_sum, self.neg_sum)
        Q = self.initial_guess() if Q0 is None or not np.isfinite(Q0) else float(Q0)
        return newton_root(self.dQ, Q, tol)

    # -- cost and forces at fixed Q ---------------------------------------------------------------
    def evaluate(self, Q: float, *, cost=True, grad=True):
        t = self.t0 - Q
        pcost = K = None
        with np.errstate(invalid="ignore"):
            if cost:
                pair = self.pos * np.logaddexp(0.0, -t)
                pair += np.where(self.neg > 0.0, self.neg * np.logaddexp(0.0, t), 0.0)
                pair[~self.off] = 0.0
                pcost = pair.sum(axis=1)
            f = self.pos * expit(-t) - self.neg * expit(t)
        f[~self.off] = 0.0
        if grad:
            G = self.g * f
            K = 2.0 * (G + G.T)
        return pcost, K, float(f.sum())


def _check_masses(pos_sum, neg_sum):
    if not (pos_sum > 0 and neg_sum > 0):
        raise ValueError("the NCE normaliser needs positive data and noise mass (P must not be "
                         "zero)")


def newton_root(dQ, Q: float, tol: float = Q_TOL) -> float:
    """The unique root of an increasing ``dC/dQ`` from ``Q`` (safeguarded Newton; bisection when
    Newton leaves the bracket); ``dQ(Q)`` gives ``dC/dQ`` and ``d2C/dQ2`` (the dense engine's
    :class:`_Pairs`, or an engine's pass over the pairs)."""
    lo, hi = -np.inf, np.inf
    expand = 1.0
    for _ in range(_MAX_NEWTON):
        F, dF = dQ(Q)
        if F == 0.0:
            return Q
        if F > 0.0:
            hi = Q
        else:
            lo = Q
        if hi - lo <= tol:
            return 0.5 * (lo + hi)
        step = F / dF if dF > 0.0 else np.inf
        if abs(step) < tol:  # converged (the step may not even change Q in floating point)
            return Q - step
        step = float(np.clip(step, -_MAX_STEP, _MAX_STEP)) if np.isfinite(step) else None
        new = None if step is None else Q - step
        if new is None or not (lo < new < hi):
            if np.isfinite(lo) and np.isfinite(hi):
                new = 0.5 * (lo + hi)
            else:  # one side still open: move towards it in growing steps
                new = Q + expand if F < 0.0 else Q - expand
                expand *= 2.0
        if abs(new - Q) < tol:
            return new
        Q = new
    return Q if not (np.isfinite(lo) and np.isfinite(hi)) else 0.5 * (lo + hi)


def profile_logz(state, dQ, guess, pos_sum: float, neg_sum: float) -> float:
    """``Q*``, the root of ``dQ`` (:func:`newton_root`), warm-started from ``state.data["Q"]`` (else
    from ``guess()``) and kept there and as ``"logZ"``; ``pos_sum``, ``neg_sum``: the data and
    noise masses (both must be positive)."""
    _check_masses(pos_sum, neg_sum)
    Q0 = state.data.get("Q")
    Q = guess() if Q0 is None or not np.isfinite(Q0) else float(Q0)
    Q = newton_root(dQ, Q)
    state.data["Q"] = state.data["logZ"] = Q  # "Q" warm-starts the next solve
    return Q


def nce_terms(d2, P, Q, *, a, b, nu, corrected, noise=None):
    """NCVis's expected NCE cost at fixed log-normaliser ``Q``.

    Parameters
    ----------
    d2 : (n, n) squared output distances
    P : (n, n) data distribution over ordered pairs (diagonal ignored)
    Q : log-normaliser, ``q_ij = exp(-Q) / (1 + a d_ij^(2b))``
    a, b : output curve; nu : noise pairs per data pair
    corrected : model noise density ``s_ij`` (True) or the constant ``1/(n(n-1))`` (False)
    noise : (n,) row masses defining the noise distribution ``s_ij = noise_i / (n - 1)``; the row
        sums of ``P`` when None (pass the unexaggerated row sums when P is exaggerated)

    Returns
    -------
    pcost : (n,) per-point costs (row sums over j)
    K : (n, n) symmetric stiffness, ``dC/dy_i = sum_j K_ij (y_i - y_j)``
    dC_dQ : float
    """
    pairs = _Pairs(d2, P, a=a, b=b, nu=nu, corrected=corrected, noise=noise)
    return pairs.evaluate(float(Q))


def solve_logz(d2, P, *, a, b, nu, corrected, noise=None, Q0=None) -> float:
    """``Q*`` = argmin over Q of the NCE cost at these distances (the root of ``dC/dQ``)."""
    pairs = _Pairs(d2, P, a=a, b=b, nu=nu, corrected=corrected, noise=noise)
    return pairs.solve(Q0)


class NCVis(Method):
    """Expected NCE loss with the log-normaliser profiled out (``Q = Q*(Y)``)."""

    default_init = "power"

    def perplexity(self):
        return self.params["n_neighbors"]

    def _check_k(self, n):
        k = self.params["n_neighbors"]
        if k > n - 1:
            raise ValueError(f"method {self.name!r}: parameter 'n_neighbors' must be a whole number "
                             f"in [1, n - 1] = [1, {n - 1}] for {n} points; got {k}")

    def stochastic_plan(self):
        """The reference NCVis SGD: 50 epochs, power-iteration init (docs/methods.md#ncvis)."""
        p = self.params
        return StochasticPlan("nce", a=p["a"], b=p["b"], epochs="ncvis", init="power",
                              options={k: p[k] for k in ("noise_ratio", "noise_plan", "alpha_Q",
                                                         "corrected")})

    def prepare_sparse(self, data, **kw):
        self._check_k(data.n)
        return super().prepare_sparse(data, **kw)

    def prepare(self, data, *, extras=frozenset()):
        self._check_k(data.n)
        state = super().prepare(data, extras=extras)
        state.data["row_mass"] = np.asarray(state.P.sum(axis=1), dtype=np.float64).ravel()
        return state

    def _pairs(self, d2, state, exaggeration):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        p = self.params
        return _Pairs(d2, P, a=p["a"], b=p["b"], nu=p["noise_ratio"], corrected=p["corrected"],
                      noise=state.data["row_mass"])

    def _profile(self, pairs, state):
        return profile_logz(state, pairs.dQ, pairs.initial_guess, pairs.pos_sum, pairs.neg_sum)

    def pair_form(self, state):
        """The fused exact engine's description: the expected NCE cost with UMAP's curve, the
        noise ratio and the noise model; its normaliser is profiled with :func:`profile_logz`."""
        p = self.params
        return PairForm("nce", weight="umap", a=p["a"], b=p["b"], eps=self.eps,
                        params=(float(p["noise_ratio"]), bool(p["corrected"])))

    def terms(self, d2, state, exaggeration, *, cost, grad):
        pairs = self._pairs(d2, state, exaggeration)
        Q = self._profile(pairs, state)
        pcost, K, _ = pairs.evaluate(Q, cost=cost, grad=grad)
        return pcost, K

    def export(self, state, name, Y):
        if name in ("Q", "logZ"):
            pairs = self._pairs(squared_distances(Y), state, 1.0)
            Q = self._profile(pairs, state)
            if name == "logZ":
                return Q
            q = np.exp(pairs.log_qhat - Q)
            np.fill_diagonal(q, 0.0)
            return q
        return super().export(state, name, Y)


def _whole(name, value, lo):
    v = check_range("ncvis", name, value, lo)
    if isinstance(value, bool) or v != int(v):
        raise ValueError(f"method 'ncvis': parameter {name!r} must be a whole number >= {lo}; "
                         f"got {value!r}")
    return int(v)


def ncvis(n_neighbors=15, noise_ratio=5, spread=1.0, min_dist=0.4, corrected=False, alpha_Q=1.0,
          noise_plan="cubic", n_init_epochs=20, eps=EPS):
    from .umap_curve import umap_ab

    n_neighbors = _whole("n_neighbors", n_neighbors, 1)
    noise_ratio = _whole("noise_ratio", noise_ratio, 1)
    spread = check_range("ncvis", "spread", spread, 0.0, lo_open=True)
    min_dist = check_range("ncvis", "min_dist", min_dist, 0.0)
    alpha_Q = check_range("ncvis", "alpha_Q", alpha_Q, 0.0, lo_open=True)
    n_init_epochs = _whole("n_init_epochs", n_init_epochs, 0)
    eps = check_range("ncvis", "eps", eps, 0.0)
    if not isinstance(corrected, (bool, np.bool_)) and corrected not in (0, 1):
        raise ValueError(f"method 'ncvis': parameter 'corrected' must be True or False; "
                         f"got {corrected!r}")
    try:
        noise_plan = match_name(noise_plan, NOISE_PLANS, "noise plan")
    except InvalidNameError as err:
        raise InvalidNameError(f"method 'ncvis': parameter 'noise_plan': {err}") from None
    a, b = umap_ab(spread, min_dist)
    recipe = affinity_recipe("knn", "umap", row_normalize=False, normalize=True)
    return NCVis(recipe=recipe, n_neighbors=n_neighbors, noise_ratio=noise_ratio, spread=spread,
                 min_dist=min_dist, corrected=bool(corrected), alpha_Q=alpha_Q,
                 noise_plan=noise_plan, n_init_epochs=n_init_epochs, a=a, b=b, eps=eps)


SPECS = [
    MethodSpec("ncvis", "ncvis", "NCVis: noise-contrastive estimation of a binary kNN graph with "
               "UMAP's curve and a learned normaliser, exact expected cost (Artemenkov & Panov 2020)",
               dict(n_neighbors=15, noise_ratio=5, spread=1.0, min_dist=0.4, corrected=False,
                    alpha_Q=1.0, noise_plan="cubic", n_init_epochs=20, eps=EPS), ncvis,
               neighbour_param="n_neighbors",
               fd_variants=(dict(corrected=True), dict(noise_ratio=1), dict(noise_ratio=10),
                            dict(min_dist=0.1), dict(corrected=True, noise_ratio=10, min_dist=0.1))),
]
