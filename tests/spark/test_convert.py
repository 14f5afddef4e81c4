"""``rsep convert`` as a Spark job (rsep.spark.convert) on real data and on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rsep.errors import BadRecords, InputError, OnError
from rsep.rdf.mapping import load_mapping
from rsep.spark.convert import OutputFormat, convert, resolve_inputs
from rsep.spark.eventstore import load_events

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

SEGMENT = "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData182955"


@pytest.fixture(scope="module")
def aarhus_store(spark: SparkSession, repo_root: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    folder = repo_root / "data/aarhus/traffic"
    mapper = load_mapping("aarhus-traffic").bind(base=folder)
    out = tmp_path_factory.mktemp("store") / "aarhus"
    files = resolve_inputs([folder], "*.stream", out.parent / "work")
    result = convert(spark, mapper, files, out, OutputFormat.PARQUET, progress=False)
    return result, out


def test_bundled_aarhus_slice_converts_to_the_event_store(aarhus_store) -> None:  # type: ignore[no-untyped-def]
    result, out = aarhus_store
    assert result.files == 2
    assert result.rows == result.events == 15_625 + 16_954
    assert result.triples == 20 * result.events
    assert result.rejected == 0
    assert len(result.streams) == 2
    assert result.triples_per_second > 0
    days = sorted(
        p.name
        for p in (
            out / f"stream={SEGMENT.replace(':', '%3A').replace('/', '%2F').replace('#', '%23')}"
        ).iterdir()
    )
    assert days[0] == "day=2014-08-01" and days[-1] == "day=2014-09-30"


def test_store_reads_back_as_time_ordered_events(spark: SparkSession, aarhus_store) -> None:  # type: ignore[no-untyped-def]
    _, out = aarhus_store
    events = load_events(spark, out, SEGMENT)
    assert len(events) == 15_625
    times = [e.t_start for e in events]
    assert times == sorted(times)
    first = events[0]
    assert first.is_point and len(first.graph) == 20
    # the earliest row: OK,34,54,887,34,2014-08-01T08:00:00,11,20746942,182955
    assert first.t_start == 1406872800000  # 08:00 CEST
    values = sorted(
        str(t.object)[1:3] for t in first.graph if t.predicate.value.endswith("hasValue")
    )
    assert values == ["11", "11", "34", "34", "54"]  # count, congestion, times, speed


HEADER = (
    "status,avgMeasuredTime,avgSpeed,extID,medianMeasuredTime,TIMESTAMP,vehicleCount,_id,REPORT_ID"
)
BAD_CSV = f"""{HEADER}
OK,74,50,668,74,2014-08-01T07:50:00,5,1,182955
OK,74,fast,668,74,2014-08-01T07:55:00,5,2,182955
OK,74,50,668
OK,74,50,668,74,,5,4,182955
OK,74,50,668,74,2014-13-01T08:05:00,5,5,182955
OK,73,51,668,73,2014-08-01T08:10:00,6,6,182955
"""


def _bad_input(tmp_path: Path, repo_root: Path) -> tuple[Path, object]:
    src = tmp_path / "AarhusTrafficData182955.stream"
    src.write_text(BAD_CSV, encoding="utf-8")
    mapper = load_mapping("aarhus-traffic").bind(base=repo_root / "data/aarhus/traffic")
    return src, mapper


def test_bad_row_stops_with_file_line_and_reason(
    spark: SparkSession, tmp_path: Path, repo_root: Path
) -> None:
    src, mapper = _bad_input(tmp_path, repo_root)
    with pytest.raises(InputError) as caught:
        convert(spark, mapper, [src], tmp_path / "out", progress=False)  # type: ignore[arg-type]
    assert str(caught.value) == f"{src}:3: 'fast' is not a valid xsd:double"


def test_skip_keeps_every_good_row_and_logs_each_bad_one(
    spark: SparkSession, tmp_path: Path, repo_root: Path
) -> None:
    src, mapper = _bad_input(tmp_path, repo_root)
    dead = tmp_path / "rejected.jsonl"
    bad = BadRecords(OnError.SKIP, dead)
    result = convert(spark, mapper, [src], tmp_path / "out", bad=bad, progress=False)  # type: ignore[arg-type]
    bad.close()
    assert (result.events, result.rejected, bad.count) == (2, 4, 4)
    letters = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [(d["line"], d["reason"]) for d in letters] == [
        (3, "'fast' is not a valid xsd:double"),
        (4, "expected 9 fields, found 4"),
        (5, "missing timestamp in column 'TIMESTAMP'"),
        (6, "unparsable timestamp '2014-13-01T08:05:00' in column 'TIMESTAMP'"),
    ]
    assert all(d["file"] == str(src) for d in letters)
    kept = load_events(spark, tmp_path / "out")
    assert [e.t_start for e in kept] == [1406872200000, 1406873400000]


@pytest.mark.parametrize(
    ("fmt", "name", "compression"),
    [
        (OutputFormat.NQUADS, "aarhus.nq", None),
        (OutputFormat.TRIG, "aarhus.trig", None),
        (OutputFormat.NQUADS, "aarhus-parts", "gzip"),
    ],
)
def test_text_output_equals_the_event_store(
    spark: SparkSession,
    aarhus_store,  # type: ignore[no-untyped-def]
    repo_root: Path,
    tmp_path: Path,
    fmt: str,
    name: str,
    compression: str | None,
) -> None:
    from rsep.rdf.formats import Format, read_events

    _, store = aarhus_store
    folder = repo_root / "data/aarhus/traffic"
    mapper = load_mapping("aarhus-traffic").bind(base=folder)
    files = resolve_inputs([folder], "*.stream", tmp_path / "work")
    out = tmp_path / name
    result = convert(spark, mapper, files, out, fmt, compression=compression, progress=False)
    assert result.events == 32_579
    if compression:  # a folder of gzip part files, one per input file
        assert sorted(p.name for p in out.glob("part-*")) == [
            "part-00000.nq.gz",
            "part-00001.nq.gz",
        ]
    else:
        assert out.is_file()
    text_format = Format.TRIG if fmt == OutputFormat.TRIG else Format.NQUADS
    from_text = [e for e in read_events(out, text_format) if e.stream == SEGMENT]
    from_store = load_events(spark, store, SEGMENT)
    assert from_text == from_store


@pytest.mark.parametrize(
    ("mapping", "path", "rows", "triples"),
    [
        ("nasdaq-bars", "stocks/opencep_nasdaq_2008-02-01/NASDAQ_MEDIUM.txt", 1_652, 8_260),
        ("berka-transactions", "creditcard/berka_pkdd99_partial/trans.asc", 49_102, 329_047),
        (
            "homec-smarthome",
            "smarthome/smarthome_homec_sample/HomeC_first2838rows.csv",
            2_838,
            96_492,
        ),
        ("aarhus-traffic", "aarhus/traffic/sample_AarhusTrafficData158324.stream", 16_939, 338_780),
    ],
)
def test_shared_samples_convert_without_rejects(
    spark: SparkSession,
    shared_data: Path,
    tmp_path: Path,
    mapping: str,
    path: str,
    rows: int,
    triples: int,
) -> None:
    source = shared_data / path
    base = shared_data / "aarhus/traffic" if mapping == "aarhus-traffic" else source.parent
    mapper = load_mapping(mapping).bind(base=base)
    result = convert(spark, mapper, [source], tmp_path / "out", progress=False)
    assert (result.rows, result.events, result.triples, result.rejected) == (rows, rows, triples, 0)


def test_duplicate_event_id_is_a_bad_record(spark: SparkSession, tmp_path: Path) -> None:
    mapping = tmp_path / "m.toml"
    mapping.write_text(
        'stream = "<http://ex.org/s>"\nevent = "<http://ex.org/e/{id}>"\n'
        '[time]\ncolumn = "t"\nformat = "unix_ms"\n'
        '[[resource]]\nsubject = "<http://ex.org/x/{id}>"\n'
        '"<http://ex.org/v>" = { value = "{v}" }\n'
    )
    src = tmp_path / "in.csv"
    src.write_text("id,t,v\n1,10,a\n2,20,b\n1,30,c\n")
    with pytest.raises(
        InputError, match=r"in\.csv:4: event <http://ex\.org/e/1> already defined at line 2"
    ):
        convert(spark, load_mapping(mapping).bind(), [src], tmp_path / "out", progress=False)
