"""The columnar event store: Parquet, one row per triple, partitioned by stream and day.

Columns ``stream, day, event_id, t_start, t_end, s, p, o`` with terms in N-Triples syntax
(DESIGN.md, Data model). ``rsep convert`` writes it; replay and the engine read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pyoxigraph import Literal, RdfFormat, Triple, parse

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.terms import parse_term

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

COLUMNS = ("stream", "day", "event_id", "t_start", "t_end", "s", "p", "o")


def arrow_schema() -> pa.Schema:
    """The store's Arrow schema (one row per triple; terms in N-Triples syntax)."""
    import pyarrow as pa

    return pa.schema(
        [(name, pa.int64() if name.startswith("t_") else pa.string()) for name in COLUMNS]
    )


def read_store(spark: SparkSession, path: Path, stream: str | None = None) -> DataFrame:
    """The store at ``path`` as a DataFrame, optionally one stream only."""
    from pyspark.sql import functions as F

    if not path.exists():
        raise UserError(f"no event store at {path}")
    frame = spark.read.parquet(str(path))
    if stream is not None:
        frame = frame.where(F.col("stream") == stream)
    return frame.select(*COLUMNS)


def events_from_rows(
    rows: Iterable[tuple[str, str, int, int, str, str, str]],
) -> Iterator[Event]:
    """Events from store rows ``(stream, event_id, t_start, t_end, s, p, o)``.

    Rows of one event must be adjacent. Triples are parsed in one pyoxigraph batch per
    event, so the terms are exactly the N-Triples the store holds.
    """
    key: tuple[str, str, int, int] | None = None
    lines: list[str] = []
    for stream, event_id, t_start, t_end, s, p, o in rows:
        current = (stream, event_id, t_start, t_end)
        if current != key:
            if key is not None:
                yield _event(key, lines)
            key, lines = current, []
        lines.append(f"{s} {p} {o} .")
    if key is not None:
        yield _event(key, lines)


def _event(key: tuple[str, str, int, int], lines: list[str]) -> Event:
    stream, event_id, t_start, t_end = key
    data = "\n".join(lines).encode()
    triples = [
        Triple(q.subject, q.predicate, q.object)
        for q in parse(input=data, format=RdfFormat.N_TRIPLES)
    ]
    ident = parse_term(event_id) if event_id else None
    if isinstance(ident, Literal):
        raise ValueError(f"event id is not an IRI or blank node: {event_id}")
    return Event(stream, t_start, t_end, frozenset(triples), ident)


def load_events(spark: SparkSession, path: Path, stream: str | None = None) -> list[Event]:
    """All events of the store (or of one stream), in order of time, on the driver.

    For tests and small stores; large stores are processed as DataFrames.
    """
    frame = read_store(spark, path, stream).orderBy("t_start", "stream", "event_id")
    rows = (
        (r["stream"], r["event_id"], r["t_start"], r["t_end"], r["s"], r["p"], r["o"])
        for r in frame.toLocalIterator()
    )
    return list(events_from_rows(rows))
