"""``smallvis()``: the R-compatible functional entry point. Validate -> build -> run -> result.

Parameter names and defaults follow the original (docs/original.md#arguments-and-defaults) except
that a library does not plot or print unasked: ``epoch_callback=None`` and ``verbose=False``.
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np

from ..run import driver, presets
from .._util.log import logger, verbose_logging
from .._util.parallel import run_threads
from .._util.rng import as_generator
from ..run.arguments import check_arguments
from ..engines import resolve_engine
from ..run.init import (check_init_matrix, pca_init, power_iteration_init, rescale, resolve_init,
                        scale_by_first_column, spectral_init)
from ..io.data import InputData
from ..io.preprocess import as_numeric_matrix, pca_scores, pca_whiten, resolve_scale, scale_input
from ..io.validate import check_distance_matrix
from ..methods import EPS, build_method, split_spec
from ..run.optim import Objective, build_optimizer, split_opt
from ..run.result import SmallVisResult

EXTRA_NAMES = ("X", "P", "Q", "DX", "DY", "V", "beta", "dint", "adegin", "adegout", "adegc",
               "pdeg", "alpha", "geo", "logZ", "idp")


def smallvis(X, k=2, scale="absmax", Y_init=None, Y_init_sdev=None, perplexity=None,
             max_iter=None, pca=False, initial_dims=50, method="tsne", epoch_callback=None,
             epoch=None, min_cost=None, tol=1e-7, g2tol=None, momentum=0.5, final_momentum=0.8,
             mom_switch_iter=None, eta=None, min_gain=0.01, opt=None, exaggeration_factor=None,
             stop_lying_iter=None, late_exaggeration_factor=1.0, start_late_lying_iter=None,
             iter0_cost=False, ee_mon_epoch=None, ee_mon_wait=15, ee_mon_buffer=2, tol_wait=15,
             ret_extra=False, n_threads=0, use_cpp=False, bh=False, theta=1.0, eps=EPS,
             inp_kernel=None, nn=None, verbose=False, metric="euclidean", engine="auto",
             random_state=None, progress=False, defaults="smallvis"):
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
        (umap-learn's spectral init) or ``power`` (NCVis), and named inits are then rescaled as
        umap-learn does (each column to [0, 10]) or NCVis does (mean 0, sd 1).
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
        SGD learning rate (default 1).
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
    metric : {"euclidean", "precomputed"}
    engine : str or (str, dict)
        How gradients are computed (``list_methods()`` shows which engines serve which method):

        - ``"dense"``: exact, NumPy, full n x n matrices: the reference.
        - ``"exact"``: the same numbers from fused numba kernels that visit each pair once without
          n x n temporaries beyond P (methods without fused kernels fall back to the dense
          evaluation); with a sparse input kernel (``knn``, ``nngaussian``) P stays sparse.
        - ``"bh"``: Barnes-Hut (1-D, 2-D, 3-D output; option ``theta``, default 0.5, 0 = exact) and
          ``"fft"``: FIt-SNE interpolation (1-D, 2-D; options ``n_interp``, ``min_intervals``,
          ``interval_size``), for the t-SNE family (KL with a Student-t or heavy-tailed kernel: tsne,
          hssne, ...) on a kNN-restricted P; option ``knn`` ("auto", "exact", "nndescent").
        - ``"sgd"``: the edge-sampling, negative-sampling SGD of LargeVis/UMAP/NCVis, for largevis,
          umap, tumap and ncvis; options ``negative_sample_rate``, ``repulsion_strength``, ``knn``.
          ``max_iter`` counts epochs, ``opt`` and exaggeration do not apply and ``itercosts`` holds
          sampled estimates.
        - ``"auto"`` (default): ``dense`` below 1,000 points, ``exact`` above for methods it serves;
          above 10,000 points ``fft`` (1-D/2-D) or ``bh`` (3-D) for the t-SNE family and ``sgd`` for
          the stochastic methods. The choice is logged and kept in ``res.engine``; kernel
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

    Returns
    -------
    ndarray (n, k) or SmallVisResult
    """
    with verbose_logging(verbose), run_threads(n_threads):
        return _smallvis(**check_arguments(locals()))


def _resolve_extras(ret_extra):
    if ret_extra is False or ret_extra is None:
        return False, frozenset()
    if ret_extra is True:
        return True, frozenset()
    names = [ret_extra] if isinstance(ret_extra, str) else list(ret_extra)
    lookup = {n.lower(): n for n in EXTRA_NAMES}
    out = set()
    for name in names:
        if not isinstance(name, str) or name.lower() not in lookup:
            raise ValueError(f"unknown ret_extra item {name!r}; valid: {', '.join(EXTRA_NAMES)}")
        out.add(lookup[name.lower()])
    return True, frozenset(out)


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not float(value) == int(value) or int(value) < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}; got {value!r}")
    return int(value)


def _prepare_input(X, *, precomputed, scale, pca, initial_dims, k, rng):
    """Processed input and what was done to it: (InputData, pca_dims, whiten_dims, pca_applied)."""
    X = as_numeric_matrix(X)
    if precomputed:
        check_distance_matrix(X)
        return InputData(X, precomputed=True), None, None, False
    mode = resolve_scale(scale)
    if mode == "absmax":
        _warn_column_ranges(X)
    X = scale_input(X, mode)
    whiten = isinstance(pca, str) and pca.lower().startswith("w")
    if isinstance(pca, str) and not whiten:
        raise ValueError(f"pca must be True, False or 'whiten'; got {pca!r}")
    if not (pca or whiten):
        return InputData(X), None, None, False
    if initial_dims < k:
        raise ValueError(f"initial_dims ({initial_dims}) must be at least k ({k}) when using PCA")
    if min(X.shape) < initial_dims:
        logger.info("PCA skipped: initial_dims = %d is not below min(n, p) = %d", initial_dims,
                    min(X.shape))
        return InputData(X), None, None, False
    if whiten:
        logger.info("Whitening to %d dimensions", initial_dims)
        return InputData(pca_whiten(X, initial_dims, rng)), None, initial_dims, True
    logger.info("PCA: keeping %d dimensions", initial_dims)
    return InputData(pca_scores(X, initial_dims, rng)), initial_dims, None, True


# absmax divides every column by one number; beyond this ratio of the widest column's range to the
# median column's, the widest columns decide the distances (wine: 370; iris 2, digits and MNIST 1)
RANGE_RATIO = 100.0


def _warn_column_ranges(X: np.ndarray) -> None:
    """Warn when absmax scaling keeps columns on very different scales (features in different
    units): ``scale="scale"`` is then usually wanted."""
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] < 2:
        return
    ranges = np.ptp(X, axis=0)
    varying = ranges[ranges > 0]
    if varying.size < 2:
        return
    median = float(np.median(varying))
    widest = int(np.argmax(ranges))
    if median > 0 and ranges[widest] / median > RANGE_RATIO:
        warnings.warn(
            f"the input's column ranges differ widely (column {widest + 1} spans "
            f"{ranges[widest]:.4g}, the median column {median:.4g}): scale='absmax' keeps those "
            "differences, so the widest columns decide the distances; scale='scale' (each column to "
            "unit variance; on the command line --scale scale) may be wanted", UserWarning,
            stacklevel=5)


def _build_optimizer(opt, *, eta, momentum, final_momentum, mom_switch_iter, min_gain, n,
                     exaggeration_factor):
    name, params = split_opt(opt)
    if name in ("dbd", "ndbd"):
        merged = dict(eta=eta, momentum=momentum, final_momentum=final_momentum,
                      mom_switch_iter=mom_switch_iter, min_gain=min_gain)
        params = {**merged, **params}
        if isinstance(params["eta"], str):
            rule = params["eta"].strip().lower()
            if rule == "optsne":
                params["eta"] = n / exaggeration_factor
                logger.info("opt-SNE learning rate (the original's): eta = n / %g = %g",
                            exaggeration_factor, params["eta"])
            elif rule == "auto":
                params["eta"] = presets.auto_eta(n, exaggeration_factor)
                logger.info("learning rate 'auto': eta = max(n / (4 x %g), %g) = %g",
                            exaggeration_factor, presets.ETA_FLOOR, params["eta"])
            else:
                raise ValueError(f"eta must be a positive number, 'auto' or 'optsne'; got "
                                 f"{params['eta']!r}")
    return build_optimizer(name, params)


def _initial_Y(Y_init, init_name, *, data, method, state, k, rng, pca_applied, Y_init_sdev):
    n = data.n
    if init_name == "matrix":
        Y = check_init_matrix(Y_init, n, k)
    elif init_name == "rand":
        Y = rng.standard_normal((n, k))
    elif init_name in ("pca", "spca", "pcascaled"):
        Y = pca_init(data.X, k, precomputed=data.precomputed, already_pca=pca_applied, rng=rng)
        if init_name == "pcascaled":  # Y_init_sdev: the first column's sd, the others in proportion
            Y = scale_by_first_column(Y, 1e-4 if Y_init_sdev is None else float(Y_init_sdev))
            Y_init_sdev = None
    elif init_name == "power":
        A = method.laplacian_affinity(state)
        if A is None:
            raise ValueError(f"Y_init='power' needs input affinities; method {method.name!r} has none")
        Y = power_iteration_init(A, k, rng, n_iter=int(method.params.get("n_init_epochs", 20)))
    else:
        A = method.laplacian_affinity(state)
        if A is None:
            A = 1.0 / (1.0 + data.distances())
            np.fill_diagonal(A, 0.0)

        def fallback():
            return pca_init(data.X, k, precomputed=data.precomputed, already_pca=pca_applied, rng=rng)

        Y = spectral_init(A, k, normalized=init_name == "normlaplacian", fallback=fallback)
    if Y_init_sdev is not None or init_name in ("rand", "spca"):
        Y = rescale(Y, 1e-4 if Y_init_sdev is None else float(Y_init_sdev))
    return Y


def _smallvis(X, k, scale, Y_init, Y_init_sdev, perplexity, max_iter, pca, initial_dims, method,
              epoch_callback, epoch, min_cost, tol, g2tol, momentum, final_momentum, mom_switch_iter,
              eta, min_gain, opt, exaggeration_factor, stop_lying_iter, late_exaggeration_factor,
              start_late_lying_iter, iter0_cost, ee_mon_epoch, ee_mon_wait, ee_mon_buffer, tol_wait,
              ret_extra, n_threads, use_cpp, bh, theta, eps, inp_kernel, nn, verbose, metric, engine,
              random_state, progress, defaults):
    start = time.perf_counter()
    rng = as_generator(random_state)
    k = _check_int("k (output dimensions)", k, 1)
    if max_iter is not None:
        max_iter = _check_int("max_iter", max_iter, 0) if max_iter >= 0 else 0
    from .._util.names import match_name

    precomputed = match_name(metric, ("euclidean", "precomputed"), "metric") == "precomputed"
    defaults = presets.resolve_defaults_name(defaults)
    name, method_params, _ = split_spec(method)
    if perplexity is None:
        perplexity = presets.preset_perplexity(defaults, name)
    engine = presets.preset_engine(defaults, name, engine)
    m = build_method(method, perplexity=perplexity, eps=eps, use_cpp=bool(use_cpp))
    if bh:
        engine = _barnes_hut_tsne(m, method, engine, theta=theta, inp_kernel=inp_kernel, nn=nn)
    elif inp_kernel is not None or nn is not None:
        given = "inp_kernel" if inp_kernel is not None else "nn"
        raise ValueError(
            f"{given} only applies with bh=True (the original ignores it otherwise); to change the "
            f"input kernel of another run, give it to the method, e.g. method=({m.name!r}, "
            "{'inp_kernel': 'nngaussian'}); the sparse engines take neighbours as an option, e.g. "
            "engine=('fft', {'knn': 'exact'})")
    if Y_init is not None:
        resolve_init(Y_init)  # a bad name fails before any work
    if epoch is not None:
        epoch = _check_int("epoch", epoch, 1)
    want_result, extras = _resolve_extras(ret_extra)

    data, pca_dims, whiten_dims, pca_applied = _prepare_input(
        X, precomputed=precomputed, scale=scale, pca=pca, initial_dims=initial_dims, k=k, rng=rng)
    n = data.n
    if n < 3:
        raise ValueError(f"need at least 3 points to embed; got {n}")
    if Y_init is not None and not isinstance(Y_init, str):
        check_init_matrix(Y_init, n, k)
    eng = resolve_engine(engine, m, n, k)
    settings = presets.resolve(
        defaults, m.name, n=n, stochastic=getattr(eng, "stochastic", False), method_params=method_params,
        given=dict(Y_init=Y_init, Y_init_sdev=Y_init_sdev, max_iter=max_iter, eta=eta, opt=opt,
                   exaggeration_factor=exaggeration_factor, stop_lying_iter=stop_lying_iter,
                   mom_switch_iter=mom_switch_iter, min_cost=min_cost))
    logger.info("%s", presets.describe(settings))
    if settings.method_params:
        method = _with_params(method, settings.method_params, eps)
        m = build_method(method, perplexity=perplexity)
    v = settings.values
    Y_init, Y_init_sdev = v["Y_init"], v["Y_init_sdev"]
    max_iter, eta, opt = v["max_iter"], v["eta"], v["opt"]
    exaggeration_factor, stop_lying_iter = v["exaggeration_factor"], v["stop_lying_iter"]
    mom_switch_iter, min_cost = v["mom_switch_iter"], v["min_cost"]
    eng.check(n)
    compile_secs = _warm_up(eng, m, k)
    logger.info("%s: %d points, %s input dims, method %s, engine %s", "smallvis", n,
                "precomputed" if precomputed else data.X.shape[1], m.name, eng.name)
    common = dict(data=data, m=m, k=k, rng=rng, Y_init=Y_init, Y_init_sdev=Y_init_sdev,
                  pca_applied=pca_applied, max_iter=max_iter, epoch=epoch, eta=eta,
                  epoch_callback=epoch_callback, progress=progress, extras=extras,
                  iter0_cost=iter0_cost and (verbose or want_result), record=want_result)
    if getattr(eng, "stochastic", False):
        _refuse_for_sgd(opt=opt, exaggeration_factor=exaggeration_factor,
                        late_exaggeration_factor=late_exaggeration_factor, ee_mon_epoch=ee_mon_epoch)
        run = _run_stochastic(eng, **common)
    else:
        run = _run_gradient(
            eng, **common, min_cost=min_cost, tol=tol, g2tol=g2tol, tol_wait=tol_wait,
            momentum=momentum, final_momentum=final_momentum, mom_switch_iter=mom_switch_iter,
            min_gain=min_gain, opt=opt, exaggeration_factor=exaggeration_factor,
            stop_lying_iter=stop_lying_iter, late_exaggeration_factor=late_exaggeration_factor,
            start_late_lying_iter=start_late_lying_iter, ee_mon_epoch=ee_mon_epoch,
            ee_mon_wait=ee_mon_wait, ee_mon_buffer=ee_mon_buffer)
    out = run["out"]
    _teach(out, m, run, defaults=defaults, data=data)
    if not want_result:
        return out.Y
    res = SmallVisResult(
        Y=out.Y, N=n, origD=None if precomputed else data.X.shape[1], scale=scale,
        Y_init=run["init"], method=method, iter=out.iter, time_secs=time.perf_counter() - start,
        G2norm=out.G2norm, costs=run["pcost"](out.Y), opt=run["opt"],
        perplexity=_reported_perplexity(m, run["state"]), itercosts=out.itercosts, pca_dims=pca_dims,
        whiten_dims=whiten_dims, diverged=out.diverged, defaults=defaults,
        settings=_plain_settings(settings.chosen))
    res.engine, res.compile_secs = eng.name, compile_secs
    for key, value in run.get("schedule", {}).items():
        setattr(res, key, value)
    res.extras = _collect_extras(extras, m, run["state"], data, out.Y)
    return res


def _with_params(method, extra: dict, eps: float):
    """``method`` as ``(name, params)`` with ``extra`` added; a bare name keeps the top-level ``eps``
    it would have received (the original's eps rule), so only ``extra`` changes."""
    from ..methods import REGISTRY

    name, params, bare = split_spec(method)
    params = {**params, **extra}
    if bare and "eps" in REGISTRY[name].params:
        params.setdefault("eps", eps)
    return (name, params)


class DivergenceError(RuntimeError):
    """The optimisation diverged (non-finite coordinates or cost): no picture to return."""


def _teach(out, m, run, *, defaults, data) -> None:
    """After a run: refuse a diverged one (``defaults="auto"``) or warn, and say what to change when
    the coordinates exploded, the cost rose, or the layout collapsed onto a line."""
    eta = run["opt"].get("eta")
    step = f"eta={eta:.3g}" if isinstance(eta, (int, float)) else "the step size"
    smaller = f"a smaller eta (e.g. eta={eta / 10:.3g})" if isinstance(eta, (int, float)) else \
        "a smaller eta"
    if out.diverged:
        message = (f"the optimisation of method {m.name!r} diverged at iteration {out.diverged_at} "
                   f"(non-finite coordinates or cost) with {step}: try {smaller}, "
                   "Y_init='pcascaled', or opt='l-bfgs'")
        if defaults == "auto":
            raise DivergenceError(message)
        warnings.warn(message + "; the last finite coordinates are returned (res.diverged is set)",
                      RuntimeWarning, stacklevel=4)
        return
    if out.exploding:
        warnings.warn(f"the coordinates grew beyond {driver.EXPLODING:.0e}: {step} is too large for "
                      f"method {m.name!r}; try {smaller} or another optimiser", RuntimeWarning,
                      stacklevel=4)
    elif out.cost_rose is not None:
        best, best_it, final = out.cost_rose
        warnings.warn(f"the cost of method {m.name!r} rose from {best:.4g} (iteration {best_it}) to "
                      f"{final:.4g} at the end: {step} is too large for it to settle; try {smaller} "
                      "or more iterations", RuntimeWarning, stacklevel=4)
    flat = degenerate_layout(out.Y)
    if flat is not None:
        warnings.warn(f"the embedding is nearly one-dimensional (its spread along axis 2 is {flat:.1e} "
                      "of its spread along axis 1): if the data are not, the input's widest columns "
                      "may dominate the distances (try scale='scale'), or the step size is too large",
                      RuntimeWarning, stacklevel=4)


# below this ratio of the second to the first singular value, a 2-D+ layout is a line (wine under
# absmax scaling: 0.025; t-SNE of clustered data: 0.3 and above)
FLAT_RATIO = 0.05


def degenerate_layout(Y: np.ndarray) -> float | None:
    """The ratio of the second to the first singular value of the centred ``Y`` when it is below
    :data:`FLAT_RATIO` (a layout collapsed onto a line); None otherwise or for 1-D output."""
    if Y.ndim != 2 or Y.shape[1] < 2 or Y.shape[0] < 3 or not np.all(np.isfinite(Y)):
        return None
    s = np.linalg.svd(Y - Y.mean(axis=0), compute_uv=False)
    if s[0] == 0:
        return None
    ratio = s[1] / s[0]
    return float(ratio) if ratio < FLAT_RATIO else None


def _plain_settings(chosen: dict) -> dict:
    """What the defaults chose, as plain values (the optimiser's ``(name, {..})`` as given)."""
    return {key: (list(value) if isinstance(value, tuple) else value) for key, value in chosen.items()}


def _warm_up(eng, m, k) -> float:
    """Compile (or load from numba's disk cache) the engine's kernels before the run, so the run's
    timings and progress do not include it; the time is logged and kept in ``res.compile_secs``."""
    if not hasattr(eng, "warm_up"):
        return 0.0
    secs = eng.warm_up(m, k)
    logger.info("engine %s: kernels ready in %.2f s (compiled on first use, later loaded from the "
                "disk cache)", eng.name, secs)
    return secs


def _barnes_hut_tsne(m, method, engine, *, theta, inp_kernel, nn):
    """The original's ``bh=TRUE``: t-SNE on the Barnes-Hut engine with sparse P from the
    ``nngaussian`` kernel (or ``inp_kernel``) and approximate neighbours unless ``nn="exact"``."""
    import dataclasses

    from .._util.names import match_name

    if m.name != "tsne":
        logger.info("bh=True only applies to method 'tsne'; ignored for %r", m.name)
        return engine
    _, params, _ = split_spec(method)
    kernel = inp_kernel if inp_kernel is not None else params.get("inp_kernel", "nngaussian")
    m.recipe = dataclasses.replace(m.recipe, kernel=kernel)
    # no nn: "auto" (exact up to 20,000 points: faster than compiling pynndescent, and exact)
    knn = "auto" if nn is None else {"approximate": "nndescent", "exact": "exact"}[
        match_name(nn, ("approximate", "exact"), "nn")]
    logger.info("bh=True: Barnes-Hut t-SNE, theta = %g, input kernel %s, %s neighbours", theta,
                kernel, knn)
    return ("bh", {"theta": theta, "knn": knn})


def _reported_perplexity(m, state):
    """The perplexity the method used: the chosen IDP for ``"idp"``, the candidates for
    ``"multiscale"``, else the method's value."""
    p = m.perplexity()
    aff = getattr(state, "affinities", None)
    if aff is not None and isinstance(p, (str, tuple)):
        return aff.perplexity
    return p


def _refuse_for_sgd(*, opt, exaggeration_factor, late_exaggeration_factor, ee_mon_epoch):
    """The settings that have no meaning for the stochastic engine: a clear error, not silence."""
    if exaggeration_factor != 1 or late_exaggeration_factor != 1 or ee_mon_epoch is not None:
        raise ValueError("engine 'sgd' does not use exaggeration (exaggeration_factor, "
                         "late_exaggeration_factor, ee_mon_epoch): use an exact engine, or leave "
                         "them at their defaults")
    if not (isinstance(opt, str) and opt.lower() == "dbd"):
        raise ValueError(f"engine 'sgd' has its own optimiser (SGD with a decaying learning rate "
                         f"eta); opt={opt!r} does not apply")


def _run_gradient(eng, *, data, m, k, rng, Y_init, Y_init_sdev, pca_applied, max_iter, epoch, eta,
                  epoch_callback, progress, extras, iter0_cost, record, min_cost, tol, g2tol,
                  tol_wait, momentum, final_momentum, mom_switch_iter, min_gain, opt,
                  exaggeration_factor, stop_lying_iter, late_exaggeration_factor,
                  start_late_lying_iter, ee_mon_epoch, ee_mon_wait, ee_mon_buffer):
    """An exact-gradient engine driven by an optimiser (the original's loop)."""
    n = data.n
    max_iter = 1000 if max_iter is None else max_iter
    eta = 500.0 if eta is None else eta
    # lazy defaults of the original
    stop_lying_iter = max(1, max_iter // 10) if stop_lying_iter is None else stop_lying_iter
    start_late_lying_iter = (max_iter - max(1, max_iter // 10) if start_late_lying_iter is None
                             else start_late_lying_iter)
    if exaggeration_factor != 1 and stop_lying_iter < 1:
        raise ValueError("stop_lying_iter must be >= 1 when exaggeration_factor != 1")
    if late_exaggeration_factor != 1 and start_late_lying_iter < 1:
        raise ValueError("start_late_lying_iter must be >= 1 when late_exaggeration_factor != 1")
    if exaggeration_factor != 1 and late_exaggeration_factor != 1 and \
            start_late_lying_iter < stop_lying_iter:
        raise ValueError("start_late_lying_iter must be >= stop_lying_iter when both "
                         "exaggerations are used")
    mom_switch_iter = stop_lying_iter + 150 if mom_switch_iter is None else mom_switch_iter
    epoch = max(1, round(max_iter / 10)) if epoch is None else epoch
    optimizer = _build_optimizer(opt, eta=eta, momentum=momentum, final_momentum=final_momentum,
                                 mom_switch_iter=mom_switch_iter, min_gain=min_gain, n=n,
                                 exaggeration_factor=exaggeration_factor)
    state = eng.prepare(m, data, extras=extras, rng=rng)
    init_name = resolve_init(m.default_init if Y_init is None else Y_init)
    Y = _initial_Y(Y_init, init_name, data=data, method=m, state=state, k=k, rng=rng,
                   pca_applied=pca_applied, Y_init_sdev=Y_init_sdev)
    objective = Objective(m, state, eng)
    schedule = driver.Schedule(
        max_iter=max_iter, epoch=epoch, min_cost=min_cost, tol=tol, g2tol=g2tol, tol_wait=tol_wait,
        exaggeration_factor=exaggeration_factor, stop_lying_iter=stop_lying_iter,
        late_exaggeration_factor=late_exaggeration_factor,
        start_late_lying_iter=start_late_lying_iter, ee_mon_epoch=ee_mon_epoch,
        ee_mon_wait=ee_mon_wait, ee_mon_buffer=ee_mon_buffer, iter0_cost=iter0_cost, record=record)
    if max_iter < 1:
        out = driver.RunOutcome(Y=Y, iter=0, G2norm=None, stop_lying_iter=stop_lying_iter)
        if epoch_callback is not None:
            epoch_callback(Y, 0, None)
    else:
        with _progress_hook(progress, max_iter, m.name) as hook:
            out = driver.run(objective, optimizer, Y, schedule, callback=epoch_callback,
                             on_iteration=hook)
    stages = {}
    used_late = late_exaggeration_factor != 1 and m.uses_affinities and (
        exaggeration_factor == 1 or out.start_late_lying_iter <= out.iter)
    if exaggeration_factor != 1 and m.uses_affinities:
        stages.update(exaggeration_factor=exaggeration_factor, stop_lying_iter=out.stop_lying_iter)
    if used_late:
        stages.update(late_exaggeration_factor=late_exaggeration_factor,
                      start_late_lying_iter=out.start_late_lying_iter)
    return dict(out=out, state=state, init=init_name, schedule=stages,
                opt={**optimizer.params(),
                     "counts": dict(getattr(optimizer, "counts", objective.counts))},
                pcost=lambda Y: objective.pcost(Y, exaggeration=1.0))


def _run_stochastic(eng, *, data, m, k, rng, Y_init, Y_init_sdev, pca_applied, max_iter, epoch, eta,
                    epoch_callback, progress, extras, iter0_cost, record):
    """A stochastic engine runs its own epochs (``max_iter`` epochs, initial learning rate ``eta``)."""
    from ..engines.sgd import default_epochs

    plan = eng.plan(m)
    n_epochs = default_epochs(plan.epochs, data.n) if max_iter is None else max_iter
    eta = 1.0 if eta is None else eta
    if isinstance(eta, str) or not float(eta) > 0:
        raise ValueError(f"engine 'sgd': eta (the initial learning rate) must be a positive "
                         f"number; got {eta!r}")
    epoch = max(1, round(n_epochs / 10)) if epoch is None else epoch
    state = eng.prepare(m, data, rng)
    init_name = resolve_init(plan.init if Y_init is None else Y_init)
    Y = _initial_Y(Y_init, init_name, data=data, method=m, state=state, k=k, rng=rng,
                   pca_applied=pca_applied, Y_init_sdev=None)
    if init_name != "matrix":
        Y = _stochastic_scale(Y, plan.forces)
    if Y_init_sdev is not None:
        Y = rescale(Y, float(Y_init_sdev))
    if n_epochs < 1:
        out = driver.RunOutcome(Y=Y, iter=0, G2norm=None)
        if epoch_callback is not None:
            epoch_callback(Y, 0, None)
    else:
        with _progress_hook(progress, n_epochs, f"{m.name} (sgd)") as hook:
            out = eng.run(m, state, Y, n_epochs=n_epochs, eta=float(eta), epoch=epoch, rng=rng,
                          callback=epoch_callback, on_iteration=hook, record=record,
                          iter0_cost=iter0_cost)
    opt = {"name": "sgd", "eta": float(eta), "n_epochs": n_epochs, **eng.options()}
    if "logZ" in state.data:
        opt["logZ"] = state.data["logZ"]
    return dict(out=out, state=state, init=init_name, opt=opt,
                pcost=lambda Y: eng.point_costs(m, state, Y) if n_epochs > 0 else
                np.full(data.n, np.nan))


def _stochastic_scale(Y, forces):
    """Named inits on the sgd engine: each column to [0, 10] (umap-learn), or to mean 0 and sd 1
    (NCVis)."""
    Y = Y - Y.mean(axis=0)
    if forces == "nce":
        sd = Y.std(axis=0)
        return Y / np.where(sd > 0, sd, 1.0)
    lo, hi = Y.min(axis=0), Y.max(axis=0)
    return 10.0 * (Y - lo) / np.where(hi > lo, hi - lo, 1.0)


@contextlib.contextmanager
def _progress_hook(progress, total, label):
    """``progress=True``: a tqdm bar on stderr; a callable is used as is; otherwise no hook."""
    if callable(progress):
        yield progress
        return
    if not progress:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=label, unit="it", leave=False, mininterval=0.5)
    last = [0]

    def hook(iteration):
        bar.update(iteration - last[0])
        last[0] = iteration

    try:
        yield hook
    finally:
        bar.close()


def _collect_extras(extras, m, state, data, Y):
    from ..io.distances import squared_distances

    found = {}
    for name in sorted(extras):
        if name == "X":
            value = data.X
        elif name == "DX":
            value = data.distances()
        elif name == "DY":
            value = np.sqrt(squared_distances(Y))
        else:
            value = m.export(state, name, Y)
        if value is None:
            raise ValueError(f"ret_extra item {name!r} is not available for method {m.name!r}")
        found[name] = value
    return found
