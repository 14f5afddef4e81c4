"""The event algebra: event patterns of RSEP-QL, EP-SPARQL, CQELS-CEP and SPAseq as one tree.

Each class is one operator of one paper, under the paper's name, and keeps that paper's
meaning; the papers' operators are not merged where their semantics differ (an EP-SPARQL
``SeqJoin`` on intervals is not an RSEP-QL ``Seq`` on points, nor a SPAseq ``Sequence`` with
event selection strategies). The SPARQL graph patterns inside events stay opaque here
(:class:`GraphPatternRef`): the SPARQL AST lives in ``rsep.lang``, above this layer.

- RSEP-QL (seed 000, Sect. 3.3, 4.2-4.4): :class:`Event` (``EVENT w P``), :class:`First`,
  :class:`Last`, :class:`Seq` with a :class:`SelectionPolicy`, :class:`Match` (``MATCH E``)
  with a :class:`ConsumptionPolicy` (consuming :class:`InputUnit` s); Table 1's
  configurations (:data:`TABLE_1`).
- EP-SPARQL (seed 002, Sect. 4.2): :class:`StreamBgp`, :class:`SeqJoin`, :class:`EqJoin`,
  :class:`OptionalSeq` (``SeqRightJoin``), :class:`EqualsOptional` (``EqLeftJoin``),
  :class:`And` (``Join``), :class:`EventFilter`.
- CQELS-CEP (seed 001, Sect. 3.2, 4.2-4.3): :class:`CepSeq` with at most one negated
  :class:`CepItem` (SEQ, SEQ_WO, NO_HEAD, NO_TAIL), :class:`Or`, :class:`CepJoin`,
  :class:`CepWindow`.
- SPAseq (seed 004, Def. 4, Sect. 5, App. B): :class:`Gpm`, :class:`Sequence` with a
  :class:`Strategy` between consecutive steps, :class:`KleenePlus`, :class:`Conjunction`,
  :class:`Disjunction`, :class:`Negation`, :class:`Optional`, :class:`Within`,
  :class:`PartitionBy`.

Every node is a frozen dataclass: equality and hashing are structural, and
:func:`transform` rewrites a tree bottom-up (the sqlglot model).
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any, TypeVar

from rsep.algebra.paths import PathTriple
from rsep.algebra.window import LandmarkWindow, TimeWindow, WindowFunction
from rsep.errors import UserError

__all__ = [
    "CSPARQL_SEQ",
    "CSPARQL_TIME_WINDOW",
    "EPSPARQL_CHRONOLOGICAL",
    "EPSPARQL_RECENT",
    "EPSPARQL_UNRESTRICTED",
    "TABLE_1",
    "And",
    "CepItem",
    "CepJoin",
    "CepSeq",
    "CepSeqKind",
    "CepWindow",
    "Configuration",
    "Conjunction",
    "ConsumptionPolicy",
    "Disjunction",
    "EqJoin",
    "EqualsOptional",
    "Event",
    "EventFilter",
    "EventPattern",
    "First",
    "Gpm",
    "GraphPatternRef",
    "InputUnit",
    "KbPattern",
    "KleenePlus",
    "Last",
    "Match",
    "Negation",
    "Node",
    "Optional",
    "OptionalSeq",
    "Or",
    "PartitionBy",
    "SelectionPolicy",
    "Seq",
    "SeqJoin",
    "Sequence",
    "Strategy",
    "StreamBgp",
    "Within",
    "check_bop",
    "transform",
    "unwrap_bounds",
]

_NAME = re.compile(r"[A-Za-z_0-9][\w\u00b7\u0300-\u036f\u203f-\u2040-]*", re.UNICODE)


def check_variable(name: str) -> str:
    """``name`` if it is a SPARQL variable name written without ``?``/``$``; else an error."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"not a variable name (write it without '?'): {name!r}")
    return name


class Node:
    """A node of the plan's trees: a frozen dataclass whose children are the
    :class:`Node` values of its fields (directly or in a tuple)."""

    def children(self) -> tuple[Node, ...]:
        """The child nodes, in field order."""
        found: list[Node] = []
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Node):
                found.append(value)
            elif isinstance(value, tuple):
                found.extend(v for v in value if isinstance(v, Node))
        return tuple(found)

    def walk(self) -> Iterator[Node]:
        """This node and all its descendants, pre-order."""
        yield self
        for child in self.children():
            yield from child.walk()


N = TypeVar("N", bound=Node)


def transform(node: N, fn: Callable[[Node], Node]) -> Node:
    """Rewrite ``node`` bottom-up: children first, then ``fn`` on the rebuilt node."""
    changes: dict[str, Any] = {}
    for f in fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        if isinstance(value, Node):
            new = transform(value, fn)
            if new is not value:
                changes[f.name] = new
        elif isinstance(value, tuple) and any(isinstance(v, Node) for v in value):
            items = tuple(transform(v, fn) if isinstance(v, Node) else v for v in value)
            if any(a is not b for a, b in zip(items, value, strict=True)):
                changes[f.name] = items
    rebuilt = replace(node, **changes) if changes else node  # type: ignore[type-var]
    return fn(rebuilt)


@dataclass(frozen=True)
class GraphPatternRef(Node):
    """A SPARQL graph pattern, kept opaque: its text and the variables it binds.

    The SPARQL AST is ``rsep.lang``'s; the plan only needs to print the pattern, hand it
    to a SPARQL engine, and know its variables (to join, partition and project).
    Variable names are written without ``?``.

    ``paths`` are CQELS-CEP's extended triple patterns whose nested regular expression
    SPARQL 1.1 cannot evaluate (seed 001, Sect. 2.3: a nested step or an nSPARQL axis),
    taken out of ``text`` and joined with it (:mod:`rsep.algebra.paths`).
    """

    text: str
    variables: frozenset[str] = frozenset()
    paths: tuple[PathTriple, ...] = ()

    def __post_init__(self) -> None:
        for name in self.variables:
            check_variable(name)

    @property
    def empty(self) -> bool:
        """Whether this is the empty group ``{}``: one empty solution, a join's identity."""
        return self.text == "{}" and not self.paths

    def __str__(self) -> str:
        return " ".join(self.text.split())


class Strategy(Enum):
    """An event selection strategy of a sequence (SPAseq Sect. 2.3, 4.2.2, Def. 10-12).

    - ``STRICT`` (``,``): strict contiguity: no event of the streamset lies between the
      two selected events (Def. 12);
    - ``SKIP_TILL_NEXT`` (``;``): irrelevant events are skipped until the next event that
      matches (compatibly) is taken (Def. 11);
    - ``SKIP_TILL_ANY`` (``:``): relevant and irrelevant events may be skipped: every
      combination is a match (Def. 10).

    SPAseq Fig. 1 on ``SEQ(A, B, C)`` over ``a1 b1 c1 a2 a3 b2 c2`` lists ``{a1, b1, c1}``
    for strict, adds ``{a2, b2, c2}`` and ``{a3, b2, c2}`` for skip-till-next and ``{a1, b2,
    c2}`` for skip-till-any; the definitions also give ``{a3, b2, c2}`` under strict
    contiguity and ``{a1, b1, c2}`` under skip-till-any (docs/semantics.md, SPAseq).
    """

    STRICT = "strict"
    SKIP_TILL_NEXT = "skip_till_next"
    SKIP_TILL_ANY = "skip_till_any"

    def __str__(self) -> str:
        return self.value

    @property
    def symbol(self) -> str:
        """SPAseq's operator: ``,`` ``;`` or ``:``."""
        return {"strict": ",", "skip_till_next": ";", "skip_till_any": ":"}[self.value]

    @classmethod
    def parse(cls, text: str) -> Strategy:
        """A strategy from its name or SPAseq symbol."""
        key = text.strip().lower()
        for strategy in cls:
            if key in {strategy.value, strategy.symbol, strategy.name.lower()}:
                return strategy
        raise ValueError(
            f"unknown event selection strategy {text!r} "
            "(strict ',', skip_till_next ';', skip_till_any ':')"
        )


class SelectionPolicy(Enum):
    """Which matches of its operands an RSEP-QL SEQ selects (RSEP-QL Sect. 4.3).

    - ``UNRESTRICTED``: every compatible earlier match (Eq. (7); EP-SPARQL's unrestricted
      setting);
    - ``CHRONOLOGICAL``: ``SEQ^c``, the first match of E2 that has a compatible earlier
      match of E1, paired with the first such (Eq. (10));
    - ``RECENT``: ``SEQ^r``, the same with the last matches (Eq. (11));
    - ``NAIVE``: ``SEQ^n``, C-SPARQL's naive sequencing with ``timestamp()``: the latest
      match of each operand, compared by time (Eq. (9)).
    """

    UNRESTRICTED = "unrestricted"
    CHRONOLOGICAL = "chronological"
    RECENT = "recent"
    NAIVE = "naive"

    def __str__(self) -> str:
        return self.value


class ConsumptionPolicy(Enum):
    """Whether stream items that contributed to an answer are used again (RSEP-QL Sect. 4.4,
    Def. 8-10).

    - ``NONE``: ``P^u``, the full input at every evaluation (EP-SPARQL unrestricted);
    - ``CHRONOLOGICAL``: ``P^c``, the delta input plus the unused part of the previous input,
      with matches taken chronologically;
    - ``RECENT``: ``P^r``, the same with the most recent matches.
    """

    NONE = "none"
    CHRONOLOGICAL = "chronological"
    RECENT = "recent"

    def __str__(self) -> str:
        return self.value


class InputUnit(Enum):
    """What a consumption policy consumes (RSEP-QL Def. 8-10).

    - ``TRIPLE``: the definitions' sets: ``I_i(w_j) ⊆ SDS_{w_j}(t_i)`` and ``Δ_i(w_j) =
      SDS_{w_j}(t_i) ∖ SDS_{w_j}(t_{i-1})`` are sets of triples, so a consumed triple is gone
      from every item of the window that holds it, and a triple that arrives again while the
      window still holds it is not new (Def. 8-9 literally; the default);
    - ``OCCURRENCE``: the triple of one stream item ``(G_k, t_k)``, as Sect. 2 and Example
      11 describe consumption ("stream items that contribute to an answer", "the new coming
      triple (:b1 :q :c1)" at 10, which the set of Def. 9 does not count as new).
    """

    TRIPLE = "triple"
    OCCURRENCE = "occurrence"

    def __str__(self) -> str:
        return self.value


class EventPattern(Node):
    """An event pattern: evaluated over streams, it yields event mappings ``(μ, t1, t2)``
    (RSEP-QL Sect. 4.2; EP-SPARQL's solutions ``<μ, tα, tω>``; CQELS-CEP's mappings with
    intervals; SPAseq's ``(τ, Ω)``)."""

    @property
    @abstractmethod
    def variables(self) -> frozenset[str]:
        """The variables a match of this pattern may bind."""


def _vars(*items: GraphPatternRef | EventPattern) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for item in items:
        out |= item.variables
    return out


# RSEP-QL ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event(EventPattern):
    """RSEP-QL's basic event pattern ``(EVENT w P)`` (Sect. 3.3 (1)): the BGP ``P`` evaluated
    on each item ``(G_k, t_k)`` of window ``w``, one event mapping ``(μ, t_k, t_k)`` per
    solution (Sect. 4.2, "Basic Event Patterns")."""

    window: str
    pattern: GraphPatternRef

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class First(EventPattern):
    """RSEP-QL's ``(FIRST E)`` (Sect. 3.3 (2)): the event mappings of E that are first in
    the order ``≺`` of timestamps (Sect. 4.2, "Other Event Patterns")."""

    pattern: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class Last(EventPattern):
    """RSEP-QL's ``(LAST E)`` (Sect. 3.3 (2)): the event mappings of E that are last in
    the order ``≺`` (Sect. 4.2)."""

    pattern: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class Seq(EventPattern):
    """RSEP-QL's ``(E1 SEQ E2)`` (Sect. 3.3 (2)): for each match ``(μ2, t3, t4)`` of E2, the
    compatible matches of ``μ2(E1)`` within ``W^⊔[0, t3 - 1] • W``, joined into ``(μ1 ∪ μ2,
    t1, t4)`` (Eq. (7)).

    ``selection`` picks SEQ (unrestricted, Eq. (7)), ``SEQ^n`` (naive, Eq. (9)), ``SEQ^c``
    (chronological, Eq. (10)) or ``SEQ^r`` (recent, Eq. (11)); ``None`` takes the enclosing
    :class:`Match`'s, then the parameter ``selection``.
    """

    left: EventPattern
    right: EventPattern
    selection: SelectionPolicy | None = None

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)

    @classmethod
    def chain(cls, *patterns: EventPattern, selection: SelectionPolicy | None = None) -> Seq:
        """``E1 SEQ E2 SEQ … En``, nested to the left as ``rsepql.lark`` parses it."""
        if len(patterns) < 2:
            raise ValueError("SEQ needs at least two event patterns")
        left = cls(patterns[0], patterns[1], selection)
        for pattern in patterns[2:]:
            left = cls(left, pattern, selection)
        return left


@dataclass(frozen=True)
class Match(EventPattern):
    """RSEP-QL's event graph pattern ``(MATCH E)`` (Sect. 3.3): evaluated with the initial
    active window ``W^id``, it drops the time annotations and yields a bag of solution
    mappings, to be joined with graph patterns (Sect. 4.2, "Event Graph Pattern").

    ``selection`` is the default of the SEQs inside; ``consumption`` the policy function
    ``P`` with which the pattern is evaluated (Sect. 4.4, Def. 10); ``None`` takes the
    parameters ``selection`` and ``consumption``.
    """

    pattern: EventPattern
    selection: SelectionPolicy | None = None
    consumption: ConsumptionPolicy | None = None

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class Configuration:
    """One row of RSEP-QL's Table 1: how RSEP-QL captures an engine's sequencing.

    ``window`` is the kind of window the basic event patterns read (``LandmarkWindow``:
    ``W^λ``; ``TimeWindow``: ``W^τ``); ``selection`` the SEQ variant (``None``: the row has
    no SEQ); ``consumption`` the policy function.
    """

    name: str
    window: type[WindowFunction]
    selection: SelectionPolicy | None
    consumption: ConsumptionPolicy

    def apply(self, match: Match) -> Match:
        """``match`` under this configuration: its selection and consumption set."""
        has_seq = any(isinstance(node, Seq) for node in match.walk())
        if self.selection is None and has_seq:
            raise ValueError(f"{self.name} has no SEQ; the pattern has one")
        return replace(match, selection=self.selection, consumption=self.consumption)


EPSPARQL_UNRESTRICTED = Configuration(
    "EP-SPARQL unrestricted", LandmarkWindow, SelectionPolicy.UNRESTRICTED, ConsumptionPolicy.NONE
)
EPSPARQL_CHRONOLOGICAL = Configuration(
    "EP-SPARQL chronological",
    LandmarkWindow,
    SelectionPolicy.CHRONOLOGICAL,
    ConsumptionPolicy.CHRONOLOGICAL,
)
EPSPARQL_RECENT = Configuration(
    "EP-SPARQL recent", LandmarkWindow, SelectionPolicy.RECENT, ConsumptionPolicy.RECENT
)
CSPARQL_SEQ = Configuration(
    "C-SPARQL SEQ (timestamp)", TimeWindow, SelectionPolicy.NAIVE, ConsumptionPolicy.NONE
)
CSPARQL_TIME_WINDOW = Configuration(
    "C-SPARQL time-window", TimeWindow, None, ConsumptionPolicy.NONE
)
TABLE_1: tuple[Configuration, ...] = (
    EPSPARQL_UNRESTRICTED,
    EPSPARQL_CHRONOLOGICAL,
    EPSPARQL_RECENT,
    CSPARQL_SEQ,
    CSPARQL_TIME_WINDOW,
)


# EP-SPARQL -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamBgp(EventPattern):
    """EP-SPARQL's ``BGP(P)`` over a triple stream (Sect. 4.2): ``<μ, tα, tω>`` is a solution
    if the triples ``μ(P)`` occur in the stream, ``tα`` the earliest start and ``tω`` the
    latest end of those occurrences. Unlike RSEP-QL's :class:`Event`, one match may span
    several stream items. ``stream`` is ``None`` for EP-SPARQL's single input stream.

    ``pattern`` is a list of triple patterns (a group of triples blocks). ``binds`` are the
    ``BIND (e AS ?v)`` that follow them in their group, as ``(v, text of e)``: SPARQL 1.1's
    ``Extend`` of the BGP (sec. 18.2.2.6), which keeps each solution's interval (ETALIS's
    ``?v is e``); ``None`` when there are none."""

    pattern: GraphPatternRef
    stream: str | None = None
    binds: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        for name, _ in self.binds or ():
            check_variable(name)

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables | {name for name, _ in self.binds or ()}


@dataclass(frozen=True)
class SeqJoin(EventPattern):
    """EP-SPARQL's ``P1 SEQ P2`` ↦ ``SeqJoin(Ψ, Ψ')`` (Sect. 4.2): every compatible pair
    with ``tω < t'α``, the combination spanning ``[min tα, max tω]``."""

    left: EventPattern
    right: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class EqJoin(EventPattern):
    """EP-SPARQL's ``P1 EQUALS P2`` ↦ ``EqJoin(Ψ, Ψ')`` (Sect. 4.2): every compatible pair
    with ``tα = t'α`` and ``tω = t'ω`` (exactly simultaneous)."""

    left: EventPattern
    right: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class OptionalSeq(EventPattern):
    """EP-SPARQL's ``P1 OPTIONALSEQ P2`` ↦ ``SeqRightJoin(Ψ', Ψ, F)`` (Sect. 4.2).

    ``left`` is the *optional* earlier pattern ``Ψ'``, ``right`` the mandatory later one
    ``Ψ``: the result holds ``Filter(F, SeqJoin(Ψ', Ψ))`` and every solution of ``Ψ`` with no
    compatible earlier solution of ``Ψ'`` satisfying ``F`` (timewise monotonicity forbids
    the mirror image, a mandatory pattern followed by an optional one). ``filter`` is the
    text of ``F`` (``None``: true).
    """

    left: EventPattern
    right: EventPattern
    filter: str | None = None

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class EqualsOptional(EventPattern):
    """EP-SPARQL's ``P1 EQUALSOPTIONAL P2`` ↦ ``EqLeftJoin(Ψ, Ψ', F)`` (Sect. 4.2): ``left``
    is mandatory, ``right`` optional; the result holds ``Filter(F, EqJoin(Ψ, Ψ'))`` and every
    solution of ``Ψ`` with no compatible simultaneous solution of ``Ψ'`` satisfying ``F``."""

    left: EventPattern
    right: EventPattern
    filter: str | None = None

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class And(EventPattern):
    """EP-SPARQL's ``Join(Ψ, Ψ')`` of juxtaposed patterns (Sect. 4.2; ETALIS's AND): every
    compatible pair, spanning the smallest interval that covers both,
    ``[min(tα, t'α), max(tω, t'ω)]``."""

    left: EventPattern
    right: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class EventFilter(EventPattern):
    """EP-SPARQL's ``Filter(F, Ψ)`` (Sect. 4.2): the solutions for which ``μ(σ(F))`` is true,
    where ``σ`` replaces ``getDURATION()`` by ``tω - tα``, ``getSTARTTIME()`` by ``tα`` and
    ``getENDTIME()`` by ``tω``. ``expression`` is the SPARQL text of ``F``."""

    pattern: EventPattern
    expression: str

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


# CQELS-CEP -----------------------------------------------------------------------------

CepOperand = GraphPatternRef | EventPattern


class CepSeqKind(Enum):
    """Which CQELS-CEP operator a SEQ with at most one negated element denotes (Sect. 2.4,
    4.2, Eq. (5)-(8) and (12)-(15))."""

    SEQ = "SEQ"
    SEQ_WO = "SEQ_WO"
    NO_HEAD = "NO_HEAD"
    NO_TAIL = "NO_TAIL"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CepItem(Node):
    """One element of a CQELS-CEP SEQ: a graph pattern (in a triple sequence pattern), a
    window specification (in an event clause) or a nested SEQ, possibly negated (``!``)."""

    pattern: CepOperand
    negated: bool = False

    def __str__(self) -> str:
        return ("!" if self.negated else "") + str(self.pattern)


@dataclass(frozen=True)
class CepSeq(EventPattern):
    """CQELS-CEP's ``SEQ(P1, …, P_{i-1}, !P_i, P_{i+1}, …, P_ℓ)`` (Sect. 3.2): a sequence of
    at least two elements, at most one negated.

    On mappings with intervals (Sect. 4.2), ``SEQ(Ω1, Ω2)`` joins compatible pairs with
    ``t2 < t3`` into ``[t1, t4]``; a negated element in the middle is ``SEQ_WO`` (no compatible
    negative match in between), first is ``NO_HEAD``, last is ``NO_TAIL`` (no compatible
    negative match after the sequence up to the evaluation time ``t``). The n-ary form
    nests to the right, ``SEQ(W1, SEQ(W2, …, Wn))`` (Eq. (3), (10));
    ``rsep.algebra.passes.binarise_sequences`` makes that nesting explicit.
    """

    items: tuple[CepItem, ...]

    def __post_init__(self) -> None:
        if len(self.items) < 2:
            raise ValueError("a CQELS-CEP SEQ needs at least two elements")
        negated = sum(item.negated for item in self.items)
        if negated > 1:
            raise ValueError(f"a CQELS-CEP SEQ has at most one negated element, not {negated}")

    @classmethod
    def of(cls, *items: CepOperand | CepItem) -> CepSeq:
        """A SEQ of ``items``; a bare pattern is a positive element."""
        return cls(tuple(i if isinstance(i, CepItem) else CepItem(i) for i in items))

    @property
    def negated_index(self) -> int | None:
        """The position of the negated element, or ``None``."""
        for index, item in enumerate(self.items):
            if item.negated:
                return index
        return None

    @property
    def kind(self) -> CepSeqKind:
        """SEQ, SEQ_WO, NO_HEAD or NO_TAIL, from where the negated element is."""
        index = self.negated_index
        if index is None:
            return CepSeqKind.SEQ
        if index == 0:
            return CepSeqKind.NO_HEAD
        if index == len(self.items) - 1:
            return CepSeqKind.NO_TAIL
        return CepSeqKind.SEQ_WO

    @property
    def seq_wo(self) -> bool:
        """Whether a middle element is negated (``SEQ_WO``, Eq. (5), (12))."""
        return self.kind is CepSeqKind.SEQ_WO

    @property
    def no_head(self) -> bool:
        """Whether the first element is negated (``NO_HEAD``, Eq. (6), (13))."""
        return self.kind is CepSeqKind.NO_HEAD

    @property
    def no_tail(self) -> bool:
        """Whether the last element is negated (``NO_TAIL``, Eq. (7), (14))."""
        return self.kind is CepSeqKind.NO_TAIL

    @property
    def variables(self) -> frozenset[str]:
        return _vars(*(item.pattern for item in self.items if not item.negated))


@dataclass(frozen=True)
class CepWindow(EventPattern):
    """A CQELS-CEP window specification ``W = (s, ω, TSP)`` (Sect. 3.2): the triple sequence
    pattern ``TSP`` over the window ``ω`` on stream ``s``, time intervals kept (Eq. (9),
    (16)). ``name`` is the window's name (``WINDOW :W ON s [RANGE …]``)."""

    name: str
    stream: str
    window: WindowFunction
    pattern: CepOperand

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class Or(EventPattern):
    """CQELS-CEP's ``OR(Ω1, Ω2)`` (Sect. 4.2): the mappings with intervals of either; also
    EP-SPARQL's ``Union``."""

    left: EventPattern
    right: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


@dataclass(frozen=True)
class CepJoin(EventPattern):
    """CQELS-CEP's ``JOIN(Ω1, Ω2)`` (Sect. 4.2): compatible pairs whose intervals overlap,
    spanning their intersection ``[max(t1, t3), min(t2, t4)]`` (unlike ETALIS's AND,
    :class:`And`, which spans their hull). ``right`` may be a graph pattern over the
    background data (Eq. (1), (17))."""

    left: EventPattern
    right: CepOperand

    @property
    def variables(self) -> frozenset[str]:
        return _vars(self.left, self.right)


# SPAseq --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KbPattern(Node):
    """SPAseq's ``Graph (v, P_D)`` (Def. 4, 15): a graph pattern over the background
    knowledge base graph named ``graph``, joined with each matched event."""

    graph: str
    pattern: GraphPatternRef

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class Gpm(EventPattern):
    """A SPAseq graph pattern matching expression ``(u, P)`` (Def. 4, 7), named ``name`` in
    the query (``DEFINE GPM A ON S1 {...}``): ``P`` evaluated on each event ``(τ, G)`` of
    stream ``u``, giving ``(τ, ⟦P⟧_G)`` when not empty; ``graph_kb`` adds ``Graph (v, P_D)``
    (Def. 15)."""

    name: str
    stream: str
    pattern: GraphPatternRef
    graph_kb: KbPattern | None = None

    @property
    def variables(self) -> frozenset[str]:
        if self.graph_kb is None:
            return self.pattern.variables
        return self.pattern.variables | self.graph_kb.variables


@dataclass(frozen=True)
class Sequence(EventPattern):
    """A SPAseq sequence expression ``SEQ(a1 s1 a2 s2 … an)`` (Def. 4): steps and the event
    selection strategy between each two consecutive steps (``strategies[i]`` between
    ``steps[i]`` and ``steps[i+1]``; Def. 10-12). The grammar nests to the left
    (``SeqExp ::= SeqExp ',' Atom``); the NFA runs the flat list (Sect. 6.2)."""

    steps: tuple[EventPattern, ...]
    strategies: tuple[Strategy, ...]

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("a sequence needs at least one step")
        if len(self.strategies) != len(self.steps) - 1:
            raise ValueError(
                f"a sequence of {len(self.steps)} steps needs {len(self.steps) - 1} "
                f"strategies between them, not {len(self.strategies)}"
            )

    @classmethod
    def of(cls, *parts: EventPattern | Strategy) -> Sequence:
        """``Sequence.of(A, Strategy.SKIP_TILL_NEXT, KleenePlus(B), Strategy.STRICT, C)``."""
        steps = parts[0::2]
        strategies = parts[1::2]
        if not all(isinstance(s, EventPattern) for s in steps) or not all(
            isinstance(s, Strategy) for s in strategies
        ):
            raise ValueError("Sequence.of alternates steps and strategies: A, s1, B, s2, C")
        return cls(
            tuple(s for s in steps if isinstance(s, EventPattern)),
            tuple(s for s in strategies if isinstance(s, Strategy)),
        )

    @property
    def variables(self) -> frozenset[str]:
        return _vars(*self.steps)

    def __str__(self) -> str:
        out = _step_text(self.steps[0])
        for strategy, step in zip(self.strategies, self.steps[1:], strict=True):
            out += f"{strategy.symbol} {_step_text(step)}"
        return f"SEQ({out})"


def _step_text(step: EventPattern) -> str:
    if isinstance(step, Gpm):
        return step.name
    if isinstance(step, KleenePlus):
        return _step_text(step.step) + "+"
    if isinstance(step, Optional):
        return _step_text(step.step) + "?"
    if isinstance(step, Negation):
        return "!" + _step_text(step.step)
    if isinstance(step, Conjunction):
        return "(" + " & ".join(_step_text(s) for s in step.operands) + ")"
    if isinstance(step, Disjunction):
        return "(" + " | ".join(_step_text(s) for s in step.operands) + ")"
    return type(step).__name__


@dataclass(frozen=True)
class KleenePlus(EventPattern):
    """SPAseq's Kleene+ ``(u, P)+`` (Sect. 4.2.1, Def. 13-14): one or more events matching
    the step.

    ``strategy`` is the contiguity between iterations. ``None`` follows SPAseq's automaton
    (Fig. 10): the strategy before the Kleene step also governs its iterations (strict
    contiguity when the step is first). The definitions disagree: Def. 13 (standalone)
    iterates with ``;``, Def. 14 (in a sequence) with ``,``; give ``strategy`` to choose.
    """

    step: EventPattern
    strategy: Strategy | None = None

    @property
    def variables(self) -> frozenset[str]:
        return self.step.variables


@dataclass(frozen=True)
class Conjunction(EventPattern):
    """SPAseq's conjunction ``Ψ1 & Ψ2`` (Def. 8): events matching every operand with the
    same timestamp, their mappings joined."""

    operands: tuple[EventPattern, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("a conjunction needs at least two operands")

    @property
    def variables(self) -> frozenset[str]:
        return _vars(*self.operands)


@dataclass(frozen=True)
class Disjunction(EventPattern):
    """SPAseq's disjunction ``Ψ1 | Ψ2`` (Def. 9): the matches of either operand."""

    operands: tuple[EventPattern, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("a disjunction needs at least two operands")

    @property
    def variables(self) -> frozenset[str]:
        return _vars(*self.operands)


def check_bop(node: EventPattern, what: str, error: type[UserError] = UserError) -> EventPattern:
    """``node`` if it is a BOp expression (SPAseq Def. 4: a GPM, or a conjunction or
    disjunction of BOps, Def. 8-9); else ``error`` saying that ``what`` applies to one."""
    if isinstance(node, Gpm):
        return node
    if isinstance(node, Conjunction | Disjunction):
        for operand in node.operands:
            check_bop(operand, what, error)
        return node
    raise error(
        f"{what} applies to a graph pattern matching expression (GPM) or a conjunction or "
        f"disjunction of them (SPAseq Def. 4), not to {type(node).__name__}"
    )


@dataclass(frozen=True)
class Negation(EventPattern):
    """SPAseq's negation ``(u, P)!`` (App. B.0.1, C.4): no matching event where the step
    stands. SPAseq leaves its semantics open; rsep reads it as CQELS-CEP's SEQ_WO, NO_HEAD
    and NO_TAIL: no compatible matching event between the neighbouring steps (before the
    next step when first; until the window ends when last). It binds no variable."""

    step: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class Optional(EventPattern):
    """SPAseq's optional ``(u, P)?`` (App. B.0.2, C.4): zero or one matching event,
    ``⟦(u, P)?⟧ = ⟦(u, P)⟧ ∪ ⟦(u, P)!⟧``."""

    step: EventPattern

    @property
    def variables(self) -> frozenset[str]:
        return self.step.variables


@dataclass(frozen=True)
class Within(EventPattern):
    """SPAseq's ``WITHIN ω`` (Def. 4, 16; Sect. 4.2.4): every match lies within ``duration``
    ms; Def. 16 evaluates the sequence on tumbling windows ``[t + kω, t + (k+1)ω]``, the
    NFA drops runs older than ω (Algorithm 2, lines 3-5). Also ETALIS's ``WITHIN d`` after
    an EP-SPARQL pattern: the solutions with ``tω - tα ≤ d``."""

    pattern: EventPattern
    duration: int

    def __post_init__(self) -> None:
        if self.duration <= 0:
            raise ValueError(f"WITHIN needs a positive duration, not {self.duration} ms")

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


@dataclass(frozen=True)
class PartitionBy(EventPattern):
    """``PARTITION BY ?v …``: matches are sought separately for each value of the
    variables ``by``, which the pattern must bind (SPAseq's stateful shared variables,
    Sect. 7.2.1; DESIGN.md, "Partition event matching")."""

    pattern: EventPattern
    by: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.by:
            raise ValueError("PARTITION BY needs at least one variable")
        for name in self.by:
            check_variable(name)
        missing = [v for v in self.by if v not in self.pattern.variables]
        if missing:
            raise ValueError(
                "PARTITION BY variables the pattern does not bind: "
                + ", ".join("?" + v for v in missing)
            )

    @property
    def variables(self) -> frozenset[str]:
        return self.pattern.variables


def unwrap_bounds(pattern: EventPattern) -> tuple[EventPattern, int | None, tuple[str, ...]]:
    """A SPAseq sequence expression without its ``WITHIN`` and ``PARTITION BY`` (Def. 4,
    16): ``(expression, duration or None, key variables)``; a ``ValueError`` when either
    is given twice."""
    within: int | None = None
    partition: tuple[str, ...] = ()
    while isinstance(pattern, Within | PartitionBy):
        if isinstance(pattern, Within):
            if within is not None:
                raise ValueError("WITHIN is given twice")
            within = pattern.duration
        else:
            if partition:
                raise ValueError("PARTITION BY is given twice")
            partition = pattern.by
        pattern = pattern.pattern
    return pattern, within, partition
