"""EP-SPARQL evaluated incrementally on the columnar event operators: the interval operators
of Sect. 4.2 (seed 002), many detection instants at a time, equal to the oracle
(``rsep.semantics.epsparql``, which the engine does not import).

Timewise monotonicity (Sect. 4.2) is what makes the evaluation incremental: every solution
``⟨μ, tα, tω⟩`` of every operator depends only on occurrences that end by ``tω``, and the
optional joins only look at optional solutions ending by ``tω``. So the solutions of a
node ending in a span of instants are computed from the occurrences ending in it and from
the solutions of its operands that ended before it, which the node keeps in columns
(:class:`~rsep.engine.event_operators.Mappings`: term ids per variable, ``tα`` and ``tω``),
as ETALIS keeps the goals a rule may still complete (Sect. 5, rules (8)-(12)):

- ``BGP`` (:class:`_Bgp`): the choices of occurrences with at least one new one, joined in
  columns over the stream's occurrence table (:class:`_Occurrences`);
- ``Join``: the new solutions of one side with the kept and new ones of the other,
  compatible (:func:`~rsep.engine.event_operators.compatible_pairs`);
- ``SeqJoin``: a new right solution with the left ones that end before it starts;
- ``EqJoin`` and ``EqLeftJoin``: both sides over one interval;
- ``SeqRightJoin``: a new mandatory solution with the optional ones that end before it
  starts, or alone if none satisfies ``F`` (an anti-join);
- ``Union``, ``Filter`` (with ``σ``: :func:`sigma`), ETALIS's ``WITHIN`` and a sub-select
  (query (5)).

FILTERs run as the columnar engine's programs (:mod:`rsep.engine.expression`) where they
can, else exactly once per distinct binding (and interval, for ``σ``); BINDs and a
sub-select's expressions once per distinct binding.

``WITHIN d`` prunes: a kept solution or occurrence starting more than ``d`` before the
earliest new instant can only be part of solutions lasting more than ``d``, which WITHIN
drops (intervals only grow up the tree). The optional side of OPTIONALSEQ keeps, of those,
the earliest-ending one per mapping (all its test for a mandatory solution alone reads).

Every complete instant of a push is evaluated at once. CONSTRUCT rules (the plan itself when
its output is fed back, and the plan's ``rules``) make the Q-closure: the occurrences their
new solutions derive re-enter the stream with the solution's interval, and the instants are
evaluated again on them until nothing new is derived (``clos_Q(S)``, Sect. 4.2); a
derivation ends at its solution's instant, so monotone rules reach the same fixpoint over
many instants as one after the other; a rule with an anti-join (OPTIONALSEQ,
EQUALSOPTIONAL) is evaluated instant by instant. Results go through
:class:`rsep.engine.projection.Output`. State is bounded: ``max_runs`` solutions kept per
operator, ``max_window_events`` occurrences per stream.

A pattern beside the EP-SPARQL pattern (an :class:`~rsep.algebra.plan.EventJoin`) is
evaluated once per version of the dataset's graphs (RSP-QL Def. 10), and each instant's
solutions are joined with those of the version holding at the instant, keeping their
intervals, as the oracle joins an event pattern's answers with the group's solutions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
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
from rsep.algebra.gpm import group_of, inner_group
from rsep.algebra.occurrences import TriplePatterns, Variable, derived_triples, sigma, timed
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Construct, EventJoin, Plan, Rule, SubSelect
from rsep.engine.batch import TripleBatch, _node_text, event_range
from rsep.engine.bgp import GroupMatcher
from rsep.engine.continuous import InstantDataset, TimeVarying, background_source
from rsep.engine.event_operators import (
    UNBOUND,
    Mappings,
    aligned,
    before_pairs,
    compatible_pairs,
    concatenated,
    decoded,
    distinct_rows,
    in_rows,
    merged,
)
from rsep.engine.expression import Program, compile_filter, evaluate_rows
from rsep.engine.pattern import equal_pairs, join_keys
from rsep.engine.projection import Output
from rsep.engine.query import InstantQuery
from rsep.engine.terms import KIND_IRI, KIND_LITERAL, TermDictionary
from rsep.errors import UserError
from rsep.lang import ast
from rsep.rdf.event import Event
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, LiteralForms, Mu
from rsep.rdf.terms import Term
from rsep.reasoning.closure import entail_events
from rsep.reasoning.regime import engine_closure
from rsep.semantics.graph import version_instants

__all__ = ["EpsparqlQuery", "sigma"]

Solution = tuple[Mu, int, int]
"""``⟨μ, tα, tω⟩`` (Sect. 4.2)."""

Fresh = dict[str | None, tuple[int, int]]
"""The rows of each stream's occurrence table added in one round (``None``: the merged
stream with the derived occurrences)."""

_MEMO_LIMIT = 200_000
_EVENTS_AT_ONCE = 1 << 14
"""Complete instants' occurrences evaluated in one call at most (memory of a long push)."""
_CHUNK = 256
"""New occurrences a BGP under WITHIN takes at a time (the pairs of a whole push would
grow with its square)."""
_VARIABLE = re.compile(r"[?$]([A-Za-z_0-9]+)")


def _empty(names: Iterable[str]) -> Mappings:
    """No solution (a column per variable of ``names``)."""
    none = np.zeros(0, np.int64)
    return Mappings(none, none, none, {n: np.zeros(0, np.int32) for n in names})


def _solutions(t1: np.ndarray, t2: np.ndarray, columns: Mapping[str, np.ndarray]) -> Mappings:
    """Solutions ``⟨μ, tα, tω⟩`` in columns (the context is unused: one scope)."""
    return Mappings(np.zeros(len(t1), np.int64), t1, t2, dict(columns))


def _rows(found: Mappings) -> np.ndarray:
    """The solutions as an int64 table ``(tα, tω, ids…)`` (set operations)."""
    names = sorted(found.columns)
    return np.stack(
        [found.t1, found.t2, *(found.columns[n].astype(np.int64) for n in names)], axis=1
    )


def _minus(found: Mappings, known: Mappings) -> Mappings:
    """The solutions of ``found`` not in ``known`` (same columns)."""
    if not len(found) or not len(known):
        return found
    return found.take(np.flatnonzero(~in_rows(_rows(found), _rows(known))))


def _union(parts: Sequence[Mappings], names: Sequence[str]) -> Mappings:
    """The solutions of every part (their columns aligned to ``names``)."""
    out = _empty(names)
    for part in parts:
        if len(part):
            out = concatenated(out, aligned(part, names)) if len(out) else aligned(part, names)
    return out


def _pairs(a: Mappings, b: Mappings, *, interval: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The compatible pairs of ``a`` and ``b`` (SPARQL 1.1 sec. 18.3); with ``interval``,
    over one interval (EQUALS)."""
    shared = sorted(a.columns.keys() & b.columns.keys())
    lead = ([a.t1, a.t2], [b.t1, b.t2]) if interval else ([], [])
    return compatible_pairs(
        [*lead[0], *(a.columns[n] for n in shared)],
        [*lead[1], *(b.columns[n] for n in shared)],
        len(a),
        len(b),
        equal=len(lead[0]),
    )


def _combined(a: Mappings, li: np.ndarray, b: Mappings, ri: np.ndarray) -> Mappings:
    """``⟨μ ∪ μ', min(tα, t'α), max(tω, t'ω)⟩`` of each pair (Sect. 4.2)."""
    return _solutions(
        np.minimum(a.t1[li], b.t1[ri]),
        np.maximum(a.t2[li], b.t2[ri]),
        merged(a.columns, li, b.columns, ri),
    )


# Expressions ----------------------------------------------------------------------------------


class _Expressions:
    """FILTER and BIND expressions over solutions in columns: a FILTER by its program
    (:func:`~rsep.engine.expression.evaluate_rows`) where it has one and decides, else under
    each distinct binding by :class:`~rsep.engine.bgp.GroupMatcher` (in Python where it can
    tell, else pyoxigraph), each verdict and value remembered."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary
        self.matcher = GraphMatcher()
        self.patterns = GroupMatcher(self.matcher)
        self._programs: dict[tuple[str, tuple[str, ...]], Program | None] = {}
        self._holds: dict[tuple[str, tuple[str, ...], tuple[int, ...]], bool] = {}
        self._values: dict[tuple[str, tuple[str, ...], tuple[int, ...]], int] = {}
        self.exact = 0
        """Bindings a FILTER was evaluated on exactly (no program, or it could not decide)."""

    @property
    def forms(self) -> LiteralForms:
        return self.matcher.forms

    def _program(self, expression: str, names: tuple[str, ...]) -> Program | None:
        key = (expression, names)
        if key not in self._programs:
            program: Program | None = None
            where = inner_group(group_of("{ FILTER (" + expression + ") }"))
            if isinstance(where, ast.GroupPattern) and len(where.elements) == 1:
                element = where.elements[0]
                if isinstance(element, ast.Filter):
                    slots = {n: k for k, n in enumerate(names)}
                    compiled = compile_filter(element.expr, slots, self.dictionary.intern)
                    program = None if isinstance(compiled, str) else compiled
            self._programs[key] = program
        return self._programs[key]

    def _mu(self, names: Sequence[str], ids: Sequence[int]) -> Mu:
        term = self.dictionary.term
        return Mu({n: term(i) for n, i in zip(names, ids, strict=True) if i != UNBOUND})

    def holds(
        self, expression: str | None, found: Mappings, t1: np.ndarray, t2: np.ndarray
    ) -> np.ndarray:
        """``μ(σ_{t1 t2}(F)) = true`` on each row of ``found`` (``t1``, ``t2`` its intervals
        for ``σ``); an absent ``F`` is true, an error false."""
        n = len(found)
        if expression is None:
            return np.ones(n, bool)
        if not n:
            return np.zeros(0, bool)
        names = tuple(sorted(found.columns))
        verdict: np.ndarray | None = None
        if not timed(expression):
            program = self._program(expression, names)
            if program is not None:
                ids = (
                    np.stack([found.columns[m] for m in names], axis=1)
                    if names
                    else np.zeros((n, 0), np.int32)
                )
                code = evaluate_rows(program, ids, self.dictionary.values)
                if not (code == 2).any():
                    return np.asarray(code == 1)
                verdict = code
        used = sorted(set(_VARIABLE.findall(expression)) & set(names))
        rows = np.arange(n) if verdict is None else np.flatnonzero(verdict == 2)
        is_timed = timed(expression)
        parts = [found.columns[m][rows].astype(np.int64) for m in used]
        if is_timed:
            parts += [t1[rows], t2[rows]]
        if parts:
            keys, inverse = distinct_rows(np.stack(parts, axis=1))
        else:
            keys, inverse = np.zeros((1, 0), np.int64), np.zeros(len(rows), np.int64)
        out = np.empty(len(keys), bool)
        for k, key in enumerate(keys.tolist()):
            text = sigma(expression, key[-2], key[-1]) if is_timed else expression
            memo = (text, tuple(used), tuple(key[: len(used)]))
            known = self._holds.get(memo)
            if known is None:
                if len(self._holds) > _MEMO_LIMIT:
                    self._holds.clear()
                known = self._holds[memo] = self.patterns.holds(text, self._mu(used, memo[2]))
                self.exact += 1
            out[k] = known
        if verdict is None:
            return np.asarray(out[inverse])
        keep = np.asarray(verdict == 1)
        keep[rows] = out[inverse]
        return keep

    def extend(self, found: Mappings, expressions: Iterable[tuple[str, str]]) -> Mappings:
        """SPARQL's ``Extend``: each ``(v, e)`` bound to ``e``'s value unless it errs or
        ``v`` is bound (sec. 18.5), each under the ones before it."""
        columns = dict(found.columns)
        n = len(found)
        for name, expression in expressions:
            used = sorted(set(_VARIABLE.findall(expression)) & set(columns))
            table = (
                np.stack([columns[m].astype(np.int64) for m in used], axis=1)
                if used
                else (np.zeros((n, 0), np.int64))
            )
            if n and used:
                keys, inverse = distinct_rows(table)
            else:
                keys, inverse = np.zeros((1 if n else 0, 0), np.int64), np.zeros(n, np.int64)
            values = np.empty(len(keys), np.int32)
            for k, key in enumerate(keys.tolist()):
                memo = (expression, tuple(used), tuple(key))
                known = self._values.get(memo)
                if known is None:
                    if len(self._values) > _MEMO_LIMIT:
                        self._values.clear()
                    value = self.matcher.value(expression, self._mu(used, key))
                    known = UNBOUND if value is None else self.dictionary.intern(_node_text(value))
                    self._values[memo] = known
                values[k] = known
            value_of = values[inverse]
            before = columns.get(name)
            columns[name] = (
                value_of if before is None else np.where(before == UNBOUND, value_of, before)
            )
        return Mappings(found.context, found.t1, found.t2, columns)


# Occurrences ----------------------------------------------------------------------------------


class _Occurrences:
    """The occurrences ``⟨⟨s, p, o⟩, t, t'⟩`` of one stream that may still be used, as
    columns of term ids (a set: each once), with each term's match key (``keys``: a
    literal's stored form, as pyoxigraph matches constants; any other term itself)."""

    def __init__(self) -> None:
        self.s = np.zeros(0, np.int32)
        self.p = np.zeros(0, np.int32)
        self.o = np.zeros(0, np.int32)
        self.keys = np.zeros((0, 3), np.int32)
        self.t1 = np.zeros(0, np.int64)
        self.t2 = np.zeros(0, np.int64)
        self._kept = 0

    def __len__(self) -> int:
        return len(self.t1)

    def add(self, rows: np.ndarray, key: Callable[[np.ndarray], np.ndarray]) -> tuple[int, int]:
        """Add the occurrences ``(s, p, o, t, t')`` of ``rows`` not held yet (``S`` is a
        set; one held can only be equal if it ends as late); the rows they now fill."""
        lo = len(self)
        if len(rows):
            rows = distinct_rows(rows)[0]
            late = np.flatnonzero(self.t2 >= rows[:, 4].min())
            if len(late):
                held = np.stack(
                    [self.s[late], self.p[late], self.o[late], self.t1[late], self.t2[late]],
                    axis=1,
                ).astype(np.int64)
                rows = rows[~in_rows(rows, held)]
        if len(rows):
            spo = rows[:, :3].astype(np.int32)
            self.s = np.concatenate([self.s, spo[:, 0]])
            self.p = np.concatenate([self.p, spo[:, 1]])
            self.o = np.concatenate([self.o, spo[:, 2]])
            self.keys = np.concatenate([self.keys, key(spo.reshape(-1)).reshape(-1, 3)])
            self.t1 = np.concatenate([self.t1, rows[:, 3]])
            self.t2 = np.concatenate([self.t2, rows[:, 4]])
        return lo, len(self)

    def keep(self, floor: int) -> None:
        """Drop the occurrences starting before ``floor`` (amortised: when their count
        doubled since the last time)."""
        if len(self) < max(64, 2 * self._kept):
            return
        rows = np.flatnonzero(self.t1 >= floor)
        self.s, self.p, self.o = self.s[rows], self.p[rows], self.o[rows]
        self.keys, self.t1, self.t2 = self.keys[rows], self.t1[rows], self.t2[rows]
        self._kept = len(self)


class _Keys:
    """The match key of each term id: a literal's stored form, interned (LiteralForms),
    any other term's own id (``μ`` binds the data's term, matching compares the keys)."""

    def __init__(self) -> None:
        self._key = np.zeros(0, np.int32)

    def of(self, ids: np.ndarray, dictionary: TermDictionary, forms: LiteralForms) -> np.ndarray:
        size = len(dictionary)
        if len(self._key) < size:
            fresh = np.arange(len(self._key), size, dtype=np.int32)
            key = fresh.copy()
            kinds = dictionary.values.kind[fresh]
            for k in np.flatnonzero(kinds == KIND_LITERAL).tolist():
                term = dictionary.term(int(fresh[k]))
                if isinstance(term, Literal):
                    stored = forms.stored_form(term)
                    if stored != term:
                        key[k] = dictionary.intern(_node_text(stored))
            self._key = np.concatenate([self._key, key])
            if len(self._key) < len(dictionary):  # stored forms interned just now
                return self.of(ids, dictionary, forms)
        return np.asarray(self._key[ids])


# Operators ------------------------------------------------------------------------------------


class _Node:
    """An operator of Sect. 4.2 in the tree of one pattern. ``now`` holds its solutions
    ending at the instants being evaluated; ``kept`` those of earlier instants, when its
    parent reads them; ``bound`` the smallest WITHIN above it (pruning); ``reset`` is true
    when its subtree is not monotone within an instant (EqLeftJoin), so a Q-closure round
    recomputes it whole."""

    names: tuple[str, ...]
    """Every variable its solutions may bind (their columns)."""
    children: tuple[_Node, ...] = ()

    def __init__(self) -> None:
        self.now: Mappings = _empty(())
        self.kept: Mappings | None = None
        self.bound: int | None = None
        self.reset = False
        self._pruned = 0
        self.optional_of: _OptionalSeq | None = None
        """The OPTIONALSEQ whose optional side this is (it compacts ``kept``)."""

    def walk(self) -> Iterable[_Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def begin(self) -> None:
        self.now = _empty(self.names)

    def update(self, query: EpsparqlQuery, fresh: Fresh) -> Mappings:
        """One round: the solutions new in this round (all of ``now`` when ``reset``)."""
        increments = [child.update(query, fresh) for child in self.children]
        if self.reset:
            increments = [child.now for child in self.children]
        found = aligned(self.compute(query, increments), self.names).distinct()
        if self.reset:
            self.now = found
            return found
        new = _minus(found, self.now)
        self.now = _union([self.now, new], self.names)
        return new

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        """The solutions at the instants that use the operands' ``increments``."""
        raise NotImplementedError

    def _short(self, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
        """Which intervals last at most the WITHIN bound above: a longer solution only
        makes longer ones up the tree, which that WITHIN drops."""
        if self.bound is None:
            return np.ones(len(t1), bool)
        return np.asarray(t2 - t1 <= self.bound)

    def every(self) -> Mappings:
        """The kept solutions and those of the instants being evaluated."""
        assert self.kept is not None
        return _union([self.kept, self.now], self.names)

    def commit(self, limit: int, latest: int) -> None:
        """End of the instants (the last ``latest``): ``now`` joins ``kept``, bounded by
        ``max_runs`` after dropping (or compacting, on OPTIONALSEQ's optional side) what
        no later instant reads."""
        if self.kept is not None and len(self.now):
            self.kept = _union([self.kept, self.now], self.names)
            if len(self.kept) > limit and self.bound is not None:
                self.prune(latest - self.bound, force=True)
            reader = self.optional_of
            if len(self.kept) > limit and reader is not None and reader.bound is not None:
                reader.compact(latest - reader.bound, force=True)
            if len(self.kept) > limit:
                raise UserError(
                    f"{type(self).__name__.strip('_')} keeps {len(self.kept)} partial "
                    f"solutions, more than max_runs = {limit} (EP-SPARQL keeps every "
                    "combination of occurrences; bound the pattern with WITHIN or raise it "
                    "with --set max_runs=N)"
                )
        self.now = _empty(self.names)

    def prune(self, floor: int, force: bool = False) -> None:
        """Drop the kept solutions starting before ``floor`` (amortised)."""
        kept = self.kept
        if kept is None or (not force and len(kept) < max(64, 2 * self._pruned)):
            return
        self.kept = kept.take(np.flatnonzero(kept.t1 >= floor))
        self._pruned = len(self.kept)


class _Bgp(_Node):
    """``BGP(P)`` of a stream pattern, extended by its BINDs (``Extend``)."""

    def __init__(self, node: StreamBgp) -> None:
        super().__init__()
        self.patterns = TriplePatterns.parse(node.pattern.text, "the stream pattern")
        if not self.patterns.triples:
            raise UserError("an empty stream pattern has no interval (EP-SPARQL Sect. 4.2, BGP)")
        self.source = node.stream
        self.binds = node.binds or ()
        self.names = tuple(sorted(self.patterns.variables | {n for n, _ in self.binds}))

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        raise AssertionError("a BGP reads occurrences")  # pragma: no cover

    def update(self, query: EpsparqlQuery, fresh: Fresh) -> Mappings:
        rows = fresh.get(self.source)
        if rows is None or rows[0] == rows[1]:
            return _empty(self.names)
        found = query._bgp(self.patterns, query.occurrences[self.source], *rows, self.bound)
        found = found.take(np.flatnonzero(self._short(found.t1, found.t2)))
        if self.binds:
            found = query._expressions.extend(found, self.binds)
        found = aligned(found, self.names).distinct()
        new = _minus(found, self.now)
        self.now = _union([self.now, new], self.names)
        return new


class _Binary(_Node):
    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__()
        self.left, self.right = left, right
        self.children = (left, right)
        self.names = tuple(sorted({*left.names, *right.names}))


class _Join(_Binary):
    """``Join(Ψ, Ψ')`` (Sect. 4.2): every compatible pair."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        left.kept, right.kept = _empty(left.names), _empty(right.names)

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        new_left, new_right = increments
        parts = []
        for a, b in ((new_left, self.right.every()), (self.left.every(), new_right)):
            if len(a) and len(b):
                li, ri = _pairs(a, b)
                short = self._short(np.minimum(a.t1[li], b.t1[ri]), np.maximum(a.t2[li], b.t2[ri]))
                parts.append(_combined(a, li[short], b, ri[short]))
        return _union(parts, self.names)


class _Union(_Binary):
    """``Union(Ψ, Ψ') = Ψ ∪ Ψ'``."""

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        return _union(increments, self.names)


class _Seq(_Binary):
    """``SeqJoin(Ψ, Ψ')`` (SEQ): compatible pairs with ``tω < t'α``; a new right solution
    meets the left ones that end before it starts."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        left.kept = _empty(left.names)

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        # a left solution new in a later round of the Q-closure may end before a right
        # one found in an earlier round (many instants at once)
        parts = [(self.left.every(), increments[1]), (increments[0], self.right.now)]
        found = []
        for a, b in parts:
            if len(a) and len(b):
                li, ri = before_pairs(a, b, self.bound)
                found.append(_combined(a, li, b, ri))
        return _union(found, self.names)


class _Equals(_Binary):
    """``EqJoin(Ψ, Ψ')`` (EQUALS): compatible pairs over one interval."""

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        parts = []
        for a, b in ((increments[0], self.right.now), (self.left.now, increments[1])):
            if len(a) and len(b):
                li, ri = _pairs(a, b, interval=True)
                parts.append(_combined(a, li, b, ri))
        return _union(parts, self.names)


class _OptionalSeq(_Binary):
    """``SeqRightJoin(Ψ', Ψ, F)`` (``P' OPTIONALSEQ P``; ``left`` is the optional ``Ψ'``):
    ``Filter(F, SeqJoin(Ψ', Ψ))``, and each solution of ``Ψ`` with no compatible earlier
    solution of ``Ψ'`` for which ``F`` holds under its own interval (an anti-join)."""

    def __init__(self, left: _Node, right: _Node, condition: str | None) -> None:
        super().__init__(left, right)
        self.condition = condition
        left.kept = _empty(left.names)
        left.optional_of = self

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        m = increments[1]
        if not len(m):
            return _empty(self.names)
        o = self.left.every()
        li, ri = before_pairs(o, m, None)
        joined = _combined(o, li, m, ri)
        ev = query._expressions
        keep = ev.holds(self.condition, joined, joined.t1, joined.t2)
        if self.bound is not None:
            # a join with an optional solution starting before the floor lasts longer
            # than the WITHIN above allows: only the test for m alone reads those
            keep &= o.t1[li] >= m.t2[ri] - self.bound
        blocks = ev.holds(self.condition, joined, m.t1[ri], m.t2[ri])
        alone = np.ones(len(m), bool)
        alone[ri[blocks]] = False
        return _union(
            [joined.take(np.flatnonzero(keep)), m.take(np.flatnonzero(alone))], self.names
        )

    def compact(self, floor: int, force: bool = False) -> None:
        """Of the optional solutions starting before ``floor``, keep the earliest-ending
        one per mapping: all the test for a mandatory solution alone reads of one too old
        to join under WITHIN (its mapping, and that it ends before)."""
        kept = self.left.kept
        if kept is None or (not force and len(kept) < max(64, 2 * self.left._pruned)):
            return
        old = np.flatnonzero(kept.t1 < floor)
        names = sorted(kept.columns)
        table = (
            np.stack(
                [*(kept.columns[n][old].astype(np.int64) for n in names), kept.t2[old]], axis=1
            )
            if names
            else kept.t2[old].reshape(-1, 1)
        )
        order = np.lexsort(table.T[::-1])
        ordered = table[order, :-1]
        first = np.ones(len(order), bool)
        first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1) if ordered.shape[1] else False
        rows = np.concatenate([old[order[first]], np.flatnonzero(kept.t1 >= floor)])
        self.left.kept = kept.take(np.sort(rows))
        self.left._pruned = len(self.left.kept)


class _EqualsOptional(_Binary):
    """``EqLeftJoin(Ψ, Ψ', F)`` (``P EQUALSOPTIONAL P'``): ``Filter(F, EqJoin(Ψ, Ψ'))`` and
    each solution of ``Ψ`` with no compatible simultaneous one of ``Ψ'`` satisfying ``F``.
    Not monotone within an instant: recomputed whole each round."""

    def __init__(self, left: _Node, right: _Node, condition: str | None) -> None:
        super().__init__(left, right)
        self.condition = condition

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        m, o = self.left.now, self.right.now
        li, ri = _pairs(m, o, interval=True)
        joined = _combined(m, li, o, ri)
        keep = query._expressions.holds(self.condition, joined, joined.t1, joined.t2)
        alone = np.ones(len(m), bool)
        alone[li[keep]] = False
        return _union(
            [joined.take(np.flatnonzero(keep)), m.take(np.flatnonzero(alone))], self.names
        )


class _Unary(_Node):
    def __init__(self, child: _Node) -> None:
        super().__init__()
        self.child = child
        self.children = (child,)
        self.names = child.names


class _Filter(_Unary):
    """``Filter(F, Ψ)``: the solutions with ``μ(σ_{tα tω}(F))`` true."""

    def __init__(self, child: _Node, expression: str) -> None:
        super().__init__(child)
        self.expression = expression

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        found = increments[0]
        keep = query._expressions.holds(self.expression, found, found.t1, found.t2)
        return found.take(np.flatnonzero(keep))


class _Within(_Unary):
    """ETALIS's ``WITHIN d``: the solutions with ``tω - tα ≤ d``."""

    def __init__(self, child: _Node, duration: int) -> None:
        super().__init__(child)
        self.duration = duration

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        found = increments[0]
        return found.take(np.flatnonzero(found.t2 - found.t1 <= self.duration))


class _SubSelect(_Unary):
    """``Project(Extend(Ψ, v, e)…, V)`` of a sub-select (SPARQL 1.1 sec. 18.2.1; query
    (5)): each solution extended by the expressions, restricted to the projection, over
    its own interval (the oracle's ``sub_select``)."""

    def __init__(self, child: _Node, node: SubSelect) -> None:
        super().__init__(child)
        self.projection = node.projection
        self.expressions = node.expressions
        self.names = tuple(sorted(set(node.projection)))

    def compute(self, query: EpsparqlQuery, increments: list[Mappings]) -> Mappings:
        found = query._expressions.extend(increments[0], self.expressions)
        return aligned(found, self.names)


def _tree(pattern: EventPattern) -> _Node:
    """The operator tree of an EP-SPARQL pattern (one node per node of the plan)."""
    if isinstance(pattern, StreamBgp):
        return _Bgp(pattern)
    if isinstance(pattern, EventFilter):
        return _Filter(_tree(pattern.pattern), pattern.expression)
    if isinstance(pattern, Within):
        return _Within(_tree(pattern.pattern), pattern.duration)
    if isinstance(pattern, SubSelect):
        return _SubSelect(_tree(pattern.pattern), pattern)
    if isinstance(pattern, And):
        return _Join(_tree(pattern.left), _tree(pattern.right))
    if isinstance(pattern, Or):
        return _Union(_tree(pattern.left), _tree(pattern.right))
    if isinstance(pattern, SeqJoin):
        return _Seq(_tree(pattern.left), _tree(pattern.right))
    if isinstance(pattern, EqJoin):
        return _Equals(_tree(pattern.left), _tree(pattern.right))
    if isinstance(pattern, OptionalSeq):
        return _OptionalSeq(_tree(pattern.left), _tree(pattern.right), pattern.filter)
    if isinstance(pattern, EqualsOptional):
        return _EqualsOptional(_tree(pattern.left), _tree(pattern.right), pattern.filter)
    raise UserError(f"{type(pattern).__name__} is not an operator of EP-SPARQL (Sect. 4.2)")


def _annotate(node: _Node, bound: int | None) -> bool:
    """Set each node's WITHIN bound and reset flag; return whether the subtree resets."""
    if isinstance(node, _Within):
        bound = node.duration if bound is None else min(bound, node.duration)
    node.bound = bound
    reset = isinstance(node, _EqualsOptional)
    for child in node.children:
        # an old optional solution of OPTIONALSEQ still decides a new mandatory one
        below = None if isinstance(node, _OptionalSeq) and child is node.children[0] else bound
        reset = _annotate(child, below) or reset
    node.reset = reset
    return reset


# The graph pattern beside -------------------------------------------------------------------


def _root(plan: Plan) -> EventPattern:
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    if not isinstance(root, EventPattern):
        raise UserError(f"the plan's r2r is {type(root).__name__}, not an EP-SPARQL pattern")
    return root


@dataclass(frozen=True)
class _Beside:
    """The solutions of the graph pattern beside the event pattern, per version of the
    dataset's graphs: ``solutions[i]`` over the graphs as they are from ``changes[i - 1]``
    (every instant at which one of them may change, sorted)."""

    changes: tuple[int, ...]
    solutions: tuple[list[Mu], ...]

    def at(self, t: int) -> list[Mu]:
        """The solutions over the dataset at ``t``."""
        return self.solutions[bisect.bisect_right(self.changes, t)]


def _beside(plan: Plan, graphs: Mapping[str, frozenset[Triple] | TimeVarying]) -> _Beside | None:
    """The solutions of the graph pattern beside the event pattern over each version of the
    dataset's graphs, static or time-varying, or None when there is none."""
    r2r = plan.r2r
    if not isinstance(r2r, EventJoin):
        return None
    if r2r.graph.paths:
        raise UserError("nested paths are CQELS-CEP's (Sect. 2.3), not EP-SPARQL's")
    wanted = [*plan.dataset.default_graphs, *plan.dataset.named_graphs]
    missing = [iri for iri in wanted if iri not in graphs]
    if missing:
        raise UserError("no content given for graph(s) " + ", ".join(f"<{i}>" for i in missing))
    changes = sorted(
        {c for g in graphs.values() if isinstance(g, TimeVarying) for c in g.changes()}
    )
    dataset = InstantDataset(plan, LiteralForms())
    found: list[list[Mu]] = []
    for instant in version_instants(changes):
        at = {iri: g.at(instant) if isinstance(g, TimeVarying) else g for iri, g in graphs.items()}
        dataset.update([], at)
        rows = dataset.query(f"SELECT *\nWHERE {{\n{r2r.graph.text}\n}}", instant)
        found.append([Mu(row) for row in rows])
    return _Beside(tuple(changes), tuple(found))


def _joined(answers: Iterable[Solution], beside: list[Mu]) -> list[Solution]:
    """Each answer joined with each compatible solution of the pattern beside it, over the
    answer's interval (SPARQL 1.1 sec. 18.5 Join, RSEP-QL Sect. 4.2)."""
    return [
        (mu.join(other), t1, t2)
        for mu, t1, t2 in answers
        for other in beside
        if mu.compatible(other)
    ]


# The query ----------------------------------------------------------------------------------


class EpsparqlQuery(InstantQuery):
    """An EP-SPARQL plan evaluated incrementally (module docstring): push events, advance
    the watermark, get the oracle's results. The plan's :attr:`~Plan.closure_rules` (its
    own when it is a CONSTRUCT fed back, then the CONSTRUCT statements of other queries it
    carries) make ``clos_Q(S)``; from ``start`` (the oracle's start of the range) the
    answers are reported as :class:`~rsep.engine.projection.Output` says."""

    dictionary: TermDictionary

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, frozenset[Triple] | TimeVarying] | None = None,
        *,
        start: int | None = None,
        dictionary: TermDictionary | None = None,
    ) -> None:
        """``graphs``: static or time-varying (RSP-QL Def. 10); ``dictionary``: the term
        ids of the batches it takes, shared with other queries."""
        plan = apply_profile(plan)
        params = plan.parameters
        given = graphs or {}
        self.closure = engine_closure(params, given)
        """The ontology stream items are entailed with (``entailment``), or None."""
        super().__init__(plan)
        root = _root(plan)
        sources = {iri: background_source(params, g) for iri, g in given.items()}
        self.beside = _beside(plan, sources)
        """The solutions of the graph pattern beside the event pattern, or None."""
        self._answer: list[Solution] = []
        """Every solution so far, kept when the graphs beside change."""
        self.rules: tuple[Rule, ...] = plan.closure_rules
        self.templates = tuple(
            TriplePatterns.parse("{ " + r.template + " }", "a CONSTRUCT template")
            for r in self.rules
        )
        form = plan.form
        self._template = (
            TriplePatterns.parse("{ " + form.template + " }", "a CONSTRUCT template")
            if isinstance(form, Construct)
            else None
        )
        trees: dict[EventPattern, _Node] = {}
        for pattern in (root, *(r.pattern for r in self.rules)):
            if pattern not in trees:
                trees[pattern] = tree = _tree(pattern)
                _annotate(tree, None)
        self.trees = list(trees.values())
        self.root = trees[root]
        self.rule_trees = [trees[r.pattern] for r in self.rules]
        self.max_runs = plan.parameters.max_runs
        self.max_events = plan.parameters.max_window_events
        self.output = Output(plan, start=start)
        self._sources: dict[str | None, int | None] = {}  # stream -> pruning bound
        for tree in self.trees:
            for node in tree.walk():
                if isinstance(node, _Bgp):
                    known = self._sources.get(node.source, -1)
                    wider = None if known is None or node.bound is None else max(known, node.bound)
                    self._sources[node.source] = wider
        if self.rules and None not in self._sources:
            self._sources[None] = 0  # derived occurrences no pattern reads
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        self.occurrences = {source: _Occurrences() for source in self._sources}
        self._keys = _Keys()
        self._constants: dict[Term, int] = {}
        self._queue: list[tuple[int, list[Event]]] = []
        self._one_by_one = bool(self.rules) and any(
            isinstance(node, _OptionalSeq | _EqualsOptional)
            for tree in self.trees
            for node in tree.walk()
        )
        """Whether instants are evaluated one after the other (:meth:`_run`): with rules
        that are not monotone. Monotone rules have one least fixpoint over many instants,
        each solution and derivation ending at its own instant (timewise monotonicity)."""
        self._queued = 0
        self._prepare()

    def _prepare(self) -> None:
        """What is rebuilt rather than pickled: the expression evaluator (pyoxigraph)."""
        self._expressions = _Expressions(self.terms)
        self._decoded: dict[int, Term] = {}

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_expressions")
        state.pop("_decoded")
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._prepare()

    @property
    def terms(self) -> TermDictionary:
        """The term ids of the occurrences and solutions (and of the batches pushed)."""
        return self.dictionary

    def _constant(self, term: Term) -> int:
        """The match key of a pattern's constant (interned once)."""
        known = self._constants.get(term)
        if known is None:
            ident = self.terms.intern(_node_text(term))
            known = self._constants[term] = int(self._key(np.array([ident]))[0])
        return known

    def _key(self, ids: np.ndarray) -> np.ndarray:
        """The match keys of term ids (:class:`_Keys`)."""
        return self._keys.of(ids, self.terms, self._expressions.forms)

    @property
    def exact_filters(self) -> int:
        """Bindings a FILTER was evaluated on exactly (no program, or undecided)."""
        return self._expressions.exact

    # IncrementalQuery --------------------------------------------------------------------

    def push(self, events: Iterable[Event] | TripleBatch) -> list[Result]:
        """Take a batch of events in non-decreasing time (of every stream: ``S`` merges
        them), as objects or a batch of :attr:`dictionary`'s ids; return the answers of
        every instant the batch completes."""
        self._check_open()
        if isinstance(events, TripleBatch):
            if self.closure is None and self._batch_in_order(events):
                return self._push_batch(events)
            events = events.events(self.dictionary)
        if self.closure is not None:
            events = entail_events(events, self.closure)
        events = list(events)
        if self._in_order(events):
            return self._push_in_order(events)
        out: list[Result] = []
        for event in events:
            self._check_order(event)
            out += self._hold(event)
            if self._queued >= _EVENTS_AT_ONCE:
                out += self._run()
        return out + self._run()

    def _in_order(self, events: list[Event]) -> bool:
        """Whether a push can skip the event-by-event checks: 16 events or more, in time
        order, none before the held instant nor at or before the watermark (those are
        refused one by one, naming the event)."""
        if len(events) < 16 or self._one_by_one:
            return False
        floor = self._pending_time if self._pending_time is not None else self._last_time
        first = events[0].t_end
        if (floor is not None and first < floor) or (
            self.watermark is not None and first <= self.watermark
        ):
            return False
        ends = [e.t_end for e in events]
        return all(a <= b for a, b in pairwise(ends))

    def _push_in_order(self, events: list[Event]) -> list[Result]:
        """:meth:`push` of events in time order: every instant before the last one is
        complete and evaluated (:meth:`_complete`); the last one is held."""
        held = self._pending + events
        last = events[-1].t_end
        cut = len(held)
        while cut and held[cut - 1].t_end == last:
            cut -= 1
        self._pending, self._pending_time = held[cut:], last
        return self._complete(*self._occurrence_rows(held[:cut]))

    def _batch_in_order(self, batch: TripleBatch) -> bool:
        """Whether a batch of ids goes in whole (:meth:`_push_batch`): in time order, none
        before the held instant nor at or before the watermark, and instants evaluated
        together (else its events go one by one, refused naming the event)."""
        if not len(batch) or self._one_by_one:
            return False
        end = batch.event_end
        floor = self._pending_time if self._pending_time is not None else self._last_time
        first = int(end[0])
        if (floor is not None and first < floor) or (
            self.watermark is not None and first <= self.watermark
        ):
            return False
        return bool(np.all(end[1:] >= end[:-1]))

    def _push_batch(self, batch: TripleBatch) -> list[Result]:
        """:meth:`push` of a batch of ids in time order: its occurrences taken as they are
        (no text per term); every instant before its last is complete, the last is held."""
        last = int(batch.event_end[-1])
        cut = int(np.searchsorted(batch.event_end, last, "left"))
        if self._pending_time is not None and self._pending_time < last:
            rows, stream = self._occurrence_rows(self._pending)
            self._pending = []
        else:
            rows, stream = np.zeros((0, 5), np.int64), np.zeros(0, object)
        self._pending += event_range(batch, cut, len(batch)).events(self.dictionary)
        self._pending_time = last
        head = event_range(batch, 0, cut)
        count = np.bincount(head.triple_event, minlength=len(head))
        ordered = np.empty((len(head.s), 5), np.int64)
        ordered[:, 0], ordered[:, 1], ordered[:, 2] = head.s, head.p, head.o
        ordered[:, 3] = np.repeat(head.event_start, count)
        ordered[:, 4] = np.repeat(head.event_end, count)
        names = np.asarray(head.streams, object)[np.repeat(head.event_stream, count)]
        return self._complete(np.concatenate([rows, ordered]), np.concatenate([stream, names]))

    def _complete(self, rows: np.ndarray, stream: np.ndarray) -> list[Result]:
        """Evaluate complete instants' occurrences (rows in time order), a cap's worth of
        them at a time, an instant never split."""
        out: list[Result] = []
        ends = rows[:, 4]
        lo = 0
        while lo < len(rows):
            hi = min(lo + _EVENTS_AT_ONCE, len(rows))
            if hi < len(rows):  # an instant is whole
                hi = int(np.searchsorted(ends, ends[hi - 1], "right"))
            times = np.unique(ends[lo:hi]).tolist()
            self._last_time = times[-1]
            out += self._evaluate(times, rows[lo:hi], stream[lo:hi])
            lo = hi
        return out

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the pending instant, if at or before ``t``, is
        final."""
        self._check_open()
        return self._release(t) + self._run()

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the last instant's answers (none after ``until``)."""
        self._check_open()
        out = self._flush() + self._run()
        self._finished = True
        return [r for r in out if until is None or r.time <= until]

    # Instants ----------------------------------------------------------------------------

    def _instant(self, t: int, events: list[Event]) -> list[Result]:
        """Queue a complete instant: the queue is evaluated at once (:meth:`_run`)."""
        self._queue.append((t, events))
        self._queued += len(events)
        return []

    def _run(self) -> list[Result]:
        """Evaluate the queued instants at once; one after the other (each to its
        Q-closure) when a CONSTRUCT rule's pattern is not monotone (an anti-join decides
        on what an instant's later rounds derive)."""
        queue, self._queue, self._queued = self._queue, [], 0
        if not queue:
            return []
        if self._one_by_one:
            out: list[Result] = []
            for t, events in queue:
                out += self._evaluate([t], *self._occurrence_rows(events))
            return out
        rows, stream = self._occurrence_rows([e for _, events in queue for e in events])
        return self._evaluate([t for t, _ in queue], rows, stream)

    def _evaluate(self, times: list[int], rows: np.ndarray, stream: np.ndarray) -> list[Result]:
        """The instants ``times`` (increasing), whose occurrences are ``rows`` (``(s, p,
        o, t, t')`` of ids, each one's ``stream``): they enter the stream, every tree
        computes its solutions ending at them, the rules' derivations re-enter until none is
        new (``clos_Q``, one instant), and the root's solutions are the answers at each
        instant."""
        first = times[0]
        self._prune(first)
        fresh: Fresh = {}
        for source, table in self.occurrences.items():
            fresh[source] = table.add(rows if source is None else rows[stream == source], self._key)
            self._check_size(source, times)
        for tree in self.trees:
            for node in tree.walk():
                node.begin()
        while True:
            increments = {id(tree): tree.update(self, fresh) for tree in self.trees}
            for tree in self.trees:
                self._check_runs(tree.now)
            if not self.rules:
                break
            derived = self._derive(increments)
            fresh = {None: self.occurrences[None].add(derived, self._key)}
            if fresh[None][0] == fresh[None][1]:
                break
            self._check_size(None, times)
        answers = self.root.now
        for tree in self.trees:
            for node in tree.walk():
                node.commit(self.max_runs, times[-1])
        return self._report(times, answers)

    def _occurrence_rows(self, events: list[Event]) -> tuple[np.ndarray, np.ndarray]:
        """The events' triple occurrences as rows ``(s, p, o, t, t')`` of term ids, and each
        one's stream."""
        texts = [
            text
            for e in events
            for x in e.graph
            for text in (str(x.subject), str(x.predicate), _node_text(x.object))
        ]
        counts = [len(e.graph) for e in events]
        ids = self.terms.encode(texts).astype(np.int64).reshape(-1, 3)
        rows = np.empty((len(ids), 5), np.int64)
        rows[:, :3] = ids
        rows[:, 3] = np.repeat(np.array([e.t_start for e in events], np.int64), counts)
        rows[:, 4] = np.repeat(np.array([e.t_end for e in events], np.int64), counts)
        stream = np.repeat(np.array([e.stream for e in events], object), counts)
        return rows, stream

    def _derive(self, increments: Mapping[int, Mappings]) -> np.ndarray:
        """``μ(P_q)`` over each new solution's interval of each rule whose ``μ`` binds every
        variable of ``P_q`` (the Q-closure's conditions (1)-(2)), as occurrence rows."""
        texts: list[str] = []
        t1: list[int] = []
        t2: list[int] = []
        parts: list[np.ndarray] = []
        for number, (template, tree) in enumerate(
            zip(self.templates, self.rule_trees, strict=True)
        ):
            found = increments[id(tree)]
            made = self._instantiated(template, found, whole=True)
            if made is not None:
                spo, rows = made
                parts.append(np.concatenate([spo, found.t1[rows, None], found.t2[rows, None]], 1))
                continue
            for mu, a, b in self._answers(found):
                for triple in derived_triples(number, template, mu, a, b):
                    texts += (str(triple.subject), str(triple.predicate), _node_text(triple.object))
                    t1.append(a)
                    t2.append(b)
        ids = self.terms.encode(texts).astype(np.int64).reshape(-1, 3)
        parts.append(
            np.concatenate(
                [
                    ids,
                    np.array(t1, np.int64).reshape(-1, 1),
                    np.array(t2, np.int64).reshape(-1, 1),
                ],
                axis=1,
            )
        )
        return np.concatenate(parts)

    def _instantiated(
        self, template: TriplePatterns | None, found: Mappings, *, whole: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``μ(P_q)`` of each solution in columns (SPARQL 1.1 sec. 16.2): rows ``(s, p, o)``
        of ids and each one's solution; a triple with an unbound variable (with ``whole``:
        a solution not binding every variable, the Q-closure's condition (1)) or a literal
        as subject or predicate left out. ``None`` when the template has blank nodes or
        literals (fresh per solution, stored forms: the exact path)."""
        if template is None:
            return None
        n = len(found)
        slots: list[list[np.ndarray]] = []
        for triple in template.triples:
            row: list[np.ndarray] = []
            for slot in triple:
                if isinstance(slot, Variable):
                    if not slot.distinguished:
                        return None
                    column = found.columns.get(slot.name)
                    row.append(np.full(n, UNBOUND, np.int32) if column is None else column)
                elif isinstance(slot, Literal):
                    return None
                else:
                    row.append(np.full(n, self.terms.intern(_node_text(slot)), np.int32))
            slots.append(row)
        if whole:
            every = np.ones(n, bool)
            for name in template.variables:
                column = found.columns.get(name)
                every &= False if column is None else column != UNBOUND
        kind = self.terms.values.kind
        spo: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        for s, p, o in slots:
            ok = (s != UNBOUND) & (p != UNBOUND) & (o != UNBOUND)
            if whole:
                ok &= every
            keep = np.flatnonzero(ok)
            keep = keep[(kind[s[keep]] != KIND_LITERAL) & (kind[p[keep]] == KIND_IRI)]
            spo.append(np.stack([s[keep], p[keep], o[keep]], axis=1).astype(np.int64))
            rows.append(keep)
        return np.concatenate(spo), np.concatenate(rows)

    def _answers(self, found: Mappings) -> list[Solution]:
        """The solutions as ``⟨μ, tα, tω⟩`` of terms."""
        if len(self._decoded) > _MEMO_LIMIT:
            self._decoded.clear()
        mus = decoded(found, self.terms, self._decoded)
        return list(zip(mus, found.t1.tolist(), found.t2.tolist(), strict=True))

    def _report(self, times: list[int], answers: Mappings) -> list[Result]:
        """The results at each instant of ``times``, given the root's solutions ending at
        them (each new at its instant: in columns when :meth:`Output.in_columns`)."""
        if self.beside is None and self.output.in_columns():
            form = self.plan.form
            if not isinstance(form, Construct):
                return self.output.fresh_rows(
                    answers.t1, answers.t2, dict(answers.columns), self.terms.nodes, UNBOUND
                )
            made = self._instantiated(self._template, answers, whole=False)
            if made is not None:
                spo, rows = made
                return self.output.fresh_graphs(times, answers.t2[rows], spo, self.terms.nodes)
        order = np.argsort(answers.t2, kind="stable")
        ends = answers.t2[order]
        decoded = self._answers(answers.take(order))
        bounds = [*np.searchsorted(ends, times, "left").tolist(), len(decoded)]
        ev = self._expressions
        out: list[Result] = []
        for k, t in enumerate(times):
            found = decoded[bounds[k] : bounds[k + 1]]
            if self.beside is None:
                out += self.output.instant(t, found, ev.matcher)
            elif self.beside.changes:  # the graphs change: the whole answer joined again
                self._answer += found
                if len(self._answer) > self.max_events:
                    raise UserError(
                        f"the pattern's whole answer is kept (a graph beside it changes) and "
                        f"holds {len(self._answer)} solutions at {t}, more than "
                        f"max_window_events = {self.max_events}"
                    )
                out += self.output.whole(t, _joined(self._answer, self.beside.at(t)), ev.matcher)
            else:
                out += self.output.instant(t, _joined(found, self.beside.at(t)), ev.matcher)
            self.output.forget(t + 1)
        return out

    def _check_runs(self, found: Mappings) -> None:
        """``max_runs`` bounds a pattern's solutions at one instant."""
        if len(found) <= self.max_runs:
            return
        ends, counts = np.unique(found.t2, return_counts=True)
        if counts.max() > self.max_runs:
            raise UserError(
                f"the pattern has {int(counts.max())} solutions at {int(ends[counts.argmax()])}, "
                f"more than max_runs = {self.max_runs} (EP-SPARQL keeps every combination of "
                "occurrences)"
            )

    def _check_size(self, source: str | None, times: Sequence[int]) -> None:
        """``max_window_events`` bounds the occurrences kept of each stream at each
        instant, after dropping those WITHIN makes useless (those starting more than its
        bound before the instant)."""
        table = self.occurrences[source]
        if len(table) <= self.max_events:
            return
        at = np.asarray(times, np.int64)
        held = np.searchsorted(np.sort(table.t2), at, "right")
        bound = self._sources[source]
        if bound is not None:
            gone = np.maximum(table.t2, table.t1 + bound + 1)
            held = held - np.searchsorted(np.sort(gone), at, "right")
        over = np.flatnonzero(held > self.max_events)
        if len(over):
            k = int(over[0])
            raise UserError(
                f"the stream (with its Q-closure) holds {int(held[k])} triple occurrences at "
                f"{int(at[k])}, more than max_window_events = {self.max_events}: bound the "
                "pattern with WITHIN, or a CONSTRUCT rule derives without end"
            )

    def _prune(self, t: int) -> None:
        """Drop what only solutions lasting longer than their WITHIN could use."""
        for source, bound in self._sources.items():
            if bound is not None:
                self.occurrences[source].keep(t - bound)
        for tree in self.trees:
            for node in tree.walk():
                if node.bound is not None:
                    node.prune(t - node.bound)
                if isinstance(node, _OptionalSeq) and node.bound is not None:
                    node.compact(t - node.bound)

    # BGP over the occurrences ---------------------------------------------------------------

    def _bgp(
        self, patterns: TriplePatterns, table: _Occurrences, lo: int, hi: int, bound: int | None
    ) -> Mappings:
        """The solutions of ``BGP(P)`` (Sect. 4.2) over ``table``'s rows before ``hi`` that
        choose at least one of rows ``[lo, hi)``: for the first pattern that takes a new
        occurrence, the patterns before it take old ones and those after it any.
        ``⟨μ, min tᵢ, max t'ᵢ⟩``; ``μ(P)`` is a set, so two patterns that ``μ`` makes one
        triple take one occurrence of it; ``μ`` binds the data's term of the first pattern
        binding a variable, matching compares literals by stored form. ``bound``: the
        WITHIN above, beyond which a solution is of no use."""
        triples = patterns.triples
        names = sorted(patterns.variables)
        ids = (table.s[:hi], table.p[:hi], table.o[:hi])
        keys = (table.keys[:hi, 0], table.keys[:hi, 1], table.keys[:hi, 2])
        chosen: list[np.ndarray] = []
        for pattern in triples:
            mask = np.ones(hi, bool)
            seen: dict[str, int] = {}
            for k, slot in enumerate(pattern):
                if isinstance(slot, Variable):
                    if slot.name in seen:
                        mask &= keys[k] == keys[seen[slot.name]]
                    else:
                        seen[slot.name] = k
                else:
                    mask &= keys[k] == self._constant(slot)
            chosen.append(np.flatnonzero(mask))
        parts: list[list[np.ndarray]] = []
        # under WITHIN the new rows are taken a chunk at a time, each with the rows that
        # start late enough to last with it at most the bound (sequential deltas)
        step = hi - lo if bound is None or len(triples) == 1 else _CHUNK
        for start in range(lo, hi, step):
            stop = min(start + step, hi)
            old = np.ones(hi, bool)
            if bound is not None:
                old = table.t1[:hi] >= int(table.t2[start:stop].min()) - bound
            for first in range(len(triples)):
                pools = [
                    rows[(rows < start) & old[rows]]
                    if j < first
                    else rows[(rows >= start) & (rows < stop)]
                    if j == first
                    else rows[(rows < stop) & old[rows]]
                    for j, rows in enumerate(chosen)
                ]
                if all(len(p) for p in pools):
                    parts.append(self._choices(triples, pools, first, ids, keys))
        if not parts:
            return _empty(names)
        picked = [np.concatenate([p[j] for p in parts]) for j in range(len(triples))]
        columns: dict[str, np.ndarray] = {}
        for j, pattern in enumerate(triples):
            for k, slot in enumerate(pattern):
                if isinstance(slot, Variable) and slot.distinguished and slot.name not in columns:
                    columns[slot.name] = ids[k][picked[j]]
        t1 = np.min([table.t1[p] for p in picked], axis=0)
        t2 = np.max([table.t2[p] for p in picked], axis=0)
        return _solutions(t1, t2, {n: columns[n] for n in names}).distinct()

    @staticmethod
    def _choices(
        triples: Sequence[tuple[object, object, object]],
        pools: list[np.ndarray],
        first: int,
        ids: tuple[np.ndarray, np.ndarray, np.ndarray],
        keys: tuple[np.ndarray, ...],
    ) -> list[np.ndarray]:
        """Every choice of one row of each pool that agrees on the variables (by key) and
        takes one occurrence per triple: the chosen rows per pattern."""
        order = [first]
        rest = [j for j in range(len(triples)) if j != first]
        bound: dict[str, tuple[int, int]] = {}  # variable -> (pattern, position)

        def variables(j: int) -> dict[str, int]:
            out: dict[str, int] = {}
            for k, slot in enumerate(triples[j]):
                if isinstance(slot, Variable):
                    out.setdefault(slot.name, k)
            return out

        for name, k in variables(first).items():
            bound[name] = (first, k)
        rows: dict[int, np.ndarray] = {first: pools[first]}
        while rest:
            sharing = [j for j in rest if variables(j).keys() & bound.keys()]
            j = min(sharing or rest, key=lambda i: len(pools[i]))
            rest.remove(j)
            mine = variables(j)
            shared = [n for n in mine if n in bound]
            if shared:
                left, right = join_keys(
                    [keys[bound[n][1]][rows[bound[n][0]]] for n in shared],
                    [keys[mine[n]][pools[j]] for n in shared],
                )
                li, ri = equal_pairs(left, right)
            else:
                count = len(next(iter(rows.values())))
                li = np.repeat(np.arange(count), len(pools[j]))
                ri = np.tile(np.arange(len(pools[j])), count)
            rows = {i: r[li] for i, r in rows.items()}
            new = pools[j][ri]
            ok = np.ones(len(new), bool)
            for r in rows.values():  # μ(P) is a set: one occurrence per triple
                same = (ids[0][r] == ids[0][new]) & (ids[1][r] == ids[1][new])
                ok &= ~(same & (ids[2][r] == ids[2][new]) & (r != new))
            rows = {i: r[ok] for i, r in rows.items()}
            rows[j] = new[ok]
            order.append(j)
            for name, k in mine.items():
                bound.setdefault(name, (j, k))
        return [rows[j] for j in range(len(triples))]
