"""TriG and N-Quads event streams: each named graph is one event (RSP-QL Def. 9).

The default graph carries each event's time, ``<g> prov:generatedAtTime T`` for a point
or ``<g> prov:startedAtTime T1`` and ``<g> prov:endedAtTime T2`` for an interval, and
optionally its stream, ``<g> rsep:stream <s>``. See docs/formats.md for the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from pyoxigraph import RdfFormat, Triple

from rsep.errors import BadRecords
from rsep.rdf.event import Event, EventId
from rsep.rdf.formats._common import (
    BadEvent,
    ReadOptions,
    TimeOrder,
    WriteChecks,
    block_start,
    build_event,
    collect,
    declared_prefixes,
    guess_graph,
    parse_resilient,
    sorted_triples,
    term_line,
    time_literal,
)
from rsep.rdf.formats.nquads import Texts, read_nquads
from rsep.rdf.terms import PROV_ENDED_AT, PROV_GENERATED_AT, PROV_STARTED_AT, RSEP_STREAM
from rsep.rdf.time import TimeUnit

_GENERATED = f"<{PROV_GENERATED_AT.value}>"
_STARTED = f"<{PROV_STARTED_AT.value}>"
_ENDED = f"<{PROV_ENDED_AT.value}>"
_STREAM = f"<{RSEP_STREAM.value}>"


def read_quads(
    file: Path, data: bytes, fmt: RdfFormat, opts: ReadOptions, bad: BadRecords
) -> Iterator[Event]:
    """The events of one TriG or N-Quads file, in order of first appearance of their graph.

    N-Quads goes to :func:`rsep.rdf.formats.nquads.read_nquads`. Syntax errors are
    reported with their line; TriG resumes at the next top-level statement
    (docs/formats.md, "Error recovery"), and the event whose graph the bad statement
    names is dropped whole. Events without a valid time or stream, or going back in time
    within their stream, are reported at the line where their graph name first appears.
    """
    if fmt is RdfFormat.N_QUADS:
        yield from read_nquads(file, [data], bad, Texts(opts))
        return
    graphs: dict[EventId, list[Triple]] = {}
    meta: dict[object, dict[str, dict[object, None]]] = {}
    dropped: set[EventId] = set()
    for piece in parse_resilient(data, fmt, resync=block_start, base_iri=file.resolve().as_uri()):
        if piece.quads is None:
            reason = piece.error or "syntax error"
            graph = guess_graph(piece.record, True, data)
            if graph is not None:
                dropped.add(graph)
                reason += f" (the event of graph {graph} is dropped)"
            bad.report(file, piece.line, reason, piece.record)
        else:
            collect(piece.quads, graphs, meta)
    prefixes: dict[str, str] | None = None
    order = TimeOrder()
    for name, triples in graphs.items():
        if name in dropped:
            continue
        try:
            event = build_event(name, triples, meta.get(name, {}), opts)
            backwards = order.check(event.stream, event.t_start)
            if backwards is not None:
                raise BadEvent(backwards)
        except BadEvent as exc:
            if prefixes is None:
                prefixes = declared_prefixes(data)
            bad.report(file, term_line(data, name, prefixes), str(exc), f"graph {name}")
            continue
        yield event


def _time_statements(
    graph_nt: str, t_start: int, t_end: int, stream: str | None, time_unit: TimeUnit | None
) -> list[str]:
    """The default-graph statements (without terminator) giving an event's time and stream."""
    if t_start == t_end:
        out = [f"{graph_nt} {_GENERATED} {time_literal(t_start, time_unit)}"]
    else:
        out = [
            f"{graph_nt} {_STARTED} {time_literal(t_start, time_unit)}",
            f"{graph_nt} {_ENDED} {time_literal(t_end, time_unit)}",
        ]
    if stream is not None:
        out.append(f"{graph_nt} {_STREAM} <{stream}>")
    return out


def nquads_event_lines(
    graph_nt: str,
    t_start: int,
    t_end: int,
    triples_nt: Iterable[tuple[str, str, str]],
    *,
    stream: str | None = None,
    time_unit: TimeUnit | None = None,
) -> str:
    """The N-Quads text of one event, every line ending in a newline.

    The time (and, if given, the stream) quads come first, in the default graph, then the
    triples in graph ``graph_nt``. Terms are given in N-Triples syntax, so a converter can
    write events without building pyoxigraph terms. Timestamps are ``xsd:dateTime`` unless
    ``time_unit`` is given, then integers in that unit.
    """
    lines = [f"{s} .\n" for s in _time_statements(graph_nt, t_start, t_end, stream, time_unit)]
    lines.extend(f"{s} {p} {o} {graph_nt} .\n" for s, p, o in triples_nt)
    return "".join(lines)


def trig_event_text(
    graph_nt: str,
    t_start: int,
    t_end: int,
    triples_nt: Iterable[tuple[str, str, str]],
    *,
    stream: str | None = None,
    time_unit: TimeUnit | None = None,
) -> str:
    """The TriG text of one event: its time statements at top level, then its graph block.

    Uses full IRIs only, so texts of many events concatenate into a valid file without a
    prefix header; graph contents are indented, as error recovery expects.
    """
    lines = [f"{s} .\n" for s in _time_statements(graph_nt, t_start, t_end, stream, time_unit)]
    lines.append(f"{graph_nt} {{\n")
    lines.extend(f"    {s} {p} {o} .\n" for s, p, o in triples_nt)
    lines.append("}\n")
    return "".join(lines)


def write_quads(
    events: Iterable[Event],
    out: TextIO,
    fmt: RdfFormat,
    *,
    time_unit: TimeUnit | None = None,
    with_stream: bool = False,
) -> int:
    """Write events as N-Quads or TriG (through :func:`nquads_event_lines` or
    :func:`trig_event_text`); returns the number of events written."""
    trig = fmt is RdfFormat.TRIG
    text_of = trig_event_text if trig else nquads_event_lines
    checks = WriteChecks("TriG" if trig else "N-Quads")
    count = 0
    for index, event in enumerate(events):
        checks.check(index, event)
        name = checks.name(index, event)
        triples = [(str(t.subject), str(t.predicate), str(t.object)) for t in sorted_triples(event)]
        if trig and count:
            out.write("\n")
        out.write(
            text_of(
                name,
                event.t_start,
                event.t_end,
                triples,
                stream=event.stream if with_stream else None,
                time_unit=time_unit,
            )
        )
        count += 1
    return count
