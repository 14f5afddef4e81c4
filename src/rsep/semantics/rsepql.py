"""RSEP-QL's event patterns (seed 000, Sect. 3.3, 4.2-4.4), evaluated literally.

An event pattern ``E`` is evaluated in the scope of an *active window* ``W`` at an instant
``t``: ``⟨⟨E⟩⟩_W^t`` is a set of event mappings ``(μ, t1, t2)`` (Def. 7). Formulas (5)-(12)
are partly lost in the text; they are rebuilt from the prose and Examples 7-11
(docs/semantics.md, "RSEP-QL event patterns"):

- basic event pattern (Sect. 4.2): ``⟨⟨EVENT w_j P⟩⟩_W^t = {(μ, t_k, t_k) | μ ∈ ⟦P⟧_{G_k}
  ∧ (G_k, t_k) ∈ W • W_j(S_ℓ, t)}``: the BGP on each item of the window on its own;
- ``FIRST E`` / ``LAST E``: the mappings of E whose ``(t1, t2)`` no other mapping of E
  precedes / follows in the order ``≺`` (:func:`precedes`);
- ``E1 SEQ E2`` (Eq. (7)): for each ``(μ2, t3, t4)`` of E2, each ``(μ1, t1, t2)`` of
  ``μ2(E1)`` within ``W^⊔[0, t3 - 1] • W``, giving ``(μ1 ∪ μ2, t1, t4)``;
- ``SEQ^n`` (Eq. (9)): the latest mappings of E1 and of E2, joined when compatible and
  ``t2 < t3`` (C-SPARQL's ``timestamp()``);
- ``SEQ^c`` / ``SEQ^r`` (Eq. (10), (11)): the first / last E2 mappings that have a
  compatible earlier E1 mapping, each joined with the first / last of those;
- ``MATCH E`` (Sect. 4.2, "Event Graph Pattern"): ``E`` under ``W^id``, time annotations
  dropped: a bag of solution mappings;
- consumption policies (Def. 8-10, Eq. (12)): at each evaluation instant ``t_i`` the input
  ``I_i(w_j)`` of each window is ``Δ_i(w_j)`` plus what of ``I_{i-1}(w_j)`` the answer at
  ``t_{i-1}`` did not use (``P^c``, ``P^r``), or all of ``SDS_{w_j}(t_i)`` (``P^u``); a
  basic event pattern matches ``G_k ∩ I_i(w_j)``.

:class:`RsepqlEvaluation` binds a plan whose r2r is a :class:`~rsep.algebra.events.Match`
(alone or in an :class:`~rsep.algebra.plan.EventJoin`) to its data; the graph part of an
``EventJoin`` is joined by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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
from rsep.algebra.plan import EventJoin, Plan
from rsep.algebra.window import (
    Composed,
    IdentityWindow,
    IntervalWindow,
    NamedWindow,
    WindowFunction,
)
from rsep.errors import UserError
from rsep.rdf.event import Event as Item
from rsep.rdf.event import Stream
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import EventMapping, Mu
from rsep.semantics.store import GraphMatcher
from rsep.semantics.window import Reading, boundaries, content, horizon

__all__ = [
    "Input",
    "InputUnit",
    "RsepqlEvaluation",
    "before",
    "first",
    "last",
    "precedes",
]

_MAX_CACHED_MATCHES = 65536


def precedes(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """``(t1', t2') ≺ (t1, t2)``: the order of timestamps that FIRST, LAST, ``SEQ^c`` and
    ``SEQ^r`` use (RSEP-QL Sect. 4.2: "a partial order ≺ to compare timestamps is given").

    rsep takes the product order on pairs: ``a`` precedes ``b`` when it starts no later and
    ends no later, and differs. On points ``(t, t)`` it is ``<``, all the paper's examples
    need; ``(2, 10)`` and ``(4, 6)`` are incomparable, so both are first (and last).
    """
    return a != b and a[0] <= b[0] and a[1] <= b[1]


def first(found: Iterable[EventMapping]) -> list[EventMapping]:
    """``⟨⟨FIRST E⟩⟩`` from ``⟨⟨E⟩⟩`` (RSEP-QL Sect. 4.2, "Other Event Patterns"): the event
    mappings no other one precedes in ``≺``, in their order."""
    items = list(found)
    return [m for m in items if not any(precedes(o.interval, m.interval) for o in items)]


def last(found: Iterable[EventMapping]) -> list[EventMapping]:
    """``⟨⟨LAST E⟩⟩`` from ``⟨⟨E⟩⟩``: the event mappings no other one follows in ``≺``."""
    items = list(found)
    return [m for m in items if not any(precedes(m.interval, o.interval) for o in items)]


def before(t3: int, active: WindowFunction) -> WindowFunction:
    """``W^⊔[0, t3 - 1] • W`` (RSEP-QL Eq. (7), condition (b); ``W^⋆`` of Eq. (10)-(11)):
    the active window of ``μ2(E1)``, which keeps the items before ``t3``. The timeline starts
    at 0 (Sect. 3.1, ``t_i ∈ ℕ``), so nothing is kept before 0."""
    return Composed(IntervalWindow(0, max(t3 - 1, -1)), active)


@dataclass(frozen=True, order=True)
class Input:
    """One element of a potential input ``I_i(w_j)`` (RSEP-QL Def. 8): a triple, with the
    time of the stream item it came in under :attr:`InputUnit.OCCURRENCE` (``None`` under
    :attr:`InputUnit.TRIPLE`)."""

    time: int | None
    triple: Triple

    def __repr__(self) -> str:
        where = "" if self.time is None else f"@{self.time}"
        return f"<{self.triple}>{where}"


@dataclass(frozen=True)
class _Leaf:
    """A solution of a basic event pattern on one item, as far as consumption needs it:
    which window, pattern, item and (filtered) item graph, and the solution."""

    window: str
    pattern: GraphPatternRef
    item: Item
    graph: frozenset[Triple]
    mu: Mu


_Found = dict[EventMapping, frozenset[_Leaf]]
"""Event mappings, each with the basic-event solutions that justify it (all derivations)."""


def _add(found: _Found, mapping: EventMapping, leaves: frozenset[_Leaf]) -> None:
    found[mapping] = found.get(mapping, frozenset()) | leaves


def _sorted(mappings: Iterable[EventMapping]) -> list[EventMapping]:
    return sorted(mappings, key=lambda m: (m.t1, m.t2, repr(m.mu)))


@dataclass(frozen=True)
class _Scope:
    """What stays fixed while one event pattern is evaluated: the instant, the previous
    instant (for windows that need it), the default selection policy (the Match's, else the
    parameter ``selection``) and the potential inputs (``None``: ``P^u``, the full input)."""

    t: int
    previous: int | None
    selection: SelectionPolicy
    inputs: Mapping[str, frozenset[Input]] | None


@dataclass(frozen=True)
class _State:
    """The consumption state after an evaluation at ``t`` (RSEP-QL Def. 8-10): the input
    structure ``I_i``, the whole window contents ``SDS_{w_j}(t_i)`` (for the next ``Δ``), the
    inputs the answer used, and the answer."""

    t: int
    inputs: Mapping[str, frozenset[Input]] | None
    contents: Mapping[str, frozenset[Input]]
    used: Mapping[str, frozenset[Input]]
    answer: tuple[EventMapping, ...]


class RsepqlEvaluation:
    """A plan's RSEP-QL ``MATCH`` bound to its data: ``⟦MATCH E⟧^t`` at each evaluation
    instant (RSEP-QL Sect. 4.2-4.4), implementing
    :class:`~rsep.semantics.event_mapping.EventEvaluation`.

    The selection policy of a ``SEQ`` is its own, else the Match's, else the parameter
    ``selection``; the consumption policy is the Match's, else the parameter
    ``consumption``, and what it consumes the parameter ``input_unit`` (Def. 8-10). Under
    ``P^c`` and ``P^r`` the answer at ``t_i`` depends on the answers before it, so
    :meth:`at` must be called at increasing instants (an instant already evaluated gives
    its answer again); under ``P^u`` any order is fine.
    """

    joins_graph = False
    """The graph patterns beside ``MATCH`` are joined by the caller (Sect. 4.1: ``Join``)."""

    def __init__(
        self,
        plan: Plan,
        dataset: StreamingDataset,
        matcher: GraphMatcher,
    ) -> None:
        root = plan.r2r.event if isinstance(plan.r2r, EventJoin) else plan.r2r
        if not isinstance(root, Match):
            raise UserError(
                f"an RSEP-QL plan's event pattern is a MATCH, not {type(root).__name__}"
            )
        self.plan = plan
        self.dataset = dataset
        self.matcher = matcher
        self.match = root
        params = plan.parameters
        self.unit: InputUnit = params.input_unit
        self.selection: SelectionPolicy = (
            root.selection if root.selection is not None else params.selection
        )
        self.consumption: ConsumptionPolicy = (
            root.consumption if root.consumption is not None else params.consumption
        )
        self.windows: tuple[NamedWindow, ...] = tuple(
            self._window(iri)
            for iri in dict.fromkeys(n.window for n in root.walk() if isinstance(n, Event))
        )
        self._history: dict[int, _State] = {}
        self._latest: _State | None = None
        self._matches: dict[tuple[str, frozenset[Triple], Mu], list[Mu]] = {}

    # EventEvaluation ----------------------------------------------------------------------

    def at(self, t: int, previous: int | None = None) -> list[Mu]:
        """``⟦MATCH E⟧^t``: the event mappings of E at ``t`` with their time annotations
        dropped, one solution mapping per event mapping (a bag; RSEP-QL Sect. 4.2, "Event
        Graph Pattern")."""
        return [m.mu for m in self.mappings(t, previous)]

    def instants(self) -> list[int]:
        """The instants at which a window the pattern reads may change its content (the
        items' times and the windows' openings and closings): the answer changes only
        there, or where consumption changes the input, which is at evaluation instants."""
        found: set[int] = set()
        for named in self.windows:
            times = [item.t_start for item in self.dataset.stream(named)]
            if not times:
                continue
            found.update(times)
            reading = self.dataset.reading(named)
            until = max(times) + horizon(named.window)
            found.update(boundaries(named.window, reading, min(times), until))
        return sorted(found)

    # The Match's event mappings ---------------------------------------------------------

    def mappings(self, t: int, previous: int | None = None) -> list[EventMapping]:
        """``⟨⟨E⟩⟩_{W^id, P}^t``: the event mappings of the Match's pattern E at ``t`` under
        its consumption policy ``P`` (RSEP-QL Sect. 4.4, Eq. (12)), with the state carried
        from the previous call."""
        known = self._history.get(t)
        if known is not None:
            return list(known.answer)
        if self.consumption is ConsumptionPolicy.NONE:
            return _sorted(self._evaluate_at(t, previous, None))
        latest = self._latest
        if latest is not None and t < latest.t:
            raise UserError(
                f"the consumption policy {self.consumption} carries state across "
                f"evaluation instants, and {t} is before {latest.t}, the last instant evaluated"
            )
        contents = self._contents(t, previous)
        inputs = self._next_inputs(latest, contents)
        found = self._evaluate_at(t, previous, inputs)
        leaves = frozenset(leaf for justifying in found.values() for leaf in justifying)
        state = _State(t, inputs, contents, self._used(leaves), tuple(_sorted(found)))
        self._history[t] = state
        self._latest = state
        return list(state.answer)

    def inputs(self, t: int) -> dict[str, frozenset[Input]] | None:
        """The input structure ``I_i`` used at the evaluated instant ``t`` (Def. 8), by
        window; ``None`` under ``P^u`` (the full input)."""
        state = self._state(t)
        return None if state.inputs is None else dict(state.inputs)

    def used(self, t: int) -> dict[str, frozenset[Input]]:
        """The inputs the answer at the evaluated instant ``t`` used, by window: what
        ``P^c`` and ``P^r`` leave out at the next instant (Sect. 4.4)."""
        return dict(self._state(t).used)

    def _state(self, t: int) -> _State:
        known = self._history.get(t)
        if known is None:
            raise KeyError(f"no evaluation at {t} under a consumption policy")
        return known

    # Any event pattern --------------------------------------------------------------------

    def evaluate(
        self,
        pattern: EventPattern,
        t: int,
        previous: int | None = None,
        *,
        active: WindowFunction | None = None,
        bound: Mu | None = None,
        selection: SelectionPolicy | None = None,
    ) -> list[EventMapping]:
        """``⟨⟨E⟩⟩_W^t`` for any RSEP-QL event pattern ``E`` over this plan's dataset, with
        the full input (``P^u``): ``active`` is ``W`` (default ``W^id``), ``bound`` a mapping
        substituted first (``μ2(E1)`` of Eq. (7)), ``selection`` the default of SEQs that
        state none (default: the Match's, else the parameter)."""
        scope = _Scope(t, previous, selection or self.selection, None)
        found = self._eval(pattern, active or IdentityWindow(), bound or Mu(), scope)
        return _sorted(found)

    # Evaluation -----------------------------------------------------------------------------

    def _evaluate_at(
        self, t: int, previous: int | None, inputs: Mapping[str, frozenset[Input]] | None
    ) -> _Found:
        """``⟨⟨E⟩⟩_{W^id, P}^t`` for the Match's pattern: MATCH's initial active window is
        ``W^id`` (Sect. 4.2, "Event Graph Pattern")."""
        scope = _Scope(t, previous, self.selection, inputs)
        return self._eval(self.match.pattern, IdentityWindow(), Mu(), scope)

    def _eval(
        self, pattern: EventPattern, active: WindowFunction, bound: Mu, scope: _Scope
    ) -> _Found:
        """``⟨⟨pattern⟩⟩_{active, P}^t`` with ``bound`` substituted, each event mapping with
        the basic-event solutions that justify it."""
        if isinstance(pattern, Event):
            return self._event(pattern, active, bound, scope)
        if isinstance(pattern, First):
            found = self._eval(pattern.pattern, active, bound, scope)
            return {m: found[m] for m in first(found)}
        if isinstance(pattern, Last):
            found = self._eval(pattern.pattern, active, bound, scope)
            return {m: found[m] for m in last(found)}
        if isinstance(pattern, Seq):
            policy = pattern.selection if pattern.selection is not None else scope.selection
            if policy is SelectionPolicy.UNRESTRICTED:
                return self._seq(pattern, active, bound, scope)
            if policy is SelectionPolicy.NAIVE:
                return self._seq_naive(pattern, active, bound, scope)
            return self._seq_selected(pattern, active, bound, scope, policy)
        if isinstance(pattern, Match):
            raise UserError("MATCH is a graph pattern; it cannot stand inside an event pattern")
        raise UserError(f"{type(pattern).__name__} is not an RSEP-QL event pattern")

    def _event(self, event: Event, active: WindowFunction, bound: Mu, scope: _Scope) -> _Found:
        """The basic event pattern (Sect. 4.2; under a consumption policy Eq. (12)):
        ``{(μ, t_k, t_k) | μ ∈ ⟦P⟧_{G_k ∩ ℐ} ∧ (G_k, t_k) ∈ W • W_j(S_ℓ, t)}``, with ``ℐ``
        the window's potential input (all of it under ``P^u``)."""
        named = self._window(event.window)
        items = self.active_items(named, active, scope.t, scope.previous)
        allowed = None if scope.inputs is None else scope.inputs.get(named.iri, frozenset())
        substituted = bound.project(event.variables)
        found: _Found = {}
        for item in items:
            graph = item.graph
            if allowed is not None:
                graph = frozenset(x for x in graph if self._input(item, x) in allowed)
            for mu in self._solutions(event.pattern, graph, substituted):
                leaf = _Leaf(named.iri, event.pattern, item, graph, mu)
                _add(found, EventMapping(mu, item.t_start, item.t_start), frozenset({leaf}))
        return found

    def _seq(self, seq: Seq, active: WindowFunction, bound: Mu, scope: _Scope) -> _Found:
        """``E1 SEQ E2`` (Eq. (7)): ``{(μ1 ∪ μ2, t1, t4) | (μ2, t3, t4) ∈ ⟨⟨E2⟩⟩_W^t ∧ (μ1,
        t1, t2) ∈ ⟨⟨μ2(E1)⟩⟩_{W^⊔[0, t3-1] • W}^t}``."""
        found: _Found = {}
        for m2, leaves2 in self._eval(seq.right, active, bound, scope).items():
            narrowed = before(m2.t1, active)
            for m1, leaves1 in self._eval(seq.left, narrowed, bound.join(m2.mu), scope).items():
                _add(found, EventMapping(m1.mu.join(m2.mu), m1.t1, m2.t2), leaves1 | leaves2)
        return found

    def _seq_naive(self, seq: Seq, active: WindowFunction, bound: Mu, scope: _Scope) -> _Found:
        """``E1 SEQ^n E2`` (Eq. (9), C-SPARQL): ``{(μ1 ∪ μ2, t1, t4) | (μ1, t1, t2) ∈
        ⟨⟨LAST E1⟩⟩_W^t ∧ (μ2, t3, t4) ∈ ⟨⟨LAST E2⟩⟩_W^t ∧ μ1 ∼ μ2 ∧ t2 < t3}``: "picks the
        two latest event mappings that match the two sub-patterns and compare[s] their
        associated timestamps"."""
        lefts = self._eval(seq.left, active, bound, scope)
        rights = self._eval(seq.right, active, bound, scope)
        found: _Found = {}
        for m1 in last(lefts):
            for m2 in last(rights):
                if m1.mu.compatible(m2.mu) and m1.t2 < m2.t1:
                    mapping = EventMapping(m1.mu.join(m2.mu), m1.t1, m2.t2)
                    _add(found, mapping, lefts[m1] | rights[m2])
        return found

    def _seq_selected(
        self,
        seq: Seq,
        active: WindowFunction,
        bound: Mu,
        scope: _Scope,
        policy: SelectionPolicy,
    ) -> _Found:
        """``E1 SEQ^c E2`` (Eq. (10)) and ``E1 SEQ^r E2`` (Eq. (11)): among the mappings
        ``(μ2, t3, t4)`` of E2 with ``⟨⟨μ2(E1)⟩⟩_{W⋆}^t ≠ ∅`` (``W⋆ = W^⊔[0, t3-1] • W``),
        those no other such precedes (``SEQ^c``) or follows (``SEQ^r``) in ``≺``; each joined
        with ``⟨⟨FIRST μ2(E1)⟩⟩_{W⋆}^t`` (``SEQ^c``) or ``⟨⟨LAST μ2(E1)⟩⟩_{W⋆}^t``
        (``SEQ^r``) into ``(μ1 ∪ μ2, t1, t4)``."""
        pick = first if policy is SelectionPolicy.CHRONOLOGICAL else last
        rights = self._eval(seq.right, active, bound, scope)
        earlier: dict[EventMapping, _Found] = {}
        for m2 in rights:
            lefts = self._eval(seq.left, before(m2.t1, active), bound.join(m2.mu), scope)
            if lefts:
                earlier[m2] = lefts
        found: _Found = {}
        for m2 in pick(earlier):
            lefts = earlier[m2]
            for m1 in pick(lefts):
                mapping = EventMapping(m1.mu.join(m2.mu), m1.t1, m2.t2)
                _add(found, mapping, lefts[m1] | rights[m2])
        return found

    # Data -----------------------------------------------------------------------------------

    def _window(self, iri: str) -> NamedWindow:
        try:
            return self.plan.dataset.window(iri)
        except KeyError:
            raise UserError(
                f"EVENT reads window <{iri}>, which the dataset does not declare"
            ) from None

    def active_items(
        self, named: NamedWindow, active: WindowFunction, t: int, previous: int | None = None
    ) -> tuple[Item, ...]:
        """``W • W_j(S_ℓ, t) = W(W_j(S_ℓ, t), t)`` (Sect. 3.2, nesting): the active window
        applied to the window's content. The active window is RSEP-QL's own device (``W^id``,
        ``W^⊔``), so its bounds are the paper's (closed), not ``window.bounds``."""
        items = self.dataset.content(named, t, previous)
        return content(active, Stream(named.stream, items), t, Reading())

    def _solutions(self, pattern: GraphPatternRef, graph: frozenset[Triple], bound: Mu) -> list[Mu]:
        """``⟦μ(P)⟧_G`` joined with ``μ`` (pyoxigraph, :class:`GraphMatcher`), memoised."""
        key = (pattern.text, graph, bound)
        known = self._matches.get(key)
        if known is None:
            known = self.matcher.match(pattern, graph, bound=bound)
            if len(self._matches) >= _MAX_CACHED_MATCHES:
                self._matches.clear()
            self._matches[key] = known
        return known

    def _input(self, item: Item, triple: Triple) -> Input:
        """The element of ``I_i(w_j)`` a triple of ``item`` is (:class:`InputUnit`)."""
        return Input(item.t_start if self.unit is InputUnit.OCCURRENCE else None, triple)

    def _contents(self, t: int, previous: int | None) -> dict[str, frozenset[Input]]:
        """``SDS_{w_j}(t)`` of each window the pattern reads, as inputs."""
        return {
            named.iri: frozenset(
                self._input(item, x)
                for item in self.dataset.content(named, t, previous)
                for x in item.graph
            )
            for named in self.windows
        }

    def _next_inputs(
        self, latest: _State | None, contents: Mapping[str, frozenset[Input]]
    ) -> dict[str, frozenset[Input]]:
        """``I_i = P(E, t_i, I_{i-1}, Δ_i)`` for ``P^c`` and ``P^r`` (Def. 10 and the prose
        after it): ``I_1(w_j) = SDS_{w_j}(t_1)``; then ``Δ_i(w_j) = SDS_{w_j}(t_i) ∖
        SDS_{w_j}(t_{i-1})`` (Def. 9) plus the part of ``I_{i-1}(w_j)`` the answer at
        ``t_{i-1}`` did not use, kept within ``SDS_{w_j}(t_i)`` (Def. 8: ``I_i(w_j) ⊆
        SDS_{w_j}(t_i)``)."""
        if latest is None or latest.inputs is None:
            return dict(contents)
        out: dict[str, frozenset[Input]] = {}
        for iri, now in contents.items():
            delta = now - latest.contents.get(iri, frozenset())
            kept = latest.inputs.get(iri, frozenset()) - latest.used.get(iri, frozenset())
            out[iri] = delta | (kept & now)
        return out

    def _used(self, leaves: Iterable[_Leaf]) -> dict[str, frozenset[Input]]:
        """The inputs the solutions ``leaves`` used: the triples ``μ(P)`` of each, found as
        the triples without which ``μ`` is no longer a solution of ``P`` in the item's graph
        (exact for a BGP without blank nodes, RSEP-QL's ``P`` in ``EVENT w P``)."""
        out: dict[str, set[Input]] = {}
        for leaf in leaves:
            for triple in leaf.graph:
                rest = leaf.graph - {triple}
                if not self.matcher.match(leaf.pattern, rest, bound=leaf.mu):
                    out.setdefault(leaf.window, set()).add(self._input(leaf.item, triple))
        return {iri: frozenset(found) for iri, found in out.items()}
