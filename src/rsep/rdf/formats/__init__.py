"""RDF stream formats: read events from files and write them back (docs/formats.md).

Five formats, one module each: TriG and N-Quads (:mod:`.quads`, a named graph per event,
its time in the default graph), timestamped N-Triples (:mod:`.timestamped`, a triple and
its time per line, as C-SPARQL and YABench use), the JSON-LD of the RSP Community Group
and TripleWave (:mod:`.jsonld`) and SPAseq's stream descriptions (:mod:`.spaseq`).
Readers take a file, a gzip-compressed file or a directory of part files (as Spark
writes them); bad records go to a :class:`~rsep.errors.BadRecords`. N-Quads files are
streamed by blocks of lines (:mod:`.nquads`); the other formats are read a file at a time.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, tzinfo
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

from pyoxigraph import DefaultGraph, RdfFormat, parse

from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats._common import (
    ReadOptions,
    base_name,
    part_files,
    read_bytes,
    read_chunks,
)
from rsep.rdf.formats.jsonld import read_jsonld, write_jsonld
from rsep.rdf.formats.nquads import Texts, read_nquads_file
from rsep.rdf.formats.quads import (
    nquads_event_lines,
    read_quads,
    trig_event_text,
    write_quads,
)
from rsep.rdf.formats.spaseq import read_spaseq, write_spaseq
from rsep.rdf.formats.timestamped import read_timestamped, write_timestamped
from rsep.rdf.time import TimeUnit

__all__ = [
    "Format",
    "detect_format",
    "nquads_event_lines",
    "read_events",
    "trig_event_text",
    "write_events",
]


class Format(Enum):
    """A stream format; the value is its name on the command line."""

    TRIG = "trig"
    NQUADS = "nquads"
    TIMESTAMPED_NT = "tnt"
    JSONLD = "jsonld"
    SPASEQ = "spaseq"


_EXTENSIONS = {
    ".trig": Format.TRIG,
    ".nq": Format.NQUADS,
    ".nquads": Format.NQUADS,
    ".jsonld": Format.JSONLD,
    ".json": Format.JSONLD,
    ".tnt": Format.TIMESTAMPED_NT,
    ".stream": Format.TIMESTAMPED_NT,
}

_READ_OPTIONS: dict[Format, frozenset[str]] = {
    Format.TRIG: frozenset(),
    Format.NQUADS: frozenset(),
    Format.TIMESTAMPED_NT: frozenset({"group_by_time"}),
    Format.JSONLD: frozenset(),
    Format.SPASEQ: frozenset({"start", "period"}),
}

_WRITE_OPTIONS: dict[Format, frozenset[str]] = {
    Format.TRIG: frozenset({"with_stream"}),
    Format.NQUADS: frozenset({"with_stream"}),
    Format.TIMESTAMPED_NT: frozenset(),
    Format.JSONLD: frozenset({"with_stream"}),
    Format.SPASEQ: frozenset(),
}

_SPASEQ_LINE = re.compile(r"^<[^<>\s]+>\s+<[^<>]+>\s+\d+$")
_TIMESTAMP_TAIL = re.compile(r'\s("[^"\\]*"(\^\^<[^<>\s]*>)?|[+-]?\d+)\s*\.?$')
_SNIFF_BYTES = 65_536


def _check_options(
    fmt: Format, options: dict[str, Any], allowed: frozenset[str], verb: str
) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise UserError(
            f"unknown option(s) {', '.join(unknown)} for {verb} {fmt.value} (known: {known})"
        )


def _as_format(fmt: Format | str) -> Format:
    try:
        return fmt if isinstance(fmt, Format) else Format(fmt)
    except ValueError:
        names = ", ".join(f.value for f in Format)
        raise UserError(f"unknown stream format {fmt!r} (expected one of {names})") from None


def detect_format(path: Path) -> Format:
    """The format of ``path`` by its extension (after ``.gz``, ``.xz``), else by sniffing.

    ``.trig``; ``.nq``/``.nquads``; ``.jsonld``/``.json``; ``.tnt``/``.stream``
    (timestamped N-Triples); a ``.txt`` holding ``<iri> <path> N`` lines is a SPAseq
    description. Other names (``.nt`` among them) are sniffed. A directory takes the
    format of its first part file. Raises :class:`UserError` when no format fits.
    """
    path = Path(path)
    if path.is_dir():
        return detect_format(part_files(path)[0])
    name = base_name(path)
    suffix = Path(name).suffix
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if suffix == ".txt":
        if _describes_spaseq_streams(path):
            return Format.SPASEQ
    else:
        sniffed = _sniff(path)
        if sniffed is not None:
            return sniffed
    names = ", ".join(f.value for f in Format)
    raise UserError(f"{path}: cannot tell the stream format; name it (one of {names})")


def _head(path: Path) -> str:
    """The first bytes of ``path`` (decompressed) as text, without reading the rest."""
    try:
        head = next(read_chunks(path, _SNIFF_BYTES), b"")
    except (UserError, OSError):
        return ""
    return head[:_SNIFF_BYTES].decode("utf-8", "replace")


def _describes_spaseq_streams(path: Path) -> bool:
    """Whether one of the first lines of a ``.txt`` file is ``<iri> <path> N``."""
    lines = [line.strip() for line in _head(path).split("\n")]
    lines = [line for line in lines if line and not line.startswith("#")]
    return any(_SPASEQ_LINE.match(line) for line in lines[:20])


def _sniff(path: Path) -> Format | None:
    """Guess a format from the first statements of a file (up to 50 lines).

    Lines that any format could hold (a plain default-graph triple) leave the question
    open; the first line that only one format can hold decides.
    """
    head = _head(path)
    stripped = head.lstrip("\ufeff \t\r\n")
    if stripped.startswith("[") or re.match(r'\{\s*"', stripped):
        return Format.JSONLD
    lines = [line.strip() for line in head.split("\n")]
    for line in [line for line in lines if line and not line.startswith("#")][:50]:
        if re.match(r"(?i)(@prefix|prefix|@base|base|graph)\b", line):
            return Format.TRIG
        if _SPASEQ_LINE.match(line):
            return Format.SPASEQ
        try:
            quads = list(parse(input=line.encode(), format=RdfFormat.N_QUADS))
        except SyntaxError:
            quads = []
        if any(not isinstance(q.graph_name, DefaultGraph) for q in quads):
            return Format.NQUADS
        if not quads and _TIMESTAMP_TAIL.search(line):
            return Format.TIMESTAMPED_NT
        if "{" in line:
            return Format.TRIG
    return None


_Reader = Callable[[Path, bytes, ReadOptions, BadRecords], Iterator[Event]]


def _reader(fmt: Format, options: dict[str, Any]) -> _Reader:
    if fmt is Format.TRIG:
        return lambda f, d, o, b: read_quads(f, d, RdfFormat.TRIG, o, b)
    if fmt is Format.NQUADS:
        return lambda f, d, o, b: read_quads(f, d, RdfFormat.N_QUADS, o, b)
    if fmt is Format.TIMESTAMPED_NT:
        group = bool(options.get("group_by_time", False))
        return lambda f, d, o, b: read_timestamped(f, d, o, b, group_by_time=group)
    if fmt is Format.JSONLD:
        return read_jsonld
    start = int(options.get("start", 0))
    period = int(options.get("period", 1000))
    return lambda f, d, o, b: read_spaseq(f, d, o, b, start=start, period=period)


def read_events(
    path: Path,
    fmt: Format | str | None = None,
    *,
    stream: str | None = None,
    time_unit: TimeUnit = TimeUnit.MILLISECONDS,
    tz: tzinfo = UTC,
    bad: BadRecords | None = None,
    **format_options: Any,
) -> Iterator[Event]:
    """The events of a stream file (or directory of part files) in file order.

    ``fmt`` defaults to :func:`detect_format`. ``stream`` names the stream of every event
    (for timestamped N-Triples it defaults to the file's ``file:`` URI). Integer
    timestamps count ``time_unit``; ``xsd:dateTime`` values without a zone are read in
    ``tz``. Bad records go to ``bad`` (default: stop at the first with
    :class:`~rsep.errors.InputError`). Format options: ``group_by_time`` (tnt), ``start``
    and ``period`` in ms (spaseq). Arguments are checked now; files are read as the
    iterator advances.
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such file or directory")
    chosen = detect_format(path) if fmt is None else _as_format(fmt)
    _check_options(chosen, format_options, _READ_OPTIONS[chosen], "reading")
    if chosen is Format.SPASEQ and path.is_dir():
        raise UserError(f"{path}: a SPAseq stream is read from its description file")
    if chosen is Format.TIMESTAMPED_NT and stream is None:
        stream = path.resolve().as_uri()
    reader = _reader(chosen, format_options)
    opts = ReadOptions(stream, time_unit, tz)
    return _read(path, chosen, reader, opts, bad if bad is not None else BadRecords())


def _read(
    path: Path, fmt: Format, reader: _Reader, opts: ReadOptions, bad: BadRecords
) -> Iterator[Event]:
    if fmt is Format.NQUADS:  # line-based: streamed by blocks, never held whole
        texts = Texts(opts)
        for file in part_files(path):
            yield from read_nquads_file(file, bad, texts)
        return
    for file in part_files(path):
        try:
            data = read_bytes(file)
        except InputError as exc:
            bad.report(exc.file, exc.line, exc.reason)
            continue
        yield from reader(file, data, opts, bad)


def write_events(
    events: Iterable[Event],
    path: Path | TextIO,
    fmt: Format | str,
    *,
    time_unit: TimeUnit | None = None,
    **format_options: Any,
) -> int:
    """Write events to a file (gzip-compressed if its name ends in ``.gz``) or an open
    text stream; returns the number of events written.

    Timestamps are written as ``xsd:dateTime`` unless ``time_unit`` is given, then as
    integers in that unit (timestamped N-Triples always writes integers, ms by default;
    SPAseq writes no time). Option ``with_stream=True`` (TriG, N-Quads, JSON-LD) states
    each event's stream in the file. SPAseq needs a path: it writes several files.
    """
    chosen = _as_format(fmt)
    _check_options(chosen, format_options, _WRITE_OPTIONS[chosen], "writing")
    with_stream = bool(format_options.get("with_stream", False))
    if chosen is Format.SPASEQ:
        if not isinstance(path, str | Path):
            raise UserError(
                "SPAseq output needs a file path: it writes a description and data files"
            )
        return write_spaseq(events, Path(path))
    if isinstance(path, str | Path):
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.name.endswith(".gz"):
            with gzip.open(target, "wt", encoding="utf-8", newline="\n") as out:
                return _write(events, out, chosen, time_unit, with_stream)
        with target.open("w", encoding="utf-8", newline="\n") as out:
            return _write(events, out, chosen, time_unit, with_stream)
    return _write(events, path, chosen, time_unit, with_stream)


def _write(
    events: Iterable[Event], out: TextIO, fmt: Format, time_unit: TimeUnit | None, with_stream: bool
) -> int:
    if fmt in (Format.TRIG, Format.NQUADS):
        syntax = RdfFormat.TRIG if fmt is Format.TRIG else RdfFormat.N_QUADS
        return write_quads(events, out, syntax, time_unit=time_unit, with_stream=with_stream)
    if fmt is Format.JSONLD:
        return write_jsonld(events, out, time_unit=time_unit, with_stream=with_stream)
    return write_timestamped(events, out, time_unit=time_unit)
