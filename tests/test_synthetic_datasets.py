"""The synthetic datasets (docs/original.md#datasets): generators, their geometry, the registry
presets, the CLI listing."""

import numpy as np
import pytest

from smallvis._util.names import InvalidNameError
from smallvis.cli import main
from smallvis.datasets import DATASETS, list_datasets, load_dataset
from smallvis.datasets import generated
from smallvis.datasets.synthetic import (ball, circle_data, fuzzy_ring, gaussian_data, helix,
                                         linked_rings, sphere, subset_clusters, swiss_roll,
                                         three_clusters)

# name: (n, dims, label_kind, random)
PRESETS = {
    "gauss2d": (1000, 2, "none", True),
    "gauss5d": (1000, 5, "none", True),
    "gauss10d": (1000, 10, "none", True),
    "gauss100d": (500, 100, "none", True),
    "ball": (1500, 3, "continuous", True),
    "sphere": (3000, 3, "continuous", True),
    "helix": (1500, 3, "continuous", False),
    "swissroll": (1000, 3, "continuous", True),
    "swissroll3k": (3000, 3, "continuous", True),
    "rings": (200, 3, "class", False),
    "circle": (100, 2, "continuous", False),
    "fuzzyring": (generated.FUZZYRING_N, 2, "continuous", True),
    "three_clusters": (150, 50, "class", True),
    "three_clusters_2d": (600, 2, "class", True),
    "subset_clusters": (150, 50, "class", True),
}
RANDOM = [name for name, spec in PRESETS.items() if spec[3]]


def rng(seed=0):
    return np.random.default_rng(seed)


# --- generator shapes --------------------------------------------------------------------------

def test_generator_shapes_and_label_types():
    X, y = gaussian_data(7, 4, rng=rng())
    assert X.shape == (7, 4) and y is None
    X, y = ball(9, rng=rng())
    assert X.shape == (9, 3) and y.shape == (9,)
    X, y = sphere(11, rng=rng())
    assert X.shape == (11, 3) and y.shape == (11,)
    X, y = helix(13)
    assert X.shape == (13, 3) and y.shape == (13,)
    X, y = swiss_roll(15, rng=rng())
    assert X.shape == (15, 3) and y.shape == (15,)
    X, y = linked_rings(6)
    assert X.shape == (12, 3)
    np.testing.assert_array_equal(y, [1] * 6 + [2] * 6)
    X, y = circle_data(8)
    assert X.shape == (8, 2) and y.shape == (8,)
    X, y = three_clusters(4, 3, rng=rng())
    assert X.shape == (12, 3)
    np.testing.assert_array_equal(y, [1] * 4 + [2] * 4 + [3] * 4)
    X, y = subset_clusters(5, 2, rng=rng())
    assert X.shape == (10, 2)
    np.testing.assert_array_equal(y, [1] * 5 + [2] * 5)
    X, y = fuzzy_ring(200, rng=rng())
    assert X.shape[1] == 2 and 0 < X.shape[0] < 200 and y.shape == (X.shape[0],)


def test_defaults_are_the_spec_values():
    assert swiss_roll(rng=rng())[0].shape == (1000, 3)
    assert linked_rings()[0].shape == (200, 3)
    assert circle_data()[0].shape == (100, 2)
    assert three_clusters(rng=rng())[0].shape == (150, 50)
    assert subset_clusters(rng=rng())[0].shape == (150, 50)
    np.testing.assert_array_equal(helix(50)[0], helix(50, rmajor=3, rminor=1, nwinds=30)[0])


# --- determinism -------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda r: gaussian_data(20, 3, rng=r), lambda r: ball(20, rng=r), lambda r: sphere(20, rng=r),
    lambda r: swiss_roll(20, rng=r), lambda r: fuzzy_ring(100, rng=r),
    lambda r: three_clusters(5, 4, rng=r), lambda r: subset_clusters(5, 4, rng=r),
], ids=["gaussian", "ball", "sphere", "swiss_roll", "fuzzy_ring", "three_clusters", "subset_clusters"])
def test_generators_are_deterministic_given_a_seed(make):
    a, b, c = make(rng(3))[0], make(rng(3))[0], make(rng(4))[0]
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)
    np.testing.assert_array_equal(make(3)[0], a)  # an int seed works too


@pytest.mark.parametrize("name", RANDOM)
def test_random_presets_follow_the_seed(name):
    a, b = load_dataset(name), load_dataset(name)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.X, load_dataset(name, random_state=generated.DEFAULT_SEED).X)
    c, d = load_dataset(name, random_state=7), load_dataset(name, random_state=7)
    np.testing.assert_array_equal(c.X, d.X)
    assert a.X.shape != c.X.shape or not np.array_equal(a.X, c.X)
    assert DATASETS[name].random


@pytest.mark.parametrize("name", ["helix", "rings", "circle"])
def test_fixed_presets_ignore_the_seed(name):
    np.testing.assert_array_equal(load_dataset(name).X, load_dataset(name, random_state=7).X)
    assert not DATASETS[name].random


# --- geometry ----------------------------------------------------------------------------------

def test_gaussian_sd():
    X, _ = gaussian_data(20000, 3, sd=2.5, rng=rng())
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=0.1)
    np.testing.assert_allclose(X.std(axis=0), 2.5, rtol=0.03)


def test_ball_is_uniform_inside_the_radius():
    X, r2 = ball(20000, rad=2.0, rng=rng())
    r = np.linalg.norm(X, axis=1)
    assert r.max() <= 2.0 + 1e-12
    np.testing.assert_allclose(r2, r * r)
    # uniform in volume: P(r <= rad / 2) = 1/8
    assert abs(np.mean(r <= 1.0) - 0.125) < 0.01


def test_sphere_is_on_the_unit_sphere():
    X, theta = sphere(5000, rng=rng())
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
    assert X[:, 2].min() >= -1 and X[:, 2].max() <= 1
    assert theta.min() >= -np.pi and theta.max() <= np.pi
    np.testing.assert_allclose(np.arctan2(X[:, 0], X[:, 1]), theta, atol=1e-12)  # x = sin, y = cos


def test_helix_formula():
    n, R, r, k = 9, 3.0, 1.0, 30.0
    X, radius = helix(n, rmajor=R, rminor=r, nwinds=k)
    u = np.linspace(-np.pi, np.pi, n)
    for i in (0, 3, 4, 8):
        w = R + r * np.cos(k * u[i])
        np.testing.assert_allclose(X[i], [w * np.cos(u[i]), w * np.sin(u[i]), r * np.sin(k * u[i])],
                                   atol=1e-12)
    # u = 0 (middle point): w = R + r, on the x axis
    np.testing.assert_allclose(X[4], [R + r, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(X[0], X[-1], atol=1e-12)  # -pi and pi: the ends meet
    np.testing.assert_allclose(radius, np.linalg.norm(X, axis=1))


def test_swiss_roll_formula_and_ranges():
    X, phi = swiss_roll(3000, max_z=30, rng=rng())
    assert phi.min() >= 1.5 * np.pi and phi.max() <= 4.5 * np.pi
    assert phi.max() - phi.min() > 0.99 * 3 * np.pi
    np.testing.assert_allclose(X[:, 0], phi * np.cos(phi))
    np.testing.assert_allclose(X[:, 1], phi * np.sin(phi))
    assert X[:, 2].min() >= 0 and X[:, 2].max() <= 30 and X[:, 2].max() > 29
    X2, phi2 = swiss_roll(100, min_phi=1.0, max_phi=2.0, max_z=1.0, rng=rng())
    assert phi2.min() >= 1.0 and phi2.max() <= 2.0 and X2[:, 2].max() <= 1.0


def test_linked_rings_formula_and_rotation():
    n = 100
    X, y = linked_rings(n)
    c, s = np.cos(0.4), np.sin(0.4)
    # ring 1 at theta = pi/2 (k = 25): (0, 1, 0) -> (0, cos 0.4, -sin 0.4)
    np.testing.assert_allclose(X[25], [0.0, c, -s], atol=1e-12)
    # ring 1 at theta = 0: (1, 0, 0) is on the rotation axis
    np.testing.assert_allclose(X[0], [1.0, 0.0, 0.0], atol=1e-12)
    # ring 2 at theta = pi/2: (1, 0, 1) -> (1, sin 0.4, cos 0.4)
    np.testing.assert_allclose(X[n + 25], [1.0, s, c], atol=1e-12)
    # ring 2 at theta = pi: (0, 0, 0)
    np.testing.assert_allclose(X[n + 50], [0.0, 0.0, 0.0], atol=1e-12)
    # both are unit circles: ring 1 centred on the origin, ring 2 on (1, 0, 0)
    np.testing.assert_allclose(np.linalg.norm(X[:n], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(X[n:] - [1.0, 0.0, 0.0], axis=1), 1.0)
    # the rotation keeps ring 1 in the plane normal to (0, sin 0.4, cos 0.4)
    np.testing.assert_allclose(X[:n] @ [0.0, s, c], 0.0, atol=1e-12)
    assert set(y) == {1, 2}


def test_circle_formula():
    X, theta = circle_data(8)
    np.testing.assert_allclose(theta, np.arange(8) * np.pi / 4)
    np.testing.assert_allclose(X[0], [1.0, 0.0])
    np.testing.assert_allclose(X[2], [0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(X[5], [-np.sqrt(0.5), -np.sqrt(0.5)])
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)


def test_fuzzy_ring_has_a_hole():
    X, angle = fuzzy_ring(5000, inner=2.0, rng=rng())
    r = np.linalg.norm(X, axis=1)
    assert r.min() > 2.0
    assert abs(len(X) - 5000 * np.exp(-2.0)) < 100  # P(r > 2) = exp(-2) for a 2-D standard Gaussian
    np.testing.assert_allclose(angle, np.arctan2(X[:, 1], X[:, 0]))
    # the points kept are exactly those of the 5000-point Gaussian outside the hole
    G = rng().normal(size=(5000, 2))
    np.testing.assert_array_equal(X, G[np.linalg.norm(G, axis=1) > 2.0])
    assert fuzzy_ring(100, inner=0.0, rng=rng())[0].shape == (100, 2)


def test_fuzzyring_preset_size_is_the_listed_one():
    assert load_dataset("fuzzyring").X.shape == (generated.FUZZYRING_N, 2)
    assert np.linalg.norm(load_dataset("fuzzyring", random_state=1).X, axis=1).min() > 2.0


def test_three_clusters_means():
    X, y = three_clusters(500, 5, rng=rng())
    for label, shift in ((1, 0.0), (2, 10.0), (3, 50.0)):
        means = X[y == label].mean(axis=0)
        assert abs(means[0] - shift) < 0.2
        np.testing.assert_allclose(means[1:], 0.0, atol=0.2)
        np.testing.assert_allclose(X[y == label].std(axis=0), 1.0, rtol=0.1)


def test_subset_clusters_are_concentric():
    X, y = subset_clusters(2000, 3, big_sdev=20.0, rng=rng())
    np.testing.assert_allclose(X[y == 1].std(axis=0), 1.0, rtol=0.1)
    np.testing.assert_allclose(X[y == 2].std(axis=0), 20.0, rtol=0.1)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), 0.0, atol=0.1)
    np.testing.assert_allclose(X[y == 2].mean(axis=0), 0.0, atol=2.0)


# --- argument checks ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, param", [
    (lambda: gaussian_data(0, 2, rng=1), "n"),
    (lambda: gaussian_data(2.5, 2, rng=1), "n"),
    (lambda: gaussian_data(True, 2, rng=1), "n"),
    (lambda: gaussian_data("10", 2, rng=1), "n"),
    (lambda: gaussian_data(10, 0, rng=1), "dim"),
    (lambda: gaussian_data(10, 2, sd=0.0, rng=1), "sd"),
    (lambda: gaussian_data(10, 2, sd=-1.0, rng=1), "sd"),
    (lambda: gaussian_data(10, 2, sd=np.inf, rng=1), "sd"),
    (lambda: ball(-1, rng=1), "n"),
    (lambda: ball(10, rad=0, rng=1), "rad"),
    (lambda: sphere(0, rng=1), "n"),
    (lambda: helix(0), "n"),
    (lambda: helix(10, rmajor=-3), "rmajor"),
    (lambda: helix(10, rminor=0), "rminor"),
    (lambda: helix(10, nwinds=-1), "nwinds"),
    (lambda: swiss_roll(0, rng=1), "n"),
    (lambda: swiss_roll(10, min_phi=5.0, max_phi=5.0, rng=1), "min_phi"),
    (lambda: swiss_roll(10, min_phi=np.nan, rng=1), "min_phi"),
    (lambda: swiss_roll(10, max_z=0, rng=1), "max_z"),
    (lambda: linked_rings(0), "n"),
    (lambda: circle_data(1.5), "n"),
    (lambda: fuzzy_ring(0, rng=1), "n"),
    (lambda: fuzzy_ring(10, inner=-1, rng=1), "inner"),
    (lambda: three_clusters(0, rng=1), "n"),
    (lambda: three_clusters(5, dim=0, rng=1), "dim"),
    (lambda: subset_clusters(5, dim=-2, rng=1), "dim"),
    (lambda: subset_clusters(5, big_sdev=0, rng=1), "big_sdev"),
])
def test_bad_arguments_name_the_parameter(call, param):
    with pytest.raises(ValueError, match=rf"^{param} must"):
        call()


def test_whole_float_sizes_are_accepted():
    assert gaussian_data(5.0, np.int64(2), rng=1)[0].shape == (5, 2)


# --- registry and CLI --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_load_with_the_listed_size_and_kind(name):
    n, dims, kind, _ = PRESETS[name]
    spec = DATASETS[name]
    assert (spec.n, spec.dims, spec.label_kind) == (n, dims, kind)
    assert spec.description
    ds = load_dataset(name)
    assert ds.X.shape == (n, dims) and ds.X.dtype == np.float64
    assert ds.label_kind == kind and ds.name == name
    if kind == "none":
        assert ds.labels is None
    else:
        assert ds.labels.shape == (n,) and ds.label_name
    if kind == "class":
        assert np.issubdtype(ds.labels.dtype, np.integer) and ds.labels.min() == 1
    if kind == "continuous":
        assert np.issubdtype(ds.labels.dtype, np.floating) and len(np.unique(ds.labels)) > 20


def test_preset_contents():
    np.testing.assert_array_equal(load_dataset("helix").X, helix(1500, 3, 1, 30)[0])
    np.testing.assert_array_equal(load_dataset("rings").X, linked_rings(100)[0])
    np.testing.assert_array_equal(load_dataset("circle").X, circle_data(100)[0])
    sr = load_dataset("swissroll3k", random_state=5)
    np.testing.assert_array_equal(sr.X, swiss_roll(3000, max_z=30, rng=rng(5))[0])
    assert sr.X[:, 2].max() > 20
    tc = load_dataset("three_clusters_2d")
    assert np.bincount(tc.labels).tolist() == [0, 200, 200, 200]


def test_prefix_matching_still_works():
    assert load_dataset("s1").name == "s1k"
    assert load_dataset("iris").name == "iris"
    assert load_dataset("iris1").name == "iris10"
    assert load_dataset("dig").name == "digits"
    assert load_dataset("swissroll").name == "swissroll"  # exact name beats the longer swissroll3k
    assert load_dataset("swissroll3").name == "swissroll3k"
    assert load_dataset("three_clusters").name == "three_clusters"
    assert load_dataset("fuzzy").name == "fuzzyring"
    assert load_dataset("sub").name == "subset_clusters"
    with pytest.raises(InvalidNameError, match="ambiguous"):
        load_dataset("swiss")
    with pytest.raises(InvalidNameError, match="ambiguous"):
        load_dataset("gauss1")


def test_registration_order_keeps_the_builtins_first():
    names = [s.name for s in list_datasets()]
    assert names[:4] == ["iris", "iris10", "s1k", "digits"]
    assert set(PRESETS) <= set(names)


def test_cli_lists_every_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    for spec in list_datasets():
        assert spec.name in lines
        assert f"{spec.n} x {spec.dims}" in lines[spec.name]
        assert spec.label_kind in lines[spec.name]
    assert f"{generated.FUZZYRING_N} x 2" in lines["fuzzyring"]
