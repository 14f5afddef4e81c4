"""SPAseq stream descriptions: every shipped test folder, path resolution, round-trips."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from format_strategies import STREAMS, triples
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, detect_format, read_events, write_events
from rsep.rdf.formats.spaseq import data_candidates

EX = "http://example/"
XSD = "http://www.w3.org/2001/XMLSchema#"
MAIN = "http://example.org/main"


def double(value: str) -> Literal:
    return Literal(value, datatype=NamedNode(XSD + "double"))


def shipped(shared_data: Path) -> Path:
    return shared_data / "spaseq" / "tests"


# (folder, description, events, triples per event, first event's prices or None)
SHIPPED = [
    ("conjunction", "streamConjunction.txt", 4, 3, "14.0"),
    ("disjunction", "streamDisjunction.txt", 3, 2, "14.0"),
    ("externalknowledgebase", "streamKB.txt", 3, 2, "14.0"),
    ("kleeneplus", "streamKleene.txt", 5, 2, "14.0"),
    ("negation", "streamNegation.txt", 3, 2, "14.0"),
    ("optional", "streamOptional.txt", 3, 2, "14.0"),
    ("skip-till-next", "streamFB.txt", 4, 2, "14.0"),
    ("strict-contiguity", "streamIF.txt", 3, 2, "14.0"),
]


@pytest.mark.parametrize(("folder", "name", "count", "size", "price"), SHIPPED)
def test_shipped_single_stream_folders(
    shared_data: Path, folder: str, name: str, count: int, size: int, price: str
) -> None:
    description = shipped(shared_data) / folder / name
    assert detect_format(description) is Format.SPASEQ
    events = list(read_events(description))
    assert len(events) == count
    assert [e.t_start for e in events] == [1000 * k for k in range(count)]
    assert {e.stream for e in events} == {MAIN}
    assert {len(e.graph) for e in events} == {size}
    prices = [t.object for t in events[0].graph if t.predicate == NamedNode(EX + "price")]
    assert prices == [double(price)]


def test_shipped_strict_contiguity_content(shared_data: Path) -> None:
    events = list(read_events(shipped(shared_data) / "strict-contiguity" / "streamIF.txt"))
    ebay = NamedNode(EX + "company#eBay")
    assert events[1].graph == frozenset(
        {
            Triple(ebay, NamedNode(EX + "volume"), double("68.61")),
            Triple(ebay, NamedNode(EX + "price"), double("12.0")),
        }
    )


def test_shipped_multistream_merged_by_time(shared_data: Path) -> None:
    description = shipped(shared_data) / "multistreams-powergeneration" / "streamMulti.txt"
    events = list(read_events(description, start=5_000, period=60_000))
    power = "http://www.smart.com/power"
    environmental = "http://www.smart.com/environmental"
    generation = "http://www.smart.com/generation"
    assert len(events) == 12
    assert [e.stream for e in events] == [power, environmental, generation] * 4
    assert [e.t_start for e in events] == [5_000 + 60_000 * (i // 3) for i in range(12)]
    assert {len(e.graph) for e in events} == {5}
    watts = [t.object for t in events[0].graph if t.predicate.value.endswith("/watt")]
    assert watts == [double("375.2")]


def test_shipped_credit_card_names_a_missing_file(shared_data: Path) -> None:
    description = shipped(shared_data) / "credit-card" / "streamCardFB.txt"
    with pytest.raises(InputError) as caught:
        list(read_events(description))
    assert caught.value.file == str(description)
    assert caught.value.line == 1
    assert "data file <./card20k.n3> not found" in caught.value.reason
    assert "card10k.n3" in caught.value.reason  # the hint names what is there


def test_shipped_traffic_skips_missing_files(shared_data: Path) -> None:
    bad = BadRecords(OnError.SKIP)
    events = list(read_events(shipped(shared_data) / "traffic" / "streamTraffic.txt", bad=bad))
    assert events == []
    assert [(e.line, "sensor" in e.reason) for e in bad.first] == [(1, True), (2, True)]


def test_credit_card_data_in_turtle(shared_data: Path, tmp_path: Path) -> None:
    card = shipped(shared_data) / "credit-card" / "card10k.n3"
    description = tmp_path / "cards.txt"
    description.write_text(f"# the shipped card data\n<{MAIN}> <{card}> 2\n")
    events = list(read_events(description, period=1))
    assert len(events) == 20_001
    assert events[-1].t_start == 20_000
    assert events[0].graph == frozenset(
        {
            Triple(
                NamedNode(EX + "card#2"),
                NamedNode(EX + "id"),
                Literal("2", datatype=NamedNode(XSD + "string")),
            ),
            Triple(NamedNode(EX + "card#2"), NamedNode(EX + "amount"), double("28.45")),
        }
    )


def test_engine_data_descriptions_resolve_by_file_name(shared_data: Path) -> None:
    description = shared_data / "spaseq" / "engine-data" / "streamKleene.txt"
    assert len(list(read_events(description))) == 5


def test_data_candidates_order(tmp_path: Path) -> None:
    description = tmp_path / "strict-contiguity" / "streamIF.txt"
    assert data_candidates(description, "./immediatefb/dataIF.nt") == [
        tmp_path / "strict-contiguity" / "immediatefb" / "dataIF.nt",
        tmp_path / "immediatefb" / "dataIF.nt",
        tmp_path / "strict-contiguity" / "dataIF.nt",
    ]
    assert data_candidates(description, "/abs/dir/data.nt") == [
        Path("/abs/dir/data.nt"),
        tmp_path / "strict-contiguity" / "data.nt",
    ]


def test_turtle_data_with_prefixes(tmp_path: Path) -> None:
    (tmp_path / "d.n3").write_text(
        "@prefix ex: <http://example/> .\nex:a ex:p 1 .\nex:a ex:q 2 .\nex:b ex:p 3 ; ex:q 4 .\n"
    )
    description = tmp_path / "s.txt"
    description.write_text(f"<{MAIN}> <./d.n3> 2\n")
    events = list(read_events(description, stream=EX + "renamed"))
    assert [len(e.graph) for e in events] == [2, 2]
    assert {e.stream for e in events} == {EX + "renamed"}


def test_stream_name_needs_a_one_stream_description(tmp_path: Path) -> None:
    (tmp_path / "d.nt").write_text(f"<{EX}a> <{EX}p> <{EX}o> .\n")
    description = tmp_path / "s.txt"
    description.write_text(f"<{EX}one> <./d.nt> 1\n<{EX}two> <./d.nt> 1\n")
    with pytest.raises(UserError, match="one-stream"):
        list(read_events(description, stream=EX + "x"))


@st.composite
def spaseq_events(draw: st.DrawFn) -> tuple[list[Event], int, int]:
    """Events of up to three streams at start + k * period, merged by (time, stream)."""
    start = draw(st.integers(0, 10**9))
    period = draw(st.integers(0, 10**6))
    streams = draw(st.integers(1, 3))
    per_stream = []
    for index in range(streams):
        size = draw(st.integers(1, 3))
        count = draw(st.integers(1, 4))
        graphs = draw(
            st.lists(
                st.frozensets(triples, min_size=size, max_size=size), min_size=count, max_size=count
            )
        )
        per_stream.append(
            [
                Event(STREAMS[index], start + k * period, start + k * period, g)
                for k, g in enumerate(graphs)
            ]
        )
    merged = sorted(
        (e for evs in per_stream for e in evs),
        key=lambda e: (e.t_start, STREAMS.index(e.stream)),
    )
    return merged, start, period


@settings(max_examples=60, deadline=None)
@given(case=spaseq_events())
def test_roundtrip(case: tuple[list[Event], int, int]) -> None:
    events, start, period = case
    with tempfile.TemporaryDirectory() as folder:
        description = Path(folder) / "stream.txt"
        assert write_events(events, description, Format.SPASEQ) == len(events)
        assert (Path(folder) / "stream-1.nt").is_file()
        assert list(read_events(description, start=start, period=period)) == events


def test_writer_layout_and_checks(tmp_path: Path) -> None:
    one = Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("1"))
    two = Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal("2"))
    description = tmp_path / "out" / "stream.txt"
    write_events(
        [Event.point(MAIN, 0, [one]), Event.point(MAIN, 1000, [two])], description, Format.SPASEQ
    )
    assert description.read_text() == f"<{MAIN}> <./stream-1.nt> 1\n"
    assert (tmp_path / "out" / "stream-1.nt").read_text() == (
        "######## Event 1 (t=0) ########\n"
        f'<{EX}s> <{EX}p> "1" .\n'
        "######## Event 2 (t=1000) ########\n"
        f'<{EX}s> <{EX}p> "2" .\n'
    )
    with pytest.raises(UserError, match="events of N triples"):
        write_events(
            [Event.point(MAIN, 0, [one]), Event.point(MAIN, 1, [one, two])],
            description,
            Format.SPASEQ,
        )
