"""What the stream formats share: reading files, timestamps, time order, event assembly,
line lookup for error messages, and a parse that resynchronises after a syntax error.

Every reader parses with pyoxigraph (DESIGN.md, Performance stance) in one pass over the
file; only when that pass hits a syntax error does it fall back to the slower paths here,
so good files pay nothing for error recovery.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import lzma
import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, tzinfo
from functools import lru_cache
from io import BufferedIOBase
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat, Triple, parse

from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event, EventId
from rsep.rdf.terms import (
    PROV_ENDED_AT,
    PROV_GENERATED_AT,
    PROV_STARTED_AT,
    RSEP_STREAM,
    XSD,
    XSD_STRING,
)
from rsep.rdf.time import TimeUnit, datetime_to_ms, ms_to_datetime

RECORD_LIMIT = 2000
"""Longest record text copied into a dead-letter entry."""

WINDOW = 65_536
"""Lines parsed at once while recovering from a syntax error (bounds the cost of each retry)."""

_DATETIME_TYPES = frozenset({XSD + "dateTime", XSD + "dateTimeStamp"})
_INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
_INT_RE = re.compile(r"[+-]?[0-9]+")

META_PREDICATES = frozenset(
    p.value for p in (PROV_GENERATED_AT, PROV_STARTED_AT, PROV_ENDED_AT, RSEP_STREAM)
)
"""Default-graph predicates that carry an event's time and stream."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The reader arguments every format shares (see :func:`rsep.rdf.formats.read_events`)."""

    stream: str | None = None
    time_unit: TimeUnit = TimeUnit.MILLISECONDS
    tz: tzinfo = UTC


class BadEvent(Exception):
    """An event that cannot be built; the message is the reason for the dead letter."""


# --------------------------------------------------------------------------- files


def base_name(path: Path) -> str:
    """The lower-case file name without a trailing ``.gz`` or ``.xz``."""
    name = path.name.lower()
    return name[:-3] if name.endswith((".gz", ".xz")) else name


def part_files(path: Path) -> list[Path]:
    """The files to read for ``path``: itself, or a directory's part files in name order.

    Spark writes ``_SUCCESS``, ``.crc`` and hidden files beside the parts; they are skipped.
    """
    if not path.is_dir():
        return [path]
    files = sorted(
        p
        for p in path.iterdir()
        if p.is_file() and not p.name.startswith(("_", ".")) and not p.name.endswith(".crc")
    )
    if not files:
        raise UserError(f"{path}: the directory holds no part files")
    return files


def read_bytes(path: Path) -> bytes:
    """The content of ``path``, decompressed when it is gzip- or xz-compressed (by magic
    number: the shared data sets ship as ``.xz``)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(path, None, f"corrupt gzip data: {exc}") from exc
    if raw[:6] == b"\xfd7zXZ\x00":
        try:
            return lzma.decompress(raw)
        except lzma.LZMAError as exc:
            raise InputError(path, None, f"corrupt xz data: {exc}") from exc
    return raw


def read_chunks(path: Path, size: int) -> Iterator[bytes]:
    """The content of ``path`` in pieces of about ``size`` bytes, decompressed as
    :func:`read_bytes` does, so that a line-based reader never holds a whole file.

    Raises :class:`InputError` (no line) where compressed data turns out corrupt, which
    can be after some pieces were yielded.
    """
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    with raw:
        magic = raw.read(6)
        raw.seek(0)
        if magic[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=raw) as unzipped:
                yield from _pieces(path, unzipped, size, "gzip", (OSError, EOFError, zlib.error))
        elif magic == b"\xfd7zXZ\x00":
            with lzma.LZMAFile(raw) as unpacked:
                yield from _pieces(path, unpacked, size, "xz", (lzma.LZMAError, EOFError))
        else:
            yield from _pieces(path, raw, size, "", ())


def _pieces(
    path: Path, stream: BufferedIOBase, size: int, kind: str, errors: tuple[type[Exception], ...]
) -> Iterator[bytes]:
    while True:
        try:
            piece = stream.read(size)
        except errors as exc:
            raise InputError(path, None, f"corrupt {kind} data: {exc}") from exc
        except OSError as exc:
            raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        if not piece:
            return
        yield piece


def decode_lines(data: bytes, file: Path, bad: BadRecords) -> list[str]:
    """The text lines of ``data`` (split on LF only); a line that is not UTF-8 is reported
    and replaced by an empty line, so line numbers stay right."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        lines: list[str] = []
        for number, raw in enumerate(data.split(b"\n"), 1):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                bad.report(file, number, f"not UTF-8 text: {exc.reason}", repr(raw[:200]))
                lines.append("")
        return lines
    if text.startswith("\ufeff"):
        text = text[1:]
    return [line.rstrip("\r") for line in text.split("\n")]


def decode_text(data: bytes, file: Path) -> str:
    """``data`` as UTF-8 text; raises :class:`InputError` at the first bad byte's line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(file, line, f"not UTF-8 text: {exc.reason}") from exc
    return text[1:] if text.startswith("\ufeff") else text


def clip(text: str) -> str:
    """``text`` cut to :data:`RECORD_LIMIT` characters for a dead-letter entry."""
    return text if len(text) <= RECORD_LIMIT else text[:RECORD_LIMIT] + "…"


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Hold the cyclic garbage collector while a reader builds a batch of terms and
    events: that makes a few containers per line or row, none in a cycle, and the
    collections they would set off (scanning the caller's live events too) cost a fifth
    to a quarter of the reading time. The collector is back on before control returns to
    the caller."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# --------------------------------------------------------------------------- time


def lexical_ms(lexical: str, datatype: str, unit: TimeUnit, tz: tzinfo) -> int:
    """Epoch ms of a timestamp literal given by lexical form and datatype IRI.

    An ``xsd:dateTime`` (or ``xsd:dateTimeStamp``) is read in ``tz`` when it has no zone;
    an integer-typed literal counts ``unit``; a plain string may hold either form.
    Raises ``ValueError`` with the reason otherwise.
    """
    if datatype in _DATETIME_TYPES:
        return datetime_to_ms(lexical, tz)
    if datatype in _INTEGER_TYPES:
        if _INT_RE.fullmatch(lexical):
            return unit.to_ms(int(lexical))
        raise ValueError(f"{lexical!r} is not an integer")
    if datatype == XSD_STRING:
        if _INT_RE.fullmatch(lexical):
            return unit.to_ms(int(lexical))
        return datetime_to_ms(lexical, tz)
    raise ValueError(f"datatype <{datatype}> is neither xsd:dateTime nor an integer type")


@lru_cache(maxsize=65_536)
def term_ms(term: object, unit: TimeUnit, tz: tzinfo) -> int:
    """Epoch ms of a timestamp term (see :func:`lexical_ms`); ``ValueError`` if it is none.

    Memoised: the events of a stream share few distinct times (a bar a minute), and
    parsing an ``xsd:dateTime`` costs more than the rest of reading an event's time.
    """
    if not isinstance(term, Literal):
        raise ValueError("a timestamp must be a literal")
    if term.language is not None:
        raise ValueError("a language-tagged string is not a time")
    return lexical_ms(term.value, term.datatype.value, unit, tz)


def unit_count(ms: int, unit: TimeUnit) -> int:
    """``ms`` as a whole count of ``unit``; :class:`UserError` if it is not one."""
    count, rest = divmod(ms, unit.value)
    if rest:
        raise UserError(f"time {ms} ms is not a whole number of {unit.name.lower()}")
    return count


def datetime_text(ms: int) -> str:
    """The ``xsd:dateTime`` lexical form of ``ms``; :class:`UserError` beyond year 9999."""
    try:
        return ms_to_datetime(ms)
    except (OverflowError, ValueError) as exc:
        raise UserError(f"time {ms} ms has no xsd:dateTime form: {exc}") from exc


def time_literal(ms: int, unit: TimeUnit | None) -> str:
    """The N-Triples literal a writer emits for ``ms``: an ``xsd:dateTime`` unless a unit is
    given, then an ``xsd:integer`` count of that unit."""
    if unit is None:
        return f'"{datetime_text(ms)}"^^<{XSD}dateTime>'
    return f'"{unit_count(ms, unit)}"^^<{XSD}integer>'


def show_time(ms: int) -> str:
    """``ms`` for a message: the dateTime and the count."""
    try:
        return f"{ms_to_datetime(ms)} ({ms} ms)"
    except (OverflowError, ValueError):
        return f"{ms} ms"


class TimeOrder:
    """Checks that time does not go backwards within each stream of one file."""

    def __init__(self) -> None:
        self._last: dict[str, int] = {}

    def check(self, stream: str, t: int) -> str | None:
        """The reason ``t`` breaks the order of ``stream``, or ``None`` (and remember ``t``)."""
        last = self._last.get(stream)
        if last is not None and t < last:
            return (
                f"time going backwards in stream <{stream}>: {show_time(t)} after {show_time(last)}"
            )
        self._last[stream] = t
        return None


class WriteChecks:
    """What every writer checks per event: time order per stream, unique graph names.

    Events without an id get a fresh blank node ``_:rsep<k>`` as graph name.
    """

    def __init__(self, fmt: str) -> None:
        self._fmt = fmt
        self._order = TimeOrder()
        self._names: set[str] = set()
        self._fresh = 0

    def check(self, index: int, event: Event, *, needs_triples: bool = True) -> None:
        """Raise :class:`UserError` if event number ``index`` cannot be written."""
        if needs_triples and not event.graph:
            raise UserError(f"event {index}: {self._fmt} cannot represent an empty graph")
        reason = self._order.check(event.stream, event.t_start)
        if reason is not None:
            raise UserError(f"event {index}: {reason}")

    def name(self, index: int, event: Event) -> str:
        """The N-Triples form of the event's graph name, unique within the output."""
        if event.id is None:
            while True:
                text = f"_:rsep{self._fresh}"
                self._fresh += 1
                if text not in self._names:
                    break
        else:
            text = str(event.id)
            if text in self._names:
                raise UserError(f"event {index}: graph name {text} is used by an earlier event")
        self._names.add(text)
        return text


def sorted_triples(event: Event) -> list[Triple]:
    """The event's triples in a stable order, so writers are deterministic."""
    return sorted(event.graph, key=str)


# --------------------------------------------------------------------------- events


Meta = Mapping[str, Mapping[object, None]]
"""Default-graph values of one graph name: predicate IRI -> ordered set of objects."""


def build_event(name: EventId, triples: list[Triple], meta: Meta, opts: ReadOptions) -> Event:
    """The event of graph ``name`` from its triples and its default-graph time and stream.

    Raises :class:`BadEvent` naming what is missing or wrong.
    """
    generated = meta.get(PROV_GENERATED_AT.value)
    started = meta.get(PROV_STARTED_AT.value)
    ended = meta.get(PROV_ENDED_AT.value)
    if generated and (started or ended):
        raise BadEvent(
            f"ambiguous timestamp for graph {name}: both prov:generatedAtTime and "
            "prov:startedAtTime/prov:endedAtTime are given"
        )
    if generated:
        t_start = t_end = _one_time(name, "prov:generatedAtTime", generated, opts)
    elif started and ended:
        t_start = _one_time(name, "prov:startedAtTime", started, opts)
        t_end = _one_time(name, "prov:endedAtTime", ended, opts)
        if t_end < t_start:
            raise BadEvent(
                f"graph {name} ends before it starts: {show_time(t_end)} < {show_time(t_start)}"
            )
    elif started or ended:
        have, lack = (
            ("prov:startedAtTime", "prov:endedAtTime")
            if started
            else ("prov:endedAtTime", "prov:startedAtTime")
        )
        raise BadEvent(f"missing timestamp: graph {name} has {have} but no {lack}")
    else:
        raise BadEvent(
            f"missing timestamp: graph {name} has no prov:generatedAtTime "
            "(nor prov:startedAtTime and prov:endedAtTime) in the default graph"
        )
    stream = opts.stream
    if stream is None:
        values = list(meta.get(RSEP_STREAM.value, {}))
        if not values:
            raise BadEvent(
                f"no stream given for graph {name}: pass a stream, or state "
                f"<g> <{RSEP_STREAM.value}> <stream> in the default graph"
            )
        if len(values) > 1 or not isinstance(values[0], NamedNode):
            shown = ", ".join(str(v) for v in values)
            raise BadEvent(f"graph {name} needs one stream IRI, got {shown}")
        stream = values[0].value
    return Event(stream, t_start, t_end, frozenset(triples), name)


def _one_time(name: EventId, label: str, values: Mapping[object, None], opts: ReadOptions) -> int:
    terms = list(values)
    if len(terms) > 1:
        shown = ", ".join(str(t) for t in terms)
        raise BadEvent(f"graph {name} has {len(terms)} values of {label}: {shown}")
    try:
        return term_ms(terms[0], opts.time_unit, opts.tz)
    except ValueError as exc:
        raise BadEvent(f"unparsable timestamp {terms[0]} ({label} of {name}): {exc}") from exc


def collect(
    quads: list[Quad],
    graphs: dict[EventId, list[Triple]],
    meta: dict[object, dict[str, dict[object, None]]],
) -> None:
    """Sort quads into named graphs (kept in order of first appearance) and the
    default-graph time and stream statements about them."""
    for quad in quads:
        graph = quad.graph_name
        if isinstance(graph, NamedNode | BlankNode):
            triples = graphs.get(graph)
            if triples is None:
                graphs[graph] = triples = []
            triples.append(quad.triple)
        elif quad.predicate.value in META_PREDICATES:
            by_predicate = meta.get(quad.subject)
            if by_predicate is None:
                meta[quad.subject] = by_predicate = {}
            by_predicate.setdefault(quad.predicate.value, {})[quad.object] = None


# --------------------------------------------------------------------------- lines


class Lines:
    """Line starts of a byte buffer, computed on demand: only error paths need them."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", data))]
        if len(self.starts) > 1 and self.starts[-1] == len(data):
            self.starts.pop()  # a final newline does not open a line

    def __len__(self) -> int:
        return len(self.starts)

    def offset(self, index: int) -> int:
        """Byte offset where line ``index`` (0-based) starts; the end of data past the end."""
        return self.starts[index] if index < len(self.starts) else len(self.data)

    def line(self, index: int) -> bytes:
        """Line ``index`` (0-based) without its newline."""
        return self.data[self.offset(index) : self.offset(index + 1)].rstrip(b"\r\n")

    def text(self, lo: int, hi: int) -> str:
        """Lines ``lo`` to ``hi`` (exclusive) as text for a dead-letter record."""
        raw = self.data[self.offset(lo) : min(self.offset(hi), self.offset(lo) + RECORD_LIMIT)]
        return clip(raw.decode("utf-8", "replace").rstrip("\n"))


def statement_line(line: bytes) -> bool:
    """Whether a line of a line-based format (N-Triples, N-Quads) holds a statement."""
    stripped = line.lstrip()
    return bool(stripped) and not stripped.startswith(b"#")


_BLOCK_START = (
    frozenset(b"<_[({@:")
    | frozenset(range(ord("A"), ord("Z") + 1))
    | frozenset(range(ord("a"), ord("z") + 1))
)


def block_start(line: bytes) -> bool:
    """Whether a Turtle/TriG line can start a top-level statement: it begins in column 0
    with a term, ``{``, ``GRAPH`` or a directive (``@prefix``, ``PREFIX``, ``@base``,
    ``BASE``). Graph contents are indented by every TriG writer, so they never qualify."""
    return bool(line) and line[0] in _BLOCK_START


_PARSER_ERROR = re.compile(r"^Parser error [^:]*: ")
_LINE_SUFFIX = re.compile(r" \(line \d+\)$")


def syntax_reason(exc: SyntaxError) -> str:
    """The reason for a pyoxigraph syntax error, without its position (we report our own)."""
    message = exc.msg if exc.msg else str(exc)
    message = _LINE_SUFFIX.sub("", _PARSER_ERROR.sub("", message))
    return f"syntax error: {message}"


@dataclass(slots=True)
class Piece:
    """A stretch of a file: the quads of lines ``lo`` to ``hi`` (0-based, exclusive; ``hi``
    is ``-1`` for the whole file) or, when ``error`` is set, the bad statement there, with
    ``line`` (1-based) where the parser failed."""

    lo: int
    hi: int
    quads: list[Quad] | None
    error: str | None = None
    line: int = 0
    record: str = ""


def parse_resilient(
    data: bytes,
    fmt: RdfFormat,
    *,
    resync: Callable[[bytes], bool],
    base_iri: str | None = None,
) -> Iterator[Piece]:
    """Parse ``data`` and yield its good and bad stretches in file order.

    The first attempt parses the whole buffer at once. After a syntax error at line L the
    lines before the last resync line at or before L are parsed again on their own (they
    are good up to there), the statement from there to the next resync line after L is
    the bad piece, and parsing resumes at that next resync line. ``resync`` tells which
    lines start a statement: every statement line for N-Triples and N-Quads
    (:func:`statement_line`), top-level lines for Turtle and TriG (:func:`block_start`);
    for the latter the prefixes and base declared so far are carried over.
    """
    try:
        parser = parse(input=data, format=fmt, base_iri=base_iri)
        quads = list(parser)
    except SyntaxError:
        pass
    else:
        yield Piece(0, -1, quads)
        return
    lines = Lines(data)
    carry = fmt in (RdfFormat.TURTLE, RdfFormat.TRIG)
    prefixes: dict[str, str] = {}
    base = base_iri
    lo = 0
    window = WINDOW
    bounds = [len(lines)]
    while bounds:
        hi = bounds[-1]
        if lo >= hi:
            bounds.pop()
            continue
        end = min(hi, lo + window)
        header = (
            "".join(f"@prefix {p}: <{ns}> . " for p, ns in prefixes.items()) + "\n"
            if carry and prefixes
            else ""
        ).encode()
        chunk = header + data[lines.offset(lo) : lines.offset(end)]
        try:
            parser = parse(input=chunk, format=fmt, base_iri=base)
            quads = list(parser)
        except SyntaxError as exc:
            relative = (exc.lineno or (end - lo)) - (1 if header else 0)
            err = min(max(lo + relative - 1, lo), end - 1)
            restart = next((i for i in range(err, lo, -1) if resync(lines.line(i))), None)
            if restart is not None:
                bounds.append(restart)  # parse [lo, restart) alone, then go on from restart
                continue
            if end < hi and err >= end - 1:
                window *= 2  # the window cut a statement that starts at lo: widen it
                continue
            after = next((i for i in range(err + 1, hi) if resync(lines.line(i))), hi)
            yield Piece(lo, after, None, syntax_reason(exc), err + 1, lines.text(lo, after))
            lo = after
        else:
            yield Piece(lo, end, quads)
            if carry:
                prefixes = dict(parser.prefixes)
                base = parser.base_iri
            lo = end
            window = WINDOW
            if end == hi:
                bounds.pop()


_PREFIX_DECL = re.compile(rb"(?:@prefix|(?i:prefix))\s+([A-Za-z0-9_.\-]*):\s*<([^<>]*)>")


def declared_prefixes(data: bytes) -> dict[str, str]:
    """The prefix declarations of a Turtle/TriG buffer (for locating prefixed names)."""
    return {m[1].decode(): m[2].decode() for m in _PREFIX_DECL.finditer(data)}


_TERM = r"(<[^<>\s]*>|_:[^\s.;,<>{}]+|[A-Za-z][\w.-]*:[^\s;,{}]*|:[^\s;,{}]*)"
_QUAD_GRAPH = re.compile(r"(?m)^\s*[^#\s].*\s" + _TERM + r"\s*\.?\s*(?:#.*)?$")
_BLOCK_GRAPH = re.compile(r"(?m)^(?:GRAPH\s+)?" + _TERM + r"\s*\{")
_SUBJECT = re.compile(r"(?m)^\s*" + _TERM + r"\s")


def guess_graph(record: str, trig: bool, data: bytes) -> EventId | None:
    """The event a bad statement belongs to, read off its text, or ``None``.

    That is the graph it sits in (the last term of an N-Quads line, the label of a TriG
    block), or else, for a top-level statement, its subject: the time or stream of an
    event. Knowing it lets the reader drop that whole event rather than keep it with
    triples missing, or report it a second time for a missing time.
    """
    match = (_BLOCK_GRAPH if trig else _QUAD_GRAPH).search(record)
    if match is None or (not trig and not match[1].startswith(("<", "_:"))):
        match = _SUBJECT.search(record)
    if match is None:
        return None
    token = match[1]
    try:
        if token.startswith("<"):
            return NamedNode(token[1:-1])
        if token.startswith("_:"):
            return BlankNode(token[2:])
        prefix, _, local = token.partition(":")
        namespace = declared_prefixes(data).get(prefix) if trig else None
        return None if namespace is None else NamedNode(namespace + local)
    except ValueError:
        return None


def term_line(data: bytes, term: object, prefixes: Mapping[str, str] | None = None) -> int | None:
    """The 1-based line where ``term`` first appears in ``data``, written as ``<iri>``,
    a prefixed name (using ``prefixes``) or ``_:label``; ``None`` if it is not found.

    Scans the whole buffer, so readers call it only when they have an error to report.
    """
    needles: list[bytes] = []
    if isinstance(term, NamedNode):
        needles.append(re.escape(f"<{term.value}>".encode()))
        for prefix, namespace in (prefixes or {}).items():
            if namespace and term.value.startswith(namespace):
                local = term.value[len(namespace) :]
                if re.fullmatch(r"[\w\-.]*", local) and not local.endswith("."):
                    needles.append(re.escape(f"{prefix}:{local}".encode()))
    elif isinstance(term, BlankNode):
        needles.append(re.escape(f"_:{term.value}".encode()))
    if not needles:
        return None
    pattern = re.compile(
        rb"(?<![^\s{}()\[\],;\"'])(?:" + b"|".join(needles) + rb")(?=[\s{}()\[\],;.\"']|$)"
    )
    match = pattern.search(data)
    if match is None:
        return None
    return data.count(b"\n", 0, match.start()) + 1
