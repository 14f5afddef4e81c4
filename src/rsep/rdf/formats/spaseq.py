"""SPAseq stream files: a stream description naming data files cut into events.

A description line ``<streamIRI> <./path/data.nt> N`` says that the consecutive triples
of the data file form the stream's events, N triples each (SPAseq, Gillani et al.: each
event is a small graph). The files carry no time: event k (0-based) of every stream
happens at ``start + k * period`` ms. Streams are merged by time, ties in the order the
description lists them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import RdfFormat, Triple

from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats._common import (
    Lines,
    ReadOptions,
    WriteChecks,
    base_name,
    block_start,
    decode_lines,
    parse_resilient,
    read_bytes,
    sorted_triples,
    statement_line,
)

_DESCRIPTION = re.compile(r"^<([^<>\s]+)>\s+<([^<>]+)>\s+(\S+)$")
_NTRIPLES_NAMES = (".nt", ".ntriples")


def data_candidates(description: Path, reference: str) -> list[Path]:
    """Where the data file ``reference`` of a description line may be, in the order tried.

    The shipped descriptions name folders that do not match where the files sit (they
    were written for the SPAseq jar's working directory), so a relative reference is tried
    against the description's folder, then its parent, then by file name alone beside the
    description; an absolute one as given, then by file name beside the description.
    """
    target = Path(reference)
    folder = description.parent
    candidates = [target] if target.is_absolute() else [folder / target, folder.parent / target]
    candidates.append(folder / target.name)
    unique: dict[str, Path] = {}
    for candidate in candidates:
        unique.setdefault(os.path.normpath(candidate), Path(os.path.normpath(candidate)))
    return list(unique.values())


@dataclass
class _Slots:
    """The triples of a data file in order; ``None`` where a statement was bad."""

    triples: list[Triple | None] = field(default_factory=list)
    errors: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    stop: tuple[int, str, str] | None = None  # a Turtle syntax error ends the file


def _ntriples_slots(data: bytes) -> _Slots:
    """Slots of an N-Triples file: one per statement line, so a bad line keeps its place."""
    slots = _Slots()
    pieces = list(parse_resilient(data, RdfFormat.N_TRIPLES, resync=statement_line))
    if len(pieces) == 1 and pieces[0].quads is not None:
        slots.triples.extend(q.triple for q in pieces[0].quads)
        return slots
    lines = Lines(data)
    for piece in pieces:
        if piece.quads is not None:
            slots.triples.extend(q.triple for q in piece.quads)
            continue
        statements = sum(1 for i in range(piece.lo, piece.hi) if statement_line(lines.line(i)))
        slots.errors[len(slots.triples)] = (piece.line, piece.error or "", piece.record)
        slots.triples.extend([None] * max(statements, 1))
    return slots


def _turtle_slots(path: Path, data: bytes) -> _Slots:
    """Slots of a Turtle/N3 file; the first syntax error ends them (see docs/formats.md)."""
    slots = _Slots()
    for piece in parse_resilient(
        data, RdfFormat.TURTLE, resync=block_start, base_iri=path.resolve().as_uri()
    ):
        if piece.quads is None:
            slots.stop = (piece.line, piece.error or "", piece.record)
            break
        slots.triples.extend(q.triple for q in piece.quads)
    return slots


def _statement_lines(data: bytes, ntriples: bool) -> list[int]:
    """1-based lines of the statements (N-Triples) or the last non-blank line (Turtle)."""
    lines = Lines(data)
    if ntriples:
        return [i + 1 for i in range(len(lines)) if statement_line(lines.line(i))]
    last = max((i + 1 for i in range(len(lines)) if lines.line(i).strip()), default=1)
    return [last]


def _stream_events(
    iri: str, path: Path, size: int, start: int, period: int, bad: BadRecords
) -> Iterator[Event]:
    """The events of one description line, in order, at ``start + k * period``."""
    try:
        data = read_bytes(path)
    except InputError as exc:
        bad.report(exc.file, exc.line, exc.reason)
        return
    ntriples = base_name(path).endswith(_NTRIPLES_NAMES)
    slots = _ntriples_slots(data) if ntriples else _turtle_slots(path, data)
    triples = slots.triples
    complete = len(triples) // size
    for k in range(complete + (1 if len(triples) % size else 0)):
        chunk = triples[k * size : (k + 1) * size]
        for index in range(k * size, k * size + len(chunk)):
            if index in slots.errors:
                line, reason, record = slots.errors[index]
                bad.report(path, line, f"{reason} (event {k + 1} of <{iri}> dropped)", record)
        if k == complete:
            if slots.stop is None:
                lines = _statement_lines(data, ntriples)
                line = lines[min(k * size, len(lines) - 1)] if ntriples else lines[0]
                bad.report(
                    path,
                    line,
                    f"incomplete event: the last {len(chunk)} triple(s) of {path.name} do not "
                    f"make an event of {size} triples (stream <{iri}>)",
                )
            break
        if all(t is not None for t in chunk):
            yield Event.point(iri, start + k * period, [t for t in chunk if t is not None])
    if slots.stop is not None:
        line, reason, record = slots.stop
        bad.report(
            path,
            line,
            f"{reason}; the rest of {path.name} is not read, since events are counted in "
            "triples and the triples of a bad statement are unknown",
            record,
        )


def read_spaseq(
    file: Path,
    data: bytes,
    opts: ReadOptions,
    bad: BadRecords,
    *,
    start: int = 0,
    period: int = 1000,
) -> Iterator[Event]:
    """The events of a SPAseq stream description and its data files, merged by time.

    ``start`` and ``period`` are milliseconds (``time_unit`` does not apply: the files
    hold no time). The ``stream`` option renames the stream of a one-stream description.
    """
    if period < 0:
        raise UserError(f"period must not be negative, got {period}")
    entries: list[tuple[str, Path, int]] = []
    for number, line in enumerate(decode_lines(data, file, bad), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _DESCRIPTION.match(text)
        if match is None:
            bad.report(file, number, "not a stream line: expected <streamIRI> <path> N", text)
            continue
        iri, reference, count = match.groups()
        if not count.isdigit() or int(count) < 1:
            bad.report(file, number, f"N must be a positive integer, got {count!r}", text)
            continue
        candidates = data_candidates(file, reference)
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            looked = ", ".join(str(c) for c in candidates)
            reason = f"data file <{reference}> not found (looked for {looked})"
            beside = sorted(
                c.name for c in file.parent.glob(f"*{Path(reference).suffix}") if c != file
            )
            if beside and Path(reference).suffix:
                reason += f"; beside the description: {', '.join(beside[:5])}"
            bad.report(file, number, reason, text)
            continue
        entries.append((iri, found, int(count)))
    if opts.stream is not None:
        if len(entries) > 1:
            raise UserError(
                f"{file}: the description names {len(entries)} streams; a stream name "
                "can only be given for a one-stream description"
            )
        entries = [(opts.stream, path, size) for _, path, size in entries]
    timed: list[tuple[int, int, int, Event]] = []
    for order, (iri, path, size) in enumerate(entries):
        for k, event in enumerate(_stream_events(iri, path, size, start, period, bad)):
            timed.append((event.t_start, order, k, event))
    timed.sort(key=lambda item: item[:3])
    for *_, event in timed:
        yield event


def write_spaseq(events: Iterable[Event], path: Path) -> int:
    """Write a stream description at ``path`` and one N-Triples data file per stream
    beside it (``<stem>-1.nt``, ...); returns the number of events written.

    Every event of a stream must have the same number of triples. Times are not stored:
    reading gives event k the time ``start + k * period``.
    """
    checks = WriteChecks("SPAseq")
    streams: dict[str, list[Event]] = {}
    for index, event in enumerate(events):
        checks.check(index, event)
        if not event.is_point:
            raise UserError(f"event {index}: SPAseq events are points, got an interval")
        streams.setdefault(event.stream, []).append(event)
    sizes: list[int] = []
    for stream, stream_events in streams.items():
        found = sorted({len(e.graph) for e in stream_events})
        if len(found) != 1:
            raise UserError(
                f"stream <{stream}>: SPAseq cuts a stream into events of N triples, but its "
                f"events have {', '.join(map(str, found))} triples"
            )
        sizes.append(found[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    description = []
    count = 0
    for number, ((stream, stream_events), size) in enumerate(
        zip(streams.items(), sizes, strict=True), 1
    ):
        name = f"{path.stem}-{number}.nt"
        with (path.parent / name).open("w", encoding="utf-8", newline="\n") as out:
            for k, event in enumerate(stream_events, 1):
                out.write(f"######## Event {k} (t={event.t_start}) ########\n")
                out.write("".join(f"{t} .\n" for t in sorted_triples(event)))
                count += 1
        description.append(f"<{stream}> <./{name}> {size}\n")
    path.write_text("".join(description), encoding="utf-8")
    return count
