"""The automaton of a SPAseq sequence: SPAseq's NFA_scep (Sect. 6) with Flink CEP's edges.

SPAseq Def. 17: an NFA_scep automaton ``A = (X, E, Θ, φ, x0, xf)`` has states ``X``, edges
``E`` labelled (``φ``) with state-transition predicates ``θ = (U, op, P)`` (stream names,
temporal operator, pattern) from the initial state ``x0`` to the final state ``xf``. Each
instance, a *run*, holds the mappings of the events it took; a run that reaches ``xf`` is a
match. rsep gives every edge one of Flink CEP's three kinds (``NFACompiler``), which say
what happens to the event:

- ``TAKE``: the event matches ``θ``'s pattern ``P`` (a GPM, or a conjunction or disjunction
  of them: SPAseq's BOp, Def. 4) under the run's mappings; the run binds the solutions and
  moves to the target (a Kleene edge whose target is its source loops). A ``TAKE`` into the
  ``stop`` state is a negated step: a matching event between the neighbouring steps drops
  the mappings it matches.
- ``IGNORE``: the run skips the event and stays (SPAseq's ``({U}, ;, ∅)`` loop of Fig. 7).
  Skip-till-next ignores only events that take no ``TAKE`` edge of the state; skip-till-any
  ignores any event, so a run that can take an event also forks a copy that skips it.
  Strict contiguity has no ``IGNORE`` edge: the run must take the streamset's next event.
- ``PROCEED``: the run forks a copy into the target without consuming an event (SPAseq's
  ε-transition of App. C.4): past an optional step read as absent, out of a Kleene loop,
  and past a negated last step once the window has ended.

Every state but ``xf`` and ``stop`` waits for one pattern under one strategy, so the
automaton is exactly the oracle's definitions (``rsep.semantics.spaseq``, docs/semantics.md
"SPAseq"): Defs. 10-12 are the three ``IGNORE`` shapes; Kleene+ (Defs. 13-14) loops on its
state when its iterations follow the strategy in front of it (Fig. 3, 5, 10), else in a loop
state of its own left by ``PROCEED``; an optional step ``N?`` is App. B.0.2's
``⟦N⟧ ∪ ⟦N!⟧``: a ``TAKE`` of ``N`` and a ``PROCEED`` to a state that waits for the next step
with ``N`` negated; a negated step's ``TAKE`` into ``stop`` stands on the state that waits for
the next positive step, whose strategy is then the most permissive of those written between
the two (CQELS-CEP's SEQ_WO; NO_HEAD when first, which makes runs wait from each window's
opening; NO_TAIL when last, a state that ignores every other event until the window ends
and needs WITHIN). What the runtime must do beyond the edges (the negated pattern is
checked under the whole match's mapping, strictly between the neighbours; Def. 16's
tumbling windows; a run holds a *set* of mappings) is in :mod:`rsep.engine.automaton`.
Conjunction and disjunction keep their operands on one edge (SPAseq's Fig. 8 and 9 draw one
edge per operand): a conjunction is matched by events of one timestamp, evaluated lazily
(Sect. 7.3, App. D).
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
    Sequence,
    Strategy,
    check_bop,
    unwrap_bounds,
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
    "pattern_streams",
]


class NfaCompileError(UserError):
    """A pattern the NFA compiler does not take, with the reason."""


class StateKind(Enum):
    """SPAseq's state types (Sect. 6.1): initial, ordinary, final; plus Flink's stop state,
    the target of a negated step's edges."""

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

    - ``MATCH``: the event's graph matches ``P``, under the run's mappings;
    - ``NO_TAKE``: no ``TAKE`` edge of the state applies (skip-till-next's ignore);
    - ``ANY``: always (skip-till-any's ignore; a negated last step's wait);
    - ``ALWAYS``: an ε-edge, taken without an event (optional steps, Kleene loops);
    - ``WINDOW_END``: an ε-edge taken once the run's window has ended (a negated last step:
      nothing happened in time).
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
    the operator, the pattern ``P`` the event must match (a GPM, or a conjunction or
    disjunction of them; ``None``: ``∅``, no pattern) and :class:`When` the edge applies."""

    streams: frozenset[str]
    op: Op
    pattern: EventPattern | None = None
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

    ``within`` is the WITHIN duration ω in ms: a match lies in one of Def. 16's tumbling
    windows ``[t0 + kω, t0 + (k+1)ω]`` (``t0`` is the plan's ``window.t0``); ``partition_by``
    the variables runs are keyed by; ``eager_start`` says that a negated step comes first,
    so runs wait in the start state from each window's opening (NO_HEAD looks back to
    it). ``label`` is the sequence it was compiled from, for listings.
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
            if t.guard.pattern is not None:
                for stream in pattern_streams(t.guard.pattern):
                    seen.setdefault(stream, None)
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
        takes = {t.source for t in self.transitions if t.kind is TransitionKind.TAKE}
        rows = [
            (f"{t.source} -{t.kind}-> {t.target}", _guard_text(t.guard, labels, t.source in takes))
            for t in self.transitions
        ]
        width = max((len(edge) for edge, _ in rows), default=0)
        lines += [f"    {edge:<{width}}  {guard}" for edge, guard in rows]
        return "\n".join(lines)


def _guard_text(guard: Guard, labels: dict[str, str], forks: bool) -> str:
    if guard.when is When.ALWAYS:
        return "ε"
    if guard.when is When.WINDOW_END:
        return "ε once the window has ended"
    streams = ", ".join(sorted((labels[s] for s in guard.streams), key=lambda u: int(u[1:])))
    pattern = _label(guard.pattern) if guard.pattern is not None else "∅"
    text = f"({{{streams}}}, {guard.op}, {pattern})"
    if guard.when is When.NO_TAKE:
        text += " unless a take edge matches"
    elif guard.when is When.ANY:
        text += " any event: the run also forks" if forks else " any event"
    return text


def _label(pattern: EventPattern) -> str:
    """A BOp as the query writes it: a GPM's name, ``(A & B)``, ``(A | B)``."""
    if isinstance(pattern, Gpm):
        return pattern.name
    if isinstance(pattern, Conjunction):
        return "(" + " & ".join(_label(p) for p in pattern.operands) + ")"
    if isinstance(pattern, Disjunction):
        return "(" + " | ".join(_label(p) for p in pattern.operands) + ")"
    return type(pattern).__name__


def pattern_streams(pattern: EventPattern) -> tuple[str, ...]:
    """The streams a BOp reads (its GPMs' streams, in order)."""
    if isinstance(pattern, Gpm):
        return (pattern.stream,)
    if isinstance(pattern, Conjunction | Disjunction):
        out: dict[str, None] = {}
        for operand in pattern.operands:
            out.update(dict.fromkeys(pattern_streams(operand)))
        return tuple(out)
    raise NfaCompileError(f"{type(pattern).__name__} is not a BOp expression (SPAseq Def. 4)")


# Compilation ---------------------------------------------------------------------------

_PERMISSIVE = {Strategy.STRICT: 0, Strategy.SKIP_TILL_NEXT: 1, Strategy.SKIP_TILL_ANY: 2}
_TAKE_OP = {
    Strategy.STRICT: Op.NONE,
    Strategy.SKIP_TILL_NEXT: Op.SKIP,
    Strategy.SKIP_TILL_ANY: Op.SKIP_ANY,
}
_EPSILON = Guard(frozenset(), Op.NONE, None, When.ALWAYS)


def _streams(step: EventPattern) -> list[str]:
    """The streams of the GPMs in a step, in order."""
    return list(dict.fromkeys(n.stream for n in step.walk() if isinstance(n, Gpm)))


_Key = tuple[int, tuple[EventPattern, ...], tuple[Strategy, ...], bool]


class _Builder:
    """Builds the states of a sequence position by position: a state waits for the next
    positive step under the strategies written since the last one, with the negated steps
    met since then (the oracle's readings of the optional steps, shared where they meet)."""

    def __init__(
        self,
        steps: tuple[EventPattern, ...],
        strategies: tuple[Strategy, ...],
        within: int | None,
    ) -> None:
        self.steps = steps
        self.strategies = strategies
        self.within = within
        self.universe = frozenset(s for step in steps for s in _streams(step))
        self.states: list[State] = []
        self.transitions: list[Transition] = []
        self.count = -1
        self.memo: dict[_Key, str | None] = {}

    def new_state(self, name: str | None = None) -> str:
        if name is None:
            self.count += 1
            name = f"x{self.count}"
        self.states.append(State(name, StateKind.START if not self.states else StateKind.NORMAL))
        return name

    def edge(self, kind: TransitionKind, source: str, target: str, guard: Guard) -> None:
        self.transitions.append(Transition(kind, source, target, guard))

    def take(self, source: str, target: str, pattern: EventPattern, op: Op) -> None:
        guard = Guard(frozenset(pattern_streams(pattern)), op, pattern)
        self.edge(TransitionKind.TAKE, source, target, guard)

    def ignore(self, state: str, strategy: Strategy | None) -> None:
        if strategy is None or strategy is Strategy.STRICT:
            return
        if strategy is Strategy.SKIP_TILL_NEXT:
            guard = Guard(self.universe, Op.SKIP, None, When.NO_TAKE)
        else:
            guard = Guard(self.universe, Op.SKIP_ANY, None, When.ANY)
        self.edge(TransitionKind.IGNORE, state, state, guard)

    def kill(self, state: str, negated: tuple[EventPattern, ...]) -> None:
        for pattern in negated:
            self.take(state, "stop", pattern, Op.NEGATION)

    def wait(
        self,
        index: int,
        pending: tuple[EventPattern, ...],
        stretch: tuple[Strategy, ...],
        positive: bool,
    ) -> str | None:
        """The state that waits at position ``index`` (``None``: this reading has no
        positive step and matches nothing, App. B)."""
        key = (index, pending, stretch, positive)
        if key not in self.memo:
            self.memo[key] = self._wait(index, pending, stretch, positive)
        return self.memo[key]

    def _wait(
        self,
        index: int,
        pending: tuple[EventPattern, ...],
        stretch: tuple[Strategy, ...],
        positive: bool,
    ) -> str | None:
        if index == len(self.steps):
            return self._end(pending, positive)
        step = self.steps[index]
        if positive and index > 0:
            stretch = (*stretch, self.strategies[index - 1])
        strategy = max(stretch, key=_PERMISSIVE.__getitem__) if positive else None
        if isinstance(step, Negation):
            negated = check_bop(step.step, "negation '!'", NfaCompileError)
            return self.wait(index + 1, (*pending, negated), stretch, positive)
        state = self.new_state()
        if isinstance(step, Optional):
            present = check_bop(step.step, "optional '?'", NfaCompileError)
            after = self.wait(index + 1, (), (), True)
            assert after is not None
            self.take(state, after, present, Op.OPTIONAL)
            self.kill(state, pending)
            self.ignore(state, strategy)
            absent = self.wait(index + 1, (*pending, present), stretch, positive)
            if absent is not None:
                self.edge(TransitionKind.PROCEED, state, absent, _EPSILON)
            return state
        if isinstance(step, KleenePlus):
            self._kleene(state, index, step, pending, strategy)
            return state
        if not isinstance(step, Gpm | Conjunction | Disjunction):
            raise NfaCompileError(
                f"{type(step).__name__} is not a SPAseq sequence step "
                "(GPM, GPM+, GPM?, !GPM, GPM & GPM, GPM | GPM)"
            )
        pattern = check_bop(step, "a sequence step", NfaCompileError)
        after = self.wait(index + 1, (), (), True)
        assert after is not None
        if isinstance(pattern, Conjunction):
            op = Op.CONJUNCTION
        elif isinstance(pattern, Disjunction):
            op = Op.DISJUNCTION
        else:
            op = _TAKE_OP[strategy] if strategy is not None else Op.NONE
        self.take(state, after, pattern, op)
        self.kill(state, pending)
        self.ignore(state, strategy)
        return state

    def _kleene(
        self,
        state: str,
        index: int,
        step: KleenePlus,
        pending: tuple[EventPattern, ...],
        strategy: Strategy | None,
    ) -> None:
        """Kleene+ (Defs. 13-14): iterations follow ``step.strategy``, else the strategy in
        front of the step (Fig. 10), else strict contiguity when the step comes first
        (Fig. 5). The iterations loop on ``state`` when they wait as its own runs do and no
        negated step stands before it (Fig. 3, 5, 10); else in a loop state ``x'`` of their
        own, left by ``PROCEED``."""
        inner = check_bop(step.step, "Kleene+ '+'", NfaCompileError)
        inherited = strategy if strategy is not None else Strategy.STRICT
        again = step.strategy if step.strategy is not None else inherited
        # a run that took no event yet waits on every event of its window whatever the
        # state's strategy (the runtime's rule), so a first state may take the iterations'
        if not pending and (again is inherited or strategy is None):
            after = self.wait(index + 1, (), (), True)
            assert after is not None
            self.take(state, state, inner, Op.KLEENE)
            self.take(state, after, inner, Op.KLEENE)
            self.ignore(state, again)
            return
        loop = self.new_state(f"{state}'")
        after = self.wait(index + 1, (), (), True)
        assert after is not None
        self.take(state, loop, inner, _TAKE_OP[strategy] if strategy is not None else Op.NONE)
        self.kill(state, pending)
        self.ignore(state, strategy)
        self.take(loop, loop, inner, Op.KLEENE)
        self.ignore(loop, again)
        self.edge(TransitionKind.PROCEED, loop, after, _EPSILON)

    def _end(self, pending: tuple[EventPattern, ...], positive: bool) -> str | None:
        """After the last step: the final state, or a state that waits for the window's
        end with the negated last steps (NO_TAIL)."""
        if not positive:
            return None
        if not pending:
            return "xf"
        if self.within is None:
            raise NfaCompileError(
                "a negated last step needs WITHIN: the match is only known once the window "
                "has passed without the negated event (CQELS-CEP's NO_TAIL)"
            )
        state = self.new_state()
        self.kill(state, pending)
        self.edge(
            TransitionKind.IGNORE, state, state, Guard(self.universe, Op.NONE, None, When.ANY)
        )
        self.edge(
            TransitionKind.PROCEED,
            state,
            "xf",
            Guard(frozenset(), Op.NONE, None, When.WINDOW_END),
        )
        return state


def _unwrap(pattern: EventPattern) -> tuple[EventPattern, int | None, tuple[str, ...]]:
    try:
        return unwrap_bounds(pattern)
    except ValueError as exc:
        raise NfaCompileError(str(exc)) from None


def compile_nfa(pattern: EventPattern) -> Nfa:
    """Compile a SPAseq sequence expression into its NFA_scep (SPAseq Sect. 6.2).

    ``pattern`` is a :class:`Sequence` or a single step, possibly wrapped in
    :class:`Within` and :class:`PartitionBy`. Each positive step waits in one state: a BOp
    is one ``TAKE`` to the next state (Fig. 4, 6, 8, 9); a Kleene+ step a ``TAKE`` looping
    on its state and one to the next (Fig. 3, 5, 10), or a loop state left by ``PROCEED``
    when its iterations wait otherwise; an optional step a ``TAKE`` and a ``PROCEED`` to
    the reading without it (App. B.0.2). The strategy before a step adds the ``IGNORE``
    loop of its state (Fig. 7, 10). A negated step adds ``TAKE`` edges into ``stop`` to
    the state that waits for the next positive step, whose strategy is then the most
    permissive of those written between the two; after the last step, a state that waits
    for the window's end.
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
    b = _Builder(steps, strategies, within)
    if not b.universe:
        raise NfaCompileError(f"{label} reads no stream: its steps must be GPM expressions")
    start = b.wait(0, (), (), False)
    if start is None:
        raise NfaCompileError("a sequence needs at least one step that is not negated")
    eager = isinstance(steps[0], Negation)
    return _finish(b, within, partition, eager, label)


def _finish(
    b: _Builder,
    within: int | None,
    partition: tuple[str, ...],
    eager: bool,
    label: str,
) -> Nfa:
    def position(state: State) -> tuple[int, int]:
        base = state.name.rstrip("'")
        return (int(base[1:]), len(state.name) - len(base))

    states = sorted(b.states, key=position)
    states.append(State("xf", StateKind.FINAL))
    if any(t.target == "stop" for t in b.transitions):
        states.append(State("stop", StateKind.STOP))
    order = {s.name: i for i, s in enumerate(states)}
    transitions = sorted(b.transitions, key=lambda t: order[t.source])
    return Nfa(tuple(states), tuple(transitions), within, partition, eager, label)
