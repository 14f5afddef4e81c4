"""Why an answer happened: the events and time intervals that justify it, as RSEP-QL's Fig. 1
draws them (RSEP-QL Sect. 2: "the bold lines denote the intervals that justify the events").

An answer is justified by the parts of the query that read streams (its *steps*): a SPAseq
GPM (Def. 7: its pattern on one event), an RSEP-QL basic event pattern ``EVENT w P``
(Sect. 4.2: ``P`` on one item of window ``w``), an EP-SPARQL ``BGP(P)`` (Sect. 4.2: ``μ(P)``
over several items), a CQELS-CEP window's pattern, or the triple patterns of an RSP-QL
graph pattern that read a window (``WINDOW w P``, or the default graph's windows). Each
step's triple patterns come from the plan's typed pattern (:mod:`rsep.lang.ast`), with the
answer's bindings put in; a variable the answer leaves unbound matches any term. Negated
parts (SPAseq's ``!``, CQELS-CEP's ``!P``, SPARQL ``MINUS``) justify nothing and are left
out; FILTERs are not re-evaluated.

- An event match (the answer carries ``interval``: SPAseq, EP-SPARQL, CQELS-CEP) is
  justified by its interval ``[start, end]`` and the events in it that match a step.
- Any other answer at ``t`` (RSP-QL, C-SPARQL, CQELS-QL, RSEP-QL's ``MATCH``) is justified
  by the window extents each step reads at ``t`` (``window.present``, ``window.t0``,
  ``window.bounds``: ``(o, c]``, ``[o, c)`` or ``[o, c]``) and the events in them that match.
  For RSEP-QL's event patterns the intervals of the event mappings are rebuilt from the
  justifying items: ``(μ, t_k, t_k)`` per item (Sect. 4.2, BEP), ``E1 SEQ E2`` the pairs
  with ``t2 < t3`` giving ``(t1, t4)`` (Eq. (7)), ``FIRST``/``LAST`` the earliest/latest.

Events come as an Arrow table of triples (:data:`EVENT_COLUMNS`), one row per triple, terms
in N-Triples syntax as the answers write them, so that matching is a few vectorised
comparisons per triple pattern (:func:`event_table` builds one from events).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import Literal, NamedNode

from rsep.algebra.events import (
    CepItem,
    EqualsOptional,
    Event,
    First,
    Gpm,
    GraphPatternRef,
    KbPattern,
    Last,
    Match,
    Negation,
    Node,
    OptionalSeq,
    Seq,
    StreamBgp,
)
from rsep.algebra.events import CepWindow as CepWindowPattern
from rsep.algebra.events import Optional as SpaseqOptional
from rsep.algebra.gpm import TriplePattern, group_of
from rsep.algebra.plan import EventJoin, Plan
from rsep.algebra.window import CountWindow, Extent, WindowBounds
from rsep.errors import UserError
from rsep.rdf.results import Result, SelectResult

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from rsep.api.query import Query
    from rsep.lang import ast
    from rsep.rdf.event import Event as StreamEvent

__all__ = [
    "EVENT_COLUMNS",
    "LIMIT",
    "MATCH",
    "MAX_LIMIT",
    "Justification",
    "QueryEntry",
    "Scope",
    "Step",
    "StreamEntry",
    "Support",
    "TimelineSource",
    "event_table",
    "justify",
    "query_timeline",
    "records_table",
    "steps",
    "timeline",
    "timeline_routes",
]

EVENT_COLUMNS = ("seq", "stream", "t_start", "t_end", "s", "p", "o")
"""The columns of the events table :func:`justify` reads: ``seq`` the event's number on the
service (int64), ``stream`` its stream IRI, ``t_start``/``t_end`` its time (int64, the
plan's unit), ``s``/``p``/``o`` one triple of its graph in N-Triples syntax."""


@dataclass(frozen=True)
class Step:
    """A part of a query that reads a stream: ``label`` names it (:func:`steps`),
    ``stream`` is the stream it reads (``None``: any), ``window`` the named window it reads
    through (``None``: the match's interval bounds it), ``patterns`` its triple patterns;
    ``whole`` says whether one event must hold all of them (a GPM and a BEP are evaluated on
    one event's graph) or any one (a window's snapshot unites its items, an EP-SPARQL BGP
    spans several)."""

    label: str
    stream: str | None
    window: str | None
    patterns: tuple[TriplePattern, ...]
    whole: bool
    source: Node | None = field(default=None, compare=False, repr=False)
    """The plan's node the step is read from."""


@dataclass(frozen=True)
class Scope:
    """A time span that bounds an answer's events: the match's interval, or one extent of a
    window at the answer's time; ``bounds`` is ``"[]"``, ``"(]"`` or ``"[)"``, and ``None``
    is an unbounded side (a landmark window has no end)."""

    label: str
    stream: str | None
    start: int | None
    end: int | None
    bounds: str

    def contains(self, times: pa.Array) -> pa.Array:
        """Which of the instants ``times`` lie in this span (a boolean array)."""
        mask = pa.array([True] * len(times), pa.bool_())
        if self.start is not None:
            after = pc.greater if self.bounds[0] == "(" else pc.greater_equal
            mask = pc.and_(mask, after(times, self.start))
        if self.end is not None:
            before = pc.less if self.bounds[1] == ")" else pc.less_equal
            mask = pc.and_(mask, before(times, self.end))
        return mask

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this span."""
        return {
            "label": self.label,
            "stream": self.stream,
            "start": self.start,
            "end": self.end,
            "bounds": self.bounds,
        }


@dataclass(frozen=True)
class Support:
    """An event that justifies an answer: its ``seq``, stream and time, the labels of the
    steps it matches and the triples of it that match them (N-Triples)."""

    seq: int
    stream: str
    t_start: int
    t_end: int
    steps: tuple[str, ...]
    triples: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this event."""
        return {
            "seq": self.seq,
            "stream": self.stream,
            "time": self.t_start,
            "end": self.t_end,
            "steps": list(self.steps),
            "triples": list(self.triples),
        }


@dataclass(frozen=True)
class Justification:
    """An answer at ``time`` with ``bindings``, and why: the ``scopes`` that bound it, the
    ``events`` that match its steps, and the ``intervals`` of its event mappings (the
    answer's own interval for an event match; rebuilt for RSEP-QL, module docstring)."""

    time: int
    bindings: Mapping[str, str]
    scopes: tuple[Scope, ...]
    events: tuple[Support, ...]
    intervals: tuple[tuple[int, int], ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The JSON object the timeline route serves."""
        return {
            "time": self.time,
            "bindings": dict(self.bindings),
            "scopes": [scope.to_json() for scope in self.scopes],
            "events": [event.to_json() for event in self.events],
            "intervals": [list(span) for span in self.intervals],
            "notes": list(self.notes),
        }


def event_table(events: Iterable[tuple[int, StreamEvent]]) -> pa.Table:
    """The events table (:data:`EVENT_COLUMNS`) of ``(seq, event)`` pairs: one row per
    triple, terms as N-Triples text."""
    columns: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for seq, event in events:
        for triple in event.graph:
            columns["seq"].append(seq)
            columns["stream"].append(event.stream)
            columns["t_start"].append(event.t_start)
            columns["t_end"].append(event.t_end)
            columns["s"].append(str(triple.subject))
            columns["p"].append(str(triple.predicate))
            columns["o"].append(str(triple.object))
    return pa.table(columns, schema=_SCHEMA)


Key = tuple[str, int]
"""An event's key: its stream and its ``seq`` on that stream."""

MATCH = "match"
"""The label of a match's interval among an answer's scopes."""

_SCHEMA = pa.schema(
    [
        pa.field(name, pa.int64() if name in ("seq", "t_start", "t_end") else pa.string())
        for name in EVENT_COLUMNS
    ]
)


def steps(plan: Plan) -> tuple[Step, ...]:
    """The steps of ``plan``'s algebraic expression that read streams (module docstring),
    in the order the query writes them, each labelled once: a GPM by its name, RSEP-QL's
    basic event patterns ``E1``, ``E2``, … (the paper's names), EP-SPARQL's BGPs ``BGP1``,
    …, CQELS-CEP's patterns ``P1``, …, a window by its IRI; a step that may match nothing
    (SPAseq's ``?``, the right of EP-SPARQL's ``OPTIONALSEQ``/``EQUALSOPTIONAL``) is marked
    ``(optional)``."""
    found: list[Step] = []
    counts: dict[str, int] = {}

    def label(kind: str, optional: bool) -> str:
        counts[kind] = counts.get(kind, 0) + 1
        return f"{kind}{counts[kind]}" + (" (optional)" if optional else "")

    def visit(node: Node, stream: str | None, optional: bool) -> None:
        if isinstance(node, Negation | KbPattern) or (isinstance(node, CepItem) and node.negated):
            return
        if isinstance(node, Gpm | Event | StreamBgp):
            patterns = _patterns(node.pattern).get(None, ())
            if isinstance(node, Gpm):
                name = node.name + (" (optional)" if optional else "")
                found.append(Step(name, node.stream, None, patterns, True, node))
            elif isinstance(node, Event):
                named = plan.dataset.window(node.window)
                step = Step(label("E", optional), named.stream, named.iri, patterns, True, node)
                found.append(step)
            else:
                found.append(Step(label("BGP", optional), node.stream, None, patterns, False, node))
            return
        if isinstance(node, CepWindowPattern):
            visit(node.pattern, node.stream, optional)
        elif isinstance(node, GraphPatternRef) and stream is not None:
            every = tuple(p for group in _patterns(node).values() for p in group)
            found.append(Step(label("P", optional), stream, None, every, False, node))
        elif isinstance(node, GraphPatternRef):
            found.extend(_windowed(plan, node))
        elif isinstance(node, EventJoin):
            visit(node.event, stream, optional)
            found.extend(_windowed(plan, node.graph))
        elif isinstance(node, OptionalSeq | EqualsOptional):
            visit(node.left, stream, optional)
            visit(node.right, stream, True)
        else:
            for child in node.children():
                visit(child, stream, optional or isinstance(node, SpaseqOptional))

    visit(plan.r2r, None, False)
    return tuple(found)


def _windowed(plan: Plan, ref: GraphPatternRef) -> list[Step]:
    """The steps of a graph pattern over the dataset, one per window it reads (``GRAPH
    <w>``, which ``WINDOW <w>`` compiles to; the default graph's windows; ``GRAPH ?g`` every
    window); static graphs hold no events."""
    patterns = _patterns(ref)
    dataset = plan.dataset
    found = []
    for named in dataset.windows:
        reads = list(patterns.get(named.iri, ()))
        reads += patterns.get("?", ())
        if named.iri in dataset.default_windows:
            reads += patterns.get(None, ())
        if reads:
            found.append(Step(f"<{named.iri}>", named.stream, named.iri, tuple(reads), False, ref))
    return found


def _patterns(ref: GraphPatternRef) -> dict[str | None, tuple[TriplePattern, ...]]:
    """The triple patterns of a graph pattern by the graph they read: an IRI for ``GRAPH
    <g>``, ``"?"`` for ``GRAPH ?g``, ``None`` for the default graph; ``MINUS`` left out."""
    from rsep.lang import ast

    out: dict[str | None, list[TriplePattern]] = {}

    def visit(node: ast.Node, graph: str | None) -> None:
        if isinstance(node, ast.Minus):
            return
        if isinstance(node, ast.Graph):
            inner = node.name.value if isinstance(node.name, ast.Iri) else "?"
            visit(node.pattern, inner)
            return
        if isinstance(node, ast.TriplesBlock):
            for triples in node.triples:
                out.setdefault(graph, []).extend(_triples(triples))
            return
        for child in node.children():
            visit(child, graph)

    group = group_of(ref.text)
    if group is not None:
        visit(group, None)
    return {graph: tuple(found) for graph, found in out.items()}


def _triples(triples: ast.Triples) -> list[TriplePattern]:
    """The triple patterns of one ``TriplesSameSubject`` whose positions are terms or
    variables (a property path or a nested node is not one triple pattern: left out)."""
    subject = _position(triples.subject)
    if subject is None:
        return []
    out = []
    for prop in triples.properties:
        verb = _position(prop.verb)
        if verb is None:
            continue
        for obj in prop.objects:
            o = _position(obj)
            if o is not None:
                out.append((subject, verb, o))
    return out


def _position(node: object) -> str | None:
    """A triple pattern's position as :data:`TriplePattern` writes it, a literal in N-Triples
    syntax; a blank node is a variable no answer binds."""
    from rsep.lang import ast

    if isinstance(node, ast.Var):
        return "?" + node.name
    if isinstance(node, ast.Iri):
        return str(NamedNode(node.value))
    if isinstance(node, ast.Literal):
        if node.lang is not None:
            return str(Literal(node.lexical, language=node.lang))
        return str(Literal(node.lexical, datatype=NamedNode(node.datatype)))
    if isinstance(node, ast.BlankNode):
        return "?_:" + (node.label or "")
    return None


def justify(
    plan_or_query: Plan | Query,
    answer: SelectResult | Mapping[str, Any],
    events: pa.Table,
    *,
    previous: int | None = None,
) -> Justification:
    """The events and time intervals that justify ``answer`` (a SELECT result or its JSON
    object) among ``events`` (:data:`EVENT_COLUMNS`; module docstring). ``previous`` is the
    evaluation before the answer's, which a window read with ``window.present =
    all_ended`` needs."""
    plan = plan_or_query if isinstance(plan_or_query, Plan) else plan_or_query.plan
    data = answer.to_json() if isinstance(answer, SelectResult) else answer
    time = int(data["time"])
    bindings: dict[str, str] = dict(data.get("bindings", {}))
    span = data.get("interval")
    notes: list[str] = []
    found = steps(plan)
    scopes: list[Scope] = []
    matched: dict[Key, tuple[set[str], set[tuple[str, str, str]]]] = {}
    rows: dict[Key, tuple[int, int]] = {}
    per_node: dict[int, set[Key]] = {}
    for step in found:
        if not step.patterns:
            notes.append(f"{step.label}: no triple pattern to match (a path or nested node)")
            continue
        if span is not None:
            step_scopes = [Scope(MATCH, None, int(span[0]), int(span[1]), "[]")]
        else:
            step_scopes = _window_scopes(plan, step, time, previous, notes)
        for scope in step_scopes:
            if scope not in scopes:
                scopes.append(scope)
        keys = _match(step, step_scopes, bindings, events, matched, rows)
        per_node.setdefault(id(step.source), set()).update(keys)
    supports = tuple(
        Support(seq, stream, *rows[stream, seq], tuple(sorted(labels)), _texts(triples))
        for (stream, seq), (labels, triples) in sorted(matched.items(), key=_by_time(rows))
    )
    if span is not None:
        intervals: tuple[tuple[int, int], ...] = ((int(span[0]), int(span[1])),)
    else:
        times = {key: start for key, (start, _) in rows.items()}
        intervals = tuple(sorted(set(_intervals(plan.r2r, per_node, times))))
    return Justification(time, bindings, tuple(scopes), supports, intervals, tuple(notes))


def _texts(triples: set[tuple[str, str, str]]) -> tuple[str, ...]:
    return tuple(f"{s} {p} {o} ." for s, p, o in sorted(triples))


def _by_time(
    rows: Mapping[Key, tuple[int, int]],
) -> Callable[[tuple[Key, object]], tuple[int, str, int]]:
    """The order of justifying events: time, stream, seq."""
    return lambda item: (rows[item[0]][0], *item[0])


def _window_scopes(
    plan: Plan, step: Step, time: int, previous: int | None, notes: list[str]
) -> list[Scope]:
    """The extents of the step's window read at ``time`` (the oracle's reading:
    :meth:`rsep.semantics.dataset.StreamingDataset.reading`), labelled by the window's IRI;
    a step without a window (a pattern outside any) reads the stream up to ``time``."""
    if step.window is None:
        return [Scope(step.label, step.stream, None, time, "(]")]
    named = plan.dataset.window(step.window)
    label = f"<{named.iri}>"
    if isinstance(named.window, CountWindow):
        notes.append(f"{label}: a count-based window is drawn up to the answer's time")
        return [Scope(label, named.stream, None, time, "(]")]
    params = plan.parameters
    extents = named.window.content(time, plan.present(named.iri), t0=params.t0, previous=previous)
    bounds = {
        WindowBounds.OPEN_CLOSED: "(]",
        WindowBounds.CLOSED_OPEN: "[)",
        WindowBounds.CLOSED: "[]",
    }[params.bounds]
    return [_scope(label, named.stream, extent, bounds) for extent in extents]


def _scope(label: str, stream: str, extent: Extent, bounds: str) -> Scope:
    return Scope(label, stream, extent.opening, extent.closing, bounds)


def _match(
    step: Step,
    scopes: Sequence[Scope],
    bindings: Mapping[str, str],
    events: pa.Table,
    matched: dict[Key, tuple[set[str], set[tuple[str, str, str]]]],
    rows: dict[Key, tuple[int, int]],
) -> set[Key]:
    """The events of ``events`` in ``scopes`` on the step's stream that match it under
    ``bindings`` (all its patterns in one event when ``whole``, else any); records their
    matching triples in ``matched`` and their times in ``rows``. An event lies in a scope
    when its start does, and for a match's interval its end too."""
    if events.num_rows == 0 or not scopes:
        return set()
    inside = pa.array([False] * events.num_rows, pa.bool_())
    for scope in scopes:
        within = scope.contains(events["t_start"])
        if scope.label == MATCH:
            within = pc.and_(within, scope.contains(events["t_end"]))
        inside = pc.or_(inside, within)
    if step.stream is not None:
        inside = pc.and_(inside, pc.equal(events["stream"], step.stream))
    candidates = events.filter(inside)
    hits = [candidates.filter(_pattern_mask(p, bindings, candidates)) for p in step.patterns]
    key_sets = [_keys(hit) for hit in hits]
    keys: set[Key] = set.intersection(*key_sets) if step.whole else set().union(*key_sets)
    for hit in hits:
        columns = [hit[name].to_pylist() for name in EVENT_COLUMNS]
        for seq, stream, t_start, t_end, s, p, o in zip(*columns, strict=True):
            if (stream, seq) not in keys:
                continue
            labels, triples = matched.setdefault((stream, seq), (set(), set()))
            labels.add(step.label)
            triples.add((s, p, o))
            rows[stream, seq] = (t_start, t_end)
    return keys


def _keys(table: pa.Table) -> set[Key]:
    """The events that rows of the events table belong to."""
    return set(zip(table["stream"].to_pylist(), table["seq"].to_pylist(), strict=True))


def _pattern_mask(pattern: TriplePattern, bindings: Mapping[str, str], table: pa.Table) -> pa.Array:
    """Which rows hold a triple that matches ``pattern`` with ``bindings`` put in: a bound
    position equals its term, a variable met twice equals itself, an unbound one is free."""
    mask = pa.array([True] * table.num_rows, pa.bool_())
    first: dict[str, str] = {}
    for column, position in zip(("s", "p", "o"), pattern, strict=True):
        if position.startswith("?"):
            name = position[1:]
            if name in bindings:
                mask = pc.and_(mask, pc.equal(table[column], bindings[name]))
            elif name in first:
                mask = pc.and_(mask, pc.equal(table[column], table[first[name]]))
            else:
                first[name] = column
        else:
            mask = pc.and_(mask, pc.equal(table[column], position))
    return mask


def _intervals(
    node: Node, per_node: Mapping[int, set[Key]], times: Mapping[Key, int]
) -> list[tuple[int, int]]:
    """The intervals of RSEP-QL event mappings the justifying items give (module
    docstring; ``per_node`` the justifying events of each step by its node's ``id``);
    nothing for patterns of other papers, whose answers carry theirs."""
    if isinstance(node, Match):
        return _intervals(node.pattern, per_node, times)
    if isinstance(node, EventJoin):
        return _intervals(node.event, per_node, times)
    if isinstance(node, Event):
        return sorted({(times[key], times[key]) for key in per_node.get(id(node), ())})
    if isinstance(node, Seq):
        left = _intervals(node.left, per_node, times)
        right = _intervals(node.right, per_node, times)
        return [(t1, t4) for t1, t2 in left for t3, t4 in right if t2 < t3]
    if isinstance(node, First | Last):
        inner = _intervals(node.pattern, per_node, times)
        if not inner:
            return []
        return [min(inner) if isinstance(node, First) else max(inner)]
    return []


def timeline(
    plan_or_query: Plan | Query,
    answers: Iterable[tuple[int, Result | Mapping[str, Any]]],
    events: pa.Table,
) -> dict[str, Any]:
    """The body of ``GET /api/queries/{name}/timeline``: ``events``, each event of the table
    once (``seq``, ``stream``, ``time``, ``end``, ``triples``), and ``answers``, each
    numbered answer with its justification (:func:`justify`); an answer that is not a
    SELECT result (CONSTRUCT, ASK) is listed with its time alone. Answers come in time
    order; the latest earlier answer time stands for the previous evaluation (``previous``
    of :func:`justify`: it may be earlier than the true one, never later, so an
    ``all_ended`` window is drawn whole). Equal answers (a bag) are justified once."""
    listed = []
    times: list[int] = []
    done: dict[str, dict[str, Any]] = {}
    for number, answer in answers:
        data = dict(answer) if isinstance(answer, Mapping) else answer.to_json()
        entry: dict[str, Any] = {"number": number, "answer": data}
        time = int(data["time"])
        if not times or times[-1] != time:
            times.append(time)
        if "bindings" in data:
            previous = times[-2] if len(times) > 1 else None
            key = json.dumps([data, previous], sort_keys=True)
            if key not in done:
                done[key] = justify(plan_or_query, data, events, previous=previous).to_json()
            entry["justification"] = done[key]
        listed.append(entry)
    return {"events": _event_list(events), "answers": listed}


def _event_list(events: pa.Table) -> list[dict[str, Any]]:
    """Each event of the table once, in time order, with its triples."""
    by_key: dict[Key, dict[str, Any]] = {}
    columns = [events[name].to_pylist() for name in EVENT_COLUMNS]
    for seq, stream, t_start, t_end, s, p, o in zip(*columns, strict=True):
        entry = by_key.setdefault(
            (stream, seq),
            {"seq": seq, "stream": stream, "time": t_start, "end": t_end, "triples": []},
        )
        entry["triples"].append(f"{s} {p} {o} .")
    return sorted(by_key.values(), key=lambda e: (e["time"], e["stream"], e["seq"]))


def records_table(stream: str, records: Iterable[Mapping[str, Any]]) -> pa.Table:
    """The events table of events of ``stream`` as the service keeps them and ``GET
    /api/streams/{name}/events`` serves them (``seq``, ``t_start`` and ``t_end`` or
    ``time``, ``triples`` as N-Triples lines): the lines are read in one N-Quads parse, each
    event's seq as its triples' graph name."""
    from pyoxigraph import RdfFormat, parse

    times: dict[int, tuple[int, int]] = {}
    lines: list[str] = []
    for record in records:
        seq = int(record["seq"])
        start = int(record.get("t_start", record.get("time", 0)))
        times[seq] = (start, int(record.get("t_end", start)))
        graph = f" <{_SEQ}{seq}> .\n"
        lines += [line.rstrip().removesuffix(".").rstrip() + graph for line in record["triples"]]
    columns: dict[str, list[Any]] = {name: [] for name in EVENT_COLUMNS}
    for quad in parse(input="".join(lines).encode(), format=RdfFormat.N_QUADS):
        seq = int(str(quad.graph_name)[len(_SEQ) + 1 : -1])
        columns["seq"].append(seq)
        columns["stream"].append(stream)
        columns["t_start"].append(times[seq][0])
        columns["t_end"].append(times[seq][1])
        columns["s"].append(str(quad.subject))
        columns["p"].append(str(quad.predicate))
        columns["o"].append(str(quad.object))
    return pa.table(columns, schema=_SCHEMA)


_SEQ = "urn:rsep:seq:"


class StreamEntry(Protocol):
    """What the timeline reads of a registered stream: its name in URLs and its IRI."""

    @property
    def name(self) -> str: ...

    @property
    def iri(self) -> str: ...


class QueryEntry(Protocol):
    """What the timeline reads of a registered query: the query and the stream IRIs."""

    @property
    def query(self) -> Query: ...

    @property
    def streams(self) -> tuple[str, ...]: ...


class TimelineSource(Protocol):
    """What the timeline reads of the service (:class:`rsep.serve.service.Service`)."""

    @property
    def streams(self) -> Mapping[str, StreamEntry]: ...

    def query(self, name: str) -> QueryEntry: ...

    def events_since(self, name: str, since: int, limit: int = ...) -> list[dict[str, Any]]: ...

    def answers_since(self, name: str, since: int, limit: int = ...) -> list[dict[str, Any]]: ...


_ALL = 1 << 62  # every recent event: the service keeps a bounded number

LIMIT = 200
"""How many answers one timeline request justifies unless it asks fewer (at most
:data:`MAX_LIMIT`): the cost grows with the answers times the recent events (docs/serve.md
gives figures)."""

MAX_LIMIT = 1000


def query_timeline(
    service: TimelineSource, name: str, since: int = 0, limit: int = LIMIT
) -> dict[str, Any]:
    """The body of ``GET /api/queries/{name}/timeline?since=N&limit=M``: :func:`timeline`
    over the query's first ``limit`` answers with ``seq`` above ``since`` and the recent
    events of the streams it reads (every stream for a query that names none: EP-SPARQL's
    one input stream), plus ``streams`` (each ``name`` and ``iri``)."""
    registered = service.query(name)
    wanted = registered.streams
    read = [s for s in service.streams.values() if not wanted or s.iri in wanted]
    tables = [records_table(s.iri, service.events_since(s.name, 0, _ALL)) for s in read]
    events = pa.concat_tables(tables) if tables else _SCHEMA.empty_table()
    answers = service.answers_since(name, since, limit)
    numbered = [(int(a["seq"]), {k: v for k, v in a.items() if k != "seq"}) for a in answers]
    body = timeline(registered.query, numbered, events)
    body["streams"] = [{"name": s.name, "iri": s.iri} for s in read]
    return body


def timeline_routes(service: TimelineSource) -> list[BaseRoute]:
    """The route ``GET /api/queries/{name}/timeline?since=N&limit=M``
    (:func:`query_timeline`); an unknown query, a bad ``since`` or a ``limit`` outside 1 …
    :data:`MAX_LIMIT` is a 4xx with ``{"error": …}``."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> JSONResponse:
        name = request.path_params["name"]
        try:
            since = int(request.query_params.get("since", "0"))
            limit = int(request.query_params.get("limit", str(LIMIT)))
        except ValueError:
            return JSONResponse({"error": "since and limit are integers"}, 400)
        if not 1 <= limit <= MAX_LIMIT:
            return JSONResponse({"error": f"limit is between 1 and {MAX_LIMIT}"}, 400)
        try:
            body = await run_in_threadpool(query_timeline, service, name, since, limit)
        except UserError as exc:
            return JSONResponse({"error": str(exc)}, getattr(exc, "status", 400))
        return JSONResponse(body)

    return [Route("/api/queries/{name}/timeline", endpoint, methods=["GET"])]
