"""Live queries: a plan evaluated over arriving events by Spark Structured Streaming, the
engine's evaluators kept in Spark's state store (issue 6; event time and late data, issue
17; docs/live.md).

The streaming job, step by step:

1. **Sources** (:mod:`rsep.spark.source`): a folder of arriving stream files (Spark's file
   source in ``binaryFile`` form lists new files at each trigger, their paths only), a Kafka
   topic (:mod:`rsep.spark.kafka`: offsets per partition) or a TCP socket of text lines
   (:mod:`rsep.spark.socket`), each giving records ``name, value``; the checkpoint records
   what was taken (files, offsets), so a restart reads only what is new. Several sources
   are merged (a union). Each record belongs to a *channel*: its folder, its Kafka
   partition or its socket.
2. **Parse, prefilter, route** (a stateless ``mapInArrow``): each record is read with
   :mod:`rsep.rdf.formats` (a file, or a message as one small document); events no GPM can
   take are dropped or left empty (:meth:`~rsep.spark.partition.Vocabulary.passes`, the
   Python form of the batch job's SQL semi join); each event goes to its partitions
   (:class:`~rsep.spark.partition.Router`), one row per event and partition with its
   triples as lists of N-Triples terms. Each Arrow batch of records also gives, for every
   channel in it, a *tick* row to every partition at the channel's latest time, so that
   dropped events still move the watermark. A record that cannot be read stops the query
   (``errors=stop``) or becomes a *bad* row, a dead letter naming its source, position
   and reason (``errors=skip``).
3. **Watermark** (event time, kept in each partition's state from the ticks, which every
   partition sees): each channel's watermark is its latest ``t_end`` less the plan's
   ``lateness`` (RSP-QL's allowed lateness); the query's watermark ``W`` is the least over
   the channels, leaving out a channel idle (no record) for longer than the idle timeout,
   when one is given. The channels known at the start (each folder and socket, each
   partition of a topic) count from the start: one that has brought nothing yet holds ``W``
   back, so a source slower to start loses nothing. An event at ``W`` or after is on time;
   one before it is *late*: kept out of the evaluation and given back as a late row. ``W``
   moves after each micro-batch has been taken in, never back, and the instants before it
   are final: the instant ``W`` itself stays open (events at one instant may arrive in
   several micro-batches). Spark's own watermark is not used: it has one value for all
   channels and counts an event at its instant as late. The processing time that decides
   idleness is the micro-batch's (Spark keeps it when it runs a batch again), so a replayed
   batch decides the same.
4. **State**: ``applyInPandasWithState`` keyed by partition, with the RocksDB state store
   provider; the state is the pickled evaluator, its
   :class:`~rsep.spark.partition.PartitionOutput`, the channels' latest times and the rows
   of the events not yet final. The evaluator is :func:`rsep.engine.incremental_query`'s:
   an evaluator that takes batches of ids (SPAseq's columnar engine, RSP-QL's and RSEP-QL's
   window evaluators) is pushed :class:`~rsep.engine.batch.TripleBatch`es whose term texts
   are encoded a distinct text at a time, the others events. At each trigger a partition
   takes its new rows and the one driver loop (:func:`rsep.engine.query.drive`, without
   ``finish``) pushes the events before ``W`` in time order and advances the evaluator to
   ``W - 1``; the answers that
   became final are returned, with the late and bad rows and a *mark* row (the last final
   instant).
5. **Sinks** (:mod:`rsep.spark.sink`): each micro-batch's rows are collected to the driver
   and written, in time order, answers to the answer sink, late rows to the late-data sink
   and bad rows to the dead-letter sink, when given; all are counted (:class:`Tally`). A
   batch replayed after a crash has the same id, input and state, so it gives the same
   rows, and the folder, file and Kafka sinks make the replay harmless (exactly once);
   standard output is at least once.

Answers are the oracle's (``rsep.semantics.evaluate``) over the events on time, at every
instant before the final watermark. With ``PARTITION BY`` the events are spread over
partitions only when the SELECT keeps the key variables
(:func:`~rsep.spark.partition.choose_scheme`): two partitions then never give the same
answer, so no answer needs to be kept once across batches.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pyoxigraph import RdfFormat, parse

from rsep.algebra.plan import Plan, explain
from rsep.engine import incremental_query
from rsep.engine.batch import TripleBatch
from rsep.engine.kernels import warm
from rsep.engine.query import drive
from rsep.engine.terms import TermDictionary
from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result, json_line
from rsep.rdf.terms import parse_term
from rsep.rdf.time import TimeUnit
from rsep.spark.job import unmark
from rsep.spark.partition import PartitionOutput, Router, Scheme, Vocabulary, choose_scheme
from rsep.spark.partition import vocabulary as make_vocabulary
from rsep.spark.sink import ANSWER, BAD, LATE, MARK, FolderSink, Outlets, Sink, Tally, read_output
from rsep.spark.source import FolderSource, Source, source_of

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.state import GroupState

__all__ = [
    "EVENT_SCHEMA",
    "EventRows",
    "LiveQuery",
    "evaluated",
    "outcomes",
    "read_output",
    "start_live",
]

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
EVENT_SCHEMA = (
    "stream string, ev string, event_id string, t_start long, t_end long, "
    "s array<string>, p array<string>, o array<string>, part long, kind string, "
    "channel string, first boolean, note string"
)
"""One row per event and partition (its triples as three lists of N-Triples terms), of
``kind`` ``event``, ``tick`` (moves the watermark of its ``channel``) or ``bad`` (a dead
letter, its JSON in ``note``); ``first`` marks the copy of an event that reports it late."""
OUTPUT_SCHEMA = "time long, part long, seq long, line string"
OUTCOME_SCHEMA = OUTPUT_SCHEMA + ", kind string"
"""The state function's rows: ``kind`` ``answer`` (a JSON Lines result), ``late`` (a late
event, JSON), ``bad`` (a dead letter, JSON) or ``mark`` (``time`` the last final instant)."""
STATE_SCHEMA = "blob binary"
_META = "rsep-live.json"
EVENT, TICK = "event", "tick"


# Step 2: records to event rows -----------------------------------------------------------


class _Letters(BadRecords):
    """The bad records of one record under its source's policy, kept to become bad rows
    (module docstring, 2); under ``stop`` the first raises."""

    def __init__(self, source: Source, name: str) -> None:
        super().__init__(source.on_error)
        self.source, self.name = source, name
        self.letters: list[str] = []

    def report(self, file: str | Path, line: int | None, reason: str, record: str = "") -> None:
        if self.policy is self.policy.STOP:
            raise InputError(self.source.position(self.name, line), None, reason)
        self.count += 1
        entry = {
            "source": self.source.url,
            "position": self.source.position(self.name, line),
            "reason": reason,
            "record": record,
        }
        self.letters.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))


def _parse_task(
    scheme: Scheme,
    vocab: Vocabulary | None,
    graphs: Mapping[str, Any],
    source: Source,
    time_unit: TimeUnit,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each parse task runs over the source's new records (module docstring,
    2): a file or a message to event rows, bad rows for what cannot be read, and tick rows
    per channel."""
    router = Router(scheme, graphs)
    stream = source.stream

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from rsep.spark.job import marked_errors

        for batch in batches:
            rows = EventRows(vocab, router)
            records = zip(
                batch.column("name").to_pylist(), batch.column("value").to_pylist(), strict=True
            )
            for name, value in records:
                channel = source.channel(name)
                letters = _Letters(source, name)
                with marked_errors():
                    events = source.events(name, value, time_unit, letters)
                    for ordinal, event in enumerate(events):
                        if stream is not None and event.stream != stream:
                            event = Event(stream, event.t_start, event.t_end, event.graph, event.id)
                        rows.add(event, f"{name}#{ordinal:09d}", channel)
                for letter in letters.letters:
                    rows.bad(letter)
            yield rows.batch()

    return run


class EventRows:
    """Rows :data:`EVENT_SCHEMA` of the events of one Arrow batch of records (module
    docstring, 2): each event as the engine gets it (:func:`_kept`) once per partition it
    goes to, the bad rows, and a tick row per channel and partition at the channel's
    latest time."""

    def __init__(self, vocab: Vocabulary | None, router: Router) -> None:
        self.vocab = vocab
        self.router = router
        self.columns: dict[str, list[Any]] = {name: [] for name in _EVENT_NAMES}
        self.latest: dict[str, int] = {}

    def add(self, event: Event, ev: str, channel: str = "") -> None:
        """The rows of ``event``, named ``ev`` (unique among the events), of ``channel``."""
        known = self.latest.get(channel)
        self.latest[channel] = event.t_end if known is None else max(known, event.t_end)
        kept = _kept(self.vocab, event)
        if kept is None:
            return
        triples = list(kept.graph)
        terms = [
            [str(t.subject) for t in triples],
            [str(t.predicate) for t in triples],
            [str(t.object) for t in triples],
        ]
        event_id = "" if kept.id is None else str(kept.id)
        for index, part in enumerate(self.router.parts(kept)):
            self._row(
                (kept.stream, ev, event_id, kept.t_start, kept.t_end, *terms, part, EVENT,
                 channel, index == 0, "")
            )  # fmt: skip

    def bad(self, letter: str) -> None:
        """A bad row (partition 0) carrying the dead letter ``letter`` (JSON)."""
        self._row(("", "", "", 0, 0, [], [], [], 0, BAD, "", True, letter))

    def _row(self, values: tuple[Any, ...]) -> None:
        for name, value in zip(_EVENT_NAMES, values, strict=True):
            self.columns[name].append(value)

    def batch(self) -> pa.RecordBatch:
        """The rows so far and the tick rows."""
        import pyarrow as pa

        scheme = self.router.scheme
        parts = range(scheme.partitions) if scheme.partitioned else range(1)
        for channel, latest in sorted(self.latest.items()):
            for part in parts:
                self._row(("", "", "", latest, latest, [], [], [], part, TICK, channel, False, ""))
        return pa.RecordBatch.from_pydict(self.columns, schema=_event_arrow_schema())


_EVENT_NAMES = (
    "stream", "ev", "event_id", "t_start", "t_end", "s", "p", "o", "part", "kind", "channel",
    "first", "note",
)  # fmt: skip


def _kept(vocab: Vocabulary | None, event: Event) -> Event | None:
    """The event as the engine gets it: itself, empty (a marker), or ``None`` (dropped)."""
    if vocab is None:
        return event
    if vocab.streams is not None and event.stream not in vocab.streams:
        return None
    if vocab.passes(event):
        return event
    if vocab.markers:
        return Event(event.stream, event.t_start, event.t_end, frozenset(), event.id)
    return None


def _event_arrow_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("stream", pa.string()),
            ("ev", pa.string()),
            ("event_id", pa.string()),
            ("t_start", pa.int64()),
            ("t_end", pa.int64()),
            ("s", pa.list_(pa.string())),
            ("p", pa.list_(pa.string())),
            ("o", pa.list_(pa.string())),
            ("part", pa.int64()),
            ("kind", pa.string()),
            ("channel", pa.string()),
            ("first", pa.bool_()),
            ("note", pa.string()),
        ]
    )


# Steps 3-4: the watermark and the evaluator in Spark's state store -----------------------


@dataclass
class _State:
    """What a partition keeps between triggers (module docstring, 3-4): the evaluator, the
    partition's output, the rows of the events not yet final, the answers' rank, the
    channels' latest times and the processing time of their last record, the watermark
    ``W`` and the last instant the evaluator was advanced to."""

    query: Any
    output: PartitionOutput
    pending: pd.DataFrame | None = None
    seq: int = 0
    mark: int | None = None
    watermark: int | None = None
    channels: dict[str, tuple[int, int]] = field(default_factory=dict)
    born: int | None = None
    """The processing time of the first micro-batch: when the known channels began."""

    def move(self, now: int, lateness: int, idle: float | None, known: Sequence[str]) -> None:
        """``W`` after the ticks of a micro-batch taken at processing time ``now`` (ms):
        the least channel watermark over the channels not idle, a ``known`` channel with
        no record yet holding it back (module docstring, 3)."""
        born = now if self.born is None else self.born
        self.born = born
        quiet = [(_EARLIEST, born) for channel in known if channel not in self.channels]
        active = [
            latest
            for latest, seen in [*self.channels.values(), *quiet]
            if idle is None or now - seen <= idle * 1000
        ]
        if not active or min(active) == _EARLIEST:
            return
        candidate = min(active) - lateness
        if self.watermark is None or candidate > self.watermark:
            self.watermark = candidate


_EARLIEST = -(2**63)
"""The latest time of a channel that has brought nothing."""

_ORDER = ["t_end", "t_start", "stream", "ev"]
"""The order of events: time, then stream and name, as the batch job sorts them."""


def _state_function(
    scheme: Scheme, graphs: Mapping[str, Any], idle: float | None, known: Sequence[str]
) -> Callable[[Any, Iterator[pd.DataFrame], GroupState], Iterator[pd.DataFrame]]:
    """The function ``applyInPandasWithState`` calls for each partition with new rows
    (module docstring, 3-4): late events set apart, the watermark moved by the ticks, the
    events now before it and the watermark itself through :func:`rsep.engine.query.drive`."""
    lateness = scheme.final.parameters.lateness

    def run(key: Any, frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
        import pandas as pd

        from rsep.spark.job import marked_errors

        part = int(key[0])
        out: dict[str, list[Any]] = {name: [] for name in ("time", "part", "seq", "line", "kind")}

        def emit(time: int, line: str | None, kind: str) -> None:
            for name, value in zip(out, (time, part, kept.seq, line, kind), strict=True):
                out[name].append(value)
            kept.seq += 1

        with marked_errors():
            if state.exists:
                kept: _State = pickle.loads(state.get[0])
            else:
                kept = _State(incremental_query(scheme.plan, graphs), PartitionOutput(scheme, part))
            found = [f for f in frames if len(f)]
            rows = pd.concat(found, ignore_index=True) if found else None
            news = None
            if rows is not None:
                for letter in rows.loc[rows["kind"] == BAD, "note"]:
                    emit(0, letter, BAD)
                news = rows[rows["kind"] == EVENT]
                if kept.watermark is not None:
                    late = news["t_end"] < kept.watermark
                    for row in news[late & news["first"]].itertuples(index=False):
                        emit(int(row.t_end), _late_line(row, kept.watermark), LATE)
                    news = news[~late]
                ticks = rows[rows["kind"] == TICK]
                now = state.getCurrentProcessingTimeMs()
                for channel, latest in ticks.groupby("channel")["t_end"].max().items():
                    seen = kept.channels.get(str(channel))
                    top = int(latest) if seen is None else max(seen[0], int(latest))
                    kept.channels[str(channel)] = (top, now)
                kept.move(now, lateness, idle, known)
            held = [f for f in (kept.pending, news) if f is not None and len(f)]
            pending = pd.concat(held, ignore_index=True) if held else None
            ready: list[TripleBatch] | list[Event] = []
            mark = None if kept.watermark is None else kept.watermark - 1
            if pending is not None and mark is not None:
                pending = pending.sort_values(_ORDER, kind="stable", ignore_index=True)
                final = pending["t_end"] <= mark
                now_final, pending = pending[final], pending[~final]
                if len(now_final):
                    if kept.query.dictionary is not None:  # it takes batches of ids
                        ready = [_batch(now_final, kept.query.dictionary)]
                    else:
                        ready = _events(now_final)
            kept.pending = pending
            moved = mark is not None and (kept.mark is None or mark > kept.mark)
            results = list(
                drive(kept.query, ready, watermark=mark if moved else None, finish=False)
            )
            if moved:
                kept.mark = mark
            for result in kept.output.take(results):
                line = json_line(result.to_json())
                emit(result.time, line, ANSWER)
            if kept.mark is not None:
                emit(kept.mark, None, MARK)
            state.update((pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL),))
        if out["time"]:
            yield pd.DataFrame(out)

    return run


def _late_line(row: Any, watermark: int) -> str:
    """A late event as the late-data sink gets it (JSON): where it came from, its stream,
    times and triples (N-Triples), and the watermark it missed."""
    entry = {
        "source": row.channel,
        "stream": row.stream,
        "t_start": int(row.t_start),
        "t_end": int(row.t_end),
        "event_id": row.event_id or None,
        "watermark": watermark,
        "triples": [f"{s} {p} {o} ." for s, p, o in zip(row.s, row.p, row.o, strict=True)],
    }
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def _batch(frame: pd.DataFrame, dictionary: TermDictionary) -> TripleBatch:
    """Event rows (ticks left out, in time order) as a batch in ``dictionary``'s ids: each
    distinct term text encoded once, no Python object per event."""
    import pyarrow as pa
    import pyarrow.compute as pc

    counts = frame["s"].map(len).to_numpy(np.int64)
    ids = [
        dictionary.encode(pa.array(np.concatenate([*frame[name].to_numpy(), np.array([], str)])))
        for name in ("s", "p", "o")
    ]
    coded = pc.dictionary_encode(pa.array(frame["stream"].to_numpy(), pa.string()))
    return TripleBatch(
        streams=tuple(coded.dictionary.to_pylist()),
        event_stream=coded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
        event_start=frame["t_start"].to_numpy(np.int64),
        event_end=frame["t_end"].to_numpy(np.int64),
        event_ordinal=np.arange(len(frame), dtype=np.int64),
        triple_event=np.repeat(np.arange(len(frame), dtype=np.int32), counts),
        s=ids[0],
        p=ids[1],
        o=ids[2],
    )


def _events(frame: pd.DataFrame) -> list[Event]:
    """Event rows (ticks left out, in time order) as events: their triples parsed by
    pyoxigraph many at a time, so the terms are exactly the N-Triples the rows hold."""
    lines = [
        f"{s} {p} {o} ."
        for ss, ps, os_ in zip(frame["s"], frame["p"], frame["o"], strict=True)
        for s, p, o in zip(ss, ps, os_, strict=True)
    ]
    data = "\n".join(lines).encode()
    triples = [q.triple for q in parse(input=data, format=RdfFormat.N_TRIPLES)] if data else []
    out: list[Event] = []
    position = 0
    for stream, event_id, t_start, t_end, ss in zip(
        frame["stream"],
        frame["event_id"],
        frame["t_start"],
        frame["t_end"],
        frame["s"],
        strict=True,
    ):
        graph = frozenset(triples[position : position + len(ss)])
        position += len(ss)
        ident = parse_term(event_id) if event_id else None
        out.append(Event(stream, int(t_start), int(t_end), graph, ident))  # type: ignore[arg-type]
    return out


# The query -------------------------------------------------------------------------------


@dataclass
class LiveQuery:
    """A started live query: Spark's streaming query, the scheme it runs under, where its
    answers, late events and dead letters go, and their counts."""

    query: StreamingQuery
    scheme: Scheme
    outlets: Outlets

    @property
    def sink(self) -> Sink:
        """The sink of the answers."""
        return self.outlets.answers

    @property
    def tally(self) -> Tally:
        """Answers, late events and dead letters written by this process, and the mark."""
        return self.outlets.tally

    @property
    def output(self) -> Path | None:
        """The output folder, when answers go to one (:class:`~rsep.spark.sink.FolderSink`)."""
        return self.sink.folder if isinstance(self.sink, FolderSink) else None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the query ends (``availableNow``) or ``timeout`` seconds pass; a task's
        input or engine error comes back as the user's error."""
        try:
            if timeout is None:
                self.query.awaitTermination()
                return True
            return bool(self.query.awaitTermination(max(1, round(timeout))))
        except Exception as exc:
            marked = unmark(str(exc))
            if marked is not None:
                raise marked from None
            raise

    def stop(self) -> None:
        """Stop the query (its checkpoint stays; start again to continue)."""
        self.query.stop()

    def results(self) -> list[Result]:
        """Every answer written so far."""
        return self.sink.results()

    @property
    def watermark(self) -> int | None:
        """The last final instant (module docstring, 3): every answer at or before it has
        been written, and an event after it is still on time (``None``: none yet in this
        process)."""
        return self.tally.mark


def start_live(
    spark: SparkSession,
    plan: Plan,
    source: Path | Source | Sequence[Source],
    checkpoint: Path,
    output: Path | Sink,
    graphs: Mapping[str, Any] | None = None,
    *,
    late: Sink | None = None,
    dead_letters: Sink | None = None,
    idle: float | None = None,
    stream: str | None = None,
    options: Mapping[str, Any] | None = None,
    glob: str | None = None,
    partitions: int | None = None,
    max_files_per_trigger: int | None = None,
    available_now: bool = False,
    interval: str | None = None,
) -> LiveQuery:
    """Start ``plan`` over the events of ``source`` (module docstring).

    ``source`` is a folder of arriving stream files, or one or more sources
    (:mod:`rsep.spark.source`: folders, Kafka topics, sockets; their events are merged
    under one watermark, the least of their channels'). For a folder given as a path,
    ``stream`` names the stream of files that do not name theirs, ``options`` are the
    format's read options, ``glob`` selects file names and ``max_files_per_trigger`` bounds
    a trigger. ``idle`` (seconds) leaves a channel with no record for that long out of the
    watermark (default: never). The checkpoint folder keeps the offsets taken and the
    evaluators' state, watermark included; a second start with the same checkpoint
    continues where the first stopped (with its number of partitions). Answers go to
    ``output``: a folder (:func:`read_output`) or a sink (:mod:`rsep.spark.sink`); late
    events to ``late`` and dead letters to ``dead_letters`` when given (counted always).
    ``available_now`` processes what the sources hold and ends; else a trigger runs every
    ``interval`` (``"1 second"``; default: as soon as the previous one ends)."""

    sources = _sources(source, stream, options, glob, max_files_per_trigger)
    if idle is not None and idle <= 0:
        raise UserError(f"the idle timeout is a number of seconds above 0, not {idle}")
    sink = FolderSink(output) if isinstance(output, Path) else output
    graphs = dict(graphs or {})
    incremental_query(plan, graphs)  # refuse a plan or missing graphs before Spark starts
    warm()  # into numba's on-disk cache, which the tasks' workers load from
    count = _partitions(checkpoint, plan, partitions or _default_partitions(spark))
    scheme = choose_scheme(plan, count, keys_projected=True)
    vocab = make_vocabulary(scheme.final)
    time_unit = scheme.final.parameters.time_unit
    parsed = [
        item.records(spark, time_unit).mapInArrow(
            _parse_task(scheme, vocab, graphs, item, time_unit), EVENT_SCHEMA
        )
        for item in sources
    ]
    merged = parsed[0]
    for more in parsed[1:]:
        merged = merged.unionByName(more)
    outlets = Outlets(sink, late, dead_letters)
    known = [channel for item in sources for channel in item.channels()]
    rows = outcomes(merged, scheme, graphs, idle, known)
    writer = outlets.writer(rows, checkpoint).option("checkpointLocation", str(checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif interval is not None:
        writer = writer.trigger(processingTime=interval)
    return LiveQuery(writer.start(), scheme, outlets)


def outcomes(
    rows: DataFrame,
    scheme: Scheme,
    graphs: Mapping[str, Any],
    idle: float | None = None,
    known: Sequence[str] = (),
) -> DataFrame:
    """What event rows :data:`EVENT_SCHEMA` give (module docstring, 3-4), rows
    :data:`OUTCOME_SCHEMA`: answers, late events, dead letters and marks, each partition's
    watermark (over the channels seen and the ``known`` ones, ``idle`` the idle timeout in
    seconds) and evaluator in Spark's state store (the RocksDB provider, set on the
    session)."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    rows.sparkSession.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    return rows.groupBy("part").applyInPandasWithState(
        _state_function(scheme, graphs, idle, list(known)),
        OUTCOME_SCHEMA,
        STATE_SCHEMA,
        "append",
        GroupStateTimeout.NoTimeout,
    )


def evaluated(rows: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame:
    """The answers of event rows :data:`EVENT_SCHEMA`, rows :data:`OUTPUT_SCHEMA`
    (:func:`outcomes`' answers; a user's streaming DataFrame, :mod:`rsep.spark.frame`)."""
    from pyspark.sql import functions as F

    answers = outcomes(rows, scheme, graphs).where(F.col("kind") == ANSWER)
    return answers.select("time", "part", "seq", "line")


def _sources(
    source: Path | Source | Sequence[Source],
    stream: str | None,
    options: Mapping[str, Any] | None,
    glob: str | None,
    max_files_per_trigger: int | None,
) -> list[Source]:
    """The sources of :func:`start_live`'s ``source`` (a path: one folder)."""
    if isinstance(source, Path):
        return [FolderSource(source, stream, glob, max_files_per_trigger, dict(options or {}))]
    if any(v is not None for v in (stream, options, glob, max_files_per_trigger)):
        raise UserError("stream, options, glob and max_files_per_trigger are for a folder path")
    found = [source] if isinstance(source, Source) else list(source)
    if not found:
        raise UserError("a live query needs at least one source")
    return found


def _default_partitions(spark: SparkSession) -> int:
    return int(spark.conf.get("spark.sql.shuffle.partitions") or "2")


def _partitions(checkpoint: Path, plan: Plan, wanted: int) -> int:
    """The number of partitions of the query the checkpoint belongs to (recorded at the
    first start, since keys are routed by it); refuses a checkpoint of another plan."""
    fingerprint = hashlib.sha256(explain(plan).encode()).hexdigest()
    meta = checkpoint / _META
    if meta.exists():
        known = json.loads(meta.read_text(encoding="utf-8"))
        if known["plan"] != fingerprint:
            raise UserError(f"{checkpoint} is the checkpoint of another query")
        return int(known["partitions"])
    checkpoint.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"plan": fingerprint, "partitions": wanted}), encoding="utf-8")
    return wanted


def main(argv: list[str] | None = None) -> int:
    """``python -m rsep.spark.live QUERY --source DIR --checkpoint DIR --output DIR``: run a
    live query until it ends (``--available-now``) or is stopped (crash-recovery runs use
    it; ``rsep run`` is the command for users). ``--source`` may also be
    ``kafka://host:port/topic`` or ``socket://host:port``; ``--output`` a folder, a file
    (``.jsonl``) or a topic."""
    import argparse

    from rsep.algebra.compile import compile_query
    from rsep.lang import detect_dialect, parse_query
    from rsep.spark.session import get_session
    from rsep.spark.sink import sink_of

    p = argparse.ArgumentParser(prog="python -m rsep.spark.live")
    p.add_argument("query", type=Path)
    p.add_argument("--source", required=True, help="a folder, kafka://… or socket://…")
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--output", required=True, help="a folder, a .jsonl file or kafka://…")
    p.add_argument("--stream", help="stream IRI of files that do not name theirs")
    p.add_argument("--glob", help="file names to take (a glob)")
    p.add_argument("--partitions", type=int)
    p.add_argument("--max-files-per-trigger", type=int)
    p.add_argument("--interval", help='trigger interval, e.g. "1 second"')
    p.add_argument("--available-now", action="store_true")
    p.add_argument("--master")
    args = p.parse_args(argv)
    text = args.query.read_text(encoding="utf-8")
    dialect = detect_dialect(text)
    plan = compile_query(parse_query(text, dialect), dialect)
    spark = get_session(args.master, app_name="rsep-live")
    is_folder = not args.output.startswith("kafka:") and not args.output.endswith(".jsonl")
    output = Path(args.output) if is_folder else sink_of(args.output)
    live_source = args.source.startswith(("kafka:", "socket:"))
    live = start_live(
        spark,
        plan,
        source_of(args.source, args.stream) if live_source else Path(args.source),
        args.checkpoint,
        output,
        stream=None if live_source else args.stream,
        glob=None if live_source else args.glob,
        partitions=args.partitions,
        max_files_per_trigger=None if live_source else args.max_files_per_trigger,
        available_now=args.available_now,
        interval=args.interval,
    )
    live.wait()
    return 0


if __name__ == "__main__":
    # Run the module under its own name: Spark's workers unpickle the state function's
    # classes by module, and they cannot import ``__main__._State``.
    from rsep.spark.live import main as _main

    raise SystemExit(_main())
