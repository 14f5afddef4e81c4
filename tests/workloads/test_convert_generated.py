"""Generated workloads go through the shipped ``rsep convert`` mappings unchanged: generate,
convert (N-Quads), read the events back and find the generated values in them."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyoxigraph import Literal

from rsep.cli import main as cli
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events
from rsep.workloads import SYNTHETIC, write_bars, write_homec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def convert(mapping: str, source: Path, output: Path) -> list[Event]:
    """``rsep convert`` of ``source`` to N-Quads, read back in file order."""
    args = ["convert", "-q", "-m", mapping, "-f", "nquads", "-o", str(output), str(source)]
    assert cli.main(args) == 0
    return list(read_events(output))


def values(event: Event, predicate: str) -> list[str]:
    return [
        t.object.value
        for t in event.graph
        if str(t.predicate) == f"<{predicate}>" and isinstance(t.object, Literal)
    ]


def test_generated_bars_convert_with_nasdaq_bars(spark: SparkSession, tmp_path: Path) -> None:
    """300 synthetic bars become 300 stock events of the nasdaq-bars mapping, each with the
    line's close as pred:price and its ticker (SYN…) as the company, in time order."""
    path = write_bars(tmp_path / "bars", 300, seed=4, tickers=5)
    lines = [line.split(",") for line in path.read_text().splitlines()]
    events = convert("nasdaq-bars", path, tmp_path / "bars.nq")
    assert len(events) == 300
    assert {e.stream for e in events} == {"http://example.org/stream/nasdaq"}
    assert [e.t_start for e in events] == sorted(e.t_start for e in events)
    found = sorted(
        (str(t.subject), float(t.object.value))
        for e in events
        for t in e.graph
        if str(t.predicate) == "<http://example/price>" and isinstance(t.object, Literal)
    )
    assert found == sorted((f"<http://example/company#{f[0]}>", float(f[5])) for f in lines)
    assert all(subject.startswith("<http://example/company#SYN") for subject, _ in found)


@pytest.mark.parametrize(
    ("mapping", "stream", "predicate", "column"),
    [
        ("homec-smarthome", "http://www.smart.com/homec", "http://www.smart.com/use", "use [kW]"),
        ("homec-power", "http://www.smart.com/power", "http://www.smart.com/use", "use [kW]"),
        (
            "homec-generation",
            "http://www.smart.com/generation",
            "http://www.smart.com/gen",
            "gen [kW]",
        ),
        (
            "homec-weather",
            "http://www.smart.com/environmental",
            "http://www.smart.com/summary",
            "summary",
        ),
    ],
)
def test_generated_homec_converts_with_the_homec_mappings(
    spark: SparkSession, tmp_path: Path, mapping: str, stream: str, predicate: str, column: str
) -> None:
    """120 synthetic HomeC rows become 120 events of each HomeC mapping, one per second
    from the sample's start, each carrying its row's value (the weather's summary says
    the row is synthetic)."""
    path = write_homec(tmp_path / "homec", 120, seed=6)
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    events = convert(mapping, path, tmp_path / f"{mapping}.nq")
    assert len(events) == 120
    assert {e.stream for e in events} == {stream}
    by_time = {e.t_start: e for e in events}
    for row in rows:
        (found,) = values(by_time[int(row["time"]) * 1000], predicate)
        if column == "summary":
            assert found == row[column] and found.endswith(f"({SYNTHETIC})")
        else:
            assert float(found) == float(row[column])
