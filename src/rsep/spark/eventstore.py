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
from rsep.rdf.event import Event, EventId
from rsep.rdf.formats.ntriples import TermTexts, name_term
from rsep.rdf.terms import parse_term

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

COLUMNS = ("stream", "day", "event_id", "t_start", "t_end", "s", "p", "o")

TABLE_COLUMNS = ("stream", "event_id", "t_start", "t_end", "s", "p", "o")
"""The columns of a table of triples (the event store's, without its ``day`` partition):
``t_start`` and ``t_end`` integers in the plan's time unit, the others strings; ``event_id``
(an IRI or blank node in N-Triples syntax) may be left out or null."""


def arrow_schema() -> pa.Schema:
    """The store's Arrow schema (one row per triple; terms in N-Triples syntax)."""
    import pyarrow as pa

    return pa.schema(
        [(name, pa.int64() if name.startswith("t_") else pa.string()) for name in COLUMNS]
    )


def write_store(table: pa.Table, folder: Path) -> Path:
    """Write a table of triples (:data:`TABLE_COLUMNS`) as a one-file event store in
    ``folder``; its path. A missing column or a null term is a :class:`UserError`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    missing = [c for c in TABLE_COLUMNS if c != "event_id" and c not in table.column_names]
    if missing:
        raise UserError(
            f"a table of triples needs the columns {', '.join(TABLE_COLUMNS)} (event_id may "
            f"be left out); missing: {', '.join(missing)}"
        )
    columns = []
    for name in TABLE_COLUMNS:
        kind = pa.int64() if name.startswith("t_") else pa.string()
        if name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, kind))
            continue
        column = table.column(name)
        if name != "event_id" and column.null_count:
            raise UserError(f"a table of triples has a null in column {name}")
        try:
            columns.append(column.cast(kind))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise UserError(f"column {name} of a table of triples: {exc}") from None
    path = folder / "events.parquet"
    pq.write_table(pa.table(columns, names=list(TABLE_COLUMNS)), path)
    return path


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


def read_store_events(path: Path) -> Iterator[Event]:
    """The events of a Parquet event store without Spark: its files in path order
    (``day=YYYY-MM-DD`` partitions sort by time), each file's rows sorted by time and event
    (``pyarrow.dataset.write_dataset`` kept no row order before ``preserve_order``: a file
    can hold rows out of order and an event's rows apart), one file in memory at a time.

    Files are read with ``pyarrow.parquet`` (``pyarrow.dataset`` would import pandas, a
    second or two), the stream taken from the ``stream=`` folder as Hive names it.
    """
    import pyarrow.parquet as pq

    from rsep.engine.batch import store_files

    if not path.exists():
        raise UserError(f"no event store at {path}")
    texts = TermTexts()
    for file, partition in store_files(path):
        parquet = pq.ParquetFile(file)
        names = parquet.schema_arrow.names
        columns = [c for c in COLUMNS if c in names and c != "day"]
        stream = partition.get("stream") if "stream" not in names else None
        if stream is None and "stream" not in names:
            raise UserError(f"{file}: no stream column nor stream= folder")
        table = parquet.read(columns=columns)
        table = table.sort_by([("t_start", "ascending"), ("event_id", "ascending")])
        yield from events_from_table(table, texts, stream)


def events_from_table(
    table: pa.Table, texts: TermTexts, stream: str | None = None
) -> Iterator[Event]:
    """Events from store rows (columns ``stream, event_id, t_start, t_end, s, p, o``; no
    ``stream`` column when ``stream`` is given), the rows of one event adjacent: the events
    of :func:`events_from_rows`, built column by column. Event bounds are found by Arrow
    compute, each distinct ``s p o`` text is parsed once
    (:class:`~rsep.rdf.formats.ntriples.TermTexts`); a table with a null term or a text
    that is not canonical N-Triples goes through :func:`events_from_rows`."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    if rows == 0:
        return
    keys = pc.binary_join_element_wise(*(table.column(name) for name in ("s", "p", "o")), " ")
    codes = pc.dictionary_encode(keys.combine_chunks()) if keys.null_count == 0 else None
    found = None if codes is None else texts.triples_of(codes.dictionary.to_pylist())
    if codes is None or found is None:
        names = ("event_id", "t_start", "t_end", "s", "p", "o")
        columns = [table.column(name).to_pylist() for name in names]
        streams = [stream] * rows if stream is not None else table.column("stream").to_pylist()
        yield from events_from_rows(zip(streams, *columns, strict=True))
        return
    lookup = np.empty(len(found), dtype=object)
    lookup[:] = found
    triples: list[Triple] = lookup[codes.indices.to_numpy()].tolist()
    key_columns = ("event_id", "t_start", "t_end") + (() if stream is not None else ("stream",))
    starts = [0, *_changes(table, key_columns)]
    ends = [*starts[1:], rows]
    at = pa.array(starts, pa.int64())
    event_ids, t_starts, t_ends = (
        table.column(name).take(at).to_pylist() for name in ("event_id", "t_start", "t_end")
    )
    streams = (
        [stream] * len(starts)
        if stream is not None
        else table.column("stream").take(at).to_pylist()
    )
    for stream_iri, event_id, t_start, t_end, start, end in zip(
        streams, event_ids, t_starts, t_ends, starts, ends, strict=True
    ):
        ident = _event_id(event_id)
        yield Event(stream_iri, t_start, t_end, frozenset(triples[start:end]), ident)


def _changes(table: pa.Table, names: tuple[str, ...]) -> list[int]:
    """The rows (from 1) whose value in one of columns ``names`` differs from the row's
    before (two nulls are equal, as two ``None`` are for :func:`events_from_rows`)."""
    import pyarrow.compute as pc

    rows = table.num_rows
    changed = None
    for name in names:
        column = table.column(name).combine_chunks()
        after, before = column.slice(1), column.slice(0, rows - 1)
        differ = pc.not_equal(after, before)
        if column.null_count:
            both = pc.and_(pc.is_null(after), pc.is_null(before))
            differ = pc.if_else(both, False, pc.fill_null(differ, True))
        changed = differ if changed is None else pc.or_(changed, differ)
    if changed is None:
        return []
    return [int(i) + 1 for i in pc.indices_nonzero(changed).to_pylist()]


def _event_id(text: str | None) -> EventId | None:
    """The event id written ``text`` in the store (``None`` for none)."""
    if not text:
        return None
    found = name_term(text)
    if found is not None:
        return found
    ident = parse_term(text)
    if isinstance(ident, Literal):
        raise ValueError(f"event id is not an IRI or blank node: {text}")
    return ident


def _event(key: tuple[str, str, int, int], lines: list[str]) -> Event:
    stream, event_id, t_start, t_end = key
    data = "\n".join(lines).encode()
    triples = [
        Triple(q.subject, q.predicate, q.object)
        for q in parse(input=data, format=RdfFormat.N_TRIPLES)
    ]
    return Event(stream, t_start, t_end, frozenset(triples), _event_id(event_id))


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
