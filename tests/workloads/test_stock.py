"""rsep.workloads.stock: synthetic NASDAQ bars copy the sample's schema, rates and ranges,
are deterministic, stream, and say they are synthetic; the replicated real bars keep
their values and move to later trading days."""

from __future__ import annotations

import itertools
import math
import statistics
from datetime import datetime
from pathlib import Path

import pytest

from rsep.errors import UserError
from rsep.workloads import SYNTHETIC, replicate_bars, stock_bars, write_bars
from rsep.workloads.stock import (
    BAR_PRESENCE,
    MINUTES_PER_DAY,
    PRICE_RANGE,
    RETURN_STD_RANGE,
    VOLUME_RANGE,
    VSHAPE_EVERY,
    VSHAPE_TICKERS,
    planted_vshapes,
    vshape_bars,
    write_replicated_bars,
)

BARS = "stocks/opencep_nasdaq_2008-02-01/NASDAQ_AAPL_AMZN_GOOG.txt"


def fields(lines: list[str]) -> list[list[str]]:
    return [line.rstrip("\n").split(",") for line in lines]


def test_bars_have_the_sample_schema_and_ranges() -> None:
    """Every line is TICKER,YYYYMMDDhhmm,o,h,l,c,v; low <= open, close <= high; minutes in
    09:00-16:59 of weekdays, in time order, one bar per ticker and minute; volumes and
    prices in the sample's ranges (prices within the walk's band around them)."""
    rows = fields(list(stock_bars(20_000, seed=3, tickers=10)))
    assert len(rows) == 20_000
    seen = set()
    for ticker, minute, *prices, volume in rows:
        assert ticker.startswith("SYN") and len(ticker) == 7
        moment = datetime.strptime(minute, "%Y%m%d%H%M")
        assert moment.weekday() < 5 and 9 <= moment.hour <= 16
        o, h, lo, c = (float(p) for p in prices)
        assert lo <= min(o, c) <= max(o, c) <= h
        assert PRICE_RANGE[0] * 0.7 < lo and h < PRICE_RANGE[1] * 1.3
        assert VOLUME_RANGE[0] <= int(volume) <= VOLUME_RANGE[1]
        assert (ticker, minute) not in seen
        seen.add((ticker, minute))
    minutes = [row[1] for row in rows]
    assert minutes == sorted(minutes)


def test_bars_copy_the_sample_rates() -> None:
    """A ticker has a bar in about 89.8 % of the minutes, and the one-minute log returns of
    its close have a deviation inside the sample's per-ticker range."""
    rows = fields(list(stock_bars(48_000, seed=5, tickers=20)))
    minutes = {row[1] for row in rows}
    presence = len(rows) / (20 * len(minutes))
    assert abs(presence - BAR_PRESENCE) < 0.01
    closes: dict[str, list[float]] = {}
    for row in rows:
        closes.setdefault(row[0], []).append(math.log(float(row[5])))
    for series in closes.values():
        returns = [b - a for a, b in itertools.pairwise(series)]
        # the close-to-close return adds the open gap (0.0021) to the close's own move
        assert RETURN_STD_RANGE[0] < statistics.stdev(returns) < 2 * RETURN_STD_RANGE[1]
    assert len(minutes) > MINUTES_PER_DAY  # more than one trading day


def test_bars_are_deterministic_and_lazy() -> None:
    """The same seed gives the same lines, another seed others; asking for 10 M events
    yields the first ones at once (nothing is built in advance)."""
    assert list(stock_bars(500, seed=7)) == list(stock_bars(500, seed=7))
    assert list(stock_bars(500, seed=7)) != list(stock_bars(500, seed=8))
    first = list(itertools.islice(stock_bars(10_000_000, seed=7), 500))
    assert first == list(stock_bars(500, seed=7))


def test_bar_files_are_named_synthetic(tmp_path: Path) -> None:
    """The file name and every ticker say the data are synthetic; bad sizes are refused."""
    path = write_bars(tmp_path, 100, seed=1, tickers=4)
    assert SYNTHETIC in path.name and path.suffix == ".txt"
    assert len(path.read_text().splitlines()) == 100
    with pytest.raises(UserError, match="at least one"):
        list(stock_bars(0))
    with pytest.raises(UserError, match="ticker"):
        list(stock_bars(10, tickers=0))


def test_replicated_bars_shift_whole_days(shared_data: Path, tmp_path: Path) -> None:
    """The real day (1,365 bars, 2008-02-01, a Friday) repeated to 3,000 bars: copy 0 is
    the day itself in time order, copy 1 the same bars on Monday 2008-02-04, copy 2 the
    first 270 bars on Tuesday; timestamps never decrease."""
    source = shared_data / BARS
    real = fields(source.read_text().splitlines())
    real.sort(key=lambda row: row[1])
    path = write_replicated_bars([source], tmp_path, 3_000)
    assert SYNTHETIC in path.name
    rows = fields(path.read_text().splitlines())
    assert len(rows) == 3_000
    assert [row[1] for row in rows] == sorted(row[1] for row in rows)
    assert rows[:1365] == real
    monday = rows[1365:2730]
    assert [r[1][:8] for r in monday] == ["20080204"] * 1365
    assert [[r[0], r[1][8:], *r[2:]] for r in monday] == [[r[0], r[1][8:], *r[2:]] for r in real]
    assert {r[1][:8] for r in rows[2730:]} == {"20080205"}
    assert list(itertools.islice(replicate_bars([source], 10_000_000), 3_000)) == [
        ",".join(r) + "\n" for r in rows
    ]


def test_replication_refuses_what_is_not_one_day_of_bars(tmp_path: Path) -> None:
    """A line that is no bar, or bars of two days, is a clear error."""
    bad = tmp_path / "bad.txt"
    bad.write_text("AAPL,200802010900,1,2,3\n")
    with pytest.raises(UserError, match=r"bad\.txt:1"):
        list(replicate_bars([bad], 10))
    two = tmp_path / "two.txt"
    two.write_text("A,200802010900,1,1,1,1,1\nA,200802040900,1,1,1,1,1\n")
    with pytest.raises(UserError, match="single day"):
        list(replicate_bars([two], 10))


def test_vshape_bars_plant_their_v_shapes_and_nothing_else() -> None:
    """Every ticker has a bar each minute; the close falls more than 0.2 % only at bar 8 of
    each ten, and the bar after climbs above the one before the fall."""
    rows = fields(list(vshape_bars(7 * 130, seed=2)))
    assert list(vshape_bars(7 * 130, seed=2))[:50] == list(vshape_bars(50, seed=2))
    closes: dict[str, list[float]] = {}
    for row in rows:
        closes.setdefault(row[0], []).append(float(row[5]))
    assert len(closes) == VSHAPE_TICKERS and {len(c) for c in closes.values()} == {130}
    for series in closes.values():
        falls = [j for j in range(1, 130) if series[j] < series[j - 1] * 0.998]
        assert falls == [j for j in range(130) if j % VSHAPE_EVERY == VSHAPE_EVERY - 2]
        assert all(series[j + 1] > series[j - 1] for j in falls)
    assert planted_vshapes(7 * 130) == 7 * 13
