"""The method contract: a method is an affinity recipe + an output kernel + a divergence.

A method never loops. The driver hands it squared output distances ``d2`` (n, n) through an engine and
receives per-point costs and the stiffness ``K`` of the force form

.. math:: \\partial C / \\partial y_i = \\sum_j K_{ij} (y_i - y_j)

Exaggeration is a scalar passed to every evaluation (``P_eff = factor * P``); P itself is never edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._util.names import match_name
from ..affinity import INPUT_KERNELS, SYMMETRIZE, Affinities, AffinityRecipe, input_affinities
from ..io.data import InputData

EPS = float(np.finfo(np.float64).eps)


def affinity_recipe(inp_kernel, symmetrize="none", row_normalize=True, normalize=False,
                    rsr=False) -> AffinityRecipe:
    """A method's :class:`~smallvis.affinity.AffinityRecipe`, the input kernel and symmetrisation
    matched by name (case-insensitive, unique prefix); ``rsr``: renormalise the rows after
    symmetrising."""
    return AffinityRecipe(kernel=match_name(inp_kernel, INPUT_KERNELS, "input kernel"),
                          symmetrize=match_name(symmetrize, SYMMETRIZE, "symmetrization"),
                          row_normalize=row_normalize, normalize=normalize, renormalize_rows=rsr)


def lambda_param(params: dict, default: float) -> float:
    """The value of a method's ``lambda`` parameter.

    ``lambda`` is a Python keyword, so factories that take it declare ``**params`` and read it here
    (the registry, ``smallvis(method=(name, {"lambda": 0.5}))`` and the CLI all use the name
    ``lambda``).
    """
    return float(params.pop("lambda", default))


def check_range(method: str, name: str, value, lo: float = -np.inf, hi: float = np.inf, *,
                lo_open: bool = False, hi_open: bool = False) -> float:
    """Validate a numeric method parameter, naming the method, the parameter and the valid range."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"method {method!r}: parameter {name!r} must be a number; "
                         f"got {value!r}") from None
    below = v <= lo if lo_open else v < lo
    above = v >= hi if hi_open else v > hi
    if not np.isfinite(v) or below or above:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"method {method!r}: parameter {name!r} must be in "
                         f"{left}{lo:g}, {hi:g}{right}; got {value!r}")
    return v


@dataclass(frozen=True)
class StochasticPlan:
    """What the negative-sampling SGD engine needs from a method (``Method.stochastic_plan``).

    ``forces="umap"``: output weight ``w = 1/(1 + a d^2b)``, attraction ``-log w`` on edges sampled in
    proportion to P, repulsion ``-repulsion * log(1 - w)`` on uniform negatives, softened by
    ``gr_eps``. ``forces="nce"``: NCVis's noise-contrastive forces with a learned log-normaliser
    (``options``: noise_ratio, noise_plan, alpha_Q, corrected). ``forces="pairs"``: an
    un-normalised cost ``sum_ij P_ij A(d2_ij) + sum_ij c_ij B(d2_ij)``, attraction on sampled edges,
    repulsion on uniformly sampled pairs (``options``: ``kind`` ``"ee"`` or ``"tee"``, ``lambda``,
    ``weights`` (ee's input-distance weights), ``norm`` (a key of ``state.data`` dividing lambda:
    tee's ``N``)). ``forces="stress"``: SGD-MDS over uniformly sampled pairs (``options``: ``kind``
    ``"mmds"``, ``"smmds"`` or ``"sammon"``). ``epochs``: the default-epochs rule (``"umap"``: 500 up
    to 10,000 points, else 200; ``"ncvis"``: 50). ``init``: the default init. ``eta``: the default
    initial learning rate. ``auto``: ``engine="auto"`` moves the method to sgd above 10,000 points
    (the peers' methods; the others stay on an exact engine while it fits).
    """

    forces: str
    a: float = 1.0
    b: float = 1.0
    repulsion: float = 1.0
    gr_eps: float = 0.001
    epochs: str = "umap"
    init: str = "normlaplacian"
    options: dict = field(default_factory=dict)
    eta: float = 1.0
    auto: bool = True


@dataclass(frozen=True)
class FusedForm:
    """What the fused exact engine needs from a method (``Method.fused_form``): KL(P || W/Z).

    ``kernel``: 0 Student-t ``1/(1 + d2)``, 1 Gaussian ``exp(-d2)``, 2 heavy-tailed
    ``(alpha d2 + 1)^(-1/alpha)``, 3 UMAP's curve ``1/(1 + a d2^b)`` (its gradient factor
    ``b (1 - w) / (d2 + gr_eps)``), 4 the inverse Student-t ``1 + d2`` (``g = -1/(1 + d2)``,
    g-SNE's global term), 5 the heavy-tailed kernel in dhssne's power form, alpha unfloored, with
    ``g = w^b`` (``b = alpha`` but for dhssne's stale weights), 6 the Student-t kernel with
    ``dof`` degrees of freedom ``(1 + d2/dof)^(-(dof + 1)/2)`` (the codes and functions of
    :data:`smallvis.methods.output_kernels.KERNELS`); ``clamp_q``: Q is floored at
    ``eps`` (off the diagonal).
    ``normalisation``: Q normalised over the whole matrix (``"matrix"``) or per row (``"row"``);
    ``symmetric_p``: P is symmetric; ``scale``: a constant output precision, the kernel evaluated
    at ``scale * d2`` (bhssne); ``bandwidths``: the kernel is evaluated at ``beta_i d2_ij`` with
    the per-point precisions of ``Method.output_bandwidths`` (W not symmetric); ``point_weights``:
    ``w_ij`` is multiplied by ``u_i u_j``, the per-point output weights of
    ``Method.output_weights`` (the importance of weighted t-SNE). The original's quirks of tsneu and
    pstsne: ``exaggerate_forces=False``, the forces use P without the exaggeration (the cost with
    it); ``fixed_z``: Z is not ``sum W`` but ``Method.output_normaliser(state, exaggeration)``.
    ``input``: the matrix KL compares with, ``"P"`` (``state.P``, times the exaggeration) or a key
    of ``state.data`` (not exaggerated: g-SNE's global affinities); ``grad_form``: the form whose
    weights and normaliser the next gradient reads instead of this one's (dhssne right after an
    epoch), after which the engine calls ``Method.grad_form_used``; None: this one's.
    """

    kernel: int
    alpha: float = 1.0
    clamp_q: bool = False
    eps: float = EPS
    normalisation: str = "matrix"
    symmetric_p: bool = True
    bandwidths: bool = False
    a: float = 1.0
    b: float = 1.0
    gr_eps: float = 0.0
    scale: float = 1.0
    point_weights: bool = False
    dof: float = 1.0
    exaggerate_forces: bool = True
    fixed_z: bool = False
    input: str = "P"
    grad_form: FusedForm | None = None

    @property
    def plain(self) -> bool:
        """Symmetric P, matrix-normalised Q (``Z = sum W``), symmetric kernel without per-point
        weights (what the sparse-P engines serve for their kernels)."""
        return (self.symmetric_p and self.normalisation == "matrix" and not self.bandwidths
                and not self.point_weights and self.exaggerate_forces and not self.fixed_z)


@dataclass(frozen=True)
class SumForm:
    """A cost that is a weighted sum of KL terms (``Method.fused_form`` of g-SNE): ``terms``, a
    tuple of ``(weight, FusedForm)``, each form on its own ``input`` matrix."""

    terms: tuple
    plain = False  # never a single KL: the sparse-P engines do not serve it


@dataclass(frozen=True)
class PairForm:
    """What the fused exact engine needs from a method that is not KL(P || W/Z)
    (``Method.pair_form``): a cost summed over ordered pairs whose pair term and stiffness depend
    only on the pair's input values (``P_ij``, the input distance ``R_ij``, ...), its output squared
    distance and at most the normaliser ``Z = sum W``; the input matrices symmetric.

    ``divergence``: ``"largevis"``, ``"umap"`` (umap, tumap: fuzzy cross-entropy), the
    f-divergences ``"rklsne"``, ``"jssne"``, ``"chsne"``, ``"hlsne"`` and the cross-entropy
    ``"ntumap"`` (``"cetsne"``: its constant with P floored at eps) (Student-t ``Q = W / Z``), the
    distance costs ``"mmds"``, ``"smmds"``, ``"sammon"`` (these read ``R``), or the elastic
    embeddings ``"ee"`` (P, and the repulsion weights ``weights``) and ``"tee"`` (its
    un-normalised affinities ``V``; ``norm``: ``N = sum V``; its per-point constant in
    ``state.data["const"]``).
    ``weight``: the output weight, ``"t"`` ``1/(1 + d2)``, ``"cauchy"`` ``1/(1 + a d2)``,
    ``"umap"`` ``1/(1 + a d2^b)``, ``"logistic"`` ``1/(1 + e^d2)``, ``"none"`` (distance costs).
    ``gamma``, ``gr_eps``, ``gr_form``: LargeVis's repulsion weight and softening (UMAP's
    ``gr_eps``; ee's and tee's ``lambda`` is ``gamma``); ``eps``: the method's guard; ``rmax``:
    distance costs drop the pairs with ``R > rmax`` stretched beyond ``R`` (ballmmds; infinite:
    none); ``input``: the (n, n) matrix the pass reads, ``"P"`` (``state.P``) or a key of
    ``state.data`` (the distance costs: ``"R"``; tee: ``"V"``); ``weights``: the key of
    ``state.data`` holding a second (n, n) matrix read pair by pair (ee's repulsion weights
    ``"Vn"``), None for none (every weight 1);
    ``signed_drop``: the distance cost's input carries a sign, negative marking a pair that may be
    dropped when stretched beyond ``|R|`` (knnmmds: the non-neighbours); ``norm``: the cost's
    normaliser (sammon: ``sum R``; tee: ``N``). Values derived from the data are NaN before
    ``prepare``.

    ``params``: a divergence's own parameters. The AB-divergence in the branches of
    :mod:`smallvis.methods.absne` (``"absne"`` general, ``"absneb0"``, ``"absneamb"``,
    ``"absnea0"``, ``"absne00"``; weight ``"t"`` or ``"gaussian"``, ``exp(-d2)`` with Q floored at
    ``eps``): ``(alpha, beta, lambda, floor_p, split_beta, split_lambda)`` (P floored at eps in
    the general branch; ``Q^beta``, ``Q^lambda`` in the ``1 + expm1(x log Q)`` form). NCVis's
    expected NCE cost with its log-normaliser profiled out (``"nce"``, weight ``"umap"``; the
    noise row masses in ``state.data["row_mass"]``): ``(noise_ratio, corrected)``.
    """

    divergence: str
    weight: str = "t"
    a: float = 1.0
    b: float = 1.0
    gamma: float = 1.0
    gr_eps: float = 0.0
    gr_form: str = "d2"
    eps: float = EPS
    rmax: float = float("inf")
    input: str = "P"
    weights: str | None = None
    signed_drop: bool = False
    norm: float = 1.0
    params: tuple = ()


@dataclass(frozen=True)
class MixtureForm:
    """What the fused exact engine needs from a method that mixes both directions of KL
    (``Method.mixture_form``), with Gaussian output probabilities ``Q = exp(-beta_i d2) / Z`` from a
    log-sum-exp, floored at ``eps`` (off the diagonal).

    ``divergence``: ``"nerv"``, ``weight`` KL(P || Q) + (1 - ``weight``) KL(Q || P) with P floored
    at ``eps``; or ``"jse"``, KL(P || M) / (1 - ``weight``) + KL(Q || M) / ``weight`` with the
    mixture ``M = weight P + (1 - weight) Q`` (``weight``: lambda or the clamped kappa).
    ``kernel``: the output kernel's code (1: Gaussian, the only one served); ``normalisation``:
    Q per row (``"row"``: per-point costs by rows, stiffness ``2 (K + K^T)``) or over the whole
    matrix (``"matrix"``: by columns, ``4 K``, P symmetric); ``bandwidths``: ``beta_i`` are the
    per-point precisions of ``Method.output_bandwidths``, each row of K multiplied by its own
    (else 1).
    """

    divergence: str
    weight: float
    kernel: int = 1
    normalisation: str = "row"
    bandwidths: bool = False
    eps: float = EPS


@dataclass
class MethodState:
    """Per-run data of a method: P and anything derived from it, plus a cache keyed by exaggeration."""

    P: np.ndarray | None = None
    affinities: Affinities | None = None
    data: dict = field(default_factory=dict)
    _by_factor: dict = field(default_factory=dict, repr=False)

    def cached(self, key, factor: float, compute: Callable[[], Any]):
        """A value derived from ``factor * P`` (e.g. the ``sum P log P`` constant), computed once per factor."""
        k = (key, float(factor))
        if k not in self._by_factor:
            self._by_factor[k] = compute()
        return self._by_factor[k]


class Method:
    """Base class for every registered method.

    ``recipe`` says how P is made (None for methods without P); subclasses implement :meth:`terms`.
    ``params`` holds the resolved parameter values (after defaults and validation).
    """

    name = "method"
    recipe: AffinityRecipe | None = None
    default_init = "rand"  # the init used when Y_init is not given (the original's for its methods)
    # peak (n, n) float64 arrays of a fit on the exact engine with a dense input (traced, 1,200
    # points): P and the calibration's blocks; the engine's memory guard reads it
    exact_matrices = 1.4

    def __init__(self, *, recipe: AffinityRecipe | None = None, **params):
        if recipe is not None:
            self.recipe = recipe
        self.params = params
        self.eps = float(params.get("eps", EPS))

    # -- set-up -------------------------------------------------------------------------------
    @property
    def uses_affinities(self) -> bool:
        """True when the method has a P that exaggeration multiplies."""
        return self.recipe is not None

    def perplexity(self):
        return self.params.get("perplexity")

    def prepare(self, data: InputData, *, extras: frozenset = frozenset()) -> MethodState:
        """Compute input affinities (and anything else the method needs before optimising)."""
        aff = input_affinities(data, self.perplexity(), self.recipe, extras)
        return MethodState(P=aff.P, affinities=aff)

    def output_bandwidths(self, state: MethodState) -> np.ndarray:
        """Per-point output precisions: the constant ``beta`` parameter when given, else the
        calibrated input precisions (the "B" methods)."""
        if "output_beta" not in state.data:
            beta = self.params.get("beta")
            if beta is None:
                beta = state.affinities.beta
                if beta is None:
                    raise ValueError(f"method {self.name!r} needs input bandwidths: use an input "
                                     f"kernel with precisions (gaussian, exp or sigma)")
            else:
                beta = np.full(state.P.shape[0], float(beta))
            state.data["output_beta"] = beta
        return state.data["output_beta"]

    def output_weights(self, state: MethodState) -> np.ndarray:
        """Per-point output weights ``u`` (n,) of a fused form with ``point_weights``: the output
        weight of a pair is ``u_i u_j w(d2_ij)``."""
        raise NotImplementedError(f"method {self.name!r} has no per-point output weights")

    def output_normaliser(self, state: MethodState, exaggeration: float) -> float:
        """The normaliser Z of a fused form with ``fixed_z`` at this evaluation."""
        raise NotImplementedError(f"method {self.name!r} has no fixed normaliser")

    # -- evaluation -----------------------------------------------------------------------------
    def terms(self, d2: np.ndarray, state: MethodState, exaggeration: float, *, cost: bool,
              grad: bool) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Per-point costs (n,) and stiffness K (n, n) at output squared distances ``d2``."""
        raise NotImplementedError

    # -- hooks ----------------------------------------------------------------------------------
    def on_epoch(self, Y: np.ndarray, state: MethodState, iteration: int, cost: float, *,
                 exaggeration: float = 1.0, pcost: Callable | None = None) -> None:
        """Called after every epoch's bookkeeping and stopping tests (dynamic methods adapt here).

        ``cost`` is the epoch's cost at ``Y`` under the current ``exaggeration``; ``pcost(Y)``: the
        per-point costs at ``Y`` under it by the run's engine (None: the dense evaluation).
        """

    def stochastic_plan(self) -> StochasticPlan | None:
        """How the SGD engine runs this method (None: it cannot)."""
        return None

    def unserved_reason(self, engine: str) -> str | None:
        """Why ``engine`` cannot run this method, when the method knows (added to the engine's
        refusal); None: no particular reason."""
        return None

    def fused_form(self, state: MethodState) -> FusedForm | SumForm | None:
        """How the fused exact engine evaluates this method without n x n temporaries (None: it
        cannot, and that engine falls back to the dense evaluation); a :class:`SumForm` for a sum
        of KL terms."""
        return None

    def grad_form_used(self, state: MethodState) -> None:
        """Called by an engine after a gradient that read the ``grad_form`` of the method's fused
        form (dhssne's stale weights are read once)."""

    def pair_form(self, state: MethodState) -> PairForm | None:
        """How the fused exact engine evaluates this method's non-KL cost pair by pair (None: it
        cannot; see :meth:`fused_form` for KL)."""
        return None

    def mixture_form(self, state: MethodState) -> MixtureForm | None:
        """How the fused exact engine evaluates this method's mix of forward and reverse KL
        (None: it cannot; see :meth:`fused_form` for KL(P || Q) alone)."""
        return None

    def prepare_sparse(self, data: InputData, *, knn_method: str = "auto",
                       random_state=None) -> MethodState:
        """Sparse (O(n k)) affinities for the stochastic engine: kNN-restricted calibration."""
        from ..affinity import sparse_affinities

        aff = sparse_affinities(data, self.perplexity(), self.recipe, knn_method=knn_method,
                                random_state=random_state)
        if aff.beta is None and "beta" in self.params and self.params["beta"] is None:
            # a transform calibrates its new rows only; the bandwidth methods read every row's
            from ..affinity.sparse import transform_bandwidths

            aff.beta = transform_bandwidths(data, self.perplexity(), self.recipe,
                                            knn_method=knn_method, random_state=random_state)
        return MethodState(P=aff.P, affinities=aff)

    def laplacian_affinity(self, state: MethodState) -> np.ndarray | None:
        """The affinity matrix spectral initialisation uses (P unless a method says otherwise)."""
        return state.P

    def export(self, state: MethodState, name: str, Y: np.ndarray):
        """Value of an extra named in ``ret_extra`` (None when the method has no such quantity)."""
        aff = state.affinities
        if name == "P":
            return state.P
        if aff is not None:
            if name in ("V", "beta", "dint"):
                return getattr(aff, name)
            if name in aff.extras:
                return aff.extras[name]
        return state.data.get(name)


DEFAULT_ETA = 500.0  # the original's delta-bar-delta step size, tuned for t-SNE-like gradients
REFERENCE_N = 150  # the size the step rules' eta were chosen on (iris)
STEP_SCALINGS = ("matrix", "distance", "constant")


@dataclass(frozen=True)
class StepRule:
    """The delta-bar-delta step size that works for a method run side by side with others
    (``compare``, the benchmark gallery: :mod:`smallvis.methods.step_sizes`).

    ``eta`` works on iris (n = 150) and is rescaled with n as the method's forces scale
    (``scaling``): ``"matrix"`` (matrix-normalised P: forces shrink like 1 / n, ``eta * n / 150``),
    ``"distance"`` (distance stress: forces grow like n, ``eta * 150 / n``) or ``"constant"``
    (conditional or un-normalised P, and the f-divergences whose forces on far pairs grow with
    1 / Q: ``eta``). The default is the original's 500 for t-SNE and its kin. ``min_cost``: the
    ``min_cost`` a run needs (None: the usual one; ``-inf`` where the cost may be negative).
    ``params``: ``params(n, given) -> dict``, method parameters a side-by-side run on n points
    changes from the defaults, ``given`` the ones the user set (None: none).
    """

    eta: float = DEFAULT_ETA
    scaling: str = "constant"
    min_cost: float | None = None
    params: Callable[[int, dict], dict] | None = None

    def __post_init__(self):
        if self.scaling not in STEP_SCALINGS:
            raise ValueError(f"StepRule scaling must be one of {', '.join(STEP_SCALINGS)}; "
                             f"got {self.scaling!r}")

    def eta_for(self, n: int) -> float:
        """The step size on ``n`` points."""
        if self.scaling == "matrix":
            return self.eta * (n / REFERENCE_N)
        if self.scaling == "distance":
            return self.eta * (REFERENCE_N / n)
        return self.eta


@dataclass(frozen=True)
class MethodSpec:
    """A registry entry: how to build a method, what it takes, what it is."""

    name: str
    family: str
    description: str
    params: dict
    factory: Callable[..., Method]
    neighbour_param: str | None = "perplexity"  # which parameter receives smallvis(perplexity=...)
    doc: str = ""
    # parameter settings the finite-difference gradient test covers besides the defaults
    fd_variants: tuple = ()
    # parameters applied under every finite-difference case, where the defaults deliberately soften
    # the gradient (e.g. largevis's gr_eps) or the cost (an eps inside a log)
    fd_base: dict = field(default_factory=dict)
    # why the gradient is deliberately not the derivative of the reported cost (a dedicated test
    # then checks what the gradient should be)
    fd_exempt: str | None = None
    # the step size (and min_cost, parameters) a side-by-side run uses (methods.step_sizes)
    step: StepRule = StepRule()
