"""Real datasets: format readers, the data folder and the checksummed downloader.

No real downloads: tiny files in each format are built in tmp_path and served from a local HTTP server.
"""

import gzip
import hashlib
import http.server
import io
import socket
import threading
import zipfile
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from scipy.io import savemat

from smallvis.datasets import DATASETS, list_datasets, load_dataset
from smallvis.datasets import real
from smallvis.datasets.download import DownloadError, data_home, fetch
from smallvis.datasets.files import (read_coil20_zip, read_frey_mat, read_idx, read_idx_pair,
                                     read_olivetti_array, read_olivetti_mat)

N_TRAIN, N_TEST = 15, 5  # images per class in each idx file: 20 per class in all


# --------------------------------------------------------------------------- builders of tiny files

def idx_bytes(arr, type_code=0x08):
    arr = np.asarray(arr)
    header = bytes([0, 0, type_code, arr.ndim]) + np.array(arr.shape, ">u4").tobytes()
    return header + arr.astype(">u1" if type_code == 0x08 else arr.dtype.newbyteorder(">")).tobytes()


def mnist_arrays(seed):
    """(train images, train labels, test images, test labels); pixel 0 = label, pixel 1..2 = serial."""
    out = []
    for part, per in (("train", N_TRAIN), ("test", N_TEST)):
        labels = np.repeat(np.arange(10, dtype=np.uint8), per)
        np.random.default_rng(seed).shuffle(labels)
        images = np.random.default_rng(seed + 1).integers(0, 256, (len(labels), 28, 28), dtype=np.uint8)
        images[:, 0, 0] = labels
        images[:, 0, 1] = np.arange(len(labels)) % 256
        images[:, 0, 2] = part == "test"
        out += [images, labels]
    return out


def write_mnist(folder, seed=0, gz=True):
    folder.mkdir(parents=True, exist_ok=True)
    arrays = mnist_arrays(seed)
    for name, arr in zip(real._IDX_NAMES, arrays):
        data = idx_bytes(arr)
        if gz:
            (folder / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (folder / name).write_bytes(data)
    return arrays


def coil_images():
    rng = np.random.default_rng(3)
    return {(k, pose): rng.integers(0, 256, (6, 5), dtype=np.uint8) for k in (1, 2, 10) for pose in (0, 1, 5)}


def write_coil_zip(path):
    from PIL import Image

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("coil-20-proc/README.txt", "not an image")
        for (k, pose), img in sorted(coil_images().items(), reverse=True):
            buf = io.BytesIO()
            Image.fromarray(img, mode="L").save(buf, format="png")
            zf.writestr(f"coil-20-proc/obj{k}__{pose}.png", buf.getvalue())


def olivetti_images():
    return np.random.default_rng(4).integers(0, 256, (20, 4, 4)).astype(np.float64)


def write_olivetti(path):
    imgs = olivetti_images()  # upright images; the .mat stores each one column-major in a column
    savemat(path, {"faces": np.stack([im.T.ravel() for im in imgs], axis=1)})


def frey_matrix(n=7):
    return np.random.default_rng(5).integers(0, 256, (560, n), dtype=np.uint8)


def md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- a local HTTP server

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """Serves tmp_path/served at the returned base URL (ending in /)."""
    root = tmp_path / "served"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SMALLVIS_DATA", str(folder))
    return folder


def serve_source(monkeypatch, source, root, base, checksums=True):
    """Point real.SOURCES[source] at the local server, with md5s of the served files."""
    files = tuple(replace(f, urls=(base + f.name,), sha256=None,
                          md5=md5(root / f.name) if checksums else None)
                  for f in real.SOURCES[source])
    monkeypatch.setitem(real.SOURCES, source, files)
    return files


# --------------------------------------------------------------------------- idx reader

@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_round_trips(tmp_path, gz):
    arrays = write_mnist(tmp_path, gz=gz)
    suffix = ".gz" if gz else ""
    X, y = read_idx_pair(tmp_path / f"train-images-idx3-ubyte{suffix}",
                         tmp_path / f"train-labels-idx1-ubyte{suffix}")
    assert X.shape == (10 * N_TRAIN, 784) and X.dtype == np.uint8
    np.testing.assert_array_equal(X, arrays[0].reshape(len(X), -1))
    np.testing.assert_array_equal(y, arrays[1])


def test_read_idx_other_types(tmp_path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    (tmp_path / "x.idx").write_bytes(idx_bytes(a, type_code=0x0C))
    got = read_idx(tmp_path / "x.idx")
    np.testing.assert_array_equal(got, a)
    assert got.dtype == np.int32


def test_idx_errors_name_the_file(tmp_path):
    good = idx_bytes(np.zeros((4, 28, 28), np.uint8))
    bad_magic = tmp_path / "magic-idx3-ubyte"
    bad_magic.write_bytes(b"\x00\x01" + good[2:])
    with pytest.raises(ValueError, match="magic-idx3-ubyte.*not an idx file"):
        read_idx(bad_magic)
    short = tmp_path / "short-idx3-ubyte"
    short.write_bytes(good[:-10])
    with pytest.raises(ValueError, match=r"short-idx3-ubyte: truncated.*\(4, 28, 28\)"):
        read_idx(short)
    long = tmp_path / "long-idx3-ubyte"
    long.write_bytes(good + b"\0")
    with pytest.raises(ValueError, match="long-idx3-ubyte: too long"):
        read_idx(long)
    cut_gz = tmp_path / "cut-idx3-ubyte.gz"
    cut_gz.write_bytes(gzip.compress(good)[:-30])
    with pytest.raises(ValueError, match="cut-idx3-ubyte.gz: truncated or corrupt gzip"):
        read_idx(cut_gz)


def test_idx_pair_must_match(tmp_path):
    (tmp_path / "i").write_bytes(idx_bytes(np.zeros((4, 2, 2), np.uint8)))
    (tmp_path / "l").write_bytes(idx_bytes(np.zeros(3, np.uint8)))
    with pytest.raises(ValueError, match="4 images but .* 3 labels"):
        read_idx_pair(tmp_path / "i", tmp_path / "l")
    with pytest.raises(ValueError, match="expected a 3-D"):
        read_idx_pair(tmp_path / "l", tmp_path / "l")


# --------------------------------------------------------------------------- mnist6k / fashion6k

def test_stratified_sample_from_a_local_folder(tmp_path):
    arrays = write_mnist(tmp_path / "m", gz=False)  # the gunzipped names are accepted too
    X, y, name = real.mnist6k(np.random.default_rng(1), path=tmp_path / "m", per_class=4)
    assert name == "Label" and X.shape == (40, 784)
    np.testing.assert_array_equal(y, np.repeat(np.arange(10), 4))  # classes in order, 4 each
    np.testing.assert_array_equal(X[:, 0], y)  # each row is an image of its own label
    assert len({tuple(r[:3]) for r in X}) == 40  # no image twice
    # rows come from train and test
    all_images = np.concatenate([arrays[0], arrays[2]]).reshape(-1, 784)
    assert all((all_images == r).all(axis=1).any() for r in X)
    # seeded: same seed same sample, another seed another, None = the fixed default seed
    again, _, _ = real.mnist6k(np.random.default_rng(1), path=tmp_path / "m", per_class=4)
    other, _, _ = real.mnist6k(np.random.default_rng(2), path=tmp_path / "m", per_class=4)
    d1, _, _ = real.mnist6k(None, path=tmp_path / "m", per_class=4)
    d2, _, _ = real.mnist6k(np.random.default_rng(real.SAMPLE_SEED), path=tmp_path / "m", per_class=4)
    np.testing.assert_array_equal(X, again)
    assert not np.array_equal(X, other)
    np.testing.assert_array_equal(d1, d2)
    with pytest.raises(ValueError, match="has 20 items, fewer than the 21"):
        real.mnist6k(None, path=tmp_path / "m", per_class=21)


def test_fashion_labels_are_class_names(tmp_path):
    write_mnist(tmp_path, seed=7)
    X, y, name = real.fashion6k(None, path=tmp_path, per_class=2)
    assert name == "Description" and X.shape == (20, 784)
    assert list(y[::2]) == list(real.FASHION_CLASSES)


def test_download_into_the_cache_then_reuse(server, cache, monkeypatch):
    root, base = server
    write_mnist(root)
    serve_source(monkeypatch, "mnist", root, base)
    monkeypatch.setattr(real, "SAMPLE_PER_CLASS", 3)
    ds = load_dataset("mnist6k", random_state=0)
    assert ds.X.shape == (30, 784) and ds.label_kind == "class"
    folder = cache / "mnist"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.gz" for n in real._IDX_NAMES)
    for n in real._IDX_NAMES:
        assert (folder / f"{n}.gz").read_bytes() == (root / f"{n}.gz").read_bytes()
    # second load reads the cache: works with the server's files gone
    for p in root.iterdir():
        p.unlink()
    np.testing.assert_array_equal(load_dataset("mnist6k", random_state=0).X, ds.X)


def test_checksum_mismatch_leaves_nothing(server, tmp_path, monkeypatch):
    root, base = server
    write_mnist(root)
    files = serve_source(monkeypatch, "mnist", root, base)
    wrong = replace(files[0], md5="0" * 32)
    monkeypatch.setitem(real.SOURCES, "mnist", (wrong,) + files[1:])
    target = tmp_path / "dl"
    with pytest.raises(DownloadError, match=f"train-images-idx3-ubyte.gz: expected md5 {'0' * 32}, "
                                            f"got {files[0].md5}"):
        real.mnist6k(None, path=target, per_class=1)
    assert list(target.iterdir()) == []


def test_size_mismatch_is_an_error(server, tmp_path):
    root, base = server
    (root / "f.mat").write_bytes(b"12345")
    from smallvis.datasets.download import RemoteFile

    with pytest.raises(DownloadError, match="size mismatch for f.mat: expected 6 bytes, got 5"):
        fetch("x", [RemoteFile("f.mat", (base + "f.mat",), size=6)], path=tmp_path / "dl")
    assert list((tmp_path / "dl").iterdir()) == []


def test_offline_and_http_errors(server, tmp_path, monkeypatch):
    root, base = server
    write_mnist(root)
    serve_source(monkeypatch, "mnist", root, base)
    (root / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DownloadError, match="HTTP 404") as err:
        real.mnist6k(None, path=tmp_path / "a", per_class=1)
    assert "seems to be offline" not in str(err.value)
    # a port nobody listens on any more: connection refused = offline
    from smallvis.datasets.download import RemoteFile

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    monkeypatch.setitem(real.SOURCES, "frey", (RemoteFile("frey_rawface.mat", (dead + "frey_rawface.mat",)),))
    with pytest.raises(DownloadError, match="seems to be offline") as err:
        real.frey(None, path=tmp_path / "b")
    assert str(tmp_path / "b") in str(err.value) and "frey_rawface.mat" in str(err.value)
    assert list((tmp_path / "b").iterdir()) == []


# --------------------------------------------------------------------------- coil20, oli, frey

def test_coil20_zip(tmp_path):
    write_coil_zip(tmp_path / "coil-20-proc.zip")
    X, objects, poses = read_coil20_zip(tmp_path / "coil-20-proc.zip")
    images = coil_images()
    keys = sorted(images)
    assert X.shape == (len(keys), 30)
    np.testing.assert_array_equal(objects, [k for k, _ in keys])
    np.testing.assert_array_equal(poses, [p for _, p in keys])
    np.testing.assert_allclose(X, np.array([images[k].ravel() for k in keys]) / 255.0, atol=1e-7)


def test_coil20_unpacked_folder_and_grey_stored_as_rgb(tmp_path):
    """The folder the zip unpacks to reads the same; grey saved as RGB is grey; colour is refused."""
    from PIL import Image

    write_coil_zip(tmp_path / "coil-20-proc.zip")
    with zipfile.ZipFile(tmp_path / "coil-20-proc.zip") as zf:
        zf.extractall(tmp_path / "unpacked")
    X_zip = read_coil20_zip(tmp_path / "coil-20-proc.zip")[0]
    ds = load_dataset("coil20", path=tmp_path / "unpacked")  # finds coil-20-proc/ inside
    np.testing.assert_array_equal(ds.X, X_zip)
    rgb = tmp_path / "rgb"
    rgb.mkdir()
    for (k, pose), img in coil_images().items():
        Image.fromarray(np.repeat(img[..., None], 3, axis=2), mode="RGB").save(rgb / f"obj{k}__{pose}.png")
    np.testing.assert_array_equal(read_coil20_zip(rgb)[0], X_zip)
    colour = np.zeros((6, 5, 3), np.uint8)
    colour[..., 0] = 255
    Image.fromarray(colour, mode="RGB").save(rgb / "obj3__0.png")
    with pytest.raises(ValueError, match="obj3__0.png is not a greyscale image"):
        read_coil20_zip(rgb)


def test_mnist_files_with_dotted_names(tmp_path):
    """Copies named train-images.idx3-ubyte (a dot before idx), gzipped or not, are found."""
    arrays = write_mnist(tmp_path / "m", gz=False)
    for name in real._IDX_NAMES:
        (tmp_path / "m" / name).rename(tmp_path / "m" / real._dotted(name))
    X, y = real.read_mnist_like("mnist", tmp_path / "m")
    np.testing.assert_array_equal(y, np.concatenate([arrays[1], arrays[3]]))
    assert X.shape == (200, 784)


def test_coil20_corrupt_zip(tmp_path):
    write_coil_zip(tmp_path / "c.zip")
    data = (tmp_path / "c.zip").read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.zip: truncated or corrupt zip"):
        read_coil20_zip(tmp_path / "cut.zip")
    with zipfile.ZipFile(tmp_path / "empty.zip", "w") as zf:
        zf.writestr("readme.txt", "x")
    with pytest.raises(ValueError, match="empty.zip: no files named obj"):
        read_coil20_zip(tmp_path / "empty.zip")


def test_coil20_downloads_through_the_registry(server, cache, monkeypatch):
    root, base = server
    write_coil_zip(root / "coil-20-proc.zip")
    serve_source(monkeypatch, "coil20", root, base, checksums=False)
    ds = load_dataset("coil20")
    assert ds.X.shape == (9, 30) and ds.label_name == "Object"
    assert (cache / "coil20" / "coil-20-proc.zip").is_file()


def test_olivetti_mat(tmp_path):
    write_olivetti(tmp_path / "olivettifaces.mat")
    X, person = read_olivetti_mat(tmp_path / "olivettifaces.mat")
    np.testing.assert_array_equal(X, olivetti_images().reshape(20, 16))  # upright, row by row
    np.testing.assert_array_equal(person, np.repeat([0, 1], 10))
    savemat(tmp_path / "bad.mat", {"faces": np.zeros((15, 20))})
    with pytest.raises(ValueError, match="bad.mat: 'faces' has 15 rows"):
        read_olivetti_mat(tmp_path / "bad.mat")
    savemat(tmp_path / "other.mat", {"pics": np.zeros((16, 20))})
    with pytest.raises(ValueError, match="other.mat: no variable 'faces' \\(variables: pics\\)"):
        read_olivetti_mat(tmp_path / "other.mat")
    (tmp_path / "junk.mat").write_bytes(b"not a mat file at all" * 10)
    with pytest.raises(ValueError, match="junk.mat: not a readable MATLAB"):
        read_olivetti_mat(tmp_path / "junk.mat")


def test_olivetti_download_checks_sha256(server, cache, monkeypatch):
    root, base = server
    write_olivetti(root / "olivettifaces.mat")
    sha = hashlib.sha256((root / "olivettifaces.mat").read_bytes()).hexdigest()
    f = replace(real.SOURCES["olivetti"][0], urls=(base + "olivettifaces.mat",), sha256=sha)
    monkeypatch.setitem(real.SOURCES, "olivetti", (f,))
    ds = load_dataset("oli")
    assert ds.X.shape == (20, 16) and ds.label_name == "Person"
    (cache / "olivetti" / "olivettifaces.mat").unlink()
    monkeypatch.setitem(real.SOURCES, "olivetti", (replace(f, sha256="ab" * 32),))
    with pytest.raises(DownloadError, match=f"expected sha256 {'ab' * 32}, got {sha}"):
        load_dataset("oli")
    assert list((cache / "olivetti").iterdir()) == []


def test_olivetti_from_scikit_learns_files(tmp_path, monkeypatch):
    """scikit-learn's cache (olivetti_py3.pkz, written the way fetch_olivetti_faces writes it) and a .npy
    of its images give the same upright faces as the .mat; scikit-learn's own loader agrees."""
    import joblib
    from scipy.io import loadmat
    from sklearn.datasets import fetch_olivetti_faces

    rng = np.random.default_rng(6)
    upright = rng.integers(0, 256, (400, 64, 64)).astype(np.uint8)
    mat = tmp_path / "olivettifaces.mat"
    savemat(mat, {"faces": np.stack([im.T.ravel() for im in upright], axis=1)})
    sk_home = tmp_path / "sk"
    sk_home.mkdir()
    joblib.dump(loadmat(mat)["faces"].T.copy(), sk_home / "olivetti_py3.pkz", compress=6)
    X, person = read_olivetti_array(sk_home / "olivetti_py3.pkz")
    np.testing.assert_array_equal(X, upright.reshape(400, -1))
    np.testing.assert_array_equal(person, np.arange(400) // 10)
    theirs = fetch_olivetti_faces(data_home=sk_home, download_if_missing=False)
    np.testing.assert_allclose((X - X.min()) / (X.max() - X.min()), theirs.data, atol=1e-6)
    np.save(tmp_path / "olivetti.npy", theirs.images)
    np.testing.assert_allclose(read_olivetti_array(tmp_path / "olivetti.npy")[0], theirs.data)

    # load_dataset finds the .pkz in a given folder, and in scikit-learn's folder by itself
    folder = tmp_path / "given"
    folder.mkdir()
    (folder / "olivetti.pkz").write_bytes((sk_home / "olivetti_py3.pkz").read_bytes())
    np.testing.assert_array_equal(load_dataset("oli", path=folder).X, upright.reshape(400, -1))
    monkeypatch.setenv("SMALLVIS_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(sk_home))
    ds = load_dataset("oli")
    np.testing.assert_array_equal(ds.X, upright.reshape(400, -1))
    assert ds.labels[-1] == 39 and not (tmp_path / "empty").exists()

    np.save(tmp_path / "bad.npy", np.zeros((400, 60)))
    with pytest.raises(ValueError, match=r"bad.npy: images of \(60,\) pixels are not square"):
        read_olivetti_array(tmp_path / "bad.npy")
    joblib.dump({"faces": 1}, tmp_path / "dict.pkz")
    with pytest.raises(ValueError, match="dict.pkz: expected the faces.*found a dict"):
        read_olivetti_array(tmp_path / "dict.pkz")
    (tmp_path / "junk.pkz").write_bytes(b"\x00junk" * 50)
    with pytest.raises(ValueError, match="junk.pkz: not a readable joblib file"):
        read_olivetti_array(tmp_path / "junk.pkz")


def test_frey_mat(tmp_path):
    ff = frey_matrix()
    savemat(tmp_path / "frey_rawface.mat", {"ff": ff})
    X, labels, name = real.frey(None, path=tmp_path)
    np.testing.assert_array_equal(X, ff.T)
    # frame i shown upright (28 x 20) is MATLAB's reshape(ff(:, i), 20, 28)'
    np.testing.assert_array_equal(X[2].reshape(28, 20), ff[:, 2].reshape(20, 28, order="F").T)
    np.testing.assert_array_equal(labels, np.arange(7))
    savemat(tmp_path / "bad.mat", {"ff": np.zeros((561, 3), np.uint8)})
    with pytest.raises(ValueError, match="bad.mat: 'ff' has 561 rows; expected 560"):
        read_frey_mat(tmp_path / "bad.mat")


# --------------------------------------------------------------------------- data folder, registry

def test_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SMALLVIS_DATA", str(tmp_path / "d" / "e"))
    assert data_home() == tmp_path / "d" / "e" and (tmp_path / "d" / "e").is_dir()
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("SMALLVIS_DATA", str(tmp_path / "file" / "sub"))
    with pytest.raises(OSError, match=f"{tmp_path / 'file' / 'sub'}.*SMALLVIS_DATA"):
        data_home()
    monkeypatch.delenv("SMALLVIS_DATA")
    assert data_home(create=False).parts[-2:] == (".cache", "smallvis")


def test_registry_entries_and_cheap_listing(tmp_path, monkeypatch):
    monkeypatch.setenv("SMALLVIS_DATA", str(tmp_path / "never"))
    specs = {s.name: s for s in list_datasets()}
    expected = {"mnist6k": (6000, 784, "class"), "fashion6k": (6000, 784, "class"),
                "coil20": (1440, 16384, "class"), "oli": (400, 4096, "class"),
                "frey": (1965, 560, "continuous")}
    for name, (n, dims, kind) in expected.items():
        assert (specs[name].n, specs[name].dims, specs[name].label_kind) == (n, dims, kind)
    assert DATASETS["mnist6k"].random and not DATASETS["frey"].random
    assert not (tmp_path / "never").exists()


def test_load_dataset_reads_a_given_folder(tmp_path):
    from smallvis.datasets import load_dataset

    ff = np.arange(560 * 6, dtype=np.uint8).reshape(560, 6)
    savemat(tmp_path / "frey_rawface.mat", {"ff": ff})
    ds = load_dataset("frey", path=tmp_path)
    assert ds.X.shape == (6, 560) and ds.label_kind == "continuous"
    np.testing.assert_array_equal(ds.X, ff.T)
    with pytest.raises(ValueError, match="'iris' reads no files.*mnist6k"):
        load_dataset("iris", path=tmp_path)


def test_data_dir_on_the_command_line(tmp_path, capsys):
    """``--data-dir`` reads a dataset's files from a folder, on every subcommand that reads INPUT."""
    from smallvis.cli import main

    folder = tmp_path / "frey files"
    folder.mkdir()
    savemat(folder / "frey_rawface.mat", {"ff": frey_matrix(40)})
    out = tmp_path / "frey.csv"
    assert main(["embed", "frey", "--data-dir", str(folder), "--perplexity", "5", "--max-iter", "5",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    assert np.loadtxt(out, delimiter=",", skiprows=1).shape == (40, 3)  # x, y, frame
    assert main(["idp", "frey", "--data-dir", str(folder), "--perplexities", "4,8"]) == 0
    assert main(["compare", "frey", "--data-dir", str(folder), "--methods", "tsne",
                 "--max-iter", "5", "--perplexity", "5", "--out", str(tmp_path / "cmp"),
                 "--quiet"]) == 0
    capsys.readouterr()
    csv = tmp_path / "data.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    assert main(["embed", str(csv), "--data-dir", str(folder), "--quiet"]) != 0
    assert "--data-dir is for the downloaded datasets" in capsys.readouterr().err
    assert main(["embed", "iris", "--data-dir", str(folder), "--quiet"]) != 0
    assert "'iris' reads no files" in capsys.readouterr().err
