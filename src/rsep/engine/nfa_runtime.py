"""SPAseq sequences evaluated incrementally: the runtime of the automaton of
:mod:`rsep.algebra.nfa` (SPAseq Sect. 6-7, Flink CEP's NFA), equal to the oracle.

The oracle (``rsep.semantics.spaseq``) enumerates SPAseq's definitions over finite streams;
this runtime reaches the same answers event by event, in bounded state. Its pieces:

- **Runs.** A run (:class:`Run`) is an instance of the automaton (Def. 17): the state it
  waits in and the *set* of mappings ``X`` of the match so far (Defs. 7-12 are on sets: an
  event with two solutions is one pair ``(τ, Ω)``, and skip-till-next stops the whole set at
  the first event that extends any of its mappings). A run that took no event yet (a
  *start* run, one per initial state, window and partition) waits on every event of its
  window, so a match may start anywhere (the oracle's first step; Algorithm 2, lines
  19-22). Every other run waits as its state says: the streamset's next instant (strict
  contiguity, Def. 12), the first instant that extends it (skip-till-next, Def. 11), or
  every instant, forking (skip-till-any, Def. 10). A run that reaches ``xf`` is a match,
  known at its last event; through a negated last step, at its window's end.
- **Runs indexed by the stream they wait for** (Sect. 7.1): at each instant only the
  states that read one of the instant's streams are visited (and the strict ones, which
  the instant ends); others cost nothing.
- **Stateful predicates in transitions** (Sect. 7.2): a GPM is evaluated on the event
  under each mapping of the run (``⟦μ(P)⟧_G``, μ bound as a VALUES row by GraphMatcher), so a
  FILTER naming an earlier GPM's variable sees it; evaluations are cached per event and
  per value of the variables the pattern mentions. A GPM that is a basic graph pattern
  with FILTERs (most are) is matched in Python over the event's triples, indexed once per
  event (:mod:`rsep.engine.bgp`, pyoxigraph's very answers), and by pyoxigraph otherwise.
  **Lazy conjunction** (Sect. 7.3): a conjunction is evaluated only when every operand's
  stream has an event at the instant, operand by operand, stopping at the first that
  matches nothing.
- **Window bounds in transitions**: Def. 16's tumbling windows ``[t0 + kω, t0 + (k+1)ω]``,
  closed at both ends, each with its own runs; a window's runs die when it ends, and its
  runs waiting past a negated last step become matches then.
- **Negation** (docs/semantics.md, SPAseq choice 4): a negated pattern drops a mapping of
  the match when it matches, *under the whole match's mapping*, an event strictly between
  the neighbouring steps. The runtime checks it when the event comes if no later step can
  bind a variable the pattern names that the mapping lacks (the answer cannot change);
  otherwise it keeps the event in the run's history and checks it when the match is
  complete. A run whose every mapping is dropped dies.
- **The shared buffer** (:mod:`rsep.engine.shared_buffer`): runs that branch (Kleene+,
  skip-till-any, optional steps) share the versions of their histories (taken events,
  deferred negation checks) instead of copying them; a run is a handful of pointers.
- **PARTITION BY** (choice 9): one set of runs per key value ``c``, started with the keys
  bound to ``c``, over the events of key ``c`` and those without a key (sent to every
  partition). Key values come from the events (each GPM of the event's stream alone) and
  from the matches of the sequence without partitioning, which the runtime also follows,
  dropping its runs as soon as their keys are known. A partition found late is replayed
  from the events without a key of the open windows.
- **Bounded state**: at most ``max_runs`` runs (a :class:`~rsep.errors.UserError` names the
  limit and how to raise it), at most ``max_window_events`` events kept for deferred checks
  or late partitions.

Results go through :class:`rsep.engine.projection.Output` (SELECT expressions, projection,
DISTINCT, the streaming operator, the query form), so a plan gives the oracle's results
(``rsep.semantics.evaluate``): same times, bindings and intervals.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import reduce

from pyoxigraph import Literal, QuerySolutions, Store, Triple

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    PartitionBy,
    Strategy,
    Within,
)
from rsep.algebra.gpm import no_key_alone
from rsep.algebra.nfa import (
    Nfa,
    StateKind,
    TransitionKind,
    When,
    compile_nfa,
    pattern_streams,
)
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import EventJoin, Plan
from rsep.engine.bgp import GroupMatcher
from rsep.engine.projection import Answer, Output
from rsep.engine.query import InstantQuery
from rsep.engine.shared_buffer import BufferNode, extend, flatten, items, restore
from rsep.errors import UserError
from rsep.rdf.event import Event, event_order
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, LiteralForms, Mu
from rsep.rdf.terms import Term

__all__ = ["Match", "NfaQuery", "Run"]

_VARIABLE = re.compile(r"[?$](\w+)")

_EMPTY = Mu()

Check = tuple[EventPattern, tuple[Event, ...]]
"""A deferred negation check: a negated pattern and the events of its streams at one
instant between the neighbouring steps, to be matched under the complete mapping."""

Instant = dict[str, list[Event]]
"""The events of one instant by stream."""

_Bucket = tuple[tuple[object, ...], tuple[str, ...]]
"""A mapping's place in a hash join (:meth:`NfaQuery._join_runs`): the values of the
pattern's free variables, and the names of its bound variables the mapping binds."""

_MAX_JOIN_KEYS = 200_000

_COMPLEX = re.compile(
    r"\b(OPTIONAL|MINUS|EXISTS|BIND|VALUES|UNION|SELECT|SERVICE|GRAPH|LATERAL)\b", re.IGNORECASE
)
_IRI = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")
_STRING = re.compile(
    r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
_QUOTED = re.compile(f"{_IRI.pattern}|{_STRING.pattern}")


@dataclass(frozen=True)
class _Shape:
    """How a GPM's pattern depends on a run's mapping. A *simple* pattern (triples, paths
    and FILTERs: no OPTIONAL, MINUS, EXISTS, BIND, VALUES, UNION, sub-select, SERVICE or
    GRAPH) gives, under ``μ``, the solutions it gives under ``μ`` restricted to its
    ``free`` variables (named, not bound by it: a FILTER's ``?p1``) that agree with ``μ``
    on the variables it binds (``bound``): for triples and FILTERs, substituting a bound
    variable is selecting on it. So one evaluation per event and per value of the free
    variables serves every run. For another pattern ``free`` is every variable it names
    (it is evaluated per value of all of them)."""

    simple: bool
    bound: frozenset[str]
    free: frozenset[str]
    skeleton: str | None = None
    """A simple pattern with free variables: its text without FILTERs, whose solutions on
    an event say which runs may match at all (their bound values), before the pattern is
    evaluated per value of the free variables."""


def _shape(gpm: Gpm, store: Store) -> _Shape:
    """The :class:`_Shape` of a GPM: its in-scope variables are what ``SELECT *`` over it
    projects (pyoxigraph, on an empty store); names inside IRIs and strings are not
    keywords."""
    mentioned = _mentions(gpm)
    text = _QUOTED.sub(" ", gpm.pattern.text)
    if gpm.graph_kb is not None or _COMPLEX.search(text):
        return _Shape(False, frozenset(), mentioned)
    try:
        found = store.query(f"SELECT * WHERE {{ {gpm.pattern.text} }}")
    except SyntaxError:
        return _Shape(False, frozenset(), mentioned)
    if not isinstance(found, QuerySolutions):  # pragma: no cover - a SELECT query
        return _Shape(False, frozenset(), mentioned)
    bound = frozenset(v.value for v in found.variables)
    skeleton = _skeleton(gpm.pattern.text) if mentioned - bound else None
    if skeleton is not None:
        try:
            check = store.query(f"SELECT * WHERE {{ {skeleton} }}")
        except SyntaxError:
            check = None
        if not isinstance(check, QuerySolutions) or {v.value for v in check.variables} != bound:
            skeleton = None
    return _Shape(True, bound, mentioned - bound, skeleton)


_FILTER = re.compile(r"FILTER\b", re.IGNORECASE)
_CALL = re.compile(r"\s*(?:<[^<>\"{}|^`\\\x00-\x20]*>|[A-Za-z_][\w.-]*:?[\w.-]*)?\s*\(")


def _skeleton(text: str) -> str | None:
    """A simple group pattern without its FILTERs (their solutions are a superset of the
    pattern's under any bindings: a FILTER only removes solutions), or ``None`` when the
    text does not read as expected. IRIs, strings and comments are skipped; a FILTER's
    constraint is a bracketted expression or a function call (SPARQL 1.1 grammar [68])."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "<":
            found = _IRI.match(text, i)
            if found is None:
                return None
            out.append(found.group())
            i = found.end()
        elif char in "\"'":
            found = _STRING.match(text, i)
            if found is None:
                return None
            out.append(found.group())
            i = found.end()
        elif char == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif _FILTER.match(text, i) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_?$:")
        ):
            call = _CALL.match(text, i + 6)
            closing = _closing(text, call.end() - 1) if call is not None else None
            if closing is None:
                return None
            out.append(" ")
            i = closing + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    """The index of the bracket that closes the one at ``start`` (IRIs and strings
    skipped; a ``<`` that starts no IRI is the less-than operator)."""
    depth = 0
    i = start
    while i < len(text):
        char = text[i]
        if char == "<":
            found = _IRI.match(text, i)
            i = found.end() if found is not None else i + 1
            continue
        if char in "\"'":
            found = _STRING.match(text, i)
            if found is None:
                return None
            i = found.end()
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


@functools.lru_cache(maxsize=4096)
def _mentions(pattern: EventPattern) -> frozenset[str]:
    """Every variable a pattern's text names (over-approximated: a ``?`` inside an IRI
    counts too), so that ``⟦μ(P)⟧_G`` depends on ``μ`` restricted to them only."""
    names: set[str] = set()
    for node in pattern.walk():
        if isinstance(node, Gpm):
            names.update(_VARIABLE.findall(node.pattern.text))
            if node.graph_kb is not None:
                names.update(_VARIABLE.findall(node.graph_kb.pattern.text))
    return frozenset(names)


# The automaton as the runtime reads it -----------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """One state of the automaton, read from its edges: the pattern it waits for (its
    ``TAKE`` edges, ``None`` for ``xf`` and a negated last step's state), where a match of
    it goes, the strategy of its ``IGNORE`` edge, its negated patterns (``TAKE`` into
    ``stop``), its ``PROCEED`` targets, and the variables a later ``TAKE`` may bind."""

    name: str
    pattern: EventPattern | None
    targets: tuple[int, ...]
    strategy: Strategy
    negated: tuple[EventPattern, ...]
    proceed: tuple[int, ...]
    tail: bool
    final: bool
    take_streams: frozenset[str]
    negated_streams: tuple[frozenset[str], ...]
    needs: tuple[frozenset[str], ...]
    """Per negated pattern: the variables it names that a later step may bind; it can be
    checked when its event comes under a mapping that binds all of them."""


def _read(nfa: Nfa) -> tuple[tuple[_Spec, ...], tuple[int, ...]]:
    """The states of ``nfa`` as :class:`_Spec` and the initial states (``x0`` and the
    states its ``PROCEED`` edges reach: an optional first step read as absent)."""
    stop = {s.name for s in nfa.states if s.kind is StateKind.STOP}
    names = [s.name for s in nfa.states if s.name not in stop]
    index = {name: i for i, name in enumerate(names)}
    later = _later_variables(nfa, names, stop)
    specs = []
    for name in names:
        edges = nfa.outgoing(name)
        takes = [e for e in edges if e.kind is TransitionKind.TAKE and e.target not in stop]
        patterns = list(dict.fromkeys(e.guard.pattern for e in takes))
        if len(patterns) > 1:  # pragma: no cover - compile_nfa gives one pattern a state
            raise ValueError(f"state {name} waits for {len(patterns)} patterns")
        pattern = patterns[0] if patterns else None
        negated = tuple(
            e.guard.pattern
            for e in edges
            if e.kind is TransitionKind.TAKE and e.target in stop and e.guard.pattern is not None
        )
        whens = {e.guard.when for e in edges if e.kind is TransitionKind.IGNORE}
        strategy = (
            Strategy.SKIP_TILL_NEXT
            if When.NO_TAKE in whens
            else Strategy.SKIP_TILL_ANY
            if When.ANY in whens
            else Strategy.STRICT
        )
        proceeds = [e for e in edges if e.kind is TransitionKind.PROCEED]
        specs.append(
            _Spec(
                name=name,
                pattern=pattern,
                targets=tuple(dict.fromkeys(index[e.target] for e in takes)),
                strategy=strategy,
                negated=negated,
                proceed=tuple(index[e.target] for e in proceeds if e.guard.when is When.ALWAYS),
                tail=any(e.guard.when is When.WINDOW_END for e in proceeds),
                final=nfa.state(name).kind is StateKind.FINAL,
                take_streams=frozenset(pattern_streams(pattern)) if pattern else frozenset(),
                negated_streams=tuple(frozenset(pattern_streams(n)) for n in negated),
                needs=tuple(_mentions(n) & later[name] for n in negated),
            )
        )
    initial: list[int] = []
    todo = [index[nfa.start.name]]
    while todo:
        state = todo.pop()
        if state not in initial:
            initial.append(state)
            todo.extend(specs[state].proceed)
    return tuple(specs), tuple(initial)


def _later_variables(nfa: Nfa, names: list[str], stop: set[str]) -> dict[str, frozenset[str]]:
    """For each state, the variables named by the patterns of the ``TAKE`` edges reachable
    from it: what the rest of a match may still bind."""
    out: dict[str, frozenset[str]] = {}
    for name in names:
        seen = {name}
        todo = [name]
        found: set[str] = set()
        while todo:
            state = todo.pop()
            for edge in nfa.outgoing(state):
                if edge.target in stop:
                    continue
                if edge.kind is TransitionKind.TAKE and edge.guard.pattern is not None:
                    found |= _mentions(edge.guard.pattern)
                if edge.target not in seen:
                    seen.add(edge.target)
                    todo.append(edge.target)
        out[name] = frozenset(found)
    return out


# Runs ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    """A run of the automaton (SPAseq Def. 17): its state, the set of mappings ``X`` of
    the match so far (``doomed``: those a negated event already dropped), the times of its
    first and last events (``None`` for a start run, which took none), and its history in
    the shared buffer: the events taken and the deferred negation checks."""

    state: int
    mappings: frozenset[Mu]
    doomed: frozenset[Mu] = frozenset()
    first: int | None = None
    last: int | None = None
    taken: BufferNode[Event] | None = None
    checks: BufferNode[Check] | None = None

    @property
    def started(self) -> bool:
        """Whether the run took an event (a start run waits on every event)."""
        return self.last is not None


@dataclass(frozen=True)
class Match:
    """A complete match: the mappings it keeps (after the negations), the events it took,
    its first and last event times and the instant it is known (recorded only when
    :attr:`NfaQuery.record` is set, for tests against the oracle's ``find_matches``)."""

    mappings: frozenset[Mu]
    events: tuple[Event, ...]
    t1: int
    t2: int
    known: int


@dataclass
class _Group:
    """The runs of one partition (``start``: the key bound, or the empty mapping) in one
    window. ``discovery`` groups run the sequence without partitioning to find key values
    (their matches give keys, not answers)."""

    start: Mu
    window: int
    discovery: bool = False
    runs: dict[int, list[Run]] = field(default_factory=dict)
    count: int = 0


@dataclass
class _Hit:
    """A pair ``(τ, Ω)`` of the pattern a run waits for, under the run's mappings: the
    events, the mappings, and those that come from mappings already dropped."""

    events: tuple[Event, ...]
    mappings: set[Mu]
    doomed: set[Mu]


# The query -----------------------------------------------------------------------------


class NfaQuery(InstantQuery):
    """A SPAseq query evaluated incrementally (module docstring): push events, advance the
    watermark, get the oracle's results."""

    record: bool = False
    """Keep every :class:`Match` in :attr:`matches` (tests; unbounded)."""

    def __init__(self, plan: Plan, graphs: Mapping[str, frozenset[Triple]] | None = None) -> None:
        plan = apply_profile(plan)
        super().__init__(plan, graphs)
        r2r = plan.r2r
        if isinstance(r2r, EventJoin) or not isinstance(r2r, EventPattern):
            raise UserError("a SPAseq query's WHERE clause is one sequence expression (Def. 4)")
        wanted = [*plan.dataset.default_graphs, *plan.dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in self.graphs]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        self.graphs = {iri: self.graphs[iri] for iri in wanted}
        self.nfa = compile_nfa(r2r)
        self.specs, self.initial = _read(self.nfa)
        self.within = self.nfa.within
        self.t0 = plan.parameters.t0
        self.by = self.nfa.partition_by
        self.max_runs = plan.parameters.max_runs
        self.max_events = plan.parameters.max_window_events
        self.streams = frozenset(plan.dataset.streams)
        gpms = [n for n in _unwrap(r2r).walk() if isinstance(n, Gpm)]
        self.gpms = tuple(dict.fromkeys(gpms))
        # choice 9: a GPM whose FILTER needs an earlier step's variable gives no key alone
        self.key_gpms = tuple(g for g in self.gpms if self.by and no_key_alone(g) is None)
        self.output = Output(plan, answer_set=True)  # Def. 16: a union of sets
        self.matches: list[Match] = []
        self._groups: dict[int, dict[Mu, _Group]] = {}
        self._discovery: dict[int, _Group] = {}
        self._keys: set[Mu] = set()
        self._history: list[tuple[int, tuple[Event, ...]]] = []
        self._total = 0
        self._prepare()

    def _prepare(self) -> None:
        """What is rebuilt rather than pickled: the matcher (pyoxigraph stores) and the
        per-instant caches."""
        self._matcher = GraphMatcher()
        self._patterns = GroupMatcher(self._matcher)
        for graph in self.graphs.values():
            self._patterns.keep(graph)
        self._shapes: dict[int, _Shape] = {}  # by id: a GPM's hash is costly
        for gpm in self.gpms:
            self._shape_of(gpm)
        self._cache: dict[tuple[int, int, Mu], frozenset[Mu]] = {}  # ids live in an instant
        self._skeletons: dict[tuple[int, int, tuple[str, ...]], set[tuple[object, ...]]] = {}
        self._keys_cache: dict[Event, frozenset[Mu]] = {}
        self._join_keys: dict[tuple[int, Mu], tuple[_Bucket, tuple[object, ...]]] = {}

    # IncrementalQuery --------------------------------------------------------------------

    def push(self, events: Iterable[Event]) -> list[Result]:
        """Take a batch of events in non-decreasing time; return the answers of every
        instant the batch completes (an instant is complete once a later event came)."""
        self._check_open()
        out: list[Result] = []
        for event in events:
            if self.streams and event.stream not in self.streams:
                continue  # not a FROM STREAM of the query: not in Σ (choice 8)
            self._check_order(event)
            if not event.is_point:
                raise UserError(
                    f"an event of <{event.stream}> lasts from {event.t_start} to "
                    f"{event.t_end}; SPAseq events are pairs (τ, G) with one timestamp "
                    "(Definition 1)"
                )
            out += self._hold(event)
        return _ordered(out)

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the pending instant if it is at or before ``t``,
        and the windows that end by ``t`` are final."""
        self._check_open()
        out = self._release(t)
        out += self._close_before(t + 1)
        return _ordered(out)

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the last instant, then every open window closes at its end (a
        match through a negated last step is known then); answers after ``until`` are
        left out."""
        self._check_open()
        out = self._flush()
        out += self._close_before(None)
        self._finished = True
        return [r for r in _ordered(out) if until is None or r.time <= until]

    # Instants ----------------------------------------------------------------------------

    def _flush(self) -> list[Result]:
        """The held instant (:class:`InstantQuery`), then the per-instant caches go."""
        try:
            return super()._flush()
        finally:
            self._cache.clear()
            self._skeletons.clear()
            self._keys_cache.clear()

    def _instant(self, t: int, events: list[Event]) -> list[Result]:
        """One instant of the streamset: windows that ended before it close, the runs of
        each window that holds it see its events, windows that end at it close, and the
        answers known at ``t`` go out (``t`` is an evaluation instant: every event time is,
        ``SpaseqEvaluation.instants``)."""
        out = self._close_before(t)
        answers: list[Answer] = []
        windows = self._windows_of(t)
        if self.by:  # an event in no window still gives its key a partition
            self._partitioned(t, events, windows, answers, out)
        else:
            for k in windows:
                self._step(self._group(Mu(), k), t, events, answers)
        if windows:
            answers += self._close_window(t, out)
        out += self.output.instant(t, answers, self._matcher)
        self._forget(t)
        return out

    def _windows_of(self, t: int) -> list[int]:
        """The windows that hold instant ``t``: ``[t0 + kω, t0 + (k+1)ω]``, ``k ∈ ℕ``
        (Def. 16; one window without WITHIN); an instant on a boundary is in two."""
        if self.within is None:
            return [0]
        if t < self.t0:
            return []
        k = (t - self.t0) // self.within
        if k >= 1 and t == self.t0 + k * self.within:
            return [k - 1, k]
        return [k]

    def _end(self, k: int) -> int | None:
        return None if self.within is None else self.t0 + (k + 1) * self.within

    def _begin(self, k: int) -> int | None:
        return None if self.within is None else self.t0 + k * self.within

    def _open_windows(self) -> list[int]:
        return sorted(set(self._groups) | set(self._discovery))

    def _close_before(self, t: int | None) -> list[Result]:
        """Close every window that ends before ``t`` (all when ``None``), in order; the
        matches known at a window's end go out at that instant."""
        out: list[Result] = []
        for k in self._open_windows():
            end = self._end(k)
            if end is None:
                if t is not None:
                    continue
                end = self._last_time if self._last_time is not None else 0
            elif t is not None and end >= t:
                continue
            answers = self._close(k, out)
            if answers:
                out += self.output.instant(end, answers, self._matcher)
            self._forget(end)
        return out

    def _close_window(self, t: int, out: list[Result]) -> list[Answer]:
        """Close the windows that end at ``t`` (after its events): their answers."""
        answers: list[Answer] = []
        for k in self._open_windows():
            if self._end(k) == t:
                answers += self._close(k, out)
        return answers

    def _close(self, k: int, out: list[Result]) -> list[Answer]:
        """Window ``k`` ends: runs past a negated last step become matches (NO_TAIL; their
        keys found first, so that a partition they reveal is evaluated before it closes);
        the other runs die."""
        end = self._end(k)
        known = end if end is not None else (self._last_time or 0)
        discovery = self._discovery.get(k)
        if discovery is not None:
            keys: list[Mu] = []
            for run in self._tails(discovery):
                self._complete(discovery, run, known, [], keys)
            self._new_keys(keys, out)
            del self._discovery[k]
            self._total -= discovery.count
        answers: list[Answer] = []
        for group in self._groups.pop(k, {}).values():
            for run in self._tails(group):
                self._complete(group, run, known, answers, [])
            self._total -= group.count
        return answers

    def _tails(self, group: _Group) -> Iterator[Run]:
        for state, runs in group.runs.items():
            if self.specs[state].tail:
                yield from runs

    def _forget(self, t: int) -> None:
        """Drop what no answer can need any more: IStream's memory of intervals ending
        before the oldest open window (a match past a negated last step may still come
        there) or before ``t``, and the events without a key before the open windows."""
        windows = self._open_windows()
        oldest = self._begin(windows[0]) if windows else None
        horizon = t + 1
        if oldest is not None and any(s.tail for s in self.specs):
            horizon = min(horizon, oldest)
        self.output.forget(horizon)
        if self._history and oldest is not None:
            self._history = [(u, e) for u, e in self._history if u >= oldest]

    # Partitions --------------------------------------------------------------------------

    def _group(self, start: Mu, k: int) -> _Group:
        """The runs of partition ``start`` in window ``k``; a new group starts with a start
        run in each initial state."""
        groups = self._groups.setdefault(k, {})
        group = groups.get(start)
        if group is None:
            group = groups[start] = _Group(start, k)
            self._start(group)
        return group

    def _start(self, group: _Group) -> None:
        for state in self.initial:
            group.runs.setdefault(state, []).append(Run(state, frozenset({group.start})))
        group.count = len(self.initial)
        self._total += group.count

    def _partitioned(
        self,
        t: int,
        events: list[Event],
        windows: list[int],
        answers: list[Answer],
        out: list[Result],
    ) -> None:
        """PARTITION BY (choice 9): key values from the events and from the matches of
        the unpartitioned sequence; each partition's runs see its events and those
        without a key."""
        keys = {event: self._event_keys(event) for event in events}
        self._new_keys([c for event in events for c in keys[event]], out)
        found: list[Mu] = []
        for k in windows:
            group = self._discovery.get(k)
            if group is None:
                group = self._discovery[k] = _Group(Mu(), k, discovery=True)
                self._start(group)
            self._step(group, t, events, [], found)
        self._new_keys(found, out)
        keyless = tuple(e for e in events if not keys[e])
        targets = self._keys if keyless else {c for e in events for c in keys[e]}
        if not windows:
            return
        for c in list(targets):
            mine = [e for e in events if not keys[e] or c in keys[e]]
            for k in windows:
                self._step(self._group(c, k), t, mine, answers)
        if keyless and windows:
            self._history.append((t, keyless))
            kept = sum(len(e) for _, e in self._history)
            if kept > self.max_events:
                raise UserError(
                    f"{kept} events without a PARTITION BY key are kept for partitions not "
                    f"seen yet (each belongs to every partition), more than "
                    f"max_window_events = {self.max_events}: add WITHIN, or raise the limit "
                    "(--set max_window_events=N)"
                )

    def _event_keys(self, event: Event) -> frozenset[Mu]:
        """The key values of an event: the key variables in the solutions of each GPM of
        its stream on it, alone (choice 9); the GPMs that have none alone whatever the
        event holds (:func:`~rsep.algebra.gpm.no_key_alone`) are not matched."""
        known = self._keys_cache.get(event)
        if known is None:
            found = {
                mu.project(self.by)
                for gpm in self.key_gpms
                if gpm.stream == event.stream
                for mu in self._gpm(gpm, event, Mu())
                if all(name in mu for name in self.by)
            }
            known = self._keys_cache[event] = frozenset(found)
        return known

    def _new_keys(self, found: Iterable[Mu], out: list[Result]) -> None:
        """Partitions for key values not seen before, replayed from the kept events
        without a key of the open windows (their answers may be earlier than now: the
        definition makes a partition's past depend on a later key)."""
        for c in sorted(set(found) - self._keys, key=lambda mu: sorted(mu.text().items())):
            self._keys.add(c)
            for u, events in self._history:
                late: list[Answer] = []
                for k in self._windows_of(u):
                    if k in self._groups or k in self._discovery:
                        self._step(self._group(c, k), u, list(events), late)
                if late:
                    out += self.output.instant(u, late, self._matcher)

    # One instant for one group --------------------------------------------------------

    def _step(
        self,
        group: _Group,
        t: int,
        events: list[Event],
        answers: list[Answer],
        keys: list[Mu] | None = None,
    ) -> None:
        """The runs of ``group`` see the events of instant ``t``: each takes what extends
        it (a new run per pair, Defs. 10-12) and stays, dies or records negated events as
        its strategy says; new runs wait from the next instant."""
        at: Instant = {}
        for event in events:
            at.setdefault(event.stream, []).append(event)
        born: list[Run] = []
        before = group.count
        for state, runs in list(group.runs.items()):
            spec = self.specs[state]
            take = spec.pattern is not None and bool(spec.take_streams & at.keys())
            gap = any(streams & at.keys() for streams in spec.negated_streams)
            strict = spec.strategy is Strategy.STRICT and not spec.tail
            if not (take or gap or strict):
                continue
            kept: list[Run] = []
            joined = self._join_runs(spec, runs, at) if take else None
            for run in runs:
                if joined is not None:
                    hits = joined.get(id(run), [])
                else:
                    hits = self._take(spec, run, at) if take else []
                for hit in hits:
                    self._advance_run(group, run, spec, hit, t, born, answers, keys)
                if run.started:
                    if strict or (spec.strategy is Strategy.SKIP_TILL_NEXT and hits):
                        continue
                    if group.discovery and self._keyed(run):
                        continue
                if gap:
                    checked = self._gap(spec, run, at)
                    if checked is None:
                        continue
                    run = checked
                kept.append(run)
            group.runs[state] = kept
        for run in born:
            group.runs.setdefault(run.state, []).append(run)
        group.count = sum(len(runs) for runs in group.runs.values())
        self._total += group.count - before
        if self._total > self.max_runs:
            self._too_many(t)
        if not group.discovery and group.count == len(self.initial):
            self._drop_if_pristine(group)

    def _advance_run(
        self,
        group: _Group,
        run: Run,
        spec: _Spec,
        hit: _Hit,
        t: int,
        born: list[Run],
        answers: list[Answer],
        keys: list[Mu] | None,
    ) -> None:
        """The run after taking ``hit`` at ``t``: one copy into each target of the state's
        ``TAKE`` edges (a Kleene+ state loops and moves on)."""
        taken = run.taken
        for event in hit.events:
            taken = extend(taken, event)
        after = Run(
            spec.targets[0],
            frozenset(hit.mappings),
            frozenset(hit.doomed),
            run.first if run.first is not None else t,
            t,
            taken,
            run.checks,
        )
        for target in spec.targets:
            self._enter(group, replace(after, state=target), t, born, answers, keys)

    def _enter(
        self,
        group: _Group,
        run: Run,
        t: int,
        born: list[Run],
        answers: list[Answer],
        keys: list[Mu] | None,
    ) -> None:
        """A run enters its state: at ``xf`` it is a match known at ``t``; elsewhere it
        waits, and forks along the state's ``PROCEED`` edges."""
        spec = self.specs[run.state]
        if spec.final:
            self._complete(group, run, t, answers, keys if keys is not None else [])
            return
        if group.discovery and self._keyed(run):
            return
        born.append(run)
        if self._total + len(born) > self.max_runs:
            self._too_many(t)
        for target in spec.proceed:
            self._enter(group, replace(run, state=target), t, born, answers, keys)

    def _complete(
        self, group: _Group, run: Run, known: int, answers: list[Answer], keys: list[Mu]
    ) -> None:
        """A match: the mappings no negated event drops (deferred checks done now, under
        the complete mappings); their event mappings ``(μ, t1, t2)``, or their key values
        for a discovery group."""
        checks = [(pattern, _by_stream(events)) for pattern, events in items(run.checks)]
        kept = frozenset(
            mu
            for mu in run.mappings
            if mu not in run.doomed
            and not any(self._hits(pattern, (mu,), at) for pattern, at in checks)
        )
        if not kept or run.first is None or run.last is None:
            return
        if group.discovery:
            keys.extend(mu.project(self.by) for mu in kept if all(n in mu for n in self.by))
            return
        answers.extend((mu, run.first, run.last) for mu in kept)
        if self.record:
            self.matches.append(Match(kept, tuple(items(run.taken)), run.first, run.last, known))

    def _keyed(self, run: Run) -> bool:
        """Whether a discovery run can find no new key: every mapping it keeps binds the
        key variables to a known value (its matches' mappings extend them)."""
        for mu in run.mappings:
            if mu in run.doomed:
                continue
            if not all(name in mu for name in self.by) or mu.project(self.by) not in self._keys:
                return False
        return True

    def _drop_if_pristine(self, group: _Group) -> None:
        """Forget a partition's group that holds only untouched start runs: a new one is
        the same (memory stays with the live runs, not with every key ever seen)."""
        for runs in group.runs.values():
            for run in runs:
                if run.started or run.doomed or run.checks is not None:
                    return
        self._groups[group.window].pop(group.start, None)
        self._total -= group.count

    def _too_many(self, t: int) -> None:
        raise UserError(
            f"more than max_runs = {self.max_runs} partial matches (runs) are alive at {t}: "
            "Kleene+ or skip-till-any steps branch faster than matches complete. Bound the "
            "pattern with WITHIN, or raise the limit with --set max_runs=N"
        )

    # Negation ---------------------------------------------------------------------------

    def _gap(self, spec: _Spec, run: Run, at: Instant) -> Run | None:
        """The run after the events of an instant that lies in its gap: each negated
        pattern that matches one under a mapping drops that mapping, checked now when no
        later step can bind a variable it names that the mapping lacks, else recorded for
        the complete match; ``None`` when every mapping is dropped."""
        doomed = set(run.doomed)
        checks = run.checks
        for pattern, streams, needs in zip(
            spec.negated, spec.negated_streams, spec.needs, strict=True
        ):
            events = tuple(e for s in streams for e in at.get(s, ()))
            if not events:
                continue
            deferred = False
            local = _by_stream(events)
            for mu in run.mappings:
                if mu in doomed:
                    continue
                if all(name in mu for name in needs):
                    if self._hits(pattern, (mu,), local):
                        doomed.add(mu)
                else:
                    deferred = True
            if deferred:
                checks = extend(checks, (pattern, events))
                if checks.size > self.max_events:
                    raise UserError(
                        f"a run keeps more than max_window_events = {self.max_events} "
                        "instants of negated events to check against later bindings: add "
                        "WITHIN, or raise the limit (--set max_window_events=N)"
                    )
        if len(doomed) == len(run.mappings):
            return None
        if len(doomed) == len(run.doomed) and checks is run.checks:
            return run
        return replace(run, doomed=frozenset(doomed), checks=checks)

    # Matching one instant ---------------------------------------------------------------

    def _join_runs(self, spec: _Spec, runs: list[Run], at: Instant) -> dict[int, list[_Hit]] | None:
        """The pairs of every run of a state that waits for a simple GPM (:class:`_Shape`),
        as a hash join: the GPM is evaluated once per event and per value of its free
        variables, and each solution meets the runs whose mappings agree with it on the
        variables it binds (by stored form, as a bound term matches a triple pattern).
        ``None`` for other patterns (:meth:`_take`, run by run). Keyed by ``id`` of the
        run."""
        pattern = spec.pattern
        if not isinstance(pattern, Gpm) or len(runs) < 2:
            return None
        shape = self._shape_of(pattern)
        if not shape.simple:
            return None
        events = at.get(pattern.stream, ())
        # (free values, names bound) -> shared values -> [(run, μ)]
        table: dict[_Bucket, dict[tuple[object, ...], list[tuple[Run, Mu]]]] = {}
        for run in runs:
            for mu in run.mappings:
                bucket, shared = self._join_key(pattern, shape, mu)
                table.setdefault(bucket, {}).setdefault(shared, []).append((run, mu))
        forms = self._matcher.forms
        free = sorted(shape.free)
        hits: dict[int, dict[Event, _Hit]] = {}
        bindings: dict[tuple[object, ...], Mu] = {}
        for event in events:
            possible: dict[tuple[str, ...], set[tuple[object, ...]]] = {}
            for (values, names), by_shared in table.items():
                if shape.skeleton is not None and len(table) > 1:
                    if names not in possible:
                        possible[names] = self._skeleton_keys(pattern, shape.skeleton, event, names)
                    if possible[names].isdisjoint(by_shared):
                        continue
                binding = bindings.get(values)
                if binding is None:
                    binding = bindings[values] = Mu(
                        {n: v for n, v in zip(free, values, strict=True) if isinstance(v, Term)}
                    )
                for nu in self._evaluate(pattern, event, binding):
                    shared = tuple(_stored(forms, nu.get(name)) for name in names)
                    for run, mu in by_shared.get(shared, ()):
                        found = Mu({**nu, **mu}) if len(mu) > len(binding) else nu
                        per_run = hits.setdefault(id(run), {})
                        hit = per_run.get(event)
                        if hit is None:
                            hit = per_run[event] = _Hit((event,), set(), set())
                        hit.mappings.add(found)
                        if mu in run.doomed:
                            hit.doomed.add(found)
        return {key: list(per_run.values()) for key, per_run in hits.items()}

    def _skeleton_keys(
        self, pattern: Gpm, skeleton: str, event: Event, names: tuple[str, ...]
    ) -> set[tuple[object, ...]]:
        """The values of ``names`` in the solutions of the pattern without its FILTERs on
        the event: a run whose values are not among them cannot match (cached for the
        instant)."""
        key = (id(pattern), id(event), names)
        found = self._skeletons.get(key)
        if found is None:
            forms = self._matcher.forms
            bgp = self._patterns.compiled(pattern.pattern)
            solutions: Iterable[Mu] | None = (
                self._patterns.fast.match(bgp.skeleton, event.graph) if bgp is not None else None
            )
            if solutions is None:
                solutions = self._matcher.match(skeleton, event.graph)
            found = {tuple(_stored(forms, nu.get(name)) for name in names) for nu in solutions}
            self._skeletons[key] = found
        return found

    def _join_key(self, pattern: Gpm, shape: _Shape, mu: Mu) -> tuple[_Bucket, tuple[object, ...]]:
        """Where a mapping stands in :meth:`_join_runs`'s table: its free values and the
        names it binds among the pattern's, then their stored values (kept across
        instants: a run waits with the same mappings)."""
        key = (id(pattern), mu)
        known = self._join_keys.get(key)
        if known is None:
            if len(self._join_keys) > _MAX_JOIN_KEYS:
                self._join_keys.clear()
            forms = self._matcher.forms
            values = tuple(mu.get(name) for name in sorted(shape.free))
            names = tuple(name for name in sorted(shape.bound) if name in mu)
            shared = tuple(_stored(forms, mu[name]) for name in names)
            known = self._join_keys[key] = ((values, names), shared)
        return known

    def _take(self, spec: _Spec, run: Run, at: Instant) -> list[_Hit]:
        """The pairs ``(t, X ⋈_P G)`` of the state's pattern at the instant under the run's
        mappings ``X`` (the oracle's ``hits_at``), each with the mappings that come from
        dropped ones."""
        assert spec.pattern is not None
        grouped: dict[object, _Hit] = {}
        for mu in run.mappings:
            bad = mu in run.doomed
            for key, events, found in self._keyed_hits(spec.pattern, mu, at):
                hit = grouped.get(key)
                if hit is None:
                    hit = grouped[key] = _Hit(events, set(), set())
                hit.mappings |= found
                if bad:
                    hit.doomed |= found
        merged: dict[tuple[tuple[Event, ...], frozenset[Mu]], _Hit] = {}
        for hit in grouped.values():
            same = (hit.events, frozenset(hit.mappings))
            other = merged.get(same)
            if other is None:
                merged[same] = hit
            else:
                other.doomed |= hit.doomed
        return list(merged.values())

    def _keyed_hits(
        self, pattern: EventPattern, mu: Mu, at: Instant
    ) -> Iterator[tuple[object, tuple[Event, ...], frozenset[Mu]]]:
        """The pairs of ``pattern`` under ``{μ}``, each with a key that names it across the
        mappings of a run (event, operand of a disjunction, events of a conjunction), so
        that the run's pairs are their unions by key."""
        if isinstance(pattern, Gpm):
            for event in at.get(pattern.stream, ()):
                found = self._gpm(pattern, event, mu)
                if found:
                    yield (event,), (event,), found
        elif isinstance(pattern, Disjunction):
            for index, operand in enumerate(pattern.operands):
                for key, events, found in self._keyed_hits(operand, mu, at):
                    yield (index, key), events, found
        elif isinstance(pattern, Conjunction):
            for events, found in self._conjunction(pattern, (mu,), at):
                yield ("&", events), events, found
        else:  # pragma: no cover - compile_nfa takes BOps only
            raise UserError(f"{type(pattern).__name__} is not a BOp expression (Def. 4)")

    def _hits(
        self, pattern: EventPattern, bound: Iterable[Mu], at: Instant
    ) -> list[tuple[tuple[Event, ...], frozenset[Mu]]]:
        """``hits_at``: the pairs of a BOp at one instant under the mappings ``bound``: a
        GPM on each event of its stream (Def. 7), a disjunction's operands' pairs (Def. 9),
        a conjunction's compatible combinations (Def. 8)."""
        bound = tuple(bound)
        if isinstance(pattern, Gpm):
            out: list[tuple[tuple[Event, ...], frozenset[Mu]]] = []
            for event in at.get(pattern.stream, ()):
                found: set[Mu] = set()
                for mu in bound:
                    found |= self._gpm(pattern, event, mu)
                if found:
                    out.append(((event,), frozenset(found)))
            return out
        if isinstance(pattern, Disjunction):
            hits: list[tuple[tuple[Event, ...], frozenset[Mu]]] = []
            for operand in pattern.operands:
                hits.extend(h for h in self._hits(operand, bound, at) if h not in hits)
            return hits
        if isinstance(pattern, Conjunction):
            return self._conjunction(pattern, bound, at)
        raise UserError(f"{type(pattern).__name__} is not a BOp expression (Def. 4)")

    def _conjunction(
        self, pattern: Conjunction, bound: tuple[Mu, ...], at: Instant
    ) -> list[tuple[tuple[Event, ...], frozenset[Mu]]]:
        """Def. 8, lazily (Sect. 7.3): nothing unless every operand's streams have events
        at the instant; operands evaluated in turn, stopping at one that matches nothing;
        combinations grouped by the events they use, for each mapping of ``bound``."""
        if not all(any(s in at for s in pattern_streams(operand)) for operand in pattern.operands):
            return []
        grouped: dict[frozenset[Event], set[Mu]] = {}  # Def. 8: a set of events
        for mu in bound:
            parts = []
            for operand in pattern.operands:
                part = self._hits(operand, (mu,), at)
                if not part:
                    break
                parts.append(part)
            else:
                for combination in itertools.product(*parts):
                    joined = reduce(_join, (mappings for _, mappings in combination))
                    if joined:
                        events = frozenset(e for used, _ in combination for e in used)
                        grouped.setdefault(events, set()).update(joined)
        return [
            (tuple(sorted(events, key=event_order)), frozenset(found))
            for events, found in grouped.items()
        ]

    def _gpm(self, gpm: Gpm, event: Event, mu: Mu) -> frozenset[Mu]:
        """``{μ} ⋈ ⟦μ(P)⟧_G`` on the event's graph (Def. 7 under the run's bindings), joined
        with ``⟦P_D⟧`` over the knowledge base graph for ``Graph (v, P_D)`` (Def. 15).
        Evaluated once per event and per value of the variables that matter
        (:class:`_Shape`): those the pattern names, or only its free ones."""
        shape = self._shape_of(gpm)
        if not shape.simple:
            names = shape.free
            bound = mu if all(name in names for name in mu) else mu.project(names)
            found = self._evaluate(gpm, event, bound)
            if bound is mu or not found:
                return found
            return frozenset(nu.join(mu) for nu in found)
        free = mu.project(shape.free) if any(name in mu for name in shape.free) else _EMPTY
        base = self._evaluate(gpm, event, free)
        if not base:
            return base
        shared = [name for name in shape.bound if name in mu]
        if not shared and len(free) == len(mu):
            return base
        out = []
        for nu in base:
            if all(self._same(nu.get(name), mu[name]) for name in shared):
                out.append(Mu({**nu, **mu}))
        return frozenset(out)

    def _shape_of(self, gpm: Gpm) -> _Shape:
        shape = self._shapes.get(id(gpm))
        if shape is None:
            shape = self._shapes[id(gpm)] = _shape(gpm, Store())
        return shape

    def _same(self, found: object, bound: object) -> bool:
        """Whether a term the pattern matched is the one a run bound: equal, or literals
        pyoxigraph stores as one (it compares stored forms, as a VALUES row joins)."""
        if found == bound:
            return True
        if isinstance(found, Literal) and isinstance(bound, Literal):
            forms = self._matcher.forms
            return forms.stored_form(found) == forms.stored_form(bound)
        return False

    def _evaluate(self, gpm: Gpm, event: Event, bound: Mu) -> frozenset[Mu]:
        """``⟦bound(P)⟧_G`` joined with ``bound`` (and the knowledge base, Def. 15), cached
        for the instant."""
        key = (id(gpm), id(event), bound)
        found = self._cache.get(key)
        if found is None:
            # a basic graph pattern in Python (rsep.engine.bgp), else by pyoxigraph
            solutions = self._patterns.match(gpm.pattern, event.graph, bound)
            if gpm.graph_kb is not None and solutions:
                kb = self._kb(gpm)
                solutions = [
                    nu
                    for partial in solutions
                    for nu in self._patterns.match(gpm.graph_kb.pattern, kb, partial)
                ]
            found = self._cache[key] = frozenset(solutions)
        return found

    def _kb(self, gpm: Gpm) -> frozenset[Triple]:
        """``Γ(v)`` (Def. 15): the knowledge base graph the GPM names."""
        assert gpm.graph_kb is not None
        graph = self.graphs.get(gpm.graph_kb.graph)
        if graph is None:
            raise UserError(
                f"GPM {gpm.name} reads the knowledge base graph <{gpm.graph_kb.graph}>, which "
                "the dataset does not hold (SPAseq Definition 15: Γ(v) must name a graph of D)"
            )
        return graph

    # Checkpoints -----------------------------------------------------------------------

    def _every_run(self) -> Iterator[Run]:
        for group in self._every_group():
            for runs in group.runs.values():
                yield from runs

    def _every_group(self) -> Iterator[_Group]:
        for groups in self._groups.values():
            yield from groups.values()
        yield from self._discovery.values()

    def __getstate__(self) -> dict[str, object]:
        """Everything but the matcher and the caches; the shared buffer as a table (its
        histories may be deeper than pickle's recursion), each run pointing into it."""
        state = dict(self.__dict__)
        for name in (
            "_matcher",
            "_patterns",
            "_shapes",
            "_cache",
            "_skeletons",
            "_keys_cache",
            "_join_keys",
            "_groups",
            "_discovery",
        ):
            state.pop(name)
        runs = list(self._every_run())
        taken, taken_index = flatten(run.taken for run in runs)
        checks, checks_index = flatten(run.checks for run in runs)

        def stored(group: _Group) -> _StoredGroup:
            return _StoredGroup(
                group.start,
                group.window,
                group.discovery,
                group.count,
                {
                    state: [
                        (
                            run.state,
                            run.mappings,
                            run.doomed,
                            run.first,
                            run.last,
                            -1 if run.taken is None else taken_index[id(run.taken)],
                            -1 if run.checks is None else checks_index[id(run.checks)],
                        )
                        for run in runs
                    ]
                    for state, runs in group.runs.items()
                },
            )

        state["_stored"] = _Stored(
            {k: {c: stored(g) for c, g in groups.items()} for k, groups in self._groups.items()},
            {k: stored(g) for k, g in self._discovery.items()},
            taken,
            checks,
        )
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        stored = state.pop("_stored")
        assert isinstance(stored, _Stored)
        self.__dict__.update(state)
        taken = restore(stored.taken)
        checks = restore(stored.checks)

        def group(data: _StoredGroup) -> _Group:
            runs = {
                state: [
                    Run(
                        s,
                        mappings,
                        doomed,
                        first,
                        last,
                        None if ti < 0 else taken[ti],
                        None if ci < 0 else checks[ci],
                    )
                    for s, mappings, doomed, first, last, ti, ci in runs
                ]
                for state, runs in data.runs.items()
            }
            return _Group(data.start, data.window, data.discovery, runs, data.count)

        self._groups = {
            k: {c: group(g) for c, g in groups.items()} for k, groups in stored.groups.items()
        }
        self._discovery = {k: group(g) for k, g in stored.discovery.items()}
        self._prepare()


_StoredRun = tuple[int, frozenset[Mu], frozenset[Mu], int | None, int | None, int, int]
"""A run in a checkpoint: its fields, with indices into the buffer tables (``-1``: none)."""


@dataclass(frozen=True)
class _StoredGroup:
    start: Mu
    window: int
    discovery: bool
    count: int
    runs: dict[int, list[_StoredRun]]


@dataclass(frozen=True)
class _Stored:
    """The runs of a checkpoint and the shared buffer as tables (:func:`flatten`)."""

    groups: dict[int, dict[Mu, _StoredGroup]]
    discovery: dict[int, _StoredGroup]
    taken: list[tuple[Event, int]]
    checks: list[tuple[Check, int]]


def _unwrap(pattern: EventPattern) -> EventPattern:
    while isinstance(pattern, Within | PartitionBy):
        pattern = pattern.pattern
    return pattern


def _by_stream(events: Iterable[Event]) -> Instant:
    at: Instant = {}
    for event in events:
        at.setdefault(event.stream, []).append(event)
    return at


def _join(left: frozenset[Mu], right: frozenset[Mu]) -> frozenset[Mu]:
    """``Ω1 ⋈ Ω2`` (Def. 5)."""
    return frozenset(a.join(b) for a in left for b in right if a.compatible(b))


def _ordered(results: list[Result]) -> list[Result]:
    """Results in time order (a partition found late may add earlier ones)."""
    return sorted(results, key=lambda r: r.time)


def _stored(forms: LiteralForms, term: object) -> object:
    """A term as pyoxigraph compares it in a pattern: a literal by its stored form."""
    return forms.stored_form(term) if isinstance(term, Literal) else term
