"""Kafka topics as a live source and a results sink, written with Spark's Python Data Source
API (``pyspark.sql.datasource``) over ``confluent-kafka`` (issue 6).

Spark's own Kafka connector needs jars from Maven; this one needs only the Python client.

- **Reader** (``spark.readStream.format("rsep-kafka")``): an offset is ``{partition:
  next offset}`` per topic partition, kept by Spark in the query's checkpoint, so a restart
  reads exactly the messages after the last committed batch. Each Kafka partition of a
  micro-batch is one Spark input partition, read in a task by its own consumer (assigned,
  no consumer group). Rows: ``topic, partition, offset, timestamp`` (ms), ``key, value``
  (UTF-8 text). Options: ``bootstrap`` (``host:port``), ``topic``, ``startingOffsets``
  (``earliest``, the default, or ``latest``), ``maxOffsetsPerTrigger``. A trigger's budget
  of messages is shared by the partitions in event-time order when the reader is told how
  to read a message's time (options ``messageFormat``, ``timeUnit``, ``stream``: the
  driver reads the next messages of each partition and takes the earliest first, a merge
  of the partitions), else in turn, one message a partition at a time.
- **Writing** (:func:`produce_batch`, called by :class:`rsep.spark.sink.KafkaSink` in the
  driver): each message of a micro-batch carries the batch id in a header and is produced
  by an idempotent producer (retries neither repeat nor reorder a message), so the
  messages of a batch in the topic are a prefix of it; a batch written again after a crash
  first counts them and produces only the rest: none is written twice.
- **Broker faults**: a call the broker does not answer is tried again with back-off
  (0.5 s doubling to 8 s) for up to :data:`PATIENCE` seconds, each wait reported on
  standard error, before the query fails.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlparse

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from rsep.errors import UserError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from rsep.rdf.time import TimeUnit

__all__ = [
    "MESSAGE_SCHEMA",
    "KafkaAddress",
    "KafkaDataSource",
    "create_topic",
    "partitions_of",
    "produce",
    "produce_batch",
    "read_topic",
    "register",
]

_T = TypeVar("_T")
NAME = "rsep-kafka"
MESSAGE_SCHEMA = (
    "topic string, partition int, offset long, timestamp long, key string, value string"
)
BATCH_HEADER = "rsep-batch"
_TIMEOUT = 5.0
"""Seconds one broker call may take before it is tried again (:func:`_patiently`)."""
PATIENCE = 120.0
"""Seconds a broker may stay unreachable, calls tried again with back-off, before the read
or write fails."""
_CHUNK = 10_000
"""Messages per consume call and per Arrow batch."""


@dataclass(frozen=True)
class KafkaAddress:
    """A topic on a broker, written ``kafka://host:port/topic`` (extra options after ``?``)."""

    bootstrap: str
    topic: str
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, url: str) -> KafkaAddress:
        """``kafka://host:port[,host:port…]/topic[?name=value&…]``; a clear error otherwise."""
        parsed = urlparse(url)
        topic = parsed.path.strip("/")
        if parsed.scheme != "kafka" or not parsed.netloc or not topic or "/" in topic:
            raise UserError(f"{url!r} is not a topic address: kafka://host:port/topic")
        return cls(parsed.netloc, topic, tuple(parse_qsl(parsed.query)))

    @property
    def url(self) -> str:
        """The address as written (without options)."""
        return f"kafka://{self.bootstrap}/{self.topic}"


def register(spark: SparkSession) -> None:
    """Make ``format("rsep-kafka")`` known to ``spark`` (once per session is enough)."""
    spark.dataSource.register(KafkaDataSource)


def _config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "socket.timeout.ms": 10_000, "log_level": 3, **extra}


def _consumer(bootstrap: str) -> Any:
    from confluent_kafka import Consumer

    return Consumer(
        _config(
            bootstrap,
            **{
                "group.id": "rsep",
                "enable.auto.commit": False,
                "enable.partition.eof": False,
                "fetch.wait.max.ms": 20,
            },
        )
    )


def _patiently(what: str, call: Callable[[], _T]) -> _T:
    """``call()``, tried again while the broker does not answer (a Kafka error), after 0.5
    s doubling to 8 s, each wait reported on standard error, for up to :data:`PATIENCE`
    seconds (module docstring)."""
    from confluent_kafka import KafkaException

    began, pause = time.monotonic(), 0.5
    while True:
        try:
            return call()
        except KafkaException as exc:
            waited = time.monotonic() - began
            if waited >= PATIENCE:
                raise UserError(
                    f"{what}: no answer from the broker in {waited:.0f} s: {exc}"
                ) from None
            print(
                f"rsep: {what}: the broker does not answer ({exc}); trying again in {pause:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(pause)
            pause = min(pause * 2, 8.0)


def _passing(error: Any) -> bool:
    """Whether a consumer's error is the broker being away (the client reconnects): the
    read waits for it, :data:`PATIENCE` seconds at most."""
    from confluent_kafka import KafkaError

    away = (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT)
    return bool(error.code() in away or (error.retriable() and not error.fatal()))


def _ends(consumer: Any, topic: str) -> dict[str, tuple[int, int]]:
    """Low and high offsets of each partition of ``topic`` (none if it does not exist),
    asked again while the broker is away."""
    return _patiently(f"kafka topic {topic}", lambda: _offsets(consumer, topic))


def _offsets(consumer: Any, topic: str) -> dict[str, tuple[int, int]]:
    from confluent_kafka import TopicPartition

    meta = consumer.list_topics(topic, timeout=_TIMEOUT).topics.get(topic)
    if meta is None or meta.error is not None:
        return {}
    out: dict[str, tuple[int, int]] = {}
    for part in sorted(meta.partitions):
        low, high = consumer.get_watermark_offsets(
            TopicPartition(topic, part), timeout=_TIMEOUT, cached=False
        )
        out[str(part)] = (int(low), int(high))
    return out


class _Range(InputPartition):
    """The messages ``[start, end)`` of one Kafka partition: one Spark task's input."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets, planning and reading of ``rsep-kafka`` (module docstring)."""

    def __init__(self, options: dict[str, str]) -> None:
        self.bootstrap = options["bootstrap"]
        self.topic = options["topic"]
        self.starting = options.get("startingoffsets", "earliest")
        limit = options.get("maxoffsetspertrigger")
        self.max_rows = int(limit) if limit else None
        self.message_format = options.get("messageformat")
        self.time_unit = options.get("timeunit", "MILLISECONDS")
        self.stream = options.get("stream") or None
        self.target: dict[str, int] | None = None
        self._client: Any = None
        self._times: dict[str, dict[int, int]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None  # a consumer does not travel to the tasks
        return state

    def _ends(self) -> dict[str, tuple[int, int]]:
        if self._client is None:
            self._client = _consumer(self.bootstrap)
        return _ends(self._client, self.topic)

    def initialOffset(self) -> dict[str, int]:
        ends = self._ends()
        index = 1 if self.starting == "latest" else 0
        return {part: bounds[index] for part, bounds in ends.items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self.max_rows is None else ReadMaxRows(self.max_rows)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = {part: high for part, (_, high) in self._ends().items()}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        ends = self._ends() if self.target is None else {p: (0, h) for p, h in self.target.items()}
        latest = {part: start.get(part, low) for part, (low, _) in ends.items()}
        latest.update({part: offset for part, offset in start.items() if part not in latest})
        highs = {part: max(high, latest[part]) for part, (_, high) in ends.items()}
        if not isinstance(limit, ReadMaxRows):
            return {**latest, **highs}
        room = limit.max_rows
        taken = (
            self._merged(latest, highs, room)
            if self.message_format
            else _in_turn(latest, highs, room)
        )
        for part in taken:
            latest[part] += 1
        for part, times in self._times.items():  # forget what was taken
            self._times[part] = {o: t for o, t in times.items() if o >= latest.get(part, 0)}
        return latest

    def _merged(self, start: dict[str, int], highs: dict[str, int], room: int) -> list[str]:
        """The partitions of the next ``room`` messages in event-time order (module
        docstring): a merge of the partitions by the time of their next message."""
        heap = [
            (self._time(part, start[part], high, room), int(part), start[part])
            for part, high in highs.items()
            if start[part] < high
        ]
        heapq.heapify(heap)
        taken: list[str] = []
        while heap and len(taken) < room:
            _, number, offset = heapq.heappop(heap)
            part = str(number)
            taken.append(part)
            if offset + 1 < highs[part]:
                moment = self._time(part, offset + 1, highs[part], room)
                heapq.heappush(heap, (moment, number, offset + 1))
        return taken

    def _time(self, part: str, offset: int, high: int, room: int) -> int:
        """The event time of a message (its events' latest ``t_end``; :data:`_EARLIEST` for
        one that cannot be read), the next ``room`` messages read at once."""
        known = self._times.setdefault(part, {})
        if offset not in known:
            from rsep.rdf.time import TimeUnit

            unit = TimeUnit[self.time_unit]
            fmt = str(self.message_format)
            stop = min(high, offset + room)
            for message in _messages(self._client, self.topic, int(part), offset, stop):
                value = (message.value() or b"").decode("utf-8", "replace")
                known[message.offset()] = _message_time(value, fmt, self.stream, unit)
        return known.get(offset, _EARLIEST)

    def reportLatestOffset(self) -> dict[str, int]:
        return {part: high for part, (_, high) in self._ends().items()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [
            _Range(self.topic, int(part), int(start.get(part, 0)), int(stop))
            for part, stop in sorted(end.items(), key=lambda item: int(item[0]))
            if int(stop) > int(start.get(part, 0))
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Range)
        return _read_range(self.bootstrap, partition)

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


_EARLIEST = -(2**63)


def _in_turn(start: dict[str, int], highs: dict[str, int], room: int) -> list[str]:
    """The partitions of the next ``room`` messages taken in turn, one a partition."""
    left = {part: high - start[part] for part, high in highs.items() if high > start[part]}
    taken: list[str] = []
    while left and len(taken) < room:
        for part in sorted(left, key=int):
            if len(taken) == room:
                break
            taken.append(part)
            left[part] -= 1
            if not left[part]:
                del left[part]
    return taken


def _message_time(value: str, fmt: str, stream: str | None, unit: TimeUnit) -> int:
    """The latest ``t_end`` of the events of one message (:data:`_EARLIEST`: none read)."""
    from rsep.errors import BadRecords, OnError
    from rsep.spark.source import message_events

    try:
        ends = [
            e.t_end for e in message_events(value, fmt, "", stream, unit, BadRecords(OnError.SKIP))
        ]
    except UserError:
        ends = []
    return max(ends, default=_EARLIEST)


def _read_range(bootstrap: str, span: _Range) -> Iterator[pa.RecordBatch]:
    """The messages of ``span`` as Arrow batches (a task's read)."""
    import pyarrow as pa
    from confluent_kafka import TopicPartition

    schema = pa.schema(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("timestamp", pa.int64()),
            ("key", pa.string()),
            ("value", pa.string()),
        ]
    )
    consumer = _consumer(bootstrap)
    try:
        consumer.assign([TopicPartition(span.topic, span.partition, span.start)])
        position = span.start
        waited = time.monotonic()
        while position < span.end:
            messages = consumer.consume(min(_CHUNK, span.end - position), timeout=0.1)
            rows: dict[str, list[Any]] = {name: [] for name in schema.names}
            for message in messages:
                if message.error() is not None:
                    if _passing(message.error()):
                        continue
                    raise UserError(f"kafka://{bootstrap}/{span.topic}: {message.error()}")
                offset = message.offset()
                if offset >= span.end:
                    position = span.end
                    break
                key = message.key()
                rows["topic"].append(span.topic)
                rows["partition"].append(span.partition)
                rows["offset"].append(offset)
                rows["timestamp"].append(message.timestamp()[1])
                rows["key"].append(None if key is None else key.decode("utf-8", "replace"))
                rows["value"].append((message.value() or b"").decode("utf-8", "replace"))
                position = offset + 1
            if rows["offset"]:
                waited = time.monotonic()
                yield pa.RecordBatch.from_pydict(rows, schema=schema)
            elif time.monotonic() - waited > PATIENCE:
                raise UserError(
                    f"kafka://{bootstrap}/{span.topic}: partition {span.partition} gave no "
                    f"message at offset {position} (of {span.end}) in {PATIENCE:.0f} s"
                )
    finally:
        consumer.close()


def _produce(
    bootstrap: str,
    topic: str,
    partition: int,
    items: Iterable[tuple[str, str | None]],
    headers: list[tuple[str, str | bytes | None]] | None = None,
) -> int:
    """Produce ``(value, key)`` pairs to one partition, waiting until all are acknowledged."""
    from confluent_kafka import Producer

    settings = {"linger.ms": 5, "enable.idempotence": True}
    producer = Producer(_config(bootstrap, acks="all", **settings))
    failures: list[str] = []

    def delivered(error: Any, message: Any) -> None:
        if error is not None:
            failures.append(str(error))

    count = 0
    for value, key in items:
        while True:
            try:
                producer.produce(
                    topic,
                    value=value.encode("utf-8"),
                    key=None if key is None else key.encode("utf-8"),
                    partition=partition,
                    headers=headers,
                    on_delivery=delivered,
                )
                break
            except BufferError:  # the local queue is full: let it drain
                producer.poll(0.1)
        count += 1
        if count % 1000 == 0:
            producer.poll(0)
    began = time.monotonic()
    left = producer.flush(_TIMEOUT)
    while left and not failures and time.monotonic() - began < PATIENCE:
        print(
            f"rsep: kafka://{bootstrap}/{topic}: {left} message(s) not acknowledged yet; "
            "waiting for the broker",
            file=sys.stderr,
            flush=True,
        )
        left = producer.flush(_TIMEOUT)
    if left or failures:
        reason = failures[0] if failures else f"{left} message(s) not acknowledged"
        raise UserError(f"kafka://{bootstrap}/{topic}: cannot produce: {reason}")
    return count


def produce_batch(address: KafkaAddress, partition: int, lines: list[str], batch: int) -> int:
    """Produce micro-batch ``batch``'s ``lines`` to one partition, exactly once (module
    docstring): those the topic holds already are skipped; the count produced now."""
    skipped = written_before(address.bootstrap, address.topic, partition, batch)
    headers: list[tuple[str, str | bytes | None]] = [(BATCH_HEADER, str(batch).encode())]
    pending = ((line, None) for line in lines[skipped:])
    return _produce(address.bootstrap, address.topic, partition, pending, headers)


def written_before(bootstrap: str, topic: str, partition: int, batch: int) -> int:
    """How many messages of ``batch`` the topic partition already holds.

    Batches are written one after the other, so they sit at the end: the search reads back
    from the end, doubling its reach, until it meets a message of an earlier batch."""
    from confluent_kafka import TopicPartition

    if batch < 0:
        return 0
    consumer = _consumer(bootstrap)
    try:
        low, high = _patiently(
            f"kafka topic {topic}",
            lambda: consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=_TIMEOUT, cached=False
            ),
        )
        reach = 256
        while True:
            start = max(low, high - reach)
            found, earlier = 0, False
            for message in _messages(consumer, topic, partition, start, high):
                seen = dict(message.headers() or [])
                mark = seen.get(BATCH_HEADER)
                if mark is None or int(mark) < batch:
                    earlier = True
                elif int(mark) == batch:
                    found += 1
            if earlier or start == low:
                return found
            reach *= 2
    finally:
        consumer.close()


def _messages(consumer: Any, topic: str, partition: int, start: int, end: int) -> Iterator[Any]:
    """The messages ``[start, end)`` of one partition, read by ``consumer``."""
    from confluent_kafka import TopicPartition

    if start >= end:
        return
    consumer.assign([TopicPartition(topic, partition, start)])
    position, waited = start, time.monotonic()
    while position < end:
        messages = consumer.consume(min(_CHUNK, end - position), timeout=0.1)
        for message in messages:
            if message.error() is not None:
                if _passing(message.error()):
                    continue
                raise UserError(f"kafka topic {topic}: {message.error()}")
            if message.offset() >= end:
                return
            position = message.offset() + 1
            yield message
        if messages:
            waited = time.monotonic()
        elif time.monotonic() - waited > PATIENCE:
            raise UserError(f"kafka topic {topic}: no message at offset {position} of {end}")


class KafkaDataSource(DataSource):
    """``format("rsep-kafka")``: a streaming reader (module docstring)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return MESSAGE_SCHEMA

    def _options(self) -> dict[str, str]:
        options = {str(k).lower(): str(v) for k, v in self.options.items()}
        for needed in ("bootstrap", "topic"):
            if not options.get(needed):
                raise UserError(f"format {NAME!r} needs option {needed!r}")
        return options

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(self._options())


# Helpers for the command line and tests ----------------------------------------------------


def create_topic(address: KafkaAddress, partitions: int = 1) -> None:
    """Create the topic with ``partitions`` partitions (nothing if it exists)."""
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    admin = AdminClient(_config(address.bootstrap))
    futures = admin.create_topics([NewTopic(address.topic, partitions, 1)])
    for future in futures.values():
        try:
            future.result(PATIENCE / 4)
        except Exception as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc) and "already exists" not in str(exc):
                raise UserError(f"{address.url}: cannot create the topic: {exc}") from None


def partitions_of(address: KafkaAddress) -> list[int]:
    """The partitions of the topic (none if it does not exist)."""
    consumer = _consumer(address.bootstrap)
    try:
        return [int(part) for part in _ends(consumer, address.topic)]
    finally:
        consumer.close()


def produce(address: KafkaAddress, values: Iterable[str], partition: int = 0) -> int:
    """Produce each text of ``values`` as one message to one partition; returns the count."""
    return _produce(address.bootstrap, address.topic, partition, ((v, None) for v in values))


def read_topic(address: KafkaAddress) -> list[str]:
    """Every message of the topic as text, partition by partition, in offset order."""
    consumer = _consumer(address.bootstrap)
    try:
        out: list[str] = []
        for part, (low, high) in _ends(consumer, address.topic).items():
            for message in _messages(consumer, address.topic, int(part), low, high):
                out.append((message.value() or b"").decode("utf-8"))
        return out
    finally:
        consumer.close()
