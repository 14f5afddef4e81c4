"""Durations in the plan: an integer count of milliseconds, read from the forms queries use.

rsep's clock counts milliseconds (DESIGN.md, Data model; ``rsep.rdf.time``). A duration is
written as an ISO 8601 / ``xsd:duration`` value (``PT2S``, ``P30D``, as EP-SPARQL's filters
write them), as a number with a unit (``500ms``, ``2s``, ``10m``, ``1h``, ``1d``, also the
long names ``minutes``, ``hours``…), or as a bare number, which counts the current time
unit (milliseconds unless the caller says otherwise).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["format_duration", "parse_duration"]

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
        raise ValueError(f"duration {text!r} is not a whole number of milliseconds")
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
            raise ValueError(f"duration {text!r}: years and months have no fixed length; use days")
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
