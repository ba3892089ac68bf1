"""benchmarks/zoo_scale.py's shared layout (``--common-layout``) and its bad input."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "zoo_scale.py"


def _zoo():
    spec = importlib.util.spec_from_file_location("zoo_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_common_layout_spans_its_extent_with_one_cluster_per_class():
    labels = np.repeat(np.arange(5), 40)
    Y = _zoo().common_layout(labels, 100.0)
    assert Y.shape == (200, 2) and Y.flags.c_contiguous
    assert np.max(Y.max(axis=0) - Y.min(axis=0)) == pytest.approx(100.0)
    centres = np.array([Y[labels == c].mean(axis=0) for c in range(5)])
    spread = max(np.linalg.norm(Y[labels == c] - centres[c], axis=1).max() for c in range(5))
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1)[np.triu_indices(5, 1)]
    assert spread < gaps.min() / 2  # the classes are apart: every gradient sees the same grid
    np.testing.assert_array_equal(Y, _zoo().common_layout(labels, 100.0))  # the same every run


@pytest.mark.parametrize("extent", ["-1", "nan", "inf"])
def test_a_bad_common_layout_extent_is_refused(extent, capsys):
    with pytest.raises(SystemExit):
        _zoo().main(["--common-layout", extent, "--sizes", "100"])
    assert "--common-layout must be a finite extent >= 0" in capsys.readouterr().err
