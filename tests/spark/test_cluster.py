"""The Spark engine on a standalone cluster (issue 6): ``rsep run --engine spark --master
spark://…`` in a process of its own (the suite's shared local session cannot change master)
against a master and two workers on this machine (tests/spark/cluster.py); the oracle's
answers, computed by executors on both workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cluster import Cluster, application_id, event_log, standalone_cluster, tasks_per_executor
from test_replay import PARTITIONED, canonical, compiled, market, oracle, write_parts

from rsep.rdf.formats import read_events
from rsep.rdf.results import read_results
from rsep.semantics.graph import read_graph

pytestmark = [pytest.mark.spark, pytest.mark.slow]

KB = "http://www.example.com/kb"


def run_spark(cluster: Cluster, query: Path, out: Path, *data: str) -> str:
    """``rsep run QUERY DATA… --engine spark --master spark://…`` in a process of its own,
    the answers to ``out``; its standard error."""
    command = [
        sys.executable, "-m", "rsep.cli.main", "run", str(query), *data,
        "--engine", "spark", "--master", cluster.url, "--output", str(out),
    ]  # fmt: skip
    done = subprocess.run(
        command, env=cluster.client_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:] + "\n" + cluster.logs()
    return done.stderr


def test_replay_on_two_workers(shared_data: Path, tmp_path: Path) -> None:
    """externalknowledgebase (SPAseq: ``PARTITION BY ?company``, C joined with the knowledge
    base graph, Def. 15) replayed on ``spark://`` with two one-core workers: the oracle's
    one match, and tasks run by an executor of each worker."""
    base = shared_data / "spaseq" / "tests" / "externalknowledgebase"
    query, stream, kb = base / "queryKB.q", base / "streamKB.txt", base / "externalKB.nt"
    plan = compiled(query.read_text(encoding="utf-8"))
    expected = oracle(plan, list(read_events(stream)), {KB: read_graph(kb)})
    assert len(expected) == 1
    out = tmp_path / "results.jsonl"
    with standalone_cluster(tmp_path / "cluster", workers=2) as cluster:
        run_spark(cluster, query, out, "--stream", str(stream), "--graph", f"{KB}={kb}")
        events = event_log(cluster.events)
        app = application_id(events)
        on_workers = cluster.executors(app)
        state = cluster.master_state()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert canonical(read_results(lines, str(out))) == expected
    assert [json.loads(line)["time"] for line in lines] == sorted(
        json.loads(line)["time"] for line in lines
    )
    # the application ran on the cluster, with one executor on each worker ...
    assert [a["id"] for a in state["completedapps"] + state["activeapps"]] == [app]
    assert len(on_workers) == 2 and all(len(ids) == 1 for ids in on_workers.values())
    # ... and each of those executors ran tasks of the job
    tasks = tasks_per_executor(events)
    for ui, ids in on_workers.items():
        assert sum(tasks[i] for i in ids) > 0, f"no task ran on the worker at {ui}: {tasks}"
    assert "driver" not in tasks


def test_columnar_on_two_workers(tmp_path: Path) -> None:
    """The columnar engine in tasks (rsep.spark.columnar) on ``spark://``: SEQ (A; N; B)
    partitioned by ?company over stocks and news (news without a key go to every
    partition) in three part files, read by tasks on both workers; the oracle's answers
    once each, though the projection drops the key (merged in Spark)."""
    text = PARTITIONED
    query = tmp_path / "query.spaseq"
    query.write_text(text, encoding="utf-8")
    events = market(11, 120)
    folder = write_parts(events, tmp_path / "market", 3)
    expected = oracle(compiled(text), events)
    assert expected
    out = tmp_path / "results.jsonl"
    with standalone_cluster(tmp_path / "cluster", workers=2) as cluster:
        err = run_spark(cluster, query, out, "--stream", str(folder), "--progress")
        events_log = event_log(cluster.events)
        on_workers = cluster.executors(application_id(events_log))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert canonical(read_results(lines, str(out))) == expected
    tasks = tasks_per_executor(events_log)
    for ui, ids in on_workers.items():
        assert sum(tasks[i] for i in ids) > 0, f"no task ran on the worker at {ui}: {tasks}"
    # only the columnar engine counts the FILTER rows it evaluates exactly
    assert f"rsep: {len(events):,} records read, " in err and "evaluated exactly" in err, err
