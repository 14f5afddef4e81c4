"""``rsep run QUERY``: evaluate a continuous query over finite streams and write its results.

The query is parsed (``--dialect``, or detected), compiled to a plan (``--set``,
``--profile``), and evaluated by an engine over the streams and graphs given:

- ``--stream IRI=FILE`` (repeatable): the events of stream ``IRI`` from a stream file in any
  format of :mod:`rsep.rdf.formats`, detected by its extension (TriG, N-Quads, timestamped
  N-Triples, JSON-LD, SPAseq descriptions), or a folder of CSR-Bench ``data_NN.ttl`` files
  (one event at NN s, :func:`rsep.semantics.csrbench.read_stream`). Files given for one IRI
  are merged in time order. ``--stream FILE`` keeps the streams the file names (a SPAseq
  description of several streams, N-Quads or TriG with ``rsep:stream``);
- ``--graph IRI=FILE`` (repeatable): a static graph (Turtle, N-Triples, RDF/XML…) or, for a
  ``.trig`` file, a time-varying graph (:func:`rsep.semantics.read_time_varying_graph`).

``--engine reference`` is the oracle (:func:`rsep.semantics.evaluate`, RSP-QL Def. 24, and
the event patterns of RSEP-QL, EP-SPARQL, CQELS-CEP and SPAseq): the only engine for now;
the Spark engine comes with issue 6. Results are JSON Lines (:mod:`rsep.rdf.results`) on
standard output or in ``--out``. Bad input exits 1 with
``file:line: reason``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pyoxigraph import Triple

from rsep.algebra.compile import compile_query
from rsep.algebra.params import Profile
from rsep.algebra.plan import Plan
from rsep.cli.options import add_query_arguments, pair, read_query, settings
from rsep.engine import incremental_query
from rsep.errors import UserError
from rsep.lang import detect_dialect, get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import read_events
from rsep.rdf.results import Result, write_results
from rsep.rdf.time import TimeUnit
from rsep.semantics import evaluate, read_graph, read_time_varying_graph
from rsep.semantics.graph import Graph, TimeVaryingGraph

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
        metavar="IRI=FILE",
        help=(
            "the events of stream IRI (any stream format, by extension; repeatable); a "
            "FILE alone keeps the streams the file names (SPAseq descriptions, N-Quads "
            "with rsep:stream)"
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
        default="reference",
        metavar="NAME",
        help=(
            "reference: the oracle (the papers' definitions, literal and slow; the default); "
            "local: the incremental engine in this process; spark: the engine in Spark tasks"
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
    p.add_argument("--out", type=Path, metavar="FILE", help="write the results here")
    p.set_defaults(run=run)


def _file_pair(item: str, option: str) -> tuple[str, Path]:
    iri, path = pair(item, option)
    return iri, Path(path)


def plan_of(args: argparse.Namespace) -> Plan:
    """The plan of the command's query, dialect, ``--set`` and ``--profile``."""
    text = read_query(args.query)
    dialect = get_dialect(args.dialect) if args.dialect else detect_dialect(text)
    query = parse_query(text, dialect)
    return compile_query(
        query, dialect, overrides=settings(args.settings), profile=getattr(args, "profile", None)
    )


def read_streams(items: list[str], time_unit: TimeUnit = TimeUnit.MILLISECONDS) -> StreamSet:
    """The streams of ``--stream IRI=FILE`` options (module docstring); integer timestamps
    count ``time_unit`` (the plan's parameter ``time_unit``)."""
    from rsep.semantics.csrbench import is_csrbench_data, read_stream

    grouped: dict[str, list[Event]] = {}
    for item in items:
        if "=" not in item or Path(item).exists():  # a file that names its streams
            for event in read_events(Path(item), time_unit=time_unit):
                grouped.setdefault(event.stream, []).append(event)
            continue
        iri, path = _file_pair(item, "--stream")
        if is_csrbench_data(path):
            events = list(read_stream(path, iri)[iri])
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
) -> Iterator[Result]:
    """The plan's results from the incremental engine in this process
    (:func:`rsep.engine.incremental_query`): the events in time order, pushed in batches of
    ``batch``, the watermark advanced to each batch's last time once no later event shares
    it, then ``finish(until)``."""
    query = incremental_query(plan, static_graphs(graphs))
    events = sorted(streams.events(), key=lambda e: (e.t_end, e.t_start))
    if until is not None:  # an answer at t <= until reads no later event
        events = [e for e in events if e.t_end <= until]
    for start in range(0, len(events), batch):
        chunk = events[start : start + batch]
        yield from query.push(chunk)
        following = events[start + batch] if start + batch < len(events) else None
        if following is None or following.t_end > chunk[-1].t_end:
            yield from query.advance(chunk[-1].t_end)  # nothing more comes at that time
    yield from query.finish(until)


def _write(
    args: argparse.Namespace,
    plan: Plan,
    streams: StreamSet,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
) -> int:
    if args.engine != "reference" and args.start is not None:
        raise UserError("--start is for the reference engine; the engine starts at the data")
    if args.engine == "local":
        results: Iterator[Result] = run_local(plan, streams, graphs, args.until)
    elif args.engine == "spark":
        from rsep.spark.replay import run_on_spark

        inputs = [_absolute(item) for item in args.streams]  # Spark's workers have their own cwd
        results = run_on_spark(plan, inputs, static_graphs(graphs), args.until, master=args.master)
    else:
        results = evaluate(plan, streams, graphs, args.until, start=args.start)
    if args.out is None:
        try:
            write_results(results, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (| head) has gone: not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    try:
        with args.out.open("w", encoding="utf-8") as out:
            count = write_results(results, out)
    except OSError as exc:
        raise UserError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"{count} result(s) written to {args.out}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Evaluate the query and write its results."""
    check_engine(args.engine)
    plan = plan_of(args)
    streams = read_streams(args.streams, plan.parameters.time_unit)
    graphs = read_graphs(args.graphs)
    return _write(args, plan, streams, graphs)
