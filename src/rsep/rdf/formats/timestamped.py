"""Timestamped N-Triples: one triple and its time per line, ``<s> <p> <o> T .``.

This is the triple stream C-SPARQL and YABench read and write (YABench writes ``T`` as a
quoted count of milliseconds, ``"24091"``). Each line is a point event on one stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from pyoxigraph import RdfFormat, Triple, parse

from rsep.errors import BadRecords, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats._common import (
    ReadOptions,
    TimeOrder,
    WriteChecks,
    clip,
    decode_lines,
    lexical_ms,
    parse_resilient,
    sorted_triples,
    statement_line,
    syntax_reason,
    unit_count,
)
from rsep.rdf.terms import XSD_STRING
from rsep.rdf.time import TimeUnit

_TAIL = re.compile(
    r'\s(?P<t>"(?:[^"\\]|\\.)*"(?:\^\^<[^<>\s]*>|@[A-Za-z0-9-]+)?|[+-]?\d+)\s*\.?\s*$'
)
"""The trailing timestamp of a line: a bare integer or a literal, then an optional dot."""

_QUOTED = re.compile(r'"([^"\\]*)"(?:\^\^<([^<>]*)>|(@.+))?')

_BARE_TYPED = re.compile(r'^(\S+\s+\S+\s+)([^\s"<>_@][^\s"<>]*)\^\^(<[^<>\s]*>)$')
"""YABench writes typed literals without quotes, ``42.0^^<…#float>``; we add them."""


def _tail_ms(text: str, opts: ReadOptions) -> int:
    """Epoch ms of a trailing timestamp; ``ValueError`` with the reason if unparsable."""
    if not text.startswith('"'):
        return opts.time_unit.to_ms(int(text))
    match = _QUOTED.fullmatch(text)
    if match is None:
        raise ValueError("a timestamp has no escaped characters")
    lexical, datatype, language = match.groups()
    if language is not None:
        raise ValueError("a language-tagged string is not a time")
    return lexical_ms(lexical, datatype or XSD_STRING, opts.time_unit, opts.tz)


def _repair(triple_text: str) -> str:
    """Quote a bare typed literal in object position (the YABench dialect)."""
    return _BARE_TYPED.sub(r'\1"\2"^^\3', triple_text)


def _is_triple(line: str) -> bool:
    """Whether ``line`` is a plain N-Triples statement (so only its timestamp is missing)."""
    text = _repair(line.rstrip().removesuffix(".").rstrip())
    try:
        return len(list(parse(input=f"{text} .\n", format=RdfFormat.N_TRIPLES))) == 1
    except SyntaxError:
        return False


def _missing(line: str) -> str:
    return f"missing timestamp: expected <s> <p> <o> T . with a time T, got {clip(line)!r}"


def read_timestamped(
    file: Path,
    data: bytes,
    opts: ReadOptions,
    bad: BadRecords,
    *,
    group_by_time: bool = False,
) -> Iterator[Event]:
    """The point events of one timestamped N-Triples file, one per line.

    The timestamps are split off with a regular expression and the triples parsed in one
    pyoxigraph batch; after a syntax error the batch resumes at the next line, so every
    good line is kept. With ``group_by_time``, consecutive lines with equal time form one
    event (the way a writer spells a many-triple event).
    """
    stream = opts.stream
    if stream is None:
        raise UserError(f"{file}: no stream given for timestamped N-Triples")
    rows: list[tuple[int, int, str]] = []  # (line number, time, text) of timed lines
    statements: list[bytes] = []
    errors: dict[int, tuple[str, str]] = {}  # line number -> (reason, record)
    for number, line in enumerate(decode_lines(data, file, bad), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _TAIL.search(text)
        if match is None:
            errors[number] = (_missing(text) if _is_triple(text) else _line_error(text), text)
            continue
        try:
            ms = _tail_ms(match["t"], opts)
        except ValueError as exc:
            reason = (
                _missing(text) if _is_triple(text) else f"unparsable timestamp {match['t']}: {exc}"
            )
            errors[number] = (reason, text)
            continue
        rows.append((number, ms, text))
        statements.append(f"{_repair(text[: match.start()].rstrip())} .\n".encode())
    triples: list[Triple | None] = [None] * len(rows)
    for piece in parse_resilient(b"".join(statements), RdfFormat.N_TRIPLES, resync=statement_line):
        if piece.quads is None:
            number, _, original = rows[piece.line - 1]
            reason = _missing(original) if _is_triple(original) else piece.error or ""
            errors[number] = (reason, original)
        else:
            for index, quad in enumerate(piece.quads, piece.lo):
                triples[index] = quad.triple
    yield from _events(file, stream, rows, triples, errors, bad, group_by_time)


def _line_error(text: str) -> str:
    try:
        list(parse(input=text.encode(), format=RdfFormat.N_TRIPLES))
    except SyntaxError as exc:
        return syntax_reason(exc)
    return _missing(text)


def _events(
    file: Path,
    stream: str,
    rows: list[tuple[int, int, str]],
    triples: list[Triple | None],
    errors: dict[int, tuple[str, str]],
    bad: BadRecords,
    group_by_time: bool,
) -> Iterator[Event]:
    """Merge good lines and bad ones in line order: report, check time order, group."""
    order = TimeOrder()
    good = {
        row[0]: (row[1], row[2], triple)
        for row, triple in zip(rows, triples, strict=True)
        if triple is not None and row[0] not in errors
    }
    pending: list[Triple] = []
    pending_t = 0
    for number in sorted(good.keys() | errors.keys()):
        if number in errors:
            reason, record = errors[number]
            bad.report(file, number, reason, clip(record))
            continue
        ms, text, triple = good[number]
        backwards = order.check(stream, ms)
        if backwards is not None:
            bad.report(file, number, backwards, clip(text))
            continue
        if group_by_time and pending and ms == pending_t:
            pending.append(triple)
            continue
        if pending:
            yield Event.point(stream, pending_t, pending)
        pending, pending_t = [triple], ms
        if not group_by_time:
            yield Event.point(stream, ms, pending)
            pending = []
    if pending:
        yield Event.point(stream, pending_t, pending)


def write_timestamped(
    events: Iterable[Event], out: TextIO, *, time_unit: TimeUnit | None = None
) -> int:
    """Write point events of one stream, a line per triple with the time as a quoted
    integer (milliseconds unless ``time_unit`` is given), as YABench writes it.

    An event of n triples becomes n lines with the same time; read it back with
    ``group_by_time=True`` to get one event again.
    """
    unit = time_unit or TimeUnit.MILLISECONDS
    checks = WriteChecks("timestamped N-Triples")
    stream: str | None = None
    count = 0
    for index, event in enumerate(events):
        checks.check(index, event)
        if not event.is_point:
            raise UserError(
                f"event {index}: timestamped N-Triples holds points, not the interval "
                f"[{event.t_start}, {event.t_end}]"
            )
        if stream is None:
            stream = event.stream
        elif event.stream != stream:
            raise UserError(
                f"event {index}: timestamped N-Triples holds one stream, got <{stream}> "
                f"and <{event.stream}>"
            )
        stamp = f'"{unit_count(event.t_start, unit)}"'
        out.write("".join(f"{t} {stamp} .\n" for t in sorted_triples(event)))
        count += 1
    return count
