"""Text lines over TCP as a live source, written with Spark's Python Data Source API
(issue 6).

``spark.readStream.format("rsep-socket").option("host", …).option("port", …)``: the reader,
which lives in the driver's Python source runner, connects once and reads lines in a
background thread; an offset is the number of lines received. A micro-batch's lines travel
inside its one input partition and ``read()`` returns an iterator over that list (a socket
cannot be read again from a task: SPARK.md). Rows: ``offset`` (the line's number from 0)
and ``value``. As with Spark's own socket source, lines are not kept anywhere but in
memory: after a restart the offsets go on, but lines sent while the query was down, or
received and not yet committed, are gone.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
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
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["LINE_SCHEMA", "SocketAddress", "SocketDataSource", "register"]

NAME = "rsep-socket"
LINE_SCHEMA = "offset long, value string"
_CONNECT_SECONDS = 30.0


@dataclass(frozen=True)
class SocketAddress:
    """A TCP server sending text lines, written ``socket://host:port`` (options after ``?``)."""

    host: str
    port: int
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, url: str) -> SocketAddress:
        """``socket://host:port[?name=value&…]``; a clear error otherwise."""
        parsed = urlparse(url)
        try:
            port = parsed.port
        except ValueError:
            port = None
        if parsed.scheme != "socket" or not parsed.hostname or port is None:
            raise UserError(f"{url!r} is not a socket address: socket://host:port")
        return cls(parsed.hostname, port, tuple(parse_qsl(parsed.query)))

    @property
    def url(self) -> str:
        """The address as written (without options)."""
        return f"socket://{self.host}:{self.port}"


def register(spark: SparkSession) -> None:
    """Make ``format("rsep-socket")`` known to ``spark``."""
    spark.dataSource.register(SocketDataSource)


class _Lines(InputPartition):
    """The lines of one micro-batch, from offset ``start`` on."""

    def __init__(self, start: int, lines: list[str]) -> None:
        super().__init__(start)
        self.start, self.lines = start, lines


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace").rstrip("\r")


class _Receiver:
    """The connection and the lines received and not yet committed (driver side)."""

    def __init__(self, host: str, port: int) -> None:
        self.lock = threading.Lock()
        self.lines: list[str] = []
        self.base: int | None = None  # offset of lines[0]
        self.error: str | None = None
        self.closed = False
        deadline = time.monotonic() + _CONNECT_SECONDS
        while True:
            try:
                self.connection = socket.create_connection((host, port), timeout=5)
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise UserError(f"socket://{host}:{port}: cannot connect: {exc}") from None
                time.sleep(0.2)
        self.connection.settimeout(None)
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self) -> None:
        rest = b""
        try:
            while True:
                data = self.connection.recv(1 << 16)
                if not data:
                    break
                rest += data
                *done, rest = rest.split(b"\n")
                if done:
                    with self.lock:
                        self.lines += [_text(line) for line in done]
        except OSError as exc:
            if not self.closed:
                self.error = str(exc)
        if rest:
            with self.lock:
                self.lines.append(_text(rest))

    def close(self) -> None:
        self.closed = True
        self.connection.close()


class SocketStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets and planning of ``rsep-socket`` (module docstring)."""

    def __init__(self, options: dict[str, str]) -> None:
        self.host = options["host"]
        self.port = int(options["port"])
        limit = options.get("maxlinespertrigger")
        self.max_rows = int(limit) if limit else None
        self.target: int | None = None
        self._receiver: _Receiver | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_receiver"] = None
        return state

    def _open(self, start: int = 0) -> _Receiver:
        if self._receiver is None:
            self._receiver = _Receiver(self.host, self.port)
        if self._receiver.base is None:
            self._receiver.base = start
        return self._receiver

    def initialOffset(self) -> dict[str, int]:
        return {"offset": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self.max_rows is None else ReadMaxRows(self.max_rows)

    def prepareForTriggerAvailableNow(self) -> None:
        receiver = self._open()
        time.sleep(0.2)  # lines sent before the query started
        with receiver.lock:
            self.target = (receiver.base or 0) + len(receiver.lines)

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        receiver = self._open(int(start["offset"]))
        if receiver.error is not None:
            raise UserError(f"socket://{self.host}:{self.port}: {receiver.error}")
        with receiver.lock:
            end = (receiver.base or 0) + len(receiver.lines)
        if self.target is not None:
            end = min(end, self.target)
        if isinstance(limit, ReadMaxRows):
            end = min(end, int(start["offset"]) + limit.max_rows)
        return {"offset": max(end, int(start["offset"]))}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        first, stop = int(start["offset"]), int(end["offset"])
        if stop <= first:
            return []
        receiver = self._open(first)
        with receiver.lock:
            base = receiver.base or 0
            lines = receiver.lines[max(0, first - base) : max(0, stop - base)]
        return [_Lines(max(first, base), lines)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int, str]]:
        assert isinstance(partition, _Lines)
        rows = [(partition.start + i, line) for i, line in enumerate(partition.lines)]
        return iter(rows)

    def commit(self, end: dict[str, int]) -> None:
        if self._receiver is None:
            return
        receiver = self._receiver
        with receiver.lock:
            base = receiver.base or 0
            drop = max(0, int(end["offset"]) - base)
            del receiver.lines[:drop]
            receiver.base = base + drop

    def stop(self) -> None:
        if self._receiver is not None:
            self._receiver.close()
            self._receiver = None


class SocketDataSource(DataSource):
    """``format("rsep-socket")``: a streaming reader of text lines (module docstring)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return LINE_SCHEMA

    def streamReader(self, schema: StructType) -> SocketStreamReader:
        options = {str(k).lower(): str(v) for k, v in self.options.items()}
        for needed in ("host", "port"):
            if not options.get(needed):
                raise UserError(f"format {NAME!r} needs option {needed!r}")
        return SocketStreamReader(options)
