"""The instantaneous dataset in columns, and a group graph pattern evaluated over it at many
evaluation instants at once (RSP-QL Def. 18 and 23; SPARQL 1.1 sec. 18.2 and 18.5).

At an evaluation instant the dataset ``SDS(t)`` is the default graph (the default graphs and
the default windows' snapshots) and one named graph per named window and named graph; a
snapshot is the union of its items' graphs (RSEP-QL Sect. 4.1), a set of triples. Here each
graph a pattern reads is a table of term ids with an ``event`` column naming the instant
(the evaluation instants of one call are its rows' events), so that one join computes the
pattern's solutions at every instant of a micro-batch:

- :func:`compile_group` reads the pattern: triples blocks of the default graph, ``GRAPH
  <iri>`` blocks of triples, and FILTERs (as the columnar engine's GPMs:
  :func:`rsep.engine.pattern.match_patterns` and the FILTER programs of
  :mod:`rsep.engine.expression`); anything else (OPTIONAL, UNION, sub-selects, paths,
  literals or blank nodes in triple patterns, ``EXISTS``, ``NOW()``…) gives the reason
  the exact path (pyoxigraph) evaluates it instead;
- :class:`InstantSolver` builds each graph's table for the instants from the windows'
  contents (ranges of item positions of :mod:`rsep.engine.window`'s buffers), matches
  each block on it (a static graph's once, for every call), joins the blocks on the
  instant and their shared variables, and applies the FILTERs.

The solutions are SPARQL's: a basic graph pattern without blank nodes matched on a set of
triples gives each solution once (sec. 18.5), and joins keep them so; term ids are RDF term
equality. Literal constants are left to pyoxigraph, which normalises literals (oxigraph
issue #526) where ids do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.gpm import (
    TriplePattern,
    basic_pattern,
    expression_variables,
    group_of,
    inner_group,
    pattern_variables,
)
from rsep.engine.batch import batches_of
from rsep.engine.expression import compile_filter
from rsep.engine.pattern import (
    Columns,
    Filter,
    join_solutions,
    keep_counted,
    match_patterns,
)
from rsep.engine.terms import TermDictionary
from rsep.engine.window import WindowState
from rsep.lang import ast
from rsep.lang.printer import to_sparql
from rsep.rdf.event import Event
from rsep.rdf.sparql import GraphMatcher

__all__ = ["Block", "Group", "InstantSolver", "compile_group", "spans_of"]

_VOLATILE = frozenset({"NOW", "RAND", "BNODE", "UUID", "STRUUID"})
"""Functions whose value is not one of their arguments' (SPARQL 1.1 sec. 17.4): evaluated
again at every instant by the exact path."""


@dataclass(frozen=True)
class Block:
    """Triple patterns matched on one graph of the dataset (``graph``: its IRI, or ``None``
    for the default graph) and the FILTERs of the block's own group."""

    graph: str | None
    patterns: tuple[TriplePattern, ...]
    filters: tuple[Filter, ...]


@dataclass(frozen=True)
class Group:
    """A group graph pattern as blocks joined and FILTERs over the join; ``variables`` are
    the named variables it binds, ``slots`` their columns in the FILTER programs."""

    blocks: tuple[Block, ...]
    filters: tuple[Filter, ...]
    variables: tuple[str, ...]
    slots: Mapping[str, int]


def compile_group(text: str, dictionary: TermDictionary) -> Group | str:
    """The group pattern ``text`` as blocks and FILTER programs, or why the columnar path
    does not evaluate it (a reason ``rsep explain`` shows)."""
    where = inner_group(group_of("{\n" + text + "\n}"))
    if not isinstance(where, ast.GroupPattern):
        return "the pattern is not a group pattern"
    default: list[TriplePattern] = []
    parts: list[tuple[str | None, tuple[TriplePattern, ...], tuple[ast.Expr, ...]]] = []
    top: list[ast.Expr] = []
    for element in where.elements:
        if isinstance(element, ast.Filter):
            top.append(element.expr)
        elif isinstance(element, ast.TriplesBlock):
            found = basic_pattern(ast.GroupPattern((element,)), "?_:b")
            if isinstance(found, str):
                return found
            default.extend(found[0])
        elif isinstance(element, ast.Graph) and isinstance(element.name, ast.Iri):
            found = basic_pattern(element.pattern, "?_:b")
            if isinstance(found, str):
                return f"GRAPH <{element.name.value}>: {found}"
            parts.append((element.name.value, *found))
        else:
            return f"a {type(element).__name__} element"
    if default:
        parts.insert(0, (None, tuple(default), ()))
    bound: set[str] = set()
    for _, patterns, _ in parts:
        bound |= pattern_variables(patterns)
    if any(name.startswith("_:") for name in bound):
        return "a blank node in a triple pattern"
    if "event" in bound:
        return "a variable named ?event (the name of the solutions' instant column)"
    slots = {name: k for k, name in enumerate(sorted(bound))}

    def program(expr: ast.Expr, scope: set[str]) -> Filter | str:
        for node in expr.walk():
            if isinstance(node, ast.Exists):
                return "a FILTER with EXISTS"
            if isinstance(node, ast.BuiltIn) and node.name.upper() in _VOLATILE:
                return f"a FILTER calling {node.name.upper()}()"
        if not expression_variables(expr) <= scope:
            return f"a FILTER on a variable its group does not bind: {to_sparql(expr)}"
        compiled = compile_filter(expr, slots, dictionary.intern)
        return Filter(expr, None if isinstance(compiled, str) else compiled, frozenset())

    blocks: list[Block] = []
    for graph, patterns, exprs in parts:
        filters: list[Filter] = []
        for expr in exprs:
            made = program(expr, pattern_variables(patterns))
            if isinstance(made, str):
                return made
            filters.append(made)
        blocks.append(Block(graph, patterns, tuple(filters)))
    outer: list[Filter] = []
    for expr in top:
        made = program(expr, bound)
        if isinstance(made, str):
            return made
        outer.append(made)
    return Group(tuple(blocks), tuple(outer), tuple(sorted(bound)), slots)


class InstantSolver:
    """A :class:`Group` over the dataset of a plan: its windows (their states by IRI, those
    in ``defaults`` part of the default graph) and its static graphs (by IRI, those in
    ``default_graphs`` part of the default graph, every one a named graph of its IRI when it
    is in ``named_graphs``)."""

    def __init__(
        self,
        group: Group,
        dictionary: TermDictionary,
        windows: Sequence[WindowState],
        defaults: frozenset[str],
        graphs: Mapping[str, frozenset[Triple]],
        default_graphs: Sequence[str],
        named_graphs: Sequence[str],
    ) -> None:
        self.group = group
        self.dictionary = dictionary
        self.inexact = 0
        """Rows whose FILTER the programs could not decide, evaluated exactly."""
        self._windows: dict[str | None, list[WindowState]] = {}
        for state in windows:
            target = None if state.iri in defaults else state.iri
            self._windows.setdefault(target, []).append(state)
        self._static: dict[str | None, list[frozenset[Triple]]] = {}
        for iri in default_graphs:
            self._static.setdefault(None, []).append(graphs[iri])
        for iri in named_graphs:
            self._static.setdefault(iri, []).append(graphs[iri])
        self._tables: dict[str | None, np.ndarray] = {}
        self._matched: dict[int, Columns | None] = {}
        self._matcher = GraphMatcher()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        del state["_matcher"]
        state["_tables"], state["_matched"] = {}, {}
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._matcher = GraphMatcher()

    def solve(self, k: int, contents: Mapping[str, np.ndarray]) -> Columns:
        """The group's solutions at ``k`` instants whose windows hold ``contents`` (by window
        IRI: rows ``(instant, lo, hi)``, the ranges of item positions each instant's content
        holds): an ``event`` column (the instant's index) and a column of term ids per
        variable, rows in instant order."""
        found: Columns | None = None
        timeless: list[Columns] = []
        for index, block in enumerate(self.group.blocks):
            matched = self._block(index, block, k, contents)
            if matched is None or not len(matched["event"]):
                return _nothing(self.group.variables)
            if block.graph in self._windows:
                found = matched if found is None else _join(found, matched, timed=True)
            else:
                timeless.append(matched)
        if found is None:  # every block reads static graphs only: the same at each instant
            found = {"event": np.arange(k, dtype=np.int32)}
        for matched in timeless:
            found = _join(found, {n: c for n, c in matched.items() if n != "event"}, timed=False)
        for f in self.group.filters:
            found = self._keep(found, f)
        order = np.argsort(found["event"], kind="stable")
        return {n: c[order] for n, c in found.items()}

    def _block(
        self, index: int, block: Block, k: int, contents: Mapping[str, np.ndarray]
    ) -> Columns | None:
        """A block's solutions: at each instant when a window feeds its graph, else once."""
        timed = block.graph in self._windows
        if not timed and index in self._matched:
            return self._matched[index]
        table = self._table(block.graph, k, contents) if timed else self._static_table(block.graph)
        triples = {"event": table[:, 0], "s": table[:, 1], "p": table[:, 2], "o": table[:, 3]}
        found = match_patterns(block.patterns, triples, self.dictionary, block.filters, self._keep)
        if not timed:
            self._matched[index] = found
        return found

    def _keep(self, found: Columns, f: Filter) -> Columns:
        kept, undecided = keep_counted(found, f, self.group.slots, self.dictionary, self._matcher)
        self.inexact += undecided
        return kept

    def _static_table(self, graph: str | None) -> np.ndarray:
        """The static graphs of ``graph`` as rows ``(0, s, p, o)``, distinct."""
        table = self._tables.get(graph)
        if table is None:
            union = frozenset().union(*self._static.get(graph, []))
            table = np.zeros((0, 4), np.int32)
            if union:
                batch = next(batches_of([Event.point("urn:rsep:graph", 0, union)], self.dictionary))
                table = np.stack(
                    [np.zeros(len(batch.s), np.int32), batch.s, batch.p, batch.o], axis=1
                )
            self._tables[graph] = table
        return table

    def _table(self, graph: str | None, k: int, contents: Mapping[str, np.ndarray]) -> np.ndarray:
        """The graph ``graph`` at each of ``k`` instants as distinct rows ``(instant, s, p,
        o)``: the windows' items in their contents, and the static graphs' triples at every
        instant."""
        parts: list[np.ndarray] = []
        for state in self._windows.get(graph, []):
            ranges = contents[state.iri]
            starts, ends = state.buffer.rows_of(ranges[:, 1], ranges[:, 2])
            rows = spans_of(starts, ends)
            part = np.empty((len(rows), 4), np.int32)
            part[:, 0] = np.repeat(ranges[:, 0], ends - starts)
            part[:, 1:] = state.buffer.spo[rows]
            parts.append(part)
        static = self._static_table(graph)
        if len(static):
            spread = np.tile(static, (k, 1))
            spread[:, 0] = np.repeat(np.arange(k, dtype=np.int32), len(static))
            parts.append(spread)
        table = np.concatenate(parts) if parts else np.zeros((0, 4), np.int32)
        return _distinct(table)


def spans_of(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. ends[i] - 1`` of every span, one after the other."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def _distinct(table: np.ndarray) -> np.ndarray:
    """The distinct rows of an int32 table, sorted: a snapshot is a set of triples."""
    if len(table) < 2:
        return table
    wide = table.astype(np.int64)
    high = (wide[:, 0] << 32) | (wide[:, 1] & 0xFFFFFFFF)  # (instant, s) and (p, o): two keys
    low = (wide[:, 2] << 32) | (wide[:, 3] & 0xFFFFFFFF)
    order = np.lexsort((low, high))
    high, low = high[order], low[order]
    keep = np.ones(len(order), bool)
    keep[1:] = (high[1:] != high[:-1]) | (low[1:] != low[:-1])
    return table[order[keep]]


def _join(left: Columns, right: Columns, *, timed: bool) -> Columns:
    """The join of two solution tables on their shared variables (and the instant, when
    ``right`` has one: ``timed``), in the order of ``left``."""
    shared = [n for n in right if n in left and n != "event"]
    if timed:
        shared.insert(0, "event")
    if not right:  # a block of no variables that matched: one empty solution
        return left
    return join_solutions(left, right, shared, len(next(iter(right.values()))))


def _nothing(variables: Sequence[str]) -> Columns:
    """No solution at any instant."""
    return {"event": np.zeros(0, np.int32), **{v: np.zeros(0, np.int32) for v in variables}}
