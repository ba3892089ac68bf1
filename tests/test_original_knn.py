"""The original's exact kNN as gmmds and knnmmds see it (smallvis.io.original_knn).

References: rnndescent::brute_force_knn(X, k + 1), the search the original (smallvis 0.0.2.9001)
calls, run on R's iris (R 4.2.2): the neighbour sets of the points whose k-th place is an exact
single-precision tie, and a distance it returns.
"""

import numpy as np
import pytest

from smallvis.io.original_knn import original_neighbors
from smallvis.io.preprocess import scale_input

# point (0-based): its k nearest others in the original, for raw iris at k = 10
RAW_K10 = {
    66: [55, 61, 78, 84, 88, 91, 94, 95, 96, 99],
    90: [53, 55, 67, 84, 89, 92, 94, 95, 96, 99],
}
# absmax-scaled iris at k = 30 (rows 101 and 142 are the duplicated row)
SCALED_K30 = {
    37: [0, 2, 3, 4, 6, 7, 9, 10, 11, 12, 17, 19, 21, 22, 24, 26, 27, 28, 29, 30, 32, 34, 35, 39,
         40, 43, 46, 47, 48, 49],
    51: [50, 52, 54, 55, 56, 58, 61, 63, 65, 66, 70, 71, 72, 73, 74, 75, 76, 77, 78, 85, 86, 91,
         96, 97, 110, 123, 126, 127, 133, 138],
    71: [51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 69, 73, 74, 75, 78, 79, 80, 82, 87, 88, 89,
         90, 91, 92, 94, 95, 96, 97, 99],
    86: [50, 51, 52, 54, 56, 58, 63, 65, 70, 72, 73, 74, 75, 76, 77, 78, 85, 91, 97, 110, 111,
         116, 123, 126, 127, 133, 137, 138, 146, 147],
    100: [102, 103, 104, 107, 108, 109, 110, 111, 112, 114, 115, 116, 120, 124, 125, 128, 129,
          132, 136, 137, 139, 140, 141, 142, 143, 144, 145, 147, 148, 149],
    101: [55, 63, 66, 70, 72, 73, 78, 83, 91, 103, 110, 111, 113, 114, 116, 119, 121, 123, 126,
          127, 128, 132, 133, 134, 137, 138, 142, 146, 147, 149],
    128: [77, 100, 102, 103, 104, 108, 110, 111, 112, 115, 116, 120, 123, 124, 132, 133, 134, 136,
          137, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149],
    137: [77, 83, 103, 104, 108, 110, 111, 112, 115, 116, 120, 123, 124, 126, 127, 128, 132, 133,
          134, 136, 138, 139, 140, 143, 144, 145, 146, 147, 148, 149],
    142: [55, 63, 66, 70, 72, 73, 78, 83, 91, 101, 103, 110, 111, 113, 114, 116, 119, 121, 123,
          126, 127, 128, 132, 133, 134, 137, 138, 146, 147, 149],
}


@pytest.mark.parametrize("scaled, k, expected", [(False, 10, RAW_K10), (True, 30, SCALED_K30)])
def test_neighbour_sets_of_the_original(iris, scaled, k, expected):
    X = scale_input(iris, "absmax") if scaled else iris
    idx, dist = original_neighbors(X, k)
    for i, others in expected.items():
        assert sorted(idx[i]) == others, i
    assert np.all(np.diff(dist, axis=1) >= 0)


def test_exact_ties_at_the_kth_place_follow_the_heap_not_the_index(iris):
    """On scaled iris, points 101 and 142 (the duplicate) tie at the 30th place for point 100:
    the original keeps 142; point 137 has three points tied for two places and keeps 138 and 144,
    which neither index order (138, 141) nor reverse index order (141, 144) gives."""
    X = scale_input(iris, "absmax")
    idx, dist = original_neighbors(X, 30)
    assert 142 in idx[100] and 101 not in idx[100]
    tied = {138, 141, 144}
    assert tied & set(idx[137]) == {138, 144}


def test_distances_in_single_precision(iris):
    X = scale_input(iris, "absmax")
    idx, dist = original_neighbors(X, 3)
    # the original's distance from point 0 to its first other neighbour, point 17
    assert idx[0, 0] == 17
    assert dist[0, 0] == 0.031826853041076741
    assert abs(np.linalg.norm(X[0] - X[17]) - 0.031826861871419532) < 1e-15


def test_a_duplicate_lists_its_twin_not_itself(iris):
    """Each of the duplicated rows has the other at distance 0 as its first neighbour, never
    itself, whatever the order in which the search puts the tied zeros."""
    idx, dist = original_neighbors(iris, 5)
    assert idx[101, 0] == 142 and idx[142, 0] == 101
    assert dist[101, 0] == 0.0 and dist[142, 0] == 0.0
    assert not np.any(idx == np.arange(len(iris))[:, None])


def test_more_duplicates_than_neighbours():
    X = np.vstack([np.zeros((4, 2)), [[1.0, 0.0], [2.0, 0.0]]])
    idx, dist = original_neighbors(X, 2)
    assert idx.shape == (6, 2) and not np.any(idx == np.arange(6)[:, None])
    assert np.all(dist[:4] == 0.0)
