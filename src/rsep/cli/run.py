"""``rsep run QUERY``: evaluate a continuous query over streams and write its results.

The query is parsed (``--dialect``, or detected), compiled to a plan (``--set``,
``--profile``), and evaluated by an engine over the streams and graphs given:

- ``--stream IRI=SOURCE`` (repeatable): the events of stream ``IRI``. A SOURCE is
  - a stream file in any format of :mod:`rsep.rdf.formats`, detected by its extension (TriG,
    N-Quads, timestamped N-Triples, JSON-LD, SPAseq descriptions), or a folder of CSR-Bench
    ``data_NN.ttl`` files (:func:`rsep.semantics.csrbench.read_stream`); files given for
    one IRI are merged in time order. ``--stream FILE`` keeps the streams the file names;
  - a live source (:mod:`rsep.spark.source`): ``kafka://host:port/topic`` (one event per
    message), ``socket://host:port`` (one event per text line), or, with ``--live``, a
    folder whose arriving files are read as they come. Options follow ``?``:
    ``format=nquads|trig|jsonld|tnt``, ``starting=earliest|latest`` (Kafka), ``max=N``
    (records per trigger), ``errors=stop|skip``;
- ``--graph IRI=FILE`` (repeatable): a static graph (Turtle, N-Triples, RDF/XML…) or, for a
  ``.trig`` file, a time-varying graph (:func:`rsep.semantics.read_time_varying_graph`);
- ``--rules QUERY`` (repeatable): an EP-SPARQL CONSTRUCT query of the same query set ``Q``,
  whose derived triples the query reads (the Q-closure, EP-SPARQL Sect. 4.2): its rule is
  part of the plan (:attr:`rsep.algebra.plan.Plan.rules`), so every engine reads it.

Engines (``--engine``): ``spark`` (the default) runs the incremental engine inside Spark
tasks, as a batch replay of files (:func:`rsep.spark.replay.run_on_spark`) or, with a live
source, as a Structured Streaming query (:func:`rsep.spark.live.start_live`) whose answers
come out as the watermark passes them (``--set lateness=…`` allows late events);
``local`` runs the same engine in this process; ``reference`` is the oracle
(:func:`rsep.semantics.evaluate`, RSP-QL Def. 24, and the event patterns of RSEP-QL,
EP-SPARQL, CQELS-CEP and SPAseq). Results are JSON Lines (:mod:`rsep.rdf.results`) on
standard output, in ``--output FILE`` or produced to ``--output kafka://host:port/topic``.
Progress (records read, records/s, results, elapsed) goes to standard error every few
seconds when it is a terminal, or with ``--progress``; never with ``--quiet``. Bad input
exits 1 with ``file:line: reason``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pyoxigraph import Triple

from rsep.algebra.compile import compile_query, with_rules
from rsep.algebra.params import Profile
from rsep.algebra.plan import Plan
from rsep.cli.options import add_query_arguments, pair, query_base, read_query, settings
from rsep.engine import incremental_query
from rsep.engine.batch import is_store, merge_batches, read_batches
from rsep.engine.sequence import SequenceQuery, columnar_reason
from rsep.errors import UserError
from rsep.lang import detect_dialect, get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import read_events
from rsep.rdf.results import Result, write_results
from rsep.rdf.time import TimeUnit
from rsep.semantics import evaluate, read_graph, read_time_varying_graph
from rsep.semantics.graph import Graph, TimeVaryingGraph
from rsep.spark.columnar import on_stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from rsep.spark.source import Source

ENGINES = ("reference", "local", "spark")
"""The engines ``--engine`` takes: the oracle, the incremental engine in this process, and
the same engine inside Spark tasks (:func:`rsep.spark.replay.run_on_spark`)."""


def add_data_arguments(p: Any) -> None:
    """The query, dialect, parameter, stream and graph options ``run`` and ``check`` share."""
    add_query_arguments(p)
    p.add_argument(
        "--stream",
        dest="streams",
        action="append",
        default=[],
        metavar="IRI=SOURCE",
        help=(
            "the events of stream IRI (repeatable) from a SOURCE: a stream file (any "
            "format, by extension), kafka://host:port/topic (one event per message), "
            "socket://host:port (one event per line) or, with --live, a folder of arriving "
            "files; options after ?: format=nquads|trig|jsonld|tnt, starting=earliest|latest, "
            "max=N (records per trigger), errors=stop|skip. A SOURCE alone keeps the streams "
            "its events name (SPAseq descriptions, N-Quads with rsep:stream)"
        ),
    )
    p.add_argument(
        "--graph",
        dest="graphs",
        action="append",
        default=[],
        metavar="IRI=FILE",
        help="a static graph (Turtle, N-Triples…) or a time-varying graph (.trig); repeatable",
    )
    add_rules_argument(p)


def add_rules_argument(p: Any) -> None:
    """``--rules QUERY`` (repeatable), for the commands that read a plan."""
    p.add_argument(
        "--rules",
        dest="rules",
        action="append",
        default=[],
        metavar="QUERY",
        help=(
            "an EP-SPARQL CONSTRUCT query whose derived triples the query reads (its Q-closure, "
            "EP-SPARQL Sect. 4.2), read in --dialect or its detected dialect; repeatable"
        ),
    )


def add_parser(commands: Any) -> None:
    """Register ``rsep run``."""
    p = commands.add_parser(
        "run",
        help="evaluate a continuous query over stream files and write JSON Lines results",
        description=(
            "Parse and compile QUERY, read the streams and graphs, evaluate the query with "
            "the engine and write the results as JSON Lines (docs/semantics.md)."
        ),
    )
    add_data_arguments(p)
    p.add_argument(
        "--engine",
        default="spark",
        metavar="NAME",
        help=(
            "spark (the default): the incremental engine in Spark tasks, a batch replay of "
            "files or a live query over live sources; local: the same engine in this "
            "process; reference: the oracle (the papers' definitions, literal and slow)"
        ),
    )
    p.add_argument(
        "--master",
        metavar="URL",
        help="Spark master for --engine spark: local[N] (default local[2]), spark://host:port "
        "or a Spark Connect sc:// URL",
    )
    p.add_argument(
        "--profile",
        choices=[profile.value for profile in Profile],
        help="engine profile whose reporting conventions to follow (default: the dialect's)",
    )
    p.add_argument("--start", type=int, metavar="MS", help="first instant evaluated (ms)")
    p.add_argument("--until", type=int, metavar="MS", help="last instant evaluated (ms)")
    p.add_argument(
        "--output",
        "--out",
        dest="out",
        metavar="TARGET",
        help="where the JSON Lines results go: - (standard output, the default), a FILE, or "
        "kafka://host:port/topic",
    )
    live = p.add_argument_group(
        "live queries",
        "A kafka:// or socket:// source, or --live, makes a live query (--engine spark): "
        "answers come out as the watermark passes them (it trails the latest event time by "
        "the plan's lateness: --set lateness=2s). It runs until interrupted (Ctrl-C), "
        "--timeout or, with --available-now, until what the sources hold is processed.",
    )
    live.add_argument(
        "--live",
        action="store_true",
        help="read --stream folders as live sources: files arriving in them are read as they come",
    )
    live.add_argument(
        "--checkpoint",
        type=Path,
        metavar="DIR",
        help="keep offsets, watermark and engine state here: a run started again with the same "
        "DIR continues where the last stopped, no answer lost or repeated (default: a "
        "temporary folder, removed at the end)",
    )
    live.add_argument(
        "--available-now",
        action="store_true",
        help="process what the sources hold now, then stop",
    )
    live.add_argument(
        "--trigger", metavar="INTERVAL", help='time between triggers, e.g. "1 second"'
    )
    live.add_argument("--timeout", type=float, metavar="SECONDS", help="stop after this long")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress and rates on standard error even when it is not a terminal",
    )
    p.add_argument("--quiet", action="store_true", help="no progress, no summary")
    p.set_defaults(run=run)


def _file_pair(item: str, option: str) -> tuple[str, Path]:
    iri, path = pair(item, option)
    return iri, Path(path)


def plan_of(args: argparse.Namespace) -> Plan:
    """The plan of the command's query, dialect, ``--set`` and ``--profile``, reading the
    derivations of the ``--rules`` queries (:func:`rsep.algebra.compile.with_rules`)."""
    text = read_query(args.query)
    dialect = get_dialect(args.dialect) if args.dialect else detect_dialect(text)
    query = parse_query(text, dialect, base=query_base(args.query))
    plan = compile_query(
        query, dialect, overrides=settings(args.settings), profile=getattr(args, "profile", None)
    )
    return attach_rules(plan, getattr(args, "rules", None) or [], args.dialect)


def attach_rules(plan: Plan, files: list[str], dialect_name: str | None) -> Plan:
    """``plan`` reading the derivations of the ``--rules`` queries ``files``
    (:func:`rsep.algebra.compile.with_rules`); an error names the file."""
    for file in files:
        try:
            plan = with_rules(plan, [_rule_plan(file, dialect_name)])
        except UserError as exc:
            raise UserError(f"--rules {file}: {exc}") from None
    return plan


def _rule_plan(file: str, dialect_name: str | None) -> Plan:
    """The plan of a ``--rules`` query, in ``--dialect`` or its detected dialect (the
    command's ``--set`` and ``--profile`` are the query's: a rule keeps only its pattern
    and template)."""
    text = read_query(file)
    dialect = get_dialect(dialect_name) if dialect_name else detect_dialect(text)
    return compile_query(parse_query(text, dialect, base=query_base(file)), dialect)


def read_streams(items: list[str], time_unit: TimeUnit = TimeUnit.MILLISECONDS) -> StreamSet:
    """The streams of ``--stream IRI=FILE`` options (module docstring); integer timestamps
    count ``time_unit`` (the plan's parameter ``time_unit``)."""
    from rsep.semantics.csrbench import is_csrbench_data, read_stream

    grouped: dict[str, list[Event]] = {}
    for item in items:
        if "=" not in item or Path(item).exists():  # a file that names its streams
            if is_store(Path(item)):
                from rsep.spark.eventstore import read_store_events

                named: Iterable[Event] = read_store_events(Path(item))
            else:
                named = read_events(Path(item), time_unit=time_unit)
            for event in named:
                grouped.setdefault(event.stream, []).append(event)
            continue
        iri, path = _file_pair(item, "--stream")
        if is_csrbench_data(path):
            events = list(read_stream(path, iri)[iri])
        elif is_store(path):
            from rsep.spark.eventstore import read_store_events

            events = list(read_store_events(path))
        else:
            events = list(read_events(path, stream=iri, time_unit=time_unit))
        for event in events:
            if event.stream != iri:  # a format that names its stream
                event = Event(iri, event.t_start, event.t_end, event.graph, event.id)
            grouped.setdefault(iri, []).append(event)
    return StreamSet(
        Stream(iri, tuple(sorted(events, key=lambda e: e.t_start)))
        for iri, events in grouped.items()
    )


def read_graphs(items: list[str]) -> dict[str, Graph | TimeVaryingGraph]:
    """The graphs of ``--graph IRI=FILE`` options: a ``.trig`` file is a time-varying
    graph, any other RDF file a static graph."""
    graphs: dict[str, Graph | TimeVaryingGraph] = {}
    for item in items:
        iri, path = _file_pair(item, "--graph")
        if iri in graphs:
            raise UserError(f"--graph {iri} given twice")
        if not path.exists():
            raise UserError(f"{path}: no such file")
        name = path.name.lower().removesuffix(".gz")
        graphs[iri] = read_time_varying_graph(path) if name.endswith(".trig") else read_graph(path)
    return graphs


def check_engine(name: str) -> None:
    """Refuse an engine rsep does not have."""
    if name not in ENGINES:
        raise UserError(
            f"unknown engine {name!r}: 'reference' (the oracle), 'local' (the incremental "
            "engine in one process) or 'spark' (the engine inside Spark tasks)"
        )


def _absolute(item: str) -> str:
    """A ``--stream`` value with its file as an absolute path."""
    if "=" not in item or Path(item).exists():
        return str(Path(item).resolve())
    iri, path = pair(item, "--stream")
    return f"{iri}={Path(path).resolve()}"


def static_graphs(graphs: Mapping[str, Graph | TimeVaryingGraph]) -> dict[str, frozenset[Triple]]:
    """The graphs as the engine takes them: static sets of triples (a time-varying graph
    that changes is refused: the engine does not read those yet)."""
    out: dict[str, frozenset[Triple]] = {}
    for iri, graph in graphs.items():
        if isinstance(graph, TimeVaryingGraph):
            if graph.changes():
                raise UserError(
                    f"<{iri}> is a time-varying graph; the engine reads static graphs only "
                    "(use --engine reference)"
                )
            graph = graph.at(0)
        out[iri] = frozenset(graph)
    return out


def run_local(
    plan: Plan,
    streams: StreamSet,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    until: int | None = None,
    batch: int = 1024,
    pushed: Callable[[int], None] | None = None,
) -> Iterator[Result]:
    """The plan's results from the engine in this process
    (:func:`rsep.engine.incremental_query`: the columnar engine for the SPAseq plans it
    takes): the events in time order, pushed in batches of ``batch``, the watermark advanced
    to each batch's last time once no later event shares it, then ``finish(until)``;
    ``pushed`` hears the count of events pushed so far."""
    events = sorted(streams.events(), key=lambda e: (e.t_end, e.t_start))
    incremental = incremental_query(plan, static_graphs(graphs))
    if until is not None:  # an answer at t <= until reads no later event
        events = [e for e in events if e.t_end <= until]
    for start in range(0, len(events), batch):
        chunk = events[start : start + batch]
        yield from incremental.push(chunk)
        if pushed is not None:
            pushed(start + len(chunk))
        following = events[start + batch] if start + batch < len(events) else None
        if following is None or following.t_end > chunk[-1].t_end:
            yield from incremental.advance(chunk[-1].t_end)  # nothing more comes at that time
    yield from incremental.finish(until)


@dataclass
class Done:
    """The answers an engine gave over the ``--stream`` files, as result objects or as
    their JSON Lines texts (:mod:`rsep.spark.job`: never parsed here), with the events it
    read and, for the columnar engine, the rows whose FILTER its programs could not decide
    and were evaluated exactly (``None``: another engine)."""

    answers: Iterable[Result | str]
    events: int
    inexact_rows: int | None = None


def run_files(
    plan: Plan,
    items: list[str],
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    until: int | None = None,
) -> Done | None:
    """The results of a plan the columnar engine takes over ``--stream`` files read
    straight into batches (N-Quads and the event store by vectorised readers); ``None``
    when the plan or an input needs the other path."""
    from rsep.semantics.csrbench import is_csrbench_data

    if columnar_reason(plan) is not None:
        return None
    inputs: list[tuple[str | None, Path]] = []
    for item in items:
        if "=" not in item or Path(item).exists():
            inputs.append((None, Path(item)))
            continue
        iri, path = _file_pair(item, "--stream")
        if is_csrbench_data(path):
            return None
        inputs.append((iri, path))
    query = SequenceQuery(plan, static_graphs(graphs))
    unit = plan.parameters.time_unit
    sources = [
        on_stream(read_batches(path, iri, query.dictionary, time_unit=unit), iri)
        for iri, path in inputs
    ]
    results = query.run(merge_batches(sources), until)
    return Done(results, query.stats.events, query.stats.inexact_rows)


class Progress:
    """Progress and rates of a run on standard error (records read, records/s, results,
    elapsed), at most every ``every`` seconds; silent unless ``enabled``."""

    def __init__(self, enabled: bool, out: IO[str] | None = None, every: float = 5.0) -> None:
        self.enabled = enabled
        self.out = out if out is not None else sys.stderr
        self.every = every
        self.started = time.monotonic()
        self.shown = self.started
        self.records = 0
        self.results = 0
        self.inexact: int | None = None
        """Rows whose FILTER the columnar engine's programs could not decide, evaluated
        exactly (``None``: another engine ran)."""
        self.asked = False
        """``--progress``: the last line is shown even after a short run."""
        self.quiet = False
        """``--quiet``: no summary either."""

    @classmethod
    def of(cls, args: argparse.Namespace) -> Progress:
        """Shown with ``--progress``, or when standard error is a terminal; never ``--quiet``."""
        wanted = bool(args.progress) or sys.stderr.isatty()
        progress = cls(wanted and not args.quiet)
        progress.asked = bool(args.progress)
        progress.quiet = bool(args.quiet)
        return progress

    def update(self, records: int | None = None, results: int | None = None) -> None:
        """Note the counts so far; show them if the last line is old enough."""
        if records is not None:
            self.records = records
        if results is not None:
            self.results = results
        if time.monotonic() - self.shown >= self.every:
            self.show()

    def show(self) -> None:
        """Write the line now (when enabled)."""
        now = time.monotonic()
        self.shown = now
        if not self.enabled:
            return
        elapsed = now - self.started
        rate = self.records / elapsed if elapsed > 0 else 0.0
        minutes, seconds = divmod(int(elapsed), 60)
        exact = "" if self.inexact is None else f", {self.inexact:,} FILTER rows evaluated exactly"
        print(
            f"rsep: {self.records:,} records read, {rate:,.0f} records/s, "
            f"{self.results:,} results{exact}, "
            f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d} elapsed",
            file=self.out,
            flush=True,
        )

    def counted(self, results: Iterable[Result | str]) -> Iterator[Result | str]:
        """``results``, counted as they pass."""
        for result in results:
            yield result
            self.update(results=self.results + 1)


def _write(
    args: argparse.Namespace,
    plan: Plan,
    streams: StreamSet | None,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    done: Done | None = None,
) -> int:
    """Evaluate and write the results; ``done``: an engine's results over the files
    (``streams`` is then not read)."""
    progress = Progress.of(args)
    if done is not None:
        progress.update(records=done.events)
    elif streams is None:
        raise ValueError("no streams and no results")
    elif args.engine == "local":
        total = sum(len(stream) for stream in streams.values())
        done = Done(
            run_local(
                plan, streams, graphs, args.until, pushed=lambda n: progress.update(records=n)
            ),
            total,
        )
    else:
        total = sum(len(stream) for stream in streams.values())
        done = Done(evaluate(plan, streams, graphs, args.until, start=args.start), total)
        progress.update(records=total)
    progress.inexact = done.inexact_rows
    results = progress.counted(done.answers)
    target = args.out
    if target is None or target == "-":
        try:
            write_lines(results, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (| head) has gone: not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        _finish(progress, done.events, None)
        return 0
    if target.startswith("kafka:"):
        from rsep.spark.kafka import KafkaAddress, produce

        count = produce(KafkaAddress.parse(target), (_line(r) for r in results))
    else:
        try:
            with Path(target).open("w", encoding="utf-8") as out:
                count = write_lines(results, out)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
    _finish(progress, done.events, None)
    if not args.quiet:
        print(f"{count} result(s) written to {target}", file=sys.stderr)
    return 0


def write_lines(results: Iterable[Result | str], out: IO[str]) -> int:
    """Write results as JSON Lines (:func:`rsep.rdf.results.write_results`), a text already
    in that form as it is; return the count."""
    count = 0
    for result in results:
        if isinstance(result, str):
            out.write(result + "\n")
        else:
            write_results([result], out)
        count += 1
    return count


def _line(result: Result | str) -> str:
    """One result as its JSON Lines text (:mod:`rsep.rdf.results`)."""
    if isinstance(result, str):
        return result
    return json.dumps(result.to_json(), ensure_ascii=False, separators=(",", ":"))


def _finish(progress: Progress, records: int, results: int | None) -> None:
    """The last progress line, after a run that took a while or with ``--progress``; the
    rows whose FILTER was evaluated exactly, when there were some, whenever the run is not
    ``--quiet`` (never silent, issue 15)."""
    progress.update(records=records, results=results)
    if progress.asked or time.monotonic() - progress.started >= progress.every:
        progress.show()
        if progress.enabled:
            return
    if progress.inexact and not progress.quiet:
        print(
            f"rsep: {progress.inexact:,} solution row(s) whose FILTER the compiled "
            "programs could not decide were evaluated exactly (pyoxigraph)",
            file=progress.out,
            flush=True,
        )


# Live queries ------------------------------------------------------------------------------

_LIVE_SCHEMES = ("kafka:", "socket:")


def is_live(args: argparse.Namespace) -> bool:
    """Whether the command makes a live query: ``--live`` or a kafka/socket source."""
    return bool(args.live) or any(_live_address(item) is not None for item in args.streams)


def _live_address(item: str) -> tuple[str | None, str] | None:
    """``(IRI or None, address)`` of a ``--stream`` value naming a kafka or socket source."""
    if item.startswith(_LIVE_SCHEMES):
        return None, item
    if "=" in item:
        iri, value = pair(item, "--stream", "IRI=SOURCE")
        if value.startswith(_LIVE_SCHEMES):
            return iri, value
    return None


def live_sources(items: list[str], folders: bool) -> list[Source]:
    """The live sources of ``--stream`` values (module docstring); with ``folders``
    (``--live``) a folder is read as files arrive in it, and a plain file is refused."""
    from rsep.spark.source import source_of

    if not items:
        raise UserError("a live query needs a --stream source")
    sources = []
    for item in items:
        address = _live_address(item)
        if address is not None:
            sources.append(source_of(address[1], address[0]))
            continue
        iri, value = (
            (None, item)
            if "=" not in item or Path(item).exists()
            else pair(item, "--stream", "IRI=SOURCE")
        )
        if not folders or not Path(value).is_dir():
            raise UserError(
                f"--stream {item}: a live query reads kafka://, socket:// or, with --live, a "
                "folder of arriving files"
            )
        sources.append(source_of(value, iri))
    return sources


def _session(master: str | None) -> SparkSession:
    """The Spark session running in this process (tests share one), else a new one on
    ``master``."""
    from rsep.spark.session import get_session

    return get_session(master)


def run_live(args: argparse.Namespace, plan: Plan) -> int:
    """A live query (:func:`rsep.spark.live.start_live`) from the command's sources to its
    output, with progress, until it ends, times out or is interrupted."""
    from rsep.spark.live import start_live
    from rsep.spark.sink import TextSink, sink_of

    if args.engine != "spark":
        raise UserError("live sources need --engine spark")
    if args.start is not None or args.until is not None:
        raise UserError("--start and --until are for stream files; a live query runs on")
    sources = live_sources(args.streams, args.live)
    graphs = static_graphs(read_graphs(args.graphs))
    sink = sink_of(args.out)
    temporary = args.checkpoint is None
    checkpoint = Path(tempfile.mkdtemp(prefix="rsep-checkpoint-")) if temporary else args.checkpoint
    commits = checkpoint / "commits"
    if isinstance(sink, TextSink) and sink.path is not None and not commits.is_dir():
        try:
            sink.path.parent.mkdir(parents=True, exist_ok=True)
            sink.path.write_text("", encoding="utf-8")  # a new query: a new file
        except OSError as exc:
            raise UserError(f"cannot write {sink.path}: {exc.strerror or exc}") from None
    progress = Progress.of(args)
    try:
        live = start_live(
            _session(args.master),
            plan,
            sources,
            checkpoint,
            sink,
            graphs,
            available_now=args.available_now,
            interval=args.trigger,
        )
        counts: dict[int, tuple[int, int]] = {}
        try:
            while not live.wait(timeout=min(2.0, progress.every)):
                _tally(live.query.recentProgress, counts)
                progress.update(*_totals(counts, sink.written))
                if args.timeout is not None and time.monotonic() - progress.started > args.timeout:
                    break
        except KeyboardInterrupt:
            pass
        finally:
            live.stop()
        _tally(live.query.recentProgress, counts)
        records, results = _totals(counts, sink.written)
        _finish(progress, records, results)
        if not args.quiet and args.out not in (None, "-"):
            print(f"{results} result(s) written to {args.out}", file=sys.stderr)
        return 0
    finally:
        if temporary:
            shutil.rmtree(checkpoint, ignore_errors=True)


def _tally(reports: Iterable[Any], counts: dict[int, tuple[int, int]]) -> None:
    """Records read and answers written per micro-batch, from Spark's progress reports."""
    for report in reports:
        written = int((report.get("sink") or {}).get("numOutputRows", -1) or -1)
        counts[int(report["batchId"])] = (int(report.get("numInputRows") or 0), max(written, 0))


def _totals(counts: Mapping[int, tuple[int, int]], written: int) -> tuple[int, int]:
    """Records read, and answers written (counted by the sink, else by Spark)."""
    records = sum(count for count, _ in counts.values())
    return records, written or sum(count for _, count in counts.values())


def run(args: argparse.Namespace) -> int:
    """Evaluate the query and write its results."""
    check_engine(args.engine)
    plan = plan_of(args)
    if is_live(args):
        return run_live(args, plan)
    if args.engine != "reference" and args.start is not None:
        raise UserError("--start is for the reference engine; the engine starts at the data")
    graphs = read_graphs(args.graphs)
    if args.engine == "local":
        done = run_files(plan, args.streams, graphs, args.until)
        if done is not None:
            return _write(args, plan, None, graphs, done)
    if args.engine == "spark":  # Spark tasks read and evaluate: nothing parsed here
        from rsep.spark.replay import run_streamed

        items = [_absolute(item) for item in args.streams]  # the workers have their own cwd
        found = run_streamed(plan, items, static_graphs(graphs), args.until, args.master)
        done = Done(found.lines, found.events, found.inexact_rows)
        return _write(args, plan, None, graphs, done)
    streams = read_streams(args.streams, plan.parameters.time_unit)
    return _write(args, plan, streams, graphs)
