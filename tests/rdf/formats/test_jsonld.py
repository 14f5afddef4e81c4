"""The RSP CG / TripleWave JSON-LD stream: round-trips and the accepted file shapes."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

from format_strategies import STREAMS, event_lists
from hypothesis import given, settings
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.rdf.event import Event
from rsep.rdf.formats import Format, detect_format, read_events, write_events
from rsep.rdf.time import TimeUnit

EX = "http://ex.org/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SETTINGS = settings(max_examples=60, deadline=None)


def roundtrip(events: list[Event], **options: Any) -> list[Event]:
    write_options = {k: v for k, v in options.items() if k in {"with_stream", "time_unit"}}
    read_options = {k: v for k, v in options.items() if k != "with_stream"}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonld"
        assert write_events(events, path, Format.JSONLD, **write_options) == len(events)
        return list(read_events(path, **read_options))


def same(read: list[Event], written: list[Event]) -> None:
    assert read == written
    for before, after in zip(written, read, strict=True):
        if before.id is not None:
            assert after.id == before.id


@SETTINGS
@given(events=event_lists(streams=3, min_triples=0))
def test_roundtrip_with_stream(events: list[Event]) -> None:
    same(roundtrip(events, with_stream=True), events)


@SETTINGS
@given(events=event_lists(streams=1, unit=TimeUnit.SECONDS))
def test_roundtrip_one_stream_in_seconds(events: list[Event]) -> None:
    same(roundtrip(events, stream=STREAMS[0], time_unit=TimeUnit.SECONDS), events)


def test_writer_shape() -> None:
    out = io.StringIO()
    triple = Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("v", language="en"))
    typed = Triple(
        NamedNode(EX + "s"),
        NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
        NamedNode(EX + "T"),
    )
    write_events(
        [Event.point(EX + "st", 1500, [triple, typed], NamedNode(EX + "g"))], out, Format.JSONLD
    )
    (element,) = json.loads(out.getvalue())
    assert element == {
        "@context": {"prov": PROV, "xsd": XSD, "rsep": "http://w3id.org/rsep/vocab#"},
        "@id": EX + "g",
        "prov:generatedAtTime": {"@value": "1970-01-01T00:00:01.500Z", "@type": "xsd:dateTime"},
        "@graph": [
            {"@id": EX + "s", EX + "p": [{"@value": "v", "@language": "en"}], "@type": [EX + "T"]}
        ],
    }
    assert out.getvalue().startswith('[\n  {\n    "@context"')


TRIPLEWAVE = [
    {
        "@context": {"prov": PROV, "ex": EX},
        "@id": "ex:g1",
        "prov:generatedAtTime": "2015-06-30T16:44:59.587Z",
        "@graph": [{"@id": "ex:obs1", "ex:value": 3, "@type": "ex:Observation"}],
    },
    {
        "@context": {"prov": PROV, "ex": EX},
        "@id": "ex:g2",
        "prov:generatedAtTime": "2015-06-30T16:45:00Z",
        "@graph": [{"@id": "_:b", "ex:label": {"@value": "x", "@language": "en"}}],
    },
]


def test_read_triplewave_array(tmp_path: Path) -> None:
    path = tmp_path / "tw.json"
    path.write_text(json.dumps(TRIPLEWAVE, indent=2))
    assert detect_format(path) is Format.JSONLD
    first, second = read_events(path, stream=EX + "st")
    assert first.id == NamedNode(EX + "g1")
    assert first.t_start == 1435682699587
    assert first.graph == frozenset(
        {
            Triple(
                NamedNode(EX + "obs1"),
                NamedNode(EX + "value"),
                Literal("3", datatype=NamedNode(XSD + "integer")),
            ),
            Triple(
                NamedNode(EX + "obs1"),
                NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
                NamedNode(EX + "Observation"),
            ),
        }
    )
    assert second.graph == frozenset(
        {
            Triple(BlankNode("b"), NamedNode(EX + "label"), Literal("x", language="en")),
        }
    )


def test_read_container_with_top_level_context(tmp_path: Path) -> None:
    elements = [{k: v for k, v in e.items() if k != "@context"} for e in TRIPLEWAVE]
    path = tmp_path / "tw.jsonld"
    path.write_text(
        json.dumps({"@context": {"prov": PROV, "ex": EX}, "@graph": elements}, indent=1)
    )
    events = list(read_events(path, stream=EX + "st"))
    assert [e.id for e in events] == [NamedNode(EX + "g1"), NamedNode(EX + "g2")]


def test_read_json_lines_with_integer_times(tmp_path: Path) -> None:
    lines = [
        {
            "@context": {"prov": PROV},
            "@id": f"{EX}g{i}",
            "prov:generatedAtTime": i,
            "@graph": [{"@id": f"{EX}s", f"{EX}p": i}],
        }
        for i in range(3)
    ]
    path = tmp_path / "tw.jsonld"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    events = list(read_events(path, stream=EX + "st", time_unit=TimeUnit.SECONDS))
    assert [e.t_start for e in events] == [0, 1000, 2000]


def test_interval_element(tmp_path: Path) -> None:
    path = tmp_path / "i.jsonld"
    path.write_text(
        json.dumps(
            [
                {
                    "@context": {"prov": PROV},
                    "@id": EX + "g",
                    "prov:startedAtTime": {
                        "@value": "1970-01-01T00:00:01Z",
                        "@type": XSD + "dateTime",
                    },
                    "prov:endedAtTime": "1970-01-01T00:00:02Z",
                    "@graph": [],
                }
            ]
        )
    )
    (event,) = read_events(path, stream=EX + "st")
    assert (event.t_start, event.t_end, event.graph) == (1000, 2000, frozenset())
