"""rsep.engine.batch.table_batches: a table of triples in memory read as batches gives the
events of the same rows written as a one-file event store and read back (read_batches, and
the oracle's reader read_store_events), with the store's checks as user errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from rsep.engine.batch import read_batches, table_batches
from rsep.engine.terms import TermDictionary
from rsep.errors import UserError
from rsep.spark.eventstore import read_store_events, write_store

EX = "http://example.org/"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"
ROWS = [
    # stream, event_id, t_start, t_end, s, p, o: out of time order, two events at t=2 on
    # S (told apart by their ids), an event of two triples, one repeated, an interval
    (EX + "S", f"<{EX}e3>", 5, 5, f"<{EX}c1>", f"<{EX}price>", f'"5"^^{INTEGER}'),
    (EX + "S", f"<{EX}e1>", 2, 2, f"<{EX}c1>", f"<{EX}price>", f'"1"^^{INTEGER}'),
    (EX + "S", f"<{EX}e2>", 2, 2, f"<{EX}c2>", f"<{EX}price>", f'"2"^^{INTEGER}'),
    (EX + "T", "_:b0", 1, 3, f"<{EX}c2>", f"<{EX}name>", '"two words"@en'),
    (EX + "T", "_:b0", 1, 3, f"<{EX}c2>", f"<{EX}size>", f'"3"^^{INTEGER}'),
    (EX + "T", "_:b0", 1, 3, f"<{EX}c2>", f"<{EX}size>", f'"3"^^{INTEGER}'),
    (EX + "S", f"<{EX}e4>", 7, 7, "_:x", f"<{EX}price>", f'"7"^^{INTEGER}'),
]
NAMES = ("stream", "event_id", "t_start", "t_end", "s", "p", "o")


def table(rows: list[tuple[Any, ...]], names: tuple[str, ...] = NAMES) -> pa.Table:
    return pa.table({name: [row[NAMES.index(name)] for row in rows] for name in names})


def events(batches: Any, dictionary: TermDictionary) -> list[tuple[Any, ...]]:
    """Events as (stream, t_start, t_end, graph), in the reader's order."""
    return [(e.stream, e.t_start, e.t_end, e.graph) for b in batches for e in b.events(dictionary)]


def stored(rows: pa.Table, tmp_path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The events of ``rows`` written as a store: by read_batches and read_store_events."""
    path = write_store(rows, tmp_path)
    terms = TermDictionary()
    oracle = [(e.stream, e.t_start, e.t_end, e.graph) for e in read_store_events(path)]
    return events(read_batches(path, None, terms), terms), oracle


@pytest.mark.parametrize(
    "given",
    [
        table(ROWS),
        table(ROWS).drop_columns(["event_id"]),
        table([row for row in ROWS if row[1] != f"<{EX}e2>"]).drop_columns(["event_id"]),
        table(ROWS).to_pandas().pipe(pa.Table.from_pandas, preserve_index=False),
        table(ROWS).cast(
            pa.schema(
                [
                    ("stream", pa.dictionary(pa.int32(), pa.string())),
                    ("event_id", pa.string()),
                    ("t_start", pa.int32()),
                    ("t_end", pa.int32()),
                    ("s", pa.large_string()),
                    ("p", pa.dictionary(pa.int8(), pa.string())),
                    ("o", pa.string()),
                ]
            )
        ),
    ],
    ids=["ids", "no-ids", "no-ids-one-per-instant", "from-pandas", "other-types"],
)
def test_a_table_gives_the_events_of_its_store(given: pa.Table, tmp_path: Path) -> None:
    terms = TermDictionary()
    found = events(table_batches(given, terms), terms)
    by_batches, by_oracle = stored(given, tmp_path)
    assert found == by_batches
    assert sorted(found, key=repr) == sorted(by_oracle, key=repr)
    assert [t for _, t, _, _ in found] == sorted(t for _, t, _, _ in found)
    assert len(found) == len({row[1] for row in ROWS}) or "event_id" not in given.column_names


def test_batches_hold_at_most_batch_events(tmp_path: Path) -> None:
    terms = TermDictionary()
    sizes = [len(b) for b in table_batches(table(ROWS), terms, batch_events=2)]
    assert sizes == [2, 2, 1]
    assert list(table_batches(table([]), terms)) == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (table(ROWS).drop_columns(["o", "t_end"]), "missing: t_end, o"),
        (table([(*ROWS[0][:6], None)]), "null in column o"),
        (table([(None, *ROWS[0][1:])]), "null in column stream"),
        (table([(*ROWS[0][:2], "soon", *ROWS[0][3:])]), "column t_start"),
        (table([(*ROWS[0][:6], "not a term")]), "table"),
    ],
    ids=["missing", "null-term", "null-stream", "bad-time", "bad-term"],
)
def test_a_bad_table_is_a_user_error(given: pa.Table, message: str) -> None:
    terms = TermDictionary()
    with pytest.raises(UserError, match=message):
        list(table_batches(given, terms))
    with pytest.raises(UserError):
        list(table_batches(given, terms, batch_events=0))
