"""Reading user tables: formats, header detection, text columns, labels, clear errors."""

import gzip
import logging

import numpy as np
import pytest

from smallvis.io.tabular import read_table

IRIS_HEAD = "Sepal.Length,Sepal.Width,Petal.Length,Petal.Width,Species\n"
IRIS_ROWS = ["5.1,3.5,1.4,0.2,setosa", "4.9,3,1.4,0.2,setosa", "7,3.2,4.7,1.4,versicolor",
             "6.3,3.3,6,2.5,virginica"]


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def iris_csv(tmp_path):
    return write(tmp_path / "iris.csv", IRIS_HEAD + "\n".join(IRIS_ROWS) + "\n")


def test_header_and_text_column_dropped(iris_csv, caplog):
    with caplog.at_level(logging.INFO, logger="smallvis"):
        t = read_table(iris_csv)
    assert t.X.shape == (4, 4) and t.X.dtype == np.float64
    np.testing.assert_array_equal(t.X[0], [5.1, 3.5, 1.4, 0.2])
    assert t.columns == ["Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width"]
    assert t.labels is None and t.dropped == ["Species"]
    assert "Species" in caplog.text


@pytest.mark.parametrize("spec", ["Species", "species", "4", 4])
def test_label_column_by_name_or_index(iris_csv, spec):
    t = read_table(iris_csv, labels=spec)
    assert t.label_name == "Species"
    assert list(t.labels) == ["setosa", "setosa", "versicolor", "virginica"]
    assert t.X.shape == (4, 4) and t.dropped == []


def test_numeric_label_column_is_removed_from_features(iris_csv):
    t = read_table(iris_csv, labels="0")
    assert t.label_name == "Sepal.Length" and t.X.shape == (4, 3)
    np.testing.assert_array_equal(t.labels, [5.1, 4.9, 7.0, 6.3])


def test_headerless_csv_gets_r_names(tmp_path):
    t = read_table(write(tmp_path / "x.csv", "1,2,3\n4,5,6\n7,8,9\n"))
    assert t.columns == ["V1", "V2", "V3"]
    np.testing.assert_array_equal(t.X, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])


def test_integer_labels_stay_integers(tmp_path):
    t = read_table(write(tmp_path / "x.csv", "1,2,0\n4,5,1\n7,8,1\n"), labels="V3")
    assert t.labels.dtype.kind == "i" and list(t.labels) == [0, 1, 1]


@pytest.mark.parametrize("name, text", [
    ("x.tsv", "a\tb\tname\n1\t2\tfoo, bar\n3\t4\tbaz, qux\n5\t6\tx, y\n"),
    ("x.txt", "a b name\n1 2 foo\n3  4 baz\n5 6 x\n"),
    ("x.csv", "a;b;name\n1;2;foo\n3;4;baz\n5;6;x\n"),
])
def test_delimiters_are_sniffed(tmp_path, name, text):
    t = read_table(write(tmp_path / name, text), labels="name")
    assert t.columns == ["a", "b"]
    np.testing.assert_array_equal(t.X, [[1, 2], [3, 4], [5, 6]])
    assert len(t.labels) == 3


def test_blank_lines_are_skipped(tmp_path):
    t = read_table(write(tmp_path / "x.csv", "a,b\n1,2\n\n3,4\n\n"))
    np.testing.assert_array_equal(t.X, [[1, 2], [3, 4]])


def test_r_write_csv_row_names_are_dropped(tmp_path):
    t = read_table(write(tmp_path / "x.csv", '"","a","b"\n"1",1,2\n"2",3,4\n"3",5,6\n'))
    assert t.columns == ["a", "b"]
    np.testing.assert_array_equal(t.X, [[1, 2], [3, 4], [5, 6]])


def test_r_write_table_short_header(tmp_path):
    t = read_table(write(tmp_path / "x.txt", '"a" "b"\n"1" 1 2\n"2" 3 4\n"3" 5 6\n'))
    assert t.columns == ["a", "b"]
    np.testing.assert_array_equal(t.X, [[1, 2], [3, 4], [5, 6]])


def test_gzip_csv(tmp_path):
    path = tmp_path / "x.csv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("a,b\n1,2\n3,4\n")
    np.testing.assert_array_equal(read_table(path).X, [[1, 2], [3, 4]])


def test_npy(tmp_path):
    M = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "m.npy", M)
    t = read_table(tmp_path / "m.npy")
    np.testing.assert_array_equal(t.X, M)
    assert t.columns == ["V1", "V2", "V3"]
    t = read_table(tmp_path / "m.npy", labels="2")
    np.testing.assert_array_equal(t.X, M[:, :2])
    np.testing.assert_array_equal(t.labels, M[:, 2])


def test_mostly_numeric_column_with_text_is_dropped_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="smallvis"):
        t = read_table(write(tmp_path / "x.csv", "a,b\n1,2\n3,?\n5,6\n"))
    assert t.columns == ["a"]
    assert "'?'" in caplog.text and "line 3" in caplog.text


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        read_table(tmp_path / "nope.csv")


@pytest.mark.parametrize("name, content, message", [
    ("x.xlsx", "1,2\n", r"unsupported file type '\.xlsx'.*\.csv"),
    ("x.csv", "", r"is empty"),
    ("x.csv", "\n\n", r"is empty"),
    ("x.csv", "a,b\n", r"header but no data rows"),
    ("x.csv", "a,b\nx,y\nz,w\n", r"no numeric columns found \(columns: a, b\)"),
    ("x.csv", "a,b\n1,2\n3,NA\n5,6\n", r"missing value at data row 2 \(line 3\), column 'b'"),
    ("x.csv", "1,2\n3,inf\n", r"infinite value at data row 2 \(line 2\), column 'V2'"),
    ("x.csv", "a,b\n1,2\n3,4,5\n", r"cannot parse .*line 3"),
])
def test_bad_text_files(tmp_path, name, content, message):
    with pytest.raises(ValueError, match=message):
        read_table(write(tmp_path / name, content))


def test_binary_file(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(ValueError, match="binary"):
        read_table(path)


def test_missing_label_column_lists_columns(iris_csv):
    with pytest.raises(ValueError, match=r"label column 'colour' not found.*Sepal.Length, .*Species"):
        read_table(iris_csv, labels="colour")
    with pytest.raises(ValueError, match="not found"):
        read_table(iris_csv, labels="9")


@pytest.mark.parametrize("array, message", [
    (np.arange(4.0), r"2-D"),
    (np.array([["a", "b"]]), r"numeric"),
])
def test_bad_npy(tmp_path, array, message):
    np.save(tmp_path / "m.npy", array)
    with pytest.raises(ValueError, match=message):
        read_table(tmp_path / "m.npy")


def test_corrupt_npy(tmp_path):
    (tmp_path / "m.npy").write_bytes(b"not an npy file")
    with pytest.raises(ValueError, match="cannot read .* .npy"):
        read_table(tmp_path / "m.npy")


def test_directory_is_rejected(tmp_path):
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(ValueError, match="directory"):
        read_table(tmp_path / "d.csv")


# -- read with pandas' C parser (issue 17, item 9) ---------------------------------------------------


def test_values_equal_numpy_loadtxt(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 7)) * 10.0 ** rng.integers(-8, 8, size=(300, 7))
    path = tmp_path / "x.csv"
    np.savetxt(path, X, delimiter=",", header=",".join(f"c{j}" for j in range(7)), comments="",
               fmt="%.17g")
    t = read_table(path)
    np.testing.assert_array_equal(t.X, np.loadtxt(path, delimiter=",", skiprows=1))
    assert t.columns == [f"c{j}" for j in range(7)]


def test_ragged_row_after_blank_lines_names_the_file_line(tmp_path):
    path = write(tmp_path / "x.csv", "a,b\n\n1,2\n\n\n3,4,5\n6,7\n")
    with pytest.raises(ValueError, match=r"cannot parse .*line 6, saw 3"):
        read_table(path)


def test_missing_value_after_blank_lines_names_the_file_line(tmp_path):
    path = write(tmp_path / "x.csv", "a,b\n\n1,2\n\n\n3,NA\n")
    with pytest.raises(ValueError, match=r"missing value at data row 2 \(line 6\), column 'b'"):
        read_table(path)


def test_header_decided_on_every_row_not_only_the_first_ones(tmp_path, caplog):
    # a text cell in row 70 of a column otherwise numeric: the column is dropped with a warning
    rows = [f"{i},{i}" for i in range(70)] + ["7,?"] + ["8,8"]
    with caplog.at_level(logging.WARNING, logger="smallvis"):
        t = read_table(write(tmp_path / "y.csv", "a,b\n" + "\n".join(rows) + "\n"))
    assert t.columns == ["a"] and "'?' at line 72" in caplog.text


def test_headerless_file_whose_only_text_is_beyond_the_sniffed_lines(tmp_path):
    # no header: the first line is numbers; a text column appears only in row 80
    rows = [f"{i},{i}.5" for i in range(80)] + ["x,1.5"]
    t = read_table(write(tmp_path / "x.csv", "\n".join(rows) + "\n"))
    assert t.columns == ["V2"] and t.X.shape == (81, 1)
    np.testing.assert_array_equal(t.X[:3, 0], [0.5, 1.5, 2.5])
