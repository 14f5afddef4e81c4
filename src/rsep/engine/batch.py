"""Events as columns: a batch of events, one row per event and one per distinct triple, its
terms as ids of a shared :class:`~rsep.engine.terms.TermDictionary` (DESIGN.md, columnar
form; ENGINE.md, "Reading"), and the readers that fill batches straight from files.

:func:`read_batches` gives exactly the events of :func:`rsep.rdf.formats.read_events` (and
of the Parquet event store that ``rsep convert`` writes), in the same order, a batch at a
time. The event store is read by Arrow kernels with no Python object per triple; N-Quads by
numba kernels and Arrow, its events assembled as columns, with no Python object nor loop
step per event or triple on a canonical block (section "N-Quads" below); the other formats
go through ``read_events`` and are converted.
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, tzinfo
from itertools import pairwise
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit
from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, Triple

from rsep.engine.terms import (
    KIND_BLANK,
    KIND_IRI,
    TermDictionary,
    compare_bytes,
    hash_bytes,
    plain_names,
    recent_same,
    rehash,
    same_bytes,
    strings,
    text_bytes,
    word_at,
)
from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event, EventId
from rsep.rdf.formats import Format, detect_format, nquads, read_events
from rsep.rdf.formats._common import (
    ReadOptions,
    TimeOrder,
    parse_resilient,
    part_files,
    read_chunks,
    statement_line,
    term_ms,
)
from rsep.rdf.formats.nquads import Statement, Texts, _Assembly, _Block, _read_block
from rsep.rdf.formats.ntriples import CACHE_LIMIT
from rsep.rdf.terms import PROV_ENDED_AT, PROV_GENERATED_AT, PROV_STARTED_AT, RSEP_STREAM, XSD
from rsep.rdf.time import TimeUnit

__all__ = [
    "STORE",
    "TripleBatch",
    "batches_of",
    "event_range",
    "in_time_order",
    "is_store",
    "merge_batches",
    "read_batches",
    "split_ranges",
    "store_files",
    "table_batches",
]

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
    byte_range: tuple[int, int] | None = None,
    **format_options: Any,
) -> Iterator[TripleBatch]:
    """The events of a stream file as batches of ``batch_events`` events, the same events
    in the same order as :func:`~rsep.rdf.formats.read_events` with the same arguments
    (bad records too: ``file:line: reason``, stop or skip into ``bad``).

    ``fmt`` may also be :data:`STORE`, found without it for a ``.parquet`` file or a
    folder of them: the events of ``read_store_events``, only those of ``stream`` when it
    is given. N-Quads and the store are read by vectorised kernels; other formats go
    through ``read_events`` (exact, one Python object per triple) and are converted.

    ``byte_range`` (``start``, ``stop``), for one uncompressed N-Quads file: only the
    events whose graph first appears in a reader block (``nquads.BLOCK_BYTES``) that
    starts in the range, and only the bad lines of those blocks, with their true line
    numbers (section "Byte ranges"); the ranges of :func:`split_ranges` give each event
    and each bad record of the file to exactly one range.
    """
    path = Path(path)
    if batch_events < 1:
        raise UserError(f"batch_events must be positive, got {batch_events}")
    batcher = _Batcher(batch_events)
    if fmt == STORE or (fmt is None and is_store(path)):
        if format_options:
            raise UserError(f"unknown option(s) {', '.join(sorted(format_options))} for a store")
        if byte_range is not None:
            raise UserError("byte_range is for an N-Quads file, not an event store")
        # cut into batches in the reader's thread too: the consumer only takes them
        return _ahead(batcher.run(_store_pieces(path, stream, dictionary)))
    chosen = fmt
    if chosen is None and path.exists():
        chosen = detect_format(path)
    events = read_events(
        path, chosen, stream=stream, time_unit=time_unit, tz=tz, bad=bad, **format_options
    )
    if chosen in (Format.NQUADS, Format.NQUADS.value):
        opts = ReadOptions(stream, time_unit, tz)
        span = None if byte_range is None else _Span.of(path, *byte_range)
        pieces = _nquads_pieces(path, opts, bad or BadRecords(), dictionary, span)
        return batcher.run(_ahead(pieces))
    if byte_range is not None:
        name = chosen.value if isinstance(chosen, Format) else chosen
        raise UserError(f"byte_range is for an N-Quads file, not {name}")
    return batcher.run(_event_pieces(events, dictionary, batch_events))


def batches_of(
    events: Iterable[Event], dictionary: TermDictionary, batch_events: int = 65_536
) -> Iterator[TripleBatch]:
    """Events already read (a stream set in memory, a test's list) as batches."""
    return _Batcher(batch_events).run(_event_pieces(iter(events), dictionary, batch_events))


def table_batches(
    table: pa.Table, dictionary: TermDictionary, batch_events: int = 65_536
) -> Iterator[TripleBatch]:
    """A table of triples held in memory, in the event store's columns (``event_id`` may
    be missing or null), as batches: the events :func:`read_batches` gives for the same
    rows written as a one-file store, read by the store's kernels with no file between and
    no Python object per triple (the public API's Arrow and pandas input)."""
    if batch_events < 1:
        raise UserError(f"batch_events must be positive, got {batch_events}")
    names = table.column_names
    missing = [name for name in _STORE_COLUMNS if name != "event_id" and name not in names]
    if missing:
        raise UserError(
            f"a table of triples needs the columns {', '.join(_STORE_COLUMNS)} (event_id may "
            f"be left out); missing: {', '.join(missing)}"
        )
    columns: dict[str, pa.ChunkedArray] = {}
    for name in _STORE_COLUMNS:
        kind = pa.int64() if name.startswith("t_") else pa.string()
        given = table.column(name) if name in names else pa.chunked_array([], kind)
        if name != "event_id" and given.null_count:
            raise UserError(f"a table of triples has a null in column {name}")
        try:
            columns[name] = given.cast(kind) if len(given) else pa.nulls(table.num_rows, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise UserError(f"column {name} of a table of triples: {exc}") from None
    if table.num_rows == 0:
        return iter(())
    columns["stream"] = pc.dictionary_encode(columns["stream"])  # as a store file reads
    piece = _store_piece(Path("table"), pa.table(columns), None, _StoreTerms(dictionary))
    return _Batcher(batch_events).run(iter([piece]))


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
            yield in_time_order(parts)


def in_time_order(parts: list[TripleBatch]) -> TripleBatch:
    """Batches of several inputs as one, their streams united, events in time order."""
    streams = tuple(dict.fromkeys(name for part in parts for name in part.streams))
    index = {name: i for i, name in enumerate(streams)}
    end = np.concatenate([part.event_end for part in parts])
    order = np.argsort(end, kind="stable")
    # an event's triples are one run of rows: the runs taken in the events' new order
    counts = np.concatenate([np.bincount(p.triple_event, minlength=len(p)) for p in parts])
    first = np.cumsum(counts) - counts
    moved = counts[order]
    by_event = np.repeat(first[order] - (np.cumsum(moved) - moved), moved)
    by_event += np.arange(len(by_event))
    triple_event = np.repeat(np.arange(len(order), dtype=np.int32), moved)
    remap = [np.array([index[n] for n in p.streams], np.int32) for p in parts]
    return TripleBatch(
        streams,
        np.concatenate([m[p.event_stream] for p, m in zip(parts, remap, strict=True)])[order],
        np.concatenate([p.event_start for p in parts])[order],
        end[order],
        np.concatenate([p.event_ordinal for p in parts])[order],
        triple_event,
        np.concatenate([p.s for p in parts])[by_event],
        np.concatenate([p.p for p in parts])[by_event],
        np.concatenate([p.o for p in parts])[by_event],
    )


# --------------------------------------------------------------------------- batching

_AHEAD = 2
"""Pieces a reader thread holds ready (``_ahead``)."""

_T = TypeVar("_T")


def _ahead(pieces: Iterator[_T]) -> Iterator[_T]:
    """The pieces of ``pieces`` read by a thread of their own, at most ``_AHEAD`` ahead of
    the consumer, so reading (numba kernels and Arrow, which release the GIL) overlaps the
    work on the pieces before; its errors raised in their place in the sequence."""
    ready: queue.Queue[tuple[_T | None, BaseException | None]] = queue.Queue(_AHEAD)
    stop = threading.Event()

    def produce() -> None:
        try:
            for piece in pieces:
                while not stop.is_set():
                    try:
                        ready.put((piece, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put((None, None))
        except BaseException as exc:  # handed to the consumer, raised there
            ready.put((None, exc))
        finally:  # a generator's own readers (a thread of its own) stop with it
            close = getattr(pieces, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="rsep-reader", daemon=True)
    thread.start()
    try:
        while True:
            piece, error = ready.get()
            if error is not None:
                raise error
            if piece is None:
                return
            yield piece
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            while True:  # let a producer waiting to put see the stop
                ready.get_nowait()
        thread.join()


@dataclass
class _Piece:
    """Events and their triples (``triple_event`` local to the piece, non-decreasing)."""

    stream: list[str]
    """Each event's stream, or with ``codes`` the streams that ``codes`` index."""
    start: np.ndarray
    end: np.ndarray
    triple_event: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    codes: np.ndarray | None = None
    """int [n_events]: each event's index into ``stream``, if given."""


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
        try:
            for piece in pieces:
                self.held.append(self._batch(piece))
                self.count += len(piece.start)
                while self.count >= self.size:
                    yield self._take(self.size)
            if self.count:
                yield self._take(self.count)
        finally:  # a reader of its own (threads) stops with the batches
            close = getattr(pieces, "close", None)
            if close is not None:
                close()

    def _batch(self, piece: _Piece) -> TripleBatch:
        streams = self.streams
        n = len(piece.start)
        if piece.codes is None:
            for name in dict.fromkeys(piece.stream):
                streams.setdefault(name, len(streams))
            event_stream = np.array([streams[name] for name in piece.stream], np.int32)
        else:  # numbered in order of first appearance, as above
            used, first = np.unique(piece.codes, return_index=True)
            index = np.zeros(len(piece.stream), np.int32)
            for code in used[np.argsort(first)].tolist():
                index[code] = streams.setdefault(piece.stream[code], len(streams))
            event_stream = index[piece.codes]
        ev = piece.triple_event.astype(np.int32, copy=False)
        s, p, o = piece.s, piece.p, piece.o
        if len(ev) > 1 and _repeats(ev, s, p, o):
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
            event_stream,
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


@njit(cache=True, nogil=True)
def _repeats(ev: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> bool:
    """Whether a row (event, s, p, o) repeats another (``ev`` non-decreasing): the rows of
    an event compared pairwise when they are few, else by a hash table of its rows."""
    n = ev.shape[0]
    start = 0
    while start < n:
        end = start + 1
        while end < n and ev[end] == ev[start]:
            end += 1
        if end - start <= 16:
            for i in range(start + 1, end):
                for j in range(start, i):
                    if s[j] == s[i] and p[j] == p[i] and o[j] == o[i]:
                        return True
        elif _repeated(s[start:end], p[start:end], o[start:end]):
            return True
        start = end
    return False


@njit(cache=True, nogil=True)
def _repeated(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> bool:
    """Whether a row (s, p, o) repeats another (a hash table of rows)."""
    n = s.shape[0]
    size = 16
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)
    for i in range(n):
        h = (np.uint64(s[i]) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(p[i])
        h = (h * np.uint64(0xFF51AFD7ED558CCD)) ^ np.uint64(o[i])
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        slot = (h ^ (h >> np.uint64(29))) & mask
        while table[slot] >= 0:
            j = table[slot]
            if s[j] == s[i] and p[j] == p[i] and o[j] == o[i]:
                return True
            slot = (slot + np.uint64(1)) & mask
        table[slot] = i
    return False


def event_range(batch: TripleBatch, lo: int, hi: int) -> TripleBatch:
    """The events ``lo`` to ``hi - 1`` of ``batch``."""
    first, last = np.searchsorted(batch.triple_event, [lo, hi]).tolist()
    return TripleBatch(
        batch.streams,
        batch.event_stream[lo:hi],
        batch.event_start[lo:hi],
        batch.event_end[lo:hi],
        batch.event_ordinal[lo:hi],
        batch.triple_event[first:last] - lo,
        batch.s[first:last],
        batch.p[first:last],
        batch.o[first:last],
    )


def _split(batch: TripleBatch, n: int) -> tuple[TripleBatch, TripleBatch]:
    """The first ``n`` events of ``batch`` and the rest."""
    return event_range(batch, 0, n), event_range(batch, n, len(batch))


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
    """The events' triples as term ids: subjects, predicates and objects encoded in one
    call (a call's fixed cost outweighs a small piece's terms)."""
    subjects: list[str] = []
    predicates: list[str] = []
    objects: list[str] = []
    counts = []
    for event in events:
        counts.append(len(event.graph))
        for triple in event.graph:
            subjects.append(str(triple.subject))
            predicates.append(str(triple.predicate))
            objects.append(_node_text(triple.object))
    n = len(subjects)
    ids = dictionary.encode(subjects + predicates + objects)
    return _Piece(
        [event.stream for event in events],
        np.array([event.t_start for event in events], np.int64),
        np.array([event.t_end for event in events], np.int64),
        np.repeat(np.arange(len(events), dtype=np.int32), counts),
        ids[:n],
        ids[n : 2 * n],
        ids[2 * n :],
    )


def _node_text(node: object) -> str:
    return f"<<( {node} )>>" if isinstance(node, Triple) else str(node)


# --------------------------------------------------------------------------- event store


def is_store(path: Path) -> bool:
    """Whether ``path`` is a Parquet event store (a ``.parquet`` file or a folder of them)."""
    if path.is_file():
        return path.suffix == ".parquet"
    return path.is_dir() and next(path.rglob("*.parquet"), None) is not None


def store_files(path: Path) -> list[tuple[Path, dict[str, str]]]:
    """The data files of an event store, in path order, with the Hive partition values
    (``key=value``, URI-encoded) of their folders; names starting with ``.`` or ``_``
    are skipped, as ``pyarrow.dataset`` does."""
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
    event a run of rows with one stream, event id and time (``read_store_events``).

    Text columns are read as Parquet dictionaries, so a distinct text is compared and
    encoded once per row group and the rows map through its indices."""
    if not path.exists():
        raise UserError(f"no event store at {path}")
    texts: list[str] = []
    terms = _StoreTerms(dictionary)
    for file, partition in store_files(path):
        parquet, texts = _open_store_file(file, texts)
        names = parquet.schema_arrow.names
        columns = [c for c in _STORE_COLUMNS if c in names]
        fixed = partition.get("stream") if "stream" not in names else None
        if fixed is None and "stream" not in names:
            raise UserError(f"{file}: no stream column nor stream= folder")
        missing = [c for c in _STORE_COLUMNS[1:] if c not in names]
        if missing:
            raise UserError(f"{file}: no column {', '.join(missing)}")
        plain = [c for c in ("stream", "event_id") if c in names and c not in texts]
        if plain:
            raise UserError(f"{file}: column {plain[0]} does not hold texts")
        if stream is not None and fixed is not None and fixed != stream:
            continue
        # one thread: the reader runs beside the engine, more would only add CPU time
        table = parquet.read(columns=columns, use_threads=False)
        if stream is not None and fixed is None:
            table = table.filter(pc.equal(table.column("stream"), stream))
        if table.num_rows == 0:
            continue
        for name in ("t_start", "t_end", "s", "p", "o"):
            if table.column(name).null_count:
                raise UserError(f"{file}: null in column {name}")
        yield _store_piece(file, table, fixed, terms)


def _open_store_file(file: Path, texts: list[str]) -> tuple[Any, list[str]]:
    """A store file opened with its text columns read as dictionaries, and those columns;
    ``texts`` (the file before's) tried first, so a file is opened once when they agree."""
    import pyarrow.parquet as pq

    with contextlib.suppress(KeyError):  # a column of ``texts`` that this file lacks
        parquet = pq.ParquetFile(file, read_dictionary=texts, pre_buffer=False)
        if _text_columns(parquet.schema_arrow) == texts:
            return parquet, texts
    parquet = pq.ParquetFile(file, pre_buffer=False)
    found = _text_columns(parquet.schema_arrow)
    opened = pq.ParquetFile(
        file, metadata=parquet.metadata, read_dictionary=found, pre_buffer=False
    )
    return opened, found


def _text_columns(schema: pa.Schema) -> list[str]:
    """The store columns of ``schema`` holding texts (as strings or dictionaries)."""
    found = []
    for name in _STORE_COLUMNS:
        if name in schema.names:
            kind = schema.field(name).type
            kind = kind.value_type if pa.types.is_dictionary(kind) else kind
            if pa.types.is_string(kind) or pa.types.is_large_string(kind):
                found.append(name)
    return found


_IN_ORDER, _MOVED, _OUT_OF_TIME_ORDER = 0, 1, 2
"""What ``_store_order`` did with a store file's rows."""


def _store_piece(file: Path, table: pa.Table, fixed: str | None, terms: _StoreTerms) -> _Piece:
    """A store file's events: its rows put in order of time and event id (a stable sort)
    and cut into events by ``_store_order``; the Arrow sort only for rows not in time
    order."""
    rows = table.num_rows
    start = table.column("t_start").to_numpy()
    end = table.column("t_end").to_numpy()
    if fixed is None:
        stream, streams = _stream_codes(table.column("stream"))
        if np.any(stream < 0):
            raise UserError(f"{file}: null in column stream")
    else:
        stream, streams = np.zeros(rows, np.int32), [fixed]
    words, lo, hi, entry = _text_entries(table.column("event_id"))
    order, first, status = _store_order(words, lo, hi, entry, start, end, stream)
    if status == _OUT_OF_TIME_ORDER:  # as old stores have them: Arrow sorts the rows
        at = table.schema.get_field_index("event_id")
        table = table.set_column(at, "event_id", table.column("event_id").cast(pa.string()))
        table = table.sort_by([("t_start", "ascending"), ("event_id", "ascending")])
        return _store_piece(file, table, fixed, terms)
    try:
        s, p, o = (terms.ids(name, table.column(name)) for name in ("s", "p", "o"))
    except ValueError as exc:
        raise UserError(f"{file}: {exc}") from None
    if status == _MOVED:
        start, end, stream, s, p, o = (a[order] for a in (start, end, stream, s, p, o))
    starts = np.flatnonzero(first)
    return _Piece(
        streams,
        start[starts],
        end[starts],
        (np.cumsum(first) - 1).astype(np.int32),
        s,
        p,
        o,
        stream[starts],
    )


class _StoreTerms:
    """The term ids of store columns in one read. A column's texts are looked up once per
    row group, through its Parquet dictionary; a dictionary equal to the one before in its
    column (the predicates of every file of a writer) is not looked up again."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary
        self._last: dict[str, tuple[pa.Array, np.ndarray]] = {}

    def ids(self, name: str, column: pa.ChunkedArray) -> np.ndarray:
        """The term ids of the rows of column ``name`` (no nulls)."""
        if not pa.types.is_dictionary(column.type):
            return self.dictionary.encode(column)
        parts = []
        for chunk in column.chunks:
            texts = chunk.dictionary
            last = self._last.get(name)
            if last is not None and last[0].equals(texts):
                lookup = last[1]
            else:
                lookup = self.dictionary.ids(texts)
                self._last[name] = (texts, lookup)
            parts.append(lookup[chunk.indices.to_numpy(zero_copy_only=False)])
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _stream_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Each row's index into the distinct streams (-1 for a null), and those streams (a
    dictionary may repeat a value: equal values share one index)."""
    chunks = column.chunks
    found = pc.dictionary_encode(pa.concat_arrays([chunk.dictionary for chunk in chunks]))
    entry = np.append(found.indices.to_numpy(zero_copy_only=False), -1).astype(np.int32)
    codes = entry[_indices(chunks)]
    return codes, found.dictionary.to_pylist()


def _indices(chunks: list[pa.DictionaryArray]) -> np.ndarray:
    """The rows' indices into the chunks' dictionaries one after the other, -1 for a null
    (indexes the last entry of an array one longer)."""
    parts = []
    offset = 0
    for chunk in chunks:
        indices = chunk.indices
        if indices.null_count:
            indices = indices.fill_null(-1 - offset)
        part = indices.to_numpy().astype(np.int64) + offset
        if chunk.dictionary.null_count:
            nulls = np.flatnonzero(chunk.dictionary.is_null().to_numpy(zero_copy_only=False))
            part[np.isin(part, nulls + offset)] = -1
        parts.append(part)
        offset += len(chunk.dictionary)
    return np.concatenate(parts)


def _text_entries(
    column: pa.ChunkedArray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A text column as bytes (``text_bytes``) and each row's entry in them, -1 for a
    null: the dictionaries' texts for a dictionary column, else each row's own."""
    if pa.types.is_dictionary(column.type):
        chunks = column.chunks
        texts = pa.concat_arrays([chunk.dictionary for chunk in chunks])
        entry = _indices(chunks)
    else:
        texts = column.combine_chunks()
        entry = np.arange(len(texts), dtype=np.int64)
        if texts.null_count:
            entry[texts.is_null().to_numpy(zero_copy_only=False)] = -1
    words, lo, hi = text_bytes(texts)
    return words, lo, hi, entry


@njit(cache=True, nogil=True)
def _store_order(
    words: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    entry: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    stream: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The rows of a store file in order of time and event id, as a stable sort of them
    puts them, whether each starts an event (a change of event id, times or stream), and
    ``_MOVED``, ``_IN_ORDER`` (the order is the rows') or ``_OUT_OF_TIME_ORDER`` (nothing
    done).

    Rows with one entry, times and stream in a row are a run; only the runs of one time
    are sorted by the texts of their event ids (``entry`` into ``lo``/``hi`` of
    ``words``; -1 a null, after every text)."""
    rows = start.shape[0]
    first = np.zeros(rows, np.bool_)
    order = np.empty(rows, np.int64)
    for i in range(1, rows):
        if start[i] < start[i - 1]:
            return order, first, _OUT_OF_TIME_ORDER
    heads = np.empty(rows + 1, np.int64)
    runs = 0
    for i in range(rows):
        if (
            i == 0
            or entry[i] != entry[i - 1]
            or start[i] != start[i - 1]
            or end[i] != end[i - 1]
            or stream[i] != stream[i - 1]
        ):
            heads[runs] = i
            runs += 1
    heads[runs] = rows
    ranked = np.arange(runs)
    buffer = np.empty(runs, np.int64)
    moved = False
    group = 0
    while group < runs:
        stop = group + 1
        while stop < runs and start[heads[stop]] == start[heads[group]]:
            stop += 1
        if stop - group > 1:
            moved |= _sort_runs(words, lo, hi, entry, heads, ranked, buffer, group, stop)
        group = stop
    at = 0
    before = -1
    for k in range(runs):
        run = ranked[k]
        head = heads[run]
        if before < 0:
            first[at] = True
        else:
            other = heads[before]
            first[at] = (
                start[head] != start[other]
                or end[head] != end[other]
                or stream[head] != stream[other]
                or _compare_entries(words, lo, hi, entry[head], entry[other]) != 0
            )
        for i in range(head, heads[run + 1]):
            order[at + i - head] = i
        at += heads[run + 1] - head
        before = run
    return order, first, _MOVED if moved else _IN_ORDER


@njit(inline="always")
def _compare_entries(words: np.ndarray, lo: np.ndarray, hi: np.ndarray, a: int, b: int) -> int:
    """-1, 0 or 1 as the text of entry ``a`` sorts before, with or after that of ``b``
    (bytes; a null, -1, after every text)."""
    if a == b:
        return 0
    if a < 0:
        return 1
    if b < 0:
        return -1
    return compare_bytes(words, lo[a], hi[a] - lo[a], words, lo[b], hi[b] - lo[b])


@njit(cache=True, nogil=True)
def _sort_runs(
    words: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    entry: np.ndarray,
    heads: np.ndarray,
    ranked: np.ndarray,
    buffer: np.ndarray,
    low: int,
    high: int,
) -> bool:
    """Sort ``ranked[low:high]`` (runs) by the texts of their event ids, stably (a merge
    sort of sorted stretches); whether any moved."""
    moved = False
    width = 1
    while width < high - low:
        for left in range(low, high, 2 * width):
            middle = min(left + width, high)
            right = min(left + 2 * width, high)
            if middle >= right:
                continue
            a = ranked[middle - 1]
            b = ranked[middle]
            if _compare_entries(words, lo, hi, entry[heads[a]], entry[heads[b]]) <= 0:
                continue  # already in order
            moved = True
            i, j, k = left, middle, left
            while i < middle and j < right:
                a = ranked[i]
                b = ranked[j]
                if _compare_entries(words, lo, hi, entry[heads[b]], entry[heads[a]]) < 0:
                    buffer[k] = b
                    j += 1
                else:
                    buffer[k] = a
                    i += 1
                k += 1
            while i < middle:
                buffer[k] = ranked[i]
                i += 1
                k += 1
            while j < right:
                buffer[k] = ranked[j]
                j += 1
                k += 1
            ranked[left:right] = buffer[left:right]
        width *= 2
    return moved


# --------------------------------------------------------------------------- N-Quads
#
# A block whose every line is canonical (``_split`` in rsep.rdf.formats.nquads would take
# it) is read by numba kernels and Arrow, in two threads. The reader thread (``_segments``,
# ``_Tokenizer``) does what needs no state of the read: its lines classified and cut into
# tokens by byte offsets in one pass (``_tokens``), graph names and statement subjects
# coded per block by their bytes and statement rests the same way, so only distinct texts
# become strings; each s, p, o token looked up by its bytes among the terms already met (a
# hash table of the texts ``TermDictionary.encode`` accepted as canonical); the writers'
# time statements read from their bytes (``_rests``). The assembling thread
# (``_file_pieces``, ``_Columns``) encodes the tokens not found once per distinct text and
# assembles the events as columns by the reader's own rules (``_Assembly``: an event is
# complete once a block has gone by without naming it, in order of first appearance): the
# pending graphs with their serials, the triples as id rows, the time and stream
# statements as rows of (event serial, statement number), or of (subject text, statement
# number) while no pending event has that name. Events whose statements are not one valid
# time (point or interval) and, without ``stream=``, one stream IRI, events named by a bad
# line and events going back in time go to ``_Assembly.close`` with their statements,
# which reports them as ``read_events`` does. Other blocks go to the reader's own path
# (``_read_block``) on the same state turned into its objects; the next canonical block
# turns it back into columns.

_NL, _SP, _QUOTE, _DOT, _HASH, _LT, _GT, _LOW, _COLON = (ord(c) for c in '\n ".#<>_:')
_SLASH, _QUERY_MARK = ord("/"), ord("?")
_BLANK = np.zeros(256, np.bool_)
_BLANK[[ord(c) for c in " \t\r\x0b\x0c"]] = True
"""The bytes that a blank or comment line may start with (a subset of ``str.strip``'s)."""


_GENERATED, _STARTED, _ENDED, _STREAM = 1, 2, 3, 4
_KINDS = {
    PROV_GENERATED_AT.value: _GENERATED,
    PROV_STARTED_AT.value: _STARTED,
    PROV_ENDED_AT.value: _ENDED,
    RSEP_STREAM.value: _STREAM,
}
"""Statement kinds (0: a default-graph line giving no time nor stream)."""

_ONES = 0x0101010101010101
_LOWS = 0x7F7F7F7F7F7F7F7F


@njit(inline="always")
def _zeros(x: np.uint64) -> np.uint64:
    """The high bit of each zero byte of ``x`` (exactly those)."""
    low = np.uint64(_LOWS)
    return ~(((x & low) + low) | x | low)


@njit(inline="always")
def _space(words: np.ndarray, buf: np.ndarray, k: int, e: int) -> int:
    """The first space in bytes ``k`` to ``e`` (excluded), or -1."""
    spaces = np.uint64(_ONES * _SP)
    while k + 8 <= e:
        found = _zeros(word_at(words, k) ^ spaces)
        if found:
            while not found & np.uint64(0x80):
                found >>= np.uint64(8)
                k += 1
            return k
        k += 8
    while k < e:
        if buf[k] == _SP:
            return k
        k += 1
    return -1


@njit(inline="always")
def _newline(words: np.ndarray, k: int) -> tuple[int, np.uint64]:
    """The first newline from byte ``k`` (there is one) and the high bits of the bytes
    before it (bytes of multi-byte UTF-8 sequences)."""
    newlines = np.uint64(_ONES * _NL)
    highs = np.uint64(_ONES * 0x80)
    high = np.uint64(0)
    while True:
        word = word_at(words, k)
        found = _zeros(word ^ newlines)
        if found:
            mask = np.uint64(0)
            while not found & np.uint64(0x80):
                found >>= np.uint64(8)
                mask = (mask << np.uint64(8)) | np.uint64(0xFF)
                k += 1
            return k, high | (word & highs & mask)
        high |= word & highs
        k += 8


@njit(inline="always")
def _code(
    words: np.ndarray,
    a: int,
    length: int,
    table: np.ndarray,
    hashes: np.ndarray,
    spans: np.ndarray,
    count: int,
) -> int:
    """The code of the ``length`` bytes from ``a`` among ``count`` distinct byte strings
    (an open-addressing ``table`` of codes, each code's hash and span of bytes); a new one
    gets code ``count``, which the caller counts. A hash finds the candidates, bytes
    decide."""
    h = hash_bytes(words, a, length)
    mask = np.uint64(table.shape[0] - 1)
    slot = h & mask
    while True:
        code = table[slot]
        if code < 0:
            table[slot] = count
            hashes[count] = h
            spans[0, count] = a
            spans[1, count] = a + length
            return count
        lo = spans[0, code]
        if (
            hashes[code] == h
            and spans[1, code] - lo == length
            and same_bytes(words, lo, words, a, length)
        ):
            found: int = code
            return found
        slot = (slot + np.uint64(1)) & mask


@njit(inline="always")
def _roomy(table: np.ndarray, hashes: np.ndarray, count: int) -> np.ndarray:
    """``table`` with room for one more code (at most half full), rebuilt twice as large
    from the ``count`` codes' hashes when it is not."""
    if 2 * (count + 1) <= table.shape[0]:
        return table
    grown = np.full(2 * table.shape[0], -1, np.int32)
    rehash(grown, hashes, count)
    return grown


def _table_size(count: int) -> int:
    """The slots of a hash table for ``count`` entries, at most half full."""
    return 1 << max(4, (2 * count).bit_length())


@njit(cache=True, nogil=True)
def _tokens(
    words: np.ndarray, n: int, blank: np.ndarray, room: int, slots: int
) -> tuple[
    int, int, int, int, int, int, bool, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    """A block's lines (its ``n`` bytes end with a newline) read as ``_split`` reads a
    canonical block, in one pass: a quad line ``S P O G .`` (``G`` the last token, an IRI
    or blank node without a quote, ``S P O`` with two spaces at least) gives the offsets
    of ``S``, ``P`` and ``O`` and the code of ``G`` among the block's names; another line
    ending in ``" ."`` the codes of its subject among the names and of its rest among the
    block's rests; the others must be blank or a comment. Names are coded graphs first, in
    order of first appearance among the quad lines, then the others.

    Returns a status (0; -1 if a line is none of these or a token is empty; -2 if a kind
    has more than ``room`` lines), the counts of quad lines, default-graph lines, lines,
    graphs among the names and rests, whether a byte is not ASCII, and arrays: the quad
    lines' term offsets (rows: s, p, o starts and ends), the lines' codes (rows: each quad
    line's name, each default line's subject and rest), the names' spans (rows: start,
    end) and hashes (``hash_bytes``), the rests' spans. ``slots``: the first size of the
    codes' hash tables."""
    buf = words.view(np.uint8)
    spaces = np.uint64(_ONES * _SP)
    quotes = np.uint64(_ONES * _QUOTE)
    terms = np.empty((6, room), np.int64)
    s_lo, s_hi, p_lo, p_hi, o_lo, o_hi = terms[0], terms[1], terms[2], terms[3], terms[4], terms[5]
    codes = np.empty((3, room), np.int32)
    graph, subject, rest = codes[0], codes[1], codes[2]
    rest_at = np.empty((2, room), np.int64)
    r_lo, r_hi = rest_at[0], rest_at[1]
    name_table = np.full(slots, -1, np.int32)
    name_hashes = np.empty(2 * room, np.uint64)
    name_spans = np.empty((2, 2 * room), np.int64)
    first = np.empty(2 * room, np.int64)  # a name's first quad line, or room + first default
    rest_table = np.full(slots, -1, np.int32)
    rest_hashes = np.empty(room, np.uint64)
    rest_spans = np.empty((2, room), np.int64)
    high = np.uint64(0)
    nq = 0
    nd = 0
    names = 0
    rests = 0
    lines = 0
    last_lo = 0
    last_length = -1
    last_code = -1
    a = 0
    while a < n:
        e, seen = _newline(words, a)
        high |= seen
        lines += 1
        sp1 = _space(words, buf, a, e)
        if not (0 <= sp1 < e - 2 and buf[e - 1] == _DOT and buf[e - 2] == _SP):
            k = a
            while k < e and blank[buf[k]]:
                k += 1
            if k < e and buf[k] != _HASH:
                return -1, 0, 0, 0, 0, 0, False, terms, codes, name_spans, name_hashes, rest_spans
            a = e + 1
            continue
        if sp1 == a:
            return -1, 0, 0, 0, 0, 0, False, terms, codes, name_spans, name_hashes, rest_spans
        sp2 = _space(words, buf, sp1 + 1, e)
        g = e - 3  # back to the space before the last token, noting quotes
        quoted = False
        while g - 8 >= sp1:
            w = word_at(words, g - 7)
            if _zeros(w ^ spaces) | _zeros(w ^ quotes):
                break
            g -= 8
        while buf[g] != _SP:
            quoted |= buf[g] == _QUOTE
            g -= 1
        head = buf[g + 1]
        shaped = g + 1 < e - 2 and (
            (head == _LT and buf[e - 3] == _GT) or (head == _LOW and buf[g + 2] == _COLON)
        )
        quad = 0 <= sp2 < g and shaped and not quoted
        if quad:
            if sp2 == sp1 + 1 or g == sp2 + 1:
                return -1, 0, 0, 0, 0, 0, False, terms, codes, name_spans, name_hashes, rest_spans
            if nq == room:
                return -2, 0, 0, 0, 0, 0, False, terms, codes, name_spans, name_hashes, rest_spans
            s_lo[nq] = a
            s_hi[nq] = sp1
            p_lo[nq] = sp1 + 1
            p_hi[nq] = sp2
            o_lo[nq] = sp2 + 1
            o_hi[nq] = g
            at, length, key = g + 1, e - 3 - g, nq
        else:
            if nd == room:
                return -2, 0, 0, 0, 0, 0, False, terms, codes, name_spans, name_hashes, rest_spans
            at, length, key = a, sp1 - a, room + nd
        if length == last_length and same_bytes(words, last_lo, words, at, length):
            code = last_code
        else:
            name_table = _roomy(name_table, name_hashes, names)
            code = _code(words, at, length, name_table, name_hashes, name_spans, names)
            if code == names:
                first[code] = key
                names += 1
        if first[code] > key:  # a graph first met as a default line's subject
            first[code] = key
        last_lo, last_length, last_code = at, length, code
        if quad:
            graph[nq] = code
            nq += 1
        else:
            subject[nd] = code
            r_lo[nd] = sp1 + 1
            r_hi[nd] = e
            same = recent_same(words, r_lo, r_hi, nd, 2)
            if same >= 0:
                rest[nd] = rest[same]
            else:
                rest_table = _roomy(rest_table, rest_hashes, rests)
                length = e - sp1 - 1
                code = _code(words, sp1 + 1, length, rest_table, rest_hashes, rest_spans, rests)
                rests += code == rests
                rest[nd] = code
            nd += 1
        a = e + 1
    order = np.argsort(first[:names])
    renamed = np.empty(names, np.int32)
    spans = np.empty((2, names), np.int64)
    hashes = np.empty(names, np.uint64)
    graphs = 0
    for new in range(names):
        old = order[new]
        renamed[old] = new
        spans[0, new] = name_spans[0, old]
        spans[1, new] = name_spans[1, old]
        hashes[new] = name_hashes[old]
        graphs += first[old] < room
    for i in range(nq):
        graph[i] = renamed[graph[i]]
    for i in range(nd):
        subject[i] = renamed[subject[i]]
    return 0, nq, nd, lines, graphs, rests, high != 0, terms, codes, spans, hashes, rest_spans


@njit(cache=True, nogil=True)
def _encode(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary encoding of the byte strings from ``lo[i]`` to ``hi[i]``: each one's
    code (in order of first appearance) and each code's span of bytes (rows: start,
    end)."""
    n = lo.shape[0]
    size = 16
    while size < 2 * n:
        size *= 2
    table = np.full(size, -1, np.int32)
    hashes = np.empty(n, np.uint64)
    spans = np.empty((2, n), np.int64)
    codes = np.empty(n, np.int32)
    distinct = 0
    for i in range(n):
        same = recent_same(words, lo, hi, i, 2)
        if same >= 0:
            codes[i] = codes[same]
            continue
        code = _code(words, lo[i], hi[i] - lo[i], table, hashes, spans, distinct)
        distinct += code == distinct
        codes[i] = code
    return codes, spans[:, :distinct].copy()


def _matches(
    values: pa.Array, value_hashes: np.ndarray, among: pa.Array, among_hashes: np.ndarray
) -> np.ndarray:
    """The index of each of ``values`` in ``among`` (no repeats), -1 where absent: the
    candidates found by the hashes of their bytes, then their texts compared (by Arrow,
    for all of them if two of ``among`` share a hash)."""
    found = _same_hashes(value_hashes, among_hashes)
    if len(found) and found.min() < -1:
        return _positions(values, among)
    candidates = np.flatnonzero(found >= 0)
    if len(candidates):
        at = pa.array(candidates)
        same = pc.equal(values.take(at), among.take(pa.array(found[candidates])))
        found[candidates[~np.asarray(same.to_numpy(zero_copy_only=False), np.bool_)]] = -1
    return found


def _positions(values: pa.Array, among: pa.Array) -> np.ndarray:
    """The index of each of ``values`` in ``among`` (no repeats), -1 where absent."""
    found = pc.index_in(values, value_set=among).fill_null(-1)
    return np.asarray(found.to_numpy(zero_copy_only=False), np.int64)


@njit(cache=True, nogil=True)
def _same_hashes(values: np.ndarray, among: np.ndarray) -> np.ndarray:
    """The index of the one of ``among`` with each of ``values``' hash, -1 if none, -2
    everywhere if two of ``among`` share one."""
    size = 16
    while size < 2 * among.shape[0]:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)
    out = np.full(values.shape[0], -1, np.int64)
    for i in range(among.shape[0]):
        slot = among[i] & mask
        while table[slot] >= 0:
            if among[table[slot]] == among[i]:
                out[:] = -2
                return out
            slot = (slot + np.uint64(1)) & mask
        table[slot] = i
    for i in range(values.shape[0]):
        slot = values[i] & mask
        while table[slot] >= 0:
            if among[table[slot]] == values[i]:
                out[i] = table[slot]
                break
            slot = (slot + np.uint64(1)) & mask
    return out


def _text_hashes(texts: pa.Array) -> np.ndarray:
    """The hash of each text's bytes (``hash_bytes``, as ``_tokens`` gives its names')."""
    return _hashes(*text_bytes(texts))


@njit(cache=True, nogil=True)
def _hashes(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The hash of the bytes from ``lo[i]`` to ``hi[i]`` of ``words`` (``hash_bytes``)."""
    out = np.empty(lo.shape[0], np.uint64)
    for i in range(lo.shape[0]):
        out[i] = hash_bytes(words, lo[i], hi[i] - lo[i])
    return out


@njit(cache=True, nogil=True)
def _positions_in(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The position of each of ``values`` in ``keys`` (increasing), -1 where absent; by
    subtraction where the keys are consecutive (as the serials of a block mostly are)."""
    n = keys.shape[0]
    out = np.full(values.shape[0], -1, np.int64)
    if n == 0:
        return out
    if keys[n - 1] - keys[0] == n - 1:
        first = keys[0]
        for i in range(values.shape[0]):
            at = values[i] - first
            if 0 <= at < n:
                out[i] = at
        return out
    for i in range(values.shape[0]):
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < values[i]:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and keys[lo] == values[i]:
            out[i] = lo
    return out


@njit(cache=True, nogil=True)
def _rows_of(
    serial: np.ndarray,
    s: np.ndarray,
    p: np.ndarray,
    o: np.ndarray,
    good: np.ndarray,
    alive: np.ndarray,
) -> tuple[
    tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
]:
    """The rows (serial, s, p, o) of the events of serials ``good`` (increasing), in
    their order (the rows of one event as they come), as event position in ``good``, s,
    p, o; and the rows of serials ``alive`` (increasing), in order."""
    n = serial.shape[0]
    event = _positions_in(good, serial)
    keep = _positions_in(alive, serial) >= 0
    starts = np.zeros(good.shape[0] + 1, np.int64)
    kept = 0
    for i in range(n):
        if event[i] >= 0:
            starts[event[i] + 1] += 1
        kept += keep[i]
    for k in range(good.shape[0]):
        starts[k + 1] += starts[k]
    taken = starts[good.shape[0]]
    t_event = np.empty(taken, np.int32)
    t_s = np.empty(taken, np.int32)
    t_p = np.empty(taken, np.int32)
    t_o = np.empty(taken, np.int32)
    k_serial = np.empty(kept, np.int64)
    k_s = np.empty(kept, np.int32)
    k_p = np.empty(kept, np.int32)
    k_o = np.empty(kept, np.int32)
    j = 0
    for i in range(n):
        at = event[i]
        if at >= 0:
            to = starts[at]
            starts[at] += 1
            t_event[to] = at
            t_s[to] = s[i]
            t_p[to] = p[i]
            t_o[to] = o[i]
        if keep[i]:
            k_serial[j] = serial[i]
            k_s[j] = s[i]
            k_p[j] = p[i]
            k_o[j] = o[i]
            j += 1
    return (t_event, t_s, t_p, t_o), (k_serial, k_s, k_p, k_o)


_NO_TEXT = pa.array([], pa.string())
_NO_INTS = np.empty(0, np.int64)
_NO_HASHES = np.empty(0, np.uint64)


_DEPTHS = np.array([2, 8, 2], np.int64)
"""How far back a subject, predicate and object are compared before being looked up."""


class _Times(TimeOrder):
    """The time order check, its last times readable by the vectorised assembly."""

    @property
    def last(self) -> dict[str, int]:
        """The last good time of each stream so far."""
        return self._last


class _Statements:
    """Time and stream statements numbered, with what the columnar assembly reads of each:
    kind, time in ms (of a valid time), stream index (of an IRI). Shared by the part
    files of one read, as ``Texts`` is.

    The writers' time statements (``_TIME_TEXTS``: a ``prov`` time as an UTC
    ``xsd:dateTime`` or an ``xsd:integer``) are read from their bytes by a kernel, their
    ``Statement`` made only if the reader's own path needs it; any other line's ``"p o ."``
    text (an ``rsep:stream``, a zoned time) is parsed once by ``Texts.defaults`` and known
    by its text, and a statement of the reader's own path by itself. Emptied of the
    statements no event needs past ``CACHE_LIMIT``."""

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self.count = 0
        self.items: dict[int, Statement | None] = {}
        """The statements made, by number."""
        self.lazy: list[tuple[int, pa.Array]] = []
        """The ``"p o ."`` texts of the others (first number, texts), read when needed."""
        self.ids: dict[object, int] = {}
        self.kind = np.zeros(0, np.int8)
        self.ms = np.zeros(0, np.int64)
        self.timed = np.zeros(0, np.bool_)
        self.stream = np.zeros(0, np.int32)
        self.streams: list[str] = []
        self.stream_ids: dict[str, int] = {}

    def statement(self, number: int) -> Statement | None:
        """Statement ``number``."""
        if number not in self.items:
            at = bisect.bisect_right([first for first, _ in self.lazy], number) - 1
            first, texts = self.lazy[at]
            text = texts[number - first].as_py()
            found = self.texts.defaults([], [text])
            assert found is not None, text  # read from a canonical text
            self.items[number] = found[0]
        return self.items[number]

    def number(self, key: object, statement: Statement | None) -> int:
        """The number of ``statement``, known by ``key`` (add ``columns`` after)."""
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = self.count
            self.items[found] = statement
            self.count += 1
        return found

    def columns(self) -> None:
        """Fill ``kind``, ``ms``, ``timed`` and ``stream`` for the statements numbered since."""
        new = [self.items[number] for number in range(len(self.kind), self.count)]
        kind = np.zeros(len(new), np.int8)
        ms = np.zeros(len(new), np.int64)
        timed = np.zeros(len(new), np.bool_)
        iris: list[str | None] = [None] * len(new)
        opts = self.texts.opts
        for k, statement in enumerate(new):
            if statement is None:
                continue
            predicate, value, t, iris[k] = statement
            kind[k] = _KINDS[predicate]
            if kind[k] in (_STARTED, _ENDED):
                with contextlib.suppress(ValueError):
                    t = term_ms(value, opts.time_unit, opts.tz)
            if t is not None:
                ms[k], timed[k] = t, True
        self._append(kind, ms, timed, self._streams(iris))

    def numbers(self, rests: _Rests) -> np.ndarray | None:
        """The statement numbers of a block's distinct ``"p o ."`` texts (``_rests``);
        ``None`` if one is not canonical."""
        valid = rests.valid
        numbers = np.empty(len(valid), np.int32)
        if len(rests.timed):  # the writers' time statements, read from their bytes
            found = len(rests.timed)
            self.lazy.append((self.count, rests.timed))
            self._append(rests.kind[valid], rests.ms[valid], np.ones(found, np.bool_))
            numbers[valid] = np.arange(self.count, self.count + found)
            self.count += found
        if len(rests.others):
            texts = rests.others.to_pylist()
            known = self.ids
            missing = [text for text in texts if text not in known]
            if missing:
                parsed = self.texts.defaults([], missing)
                if parsed is None:
                    return None
                for text, statement in zip(missing, parsed, strict=True):
                    self.number(text, statement)
                self.columns()
            numbers[~valid] = [known[text] for text in texts]
        return numbers

    def _streams(self, iris: list[str | None]) -> np.ndarray:
        """The stream indices of IRIs (-1 for none)."""
        codes = np.full(len(iris), -1, np.int32)
        ids = self.stream_ids
        for k, iri in enumerate(iris):
            if iri is not None:
                code = ids.get(iri)
                if code is None:
                    code = ids[iri] = len(self.streams)
                    self.streams.append(iri)
                codes[k] = code
        return codes

    def _append(
        self,
        kind: np.ndarray,
        ms: np.ndarray,
        timed: np.ndarray,
        stream: np.ndarray | None = None,
    ) -> None:
        self.kind = np.concatenate([self.kind, kind])
        self.ms = np.concatenate([self.ms, ms])
        self.timed = np.concatenate([self.timed, timed])
        if stream is None:
            stream = np.full(len(kind), -1, np.int32)
        self.stream = np.concatenate([self.stream, stream])

    def compact(self, used: np.ndarray) -> np.ndarray:
        """Keep only the statements ``used``; returns their new numbers."""
        keep, new = np.unique(used, return_inverse=True)
        self.items = {k: self.statement(number) for k, number in enumerate(keep.tolist())}
        self.lazy, self.ids, self.count = [], {}, len(keep)
        self.kind, self.ms = self.kind[keep], self.ms[keep]
        self.timed, self.stream = self.timed[keep], self.stream[keep]
        return np.asarray(new, np.int32).reshape(used.shape)


_TIME_TEXTS = (
    f'<{PROV_GENERATED_AT.value}> "',
    f'<{PROV_STARTED_AT.value}> "',
    f'<{PROV_ENDED_AT.value}> "',
    f'"^^<{XSD}dateTime> .',
    f'"^^<{XSD}integer> .',
)
"""The writers' time statements: ``p "lexical"^^<type> .`` of a time predicate (kinds 1
to 3) and of ``xsd:dateTime`` or ``xsd:integer``."""
_TEXT_AT = np.cumsum([0] + [len(text) for text in _TIME_TEXTS]).astype(np.int64)
_TEXTS = np.frombuffer(
    "".join(_TIME_TEXTS).encode().ljust(8 * (int(_TEXT_AT[-1]) // 8 + 2), b"\0"), np.uint64
)


@njit(inline="always")
def _digits(buf: np.ndarray, at: int, n: int) -> int:
    """The decimal number of the ``n`` bytes from ``at``, -1 unless all are digits."""
    value = 0
    for k in range(n):
        digit = int(buf[at + k]) - 48
        if digit < 0 or digit > 9:
            return -1
        value = 10 * value + digit
    return value


@njit(cache=True, nogil=True)
def _times(
    words: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    texts: np.ndarray,
    at: np.ndarray,
    zoned: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Read the writers' time statements among default-graph lines' ``"p o ."`` texts
    (from ``lo[i]`` to ``hi[i]``; ``_TIME_TEXTS`` in ``texts`` from offsets ``at``): each
    one's kind (0: another text) and fields (year, month, day, hour, minute, second, ms,
    and for an ``xsd:integer`` the count, else -1). An ``xsd:dateTime`` has a four-digit
    year and ``Z`` (or no zone, unless ``zoned``)."""
    buf = words.view(np.uint8)
    n = lo.shape[0]
    kind = np.zeros(n, np.int8)
    fields = np.full((8, n), -1, np.int64)
    for i in range(n):
        a = lo[i]
        b = hi[i]
        which = -1
        c = a
        for k in range(3):
            size = at[k + 1] - at[k]
            if b - a > size and same_bytes(words, a, texts, at[k], size):
                which = k
                c = a + size
                break
        if which < 0:
            continue
        counted = at[5] - at[4]
        digits = b - counted - c
        if 1 <= digits <= 12 and same_bytes(words, b - counted, texts, at[4], counted):
            count = _digits(buf, c, digits)
            if count >= 0:
                kind[i] = which + 1
                fields[7, i] = count
            continue
        dated = at[4] - at[3]
        end = b - dated
        if end - c < 19 or not same_bytes(words, end, texts, at[3], dated):
            continue
        if buf[end - 1] == 90:  # Z
            end -= 1
        elif zoned:
            continue
        if (
            buf[c + 4] != 45
            or buf[c + 7] != 45
            or buf[c + 10] != 84
            or buf[c + 13] != 58
            or buf[c + 16] != 58
        ):
            continue
        fraction = 0
        if end > c + 19:
            if buf[c + 19] != 46 or end == c + 20 or _digits(buf, c + 20, end - c - 20) < 0:
                continue
            for k in range(3):
                fraction = 10 * fraction + (buf[c + 20 + k] - 48 if c + 20 + k < end else 0)
        fields[0, i] = _digits(buf, c, 4)
        fields[1, i] = _digits(buf, c + 5, 2)
        fields[2, i] = _digits(buf, c + 8, 2)
        fields[3, i] = _digits(buf, c + 11, 2)
        fields[4, i] = _digits(buf, c + 14, 2)
        fields[5, i] = _digits(buf, c + 17, 2)
        fields[6, i] = fraction
        if fields[:6, i].min() >= 0:
            kind[i] = which + 1
    return kind, fields


_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def _epoch_ms(
    y: np.ndarray,
    mo: np.ndarray,
    d: np.ndarray,
    h: np.ndarray,
    mi: np.ndarray,
    s: np.ndarray,
    milli: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Epoch ms of UTC dates and times given by their fields (as ``datetime_to_ms``), and
    whether each is a valid one (hour 24 is left to ``datetime_to_ms``)."""
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    month = np.clip(mo, 1, 12)
    valid = (y >= 1) & (mo >= 1) & (mo <= 12) & (d >= 1) & (h <= 23) & (mi <= 59) & (s <= 59)
    valid &= d <= _DAYS[month] + (leap & (month == 2))
    shifted = y - (month <= 2)  # days from civil (H. Hinnant)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + d - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days = era * 146_097 + day_of_era - 719_468
    return ((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + milli, valid


@dataclass
class _Rests:
    """A block's distinct default-graph ``"p o ."`` texts as ``_rests`` reads them: the
    writers' time statements (``valid``) with their kind and time in ms and their texts
    (``timed``), the texts of the others."""

    kind: np.ndarray
    ms: np.ndarray
    valid: np.ndarray
    timed: pa.Array
    others: pa.Array


def _rests(words: np.ndarray, lo: np.ndarray, hi: np.ndarray, opts: ReadOptions) -> _Rests:
    """The texts from ``lo[i]`` to ``hi[i]`` of a block read as ``_Rests``: a time without
    zone only when read in UTC (else ``datetime_to_ms`` reads it in ``opts.tz``)."""
    kind, fields = _times(words, lo, hi, _TEXTS, _TEXT_AT, opts.tz is not UTC)
    ms = np.where(fields[7] >= 0, fields[7] * opts.time_unit.value, 0)
    valid = kind > 0
    dated = valid & (fields[7] < 0)
    if dated.any():
        ms[dated], valid[dated] = _epoch_ms(*fields[:7, dated])
    timed = strings(words, lo[valid], hi[valid])
    others = strings(words, lo[~valid], hi[~valid])
    return _Rests(kind, ms, valid, timed, others)


@dataclass
class _Found:
    """A canonical block as columns: the s, p, o ids of its quad rows and each row's graph,
    the names it mentions (its ``graphs`` distinct graph texts first, in order of first
    appearance, then the other subjects of its default-graph lines) with the hashes of
    their bytes (``hash_bytes``), and its time and
    stream statements (the name each is about, statement number)."""

    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    graph_of: np.ndarray
    names: pa.Array
    hashes: np.ndarray
    graphs: int
    about: np.ndarray
    said: np.ndarray
    lines: int


class _Reading:
    """What the part files of one read share: texts and statements parsed once."""

    def __init__(self, texts: Texts, dictionary: TermDictionary) -> None:
        self.texts = texts
        self.dictionary = dictionary
        self.statements = _Statements(texts)


@dataclass
class _Tokens:
    """A canonical block as ``_tokens`` reads it: its quad lines' term offsets (rows: s,
    p, o starts and ends) and ids (-1: not in the index when it was read), each quad
    line's name code, each default-graph line's subject and rest codes, the names (the
    ``graphs`` first: texts, hashes of their bytes, whether each is plain, ``plain_names``),
    the rests read (``_rests``), and its lines."""

    terms: np.ndarray
    ids: np.ndarray
    graph: np.ndarray
    subject: np.ndarray
    rest: np.ndarray
    texts: pa.Array
    hashes: np.ndarray
    plain: np.ndarray
    graphs: int
    rests: _Rests
    lines: int


@dataclass
class _Segment:
    """Whole lines of a file as the reader's blocks cut them (the final one may lack its
    newline), in a buffer of words of their own, with their tokens if canonical."""

    words: np.ndarray
    """The bytes from 0, padded for the kernels' word reads."""
    size: int
    final: bool
    tokens: _Tokens | None = None
    error: InputError | None = None
    """A compressed file found corrupt here: nothing more is read."""

    @property
    def view(self) -> np.ndarray:
        """The bytes, as uint8."""
        return self.words.view(np.uint8)[: self.size]

    def data(self) -> bytes:
        return self.view.tobytes()


def _words(size: int) -> np.ndarray:
    """A buffer for ``size`` bytes and a newline, padded for word reads."""
    return np.empty(size // 8 + 3, np.uint64)


class _Tokenizer:
    """Reads segments in the reader thread: their tokens (``_tokens``), ids found in the
    term index under the dictionary's lock, names and rests read (all that needs no state
    of the read but the terms); remembers the last block's lines to size the next one's
    arrays."""

    def __init__(self, dictionary: TermDictionary, opts: ReadOptions) -> None:
        self.dictionary = dictionary
        self.opts = opts
        self.room = 1024
        self.slots = 1 << 12

    def tokens(self, segment: _Segment) -> _Tokens | None:
        """The tokens of ``segment``, ``None`` unless every line is canonical (as
        ``_split`` finds it) and the bytes are UTF-8."""
        words, n = segment.words, segment.size
        if segment.final and n:
            words.view(np.uint8)[n] = _NL
            n += 1
        if not n:
            return None
        room = self.room
        while True:
            out = _tokens(words, n, _BLANK, room, self.slots)
            if out[0] != -2:
                break
            room = n // 5 + 2  # a line of a kind has five bytes at least
        status, nq, nd, lines, graphs, rests, high, terms, codes, names, hashes, rest_spans = out
        if status < 0:
            return None
        terms = terms[:, :nq]
        ids = self.dictionary.find_bytes(words, terms[0:6:2], terms[1:6:2], _DEPTHS)
        if high:
            try:
                codecs.utf_8_decode(segment.view.data, "strict", True)
            except UnicodeDecodeError:
                return None
        self.room = lines + (lines >> 2) + 1024
        self.slots = _table_size(max(names.shape[1], rests))
        lo, hi = names
        rest_lo, rest_hi = rest_spans[:, :rests]
        return _Tokens(
            terms,
            ids,
            codes[0, :nq],
            codes[1, :nd],
            codes[2, :nd],
            strings(words, lo, hi),
            hashes,
            plain_names(words, lo, hi),
            graphs,
            _rests(words, rest_lo, rest_hi, self.opts),
            lines,
        )


class _Columns(_Assembly):
    """The N-Quads reader's assembly (:mod:`rsep.rdf.formats.nquads`) with the triples kept
    as id rows; canonical blocks read and assembled as columns (section comment), others
    by the reader's own path on its objects."""

    def __init__(self, file: Path, bad: BadRecords, reading: _Reading) -> None:
        super().__init__(file, reading.texts, bad)
        self.times: _Times = _Times()
        self.reading = reading
        self.dictionary = reading.dictionary
        self.statements = reading.statements
        self.serials: dict[str, int] = {}
        self.next_serial = 0
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.newlines: int | None = None
        self.views: dict[int, np.ndarray] = {}
        """The bytes of the blocks in ``kept``, by block (``hold``)."""
        # the columnar state (when ``columnar``; else in ``pending`` and ``meta``)
        self.columnar = True
        self.graphs = _NO_TEXT
        """The graphs of the events not yet complete, in order of first appearance."""
        self.graph_hashes = _NO_HASHES
        """The hashes of their bytes (``hash_bytes``)."""
        self.blocks = _NO_INTS
        self.numbers = _NO_INTS
        """Their serials (increasing), which number their rows in ``rows``."""
        self.held = _NO_INTS
        self.said = np.empty(0, np.int32)
        """Statements about pending events (as ``meta``): event serial, statement number."""
        self.loose = _NO_TEXT
        self.loose_said = np.empty(0, np.int32)
        """Statements about other names (as ``meta``): subject, statement number."""
        self.first_named = 0
        """The first pending event that the current block names (as ``touched``)."""
        self.mentioned = _NO_TEXT
        """The names the current block mentions (as ``touched``)."""
        self.owner: _Owner | None = None
        """Which events a byte range's read gives (section "Byte ranges"); all without."""

    def read(self, segment: _Segment, line: int, block: int, fast: bool) -> int:
        """Add the lines of ``segment``; returns the bytes used (as ``_read_block``), and
        ``newlines`` the newlines in them when known."""
        self.newlines = None
        if fast and segment.tokens is not None:
            found = self._analyse(segment.words, segment.tokens)
            if found is not None and self._to_columns():
                self._add(found, block)
                self.newlines = found.lines
                return segment.size
        self._to_objects()
        return _read_block(self, self.texts, segment.data(), line, block, segment.final, fast)

    def hold(self, block: int, view: np.ndarray, first_line: int) -> None:
        """Keep a block's bytes (``keep``), as they are: made ``bytes`` only when an
        error's line is looked for in them (``_line``)."""
        self.keep(block, b"", first_line)
        self.views[block] = view
        oldest = self.kept[0][0]
        for old in [old for old in self.views if old < oldest]:
            del self.views[old]

    def _line(self, name: EventId) -> int | None:
        views = self.views
        self.kept = deque((b, bytes(views.pop(b)) if b in views else d, n) for b, d, n in self.kept)
        return super()._line(name)

    def complete(self, final: bool) -> _Piece | None:
        """The events complete after the current block, as ``_Assembly.close`` finds them
        (errors reported there), with their triples."""
        if self.columnar:
            return self._close_columns(final)
        if self.owner is not None:  # other ranges' events go unread
            graphs = list(self.pending)
            blocks = np.array([block for _, _, block in self.pending.values()], np.int64)
            for graph, owned in zip(graphs, self.owner.owns(blocks, graphs).tolist(), strict=True):
                if not owned:
                    self.dropped.add(graph)
        events = self.close(final)
        serials = self.serials
        good = np.array([serials[str(event.id)] for event in events], np.int64)
        for graph in [graph for graph in serials if graph not in self.pending]:
            del serials[graph]
        alive = np.sort(np.fromiter(serials.values(), np.int64, len(serials)))
        return self._piece(alive, good, events)

    def owes(self) -> bool:
        """Whether an event this read gives is not complete yet."""
        if self.owner is None:
            return bool(len(self.blocks) if self.columnar else self.pending)
        if self.columnar:
            owned = self.owner.owns(self.blocks, self.graphs.to_pylist)
        else:
            graphs = list(self.pending)
            blocks = np.array([block for _, _, block in self.pending.values()], np.int64)
            owned = self.owner.owns(blocks, graphs)
        return bool(owned.any())

    # ----------------------------------------------------------- the reader's own path

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

    def _to_objects(self) -> None:
        """Turn the columnar state into the reader's ``pending`` and ``meta`` (between
        blocks)."""
        if not self.columnar:
            return
        graphs = self.graphs.to_pylist()
        self.pending = {
            graph: (self._name(graph), [], block)
            for graph, block in zip(graphs, self.blocks.tolist(), strict=True)
        }
        self.serials = dict(zip(graphs, self.numbers.tolist(), strict=True))
        owners = np.searchsorted(self.numbers, self.held).tolist()
        subjects = [graphs[owner] for owner in owners] + self.loose.to_pylist()
        self.meta = self._meta(subjects, np.concatenate([self.said, self.loose_said]))
        self.graphs = self.loose = _NO_TEXT
        self.graph_hashes = _NO_HASHES
        self.blocks = self.numbers = self.held = _NO_INTS
        self.said = self.loose_said = np.empty(0, np.int32)
        self.columnar = False

    def _to_columns(self) -> bool:
        """Turn ``pending`` and ``meta`` into the columnar state (between blocks); ``False``
        if an event's name is not the one its text gives back."""
        if self.columnar:
            return True
        pending = self.pending
        if any(self.texts.name(graph) != name for graph, (name, _, _) in pending.items()):
            return False
        numbers = np.array([self.serials[graph] for graph in pending], np.int64)
        if np.any(np.diff(numbers) <= 0):
            return False
        table = self.statements
        held: list[int] = []
        said: list[int] = []
        loose: list[str] = []
        loose_said: list[int] = []
        for subject, statements in self.meta.items():
            serial = self.serials.get(subject) if subject in pending else None
            for statement in statements:
                number = table.number(statement, statement)
                if serial is None:
                    loose.append(subject)
                    loose_said.append(number)
                else:
                    held.append(serial)
                    said.append(number)
        table.columns()
        self.graphs = pa.array(list(pending), pa.string())
        self.graph_hashes = _text_hashes(self.graphs)
        self.blocks = np.array([block for _, _, block in pending.values()], np.int64)
        self.numbers = numbers
        self.held = np.array(held, np.int64)
        self.said = np.array(said, np.int32)
        self.loose = pa.array(loose, pa.string())
        self.loose_said = np.array(loose_said, np.int32)
        self.first_named = len(pending)
        self.pending, self.meta, self.serials = {}, {}, {}
        self.columnar = True
        return True

    def _name(self, graph: str) -> EventId:
        name = self.texts.name(graph)
        assert name is not None, graph  # checked when the graph was read
        return name

    def _meta(self, subjects: list[str], said: np.ndarray) -> dict[str, list[Statement]]:
        """Statements as ``_Assembly.meta`` holds them."""
        meta: dict[str, list[Statement]] = {}
        statement_of = self.statements.statement
        for subject, number in zip(subjects, said.tolist(), strict=True):
            statement = statement_of(number)
            assert statement is not None
            meta.setdefault(subject, []).append(statement)
        return meta

    # ----------------------------------------------------------- the columnar path

    def _analyse(self, words: np.ndarray, tokens: _Tokens) -> _Found | None:
        """A canonical block's tokens (``_Tokenizer``) as columns, or ``None`` unless its
        terms read back as their text and its names and statements are valid."""
        terms = self._terms(words, tokens)
        if terms is None:
            return None
        names = tokens.texts
        if not self._names(names, tokens.plain):
            return None
        numbers = self._numbers(tokens.rests)
        if numbers is None:
            return None
        said = numbers[tokens.rest]
        useful = self.statements.kind[said] > 0
        about = tokens.subject[useful]
        s, p, o = terms
        graph, hashes, graphs, lines = tokens.graph, tokens.hashes, tokens.graphs, tokens.lines
        return _Found(s, p, o, graph, names, hashes, graphs, about, said[useful], lines)

    def _terms(
        self, words: np.ndarray, tokens: _Tokens
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The s, p, o ids of quad rows: those the tokenizer found, the others encoded once
        per distinct text; ``None`` if one is not the canonical text of a term, or a
        subject is a literal, or a predicate not an IRI."""
        dictionary = self.dictionary
        ids = tokens.ids
        missing = np.nonzero(ids < 0)
        if len(missing[0]):
            lo = tokens.terms[2 * missing[0], missing[1]]
            hi = tokens.terms[2 * missing[0] + 1, missing[1]]
            codes, spans = _encode(words, lo, hi)
            distinct = strings(words, spans[0], spans[1])
            try:
                found = dictionary.encode(distinct)
            except ValueError:
                return None
            if not dictionary.text_array(found).equals(distinct):
                return None  # a spelling other than the canonical one
            ids[missing] = found[codes]
        s, p, o = ids
        kinds = dictionary.values.kind
        subject_kinds = kinds[s]
        if not np.all((subject_kinds == KIND_IRI) | (subject_kinds == KIND_BLANK)):
            return None
        if not np.all(kinds[p] == KIND_IRI):
            return None
        return s, p, o

    def _names(self, texts: pa.Array, plain: np.ndarray) -> bool:
        """Whether each name ``texts`` is a graph name (``Texts.name``): the ``plain`` ones
        are (``plain_names``), the others are asked."""
        if plain.all():
            return True
        others = texts.filter(pa.array(~plain)).to_pylist()
        return all(self.texts.name(text) is not None for text in others)

    def _numbers(self, rests: _Rests) -> np.ndarray | None:
        """The statement numbers of a block's distinct ``"p o ."`` texts
        (``_Statements.numbers``), once the statements no event needs are forgotten."""
        table = self.statements
        if table.count > CACHE_LIMIT and self.columnar:
            new = table.compact(np.concatenate([self.said, self.loose_said]))
            self.said, self.loose_said = new[: len(self.said)], new[len(self.said) :]
        return table.numbers(rests)

    def _add(self, found: _Found, block: int) -> None:
        """Add what a canonical block holds (as ``_Assembly.canonical``)."""
        names = found.names
        old = len(self.graphs)
        where = _matches(names, found.hashes, self.graphs, self.graph_hashes)
        named = where >= 0
        self.first_named = int(where[named].min()) if named.any() else old
        fresh = np.zeros(len(names), np.bool_)
        fresh[: found.graphs] = ~named[: found.graphs]
        count = int(fresh.sum())
        serial = np.full(len(names), -1, np.int64)
        serial[named] = self.numbers[where[named]]
        serial[fresh] = np.arange(self.next_serial, self.next_serial + count)
        self.next_serial += count
        if count:
            self.graphs = pa.concat_arrays([self.graphs, names.filter(pa.array(fresh))])
            self.graph_hashes = np.concatenate([self.graph_hashes, found.hashes[fresh]])
            self.blocks = np.concatenate([self.blocks, np.full(count, block, np.int64)])
            self.numbers = np.concatenate([self.numbers, serial[fresh]])
        if len(found.graph_of):
            self.rows.append((serial[found.graph_of], found.s, found.p, found.o))
        held, said = [self.held], [self.said]
        if len(self.loose):  # statements before their graph: now about an event, or kept
            # while named, as ``_prune`` keeps them
            at = _matches(self.loose, _text_hashes(self.loose), names, found.hashes)
            owner = np.full(len(at), -1, np.int64)
            owner[at >= 0] = serial[at[at >= 0]]
            held.append(owner[owner >= 0])
            said.append(self.loose_said[owner >= 0])
            keep = (at >= 0) & (owner < 0)
            self.loose = self.loose.filter(pa.array(keep))
            self.loose_said = self.loose_said[keep]
        owner = serial[found.about]
        about = owner >= 0
        held.append(owner[about])
        said.append(found.said[about])
        self.held, self.said = np.concatenate(held), np.concatenate(said)
        if not about.all():
            others = names.take(pa.array(found.about[~about]))
            self.loose = pa.concat_arrays([self.loose, others])
            self.loose_said = np.concatenate([self.loose_said, found.said[~about]])
        self.mentioned = names

    def _close_columns(self, final: bool) -> _Piece | None:
        """``_Assembly.close`` on the columnar state: the events before the first one the
        block names (all if ``final``), then forget what no event to come needs."""
        graphs, numbers = self.graphs, self.numbers
        n = len(graphs)
        done = n if final else min(self.first_named, n)
        piece = None
        if done:
            cut = numbers[done] if done < n else np.iinfo(np.int64).max
            mine = self.held < cut
            event = np.searchsorted(numbers[:done], self.held[mine])
            said = self.said[mine]
            closed = graphs.slice(0, done)
            blocks = self.blocks[:done]
            owned = np.ones(done, np.bool_)
            if self.owner is not None:
                owned = self.owner.owns(blocks, closed.to_pylist)
            if not owned.all():  # a byte range's read: other ranges' events go unread
                keep = owned[event]
                event = (np.cumsum(owned) - 1)[event[keep]]
                said = said[keep]
                closed = closed.filter(pa.array(owned))
                blocks = blocks[owned]
            closed_numbers = numbers[:done][owned]
            piece = self._events(closed, event, said, closed_numbers, numbers[done:], blocks)
            self.held, self.said = self.held[~mine], self.said[~mine]
        if not final:
            if self.dropped:
                alive = pa.concat_arrays([graphs.slice(done), self.mentioned])
                dropped = pa.array(sorted(self.dropped), pa.string())
                self.dropped = set(dropped.filter(pc.is_in(dropped, value_set=alive)).to_pylist())
            oldest = int(self.blocks[done]) if done < n else self.kept[-1][0] + 1
            while self.kept and self.kept[0][0] < oldest - 1:
                self.kept.popleft()
        self.graphs = graphs.slice(done)
        self.graph_hashes = self.graph_hashes[done:]
        self.blocks = self.blocks[done:]
        self.numbers = numbers[done:]
        self.first_named = len(self.graphs)
        self.mentioned = _NO_TEXT
        return piece

    def _events(
        self,
        closed: pa.Array,
        event: np.ndarray,
        said: np.ndarray,
        numbers: np.ndarray,
        alive: np.ndarray,
        blocks: np.ndarray,
    ) -> _Piece | None:
        """The events of graphs ``closed`` (serials ``numbers``, first blocks ``blocks``),
        with their statements (``event``, ``said``): each read at once when its statements
        are one valid time and (without ``stream=``) one stream IRI, its time in order and
        no bad line names it; else all through ``_Assembly.close``. The rows of serials
        ``alive`` are kept."""
        f = len(closed)
        table = self.statements
        kind = table.kind[said].astype(np.int64)
        counts = np.bincount(event * 5 + kind, minlength=5 * f).reshape(f, 5)
        times = np.zeros((5, f), np.int64)
        valid = np.zeros((5, f), np.bool_)
        times[kind, event] = table.ms[said]
        valid[kind, event] = table.timed[said]
        point = (counts[:, _GENERATED] == 1) & (counts[:, _STARTED] == 0) & valid[_GENERATED]
        point &= counts[:, _ENDED] == 0
        interval = (counts[:, _GENERATED] == 0) & (counts[:, _STARTED] == 1) & valid[_STARTED]
        interval &= (counts[:, _ENDED] == 1) & valid[_ENDED] & (times[_ENDED] >= times[_STARTED])
        start = np.where(point, times[_GENERATED], times[_STARTED])
        end = np.where(point, times[_GENERATED], times[_ENDED])
        good = point | interval
        stream = self.texts.opts.stream
        if stream is None:
            names = list(table.streams)
            codes = np.full(f, -1, np.int32)
            stated = kind == _STREAM
            codes[event[stated]] = table.stream[said[stated]]
            good &= (counts[:, _STREAM] == 1) & (codes >= 0)
        else:
            names = [stream]
            codes = np.zeros(f, np.int32)
        if self.dropped:
            dropped = pa.array(list(self.dropped), pa.string())
            good &= ~np.asarray(pc.is_in(closed, value_set=dropped).to_numpy(zero_copy_only=False))
        if good.all() and self._in_order(names, codes, start):
            return self._piece(alive, numbers, None, names, codes, start, end)
        # the reader's own close, on these events alone
        graphs = closed.to_pylist()
        self.pending = {
            graph: (self._name(graph), [], block)
            for graph, block in zip(graphs, blocks.tolist(), strict=True)
        }
        self.meta = self._meta([graphs[e] for e in event.tolist()], said)
        events = self.close(True)
        serial = dict(zip(graphs, numbers.tolist(), strict=True))
        good_numbers = np.array([serial[str(e.id)] for e in events], np.int64)
        return self._piece(alive, good_numbers, events)

    def _in_order(self, names: list[str], codes: np.ndarray, start: np.ndarray) -> bool:
        """Whether the events' times go forward in each stream (``TimeOrder``), then
        remember their last times."""
        last = self.times.last
        latest: dict[str, int] = {}
        for code in np.unique(codes).tolist():
            t = start[codes == code]
            before = last.get(names[code])
            running = np.maximum.accumulate(t)
            if (before is not None and t[0] < before) or np.any(t[1:] < running[:-1]):
                return False
            latest[names[code]] = int(running[-1])
        last.update(latest)
        return True

    def _piece(
        self,
        alive: np.ndarray,
        good: np.ndarray,
        events: list[Event] | None,
        names: list[str] | None = None,
        codes: np.ndarray | None = None,
        start: np.ndarray | None = None,
        end: np.ndarray | None = None,
    ) -> _Piece | None:
        """The events of serials ``good`` (increasing), from ``events`` or the columns
        given, with their rows; the rows of serials ``alive`` (increasing) are kept for
        the events still to come, the others dropped."""
        rows = self.rows
        if not rows:
            rows = [(_NO_INTS,) + (np.empty(0, np.int32),) * 3]
        row_serial, s, p, o = (np.concatenate(column) for column in zip(*rows, strict=True))
        taken, kept = _rows_of(row_serial, s, p, o, good, alive)
        self.rows = [kept] if len(kept[0]) else []
        if not len(good):
            return None
        if events is not None:
            names = [event.stream for event in events]
            start = np.array([event.t_start for event in events], np.int64)
            end = np.array([event.t_end for event in events], np.int64)
        assert names is not None and start is not None and end is not None
        return _Piece(names, start, end, *taken, codes)


def _nquads_pieces(
    path: Path,
    opts: ReadOptions,
    bad: BadRecords,
    dictionary: TermDictionary,
    span: _Span | None = None,
) -> Iterator[_Piece]:
    """The events of an N-Quads file or folder of parts, block by block as
    ``rsep.rdf.formats.nquads.read_nquads`` reads them (of a byte range's blocks only,
    with ``span``)."""
    reading = _Reading(Texts(opts), dictionary)
    for file in [path] if span is not None else part_files(path):
        yield from _file_pieces(file, bad, reading, span)


def _segments(
    file: Path, span: _Span | None, dictionary: TermDictionary, opts: ReadOptions
) -> Iterator[_Segment]:
    """The whole lines of an N-Quads file (of ``span``'s read) as the reader's blocks cut
    them (a chunk of ``BLOCK_BYTES``, the lines before it not yet read first, cut after
    its last newline), each read into a buffer of its own and tokenized; the rest of the
    file last, as the final segment (maybe empty). Blocks are tokenized by ``_TOKENIZERS``
    threads while the next ones are read (the kernels release the GIL), given in order."""
    tokenizers = [_Tokenizer(dictionary, opts) for _ in range(_TOKENIZERS)]
    flight: deque[tuple[_Segment, Future[_Tokens | None]]] = deque()
    with ThreadPoolExecutor(_TOKENIZERS, thread_name_prefix="rsep-tokens") as pool:

        def start(segment: _Segment, turn: int) -> Iterator[_Segment]:
            while len(flight) >= _TOKENIZERS:  # a tokenizer each, in turn
                yield _tokenized(*flight.popleft())
            flight.append((segment, pool.submit(tokenizers[turn % _TOKENIZERS].tokens, segment)))

        tail = np.empty(0, np.uint8)
        turn = 0
        with _Source(file, span) as source:
            while True:
                try:
                    words, got = source.read(tail)
                except InputError as exc:
                    while flight:
                        yield _tokenized(*flight.popleft())
                    yield _Segment(_words(0), 0, True, error=exc)
                    return
                if not got:
                    break
                buf = words.view(np.uint8)
                size = len(tail) + got
                cut = _after_newline(buf, len(tail), size)
                tail = buf[cut:size].copy()
                if cut:
                    yield from start(_Segment(words, cut, False), turn)
                    turn += 1
        words = _words(len(tail))
        words.view(np.uint8)[: len(tail)] = tail
        yield from start(_Segment(words, len(tail), True), turn)
        while flight:
            yield _tokenized(*flight.popleft())


_TOKENIZERS = 2
"""Threads tokenizing an N-Quads file's blocks (``_segments``)."""


def _tokenized(segment: _Segment, tokens: Future[_Tokens | None]) -> _Segment:
    segment.tokens = tokens.result()
    return segment


class _Source:
    """The bytes of an N-Quads file in the chunks of ``read_chunks`` (``BLOCK_BYTES``
    each; in a span's read from ``span.begin``, the first up to ``span.first_end``), each
    put in a new buffer after the lines not yet cut: an uncompressed file's read straight
    into it, a compressed one's decompressed by ``read_chunks`` and copied."""

    def __init__(self, file: Path, span: _Span | None) -> None:
        self.file = file
        try:
            self.raw = file.open("rb", buffering=0)
        except OSError as exc:
            raise UserError(f"{file}: cannot read: {exc.strerror or exc}") from exc
        self.pieces: Iterator[bytes] | None = None
        if _compressed(self.raw.read(6)):
            self.pieces = read_chunks(file, nquads.BLOCK_BYTES)
        self.raw.seek(0 if span is None else span.begin)
        self.size = nquads.BLOCK_BYTES if span is None else span.first_end - span.begin

    def __enter__(self) -> _Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.raw.close()

    def read(self, tail: np.ndarray) -> tuple[np.ndarray, int]:
        """A new buffer holding ``tail`` and the next chunk, and the chunk's bytes (0 at
        the end); an ``InputError`` where a compressed file turns out corrupt."""
        if self.pieces is not None:
            piece = next(self.pieces, b"")
            words = _words(len(tail) + len(piece))
            buf = words.view(np.uint8)
            buf[: len(tail)] = tail
            buf[len(tail) : len(tail) + len(piece)] = np.frombuffer(piece, np.uint8)
            return words, len(piece)
        size, self.size = self.size, nquads.BLOCK_BYTES
        words = _words(len(tail) + size)
        buf = words.view(np.uint8)
        buf[: len(tail)] = tail
        view = buf.data[len(tail) : len(tail) + size]
        got = 0
        try:
            while got < size:
                more = self.raw.readinto(view[got:])
                if not more:
                    break
                got += more
        except OSError as exc:
            raise UserError(f"{self.file}: cannot read: {exc.strerror or exc}") from exc
        return words, got


@njit(cache=True, nogil=True)
def _after_newline(buf: np.ndarray, lo: int, hi: int) -> int:
    """The offset after the last newline of ``buf[lo:hi]``, 0 if none."""
    k = hi
    while k > lo:
        if buf[k - 1] == _NL:
            return k
        k -= 1
    return 0


def _file_pieces(
    file: Path, bad: BadRecords, reading: _Reading, span: _Span | None
) -> Iterator[_Piece]:
    """The events of one N-Quads file (of the range ``span`` only): its segments read and
    tokenized by a thread of their own (``_segments``), assembled here."""
    reports = bad if span is None else _RangeReports(bad, span)
    ranged = reports if isinstance(reports, _RangeReports) else None
    assembly = _Columns(file, reports, reading)
    owner = None if span is None else _Owner(span)
    assembly.owner = owner
    line = 1
    block = 0
    held = b""  # lines not used: a bad line waits for the lines after it
    at = 0 if span is None else span.begin  # the offset of the first byte not used
    for segment in _ahead(_segments(file, span, reading.dictionary, reading.texts.opts)):
        if segment.error is not None:
            bad.report(segment.error.file, segment.error.line, segment.error.reason)
            return
        fast = not held
        if held:
            data = held + segment.data()
            words = _words(len(data))
            words.view(np.uint8)[: len(data)] = np.frombuffer(data, np.uint8)
            segment = _Segment(words, len(data), segment.final)
        if segment.final:
            if segment.size:
                if ranged is not None:
                    ranged.reading(segment.view, at, line)
                assembly.read(segment, line, block, fast)
                assembly.hold(block, segment.view, line)
                if owner is not None:
                    owner.block(segment.view, at)
            if ranged is not None:
                ranged.done()
            piece = assembly.complete(True)
            if piece is not None:
                yield piece
            return
        if ranged is not None:
            ranged.reading(segment.view, at, line)
        used = assembly.read(segment, line, block, fast)
        held = segment.view[used:].tobytes() if used < segment.size else b""
        if used:
            view = segment.view[:used]
            assembly.hold(block, view, line)
            if owner is not None:
                owner.block(view, at)
            newlines = assembly.newlines
            line += int(np.count_nonzero(view == _NL)) if newlines is None else newlines
            at += used
            if ranged is not None:
                ranged.done()
            piece = assembly.complete(False)
            if piece is not None:
                yield piece
            block += 1
            if span is not None and at >= span.hi and not assembly.owes():
                return


# --------------------------------------------------------------------------- byte ranges
#
# A large N-Quads file is read by parallel tasks, each given a byte range. The reader
# (``rsep.rdf.formats.nquads``) assembles events by blocks: the whole file's blocks start
# after the last newline before each multiple of ``BLOCK_BYTES`` (the "places" here; 0
# first), except where a bad line waits for the lines after it, and an event is complete
# once a whole block has gone by without naming it. A range gives the events whose graph's
# first line lies between the first place at or after its start (``lo``) and the first at
# or after its end (``hi``), and the bad lines there: places are the same in every read,
# so each event and each bad line of the file belongs to exactly one range of a partition.
# A block of a range's read lies between two places unless a bad line made it wait (it is
# read by pyoxigraph then); only such a block that holds ``lo`` or ``hi`` has the graphs
# before them found by parsing its part before them. The read begins two places before
# ``lo`` (an event's statements may come before its graph) and goes on past ``hi`` until
# its events are complete, so they keep every line. Its events are those of the whole
# file's read wherever the reader's own condition holds (an event's lines lie within
# ``BLOCK_BYTES``). Time order is checked among them (``TimeOrder`` holds the past of one
# read: the first event of each stream is not checked against earlier ranges'). Line
# numbers are true ones, the newlines before the read counted when a record is reported.


@dataclass(frozen=True)
class _Span:
    """A byte range of an N-Quads file: the places ``lo`` and ``hi`` of its events (see
    above), where its read begins (``begin``, a place) and the end of the whole read's
    chunk after it (``first_end``)."""

    lo: int
    hi: int
    begin: int
    first_end: int

    @classmethod
    def of(cls, path: Path, start: int, stop: int) -> _Span:
        """The span of ``[start, stop)`` in the uncompressed N-Quads file ``path``."""
        if not 0 <= start <= stop:
            raise UserError(f"byte_range must be 0 <= start <= stop, got ({start}, {stop})")
        if not path.is_file():
            raise UserError(f"byte_range is for one N-Quads file; {path} is not one")
        size = path.stat().st_size
        block = nquads.BLOCK_BYTES
        with path.open("rb") as raw:
            if _compressed(raw.read(6)):
                raise UserError(f"{path}: byte_range needs an uncompressed file")
            lo = _place(raw, start, size)
            first = max(0, -(-lo // block) - 2)
            begin = _block_start(raw, min(first * block, size))
            hi = _place(raw, stop, size)
        return cls(lo, hi, begin, min((first + 1) * block, size))

    def lines_before(self, path: Path) -> int:
        """The newlines before ``begin``."""
        count = 0
        with path.open("rb") as raw:
            left = self.begin
            while left:
                piece = raw.read(min(left, 16 << 20))
                count += piece.count(b"\n")
                left -= len(piece)
        return count


def _compressed(magic: bytes) -> bool:
    """Whether a file starting with ``magic`` is gzip or xz (as ``read_chunks`` finds)."""
    return magic[:2] == b"\x1f\x8b" or magic == b"\xfd7zXZ\x00"


def _block_start(raw: BinaryIO, end: int) -> int:
    """The offset after the last newline before ``end`` (0 if none): the place after the
    whole read's chunk ending at ``end``."""
    at = end
    while at > 0:
        step = min(at, 1 << 16)
        raw.seek(at - step)
        found = raw.read(step).rfind(b"\n")
        if found >= 0:
            return at - step + found + 1
        at -= step
    return 0


def _place(raw: BinaryIO, offset: int, size: int) -> int:
    """The first place at or after ``offset`` (``size`` if none)."""
    if offset <= 0:
        return 0
    block = nquads.BLOCK_BYTES
    m = -(-offset // block)
    while True:
        end = min(m * block, size)
        found = _block_start(raw, end)
        if found >= offset:
            return min(found, size)
        if end == size:
            return size
        m += 1


class _Owner:
    """Which events a range's read gives, by the block where their graph first appears:
    all or none of a block that does not hold a place ``lo`` or ``hi`` strictly inside,
    else those whose graph's first line lies in ``[lo, hi)``."""

    def __init__(self, span: _Span) -> None:
        self.lo, self.hi = span.lo, span.hi
        self.whole: list[int] = []
        """By block number: 1 if its events are the range's, 0 if not, 2 see ``split``."""
        self.split: dict[int, tuple[set[str] | None, set[str] | None]] = {}
        """By block number: the graphs named before ``lo`` and before ``hi`` in it."""

    def block(self, data: np.ndarray, at: int) -> None:
        """Note the next block of the read: ``data`` (uint8), at offset ``at``."""
        end = at + len(data)
        lo, hi = self.lo, self.hi
        if end <= lo or at >= hi:
            self.whole.append(0)
        elif lo <= at and end <= hi:
            self.whole.append(1)
        else:
            before_lo = _graphs_in(data[: lo - at].tobytes()) if at < lo else None
            before_hi = _graphs_in(data[: hi - at].tobytes()) if hi < end else None
            self.split[len(self.whole)] = (before_lo, before_hi)
            self.whole.append(2)

    def owns(self, blocks: np.ndarray, graphs: list[str] | Callable[[], list[str]]) -> np.ndarray:
        """Whether the events of ``graphs`` that first appear in ``blocks`` are the
        range's."""
        status = np.array(self.whole, np.int8)[blocks]
        owned: np.ndarray = status == 1
        split = np.flatnonzero(status == 2).tolist()
        if split:
            texts = graphs() if callable(graphs) else graphs
            for k in split:
                before_lo, before_hi = self.split[int(blocks[k])]
                graph = texts[k]
                owned[k] = (before_lo is None or graph not in before_lo) and (
                    before_hi is None or graph in before_hi
                )
        return owned


def _graphs_in(data: bytes) -> set[str]:
    """The texts of the graph names of the quads of ``data`` (bad lines skipped)."""
    graphs: set[str] = set()
    for piece in parse_resilient(data, RdfFormat.N_QUADS, resync=statement_line):
        for quad in piece.quads or ():
            if isinstance(quad.graph_name, NamedNode | BlankNode):
                graphs.add(str(quad.graph_name))
    return graphs


class _RangeReports(BadRecords):
    """The bad records of a range's read, given to ``target``: of the lines read, only
    those between the places ``lo`` and ``hi``; line numbers counted from the read's
    beginning made true."""

    def __init__(self, target: BadRecords, span: _Span) -> None:
        super().__init__(target.policy)
        self.target = target
        self.span = span
        self.lines: list[int | None] = [None, None]
        """The lines (counted from the read's beginning) at ``lo`` and ``hi``, once met."""
        self.filtering = False
        self._offset: int | None = None

    def reading(self, data: np.ndarray, at: int, line: int) -> None:
        """Lines from ``line`` (``data``, uint8, at offset ``at``) are read: filter their
        reports."""
        for k, place in enumerate((self.span.lo, self.span.hi)):
            if self.lines[k] is None and place < at + len(data):
                before = data[: max(0, place - at)]
                self.lines[k] = line + int(np.count_nonzero(before == _NL))
        self.filtering = True

    def done(self) -> None:
        """Reports come from events closing now: all are the range's."""
        self.filtering = False

    def report(self, file: str | Path, line: int | None, reason: str, record: str = "") -> None:
        if self.filtering and line is not None:
            lo, hi = self.lines
            if lo is None or line < lo or (hi is not None and line >= hi):
                return
        if line is not None:
            if self._offset is None:
                self._offset = self.span.lines_before(Path(file))
            line += self._offset
        self.target.report(file, line, reason, record)


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """At most ``parts`` byte ranges of about equal size that cover the file ``path``,
    cut at multiples of ``nquads.BLOCK_BYTES`` (so each holds a block start), for
    :func:`read_batches`'s ``byte_range``; one range for a file smaller than a block."""
    if parts < 1:
        raise UserError(f"parts must be positive, got {parts}")
    size = Path(path).stat().st_size
    block = nquads.BLOCK_BYTES
    blocks = -(-size // block)
    cuts = sorted({min(size, round(k * blocks / parts) * block) for k in range(parts + 1)})
    cuts[0], cuts[-1] = 0, size
    ranges = [(a, b) for a, b in pairwise(cuts) if b > a]
    return ranges or [(0, size)]
