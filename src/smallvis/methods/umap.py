"""UMAP and its relatives, exact-gradient versions (docs/methods.md#umap-and-hybrids).

UMAP (McInnes, Healy & Melville 2018, arXiv:1802.03426) matches the fuzzy union ``P`` of smooth-kNN
memberships to output weights :math:`w = 1/(1 + a d^{2b})` by the fuzzy-set cross-entropy

.. math::
    C = \\sum_{ij} \\left[-P_{ij} \\log w_{ij} - (1 - P_{ij}) \\log(1 - w_{ij})\\right] + C_P,\\qquad
    K = \\frac{4 b (P - W)}{d^2 + \\epsilon_{gr}}

(no normaliser; :math:`C_P` makes the cost zero at :math:`W = P`). Relatives built from the same
pieces:

- **tumap**: the Student-t weight :math:`w = 1/(1 + d^2)`:
  :math:`K = 4 W \\circ (P - W) / (1 - W + \\epsilon_{gr})`.
- **ntumap**: normalised t-UMAP: matrix-normalised P and :math:`Q = W / \\sum W` in the cross-entropy;
  with :math:`C = (P - Q) / (1 - Q)`, :math:`K = 4 W \\circ (C - Q \\sum C)`.
- **cetsne**: the same normalised cross-entropy with t-SNE's affinities.
- **skdtsne**: t-SNE (KL) with UMAP's affinities (smooth kNN, fuzzy union, normalised).
- **usne**: t-SNE's affinities and KL with UMAP's output curve,
  :math:`K = 4 b (1 - W) / (d^2 + \\epsilon_{gr}) \\circ (P - Q)`.

``eps`` guards the logarithms (``log(w + eps)``, ``log(1 - w + eps)``); ``gr_eps`` softens the
forces at short distances (all forces are exact gradients for ``gr_eps = 0``).
"""

from __future__ import annotations

import numpy as np

from ..io.distances import squared_distances
from .kernels import OutputKernel, StudentT, UMAPCurve
from .base import (EPS, Method, MethodSpec, PairForm, StepRule, StochasticPlan, affinity_recipe,
                   check_range)
from .elementwise import logm
from .sne import KLEmbedding


def _umap_ab(spread, min_dist):
    from .umap_curve import umap_ab

    return umap_ab(spread, min_dist)


def _cross_entropy_constant(P, eps, clamp):
    """Per-point ``sum P log P + (1 - P) log(1 - P)``: with ``+ eps`` inside the logs (UMAP's form) or
    with P clamped to ``[eps, ...]`` (cetsne's)."""
    if clamp:
        Pc = np.maximum(P, eps)
        return np.sum(Pc * np.log(Pc) + (1.0 - Pc) * np.log1p(-Pc), axis=0)
    return np.sum(P * np.log(P + eps) + (1.0 - P) * np.log1p(-P + eps), axis=0)


class FuzzyCrossEntropy(Method):
    """UMAP's cross-entropy between P and un-normalised output weights (umap, tumap)."""

    def __init__(self, *, kernel: OutputKernel, **params):
        super().__init__(**params)
        self.kernel = kernel

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        eps, gr_eps = self.eps, self.params["gr_eps"]
        W = self.kernel.weights(d2)
        pcost = K = None
        if cost:
            const = state.cached("cp", exaggeration,
                                 lambda: _cross_entropy_constant(P, eps, clamp=False))
            pcost = const - np.sum(P * np.log(W + eps) + (1.0 - P) * np.log1p(-W + eps), axis=0)
        if grad:
            if isinstance(self.kernel, UMAPCurve):
                K = 4.0 * self.kernel.b * (P - W) / (np.maximum(d2, 0.0) + eps + gr_eps)
            else:
                K = 4.0 * W * (P - W) / (1.0 - W + eps + gr_eps)
            np.fill_diagonal(K, 0.0)
        return pcost, K

    def pair_form(self, state):
        """The fused exact engine's description (a symmetric P only)."""
        if self.recipe.symmetrize == "none" or self.recipe.renormalize_rows:
            return None
        if isinstance(self.kernel, UMAPCurve):
            return PairForm("umap", weight="umap", a=self.kernel.a, b=self.kernel.b,
                            gr_eps=self.params["gr_eps"], eps=self.eps)
        return PairForm("umap", weight="t", gr_eps=self.params["gr_eps"], eps=self.eps)

    def stochastic_plan(self):
        """umap-learn's SGD: these weights, repulsion 1, softening 0.001."""
        a, b = (self.kernel.a, self.kernel.b) if isinstance(self.kernel, UMAPCurve) else (1.0, 1.0)
        return StochasticPlan("umap", a=a, b=b, repulsion=1.0, gr_eps=0.001)

    def export(self, state, name, Y):
        if name == "W":
            return self.kernel.weights(squared_distances(Y))
        return super().export(state, name, Y)


class NormalisedCrossEntropy(Method):
    """The cross-entropy with ``Q = W / sum W`` (ntumap, cetsne)."""

    def __init__(self, *, clamp_constant: bool, **params):
        super().__init__(**params)
        self.clamp_constant = clamp_constant
        self.kernel = StudentT()

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        W = self.kernel.weights(d2)
        Q = W / W.sum()
        pcost = K = None
        if cost:
            const = state.cached("cp", exaggeration, lambda: _cross_entropy_constant(
                P, self.eps, clamp=self.clamp_constant))
            pcost = const - np.sum(P * logm(Q) + (1.0 - P) * np.log1p(-Q + self.eps), axis=0)
        if grad:
            C = (P - Q) / (1.0 - Q)
            K = 4.0 * W * (C - C.sum() * Q)
        return pcost, K

    def pair_form(self, state):
        """The fused exact engine's description (a symmetric P only): divergence ``"ntumap"``, or
        ``"cetsne"`` for the constant with P floored at eps."""
        if self.recipe.symmetrize == "none" or self.recipe.renormalize_rows:
            return None
        return PairForm("cetsne" if self.clamp_constant else "ntumap", weight="t", eps=self.eps)

    def export(self, state, name, Y):
        if name == "Q":
            W = self.kernel.weights(squared_distances(Y))
            return W / W.sum()
        return super().export(state, name, Y)


def _check(name, spread, min_dist, gr_eps, row_weight=None):
    check_range(name, "spread", spread, 0.0, lo_open=True)
    check_range(name, "min_dist", min_dist, 0.0)
    check_range(name, "gr_eps", gr_eps, 0.0)
    if row_weight is not None:
        check_range(name, "row_weight", row_weight, 0.0, lo_open=True)


def _umap_recipe(inp_kernel, symmetrize, row_weight, normalize=False):
    return affinity_recipe(inp_kernel, symmetrize,
                           row_normalize=False if row_weight is None else row_weight,
                           normalize=normalize)


def umap(perplexity=30.0, inp_kernel="skd", symmetrize="umap", spread=1.0, min_dist=0.001,
         gr_eps=0.1, row_weight=None, eps=1e-9):
    _check("umap", spread, min_dist, gr_eps, row_weight)
    a, b = _umap_ab(spread, min_dist)
    recipe = _umap_recipe(inp_kernel, symmetrize, row_weight)
    return FuzzyCrossEntropy(recipe=recipe, kernel=UMAPCurve(a, b, gr_eps), perplexity=perplexity,
                             inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, spread=spread,
                             min_dist=min_dist, gr_eps=gr_eps, row_weight=row_weight, a=a, b=b,
                             eps=eps)


def tumap(perplexity=30.0, inp_kernel="skd", symmetrize="umap", gr_eps=0.1, row_weight=None,
          eps=1e-9):
    _check("tumap", 1.0, 0.0, gr_eps, row_weight)
    recipe = _umap_recipe(inp_kernel, symmetrize, row_weight)
    return FuzzyCrossEntropy(recipe=recipe, kernel=StudentT(), perplexity=perplexity,
                             inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize,
                             gr_eps=gr_eps, row_weight=row_weight, eps=eps)


def ntumap(perplexity=30.0, inp_kernel="skd", symmetrize="umap", row_weight=None, eps=1e-9):
    _check("ntumap", 1.0, 0.0, 0.0, row_weight)
    recipe = _umap_recipe(inp_kernel, symmetrize, row_weight, normalize=True)
    return NormalisedCrossEntropy(recipe=recipe, clamp_constant=False, perplexity=perplexity,
                                  inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize,
                                  row_weight=row_weight, eps=eps)


def cetsne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS):
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    return NormalisedCrossEntropy(recipe=recipe, clamp_constant=True, perplexity=perplexity,
                                  inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, eps=eps)


def skdtsne(perplexity=30.0, symmetrize="umap", eps=EPS):
    recipe = affinity_recipe("skd", symmetrize, row_normalize=False, normalize=True)
    return KLEmbedding(recipe=recipe, kernel=StudentT(), perplexity=perplexity,
                       symmetrize=recipe.symmetrize, eps=eps)


def usne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", spread=1.0,
         min_dist=0.001, gr_eps=0.1, eps=EPS):
    _check("usne", spread, min_dist, gr_eps)
    a, b = _umap_ab(spread, min_dist)
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    return KLEmbedding(recipe=recipe, kernel=UMAPCurve(a, b, gr_eps), perplexity=perplexity,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, spread=spread,
                       min_dist=min_dist, gr_eps=gr_eps, a=a, b=b, eps=eps)


_UMAP = dict(perplexity=30.0, inp_kernel="skd", symmetrize="umap")
_EXACT = dict(gr_eps=0.0, eps=EPS)

# step size for side-by-side runs (conditional P: not scaled with n)
_STEP = StepRule(1.0, "constant")

SPECS = [
    MethodSpec("umap", "umap", "UMAP, exact gradient: fuzzy cross-entropy between smooth-kNN P and "
               "1/(1 + a d^2b) (McInnes et al. 2018)",
               dict(_UMAP, spread=1.0, min_dist=0.001, gr_eps=0.1, row_weight=None, eps=1e-9), umap,
               fd_base=_EXACT, fd_variants=(dict(min_dist=0.1), dict(spread=3.0, min_dist=0.5),
                                            dict(inp_kernel="gaussian", row_weight=2.0)),
               step=_STEP),
    MethodSpec("tumap", "umap", "t-UMAP: UMAP's cross-entropy with Student-t output weights",
               dict(_UMAP, gr_eps=0.1, row_weight=None, eps=1e-9), tumap,
               fd_base=_EXACT, step=_STEP),
    MethodSpec("ntumap", "umap", "Normalised t-UMAP: cross-entropy between normalised P and Q",
               dict(_UMAP, row_weight=None, eps=1e-9), ntumap, fd_base=dict(eps=EPS)),
    MethodSpec("cetsne", "umap", "t-SNE's P and Q with UMAP's cross-entropy instead of KL",
               dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS),
               cetsne),
    MethodSpec("skdtsne", "umap", "t-SNE with UMAP's smooth-kNN affinities (fuzzy union, "
               "normalised)", dict(perplexity=30.0, symmetrize="umap", eps=EPS), skdtsne),
    MethodSpec("usne", "umap", "t-SNE with UMAP's output curve 1/(1 + a d^2b)",
               dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", spread=1.0,
                    min_dist=0.001, gr_eps=0.1, eps=EPS), usne,
               fd_base=dict(gr_eps=0.0), fd_variants=(dict(min_dist=0.5),)),
]
