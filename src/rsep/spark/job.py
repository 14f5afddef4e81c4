"""What the batch jobs of ``rsep run --engine spark`` share (:mod:`rsep.spark.columnar`,
:mod:`rsep.spark.replay`): their inputs and read tasks, a Spark task per engine partition,
the answers' rows merged in Spark and streamed to the driver, and errors across the JVM.

Answers leave the engine's tasks as rows :data:`ANSWER_SCHEMA`; :func:`merged` keeps an
answer that two partitions both give once, at its earliest time (IStream over the union
of the partitions' answers, SPAseq choice 9, docs/semantics.md) by a ``groupBy`` in Spark,
and :func:`stream_answers` brings the merged answers to the driver one partition at a
time (``toLocalIterator``) as JSON Lines texts, never parsed there.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsep.errors import InputError, UserError
from rsep.rdf.results import Result, write_results

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from rsep.spark.partition import Scheme

__all__ = [
    "ANSWER_SCHEMA",
    "StreamInput",
    "Streamed",
    "answer_batch",
    "answer_row",
    "buckets",
    "count_row",
    "driver_errors",
    "marked_errors",
    "merged",
    "read_tasks",
    "shuffle_partitions",
    "spark_hash_long",
    "spread",
    "stream_answers",
    "unmark",
]


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
        from rsep.engine.batch import is_store

        return is_store(self.path)


ReadTask = tuple[int, str, str, str | None, str]
"""A read task ``(index, kind, path, stream, options)``: ``kind`` is ``file`` or
``csrbench``, ``options`` the input's read options as JSON."""


def read_tasks(inputs: Sequence[StreamInput]) -> list[ReadTask]:
    """The read tasks of the inputs that are not event stores, listed without reading a
    file: a task per part file of a folder, one per other input."""
    from rsep.rdf.formats import Format, detect_format
    from rsep.rdf.formats._common import part_files
    from rsep.semantics.csrbench import is_csrbench_data

    out: list[ReadTask] = []
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
            for part in part_files(path):
                out.append((len(out), "file", str(part), item.stream, options))
        else:
            out.append((len(out), "file", str(path), item.stream, options))
    return out


def shuffle_partitions(spark: SparkSession) -> int:
    """``spark.sql.shuffle.partitions``: the engine partitions a job uses by default."""
    return int(spark.conf.get("spark.sql.shuffle.partitions") or "2")


# A task per engine partition ---------------------------------------------------------------


def spread(frame: DataFrame, count: int) -> DataFrame:
    """``frame``'s rows in ``count`` Spark partitions, the rows of engine partition ``part``
    all in Spark partition ``part`` (one task each); one Spark partition when ``count`` is
    1."""
    from pyspark.sql import functions as F

    if count <= 1:
        return frame.repartition(1)
    bucket = F.element_at(
        F.array(*(F.lit(b).cast("long") for b in buckets(count))),
        (F.col("part") + 1).cast("int"),
    )
    return frame.withColumn("_bucket", bucket).repartition(count, "_bucket").drop("_bucket")


def buckets(count: int) -> list[int]:
    """For each partition ``p < count``, the smallest integer whose Spark hash (Murmur3,
    seed 42, as ``repartition`` uses it) lands on ``p``."""
    found: dict[int, int] = {}
    candidate = 0
    while len(found) < count:
        found.setdefault(spark_hash_long(candidate) % count, candidate)
        candidate += 1
    return [found[p] for p in range(count)]


def spark_hash_long(value: int) -> int:
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


# Answers ---------------------------------------------------------------------------------

ANSWER_SCHEMA = "time long, part long, seq long, key string, line string, events long, inexact long"
"""What the engine's tasks give: an answer per row (``line`` its JSON Lines text, ``key``
what IStream compares, the JSON without the time; ``seq`` its rank in its partition) and,
per partition, a count row (``seq`` -1, no line) with the events it is home to and the
rows whose FILTER was evaluated exactly."""

_COUNT_TIME = -(1 << 63)
"""A count row's time: before every answer, so the driver reads the counts first."""

AnswerRow = tuple[int, int, int, str | None, str | None, int, int]


def answer_row(result: Result, part: int, seq: int) -> AnswerRow:
    """A partition's answer as a row of :data:`ANSWER_SCHEMA`."""
    text = io.StringIO()
    write_results([result], text)
    data = result.to_json()
    data.pop("time")
    key = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return result.time, part, seq, key, text.getvalue().rstrip("\n"), 0, 0


def count_row(part: int, events: int, inexact: int) -> AnswerRow:
    """A partition's count row (:data:`ANSWER_SCHEMA`)."""
    return _COUNT_TIME, part, -1, None, None, events, inexact


def answer_batch(rows: Sequence[AnswerRow]) -> pa.RecordBatch:
    """Rows of :data:`ANSWER_SCHEMA` as an Arrow batch."""
    import pyarrow as pa

    names = ("time", "part", "seq", "key", "line", "events", "inexact")
    types = (pa.int64(), pa.int64(), pa.int64(), pa.string(), pa.string(), pa.int64(), pa.int64())
    columns = [pa.array([r[i] for r in rows], t) for i, t in enumerate(types)]
    return pa.RecordBatch.from_arrays(columns, names=list(names))


def merged(answers: DataFrame, partitioned: bool) -> DataFrame:
    """The answers (:data:`ANSWER_SCHEMA`) in one Spark partition, the count rows first,
    then the answers in time order: with partitions, an answer two partitions both give
    once, at its earliest time (a ``groupBy`` on its key taking the least time, module
    docstring); without, as the one partition gave them."""
    from pyspark.sql import functions as F

    if partitioned:
        count = F.concat(F.lit("#"), F.col("part").cast("string"))
        group = F.when(F.col("seq") < 0, count).otherwise(F.col("key")).alias("group")
        answers = (
            answers.groupBy(group)
            .agg(
                F.min(F.struct("time", "line")).alias("first"),
                F.sum("events").alias("events"),
                F.sum("inexact").alias("inexact"),
            )
            .select(
                F.col("first.time").alias("time"),
                F.col("first.line").alias("line"),
                "events",
                "inexact",
            )
        )
        order: tuple[str, ...] = ("time", "line")
    else:  # an instant's answers all from one task (one time range), in its order
        order = ("time", "part", "seq")
    return answers.repartition(1).sortWithinPartitions(*order)


@dataclass
class Streamed:
    """Merged answers on their way to the driver: the JSON Lines texts in time order (read
    as they are iterated), the events read and the rows whose FILTER the columnar
    engine's programs could not decide and evaluated exactly (``None``: the per-event
    engine ran), both known before the first answer."""

    lines: Iterator[str]
    events: int
    inexact_rows: int | None

    def results(self) -> Iterator[Result]:
        """The answers as result objects (the Python API's form; the CLI writes the texts)."""
        from rsep.rdf.results import read_results

        return read_results(self.lines)


@dataclass
class Job:
    """What a batch job did: its answers on their way to the driver (:class:`Streamed`),
    the scheme it ran under and, when measured (:func:`rsep.spark.replay.replay`), the
    rows read and kept by the prefilter."""

    answers: Streamed
    scheme: Scheme
    rows_read: int | None = None
    rows_kept: int | None = None

    @property
    def events(self) -> int:
        """The events read (each once, however many partitions it went to)."""
        return self.answers.events

    @cached_property
    def results(self) -> list[Result]:
        """The answers read in full, as result objects (the Python API and tests)."""
        return list(self.answers.results())


def stream_answers(answers: DataFrame, *, columnar: bool = True) -> Streamed:
    """The rows of :func:`merged` to the driver with ``toLocalIterator``: the job runs, and
    its errors are raised, here; the count rows are read before this returns
    (``columnar``: whether they count inexact rows)."""
    events = inexact = 0
    first: str | None = None
    with driver_errors():
        rows = answers.toLocalIterator()
        for row in rows:
            if row["line"] is not None:
                first = row["line"]
                break
            events += int(row["events"] or 0)
            inexact += int(row["inexact"] or 0)

    def lines() -> Iterator[str]:
        if first is None:
            return
        yield first
        with driver_errors():
            for row in rows:
                yield row["line"]

    return Streamed(lines(), events, inexact if columnar else None)


# Errors across the JVM --------------------------------------------------------------------

INPUT_MARK = "RSEP_INPUT_ERROR:"
USER_MARK = "RSEP_USER_ERROR:"
_END = ":END"


@contextmanager
def marked_errors() -> Iterator[None]:
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
def driver_errors() -> Iterator[None]:
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
    """The error a task marked in ``text`` (:func:`marked_errors`), if any."""
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
