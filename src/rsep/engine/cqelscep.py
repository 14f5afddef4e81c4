"""The engine's CQELS-CEP evaluator (seed 001, Sect. 4): windows on interval streams, the
operators on mappings with intervals and nested paths over the background graph, evaluated
as events arrive, with exactly the oracle's answers (``rsep.semantics.cqelscep``).

How the state is kept (the oracle re-reads every stream and re-matches every item's graph
at every instant; the engine does neither):

- **Window contents** (Sect. 4.1, ``w_RANGE``): per window specification, a queue of the
  items of its stream that can still meet a future window ``[t - T, t]``, each with the
  solutions of every graph pattern of its triple sequence pattern in the item's graph
  (Eq. (16), ``μ(P) ⊆ g``), matched **once**, on arrival (in Python for a BGP with FILTERs,
  :class:`~rsep.engine.bgp.GroupMatcher`, else by pyoxigraph). Items leave the queue when
  their end falls before every window still to come (pruned by window and watermark); items
  whose graph matches no pattern are not kept.
- **Evaluation instants**: the oracle evaluates where an item enters a window, where its cut
  interval changes and where it leaves (``CqelscepEvaluation.instants``); the engine keeps
  the same instants as a heap, filled on arrival, and evaluates each once it is final.
- **Operators** (Sect. 4.2: JOIN, OR, SEQ, SEQ_WO, NO_HEAD, NO_TAIL, cases (2)-(16)) on
  sets of ``(μ, t1, t2)``, each joining through a hash index on the variables every
  mapping of both sides binds (compatibility checked on the rest), never a full nested
  loop; a window specification's value is memoised on its cut content, so an instant
  re-evaluates only the windows that changed.
- **Background** (Eq. (17)): ``[[P]]_D`` (the SPARQL part joined with the nested path
  triples, :func:`rsep.algebra.paths.match_path_triples`) is matched once per version of
  ``D``: once for a static ``D``, whose interval ``[TIME_MIN, t]`` holds every event
  interval, so JOIN keeps theirs; for a time-varying ``D`` (RSP-QL Def. 10) again where it
  changes, its interval ``[t1, t]`` from the last change ``t1``, so JOIN cuts the event
  intervals to it (Sect. 4.2), and the changes are evaluation instants, as the oracle's.

When an instant is final. An item ``⟨g, [t1, t2]⟩`` arrives at ``t2`` (its time is its
end, the engine's contract), but the oracle's window at ``t`` holds it from ``t1`` on. The
engine therefore evaluates an instant ``t`` once every item starting by ``t`` can have
arrived: when an event ends after ``t + lateness``, or the watermark reaches
``t + lateness``. An item lasting more than ``lateness`` that starts at an instant already
answered is refused with an error naming the parameter (point items never are).

Bounded state: at most ``max_window_events`` items per window (and instants pending), at
most ``max_runs`` mappings in any operator's value; beyond, a :class:`UserError` names the
limit.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import Triple

from rsep.algebra.events import (
    CepItem,
    CepJoin,
    CepSeq,
    CepWindow,
    EventPattern,
    GraphPatternRef,
    Or,
)
from rsep.algebra.passes import apply_profile
from rsep.algebra.paths import PathGraph, match_path_triples
from rsep.algebra.plan import EventJoin, Plan
from rsep.algebra.r2s import R2S
from rsep.algebra.window import LandmarkWindow, cut_instants, interval_width
from rsep.engine.bgp import GroupMatcher
from rsep.engine.continuous import GraphSource, _at, background_source
from rsep.engine.projection import Answer, Output
from rsep.engine.query import IncrementalQuery
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.rdf.terms import Term
from rsep.reasoning.closure import entail_events
from rsep.reasoning.regime import engine_closure

__all__ = ["TIME_MIN", "CqelscepQuery", "IntervalOutput"]

TIME_MIN = -(2**63)
"""The ``t1`` of Eq. (17) for background data that never changed (a static ``D``)."""

Omega = frozenset[Answer]
"""``Ω``: a set of mappings with intervals ``(μ, t1, t2)`` (Sect. 4.2)."""

_EMPTY = GraphPatternRef("{ }")

_Key = tuple[frozenset[tuple[str, str]], int, int]
"""What the streaming operator compares: a projected mapping as N-Triples text, and its
interval (the oracle's solutions with their ``@interval``)."""


# Sect. 4.2: the operators, through hash indexes ---------------------------------------------


def _always(omega: Iterable[Answer]) -> frozenset[str]:
    """The variables every mapping of ``omega`` binds (the ones a hash index may use)."""
    found: set[str] | None = None
    for mu, _, _ in omega:
        found = set(mu) if found is None else found & set(mu)
        if not found:
            return frozenset()
    return frozenset(found or ())


def _index(omega: Iterable[Answer], names: tuple[str, ...]) -> dict[tuple[Term, ...], list[Answer]]:
    """``omega`` by the values of ``names`` (which every mapping binds)."""
    index: dict[tuple[Term, ...], list[Answer]] = {}
    for m in omega:
        index.setdefault(tuple(m[0][n] for n in names), []).append(m)
    return index


def _probe(mu: Mu, names: tuple[str, ...]) -> tuple[Term, ...] | None:
    """``mu``'s key in an index on ``names``, or ``None`` if it misses one (then every
    bucket is a candidate)."""
    try:
        return tuple(mu[n] for n in names)
    except KeyError:
        return None


def _candidates(
    index: dict[tuple[Term, ...], list[Answer]], mu: Mu, names: tuple[str, ...]
) -> Iterable[Answer]:
    key = _probe(mu, names)
    if key is None:
        return [m for bucket in index.values() for m in bucket]
    return index.get(key, ())


class Operators:
    """Sect. 4.2's operators on ``Ω`` values, each result bounded by ``limit`` mappings
    (``max_runs``: the partial matches alive at one instant). The union ``μ1 ∪ μ2`` of
    each compatible pair is remembered (at most ``limit`` pairs): windows slide by one
    item, so most pairs of an instant were joined at the one before."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._unions: dict[tuple[Mu, Mu], Mu | None] = {}

    def __getstate__(self) -> dict[str, object]:
        return {"limit": self.limit, "_unions": {}}  # a cache: not checkpointed

    def union(self, mu: Mu, nu: Mu) -> Mu | None:
        """``μ ∪ ν`` if ``μ ∼ ν``, else ``None``."""
        key = (mu, nu)
        if key in self._unions:
            return self._unions[key]
        found = mu.join(nu) if mu.compatible(nu) else None
        if len(self._unions) >= self.limit:
            self._unions.clear()
        self._unions[key] = found
        return found

    def bounded(self, found: set[Answer], what: str) -> Omega:
        if len(found) > self.limit:
            raise UserError(
                f"{what} holds more than max_runs = {self.limit} mappings with intervals at "
                "one instant: narrow the windows or the patterns, or raise the limit "
                "(--set max_runs=N)"
            )
        return frozenset(found)

    def join(self, left: Omega, right: Omega) -> Omega:
        """``JOIN``: compatible pairs whose intervals meet, over their intersection."""
        names = tuple(sorted(_always(left) & _always(right)))
        index = _index(right, names)
        found: set[Answer] = set()
        for mu, t1, t2 in left:
            for nu, t3, t4 in _candidates(index, mu, names):
                low, high = max(t1, t3), min(t2, t4)
                if low <= high:
                    both = self.union(mu, nu)
                    if both is not None:
                        found.add((both, low, high))
        return self.bounded(found, "a JOIN")

    def or_(self, left: Omega, right: Omega) -> Omega:
        """``OR(Ω1, Ω2) = Ω1 ∪ Ω2``."""
        return self.bounded(set(left | right), "an OR")

    def seq(self, left: Omega, right: Omega) -> Omega:
        """``SEQ``: compatible pairs, the first ending strictly before the second starts,
        over ``[t1, t4]``."""
        names = tuple(sorted(_always(left) & _always(right)))
        index = _index(left, names)
        found: set[Answer] = set()
        for nu, t3, t4 in right:
            for mu, t1, t2 in _candidates(index, nu, names):
                if t2 < t3:
                    both = self.union(mu, nu)
                    if both is not None:
                        found.add((both, t1, t4))
        return self.bounded(found, "a SEQ")

    def seq_wo(self, first: Omega, negative: Omega, last: Omega) -> Omega:
        """``SEQ_WO``: the sequences of ``first`` and ``last`` with no negative mapping
        compatible with their union strictly between them (``t2 < t3 ∧ t4 < t5``)."""
        names = tuple(sorted(_always(negative) & (_always(first) | _always(last))))
        blockers = _index(negative, names)
        pair_names = tuple(sorted(_always(first) & _always(last)))
        index = _index(first, pair_names)
        found: set[Answer] = set()
        for nu, t5, t6 in last:
            for mu, t1, t2 in _candidates(index, nu, pair_names):
                both = self.union(mu, nu) if t2 < t5 else None
                if both is None:
                    continue
                blocked = any(
                    t2 < b1 and b2 < t5 and other.compatible(both)
                    for other, b1, b2 in _candidates(blockers, both, names)
                )
                if not blocked:
                    found.add((both, t1, t6))
        return self.bounded(found, "a SEQ_WO")

    def no_head(self, negative: Omega, positive: Omega) -> Omega:
        """``NO_HEAD``: the positive mappings with no compatible negative one before."""
        names = tuple(sorted(_always(negative) & _always(positive)))
        index = _index(negative, names)
        return frozenset(
            (nu, t3, t4)
            for nu, t3, t4 in positive
            if not any(b2 < t3 and mu.compatible(nu) for mu, _, b2 in _candidates(index, nu, names))
        )

    def no_tail(self, positive: Omega, negative: Omega, t: int) -> Omega:
        """``NO_TAIL``: the positive mappings with no compatible negative one after them,
        ending by ``t``."""
        names = tuple(sorted(_always(negative) & _always(positive)))
        index = _index(negative, names)
        return frozenset(
            (mu, t1, t2)
            for mu, t1, t2 in positive
            if not any(
                t2 < b1 and b2 <= t and nu.compatible(mu)
                for nu, b1, b2 in _candidates(index, mu, names)
            )
        )

    def sequence(self, values: Sequence[Omega], negated: int | None, t: int) -> Omega:
        """Eq. (3)-(8) / (10)-(15): ``SEQ(X1, SEQ(X2, …))``, or with ``values[negated]``
        negated: NO_HEAD (first), NO_TAIL (last), SEQ_WO (between)."""
        if negated is None:
            return self._chain(values)
        before, negative, after = values[:negated], values[negated], values[negated + 1 :]
        if not before:
            return self.no_head(negative, self._chain(after))
        if not after:
            return self.no_tail(self._chain(before), negative, t)
        return self.seq_wo(self._chain(before), negative, self._chain(after))

    def _chain(self, values: Sequence[Omega]) -> Omega:
        value = values[-1]
        for left in reversed(values[:-1]):
            value = self.seq(left, value)
        return value


# Window specifications (Sect. 4.1, Eq. (9), (16)) -------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One item of a window's stream: its number, interval and the solutions of each graph
    pattern of the window's triple sequence pattern in its graph (Eq. (16))."""

    number: int
    t1: int
    t2: int
    solutions: tuple[tuple[Mu, ...], ...]


class _WindowState:
    """A window specification ``(s, ω, TSP)`` and the items of ``s`` it can still hold."""

    def __init__(self, node: CepWindow, t0: int, limit: int) -> None:
        self.node = node
        self.width = interval_width(node.window)
        own = node.window.t0 if isinstance(node.window, LandmarkWindow) else None
        self.start: int = t0 if own is None else own
        self.limit = limit
        leaves = [n for n in node.pattern.walk() if isinstance(n, GraphPatternRef)]
        self.leaves: tuple[GraphPatternRef, ...] = tuple(dict.fromkeys(leaves))
        self.position = {leaf: i for i, leaf in enumerate(self.leaves)}
        self.items: deque[_Item] = deque()
        self.memo: tuple[tuple[tuple[int, int, int], ...], Omega] | None = None

    def instants(self, t1: int, t2: int) -> range | list[int]:
        """Where the cut interval of an item over ``[t1, t2]`` changes (the oracle's
        ``_item_instants``): ``[t1, t2]`` and, for RANGE T, ``[t1 + T + 1, t2 + T + 1]``."""
        return cut_instants(t1, t2, self.width, self.start)

    def add(self, item: _Item) -> None:
        self.items.append(item)
        if len(self.items) > self.limit:
            raise UserError(
                f"the window {self.node.name} holds more than max_window_events = "
                f"{self.limit} items: narrow it, or raise the limit "
                "(--set max_window_events=N)"
            )

    def evict(self, t: int) -> None:
        """Drop the items no window after ``t`` holds (they end before ``t + 1 - T``)."""
        if self.width is None:
            return
        while self.items and self.items[0].t2 + self.width <= t:
            self.items.popleft()

    def content(self, t: int) -> tuple[tuple[_Item, int, int], ...]:
        """``w_RANGE(S, t, T)``: the items meeting ``[t - T, t]`` (``[t0, t]`` for
        ``[ALL]``), each with its interval cut to it."""
        low = self.start if self.width is None else t - self.width
        if self.width is None and t < self.start:
            return ()
        found = []
        for item in self.items:
            c1, c2 = max(item.t1, low), min(item.t2, t)
            if c1 <= c2:
                found.append((item, c1, c2))
        return tuple(found)


# The query ---------------------------------------------------------------------------------


class IntervalOutput(Output):
    """The streaming operator over answers that come and go: CQELS-CEP's answer at ``t`` is
    the window's (items leave, a negated match removes one), so IStream is ``Ψ(t) \\
    Ψ(t_prev)`` over the previous evaluation instant (RSP-QL Def. 21), DStream ``Ψ(t_prev)
    \\ Ψ(t)``, RStream ``Ψ(t)``, each after the projection and one copy per mapping (Eq. (1)
    is a set). From ``start``, no instant before it is reported and the first one compares
    with ∅ (the answer at ``t`` depends on ``t`` alone: the windows evict, nothing is
    consumed)."""

    def __init__(self, plan: Plan, start: int | None = None) -> None:
        super().__init__(plan, answer_set=True, start=start)
        self._previous: dict[_Key, Answer] = {}
        self._projected: dict[Answer, tuple[_Key, Answer]] = {}
        self._last: object = None

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_projected"] = {}  # a cache
        state["_last"] = None  # compared by identity, which pickling does not keep
        return state

    def instant(self, t: int, found: Iterable[Answer], matcher: GraphMatcher) -> list[Result]:
        """The results at evaluation instant ``t`` given the whole answer ``Ψ(t)``; each
        answer's projection is remembered while answers repeat (at most
        ``max_window_events``)."""
        if self.modifiers is not None:
            return self._modified(t, list(found), matcher)
        if self.start is not None and t < self.start:
            self._last, self._previous = None, {}
            return []
        if found is self._last:  # the very answer of the instant before: nothing changed
            same = list(self._previous.values()) if self.r2s is R2S.RSTREAM else []
            return self._format(t, same, matcher)
        self._last = found
        current: dict[_Key, Answer] = {}
        for answer in found:
            known = self._projected.get(answer)
            if known is None:
                mu, t1, t2 = self._project(answer, matcher)
                key = (frozenset((name, str(term)) for name, term in mu.items()), t1, t2)
                known = (key, (mu, t1, t2))
                if len(self._projected) >= self.limit:
                    self._projected.clear()
                self._projected[answer] = known
            current.setdefault(*known)
        if self.r2s is R2S.RSTREAM:
            streamed = list(current.values())
        elif self.r2s is R2S.ISTREAM:
            streamed = [a for k, a in current.items() if k not in self._previous]
        else:
            streamed = [a for k, a in self._previous.items() if k not in current]
        self._previous = current
        return self._format(t, streamed, matcher)


class CqelscepQuery(IncrementalQuery):
    """A CQELS-CEP query ``Q = (V, P, D, EC)`` (Sect. 3.2) evaluated incrementally
    (module docstring): push events, advance the watermark, get the oracle's results, from
    ``start`` (the oracle's start of the range: :class:`IntervalOutput`)."""

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, GraphSource] | None = None,
        *,
        start: int | None = None,
    ) -> None:
        plan = apply_profile(plan)
        given = dict(graphs or {})
        self.closure = engine_closure(plan.parameters, given)
        """The ontology stream items are entailed with (``entailment``), or None."""
        sources = {iri: background_source(plan.parameters, g) for iri, g in given.items()}
        super().__init__(plan, {i: g for i, g in sources.items() if isinstance(g, frozenset)})
        r2r = plan.r2r
        if isinstance(r2r, EventJoin):
            self.clauses: EventPattern = r2r.event
            background = r2r.graph
        elif isinstance(r2r, EventPattern):
            self.clauses, background = r2r, _EMPTY
        else:
            raise UserError("a CQELS-CEP plan's r2r is an event clause (Sect. 3.2)")
        wanted = [*plan.dataset.default_graphs, *plan.dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in sources]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        self._sources = {iri: sources[iri] for iri in wanted}
        self._named = tuple(plan.dataset.named_graphs)
        """The ``FROM NAMED`` graphs, which the background's ``GRAPH`` clauses read."""
        self.graphs = {i: g for i, g in self._sources.items() if isinstance(g, frozenset)}
        self._changes = sorted(
            {c for g in self._sources.values() if not isinstance(g, frozenset) for c in g.changes()}
        )
        self.lateness = plan.parameters.lateness
        self.limit = plan.parameters.max_window_events
        self.ops = Operators(plan.parameters.max_runs)
        t0 = plan.parameters.t0
        windows = [n for n in self.clauses.walk() if isinstance(n, CepWindow)]
        self.windows = {w: _WindowState(w, t0, self.limit) for w in dict.fromkeys(windows)}
        self.by_stream: dict[str, list[_WindowState]] = {}
        for state in self.windows.values():
            self.by_stream.setdefault(state.node.stream, []).append(state)
        self._matcher = GraphMatcher()
        self._patterns = GroupMatcher(self._matcher)
        self._background_patterns = tuple(
            dict.fromkeys(
                [background]
                + [
                    n.right
                    for n in self.clauses.walk()
                    if isinstance(n, CepJoin) and isinstance(n.right, GraphPatternRef)
                ]
            )
        )
        self.background: dict[GraphPatternRef, tuple[Mu, ...]] = {}
        """``[[P]]_D`` of each background pattern, for ``D`` since :attr:`since`."""
        self.since: int | None = None
        """The last change of ``D`` at or before the latest instant (``TIME_MIN``: none)."""
        if not self._changes:  # matched once per pattern and path mapping: kept
            self._patterns.keep(self._d(0))
            self._version(0)
        self.root_background = background
        self.output = IntervalOutput(plan, start)
        self._last_join: dict[GraphPatternRef, tuple[Omega, int, Omega]] = {}
        self._heap: list[int] = list(self._changes)  # D's changes are instants (Eq. (17))
        self._pending: set[int] = set(self._changes)
        self._answered: int | None = None
        self._latest: int | None = None
        self._count = 0

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_matcher"] = None  # pyoxigraph stores do not pickle; made again on load
        state["_patterns"] = None
        state["_last_join"] = {}  # memoised on identity, which pickling does not keep
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._matcher = GraphMatcher()
        self._patterns = GroupMatcher(self._matcher)

    def _d(self, t: int) -> frozenset[Triple]:
        """``D(t)``: the merge of the ``FROM`` graphs at ``t``."""
        graphs = [_at(self._sources[iri], t) for iri in self.plan.dataset.default_graphs]
        return graphs[0] if len(graphs) == 1 else frozenset().union(*graphs)

    def _version(self, t: int) -> int:
        """The background's version at ``t``: ``[[P]]_D`` matched again if ``D`` changed
        since the last instant; the ``t1`` of Eq. (17)."""
        index = bisect_right(self._changes, t)
        since = self._changes[index - 1] if index else TIME_MIN
        if since != self.since:
            d = self._d(t)
            named = {iri: _at(self._sources[iri], t) for iri in self._named}
            self.background = {p: self._background(p, d, named) for p in self._background_patterns}
            self.since = since
        return since

    def _background(
        self, pattern: GraphPatternRef, d: frozenset[Triple], named: dict[str, frozenset[Triple]]
    ) -> tuple[Mu, ...]:
        """``[[P]]_D`` (Eq. (17)): the nested path triples as nSPARQL relations joined with
        the group (each of their mappings bound before it, so its FILTERs see them); its
        ``GRAPH`` clauses read the named graphs."""
        paths = match_path_triples(pattern.paths, PathGraph(d)) if pattern.paths else [Mu()]
        found: dict[Mu, None] = {}
        for bound in paths:
            for mu in self._patterns.match(pattern, d, bound=bound, named=named):
                found[mu] = None
        return tuple(found)

    # IncrementalQuery -------------------------------------------------------------------

    def push(self, events: Iterable[Event]) -> list[Result]:
        """Take events in non-decreasing time (their end); return the answers of every
        instant that became final (module docstring)."""
        self._check_open()
        if self.closure is not None:
            events = entail_events(events, self.closure)
        out: list[Result] = []
        for event in events:
            self._check_order(event)
            if self._latest is not None and event.t_end < self._latest:
                raise UserError(
                    f"an event of <{event.stream}> at {event.t_end} came after one at "
                    f"{self._latest}: events must come in time order"
                )
            self._take(event)
            if self._latest is None or event.t_end > self._latest:
                self._latest = event.t_end
                out += self._answer(self._before(event.t_end))
        return out

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the instants up to ``t - lateness`` are final."""
        self._check_open()
        if self.watermark is None or t > self.watermark:
            self.watermark = t
        mark = self.watermark
        return self._answer(lambda u: u + self.lateness <= mark)

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: every instant left, up to ``until`` (default: the last instant at
        which the answer may change, the oracle's default)."""
        self._check_open()
        out = self._answer(lambda u: until is None or u <= until)
        self._finished = True
        return out

    def _before(self, end: int) -> Callable[[int], bool]:
        """Whether an instant is final once an event ending at ``end`` arrived: every item
        starting by it has ended by ``t + lateness < end``."""
        return lambda t: t + self.lateness < end

    # Arrivals ---------------------------------------------------------------------------

    def _take(self, event: Event) -> None:
        """An item of every window on its stream: its instants, and its pattern solutions
        if any (matched once, here)."""
        states = self.by_stream.get(event.stream, ())
        if not states:
            return
        solved: dict[GraphPatternRef, tuple[Mu, ...]] = {}
        self._count += 1
        for state in states:
            instants = state.instants(event.t_start, event.t_end)
            if not instants:
                continue
            first = min(instants)
            if self._answered is not None and first <= self._answered:
                raise UserError(
                    f"an item of <{event.stream}> over [{event.t_start}, {event.t_end}] "
                    f"arrived after the answers at {self._answered} were final, which its "
                    f"window holds from {first}: an interval item may last at most lateness "
                    f"= {self.lateness} ms (--set lateness=N)"
                )
            if len(instants) + len(self._pending) > self.limit:
                raise UserError(
                    f"more than max_window_events = {self.limit} evaluation instants are "
                    f"pending (interval items change a window at every instant they span): "
                    "raise the limit (--set max_window_events=N)"
                )
            for u in instants:
                if u not in self._pending:
                    self._pending.add(u)
                    heapq.heappush(self._heap, u)
            for leaf in state.leaves:
                if leaf not in solved:
                    solved[leaf] = tuple(dict.fromkeys(self._patterns.match(leaf, event.graph)))
            solutions = tuple(solved[leaf] for leaf in state.leaves)
            if any(solutions):
                state.add(_Item(self._count, event.t_start, event.t_end, solutions))

    # Evaluation -------------------------------------------------------------------------

    def _answer(self, final: Callable[[int], bool]) -> list[Result]:
        """Evaluate every pending instant that is final, in time order."""
        out: list[Result] = []
        while self._heap and final(self._heap[0]):
            t = heapq.heappop(self._heap)
            self._pending.discard(t)
            out += self._at(t)
            self._answered = t
            for state in self.windows.values():
                state.evict(t)
        return out

    def _at(self, t: int) -> list[Result]:
        """Eq. (1) at ``t``: the event clauses joined with the background, then the
        projection and the streaming operator."""
        self._version(t)
        clauses = self._clause(self.clauses, t)
        found = self._joined(clauses, self.root_background)
        return self.output.instant(t, found, self._matcher)

    def _joined(self, omega: Omega, pattern: GraphPatternRef) -> Omega:
        """``JOIN(Ω, [[P, t]]_D)`` with ``[[P, t]]_D = {⟨μ, [t1, t]⟩ | μ ∈ [[P]]_D}`` (Eq.
        (1), (17)): every interval of ``Ω`` ends by ``t``, so the join keeps its part from
        ``t1`` on (all of it for a static ``D``, ``t1 = TIME_MIN``)."""
        background, since = self.background[pattern], self.since
        assert since is not None
        if background == (Mu(),) and since == TIME_MIN:
            return omega
        last = self._last_join.get(pattern)
        if last is not None and last[0] is omega and last[1] == since:
            return last[2]
        names = tuple(sorted(_always((mu, 0, 0) for mu in background)))
        index: dict[tuple[Term, ...], list[Mu]] = {}
        for mu in background:
            index.setdefault(tuple(mu[n] for n in names), []).append(mu)
        found: set[Answer] = set()
        for mu, t1, t2 in omega:
            if t2 < since:
                continue
            key = _probe(mu, names)
            bucket = index.get(key, ()) if key is not None else background
            for nu in bucket:
                both = self.ops.union(mu, nu)
                if both is not None:
                    found.add((both, max(t1, since), t2))
        value = self.ops.bounded(found, "the join with the background pattern")
        self._last_join[pattern] = (omega, since, value)
        return value

    def _clause(self, node: EventPattern, t: int) -> Omega:
        """``[[EC, t]]``: a window specification (9), a SEQ of them (3)-(8), a JOIN of
        clauses (2) or with a background pattern, an OR."""
        if isinstance(node, CepWindow):
            return self._window(self.windows[node], t)
        if isinstance(node, CepSeq):
            values = [self._clause(self._operand(item), t) for item in node.items]
            return self.ops.sequence(values, node.negated_index, t)
        if isinstance(node, CepJoin):
            right = node.right
            if isinstance(right, GraphPatternRef):
                return self._joined(self._clause(node.left, t), right)
            return self.ops.join(self._clause(node.left, t), self._clause(right, t))
        if isinstance(node, Or):
            return self.ops.or_(self._clause(node.left, t), self._clause(node.right, t))
        raise UserError(f"{type(node).__name__} is not a CQELS-CEP event clause (Sect. 3.2)")

    @staticmethod
    def _operand(item: CepItem) -> EventPattern:
        if isinstance(item.pattern, GraphPatternRef):
            raise UserError(
                "an event clause SEQ holds window specifications, not graph patterns (Sect. 3.2)"
            )
        return item.pattern

    def _window(self, state: _WindowState, t: int) -> Omega:
        """``[[TSP, t]]^ω_S`` (Eq. (9)), memoised on the window's cut content: the value
        depends on ``t`` only through it (every cut interval ends by ``t``, so NO_TAIL's
        ``t4 ≤ t`` always holds inside a window)."""
        content = state.content(t)
        key = tuple((item.number, c1, c2) for item, c1, c2 in content)
        if state.memo is not None and state.memo[0] == key:
            return state.memo[1]
        value = self._sequence_pattern(state, state.node.pattern, content, t)
        state.memo = (key, value)
        return value

    def _sequence_pattern(
        self,
        state: _WindowState,
        node: object,
        content: tuple[tuple[_Item, int, int], ...],
        t: int,
    ) -> Omega:
        """A triple sequence pattern over the window's content: a graph pattern (16), a SEQ
        of them (10)-(15), an OR."""
        if isinstance(node, GraphPatternRef):
            i = state.position[node]
            return frozenset((mu, c1, c2) for item, c1, c2 in content for mu in item.solutions[i])
        if isinstance(node, CepSeq):
            values = [
                self._sequence_pattern(state, item.pattern, content, t) for item in node.items
            ]
            return self.ops.sequence(values, node.negated_index, t)
        if isinstance(node, Or):
            return self.ops.or_(
                self._sequence_pattern(state, node.left, content, t),
                self._sequence_pattern(state, node.right, content, t),
            )
        raise UserError(
            f"{type(node).__name__} inside a window is not a CQELS-CEP triple sequence "
            "pattern (Sect. 3.2)"
        )
