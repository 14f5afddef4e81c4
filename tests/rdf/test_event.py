"""Events, streams and streamsets (rsep.rdf.event)."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from rsep.rdf.event import Event, Stream, StreamSet

S1, S2 = "http://ex.org/s1", "http://ex.org/s2"
T = Triple(NamedNode("http://ex.org/a"), NamedNode("http://ex.org/p"), Literal("1"))


def test_point_and_interval_events() -> None:
    point = Event.point(S1, 5, [T])
    assert point.is_point and point.graph == frozenset({T})
    interval = Event(S1, 5, 9, frozenset({T}))
    assert not interval.is_point
    with pytest.raises(ValueError, match="ends before it starts"):
        Event(S1, 9, 5, frozenset())


def test_event_id_does_not_take_part_in_equality() -> None:
    assert Event.point(S1, 1, [T], NamedNode("http://ex.org/g1")) == Event.point(S1, 1, [T])


def test_stream_is_time_ordered_and_single_stream() -> None:
    with pytest.raises(ValueError, match="goes back in time"):
        Stream(S1, (Event.point(S1, 2, [T]), Event.point(S1, 1, [T])))
    with pytest.raises(ValueError, match="in stream"):
        Stream(S1, (Event.point(S2, 1, [T]),))


def test_streamset_groups_and_merges() -> None:
    events = [Event.point(S2, 3, [T]), Event.point(S1, 2, [T]), Event.point(S1, 1, [T])]
    streams = StreamSet.from_events(events)
    assert sorted(streams) == [S1, S2]
    assert [e.t_start for e in streams[S1]] == [1, 2]
    assert [e.t_start for e in streams.events()] == [1, 2, 3]
    with pytest.raises(ValueError, match="given twice"):
        StreamSet([streams[S1], streams[S1]])
