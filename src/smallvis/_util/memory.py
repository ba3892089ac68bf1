"""How much memory this process may still allocate, and which limit says so.

The memory guards refuse, before allocating, a run whose n x n matrices cannot fit. Physical RAM is
the wrong yardstick: other programs hold part of it, a container (Docker, Kubernetes, SLURM) caps the
process through its cgroup far below it, and ``ulimit -v`` caps the address space. A run let through
on physical RAM is then killed by the OOM killer (or fails deep inside NumPy) after minutes of work.
So the budget is the smallest of

- ``MemAvailable`` of ``/proc/meminfo`` (what the kernel can give without swapping),
- the cgroup limit minus the cgroup's usage (v2 ``memory.max`` / ``memory.current``; v1
  ``memory.limit_in_bytes`` / ``memory.usage_in_bytes``),
- ``RLIMIT_AS`` minus this process's virtual size (``VmSize`` of ``/proc/self/status``),

with the physical size as the fallback where none of these can be read (macOS, Windows). Each reader
takes the file contents or limits as arguments, so tests pass fake ones.
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_UNLIMITED = 2**60  # cgroup v1 reports "no limit" as a huge number (page-rounded 2^63 - 1)


class Budget(int):
    """A number of bytes that also says where it comes from (``.source``, e.g. ``"the cgroup memory
    limit (3.0 GiB, 1.2 GiB in use)"``): the memory guards' messages name the limit that applied."""

    source: str

    def __new__(cls, value: int, source: str):
        self = super().__new__(cls, max(0, int(value)))
        self.source = source
        return self


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def meminfo_available(text: str) -> int | None:
    """``MemAvailable`` in bytes from the text of ``/proc/meminfo`` (None when absent)."""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            try:
                return int(parts[1]) * (1024 if parts[-1].lower() == "kb" else 1)
            except (IndexError, ValueError):
                return None
    return None


def cgroup_headroom(limit_text: str, usage_text: str) -> tuple[int, int, int] | None:
    """``(limit - usage, limit, usage)`` from a cgroup's limit and usage files (v1 or v2); None when
    unlimited (``max``, or v1's huge number) or unreadable."""
    limit_text, usage_text = limit_text.strip(), usage_text.strip()
    if limit_text == "max":
        return None
    try:
        limit, usage = int(limit_text), int(usage_text)
    except ValueError:
        return None
    if limit >= _UNLIMITED:
        return None
    return limit - usage, limit, usage


def address_space_headroom(soft_limit: int, vm_size: int | None) -> int | None:
    """``RLIMIT_AS`` minus the virtual size already mapped; None without a limit."""
    import resource

    if soft_limit in (resource.RLIM_INFINITY, -1) or soft_limit < 0:
        return None
    return soft_limit - (vm_size or 0)


def status_vm_size(text: str) -> int | None:
    """``VmSize`` in bytes from the text of ``/proc/self/status``."""
    for line in text.splitlines():
        if line.startswith("VmSize:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _read(path) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None


def _cgroup_dirs(proc_cgroup: str | None, root: Path = CGROUP_ROOT) -> list[tuple[Path, str, str]]:
    """``(folder, limit file, usage file)`` to look at: this process's own cgroup (from
    ``/proc/self/cgroup``) and the mount's root (what a container sees as its own)."""
    v2 = ("memory.max", "memory.current")
    v1 = ("memory.limit_in_bytes", "memory.usage_in_bytes")
    out = []
    for line in (proc_cgroup or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        rel = parts[2].lstrip("/")
        if parts[0] == "0" and parts[1] == "":
            out.append((root / rel, *v2))
        elif "memory" in parts[1].split(","):
            out.append((root / "memory" / rel, *v1))
    out += [(root, *v2), (root / "memory", *v1)]
    seen, unique = set(), []
    for entry in out:
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    return unique


def limits() -> list[Budget]:
    """Every limit that can be read here, as :class:`Budget` values."""
    found = []
    available = meminfo_available(_read("/proc/meminfo") or "")
    if available is not None:
        found.append(Budget(available, f"the available memory (MemAvailable {gib(available)})"))
    for folder, limit_file, usage_file in _cgroup_dirs(_read("/proc/self/cgroup")):
        limit_text, usage_text = _read(folder / limit_file), _read(folder / usage_file)
        if limit_text is None or usage_text is None:
            continue
        room = cgroup_headroom(limit_text, usage_text)
        if room is not None:
            found.append(Budget(room[0], f"the cgroup memory limit ({folder / limit_file}: "
                                         f"{gib(room[1])}, {gib(room[2])} in use)"))
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        soft = None
    if soft is not None:
        vm = status_vm_size(_read("/proc/self/status") or "")
        room = address_space_headroom(soft, vm)
        if room is not None:
            found.append(Budget(room, f"the address-space limit (ulimit -v {gib(soft)}, "
                                      f"{gib(vm or 0)} mapped already)"))
    return found


def physical_memory() -> Budget | None:
    try:
        size = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return Budget(size, f"the physical memory ({gib(size)})")


def available_memory() -> Budget | None:
    """The bytes this process may still allocate: the smallest readable limit (see the module
    docstring), else the physical memory, else None."""
    found = limits()
    if found:
        return min(found, key=int)
    return physical_memory()


def describe(budget) -> str:
    """``"<source> allows about X GiB"`` (a plain int from a test or a caller: ``"X GiB are
    available"``)."""
    source = getattr(budget, "source", None)
    return (f"{source} allows about {gib(budget)}" if source
            else f"about {gib(budget)} are available")
