"""SPAseq's sequence expressions over finite streams, literally as the paper defines them.

SPAseq (seed 004, Gillani et al.) evaluates a sequence expression over a streamset ``Σ``
within time bounds ``[τb, τe]`` (Sect. 5); its values are pairs ``(τ, Ω)``: a set of
solution mappings and the time of the last event matched. This module enumerates them,
definition by definition (the NFA of ``rsep.algebra.nfa`` is the engine's model, not this
one's):

- a GPM ``(u, P)`` (Def. 7) and the Graph operator ``(u, P) Graph (v, P_D)`` (Def. 15):
  :meth:`_Evaluator.gpm`;
- conjunction and disjunction (Def. 8, 9): :meth:`_Evaluator.hits_at`;
- skip-till-any, skip-till-next and strict contiguity (Def. 10-12): :meth:`_Evaluator.candidates`;
- Kleene+ standalone and in a sequence (Def. 13, 14): :meth:`_Evaluator.grow`;
- negation and optional, which App. B leaves open: :func:`_variants` and
  :meth:`_Evaluator.negations` (CQELS-CEP's SEQ_WO, NO_HEAD and NO_TAIL, docs/semantics.md);
- the query over tumbling ``WITHIN`` windows (Def. 16): :func:`find_matches`.

Choices where the paper is silent or contradicts itself (each argued in docs/semantics.md,
"SPAseq"):

- **A GPM after others is evaluated under the run's bindings.** Def. 7 evaluates ``⟦P⟧_G``
  alone, so Query 1's ``FILTER (?fr2 < ?fr1)`` could never hold; the NFA evaluates it with
  the run's history (Algorithm 2, ``Gpm(G_e, P_θ, H)``). Here, with ``X`` the mappings of
  the match so far, the step's value on ``G`` is ``X ⋈_P G = ⋃_{μ ∈ X} {μ} ⋈ ⟦μ(P)⟧_G``
  (``μ(P)``: Sect. 5's substitution). Without such FILTERs it equals Def. 8-12's ``X ⋈ Y``.
- **Matches are sets of mappings**, as in every definition: an event with two solutions
  gives one ``(τ, Ω)``, and skip-till-next skips past it for the whole set (Def. 11).
  Each mapping of ``Ω`` becomes one event mapping ``(μ, t1, t2)``.
- **Kleene+** iterates with the strategy in front of the step (Fig. 10), with strict
  contiguity when the step is first (Fig. 5: "one or more consecutive events"; Def. 13
  says ``;``), or with ``KleenePlus.strategy`` when given (the plan's rule).
- **Negation** ``!N`` between two steps: no event of ``N``'s stream strictly between them
  on which ``N`` matches under the match's mapping; the two steps are related by the more
  permissive of the strategies around it. First: none from the window's start to the
  first event; last: none after the last event until the window's end. **Optional**
  ``N?`` is ``⟦N⟧ ∪ ⟦!N⟧`` (App. B.0.2): each sequence with ``N`` or with ``!N``.
- **Windows** ``[t0 + kω, t0 + (k+1)ω]``, ``k ∈ ℕ``, closed at both ends (Def. 16), with
  ``t0`` the parameter ``window.t0``; a match is *known* at its last event, or at its
  window's end if a negation follows its last step.
- **Conjunction** pairs any two pairs of one timestamp (Def. 8), so on one stream both
  operands match the same event; **Graph** keeps only non-empty joins (Def. 15 omits
  Def. 7's ``≠ ∅``; an empty pair could never join anyway).
- **PARTITION BY** (not in the paper): matches are sought per value ``c`` of the key
  variables, with them bound to ``c`` from the start, over the events of key ``c`` and the
  events without a key (:func:`_partitions`).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

from pyoxigraph import Triple

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    KleenePlus,
    Negation,
    Optional,
    Strategy,
    check_bop,
    unwrap_bounds,
)
from rsep.algebra.events import Sequence as SeqExpr
from rsep.algebra.plan import EventJoin, Plan
from rsep.errors import UserError
from rsep.rdf.event import Event, Stream, StreamSet, event_order
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import EventMapping, Mu
from rsep.semantics.graph import Graph, TimeVaryingGraph, as_time_varying
from rsep.semantics.store import GraphMatcher

__all__ = ["SpaseqEvaluation", "SpaseqMatch", "evaluate_bounds", "find_matches"]

Streams = StreamSet | Mapping[str, Stream] | Iterable[Stream]
Graphs = Mapping[str, Graph | TimeVaryingGraph]

_PERMISSIVE = {Strategy.STRICT: 0, Strategy.SKIP_TILL_NEXT: 1, Strategy.SKIP_TILL_ANY: 2}
_MAX_PARTIALS = 100_000


@dataclass(frozen=True)
class SpaseqMatch:
    """One match ``(τ, Ω)`` of a sequence expression (SPAseq Def. 7-16) with the events it
    selected.

    ``mappings`` is ``Ω``; ``events`` the events it used, in time order (a negated step
    uses none); ``t1`` the first event's time and ``t2 = τ`` the last's; ``known`` the
    instant from which the match is certain: ``t2``, or the end of its window when a
    negated step follows the last positive one (nothing may happen until then).
    """

    mappings: frozenset[Mu]
    events: tuple[Event, ...]
    t1: int
    t2: int
    known: int

    def event_mappings(self) -> list[EventMapping]:
        """``(μ, t1, t2)`` for each ``μ ∈ Ω``, in a fixed order."""
        return [EventMapping(mu, self.t1, self.t2) for mu in _sorted(self.mappings)]


def _sorted(mappings: Iterable[Mu]) -> list[Mu]:
    return sorted(mappings, key=lambda mu: sorted(mu.text().items()))


# The streamset -----------------------------------------------------------------------------


class _Streamset:
    """``Σ`` (Def. 3) indexed by time: ``Σ(u)`` (Sect. 5.1) and the times of all its events
    (for strict contiguity, Def. 12)."""

    def __init__(self, streams: Mapping[str, Sequence[Event]]) -> None:
        self.by_stream: dict[str, dict[int, list[Event]]] = {}
        self.times: dict[str, list[int]] = {}
        everything: set[int] = set()
        for iri, events in streams.items():
            at: dict[int, list[Event]] = {}
            for event in events:
                if not event.is_point:
                    raise UserError(
                        f"an event of <{iri}> lasts from {event.t_start} to {event.t_end}; "
                        "SPAseq events are pairs (τ, G) with one timestamp (Definition 1)"
                    )
                at.setdefault(event.t_start, []).append(event)
            self.by_stream[iri] = at
            self.times[iri] = sorted(at)
            everything.update(at)
        self.all_times = sorted(everything)

    def events(self, stream: str, t: int) -> list[Event]:
        """The events of ``Σ(u)`` at ``t`` (``Σ(u) = ∅`` for a stream not in ``Σ``)."""
        return self.by_stream.get(stream, {}).get(t, [])

    def stream_times(self, streams: Iterable[str], low: int, high: int) -> list[int]:
        """The times in ``[low, high]`` at which one of ``streams`` has an event."""
        found: set[int] = set()
        for stream in streams:
            times = self.times.get(stream, [])
            found.update(times[bisect.bisect_left(times, low) : bisect.bisect_right(times, high)])
        return sorted(found)

    def next_time(self, after: int) -> int | None:
        """The first time after ``after`` at which any stream of ``Σ`` has an event."""
        index = bisect.bisect_right(self.all_times, after)
        return self.all_times[index] if index < len(self.all_times) else None

    def restricted(self, keep: Callable[[Event], bool]) -> _Streamset:
        """The streamset of the events ``keep`` accepts."""
        return _Streamset(
            {
                iri: [e for t in times for e in self.by_stream[iri][t] if keep(e)]
                for iri, times in self.times.items()
            }
        )

    def every_event(self) -> Iterator[Event]:
        """Every event, by stream then time."""
        for iri, times in self.times.items():
            for t in times:
                yield from self.by_stream[iri][t]


def _stream_map(streams: Streams) -> dict[str, Sequence[Event]]:
    if isinstance(streams, Mapping):
        return {iri: stream.events for iri, stream in streams.items()}
    return {stream.iri: stream.events for stream in streams}


# Sequence expressions as positive steps with negations in the gaps ----------------------


@dataclass(frozen=True)
class _Step:
    """A positive step of a sequence: a BOp expression (GPM, ``&``, ``|``; Def. 4) or its
    Kleene+; ``strategy`` relates it to the previous positive step (``None`` when first);
    ``negated`` are the negated BOps standing between them."""

    pattern: EventPattern
    strategy: Strategy | None
    negated: tuple[EventPattern, ...]


@dataclass(frozen=True)
class _Variant:
    """One way to read a sequence's optional steps (present, or negated: App. B.0.2), as
    positive steps and the negated BOps after the last one (``tail``: NO_TAIL)."""

    steps: tuple[_Step, ...]
    tail: tuple[EventPattern, ...]


def _variants(sequence: SeqExpr) -> list[_Variant]:
    """The sequence with each optional step read as present or as negated
    (``⟦(u, P)?⟧ = ⟦(u, P)⟧ ∪ ⟦(u, P)!⟧``, App. B.0.2), each as positive steps with the
    negated steps in the gaps. Between two positive steps the strategy is the most
    permissive of those written between them (the NFA's rule, ``rsep.algebra.nfa``)."""
    choices: list[list[EventPattern]] = []
    for step in sequence.steps:
        if isinstance(step, Optional):
            inner = check_bop(step.step, "optional '?'")
            choices.append([inner, Negation(inner)])
        else:
            choices.append([step])
    variants: list[_Variant] = []
    has_positive = False
    for chosen in itertools.product(*choices):
        steps: list[_Step] = []
        pending: list[EventPattern] = []
        stretch: list[Strategy] = []
        for index, step in enumerate(chosen):
            if index > 0:
                stretch.append(sequence.strategies[index - 1])
            if isinstance(step, Negation):
                pending.append(check_bop(step.step, "negation '!'"))
                continue
            if isinstance(step, KleenePlus):
                check_bop(step.step, "Kleene+ '+'")
            elif not isinstance(step, Gpm | Conjunction | Disjunction):
                raise UserError(
                    f"{type(step).__name__} is not a step of a SPAseq sequence (Definition 4: "
                    "GPM, GPM+, GPM & GPM, GPM | GPM; App. B: GPM!, GPM?)"
                )
            else:
                check_bop(step, "a sequence step")
            strategy = max(stretch, key=_PERMISSIVE.__getitem__) if steps else None
            steps.append(_Step(step, strategy, tuple(pending)))
            pending, stretch = [], []
        if steps:
            has_positive = True
            variants.append(_Variant(tuple(steps), tuple(pending)))
    if not has_positive:
        raise UserError(f"{sequence} has no step that is not negated: no event would be matched")
    return variants


# Partial matches --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hit:
    """A pair ``(τ, Ω)`` of a BOp expression (Def. 7-9, 15) under the bindings of the match
    so far, with the events it was found in."""

    time: int
    events: tuple[Event, ...]
    mappings: frozenset[Mu]


@dataclass(frozen=True)
class _Gap:
    """Negated BOps that no event may match between ``after`` and ``before`` (exclusive);
    ``None`` is the window's start or end (inclusive)."""

    negated: tuple[EventPattern, ...]
    after: int | None
    before: int | None


@dataclass(frozen=True)
class _Partial:
    """A match of the steps so far: ``(last, mappings)`` is Def. 10-12's ``(τ', X)``."""

    mappings: frozenset[Mu]
    events: tuple[Event, ...]
    first: int | None
    last: int | None
    gaps: tuple[_Gap, ...]


def _join(left: frozenset[Mu], right: frozenset[Mu]) -> frozenset[Mu]:
    """``Ω1 ⋈ Ω2`` (Def. 5)."""
    return frozenset(a.join(b) for a in left for b in right if a.compatible(b))


# The evaluator ----------------------------------------------------------------------------


class _Evaluator:
    """Def. 7-15 over one streamset, with a cache of GPM evaluations."""

    def __init__(
        self,
        matcher: GraphMatcher,
        graphs: Mapping[str, TimeVaryingGraph],
        max_partials: int,
    ) -> None:
        self.matcher = matcher
        self.graphs = graphs
        self.max_partials = max_partials
        self._gpm: dict[tuple[int, Event, Mu], frozenset[Mu]] = {}

    # Def. 7, 15 --------------------------------------------------------------------------

    def gpm(self, node: Gpm, event: Event, mu: Mu) -> frozenset[Mu]:
        """``{μ} ⋈ ⟦μ(P)⟧_G`` for the event's graph ``G`` (Def. 7 under the bindings ``μ``),
        joined with ``⟦P_D⟧`` over the knowledge base graph when the GPM has ``Graph (v,
        P_D)`` (Def. 15)."""
        key = (id(node), event, mu)
        known = self._gpm.get(key)
        if known is not None:
            return known
        found = self.matcher.match(node.pattern, event.graph, bound=mu)
        if node.graph_kb is not None and found:
            kb = self.kb(node.graph_kb.graph, event.t_start, node.name)
            found = [
                nu
                for partial in found
                for nu in self.matcher.match(node.graph_kb.pattern, kb, partial)
            ]
        result = frozenset(found)
        self._gpm[key] = result
        return result

    def kb(self, iri: str, t: int, gpm: str) -> frozenset[Triple]:
        """``Γ(v)`` (Def. 15) at the event's time ``t``."""
        graph = self.graphs.get(iri)
        if graph is None:
            raise UserError(
                f"GPM {gpm} reads the knowledge base graph <{iri}>, which the dataset does not "
                "hold (SPAseq Definition 15: Γ(v) must name a graph of D)"
            )
        return graph.at(t)

    # Def. 7-9: BOp expressions at one instant --------------------------------------------

    def hits_at(
        self, node: EventPattern, bound: frozenset[Mu], t: int, sigma: _Streamset
    ) -> list[_Hit]:
        """The pairs ``(t, X ⋈ Y)`` of the BOp ``node`` at instant ``t``, ``X = bound``: a GPM on
        each event of its stream at ``t`` (Def. 7); a disjunction's operands' pairs (Def. 9);
        a conjunction's compatible combinations of its operands' pairs at ``t`` (Def. 8)."""
        if isinstance(node, Gpm):
            hits = []
            for event in sigma.events(node.stream, t):
                found: frozenset[Mu] = frozenset().union(
                    *(self.gpm(node, event, mu) for mu in bound)
                )
                if found:
                    hits.append(_Hit(t, (event,), found))
            return hits
        if isinstance(node, Disjunction):
            out: list[_Hit] = []
            for operand in node.operands:
                out.extend(h for h in self.hits_at(operand, bound, t, sigma) if h not in out)
            return out
        if isinstance(node, Conjunction):
            grouped: dict[frozenset[Event], set[Mu]] = {}  # Def. 8: a set of events
            for mu in bound:
                parts = [self.hits_at(op, frozenset({mu}), t, sigma) for op in node.operands]
                for combination in itertools.product(*parts):
                    joined = reduce(_join, (h.mappings for h in combination))
                    if joined:
                        used = frozenset(e for h in combination for e in h.events)
                        grouped.setdefault(used, set()).update(joined)
            return [
                _Hit(t, tuple(sorted(used, key=event_order)), frozenset(found))
                for used, found in grouped.items()
            ]
        raise UserError(f"{type(node).__name__} is not a BOp expression (SPAseq Definition 4)")

    # Def. 10-12: the next step after a partial match -------------------------------------

    def candidates(
        self,
        node: EventPattern,
        partial: _Partial,
        strategy: Strategy | None,
        window: tuple[int, int],
        sigma: _Streamset,
    ) -> list[_Hit]:
        """The pairs ``(τ, X ⋈ Y)`` that extend ``partial = (τ', X)`` by the BOp ``node``:
        every later one (skip-till-any, Def. 10), those at the first later instant where
        one exists (skip-till-next, Def. 11), those at the next instant of the whole
        streamset (strict contiguity, Def. 12); all of the window when ``partial`` is empty."""
        begin, end = window
        streams = _streams(node)
        if partial.last is None:
            times = sigma.stream_times(streams, begin, end)
            return [h for t in times for h in self.hits_at(node, partial.mappings, t, sigma)]
        after = partial.last
        if strategy is Strategy.STRICT:
            following = sigma.next_time(after)
            if following is None or following > end:
                return []
            return self.hits_at(node, partial.mappings, following, sigma)
        times = sigma.stream_times(streams, after + 1, end)
        if strategy is Strategy.SKIP_TILL_NEXT:
            for t in times:
                hits = self.hits_at(node, partial.mappings, t, sigma)
                if hits:
                    return hits
            return []
        return [h for t in times for h in self.hits_at(node, partial.mappings, t, sigma)]

    def take(
        self,
        partial: _Partial,
        node: EventPattern,
        strategy: Strategy | None,
        negated: tuple[EventPattern, ...],
        window: tuple[int, int],
        sigma: _Streamset,
    ) -> list[_Partial]:
        """``partial`` extended by each candidate pair of ``node``; the negated BOps before
        ``node`` are remembered as a gap, checked once the whole match is known."""
        out = []
        for hit in self.candidates(node, partial, strategy, window, sigma):
            gaps = partial.gaps
            if negated:
                gaps = (*gaps, _Gap(negated, partial.last, hit.time))
            out.append(
                _Partial(
                    hit.mappings,
                    tuple(sorted((*partial.events, *hit.events), key=event_order)),
                    partial.first if partial.first is not None else hit.time,
                    hit.time,
                    gaps,
                )
            )
        return out

    # Def. 13-14: Kleene+ -------------------------------------------------------------------

    def grow(
        self, partial: _Partial, step: _Step, window: tuple[int, int], sigma: _Streamset
    ) -> list[_Partial]:
        """``σ • Ψ`` for one positive step: a BOp once; a Kleene+ as the union over ``k``
        of ``σ • Ψ^k`` with ``σ • Ψ^{k+1} = (σ • Ψ^k) ∘ Ψ`` (Def. 13-14), ``∘`` the
        iteration strategy (:func:`_iteration`)."""
        if not isinstance(step.pattern, KleenePlus):
            return self.take(partial, step.pattern, step.strategy, step.negated, window, sigma)
        inner = step.pattern.step
        again = _iteration(step)
        level = self.take(partial, inner, step.strategy, step.negated, window, sigma)
        out: list[_Partial] = []
        while level:
            out.extend(level)
            self._bound(len(out))
            level = [
                longer
                for shorter in level
                for longer in self.take(shorter, inner, again, (), window, sigma)
            ]
        return out

    def _bound(self, count: int) -> None:
        if count > self.max_partials:
            raise UserError(
                f"more than {self.max_partials} partial matches in one window (max_runs); "
                "the oracle enumerates them all (DESIGN.md: bound every state that can grow)"
            )

    # The whole sequence -----------------------------------------------------------------

    def sequence(
        self,
        variant: _Variant,
        window: tuple[int, int],
        sigma: _Streamset,
        start: Mu,
    ) -> list[SpaseqMatch]:
        """``⟦SeqExp⟧^{[τb, τe]}_Σ`` for one reading of the optional steps: the positive
        steps left to right (the grammar nests sequences to the left, Def. 4), then the
        negations of every gap."""
        partials = [_Partial(frozenset({start}), (), None, None, ())]
        for step in variant.steps:
            partials = [longer for p in partials for longer in self.grow(p, step, window, sigma)]
            self._bound(len(partials))
        out = []
        for partial in partials:
            gaps = partial.gaps
            if variant.tail:
                gaps = (*gaps, _Gap(variant.tail, partial.last, None))
            kept = self.negations(partial.mappings, gaps, window, sigma)
            if kept and partial.first is not None and partial.last is not None:
                tail = bool(variant.tail)
                known = window[1] if tail else partial.last
                out.append(SpaseqMatch(kept, partial.events, partial.first, partial.last, known))
        return out

    def negations(
        self,
        mappings: frozenset[Mu],
        gaps: tuple[_Gap, ...],
        window: tuple[int, int],
        sigma: _Streamset,
    ) -> frozenset[Mu]:
        """The mappings ``μ`` of a match for which no negated BOp matches, under ``μ``, an
        event in its gap (CQELS-CEP's SEQ_WO, NO_HEAD and NO_TAIL with the compatibility
        ``μ2 ~ μ1 ∪ μ3`` read as ``⟦μ(P_N)⟧ ≠ ∅``; docs/semantics.md)."""
        kept = set()
        for mu in mappings:
            if not any(self._occurs(gap, mu, window, sigma) for gap in gaps):
                kept.add(mu)
        return frozenset(kept)

    def _occurs(self, gap: _Gap, mu: Mu, window: tuple[int, int], sigma: _Streamset) -> bool:
        low = window[0] if gap.after is None else gap.after + 1
        high = window[1] if gap.before is None else gap.before - 1
        for negated in gap.negated:
            for t in sigma.stream_times(_streams(negated), low, high):
                if self.hits_at(negated, frozenset({mu}), t, sigma):
                    return True
        return False


def _streams(node: EventPattern) -> list[str]:
    """The streams a BOp expression reads."""
    if isinstance(node, Gpm):
        return [node.stream]
    if isinstance(node, Conjunction | Disjunction):
        return [s for operand in node.operands for s in _streams(operand)]
    raise UserError(f"{type(node).__name__} is not a BOp expression (SPAseq Definition 4)")


def _iteration(step: _Step) -> Strategy:
    """The strategy between the iterations of a Kleene+ step (``KleenePlus.strategy``): its
    own when given; else the strategy in front of it (Fig. 10); when first, strict
    contiguity (Fig. 5's automaton has no skip edge; Def. 13 iterates with ``;``, which
    ``KleenePlus.strategy`` selects). docs/semantics.md, SPAseq Kleene+."""
    assert isinstance(step.pattern, KleenePlus)
    if step.pattern.strategy is not None:
        return step.pattern.strategy
    return step.strategy if step.strategy is not None else Strategy.STRICT


# Def. 16: the query -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Query:
    """A sequence expression with its ``WITHIN`` duration and ``PARTITION BY`` keys."""

    variants: tuple[_Variant, ...]
    within: int | None
    partition: tuple[str, ...]
    gpms: tuple[Gpm, ...]


def _query(pattern: EventPattern) -> _Query:
    try:
        node, within, partition = unwrap_bounds(pattern)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    sequence = node if isinstance(node, SeqExpr) else SeqExpr((node,), ())
    gpms = tuple(dict.fromkeys(n for n in sequence.walk() if isinstance(n, Gpm)))
    return _Query(tuple(_variants(sequence)), within, partition, gpms)


def _windows(query: _Query, sigma: _Streamset, origin: int) -> list[tuple[int, int]]:
    """The tumbling windows ``[t0 + kω, t0 + (k+1)ω]``, ``k ∈ ℕ`` (Def. 16), that hold an
    event; without ``WITHIN``, one window over every event."""
    times = [t for t in sigma.all_times if query.within is None or t >= origin]
    if not times:
        return []
    if query.within is None:
        return [(times[0], times[-1])]
    width = query.within
    ks = sorted({(t - origin) // width for t in times} | {(t - origin) // width - 1 for t in times})
    out = []
    for k in ks:
        begin = origin + k * width
        if k >= 0 and any(begin <= t <= begin + width for t in times):
            out.append((begin, begin + width))
    return out


def _partitions(
    query: _Query,
    sigma: _Streamset,
    evaluator: _Evaluator,
    windows: Sequence[tuple[int, int]],
) -> list[tuple[Mu, _Streamset]]:
    """``PARTITION BY``: one initial mapping ``μ_c`` (the key variables bound to ``c``) and
    one streamset ``Σ_c`` per key value ``c``.

    An event's keys are the values the key variables take in the solutions of the GPMs of
    its stream on it, each GPM alone (a FILTER naming another GPM's variable is then an
    error, hence false); ``Σ_c`` holds the events with key ``c`` and those with no key. The
    values ``c`` are the events' keys and those of the matches without partitioning (a
    GPM keyed only through such a FILTER still gets its partition)."""
    if not query.partition:
        return [(Mu(), sigma)]
    by = query.partition
    keys: dict[Event, set[Mu]] = {}
    for event in sigma.every_event():
        found: set[Mu] = set()
        for gpm in query.gpms:
            if gpm.stream != event.stream:
                continue
            for mu in evaluator.gpm(gpm, event, Mu()):
                if all(name in mu for name in by):
                    found.add(mu.project(by))
        keys[event] = found
    values = {k for found in keys.values() for k in found}
    for window in windows:
        for variant in query.variants:
            for match in evaluator.sequence(variant, window, sigma, Mu()):
                values.update(mu.project(by) for mu in match.mappings if set(by) <= mu.domain)
    return [(value, sigma.restricted(_member(keys, value))) for value in _sorted(values)]


def _member(keys: Mapping[Event, set[Mu]], value: Mu) -> Callable[[Event], bool]:
    """Whether an event belongs to the partition of ``value``: it has that key or none."""
    return lambda event: not keys[event] or value in keys[event]


def _evaluate(
    pattern: EventPattern,
    streams: Mapping[str, Sequence[Event]],
    graphs: Mapping[str, TimeVaryingGraph],
    matcher: GraphMatcher,
    origin: int,
    max_partials: int,
    bounds: tuple[int, int] | None = None,
) -> list[SpaseqMatch]:
    query = _query(pattern)
    sigma = _Streamset(streams)
    evaluator = _Evaluator(matcher, graphs, max_partials)
    windows = [bounds] if bounds is not None else _windows(query, sigma, origin)
    if bounds is None and query.within is None and any(v.tail for v in query.variants):
        raise UserError(
            "a negated last step needs WITHIN: the match is only known once the window has "
            "passed without the negated event (CQELS-CEP's NO_TAIL)"
        )
    found: dict[tuple[frozenset[Mu], tuple[Event, ...]], SpaseqMatch] = {}
    for start, part in _partitions(query, sigma, evaluator, windows):
        for window in windows:
            for variant in query.variants:
                for match in evaluator.sequence(variant, window, part, start):
                    key = (match.mappings, match.events)
                    other = found.get(key)
                    if other is None or match.known < other.known:
                        found[key] = match
    return sorted(
        found.values(),
        key=lambda m: (m.known, m.t2, m.t1, [event_order(e) for e in m.events], repr(m)),
    )


def find_matches(
    pattern: EventPattern,
    streams: Streams,
    graphs: Graphs | None = None,
    *,
    origin: int = 0,
    matcher: GraphMatcher | None = None,
    max_partials: int = _MAX_PARTIALS,
) -> list[SpaseqMatch]:
    """Every match of a SPAseq query's sequence expression over finite streams, with the
    events each used (SPAseq Def. 16): ``pattern`` as compiled (``Within``, optionally
    ``PartitionBy``, around a ``Sequence``) evaluated on each tumbling window
    ``[origin + kω, origin + (k+1)ω]``, ``k ∈ ℕ``; matches found in two windows (which share
    their boundary instant) are one. ``graphs`` holds the knowledge base graphs (Def. 15)."""
    return _evaluate(
        pattern,
        _stream_map(streams),
        {iri: as_time_varying(g) for iri, g in (graphs or {}).items()},
        matcher or GraphMatcher(),
        origin,
        max_partials,
    )


def evaluate_bounds(
    pattern: EventPattern,
    streams: Streams,
    bounds: tuple[int, int],
    graphs: Graphs | None = None,
    *,
    matcher: GraphMatcher | None = None,
    max_partials: int = _MAX_PARTIALS,
) -> list[SpaseqMatch]:
    """``⟦SeqExp⟧^{[τb, τe]}_Σ`` (SPAseq Def. 7-15): the matches of a sequence expression or
    a single step within the time bounds ``bounds = (τb, τe)``, both included; ``WITHIN``
    around ``pattern`` is ignored (the bounds are the window)."""
    return _evaluate(
        pattern,
        _stream_map(streams),
        {iri: as_time_varying(g) for iri, g in (graphs or {}).items()},
        matcher or GraphMatcher(),
        0,
        max_partials,
        bounds,
    )


class SpaseqEvaluation:
    """A SPAseq query bound to its data: the oracle's step 1 for SPAseq plans
    (:class:`~rsep.semantics.event_mapping.EventEvaluation`).

    The answer at ``t`` is every match of Def. 16 known at ``t`` (:attr:`SpaseqMatch.known`:
    its last event is at or before ``t``, and, when a negated step follows its last
    positive step, its window has ended by ``t``), as event mappings ``(μ, t1, t2)`` with
    ``μ`` the join of the matched events' mappings, ``t1`` the first event's time and ``t2``
    the last's. Matches never disappear: the answer grows with ``t`` (SPAseq's push-based
    output, Sect. 5.6; the streaming operator reports each once under Istream). The
    streamset is the plan's ``FROM STREAM`` streams; the windows start at ``window.t0``;
    knowledge base graphs come from the dataset's graphs.
    """

    answer_set = True
    """Def. 16 is a union of sets of projected matches: ``ContinuousQuery`` removes
    duplicate answers."""

    def __init__(self, plan: Plan, dataset: StreamingDataset, matcher: GraphMatcher) -> None:
        r2r = plan.r2r
        if isinstance(r2r, EventJoin) or not isinstance(r2r, EventPattern):
            raise UserError("a SPAseq query's WHERE clause is one sequence expression (Def. 4)")
        self.plan = plan
        self.pattern: EventPattern = r2r
        self.dataset = dataset
        self.matcher = matcher
        names = plan.dataset.streams or tuple(dataset.streams)
        self.streams = {iri: dataset.streams[iri].events for iri in names if iri in dataset.streams}
        self._matches: list[SpaseqMatch] | None = None

    def matches(self) -> list[SpaseqMatch]:
        """Every match over the finite streams (:func:`find_matches`), computed once."""
        if self._matches is None:
            self._matches = _evaluate(
                self.pattern,
                self.streams,
                self.dataset.graphs,
                self.matcher,
                self.plan.parameters.t0,
                self.plan.parameters.max_runs,
            )
        return self._matches

    def at(self, t: int, previous: int | None) -> list[EventMapping]:
        """The event mappings of the matches known at ``t``, each once, in the order the
        matches became known."""
        seen: dict[EventMapping, None] = {}
        for match in self.matches():
            if match.known <= t:
                for item in match.event_mappings():
                    seen.setdefault(item, None)
        return list(seen)

    def instants(self) -> list[int]:
        """Every event time of the streamset, and each instant at which a match becomes
        known (a window's end, for a negated last step)."""
        times = {e.t_start for events in self.streams.values() for e in events}
        times.update(m.known for m in self.matches())
        return sorted(times)
