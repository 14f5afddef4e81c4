"""Event mappings in columns, and the operators event patterns are evaluated with over them
(RSEP-QL Sect. 4.2-4.4, EP-SPARQL Sect. 4.2, CQELS-CEP Sect. 4.2): compatible joins, a band
join for "ends before the other starts" (SEQ), anti-joins for the negated forms, the
intervals' order ``≺`` that selection policies pick by, and sets of mappings.

An event mapping ``(μ, t1, t2)`` is a row: its interval, a term id per variable
(:data:`UNBOUND` where ``μ`` leaves one unbound) and the *context* it was found under, the
row of a context table (an active window's upper bound and the bindings substituted, as
``μ2(E1)`` in Eq. (7)). One call evaluates a sub-pattern under many contexts at once, so
that an operator costs a few array operations per evaluation instant, not a Python step
per mapping. Rows may carry the basic-event solutions that justify them (``leaves``), which
consumption takes out of the potential input (Def. 8-10).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rsep.engine.dataset import spans_of
from rsep.engine.pattern import equal_pairs, join_keys
from rsep.engine.terms import TermDictionary
from rsep.rdf.sparql import Mu
from rsep.rdf.terms import Term

__all__ = [
    "UNBOUND",
    "WHOLE",
    "Mappings",
    "aligned",
    "before_pairs",
    "compatible_pairs",
    "concatenated",
    "context_pairs",
    "decoded",
    "distinct_rows",
    "dominant",
    "in_rows",
    "joined_leaves",
    "merged",
    "row_groups",
    "unblocked",
]

UNBOUND = -1
"""The term id of a variable a mapping leaves unbound."""

WHOLE = np.iinfo(np.int64).max
"""The upper bound of the active window ``W^id`` (RSEP-QL Sect. 4.3): none."""

_FEW_ROWS = 256
"""Rows :func:`row_groups` sorts column by column (packing them costs more)."""

Leaves = tuple[np.ndarray, np.ndarray]
"""Pairs ``(row, leaf)``: row ``row`` is justified by basic-event solution ``leaf``."""


@dataclass(frozen=True)
class Mappings:
    """Event mappings ``(μ, t1, t2)`` (RSEP-QL Sect. 4.2) in columns (module docstring)."""

    context: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    columns: Mapping[str, np.ndarray]
    leaves: Leaves | None = None

    def __len__(self) -> int:
        return len(self.context)

    def take(self, rows: np.ndarray) -> Mappings:
        """The mappings at ``rows`` (in that order, a row possibly more than once), each
        with the leaves of the row it repeats."""
        return Mappings(
            self.context[rows],
            self.t1[rows],
            self.t2[rows],
            {n: c[rows] for n, c in self.columns.items()},
            None if self.leaves is None else carried(self.leaves, rows),
        )

    def distinct(self) -> Mappings:
        """The set of the mappings (per context), each with the union of the leaves of
        the rows it stood for: a sub-pattern's answer is a set (Sect. 4.2)."""
        if len(self) < 2:
            return self
        names = sorted(self.columns)
        table = np.stack(
            [self.context, self.t1, self.t2, *(self.columns[n].astype(np.int64) for n in names)],
            axis=1,
        )
        table, inverse = distinct_rows(table)
        if len(table) == len(self):
            return self  # already a set
        leaves = self.leaves
        if leaves is not None:
            pairs = distinct_rows(np.stack([inverse[leaves[0]], leaves[1]], axis=1))[0]
            leaves = (pairs[:, 0], pairs[:, 1])
        return Mappings(
            table[:, 0],
            table[:, 1],
            table[:, 2],
            {n: table[:, 3 + k].astype(np.int32) for k, n in enumerate(names)},
            leaves,
        )


def carried(leaves: Leaves, rows: np.ndarray) -> Leaves:
    """The leaves of new rows made from old ``rows`` (new row ``i`` from old ``rows[i]``)."""
    new, old = equal_pairs(rows.astype(np.int64), leaves[0].astype(np.int64))
    return new.astype(np.int64), leaves[1][old]


def joined_leaves(left: Leaves, li: np.ndarray, right: Leaves, ri: np.ndarray) -> Leaves:
    """The leaves of rows joined from ``left``'s ``li`` and ``right``'s ``ri``: both's."""
    a, b = carried(left, li), carried(right, ri)
    return np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])


def concatenated(a: Mappings, b: Mappings) -> Mappings:
    """The mappings of ``a`` then those of ``b`` (same columns), with their leaves."""
    leaves = None
    if a.leaves is not None and b.leaves is not None:
        leaves = (
            np.concatenate([a.leaves[0], b.leaves[0] + len(a)]),
            np.concatenate([a.leaves[1], b.leaves[1]]),
        )
    return Mappings(
        np.concatenate([a.context, b.context]),
        np.concatenate([a.t1, b.t1]),
        np.concatenate([a.t2, b.t2]),
        {n: np.concatenate([a.columns[n], b.columns[n]]) for n in a.columns},
        leaves,
    )


def aligned(found: Mappings, names: Sequence[str]) -> Mappings:
    """``found`` with a column for each of ``names`` (:data:`UNBOUND` where it had none)."""
    if set(found.columns) == set(names):
        return found
    n = len(found)
    columns = {m: found.columns.get(m, np.full(n, UNBOUND, np.int32)) for m in names}
    return Mappings(found.context, found.t1, found.t2, columns, found.leaves)


def decoded(found: Mappings, dictionary: TermDictionary, cache: dict[int, Term]) -> list[Mu]:
    """The ``μ`` of each row as terms (``cache``: terms decoded before, by id)."""
    names = sorted(found.columns)
    if names and len(found):
        ids = np.unique(np.concatenate([found.columns[n] for n in names]))
        new = [i for i in ids.tolist() if i != UNBOUND and i not in cache]
        if new:
            cache.update(zip(new, dictionary.nodes(np.asarray(new)), strict=True))  # type: ignore[arg-type]
    rows = (
        zip(*(found.columns[n].tolist() for n in names), strict=True)
        if names
        else ((),) * len(found)
    )
    return [
        Mu({n: cache[i] for n, i in zip(names, ids, strict=True) if i != UNBOUND}) for ids in rows
    ]


def _masks(columns: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Which of ``columns`` each row binds, as bits."""
    mask = np.zeros(n, np.int64)
    for k, column in enumerate(columns):
        mask |= (column != UNBOUND).astype(np.int64) << k
    return mask


def compatible_pairs(
    left: Sequence[np.ndarray],
    right: Sequence[np.ndarray],
    n_left: int,
    n_right: int,
    *,
    equal: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows ``(i, j)`` whose values agree on each column both bind (SPARQL
    1.1 sec. 18.3, compatible mappings), in the order of ``left``; the first ``equal``
    columns (a context, say) must be equal and are never unbound."""
    ml = _masks(left[equal:], n_left)
    mr = _masks(right[equal:], n_right)
    lis: list[np.ndarray] = []
    ris: list[np.ndarray] = []
    for a in np.unique(ml).tolist():
        la = np.flatnonzero(ml == a)
        for b in np.unique(mr).tolist():
            rb = np.flatnonzero(mr == b)
            keys = list(range(equal)) + [
                equal + k for k in range(len(left) - equal) if (a & b) >> k & 1
            ]
            if keys:
                lk, rk = join_keys([left[k][la] for k in keys], [right[k][rb] for k in keys])
                i, j = equal_pairs(lk, rk)
            else:
                i = np.repeat(np.arange(len(la)), len(rb))
                j = np.tile(np.arange(len(rb)), len(la))
            lis.append(la[i])
            ris.append(rb[j])
    if not lis:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    li, ri = np.concatenate(lis), np.concatenate(ris)
    if len(lis) > 1:
        order = np.argsort(li, kind="stable")
        li, ri = li[order], ri[order]
    return li.astype(np.int64), ri.astype(np.int64)


def merged(
    left: Mapping[str, np.ndarray],
    li: np.ndarray,
    right: Mapping[str, np.ndarray],
    ri: np.ndarray,
) -> dict[str, np.ndarray]:
    """``μ1 ∪ μ2`` of compatible pairs: each variable's value from whichever binds it."""
    out: dict[str, np.ndarray] = {}
    for name in {*left, *right}:
        a = left[name][li] if name in left else None
        b = right[name][ri] if name in right else None
        if a is None:
            out[name] = b  # type: ignore[assignment]
        elif b is None:
            out[name] = a
        else:
            out[name] = np.where(a == UNBOUND, b, a)
    return out


def dominant(context: np.ndarray, t1: np.ndarray, t2: np.ndarray, *, latest: bool) -> np.ndarray:
    """Which rows have an interval no other interval of their context precedes
    (``latest=False``: FIRST, ``SEQ^c``) or follows (``latest=True``: LAST, ``SEQ^r``,
    ``SEQ^n``) in ``≺``, the product order on ``(t1, t2)`` (RSEP-QL Sect. 4.2, as the oracle
    reads it). Sorted lexicographically within its context, an interval is preceded exactly
    when a different one before it ends no later (a running minimum of the ends)."""
    n = len(context)
    keep = np.zeros(n, bool)
    if n == 0:
        return keep
    a, b = (-t1, -t2) if latest else (t1, t2)
    order = np.lexsort((b, a, context))
    c, a, b = context[order], a[order], b[order]
    new_context = np.ones(n, bool)
    new_context[1:] = c[1:] != c[:-1]
    new_interval = new_context.copy()
    new_interval[1:] |= (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    group = np.cumsum(new_context) - 1
    rank = np.unique(b, return_inverse=True)[1].reshape(-1).astype(np.int64)
    lift = (int(group[-1]) + 1 - group) * (n + 1)  # earlier contexts never lower the minimum
    running = np.minimum.accumulate(rank + lift)
    starts = np.flatnonzero(new_interval)
    start = starts[np.cumsum(new_interval) - 1]
    before = np.maximum(start - 1, 0)
    earlier = (start > 0) & ~new_context[start]
    best = np.where(earlier, running[before] - lift, n + 1)
    keep[order] = rank < best
    return keep


def row_groups(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of an int64 table sorted (``order``) and, in that order, the number of the
    distinct row each one is (``group``, from 0): equal rows made one, without hashing."""
    n = len(table)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = _packed(table) if n > _FEW_ROWS else list(table.T)
    order = np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(keys[::-1])
    new = np.zeros(n, bool)
    for key in keys:
        ordered = key[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    new[0] = True
    return order, np.cumsum(new) - 1


def _packed(table: np.ndarray) -> list[np.ndarray]:
    """An int64 table's rows as few int64 keys that order and compare as the rows do: the
    columns' offsets from their least value side by side in as few words as their ranges
    allow (one sort key instead of one per column)."""
    keys: list[np.ndarray] = []
    key: np.ndarray | None = None
    used = 0
    for column in table.T:
        low, high = int(column.min()), int(column.max())
        bits = (high - low).bit_length()
        if bits > 62:
            if key is not None:
                keys.append(key)
            keys.append(column)
            key, used = None, 0
            continue
        offset = column - low if low else column
        if key is None or used + bits > 62:
            if key is not None:
                keys.append(key)
            key, used = offset.astype(np.int64, copy=True), bits
        else:
            key = (key << bits) | offset
            used += bits
    if key is not None:
        keys.append(key)
    return keys


def distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an int64 table, sorted, and for each row of ``table`` the
    number of its distinct row."""
    order, group = row_groups(table)
    inverse = np.empty(len(table), np.int64)
    inverse[order] = group
    first = np.ones(len(order), bool)
    first[1:] = group[1:] != group[:-1]
    return table[order[first]], inverse


def in_rows(rows: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Which rows of ``rows`` (an int64 table) are rows of ``among`` (same width)."""
    if not len(rows) or not len(among):
        return np.zeros(len(rows), bool)
    order, group = row_groups(np.concatenate([rows, among]))
    theirs = order >= len(rows)
    found = np.zeros(int(group[-1]) + 1, bool)
    found[group[theirs]] = True
    out = np.empty(len(rows), bool)
    out[order[~theirs]] = found[group[~theirs]]
    return out


def before_pairs(
    a: Mappings, b: Mappings, bound: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The compatible pairs of ``a`` and ``b`` in one context with ``a`` ending before ``b``
    starts (``t2 < t3``: SEQ) and, with ``bound``, lasting together at most ``bound``: a band
    join, each ``b`` meeting the ``a`` of its key in a range of end times (sorted, found by
    bisection) when the shared variables are bound in every row; else every compatible
    pair, filtered."""
    if not len(a) or not len(b):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    shared = sorted(a.columns.keys() & b.columns.keys())
    useful = a.t2 < b.t1.max()
    if bound is not None:
        useful &= a.t1 >= b.t2.min() - bound
    rows = np.flatnonzero(useful)
    lowest = min(int(a.context.min()), int(b.context.min()))
    by_context = max(int(a.context.max()), int(b.context.max())) != lowest
    left = [a.columns[n][rows] for n in shared]
    right = [b.columns[n] for n in shared]
    if all((c != UNBOUND).all() for c in (*left, *right)):
        lkeys = [a.context[rows], *left] if by_context else left
        rkeys = [b.context, *right] if by_context else right
        lk, rk = (
            join_keys(lkeys, rkeys)
            if lkeys
            else (np.zeros(len(rows), np.int64), np.zeros(len(b), np.int64))
        )
        ends = a.t2[rows]
        order = np.lexsort((ends, lk))
        lk, ends = lk[order], ends[order]
        keys = np.concatenate([lk, rk])
        _, rank = np.unique(keys, return_inverse=True)
        rank = rank.reshape(-1).astype(np.int64)
        floor = None if bound is None else b.t2 - bound
        low = int(min(ends.min(initial=0), b.t1.min()))
        if floor is not None:
            low = min(low, int(floor.min()))
        span = int(max(ends.max(initial=0), b.t1.max())) - low + 2
        if span * (int(rank.max(initial=0)) + 2) < 2**62:
            here = rank[: len(lk)] * span + (ends - low)
            theirs = rank[len(lk) :] * span
            first = theirs if floor is None else theirs + (floor - low)
            start = np.searchsorted(here, first, "left")
            stop = np.searchsorted(here, theirs + (b.t1 - low), "left")
            stop = np.maximum(stop, start)
            li = rows[order[spans_of(start, stop)]]
            ri = np.repeat(np.arange(len(b)), stop - start)
            if bound is not None:
                keep = b.t2[ri] - a.t1[li] <= bound
                li, ri = li[keep], ri[keep]
            return li, ri
    li, ri = compatible_pairs(
        [a.context[rows], *left],
        [b.context, *right],
        len(rows),
        len(b),
        equal=1,
    )
    li = rows[li]
    keep = a.t2[li] < b.t1[ri]
    if bound is not None:
        keep &= b.t2[ri] - a.t1[li] <= bound
    return li[keep], ri[keep]


def unblocked(
    found: Mappings, negative: Mappings, blocks: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Which rows of ``found`` no compatible row of ``negative`` in the same context blocks
    (``blocks(i, j)``: whether negative row ``j[k]`` blocks row ``i[k]``, for pairs): the
    anti-join of a negated form (CQELS-CEP's SEQ_WO, NO_HEAD, NO_TAIL)."""
    keep = np.ones(len(found), bool)
    if not len(found) or not len(negative):
        return keep
    li, ri = context_pairs(found, negative)
    keep[li[blocks(li, ri)]] = False
    return keep


def context_pairs(a: Mappings, b: Mappings) -> tuple[np.ndarray, np.ndarray]:
    """Every compatible pair of rows of ``a`` and ``b`` in one context (on the variables
    both have columns for)."""
    shared = sorted(a.columns.keys() & b.columns.keys())
    return compatible_pairs(
        [a.context, *(a.columns[n] for n in shared)],
        [b.context, *(b.columns[n] for n in shared)],
        len(a),
        len(b),
        equal=1,
    )
