"""Streams that read on their own: a folder of arriving files (read every ``--poll``
seconds, each file once, in name order) and a Kafka topic (a thread consuming it from the
offsets the service kept). Both hand their bodies to :meth:`rsep.serve.service.Service.push`,
as a client's POST would, and count a bad record on the stream."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsep.errors import UserError

if TYPE_CHECKING:
    from rsep.serve.service import Service, Stream

LINE_FORMATS = ("nquads", "tnt")
"""Formats whose messages are lines: a poll's messages go in one body (one parse)."""

POLL_MESSAGES = 10_000
"""Messages taken from a topic at most per push."""


def read_folder(service: Service, stream: Stream) -> None:
    """Push the files that arrived in ``stream``'s folder since the last read; a bad file
    is counted and its error kept on the stream (its events are not taken)."""
    from rsep.rdf.formats import detect_format

    folder = Path(stream.source or "")
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError as exc:
        stream.last_error = f"{folder}: {exc.strerror or exc}"
        return
    for file in names:
        if file in stream.seen or file.startswith("."):
            continue
        path = folder / file
        stream.seen.add(file)
        try:
            fmt = stream.format or str(detect_format(path).value)
            service.push(stream.name, path.read_bytes(), fmt)
        except (UserError, OSError) as exc:
            stream.last_error = f"{file}: {exc}"


class KafkaReader(threading.Thread):
    """Consumes ``stream``'s topic (``kafka://host:port/topic``) from the offsets the
    stream kept, each partition from its own, and pushes what a poll brings: the messages
    of a line format in one body, others one message at a time; the offsets move with each
    push, under the service's lock, so a checkpoint holds both."""

    def __init__(self, service: Service, stream: Stream) -> None:
        super().__init__(name=f"rsep-kafka-{stream.name}", daemon=True)
        self.service = service
        self.stream = stream
        self.stopped = threading.Event()

    def stop(self) -> None:
        """Ask the thread to end after its current poll."""
        self.stopped.set()

    def run(self) -> None:
        from confluent_kafka import Consumer

        from rsep.spark.kafka import KafkaAddress

        address = KafkaAddress.parse(self.stream.source or "")
        consumer = Consumer(
            {
                "bootstrap.servers": address.bootstrap,
                "group.id": f"rsep-serve-{self.stream.name}",
                "enable.auto.commit": False,
                "enable.partition.eof": False,
                "log_level": 3,
            }
        )
        try:
            while not self.stopped.is_set() and not self._assign(consumer, address.topic):
                self.stopped.wait(1.0)
            while not self.stopped.is_set():
                messages = consumer.consume(num_messages=POLL_MESSAGES, timeout=0.5)
                good = [m for m in messages if m.error() is None and m.value() is not None]
                if good:
                    self._push(good)
        except Exception as exc:  # the stream says what stopped it; the service runs on
            self.stream.last_error = f"{self.stream.source}: {exc}"
            print(f"rsep serve: {self.stream.source}: {exc!r}", file=sys.stderr)
        finally:
            consumer.close()

    def _assign(self, consumer: Any, topic: str) -> bool:
        """Assign every partition of ``topic`` from the kept offsets (the earliest where
        none is kept); ``False`` while the topic is not there."""
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        try:
            found = consumer.list_topics(topic, timeout=5).topics.get(topic)
        except Exception as exc:  # the broker is away: try again
            self.stream.last_error = f"{self.stream.source}: {exc}"
            return False
        if found is None or found.error is not None or not found.partitions:
            self.stream.last_error = f"{self.stream.source}: no such topic yet"
            return False
        kept = self.stream.offsets
        consumer.assign(
            [TopicPartition(topic, p, kept.get(p, OFFSET_BEGINNING)) for p in found.partitions]
        )
        self.stream.last_error = None
        return True

    def _push(self, messages: list[Any]) -> None:
        """Push a poll's messages: those of a line format parsed as one body, else (or
        when that body is malformed) one message at a time, so that only the bad ones are
        left out, each counted on the stream."""
        from rsep.serve.service import RequestError, parse_body

        fmt = self.stream.format or "nquads"
        if fmt in LINE_FORMATS:
            body = b"\n".join(m.value() for m in messages)
            try:
                table = parse_body(body, fmt, self.stream.iri, self.service.terms)
            except RequestError:
                pass
            else:
                self.service.take(self.stream, table, time.monotonic(), _offsets(messages))
                return
        for message in messages:
            try:
                self.service.push(self.stream.name, message.value(), fmt, _offsets([message]))
            except UserError:
                continue  # counted on the stream, its offset moved on


def _offsets(messages: list[Any]) -> dict[int, int]:
    """The next offset of each partition after ``messages``."""
    return {m.partition(): m.offset() + 1 for m in messages}
