"""Real datasets from the original's docs (docs/original.md#datasets), fetched on first use.

``mnist6k``, ``fashion6k``, ``coil20``, ``oli`` and ``frey`` are read from the data folder
(:func:`smallvis.datasets.download.data_home`, ``$SMALLVIS_DATA`` or ``~/.cache/smallvis``), in a
sub-folder per source, and downloaded there when missing. :data:`SOURCES` lists the files, their
URLs and published checksums.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from . import DatasetSpec, register_dataset
from .download import RemoteFile, data_home, fetch
from .files import (read_coil20_zip, read_frey_mat, read_idx_pair, read_olivetti_array,
                    read_olivetti_mat)

SAMPLE_SEED = 42
SAMPLE_PER_CLASS = 600
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                   "Sneaker", "Bag", "Ankle boot")
# scikit-learn's cache of the faces (named olivetti_py3.pkz by its fetch_olivetti_faces), and a
# .npy of its images (files.read_olivetti_array)
OLIVETTI_ARRAYS = ("olivetti_py3.pkz", "olivetti.pkz", "olivetti.npy")
_IDX_NAMES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
              "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def _idx_files(mirrors, md5s):
    # placed by hand: gunzipped, or with the dotted names of some copies (train-images.idx3-ubyte)
    return tuple(RemoteFile(f"{n}.gz", tuple(m + f"{n}.gz" for m in mirrors), md5=md5,
                            local_names=(n, _dotted(n), f"{_dotted(n)}.gz"))
                 for n, md5 in zip(_IDX_NAMES, md5s))


def _dotted(name: str) -> str:
    """``train-images-idx3-ubyte`` -> ``train-images.idx3-ubyte``."""
    head, _, tail = name.rpartition("-idx")
    return f"{head}.idx{tail}"


# Sub-folder of the data folder -> files. MD5s: MNIST as used by torchvision for its mirror (same
# files as LeCun's page, whose sizes 9912422/28881/1648877/4542 they match); Fashion-MNIST from its
# README. Olivetti: scikit-learn's figshare copy of Roweis's olivettifaces.mat and its SHA-256.
# COIL-20 and Frey: no checksum or size is published, so these downloads are checked only by the
# format readers (the file has to parse with the expected layout).
SOURCES = {
    "mnist": _idx_files(
        ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://yann.lecun.com/exdb/mnist/"),
        ("f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
         "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c")),
    "fashion": _idx_files(
        ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
         "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"),
        ("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
         "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310")),
    "coil20": (RemoteFile("coil-20-proc.zip", local_names=("coil-20-proc",), urls=(
        "https://cave.cs.columbia.edu/old/databases/SLAM_coil-20_coil-100/coil-20/coil-20-proc.zip",
        "http://www.cs.columbia.edu/CAVE/databases/SLAM_coil-20_coil-100/coil-20/coil-20-proc.zip")),),
    "olivetti": (RemoteFile(
        "olivettifaces.mat", ("https://ndownloader.figshare.com/files/5976027",),
        sha256="b612fb967f2dc77c9c62d3e1266e0c73d5fca46a4b8906c18e454d41af987794",
        local_names=OLIVETTI_ARRAYS),),
    "frey": (RemoteFile("frey_rawface.mat", ("https://cs.nyu.edu/~roweis/data/frey_rawface.mat",)),),
}


def stratified_sample(labels, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``per_class`` items drawn without replacement from each class, classes in sorted
    order (as ``dplyr::sample_n`` on data grouped by label)."""
    labels = np.asarray(labels)
    picks = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        if len(idx) < per_class:
            raise ValueError(f"class {c!r} has {len(idx)} items, fewer than the {per_class} to sample")
        picks.append(rng.choice(idx, per_class, replace=False))
    return np.concatenate(picks)


def read_mnist_like(source: str, path=None):
    """All 70,000 = train + test images (n, 784) uint8 and labels of an MNIST-format source."""
    files = fetch(source, SOURCES[source], path)
    names = [f.name for f in SOURCES[source]]
    Xtr, ytr = read_idx_pair(files[names[0]], files[names[1]])
    Xte, yte = read_idx_pair(files[names[2]], files[names[3]])
    return np.concatenate([Xtr, Xte]), np.concatenate([ytr, yte])


def _six_k(source, rng, path, per_class):
    X, y = read_mnist_like(source, path)
    per_class = SAMPLE_PER_CLASS if per_class is None else per_class
    keep = stratified_sample(y, per_class, np.random.default_rng(SAMPLE_SEED) if rng is None else rng)
    return X[keep], y[keep]


def mnist6k(rng, path=None, per_class=None):
    """MNIST (train + test), ``per_class`` (default 600) random images per digit; ``rng`` None ->
    seed :data:`SAMPLE_SEED`."""
    X, y = _six_k("mnist", rng, path, per_class)
    return X, y.astype(np.int64), "Label"


def fashion6k(rng, path=None, per_class=None):
    """Fashion-MNIST (train + test), ``per_class`` random images per class, labelled by class name."""
    X, y = _six_k("fashion", rng, path, per_class)
    return X, np.array(FASHION_CLASSES, dtype=object)[y], "Description"


def coil20(rng, path=None):
    """COIL-20 processed: 20 objects x 72 poses, 128 x 128 grey levels in [0, 1]; label = object."""
    files = fetch("coil20", SOURCES["coil20"], path)
    X, objects, _ = read_coil20_zip(files["coil-20-proc.zip"])
    return X, objects, "Object"


def olivetti(rng, path=None):
    """Olivetti faces: 40 people x 10 images, 64 x 64 grey; label = person (0-39).

    Read from ``olivettifaces.mat`` or scikit-learn's files (:data:`OLIVETTI_ARRAYS`) in the folder;
    with no folder given and none of them in the data folder, from scikit-learn's own cache
    (``olivetti_py3.pkz`` in ``$SCIKIT_LEARN_DATA`` or ``~/scikit_learn_data``) when
    ``fetch_olivetti_faces`` has filled it.
    """
    if path is None:
        path = _sklearn_olivetti_folder()
    files = fetch("olivetti", SOURCES["olivetti"], path)
    found = files["olivettifaces.mat"]
    read = read_olivetti_array if found.name in OLIVETTI_ARRAYS else read_olivetti_mat
    X, person = read(found)
    return X, person, "Person"


def _sklearn_olivetti_folder():
    """scikit-learn's data folder when it holds its Olivetti cache and ours holds no Olivetti file."""
    ours = data_home(create=False) / "olivetti"
    if any((ours / name).is_file() for name in ("olivettifaces.mat", *OLIVETTI_ARRAYS)):
        return None
    theirs = Path(os.environ.get("SCIKIT_LEARN_DATA", "~/scikit_learn_data")).expanduser()
    return theirs if (theirs / OLIVETTI_ARRAYS[0]).is_file() else None


def frey(rng, path=None):
    """Frey faces: 1965 video frames of 28 x 20 grey levels; label = frame index (0-based)."""
    files = fetch("frey", SOURCES["frey"], path)
    X = read_frey_mat(files["frey_rawface.mat"])
    return X, np.arange(len(X)), "Frame"


register_dataset(DatasetSpec(
    "mnist6k", 6000, 784,
    f"MNIST digits, {SAMPLE_PER_CLASS} random images per digit from the 70,000 (seed {SAMPLE_SEED} "
    "unless given); downloaded on first use", "class", mnist6k, random=True))
register_dataset(DatasetSpec(
    "fashion6k", 6000, 784,
    f"Fashion-MNIST, {SAMPLE_PER_CLASS} random images per class from the 70,000 (seed {SAMPLE_SEED} "
    "unless given); downloaded on first use", "class", fashion6k, random=True))
register_dataset(DatasetSpec(
    "coil20", 1440, 16384, "COIL-20 objects, 20 x 72 poses of 128x128 grey; downloaded on first use",
    "class", coil20))
register_dataset(DatasetSpec(
    "oli", 400, 4096, "Olivetti faces, 40 people x 10 images of 64x64 grey; downloaded on first use",
    "class", olivetti))
register_dataset(DatasetSpec(
    "frey", 1965, 560, "Frey faces, 1965 video frames of 28x20 grey (colour = frame index); "
    "downloaded on first use", "continuous", frey))
