"""N-Quads event streams read by blocks of lines: each named graph is one event (RSP-QL
Def. 9), its time and stream in the default graph (docs/formats.md, "TriG and N-Quads").

N-Quads is line-based, so a file is read a block of whole lines (:data:`BLOCK_BYTES`) at a
time and never held whole. A block in the canonical layout that the writers emit (terms as
``str(term)`` gives them, one space between terms, ``" ."`` ending each line) is read
without pyoxigraph building a quad per line: each distinct text of a triple is parsed once,
in one batch per block, and kept (:mod:`rsep.rdf.formats.ntriples`). A block is taken
this way only if every text parsed reads back identically (``str(triple)`` equals the
text): then each line is the canonical serialisation of a triple in a graph, and the
result is what pyoxigraph's own parse of the line gives. Any other block goes to
:func:`~rsep.rdf.formats._common.parse_resilient`, with its error recovery.

An event is complete once a whole block has gone by without a line naming it (as graph,
as the subject of a time or stream statement, or in a bad line); complete events come out
in order of first appearance of their graph. So lines less than :data:`BLOCK_BYTES` apart
always meet, and a file smaller than a block is read exactly as when it was read whole;
a graph named again after its event was complete starts another event (without a time,
so reported). An event's error is reported at the first line naming its graph in the
blocks still kept (from the block before its first); a bad line is judged with the
:data:`~rsep.rdf.formats._common.WINDOW` lines after it, as in a whole file. Memory: a
block or two, the events of two blocks, and the bounded caches of texts.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, Triple

from rsep.errors import BadRecords, InputError
from rsep.rdf.event import Event, EventId
from rsep.rdf.formats import _common
from rsep.rdf.formats._common import (
    META_PREDICATES,
    BadEvent,
    Lines,
    ReadOptions,
    TimeOrder,
    build_event,
    guess_graph,
    no_collection,
    parse_resilient,
    read_chunks,
    statement_line,
    term_line,
    term_ms,
)
from rsep.rdf.formats.ntriples import TermTexts, parse_missing
from rsep.rdf.terms import PROV_GENERATED_AT, RSEP_STREAM

BLOCK_BYTES = 4 << 20
"""Bytes read at a time: the lines of one event must lie within this distance."""

_PROBE = "<urn:rsep:probe>"
"""The subject put before a default-graph statement's predicate and object to parse them."""

_GENERATED = PROV_GENERATED_AT.value
_STREAM = RSEP_STREAM.value

Statement = tuple[str, object, int | None, str | None]
"""A time or stream statement about a graph: predicate IRI, object, and, read once, the
time in ms of a valid ``prov:generatedAtTime`` or the IRI of an ``rsep:stream``."""


class Texts(TermTexts):
    """Triples, graph names and time and stream statements by their canonical text, each
    parsed once (:class:`~rsep.rdf.formats.ntriples.TermTexts`), for reader options
    ``opts``. Shared by the part files of one read, so a directory pays once for a
    repeated triple."""

    def __init__(self, opts: ReadOptions) -> None:
        super().__init__()
        self.opts = opts
        self.statements: dict[str, Statement | None] = {}

    def defaults(self, subjects: list[str], rests: list[str]) -> list[Statement | None] | None:
        """The statements of default-graph lines ``subject rest`` (``rest`` is
        ``"p o ."``), ``None`` for those giving no time nor stream; ``None`` if one line is
        not canonical. Subjects differ from event to event, so the predicate and object
        are what is kept."""
        cache = self.statements
        found = parse_missing(cache, rests, _PROBE + " {}")
        if found is None:
            return None
        for text, triple in found:
            cache[text] = self.statement(triple.predicate.value, triple.object)
        for subject in set(subjects).difference(self.names):
            if self.name(subject) is None:
                return None
        return list(map(cache.__getitem__, rests))

    def statement(self, predicate: str, value: object) -> Statement | None:
        """The statement ``predicate value`` about a graph, ``None`` unless it gives a time
        or a stream."""
        if predicate not in META_PREDICATES:
            return None
        ms = iri = None
        if predicate == _GENERATED:
            with contextlib.suppress(ValueError):
                ms = term_ms(value, self.opts.time_unit, self.opts.tz)
        elif predicate == _STREAM and isinstance(value, NamedNode):
            iri = value.value
        return predicate, value, ms, iri


@dataclass(slots=True)
class _Block:
    """What a canonical block holds: runs of quad lines (graph text and name, first index
    into ``triples``), the triples, and the subjects and statements of the default-graph
    lines (``None`` for those giving no time nor stream)."""

    graphs: list[str]
    names: list[EventId]
    starts: list[int]
    triples: list[Triple]
    subjects: list[str]
    statements: list[Statement | None]


def _split(text: str, texts: Texts) -> _Block | None:
    """Read a block of canonical N-Quads lines, or ``None`` if a line is not canonical.

    A quad line is ``S P O G .`` with ``G`` an IRI or blank node; ``S P O`` has at least
    two spaces, which tells it from a default-graph line ``S P <o> .``, and ``G`` has no
    quote, which tells it from the end of a literal (``"a <b>"^^<t>``). A line ending
    like the one before, ``" G ."``, is in the same graph if that still holds.
    """
    graphs: list[str] = []
    starts: list[int] = []
    keys: list[str] = []
    subjects: list[str] = []
    rests: list[str] = []
    suffix = "\n"  # no line ends so
    cut = 0
    for line in text.split("\n"):
        if line.endswith(suffix):
            key = line[:cut]
            if key.count(" ") >= 2:
                keys.append(key)
                continue
        parts = line.rsplit(" ", 2)
        if len(parts) == 3 and parts[2] == ".":
            graph, key = parts[1], parts[0]
            if (
                ((graph[:1] == "<" and graph[-1:] == ">") or graph[:2] == "_:")
                and '"' not in graph
                and key.count(" ") >= 2
            ):
                graphs.append(graph)
                starts.append(len(keys))
                keys.append(key)
                suffix = f" {graph} ."
                cut = -len(suffix)
                continue
            subject, _, rest = line.partition(" ")
            subjects.append(subject)
            rests.append(rest)
        elif line.strip() and not line.lstrip().startswith("#"):
            return None
    names: list[EventId] = []
    for graph in graphs:
        name = texts.name(graph)
        if name is None:
            return None
        names.append(name)
    triples = texts.triples_of(keys)
    if triples is None:
        return None
    statements = texts.defaults(subjects, rests)
    if statements is None:
        return None
    return _Block(graphs, names, starts, triples, subjects, statements)


_Pending = tuple[EventId, list[Triple], int]
"""An event being read: its name, its triples so far, the block where its graph first
appeared."""


@dataclass
class _Assembly:
    """The events of one file put together block by block (module docstring)."""

    file: Path
    texts: Texts
    bad: BadRecords
    pending: dict[str, _Pending] = field(default_factory=dict)
    """Events not yet complete, by graph text, in order of first appearance."""
    meta: dict[str, list[Statement]] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    touched: set[str] = field(default_factory=set)
    """Names that the current block mentions: their events are not complete yet."""
    kept: deque[tuple[int, bytes, int]] = field(default_factory=deque)
    times: TimeOrder = field(default_factory=TimeOrder)

    def canonical(self, found: _Block, block: int) -> None:
        """Add what a canonical block holds."""
        meta = self.meta
        for subject, statement in zip(found.subjects, found.statements, strict=True):
            if statement is not None:
                statements = meta.get(subject)
                if statements is None:
                    meta[subject] = [statement]
                else:
                    statements.append(statement)
        self.touched.update(found.subjects)
        self.touched.update(found.graphs)
        triples = found.triples
        ends = [*found.starts[1:], len(triples)][: len(found.starts)]
        pending = self.pending
        for graph, name, start, end in zip(
            found.graphs, found.names, found.starts, ends, strict=True
        ):
            event = pending.get(graph)
            if event is None:
                pending[graph] = (name, triples[start:end], block)
            else:
                event[1].extend(triples[start:end])

    def quads(self, quads: list[Quad], block: int) -> None:
        """Add quads parsed by pyoxigraph."""
        pending, meta, touched = self.pending, self.meta, self.touched
        for quad in quads:
            graph = quad.graph_name
            if isinstance(graph, NamedNode | BlankNode):
                text = str(graph)
                touched.add(text)
                event = pending.get(text)
                if event is None:
                    pending[text] = (graph, [quad.triple], block)
                else:
                    event[1].append(quad.triple)
                continue
            statement = self.texts.statement(quad.predicate.value, quad.object)
            if statement is not None:
                subject = str(quad.subject)
                touched.add(subject)
                meta.setdefault(subject, []).append(statement)

    def drop(self, graph: str) -> None:
        """Drop the event of graph ``graph`` (text): a bad line names it."""
        self.dropped.add(graph)
        self.touched.add(graph)

    def keep(self, block: int, data: bytes, first_line: int) -> None:
        """Keep a block's bytes, to find the line of an event's error in them."""
        self.kept.append((block, data, first_line))

    def close(self, final: bool) -> list[Event]:
        """The events complete after the current block (all of them if ``final``), in
        order of first appearance of their graph; then start a new block."""
        pending, touched, meta, dropped = self.pending, self.touched, self.meta, self.dropped
        done: list[str] = []
        for graph in pending:
            if not final and graph in touched:
                break
            done.append(graph)
        events: list[Event] = []
        build, check = self._build, self.times.check
        with no_collection():
            for graph in done:
                name, triples, _ = pending.pop(graph)
                statements = meta.pop(graph, None)
                if dropped and graph in dropped:
                    dropped.discard(graph)
                    continue
                try:
                    event = build(name, triples, statements)
                    backwards = check(event.stream, event.t_start)
                    if backwards is not None:
                        raise BadEvent(backwards)
                except BadEvent as exc:
                    self.bad.report(self.file, self._line(name), str(exc), f"graph {name}")
                    continue
                events.append(event)
        if not final:
            self._prune()
        return events

    def _build(
        self, name: EventId, triples: list[Triple], statements: list[Statement] | None
    ) -> Event:
        """The event from its triples and statements: at once for the writers' layout (a
        valid ``prov:generatedAtTime``, then maybe an ``rsep:stream``), else through
        :func:`~rsep.rdf.formats._common.build_event`, which names what is wrong."""
        opts = self.texts.opts
        if statements and len(statements) <= 2:
            t = statements[0][2]
            stream = opts.stream
            if len(statements) == 2:
                second = statements[1]
                if second[0] != _STREAM:
                    t = None
                elif stream is None:
                    stream = second[3]
            if t is not None and stream is not None:
                return Event(stream, t, t, frozenset(triples), name)
        meta: dict[str, dict[object, None]] = {}
        for predicate, value, _, _ in statements or ():
            meta.setdefault(predicate, {})[value] = None
        return build_event(name, triples, meta, opts)

    def _prune(self) -> None:
        """Forget statements, drops and bytes that no event still to come can need (those
        of names that are not pending and that the block just read did not mention), and
        start a new block."""
        pending, touched = self.pending, self.touched
        for name in self.meta.keys() - pending.keys() - touched:
            del self.meta[name]
        if self.dropped:
            self.dropped = {g for g in self.dropped if g in pending or g in touched}
        touched.clear()
        oldest = next(iter(pending.values()))[2] if pending else self.kept[-1][0] + 1
        while self.kept and self.kept[0][0] < oldest - 1:
            self.kept.popleft()

    def _line(self, name: EventId) -> int | None:
        """The line where ``name`` first appears in the blocks kept (from the block before
        the event's first one)."""
        for _, data, first_line in self.kept:
            found = term_line(data, name)
            if found is not None:
                return first_line + found - 1
        return None


def read_nquads(
    file: Path, chunks: Iterable[bytes], bad: BadRecords, texts: Texts
) -> Iterator[Event]:
    """The events of one N-Quads file given as pieces of its bytes, read block by block.

    Syntax errors are reported with their line and parsing resumes at the next line; the
    event whose graph the bad line names is dropped whole. Events without a valid time or
    stream, or going back in time within their stream, are reported at the line where
    their graph name first appears (docs/formats.md, "Error recovery"). A compressed file
    found corrupt is reported (no line) and read no further.
    """
    assembly = _Assembly(file, texts, bad)
    buffer = b""
    line = 1
    block = 0
    waiting = 0  # bytes of whole lines in the buffer when a bad line last waited for more
    pieces = iter(chunks)
    while True:
        try:
            piece = next(pieces, None)
        except InputError as exc:
            bad.report(exc.file, exc.line, exc.reason)
            return
        if piece is None:
            break
        buffer += piece
        cut = buffer.rfind(b"\n") + 1
        if cut <= waiting:
            continue
        used = _read_block(assembly, texts, buffer[:cut], line, block, False, not waiting)
        waiting = cut if used < cut else 0
        if used:
            assembly.keep(block, buffer[:used], line)
            line += buffer.count(b"\n", 0, used)
            buffer = buffer[used:]
            waiting = max(0, waiting - used)
            yield from assembly.close(False)
            block += 1
    if buffer:
        _read_block(assembly, texts, buffer, line, block, True, not waiting)
        assembly.keep(block, buffer, line)
    yield from assembly.close(True)


def _read_block(
    assembly: _Assembly,
    texts: Texts,
    data: bytes,
    line: int,
    block: int,
    final: bool,
    fast: bool = True,
) -> int:
    """Add the lines of ``data`` (its first is line ``line``) to ``assembly``; returns the
    bytes used (none: wait for more data).

    A block that is not canonical goes to pyoxigraph. A bad line is judged, as in a whole
    file, with the :data:`~rsep.rdf.formats._common.WINDOW` lines after it (pyoxigraph's
    reason can depend on what follows, as for a literal cut by the end of the data): if
    the block ends sooner, it is used up to that line, which waits for more data (and
    the next try skips the canonical reading, ``fast``, which that line fails).
    """
    found = None
    if fast:
        with no_collection(), contextlib.suppress(UnicodeDecodeError):
            found = _split(data.decode("utf-8"), texts)
            if found is not None:
                assembly.canonical(found, block)
    if found is not None:
        return len(data)
    lines = None if final else data.count(b"\n")
    for piece in parse_resilient(data, RdfFormat.N_QUADS, resync=statement_line):
        if piece.quads is not None:
            assembly.quads(piece.quads, block)
            continue
        if lines is not None and lines - piece.lo <= _common.WINDOW:
            return Lines(data).offset(piece.lo)
        reason = piece.error or "syntax error"
        graph = guess_graph(piece.record, False, b"")
        if graph is not None:
            assembly.drop(str(graph))
            reason += f" (the event of graph {graph} is dropped)"
        assembly.bad.report(assembly.file, line + piece.line - 1, reason, piece.record)
    return len(data)


def read_nquads_file(file: Path, bad: BadRecords, texts: Texts) -> Iterator[Event]:
    """The events of an N-Quads file (gzip- or xz-compressed or not), read by blocks with
    the reader options of ``texts``."""
    return read_nquads(file, read_chunks(file, BLOCK_BYTES), bad, texts)
