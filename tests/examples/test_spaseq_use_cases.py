"""SPAseq's use cases (SPAseq Sec. 2 and App. A: UC1, UC3, UC4, UC5) on real data slices:
``rsep convert`` turns each slice into events, ``rsep run`` evaluates the query of
``examples/`` with the oracle and with the incremental engine, the two agree, and the
detections are the ones found by reading the data (each README says how)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rsep.cli import main as cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
XSD_DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"


def convert(mapping: str, source: Path, output: Path, *lookup: str) -> Path:
    """``rsep convert`` of ``source`` with ``mapping`` to an N-Quads file (each event
    carries its stream); the Spark session of the test run is reused."""
    args = ["convert", "-q", "-m", mapping, "-f", "nquads", "-o", str(output), str(source)]
    for item in lookup:
        args += ["--lookup", item]
    assert cli.main(args) == 0
    return output


def run_both(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    """The answers of ``rsep run args`` with ``--engine reference`` (the oracle) and with
    ``--engine local`` (the NFA runtime): asserted equal (a bag per instant, compared in a
    canonical order), and returned in the oracle's order."""
    found = []
    capsys.readouterr()
    for engine in ("reference", "local"):
        code = cli.main(["run", *args, "--engine", engine])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        found.append([json.loads(line) for line in captured.out.splitlines() if line.strip()])
    reference, local = found
    canon = [sorted(json.dumps(r, sort_keys=True) for r in answers) for answers in found]
    assert canon[0] == canon[1]
    assert [r["time"] for r in local] == sorted(r["time"] for r in local)  # type: ignore[type-var]
    return reference


def value(answer: dict[str, object], name: str) -> str:
    """The lexical form of a literal binding (``"8"^^xsd:double`` gives ``8``)."""
    bindings = answer["bindings"]
    assert isinstance(bindings, dict)
    term = str(bindings[name])
    return term.split('"')[1] if term.startswith('"') else term


def detections(answers: list[dict[str, object]], *names: str) -> set[tuple[object, ...]]:
    """Each answer as (first event's time, last event's time, the named bindings)."""
    out = set()
    for answer in answers:
        interval = answer["interval"]
        assert isinstance(interval, list)
        out.add((interval[0], interval[1], *(value(answer, n) for n in names)))
    return out


def csv_slice(source: Path, target: Path, keep: range, header: bool = True) -> Path:
    """The data rows of ``source`` whose 0-based index is in ``keep`` (and its header)."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    head, rows = (lines[:1], lines[1:]) if header else ([], lines)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(head + rows[keep.start : keep.stop]), encoding="utf-8")
    return target


def test_uc1_smart_grid(
    shared_data: Path, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UC1 on HomeC rows 2040-2099 split into SPAseq's three smart-home streams: the house
    draws 1.35 kW at row 2070, the next clear-day weather report is row 2088, and solar
    gives 0.180 kW at row 2089; row 2089 (1.32 kW) starts a second match ending at 2091."""
    sample = shared_data / "smarthome" / "smarthome_homec_sample" / "HomeC_first2838rows.csv"
    csv = csv_slice(sample, tmp_path / "homec" / "HomeC_slice.csv", range(2040, 2100))
    streams = []
    for mapping in ("homec-power", "homec-weather", "homec-generation"):
        streams += ["--stream", str(convert(mapping, csv, tmp_path / f"{mapping}.nq"))]
    answers = run_both([str(EXAMPLES / "uc1-smart-grid" / "smart-grid.spaseq"), *streams], capsys)
    t0 = 1451624400000  # row 0; rows are 1 s apart in the file
    assert detections(answers, "use", "icon", "gen") == {
        (t0 + 2070_000, t0 + 2089_000, "1.346166667", "clear-day", "0.180216667"),
        (t0 + 2089_000, t0 + 2091_000, "1.324683333", "clear-day", "0.353116667"),
    }


def test_uc3_credit_card_big_after_small(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UC3 on the first 250 transactions of card10k (SPAseq's stream description, one
    event per second): card 47 withdraws 117.05 (event 150), 351.36 (151), then 21.06
    (177); cards 58 and 61 do the same at 187-189 and 201-203."""
    with lzma.open(shared_data / "creditcard" / "card10k.n3.xz", "rt", encoding="utf-8") as f:
        lines = [next(f) for _ in range(500)]
    (tmp_path / "card250.nt").write_text("".join(lines), encoding="utf-8")
    description = tmp_path / "card250.txt"
    description.write_text("<http://example.org/main> <./card250.nt> 2\n", encoding="utf-8")
    query = EXAMPLES / "uc3-credit-card" / "big-after-small.spaseq"
    answers = run_both([str(query), "--stream", str(description)], capsys)
    assert detections(answers, "card", "amount1", "amount2", "amount3") == {
        (150_000, 177_000, "<http://example/card#47>", "117.05", "351.36", "21.06"),
        (187_000, 189_000, "<http://example/card#58>", "49.68", "199.29", "13.52"),
        (201_000, 203_000, "<http://example/card#61>", "66.02", "406.83", "7.4"),
    }


def nasdaq_slice(shared_data: Path, tmp_path: Path, first: str, last: str) -> Path:
    """The bars of NASDAQ_AAPL_AMZN_GOOG.txt from minute ``first`` to ``last`` (hhmm)."""
    source = shared_data / "stocks" / "opencep_nasdaq_2008-02-01" / "NASDAQ_AAPL_AMZN_GOOG.txt"
    rows = [
        row
        for row in source.read_text(encoding="utf-8").splitlines(keepends=True)
        if first <= row.split(",")[1][8:] <= last
    ]
    target = tmp_path / f"bars-{first}-{last}" / "NASDAQ_slice.txt"
    target.parent.mkdir()
    target.write_text("".join(rows), encoding="utf-8")
    return target


def test_uc4_stock_v_shape(
    shared_data: Path, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UC4's V shape on the bars of 09:00-09:59 ET: GOOG closes 528.94 at 09:29, 526 at
    09:30 (-0.56 %) and 528.97 at 09:31; AMZN 76.83, 76.62, 76.85 at 09:49-09:51."""
    bars = convert(
        "nasdaq-bars", nasdaq_slice(shared_data, tmp_path, "0900", "0959"), tmp_path / "bars.nq"
    )
    kb = f"http://example.org/kb/sp500={EXAMPLES / 'uc4-stock' / 'data' / 'sp500-sectors.ttl'}"
    query = EXAMPLES / "uc4-stock" / "v-shape.spaseq"
    answers = run_both([str(query), "--stream", str(bars), "--graph", kb], capsys)
    goog, amzn = "<http://example/company#GOOG>", "<http://example/company#AMZN>"
    assert detections(answers, "company", "sector", "p1", "p2", "p3") == {
        (1201876140000, 1201876260000, goog, "Information Technology", "528.94", "526", "528.97"),
        (1201877340000, 1201877460000, amzn, "Consumer Discretionary", "76.83", "76.62", "76.85"),
    }


def test_uc4_stock_head_and_shoulders(
    shared_data: Path, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UC4's head and shoulders on the bars of 10:30-11:00 ET: GOOG starts at 512.69
    (10:36) or 512.26 (10:37), left shoulder 513.22, dip 513, head 514.21, dip 513.43,
    right shoulder 514.08 and decline 513.70 at 11:00."""
    bars = convert(
        "nasdaq-bars", nasdaq_slice(shared_data, tmp_path, "1030", "1100"), tmp_path / "bars.nq"
    )
    kb = f"http://example.org/kb/sp500={EXAMPLES / 'uc4-stock' / 'data' / 'sp500-sectors.ttl'}"
    query = EXAMPLES / "uc4-stock" / "head-and-shoulders.spaseq"
    answers = run_both([str(query), "--stream", str(bars), "--graph", kb], capsys)
    shoulders = ("513.22", "513", "514.21", "513.43", "514.08", "513.7")
    names = ("company", "p1", "p2", "p3", "p4", "p5", "p6", "p7")
    goog = "<http://example/company#GOOG>"
    assert detections(answers, *names) == {
        (1201880160000, 1201881600000, goog, "512.69", *shoulders),
        (1201880220000, 1201881600000, goog, "512.26", *shoulders),
    }


def test_uc5_traffic_congestion_propagation(
    shared_data: Path, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UC5 on the three Randersvej segments of 2014-08-01 (the example's CC-BY-4.0 fixture;
    the sensor repository from ../shared for the mapping's lookup): 181223 crawls at 8 km/h
    (25 vehicles) at 10:40 local time, and at 10:55 both 185104 (15 km/h) and 192653
    (19 km/h) are congested."""
    folder = EXAMPLES / "uc5-traffic" / "data"
    repository = shared_data / "aarhus" / "kb" / "SensorRepository.n3.xz"
    traffic = convert(
        "aarhus-traffic", folder / "traffic", tmp_path / "traffic.nq", f"property={repository}"
    )
    kb = f"http://example.org/kb/aarhus-segments={folder / 'aarhus-segments.ttl'}"
    query = EXAMPLES / "uc5-traffic" / "congestion-propagation.spaseq"
    answers = run_both([str(query), "--stream", str(traffic), "--graph", kb], capsys)
    found = detections(answers, "speed1", "speed2", "speed3", "toStreet2")
    assert (1406882400000, 1406883300000, "8", "15", "19", "Hasle Ringvej") in found
    assert found == {
        (1406882400000, 1406883300000, "8", "15", "19", "Hasle Ringvej"),
        (1406882700000, 1406883300000, "8", "15", "19", "Hasle Ringvej"),
        (1406883000000, 1406883300000, "11", "15", "19", "Hasle Ringvej"),
        (1406887500000, 1406887800000, "12", "15", "18", "Hasle Ringvej"),
        (1406896200000, 1406896500000, "9", "15", "16", "Hasle Ringvej"),
        (1406896500000, 1406896800000, "9", "14", "19", "Hasle Ringvej"),
        (1406896800000, 1406897100000, "13", "14", "19", "Hasle Ringvej"),
    }
