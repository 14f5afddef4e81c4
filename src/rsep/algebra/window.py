"""Window functions (S2R): which part of a stream a query reads at an evaluation time.

Two papers define windows, and they differ:

- **RSP-QL** (seed 003, Def. 12-13). A time-based window is a pair of instants ``(o, c]``; a
  time-based sliding window ``𝕎(α, β, t0)`` generates windows ``W1, W2, …`` with ``o1 = t0``,
  ``c_i - o_i = α`` and ``o_{i+1} - o_i = β``. At ``t_now`` the *present window* ``W_p`` is
  "the one whose opening ``o_p`` is the most recent", i.e. no window opens in
  ``(o_p, t_now)``, and the time-varying graph holds the content of ``(o_p, t_now]``.
- **RSEP-QL** (seed 000, Sect. 3.2). A window function ``W[p](S, t)`` returns a substream.
  The time-based one ``W^τ[(α, β)]`` returns the items with ``t' - α < t_i ≤ t'`` where
  ``t' = ⌊t / β⌋·β``: the last window that has *closed*, with closings aligned on multiples
  of β. RSEP-QL adds landmark ``W^λ[t0]`` (``t0 ≤ t_i ≤ t``), identity ``W^id`` (the whole
  stream) and interval ``W^⊔[t', t'']`` (``t' ≤ t_i ≤ t''``) windows, and nests them with
  ``W1 • W2 (S, t) = W1(W2(S, t), t)``.

rsep models one time-based window :class:`TimeWindow` with RSP-QL's generation rule and
makes the choice of the present window a parameter (``window.present``,
:class:`PresentRule`). The paper's definition is ``latest``; RSP-QL's own Example 7 and the
window-close engines read the ``closing`` window; RSEP-QL's ``W^τ`` is ``last_ended`` on
:meth:`TimeWindow.rsepql` (``t0 = -α``, so closings fall on multiples of β).

Time is discrete (RSP-QL Def. 8; rsep counts integer milliseconds), so the closed bounds
of RSEP-QL become half-open ones without loss: ``[t0, t] = (t0 - 1, t]``. Every window is
therefore an :class:`Extent` ``(o, c]``. Which items at a boundary instant belong to a
window is a separate, engine-level choice (``window.bounds``, :class:`WindowBounds`): RSP-QL
takes ``(o, c]``, the YABench oracle ``[o, c]``.

CQELS-CEP (seed 001, Sect. 4.1) reads ``[RANGE T]``, ``[NOW]`` and ``[ALL]`` on interval
streams, cutting each item to the window: :func:`interval_width` and :func:`cut_instants`,
which its oracle and its engine share.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from rsep.algebra.report import (
    EVENT_CONDITIONS,
    WINDOW_CLOSE,
    Periodic,
    ReportPolicy,
)
from rsep.errors import UserError

__all__ = [
    "Composed",
    "CountWindow",
    "Extent",
    "IdentityWindow",
    "IntervalWindow",
    "LandmarkWindow",
    "NamedWindow",
    "NowWindow",
    "PresentRule",
    "Reading",
    "TimeWindow",
    "WindowBounds",
    "WindowFunction",
    "cut_instants",
    "delays",
    "has_now",
    "horizon",
    "interval_ends",
    "interval_width",
    "origin",
    "reporting_windows",
    "ticks",
    "visits_every_instant",
]


class PresentRule(Enum):
    """Which window(s) of a sliding window an evaluation at ``t_now`` reads (``window.present``).

    - ``LATEST``: RSP-QL's definition after Def. 13: the window with the most recent opening
      before ``t_now`` (no window opens in ``(o_p, t_now)``), read as ``(o_p, t_now]``.
    - ``CLOSING``: the earliest-opened window that still contains ``t_now`` (``o < t_now ≤
      c``), read up to ``t_now``: the window RSP-QL's Example 7 names at t = 9 (W3), the one
      a window-close engine reports when ``t_now`` is its closing instant, and CQELS's
      ``(t_now - α, t_now]`` for a window that slides every instant (RSP-QL Example 13).
    - ``LAST_ENDED``: the most recent window that has closed (``c ≤ t_now``), read whole:
      RSEP-QL's time-based window function ``W^τ`` (Sect. 3.2), which RSEP-QL Table 1 uses
      for C-SPARQL.
    - ``ALL_ENDED``: every window that closed since the previous evaluation (``previous < c
      ≤ t_now``), each read whole, so that none is skipped when evaluations are sparser
      than closings.
    """

    LATEST = "latest"
    CLOSING = "closing"
    LAST_ENDED = "last_ended"
    ALL_ENDED = "all_ended"

    def __str__(self) -> str:
        return self.value


class WindowBounds(Enum):
    """Which boundary instants of a window ``(o, c]`` hold its items (``window.bounds``).

    - ``OPEN_CLOSED``: ``o < t ≤ c``, RSP-QL Def. 12 and RSEP-QL's ``W^τ``;
    - ``CLOSED_OPEN``: ``o ≤ t < c``, the usual convention of relational stream engines;
    - ``CLOSED``: ``o ≤ t ≤ c``, the YABench oracle (``TripleWindowReader`` keeps ``start ≤
      time ≤ end``; see ``shared/data/yabench/WINDOW_FIXTURES.txt``).
    """

    OPEN_CLOSED = "open_closed"
    CLOSED_OPEN = "closed_open"
    CLOSED = "closed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Extent:
    """The time span ``(opening, closing]`` of one window (RSP-QL Def. 12: ``t ∈ (o, c]``).

    ``None`` is an unbounded side: ``Extent(None, None)`` is the whole stream (RSEP-QL's
    identity window), ``Extent(o, None)`` a landmark that never closes.
    """

    opening: int | None
    closing: int | None

    def __post_init__(self) -> None:
        if self.opening is not None and self.closing is not None and self.closing < self.opening:
            raise ValueError(f"a window closes before it opens: ({self.opening}, {self.closing}]")

    @property
    def empty(self) -> bool:
        """Whether no instant lies in ``(opening, closing]``."""
        return self.opening is not None and self.opening == self.closing

    def contains(self, t: int, bounds: WindowBounds = WindowBounds.OPEN_CLOSED) -> bool:
        """Whether an item at ``t`` belongs to this window under ``bounds``."""
        after_open = self.opening is None or (
            t > self.opening if bounds is WindowBounds.OPEN_CLOSED else t >= self.opening
        )
        before_close = self.closing is None or (
            t < self.closing if bounds is WindowBounds.CLOSED_OPEN else t <= self.closing
        )
        return after_open and before_close

    def upto(self, t: int) -> Extent:
        """The part of this window readable at ``t``: ``(o, min(c, t)]`` (RSP-QL's present
        sub-window ``W'_p = (o_p, t]``)."""
        closing = t if self.closing is None else min(self.closing, t)
        if self.opening is not None and closing < self.opening:
            closing = self.opening
        return Extent(self.opening, closing)

    def intersect(self, other: Extent) -> Extent:
        """The common part of two windows (RSEP-QL's nesting ``W1 • W2``)."""
        openings = [o for o in (self.opening, other.opening) if o is not None]
        closings = [c for c in (self.closing, other.closing) if c is not None]
        opening = max(openings) if openings else None
        closing = min(closings) if closings else None
        if opening is not None and closing is not None and closing < opening:
            closing = opening
        return Extent(opening, closing)

    def __str__(self) -> str:
        opening = "-∞" if self.opening is None else str(self.opening)
        closing = "+∞" if self.closing is None else str(self.closing)
        return f"({opening}, {closing}]"


def _order(extent: Extent) -> tuple[float, float]:
    opening = float("-inf") if extent.opening is None else extent.opening
    closing = float("inf") if extent.closing is None else extent.closing
    return (opening, closing)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


class WindowFunction(ABC):
    """A window function ``W[p](S, t)`` (RSEP-QL Def. 3; RSP-QL Def. 13 for the sliding one).

    :meth:`present` lists the windows an evaluation at ``t`` reads under a
    :class:`PresentRule`; :meth:`content` the part of each that is readable at ``t``.
    ``t0`` aligns windows that do not fix their own origin (``window.t0``); ``previous`` is
    the previous evaluation instant, which only ``ALL_ENDED`` needs.
    """

    cut_at_now: ClassVar[bool] = True
    """Whether :meth:`content` cuts each present window at ``t``."""

    @abstractmethod
    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The windows present at ``t`` under ``rule``."""

    def content(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The readable part of each present window at ``t`` (each cut at ``t``, unless the
        window's content does not depend on ``t``: :attr:`cut_at_now`)."""
        present = self.present(t, rule, t0=t0, previous=previous)
        if not self.cut_at_now:
            return present
        now = self.reads_as_now(t)
        return tuple(w.upto(now) for w in present)

    def reads_as_now(self, t: int) -> int:
        """The instant the window reads as now at ``t``: ``t`` itself, but for a window in
        the past (:attr:`TimeWindow.delay`)."""
        return t

    @abstractmethod
    def describe(self) -> str:
        """A one-line description with the paper's notation, for ``rsep explain``."""


@dataclass(frozen=True)
class TimeWindow(WindowFunction):
    """A time-based sliding window ``𝕎(α, β, t0)`` (RSP-QL Def. 13; RSEP-QL's ``W^τ``).

    Windows ``W_k = (t0 + kβ, t0 + kβ + α]`` for ``k ≥ 0``: the first opens at ``t0``, each
    is ``α = width`` long and the next opens ``β = slide`` later. ``slide == width`` is a
    tumbling window; ``slide < width`` overlaps; ``slide > width`` leaves gaps. ``t0 = None``
    takes the parameter ``window.t0``: the query languages of C-SPARQL, CQELS and
    SPARQLstream give no syntax for it (RSP-QL, "Sliding window operator for ...").

    ``delay`` reads the window in the past (the W3C RSP CG draft's ``[FROM NOW-d TO
    NOW-d']``, ``α = d - d'``, ``delay = d'``): at ``t`` it reads what it read at ``t -
    delay``, and each window closes (reports) ``delay`` after its extent ends.
    """

    width: int
    slide: int
    t0: int | None = None
    delay: int = 0

    def __post_init__(self) -> None:
        if self.width <= 0:
            raise ValueError(f"a time window needs a positive width, not {self.width}")
        if self.slide <= 0:
            raise ValueError(f"a time window needs a positive slide, not {self.slide}")
        if self.delay < 0:
            raise ValueError(f"a time window needs a delay of zero or more, not {self.delay}")

    @classmethod
    def tumbling(cls, width: int, t0: int | None = None) -> TimeWindow:
        """A tumbling window: ``slide == width`` (SPAseq's WITHIN windows, Definition 16)."""
        return cls(width, width, t0)

    @classmethod
    def rsepql(cls, width: int, slide: int) -> TimeWindow:
        """RSEP-QL's ``W^τ[(α, β)]`` (Sect. 3.2): closings on multiples of β, so ``t0 = -α``.

        Read with ``PresentRule.LAST_ENDED`` it gives ``(t' - α, t']`` with ``t' = ⌊t/β⌋·β``.
        """
        return cls(width, slide, -width)

    @property
    def tumbling_window(self) -> bool:
        """Whether consecutive windows neither overlap nor leave gaps (``slide == width``)."""
        return self.slide == self.width

    def _origin(self, t0: int) -> int:
        return self.t0 if self.t0 is not None else t0

    def window(self, k: int, t0: int = 0) -> Extent:
        """The window ``W_{k+1}`` (``k ≥ 0``), with RSP-QL's numbering from ``W_1``."""
        opening = self._origin(t0) + k * self.slide
        return Extent(opening, opening + self.width)

    def windows(self, count: int, t0: int = 0) -> tuple[Extent, ...]:
        """The first ``count`` windows ``W_1 … W_count``."""
        return tuple(self.window(k, t0) for k in range(count))

    def closings(self, after: int | None, until: int, t0: int = 0) -> tuple[int, ...]:
        """The instants in ``(after, until]`` at which a window closes, ``delay`` after its
        extent ends: the instants at which a ``WINDOW_CLOSE`` report condition holds."""
        d = self.delay
        ended = self._ended(None if after is None else after - d, until - d, t0)
        return tuple(w.closing + d for w in ended if w.closing is not None)

    def _ended(self, after: int | None, until: int, t0: int) -> tuple[Extent, ...]:
        origin = self._origin(t0)
        last = (until - origin - self.width) // self.slide
        first = 0 if after is None else max(0, (after - origin - self.width) // self.slide + 1)
        return tuple(self.window(k, t0) for k in range(first, last + 1))

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The windows present at ``t`` under ``rule`` (see :class:`PresentRule`).

        ``LATEST`` when ``t0 < t``: ``k = ⌈(t - t0)/β⌉ - 1``. If a gap (``β > α``) leaves
        ``t`` after that window's closing, the window is still the present one and reads
        whole; RSP-QL's ``W'_p ⊆ W_p`` assumes ``β ≤ α``.
        """
        if self.delay:
            t = self.reads_as_now(t)
            previous = None if previous is None else self.reads_as_now(previous)
        origin = self._origin(t0)
        if rule is PresentRule.LATEST:
            if t <= origin:
                return ()
            return (self.window(_ceil_div(t - origin, self.slide) - 1, t0),)
        if rule is PresentRule.CLOSING:
            first = max(0, _ceil_div(t - self.width - origin, self.slide))
            window = self.window(first, t0)
            if window.opening is not None and window.opening < t:
                return (window,)
            return ()
        if rule is PresentRule.LAST_ENDED:
            k = (t - origin - self.width) // self.slide
            return (self.window(k, t0),) if k >= 0 else ()
        return self._ended(previous, t, t0)

    def reads_as_now(self, t: int) -> int:
        """``t - delay``: a window in the past reads at ``t`` what it read then."""
        return t - self.delay

    def describe(self) -> str:
        t0 = "window.t0" if self.t0 is None else str(self.t0)
        kind = "tumbling " if self.tumbling_window else ""
        delay = f", read {self.delay} late" if self.delay else ""
        return f"{kind}time window (α={self.width}, β={self.slide}, t0={t0}{delay})"


@dataclass(frozen=True)
class CountWindow(WindowFunction):
    """A count-based window: the last ``size`` items, sliding by ``slide`` items (C-SPARQL's
    ``[TRIPLES n]``, RSP4J's ``ELEMENTS``; CQL's tuple-based window).

    It is :class:`TimeWindow`'s generation rule on the axis of item positions: items are
    numbered 1, 2, … in stream order, windows are ``(k·slide, k·slide + size]`` and ``t`` in
    :meth:`present` is the number of items that have arrived.
    """

    size: int
    slide: int = 1

    def __post_init__(self) -> None:
        if self.size <= 0 or self.slide <= 0:
            raise ValueError(f"a count window needs a positive size and slide: {self}")

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The position ranges present when ``t`` items have arrived."""
        return TimeWindow(self.size, self.slide, 0).present(t, rule, previous=previous)

    def describe(self) -> str:
        return f"count window (size={self.size}, slide={self.slide})"


@dataclass(frozen=True)
class LandmarkWindow(WindowFunction):
    """RSEP-QL's landmark window ``W^λ[t0]``: every item with ``t0 ≤ t_i ≤ t`` (Sect. 3.2),
    i.e. ``(t0 - 1, t]`` on discrete time. It never closes; RSEP-QL Table 1 uses it for
    EP-SPARQL, which has no windows. ``t0 = None`` takes ``window.t0``."""

    t0: int | None = None

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The one landmark window, whatever the rule; none before ``t0``."""
        origin = self.t0 if self.t0 is not None else t0
        return (Extent(origin - 1, None),) if t >= origin else ()

    def describe(self) -> str:
        return f"landmark window W^λ (t0={'window.t0' if self.t0 is None else self.t0})"


@dataclass(frozen=True)
class IntervalWindow(WindowFunction):
    """RSEP-QL's interval (fixed) window ``W^⊔[t', t'']``: every item with ``t' ≤ t_i ≤
    t''`` (Sect. 3.2), i.e. ``(t' - 1, t'']``, whatever the evaluation time. SEQ restricts its
    left operand with ``W^⊔[0, t3 - 1] • W`` (Eq. (7))."""

    cut_at_now: ClassVar[bool] = False  # W^⊔(S, t) does not depend on t

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start - 1:
            raise ValueError(
                f"an interval window ends before it starts: [{self.start}, {self.end}]"
            )

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The one interval, whatever ``t`` and the rule."""
        return (Extent(self.start - 1, self.end),)

    def describe(self) -> str:
        return f"interval window W^⊔[{self.start}, {self.end}]"


@dataclass(frozen=True)
class IdentityWindow(WindowFunction):
    """RSEP-QL's identity window ``W^id(S, t) = S`` (Sect. 3.2): the whole stream; the
    initial active window of MATCH (Sect. 4.2)."""

    cut_at_now: ClassVar[bool] = False  # W^id(S, t) = S, not cut at t

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The unbounded extent."""
        return (Extent(None, None),)

    def describe(self) -> str:
        return "identity window W^id"


@dataclass(frozen=True)
class NowWindow(WindowFunction):
    """CQELS's ``[NOW]`` window: only the items of the current instant, ``(t - 1, t]``."""

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """The current instant, whatever the rule."""
        return (Extent(t - 1, t),)

    def describe(self) -> str:
        return "now window [NOW]"


@dataclass(frozen=True)
class Composed(WindowFunction):
    """RSEP-QL's nesting ``outer • inner (S, t) = outer(inner(S, t), t)`` (Sect. 3.2): the
    items both windows keep, so each pair of present windows intersects."""

    outer: WindowFunction
    inner: WindowFunction

    def present(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """Every intersection of an inner and an outer present window that is not empty."""
        return self._combine(t, rule, t0, previous, cut=False)

    def content(
        self,
        t: int,
        rule: PresentRule = PresentRule.LATEST,
        *,
        t0: int = 0,
        previous: int | None = None,
    ) -> tuple[Extent, ...]:
        """Every intersection of the readable parts that is not empty."""
        return self._combine(t, rule, t0, previous, cut=True)

    def _combine(
        self, t: int, rule: PresentRule, t0: int, previous: int | None, *, cut: bool
    ) -> tuple[Extent, ...]:
        if cut:
            inner = self.inner.content(t, rule, t0=t0, previous=previous)
            outer = self.outer.content(t, rule, t0=t0, previous=previous)
        else:
            inner = self.inner.present(t, rule, t0=t0, previous=previous)
            outer = self.outer.present(t, rule, t0=t0, previous=previous)
        found = {a.intersect(b) for a in inner for b in outer}
        return tuple(sorted((e for e in found if not e.empty), key=_order))

    def describe(self) -> str:
        return f"{self.outer.describe()} • {self.inner.describe()}"


@dataclass(frozen=True)
class NamedWindow:
    """A named window ``(w, 𝕎(S))`` of the dataset (RSP-QL Def. 14; RSEP-QL Def. 4).

    ``report`` and ``present`` are the window's own report policy and present-window rule
    when the query text gives them (``REPORT …``); ``None`` takes the parameters
    ``window.report`` and ``window.present``.
    """

    iri: str
    stream: str
    window: WindowFunction
    report: ReportPolicy | None = None
    present: PresentRule | None = None


# How a window is read, and facts about a window function that the oracle
# (rsep.semantics) and the engine (rsep.engine) both need -----------------------------------


@dataclass(frozen=True)
class Reading:
    """How a window is read: its present-window rule (``window.present`` or the window's
    own), the boundary convention (``window.bounds``) and the default origin
    (``window.t0``) for window functions that do not fix their own."""

    rule: PresentRule = PresentRule.LATEST
    bounds: WindowBounds = WindowBounds.OPEN_CLOSED
    t0: int = 0


def origin(window: WindowFunction, reading: Reading) -> int:
    """Where a window function's time axis starts: its own ``t0`` (time-based, landmark) or
    ``window.t0`` (RSP-QL Def. 13, ``t0``)."""
    if isinstance(window, TimeWindow | LandmarkWindow) and window.t0 is not None:
        return window.t0
    return reading.t0


def horizon(window: WindowFunction) -> int:
    """How long after an item's time the window's content or its window-close condition
    can still change because of it: ``α + β`` for a time-based window (the item leaves
    when the last window holding it closes, and ``last_ended`` reads that window one
    slide longer), 1 for ``[NOW]``, the larger part's for a nested window, 0 for the
    others."""
    if isinstance(window, TimeWindow):
        return window.width + window.slide + window.delay
    if isinstance(window, NowWindow):
        return 1
    if isinstance(window, Composed):
        return max(horizon(window.outer), horizon(window.inner))
    return 0


def interval_ends(window: WindowFunction) -> list[int]:
    """The ends ``t''`` of the interval windows ``W^⊔[t', t'']`` in ``window`` (RSEP-QL
    Def. 3)."""
    if isinstance(window, IntervalWindow):
        return [window.end]
    if isinstance(window, Composed):
        return interval_ends(window.outer) + interval_ends(window.inner)
    return []


def delays(window: WindowFunction) -> set[int]:
    """How late a window function reads its items: ``{0}``, a past window's ``delay``
    (:class:`TimeWindow`), or each part's for a nested window. An item at ``t`` can change
    the content at ``t + delay`` (and the instants the bounds add after it)."""
    if isinstance(window, TimeWindow):
        return {window.delay}
    if isinstance(window, Composed):
        return delays(window.outer) | delays(window.inner)
    return {0}


def has_now(window: WindowFunction) -> bool:
    """Whether ``window`` is or contains the ``[NOW]`` window, which closes at every
    instant."""
    if isinstance(window, NowWindow):
        return True
    if isinstance(window, Composed):
        return has_now(window.outer) or has_now(window.inner)
    return False


def ticks(period: int, window: WindowFunction, t: int, reading: Reading) -> bool:
    """SECRET's periodic condition (RSP-QL Def. 23, P): ``t = origin + k·period`` for some
    ``k ≥ 1``, counted from the window's origin (:func:`origin`)."""
    start = origin(window, reading)
    return t > start and (t - start) % period == 0


def reporting_windows(windows: Sequence[NamedWindow]) -> tuple[NamedWindow, ...]:
    """The windows whose policies define ET: those with their own report policy, or all
    windows when none has one (RSP-QL Example 10; docs/semantics.md, 21)."""
    own = tuple(window for window in windows if window.report is not None)
    return own if own else tuple(windows)


def visits_every_instant(policy: ReportPolicy, window: WindowFunction) -> bool:
    """Whether the policy can hold on whole stretches of time, so that every instant is a
    candidate: non-empty content alone (a state, not an event), or window close on a
    ``[NOW]`` window."""
    if not any(c in EVENT_CONDITIONS or isinstance(c, Periodic) for c in policy.conditions):
        return True
    return WINDOW_CLOSE in policy and has_now(window)


# CQELS-CEP: windows on interval streams (seed 001, Sect. 4.1) --------------------------------


def interval_width(window: WindowFunction) -> int | None:
    """``T`` of a CQELS-CEP window ``[RANGE T]`` on an interval stream (``[NOW]`` is ``RANGE
    0``), ``None`` for ``[ALL]``; other windows raise a :class:`~rsep.errors.UserError`, as
    Sect. 4.1 defines ``w_RANGE`` (sliding by 1) only."""
    if (
        isinstance(window, TimeWindow)
        and window.slide == 1
        and window.t0 is None
        and not window.delay
    ):
        return window.width
    if isinstance(window, NowWindow):
        return 0
    if isinstance(window, LandmarkWindow):
        return None
    raise UserError(
        f"CQELS-CEP defines windows on interval streams for [RANGE T] only (Sect. 4.1); "
        f"the {window.describe()} is not evaluated"
    )


def cut_instants(t1: int, t2: int, width: int | None, start: int) -> range | list[int]:
    """Where an item over ``[t1, t2]``, cut by a CQELS-CEP window (Sect. 4.1), changes: under
    ``[RANGE T]`` (``width``), ``[max(t1, t - T), min(t2, t)]`` changes at each ``t`` in
    ``[t1, t2]`` (its end) and ``[t1 + T + 1, t2 + T + 1]`` (its start, then it leaves);
    under ``[ALL]`` from ``start`` (``width`` ``None``), at each ``t`` in ``[max(t1, start),
    t2]``."""
    if width is None:
        return range(max(t1, start), t2 + 1) if t2 >= start else []
    return [*range(t1, t2 + 1), *range(t1 + width + 1, t2 + width + 2)]
