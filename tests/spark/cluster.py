"""A Spark standalone cluster on this machine, for tests: a master and workers started from
the pip-installed PySpark (``spark-class …deploy.master.Master`` and ``…deploy.worker.Worker``,
../shared/guide/SPARK.md, "Clusters"), on free ports of 127.0.0.1, and always stopped.

Drivers reach it as separate processes: :meth:`Cluster.client_env` gives them a
``spark-defaults.conf`` (small executors, an uncompressed event log) and the Python of this
process, so that executors import the same ``rsep``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_DAEMON_OPTS = "-XX:TieredStopAtLevel=1"
"""JVM options of master, workers, drivers and executors: C1 only halves start-up on this
2-core machine (SPARK.md, "Install")."""


def free_port() -> int:
    """A TCP port of 127.0.0.1 no one listens on (the OS's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def spark_class() -> Path:
    """``bin/spark-class`` of the installed PySpark (the pip package has no sbin scripts)."""
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def fetch_json(url: str) -> Any:
    """The JSON a Spark web UI serves at ``url`` (``…/json/``)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


@dataclass
class Cluster:
    """A started master and its workers: their URLs, processes and logs."""

    folder: Path
    url: str
    """``spark://127.0.0.1:PORT``, the master a driver connects to."""
    ui: str
    """The master's web UI, ``http://127.0.0.1:PORT``."""
    worker_uis: list[str] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def events(self) -> Path:
        """The drivers' event log folder (:meth:`client_env`)."""
        return self.folder / "events"

    def master_state(self) -> dict[str, Any]:
        """The master's ``/json/``: workers, alive workers, active and completed apps."""
        state: dict[str, Any] = fetch_json(self.ui + "/json/")
        return state

    def executors(self, app_id: str) -> dict[str, set[str]]:
        """The executors of application ``app_id`` on each worker (by the worker's UI),
        running or finished, as each worker's ``/json/`` lists them."""
        out: dict[str, set[str]] = {}
        for ui in self.worker_uis:
            state = fetch_json(ui + "/json/")
            found = state["executors"] + state["finishedexecutors"]
            out[ui] = {str(e["id"]) for e in found if e["appid"] == app_id}
        return out

    def client_env(self, conf: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a driver process: ``SPARK_CONF_DIR`` with small executors (one
        core, 512 MiB, one per worker), jobs held until every worker's executor has
        registered, no locality wait, and an uncompressed event log in :attr:`events`;
        ``conf`` entries added."""
        settings = {
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.cores.max": str(len(self.worker_uis)),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "180s",
            "spark.locality.wait": "0s",
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": self.events.as_uri(),
            "spark.eventLog.compress": "false",
            "spark.eventLog.rolling.enabled": "false",
            "spark.driver.defaultJavaOptions": _DAEMON_OPTS,
            "spark.executor.defaultJavaOptions": _DAEMON_OPTS,
            **(conf or {}),
        }
        conf_dir = self.folder / "client-conf"
        conf_dir.mkdir(exist_ok=True)
        self.events.mkdir(exist_ok=True)
        lines = [f"{key} {value}\n" for key, value in settings.items()]
        (conf_dir / "spark-defaults.conf").write_text("".join(lines), encoding="utf-8")
        return {
            **os.environ,
            "SPARK_CONF_DIR": str(conf_dir),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        }

    def logs(self) -> str:
        """The last lines of every daemon's log, for a failure's message."""
        parts = []
        for path in sorted(self.folder.glob("*.log")):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            parts.append(f"== {path.name}\n" + "\n".join(lines[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop every daemon (:func:`stop_groups`)."""
        stop_groups(self.processes)


def stop_groups(processes: list[subprocess.Popen[bytes]]) -> None:
    """Stop processes started in process groups of their own, last first: SIGTERM to each
    group (which holds the executors a worker launched, the Python workers of a server),
    SIGKILL after 20 s."""
    for process in reversed(processes):
        if process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    for process in reversed(processes):
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _daemon(cluster: Cluster, name: str, arguments: list[str]) -> None:
    """Start ``spark-class ARGUMENTS`` in a process group of its own, logging to NAME.log."""
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_DAEMON_MEMORY": "512m",
        "SPARK_DAEMON_JAVA_OPTS": _DAEMON_OPTS,
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_CONF_DIR": str(cluster.folder / "daemon-conf"),
    }
    (cluster.folder / "daemon-conf").mkdir(exist_ok=True)
    with (cluster.folder / f"{name}.log").open("wb") as log:
        process = subprocess.Popen(
            [str(spark_class()), *arguments],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    cluster.processes.append(process)


def _wait_for_workers(cluster: Cluster, count: int, timeout: float) -> None:
    """Return once the master lists ``count`` alive workers; raise with the logs if a daemon
    dies or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p for p in cluster.processes if p.poll() is not None]
        if dead:
            raise RuntimeError(f"a Spark daemon exited ({dead[0].args!r})\n{cluster.logs()}")
        with suppress(OSError, ValueError):
            state = cluster.master_state()
            if state.get("status") == "ALIVE" and state.get("aliveworkers") == count:
                return
        time.sleep(1)
    raise RuntimeError(f"{count} workers not registered after {timeout:.0f} s\n{cluster.logs()}")


@contextmanager
def standalone_cluster(
    folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 240
) -> Iterator[Cluster]:
    """A master and ``workers`` workers (``cores`` cores and ``memory`` each) on 127.0.0.1,
    their logs and work folders in ``folder``; yields once every worker has registered with
    the master and stops them all on exit, failure included."""
    folder.mkdir(parents=True, exist_ok=True)
    port, ui_port = free_port(), free_port()
    cluster = Cluster(folder, f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}")
    master = "org.apache.spark.deploy.master.Master"
    worker = "org.apache.spark.deploy.worker.Worker"
    try:
        _daemon(
            cluster,
            "master",
            [master, "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)],
        )
        for index in range(workers):
            worker_ui = free_port()
            work = folder / f"worker-{index}"
            work.mkdir(exist_ok=True)
            _daemon(
                cluster,
                f"worker-{index}",
                [
                    worker, cluster.url, "--host", "127.0.0.1", "--webui-port", str(worker_ui),
                    "--cores", str(cores), "--memory", memory, "--work-dir", str(work),
                ],
            )  # fmt: skip
            cluster.worker_uis.append(f"http://127.0.0.1:{worker_ui}")
        _wait_for_workers(cluster, workers, timeout)
        yield cluster
    finally:
        cluster.stop()


@contextmanager
def connect_server(folder: Path, timeout: float = 240) -> Iterator[str]:
    """A Spark Connect server (``local[2]``, two shuffle partitions) started from the
    installed PySpark's ``spark-submit`` on a free port of 127.0.0.1, its Python workers
    this process's Python (so they import the same ``rsep``), its log in
    ``folder/connect.log``; yields its ``sc://`` URL once it listens and stops it on exit,
    failure included."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log4j = Path(__file__).resolve().parents[2] / "src" / "rsep" / "spark" / "log4j2.properties"
    command = [
        str(spark_class().with_name("spark-submit")),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", "local[2]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.ui.enabled=false",
        "--conf", f"spark.driver.extraJavaOptions={_DAEMON_OPTS} "
        f"-Dlog4j.configurationFile={log4j.as_uri()}",
        "spark-internal",
    ]  # fmt: skip
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_CONF_DIR": str(folder),
    }
    log_path = folder / "connect.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the Connect server exited\n{_tail(log_path)}")
            with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Connect server after {timeout:.0f} s\n{_tail(log_path)}")
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_groups([server])


def _tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log, for a failure's message."""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def event_log(folder: Path) -> list[dict[str, Any]]:
    """The events of the one application whose (uncompressed) event log is in ``folder``."""
    files = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
    if len(files) != 1:
        raise AssertionError(f"expected one event log in {folder}, found {files}")
    lines = files[0].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def application_id(events: list[dict[str, Any]]) -> str:
    """The application's id, from its start event."""
    for event in events:
        if event["Event"] == "SparkListenerApplicationStart":
            return str(event["App ID"])
    raise AssertionError("no application start in the event log")


def tasks_per_executor(events: list[dict[str, Any]]) -> Counter[str]:
    """The tasks that ended successfully, counted by the executor that ran them."""
    done: Counter[str] = Counter()
    for event in events:
        if event["Event"] == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == (
            "Success"
        ):
            done[str(event["Task Info"]["Executor ID"])] += 1
    return done
