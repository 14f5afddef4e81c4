"""EP-SPARQL evaluated incrementally: the interval operators of Sect. 4.2 (seed 002), event
by event, equal to the oracle (``rsep.semantics.epsparql``).

Timewise monotonicity (Sect. 4.2) is what makes the evaluation incremental: every solution
``⟨μ, tα, tω⟩`` of every operator depends only on occurrences that end by ``tω``, and the
optional joins only look at optional solutions ending by ``tω``. So the solutions of a
node at an instant ``T`` are exactly those with ``tω = T``, computed from the occurrences
that end at ``T`` and from the solutions of its operands that ended before ``T``, which the
node keeps, indexed, as ETALIS keeps the goals a rule may still complete (Sect. 5, rules
(8)-(12), event-driven backward chaining):

- ``BGP`` (:class:`_Bgp`): the choices of occurrences with at least one of the instant's
  (:func:`rsep.engine.occurrence.bgp_delta`), over occurrences indexed by predicate and
  subject or object;
- ``Join`` (:class:`_Join`): each new solution of one side with the kept and new solutions
  of the other, by a hash on the variables both sides always bind;
- ``SeqJoin`` (:class:`_Seq`): a new right solution with the kept left solutions that end
  before it starts (kept in end order, found by bisection);
- ``EqJoin`` and ``EqLeftJoin`` (:class:`_Equals`, :class:`_EqualsOptional`): both sides at
  the same instant, same start: nothing is kept;
- ``SeqRightJoin`` (:class:`_OptionalSeq`): a new mandatory solution with the kept optional
  ones that end before it starts, or alone if none satisfies ``F``;
- ``Union``, ``Filter`` (with ``σ``: :func:`sigma`) and ETALIS's ``WITHIN``;
- a sub-select (:class:`_SubSelect`, query (5)): each new solution extended by its
  ``(e AS ?v)`` and projected, over the same interval.

``WITHIN d`` prunes: a kept solution or occurrence starting more than ``d`` before the
current instant can only be part of solutions lasting more than ``d``, which WITHIN drops
(intervals only grow up the tree). The optional side of OPTIONALSEQ is never pruned (an old
optional solution still decides whether a new mandatory one is alone).

CONSTRUCT rules (the plan itself when its output is fed back, and the plan's ``rules``) make
the Q-closure: at each instant, the occurrences their new solutions derive re-enter the
stream, with the solution's interval (so they end at the instant too), and the instant is
evaluated again on them, until nothing new is derived (``clos_Q(S)``, Sect. 4.2). Results
go through :class:`rsep.engine.projection.Output` (SELECT expressions, projection, DISTINCT,
the streaming operator and the query form). State is bounded: ``max_runs`` solutions kept
per operator, ``max_window_events`` occurrences.

A pattern beside the EP-SPARQL pattern (an :class:`~rsep.algebra.plan.EventJoin`) is
evaluated once per version of the dataset's graphs (once for static graphs; once per span
between the changes of time-varying ones, RSP-QL Def. 10), and each instant's solutions are
joined with the solutions of the version holding at the instant, keeping their intervals,
before the projection: the oracle's join of an event pattern's answers with the group's
solutions over the dataset at the instant (``ContinuousQuery``).

``LeftJoin`` (SPARQL's OPTIONAL) has no plan node (docs/semantics.md: a group holding
OPTIONAL stays one opaque stream pattern, which the oracle refuses too), so it is not here.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pyoxigraph import Triple

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
from rsep.algebra.occurrences import TriplePatterns, derived_triples, sigma, timed
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import EventJoin, Plan, Rule, SubSelect
from rsep.engine.bgp import GroupMatcher
from rsep.engine.continuous import InstantDataset, TimeVarying, background_source
from rsep.engine.occurrence import Occurrence, OccurrenceIndex, bgp_delta
from rsep.engine.projection import Output
from rsep.engine.query import InstantQuery
from rsep.errors import UserError
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

Fresh = dict[str | None, list[Occurrence]]
"""The occurrences added in one round, by the stream they belong to (``None``: the merged
stream with the derived occurrences)."""

_MEMO_LIMIT = 200_000


class _Evaluator:
    """FILTER and BIND expressions under mappings, each value remembered (a Q-closure
    meets one solution in several rounds; joins test one pair once): a FILTER in Python
    where :class:`~rsep.engine.bgp.GroupMatcher` can tell, else (and BIND) by pyoxigraph."""

    def __init__(self) -> None:
        self.matcher = GraphMatcher()
        self.patterns = GroupMatcher(self.matcher)
        self._holds: dict[tuple[str, Mu], bool] = {}
        self._values: dict[tuple[str, Mu], Term | None] = {}

    @property
    def forms(self) -> LiteralForms:
        return self.matcher.forms

    def holds(self, expression: str | None, timed: bool, mu: Mu, t1: int, t2: int) -> bool:
        """``μ(σ_{t1 t2}(F)) = true``; an absent ``F`` is true, an error false
        (:meth:`GroupMatcher.holds <rsep.engine.bgp.GroupMatcher.holds>`)."""
        if expression is None:
            return True
        text = sigma(expression, t1, t2) if timed else expression
        key = (text, mu)
        found = self._holds.get(key)
        if found is None:
            if len(self._holds) > _MEMO_LIMIT:
                self._holds.clear()
            found = self._holds[key] = self.patterns.holds(text, mu)
        return found

    def extend(self, mu: Mu, expressions: Iterable[tuple[str, str]]) -> Mu:
        """SPARQL's ``Extend``: each ``(v, e)`` bound to ``e``'s value unless it errs or
        ``v`` is bound (sec. 18.5)."""
        for name, expression in expressions:
            key = (expression, mu)
            if key in self._values:
                value = self._values[key]
            else:
                if len(self._values) > _MEMO_LIMIT:
                    self._values.clear()
                value = self._values[key] = self.matcher.value(expression, mu)
            if value is not None and name not in mu:
                mu = mu.join({name: value})
        return mu


# Kept solutions -----------------------------------------------------------------------------


class _Kept:
    """The solutions of an operand that ended before the current instant, by the values of
    the variables both operands always bind, each bucket in end order."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.buckets: dict[tuple[Term | None, ...], tuple[list[int], list[Solution]]] = {}
        self.count = 0
        self._pruned = 0

    def key(self, mu: Mu) -> tuple[Term | None, ...]:
        return tuple(mu.get(name) for name in self.names)

    def add(self, found: Iterable[Solution]) -> None:
        """Add the solutions of one instant (their ``tω`` is the latest kept)."""
        for solution in found:
            ends, items = self.buckets.setdefault(self.key(solution[0]), ([], []))
            ends.append(solution[2])
            items.append(solution)
            self.count += 1

    def matching(self, mu: Mu) -> list[Solution]:
        """The kept solutions in ``mu``'s bucket."""
        found = self.buckets.get(self.key(mu))
        return found[1] if found else []

    def ending_before(self, mu: Mu, t: int) -> tuple[list[Solution], int]:
        """The kept solutions in ``mu``'s bucket, and how many of them (the first) end
        before ``t``."""
        found = self.buckets.get(self.key(mu))
        if not found:
            return [], 0
        ends, items = found
        return items, bisect.bisect_left(ends, t)

    def prune(self, floor: int, force: bool = False) -> None:
        """Drop the solutions starting before ``floor`` (amortised: when the count doubled
        since the last pruning, or ``force``)."""
        self._rebuild(floor, False, force)

    def compact(self, floor: int, force: bool = False) -> None:
        """Of the solutions starting before ``floor``, keep the earliest-ending one per
        mapping: all that OPTIONALSEQ's test for a mandatory solution alone reads of an
        optional one too old to join under WITHIN (its mapping and that it ends before)."""
        self._rebuild(floor, True, force)

    def _rebuild(self, floor: int, compact: bool, force: bool) -> None:
        if not force and self.count < max(64, 2 * self._pruned):
            return
        buckets: dict[tuple[Term | None, ...], tuple[list[int], list[Solution]]] = {}
        count = 0
        for key, (_, items) in self.buckets.items():
            if compact:
                seen: set[Mu] = set()
                kept = []
                for s in items:
                    if s[1] >= floor:
                        kept.append(s)
                    elif s[0] not in seen:
                        seen.add(s[0])
                        kept.append(s)
            else:
                kept = [s for s in items if s[1] >= floor]
            if kept:
                buckets[key] = ([s[2] for s in kept], kept)
                count += len(kept)
        self.buckets, self.count, self._pruned = buckets, count, count


# Operators ---------------------------------------------------------------------------------


class _Node:
    """An operator of Sect. 4.2 in the tree of one pattern. ``now`` holds its solutions at
    the current instant (``tω`` = the instant); ``kept`` those of earlier instants, when its
    parent reads them; ``bound`` the smallest WITHIN above it (pruning); ``reset`` is true
    when its subtree is not monotone within an instant (EqLeftJoin), so a Q-closure round
    recomputes it whole."""

    certain: frozenset[str]
    children: tuple[_Node, ...] = ()

    def __init__(self) -> None:
        self.now: set[Solution] = set()
        self.kept: _Kept | None = None
        self.bound: int | None = None
        self.reset = False

    def walk(self) -> Iterable[_Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def update(self, fresh: Fresh, ev: _Evaluator) -> set[Solution]:
        """One round at the current instant: the solutions new in this round (all of
        ``now`` when ``reset``)."""
        increments = [child.update(fresh, ev) for child in self.children]
        if self.reset:
            self.now = set()
            increments = [child.now for child in self.children]
        found = self.compute(increments, ev)
        if self.reset:
            self.now = found
            return found
        new = found - self.now
        self.now |= new
        return new

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        """The solutions at the instant that use the operands' ``increments``."""
        raise NotImplementedError

    def commit(self, limit: int) -> None:
        """End of the instant: ``now`` joins ``kept`` (bounded by ``max_runs``)."""
        if self.kept is not None and self.now:
            self.kept.add(self.now)
            if self.kept.count > limit and self.bound is not None:
                self.kept.prune(max(s[2] for s in self.now) - self.bound, force=True)
            if self.kept.count > limit:
                raise UserError(
                    f"{type(self).__name__.strip('_')} keeps {self.kept.count} partial "
                    f"solutions, more than max_runs = {limit} (EP-SPARQL keeps every "
                    "combination of occurrences; bound the pattern with WITHIN or raise it "
                    "with --set max_runs=N)"
                )
        self.now = set()


def _combine(a: Solution, b: Solution) -> Solution:
    """``⟨μ ∪ μ', min(tα, t'α), max(tω, t'ω)⟩`` (Sect. 4.2)."""
    return (a[0].join(b[0]), min(a[1], b[1]), max(a[2], b[2]))


class _Bgp(_Node):
    """``BGP(P)`` of a stream pattern, extended by its BINDs (``Extend``)."""

    def __init__(self, node: StreamBgp) -> None:
        super().__init__()
        self.patterns = TriplePatterns.parse(node.pattern.text, "the stream pattern")
        self.source = node.stream
        self.binds = node.binds or ()
        self.certain = self.patterns.variables

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        raise AssertionError("a BGP reads occurrences")  # pragma: no cover

    def update(self, fresh: Fresh, ev: _Evaluator) -> set[Solution]:
        occurrences = fresh.get(self.source)
        if not occurrences:
            return set()
        found = bgp_delta(self.patterns, self.index, set(occurrences))
        if self.binds:
            found = {(ev.extend(mu, self.binds), t1, t2) for mu, t1, t2 in found}
        new = found - self.now
        self.now |= new
        return new

    index: OccurrenceIndex


class _Binary(_Node):
    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__()
        self.left, self.right = left, right
        self.children = (left, right)
        self.shared = tuple(sorted(left.certain & right.certain))


class _Join(_Binary):
    """``Join(Ψ, Ψ')`` (Sect. 4.2): every compatible pair."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        self.certain = left.certain | right.certain
        left.kept, right.kept = _Kept(self.shared), _Kept(self.shared)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        new_left, new_right = increments
        assert self.left.kept is not None and self.right.kept is not None
        out: set[Solution] = set()
        right_now = _by_key(self.right.now, self.right.kept)
        for a in new_left:
            key = self.left.kept.key(a[0])
            for b in (*self.right.kept.matching(a[0]), *right_now.get(key, ())):
                if a[0].compatible(b[0]):
                    out.add(_combine(a, b))
        left_now = _by_key(self.left.now, self.left.kept)
        for b in new_right:
            key = self.right.kept.key(b[0])
            for a in (*self.left.kept.matching(b[0]), *left_now.get(key, ())):
                if a[0].compatible(b[0]):
                    out.add(_combine(a, b))
        return out


def _by_key(
    found: Iterable[Solution], kept: _Kept
) -> dict[tuple[Term | None, ...], list[Solution]]:
    table: dict[tuple[Term | None, ...], list[Solution]] = {}
    for solution in found:
        table.setdefault(kept.key(solution[0]), []).append(solution)
    return table


class _Union(_Binary):
    """``Union(Ψ, Ψ') = Ψ ∪ Ψ'``."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        self.certain = left.certain & right.certain

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        return increments[0] | increments[1]


class _Seq(_Binary):
    """``SeqJoin(Ψ, Ψ')`` (SEQ): compatible pairs with ``tω < t'α``; a new right solution
    meets the kept left ones that end before it starts."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        self.certain = left.certain | right.certain
        left.kept = _Kept(self.shared)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        kept = self.left.kept
        assert kept is not None
        out: set[Solution] = set()
        for b in increments[1]:
            items, count = kept.ending_before(b[0], b[1])
            for i in range(count):
                a = items[i]
                if a[0].compatible(b[0]):
                    out.add(_combine(a, b))
        return out


class _Equals(_Binary):
    """``EqJoin(Ψ, Ψ')`` (EQUALS): compatible pairs over one interval; both end at the
    instant, so only the instant's solutions meet."""

    def __init__(self, left: _Node, right: _Node) -> None:
        super().__init__(left, right)
        self.certain = left.certain | right.certain
        self._keys = _Kept(self.shared)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        out: set[Solution] = set()
        for news, others in ((increments[0], self.right.now), (increments[1], self.left.now)):
            if not news:
                continue
            table = _by_start(others, self._keys)
            for a in news:
                for b in table.get((a[1], self._keys.key(a[0])), ()):
                    if a[0].compatible(b[0]):
                        out.add(_combine(a, b))
        return out


def _by_start(
    found: Iterable[Solution], keys: _Kept
) -> dict[tuple[int, tuple[Term | None, ...]], list[Solution]]:
    table: dict[tuple[int, tuple[Term | None, ...]], list[Solution]] = {}
    for solution in found:
        table.setdefault((solution[1], keys.key(solution[0])), []).append(solution)
    return table


class _OptionalSeq(_Binary):
    """``SeqRightJoin(Ψ', Ψ, F)`` (``P' OPTIONALSEQ P``; ``left`` is the optional ``Ψ'``):
    ``Filter(F, SeqJoin(Ψ', Ψ))``, and each solution of ``Ψ`` with no compatible earlier
    solution of ``Ψ'`` for which ``F`` holds under its own interval."""

    def __init__(self, left: _Node, right: _Node, condition: str | None) -> None:
        super().__init__(left, right)
        self.certain = right.certain
        self.condition = condition
        self.timed = condition is not None and timed(condition)
        left.kept = _Kept(self.shared)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        kept = self.left.kept
        assert kept is not None
        out: set[Solution] = set()
        condition, timed = self.condition, self.timed
        for m in increments[1]:
            # a join with an optional solution starting before floor lasts longer than
            # the WITHIN above allows: only the test for m alone reads those
            floor = None if self.bound is None else m[2] - self.bound
            alone = True
            items, count = kept.ending_before(m[0], m[1])
            for i in range(count - 1, -1, -1):
                o = items[i]
                if not alone and floor is not None and o[2] < floor:
                    break
                if not o[0].compatible(m[0]):
                    continue
                joined = _combine(o, m)
                if (floor is None or o[1] >= floor) and ev.holds(condition, timed, *joined):
                    out.add(joined)
                if alone and ev.holds(condition, timed, joined[0], m[1], m[2]):
                    alone = False
            if alone:
                out.add(m)
        return out


class _EqualsOptional(_Binary):
    """``EqLeftJoin(Ψ, Ψ', F)`` (``P EQUALSOPTIONAL P'``): ``Filter(F, EqJoin(Ψ, Ψ'))`` and
    each solution of ``Ψ`` with no compatible simultaneous one of ``Ψ'`` satisfying ``F``.
    Not monotone within an instant: recomputed whole each round."""

    def __init__(self, left: _Node, right: _Node, condition: str | None) -> None:
        super().__init__(left, right)
        self.certain = left.certain
        self.condition = condition
        self.timed = condition is not None and timed(condition)
        self._keys = _Kept(self.shared)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        out: set[Solution] = set()
        table = _by_start(self.right.now, self._keys)
        for m in self.left.now:
            alone = True
            for o in table.get((m[1], self._keys.key(m[0])), ()):
                if not m[0].compatible(o[0]):
                    continue
                joined = _combine(m, o)
                if ev.holds(self.condition, self.timed, joined[0], m[1], m[2]):
                    out.add(joined)
                    alone = False
            if alone:
                out.add(m)
        return out


class _Unary(_Node):
    def __init__(self, child: _Node) -> None:
        super().__init__()
        self.child = child
        self.children = (child,)
        self.certain = child.certain


class _Filter(_Unary):
    """``Filter(F, Ψ)``: the solutions with ``μ(σ_{tα tω}(F))`` true."""

    def __init__(self, child: _Node, expression: str) -> None:
        super().__init__(child)
        self.expression = expression
        self.timed = timed(expression)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        return {s for s in increments[0] if ev.holds(self.expression, self.timed, *s)}


class _Within(_Unary):
    """ETALIS's ``WITHIN d``: the solutions with ``tω - tα ≤ d``."""

    def __init__(self, child: _Node, duration: int) -> None:
        super().__init__(child)
        self.duration = duration

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        return {s for s in increments[0] if s[2] - s[1] <= self.duration}


class _SubSelect(_Unary):
    """``Project(Extend(Ψ, v, e)…, V)`` of a sub-select (SPARQL 1.1 sec. 18.2.1; query
    (5)): each solution extended by the expressions, restricted to the projection, over
    its own interval (the oracle's ``sub_select``). The variables it always binds are the
    projected ones its operand always binds (an expression may err)."""

    def __init__(self, child: _Node, node: SubSelect) -> None:
        super().__init__(child)
        self.projection = node.projection
        self.expressions = node.expressions
        self.certain = child.certain & frozenset(node.projection)

    def compute(self, increments: list[set[Solution]], ev: _Evaluator) -> set[Solution]:
        return {
            (ev.extend(mu, self.expressions).project(self.projection), t1, t2)
            for mu, t1, t2 in increments[0]
        }


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


# CONSTRUCT rules --------------------------------------------------------------------------


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


def _derive(index: int, template: TriplePatterns, solution: Solution) -> list[Occurrence]:
    """``μ(P_q)`` over the solution's interval if ``μ`` binds every variable of ``P_q``
    (the Q-closure's conditions (1)-(2)); a blank node of ``P_q`` is one skolem blank node
    per rule and solution, labelled as the oracle labels it."""
    m, t1, t2 = solution
    return [Occurrence(triple, t1, t2) for triple in derived_triples(index, template, m, t1, t2)]


# The query ----------------------------------------------------------------------------------


class EpsparqlQuery(InstantQuery):
    """An EP-SPARQL plan evaluated incrementally (module docstring): push events, advance
    the watermark, get the oracle's results. The plan's :attr:`~Plan.closure_rules` (its
    own when it is a CONSTRUCT fed back, then the CONSTRUCT statements of other queries it
    carries) make ``clos_Q(S)``; from ``start`` (the oracle's start of the range) the
    answers are reported as :class:`~rsep.engine.projection.Output` says."""

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, frozenset[Triple] | TimeVarying] | None = None,
        *,
        start: int | None = None,
    ) -> None:
        """``graphs``: static or time-varying (RSP-QL Def. 10)."""
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
        """Every solution so far, kept when the graphs beside change (:meth:`_instant`)."""
        self.rules: tuple[Rule, ...] = plan.closure_rules
        self.templates = tuple(
            TriplePatterns.parse("{ " + r.template + " }", "a CONSTRUCT template")
            for r in self.rules
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
        self.indexes: dict[str | None, OccurrenceIndex] = {}
        self._prepare()

    def _prepare(self) -> None:
        """What is rebuilt rather than pickled: the expression evaluator (pyoxigraph) and
        the indexes' literal forms."""
        self._ev = _Evaluator()
        forms = self._ev.forms
        for source in self._sources:
            index = self.indexes.get(source)
            if index is None:
                self.indexes[source] = OccurrenceIndex(forms)
            else:
                index.forms = forms
        for tree in self.trees:
            for node in tree.walk():
                if isinstance(node, _Bgp):
                    node.index = self.indexes[node.source]

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_ev")
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._prepare()

    # IncrementalQuery --------------------------------------------------------------------

    def push(self, events: Iterable[Event]) -> list[Result]:
        """Take a batch of events in non-decreasing time (of every stream: ``S`` merges
        them); return the answers of every instant the batch completes."""
        self._check_open()
        if self.closure is not None:
            events = entail_events(events, self.closure)
        out: list[Result] = []
        for event in events:
            self._check_order(event)
            out += self._hold(event)
        return out

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the pending instant, if at or before ``t``, is
        final."""
        self._check_open()
        return self._release(t)

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the last instant's answers (none after ``until``)."""
        self._check_open()
        out = self._flush()
        self._finished = True
        return [r for r in out if until is None or r.time <= until]

    # Instants ----------------------------------------------------------------------------

    def _instant(self, t: int, events: list[Event]) -> list[Result]:
        """One instant ``T``: its occurrences enter the stream, every tree computes its
        solutions ending at ``T``, the rules' derivations re-enter until none is new
        (``clos_Q``), and the root's solutions are the answers at ``T``."""
        self._prune(t)
        ev = self._ev
        fresh: Fresh = {}
        for source, index in self.indexes.items():
            found = (
                Occurrence(triple, e.t_start, e.t_end)
                for e in events
                if source is None or e.stream == source
                for triple in e.graph
            )
            fresh[source] = index.add(found)
            self._check_size(source, t)
        for tree in self.trees:
            for node in tree.walk():
                node.now = set()
        while True:
            increments = {id(tree): tree.update(fresh, ev) for tree in self.trees}
            for tree in self.trees:
                if len(tree.now) > self.max_runs:
                    raise UserError(
                        f"the pattern has {len(tree.now)} solutions at {t}, more than "
                        f"max_runs = {self.max_runs} (EP-SPARQL keeps every combination of "
                        "occurrences)"
                    )
            if not self.rules:
                break
            derived: list[Occurrence] = []
            for number, (template, tree) in enumerate(
                zip(self.templates, self.rule_trees, strict=True)
            ):
                for solution in increments[id(tree)]:
                    derived += _derive(number, template, solution)
            merged = self.indexes[None]
            fresh = {None: merged.add(derived)}
            if not fresh[None]:
                break
            self._check_size(None, t)
        answers = list(self.root.now)
        for tree in self.trees:
            for node in tree.walk():
                node.commit(self.max_runs)
        if self.beside is None:
            out = self.output.instant(t, answers, ev.matcher)
        elif self.beside.changes:  # the graphs change: the whole answer joined again
            self._answer += answers
            if len(self._answer) > self.max_events:
                raise UserError(
                    f"the pattern's whole answer is kept (a graph beside it changes) and "
                    f"holds {len(self._answer)} solutions at {t}, more than "
                    f"max_window_events = {self.max_events}"
                )
            out = self.output.whole(t, _joined(self._answer, self.beside.at(t)), ev.matcher)
        else:
            out = self.output.instant(t, _joined(answers, self.beside.at(t)), ev.matcher)
        self.output.forget(t + 1)
        return out

    def _check_size(self, source: str | None, t: int) -> None:
        """``max_window_events`` bounds the occurrences kept of each stream (after
        dropping those WITHIN makes useless)."""
        index = self.indexes[source]
        if len(index) <= self.max_events:
            return
        bound = self._sources[source]
        if bound is not None:
            index.keep(t - bound, force=True)
        if len(index) > self.max_events:
            raise UserError(
                f"the stream (with its Q-closure) holds {len(index)} triple occurrences at "
                f"{t}, more than max_window_events = {self.max_events}: bound the pattern "
                "with WITHIN, or a CONSTRUCT rule derives without end"
            )

    def _prune(self, t: int) -> None:
        """Drop what only solutions lasting longer than their WITHIN could use."""
        for source, bound in self._sources.items():
            if bound is not None:
                self.indexes[source].keep(t - bound)
        for tree in self.trees:
            for node in tree.walk():
                if node.kept is not None and node.bound is not None:
                    node.kept.prune(t - node.bound)
                if isinstance(node, _OptionalSeq) and node.bound is not None:
                    assert node.left.kept is not None
                    node.left.kept.compact(t - node.bound)
