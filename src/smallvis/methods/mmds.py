"""Distance-preserving methods: metric MDS and its relatives
(docs/methods.md#distance-preserving-methods).

These methods have no input affinities P (so exaggeration does not apply): they match the output
distances :math:`D_{ij} = \\lVert y_i - y_j \\rVert` to input distances :math:`R_{ij}`
(Euclidean, the precomputed matrix, or geodesic for ``gmmds``). Costs run over **ordered** pairs
(every pair counted twice) and the per-point cost is the column sum over :math:`i`; the gradient is
in force form :math:`\\partial C / \\partial y_i = \\sum_j K_{ij} (y_i - y_j)`. For metric MDS
(Kruskal 1964, Psychometrika 29:1 and 29:115):

.. math::
    C = \\sum_{i \\ne j} (R_{ij} - D_{ij})^2,\\quad K = -4 (R - D) / (D + \\epsilon)

``smmds`` is the s-stress of ALSCAL (Takane, Young & de Leeuw 1977, Psychometrika 42:7),
``sammon`` Sammon's mapping (Sammon 1969, IEEE Trans. Computers C-18:401), ``gmmds`` metric MDS of
geodesic distances on the kNN graph (Isomap's distances: Tenenbaum, de Silva & Langford 2000,
Science 290:2319), ``ballmmds`` and ``knnmmds`` metric MDS that stops pushing apart pairs outside
a neighbourhood once they are farther apart than in the input.
"""

from __future__ import annotations

import numpy as np

from .._util.log import logger
from ..io.data import InputData
from .base import (EPS, Method, MethodSpec, MethodState, PairForm, StepRule, StochasticPlan,
                   check_range)

# why the sparse-P engines cannot run a distance cost
NO_RADIAL_SUM = ("every pair has its own target distance R_ij, so the stress is no sum of a radial "
                 "function of the output distances that a tree or grid could accumulate; use "
                 "engine='sgd' (SGD-MDS over sampled pairs: mmds, smmds, sammon) or 'exact'")


class DistanceEmbedding(Method):
    """Metric MDS on the input distances ``R``: the base of the family.

    .. math:: C = \\sum_{i \\ne j} (R_{ij} - D_{ij})^2,\\quad K = -4 (R - D) / (D + \\epsilon)

    Subclasses change the input distances (:meth:`input_distances`), drop pairs (:meth:`dropped`)
    or replace :meth:`terms`. ``state.data["R"]`` holds the distances the cost matches.
    """

    exact_matrices = 2.2  # the input distances R (see Method)

    recipe = None  # no P: the driver runs no exaggeration stages
    # the sgd engine's stress (SGD-MDS over sampled pairs, the target distance of a pair computed
    # from the input on the fly); None, with ``sgd_reason``, for a member it cannot run
    stress_kind: str | None = "mmds"
    sgd_reason = ""

    def __init__(self, name: str, **params):
        super().__init__(**params)
        self.name = name

    # -- set-up -------------------------------------------------------------------------------
    def input_distances(self, data: InputData, state: MethodState) -> np.ndarray:
        return data.distances()

    def setup(self, data: InputData, state: MethodState) -> None:
        """Anything else derived from the input (radius, kNN graph, sums)."""

    def prepare(self, data, *, extras=frozenset()):
        state = MethodState(P=None)
        state.data["R"] = self.input_distances(data, state)
        self.setup(data, state)
        return state

    # -- evaluation -----------------------------------------------------------------------------
    def dropped(self, R: np.ndarray, D: np.ndarray, state: MethodState) -> np.ndarray | None:
        """Boolean (n, n) mask of pairs left out of cost and gradient at these output distances."""
        return None

    def terms(self, d2, state, exaggeration, *, cost, grad):
        R = state.data["R"]
        D = np.sqrt(d2)
        diff = R - D
        drop = self.dropped(R, D, state)
        if drop is not None:
            diff[drop] = 0.0
        pcost = np.sum(diff * diff, axis=0) if cost else None
        K = -4.0 * diff / (D + self.eps) if grad else None
        return pcost, K

    # -- hooks ----------------------------------------------------------------------------------
    def pair_form(self, state):
        """The fused exact engine's description: metric MDS of ``R`` (mmds, gmmds); None for a
        subclass that changes the cost or drops pairs without saying how."""
        cls = type(self)
        if cls.terms is not DistanceEmbedding.terms or cls.dropped is not DistanceEmbedding.dropped:
            return None
        return PairForm("mmds", weight="none", eps=self.eps, input="R")

    def stochastic_plan(self):
        """SGD-MDS on the sgd engine (docs/engines.md#negative-sampling-sgd): pairs sampled
        uniformly, each step moving both ends along the pair's stress gradient, capped at the step
        that makes the pair's output distance its input distance; PCA start at the data's scale."""
        if self.stress_kind is None:
            return None
        return StochasticPlan("stress", init="pca", auto=False, options={"kind": self.stress_kind})

    def unserved_reason(self, engine):
        if engine in ("bh", "fft"):
            return NO_RADIAL_SUM
        if engine == "sgd" and self.stress_kind is None:
            return self.sgd_reason
        return None

    def prepare_sparse(self, data, **kw):
        """No affinities: the sgd engine reads the input distances of the pairs it samples."""
        data.require_distances()
        return MethodState(P=None)

    def laplacian_affinity(self, state):
        """``1 / (1 + R)`` of the distances the method matches, diagonal 1 as in the original."""
        return 1.0 / (1.0 + state.data["R"])

    def export(self, state, name, Y):
        # DX (input distances) and DY are produced generically by the API
        return None


class SStress(DistanceEmbedding):
    """s-stress (ALSCAL): squared distances.

    .. math:: C = \\sum_{i \\ne j} (R_{ij}^2 - D_{ij}^2)^2,\\quad K = -8 (R^2 - D^2)
    """

    exact_matrices = 3.1  # R and its square (see Method)

    stress_kind = "smmds"

    def setup(self, data, state):
        state.data["R2"] = state.data["R"] ** 2

    def pair_form(self, state):
        return PairForm("smmds", weight="none", eps=self.eps, input="R")

    def terms(self, d2, state, exaggeration, *, cost, grad):
        diff = state.data["R2"] - d2
        pcost = np.sum(diff * diff, axis=0) if cost else None
        K = -8.0 * diff if grad else None
        return pcost, K


class Sammon(DistanceEmbedding):
    """Sammon mapping: stress weighted by the inverse input distance, normalised by :math:`\\sum R`.

    .. math::
        C = \\frac{1}{\\sum_{i \\ne j} R_{ij}}
            \\sum_{i \\ne j} \\frac{(R_{ij} - D_{ij})^2}{R_{ij} + \\epsilon},
        \\quad K = \\frac{-4 (R - D)}{\\sum R \\, (R \\circ D + \\epsilon)}
    """

    exact_matrices = 3.6  # R and its weights (see Method)

    stress_kind = "sammon"

    def setup(self, data, state):
        R = state.data["R"]
        state.data["rsum"] = float(np.sum(R))
        duplicates = int(np.count_nonzero(R[np.triu_indices(data.n, 1)] == 0))
        if duplicates:
            import warnings

            warnings.warn(f"sammon: {duplicates} pairs of input points coincide (distance 0); "
                          f"Sammon's stress divides by the input distance, so these pairs dominate "
                          f"and the optimisation is likely to diverge: remove duplicate points first",
                          RuntimeWarning, stacklevel=2)

    def pair_form(self, state):
        return PairForm("sammon", weight="none", eps=self.eps, input="R",
                        norm=float(state.data.get("rsum", np.nan)))

    def terms(self, d2, state, exaggeration, *, cost, grad):
        R, S = state.data["R"], state.data["rsum"]
        D = np.sqrt(d2)
        diff = R - D
        pcost = np.sum(diff * diff / (R + self.eps), axis=0) / S if cost else None
        K = -4.0 * diff / (S * (R * D + self.eps)) if grad else None
        return pcost, K


def _check_k(method: str, k) -> int:
    try:
        value = float(k)
    except (TypeError, ValueError):
        value = float("nan")
    if isinstance(k, bool) or not (np.isfinite(value) and value >= 1 and value == int(value)):
        raise ValueError(f"method {method!r}: parameter 'k' (number of nearest neighbours; the "
                         f"top-level perplexity) must be a whole number in [1, n - 1]; got {k!r}")
    return int(value)


def _check_k_fits(method: str, k: int, n: int) -> None:
    if k > n - 1:
        raise ValueError(f"method {method!r}: parameter 'k' (number of nearest neighbours; the "
                         f"top-level perplexity) must be a whole number in [1, n - 1] = "
                         f"[1, {n - 1}] for {n} points; got {k}")


def original_knn(data: InputData, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each point's ``k`` nearest other points and their distances, ``(indices, distances)``, as
    the original's exact search picks them (:mod:`smallvis.io.original_knn`): distances in
    single precision, exact float32 ties at the k-th place broken by its heap. Which neighbours are
    picked changes knnmmds's dropped pairs and gmmds's graph, and gmmds's edges carry these
    distances. A precomputed distance matrix is searched as given (ties: lower index).
    """
    if not data.coordinates_euclidean:  # a distance matrix, another metric or sparse rows
        return data.neighbors(k, "exact")
    from ..io.original_knn import original_neighbors

    return original_neighbors(data.X, k)


class NeighbourMDS(DistanceEmbedding):
    """Base of the kNN-based members: ``k`` validated against n; ``perplexity()`` reports ``k``."""

    exact_matrices = 3.8  # R and the neighbourhood graph's matrices (see Method)

    stress_kind = None
    sgd_reason = ("whether a pair may be dropped depends on the neighbourhood graph, not on the "
                  "pair's two input points, and the sgd engine does not look pairs up in it; use "
                  "engine='exact', or mmds on engine='sgd'")

    def __init__(self, name, k, **params):
        super().__init__(name, k=_check_k(name, k), **params)
        self.k = self.params["k"]

    def perplexity(self):
        return self.k

    def export(self, state, name, Y):
        return state.data["R"] if name == "geo" else None


class GeodesicMDS(NeighbourMDS):
    """Metric MDS of geodesic distances on the symmetrised kNN graph (Isomap's distances).

    .. math::
        R_{ij} = \\text{shortest-path length from } i \\text{ to } j
        \\text{ in the graph with edges } r_{ij}
        \\text{ for } j \\in \\mathrm{kNN}(i) \\text{ or } i \\in \\mathrm{kNN}(j),\\quad
        C = \\sum_{i \\ne j} (R_{ij} - D_{ij})^2,\\quad K = -4 (R - D) / (D + \\epsilon)

    Pairs in different components keep their Euclidean (or precomputed) distance. ``geo`` exports R;
    ``DX`` is the original input distances, as in the original (its gmmds exports no ``dx``).
    """

    exact_matrices = 4.3  # R and the shortest paths (see Method)

    sgd_reason = ("its target distances are shortest paths on the kNN graph, known only after an "
                  "all-pairs search (an n x n matrix); use engine='exact', or mmds on engine='sgd'")

    def input_distances(self, data, state):
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import shortest_path

        n = data.n
        _check_k_fits(self.name, self.k, n)
        E = data.distances()
        idx, dist = original_knn(data, self.k)  # the (k+1)-NN without self, in single precision
        rows = np.repeat(np.arange(n), self.k)
        cols = idx.ravel()
        # explicit entries (zero distances of duplicates included) are edges; with directed=False
        # the shorter of i->j and j->i is used, i.e. the min-symmetrised kNN distance matrix
        graph = coo_matrix((dist.ravel(), (rows, cols)), shape=(n, n)).tocsr()
        G = shortest_path(graph, method="D", directed=False)
        missing = np.isinf(G)
        if missing.any():
            logger.warning("%s: k = %d leaves the neighbour graph disconnected; %d pairs use their "
                           "input distance instead of a geodesic one", self.name, self.k,
                           int(missing.sum()) // 2)
            G[missing] = E[missing]
        # Dijkstra's path lengths summed from either end may differ in the last bit: the shorter
        # of the two, so that R is exactly symmetric (the exact engine visits each pair once)
        return np.minimum(G, G.T)



class BallMDS(DistanceEmbedding):
    """Metric MDS letting pairs outside a ball of radius ``r_max`` be farther apart than in input.

    ``r_max`` is the ``max(1, round(f M))``-th smallest of the ``M = n(n-1)/2`` input distances.

    .. math::
        C = \\sum_{i \\ne j} m_{ij} (R_{ij} - D_{ij})^2,\\quad
        K = -4 m \\circ (R - D) / (D + \\epsilon),
        \\quad m_{ij} = 0 \\text{ if } R_{ij} > r_{max}
        \\text{ and } D_{ij} > R_{ij} \\text{, else } 1
    """

    exact_matrices = 3.6  # R and its weights (see Method)

    stress_kind = None
    sgd_reason = ("its radius r_max is a quantile of all n(n-1)/2 input distances, not known from the "
                  "sampled pairs; use engine='exact', or mmds on engine='sgd'")

    def setup(self, data, state):
        R = state.data["R"]
        upper = R[np.triu_indices(data.n, 1)]
        rank = max(1, round(self.params["f"] * upper.size))
        state.data["rmax"] = float(np.partition(upper, rank - 1)[rank - 1])
        logger.info("%s: f = %g, rmax = %g", self.name, self.params["f"], state.data["rmax"])

    def dropped(self, R, D, state):
        return (R > state.data["rmax"]) & (D > R)

    def pair_form(self, state):
        return PairForm("mmds", weight="none", eps=self.eps, input="R",
                        rmax=float(state.data.get("rmax", np.nan)))

    def export(self, state, name, Y):
        return state.data["R"] if name == "geo" else None


class KnnMDS(NeighbourMDS):
    """Metric MDS that lets non-neighbours be farther apart than in the input.

    .. math::
        C = \\sum_{i \\ne j} m_{ij} (R_{ij} - D_{ij})^2,\\quad
        K = -4 m \\circ (R - D) / (D + \\epsilon),
        \\quad m_{ij} = 0 \\text{ if } A_{ij} = 0 \\text{ and } D_{ij} > R_{ij} \\text{, else } 1

    with :math:`A` the kNN adjacency symmetrised by elementwise max (neighbours either way round).
    """

    def setup(self, data, state):
        n = data.n
        _check_k_fits(self.name, self.k, n)
        A = np.zeros((n, n), dtype=bool)
        A[np.repeat(np.arange(n), self.k), original_knn(data, self.k)[0].ravel()] = True
        state.data["knn"] = A | A.T

    def dropped(self, R, D, state):
        return ~state.data["knn"] & (D > R)

    def pair_form(self, state):
        """Metric MDS on the exact engine, reading ``R`` with the non-neighbours' entries negated
        (-0 included: they may be dropped when stretched), built once per run."""
        if state is not None and "R" in state.data and "knn" in state.data \
                and "R_signed" not in state.data:
            R = state.data["R"]
            state.data["R_signed"] = np.where(state.data["knn"], R, -R)
        return PairForm("mmds", weight="none", eps=self.eps, input="R_signed", signed_drop=True)

    def laplacian_affinity(self, state):
        """``1 / (1 + R)`` restricted to the symmetrised kNN graph (zero diagonal)."""
        return np.where(state.data["knn"], 1.0 / (1.0 + state.data["R"]), 0.0)


def mmds(eps=EPS):
    """Metric MDS (Kruskal 1964): :math:`C = \\sum_{i \\ne j} (R_{ij} - D_{ij})^2`."""
    return DistanceEmbedding("mmds", eps=eps)


def smmds(eps=EPS):
    """s-stress MDS (Takane, Young & de Leeuw 1977).

    .. math:: C = \\sum_{i \\ne j} (R_{ij}^2 - D_{ij}^2)^2
    """
    return SStress("smmds", eps=eps)


def sammon(eps=EPS):
    """Sammon mapping (Sammon 1969): stress divided by the input distance, normalised by its sum."""
    return Sammon("sammon", eps=eps)


def gmmds(k=30, eps=EPS):
    """Geodesic metric MDS on the k-nearest-neighbour graph (Tenenbaum et al. 2000, Isomap)."""
    return GeodesicMDS("gmmds", k, eps=eps)


def ballmmds(f=0.1, eps=EPS):
    """Metric MDS ignoring stretched pairs beyond the ``f``-quantile of the input distances."""
    f = check_range("ballmmds", "f", f, 0.0, 1.0, lo_open=True)  # fraction of distances in the ball
    return BallMDS("ballmmds", f=f, eps=eps)


def knnmmds(k=30, eps=EPS):
    """Metric MDS ignoring stretched pairs that are not k-nearest neighbours."""
    return KnnMDS("knnmmds", k, eps=eps)


# step sizes for side-by-side runs: stress forces grow like n, the step shrinks like 1 / n
_STEP = StepRule(1e-2, "distance")

SPECS = [
    MethodSpec("mmds", "distance", "Metric MDS: squared differences of input and output distances "
               "(Kruskal 1964)", dict(eps=EPS), mmds, neighbour_param=None, step=_STEP),
    MethodSpec("smmds", "distance", "s-stress MDS: squared differences of squared distances "
               "(ALSCAL; Takane, Young & de Leeuw 1977)", dict(eps=EPS), smmds,
               neighbour_param=None, step=StepRule(1e-4, "distance")),
    MethodSpec("sammon", "distance", "Sammon mapping: metric MDS stress weighted by 1/R "
               "(Sammon 1969)", dict(eps=EPS), sammon, neighbour_param=None, step=_STEP),
    MethodSpec("gmmds", "distance", "Geodesic metric MDS: distances are shortest paths on the kNN "
               "graph, k = perplexity (Isomap; Tenenbaum et al. 2000)", dict(k=30, eps=EPS), gmmds,
               neighbour_param="k", fd_variants=(dict(k=2), dict(k=8)), step=_STEP),
    MethodSpec("ballmmds", "distance", "Metric MDS that ignores stretched pairs farther apart than "
               "the f-quantile of the input distances", dict(f=0.1, eps=EPS), ballmmds,
               neighbour_param=None, fd_variants=(dict(f=1.0), dict(f=0.05), dict(f=0.5)),
               step=_STEP),
    MethodSpec("knnmmds", "distance", "Metric MDS that ignores stretched pairs that are not "
               "k-nearest neighbours, k = perplexity", dict(k=30, eps=EPS), knnmmds,
               neighbour_param="k", fd_variants=(dict(k=2), dict(k=8)), step=_STEP),
]
