"""Window state: the items of each stream that a window may still read, kept as events
arrive and evicted as the windows slide (S2R; RSP-QL Def. 12-13, RSEP-QL Sect. 3.2).

The window functions themselves are the plan's (:mod:`rsep.algebra.window`): which extents
``(o, c]`` a window function reads at ``t`` under a present rule. This module binds them to
arriving items, incrementally:

- :class:`StreamBuffer`: the items of one stream that some window may still read, in
  stream order, each with its absolute position (1, 2, … from the stream's first item, so
  that count-based windows keep counting after eviction);
- :class:`WindowState`: one named window over its stream's buffer: its content ``W(S, t)``
  at an instant as ranges of positions (:data:`Ranges`), whether a window closes at ``t``
  (SECRET's window close), and how far back its future contents can reach (eviction);
- pure functions of the plan that the oracle also uses (``rsep.semantics.window``):
  :func:`origin`, :func:`horizon`, :func:`interval_ends`, :func:`reads_up_to`, rebuilt here
  because the engine may not import the oracle.

A content is the union of the items in the window's extents (``all_ended`` and nested
windows name several), and every extent selects a contiguous run of a stream's items
(items come in non-decreasing time), so a content is a few ranges of positions: two
contents compare and differ range by range, not item by item.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.window import (
    Composed,
    CountWindow,
    Extent,
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    NowWindow,
    PresentRule,
    Reading,
    TimeWindow,
    WindowBounds,
    WindowFunction,
    horizon,
    interval_ends,
    origin,
)
from rsep.engine.terms import TermDictionary
from rsep.errors import UserError
from rsep.rdf.event import Event

__all__ = [
    "FOREVER",
    "Ranges",
    "Reading",
    "StreamBuffer",
    "WindowState",
    "difference",
    "horizon",
    "interval_ends",
    "merge",
    "origin",
    "positions",
    "reads_up_to",
]

_ONE_EXTENT = frozenset({PresentRule.LATEST, PresentRule.CLOSING, PresentRule.LAST_ENDED})
"""Present rules that name at most one window at an instant (RSP-QL Def. 13)."""

FOREVER = 2**62
"""An instant after every other (an identity window reads up to it: the end of input)."""

Ranges = tuple[tuple[int, int], ...]
"""Item positions as sorted, disjoint half-open ranges ``[lo, hi)``."""


# Ranges of positions ----------------------------------------------------------------------


def merge(ranges: Sequence[tuple[int, int]]) -> Ranges:
    """``ranges`` sorted, with empty ones dropped and overlapping or adjacent ones joined."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] < r[1]):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def difference(a: Ranges, b: Ranges) -> Iterator[int]:
    """The positions in ``a`` and not in ``b``, in order."""
    j = 0
    for lo, hi in a:
        start = lo
        while j < len(b) and b[j][1] <= start:
            j += 1
        k = j
        while start < hi:
            if k < len(b) and b[k][0] < hi:
                b_lo, b_hi = b[k]
                if b_lo > start:
                    yield from range(start, b_lo)
                start = max(start, b_hi)
                k += 1
            else:
                yield from range(start, hi)
                start = hi


def positions(ranges: Ranges) -> Iterator[int]:
    """Every position of ``ranges``, in order."""
    for lo, hi in ranges:
        yield from range(lo, hi)


# Facts about a window function (the oracle's rsep.semantics.window) -----------------------


def reads_up_to(window: WindowFunction) -> int | None:
    """The latest item time the content at any instant may read, for a window whose content
    does not stop at the evaluation instant (RSEP-QL's ``W^⊔`` reads to ``t''``, ``W^id`` the
    whole stream: :data:`FOREVER`); ``None`` for a window cut at ``t`` (every other, and a
    nesting with one such part: the intersection is cut too)."""
    if isinstance(window, IntervalWindow):
        return window.end
    if isinstance(window, IdentityWindow):
        return FOREVER
    if isinstance(window, Composed):
        outer, inner = reads_up_to(window.outer), reads_up_to(window.inner)
        if outer is None or inner is None:
            return None
        return min(outer, inner)
    return None


def _needed_since(window: WindowFunction, reading: Reading, d: int, previous: int | None) -> int:
    """A time before which no item is read by the content of ``window`` at any instant
    ``≥ d`` (nor by its window-close condition there), given the previous evaluation
    instant: the earliest opening of a window that can still be present (an item at the
    opening belongs under ``[o, c]`` bounds, so items at it are kept)."""
    if isinstance(window, TimeWindow | CountWindow):
        if isinstance(window, CountWindow):  # nested: read on the time axis, as the oracle does
            window = TimeWindow(window.size, window.slide, 0)
        begin = origin(window, reading)
        d = window.reads_as_now(d)  # a window in the past reads as it did delay before
        previous = None if previous is None else window.reads_as_now(previous)
        if reading.rule is PresentRule.ALL_ENDED:
            # windows closing after the previous evaluation
            return begin if previous is None else max(begin, previous + 1 - window.width)
        # latest: o > t - β; closing: o ≥ t - α; last_ended: o > t - α - β
        return max(begin, d - window.width - window.slide)
    if isinstance(window, LandmarkWindow):
        return origin(window, reading) - 1
    if isinstance(window, IntervalWindow):
        return window.start - 1
    if isinstance(window, NowWindow):
        return d - 1
    if isinstance(window, Composed):
        # an item of the intersection lies in both parts
        return max(
            _needed_since(window.outer, reading, d, previous),
            _needed_since(window.inner, reading, d, previous),
        )
    return -FOREVER  # identity: the whole stream


# Buffers and window states -------------------------------------------------------------------


class StreamBuffer:
    """The items of one stream that some window may still read, in columns: their times,
    and each item's distinct triples as term ids of ``dictionary`` (DESIGN.md, columnar
    form), with the absolute position of the first one kept (``offset``; positions count
    from 0 here, from 1 in RSP-QL's count windows). An item as an
    :class:`~rsep.rdf.event.Event` is the one pushed, or decoded from its ids when it came
    in a batch (:meth:`event`)."""

    def __init__(self, iri: str, dictionary: TermDictionary | None = None) -> None:
        self.iri = iri
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        self.offset = 0
        self._count = 0
        self._times = np.zeros(16, np.int64)
        self._starts = np.zeros(17, np.int64)
        """Where each kept item's triples start among the kept rows, and one past the last."""
        self._spo = np.zeros((16, 3), np.int32)
        self._events: dict[int, Event] = {}

    def __len__(self) -> int:
        return self._count

    @property
    def end(self) -> int:
        """The position after the last item that has arrived."""
        return self.offset + self._count

    @property
    def times(self) -> np.ndarray:
        """The kept items' times (int64, non-decreasing)."""
        return self._times[: self._count]

    def append(self, event: Event) -> None:
        """Add the next item of the stream (a point event: RSP-QL Def. 9)."""
        if not event.is_point:
            raise UserError(
                f"an item of stream <{event.stream}> spans [{event.t_start}, {event.t_end}]; "
                "RSP-QL windows take point timestamps (Def. 9; parameter timestamps = point)"
            )
        intern = self.dictionary.intern
        rows = [
            (intern(str(x.subject)), intern(str(x.predicate)), intern(str(x.object)))
            for x in event.graph
        ]
        spo = np.array(rows, np.int32).reshape(-1, 3)
        self._events[self.end] = event
        self.extend(np.array([event.t_start], np.int64), np.array([len(spo)], np.int64), spo)

    def extend(self, times: np.ndarray, sizes: np.ndarray, spo: np.ndarray) -> None:
        """Add the next items of the stream at once: their times, how many triples each
        has and the triples' ids (``[n, 3]``, item after item)."""
        n, m = len(times), len(spo)
        used = int(self._starts[self._count])
        self._times = _room(self._times, self._count + n)
        self._starts = _room(self._starts, self._count + n + 1)
        self._spo = _room(self._spo, used + m)
        self._times[self._count : self._count + n] = times
        self._starts[self._count + 1 : self._count + n + 1] = used + np.cumsum(sizes)
        self._spo[used : used + m] = spo
        self._count += n

    def event(self, position: int) -> Event:
        """The item at an absolute position (still kept)."""
        found = self._events.get(position)
        if found is None:
            i = position - self.offset
            lo, hi = int(self._starts[i]), int(self._starts[i + 1])
            nodes = self.dictionary.nodes(self._spo[lo:hi].reshape(-1))
            triples = [Triple(*nodes[k : k + 3]) for k in range(0, len(nodes), 3)]  # type: ignore[arg-type]
            found = Event.point(self.iri, int(self._times[i]), triples)
            self._events[position] = found
        return found

    def rows_of(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of :attr:`spo` holding the triples of the items at positions
        ``[lo[i], hi[i])`` (still kept), as ``[start[i], end[i])``."""
        return self._starts[lo - self.offset], self._starts[hi - self.offset]

    @property
    def spo(self) -> np.ndarray:
        """The kept items' triples as ids (``[rows, 3]``), item after item."""
        return self._spo[: int(self._starts[self._count])]

    def arrived(self, t: int) -> int:
        """How many items have arrived by ``t`` (time at most ``t``), evicted ones included."""
        return self.offset + int(np.searchsorted(self.times, t, "right"))

    def select(self, extent: Extent, bounds: WindowBounds) -> tuple[int, int]:
        """The positions of the items in ``extent`` under ``bounds`` (``Extent.contains``):
        one contiguous range, since times do not decrease."""
        times = self.times
        if extent.opening is None:
            lo = 0
        elif bounds is WindowBounds.OPEN_CLOSED:
            lo = int(np.searchsorted(times, extent.opening, "right"))
        else:
            lo = int(np.searchsorted(times, extent.opening, "left"))
        if extent.closing is None:
            hi = len(times)
        elif bounds is WindowBounds.CLOSED_OPEN:
            hi = int(np.searchsorted(times, extent.closing, "left"))
        else:
            hi = int(np.searchsorted(times, extent.closing, "right"))
        return (self.offset + lo, self.offset + max(lo, hi))

    def evict(self, position: int) -> None:
        """Forget the items before an absolute position (no window reads them any more)."""
        drop = min(position - self.offset, self._count)
        # moving the arrays' tails is linear: do it in chunks, not for every item
        if drop <= 0 or (drop < 64 and drop * 2 < self._count):
            return
        first = int(self._starts[drop])
        rows = int(self._starts[self._count]) - first
        self._spo[:rows] = self._spo[first : first + rows]
        self._times[: self._count - drop] = self._times[drop : self._count]
        self._starts[: self._count - drop + 1] = self._starts[drop : self._count + 1] - first
        self._events = {p: e for p, e in self._events.items() if p >= position}
        self.offset += drop
        self._count -= drop

    def position_of(self, time: int) -> int:
        """The position of the first kept item at or after ``time``."""
        return self.offset + int(np.searchsorted(self.times, time, "left"))


class WindowState:
    """One named window ``(w, 𝕎(S))`` (RSP-QL Def. 14) over its stream's buffer, read under
    its present rule, ``window.bounds`` and ``window.t0``."""

    def __init__(self, named: NamedWindow, reading: Reading, buffer: StreamBuffer) -> None:
        self.named = named
        self.window = named.window
        self.reading = reading
        self.buffer = buffer

    @property
    def iri(self) -> str:
        """The window's name."""
        return self.named.iri

    def content(self, t: int, previous: int | None) -> Ranges:
        """``W(S, t)`` as positions (the oracle's ``rsep.semantics.window.content``): the
        items in the extents the window function names at ``t`` under the present rule, each
        cut at ``t`` (RSP-QL's ``(o_p, t]``), under ``window.bounds``. A count-based window
        reads positions among the items arrived by ``t`` instead; ``previous`` is the previous
        evaluation instant (``all_ended``)."""
        window, reading = self.window, self.reading
        if isinstance(window, CountWindow):
            arrived = self.buffer.arrived(t)
            before = None
            if previous is not None and reading.rule is PresentRule.ALL_ENDED:
                before = self.buffer.arrived(previous)
            extents = window.content(arrived, reading.rule, previous=before)
            # item number i (from 1) belongs when o < i ≤ c: positions [o, c)
            return merge([(_int(e.opening), _int(e.closing)) for e in extents])
        extents = window.content(t, reading.rule, t0=reading.t0, previous=previous)
        return merge([self.buffer.select(e, reading.bounds) for e in extents])

    def spans_at(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`content` at each of ``times`` at once, as one range of positions
        ``[lo, hi)`` per instant (``lo == hi``: empty), for a time-based window read under a
        rule that names at most one extent (``latest``, ``closing``, ``last_ended``:
        RSP-QL Def. 13); ``None`` for the others."""
        window, reading = self.window, self.reading
        if not isinstance(window, TimeWindow) or reading.rule not in _ONE_EXTENT:
            return None
        o, width, slide = origin(window, reading), window.width, window.slide
        times = times - window.delay  # a past window reads then what it read delay before
        if reading.rule is PresentRule.LATEST:
            k = -((o - times) // slide) - 1  # ⌈(t - o)/β⌉ - 1
            valid = times > o
        elif reading.rule is PresentRule.CLOSING:
            k = np.maximum(0, -((o + width - times) // slide))  # max(0, ⌈(t - α - o)/β⌉)
            valid = o + k * slide < times
        else:
            k = (times - o - width) // slide
            valid = k >= 0
        opening = o + k * slide
        closing = np.maximum(np.minimum(opening + width, times), opening)  # cut at t
        kept = self.buffer.times
        bounds = reading.bounds
        lo = np.searchsorted(
            kept, opening, "right" if bounds is WindowBounds.OPEN_CLOSED else "left"
        )
        hi = np.searchsorted(
            kept, closing, "left" if bounds is WindowBounds.CLOSED_OPEN else "right"
        )
        hi = np.where(valid, np.maximum(lo, hi), lo)
        return self.buffer.offset + lo, self.buffer.offset + hi

    def closes_at(self, times: np.ndarray) -> np.ndarray | None:
        """:meth:`closes` at each of ``times`` at once, for a time-based window (``None`` for
        the others): ``t`` is some window's closing ``o + kβ + α``, ``k ≥ 0``."""
        window = self.window
        if not isinstance(window, TimeWindow):
            return None
        since = times - origin(window, self.reading) - window.width - window.delay
        result: np.ndarray = (since >= 0) & (since % window.slide == 0)
        return result

    def items(self, ranges: Ranges) -> list[Event]:
        """The items at the positions of ``ranges``, in stream order."""
        return [self.buffer.event(p) for p in positions(ranges)]

    def closes(self, t: int) -> bool:
        """SECRET's window close (RSP-QL Def. 23, WC): a window of the window function closes
        at ``t`` (the oracle's ``rsep.semantics.window.closes``)."""
        return self._closes(self.window, t)

    def _closes(self, window: WindowFunction, t: int) -> bool:
        if isinstance(window, TimeWindow):
            return bool(window.closings(t - 1, t, self.reading.t0))
        if isinstance(window, CountWindow):
            places = TimeWindow(window.size, window.slide, 0)
            before = self.buffer.arrived(t - 1)
            now = self.buffer.arrived(t)
            return now > before and bool(places.closings(before, now))
        if isinstance(window, IntervalWindow):
            return t == window.end
        if isinstance(window, NowWindow):
            return True
        if isinstance(window, LandmarkWindow | IdentityWindow):
            return False
        if isinstance(window, Composed):
            return self._closes(window.outer, t) or self._closes(window.inner, t)
        raise TypeError(f"unknown window function {type(window).__name__}")

    def keep_from(self, d: int, previous: int | None) -> int:
        """The first position that the content at an instant ``≥ d - 1`` (a report condition
        reads ``t - 1``) or the window-close condition at an instant ``≥ d`` may read, given
        the previous evaluation instant: the items before it can be evicted. Nothing at or
        after ``d - 1`` is evicted, so ``arrived`` stays exact for every instant still read."""
        window, reading = self.window, self.reading
        buffer = self.buffer
        if isinstance(window, CountWindow):
            if reading.rule is PresentRule.ALL_ENDED:
                before = 0 if previous is None else buffer.arrived(previous)
                return max(0, min(before - window.size, buffer.arrived(d - 1)))
            return max(0, buffer.arrived(d - 1) - window.size - window.slide)
        since = min(_needed_since(window, reading, d - 1, previous), d - 1)
        return buffer.position_of(since)


def _int(side: int | None) -> int:
    if side is None:  # pragma: no cover - count windows have bounded extents
        raise TypeError("a count window's extent has no side")
    return side


def _room(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` with room for ``size`` rows: itself, or a copy twice as long."""
    if len(array) >= size:
        return array
    grown = np.zeros((max(size, 2 * len(array)), *array.shape[1:]), array.dtype)
    grown[: len(array)] = array
    return grown
