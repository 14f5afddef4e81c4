"""TriG and N-Quads streams: round-trips, the time and stream rules, the string writers."""

from __future__ import annotations

import gzip
import io
import tempfile
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from format_strategies import STREAMS, event_lists
from hypothesis import HealthCheck, given, settings
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, detect_format, read_events, write_events
from rsep.rdf.formats.quads import nquads_event_lines, trig_event_text
from rsep.rdf.time import TimeUnit, zone

EX = "http://ex.org/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
QUAD_FORMATS = [Format.TRIG, Format.NQUADS]
SUFFIX = {Format.TRIG: ".trig", Format.NQUADS: ".nq"}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def t(s: str, p: str, o: NamedNode | BlankNode | Literal) -> Triple:
    return Triple(
        NamedNode(EX + s) if not s.startswith("_:") else BlankNode(s[2:]), NamedNode(EX + p), o
    )


def roundtrip(events: list[Event], fmt: Format, **options: Any) -> list[Event]:
    """Write ``events`` to a file and read them back; options go to both where they apply."""
    write_options = {k: v for k, v in options.items() if k in {"with_stream", "time_unit"}}
    read_options = {k: v for k, v in options.items() if k != "with_stream"}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"events{SUFFIX[fmt]}"
        assert write_events(events, path, fmt, **write_options) == len(events)
        return list(read_events(path, fmt, **read_options))


def same(read: list[Event], written: list[Event]) -> None:
    assert read == written
    for before, after in zip(written, read, strict=True):
        if before.id is not None:
            assert after.id == before.id


@pytest.mark.parametrize("fmt", QUAD_FORMATS)
@SETTINGS
@given(events=event_lists(streams=1))
def test_roundtrip_one_stream(fmt: Format, events: list[Event]) -> None:
    same(roundtrip(events, fmt, stream=STREAMS[0]), events)


@pytest.mark.parametrize("fmt", QUAD_FORMATS)
@SETTINGS
@given(events=event_lists(streams=3))
def test_roundtrip_many_streams_with_stream_triples(fmt: Format, events: list[Event]) -> None:
    same(roundtrip(events, fmt, with_stream=True), events)


@pytest.mark.parametrize("fmt", QUAD_FORMATS)
@pytest.mark.parametrize("unit", [TimeUnit.SECONDS, TimeUnit.MINUTES, TimeUnit.HOURS])
@SETTINGS
@given(data=event_lists(streams=2, unit=TimeUnit.HOURS))
def test_roundtrip_integer_time_units(fmt: Format, unit: TimeUnit, data: list[Event]) -> None:
    # times are whole hours, so they are whole counts of every unit
    same(roundtrip(data, fmt, with_stream=True, time_unit=unit), data)


def test_roundtrip_interval_bnodes_literals(tmp_path: Path) -> None:
    events = [
        Event(
            STREAMS[0],
            1_000,
            1_000,
            frozenset(
                {
                    t("a", "p", Literal("chat", language="fr")),
                    t("_:x", "q", Literal("5", datatype=NamedNode(XSD + "integer"))),
                    t("a", "r", BlankNode("x")),
                }
            ),
            NamedNode(EX + "g1"),
        ),
        Event(
            STREAMS[0],
            2_000,
            7_500,
            frozenset({t("b", "p", Literal('quote " and \\ and \n'))}),
            BlankNode("g2"),
        ),
    ]
    for fmt in QUAD_FORMATS:
        path = tmp_path / f"out{SUFFIX[fmt]}"
        write_events(events, path, fmt)
        same(list(read_events(path, stream=STREAMS[0])), events)


def test_nquads_event_lines_exact_text() -> None:
    text = nquads_event_lines(
        "<http://ex.org/g>",
        1_500,
        1_500,
        [("<http://ex.org/s>", "<http://ex.org/p>", '"v"')],
        stream="http://ex.org/st",
    )
    assert text == (
        f'<http://ex.org/g> <{PROV}generatedAtTime> "1970-01-01T00:00:01.500Z"^^<{XSD}dateTime> .\n'
        "<http://ex.org/g> <http://w3id.org/rsep/vocab#stream> <http://ex.org/st> .\n"
        '<http://ex.org/s> <http://ex.org/p> "v" <http://ex.org/g> .\n'
    )
    interval = nquads_event_lines("_:g", 2_000, 5_000, [], time_unit=TimeUnit.SECONDS)
    assert interval == (
        f'_:g <{PROV}startedAtTime> "2"^^<{XSD}integer> .\n'
        f'_:g <{PROV}endedAtTime> "5"^^<{XSD}integer> .\n'
    )


def test_nquads_event_lines_rejects_fractions_of_the_unit() -> None:
    with pytest.raises(UserError, match="not a whole number of seconds"):
        nquads_event_lines("_:g", 1_500, 1_500, [], time_unit=TimeUnit.SECONDS)


def test_trig_event_text_is_standalone_trig(tmp_path: Path) -> None:
    body = "".join(
        trig_event_text(f"<{EX}g{i}>", i * 1000, i * 1000, [(f"<{EX}s>", f"<{EX}p>", f'"{i}"')])
        for i in range(3)
    )
    assert body.splitlines()[1] == f"<{EX}g0> {{"
    assert body.splitlines()[2].startswith("    <")
    path = tmp_path / "events.trig"
    path.write_text(body)
    events = list(read_events(path, stream=STREAMS[0]))
    assert [e.t_start for e in events] == [0, 1000, 2000]
    assert [e.id for e in events] == [NamedNode(f"{EX}g{i}") for i in range(3)]


HAND_WRITTEN = """\
@prefix ex: <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rsep: <http://w3id.org/rsep/vocab#> .

ex:g2 { ex:s ex:p "second" . }
ex:g1 { ex:s ex:p "first" . }
ex:g1 prov:generatedAtTime "2024-01-01T00:00:00"^^xsd:dateTime ; rsep:stream ex:st .
ex:g2 prov:startedAtTime "2023-12-31T22:00:00Z"^^xsd:dateTime ;
      prov:endedAtTime "2024-01-01T02:00:00Z"^^xsd:dateTime ;
      rsep:stream ex:st .
GRAPH ex:g3 { ex:s ex:p "third" }
ex:g3 prov:generatedAtTime 1704070800 ; rsep:stream ex:other .
"""


def test_read_hand_written_trig(tmp_path: Path) -> None:
    path = tmp_path / "hand.trig"
    path.write_text(HAND_WRITTEN)
    events = list(read_events(path, time_unit=TimeUnit.SECONDS, tz=zone("Europe/Copenhagen")))
    # order of first appearance of the graph name, not of time
    assert [e.id for e in events] == [
        NamedNode(EX + "g2"),
        NamedNode(EX + "g1"),
        NamedNode(EX + "g3"),
    ]
    g2, g1, g3 = events
    assert (g2.stream, g2.t_start, g2.t_end) == (EX + "st", 1704060000000, 1704074400000)
    # no zone: read in Europe/Copenhagen (UTC+1 in January)
    assert (g1.stream, g1.t_start, g1.is_point) == (EX + "st", 1704063600000, True)
    assert (g3.stream, g3.t_start) == (EX + "other", 1704070800000)
    assert g3.graph == frozenset({t("s", "p", Literal("third"))})


def test_stream_argument_wins_over_stream_triples(tmp_path: Path) -> None:
    path = tmp_path / "hand.trig"
    path.write_text(HAND_WRITTEN)
    events = list(read_events(path, stream=EX + "forced", time_unit=TimeUnit.SECONDS))
    assert {e.stream for e in events} == {EX + "forced"}


def test_gzip_and_part_directory(tmp_path: Path) -> None:
    first = [
        Event.point(STREAMS[0], 1000 * i, [t("s", "p", Literal(str(i)))], NamedNode(f"{EX}a{i}"))
        for i in range(3)
    ]
    second = [Event.point(STREAMS[0], 10, [t("s", "p", Literal("x"))], NamedNode(EX + "b0"))]
    parts = tmp_path / "out"
    parts.mkdir()
    write_events(first, parts / "part-00000.nq.gz", Format.NQUADS)
    write_events(second, parts / "part-00001.nq", Format.NQUADS)
    (parts / "_SUCCESS").write_text("")
    (parts / ".part-00001.nq.crc").write_text("junk")
    assert gzip.decompress((parts / "part-00000.nq.gz").read_bytes()).count(b"\n") == 6
    assert detect_format(parts) is Format.NQUADS
    # each part file is checked for time order on its own: the second may start earlier
    assert list(read_events(parts, stream=STREAMS[0])) == first + second


def test_utc_default_and_point_vs_interval(tmp_path: Path) -> None:
    path = tmp_path / "x.nq"
    path.write_text(
        f'<{EX}g> <{PROV}generatedAtTime> "1970-01-01T00:00:01"^^<{XSD}dateTime> .\n'
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g> .\n"
    )
    (event,) = read_events(path, stream=STREAMS[0], tz=UTC)
    assert (event.t_start, event.t_end) == (1000, 1000)


def test_writer_refuses_what_the_format_cannot_hold() -> None:
    empty = Event(STREAMS[0], 0, 0, frozenset())
    with pytest.raises(UserError, match="empty graph"):
        write_events([empty], io.StringIO(), Format.NQUADS)
    one = [t("s", "p", Literal("x"))]
    twice = [
        Event.point(STREAMS[0], 0, one, NamedNode(EX + "g")),
        Event.point(STREAMS[0], 1, one, NamedNode(EX + "g")),
    ]
    with pytest.raises(UserError, match="used by an earlier event"):
        write_events(twice, io.StringIO(), Format.TRIG)
    backwards = [Event.point(STREAMS[0], 5, one), Event.point(STREAMS[0], 1, one)]
    with pytest.raises(UserError, match="time going backwards"):
        write_events(backwards, io.StringIO(), Format.TRIG)
    with pytest.raises(UserError, match="unknown option"):
        write_events([], io.StringIO(), Format.TRIG, colour=True)


def test_events_without_id_get_fresh_blank_nodes() -> None:
    one = [t("s", "p", Literal("x"))]
    buffer = io.StringIO()
    write_events(
        [Event.point(STREAMS[0], 0, one), Event.point(STREAMS[0], 1, one)], buffer, Format.NQUADS
    )
    assert "_:rsep0" in buffer.getvalue() and "_:rsep1" in buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.trig", "", Format.TRIG),
        ("a.nq.gz", None, Format.NQUADS),
        ("a.nquads", "", Format.NQUADS),
        ("a.jsonld", "", Format.JSONLD),
        ("a.json", "", Format.JSONLD),
        ("a.tnt", "", Format.TIMESTAMPED_NT),
        ("a.stream", "", Format.TIMESTAMPED_NT),
        ("a.nt", '<http://a> <http://b> <http://c> "5" .\n', Format.TIMESTAMPED_NT),
        ("a.nt", "<http://a> <http://b> <http://c> <http://g> .\n", Format.NQUADS),
        ("a.data", "# x\n@prefix ex: <http://ex/> .\n", Format.TRIG),
        ("a.data", '[{"@id": "x"}]', Format.JSONLD),
        ("s.txt", "<http://ex.org/main> <./data.nt> 2", Format.SPASEQ),
    ],
)
def test_detect_format(tmp_path: Path, name: str, content: str | None, expected: Format) -> None:
    path = tmp_path / name
    if content is None:
        path.write_bytes(gzip.compress(b""))
    else:
        path.write_text(content)
    assert detect_format(path) is expected


def test_detect_format_unknown(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello world\n")
    with pytest.raises(UserError, match="cannot tell the stream format"):
        detect_format(path)
    plain = tmp_path / "plain.nt"
    plain.write_text("<http://a> <http://b> <http://c> .\n")
    with pytest.raises(UserError, match="cannot tell"):
        detect_format(plain)


def test_detect_format_of_written_files_without_extension(tmp_path: Path) -> None:
    event = Event.point(STREAMS[0], 0, [t("s", "p", Literal("{x}"))], NamedNode(EX + "g"))
    for fmt in [Format.TRIG, Format.NQUADS, Format.JSONLD, Format.TIMESTAMPED_NT]:
        path = tmp_path / f"events-{fmt.value}.data"
        write_events([event], path, fmt)
        assert detect_format(path) is fmt
