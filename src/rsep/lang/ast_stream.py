"""The nodes every streaming dialect shares: durations, windows, window clauses, PRAGMA and
registration (the AST counterpart of ``grammar/stream.lark`` and ``grammar/rspql.lark``).

They extend the SPARQL 1.1 tree of :mod:`rsep.lang.ast` the documented way: frozen
dataclasses with ``eq=False`` (structural, iterative equality; ``pos`` not compared). The
dialect-only nodes (RSEP-QL's ``MATCH``, EP-SPARQL's temporal operators, CQELS-CEP's ``SEQ``
and nested paths, SPAseq's sequence expressions and GPMs) live in their dialect modules.

Decisions, each with the paper section it rests on:

- **Durations** (:class:`Duration`). A length of time is kept as its value in milliseconds,
  rsep's clock (DESIGN.md, Data model; RSP-QL Semantics (003) leaves instants unit-less), so
  ``PT3S``, ``3s`` and ``3000ms`` are *equal* nodes: the same window written in RSP-QL, C-SPARQL
  and CQELS-QL builds the same tree. A bare integer (``[RANGE 5 STEP 1]``, the papers'
  unit-less examples) counts the query's ``time_unit`` and is kept as such (``counted``), since
  that unit is a parameter (PRAGMA, ``--set``, the dialect default). ``written`` keeps the
  source text for printing and takes no part in equality, like :attr:`ast.Literal.written`;
  the printer uses it only when it reads back as the same value, else a canonical form
  (``3s``, ``500ms``, ``10m``), so printing is faithful and still idempotent. A duration in
  years or months has no fixed length and is rejected; so is a fraction of a millisecond.
- **Time points** (``T0``, interval bounds): a :class:`Duration` from the epoch, or an
  ``xsd:dateTime`` string (:class:`DateTime`, equal by instant).
- **Windows** (:class:`Window` and its subclasses): one node per kind of window of the
  shared notation (docs/languages.md, "Windows"), with its explicit operational parameters
  as fields: ``t0`` (RSP-QL Def. 13) and ``report`` (RSP-QL, "Evaluation time instants",
  after SECRET). ``report`` is a *set* of strategies, kept sorted and without duplicates, so
  ``REPORT NON_EMPTY WINDOW_CLOSE`` equals ``REPORT WINDOW_CLOSE, NON_EMPTY``. C-SPARQL's
  ``[RANGE d TUMBLING]`` is the time-based window whose slide is its width, and is built as
  such; the count-based keywords (``TRIPLES``, ``ELEMENTS``, ``ITEM``…) make the same node.
- **Window clauses.** :class:`NamedWindow` is RSP-QL's ``FROM NAMED WINDOW w ON s [...]``
  (Def. 14, the pair (w, W(S)); also used by RSEP-QL and CQELS-CEP), :class:`FromStream` is
  C-SPARQL's ``FROM STREAM s [...]`` (merged into the default graph), :class:`StreamPattern`
  is CQELS-QL's ``STREAM s [...] { }`` and :class:`WindowPattern` RSP-QL's ``WINDOW w { }``.
  :func:`stream_windows` lists the windows of a query whatever the dialect.
- **Registration** (:class:`StreamQuery`, :class:`Register`). ``REGISTER RSTREAM <o> AS``
  and ``REGISTER STREAM <o> AS SELECT RSTREAM …`` (RSP4J and the W3C RSP CG draft) give the
  same tree: the R2S operator (Def. 20-22) is a field of the query, wherever it was written.
  A prologue after ``AS`` joins the one before ``REGISTER`` (declarations keep their order).
  A query without registration and R2S operator is a plain :class:`ast.Query`, so the same
  SPARQL text builds the same tree in every dialect.
- **PRAGMA** (:class:`Pragma`): a prologue declaration; words are lower case, durations
  compare by value. ``rsep.lang.stream_checks`` checks that its name is a parameter's; its
  value is checked where the plan is compiled (``rsep.algebra.compile``), against the one
  list of allowed values (``rsep.algebra.params``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from rsep.lang import ast
from rsep.rdf.time import datetime_to_ms, format_duration, parse_duration

__all__ = [
    "R2S_OPERATORS",
    "REPORT_STRATEGIES",
    "AllWindow",
    "CountWindow",
    "DateTime",
    "Duration",
    "FromStream",
    "IntervalWindow",
    "LandmarkWindow",
    "NamedWindow",
    "NowWindow",
    "PastWindow",
    "Pragma",
    "PragmaCall",
    "PragmaValue",
    "PragmaWord",
    "Register",
    "ReportStrategy",
    "StreamPattern",
    "StreamQuery",
    "TimePoint",
    "TimeWindow",
    "Window",
    "WindowPattern",
    "duration",
    "duration_text",
    "stream_windows",
]

# Durations ---------------------------------------------------------------------------------

_COUNT = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True, eq=False)
class Duration(ast.Node):
    """A length of time (docs/languages.md, "Durations"): ``value`` milliseconds, or, when
    ``counted`` (a bare integer), ``value`` units of the query's ``time_unit``.

    Equal when value and ``counted`` are; ``written`` (the source text) is for printing.
    """

    value: int
    counted: bool = False
    written: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError(f"a duration is not negative: {self.value}")

    def milliseconds(self, unit_ms: int = 1) -> int:
        """The length in milliseconds, a bare integer counting ``unit_ms``-long units."""
        return self.value * unit_ms if self.counted else self.value


def duration(text: str) -> Duration:
    """The :class:`Duration` node of ``text``: a bare integer counts the query's time unit
    (``counted``); every other form (``PT3S``, ``3s``, ``500ms``, ``10m``, ``1.5h``, ``1d``) is
    read by :func:`rsep.rdf.time.parse_duration`, which raises :class:`ValueError` for years,
    months or a fraction of a millisecond."""
    if _COUNT.fullmatch(text):
        return Duration(int(text), counted=True, written=text)
    return Duration(parse_duration(text), written=text)


def duration_text(node: Duration) -> str:
    """The text of ``node``: as written when that reads back as the same value, else a count
    for a bare integer and :func:`rsep.rdf.time.format_duration` (``10m``, ``500ms``)."""
    written = node.written
    if written is not None:
        try:
            if duration(written) == node:
                return written
        except ValueError:
            pass
    if node.counted:
        return str(node.value)
    return format_duration(node.value)


@dataclass(frozen=True, slots=True, eq=False)
class DateTime(ast.Node):
    """A time point written as an ``xsd:dateTime`` string (``'2020-01-01T00:00:00Z'``):
    ``ms`` since the epoch (RSP-QL Def. 8: T is rsep's millisecond clock); ``lexical`` is the
    written form, for printing only."""

    ms: int
    lexical: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, lexical: str) -> DateTime:
        """The instant of ``lexical``; raises :class:`ValueError` if it is no dateTime."""
        try:
            return cls(datetime_to_ms(lexical), lexical)
        except OverflowError:
            raise ValueError(f"not an xsd:dateTime: {lexical!r}") from None


TimePoint = Duration | DateTime
"""A time instant: a duration from the epoch (or a count of the time unit), or a dateTime."""


# Windows (RSP-QL Def. 13; RSEP-QL Sect. 3.1) --------------------------------------------------

REPORT_STRATEGIES = ("content_change", "window_close", "non_empty", "periodic")
"""SECRET's reporting strategies (RSP-QL, "Evaluation time instants"), in canonical order."""


@dataclass(frozen=True, slots=True, eq=False)
class ReportStrategy(ast.Node):
    """One strategy of a window's report policy: ``name`` is one of
    :data:`REPORT_STRATEGIES`; ``period`` is the period of ``periodic``."""

    name: str
    period: Duration | None = None

    def __post_init__(self) -> None:
        if self.name not in REPORT_STRATEGIES:
            raise ValueError(f"not a report strategy: {self.name!r}")
        if (self.period is None) != (self.name != "periodic"):
            raise ValueError("a period goes with the periodic strategy, and only with it")

    def key(self) -> tuple[int, int, bool]:
        """The canonical order of strategies in a policy."""
        period = self.period
        value = 0 if period is None else period.value
        counted = False if period is None else period.counted
        return (REPORT_STRATEGIES.index(self.name), value, counted)


@dataclass(frozen=True, slots=True, eq=False)
class Window(ast.Node):
    """A window specification ``[size modifiers]``: the base of the kinds of window.

    ``t0`` is the ``T0`` modifier (the origin, RSP-QL Def. 13; the start of a landmark
    window, RSEP-QL Sect. 3.1), None when not written; ``report`` the ``REPORT`` modifier,
    a set of strategies in canonical order, empty when not written.
    """

    t0: TimePoint | None = field(default=None, kw_only=True)
    report: tuple[ReportStrategy, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        unique = {strategy.key(): strategy for strategy in self.report}
        canonical = tuple(unique[key] for key in sorted(unique))
        if canonical != self.report:
            object.__setattr__(self, "report", canonical)


@dataclass(frozen=True, slots=True, eq=False)
class TimeWindow(Window):
    """A time-based sliding window of width α and slide β (RSP-QL Def. 13): ``[RANGE α STEP
    β]``, ``[RANGE α SLIDE β]``, C-SPARQL's ``[RANGE α TUMBLING]`` (β = α); without a slide
    (None) it slides with every tick (CQELS-QL)."""

    width: Duration
    slide: Duration | None = None


@dataclass(frozen=True, slots=True, eq=False)
class CountWindow(Window):
    """The last ``size`` items, sliding by ``slide`` items (C-SPARQL ``[RANGE TRIPLES n]``,
    CQELS-QL ``[TRIPLES n]``, RSP-QL ``[ELEMENTS n STEP m]``)."""

    size: int
    slide: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class NowWindow(Window):
    """CQELS-QL ``[NOW]``: the items with the current timestamp."""


@dataclass(frozen=True, slots=True, eq=False)
class AllWindow(Window):
    """CQELS-QL ``[ALL]``: every item so far."""


@dataclass(frozen=True, slots=True, eq=False)
class LandmarkWindow(Window):
    """The landmark window W^λ(t0) (RSEP-QL Sect. 3.1): every item from ``t0`` on."""


@dataclass(frozen=True, slots=True, eq=False)
class IntervalWindow(Window):
    """The interval window W^⊔(t′, t″) (RSEP-QL Sect. 3.1): the items in [start, end]."""

    start: TimePoint
    end: TimePoint


@dataclass(frozen=True, slots=True, eq=False)
class PastWindow(Window):
    """W3C RSP CG draft ``[FROM NOW-d1 TO NOW-d2 STEP d3]``: a window in the past, relative
    to the evaluation time; ``end`` None is ``TO NOW``."""

    start: Duration
    end: Duration | None = None
    slide: Duration | None = None


# Window clauses and patterns ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class NamedWindow(ast.DatasetClause):
    """``FROM NAMED WINDOW name ON stream [window]``: the named window (w, W(S)) of an RSP-QL
    dataset (RSP-QL Def. 14); also RSEP-QL's (Sect. 3.2) and CQELS-CEP's (Sect. 2.2)."""

    name: ast.Var | ast.Iri
    stream: ast.Var | ast.Iri
    window: Window


@dataclass(frozen=True, slots=True, eq=False)
class FromStream(ast.DatasetClause):
    """C-SPARQL ``FROM STREAM <s> [window]``: a window merged into the default graph (RSP-QL
    paper, "RSP-QL dataset for C-SPARQL, CQELS and SPARQLstream")."""

    stream: ast.Iri
    window: Window


@dataclass(frozen=True, slots=True, eq=False)
class StreamPattern(ast.Pattern):
    """CQELS-QL ``STREAM s [window] { … }``: a pattern over a window's content, like GRAPH
    (RSP-QL paper, "RSP-QL dataset for C-SPARQL, CQELS and SPARQLstream")."""

    stream: ast.Var | ast.Iri
    window: Window
    pattern: ast.Group


@dataclass(frozen=True, slots=True, eq=False)
class WindowPattern(ast.Pattern):
    """RSP-QL ``WINDOW w { … }``: a pattern over the content of the named window ``w``
    (RSP-QL, "RSP-QL dataset"; RSEP-QL Sect. 3.3, window graph pattern)."""

    name: ast.Var | ast.Iri
    pattern: ast.Group


def stream_windows(
    query: ast.Query,
) -> Iterator[tuple[ast.Var | ast.Iri | None, ast.Var | ast.Iri, Window]]:
    """``(name, stream, window)`` for every window of ``query``, in document order: RSP-QL
    named windows, C-SPARQL ``FROM STREAM`` and CQELS-QL ``STREAM`` patterns (no name)."""
    for node in query.walk():
        if isinstance(node, NamedWindow):
            yield node.name, node.stream, node.window
        elif isinstance(node, FromStream | StreamPattern):
            yield None, node.stream, node.window


# Registration and R2S (RSP-QL Def. 20-22) -------------------------------------------------

R2S_OPERATORS = ("rstream", "istream", "dstream")
"""RStream, IStream, DStream (RSP-QL Def. 20-22)."""


@dataclass(frozen=True, slots=True, eq=False)
class Register(ast.Node):
    """``REGISTER … name AS``: the name under which a query runs. RSP-QL names its output
    stream (an IRI or a variable); C-SPARQL names the query (a bare word), and ``query`` is
    True for its ``REGISTER QUERY`` (answers returned, not streamed) and ``every`` its
    ``COMPUTED EVERY d``."""

    name: ast.Var | ast.Iri | str
    query: bool = False
    every: Duration | None = None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class StreamQuery(ast.Query):
    """A registered query, or one with an R2S operator (RSP-QL Def. 20-22): ``r2s`` is one
    of :data:`R2S_OPERATORS` or None (then ``PRAGMA r2s`` or the dialect default applies)."""

    register: Register | None = None
    r2s: str | None = None

    def __post_init__(self) -> None:
        if self.r2s is not None and self.r2s not in R2S_OPERATORS:
            raise ValueError(f"not an R2S operator: {self.r2s!r}")


# PRAGMA --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class PragmaWord(ast.Node):
    """A word value of a PRAGMA (``latest``, ``window_close``), lower case."""

    word: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "word", self.word.lower())


@dataclass(frozen=True, slots=True, eq=False)
class PragmaCall(ast.Node):
    """``periodic(d)``: a word applied to a duration, the function lower case."""

    function: str
    arg: Duration

    def __post_init__(self) -> None:
        object.__setattr__(self, "function", self.function.lower())


PragmaValue = Duration | ast.Literal | ast.Iri | PragmaWord | PragmaCall
"""One value of a PRAGMA: a duration, a string or number, an IRI, a word or a call."""


@dataclass(frozen=True, slots=True, eq=False)
class Pragma(ast.Declaration):
    """``PRAGMA name = value, …`` in the prologue: a query-wide operational parameter
    (docs/languages.md, "Explicit operational parameters"); several values are a set."""

    name: str
    values: tuple[PragmaValue, ...]

    def text(self) -> str:
        """The value as ``--set name=value`` writes it."""
        return ", ".join(pragma_value_text(value) for value in self.values)


def pragma_value_text(value: PragmaValue) -> str:
    """One PRAGMA value as text: a duration as written, a string in single quotes."""
    if isinstance(value, Duration):
        return duration_text(value)
    if isinstance(value, PragmaWord):
        return value.word
    if isinstance(value, PragmaCall):
        return f"{value.function}({duration_text(value.arg)})"
    if isinstance(value, ast.Iri):
        return f"<{value.value}>"
    if value.datatype == ast.XSD_STRING:
        return "'" + value.lexical.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return value.lexical
