"""Columnar replay on Spark: a SPAseq sequence of GPMs (SPAseq Defs. 7-16) evaluated by the
columnar engine (:class:`rsep.engine.sequence.SequenceQuery`) inside Spark tasks, for the
plans :func:`~rsep.engine.sequence.columnar_reason` takes (issue 15, item 5).

The job (docs/architecture.md, "5. Spark"):

1. **Read.** The driver lists the inputs, without opening them: one task per stream file
   (a part file of a folder, a SPAseq description) and one per data file of a Parquet
   event store; an uncompressed N-Quads file is cut in byte ranges
   (:func:`rsep.engine.batch.split_ranges`, one per engine partition), each read by its
   own task (``read_batches(..., byte_range=...)`` gives each event of the file to
   exactly one range). Each task reads with :func:`rsep.engine.batch.read_batches`
   straight into :class:`~rsep.engine.batch.TripleBatch`es. Events are rows
   :data:`EVENT_SCHEMA`, the triples as the task's term ids (int32 ``s, p, o`` in
   bytes); the texts of its
   ids travel once, in rows of their own sent to every partition ahead of the events
   (:class:`ReaderTerms` maps them to each partition's dictionary).
2. **Route.** With ``PARTITION BY`` (and a scheme that partitions,
   :func:`rsep.spark.partition.choose_scheme`), the read task finds each event's keys with
   :meth:`SequenceQuery.event_keys` (each GPM alone on the event, SPAseq choice 9) and
   sends the event to the partition owning each key (:func:`rsep.spark.partition.owner`,
   a CRC-32 of the key's texts); an event without a key goes to every partition, where it
   still breaks strict contiguity. Without ``PARTITION BY`` everything is one partition:
   a sequence relates consecutive instants of the whole streamset (Def. 12), so no event
   can be evaluated apart from the others.
3. **Evaluate.** The rows are repartitioned (a Spark task per partition), sorted by time,
   input and position, and each partition's events run through one ``SequenceQuery`` of
   the scheme's plan (``SELECT *`` when partitioned) in ``mapInArrow``; its answers pass
   :class:`~rsep.spark.partition.PartitionOutput` (answers of owned keys, the user's
   projection and IStream) and leave as rows :data:`rsep.spark.job.ANSWER_SCHEMA`, with
   a count row per partition (events read, FILTER rows evaluated exactly).
4. **Merge**, in Spark (:func:`rsep.spark.job.merged`): an answer two partitions both
   give is kept once, at its earliest time (a ``groupBy`` on its key). The driver gets
   the counts, then the answers' JSON Lines texts in time order, one Spark partition at a
   time (:func:`rsep.spark.job.stream_answers`); never the events.

A FILTER the kernel cannot decide (:class:`~rsep.engine.sequence.Undecided`) or an input
this path does not read (CSR-Bench folders, time-varying graphs) gives ``None``: the
caller runs :mod:`rsep.spark.replay` instead.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import Triple

from rsep.algebra.plan import Plan
from rsep.engine.batch import (
    STORE,
    TripleBatch,
    is_store,
    read_batches,
    split_ranges,
    store_files,
)
from rsep.engine.sequence import SequenceQuery, Undecided, columnar_reason
from rsep.engine.terms import TermDictionary
from rsep.errors import UserError
from rsep.rdf.formats import Format, detect_format
from rsep.rdf.time import TimeUnit
from rsep.spark.job import (
    ANSWER_SCHEMA,
    AnswerRow,
    Job,
    StreamInput,
    answer_batch,
    answer_row,
    buckets,
    count_row,
    marked_errors,
    merged,
    read_tasks,
    shuffle_partitions,
    spread,
    stream_answers,
)
from rsep.spark.partition import PartitionOutput, Scheme, choose_scheme, owner

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "EVENT_SCHEMA",
    "ReaderTerms",
    "columnar_replay",
    "event_frame",
    "on_stream",
]

EVENT_SCHEMA = (
    "part int, home boolean, task int, reader int, ordinal long, stream string, "
    "t_start long, t_end long, triples binary, terms array<string>"
)
"""Events as rows: the partition the row goes to (``home``: the event's first row, so
that each event is counted once), the read task and the event's position in it, the
Spark task that read it (``reader``, whose dictionary its ids are in), its stream and
times, and its triples' term ids (int32 ``s, p, o`` after one another, native byte
order: one binary value is cheaper for Spark to sort and ship than lists). A row with
``terms`` (and no triples)
holds the texts of the reader's ids ``ordinal``, ``ordinal + 1``, …, sent to every
partition at time :data:`_DICTIONARY_TIME`, so that each partition reads the texts before
any event."""

_DICTIONARY_TIME = -(1 << 63)
_UNDECIDED = "RSEP_UNDECIDED:"
_EVENTS_PER_BATCH = 16_384


def columnar_replay(
    spark: SparkSession,
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    *,
    partitions: int | None = None,
) -> Job | None:
    """Evaluate ``plan`` over ``inputs`` with the columnar engine in Spark tasks (module
    docstring); ``None`` when the plan, an input or a FILTER needs the per-event path."""
    if columnar_reason(plan) is not None:
        return None
    static = _static(graphs or {})
    if static is None:
        return None
    listing = read_listing(inputs, partitions or shuffle_partitions(spark))
    if listing is None:
        return None
    SequenceQuery(plan, static)  # refuse missing graphs before Spark starts
    scheme = choose_scheme(plan, partitions or shuffle_partitions(spark))
    frame = event_frame(spark, listing, scheme, static, until)
    answers = merged(_evaluate(frame, scheme, static, until), scheme.partitioned)
    try:
        found = stream_answers(answers)
    except Exception as exc:
        if _UNDECIDED in str(exc):
            return None
        raise
    return Job(found, scheme)


def _static(graphs: Mapping[str, Any]) -> dict[str, frozenset[Triple]] | None:
    """The graphs as sets of triples (SPAseq Def. 15's static KB), or ``None`` when one is
    not (a time-varying graph: the per-event path reads those)."""
    out: dict[str, frozenset[Triple]] = {}
    for iri, graph in graphs.items():
        if not isinstance(graph, set | frozenset):
            return None
        out[iri] = frozenset(graph)
    return out


# Reading ---------------------------------------------------------------------------------

_Task = tuple[int, str, str, str | None, str, str | None, int | None, int | None]
"""A read task: ``(task, kind, path, stream, options, fixed, start, stop)``; ``kind`` is
``file``, ``range`` (the bytes ``start`` to ``stop`` of an N-Quads file) or ``store`` (one
data file of an event store, ``fixed`` the stream its folder names)."""


def read_listing(inputs: Sequence[StreamInput], parts: int = 1) -> list[_Task] | None:
    """The read tasks of ``inputs`` in input order (module docstring, 1), listed without
    reading a file (an uncompressed N-Quads file cut in up to ``parts`` byte ranges,
    :func:`rsep.engine.batch.split_ranges`); ``None`` for a CSR-Bench folder (the
    per-event path reads those)."""
    if not inputs:
        raise UserError("no input streams")
    out: list[_Task] = []
    for item in inputs:
        if not item.path.exists():
            raise UserError(f"{item.path}: no such file or directory")
        if is_store(item.path):
            options = json.dumps(dict(item.options))
            for file, folders in store_files(item.path):
                fixed = folders.get("stream")
                out.append((len(out), "store", str(file), item.stream, options, fixed, None, None))
            continue
        for _, kind, path, stream, options in read_tasks([item]):
            if kind != "file":
                return None
            ranges = _ranges(Path(path), json.loads(options), parts)
            if ranges is None:
                out.append((len(out), kind, path, stream, options, None, None, None))
                continue
            for start, stop in ranges:
                out.append((len(out), "range", path, stream, options, None, start, stop))
    return out


def _ranges(path: Path, options: Mapping[str, Any], parts: int) -> list[tuple[int, int]] | None:
    """The byte ranges of an uncompressed N-Quads file, or ``None`` for another file or
    one range (the reader reads it whole)."""
    if parts < 2 or options.get("format") not in (None, Format.NQUADS.value):
        return None
    if path.suffix == ".gz" or detect_format(path) is not Format.NQUADS:
        return None
    found = split_ranges(path, parts)
    return found if len(found) > 1 else None


def event_frame(
    spark: SparkSession,
    listing: Sequence[_Task],
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
) -> DataFrame:
    """The events of the listed files as rows :data:`EVENT_SCHEMA`, read and routed by
    Spark tasks, one per file (module docstring, 1-2)."""
    slots = max(1, min(len(listing), shuffle_partitions(spark)))
    chosen = buckets(slots)
    rows = [(*task, chosen[task[0] * slots // len(listing)]) for task in listing]
    schema = (
        "task int, kind string, path string, stream string, opts string, fixed string, "
        "start long, stop long, bucket long"
    )
    tasks = spark.createDataFrame(rows, schema).repartition(slots, "bucket")
    run = _read_task(scheme, graphs, until)
    return tasks.drop("bucket").mapInArrow(run, EVENT_SCHEMA)


def _read_task(
    scheme: Scheme, graphs: Mapping[str, frozenset[Triple]], until: int | None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each read task runs over its listing rows (module docstring, 1-2)."""

    def run(listing: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        files: list[_Task] = []
        for rows in listing:
            files += zip(*(rows.column(n).to_pylist() for n in rows.schema.names), strict=True)
        if not files:
            return
        with marked_errors():
            router = _Router(scheme, graphs, until)
            unit = scheme.final.parameters.time_unit
            reader = min(f[0] for f in files)
            for group in _runs(sorted(files)):
                task = group[0][0]
                for batch in _file_batches(group, router.dictionary, unit):
                    out = router.rows(batch, task, reader)
                    if out.num_rows:
                        terms = router.terms(reader)
                        if terms is not None:
                            yield terms
                        yield out

    return run


def _runs(files: Sequence[_Task]) -> Iterator[list[_Task]]:
    """The tasks in order, the consecutive data files of one store's folders naming their
    stream (same input: store, stream and options) together: one read each."""
    run: list[_Task] = []
    for task in files:
        stored = task[1] == "store" and task[5] is not None
        same = run and task[3:5] == run[0][3:5] and _root(task) == _root(run[0])
        if run and not (stored and same):
            yield run
            run = []
        run.append(task)
        if not stored:
            yield run
            run = []
    if run:
        yield run


def _root(task: _Task) -> Path:
    """The folder holding a store file's ``stream=`` folder."""
    return Path(task[2]).parent.parent


def _file_batches(
    group: Sequence[_Task], dictionary: TermDictionary, unit: TimeUnit
) -> Iterator[TripleBatch]:
    """The events of a run of tasks (:func:`_runs`) as batches, every event on the task's
    stream when one is given (as ``rsep run --stream IRI=FILE`` reads it), only those of
    its byte range when given; data files of a store folder naming their stream read
    together from a folder of links named as theirs, as
    :func:`~rsep.engine.batch.read_batches` reads a store."""
    _, kind, path, stream, opts, fixed, start, stop = group[0]
    options = json.loads(opts)
    if kind == "store" and fixed is not None:
        folder = Path(tempfile.mkdtemp(prefix="rsep-store-"))
        try:
            for task, _, file, _, _, named, _, _ in group:
                link = (
                    folder
                    / f"stream={quote(str(named), safe='')}"
                    / f"{task:09d}-{Path(file).name}"
                )
                link.parent.mkdir(exist_ok=True)
                link.symlink_to(file)
            batches = read_batches(
                folder, stream, dictionary, fmt=STORE, batch_events=_EVENTS_PER_BATCH
            )
            yield from on_stream(batches, stream)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    batches = read_batches(
        Path(path),
        stream,
        dictionary,
        fmt=STORE if kind == "store" else None,
        time_unit=unit,
        batch_events=_EVENTS_PER_BATCH,
        byte_range=None if start is None or stop is None else (start, stop),
        **options,
    )
    yield from on_stream(batches, stream)


def on_stream(batches: Iterator[TripleBatch], stream: str | None) -> Iterator[TripleBatch]:
    """``--stream IRI=FILE``: every event of the file on stream ``IRI`` when it is given,
    whatever the format names (as ``rsep run`` reads it in every engine)."""
    for batch in batches:
        if stream is not None and batch.streams != (stream,):
            batch.streams = (stream,)
            batch.event_stream = np.zeros(len(batch), np.int32)
        yield batch


class _Router:
    """A read task's dictionary and key finder: events of batches as routed rows (module
    docstring, 2)."""

    def __init__(
        self, scheme: Scheme, graphs: Mapping[str, frozenset[Triple]], until: int | None
    ) -> None:
        self.scheme = scheme
        self.until = until
        self.query = SequenceQuery(scheme.plan, graphs) if scheme.partitioned else None
        self.dictionary = self.query.dictionary if self.query else TermDictionary()
        self.streams = frozenset(scheme.final.dataset.streams)
        self.sent = 0
        """The ids whose texts the partitions have."""
        self.owners: dict[tuple[int, ...], int] = {}
        used = _predicates(scheme.final)
        self.predicates = (
            None if used is None else np.array([self.dictionary.intern(p) for p in used], np.int32)
        )

    def terms(self, reader: int) -> pa.RecordBatch | None:
        """The texts of the ids the dictionary gained since the last call, a row per
        partition (:data:`EVENT_SCHEMA`); ``None`` when there are none."""
        known, size = self.sent, len(self.dictionary)
        if size == known:
            return None
        self.sent = size
        texts = pa.array(self.dictionary.texts(np.arange(known, size)), pa.string())
        count = self.scheme.partitions
        offsets = pa.array(np.arange(count + 1, dtype=np.int32) * len(texts))
        repeated = pa.concat_arrays([texts] * count)
        columns = [
            pa.array(np.arange(count, dtype=np.int32)),
            pa.array(np.zeros(count, np.bool_)),
            pa.array(np.full(count, reader, np.int32)),
            pa.array(np.full(count, reader, np.int32)),
            pa.array(np.full(count, known, np.int64)),
            pa.nulls(count, pa.string()),
            pa.array(np.full(count, _DICTIONARY_TIME, np.int64)),
            pa.array(np.full(count, _DICTIONARY_TIME, np.int64)),
            pa.nulls(count, pa.binary()),
            pa.ListArray.from_arrays(offsets, repeated),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=_event_schema())

    def rows(self, batch: TripleBatch, task: int, reader: int) -> pa.RecordBatch:
        """The batch's events as rows, once per partition they go to."""
        keep = np.ones(len(batch), np.bool_)
        if self.streams:  # FROM STREAM: the streamset (choice 8)
            named = np.array([s in self.streams for s in batch.streams], np.bool_)
            keep &= named[batch.event_stream]
        if self.until is not None:  # an answer at t <= until reads no later event
            keep &= batch.event_end <= self.until
        event, part = self._parts(batch)
        chosen = keep[event]
        event, part = event[chosen], part[chosen]
        home = np.ones(len(event), np.bool_)
        home[1:] = event[1:] != event[:-1]
        triple_event, s, p, o = batch.triple_event, batch.s, batch.p, batch.o
        if self.predicates is not None:  # a triple no pattern can match changes no solution
            used = np.isin(p, self.predicates)
            triple_event, s, p, o = triple_event[used], s[used], p[used], o[used]
        bounds = np.searchsorted(triple_event, np.arange(len(batch) + 1)).astype(np.int32)
        ids = np.ascontiguousarray(np.stack([s, p, o], axis=1), np.int32)
        offsets = pa.py_buffer((bounds * 12).astype(np.int32))
        triples = pa.BinaryArray.from_buffers(
            pa.binary(), len(batch), [None, offsets, pa.py_buffer(ids)]
        ).take(pa.array(event))
        stream = pa.array(batch.streams, pa.string()).take(pa.array(batch.event_stream[event]))
        n = len(event)
        columns = [
            pa.array(part, pa.int32()),
            pa.array(home),
            pa.array(np.full(n, task, np.int32)),
            pa.array(np.full(n, reader, np.int32)),
            pa.array(batch.event_ordinal[event], pa.int64()),
            stream,
            pa.array(batch.event_start[event], pa.int64()),
            pa.array(batch.event_end[event], pa.int64()),
            triples,
            pa.nulls(n, pa.list_(pa.string())),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=_event_schema())

    def _parts(self, batch: TripleBatch) -> tuple[np.ndarray, np.ndarray]:
        """The (event, partition) pairs of the batch, sorted by event: the owners of each
        event's keys, every partition for an event without a key (SPAseq choice 9)."""
        n = len(batch)
        if self.query is None:
            return np.arange(n, dtype=np.int64), np.zeros(n, np.int32)
        count = self.scheme.partitions
        event, keys = self.query.event_keys(batch)
        owners = np.zeros(len(keys), np.int64)
        if len(keys):
            if keys.shape[1] <= 2:  # the ids of a key in one int64: a 1-D unique
                code = keys[:, 0].astype(np.int64) << 32
                if keys.shape[1] == 2:
                    code |= keys[:, 1].astype(np.int64) & 0xFFFFFFFF
                first, inverse = np.unique(code, return_index=True, return_inverse=True)[1:]
                unique = keys[first]
            else:
                unique, inverse = np.unique(keys, axis=0, return_inverse=True)
            found = np.array([self._owner(tuple(row.tolist())) for row in unique], np.int64)
            owners = found[inverse.reshape(-1)]
        keyed = np.zeros(n, np.bool_)
        keyed[event] = True
        keyless = np.flatnonzero(~keyed)
        event = np.concatenate([event.astype(np.int64), np.repeat(keyless, count)])
        part = np.concatenate([owners, np.tile(np.arange(count, dtype=np.int64), len(keyless))])
        pairs = np.unique(event * count + part)  # sorted by event, then partition
        return pairs // count, (pairs % count).astype(np.int32)

    def _owner(self, ids: tuple[int, ...]) -> int:
        found = self.owners.get(ids)
        if found is None:
            key = tuple(self.dictionary.texts(np.array(ids)))
            found = self.owners[ids] = owner(key, self.scheme.partitions)
        return found


def _predicates(plan: Plan) -> frozenset[str] | None:
    """The predicates of every GPM's triple patterns over the events (SPAseq Def. 7: a GPM
    matches an event's graph by its basic graph pattern), or ``None`` when a pattern's
    predicate is a variable or a FILTER may read the graph (``EXISTS``)."""
    from rsep.algebra.events import Gpm
    from rsep.algebra.gpm import event_part
    from rsep.lang.printer import to_sparql

    found: set[str] = set()
    for node in plan.r2r.walk():
        if not isinstance(node, Gpm):
            continue
        part = event_part(node)
        if isinstance(part, str) or any("EXISTS" in to_sparql(f).upper() for f in part[1]):
            return None
        for _, p, _ in part[0]:
            if not p.startswith("<"):
                return None
            found.add(p)
    return frozenset(found)


def _event_schema() -> pa.Schema:
    """:data:`EVENT_SCHEMA` in Arrow types."""
    return pa.schema(
        [
            ("part", pa.int32()),
            ("home", pa.bool_()),
            ("task", pa.int32()),
            ("reader", pa.int32()),
            ("ordinal", pa.int64()),
            ("stream", pa.string()),
            ("t_start", pa.int64()),
            ("t_end", pa.int64()),
            ("triples", pa.binary()),
            ("terms", pa.list_(pa.string())),
        ]
    )


# Evaluation ------------------------------------------------------------------------------


def _evaluate(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
) -> DataFrame:
    """The answers of the routed events (module docstring, 3), rows
    :data:`~rsep.spark.job.ANSWER_SCHEMA` with a count row per partition."""
    ordered = spread(frame, scheme.partitions).sortWithinPartitions(
        "part", "t_end", "task", "ordinal"
    )
    return ordered.mapInArrow(_engine_task(scheme, graphs, until), ANSWER_SCHEMA)


def _engine_task(
    scheme: Scheme, graphs: Mapping[str, frozenset[Triple]], until: int | None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each evaluation task runs: one ``SequenceQuery`` per partition met."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with marked_errors():
            for part, group in groupby(_slices(batches), key=lambda item: item[0]):
                query = SequenceQuery(scheme.plan, graphs)
                terms = ReaderTerms(query.dictionary)
                counted = [0]

                def rebuilt(
                    items: Iterator[tuple[int, pa.RecordBatch]],
                    terms: ReaderTerms = terms,
                    counted: list[int] = counted,
                ) -> Iterator[TripleBatch]:
                    for _, rows in items:
                        texts = rows.column("terms")
                        if texts.null_count < rows.num_rows:  # the readers' texts come first
                            terms.add(rows.filter(pc.is_valid(texts)))
                            rows = rows.filter(pc.is_null(texts))
                        if rows.num_rows:
                            counted[0] += pc.sum(rows.column("home").cast(pa.int64())).as_py() or 0
                            yield terms.batch(rows)

                try:
                    results = query.run(rebuilt(group), until)
                except Undecided as exc:
                    raise RuntimeError(_UNDECIDED + str(exc)) from None
                output = PartitionOutput(scheme, part)
                found: list[AnswerRow] = [
                    answer_row(r, part, seq) for seq, r in enumerate(output.take(results))
                ]
                found.append(count_row(part, counted[0], query.stats.inexact_rows))
                yield answer_batch(found)

    return run


def _slices(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The batches cut where ``part`` changes, each slice with its partition."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        parts = batch.column("part").to_numpy(zero_copy_only=False)
        cuts = np.flatnonzero(parts[1:] != parts[:-1]) + 1
        starts = [0, *cuts.tolist()]
        ends = [*cuts.tolist(), len(parts)]
        for lo, hi in zip(starts, ends, strict=True):
            yield int(parts[lo]), batch.slice(lo, hi - lo)


class ReaderTerms:
    """The ids of every reader's dictionary mapped to one query's ``dictionary``: each
    distinct text encoded once (module docstring, 2-3)."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary
        self.maps: dict[int, list[np.ndarray]] = {}
        self.sizes: dict[int, int] = {}
        self.table = np.zeros(0, np.int32)
        self.base = np.zeros(0, np.int64)

    def add(self, rows: pa.RecordBatch) -> None:
        """Rows with ``terms`` (:data:`EVENT_SCHEMA`): reader ``reader``'s ids from
        ``ordinal`` on."""
        readers = rows.column("reader").to_pylist()
        firsts = rows.column("ordinal").to_pylist()
        texts = rows.column("terms")
        for i, (reader, first) in enumerate(zip(readers, firsts, strict=True)):
            if first != self.sizes.get(reader, 0):
                raise ValueError(f"reader {reader}'s texts from id {first} came out of order")
            ids = self.dictionary.encode(texts[i].values)
            self.maps.setdefault(reader, []).append(ids)
            self.sizes[reader] = first + len(ids)
        known = sorted(self.maps)
        self.base = np.zeros(known[-1] + 1, np.int64)
        parts: list[np.ndarray] = []
        offset = 0
        for reader in known:
            self.base[reader] = offset
            parts += self.maps[reader]
            offset += self.sizes[reader]
        self.table = np.concatenate(parts).astype(np.int32)

    def batch(self, rows: pa.RecordBatch) -> TripleBatch:
        """Event rows (:data:`EVENT_SCHEMA`) as a batch in the query's ids."""
        coded = pc.dictionary_encode(rows.column("stream"))
        local, counts = _triples(rows.column("triples"))
        triple_event = np.repeat(np.arange(rows.num_rows, dtype=np.int32), counts)
        readers = rows.column("reader").to_numpy(zero_copy_only=False)
        base = self.base[readers][triple_event][:, None]
        ids = self.table[base + local].T
        return TripleBatch(
            streams=tuple(coded.dictionary.to_pylist()),
            event_stream=coded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
            event_start=rows.column("t_start").to_numpy(zero_copy_only=False).astype(np.int64),
            event_end=rows.column("t_end").to_numpy(zero_copy_only=False).astype(np.int64),
            event_ordinal=np.arange(rows.num_rows, dtype=np.int64),
            triple_event=triple_event.astype(np.int32),
            s=ids[0],
            p=ids[1],
            o=ids[2],
        )


def _triples(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The ``triples`` of event rows: their term ids [n, 3] and each row's count."""
    _, offsets, data = column.buffers()
    kind = np.int64 if pa.types.is_large_binary(column.type) else np.int32
    bounds = np.frombuffer(offsets, kind)[column.offset : column.offset + len(column) + 1]
    values = np.frombuffer(data, np.int32) if data is not None else np.zeros(0, np.int32)
    local = values[bounds[0] // 4 : bounds[-1] // 4].reshape(-1, 3)
    return local, np.diff(bounds) // 12
