"""``rsep bench`` and its harness (rsep.workloads.bench): on a tiny stock workload the
figures are the counts and ratios they claim to be, live mode measures latencies, a point
measured in a child process gives the in-process answers, and the outputs (JSON, table,
plot, docs section) are written."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from rsep.cli import main as cli
from rsep.errors import UserError
from rsep.workloads import bench
from rsep.workloads.baselines import VShape
from rsep.workloads.bench import (
    SOURCES,
    SYSTEMS,
    TRIPLES_PER_BAR,
    Data,
    Measurement,
    Point,
    markdown_table,
    measure,
    percentile,
    prepare,
    prepare_bars,
    record,
    run_point,
    sweep,
)
from rsep.workloads.stock import planted_vshapes, write_vshape_bars

EVENTS = 200
VSHAPES = 14
"""The strict 3-step V shapes planted in 200 bars: 7 tickers of 28 or 29 bars, one V in
each ten (rsep.workloads.stock.vshape_bars)."""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    """Synthetic bars with known V shapes (the same with or without ../shared)."""
    folder = tmp_path_factory.mktemp("bench-data")
    return prepare_bars(write_vshape_bars(folder, EVENTS), folder)


@pytest.fixture(scope="module")
def engine(data: Data) -> Measurement:
    return measure(Point("stock-vshape", "rsep", EVENTS, VShape()), data)


def test_the_figures_are_counts_over_the_measured_time(data: Data, engine: Measurement) -> None:
    assert data.events == EVENTS and data.triples == EVENTS * TRIPLES_PER_BAR
    assert engine.events == EVENTS and engine.triples == EVENTS * TRIPLES_PER_BAR
    assert planted_vshapes(EVENTS) == VSHAPES
    assert engine.results == len(engine.answers) == VSHAPES
    assert engine.seconds > 0
    assert engine.events_per_second == pytest.approx(EVENTS / engine.seconds)
    assert engine.triples_per_second == pytest.approx(EVENTS * TRIPLES_PER_BAR / engine.seconds)
    assert 10 < engine.peak_rss_mib < 4096
    assert len(engine.load) == 3


def test_without_the_real_sample_the_workload_has_the_planted_v_shapes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, engine: Measurement
) -> None:
    """On a clone without ../shared, ``prepare`` makes the planted bars, and the naive
    baseline finds the same V shapes in them as the engine."""
    monkeypatch.setattr(bench, "NASDAQ", (tmp_path / "absent.txt",))
    made = prepare(tmp_path, EVENTS)
    assert "vshape_synthetic" in made.csv.name and made.events == EVENTS
    naive = measure(Point("stock-vshape", "naive", EVENTS, VShape()), made)
    assert naive.answers == engine.answers


def test_the_event_store_gives_the_same_answers(data: Data, engine: Measurement) -> None:
    store = measure(Point("stock-vshape", "rsep", EVENTS, VShape(), source="parquet"), data)
    assert store.events == EVENTS and store.answers == engine.answers


def test_bars_are_prepared_in_chunks_as_in_one(data: Data, tmp_path: Path) -> None:
    """Mapped 64 bars at a time (how 10 M bars fit in memory), the N-Quads are the same
    bytes and the store the same events (ids from the file's own lines)."""
    csv = tmp_path / data.csv.name
    csv.write_bytes(data.csv.read_bytes())
    chunked = prepare_bars(csv, tmp_path, chunk=64)
    assert chunked.events == EVENTS
    assert chunked.nquads.read_bytes() == data.nquads.read_bytes()
    files = sorted(chunked.store.rglob("*.parquet"))
    assert len(files) >= 4  # one file (at least) per chunk

    # events of one instant are a set: a chunk cut inside an instant orders them apart
    def events(store: Path) -> list[tuple[int, str, list[str]]]:
        read = bench.read_store_events(store)
        return sorted((e.t_start, str(e.id), sorted(map(str, e.graph))) for e in read)

    assert events(chunked.store) == events(data.store)


def test_a_point_past_its_timeout_is_stopped(data: Data) -> None:
    """``rsep bench --timeout`` reaches each point's child (it stopped at the default
    900 s before): a child that cannot finish in 0.2 s is stopped, with a note."""
    point = Point("stock-vshape", "rsep", EVENTS, VShape())
    (found,) = bench.run_sweep([point], lambda _: data, timeout=0.2)
    assert found.note == "stopped after 0 s" and found.results == 0


def test_a_bar_out_of_time_order_is_refused_with_its_line(tmp_path: Path) -> None:
    csv = tmp_path / "bars.txt"
    csv.write_text("AAPL,200802010901,1,1,1,1,10\nAAPL,200802010900,1,1,1,1,10\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bars.txt:2: bar earlier"):
        prepare_bars(csv, tmp_path)


def test_live_mode_measures_detection_latency(data: Data, engine: Measurement) -> None:
    """Fed at 20,000 triples/s: every answer has a latency, p50 <= p99, the same answers."""
    live = measure(Point("stock-vshape", "rsep-live", EVENTS, VShape(), rate=20_000), data)
    assert live.answers == engine.answers
    assert live.latency_p50_ms is not None and live.latency_p99_ms is not None
    assert 0 <= live.latency_p50_ms <= live.latency_p99_ms
    assert live.seconds >= EVENTS * TRIPLES_PER_BAR / 20_000  # paced, not faster
    assert live.note.startswith("fed ")  # "fed N triples/s over S s"
    fed = float(live.note.split()[1].replace(",", ""))
    assert 0 < fed <= 20_000 * 1.05


def test_a_point_in_a_child_process(data: Data, engine: Measurement) -> None:
    child = run_point(Point("stock-vshape", "rsep", EVENTS, VShape()), data)
    assert child.note == ""
    assert child.results == engine.results and child.events == EVENTS
    assert child.total_seconds >= child.seconds > 0


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(100, 0, -1)]
    assert percentile(values, 0.5) == 50.0 and percentile(values, 0.99) == 99.0
    assert percentile([7.0], 0.99) == 7.0


def test_the_measured_code_is_imported_before_the_clock() -> None:
    """Every system and source that imports its reader or engine lazily names the modules
    :func:`measure` imports first, and they exist ("read" and "flink" import nothing)."""
    assert set(bench._MODULES) == set(SYSTEMS) - {"read", "flink"}
    assert set(bench._SOURCE_MODULES) == set(SOURCES)
    for modules in (*bench._MODULES.values(), *bench._SOURCE_MODULES.values()):
        for module in modules:
            importlib.import_module(module)


def test_sweep_varies_one_parameter_at_a_time() -> None:
    base = Point("stock-vshape", "rsep", 10, VShape())
    points = sweep(base, steps=[3, 4, 5], kb_triples=[0, 1000])
    assert [(p.shape.steps, p.kb_triples) for p in points] == [(3, 0), (4, 0), (5, 0), (3, 1000)]
    assert sweep(base) == [base]


def test_record_replaces_its_own_section(tmp_path: Path, engine: Measurement) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n### Other\n\nkept\n", encoding="utf-8")
    record(doc, "V shape", "rsep bench x", [engine], [])
    record(doc, "V shape", "rsep bench y", [engine], [])
    text = doc.read_text(encoding="utf-8")
    assert text.count("### V shape") == 1 and "rsep bench y" in text and "rsep bench x" not in text
    assert "### Other\n\nkept" in text and "cores" in text and "load average" in text
    assert f"| rsep | nquads | {EVENTS} |" in markdown_table([engine])


def test_the_command_writes_json_table_plot_and_section(tmp_path: Path, data: Data) -> None:
    out, doc = tmp_path / "out", tmp_path / "docs" / "benchmarks.md"
    code = cli.main(
        ["bench", "stock-vshape", "--system", "naive", "--events", str(EVENTS), "--steps", "3",
         "4", "--in-process", "--data", str(data.csv.parent), "--out", str(out), "--record",
         str(doc), "--quiet"]
    )  # fmt: skip
    assert code == 0
    rows = json.loads((out / "stock-vshape.json").read_text(encoding="utf-8"))
    assert [(r["point"]["shape"]["steps"], r["events"]) for r in rows] == [(3, EVENTS), (4, EVENTS)]
    assert rows[0]["results"] >= rows[1]["results"]
    assert rows[0]["events_per_second"] == pytest.approx(EVENTS / rows[0]["seconds"])
    assert (out / "stock-vshape.md").read_text(encoding="utf-8").count("| naive |") == 2
    assert "### stock-vshape: steps 3 4" in doc.read_text(encoding="utf-8")
    pytest.importorskip("matplotlib")
    assert list((doc.parent / "img").glob("stock-vshape-naive-steps-3-4.png"))


def test_bad_arguments_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["bench", "no-such-workload"]) == cli.EXIT_USER_ERROR
    assert "unknown workload" in capsys.readouterr().err
    assert cli.main(["bench", "stock-vshape", "--system", "esper"]) == cli.EXIT_USER_ERROR
    assert "unknown system" in capsys.readouterr().err
    monkeypatch.delenv("RSEP_FLINK_PYTHON", raising=False)
    assert cli.main(["bench", "stock-vshape", "--system", "flink"]) == cli.EXIT_USER_ERROR
    assert "RSEP_FLINK_PYTHON" in capsys.readouterr().err


def test_each_plot_takes_the_points_that_vary_its_parameter_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from rsep.cli import bench as command
    from rsep.workloads import bench as harness

    base = Point("stock-vshape", "naive", 10, VShape())
    points = sweep(base, steps=[3, 4], window_ms=[3_600_000, 600_000])
    measurements = [Measurement(p, seconds=1.0) for p in points]
    drawn: dict[str, list[Point]] = {}

    def fake_plot(chosen: list[Measurement], path: Path, varied: str) -> Path:
        drawn[varied] = [m.point for m in chosen]
        return path

    monkeypatch.setattr(harness, "plot", fake_plot)
    centre = {
        "events": 10,
        "kb_triples": 0,
        "window_ms": 3_600_000,
        "steps": 3,
        "strategy": "strict",
    }
    values = {"steps": [3, 4], "window_ms": [3_600_000, 600_000]}
    command.draw(measurements, values, centre, tmp_path, "x")
    assert [p.shape.steps for p in drawn["steps"]] == [3, 4]
    assert [p.shape.window_ms for p in drawn["window_ms"]] == [3_600_000, 600_000]
