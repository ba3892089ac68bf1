"""Built-in datasets: a registry of named loaders (docs/original.md#datasets).

>>> from smallvis.datasets import load_dataset, list_datasets
>>> ds = load_dataset("iris")
>>> ds.X.shape, ds.labels[:2]
((150, 4), array(['setosa', 'setosa'], dtype=object))

Names match case-insensitively and by unique prefix (``"s1"`` finds ``"s1k"``). Adding a dataset means
calling :func:`register_dataset` with a :class:`DatasetSpec` whose ``loader(rng)`` returns
``(X, labels, label_name)``; loaders import what they need lazily so that listing datasets is cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._util.names import match_name
from .._util.rng import as_generator

LABEL_KINDS = ("class", "continuous", "none")


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    X : ndarray (n, p), float64
    labels : ndarray (n,) or None
        Class names/ids (``label_kind == "class"``) or a continuous value such as a swiss-roll angle.
    label_name : str
        What the labels are (``"Species"``, ``"Label"``, ``"phi"``); used as legend/colour-bar title.
    name, description : str
    label_kind : {"class", "continuous", "none"}
    columns : tuple of str or None
        Names of the columns of ``X`` when the data have them.
    """

    X: np.ndarray
    labels: np.ndarray | None
    label_name: str
    name: str
    description: str
    label_kind: str = "class"
    columns: tuple | None = None


@dataclass(frozen=True)
class DatasetSpec:
    """A registry entry: what :func:`list_datasets` shows and how to load the data.

    ``loader(rng)`` gets a ``numpy.random.Generator`` (``None`` when the caller gave no
    ``random_state`` so that a loader can use its own fixed default seed) and returns
    ``(X, labels, label_name)`` or ``(X, labels, label_name, columns)``.
    """

    name: str
    n: int
    dims: int
    description: str
    label_kind: str
    loader: Callable
    random: bool = False  # True when the data depend on random_state


DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to the registry (replacing an entry of the same name) and return it."""
    if spec.label_kind not in LABEL_KINDS:
        raise ValueError(f"label_kind must be one of {', '.join(LABEL_KINDS)}; got {spec.label_kind!r}")
    DATASETS[spec.name] = spec
    return spec


def list_datasets() -> list[DatasetSpec]:
    """Every registered dataset, in registration order."""
    return list(DATASETS.values())


def _reads_files(spec: DatasetSpec) -> bool:
    import inspect

    return "path" in inspect.signature(spec.loader).parameters


def load_dataset(name: str, random_state=None, path=None) -> Dataset:
    """Load a built-in dataset by name (case-insensitive, unique prefix).

    Parameters
    ----------
    name : str
        One of ``[d.name for d in list_datasets()]``.
    random_state : int or numpy Generator, optional
        Seed for generated datasets (ignored by fixed ones). ``None`` uses the dataset's own fixed
        default seed, so ``load_dataset("s1k")`` is the same every time.
    path : str or Path, optional
        For the datasets read from files (mnist6k, fashion6k, coil20, oli, frey): the folder holding
        the files as distributed, instead of the data folder (``$SMALLVIS_DATA`` or
        ``~/.cache/smallvis``) where missing files are downloaded.

    Raises
    ------
    smallvis._util.names.InvalidNameError
        Unknown or ambiguous name; the message lists the datasets and suggests the closest.
    """
    spec = DATASETS[match_name(name, DATASETS, "dataset")]
    rng = None if random_state is None else as_generator(random_state)
    if path is not None:
        if not _reads_files(spec):
            readers = ", ".join(d.name for d in DATASETS.values() if _reads_files(d))
            raise ValueError(f"dataset {spec.name!r} reads no files, so path does not apply; it "
                             f"does for: {readers}")
        X, labels, label_name, *rest = spec.loader(rng, path=path)
    else:
        X, labels, label_name, *rest = spec.loader(rng)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (X.shape[0],):
            raise RuntimeError(f"dataset {spec.name!r}: labels shape {labels.shape} does not match X")
    columns = tuple(rest[0]) if rest and rest[0] is not None else None
    return Dataset(X=X, labels=labels, label_name=label_name, name=spec.name,
                   description=spec.description, label_kind=spec.label_kind, columns=columns)


# Built-in entries register themselves on import: the shipped data, then the generated presets.
from . import builtin as _builtin  # noqa: E402,F401
from . import generated as _generated  # noqa: E402,F401
from . import real as _real  # noqa: E402,F401

__all__ = ["DATASETS", "Dataset", "DatasetSpec", "list_datasets", "load_dataset", "register_dataset"]
