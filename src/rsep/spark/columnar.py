"""Columnar replay on Spark: a SPAseq sequence of GPMs (SPAseq Defs. 7-16) evaluated by the
columnar engine (:class:`rsep.engine.sequence.SequenceQuery`) inside Spark tasks, for the
plans :func:`~rsep.engine.sequence.columnar_reason` takes.

The job (docs/architecture.md, "5. Spark"):

1. **Read.** The driver lists the inputs, without opening them: one task per stream file
   (a part file of a folder, a SPAseq description) and one per data file of a Parquet
   event store; an uncompressed N-Quads file is cut in byte ranges
   (:func:`rsep.engine.batch.split_ranges`, one per engine partition), each read by its
   own task (``read_batches(..., byte_range=...)`` gives each event of the file to
   exactly one range). Each task reads with :func:`rsep.engine.batch.read_batches`
   straight into :class:`~rsep.engine.batch.TripleBatch`es.
2. **Route.** With ``PARTITION BY`` (and a scheme that partitions,
   :func:`rsep.spark.partition.choose_scheme`), the read task finds each event's keys with
   :meth:`SequenceQuery.event_keys` (each GPM alone on the event, SPAseq choice 9) and
   sends the event to the partition owning each key (:func:`rsep.spark.partition.owner`,
   a CRC-32 of the key's texts); an event without a key goes to every partition, where it
   still breaks strict contiguity. Without ``PARTITION BY`` everything is one partition:
   a sequence relates consecutive instants of the whole streamset (Def. 12), so no event
   can be evaluated apart from the others. A batch's events of one partition leave as
   one row, a *piece* (:data:`PIECE_SCHEMA`: the events as one Arrow IPC buffer of the
   task's term ids); the texts of its ids travel once, in rows of their own sent to
   every partition ahead of the events (:class:`ReaderTerms` maps them to each
   partition's dictionary).
3. **Evaluate.** The pieces are repartitioned (a Spark task per partition) and sorted by
   their least time, task and rank; each partition's pieces are merged into time order
   (:class:`_Merge`: an event is passed on once no later piece can hold an earlier one)
   and run through one ``SequenceQuery`` of the scheme's plan (``SELECT *`` when
   partitioned) in ``mapInArrow``; its answers pass
   :class:`~rsep.spark.partition.PartitionOutput` (answers of owned keys, the user's
   projection and IStream) and leave as rows :data:`rsep.spark.job.ANSWER_SCHEMA`, with
   a count row per partition (events read, FILTER rows evaluated exactly).
4. **Merge**, in Spark (:func:`rsep.spark.job.merged`): an answer two partitions both
   give is kept once, at its earliest time (a ``groupBy`` on its key). The driver gets
   the counts, then the answers' JSON Lines texts in time order, one Spark partition at a
   time (:func:`rsep.spark.job.stream_answers`); never the events.

An input this path does not read (CSR-Bench folders, time-varying graphs) gives ``None``:
the caller runs :mod:`rsep.spark.replay` instead.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from bisect import insort
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
    _split,
    in_time_order,
    is_store,
    read_batches,
    split_ranges,
    store_files,
)
from rsep.engine.query import drive
from rsep.engine.sequence import SequenceQuery, columnar_reason
from rsep.engine.terms import TermDictionary
from rsep.errors import BadRecords, OnError, UserError
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
    "PIECE_SCHEMA",
    "ReaderTerms",
    "columnar_frame",
    "columnar_replay",
    "on_stream",
    "piece_frame",
]

PIECE_SCHEMA = (
    "part int, t_min long, task int, seq long, reader int, home long, "
    "streams array<string>, terms array<string>, events binary"
)
"""Events as rows, one per read batch and partition (a *piece*): the partition it goes to,
the least time of its events, the read task and the batch's rank in it, the Spark task
that read it (``reader``, whose dictionary its ids are in), how many of its events have
this partition as their home (each event is counted once), the read's stream names, and
its events as one Arrow IPC record batch :data:`_EVENTS` (``events``). A row with
``terms`` (and no events) holds the texts of the reader's ids ``seq``, ``seq + 1``, …,
sent to every partition at time :data:`_DICTIONARY_TIME`, so that each partition reads
the texts before any event. Few large rows: the JVM ships and sorts pieces, not events."""

_EVENTS = pa.schema(
    [
        ("stream", pa.int32()),
        ("t_start", pa.int64()),
        ("t_end", pa.int64()),
        ("ordinal", pa.int64()),
        ("triples", pa.binary()),
    ]
)
"""A piece's events: the index of its stream in the row's ``streams``, its times, its
position in its read task, and its triples' term ids (int32 ``s, p, o`` after one
another, native byte order)."""

_DICTIONARY_TIME = -(1 << 63)
_EVENTS_PER_BATCH = 65_536
_LINKS = "/dev/shm" if Path("/dev/shm").is_dir() else None
"""Where a read task makes its folder of links to a store's files (:func:`_file_batches`):
in memory where the system has such a folder, since a link per file is made and removed
in each task."""


def columnar_replay(
    spark: SparkSession,
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
    *,
    partitions: int | None = None,
    batch_events: int = _EVENTS_PER_BATCH,
    bad: BadRecords | None = None,
) -> Job | None:
    """Evaluate ``plan`` over ``inputs`` with the columnar engine in Spark tasks (module
    docstring), reading batches of ``batch_events`` events; ``None`` when the plan or an
    input needs the per-event path. Bad records of the stream files go to ``bad``
    (default: the first stops the job); skipped, each read task writes its dead letters
    to a file of its own and the driver gives them to ``bad`` in the files' order once
    the read stage is done (:func:`gather_dead_letters`)."""
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
    skip = bad is not None and bad.policy is OnError.SKIP
    dead = Path(tempfile.mkdtemp(prefix="rsep-dead-letters-")) if skip else None
    try:
        frame = piece_frame(spark, listing, scheme, static, until, batch_events, dead)
        pieces = _evaluate(frame, scheme, static, until, batch_events)
        # the answers' first row comes after the shuffle: every read task has ended
        streamed = stream_answers(merged(pieces, scheme.partitioned))
        if dead is not None and bad is not None:
            gather_dead_letters(dead, bad)
    finally:
        if dead is not None:
            shutil.rmtree(dead, ignore_errors=True)
    return Job(streamed, scheme)


def gather_dead_letters(folder: Path, bad: BadRecords) -> None:
    """The dead letters the read tasks wrote in ``folder`` (one JSON Lines file per task,
    named by its first listing task) given to ``bad`` in the tasks' order: the listing's,
    files in input order and a file's byte ranges in order, as one reader reports them."""
    for part in sorted(folder.glob("*.jsonl")):
        with part.open(encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                bad.report(entry["file"], entry["line"], entry["reason"], entry["record"])


def columnar_frame(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None = None,
    batch_events: int = _EVENTS_PER_BATCH,
) -> DataFrame:
    """The merged answers (:func:`rsep.spark.job.merged`) of ``scheme``'s plan over a
    DataFrame of triples (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`), lazily: the rows
    hashed by time over ``spark.sql.shuffle.partitions`` read tasks (the rows of one
    event in one task; a hash, not ranges, spares Spark a sampling pass over the input)
    and sorted there, each task reading its rows as the event store's reader does, then
    routed and evaluated as stream files are (module docstring, 2-4); the merge of each
    partition's pieces puts the tasks' events back in time order."""
    from pyspark.sql import functions as F

    if until is not None:
        frame = frame.where(F.col("t_end") <= until)
    slots = shuffle_partitions(frame.sparkSession)
    ordered = frame.repartition(slots, "t_end").sortWithinPartitions(
        "t_end", "t_start", "stream", "event_id"
    )
    run = _table_task(scheme, graphs, until, batch_events)
    pieces = ordered.mapInArrow(run, PIECE_SCHEMA)
    return merged(_evaluate(pieces, scheme, graphs, until, batch_events), scheme.partitioned)


def _table_task(
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
    batch_events: int,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each read task of :func:`columnar_frame` runs over its rows (sorted by
    time): the whole instants of about ``batch_events`` rows at a time written as a
    one-file event store and read back by :func:`~rsep.engine.batch.read_batches`, the
    one reader of that schema; the events routed into pieces (module docstring, 2). The
    task is its own reader, named by its Spark partition."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from rsep.spark.eventstore import write_store

        context = TaskContext.get()
        reader = context.partitionId() if context is not None else 0
        with marked_errors():
            router = _Router(scheme, graphs, until)
            seq = 0
            for rows in _instants(batches, batch_events):
                folder = Path(tempfile.mkdtemp(prefix="rsep-rows-", dir=_LINKS))
                try:
                    store = write_store(rows, folder)
                    read = read_batches(store, None, router.dictionary, batch_events=batch_events)
                    for batch in read:
                        yield from router.rows(batch, reader, seq, reader)
                        seq += 1
                finally:
                    shutil.rmtree(folder, ignore_errors=True)

    return run


def _instants(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """Rows sorted by time as tables of whole instants (every row of a time in one table,
    so every row of an event), each of at least ``rows`` rows but the last."""
    held: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        held.append(batch)
        count += batch.num_rows
        if count < rows:
            continue
        table = pa.Table.from_batches(held)
        end = table.column("t_end").to_numpy()
        cut = int(np.searchsorted(end, end[-1], side="left"))
        if cut == 0:
            continue
        yield table.slice(0, cut)
        held = table.slice(cut).to_batches()
        count = table.num_rows - cut
    if held:
        yield pa.Table.from_batches(held)


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


def piece_frame(
    spark: SparkSession,
    listing: Sequence[_Task],
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
    batch_events: int = _EVENTS_PER_BATCH,
    dead: Path | None = None,
) -> DataFrame:
    """The events of the listed files as pieces :data:`PIECE_SCHEMA`, read and routed by
    at most ``spark.sql.shuffle.partitions`` Spark tasks, each taking consecutive tasks of
    the listing (module docstring, 1-2); with ``dead``, a folder every task reaches, bad
    records are skipped into a file there per task (default: the first stops the job)."""
    slots = max(1, min(len(listing), shuffle_partitions(spark)))
    chosen = buckets(slots)
    rows = [(*task, chosen[task[0] * slots // len(listing)]) for task in listing]
    schema = (
        "task int, kind string, path string, stream string, opts string, fixed string, "
        "start long, stop long, bucket long"
    )
    tasks = spark.createDataFrame(rows, schema).repartition(slots, "bucket")
    run = _read_task(scheme, graphs, until, batch_events, None if dead is None else str(dead))
    return tasks.drop("bucket").mapInArrow(run, PIECE_SCHEMA)


def _read_task(
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
    batch_events: int,
    dead: str | None = None,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each read task runs over its listing rows (module docstring, 1-2);
    with ``dead``, its bad records skipped into ``dead/READER.jsonl`` (written anew by a
    task's every attempt, so a retried task reports each once)."""

    def run(listing: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        files: list[_Task] = []
        for rows in listing:
            files += zip(*(rows.column(n).to_pylist() for n in rows.schema.names), strict=True)
        if not files:
            return
        reader = min(f[0] for f in files)
        bad = None
        if dead is not None:
            letters = Path(dead) / f"{reader:09d}.jsonl"
            letters.unlink(missing_ok=True)
            bad = BadRecords(OnError.SKIP, letters)
        try:
            with marked_errors():
                router = _Router(scheme, graphs, until)
                unit = scheme.final.parameters.time_unit
                for group in _runs(sorted(files)):
                    task = group[0][0]
                    read = _file_batches(group, router.dictionary, unit, batch_events, bad)
                    for seq, batch in enumerate(read):
                        yield from router.rows(batch, task, seq, reader)
        finally:
            if bad is not None:
                bad.close()

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
    group: Sequence[_Task],
    dictionary: TermDictionary,
    unit: TimeUnit,
    batch_events: int,
    bad: BadRecords | None = None,
) -> Iterator[TripleBatch]:
    """The events of a run of tasks (:func:`_runs`) as batches, every event on the task's
    stream when one is given (as ``rsep run --stream IRI=FILE`` reads it), only those of
    its byte range when given; data files of a store folder naming their stream read
    together from a folder of links named as theirs, as
    :func:`~rsep.engine.batch.read_batches` reads a store; a stream file's bad records go
    to ``bad`` (default: stop at the first)."""
    _, kind, path, stream, opts, fixed, start, stop = group[0]
    options = json.loads(opts)
    if kind == "store" and fixed is not None:
        folder = Path(tempfile.mkdtemp(prefix="rsep-store-", dir=_LINKS))
        try:
            for task, _, file, _, _, named, _, _ in group:
                link = (
                    folder
                    / f"stream={quote(str(named), safe='')}"
                    / f"{task:09d}-{Path(file).name}"
                )
                link.parent.mkdir(exist_ok=True)
                link.symlink_to(file)
            batches = read_batches(folder, stream, dictionary, fmt=STORE, batch_events=batch_events)
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
        bad=None if kind == "store" else bad,
        batch_events=batch_events,
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
        self.by_id = np.zeros(0, np.int64)
        """The owner of a one-term key by its id (-1: not known yet)."""
        used = _predicates(scheme.final)
        self.predicates = (
            None if used is None else np.array([self.dictionary.intern(p) for p in used], np.int32)
        )

    def terms(self, reader: int) -> pa.RecordBatch | None:
        """The texts of the ids the dictionary gained since the last call, a row per
        partition (:data:`PIECE_SCHEMA`); ``None`` when there are none."""
        known, size = self.sent, len(self.dictionary)
        if size == known:
            return None
        self.sent = size
        texts = pa.array(self.dictionary.texts(np.arange(known, size)), pa.string())
        count = self.scheme.partitions
        offsets = pa.array(np.arange(count + 1, dtype=np.int32) * len(texts))
        columns = [
            pa.array(np.arange(count, dtype=np.int32)),
            pa.array(np.full(count, _DICTIONARY_TIME, np.int64)),
            pa.array(np.full(count, reader, np.int32)),
            pa.array(np.full(count, known, np.int64)),
            pa.array(np.full(count, reader, np.int32)),
            pa.array(np.zeros(count, np.int64)),
            pa.nulls(count, pa.list_(pa.string())),
            pa.ListArray.from_arrays(offsets, pa.concat_arrays([texts] * count)),
            pa.nulls(count, pa.binary()),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=_piece_schema())

    def rows(
        self, batch: TripleBatch, task: int, seq: int, reader: int
    ) -> Iterator[pa.RecordBatch]:
        """The rows a read batch sends (:data:`PIECE_SCHEMA`): the texts of the ids it
        added to the dictionary, then its pieces; nothing when no event goes on."""
        out = self.pieces(batch, task, seq, reader)
        if out.num_rows:
            terms = self.terms(reader)
            if terms is not None:
                yield terms
            yield out

    def pieces(self, batch: TripleBatch, task: int, seq: int, reader: int) -> pa.RecordBatch:
        """The batch's events as pieces: a row per partition they go to, holding them all
        (:data:`PIECE_SCHEMA`), with only the triples whose predicate a GPM names."""
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
        events = pa.RecordBatch.from_arrays(
            [
                pa.array(batch.event_stream, pa.int32()),
                pa.array(batch.event_start, pa.int64()),
                pa.array(batch.event_end, pa.int64()),
                pa.array(batch.event_ordinal, pa.int64()),
                self._triples(batch),
            ],
            schema=_EVENTS,
        )
        order = np.argsort(part, kind="stable")  # by partition, each in event order
        bounds = np.searchsorted(part[order], np.arange(self.scheme.partitions + 1))
        rows: list[tuple[int, int, int, pa.Buffer]] = []
        for p in range(self.scheme.partitions):
            pairs = order[bounds[p] : bounds[p + 1]]
            if len(pairs):
                taken = event[pairs]
                piece = events.take(pa.array(taken)).serialize()
                least = int(batch.event_end[taken].min())
                rows.append((p, least, int(home[pairs].sum()), piece))
        return _piece_rows(rows, task, seq, reader, batch.streams)

    def _triples(self, batch: TripleBatch) -> pa.BinaryArray:
        """Each event's triples whose predicate a GPM names (no other can be in a
        solution, Def. 7), as one binary value of int32 ids ``s, p, o``."""
        triple_event, s, p, o = batch.triple_event, batch.s, batch.p, batch.o
        if self.predicates is not None:
            used = np.isin(p, self.predicates)
            triple_event, s, p, o = triple_event[used], s[used], p[used], o[used]
        bounds = np.searchsorted(triple_event, np.arange(len(batch) + 1)).astype(np.int32)
        ids = np.ascontiguousarray(np.stack([s, p, o], axis=1), np.int32)
        offsets = pa.py_buffer((bounds * 12).astype(np.int32))
        return pa.BinaryArray.from_buffers(
            pa.binary(), len(batch), [None, offsets, pa.py_buffer(ids)]
        )

    def _parts(self, batch: TripleBatch) -> tuple[np.ndarray, np.ndarray]:
        """The (event, partition) pairs of the batch, sorted by event: the owners of each
        event's keys, every partition for an event without a key (SPAseq choice 9)."""
        n = len(batch)
        if self.query is None:
            return np.arange(n, dtype=np.int64), np.zeros(n, np.int32)
        event, keys = self.query.event_keys(batch)
        chosen = np.zeros((n, self.scheme.partitions), np.bool_)
        chosen[event, self._owners(keys)] = True
        chosen[~chosen.any(axis=1)] = True
        found, part = np.nonzero(chosen)  # row-major: by event, then partition
        return found.astype(np.int64), part.astype(np.int32)

    def _owners(self, keys: np.ndarray) -> np.ndarray:
        """The partition owning each key (a row of term ids), each distinct key's texts
        hashed once per read task; a key of one term looked up by its id."""
        if len(keys) == 0:
            return np.zeros(0, np.int64)
        if keys.shape[1] == 1:
            ids = keys[:, 0]
            top = int(ids.max()) + 1
            if top > len(self.by_id):
                grown = np.full(max(top, 2 * len(self.by_id)), -1, np.int64)
                grown[: len(self.by_id)] = self.by_id
                self.by_id = grown
            for new in np.unique(ids[self.by_id[ids] < 0]).tolist():
                self.by_id[new] = self._owner((new,))
            owners: np.ndarray = self.by_id[ids]
            return owners
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        found = np.array([self._owner(tuple(row.tolist())) for row in unique], np.int64)
        return found[inverse.reshape(-1)]

    def _owner(self, ids: tuple[int, ...]) -> int:
        found = self.owners.get(ids)
        if found is None:
            key = tuple(self.dictionary.texts(np.array(ids)))
            found = self.owners[ids] = owner(key, self.scheme.partitions)
        return found


def _predicates(plan: Plan) -> frozenset[str] | None:
    """The predicates of every GPM's triple patterns over the events (SPAseq Def. 7: a GPM
    matches an event's graph by its basic graph pattern), or ``None`` when a pattern's
    predicate is a variable, a FILTER may read the graph (``EXISTS``), or the items are
    entailed (a triple of another predicate may give one of these: ``entailment``)."""
    from rsep.algebra.events import Gpm
    from rsep.algebra.gpm import event_part
    from rsep.lang.printer import to_sparql
    from rsep.reasoning.regime import entails_items

    if entails_items(plan.parameters):
        return None
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


def _piece_rows(
    pieces: Sequence[tuple[int, int, int, pa.Buffer]],
    task: int,
    seq: int,
    reader: int,
    streams: tuple[str, ...],
) -> pa.RecordBatch:
    """Pieces ``(part, least time, home events, IPC buffer)`` of one read batch as rows
    :data:`PIECE_SCHEMA`."""
    n = len(pieces)
    sizes = np.zeros(n + 1, np.int32)
    sizes[1:] = np.cumsum([piece[3].size for piece in pieces])
    data = b"".join(piece[3].to_pybytes() for piece in pieces)
    names = pa.array(list(streams), pa.string())
    columns = [
        pa.array([piece[0] for piece in pieces], pa.int32()),
        pa.array([piece[1] for piece in pieces], pa.int64()),
        pa.array(np.full(n, task, np.int32)),
        pa.array(np.full(n, seq, np.int64)),
        pa.array(np.full(n, reader, np.int32)),
        pa.array([piece[2] for piece in pieces], pa.int64()),
        pa.ListArray.from_arrays(
            pa.array(np.arange(n + 1, dtype=np.int32) * len(names)),
            pa.concat_arrays([names] * n) if n else names.slice(0, 0),
        ),
        pa.nulls(n, pa.list_(pa.string())),
        pa.BinaryArray.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(sizes), pa.py_buffer(data)]
        ),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=_piece_schema())


def _piece_schema() -> pa.Schema:
    """:data:`PIECE_SCHEMA` in Arrow types."""
    return pa.schema(
        [
            ("part", pa.int32()),
            ("t_min", pa.int64()),
            ("task", pa.int32()),
            ("seq", pa.int64()),
            ("reader", pa.int32()),
            ("home", pa.int64()),
            ("streams", pa.list_(pa.string())),
            ("terms", pa.list_(pa.string())),
            ("events", pa.binary()),
        ]
    )


# Evaluation ------------------------------------------------------------------------------


def _evaluate(
    frame: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, frozenset[Triple]],
    until: int | None,
    batch_events: int,
) -> DataFrame:
    """The answers of the routed pieces (module docstring, 3), rows
    :data:`~rsep.spark.job.ANSWER_SCHEMA` with a count row per partition."""
    ordered = spread(frame, scheme.partitions).sortWithinPartitions("part", "t_min", "task", "seq")
    return ordered.mapInArrow(_engine_task(scheme, graphs, until, batch_events), ANSWER_SCHEMA)


def _engine_task(
    scheme: Scheme, graphs: Mapping[str, frozenset[Triple]], until: int | None, batch_events: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each evaluation task runs: one ``SequenceQuery`` per partition met."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with marked_errors():
            for part, group in groupby(_slices(batches), key=lambda item: item[0]):
                query = SequenceQuery(scheme.plan, graphs)
                merge = _Merge(ReaderTerms(query.dictionary), batch_events)
                results = drive(query, merge.batches(rows for _, rows in group), until)
                output = PartitionOutput(scheme, part)
                found: list[AnswerRow] = [
                    answer_row(r, part, seq) for seq, r in enumerate(output.take(results))
                ]
                found.append(count_row(part, merge.events, query.stats.inexact_rows))
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


class _Merge:
    """One partition's pieces merged into batches in time order, as a sequence reads the
    streamset (SPAseq Def. 12): the pieces come sorted by their least time, so an event
    earlier than the latest piece's least time can be in no piece still to come; such
    events are passed on in order of time, task and position (the order of the
    in-process engine's :func:`~rsep.engine.batch.merge_batches`)."""

    def __init__(self, terms: ReaderTerms, batch_events: int = _EVENTS_PER_BATCH) -> None:
        self.terms = terms
        self.batch_events = batch_events
        self.held: list[tuple[int, int, TripleBatch]] = []
        """Pieces read, by task and rank: their events not passed on yet."""
        self.waiting = 0
        """The events held."""
        self.events = 0
        """The events this partition is home to."""

    def batches(self, slices: Iterator[pa.RecordBatch]) -> Iterator[TripleBatch]:
        """The events of the rows :data:`PIECE_SCHEMA` (sorted by ``t_min``, ``task``,
        ``seq``) as batches in time order, each of about ``batch_events`` events."""
        for rows in slices:
            texts = rows.column("terms")
            if texts.null_count < rows.num_rows:  # the readers' texts come first
                self.terms.add(rows.filter(pc.is_valid(texts)))
                rows = rows.filter(pc.is_null(texts))
            if not rows.num_rows:
                continue
            self.events += pc.sum(rows.column("home")).as_py() or 0
            columns = ("t_min", "task", "seq", "reader", "streams")
            least, task, seq, reader, streams = (rows.column(c).to_pylist() for c in columns)
            events = rows.column("events")
            for i in range(rows.num_rows):
                if self.waiting >= self.batch_events:
                    ready = self._before(least[i])
                    if ready is not None:
                        yield ready
                piece = self.terms.piece(reader[i], tuple(streams[i]), events[i].as_buffer())
                insort(self.held, (task[i], seq[i], piece), key=lambda item: item[:2])
                self.waiting += len(piece)
        ready = self._before(None)
        if ready is not None:
            yield ready

    def _before(self, bound: int | None) -> TripleBatch | None:
        """The held events earlier than ``bound`` (all when ``None``) as one batch in
        order of time, task and position; ``None`` when there are none."""
        heads: list[TripleBatch] = []
        kept: list[tuple[int, int, TripleBatch]] = []
        for task, seq, piece in self.held:
            cut = len(piece)
            if bound is not None:
                cut = int(np.searchsorted(piece.event_end, bound, side="left"))
            head, tail = _split(piece, cut)
            if len(head):
                heads.append(head)
            if len(tail):
                kept.append((task, seq, tail))
        self.held = kept
        self.waiting = sum(len(piece) for _, _, piece in kept)
        return in_time_order(heads) if heads else None


class ReaderTerms:
    """The ids of every reader's dictionary mapped to one query's ``dictionary``: a text
    encoded once, when a piece of this partition first uses its id (the readers' texts
    reach every partition, most of them used by the events of others)."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary
        self.texts: dict[int, list[pa.Array]] = {}
        """Each reader's texts, by its ids."""
        self.maps: dict[int, np.ndarray] = {}
        """Each reader's ids in the query's dictionary, -1 where not encoded yet."""

    def add(self, rows: pa.RecordBatch) -> None:
        """Rows with ``terms`` (:data:`PIECE_SCHEMA`): reader ``reader``'s ids from
        ``seq`` on."""
        readers = rows.column("reader").to_pylist()
        firsts = rows.column("seq").to_pylist()
        column = rows.column("terms")
        for i, (reader, first) in enumerate(zip(readers, firsts, strict=True)):
            known = self.maps.get(reader, np.zeros(0, np.int32))
            if first != len(known):
                raise ValueError(f"reader {reader}'s texts from id {first} came out of order")
            texts = column[i].values
            self.texts.setdefault(reader, []).append(texts)
            self.maps[reader] = np.concatenate([known, np.full(len(texts), -1, np.int32)])

    def ids(self, reader: int, local: np.ndarray) -> np.ndarray:
        """Reader ``reader``'s ids ``local`` in the query's dictionary, the texts of those
        not met before encoded."""
        table = self.maps[reader]
        new = np.unique(local[table[local] < 0])
        if len(new):
            texts = pa.chunked_array(self.texts[reader], pa.string()).take(pa.array(new))
            table[new] = self.dictionary.encode(texts)
        found: np.ndarray = table[local]
        return found

    def piece(self, reader: int, streams: tuple[str, ...], data: pa.Buffer) -> TripleBatch:
        """A piece's events (:data:`_EVENTS`, read by ``reader``) as a batch in the
        query's ids, in time order (stable: a task's events at one time keep their
        order)."""
        events = pa.ipc.read_record_batch(data, _EVENTS)
        n = events.num_rows
        local, counts = _triples(events.column("triples"))
        ids = self.ids(reader, local).T
        end = events.column("t_end").to_numpy()
        batch = TripleBatch(
            streams=streams,
            event_stream=events.column("stream").to_numpy(),
            event_start=events.column("t_start").to_numpy(),
            event_end=end,
            event_ordinal=events.column("ordinal").to_numpy(),
            triple_event=np.repeat(np.arange(n, dtype=np.int32), counts),
            s=ids[0],
            p=ids[1],
            o=ids[2],
        )
        return batch if bool(np.all(end[1:] >= end[:-1])) else in_time_order([batch])


def _triples(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The ``triples`` of event rows: their term ids [n, 3] and each row's count."""
    _, offsets, data = column.buffers()
    kind = np.int64 if pa.types.is_large_binary(column.type) else np.int32
    bounds = np.frombuffer(offsets, kind)[column.offset : column.offset + len(column) + 1]
    values = np.frombuffer(data, np.int32) if data is not None else np.zeros(0, np.int32)
    local = values[bounds[0] // 4 : bounds[-1] // 4].reshape(-1, 3)
    return local, np.diff(bounds) // 12
