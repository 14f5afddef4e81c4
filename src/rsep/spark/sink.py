"""Where a live query's answers, late events and dead letters go: a folder of batch files, a
text file or standard output (JSON Lines), or a Kafka topic (issues 6 and 17; docs/live.md).

Each micro-batch's rows (``time, part, seq, line, kind``: :data:`rsep.spark.live.OUTCOME_SCHEMA`)
are collected to the driver by :class:`Outlets` and split by kind: answers (JSON Lines
results, :mod:`rsep.rdf.results`) to the answer sink, late events to the late-data sink and
dead letters to the dead-letter sink, when given, each in order of time, then partition
and sequence number, and all counted (:class:`Tally`). A batch that Spark runs again after
a crash has the same id, input and state, hence the same rows; what a sink guarantees
(``Sink.guarantee``, shown by tests that kill the process, docs/live.md):

- :class:`FolderSink`, exactly once: ``batch-<id>.jsonl`` is written to a temporary name,
  then renamed, so a replay rewrites the same file;
- :class:`TextSink` on a file, exactly once: before a batch is appended, a write-ahead log
  in the checkpoint records the batch id and the file's length; the file is cut back to
  that length before the batch is written (so a replay, or a torn line left by a kill,
  is undone), and the length after it is logged once the batch is on disk;
- :class:`TextSink` on standard output, at least once: printed lines cannot be taken back,
  so a batch replayed after a crash may repeat answers;
- :class:`KafkaSink`, exactly once: each message carries its batch id in a header and is
  produced by an idempotent producer (``enable.idempotence``: retries neither repeat nor
  reorder), so the messages of a batch in the topic are a prefix of it; a replay reads
  back how many there are and produces only the rest.

Written on the command line as an address (:func:`sink_of`): ``-`` (standard output), a
file path, or ``kafka://host:port/topic``.
"""

from __future__ import annotations

import json
import os
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, ClassVar

from rsep.errors import UserError
from rsep.rdf.results import Result, read_results
from rsep.spark.kafka import KafkaAddress

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = [
    "FolderSink",
    "KafkaSink",
    "Outlets",
    "Sink",
    "Tally",
    "TextSink",
    "read_output",
    "sink_of",
]

BATCH_FILE = "batch-{:010d}.jsonl"
ANSWER, LATE, BAD, MARK = "answer", "late", "bad", "mark"
"""The kinds of a live query's rows (:data:`rsep.spark.live.OUTCOME_SCHEMA`)."""
EXACTLY_ONCE = "exactly once"
AT_LEAST_ONCE = "at least once"


class Sink(ABC):
    """Where lines go (module docstring)."""

    guarantee: ClassVar[str] = EXACTLY_ONCE
    """What a replayed micro-batch does to it: ``exactly once`` or ``at least once``."""
    written: int = 0
    """Lines written by this process."""

    @abstractmethod
    def open(self, checkpoint: Path, role: str) -> None:
        """Get ready to write the query's ``role`` lines (``answers``, ``late``,
        ``dead-letters``) under ``checkpoint``, undoing what a killed run left half done."""

    @abstractmethod
    def write(self, lines: list[str], batch_id: int) -> None:
        """Write micro-batch ``batch_id``'s ``lines`` (a replay gives the same lines)."""

    @abstractmethod
    def lines(self) -> list[str]:
        """Every line written so far, in order."""

    def results(self) -> list[Result]:
        """Every answer written so far, in order."""
        return list(read_results(self.lines(), str(self)))


@dataclass
class Tally:
    """Counts of what a live query's micro-batches gave in this process, and its mark (the
    last final instant, :mod:`rsep.spark.live`)."""

    answers: int = 0
    late: int = 0
    bad: int = 0
    batches: int = 0
    mark: int | None = None
    first_bad: list[str] = field(default_factory=list)
    """The first dead letters (at most 5), for the summary."""


@dataclass
class Outlets:
    """A live query's sinks: answers, and the late events and dead letters when given
    (module docstring)."""

    answers: Sink
    late: Sink | None = None
    dead_letters: Sink | None = None
    tally: Tally = field(default_factory=Tally)

    def writer(self, rows: DataFrame, checkpoint: Path) -> DataStreamWriter:
        """The stream writer of ``rows`` (:data:`rsep.spark.live.OUTCOME_SCHEMA`)."""
        for role, sink in (("answers", self.answers), ("late", self.late)):
            if sink is not None:
                sink.open(checkpoint, role)
        if self.dead_letters is not None:
            self.dead_letters.open(checkpoint, "dead-letters")
        return rows.writeStream.foreachBatch(self._batch)

    def _batch(self, frame: DataFrame, batch_id: int) -> None:
        rows = sorted(
            (r["kind"], r["time"], r["part"], r["seq"], r["line"]) for r in frame.collect()
        )
        split: dict[str, list[str]] = {ANSWER: [], LATE: [], BAD: []}
        tally = self.tally
        for kind, time, *_, line in rows:
            if kind == MARK:
                tally.mark = time if tally.mark is None else max(tally.mark, time)
            else:
                split[kind].append(line)
        targets: list[tuple[Sink | None, list[str]]] = [
            (self.answers, split[ANSWER]),
            (self.late, split[LATE]),
            (self.dead_letters, split[BAD]),
        ]
        for sink, lines in targets:
            if sink is not None and lines:
                sink.write(lines, batch_id)
        tally.answers += len(split[ANSWER])
        tally.late += len(split[LATE])
        tally.bad += len(split[BAD])
        tally.first_bad += split[BAD][: max(0, 5 - len(tally.first_bad))]
        tally.batches += 1


@dataclass
class FolderSink(Sink):
    """Each micro-batch's lines in ``batch-<id>.jsonl`` of a folder (exactly once)."""

    folder: Path

    def open(self, checkpoint: Path, role: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, lines: list[str], batch_id: int) -> None:
        target = self.folder / BATCH_FILE.format(batch_id)
        temporary = self.folder / ("." + target.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
        self.written += len(lines)

    def lines(self) -> list[str]:
        out: list[str] = []
        for path in sorted(self.folder.glob("batch-*.jsonl")):
            out += path.read_text(encoding="utf-8").splitlines()
        return out

    def __str__(self) -> str:
        return str(self.folder)


def read_output(output: Path) -> list[Result]:
    """The answers a live query wrote to the folder ``output``, in order."""
    return FolderSink(output).results()


@dataclass
class TextSink(Sink):
    """Lines appended to a JSON Lines file (exactly once, by a write-ahead log) or to
    standard output (``path`` ``None``, at least once): module docstring."""

    path: Path | None = None
    stdout: IO[str] | None = field(default=None, repr=False)
    _log: Path | None = field(default=None, repr=False)

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        return AT_LEAST_ONCE if self.path is None else EXACTLY_ONCE

    def open(self, checkpoint: Path, role: str) -> None:
        if self.path is None:
            return
        self._log = checkpoint / f"rsep-{role}.json"
        try:
            checkpoint.mkdir(parents=True, exist_ok=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch()
        except OSError as exc:
            raise UserError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        known = self._known()
        if known is not None:  # a killed run: back to the last batch known whole
            length = known["before"] if known["after"] is None else known["after"]
            with self.path.open("r+b") as out:
                out.truncate(length)

    def _known(self) -> dict[str, int | None] | None:
        assert self._log is not None
        if not self._log.exists():
            return None
        known: dict[str, int | None] = json.loads(self._log.read_text("utf-8"))
        return known

    def _record(self, batch_id: int, before: int, after: int | None) -> None:
        assert self._log is not None
        temporary = self._log.with_name("." + self._log.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as out:
            out.write(json.dumps({"batch": batch_id, "before": before, "after": after}))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self._log)

    def write(self, lines: list[str], batch_id: int) -> None:
        text = "".join(line + "\n" for line in lines)
        if self.path is None:
            out = self.stdout or sys.stdout
            out.write(text)
            out.flush()
            self.written += len(lines)
            return
        known = self._known()
        with self.path.open("r+b") as out:
            if known is None:
                before = out.seek(0, os.SEEK_END)
            elif int(known["batch"] or 0) >= batch_id or known["after"] is None:
                before = int(known["before"] or 0)  # this batch again: from where it began
            else:
                before = int(known["after"])  # the next batch: after the last one
            self._record(batch_id, before, None)  # the write-ahead entry
            out.truncate(before)
            out.seek(before)
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
            after = out.tell()
        self._record(batch_id, before, after)
        self.written += len(lines)

    def lines(self) -> list[str]:
        if self.path is None:
            raise UserError("lines written to standard output cannot be read back")
        return self.path.read_text("utf-8").splitlines()

    def __str__(self) -> str:
        return "-" if self.path is None else str(self.path)


@dataclass
class KafkaSink(Sink):
    """Lines produced to one partition of a Kafka topic, in order, exactly once (module
    docstring)."""

    address: KafkaAddress
    partition: int = 0

    def open(self, checkpoint: Path, role: str) -> None:
        """Nothing is half done in a topic: a replayed batch skips what is there."""

    def write(self, lines: list[str], batch_id: int) -> None:
        from rsep.spark.kafka import produce_batch

        produce_batch(self.address, self.partition, lines, batch_id)
        self.written += len(lines)

    def lines(self) -> list[str]:
        from rsep.spark.kafka import read_topic

        return read_topic(self.address)

    def __str__(self) -> str:
        return self.address.url


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
