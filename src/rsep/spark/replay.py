"""Batch replay on the per-event engine: a plan the columnar engine does not take
(:func:`rsep.engine.sequence.columnar_reason`: RSP-QL, RSEP-QL, EP-SPARQL and CQELS-CEP)
or inputs its job does not read (CSR-Bench folders, time-varying graphs), evaluated over
stream files, the event store or a DataFrame of triples by
:func:`rsep.engine.incremental_query` inside Spark tasks (``rsep run --engine spark``;
:mod:`rsep.spark.columnar` runs the other plans).

The job, stage by stage (docs/architecture.md):

1. **Read.** The driver lists the inputs (:func:`rsep.spark.job.read_tasks`); Spark runs
   one task per stream file (a part file of a folder, a SPAseq description), which parses
   it with :mod:`rsep.rdf.formats` and returns the columnar form, one row per triple
   ``stream, ev, event_id, t_start, t_end, s, p, o`` (``ev`` names the event; terms in
   N-Triples form). The Parquet event store (:mod:`rsep.spark.eventstore`) is read as it
   is.
2. **Prefilter** (:class:`~rsep.spark.partition.Vocabulary`), in Spark SQL: the triples are
   joined with the GPMs' atoms (a broadcast join), counted per event and GPM, and only the
   events that hold every atom of some GPM of their stream go on (a left semi join); the
   others are dropped, or become empty events where instants matter.
3. **Route**: with ``PARTITION BY``, the keys of each event are found by a task that
   evaluates each GPM on the event's graph with pyoxigraph
   (:class:`~rsep.spark.partition.Router`); the event goes to the partition owning each
   of its keys (a CRC-32, computed by Spark), an event without a key to every partition,
   and its rows are joined with these partitions. An RSP-QL graph pattern over time
   windows (or RSEP-QL's MATCH without consumption, CQELS-CEP's event clauses over RANGE
   windows, EP-SPARQL WITHIN d) goes over time ranges instead
   (:func:`rsep.spark.partition.time_ranges`): each event to its range (an interval item
   from its start's) and to the ranges starting less than the windows' extent after it.
4. **Evaluate**: each partition's rows are sorted by time; a task rebuilds the events
   (for RSP-QL's window evaluator, batches of term ids), builds the engine's evaluator
   (over a time range: from the range's start less the lead, up to its end, keeping the
   answers inside it), feeds it the events by the one driver loop
   (:func:`rsep.engine.query.drive`: pushes in batches, the watermark between them,
   ``finish`` at ``until``), and returns the answers as rows
   :data:`rsep.spark.job.ANSWER_SCHEMA`.
5. **Merge**, in Spark (:func:`rsep.spark.job.merged`): partitioned answers that two
   partitions both give (a projection that drops the key) are kept once, at their
   earliest time; the driver reads the answers in time order
   (:func:`rsep.spark.job.stream_answers`).

:func:`run_on_spark` is the entry point of ``rsep run --engine spark`` and of the Python
API: the columnar engine for the plans it takes, this replay for the others.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, RdfFormat, Triple, parse

from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.engine.batch import TripleBatch
from rsep.engine.query import IncrementalQuery, drive
from rsep.errors import BadRecords, OnError, UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result
from rsep.rdf.terms import parse_term
from rsep.rdf.time import TimeUnit
from rsep.spark.job import (
    ANSWER_SCHEMA,
    AnswerRow,
    Job,
    Streamed,
    StreamInput,
    answer_batch,
    answer_row,
    count_row,
    driver_errors,
    marked_errors,
    merged,
    read_tasks,
    shuffle_partitions,
    spread,
    stream_answers,
)
from rsep.spark.partition import (
    PartitionOutput,
    Router,
    Scheme,
    TimeRanges,
    Vocabulary,
    choose_scheme,
    time_ranges,
    vocabulary,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession


__all__ = [
    "ROW_SCHEMA",
    "evaluate_rows",
    "event_keys",
    "events_of",
    "key_parts",
    "prefilter",
    "read_inputs",
    "replay",
    "replay_frame",
    "route",
    "run_on_spark",
    "store_rows",
]

ROW_SCHEMA = (
    "stream string, ev string, event_id string, t_start long, t_end long, "
    "s string, p string, o string"
)
"""The columnar form of events (DESIGN.md, Data model): one row per triple; ``ev`` names
the event among all inputs; an event without triples is one row with null ``s, p, o``."""

_ROWS_PER_BATCH = 8192
_EVENTS_PER_PARSE = 1024


# Inputs ----------------------------------------------------------------------------------


def _read_task(
    time_unit: TimeUnit,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each read task runs over its listing rows: parse each file into the
    columnar form (module docstring, 1)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from rsep.rdf.formats import read_events
        from rsep.semantics.csrbench import read_stream

        columns: dict[str, list[Any]] = {name: [] for name in _ROW_NAMES}
        for batch in batches:
            for index, kind, path, stream, options in zip(
                *(batch.column(n).to_pylist() for n in ("idx", "kind", "path", "stream", "opts")),
                strict=True,
            ):
                with marked_errors():
                    if kind == "csrbench":
                        folder = Path(path)
                        streams = read_stream(folder, stream) if stream else read_stream(folder)
                        found: Iterable[Event] = (e for s in streams.values() for e in s)
                    else:
                        found = read_events(
                            Path(path), stream=stream, time_unit=time_unit, **json.loads(options)
                        )
                    for ordinal, event in enumerate(found):
                        named = stream if stream is not None else event.stream
                        _append(columns, event, named, f"{index}:{ordinal}")
                        if len(columns["stream"]) >= _ROWS_PER_BATCH:
                            yield _batch(columns)
                            columns = {column: [] for column in _ROW_NAMES}
        if columns["stream"]:
            yield _batch(columns)

    return run


_ROW_NAMES = ("stream", "ev", "event_id", "t_start", "t_end", "s", "p", "o")


def _batch(columns: dict[str, list[Any]]) -> pa.RecordBatch:
    """An Arrow batch of ``columns`` with the types Spark declared (``long`` for the
    integer columns, ``string`` for the others, whatever the values)."""
    import pyarrow as pa

    types = {name: pa.int64() if name in _INTEGERS else pa.string() for name in columns}
    return pa.RecordBatch.from_pydict(columns, schema=pa.schema(list(types.items())))


_INTEGERS = frozenset({"t_start", "t_end", "part", "time", "seq"})


def _append(columns: dict[str, list[Any]], event: Event, stream: str, ev: str) -> None:
    """The rows of one event (one per triple; one with null terms when it has none)."""
    ident = "" if event.id is None else str(event.id)
    triples: list[Triple | None] = [*event.graph] or [None]
    for triple in triples:
        columns["stream"].append(stream)
        columns["ev"].append(ev)
        columns["event_id"].append(ident)
        columns["t_start"].append(event.t_start)
        columns["t_end"].append(event.t_end)
        columns["s"].append(None if triple is None else str(triple.subject))
        columns["p"].append(None if triple is None else str(triple.predicate))
        columns["o"].append(None if triple is None else str(triple.object))


def read_inputs(
    spark: SparkSession,
    inputs: Sequence[StreamInput],
    time_unit: TimeUnit = TimeUnit.MILLISECONDS,
) -> DataFrame:
    """The events of ``inputs`` in the columnar form (:data:`ROW_SCHEMA`), read and parsed by
    Spark tasks, one per file; event stores are read as Parquet."""

    from rsep.spark.eventstore import read_store

    if not inputs:
        raise UserError("no input streams")
    frames: list[DataFrame] = []
    listing = read_tasks(inputs)
    if listing:
        tasks = spark.createDataFrame(
            listing, "idx int, kind string, path string, stream string, opts string"
        ).repartitionByRange(len(listing), "idx")
        frames.append(tasks.mapInArrow(_read_task(time_unit), ROW_SCHEMA))
    for item in inputs:
        if not item.is_store:
            continue
        frames.append(store_rows(read_store(spark, item.path), item.stream, str(item.path)))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame


def store_rows(frame: DataFrame, stream: str | None = None, tag: str = "") -> DataFrame:
    """Rows in the event store's schema (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`,
    ``event_id`` may be left out) in the columnar form :data:`ROW_SCHEMA`: an event is
    the rows of one stream, event id and time, named by them and ``tag``; on ``stream``
    when it is given."""
    from pyspark.sql import functions as F

    if "event_id" not in frame.columns:
        frame = frame.withColumn("event_id", F.lit(None).cast("string"))
    named = F.col("stream") if stream is None else F.lit(stream)
    return frame.select(
        named.alias("stream"),
        F.concat_ws("\u0001", "stream", "event_id", "t_start", "t_end", F.lit(tag)).alias("ev"),
        F.col("event_id").cast("string").alias("event_id"),
        F.col("t_start").cast("long").alias("t_start"),
        F.col("t_end").cast("long").alias("t_end"),
        *(F.col(name).cast("string").alias(name) for name in ("s", "p", "o")),
    )


def replay_frame(
    frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any], until: int | None = None
) -> DataFrame:
    """The merged answers (:func:`rsep.spark.job.merged`) of ``scheme``'s plan over a
    DataFrame of triples (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`), lazily: the rows
    as :func:`store_rows`, then prefiltered, routed and evaluated as stream files are
    (module docstring, 2-5)."""
    spark = frame.sparkSession
    kept = prefilter(spark, store_rows(frame), vocabulary(scheme.final))
    routed = route(kept, scheme, graphs)
    return merged(evaluate_rows(routed, scheme, graphs, until), scheme.partitioned)


# The prefilter ----------------------------------------------------------------------------


def prefilter(spark: SparkSession, frame: DataFrame, vocab: Vocabulary | None) -> DataFrame:
    """The rows of the events that may match a GPM (module docstring, 2), plus an empty
    event for each other one when ``vocab.markers``; ``frame`` itself without a
    vocabulary."""
    from pyspark.sql import functions as F

    if vocab is None:
        return frame
    if vocab.streams is not None:
        frame = frame.where(F.col("stream").isin(sorted(vocab.streams)))
    rows = [
        (stream, gpm, index, atom.p, atom.o, len(atoms))
        for stream, gpm, atoms in vocab.patterns
        for index, atom in enumerate(sorted(atoms, key=lambda a: (a.p, a.o or "")))
    ]
    open_streams = sorted(vocab.open_streams)
    is_open = F.col("stream").isin(open_streams) if open_streams else F.lit(False)
    closed = frame.where(~is_open)
    if rows:
        atoms = spark.createDataFrame(
            rows, "a_stream string, gpm int, atom int, a_p string, a_o string, needed int"
        )
        hits = (
            closed.select("stream", "ev", "p", "o")
            .join(
                F.broadcast(atoms),
                (F.col("stream") == F.col("a_stream"))
                & (F.col("p") == F.col("a_p"))
                & (F.col("a_o").isNull() | (F.col("o") == F.col("a_o"))),
            )
            .select("ev", "gpm", "atom", "needed")
            .distinct()
            .groupBy("ev", "gpm", "needed")
            .count()
            .where(F.col("count") == F.col("needed"))
            .select("ev")
            .distinct()
        )
        kept = closed.join(hits, "ev", "left_semi")
        dropped = closed.join(hits, "ev", "left_anti")
    else:
        kept = closed.limit(0)
        dropped = closed
    out = frame.where(is_open).unionByName(kept.select(*frame.columns))
    if vocab.markers:
        markers = (
            dropped.select("stream", "ev", "event_id", "t_start", "t_end")
            .distinct()
            .select(
                "stream",
                "ev",
                "event_id",
                "t_start",
                "t_end",
                F.lit(None).cast("string").alias("s"),
                F.lit(None).cast("string").alias("p"),
                F.lit(None).cast("string").alias("o"),
            )
        )
        out = out.unionByName(markers)
    return out


# Rows to events -------------------------------------------------------------------------


def events_of(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[int, bool, str, Event]]:
    """The events of columnar rows whose rows are adjacent, as ``(part, home, ev, event)``
    (``part`` 0 and ``home`` true when the rows have no such column; ``home``: the
    partition that counts the event); triples are parsed by pyoxigraph many events at a
    time, so the terms are exactly the N-Triples the rows hold."""
    pending: list[_Pending] = []
    head: _Head | None = None
    lines: list[str] = []
    for batch in batches:
        names = batch.schema.names
        size = batch.num_rows
        parts = batch.column("part").to_pylist() if "part" in names else [0] * size
        homes = batch.column("home").to_pylist() if "home" in names else [True] * size
        cols = [batch.column(n).to_pylist() for n in _ROW_NAMES]
        for part, home, name, ev, event_id, t_start, t_end, s, p, o in zip(
            parts, homes, *cols, strict=True
        ):
            if head is None or head[0] != part or head[2] != ev:
                if head is not None:
                    pending.append((head, lines))
                head = (part, bool(home), ev, name, event_id, t_start, t_end)
                lines = []
            if s is not None:
                lines.append(f"{s} {p} {o} .")
        if len(pending) >= _EVENTS_PER_PARSE:
            yield from _parsed(pending)
            pending = []
    if head is not None:
        pending.append((head, lines))
    yield from _parsed(pending)


_Head = tuple[int, bool, str, str, str, int, int]
"""An event's first row: ``(part, home, ev, stream, event_id, t_start, t_end)``."""
_Pending = tuple[_Head, list[str]]
"""An event read from rows: its head and its triples as N-Triples lines."""


def _parsed(pending: list[_Pending]) -> Iterator[tuple[int, bool, str, Event]]:
    """The events of ``pending``, their triples parsed in one N-Triples document."""
    if not pending:
        return
    data = "\n".join(line for _, lines in pending for line in lines).encode()
    triples = [q.triple for q in parse(input=data, format=RdfFormat.N_TRIPLES)] if data else []
    position = 0
    for (part, home, ev, name, event_id, t_start, t_end), lines in pending:
        graph = frozenset(triples[position : position + len(lines)])
        position += len(lines)
        ident = parse_term(event_id) if event_id else None
        if isinstance(ident, Literal | Triple):
            ident = None
        yield part, home, ev, Event(name, t_start, t_end, graph, ident)


# Routing ----------------------------------------------------------------------------------


def route(frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame:
    """``frame`` with columns ``part`` and ``home``: each event's rows once per partition it
    goes to (module docstring, 3), those :func:`key_parts` gives it or every partition for
    an event without a key (all in partition 0 without partitioning), ``home`` in the
    first, which counts the event."""
    from pyspark.sql import functions as F

    if scheme.ranges is not None:
        return _ranged(frame, scheme.ranges)
    if not scheme.partitioned:
        return frame.withColumn("part", F.lit(0)).withColumn("home", F.lit(True))
    every = F.sequence(F.lit(0).cast("long"), F.lit(scheme.partitions - 1).cast("long"))
    owners = (
        key_parts(frame, scheme, graphs)
        .groupBy("ev")
        .agg(F.array_sort(F.collect_set("part")).alias("_owners"))
    )
    joined = frame.join(owners, "ev", "left")
    parts = F.coalesce(F.col("_owners"), every)
    exploded = joined.select(*frame.columns, F.posexplode(parts).alias("_pos", "part"))
    return exploded.select(*frame.columns, "part", (F.col("_pos") == 0).alias("home"))


def _ranged(frame: DataFrame, ranges: TimeRanges) -> DataFrame:
    """``frame`` with columns ``part`` and ``home``: each event's rows in its time range
    (``home``; with interval items, the range of its start) and in each later range that
    starts less than ``overlap`` after it (:meth:`TimeRanges.parts_of`)."""
    from pyspark.sql import functions as F

    def index(t: Column) -> Column:
        step = F.floor((t - F.lit(ranges.origin)) / F.lit(ranges.length)).cast("long")
        return F.least(
            F.greatest(step, F.lit(0).cast("long")), F.lit(ranges.count - 1).cast("long")
        )

    t = F.col("t_end")
    first = F.least(t, F.col("t_start")) if ranges.intervals else t
    parts = F.sequence(index(first), index(t + F.lit(ranges.overlap - 1)))
    exploded = frame.select(*frame.columns, F.posexplode(parts).alias("_pos", "part"))
    return exploded.select(*frame.columns, "part", (F.col("_pos") == 0).alias("home"))


def key_parts(frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame:
    """The partitions of the events of ``frame`` that have a key, rows ``ev, part``
    (module docstring, 3): the owners (:func:`~rsep.spark.partition.owner`, as Spark's
    ``crc32`` of the same bytes) of the keys :func:`event_keys` finds."""
    from pyspark.sql import functions as F

    part = F.pmod(F.crc32(F.encode("key", "UTF-8")), F.lit(scheme.partitions))
    return event_keys(frame, scheme, graphs).select("ev", part.alias("part")).distinct()


def event_keys(frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame:
    """The keys of the events of ``frame``, rows ``ev, key`` (the key's terms joined by
    NUL, as :func:`~rsep.spark.partition.owner` hashes them), found event by event by
    pyoxigraph in Spark tasks (:class:`~rsep.spark.partition.Router`: each GPM of the
    event's stream alone, SPAseq choice 9)."""
    router = Router(scheme, graphs)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        columns: dict[str, list[Any]] = {"ev": [], "key": []}
        with marked_errors():
            for _, _, ev, event in events_of(batches):
                for key in sorted(router.keys(event)):
                    columns["ev"].append(ev)
                    columns["key"].append("\x00".join(key))
                if len(columns["ev"]) >= _ROWS_PER_BATCH:
                    yield _batch(columns)
                    columns = {name: [] for name in columns}
        if columns["ev"]:
            yield _batch(columns)

    together = frame.repartition("ev").sortWithinPartitions("ev")  # an event's rows in one task
    return together.mapInArrow(run, "ev string, key string")


# Evaluation -------------------------------------------------------------------------------


def evaluate_rows(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, Any],
    until: int | None,
    start: int | None = None,
) -> DataFrame:
    """The answers of the routed rows (:data:`~rsep.spark.job.ANSWER_SCHEMA`): each
    partition's rows in one Spark task, sorted by time and run through the engine (module
    docstring, 4), from ``start`` (the oracle's)."""
    from pyspark.sql import functions as F

    if until is not None:  # an answer at t <= until reads no later event (as drive)
        frame = frame.where(F.col("t_end") <= until)
    ordered = spread(frame, scheme.partitions).sortWithinPartitions(
        "part", "t_end", "t_start", "stream", "ev"
    )
    return ordered.mapInArrow(_engine_task(scheme, graphs, until, start), ANSWER_SCHEMA)


def _engine_task(
    scheme: Scheme, graphs: Mapping[str, Any], until: int | None, start: int | None = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each evaluation task runs: per partition value met, the engine's
    evaluator fed the partition's events by the one driver loop
    (:func:`rsep.engine.query.drive`), its answers passed through the partition's
    output an instant at a time."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows: list[AnswerRow] = []
        with marked_errors():
            for part, pieces in _parts(batches):
                counted = [0]
                output = PartitionOutput(scheme, part)
                ranges = scheme.ranges
                begins = start if ranges is None else ranges.run(part, start, until)[0]
                reads = until if ranges is None else ranges.reads(part, until)
                query = incremental_query(scheme.plan, graphs, start=begins)
                answers = drive(query, _pushes(query, pieces, counted), reads)
                if ranges is not None:
                    answers = ranges.keep(part, answers, until)
                seq = 0
                for _, instant in groupby(answers, key=lambda result: result.time):
                    for result in output.take(instant):
                        rows.append(answer_row(result, part, seq))
                        seq += 1
                    if len(rows) >= _ROWS_PER_BATCH:
                        yield answer_batch(rows)
                        rows = []
                rows.append(count_row(part, counted[0], 0))
        if rows:
            yield answer_batch(rows)

    return run


def _parts(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[int, list[pa.RecordBatch]]]:
    """The rows of each partition (sorted by ``part``), as the record batches that hold
    them."""
    import numpy as np

    part: int | None = None
    pieces: list[pa.RecordBatch] = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        values = batch.column("part").to_numpy(zero_copy_only=False)
        cuts = [0, *(np.flatnonzero(values[1:] != values[:-1]) + 1).tolist(), len(values)]
        for lo, hi in itertools.pairwise(cuts):
            value = int(values[lo])
            if part is not None and value != part:
                yield part, pieces
                pieces = []
            part = value
            pieces.append(batch.slice(lo, hi - lo))
    if part is not None:
        yield part, pieces


def _pushes(
    query: IncrementalQuery, pieces: list[pa.RecordBatch], counted: list[int]
) -> Iterable[Event | list[Event] | TripleBatch]:
    """What the evaluator takes of a partition's rows, ``counted[0]`` their events whose
    home the partition is: batches of its term ids for RSP-QL's window evaluator (the
    columnar engine, :func:`rsep.engine.batch.table_batches`; each row's event named by
    its ``ev``, which sets the items' bounds), else events parsed by pyoxigraph."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rsep.engine.batch import table_batches
    from rsep.engine.continuous import ContinuousWindowQuery

    table = pa.Table.from_batches(pieces)
    if (
        type(query) is ContinuousWindowQuery
        and query.dictionary is not None
        and table.column("s").null_count == 0
    ):
        homes = pc.filter(table.column("ev"), table.column("home"))
        counted[0] = len(pc.unique(homes))
        names = pc.dictionary_encode(table.column("ev")).combine_chunks().indices
        ident = pc.binary_join_element_wise("_:e", pc.cast(names, pa.string()), "")
        columns = {
            name: table.column(name) for name in ("stream", "t_start", "t_end", "s", "p", "o")
        }
        return table_batches(pa.table({**columns, "event_id": ident}), query.dictionary)
    return _homed(events_of(pieces), counted)


def _homed(found: Iterable[tuple[int, bool, str, Event]], counted: list[int]) -> Iterator[Event]:
    """The events of :func:`events_of`'s rows, ``counted[0]`` adding those whose home is
    their partition (each event counted once, however many partitions it went to)."""
    for _, home, _, event in found:
        counted[0] += home
        yield event


# The job ---------------------------------------------------------------------------------


def replay(
    spark: SparkSession,
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    *,
    partitions: int | None = None,
    use_prefilter: bool = True,
    measure: bool = False,
    start: int | None = None,
) -> Job:
    """Evaluate ``plan`` over ``inputs`` with the per-event engine in Spark tasks (module
    docstring): the answers merged in Spark, on their way to the driver. ``partitions``
    defaults to ``spark.sql.shuffle.partitions``; ``measure`` counts the rows read and
    kept by the prefilter (two more Spark jobs); ``start`` is the oracle's start of the
    time range."""
    graphs = dict(graphs or {})
    # refuse a plan, missing graphs, or a start the evaluator does not take before Spark starts
    incremental_query(plan, graphs, start=start)
    count = partitions or shuffle_partitions(spark)
    scheme = choose_scheme(plan, count)
    vocab = vocabulary(scheme.final) if use_prefilter else None
    frame = read_inputs(spark, inputs, scheme.final.parameters.time_unit)
    ranges = time_ranges(scheme.final) if count > 1 and not scheme.partitioned else None
    if isinstance(ranges, TimeRanges):
        scheme = _over_time_ranges(scheme, ranges, frame, count, start, until)
    kept = prefilter(spark, frame, vocab)
    routed = route(kept, scheme, graphs)
    answers = merged(evaluate_rows(routed, scheme, graphs, until, start), scheme.partitioned)
    out = Job(stream_answers(answers, columnar=False), scheme)
    if measure:
        with driver_errors():
            out.rows_read = frame.count()
            out.rows_kept = kept.count()
    return out


def _over_time_ranges(
    scheme: Scheme,
    ranges: TimeRanges,
    frame: DataFrame,
    count: int,
    start: int | None,
    until: int | None,
) -> Scheme:
    """``scheme`` over at most ``count`` time ranges of equal length from ``start`` (or the
    first item a window reads) to ``until`` (or the last), found by one Spark job over
    the items' times."""
    from pyspark.sql import functions as F

    if ranges.accumulates and start is not None:
        # the first instant from start reports every solution before it, in any range
        return replace(
            scheme,
            reason="not spread from --start: the first instant from it reports every solution "
            "before it, in whichever range that instant falls (EP-SPARQL, RSEP-QL Def. 16)",
        )
    read = TimeRanges.streams(scheme.final)
    items = frame if read is None else frame.where(F.col("stream").isin(sorted(read)))
    with driver_errors():  # the items windows read (the whole run's range ends by them)
        row = items.agg(
            F.min("t_end").alias("low"),
            F.max("t_end").alias("high"),
            F.max(F.col("t_end") - F.col("t_start")).alias("reach"),
        ).first()
    if row is None or row["low"] is None:
        return scheme
    low = row["low"] if start is None else start
    high = row["high"] if until is None else min(until, row["high"])
    if high <= low:
        return scheme
    spread = ranges.spanning(low, high, count, max(0, row["reach"]))
    return replace(scheme, partitions=spread.count, ranges=spread, reason=ranges.reason)


def run_streamed(
    plan: Plan,
    inputs: Sequence[StreamInput | str | Path],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    master: str | None = None,
    *,
    start: int | None = None,
    bad: BadRecords | None = None,
) -> Streamed:
    """``rsep run --engine spark``: the answers of ``plan`` over ``inputs`` (``IRI=FILE``
    strings as ``--stream`` takes them, paths, or :class:`~rsep.spark.job.StreamInput`)
    and ``graphs`` (static ``frozenset`` of triples or time-varying graphs by IRI), from
    ``start`` up to ``until``, as JSON Lines texts in time order; the columnar engine
    (:func:`rsep.spark.columnar.columnar_replay`) for the plans it takes, else this
    replay. Spark runs on ``master`` (default: the active session, else ``local[2]`` or
    ``RSEP_SPARK_MASTER``). Bad records of the files go to ``bad``: skipped by the
    columnar engine's read tasks under ``OnError.SKIP``, else the run stops at the first."""
    from rsep.spark.columnar import columnar_replay
    from rsep.spark.session import get_session

    items = [
        item if isinstance(item, StreamInput) else StreamInput.parse(str(item)) for item in inputs
    ]
    if start is not None or any(not isinstance(g, frozenset) for g in (graphs or {}).values()):
        incremental_query(plan, graphs, start=start)  # the columnar engine reads neither
    session = get_session(master)
    # the columnar replay's read tasks run SPAseq from its data's start; from ``start`` the
    # per-event replay gives each task's evaluator the start
    done = (
        None if start is not None else columnar_replay(session, plan, items, graphs, until, bad=bad)
    )
    if done is not None:
        return done.answers
    if bad is not None and bad.policy is OnError.SKIP:
        raise UserError(
            "--on-error skip on --engine spark is for plans the columnar engine takes; this "
            "plan runs on the per-event replay, which stops at the first bad record"
        )
    return replay(session, plan, items, graphs, until, start=start).answers


def run_on_spark(
    plan: Plan,
    inputs: Sequence[StreamInput | str | Path],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    master: str | None = None,
) -> Iterator[Result]:
    """:func:`run_streamed`'s answers as result objects, in time order."""
    yield from run_streamed(plan, inputs, graphs, until, master).results()
