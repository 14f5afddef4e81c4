"""Graph patterns as vectorised joins over a batch of events: a GPM's solutions on every
event of the batch at once (SPAseq Def. 7, 15; SPARQL 1.1 sec. 18.2).

A GPM whose stream part is a basic graph pattern (triple patterns over variables and
IRIs, and FILTERs) is matched over the batch's triple rows: each triple pattern is a
selection on its constants and repeated variables, the patterns are joined on the event
and their shared variables by sorted int64 keys in numpy (a star, one subject with
constant predicates, the common case, on (event, subject)), blank nodes are projected
away and the solutions made a set. FILTERs that name only the pattern's variables are
applied as soon as the joins bind them, by compiled programs
(:mod:`rsep.engine.expression`), the rows they cannot decide by the exact evaluator; the
FILTERs that need a run's bindings stay with the automaton. GPMs whose patterns differ
only in variable names share one match per batch. A ``GRAPH`` part is matched once over
its knowledge base and joined by term ids (Def. 15).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import Literal, Triple

from rsep.algebra.events import Gpm
from rsep.algebra.gpm import (
    TriplePattern,
    basic_pattern,
    event_part,
    expression_variables,
    group_of,
    pattern_variables,
)
from rsep.engine.batch import TripleBatch, batches_of
from rsep.engine.expression import Program, compile_filter, evaluate_rows
from rsep.engine.terms import KIND_IRI, KIND_LITERAL, TermDictionary
from rsep.lang import ast
from rsep.lang.printer import to_sparql
from rsep.rdf.event import Event
from rsep.rdf.sparql import GraphMatcher
from rsep.rdf.terms import XSD_STRING

__all__ = [
    "CompiledGpm",
    "Filter",
    "KnowledgeBase",
    "Solutions",
    "compile_gpm",
    "equal_pairs",
    "join_keys",
    "join_solutions",
    "keep_counted",
    "match_patterns",
    "solutions",
]


@dataclass(frozen=True)
class Filter:
    """A FILTER of a GPM: its expression, its program (``None``: no program, so a FILTER
    on the solutions alone evaluated exactly once per distinct binding of its variables),
    and the variables it must not see unless the run binds them (the knowledge base's,
    for a FILTER of the event part)."""

    expr: ast.Expr
    program: Program | None
    hidden: frozenset[str]
    known: dict[tuple[int, ...], bool] = field(default_factory=dict, compare=False, hash=False)
    """Exact verdicts by the term ids of the variables, for a FILTER without program."""


@dataclass(frozen=True)
class CompiledGpm:
    """A GPM read as joins: the event part's triple patterns, the knowledge base part's,
    the FILTERs decided on the solutions alone (``local``) and those needing the run's
    bindings (``deferred``), and the variables it binds (named ones only)."""

    gpm: Gpm
    patterns: tuple[TriplePattern, ...]
    kb_patterns: tuple[TriplePattern, ...]
    local: tuple[Filter, ...]
    kb_local: tuple[Filter, ...]
    deferred: tuple[Filter, ...]
    variables: tuple[str, ...]

    @property
    def stream(self) -> str:
        return self.gpm.stream


def compile_gpm(
    gpm: Gpm, slots: Mapping[str, int], dictionary: TermDictionary
) -> CompiledGpm | str:
    """The GPM as joins and programs over ``slots`` (the sequence's variables), or why it
    cannot be (a reason for ``rsep explain``)."""
    event = event_part(gpm)
    if isinstance(event, str):
        return f"GPM {gpm.name}: {event}"
    patterns, filters = event
    kb_patterns: tuple[TriplePattern, ...] = ()
    kb_filters: tuple[ast.Expr, ...] = ()
    if gpm.graph_kb is not None:
        if gpm.graph_kb.pattern.paths:
            return f"GPM {gpm.name}: extended path triples in its GRAPH part"
        kb = basic_pattern(group_of(gpm.graph_kb.pattern.text), "?_:kb")
        if isinstance(kb, str):
            return f"GPM {gpm.name}: GRAPH part {kb}"
        kb_patterns, kb_filters = kb
    bound = pattern_variables(patterns)
    kb_bound = pattern_variables(kb_patterns)
    named = sorted(v for v in bound | kb_bound if not v.startswith("_:"))
    local: list[Filter] = []
    kb_local: list[Filter] = []
    deferred: list[Filter] = []
    for expr, own, into, hidden in [
        *((f, bound, local, frozenset(kb_bound - bound)) for f in _conjuncts(filters)),
        *((f, kb_bound, kb_local, frozenset()) for f in _conjuncts(kb_filters)),
    ]:
        program = compile_filter(expr, slots, dictionary.intern)
        names = expression_variables(expr)
        if isinstance(program, str):
            if not names <= own:
                return f"GPM {gpm.name}: FILTER {to_sparql(expr)}: {program}"
            into.append(Filter(expr, None, frozenset()))
            continue
        target = into if names <= own else deferred
        target.append(Filter(expr, program, hidden & names))
    return CompiledGpm(
        gpm,
        patterns,
        kb_patterns,
        tuple(local),
        tuple(kb_local),
        tuple(deferred),
        tuple(named),
    )


def _conjuncts(filters: Sequence[ast.Expr]) -> list[ast.Expr]:
    """FILTERs with their top-level ``&&`` split: ``FILTER(a && b)`` keeps a solution
    exactly when ``FILTER(a) FILTER(b)`` does (both must be true, SPARQL 1.1 sec. 17.2)."""
    out: list[ast.Expr] = []
    todo = list(reversed(filters))
    while todo:
        expr = todo.pop()
        if isinstance(expr, ast.Binary) and expr.op == "&&":
            todo += [expr.right, expr.left]
        else:
            out.append(expr)
    return out


@dataclass
class Solutions:
    """A GPM's solutions on a batch's events: the event of each row and a term id per
    slot (``-1``: unbound), rows grouped by event in event order."""

    event: np.ndarray
    rows: np.ndarray
    inexact: int = 0
    """Rows whose FILTER the programs could not decide, evaluated exactly."""


Columns = dict[str, np.ndarray]
"""Solutions as columns: ``event`` (int32, the event's row in the batch) and an int32
column of term ids per variable."""


def _canonical(
    patterns: Sequence[TriplePattern],
) -> tuple[tuple[TriplePattern, ...], dict[str, str]]:
    """The patterns with their variables renamed by first occurrence (blank nodes staying
    blank), so that GPMs that differ only in names share one match; and each named
    variable's new name."""
    names: dict[str, str] = {}

    def rename(position: str) -> str:
        if not position.startswith("?"):
            return position
        if position not in names:
            blank = "_:" if position.startswith("?_:") else ""
            names[position] = f"?{blank}{len(names)}"
        return names[position]

    shape = tuple((rename(s), rename(p), rename(o)) for s, p, o in patterns)
    return shape, {v[1:]: c[1:] for v, c in names.items() if not v.startswith("?_:")}


Keep = Callable[[Columns, Filter], Columns]
"""Applies a FILTER to solutions (the rows on which it is true)."""


def match_patterns(
    patterns: Sequence[TriplePattern],
    triples: Columns,
    dictionary: TermDictionary,
    filters: Sequence[Filter] = (),
    keep: Keep | None = None,
) -> Columns | None:
    """The distinct solutions of a basic graph pattern over ``triples`` (columns ``event,
    s, p, o``, rows grouped by event) per event, in event order, with ``filters`` (on the
    pattern's variables) applied by ``keep``: columns ``event`` and one per named variable;
    ``None`` when a constant never occurs (no solution).

    Each triple pattern is a selection on its constants and repeated variables; they are
    joined one at a time (the smallest first, then the smallest sharing a variable) on the
    event and their shared variables by sorted int64 keys, each FILTER applied as soon as
    its variables are bound (the solutions it removes would join to none it keeps:
    SPARQL 1.1 sec. 17.2, a FILTER's value depends on its variables only). The solutions
    are distinct by construction (each binds every position of distinct triples), unless
    blank nodes are projected away, then made a set."""
    picked: list[tuple[np.ndarray, dict[str, str]]] = []
    for pattern in patterns:
        chosen = _select(pattern, triples, dictionary)
        if chosen is None:
            return None
        picked.append(chosen)
    event = triples["event"]
    rows, names = picked.pop(min(range(len(picked)), key=lambda i: len(picked[i][0])))
    found: Columns = {"event": event[rows].astype(np.int32)}
    found.update({v: triples[c][rows] for v, c in names.items()})
    pending = list(filters)
    found, pending = _filtered(found, pending, keep)
    while picked:
        sharing = [i for i, (_, n) in enumerate(picked) if n.keys() & found.keys()]
        i = min(sharing or range(len(picked)), key=lambda i: len(picked[i][0]))
        rows, names = picked.pop(i)
        shared = [v for v in names if v in found]
        left, right = join_keys(
            [found["event"], *(found[v] for v in shared)],
            [event[rows], *(triples[names[v]][rows] for v in shared)],
        )
        li, ri = equal_pairs(left, right)
        found = {v: c[li] for v, c in found.items()}
        found.update({v: triples[c][rows[ri]] for v, c in names.items() if v not in shared})
        found, pending = _filtered(found, pending, keep)
    if pending:
        raise AssertionError("a FILTER on variables the pattern does not bind")
    named = sorted(v for v in found if v != "event" and not v.startswith("_:"))
    if len(named) + 1 < len(found):  # blank nodes projected away: a set again
        table = np.stack([found["event"], *(found[v] for v in named)], axis=1)
        table = np.unique(table, axis=0) if len(table) else table
        return {"event": table[:, 0], **{v: table[:, k + 1] for k, v in enumerate(named)}}
    return {"event": found["event"], **{v: found[v] for v in named}}


def _select(
    pattern: TriplePattern, triples: Columns, dictionary: TermDictionary
) -> tuple[np.ndarray, dict[str, str]] | None:
    """The rows of ``triples`` a triple pattern matches (its constants, and equal columns
    where a variable repeats), and the column of each of its variables; None when a
    constant was never met."""
    mask: np.ndarray | None = None
    names: dict[str, str] = {}
    for position, column in zip(pattern, ("s", "p", "o"), strict=True):
        if position.startswith("?"):
            name = position[1:]
            if name not in names:
                names[name] = column
                continue
            test = triples[names[name]] == triples[column]
        else:
            ident = dictionary.lookup(position)
            if ident < 0:
                return None
            test = triples[column] == ident
        mask = test if mask is None else mask & test
    if mask is None:
        return np.arange(len(triples["event"])), names
    return np.flatnonzero(mask), names


def _filtered(
    found: Columns, pending: list[Filter], keep: Keep | None
) -> tuple[Columns, list[Filter]]:
    """The solutions with the FILTERs whose variables they bind applied; those left."""
    left = []
    for f in pending:
        if keep is not None and expression_variables(f.expr) <= found.keys():
            found = keep(found, f)
        else:
            left.append(f)
    return found, left


def equal_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of positions (i, j) with ``left[i] == right[j]`` (an equi-join of two
    int64 key columns), in the order of ``left``."""
    increasing = len(right) < 2 or bool(np.all(right[1:] > right[:-1]))
    if increasing and len(left) == len(right) and np.array_equal(left, right):
        every = np.arange(len(left))  # the same distinct keys in the same order
        return every, every
    if increasing or bool(np.all(right[1:] >= right[:-1])):
        order = np.arange(len(right))
        ordered = right
    else:
        order = np.argsort(right, kind="stable")
        ordered = right[order]
    lo = np.searchsorted(ordered, left, "left")
    hi = np.searchsorted(ordered, left, "right")
    counts = hi - lo
    if len(counts) == 0 or counts.max() <= 1:
        hits = np.flatnonzero(counts)
        return hits, order[lo[hits]]
    hits = np.repeat(np.arange(len(left)), counts)
    first = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    return hits, order[first + np.arange(len(hits))]


def kb_table(
    compiled: CompiledGpm,
    graph: frozenset[Triple],
    dictionary: TermDictionary,
    slots: Mapping[str, int],
) -> tuple[Columns, int]:
    """``⟦P_D⟧`` over one knowledge base graph (Def. 15) with its own FILTERs: a column per
    named variable of the GRAPH part, and the number of solutions (one or none without a
    variable: the count is kept apart, since no column holds it)."""
    whole = next(batches_of([Event.point("urn:rsep:kb", 0, graph)], dictionary))
    triples = {"event": whole.triple_event, "s": whole.s, "p": whole.p, "o": whole.o}
    matcher = GraphMatcher()

    def keep(found: Columns, f: Filter) -> Columns:
        return keep_counted(found, f, slots, dictionary, matcher)[0]

    found = match_patterns(compiled.kb_patterns, triples, dictionary, compiled.kb_local, keep)
    names = sorted(v for v in pattern_variables(compiled.kb_patterns) if not v.startswith("_:"))
    if found is None:
        return {n: np.zeros(0, np.int32) for n in names}, 0
    if not names:  # one empty solution, or none
        return {}, min(1, len(found["event"]))
    return {n: found[n] for n in names}, len(found["event"])


_ROW = " row"
"""The column that keeps a solution's position through :meth:`KnowledgeBase.join` (no
variable has this name)."""


@dataclass(frozen=True)
class KnowledgeBase:
    """``Γ(v)`` of a GPM's GRAPH part (SPAseq Def. 15) as it is at an event's time: the
    versions of the graph (one for a static graph, one per span between the changes of a
    time-varying graph, RSP-QL Def. 10, as :func:`rsep.semantics.graph.versions` gives
    them) and, for a compiled GPM, ``⟦P_D⟧`` over each, matched once."""

    changes: np.ndarray
    """int64, sorted: version ``i`` holds from ``changes[i - 1]``."""
    graphs: tuple[frozenset[Triple], ...]
    tables: tuple[tuple[Columns, int], ...] | None
    """Per version, ``⟦P_D⟧``'s columns and row count (:func:`kb_table`)."""

    @classmethod
    def of(
        cls,
        changes: Sequence[int],
        graphs: Sequence[frozenset[Triple]],
        compiled: CompiledGpm | None,
        dictionary: TermDictionary,
        slots: Mapping[str, int],
    ) -> KnowledgeBase:
        """The knowledge base of ``graphs`` (its versions), matched for ``compiled``."""
        tables = (
            None
            if compiled is None
            else tuple(kb_table(compiled, g, dictionary, slots) for g in graphs)
        )
        return cls(np.array(changes, np.int64), tuple(graphs), tables)

    def graph_at(self, t: int) -> frozenset[Triple]:
        """``Γ(v)`` at ``t``."""
        return self.graphs[int(np.searchsorted(self.changes, t, side="right"))]

    def join(self, found: Columns, times: np.ndarray) -> Columns:
        """The solutions joined on their shared variables with ``⟦P_D⟧`` over the version
        at their event's time (``times`` by event), in the solutions' order."""
        assert self.tables is not None
        if len(self.tables) == 1:
            return _join_kb(found, *self.tables[0])
        version = np.searchsorted(self.changes, times[found["event"]], side="right")
        parts = []
        for v in np.unique(version).tolist():
            rows = np.flatnonzero(version == v)
            part = {n: c[rows] for n, c in found.items()}
            part[_ROW] = rows
            parts.append(_join_kb(part, *self.tables[v]))
        if not parts:
            return _join_kb(found, *self.tables[0])
        joined = {n: np.concatenate([p[n] for p in parts]) for n in parts[0]}
        order = np.argsort(joined.pop(_ROW), kind="stable")
        return {n: c[order] for n, c in joined.items()}


def solutions(
    compiled: CompiledGpm,
    batch: TripleBatch,
    stream: int,
    dictionary: TermDictionary,
    slots: Mapping[str, int],
    width: int,
    kb: KnowledgeBase | None,
    matcher: GraphMatcher,
    skeletons: dict[tuple[object, ...], pa.Table | None] | None = None,
) -> Solutions:
    """The GPM's solutions on every event of ``stream`` in the batch, the local FILTERs
    applied and the knowledge base joined, as rows over the sequence's slots;
    ``skeletons`` keeps the match of a pattern without local FILTERs for the other GPMs of
    the batch whose pattern differs only in variable names (the V shape's steps match one
    pattern)."""
    found: Columns
    inexact = 0

    def keep(found: Columns, f: Filter) -> Columns:
        nonlocal inexact
        kept, undecided = keep_counted(found, f, slots, dictionary, matcher)
        inexact += undecided
        return kept

    if compiled.patterns and compiled.local:  # the FILTERs pushed into the joins
        triples = _stream_triples(batch, stream)
        matched = match_patterns(compiled.patterns, triples, dictionary, compiled.local, keep)
        if matched is None:
            return _empty(width)
        found = matched
    elif compiled.patterns:
        shape, renamed = _canonical(compiled.patterns)
        key = (stream, shape)
        if skeletons is None or key not in skeletons:
            matched = match_patterns(shape, _stream_triples(batch, stream), dictionary)
            table = None if matched is None else pa.table(matched)
            if skeletons is not None:
                skeletons[key] = table
        else:
            table = skeletons[key]
        if table is None:
            return _empty(width)
        found = {"event": table["event"].to_numpy()}
        found.update({name: table[new].to_numpy() for name, new in renamed.items()})
    else:  # a pattern of FILTERs only: one empty solution per event of the stream
        found = {"event": np.flatnonzero(batch.event_stream == stream).astype(np.int32)}
        for f in compiled.local:
            found = keep(found, f)
    if kb is not None:
        found = kb.join(found, batch.event_start)
    event = found["event"]
    rows = np.full((len(event), width), -1, np.int32)
    for name, column in found.items():
        if name != "event":
            rows[:, slots[name]] = column
    return Solutions(event.astype(np.int32, copy=False), rows, inexact)


def _stream_triples(batch: TripleBatch, stream: int) -> Columns:
    """The batch's triples of the events of ``stream``, as columns."""
    columns = {"event": batch.triple_event, "s": batch.s, "p": batch.p, "o": batch.o}
    if bool(np.all(batch.event_stream == stream)):
        return columns
    on_stream = batch.event_stream[batch.triple_event] == stream
    return {n: c[on_stream] for n, c in columns.items()}


def _join_kb(found: Columns, kb: Columns, n_kb: int) -> Columns:
    """The solutions joined with the knowledge base's (Def. 15, ``n_kb`` rows) on their
    shared variables, in the solutions' (event) order."""
    shared = [n for n in kb if n in found]
    return join_solutions(found, kb, shared, n_kb)


def join_solutions(left: Columns, right: Columns, shared: Sequence[str], n_right: int) -> Columns:
    """Two solution tables joined on their columns ``shared`` (every pair of rows when there
    is none; ``n_right`` is ``right``'s row count), in the order of ``left``."""
    if not shared:
        n_left = len(next(iter(left.values())))
        left_rows = np.repeat(np.arange(n_left), n_right)
        right_rows = np.tile(np.arange(n_right), n_left)
    else:
        left_key, right_key = join_keys([left[n] for n in shared], [right[n] for n in shared])
        left_rows, right_rows = equal_pairs(left_key, right_key)
    out = {n: c[left_rows] for n, c in left.items()}
    out.update({n: c[right_rows] for n, c in right.items() if n not in left})
    return out


def join_keys(
    left: Sequence[np.ndarray], right: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """One int64 per row of two tables' key columns (term ids), equal exactly when the
    rows' keys are."""
    if len(left) == 1:
        return left[0].astype(np.int64), right[0].astype(np.int64)
    # two columns at a time, each in 32 bits (renumbered densely when wider, and every
    # pair but the last renumbered): 1-d sorts, not rows'
    n = len(left[0])
    code = _narrow(np.concatenate([left[0], right[0]]))
    for k in range(1, len(left)):
        column = _narrow(np.concatenate([left[k], right[k]]))
        code = (code.astype(np.int64) << 32) | (column.astype(np.int64) & 0xFFFFFFFF)
        if k < len(left) - 1:
            code = _dense(code)
    return code[:n], code[n:]


def _dense(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (from 0)."""
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` if they fit in 32 signed bits, else their dense ranks (equal exactly when
    the values are)."""
    if values.dtype.itemsize <= 4 or not len(values):
        return values
    if int(values.min()) >= -(2**31) and int(values.max()) < 2**31:
        return values
    return _dense(values)


def _empty(width: int) -> Solutions:
    return Solutions(np.zeros(0, np.int32), np.zeros((0, width), np.int32))


def keep_counted(
    found: Columns,
    f: Filter,
    slots: Mapping[str, int],
    dictionary: TermDictionary,
    matcher: GraphMatcher,
) -> tuple[Columns, int]:
    """The rows on which the FILTER is true (SPARQL 1.1 sec. 17.2), the programs' verdict
    where they decide and the exact evaluator's elsewhere; and how many rows needed it."""
    if len(found["event"]) == 0:
        return found, 0
    if f.program is None:
        keep, fresh = _keep_exactly(found, f, dictionary, matcher)
        return {n: c[keep] for n, c in found.items()}, fresh
    width = len(slots)
    names = [n for n in found if n in slots]
    ids = np.full((len(found["event"]), width), -1, np.int32)
    for name in names:
        ids[:, slots[name]] = found[name]
    verdict = evaluate_rows(f.program, ids, dictionary.values)
    undecided = np.flatnonzero(verdict == 2)
    if len(undecided):
        text = to_sparql(f.expr)
        for row in undecided:
            mu = {n: dictionary.term(int(ids[row, slots[n]])) for n in names}
            verdict[row] = 1 if matcher.holds(text, mu) else 0
    keep = verdict == 1
    return {n: c[keep] for n, c in found.items()}, len(undecided)


def _keep_exactly(
    found: Columns, f: Filter, dictionary: TermDictionary, matcher: GraphMatcher
) -> tuple[np.ndarray, int]:
    """A FILTER without program over the solutions: evaluated by pyoxigraph once per
    distinct binding of its variables (remembered across batches); which rows it keeps
    and how many bindings were new."""
    test = _string_test(f.expr)
    if test is not None:
        return _string_verdicts(found[test[1]], test, dictionary), 0
    names = sorted(expression_variables(f.expr))
    if not names:
        keys = np.zeros((len(found["event"]), 0), np.int32)
    else:
        keys = np.stack([found[n] for n in names], axis=1)
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    text = to_sparql(f.expr)
    verdicts = np.empty(len(distinct), bool)
    fresh = 0
    for i, row in enumerate(distinct.tolist()):
        key = tuple(row)
        known = f.known.get(key)
        if known is None:
            mu = {n: dictionary.term(ident) for n, ident in zip(names, key, strict=True)}
            known = f.known[key] = matcher.holds(text, mu)
            fresh += 1
        verdicts[i] = known
    return verdicts[inverse.reshape(-1)], fresh


_STRING_TESTS = {
    "STRSTARTS": pc.starts_with,
    "STRENDS": pc.ends_with,
    "CONTAINS": pc.match_substring,
}


def _string_test(expr: ast.Expr) -> tuple[str, str, str] | None:
    """``STRSTARTS|STRENDS|CONTAINS(STR(?v), "s")`` as (function, variable, string): a
    test decided on the terms' texts at once (SPARQL 1.1 sec. 17.4.2.5, 17.4.3.8-10)."""
    if not isinstance(expr, ast.BuiltIn) or expr.name not in _STRING_TESTS or len(expr.args) != 2:
        return None
    subject, constant = expr.args
    if not (
        isinstance(subject, ast.BuiltIn)
        and subject.name == "STR"
        and len(subject.args) == 1
        and isinstance(subject.args[0], ast.Var)
        and isinstance(constant, ast.Literal)
        and constant.lang is None
        and constant.datatype == XSD_STRING
    ):
        return None
    return expr.name, subject.args[0].name, constant.lexical


def _string_verdicts(
    ids: np.ndarray, test: tuple[str, str, str], dictionary: TermDictionary
) -> np.ndarray:
    """The test on each row's term: ``STR`` of an IRI is the IRI (its N-Triples text
    without the angle brackets, cut by Arrow), of a literal its lexical form; of a blank
    node or triple term an error (false)."""
    distinct, inverse = np.unique(ids, return_inverse=True)
    kind = dictionary.values.kind[distinct]
    verdicts = np.zeros(len(distinct), bool)
    iris = np.flatnonzero(kind == KIND_IRI)
    literals = np.flatnonzero(kind == KIND_LITERAL)
    for where, texts in (
        (iris, dictionary.text_array(distinct[iris], trim=1)),
        (
            literals,
            pa.array([_lexical(n) for n in dictionary.nodes(distinct[literals])], pa.string()),
        ),
    ):
        if len(where):
            found = _STRING_TESTS[test[0]](texts, test[2])
            verdicts[where] = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
    return verdicts[inverse.reshape(-1)]


def _lexical(node: object) -> str:
    """A literal's lexical form."""
    assert isinstance(node, Literal)
    return node.value
