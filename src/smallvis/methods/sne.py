"""The stochastic neighbour embedding family: KL(P || W/Z) with different P recipes and kernels
(docs/methods.md#sne-and-t-sne-family; nomenclature of the original's "norm" page).

Every method here is one :class:`KLEmbedding`: an affinity recipe, an output kernel and the
normalisation of Q. For t-SNE (van der Maaten & Hinton 2008, JMLR 9:2579):

.. math::
    P = \\text{row-normalise, symmetrise, normalise}(\\exp(-\\beta_i r_{ij}^2)),\\quad
    w_{ij} = (1 + d_{ij}^2)^{-1},\\quad Q = W / \\textstyle\\sum W,\\quad
    C = \\mathrm{KL}(P \\| Q),\\quad K = 4 W \\circ (P - Q)
"""

from __future__ import annotations

import numpy as np

from ..affinity import AffinityRecipe
from ..io.distances import squared_distances
from .kernels import (Gaussian, HeavyTailed, OutputKernel, RowScaled, StudentT, StudentTDof,
                      UMAPCurve, Weighted)
from .base import EPS, FusedForm, Method, MethodSpec, StepRule, affinity_recipe, check_range
from .divergences import KL, output_probabilities, plogp_constant


class KLEmbedding(Method):
    """KL(P || W/Z) for a given affinity recipe, output kernel and normalisation of Q."""

    def __init__(self, *, recipe: AffinityRecipe, kernel: OutputKernel, normalisation="matrix",
                 **params):
        super().__init__(recipe=recipe, **params)
        self.kernel = kernel
        self.divergence = KL(normalisation)
        self.symmetric_p = recipe.symmetrize != "none" and not recipe.renormalize_rows

    def output_kernel(self, state) -> OutputKernel:
        """The kernel for this run (bandwidth methods build theirs from the calibrated betas)."""
        return self.kernel

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        kernel = self.output_kernel(state)
        W = kernel.weights(d2)
        g = kernel.grad_factor(d2, W) if grad else None
        const = state.cached("plogp", exaggeration, lambda: plogp_constant(P, self.eps)) if cost else None
        return self.divergence.terms(P, W, g, const, self.eps, clamp_q=kernel.clamp_q,
                                     symmetric=self.symmetric_p and kernel.symmetric,
                                     cost=cost, grad=grad)

    def fused_form(self, state):
        """The fused exact engine's description: the plain KL embeddings, the bandwidth and the
        importance ones, with a Student-t, Gaussian, heavy-tailed or UMAP-curve output kernel (a
        constant output precision, bhssne's, as the form's ``scale``)."""
        kind = type(self)
        if kind not in _FUSED_CLASSES or type(self.divergence) is not KL:
            return None
        kernel, scale = self.kernel, 1.0  # bandwidth methods: evaluated at beta_i d2
        if type(kernel) is _ConstantBandwidth:
            kernel, scale = kernel.base, float(kernel.beta[0, 0])
        if type(kernel) not in _FUSED_KERNELS:
            return None
        code = kernel.decl.code  # the kernel's parameters by name (output_kernels.PARAMS)
        return FusedForm(code, **kernel.params, clamp_q=kernel.clamp_q,
                         eps=self.eps, normalisation=self.divergence.normalisation,
                         symmetric_p=self.symmetric_p, scale=scale,
                         bandwidths=kind is BandwidthEmbedding,
                         point_weights=kind is ImportanceEmbedding)

    def export(self, state, name, Y):
        if name == "Q":
            kernel = self.output_kernel(state)
            W = kernel.weights(squared_distances(Y))
            return output_probabilities(W, self.divergence.normalisation,
                                        self.eps if kernel.clamp_q else None)
        return super().export(state, name, Y)


class BandwidthEmbedding(KLEmbedding):
    """KL embedding whose output kernel uses each point's calibrated input precision ``beta_i``
    (or a constant ``beta`` when given): ``w_ij = base(beta_i d^2_ij)``."""

    def output_kernel(self, state):
        if "kernel" not in state.data:
            state.data["kernel"] = RowScaled(self.kernel, self.output_bandwidths(state))
        return state.data["kernel"]


class ImportanceEmbedding(KLEmbedding):
    """KL embedding whose output weights carry the importance ``M = deg deg^T`` of each pair, with
    ``deg`` the column sums (degrees) of P (weighted t-SNE, Yang, Peltonen & Kaski 2014, ICML)."""

    def output_weights(self, state):
        """The degrees ``deg`` (the column sums of P): the importance of a pair is
        ``deg_i deg_j``."""
        if "deg" not in state.data:  # a flat array for a dense or a sparse P
            state.data["deg"] = np.asarray(state.P.sum(axis=0)).ravel()
        return state.data["deg"]

    def output_kernel(self, state):
        if "kernel" not in state.data:
            deg = self.output_weights(state)
            state.data["kernel"] = Weighted(self.kernel, np.outer(deg, deg))
        return state.data["kernel"]


# the classes whose fused form is the KL of their kernel (not dhssne's search)
_FUSED_CLASSES = (KLEmbedding, BandwidthEmbedding, ImportanceEmbedding)
# the kernels they serve with it
_FUSED_KERNELS = (StudentT, StudentTDof, Gaussian, HeavyTailed, UMAPCurve)


def tsne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", normalize=True,
         row_normalize=True, eps=EPS, dof=1.0):
    """t-SNE; ``dof``: the degrees of freedom of the Student-t output kernel
    ``(1 + d^2/dof)^(-(dof + 1)/2)`` (1: the Cauchy kernel of t-SNE; below 1 heavier tails, more
    separated clusters; large values approach SNE's Gaussian)."""
    dof = check_range("tsne", "dof", dof, 0.0, lo_open=True)
    recipe = affinity_recipe(inp_kernel, symmetrize, row_normalize, normalize)
    kernel = StudentT() if dof == 1.0 else StudentTDof(dof)
    return KLEmbedding(recipe=recipe, kernel=kernel, perplexity=perplexity,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, normalize=normalize,
                       row_normalize=row_normalize, eps=eps, dof=dof)


def ssne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS):
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    return KLEmbedding(recipe=recipe, kernel=Gaussian(), perplexity=perplexity,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, eps=eps)


def hssne(perplexity=30.0, alpha=0.5, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS):
    alpha = check_range("hssne", "alpha", alpha, 0.0, lo_open=True)
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    return KLEmbedding(recipe=recipe, kernel=HeavyTailed(alpha), perplexity=perplexity, alpha=alpha,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, eps=eps)


def bhssne(perplexity=30.0, alpha=0.5, beta=1.0, inp_kernel="gaussian", symmetrize="symmetric",
           eps=EPS):
    """HSSNE with a constant output precision: ``w = (alpha beta d^2 + 1)^(-1/alpha)``."""
    alpha = check_range("bhssne", "alpha", alpha, 0.0, lo_open=True)
    beta = max(check_range("bhssne", "beta", beta, 0.0, lo_open=True), 1e-8)
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    kernel = _ConstantBandwidth(HeavyTailed(alpha), beta)
    return KLEmbedding(recipe=recipe, kernel=kernel, perplexity=perplexity, alpha=alpha, beta=beta,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, eps=eps)


class _ConstantBandwidth(RowScaled):
    """The same precision for every point (sized to the data on first use)."""

    def __init__(self, base, beta: float):
        super().__init__(base, np.array([beta]))

    def weights(self, d2):
        return self.base.weights(self.beta[0, 0] * d2)

    def grad_factor(self, d2, W):
        return self.beta[0, 0] * self.base.grad_factor(self.beta[0, 0] * d2, W)


def _importance(kernel):
    def factory(perplexity=30.0, inp_kernel="gaussian", eps=EPS):
        recipe = affinity_recipe(inp_kernel, "symmetric", normalize=True)
        return ImportanceEmbedding(recipe=recipe, kernel=kernel, perplexity=perplexity,
                                   inp_kernel=recipe.kernel, eps=eps)

    return factory


def _conditional(kernel, normalisation, **recipe_args):
    def factory(perplexity=30.0, inp_kernel="gaussian", eps=EPS):
        recipe = affinity_recipe(inp_kernel, **recipe_args)
        return KLEmbedding(recipe=recipe, kernel=kernel, normalisation=normalisation,
                           perplexity=perplexity, inp_kernel=recipe.kernel, eps=eps)

    return factory


def _bandwidth(kernel, normalisation, **recipe_args):
    def factory(perplexity=30.0, inp_kernel="gaussian", beta=None, eps=EPS):
        if beta is not None and not float(beta) > 0:
            raise ValueError(f"beta (output precision) must be positive; got {beta}")
        recipe = affinity_recipe(inp_kernel, **recipe_args)
        return BandwidthEmbedding(recipe=recipe, kernel=kernel, normalisation=normalisation,
                                  perplexity=perplexity, inp_kernel=recipe.kernel, beta=beta,
                                  eps=eps)

    return factory


_SYM = dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", eps=EPS)
_COND = dict(perplexity=30.0, inp_kernel="gaussian", eps=EPS)
_BAND = dict(perplexity=30.0, inp_kernel="gaussian", beta=None, eps=EPS)

# step sizes for side-by-side runs (StepRule: eta on iris, scaled with n as the forces scale):
# Gaussian output kernels and input bandwidths have larger forces than t-SNE's
_GAUSSIAN_STEP = StepRule(0.1, "matrix")
_CONDITIONAL_GAUSSIAN_STEP = StepRule(0.1, "constant")
_BANDWIDTH_STEP = StepRule(1e-3, "matrix")
_CONDITIONAL_BANDWIDTH_STEP = StepRule(1e-3, "constant")

SPECS = [
    MethodSpec("tsne", "sne", "t-SNE: KL(P||Q) with Student-t output weights "
               "(van der Maaten & Hinton 2008)",
               dict(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric",
                    normalize=True, row_normalize=True, eps=EPS, dof=1.0), tsne,
               fd_variants=(dict(inp_kernel="knn"), dict(inp_kernel="exp"),
                            dict(inp_kernel="sigma"), dict(symmetrize="mutual"),
                            dict(symmetrize="fuzzy"), dict(dof=0.5), dict(dof=3.0),
                            dict(dof=0.7, symmetrize="none"))),
    MethodSpec("ssne", "sne", "Symmetric SNE: KL(P||Q) with Gaussian output weights "
               "(Cook et al. 2007)", dict(_SYM), ssne, step=_GAUSSIAN_STEP),
    MethodSpec("hssne", "sne", "Heavy-tailed symmetric SNE: output (alpha d2 + 1)^(-1/alpha), "
               "alpha -> 0 is SSNE, 1 is t-SNE (Yang et al. 2009)",
               dict(perplexity=30.0, alpha=0.5, inp_kernel="gaussian", symmetrize="symmetric",
                    eps=EPS), hssne,
               fd_variants=(dict(alpha=1e-8), dict(alpha=1.0), dict(alpha=1.5)),
               step=_GAUSSIAN_STEP),
    MethodSpec("bhssne", "sne", "HSSNE with a constant output precision beta: "
               "(alpha beta d2 + 1)^(-1/alpha)",
               dict(perplexity=30.0, alpha=0.5, beta=1.0, inp_kernel="gaussian",
                    symmetrize="symmetric", eps=EPS), bhssne,
               fd_variants=(dict(beta=0.1), dict(beta=10.0, alpha=1.0), dict(alpha=1e-8)),
               step=_GAUSSIAN_STEP),
    MethodSpec("wtsne", "sne", "Weighted t-SNE: output weights times the importance deg_i deg_j "
               "(Yang et al. 2014)", dict(_COND), _importance(StudentT())),
    MethodSpec("wssne", "sne", "Weighted SSNE: Gaussian output weights times the importance "
               "deg_i deg_j", dict(_COND), _importance(Gaussian()), step=_GAUSSIAN_STEP),
    MethodSpec("asne", "sne", "Asymmetric SNE: conditional P, row-normalised Gaussian Q "
               "(Hinton & Roweis 2002)", dict(_COND), _conditional(Gaussian(), "row"),
               step=_CONDITIONAL_GAUSSIAN_STEP),
    MethodSpec("tasne", "sne", "t-ASNE (t-R-SNE): conditional P, row-normalised Student-t Q",
               dict(_COND), _conditional(StudentT(), "row")),
    MethodSpec("trmsne", "sne", "t-RM-SNE: row-normalised, unsymmetrised, matrix-normalised P; "
               "matrix-normalised Student-t Q", dict(_COND),
               _conditional(StudentT(), "matrix", normalize=True)),
    MethodSpec("tmsne", "sne", "t-M-SNE: raw affinities matrix-normalised; matrix-normalised "
               "Student-t Q", dict(_COND),
               _conditional(StudentT(), "matrix", row_normalize=False, normalize=True)),
    MethodSpec("trsrsne", "sne", "t-RSR-SNE: P row-normalised, symmetrised, row-normalised again; "
               "row-normalised Student-t Q", dict(_COND),
               _conditional(StudentT(), "row", symmetrize="average", rsr=True)),
    MethodSpec("arsrsne", "sne", "ASNE with the RSR P (row-normalise, symmetrise, row-normalise)",
               dict(_COND), _conditional(Gaussian(), "row", symmetrize="average", rsr=True),
               step=_CONDITIONAL_GAUSSIAN_STEP),
    MethodSpec("btsne", "bandwidth", "t-SNE with input bandwidths in the output kernel: "
               "w = 1/(1 + beta_i d2)", dict(_BAND),
               _bandwidth(StudentT(), "matrix", symmetrize="symmetric", normalize=True),
               fd_variants=(dict(beta=2.0),), step=_BANDWIDTH_STEP),
    MethodSpec("bssne", "bandwidth", "SSNE with input bandwidths: Q = exp(-beta_i d2) / sum",
               dict(_BAND), _bandwidth(Gaussian(), "matrix", symmetrize="symmetric",
                                       normalize=True), step=_BANDWIDTH_STEP),
    MethodSpec("basne", "bandwidth", "ASNE with input bandwidths: row-normalised exp(-beta_i d2)",
               dict(_BAND), _bandwidth(Gaussian(), "row"), step=_CONDITIONAL_BANDWIDTH_STEP),
    MethodSpec("btasne", "bandwidth", "t-ASNE with input bandwidths: row-normalised "
               "1/(1 + beta_i d2)", dict(_BAND), _bandwidth(StudentT(), "row"),
               step=_CONDITIONAL_BANDWIDTH_STEP),
]
