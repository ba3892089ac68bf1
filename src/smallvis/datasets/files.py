"""Readers for the real datasets' files as distributed.

Every reader checks what it reads and raises ``ValueError`` naming the file and what is wrong
(truncated, bad magic number, wrong shape), rather than returning garbage.
"""

from __future__ import annotations

import gzip
import io
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np

# idx type codes (third byte of the magic number) -> big-endian numpy dtype
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_COIL_NAME = re.compile(r"obj(\d+)__(\d+)\.png", re.IGNORECASE)
FREY_SHAPE = (28, 20)  # rows x columns of one Frey frame (560 pixels)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it starts with the gzip magic ``1f 8b``."""
    raw = path.read_bytes()
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as err:
        raise ValueError(f"{path}: truncated or corrupt gzip data ({err})") from None


def read_idx(path) -> np.ndarray:
    """Read an idx file (MNIST format), gzipped or not.

    Layout: magic ``00 00 <type> <ndim>``, then ``ndim`` big-endian uint32 sizes, then the
    ``prod(sizes)`` values in C order.

    Returns
    -------
    ndarray of shape ``sizes`` (native byte order)
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] not in _IDX_TYPES:
        raise ValueError(f"{path}: not an idx file (magic number {data[:4].hex() or 'missing'}; "
                         "expected 0000 then a type code in 08 09 0b 0c 0d 0e and a dimension count)")
    ndim = data[3]
    header = 4 + 4 * ndim
    if ndim == 0 or len(data) < header:
        raise ValueError(f"{path}: idx header truncated or invalid ({ndim} dimensions, {len(data)} bytes)")
    shape = tuple(int(v) for v in np.frombuffer(data, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[data[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    body = len(data) - header
    if body != expected:
        what = "truncated" if body < expected else "too long"
        raise ValueError(f"{path}: {what}: header says shape {shape} ({expected} bytes of data), "
                         f"found {body} bytes")
    return np.frombuffer(data, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def read_idx_pair(images_path, labels_path):
    """Images (n, rows * cols) uint8 and labels (n,) from an MNIST-style idx pair, checked to match."""
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3:
        raise ValueError(f"{images_path}: expected a 3-D idx array (images), got shape {images.shape}")
    if labels.ndim != 1:
        raise ValueError(f"{labels_path}: expected a 1-D idx array (labels), got shape {labels.shape}")
    if len(images) != len(labels):
        raise ValueError(f"{images_path} has {len(images)} images but {labels_path} has "
                         f"{len(labels)} labels")
    return images.reshape(len(images), -1), labels


def read_coil20_zip(path):
    """COIL-20 from the processed zip, or the folder it unpacks to: PNGs named ``obj<k>__<pose>.png``
    (anywhere inside).

    Returns
    -------
    X : ndarray (n, h * w), float64
        Grey levels in [0, 1] (as decoded by matplotlib, like R's ``png::readPNG``), each image
        flattened row by row; rows sorted by object then pose. Grey stored as RGB (equal channels,
        opaque) is read as grey.
    objects, poses : ndarray (n,) int
    """
    path = Path(path)
    if path.is_dir():
        found = [(f.name, f) for f in path.rglob("*.png")]
        return _coil20_images(path, found, lambda f: f.read_bytes())
    try:
        with zipfile.ZipFile(path) as zf:
            found = [(info.filename.rsplit("/", 1)[-1], info.filename) for info in zf.infolist()]
            return _coil20_images(path, found, zf.read)
    except (zipfile.BadZipFile, EOFError, zlib.error) as err:
        raise ValueError(f"{path}: truncated or corrupt zip file ({err})") from None


def _coil20_images(path: Path, found, read):
    """Decode the ``(name, key)`` entries named like COIL-20's PNGs, ``read(key)`` giving bytes."""
    from matplotlib.image import imread

    entries = sorted((int(m[1]), int(m[2]), str(key), key)
                     for name, key in found if (m := _COIL_NAME.fullmatch(name)))
    if not entries:
        raise ValueError(f"{path}: no files named obj<k>__<pose>.png")
    images, shape = [], None
    for _, _, name, key in entries:
        try:
            img = imread(io.BytesIO(read(key)), format="png")
        except (OSError, ValueError, SyntaxError) as err:
            raise ValueError(f"{path}: cannot decode {name} as PNG ({err})") from None
        img = _grey(img, path, name)
        shape = img.shape if shape is None else shape
        if img.shape != shape:
            raise ValueError(f"{path}: {name} is {img.shape}, the first image {shape}")
        images.append(img.reshape(-1))
    X = np.asarray(images, dtype=np.float64)
    return X, np.array([e[0] for e in entries]), np.array([e[1] for e in entries])


def _grey(img: np.ndarray, path: Path, name: str) -> np.ndarray:
    """A decoded PNG as a 2-D grey image: grey as is; RGB(A) only when its colour channels are
    equal and it is opaque."""
    if img.ndim == 2:
        return img
    if img.ndim == 3 and img.shape[2] in (3, 4):
        grey = img[..., 0]
        opaque = img.shape[2] == 3 or np.all(img[..., 3] == img[..., 3].max())
        if opaque and np.array_equal(grey, img[..., 1]) and np.array_equal(grey, img[..., 2]):
            return grey
    raise ValueError(f"{path}: {name} is not a greyscale image (shape {img.shape})")


def _mat_variable(path: Path, name: str) -> np.ndarray:
    from scipy.io import loadmat

    try:
        contents = loadmat(path)
    except Exception as err:  # scipy raises ValueError, MatReadError, TypeError, ... on bad files
        raise ValueError(f"{path}: not a readable MATLAB .mat file ({err})") from None
    if name not in contents:
        found = ", ".join(k for k in contents if not k.startswith("__")) or "none"
        raise ValueError(f"{path}: no variable {name!r} (variables: {found})")
    value = contents[name]
    if value.ndim != 2:
        raise ValueError(f"{path}: variable {name!r} should be a matrix, got shape {value.shape}")
    return value


def read_olivetti_mat(path, per_person: int = 10):
    """Olivetti faces from ``olivettifaces.mat`` (variable ``faces``, pixels x images, 4096 x 400).

    Each column is a side x side image stored column-major; rows of the result are the upright images
    flattened row by row. Images come ``per_person`` to a person, in order.

    Returns
    -------
    X : ndarray (n, side**2) as stored (grey levels), person : ndarray (n,) int, 0-based
    """
    path = Path(path)
    faces = _mat_variable(path, "faces")
    npix, n = faces.shape
    side = int(round(np.sqrt(npix)))
    if side * side != npix:
        raise ValueError(f"{path}: 'faces' has {npix} rows, not a square image size (4096 = 64 x 64)")
    if n % per_person:
        raise ValueError(f"{path}: 'faces' has {n} images, not a multiple of {per_person} per person")
    X = faces.T.reshape(n, side, side).transpose(0, 2, 1).reshape(n, npix)
    return X, np.arange(n) // per_person


def read_olivetti_array(path, per_person: int = 10):
    """Olivetti faces from scikit-learn's files: its cache ``olivetti_py3.pkz`` (a joblib pickle of
    ``faces.T`` from ``olivettifaces.mat``: 400 x 4096, each row a column-major image) or a ``.npy``
    of upright images, 400 x 64 x 64 (``fetch_olivetti_faces().images``) or 400 x 4096
    (``.data``). The pickle is loaded with joblib: only read files you trust.

    Returns the same as :func:`read_olivetti_mat`: rows are the upright images flattened row by
    row, and the person of each.
    """
    path = Path(path)
    column_major = path.suffix.lower() == ".pkz"
    try:
        if column_major:
            import joblib

            faces = joblib.load(path)
        else:
            faces = np.load(path, allow_pickle=False)
    except Exception as err:  # joblib/pickle/numpy raise many kinds on a bad file
        raise ValueError(f"{path}: not a readable {'joblib' if column_major else 'numpy .npy'} "
                         f"file ({type(err).__name__}: {err})") from None
    if not isinstance(faces, np.ndarray) or faces.ndim not in (2, 3) or faces.dtype.kind not in "uif":
        what = (f"an array of shape {faces.shape} and type {faces.dtype}"
                if isinstance(faces, np.ndarray) else f"a {type(faces).__name__}")
        raise ValueError(f"{path}: expected the faces as a numeric n x 64 x 64 or n x 4096 array, "
                         f"found {what}")
    n = faces.shape[0]
    npix = int(np.prod(faces.shape[1:]))
    side = int(round(np.sqrt(npix)))
    if side * side != npix or (faces.ndim == 3 and faces.shape[1] != faces.shape[2]):
        raise ValueError(f"{path}: images of {faces.shape[1:]} pixels are not square (64 x 64)")
    if n % per_person:
        raise ValueError(f"{path}: {n} images, not a multiple of {per_person} per person")
    if column_major:
        faces = faces.reshape(n, side, side).transpose(0, 2, 1)
    return np.ascontiguousarray(faces.reshape(n, npix)), np.arange(n) // per_person


def read_frey_mat(path):
    """Frey faces from ``frey_rawface.mat`` (variable ``ff``, 560 x 1965 uint8, one frame per column).

    A column is a 20 x 28 column-major array holding the transposed frame (MATLAB shows a frame as
    ``reshape(ff(:, i), 20, 28)'``), so each row of ``ff.T`` is already the upright 28 x 20 frame
    flattened row by row. Returns ``X`` = ``ff.T`` (n, 560)."""
    path = Path(path)
    ff = _mat_variable(path, "ff")
    rows, cols = FREY_SHAPE
    if ff.shape[0] != rows * cols:
        raise ValueError(f"{path}: 'ff' has {ff.shape[0]} rows; expected {rows * cols} "
                         f"(one {cols} x {rows} frame per column)")
    return np.ascontiguousarray(ff.T)
