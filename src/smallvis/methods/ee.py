"""Elastic embedding and its t-distributed variant (docs/methods.md#elastic-embedding).

Elastic embedding (Carreira-Perpiñán 2010, ICML) attracts by the input affinities and repels by
fixed weights, with no normalisation of the output weights :math:`w_{ij} = e^{-d_{ij}^2}`:

.. math::
    C = \\sum_{ij} P_{ij} d_{ij}^2 + \\lambda \\sum_{ij} V^-_{ij} w_{ij},\\qquad
    K = 4 (P - \\lambda V^- \\circ W)

with P the t-SNE affinities and :math:`V^- = R / \\sum R` (input distances, unsquared) or 1.

t-EE (tee; the original author's invention) is a lambda-weighted I-divergence between the
un-normalised affinities V (row-normalised, average-symmetrised, :math:`N = \\sum V`) and Student-t
weights:

.. math::
    C = \\frac{1}{N} \\sum_{ij} \\left[V_{ij} \\log \\frac{V_{ij}}{w_{ij}} - \\lambda V_{ij}
        + \\lambda w_{ij}\\right],\\qquad K = \\frac{4}{N} W \\circ (V - \\lambda W)

Its cost can be negative (use ``min_cost=-inf`` to stop on tolerance only). Neither method is
affected by exaggeration (as in the original). EE's attraction term is :math:`-\\log w = d^2`
exactly, as in the original (its published final cost on iris10, 5.564, needs it; the earlier
:math:`-\\log(w + \\epsilon)` gave 5.5635, and saturated where :math:`e^{-d^2} < \\epsilon`).
"""

from __future__ import annotations

import math

import numpy as np

from .base import (EPS, Method, MethodSpec, PairForm, StepRule, StochasticPlan, affinity_recipe,
                   check_range, lambda_param)
from .dynamic import unnormalised_affinities

# what to use where bh / fft cannot run an elastic embedding (ee's input-distance repulsion weights)
NOT_KL = "use engine='sgd' (edges and uniformly sampled pairs, O(n k) memory) or 'exact'"


class ElasticEmbedding(Method):
    """EE with optional distance-weighted repulsion."""

    exact_matrices = 3.2  # P, the input distances' repulsion weights, the calibration (see Method)

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        if self.params["neg_weights"]:
            R = data.distances()
            data.release("D2")  # P is calibrated: one (n, n) matrix less while Vn is formed
            state.data["Vn"] = R / R.sum()
        else:
            state.data["Vn"] = np.ones_like(state.P)
        return state

    def prepare_sparse(self, data, **options):
        """The sparse affinities; with ``neg_weights`` the sgd engine reads the input distance of
        every sampled pair, so a kNN graph is refused first."""
        if self.params["neg_weights"]:
            data.require_distances()
        return super().prepare_sparse(data, **options)

    def terms(self, d2, state, exaggeration, *, cost, grad):
        lam = self.params["lambda"]
        P, Vn = state.P, state.data["Vn"]  # exaggeration is ignored
        W = np.exp(-d2)
        np.fill_diagonal(W, 0.0)
        repulsion = lam * Vn * W
        # -log w = d2 exactly (no eps in a log): the original's cost, finite where w underflows
        pcost = np.sum(P * d2 + repulsion, axis=0) if cost else None
        K = 4.0 * (P - repulsion) if grad else None
        return pcost, K

    def pair_form(self, state):
        """The exact engine's pair pass reads P and, with ``neg_weights``, ``Vn`` (without, every
        repulsion weight is 1 and the all-ones matrix is not read)."""
        return PairForm("ee", weight="none", gamma=self.params["lambda"],
                        weights="Vn" if self.params["neg_weights"] else None)

    def unserved_reason(self, engine):
        return NOT_KL if engine in ("bh", "fft") else None

    def stochastic_plan(self):
        """The sgd engine's version: edges sampled by P pull along ``d2``, uniformly sampled pairs
        push along ``lambda Vn_ij exp(-d2)``, ``Vn_ij = R_ij / sum R`` from the input coordinates
        of the pair (``neg_weights``) or 1; the same cost, no reweighting (docs/engines.md).
        Learning rate 0.1: an edge's pull ``2 lr (y_i - y_j)`` overshoots from ``lr = 0.5``."""
        return StochasticPlan("pairs", eta=0.1, auto=False,
                              options={"kind": "ee", "lambda": self.params["lambda"],
                                       "weights": self.params["neg_weights"], "norm": None})


class TEE(Method):
    """t-distributed elastic embedding: a lambda-weighted I-divergence with Student-t weights."""

    exact_matrices = 3.3  # P, the un-normalised affinities V, the calibration (see Method)

    def prepare(self, data, *, extras=frozenset()):
        state = super().prepare(data, extras=extras)
        data.release("D2")  # P is calibrated
        V = unnormalised_affinities(state)
        if hasattr(V, "toarray"):  # a kNN graph's (sparse): the exact pass reads V as (n, n)
            V = V.toarray()
        N = V.sum()
        # column sums of Vc log Vc and Vc (Vc = V floored at eps) accumulated row by row: the
        # order of np.sum(axis=0), without three (n, n) temporaries
        vlogv, vsum = np.zeros(V.shape[1]), np.zeros(V.shape[1])
        for row in V:
            vc = np.maximum(row, self.eps)
            vlogv += vc * np.log(vc)
            vsum += vc
        state.data.update(V=V, N=N, const=(vlogv - self.params["lambda"] * vsum) / N)
        return state

    def prepare_sparse(self, data, *, knn_method="auto", random_state=None):
        """Sparse affinities and the sparse V (CSR) for the sparse-P engines; the constant over the
        stored entries of V only (the pairs V does not store add ``eps log eps - lambda eps``
        each in the dense cost)."""
        from scipy import sparse

        state = super().prepare_sparse(data, knn_method=knn_method, random_state=random_state)
        V = sparse.csr_matrix(unnormalised_affinities(state))
        N = float(V.sum())
        Vc = np.maximum(V.data, self.eps)
        rows = np.repeat(np.arange(V.shape[0]), np.diff(V.indptr))
        const = np.bincount(rows, weights=Vc * np.log(Vc) - self.params["lambda"] * Vc,
                            minlength=V.shape[0]) / N  # V is symmetric: row sums are column sums
        state.data.update(V=V, N=N, const=const)
        return state

    def terms(self, d2, state, exaggeration, *, cost, grad):
        lam = self.params["lambda"]
        V, N = state.data["V"], state.data["N"]  # exaggeration is ignored
        W = 1.0 / (1.0 + d2)
        np.fill_diagonal(W, 0.0)
        pcost = K = None
        if cost:
            # -log w = log(1 + d2); zero on the diagonal, where V is zero too
            pcost = state.data["const"] + (lam * W.sum(axis=0)
                                           + np.sum(V * np.log1p(d2), axis=0)) / N
        if grad:
            K = (4.0 / N) * W * (V - lam * W)
        return pcost, K

    def pair_form(self, state):
        """The exact engine's pair pass reads V (not P); ``N`` is NaN before ``prepare``."""
        return PairForm("tee", gamma=self.params["lambda"], eps=self.eps, input="V",
                        norm=float(state.data.get("N", np.nan)))

    def unserved_reason(self, engine):
        return NOT_KL if engine in ("bh", "fft") else None

    def stochastic_plan(self):
        """The sgd engine's version: edges sampled by P = V / N pull along ``log(1 + d2)``,
        uniformly sampled pairs push along ``(lambda / N) w``; the same cost (docs/engines.md)."""
        return StochasticPlan("pairs", a=1.0, b=1.0, auto=False,
                              options={"kind": "tee", "lambda": self.params["lambda"],
                                       "weights": False, "norm": "N"})


def _lambda(method, params, default):
    return check_range(method, "lambda", lambda_param(params, default), 0.0)


def ee(perplexity=30.0, inp_kernel="gaussian", neg_weights=True, eps=EPS, **params):
    lam = _lambda("ee", params, 100.0)
    recipe = affinity_recipe(inp_kernel, "symmetric", normalize=True)
    return ElasticEmbedding(recipe=recipe, perplexity=perplexity, inp_kernel=recipe.kernel,
                            neg_weights=bool(neg_weights), eps=eps, **{"lambda": lam})


def tee(perplexity=30.0, inp_kernel="gaussian", eps=EPS, **params):
    lam = _lambda("tee", params, 0.01)
    recipe = affinity_recipe(inp_kernel, "symmetric", normalize=True)
    return TEE(recipe=recipe, perplexity=perplexity, inp_kernel=recipe.kernel, eps=eps,
               **{"lambda": lam})


SPECS = [
    MethodSpec("ee", "ee", "Elastic embedding: attraction by P, repulsion lambda exp(-d2) weighted "
               "by input distances (Carreira-Perpinan 2010)",
               {"perplexity": 30.0, "lambda": 100.0, "neg_weights": True,
                "inp_kernel": "gaussian", "eps": EPS}, ee,
               fd_variants=({"lambda": 1.0}, {"lambda": 1000.0}, {"neg_weights": False}),
               step=StepRule(0.1, "matrix")),
    MethodSpec("tee", "ee", "t-distributed elastic embedding: lambda-weighted I-divergence with "
               "Student-t weights", {"perplexity": 30.0, "lambda": 0.01, "inp_kernel": "gaussian",
                                     "eps": EPS}, tee,
               fd_variants=({"lambda": 0.001}, {"lambda": 0.1}, {"lambda": 1.0}),
               step=StepRule(min_cost=-math.inf)),
]
