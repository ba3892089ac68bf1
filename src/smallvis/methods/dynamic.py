"""t-SNE relatives that change between epochs, through the ``on_epoch`` hook
(docs/methods.md#dynamic-methods).

- **tsneu**: t-SNE with the gradient written in un-normalised input weights ``V`` (row-normalised and
  average-symmetrised, so :math:`N = \\sum V = n`):

  .. math:: K = \\frac{4}{N} W \\circ \\left(V - \\frac{W}{Z} N\\right) = 4 W \\circ (V/N - Q)

  the same forces as t-SNE, kept as an academic exercise.
- **pstsne** ("pseudo-separable" t-SNE): tsneu with a frozen normaliser ``Z``: ``n^2`` at the start and
  whenever the exaggeration changes, and ``sum W`` at the coordinates of each epoch. Between epochs
  the forces are separable (no global sum).
- **dhssne**: heavy-tailed SSNE (Yang, King, Xu & Oja 2009, NIPS) whose tail parameter ``alpha`` is
  searched at each epoch: the cost at ``alpha + 0.1`` and ``alpha - 0.1`` is compared with the
  epoch's cost and the lowest wins (ties go to ``alpha + 0.1``, then ``alpha - 0.1``).

Quirks of the original kept here (docs/deviations.md): exaggeration scales the P of tsneu/pstsne's
cost but not the V of their forces; dhssne always tries ``alpha - 0.1``, evaluates its weights in
the power form ``(alpha d^2 + 1)^(-1/alpha)``, and its first gradient after an epoch reads the
weights of the epoch's cost (the old alpha) with the new alpha's exponent (see
:class:`DynamicHSSNE`).
"""

from __future__ import annotations

import numpy as np

from ..affinity import scale_affinities, scale_sparse_affinities
from ..io.distances import shift_origin, squared_distances
from .kernels import Declared, HeavyTailed, StudentT
from .base import EPS, FusedForm, Method, MethodSpec, StepRule, affinity_recipe, check_range
from .divergences import plogp_constant
from .sne import KLEmbedding


def unnormalised_affinities(state):
    """The calibrated affinities row-normalised and average-symmetrised, not normalised (sum n);
    sparse (CSR) when they are."""
    from scipy import sparse

    V = state.affinities.V
    scale = scale_sparse_affinities if sparse.issparse(V) else scale_affinities
    return scale(V, symmetrize_how="average", normalize=False)


class UnnormalisedTSNE(Method):
    """tsneu (``frozen_z=False``) and pstsne (``frozen_z=True``)."""

    exact_matrices = 3.9  # P, V and its normalised copy (see Method)

    def __init__(self, *, frozen_z: bool, **params):
        super().__init__(**params)
        self.frozen_z = frozen_z
        self.kernel = StudentT()

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        V = unnormalised_affinities(state)
        state.data.update(V=V, N=V.sum())
        return state

    def _z(self, W, state, exaggeration):
        if not self.frozen_z:
            return W.sum()
        if state.data.get("factor") != exaggeration:  # the original resets Z with its input cache
            state.data.update(factor=exaggeration, Z=float(state.P.shape[0]) ** 2)
        return state.data["Z"]

    def terms(self, d2, state, exaggeration, *, cost, grad):
        W = self.kernel.weights(d2)
        Z = self._z(W, state, exaggeration)
        Q = W / Z
        pcost = K = None
        if cost:
            P = exaggeration * state.P
            const = state.cached("plogp", exaggeration, lambda: plogp_constant(P, self.eps))
            logQ = Q.copy()
            np.fill_diagonal(logQ, 1.0)
            pcost = const - np.sum(P * np.log(logQ), axis=0)
        if grad:
            V, N = state.data["V"], state.data["N"]
            K = (4.0 / N) * W * (V - Q * N)
        return pcost, K

    def on_epoch(self, Y, state, iteration, cost, *, exaggeration=1.0, pcost=None):
        if self.frozen_z:
            self._z(None, state, exaggeration)  # a pending reset happens first, as in the original
            state.data["Z"] = t_weight_total(Y)

    def fused_form(self, state):
        """The fused exact engine's description: t-SNE's KL with the forces unexaggerated (``V / N``
        is P) and, for pstsne, the frozen normaliser."""
        return FusedForm(0, eps=self.eps, exaggerate_forces=False, fixed_z=self.frozen_z)

    def output_normaliser(self, state, exaggeration):
        """pstsne's frozen Z at this evaluation (reset to ``n^2`` when the exaggeration changes)."""
        return self._z(None, state, exaggeration)


def t_weight_total(Y: np.ndarray) -> float:
    """``sum_{i != j} 1 / (1 + |y_i - y_j|^2)``, a block of rows at a time (no (n, n) temporary),
    with the squared distances of :func:`~smallvis.io.distances.squared_distances`'s expanded form."""
    X = shift_origin(Y)
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    block = max(1, 2**18 // max(n, 1))
    total = 0.0
    for start in range(0, n, block):
        stop = min(n, start + block)
        D2 = sq[start:stop, None] + sq[None, :] - 2.0 * (X[start:stop] @ X.T)
        np.maximum(D2, 0.0, out=D2)
        W = np.divide(1.0, np.add(D2, 1.0, out=D2), out=D2)
        W[np.arange(stop - start), np.arange(start, stop)] = 0.0
        total += float(W.sum())
    return total


class PowerHeavyTailed(Declared):
    """The heavy-tailed kernel as the original's dhssne evaluates it: the literal power
    ``w = (alpha d^2 + 1)^(-1/alpha)`` and ``g = w^alpha``, with alpha unfloored.

    For alpha in (0, 1] this equals :class:`HeavyTailed` to rounding. It matters where the search
    reaches ``alpha = 0.1 - 0.1 = 2.8e-17``: there ``1 + alpha d^2`` rounds to 1, so nearly every
    weight is 1 and that candidate's cost is high. The original's alpha therefore stays at 0.1 on
    iris10, where the accurate ``log1p`` form (a Gaussian kernel at that alpha) would win and carry
    alpha below 0.
    """

    name = "heavy-tailed"
    kernel_name = "power-heavy"
    zero_grad_diagonal = True
    errstate = dict(all="ignore")  # alpha <= 0 candidates may give inf/NaN: they lose

    def __init__(self, alpha: float):
        super().__init__(alpha=alpha, b=alpha)


class DynamicHSSNE(KLEmbedding):
    """HSSNE whose alpha moves by +-0.1 per epoch towards a lower cost.

    The original keeps the output weights of its last cost evaluation and its epoch search does not
    refresh them, so the first gradient after an epoch (at the same coordinates) uses the weights
    and normaliser of the epoch's cost, computed with the alpha before the search, raised to the
    new alpha: ``K = 4 (P - W_old / Z_old) W_old^alpha_new``. Later gradients use fresh weights.
    With ``epoch = 1`` every gradient but the first is such a one (the original's run on iris10,
    eta 0.1, perplexity 5 is reproduced to 1e-13 over 12 iterations only this way).
    """

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        state.data["alpha"] = self.kernel.alpha
        return state

    def prepare_sparse(self, data, **options):
        """The sparse P of the approximate engines, and the starting alpha."""
        state = super().prepare_sparse(data, **options)
        state.data["alpha"] = self.kernel.alpha
        return state

    def output_kernel(self, state):
        return PowerHeavyTailed(state.data["alpha"])  # unfloored: the search may leave (0, 1]

    def terms(self, d2, state, exaggeration, *, cost, grad):
        epoch_alpha = state.data.pop("epoch_alpha", None) if grad else None
        if epoch_alpha is None or epoch_alpha == state.data["alpha"]:
            return super().terms(d2, state, exaggeration, cost=cost, grad=grad)
        pcost = super().terms(d2, state, exaggeration, cost=True, grad=False)[0] if cost else None
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        W = PowerHeavyTailed(epoch_alpha).weights(d2)  # the weights of the epoch's cost
        g = PowerHeavyTailed(state.data["alpha"]).grad_factor(d2, W)
        K = self.divergence.terms(P, W, g, None, self.eps, clamp_q=False, symmetric=True,
                                  cost=False, grad=True)[1]
        return pcost, K

    def on_epoch(self, Y, state, iteration, cost, *, exaggeration=1.0, pcost=None):
        if pcost is None:  # the dense evaluation
            d2 = squared_distances(Y)

            def pcost(_):
                return super(DynamicHSSNE, self).terms(d2, state, exaggeration, cost=True,
                                                       grad=False)[0]

        current = state.data["alpha"]
        candidates = [current + 0.1, current - 0.1]
        costs = []
        for alpha in candidates:
            state.data["alpha"] = alpha
            with np.errstate(all="ignore"):
                c = float(np.sum(pcost(Y)))
            costs.append(c if np.isfinite(c) else np.inf)
        best = int(np.argmin(costs + [cost]))
        state.data["alpha"] = (candidates + [current])[best]
        state.data["epoch_alpha"] = current  # the alpha of the weights the next gradient reads

    def fused_form(self, state):
        """The fused exact engine's description: KL with the power-form heavy-tailed kernel at the
        current alpha; right after an epoch that changed alpha, the gradient's form reads the
        weights of the epoch's alpha with the new exponent (``grad_form``)."""
        alpha = state.data.get("alpha", self.kernel.alpha)
        stale = state.data.get("epoch_alpha")
        grad_form = None
        if stale is not None and stale != alpha:
            grad_form = FusedForm(5, alpha=stale, b=alpha, eps=self.eps)
        return FusedForm(5, alpha=alpha, b=alpha, eps=self.eps, grad_form=grad_form)

    def grad_form_used(self, state):
        state.data.pop("epoch_alpha", None)

    def export(self, state, name, Y):
        if name == "alpha":
            return state.data["alpha"]
        return super().export(state, name, Y)


def _sym_recipe(inp_kernel, symmetrize="symmetric"):
    return affinity_recipe(inp_kernel, symmetrize, normalize=True)


def _unnormalised(frozen_z):
    def factory(perplexity=30.0, inp_kernel="gaussian", eps=EPS):
        recipe = _sym_recipe(inp_kernel)
        return UnnormalisedTSNE(recipe=recipe, frozen_z=frozen_z, perplexity=perplexity,
                                inp_kernel=recipe.kernel, eps=eps)

    return factory


def dhssne(perplexity=30.0, alpha=0.5, inp_kernel="gaussian", eps=EPS):
    alpha = check_range("dhssne", "alpha", alpha, 0.0, lo_open=True)
    recipe = _sym_recipe(inp_kernel)
    return DynamicHSSNE(recipe=recipe, kernel=HeavyTailed(alpha), perplexity=perplexity,
                        alpha=alpha, inp_kernel=recipe.kernel, eps=eps)


_BASE = dict(perplexity=30.0, inp_kernel="gaussian", eps=EPS)

SPECS = [
    MethodSpec("tsneu", "sne", "t-SNE with the gradient in un-normalised input weights "
               "(same forces as t-SNE)", dict(_BASE), _unnormalised(False)),
    MethodSpec("pstsne", "sne", "Pseudo-separable t-SNE: the normaliser Z is only updated "
               "once per epoch", dict(_BASE), _unnormalised(True),
               fd_exempt="its forces use the normaliser Z of the last epoch, its cost the frozen Z; "
                         "right after an epoch they equal t-SNE's gradient"),
    MethodSpec("dhssne", "sne", "Dynamic HSSNE: alpha moves by +-0.1 per epoch to lower the cost",
               dict(perplexity=30.0, alpha=0.5, inp_kernel="gaussian", eps=EPS), dhssne,
               # not alpha = 1e-8 (as hssne): the original's power form rounds 1 + alpha d2 there,
               # so the cost is not smooth on the finite-difference scale
               fd_variants=(dict(alpha=1e-3), dict(alpha=1.0)), step=StepRule(0.1, "matrix")),
]

__all__ = ["DynamicHSSNE", "UnnormalisedTSNE"]
