"""The columnar operators on event mappings (``rsep.engine.event_operators``): the order
``≺`` selection policies pick by, compatible joins with unbound variables, sets of mappings
and their leaves; each against a plain Python reading of its definition on random tables."""

from __future__ import annotations

from random import Random

import numpy as np
import pytest

from rsep.engine.event_operators import (
    UNBOUND,
    Mappings,
    compatible_pairs,
    distinct_rows,
    dominant,
    in_rows,
    merged,
)


def intervals_kept(intervals: list[tuple[int, int]], *, latest: bool) -> set[tuple[int, int]]:
    """The intervals nothing else precedes (follows) in the product order: RSEP-QL Sect.
    4.2 read literally, in O(n²)."""

    def before(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a != b and a[0] <= b[0] and a[1] <= b[1]

    return {
        x
        for x in intervals
        if not any((before(x, y) if latest else before(y, x)) for y in intervals)
    }


def test_dominant_on_the_papers_intervals() -> None:
    """FIRST/LAST of Fig. 1's sequences at 10: e1 = (2, 6) first; e3 = (2, 10) and e4 =
    (4, 8) last (≺ is partial); a repeated interval is one interval."""
    intervals = [(2, 10), (4, 8), (2, 6), (4, 6)]
    context = np.zeros(4, np.int64)
    t1 = np.array([a for a, _ in intervals], np.int64)
    t2 = np.array([b for _, b in intervals], np.int64)
    assert dominant(context, t1, t2, latest=True).tolist() == [True, True, False, False]
    assert dominant(context, t1, t2, latest=False).tolist() == [False, False, True, False]
    same = np.array([3, 3], np.int64)
    assert dominant(np.zeros(2, np.int64), same, same, latest=False).tolist() == [True, True]


@pytest.mark.parametrize("latest", [False, True])
def test_dominant_per_context_on_random_intervals(latest: bool) -> None:
    """Each context's intervals are picked alone, as the literal reading picks them."""
    rng = Random(5)
    for _ in range(300):
        n = rng.randint(0, 12)
        rows = [(rng.randint(0, 3), rng.randint(0, 6), rng.randint(0, 6)) for _ in range(n)]
        rows = [(c, a, a + b) for c, a, b in rows]
        context = np.array([r[0] for r in rows], np.int64)
        t1 = np.array([r[1] for r in rows], np.int64)
        t2 = np.array([r[2] for r in rows], np.int64)
        kept = dominant(context, t1, t2, latest=latest).tolist()
        for c in set(context.tolist()):
            mine = [(a, b) for (k, a, b) in rows if k == c]
            expected = intervals_kept(mine, latest=latest)
            got = {(a, b) for (k, a, b), keep in zip(rows, kept, strict=True) if k == c and keep}
            assert got == expected, (rows, c)
            kept_rows = zip(rows, kept, strict=True)
            assert all(keep for (k, a, b), keep in kept_rows if k == c and (a, b) in got)


def test_compatible_pairs_with_unbound_values() -> None:
    """Rows join when each variable both bind is equal; an unbound value joins anything;
    the context columns must be equal."""
    rng = Random(9)
    for _ in range(200):
        n, m = rng.randint(0, 6), rng.randint(0, 6)
        left = [[rng.choice((UNBOUND, 1, 2)) for _ in range(n)] for _ in range(2)]
        right = [[rng.choice((UNBOUND, 1, 2)) for _ in range(m)] for _ in range(2)]
        lctx = [rng.randint(0, 1) for _ in range(n)]
        rctx = [rng.randint(0, 1) for _ in range(m)]
        li, ri = compatible_pairs(
            [np.array(lctx, np.int64), *(np.array(c, np.int32) for c in left)],
            [np.array(rctx, np.int64), *(np.array(c, np.int32) for c in right)],
            n,
            m,
            equal=1,
        )
        expected = [
            (i, j)
            for i in range(n)
            for j in range(m)
            if lctx[i] == rctx[j]
            and all(
                left[k][i] == UNBOUND or right[k][j] == UNBOUND or left[k][i] == right[k][j]
                for k in range(2)
            )
        ]
        assert sorted(zip(li.tolist(), ri.tolist(), strict=True)) == expected
        assert li.tolist() == sorted(li.tolist())  # in the order of the left rows
        both = merged(
            {"x": np.array(left[0], np.int32)}, li, {"x": np.array(right[0], np.int32)}, ri
        )
        for k, (i, j) in enumerate(zip(li.tolist(), ri.tolist(), strict=True)):
            assert both["x"][k] == (left[0][i] if left[0][i] != UNBOUND else right[0][j])


def test_distinct_mappings_keep_every_leaf() -> None:
    """A set of mappings: a mapping found twice is one row, justified by both leaves."""
    found = Mappings(
        np.array([0, 0, 1], np.int64),
        np.array([2, 2, 2], np.int64),
        np.array([4, 4, 4], np.int64),
        {"x": np.array([7, 7, 7], np.int32)},
        (np.array([0, 1, 2], np.int64), np.array([10, 11, 12], np.int64)),
    )
    unique = found.distinct()
    assert unique.context.tolist() == [0, 1]
    assert unique.leaves is not None
    pairs = sorted(zip(unique.leaves[0].tolist(), unique.leaves[1].tolist(), strict=True))
    assert pairs == [(0, 10), (0, 11), (1, 12)]
    taken = unique.take(np.array([1, 1, 0]))
    assert taken.leaves is not None
    assert sorted(zip(*(x.tolist() for x in taken.leaves), strict=True)) == [
        (0, 12),
        (1, 12),
        (2, 10),
        (2, 11),
    ]


def test_in_rows() -> None:
    """Membership of whole rows."""
    rows = np.array([[1, 2], [3, 4], [1, 4]], np.int64)
    among = np.array([[1, 4], [9, 9]], np.int64)
    assert in_rows(rows, among).tolist() == [False, False, True]
    assert in_rows(rows, np.zeros((0, 2), np.int64)).tolist() == [False] * 3


@pytest.mark.parametrize("rows", [5, 300, 3000])
def test_distinct_rows_equal_numpys_on_columns_of_every_range(rows: int) -> None:
    """Rows made one and sorted as ``np.unique`` does, whether their columns are sorted one
    by one (few rows) or packed into few words (many), with columns of small ranges, times
    of 40 bits, unbound ids, ``WHOLE`` and the extremes of int64."""
    rng = Random(rows)
    extremes = [np.iinfo(np.int64).max, np.iinfo(np.int64).min, UNBOUND, 0]
    for _ in range(30):
        columns = []
        for _ in range(rng.randint(1, 6)):
            kind = rng.randrange(3)
            if kind == 0:
                values = [rng.randint(-1, 3) for _ in range(rows)]
            elif kind == 1:
                values = [rng.randint(0, 2**40) for _ in range(rows)]
            else:
                values = [rng.choice(extremes) for _ in range(rows)]
            columns.append(np.array(values, np.int64))
        table = np.stack(columns, axis=1)
        found, inverse = distinct_rows(table)
        expected, where = np.unique(table, axis=0, return_inverse=True)
        assert found.tolist() == expected.tolist()
        assert inverse.tolist() == where.reshape(-1).tolist()
