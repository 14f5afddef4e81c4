"""The engine's CQELS-CEP evaluator (seed 001, Sect. 4): windows on interval streams, the
operators on mappings with intervals and nested paths over the background graph, on the
columnar event operators (:mod:`rsep.engine.event_operators`), with exactly the oracle's
answers (``rsep.semantics.cqelscep``).

How the state is kept (the oracle re-reads every stream and re-matches every item's graph
at every instant; the engine does neither):

- **Window contents** (Sect. 4.1, ``w_RANGE``): per window specification, the items of its
  stream that a window still to come can hold, as columns (number, ``t1``, ``t2``), with
  the solutions of each graph pattern of its triple sequence pattern in the item's graph
  (Eq. (16), ``μ(P) ⊆ g``) as columns of term ids, matched **once**, for a push's items at
  once (by the columnar BGP matcher, :func:`~rsep.engine.pattern.match_patterns`, for a
  BGP with FILTERs; else item by item by the exact matcher). Items leave when their end
  falls before every window still to come; items whose graph matches no pattern are not
  kept.
- **Evaluation instants**: the oracle evaluates where an item enters a window, where its
  cut interval changes and where it leaves (``CqelscepEvaluation.instants``); the engine
  keeps the same instants, and evaluates every one that is final at once: the instant is
  each event mapping's context, and a window's content at many instants is one table.
- **Operators** (Sect. 4.2: JOIN, OR, SEQ, SEQ_WO, NO_HEAD, NO_TAIL, cases (2)-(16)) on
  event mappings in columns: JOIN a compatible join over the intervals' intersection, SEQ a
  band join on end times, the negated forms anti-joins, OR a union; each value a set.
- **Background** (Eq. (17)): ``[[P]]_D`` (the SPARQL part joined with the nested path
  triples, :func:`rsep.algebra.paths.match_path_triples`) is matched once per version of
  ``D``, as columns of term ids: once for a static ``D``, whose interval ``[TIME_MIN, t]``
  holds every event interval, so JOIN keeps theirs; for a time-varying ``D`` (RSP-QL Def.
  10) again where it changes, its interval ``[t1, t]`` from the last change ``t1``, so JOIN
  cuts the event intervals to it (Sect. 4.2), and the changes are evaluation instants, as
  the oracle's.

When an instant is final. An item ``⟨g, [t1, t2]⟩`` arrives at ``t2`` (its time is its
end, the engine's contract), but the oracle's window at ``t`` holds it from ``t1`` on. The
engine therefore evaluates an instant ``t`` once every item starting by ``t`` can have
arrived: when an event ends after ``t + lateness``, or the watermark reaches
``t + lateness``. An item lasting more than ``lateness`` that starts at an instant already
answered is refused with an error naming the parameter (point items never are).

Bounded state: at most ``max_window_events`` items in a window (and instants pending), at
most ``max_runs`` mappings in any operator's value at one instant; beyond, a
:class:`UserError` names the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.events import (
    CepJoin,
    CepSeq,
    CepWindow,
    EventPattern,
    GraphPatternRef,
    Or,
)
from rsep.algebra.passes import apply_profile
from rsep.algebra.paths import PathGraph, match_path_triples
from rsep.algebra.plan import Ask, Construct, EventJoin, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.algebra.window import LandmarkWindow, interval_width
from rsep.engine.batch import TripleBatch, _node_text, batches_of, in_time_order
from rsep.engine.bgp import GroupMatcher
from rsep.engine.continuous import GraphSource, _at, background_source
from rsep.engine.dataset import Group, compile_group, spans_of
from rsep.engine.event_operators import (
    UNBOUND,
    Mappings,
    aligned,
    before_pairs,
    compatible_pairs,
    concatenated,
    context_pairs,
    decoded,
    distinct_rows,
    in_rows,
    merged,
    unblocked,
)
from rsep.engine.pattern import Columns, Filter, keep_counted, match_patterns
from rsep.engine.projection import Answer, Output
from rsep.engine.query import IncrementalQuery
from rsep.engine.terms import TermDictionary
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.rdf.terms import Term
from rsep.reasoning.closure import entail_events
from rsep.reasoning.regime import engine_closure

__all__ = ["TIME_MIN", "CqelscepQuery", "IntervalOutput", "Operators"]

TIME_MIN = -(2**63)
"""The ``t1`` of Eq. (17) for background data that never changed (a static ``D``)."""

_EMPTY = GraphPatternRef("{ }")
_ROWS_AT_ONCE = 1 << 20
"""Window content rows one evaluation takes at most (instants are split beyond)."""
_PAIRS_AT_ONCE = 1 << 20
"""Pairs of window items (a SEQ's candidates) one evaluation takes at most."""
_NONE = np.zeros(0, np.int64)


def _nothing(names: Iterable[str]) -> Mappings:
    """No mapping (a column per variable of ``names``)."""
    return Mappings(_NONE, _NONE, _NONE, {n: np.zeros(0, np.int32) for n in names})


# Sect. 4.2: the operators on event mappings in columns, the context an instant ---------------


@dataclass(frozen=True)
class Operators:
    """Sect. 4.2's operators on sets of event mappings ``(μ, t1, t2)`` in columns (their
    context the evaluation instant), each value bounded by ``limit`` mappings at one instant
    (``max_runs``)."""

    limit: int

    def bounded(self, found: Mappings, what: str) -> Mappings:
        """``found`` as a set, or an error if it holds more than ``limit`` mappings at an
        instant."""
        found = found.distinct()
        if len(found) > self.limit and int(np.bincount(found.context).max()) > self.limit:
            raise UserError(
                f"{what} holds more than max_runs = {self.limit} mappings with intervals at "
                "one instant: narrow the windows or the patterns, or raise the limit "
                "(--set max_runs=N)"
            )
        return found

    def join(self, left: Mappings, right: Mappings) -> Mappings:
        """``JOIN``: compatible pairs whose intervals meet, over their intersection."""
        li, ri = context_pairs(left, right)
        low = np.maximum(left.t1[li], right.t1[ri])
        high = np.minimum(left.t2[li], right.t2[ri])
        meet = low <= high
        li, ri = li[meet], ri[meet]
        columns = merged(left.columns, li, right.columns, ri)
        return self.bounded(Mappings(left.context[li], low[meet], high[meet], columns), "a JOIN")

    def or_(self, left: Mappings, right: Mappings) -> Mappings:
        """``OR(Ω1, Ω2) = Ω1 ∪ Ω2``."""
        names = sorted(left.columns.keys() | right.columns.keys())
        both = concatenated(aligned(left, names), aligned(right, names))
        return self.bounded(both, "an OR")

    def seq(self, left: Mappings, right: Mappings) -> Mappings:
        """``SEQ``: compatible pairs, the first ending strictly before the second starts,
        over ``[t1, t4]``."""
        li, ri = before_pairs(left, right)
        columns = merged(left.columns, li, right.columns, ri)
        found = Mappings(left.context[li], left.t1[li], right.t2[ri], columns)
        return self.bounded(found, "a SEQ")

    def seq_wo(self, first: Mappings, negative: Mappings, last: Mappings) -> Mappings:
        """``SEQ_WO``: the sequences of ``first`` and ``last`` with no negative mapping
        compatible with their union strictly between them (``t2 < t3 ∧ t4 < t5``)."""
        li, ri = before_pairs(first, last)
        columns = merged(first.columns, li, last.columns, ri)
        both = Mappings(first.context[li], first.t1[li], last.t2[ri], columns)
        after, before = first.t2[li], last.t1[ri]
        keep = unblocked(
            both,
            negative,
            lambda i, j: (after[i] < negative.t1[j]) & (negative.t2[j] < before[i]),
        )
        return self.bounded(both.take(np.flatnonzero(keep)), "a SEQ_WO")

    def no_head(self, negative: Mappings, positive: Mappings) -> Mappings:
        """``NO_HEAD``: the positive mappings with no compatible negative one before."""
        keep = unblocked(positive, negative, lambda i, j: negative.t2[j] < positive.t1[i])
        return positive.take(np.flatnonzero(keep))

    def no_tail(self, positive: Mappings, negative: Mappings, times: np.ndarray) -> Mappings:
        """``NO_TAIL``: the positive mappings with no compatible negative one after them,
        ending by the instant ``times[context]``."""
        keep = unblocked(
            positive,
            negative,
            lambda i, j: (
                (positive.t2[i] < negative.t1[j]) & (negative.t2[j] <= times[negative.context[j]])
            ),
        )
        return positive.take(np.flatnonzero(keep))

    def sequence(
        self, values: Sequence[Mappings], negated: int | None, times: np.ndarray
    ) -> Mappings:
        """Eq. (3)-(8) / (10)-(15): ``SEQ(X1, SEQ(X2, …))``, or with ``values[negated]``
        negated: NO_HEAD (first), NO_TAIL (last), SEQ_WO (between)."""
        if negated is None:
            return self._chain(values)
        before, negative, after = values[:negated], values[negated], values[negated + 1 :]
        if not before:
            return self.no_head(negative, self._chain(after))
        if not after:
            return self.no_tail(self._chain(before), negative, times)
        return self.seq_wo(self._chain(before), negative, self._chain(after))

    def _chain(self, values: Sequence[Mappings]) -> Mappings:
        value = values[-1]
        for left in reversed(values[:-1]):
            value = self.seq(left, value)
        return value


# Window specifications (Sect. 4.1, Eq. (9), (16)) -------------------------------------------


class _Leaf:
    """A graph pattern of a triple sequence pattern, matched on items' graphs (Eq. (16)):
    as joins over their triples when it is a BGP with FILTERs, else by the exact matcher."""

    def __init__(self, pattern: GraphPatternRef, dictionary: TermDictionary) -> None:
        self.pattern = pattern
        self.names = tuple(sorted(pattern.variables))
        group = "nested path triples" if pattern.paths else compile_group(pattern.text, dictionary)
        self.group: Group | None = None
        self.exact_reason: str | None = None
        """Why the pattern is matched item by item by the exact matcher (``None``: in
        columns)."""
        if isinstance(group, str):
            self.exact_reason = group
        elif len(group.blocks) != 1 or group.blocks[0].graph is not None:
            self.exact_reason = "a graph pattern of several blocks or reading a named graph"
        elif set(group.variables) != set(self.names):
            self.exact_reason = "a FILTER on a variable the pattern does not bind"
        else:
            self.group = group

    def match(
        self, query: CqelscepQuery, triples: Columns, events: Callable[[], list[Event]]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The solutions on each item of a push (``triples``' ``event``: its number among
        them; ``events``: the items as objects, for the exact matcher): each one's item and
        a column of ids per variable."""
        if self.group is None:
            return self._match_exactly(query, events())
        block = self.group.blocks[0]
        keep = query._keep_rows(self.group)
        found = match_patterns(block.patterns, triples, query.dictionary, block.filters, keep)
        if found is None:
            return _NONE, {n: np.zeros(0, np.int32) for n in self.names}
        for f in self.group.filters:
            found = keep(found, f)
        return found["event"].astype(np.int64), {n: found[n] for n in self.names}

    def _match_exactly(
        self, query: CqelscepQuery, events: list[Event]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        items: list[int] = []
        texts: list[str] = []
        bound: list[bool] = []
        for k, event in enumerate(events):
            for mu in dict.fromkeys(query._patterns.match(self.pattern, event.graph)):
                items.append(k)
                for name in self.names:
                    value = mu.get(name)
                    bound.append(value is not None)
                    texts.append("" if value is None else _node_text(value))
        ids = np.full(len(texts), UNBOUND, np.int32)
        where = np.flatnonzero(np.array(bound, bool))
        if len(where):
            ids[where] = query.dictionary.encode([texts[i] for i in where.tolist()])
        table = ids.reshape(len(items), len(self.names))
        return np.array(items, np.int64), {n: table[:, k] for k, n in enumerate(self.names)}


class _Window:
    """A window specification ``(s, ω, TSP)`` (Sect. 4.1) and the items of ``s`` it can
    still hold, in columns, with the solutions of each graph pattern of ``TSP`` on them."""

    def __init__(self, node: CepWindow, t0: int) -> None:
        self.node = node
        self.width = interval_width(node.window)
        own = node.window.t0 if isinstance(node.window, LandmarkWindow) else None
        self.start: int = t0 if own is None else own
        leaves = [n for n in node.pattern.walk() if isinstance(n, GraphPatternRef)]
        self.leaves: tuple[GraphPatternRef, ...] = tuple(dict.fromkeys(leaves))
        self.number = _NONE
        self.t1 = _NONE
        self.t2 = _NONE
        self.longest = 0
        """The longest item kept (``t2 - t1``)."""
        self.solved: dict[GraphPatternRef, tuple[np.ndarray, dict[str, np.ndarray]]] = {
            leaf: (_NONE, {n: np.zeros(0, np.int32) for n in sorted(leaf.variables)})
            for leaf in self.leaves
        }
        """Per graph pattern, its solutions' items (numbers, in order) and columns."""

    def instant_spans(self, t1: np.ndarray, t2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the cut interval of each item over ``[t1, t2]`` changes (the oracle's
        instants), as ranges ``[lo, hi)``, two per item: under ``RANGE T`` ``[t1, t2]`` and
        ``[t1 + T + 1, t2 + T + 1]``; under ``[ALL]`` ``[max(t1, t0), t2]`` and none."""
        if self.width is None:
            lo = np.maximum(t1, self.start)
            hi = np.maximum(t2 + 1, lo)
            return np.concatenate([lo, lo]), np.concatenate([hi, lo])
        return (
            np.concatenate([t1, t1 + self.width + 1]),
            np.concatenate([t2 + 1, t2 + self.width + 2]),
        )

    def add(
        self,
        number: np.ndarray,
        t1: np.ndarray,
        t2: np.ndarray,
        solved: Mapping[GraphPatternRef, tuple[np.ndarray, dict[str, np.ndarray]]],
    ) -> None:
        """Keep the items ``number`` (in time order) with their solutions (by item)."""
        self.number = np.concatenate([self.number, number])
        self.t1 = np.concatenate([self.t1, t1])
        self.t2 = np.concatenate([self.t2, t2])
        self.longest = max(self.longest, int((t2 - t1).max(initial=0)))
        for leaf in self.leaves:
            items, columns = solved[leaf]
            known, have = self.solved[leaf]
            self.solved[leaf] = (
                np.concatenate([known, items]),
                {n: np.concatenate([c, columns[n]]) for n, c in have.items()},
            )

    def evict(self, t: int) -> None:
        """Drop the items no window after ``t`` holds (they end before ``t + 1 - T``)."""
        if self.width is None or not len(self.number):
            return
        cut = int(np.searchsorted(self.t2, t - self.width, "right"))
        if not cut:
            return
        first = self.number[cut] if cut < len(self.number) else self.number[-1] + 1
        self.number, self.t1, self.t2 = self.number[cut:], self.t1[cut:], self.t2[cut:]
        self.longest = int((self.t2 - self.t1).max(initial=0))
        for leaf, (items, columns) in self.solved.items():
            gone = int(np.searchsorted(items, first, "left"))
            self.solved[leaf] = (items[gone:], {n: c[gone:] for n, c in columns.items()})

    def _lows(self, times: np.ndarray) -> np.ndarray:
        if self.width is None:
            return np.full(len(times), self.start, np.int64)
        return times - self.width

    def sizes(self, times: np.ndarray) -> np.ndarray:
        """At most how many items the window holds at each instant (a bound for chunking)."""
        lo = np.searchsorted(self.t2, self._lows(times), "left")
        hi = np.searchsorted(self.t2, times + self.longest, "right")
        return np.asarray(np.maximum(hi - lo, 0))

    def content(self, times: np.ndarray, limit: int) -> tuple[np.ndarray, ...]:
        """``w_RANGE(S, t, T)`` at each instant (``[t0, t]`` for ``[ALL]``): the items
        meeting ``[t - T, t]``, as rows ``(context, position, c1, c2)``, each item's
        interval cut to the window."""
        low = self._lows(times)
        lo = np.searchsorted(self.t2, low, "left")
        hi = np.searchsorted(self.t2, times + self.longest, "right")
        if self.width is None:
            hi = np.where(times < self.start, lo, hi)
        hi = np.maximum(hi, lo)
        position = spans_of(lo, hi)
        context = np.repeat(np.arange(len(times)), hi - lo)
        keep = self.t1[position] <= times[context]
        position, context = position[keep], context[keep]
        counts = np.bincount(context, minlength=len(times))
        if len(counts) and int(counts.max()) > limit:
            raise UserError(
                f"the window {self.node.name} holds more than max_window_events = "
                f"{limit} items: narrow it, or raise the limit (--set max_window_events=N)"
            )
        c1 = np.maximum(self.t1[position], low[context])
        c2 = np.minimum(self.t2[position], times[context])
        return context, position, c1, c2

    def leaf(self, leaf: GraphPatternRef, content: tuple[np.ndarray, ...]) -> Mappings:
        """``[[P, t]]`` over the window's content (Eq. (16)): each solution of ``P`` on an
        item the window holds, with the item's cut interval."""
        context, position, c1, c2 = content
        items, columns = self.solved[leaf]
        numbers = self.number[position]
        first = np.searchsorted(items, numbers, "left")
        last = np.searchsorted(items, numbers, "right")
        rows = spans_of(first, last)
        owner = np.repeat(np.arange(len(position)), last - first)
        return Mappings(
            context[owner], c1[owner], c2[owner], {n: c[rows] for n, c in columns.items()}
        )


# The streaming operator over answers that come and go ----------------------------------------


class IntervalOutput(Output):
    """The streaming operator over answers that come and go: CQELS-CEP's answer at ``t`` is
    the window's (items leave, a negated match removes one), so IStream is ``Ψ(t) \\
    Ψ(t_prev)`` over the previous evaluation instant (RSP-QL Def. 21), DStream ``Ψ(t_prev)
    \\ Ψ(t)``, RStream ``Ψ(t)``, each after the projection and one copy per mapping (Eq. (1)
    is a set), compared as rows of term ids. From ``start``, no instant before it is
    reported and the first one compares with ∅ (the answer at ``t`` depends on ``t`` alone:
    the windows evict, nothing is consumed)."""

    def __init__(self, plan: Plan, start: int | None = None) -> None:
        super().__init__(plan, answer_set=True, start=start)
        self._previous: tuple[list[str], np.ndarray] | None = None
        """The projected answer at the instant before: its variables and rows ``(t1, t2,
        ids…)``."""
        self._terms: dict[int, Term] = {}

    def instants(
        self,
        times: np.ndarray,
        found: Mappings,
        dictionary: TermDictionary,
        matcher: GraphMatcher,
    ) -> list[Result]:
        """The results at each instant ``times[k]`` given the whole answer ``Ψ`` there (the
        rows of context ``k``)."""
        if len(self._terms) > self.limit:
            self._terms.clear()
        order = np.argsort(found.context, kind="stable")
        found = found.take(order)
        bounds = np.searchsorted(found.context, np.arange(len(times) + 1)).tolist()
        if self.modifiers is not None:
            mus = decoded(found, dictionary, self._terms)
            answers = list(zip(mus, found.t1.tolist(), found.t2.tolist(), strict=True))
            out: list[Result] = []
            for k, t in enumerate(times.tolist()):
                out += self._modified(t, answers[bounds[k] : bounds[k + 1]], matcher)
            return out
        names, table = self._projected(found, dictionary, matcher)
        return self._streamed(times, names, table, dictionary, matcher)

    def _projected(
        self, found: Mappings, dictionary: TermDictionary, matcher: GraphMatcher
    ) -> tuple[list[str], np.ndarray]:
        """The SELECT's expressions and projection on each mapping, as a set of rows
        ``(context, t1, t2, ids…)`` (an expression's value interned)."""
        form = self.form
        if isinstance(form, Select) and form.expressions:
            mus = decoded(found, dictionary, self._terms)
            projected = [self._project((mu, 0, 0), matcher)[0] for mu in mus]
            names = list(form.variables)  # SELECT * has no expressions
            texts = [_node_text(mu[n]) if n in mu else "" for mu in projected for n in names]
            ids = np.full(len(texts), UNBOUND, np.int64)
            where = [i for i, text in enumerate(texts) if text]
            if where:
                ids[where] = dictionary.encode([texts[i] for i in where])
            columns = ids.reshape(len(found), len(names))
        else:
            names = sorted(found.columns)
            if isinstance(form, Select) and form.variables:
                names = [v for v in form.variables if v in found.columns]
            columns = np.zeros((len(found), len(names)), np.int64)
            for k, n in enumerate(names):
                columns[:, k] = found.columns[n]
        table = np.concatenate(
            [np.stack([found.context, found.t1, found.t2], axis=1), columns], axis=1
        )
        return names, distinct_rows(table)[0]

    def _streamed(
        self,
        times: np.ndarray,
        names: list[str],
        table: np.ndarray,
        dictionary: TermDictionary,
        matcher: GraphMatcher,
    ) -> list[Result]:
        """R2S on each instant's projected answer against the one before, then the query
        form."""
        k = len(times)
        shown = np.ones(k, bool) if self.start is None else times >= self.start
        previous = np.zeros((0, table.shape[1] - 1), np.int64)
        if self._previous is not None:  # its columns as this answer's (by name)
            before_names, kept = self._previous
            previous = np.full((len(kept), table.shape[1] - 1), UNBOUND, np.int64)
            previous[:, :2] = kept[:, :2]
            for i, name in enumerate(names):
                if name in before_names:
                    previous[:, 2 + i] = kept[:, 2 + before_names.index(name)]
        # each instant's answer as the next one's "before" (none after an unshown instant)
        moved = table[shown[table[:, 0]]] if len(table) else table
        moved = moved.copy()
        moved[:, 0] += 1
        carried = np.concatenate([np.zeros((len(previous), 1), np.int64), previous], axis=1)
        before = np.concatenate([carried, moved[moved[:, 0] < k]])
        last = table[table[:, 0] == k - 1][:, 1:] if k else previous
        self._previous = (names, last) if shown[-1] else None
        if self.r2s is R2S.RSTREAM:
            streamed = table
        elif self.r2s is R2S.ISTREAM:
            streamed = table[~in_rows(table, before)]
        else:
            streamed = before[~in_rows(before, table)]
        streamed = streamed[shown[streamed[:, 0]]] if len(streamed) else streamed
        streamed = streamed[np.argsort(streamed[:, 0], kind="stable")]
        columns = {n: streamed[:, 3 + i].astype(np.int32) for i, n in enumerate(names)}
        rows = Mappings(streamed[:, 0], streamed[:, 1], streamed[:, 2], columns)
        mus = decoded(rows, dictionary, self._terms)
        answers: list[Answer] = list(zip(mus, rows.t1.tolist(), rows.t2.tolist(), strict=True))
        bounds = np.searchsorted(rows.context, np.arange(k + 1)).tolist()
        form = self.form
        every = isinstance(form, Ask) or (isinstance(form, Construct) and self.report_empty)
        reported = np.flatnonzero(shown) if every else np.unique(rows.context)
        out: list[Result] = []
        for i in reported.tolist():  # no result at an instant that streams nothing (SELECT)
            out += self._format(int(times[i]), answers[bounds[i] : bounds[i + 1]], matcher)
        return out


# The query ---------------------------------------------------------------------------------


class CqelscepQuery(IncrementalQuery):
    """A CQELS-CEP query ``Q = (V, P, D, EC)`` (Sect. 3.2) evaluated incrementally
    (module docstring): push events (or batches of :attr:`dictionary`'s term ids, shared
    with other queries when given), advance the watermark, get the oracle's results, from
    ``start`` (the oracle's start of the range: :class:`IntervalOutput`)."""

    dictionary: TermDictionary

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, GraphSource] | None = None,
        *,
        start: int | None = None,
        dictionary: TermDictionary | None = None,
    ) -> None:
        plan = apply_profile(plan)
        given = dict(graphs or {})
        self.closure = engine_closure(plan.parameters, given)
        """The ontology stream items are entailed with (``entailment``), or None."""
        sources = {iri: background_source(plan.parameters, g) for iri, g in given.items()}
        super().__init__(plan, {i: g for i, g in sources.items() if isinstance(g, frozenset)})
        r2r = plan.r2r
        if isinstance(r2r, EventJoin):
            self.clauses: EventPattern = r2r.event
            background = r2r.graph
        elif isinstance(r2r, EventPattern):
            self.clauses, background = r2r, _EMPTY
        else:
            raise UserError("a CQELS-CEP plan's r2r is an event clause (Sect. 3.2)")
        wanted = [*plan.dataset.default_graphs, *plan.dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in sources]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        self._sources = {iri: sources[iri] for iri in wanted}
        self._named = tuple(plan.dataset.named_graphs)
        """The ``FROM NAMED`` graphs, which the background's ``GRAPH`` clauses read."""
        self.graphs = {i: g for i, g in self._sources.items() if isinstance(g, frozenset)}
        self._changes = sorted(
            {c for g in self._sources.values() if not isinstance(g, frozenset) for c in g.changes()}
        )
        self.lateness = plan.parameters.lateness
        self.reads_after = self.lateness  # an item starting by t may end until t + lateness
        self.limit = plan.parameters.max_window_events
        self.ops = Operators(plan.parameters.max_runs)
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        self.inexact_filters = 0
        """Solutions whose FILTER the programs could not decide, evaluated exactly."""
        t0 = plan.parameters.t0
        windows = [n for n in self.clauses.walk() if isinstance(n, CepWindow)]
        self.windows = {w: _Window(w, t0) for w in dict.fromkeys(windows)}
        self.by_stream: dict[str, list[_Window]] = {}
        for state in self.windows.values():
            self.by_stream.setdefault(state.node.stream, []).append(state)
        self.leaves = {
            leaf: _Leaf(leaf, self.dictionary)
            for state in self.windows.values()
            for leaf in state.leaves
        }
        self._matcher = GraphMatcher()
        self._patterns = GroupMatcher(self._matcher)
        self._background_patterns = tuple(
            dict.fromkeys(
                [background]
                + [
                    n.right
                    for n in self.clauses.walk()
                    if isinstance(n, CepJoin) and isinstance(n.right, GraphPatternRef)
                ]
            )
        )
        self.background: dict[GraphPatternRef, Mappings] = {}
        """``[[P]]_D`` of each background pattern in columns, for ``D`` since :attr:`since`."""
        self.since: int | None = None
        """The last change of ``D`` at or before the latest instant (``TIME_MIN``: none)."""
        if not self._changes:  # matched once per pattern and path mapping: kept
            self._patterns.keep(self._d(0))
            self._version(0)
        self.root_background = background
        self.output = IntervalOutput(plan, start)
        self._pending = np.array(self._changes, np.int64)  # D's changes are instants (Eq. (17))
        self._answered: int | None = None
        self._latest: int | None = None
        self._count = 0

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_matcher"] = None  # pyoxigraph stores do not pickle; made again on load
        state["_patterns"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._matcher = GraphMatcher()
        self._patterns = GroupMatcher(self._matcher)

    def _d(self, t: int) -> frozenset[Triple]:
        """``D(t)``: the merge of the ``FROM`` graphs at ``t``."""
        graphs = [_at(self._sources[iri], t) for iri in self.plan.dataset.default_graphs]
        return graphs[0] if len(graphs) == 1 else frozenset().union(*graphs)

    def _version(self, t: int) -> int:
        """The background's version at ``t``: ``[[P]]_D`` matched again if ``D`` changed
        since the last instant; the ``t1`` of Eq. (17)."""
        index = int(np.searchsorted(np.array(self._changes, np.int64), t, "right"))
        since = self._changes[index - 1] if index else TIME_MIN
        if since != self.since:
            d = self._d(t)
            named = {iri: _at(self._sources[iri], t) for iri in self._named}
            self.background = {p: self._background(p, d, named) for p in self._background_patterns}
            self.since = since
        return since

    def _background(
        self, pattern: GraphPatternRef, d: frozenset[Triple], named: dict[str, frozenset[Triple]]
    ) -> Mappings:
        """``[[P]]_D`` (Eq. (17)) in columns: the nested path triples as nSPARQL relations
        joined with the group (each of their mappings bound before it, so its FILTERs see
        them); its ``GRAPH`` clauses read the named graphs."""
        paths = match_path_triples(pattern.paths, PathGraph(d)) if pattern.paths else [Mu()]
        found: dict[Mu, None] = {}
        for bound in paths:
            for mu in self._patterns.match(pattern, d, bound=bound, named=named):
                found[mu] = None
        names = sorted(set(pattern.variables).union(*found))  # the same at every version
        texts = [_node_text(mu[n]) if n in mu else "" for mu in found for n in names]
        ids = np.full(len(texts), UNBOUND, np.int32)
        where = [i for i, text in enumerate(texts) if text]
        if where:
            ids[where] = self.dictionary.encode([texts[i] for i in where])
        table = ids.reshape(len(found), len(names))
        zeros = np.zeros(len(found), np.int64)
        return Mappings(zeros, zeros, zeros, {n: table[:, k] for k, n in enumerate(names)})

    def _keep_rows(self, group: Group) -> Callable[[Columns, Filter], Columns]:
        """A FILTER of ``group`` applied to solutions in columns (the programs' verdicts,
        the exact evaluator's where they cannot decide, counted)."""

        def keep(found: Columns, f: Filter) -> Columns:
            kept, undecided = keep_counted(found, f, group.slots, self.dictionary, self._matcher)
            self.inexact_filters += undecided
            return kept

        return keep

    # IncrementalQuery -------------------------------------------------------------------

    def push(self, events: Iterable[Event] | TripleBatch) -> list[Result]:
        """Take events in non-decreasing time (their end), as objects or a batch of
        :attr:`dictionary`'s ids; return the answers of every instant that became final
        (module docstring)."""
        self._check_open()
        if isinstance(events, TripleBatch):
            if bool(np.any(events.event_end[1:] < events.event_end[:-1])):
                events = in_time_order([events])
            if self.closure is None:
                return self._push_batch(events)
            events = events.events(self.dictionary)
        listed = list(events)
        if self.closure is not None:
            listed = entail_events(listed, self.closure)
        out: list[Result] = []
        for batch in batches_of(listed, self.dictionary):
            out += self._push_batch(batch)
        return out

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the instants up to ``t - lateness`` are final."""
        self._check_open()
        if self.watermark is None or t > self.watermark:
            self.watermark = t
        mark = self.watermark
        return self._answer(self._pending + self.lateness <= mark)

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: every instant left, up to ``until`` (default: the last instant at
        which the answer may change, the oracle's default)."""
        self._check_open()
        pending = self._pending
        out = self._answer(np.ones(len(pending), bool) if until is None else pending <= until)
        self._finished = True
        return out

    # Arrivals ---------------------------------------------------------------------------

    def _push_batch(self, batch: TripleBatch) -> list[Result]:
        """A batch in time order: its items taken, then the instants final before its last
        event answered (every item of the batch is in the windows by then, so an interval
        item may start at an instant an earlier event of the batch makes final)."""
        if not len(batch):
            return []
        self._check_times(batch)
        self._take(batch)
        end = int(batch.event_end[-1])
        self._latest = end if self._latest is None else max(self._latest, end)
        return self._answer(self._pending + self.lateness < end)

    def _check_times(self, batch: TripleBatch) -> None:
        """Refuse an event at or before the watermark, or before the latest one."""
        end = batch.event_end
        latest = self._latest if self._latest is not None else int(end[0])
        before = np.maximum.accumulate(np.concatenate([[latest], end[:-1]]))
        late = end < before
        if self.watermark is not None:
            late |= end <= self.watermark
        if not late.any():
            return
        i = int(np.flatnonzero(late)[0])
        event = Event(batch.streams[batch.event_stream[i]], int(end[i]), int(end[i]), frozenset())
        self._check_order(event)
        raise UserError(
            f"an event of <{event.stream}> at {event.t_end} came after one at "
            f"{int(before[i])}: events must come in time order"
        )

    def _take(self, batch: TripleBatch) -> None:
        """The batch's items in every window on their stream: their instants, and their
        pattern solutions if any (matched once, here)."""
        base = self._count
        self._count += len(batch)
        new: list[np.ndarray] = []
        for index, stream in enumerate(batch.streams):
            states = self.by_stream.get(stream)
            if not states:
                continue
            mine = np.flatnonzero(batch.event_stream == index)
            if not len(mine):
                continue
            local = np.full(len(batch), -1, np.int64)
            local[mine] = np.arange(len(mine))
            on = local[batch.triple_event] >= 0
            triples = {
                "event": local[batch.triple_event[on]].astype(np.int32),
                "s": batch.s[on],
                "p": batch.p[on],
                "o": batch.o[on],
            }
            made: list[list[Event]] = []

            def events(made: list[list[Event]] = made, mine: np.ndarray = mine) -> list[Event]:
                if not made:
                    every = batch.events(self.dictionary)
                    made.append([every[i] for i in mine.tolist()])
                return made[0]

            solved = {
                leaf: self.leaves[leaf].match(self, triples, events)
                for leaf in dict.fromkeys(leaf for state in states for leaf in state.leaves)
            }
            t1, t2 = batch.event_start[mine], batch.event_end[mine]
            for state in states:
                new.append(self._arrive(state, stream, base + mine, t1, t2, solved))
        if new:
            self._pending = np.union1d(self._pending, np.concatenate(new))

    def _arrive(
        self,
        state: _Window,
        stream: str,
        number: np.ndarray,
        t1: np.ndarray,
        t2: np.ndarray,
        solved: Mapping[GraphPatternRef, tuple[np.ndarray, dict[str, np.ndarray]]],
    ) -> np.ndarray:
        """Items of ``state``'s stream arriving: kept with their solutions when a pattern
        matches and the window ever holds them; their instants returned."""
        lo, hi = state.instant_spans(t1, t2)
        n = len(t1)
        counts = (hi - lo).reshape(2, n).sum(axis=0)
        some = counts > 0
        if self._answered is not None:
            early = np.flatnonzero(some & (lo[:n] <= self._answered))
            if len(early):
                i = int(early[0])
                raise UserError(
                    f"an item of <{stream}> over [{t1[i]}, {t2[i]}] arrived after the answers "
                    f"at {self._answered} were final, which its window holds from {lo[i]}: an "
                    f"interval item may last at most lateness = {self.lateness} ms "
                    "(--set lateness=N)"
                )
        if int(counts.max(initial=0)) + len(self._pending) > self.limit:
            self._too_many_pending()
        matched = np.zeros(n, bool)
        for leaf in state.leaves:
            matched[solved[leaf][0]] = True
        keep = np.flatnonzero(matched & some)
        if len(keep):
            where = np.full(n, -1, np.int64)
            where[keep] = np.arange(len(keep))
            mine: dict[GraphPatternRef, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
            for leaf in state.leaves:
                items, columns = solved[leaf]
                rows = np.flatnonzero(where[items] >= 0)
                mine[leaf] = (number[items[rows]], {c: v[rows] for c, v in columns.items()})
            state.add(number[keep], t1[keep], t2[keep], mine)
        return spans_of(lo, hi)

    def _too_many_pending(self) -> None:
        raise UserError(
            f"more than max_window_events = {self.limit} evaluation instants are "
            f"pending (interval items change a window at every instant they span): "
            "raise the limit (--set max_window_events=N)"
        )

    # Evaluation -------------------------------------------------------------------------

    def _answer(self, final: np.ndarray) -> list[Result]:
        """Evaluate the pending instants that are final (a prefix: ``final`` is monotone),
        in time order."""
        ready = int(np.argmin(final)) if not final.all() else len(final)
        times, self._pending = self._pending[:ready], self._pending[ready:]
        out: list[Result] = []
        if len(times):
            for chunk in self._chunks(times):
                out += self._at(chunk)
            self._answered = int(times[-1])
            for state in self.windows.values():
                state.evict(self._answered)
        if len(self._pending) > self.limit:
            self._too_many_pending()
        for state in self.windows.values():
            if len(state.number) > self.limit:
                raise UserError(
                    f"the window {state.node.name} holds more than max_window_events = "
                    f"{self.limit} items: narrow it, or raise the limit "
                    "(--set max_window_events=N)"
                )
        return out

    def _chunks(self, times: np.ndarray) -> Iterable[np.ndarray]:
        """``times`` in runs over one version of ``D`` and about :data:`_ROWS_AT_ONCE`
        window content rows and :data:`_PAIRS_AT_ONCE` pairs of them at most (memory)."""
        changes = np.array(self._changes, np.int64)
        version = np.searchsorted(changes, times, "right")
        size = np.zeros(len(times), np.int64)
        for state in self.windows.values():
            size += state.sizes(times)
        rows = np.cumsum(size) // _ROWS_AT_ONCE
        pairs = np.cumsum(size * size) // _PAIRS_AT_ONCE
        new = (version[1:] != version[:-1]) | (rows[1:] != rows[:-1]) | (pairs[1:] != pairs[:-1])
        return np.split(times, np.flatnonzero(new) + 1)

    def _at(self, times: np.ndarray) -> list[Result]:
        """Eq. (1) at each of ``times`` (one version of ``D``): the event clauses joined
        with the background, then the projection and the streaming operator."""
        since = self._version(int(times[0]))
        contents: dict[_Window, tuple[np.ndarray, ...]] = {}
        clauses = self._clause(self.clauses, times, contents)
        found = self._joined(clauses, self.root_background, since)
        return self.output.instants(times, found, self.dictionary, self._matcher)

    def _joined(self, omega: Mappings, pattern: GraphPatternRef, since: int) -> Mappings:
        """``JOIN(Ω, [[P, t]]_D)`` with ``[[P, t]]_D = {⟨μ, [t1, t]⟩ | μ ∈ [[P]]_D}`` (Eq.
        (1), (17)): every interval of ``Ω`` ends by ``t``, so the join keeps its part from
        ``t1`` on (all of it for a static ``D``, ``t1 = TIME_MIN``)."""
        background = self.background[pattern]
        if len(background) == 1 and not background.columns and since == TIME_MIN:
            return omega
        rows = np.flatnonzero(omega.t2 >= since)
        omega = omega.take(rows)
        shared = sorted(omega.columns.keys() & background.columns.keys())
        li, ri = compatible_pairs(
            [omega.columns[n] for n in shared],
            [background.columns[n] for n in shared],
            len(omega),
            len(background),
        )
        columns = merged(omega.columns, li, background.columns, ri)
        found = Mappings(omega.context[li], np.maximum(omega.t1[li], since), omega.t2[li], columns)
        return self.ops.bounded(found, "the join with the background pattern")

    def _clause(
        self, node: EventPattern, times: np.ndarray, contents: dict[_Window, tuple[np.ndarray, ...]]
    ) -> Mappings:
        """``[[EC, t]]`` at each of ``times``: a window specification (9), a SEQ of them
        (3)-(8), a JOIN of clauses (2) or with a background pattern, an OR."""
        if isinstance(node, CepWindow):
            state = self.windows[node]
            if state not in contents:
                contents[state] = state.content(times, self.limit)
            return self._sequence_pattern(state, state.node.pattern, contents[state], times)
        if isinstance(node, CepSeq):
            values = []
            for item in node.items:
                if isinstance(item.pattern, GraphPatternRef):
                    raise UserError(
                        "an event clause SEQ holds window specifications, not graph patterns "
                        "(Sect. 3.2)"
                    )
                values.append(self._clause(item.pattern, times, contents))
            return self.ops.sequence(values, node.negated_index, times)
        if isinstance(node, CepJoin):
            right = node.right
            left = self._clause(node.left, times, contents)
            if isinstance(right, GraphPatternRef):
                assert self.since is not None
                return self._joined(left, right, self.since)
            return self.ops.join(left, self._clause(right, times, contents))
        if isinstance(node, Or):
            return self.ops.or_(
                self._clause(node.left, times, contents), self._clause(node.right, times, contents)
            )
        raise UserError(f"{type(node).__name__} is not a CQELS-CEP event clause (Sect. 3.2)")

    def _sequence_pattern(
        self, state: _Window, node: object, content: tuple[np.ndarray, ...], times: np.ndarray
    ) -> Mappings:
        """``[[TSP, t]]^ω_S`` (Eq. (9)) over the window's content: a graph pattern (16), a
        SEQ of them (10)-(15), an OR."""
        if isinstance(node, GraphPatternRef):
            return state.leaf(node, content).distinct()
        if isinstance(node, CepSeq):
            values = [
                self._sequence_pattern(state, item.pattern, content, times) for item in node.items
            ]
            return self.ops.sequence(values, node.negated_index, times)
        if isinstance(node, Or):
            return self.ops.or_(
                self._sequence_pattern(state, node.left, content, times),
                self._sequence_pattern(state, node.right, content, times),
            )
        raise UserError(
            f"{type(node).__name__} inside a window is not a CQELS-CEP triple sequence "
            "pattern (Sect. 3.2)"
        )
