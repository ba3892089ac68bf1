"""Sweeps and embeddings under faults (issue 17, item 7): a killed sweep leaves no worker and no
temporary file behind, a busy output folder is refused, a malformed scheduler address fails at once,
and two runs given one ``--out`` never overwrite each other."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from smallvis._util.folder_lock import LOCK_NAME, FolderBusy, FolderLock
from smallvis.cli import main

LONG_GRID = "method: tsne\nparams:\n  perplexity: [5, 10]\n  max_iter: 1000000\nseeds: 2\n"
QUICK_GRID = "method: tsne\nparams:\n  perplexity: 5\n  max_iter: 5\n"


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (the sweep, its workers, the resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _workers(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(pid)
        except OSError:
            pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_sweep_leaves_no_worker_and_no_temporary_file(tmp_path, sig):
    grid = tmp_path / "grid.yaml"
    grid.write_text(LONG_GRID)
    temp = tmp_path / "temp"
    temp.mkdir()
    out = tmp_path / "out"
    env = dict(os.environ, TMPDIR=str(temp))
    sweep = subprocess.Popen(
        [sys.executable, "-m", "smallvis", "sweep", "iris", "--grid", str(grid), "--jobs", "2",
         "--out", str(out), "--no-plot"],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while len(_workers(_session(sweep.pid))) < 2 and time.monotonic() < deadline:
            assert sweep.poll() is None, sweep.communicate()
            time.sleep(0.2)
        assert len(_workers(_session(sweep.pid))) == 2
        time.sleep(3)  # the workers load smallvis and the data, and start their runs
        sweep.send_signal(sig)
        _, err = sweep.communicate(timeout=120)
        assert sweep.returncode == (-9 if sig == signal.SIGKILL else 143), err
        deadline = time.monotonic() + 30
        while _session(sweep.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _session(sweep.pid) == []  # no worker runs on
        assert list(temp.iterdir()) == []  # no smallvis-sweep-*.npy left in the temp folder
        assert not [p for p in out.iterdir() if p.name.startswith(".smallvis-input-")]
        if sig == signal.SIGTERM:
            assert "terminated (SIGTERM)" in err
            assert not (out / LOCK_NAME).exists()
    finally:
        for pid in _session(sweep.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_a_busy_folder_is_refused_naming_the_other_sweep(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text(QUICK_GRID)
    out = tmp_path / "busy"
    out.mkdir()
    with FolderLock(out):  # another sweep (this process, through another descriptor) holds it
        code = main(["sweep", "iris", "--grid", str(grid), "--out", str(out), "--no-plot"])
        err = capsys.readouterr().err
        assert code == 2
        assert f"sweep output {out} is in use by another sweep (process {os.getpid()}" in err
        assert len(err.strip().splitlines()) == 1
        assert not (out / "results.csv").exists()
    # the lock given back, the folder is free again (and the lock file is gone after the sweep)
    assert main(["sweep", "iris", "--grid", str(grid), "--out", str(out), "--no-plot",
                 "--quiet"]) == 0
    assert (out / "results.csv").exists() and not (out / LOCK_NAME).exists()


def test_a_stale_lock_of_a_dead_sweep_is_taken_over(tmp_path):
    out = tmp_path / "stale"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_NAME).write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename,
                                             "started": "x", "command": "smallvis sweep"}))
    lock = FolderLock(out)  # flock: nobody holds it, whatever the file says
    assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
    with pytest.raises(FolderBusy, match=f"process {os.getpid()}"):
        FolderLock(out)
    lock.release()
    assert not (out / LOCK_NAME).exists()


def test_the_exclusive_lock_without_flock_takes_over_dead_pids(tmp_path):
    out = tmp_path / "excl"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = FolderLock.__new__(FolderLock)
    lock.folder, lock.path, lock._fd = out, out / LOCK_NAME, None
    lock.path.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename,
                                     "started": "x", "command": "old"}))
    lock._acquire_exclusive()
    assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    with pytest.raises(FolderBusy, match="in use by another sweep"):
        lock._acquire_exclusive()  # a live pid (ours) holds it


def test_a_malformed_scheduler_fails_at_once_with_one_line(tmp_path):
    pytest.importorskip("distributed")
    grid = tmp_path / "grid.yaml"
    grid.write_text(QUICK_GRID)
    done = subprocess.run([sys.executable, "-m", "smallvis", "sweep", "iris", "--grid", str(grid),
                           "--scheduler", "tcp://", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "smallvis: error: Dask scheduler address 'tcp://': missing port number in address '' "
        "(expected e.g. tcp://host:8786)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("ext", [".csv", ".npy"])
def test_embed_out_that_appeared_during_the_run_is_not_overwritten(tmp_path, monkeypatch, capsys,
                                                                   ext):
    import smallvis.api as api

    out = tmp_path / f"emb{ext}"
    real = api.smallvis

    def other_run_finishes_first(*args, **kwargs):
        out.write_text("the other run's result\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "smallvis", other_run_finishes_first)
    argv = ["embed", "iris", "--max-iter", "5", "--seed", "1", "--out", str(out), "--quiet"]
    assert main(argv) == 2
    assert "appeared while this run was computing" in capsys.readouterr().err
    assert out.read_text() == "the other run's result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no sidecar, no temporary
    assert main([*argv, "--force"]) == 0
    Y = np.load(out) if ext == ".npy" else np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1))
    assert Y.shape == (150, 2)


def test_embed_sidecar_that_appeared_removes_the_coordinates(tmp_path, monkeypatch, capsys):
    import smallvis.api as api

    out = tmp_path / "emb.csv"
    real = api.smallvis

    def sidecar_appears(*args, **kwargs):
        (tmp_path / "emb.json").write_text("{}")
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "smallvis", sidecar_appears)
    assert main(["embed", "iris", "--max-iter", "5", "--out", str(out), "--quiet"]) == 2
    assert "emb.json appeared while this run was computing" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.json"]
