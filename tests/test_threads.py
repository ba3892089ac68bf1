"""n_threads: validated, applied for one run and restored, serial for small problems (issue 17)."""

import numpy as np
import pytest

from smallvis._util import parallel as _parallel
from smallvis import smallvis
from smallvis.cli import main


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None])
def test_n_threads_must_be_a_whole_number(bad):
    with pytest.raises(ValueError, match="n_threads must be a whole number >= 0"):
        smallvis(np.eye(5), n_threads=bad, max_iter=1)


def test_more_threads_than_numba_has_is_an_error():
    import numba

    too_many = numba.config.NUMBA_NUM_THREADS + 1
    with pytest.raises(ValueError, match=f"n_threads={too_many} is more than"):
        smallvis(np.eye(5), n_threads=too_many, max_iter=1)


def test_fit_threads_outside_a_run_changes_nothing():
    assert _parallel.fit_threads(10**9) is None


def test_small_work_is_serial_and_the_count_is_restored():
    import numba

    before = numba.get_num_threads()
    with _parallel.run_threads(0):
        assert _parallel.fit_threads(_parallel.SERIAL_BELOW - 1) == 1
        assert numba.get_num_threads() == 1
        assert _parallel.fit_threads(_parallel.SERIAL_BELOW) == before
    assert numba.get_num_threads() == before
    with _parallel.run_threads(1):
        assert _parallel.fit_threads(10**9) == 1
    assert numba.get_num_threads() == before


def test_thread_count_does_not_change_the_result(monkeypatch):
    monkeypatch.setattr(_parallel, "SERIAL_BELOW", 0)  # really run the parallel kernels
    X = np.random.default_rng(0).normal(size=(40, 4))
    runs = [smallvis(X, engine="exact", perplexity=8, max_iter=20, random_state=1, n_threads=t)
            for t in (1, 0)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_cli_threads(tmp_path):
    out = tmp_path / "y.npy"
    assert main(["embed", "iris", "--max-iter", "5", "--seed", "1", "--engine", "exact",
                 "--threads", "1", "--out", str(out)]) == 0
    assert np.load(out).shape == (150, 2)
    assert main(["embed", "iris", "--max-iter", "5", "--threads", "-1"]) == 2


def test_openmp_waits_asleep_unless_the_user_chose(monkeypatch):
    import os

    import numba
    from numba.np.ufunc import parallel

    monkeypatch.setattr(parallel, "_is_initialized", False)  # as before numba's first launch
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    assert not _parallel.quiet_openmp() and os.environ["OMP_WAIT_POLICY"] == "active"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    try:
        assert _parallel.quiet_openmp() and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "tbb")
    assert not _parallel.quiet_openmp() and "OMP_WAIT_POLICY" not in os.environ
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")
    monkeypatch.setattr(parallel, "_is_initialized", True)  # too late once numba's layer is loaded
    assert not _parallel.quiet_openmp()
