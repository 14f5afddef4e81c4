"""Windows over finite streams: the substream a window function selects at ``t``, its
snapshot graph, and the facts about it that report policies test.

- :func:`content` is ``W(S, t)``: the items of ``S`` that the window function keeps at ``t``
  (RSEP-QL Def. 3 and Sect. 3.2; RSP-QL Def. 12-13 with the present window), under the
  plan's ``window.present``, ``window.bounds`` and ``window.t0``.
- :func:`snapshot` is the RDF graph of that substream, ``SDS_w(t) = ∪ G_k`` (RSEP-QL
  Sect. 4.1; for a triple stream RSP-QL's ``𝕎(S, t) = {d | (d, t_d) ∈ S ∧ t_d ∈ (o_p, t]}``).
- :func:`closes` and :func:`ticks` decide SECRET's window-close and periodic conditions
  (RSP-QL Def. 23); :func:`boundaries` and :func:`horizon` bound where anything can change,
  so the oracle need not visit every instant.

Only point-timestamped items are windowed here (RSP-QL Def. 9, RSEP-QL Def. 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pyoxigraph import Triple

from rsep.algebra.window import (
    Composed,
    CountWindow,
    Extent,
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NowWindow,
    Reading,
    TimeWindow,
    WindowFunction,
    horizon,
    origin,
    ticks,
)
from rsep.errors import UserError
from rsep.rdf.event import Event, Stream

__all__ = [
    "Reading",
    "boundaries",
    "closes",
    "content",
    "content_changed",
    "horizon",
    "new_content",
    "origin",
    "snapshot",
    "ticks",
]


def _point_time(event: Event) -> int:
    """The time instant of a stream item (RSP-QL Def. 9); an interval item is an error."""
    if not event.is_point:
        raise UserError(
            f"an item of stream <{event.stream}> spans [{event.t_start}, {event.t_end}]; "
            "RSP-QL windows take point timestamps (Def. 9; parameter timestamps = point)"
        )
    return event.t_start


def _arrived(stream: Stream, t: int) -> list[Event]:
    """The items that have arrived by ``t`` (time at most ``t``), in stream order."""
    return [event for event in stream if _point_time(event) <= t]


def content(
    window: WindowFunction,
    stream: Stream,
    t: int,
    reading: Reading,
    previous: int | None = None,
) -> tuple[Event, ...]:
    """``W(S, t)``: the items of ``stream`` the window function keeps at ``t``, in stream
    order (RSEP-QL Def. 3; RSP-QL Def. 12-13).

    The window function names the extents ``(o, c]`` readable at ``t`` under
    ``reading.rule`` (the present window, cut at ``t``: RSP-QL's ``W'_p = (o_p, t]``); an
    item belongs when its time lies in one of them under ``reading.bounds``. Several
    extents (``all_ended``, nested windows) give the union of their items. A count-based
    window counts positions instead: item ``i`` (from 1, in stream order, among the items
    that have arrived by ``t``) belongs when ``i`` lies in a present extent.
    ``previous`` is the previous evaluation instant, which ``all_ended`` needs.
    """
    if isinstance(window, CountWindow):
        arrived = _arrived(stream, t)
        before = None if previous is None else len(_arrived(stream, previous))
        extents = window.content(len(arrived), reading.rule, previous=before)
        return tuple(
            event
            for position, event in enumerate(arrived, start=1)
            if any(extent.contains(position) for extent in extents)
        )
    extents = window.content(t, reading.rule, t0=reading.t0, previous=previous)
    return tuple(
        event
        for event in stream
        if any(extent.contains(_point_time(event), reading.bounds) for extent in extents)
    )


def snapshot(items: Sequence[Event]) -> frozenset[Triple]:
    """The RDF graph of a window's content: ``SDS_w(t) = ∪_{(G_k, t_k) ∈ W(S, t)} G_k``
    (RSEP-QL Sect. 4.1, the snapshot of a temporal sub-dataset). Graphs are united as sets
    of triples, so a statement present twice counts once (RSP-QL's no-duplicates
    assumption)."""
    graph: set[Triple] = set()
    for event in items:
        graph.update(event.graph)
    return frozenset(graph)


def content_changed(now: Sequence[Event], before: Sequence[Event]) -> bool:
    """SECRET's content change (RSP-QL Def. 23, CC): the window's items at ``t`` differ
    from its items at ``t - 1``, by an item entering or leaving."""
    return Counter(now) != Counter(before)


def new_content(now: Sequence[Event], before: Sequence[Event]) -> bool:
    """The arrival reading of content change (``new_content``; RSP-QL's comparison: "every
    time new statements enter the window"): some item at ``t`` was not there at ``t - 1``."""
    return bool(Counter(now) - Counter(before))


def closes(window: WindowFunction, stream: Stream, t: int, reading: Reading) -> bool:
    """SECRET's window close (RSP-QL Def. 23, WC): a window of ``window`` closes at ``t``.

    Time-based windows close at ``t0 + kβ + α`` (RSP-QL Def. 13); a count-based window
    when the item that completes it arrives; an interval window ``W^⊔[t', t'']`` at
    ``t''``; the ``[NOW]`` window ``(t - 1, t]`` at every instant; landmark and identity
    windows never. A nested window ``outer • inner`` closes where either part closes.
    """
    if isinstance(window, TimeWindow):
        return bool(window.closings(t - 1, t, reading.t0))
    if isinstance(window, CountWindow):
        positions = TimeWindow(window.size, window.slide, 0)
        before = len(_arrived(stream, t - 1))
        now = len(_arrived(stream, t))
        return now > before and bool(positions.closings(before, now))
    if isinstance(window, IntervalWindow):
        return t == window.end
    if isinstance(window, NowWindow):
        return True
    if isinstance(window, LandmarkWindow | IdentityWindow):
        return False
    if isinstance(window, Composed):
        return closes(window.outer, stream, t, reading) or closes(window.inner, stream, t, reading)
    raise TypeError(f"unknown window function {type(window).__name__}")


def boundaries(window: WindowFunction, reading: Reading, start: int, until: int) -> set[int]:
    """Instants in about ``[start, until]`` at which the extents a window function reads
    can change (openings and closings; RSP-QL Def. 13). With the items' own times (and
    the instants after them) they bound where the window's content can change."""
    if isinstance(window, TimeWindow):
        # a past window's extents are read, and close, ``delay`` after their sides
        begin = origin(window, reading) + window.delay
        found: set[int] = set()
        first = max(0, (start - begin - window.width) // window.slide - 1)
        k = first
        while begin + k * window.slide <= until + 1:
            extent = window.window(k, reading.t0)
            found.update(side + window.delay for side in _sides(extent))
            k += 1
        return found
    if isinstance(window, IntervalWindow):
        return {window.start - 1, window.start, window.end, window.end + 1}
    if isinstance(window, LandmarkWindow):
        begin = origin(window, reading)
        return {begin - 1, begin}
    if isinstance(window, Composed):
        return boundaries(window.outer, reading, start, until) | boundaries(
            window.inner, reading, start, until
        )
    return set()


def _sides(extent: Extent) -> set[int]:
    return {side for side in (extent.opening, extent.closing) if side is not None}
