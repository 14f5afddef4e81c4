"""Where a live query's answers go: a folder of batch files, a text file or standard
output (JSON Lines), or a Kafka topic (issue 6).

Every sink gets each micro-batch's answers as rows ``time, part, seq, line`` (``line`` a
JSON Lines result, :mod:`rsep.rdf.results`) and writes them in order of time, then
partition and sequence number. A batch that Spark runs again after a crash has the same
id, input and state, hence the same rows; each sink makes that replay harmless:

- :class:`FolderSink` writes ``batch-<id>.jsonl`` (to a temporary name, then renamed), so a
  replay rewrites the same file;
- :class:`TextSink` appends to a file and records, in the checkpoint, the file's length
  before and after each batch; a replay first cuts the file back. Standard output cannot be
  cut back: there a replayed batch may repeat answers;
- :class:`KafkaSink` produces through ``format("rsep-kafka")``, whose writer skips the
  messages of the batch already in the topic (:mod:`rsep.spark.kafka`).

Written on the command line as an address (:func:`sink_of`): ``-`` (standard output), a
file path, or ``kafka://host:port/topic``.
"""

from __future__ import annotations

import json
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rsep.errors import UserError
from rsep.rdf.results import Result, read_results
from rsep.spark.kafka import KafkaAddress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["FolderSink", "KafkaSink", "Sink", "TextSink", "read_output", "sink_of"]

BATCH_FILE = "batch-{:010d}.jsonl"
_TEXT_LOG = "rsep-output.json"


class Sink(ABC):
    """Where answers go (module docstring)."""

    written: int = 0
    """Answers written by this process (for progress; sinks written in tasks leave it 0)."""

    @abstractmethod
    def writer(self, answers: DataFrame, checkpoint: Path) -> DataStreamWriter:
        """The stream writer of ``answers`` (rows ``time, part, seq, line``)."""

    @abstractmethod
    def results(self) -> list[Result]:
        """Every answer written so far, in order."""


def _ordered_lines(frame: DataFrame) -> list[str]:
    """A micro-batch's answers collected to the driver, in order."""
    rows = sorted((r["time"], r["part"], r["seq"], r["line"]) for r in frame.collect())
    return [line for *_, line in rows]


def _batches(write: Callable[[list[str], int], None]) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function calling ``write(lines, batch_id)`` with the answers."""

    def run(frame: DataFrame, batch_id: int) -> None:
        lines = _ordered_lines(frame)
        if lines:
            write(lines, batch_id)

    return run


@dataclass
class FolderSink(Sink):
    """Each micro-batch's answers in ``batch-<id>.jsonl`` of a folder."""

    folder: Path

    def writer(self, answers: DataFrame, checkpoint: Path) -> DataStreamWriter:
        self.folder.mkdir(parents=True, exist_ok=True)
        return answers.writeStream.foreachBatch(_batches(self._write))

    def _write(self, lines: list[str], batch_id: int) -> None:
        target = self.folder / BATCH_FILE.format(batch_id)
        temporary = self.folder / ("." + target.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines)
        os.replace(temporary, target)
        self.written += len(lines)

    def results(self) -> list[Result]:
        return read_output(self.folder)


def read_output(output: Path) -> list[Result]:
    """The answers a live query wrote to the folder ``output``, in order."""
    lines: list[str] = []
    for path in sorted(output.glob("batch-*.jsonl")):
        lines += path.read_text(encoding="utf-8").splitlines()
    return list(read_results(lines, str(output)))


@dataclass
class TextSink(Sink):
    """Answers appended to a JSON Lines file, or to standard output (``path`` ``None``)."""

    path: Path | None = None
    stdout: IO[str] | None = field(default=None, repr=False)
    _log: Path | None = field(default=None, repr=False)

    def writer(self, answers: DataFrame, checkpoint: Path) -> DataStreamWriter:
        if self.path is not None:
            self._log = checkpoint / _TEXT_LOG
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.touch()
            except OSError as exc:
                raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return answers.writeStream.foreachBatch(_batches(self._write))

    def _write(self, lines: list[str], batch_id: int) -> None:
        text = "".join(line + "\n" for line in lines)
        if self.path is None:
            out = self.stdout or sys.stdout
            out.write(text)
            out.flush()
            self.written += len(lines)
            return
        assert self._log is not None
        known = json.loads(self._log.read_text("utf-8")) if self._log.exists() else None
        with self.path.open("r+b") as out:
            if known is not None and known["batch"] >= batch_id:  # a replay: cut back
                out.truncate(known["before"])
            out.seek(0, os.SEEK_END)
            before = out.tell()
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
            after = out.tell()
        temporary = self._log.with_name("." + self._log.name + ".tmp")
        temporary.write_text(json.dumps({"batch": batch_id, "before": before, "after": after}))
        os.replace(temporary, self._log)
        self.written += len(lines)

    def results(self) -> list[Result]:
        if self.path is None:
            raise UserError("answers written to standard output cannot be read back")
        return list(read_results(self.path.read_text("utf-8").splitlines(), str(self.path)))


@dataclass
class KafkaSink(Sink):
    """Answers produced to one partition of a Kafka topic, in order, none twice."""

    address: KafkaAddress
    partition: int = 0

    def writer(self, answers: DataFrame, checkpoint: Path) -> DataStreamWriter:
        from rsep.spark.kafka import register

        register(answers.sparkSession)
        ordered = answers.coalesce(1).selectExpr("time", "part", "seq", "line AS value")
        return (
            ordered.writeStream.format("rsep-kafka")
            .option("bootstrap", self.address.bootstrap)
            .option("topic", self.address.topic)
            .option("partition", str(self.partition))
            .option("order", "time,part,seq")
        )

    def results(self) -> list[Result]:
        from rsep.spark.kafka import read_topic

        return list(read_results(read_topic(self.address), self.address.url))


def sink_of(text: str | None) -> Sink:
    """The sink an address names (module docstring); ``None`` or ``-`` is standard output."""
    if text is None or text == "-":
        return TextSink()
    if text.startswith("kafka:"):
        address = KafkaAddress.parse(text)
        if address.options:
            raise UserError(f"{text}: a results topic takes no options")
        return KafkaSink(address)
    return TextSink(Path(text))
