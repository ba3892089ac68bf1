"""NeRV and Jensen-Shannon embedding: mixtures of the forward and reverse KL divergence with Gaussian
output probabilities (docs/methods.md#nerv-and-jse).

NeRV (Venna, Peltonen, Nybo, Aidos & Kaski 2010, JMLR 11:451) trades recall for precision with
``lambda`` in [0, 1]:

.. math::
    C = \\lambda \\mathrm{KL}(P \\| Q) + (1 - \\lambda) \\mathrm{KL}(Q \\| P),\\qquad
    L = \\log(P / Q),\\quad K = c\\,[\\lambda (P - Q) + (1 - \\lambda) Q \\circ (L + \\mathrm{KL}(Q\\|P))]

JSE (Lee, Renard, Bernard-Brunel, Dupont & Verleysen 2013, Neurocomputing 112:92) uses the
generalised Jensen-Shannon divergence with ``kappa`` in [0, 1] and the mixture
:math:`M = \\kappa P + (1 - \\kappa) Q`:

.. math::
    C = \\frac{1}{1 - \\kappa} \\mathrm{KL}(P \\| M) + \\frac{1}{\\kappa} \\mathrm{KL}(Q \\| M),\\qquad
    K = -\\frac{c}{\\kappa}\\, Q \\circ (\\log(Q / M) - \\mathrm{KL}(Q \\| M))

Conditional versions (nerv, bnerv, rsrnerv, jse, rsrjse) normalise Q per row, sum costs over rows and
use ``c = 2`` with ``K + K^T``; the symmetric ones (snerv, sjse) normalise over all pairs with ``c = 4``.
Q comes from a log-sum-exp, so extreme output distances give finite costs and forces.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from ..io.distances import squared_distances
from .base import (EPS, Method, MethodSpec, MixtureForm, StepRule, affinity_recipe, check_range,
                   lambda_param)
from .elementwise import gaussian_probabilities, logm


class _GaussianMixtureDivergence(Method):
    """Shared set-up: a P recipe, Gaussian Q normalised by row or matrix, optional input bandwidths."""

    def __init__(self, *, normalisation: str, bandwidth: bool = False, **params):
        super().__init__(**params)
        self.normalisation = normalisation
        self.bandwidth = bandwidth

    def _beta(self, state):
        return self.output_bandwidths(state) if self.bandwidth else None

    def _q(self, d2, state):
        return gaussian_probabilities(d2, self.normalisation, self.eps, self._beta(state))

    def _finish(self, K, state):
        """Scale the per-row stiffness and make it act on both points of a pair."""
        beta = self._beta(state)
        if beta is not None:
            K *= beta[:, None]
        if self.normalisation == "row":
            K *= 2.0
            K += K.T.copy()
        else:
            K *= 4.0
        return K

    def _sum(self, M):
        """Per-point attribution: row sums for conditional methods, column sums for symmetric."""
        return M.sum(axis=1) if self.normalisation == "row" else M.sum(axis=0)

    def _mixture_form(self, divergence, weight):
        return MixtureForm(divergence, weight, normalisation=self.normalisation,
                           bandwidths=self.bandwidth, eps=self.eps)

    def export(self, state, name, Y):
        if name == "Q":
            return self._q(squared_distances(Y), state)[0]
        return super().export(state, name, Y)


class NeRV(_GaussianMixtureDivergence):
    """lambda KL(P||Q) + (1 - lambda) KL(Q||P); P floored at eps (the original clamps it)."""

    def mixture_form(self, state):
        return self._mixture_form("nerv", self.params["lambda"])

    def terms(self, d2, state, exaggeration, *, cost, grad):
        lam = self.params["lambda"]
        P = state.cached("P", exaggeration, lambda: np.maximum(exaggeration * state.P, self.eps))
        logP = state.cached("logP", exaggeration, lambda: logm(P))
        Q, logQ = self._q(d2, state)
        L = logP - logQ
        klrev = -self._sum(Q * L)
        pcost = K = None
        if cost:
            pcost = lam * self._sum(P * L) + (1.0 - lam) * klrev
        if grad:
            shift = klrev[:, None] if self.normalisation == "row" else klrev.sum()
            K = lam * (P - Q) + (1.0 - lam) * Q * (L + shift)
            K = self._finish(K, state)
        return pcost, K


class JSE(_GaussianMixtureDivergence):
    """Generalised Jensen-Shannon divergence with mixture weight kappa (clamped to [1e-5, 1 - 1e-5]).

    The log-ratios to the mixture are computed as ``log1p`` of small differences, so the cost keeps
    full precision at both ends, where its two terms are ``1/kappa`` or ``1/(1 - kappa)`` times a
    difference of nearly equal logarithms.
    """

    def kappa(self):
        """``kappa`` clamped to [1e-5, 1 - 1e-5] (both terms stay finite)."""
        return min(max(self.params["kappa"], 1e-5), 1.0 - 1e-5)

    def mixture_form(self, state):
        return self._mixture_form("jse", self.kappa())

    def terms(self, d2, state, exaggeration, *, cost, grad):
        eps = self.eps
        kappa = self.kappa()
        P = exaggeration * state.P
        Q, logQ = self._q(d2, state)
        M = kappa * P + (1.0 - kappa) * Q
        floored = M < eps
        np.fill_diagonal(floored, False)
        Qd = Q.copy()
        np.fill_diagonal(Qd, 1.0)
        L = -np.log1p(kappa * (P / Qd - 1.0))  # log(Q / M)
        L[floored] = logQ[floored] - np.log(eps)
        np.fill_diagonal(L, 0.0)
        kq = self._sum(Q * L)
        pcost = K = None
        if cost:
            const = state.cached("plogp-excess", exaggeration, lambda: self._plogp_excess(P))
            big = P >= eps
            Pd = np.where(big, P, 1.0)
            log_mp = np.where(big, np.log1p((1.0 - kappa) * (Q / Pd - 1.0)), 0.0)  # log(M / P)
            tiny = ~big & (P > 0)
            log_mp[tiny] = np.log(np.maximum(M[tiny], eps)) - np.log(P[tiny])
            log_mp[floored & big] = np.log(eps) - np.log(P[floored & big])
            np.fill_diagonal(log_mp, 0.0)
            pcost = (const - self._sum(P * log_mp)) / (1.0 - kappa) + kq / kappa
        if grad:
            shift = kq[:, None] if self.normalisation == "row" else kq.sum()
            K = -(Q * (L - shift)) / kappa
            K = self._finish(K, state)
        return pcost, K

    def _plogp_excess(self, P):
        """Per-point ``sum P_c log P_c - sum P log P`` (non-zero only where P < eps)."""
        Pc = np.maximum(P, self.eps)
        return self._sum(Pc * np.log(Pc) - xlogy(P, P))


def _lambda(method: str, params: dict, default: float) -> float:
    return check_range(method, "lambda", lambda_param(params, default), 0.0, 1.0)


def _nerv_factory(name, normalisation, bandwidth=False, **recipe_args):
    def factory(perplexity=30.0, inp_kernel="gaussian", eps=EPS, beta=None, **params):
        lam = _lambda(name, params, 0.9)
        if beta is not None:
            beta = check_range(name, "beta", beta, 0.0, lo_open=True)
        recipe = affinity_recipe(inp_kernel, **recipe_args)
        return NeRV(recipe=recipe, normalisation=normalisation, bandwidth=bandwidth,
                    perplexity=perplexity, inp_kernel=recipe.kernel, eps=eps,
                    **{"lambda": lam}, **({"beta": beta} if bandwidth else {}))

    return factory


def _jse_factory(name, normalisation, **recipe_args):
    def factory(perplexity=30.0, kappa=0.5, inp_kernel="gaussian", eps=EPS):
        kappa = check_range(name, "kappa", kappa, 0.0, 1.0)
        recipe = affinity_recipe(inp_kernel, **recipe_args)
        return JSE(recipe=recipe, normalisation=normalisation, perplexity=perplexity,
                   kappa=kappa, inp_kernel=recipe.kernel, eps=eps)

    return factory


_SYMMETRIC = dict(symmetrize="symmetric", normalize=True)
_RSR = dict(symmetrize="average", rsr=True)
_NERV = {"perplexity": 30.0, "lambda": 0.9, "inp_kernel": "gaussian", "eps": EPS}
_JSE = dict(perplexity=30.0, kappa=0.5, inp_kernel="gaussian", eps=EPS)
_LAMBDAS = tuple({"lambda": v} for v in (0.0, 0.5, 1.0))
_KAPPAS = tuple(dict(kappa=v) for v in (0.0, 1e-4, 0.999, 1.0))

# step sizes for side-by-side runs (Gaussian output kernels: smaller than t-SNE's)
_STEP = StepRule(0.1, "matrix")
_CONDITIONAL_STEP = StepRule(0.1, "constant")

SPECS = [
    MethodSpec("nerv", "nerv", "NeRV: lambda KL(P||Q) + (1-lambda) KL(Q||P), conditional P and Q "
               "(Venna et al. 2010)", dict(_NERV), _nerv_factory("nerv", "row"),
               fd_variants=_LAMBDAS, step=_CONDITIONAL_STEP),
    MethodSpec("snerv", "nerv", "Symmetric NeRV: symmetric P, matrix-normalised Gaussian Q",
               dict(_NERV), _nerv_factory("snerv", "matrix", **_SYMMETRIC), fd_variants=_LAMBDAS,
               step=_STEP),
    MethodSpec("bnerv", "nerv", "NeRV with input bandwidths in the output kernel, as in Venna et "
               "al.'s original", {**_NERV, "beta": None}, _nerv_factory("bnerv", "row", True),
               fd_variants=({"lambda": 0.0}, {"beta": 2.0}), step=StepRule(1e-3, "constant")),
    MethodSpec("rsrnerv", "nerv", "NeRV with the RSR P (row-normalise, symmetrise, row-normalise)",
               dict(_NERV), _nerv_factory("rsrnerv", "row", **_RSR), step=_CONDITIONAL_STEP),
    MethodSpec("jse", "nerv", "Jensen-Shannon embedding: KL to the mixture kappa P + (1-kappa) Q "
               "(Lee et al. 2013)", dict(_JSE), _jse_factory("jse", "row"), fd_variants=_KAPPAS,
               step=_CONDITIONAL_STEP),
    MethodSpec("sjse", "nerv", "Symmetric JSE: symmetric P, matrix-normalised Gaussian Q",
               dict(_JSE), _jse_factory("sjse", "matrix", **_SYMMETRIC), fd_variants=_KAPPAS,
               step=_STEP),
    MethodSpec("rsrjse", "nerv", "JSE with the RSR P (row-normalise, symmetrise, row-normalise)",
               dict(_JSE), _jse_factory("rsrjse", "row", **_RSR), step=_CONDITIONAL_STEP),
]
