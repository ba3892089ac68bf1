"""ft-SNE: t-SNE with other f-divergences between P and Q (Im, Verma & Branson 2018, "Stochastic
neighbor embedding under f-divergences", arXiv:1811.01247; docs/methods.md#f-divergences).

All four use the t-SNE affinities P and :math:`Q = W / Z` with Student-t weights, and a gradient
of the form :math:`K = c\\, Q \\circ W \\circ F` (using :math:`Q^2 Z = Q W`):

- rklsne, reverse KL: :math:`C = \\sum Q \\log(Q/P)`, :math:`cF = 4 (C - \\log(Q/P))`.
- jssne, Jensen-Shannon with :math:`M = (P + Q)/2`:
  :math:`C = \\tfrac12 \\mathrm{KL}(P\\|M) + \\tfrac12 \\mathrm{KL}(Q\\|M)`,
  :math:`cF = 2 (\\sum Q \\log(Q/M) - \\log(Q/M))`.
- chsne, chi-squared: :math:`C = \\sum (P - Q)^2 / Q`, :math:`cF = 4 (P^2/Q^2 - \\sum P^2/Q)`.
- hlsne, Hellinger: :math:`C = \\sum (\\sqrt P - \\sqrt Q)^2`,
  :math:`cF = 4 (\\sqrt{P/Q} - \\sum \\sqrt{PQ})`.

Per-point costs are column sums. Logs, ratios and powers follow the original's diagonal
conventions (:mod:`.elementwise`); the reverse KL takes :math:`\\log \\max(P, \\epsilon)`.
Where the f-divergence note and the original differ, the original's formulas are used.
"""

from __future__ import annotations

import numpy as np

from ..io.distances import squared_distances
from .kernels import StudentT
from .base import EPS, Method, MethodSpec, PairForm, StepRule, affinity_recipe
from .divergences import plogp_constant
from .elementwise import divm, logm


class FDivergenceEmbedding(Method):
    """Student-t Q against symmetric P under one of the f-divergences below."""

    def __init__(self, *, divergence, **params):
        super().__init__(**params)
        self.divergence = divergence
        self.kernel = StudentT()

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        W = self.kernel.weights(d2)
        Q = W / W.sum()
        pcost, F = self.divergence(self, P, Q, state, exaggeration)
        K = Q * W * F if grad else None
        return (pcost if cost else None), K

    def pair_form(self, state):
        """The fused exact engine's description (a symmetric P only)."""
        if self.recipe.symmetrize == "none" or self.recipe.renormalize_rows:
            return None
        return PairForm(PAIR_NAMES[self.divergence], eps=self.eps)

    def export(self, state, name, Y):
        if name == "Q":
            W = self.kernel.weights(squared_distances(Y))
            return W / W.sum()
        return super().export(state, name, Y)


def reverse_kl(m, P, Q, state, f):
    logP = state.cached("logPc", f, lambda: logm(np.maximum(P, m.eps)))
    L = logm(Q) - logP
    pcost = np.sum(Q * L, axis=0)
    return pcost, 4.0 * (pcost.sum() - L)


def jensen_shannon(m, P, Q, state, f):
    M = 0.5 * (P + Q)
    L = logm(divm(Q, M))
    kq = np.sum(Q * L, axis=0)
    const = state.cached("plogp", f, lambda: plogp_constant(P, m.eps))
    pcost = 0.5 * (const + kq - np.sum(P * logm(M), axis=0))
    return pcost, 2.0 * (kq.sum() - L)


def chi_squared(m, P, Q, state, f):
    inv_q = divm(np.ones_like(Q), Q)
    pcost = np.sum((P - Q) ** 2 * inv_q, axis=0)
    return pcost, 4.0 * (P * P * inv_q * inv_q - np.sum(P * P * inv_q))


def hellinger(m, P, Q, state, f):
    sqrt_p, sqrt_q = np.sqrt(P), np.sqrt(Q)
    pcost = np.sum((sqrt_p - sqrt_q) ** 2, axis=0)
    return pcost, 4.0 * (divm(sqrt_p, sqrt_q) - np.sum(sqrt_p * sqrt_q))


# the fused exact engine's names of the divergences
PAIR_NAMES = {reverse_kl: "rklsne", jensen_shannon: "jssne", chi_squared: "chsne",
              hellinger: "hlsne"}


def _factory(divergence, fixed_symmetrize=None):
    def factory(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS):
        recipe = affinity_recipe(inp_kernel, fixed_symmetrize or symmetrize, normalize=True)
        return FDivergenceEmbedding(recipe=recipe, divergence=divergence, perplexity=perplexity,
                                    inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize,
                                    eps=eps)

    return factory


def hlsne(perplexity=30.0, inp_kernel="gaussian", eps=EPS):
    """Hellinger ft-SNE; the original always uses the "symmetric" symmetrisation."""
    return _factory(hellinger, "symmetric")(perplexity, inp_kernel, eps=eps)


_PARAMS = dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS)

# rklsne and chsne: forces on far pairs grow with 1 / Q, so a smaller step than t-SNE's, not
# scaled with n
_FAR_PAIR_STEP = StepRule(10.0, "constant")

SPECS = [
    MethodSpec("rklsne", "f-divergence", "Reverse-KL t-SNE: KL(Q||P) (Im et al. 2018)",
               dict(_PARAMS), _factory(reverse_kl), step=_FAR_PAIR_STEP),
    MethodSpec("jssne", "f-divergence", "Jensen-Shannon t-SNE: JS(P, Q) (Im et al. 2018)",
               dict(_PARAMS), _factory(jensen_shannon)),
    MethodSpec("chsne", "f-divergence", "Chi-squared t-SNE: sum (P - Q)^2 / Q (Im et al. 2018)",
               dict(_PARAMS), _factory(chi_squared), step=_FAR_PAIR_STEP),
    MethodSpec("hlsne", "f-divergence", "Hellinger t-SNE: sum (sqrt P - sqrt Q)^2 "
               "(Im et al. 2018)", dict(perplexity=30.0, inp_kernel="gaussian", eps=EPS), hlsne),
]
