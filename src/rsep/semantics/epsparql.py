"""EP-SPARQL's event patterns over a stream of triple occurrences (seed 002, Sect. 4.2).

The query is posed against an RDF stream ``S``, a set of triple occurrences
``⟨⟨s, p, o⟩, t, t'⟩`` (:class:`Occurrence`): each triple of each stream event holds over the
event's interval ``[t_start, t_end]``. Every operator maps sets of solutions
``⟨μ, tα, tω⟩`` (:class:`~rsep.semantics.event_mapping.EventMapping`) to a set of
solutions, one function per operator of Sect. 4.2:

- :func:`bgp`: ``BGP(P)``, every choice of occurrences for the triples ``μ(P)``, spanning
  ``[min tᵢ, max t'ᵢ]``;
- :func:`filter_solutions` (``Filter``, with ``σ``, :func:`sigma`), :func:`join` (``Join``),
  :func:`union` (``Union``), :func:`left_join` (``LeftJoin``), :func:`seq_join`
  (``SeqJoin``, SEQ), :func:`eq_join` (``EqJoin``, EQUALS), :func:`seq_right_join`
  (``SeqRightJoin``, OPTIONALSEQ), :func:`eq_left_join` (``EqLeftJoin``, EQUALSOPTIONAL);
- :func:`within`: ETALIS's ``WITHIN d`` (no operator of the paper): ``tω - tα ≤ d``;
- :func:`sub_select`: SPARQL 1.1's ``Project(Extend(Ψ, v, e)…, V)`` of a sub-select
  (query (5); no function of the paper), each solution keeping its interval;
- :func:`closure`: the Q-closure ``clos_Q(S)`` of CONSTRUCT rules
  (:class:`~rsep.algebra.plan.Rule`), whose derived triples re-enter the stream with their
  solution's interval.

:class:`EpsparqlEvaluation` binds a plan to its streams: the answer at ``t`` is the set of
solutions over the occurrences that end by ``t`` (and their Q-closure), which timewise
monotonicity (Sect. 4.2) makes the answers detected by ``t``. The SELECT's projection and
its ``(e AS ?v)`` expressions are applied by the caller
(:meth:`rsep.semantics.evaluate.ContinuousQuery.solutions`).

Formulas the extraction damaged are rebuilt in ``docs/semantics.md`` (EP-SPARQL); the
choices where the paper is silent are listed there too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from pyoxigraph import Literal, Triple

from rsep.algebra.events import (
    And,
    EqJoin,
    EqualsOptional,
    EventFilter,
    EventPattern,
    OptionalSeq,
    Or,
    SeqJoin,
    StreamBgp,
    Within,
)
from rsep.algebra.occurrences import (
    Slot,
    TriplePatterns,
    Variable,
    choose,
    derived_triples,
    sigma,
)
from rsep.algebra.plan import EventJoin, Plan, Rule, SubSelect
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.terms import Term
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import EventMapping, Mu, compatible_pairs
from rsep.semantics.store import GraphMatcher

__all__ = [
    "EpsparqlEvaluation",
    "Occurrence",
    "Solutions",
    "TriplePatterns",
    "bgp",
    "closure",
    "eq_join",
    "eq_left_join",
    "filter_solutions",
    "join",
    "left_join",
    "occurrences",
    "seq_join",
    "seq_right_join",
    "sigma",
    "sub_select",
    "union",
    "within",
]

Solutions = frozenset[EventMapping]
"""A set ``Ψ`` of solutions ``⟨μ, tα, tω⟩`` (Sect. 4.2: the operators are defined on sets)."""


@dataclass(frozen=True)
class Occurrence:
    """A triple occurrence ``⟨⟨s, p, o⟩, t, t'⟩``: the triple holds over ``[t, t']``
    (Sect. 4.2, "an RDF stream … a set S consisting of triple occurrences")."""

    triple: Triple
    t_start: int
    t_end: int

    def __post_init__(self) -> None:
        if self.t_start > self.t_end:
            raise ValueError(f"an occurrence ends before it starts: [{self.t_start}, {self.t_end}]")


def occurrences(events: Iterable[Event]) -> frozenset[Occurrence]:
    """The triple occurrences of ``events``: every triple of an event's graph over the
    event's interval (Sect. 4.2; a triple stream is the case of one-triple graphs). ``S``
    is a set: one triple in two events over one interval is one occurrence."""
    return frozenset(
        Occurrence(triple, event.t_start, event.t_end) for event in events for triple in event.graph
    )


# BGP ----------------------------------------------------------------------------------


def _key(matcher: GraphMatcher) -> Callable[[Term], object]:
    """What matching compares: a literal's form as pyoxigraph stores it, any other term
    itself (as the rest of the oracle matches, store.py)."""
    forms = matcher.forms

    def key(term: Term) -> object:
        return forms.stored_form(term) if isinstance(term, Literal) else term

    return key


class _Index:
    """Occurrences by predicate, for the candidates of a triple pattern."""

    def __init__(self, stream: Iterable[Occurrence]) -> None:
        self.all = list(stream)
        self.by_predicate: dict[Term, list[Occurrence]] = {}
        for occurrence in self.all:
            self.by_predicate.setdefault(occurrence.triple.predicate, []).append(occurrence)

    def candidates(self, predicate: Slot, binding: Mapping[str, Term]) -> list[Occurrence]:
        if isinstance(predicate, Variable):
            predicate = binding.get(predicate.name, predicate)
        if isinstance(predicate, Variable):
            return self.all
        return self.by_predicate.get(predicate, [])


def bgp(
    patterns: TriplePatterns,
    stream: Collection[Occurrence],
    matcher: GraphMatcher,
    fresh: Collection[Occurrence] | None = None,
) -> Solutions:
    """``BGP(P)`` over ``S`` (Sect. 4.2): ``⟨μ, tα, tω⟩`` is a solution iff ``dom(μ)`` is the
    variables of ``P`` (1) and for the triple set ``μ(P) = {τ1, …, τn}`` there are
    occurrences ``⟨τᵢ, tᵢ, t'ᵢ⟩ ∈ S`` with ``tα = min tᵢ`` and ``tω = max t'ᵢ`` (2). Every
    choice of occurrences gives a solution; ``μ(P)`` being a set, two triple patterns
    that ``μ`` makes one triple take one occurrence of it.

    With ``fresh`` (a part ``Δ`` of ``S``), only the solutions that choose an occurrence of
    ``Δ``: BGP is monotone in ``S``, so ``BGP(S) = BGP(S ∖ Δ) ∪ bgp(P, S, fresh=Δ)``, which
    lets a Q-closure evaluate each round's new occurrences only (the first pattern that
    takes one of ``Δ`` takes it from ``Δ``, those before it from ``S ∖ Δ``)."""
    count = len(patterns.triples)
    if not count:
        raise UserError("an empty stream pattern has no interval (EP-SPARQL Sect. 4.2, BGP)")
    everything = _Index(stream)
    if fresh is None:
        pools = [[everything] * count]
    else:
        delta = set(fresh)
        old, new = _Index(o for o in stream if o not in delta), _Index(delta)
        pools = [[old] * k + [new] + [everything] * (count - k - 1) for k in range(count)]
    found: set[EventMapping] = set()
    key = _key(matcher)

    def extend(
        pool: list[_Index], index: int, binding: dict[str, Term], chosen: dict[Triple, Occurrence]
    ) -> None:
        if index == count:
            mu = Mu((k, v) for k, v in binding.items() if k in patterns.variables)
            used = chosen.values()
            start = min(o.t_start for o in used)
            end = max(o.t_end for o in used)
            found.add(EventMapping(mu, start, end))
            return
        pattern = patterns.triples[index]
        for occurrence in pool[index].candidates(pattern[1], binding):
            taken = choose(pattern, occurrence, binding, chosen, key)
            if taken is not None:
                extend(pool, index + 1, *taken)

    for pool in pools:
        extend(pool, 0, {}, {})
    return frozenset(found)


# Filter and σ ---------------------------------------------------------------------------


def _holds(
    expression: str | None, mu: Mu, t_alpha: int, t_omega: int, matcher: GraphMatcher
) -> bool:
    """``μ(σ_{tα tω}(F)) = true`` (an absent ``F`` is true; an error is false)."""
    if expression is None:
        return True
    return matcher.holds(sigma(expression, t_alpha, t_omega), mu)


def _extend(mu: Mu, expressions: Iterable[tuple[str, str]], matcher: GraphMatcher) -> Mu:
    """``Extend``: ``μ`` with each ``(v, e)`` bound to the value of ``e`` under it, in
    order; left unbound when ``e`` raises an error (SPARQL 1.1 sec. 18.5)."""
    for name, expression in expressions:
        value = matcher.value(expression, mu)
        if value is not None and name not in mu:
            mu = mu.join({name: value})
    return mu


def filter_solutions(expression: str, psi: Solutions, matcher: GraphMatcher) -> Solutions:
    """``Filter(F, Ψ)`` (Sect. 4.2): the ``⟨μ, tα, tω⟩ ∈ Ψ`` for which ``μ(σ_{tα tω}(F))``
    evaluates to true."""
    return frozenset(m for m in psi if _holds(expression, m.mu, m.t1, m.t2, matcher))


# Joins ----------------------------------------------------------------------------------


def _combine(a: EventMapping, b: EventMapping) -> EventMapping:
    """``⟨μ, tα, tω⟩ ⋈ ⟨μ', t'α, t'ω⟩ = ⟨μ ∪ μ', min(tα, t'α), max(tω, t'ω)⟩`` of two
    compatible solutions (Sect. 4.2)."""
    return EventMapping(a.mu.join(b.mu), min(a.t1, b.t1), max(a.t2, b.t2))


def _pairs(psi: Solutions, psi2: Solutions) -> Iterator[tuple[EventMapping, EventMapping]]:
    return compatible_pairs(_ordered(psi), _ordered(psi2))


def join(psi: Solutions, psi2: Solutions) -> Solutions:
    """``Join(Ψ, Ψ')`` (Sect. 4.2): ``m ⋈ m'`` for every compatible ``m ∈ Ψ``, ``m' ∈ Ψ'``."""
    return frozenset(_combine(a, b) for a, b in _pairs(psi, psi2))


def union(psi: Solutions, psi2: Solutions) -> Solutions:
    """``Union(Ψ, Ψ') = Ψ ∪ Ψ'`` (Sect. 4.2)."""
    return psi | psi2


def seq_join(psi: Solutions, psi2: Solutions) -> Solutions:
    """``SeqJoin(Ψ, Ψ')`` (Sect. 4.2, SEQ): ``m ⋈ m'`` for the compatible pairs with
    ``tω < t'α``: ``m'`` starts strictly after ``m`` ends."""
    return frozenset(_combine(a, b) for a, b in _pairs(psi, psi2) if a.t2 < b.t1)


def eq_join(psi: Solutions, psi2: Solutions) -> Solutions:
    """``EqJoin(Ψ, Ψ')`` (Sect. 4.2, EQUALS): ``m ⋈ m'`` for the compatible pairs with
    ``tα = t'α`` and ``tω = t'ω`` (exactly simultaneous)."""
    return frozenset(_combine(a, b) for a, b in _pairs(psi, psi2) if a.t1 == b.t1 and a.t2 == b.t2)


def left_join(
    psi: Solutions, psi2: Solutions, expression: str | None, matcher: GraphMatcher
) -> Solutions:
    """``LeftJoin(Ψ, Ψ', F)`` (Sect. 4.2, OPTIONAL), as printed: ``m ⋈ m'`` for every
    compatible pair with ``(μ ⋈ μ')(σ_{tα tω}(F))`` true and ``t'ω < tω``, and every
    ``m ∈ Ψ`` with no such ``m'``. ``σ`` takes ``m``'s interval.

    The strict ``t'ω < tω`` is the paper's; it makes LeftJoin differ from SPARQL's OPTIONAL
    when both sides occur at one instant (docs/semantics.md, EP-SPARQL discrepancies)."""

    def matches(a: EventMapping, b: EventMapping) -> bool:
        return b.t2 < a.t2 and _holds(expression, a.mu.join(b.mu), a.t1, a.t2, matcher)

    out = {_combine(a, b) for a, b in _pairs(psi, psi2) if matches(a, b)}
    for a in psi:
        if not any(a.mu.compatible(b.mu) and matches(a, b) for b in psi2):
            out.add(a)
    return frozenset(out)


def seq_right_join(
    optional: Solutions, psi: Solutions, expression: str | None, matcher: GraphMatcher
) -> Solutions:
    """``SeqRightJoin(Ψ', Ψ, F)`` (Sect. 4.2, ``P' OPTIONALSEQ P``): ``Filter(F, SeqJoin(Ψ',
    Ψ))``, and every ``⟨μ, tα, tω⟩ ∈ Ψ`` with no compatible ``⟨μ', t'α, t'ω⟩ ∈ Ψ'`` such
    that ``(μ ⋈ μ')(σ_{tα tω}(F))`` is true and ``tα > t'ω``. ``Ψ'`` (the optional, earlier
    pattern) is the left operand."""
    joined = seq_join(optional, psi)
    out = set(joined if expression is None else filter_solutions(expression, joined, matcher))
    for m in psi:
        if not any(
            m.mu.compatible(o.mu)
            and m.t1 > o.t2
            and _holds(expression, m.mu.join(o.mu), m.t1, m.t2, matcher)
            for o in optional
        ):
            out.add(m)
    return frozenset(out)


def eq_left_join(
    psi: Solutions, optional: Solutions, expression: str | None, matcher: GraphMatcher
) -> Solutions:
    """``EqLeftJoin(Ψ, Ψ', F)`` (Sect. 4.2, ``P EQUALSOPTIONAL P'``): ``Filter(F, EqJoin(Ψ,
    Ψ'))``, and every ``⟨μ, tα, tω⟩ ∈ Ψ`` with no compatible ``⟨μ', t'α, t'ω⟩ ∈ Ψ'`` such
    that ``(μ ⋈ μ')(σ_{tα tω}(F))`` is true, ``tα = t'α`` and ``tω = t'ω``."""
    joined = eq_join(psi, optional)
    out = set(joined if expression is None else filter_solutions(expression, joined, matcher))
    for m in psi:
        if not any(
            m.mu.compatible(o.mu)
            and (m.t1, m.t2) == (o.t1, o.t2)
            and _holds(expression, m.mu.join(o.mu), m.t1, m.t2, matcher)
            for o in optional
        ):
            out.add(m)
    return frozenset(out)


def within(psi: Solutions, duration: int) -> Solutions:
    """ETALIS's ``WITHIN d`` (EP-SPARQL tests, ep_sparql_12; not an operator of Sect. 4.2):
    the solutions that last at most ``d`` ms, ``tω - tα ≤ d``, as the FILTER
    ``getDURATION() <= d`` would keep them."""
    return frozenset(m for m in psi if m.t2 - m.t1 <= duration)


def sub_select(
    psi: Solutions,
    projection: Sequence[str],
    expressions: Iterable[tuple[str, str]],
    matcher: GraphMatcher,
) -> Solutions:
    """``Project(Extend(Ψ, v, e)…, V)`` (SPARQL 1.1 sec. 18.2.1, 18.2.4.1, 18.2.5.2), the
    sub-select of query (5) (Sect. 4.1; Sect. 4.2 defines no function for it): each
    ``⟨μ, tα, tω⟩ ∈ Ψ`` extended by ``expressions`` in order (``σ`` is not applied: the
    time functions are filter functions, Sect. 4.1), restricted to ``projection``, over
    the same interval. A set, as every function of Sect. 4.2 gives: two solutions that
    differ only outside ``V`` over one interval are one."""
    kept = tuple(expressions)
    return frozenset(
        EventMapping(_extend(m.mu, kept, matcher).project(projection), m.t1, m.t2) for m in psi
    )


def _ordered(psi: Collection[EventMapping]) -> list[EventMapping]:
    """``psi`` in a fixed order: by interval, then by the mapping's text."""
    return sorted(psi, key=lambda m: (m.t1, m.t2, sorted(m.mu.text().items())))


# CONSTRUCT rules and the Q-closure --------------------------------------------------------


def closure(
    stream: frozenset[Occurrence],
    rules: Sequence[Rule],
    solve: Callable[[EventPattern, frozenset[Occurrence]], Solutions],
    limit: int = 1_000_000,
) -> frozenset[Occurrence]:
    """``clos_Q(S)`` (Sect. 4.2): ``S`` with the occurrences ``⟨τ, t, t'⟩`` for which a
    solution ``⟨μ, t, t'⟩`` of a rule's WHERE part over the closure binds every variable
    of ``P_q`` (1) and ``τ ∈ μ(P_q)`` (2), added until nothing new follows. ``solve``
    evaluates a WHERE part over a stream; more than ``limit`` occurrences is an error
    (a rule that derives without end).

    The iteration reaches the smallest such set when the rules are monotone in the
    stream; a rule whose OPTIONALSEQ, EQUALSOPTIONAL or ``!BOUND`` reads derived
    triples may have no smallest one, and gets the inflationary fixpoint."""
    templates = [
        TriplePatterns.parse("{ " + r.template + " }", "a CONSTRUCT template") for r in rules
    ]
    current = set(stream)
    derived: dict[tuple[int, EventMapping], list[Occurrence]] = {}  # each solution once
    while True:
        new: set[Occurrence] = set()
        frozen = frozenset(current)
        for index, (rule, template) in enumerate(zip(rules, templates, strict=True)):
            for m in solve(rule.pattern, frozen):
                key = (index, m)
                if key not in derived:
                    derived[key] = _derive(index, template, m)
                new.update(derived[key])
        new -= current
        if not new:
            return frozen
        current |= new
        if len(current) > limit:
            raise UserError(
                f"the Q-closure of the stream holds more than max_window_events = {limit} "
                "triple occurrences: a CONSTRUCT rule derives without end"
            )


def _derive(index: int, template: TriplePatterns, m: EventMapping) -> list[Occurrence]:
    """``Ψ_q(P_q)`` for one solution: ``μ(P_q)`` over the solution's interval, if ``μ``
    binds every variable of ``P_q`` (a sub-select around the WHERE part has computed its
    ``(e AS ?v)`` into ``μ``). A blank node of ``P_q`` is one fresh blank node per rule and
    solution, the same in every round (so the iteration ends)."""
    return [
        Occurrence(triple, m.t1, m.t2)
        for triple in derived_triples(index, template, m.mu, m.t1, m.t2)
    ]


# The evaluator ----------------------------------------------------------------------------


class _Memo(GraphMatcher):
    """``matcher`` with each expression's value under each mapping remembered: an
    evaluation tests one FILTER on the same solution in every round of a Q-closure."""

    def __init__(self, matcher: GraphMatcher) -> None:
        super().__init__(matcher.forms)
        self._inner = matcher
        self._holds: dict[tuple[str, Mu], bool] = {}
        self._values: dict[tuple[str, Mu], Term | None] = {}

    def holds(self, expression: str, mu: Mapping[str, Term]) -> bool:
        key = (expression, mu if isinstance(mu, Mu) else Mu(mu))
        if key not in self._holds:
            self._holds[key] = self._inner.holds(expression, mu)
        return self._holds[key]

    def value(self, expression: str, mu: Mapping[str, Term]) -> Term | None:
        key = (expression, mu if isinstance(mu, Mu) else Mu(mu))
        if key not in self._values:
            self._values[key] = self._inner.value(expression, mu)
        return self._values[key]


def _root(plan: Plan) -> EventPattern:
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    if not isinstance(root, EventPattern):
        raise UserError(f"the plan's r2r is {type(root).__name__}, not an EP-SPARQL pattern")
    return root


@dataclass
class _Solver:
    """Evaluates EP-SPARQL plan nodes over streams of occurrences, one function of
    Sect. 4.2 per node, bounding every intermediate set by ``limit`` (``max_runs``)."""

    matcher: GraphMatcher
    limit: int
    named: Mapping[str, frozenset[Occurrence]] = field(default_factory=dict)
    _patterns: dict[str, TriplePatterns] = field(default_factory=dict)
    _bgps: dict[tuple[str, str | None], tuple[frozenset[Occurrence], Solutions]] = field(
        default_factory=dict
    )
    _kept: dict[tuple[str, EventMapping], bool] = field(default_factory=dict)
    _extended: dict[tuple[StreamBgp, EventMapping], EventMapping] = field(default_factory=dict)

    def solve(self, node: EventPattern, stream: frozenset[Occurrence]) -> Solutions:
        """The solutions of ``node`` over ``stream`` (a StreamBgp naming a stream reads
        that stream's occurrences from ``named`` instead)."""
        found = self._solve(node, stream)
        if len(found) > self.limit:
            raise UserError(
                f"{type(node).__name__} has {len(found)} solutions, more than max_runs = "
                f"{self.limit} (EP-SPARQL keeps every combination of occurrences)"
            )
        return found

    def _solve(self, node: EventPattern, stream: frozenset[Occurrence]) -> Solutions:
        matcher = self.matcher
        if isinstance(node, StreamBgp):
            return self._bgp(node, stream)
        if isinstance(node, EventFilter):
            return frozenset(
                m for m in self.solve(node.pattern, stream) if self._keeps(node.expression, m)
            )
        if isinstance(node, Within):
            return within(self.solve(node.pattern, stream), node.duration)
        if isinstance(node, SubSelect):
            found = self.solve(node.pattern, stream)
            return sub_select(found, node.projection, node.expressions, matcher)
        if isinstance(node, And | Or | SeqJoin | EqJoin | OptionalSeq | EqualsOptional):
            left, right = self.solve(node.left, stream), self.solve(node.right, stream)
            if isinstance(node, And):
                return join(left, right)
            if isinstance(node, Or):
                return union(left, right)
            if isinstance(node, SeqJoin):
                return seq_join(left, right)
            if isinstance(node, EqJoin):
                return eq_join(left, right)
            if isinstance(node, OptionalSeq):
                return seq_right_join(left, right, node.filter, matcher)
            return eq_left_join(left, right, node.filter, matcher)
        raise UserError(f"{type(node).__name__} is not an operator of EP-SPARQL (Sect. 4.2)")

    def _bgp(self, node: StreamBgp, stream: frozenset[Occurrence]) -> Solutions:
        text = node.pattern.text
        patterns = self._patterns.get(text)
        if patterns is None:
            patterns = self._patterns[text] = TriplePatterns.parse(text, "the stream pattern")
        if node.stream is not None:
            if node.stream not in self.named:
                raise UserError(f"the stream pattern reads <{node.stream}>, which is not given")
            stream = self.named[node.stream]
        key = (text, node.stream)
        known = self._bgps.get(key)
        if known is not None and known[0] <= stream:  # a later round of a Q-closure
            fresh = stream - known[0]
            found = known[1] | bgp(patterns, stream, self.matcher, fresh) if fresh else known[1]
        else:
            found = bgp(patterns, stream, self.matcher)
        self._bgps[key] = (stream, found)
        if not node.binds:
            return found
        return frozenset(self._extend(node, m) for m in found)

    def _keeps(self, expression: str, m: EventMapping) -> bool:
        """``Filter``'s test, once per solution (a Q-closure meets it every round)."""
        key = (expression, m)
        if key not in self._kept:
            self._kept[key] = _holds(expression, m.mu, m.t1, m.t2, self.matcher)
        return self._kept[key]

    def _extend(self, node: StreamBgp, m: EventMapping) -> EventMapping:
        """A solution of the BGP extended by the node's BINDs, once per solution."""
        key = (node, m)
        if key not in self._extended:
            mu = _extend(m.mu, node.binds or (), self.matcher)
            self._extended[key] = EventMapping(mu, m.t1, m.t2)
        return self._extended[key]


class EpsparqlEvaluation:
    """An EP-SPARQL plan bound to its streams (an
    :class:`~rsep.semantics.event_mapping.EventEvaluation`).

    The stream ``S`` holds the occurrences of every event of every given stream (a
    StreamBgp naming a stream reads that one only). A CONSTRUCT plan whose output is fed
    back (``plan.output.feedback``) is a rule of ``Q``, and so is each of the plan's
    ``rules`` (:attr:`~rsep.algebra.plan.Plan.closure_rules`): the pattern is evaluated
    over ``clos_Q(S)`` (Sect. 4.2). EP-SPARQL has no windows: the
    answer at ``t`` covers all occurrences that end by ``t``."""

    def __init__(
        self,
        plan: Plan,
        dataset: StreamingDataset,
        matcher: GraphMatcher,
    ) -> None:
        self.plan = plan
        self.pattern = _root(plan)
        self.rules: tuple[Rule, ...] = plan.closure_rules
        self.matcher = matcher
        self._events: dict[str, tuple[Event, ...]] = {
            iri: tuple(stream.events) for iri, stream in dataset.streams.items()
        }
        params = plan.parameters
        self._limit = params.max_runs
        self._max_occurrences = params.max_window_events

    def instants(self) -> list[int]:
        """The distinct ends of the stream's events: an answer is detected when its last
        occurrence ends (Sect. 4.2, timewise monotonicity)."""
        return sorted({e.t_end for events in self._events.values() for e in events})

    def stream(self, t: int) -> frozenset[Occurrence]:
        """``S`` up to ``t``: the occurrences of the events that end by ``t``."""
        return occurrences(e for e in chain.from_iterable(self._events.values()) if e.t_end <= t)

    def closed_stream(self, t: int) -> frozenset[Occurrence]:
        """``clos_Q(S)`` up to ``t`` (``S`` itself without rules)."""
        return self._closed(self._solver(t), t)

    def at(self, t: int, previous: int | None = None) -> list[EventMapping]:
        """The solutions of the pattern over ``clos_Q(S)`` up to ``t``, ordered by interval.
        ``previous`` is not read: EP-SPARQL has no windows and consumes nothing."""
        solver = self._solver(t)
        return _ordered(solver.solve(self.pattern, self._closed(solver, t)))

    def _closed(self, solver: _Solver, t: int) -> frozenset[Occurrence]:
        base = self.stream(t)
        if not self.rules:
            return base
        return closure(base, self.rules, solver.solve, self._max_occurrences)

    def _solver(self, t: int) -> _Solver:
        named = {
            iri: occurrences(e for e in events if e.t_end <= t)
            for iri, events in self._events.items()
        }
        return _Solver(_Memo(self.matcher), self._limit, named)
