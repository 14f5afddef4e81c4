"""A running ``rsep serve`` for the tests: a subprocess on a free loopback port, reached
over real HTTP and WebSocket connections, stopped (or killed) and started again on the same
state folder."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

TOKEN = "test-token"


def free_port() -> int:
    """A TCP port no one listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    """``rsep serve`` in a subprocess with ``options``, on ``state``; :meth:`start` waits
    until ``/readyz`` answers, :meth:`stop` ends it cleanly or kills it."""

    TOKEN = TOKEN

    def __init__(self, state: Path, *options: str) -> None:
        self.state = state
        self.options = options
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = state.parent / f"serve-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> Server:
        args = [sys.executable, "-m", "rsep", "serve", "--port", str(self.port)]
        args += ["--state", str(self.state), "--token", TOKEN, *self.options]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        began = time.monotonic()
        while time.monotonic() - began < 60:
            if self.process.poll() is not None:
                raise AssertionError(f"rsep serve ended: {self.log.read_text()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"rsep serve did not get ready: {self.log.read_text()}")

    def stop(self, kill: bool = False) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[type[Server]]:
    """Make servers on folders of ``tmp_path``; each is stopped at the end."""
    started: list[Server] = []

    class Started(Server):
        def start(self) -> Server:
            started.append(self)
            return super().start()

    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    yield Started
    for server in started:
        server.stop(kill=True)
