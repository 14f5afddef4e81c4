"""RSEP-QL's ``MATCH`` over windows, evaluated incrementally (seed 000, Sect. 4.2-4.4).

:class:`RsepqlQuery` runs a plan whose r2r is a :class:`~rsep.algebra.events.Match` (alone
or joined with a graph pattern, :class:`~rsep.algebra.plan.EventJoin`) as events arrive,
with the oracle's answers (``rsep.semantics.rsepql``, which the engine does not import):

1. the instants are decided as for any continuous query over windows (RSP-QL Def. 23):
   items go into their stream's buffer, the report policies pick the evaluation instants
   and the windows' contents are positions of the buffers
   (:class:`~rsep.engine.continuous.ContinuousWindowQuery`, whose machinery this class
   extends);
2. each basic event pattern ``EVENT w P`` keeps an index of its candidate event mappings:
   the solutions of ``P`` on each item ``(G_k, t_k)`` of ``w`` are computed once, when the
   item first enters the window (in Python for a BGP with FILTERs,
   :class:`~rsep.engine.bgp.GroupMatcher`, else by pyoxigraph), and kept while the buffer
   keeps the item (:class:`Candidates`); at an instant the window's content selects them, and per
   instant a hash index by the variables a sequence binds first finds the compatible ones;
3. ``E1 SEQ E2`` (Eq. (7)), ``SEQ^n`` (Eq. (9)), ``SEQ^c`` / ``SEQ^r`` (Eq. (10)-(11)),
   ``FIRST`` and ``LAST`` (order ``≺``) are evaluated over these indexes, each
   sub-pattern once per active window and binding (memoised within the instant);
4. the consumption policies ``P^c`` and ``P^r`` (Def. 8-10, Eq. (12)) carry the potential
   input of each window from one evaluation instant to the next (:class:`Consumption`):
   the window's content is counted as it changes, so ``Δ_i`` is what appeared, and what
   the answer used is taken out;
5. the bag of ``MATCH``'s mappings is joined with the graph pattern beside it over the
   instantaneous dataset (:class:`~rsep.engine.continuous.InstantDataset`), the SELECT's
   expressions and projection apply, and the streaming operator and the query form are
   the continuous query's.

As in the oracle, MATCH drops the time annotations (Sect. 4.2, "Event Graph Pattern"): the
results carry no interval. The active windows of RSEP-QL (``W^id``, ``W^⊔[0, t3 - 1] • W``)
are all "the items of the window at times in ``[0, u]``", kept as the bound ``u``
(``None``: ``W^id``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

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
from rsep.engine.dataset import Group
from rsep.engine.terms import TermDictionary
from rsep.engine.window import Ranges, WindowState, difference, positions
from rsep.errors import UserError
from rsep.rdf.event import Event as Item
from rsep.rdf.sparql import GraphMatcher, Mu

__all__ = ["Candidates", "Consumption", "InputUnit", "RsepqlQuery", "dominant"]

_MAX_CACHED = 65536

EventMapping = tuple[Mu, int, int]
"""An event mapping ``(μ, t1, t2)`` (RSEP-QL Sect. 4.2)."""

_Found = dict[EventMapping, frozenset[int]]
"""Event mappings, each with the leaves (basic-event solutions, by number) that justify it."""

_NONE: frozenset[int] = frozenset()

_Bucket = tuple[list[int], list[tuple[Mu, int]]]
"""Candidate event mappings of a basic event pattern: their times (ascending) and their
``(μ, leaf number)``."""

_LOOSE = "loose"
"""The index key of the candidates that leave a bound variable unbound."""


Input = tuple[int | None, Triple]
"""One element of a potential input ``I_i(w_j)`` (Def. 8): the item's time under
:attr:`InputUnit.OCCURRENCE` (``None`` under :attr:`InputUnit.TRIPLE`) and the triple."""


def dominant(intervals: Iterable[tuple[int, int]], *, latest: bool) -> set[tuple[int, int]]:
    """The intervals no other one precedes (``latest=False``: FIRST, ``SEQ^c``) or follows
    (``latest=True``: LAST, ``SEQ^r``, ``SEQ^n``) in ``≺``, the product order on ``(t1,
    t2)`` (RSEP-QL Sect. 4.2, as the oracle reads it), in ``O(n log n)``: sorted
    lexicographically, an interval is preceded exactly when one before it ends no later."""
    distinct = sorted(set(intervals), reverse=latest)
    out: set[tuple[int, int]] = set()
    best: int | None = None
    for interval in distinct:
        end = interval[1]
        if best is None or (end > best if latest else end < best):
            out.add(interval)
            best = end
    return out


def _pick(found: _Found, *, latest: bool) -> _Found:
    keep = dominant(((m[1], m[2]) for m in found), latest=latest)
    return {m: leaves for m, leaves in found.items() if (m[1], m[2]) in keep}


@dataclass
class _Leaf:
    """A solution of a basic event pattern on one item, as consumption needs it: the
    window, the pattern, the item's time, the (filtered) item graph and the solution."""

    window: str
    pattern: GraphPatternRef
    time: int
    graph: frozenset[Triple]
    mu: Mu


class Candidates:
    """The index of one basic event pattern ``EVENT w P`` (Sect. 4.2): the solutions of
    ``P`` on each item of the stream buffer, computed once per item (and per filtered graph
    under consumption), forgotten when the buffer evicts the item."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.names = event.variables
        self._by_position: dict[int, tuple[Mu, ...]] = {}

    def solutions(
        self, position: int, graph: frozenset[Triple], matcher: GroupMatcher
    ) -> tuple[Mu, ...]:
        """``⟦P⟧_{G_k}`` of the item at ``position`` (its whole graph), by ``matcher``."""
        known = self._by_position.get(position)
        if known is None:
            known = tuple(matcher.match(self.event.pattern, graph))
            self._by_position[position] = known
        return known

    def forget(self, before: int) -> None:
        """Drop the solutions of the items before ``before`` (evicted)."""
        if self._by_position and min(self._by_position) < before:
            self._by_position = {p: s for p, s in self._by_position.items() if p >= before}


class Consumption:
    """The potential input of each window carried across evaluation instants under
    ``P^c`` and ``P^r`` (RSEP-QL Def. 8-10): ``I_1(w_j) = SDS_{w_j}(t_1)``, then ``I_i(w_j)
    = Δ_i(w_j) ∪ ((I_{i-1}(w_j) ∖ used_{i-1}) ∩ SDS_{w_j}(t_i))``. The content of each
    window is counted by input as positions enter and leave, so ``Δ_i`` (Def. 9) is what
    went from absent to present."""

    def __init__(self, unit: InputUnit) -> None:
        self.unit = unit
        self._ranges: dict[str, Ranges] = {}
        self._counts: dict[str, dict[Input, int]] = {}
        self._loaded: dict[str, dict[int, list[Input]]] = {}
        self.available: dict[str, set[Input]] = {}

    def inputs(self, item: Item) -> Iterator[tuple[Input, Triple]]:
        """The inputs of an item's triples (:class:`InputUnit`)."""
        time = item.t_start if self.unit is InputUnit.OCCURRENCE else None
        for triple in item.graph:
            yield (time, triple), triple

    def update(self, state: WindowState, now: Ranges) -> None:
        """Move window ``state``'s input to its content ``now``: new inputs become
        available, inputs no longer in the content are gone."""
        iri = state.iri
        before = self._ranges.get(iri, ())
        if before == now:
            return
        counts = self._counts.setdefault(iri, {})
        available = self.available.setdefault(iri, set())
        loaded = self._loaded.setdefault(iri, {})
        touched: dict[Input, int] = {}
        for position in difference(before, now):
            for key in loaded.pop(position):  # the item may be evicted from the buffer
                touched.setdefault(key, counts.get(key, 0))
                counts[key] -= 1
        for position in difference(now, before):
            keys = [key for key, _ in self.inputs(state.buffer.event(position))]
            loaded[position] = keys
            for key in keys:
                touched.setdefault(key, counts.get(key, 0))
                counts[key] = counts.get(key, 0) + 1
        for key, was in touched.items():
            count = counts[key]
            if count <= 0:
                del counts[key]
                available.discard(key)
            elif was <= 0:
                available.add(key)  # Δ_i: absent at t_{i-1}, present now
        self._ranges[iri] = now

    def consume(self, used: Mapping[str, set[Input]]) -> None:
        """Take out what the answer at this instant used (Sect. 4.4)."""
        for iri, keys in used.items():
            self.available.get(iri, set()).difference_update(keys)


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
        super().__init__(plan, graphs, start=start, dictionary=dictionary)
        self.plan = plan
        self.graph_pattern: GraphPatternRef | None = (
            r2r.graph if isinstance(r2r, EventJoin) and not r2r.graph.empty else None
        )
        self.filters = r2r.filters if isinstance(r2r, EventJoin) else ()
        """The group's FILTERs over the join (:class:`~rsep.algebra.plan.EventJoin`)."""
        self.match = root
        params = plan.parameters
        self.selection: SelectionPolicy = (
            root.selection if root.selection is not None else params.selection
        )
        self.consumption: ConsumptionPolicy = (
            root.consumption if root.consumption is not None else params.consumption
        )
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
                self._events.setdefault(node, Candidates(node))
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
        """``⟦P⟧_G`` of a basic event pattern on an item graph (Sect. 4.2): in Python for
        a BGP with FILTERs, else by :attr:`matcher` (made when needed)."""
        if self._patterns is None:
            self._patterns = GroupMatcher(self.matcher)
        return self._patterns

    def _columnar_group(self) -> Group | str:
        """MATCH is evaluated instant after instant: its consumption carries what an
        instant consumed to the next (RSEP-QL Def. 8-10)."""
        return "an RSEP-QL MATCH, evaluated instant by instant (consumption)"

    # one evaluation instant ---------------------------------------------------------------

    def _graph_pattern(self, plan: Plan) -> GraphPatternRef:
        """The graph pattern joined with ``MATCH`` (``{}`` without one), which the windows'
        instantaneous dataset is kept for."""
        r2r = plan.r2r
        return r2r.graph if isinstance(r2r, EventJoin) else GraphPatternRef("{}")

    def _evaluate(self, t: int, contents: Mapping[str, Ranges]) -> list[_Row]:
        """The answer at a reported instant (RSP-QL Def. 23-24): ``MATCH`` over the windows'
        contents, joined with the graph pattern, projected."""
        found = [m[0] for m in self._mappings(t, contents)]
        if self.graph_pattern is not None:
            found = self._join_graph(found, t, contents)
        if self.filters:  # SPARQL 1.1 sec. 18.2.2.6: Filter(F, Join(MATCH E, P))
            found = [mu for mu in found if all(self.matcher.holds(f, mu) for f in self.filters)]
        psi = [self._row(mu) for mu in self._project(found)]
        self._forget()
        return psi

    def _mappings(self, t: int, contents: Mapping[str, Ranges]) -> list[EventMapping]:
        """``⟨⟨E⟩⟩_{W^id, P}^t`` of the Match's pattern (Eq. (12)), consumption carried."""
        carried = self._carried
        if carried is not None:
            for iri, state in self._windows.items():
                carried.update(state, contents[iri])
        scope = _Scope(self, t, contents)
        found = scope.evaluate(self.match.pattern, None, Mu())
        if carried is not None:
            used: dict[str, set[Input]] = {}
            for leaves in found.values():
                for number in leaves:
                    leaf = scope.leaves[number]
                    keys = used.setdefault(leaf.window, set())
                    time = leaf.time if self.unit is InputUnit.OCCURRENCE else None
                    keys.update((time, x) for x in self._used(leaf))
            carried.consume(used)
        return list(found)

    def _used(self, leaf: _Leaf) -> frozenset[Triple]:
        """The triples ``μ(P)`` the solution used, found as the oracle finds them: those
        without which ``μ`` is no longer a solution of ``P`` in the item's graph (exact for
        a BGP without blank nodes)."""
        key = (leaf.pattern.text, leaf.graph, leaf.mu)
        known = self._used_cache.get(key)
        if known is None:
            known = frozenset(
                x
                for x in leaf.graph
                if not self.patterns.match(leaf.pattern, leaf.graph - {x}, bound=leaf.mu)
            )
            if len(self._used_cache) >= _MAX_CACHED:
                self._used_cache.clear()
            self._used_cache[key] = known
        return known

    def _solutions(
        self, candidates: Candidates, position: int, graph: frozenset[Triple]
    ) -> tuple[Mu, ...]:
        """``⟦P⟧_G`` of an item: the index's, or (a graph filtered by consumption) cached by
        graph."""
        key = (candidates.event.pattern.text, graph)
        known = self._filtered.get(key)
        if known is None:
            known = tuple(self.patterns.match(candidates.event.pattern, graph))
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
        """Drop the index entries of items the buffers no longer keep."""
        for candidates in self._events.values():
            state = self._windows[candidates.event.window]
            candidates.forget(state.buffer.offset)


class _Scope:
    """One evaluation instant: the candidates of each basic event pattern in the windows'
    contents (filtered by the potential input under consumption), the hash indexes built on
    them, and the memo of sub-pattern evaluations."""

    def __init__(self, query: RsepqlQuery, t: int, contents: Mapping[str, Ranges]) -> None:
        self.query = query
        self.t = t
        self.contents = contents
        self.track = query._carried is not None
        self.leaves: list[_Leaf] = []
        self._lists: dict[Event, _Bucket] = {}
        self._indexes: dict[tuple[Event, tuple[str, ...]], dict[object, _Bucket]] = {}
        self._memo: dict[tuple[int, int | None, Mu], _Found] = {}

    # basic event patterns -------------------------------------------------------------------

    def _candidates(self, event: Event) -> _Bucket:
        """The event mappings of ``EVENT w P`` at this instant: times (ascending) and
        ``(μ, leaf)`` pairs (Sect. 4.2; Eq. (12): ``G_k ∩ I_i(w_j)`` under consumption)."""
        known = self._lists.get(event)
        if known is not None:
            return known
        query = self.query
        candidates = query._events[event]
        state = query._windows[event.window]
        carried = query._carried
        available = None if carried is None else carried.available.get(event.window, set())
        times: list[int] = []
        pairs: list[tuple[Mu, int]] = []
        for position in positions(self.contents[event.window]):
            item = state.buffer.event(position)
            graph = item.graph
            if available is not None and carried is not None:
                keys = list(carried.inputs(item))
                if all(key in available for key, _ in keys):
                    solutions = candidates.solutions(position, graph, query.patterns)
                else:
                    graph = frozenset(x for key, x in keys if key in available)
                    solutions = query._solutions(candidates, position, graph)
            else:
                solutions = candidates.solutions(position, graph, query.patterns)
            for mu in dict.fromkeys(solutions):
                number = -1
                if self.track:
                    number = len(self.leaves)
                    self.leaves.append(_Leaf(event.window, event.pattern, item.t_start, graph, mu))
                times.append(item.t_start)
                pairs.append((mu, number))
        known = (times, pairs)
        self._lists[event] = known
        return known

    def _event(self, event: Event, upper: int | None, bound: Mu) -> _Found:
        """``⟨⟨EVENT w P⟩⟩`` within ``[0, upper]`` with ``bound`` substituted: the candidates
        compatible with it, found by a hash index on the bound variables (a solution that
        leaves one of them unbound is checked for compatibility instead)."""
        substituted = bound.project(event.variables)
        names = tuple(sorted(substituted))
        buckets: list[_Bucket] = []
        if names:
            index = self._indexes.get((event, names))
            if index is None:
                index = self._index(event, names)
                self._indexes[(event, names)] = index
            exact = index.get(tuple(substituted[name] for name in names))
            buckets = [b for b in (exact, index.get(_LOOSE)) if b is not None]
        else:
            buckets = [self._candidates(event)]
        found: _Found = {}
        for times, pairs in buckets:
            lo, hi = 0, len(times)
            if upper is not None:
                lo, hi = bisect_right(times, -1), bisect_right(times, upper)
            for i in range(lo, hi):
                mu, number = pairs[i]
                if names:
                    if not mu.compatible(substituted):
                        continue
                    mu = Mu({**dict(mu.items()), **dict(substituted.items())})
                time = times[i]
                key = (mu, time, time)
                leaves = frozenset((number,)) if self.track else _NONE
                found[key] = found.get(key, _NONE) | leaves
        return found

    def _index(self, event: Event, names: tuple[str, ...]) -> dict[object, _Bucket]:
        """The candidates of ``event`` by their values of ``names`` (time order kept)."""
        index: dict[object, _Bucket] = {}
        times, pairs = self._candidates(event)
        for time, (mu, number) in zip(times, pairs, strict=True):
            values: object = _LOOSE
            if all(name in mu for name in names):
                values = tuple(mu[name] for name in names)
            bucket = index.setdefault(values, ([], []))
            bucket[0].append(time)
            bucket[1].append((mu, number))
        return index

    # any event pattern ----------------------------------------------------------------------

    def evaluate(self, pattern: EventPattern, upper: int | None, bound: Mu) -> _Found:
        """``⟨⟨pattern⟩⟩`` within ``[0, upper]`` (``None``: ``W^id``) with ``bound``
        substituted (RSEP-QL Sect. 4.2-4.3), memoised by pattern, bound and binding."""
        key = (id(pattern), upper, bound.project(pattern.variables))
        known = self._memo.get(key)
        if known is not None:
            return known
        found = self._evaluate(pattern, upper, key[2])
        if len(found) > self.query.max_runs:
            raise UserError(
                f"{type(pattern).__name__} has {len(found)} event mappings at {self.t}, more "
                f"than max_runs = {self.query.max_runs} (set it higher, or narrow the windows)"
            )
        self._memo[key] = found
        return found

    def _evaluate(self, pattern: EventPattern, upper: int | None, bound: Mu) -> _Found:
        if isinstance(pattern, Event):
            return self._event(pattern, upper, bound)
        if isinstance(pattern, First):
            return _pick(self.evaluate(pattern.pattern, upper, bound), latest=False)
        if isinstance(pattern, Last):
            return _pick(self.evaluate(pattern.pattern, upper, bound), latest=True)
        if isinstance(pattern, Seq):
            policy = pattern.selection if pattern.selection is not None else self.query.selection
            if policy is SelectionPolicy.UNRESTRICTED:
                return self._seq(pattern, upper, bound)
            if policy is SelectionPolicy.NAIVE:
                return self._seq_naive(pattern, upper, bound)
            return self._seq_selected(pattern, upper, bound, policy)
        raise UserError(f"{type(pattern).__name__} is not an RSEP-QL event pattern")

    def _seq(self, seq: Seq, upper: int | None, bound: Mu) -> _Found:
        """``E1 SEQ E2`` (Eq. (7)): each ``(μ2, t3, t4)`` of E2 with each ``(μ1, t1, t2)``
        of ``μ2(E1)`` within ``W^⊔[0, t3 - 1] • W``, giving ``(μ1 ∪ μ2, t1, t4)``."""
        found: _Found = {}
        for (mu2, t3, t4), leaves2 in self.evaluate(seq.right, upper, bound).items():
            narrowed = _before(t3, upper)
            for (mu1, t1, _), leaves1 in self.evaluate(seq.left, narrowed, bound.join(mu2)).items():
                key = (mu1.join(mu2), t1, t4)
                found[key] = found.get(key, _NONE) | leaves1 | leaves2
        return found

    def _seq_naive(self, seq: Seq, upper: int | None, bound: Mu) -> _Found:
        """``E1 SEQ^n E2`` (Eq. (9)): the latest mappings of E1 and of E2, joined when
        compatible and ``t2 < t3``."""
        lefts = _pick(self.evaluate(seq.left, upper, bound), latest=True)
        rights = _pick(self.evaluate(seq.right, upper, bound), latest=True)
        found: _Found = {}
        for (mu1, t1, t2), leaves1 in lefts.items():
            for (mu2, t3, t4), leaves2 in rights.items():
                if t2 < t3 and mu1.compatible(mu2):
                    key = (mu1.join(mu2), t1, t4)
                    found[key] = found.get(key, _NONE) | leaves1 | leaves2
        return found

    def _seq_selected(
        self, seq: Seq, upper: int | None, bound: Mu, policy: SelectionPolicy
    ) -> _Found:
        """``E1 SEQ^c E2`` / ``E1 SEQ^r E2`` (Eq. (10)-(11)): among the E2 mappings with a
        compatible earlier E1 mapping, the first / last in ``≺``, each joined with the
        first / last of those E1 mappings."""
        latest = policy is SelectionPolicy.RECENT
        rights = self.evaluate(seq.right, upper, bound)
        earlier: dict[EventMapping, _Found] = {}
        for m2 in rights:
            lefts = self.evaluate(seq.left, _before(m2[1], upper), bound.join(m2[0]))
            if lefts:
                earlier[m2] = lefts
        keep = dominant(((m[1], m[2]) for m in earlier), latest=latest)
        found: _Found = {}
        for m2, lefts in earlier.items():
            if (m2[1], m2[2]) not in keep:
                continue
            mu2, _, t4 = m2
            for (mu1, t1, _), leaves1 in _pick(lefts, latest=latest).items():
                key = (mu1.join(mu2), t1, t4)
                found[key] = found.get(key, _NONE) | leaves1 | rights[m2]
        return found


def _before(t3: int, upper: int | None) -> int:
    """``W^⊔[0, t3 - 1] • W`` (Eq. (7)) as a bound: the items at ``[0, t3 - 1]`` of the
    active window ``[0, upper]`` (or of ``W^id``)."""
    bound = max(t3 - 1, -1)
    return bound if upper is None else min(bound, upper)
