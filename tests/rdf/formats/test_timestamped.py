"""Timestamped N-Triples: round-trips, timestamp forms, the YABench fixtures."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from format_strategies import STREAMS, event_lists, triples
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, read_events, write_events
from rsep.rdf.time import TimeUnit

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
SSW = "http://knoesis.wright.edu/ssw/"
SETTINGS = settings(max_examples=60, deadline=None)


def roundtrip(events: list[Event], **options: object) -> list[Event]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.tnt"
        unit = options.get("time_unit")
        write_events(events, path, Format.TIMESTAMPED_NT, time_unit=unit)  # type: ignore[arg-type]
        return list(read_events(path, stream=STREAMS[0], **options))  # type: ignore[arg-type]


@SETTINGS
@given(
    events=event_lists(streams=1, intervals=False, ids=False).map(
        lambda evs: [Event.point(e.stream, e.t_start, [min(e.graph, key=str)]) for e in evs]
    )
)
def test_roundtrip_triple_stream(events: list[Event]) -> None:
    assert roundtrip(events) == events


@SETTINGS
@given(
    events=event_lists(streams=1, intervals=False, ids=False, unit=TimeUnit.MINUTES).map(
        lambda evs: [Event.point(e.stream, e.t_start, [min(e.graph, key=str)]) for e in evs]
    )
)
def test_roundtrip_in_minutes(events: list[Event]) -> None:
    assert roundtrip(events, time_unit=TimeUnit.MINUTES) == events


@SETTINGS
@given(
    graphs=st.lists(st.frozensets(triples, min_size=1, max_size=4), max_size=5),
    gaps=st.lists(st.integers(1, 10**6), min_size=5, max_size=5),
)
def test_roundtrip_many_triple_events_grouped_by_time(
    graphs: list[frozenset[Triple]], gaps: list[int]
) -> None:
    times = [sum(gaps[: i + 1]) for i in range(len(graphs))]
    events = [Event(STREAMS[0], t, t, g) for t, g in zip(times, graphs, strict=False)]
    assert roundtrip(events, group_by_time=True) == events


def test_timestamp_forms(tmp_path: Path) -> None:
    path = tmp_path / "forms.tnt"
    path.write_text(
        "# a comment, then a blank line\n\n"
        f"<{EX}s> <{EX}p> <{EX}o> 1000 .\n"
        f'<{EX}s> <{EX}p> "x" "2000" .\n'
        f'<{EX}s> <{EX}p> "x"@en "3000"^^<{XSD}long> .\n'
        f'<{EX}s> <{EX}p> _:b "1970-01-01T00:00:04Z"^^<{XSD}dateTime> .\n'
        f'<{EX}s> <{EX}p> 42.0^^<{XSD}float> "5000" .\n'
        f'<{EX}s> <{EX}p> <{EX}o> "1970-01-01T00:00:06" .\n'
    )
    events = list(read_events(path, stream=EX + "st"))
    assert [e.t_start for e in events] == [1000, 2000, 3000, 4000, 5000, 6000]
    assert all(e.stream == EX + "st" and e.is_point and len(e.graph) == 1 for e in events)
    (repaired,) = events[4].graph
    assert repaired.object == Literal("42.0", datatype=NamedNode(XSD + "float"))


def test_default_stream_is_the_file_uri(tmp_path: Path) -> None:
    path = tmp_path / "s.tnt"
    path.write_text(f'<{EX}s> <{EX}p> <{EX}o> "1" .\n')
    (event,) = read_events(path)
    assert event.stream == path.resolve().as_uri()


def test_integer_unit_applies_to_bare_and_quoted_counts(tmp_path: Path) -> None:
    path = tmp_path / "s.tnt"
    path.write_text(f'<{EX}s> <{EX}p> <{EX}o> "2" .\n<{EX}s> <{EX}p> <{EX}o> 3 .\n')
    assert [e.t_start for e in read_events(path, stream=EX, time_unit=TimeUnit.SECONDS)] == [
        2000,
        3000,
    ]


def test_writer_writes_quoted_milliseconds_like_yabench() -> None:
    out = io.StringIO()
    triple = Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("v"))
    assert write_events([Event.point(EX, 24091, [triple])], out, Format.TIMESTAMPED_NT) == 1
    assert out.getvalue() == f'<{EX}s> <{EX}p> "v" "24091" .\n'


def test_writer_refuses_intervals_and_many_streams() -> None:
    triple = Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("v"))
    with pytest.raises(UserError, match="interval"):
        write_events([Event(EX, 1, 2, frozenset({triple}))], io.StringIO(), Format.TIMESTAMPED_NT)
    two = [Event.point(EX + "a", 1, [triple]), Event.point(EX + "b", 2, [triple])]
    with pytest.raises(UserError, match="one stream"):
        write_events(two, io.StringIO(), Format.TIMESTAMPED_NT)


@pytest.mark.parametrize(
    ("fixture", "lines", "first", "last", "distinct"),
    [
        ("testNextNewTimestamp", 70, 24091, 294091, 10),
        ("testOnContentChange", 49, 0, 94125, 7),
        ("testOnWindowClose", 287, 0, 148127, 41),
    ],
)
def test_yabench_fixtures(
    shared_data: Path, fixture: str, lines: int, first: int, last: int, distinct: int
) -> None:
    path = shared_data / "yabench" / "window-fixtures" / fixture / "input.stream"
    events = list(read_events(path, stream=EX + "yabench"))
    assert len(events) == lines
    assert all(len(e.graph) == 1 and e.is_point for e in events)
    assert (events[0].t_start, events[-1].t_start) == (first, last)
    assert len({e.t_start for e in events}) == distinct
    # seven triples per observation, one observation per distinct time
    grouped = list(read_events(path, stream=EX + "yabench", group_by_time=True))
    assert len(grouped) == distinct
    assert {len(e.graph) for e in grouped} == {7}


def test_yabench_first_observation(shared_data: Path) -> None:
    path = shared_data / "yabench" / "window-fixtures" / "testNextNewTimestamp" / "input.stream"
    (first, *_) = read_events(path, stream=EX + "yabench", group_by_time=True)
    observation = NamedNode(SSW + "Observation_AirTemperature_A0_24091")
    measure = NamedNode(SSW + "MeasureData_AirTemperature_A0_24091")
    assert first.t_start == 24091
    assert (
        Triple(
            observation,
            NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            NamedNode(SSW + "ont/weather.owl#TemperatureObservation"),
        )
        in first.graph
    )
    assert (
        Triple(
            measure,
            NamedNode(SSW + "ont/sensor-observation.owl#floatValue"),
            Literal("56.0", datatype=NamedNode(XSD + "float")),
        )
        in first.graph
    )
