"""The data folder and a checksummed downloader for the real datasets.

Files live in ``<data folder>/<dataset>/<file name>``; the data folder is ``$SMALLVIS_DATA`` or
``~/.cache/smallvis``, created on demand. :func:`fetch` uses a file already there (or in the folder
given as ``path``) and otherwise downloads it: into a temporary file in the same folder, hashed while
it streams, renamed into place only when the checksum matches, so no half-written or wrong file is
ever left under the final name.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "SMALLVIS_DATA"
TIMEOUT_S = 60.0
_CHUNK = 1 << 20


class DownloadError(OSError):
    """A download failed: no network, an HTTP error, or a checksum or size mismatch."""


@dataclass(frozen=True)
class RemoteFile:
    """One distributed file.

    Attributes
    ----------
    name : str
        File name in the data folder.
    urls : tuple of str
        Where to get it, tried in order (mirrors).
    md5, sha256 : str or None
        Published checksum (hex). At most one is needed; ``None`` when none is published.
    size : int or None
        Size in bytes, checked when known (the only check for files without a published checksum).
    local_names : tuple of str
        Other names accepted for a file placed by hand (e.g. the gunzipped
        ``train-images-idx3-ubyte``, or the folder a zip unpacks to); such files are not
        checksummed, the format readers validate them.
    """

    name: str
    urls: tuple
    md5: str | None = None
    sha256: str | None = None
    size: int | None = None
    local_names: tuple = ()


def data_home(create: bool = True) -> Path:
    """The data folder: ``$SMALLVIS_DATA`` or ``~/.cache/smallvis``.

    Raises
    ------
    OSError
        The folder cannot be created or written; the message names it and ``SMALLVIS_DATA``.
    """
    env = os.environ.get(ENV_VAR)
    folder = Path(env).expanduser() if env else Path.home() / ".cache" / "smallvis"
    if create:
        _writable(folder)
    return folder


def _writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OSError(f"cannot create the data folder {folder} ({err.strerror or err}); "
                      f"set the environment variable {ENV_VAR} to a writable folder") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OSError(f"the data folder {folder} is not writable; "
                      f"set the environment variable {ENV_VAR} to a writable folder")


def fetch(dataset: str, files, path=None) -> dict:
    """Paths of ``files`` (a sequence of :class:`RemoteFile`), downloading the missing ones.

    Parameters
    ----------
    dataset : str
        Sub-folder of the data folder (``"mnist"``, ``"fashion"``, ...).
    files : sequence of RemoteFile
    path : str or Path, optional
        Folder holding the files directly (used instead of ``<data folder>/<dataset>``); missing
        files are downloaded into it.

    Returns
    -------
    dict
        ``{file.name: Path}`` (the path may be one of the file's ``local_names``).
    """
    folder = Path(path).expanduser() if path is not None else data_home(create=False) / dataset
    found, missing = {}, []
    for f in files:
        here = next((folder / n for n in (f.name, *f.local_names) if (folder / n).exists()), None)
        if here is None:
            missing.append(f)
        else:
            found[f.name] = here
    if missing:
        _writable(folder)
        for f in missing:
            found[f.name] = download(f, folder, manual=[g.name for g in files])
    return found


def download(file: RemoteFile, folder: Path, manual=None) -> Path:
    """Download ``file`` into ``folder`` (trying each URL in turn) and verify it.

    ``manual`` lists the file names a user would have to place by hand (for the offline message).

    Raises
    ------
    DownloadError
        No URL answered (the message says the machine looks offline and where to put the files), or
        the checksum / size does not match (the message names the file and both values; nothing is
        left in ``folder``).
    """
    target = folder / file.name
    by_hand = (f"put {', '.join(manual or [file.name])} (from the URLs above) in the folder {folder}, "
               "or give a folder that holds them (smallvis --data-dir DIR, load_dataset(..., "
               "path=DIR))")
    failures, answered = [], False
    for url in file.urls:
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
                tmp, digests, size = _stream(response, folder, file.name)
        except urllib.error.HTTPError as err:
            failures.append(f"{url}: HTTP {err.code} {err.reason}")
            answered = True
            continue
        except (urllib.error.URLError, socket.timeout, ConnectionError) as err:
            failures.append(f"{url}: {getattr(err, 'reason', err)}")
            continue
        try:
            _verify(file, digests, size)
        except DownloadError:
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, target)
        return target
    why = "" if answered else " (the machine seems to be offline)"
    tried = "\n  ".join(failures)
    raise DownloadError(f"could not download{why} {file.name}:\n  {tried}\nTo install by hand, {by_hand}.")


def _stream(response, folder: Path, name: str):
    """Copy ``response`` to a temporary file in ``folder``; returns (path, hashers, size)."""
    digests = {"md5": hashlib.md5(usedforsecurity=False), "sha256": hashlib.sha256()}
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".part")
    tmp = Path(tmp)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                size += len(chunk)
                for h in digests.values():
                    h.update(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, {k: h.hexdigest() for k, h in digests.items()}, size


def _verify(file: RemoteFile, digests: dict, size: int) -> None:
    for kind in ("sha256", "md5"):
        expected = getattr(file, kind)
        if expected is not None and digests[kind] != expected.lower():
            raise DownloadError(f"checksum mismatch for {file.name}: expected {kind} {expected}, "
                                f"got {digests[kind]}; the download was deleted")
    if file.size is not None and size != file.size:
        raise DownloadError(f"size mismatch for {file.name}: expected {file.size} bytes, got {size}; "
                            "the download was deleted")
