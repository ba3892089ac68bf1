"""Presets of the synthetic datasets of the R docs (docs/original.md#datasets), generated on load.

The random ones use the ``random_state`` given to :func:`~smallvis.datasets.load_dataset`, or the fixed
seed :data:`DEFAULT_SEED` when none is given, so that ``load_dataset("swissroll")`` is the same
every time. Sizes and parameters are those the docs use (idp, three-clusters, swisssne, averaging pages).
"""

from __future__ import annotations

import numpy as np

from . import DatasetSpec, register_dataset
from . import synthetic as syn

DEFAULT_SEED = 42

# Points the fuzzy ring keeps from 1000 with the default seed (about 1000 exp(-2) ~ 135 on average);
# a test checks it against the generator.
FUZZYRING_N = 140


def _seeded(rng) -> np.random.Generator:
    return np.random.default_rng(DEFAULT_SEED) if rng is None else rng


def _add(name, n, dims, description, label_kind, make, label_name, *, random=True):
    """Register ``name``; ``make(rng)`` returns ``(X, labels)`` (``rng`` already defaulted)."""
    def loader(rng):
        X, labels = make(_seeded(rng) if random else None)
        return X, labels, label_name

    loader.__name__ = f"_load_{name}"
    seed_note = f" (seed {DEFAULT_SEED} unless given)" if random else ""
    register_dataset(DatasetSpec(name, n, dims, description + seed_note, label_kind, loader,
                                 random=random))


for _n, _d in ((1000, 2), (1000, 5), (1000, 10), (500, 100)):
    _add(f"gauss{_d}d", _n, _d, f"{_d}-D standard Gaussian N(0, I)", "none",
         lambda rng, n=_n, d=_d: syn.gaussian_data(n, d, rng=rng), None)
del _n, _d

_add("ball", 1500, 3, "uniform in the unit ball; colour = squared radius", "continuous",
     lambda rng: syn.ball(1500, rng=rng), "r2")
_add("sphere", 3000, 3, "uniform on the unit sphere; colour = azimuth theta", "continuous",
     lambda rng: syn.sphere(3000, rng=rng), "theta")
_add("helix", 1500, 3, "toroidal helix, rmajor 3, rminor 1, 30 winds (not random); colour = radius",
     "continuous", lambda rng: syn.helix(1500, rmajor=3, rminor=1, nwinds=30), "radius", random=False)
_add("swissroll", 1000, 3, "swiss roll, phi in [1.5pi, 4.5pi], z in [0, 10], no noise; colour = phi",
     "continuous", lambda rng: syn.swiss_roll(1000, rng=rng), "phi")
_add("swissroll3k", 3000, 3, "swiss roll, phi in [1.5pi, 4.5pi], z in [0, 30], no noise; colour = phi",
     "continuous", lambda rng: syn.swiss_roll(3000, max_z=30, rng=rng), "phi")
_add("rings", 200, 3, "two linked unit circles of 100 points, rotated 0.4 rad (not random)", "class",
     lambda rng: syn.linked_rings(100), "ring", random=False)
_add("circle", 100, 2, "100 equally spaced points on the unit circle (not random); colour = angle",
     "continuous", lambda rng: syn.circle_data(100), "theta", random=False)
_add("fuzzyring", FUZZYRING_N, 2,
     f"2-D Gaussian of 1000 minus the points within 2 of the centre ({FUZZYRING_N} left with "
     "the default seed); colour = angle",
     "continuous", lambda rng: syn.fuzzy_ring(1000, inner=2.0, rng=rng), "theta")
_add("three_clusters", 150, 50, "three 50-D N(0, I) clusters of 50, at +0/+10/+50 on the first axis",
     "class", lambda rng: syn.three_clusters(50, 50, rng=rng), "cluster")
_add("three_clusters_2d", 600, 2, "three 2-D N(0, I) clusters of 200, at +0/+10/+50 on the first axis",
     "class", lambda rng: syn.three_clusters(200, 2, rng=rng), "cluster")
_add("subset_clusters", 150, 50, "two concentric 50-D Gaussians of 75, sd 1 and sd 50", "class",
     lambda rng: syn.subset_clusters(75, 50, big_sdev=50, rng=rng), "cluster")
