"""Time in rsep: an integer count of milliseconds since the Unix epoch (DESIGN.md, Data model).

RSP-QL Def. 8 takes time as a discrete, totally ordered set T; rsep fixes T to epoch
milliseconds and converts declared units and ``xsd:dateTime`` values into it.

Durations (window widths, ``WITHIN``, ``lateness``, periodic reports) are integer counts of
milliseconds too. :func:`parse_duration` reads every form a query or a parameter writes: an
ISO 8601 / ``xsd:duration`` value (``PT2S``, ``P30D``, as EP-SPARQL's filters write them), a
number with a unit (``500ms``, ``2s``, ``10m``, ``1h``, ``1d``, also the long names
``minutes``, ``hours``…), or a bare number, which counts the current time unit;
:func:`format_duration` writes the shortest of them. ``rsep.lang`` (durations in the AST)
and ``rsep.algebra`` (parameters, report policies) both use these two.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from decimal import Decimal, InvalidOperation
from enum import Enum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "TimeUnit",
    "datetime_to_ms",
    "format_duration",
    "ms_to_datetime",
    "parse_duration",
    "zone",
]

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


# Durations ------------------------------------------------------------------------------

_MS = {
    "ms": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "second": 1000,
    "seconds": 1000,
    "m": 60_000,
    "min": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}
_SHORT = re.compile(r"([+-]?[0-9]+(?:\.[0-9]+)?)\s*([a-z]*)", re.IGNORECASE)
_ISO = re.compile(
    r"(-)?P(?=[0-9T])(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)W)?(?:([0-9]+)D)?"
    r"(?:T(?=[0-9])(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?"
)


def _whole_ms(amount: Decimal, text: str) -> int:
    if amount != amount.to_integral_value():
        raise ValueError(f"the duration {text} is not a whole number of milliseconds")
    return int(amount)


def parse_duration(text: str, unit_ms: int = 1) -> int:
    """The duration ``text`` in milliseconds; a bare number counts ``unit_ms``-long units.

    Raises :class:`ValueError` for anything else, and for ISO years or months (whose
    length in milliseconds is not fixed).
    """
    value = text.strip()
    iso = _ISO.fullmatch(value)
    if iso is not None:
        sign, years, months, weeks, days, hours, minutes, seconds = iso.groups()
        if years or months:
            raise ValueError(
                f"the duration {text} has no fixed length (years, months); write it in days"
            )
        total = Decimal(0)
        for amount, ms in (
            (weeks, 7 * 86_400_000),
            (days, 86_400_000),
            (hours, 3_600_000),
            (minutes, 60_000),
            (seconds, 1000),
        ):
            if amount:
                total += Decimal(amount) * ms
        result = _whole_ms(total, text)
        return -result if sign else result
    short = _SHORT.fullmatch(value)
    if short is None:
        raise ValueError(
            f"not a duration: {text!r} (expected e.g. 500ms, 2s, 10m, 1h, 1d, PT2S or a number)"
        )
    number, unit = short.groups()
    try:
        amount = Decimal(number)
    except InvalidOperation:  # pragma: no cover - the regular expression admits numbers only
        raise ValueError(f"not a duration: {text!r}") from None
    if unit:
        factor = _MS.get(unit.lower())
        if factor is None:
            raise ValueError(f"duration {text!r}: unknown unit {unit!r} (ms, s, m, h, d)")
    else:
        factor = unit_ms
    return _whole_ms(amount * factor, text)


def format_duration(ms: int) -> str:
    """``ms`` in the largest unit that divides it: ``500ms``, ``5s``, ``30m``, ``2h``, ``1d``."""
    for suffix, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms != 0 and ms % size == 0:
            return f"{ms // size}{suffix}"
    return f"{ms}ms"
