"""A SPAseq query evaluated column-wise: batches of events in, results out (SPAseq Defs.
7-16), with the GPMs matched as joins over each batch (:mod:`rsep.engine.pattern`) and the
sequence run by the compiled automaton (:mod:`rsep.engine.automaton`).

Per batch: the events of the query's streams (``FROM STREAM``, choice 8) are kept; each
GPM's solutions are computed once over the whole batch; with ``PARTITION BY`` each event
gets the key values of its GPMs' solutions alone (choice 9) and goes to those partitions,
an event without a key to every partition (its instants still break strict contiguity);
the automaton runs each partition's instants in time order, carrying its runs to the next
batch. Matches become event mappings ``(μ, t1, t2)`` and go through the query form and
streaming operator (:class:`rsep.engine.projection.Output`), so the results are the
oracle's.

Plans this engine takes: a sequence of GPMs (conjunctions, disjunctions, Kleene+, negated
and optional steps) under ``,`` ``;`` ``:`` with ``WITHIN`` and ``PARTITION BY``. A GPM
that is a basic graph pattern with FILTERs the programs compile (and a ``GRAPH`` part of
the same kind) is matched by joins; any other is evaluated by pyoxigraph under each run's
values of the variables it names (the exact path, counted). :func:`columnar_reason` says
why a plan is not taken.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from numba import njit
from pyoxigraph import Triple

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
    unwrap_bounds,
)
from rsep.algebra.gpm import expression_variables, no_key_alone, pattern_variables
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, EventJoin, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.engine import automaton
from rsep.engine.batch import TripleBatch, batches_of
from rsep.engine.continuous import TimeVarying, background_source
from rsep.engine.expression import BOUND, PUSH_VAR, comparison_operands, evaluate_rows
from rsep.engine.pattern import (
    CompiledGpm,
    Filter,
    KnowledgeBase,
    Solutions,
    compile_gpm,
    solutions,
)
from rsep.engine.projection import Answer, Output
from rsep.engine.query import IncrementalQuery
from rsep.engine.terms import KIND_LITERAL, TermDictionary
from rsep.errors import UserError
from rsep.lang.printer import to_sparql
from rsep.rdf.event import Event
from rsep.rdf.formats._common import no_collection
from rsep.rdf.results import Result, SelectResult
from rsep.rdf.sparql import GraphMatcher, LiteralForms, Mu
from rsep.rdf.terms import to_nt
from rsep.reasoning.closure import entail_batch
from rsep.reasoning.regime import engine_closure
from rsep.semantics.graph import versions

__all__ = ["SequenceQuery", "Stats", "columnar_reason", "describe"]

_STRATEGY = {
    Strategy.STRICT: automaton.STRICT,
    Strategy.SKIP_TILL_NEXT: automaton.NEXT,
    Strategy.SKIP_TILL_ANY: automaton.ANY,
}


_KINDS = {
    "KleenePlus": "Kleene+ (SPAseq Def. 13)",
    "Conjunction": "a conjunction (SPAseq Def. 8)",
    "Disjunction": "a disjunction (SPAseq Def. 9)",
}

_PERMISSIVE = {Strategy.STRICT: 0, Strategy.SKIP_TILL_NEXT: 1, Strategy.SKIP_TILL_ANY: 2}


@dataclass
class Stats:
    """What a run did: events read, partitions, matches, and the solution rows whose
    FILTER the programs could not decide (evaluated exactly)."""

    events: int = 0
    partitions: int = 0
    matches: int = 0
    inexact_rows: int = 0


@dataclass(frozen=True)
class _Step:
    """A positive step of the sequence as the kernel runs it: its operands (indices of the
    query's distinct GPMs), whether they form a conjunction (else one GPM or a
    disjunction), whether it is Kleene+, the strategy in front of it and between its
    iterations."""

    operands: tuple[int, ...]
    conjunction: bool
    kleene: bool
    strategy: Strategy
    again: Strategy


@dataclass(frozen=True)
class _Negated:
    """A negated BOp (SPAseq App. B.0.1): a GPM or a conjunction of GPMs (``operands``;
    a negated disjunction is one item per operand) and the gap it stands in: before
    positive step ``gap`` (0: CQELS-CEP's NO_HEAD), or after the last (NO_TAIL)."""

    gap: int
    operands: tuple[int, ...]


@dataclass(frozen=True)
class _Variant:
    """The sequence with each optional step read as present or as negated
    (``⟦N?⟧ = ⟦N⟧ ∪ ⟦N!⟧``, App. B.0.2): its positive steps and negated items."""

    steps: tuple[_Step, ...]
    negated: tuple[_Negated, ...]

    @property
    def tail(self) -> bool:
        return any(n.gap == len(self.steps) for n in self.negated)


_Read = tuple[tuple[Gpm, ...], tuple[_Variant, ...], int | None, tuple[str, ...]]


def _label(step: EventPattern) -> str:
    return str(Sequence((step,), ()))[4:-1]


def _gpm_operands(node: EventPattern, conjunction: bool) -> list[tuple[Gpm, ...]] | None:
    """A negated BOp as items of GPMs (a disjunction: one item per operand), ``None``
    when an operand is not a GPM."""
    if isinstance(node, Gpm):
        return [(node,)]
    if isinstance(node, Disjunction) and not conjunction:
        items: list[tuple[Gpm, ...]] = []
        for operand in node.operands:
            found = _gpm_operands(operand, False)
            if found is None:
                return None
            items += found
        return items
    if isinstance(node, Conjunction) and all(isinstance(o, Gpm) for o in node.operands):
        return [tuple(o for o in node.operands if isinstance(o, Gpm))]
    return None


def _steps(plan: Plan) -> _Read | str:
    """The sequence's distinct GPMs, its variants (one per reading of its optional
    steps), WITHIN and PARTITION BY, or why the kernel does not run it. A sequence the
    definitions leave without meaning (every step negated; a negated last step without
    WITHIN) is a :class:`UserError`, as for the oracle."""
    r2r = plan.r2r
    if isinstance(r2r, EventJoin) or not isinstance(r2r, EventPattern):
        return "the WHERE clause is not one SPAseq sequence expression"
    try:
        core, within, by = unwrap_bounds(r2r)
    except ValueError as exc:
        return str(exc)
    if isinstance(core, Sequence):
        steps, strategies = core.steps, core.strategies
    else:
        steps, strategies = (core,), ()
    gpms: dict[Gpm, int] = {}
    choices: list[list[EventPattern]] = []
    for i, step in enumerate(steps):
        if isinstance(step, Optional):
            choices.append([step.step, Negation(step.step)])
            step = step.step
        else:
            choices.append([step])
        inner = step.step if isinstance(step, KleenePlus | Negation) else step
        if isinstance(step, Negation):
            items = _gpm_operands(inner, False)
            if items is None:
                return (
                    f"step {i + 1} {_label(step)} negates what is not a GPM, a disjunction "
                    "of GPMs or a conjunction of GPMs"
                )
            for item in items:
                for g in item:
                    gpms.setdefault(g, len(gpms))
            continue
        operands = inner.operands if isinstance(inner, Conjunction | Disjunction) else (inner,)
        if not all(isinstance(o, Gpm) for o in operands):
            return (
                f"step {i + 1} {_label(step)} is {_KINDS.get(type(step).__name__, 'not a GPM')}: "
                "the compiled automaton takes steps that are a GPM, a conjunction or "
                "disjunction of GPMs, or Kleene+ of one"
            )
        for o in operands:
            if isinstance(o, Gpm):
                gpms.setdefault(o, len(gpms))
    variants: list[_Variant] = []
    for chosen in itertools.product(*choices):
        read: list[_Step] = []
        negated: list[_Negated] = []
        stretch: list[Strategy] = []
        for i, step in enumerate(chosen):
            if i:
                stretch.append(strategies[i - 1])
            if isinstance(step, Negation):
                items = _gpm_operands(step.step, False)
                assert items is not None
                negated += [_Negated(len(read), tuple(gpms[g] for g in item)) for item in items]
                continue
            inner = step.step if isinstance(step, KleenePlus) else step
            operands = inner.operands if isinstance(inner, Conjunction | Disjunction) else (inner,)
            front = max(stretch, key=_PERMISSIVE.__getitem__) if read else Strategy.STRICT
            again = front
            if isinstance(step, KleenePlus):  # SPAseq Defs. 13-14, Fig. 5 and 10
                again = step.strategy if step.strategy is not None else front
            read.append(
                _Step(
                    tuple(gpms[o] for o in operands if isinstance(o, Gpm)),
                    isinstance(inner, Conjunction),
                    isinstance(step, KleenePlus),
                    front,
                    again,
                )
            )
            stretch = []
        if read:
            variants.append(_Variant(tuple(read), tuple(negated)))
    if not variants:
        raise UserError(f"{core} has no step that is not negated: no event would be matched")
    if within is None and any(v.tail for v in variants):
        raise UserError(
            "a negated last step needs WITHIN: the match is only known once the window has "
            "passed without the negated event (CQELS-CEP's NO_TAIL)"
        )
    distinct = tuple(gpms)
    if by:
        for variant in variants:
            first = [distinct[o] for o in variant.steps[0].operands]
            bound = (
                [frozenset().union(*(g.variables for g in first))]
                if variant.steps[0].conjunction
                else [g.variables for g in first]
            )
            if all(set(by) <= variables for variables in bound):
                continue
            # keys then come from later events: exact when no GPM binding a key reads
            # the run's bindings (its solutions alone are then its solutions in a run)
            used = {o for step in variant.steps for o in step.operands}
            if any(set(by) & distinct[o].variables and _reads_run(distinct[o]) for o in used):
                return (
                    "PARTITION BY names a variable the first step does not bind, and a GPM "
                    "that binds it has a FILTER on another step's variables"
                )
    return distinct, tuple(variants), within, by


def _reads_run(gpm: Gpm) -> bool:
    """Whether a FILTER of ``gpm`` names a variable its patterns do not bind."""
    from rsep.algebra.gpm import event_part

    event = event_part(gpm)
    if isinstance(event, str):
        return True
    patterns, filters = event
    bound = pattern_variables(patterns) | gpm.variables
    return any(expression_variables(f) - bound for f in filters)


def columnar_reason(plan: Plan) -> str | None:
    """Why the columnar engine does not evaluate ``plan`` (``None``: it does)."""
    plan = apply_profile(plan)
    if not plan.sequences():
        return "not a SPAseq sequence"
    read = _steps(plan)
    if isinstance(read, str):
        return read
    return None


def describe(plan: Plan) -> str:
    """How the engine in this process evaluates ``plan`` (``rsep explain``): by the
    columnar engine, step by step, or why not and by what instead."""
    reason = columnar_reason(plan)
    if reason is not None:
        return (
            f"  columnar      no: {reason}\n"
            "  evaluated by  none in this process (the oracle: --engine reference)\n"
        )
    plan = apply_profile(plan)
    read = _steps(plan)
    assert not isinstance(read, str)
    gpms, variants, _, by = read
    slots = _slots(gpms, by)
    lines = [
        "  columnar      yes: GPMs as joins over each batch, the sequence by the compiled automaton"
    ]
    if by:
        keys = ", ".join("?" + v for v in by)
        lines.append(f"  partitions    by {keys}: keys from each GPM alone on an event")
    else:
        lines.append("  partitions    one: no PARTITION BY")
    joiner = {True: " & ", False: " | "}
    for v, variant in enumerate(variants):
        if len(variants) > 1:
            lines.append(
                f"  variant {v + 1}     optional steps read as present or negated (App. B.0.2)"
            )
        for i, step in enumerate(variant.steps):
            for n in variant.negated:
                if n.gap == i:
                    what = "before the first event (NO_HEAD)" if i == 0 else "between steps"
                    names = " & ".join(gpms[o].name for o in n.operands)
                    lines.append(f"  not           {names} {what}")
            before = "" if i == 0 else f"{step.strategy.symbol} "
            names = joiner[step.conjunction].join(gpms[o].name for o in step.operands)
            if len(step.operands) > 1:
                names = f"({names})"
            if step.kleene:
                names += f"+ (iterations {step.again.symbol})"
            lines.append(f"  step {i + 1}        {before}{names}")
        for n in variant.negated:
            if n.gap == len(variant.steps):
                names = " & ".join(gpms[o].name for o in n.operands)
                lines.append(
                    f"  not           {names} until the window ends (NO_TAIL): such matches "
                    "are reported at the window's end"
                )
    for gpm in gpms:
        compiled = compile_gpm(gpm, slots, TermDictionary())
        if isinstance(compiled, str):
            lines.append(
                f"  GPM {gpm.name:<9} exact path: evaluated by pyoxigraph on each event of its "
                f"stream under each run's values of the variables it names ({compiled}); "
                "counted in the run summary"
            )
            continue
        parts = [f"{len(compiled.patterns)} triple pattern(s) joined"]
        if compiled.kb_patterns:
            parts.append(f"GRAPH <{gpm.graph_kb.graph if gpm.graph_kb else ''}> joined by term ids")
        if compiled.local or compiled.kb_local:
            parts.append(
                f"{len(compiled.local) + len(compiled.kb_local)} FILTER(s) on its solutions"
            )
        if compiled.deferred:
            parts.append(
                f"{len(compiled.deferred)} FILTER(s) under the run's bindings, in the kernel"
            )
        lines.append(f"  GPM {gpm.name:<9} " + "; ".join(parts))
    lines.append(
        "  exact path    FILTER rows a program cannot decide (decimals beyond a double, "
        "strings, dates) are evaluated by pyoxigraph and counted in the run summary"
    )
    return "\n".join(lines) + "\n"


def _slots(gpms: tuple[Gpm, ...], by: tuple[str, ...]) -> dict[str, int]:
    """A slot per variable the sequence names (patterns, FILTERs, keys)."""
    from rsep.algebra.gpm import basic_pattern, event_part, group_of

    names: dict[str, None] = dict.fromkeys(by)
    for gpm in gpms:
        names.update(dict.fromkeys(sorted(v for v in gpm.variables if not v.startswith("_:"))))
        event = event_part(gpm)
        if not isinstance(event, str):
            bound = pattern_variables(event[0])
            names.update(dict.fromkeys(sorted(v for v in bound if not v.startswith("_:"))))
            for f in event[1]:
                names.update(dict.fromkeys(sorted(expression_variables(f))))
        if gpm.graph_kb is not None:
            kb = basic_pattern(group_of(gpm.graph_kb.pattern.text), "?_:kb")
            if not isinstance(kb, str):
                bound = pattern_variables(kb[0])
                names.update(dict.fromkeys(sorted(v for v in bound if not v.startswith("_:"))))
                for f in kb[1]:
                    names.update(dict.fromkeys(sorted(expression_variables(f))))
    return {name: i for i, name in enumerate(names)}


@dataclass
class _Chunk:
    """Events of one batch in this query's terms: time, stream index, ordinal, and the
    triples (``triple_event`` indexes the events)."""

    time: np.ndarray
    stream: np.ndarray
    triple_event: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray

    def take(self, events: np.ndarray) -> _Chunk:
        """The events at ``events`` (sorted indices) with their triples."""
        keep = np.zeros(len(self.time), bool)
        keep[events] = True
        renumber = np.cumsum(keep) - 1
        rows = keep[self.triple_event]
        return _Chunk(
            self.time[events],
            self.stream[events],
            renumber[self.triple_event[rows]].astype(np.int32),
            self.s[rows],
            self.p[rows],
            self.o[rows],
        )

    def head(self, k: int) -> tuple[_Chunk, _Chunk]:
        """The first ``k`` events and the others, with their triples (slices when the
        triples are in event order, as a reader gives them)."""
        te = self.triple_event
        if len(te) and not bool(np.all(te[:-1] <= te[1:])):
            n = len(self.time)
            return self.take(np.arange(k)), self.take(np.arange(k, n))
        cut = int(np.searchsorted(te, k))
        first = _Chunk(
            self.time[:k], self.stream[:k], te[:cut], self.s[:cut], self.p[:cut], self.o[:cut]
        )
        rest = _Chunk(
            self.time[k:],
            self.stream[k:],
            (te[cut:] - k).astype(np.int32),
            self.s[cut:],
            self.p[cut:],
            self.o[cut:],
        )
        return first, rest

    @staticmethod
    def join(a: _Chunk, b: _Chunk) -> _Chunk:
        return _Chunk(
            np.concatenate([a.time, b.time]),
            np.concatenate([a.stream, b.stream]),
            np.concatenate([a.triple_event, b.triple_event + len(a.time)]).astype(np.int32),
            np.concatenate([a.s, b.s]),
            np.concatenate([a.p, b.p]),
            np.concatenate([a.o, b.o]),
        )

    def batch(self, streams: tuple[str, ...]) -> TripleBatch:
        return TripleBatch(
            streams=streams,
            event_stream=self.stream,
            event_start=self.time,
            event_end=self.time,
            event_ordinal=np.arange(len(self.time), dtype=np.int64),
            triple_event=self.triple_event,
            s=self.s,
            p=self.p,
            o=self.o,
        )


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an int32 table, sorted, and each row's index among them (as
    ``np.unique(axis=0)``, on one int64 per row when the rows have one or two columns)."""
    if rows.shape[1] == 1:
        unique, inverse = np.unique(rows[:, 0], return_inverse=True)
        return unique.reshape(-1, 1), inverse.reshape(-1)
    if rows.shape[1] == 2:
        code = (rows[:, 0].astype(np.int64) << 32) | (rows[:, 1].astype(np.int64) & 0xFFFFFFFF)
        unique, inverse = np.unique(code, return_inverse=True)
        pairs = np.stack([unique >> 32, (unique & 0xFFFFFFFF)], axis=1).astype(np.int64)
        pairs[pairs[:, 1] >= 1 << 31, 1] -= 1 << 32
        return pairs.astype(np.int32), inverse.reshape(-1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


@dataclass
class _Partitions:
    """Partition ids by key value (the key variables' term ids): the known keys' codes
    sorted, with their ids, looked up for a whole batch at once."""

    width: int
    slots: tuple[int, ...]
    count: int = 0
    codes: np.ndarray | None = None
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    start: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int32))

    def add(self, keys: np.ndarray) -> np.ndarray:
        """The partition of each key row (new keys get new partitions, numbered in the
        order of their sorted rows)."""
        if not self.slots:
            return np.zeros(len(keys), np.int32)
        unique, inverse = unique_rows(keys)
        code = _key_codes(unique)
        ids = np.empty(len(unique), np.int32)
        if self.codes is None or len(self.codes) == 0:
            known = np.zeros(len(unique), bool)
        else:
            at = np.minimum(np.searchsorted(self.codes, code), len(self.codes) - 1)
            known = self.codes[at] == code
            ids[known] = self.ids[at[known]]
        fresh = ~known
        added = int(np.count_nonzero(fresh))
        if added:
            numbers = np.arange(self.count, self.count + added, dtype=np.int32)
            ids[fresh] = numbers
            self.count += added
            codes = code[fresh] if self.codes is None else np.concatenate([self.codes, code[fresh]])
            numbered = np.concatenate([self.ids, numbers])
            order = np.argsort(codes, kind="stable")
            self.codes, self.ids = codes[order], numbered[order]
            rows = np.full((added, self.width), -1, np.int32)
            rows[:, list(self.slots)] = unique[fresh]
            self.start = np.concatenate([self.start.reshape(-1, self.width), rows])
        parts: np.ndarray = ids[inverse]
        return parts

    def __len__(self) -> int:
        return max(self.count, 1)

    def starts(self) -> np.ndarray:
        if not self.slots:
            return np.full((1, self.width), -1, np.int32)
        return self.start.reshape(-1, self.width)


def _key_codes(rows: np.ndarray) -> np.ndarray:
    """One comparable value per key row (int32 term ids): the id itself for one column,
    the row's bytes otherwise (equal exactly when the rows are)."""
    if rows.shape[1] == 1:
        return rows[:, 0].astype(np.int64)
    return np.ascontiguousarray(rows, np.int32).view(np.dtype((np.void, 4 * rows.shape[1]))).ravel()


def _binds(gpms: tuple[Gpm, ...], step: _Step, by: tuple[str, ...]) -> bool:
    """Whether every hit of ``step`` binds the ``PARTITION BY`` variables."""
    first = [gpms[o] for o in step.operands]
    if step.conjunction:
        return set(by) <= frozenset().union(*(g.variables for g in first))
    return all(set(by) <= g.variables for g in first)


@dataclass
class _Pending:
    """Matches whose negations are not decided yet: their mappings, ``t1``, ``t2``, the
    instant they are known at (``t2``, or the window's end after a negated last step),
    partition, and per negated item the instants it must not match in (inclusive)."""

    rows: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    at: np.ndarray
    part: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def empty(cls, width: int, items: int) -> _Pending:
        no = np.zeros(0, np.int64)
        return cls(
            np.zeros((0, width), np.int32),
            no,
            no,
            no,
            no,
            np.zeros((0, items), np.int64),
            np.zeros((0, items), np.int64),
        )

    def join(self, other: _Pending) -> _Pending:
        return _Pending(
            *(np.concatenate([a, b]) for a, b in zip(self.parts(), other.parts(), strict=True))
        )

    def take(self, mask: np.ndarray) -> _Pending:
        return _Pending(*(a[mask] for a in self.parts()))

    def parts(self) -> tuple[np.ndarray, ...]:
        return (self.rows, self.t1, self.t2, self.at, self.part, self.lo, self.hi)


@dataclass
class _Automaton:
    """One variant of the sequence as the kernel runs it: its positive steps' arrays, its
    negated items' operands and gaps, the runs carried between batches and the matches
    waiting for their negations."""

    variant: _Variant
    op_lo: np.ndarray
    op_hi: np.ndarray
    conj: np.ndarray
    kleene: np.ndarray
    strategy: np.ndarray
    again: np.ndarray
    op_gpm: np.ndarray
    op_stream: np.ndarray
    item_lo: np.ndarray
    item_hi: np.ndarray
    item_gpm: np.ndarray
    item_gap: np.ndarray
    carried: automaton.Carried
    pending: _Pending

    @classmethod
    def of(cls, variant: _Variant, query: SequenceQuery) -> _Automaton:
        steps = variant.steps
        lo = np.cumsum([0] + [len(x.operands) for x in steps[:-1]]).astype(np.int64)
        items = variant.negated
        item_lo = np.cumsum([0] + [len(n.operands) for n in items[:-1]]).astype(np.int64)
        return cls(
            variant,
            lo,
            lo + np.array([len(x.operands) for x in steps], np.int64),
            np.array([x.conjunction for x in steps], np.bool_),
            np.array([x.kleene for x in steps], np.bool_),
            np.array([_STRATEGY[x.strategy] for x in steps], np.int8),
            np.array([_STRATEGY[x.again] for x in steps], np.int8),
            np.array([o for x in steps for o in x.operands], np.int64),
            np.array(
                [query.streams.index(query.gpms[o].stream) for x in steps for o in x.operands],
                np.int32,
            ),
            item_lo[: len(items)],
            item_lo[: len(items)] + np.array([len(n.operands) for n in items], np.int64),
            np.array([o for n in items for o in n.operands], np.int64),
            np.array([n.gap for n in items], np.int64),
            automaton.Carried.empty(query.width, len(steps) if items else 0),
            _Pending.empty(query.width, len(items)),
        )

    @property
    def twice(self) -> bool:
        """Whether a start run on a window boundary also runs in the window ending there
        (a match of one positive step may pass its negations in one and not the other)."""
        return bool(self.variant.negated) and len(self.variant.steps) == 1


def _named(gpm: Gpm) -> frozenset[str]:
    """Every variable a GPM's patterns name (stream and knowledge base parts): its
    solutions under a run depend on the run's values of these only."""
    from rsep.algebra.gpm import group_of
    from rsep.lang import ast

    names: set[str] = set()
    texts = [gpm.pattern.text] + ([gpm.graph_kb.pattern.text] if gpm.graph_kb else [])
    for text in texts:
        group = group_of(text)
        if group is not None:
            names.update(n.name for n in group.walk() if isinstance(n, ast.Var))
    return frozenset(names)


def _graph_of(chunk: _Chunk, event: int, dictionary: TermDictionary) -> frozenset[Triple]:
    """The graph of one event of a chunk as pyoxigraph triples (for the exact path)."""
    lo, hi = np.searchsorted(chunk.triple_event, [event, event + 1])
    return frozenset(
        Triple(dictionary.term(int(s)), dictionary.term(int(p)), dictionary.term(int(o)))  # type: ignore[arg-type]
        for s, p, o in zip(chunk.s[lo:hi], chunk.p[lo:hi], chunk.o[lo:hi], strict=True)
    )


_FilterArgs = tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
]
"""The kernels' FILTER arguments (:meth:`SequenceQuery._filters`)."""


class _Exact:
    """The solutions of exact GPMs given so far for one kernel input: per (GPM, event,
    values of the variables it names) a range of rows appended to the solution table."""

    def __init__(
        self,
        chunk: _Chunk,
        seen: np.ndarray,
        gpms: int,
        n: int,
        sol: np.ndarray,
        ptr: np.ndarray,
        width: int,
    ) -> None:
        self.width = width  # of a key: a mapping row
        self.chunk = chunk
        self.seen = seen
        self.gpms = gpms
        self.n = n
        self.base = sol
        self.base_ptr = ptr
        self.entries: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        self.graphs: dict[int, frozenset[Triple]] = {}
        self.tables()

    def graph(self, event: int, dictionary: TermDictionary) -> frozenset[Triple]:
        found = self.graphs.get(event)
        if found is None:
            found = self.graphs[event] = _graph_of(self.chunk, event, dictionary)
        return found

    def add(self, gpm: int, event: int, key: np.ndarray, rows: np.ndarray) -> None:
        """Solutions given (:meth:`tables` then rebuilds the kernel's arrays)."""
        self.entries.append((gpm, event, key, rows))

    def tables(self) -> None:
        """The kernel's arrays for the solutions given so far."""
        width = self.width
        if not self.entries:
            self.ex_key = np.zeros((0, width), np.int32)
            self.ex_lo = self.ex_hi = np.zeros(0, np.int64)
            self.sol, self.ptr = self.base, self.base_ptr
            self.ex_ptr = np.zeros((self.gpms, self.n + 1), np.int64)
            return
        entries = sorted(self.entries, key=lambda x: (x[0], x[1]))
        k = len(entries)
        self.ex_key = np.zeros((k, width), np.int32)
        self.ex_lo = np.zeros(k, np.int64)
        self.ex_hi = np.zeros(k, np.int64)
        code = np.array([g * (self.n + 1) + e for g, e, _, _ in entries], np.int64)
        at = len(self.base)
        for x, (_, _, key, rows) in enumerate(entries):
            self.ex_key[x] = key
            self.ex_lo[x] = at
            at += len(rows)
            self.ex_hi[x] = at
        self.sol = np.ascontiguousarray(
            np.concatenate([self.base, *(e[3] for e in entries)]) if entries else self.base
        )
        self.ptr = self.base_ptr.copy()
        self.ex_ptr = np.zeros((self.gpms, self.n + 1), np.int64)
        for g in range(self.gpms):
            starts = g * (self.n + 1) + np.arange(self.n + 1)
            self.ex_ptr[g] = np.searchsorted(code, starts)
            mine = [x for x, e in enumerate(entries) if e[0] == g]
            if mine:  # a bound of the rows an event can give (every key's)
                counts = np.zeros(self.n, np.int64)
                for x in mine:
                    counts[entries[x][1]] += self.ex_hi[x] - self.ex_lo[x]
                self.ptr[g, 0] = 0
                self.ptr[g, 1:] = np.cumsum(counts)


class SequenceQuery(IncrementalQuery):
    """A SPAseq plan on the columnar engine (module docstring), an incremental query
    (:class:`rsep.engine.query.IncrementalQuery`): :meth:`push` batches of events in time
    order, :meth:`advance` the watermark, :meth:`finish`; or :meth:`run` over all of them.
    The oracle's results, each as soon as it is final."""

    dictionary: TermDictionary

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, frozenset[Triple] | TimeVarying] | None = None,
        dictionary: TermDictionary | None = None,
        *,
        start: int | None = None,
    ) -> None:
        """``graphs``: static or time-varying (RSP-QL Def. 10; a GRAPH part reads ``Γ(v)``
        at the event's time, Def. 15). ``dictionary``: the term ids of the batches it is
        pushed, shared with the other queries that read them (a new one when not given).
        ``start`` is the oracle's start of the time range: the events before it are
        evaluated, but the first evaluation instant at or after it streams every answer
        known so far (IStream compares it with ∅, RSP-QL Def. 21), and none is reported
        before it."""
        plan = apply_profile(plan)
        read = _steps(plan)
        if isinstance(read, str):
            raise UserError(f"the columnar engine does not evaluate this plan: {read}")
        given = dict(graphs or {})
        # background graphs' versions materialised once, items entailed per batch
        # (parameter entailment: rsep.reasoning)
        sources = {iri: versions(background_source(plan.parameters, g)) for iri, g in given.items()}
        super().__init__(plan, {})
        self.gpms, self.variants, within, self.by = read
        self.within = -1 if within is None else within
        self.t0 = plan.parameters.t0
        self.max_runs = plan.parameters.max_runs
        wanted = [*plan.dataset.default_graphs, *plan.dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in sources]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        self.closure = engine_closure(plan.parameters, given, self.dictionary)
        self.slots = _slots(self.gpms, self.by)
        self.width = len(self.slots)
        compiled: list[CompiledGpm | None] = []
        for gpm in self.gpms:
            found = compile_gpm(gpm, self.slots, self.dictionary)
            compiled.append(None if isinstance(found, str) else found)
        self.compiled = tuple(compiled)
        # GPMs evaluated exactly (pyoxigraph, under a run's values of what they name)
        self.gpm_exact = np.array([c is None for c in compiled], np.bool_)
        named = [sorted(self.slots[v] for v in _named(g) if v in self.slots) for g in self.gpms]
        self.gpm_ment = np.zeros((len(named), max([1, *map(len, named)])), np.int32)
        for i, slots in enumerate(named):
            self.gpm_ment[i, : len(slots)] = slots
        self.gpm_nment = np.array(
            [len(x) if self.gpm_exact[i] else 0 for i, x in enumerate(named)], np.int32
        )
        self._graphs: dict[int, frozenset[Triple]] = {}  # exact GPMs' events, by batch row
        self.streams = tuple(dict.fromkeys([*plan.dataset.streams, *(g.stream for g in self.gpms)]))
        self.limited = bool(plan.dataset.streams)
        self.automata = tuple(_Automaton.of(v, self) for v in self.variants)
        self.negations = any(v.negated for v in self.variants)
        negated = sorted({o for v in self.variants for n in v.negated for o in n.operands})
        self.negated_gpms = np.array([g for g in negated if not self.gpm_exact[g]], np.int64)
        # items with a GPM evaluated exactly are checked on the events kept of their streams
        self._exact_streams = np.array(
            sorted(
                {
                    self.streams.index(self.gpms[o].stream)
                    for v in self.variants
                    for n in v.negated
                    if any(self.gpm_exact[o] for o in n.operands)
                    for o in n.operands
                }
            ),
            np.int32,
        )
        self._neg_events: _Chunk | None = None
        self._neg_member = (np.zeros(0, np.int64), np.zeros(0, np.int32))
        # keys from later events: a partition found late sees the kept events without a key
        self._replay = bool(self.by) and any(
            not _binds(self.gpms, v.steps[0], self.by) for v in self.variants
        )
        self.matcher = GraphMatcher()
        self.knowledge: list[KnowledgeBase | None] = []  # Γ(v) by GPM (Def. 15)
        for gpm, c in zip(self.gpms, self.compiled, strict=True):
            if gpm.graph_kb is None:
                self.knowledge.append(None)
                continue
            iri = gpm.graph_kb.graph
            if iri not in sources:
                raise UserError(
                    f"GPM {gpm.name} reads the knowledge base graph <{iri}>, which the "
                    "dataset does not hold (SPAseq Definition 15: Γ(v) must name a graph of D)"
                )
            changes, held = sources[iri]
            self.knowledge.append(KnowledgeBase.of(changes, held, c, self.dictionary, self.slots))
        self._programs()
        self.key_gpms = tuple(
            i for i, g in enumerate(self.gpms) if self.by and no_key_alone(g) is None
        )
        self.partitions = _Partitions(self.width, tuple(self.slots[v] for v in self.by))
        self.stats = Stats()
        self.forms = LiteralForms()
        self.output = Output(self.plan, answer_set=True, start=start)  # Def. 16: a union
        # every event time is an instant from start: the first one streams the answers so far
        self._every = start is not None or self._every_instant()
        self._held: _Chunk | None = None  # the latest instant's events, until complete
        self._last: int | None = None  # the latest instant evaluated
        self._first: int | None = None  # the first instant (the window without WITHIN)
        # the negated GPMs' solutions of the open windows, by GPM then time, with the
        # partition of their event (-1: an event without a key, in every partition)
        self._neg_gpm = np.zeros(0, np.int64)
        self._neg_time = np.zeros(0, np.int64)
        self._neg_part = np.zeros(0, np.int32)
        self._neg_rows = np.zeros((0, self.gpm_bind.shape[1]), np.int32)
        self._keyless: _Chunk | None = None  # events without a key, for late partitions

    def _programs(self) -> None:
        """The deferred FILTERs of every GPM as one program table for the kernel."""
        ops: list[np.ndarray] = []
        args: list[np.ndarray] = []
        f_lo: list[int] = []
        f_hi: list[int] = []
        masks: list[list[int]] = []
        step_lo: list[int] = []
        step_hi: list[int] = []
        self_used: list[np.ndarray] = []
        deferred: list[Filter] = []
        at = 0
        for c in self.compiled:
            step_lo.append(len(f_lo))
            for f in c.deferred if c is not None else ():
                assert f.program is not None  # compile_gpm defers only compiled FILTERs
                ops.append(f.program.ops)
                args.append(f.program.args)
                f_lo.append(at)
                at += len(f.program.ops)
                f_hi.append(at)
                masks.append(sorted(self.slots[v] for v in f.hidden))
                used = np.zeros(self.width, np.int8)  # the slots its program reads
                reads = (f.program.ops == PUSH_VAR) | (f.program.ops == BOUND)
                slots = f.program.args[reads]
                used[slots[slots >= 0]] = 1
                self_used.append(used)
                deferred.append(f)
            step_hi.append(len(f_lo))
        self.ops = np.concatenate(ops).astype(np.int32) if ops else np.zeros(0, np.int32)
        self.args = np.concatenate(args).astype(np.int64) if args else np.zeros(0, np.int64)
        self.f_lo = np.array(f_lo, np.int64)
        self.f_hi = np.array(f_hi, np.int64)
        self.f_used = np.stack(self_used) if self_used else np.zeros((0, self.width), np.int8)
        self.deferred = tuple(deferred)
        # the exact verdicts of FILTER rows no program decides, by FILTER and values
        self._known_f = np.zeros(0, np.int64)
        self._known_rows = np.zeros((0, self.width), np.int32)
        self._known_value = np.zeros(0, np.int8)
        widest = max((len(m) for m in masks), default=0)
        self.f_mask = np.zeros((len(masks), max(widest, 1)), np.int32)
        for i, m in enumerate(masks):
            self.f_mask[i, : len(m)] = m
        self.f_nmask = np.array([len(m) for m in masks], np.int32)
        self.gpm_f_lo = np.array(step_lo, np.int64)
        self.gpm_f_hi = np.array(step_hi, np.int64)
        binds = [
            sorted(
                self.slots[v]
                for v in (c.variables if c is not None else g.variables)
                if v in self.slots
            )
            for g, c in zip(self.gpms, self.compiled, strict=True)
        ]
        widest = max((len(b) for b in binds), default=0)
        self.gpm_bind = np.zeros((len(binds), max(widest, 1)), np.int32)
        for i, b in enumerate(binds):
            self.gpm_bind[i, : len(b)] = b
        self.gpm_nbind = np.array([len(b) for b in binds], np.int32)
        # a FILTER comparing a side that reads no variable its GPM binds (the run's, then)
        # with one that may: where its left operand ends, which side is the run's, and the
        # slots the solution's side reads (-1: one its GPM does not bind)
        self.f_split = np.full((len(f_lo), 3 + self.width), -1, np.int64)
        for gi, bound in enumerate(binds):
            for k in range(step_lo[gi], step_hi[gi]):
                program = deferred[k].program
                split = None if program is None else comparison_operands(program)
                if masks[k] or split is None:
                    continue
                mid, left, right = split
                if not left & set(bound):
                    own, side = right, 0
                elif not right & set(bound):
                    own, side = left, 1
                else:
                    continue
                self.f_split[k, :2] = (f_lo[k] + mid, side)
                if own <= set(bound):
                    self.f_split[k, 2] = len(own)
                    self.f_split[k, 3 : 3 + len(own)] = sorted(own)

    # batches ----------------------------------------------------------------------------

    def _chunk(self, batch: TripleBatch) -> _Chunk:
        """The batch's events of the query's streams, in this query's stream indices."""
        index = np.array(
            [self.streams.index(s) if s in self.streams else -1 for s in batch.streams], np.int32
        )
        stream = index[batch.event_stream] if len(batch.streams) else np.zeros(0, np.int32)
        interval = np.flatnonzero((batch.event_start != batch.event_end) & (stream >= 0))
        if len(interval):
            e = int(interval[0])
            raise UserError(
                f"an event of <{batch.streams[batch.event_stream[e]]}> lasts from "
                f"{batch.event_start[e]} to {batch.event_end[e]}; SPAseq events are pairs "
                "(τ, G) with one timestamp (Definition 1)"
            )
        chunk = _Chunk(
            batch.event_end.astype(np.int64),
            stream,
            batch.triple_event.astype(np.int32),
            batch.s,
            batch.p,
            batch.o,
        )
        if self.limited:
            chunk = chunk.take(np.flatnonzero(stream >= 0))
        return chunk

    # IncrementalQuery ---------------------------------------------------------------------

    def push(self, events: TripleBatch | Iterable[Event]) -> list[Result]:
        """Take a batch of events (a :class:`TripleBatch`, or events as objects) in
        non-decreasing time; return the results of every instant it completes (an instant
        is complete once a later event came, :class:`rsep.engine.query.InstantQuery`)."""
        self._check_open()
        if isinstance(events, TripleBatch):
            return self._push(events, None)
        out: list[Result] = []
        for batch in batches_of(events, self.dictionary):
            out += self._push(batch, None)
        return out

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: no event at or before ``t`` comes any more, so the
        held instant, if at or before ``t``, is final."""
        self._check_open()
        if self.watermark is None or t > self.watermark:
            self.watermark = t
        held = self._held
        out: list[Result] = []
        if held is not None and held.time[0] <= t:
            self._held = None
            out = self._evaluate(held)
        return out + self._report(t, np.zeros(0, np.int64))

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the held instant; results after ``until`` are left out."""
        self._check_open()
        held, self._held = self._held, None
        out = self._evaluate(held) if held is not None else []
        out += self._report(None, np.zeros(0, np.int64))
        self._finished = True
        return [r for r in out if until is None or r.time <= until]

    def run(self, batches: Iterable[TripleBatch], until: int | None = None) -> list[Result]:
        """The results over batches of events in non-decreasing time (an instant may span
        two batches), up to ``until`` (later events are not read): :meth:`push` of each
        batch, then :meth:`finish`."""
        out: list[Result] = []
        for batch in batches:
            self._check_open()
            out += self._push(batch, until)
        return out + self.finish()

    def _push(self, batch: TripleBatch, until: int | None) -> list[Result]:
        """One batch: its events (up to ``until``) joined to the held instant, the whole
        instants before the latest evaluated, the latest held."""
        if self.closure is not None:
            batch = entail_batch(batch, self.closure)
        chunk = self._chunk(batch)
        if until is not None:
            chunk = chunk.take(np.flatnonzero(chunk.time <= until))
        if len(chunk.time) == 0:
            return []
        if self.watermark is not None and chunk.time.min() <= self.watermark:
            early = int(chunk.time.min())
            raise UserError(
                f"an event at {early} arrived after the watermark {self.watermark}: events "
                "must come in time order (parameter lateness)"
            )
        if self._held is not None:
            chunk = _Chunk.join(self._held, chunk)
        order = np.argsort(chunk.time, kind="stable")
        if self._last is not None and chunk.time[order[0]] <= self._last:
            raise UserError(
                f"an event at {chunk.time[order[0]]} came after one at {self._last}: events "
                "must come in time order"
            )
        chunk = _reorder(chunk, order)
        whole, self._held = chunk.head(int(np.searchsorted(chunk.time, chunk.time[-1])))
        return self._evaluate(whole) if len(whole.time) else []

    def _evaluate(self, chunk: _Chunk) -> list[Result]:
        """Whole instants through the automaton; their results."""
        self._step(chunk)
        self._last = int(chunk.time[-1])
        return self._report(self._last, chunk.time)

    def _report(self, upto: int | None, times: np.ndarray) -> list[Result]:
        """The results of the matches known at or before ``upto`` (all: ``None``), their
        negations decided, and of the evaluation instants ``times``."""
        rows, t1, t2, at = self._release(upto)
        instants = np.unique(times) if self._every else np.zeros(0, np.int64)
        out = self._results(rows, t1, t2, at, instants)
        # no later match ends at or before the last instant or a waiting one's t2
        waiting = [a.pending.t2.min() for a in self.automata if len(a.pending.t2)]
        if self._last is not None:
            self.output.forget(min([self._last + 1, *waiting]))
        return out

    @property
    def inexact_rows(self) -> int:
        """Rows whose FILTER the programs could not decide, evaluated exactly."""
        return self.stats.inexact_rows

    def share(self, dictionary: TermDictionary) -> None:
        """Take ``dictionary``, which extends :attr:`dictionary` (every term under the same
        id), in its place."""
        self.dictionary = dictionary
        if self.closure is not None:  # its tables are in the dictionary's ids
            self.closure.dictionary = dictionary

    def __getstate__(self) -> dict[str, Any]:
        """The query with its carried runs, held events and reported answers, for Spark's
        state between micro-batches (the dictionary pickles without its lock); no matcher
        (pyoxigraph stores, rebuilt)."""
        state = dict(self.__dict__)
        del state["matcher"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.matcher = GraphMatcher()

    def _every_instant(self) -> bool:
        """Whether the query form reports at instants without new answers (RStream, ASK,
        CONSTRUCT with empty output)."""
        form = self.plan.form
        if isinstance(form, Select):
            return self.plan.r2s is R2S.RSTREAM
        if isinstance(form, Ask):
            return True
        return self.plan.parameters.output_empty or self.plan.r2s is R2S.RSTREAM

    def _solutions(self, batch: TripleBatch) -> list[Solutions]:
        """Each GPM's solutions over the batch (none for a GPM whose stream it lacks)."""
        found: list[Solutions] = []
        skeletons: dict[tuple[object, ...], pa.Table | None] = {}  # GPMs sharing a pattern
        for i, (c, kb) in enumerate(zip(self.compiled, self.knowledge, strict=True)):
            stream = self.gpms[i].stream
            if stream not in batch.streams or (c is None and i not in self.key_gpms):
                found.append(Solutions(np.zeros(0, np.int32), np.zeros((0, self.width), np.int32)))
                continue
            if c is None:  # keys: the GPM alone on each event of its stream, exactly
                events = np.flatnonzero(batch.event_stream == batch.streams.index(stream))
                found.append(self._alone_exactly(i, batch, events))
                continue
            s = solutions(
                c,
                batch,
                batch.streams.index(c.stream),
                self.dictionary,
                self.slots,
                self.width,
                kb,
                self.matcher,
                skeletons,
            )
            self.stats.inexact_rows += s.inexact
            found.append(s)
        return found

    def event_keys(self, batch: TripleBatch) -> tuple[np.ndarray, np.ndarray]:
        """The ``PARTITION BY`` keys of the batch's events (choice 9): each distinct pair of
        an event (its index in the batch) and a key (the key variables' term ids, in the
        order of ``PARTITION BY``), from the solutions of each GPM on the event alone. An
        event without a pair has no key: it belongs to every partition."""
        if self.closure is not None:  # keys the ontology gives too (rsep.reasoning)
            batch = entail_batch(batch, self.closure)
        return self._keyed(self._solutions(batch))

    def _keyed(self, found: list[Solutions]) -> tuple[np.ndarray, np.ndarray]:
        key_slots = list(self.partitions.slots)
        events: list[np.ndarray] = [np.zeros(0, np.int32)]
        keys: list[np.ndarray] = [np.zeros((0, len(key_slots)), np.int32)]
        for i in self.key_gpms:
            s = found[i]
            if len(s.event) == 0:
                continue
            holds = self._alone(i, s.rows)
            rows = s.rows[holds][:, key_slots]
            bound = (rows >= 0).all(axis=1)
            events.append(s.event[holds][bound])
            keys.append(rows[bound])
        pairs, _ = unique_rows(
            np.concatenate([np.concatenate(events)[:, None], np.concatenate(keys)], axis=1).astype(
                np.int32
            )
        )
        return pairs[:, 0], pairs[:, 1:]

    def _keys(
        self, n: int, found: list[Solutions]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The (event, partition) pairs of a chunk of ``n`` events: those of the events'
        keys, and an event without a key in every partition; then the keyed pairs alone
        and which events have no key."""
        if not self.by:
            every = np.arange(n, dtype=np.int32)
            return every, np.zeros(n, np.int32), every, np.zeros(n, np.int32), np.ones(n, bool)
        ev, keys = self._keyed(found)
        parts = self.partitions.add(keys) if len(keys) else np.zeros(0, np.int32)
        keyed = np.zeros(n, bool)
        keyed[ev] = True
        keyless = np.flatnonzero(~keyed).astype(np.int32)
        count = self.partitions.count
        pe_ev, pe_part = ev, parts
        if len(keyless) and count:
            pe_ev = np.concatenate([ev, np.repeat(keyless, count)])
            pe_part = np.concatenate(
                [parts, np.tile(np.arange(count, dtype=np.int32), len(keyless))]
            )
        return pe_ev, pe_part, ev, parts, ~keyed

    def _alone(self, i: int, rows: np.ndarray) -> np.ndarray:
        """Which solution rows of GPM ``i`` its deferred FILTERs keep with no run bindings
        (the GPM alone on the event, choice 9)."""
        keep = np.ones(len(rows), bool)
        c = self.compiled[i]
        for f in c.deferred if c is not None else ():
            ids = rows.copy()
            for v in f.hidden:
                ids[:, self.slots[v]] = -1
            assert f.program is not None  # compile_gpm defers only compiled FILTERs
            verdict = evaluate_rows(f.program, ids, self.dictionary.values)
            for r in np.flatnonzero(verdict == 2):
                mu = {
                    n: self.dictionary.term(int(ids[r, k]))
                    for n, k in self.slots.items()
                    if ids[r, k] >= 0
                }
                verdict[r] = 1 if self.matcher.holds(to_sparql(f.expr), mu) else 0
                self.stats.inexact_rows += 1
            keep &= verdict == 1
        return keep

    def _stored(self) -> np.ndarray:
        """Each term's stored form as pyoxigraph keeps it, as an id: a bound variable
        matches a triple pattern by it."""
        values = self.dictionary.values
        n = len(self.dictionary)
        known = getattr(self, "_stored_ids", np.zeros(0, np.int32))
        if len(known) == n:
            return known
        out = np.arange(n, dtype=np.int32)
        out[: len(known)] = known
        literals = np.flatnonzero(values.kind[len(known) : n] == KIND_LITERAL) + len(known)
        terms = [self.dictionary.term(int(ident)) for ident in literals]
        self.forms.learn(terms)  # type: ignore[arg-type]  # one pyoxigraph store for all
        for ident, term in zip(literals.tolist(), terms, strict=True):
            stored = self.forms.stored_form(term)  # type: ignore[arg-type]
            if stored != term:
                out[ident] = self.dictionary.intern(to_nt(stored))
        if len(self.dictionary) > n:  # stored forms added terms: theirs are themselves
            extra = np.arange(n, len(self.dictionary), dtype=np.int32)
            out = np.concatenate([out, extra])
        self._stored_ids = out
        return out

    def _step(self, chunk: _Chunk) -> None:
        """One chunk of whole instants through each variant's automaton, from the runs
        carried in; the matches wait in ``pending`` until their negations are decided.
        A partition found now first sees the kept events without a key of the windows
        still open (:meth:`_late`)."""
        self.stats.events += len(chunk.time)
        chunk = _distinct_events(chunk)
        if self._first is None:
            self._first = int(chunk.time[0])
        found = self._solutions(chunk.batch(self.streams))
        known = self.partitions.count
        pe_event, pe_part, keyed_ev, keyed_part, keyless = self._keys(len(chunk.time), found)
        if self.negations:
            self._remember(chunk, found, keyed_ev, keyed_part, keyless)
            if len(self._exact_streams):
                self._remember_events(chunk, keyed_ev, keyed_part, keyless)
        if self._replay:
            if self.partitions.count > known:
                self._late(known, int(chunk.time[0]))
            self._keep_keyless(chunk.take(np.flatnonzero(keyless)))
        self._run(chunk, found, pe_event, pe_part, replay=False)

    def _late(self, known: int, now: int) -> None:
        """The partitions from ``known`` on are new: their runs over the kept events
        without a key of the windows still open at ``now`` (choice 9: a partition holds
        every event without a key, also those before its key appeared)."""
        kept = self._keyless
        if kept is None or len(kept.time) == 0:
            return
        if self.within >= 0:
            k = (now - self.t0) // self.within
            if k >= 1 and now == self.t0 + k * self.within:
                k -= 1
            kept = kept.take(np.flatnonzero(kept.time >= self.t0 + k * self.within))
            if len(kept.time) == 0:
                return
        found = self._solutions(kept.batch(self.streams))
        count = self.partitions.count - known
        n = len(kept.time)
        pe_event = np.repeat(np.arange(n, dtype=np.int32), count)
        pe_part = np.tile(np.arange(known, known + count, dtype=np.int32), n)
        self._run(kept, found, pe_event, pe_part, replay=True)

    def _keep_keyless(self, chunk: _Chunk) -> None:
        """Keep the events without a key of the windows a new partition may still use."""
        kept = chunk if self._keyless is None else _Chunk.join(self._keyless, chunk)
        if self.within >= 0 and len(kept.time):
            kept = kept.take(np.flatnonzero(kept.time >= self._horizon(int(kept.time[-1]))))
        if len(kept.time) > self.plan.parameters.max_window_events:
            raise UserError(
                f"{len(kept.time)} events without a PARTITION BY key are kept for partitions "
                "not seen yet (each belongs to every partition), more than "
                f"max_window_events = {self.plan.parameters.max_window_events}: add WITHIN, "
                "or raise the limit (--set max_window_events=N)"
            )
        self._keyless = kept

    def _kept_from(self, t: int) -> int:
        """The first instant a negation may still look at when a chunk starts at ``t``:
        the windows open then, and those of the matches waiting for their window's end."""
        waiting = [
            int(a.pending.at.min()) - self.within for a in self.automata if len(a.pending.at)
        ]
        return min([self._horizon(t), *waiting])

    def _horizon(self, t: int) -> int:
        """The first instant a window open at ``t`` (or the one before, which a match of
        one step on its boundary may use) can hold."""
        return self.t0 + ((t - self.t0) // self.within - 1) * self.within

    def _remember(
        self,
        chunk: _Chunk,
        found: list[Solutions],
        keyed_ev: np.ndarray,
        keyed_part: np.ndarray,
        keyless: np.ndarray,
    ) -> None:
        """Keep the negated GPMs' solutions on the chunk, each with its event's partitions
        (-1 for an event without a key), for the gaps of the open windows."""
        gpm = [self._neg_gpm]
        time = [self._neg_time]
        part = [self._neg_part]
        rows = [self._neg_rows]
        order = np.argsort(keyed_ev, kind="stable")
        keyed_ev, keyed_part = keyed_ev[order], keyed_part[order]
        for g in self.negated_gpms.tolist():
            s = found[g]
            if len(s.event) == 0:
                continue
            alone = keyless[s.event]  # in every partition
            pick = [np.flatnonzero(alone)]
            parts = [np.full(int(alone.sum()), -1, np.int32)]
            if self.by:
                keyed = np.flatnonzero(~alone)
                lo = np.searchsorted(keyed_ev, s.event[keyed], "left")
                hi = np.searchsorted(keyed_ev, s.event[keyed], "right")
                counts = hi - lo
                pick.append(np.repeat(keyed, counts))
                starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
                parts.append(keyed_part[starts + np.arange(counts.sum())].astype(np.int32))
            at = np.concatenate(pick)
            gpm.append(np.full(len(at), g, np.int64))
            time.append(chunk.time[s.event[at]])
            part.append(np.concatenate(parts))
            rows.append(self._compact(g, s.rows[at]))
        g_all = np.concatenate(gpm)
        t_all = np.concatenate(time)
        order = np.lexsort((t_all, g_all))
        keep = order
        if self.within >= 0 and len(t_all):
            bound = self._kept_from(int(chunk.time[0]))
            keep = order[t_all[order] >= bound]
        self._neg_gpm = g_all[keep]
        self._neg_time = t_all[keep]
        self._neg_part = np.concatenate(part)[keep]
        self._neg_rows = np.concatenate(rows)[keep]

    def _run(
        self,
        chunk: _Chunk,
        found: list[Solutions],
        pe_event: np.ndarray,
        pe_part: np.ndarray,
        *,
        replay: bool,
    ) -> None:
        """The chunk's (event, partition) pairs through each variant's kernel, from the
        runs carried in (``replay``: new partitions, from none, their runs added)."""
        n = len(chunk.time)
        # by partition, time and event: the chunk's events are in time order
        order = np.argsort(pe_part.astype(np.int64) * n + pe_event, kind="stable")
        pe_event, pe_part = pe_event[order], pe_part[order]
        # events renumbered in the order the kernel meets them (partition by partition), so
        # that it reads the solution tables front to back
        rank, seen = _first_seen(pe_event, n)
        pe_event = rank[pe_event]
        ev_time = chunk.time[seen]
        ev_stream = chunk.stream[seen]
        ptr = np.zeros((len(found), n + 1), np.int64)
        offset = 0
        tables = []
        for j, s in enumerate(found):
            if self.gpm_exact[j]:  # solutions given per run's values (_Exact)
                ptr[j, :] = offset
                continue
            by_event, bounds = _grouped(rank[s.event], n)
            tables.append(self._compact(j, s.rows)[by_event])
            ptr[j] = bounds + offset
            offset += len(s.event)
        sol = np.ascontiguousarray(
            np.concatenate(tables) if offset else np.zeros((0, self.gpm_bind.shape[1]), np.int32)
        )
        exact = _Exact(chunk, seen, len(found), n, sol, ptr, self.width)
        for a in self.automata:
            carried = a.carried
            if replay:
                carried = automaton.Carried.empty(self.width, carried.gaps)
            while True:  # again while FILTER rows or exact GPMs' keys come up
                stored = self._stored()
                out = automaton.run_partitions(
                    ev_time,
                    ev_stream,
                    pe_event,
                    pe_part,
                    a.op_lo,
                    a.op_hi,
                    a.conj,
                    a.kleene,
                    a.strategy,
                    a.again,
                    a.op_gpm,
                    a.op_stream,
                    exact.ptr,
                    exact.sol,
                    self.gpm_bind,
                    self.gpm_nbind,
                    self.gpm_f_lo,
                    self.gpm_f_hi,
                    self.gpm_exact,
                    self.gpm_ment,
                    self.gpm_nment,
                    exact.ex_ptr,
                    exact.ex_key,
                    exact.ex_lo,
                    exact.ex_hi,
                    *self._filters(),
                    self.f_split,
                    stored,
                    self.t0,
                    self.within,
                    a.twice and not replay,
                    self.partitions.starts(),
                    carried.runs,
                    carried.rows,
                    int(chunk.time[-1]),
                    self.max_runs,
                )
                m_rows, times, runs, run_rows, status, _, open_f, open_rows, asked, keys = out
                if status != automaton.STATUS_OK:
                    break
                if len(asked):
                    self._exactly(exact, asked, keys)
                elif len(open_f):
                    self._decide(open_f, open_rows)
                else:
                    break
            if status == automaton.STATUS_TOO_MANY_RUNS:
                raise UserError(
                    f"more than max_runs = {self.max_runs} runs of the automaton are open at "
                    "once: raise it (--set max_runs=N) or narrow the pattern (WITHIN, "
                    "PARTITION BY)"
                )
            if replay:  # the new partitions come after the others
                a.carried = automaton.Carried(
                    np.concatenate([a.carried.runs, runs]),
                    np.concatenate([a.carried.rows, run_rows]),
                )
                a.carried.runs[len(a.carried.runs) - len(runs) :, automaton.ROW_START] += len(
                    a.carried.rows
                ) - len(run_rows)
            else:
                a.carried = automaton.Carried(runs, run_rows)
            self.stats.matches += len(m_rows)
            a.pending = a.pending.join(self._pending(a, m_rows, times))
        self.stats.partitions = len(self.partitions)

    def _pending(self, a: _Automaton, rows: np.ndarray, times: np.ndarray) -> _Pending:
        """A variant's matches with the instants each negated item must not match in:
        from the window's start to before the first event (NO_HEAD), strictly between
        the steps around it (SEQ_WO), after the last event to the window's end (NO_TAIL);
        the window closed at both ends (Def. 16), the whole stream without WITHIN."""
        t1 = times[:, automaton.M_T1]
        t2 = times[:, automaton.M_T2]
        end = times[:, automaton.M_END]
        n_steps = len(a.variant.steps)
        items = len(a.variant.negated)
        lo = np.empty((len(rows), items), np.int64)
        hi = np.empty((len(rows), items), np.int64)
        begin = end - self.within if self.within >= 0 else np.full(len(rows), self._first or 0)
        for i, item in enumerate(a.variant.negated):
            if item.gap == 0:
                lo[:, i], hi[:, i] = begin, t1 - 1
            elif item.gap == n_steps:
                lo[:, i], hi[:, i] = t2 + 1, end
            else:
                column = automaton.M_GAPS + 2 * item.gap
                lo[:, i] = times[:, column] + 1
                hi[:, i] = times[:, column + 1] - 1
        at = end if a.variant.tail else t2
        return _Pending(rows, t1, t2, at, times[:, automaton.M_PART], lo, hi)

    def _release(self, upto: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The waiting matches known at or before ``upto`` (all: ``None``) that pass their
        negations: mappings, ``t1``, ``t2`` and the instant they are known at."""
        found: list[_Pending] = []
        for a in self.automata:
            ready = a.pending.at <= upto if upto is not None else np.ones(len(a.pending.at), bool)
            if not ready.any():
                continue
            done = a.pending.take(ready)
            a.pending = a.pending.take(~ready)
            if a.variant.negated:
                done = done.take(self._absent(a, done))
            found.append(done)
        if not found:
            no = np.zeros(0, np.int64)
            return np.zeros((0, self.width), np.int32), no, no, no
        rows = np.concatenate([p.rows for p in found])
        return (
            rows,
            np.concatenate([p.t1 for p in found]),
            np.concatenate([p.t2 for p in found]),
            np.concatenate([p.at for p in found]),
        )

    def _remember_events(
        self,
        chunk: _Chunk,
        keyed_ev: np.ndarray,
        keyed_part: np.ndarray,
        keyless: np.ndarray,
    ) -> None:
        """Keep the events of the streams of negated items with an exact GPM, with their
        partitions (-1: none, in every partition), for the gaps of the open windows."""
        mine = np.flatnonzero(np.isin(chunk.stream, self._exact_streams))
        if len(mine) == 0:
            return
        old = self._neg_events
        base = 0 if old is None else len(old.time)
        renumber = np.full(len(chunk.time), -1, np.int64)
        renumber[mine] = np.arange(len(mine)) + base
        free = mine[keyless[mine]]
        keyed = np.isin(keyed_ev, mine) & ~keyless[keyed_ev]
        events = np.concatenate([renumber[free], renumber[keyed_ev[keyed]]])
        parts = np.concatenate(
            [np.full(len(free), -1, np.int32), keyed_part[keyed].astype(np.int32)]
        )
        taken = chunk.take(mine)
        kept = taken if old is None else _Chunk.join(old, taken)
        member_ev = np.concatenate([self._neg_member[0], events])
        member_part = np.concatenate([self._neg_member[1], parts])
        if self.within >= 0:
            bound = self._kept_from(int(chunk.time[0]))
            first = int(np.searchsorted(kept.time, bound))
            if first:
                keep = member_ev >= first
                member_ev, member_part = member_ev[keep] - first, member_part[keep]
                kept = kept.take(np.arange(first, len(kept.time)))
        self._neg_events = kept
        self._neg_member = (member_ev, member_part)

    def _occurs_exactly(self, item: _Negated, mu: Mu, part: int, lo: int, hi: int) -> bool:
        """Whether a negated item with an exact GPM matches, under ``μ``, at an instant
        of ``lo..hi`` on events of partition ``part`` (the oracle's reading: each operand
        under ``μ`` on the instant's events of its stream, their solutions compatible)."""
        kept = self._neg_events
        if kept is None or lo > hi:
            return False
        member_ev, member_part = self._neg_member
        ok = (member_part == part) | (member_part == -1)
        events = np.unique(member_ev[ok])
        events = events[(kept.time[events] >= lo) & (kept.time[events] <= hi)]
        streams = {self.streams.index(self.gpms[o].stream) for o in item.operands}
        events = events[np.isin(kept.stream[events], list(streams))]
        graphs: dict[int, frozenset[Triple]] = {}
        for t in np.unique(kept.time[events]).tolist():
            at = events[kept.time[events] == t]
            hits: list[list[Mu]] = []
            for o in item.operands:
                stream = self.streams.index(self.gpms[o].stream)
                found: list[Mu] = []
                for e in at[kept.stream[at] == stream].tolist():
                    graph = graphs.get(e)
                    if graph is None:
                        graph = graphs[e] = _graph_of(kept, e, self.dictionary)
                    found += self._gpm_exactly(o, graph, int(kept.time[e]), mu)
                    self.stats.inexact_rows += 1
                hits.append(found)
            if all(hits) and any(
                all(a.compatible(b) for a, b in itertools.combinations(combo, 2))
                for combo in itertools.product(*hits)
            ):
                return True
        return False

    def _absent(self, a: _Automaton, done: _Pending) -> np.ndarray:
        """Which of the matches ``done`` no negated item matches in its gap."""
        exact = [
            i for i, n in enumerate(a.variant.negated) if any(self.gpm_exact[o] for o in n.operands)
        ]
        if exact:
            keep = self._absent_compiled(a, done, exact)
            names = list(self.slots.items())
            for m in np.flatnonzero(keep).tolist():
                row = done.rows[m]
                mu = Mu({n: self.dictionary.term(int(row[k])) for n, k in names if row[k] >= 0})
                for i in exact:
                    item = a.variant.negated[i]
                    lo, hi = int(done.lo[m, i]), int(done.hi[m, i])
                    if self._occurs_exactly(item, mu, int(done.part[m]), lo, hi):
                        keep[m] = False
                        break
            return keep
        return self._absent_compiled(a, done, [])

    def _absent_compiled(self, a: _Automaton, done: _Pending, skip: list[int]) -> np.ndarray:
        """:meth:`_absent` for the items without an exact GPM (``skip``: the others)."""
        if skip:
            lo = done.lo.copy()
            lo[:, skip] = 1
            hi = done.hi.copy()
            hi[:, skip] = 0
            done = _Pending(done.rows, done.t1, done.t2, done.at, done.part, lo, hi)
        n = len(self.gpms)
        neg_lo = np.searchsorted(self._neg_gpm, np.arange(n), "left")
        neg_hi = np.searchsorted(self._neg_gpm, np.arange(n), "right")
        while True:  # again while FILTER rows no program decides come up
            keep, open_f, open_rows = automaton.absent(
                np.ascontiguousarray(done.rows),
                done.part,
                done.lo,
                done.hi,
                a.item_lo,
                a.item_hi,
                a.item_gpm,
                neg_lo,
                neg_hi,
                self._neg_time,
                self._neg_part,
                np.ascontiguousarray(self._neg_rows),
                self.gpm_bind,
                self.gpm_nbind,
                self.gpm_f_lo,
                self.gpm_f_hi,
                *self._filters(),
                self._stored(),
            )
            if len(open_f) == 0:
                return np.asarray(keep, bool)
            self._decide(open_f, open_rows)

    def _exactly(self, exact: _Exact, asked: np.ndarray, keys: np.ndarray) -> None:
        """The solutions of exact GPMs the kernel asked for: ``{μ} ⋈ ⟦μ(P)⟧_G`` on the
        event's graph with ``μ`` the run's values of the variables the GPM names (Def. 7
        under the run), joined with the knowledge base part (Def. 15), by pyoxigraph as
        the oracle evaluates them."""
        table, _ = unique_rows(np.concatenate([asked.astype(np.int32), keys], axis=1))
        for row in table:
            gi, e = int(row[0]), int(row[1])
            key = row[2:]
            mu = Mu(
                {
                    name: self.dictionary.term(int(key[slot]))
                    for name, slot in self.slots.items()
                    if key[slot] >= 0
                }
            )
            seen = int(exact.seen[e])
            graph = exact.graph(seen, self.dictionary)
            found = self._gpm_exactly(gi, graph, int(exact.chunk.time[seen]), mu)
            exact.add(gi, e, key, self._compact(gi, self._rows_of(found)))
            self.stats.inexact_rows += 1
        exact.tables()

    def _gpm_exactly(self, gi: int, graph: frozenset[Triple], t: int, mu: Mu) -> list[Mu]:
        """``{μ} ⋈ ⟦μ(P)⟧_G`` for GPM ``gi`` on ``graph``, an event at ``t``, with its
        knowledge base part (``Γ(v)`` at ``t``)."""
        gpm = self.gpms[gi]
        found = self.matcher.match(gpm.pattern, graph, bound=mu)
        knowledge = self.knowledge[gi]
        if gpm.graph_kb is not None and knowledge is not None and found:
            kb = knowledge.graph_at(t)
            found = [
                nu for part in found for nu in self.matcher.match(gpm.graph_kb.pattern, kb, part)
            ]
        return found

    def _rows_of(self, found: list[Mu]) -> np.ndarray:
        """Mappings as rows of term ids (-1: unbound)."""
        rows = np.full((len(found), self.width), -1, np.int32)
        for r, mu in enumerate(found):
            for name, term in mu.items():
                slot = self.slots.get(name)
                if slot is not None:
                    rows[r, slot] = self.dictionary.intern(to_nt(term))
        return rows

    def _compact(self, gi: int, rows: np.ndarray) -> np.ndarray:
        """GPM ``gi``'s solution rows with its own variables only (the kernel's layout,
        ``gpm_bind``; -1 beyond them)."""
        out = np.full((len(rows), self.gpm_bind.shape[1]), -1, np.int32)
        k = int(self.gpm_nbind[gi])
        out[:, :k] = rows[:, self.gpm_bind[gi, :k]]
        return out

    def _alone_exactly(self, gi: int, batch: TripleBatch, events: np.ndarray) -> Solutions:
        """An exact GPM's solutions alone on ``events`` of the batch (its keys, choice 9)."""
        chunk = _Chunk(
            batch.event_end.astype(np.int64),
            batch.event_stream.astype(np.int32),
            batch.triple_event.astype(np.int32),
            batch.s,
            batch.p,
            batch.o,
        )
        event: list[np.ndarray] = [np.zeros(0, np.int32)]
        rows: list[np.ndarray] = [np.zeros((0, self.width), np.int32)]
        for e in events.tolist():
            graph = _graph_of(chunk, e, self.dictionary)
            found = self._rows_of(self._gpm_exactly(gi, graph, int(chunk.time[e]), Mu()))
            event.append(np.full(len(found), e, np.int32))
            rows.append(found)
            self.stats.inexact_rows += 1
        return Solutions(np.concatenate(event), np.concatenate(rows))

    def _filters(self) -> _FilterArgs:
        """The deferred FILTERs' programs, the verdicts given and the terms' typed values,
        as the kernels take them."""
        values = self.dictionary.values
        return (
            self.f_lo,
            self.f_hi,
            self.f_mask,
            self.f_nmask,
            self.f_used,
            self._known_f,
            self._known_rows,
            self._known_value,
            self.ops,
            self.args,
            values.kind,
            values.numeric,
            values.number,
            values.exact,
        )

    def _decide(self, f: np.ndarray, rows: np.ndarray) -> None:
        """The exact verdicts of deferred FILTER rows no program decided (the values of the
        variables each reads, the others -2), by pyoxigraph as the oracle evaluates them
        (SPARQL 1.1 sec. 17; an unbound variable is an error), kept for the kernel."""
        keys, _ = unique_rows(np.concatenate([f[:, None].astype(np.int32), rows], axis=1))
        verdicts = np.empty(len(keys), np.int8)
        for k, key in enumerate(keys.tolist()):
            mu = {
                name: self.dictionary.term(key[1 + slot])
                for name, slot in self.slots.items()
                if key[1 + slot] >= 0
            }
            holds = self.matcher.holds(to_sparql(self.deferred[key[0]].expr), Mu(mu))
            verdicts[k] = 1 if holds else 0
        self.stats.inexact_rows += len(keys)
        self._known_f = np.concatenate([self._known_f, keys[:, 0].astype(np.int64)])
        self._known_rows = np.concatenate([self._known_rows, keys[:, 1:]])
        self._known_value = np.concatenate([self._known_value, verdicts])

    def _results(
        self,
        m_rows: np.ndarray,
        t1: np.ndarray,
        t2: np.ndarray,
        at: np.ndarray,
        instants: np.ndarray,
    ) -> list[Result]:
        """Matches through the query form and streaming operator, instant by instant
        (``at``: when each is known; ``instants``: those that report without a new answer
        too)."""
        names = [n for n in self.slots if not n.startswith("_:")]
        form = self.plan.form
        if (
            isinstance(form, Select)
            and not form.expressions
            and self.plan.r2s is R2S.ISTREAM
            and not self.negations
            and self.output.start is None
        ):
            return _selected_results(self, form, names, m_rows, t1, t2)
        order = np.lexsort((t2, at))
        times = np.unique(np.concatenate([at, instants]))
        out: list[Result] = []
        k = 0
        terms: dict[int, object] = {}
        for t in times:
            answers: list[Answer] = []
            while k < len(order) and at[order[k]] == t:
                r = order[k]
                mu = {}
                for name in names:
                    ident = int(m_rows[r, self.slots[name]])
                    if ident >= 0:
                        term = terms.get(ident)
                        if term is None:
                            term = terms[ident] = self.dictionary.term(ident)
                        mu[name] = term
                answers.append((Mu(mu), int(t1[r]), int(t2[r])))  # type: ignore[arg-type]
                k += 1
            out += self.output.instant(int(t), answers, self.matcher)
        return out


def _selected_results(
    query: SequenceQuery,
    form: Select,
    names: list[str],
    rows: np.ndarray,
    t1: np.ndarray,
    t2: np.ndarray,
) -> list[Result]:
    """SELECT under IStream, column-wise: each distinct projected mapping with its
    interval is reported once, at its last event's time (the answer is a set, Def. 16;
    IStream reports what is new at an instant, RSP-QL Def. 21; every match is known at
    ``t2``)."""
    kept = [n for n in (form.variables or names) if n in query.slots]
    columns = [query.slots[n] for n in kept]
    table = np.concatenate([t2[:, None], t1[:, None], rows[:, columns].astype(np.int64)], axis=1)
    if len(table) == 0:
        return []
    order = np.lexsort(table.T[::-1])
    table = table[order]
    if len(table) > 1:  # each distinct row once, in the order of np.unique
        table = table[np.concatenate([[True], np.any(table[1:] != table[:-1], axis=1)])]
    ids = table[:, 2:]
    present = np.unique(ids[ids >= 0])
    terms = np.empty(len(present) + 1, dtype=object)  # the last one for unbound
    terms[:-1] = query.dictionary.nodes(present)
    at = np.where(ids >= 0, np.searchsorted(present, ids), len(present))
    # a list per variable (a column of terms), zipped into rows: cheaper than a 2-D object
    # array's rows
    objects = zip(*(terms[at[:, k]].tolist() for k in range(at.shape[1])), strict=True)
    ends = table[:, 0].tolist()
    intervals = zip(table[:, 1].tolist(), ends, strict=True)
    with no_collection():  # a dict and a result per answer, none in a cycle
        if bool(np.all(ids >= 0)):
            return [
                SelectResult(end, dict(zip(kept, values, strict=True)), interval)
                for end, interval, values in zip(ends, intervals, objects, strict=True)
            ]
        return [
            SelectResult(
                end, {n: v for n, v in zip(kept, values, strict=True) if v is not None}, interval
            )
            for end, interval, values in zip(ends, intervals, objects, strict=True)
        ]


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def _distinct_events(chunk: _Chunk) -> _Chunk:
    """The chunk with each event once: two events of one stream at one instant with the
    same graph are one event (``Event`` equality; SPAseq's streamset is a set of pairs
    ``(τ, G)`` per stream, Def. 3, and a conjunction's events are a set, Def. 8). Found by
    an order-free hash of each event's triples, then confirmed triple by triple."""
    n = len(chunk.time)
    if n < 2:
        return chunk
    with np.errstate(over="ignore"):
        h = (
            (chunk.s.astype(np.uint64) * _MIX[0])
            ^ (chunk.p.astype(np.uint64) * _MIX[1])
            ^ (chunk.o.astype(np.uint64) * _MIX[2])
        )
        h ^= h >> np.uint64(29)
        h *= _MIX[0]
    counts = np.bincount(chunk.triple_event, minlength=n)
    total = np.concatenate([[np.uint64(0)], np.cumsum(h, dtype=np.uint64)])
    bounds = np.concatenate([[0], np.cumsum(counts)])
    with np.errstate(over="ignore"):
        signature = total[bounds[1:]] - total[bounds[:-1]]
        key = (
            signature
            ^ (chunk.stream.astype(np.uint64) * _MIX[1])
            ^ (counts.astype(np.uint64) * _MIX[2])
        )
    if len(chunk.time) and not bool(np.all(chunk.time[:-1] <= chunk.time[1:])):
        order = np.lexsort((key, chunk.time))
    else:  # in time order (as evaluated): sorted by key within each instant only
        order = _by_key_within_instants(chunk.time, key)
    same = np.zeros(n, bool)
    a, b = order[1:], order[:-1]
    candidates = (
        (chunk.time[a] == chunk.time[b])
        & (key[a] == key[b])
        & (chunk.stream[a] == chunk.stream[b])
        & (counts[a] == counts[b])
        & (signature[a] == signature[b])
    )
    if not candidates.any():
        return chunk

    def graph(e: int) -> set[tuple[int, int, int]]:
        lo, hi = bounds[e], bounds[e + 1]
        return set(
            zip(
                chunk.s[lo:hi].tolist(),
                chunk.p[lo:hi].tolist(),
                chunk.o[lo:hi].tolist(),
                strict=True,
            )
        )

    for k in np.flatnonzero(candidates):
        # a run of equal keys: each event against the first of its run (b's first kept)
        first = k
        while first > 0 and candidates[first - 1]:
            first -= 1
        keep = order[first]
        if graph(int(order[k + 1])) == graph(int(keep)):
            same[order[k + 1]] = True
    return chunk.take(np.flatnonzero(~same))


@njit(cache=True, nogil=True)
def _by_key_within_instants(time: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The events in time order, those of one instant sorted by ``key`` (``time`` sorted):
    a sort per instant instead of one over the chunk."""
    n = time.shape[0]
    order = np.arange(n)
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and time[hi] == time[lo]:
            hi += 1
        if hi - lo > 1:
            inner = np.argsort(key[lo:hi], kind="mergesort")
            for i in range(hi - lo):
                order[lo + i] = lo + inner[i]
        lo = hi
    return order


def _reorder(chunk: _Chunk, order: np.ndarray) -> _Chunk:
    """The chunk's events in ``order`` (a permutation), triples renumbered."""
    if np.all(order[:-1] < order[1:]):
        return chunk
    rank = np.empty(len(order), np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    triple_event = rank[chunk.triple_event]
    t_order = np.argsort(triple_event, kind="stable")
    return _Chunk(
        chunk.time[order],
        chunk.stream[order],
        triple_event[t_order],
        chunk.s[t_order],
        chunk.p[t_order],
        chunk.o[t_order],
    )


@njit(cache=True, nogil=True)
def _first_seen(events: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A renumbering of ``n`` events in the order of their first appearance in
    ``events`` (the others after them): each event's new number, and the events in the
    new order."""
    rank = np.full(n, -1, np.int32)
    seen = np.empty(n, np.int64)
    k = 0
    for e in events:
        if rank[e] < 0:
            rank[e] = k
            seen[k] = e
            k += 1
    for e in range(n):
        if rank[e] < 0:
            rank[e] = k
            seen[k] = e
            k += 1
    return rank, seen


@njit(cache=True, nogil=True)
def _grouped(event: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by their event (``0 <= event < n``), in order within an event (a
    counting sort): the rows' order and each event's first row (``n + 1`` bounds)."""
    bounds = np.zeros(n + 1, np.int64)
    for e in event:
        bounds[e + 1] += 1
    for e in range(n):
        bounds[e + 1] += bounds[e]
    at = bounds[:-1].copy()
    order = np.empty(event.shape[0], np.int64)
    for i in range(event.shape[0]):
        order[at[event[i]]] = i
        at[event[i]] += 1
    return order, bounds
