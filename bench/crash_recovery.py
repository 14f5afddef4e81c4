"""Benchmark: crash recovery of a live query (issue 6), N trials (default 20).

Run on demand (not in CI):  python bench/crash_recovery.py [--trials N] [--seed S] [--keep DIR]

The market query of tests/spark (SPAseq, ``PARTITION BY ?company`` over two partitions, key
projected) runs live over a folder of N-Quads files (:func:`rsep.spark.live.main`, the
command ``python -m rsep.spark.live``, in a process of its own; one file per trigger). Each
trial kills the run's process group (driver and JVM) with SIGKILL after a random number of
committed micro-batches plus a random delay of up to two seconds, restarts the query from
its checkpoint until the files are used up (``availableNow``), and compares the answers with
those of an uninterrupted run, which themselves equal the oracle's
(``rsep.semantics.evaluate``): no answer lost, none changed, none written twice. It prints
one line per trial and the tally ``k of N trials equal``; the exit status is 1 if any trial
differs.

The data, the query and the trial are those of the slow test
``tests/spark/test_live.py::test_crash_recovery`` (imported from there, not copied).
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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "spark"))

from test_live import KEYED, arrive, tick  # noqa: E402
from test_replay import canonical, compiled, market, oracle  # noqa: E402

from rsep.spark.live import read_output, start_live  # noqa: E402
from rsep.spark.session import get_session  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from rsep.algebra.plan import Plan


LAUNCH = "import sys; from rsep.spark.live import main; sys.exit(main(sys.argv[1:]))"
"""``python -m rsep.spark.live`` with the module imported under its own name: run as
``__main__``, its state class pickles as ``__main__._State``, which Spark's Python workers
cannot find again (the first micro-batch fails and the run ends before any kill)."""


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
    folder = checkpoint / "commits"
    return sum(p.name.isdigit() for p in folder.iterdir()) if folder.is_dir() else 0


def trial(
    spark: SparkSession,
    plan: Plan,
    folder: Path,
    number: int,
    files: int,
    expected: list[str],
    rng: random.Random,
    master: str,
) -> Trial:
    """Start the live query in a process of its own, SIGKILL its process group after a random
    number of committed batches (at least two files left) and delay, restart from the checkpoint in
    this process until the files are used up, and compare the answers with ``expected``."""
    started = time.perf_counter()
    checkpoint, output = folder / f"ck-{number}", folder / f"out-{number}"
    command = [
        sys.executable, "-c", LAUNCH, str(folder / "query.q"),
        "--source", str(folder / "in"), "--checkpoint", str(checkpoint),
        "--output", str(output), "--partitions", "2", "--max-files-per-trigger", "1",
        "--master", master,
    ]  # fmt: skip
    with (folder / f"live-{number}.log").open("wb") as log:
        process = subprocess.Popen(command, start_new_session=True, stderr=log)
    batches = rng.randrange(1, files - 1)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None and commits(checkpoint) < batches:
        time.sleep(0.1)
    time.sleep(rng.random() * 2)
    at_kill = commits(checkpoint)
    answers_at_kill = len(read_output(output)) if output.is_dir() else 0
    ended = process.poll()
    if ended is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    try:
        if ended is not None:
            tail = (folder / f"live-{number}.log").read_text(errors="replace").strip()
            last = tail.splitlines()[-1] if tail else ""
            raise RuntimeError(f"the live run ended by itself (status {ended}): {last}")
        restarted = start_live(spark, plan, folder / "in", checkpoint, output, available_now=True)
        restarted.wait()
        found = [json.dumps(r.to_json(), sort_keys=True) for r in restarted.results()]
    except Exception as exc:  # a failed restart is a differing trial, not the end of the run
        seconds = time.perf_counter() - started
        return Trial(number, at_kill, answers_at_kill, 0, 0, False, seconds, str(exc)[:200])
    duplicates = len(found) - len(set(found))
    equal = duplicates == 0 and sorted(found) == expected
    return Trial(
        number,
        at_kill,
        answers_at_kill,
        len(found),
        duplicates,
        equal,
        time.perf_counter() - started,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the trials and print the tally; 1 if any trial differs."""
    p = argparse.ArgumentParser(prog="python bench/crash_recovery.py", description=__doc__)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--seed", type=int, default=6, help="seed of the kill points")
    p.add_argument("--events", type=int, default=90, help="market events (15 per file)")
    p.add_argument("--master", default="local[2]", help="Spark master of the killed runs")
    p.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    args = p.parse_args(argv)
    began = time.perf_counter()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="rsep-crash-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        plan, from_oracle, files = prepare(folder, args.events)
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
        whole = start_live(
            spark,
            plan,
            folder / "in",
            folder / "ck-whole",
            folder / "out-whole",
            partitions=2,
            available_now=True,
        )
        whole.wait()
        expected = canonical(whole.results())
        print(
            f"uninterrupted run: {len(expected)} answers, "
            f"{'equal to' if expected == from_oracle else 'DIFFERENT FROM'} the oracle's "
            f"{len(from_oracle)}; {files} files",
            flush=True,
        )
        if expected != from_oracle:
            return 1
        rng = random.Random(args.seed)
        tally = 0
        for number in range(args.trials):
            found = trial(spark, plan, folder, number, files, expected, rng, args.master)
            tally += found.equal
            print(
                f"trial {number + 1:>2}: killed after {found.commits_at_kill} committed batches "
                f"({found.answers_at_kill} answers written), restart gave {found.answers} "
                f"answers, {found.duplicates} twice: "
                f"{'equal' if found.equal else 'DIFFERENT'} ({found.seconds:.1f} s)"
                + (f" {found.error}" if found.error else ""),
                flush=True,
            )
        wall = time.perf_counter() - began
        print(f"{tally} of {args.trials} trials equal ({wall:.0f} s wall time)", flush=True)
        spark.stop()
        return 0 if tally == args.trials else 1
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
