"""Fixed-order sums for numba kernels (no fastmath: see :mod:`smallvis._util.jit`).

A plain ``s += x[j]`` loop is a chain of dependent additions that LLVM may not reorder, so it runs
at one addition per latency. :func:`pairwise_sum` adds the same numbers in a fixed pairwise order
made of element-wise passes, which vectorise without any licence to reorder: the speed of a
vectorised sum, the same bits whichever compiled copy of a kernel runs and whatever the number of
threads, and the accuracy of pairwise summation.
"""

from __future__ import annotations

from .jit import njit


@njit(cache=True, error_model="numpy")
def pairwise_sum(buf, m):
    """``sum(buf[:m])`` in a fixed pairwise order, overwriting ``buf[:m]``.

    Each pass adds the upper half onto the lower half (an element-wise loop); the last eight or
    fewer terms are added in index order.
    """
    while m > 8:
        h = m // 2
        top = buf[m - h:m]
        for j in range(h):
            buf[j] += top[j]
        m -= h
    s = 0.0
    for j in range(m):
        s += buf[j]
    return s
