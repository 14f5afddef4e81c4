"""CQELS-CEP's semantics (seed 001, Sect. 4): mappings with intervals, SEQ with negation,
and nested paths over the background data.

The paper's evaluation, piece by piece (formulas partly lost in extraction are rebuilt in
docs/semantics.md, "CQELS-CEP"):

- **Window functions on interval streams** (Sect. 4.1). ``w_RANGE(S, t, T)`` keeps every
  item whose interval meets ``[t - T, t]``, cut to it: ``⟨g, [max(t1, t - T), min(t2,
  t)]⟩``. Unlike :mod:`rsep.semantics.window` (RSP-QL's windows over point items, ``(t - α,
  t]``, time annotations dropped in the snapshot), the lower bound ``t - T`` belongs to the
  window, interval items are read, and each item keeps its (cut) interval: "unlike
  traditional stream processing approaches that drop temporal information after the
  application of windows, this information is kept in our setting" (Sect. 3.2).
- **Operators on mappings with intervals** (Sect. 4.2): :func:`join` (interval
  intersection), :func:`or_`, :func:`seq`, :func:`seq_wo`, :func:`no_head`,
  :func:`no_tail`, on sets of :class:`~rsep.semantics.event_mapping.EventMapping`.
- **Evaluation** (Sect. 4.3, cases (1)-(17)): :func:`query` (1), :func:`event_clauses` (2),
  :func:`sequence` (3)-(4) and (10)-(11), :func:`negated_sequence` (5)-(8) and (12)-(15),
  :func:`window_specification` (9), :func:`stream_pattern` (16), :func:`background_pattern`
  (17); :class:`CqelscepEvaluation` walks a plan with them.

The paper's sets are sets: an operator's value is a ``frozenset`` of mappings with intervals.
"""

from __future__ import annotations

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
from rsep.algebra.plan import EventJoin, Plan
from rsep.algebra.window import (
    LandmarkWindow,
    NowWindow,
    TimeWindow,
    WindowFunction,
    cut_instants,
    interval_width,
)
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import EventMapping, Mu
from rsep.semantics.nested_path import PathGraph, match_path_triples
from rsep.semantics.store import GraphMatcher

__all__ = [
    "MAX_INSTANTS",
    "TIME_MIN",
    "CqelscepEvaluation",
    "Omega",
    "background_pattern",
    "event_clauses",
    "join",
    "negated_sequence",
    "no_head",
    "no_tail",
    "or_",
    "query",
    "seq",
    "seq_wo",
    "sequence",
    "stream_pattern",
    "w_all",
    "w_range",
    "window_content",
    "window_specification",
]

Omega = frozenset[EventMapping]
"""``Ω``: a set of mappings with intervals ``⟨μ, [t1, t2]⟩`` (Sect. 4.2)."""

TIME_MIN = -(2**63)
"""The first instant: the ``t1`` of Eq. (17) for background data that never changed (the
smallest 64-bit time, so that the interval ``[t1, t]`` contains every earlier instant)."""

MAX_INSTANTS = 1_000_000
"""The most instants :meth:`CqelscepEvaluation.instants` lists (DESIGN.md: bound every
state that can grow): interval items change a window's content at every instant they span."""


# Sect. 4.1: window functions on interval streams --------------------------------------------


def _cut(item: Event, start: int, end: int) -> Event | None:
    """``item`` with its interval cut to ``[start, end]``, or ``None`` if they do not meet."""
    t1, t2 = max(item.t_start, start), min(item.t_end, end)
    if t1 > t2:
        return None
    return Event(item.stream, t1, t2, item.graph, item.id)


def w_range(stream: Iterable[Event], t: int, width: int) -> tuple[Event, ...]:
    """``w_RANGE(S, t, T) = {⟨g, [t'1, t'2]⟩ | ⟨g, [t1, t2]⟩ ∈ S ∧ t'1 = max(t1, t - T) ∧
    t'2 = min(t2, t) ∧ t'1 ≤ t'2}`` (Sect. 4.1, sliding size 1; the condition and ``t'1``
    are rebuilt from the surviving ``T) ∧ t'2 = min(t2, t)``): the items that meet
    ``[t - T, t]``, cut to it."""
    found = (_cut(item, t - width, t) for item in stream)
    return tuple(item for item in found if item is not None)


def w_all(stream: Iterable[Event], t: int, t0: int) -> tuple[Event, ...]:
    """CQELS's ``[ALL]`` on interval items: the items that meet ``[t0, t]``, cut to it (the
    paper defines ``RANGE`` only; this is ``w_RANGE`` with the window's start held at
    ``t0``)."""
    if t < t0:
        return ()
    found = (_cut(item, t0, t) for item in stream)
    return tuple(item for item in found if item is not None)


def window_content(
    window: WindowFunction, stream: Iterable[Event], t: int, t0: int = 0
) -> tuple[Event, ...]:
    """``w_wtype(ω)(S, t, wparams(ω))`` for the window expressions CQELS-CEP reads: ``[RANGE
    T]`` (a time window sliding by 1, :func:`w_range`), ``[NOW]`` (``RANGE 0``) and
    ``[ALL]`` (:func:`w_all` from ``t0``); others are not defined for interval streams by
    the paper and raise :class:`~rsep.errors.UserError`."""
    width = interval_width(window)
    if width is not None:
        return w_range(stream, t, width)
    own = window.t0 if isinstance(window, LandmarkWindow) else None
    return w_all(stream, t, t0 if own is None else own)


# Sect. 4.2: operators on mappings with intervals --------------------------------------------


def join(left: Omega, right: Omega) -> Omega:
    """``JOIN(Ω1, Ω2) = {⟨μ1 ∪ μ2, [max(t1, t3), min(t2, t4)]⟩ | ⟨μ1, [t1, t2]⟩ ∈ Ω1 ∧ ⟨μ2,
    [t3, t4]⟩ ∈ Ω2 ∧ μ1 ∼ μ2 ∧ max(t1, t3) ≤ min(t2, t4)}`` (Sect. 4.2): compatible pairs
    whose intervals meet, over their intersection (not ETALIS's AND, which spans both)."""
    return frozenset(
        EventMapping(a.mu.join(b.mu), max(a.t1, b.t1), min(a.t2, b.t2))
        for a in left
        for b in right
        if a.mu.compatible(b.mu) and max(a.t1, b.t1) <= min(a.t2, b.t2)
    )


def or_(left: Omega, right: Omega) -> Omega:
    """``OR(Ω1, Ω2) = {⟨μ, [t1, t2]⟩ | ⟨μ, [t1, t2]⟩ ∈ Ω1 ∨ ⟨μ, [t1, t2]⟩ ∈ Ω2}`` (Sect. 4.2)."""
    return left | right


def seq(left: Omega, right: Omega) -> Omega:
    """``SEQ(Ω1, Ω2) = {⟨μ1 ∪ μ2, [t1, t4]⟩ | ⟨μ1, [t1, t2]⟩ ∈ Ω1 ∧ ⟨μ2, [t3, t4]⟩ ∈ Ω2 ∧
    μ1 ∼ μ2 ∧ t2 < t3}`` (Sect. 4.2): the first ends strictly before the second starts."""
    return frozenset(
        EventMapping(a.mu.join(b.mu), a.t1, b.t2)
        for a in left
        for b in right
        if a.mu.compatible(b.mu) and a.t2 < b.t1
    )


def seq_wo(first: Omega, negative: Omega, last: Omega) -> Omega:
    """``SEQ_WO(Ω1, Ω2, Ω3) = {⟨μ1 ∪ μ3, [t1, t6]⟩ | ⟨μ1, [t1, t2]⟩ ∈ Ω1 ∧ ⟨μ3, [t5, t6]⟩ ∈
    Ω3 ∧ μ1 ∼ μ3 ∧ t2 < t5 ∧ ∄⟨μ2, [t3, t4]⟩ ∈ Ω2 : μ2 ∼ μ1 ∪ μ3 ∧ t2 < t3 ∧ t4 < t5}``
    (Sect. 4.2, rebuilt): the sequences of Ω1 and Ω3 with no compatible negative mapping
    strictly between them (the extraction prints ``μ1 ∪ μ2`` and ``μ1 ∼ μ2`` where μ2 is
    the negated one, and loses the relation of ``[t3, t4]`` to ``[t2, t5]``;
    docs/semantics.md, "CQELS-CEP")."""
    out: set[EventMapping] = set()
    for a in first:
        for c in last:
            if not (a.mu.compatible(c.mu) and a.t2 < c.t1):
                continue
            both = a.mu.join(c.mu)
            blocked = any(b.mu.compatible(both) and a.t2 < b.t1 and b.t2 < c.t1 for b in negative)
            if not blocked:
                out.add(EventMapping(both, a.t1, c.t2))
    return frozenset(out)


def no_head(negative: Omega, positive: Omega) -> Omega:
    """``NO_HEAD(Ω1, Ω2) = {⟨μ2, [t3, t4]⟩ ∈ Ω2 | ∄⟨μ1, [t1, t2]⟩ ∈ Ω1 : μ1 ∼ μ2 ∧ t2 <
    t3}`` (Sect. 4.2): the mappings of Ω2 with no compatible negative one before them."""
    return frozenset(
        b for b in positive if not any(a.mu.compatible(b.mu) and a.t2 < b.t1 for a in negative)
    )


def no_tail(positive: Omega, negative: Omega, t: int) -> Omega:
    """``NO_TAIL(Ω1, Ω2, t) = {⟨μ1, [t1, t2]⟩ ∈ Ω1 | ∄⟨μ2, [t3, t4]⟩ ∈ Ω2 : μ1 ∼ μ2 ∧ t2 < t3
    ∧ t4 ≤ t}`` (Sect. 4.2): the mappings of Ω1 with no compatible negative one after them,
    up to the evaluation time ``t``."""
    return frozenset(
        a
        for a in positive
        if not any(a.mu.compatible(b.mu) and a.t2 < b.t1 and b.t2 <= t for b in negative)
    )


# Sect. 4.3: the evaluation function [[., .]] -------------------------------------------------


def query(clauses: Omega, background: Omega, variables: Iterable[str]) -> Omega:
    """Eq. (1): ``[[Q, t]] = {⟨μ|V, [t1, t2]⟩ | ⟨μ, [t1, t2]⟩ ∈ JOIN([[EC, t]], [[P, t]]_D)}``:
    the event clauses joined with the background pattern, projected to ``V`` (no projection
    when ``variables`` is empty, ``SELECT *``)."""
    names = tuple(variables)
    joined = join(clauses, background)
    if not names:
        return joined
    return frozenset(EventMapping(m.mu.project(names), m.t1, m.t2) for m in joined)


def event_clauses(values: Sequence[Omega]) -> Omega:
    """Eq. (2): ``[[{EC1, …, ECm}, t]] = JOIN([[EC1, t]], [[{EC2, …, ECm}, t]])``; one clause
    is its own value."""
    if not values:
        raise ValueError("a set of event clauses is not empty (Sect. 3.2)")
    if len(values) == 1:
        return values[0]
    return join(values[0], event_clauses(values[1:]))


def sequence(values: Sequence[Omega]) -> Omega:
    """Eq. (3)-(4) for window specifications and (10)-(11) for graph patterns:
    ``[[SEQ(X1, X2, …, Xn), t]] = [[SEQ(X1, SEQ(X2, …, Xn)), t]]`` and ``[[SEQ(X1, X2),
    t]] = SEQ([[X1, t]], [[X2, t]])``. A sequence of one element, the prefix or suffix of
    Eq. (5) and (12) when the negation is second or second to last, is that element."""
    if not values:
        raise ValueError("a sequence has at least one element")
    if len(values) == 1:
        return values[0]
    return seq(values[0], sequence(values[1:]))


def negated_sequence(values: Sequence[Omega], negated: int, t: int) -> Omega:
    """Eq. (5)-(8) for window specifications and (12)-(15) for graph patterns, ``values[
    negated]`` being the value of the negated element ``!Xi``:

    - (6)/(13): ``[[SEQ(!X1, X2, …, Xn), t]] = NO_HEAD([[X1, t]], [[SEQ(X2, …, Xn), t]])``;
    - (7)/(14): ``[[SEQ(X1, …, Xn-1, !Xn), t]] = NO_TAIL([[SEQ(X1, …, Xn-1), t]], [[Xn, t]],
      t)`` (the paper's (7) and (14) omit NO_TAIL's ``t``);
    - (5)/(12) then (8)/(15): ``[[SEQ(X1, …, !Xi, …, Xn), t]] = [[SEQ_WO(SEQ(X1, …, Xi-1),
      Xi, SEQ(Xi+1, …, Xn)), t]] = SEQ_WO([[SEQ(X1 … Xi-1), t]], [[Xi, t]], [[SEQ(Xi+1 …
      Xn), t]])``.
    """
    if not 0 <= negated < len(values) or len(values) < 2:
        raise ValueError(f"no negated element {negated} in a sequence of {len(values)}")
    before, negative, after = values[:negated], values[negated], values[negated + 1 :]
    if not before:
        return no_head(negative, sequence(after))
    if not after:
        return no_tail(sequence(before), negative, t)
    return seq_wo(sequence(before), negative, sequence(after))


def window_specification(
    pattern: Callable[[tuple[Event, ...]], Omega],
    window: WindowFunction,
    stream: Iterable[Event],
    t: int,
    t0: int = 0,
) -> Omega:
    """Eq. (9): ``[[W, t]] = [[(s, ω, TSP), t]] = [[TSP, t]]^ω_{S_s}``: the triple sequence
    pattern (``pattern``, given the window's content) over the window ``ω`` on the stream
    ``S_s``."""
    return pattern(window_content(window, stream, t, t0))


def stream_pattern(
    pattern: GraphPatternRef, items: Iterable[Event], matcher: GraphMatcher
) -> Omega:
    """Eq. (16): ``[[P, t]]^ω_S = {⟨μ, [t1, t2]⟩ | dom(μ) = var(P) ∧ μ(P) ⊆ g ∧ ⟨g, [t1,
    t2]⟩ ∈ w_wtype(ω)(S, t, wparams(ω))}`` (rebuilt): ``P`` matched in the graph of each
    item of the window, each solution with that item's (cut) interval."""
    return frozenset(
        EventMapping(mu, item.t_start, item.t_end)
        for item in items
        for mu in matcher.match(pattern, item.graph)
    )


def background_pattern(
    pattern: GraphPatternRef,
    graph: frozenset[Triple],
    since: int,
    t: int,
    matcher: GraphMatcher,
    named: Mapping[str, frozenset[Triple]] | None = None,
) -> Omega:
    """Eq. (17): ``[[P, t]]_D = {⟨μ, [t1, t]⟩ | μ ∈ [[P]]_{D(t)}}`` where ``D`` has not changed
    since ``t1 = since`` (rebuilt from the prose): the extended graph pattern over the
    background graph at ``t``. Its nested path triples (``pattern.paths``) are evaluated as
    nSPARQL relations (:mod:`rsep.semantics.nested_path`) and joined with the rest of the
    group: each of their mappings is bound before the group is evaluated, so the group's
    FILTERs see it (the compiler admits path triples only in a group of triples and
    FILTERs, where this is the join). ``named`` are the ``FROM NAMED`` graphs at ``t``,
    which the pattern's ``GRAPH`` clauses read (SPARQL 1.1 sec. 13.3); paths read ``D``."""
    paths = match_path_triples(pattern.paths, PathGraph(graph)) if pattern.paths else [Mu()]
    found: set[Mu] = set()
    for bound in paths:
        found.update(matcher.match(pattern, graph, bound=bound, named=named))
    return frozenset(EventMapping(mu, since, t) for mu in found)


# The evaluator of a plan --------------------------------------------------------------------


def _order(values: Iterable[EventMapping]) -> list[EventMapping]:
    return sorted(values, key=lambda m: (m.t1, m.t2, repr(m.mu)))


_EMPTY = GraphPatternRef("{ }")


@dataclass
class CqelscepEvaluation:
    """A CQELS-CEP plan bound to its data: ``at(t)`` is Eq. (1) before its projection,
    ``JOIN([[EC, t]], [[P, t]]_D)``, as mappings with intervals. ``ContinuousQuery`` applies
    the projection ``μ|V`` (with the SELECT's expressions) and the streaming operator.

    The plan's r2r is an :class:`~rsep.algebra.plan.EventJoin` of the event clauses with
    the background pattern ``P``, or the event clauses alone (``P`` empty: ``[[P, t]]_D``
    is the empty mapping over ``[t1, t]``). ``D`` is the default graph of the ``FROM``
    graphs (Sect. 3.2 assumes one background graph); ``FROM NAMED`` graphs are the
    dataset's named graphs, read by ``GRAPH`` as SPARQL reads them, and their changes are
    changes of the background data (``t1``).
    """

    plan: Plan
    dataset: StreamingDataset
    matcher: GraphMatcher

    joins_graph = True
    """This evaluator joins the background pattern itself (Eq. (1) keeps intervals and
    reads nested paths); ``ContinuousQuery`` must not join it again."""
    own_instants = True
    """ET is :meth:`instants`: every instant at which ``[[Q, t]]`` may change (CQELS
    evaluates as data arrives; RSP-QL's report machinery reads point items only)."""
    answer_set = True
    """Eq. (1) projects onto a set: ``ContinuousQuery`` removes duplicate answers."""

    def __post_init__(self) -> None:
        r2r = self.plan.r2r
        if isinstance(r2r, EventJoin):
            self.clauses: EventPattern = r2r.event
            self.background: GraphPatternRef = r2r.graph
        elif isinstance(r2r, EventPattern):
            self.clauses, self.background = r2r, _EMPTY
        else:
            raise UserError("a CQELS-CEP plan's r2r is an event clause (Sect. 3.2)")

    # Eq. (1), (2), (17) --------------------------------------------------------------

    def at(self, t: int, previous: int | None = None) -> list[EventMapping]:
        """``JOIN([[EC, t]], [[P, t]]_D)`` (Eq. (1) without ``|V``), in time order.
        ``previous`` is not read: CQELS-CEP defines no consumption, the window evicts."""
        return _order(
            join(self.event_clause(self.clauses, t), self.background_at(self.background, t))
        )

    def default_graph(self, t: int) -> frozenset[Triple]:
        """``D(t)``: the merge of the ``FROM`` graphs at ``t``."""
        graph: set[Triple] = set()
        for iri in self.plan.dataset.default_graphs:
            graph.update(self.dataset.graphs[iri].at(t))
        return frozenset(graph)

    def named_graphs(self, t: int) -> dict[str, frozenset[Triple]]:
        """The ``FROM NAMED`` graphs at ``t``, by IRI."""
        return {iri: self.dataset.graphs[iri].at(t) for iri in self.plan.dataset.named_graphs}

    def unchanged_since(self, t: int) -> int:
        """The ``t1`` of Eq. (17): the last instant at or before ``t`` at which ``D`` or a
        named graph changed, or :data:`TIME_MIN` if none did."""
        dataset = self.plan.dataset
        changes = [
            c
            for iri in (*dataset.default_graphs, *dataset.named_graphs)
            for c in self.dataset.graphs[iri].changes()
            if c <= t
        ]
        return max(changes, default=TIME_MIN)

    def background_at(self, pattern: GraphPatternRef, t: int) -> Omega:
        """Eq. (17) over the dataset's ``D`` (and named graphs) at ``t``."""
        return background_pattern(
            pattern,
            self.default_graph(t),
            self.unchanged_since(t),
            t,
            self.matcher,
            self.named_graphs(t),
        )

    # Eq. (2)-(9): event clauses ------------------------------------------------------

    def event_clause(self, node: EventPattern, t: int) -> Omega:
        """``[[EC, t]]``: a window specification (9), a SEQ of them (3)-(8), a JOIN of
        clauses (2) or with a background pattern (17), an OR (Sect. 4.2)."""
        if isinstance(node, CepWindow):
            stream = self.dataset.streams[node.stream]
            t0 = self.plan.parameters.t0
            return window_specification(
                lambda items: self.triple_sequence(node.pattern, items, t),
                node.window,
                stream,
                t,
                t0,
            )
        if isinstance(node, CepSeq):
            return self._sequence(node, t, lambda item: self._clause_item(item, t))
        if isinstance(node, CepJoin):
            right = node.right
            if isinstance(right, GraphPatternRef):
                return join(self.event_clause(node.left, t), self.background_at(right, t))
            return event_clauses([self.event_clause(node.left, t), self.event_clause(right, t)])
        if isinstance(node, Or):
            return or_(self.event_clause(node.left, t), self.event_clause(node.right, t))
        raise UserError(f"{type(node).__name__} is not a CQELS-CEP event clause (Sect. 3.2)")

    def _clause_item(self, item: CepItem, t: int) -> Omega:
        if isinstance(item.pattern, GraphPatternRef):
            raise UserError(
                "an event clause SEQ holds window specifications, not graph patterns (Sect. 3.2)"
            )
        return self.event_clause(item.pattern, t)

    @staticmethod
    def _sequence(node: CepSeq, t: int, value: Callable[[CepItem], Omega]) -> Omega:
        """Eq. (3)-(8) / (10)-(15): the values of the elements, then SEQ or its negated form."""
        values = [value(item) for item in node.items]
        negated = node.negated_index
        if negated is None:
            return sequence(values)
        return negated_sequence(values, negated, t)

    # Eq. (10)-(16): triple sequence patterns ----------------------------------------

    def triple_sequence(
        self, node: GraphPatternRef | EventPattern, items: tuple[Event, ...], t: int
    ) -> Omega:
        """``[[TSP, t]]^ω_S`` over the window's content ``items``: a graph pattern (16), a
        SEQ of them (10)-(15), an OR (Sect. 4.2)."""
        if isinstance(node, GraphPatternRef):
            return stream_pattern(node, items, self.matcher)
        if isinstance(node, CepSeq):
            return self._sequence(
                node, t, lambda item: self.triple_sequence(item.pattern, items, t)
            )
        if isinstance(node, Or):
            return or_(
                self.triple_sequence(node.left, items, t),
                self.triple_sequence(node.right, items, t),
            )
        raise UserError(
            f"{type(node).__name__} inside a window is not a CQELS-CEP triple sequence "
            "pattern (Sect. 3.2)"
        )

    # When the answer may change -----------------------------------------------------

    def instants(self) -> list[int]:
        """The instants at which ``[[Q, t]]`` may change: where an item enters a window,
        where its cut interval grows or shrinks (every instant of an interval item's span
        and of that span shifted by the window's width), where it leaves, and where ``D``
        or a named graph changes."""
        found: set[int] = set()
        t0 = self.plan.parameters.t0
        for node in self.clauses.walk():
            if not isinstance(node, CepWindow):
                continue
            for item in self.dataset.streams[node.stream]:
                found.update(_item_instants(node.window, item, t0))
                if len(found) > MAX_INSTANTS:
                    raise UserError(
                        f"the answer may change at more than {MAX_INSTANTS} instants "
                        "(interval items cut by windows change at every instant)"
                    )
        for iri in (*self.plan.dataset.default_graphs, *self.plan.dataset.named_graphs):
            found.update(self.dataset.graphs[iri].changes())
        return sorted(found)


def _item_instants(window: WindowFunction, item: Event, t0: int) -> range | list[int]:
    """Where one item's cut interval in the window changes: ``[max(a, t - T), min(b, t)]``
    changes at each ``t`` in ``[a, b]`` (its end) and ``[a + T + 1, b + T + 1]`` (its start,
    then it leaves)."""
    a, b = item.t_start, item.t_end
    if isinstance(window, TimeWindow | NowWindow):
        width = window.width if isinstance(window, TimeWindow) else 0
        return cut_instants(a, b, width, t0)
    if isinstance(window, LandmarkWindow):
        return cut_instants(a, b, None, t0 if window.t0 is None else window.t0)
    return [a, b, b + 1]
