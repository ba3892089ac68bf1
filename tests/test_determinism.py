"""Same seed, same bits: whether the kernels were just compiled, loaded from numba's disk cache or
compiled in memory (a read-only install), and whatever the number of threads (issue 17).

The kernels compile in subprocesses with their own cache folder, so this test pays two full
compilations (fresh, read-only) and one cache load: it is marked slow. The two compilations run at
the same time (each is single-threaded; on two cores the test takes about two thirds as long).
"""

import json
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

import smallvis

SRC = pathlib.Path(smallvis.__file__).parent.parent

# every engine, on each kernel family it has: exact with the fused 2-D Student-t rows, the general
# rows (k = 3), a Gaussian output kernel, the AB-divergence's and NCE's passes; threaded runs forced (SERIAL_BELOW = 0) so that 1 and
# 2 threads both really run the parallel kernels
SCRIPT = """
import hashlib, json, logging, sys
import numpy as np
logging.basicConfig(stream=sys.stderr, level=logging.INFO)
from smallvis import smallvis
from smallvis._util import parallel as _parallel
_parallel.SERIAL_BELOW = 0
X = np.random.default_rng(0).normal(size=(60, 5))
runs = {"dense": dict(engine="dense"), "exact": dict(engine="exact"),
        "exact-3d": dict(engine="exact", k=3), "exact-ssne": dict(engine="exact", method="ssne"),
        "exact-absne": dict(engine="exact", method="absne"),
        "exact-ncvis": dict(engine="exact", method="ncvis"),
        "bh": dict(engine="bh"), "fft": dict(engine="fft"),
        "sgd": dict(engine="sgd", method="umap")}
out = {}
for name, kw in runs.items():
    for threads in (1, 2):
        Y = smallvis(X, perplexity=10, max_iter=25, random_state=5, n_threads=threads, **kw)
        out[f"{name}/{threads}"] = hashlib.sha1(np.ascontiguousarray(Y).tobytes()).hexdigest()
print(json.dumps(out))
"""


NOWHERE = "/proc/smallvis-no-such-folder"  # cannot be created, even by root


def _start(logs, cache_dir, path=SRC, home=None):
    """The script in a subprocess, its output in files named ``logs`` + .out/.err (started, not
    waited for: see :func:`_finish`)."""
    env = {**os.environ, "PYTHONPATH": f"{path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "NUMBA_CACHE_DIR": str(cache_dir), "NUMBA_NUM_THREADS": "2"}
    if home is not None:
        env.update(HOME=home, XDG_CACHE_HOME=home)
    with open(f"{logs}.out", "w") as out, open(f"{logs}.err", "w") as err:
        return subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=out, stderr=err, env=env)


def _finish(proc, logs):
    """``(hashes, log)`` of the subprocess :func:`_start` started with ``logs``."""
    proc.wait(timeout=1800)
    stderr = pathlib.Path(f"{logs}.err").read_text()
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(pathlib.Path(f"{logs}.out").read_text().strip().splitlines()[-1]), stderr


def _read_only_copy(folder):
    """The package in a zip file: no cache folder numba could write (a read-only install)."""
    archive = folder / "smallvis.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for file in (SRC / "smallvis").rglob("*.py"):
            z.write(file, file.relative_to(SRC).as_posix())
    return archive


@pytest.mark.slow
def test_same_bits_fresh_cached_read_only_and_threads(tmp_path):
    cache = tmp_path / "numba-cache"
    runs = [_start(tmp_path / "fresh", cache),
            _start(tmp_path / "read-only", NOWHERE, path=_read_only_copy(tmp_path), home=NOWHERE)]
    try:
        fresh, _ = _finish(runs[0], tmp_path / "fresh")
        read_only, log = _finish(runs[1], tmp_path / "read-only")
    finally:
        for proc in runs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert list(cache.rglob("*.nbi")), "the fresh run should have filled the cache"
    cached, _ = _finish(_start(tmp_path / "cached", cache), tmp_path / "cached")
    assert "numba cannot cache" in log  # really compiled in memory
    assert cached == fresh
    assert read_only == fresh
    for name in {key.split("/")[0] for key in fresh}:
        assert fresh[f"{name}/1"] == fresh[f"{name}/2"], name
