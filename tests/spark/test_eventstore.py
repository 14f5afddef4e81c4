"""The event store read without Spark (rsep.spark.eventstore.read_store_events): built column
by column, the same events as row by row (events_from_rows), for canonical terms (the fast
path), for texts that are not canonical (the general path) and for events without ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.formats.ntriples import TermTexts
from rsep.spark.eventstore import (
    arrow_schema,
    events_from_rows,
    events_from_table,
    read_store_events,
)

STREAMS = ["http://ex.org/stream/a", "http://ex.org/stream/b"]
XSD = "http://www.w3.org/2001/XMLSchema#"
iris = st.builds(lambda k: NamedNode(f"http://ex.org/{k}"), st.integers(0, 3))
literals = st.one_of(
    st.builds(Literal, st.text(max_size=6)),
    st.builds(lambda n: Literal(str(n), datatype=NamedNode(XSD + "integer")), st.integers(-9, 9)),
    st.builds(lambda v: Literal(v, language="en"), st.text(max_size=4)),
)
triples = st.builds(
    Triple, st.one_of(iris, st.just(BlankNode("b"))), iris, st.one_of(iris, literals)
)


@st.composite
def event_lists(draw: st.DrawFn) -> list[Event]:
    """Events of two streams, a few triples each, ids an IRI, a blank node or none."""
    events = []
    for k in range(draw(st.integers(0, 8))):
        t = draw(st.integers(0, 3))
        ident = draw(st.sampled_from([NamedNode(f"http://ex.org/e{k}"), BlankNode(f"e{k}"), None]))
        graph = draw(st.frozensets(triples, min_size=1, max_size=4))
        events.append(
            Event(draw(st.sampled_from(STREAMS)), t, t + draw(st.integers(0, 2)), graph, ident)
        )
    return events


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROW_COLUMNS = ("stream", "event_id", "t_start", "t_end", "s", "p", "o")


def rows_of(events: list[Event], ids: bool = True) -> list[tuple[Any, ...]]:
    """Store rows ``(stream, event_id, t_start, t_end, s, p, o)`` of ``events``."""
    return [
        (
            e.stream,
            str(e.id) if ids and e.id is not None else None,
            e.t_start,
            e.t_end,
            str(t.subject),
            str(t.predicate),
            str(t.object),
        )
        for e in events
        for t in sorted(e.graph, key=str)
    ]


def table_of(rows: list[tuple[Any, ...]]) -> pa.Table:
    schema = arrow_schema()
    columns = {
        name: pa.array([r[i] for r in rows], schema.field(name).type)
        for i, name in enumerate(ROW_COLUMNS)
    }
    return pa.table(columns)


def same(built: list[Event], expected: list[Event]) -> None:
    assert built == expected
    assert [e.id for e in built] == [e.id for e in expected]


@SETTINGS
@given(events=event_lists(), ids=st.booleans())
def test_columns_give_the_events_of_rows(events: list[Event], ids: bool) -> None:
    rows = rows_of(events, ids)
    same(list(events_from_table(table_of(rows), TermTexts())), list(events_from_rows(rows)))


def test_texts_that_are_not_canonical_take_the_row_path() -> None:
    """``"1"^^xsd:string`` reads as ``"1"``: not its own canonical text, so the table goes
    row by row, and the event is the one pyoxigraph reads."""
    s, p = "<http://ex.org/s>", "<http://ex.org/p>"
    rows = [
        (
            STREAMS[0],
            "<http://ex.org/e0>",
            1,
            1,
            s,
            p,
            '"1"^^<http://www.w3.org/2001/XMLSchema#string>',
        ),
        (STREAMS[0], "<http://ex.org/e0>", 1, 1, s, p, '"caf\\u00E9"'),
        (STREAMS[0], "_:b1", 2, 3, s, p, "<http://ex.org/o>"),
    ]
    built = list(events_from_table(table_of(rows), TermTexts()))
    same(built, list(events_from_rows(rows)))
    assert {str(t.object) for t in built[0].graph} == {'"1"', '"café"'}


def test_events_split_on_any_key_column() -> None:
    """Adjacent rows with the same id but another time or stream are other events."""
    s, p, o = "<http://ex.org/s>", "<http://ex.org/p>", "<http://ex.org/o>"
    rows = [
        (STREAMS[0], "<http://ex.org/e>", 1, 1, s, p, o),
        (STREAMS[0], "<http://ex.org/e>", 1, 2, s, p, o),
        (STREAMS[1], "<http://ex.org/e>", 1, 2, s, p, o),
        (STREAMS[1], None, 1, 2, s, p, o),
        (STREAMS[1], None, 1, 2, s, p, '"x"'),
    ]
    built = list(events_from_table(table_of(rows), TermTexts()))
    same(built, list(events_from_rows(rows)))
    assert [len(e.graph) for e in built] == [1, 1, 1, 2]


def write_store(path: Path, files: dict[str, list[list[Event]]]) -> None:
    """A Hive-partitioned store: per stream, its files (events in each written backwards)."""
    for stream, parts in files.items():
        folder = path / f"stream={quote(stream, safe='')}" / "day=1970-01-01"
        folder.mkdir(parents=True)
        for k, events in enumerate(parts):
            table = table_of(rows_of(events)[::-1]).drop_columns(["stream"])
            pq.write_table(table, folder / f"part-{k:05d}-0.parquet")
    (path / "_SUCCESS").write_text("")


def point(stream: str, t: int, k: int) -> Event:
    triple = Triple(NamedNode("http://ex.org/s"), NamedNode("http://ex.org/p"), Literal(str(k)))
    return Event.point(stream, t, [triple], NamedNode(f"http://ex.org/e{k}"))


def test_read_store_events_files_in_path_order_rows_by_time_and_id(tmp_path: Path) -> None:
    a = [point(STREAMS[0], t, k) for k, t in enumerate([5, 1, 3, 3])]
    b = [point(STREAMS[1], t, k) for k, t in enumerate([2, 0], 10)]
    write_store(tmp_path / "store", {STREAMS[0]: [a[:2], a[2:]], STREAMS[1]: [b]})
    expected = [a[1], a[0], a[2], a[3], b[1], b[0]]
    same(list(read_store_events(tmp_path / "store")), expected)


def test_no_store_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no event store"):
        list(read_store_events(tmp_path / "absent"))
