"""exp, log, log1p and powers over arrays in numba, vectorised by LLVM without fastmath.

numba turns ``math.exp``, ``math.log`` and ``math.log1p`` into calls of the C library, one element
at a time: LLVM cannot vectorise a loop that calls them (short of Intel's SVML, which numba uses
only under fastmath and which is a dependency and gives other bits than libm). Here each function is
range reduction and a polynomial written with IEEE ``+ - * /``, comparisons (selects) and integer
operations on the bits of a double, so LLVM vectorises the loops as they are. Without fastmath
every operation is the correctly rounded IEEE one in the order written (no fused multiply-add, no
reassociation), so the results are the same bits on every IEEE machine, from a fresh compilation or
the disk cache, whatever the thread count (see :mod:`smallvis._util.jit`): they do not depend on
the C library either, as ``math.exp`` does (glibc, musl and macOS differ in the last bit).

Every element goes through the same formula (selects, no branch on the value), so a value gives the
same bits wherever it sits in an array and whatever the array's length: the vectorised loop body
and LLVM's scalar remainder loop compute the same operations. Calls are serial; kernels call them
on a row inside their own parallel loop. ``x`` may be ``out`` (in place).

The algorithms are the classic ones (Cody and Waite's reduction, Tang's and Sun's fdlibm
formulations): ``exp(x) = 2^k exp(r)`` with ``|r| <= ln2 / 2`` and ``exp(r)`` from a rational
expression in a degree-4 polynomial of ``r^2``; ``log(x) = k ln2 + log(1 + f)`` with
``sqrt(2)/2 <= 1 + f < sqrt(2)``, ``log(1 + f) = 2s + s R(s^2)``, ``s = f / (2 + f)``. The
polynomials' coefficients are our own weighted Remez fits in 60-digit decimal arithmetic (fit error
2^-59.0 for exp's, 2^-58.5 for log's, weighted as they enter the result).

Measured (docs/vmath.md): the largest error over 10^5 random arguments per function, in ulps of
the true value (60-digit decimal references); ns per element on arrays of 20,000 on a busy 2-core
AVX2 machine, and the same numba loop calling ``math.*`` (glibc 2.36):

    vexp    0.74 ulp   2.1 ns  (math.exp 4.9; arguments giving subnormal results: 5.5 and 21)
    vlog    0.83 ulp   2.2 ns  (math.log 4.2)
    vlog1p  0.82 ulp   2.8 ns  (math.log1p 10.9)
    vpow_pos            4.3 ns  (math.pow 13.6)
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .jit import njit


@intrinsic
def _bits(typingctx, x):
    """The IEEE bits of a float64 as an int64 (an LLVM bitcast, which vectorises)."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _double(typingctx, i):
    """The float64 whose IEEE bits are the int64 ``i``."""
    if i != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


INF = float("inf")
NAN = float("nan")
LN2_HI = 0.6931471805598903  # ln 2 to 42 bits: k * LN2_HI is exact for |k| < 2^11
LN2_LO = 5.497923018708371e-14  # ln 2 - LN2_HI
INV_LN2 = 1.4426950408889634
SHIFT = 6755399441055744.0  # 1.5 * 2^52: x + SHIFT rounds x to an integer held in the low bits
SHIFT_BITS = 0x4338000000000000  # the bits of SHIFT
TWO54 = 18014398509481984.0
TWO_M64 = 5.421010862427522e-20
MIN_NORMAL = 2.2250738585072014e-308
MANTISSA = 0x000FFFFFFFFFFFFF
SQRT2_MANTISSA = 0x6A09E667F3BCD  # the mantissa bits of sqrt(2)
# exp(r) = 1 + r + r c / (2 - c), c = r - r^2 P(r^2): P's coefficients (|r| <= 1.0001 ln2 / 2)
EP0, EP1, EP2, EP3, EP4 = (0.16666666666666602, -0.002777777777701522, 6.613756321394802e-05,
                           -1.6533902184077612e-06, 4.1381363653650453e-08)
# log(1 + f) = 2s + s z Q(z), z = s^2, s = f / (2 + f) (|s| <= 1.001 * 0.1716)
LQ0, LQ1, LQ2, LQ3, LQ4, LQ5, LQ6 = (0.6666666666666735, 0.3999999999940633, 0.28571428744422633,
                                     0.22222198347322905, 0.18183576896546558, 0.15313708761160796,
                                     0.14799562169773264)
# exp's argument is clamped to [EXP_LO, EXP_HI]: exp(EXP_HI) overflows, exp(EXP_LO) is 0
EXP_HI, EXP_LO = 710.0, -746.0
EXP_ZERO = -745.1332191019412  # the largest x whose exp(x) rounds to 0


@njit(cache=True, error_model="numpy", inline="always")
def exp1(x):
    """``exp(x)`` of one float64 (< 1 ulp): the element function of :func:`vexp`, for a
    kernel's own loop (inlined there, so that loop vectorises)."""
    x = EXP_HI if x > EXP_HI else x  # also +inf; NaN passes (comparisons are false)
    x = EXP_LO if x < EXP_LO else x  # also -inf
    t = x * INV_LN2 + SHIFT
    kf = t - SHIFT  # the nearest integer to x / ln2, |k| <= 1077
    k = _bits(t) - SHIFT_BITS
    hi = x - kf * LN2_HI  # exact
    lo = kf * LN2_LO
    r = hi - lo
    z = r * r
    z2 = z * z  # Estrin's scheme: shorter chains than Horner's, so more elements in flight
    c = r - z * ((EP0 + z * EP1) + z2 * ((EP2 + z * EP3) + z2 * EP4))
    # exp(r) = 1 + hi - (lo - r c / (2 - c)), with 1 + hi as an exact sum s + e (|hi| < 1)
    s = 1.0 + hi
    e = (1.0 - s) + hi
    y = s + (e - (lo - (r * c) / (2.0 - c)))
    # y 2^k in two steps, as 2^k is out of the normal range for k < -1022 (subnormal results) and
    # k = 1024: an exact one into the normal range, then the one rounding: y 2^(k - 1) 2 for
    # k >= -1000, y 2^(k + 64) 2^-64 below, y 2^(k + 64) 0 where exp(x) < 2^-1075 (a product
    # that underflows, to a subnormal or 0, runs about 3x slower than a product by 0)
    small = k < -1000
    shift = 64 if small else -1
    last = TWO_M64 if small else 2.0
    last = 0.0 if x < EXP_ZERO else last
    return y * _double((k + shift + 1023) << 52) * last


@njit(cache=True, error_model="numpy", inline="always")
def _log_plus(x, c):
    """``log(x) + c`` for a finite ``x > 0`` and a small correction ``c`` (added before the last
    rounding): the core of :func:`log1`, :func:`log1p1` (values off that domain are garbage)."""
    tiny = x < MIN_NORMAL  # subnormal: scaled into the normal range first
    xs = x * TWO54 if tiny else x
    ix = _bits(xs)
    mant = ix & MANTISSA
    up = (SQRT2_MANTISSA - 1 - mant) >> 63  # -1 where 1.mant >= sqrt(2), else 0
    k = (ix >> 52) - (1077 if tiny else 1023) - up
    u = _double(mant | ((1023 + up) << 52))  # x / 2^k, in [sqrt(2)/2, sqrt(2))
    f = u - 1.0  # exact
    dk = _double(k + SHIFT_BITS) - SHIFT  # float(k), vectorisable without AVX-512
    s = f / (2.0 + f)
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    q = z * (((LQ0 + z * LQ1) + z2 * (LQ2 + z * LQ3)) + z4 * ((LQ4 + z * LQ5) + z2 * LQ6))
    hfsq = 0.5 * f * f
    return dk * LN2_HI - ((hfsq - (s * (hfsq + q) + (dk * LN2_LO + c))) - f)


@njit(cache=True, error_model="numpy", inline="always")
def log1(x):
    """``log(x)`` of one float64 (< 1 ulp): the element function of :func:`vlog`."""
    y = _log_plus(x, 0.0)
    y = y if x < INF else x  # inf, NaN
    y = -INF if x == 0.0 else y
    return NAN if x < 0.0 else y


@njit(cache=True, error_model="numpy", inline="always")
def log1p1(x):
    """``log(1 + x)`` of one float64, < 1 ulp also for tiny x (docs/vmath.md): ``log(u) + c``
    with ``u = 1 + x`` rounded and ``c = (x - (u - 1)) / u`` the first-order correction for
    that rounding (``u - 1`` is exact below 2^53, where c matters)."""
    u = 1.0 + x
    c = (x - (u - 1.0)) / u
    c = c if c == c else 0.0  # u = 0 or inf
    y = _log_plus(u, c)
    y = y if u < INF else x  # inf, NaN
    y = -INF if u == 0.0 else y
    y = x if x == 0.0 else y  # log1p(-0) = -0
    return NAN if u < 0.0 else y


# expm1 near 0: the Taylor series to x^15 / 15! (below 2^-60 of the value for |x| <= ln2 / 2), in
# the nested form 1 + x/2 (1 + x/3 (...)), the reciprocals 1/k rounded
EXPM1_NEAR = 0.34657359027997264  # ln 2 / 2
EXPM1_INV = (1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9, 1.0 / 10,
             1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15)


@njit(cache=True, error_model="numpy", inline="always")
def expm1_1(x):
    """``exp(x) - 1`` of one float64, accurate also for tiny ``x`` (a few ulps): near 0
    (``|x| <= ln2/2``) a Taylor polynomial (:func:`expm1_near`), elsewhere ``exp1(x) - 1`` (whose
    cancellation costs at most a factor 3.5 there); both computed, one selected (no branch)."""
    near = expm1_near(x)
    far = exp1(x) - 1.0
    return near if abs(x) <= EXPM1_NEAR else far


@njit(cache=True, error_model="numpy", inline="always")
def expm1_near(x):
    """:func:`expm1_1`'s value for ``|x| <= ln2/2`` (:data:`EXPM1_NEAR`), its Taylor polynomial
    alone (no ``exp``): a caller that knows every argument is that near 0 gets the same bits
    for less work."""
    c = EXPM1_INV
    t = 1.0 + (x * c[13])
    t = 1.0 + (x * c[12]) * t
    t = 1.0 + (x * c[11]) * t
    t = 1.0 + (x * c[10]) * t
    t = 1.0 + (x * c[9]) * t
    t = 1.0 + (x * c[8]) * t
    t = 1.0 + (x * c[7]) * t
    t = 1.0 + (x * c[6]) * t
    t = 1.0 + (x * c[5]) * t
    t = 1.0 + (x * c[4]) * t
    t = 1.0 + (x * c[3]) * t
    t = 1.0 + (x * c[2]) * t
    t = 1.0 + (x * c[1]) * t
    t = 1.0 + (x * c[0]) * t
    return x * t


@njit(cache=True, error_model="numpy", inline="always")
def pow1(x, y):
    """``x^y`` for ``x >= 0`` (or NaN) as ``exp(y log x)``: ``x^0 = 1``, ``0^y`` is 0 or inf by
    the sign of ``y``; negative x gives NaN. The error is that of ``exp`` at ``y log x``
    (about ``1 + |y log x|`` ulps, as for ``math.exp(y * math.log(x))``)."""
    v = exp1(y * log1(x))
    return 1.0 if y == 0.0 else v


# The array functions. A loop reading ``x`` and writing another array ``out`` gets a runtime overlap
# check from LLVM, which fails when they are the same array (the loop then runs 3x slower, one
# element at a time): in place, they loop over ``out`` alone. A function of two element functions
# runs as two passes over ``out``: one loop of both holds too many constants in the registers and
# runs 1.5x slower.

@njit(cache=True, error_model="numpy")
def vexp_scaled(x, a, out, m):
    """``out[:m] = exp(a * x[:m])`` for a scalar ``a`` (``a = -1``: ``exp(-x)``, bit for bit)."""
    if x.ctypes.data == out.ctypes.data:
        for j in range(m):
            out[j] = exp1(a * out[j])
    else:
        for j in range(m):
            out[j] = exp1(a * x[j])


@njit(cache=True, error_model="numpy")
def vexp(x, out, m):
    """``out[:m] = exp(x[:m])`` (:func:`exp1`); ``x`` may be ``out``."""
    vexp_scaled(x, 1.0, out, m)


@njit(cache=True, error_model="numpy")
def vlog(x, out, m):
    """``out[:m] = log(x[:m])`` (:func:`log1`); ``x`` may be ``out``."""
    if x.ctypes.data == out.ctypes.data:
        for j in range(m):
            out[j] = log1(out[j])
    else:
        for j in range(m):
            out[j] = log1(x[j])


@njit(cache=True, error_model="numpy")
def vlog1p_scaled(x, a, out, m):
    """``out[:m] = log1p(a * x[:m])`` for a scalar ``a`` (:func:`log1p1`)."""
    if x.ctypes.data == out.ctypes.data:
        for j in range(m):
            out[j] = log1p1(a * out[j])
    else:
        for j in range(m):
            out[j] = log1p1(a * x[j])


@njit(cache=True, error_model="numpy")
def vlog1p(x, out, m):
    """``out[:m] = log1p(x[:m])`` (:func:`log1p1`); ``x`` may be ``out``."""
    vlog1p_scaled(x, 1.0, out, m)


@njit(cache=True, error_model="numpy")
def vpow_pos(x, y, out, m):
    """``out[:m] = x[:m] ** y`` for ``x >= 0`` and a scalar ``y``: :func:`pow1`'s bits."""
    if y == 0.0:
        out[:m] = 1.0
        return
    vlog(x, out, m)
    vexp_scaled(out, y, out, m)


@njit(cache=True, error_model="numpy")
def vheavy_tail(x, alpha, out, m):
    """``out[:m] = (1 + alpha x[:m])^(-1/alpha)``, the heavy-tailed kernel's weight, as the
    engines write it: ``exp(-log1p(alpha x) * (1 / alpha))`` (:func:`log1p1`, :func:`exp1`)."""
    vlog1p_scaled(x, alpha, out, m)
    vexp_scaled(out, -(1.0 / alpha), out, m)


@njit(cache=True, error_model="numpy")
def vumap_curve(x, a, b, out, m):
    """``out[:m] = 1 / (1 + a x^b)`` for ``x > 0`` and 1 elsewhere (NaN included): UMAP's output
    weight at ``x = d^2``, with ``a x^b = exp(log a + b log x)`` (:func:`log1`, :func:`exp1`),
    for ``a, b > 0``."""
    if x.ctypes.data == out.ctypes.data:
        for j in range(m):
            v = out[j]
            out[j] = log1(v) if v > 0.0 else -INF
    else:
        for j in range(m):
            v = x[j]
            out[j] = log1(v) if v > 0.0 else -INF
    log_a = log1(a)
    for j in range(m):
        out[j] = 1.0 / (1.0 + exp1(log_a + b * out[j]))
