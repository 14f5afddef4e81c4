"""How a plan's events are spread over the engine's partitions, and what is done to the
answers the partitions give back (plain Python: it runs in Spark tasks and in tests).

Three questions, answered from the plan once on the driver (:func:`choose_scheme`,
:func:`vocabulary`) and per event inside Spark tasks (:class:`Router`):

1. **Which events can matter** (:class:`Vocabulary`). A GPM ``(u, P)`` (SPAseq Def. 7)
   matches an event only if the event's graph holds a triple for each triple pattern of
   ``P``'s required part (its top-level triples block) whose predicate is an IRI: the
   pattern's *atoms*, ``(p, o)`` with ``o`` an IRI or any object. An event of stream ``u``
   that lacks an atom of every GPM on ``u`` can be taken by no step, negated or not, so
   the engine need not see it. Where instants matter (strict contiguity ends a run at the
   streamset's next instant, SPAseq Def. 12; ASK and RStream answer at every instant) the
   event is replaced by an empty one at its time instead of dropped.
2. **How events are partitioned** (:class:`Scheme`). With ``PARTITION BY`` (docs/
   semantics.md, SPAseq choice 9) the sequence is evaluated per key value ``c`` over
   ``Σ_c``, the events of key ``c`` and those without a key; so an event goes to the
   partition that owns each of its keys, an event without a key to every partition. A
   partition's evaluator also sees keys it does not own (an event with two keys), so it
   runs the plan as ``SELECT *`` and keeps only answers of its own keys; the user's
   projection and IStream are applied after (:class:`PartitionOutput`), and the driver
   keeps each projected answer once, at its earliest time. Keys found only through a
   match of the sequence without partitioning (choice 9's second source) would escape
   this routing, so the scheme is used only when every first step binds the key variables
   in its required part (then every match's key is a key of its first event); otherwise,
   and for every plan without ``PARTITION BY``, one partition evaluates everything.
   The keys are found per GPM (:func:`routing`): by joins over the columnar rows in Spark
   SQL when that is exact (:class:`KeyJoin`: a basic graph pattern of IRIs and variables,
   whose solutions on an event alone are the join of its triple patterns over the event's
   rows), not at all for a GPM with no solution alone (a FILTER naming a variable its
   pattern does not bind: an error, SPARQL 1.1 sec. 17.2), and by pyoxigraph event by
   event (:class:`Router`) for the others (literals, paths, OPTIONAL, value comparisons).
3. **Which partition owns a key**: a CRC-32 of the key's terms in N-Triples form, the same
   in every process (Python's ``hash`` of a string is not).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from pyoxigraph import Triple

from rsep.algebra.events import Conjunction, Disjunction, EventPattern, Gpm, Strategy
from rsep.algebra.gpm import (
    TriplePattern,
    basic_pattern,
    event_part,
    group_of,
    no_key_alone,
    pattern_variables,
)
from rsep.algebra.nfa import Nfa, StateKind, TransitionKind, When
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, Construct, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result, SelectResult
from rsep.rdf.sparql import GraphMatcher, Mu

if TYPE_CHECKING:
    from rsep.lang import ast

__all__ = [
    "Atom",
    "KeyJoin",
    "PartitionOutput",
    "Router",
    "Routing",
    "Scheme",
    "Vocabulary",
    "choose_scheme",
    "key_join",
    "owner",
    "prematches",
    "required_part",
    "routing",
    "skeleton_join",
    "vocabulary",
]

Key = tuple[str, ...]
"""A key value: the terms of the key variables, in ``PARTITION BY`` order, as N-Triples."""


@dataclass(frozen=True)
class Atom:
    """A triple an event must hold for a GPM to match it: predicate ``p`` and, when the
    pattern names one, object ``o`` (IRIs in N-Triples form, ``<…>``)."""

    p: str
    o: str | None = None


# What a graph pattern needs ---------------------------------------------------------------


@cache
def required_part(text: str) -> tuple[frozenset[Atom], frozenset[str]]:
    """The atoms and the always-bound variables of a SPARQL group pattern ``{ … }``: those
    of the triple patterns of its top-level triples blocks (and nested plain groups), whose
    every solution needs a matching triple. OPTIONAL, UNION, MINUS, paths, blank-node
    property lists and literals add nothing (conservative: fewer atoms keep more events;
    literals are left out because pyoxigraph compares some by value, not by term)."""
    from rsep.lang import ast

    atoms: set[Atom] = set()
    variables: set[str] = set()

    def group(node: object) -> None:
        elements = getattr(node, "elements", None)
        if elements is None:  # a sub-select or another wrapper: nothing required known
            return
        for element in elements:
            if isinstance(element, ast.TriplesBlock):
                for triples in element.triples:
                    subject = triples.subject
                    for prop in triples.properties:
                        simple = isinstance(prop.verb, ast.Iri | ast.Var)
                        if simple and isinstance(subject, ast.Var):
                            variables.add(subject.name)
                        if isinstance(prop.verb, ast.Var):
                            variables.add(prop.verb.name)
                        for obj in prop.objects:
                            if simple and isinstance(obj, ast.Var):
                                variables.add(obj.name)
                            if isinstance(prop.verb, ast.Iri):
                                o = f"<{obj.value}>" if isinstance(obj, ast.Iri) else None
                                atoms.add(Atom(f"<{prop.verb.value}>", o))
            elif isinstance(element, ast.GroupPattern):
                group(element)

    group(group_of(text))
    return frozenset(atoms), frozenset(variables)


def _gpm_variables(gpm: Gpm) -> frozenset[str]:
    """The variables every solution of a GPM binds (its event part and its ``Graph (v,
    P_D)`` part, SPAseq Def. 15)."""
    found = required_part(gpm.pattern.text)[1]
    if gpm.graph_kb is not None:
        found |= required_part(gpm.graph_kb.pattern.text)[1]
    return found


def _gpms(plan: Plan) -> tuple[Gpm, ...]:
    """Every GPM of the plan, positive or negated, once, in order."""
    return tuple(dict.fromkeys(n for n in plan.r2r.walk() if isinstance(n, Gpm)))


# The prefilter ------------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """What an event needs to reach the engine (module docstring, 1).

    ``patterns`` are the GPMs' atoms by stream (one entry per GPM); events of
    ``open_streams`` (a GPM there needs no atom) always pass; ``streams`` are the plan's
    streams (``None``: every stream is read); with ``markers``, an event that does not pass
    leaves an empty event at its time."""

    patterns: tuple[tuple[str, int, frozenset[Atom]], ...]
    open_streams: frozenset[str]
    streams: frozenset[str] | None
    markers: bool

    def passes(self, event: Event) -> bool:
        """Whether ``event`` may match a GPM (the Python form of the Spark SQL filter)."""
        if self.streams is not None and event.stream not in self.streams:
            return False
        if event.stream in self.open_streams:
            return True
        held = {str(t.predicate) for t in event.graph}
        pairs = {(str(t.predicate), str(t.object)) for t in event.graph}
        return any(
            stream == event.stream
            and all((a.p, a.o) in pairs if a.o is not None else a.p in held for a in atoms)
            for stream, _, atoms in self.patterns
        )


def vocabulary(plan: Plan) -> Vocabulary | None:
    """The prefilter of a SPAseq plan; ``None`` for other plans (a window's content is a
    set of events whose every triple may join, and whose number drives report policies:
    nothing can be left out event by event)."""
    plan = apply_profile(plan)
    if not plan.sequences():
        return None
    patterns: list[tuple[str, int, frozenset[Atom]]] = []
    open_streams: set[str] = set()
    for index, gpm in enumerate(_gpms(plan)):
        atoms = required_part(gpm.pattern.text)[0]
        if atoms:
            patterns.append((gpm.stream, index, atoms))
        else:
            open_streams.add(gpm.stream)
    streams = frozenset(plan.dataset.streams) or None
    return Vocabulary(tuple(patterns), frozenset(open_streams), streams, _instants_matter(plan))


def _instants_matter(plan: Plan) -> bool:
    """Whether an instant with no matching event still changes the answer: a strict
    contiguity edge (a run waiting there dies at the streamset's next instant, SPAseq Def.
    12), or an output at every evaluation instant (ASK, RStream, CONSTRUCT with empty
    answers reported)."""
    if isinstance(plan.form, Ask) or plan.r2s is R2S.RSTREAM:
        return True
    if isinstance(plan.form, Construct) and plan.parameters.output_empty:
        return True
    for nfa in plan.nfas():
        for state in nfa.states:
            if state.kind in (StateKind.START, StateKind.FINAL, StateKind.STOP):
                continue  # a run in x0 took nothing yet: it waits on every event
            edges = nfa.outgoing(state.name)
            if any(e.kind is TransitionKind.TAKE for e in edges) and not any(
                e.kind is TransitionKind.IGNORE for e in edges
            ):
                return True
    return _strict(plan)


def _strict(plan: Plan) -> bool:
    """Whether a strategy of the plan is strict contiguity (belt and braces beside the
    automaton's edges: a Kleene+ step first iterates strictly)."""
    return any(
        getattr(node, "strategy", None) is Strategy.STRICT
        or Strategy.STRICT in getattr(node, "strategies", ())
        for node in plan.r2r.walk()
    )


# The partitioning scheme ---------------------------------------------------------------


@dataclass(frozen=True)
class Scheme:
    """How a plan runs over partitions: ``plan`` is what each partition's evaluator runs
    (the user's plan, or it as ``SELECT *`` when partitioned), ``final`` the user's plan
    (profile applied), ``by`` the key variables (empty: one partition), ``partitions``
    their number, ``within`` the sequence's WITHIN (bounds how late a match is known), and
    ``reason`` why this scheme (for notes and ``explain``)."""

    plan: Plan
    final: Plan
    by: tuple[str, ...]
    partitions: int
    within: int | None
    reason: str

    @property
    def partitioned(self) -> bool:
        """Whether events are spread over several partitions by key."""
        return bool(self.by)


def choose_scheme(plan: Plan, partitions: int, *, keys_projected: bool = False) -> Scheme:
    """Partition by the plan's ``PARTITION BY`` keys when that gives the oracle's answers
    exactly (module docstring, 2), else one partition. ``keys_projected``: partition only
    if the SELECT keeps every key variable, so that no two partitions can give one answer
    (live queries, which cannot keep each answer once across partitions and batches)."""
    plan = apply_profile(plan)
    single = Scheme(plan, plan, (), 1, None, "")
    if not plan.sequences():
        return replace(single, reason="not a SPAseq sequence: one partition")
    nfas = plan.nfas()
    if len(nfas) != 1 or not nfas[0].partition_by:
        return replace(single, reason="no PARTITION BY: one partition")
    nfa = nfas[0]
    form = plan.form
    if not isinstance(form, Select) or plan.r2s is not R2S.ISTREAM:
        return replace(single, reason="PARTITION BY with ASK, CONSTRUCT or RStream: one partition")
    by = nfa.partition_by
    if keys_projected and form.variables and not set(by) <= set(form.variables):
        return replace(single, reason="PARTITION BY keys not projected: one partition (live)")
    first = _initial_patterns(nfa)
    if not first or not all(_binds(pattern, by) for pattern in first):
        return replace(
            single,
            reason="PARTITION BY keys not bound by every first step's required part: one partition",
        )
    star = replace(plan, form=Select())
    return Scheme(
        star, plan, by, max(1, partitions), nfa.within, f"PARTITION BY {by}: {partitions}"
    )


def _initial_patterns(nfa: Nfa) -> list[EventPattern]:
    """The patterns a run that took no event waits for: the ``TAKE`` edges of ``x0`` and
    of the states its ``PROCEED`` edges reach (an optional first step read as absent)."""
    stop = {s.name for s in nfa.states if s.kind is StateKind.STOP}
    seen = [nfa.start.name]
    todo = list(seen)
    while todo:
        for edge in nfa.outgoing(todo.pop()):
            proceed = edge.kind is TransitionKind.PROCEED and edge.guard.when is When.ALWAYS
            if proceed and edge.target not in seen:
                seen.append(edge.target)
                todo.append(edge.target)
    found: list[EventPattern] = []
    for name in seen:
        for edge in nfa.outgoing(name):
            pattern = edge.guard.pattern
            take = edge.kind is TransitionKind.TAKE and edge.target not in stop
            if take and pattern is not None and pattern not in found:
                found.append(pattern)
    return found


def _binds(pattern: EventPattern, by: tuple[str, ...]) -> bool:
    """Whether every pair of ``pattern`` taken alone binds all of ``by`` on one event."""
    if isinstance(pattern, Gpm):
        return set(by) <= _gpm_variables(pattern)
    if isinstance(pattern, Disjunction):
        return all(_binds(operand, by) for operand in pattern.operands)
    if isinstance(pattern, Conjunction):
        return any(_binds(operand, by) for operand in pattern.operands)
    return False


def owner(key: Key, partitions: int) -> int:
    """The partition that owns ``key`` (module docstring, 3)."""
    return zlib.crc32("\x00".join(key).encode()) % partitions


# Routing events -------------------------------------------------------------------------


@dataclass
class Router:
    """The keys of events and the partitions they go to (module docstring, 2): an event's
    keys are the key variables in the solutions of each GPM of its stream on it, alone
    (SPAseq choice 9; ``rsep.engine.nfa_runtime`` computes them the same way)."""

    scheme: Scheme
    graphs: Mapping[str, Any]
    gpms: tuple[Gpm, ...] | None = None
    """The GPMs evaluated (``None``: every GPM of the plan; :func:`routing` leaves the
    others to joins)."""
    _matcher: GraphMatcher | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "graphs": self.graphs, "gpms": self.gpms, "_matcher": None}

    @property
    def matcher(self) -> GraphMatcher:
        """The pyoxigraph matcher, made in the process that uses it."""
        if self._matcher is None:
            self._matcher = GraphMatcher()
        return self._matcher

    def keys(self, event: Event) -> frozenset[Key]:
        """The key values of ``event`` (empty: no key)."""
        by = self.scheme.by
        found: set[Key] = set()
        for gpm in _gpms(self.scheme.plan) if self.gpms is None else self.gpms:
            if gpm.stream != event.stream:
                continue
            for mu in self._solutions(gpm, event):
                if all(name in mu for name in by):
                    found.add(tuple(str(mu[name]) for name in by))
        return frozenset(found)

    def parts(self, event: Event) -> list[int]:
        """The partitions ``event`` goes to: the owners of its keys, or all."""
        if not self.scheme.partitioned:
            return [0]
        keys = self.keys(event)
        if not keys:
            return list(range(self.scheme.partitions))
        return sorted({owner(key, self.scheme.partitions) for key in keys})

    def _solutions(self, gpm: Gpm, event: Event) -> list[Mu]:
        """``⟦P⟧_G`` on the event alone, joined with ``⟦P_D⟧`` on the knowledge base
        (SPAseq Def. 7, 15)."""
        found = self.matcher.match(gpm.pattern, event.graph)
        if gpm.graph_kb is None or not found:
            return found
        kb = self.graphs.get(gpm.graph_kb.graph)
        if kb is None:
            raise UserError(
                f"GPM {gpm.name} reads the knowledge base graph <{gpm.graph_kb.graph}>, which "
                "the dataset does not hold (SPAseq Definition 15: Γ(v) must name a graph of D)"
            )
        return [
            nu
            for partial in found
            for nu in self.matcher.match(gpm.graph_kb.pattern, _triples(kb), partial)
        ]


def _triples(graph: Any) -> frozenset[Triple]:
    return graph if isinstance(graph, frozenset) else frozenset(graph)


# Keys found by joins --------------------------------------------------------------------


@dataclass(frozen=True)
class KeyJoin:
    """A GPM whose keys Spark SQL finds exactly, as joins over the columnar rows (module
    docstring, 2): the solutions on each event of stream ``stream`` of the basic graph
    pattern ``event`` (one triple per pattern, joined on the event and on shared
    variables), joined with those of ``kb`` on the knowledge base graph ``graph``, projected
    on ``by``."""

    gpm: str
    stream: str
    event: tuple[TriplePattern, ...]
    by: tuple[str, ...]
    graph: str | None = None
    kb: tuple[TriplePattern, ...] = ()

    @property
    def needed(self) -> frozenset[str]:
        """The variables a join reads beyond existence: the key variables and those that
        occur in two triple patterns (every other one only asks that a triple exists)."""
        seen: dict[str, int] = {}
        for pattern in (*self.event, *self.kb):
            for name in dict.fromkeys(x for x in pattern if x.startswith("?")):
                seen[name] = seen.get(name, 0) + 1
        return frozenset({"?" + n for n in self.by} | {n for n, k in seen.items() if k > 1})

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the GPM's variables, in order of first occurrence (blank nodes, the
        variables ``?_:…``, are not among them): the terms of a solution row
        (:func:`rsep.spark.replay.solution_rows`), as ``GroupMatcher.match`` binds them."""
        names = (x[1:] for pattern in (*self.event, *self.kb) for x in pattern if x[0] == "?")
        return tuple(dict.fromkeys(n for n in names if not n.startswith("_:")))

    @property
    def center(self) -> str | None:
        """The variable every triple pattern has as subject when the GPM is a star on it:
        IRIs as predicates, and as objects IRIs or variables that occur nowhere else (then
        its solutions on an event are, per subject, the product of each pattern's objects,
        found by one grouping of the rows, with no join); ``None`` otherwise, and for a GPM
        with a knowledge base part."""
        subjects = {s for s, _, _ in self.event}
        if self.kb or len(subjects) != 1:
            return None
        (center,) = subjects
        seen: dict[str, int] = {}
        for pattern in self.event:
            for x in pattern:
                seen[x] = seen.get(x, 0) + 1
        for _, p, o in self.event:
            if p.startswith("?") or (o.startswith("?") and (o == center or seen[o] > 1)):
                return None
        return center if center.startswith("?") else None

    @property
    def star(self) -> bool:
        """Whether the event part is a star (:attr:`center`) on the one key variable (then
        an event's keys are the subjects holding a triple for every pattern)."""
        return len(self.by) == 1 and self.center == "?" + self.by[0]


@dataclass(frozen=True)
class Routing:
    """How each GPM of a partitioned plan gives the keys of events (module docstring, 2):
    ``joins`` in Spark SQL, ``python`` by :class:`Router` (pyoxigraph, event by event);
    the others give no key on an event alone. ``reasons`` says why, by GPM name."""

    joins: tuple[KeyJoin, ...]
    python: tuple[Gpm, ...]
    reasons: Mapping[str, str]


def routing(scheme: Scheme, graphs: Mapping[str, Any]) -> Routing:
    """Split the GPMs of ``scheme`` into those whose keys joins find exactly and those left
    to :class:`Router` (:func:`key_join` says which)."""
    joins: list[KeyJoin] = []
    python: list[Gpm] = []
    reasons: dict[str, str] = {}
    if not scheme.partitioned:
        return Routing((), (), {})
    for gpm in _gpms(scheme.plan):
        found = key_join(gpm, scheme.by, graphs)
        if isinstance(found, KeyJoin):
            joins.append(found)
            reasons[gpm.name] = "joins"
        elif found.startswith(_NO_KEY):
            reasons[gpm.name] = found
        else:
            python.append(gpm)
            reasons[gpm.name] = found
    return Routing(tuple(joins), tuple(python), reasons)


_NO_KEY = "no key alone"


def prematches(plan: Plan, graphs: Mapping[str, Any]) -> tuple[KeyJoin, ...]:
    """The GPMs of ``plan`` whose solutions on each event joins compute exactly, whatever
    the bindings a run brings (:func:`key_join` with no key: a basic graph pattern without
    FILTER, whose solutions under ``μ`` are those compatible with ``μ``, SPARQL 1.1 sec.
    18.3), so that the engine need not match them (``rsep.engine.nfa_runtime.
    PrematchedEvent``). Left out: GPMs with no triple pattern, and GPMs whose name another
    GPM of the plan shares (the engine finds solutions by name)."""
    plan = apply_profile(plan)
    if not plan.sequences():
        return ()
    found = _gpms(plan)
    names = [gpm.name for gpm in found]
    out: list[KeyJoin] = []
    for gpm in found:
        join = key_join(gpm, (), graphs)
        if isinstance(join, KeyJoin) and join.event and names.count(gpm.name) == 1:
            out.append(join)
    return tuple(out)


def key_join(gpm: Gpm, by: tuple[str, ...], graphs: Mapping[str, Any]) -> KeyJoin | str:
    """The :class:`KeyJoin` of ``gpm``, or why there is none: a reason starting with
    ``"no key alone"`` when the GPM gives no key on an event alone, any other for a GPM
    left to pyoxigraph. The joins are exact when (SPARQL 1.1 sec. 18.2, 17.2):

    - the pattern is a basic graph pattern and FILTERs in one group, its terms variables,
      blank nodes and IRIs (a literal is matched by value in pyoxigraph: ``LiteralForms``);
    - no variable that only objects bind occurs twice (it may bind literals, which
      pyoxigraph joins by value: ``"01"^^xsd:integer`` meets ``"1"^^xsd:integer``);
    - it has no FILTER, or one that is never true on the event alone: an unbound variable
      is an error, and so is every comparison, arithmetic or unary operator over one
      (then the GPM has no solution alone, and gives no key: V-shape's ``FILTER (?p2 <
      ?p1 * 0.998)``);
    - its ``Graph (v, P_D)`` part (SPAseq Def. 15), if any, is a basic graph pattern over
      a knowledge base given as triples.

    A basic graph pattern's every solution binds all its variables, so a key variable it
    does not name is never bound: the GPM gives no key either."""
    event = event_part(gpm)
    if isinstance(event, str):
        return event
    patterns, filters = event
    bound = pattern_variables(patterns)
    never = no_key_alone(gpm)
    if never is not None:
        return f"{_NO_KEY}: {never}"
    if filters:
        return "a FILTER over the pattern's variables (compared by value)"
    part = _kb_part(gpm, graphs)
    if isinstance(part, str):
        return part
    graph, kb = part
    if not set(by) <= bound | pattern_variables(kb):
        return _NO_KEY + ": the pattern does not bind every key variable"
    if _literal_joins(patterns + kb):
        return "a join on a variable that may bind a literal"
    return KeyJoin(gpm.name, gpm.stream, patterns, by, graph, kb)


def skeleton_join(
    gpm: Gpm, graphs: Mapping[str, Any]
) -> tuple[KeyJoin, tuple[ast.Expr, ...]] | str:
    """The GPM's *skeleton* (its pattern without FILTERs) as a :class:`KeyJoin` with no key,
    and its FILTERs set apart, or why joins cannot give the skeleton's solutions exactly
    (:func:`key_join`'s conditions but the FILTER's): each solution of the pattern under a
    mapping ``μ`` is a skeleton solution ``ν`` compatible with ``μ`` on which the FILTERs
    hold for ``μ ∪ ν`` (SPARQL 1.1 sec. 18.2.2.6, SPAseq choice 1); ``rsep.spark.
    strict_sequence`` evaluates them so."""
    event = event_part(gpm)
    if isinstance(event, str):
        return event
    patterns, filters = event
    part = _kb_part(gpm, graphs)
    if isinstance(part, str):
        return part
    graph, kb = part
    if _literal_joins(patterns + kb):
        return "a join on a variable that may bind a literal"
    return KeyJoin(gpm.name, gpm.stream, patterns, (), graph, kb), filters


def _kb_part(
    gpm: Gpm, graphs: Mapping[str, Any]
) -> tuple[str | None, tuple[TriplePattern, ...]] | str:
    """The knowledge base graph and triple patterns of a GPM's ``Graph (v, P_D)`` part
    (SPAseq Def. 15; ``(None, ())`` without one), or why joins cannot evaluate it."""
    if gpm.graph_kb is None:
        return None, ()
    graph = gpm.graph_kb.graph
    part = basic_pattern(group_of(gpm.graph_kb.pattern.text), "?_:k")
    if isinstance(part, str):
        return "knowledge base part: " + part
    if part[1]:
        return "knowledge base part: a FILTER"
    if not isinstance(graphs.get(graph), frozenset | set):
        return "knowledge base graph not given as triples"
    return graph, part[0]


def _literal_joins(patterns: Iterable[TriplePattern]) -> bool:
    """Whether a variable that only objects bind occurs in two places (module docstring of
    :func:`key_join`): a subject or predicate binds no literal, so a variable occurring
    there is joined by term."""
    objects: dict[str, int] = {}
    others: set[str] = set()
    for s, p, o in patterns:
        others.update(x for x in (s, p) if x.startswith("?"))
        if o.startswith("?"):
            objects[o] = objects.get(o, 0) + 1
    return any(count > 1 and name not in others for name, count in objects.items())


# What a partition gives back -----------------------------------------------------------


class PartitionOutput:
    """A partition's answers made the user's (module docstring, 2): the ``SELECT *``
    answers of keys the partition owns, through the user's SELECT expressions, projection
    and IStream (:class:`rsep.engine.projection.Output`). Without partitioning, the
    answers pass unchanged."""

    def __init__(self, scheme: Scheme, part: int) -> None:
        from rsep.engine.projection import Output

        self.scheme = scheme
        self.part = part
        self._output = Output(scheme.final, answer_set=True) if scheme.partitioned else None
        self._matcher = GraphMatcher()

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the matcher (pyoxigraph stores do not pickle): live queries keep
        this in Spark's state store."""
        return {name: value for name, value in self.__dict__.items() if name != "_matcher"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._matcher = GraphMatcher()

    def take(self, results: Iterable[Result]) -> list[Result]:
        """The answers among ``results`` (in time order) that this partition reports."""
        if self._output is None:
            return list(results)
        out: list[Result] = []
        batch: list[tuple[Mu, int, int]] = []
        time: int | None = None
        for result in results:
            if not isinstance(result, SelectResult) or result.interval is None:
                raise TypeError("a partitioned plan answers SELECT results with intervals")
            key = tuple(str(result.bindings[name]) for name in self.scheme.by)
            if owner(key, self.scheme.partitions) != self.part:
                continue
            if time is not None and result.time != time:
                out += self._instant(time, batch)
                batch = []
            time = result.time
            batch.append((Mu(result.bindings), *result.interval))
        if time is not None:
            out += self._instant(time, batch)
        return out

    def _instant(self, t: int, answers: list[tuple[Mu, int, int]]) -> list[Result]:
        assert self._output is not None
        found = self._output.instant(t, answers, self._matcher)
        # a match is known at its last event or, past a negated last step, at the end of
        # its window: at most WITHIN after it; nothing older can be reported again
        self._output.forget(t - self.scheme.within if self.scheme.within else t)
        return found
