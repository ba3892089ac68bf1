"""The stochastic neighbour embedding family built from KL(P || W/Z) (spec smallvis-R.md §5.1).

t-SNE (van der Maaten & Hinton 2008, JMLR 9:2579):

.. math::
    P = \\text{row-normalise, symmetrise, normalise}(\\exp(-\\beta_i r_{ij}^2)),\\quad
    w_{ij} = (1 + d_{ij}^2)^{-1},\\quad Q = W / \\textstyle\\sum W,\\quad
    C = \\mathrm{KL}(P \\| Q),\\quad K = 4 W \\circ (P - Q)
"""

from __future__ import annotations

from ..affinity import SYMMETRIZE, AffinityRecipe
from .._names import match_name
from ..kernels import StudentT
from .base import EPS, Method, MethodSpec
from .divergences import NormalisedKL, plogp_constant


class KLEmbedding(Method):
    """KL(P || W/Z) with a configurable affinity recipe and output kernel."""

    kernel = StudentT()
    divergence = NormalisedKL()

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        W = self.kernel.weights(d2)
        g = self.kernel.grad_factor(d2, W) if grad else None
        const = state.cached("plogp", exaggeration, lambda: plogp_constant(P, self.eps)) if cost else None
        return self.divergence.terms(P, W, g, const, self.eps, cost=cost, grad=grad)

    def export(self, state, name, Y):
        if name == "Q":
            from ..input.distances import squared_distances

            W = self.kernel.weights(squared_distances(Y))
            return W / W.sum()
        return super().export(state, name, Y)


class TSNE(KLEmbedding):
    name = "tsne"

    def __init__(self, perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric",
                 normalize=True, row_normalize=True, eps=EPS):
        from ..affinity import INPUT_KERNELS

        inp_kernel = match_name(inp_kernel, INPUT_KERNELS, "input kernel")
        symmetrize = match_name(symmetrize, SYMMETRIZE, "symmetrization")
        super().__init__(perplexity=perplexity, inp_kernel=inp_kernel, symmetrize=symmetrize,
                         normalize=normalize, row_normalize=row_normalize, eps=eps)
        self.recipe = AffinityRecipe(kernel=inp_kernel, symmetrize=symmetrize,
                                     row_normalize=row_normalize, normalize=normalize)


SPECS = [
    MethodSpec(
        name="tsne",
        family="sne",
        description="t-SNE: KL(P||Q) with Student-t output weights (van der Maaten & Hinton 2008)",
        params=dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric",
                    normalize=True, row_normalize=True, eps=EPS),
        factory=TSNE,
        doc=__doc__,
        fd_variants=(dict(inp_kernel="knn"), dict(inp_kernel="exp"), dict(inp_kernel="sigma"),
                     dict(symmetrize="mutual"), dict(symmetrize="fuzzy")),
    ),
]
