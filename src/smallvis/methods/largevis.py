"""LargeVis (Tang, Liu, Zhang & Mei 2016, "Visualizing large-scale and high-dimensional data", WWW;
docs/methods.md#largevis).

LargeVis maximises the likelihood of the input graph's edges under output weights ``w`` with
``gamma``-weighted "negative" (non-edge) terms, with no normaliser:

.. math::
    C = -\\sum_{ij} P_{ij} \\log w_{ij} - \\gamma \\sum_{ij} \\log(1 - w_{ij} + \\epsilon),
    \\qquad K = 4 \\left(P \\circ g - \\gamma\\, r\\right)

with :math:`g = -\\partial \\log w / \\partial d^2` and the repulsion :math:`r = g w / (1 - w)`,
whose singularity at :math:`d \\to 0` is softened by ``gr_eps`` as in the original:

========================  ==========================  ======================  =================================
``out_kernel``            :math:`w`                   :math:`g`               :math:`r`
========================  ==========================  ======================  =================================
``"t"`` (default)         :math:`1/(1 + d^2)`         :math:`w`               :math:`w / (d^2 + \\epsilon_{gr})`
``"cauchy"`` (``alpha``)  :math:`1/(1 + \\alpha d^2)`  :math:`\\alpha w`        :math:`w / (d^2 + \\epsilon_{gr})`
``"exp"``                 :math:`1/(1 + e^{d^2})`     :math:`1 - w`           :math:`w`
========================  ==========================  ======================  =================================

``gr_form="1-w"`` instead adds ``gr_eps`` to :math:`1 - w` in :math:`r = g w / (1 - w)`, as the
original's earlier LargeVis did (its published results, with ``gamma = 7, normalize = False``, use
it). The alternative weights are the ones the LargeVis paper also tried (besides the
t-kernel). P is the t-SNE affinity (row-normalised, or rows scaled to ``row_weight``; symmetrised;
matrix-normalised when ``normalize``). The force is the exact gradient of the cost for
``gr_eps = 0`` (and any ``gr_eps`` with ``out_kernel="exp"``).

With ``engine="sgd"`` (t and Cauchy weights) largevis runs as the real LargeVis does: Gaussian
affinities on the ``3 * perplexity`` nearest neighbours, edges sampled in proportion to P, uniform
negative samples with the engine's ``repulsion_strength`` (default 7, LargeVis's gamma; the exact
cost's ``gamma`` weighs all n^2 pairs and is not used there).
"""

from __future__ import annotations

import numpy as np

from .._util.names import match_name
from ..io.distances import squared_distances
from .base import (EPS, Method, MethodSpec, PairForm, StepRule, StochasticPlan, affinity_recipe,
                   check_range)

OUT_KERNELS = ("t", "cauchy", "exp")
GR_FORMS = ("d2", "1-w")


class LargeVis(Method):
    """Edge likelihood with gamma-weighted negative terms and un-normalised output weights."""

    def weights(self, d2):
        kind, alpha = self.params["out_kernel"], self.params["alpha"]
        if kind == "exp":
            # 1 / (1 + e^d2) without overflow; log(1 - w) = -log(1 + e^-d2)
            W = np.exp(-np.logaddexp(0.0, d2))
        else:
            W = 1.0 / (1.0 + (alpha if kind == "cauchy" else 1.0) * d2)
        np.fill_diagonal(W, 0.0)
        return W

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        kind, gamma = self.params["out_kernel"], self.params["gamma"]
        W = self.weights(d2)
        pcost = K = None
        if cost:
            if kind == "exp":
                neg_log_w = np.logaddexp(0.0, d2)
                one_minus_w = np.exp(-np.logaddexp(0.0, -d2))
            else:
                scale = self.params["alpha"] if kind == "cauchy" else 1.0
                neg_log_w = np.log1p(scale * d2)
                one_minus_w = 1.0 - W
            np.fill_diagonal(neg_log_w, 0.0)
            pair = P * neg_log_w - gamma * np.log(one_minus_w + self.eps)
            np.fill_diagonal(pair, 0.0)
            pcost = pair.sum(axis=0)
        if grad:
            if kind == "exp":
                K = 4.0 * (P * (1.0 - W) - gamma * W)
            else:
                g = W * (self.params["alpha"] if kind == "cauchy" else 1.0)
                gr_eps = self.params["gr_eps"]
                if self.params["gr_form"] == "1-w":  # the original's earlier LargeVis
                    repulsion = g * W / (1.0 - W + gr_eps)
                elif kind == "t":  # the original's arrangement of w / (d2 + gr_eps)
                    repulsion = W * W / (1.0 + (gr_eps - 1.0) * W)
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):  # the diagonal, zeroed below
                        repulsion = W / (d2 + gr_eps)
                K = 4.0 * (P * g - gamma * repulsion)
            np.fill_diagonal(K, 0.0)
        return pcost, K

    def pair_form(self, state):
        """The fused exact engine's description (a symmetric P only)."""
        if self.recipe.symmetrize == "none" or self.recipe.renormalize_rows:
            return None
        kind = self.params["out_kernel"]
        return PairForm("largevis", weight={"t": "t", "cauchy": "cauchy", "exp": "logistic"}[kind],
                        a=self.params["alpha"] if kind == "cauchy" else 1.0,
                        gamma=self.params["gamma"], gr_eps=self.params["gr_eps"],
                        gr_form=self.params["gr_form"], eps=self.eps)

    def stochastic_plan(self):
        """The real LargeVis's SGD: repulsion weight 7, softening 0.1 (t and scaled Cauchy weights)."""
        if self.params["out_kernel"] == "exp":
            return None
        alpha = self.params["alpha"] if self.params["out_kernel"] == "cauchy" else 1.0
        return StochasticPlan("umap", a=alpha, b=1.0, repulsion=7.0, gr_eps=0.1)

    def export(self, state, name, Y):
        if name == "W":
            return self.weights(squared_distances(Y))
        return super().export(state, name, Y)


def largevis(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", gamma=1.0,
             gr_eps=0.1, normalize=True, row_weight=None, out_kernel="t", alpha=1.0,
             gr_form="d2", eps=1e-9):
    gamma = check_range("largevis", "gamma", gamma, 0.0)
    gr_eps = check_range("largevis", "gr_eps", gr_eps, 0.0)
    alpha = check_range("largevis", "alpha", alpha, 0.0, lo_open=True)
    if row_weight is not None:
        row_weight = check_range("largevis", "row_weight", row_weight, 0.0, lo_open=True)
    out_kernel = match_name(out_kernel, OUT_KERNELS, "largevis output kernel")
    gr_form = match_name(gr_form, GR_FORMS, "largevis gr_form")
    recipe = affinity_recipe(inp_kernel, symmetrize,
                             row_normalize=True if row_weight is None else row_weight,
                             normalize=bool(normalize))
    return LargeVis(recipe=recipe, perplexity=perplexity, inp_kernel=recipe.kernel,
                    symmetrize=recipe.symmetrize, gamma=gamma, gr_eps=gr_eps,
                    normalize=bool(normalize), row_weight=row_weight, out_kernel=out_kernel,
                    alpha=alpha, gr_form=gr_form, eps=eps)


def _gamma_per_point(n: int, given: dict) -> dict:
    """A side-by-side run's ``gamma = 1 / n``. The default P is normalised (it sums to 1) while the
    repulsion ``gamma`` weighs all n^2 pairs, so the default ``gamma = 1`` lets repulsion win by a
    factor of about n: every dataset becomes a uniform disc (kNN@15 0.48 on iris, 0.04 on s1k; with
    ``gamma = 1 / n``, 0.79 and 0.27, against t-SNE's 0.81 and 0.41). Not with ``normalize=False``."""
    return {"gamma": 1.0 / n} if given.get("normalize", True) else {}


SPECS = [
    MethodSpec("largevis", "largevis", "LargeVis: edge likelihood with gamma-weighted negative "
               "terms, un-normalised Student-t weights (Tang et al. 2016)",
               dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", gamma=1.0,
                    gr_eps=0.1, normalize=True, row_weight=None, out_kernel="t", alpha=1.0,
                    gr_form="d2", eps=1e-9), largevis,
               fd_base=dict(gr_eps=0.0, eps=EPS),
               fd_variants=(dict(gamma=7.0), dict(normalize=False), dict(gr_form="1-w"),
                            dict(out_kernel="cauchy", alpha=3.0),
                            dict(out_kernel="exp", gr_eps=0.1), dict(out_kernel="exp", gamma=0.1)),
               step=StepRule(1.0, "constant", params=_gamma_per_point)),
]
