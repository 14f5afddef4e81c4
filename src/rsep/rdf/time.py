"""Time in rsep: an integer count of milliseconds since the Unix epoch (DESIGN.md, Data model).

RSP-QL Def. 8 takes time as a discrete, totally ordered set T; rsep fixes T to epoch
milliseconds and converts declared units and ``xsd:dateTime`` values into it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import Enum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DATETIME_RE = re.compile(
    r"^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$"
)


class TimeUnit(Enum):
    """A unit in which integer timestamps are declared; the value is its length in ms."""

    MILLISECONDS = 1
    SECONDS = 1000
    MINUTES = 60_000
    HOURS = 3_600_000

    @classmethod
    def parse(cls, text: str) -> TimeUnit:
        """Read a unit name: ``ms``, ``s``, ``min``, ``h`` or their long forms."""
        key = text.strip().lower()
        for unit, names in _UNIT_NAMES.items():
            if key in names:
                return unit
        raise ValueError(f"unknown time unit {text!r} (expected one of ms, s, min, h)")

    def to_ms(self, count: int) -> int:
        """Convert a count of this unit to milliseconds."""
        return count * self.value


_UNIT_NAMES = {
    TimeUnit.MILLISECONDS: {"ms", "millisecond", "milliseconds"},
    TimeUnit.SECONDS: {"s", "sec", "second", "seconds"},
    TimeUnit.MINUTES: {"min", "minute", "minutes"},
    TimeUnit.HOURS: {"h", "hour", "hours"},
}


def zone(name: str | None) -> tzinfo:
    """The time zone named ``name`` (IANA name or ``UTC``); ``None`` means UTC."""
    if name is None or name.upper() in {"UTC", "Z"}:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc


def datetime_to_ms(lexical: str, default_zone: tzinfo = UTC) -> int:
    """Epoch milliseconds of an ``xsd:dateTime`` lexical form.

    A value without a time zone is read in ``default_zone`` (the stream's declared zone,
    UTC unless declared). Fractions beyond milliseconds are truncated toward the past.
    """
    match = _DATETIME_RE.match(lexical.strip())
    if match is None:
        raise ValueError(f"not an xsd:dateTime: {lexical!r}")
    year, month, day, hour, minute, second, frac, tz = match.groups()
    extra_day = False
    if hour == "24":  # XSD allows 24:00:00 as the end of a day
        if minute != "00" or second != "00" or (frac and int(frac[1:]) != 0):
            raise ValueError(f"not an xsd:dateTime: {lexical!r}")
        hour, extra_day = "00", True
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    if tz is None:
        tzi: tzinfo = default_zone
    elif tz == "Z":
        tzi = UTC
    else:
        sign = 1 if tz[0] == "+" else -1
        tzi = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzi
        )
    except ValueError as exc:
        raise ValueError(f"not an xsd:dateTime: {lexical!r} ({exc})") from exc
    if extra_day:
        moment += timedelta(days=1)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def ms_to_datetime(ms: int) -> str:
    """The canonical UTC ``xsd:dateTime`` lexical form of epoch milliseconds."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"
