"""AB-divergence SNE (docs/methods.md#ab-divergence).

The alpha-beta divergence of Cichocki, Cruces & Amari (2011, "Generalized alpha-beta divergences and
their application to robust nonnegative matrix factorization", Entropy 13:134) between input
affinities ``P`` and output probabilities ``Q``, with ``lambda = alpha + beta``:

.. math::
    D_{AB}^{(\\alpha,\\beta)}(P \\| Q) = -\\frac{1}{\\alpha\\beta} \\sum_{ij} \\Big(
        P_{ij}^{\\alpha} Q_{ij}^{\\beta} - \\frac{\\alpha}{\\lambda} P_{ij}^{\\lambda}
        - \\frac{\\beta}{\\lambda} Q_{ij}^{\\lambda} \\Big)

used as an embedding cost by Narayan, Punjani & Abbeel (2015, "Alpha-beta divergences discover micro
and macro structures in data", ICML). The general formula is singular where ``alpha``, ``beta`` or
``lambda`` is 0; the limits are separate branches (``eps0 = 1e-5`` decides, as in the original):

=================================  ===========================================================
branch (``absne`` chooses)          divergence
=================================  ===========================================================
``absneb0``: ``beta = 0``           :math:`\\frac{1}{\\alpha^2}\\sum P^\\alpha
                                    \\log\\frac{P^\\alpha}{Q^\\alpha} - P^\\alpha + Q^\\alpha`
                                    (``alpha = 1``: KL(P||Q), i.e. t-SNE)
``absnea0``: ``alpha = 0``          :math:`\\frac{1}{\\beta^2}\\sum Q^\\beta \\log\\frac{Q^\\beta}{P^\\beta}
                                    - Q^\\beta + P^\\beta` (``beta = 1``: reverse KL(Q||P))
``absneamb``: ``lambda = 0``        :math:`\\frac{1}{\\alpha^2}\\sum \\log\\frac{Q^\\alpha}{P^\\alpha}
                                    + \\frac{P^\\alpha}{Q^\\alpha} - 1` (``alpha = 1``: Itakura-Saito)
``absne00``: ``alpha = beta = 0``   :math:`\\frac{1}{2}\\sum (\\log P - \\log Q)^2` (log-Euclidean)
general                             the formula above; e.g. ``alpha = beta = 0.5``:
                                    :math:`2\\sum(\\sqrt P - \\sqrt Q)^2` (Hellinger),
                                    ``alpha = beta = 1``: :math:`\\frac12\\sum (P - Q)^2`,
                                    ``lambda = 1``: Amari's alpha-divergence
=================================  ===========================================================

``absne`` takes ``alpha`` and ``lambda`` (``beta = lambda - alpha``; the defaults ``alpha = lambda = 1``
give exactly t-SNE), uses the t-SNE affinities ``P`` (row-normalised, symmetrised, normalised) and the
Student-t output ``Q = W / sum W``. ``abssne`` is the same divergence with a Gaussian output kernel.

Every branch is written in force form with the kernel's gradient factor ``g`` (``W = Q Z`` for the
Student-t kernel, 1 for the Gaussian): with ``A`` the branch's pairwise term,

.. math:: K = c\\, g \\circ (A - Q \\textstyle\\sum A)

where ``c = 4 / alpha`` (``4 / beta`` for ``absnea0``, 4 for ``absne00``). Powers and logarithms
ignore the diagonal (the original's ``powm``/``logm``), and the eps clamps of the original are kept per
branch because they change the costs: P is floored at eps in every branch except the general one, the
``absneamb`` log term also floors ``P^alpha`` and ``absnea0`` floors ``P^beta`` (diagonal included).
The general ``absne`` case always uses the independent (the original's C++) perplexity calibration.

Reported costs are the original's, including three constant (Y-independent) offsets from the
divergence above, so gradients and embeddings are unaffected: ``absneamb`` subtracts ``n`` rather than
``n - 1`` per point (total lower by ``n / alpha^2``); ``absneb0``'s constant is
``sum P log P^alpha / alpha^2`` rather than ``sum P^alpha log P^alpha / alpha^2`` (equal for
``alpha = 1``); and ``abssne`` nudges ``alpha``, ``beta`` and ``lambda`` separately, so where one is
nudged ``lambda != alpha + beta`` and e.g. the default ``alpha = lambda = 1`` reports the cross-entropy
plus 1 instead of KL.

The ``lambda`` parameter is a Python keyword: the factories take it through ``**params`` (read with
:func:`~smallvis.methods.base.lambda_param`), so ``("absne", {"alpha": 0.5, "lambda": 2})`` and
``--param lambda=2`` work as in the original.
"""

from __future__ import annotations

import numpy as np

from .._util.names import match_name
from ..affinity import TRUE_SYMMETRIZE
from ..io.distances import squared_distances
from .kernels import Gaussian, OutputKernel, StudentT
from .base import (EPS, Method, MethodSpec, PairForm, StepRule, affinity_recipe, check_range,
                   lambda_param)
from .divergences import output_probabilities
from .elementwise import logm, powm

EPS0 = 1e-5  # the original's threshold for treating alpha, beta or lambda as 0


def _nudge(value: float) -> float:
    """A value within eps0 of 0 moved to ``+-eps0`` (``+`` for exactly 0), as the original does."""
    if abs(value) < EPS0:
        return (1.0 if value == 0 else float(np.sign(value))) * EPS0
    return value


# --- branches: input constants (cached per exaggeration) and pairwise terms -------------------------
# ``constants(P, eps)`` -> dict; ``pairs(Q, c, eps, n, cost)`` -> (pcost or None, A, sum A, scale)


class _Branch:
    name = "absne"
    alpha = beta = lam = 0.0

    def form_params(self) -> tuple:
        """The pair form's ``params``: ``(alpha, beta, lambda, floor_p, split_beta,
        split_lambda)``."""
        return (self.alpha, self.beta, self.lam, True, False, False)

    def constants(self, P, eps):  # pragma: no cover - interface
        raise NotImplementedError

    def pairs(self, Q, c, eps, n, cost):  # pragma: no cover - interface
        raise NotImplementedError


class _AlphaMinusBeta(_Branch):
    """``lambda = 0`` (``beta = -alpha``)."""

    name = "absneamb"

    def __init__(self, alpha):
        self.alpha, self.beta = alpha, -alpha

    def constants(self, P, eps):
        Pa = powm(np.maximum(P, eps), self.alpha)
        return {"Pa": Pa, "lPac": logm(np.maximum(Pa, eps)).sum(axis=0)}

    def pairs(self, Q, c, eps, n, cost):
        a = self.alpha
        Qa = powm(Q, a)
        R = c["Pa"].copy()
        np.divide(R, Qa, out=R, where=Qa > 0)
        np.fill_diagonal(R, 0.0)
        pcost = None
        if cost:
            pcost = (logm(Qa).sum(axis=0) - c["lPac"] + R.sum(axis=0) - n) / a**2
        A = R - 1.0
        np.fill_diagonal(A, 0.0)
        return pcost, A, R.sum() - n * (n - 1), 4.0 / a


class _BetaZero(_Branch):
    """``beta = 0`` (``lambda = alpha``); ``alpha = 1`` is KL(P || Q)."""

    name = "absneb0"

    def __init__(self, alpha):
        self.alpha = self.lam = alpha

    def constants(self, P, eps):
        Pc = np.maximum(P, eps)
        Pa = powm(Pc, self.alpha)
        Pac = Pa.sum(axis=0)
        return {"Pa": Pa, "PlPac": (Pc * logm(Pa)).sum(axis=0), "Pac": Pac, "Pas": Pac.sum()}

    def pairs(self, Q, c, eps, n, cost):
        a = self.alpha
        Qa = powm(Q, a)
        Qac = Qa.sum(axis=0)
        pcost = None
        if cost:
            pcost = (c["PlPac"] - (c["Pa"] * logm(Qa)).sum(axis=0) - c["Pac"] + Qac) / a**2
        return pcost, c["Pa"] - Qa, c["Pas"] - Qac.sum(), 4.0 / a


class _AlphaZero(_Branch):
    """``alpha = 0`` (``lambda = beta``); ``beta = 1`` is KL(Q || P)."""

    name = "absnea0"

    def __init__(self, beta):
        self.beta = self.lam = beta

    def constants(self, P, eps):
        Pb = np.maximum(powm(np.maximum(P, eps), self.beta), eps)  # diagonal floored to eps too
        return {"Pbc": Pb.sum(axis=0), "lPb": logm(Pb)}

    def pairs(self, Q, c, eps, n, cost):
        b = self.beta
        Qb = powm(Q, b)
        QblPb = Qb * c["lPb"]
        QblQb = Qb * logm(Qb)
        pcost = None
        if cost:
            pcost = (QblQb.sum(axis=0) - QblPb.sum(axis=0) + c["Pbc"] - Qb.sum(axis=0)) / b**2
        return pcost, QblPb - QblQb, QblPb.sum() - QblQb.sum(), 4.0 / b


class _Zero(_Branch):
    """``alpha = beta = 0``: half the squared log-Euclidean distance."""

    name = "absne00"

    def constants(self, P, eps):
        lP = logm(np.maximum(P, eps))
        return {"lP": lP, "lPs": lP.sum()}

    def pairs(self, Q, c, eps, n, cost):
        A = c["lP"] - logm(Q)
        pcost = 0.5 * np.sum(A * A, axis=0) if cost else None
        return pcost, A, A.sum(), 4.0


class _General(_Branch):
    """The general AB-divergence (``alpha``, ``beta``, ``lambda`` all away from 0).

    Where ``beta`` or ``lambda`` is small (the nudged limits of ``abssne``) the cost divides by it, so
    ``Q^x`` is split into ``1 + expm1(x log Q)`` and the constant parts are added up before the
    varying ones: the same value as the original's direct form, without its rounding noise.
    """

    name = "absne"

    def __init__(self, alpha, beta, lam, clamp_p):
        self.alpha, self.beta, self.lam, self.clamp_p = alpha, beta, lam, clamp_p

    def form_params(self):
        return (self.alpha, self.beta, self.lam, self.clamp_p, abs(self.beta) < _SPLIT,
                abs(self.lam) < _SPLIT)

    def constants(self, P, eps):
        if self.clamp_p:
            P = np.maximum(P, eps)
        Pa = powm(P, self.alpha)
        Plc = powm(P, self.lam).sum(axis=0) / (self.beta * self.lam)
        return {"Pa": Pa, "Pac": Pa.sum(axis=0), "Plc": Plc}

    def pairs(self, Q, c, eps, n, cost):
        a, b, lam = self.alpha, self.beta, self.lam
        Pa = c["Pa"]
        ob, Mb = _pow_split(Q, b)  # Q^beta = ob + Mb (off the diagonal)
        ol, Ml = _pow_split(Q, lam)
        PaMb = Pa * Mb
        pcost = None
        if cost:
            const = c["Plc"] - ob * c["Pac"] / (a * b) + ol * (n - 1) / (a * lam)
            pcost = const + (Ml.sum(axis=0) / (a * lam) - PaMb.sum(axis=0) / (a * b))
        A = PaMb - Ml
        if ob:
            A += Pa
        if ol:
            A -= ol
            np.fill_diagonal(A, 0.0)
        return pcost, A, A.sum(), 4.0 / a


_SPLIT = 1e-3  # exponents below this (in magnitude) use the expm1 form of Q^x


def _pow_split(Q: np.ndarray, x: float):
    """``Q^x`` off the diagonal as ``(offset, M)`` with ``Q^x = offset + M``."""
    if abs(x) < _SPLIT:
        return 1.0, np.expm1(x * logm(Q))
    return 0.0, powm(Q, x)


def select_branch(alpha: float, lam: float) -> _Branch:
    """The branch ``absne`` uses for ``(alpha, lambda)`` (``beta = lambda - alpha``), as the original."""
    beta = lam - alpha
    if abs(alpha) > EPS0 and abs(lam) < EPS0:
        return _AlphaMinusBeta(alpha)
    if abs(alpha) > EPS0 and abs(beta) < EPS0:
        return _BetaZero(alpha)
    if abs(alpha) < EPS0 and abs(beta) > EPS0:
        return _AlphaZero(beta)
    if abs(alpha) < EPS0 and abs(beta) < EPS0:
        return _Zero()
    # general case; only reachable with |lambda| < eps0 or |beta| < eps0 when |alpha| == eps0 exactly.
    # lambda is nudged after beta was computed (as the original); beta is nudged too (the original
    # divides by it, giving non-finite costs)
    return _General(alpha, _nudge(beta), _nudge(lam), clamp_p=False)


# --- the method -----------------------------------------------------------------------------------


class ABEmbedding(Method):
    """AB-divergence between P and ``Q = W / sum W`` for an output kernel, in one of the branches."""

    def __init__(self, *, kernel: OutputKernel, branch: _Branch, **params):
        super().__init__(**params)
        self.kernel = kernel
        self.branch = branch

    def _Q(self, W):
        return output_probabilities(W, "matrix", self.eps if self.kernel.clamp_q else None)

    def terms(self, d2, state, exaggeration, *, cost, grad):
        P = state.P if exaggeration == 1.0 else exaggeration * state.P
        W = self.kernel.weights(d2)
        Q = self._Q(W)
        n = Q.shape[0]
        consts = state.cached(("ab", self.branch.name), exaggeration,
                              lambda: self.branch.constants(P, self.eps))
        pcost, A, sumA, scale = self.branch.pairs(Q, consts, self.eps, n, cost)
        K = None
        if grad:
            K = np.multiply(Q, -sumA)
            K += A
            K *= self.kernel.grad_factor(d2, W)
            K *= scale
            np.fill_diagonal(K, 0.0)
        return pcost, K

    def pair_form(self, state):
        """The fused exact engine's description: the branch (its name), its parameters and the
        output weight (Student-t, or Gaussian with Q floored at eps)."""
        weight = {StudentT: "t", Gaussian: "gaussian"}.get(type(self.kernel))
        if weight is None:
            return None
        return PairForm(self.branch.name, weight=weight, eps=self.eps,
                        params=self.branch.form_params())

    def export(self, state, name, Y):
        if name == "Q":
            return self._Q(self.kernel.weights(squared_distances(Y)))
        return super().export(state, name, Y)


def _check_params(method, inp_kernel, symmetrize, alpha, params):
    alpha = check_range(method, "alpha", alpha)
    check_range(method, "lambda", params.get("lambda", 1.0))
    lam = lambda_param(params, 1.0)
    if params:
        raise TypeError(f"method {method!r}: unexpected parameter(s) {sorted(params)}")
    symmetrize = match_name(symmetrize, TRUE_SYMMETRIZE, "symmetrization")
    recipe = affinity_recipe(inp_kernel, symmetrize, normalize=True)
    return alpha, lam, recipe


def absne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", alpha=1.0, eps=EPS,
          **params):
    """AB-divergence SNE with the Student-t output kernel; ``lambda`` (in ``params``) defaults to 1."""
    alpha, lam, recipe = _check_params("absne", inp_kernel, symmetrize, alpha, params)
    branch = select_branch(alpha, lam)
    if isinstance(branch, _General):
        recipe = _replace_calibration(recipe)
    return ABEmbedding(recipe=recipe, kernel=StudentT(), branch=branch, perplexity=perplexity,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, alpha=alpha,
                       eps=eps, **{"lambda": lam})


def abssne(perplexity=30.0, inp_kernel="gaussian", symmetrize="symmetric", alpha=1.0, eps=EPS,
           **params):
    """AB-divergence SNE with the Gaussian output kernel; ``lambda`` (in ``params``) defaults to 1."""
    alpha, lam, recipe = _check_params("abssne", inp_kernel, symmetrize, alpha, params)
    branch = _General(_nudge(alpha), _nudge(lam - alpha), _nudge(lam), clamp_p=True)
    return ABEmbedding(recipe=recipe, kernel=Gaussian(), branch=branch, perplexity=perplexity,
                       inp_kernel=recipe.kernel, symmetrize=recipe.symmetrize, alpha=alpha,
                       eps=eps, **{"lambda": lam})


def _replace_calibration(recipe):
    import dataclasses

    return dataclasses.replace(recipe, calibration="independent")


_PARAMS = {"perplexity": 30.0, "inp_kernel": "gaussian", "symmetrize": "symmetric", "alpha": 1.0,
           "lambda": 1.0, "eps": EPS}

SPECS = [
    MethodSpec("absne", "ab-divergence",
               "AB-divergence SNE: Student-t output, alpha-beta divergence with beta = lambda - alpha; "
               "alpha = lambda = 1 is t-SNE (Narayan et al. 2015)",
               dict(_PARAMS), absne,
               fd_variants=(
                   {"alpha": 1.0, "lambda": 0.0},   # absneamb (Itakura-Saito)
                   {"alpha": 0.5, "lambda": 0.5},   # absneb0 with alpha != 1
                   {"alpha": 0.0, "lambda": 1.0},   # absnea0 (reverse KL)
                   {"alpha": 0.0, "lambda": 0.0},   # absne00 (log-Euclidean)
                   {"alpha": 2.0, "lambda": 0.5},   # general, beta < 0
                   {"alpha": 0.5, "lambda": 1.5},   # general, beta > 0
                   {"alpha": 0.5, "lambda": 1.0},   # general: Hellinger
                   {"alpha": 1.0, "lambda": 2.0},   # general: squared Euclidean
               )),
    MethodSpec("abssne", "ab-divergence",
               "AB-divergence SNE with Gaussian output weights (alpha, beta, lambda nudged away from 0)",
               dict(_PARAMS), abssne,
               # alpha near 0 is left out: the nudged cost (coefficients 1/(alpha beta) ~ 1e10) is
               # rounding noise at finite-difference steps, although the gradient is exact
               fd_variants=(
                   {"alpha": 0.5, "lambda": 1.5},   # general
                   {"alpha": 2.0, "lambda": 0.5},   # general, beta < 0
                   {"alpha": 2.0, "lambda": 2.0},   # beta nudged to 1e-5
                   {"alpha": 1.0, "lambda": 0.0},   # lambda nudged to 1e-5
               ), step=StepRule(0.1, "matrix")),
]
