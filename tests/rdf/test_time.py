"""Time in rsep (rsep.rdf.time): epoch milliseconds, units, xsd:dateTime, durations."""

from __future__ import annotations

from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rsep.rdf.time import (
    TimeUnit,
    datetime_to_ms,
    format_duration,
    ms_to_datetime,
    parse_duration,
    zone,
)


@pytest.mark.parametrize(
    ("lexical", "ms"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:01.5Z", 1500),
        ("2014-08-01T07:50:00+02:00", 1406872200000),
        ("2014-08-01T05:50:00", 1406872200000),  # no zone: read in the default zone (UTC)
        ("2014-08-01T05:50:00.1239Z", 1406872200123),  # sub-ms digits truncated
        ("1999-12-31T24:00:00Z", 946684800000),  # 24:00:00 is the next midnight
        ("1969-12-31T23:59:59.999Z", -1),
    ],
)
def test_datetime_to_ms(lexical: str, ms: int) -> None:
    assert datetime_to_ms(lexical) == ms


def test_datetime_without_zone_reads_in_the_declared_zone() -> None:
    assert datetime_to_ms("2014-08-01T07:50:00", zone("Europe/Copenhagen")) == 1406872200000


@pytest.mark.parametrize(
    "bad", ["2014-08-01", "yesterday", "2014-13-01T00:00:00Z", "2014-01-01T24:01:00Z"]
)
def test_bad_datetime(bad: str) -> None:
    with pytest.raises(ValueError, match="not an xsd:dateTime"):
        datetime_to_ms(bad)


def test_units() -> None:
    assert TimeUnit.parse("s").to_ms(3) == 3000
    assert TimeUnit.parse("minutes") is TimeUnit.MINUTES
    assert TimeUnit.parse("ms").to_ms(7) == 7
    with pytest.raises(ValueError, match="unknown time unit"):
        TimeUnit.parse("fortnight")
    with pytest.raises(ValueError, match="unknown time zone"):
        zone("Mars/Olympus")
    assert zone(None) is UTC


@given(st.integers(min_value=-(10**13), max_value=10**14))
def test_ms_roundtrip(ms: int) -> None:
    assert datetime_to_ms(ms_to_datetime(ms)) == ms


# Durations (rsep.lang and rsep.algebra both read them with these) ----------------


def test_durations() -> None:
    assert parse_duration("PT2S") == 2000
    assert parse_duration("P30D") == 30 * 86_400_000
    assert parse_duration("P1W") == 7 * 86_400_000
    assert parse_duration("PT1H30M") == 5_400_000
    assert parse_duration("-PT1S") == -1000
    assert parse_duration("2 minutes") == 120_000
    assert parse_duration("1.5s") == 1500
    assert parse_duration("30", unit_ms=1000) == 30_000
    with pytest.raises(ValueError, match="no fixed length"):
        parse_duration("P1M")
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        parse_duration("0.0001s")
    with pytest.raises(ValueError, match="unknown unit"):
        parse_duration("3 fortnights")
    assert [format_duration(ms) for ms in (0, 1, 1000, 90_000, 3_600_000, 86_400_000)] == [
        "0ms",
        "1ms",
        "1s",
        "90s",
        "1h",
        "1d",
    ]


@given(st.integers(0, 10**12))
def test_duration_round_trip(ms: int) -> None:
    assert parse_duration(format_duration(ms)) == ms
