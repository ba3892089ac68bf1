"""The memory budget the guards use: available memory, cgroup limits and ``ulimit -v``, not physical
RAM (issue 17, item 8)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from smallvis._util import memory as _memory
from smallvis._util.memory import (Budget, address_space_headroom, cgroup_headroom, describe,
                                   meminfo_available, status_vm_size)

MEMINFO = """MemTotal:       24683656 kB
MemFree:        22878740 kB
MemAvailable:    4194304 kB
Buffers:           39568 kB
"""


def test_meminfo_available_reads_kib():
    assert meminfo_available(MEMINFO) == 4 * 2**30
    assert meminfo_available("MemTotal: 10 kB\n") is None


def test_cgroup_v2_and_v1_headroom():
    assert cgroup_headroom("3221225472\n", "1073741824\n") == (2 * 2**30, 3 * 2**30, 2**30)
    assert cgroup_headroom("max\n", "1073741824\n") is None  # v2 without a limit
    assert cgroup_headroom("9223372036854771712\n", "1507377152\n") is None  # v1 without a limit
    assert cgroup_headroom("garbage", "1") is None


def test_address_space_headroom():
    import resource

    assert address_space_headroom(resource.RLIM_INFINITY, 10**9) is None
    assert address_space_headroom(3 * 2**30, 2**30) == 2 * 2**30
    assert status_vm_size("Name: python\nVmSize:\t  289080 kB\n") == 289080 * 1024


def test_the_smallest_limit_applies_and_is_named(monkeypatch, tmp_path):
    v2 = tmp_path / "cg"
    v2.mkdir()
    (v2 / "memory.max").write_text("3221225472\n")  # a 3 GiB container
    (v2 / "memory.current").write_text("1073741824\n")
    files = {"/proc/meminfo": MEMINFO, "/proc/self/cgroup": "0::/\n"}
    real_read = _memory._read
    monkeypatch.setattr(_memory, "_read", lambda p: files.get(str(p), real_read(p)))
    monkeypatch.setattr(_memory, "CGROUP_ROOT", v2)
    monkeypatch.setattr(_memory, "_cgroup_dirs",
                        lambda text, root=v2: [(v2, "memory.max", "memory.current")])
    budget = _memory.available_memory()
    assert int(budget) == 2 * 2**30
    assert "cgroup memory limit" in budget.source and "3.0 GiB" in budget.source
    assert describe(budget).endswith("allows about 2.0 GiB")
    (v2 / "memory.max").write_text("max\n")
    budget = _memory.available_memory()
    assert int(budget) <= 4 * 2**30  # MemAvailable, or a real ulimit -v if smaller
    assert describe(12 * 2**30) == "about 12.0 GiB are available"


def test_cgroup_folders_from_proc_self_cgroup(tmp_path):
    dirs = _memory._cgroup_dirs("4:memory:/job/7\n0::/user.slice\n", tmp_path)
    assert (tmp_path / "memory/job/7", "memory.limit_in_bytes", "memory.usage_in_bytes") in dirs
    assert (tmp_path / "user.slice", "memory.max", "memory.current") in dirs
    assert (tmp_path, "memory.max", "memory.current") in dirs


def test_guard_message_names_the_limit():
    from smallvis.engines.dense import check_dense_memory

    with pytest.raises(MemoryError, match=r"but the cgroup memory limit \(x\) allows about 1\.0 GiB"):
        check_dense_memory(20_000, budget=Budget(2**30, "the cgroup memory limit (x)"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux applies it")
def test_ulimit_v_refuses_the_run_up_front(tmp_path):
    """A real ``ulimit -v``: the dense run of 5,000 points (8 matrices, 1.5 GiB) is refused by the
    guard with its message, instead of failing inside NumPy after the calibration."""
    import resource

    data = tmp_path / "x.npy"
    np.save(data, np.random.default_rng(0).normal(size=(5000, 3)))
    limit = 1500 * 2**20

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "smallvis", "embed", str(data), "--engine", "dense",
                           "--max-iter", "2", "--seed", "1"], preexec_fn=cap, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "the exact dense engine needs about 1.5 GiB for 5000 points" in done.stderr
    assert "address-space limit (ulimit -v 1.5 GiB" in done.stderr


@pytest.mark.parametrize("method, most", [("tsne", 2.0), ("ee", 4.0), ("tee", 4.0), ("gsne", 4.0),
                                          ("gmmds", 4.5)])
def test_exact_runs_keep_few_square_matrices(method, most):
    """Peak traced memory of an exact-engine fit, in (n, n) float64 matrices: P, and for ee, tee
    and gsne their second input matrix, plus the calibration's blocks. Before: tsne 2.5 (its
    affinities were calibrated again after the fit), ee 5.5, tee 5.4 (the cached input distances
    were kept through the run; column sums made three (n, n) temporaries)."""
    import tracemalloc

    from smallvis import SmallVis

    n = 1500
    X = np.random.default_rng(0).normal(size=(n, 20))
    SmallVis(method, engine="exact", max_iter=2, random_state=0).fit(X[:200])  # compile first
    tracemalloc.start()
    try:
        SmallVis(method, engine="exact", max_iter=3, random_state=0, tol=0).fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / (8.0 * n * n) < most
    # the memory guard's count for the method (Method.exact_matrices) is not below it
    from smallvis.methods import build_method

    assert peak / (8.0 * n * n) < 1.05 * build_method(method).exact_matrices


def test_the_exact_guard_counts_each_methods_own_matrices(monkeypatch):
    """ee keeps ~3 (n, n) arrays (P, its repulsion weights, the calibration's blocks): a budget that
    fits tsne's P is refused for ee up front, with the count in the message, not by the kernel's
    out-of-memory killer halfway through the affinities."""
    import smallvis.engines.dense as dense_module
    from smallvis.engines.exact import ExactEngine
    from smallvis.methods import build_method

    n = 10_000
    monkeypatch.setattr(dense_module, "available_memory", lambda: int(2.2 * 8 * n * n))
    engine = ExactEngine()
    engine.plan(build_method("tsne"))
    engine.check(n)  # 1.4 matrices fit in 0.8 x 2.2
    engine.plan(build_method("ee"))
    with pytest.raises(MemoryError, match=r"exact engine needs about .* \(3\.2 n x n float64 "
                                          r"matrices at its peak\)"):
        engine.check(n)
