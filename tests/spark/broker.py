"""A noida-db Kafka broker for the tests (the ``noida-db`` package of the test extras: a
Kafka-protocol broker that keeps its data on disk), started on a free port, stopped and
started again on the same data for the broker-fault tests. Without it the tests skip,
except in CI (``CI`` set, as ``.ci/run`` sets it), where they fail: a green CI never hides
them."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from importlib.resources import files
from pathlib import Path
from typing import NoReturn

import pytest

from rsep.spark.kafka import KafkaAddress, create_topic


def unavailable(reason: str) -> NoReturn:
    """Skip the test for a missing broker, or fail it in CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI needs the test broker: {reason}", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def noida_binary() -> Path | None:
    try:
        found = Path(str(files("noida_db").joinpath("noida-db")))
    except ModuleNotFoundError:
        return None
    return found if found.is_file() else None


class Broker:
    """A noida-db broker on ``127.0.0.1:port`` keeping its data in ``folder``."""

    def __init__(self, folder: Path) -> None:
        binary = noida_binary()
        if binary is None:
            unavailable("noida-db is not installed (pip install noida-db: the test broker)")
        binary.chmod(0o755)
        self.binary, self.folder, self.port = binary, folder, free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers (60 s at most)."""
        log = (self.folder / "broker.log").open("ab")
        command = [str(self.binary), "start", "--data-dir", str(self.folder / "db")]
        command += ["--only", "kafka", "--host", "127.0.0.1", "--kafka-port", str(self.port)]
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.time() + 60
        while True:
            if self.process.poll() is not None:
                unavailable(f"noida-db exited with {self.process.returncode}: {self.tail()}")
            try:
                create_topic(KafkaAddress(self.bootstrap, "ready"))
                return
            except Exception:
                if time.time() > deadline:
                    unavailable(f"noida-db did not answer on {self.bootstrap}: {self.tail()}")
                time.sleep(0.3)

    def stop(self) -> None:
        """Stop it (its data stays for the next start)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def tail(self) -> str:
        return (self.folder / "broker.log").read_text(errors="replace")[-500:]
