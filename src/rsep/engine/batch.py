"""Events as columns: a batch of events, one row per event and one per distinct triple, its
terms as ids of a shared :class:`~rsep.engine.terms.TermDictionary` (DESIGN.md, columnar
form; ENGINE.md, "Reading"), and the readers that fill batches straight from files.

:func:`read_batches` gives exactly the events of :func:`rsep.rdf.formats.read_events` (and
of the Parquet event store that ``rsep convert`` writes), in the same order, a batch at a
time. N-Quads and the event store are read by Arrow kernels with no Python object per
triple; the other formats go through ``read_events`` and are converted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import Quad, Triple

from rsep.engine.terms import KIND_BLANK, KIND_IRI, TermDictionary
from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, detect_format, nquads, read_events
from rsep.rdf.formats._common import ReadOptions, part_files, read_chunks
from rsep.rdf.formats.nquads import Texts, _Assembly, _Block, _read_block
from rsep.rdf.time import TimeUnit

__all__ = ["STORE", "TripleBatch", "batches_of", "is_store", "merge_batches", "read_batches"]

STORE = "parquet"
"""The ``fmt`` of the Parquet event store (``rsep convert``'s default output)."""

_STORE_COLUMNS = ("stream", "event_id", "t_start", "t_end", "s", "p", "o")


@dataclass
class TripleBatch:
    """A batch of events as columns: one row per event, one row per distinct triple of an
    event (DESIGN.md, columnar form)."""

    streams: tuple[str, ...]
    """Stream IRIs, indexed by ``event_stream``: every stream of the read so far, so an
    index names the same stream in every batch of one read."""
    event_stream: np.ndarray
    """int32 [n_events]."""
    event_start: np.ndarray
    """int64 [n_events]: t_start in ms."""
    event_end: np.ndarray
    """int64 [n_events]: t_end in ms."""
    event_ordinal: np.ndarray
    """int64 [n_events]: the event's position among the events of its read."""
    triple_event: np.ndarray
    """int32 [n_triples]: the event row of each triple, non-decreasing."""
    s: np.ndarray
    """int32 [n_triples]: subject ids."""
    p: np.ndarray
    """int32 [n_triples]: predicate ids."""
    o: np.ndarray
    """int32 [n_triples]: object ids."""

    def __len__(self) -> int:
        return len(self.event_start)

    def events(self, dictionary: TermDictionary) -> list[Event]:
        """The batch as :class:`~rsep.rdf.event.Event` objects (no ids), for tests and the
        exact path."""
        nodes = dictionary.nodes
        triples = [
            Triple(s, p, o)  # type: ignore[arg-type]
            for s, p, o in zip(nodes(self.s), nodes(self.p), nodes(self.o), strict=True)
        ]
        bounds = np.searchsorted(self.triple_event, np.arange(len(self) + 1)).tolist()
        return [
            Event(self.streams[stream], start, end, frozenset(triples[lo:hi]))
            for stream, start, end, lo, hi in zip(
                self.event_stream.tolist(),
                self.event_start.tolist(),
                self.event_end.tolist(),
                bounds[:-1],
                bounds[1:],
                strict=True,
            )
        ]


def read_batches(
    path: Path,
    stream: str | None,
    dictionary: TermDictionary,
    *,
    fmt: Format | str | None = None,
    time_unit: TimeUnit = TimeUnit.MILLISECONDS,
    tz: tzinfo = UTC,
    bad: BadRecords | None = None,
    batch_events: int = 65_536,
    **format_options: Any,
) -> Iterator[TripleBatch]:
    """The events of a stream file as batches of ``batch_events`` events, the same events
    in the same order as :func:`~rsep.rdf.formats.read_events` with the same arguments
    (bad records too: ``file:line: reason``, stop or skip into ``bad``).

    ``fmt`` may also be :data:`STORE`, found without it for a ``.parquet`` file or a
    folder of them: the events of ``read_store_events``, only those of ``stream`` when it
    is given. N-Quads and the store are read by vectorised kernels; other formats go
    through ``read_events`` (exact, one Python object per triple) and are converted.
    """
    path = Path(path)
    if batch_events < 1:
        raise UserError(f"batch_events must be positive, got {batch_events}")
    batcher = _Batcher(batch_events)
    if fmt == STORE or (fmt is None and is_store(path)):
        if format_options:
            raise UserError(f"unknown option(s) {', '.join(sorted(format_options))} for a store")
        return batcher.run(_store_pieces(path, stream, dictionary))
    chosen = fmt
    if chosen is None and path.exists():
        chosen = detect_format(path)
    events = read_events(
        path, chosen, stream=stream, time_unit=time_unit, tz=tz, bad=bad, **format_options
    )
    if chosen in (Format.NQUADS, Format.NQUADS.value):
        opts = ReadOptions(stream, time_unit, tz)
        return batcher.run(_nquads_pieces(path, opts, bad or BadRecords(), dictionary))
    return batcher.run(_event_pieces(events, dictionary, batch_events))


def batches_of(
    events: Iterable[Event], dictionary: TermDictionary, batch_events: int = 65_536
) -> Iterator[TripleBatch]:
    """Events already read (a stream set in memory, a test's list) as batches."""
    return _Batcher(batch_events).run(_event_pieces(iter(events), dictionary, batch_events))


def merge_batches(sources: Sequence[Iterable[TripleBatch]]) -> Iterator[TripleBatch]:
    """The batches of several inputs, each in time order, as one sequence in time order:
    each round takes from every input the events up to the earliest last time any input
    has read (no input can still bring an earlier one)."""
    if len(sources) == 1:
        yield from sources[0]
        return
    readers = [iter(source) for source in sources]
    pending = [next(reader, None) for reader in readers]
    while any(batch is not None for batch in pending):
        safe = min(int(b.event_end[-1]) for b in pending if b is not None and len(b))
        parts: list[TripleBatch] = []
        for k, batch in enumerate(pending):
            if batch is None:
                continue
            cut = int(np.searchsorted(batch.event_end, safe, side="right"))
            head, tail = _split(batch, cut)
            if len(head):
                parts.append(head)
            pending[k] = tail if len(tail) else next(readers[k], None)
        if parts:
            yield _in_time_order(parts)


def _in_time_order(parts: list[TripleBatch]) -> TripleBatch:
    """Batches of several inputs as one, their streams united, events in time order."""
    streams = tuple(dict.fromkeys(name for part in parts for name in part.streams))
    index = {name: i for i, name in enumerate(streams)}
    offsets = np.cumsum([0] + [len(part) for part in parts[:-1]])
    end = np.concatenate([part.event_end for part in parts])
    order = np.argsort(end, kind="stable")
    rank = np.empty(len(order), np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    triple_event = rank[
        np.concatenate([p.triple_event + off for p, off in zip(parts, offsets, strict=True)])
    ]
    by_event = np.argsort(triple_event, kind="stable")
    remap = [np.array([index[n] for n in p.streams], np.int32) for p in parts]
    return TripleBatch(
        streams,
        np.concatenate([m[p.event_stream] for p, m in zip(parts, remap, strict=True)])[order],
        np.concatenate([p.event_start for p in parts])[order],
        end[order],
        np.concatenate([p.event_ordinal for p in parts])[order],
        triple_event[by_event],
        np.concatenate([p.s for p in parts])[by_event],
        np.concatenate([p.p for p in parts])[by_event],
        np.concatenate([p.o for p in parts])[by_event],
    )


# --------------------------------------------------------------------------- batching


@dataclass
class _Piece:
    """Events and their triples (``triple_event`` local to the piece, non-decreasing)."""

    stream: list[str]
    start: np.ndarray
    end: np.ndarray
    triple_event: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray


class _Batcher:
    """Cuts pieces of events into batches of ``size`` events, numbering events and streams
    and dropping repeated triples of an event (a graph is a set)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.streams: dict[str, int] = {}
        self.ordinal = 0
        self.held: list[TripleBatch] = []
        self.count = 0

    def run(self, pieces: Iterator[_Piece]) -> Iterator[TripleBatch]:
        for piece in pieces:
            self.held.append(self._batch(piece))
            self.count += len(piece.stream)
            while self.count >= self.size:
                yield self._take(self.size)
        if self.count:
            yield self._take(self.count)

    def _batch(self, piece: _Piece) -> TripleBatch:
        streams = self.streams
        for name in dict.fromkeys(piece.stream):
            streams.setdefault(name, len(streams))
        n = len(piece.stream)
        ev = piece.triple_event.astype(np.int32, copy=False)
        s, p, o = piece.s, piece.p, piece.o
        if len(ev) > 1:
            order = np.lexsort((o, p, s, ev))
            a = order[1:]
            b = order[:-1]
            same = (ev[a] == ev[b]) & (s[a] == s[b]) & (p[a] == p[b]) & (o[a] == o[b])
            if same.any():
                keep = np.ones(len(ev), np.bool_)
                keep[a[same]] = False
                ev, s, p, o = ev[keep], s[keep], p[keep], o[keep]
        ordinals = np.arange(self.ordinal, self.ordinal + n, dtype=np.int64)
        self.ordinal += n
        return TripleBatch(
            tuple(streams),
            np.array([streams[name] for name in piece.stream], np.int32),
            piece.start.astype(np.int64, copy=False),
            piece.end.astype(np.int64, copy=False),
            ordinals,
            ev,
            s.astype(np.int32, copy=False),
            p.astype(np.int32, copy=False),
            o.astype(np.int32, copy=False),
        )

    def _take(self, n: int) -> TripleBatch:
        """The first ``n`` held events as one batch."""
        parts: list[TripleBatch] = []
        need = n
        while need:
            first = self.held[0]
            if len(first) <= need:
                parts.append(self.held.pop(0))
                need -= len(first)
            else:
                head, tail = _split(first, need)
                parts.append(head)
                self.held[0] = tail
                need = 0
        self.count -= n
        if len(parts) == 1:
            only = parts[0]
            only.streams = tuple(self.streams)
            return only
        offsets = np.cumsum([0] + [len(part) for part in parts[:-1]])
        return TripleBatch(
            tuple(self.streams),
            np.concatenate([part.event_stream for part in parts]),
            np.concatenate([part.event_start for part in parts]),
            np.concatenate([part.event_end for part in parts]),
            np.concatenate([part.event_ordinal for part in parts]),
            np.concatenate(
                [part.triple_event + off for part, off in zip(parts, offsets, strict=True)]
            ).astype(np.int32),
            np.concatenate([part.s for part in parts]),
            np.concatenate([part.p for part in parts]),
            np.concatenate([part.o for part in parts]),
        )


def _split(batch: TripleBatch, n: int) -> tuple[TripleBatch, TripleBatch]:
    """The first ``n`` events of ``batch`` and the rest."""
    cut = int(np.searchsorted(batch.triple_event, n))

    def part(events: slice, triples: slice, shift: int) -> TripleBatch:
        return TripleBatch(
            batch.streams,
            batch.event_stream[events],
            batch.event_start[events],
            batch.event_end[events],
            batch.event_ordinal[events],
            batch.triple_event[triples] - shift,
            batch.s[triples],
            batch.p[triples],
            batch.o[triples],
        )

    return part(slice(0, n), slice(0, cut), 0), part(slice(n, None), slice(cut, None), n)


# --------------------------------------------------------------------------- other formats


def _event_pieces(
    events: Iterator[Event], dictionary: TermDictionary, size: int
) -> Iterator[_Piece]:
    """Events read by ``read_events``, converted ``size`` at a time."""
    chunk: list[Event] = []
    for event in events:
        chunk.append(event)
        if len(chunk) >= size:
            yield _piece_of(chunk, dictionary)
            chunk = []
    if chunk:
        yield _piece_of(chunk, dictionary)


def _piece_of(events: list[Event], dictionary: TermDictionary) -> _Piece:
    texts: tuple[list[str], list[str], list[str]] = ([], [], [])
    counts = []
    for event in events:
        counts.append(len(event.graph))
        for triple in event.graph:
            texts[0].append(str(triple.subject))
            texts[1].append(str(triple.predicate))
            texts[2].append(_node_text(triple.object))
    return _Piece(
        [event.stream for event in events],
        np.array([event.t_start for event in events], np.int64),
        np.array([event.t_end for event in events], np.int64),
        np.repeat(np.arange(len(events), dtype=np.int32), counts),
        *(dictionary.encode(column) for column in texts),
    )


def _node_text(node: object) -> str:
    return f"<<( {node} )>>" if isinstance(node, Triple) else str(node)


# --------------------------------------------------------------------------- event store


def is_store(path: Path) -> bool:
    """Whether ``path`` is a Parquet event store (a ``.parquet`` file or a folder of them)."""
    if path.is_file():
        return path.suffix == ".parquet"
    return path.is_dir() and next(path.rglob("*.parquet"), None) is not None


def _store_files(path: Path) -> list[tuple[Path, dict[str, str]]]:
    """The data files of a store in path order, with the Hive partition values of their
    folders (as ``rsep.spark.eventstore.read_store_events`` lists them)."""
    if path.is_file():
        return [(path, {})]
    found = []
    for file in path.rglob("*"):
        parts = file.relative_to(path).parts
        if any(part.startswith((".", "_")) for part in parts) or not file.is_file():
            continue
        folders = [part.split("=", 1) for part in parts[:-1] if "=" in part]
        found.append((file, {key: unquote(value) for key, value in folders}))
    return sorted(found, key=lambda item: str(item[0]))


def _store_pieces(path: Path, stream: str | None, dictionary: TermDictionary) -> Iterator[_Piece]:
    """The store's events file by file: each file's rows sorted by time and event id, an
    event a run of rows with one stream, event id and time (``read_store_events``)."""
    import pyarrow.parquet as pq

    if not path.exists():
        raise UserError(f"no event store at {path}")
    for file, partition in _store_files(path):
        parquet = pq.ParquetFile(file)
        names = parquet.schema_arrow.names
        columns = [c for c in _STORE_COLUMNS if c in names]
        fixed = partition.get("stream") if "stream" not in names else None
        if fixed is None and "stream" not in names:
            raise UserError(f"{file}: no stream column nor stream= folder")
        if stream is not None and fixed is not None and fixed != stream:
            continue
        table = parquet.read(columns=columns)
        if stream is not None and fixed is None:
            table = table.filter(pc.equal(table.column("stream"), stream))
        if table.num_rows == 0:
            continue
        table = table.sort_by([("t_start", "ascending"), ("event_id", "ascending")])
        yield _store_piece(file, table, fixed, dictionary)


def _store_piece(
    file: Path, table: pa.Table, fixed: str | None, dictionary: TermDictionary
) -> _Piece:
    rows = table.num_rows
    keys = ["event_id", "t_start", "t_end"] + ([] if fixed is not None else ["stream"])
    change = np.zeros(rows, np.bool_)
    change[0] = True
    for name in keys:
        codes = pc.dictionary_encode(table.column(name).combine_chunks(), null_encoding="encode")
        index = codes.indices.to_numpy(zero_copy_only=False)
        change[1:] |= index[1:] != index[:-1]
    starts = np.flatnonzero(change)
    for name in ("t_start", "t_end", "s", "p", "o"):
        if table.column(name).null_count:
            raise UserError(f"{file}: null in column {name}")
    at = pa.array(starts)
    streams = (
        [fixed] * len(starts) if fixed is not None else table.column("stream").take(at).to_pylist()
    )
    if None in streams:
        raise UserError(f"{file}: null in column stream")
    try:
        s, p, o = (dictionary.encode(table.column(name)) for name in ("s", "p", "o"))
    except ValueError as exc:
        raise UserError(f"{file}: {exc}") from None
    return _Piece(
        streams,
        table.column("t_start").take(at).to_numpy(),
        table.column("t_end").take(at).to_numpy(),
        (np.cumsum(change) - 1).astype(np.int32),
        s,
        p,
        o,
    )


# --------------------------------------------------------------------------- N-Quads

_SPACE, _NEWLINE, _QUOTE, _DOT = (ord(c) for c in ' \n".')
_BLANK = " \t\r\x0b\x0c"


@dataclass
class _Lines:
    """A block's lines classified as ``rsep.rdf.formats.nquads`` does for a canonical block
    (a quad line ``S P O G .``, with ``G`` the last token, an IRI or blank node without a
    quote; else a default-graph line ``S REST``; else blank or a comment), its tokens
    cut out by byte offsets: no Python object per line."""

    s: pa.Array
    p: pa.Array
    o: pa.Array
    g: pa.Array
    subject: pa.Array
    rest: pa.Array


def _split_lines(data: bytes) -> _Lines | None:
    """The tokens of a block of whole lines, or ``None`` if a line is none of the above
    (or a token is empty), or the block is not UTF-8."""
    if not data.endswith(b"\n"):
        data += b"\n"
    buf = np.frombuffer(data, np.uint8)
    if buf.max(initial=0) >= 0x80:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    ends = np.flatnonzero(buf == _NEWLINE)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    spaces = np.flatnonzero(buf == _SPACE)
    spaces = np.append(spaces, [len(buf)] * 2)  # sentinels past every line
    quotes = np.flatnonzero(buf == _QUOTE)
    first = np.searchsorted(spaces, starts)
    sp1, sp2 = spaces[first], spaces[first + 1]
    dotted = (ends - starts >= 2) & (buf[ends - 1] == _DOT) & (buf[ends - 2] == _SPACE)
    dotted &= sp1 < ends - 2  # at least two spaces, the last one before the final "."
    last = np.searchsorted(spaces, ends - 2) - 1  # the space before the last token
    gsp = spaces[np.maximum(last, 0)]
    g0 = buf[np.minimum(gsp + 1, len(buf) - 1)]
    g1 = buf[np.minimum(gsp + 2, len(buf) - 1)]
    shaped = ((g0 == ord("<")) & (buf[ends - 3] == ord(">"))) | (
        (g0 == ord("_")) & (g1 == ord(":"))
    )
    unquoted = np.searchsorted(quotes, ends - 2) == np.searchsorted(quotes, gsp + 1)
    quad = dotted & shaped & unquoted & (last - first >= 2) & (gsp + 1 < ends - 2)
    default = dotted & ~quad
    other = ~dotted
    if other.any():
        text = pa.array([data[a:z] for a, z in zip(starts[other], ends[other], strict=True)])
        trimmed = pc.utf8_ltrim(text.cast(pa.string()), _BLANK)
        if not pc.all(pc.or_(pc.equal(trimmed, ""), pc.starts_with(trimmed, "#"))).as_py():
            return None
    q = np.flatnonzero(quad)
    if np.any(sp1[q] == starts[q]) or np.any(sp2[q] == sp1[q] + 1) or np.any(gsp[q] == sp2[q] + 1):
        return None  # an empty token
    d = np.flatnonzero(default)
    if np.any(sp1[d] == starts[d]):
        return None
    buffer = pa.py_buffer(data)
    quads = _pieces(
        buffer,
        [starts[q], sp1[q], sp1[q] + 1, sp2[q], sp2[q] + 1, gsp[q]],
        [gsp[q] + 1, ends[q] - 2],
    )
    defaults = _pieces(buffer, [starts[d], sp1[d], sp1[d] + 1], [ends[d]])
    return _Lines(*quads[::2], *defaults[::2])


def _pieces(buffer: pa.Buffer, cuts: list[np.ndarray], tail: list[np.ndarray]) -> list[pa.Array]:
    """Columns cut from ``buffer``: row i of column k runs from the k-th to the (k+1)-th of
    ``cuts + tail`` at row i (odd columns are the separators between)."""
    bounds = np.stack([*cuts, *tail], axis=1)
    width = bounds.shape[1]
    rows = bounds.shape[0]
    offsets = np.append(bounds.ravel(), bounds[-1, -1] if rows else 0).astype(np.int32)
    if rows == 0:
        offsets = np.zeros(1, np.int32)
    pieces = pa.StringArray.from_buffers(rows * width, pa.py_buffer(offsets), buffer)
    return [pieces.take(pa.array(np.arange(k, rows * width, width))) for k in range(width - 1)]


class _Columns(_Assembly):
    """The N-Quads reader's assembly (:mod:`rsep.rdf.formats.nquads`, which decides when an
    event is complete, its time, stream and errors) with the triples kept as id columns;
    canonical blocks are split by Arrow kernels, others parsed by the reader's own path."""

    def __init__(
        self, file: Path, texts: Texts, bad: BadRecords, dictionary: TermDictionary
    ) -> None:
        super().__init__(file, texts, bad)
        self.dictionary = dictionary
        self.serials: dict[str, int] = {}
        self.next_serial = 0
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def read(self, data: bytes, line: int, block: int, final: bool, fast: bool) -> int:
        """Add the lines of ``data``; returns the bytes used (as ``_read_block``)."""
        if fast and self._vectorised(data, block):
            return len(data)
        return _read_block(self, self.texts, data, line, block, final, fast)

    def canonical(self, found: _Block, block: int) -> None:
        super().canonical(found, block)
        self._absorb()

    def quads(self, quads: list[Quad], block: int) -> None:
        super().quads(quads, block)
        self._absorb()

    def _absorb(self) -> None:
        """Move the triples the reader's own path put in pending events into id columns."""
        serial_col: list[int] = []
        texts: tuple[list[str], list[str], list[str]] = ([], [], [])
        for graph, (_, triples, _) in self.pending.items():
            serial = self._serial(graph)
            for triple in triples:
                serial_col.append(serial)
                texts[0].append(str(triple.subject))
                texts[1].append(str(triple.predicate))
                texts[2].append(_node_text(triple.object))
            triples.clear()
        if serial_col:
            s, p, o = (self.dictionary.encode(column) for column in texts)
            self.rows.append((np.array(serial_col, np.int64), s, p, o))

    def _serial(self, graph: str) -> int:
        serial = self.serials.get(graph)
        if serial is None:
            serial = self.serials[graph] = self.next_serial
            self.next_serial += 1
        return serial

    def _vectorised(self, data: bytes, block: int) -> bool:
        """Add a block whose every line is canonical, split by byte offsets and Arrow
        kernels; ``False`` (nothing added) when a line is not canonical."""
        lines = _split_lines(data)
        if lines is None:
            return False
        found = self._quad_columns(lines)
        if found is None:
            return False
        graphs, serial, s, p, o = found
        subjects = lines.subject
        codes = pc.dictionary_encode(lines.rest)
        unique_subjects = pc.unique(subjects).to_pylist()
        statements = self.texts.defaults(unique_subjects, codes.dictionary.to_pylist())
        if statements is None:
            return False
        # Accepted: add what the block holds, as ``_Assembly.canonical`` does.
        pending = self.pending
        for graph, name in graphs:
            if graph not in pending:
                pending[graph] = (name, [], block)
                self._serial(graph)
        if len(serial):
            lookup = np.array([self.serials[graph] for graph, _ in graphs], np.int64)
            self.rows.append((lookup[serial], s, p, o))
        meta = self.meta
        indices = codes.indices.to_numpy(zero_copy_only=False)
        useful = np.array([statement is not None for statement in statements], np.bool_)
        at = np.flatnonzero(useful[indices]) if len(indices) else np.empty(0, np.int64)
        if len(at):
            chosen = subjects.take(pa.array(at)).to_pylist()
            for subject, code in zip(chosen, indices[at].tolist(), strict=True):
                statement = statements[code]
                assert statement is not None
                held = meta.get(subject)
                if held is None:
                    meta[subject] = [statement]
                else:
                    held.append(statement)
        self.touched.update(unique_subjects)
        self.touched.update(graph for graph, _ in graphs)
        return True

    def _quad_columns(self, lines: _Lines) -> tuple[Any, ...] | None:
        """The graphs (text, name; first appearance order), per-row graph index and the
        s, p, o ids of canonical quad rows, or ``None`` if one is not canonical."""
        dictionary = self.dictionary
        columns = []
        for name in ("s", "p", "o"):
            codes = pc.dictionary_encode(getattr(lines, name))
            distinct = codes.dictionary
            try:
                ids = dictionary.encode(distinct)
            except ValueError:
                return None
            if dictionary.texts(ids) != distinct.to_pylist():
                return None  # a spelling other than the canonical one: the reader's own path
            columns.append((ids, codes.indices.to_numpy(zero_copy_only=False)))
        kinds = dictionary.values.kind
        subject_kinds = kinds[columns[0][0]]
        if not np.all((subject_kinds == KIND_IRI) | (subject_kinds == KIND_BLANK)):
            return None
        if not np.all(kinds[columns[1][0]] == KIND_IRI):
            return None
        codes = pc.dictionary_encode(lines.g)
        graphs = []
        for text in codes.dictionary.to_pylist():
            node = self.texts.name(text)
            if node is None:
                return None
            graphs.append((text, node))
        s, p, o = (ids[indices] for ids, indices in columns)
        return graphs, codes.indices.to_numpy(zero_copy_only=False), s, p, o

    def complete(self, final: bool) -> _Piece | None:
        """The events complete after the current block, as ``_Assembly.close`` finds them
        (errors reported there), with their triples."""
        events = self.close(final)
        serials = self.serials
        good = np.array([serials[str(event.id)] for event in events], np.int64)
        for graph in [graph for graph in serials if graph not in self.pending]:
            del serials[graph]
        rows = self.rows
        if not rows:
            rows = [(np.empty(0, np.int64),) + (np.empty(0, np.int32),) * 3]
        row_serial, s, p, o = (np.concatenate(column) for column in zip(*rows, strict=True))
        keep = np.isin(row_serial, np.fromiter(serials.values(), np.int64, len(serials)))
        self.rows = [(row_serial[keep], s[keep], p[keep], o[keep])] if keep.any() else []
        if not events:
            return None
        take = np.isin(row_serial, good)
        event_index = np.searchsorted(good, row_serial[take])
        order = np.argsort(event_index, kind="stable")
        return _Piece(
            [event.stream for event in events],
            np.array([event.t_start for event in events], np.int64),
            np.array([event.t_end for event in events], np.int64),
            event_index[order].astype(np.int32),
            s[take][order],
            p[take][order],
            o[take][order],
        )


def _nquads_pieces(
    path: Path, opts: ReadOptions, bad: BadRecords, dictionary: TermDictionary
) -> Iterator[_Piece]:
    """The events of an N-Quads file or folder of parts, block by block as
    ``rsep.rdf.formats.nquads.read_nquads`` reads them."""
    texts = Texts(opts)
    for file in part_files(path):
        assembly = _Columns(file, texts, bad, dictionary)
        buffer = b""
        line = 1
        block = 0
        waiting = 0
        pieces = read_chunks(file, nquads.BLOCK_BYTES)
        while True:
            try:
                chunk = next(pieces, None)
            except InputError as exc:
                bad.report(exc.file, exc.line, exc.reason)
                break
            if chunk is None:
                if buffer:
                    assembly.read(buffer, line, block, True, not waiting)
                    assembly.keep(block, buffer, line)
                piece = assembly.complete(True)
                if piece is not None:
                    yield piece
                break
            buffer += chunk
            cut = buffer.rfind(b"\n") + 1
            if cut <= waiting:
                continue
            used = assembly.read(buffer[:cut], line, block, False, not waiting)
            waiting = cut if used < cut else 0
            if used:
                assembly.keep(block, buffer[:used], line)
                line += buffer.count(b"\n", 0, used)
                buffer = buffer[used:]
                waiting = max(0, waiting - used)
                piece = assembly.complete(False)
                if piece is not None:
                    yield piece
                block += 1
