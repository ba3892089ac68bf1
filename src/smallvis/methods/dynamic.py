"""t-SNE relatives that change between epochs, through the ``on_epoch`` hook (spec smallvis-R.md §5.1).

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
cost but not the V of their forces; dhssne always tries ``alpha - 0.1`` (so alpha can reach 0 and
below). The gradient after a change of alpha uses the new alpha throughout (the original's published
dhssne result is reproduced to rounding this way, not with the stale weights the spec describes).
"""

from __future__ import annotations

import numpy as np

from ..affinity import scale_affinities
from ..input.distances import squared_distances
from ..kernels import HeavyTailed, StudentT
from .base import EPS, Method, MethodSpec, check_range
from .divergences import plogp_constant
from .sne import KLEmbedding, _recipe


def unnormalised_affinities(state) -> np.ndarray:
    """The calibrated affinities row-normalised and average-symmetrised, not normalised (sum n)."""
    return scale_affinities(state.affinities.V, symmetrize_how="average", normalize=False)


class UnnormalisedTSNE(Method):
    """tsneu (``frozen_z=False``) and pstsne (``frozen_z=True``)."""

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

    def on_epoch(self, Y, state, iteration, cost, *, exaggeration=1.0):
        if self.frozen_z:
            self._z(None, state, exaggeration)  # a pending reset happens first, as in the original
            state.data["Z"] = float(self.kernel.weights(squared_distances(Y)).sum())


class DynamicHSSNE(KLEmbedding):
    """HSSNE whose alpha moves by +-0.1 per epoch towards a lower cost."""

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        state.data["alpha"] = self.kernel.alpha
        return state

    def output_kernel(self, state):
        kernel = HeavyTailed(1.0)
        kernel.alpha = state.data["alpha"]  # unfloored: the search may leave (0, 1]
        return kernel

    def on_epoch(self, Y, state, iteration, cost, *, exaggeration=1.0):
        d2 = squared_distances(Y)
        current = state.data["alpha"]
        candidates = [current + 0.1, current - 0.1]
        costs = []
        for alpha in candidates:
            state.data["alpha"] = alpha
            with np.errstate(all="ignore"):
                c = float(np.sum(super().terms(d2, state, exaggeration, cost=True, grad=False)[0]))
            costs.append(c if np.isfinite(c) else np.inf)
        best = int(np.argmin(costs + [cost]))
        state.data["alpha"] = (candidates + [current])[best]

    def export(self, state, name, Y):
        if name == "alpha":
            return state.data["alpha"]
        return super().export(state, name, Y)


def _sym_recipe(inp_kernel, symmetrize="symmetric"):
    return _recipe(inp_kernel, symmetrize, normalize=True)


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
               fd_variants=(dict(alpha=1e-8), dict(alpha=1.0))),
]

__all__ = ["DynamicHSSNE", "UnnormalisedTSNE"]
