"""rsep.workloads.smarthome: synthetic HomeC rows in the sample's CSV schema, with its
rates and ranges, deterministic, streamed, and saying they are synthetic."""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

import pytest

from rsep.errors import UserError
from rsep.workloads import SYNTHETIC, homec_rows, write_homec
from rsep.workloads.smarthome import (
    APPARENT_RANGE,
    CHANNELS,
    CLOUD_COVER,
    COLUMNS,
    FIRST_TIME,
    SOLAR_RANGE,
    USE_RANGE,
    WEATHER,
)

SAMPLE = "smarthome/smarthome_homec_sample/HomeC_first2838rows.csv"


def table(n: int, seed: int) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("".join(homec_rows(n, seed)))))


def test_header_is_the_samples(shared_data: Path) -> None:
    """The generated header is the real file's header, column for column."""
    with (shared_data / SAMPLE).open(encoding="utf-8") as sample:
        assert next(csv.reader(sample)) == list(COLUMNS)


def test_rows_copy_the_sample_rates_and_ranges() -> None:
    """Two days of rows: time advances 1 s per row from the sample's start; use equals
    House overall and gen equals Solar; every channel and weather value lies in the
    sample's range; the weather changes only on the hour; solar is at its night level
    outside 08:00-17:00 and peaks by day; every summary says (synthetic)."""
    rows = table(2 * 1440, seed=1)
    assert [int(r["time"]) for r in rows] == list(range(FIRST_TIME, FIRST_TIME + 2880))
    for row in rows:
        assert row["use [kW]"] == row["House overall [kW]"]
        assert row["gen [kW]"] == row["Solar [kW]"]
        assert USE_RANGE[0] <= float(row["use [kW]"]) <= USE_RANGE[1]
        assert SOLAR_RANGE[0] <= float(row["gen [kW]"]) <= SOLAR_RANGE[1]
        for name, (_, _, low, high) in CHANNELS.items():
            assert low <= float(row[name]) <= high, name
        for name, (_, _, low, high) in WEATHER.items():
            assert low - 0.01 <= float(row[name]) <= high + 0.01, name
        assert APPARENT_RANGE[0] <= float(row["apparentTemperature"]) <= APPARENT_RANGE[1]
        assert float(row["cloudCover"]) in {value for value, _ in CLOUD_COVER}
        assert row["summary"].endswith(f"({SYNTHETIC})")
        assert row["icon"] in {
            "clear-day",
            "clear-night",
            "partly-cloudy-day",
            "partly-cloudy-night",
            "cloudy",
        }
    for start in range(0, 2880, 60):
        assert len({rows[i]["temperature"] for i in range(start, start + 60)}) == 1
    night = [float(rows[i]["gen [kW]"]) for i in range(0, 8 * 60)]
    noon = [float(rows[i]["gen [kW]"]) for i in range(12 * 60, 13 * 60)]
    assert max(night) < 0.004 < min(noon)
    assert 0.0 < sum(float(r["use [kW]"]) for r in rows) / len(rows) < 3.0


def test_rows_are_deterministic_and_lazy() -> None:
    assert list(homec_rows(200, 9)) == list(homec_rows(200, 9))
    assert list(homec_rows(200, 9)) != list(homec_rows(200, 10))
    assert list(itertools.islice(homec_rows(10_000_000, 9), 201)) == list(homec_rows(200, 9))


def test_homec_file_is_named_synthetic(tmp_path: Path) -> None:
    path = write_homec(tmp_path, 30, seed=2)
    assert SYNTHETIC in path.name and path.suffix == ".csv"
    assert len(path.read_text().splitlines()) == 31
    with pytest.raises(UserError, match="at least one"):
        list(homec_rows(-1))
