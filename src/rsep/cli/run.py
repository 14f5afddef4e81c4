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
tasks, as a batch replay of files or, with a live source, as a Structured Streaming query
whose answers come out as the watermark passes them (``--set lateness=…`` allows late
events); ``local`` runs the same engine in this process; ``reference`` is the oracle
(RSP-QL Def. 24, and the event patterns of RSEP-QL, EP-SPARQL, CQELS-CEP and SPAseq). The
command is argument parsing and printing over the public API (:class:`rsep.api.Query`:
:meth:`~rsep.api.Query.run`, :meth:`~rsep.api.Query.live`). Results are JSON Lines
(:mod:`rsep.rdf.results`) on standard output, in ``--output FILE`` or produced to
``--output kafka://host:port/topic``. Progress (records read, records/s, results, elapsed;
live: late events and dead letters) goes to standard error every few seconds when it is a
terminal, or with ``--progress``; never with ``--quiet``. Bad input exits 1 with
``file:line: reason``; with ``--on-error skip`` each bad record is counted and written to
``--dead-letter`` instead (a live query, or a run over stream files in this process), and
a live query's late events to ``--late`` (docs/live.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from rsep.algebra.params import Profile
from rsep.api import Answers, Query, check_engine
from rsep.api.live import Live, address
from rsep.cli.options import add_query_arguments, pair, query_base, read_query, settings
from rsep.errors import BadRecords, UserError
from rsep.rdf.results import Result


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
            "socket://host:port (one event per line; at most once: lines sent while the "
            "query is down or not yet committed when it stops are lost) or, with --live, a "
            "folder of arriving "
            "files; options after ?: format=nquads|trig|jsonld|tnt, starting=earliest|latest, "
            "max=N (records per trigger, shared by a topic's partitions in event-time order), "
            "errors=stop|skip (default: --on-error). A SOURCE alone keeps the streams "
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
        "kafka://host:port/topic. A live query writes a FILE or topic exactly once (a run "
        "killed and started again with its --checkpoint writes no answer twice and loses "
        "none); standard output at least once (a killed run may repeat the answers of its "
        "last micro-batch)",
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
        "DIR, even after a kill, continues where the last stopped; with --output FILE, a "
        "folder or a topic no answer is lost or repeated (standard output may repeat the "
        "last micro-batch's); kafka:// and folder sources are read again from where the "
        "last committed micro-batch ended, a socket's lines received and not committed are "
        "lost (at most once) (default: a temporary folder, removed at the end)",
    )
    live.add_argument(
        "--late",
        metavar="TARGET",
        help="write events that come after the watermark passed their time (beyond --set "
        "lateness) to TARGET, a FILE or kafka://host:port/topic, as JSON Lines (source, "
        "stream, times, triples, the watermark); they are counted in any case",
    )
    live.add_argument(
        "--dead-letter",
        dest="dead_letter",
        metavar="TARGET",
        help="with --on-error skip, write each bad record (source, position: file:line or "
        "topic:partition:offset, reason, the record) to TARGET, a FILE or (live) kafka://…; "
        "they are counted in any case",
    )
    live.add_argument(
        "--idle",
        type=float,
        metavar="SECONDS",
        help="leave a source (a folder, a socket, a topic's partition) that brought nothing "
        "for this long out of the watermark, so the others' answers come out (default: a "
        "silent source holds the watermark back)",
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
        "--on-error",
        dest="on_error",
        choices=["stop", "skip"],
        default="stop",
        help="a bad record stops the run with file:line: reason (stop, the default) or is "
        "skipped, counted and written to --dead-letter (skip: live queries, and runs over "
        "stream files on --engine local or reference)",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress and rates on standard error even when it is not a terminal",
    )
    p.add_argument("--quiet", action="store_true", help="no progress, no summary")
    p.set_defaults(run=run)


def query_of(args: argparse.Namespace) -> Query:
    """The command's query in ``--dialect`` (or detected), with ``--set`` and ``--profile``,
    reading the derivations of the ``--rules`` queries; an error of a rule names its file."""
    query = Query(
        read_query(args.query),
        args.dialect,
        base=query_base(args.query),
        profile=getattr(args, "profile", None),
        parameters=settings(args.settings),
    )
    for file in getattr(args, "rules", None) or []:
        try:  # a rule keeps only its pattern and template: no --set, no --profile
            query = query.with_rules(Query(read_query(file), args.dialect, base=query_base(file)))
        except UserError as exc:
            raise UserError(f"--rules {file}: {exc}") from None
    return query


def graph_files(items: list[str]) -> dict[str, Path]:
    """The files of ``--graph IRI=FILE`` options by IRI (an IRI given twice is refused)."""
    graphs: dict[str, Path] = {}
    for item in items:
        iri, path = pair(item, "--graph")
        if iri in graphs:
            raise UserError(f"--graph {iri} given twice")
        graphs[iri] = Path(path)
    return graphs


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
        self.late: int | None = None
        """Late events (``None``: not a live query)."""
        self.bad = 0
        """Bad records skipped."""
        self.inexact: int | None = None
        """Rows whose FILTER the columnar engine's programs could not decide, evaluated
        exactly (``None``: another engine ran)."""
        self.exact_instants: int | None = None
        """Evaluation instants pyoxigraph evaluated (``None``: not an RSP-QL pattern)."""
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
        if self.exact_instants:
            exact += f", {self.exact_instants:,} instants evaluated by pyoxigraph"
        late = "" if self.late is None else f", {self.late:,} late, {self.bad:,} bad records"
        print(
            f"rsep: {self.records:,} records read, {rate:,.0f} records/s, "
            f"{self.results:,} results{late}{exact}, "
            f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d} elapsed",
            file=self.out,
            flush=True,
        )

    def counted(self, results: Iterable[Result | str]) -> Iterator[Result | str]:
        """``results``, counted as they pass."""
        for result in results:
            yield result
            self.update(results=self.results + 1)


def _write(args: argparse.Namespace, answers: Answers, progress: Progress) -> int:
    """Write the answers as JSON Lines where ``--output`` says, with progress."""
    progress.inexact = answers.inexact_rows
    progress.exact_instants = answers.exact_instants
    counted = Answers(answers.form, progress.counted(answers.lines()), answers.events)
    target = args.out
    if target is None or target == "-":
        try:
            counted.write(sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (| head) has gone: not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        _finish(progress, answers.events, None)
        return 0
    count = counted.write(target)
    _finish(progress, answers.events, None)
    if not args.quiet:
        print(f"{count} result(s) written to {target}", file=sys.stderr)
    return 0


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
    if progress.exact_instants and not progress.quiet:
        print(
            f"rsep: {progress.exact_instants:,} evaluation instant(s) whose graph pattern "
            "the columnar solver does not take were evaluated by pyoxigraph (rsep explain "
            "says why)",
            file=progress.out,
            flush=True,
        )


# Live queries ------------------------------------------------------------------------------


def is_live(args: argparse.Namespace) -> bool:
    """Whether the command makes a live query: ``--live`` or a kafka/socket source."""
    return bool(args.live) or any(address(item) is not None for item in args.streams)


def run_live(args: argparse.Namespace, query: Query) -> int:
    """A live query (:meth:`rsep.api.Query.live`) from the command's sources to its output,
    with progress, until it ends, times out or is interrupted."""
    if args.engine != "spark":
        raise UserError("live sources need --engine spark")
    if args.start is not None or args.until is not None:
        raise UserError("--start and --until are for stream files; a live query runs on")
    live = query.live(
        args.streams,
        folders=args.live,
        graphs=graph_files(args.graphs),
        output=args.out,
        checkpoint=args.checkpoint,
        available_now=args.available_now,
        trigger=args.trigger,
        master=args.master,
        late=args.late,
        dead_letters=args.dead_letter,
        idle=args.idle,
        on_error=args.on_error,
    )
    progress = Progress.of(args)
    progress.late = 0
    try:
        while not live.wait(timeout=min(2.0, progress.every)):
            progress.late, progress.bad = live.tally.late, live.tally.bad
            progress.update(*live.progress())
            if args.timeout is not None and time.monotonic() - progress.started > args.timeout:
                break
    except KeyboardInterrupt:
        pass
    finally:
        live.stop()
    records, results = live.progress()
    progress.late, progress.bad = live.tally.late, live.tally.bad
    _finish(progress, records, results)
    if not args.quiet:
        _live_summary(args, live, results)
    return 0


def _live_summary(args: argparse.Namespace, live: Live, results: int) -> None:
    """Where a live query's answers, late events and dead letters went (never silent about
    the events it did not use)."""
    tally = live.tally
    if args.out not in (None, "-"):
        print(f"{results} result(s) written to {args.out}", file=sys.stderr)
    if tally.late:
        where = f"written to {args.late}" if args.late else "not kept: --late FILE keeps them"
        print(f"rsep: {tally.late:,} late event(s) left out ({where})", file=sys.stderr)
    if tally.bad:
        where = f"written to {args.dead_letter}" if args.dead_letter else "not kept"
        print(f"rsep: {tally.bad:,} bad record(s) skipped ({where})", file=sys.stderr)
        for letter in tally.first_bad[:3]:
            entry = json.loads(letter)
            print(f"  {entry['position']}: {entry['reason']}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Evaluate the query and write its results."""
    check_engine(args.engine)
    query = query_of(args)
    if args.dead_letter is not None and args.on_error != "skip":
        raise UserError("--dead-letter takes the bad records that --on-error skip skips")
    if is_live(args):
        return run_live(args, query)
    if args.late or args.idle is not None:
        raise UserError(
            "--late and --idle are for live queries; a run over stream files reads its "
            "events in time order, none late"
        )
    if args.dead_letter is not None and args.dead_letter.startswith("kafka:"):
        raise UserError("a run over stream files writes its dead letters to a FILE")
    progress = Progress.of(args)
    answers = query.run(
        args.streams,
        graph_files(args.graphs),
        engine=args.engine,
        until=args.until,
        start=args.start,
        master=args.master,
        pushed=lambda n: progress.update(records=n),
        on_error=args.on_error,
        dead_letters=args.dead_letter,
    )
    try:
        return _write(args, answers, progress)
    finally:
        if answers.bad is not None:
            answers.bad.close()
            if answers.bad.count and not args.quiet:
                _bad_summary(args, answers.bad)


def _bad_summary(args: argparse.Namespace, bad: BadRecords) -> None:
    """How many bad records a run over stream files skipped, where they went, the first
    few (never silent about the records it did not use)."""
    where = f"written to {args.dead_letter}" if args.dead_letter else "not kept"
    print(f"rsep: {bad.count:,} bad record(s) skipped ({where})", file=sys.stderr)
    for error in bad.first[:3]:
        print(f"  {error}", file=sys.stderr)
