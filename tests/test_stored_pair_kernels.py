"""The sparse-P engines' passes over the stored entries of P (:mod:`smallvis.engines.stored_pair_kernels`)
against NumPy on the kernels' declarations: every radial kernel's attraction (the vectorised row
passes of the costly ones), with two points at the same place (``d2 = 0`` on a stored pair)."""

import numpy as np
import pytest
from scipy import sparse

from smallvis.engines.attraction_kernels import csr_arrays
from smallvis.engines.exact_kernels import kernel_params
from smallvis.methods.output_kernels import KERNELS, PARAMS

KP = {"t": {}, "gaussian": {}, "heavy-tailed": {"alpha": 0.6}, "tdof": {"dof": 3.0},
      "umap": {"a": 1.58, "b": 0.9}, "umap-soft": {"a": 1.58, "b": 0.9, "gr_eps": 1e-3},
      "umap-b1": {"a": 1.2, "b": 1.0}, "power-heavy": {"alpha": 0.6, "b": 0.6}}


def _case(k, n=120, seed=0):
    rng = np.random.default_rng(seed)
    P = sparse.random(n, n, density=0.15, random_state=seed, format="csr")
    P.setdiag(0.0)
    P = (P + P.T).tocsr()
    P.eliminate_zeros()
    Y = rng.normal(scale=2.0, size=(n, k))
    i, j = P.nonzero()
    Y[j[0]] = Y[i[0]]  # a stored pair at distance 0
    return P, Y


def _numpy_attraction(P, Y, decl, kp):
    args = dict(zip(PARAMS, kp))
    i, j = P.nonzero()
    dy = Y[i] - Y[j]
    d2 = np.sum(dy * dy, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = decl.weight(d2, **{p: args[p] for p in decl.weight_params})
        g = decl.grad_factor(d2, w, **{p: args[p] for p in decl.grad_params})
    if decl.name == "umap":  # the engines' convention: g = 0 at d2 + gr_eps = 0 (the self pair)
        g = np.where(d2 + args["gr_eps"] > 0.0, g, 0.0)
    g = np.broadcast_to(g, d2.shape)
    A = np.zeros_like(Y)
    np.add.at(A, i, (np.asarray(P[i, j]).ravel() * g)[:, None] * dy)
    return A


@pytest.mark.parametrize("case", sorted(KP))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_attraction_matches_numpy_for_every_radial_kernel(case, k):
    from smallvis.engines.stored_pair_kernels import attraction

    decl = KERNELS[case.split("-")[0] if case.startswith("umap") else case]
    kp = kernel_params(**KP[case])
    P, Y = _case(k)
    A = np.empty_like(Y)
    attraction(*csr_arrays(P), Y, decl.code, kp, A)
    expected = _numpy_attraction(P, Y, decl, kp)
    assert np.isfinite(A).all()
    np.testing.assert_allclose(A, expected, rtol=1e-12, atol=1e-13 * np.abs(expected).max())


@pytest.mark.parametrize("name", ["jssne", "rklsne", "absne", "abssne", "ncvis"])
def test_the_gradient_does_not_depend_on_asking_for_the_cost(name):
    """The stored-pair passes skip the cost terms when only the gradient is asked for: the same
    gradient bits either way, and the cost of a combined call is the cost-only call's."""
    from engine_checks import sparse_states, x80
    from smallvis.engines.bh import BarnesHutEngine

    method, _, sp = sparse_states(x80(), name)
    Y = np.random.default_rng(4).normal(scale=2.0, size=(80, 2))
    engine = BarnesHutEngine(theta=0.0)
    both = engine.evaluate(method, sp, Y, 4.0)
    grad = engine.evaluate(method, sp, Y, 4.0, cost=False)[1]
    cost = engine.evaluate(method, sp, Y, 4.0, grad=False)[0]
    assert np.array_equal(both[1], grad)
    np.testing.assert_allclose(both[0], cost, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("n", [7, 61])  # fewer points than blocks; n not a multiple of them
def test_transposed_forces_by_column_blocks_match_numpy(k, n):
    """NeRV/JSE's transposed stiffness: each entry's ``(A, B)`` stored in the column blocks' order
    and summed per column, ``F[i] = sum_j (A_ji + s_j B_ji) (y_i - y_j)``; empty rows and blocks
    included."""
    from smallvis.engines.approx_nerv_kernels import column_blocks, transposed_forces

    rng = np.random.default_rng(n + k)
    P = sparse.random(n, n, density=0.3, random_state=n, format="csr")
    P = P.tolil()
    P[1, :] = 0.0  # an empty row
    P = P.tocsr()
    P.eliminate_zeros()
    P.sum_duplicates()
    indptr, indices, _ = csr_arrays(P)
    A, B = rng.normal(size=P.nnz), rng.normal(size=P.nnz)
    shift, Y = rng.normal(size=n), rng.normal(size=(n, k))
    tpos, cols, starts = column_blocks(indptr, indices, n)
    AB = np.empty((P.nnz, 2))
    AB[tpos, 0], AB[tpos, 1] = A, B
    F = np.full((n, k), np.nan)
    transposed_forces(cols, starts, AB, Y, shift, F)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    dk = sparse.csr_matrix((A + shift[rows] * B, indices, indptr), shape=(n, n)).toarray()
    expected = np.einsum("ji,ijd->id", dk, Y[:, None] - Y[None])
    np.testing.assert_allclose(F, expected, rtol=1e-12, atol=1e-12)
    assert np.array_equal(np.sort(tpos), np.arange(P.nnz))
