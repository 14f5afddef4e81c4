"""Live queries on Spark Structured Streaming (rsep.spark.live) against the oracle: a SPAseq
folder read as arriving files, PARTITION BY keys over two partitions with the evaluators in
the RocksDB state store, a stop and a restart from the checkpoint (no answer lost, none
twice), and RSP-QL windows. The last instant a live query has seen stays open until the
watermark passes it: each run ends with a tick (an event after every other)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyoxigraph import NamedNode, Triple
from test_replay import PARTITIONED, canonical, compiled, market, oracle

from rsep.errors import UserError
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.formats import read_events, write_events
from rsep.semantics import evaluate
from rsep.spark.live import read_output, start_live

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

EX = "http://example.org/"
KEYED = PARTITIONED.replace("SELECT ?p1 ?p2", "SELECT ?company ?p1 ?p2")
"""The market query with the key projected: live queries partition it."""


def arrive(folder: Path, name: str, events: Sequence[Event]) -> None:
    """Events arriving as one N-Quads file (written under a hidden name, then renamed: the
    file source skips hidden files, so it never sees half a file). The file source takes
    files in order of modification time: each new file is made a second younger than the
    youngest there, so files written within one second still come in order."""
    folder.mkdir(parents=True, exist_ok=True)
    hidden = folder / f".{name}.tmp"
    write_events(events, hidden, "nquads", with_stream=True)
    stamps = [p.stat().st_mtime for p in folder.iterdir() if not p.name.startswith(".")]
    stamp = max([*stamps, time.time()]) + 1
    os.utime(hidden, (stamp, stamp))
    hidden.rename(folder / name)


def tick(t: int) -> Event:
    """An event of a stream the query does not read: it moves the watermark to ``t``."""
    node = NamedNode(EX + "tick")
    return Event.point(EX + "clock", t, [Triple(node, node, node)])


def ticked(base: Path, tmp_path: Path, glob: str, t: int) -> tuple[Path, str]:
    """A copy of the folder ``base`` with a tick at ``t`` arriving after its files, and the
    glob that takes the files ``glob`` takes and the tick."""
    folder = tmp_path / base.name
    shutil.copytree(base, folder)
    arrive(folder, "tick.nq", [tick(t)])
    return folder, "{" + glob + ",tick.nq}"


def test_spaseq_folder_live(spark: SparkSession, shared_data: Path, tmp_path: Path) -> None:
    """kleeneplus's description file taken by the file source, then a tick: once the
    watermark passes the last event, the oracle's three matches."""
    base = shared_data / "spaseq" / "tests" / "kleeneplus"
    plan = compiled((base / "queryKleene.q").read_text(encoding="utf-8"))
    folder, glob = ticked(base, tmp_path, "stream*.txt", 5000)
    live = start_live(
        spark,
        plan,
        folder,
        tmp_path / "checkpoint",
        tmp_path / "out",
        glob=glob,
        available_now=True,
    )
    live.wait()
    assert live.watermark == 4999
    assert not live.scheme.partitioned
    expected = oracle(plan, list(read_events(base / "streamKleene.txt")))
    assert canonical(live.results()) == expected
    assert len(expected) == 3


@pytest.mark.parametrize(
    ("folder", "query", "stream", "count"),
    [
        ("strict-contiguity", "queryIF.q", "streamIF.txt", 1),
        ("skip-till-next", "queryFB.q", "streamFB.txt", 1),
        ("disjunction", "queryDisjunction.q", "streamDisjunction.txt", 1),
        ("conjunction", "queryConjunction.q", "streamConjunction.txt", 0),
        ("negation", "queryNegation.q", "streamNegation.txt", 1),
    ],
)
def test_spaseq_folders_live_on_the_columnar_engine(
    spark: SparkSession,
    shared_data: Path,
    tmp_path: Path,
    folder: str,
    query: str,
    stream: str,
    count: int,
) -> None:
    """The SPAseq folders taken by the file source: the columnar engine's partitions (fed
    Arrow batches of term ids), negation included; the oracle's answers (the counts
    derived by hand in docs/semantics.md)."""
    from rsep.engine.sequence import columnar_reason

    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled((base / query).read_text(encoding="utf-8"))
    assert columnar_reason(plan) is None
    copy, glob = ticked(base, tmp_path, stream, 10**7)
    live = start_live(
        spark, plan, copy, tmp_path / "checkpoint", tmp_path / "out", glob=glob,
        available_now=True,
    )  # fmt: skip
    live.wait()
    expected = oracle(plan, list(read_events(base / stream)))
    assert canonical(live.results()) == expected
    assert len(expected) == count


def test_restart_from_checkpoint(spark: SparkSession, tmp_path: Path) -> None:
    """PARTITION BY ?company over two partitions: half the files, a stop, the other half and
    a restart from the checkpoint give exactly the answers of one uninterrupted run and of
    the oracle (none lost, none twice)."""
    plan = compiled(KEYED)
    events = market(1)
    chunks = [events[i : i + 15] for i in range(0, len(events), 15)]
    last = [tick(10**7)]

    stopped = tmp_path / "stopped"
    for index, chunk in enumerate(chunks[:2]):
        arrive(stopped / "in", f"part-{index}.nq", chunk)
    first = start_live(
        spark,
        plan,
        stopped / "in",
        stopped / "checkpoint",
        stopped / "out",
        partitions=2,
        available_now=True,
        max_files_per_trigger=1,
    )
    first.wait()
    assert first.scheme.partitioned and first.scheme.partitions == 2
    assert first.watermark == 28999  # the instant 29000 is still open
    before = canonical(read_output(stopped / "out"))
    assert before == [a for a in oracle(plan, events) if json.loads(a)["time"] <= 28999]
    for index, chunk in enumerate(chunks[2:], start=2):
        arrive(stopped / "in", f"part-{index}.nq", chunk)
    arrive(stopped / "in", "part-9.nq", last)
    second = start_live(
        spark, plan, stopped / "in", stopped / "checkpoint", stopped / "out", available_now=True
    )
    second.wait()
    restarted = read_output(stopped / "out")

    whole = tmp_path / "whole"
    for index, chunk in enumerate([*chunks, last]):
        arrive(whole / "in", f"part-{index}.nq", chunk)
    once = start_live(
        spark, plan, whole / "in", whole / "checkpoint", whole / "out", available_now=True
    )
    once.wait()

    expected = oracle(plan, events)
    assert len(expected) > len(before)
    assert canonical(restarted) == canonical(once.results()) == expected
    assert [r.time for r in restarted] == sorted(r.time for r in restarted)


def test_checkpoint_of_another_query_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    """A checkpoint records the plan it belongs to; another plan cannot continue it."""
    arrive(tmp_path / "in", "part-0.nq", market(2)[:5])
    live = start_live(
        spark,
        compiled(KEYED),
        tmp_path / "in",
        tmp_path / "ck",
        tmp_path / "out",
        available_now=True,
    )
    live.wait()
    with pytest.raises(UserError, match="checkpoint of another query"):
        start_live(spark, compiled(PARTITIONED), tmp_path / "in", tmp_path / "ck", tmp_path / "out")


def test_rspql_windows_live(spark: SparkSession, shared_data: Path, tmp_path: Path) -> None:
    """A CSR-Bench window query (RSP-QL windows, ContinuousWindowQuery) over its events
    arriving as TriG files, four triggers: the oracle's answers up to the watermark."""
    from rsep.semantics.csrbench import STREAM, plan_of, read_queries, read_stream

    root = shared_data / "csrbench"
    if not (root / "config").is_dir():
        pytest.skip(f"CSR-Bench not found at {root}")
    streams = read_stream(root / "data")
    events = list(streams[STREAM])
    plan = plan_of(read_queries(root)[1], "csparql")
    size = -(-len(events) // 4)
    for index in range(4):
        chunk = events[index * size : (index + 1) * size]
        arrive(tmp_path / "in", f"part-{index}.nq", chunk)
    last = max(e.t_end for e in events)
    arrive(tmp_path / "in", "part-4.nq", [tick(last + 1)])
    live = start_live(
        spark,
        plan,
        tmp_path / "in",
        tmp_path / "checkpoint",
        tmp_path / "out",
        available_now=True,
        max_files_per_trigger=2,
    )
    live.wait()
    mark = live.watermark
    assert mark == max(e.t_end for e in events)
    expected = canonical(evaluate(plan, StreamSet.from_events(events), {}, mark))
    assert canonical(live.results()) == expected
    assert expected


@pytest.mark.slow
@pytest.mark.parametrize("sink", ["folder", "file", "kafka"])
def test_crash_recovery(spark: SparkSession, tmp_path: Path, sink: str) -> None:
    """Kill a live run (SIGKILL of its process group: driver and JVM) at a random point,
    restart from its checkpoint: the answers in each exactly-once sink (a folder, the file
    ``rsep run --output FILE`` writes, a Kafka topic) equal those of an uninterrupted run,
    none lost, none twice. ``RSEP_CRASH_TRIALS`` trials per sink (default 5), the trials of
    bench/crash_recovery.py (which runs 20)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from crash_recovery import trials

    count = int(os.environ.get("RSEP_CRASH_TRIALS", "5"))
    seed = int(os.environ.get("RSEP_CRASH_SEED", "6"))
    broker = None
    if sink == "kafka":
        from broker import Broker

        broker = Broker(tmp_path)
        broker.start()
    try:
        bootstrap = broker.bootstrap if broker else None
        found = list(trials(spark, tmp_path, sink, count, seed=seed, bootstrap=bootstrap))
    finally:
        if broker is not None:
            broker.stop()
    assert [t.line(sink) for t in found if not t.equal] == []
    assert len(found) == count


def test_a_window_in_the_past_live(spark: SparkSession, tmp_path: Path) -> None:
    """RSP-QL's NEARBY over ``[FROM NOW-10 TO NOW-6 STEP 2]`` (a window read 6 late) with
    the time-varying G_shops, its events arriving as two files and a tick: the answers
    tests/api/test_driver.py pins for the oracle and the engine."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
    from test_driver import PAST, PAST_ANSWERS, SHOPS, STREAMS, rows

    import rsep
    from rsep.api.inputs import engine_graphs, read_graphs

    plan = rsep.Query(PAST).plan
    unit = plan.parameters.time_unit
    events = sorted(
        (e for iri, path in STREAMS.items() for e in read_events(path, stream=iri, time_unit=unit)),
        key=lambda e: e.t_end,
    )
    arrive(tmp_path / "in", "part-0.nq", [e for e in events if e.t_end <= 5])
    arrive(tmp_path / "in", "part-1.nq", [e for e in events if e.t_end > 5])
    arrive(tmp_path / "in", "part-2.nq", [tick(10**4)])
    live = start_live(
        spark,
        plan,
        tmp_path / "in",
        tmp_path / "checkpoint",
        tmp_path / "out",
        engine_graphs(read_graphs(SHOPS)),
        available_now=True,
        max_files_per_trigger=1,
    )
    live.wait()
    assert rows(live.results(), ("who", "owner")) == PAST_ANSWERS
