"""Where a live query's events come from: a folder of arriving stream files, a Kafka topic,
or text lines over a TCP socket (issue 6).

A source gives Spark a streaming DataFrame of *records* (``name``, ``value``): a file's
path (its content read in the task), or a message's text. Its :meth:`Source.events` turns
one record into events, in a task: a file by :func:`rsep.rdf.formats.read_events`, a message
as one small document of a stream format (N-Quads, TriG, JSON-LD or timestamped N-Triples).
The record's name, which sorts in arrival order within the source, names its events (ties
at one instant are broken by it) and the errors found in it. A record belongs to a
*channel* (:meth:`Source.channel`: the folder, the Kafka partition, the socket), the unit
that has a watermark of its own (:mod:`rsep.spark.live`, 3). A record that cannot be read
stops the query or, with ``errors=skip``, becomes a dead letter naming the source and the
position (:meth:`Source.position`: ``file:line``, ``topic:partition:offset``).

Written on the command line as an address (:func:`source_of`): a folder path,
``kafka://host:port/topic`` or ``socket://host:port``; options follow ``?``, e.g.
``kafka://localhost:9092/events?format=jsonld&starting=latest&max=10000``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from rsep.errors import BadRecords, OnError, UserError
from rsep.rdf.event import Event
from rsep.rdf.time import TimeUnit
from rsep.spark.kafka import KafkaAddress
from rsep.spark.socket import SocketAddress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "MESSAGE_FORMATS",
    "FolderSource",
    "KafkaSource",
    "SocketSource",
    "Source",
    "message_events",
    "source_of",
]

FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"
MESSAGE_FORMATS = ("nquads", "trig", "jsonld", "tnt")
"""Formats of one message: each message (a Kafka value, a socket line) is one document."""


def message_events(
    data: str,
    fmt: str,
    name: str,
    stream: str | None,
    time_unit: TimeUnit,
    bad: BadRecords | None = None,
) -> Iterator[Event]:
    """The events of one message ``data`` in format ``fmt``, errors naming ``name`` and the
    line in the message (docs/formats.md; one message is read as one file would be)."""
    from pyoxigraph import RdfFormat

    from rsep.rdf.formats._common import ReadOptions
    from rsep.rdf.formats.jsonld import read_jsonld
    from rsep.rdf.formats.quads import read_quads
    from rsep.rdf.formats.timestamped import read_timestamped

    file, raw = Path(name), data.encode("utf-8")
    opts = ReadOptions(stream, time_unit)
    bad = bad if bad is not None else BadRecords()
    if fmt == "nquads":
        return read_quads(file, raw, RdfFormat.N_QUADS, opts, bad)
    if fmt == "trig":
        return read_quads(file, raw, RdfFormat.TRIG, opts, bad)
    if fmt == "jsonld":
        return read_jsonld(file, raw, opts, bad)
    if fmt == "tnt":
        return read_timestamped(file, raw, opts, bad)
    raise UserError(f"unknown message format {fmt!r} (one of {', '.join(MESSAGE_FORMATS)})")


class Source(ABC):
    """A live source of events (module docstring)."""

    stream: str | None
    """The stream IRI of its events (``None``: as each record names it)."""
    on_error: OnError
    """What a bad record does: stop the query, or become a dead letter (skip)."""

    @property
    @abstractmethod
    def url(self) -> str:
        """The source as written on the command line."""

    @abstractmethod
    def records(self, spark: SparkSession, time_unit: TimeUnit) -> DataFrame:
        """The streaming DataFrame of records, columns ``name`` and ``value`` (strings);
        ``time_unit`` is the plan's (a Kafka reader reads messages' times with it)."""

    @abstractmethod
    def events(
        self, name: str, value: str | None, time_unit: TimeUnit, bad: BadRecords
    ) -> Iterator[Event]:
        """The events of one record (in a task), its bad records reported to ``bad``."""

    def channel(self, name: str) -> str:
        """The channel of the record ``name`` (module docstring): the source itself."""
        return self.url

    def channels(self) -> list[str]:
        """The channels known before any record comes: each holds the watermark back until
        it brings a record or falls idle (:mod:`rsep.spark.live`, 3)."""
        return [self.url]

    @abstractmethod
    def position(self, name: str, line: int | None) -> str:
        """Where in the source the record ``name`` (at ``line`` of it) is, for dead letters."""


@dataclass
class FolderSource(Source):
    """Stream files arriving in a folder, read by Spark's file source (paths only): the
    checkpoint records the files taken, so a restart reads only new ones."""

    folder: Path
    stream: str | None = None
    glob: str | None = None
    max_files_per_trigger: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    on_error: OnError = OnError.STOP

    @property
    def url(self) -> str:
        return str(self.folder)

    def position(self, name: str, line: int | None) -> str:
        path = _local_path(name)
        return str(path) if line is None else f"{path}:{line}"

    def records(self, spark: SparkSession, time_unit: TimeUnit) -> DataFrame:
        from pyspark.sql import functions as F

        self.folder.mkdir(parents=True, exist_ok=True)
        reader = spark.readStream.format("binaryFile").schema(FILE_SCHEMA)
        if self.glob is not None:
            reader = reader.option("pathGlobFilter", self.glob)
        if self.max_files_per_trigger is not None:
            reader = reader.option("maxFilesPerTrigger", self.max_files_per_trigger)
        files = reader.load(str(self.folder))
        return files.select(F.col("path").alias("name"), F.lit(None).cast("string").alias("value"))

    def events(
        self, name: str, value: str | None, time_unit: TimeUnit, bad: BadRecords
    ) -> Iterator[Event]:
        from rsep.rdf.formats import read_events

        path = _local_path(name)
        return read_events(
            path, stream=self.stream, time_unit=time_unit, bad=bad, **dict(self.options)
        )


def _local_path(uri: str) -> Path:
    """A ``file:`` URI of the file source as a local path."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


class MessageSource(Source):
    """A source whose records are broker messages or socket lines, each read in
    ``format`` (:func:`message_events`); ``address`` names where they come from."""

    address: KafkaAddress | SocketAddress
    format: str

    @property
    def url(self) -> str:
        return self.address.url

    def events(
        self, name: str, value: str | None, time_unit: TimeUnit, bad: BadRecords
    ) -> Iterator[Event]:
        return message_events(value or "", self.format, name, self.stream, time_unit, bad)


@dataclass
class KafkaSource(MessageSource):
    """A Kafka topic, one event per message (:mod:`rsep.spark.kafka`): offsets live in the
    checkpoint, so a restart reads exactly the messages after the last committed batch."""

    address: KafkaAddress
    stream: str | None = None
    format: str = "nquads"
    starting: str = "earliest"
    max_per_trigger: int | None = None
    on_error: OnError = OnError.STOP

    def channel(self, name: str) -> str:
        """A Kafka partition: the name up to the offset."""
        return name.rpartition("@")[0]

    def channels(self) -> list[str]:
        """The topic's partitions now (none if the topic does not exist yet)."""
        from rsep.spark.kafka import partitions_of

        return [f"{self.url}/{part:05d}" for part in partitions_of(self.address)]

    def position(self, name: str, line: int | None) -> str:
        """``topic:partition:offset`` (and the line within the message after it)."""
        where, _, offset = name.rpartition("@")
        partition = where.rpartition("/")[2]
        found = f"{self.address.topic}:{int(partition)}:{int(offset)}"
        return found if line is None or line == 1 else f"{found} line {line}"

    def records(self, spark: SparkSession, time_unit: TimeUnit) -> DataFrame:
        from pyspark.sql import functions as F

        from rsep.spark.kafka import register

        register(spark)
        reader = (
            spark.readStream.format("rsep-kafka")
            .option("bootstrap", self.address.bootstrap)
            .option("topic", self.address.topic)
            .option("startingOffsets", self.starting)
        )
        if self.max_per_trigger is not None:
            reader = reader.option("maxOffsetsPerTrigger", str(self.max_per_trigger))
            reader = reader.option("messageFormat", self.format)
            reader = reader.option("timeUnit", time_unit.name)
            reader = reader.option("stream", self.stream or "")
        messages = reader.load()
        name = F.concat(
            F.lit(self.url + "/"),
            F.lpad(F.col("partition").cast("string"), 5, "0"),
            F.lit("@"),
            F.lpad(F.col("offset").cast("string"), 12, "0"),
        )
        return messages.select(name.alias("name"), F.col("value"))


@dataclass
class SocketSource(MessageSource):
    """Text lines from a TCP server, one event per line (:mod:`rsep.spark.socket`; not
    replayable: lines live only in memory)."""

    address: SocketAddress
    stream: str | None = None
    format: str = "tnt"
    max_per_trigger: int | None = None
    on_error: OnError = OnError.STOP

    def position(self, name: str, line: int | None) -> str:
        """The line's number since the query's first, from 0."""
        return f"{self.url} line {int(name.rpartition('#')[2])}"

    def records(self, spark: SparkSession, time_unit: TimeUnit) -> DataFrame:
        from pyspark.sql import functions as F

        from rsep.spark.socket import register

        register(spark)
        reader = (
            spark.readStream.format("rsep-socket")
            .option("host", self.address.host)
            .option("port", str(self.address.port))
        )
        if self.max_per_trigger is not None:
            reader = reader.option("maxLinesPerTrigger", str(self.max_per_trigger))
        lines = reader.load()
        name = F.concat(F.lit(self.url + "#"), F.lpad(F.col("offset").cast("string"), 12, "0"))
        return lines.select(name.alias("name"), F.col("value"))

    def events(
        self, name: str, value: str | None, time_unit: TimeUnit, bad: BadRecords
    ) -> Iterator[Event]:
        if not value or not value.strip():
            return iter(())
        stream = self.stream or self.url
        return message_events(value, self.format, name, stream, time_unit, bad)


_SOURCE_OPTIONS = {"format", "max", "errors"}


def source_of(text: str, stream: str | None = None, on_error: OnError = OnError.STOP) -> Source:
    """The source an address names (module docstring): ``kafka://…``, ``socket://…`` or a
    folder. Options: ``format`` (of a message: nquads, trig, jsonld, tnt), ``starting``
    (Kafka: earliest or latest), ``max`` (records per trigger), ``errors`` (stop or skip a
    bad record; default ``on_error``)."""
    if text.startswith(("kafka:", "socket:")):
        address: KafkaAddress | SocketAddress = (
            KafkaAddress.parse(text) if text.startswith("kafka:") else SocketAddress.parse(text)
        )
        options = dict(address.options)
        allowed = _SOURCE_OPTIONS | ({"starting"} if isinstance(address, KafkaAddress) else set())
        unknown = sorted(set(options) - allowed)
        if unknown:
            known = ", ".join(sorted(allowed))
            raise UserError(f"{text}: unknown option(s) {', '.join(unknown)} (known: {known})")
        fmt = options.get("format")
        if fmt is not None and fmt not in MESSAGE_FORMATS:
            raise UserError(f"{text}: format is one of {', '.join(MESSAGE_FORMATS)}, not {fmt!r}")
        errors = options.get("errors", on_error.value)
        if errors not in ("stop", "skip"):
            raise UserError(f"{text}: errors is stop or skip, not {errors!r}")
        limit = options.get("max")
        if limit is not None and not limit.isdigit():
            raise UserError(f"{text}: max is a number of records, not {limit!r}")
        count = int(limit) if limit else None
        if isinstance(address, KafkaAddress):
            starting = options.get("starting", "earliest")
            if starting not in ("earliest", "latest"):
                raise UserError(f"{text}: starting is earliest or latest, not {starting!r}")
            policy = OnError(errors)
            return KafkaSource(address, stream, fmt or "nquads", starting, count, policy)
        return SocketSource(address, stream, fmt or "tnt", count, OnError(errors))
    folder = Path(text)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{text}: a live source is a folder of arriving files, not a file")
    return FolderSource(folder.resolve(), stream, on_error=on_error)
