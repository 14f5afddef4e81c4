"""The registry behind ``rsep serve``: named streams, continuous queries of any dialect
over them (each an :class:`rsep.Incremental`), their recent events and answers, counters,
and the state kept under ``--state`` so that a restart continues.

A body pushed to a stream is parsed once into a table of triples (:func:`rsep.read_table`,
the columnar readers), late events are set aside, and every query is fed the same push:
encoded once into batches of the one term dictionary all queries share, which the columnar
engine takes as they are; the other evaluators take its events, made once per push. One
clock holds for all streams, as the engine's time order does (RSP-QL Def. 24: the answers
at ``t`` read every event up to ``t``): an event before the latest pushed one, or at or
before the watermark, is late.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import pickle
import re
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rsep.api import Incremental, Query, read_table
from rsep.errors import InputError, UserError
from rsep.rdf.results import Result, json_line
from rsep.serve.settings import Settings

if TYPE_CHECKING:
    import pyarrow as pa

    from rsep.engine.batch import TripleBatch
    from rsep.engine.terms import TermDictionary
    from rsep.rdf.event import Event
    from rsep.serve.sources import KafkaReader

FORMATS = {"nquads": ".nq", "trig": ".trig", "jsonld": ".jsonld", "tnt": ".tnt"}
"""The stream formats a body is pushed in, by name, with the suffix the readers know them
by (:func:`rsep.rdf.formats.detect_format`)."""

MEDIA_TYPES = {
    "application/n-quads": "nquads",
    "application/trig": "trig",
    "application/ld+json": "jsonld",
    "application/json": "jsonld",
    "text/plain": "tnt",
    "application/x-timestamped-n-triples": "tnt",
}
"""The format of a pushed body by its Content-Type (timestamped N-Triples as plain text)."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A stream's or a query's name: it appears in URLs and file names."""

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)
"""Upper bounds (seconds) of the per-query latency histogram in ``/metrics``."""


class RequestError(UserError):
    """A request the service refuses: an HTTP status (4xx) and a message saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def format_of(media_type: str | None) -> str:
    """The stream format of a body of Content-Type ``media_type`` (parameters ignored)."""
    kind = (media_type or "").split(";")[0].strip().lower()
    found = MEDIA_TYPES.get(kind)
    if found is None:
        known = ", ".join(MEDIA_TYPES)
        raise RequestError(415, f"cannot read a body of Content-Type {kind or 'none'}: {known}")
    return found


def parse_body(body: bytes, fmt: str, iri: str, terms: TermDictionary) -> pa.Table:
    """The events of ``body`` (stream format ``fmt``) on stream ``iri``, as a table of
    triples in time order (:func:`rsep.read_table`, encoding with the service's ``terms``:
    a term met in an earlier push is not parsed and typed again); a bad record is a 400
    naming its line and reason."""
    from rsep.spark.job import StreamInput

    if fmt not in FORMATS:
        raise RequestError(400, f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    with tempfile.TemporaryDirectory(prefix="rsep-push-") as folder:
        path = Path(folder) / f"body{FORMATS[fmt]}"
        path.write_bytes(body)
        try:
            return read_table(StreamInput(path, iri), dictionary=terms)
        except InputError as exc:
            where = f"line {exc.line}" if exc.line is not None else "the body"
            raise RequestError(400, f"{where}: {exc.reason}") from None
        except UserError as exc:
            raise RequestError(400, str(exc).replace(str(path), "body")) from None


@dataclass
class Pushed:
    """One push, parsed once and handed to every query: its table of triples, encoded once
    into batches of the service's term ids the first time a columnar query asks, and its
    events as objects the first time an evaluator that takes events asks. A checkpoint
    keeps the table alone."""

    table: pa.Table
    _batches: list[TripleBatch] | None = None
    _events: list[Event] | None = None

    def batches(self, terms: TermDictionary) -> list[TripleBatch]:
        """The table as batches of ``terms``' ids (:func:`rsep.engine.batch.table_batches`),
        once: every query of the service shares ``terms``."""
        if self._batches is None:
            from rsep.engine.batch import table_batches

            self._batches = list(table_batches(self.table, terms))
        return self._batches

    def events(self, terms: TermDictionary) -> list[Event]:
        """The table's events (:meth:`rsep.engine.batch.TripleBatch.events`), once."""
        if self._events is None:
            self._events = [e for b in self.batches(terms) for e in b.events(terms)]
        return self._events

    def __getstate__(self) -> dict[str, object]:
        return {"table": self.table, "_batches": None, "_events": None}

    @property
    def rows(self) -> int:
        """Triples in the push."""
        return int(self.table.num_rows)


@dataclass
class Stream:
    """A registered stream: its name in URLs, its IRI in queries, an optional folder of
    arriving files it reads, its recent events and counters."""

    name: str
    iri: str
    source: str | None = None
    format: str | None = None
    seen: set[str] = field(default_factory=set)
    offsets: dict[int, int] = field(default_factory=dict)
    seq: int = 0
    triples: int = 0
    late: int = 0
    bad: int = 0
    last_error: str | None = None
    recent: pa.Table | None = None

    def describe(self) -> dict[str, Any]:
        """The stream as ``GET /api/streams`` lists it."""
        return {
            "name": self.name,
            "iri": self.iri,
            "source": self.source,
            "format": self.format,
            "events": self.seq,
            "triples": self.triples,
            "late": self.late,
            "bad": self.bad,
            "last_error": self.last_error,
        }

    def remember(self, table: pa.Table, keep: int) -> None:
        """Number the events of ``table`` on from the last, and keep the last ``keep`` of
        the stream's events as a table (one row per triple: ``seq``, times, the event's
        name, the triple in N-Triples), made into JSON only when asked (:meth:`since`)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        rows = int(table.num_rows)
        ids = table["event_id"].combine_chunks()
        change = pc.not_equal(ids.slice(1), ids.slice(0, rows - 1))
        starts = np.flatnonzero(np.asarray(change.to_numpy(zero_copy_only=False))) + 1
        index = np.zeros(rows, np.int64)
        index[starts] = 1
        seq = self.seq + 1 + np.cumsum(index)
        total = len(starts) + 1
        first = 0 if total <= keep else int(starts[total - keep - 1])
        tail = table.slice(first)
        part = pa.table(
            {
                "seq": seq[first:],
                "t_start": tail["t_start"],
                "t_end": tail["t_end"],
                "graph": tail["event_id"],
                "triple": pc.binary_join_element_wise(
                    tail["s"], tail["p"], tail["o"], pa.scalar("."), " "
                ),
            }
        )
        self.seq += total
        self.triples += rows
        held = part if self.recent is None else pa.concat_tables([self.recent, part])
        held = held.filter(pc.greater(held["seq"], self.seq - keep))
        self.recent = held.combine_chunks() if held["seq"].num_chunks > 16 else held

    def since(self, since: int, limit: int) -> list[dict[str, Any]]:
        """The kept events with ``seq`` above ``since``, at most ``limit`` of them."""
        import pyarrow.compute as pc

        if self.recent is None:
            return []
        seq = self.recent["seq"]
        wanted = pc.and_(pc.greater(seq, since), pc.less_equal(seq, since + limit))
        rows = self.recent.filter(wanted).to_pydict()
        events: list[dict[str, Any]] = []
        for n, start, end, graph, triple in zip(
            rows["seq"], rows["t_start"], rows["t_end"], rows["graph"], rows["triple"], strict=True
        ):
            if not events or events[-1]["seq"] != n:
                events.append(
                    {"seq": n, "t_start": start, "t_end": end, "graph": graph, "triples": []}
                )
            events[-1]["triples"].append(triple)
        return events


@dataclass
class Counters:
    """What ``/metrics`` tells of one query."""

    events: int = 0
    answers: int = 0
    pushes: int = 0
    latency_sum: float = 0.0
    latency: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    state_bytes: int = 0

    def timed(self, seconds: float) -> None:
        """Count one push that took ``seconds`` from its arrival to its answers."""
        self.pushes += 1
        self.latency_sum += seconds
        for i, bound in enumerate(LATENCY_BUCKETS):
            if seconds <= bound:
                self.latency[i] += 1
                return
        self.latency[-1] += 1


@dataclass
class Registered:
    """A registered query: what the client sent (kept to register it again after a
    restart), the compiled :class:`rsep.Query`, its :class:`rsep.Incremental` and its
    recent answers, each with a sequence number ``seq``."""

    name: str
    spec: dict[str, Any]
    query: Query
    running: Incremental
    streams: tuple[str, ...]
    state: str = "running"
    error: str | None = None
    seq: int = 0
    answers: deque[tuple[int, str]] = field(default_factory=deque)
    """The recent answers as ``(seq, JSON line)``: strings, which the garbage collector
    does not scan (dicts of every recent answer of every query made its full passes the
    service's largest cost)."""
    backlog: list[Pushed | int] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)

    @property
    def columnar(self) -> bool:
        """Whether the columnar engine runs it (it takes batches of the service's term
        ids; the others events)."""
        return self.running.inexact_rows is not None

    def reads(self, iri: str) -> bool:
        """Whether the query is fed stream ``iri``'s events: the streams it names, or every
        stream when it names none (EP-SPARQL's one input stream, Anicic et al. Sect. 4)."""
        return not self.streams or iri in self.streams

    def describe(self) -> dict[str, Any]:
        """The query as ``GET /api/queries`` lists it."""
        c = self.counters
        return {
            "name": self.name,
            "dialect": self.query.dialect.name,
            "state": self.state,
            "error": self.error,
            "streams": list(self.streams),
            "sink": self.spec.get("sink"),
            "counters": {
                "events": c.events,
                "answers": c.answers,
                "seq": self.seq,
                "backlog": len(self.backlog),
                "watermark": self.running.watermark,
            },
        }

    def parameters(self) -> dict[str, dict[str, Any]]:
        """Every operational parameter: its value as ``--set`` writes it, where it came
        from, and its note (:attr:`rsep.Query.parameters`)."""
        parameters = self.query.parameters
        return {
            name: {
                "value": parameters.show(name),
                "source": param.source.value,
                "note": param.note,
            }
            for name, param in parameters.items()
        }


class Service:
    """The streams and queries of one ``rsep serve`` (module docstring). Every change
    happens under one lock, so pushes reach every query in the order they were taken;
    ``changed`` is called after answers were added (the app wakes its WebSocket and SSE
    clients)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.streams: dict[str, Stream] = {}
        self.queries: dict[str, Registered] = {}
        self.clock: int | None = None
        """The latest event time pushed."""
        self.watermark: int | None = None
        """The latest time every query was advanced to (``POST /api/watermark``)."""
        self.changed: Callable[[], None] = lambda: None
        from rsep.engine.terms import TermDictionary

        self.terms = TermDictionary()
        """The term dictionary every query shares: a push is encoded once for them all."""
        self.terms_bytes = 0
        """The dictionary's size, pickled, at the last checkpoint (kept once for all)."""
        self._lock = threading.RLock()
        self._saved = 0.0
        self._started = False
        self._readers: dict[str, KafkaReader] = {}
        self._checkpoints = None if settings.state is None else Checkpoints()
        if settings.state is not None:
            self._load(settings.state)

    # streams ----------------------------------------------------------------------------

    def add_stream(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Register a stream ``{"name", "iri"?, "source"?, "format"?}``: its IRI (default
        ``urn:rsep:stream:NAME``), and a folder of arriving files under ``--allow`` it
        reads (every ``--poll`` seconds, each file once, in name order)."""
        name = _name(spec.get("name"), "stream")
        iri = spec.get("iri") or f"urn:rsep:stream:{name}"
        if not isinstance(iri, str) or not re.fullmatch(
            r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*", iri
        ):
            raise RequestError(400, f"a stream's iri is an absolute IRI, not {iri!r}")
        source = spec.get("source")
        fmt = spec.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise RequestError(400, f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
        if source is not None:
            source = self._source(source)
        with self._lock:
            if name in self.streams:
                raise RequestError(409, f"a stream named {name} exists")
            if any(s.iri == iri for s in self.streams.values()):
                raise RequestError(409, f"a stream with IRI <{iri}> exists")
            stream = Stream(name, iri, source, fmt)
            self.streams[name] = stream
            self._save(force=True)
            if self._started:
                self._read(stream)
            return stream.describe()

    def _source(self, source: object) -> str:
        """A stream's source: a folder under ``--allow`` or a topic of an allowed broker."""
        if not isinstance(source, str):
            raise RequestError(400, "a stream's source is a folder or kafka://host:port/topic")
        try:
            if source.startswith("kafka:"):
                return self.settings.allowed_kafka(source)
            folder = self.settings.allowed_path(source)
        except UserError as exc:
            raise RequestError(403, str(exc)) from None
        if not folder.is_dir():
            raise RequestError(400, f"{source}: not a folder")
        return str(folder)

    def start(self) -> None:
        """Start reading the streams' Kafka topics (folders are read by :meth:`poll`)."""
        with self._lock:
            self._started = True
            for stream in self.streams.values():
                self._read(stream)

    def _read(self, stream: Stream) -> None:
        """Start the thread that consumes ``stream``'s topic, if it has one."""
        from rsep.serve.sources import KafkaReader

        if stream.source is not None and stream.source.startswith("kafka:"):
            reader = KafkaReader(self, stream)
            self._readers[stream.name] = reader
            reader.start()

    def stream(self, name: str) -> Stream:
        """The stream ``name`` (404 when there is none)."""
        return _found(self.streams, name, "stream")

    def remove_stream(self, name: str) -> None:
        """Remove a stream no query reads (409 while one does)."""
        with self._lock:
            stream = self.stream(name)
            readers = [q.name for q in self.queries.values() if stream.iri in q.streams]
            if readers:
                raise RequestError(409, f"queries {', '.join(readers)} read stream {name}")
            del self.streams[name]
            reader = self._readers.pop(name, None)
            if reader is not None:
                reader.stop()
            self._save(force=True)

    def events_since(self, name: str, since: int, limit: int = 1000) -> list[dict[str, Any]]:
        """The stream's recent events with ``seq`` above ``since`` (at most ``limit``)."""
        with self._lock:
            return self.stream(name).since(since, limit)

    def push(
        self, name: str, body: bytes, fmt: str, offsets: Mapping[int, int] | None = None
    ) -> dict[str, Any]:
        """Parse ``body`` once and feed it to every query (module docstring); what was
        taken: events, triples, late events set aside, answers given. ``offsets`` are a
        topic's next offsets after the body (a Kafka source), kept with the stream even
        when the body is refused."""
        stream = self.stream(name)
        try:
            table = parse_body(body, fmt, stream.iri, self.terms)
        except RequestError as exc:
            with self._lock:
                stream.bad += 1
                stream.last_error = str(exc)
                stream.offsets.update(offsets or {})
            raise
        return self.take(stream, table, time.monotonic(), offsets)

    def take(
        self,
        stream: Stream,
        table: pa.Table,
        arrived: float,
        offsets: Mapping[int, int] | None = None,
    ) -> dict[str, Any]:
        """Feed a parsed table of ``stream`` to every query, late events set aside."""
        import pyarrow.compute as pc

        with self._lock:
            stream.offsets.update(offsets or {})
            floor = self._floor()
            late = 0
            if floor is not None and table.num_rows:
                early = pc.less(table["t_end"], floor)
                late = int(pc.count_distinct(table.filter(early)["event_id"]).as_py())
                table = table.filter(pc.invert(early))
            if table.num_rows:
                first = int(pc.min(table["t_end"]).as_py())
                last = int(pc.max(table["t_end"]).as_py())
                self._check_jump(last, first)
            stream.late += late
            before = stream.seq
            answers = 0
            if table.num_rows:
                stream.remember(table, self.settings.recent_events)
                pushed = Pushed(table)
                moved = self.clock is not None and first > self.clock
                self.clock = last if self.clock is None else max(self.clock, last)
                for query in list(self.queries.values()):
                    if moved:
                        answers += self._apply(query, first - 1, arrived)
                    if query.reads(stream.iri):
                        answers += self._apply(query, pushed, arrived)
                self._save()
        if answers:
            self.changed()
        return {
            "events": stream.seq - before,
            "triples": int(table.num_rows),
            "late": late,
            "answers": answers,
            "clock": self.clock,
        }

    def advance(self, t: int) -> dict[str, Any]:
        """Move every query's watermark to ``t``: no event at or before it comes any more
        (later pushes of such events are late); the answers it makes final."""
        with self._lock:
            if self.watermark is not None and t < self.watermark:
                raise RequestError(409, f"the watermark is at {self.watermark} already")
            if self.clock is not None and t < self.clock:
                raise RequestError(
                    409,
                    f"events up to {self.clock} were pushed; the watermark cannot go "
                    f"before the latest of them",
                )
            self._check_jump(t)
            self.watermark = t
            arrived = time.monotonic()
            answers = sum(self._apply(q, t, arrived) for q in list(self.queries.values()))
            self._save(force=True)
        if answers:
            self.changed()
        return {"watermark": t, "answers": answers}

    def _check_jump(self, t: int, first: int | None = None) -> None:
        """Refuse to move time to ``t`` more than ``--max-jump`` ms past the clock (or past
        ``first``, a first push's earliest event): a query decides every instant a window
        closes at up to the watermark, so one far jump would hold every query for long."""
        now = self._floor()
        start = first if now is None else now
        if start is not None and t - start > self.settings.max_jump:
            raise RequestError(
                400,
                f"time {t} is {t - start} ms past {start}, more than --max-jump "
                f"{self.settings.max_jump} ms: push the events between, or start the server "
                "with a larger --max-jump",
            )

    def _floor(self) -> int | None:
        """The earliest event time a push may still hold."""
        marks = [
            t
            for t in (self.clock, None if self.watermark is None else self.watermark + 1)
            if t is not None
        ]
        return max(marks) if marks else None

    def poll(self) -> None:
        """Read the files that arrived in the streams' folders
        (:func:`rsep.serve.sources.read_folder`)."""
        from rsep.serve.sources import read_folder

        for stream in list(self.streams.values()):
            if stream.source is not None and not stream.source.startswith("kafka:"):
                read_folder(self, stream)

    # queries ----------------------------------------------------------------------------

    def add_query(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Register a query ``{"name", "query", "dialect"?, "parameters"?, "profile"?,
        "graphs"?, "sink"?}`` over registered streams: compiled, checked to read only what
        the operator allows, and fed from the next push on."""
        name = _name(spec.get("name"), "query")
        with self._lock:
            if name in self.queries:
                raise RequestError(409, f"a query named {name} exists")
            registered = self._compile(name, dict(spec))
            self.queries[name] = registered
            self._save(force=True)
            return registered.describe()

    def query(self, name: str) -> Registered:
        """The query ``name`` (404 when there is none)."""
        return _found(self.queries, name, "query")

    def explain(self, name: str) -> dict[str, Any]:
        """The query with its text, :meth:`rsep.Query.explain` and every parameter."""
        with self._lock:
            query = self.query(name)
            return {
                **query.describe(),
                "query": query.query.text,
                "explain": query.query.explain(),
                "parameters": query.parameters(),
            }

    def pause(self, name: str) -> dict[str, Any]:
        """Stop feeding the query; what is pushed meanwhile waits (up to
        ``--max-backlog`` triples) and is fed on :meth:`resume`."""
        with self._lock:
            query = self.query(name)
            if query.state == "failed":
                raise RequestError(409, f"query {name} failed: {query.error}")
            query.state = "paused"
            self._save(force=True)
            return query.describe()

    def resume(self, name: str) -> dict[str, Any]:
        """Feed the query again, first what waited while it was paused."""
        with self._lock:
            query = self.query(name)
            if query.state == "failed":
                raise RequestError(409, f"query {name} failed: {query.error}")
            query.state = "running"
            waiting, query.backlog = query.backlog, []
            answers = sum(self._apply(query, item, time.monotonic()) for item in waiting)
            self._save(force=True)
        if answers:
            self.changed()
        return query.describe()

    def remove_query(self, name: str) -> None:
        """Unregister the query; its state and answers are dropped."""
        with self._lock:
            self.query(name)
            del self.queries[name]
            self._save(force=True)
            if self.settings.state is not None:
                (self.settings.state / "queries" / f"{name}.pickle").unlink(missing_ok=True)
        self.changed()

    def answers_since(self, name: str, since: int, limit: int = 1000) -> list[dict[str, Any]]:
        """The query's recent answers with ``seq`` above ``since`` (at most ``limit``)."""
        with self._lock:
            query = self.query(name)
            answers = query.answers
            if not answers or answers[-1][0] <= since:
                return []
            first = max(0, len(answers) - (answers[-1][0] - since))  # seqs run on by one
            picked = itertools.islice(answers, first, first + limit)
        return [{"seq": seq, **json.loads(line)} for seq, line in picked]

    def _compile(self, name: str, spec: dict[str, Any]) -> Registered:
        """The registered query of ``spec`` (:meth:`add_query`); a 4xx for what is
        wrong with it."""
        text = spec.get("query")
        if not isinstance(text, str) or not text.strip():
            raise RequestError(400, 'a query needs its text: "query"')
        dialect = _optional_text(spec, "dialect")
        profile = _optional_text(spec, "profile")
        parameters = spec.get("parameters") or {}
        if not isinstance(parameters, dict) or not all(
            isinstance(k, str) and isinstance(v, str | int | float | bool)
            for k, v in parameters.items()
        ):
            raise RequestError(400, '"parameters" maps parameter names to values')
        parameters = dict(parameters)
        parameters.setdefault("max_runs", self.settings.max_runs)
        try:
            query = Query(text, dialect, profile=profile, parameters=parameters)
        except UserError as exc:
            raise RequestError(400, str(exc)) from None
        if query.parameters.max_runs > self.settings.max_runs:
            raise RequestError(
                400,
                f"max_runs {query.parameters.max_runs} is above the server's "
                f"{self.settings.max_runs} (--max-runs)",
            )
        _refuse_services(query)
        streams = tuple(query.plan.dataset.streams)
        known = {s.iri for s in self.streams.values()}
        unknown = [iri for iri in streams if iri not in known]
        if unknown:
            raise RequestError(
                400,
                "the query reads stream(s) no one registered: "
                + ", ".join(f"<{iri}>" for iri in unknown)
                + " (POST /api/streams first)",
            )
        graphs = spec.get("graphs") or {}
        if not isinstance(graphs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in graphs.items()
        ):
            raise RequestError(400, '"graphs" maps graph IRIs to files')
        files: dict[str, str | Path] = {}
        for iri, path in graphs.items():
            try:
                files[iri] = self.settings.allowed_path(path)
            except UserError as exc:
                raise RequestError(403, str(exc)) from None
        dataset = query.plan.dataset
        missing = [i for i in (*dataset.default_graphs, *dataset.named_graphs) if i not in files]
        if missing:
            raise RequestError(
                400,
                "the query reads graph(s) with no content: "
                + ", ".join(f"<{iri}>" for iri in missing)
                + ' (give "graphs": {IRI: FILE}, a file under --allow)',
            )
        sink = spec.get("sink")
        if sink is not None:
            spec["sink"] = self._sink(sink)
        try:
            running = query.incremental(files, dictionary=self.terms)
        except UserError as exc:
            raise RequestError(400, str(exc)) from None
        answers: deque[tuple[int, str]] = deque(maxlen=self.settings.recent_answers)
        return Registered(name, spec, query, running, streams, answers=answers)

    def _sink(self, sink: object) -> str:
        """A query's sink: ``file:PATH`` under ``--allow`` or an allowed ``kafka://``."""
        if not isinstance(sink, str):
            raise RequestError(400, 'a sink is "file:PATH" or "kafka://host:port/topic"')
        try:
            if sink.startswith("kafka:"):
                return self.settings.allowed_kafka(sink)
            if sink.startswith("file:"):
                path = self.settings.allowed_path(sink.removeprefix("file:").removeprefix("//"))
                return f"file:{path}"
        except UserError as exc:
            raise RequestError(403, str(exc)) from None
        raise RequestError(400, 'a sink is "file:PATH" or "kafka://host:port/topic"')

    def _apply(self, query: Registered, item: Pushed | int, arrived: float) -> int:
        """Feed one push (or move the watermark to an instant) to ``query``: kept while it
        is paused, nothing once it failed; the count of answers it gave. An error fails
        this query alone, with its reason."""
        if query.state == "paused":
            query.backlog.append(item)
            rows = sum(p.rows for p in query.backlog if isinstance(p, Pushed))
            if rows > self.settings.max_backlog:
                query.backlog = []
                query.state = "failed"
                query.error = (
                    f"paused with more than {self.settings.max_backlog} triples waiting "
                    "(--max-backlog); register it again"
                )
            return 0
        if query.state != "running":
            return 0
        try:
            if isinstance(item, int):
                results = query.running.advance(item)
            elif query.columnar:
                results = []
                for batch in item.batches(self.terms):
                    results += query.running.push(batch)
                query.counters.events = query.running.events
            else:
                results = query.running.push(item.events(self.terms))
                query.counters.events = query.running.events
        except Exception as exc:  # one query's failure must not disturb the others
            query.state = "failed"
            query.error = str(exc) if isinstance(exc, UserError) else f"internal error: {exc!r}"
            return 0
        if isinstance(item, Pushed):
            query.counters.timed(time.monotonic() - arrived)
        if results:
            self._deliver(query, results)
        return len(results)

    def _deliver(self, query: Registered, results: list[Result]) -> None:
        """Number the answers, keep the recent ones, write them to the query's sink."""
        sink = query.spec.get("sink")
        keep = self.settings.recent_answers  # older answers fall out of the deque
        lines = [json_line(r.to_json()) for r in (results if sink else results[-keep:])]
        tail = lines[-keep:]
        first = query.seq + len(results) - len(tail) + 1
        query.answers.extend(zip(range(first, first + len(tail)), tail, strict=True))
        query.seq += len(results)
        query.counters.answers += len(results)
        if sink is None:
            return
        try:
            if sink.startswith("kafka:"):
                from rsep.spark.kafka import KafkaAddress, produce

                produce(KafkaAddress.parse(sink), lines)
            else:
                with Path(sink.removeprefix("file:")).open("a", encoding="utf-8") as out:
                    out.write("".join(line + "\n" for line in lines))
        except (UserError, OSError) as exc:
            query.state = "failed"
            query.error = f"sink {sink}: {exc}"

    # metrics ----------------------------------------------------------------------------

    def metrics(self) -> str:
        """The Prometheus text exposition of the service's counters."""
        lines = [
            "# HELP rsep_events_in_total Events taken, per stream.",
            "# TYPE rsep_events_in_total counter",
        ]
        with self._lock:
            streams = list(self.streams.values())
            queries = list(self.queries.values())
            lines += [f'rsep_events_in_total{{stream="{s.name}"}} {s.seq}' for s in streams]
            lines += [
                "# HELP rsep_triples_in_total Triples taken, per stream.",
                "# TYPE rsep_triples_in_total counter",
            ]
            lines += [f'rsep_triples_in_total{{stream="{s.name}"}} {s.triples}' for s in streams]
            lines += [
                "# HELP rsep_late_events_total Events set aside as late, per stream.",
                "# TYPE rsep_late_events_total counter",
            ]
            lines += [f'rsep_late_events_total{{stream="{s.name}"}} {s.late}' for s in streams]
            lines += [
                "# HELP rsep_bad_records_total Pushes refused as malformed, per stream.",
                "# TYPE rsep_bad_records_total counter",
            ]
            lines += [f'rsep_bad_records_total{{stream="{s.name}"}} {s.bad}' for s in streams]
            lines += [
                "# HELP rsep_query_events_total Events fed to a query.",
                "# TYPE rsep_query_events_total counter",
            ]
            lines += [
                f'rsep_query_events_total{{query="{q.name}"}} {q.counters.events}' for q in queries
            ]
            lines += [
                "# HELP rsep_answers_out_total Answers a query gave.",
                "# TYPE rsep_answers_out_total counter",
            ]
            lines += [
                f'rsep_answers_out_total{{query="{q.name}"}} {q.counters.answers}' for q in queries
            ]
            lines += [
                "# HELP rsep_query_running Whether a query runs (0: paused or failed).",
                "# TYPE rsep_query_running gauge",
            ]
            lines += [
                f'rsep_query_running{{query="{q.name}"}} {int(q.state == "running")}'
                for q in queries
            ]
            lines += [
                "# HELP rsep_query_state_bytes A query's state, pickled, at its last checkpoint "
                "(the shared dictionary apart).",
                "# TYPE rsep_query_state_bytes gauge",
            ]
            lines += [
                f'rsep_query_state_bytes{{query="{q.name}"}} {q.counters.state_bytes}'
                for q in queries
            ]
            lines += [
                "# HELP rsep_dictionary_bytes The shared term dictionary, pickled, at the "
                "last checkpoint.",
                "# TYPE rsep_dictionary_bytes gauge",
                f"rsep_dictionary_bytes {self.terms_bytes}",
            ]
            lines += [
                "# HELP rsep_query_backlog Pushes waiting while a query is paused.",
                "# TYPE rsep_query_backlog gauge",
            ]
            lines += [f'rsep_query_backlog{{query="{q.name}"}} {len(q.backlog)}' for q in queries]
            lines += [
                "# HELP rsep_push_latency_seconds From a push's arrival to a query's "
                "answers of it.",
                "# TYPE rsep_push_latency_seconds histogram",
            ]
            for q in queries:
                c = q.counters
                total = 0
                for bound, count in zip((*LATENCY_BUCKETS, "+Inf"), c.latency, strict=True):
                    total += count
                    lines.append(
                        f'rsep_push_latency_seconds_bucket{{query="{q.name}",le="{bound}"}} {total}'
                    )
                lines.append(f'rsep_push_latency_seconds_sum{{query="{q.name}"}} {c.latency_sum}')
                lines.append(f'rsep_push_latency_seconds_count{{query="{q.name}"}} {c.pushes}')
        return "\n".join(lines) + "\n"

    # state ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the topics' readers and keep the state (a clean stop loses nothing)."""
        readers = list(self._readers.values())
        for reader in readers:
            reader.stop()
        for reader in readers:
            reader.join(5)
        with self._lock:
            self._started = False
            self._save(force=True)

    def _save(self, force: bool = False) -> None:
        """Checkpoint the registry and every query's engine state under ``--state``:
        always when ``force``, else when ``--checkpoint-every`` seconds have passed. The
        state is pickled under the lock (a consistent cut) and written by
        :class:`Checkpoints`' thread, off the lock; a forced checkpoint, and every one
        under ``--checkpoint-every 0``, is written before this returns."""
        folder, writer = self.settings.state, self._checkpoints
        if folder is None or writer is None:
            return
        now = time.monotonic()
        if not force and now - self._saved < self.settings.checkpoint_every:
            return
        self._saved = now
        # the shared dictionary once, first: a query's file refers to it (a dictionary only
        # grows, so one newer than the queries' files still holds every id they use)
        with self.terms.lock:  # a push parses (and adds terms) off the service's lock
            terms = pickle.dumps(self.terms, protocol=pickle.HIGHEST_PROTOCOL)
        self.terms_bytes = len(terms)
        files: list[tuple[Path, bytes]] = [(folder / "terms.pickle", terms)]
        for query in self.queries.values():
            kept = (
                query.running,
                query.seq,
                query.answers,
                query.backlog,
                query.counters,
                query.state,
                query.error,
            )
            out = io.BytesIO()
            _Pickler(out, self.terms).dump(kept)
            data = out.getvalue()
            query.counters.state_bytes = len(data)
            files.append((folder / "queries" / f"{query.name}.pickle", data))
        registry = {
            "clock": self.clock,
            "watermark": self.watermark,
            "streams": [
                {
                    **{
                        k: v
                        for k, v in s.describe().items()
                        if k in ("name", "iri", "source", "format")
                    },
                    "seen": sorted(s.seen),
                    "offsets": {str(k): v for k, v in s.offsets.items()},
                    "seq": s.seq,
                    "triples": s.triples,
                    "late": s.late,
                    "bad": s.bad,
                }
                for s in self.streams.values()
            ],
            "queries": [{"name": q.name, **q.spec} for q in self.queries.values()],
        }
        files.append((folder / "state.json", json.dumps(registry, indent=1).encode()))
        writer.put(files)
        if force or self.settings.checkpoint_every == 0:  # written before the reply
            writer.flush()

    def _load(self, folder: Path) -> None:
        """Register again the streams and queries kept in ``folder``, each query with the
        engine state, answers and counters of its last checkpoint."""
        path = folder / "state.json"
        if not path.exists():
            return
        try:
            registry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read the state {path}: {exc}") from None
        self.clock, self.watermark = registry.get("clock"), registry.get("watermark")
        terms = folder / "terms.pickle"
        shared = pickle.loads(terms.read_bytes()) if terms.exists() else None
        if shared is not None:
            self.terms = shared
        for item in registry.get("streams", []):
            stream = Stream(item["name"], item["iri"], item.get("source"), item.get("format"))
            stream.seen = set(item.get("seen", []))
            stream.offsets = {int(k): int(v) for k, v in item.get("offsets", {}).items()}
            stream.seq, stream.triples = item.get("seq", 0), item.get("triples", 0)
            stream.late, stream.bad = item.get("late", 0), item.get("bad", 0)
            self.streams[stream.name] = stream
        for item in registry.get("queries", []):
            spec = {k: v for k, v in item.items() if k != "name"}
            query = self._compile(item["name"], spec)
            kept = folder / "queries" / f"{query.name}.pickle"
            if kept.exists():
                (
                    query.running,
                    query.seq,
                    query.answers,
                    query.backlog,
                    query.counters,
                    query.state,
                    query.error,
                ) = _Unpickler(io.BytesIO(kept.read_bytes()), shared, kept).load()
            self.queries[query.name] = query
        # query files written when each query kept its own copy of the dictionary (all of a
        # state's before terms.pickle, or some beside it after a checkpoint cut short): the
        # largest dictionary extends the others (a dictionary only grows), all take it
        columnar = [q.running for q in self.queries.values() if q.columnar]
        copies = [r.dictionary for r in columnar if r.dictionary is not self.terms]
        if copies:
            self.terms = max([self.terms, *copies], key=len)
            for running in columnar:
                if running.dictionary is not self.terms:
                    running.share(self.terms)


class _Pickler(pickle.Pickler):
    """Pickles a query's state with the shared dictionary left out, as a reference."""

    def __init__(self, out: io.BytesIO, terms: object) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self._terms = terms

    def persistent_id(self, obj: object) -> str | None:
        return _TERMS if obj is self._terms else None


class _Unpickler(pickle.Unpickler):
    """Reads a query's state back from ``path``, its reference to the dictionary bound to
    ``terms`` (``None``: the state has no ``terms.pickle``)."""

    def __init__(self, data: io.BytesIO, terms: object | None, path: Path) -> None:
        super().__init__(data)
        self._terms = terms
        self._path = path

    def persistent_load(self, pid: object) -> object:
        if pid != _TERMS:
            raise UserError(f"cannot read the state {self._path}: unknown reference {pid!r}")
        if self._terms is None:
            raise UserError(
                f"cannot read the state {self._path}: it refers to the shared term "
                f"dictionary, and {self._path.parent.parent / 'terms.pickle'} is missing"
            )
        return self._terms


_TERMS = "terms"


class Checkpoints(threading.Thread):
    """Writes checkpoints off the service's lock: the latest one handed over waits (an
    older one not yet written is dropped), its files written in order, each through a
    temporary file renamed over it, the registry last."""

    def __init__(self) -> None:
        super().__init__(name="rsep-checkpoints", daemon=True)
        self._pending: list[tuple[Path, bytes]] | None = None
        self._busy = False
        self._ready = threading.Condition()
        self.start()

    def put(self, files: list[tuple[Path, bytes]]) -> None:
        """Hand over a checkpoint's files."""
        with self._ready:
            self._pending = files
            self._ready.notify_all()

    def flush(self) -> None:
        """Wait until every checkpoint handed over is written."""
        with self._ready:
            self._ready.wait_for(lambda: self._pending is None and not self._busy)

    def run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._pending is not None)
                files, self._pending, self._busy = self._pending or [], None, True
            try:
                for path, data in files:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _write_atomically(path, data)
            except OSError as exc:  # the next checkpoint tries again; the service runs on
                print(f"rsep serve: cannot write the state: {exc}", file=sys.stderr)
            finally:
                with self._ready:
                    self._busy = False
                    self._ready.notify_all()


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


_T = TypeVar("_T")


def _found(registry: Mapping[str, _T], name: str, what: str) -> _T:
    """``registry[name]``, or a 404 naming the missing ``what``."""
    found = registry.get(name)
    if found is None:
        raise RequestError(404, f"no {what} named {name}")
    return found


def _name(value: object, what: str) -> str:
    """A stream's or query's name, checked (:data:`NAME`)."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise RequestError(
            400, f"a {what} needs a \"name\": letters, digits, '_', '.', '-', at most 64"
        )
    return value


def _optional_text(spec: Mapping[str, Any], key: str) -> str | None:
    """``spec[key]`` when it is a string, ``None`` when absent; a 400 otherwise."""
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise RequestError(400, f"{key!r} is a string")
    return value


def _refuse_services(query: Query) -> None:
    """Refuse a query that would reach the network: SPARQL 1.1 ``SERVICE`` (Federated
    Query, Sect. 2). SPARQL Update's ``LOAD`` is no query form, so it never parses."""
    from rsep.lang import ast, parse_query

    tree = parse_query(query.text, query.dialect)
    if any(isinstance(node, ast.Service) for node in tree.walk()):
        raise RequestError(
            403,
            "the query calls a SPARQL SERVICE: rsep serve reads no network resource "
            "on a query's behalf",
        )
