"""``smallvis()``: the R-compatible functional entry point.

Parameter names and defaults follow the original (docs/original.md#arguments-and-defaults) except
that a library does not plot or print unasked: ``epoch_callback=None`` and ``verbose=False``. The
arguments are checked (:mod:`smallvis.run.arguments`), grouped into a
:class:`~smallvis.run.config.RunConfig` and run by the pipeline (:mod:`.pipeline`).
"""

from __future__ import annotations

from .._util.log import verbose_logging
from .._util.parallel import run_threads
from ..methods import EPS
from ..run.arguments import check_arguments
from ..run.config import RunConfig
from .diagnostics import DivergenceError
from .pipeline import embed

__all__ = ["DivergenceError", "smallvis"]


def smallvis(X, k=2, scale="absmax", Y_init=None, Y_init_sdev=None, perplexity=None,
             max_iter=None, pca=False, initial_dims=50, method="tsne", epoch_callback=None,
             epoch=None, min_cost=None, tol=1e-7, g2tol=None, momentum=0.5, final_momentum=0.8,
             mom_switch_iter=None, eta=None, min_gain=0.01, opt=None, exaggeration_factor=None,
             stop_lying_iter=None, late_exaggeration_factor=1.0, start_late_lying_iter=None,
             iter0_cost=False, ee_mon_epoch=None, ee_mon_wait=15, ee_mon_buffer=2, tol_wait=15,
             ret_extra=False, n_threads=0, use_cpp=False, bh=False, theta=1.0, eps=EPS,
             inp_kernel=None, nn=None, verbose=False, metric="euclidean", engine="auto",
             random_state=None, progress=False, defaults="smallvis", y=None, target_weight=0.5,
             dtype="float64", metric_kwds=None, target_metric="categorical"):
    """Embed ``X`` in ``k`` dimensions with a neighbour-embedding method.

    Names and defaults follow the R package smallvis; names of methods, optimisers, inits, scale
    modes and kernels match case-insensitively and by unique prefix. An argument left at None takes
    the value of the set of ``defaults``: the original's (``"smallvis"``, this function's default:
    the R package's numbers) or the modern set (``"auto"``, the estimator's and the command line's:
    a good picture for every method; see :mod:`smallvis.run.presets`).

    Parameters
    ----------
    X : array (n, p), DataFrame, or array (n, n)
        Data (a DataFrame's numeric columns are used), or distances with ``metric="precomputed"``.
    k : int
        Output dimensions.
    scale : {"absmax", "scale", "range", "none"} or bool or None
        Input scaling (ignored for distances). ``True`` is ``"scale"``, ``False``/``None`` ``"none"``.
    Y_init : {"rand", "pca", "spca", "pcascaled", "laplacian", "normlaplacian", "power"} or array (n, k), optional
        Initial coordinates. ``rand`` and ``spca`` are rescaled to standard deviation 1e-4;
        ``pcascaled`` is openTSNE's PCA start (the first column to sd 1e-4, the others in
        proportion); ``power`` is NCVis's power iteration on P. None: the method's default (``rand``,
        the original's, for every method but ncvis, whose default is ``power``; ``pcascaled`` under
        ``defaults="auto"``); on the ``sgd`` engine ``normlaplacian``
        (umap-learn's spectral init), ``power`` (NCVis) or ``pca`` (SGD-MDS), and named inits are
        then rescaled as umap-learn does (each column to [0, 10]) or NCVis does (mean 0, sd 1);
        SGD-MDS keeps the PCA scores' scale.
    Y_init_sdev : float, optional
        Rescale every initial column to this standard deviation (``pcascaled``: the first column,
        the others in proportion).
    perplexity : float, array (n,), "idp", "multiscale" or (mode, [candidates]), optional
        Perplexity (one per point if a vector); the number of neighbours for kNN-type kernels and
        for umap (``k``) and ncvis (``n_neighbors``). None: the method's default (30, as in the
        original; 15 for ncvis). ``"idp"``: the intrinsic-dimensionality perplexity, the first
        candidate (``idp_perps(n)`` or the given list) at which the mean soft correlation dimension
        stops rising (reported as ``res.perplexity``). ``"multiscale"``: the mean of the
        symmetrised affinities of every candidate.
    max_iter : int, optional
        Iterations (0 returns the initialisation); default 1000 (``defaults="auto"``: 750 for t-SNE),
        or on the ``sgd`` engine the number of epochs umap-learn would use (500 up to 10,000 points,
        else 200; NCVis 50).
    pca : bool or "whiten"
        Reduce the input to ``initial_dims`` principal components first (and whiten them).
    initial_dims : int
    method : str or (str, dict)
        A registered method (``list_methods()``), e.g. ``"tsne"`` or ``("tsne", {"inp_kernel": "knn"})``.
    epoch_callback : callable(Y, iter, cost), optional
        Called at iteration 0 (cost None unless ``iter0_cost``) and at every epoch.
    epoch : int, optional
        Iterations between cost evaluations (default ``max(1, round(max_iter / 10))``).
    min_cost, tol, g2tol, tol_wait
        Stopping rules: cost below ``min_cost`` (None: 0, or -inf for tee under ``defaults="auto"``); relative cost change per iteration below ``tol``;
        gradient 2-norm below ``g2tol``; neither of the latter two before ``tol_wait`` iterations after
        early exaggeration ends.
    momentum, final_momentum, mom_switch_iter, eta, min_gain
        Delta-bar-delta (``dbd``, ``ndbd``) settings; values given in ``opt`` take precedence.
        ``eta=None`` is 500 (the original's; ``defaults="auto"``: a step that suits the method).
        ``eta="optsne"`` is the original's ``n / exaggeration_factor``; ``eta="auto"`` is opt-SNE's
        and openTSNE's rate in this package's gradient units, ``max(n / (4 exaggeration_factor),
        50)`` (scikit-learn's ``learning_rate="auto"``). On the ``sgd`` engine ``eta`` is the initial
        SGD learning rate (default 1; ee 0.1; SGD-MDS: the first step, decaying to a hundredth).
    opt : str or (str, dict)
        Optimiser, ``"dbd"`` by default (``defaults="auto"``, t-SNE: ``("dbd", {"reset_gains":
        True})``, whose gains and momentum restart when early exaggeration ends; the others: ``ndbd``, ``adagrad``, ``adadelta``,
        ``rmsprop``, ``adam``, ``amsgrad``, ``adamax``, ``nadam``, ``steepd``, ``mom``, ``nag``,
        ``gmom``, and the line-search optimisers ``l-bfgs``, ``bfgs``, ``cg``, ``sd``, ``specd``
        with convergence options ``abs_tol``, ``rel_tol``, ``grad_tol``, ``ginf_tol``,
        ``step_tol``, ``max_fn``, ``max_gr``, ``max_fg``). Only ``dbd`` and ``ndbd`` take the
        top-level ``eta``, ``momentum``, ... arguments; ``res.opt`` holds the resolved settings
        (and ``counts`` of cost/gradient evaluations).
    exaggeration_factor, stop_lying_iter, late_exaggeration_factor, start_late_lying_iter
        Early exaggeration for iterations ``1..stop_lying_iter`` and late exaggeration after
        ``start_late_lying_iter`` (factors on P in the gradient; P itself is never modified).
        ``exaggeration_factor=None`` is 1 (``defaults="auto"``, t-SNE: 12 for 250 iterations).
    iter0_cost : bool
        Also record the cost of the initial coordinates.
    ee_mon_epoch, ee_mon_wait, ee_mon_buffer
        opt-SNE early-exaggeration monitoring: end exaggeration when the relative cost decrease slows.
    ret_extra : bool or list of str
        False: return the (n, k) array. True: a :class:`SmallVisResult`. A list also returns the named
        extras (``"X", "P", "Q", "DX", "DY", "V", "beta", "dint", "adegin", "adegout", "adegc", "pdeg"``).
    use_cpp : bool
        As in the original, only applies to a method given by bare name (the ``(name, params)`` form
        ignores it). With True, a method whose input kernel is the Gaussian calibrates its perplexities
        with the original's dense C++ variant: each point starts its bisection from its own
        guess ``0.5 U n / sum_j D_ij`` instead of the previous point's precision, so the affinities
        differ from the default path only within the calibration tolerance; a failed point's fallback
        weights include the point itself; and the extras ``V``, ``beta``, ``dint`` and ``adeg*`` are
        not available (asking for them is an error). Distances and gradients are the same either way.
    n_threads
        numba threads for this run: 0 (default) all that numba may use (``NUMBA_NUM_THREADS``), N
        at most N. Small problems run on one thread whatever it says; the result is the same for
        every thread count.
    bh, theta, inp_kernel, nn
        The original's Barnes-Hut t-SNE: ``bh=True`` with method ``"tsne"`` runs ``engine=("bh",
        {"theta": theta})`` on a sparse P from the ``"nngaussian"`` input kernel (or
        ``inp_kernel``, e.g. ``"knn"``); neighbours exact up to 20,000 points and approximate
        beyond, unless ``nn`` is ``"exact"`` or ``"approximate"``.
        Ignored, as in the original, for every other method. ``inp_kernel`` or ``nn`` without
        ``bh=True`` is an error (the original ignores them silently): give the kernel to the method
        instead, ``method=("tsne", {"inp_kernel": "nngaussian"})``.
    eps : float
        Passed to a method given by bare name (the ``(name, params)`` form keeps the method's default).
    verbose : bool
        Log calibration, choices and epoch costs to stderr.
    metric : str, (str, dict), callable or "precomputed"
        Input distances: ``"euclidean"`` (default), ``"sqeuclidean"``, ``"manhattan"``,
        ``"chebyshev"``, ``"minkowski"`` (``metric_kwds={"p": 3}``), ``"cosine"``,
        ``"correlation"``, ``"hamming"``, ``"jaccard"``, ``"canberra"``, ``"braycurtis"``,
        ``"haversine"`` (2 columns, latitude and longitude in radians), a numba-jitted ``f(x, y)``,
        or ``"precomputed"`` (``X`` is an (n, n) distance matrix). Gaussian kernels read the
        distance squared, kNN kernels and distance fitting the distance itself (docs/metrics.md).
        ``scale`` applies to the Minkowski family only; the other metrics read the data as given.
        Under ``defaults="smallvis"`` a precomputed matrix enters the Gaussian kernels unsquared
        (the original's quirk); under ``"auto"`` it is squared, as distances from coordinates are.
    engine : str or (str, dict)
        How gradients are computed (``list_methods()`` shows which engines serve which method):

        - ``"dense"``: exact, NumPy, full n x n matrices: the reference.
        - ``"exact"``: the same numbers from fused numba kernels that visit each pair once without
          n x n temporaries beyond P (methods without fused kernels fall back to the dense
          evaluation); with a sparse input kernel (``knn``, ``nngaussian``) P stays sparse.
        - ``"bh"``: Barnes-Hut (1-D, 2-D, 3-D output; option ``theta``, default 0.35, 0 = exact) and
          ``"fft"``: FIt-SNE interpolation (1-D, 2-D; options ``n_interp``, ``min_intervals``,
          ``interval_size``), for the t-SNE family (KL with a Student-t or heavy-tailed kernel: tsne,
          hssne, ...) on a kNN-restricted P; option ``knn`` ("auto", "exact", "nndescent", "pynndescent").
        - ``"sgd"``: the edge-sampling, negative-sampling SGD of LargeVis/UMAP/NCVis, for largevis,
          umap, tumap and ncvis, the same sampling of ee's and tee's costs, and SGD-MDS over sampled
          pairs for mmds, smmds and sammon; options ``negative_sample_rate`` (SGD-MDS: pairs per
          point per epoch), ``repulsion_strength``, ``knn``.
          ``max_iter`` counts epochs, ``opt`` and exaggeration do not apply and ``itercosts`` holds
          sampled estimates.
        - ``"auto"`` (default): ``dense`` below 1,000 points, ``exact`` above for methods it serves;
          above 10,000 points ``fft`` (1-D/2-D) or ``bh`` (3-D) for the t-SNE family and ``sgd`` for
          largevis, umap, tumap and ncvis. The choice is logged and kept in ``res.engine``; kernel
          compilation time is reported separately (``res.compile_secs``).
    random_state : int or numpy Generator, optional
        Controls every random choice.
    progress : bool or callable(iteration), optional
        True shows a progress bar on stderr; a callable is called after every iteration.
    defaults : {"smallvis", "auto"}
        Which set of defaults fills the arguments left at None: ``"smallvis"``, the R package's (its
        numbers are reproduced), or ``"auto"``, the modern set (:mod:`smallvis.run.presets`): openTSNE's
        recipe for t-SNE, the ``sgd`` engine for largevis/umap/tumap/ncvis, a working step size for
        every other method. What it chose is logged with ``verbose`` and kept in ``res.settings``.
        Under ``"auto"`` a diverged run raises :class:`DivergenceError`; under ``"smallvis"`` it
        warns and returns the last finite coordinates, with ``res.diverged`` set.
    y : array (n,), optional
        Labels for a supervised (or, with ``-1``/NaN/None for unlabelled points, semi-supervised)
        embedding: affinities between differently labelled points are divided by
        ``exp(2.5 / (1 - target_weight))`` and P re-scaled as the method scales it
        (:mod:`smallvis.affinity.supervised`). Methods with input affinities only.
    target_weight : float
        Weight of the labels against the data, in [0, 1] (umap-learn's; 1 removes cross-class
        affinities).
    dtype : {"float64", "float32"}
        Type of the returned coordinates (``res.Y``). The optimisation always runs in float64;
        float32 halves the memory of the result (umap-learn returns float32).
    metric_kwds : dict, optional
        Keyword arguments of ``metric`` (``{"p": 3}`` for minkowski).
    target_metric : {"categorical", "l2"}
        What ``y`` is: classes (default), or a continuous target (``"l2"``; NaN for unlabelled), whose
        pairs are weakened by ``exp(-w/(1-w) (y_i - y_j)^2 / s^2)``, ``s^2`` the median squared
        difference along the stored pairs (umap-learn's name; :mod:`smallvis.affinity.supervised`).

    Returns
    -------
    ndarray (n, k) or SmallVisResult
    """
    with verbose_logging(verbose), run_threads(n_threads):
        arguments = check_arguments(locals())
        return embed(arguments.pop("X"), RunConfig.from_arguments(**arguments))
