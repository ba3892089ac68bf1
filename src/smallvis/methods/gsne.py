"""g-SNE: t-SNE plus a global term (Zhou & Sharpee 2018, "Using global t-SNE to preserve
inter-cluster data structure", bioRxiv 331611; docs/methods.md#g-sne).

Besides the t-SNE affinities P and weights :math:`w = 1/(1 + d^2)`, g-SNE matches "global"
affinities :math:`\\hat P \\propto 1 + r^2` (large for far pairs) to :math:`\\hat w = 1 + d^2`:

.. math::
    C = \\mathrm{KL}(P \\| W / Z) + \\lambda\\, \\mathrm{KL}(\\hat P \\| \\hat W / \\hat Z),\\qquad
    K = 4 W \\circ \\left[(P - \\lambda \\hat P) - (W/Z - \\lambda \\hat W / \\hat Z)\\right]

``lambda = 0`` is t-SNE. :math:`\\hat P` is computed once from the input (with a distance matrix as
input, from the unsquared distances, as the original does) and is not exaggerated.
"""

from __future__ import annotations

import numpy as np

from .kernels import InverseStudentT, StudentT
from .base import EPS, FusedForm, MethodSpec, SumForm, affinity_recipe, check_range, lambda_param
from .divergences import KL, plogp_constant
from .sne import KLEmbedding


class GlobalSNE(KLEmbedding):
    """t-SNE's KL plus lambda times the KL between the global affinities and weights."""

    exact_matrices = 3.2  # P and the global affinities (see Method)

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        if data.gaussian_unsquared:
            G = data.distances() + 1.0
        else:  # the squared distances are the run's own array: reused in place
            G = data.squared_distances()
            data.release("D2")
            G += 1.0
        np.fill_diagonal(G, 0.0)
        G /= G.sum()
        state.data.update(P_global=G, plogp_global=plogp_constant(G, self.eps))
        if data.coordinates_euclidean and not data.gaussian_unsquared:  # what bh and fft read
            state.data["X_global"] = global_coordinates(data)
        return state

    def prepare_sparse(self, data, **options):
        """The sparse P of the approximate engines and the centred input coordinates their global
        term is summed from (its affinities are never stored)."""
        X = global_coordinates(data) if self.params["lambda"] != 0.0 else None
        state = super().prepare_sparse(data, **options)
        if X is not None:
            state.data["X_global"] = X
        return state

    def terms(self, d2, state, exaggeration, *, cost, grad):
        pcost, K = super().terms(d2, state, exaggeration, cost=cost, grad=grad)
        lam = self.params["lambda"]
        if lam == 0.0:
            return pcost, K
        kernel = InverseStudentT()
        W = kernel.weights(d2)
        g = kernel.grad_factor(d2, W) if grad else None
        pcost_g, K_g = KL("matrix").terms(state.data["P_global"], W, g,
                                          state.data["plogp_global"], self.eps, clamp_q=False,
                                          symmetric=True, cost=cost, grad=grad)
        if cost:
            pcost = pcost + lam * pcost_g
        if grad:
            K += lam * K_g
        return pcost, K

    def fused_form(self, state):
        """The fused exact engine's description: t-SNE's KL plus lambda times the KL between the
        global affinities (not exaggerated) and the inverse Student-t weights (t-SNE's alone for
        ``lambda = 0``)."""
        tsne = FusedForm(0, eps=self.eps)
        lam = self.params["lambda"]
        if lam == 0.0:
            return tsne
        return SumForm(((1.0, tsne), (lam, FusedForm(4, eps=self.eps, input="P_global"))))


def global_coordinates(data) -> np.ndarray:
    """The centred input coordinates the sparse-P engines sum the global affinities from (their
    squared distances), refusing input that has none."""
    if not data.coordinates_euclidean or data.gaussian_unsquared:
        raise ValueError("method 'gsne' on engines 'bh' and 'fft' needs input coordinates under the "
                         "Euclidean metric (its global affinities 1 + |x_i - x_j|^2 are summed "
                         "from their moments); use engine 'exact' or 'dense' for a distance "
                         "matrix, another metric or sparse input")
    X = np.asarray(data.X, dtype=np.float64)
    return np.ascontiguousarray(X - X.mean(axis=0))


def gsne(perplexity=30.0, inp_kernel="gaussian", eps=EPS, **params):
    lam = check_range("gsne", "lambda", lambda_param(params, 1.0), 0.0)
    recipe = affinity_recipe(inp_kernel, "symmetric", normalize=True)
    return GlobalSNE(recipe=recipe, kernel=StudentT(), perplexity=perplexity,
                     inp_kernel=recipe.kernel, eps=eps, **{"lambda": lam})


SPECS = [
    MethodSpec("gsne", "sne", "g-SNE: t-SNE plus lambda times a global KL term on 1 + d2 weights "
               "(Zhou & Sharpee 2018)",
               {"perplexity": 30.0, "lambda": 1.0, "inp_kernel": "gaussian", "eps": EPS}, gsne,
               fd_variants=tuple({"lambda": v} for v in (0.0, 0.01, 10.0, 1000.0))),
]
