"""Graph patterns as vectorised joins over a batch of events: a GPM's solutions on every
event of the batch at once (SPAseq Def. 7, 15; SPARQL 1.1 sec. 18.2).

A GPM whose stream part is a basic graph pattern (triple patterns over variables and
IRIs, and FILTERs) is matched over the batch's triple rows: each triple pattern is a
selection on its constants and repeated variables, the patterns are joined on the event
and their shared variables, blank nodes are projected away and the solutions made a set.
FILTERs that name only the pattern's variables are applied here, by compiled programs
(:mod:`rsep.engine.expression`), the rows they cannot decide by the exact evaluator; the
FILTERs that need a run's bindings stay with the automaton. A ``GRAPH`` part is matched
once over its knowledge base and joined by term ids (Def. 15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import Literal, NamedNode, Triple

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
from rsep.engine.terms import TermDictionary
from rsep.lang import ast
from rsep.lang.printer import to_sparql
from rsep.rdf.event import Event
from rsep.rdf.sparql import GraphMatcher
from rsep.rdf.terms import XSD_STRING

__all__ = ["CompiledGpm", "Filter", "Solutions", "compile_gpm", "kb_table", "solutions"]


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


def _match(
    patterns: Sequence[TriplePattern],
    triples: pa.Table,
    dictionary: TermDictionary,
) -> pa.Table | None:
    """The solutions of a basic graph pattern (without FILTERs) over ``triples`` (columns
    ``event, s, p, o``) per event: columns ``event`` and one per variable; ``None`` when
    a constant never occurs (no solution)."""
    result: pa.Table | None = None
    for pattern in patterns:
        table = triples
        names: dict[str, str] = {}
        for position, column in zip(pattern, ("s", "p", "o"), strict=True):
            if position.startswith("?"):
                name = position[1:]
                if name in names:
                    table = table.filter(pc.equal(table[names[name]], table[column]))
                else:
                    names[name] = column
                continue
            ident = dictionary.lookup(position)
            if ident < 0:
                return None
            table = table.filter(pc.equal(table[column], pa.scalar(ident, pa.int32())))
        selected = table.select(["event", *names.values()]).rename_columns(["event", *names])
        if result is None:
            result = selected
            continue
        keys = ["event", *(n for n in names if n in result.column_names)]
        result = result.join(selected, keys=keys, join_type="inner")
    return result


def kb_table(
    compiled: CompiledGpm,
    graph: frozenset[Triple],
    dictionary: TermDictionary,
    slots: Mapping[str, int],
) -> pa.Table:
    """``⟦P_D⟧`` over the knowledge base (Def. 15) with its own FILTERs, once: a column
    per named variable of the GRAPH part."""
    whole = next(batches_of([Event.point("urn:rsep:kb", 0, graph)], dictionary))
    triples = pa.table({"event": whole.triple_event, "s": whole.s, "p": whole.p, "o": whole.o})
    found = _match(compiled.kb_patterns, triples, dictionary)
    names = sorted(v for v in pattern_variables(compiled.kb_patterns) if not v.startswith("_:"))
    if found is None:
        return pa.table({n: pa.array([], pa.int32()) for n in names})
    found = _distinct(found.select(names))
    for f in compiled.kb_local:
        found = _keep(found, f, slots, dictionary, None)
    return found


def solutions(
    compiled: CompiledGpm,
    batch: TripleBatch,
    stream: int,
    dictionary: TermDictionary,
    slots: Mapping[str, int],
    width: int,
    kb: pa.Table | None,
    matcher: GraphMatcher,
    skeletons: dict[tuple[object, ...], pa.Table | None] | None = None,
) -> Solutions:
    """The GPM's solutions on every event of ``stream`` in the batch, the local FILTERs
    applied and the knowledge base joined, as rows over the sequence's slots;
    ``skeletons`` keeps the pattern's joins for the other GPMs of the batch that share
    it (the V shape's three steps match one pattern)."""
    names = sorted(v for v in pattern_variables(compiled.patterns) if not v.startswith("_:"))
    if compiled.patterns:
        key = (stream, compiled.patterns)
        if skeletons is None or key not in skeletons:
            on_stream = batch.event_stream[batch.triple_event] == stream
            triples = pa.table(
                {
                    "event": batch.triple_event[on_stream],
                    "s": batch.s[on_stream],
                    "p": batch.p[on_stream],
                    "o": batch.o[on_stream],
                }
            )
            matched = _match(compiled.patterns, triples, dictionary)
            if matched is not None:
                matched = _distinct(matched.select(["event", *names]))
            if skeletons is not None:
                skeletons[key] = matched
        else:
            matched = skeletons[key]
        if matched is None:
            return _empty(width)
        found = matched
    else:  # a pattern of FILTERs only: one empty solution per event of the stream
        events = np.flatnonzero(batch.event_stream == stream).astype(np.int32)
        found = pa.table({"event": events})
    inexact = 0
    for f in compiled.local:
        found, undecided = _keep_counted(found, f, slots, dictionary, matcher)
        inexact += undecided
    if kb is not None:
        shared = [n for n in kb.column_names if n in found.column_names]
        found = found.join(kb, keys=shared, join_type="inner") if shared else _cross(found, kb)
    found = found.sort_by("event")
    rows = np.full((found.num_rows, width), -1, np.int32)
    for name in found.column_names:
        if name == "event":
            continue
        rows[:, slots[name]] = found[name].to_numpy()
    return Solutions(found["event"].to_numpy().astype(np.int32), rows, inexact)


def _empty(width: int) -> Solutions:
    return Solutions(np.zeros(0, np.int32), np.zeros((0, width), np.int32))


def _distinct(table: pa.Table) -> pa.Table:
    """The rows as a set (SPARQL's solutions as SPAseq's sets of mappings)."""
    if table.num_rows == 0 or not table.column_names:
        return table.slice(0, min(table.num_rows, 1))
    return table.group_by(table.column_names, use_threads=False).aggregate([])


def _cross(left: pa.Table, right: pa.Table) -> pa.Table:
    """Every pair of rows (a join on no shared variable)."""
    li = np.repeat(np.arange(left.num_rows), right.num_rows)
    ri = np.tile(np.arange(right.num_rows), left.num_rows)
    columns = {n: left[n].take(pa.array(li)) for n in left.column_names}
    columns.update({n: right[n].take(pa.array(ri)) for n in right.column_names})
    return pa.table(columns)


def _keep(
    table: pa.Table,
    f: Filter,
    slots: Mapping[str, int],
    dictionary: TermDictionary,
    matcher: GraphMatcher | None,
) -> pa.Table:
    return _keep_counted(table, f, slots, dictionary, matcher or GraphMatcher())[0]


def _keep_counted(
    table: pa.Table,
    f: Filter,
    slots: Mapping[str, int],
    dictionary: TermDictionary,
    matcher: GraphMatcher,
) -> tuple[pa.Table, int]:
    """The rows on which the FILTER is true (SPARQL 1.1 sec. 17.2), the programs' verdict
    where they decide and the exact evaluator's elsewhere; and how many rows needed it."""
    if table.num_rows == 0:
        return table, 0
    if f.program is None:
        return _keep_exactly(table, f, dictionary, matcher)
    width = len(slots)
    ids = np.full((table.num_rows, width), -1, np.int32)
    for name in table.column_names:
        if name in slots:
            ids[:, slots[name]] = table[name].to_numpy()
    verdict = evaluate_rows(f.program, ids, dictionary.values)
    undecided = np.flatnonzero(verdict == 2)
    if len(undecided):
        text = to_sparql(f.expr)
        names = [n for n in table.column_names if n in slots]
        for row in undecided:
            mu = {n: dictionary.term(int(ids[row, slots[n]])) for n in names}
            verdict[row] = 1 if matcher.holds(text, mu) else 0
    return table.filter(pa.array(verdict == 1)), len(undecided)


def _keep_exactly(
    table: pa.Table, f: Filter, dictionary: TermDictionary, matcher: GraphMatcher
) -> tuple[pa.Table, int]:
    """A FILTER without program over the solutions: evaluated by pyoxigraph once per
    distinct binding of its variables (remembered across batches); how many were new."""
    test = _string_test(f.expr)
    if test is not None:
        return table.filter(_string_verdicts(table[test[1]].to_numpy(), test, dictionary)), 0
    names = sorted(expression_variables(f.expr))
    if not names:
        keys = np.zeros((table.num_rows, 0), np.int32)
    else:
        keys = np.stack([table[n].to_numpy() for n in names], axis=1)
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    text = to_sparql(f.expr)
    verdicts = np.empty(len(distinct), bool)
    fresh = 0
    for i, row in enumerate(distinct.tolist()):
        key = tuple(row)
        found = f.known.get(key)
        if found is None:
            mu = {n: dictionary.term(ident) for n, ident in zip(names, key, strict=True)}
            found = f.known[key] = matcher.holds(text, mu)
            fresh += 1
        verdicts[i] = found
    return table.filter(pa.array(verdicts[inverse.reshape(-1)])), fresh


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
) -> pa.Array:
    """The test on each row's term: ``STR`` of an IRI is the IRI, of a literal its lexical
    form; of a blank node or triple term an error (false)."""
    distinct, inverse = np.unique(ids, return_inverse=True)
    texts: list[str | None] = []
    for ident in distinct.tolist():
        node = dictionary.node(ident)
        texts.append(node.value if isinstance(node, NamedNode | Literal) else None)
    found = _STRING_TESTS[test[0]](pa.array(texts, pa.string()), test[2])
    verdicts = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
    return pa.array(verdicts[inverse.reshape(-1)])
