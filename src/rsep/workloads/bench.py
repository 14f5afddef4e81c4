"""The benchmark harness behind ``rsep bench`` (issue 7, deliverable 3): one workload, one
system, a sweep over the parameters SPAseq's evaluation varies (Sec. 8: window size,
number of sequence steps, selection strategy, background KB size), each point measured in
its own process for throughput (events/s, triples/s), peak memory (RSS of the process
tree, sampled) and, in live mode, detection latency (p50, p99).

Workloads (:data:`rsep.workloads.catalog.WORKLOADS`, issue 15): the V shape of SPAseq
UC4 (:func:`rsep.workloads.baselines.vshape_query`) over the real NASDAQ bars of
``../shared/data/stocks`` replicated to N events (:func:`rsep.workloads.replicate_bars`),
or over synthetic bars with planted V shapes (:func:`rsep.workloads.stock.vshape_bars`)
when the sample is absent; head and shoulders, UC3, UC1, UC5, Kleene+ and skip-till-any
(the catalog). This module is the harness they share: data files, systems, measuring.

Systems (:data:`SYSTEMS`): ``rsep`` (the incremental engine in this process, reading the
N-Quads file or the Parquet event store: ``--source``), ``rsep-live`` (the same engine fed
at a fixed rate, measuring detection latency), ``spark`` (``rsep.spark.replay``),
``oracle`` (``rsep.semantics.evaluate``), ``naive`` (pyoxigraph per event and a Python
matcher, :mod:`rsep.workloads.baselines`), ``flink`` (PyFlink ``MATCH_RECOGNIZE`` in
its own interpreter, :mod:`rsep.workloads.flink`) and ``vectorised`` (the V shape written
by hand over the event store's columns, :mod:`rsep.workloads.vectorised`).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from pyoxigraph import Literal, NamedNode, Triple

if TYPE_CHECKING:
    import pyarrow as pa

    from rsep.api import Query

from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.mapping import MappedEvent, RowMapper
from rsep.rdf.results import Result, SelectResult
from rsep.workloads.baselines import KB_GRAPH, PRED, Answer, VShape

_T = TypeVar("_T")

SYSTEMS = ("rsep", "rsep-live", "read", "spark", "oracle", "naive", "flink", "vectorised")
"""The systems a point runs on (module docstring); ``read`` only reads the events (what
rsep's end-to-end throughput can reach at most)."""
SOURCES = ("nquads", "parquet")
"""What the rsep engine reads: the N-Quads file or the columnar event store."""
SHARED = Path(os.environ.get("RSEP_SHARED", Path(__file__).resolve().parents[3].parent / "shared"))
NASDAQ = tuple(
    SHARED / "data" / "stocks" / "opencep_nasdaq_2008-02-01" / name
    for name in ("NASDAQ_AAPL_AMZN_GOOG.txt", "NASDAQ_MEDIUM.txt")
)
"""The real bars replicated: 7 tickers of 2008-02-01 (3,017 bars a day)."""
SP500 = (
    Path(__file__).resolve().parents[3] / "examples" / "uc4-stock" / "data" / "sp500-sectors.ttl"
)
"""The S&P 500 names and sectors (examples/uc4-stock); companies it lacks get made-up ones."""
FLINK_PYTHON = "RSEP_FLINK_PYTHON"
"""Environment variable naming the interpreter that has PyFlink (``--flink-python``)."""
TRIPLES_PER_BAR = 5
"""Triples of one NASDAQ bar event (price, volume, open, high, low: ``nasdaq-bars``)."""


@dataclass(frozen=True)
class Point:
    """One measurement to take: a workload of ``events`` events, one system, one pattern."""

    workload: str
    system: str
    events: int
    shape: VShape = field(default_factory=VShape)
    kb_triples: int = 0
    source: str = "nquads"
    rate: int = 100_000
    """rsep-live: triples per second fed to the engine."""

    def label(self) -> str:
        """The point's parameters, short, for tables and logs."""
        from rsep.workloads.catalog import workload

        shape = (
            f"w={self.shape.window_ms // 60_000}min steps={self.shape.steps} {self.shape.strategy} "
            if workload(self.workload).shaped
            else ""
        )
        return (
            f"{self.workload} {self.system}/"
            f"{self.source if self.system.startswith('rsep') else '-'} "
            f"n={self.events:,} {shape}kb={self.kb_triples:,}"
        )


@dataclass
class Measurement:
    """What one point measured (figures of the measured section only: the reading and
    evaluation of the events, not the interpreter's start nor the data's preparation)."""

    point: Point
    events: int = 0
    triples: int = 0
    results: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of this process (all its threads) in the measured section; for ``spark``,
    of its process tree (the driver, the JVM and its Python workers:
    :func:`tree_cpu_seconds`); Flink's JVM is not in it."""
    total_seconds: float = 0.0
    """Wall-clock time of the whole process (start-up, JVM, imports included)."""
    peak_rss_mib: float = 0.0
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    note: str = ""
    digest: str = ""
    """A hash of the sorted answers (:func:`answers_digest`), kept where the answers are
    not (JSON), so that systems' answers are compared across processes."""
    answers: list[Any] = field(default_factory=list, repr=False)
    """The answers as one system reports them: :class:`Answer` for the V shape,
    :class:`Match` otherwise (comparable between systems)."""

    @property
    def events_per_second(self) -> float:
        """Events per second of the measured section."""
        return self.events / self.seconds if self.seconds else 0.0

    @property
    def triples_per_second(self) -> float:
        """Triples per second of the measured section."""
        return self.triples / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        """The measurement as JSON (``answers`` left out)."""
        out = {k: v for k, v in asdict(self).items() if k != "answers"}
        out["events_per_second"] = self.events_per_second
        out["triples_per_second"] = self.triples_per_second
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Measurement:
        """The inverse of :meth:`to_json`."""
        raw = dict(data)
        raw.pop("events_per_second", None)
        raw.pop("triples_per_second", None)
        raw["point"] = point_from_json(raw["point"])
        raw["load"] = tuple(raw["load"])
        return cls(**raw)


def point_from_json(data: dict[str, Any]) -> Point:
    """A :class:`Point` from its ``asdict`` form."""
    raw = dict(data)
    raw["shape"] = VShape(**raw["shape"])
    return Point(**raw)


# Data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    """A prepared workload: the source data (the CSV bars Flink reads), the same events as
    N-Quads and as the Parquet event store (rsep reads them, every stream in one file in
    time order), the KB as N-Triples (the named graph ``kb_graph``) and as CSV."""

    csv: Path
    nquads: Path
    store: Path
    kb: Path
    kb_csv: Path
    events: int
    triples: int
    kb_graph: str = KB_GRAPH


def prepare(folder: Path, events: int, kb_triples: int = 0) -> Data:
    """The stock workload of ``events`` bars in ``folder`` (made once, then reused): the
    real NASDAQ bars replicated (synthetic bars with planted V shapes when the sample is
    absent), then
    :func:`prepare_bars`."""
    from rsep.workloads.stock import write_replicated_bars, write_vshape_bars

    folder.mkdir(parents=True, exist_ok=True)
    real = all(path.exists() for path in NASDAQ)
    csv = folder / (
        f"NASDAQ_replicated_synthetic_{events}.txt"
        if real
        else f"NASDAQ_vshape_synthetic_seed0_{events}.txt"
    )
    if not csv.exists():
        write_replicated_bars(NASDAQ, folder, events) if real else write_vshape_bars(folder, events)
    return prepare_bars(csv, folder, kb_triples)


PREPARE_CHUNK = 200_000
"""Bars mapped and written at a time by :func:`prepare_bars` (about 300 MiB of mapped
events): 10 M bars do not fit in memory at once."""


def prepare_bars(csv: Path, folder: Path, kb_triples: int = 0, chunk: int = PREPARE_CHUNK) -> Data:
    """The bars of ``csv`` (NASDAQ format, no header, in time order) mapped with the shipped
    ``nasdaq-bars`` mapping in this process into N-Quads and the Parquet event store in
    ``folder`` (once, then reused), ``chunk`` bars at a time (one store file per chunk, so
    the store's files sort by time), and a KB of at least
    ``kb_triples`` triples (the tickers' names and sectors, then made-up companies)."""
    nquads, store, events, triples = write_events(
        lambda: _mapped_bars(csv), folder, csv.stem, chunk
    )
    kb, kb_csv = write_kb(folder, csv, kb_triples)
    return Data(csv, nquads, store, kb, kb_csv, events, triples or events * TRIPLES_PER_BAR)


def write_events(
    mapped: Callable[[], Iterable[MappedEvent]],
    folder: Path,
    stem: str,
    chunk: int = PREPARE_CHUNK,
) -> tuple[Path, Path, int, int | None]:
    """The events ``mapped()`` gives (in time order) written once into ``folder`` as
    ``stem.nq`` and the event store ``stem.store``, ``chunk`` events at a time (one store
    file per chunk, so the store's files sort by time; one store per stream inside it,
    ``stem.store/K``, so that :func:`read_store_events` merges them), then reused: the two
    paths, the events and the triples (None from a count written before triples were
    counted)."""
    from rsep.spark.convert import write_store_part, write_text

    folder.mkdir(parents=True, exist_ok=True)
    nquads = folder / f"{stem}.nq"
    store = folder / f"{stem}.store"
    count_file = folder / f"{stem}.count"
    if not nquads.exists() or not store.exists() or not count_file.exists():
        nq_tmp, store_tmp = (t.with_name(t.name + ".tmp") for t in (nquads, store))
        for tmp in (nq_tmp, store_tmp):
            _remove(tmp)
        count = triples = 0
        streams: dict[str, int] = {}
        with nq_tmp.open("w", encoding="utf-8", newline="\n") as out:
            for index, batch in enumerate(_batches(mapped(), chunk)):
                write_text(batch, out, "nquads")
                for event in batch:
                    streams.setdefault(event.stream, len(streams))
                for stream, k in streams.items():
                    part = [event for event in batch if event.stream == stream]
                    if part:
                        write_store_part(part, store_tmp / str(k), index)
                count += len(batch)
                triples += sum(len(event.triples) for event in batch)
        for tmp, target in ((nq_tmp, nquads), (store_tmp, store)):
            _remove(target)
            tmp.rename(target)
        count_file.write_text(f"{count} {triples}", encoding="utf-8")
    counts = [int(n) for n in count_file.read_text(encoding="utf-8").split()]
    return nquads, store, counts[0], counts[1] if len(counts) > 1 else None


def _mapped_bars(csv: Path) -> Iterator[MappedEvent]:
    """The bars of ``csv`` mapped with ``nasdaq-bars`` (:func:`mapped_csv`)."""
    from rsep.rdf.mapping import load_mapping

    return mapped_csv(csv, [load_mapping("nasdaq-bars").bind()], "bar")


def mapped_csv(csv: Path, mappers: Sequence[RowMapper], what: str = "row") -> Iterator[MappedEvent]:
    """The rows of ``csv`` mapped by each of ``mappers`` in turn (one event per row and
    mapper; event ids from the file's own line numbers, as ``rsep convert`` gives them); a
    bad row or a row earlier than the one before it is an error naming its line."""
    from rsep.rdf.mapping import RowError, open_text

    last = -(2**63)
    with open_text(csv) as handle:
        for line, row in mappers[0].rows(handle, csv.name):
            if isinstance(row, str):
                raise UserError(f"{csv}:{line}: {row}")
            for mapper in mappers:
                try:
                    event = mapper.map_row(row)
                except RowError as exc:
                    raise UserError(f"{csv}:{line}: {exc}") from None
                if event.t_start < last:
                    raise UserError(f"{csv}:{line}: {what} earlier than the one before it")
                last = event.t_start
                yield event


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _tickers(csv: Path) -> list[str]:
    """The tickers of a bars file (first day is enough: replicas repeat it)."""
    seen: dict[str, None] = {}
    with csv.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            seen.setdefault(line.split(",", 1)[0], None)
            if number > 20_000:
                break
    return list(seen)


def write_kb(folder: Path, csv: Path, kb_triples: int) -> tuple[Path, Path]:
    """The background KB (SPAseq Sec. 8.2, Question 2: names, sectors and made-up companies
    up to ``kb_triples`` triples), as N-Triples for rsep and CSV for Flink."""
    from pyoxigraph import RdfFormat, parse

    names: dict[str, tuple[str, str]] = {}
    if SP500.exists():
        rows: dict[str, dict[str, str]] = {}
        for quad in parse(path=str(SP500), format=RdfFormat.TURTLE):
            if isinstance(quad.object, Literal):
                rows.setdefault(quad.subject.value, {})[quad.predicate.value] = quad.object.value
        for iri, row in rows.items():
            if f"{PRED}name" in row and f"{PRED}sector" in row:
                names[iri] = (row[f"{PRED}name"], row[f"{PRED}sector"])
    kb: list[tuple[str, str, str]] = []
    for ticker in _tickers(csv):
        iri = f"http://example/company#{ticker}"
        name, sector = names.get(iri, (f"{ticker} Inc. (made up)", "Information Technology"))
        kb.append((iri, name, sector))
    i = 0
    while 2 * len(kb) < kb_triples:
        kb.append((f"http://example/company#KB{i:07d}", f"Company {i} (made up)", "Industrials"))
        i += 1
    nt = folder / f"{csv.stem}.kb_{kb_triples}.nt"
    table = folder / f"{csv.stem}.kb_{kb_triples}.csv"
    if not nt.exists() or not table.exists():
        with nt.open("w", encoding="utf-8") as out, table.open("w", encoding="utf-8") as rows_out:
            for iri, name, sector in kb:
                for pred, value in (("name", name), ("sector", sector)):
                    out.write(f"<{iri}> <{PRED}{pred}> {Literal(value)} .\n")
                ticker = iri.rsplit("#", 1)[1]
                rows_out.write(f"{ticker},{_csv(name)},{_csv(sector)}\n")
    return nt, table


def _csv(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\n') else value


def read_kb(path: Path) -> frozenset[Triple]:
    """The KB file's triples."""
    from pyoxigraph import RdfFormat, parse

    return frozenset(
        Triple(q.subject, q.predicate, q.object)
        for q in parse(path=str(path), format=RdfFormat.N_TRIPLES)
    )


def read_store_events(path: Path) -> Iterator[Event]:
    """The events of the Parquet event store that :func:`write_events` writes, without
    Spark (:func:`rsep.spark.eventstore.read_store_events`: files in path order, each
    file's rows sorted by time and event, events built column by column), the stores of
    several streams merged in time order (as one N-Quads file holds them)."""
    import heapq

    from rsep.spark.eventstore import read_store_events as read

    parts = sorted(p for p in path.iterdir() if p.is_dir() and p.name.isdigit())
    if len(parts) < 2:  # one stream (or a store written before stores per stream)
        return read(path)
    return heapq.merge(*(read(part) for part in parts), key=lambda event: event.t_start)


def read_nquads_events(path: Path) -> Iterator[Event]:
    """The events of the N-Quads file (:func:`rsep.rdf.formats.read_events`)."""
    from rsep.rdf.formats import read_events

    return read_events(path)


# Answers ------------------------------------------------------------------------------------


class Match(NamedTuple):
    """One answer of a workload without a baseline of its own, as every rsep system gives
    it: the time, the interval, and the bindings in N-Triples syntax, sorted by name."""

    time: int
    interval: tuple[int, int] | None
    bindings: tuple[tuple[str, str], ...]


def match_of(result: Result) -> Match:
    """An rsep result as a :class:`Match`."""
    if not isinstance(result, SelectResult):
        raise UserError("the benchmark queries answer with SELECT results")
    bindings = tuple(sorted((name, str(term)) for name, term in result.bindings.items()))
    return Match(result.time, result.interval, bindings)


def answer_of(result: Result, steps: int) -> Answer:
    """An rsep result of the V-shape query as an :class:`Answer`."""
    if not isinstance(result, SelectResult):
        raise UserError("the V-shape query answers with SELECT results")
    b = result.bindings
    company = b["company"]

    def text(name: str) -> str:
        term = b[name]
        return term.value if isinstance(term, Literal | NamedNode) else str(term)

    prices = tuple(float(text(f"p{i + 1}")) for i in range(steps))
    iri = company.value if isinstance(company, NamedNode) else str(company)
    return Answer(iri, prices, result.time, text("name"), text("sector"))


# Measuring ----------------------------------------------------------------------------------


class RssSampler:
    """Peak resident memory of a process and (``tree``) its descendants, sampled from
    ``/proc`` every ``every`` seconds by a thread (Linux; elsewhere ``ru_maxrss`` of this
    process)."""

    def __init__(self, pid: int | None = None, every: float = 0.05, *, tree: bool = True) -> None:
        self.pid = pid if pid is not None else os.getpid()
        self.tree = tree
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> RssSampler:
        self.peak = self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.sample())

    @property
    def peak_mib(self) -> float:
        """The peak seen, in MiB."""
        return self.peak / 2**20

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self.sample())

    def sample(self) -> int:
        """Resident bytes of the process tree now."""
        if not Path("/proc").is_dir():  # pragma: no cover - not Linux
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        total = 0
        page = os.sysconf("SC_PAGE_SIZE")
        for pid in [p for p, _ in process_tree(self.pid)] if self.tree else [self.pid]:
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        return total


def process_tree(pid: int) -> list[tuple[int, list[str]]]:
    """A process and its living descendants, each with the fields of its ``/proc/PID/stat``
    after the command name (Linux)."""
    stats: dict[int, list[str]] = {}
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        found = todo.pop()
        if found in stats:
            out.append((found, stats[found]))
        todo.extend(children.get(found, []))
    return out


def tree_cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user and system) a process tree has used so far: each living
    process's own and those of its ended children it waited for (``utime``, ``stime``,
    ``cutime``, ``cstime``), so a Spark driver counts its JVM and the JVM's Python
    workers, even those that ended; this process's ``process_time`` off Linux."""
    if not Path("/proc").is_dir():  # pragma: no cover - not Linux
        return time.process_time()
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for _, fields in process_tree(os.getpid() if pid is None else pid):
        total += sum(int(value) for value in fields[11:15])  # stat fields 14-17
    return total / ticks


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values``, nearest rank."""
    if not values:
        raise UserError("no values to take a percentile of")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# The modules each system's and each source's measured code imports where it runs
# (imported lazily, so that importing this module stays cheap): :func:`measure` imports them
# before the clock, so that no point's time includes the import of its reader or engine.
_MODULES: dict[str, tuple[str, ...]] = {
    "rsep": (
        "rsep.api.driver",
        "rsep.engine",
        "rsep.engine.batch",
        "rsep.engine.sequence",
        "rsep.semantics.csrbench",
        "rsep.spark.columnar",
    ),
    "rsep-live": ("rsep.api.driver", "rsep.engine"),
    "spark": ("rsep.spark.replay",),
    "oracle": ("rsep.rdf.event", "rsep.semantics"),
    "naive": ("rsep.workloads.baselines",),
    "vectorised": ("rsep.workloads.vectorised", "pyarrow.parquet", "rsep.engine.batch"),
}
_SOURCE_MODULES: dict[str, tuple[str, ...]] = {
    "parquet": ("rsep.spark.eventstore",),
    "nquads": ("rsep.rdf.formats",),
}


def measure(point: Point, data: Data) -> Measurement:
    """Measure ``point`` over ``data`` in this process (the harness calls it in a child
    process per point: :func:`run_point`). The measured section reads the events from
    their file and evaluates the pattern; counts come from the answers."""
    from rsep.workloads.catalog import workload

    check_system(point)
    if point.system == "flink":
        from rsep.workloads.flink import run_flink

        return run_flink(point, data)
    out = Measurement(point)
    kb = read_kb(data.kb)
    # parsing and compiling the query is not in the measured time (nor the first parse of
    # its GPMs' patterns, which builds the SPARQL parser once per process)
    query = _query(point.shape, point.workload)
    plan = query.plan
    if point.system == "rsep":
        from rsep.engine.sequence import columnar_reason

        columnar_reason(plan)
    for module in _MODULES.get(point.system, ()) + _SOURCE_MODULES.get(point.source, ()):
        importlib.import_module(module)  # nor is importing what the measured code imports
    if point.system == "spark":  # nor is starting the Spark session
        from rsep.spark.session import get_session

        get_session()
    answers: list[Any]  # rsep's results, or a baseline's answers
    clock = tree_cpu_seconds if point.system == "spark" else time.process_time
    # an in-process system's own memory (a JVM a Spark session left in this process is not
    # its), Spark's with its JVM and Python workers
    with RssSampler(tree=point.system == "spark") as rss:
        started, cpu = time.perf_counter(), clock()
        if point.system == "rsep":
            answers, events = _rsep_local(point, query, data, kb)
        elif point.system == "rsep-live":
            answers, events, latencies, fed = _rsep_live(point, query, data, kb)
            out.latency_p50_ms = percentile(latencies, 0.5) * 1000 if latencies else None
            out.latency_p99_ms = percentile(latencies, 0.99) * 1000 if latencies else None
            # the measured time also holds the query's start and the table's reading: the
            # rate the feed kept is the one the latencies are at
            out.note = f"fed {triples_of(data, events) / fed:,.0f} triples/s over {fed:.2f} s"
        elif point.system == "read":
            answers, events = [], sum(1 for _ in _source(point, data))
        elif point.system == "spark":
            answers, events = _spark(point, query, data, kb)
        elif point.system == "oracle":
            answers, events = _oracle(point, query, data, kb)
        elif point.system == "naive":
            answers, events = _naive(point, data, kb)
        elif point.system == "vectorised":
            from rsep.workloads.vectorised import vectorised_vshape

            answers, events = vectorised_vshape(data.store, kb, point.shape)
        else:
            raise UserError(f"unknown system {point.system!r}: {', '.join(SYSTEMS)}")
        out.seconds = time.perf_counter() - started
        out.cpu_seconds = clock() - cpu
    out.events, out.triples = events, triples_of(data, events)
    if workload(point.workload).baseline:  # the form the V shape's baselines give
        answers = [
            answer_of(r, point.shape.steps) if isinstance(r, SelectResult) else r for r in answers
        ]
    else:
        answers = [match_of(r) for r in cast(list[Result], answers)]
    out.answers = sort_answers(answers)
    out.results = len(out.answers)
    out.digest = answers_digest(out.answers)
    out.peak_rss_mib = rss.peak_mib
    out.load = os.getloadavg()
    return out


def check_system(point: Point) -> None:
    """Refuse a system the point's workload does not run on (its catalog entry)."""
    from rsep.workloads.catalog import workload

    known = workload(point.workload).systems
    if point.system not in known:
        raise UserError(
            f"workload {point.workload!r} runs on {', '.join(known)}, not {point.system!r}"
        )


def triples_of(data: Data, events: int) -> int:
    """The triples of the first ``events`` events of ``data`` (all of them when ``events``
    is the whole; else by the mean per event)."""
    return data.triples if events == data.events else round(events * data.triples / data.events)


def sort_answers(answers: Iterable[Any]) -> list[Any]:
    """The distinct answers in one order, whichever system gave them (time first)."""
    return sorted(set(answers), key=_order)


def answers_digest(answers: Sequence[Any]) -> str:
    """A SHA-256 of sorted answers (:func:`sort_answers`): equal for equal answers."""
    import hashlib

    digest = hashlib.sha256()
    for answer in answers:
        digest.update(repr(answer).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def check_answers(measurements: Sequence[Measurement]) -> list[str]:
    """Points that differ in system or source only must give the same answers: each one
    whose answers differ from the first measured of its kind gets a note saying so; the
    notes' texts. ``read`` answers nothing and failed points are left out."""
    first: dict[tuple[Any, ...], Measurement] = {}
    found: list[str] = []
    for m in measurements:
        p = m.point
        if p.system == "read" or not m.digest:
            continue
        key = (p.workload, p.events, p.shape, p.kb_triples)
        other = first.setdefault(key, m)
        if other.digest != m.digest:
            text = (
                f"answers differ from {other.point.system}/{other.point.source}'s "
                f"({m.results:,} against {other.results:,})"
            )
            m.note = f"{m.note}; {text}" if m.note else text
            found.append(f"{p.label()}: {text}")
    return found


def _order(answer: Any) -> Any:
    if isinstance(answer, Answer):
        return answer.time, answer.company, answer.prices
    return answer


def _query(shape: VShape, workload: str = "stock-vshape") -> Query:
    """The query of the workload (of ``shape`` where it takes one), compiled."""
    from rsep.api import Query
    from rsep.workloads.catalog import workload as entry

    chosen = entry(workload)
    return Query(chosen.query(shape), chosen.dialect)


class _Counted:
    """Events passed through, counted (the engine never sees a list of them all)."""

    def __init__(self, events: Iterable[Event]) -> None:
        self.events = events
        self.count = 0

    def __iter__(self) -> Iterator[Event]:
        for event in self.events:
            self.count += 1
            yield event


def _source(point: Point, data: Data) -> Iterator[Event]:
    if point.source == "parquet":
        return read_store_events(data.store)
    if point.source == "nquads":
        return read_nquads_events(data.nquads)
    raise UserError(f"unknown source {point.source!r}: {', '.join(SOURCES)}")


def _batches(events: Iterable[_T], size: int) -> Iterator[list[_T]]:
    """``events`` in lists of ``size`` (the last shorter)."""
    batch: list[_T] = []
    for event in events:
        batch.append(event)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _files(point: Point, data: Data) -> list[Path]:
    """The stream files the point's rsep reads: the N-Quads file, or the event store (its
    numbered stores, one per stream, where it has them)."""
    if point.source == "nquads":
        return [data.nquads]
    if point.source != "parquet":
        raise UserError(f"unknown source {point.source!r}: {', '.join(SOURCES)}")
    parts = sorted(p for p in data.store.iterdir() if p.is_dir() and p.name.isdigit())
    return parts or [data.store]


def _rsep_local(
    point: Point, query: Query, data: Data, kb: frozenset[Triple]
) -> tuple[list[Result], int]:
    """The engine in this process over the point's files, as ``rsep run --engine local``
    runs it (:meth:`rsep.api.Query.run`: the columnar engine over batches read straight
    from the files for the plans it takes, else the incremental engine fed in batches)."""
    answers = query.run(_files(point, data), {data.kb_graph: kb}, engine="local")
    return list(answers), answers.events


LIVE_TICK = 0.01
"""Seconds between two micro-batches of ``rsep-live`` (a live source's trigger): an
event waits for the next one, so its latency includes up to this wait."""


def _rsep_live(
    point: Point, query: Query, data: Data, kb: frozenset[Triple]
) -> tuple[list[Result], int, list[float], float]:
    """The engine fed at ``point.rate`` triples/s in micro-batches of what has arrived,
    one every :data:`LIVE_TICK` seconds (at once when the engine is behind), by the
    API's incremental form (:meth:`rsep.api.Incremental.feed`, the one driver loop),
    each micro-batch a table of triples (the rows a live source hands
    on, read into the columnar engine's batches): an event's arrival is the wall-clock
    time it was due; an answer's latency is its emission minus the arrival of the last
    event at or before its time (the last the answer can depend on: for a sequence, the
    event that completed it; for a window, the last event it holds). The stream is read
    into one table before the clock starts, so that the rate is the feed's, not the
    parser's. Also the seconds from the clock's start to the last micro-batch handed on."""
    import numpy as np
    import pyarrow.compute as pc

    from rsep.api import read_table

    running = query.incremental({data.kb_graph: kb})
    table = read_table(_files(point, data))
    ids = pc.dictionary_encode(table.column("event_id")).combine_chunks().indices.to_numpy()
    firsts = np.concatenate([[0], np.flatnonzero(ids[1:] != ids[:-1]) + 1, [len(ids)]])
    times = table.column("t_end").to_numpy()[firsts[:-1]]
    count = len(times)
    per_event = data.triples / data.events / point.rate
    start = time.perf_counter()
    fed = [start]

    def arriving() -> Iterator[pa.Table]:
        i, tick = 0, start
        while i < count:
            tick += LIVE_TICK
            pause = tick - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            else:  # behind: what is due goes now, the next tick counts from here
                tick -= pause
            due = min(count, int((time.perf_counter() - start) / per_event) + 1)
            if due > i:
                fed[0] = time.perf_counter()
                yield table.slice(int(firsts[i]), int(firsts[due] - firsts[i]))
                i = due

    emitted: list[float] = []
    answers: list[Result] = []
    for result in running.feed(arriving()):
        emitted.append(time.perf_counter())
        answers.append(result)
    last = np.searchsorted(times, [r.time for r in answers], side="right") - 1
    arrival = start + np.maximum(last, 0) * per_event
    return answers, count, (np.array(emitted) - arrival).tolist(), max(fed[0] - start, 1e-9)


def _spark(
    point: Point, query: Query, data: Data, kb: frozenset[Triple]
) -> tuple[list[Result], int]:
    """``Query.run(engine="spark")`` over the N-Quads file or the event store (``--engine
    spark``); :func:`measure` starts the session before the clock (its start-up is in
    ``total_seconds``)."""
    source = data.store if point.source == "parquet" else data.nquads
    answers = query.run(source, {data.kb_graph: kb}, engine="spark")
    return list(answers), answers.events


def _oracle(
    point: Point, query: Query, data: Data, kb: frozenset[Triple]
) -> tuple[list[Result], int]:
    """``Query.run(engine="reference")``: the oracle (``rsep.semantics.evaluate``) over the
    point's files read in full."""
    answers = query.run(_files(point, data), {data.kb_graph: kb}, engine="reference")
    return list(answers), answers.events


def _naive(point: Point, data: Data, kb: frozenset[Triple]) -> tuple[list[Answer], int]:
    """The naive baseline (:func:`rsep.workloads.baselines.naive_vshape`)."""
    from rsep.workloads.baselines import kb_store, naive_vshape

    counted = _Counted(_source(point, data))
    answers = list(naive_vshape(counted, kb_store(kb), point.shape))
    return answers, counted.count


# Points in child processes -------------------------------------------------------------------


def run_point(point: Point, data: Data, timeout: float = 900.0) -> Measurement:
    """Measure ``point`` in a fresh child process (its own interpreter, so peak memory and
    imports are its own), sampling the RSS of the child's process tree; a point that
    fails or runs past ``timeout`` seconds comes back with a note saying so."""
    if point.system == "flink":
        from rsep.workloads.flink import run_flink

        return run_flink(point, data, timeout=timeout)
    spec = json.dumps(
        {"point": asdict(point), "data": {k: str(v) for k, v in asdict(data).items()}}
    )
    command = [sys.executable, "-m", "rsep.workloads.bench", spec]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with RssSampler(process.pid, every=0.1) as rss:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            return Measurement(point, note=f"stopped after {timeout:.0f} s", load=os.getloadavg())
    total = time.perf_counter() - started
    if process.returncode != 0:
        tail = stderr.strip().splitlines()[-3:]
        return Measurement(point, note="failed: " + " / ".join(tail), load=os.getloadavg())
    out = Measurement.from_json(json.loads(stdout.strip().splitlines()[-1]))
    out.total_seconds = total
    out.peak_rss_mib = max(out.peak_rss_mib, rss.peak_mib)
    return out


def data_from_json(raw: dict[str, str]) -> Data:
    """A :class:`Data` from its JSON form (paths as strings)."""
    return Data(
        Path(raw["csv"]),
        Path(raw["nquads"]),
        Path(raw["store"]),
        Path(raw["kb"]),
        Path(raw["kb_csv"]),
        int(raw["events"]),
        int(raw["triples"]),
        raw.get("kb_graph", KB_GRAPH),
    )


def _child(argv: Sequence[str]) -> int:
    """``python -m rsep.workloads.bench SPEC``: measure one point, print it as JSON."""
    spec = json.loads(argv[0])
    point, data = point_from_json(spec["point"]), data_from_json(spec["data"])
    if len(argv) > 1 and argv[1] == "--profile":
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        result = measure(point, data)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(35)
    else:
        result = measure(point, data)
    print(json.dumps(result.to_json()))
    return 0


# Sweeps and reports ------------------------------------------------------------------------


def sweep(base: Point, **values: Sequence[Any]) -> list[Point]:
    """The points of ``base`` with one parameter varied at a time over ``values`` (keys:
    ``events``, ``window_ms``, ``steps``, ``strategy``, ``kb_triples``, ``system``,
    ``source``); no values: ``base`` alone."""
    points: list[Point] = []
    for key, options in values.items():
        for value in options:
            if key in ("window_ms", "steps", "strategy"):
                point = replace(base, shape=replace(base.shape, **{key: value}))
            else:
                point = replace(base, **{key: value})
            if point not in points:
                points.append(point)
    return points or [base]


def machine() -> dict[str, str]:
    """The machine the figures were taken on: cores, memory, Python, Java, load average."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    try:
        java = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, timeout=30
        ).stderr.splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        java = "no java"
    load = os.getloadavg()
    return {
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem:.0f} GiB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "java": java,
        "load": f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def markdown_table(measurements: Sequence[Measurement]) -> str:
    """The measurements as a Markdown table, one row per point."""
    from rsep.workloads.catalog import workload

    head = (
        "| system | source | events | window | steps | strategy | KB triples | results "
        "| time (s) | CPU (s) | events/s | triples/s | peak RSS (MiB) | p50 / p99 latency (ms) "
        "| load (1 min) | note |\n"
        "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | ---: | --- |"
    )
    rows = [head]
    for m in measurements:
        p = m.point
        shape = (
            f"{p.shape.window_ms // 60_000} min | {p.shape.steps} | {p.shape.strategy}"
            if workload(p.workload).shaped
            else "- | - | -"
        )
        latency = (
            f"{m.latency_p50_ms:,.1f} / {m.latency_p99_ms:,.1f}"
            if m.latency_p50_ms is not None and m.latency_p99_ms is not None
            else ""
        )
        source = (
            p.source
            if p.system in ("rsep", "rsep-live", "read", "spark")
            else "csv"
            if p.system == "flink"
            else "parquet"
            if p.system == "vectorised"
            else "nquads"
        )
        rows.append(
            f"| {p.system} | {source} | {p.events:,} | {shape} | {p.kb_triples:,} "
            f"| {m.results:,} | {m.seconds:,.2f} | {m.cpu_seconds:,.2f} "
            f"| {m.events_per_second:,.0f} | {m.triples_per_second:,.0f} "
            f"| {m.peak_rss_mib:,.0f} | {latency} | {m.load[0]:.1f} | {m.note} |"
        )
    return "\n".join(rows)


def plot(measurements: Sequence[Measurement], path: Path, varied: str) -> Path | None:
    """Throughput (triples/s, log scale) against the ``varied`` parameter, one line per
    system and source, as PNG or SVG (by ``path``'s suffix); None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    lines: dict[str, list[tuple[Any, float]]] = {}
    for m in measurements:
        if not m.seconds:
            continue
        key = m.point.system + (f" ({m.point.source})" if m.point.system.startswith("rsep") else "")
        lines.setdefault(key, []).append((_value(m.point, varied), m.triples_per_second))
    figure, axes = plt.subplots(figsize=(7, 4))
    for key, values in sorted(lines.items()):
        xs, ys = zip(*values, strict=True)
        axes.plot([str(x) for x in xs], ys, marker="o", label=key)
    axes.set_yscale("log")
    axes.set_xlabel(varied)
    axes.set_ylabel("triples/s")
    axes.set_title(f"{measurements[0].point.workload}: throughput against {varied}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


def _value(point: Point, varied: str) -> Any:
    if varied in ("window_ms", "steps", "strategy"):
        value = getattr(point.shape, varied)
        return value // 60_000 if varied == "window_ms" else value
    return getattr(point, varied)


def record(
    doc: Path, title: str, command: str, measurements: Sequence[Measurement], images: Sequence[Path]
) -> None:
    """Append or replace the section ``### title`` of ``doc`` (docs/benchmarks.md) with the
    machine, the command and the table (and the plot when there is one)."""
    info = machine()
    lines = [
        f"### {title}",
        "",
        f"Machine: {info['cores']} cores ({info['cpu']}), {info['memory']}, {info['os']}, "
        f"Python {info['python']}, {info['java']}; load average at the end "
        f"{info['load']}; {info['date']}. Command: `{command}`.",
        "",
        markdown_table(measurements),
        "",
    ]
    for image in images:
        lines += [f"![{title}: {image.stem}]({os.path.relpath(image, doc.parent)})", ""]
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    section = "\n".join(lines)
    marker = f"### {title}\n"
    if marker in text:
        before, rest = text.split(marker, 1)
        after = rest.split("\n### ", 1)
        tail = "\n### " + after[1] if len(after) > 1 else ""
        text = before + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


def run_sweep(
    points: Sequence[Point],
    data_of: Callable[[Point], Data],
    isolate: bool = True,
    progress: Callable[[Measurement], None] | None = None,
    timeout: float = 900.0,
) -> list[Measurement]:
    """Measure every point (each in its own process when ``isolate``, stopped after
    ``timeout`` seconds)."""
    out = []
    for point in points:
        data = data_of(point)
        m = run_point(point, data, timeout) if isolate else measure(point, data)
        out.append(m)
        if progress is not None:
            progress(m)
    return out


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
