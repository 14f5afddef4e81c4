"""Report policies evaluated incrementally: which instants are evaluation instants (ET,
RSP-QL Def. 23), decided one by one as the watermark passes them.

The oracle's reading of Def. 23 (``rsep.semantics.report``, docs/semantics.md "Evaluation
instants") is reproduced exactly:

- the *reporting windows* are those with their own policy, or all windows when none has
  one; ET is the set of instants at which some reporting window's policy holds, every
  condition of it (a conjunction, Example 9);
- the conditions at ``t``: content change (the items at ``t`` differ from those at
  ``t - 1``, as multisets), new content (some item at ``t`` was not there at ``t - 1``),
  window close (:meth:`~rsep.engine.window.WindowState.closes`), non-empty content, and
  periodic (``t = origin + k·p``, ``k ≥ 1``);
- only *candidate* instants are tested, as the oracle tests them: each item's time and the
  two instants after it, each opening and closing of a window function and the instant
  after it (when the policy has content change, new content or window close), the periodic
  ticks; every instant when a policy is non-empty content alone or window close on a
  ``[NOW]`` window. The candidates of all reporting windows are pooled, and every
  reporting window is tested at each (:class:`Candidates`).

The candidates before ``t`` are known once the items up to ``t`` are (an item adds only
instants at or after its time), and the conditions at ``t`` read items up to ``t`` (up to
``t''`` for an interval window ``W^⊔[t', t'']``), so ``t`` is decided once the watermark
passes it: :class:`~rsep.engine.continuous.ContinuousWindowQuery` does that.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from rsep.algebra.report import (
    CONTENT_CHANGE,
    EVENT_CONDITIONS,
    NEW_CONTENT,
    NON_EMPTY,
    WINDOW_CLOSE,
    ReportPolicy,
)
from rsep.algebra.window import (
    Composed,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    Reading,
    TimeWindow,
    WindowFunction,
    delays,
    origin,
    reporting_windows,
    ticks,
    visits_every_instant,
)
from rsep.engine.window import Ranges, WindowState, difference

__all__ = [
    "Candidates",
    "Progression",
    "Reporter",
    "reporting_windows",
    "ticks",
    "visits_every_instant",
]


@dataclass(frozen=True)
class Progression:
    """The instants ``first + k·step``, ``k ≥ 0``."""

    first: int
    step: int

    def next_after(self, t: int) -> int:
        """The first instant of the progression after ``t``."""
        if t < self.first:
            return self.first
        return self.first + ((t - self.first) // self.step + 1) * self.step


def _sides(window: WindowFunction, reading: Reading) -> tuple[list[Progression], set[int]]:
    """The openings and closings of a window function and the instants after them, as
    progressions and single instants (the oracle's ``boundaries``, each side and side + 1)."""
    if isinstance(window, TimeWindow):
        begin = origin(window, reading) + window.delay  # a past window's sides come late
        firsts = (begin, begin + 1, begin + window.width, begin + window.width + 1)
        return [Progression(first, window.slide) for first in firsts], set()
    if isinstance(window, IntervalWindow):
        sides = {window.start - 1, window.start, window.end, window.end + 1}
        return [], sides | {side + 1 for side in sides}
    if isinstance(window, LandmarkWindow):
        begin = origin(window, reading)
        return [], {begin - 1, begin, begin + 1}
    if isinstance(window, Composed):
        outer, outer_fixed = _sides(window.outer, reading)
        inner, inner_fixed = _sides(window.inner, reading)
        return outer + inner, outer_fixed | inner_fixed
    return [], set()


class Candidates:
    """The candidate instants of the reporting windows, pooled (module docstring): fixed
    progressions and instants from the plan, and the instants each arriving item adds."""

    def __init__(self, windows: Iterable[tuple[NamedWindow, ReportPolicy, Reading]]) -> None:
        self.every_instant = False
        self.progressions: list[Progression] = []
        fixed: set[int] = set()
        self.item_delays: dict[str, set[int]] = {}
        """How late each stream's items are read (:func:`delays`) by the windows that
        report on content or window close."""
        for named, policy, reading in windows:
            if visits_every_instant(policy, named.window):
                self.every_instant = True
            if policy.conditions & EVENT_CONDITIONS:
                self.item_delays.setdefault(named.stream, set()).update(delays(named.window))
                progressions, instants = _sides(named.window, reading)
                self.progressions.extend(progressions)
                fixed |= instants
            if policy.period is not None:
                begin = origin(named.window, reading)
                self.progressions.append(Progression(begin + policy.period, policy.period))
        self.fixed = sorted(fixed)
        self.progressions = sorted(set(self.progressions), key=lambda p: (p.first, p.step))
        self._items: dict[int, deque[int]] = {
            d: deque() for d in set().union(*self.item_delays.values())
        }
        """The items' instants, ascending, one queue per delay (items come in time order)."""

    def add_item(self, stream: str, t: int) -> None:
        """An item of ``stream`` at ``t`` makes ``t``, ``t + 1`` and ``t + 2`` candidates
        (it enters at its time, or after it under ``[o, c)`` bounds, or two instants after
        it through ``[NOW]`` read as ``[t - 1, t)``), each ``delay`` later for a window that
        reads it late. Items come in time order."""
        for delay in self.item_delays.get(stream, ()):
            queue = self._items[delay]
            last = queue[-1] if queue else None
            for instant in (t + delay, t + delay + 1, t + delay + 2):
                if last is None or instant > last:
                    queue.append(instant)

    def between(self, after: int, until: int) -> np.ndarray:
        """Every candidate instant in ``(after, until]`` known so far, ascending (int64),
        the item instants up to ``until`` forgotten as :meth:`next_after` forgets them."""
        if self.every_instant:
            return np.arange(after + 1, until + 1, dtype=np.int64)
        parts = [np.asarray(self.fixed[bisect_right(self.fixed, after) :], np.int64)]
        for items in self._items.values():
            while items and items[0] <= after:
                items.popleft()
            taken: list[int] = []
            while items and items[0] <= until:
                taken.append(items.popleft())
            parts.append(np.asarray(taken, np.int64))
        for p in self.progressions:
            first = p.next_after(after)
            parts.append(np.arange(first, until + 1, p.step, dtype=np.int64))
        found = np.unique(np.concatenate(parts))
        return found[found <= until]

    def next_after(self, t: int) -> int | None:
        """The first candidate instant after ``t`` known so far (later items only add
        instants at or after their own time)."""
        if self.every_instant:
            return t + 1
        found: list[int] = []
        for items in self._items.values():
            while items and items[0] <= t:
                items.popleft()
            if items:
                found.append(items[0])
        index = bisect_right(self.fixed, t)
        if index < len(self.fixed):
            found.append(self.fixed[index])
        found.extend(p.next_after(t) for p in self.progressions)
        return min(found) if found else None


class Reporter:
    """One reporting window's policy, tested at an instant (RSP-QL Def. 23; the oracle's
    ``rsep.semantics.report.reports``): every condition must hold, so the cheap ones (a
    periodic tick, a window closing) are tested first and the window's content is read
    only when a condition needs it."""

    def __init__(self, state: WindowState, policy: ReportPolicy) -> None:
        self.state = state
        self.policy = policy
        conditions = policy.conditions
        self._change = CONTENT_CHANGE in conditions
        self._new = NEW_CONTENT in conditions
        self._close = WINDOW_CLOSE in conditions
        self._non_empty = NON_EMPTY in conditions
        self._period = policy.period

    def reports_at(self, times: np.ndarray) -> np.ndarray | None:
        """:meth:`reports` at each of ``times`` at once, for a policy of ``window_close`` and
        ``non_empty`` over a time-based window read under a rule naming one extent
        (:meth:`~rsep.engine.window.WindowState.spans_at`); ``None`` for the others."""
        if self._period is not None or self._change or self._new:
            return None
        state = self.state
        out = np.ones(len(times), bool)
        if self._close:
            closes = state.closes_at(times)
            if closes is None:
                return None
            out &= closes
        if self._non_empty:
            spans = state.spans_at(times)
            if spans is None:
                return None
            out &= spans[1] > spans[0]
        return out

    def reports(self, t: int, previous: int | None, content: Callable[[], Ranges]) -> bool:
        """Whether every condition of the policy holds at ``t``; ``content()`` gives the
        window's content there, ``previous`` is the previous evaluation instant."""
        state = self.state
        if self._period is not None and not ticks(self._period, state.window, t, state.reading):
            return False
        if self._close and not state.closes(t):
            return False
        if not (self._change or self._new or self._non_empty):
            return True
        now = content()
        if self._non_empty and not now:
            return False
        if self._change or self._new:
            before = state.content(t - 1, previous)
            # the multisets of items differ where the positions do (Counter(now) vs
            # Counter(before) with the common positions taken out of both)
            entered = Counter(state.buffer.event(p) for p in difference(now, before))
            left = Counter(state.buffer.event(p) for p in difference(before, now))
            if self._change and entered == left:
                return False
            if self._new and not entered - left:
                return False
        return True
