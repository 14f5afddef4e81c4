"""RSEP-QL's ``MATCH`` over windows, evaluated incrementally (seed 000, Sect. 4.2-4.4).

:class:`RsepqlQuery` runs a plan whose r2r is a :class:`~rsep.algebra.events.Match` (alone
or joined with a graph pattern, :class:`~rsep.algebra.plan.EventJoin`) as events arrive,
with the oracle's answers (``rsep.semantics.rsepql``, which the engine does not import):

1. the instants are decided as for any continuous query over windows (RSP-QL Def. 23):
   items go into their stream's buffer, the report policies pick the evaluation instants
   and the windows' contents are positions of the buffers
   (:class:`~rsep.engine.continuous.ContinuousWindowQuery`, whose machinery this class
   extends);
2. each basic event pattern ``EVENT w P`` keeps its candidate event mappings in columns:
   the solutions of ``P`` on each item ``(G_k, t_k)`` of ``w``, matched once per item, a
   batch of items at a time, by the columnar BGP matcher when ``P`` is a BGP with FILTERs
   (else item by item by the exact matcher), kept while the buffer keeps the item
   (:class:`Candidates`);
3. ``E1 SEQ E2`` (Eq. (7)), ``SEQ^n`` (Eq. (9)), ``SEQ^c`` / ``SEQ^r`` (Eq. (10)-(11)),
   ``FIRST`` and ``LAST`` (order ``≺``) are evaluated by the columnar event operators
   (:mod:`rsep.engine.event_operators`), each sub-pattern once for all the contexts it is
   asked under (an instant, an active window's bound, the bindings substituted), and
   without consumption at every pending instant at once (:class:`_Scope`);
4. the consumption policies ``P^c`` and ``P^r`` (Def. 8-10, Eq. (12)) carry the potential
   input of each window from one evaluation instant to the next (:class:`Consumption`,
   rows of ids): ``Δ_i`` is what the content holds and did not at the previous
   evaluation, and what the answer used (``μ(P)`` of its basic-event solutions) is taken
   out; such instants are evaluated one after the other;
5. the bag of ``MATCH``'s mappings is joined with the graph pattern beside it over the
   instantaneous dataset (:class:`~rsep.engine.continuous.InstantDataset`), the SELECT's
   expressions and projection apply, and the streaming operator and the query form are
   the continuous query's.

As in the oracle, MATCH drops the time annotations (Sect. 4.2, "Event Graph Pattern"): the
results carry no interval. The active windows of RSEP-QL (``W^id``, ``W^⊔[0, t3 - 1] • W``)
are all "the items of the window at times in ``[0, u]``", kept as the bound ``u``
(:data:`~rsep.engine.event_operators.WHOLE`: ``W^id``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.events import (
    ConsumptionPolicy,
    Event,
    EventPattern,
    First,
    GraphPatternRef,
    InputUnit,
    Last,
    Match,
    SelectionPolicy,
    Seq,
)
from rsep.algebra.modifiers import apply as apply_modifiers
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import EventJoin, Plan, Select
from rsep.engine.bgp import GroupMatcher
from rsep.engine.continuous import ContinuousWindowQuery, GraphSource, _at, _Row
from rsep.engine.dataset import Group, compile_group, spans_of
from rsep.engine.event_operators import (
    UNBOUND,
    WHOLE,
    Mappings,
    compatible_pairs,
    concatenated,
    decoded,
    distinct_rows,
    dominant,
    in_rows,
    joined_leaves,
    merged,
)
from rsep.engine.pattern import Columns, Filter, equal_pairs, keep_counted, match_patterns
from rsep.engine.terms import TermDictionary
from rsep.engine.window import Ranges, StreamBuffer, WindowState
from rsep.errors import UserError
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, Mu

__all__ = ["Candidates", "Consumption", "InputUnit", "RsepqlQuery"]

_MAX_CACHED = 65536

_NO_KEYS = np.zeros((0, 4), np.int64)


@dataclass
class _Table:
    """A basic event pattern's event mappings at the instants of a scope (Sect. 4.2): each
    candidate's instant, time, term ids per variable and leaf number (``leaf + k`` for row
    ``k``)."""

    instant: np.ndarray
    time: np.ndarray
    columns: dict[str, np.ndarray]
    leaf: int


class Candidates:
    """The solutions of one basic event pattern ``EVENT w P`` on each item of its window's
    buffer, in columns (Sect. 4.2): matched once per item, a batch of items at a time, when
    a window's content first reaches them (by the columnar BGP matcher,
    :func:`~rsep.engine.pattern.match_patterns`, when ``P`` is a BGP with FILTERs; else by
    the exact matcher, item by item), forgotten when the buffer evicts the item."""

    def __init__(self, event: Event, group: Group | str) -> None:
        self.event = event
        self.names = tuple(sorted(event.variables))
        self.group: Group | None = None
        self.exact_reason: str | None = None
        """Why ``P`` is matched item by item by the exact matcher (``None``: in columns)."""
        if isinstance(group, str):
            self.exact_reason = group
        elif len(group.blocks) != 1 or group.blocks[0].graph is not None:
            self.exact_reason = "a basic event pattern reading a named graph"
        elif set(group.variables) != set(self.names):
            self.exact_reason = "a FILTER on a variable the pattern does not bind"
        else:
            self.group = group
        self.done = 0
        """The position up to which items are matched."""
        self._constants: dict[str, int] = {}
        self.position = np.zeros(0, np.int64)
        self.columns = {n: np.zeros(0, np.int32) for n in self.names}

    def reach(self, query: RsepqlQuery, buffer: StreamBuffer, hi: int) -> None:
        """Match the items before position ``hi`` not matched yet."""
        lo = max(self.done, buffer.offset)
        if hi <= lo:
            return
        self.done = hi
        if self.group is not None:
            position, columns = self._match(query, buffer, lo, hi)
        else:
            position, columns = self._match_exactly(query, buffer, lo, hi)
        self.position = np.concatenate([self.position, position])
        for name in self.names:
            self.columns[name] = np.concatenate([self.columns[name], columns[name]])

    def _match(
        self, query: RsepqlQuery, buffer: StreamBuffer, lo: int, hi: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        assert self.group is not None
        starts, ends = buffer.rows_of(np.arange(lo, hi), np.arange(lo + 1, hi + 1))
        spo = buffer.spo[int(starts[0]) : int(ends[-1])]
        triples = {
            "event": np.repeat(np.arange(hi - lo, dtype=np.int32), ends - starts),
            "s": spo[:, 0],
            "p": spo[:, 1],
            "o": spo[:, 2],
        }
        block = self.group.blocks[0]
        keep = query._keep_rows(self.group)
        found = match_patterns(block.patterns, triples, query.dictionary, block.filters, keep)
        if found is None:
            return np.zeros(0, np.int64), {n: np.zeros(0, np.int32) for n in self.names}
        for f in self.group.filters:
            found = keep(found, f)
        return found["event"].astype(np.int64) + lo, {n: found[n] for n in self.names}

    def _match_exactly(
        self, query: RsepqlQuery, buffer: StreamBuffer, lo: int, hi: int
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        positions: list[int] = []
        rows: list[list[int]] = []
        for p in range(lo, hi):
            for mu in query._solutions(self.event.pattern, buffer.event(p).graph):
                positions.append(p)
                rows.append(query._ids(mu, self.names))
        table = np.array(rows, np.int32).reshape(-1, len(self.names))
        return np.array(positions, np.int64), {n: table[:, k] for k, n in enumerate(self.names)}

    def rows(self, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The candidates of the items in ``spans`` (rows ``(instant, lo, hi)``: positions
        ``[lo, hi)`` at an instant): each one's instant and row."""
        first = np.searchsorted(self.position, spans[:, 1], "left")
        last = np.searchsorted(self.position, spans[:, 2], "left")
        return np.repeat(spans[:, 0], last - first), spans_of(first, last)

    def forget(self, before: int) -> None:
        """Drop the solutions of the items before position ``before`` (evicted)."""
        cut = int(np.searchsorted(self.position, before, "left"))
        if cut and cut * 2 >= len(self.position):
            self.position = self.position[cut:]
            self.columns = {n: c[cut:] for n, c in self.columns.items()}

    def _constant(self, dictionary: TermDictionary, text: str) -> int:
        """The id of a constant of ``P`` (known once the dictionary has it)."""
        known = self._constants.get(text)
        if known is None:
            known = dictionary.lookup(text)
            if known >= 0:
                self._constants[text] = known
        return known

    def used(self, query: RsepqlQuery, table: _Table, time: np.ndarray) -> np.ndarray:
        """The inputs ``(time, s, p, o)`` each of ``table``'s solutions used, one per triple
        of ``μ(P)`` (a BGP without blank nodes uses exactly those; Sect. 4.4), row after
        row; ``time`` the items' times (or zeros, :attr:`InputUnit.TRIPLE`)."""
        assert self.group is not None
        patterns = self.group.blocks[0].patterns
        n = len(table.time)
        keys = np.empty((n, len(patterns), 4), np.int64)
        keys[:, :, 0] = time[:, None]
        for k, pattern in enumerate(patterns):
            for j, position in enumerate(pattern):
                if position.startswith("?"):
                    keys[:, k, j + 1] = table.columns[position[1:]]
                else:
                    keys[:, k, j + 1] = self._constant(query.dictionary, position)
        return keys.reshape(-1, 4)


class Consumption:
    """The potential input of each window carried across evaluation instants under
    ``P^c`` and ``P^r`` (RSEP-QL Def. 8-10) as rows ``(time, s, p, o)`` of term ids (time 0
    under :attr:`InputUnit.TRIPLE`): ``I_1(w_j) = SDS_{w_j}(t_1)``, then ``I_i(w_j) = Δ_i(w_j)
    ∪ ((I_{i-1}(w_j) ∖ used_{i-1}) ∩ SDS_{w_j}(t_i))``, ``Δ_i`` (Def. 9) what is in the
    content now and was not at the previous evaluation."""

    def __init__(self, unit: InputUnit) -> None:
        self.unit = unit
        self._present: dict[str, np.ndarray] = {}
        self.available: dict[str, np.ndarray] = {}

    def inputs(self, buffer: StreamBuffer, ranges: Ranges) -> tuple[np.ndarray, np.ndarray]:
        """The inputs of the items at ``ranges`` of positions, one per triple, and the
        position of each."""
        rows, positions = _triples_of(buffer, ranges)
        keys = np.empty((len(rows), 4), np.int64)
        keys[:, 0] = (
            buffer.times[positions - buffer.offset] if self.unit is InputUnit.OCCURRENCE else 0
        )
        keys[:, 1:] = buffer.spo[rows]
        return keys, positions

    def update(self, state: WindowState, now: Ranges) -> None:
        """Move window ``state``'s potential input to its content ``now``."""
        iri = state.iri
        keys = self.inputs(state.buffer, now)[0]
        present = distinct_rows(keys)[0]
        before = self._present.get(iri, _NO_KEYS)
        available = self.available.get(iri, _NO_KEYS)
        fresh = present[~in_rows(present, before)]
        kept = available[in_rows(available, present)]
        self.available[iri] = np.concatenate([fresh, kept])
        self._present[iri] = present

    def consume(self, used: Mapping[str, np.ndarray]) -> None:
        """Take out what the answer at this instant used (Sect. 4.4)."""
        for iri, keys in used.items():
            available = self.available.get(iri, _NO_KEYS)
            self.available[iri] = available[~in_rows(available, keys)]


def _triples_of(buffer: StreamBuffer, ranges: Ranges) -> tuple[np.ndarray, np.ndarray]:
    """The buffer's rows of triples of the items at ``ranges`` of positions, and each
    row's position."""
    rows: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    for lo, hi in ranges:
        if hi <= lo:
            continue
        starts, ends = buffer.rows_of(np.arange(lo, hi), np.arange(lo + 1, hi + 1))
        rows.append(np.arange(int(starts[0]), int(ends[-1])))
        positions.append(np.repeat(np.arange(lo, hi), ends - starts))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(positions)


class RsepqlQuery(ContinuousWindowQuery):
    """A plan whose r2r is RSEP-QL's ``MATCH`` (possibly joined with a graph pattern),
    evaluated incrementally with the oracle's answers (module docstring).

    ``graphs`` gives the default and named graphs the graph pattern beside ``MATCH``
    reads; the parameter ``input_unit`` what consumption consumes (:class:`InputUnit`,
    RSEP-QL Def. 8-10). The state is bounded: each window's items by ``max_window_events``, the
    event mappings of any sub-pattern at one instant by ``max_runs``.
    """

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, GraphSource] | None = None,
        *,
        start: int | None = None,
        dictionary: TermDictionary | None = None,
    ) -> None:
        plan = apply_profile(plan)
        r2r = plan.r2r
        root = r2r.event if isinstance(r2r, EventJoin) else r2r
        if not isinstance(root, Match):
            raise UserError(
                f"an RSEP-QL plan's event pattern is a MATCH, not {type(root).__name__}"
            )
        params = plan.parameters
        self.selection: SelectionPolicy = (
            root.selection if root.selection is not None else params.selection
        )
        self.consumption: ConsumptionPolicy = (
            root.consumption if root.consumption is not None else params.consumption
        )
        super().__init__(plan, graphs, start=start, dictionary=dictionary)
        self.plan = plan
        self.graph_pattern: GraphPatternRef | None = (
            r2r.graph if isinstance(r2r, EventJoin) and not r2r.graph.empty else None
        )
        self.filters = r2r.filters if isinstance(r2r, EventJoin) else ()
        """The group's FILTERs over the join (:class:`~rsep.algebra.plan.EventJoin`)."""
        self.match = root
        self.unit = params.input_unit
        self.max_runs = params.max_runs
        states = {state.iri: state for state in self._states}
        self._events: dict[Event, Candidates] = {}
        for node in root.walk():
            if isinstance(node, Match) and node is not root:
                raise UserError("MATCH is a graph pattern; it cannot stand inside an event pattern")
            if isinstance(node, Event):
                if node.window not in states:
                    raise UserError(
                        f"EVENT reads window <{node.window}>, which the dataset does not declare"
                    )
                if node not in self._events:
                    group = compile_group(node.pattern.text, self.dictionary)
                    self._events[node] = Candidates(node, group)
            elif isinstance(node, EventPattern) and not isinstance(
                node, Seq | First | Last | Match
            ):
                raise UserError(f"{type(node).__name__} is not an RSEP-QL event pattern")
        self._windows = {node.window: states[node.window] for node in self._events}
        self._carried: Consumption | None = (
            None if self.consumption is ConsumptionPolicy.NONE else Consumption(self.unit)
        )
        self._matcher: GraphMatcher | None = None
        self._patterns: GroupMatcher | None = None
        self._filtered: dict[tuple[str, frozenset[Triple]], tuple[Mu, ...]] = {}
        self._used_cache: dict[tuple[str, frozenset[Triple], Mu], frozenset[Triple]] = {}
        self.inexact_filters = 0
        """Candidates whose FILTER the programs could not decide, evaluated exactly."""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_empty"] = None  # pyoxigraph stores do not pickle; made again when needed
        state["_matcher"] = None
        state["_patterns"] = None
        state["_filtered"] = {}  # caches: computed again when needed
        state["_used_cache"] = {}
        return state

    @property
    def matcher(self) -> GraphMatcher:
        """SPARQL over one item graph, with the data's literal forms (made when needed)."""
        if self._matcher is None:
            self._matcher = GraphMatcher(self._forms)
        return self._matcher

    @property
    def patterns(self) -> GroupMatcher:
        """``⟦P⟧_G`` of a basic event pattern on an item graph (Sect. 4.2) the columns do
        not match: in Python for a BGP with FILTERs, else by :attr:`matcher`."""
        if self._patterns is None:
            self._patterns = GroupMatcher(self.matcher)
        return self._patterns

    def _columnar_group(self) -> Group | str:
        """The graph pattern beside MATCH as the columnar solver takes it (MATCH itself is
        evaluated by the event operators, :class:`_Scope`), or why pyoxigraph evaluates
        it."""
        if GraphPatternRef(self.pattern.text).empty:
            return "no graph pattern beside MATCH"
        return super()._columnar_group()

    def _learns_forms(self) -> bool:
        """The exact matcher may match basic event patterns and FILTERs: always."""
        return True

    def _batched(self) -> bool:
        """Without consumption the instants are independent: evaluated many at once; with
        it, one after the other (what an instant consumed is gone at the next, Def. 8-10)."""
        return self.consumption is ConsumptionPolicy.NONE

    def _keep_rows(self, group: Group) -> Callable[[Columns, Filter], Columns]:
        """A FILTER of ``group`` applied to solutions in columns (the programs' verdicts,
        the exact evaluator's where they cannot decide, counted)."""

        def keep(found: Columns, f: Filter) -> Columns:
            kept, undecided = keep_counted(found, f, group.slots, self.dictionary, self.matcher)
            self.inexact_filters += undecided
            return kept

        return keep

    def _ids(self, mu: Mu, names: Sequence[str]) -> list[int]:
        """The term ids of ``mu``'s values of ``names`` (:data:`UNBOUND` where it has none)."""
        intern = self.dictionary.intern
        return [intern(str(mu[name])) if name in mu else UNBOUND for name in names]

    # one evaluation instant ---------------------------------------------------------------

    def _graph_pattern(self, plan: Plan) -> GraphPatternRef:
        """The graph pattern joined with ``MATCH`` (``{}`` without one), which the windows'
        instantaneous dataset is kept for."""
        r2r = plan.r2r
        return r2r.graph if isinstance(r2r, EventJoin) else GraphPatternRef("{}")

    def _answer_instants(self, times: np.ndarray, spans: Mapping[str, np.ndarray]) -> list[Result]:
        """The answers at instants ``times`` whose windows hold ``spans`` (rows ``(instant,
        lo, hi)`` by window), ``MATCH`` evaluated at all of them at once (no consumption)."""
        found = _Scope(self, times, spans).root(self.match.pattern)
        found = self._with_graph(found, len(times), spans)
        found = found.take(np.argsort(found.context, kind="stable"))
        mappings = self._decoded(found)
        bounds = np.searchsorted(found.context, np.arange(len(times) + 1)).tolist()
        exact = self.graph_pattern is not None and self.solver is None
        contents = _contents_of(spans, len(times)) if exact else None
        out: list[Result] = []
        for k, t in enumerate(times.tolist()):
            within = contents[k] if contents is not None else {}
            psi = self._rows_of(mappings[bounds[k] : bounds[k + 1]], t, within)
            out.extend(self._answer(t, psi))
        self._forget()
        return out

    def _evaluate(self, t: int, contents: Mapping[str, Ranges]) -> list[_Row]:
        """The answer at one reported instant (RSP-QL Def. 23-24) under consumption: the
        potential input moved to the windows' contents, ``MATCH`` over it, what the answer
        used consumed (Eq. (12))."""
        carried = self._carried
        assert carried is not None
        for iri, state in self._windows.items():
            carried.update(state, contents[iri])
        spans = {
            iri: np.array([(0, lo, hi) for lo, hi in ranges], np.int64).reshape(-1, 3)
            for iri, ranges in contents.items()
        }
        scope = _Scope(self, np.array([t], np.int64), spans)
        found = scope.root(self.match.pattern)
        carried.consume(scope.used(found))
        found = self._with_graph(found, 1, spans)
        psi = self._rows_of(self._decoded(found), t, contents)
        self._forget()
        return psi

    def _rows_of(self, found: list[Mu], t: int, contents: Mapping[str, Ranges]) -> list[_Row]:
        """``MATCH``'s mappings at ``t`` joined with the graph pattern beside it, filtered
        by the group's FILTERs and projected (SPARQL 1.1 sec. 18.2)."""
        if self.graph_pattern is not None and self.solver is None:
            found = self._join_graph(found, t, contents)
        if self.filters:  # SPARQL 1.1 sec. 18.2.2.6: Filter(F, Join(MATCH E, P))
            found = [mu for mu in found if all(self.matcher.holds(f, mu) for f in self.filters)]
        return [self._row(mu) for mu in self._project(found)]

    def _with_graph(self, found: Mappings, k: int, spans: Mapping[str, np.ndarray]) -> Mappings:
        """MATCH's mappings (their context the instant) joined with the solutions of the
        graph pattern beside it at each of the ``k`` instants, by the columnar solver
        (Sect. 4.1-4.2: ``MATCH`` is a graph pattern; its bag joins with the group's); as
        they are without one or when pyoxigraph evaluates it (:meth:`_join_graph`)."""
        if self.graph_pattern is None or self.solver is None:
            return found
        other = self.solver.solve(k, spans)
        instant = other.pop("event").astype(np.int64)
        shared = sorted(found.columns.keys() & other.keys())
        li, ri = compatible_pairs(
            [found.context, *(found.columns[n] for n in shared)],
            [instant, *(other[n] for n in shared)],
            len(found),
            len(instant),
            equal=1,
        )
        columns = merged(found.columns, li, other, ri)
        return Mappings(found.context[li], found.t1[li], found.t2[li], columns)

    def _decoded(self, found: Mappings) -> list[Mu]:
        """The ``μ`` of each event mapping, as terms (MATCH drops the intervals, Sect. 4.2)."""
        return decoded(found, self.dictionary, self._terms)

    def _used(
        self, pattern: GraphPatternRef, graph: frozenset[Triple], mu: Mu
    ) -> frozenset[Triple]:
        """The triples ``μ(P)`` a solution the exact matcher found used, found as the oracle
        finds them: those without which ``μ`` is no longer a solution of ``P`` in the item's
        graph."""
        key = (pattern.text, graph, mu)
        known = self._used_cache.get(key)
        if known is None:
            known = frozenset(
                x for x in graph if not self.patterns.match(pattern, graph - {x}, bound=mu)
            )
            if len(self._used_cache) >= _MAX_CACHED:
                self._used_cache.clear()
            self._used_cache[key] = known
        return known

    def _keys(self, triples: frozenset[Triple], t: int) -> np.ndarray:
        """Triples as inputs ``(time, s, p, o)`` of an item at ``t`` (:class:`Consumption`)."""
        intern = self.dictionary.intern
        keys = np.empty((len(triples), 4), np.int64)
        keys[:, 0] = t if self.unit is InputUnit.OCCURRENCE else 0
        if triples:
            keys[:, 1:] = [[intern(str(term)) for term in x] for x in triples]
        return keys

    def _solutions(self, pattern: GraphPatternRef, graph: frozenset[Triple]) -> tuple[Mu, ...]:
        """``⟦P⟧_G`` of an item graph by the exact matcher, each once, cached by graph."""
        key = (pattern.text, graph)
        known = self._filtered.get(key)
        if known is None:
            known = tuple(dict.fromkeys(self.patterns.match(pattern, graph)))
            if len(self._filtered) >= _MAX_CACHED:
                self._filtered.clear()
            self._filtered[key] = known
        return known

    def _join_graph(self, found: list[Mu], t: int, contents: Mapping[str, Ranges]) -> list[Mu]:
        """``MATCH E`` joined with the graph pattern beside it over the dataset at ``t``
        (Sect. 4.1-4.2: ``MATCH`` is a graph pattern; its bag joins with the group's)."""
        assert self.graph_pattern is not None
        windows = [(state, contents[state.iri]) for state in self._states]
        graphs = {iri: _at(source, t) for iri, source in self._sources.items()}
        self._dataset.update(windows, graphs)
        other = self._dataset.query(f"SELECT *\nWHERE {{\n{self.graph_pattern.text}\n}}", t)
        out: list[Mu] = []
        for mu in found:
            for row in other:
                if mu.compatible(row):
                    out.append(mu.join(row))
        return out

    def _project(self, found: list[Mu]) -> list[Mu]:
        """The SELECT's ``(e AS ?v)`` expressions, projection and DISTINCT (SPARQL 1.1 sec.
        18.2.4-18.2.5) on each solution, as the oracle applies them; with solution modifiers,
        those over the whole answer (:mod:`rsep.algebra.modifiers`)."""
        modifiers = self.plan.modifiers
        if modifiers is not None:  # MATCH's mappings carry no interval (Sect. 4.2)
            rows = apply_modifiers(modifiers, [(mu, None) for mu in found], self.matcher.forms)
            return [mu for mu, _ in rows]
        form = self.plan.form
        if not isinstance(form, Select):
            return found
        out: list[Mu] = []
        seen: set[Mu] = set()
        for mu in found:
            for name, expression in form.expressions:
                value = self.matcher.value(expression, mu)
                if value is not None and name not in mu:
                    mu = mu.join({name: value})
            if form.variables:
                mu = mu.project(form.variables)
            if form.distinct:
                if mu in seen:
                    continue
                seen.add(mu)
            out.append(mu)
        return out

    def _forget(self) -> None:
        """Drop the candidates of items the buffers no longer keep."""
        for candidates in self._events.values():
            candidates.forget(self._windows[candidates.event.window].buffer.offset)


@dataclass
class _Contexts:
    """Distinct contexts a sub-pattern is evaluated under: the instant (of the scope's), the
    upper bound of the active window (``W^⊔[0, upper] • W``, :data:`WHOLE` for ``W^id``)
    and the bindings substituted, a term id per variable of the sub-pattern
    (:data:`UNBOUND`: none)."""

    instant: np.ndarray
    upper: np.ndarray
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.upper)


class _Scope:
    """One evaluation instant: the candidates of each basic event pattern in the windows'
    contents (Eq. (12): only what the potential input still holds, under consumption), and
    each event pattern evaluated under many contexts at once (Sect. 4.2-4.3)."""

    def __init__(
        self, query: RsepqlQuery, times: np.ndarray, spans: Mapping[str, np.ndarray]
    ) -> None:
        self.query = query
        self.times = times
        self.spans = spans
        self.track = query._carried is not None
        self._tables: dict[Event, _Table] = {}
        self._leaves = 0
        self._inputs: list[tuple[str, np.ndarray, np.ndarray]] = []
        """Per table under consumption: its window, each input's leaf and the inputs."""

    def root(self, pattern: EventPattern) -> Mappings:
        """``⟨⟨pattern⟩⟩_{W^id}``: under one context, nothing bound."""
        k = len(self.times)
        top = _Contexts(
            np.arange(k, dtype=np.int64),
            np.full(k, WHOLE, np.int64),
            {n: np.full(k, UNBOUND, np.int32) for n in sorted(pattern.variables)},
        )
        return self.evaluate(pattern, top)

    def used(self, found: Mappings) -> dict[str, np.ndarray]:
        """The inputs the mappings ``found`` used, by window (Sect. 4.4)."""
        assert found.leaves is not None
        leaves = np.unique(found.leaves[1])
        out: dict[str, list[np.ndarray]] = {}
        for window, leaf, keys in self._inputs:
            out.setdefault(window, []).append(keys[np.isin(leaf, leaves)])
        return {w: np.concatenate(parts) for w, parts in out.items()}

    # basic event patterns -------------------------------------------------------------------

    def _table(self, event: Event) -> _Table:
        """The event mappings of ``EVENT w P`` at this instant (Sect. 4.2; Eq. (12): ``G_k ∩
        I_i(w_j)`` under consumption)."""
        known = self._tables.get(event)
        if known is not None:
            return known
        query = self.query
        candidates = query._events[event]
        state = query._windows[event.window]
        spans = self.spans[event.window]
        if len(spans):
            candidates.reach(query, state.buffer, int(spans[:, 2].max()))
        instant, rows = candidates.rows(spans)
        position = candidates.position[rows]
        time = state.buffer.times[position - state.buffer.offset]
        columns = {n: c[rows] for n, c in candidates.columns.items()}
        table = _Table(instant, time, columns, self._leaves)
        if self.track:
            table = self._available(candidates, state, table)
        self._leaves += len(table.time)
        self._tables[event] = table
        return table

    def _available(self, candidates: Candidates, state: WindowState, table: _Table) -> _Table:
        """``table`` on the item graphs filtered by the window's potential input (Eq. (12)),
        each candidate with the inputs it uses (kept for :meth:`used`)."""
        query = self.query
        carried = query._carried
        assert carried is not None
        available = carried.available.get(state.iri, _NO_KEYS)
        occurrence = carried.unit is InputUnit.OCCURRENCE
        if candidates.group is not None:
            keys = candidates.used(
                query, table, table.time if occurrence else np.zeros_like(table.time)
            )
            width = len(candidates.group.blocks[0].patterns)
            kept = in_rows(keys, available).reshape(-1, width).all(axis=1)
            rows = np.flatnonzero(kept)
            columns = {n: c[rows] for n, c in table.columns.items()}
            table = _Table(table.instant[rows], table.time[rows], columns, table.leaf)
            leaves = np.repeat(np.arange(len(rows)) + table.leaf, width)
            used_keys = keys.reshape(-1, width, 4)[rows].reshape(-1, 4)
            self._inputs.append((state.iri, leaves, used_keys))
            return table
        # the exact matcher: each item's graph filtered, its solutions and what they use
        ranges = tuple((lo, hi) for _, lo, hi in self.spans[state.iri].tolist())
        inputs, positions = carried.inputs(state.buffer, ranges)
        present = in_rows(inputs, available)
        names = candidates.names
        times: list[int] = []
        rows_ids: list[list[int]] = []
        leaf_of: list[int] = []
        used: list[np.ndarray] = []
        every = [p for lo, hi in ranges for p in range(lo, hi)]  # items without triples too
        for p in every:
            item = state.buffer.event(p)
            mine = positions == p
            graph = item.graph
            if not present[mine].all():
                graph = _triples(query.dictionary, inputs[mine][present[mine]])
            for mu in query._solutions(candidates.event.pattern, graph):
                leaf = table.leaf + len(times)
                times.append(item.t_start)
                rows_ids.append(query._ids(mu, names))
                keys = query._keys(query._used(candidates.event.pattern, graph, mu), item.t_start)
                used.append(keys)
                leaf_of.extend([leaf] * len(keys))
        ids_table = np.array(rows_ids, np.int32).reshape(-1, len(names))
        self._inputs.append(
            (
                state.iri,
                np.array(leaf_of, np.int64),
                np.concatenate(used) if used else _NO_KEYS,
            )
        )
        return _Table(
            np.zeros(len(times), np.int64),
            np.array(times, np.int64),
            {n: ids_table[:, k] for k, n in enumerate(names)},
            table.leaf,
        )

    def _event(self, event: Event, contexts: _Contexts) -> Mappings:
        """``⟨⟨EVENT w P⟩⟩`` under each context: the candidates compatible with its bindings
        at times within its upper bound, the bindings substituted."""
        table = self._table(event)
        names = sorted(event.variables)
        li, ri = compatible_pairs(
            [contexts.instant, *(contexts.columns[n] for n in names)],
            [table.instant, *(table.columns[n] for n in names)],
            len(contexts),
            len(table.time),
            equal=1,
        )
        upper = contexts.upper[li]
        within = (table.time[ri] <= upper) & ((upper == WHOLE) | (table.time[ri] >= 0))
        substituted = np.zeros(len(contexts), bool)
        if self.query._events[event].group is None:
            # the exact matcher's patterns (OPTIONAL, FILTERs on other variables...) may
            # give other solutions under a binding: μ2(E1) is a substitution (Eq. (7))
            for name in names:
                substituted |= contexts.columns[name] != UNBOUND
            within &= ~substituted[li]
        li, ri = li[within], ri[within]
        time = table.time[ri]
        leaves = (np.arange(len(li)), ri + table.leaf) if self.track else None
        bound = {n: contexts.columns[n] for n in names}
        found = Mappings(li, time, time, merged(bound, li, table.columns, ri), leaves)
        if substituted.any():
            found = concatenated(found, self._substituted(event, contexts, substituted))
        return found.distinct()

    def _substituted(self, event: Event, contexts: _Contexts, chosen: np.ndarray) -> Mappings:
        """``⟨⟨μ(EVENT w P)⟩⟩`` by the exact matcher under each ``chosen`` context's
        bindings ``μ`` (Sect. 4.2; the oracle's substitution), item by item, on the graphs
        consumption leaves (Eq. (12)), each solution's inputs kept for :meth:`used`."""
        query = self.query
        state = query._windows[event.window]
        buffer = state.buffer
        carried = query._carried
        names = sorted(event.variables)
        spans = self.spans[event.window].tolist()
        rows: list[tuple[int, int, list[int]]] = []
        leaf_of: list[int] = []
        used: list[np.ndarray] = []
        for c in np.flatnonzero(chosen).tolist():
            upper = int(contexts.upper[c])
            ids = {n: int(contexts.columns[n][c]) for n in names}
            bound = Mu({n: query.dictionary.term(i) for n, i in ids.items() if i != UNBOUND})
            for instant, lo, hi in spans:
                if instant != contexts.instant[c]:
                    continue
                for p in range(lo, hi):
                    t = int(buffer.times[p - buffer.offset])
                    if t > upper or (upper != WHOLE and t < 0):
                        continue
                    graph = buffer.event(p).graph
                    if carried is not None:
                        inputs = carried.inputs(buffer, ((p, p + 1),))[0]
                        present = in_rows(inputs, carried.available.get(state.iri, _NO_KEYS))
                        graph = _triples(query.dictionary, inputs[present])
                    for mu in dict.fromkeys(
                        query.patterns.match(event.pattern, graph, bound=bound)
                    ):
                        if self.track:
                            leaf = self._leaves
                            self._leaves += 1
                            keys = query._keys(query._used(event.pattern, graph, mu), t)
                            used.append(keys)
                            leaf_of.extend([leaf] * len(keys))
                        rows.append((c, t, query._ids(mu, names)))
        if self.track:
            self._inputs.append(
                (
                    state.iri,
                    np.array(leaf_of, np.int64),
                    np.concatenate(used) if used else _NO_KEYS,
                )
            )
        context = np.array([r[0] for r in rows], np.int64)
        time = np.array([r[1] for r in rows], np.int64)
        table = np.array([r[2] for r in rows], np.int32).reshape(-1, len(names))
        leaves = None
        if self.track:
            first = self._leaves - len(rows)
            leaves = (np.arange(len(rows)), np.arange(len(rows)) + first)
        columns = {n: table[:, k] for k, n in enumerate(names)}
        return Mappings(context, time, time, columns, leaves)

    # any event pattern ----------------------------------------------------------------------

    def evaluate(self, pattern: EventPattern, contexts: _Contexts) -> Mappings:
        """``⟨⟨pattern⟩⟩`` under each of ``contexts`` (RSEP-QL Sect. 4.2-4.3): the mappings'
        ``context`` is the row of ``contexts`` they were found under."""
        found = self._evaluate(pattern, contexts)
        if len(found):
            counts = np.bincount(found.context)
            most = int(counts.max())
            if most > self.query.max_runs:
                t = int(self.times[contexts.instant[int(counts.argmax())]])
                raise UserError(
                    f"{type(pattern).__name__} has {most} event mappings at {t}, more "
                    f"than max_runs = {self.query.max_runs} (set it higher, or narrow the windows)"
                )
        return found

    def _evaluate(self, pattern: EventPattern, contexts: _Contexts) -> Mappings:
        if isinstance(pattern, Event):
            return self._event(pattern, contexts)
        if isinstance(pattern, First | Last):
            return _pick(self.evaluate(pattern.pattern, contexts), latest=isinstance(pattern, Last))
        if isinstance(pattern, Seq):
            policy = pattern.selection if pattern.selection is not None else self.query.selection
            if policy is SelectionPolicy.UNRESTRICTED:
                return self._seq(pattern, contexts)
            if policy is SelectionPolicy.NAIVE:
                return self._seq_naive(pattern, contexts)
            return self._seq_selected(pattern, contexts, latest=policy is SelectionPolicy.RECENT)
        raise UserError(f"{type(pattern).__name__} is not an RSEP-QL event pattern")

    def _nothing(self, pattern: EventPattern) -> Mappings:
        """No event mapping of ``pattern`` (a column per variable of it)."""
        none = np.zeros(0, np.int64)
        columns = {n: np.zeros(0, np.int32) for n in sorted(pattern.variables)}
        return Mappings(none, none, none, columns, (none, none) if self.track else None)

    def _lefts(
        self, seq: Seq, contexts: _Contexts, rights: Mappings
    ) -> tuple[Mappings, np.ndarray]:
        """``⟨⟨μ2(E1)⟩⟩`` within ``W^⊔[0, t3 - 1] • W`` (Eq. (7)) for each right mapping
        ``(μ2, t3, t4)``: the mappings of E1 under the distinct such contexts, and the
        context of each right mapping."""
        ctx = rights.context
        upper = np.minimum(np.maximum(rights.t1 - 1, -1), contexts.upper[ctx])
        columns = {
            n: rights.columns[n] if n in rights.columns else contexts.columns[n][ctx]
            for n in sorted(seq.left.variables)
        }
        instant = contexts.instant[ctx]
        table = np.stack([instant, upper, *(c.astype(np.int64) for c in columns.values())], axis=1)
        table, inverse = distinct_rows(table)
        inner = _Contexts(
            table[:, 0],
            table[:, 1],
            {n: table[:, 2 + k].astype(np.int32) for k, n in enumerate(columns)},
        )
        return self.evaluate(seq.left, inner), inverse

    def _seq(self, seq: Seq, contexts: _Contexts) -> Mappings:
        """``E1 SEQ E2`` (Eq. (7)): each ``(μ2, t3, t4)`` of E2 with each ``(μ1, t1, t2)``
        of ``μ2(E1)`` within ``W^⊔[0, t3 - 1] • W``, giving ``(μ1 ∪ μ2, t1, t4)``."""
        rights = self.evaluate(seq.right, contexts)
        if not len(rights):
            return self._nothing(seq)
        lefts, inverse = self._lefts(seq, contexts, rights)
        ri, li = equal_pairs(inverse, lefts.context)
        return _joined(lefts, li, rights, ri, rights.context[ri])

    def _seq_naive(self, seq: Seq, contexts: _Contexts) -> Mappings:
        """``E1 SEQ^n E2`` (Eq. (9)): the latest mappings of E1 and of E2, joined when
        compatible and ``t2 < t3``."""
        lefts = _pick(self.evaluate(seq.left, contexts), latest=True)
        rights = _pick(self.evaluate(seq.right, contexts), latest=True)
        shared = sorted(seq.left.variables & seq.right.variables)
        li, ri = compatible_pairs(
            [lefts.context, *(lefts.columns[n] for n in shared)],
            [rights.context, *(rights.columns[n] for n in shared)],
            len(lefts),
            len(rights),
            equal=1,
        )
        before = lefts.t2[li] < rights.t1[ri]
        li, ri = li[before], ri[before]
        return _joined(lefts, li, rights, ri, lefts.context[li])

    def _seq_selected(self, seq: Seq, contexts: _Contexts, *, latest: bool) -> Mappings:
        """``E1 SEQ^c E2`` / ``E1 SEQ^r E2`` (Eq. (10)-(11)): among the E2 mappings with a
        compatible earlier E1 mapping, the first / last in ``≺``, each joined with the
        first / last of those E1 mappings."""
        rights = self.evaluate(seq.right, contexts)
        if not len(rights):
            return self._nothing(seq)
        lefts, inverse = self._lefts(seq, contexts, rights)
        some = np.flatnonzero(np.isin(inverse, lefts.context))
        rights, inverse = rights.take(some), inverse[some]
        kept = np.flatnonzero(dominant(rights.context, rights.t1, rights.t2, latest=latest))
        rights, inverse = rights.take(kept), inverse[kept]
        lefts = _pick(lefts, latest=latest)
        ri, li = equal_pairs(inverse, lefts.context)
        return _joined(lefts, li, rights, ri, rights.context[ri])


def _contents_of(spans: Mapping[str, np.ndarray], k: int) -> list[dict[str, Ranges]]:
    """Each of ``k`` instants' window contents as ranges of positions, from ``spans``
    (rows ``(instant, lo, hi)`` by window)."""
    out: list[dict[str, Ranges]] = [{iri: () for iri in spans} for _ in range(k)]
    for iri, rows in spans.items():
        for instant, lo, hi in rows.tolist():
            out[instant][iri] = (*out[instant][iri], (lo, hi))
    return out


def _triples(dictionary: TermDictionary, inputs: np.ndarray) -> frozenset[Triple]:
    """The triples of inputs ``(time, s, p, o)`` (a graph consumption left, Eq. (12))."""
    nodes = dictionary.nodes(inputs[:, 1:].reshape(-1))
    return frozenset(Triple(*nodes[k : k + 3]) for k in range(0, len(nodes), 3))  # type: ignore[arg-type]


def _pick(found: Mappings, *, latest: bool) -> Mappings:
    """The mappings of each context whose interval is first / last in ``≺`` (FIRST,
    LAST; Sect. 4.2)."""
    return found.take(np.flatnonzero(dominant(found.context, found.t1, found.t2, latest=latest)))


def _joined(
    lefts: Mappings, li: np.ndarray, rights: Mappings, ri: np.ndarray, context: np.ndarray
) -> Mappings:
    """The sequence of left row ``li[k]`` and right row ``ri[k]``: ``(μ1 ∪ μ2, t1, t4)``
    under ``context[k]``, each mapping once."""
    leaves = None
    if lefts.leaves is not None and rights.leaves is not None:
        leaves = joined_leaves(lefts.leaves, li, rights.leaves, ri)
    found = Mappings(
        context, lefts.t1[li], rights.t2[ri], merged(lefts.columns, li, rights.columns, ri), leaves
    )
    return found.distinct()
