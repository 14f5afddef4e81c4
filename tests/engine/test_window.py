"""Window state (``rsep.engine.window``): each window's content over its stream's buffer is
the oracle's ``W(S, t)`` (``rsep.semantics.window.content``) at every instant, before and
after the eviction the engine does as it decides instants; window close is the oracle's.
(The facts of a window function, origin, horizon and interval ends, are one function each
in rsep.algebra.window, tested in tests/algebra/test_algebra_window.py.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, Triple
from windows import window_functions

from rsep.algebra.window import (
    CountWindow,
    NamedWindow,
    PresentRule,
    TimeWindow,
    WindowBounds,
    WindowFunction,
)
from rsep.engine.window import (
    Reading,
    StreamBuffer,
    WindowState,
    difference,
    merge,
    positions,
    reads_up_to,
)
from rsep.rdf.event import Event, Stream
from rsep.semantics import window as oracle

EX = "http://example.org/"
STREAM = EX + "s"


def stream_of(times: list[int], objects: list[int] | None = None) -> Stream:
    """Items at ``times`` (sorted), each a one-triple graph; equal objects make equal items."""
    objects = objects or list(range(len(times)))
    return Stream(
        STREAM,
        tuple(
            Event.point(
                STREAM,
                t,
                [Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), NamedNode(f"{EX}o{o}"))],
            )
            for t, o in zip(sorted(times), objects, strict=False)
        ),
    )


def filled(stream: Stream) -> StreamBuffer:
    buffer = StreamBuffer(STREAM)
    for event in stream:
        buffer.append(event)
    return buffer


times = st.lists(st.integers(0, 30), max_size=12).map(sorted)
functions = window_functions(identity=True)
readings = st.builds(
    Reading,
    st.sampled_from(list(PresentRule)),
    st.sampled_from(list(WindowBounds)),
    st.integers(-3, 5),
)


def as_oracle(reading: Reading) -> oracle.Reading:
    return oracle.Reading(reading.rule, reading.bounds, reading.t0)


def test_ranges() -> None:
    assert merge([(5, 7), (0, 2), (2, 3), (6, 9), (4, 4)]) == ((0, 3), (5, 9))
    assert list(difference(((0, 10),), ((2, 4), (6, 7)))) == [0, 1, 4, 5, 7, 8, 9]
    assert list(difference(((0, 3), (5, 8)), ((1, 6),))) == [0, 6, 7]
    assert list(difference(((0, 3),), ())) == [0, 1, 2]
    assert list(positions(((1, 3), (7, 8)))) == [1, 2, 7]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6)), max_size=4),
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6)), max_size=4),
)
def test_difference_is_the_set_difference(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    left = merge([(lo, lo + n) for lo, n in a])
    right = merge([(lo, lo + n) for lo, n in b])
    assert list(difference(left, right)) == sorted(set(positions(left)) - set(positions(right)))


@settings(max_examples=500, deadline=None)
@given(times, functions, readings, st.lists(st.integers(-2, 40), min_size=1, max_size=8))
def test_content_is_the_oracles(
    found: list[int], window: WindowFunction, reading: Reading, instants: list[int]
) -> None:
    """At each instant, with each previous evaluation instant (``all_ended``), the items
    of the content are the oracle's ``W(S, t)``, in stream order."""
    stream = stream_of(found)
    state = WindowState(NamedWindow(EX + "w", STREAM, window), reading, filled(stream))
    previous = None
    for t in sorted(instants):
        want = oracle.content(window, stream, t, as_oracle(reading), previous)
        assert state.items(state.content(t, previous)) == list(want)
        assert state.closes(t) == oracle.closes(window, stream, t, as_oracle(reading))
        previous = t


@settings(max_examples=500, deadline=None)
@given(
    times,
    functions,
    readings,
    st.lists(st.integers(-2, 45), min_size=1, max_size=10),
    st.lists(st.booleans(), min_size=1, max_size=10),
)
def test_eviction_keeps_what_later_instants_read(
    found: list[int],
    window: WindowFunction,
    reading: Reading,
    instants: list[int],
    evaluated: list[bool],
) -> None:
    """Deciding instants in order and evicting what ``keep_from`` allows, the content at
    every later instant (and the instant before it) and window close stay the oracle's."""
    stream = stream_of(found)
    buffer = StreamBuffer(STREAM)
    state = WindowState(NamedWindow(EX + "w", STREAM, window), reading, buffer)
    events = list(stream)
    previous = None
    for i, t in enumerate(sorted(set(instants))):
        ahead = reads_up_to(window)  # a window not cut at t waits for the items it reads
        arrived = t if ahead is None else max(t, ahead)
        while events and events[0].t_start <= arrived:
            buffer.append(events.pop(0))
        for when in (t - 1, t):
            want = oracle.content(window, stream, when, as_oracle(reading), previous)
            assert state.items(state.content(when, previous)) == list(want), when
        assert state.closes(t) == oracle.closes(window, stream, t, as_oracle(reading))
        if evaluated[i % len(evaluated)]:
            previous = t
        buffer.evict(state.keep_from(t + 1, previous))
    assert len(buffer) <= len(stream)


def test_eviction_bounds_a_sliding_window() -> None:
    """A sliding window over a long stream keeps about one window of items."""
    stream = stream_of(list(range(1000)))
    buffer = StreamBuffer(STREAM)
    reading = Reading(PresentRule.CLOSING, WindowBounds.OPEN_CLOSED, 0)
    state = WindowState(NamedWindow(EX + "w", STREAM, TimeWindow(20, 5, 0)), reading, buffer)
    most = 0
    for event in stream:
        buffer.append(event)
        buffer.evict(state.keep_from(event.t_start, None))
        most = max(most, len(buffer))
    assert most <= 20 + 5 + 2 + 64


def test_count_positions_survive_eviction() -> None:
    """Positions are absolute: a count window keeps counting after its head is evicted."""
    stream = stream_of(list(range(200)))
    buffer = filled(stream)
    reading = Reading(PresentRule.LAST_ENDED, WindowBounds.OPEN_CLOSED, 0)
    state = WindowState(NamedWindow(EX + "w", STREAM, CountWindow(3, 3)), reading, buffer)
    buffer.evict(state.keep_from(150, None))
    assert buffer.offset > 100
    want = oracle.content(CountWindow(3, 3), stream, 150, oracle.Reading(PresentRule.LAST_ENDED))
    assert state.items(state.content(150, None)) == list(want)


@given(functions, readings)
def test_facts_of_a_window_function(window: WindowFunction, reading: Reading) -> None:
    if reads_up_to(window) is not None:
        # a window not cut at t (interval, identity) reads the same items at every instant
        stream = stream_of([0, 5, 10, 15, 20, 25, 30])
        contents = {
            tuple(oracle.content(window, stream, t, as_oracle(reading))) for t in range(-1, 41)
        }
        assert len(contents) == 1


def test_interval_items_are_refused() -> None:
    import pytest

    from rsep.errors import UserError

    with pytest.raises(UserError, match="point timestamps"):
        StreamBuffer(STREAM).append(Event(STREAM, 1, 2, frozenset()))
