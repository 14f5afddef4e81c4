"""The automaton of a SPAseq sequence: SPAseq's NFA_scep (Sect. 6) with Flink CEP's edges.

SPAseq Def. 17: an NFA_scep automaton ``A = (X, E, Θ, φ, x0, xf)`` has states ``X``, edges
``E`` labelled (``φ``) with state-transition predicates ``θ = (U, op, P)`` (stream names,
temporal operator, graph pattern) from the initial state ``x0`` to the final state ``xf``.
Each instance, a *run*, holds the mappings of the events it took; a run that reaches ``xf``
is a match. rsep gives every edge one of Flink CEP's three kinds (``NFACompiler``), which
say what happens to the event:

- ``TAKE``: the event matches ``θ``; the run binds its mappings and moves to the target
  (SPAseq's ordinary edges; a Kleene edge whose target is its source loops). A ``TAKE``
  into the ``stop`` state discards the run (a negated step's event occurred).
- ``IGNORE``: the run skips the event and stays (SPAseq's ``({U}, ;, ∅)`` loop of Fig. 7).
  Skip-till-next ignores only events that take no ``TAKE`` edge of the state; skip-till-any
  ignores any event, so a run that can take an event also forks a copy that skips it.
  Strict contiguity has no ``IGNORE`` edge.
- ``PROCEED``: the run moves without consuming the event (SPAseq's ε-transition of
  App. C.4: past an optional step; past a negated last step once the WITHIN bound has
  passed).

An event that a run can neither take, ignore nor proceed past discards the run (strict
contiguity, Def. 12); an event that matches a ``TAKE`` into ``stop`` discards it whatever
its other edges (the negated event lies between the neighbouring steps, CQELS-CEP's
``[t3, t4] ⊆ [t2, t5]``). Conjunction and disjunction are SPAseq's states with several edges to
one target (Fig. 8, 9): a disjunction state moves on when one edge matches; a conjunction
state when every edge is matched by events of one timestamp, which SPAseq evaluates
lazily: buffer events of the timestamp until there are as many as edges, then match the
cheapest patterns first (Sect. 7.3, App. D). A negated step adds, to the state that waits
for the next step, a ``TAKE`` into ``stop`` (no compatible matching event may occur before
the next step: CQELS-CEP's SEQ_WO; NO_HEAD when first, which makes runs start at each
window's opening; NO_TAIL when last, which needs WITHIN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    KleenePlus,
    Negation,
    Optional,
    PartitionBy,
    Sequence,
    Strategy,
    Within,
)
from rsep.errors import UserError
from rsep.rdf.time import format_duration

__all__ = [
    "Guard",
    "Nfa",
    "NfaCompileError",
    "Op",
    "State",
    "StateKind",
    "Transition",
    "TransitionKind",
    "When",
    "compile_nfa",
]


class NfaCompileError(UserError):
    """A pattern the NFA compiler does not take, with the reason."""


class StateKind(Enum):
    """SPAseq's state types (Sect. 6.1): initial, ordinary, final; plus Flink's stop state,
    where a run that met a negated event goes to die."""

    START = "start"
    NORMAL = "normal"
    FINAL = "final"
    STOP = "stop"

    def __str__(self) -> str:
        return self.value


class TransitionKind(Enum):
    """Flink CEP's edge kinds (``StateTransitionAction``): what a run does with an event."""

    TAKE = "take"
    IGNORE = "ignore"
    PROCEED = "proceed"

    def __str__(self) -> str:
        return self.value


class Op(Enum):
    """The ``op`` of a state-transition predicate (SPAseq Def. 17: ``{&, +, |, ;} ∪ {∅}``;
    App. C.4 adds ``?`` and ``!``; rsep writes skip-till-any ``:``, which SPAseq folds into
    ``;``)."""

    NONE = "∅"
    SKIP = ";"
    SKIP_ANY = ":"
    KLEENE = "+"
    CONJUNCTION = "&"
    DISJUNCTION = "|"
    OPTIONAL = "?"
    NEGATION = "!"

    def __str__(self) -> str:
        return self.value


class When(Enum):
    """When an edge applies to an event on one of its streams ``U``.

    - ``MATCH``: the event's graph matches ``P``, compatibly with the run's mappings;
    - ``NO_TAKE``: no ``TAKE`` edge of the state applies (skip-till-next's ignore);
    - ``ANY``: always (skip-till-any's ignore);
    - ``ALWAYS``: an ε-edge, taken without an event (optional steps);
    - ``WINDOW_END``: an ε-edge taken once the run's WITHIN bound has passed (a negated last
      step: nothing happened in time).
    """

    MATCH = "match"
    NO_TAKE = "no_take"
    ANY = "any"
    ALWAYS = "always"
    WINDOW_END = "window_end"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Guard:
    """A state-transition predicate ``θ = (U, op, P)`` (SPAseq Def. 17): the streams ``U``,
    the operator, the GPM whose pattern ``P`` the event must match (``None``: ``∅``, no
    pattern) and :class:`When` the edge applies."""

    streams: frozenset[str]
    op: Op
    gpm: Gpm | None = None
    when: When = When.MATCH


@dataclass(frozen=True)
class State:
    """A state of the automaton (SPAseq Sect. 6.1)."""

    name: str
    kind: StateKind = StateKind.NORMAL


@dataclass(frozen=True)
class Transition:
    """An edge ``source → target`` of kind ``kind`` labelled ``guard`` (SPAseq's ``φ(e)``)."""

    kind: TransitionKind
    source: str
    target: str
    guard: Guard


@dataclass(frozen=True)
class Nfa:
    """An NFA_scep automaton (SPAseq Def. 17), edges typed as in Flink CEP.

    ``within`` is the WITHIN bound in ms (runs older than it are dropped, Algorithm 2,
    lines 3-5); ``partition_by`` the variables runs are keyed by; ``eager_start`` says that
    runs wait in the start state from each window's opening (a leading negated step needs
    to see the events before the first match), instead of being created by the first
    event they take (Algorithm 2, lines 19-22). ``label`` is the sequence it was compiled
    from, for listings.
    """

    states: tuple[State, ...]
    transitions: tuple[Transition, ...]
    within: int | None = None
    partition_by: tuple[str, ...] = ()
    eager_start: bool = False
    label: str = ""
    _by_name: dict[str, State] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_name: dict[str, State] = {}
        for state in self.states:
            if state.name in by_name:
                raise ValueError(f"two states named {state.name!r}")
            by_name[state.name] = state
        for kind in (StateKind.START, StateKind.FINAL):
            count = sum(s.kind is kind for s in self.states)
            if count != 1:
                raise ValueError(f"an NFA has exactly one {kind} state, not {count}")
        for t in self.transitions:
            for end in (t.source, t.target):
                if end not in by_name:
                    raise ValueError(f"transition {t} names an unknown state {end!r}")
        object.__setattr__(self, "_by_name", by_name)

    def state(self, name: str) -> State:
        """The state named ``name``."""
        return self._by_name[name]

    @property
    def start(self) -> State:
        """The initial state ``x0``."""
        return next(s for s in self.states if s.kind is StateKind.START)

    @property
    def final(self) -> State:
        """The final (accepting) state ``xf``."""
        return next(s for s in self.states if s.kind is StateKind.FINAL)

    def outgoing(self, name: str) -> tuple[Transition, ...]:
        """The edges leaving state ``name``, in listing order."""
        return tuple(t for t in self.transitions if t.source == name)

    @property
    def conjunction_states(self) -> frozenset[str]:
        """The states whose edges form a conjunction (``&``), evaluated lazily."""
        return frozenset(t.source for t in self.transitions if t.guard.op is Op.CONJUNCTION)

    @property
    def streams(self) -> tuple[str, ...]:
        """Every stream an edge reads, in order of first appearance."""
        seen: dict[str, None] = {}
        for t in self.transitions:
            if t.guard.gpm is not None:
                seen.setdefault(t.guard.gpm.stream, None)
        for t in self.transitions:
            for stream in sorted(t.guard.streams):
                seen.setdefault(stream, None)
        return tuple(seen)

    def render(self) -> str:
        """A readable listing of streams, states and edges (used by ``rsep explain``)."""
        labels = {stream: f"u{i}" for i, stream in enumerate(self.streams, start=1)}
        head = "NFA_scep"
        if self.label:
            head += f" {self.label}"
        extras = []
        if self.within is not None:
            extras.append(f"within {format_duration(self.within)}")
        if self.partition_by:
            extras.append("partition by " + " ".join("?" + v for v in self.partition_by))
        if self.eager_start:
            extras.append("runs start at each window opening")
        if extras:
            head += " (" + "; ".join(extras) + ")"
        lines = [head, "  streams"]
        lines += [f"    {label} = <{stream}>" for stream, label in labels.items()]
        lines.append("  states")
        conjunctions = self.conjunction_states
        for state in self.states:
            note = "" if state.kind is StateKind.NORMAL else str(state.kind)
            if state.name in conjunctions:
                note = (note + ", " if note else "") + "conjunction, evaluated lazily"
            lines.append(f"    {state.name:<4} {note}".rstrip())
        lines.append("  transitions")
        rows = [
            (f"{t.source} -{t.kind}-> {t.target}", _guard_text(t.guard, labels))
            for t in self.transitions
        ]
        width = max((len(edge) for edge, _ in rows), default=0)
        lines += [f"    {edge:<{width}}  {guard}" for edge, guard in rows]
        return "\n".join(lines)


def _guard_text(guard: Guard, labels: dict[str, str]) -> str:
    if guard.when is When.ALWAYS:
        return "ε"
    if guard.when is When.WINDOW_END:
        return "ε once the WITHIN bound has passed"
    streams = ", ".join(sorted((labels[s] for s in guard.streams), key=lambda u: int(u[1:])))
    pattern = guard.gpm.name if guard.gpm is not None else "∅"
    text = f"({{{streams}}}, {guard.op}, {pattern})"
    if guard.when is When.NO_TAKE:
        text += " unless a take edge matches"
    elif guard.when is When.ANY:
        text += " any event: the run also forks"
    return text


# Compilation ---------------------------------------------------------------------------

_PERMISSIVE = {Strategy.STRICT: 0, Strategy.SKIP_TILL_NEXT: 1, Strategy.SKIP_TILL_ANY: 2}
_TAKE_OP = {
    Strategy.STRICT: Op.NONE,
    Strategy.SKIP_TILL_NEXT: Op.SKIP,
    Strategy.SKIP_TILL_ANY: Op.SKIP_ANY,
}
_EPSILON = Guard(frozenset(), Op.NONE, None, When.ALWAYS)


def _gpm(step: EventPattern, what: str) -> Gpm:
    if not isinstance(step, Gpm):
        raise NfaCompileError(
            f"{what} applies to a graph pattern matching expression (SPAseq Def. 4), "
            f"not to {type(step).__name__}"
        )
    return step


def _streams(step: EventPattern) -> list[str]:
    if isinstance(step, Gpm):
        return [step.stream]
    if isinstance(step, KleenePlus | Negation | Optional):
        return _streams(step.step)
    if isinstance(step, Conjunction | Disjunction):
        return [s for operand in step.operands for s in _streams(operand)]
    return []


class _Builder:
    def __init__(self, universe: frozenset[str]) -> None:
        self.universe = universe
        self.states: list[State] = [State("x0", StateKind.START)]
        self.transitions: list[Transition] = []
        self.count = 0

    def new_state(self, name: str | None = None) -> str:
        if name is None:
            self.count += 1
            name = f"x{self.count}"
        self.states.append(State(name))
        return name

    def edge(self, kind: TransitionKind, source: str, target: str, guard: Guard) -> None:
        self.transitions.append(Transition(kind, source, target, guard))

    def take(self, source: str, target: str, gpm: Gpm, op: Op) -> None:
        self.edge(TransitionKind.TAKE, source, target, Guard(frozenset({gpm.stream}), op, gpm))

    def ignore(self, state: str, strategy: Strategy | None) -> None:
        if strategy is None or strategy is Strategy.STRICT:
            return
        if strategy is Strategy.SKIP_TILL_NEXT:
            guard = Guard(self.universe, Op.SKIP, None, When.NO_TAKE)
        else:
            guard = Guard(self.universe, Op.SKIP_ANY, None, When.ANY)
        self.edge(TransitionKind.IGNORE, state, state, guard)

    def kill(self, state: str, negated: list[Gpm]) -> None:
        for gpm in negated:
            self.take(state, "stop", gpm, Op.NEGATION)


def _unwrap(pattern: EventPattern) -> tuple[EventPattern, int | None, tuple[str, ...]]:
    within: int | None = None
    partition: tuple[str, ...] = ()
    while isinstance(pattern, Within | PartitionBy):
        if isinstance(pattern, Within):
            if within is not None:
                raise NfaCompileError("WITHIN is given twice")
            within = pattern.duration
        else:
            if partition:
                raise NfaCompileError("PARTITION BY is given twice")
            partition = pattern.by
        pattern = pattern.pattern
    return pattern, within, partition


def compile_nfa(pattern: EventPattern) -> Nfa:
    """Compile a SPAseq sequence expression into its NFA_scep (SPAseq Sect. 6.2).

    ``pattern`` is a :class:`Sequence` or a single step, possibly wrapped in
    :class:`Within` and :class:`PartitionBy`. Each step waits in one state: a GPM is one
    ``TAKE`` to the next state (Fig. 4, 6); a Kleene+ step adds a ``TAKE`` looping on its
    state (Fig. 3, 5) or, when its iterations follow another strategy than the one before
    it, a loop state left by ``PROCEED``; conjunction and disjunction are several ``TAKE``
    edges to one target (Fig. 8, 9); an optional step adds a ``PROCEED`` (Fig. 24). The
    strategy before a step adds the ``IGNORE`` loop of its state (Fig. 7, 10). A negated
    step adds ``TAKE`` edges into ``stop`` to the state that waits for the next step, whose
    strategy is then the more permissive of the two around the negation.
    """
    core, within, partition = _unwrap(pattern)
    if isinstance(core, Sequence):
        steps, strategies = core.steps, core.strategies
        label = str(core)
    else:
        steps, strategies = (core,), ()
        label = str(Sequence((core,), ()))
    if all(isinstance(step, Negation) for step in steps):
        raise NfaCompileError("a sequence needs at least one step that is not negated")
    universe = frozenset(s for step in steps for s in _streams(step))
    if not universe:
        raise NfaCompileError(f"{label} reads no stream: its steps must be GPM expressions")
    b = _Builder(universe)
    current = "x0"
    pending: list[Gpm] = []  # negated steps not yet attached
    before: Strategy | None = None  # the strategy in front of the waiting state
    eager = False
    for index, step in enumerate(steps):
        if index > 0:
            here = strategies[index - 1]
            if pending and before is not None:
                here = max(before, here, key=_PERMISSIVE.__getitem__)
            before = here
        if isinstance(step, Negation):
            if index == 0:
                eager = True
            if index + 1 < len(steps) and isinstance(steps[index + 1], Optional):
                raise NfaCompileError("a negated step just before an optional one is ambiguous")
            pending.append(_gpm(step.step, "negation '!'"))
            continue
        if pending and isinstance(step, Optional):
            raise NfaCompileError("an optional step right after a negated one is ambiguous")
        target = b.new_state()
        if isinstance(step, Gpm):
            b.take(current, target, step, _TAKE_OP[before] if before else Op.NONE)
        elif isinstance(step, KleenePlus):
            gpm = _gpm(step.step, "Kleene+ '+'")
            inherited = before if before is not None else Strategy.STRICT
            iteration = step.strategy if step.strategy is not None else inherited
            if iteration is inherited:
                b.take(current, current, gpm, Op.KLEENE)
                b.take(current, target, gpm, Op.KLEENE)
            else:
                loop = b.new_state(f"{current}'")
                b.take(current, loop, gpm, Op.KLEENE)
                b.take(loop, loop, gpm, Op.KLEENE)
                b.ignore(loop, iteration)
                b.edge(TransitionKind.PROCEED, loop, target, _EPSILON)
        elif isinstance(step, Conjunction | Disjunction):
            what = "conjunction '&'" if isinstance(step, Conjunction) else "disjunction '|'"
            op = Op.CONJUNCTION if isinstance(step, Conjunction) else Op.DISJUNCTION
            for operand in step.operands:
                b.take(current, target, _gpm(operand, what), op)
        elif isinstance(step, Optional):
            b.take(current, target, _gpm(step.step, "optional '?'"), Op.OPTIONAL)
            b.edge(TransitionKind.PROCEED, current, target, _EPSILON)
        else:
            raise NfaCompileError(
                f"{type(step).__name__} is not a SPAseq sequence step "
                "(GPM, GPM+, GPM?, !GPM, GPM & GPM, GPM | GPM)"
            )
        b.kill(current, pending)
        b.ignore(current, before)
        pending = []
        current = target
    if pending:
        if within is None:
            raise NfaCompileError(
                "a negated last step needs WITHIN: the match is only known once the window "
                "has passed without the negated event (CQELS-CEP's NO_TAIL)"
            )
        target = b.new_state()
        b.kill(current, pending)
        b.ignore(current, before)
        b.edge(
            TransitionKind.PROCEED,
            current,
            target,
            Guard(frozenset(), Op.NONE, None, When.WINDOW_END),
        )
        current = target
    return _finish(b, current, within, partition, eager, label)


def _finish(
    b: _Builder,
    final: str,
    within: int | None,
    partition: tuple[str, ...],
    eager: bool,
    label: str,
) -> Nfa:
    rename = {final: "xf"}

    def position(state: State) -> tuple[int, int]:
        base = state.name.rstrip("'")
        return (int(base[1:]), len(state.name) - len(base))

    states = [
        State(rename.get(s.name, s.name), StateKind.FINAL if s.name == final else s.kind)
        for s in sorted(b.states, key=position)
    ]
    if any(t.target == "stop" for t in b.transitions):
        states.append(State("stop", StateKind.STOP))
    transitions = [
        Transition(t.kind, rename.get(t.source, t.source), rename.get(t.target, t.target), t.guard)
        for t in b.transitions
    ]
    order = {s.name: i for i, s in enumerate(states)}
    transitions.sort(key=lambda t: order[t.source])
    return Nfa(tuple(states), tuple(transitions), within, partition, eager, label)
