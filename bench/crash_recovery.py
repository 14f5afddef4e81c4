"""Benchmark: crash recovery of a live query (issues 6 and 17), N trials (default 20) per
exactly-once sink.

Run on demand:  python bench/crash_recovery.py [--sink folder|file|kafka|all] [--trials N]
[--seed S] [--keep DIR]

The market query of tests/spark (SPAseq, ``PARTITION BY ?company`` over two partitions, key
projected) runs live over a folder of N-Quads files (:func:`rsep.spark.live.main`, the
command ``python -m rsep.spark.live``, in a process of its own; one file per trigger), its
answers going to one of the sinks that promise exactly once (:mod:`rsep.spark.sink`): a
folder of batch files, the JSON Lines file that ``rsep run --output FILE`` writes, or a
Kafka topic (on a noida-db broker started here, tests/spark/broker.py). Each trial kills
the run's process group (driver and JVM) with SIGKILL after a random number of committed
micro-batches plus a random delay of up to two seconds, restarts the query from its
checkpoint until the files are used up (``availableNow``), and compares the answers the
sink holds with those of an uninterrupted run, which themselves equal the oracle's
(``rsep.semantics.evaluate``): no answer lost, none changed, none written twice. It prints
one line per trial and the tally ``k of N trials equal`` per sink; the exit status is 1 if
any trial differs. The slow test ``tests/spark/test_live.py::test_crash_recovery`` runs 5
trials per sink through :func:`trials`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "spark"))

from test_live import KEYED, arrive, tick  # noqa: E402
from test_replay import canonical, compiled, market, oracle  # noqa: E402

from rsep.spark.kafka import KafkaAddress, create_topic  # noqa: E402
from rsep.spark.live import start_live  # noqa: E402
from rsep.spark.session import get_session  # noqa: E402
from rsep.spark.sink import FolderSink, KafkaSink, Sink, TextSink  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from rsep.algebra.plan import Plan


LAUNCH = "import sys; from rsep.spark.live import main; sys.exit(main(sys.argv[1:]))"
"""``python -m rsep.spark.live`` with the module imported under its own name: run as
``__main__``, its state class pickles as ``__main__._State``, which Spark's Python workers
cannot find again (the first micro-batch fails and the run ends before any kill)."""
SINKS = ("folder", "file", "kafka")


@dataclass
class Trial:
    """One kill and restart: when the kill came and what the restart gave."""

    number: int
    commits_at_kill: int
    answers_at_kill: int
    answers: int
    duplicates: int
    equal: bool
    seconds: float
    error: str = ""

    def line(self, sink: str) -> str:
        """The trial as the bench prints it."""
        return (
            f"{sink} trial {self.number + 1:>2}: killed after {self.commits_at_kill} committed "
            f"batches ({self.answers_at_kill} answers written), restart gave {self.answers} "
            f"answers, {self.duplicates} twice: {'equal' if self.equal else 'DIFFERENT'} "
            f"({self.seconds:.1f} s)" + (f" {self.error}" if self.error else "")
        )


@dataclass
class Target:
    """An exactly-once sink of the trials: the address the killed run writes to and the
    sink the restart writes to, per trial."""

    kind: str
    folder: Path
    bootstrap: str | None = None

    def address(self, number: int) -> str:
        """``--output`` of the killed run: a folder, a ``.jsonl`` file or a topic."""
        if self.kind == "folder":
            return str(self.folder / f"out-{number}")
        if self.kind == "file":
            return str(self.folder / f"out-{number}.jsonl")
        assert self.bootstrap is not None
        address = KafkaAddress(self.bootstrap, f"answers-{number}")
        create_topic(address)
        return address.url

    def sink(self, number: int) -> Sink:
        """The same place as a sink."""
        if self.kind == "folder":
            return FolderSink(self.folder / f"out-{number}")
        if self.kind == "file":
            return TextSink(self.folder / f"out-{number}.jsonl")
        assert self.bootstrap is not None
        return KafkaSink(KafkaAddress(self.bootstrap, f"answers-{number}"))

    def written(self, number: int) -> int:
        """Answers the sink holds now (a torn last line is not one)."""
        try:
            return len(self.sink(number).lines())
        except Exception:
            return 0


def prepare(folder: Path, events: int) -> tuple[Plan, list[str], int]:
    """Write the query and the market's events as arriving files (15 events a file, then a
    tick far ahead so the watermark passes every event); the plan, the oracle's answers and
    the number of files."""
    plan = compiled(KEYED)
    (folder / "query.q").write_text(KEYED, encoding="utf-8")
    stream = market(8, events)
    chunks = [stream[i : i + 15] for i in range(0, len(stream), 15)]
    for index, chunk in enumerate([*chunks, [tick(10**7)]]):
        arrive(folder / "in", f"part-{index}.nq", chunk)
    return plan, oracle(plan, stream), len(chunks) + 1


def commits(checkpoint: Path) -> int:
    """Micro-batches the checkpoint records as committed."""
    found = checkpoint / "commits"
    return sum(p.name.isdigit() for p in found.iterdir()) if found.is_dir() else 0


def trial(
    spark: SparkSession,
    plan: Plan,
    folder: Path,
    number: int,
    files: int,
    expected: list[str],
    rng: random.Random,
    master: str,
    target: Target,
) -> Trial:
    """Start the live query in a process of its own, SIGKILL its process group after a random
    number of committed batches (at least two files left) and delay, restart from the checkpoint in
    this process until the files are used up, and compare the answers with ``expected``."""
    started = time.perf_counter()
    checkpoint = folder / f"ck-{target.kind}-{number}"
    command = [
        sys.executable, "-c", LAUNCH, str(folder / "query.q"),
        "--source", str(folder / "in"), "--checkpoint", str(checkpoint),
        "--output", target.address(number), "--partitions", "2",
        "--max-files-per-trigger", "1", "--master", master,
    ]  # fmt: skip
    log_path = folder / f"live-{target.kind}-{number}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, start_new_session=True, stderr=log)
    batches = rng.randrange(1, files - 1)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None and commits(checkpoint) < batches:
        time.sleep(0.1)
    time.sleep(rng.random() * 2)
    at_kill = commits(checkpoint)
    answers_at_kill = target.written(number)
    ended = process.poll()
    if ended is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    try:
        if ended is not None:
            tail = log_path.read_text(errors="replace").strip()
            last = tail.splitlines()[-1] if tail else ""
            raise RuntimeError(f"the live run ended by itself (status {ended}): {last}")
        restarted = start_live(
            spark, plan, folder / "in", checkpoint, target.sink(number), available_now=True
        )
        restarted.wait()
        found = [json.dumps(r.to_json(), sort_keys=True) for r in target.sink(number).results()]
    except Exception as exc:  # a failed restart is a differing trial, not the end of the run
        seconds = time.perf_counter() - started
        return Trial(number, at_kill, answers_at_kill, 0, 0, False, seconds, str(exc)[:200])
    duplicates = len(found) - len(set(found))
    equal = sorted(found) == expected
    seconds = time.perf_counter() - started
    return Trial(number, at_kill, answers_at_kill, len(found), duplicates, equal, seconds)


def trials(
    spark: SparkSession,
    folder: Path,
    kind: str,
    count: int,
    *,
    seed: int = 6,
    events: int = 90,
    master: str = "local[2]",
    bootstrap: str | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Iterator[Trial]:
    """``count`` trials of the sink ``kind`` (folder, file, kafka: its broker at
    ``bootstrap``) in ``folder``, after an uninterrupted run whose answers must be the
    oracle's (else :class:`AssertionError`)."""
    work = folder / kind
    work.mkdir(parents=True, exist_ok=True)
    plan, from_oracle, files = prepare(work, events)
    whole = start_live(
        spark, plan, work / "in", work / "ck-whole", work / "out-whole", partitions=2,
        available_now=True,
    )  # fmt: skip
    whole.wait()
    expected = canonical(whole.results())
    say(
        f"{kind}: uninterrupted run: {len(expected)} answers, "
        f"{'equal to' if expected == from_oracle else 'DIFFERENT FROM'} the oracle's "
        f"{len(from_oracle)}; {files} files"
    )
    assert expected == from_oracle, "the uninterrupted run differs from the oracle"
    rng = random.Random(seed)
    target = Target(kind, work, bootstrap)
    for number in range(count):
        yield trial(spark, plan, work, number, files, expected, rng, master, target)


def main(argv: list[str] | None = None) -> int:
    """Run the trials and print the tallies; 1 if any trial differs."""
    p = argparse.ArgumentParser(prog="python bench/crash_recovery.py", description=__doc__)
    p.add_argument("--sink", choices=[*SINKS, "all"], default="all")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--seed", type=int, default=6, help="seed of the kill points")
    p.add_argument("--events", type=int, default=90, help="market events (15 per file)")
    p.add_argument("--master", default="local[2]", help="Spark master of the killed runs")
    p.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    args = p.parse_args(argv)
    began = time.perf_counter()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="rsep-crash-"))
    folder.mkdir(parents=True, exist_ok=True)
    kinds = SINKS if args.sink == "all" else (args.sink,)
    broker = None
    try:
        log4j = REPO / "src" / "rsep" / "spark" / "log4j2.properties"
        spark = get_session(
            "local[2]",
            app_name="rsep-crash-bench",
            conf={
                "spark.sql.shuffle.partitions": "2",
                "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 "
                f"-Dlog4j.configurationFile={log4j.as_uri()}",
            },
        )
        if "kafka" in kinds:
            from broker import Broker

            (folder / "broker").mkdir(exist_ok=True)
            broker = Broker(folder / "broker")
            broker.start()
        failed = 0
        for kind in kinds:
            cpu = time.process_time()
            wall = time.perf_counter()
            tally = 0
            for found in trials(
                spark, folder, kind, args.trials, seed=args.seed, events=args.events,
                master=args.master, bootstrap=broker.bootstrap if broker else None,
                say=lambda line: print(line, flush=True),
            ):  # fmt: skip
                tally += found.equal
                print(found.line(kind), flush=True)
            failed += args.trials - tally
            print(
                f"{kind}: {tally} of {args.trials} trials equal "
                f"({time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} CPU s "
                f"in this process; load {' '.join(f'{x:.1f}' for x in os.getloadavg())})",
                flush=True,
            )
        print(f"all sinks: {time.perf_counter() - began:.0f} s wall", flush=True)
        spark.stop()
        return 0 if failed == 0 else 1
    finally:
        if broker is not None:
            broker.stop()
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
