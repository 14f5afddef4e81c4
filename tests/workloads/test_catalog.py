"""rsep.workloads.catalog: every named workload of ``rsep bench``, at a tiny size of its real
data, has answers, the same from every system that runs it (the engine from N-Quads and
from the event store, the oracle, the naive baseline where there is one); where an example's
README worked the answers out by hand, the count is that one; the V shape also by hand
over the event store (vectorised). Skips without ../shared."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rsep.cli import main as cli
from rsep.workloads.baselines import VShape
from rsep.workloads.bench import Data, Measurement, Point, check_answers, measure
from rsep.workloads.catalog import WORKLOADS, workload

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HOUR = 3_600_000
CASES: list[tuple[str, int, VShape | None, int | None]] = [
    # workload, events, V shape (None: the workload's fixed query), answers known by hand
    ("stock-vshape", 400, VShape(HOUR, 3, "strict"), None),
    ("stock-vshape", 400, VShape(HOUR, 4, "strict"), None),
    ("stock-vshape", 400, VShape(HOUR, 5, "next"), None),
    ("stock-vshape", 400, VShape(HOUR, 7, "next"), None),
    ("stock-vshape-any", 300, None, None),
    ("stock-head-shoulders", 800, None, None),
    ("card-big-after-small", 250, None, 3),  # examples/uc3-credit-card: the first three
    ("card-kleene", 250, None, None),
    ("smart-grid", 1_704, None, 1),  # examples/uc1-smart-grid: rows 559-561
    ("traffic-congestion", 300, None, 7),  # examples/uc5-traffic: the seven of 2014-08-01
    ("citybench-q1", 300, None, None),
]


@pytest.fixture(scope="module")
def folder(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("catalog")


def prepared(folder: Path, name: str, events: int) -> Data:
    data = workload(name).prepare(folder, events, 0)
    assert data.events == events and data.triples > events
    return data


def test_every_workload_is_tested() -> None:
    assert {case[0] for case in CASES} == set(WORKLOADS)


@pytest.mark.parametrize(("name", "events", "shape", "known"), CASES)
def test_a_workload_gives_the_same_answers_on_every_system(
    folder: Path, name: str, events: int, shape: VShape | None, known: int | None
) -> None:
    entry = workload(name)
    data = prepared(folder, name, events)
    shape = shape or entry.shape or VShape()
    systems = [s for s in ("rsep", "oracle", "naive", "vectorised") if s in entry.systems]
    found: dict[str, Measurement] = {
        system: measure(Point(name, system, events, shape), data) for system in systems
    }
    found["store"] = measure(Point(name, "rsep", events, shape, source="parquet"), data)
    first = found["rsep"]
    assert first.results == len(first.answers) > 0
    assert first.events == events
    if known is not None:
        assert first.results == known
    for system, m in found.items():
        assert m.answers == first.answers, system


def test_citybench_q1_live_gives_the_engines_answers_with_latencies(folder: Path) -> None:
    """CityBench Q1 (RSP-QL windows, not a sequence) fed live gives the answers of the
    engine over the file and a latency per answer; its reports are replayed 300 times
    faster than real time, one report a second per segment, and every answer is at an
    instant when both segments' last three reports are in the 3 s windows."""
    data = prepared(folder, "citybench-q1", 120)
    live = measure(Point("citybench-q1", "rsep-live", 120, rate=20_000), data)
    engine = measure(Point("citybench-q1", "rsep", 120), data)
    assert live.answers == engine.answers and live.results > 0
    assert live.digest == engine.digest
    assert live.latency_p50_ms is not None and live.latency_p99_ms is not None
    assert 0 <= live.latency_p50_ms <= live.latency_p99_ms
    times = sorted({m.time for m in engine.answers})
    assert all(b - a == 1000 for a, b in pairwise(times))


def test_the_bench_notes_answers_that_differ() -> None:
    """Two systems on one point with different answers: the second is noted; a point of
    another size is compared with its own kind only."""
    a = Measurement(Point("citybench-q1", "rsep", 10), results=1, digest="x")
    b = Measurement(Point("citybench-q1", "oracle", 10), results=2, digest="y")
    c = Measurement(Point("citybench-q1", "oracle", 20), results=2, digest="y")
    d = Measurement(Point("citybench-q1", "rsep-live", 10), results=1, digest="x")
    assert check_answers([a, b, c, d]) == [
        "citybench-q1 oracle/- n=10 kb=0: answers differ from rsep/nquads's (2 against 1)"
    ]
    assert b.note.startswith("answers differ") and not a.note and not c.note and not d.note


@pytest.mark.spark
@pytest.mark.slow
def test_three_streams_on_spark(folder: Path, spark: SparkSession) -> None:
    """UC5 (three streams in one file, a conjunction) on ``--engine spark``."""
    data = prepared(folder, "traffic-congestion", 300)
    on_spark = measure(Point("traffic-congestion", "spark", 300), data)
    engine = measure(Point("traffic-congestion", "rsep", 300), data)
    assert on_spark.answers == engine.answers and engine.results == 7


def test_a_fixed_query_takes_no_v_shape_options(capsys: pytest.CaptureFixture[str]) -> None:
    """``--steps`` on a workload whose query is a file is refused, as is a system the
    workload does not run on."""
    assert cli.main(["bench", "card-kleene", "--steps", "4"]) == cli.EXIT_USER_ERROR
    assert "fixed query" in capsys.readouterr().err
    assert cli.main(["bench", "smart-grid", "--system", "naive"]) == cli.EXIT_USER_ERROR
    assert "runs on" in capsys.readouterr().err


def test_the_command_lists_the_workloads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in WORKLOADS)


def test_the_traffic_rows_are_in_time_order(folder: Path) -> None:
    """UC5's three segments come in time order although a segment's own file goes back in
    time (segment 181223 jumps from 2014-08-24 to 2014-08-18), so that events replicated
    past the first 19,222 rows are in time order too."""
    from rsep.workloads.catalog import _segment_rows

    header, rows = _segment_rows(folder)
    column = header.split(",").index("TIMESTAMP")
    times = [row[column] for row in rows]
    assert len(times) > 40_000
    assert times == sorted(times)
