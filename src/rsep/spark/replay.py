"""Batch replay: a plan evaluated over stream files or the event store by the engine, inside
Spark tasks (issue 6, ``rsep run --engine spark``).

The job, stage by stage (docs/architecture.md):

1. **Read.** The driver lists the inputs; Spark runs one task per stream file (a part file
   of a folder, a SPAseq description), which parses it with :mod:`rsep.rdf.formats` and
   returns the columnar form, one row per triple ``stream, ev, event_id, t_start, t_end,
   s, p, o`` (``ev`` names the event; terms in N-Triples form). The Parquet event store
   (:mod:`rsep.spark.eventstore`) is read as it is.
2. **Prefilter** (:class:`~rsep.spark.partition.Vocabulary`), in Spark SQL: the triples are
   joined with the GPMs' atoms (a broadcast join), counted per event and GPM, and only the
   events that hold every atom of some GPM of their stream go on (a left semi join); the
   others are dropped, or become empty events where instants matter. This is the first
   step of matching graph patterns as joins over the columnar form.
3. **Route** (:func:`~rsep.spark.partition.routing`): with ``PARTITION BY``, the keys of
   each event are found per GPM, by joins of the GPM's triple patterns over the rows in
   Spark SQL where that is exact (:func:`key_rows`), else by a task that evaluates the GPM
   on each event's graph with pyoxigraph (:func:`python_keys`); the event goes to the
   partition owning each of its keys (a CRC-32, computed by Spark), an event without a key
   to every partition, and its rows are joined with these partitions.
4. **Evaluate**: each partition's rows are sorted by time; a task rebuilds the events,
   builds the engine's evaluator (:func:`rsep.engine.incremental_query`),
   pushes the events in batches, finishes at ``until``, and returns the answers as rows
   ``time, part, seq, key, line`` (``line``: the result's JSON, :mod:`rsep.rdf.results`).
   With ``prematch=True``, the GPMs whose solutions joins give exactly under any bindings
   (:func:`~rsep.spark.partition.prematches`: basic graph patterns without FILTER) are
   matched in Spark SQL by the joins of step 3 with a column per variable
   (:func:`solution_rows`), their solutions routed with their events' rows and carried by
   the rebuilt events (:class:`~rsep.engine.nfa_runtime.PrematchedEvent`: the engine does
   not match these GPMs again). It is off by default: the events are still rebuilt and
   indexed in Python, so the solution rows only add work (20-28 % more CPU on the V shape
   with every FILTER dropped, docs/benchmarks.md).
   A strict sequence (SPAseq Def. 12, ``SEQ (A, B, C)`` of plain GPMs) is instead
   evaluated as a whole by Spark SQL joins over the rows (:mod:`rsep.spark.
   strict_sequence`) when the plan allows it and the data holds nothing only the engine
   evaluates exactly (events without a key, ...); ``Replay.operator`` says which ran.
5. **Merge**: the driver collects the answers in time order; partitioned answers that two
   partitions both give (a projection that drops the key) are kept once, at their
   earliest time (IStream over the union of the partitions' answers).

:func:`run_on_spark` is the entry point of ``rsep run --engine spark``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, RdfFormat, Triple, parse

from rsep.algebra.events import Gpm
from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.engine.nfa_runtime import PrematchedEvent
from rsep.errors import InputError, UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result, read_results
from rsep.rdf.sparql import Mu
from rsep.rdf.terms import parse_term
from rsep.rdf.time import TimeUnit
from rsep.spark.partition import (
    KeyJoin,
    PartitionOutput,
    Router,
    Scheme,
    Vocabulary,
    choose_scheme,
    prematches,
    routing,
    vocabulary,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from rsep.spark.strict_sequence import StrictSequence


__all__ = [
    "ROW_SCHEMA",
    "Replay",
    "StreamInput",
    "evaluate_rows",
    "event_keys",
    "key_parts",
    "key_rows",
    "prefilter",
    "python_keys",
    "read_inputs",
    "replay",
    "result_row",
    "route",
    "run_on_spark",
    "solution_frame",
    "solution_rows",
]

ROW_SCHEMA = (
    "stream string, ev string, event_id string, t_start long, t_end long, "
    "s string, p string, o string"
)
"""The columnar form of events (DESIGN.md, Data model): one row per triple; ``ev`` names
the event among all inputs; an event without triples is one row with null ``s, p, o``."""

RESULT_SCHEMA = "time long, part long, seq long, key string, line string"
"""The answers of the engine's partitions: ``line`` is the result's JSON, ``key`` what
IStream compares (the JSON without the time)."""

INPUT_MARK = "RSEP_INPUT_ERROR:"
USER_MARK = "RSEP_USER_ERROR:"
_END = ":END"
_ROWS_PER_BATCH = 8192
_EVENTS_PER_PARSE = 1024
_EVENTS_PER_PUSH = 512


# Inputs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamInput:
    """One ``--stream`` input: a stream file, a folder of part files, a SPAseq description,
    a folder of CSR-Bench ``data_NN.ttl`` files or a Parquet event store; ``stream`` names
    the stream of its events (``None``: the streams the file names), ``options`` are the
    format's read options (:func:`rsep.rdf.formats.read_events`)."""

    path: Path
    stream: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, item: str) -> StreamInput:
        """``IRI=FILE`` or ``FILE``, as ``rsep run --stream`` takes them."""
        if "=" not in item or Path(item).exists():
            return cls(Path(item))
        iri, _, path = item.partition("=")
        return cls(Path(path), iri)

    @property
    def is_store(self) -> bool:
        """Whether the input is a Parquet event store (``rsep convert``'s output)."""
        path = self.path
        if not path.is_dir():
            return False
        return any(p.name.startswith("stream=") for p in path.iterdir()) or any(
            path.glob("*.parquet")
        )


def _tasks(inputs: Sequence[StreamInput]) -> list[tuple[int, str, str, str | None, str]]:
    """The read tasks ``(index, kind, path, stream, options)`` of the non-store inputs: a
    task per part file of a folder, one per other input."""
    from rsep.rdf.formats import Format, detect_format
    from rsep.semantics.csrbench import is_csrbench_data

    out: list[tuple[int, str, str, str | None, str]] = []
    for item in inputs:
        path = item.path
        if not path.exists():
            raise UserError(f"{path}: no such file or directory")
        options = json.dumps(dict(item.options))
        if item.is_store:
            continue
        if is_csrbench_data(path):
            out.append((len(out), "csrbench", str(path), item.stream, options))
        elif path.is_dir() and detect_format(path) is not Format.SPASEQ:
            from rsep.rdf.formats._common import part_files

            for part in part_files(path):
                out.append((len(out), "file", str(part), item.stream, options))
        else:
            out.append((len(out), "file", str(path), item.stream, options))
    return out


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
                with _marked_errors():
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
    from pyspark.sql import functions as F

    from rsep.spark.eventstore import read_store

    if not inputs:
        raise UserError("no input streams")
    frames: list[DataFrame] = []
    listing = _tasks(inputs)
    if listing:
        tasks = spark.createDataFrame(
            listing, "idx int, kind string, path string, stream string, opts string"
        ).repartitionByRange(len(listing), "idx")
        frames.append(tasks.mapInArrow(_read_task(time_unit), ROW_SCHEMA))
    for item in inputs:
        if not item.is_store:
            continue
        store = read_store(spark, item.path)
        stream = F.col("stream") if item.stream is None else F.lit(item.stream)
        frames.append(
            store.select(
                stream.alias("stream"),
                F.concat_ws(
                    "\u0001", F.col("stream"), "event_id", "t_start", "t_end", F.lit(str(item.path))
                ).alias("ev"),
                "event_id",
                "t_start",
                "t_end",
                "s",
                "p",
                "o",
            )
        )
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame


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


def _shuffle_partitions(spark: SparkSession) -> int:
    return int(spark.conf.get("spark.sql.shuffle.partitions") or "2")


# Rows to events -------------------------------------------------------------------------


def events_of(
    batches: Iterable[pa.RecordBatch], prematched: Sequence[KeyJoin] = ()
) -> Iterator[tuple[int, str, Event]]:
    """The events of columnar rows whose rows are adjacent, as ``(part, ev, event)``
    (``part`` 0 when the rows have none); triples are parsed by pyoxigraph many events at
    a time, so the terms are exactly the N-Triples the rows hold. With ``prematched``, the
    rows' solution rows (:func:`solution_rows`, after the event's triples) come with each
    event as a :class:`~rsep.engine.nfa_runtime.PrematchedEvent`: for each of these GPMs,
    its solutions on the event (none when no row gives one)."""
    pending: list[_Pending] = []
    head: tuple[int, str, str, str, int, int] | None = None
    lines: list[str] = []
    solved: list[tuple[int, list[str]]] = []
    for batch in batches:
        names = batch.schema.names
        size = batch.num_rows
        parts = batch.column("part").to_pylist() if "part" in names else [0] * size
        gpms = batch.column("g").to_pylist() if "g" in names else [None] * size
        values = batch.column("vals").to_pylist() if "vals" in names else [None] * size
        cols = [batch.column(n).to_pylist() for n in _ROW_NAMES]
        for part, g, vals, stream, ev, event_id, t_start, t_end, s, p, o in zip(
            parts, gpms, values, *cols, strict=True
        ):
            if head is None or head[0] != part or head[1] != ev:
                if head is not None:
                    pending.append((head, lines, solved))
                head = (part, ev, stream, event_id, t_start, t_end)
                lines = []
                solved = []
            if g is not None:
                solved.append((g, vals))
            elif s is not None:
                lines.append(f"{s} {p} {o} .")
        if len(pending) >= _EVENTS_PER_PARSE:
            yield from _parsed(pending, prematched)
            pending = []
    if head is not None:
        pending.append((head, lines, solved))
    yield from _parsed(pending, prematched)


_Pending = tuple[tuple[int, str, str, str, int, int], list[str], list[tuple[int, list[str]]]]
"""An event read from rows: its head ``(part, ev, stream, event_id, t_start, t_end)``, its
triples as N-Triples lines, and its solution rows ``(g, values)``."""

_VALUE = "<urn:rsep:value> <urn:rsep:value> "


def _parsed(
    pending: list[_Pending], prematched: Sequence[KeyJoin] = ()
) -> Iterator[tuple[int, str, Event]]:
    """The events of ``pending``: their triples and the values of their solutions parsed
    in one N-Triples document (the values as objects), so that equal texts give equal
    terms."""
    if not pending:
        return
    text = [line for _, lines, _ in pending for line in lines]
    count = len(text)
    text += [
        _VALUE + value + " ." for _, _, solved in pending for _, vals in solved for value in vals
    ]
    data = "\n".join(text).encode()
    triples = [q.triple for q in parse(input=data, format=RdfFormat.N_TRIPLES)] if data else []
    position = 0
    values = count
    for (part, ev, stream, event_id, t_start, t_end), lines, solved in pending:
        graph = frozenset(triples[position : position + len(lines)])
        position += len(lines)
        ident = parse_term(event_id) if event_id else None
        if isinstance(ident, Literal | Triple):
            ident = None
        if not prematched:
            yield part, ev, Event(stream, t_start, t_end, graph, ident)
            continue
        found: dict[str, set[Mu]] = {join.gpm: set() for join in prematched}
        for g, vals in solved:
            join = prematched[g]
            terms = [t.object for t in triples[values : values + len(vals)]]
            values += len(vals)
            found[join.gpm].add(Mu(dict(zip(join.variables, terms, strict=True))))
        solutions = {name: frozenset(mus) for name, mus in found.items()}
        yield part, ev, PrematchedEvent(stream, t_start, t_end, graph, ident, solutions)


# Routing ----------------------------------------------------------------------------------


def route(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, Any],
    solutions: DataFrame | None = None,
) -> DataFrame:
    """``frame`` with column ``part``: each event's rows once per partition it goes to
    (module docstring, 3): those :func:`key_parts` gives it, or every partition for an
    event without a key; all in partition 0 without partitioning. ``solutions``
    (:func:`solution_rows`) go along, to the partitions of their events."""
    from pyspark.sql import functions as F

    rows = frame
    if solutions is not None:
        rows = frame.select(
            *frame.columns,
            F.lit(None).cast("long").alias("g"),
            F.lit(None).cast("array<string>").alias("vals"),
        ).unionByName(solutions)
    if not scheme.partitioned:
        return rows.withColumn("part", F.lit(0))
    every = F.sequence(F.lit(0).cast("long"), F.lit(scheme.partitions - 1).cast("long"))
    owned = key_parts(frame, scheme, graphs)
    if owned is None:
        return rows.withColumn("part", F.explode(every))
    joined = rows.join(owned.withColumnRenamed("part", "_owner"), "ev", "left")
    parts = F.when(F.col("_owner").isNull(), every).otherwise(F.array("_owner"))
    return joined.select(*rows.columns, F.explode(parts).alias("part"))


def key_parts(frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame | None:
    """The partitions of the events of ``frame`` that have a key, rows ``ev, part``
    (module docstring, 3): the owners (:func:`~rsep.spark.partition.owner`, as Spark's
    ``crc32`` of the same bytes) of the keys that joins (:func:`key_rows`) and, for the
    GPMs joins cannot evaluate exactly, pyoxigraph (:func:`python_keys`) find (SPAseq choice
    9, docs/semantics.md); ``None`` when no GPM can give a key."""
    from pyspark.sql import functions as F

    keys = event_keys(frame, scheme, graphs)
    if keys is None:
        return None
    part = F.pmod(F.crc32(F.encode("key", "UTF-8")), F.lit(scheme.partitions))
    return keys.select("ev", part.alias("part")).distinct()


def event_keys(frame: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame | None:
    """The keys of the events of ``frame``, rows ``ev, key`` (possibly repeated): those
    joins (:func:`key_rows`) and pyoxigraph (:func:`python_keys`) find, each GPM of the
    event's stream alone (SPAseq choice 9); ``None`` when no GPM can give a key."""
    plan = routing(scheme, graphs)
    found = [key_rows(frame, join, graphs) for join in plan.joins]
    if plan.python:
        found.append(python_keys(frame, scheme, plan.python, graphs))
    if not found:
        return None
    keys = found[0]
    for more in found[1:]:
        keys = keys.unionByName(more)
    return keys


def key_rows(frame: DataFrame, join: KeyJoin, graphs: Mapping[str, Any]) -> DataFrame:
    """The keys one GPM gives the events of ``frame`` alone, rows ``ev, key`` (the key's
    terms joined by NUL, as :func:`~rsep.spark.partition.owner` hashes them): its triple
    patterns matched over the rows and joined on the event and shared variables, then with
    its knowledge base part over the graph's triples (:class:`KeyJoin`); a star on the key
    (:attr:`KeyJoin.star`) by one grouping of the rows by event and subject instead."""
    from pyspark.sql import functions as F

    rows = frame.where((F.col("stream") == join.stream) & F.col("s").isNotNull())
    if join.star:
        return _star(rows, join, ("ev",), None).select("ev", F.col("s").alias("key"))
    columns: dict[str, str] = {}
    solutions = _joined(rows, join, join.needed, columns, ("ev",), graphs)
    key = F.concat_ws("\x00", *(F.col(columns["?" + name]) for name in join.by))
    return solutions.select("ev", key.alias("key"))


def solution_rows(
    frame: DataFrame, joins: Sequence[KeyJoin], graphs: Mapping[str, Any]
) -> DataFrame | None:
    """The solutions of the GPMs ``joins`` (:func:`~rsep.spark.partition.prematches`) on
    each event of ``frame`` alone, computed by the joins :func:`key_rows` makes, with a
    column for every variable: one row per event and solution, ``s, p, o`` null, ``g`` the
    GPM's index in ``joins`` and ``vals`` the terms of its :attr:`KeyJoin.variables`
    (N-Triples); ``None`` without GPMs. The engine takes them instead of matching these
    GPMs (:func:`events_of`)."""
    from pyspark.sql import functions as F

    out: DataFrame | None = None
    base = ("ev", "t_start", "t_end")
    for index, join in enumerate(joins):
        solutions, columns = solution_frame(frame, join, base, graphs)
        values = F.array(*(F.col(columns["?" + name]) for name in join.variables))
        found = solutions.select(
            F.lit(join.stream).alias("stream"),
            "ev",
            F.lit(None).cast("string").alias("event_id"),
            "t_start",
            "t_end",
            *(F.lit(None).cast("string").alias(name) for name in ("s", "p", "o")),
            F.lit(index).cast("long").alias("g"),
            values.cast("array<string>").alias("vals"),
        )
        out = found if out is None else out.unionByName(found)
    return out


def solution_frame(
    frame: DataFrame, join: KeyJoin, base: tuple[str, ...], graphs: Mapping[str, Any]
) -> tuple[DataFrame, dict[str, str]]:
    """The solutions of a :class:`KeyJoin` on each event of ``frame`` alone (SPARQL 1.1 sec.
    18.3), distinct, one row per ``base`` value (columns of the event's rows) and solution,
    and the column of each of its variables (``?name``: :attr:`KeyJoin.variables` and the
    blank nodes it joins on): a star by one grouping (:func:`_star`), else joins
    (:func:`_joined`)."""
    from pyspark.sql import functions as F

    rows = frame.where((F.col("stream") == join.stream) & F.col("s").isNotNull())
    columns: dict[str, str] = {}
    if join.center is not None:  # distinct by construction
        return _star(rows, join, base, columns), columns
    wanted = join.needed | {"?" + name for name in join.variables}
    return _joined(rows, join, wanted, columns, base, graphs).distinct(), columns


def _star(
    rows: DataFrame, join: KeyJoin, base: tuple[str, ...], columns: dict[str, str] | None
) -> DataFrame:
    """The solutions of a star (:attr:`KeyJoin.center`) on each event of ``rows``, by one
    grouping of the rows by ``base`` and subject: per subject, whether each pattern holds
    or, when ``columns`` is given, the set of its objects for a pattern whose object is a
    variable of the solutions, then the product of these sets (one ``explode`` each);
    ``columns`` gets each variable's column (``s`` for the center, ``o<i>`` for pattern
    ``i``'s object). Without ``columns``, only the subjects (the keys of a star on the
    key)."""
    from pyspark.sql import functions as F

    center = join.center
    assert center is not None
    matches = [
        (F.col("p") == p) & (F.lit(True) if o.startswith("?") else F.col("o") == o)
        for _, p, o in join.event
    ]
    sets = [
        i
        for i, (_, _, o) in enumerate(join.event)
        if columns is not None and o.startswith("?") and "_:" not in o
    ]
    aggregates = [
        F.collect_set(F.when(match, F.col("o"))).alias(f"o{i}")
        if i in sets
        else F.max(match.cast("int")).alias(f"m{i}")
        for i, match in enumerate(matches)
    ]
    any_match = matches[0]
    for match in matches[1:]:
        any_match = any_match | match
    grouped = rows.where(any_match).groupBy(*base, "s").agg(*aggregates)
    for i in range(len(matches)):
        grouped = grouped.where(F.size(f"o{i}") > 0 if i in sets else F.col(f"m{i}") == 1)
    for i in sets:
        grouped = grouped.withColumn(f"o{i}", F.explode(f"o{i}"))
    if columns is not None:
        columns[center] = "s"
        columns.update({join.event[i][2]: f"o{i}" for i in sets})
    return grouped


def _joined(
    rows: DataFrame,
    join: KeyJoin,
    needed: frozenset[str],
    columns: dict[str, str],
    base: tuple[str, ...],
    graphs: Mapping[str, Any],
) -> DataFrame:
    """The solutions of a :class:`KeyJoin` on each event of ``rows`` (its stream's triple
    rows): its event part's (:func:`_solutions`), joined with its knowledge base part's
    over the graph's triples (a broadcast table), a column per ``needed`` variable."""
    from pyspark.sql import functions as F

    solutions = _solutions(rows, join.event, needed, columns, base)
    if join.kb:
        assert join.graph is not None
        triples = [(str(t.subject), str(t.predicate), str(t.object)) for t in graphs[join.graph]]
        kb = rows.sparkSession.createDataFrame(triples, "s string, p string, o string")
        found = F.broadcast(_solutions(kb, join.kb, needed, columns, ()))
        shared = [name for name in found.columns if name in solutions.columns]
        solutions = solutions.join(found, shared) if shared else solutions.crossJoin(found)
    return solutions


def _solutions(
    rows: DataFrame,
    patterns: Sequence[tuple[str, str, str]],
    needed: frozenset[str],
    columns: dict[str, str],
    base: tuple[str, ...],
) -> DataFrame:
    """The solutions of a basic graph pattern over triple rows ``s, p, o`` (SPARQL 1.1 sec.
    18.3: each triple pattern's matches, joined on shared variables and on ``base``), with
    a column for each ``needed`` variable (its name from ``columns``, filled in as met)."""
    from pyspark.sql import functions as F

    out: DataFrame | None = None
    for pattern in patterns:
        match = rows
        bound: dict[str, str] = {}
        for position, term in zip(("s", "p", "o"), pattern, strict=True):
            if not term.startswith("?"):
                match = match.where(F.col(position) == term)
            elif term in bound:
                match = match.where(F.col(position) == F.col(bound[term]))
            else:
                bound[term] = position
        kept = [
            F.col(position).alias(columns.setdefault(term, f"v{len(columns)}"))
            for term, position in bound.items()
            if term in needed
        ]
        match = match.select(*base, *kept).distinct()
        if out is None:
            out = match
        else:
            shared = [name for name in match.columns if name in out.columns]
            out = out.join(match, shared) if shared else out.crossJoin(match)
    assert out is not None, "a key join has triple patterns"
    return out


def python_keys(
    frame: DataFrame, scheme: Scheme, gpms: Sequence[Gpm], graphs: Mapping[str, Any]
) -> DataFrame:
    """The keys ``gpms`` give the events of ``frame``, rows ``ev, key``, found event by
    event by pyoxigraph in Spark tasks (:class:`~rsep.spark.partition.Router`): for the
    GPMs joins cannot evaluate exactly."""
    from pyspark.sql import functions as F

    router = Router(scheme, graphs, tuple(gpms))
    streams = sorted({gpm.stream for gpm in gpms})

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        columns: dict[str, list[Any]] = {"ev": [], "key": []}
        with _marked_errors():
            for _, ev, event in events_of(batches):
                for key in sorted(router.keys(event)):
                    columns["ev"].append(ev)
                    columns["key"].append("\x00".join(key))
                if len(columns["ev"]) >= _ROWS_PER_BATCH:
                    yield _batch(columns)
                    columns = {name: [] for name in columns}
        if columns["ev"]:
            yield _batch(columns)

    chosen = frame.where(F.col("stream").isin(streams)).sortWithinPartitions("ev")
    return chosen.mapInArrow(run, "ev string, key string")


# Evaluation -------------------------------------------------------------------------------


def evaluate_rows(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, Any],
    until: int | None,
    prematched: Sequence[KeyJoin] = (),
) -> DataFrame:
    """The answers of the routed rows (:data:`RESULT_SCHEMA`): each partition's rows in one
    Spark task, sorted by time and run through the engine (module docstring, 4), with the
    solutions of the GPMs ``prematched`` that the rows carry (:func:`solution_rows`)."""
    from pyspark.sql import functions as F

    order: tuple[str, ...] = ("part", "t_end", "t_start", "stream", "ev")
    if "g" in frame.columns:
        order += ("g",)  # an event's triples (null g, first in ascending order), then solutions
    if until is not None:  # an answer at t <= until reads no later event (as run_local)
        frame = frame.where(F.col("t_end") <= until)
    count = scheme.partitions
    if count > 1:
        # Spark hash-partitions by pmod(hash(column), n): a bucket per partition whose
        # hash lands on it puts each partition in a task of its own
        buckets = F.element_at(
            F.array(*(F.lit(b).cast("long") for b in _buckets(count))),
            (F.col("part") + 1).cast("int"),
        )
        spread = frame.withColumn("bucket", buckets).repartition(count, "bucket").drop("bucket")
    else:
        spread = frame.repartition(1)
    ordered = spread.sortWithinPartitions(*order)
    return ordered.mapInArrow(_engine_task(scheme, graphs, until, prematched), RESULT_SCHEMA)


def _buckets(count: int) -> list[int]:
    """For each partition ``p < count``, the smallest integer whose Spark hash (Murmur3,
    seed 42, as ``repartition`` uses it) lands on ``p``."""
    found: dict[int, int] = {}
    candidate = 0
    while len(found) < count:
        found.setdefault(_spark_hash_long(candidate) % count, candidate)
        candidate += 1
    return [found[p] for p in range(count)]


def _spark_hash_long(value: int) -> int:
    """Spark's ``hash()`` of a ``long`` (Murmur3 x86 32-bit over its two 32-bit halves,
    seed 42), a signed 32-bit integer; Python's ``%`` of it is Spark's ``pmod``."""

    def mix(h: int, k: int) -> int:
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * 0x1B873593) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        return (h * 5 + 0xE6546B64) & 0xFFFFFFFF

    h = 42
    h = mix(h, value & 0xFFFFFFFF)
    h = mix(h, (value >> 32) & 0xFFFFFFFF)
    h ^= 8
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _engine_task(
    scheme: Scheme,
    graphs: Mapping[str, Any],
    until: int | None,
    prematched: Sequence[KeyJoin] = (),
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each evaluation task runs: one evaluator per partition value met."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:

        rows: dict[str, list[Any]] = {n: [] for n in ("time", "part", "seq", "key", "line")}
        state: dict[str, Any] = {"part": None, "query": None, "output": None, "seq": 0}
        buffer: list[Event] = []

        def emit(results: list[Result]) -> None:
            for result in state["output"].take(results):
                row = result_row(result, state["part"], state["seq"])
                for name, value in zip(rows, row, strict=True):
                    rows[name].append(value)
                state["seq"] += 1

        def close() -> None:
            if state["query"] is not None:
                emit(state["query"].push(buffer))
                buffer.clear()
                emit(state["query"].finish(until))

        with _marked_errors():
            for part, _, event in events_of(batches, prematched):
                if part != state["part"]:
                    close()
                    state.update(
                        part=part,
                        query=incremental_query(scheme.plan, graphs),
                        output=PartitionOutput(scheme, part),
                        seq=0,
                    )
                buffer.append(event)
                if len(buffer) >= _EVENTS_PER_PUSH:
                    emit(state["query"].push(buffer))
                    buffer.clear()
                if len(rows["time"]) >= _ROWS_PER_BATCH:
                    yield _batch(rows)
                    rows = {n: [] for n in rows}
            close()
        if rows["time"]:
            yield _batch(rows)

    return run


def result_row(result: Result, part: int, seq: int) -> tuple[int, int, int, str, str]:
    """A partition's answer as a row of :data:`RESULT_SCHEMA`: ``line`` its JSON, ``key``
    the JSON without the time (what IStream compares across partitions)."""
    data = result.to_json()
    line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    data.pop("time")
    return result.time, part, seq, json.dumps(data, ensure_ascii=False, sort_keys=True), line


def merge(rows: Iterable[tuple[int, int, int, str, str]], scheme: Scheme) -> list[str]:
    """The answers ``(time, part, seq, key, line)`` as JSON lines in time order (module
    docstring, 5): partitioned answers once each, at their earliest time; otherwise as the
    one partition gave them."""
    if not scheme.partitioned:
        return [line for *_, line in sorted(rows, key=lambda r: (r[0], r[2]))]
    first: dict[str, tuple[int, str]] = {}
    for t, _, _, key, line in rows:
        known = first.get(key)
        if known is None or t < known[0]:
            first[key] = (t, line)
    return [line for _, line in sorted((t, line) for t, line in first.values())]


# The job ---------------------------------------------------------------------------------


@dataclass
class Replay:
    """What a replay did: its answers, the scheme it ran under, the operator that found the
    answers (``"strict-sequence"``: :mod:`rsep.spark.strict_sequence`; ``"engine"``: the
    engine in tasks) and why not the strict sequence's, when measured the rows read and
    kept by the prefilter, and the time taken."""

    results: list[Result]
    scheme: Scheme
    rows_read: int | None = None
    rows_kept: int | None = None
    seconds: float = 0.0
    operator: str = "engine"
    reason: str = ""

    @property
    def rows_per_second(self) -> float:
        """Input rows (triples) per second of wall-clock time, when measured."""
        return (self.rows_read or 0) / self.seconds if self.seconds else 0.0


def replay(
    spark: SparkSession,
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    *,
    partitions: int | None = None,
    use_prefilter: bool = True,
    prematch: bool = False,
    measure: bool = False,
    strict: bool = False,
) -> Replay:
    """Evaluate ``plan`` over ``inputs`` with the engine in Spark tasks (module docstring).

    ``partitions`` defaults to ``spark.sql.shuffle.partitions``; ``prematch``: the GPMs
    joins evaluate exactly are matched in Spark SQL, not by the engine (module docstring,
    4, off by default); ``measure`` counts the rows read and kept by the prefilter (two
    more Spark jobs); ``strict``: a strict sequence is evaluated by Spark SQL joins
    (:mod:`rsep.spark.strict_sequence`) when the plan and the data allow (module
    docstring, 4; ``Replay.operator`` and ``reason`` say which ran and why). Off by
    default: on this 2-core machine the joins measured slower than the engine in tasks at
    3,000-150,000 V-shape events (docs/benchmarks.md)."""
    from pyspark import StorageLevel

    from rsep.spark.strict_sequence import strict_sequence

    started = time.perf_counter()
    graphs = dict(graphs or {})
    incremental_query(plan, graphs)  # refuse a plan or missing graphs before Spark starts
    count = partitions or _shuffle_partitions(spark)
    scheme = choose_scheme(plan, count)
    vocab = vocabulary(scheme.final) if use_prefilter else None
    sequence = strict_sequence(scheme, graphs) if strict else "not asked for (strict=False)"
    frame = read_inputs(spark, inputs, scheme.final.parameters.time_unit)
    if vocab is not None or measure or not isinstance(sequence, str):
        # the prefilter reads the rows three times: parse the files once
        frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
    out = Replay([], scheme)
    try:
        with _driver_errors():
            kept = prefilter(spark, frame, vocab)
            if measure:
                out.rows_read = frame.count()
                out.rows_kept = kept.count()
            rows: list[tuple[int, int, int, str, str]] | None = None
            if isinstance(sequence, str):
                out.reason = sequence
            else:
                rows = _strict_rows(kept, sequence, scheme, graphs, until, out)
            if rows is None:
                joins = prematches(scheme.plan, graphs) if prematch else ()
                solutions = solution_rows(kept, joins, graphs)
                routed = route(kept, scheme, graphs, solutions)
                answers = evaluate_rows(routed, scheme, graphs, until, joins)
                rows = [
                    (r["time"], r["part"], r["seq"], r["key"], r["line"]) for r in answers.collect()
                ]
    finally:
        frame.unpersist()
    out.results = list(read_results(merge(rows, scheme)))
    out.seconds = time.perf_counter() - started
    return out


def _strict_rows(
    kept: DataFrame,
    sequence: StrictSequence,
    scheme: Scheme,
    graphs: Mapping[str, Any],
    until: int | None,
    out: Replay,
) -> list[tuple[int, int, int, str, str]] | None:
    """The answers of a strict sequence by Spark SQL joins (:func:`rsep.spark.
    strict_sequence.matches`) as rows for :func:`merge`, or ``None`` when the data holds
    what only the engine evaluates exactly (:func:`~rsep.spark.strict_sequence.blockers`;
    ``out.reason`` says what). ``out.operator`` says which ran."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from rsep.spark.strict_sequence import answer_rows, blocked, blockers, matches

    streams = sorted(scheme.final.dataset.streams)
    if streams:  # the streamset (choice 8), also without the prefilter
        kept = kept.where(F.col("stream").isin(streams))
    if until is not None:  # an answer at t <= until reads no later event (as run_local)
        kept = kept.where(F.col("t_end") <= until)
    # the joins read the events many times: the prefilter's joins once
    kept = kept.persist(StorageLevel.MEMORY_AND_DISK)
    keys = event_keys(kept, scheme, graphs) if sequence.by else None
    if keys is not None:
        keys = keys.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if sequence.by and keys is None:
            out.reason = "no GPM gives a PARTITION BY key on an event alone"
            return None
        found = blockers(graphs)
        if found:
            out.reason = "the data holds " + ", ".join(found)
            return None
        # the matches and what may block them in one job (blocked data is rare)
        names = sequence.variables
        values = F.array(*(F.col(f"v_{name}") for name in names))
        counts = blocked(kept, keys).groupBy("r").count()
        both = (
            matches(kept, sequence, keys, graphs)
            .select(F.lit(None).cast("string").alias("r"), "t1", "t2", values.alias("vals"))
            .unionByName(counts, allowMissingColumns=True)
        )
        rows = both.collect()
    finally:
        kept.unpersist()
        if keys is not None:
            keys.unpersist()
    found = blockers({}, [(r["r"], r["count"]) for r in rows if r["r"] is not None])
    if found:
        out.reason = "the data holds " + ", ".join(found)
        return None
    results = answer_rows(
        ((r["t1"], r["t2"], r["vals"]) for r in rows if r["r"] is None), sequence, scheme
    )
    out.operator = "strict-sequence"
    return [result_row(result, 0, seq) for seq, result in enumerate(results)]


def run_on_spark(
    plan: Plan,
    inputs: Sequence[StreamInput | str | Path],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    master: str | None = None,
    *,
    columnar: bool = False,
) -> Iterator[Result]:
    """``rsep run --engine spark``: the answers of ``plan`` over ``inputs`` (``IRI=FILE``
    strings as ``--stream`` takes them, paths, or :class:`StreamInput`) and ``graphs``
    (static ``frozenset`` of triples or time-varying graphs by IRI), up to ``until``, in
    time order; Spark runs on ``master`` (default: the active session, else ``local[2]`` or
    ``RSEP_SPARK_MASTER``). ``columnar`` (``--columnar``): graph patterns matched by Spark
    SQL joins where that is exact, a strict sequence whole (``strict``), else the GPMs
    without FILTER (``prematch``); without it, a plan the columnar engine takes runs on it
    (:func:`rsep.spark.columnar.columnar_replay`), the others on the engine in tasks."""
    from rsep.spark.session import get_session

    items = [
        item if isinstance(item, StreamInput) else StreamInput.parse(str(item)) for item in inputs
    ]
    session = get_session(master)
    if not columnar:  # the columnar engine for the plans it takes (rsep.spark.columnar)
        from rsep.spark.columnar import columnar_replay

        done = columnar_replay(session, plan, items, graphs, until)
        if done is not None:
            yield from done.results
            return
    found = replay(session, plan, items, graphs, until, prematch=columnar, strict=columnar)
    yield from found.results


# Errors across the JVM --------------------------------------------------------------------


@contextmanager
def _marked_errors() -> Iterator[None]:
    """In a task: an :class:`InputError` or :class:`UserError` becomes a marked
    ``RuntimeError`` whose text survives the JVM, so the driver can raise it again."""
    try:
        yield
    except InputError as exc:
        entry = {"file": str(exc.file), "line": exc.line, "reason": exc.reason}
        raise RuntimeError(INPUT_MARK + json.dumps(entry) + _END) from None
    except UserError as exc:
        raise RuntimeError(USER_MARK + json.dumps(str(exc)) + _END) from None


@contextmanager
def _driver_errors() -> Iterator[None]:
    """On the driver: a failed Spark job whose text holds a marked error raises it again
    (:class:`InputError` naming file and line, or :class:`UserError`)."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:
        marked = unmark(str(exc))
        if marked is None:
            raise
        raise marked from None


def unmark(text: str) -> UserError | None:
    """The error a task marked in ``text`` (:class:`_marked_errors`), if any."""
    for mark in (INPUT_MARK, USER_MARK):
        start = text.find(mark)
        if start < 0:
            continue
        end = text.find(_END, start)
        data = json.loads(text[start + len(mark) : end])
        if mark == INPUT_MARK:
            return InputError(data["file"], data["line"], data["reason"])
        return UserError(data)
    return None
