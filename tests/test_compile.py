"""Compilation: nothing compiles at import, kernels are cached on disk, and a read-only cache folder
falls back to in-memory compilation instead of failing."""

import os
import pathlib
import subprocess
import sys
import zipfile

import smallvis

SRC = pathlib.Path(smallvis.__file__).parent


def _run(code, env=None, cwd=None):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=300)


HEAVY = "('numba', 'scipy', 'sklearn', 'matplotlib', 'pandas', 'pynndescent')"


def test_import_loads_no_heavy_dependency():
    out = _run(f"import sys, smallvis\nprint(sorted(m for m in {HEAVY} if m in sys.modules))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_nothing_compiles_before_a_run():
    out = _run("import sys, smallvis, smallvis.api, smallvis.engines, smallvis.methods\n"
               "print('numba' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_every_kernel_goes_through_the_cache_fallback():
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.name != "jit.py"
                 and ("from numba import njit" in p.read_text() or "numba.njit(" in p.read_text())]
    assert offenders == []


def test_an_unwritable_cache_compiles_in_memory(tmp_path):
    # a module imported from a zip file has no writable in-tree cache; the other cache folders are
    # pointed at a path that cannot be created, even by root
    source = ("import logging, sys\n"
              "logging.basicConfig(stream=sys.stderr, level=logging.INFO)\n"
              "from smallvis._util.jit import njit\n"
              "@njit(cache=True, fastmath=True)\n"
              "def plus_one(x):\n"
              "    return x + 1\n")
    archive = tmp_path / "kernels.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_kernels.py", source)
    nowhere = "/proc/smallvis-no-such-folder"
    out = _run("import zipped_kernels; print(zipped_kernels.plus_one(41))",
               env={"PYTHONPATH": f"{archive}{os.pathsep}{SRC.parent}", "NUMBA_CACHE_DIR": nowhere,
                    "HOME": nowhere, "XDG_CACHE_HOME": nowhere}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "42"
    assert "numba cannot cache plus_one" in out.stderr and "NUMBA_CACHE_DIR" in out.stderr


def test_a_writable_cache_is_used(tmp_path):
    (tmp_path / "cached_kernels.py").write_text(
        "from smallvis._util.jit import njit\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    code = "import cached_kernels; print(cached_kernels.twice(21))"
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{SRC.parent}"}
    assert _run(code, env=env, cwd=tmp_path).stdout.strip() == "42"
    assert list((tmp_path / "__pycache__").glob("cached_kernels.twice-*.nbi"))


def test_cache_saves_and_loads_hold_the_cache_folder_lock(tmp_path, monkeypatch):
    # smallvis._util.cache_lock: processes sharing a cache folder (sweep workers, test workers)
    # save a kernel's index and data file one at a time, or two signatures of one kernel can get
    # the same data file (numba issue 4807)
    import fcntl
    import importlib

    from smallvis._util.cache_lock import LOCK_NAME

    (tmp_path / "locked_kernels.py").write_text(
        "from smallvis._util.jit import njit\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    kernel = importlib.import_module("locked_kernels").twice
    files = kernel._cache._cache_file
    held = []

    def probe(method):
        def call(*args):
            with open(pathlib.Path(files._cache_path) / LOCK_NAME, "a") as other:
                try:
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    held.append(True)
                else:
                    held.append(False)
                    fcntl.flock(other, fcntl.LOCK_UN)
            return method(*args)
        return call

    files._save_index, files._load_index = probe(files._save_index), probe(files._load_index)
    assert kernel(21) == 42 and kernel(1.5) == 3.0  # two signatures: two saves
    assert held and all(held)
    assert len(list((tmp_path / "__pycache__").glob("locked_kernels.twice-*.nbc"))) == 2


def test_a_change_to_any_kernel_source_compiles_the_cached_kernels_again(tmp_path):
    # smallvis._util.cache_stamp: a kernel's cached code holds the jitted functions it calls from
    # other files; numba's stamp (its own file's time and size) missed edits to those
    (tmp_path / "stamped_kernels.py").write_text(
        "from smallvis._util.jit import njit\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{SRC.parent}"}

    def loaded_from_cache(digest):
        code = ("import smallvis._util.cache_stamp as s\n"
                f"s.kernel_sources_digest = lambda: {digest!r}\n"
                "import stamped_kernels as k\n"
                "assert k.twice(21) == 42\n"
                "print(sum(k.twice.stats.cache_hits.values()))")
        out = _run(code, env=env, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip() == "1"

    assert [loaded_from_cache(d) for d in ("old", "old", "new", "new")] == [False, True, False,
                                                                             True]


def test_the_kernel_sources_digest_follows_the_files_with_jitted_code(tmp_path):
    from smallvis._util.cache_stamp import kernel_sources_digest, sources_digest

    (tmp_path / "sub").mkdir()
    kernel, other = tmp_path / "sub" / "k_kernels.py", tmp_path / "api.py"
    kernel.write_text("from x import njit\nC = 1\n")
    other.write_text("A = 1\n")
    first = sources_digest(tmp_path)
    other.write_text("A = 2\n")  # no jitted code: no recompilation
    assert sources_digest(tmp_path) == first
    kernel.write_text("from x import njit\nC = 2\n")
    assert sources_digest(tmp_path) != first
    assert len(kernel_sources_digest()) == 32
