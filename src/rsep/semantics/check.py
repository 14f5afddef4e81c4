"""The correctness checker: is an engine's answer one of the correct answers? (RSP-QL,
"Correctness of RDF stream processing systems"; CSR-Bench.)

RSP-QL Def. 25: the answer ``Ans_C(q)`` of an RSP engine ``C`` to a query ``q`` is correct
iff some RSP-QL query ``Q ∈ rspqlQueries(q, C)`` has ``Ans(Q) = Ans_C(q)``. The queries of
``rspqlQueries`` share the algebraic expression, the query form and the report policy of
``C`` (here: the plan under the engine's profile) and differ in the one parameter the
engines' query languages cannot state, the instant ``t0`` at which a sliding window's first
window opens. Theorem 1 (windows with t0 ``a`` and ``a + nβ`` coincide from ``a + nβ`` on)
bounds the t0 values to

    T0 = {a, a + 1, …, a + β − 1}      (a: the query registration time)

counted in the time unit, so the set of correct answers is finite (:func:`admissible_t0`).
Def. 26 then compares the answers from an instant ``t_s`` on, cutting off the transient
state of the engine; CSR-Bench's oracle (the paper's "RSP-QL implementation in
CSR-Bench") realises it by accepting an engine answer that is a *contiguous run* of a
correct answer (``OutputStreamResult.contains``), comparing the relations of the two
streams in order and by content: ``TimestampedRelation.equals`` ignores the timestamps,
and numeric values compare by value (``TimestampedRelationElement.equals``). rsep does the
same (:func:`compare`): a :class:`Relation` is one evaluation's set of rows, and the
engine's timestamps only locate a departure.

The engines' clocks are not the oracle's: CQELS stamps each row with the processing time a
few milliseconds after the data arrived and emits the rows of one evaluation one by one.
:func:`relations_from_results` maps each time to the start of its time unit
(``granularity``; CSR-Bench's ``system.timeunit = 1000``) and merges the rows stamped with one
mapped time into one relation.

The time granularity of t0: between two consecutive instants of the grid on which every
item time, window width and slide lie (their greatest common divisor with ``a``'s offset),
moving t0 moves no window boundary across an item, so every window holds the same items
and the answers differ only in their timestamps, which the comparison ignores. The grid is
therefore a complete set of representatives of T0 (and coarser than the paper's unit step);
CSR-Bench steps t0 by ``system.timeunit``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode

from rsep.algebra.passes import override
from rsep.algebra.plan import Plan
from rsep.algebra.r2s import Solution
from rsep.algebra.window import Composed, TimeWindow, WindowFunction
from rsep.rdf.event import Stream, StreamSet
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult
from rsep.rdf.terms import XSD, Term
from rsep.semantics.evaluate import Answer, ContinuousQuery
from rsep.semantics.graph import Graph, TimeVaryingGraph

__all__ = [
    "Departure",
    "Relation",
    "Verdict",
    "admissible_t0",
    "check",
    "compare",
    "correct_answers",
    "relations_from_answers",
    "relations_from_results",
    "row_key",
]

_NUMERIC = frozenset(
    XSD + name
    for name in (
        "integer",
        "decimal",
        "double",
        "float",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "positiveInteger",
        "unsignedInt",
        "unsignedLong",
        "unsignedShort",
        "unsignedByte",
    )
)

Key = tuple[str, ...]
Row = tuple[tuple[str, Key], ...]


def term_key(term: Term) -> Key:
    """A term as the comparison sees it: IRIs and blank nodes by their value, numeric
    literals by their value (CSR-Bench compares them as doubles, so ``"83"^^xsd:double``,
    ``"83.0e0"^^xsd:double`` and ``"83.0"`` agree; rounded to 12 significant digits, since
    engines print averages with different precision), other literals by lexical form and
    datatype or language."""
    if isinstance(term, NamedNode):
        return ("iri", term.value)
    if isinstance(term, Literal):
        if term.datatype.value in _NUMERIC:
            try:
                return ("number", f"{float(term.value):.12g}")
            except ValueError:
                pass
        if term.language:
            return ("literal", term.value, "@" + term.language)
        return ("literal", term.value, term.datatype.value)
    return ("bnode", str(term))


def row_key(result: Result) -> Row:
    """One result as a row of the comparison (bindings by variable name)."""
    if isinstance(result, SelectResult):
        return tuple(sorted((name, term_key(term)) for name, term in result.bindings.items()))
    if isinstance(result, AskResult):
        return (("boolean", ("boolean", str(result.boolean).lower())),)
    return tuple(sorted(("triple", ("triple", f"{t} .")) for t in result.triples))


@dataclass(frozen=True)
class Relation:
    """The rows streamed out at one evaluation (CSR-Bench's ``TimestampedRelation``): equal
    to another relation when the rows are (the time is not compared)."""

    time: int
    rows: frozenset[Row] = field(default_factory=frozenset)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Relation) and self.rows == other.rows

    def __hash__(self) -> int:
        return hash(self.rows)

    def show(self) -> str:
        """The relation as text: its time and its rows, sorted."""
        if not self.rows:
            return f"at {self.time}: (empty relation)"
        lines = [f"at {self.time}: {len(self.rows)} row(s)"]
        for row in sorted(self.rows):
            lines.append("  " + " ".join(f"?{name}={_show_key(key)}" for name, key in row))
        return "\n".join(lines)


def _show_key(key: Key) -> str:
    kind, value = key[0], key[1]
    if kind == "iri":
        return f"<{value}>"
    if kind == "literal":
        suffix = key[2]
        return f'"{value}"' + (suffix if suffix.startswith("@") else f"^^<{suffix}>")
    return value


def relations_from_answers(answers: Iterable[Answer]) -> list[Relation]:
    """The oracle's answers (:meth:`ContinuousQuery.answers`) as relations, in time order;
    a reported empty answer is an empty relation."""
    out: list[Relation] = []
    for answer in answers:
        rows = frozenset(row_key(r) for r in answer.results if not _empty_graph(r))
        out.append(Relation(answer.time, rows))
    return out


def _empty_graph(result: Result) -> bool:
    return isinstance(result, ConstructResult) and not result.triples


def relations_from_results(
    results: Iterable[Result | Relation], granularity: int = 1
) -> list[Relation]:
    """Results (rows of JSON Lines, or relations already) grouped into relations by time,
    each time first mapped to the start of its ``granularity`` (module docstring); rows
    with one mapped time make one relation. A :class:`Relation` given keeps its emptiness
    (C-SPARQL reports empty relations)."""
    if granularity < 1:
        raise ValueError("granularity must be positive")
    grouped: dict[int, set[Row]] = {}
    for item in results:
        t = (item.time // granularity) * granularity
        rows = grouped.setdefault(t, set())
        if isinstance(item, Relation):
            rows.update(item.rows)
        elif not _empty_graph(item):
            rows.add(row_key(item))
    return [Relation(t, frozenset(rows)) for t, rows in sorted(grouped.items())]


# T0 (RSP-QL Theorem 1) ---------------------------------------------------------------------


def _sliding(window: WindowFunction) -> list[TimeWindow]:
    if isinstance(window, TimeWindow):
        return [window]
    if isinstance(window, Composed):
        return _sliding(window.outer) + _sliding(window.inner)
    return []


def _free_windows(plan: Plan) -> list[TimeWindow]:
    """The sliding windows whose first window opens at ``window.t0`` (the query does not
    fix their t0): the ones rspqlQueries varies."""
    found: list[TimeWindow] = []
    for named in plan.dataset.windows:
        found.extend(w for w in _sliding(named.window) if w.t0 is None)
    return found


def admissible_t0(
    plan: Plan,
    streams: StreamSet | Mapping[str, Stream],
    *,
    registration: int | None = None,
    granularity: int | None = None,
) -> list[int]:
    """The t0 values of ``rspqlQueries(q, C)`` (RSP-QL, "Correctness in practice"):
    ``T0 = {a, a + 1, …, a + β − 1}`` by Theorem 1, ``a`` the registration time
    (default: the plan's ``window.t0``, CSR-Bench's ``firstt0``), stepped by
    ``granularity`` (default: the grid of the item times, widths and slides, which loses
    no answer: module docstring). With several free sliding windows one t0 is shared
    (``window.t0``), and β is the least common multiple of their slides; a plan without
    a free sliding window has the one t0 it states."""
    start = plan.parameters.t0 if registration is None else registration
    windows = _free_windows(plan)
    if not windows:
        return [start]
    beta = 1
    for window in windows:
        beta = math.lcm(beta, window.slide)
    if granularity is None:
        step = 0
        for window in windows:
            step = math.gcd(step, window.width, window.slide, window.delay)
        for stream in streams.values():
            for event in stream:
                step = math.gcd(step, event.t_start - start, event.t_end - start)
        granularity = step or 1
    if granularity < 1:
        raise ValueError("the granularity of t0 must be positive")
    return list(range(start, start + beta, granularity))


class _SharedQuery(ContinuousQuery):
    """A :class:`ContinuousQuery` that remembers Ψ by the items of its windows and the
    snapshots of its graphs: the queries of ``rspqlQueries`` differ only in t0, so an
    evaluation over the same items recurs across t0 values (and Ψ reads nothing else,
    RSP-QL Def. 17-19). ``memo`` and ``terms`` are shared by the queries of one plan."""

    def __init__(
        self,
        plan: Plan,
        streams: StreamSet | Mapping[str, Stream],
        graphs: Mapping[str, Graph | TimeVaryingGraph] | None,
        memo: dict[tuple[object, ...], list[Solution]],
        terms: dict[str, Term],
    ) -> None:
        super().__init__(plan, streams, graphs)
        self._memo = memo
        self._terms = terms

    def solutions(self, t: int, previous: int | None) -> list[Solution]:
        sds = self.dataset
        key = (
            tuple(tuple(id(e) for e in sds.content(w, t, previous)) for w in sds.windows),
            tuple(id(g.at(t)) for g in sds.graphs.values()),
        )
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = super().solutions(t, previous)
        return found


def correct_answers(
    plan: Plan,
    streams: StreamSet | Mapping[str, Stream],
    graphs: Mapping[str, Graph | TimeVaryingGraph] | None = None,
    t0s: Sequence[int] | None = None,
    *,
    until: int | None = None,
    cache: MutableMapping[int, list[Relation]] | None = None,
) -> dict[int, list[Relation]]:
    """``Ans(Q)`` for every ``Q ∈ rspqlQueries(q, C)`` (RSP-QL Def. 25): the oracle's
    relations for each admissible t0 (default :func:`admissible_t0`), from the first item
    on; an evaluation over items already evaluated under another t0 is not repeated.
    ``cache`` keeps relations by t0 across calls for the same plan and data."""
    chosen = list(t0s) if t0s is not None else admissible_t0(plan, streams)
    store: MutableMapping[int, list[Relation]] = cache if cache is not None else {}
    memo: dict[tuple[object, ...], list[Solution]] = {}
    terms: dict[str, Term] = {}
    for t0 in chosen:
        if t0 not in store:
            bound = override(plan, {"window.t0": t0}, "a t0 of rspqlQueries (RSP-QL Def. 25)")
            query = _SharedQuery(bound, streams, graphs, memo, terms)
            store[t0] = relations_from_answers(query.answers(until=until))
    return {t0: store[t0] for t0 in chosen}


# Comparison (Def. 25-26, CSR-Bench) ----------------------------------------------------------


@dataclass(frozen=True)
class Departure:
    """Where an answer leaves the closest correct answer: the answer's relation number
    ``index`` (``got``; an answer that stops early is a run, so it always has one) against
    the correct answer's relation at that place (``expected``; None when the correct answer
    has ended)."""

    index: int
    got: Relation
    expected: Relation | None

    @property
    def time(self) -> int:
        """The answer's time of the first relation that departs."""
        return self.got.time


@dataclass(frozen=True)
class Verdict:
    """The outcome of the correctness test (RSP-QL Def. 25-26).

    ``correct``: the answer is a run of the correct answer for ``t0``, starting at its
    relation ``offset``; otherwise ``t0`` and ``offset`` locate the closest correct answer
    (the one that agrees longest, ``agreed`` relations, from the answer's start) and
    ``departure`` the first relation where the answer leaves it. ``tried`` lists the t0
    values checked.
    """

    correct: bool
    t0: int
    offset: int
    agreed: int
    length: int
    departure: Departure | None
    tried: tuple[int, ...]

    def describe(self) -> str:
        """The verdict as text for ``rsep check``."""
        span = f"{self.tried[0]}..{self.tried[-1]}" if self.tried else "-"
        head = f"{len(self.tried)} admissible t0 value(s) tried ({span})"
        if self.correct:
            return (
                f"correct: the answer ({self.length} relation(s)) equals the correct answer "
                f"for t0 = {self.t0} from its relation {self.offset} on\n{head}"
            )
        lines = [
            f"incorrect: closest correct answer t0 = {self.t0} (from its relation "
            f"{self.offset}) agrees on {self.agreed} of {self.length} relation(s)",
            head,
        ]
        if self.departure is not None:
            d = self.departure
            lines.append(f"first departure: relation {d.index} of the answer, at {d.time}")
            lines.append("answer " + d.got.show())
            lines.append(
                "correct " + (d.expected.show() if d.expected is not None else "answer has ended")
            )
        return "\n".join(lines)


def _agreement(answer: Sequence[Relation], correct: Sequence[Relation], offset: int) -> int:
    k = 0
    while k < len(answer) and offset + k < len(correct) and answer[k] == correct[offset + k]:
        k += 1
    return k


def compare(
    answer: Sequence[Relation],
    correct: Mapping[int, Sequence[Relation]],
    *,
    empty_relations: bool = True,
) -> Verdict:
    """The correctness test of CSR-Bench over the correct answers by t0: ``answer`` is
    correct iff it is a contiguous run of one of them (RSP-QL Def. 26: equal from some
    instant on; CSR-Bench's ``contains``). Otherwise the closest correct answer is the
    alignment (t0, start) agreeing longest from the answer's first relation, the earliest
    t0 and start on ties; a start is a relation equal to the answer's first, or the
    first relation when none is. ``empty_relations=False`` drops the empty relations of the
    correct answers, for an answer format that cannot show them (JSON Lines has one line
    per row, so an empty relation has none)."""
    tried = tuple(correct)
    if not empty_relations:
        correct = {t0: [rel for rel in rels if rel.rows] for t0, rels in correct.items()}
    best: tuple[int, int, int] | None = None  # (agreed, t0, offset)
    for t0, relations in correct.items():
        starts = [i for i, rel in enumerate(relations) if answer and rel == answer[0]] or [0]
        for offset in starts:
            agreed = _agreement(answer, relations, offset)
            if agreed == len(answer):
                return Verdict(True, t0, offset, agreed, len(answer), None, tried)
            if best is None or agreed > best[0]:
                best = (agreed, t0, offset)
    if best is None:  # no t0 at all
        raise ValueError("no correct answer to compare with")
    agreed, t0, offset = best
    relations = correct[t0]
    place = offset + agreed
    expected = relations[place] if place < len(relations) else None
    departure = Departure(agreed, answer[agreed], expected)
    return Verdict(False, t0, offset, agreed, len(answer), departure, tried)


def check(
    plan: Plan,
    streams: StreamSet | Mapping[str, Stream],
    answer: Sequence[Relation],
    graphs: Mapping[str, Graph | TimeVaryingGraph] | None = None,
    *,
    registration: int | None = None,
    granularity: int | None = None,
    until: int | None = None,
    empty_relations: bool = True,
) -> Verdict:
    """Whether ``answer`` is correct for ``plan`` (under its engine profile) over the data
    (RSP-QL Def. 25-26): :func:`admissible_t0`, :func:`correct_answers`, :func:`compare`."""
    t0s = admissible_t0(plan, streams, registration=registration, granularity=granularity)
    correct = correct_answers(plan, streams, graphs, t0s, until=until)
    return compare(answer, correct, empty_relations=empty_relations)
