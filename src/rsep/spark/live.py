"""Live queries: a plan evaluated over arriving events by Spark Structured Streaming, the
engine's evaluators kept in Spark's state store (issue 6).

The streaming job, step by step:

1. **Sources** (:mod:`rsep.spark.source`): a folder of arriving stream files (Spark's file
   source in ``binaryFile`` form lists new files at each trigger, their paths only), a Kafka
   topic (:mod:`rsep.spark.kafka`: offsets per partition) or a TCP socket of text lines
   (:mod:`rsep.spark.socket`), each giving records ``name, value``; the checkpoint records
   what was taken (files, offsets), so a restart reads only what is new. Several sources
   are merged (a union) before the watermark.
2. **Parse, prefilter, route** (a stateless ``mapInArrow``): each record is read with
   :mod:`rsep.rdf.formats` (a file, or a message as one small document); events no GPM can
   take are dropped or left empty (:meth:`~rsep.spark.partition.Vocabulary.passes`, the
   Python form of the batch job's SQL semi join); each event goes to its partitions
   (:class:`~rsep.spark.partition.Router`), one row per event and partition with its
   triples as lists of N-Triples terms. Each Arrow batch of
   records also adds a *tick* row at its latest time, so that dropped events still move the
   watermark.
3. **Watermark**: event time is ``t_end`` (shifted by :data:`EPOCH`); Spark's watermark
   ``W`` trails the latest time seen by the plan's ``lateness`` (RSP-QL's allowed lateness).
   Measured on Spark 4.3: a micro-batch may still bring rows up to its own ``W``, and the
   next drops, as late, every row at or before ``W`` (it filters by the previous batch's
   watermark). So once a batch's rows are in, no event at or before ``W`` can come: the
   engine advances to ``W``.
4. **State**: ``applyInPandasWithState`` keyed by partition, with the RocksDB state store
   provider; the state is the pickled evaluator, its
   :class:`~rsep.spark.partition.PartitionOutput` and the rows of the events not yet
   final. The evaluator is :func:`rsep.engine.incremental_query`'s: the columnar engine
   (:class:`rsep.engine.sequence.SequenceQuery`) is pushed
   :class:`~rsep.engine.batch.TripleBatch`es whose term texts are encoded a distinct
   text at a time, the others events. At each trigger a partition takes its new rows and
   the one driver loop (:func:`rsep.engine.query.drive`, without ``finish``) pushes the
   events before the watermark in time order and advances the evaluator to it; the
   answers that became final are returned. An event-time timeout one past the watermark
   calls it again when the watermark moves.
5. **Sink** (:mod:`rsep.spark.sink`): each micro-batch's answers, in time order, to
   ``batch-<id>.jsonl`` in an output folder, appended to a JSON Lines file or standard
   output, or produced to a Kafka topic. A batch replayed after a crash has the same id,
   input and state, so it gives the same answers; each sink makes the replay harmless (the
   folder's file is rewritten, the text file cut back, the topic's copies skipped): with the
   checkpoint, no answer is lost or written twice (standard output excepted).

Answers are the oracle's (``rsep.semantics.evaluate``) at every instant before the final
watermark. With ``PARTITION BY`` the events are spread over partitions only when the SELECT
keeps the key variables (:func:`~rsep.spark.partition.choose_scheme`): two partitions then
never give the same answer, so no answer needs to be kept once across batches.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pyoxigraph import RdfFormat, parse

from rsep.algebra.plan import Plan, explain
from rsep.engine import incremental_query
from rsep.engine.batch import TripleBatch
from rsep.engine.query import drive
from rsep.engine.sequence import SequenceQuery
from rsep.engine.terms import TermDictionary
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result
from rsep.rdf.terms import parse_term
from rsep.rdf.time import TimeUnit
from rsep.spark.job import unmark
from rsep.spark.partition import PartitionOutput, Router, Scheme, Vocabulary, choose_scheme
from rsep.spark.partition import vocabulary as make_vocabulary
from rsep.spark.sink import FolderSink, Sink, read_output, sink_of
from rsep.spark.source import FolderSource, Source, source_of

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.state import GroupState

__all__ = ["EVENT_SCHEMA", "EventRows", "LiveQuery", "evaluated", "read_output", "start_live"]

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
EVENT_SCHEMA = (
    "stream string, ev string, event_id string, t_start long, t_end long, "
    "s array<string>, p array<string>, o array<string>, part long, tick boolean"
)
"""One row per event and partition (its triples as three lists of N-Triples terms);
``tick`` rows only move the watermark."""
OUTPUT_SCHEMA = "time long, part long, seq long, line string"
STATE_SCHEMA = "blob binary"
_META = "rsep-live.json"
EPOCH = 10**12
"""Event time ``t`` is Spark's timestamp ``t + EPOCH`` ms (about 32 years on): Spark's
first watermark is 0 and drops rows at or before it, so an instant 0 (or before 1970) would
be late before anything happened. Times from 1938 to 2230 fit (pandas' timestamps end in
2262)."""


# Step 2: records to event rows -----------------------------------------------------------


def _parse_task(
    scheme: Scheme,
    vocab: Vocabulary | None,
    graphs: Mapping[str, Any],
    source: Source,
    time_unit: TimeUnit,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each parse task runs over the source's new records (module docstring,
    2): a file or a message to event rows, and one tick row per Arrow batch at its latest
    time."""
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
                with marked_errors():
                    for ordinal, event in enumerate(source.events(name, value, time_unit)):
                        if stream is not None and event.stream != stream:
                            event = Event(stream, event.t_start, event.t_end, event.graph, event.id)
                        rows.add(event, f"{name}#{ordinal:09d}")
            yield rows.batch()

    return run


class EventRows:
    """Rows :data:`EVENT_SCHEMA` of the events of one Arrow batch of records (module
    docstring, 2): each event as the engine gets it (:func:`_kept`) once per partition it
    goes to, and a tick row at the latest time."""

    def __init__(self, vocab: Vocabulary | None, router: Router) -> None:
        self.vocab = vocab
        self.router = router
        self.columns: dict[str, list[Any]] = {name: [] for name in _EVENT_NAMES}
        self.latest: int | None = None

    def add(self, event: Event, ev: str) -> None:
        """The rows of ``event``, named ``ev`` (unique among the events)."""
        self.latest = event.t_end if self.latest is None else max(self.latest, event.t_end)
        kept = _kept(self.vocab, event)
        if kept is None:
            return
        triples = list(kept.graph)
        terms = [
            [str(t.subject) for t in triples],
            [str(t.predicate) for t in triples],
            [str(t.object) for t in triples],
        ]
        columns = self.columns
        for part in self.router.parts(kept):
            columns["stream"].append(kept.stream)
            columns["ev"].append(ev)
            columns["event_id"].append("" if kept.id is None else str(kept.id))
            columns["t_start"].append(kept.t_start)
            columns["t_end"].append(kept.t_end)
            for name, texts in zip(("s", "p", "o"), terms, strict=True):
                columns[name].append(texts)
            columns["part"].append(part)
            columns["tick"].append(False)

    def batch(self) -> pa.RecordBatch:
        """The rows so far and the tick row (none without events)."""
        import pyarrow as pa

        if self.latest is not None:
            tick: tuple[Any, ...] = ("", "", "", self.latest, self.latest, [], [], [], 0, True)
            for name, value in zip(_EVENT_NAMES, tick, strict=True):
                self.columns[name].append(value)
        return pa.RecordBatch.from_pydict(self.columns, schema=_event_arrow_schema())


_EVENT_NAMES = ("stream", "ev", "event_id", "t_start", "t_end", "s", "p", "o", "part", "tick")


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
            ("tick", pa.bool_()),
        ]
    )


# Step 4: the evaluator in Spark's state store ---------------------------------------------


@dataclass
class _State:
    """What a partition keeps between triggers (module docstring, 4): the evaluator, the
    partition's output, the rows of the events not yet final, the answers' rank and the
    last watermark."""

    query: Any
    output: PartitionOutput
    pending: pd.DataFrame | None = None
    seq: int = 0
    mark: int | None = None


_ORDER = ["t_end", "t_start", "stream", "ev"]
"""The order of events: time, then stream and name, as the batch job sorts them."""


def _state_function(
    scheme: Scheme, graphs: Mapping[str, Any]
) -> Callable[[Any, Iterator[pd.DataFrame], GroupState], Iterator[pd.DataFrame]]:
    """The function ``applyInPandasWithState`` calls for each partition with new rows or a
    timed-out watermark (module docstring, 4): the events now before the watermark and
    the watermark itself through :func:`rsep.engine.query.drive`."""

    def run(key: Any, frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
        import pandas as pd

        from rsep.spark.job import marked_errors

        part = int(key[0])
        with marked_errors():
            if state.exists:
                kept: _State = pickle.loads(state.get[0])
            else:
                query = incremental_query(scheme.plan, graphs)
                kept = _State(query, PartitionOutput(scheme, part))
            news = [f[~f["tick"]] for f in frames if len(f)]
            if kept.mark is not None:  # a row at or before the last watermark is late
                news = [f[f["t_end"] > kept.mark] for f in news]
            held = [f for f in [kept.pending, *news] if f is not None and len(f)]
            pending = pd.concat(held, ignore_index=True) if held else None
            mark = state.getCurrentWatermarkMs() - EPOCH
            ready: list[TripleBatch] | list[Event] = []
            if pending is not None:
                pending = pending.sort_values(_ORDER, kind="stable", ignore_index=True)
                final = pending["t_end"] <= mark
                now, kept.pending = pending[final], pending[~final]
                if len(now):
                    columnar = isinstance(kept.query, SequenceQuery)
                    ready = [_batch(now, kept.query.dictionary)] if columnar else _events(now)
            moved = kept.mark is None or mark > kept.mark
            answers = drive(kept.query, ready, watermark=mark if moved else None, finish=False)
            results = list(answers)
            if moved:
                kept.mark = mark
            rows: dict[str, list[Any]] = {"time": [], "part": [], "seq": [], "line": []}
            for result in kept.output.take(results):
                rows["time"].append(result.time)
                rows["part"].append(part)
                rows["seq"].append(kept.seq)
                rows["line"].append(
                    json.dumps(result.to_json(), ensure_ascii=False, separators=(",", ":"))
                )
                kept.seq += 1
            state.update((pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL),))
            state.setTimeoutTimestamp(mark + EPOCH + 1)  # called again once it moves
        if rows["time"]:
            yield pd.DataFrame(rows)

    return run


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
    """A started live query: Spark's streaming query, the scheme it runs under, and where
    its answers go."""

    query: StreamingQuery
    scheme: Scheme
    sink: Sink

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
        """The event-time watermark of the last trigger (ms, in the data's time): every
        answer at or before it has been written."""
        progress: Any = self.query.lastProgress or {}
        text = progress.get("eventTime", {}).get("watermark")
        if not text:
            return None
        from datetime import datetime

        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return round(stamp.timestamp() * 1000) - EPOCH


def start_live(
    spark: SparkSession,
    plan: Plan,
    source: Path | Source | Sequence[Source],
    checkpoint: Path,
    output: Path | Sink,
    graphs: Mapping[str, Any] | None = None,
    *,
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
    under one watermark). For a folder given as a path, ``stream`` names the stream of files
    that do not name theirs, ``options`` are the format's read options, ``glob`` selects
    file names and ``max_files_per_trigger`` bounds a trigger. The checkpoint folder keeps
    the offsets taken, the watermark and the evaluators' state; a second start with the same
    checkpoint continues where the first stopped (with its number of partitions). Answers go
    to ``output``: a folder (:func:`read_output`) or a sink (:mod:`rsep.spark.sink`).
    ``available_now`` processes what the sources hold and ends; else a trigger runs every
    ``interval`` (``"1 second"``; default: as soon as the previous one ends)."""

    sources = _sources(source, stream, options, glob, max_files_per_trigger)
    sink = FolderSink(output) if isinstance(output, Path) else output
    graphs = dict(graphs or {})
    incremental_query(plan, graphs)  # refuse a plan or missing graphs before Spark starts
    count = _partitions(checkpoint, plan, partitions or _default_partitions(spark))
    scheme = choose_scheme(plan, count, keys_projected=True)
    vocab = make_vocabulary(scheme.final)
    time_unit = scheme.final.parameters.time_unit
    parsed = [
        item.records(spark).mapInArrow(
            _parse_task(scheme, vocab, graphs, item, time_unit), EVENT_SCHEMA
        )
        for item in sources
    ]
    merged = parsed[0]
    for more in parsed[1:]:
        merged = merged.unionByName(more)
    answers = evaluated(merged, scheme, graphs)
    writer = sink.writer(answers, checkpoint).option("checkpointLocation", str(checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif interval is not None:
        writer = writer.trigger(processingTime=interval)
    return LiveQuery(writer.start(), scheme, sink)


def evaluated(rows: DataFrame, scheme: Scheme, graphs: Mapping[str, Any]) -> DataFrame:
    """The answers of event rows :data:`EVENT_SCHEMA` (module docstring, 3-4), rows
    :data:`OUTPUT_SCHEMA`: the watermark trailing ``t_end`` by the plan's lateness, each
    partition's evaluator in Spark's state store (the RocksDB provider, set on the
    session)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    rows.sparkSession.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    lateness = scheme.final.parameters.lateness
    timed = rows.withColumn("ts", F.timestamp_millis(F.col("t_end") + F.lit(EPOCH)))
    return (
        timed.withWatermark("ts", f"{lateness} milliseconds")
        .groupBy("part")
        .applyInPandasWithState(
            _state_function(scheme, graphs),
            OUTPUT_SCHEMA,
            STATE_SCHEMA,
            "append",
            GroupStateTimeout.EventTimeTimeout,
        )
    )


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
    ``kafka://host:port/topic`` or ``socket://host:port``, ``--output`` a topic."""
    import argparse

    from rsep.algebra.compile import compile_query
    from rsep.lang import detect_dialect, parse_query
    from rsep.spark.session import get_session

    p = argparse.ArgumentParser(prog="python -m rsep.spark.live")
    p.add_argument("query", type=Path)
    p.add_argument("--source", required=True, help="a folder, kafka://… or socket://…")
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--output", required=True, help="a folder or kafka://host:port/topic")
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
    if args.source.startswith(("kafka:", "socket:")):
        live = start_live(
            spark,
            plan,
            source_of(args.source, args.stream),
            args.checkpoint,
            sink_of(args.output) if args.output.startswith("kafka:") else Path(args.output),
            partitions=args.partitions,
            available_now=args.available_now,
            interval=args.interval,
        )
    else:
        live = start_live(
            spark,
            plan,
            Path(args.source),
            args.checkpoint,
            sink_of(args.output) if args.output.startswith("kafka:") else Path(args.output),
            stream=args.stream,
            glob=args.glob,
            partitions=args.partitions,
            max_files_per_trigger=args.max_files_per_trigger,
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
