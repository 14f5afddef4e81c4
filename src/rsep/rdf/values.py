"""SPARQL 1.1 operator semantics for RDF terms: typed values, comparison, EBV and arithmetic.

pyoxigraph evaluates the FILTERs inside one graph; rsep evaluates the ones that cross events
(``?p2`` of one event against ``?p1`` of an earlier one) with this module, so both layers must
give the same answers. References: SPARQL 1.1 Query §17.2 (errors, EBV), §17.3 (operator
mapping), §17.4 (operator functions); XQuery 1.0 and XPath 2.0 Functions and Operators (F&O,
the edition SPARQL 1.1 cites) §6 (numerics), §9.2 (booleans), §10.4 (dateTime comparison);
XPath 2.0 §B.1 (type promotion); XML Schema 1.1 Part 2 (XSD) for lexical forms.

The rules, in short:

- A term's typed value is computed once (:func:`value_of`, cached). Supported datatypes are
  xsd:string (simple literals), rdf:langString, xsd:boolean, xsd:integer and its 12 derived
  types (range facets checked), xsd:decimal, xsd:float, xsd:double and xsd:dateTime. A
  literal of any other datatype, or one whose lexical form is not valid for its datatype
  (``"abc"^^xsd:integer``, ``"300"^^xsd:byte``), is an :class:`OtherLiteral`.
- Numbers are promoted integer -> decimal -> float -> double before comparing or computing
  (XPath 2.0 §B.1). Integers and decimals are exact; floats are rounded to IEEE single precision.
- ``=`` and ``!=`` compare values of the same kind (§17.3) and otherwise fall back to
  RDFterm-equal (§17.4.1.7): identical terms are equal, an IRI or blank node never equals a
  different term, and two different literals raise :class:`SparqlTypeError` only when the
  answer cannot be known, i.e. one of them is an :class:`OtherLiteral` and the other is not
  a language-tagged string. Literals of known, different kinds (``1 = "1"``, ``"a" = "a"@en``)
  are unequal: §17.4.1.7's note lets an implementation that knows both datatypes decide, and
  the W3C tests encode exactly this (manifest features ``KnownTypesDefault2Neq`` and
  ``LangTagAwareness``; open-eq-07 to -12). This is oxigraph's behaviour too.
- ``<``, ``<=``, ``>``, ``>=`` exist for numerics, strings (code point order), booleans and
  dateTimes only; anything else, language-tagged strings included, raises.
- A dateTime without a time zone is compared with one that has a time zone as if it were in
  any zone from -14:00 to +14:00 (XSD 1.0 §3.2.7.4): the order is a type error when the two
  lie within 14 hours of each other, because it depends on the unknown implicit time zone.
  Such values are never ``=`` (oxigraph's rule; they are not identical values).

Where oxigraph 0.5 differs from the specifications, this module follows the specifications:
ordering of booleans (``false < true``, F&O §9.2.2 op:boolean-less-than), ``NaN`` in orderings
(false, not an error), no ordering for language-tagged strings or for identical IRIs, blank
nodes and unknown literals, range facets of derived integer types and the XSD lexical space
of float and double (oxigraph accepts ``"inf"``), the EBV of language-tagged strings and of
ill-typed numerics and booleans (§17.2.2), arbitrary-precision integers and decimals (oxigraph
uses 64-bit integers and 18 fractional decimal digits), and sameTerm (oxigraph canonicalises
typed literals). xsd:date, xsd:time and the duration types are not supported here (oxigraph
supports them as an extension), so comparing them is an error unless the terms are identical.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_HALF_UP, Context, Decimal
from enum import IntEnum
from fractions import Fraction
from functools import lru_cache

from pyoxigraph import Literal, NamedNode

from rsep.rdf.terms import (
    XSD,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    Term,
)

__all__ = [
    "BooleanValue",
    "DateTimeValue",
    "LangStringValue",
    "NumericType",
    "NumericValue",
    "OtherLiteral",
    "Resource",
    "SparqlTypeError",
    "StringValue",
    "Value",
    "add",
    "compare",
    "compare_values",
    "divide",
    "effective_boolean_value",
    "equal",
    "greater_equal",
    "greater_than",
    "less_equal",
    "less_than",
    "multiply",
    "not_equal",
    "same_term",
    "subtract",
    "unary_minus",
    "unary_plus",
    "value_of",
]


class SparqlTypeError(Exception):
    """An expression error (SPARQL 1.1 §17.2, §17.3): a type error or a dynamic error.

    It is an error, not ``false``: ``!`` and ``!=`` propagate it, and a FILTER whose
    expression raises it rejects the solution (§17.2).
    """


class NumericType(IntEnum):
    """The primitive numeric types, in type-promotion order (XPath 2.0 §B.1)."""

    INTEGER = 0
    DECIMAL = 1
    FLOAT = 2
    DOUBLE = 3


Number = int | Decimal | float


@dataclass(frozen=True, slots=True)
class Value:
    """The typed value of an RDF term (SPARQL 1.1 §17.1); subclasses name the kind."""

    term: Term


@dataclass(frozen=True, slots=True)
class Resource(Value):
    """An IRI or a blank node: only ``=``, ``!=`` and sameTerm apply."""


@dataclass(frozen=True, slots=True)
class StringValue(Value):
    """A simple literal or an xsd:string (the same thing in RDF 1.1)."""

    text: str


@dataclass(frozen=True, slots=True)
class LangStringValue(Value):
    """A language-tagged string (rdf:langString); the tag is lower case."""

    text: str
    lang: str


@dataclass(frozen=True, slots=True)
class BooleanValue(Value):
    """A valid xsd:boolean."""

    value: bool


@dataclass(frozen=True, slots=True)
class NumericValue(Value):
    """A valid numeric literal: an ``int``, ``Decimal`` or ``float`` by primitive type.

    An xsd:float is held as the Python float equal to its single-precision value.
    """

    type: NumericType
    value: Number


@dataclass(frozen=True, slots=True)
class DateTimeValue(Value):
    """A valid xsd:dateTime: seconds on the XSD timeline, and whether it has a time zone.

    A value without a time zone counts its local time as if it were UTC.
    """

    seconds: Fraction
    has_timezone: bool


@dataclass(frozen=True, slots=True)
class OtherLiteral(Value):
    """A literal of an unsupported datatype, or ill-typed (lexical form not valid)."""

    datatype: str


# --- Typed values ------------------------------------------------------------------------

# xsd:integer and the types derived from it, with their value ranges (XSD 1.1 §3.4).
_INTEGER_RANGES: dict[str, tuple[int | None, int | None]] = {
    XSD_INTEGER: (None, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-(2**7), 2**7 - 1),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 2**8 - 1),
    XSD + "positiveInteger": (1, None),
}
# Datatypes whose ill-typed literals have the EBV false (SPARQL 1.1 §17.2.2).
_FALSE_WHEN_ILL_TYPED = frozenset(
    {*_INTEGER_RANGES, XSD_DECIMAL, XSD_FLOAT, XSD_DOUBLE, XSD_BOOLEAN}
)

# Lexical spaces (XSD 1.1 §3.3); [0-9] rather than \d, which would accept non-ASCII digits.
_INTEGER_LEXICAL = re.compile(r"[+-]?[0-9]+")
_DECIMAL_LEXICAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_FLOATING_LEXICAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FLOATING_SPECIALS = {"INF": math.inf, "+INF": math.inf, "-INF": -math.inf, "NaN": math.nan}
_DATETIME_LEXICAL = re.compile(
    r"(-?(?:[1-9][0-9]{3,}|0[0-9]{3}))-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T(?:([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9](?:\.[0-9]+)?)|24:00:00(?:\.0+)?)"
    r"(Z|[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))?"
)
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # +, -, * never round


@lru_cache(maxsize=1 << 16)
def value_of(term: Term) -> Value:
    """The typed value of ``term`` (SPARQL 1.1 §17.1 operand data types), cached per term."""
    if not isinstance(term, Literal):
        return Resource(term)
    if term.language is not None:
        return LangStringValue(term, term.value, term.language)
    datatype = term.datatype.value
    lexical = term.value
    value: Value | None = None
    if datatype == XSD_STRING:
        value = StringValue(term, lexical)
    elif datatype == XSD_BOOLEAN:
        if lexical in {"true", "1", "false", "0"}:
            value = BooleanValue(term, lexical in {"true", "1"})
    elif datatype in _INTEGER_RANGES:
        value = _integer_value(term, lexical, *_INTEGER_RANGES[datatype])
    elif datatype == XSD_DECIMAL:
        if _DECIMAL_LEXICAL.fullmatch(lexical):
            value = NumericValue(term, NumericType.DECIMAL, Decimal(lexical))
    elif datatype == XSD_FLOAT:
        single = _parse_floating(lexical, single=True)
        if single is not None:
            value = NumericValue(term, NumericType.FLOAT, single)
    elif datatype == XSD_DOUBLE:
        double = _parse_floating(lexical, single=False)
        if double is not None:
            value = NumericValue(term, NumericType.DOUBLE, double)
    elif datatype == XSD_DATETIME:
        value = _datetime_value(term, lexical)
    return value if value is not None else OtherLiteral(term, datatype)


def _integer_value(
    term: Literal, lexical: str, low: int | None, high: int | None
) -> NumericValue | None:
    if not _INTEGER_LEXICAL.fullmatch(lexical):
        return None
    try:
        number = int(lexical)
    except ValueError:  # beyond Python's int-from-string digit limit: unsupported here
        return None
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return NumericValue(term, NumericType.INTEGER, number)


def _parse_floating(lexical: str, *, single: bool) -> float | None:
    """The xsd:float or xsd:double value of ``lexical`` (XSD 1.1 §3.3.4-5), rounded to nearest."""
    if lexical in _FLOATING_SPECIALS:
        return _FLOATING_SPECIALS[lexical]
    if not _FLOATING_LEXICAL.fullmatch(lexical):
        return None
    double = float(lexical)  # correctly rounded; overflows to ±inf, underflows to ±0
    if not single:
        return double
    if double == 0 or math.isinf(double):
        return double
    return _round_float32(Fraction(lexical))  # exact, to avoid rounding twice


def _datetime_value(term: Literal, lexical: str) -> DateTimeValue | None:
    match = _DATETIME_LEXICAL.fullmatch(lexical)
    if match is None:
        return None
    year, month, day = int(match[1]), int(match[2]), int(match[3])
    if day > _days_in_month(year, month):
        return None
    if match[4] is None:  # 24:00:00 is the first instant of the next day (XSD 1.1 §3.3.7)
        seconds = Fraction(86_400)
    else:
        seconds = int(match[4]) * 3600 + int(match[5]) * 60 + Fraction(match[6])
    seconds += _days_from_civil(year, month, day) * 86_400
    zone = match[7]
    if zone is not None and zone != "Z":
        offset = (int(zone[1:3]) * 60 + int(zone[4:6])) * 60
        seconds -= offset if zone[0] == "+" else -offset
    return DateTimeValue(term, seconds, zone is not None)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in {4, 6, 9, 11} else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar (year 0 exists, XSD 1.1)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


# --- Single precision --------------------------------------------------------------------

_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103  # magnitudes from here on round to infinity


def _to_float32(number: float) -> float:
    """Round a double to the nearest single-precision value (ties to even)."""
    if math.isnan(number) or math.isinf(number):
        return number
    if abs(number) >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, number)
    single: float = struct.unpack("<f", struct.pack("<f", number))[0]
    return single


def _round_float32(exact: Fraction) -> float:
    """Round an exact rational to the nearest single-precision value (ties to even)."""
    if exact == 0:
        return 0.0
    magnitude = abs(exact)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1  # now 2**exponent <= magnitude < 2**(exponent + 1)
    quantum = Fraction(2) ** max(exponent - 23, -149)  # 24-bit significand, subnormals
    rounded = round(magnitude / quantum) * quantum
    single = math.inf if rounded >= 2**128 else float(rounded)
    return -single if exact < 0 else single


# --- Canonical lexical forms (as oxigraph writes them) ------------------------------------


def _decimal_lexical(number: Decimal) -> str:
    """XSD 1.1 canonical decimal (§3.3.3): no exponent, no trailing zeros, ``2`` not ``2.0``."""
    if number.is_zero():
        return "0"
    sign, digit_tuple, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    if exponent >= 0:
        text = stripped + "0" * exponent
    elif -exponent < len(stripped):
        text = f"{stripped[:exponent]}.{stripped[exponent:]}"
    else:
        text = "0." + "0" * (-exponent - len(stripped)) + stripped
    return "-" + text if sign else text


def _floating_lexical(number: float, *, single: bool) -> str:
    """The shortest digits that round-trip, written without exponent (oxigraph's form)."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "INF" if number > 0 else "-INF"
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    return _decimal_lexical(_shortest(number, single=single))


def _round_trips(candidate: Decimal, number: float, *, single: bool) -> bool:
    if single:
        return _round_float32(Fraction(candidate)) == number
    return float(candidate) == number


def _shortest(number: float, *, single: bool) -> Decimal:
    """The decimal with the fewest digits that rounds to ``number``: the closest one if
    several, the larger in magnitude on an exact tie (Rust's formatting, used by oxigraph)."""
    # repr() is the shortest round-trip too, but it breaks ties toward an even digit.
    shortest = _shortest_float32(number) if single else Decimal(repr(number))
    exact = Decimal(number)  # the binary value, exactly
    exact_digits, shortest_digits = _significant_digits(exact), _significant_digits(shortest)
    if len(exact_digits) == len(shortest_digits) + 1 and exact_digits.endswith("5"):
        quantum = Decimal(1).scaleb(exact.adjusted() - len(shortest_digits) + 1)
        up = exact.quantize(quantum, rounding=ROUND_HALF_UP, context=_EXACT)
        if _round_trips(up, number, single=single):
            return up
    return shortest


def _significant_digits(number: Decimal) -> str:
    return "".join(map(str, number.as_tuple().digits)).rstrip("0")


def _shortest_float32(number: float) -> Decimal:
    """The decimal with the fewest digits that rounds to ``number`` as a float, closest first."""
    exact = Fraction(number)
    for precision in range(1, 10):
        nearest = Decimal(f"{number:.{precision - 1}e}")
        unit = Decimal(1).scaleb(nearest.adjusted() - precision + 1)
        # Next to a power of two the rounding interval is lopsided: try the neighbours too.
        fitting = [
            candidate
            for candidate in (nearest, nearest - unit, nearest + unit)
            if _round_trips(candidate, number, single=True)
        ]
        if fitting:
            return min(fitting, key=lambda candidate: abs(Fraction(candidate) - exact))
    return Decimal(repr(number))  # not reached: 9 significant digits always round-trip


# --- Numeric promotion -------------------------------------------------------------------


def _promote(number: NumericValue, target: NumericType) -> Number:
    """``number`` cast to the primitive type ``target`` (XPath 2.0 §B.1; F&O §17.1)."""
    value = number.value
    if number.type == target or (target == NumericType.DOUBLE and isinstance(value, float)):
        return value
    assert not isinstance(value, float)  # only float -> double widens a float
    if target == NumericType.DECIMAL:
        return Decimal(value)
    if target == NumericType.FLOAT:
        return _round_float32(Fraction(value))
    try:
        return float(value)  # correctly rounded
    except OverflowError:  # an int beyond the double range
        return math.inf if value > 0 else -math.inf


def _promoted(x: NumericValue, y: NumericValue) -> tuple[NumericType, Number, Number]:
    target = max(x.type, y.type)
    return target, _promote(x, target), _promote(y, target)


def _sign(difference: Number | Fraction) -> int:
    return (difference > 0) - (difference < 0)


def _numeric_order(x: NumericValue, y: NumericValue) -> int | None:
    """-1, 0 or 1 after promotion (F&O §6.3); ``None`` when a NaN leaves them unordered."""
    _, a, b = _promoted(x, y)  # both of one type now
    if isinstance(a, float) and isinstance(b, float) and (math.isnan(a) or math.isnan(b)):
        return None
    return (a > b) - (a < b)


# --- Comparison --------------------------------------------------------------------------

_FOURTEEN_HOURS = 14 * 3600


def _datetime_order(x: DateTimeValue, y: DateTimeValue) -> int:
    """op:dateTime-less-than / -greater-than (F&O §10.4.7-8; XSD 1.0 §3.2.7.4).

    A value without a time zone may lie anywhere within 14 hours of its local time; if the
    other value falls in that span the order is indeterminate, which is a type error.
    """
    difference = x.seconds - y.seconds
    if x.has_timezone == y.has_timezone:
        return _sign(difference)
    if difference < -_FOURTEEN_HOURS:
        return -1
    if difference > _FOURTEEN_HOURS:
        return 1
    raise SparqlTypeError(
        f"order of {x.term} and {y.term} depends on the implicit time zone (XSD 1.0 §3.2.7.4)"
    )


def _equal(x: Value, y: Value) -> bool:
    if isinstance(x, NumericValue) and isinstance(y, NumericValue):
        return _numeric_order(x, y) == 0
    if isinstance(x, StringValue) and isinstance(y, StringValue):
        return x.text == y.text
    if isinstance(x, BooleanValue) and isinstance(y, BooleanValue):
        return x.value == y.value
    if isinstance(x, DateTimeValue) and isinstance(y, DateTimeValue):
        return x.has_timezone == y.has_timezone and x.seconds == y.seconds
    return _rdfterm_equal(x, y)


def _rdfterm_equal(x: Value, y: Value) -> bool:
    """RDFterm-equal (§17.4.1.7) for values no operator of §17.3 compares.

    Different literals raise only when one has an unknown value and the other is not a
    language-tagged string (W3C tests, features KnownTypesDefault2Neq, LangTagAwareness).
    """
    if x.term == y.term:
        return True
    if isinstance(x, Resource) or isinstance(y, Resource):
        return False
    if isinstance(x, LangStringValue) or isinstance(y, LangStringValue):
        return False
    if isinstance(x, OtherLiteral) or isinstance(y, OtherLiteral):
        raise SparqlTypeError(f"cannot tell whether {x.term} and {y.term} are equal (§17.4.1.7)")
    return False  # values of two known, disjoint kinds


def _order(x: Value, y: Value) -> int | None:
    """-1, 0, 1, or ``None`` if unordered (NaN), for ``<``, ``<=``, ``>``, ``>=`` (§17.3)."""
    if isinstance(x, NumericValue) and isinstance(y, NumericValue):
        return _numeric_order(x, y)
    if isinstance(x, StringValue) and isinstance(y, StringValue):
        return (x.text > y.text) - (x.text < y.text)  # fn:compare, code point collation
    if isinstance(x, BooleanValue) and isinstance(y, BooleanValue):
        return x.value - y.value  # op:boolean-less-than: false < true
    if isinstance(x, DateTimeValue) and isinstance(y, DateTimeValue):
        return _datetime_order(x, y)
    raise SparqlTypeError(f"{x.term} and {y.term} cannot be ordered (§17.3)")


def equal(a: Term, b: Term) -> bool:
    """``a = b``: op:numeric-equal, fn:compare, op:boolean-equal, op:dateTime-equal or
    RDFterm-equal by operand types (SPARQL 1.1 §17.3, §17.4.1.7)."""
    return _equal(value_of(a), value_of(b))


def not_equal(a: Term, b: Term) -> bool:
    """``a != b``: ``fn:not(a = b)``; an error stays an error (SPARQL 1.1 §17.3)."""
    return not _equal(value_of(a), value_of(b))


def less_than(a: Term, b: Term) -> bool:
    """``a < b`` (SPARQL 1.1 §17.3): numerics, strings, booleans and dateTimes only."""
    return _order(value_of(a), value_of(b)) == -1


def less_equal(a: Term, b: Term) -> bool:
    """``a <= b``: ``logical-or(a < b, a = b)`` (SPARQL 1.1 §17.3)."""
    return _order(value_of(a), value_of(b)) in (-1, 0)


def greater_than(a: Term, b: Term) -> bool:
    """``a > b`` (SPARQL 1.1 §17.3): numerics, strings, booleans and dateTimes only."""
    return _order(value_of(a), value_of(b)) == 1


def greater_equal(a: Term, b: Term) -> bool:
    """``a >= b``: ``logical-or(a > b, a = b)`` (SPARQL 1.1 §17.3)."""
    return _order(value_of(a), value_of(b)) in (0, 1)


_COMPARISONS: dict[str, Callable[[Value, Value], bool]] = {
    "=": _equal,
    "!=": lambda x, y: not _equal(x, y),
    "<": lambda x, y: _order(x, y) == -1,
    "<=": lambda x, y: _order(x, y) in (-1, 0),
    ">": lambda x, y: _order(x, y) == 1,
    ">=": lambda x, y: _order(x, y) in (0, 1),
}


def compare(op: str, a: Term, b: Term) -> bool:
    """``a op b`` for ``op`` one of ``= != < <= > >=`` (SPARQL 1.1 §17.3).

    Raises :class:`SparqlTypeError` on a type error and ``ValueError`` on an unknown ``op``.
    """
    return compare_values(op, value_of(a), value_of(b))


def compare_values(op: str, x: Value, y: Value) -> bool:
    """:func:`compare` on values already computed by :func:`value_of` (SPARQL 1.1 §17.3)."""
    try:
        function = _COMPARISONS[op]
    except KeyError:
        raise ValueError(f"unknown comparison operator {op!r}") from None
    return function(x, y)


def same_term(a: Term, b: Term) -> bool:
    """``sameTerm(a, b)``: RDF term identity, never a value comparison (SPARQL 1.1 §17.4.1.8)."""
    return a == b


def effective_boolean_value(term: Term) -> bool:
    """The EBV of ``term`` (SPARQL 1.1 §17.2.2).

    Booleans are themselves, numerics are false when zero or NaN, strings (language-tagged
    ones too, "plain literals") are false when empty, ill-typed booleans and numerics are
    false; anything else raises :class:`SparqlTypeError`.
    """
    value = value_of(term)
    if isinstance(value, BooleanValue):
        return value.value
    if isinstance(value, NumericValue):
        number = value.value
        return not (number == 0 or (isinstance(number, float) and math.isnan(number)))
    if isinstance(value, StringValue | LangStringValue):
        return value.text != ""
    if isinstance(value, OtherLiteral) and value.datatype in _FALSE_WHEN_ILL_TYPED:
        return False
    raise SparqlTypeError(f"{term} has no effective boolean value (§17.2.2)")


# --- Arithmetic --------------------------------------------------------------------------

_DIVISION_DIGITS = 18  # fractional digits of a decimal quotient, as oxigraph
_DATATYPES = {
    NumericType.INTEGER: NamedNode(XSD_INTEGER),
    NumericType.DECIMAL: NamedNode(XSD_DECIMAL),
    NumericType.FLOAT: NamedNode(XSD_FLOAT),
    NumericType.DOUBLE: NamedNode(XSD_DOUBLE),
}


def _numeric(term: Term) -> NumericValue:
    value = value_of(term)
    if not isinstance(value, NumericValue):
        raise SparqlTypeError(f"{term} is not a number (§17.3)")
    return value


def _numeric_literal(kind: NumericType, number: Number) -> Literal:
    """The canonical literal of a result: derived integer types give xsd:integer (F&O §6.2)."""
    if isinstance(number, float):
        lexical = _floating_lexical(number, single=kind == NumericType.FLOAT)
    elif isinstance(number, Decimal):
        lexical = _decimal_lexical(number)
    else:
        try:
            lexical = str(number)
        except ValueError:  # beyond Python's int-to-string digit limit
            raise SparqlTypeError("integer overflow (F&O err:FOAR0002)") from None
    return Literal(lexical, datatype=_DATATYPES[kind])


def _arithmetic(symbol: str, a: Term, b: Term) -> Literal:
    kind, x, y = _promoted(_numeric(a), _numeric(b))
    if isinstance(x, float) and isinstance(y, float):
        result = _ieee(symbol, x, y)
        return _numeric_literal(kind, _to_float32(result) if kind == NumericType.FLOAT else result)
    assert not isinstance(x, float) and not isinstance(y, float)
    if symbol == "/":  # integer / integer is a decimal (F&O §6.2.4)
        return _numeric_literal(NumericType.DECIMAL, _decimal_divide(Decimal(x), Decimal(y)))
    if isinstance(x, int) and isinstance(y, int):
        exact: Number = x + y if symbol == "+" else x - y if symbol == "-" else x * y
    else:
        x, y = Decimal(x), Decimal(y)
        operation = {"+": _EXACT.add, "-": _EXACT.subtract, "*": _EXACT.multiply}[symbol]
        exact = operation(x, y)
    return _numeric_literal(kind, exact)


def _ieee(symbol: str, x: float, y: float) -> float:
    if symbol == "+":
        return x + y
    if symbol == "-":
        return x - y
    if symbol == "*":
        return x * y
    if y != 0:
        return x / y
    if x == 0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


def _decimal_divide(x: Decimal, y: Decimal) -> Decimal:
    """op:numeric-divide on decimals (F&O §6.2.4): truncated toward zero after 18 fractional
    digits (or more if an operand has more), as oxigraph; division by zero raises."""
    if y.is_zero():
        raise SparqlTypeError("decimal division by zero (F&O err:FOAR0001)")
    digits = max(_DIVISION_DIGITS, _fraction_digits(x), _fraction_digits(y))
    scaled = int(Fraction(x) / Fraction(y) * 10**digits)  # int() truncates toward zero
    return Decimal(scaled).scaleb(-digits, _EXACT)


def _fraction_digits(number: Decimal) -> int:
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def add(a: Term, b: Term) -> Literal:
    """``a + b``: op:numeric-add after promotion (SPARQL 1.1 §17.3; F&O §6.2.1)."""
    return _arithmetic("+", a, b)


def subtract(a: Term, b: Term) -> Literal:
    """``a - b``: op:numeric-subtract after promotion (SPARQL 1.1 §17.3; F&O §6.2.2)."""
    return _arithmetic("-", a, b)


def multiply(a: Term, b: Term) -> Literal:
    """``a * b``: op:numeric-multiply after promotion (SPARQL 1.1 §17.3; F&O §6.2.3)."""
    return _arithmetic("*", a, b)


def divide(a: Term, b: Term) -> Literal:
    """``a / b``: op:numeric-divide (SPARQL 1.1 §17.3; F&O §6.2.4).

    Integers divide as decimals; integer or decimal division by zero raises, float and
    double division by zero gives ``INF``, ``-INF`` or ``NaN``.
    """
    return _arithmetic("/", a, b)


def unary_minus(a: Term) -> Literal:
    """``-a``: op:numeric-unary-minus (SPARQL 1.1 §17.3; F&O §6.2.8)."""
    number = _numeric(a)
    value = number.value
    negated = _EXACT.minus(value) if isinstance(value, Decimal) else -value
    return _numeric_literal(number.type, negated)


def unary_plus(a: Term) -> Literal:
    """``+a``: op:numeric-unary-plus, the canonical literal (SPARQL 1.1 §17.3; F&O §6.2.7)."""
    number = _numeric(a)
    return _numeric_literal(number.type, number.value)
