"""Text lines over TCP as a live source (rsep.spark.socket) against the oracle: two tiny
servers in the test send the stocks and the news of the market query as timestamped
N-Triples lines, one event a line; the live query merges both sockets under one
watermark."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyoxigraph import NamedNode, Triple
from test_replay import NEWS, PARTITIONED, STOCKS, canonical, compiled, market, oracle

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import write_events
from rsep.rdf.time import TimeUnit
from rsep.spark.live import start_live
from rsep.spark.socket import SocketAddress
from rsep.spark.source import SocketSource, message_events, source_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

EX = "http://example.org/"
KEYED = PARTITIONED.replace("SELECT ?p1 ?p2", "SELECT ?company ?p1 ?p2")


class LineServer:
    """A TCP server on a free local port that sends its lines to the first client, then
    keeps the connection open until closed."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.server.getsockname()[1])
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(120)
        try:
            client, _ = self.server.accept()
        except OSError:
            return
        with client:
            client.sendall("".join(line + "\n" for line in self.lines).encode())
            self.done.wait(300)

    def close(self) -> None:
        self.done.set()
        self.server.close()
        self.thread.join(10)


@pytest.fixture
def servers() -> Iterator[list[LineServer]]:
    started: list[LineServer] = []
    yield started
    for server in started:
        server.close()


def lines(events: Sequence[Event]) -> list[str]:
    """One timestamped N-Triples line per event."""
    out = io.StringIO()
    write_events(events, out, "tnt")
    return out.getvalue().splitlines()


def test_socket_addresses() -> None:
    source = source_of("socket://localhost:7000?format=jsonld&max=100", EX + "s")
    assert isinstance(source, SocketSource)
    assert source.address == SocketAddress(
        "localhost", 7000, (("format", "jsonld"), ("max", "100"))
    )
    assert (source.format, source.max_per_trigger, source.url) == (
        "jsonld",
        100,
        "socket://localhost:7000",
    )
    for bad in ("socket://localhost", "socket://:7/", "socket://h:7?starting=latest"):
        with pytest.raises(UserError):
            source_of(bad)


@pytest.mark.slow
def test_two_sockets_live(spark: SparkSession, servers: list[LineServer], tmp_path: Path) -> None:
    """The market's stocks and news on two sockets, a trigger a second: once the watermark
    passes the last event, the oracle's answers over the events as the lines give them."""
    plan = compiled(KEYED, lateness="100s")  # the two sockets may run apart by that much
    events = market(5)
    node = NamedNode(EX + "tick")  # a last line on each socket moves the watermark on
    by_stream = {
        stream: lines(
            [e for e in events if e.stream == stream]
            + [Event.point(stream, 10**7, [Triple(node, node, node)])]
        )
        for stream in (STOCKS, NEWS)
    }
    sources = []
    for stream, text in by_stream.items():
        servers.append(LineServer(text))
        sources.append(SocketSource(SocketAddress("127.0.0.1", servers[-1].port), stream))
    sent = [
        event
        for stream, text in by_stream.items()
        for index, line in enumerate(text)
        for event in message_events(line, "tnt", f"#{index}", stream, TimeUnit.MILLISECONDS)
        if event.t_end < 10**7
    ]
    assert len(sent) == len(events)
    live = start_live(
        spark, plan, sources, tmp_path / "checkpoint", tmp_path / "out", interval="1 second"
    )
    try:
        deadline = time.time() + 240
        while (live.watermark or 0) < 10**7 - 100_001 and time.time() < deadline:
            assert live.query.exception() is None
            time.sleep(1)
        live.query.processAllAvailable()
    finally:
        live.stop()
    assert live.watermark == 10**7 - 100_001  # the last final instant: W - 1
    assert canonical(live.results()) == oracle(plan, sent)
