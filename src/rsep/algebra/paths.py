"""Nested regular expressions: CQELS-CEP's property paths with nSPARQL's nesting and axes.

CQELS-CEP (seed 001, Sect. 2.3 and 3.1) extends SPARQL 1.1 property paths with nSPARQL's
nested regular expressions (Pérez, Arenas, Gutierrez, "nSPARQL: A navigational language for
RDF", J. Web Sem. 8(4), 2010; the paper's reference [16]):

    exp ::= axis | axis::a | axis::[exp] | exp/exp | exp|exp | exp* | exp+
    axis ∈ {self, next, next⁻¹, edge, edge⁻¹, node, node⁻¹}

and with one more path element, ``elt ::= elt [elt]``, written in Example 6 as the step
``[:means :subway]`` of ``?s (^:beg/[:means :subway]/:end)+ :c``. pyoxigraph evaluates
SPARQL 1.1 paths only, so the plan carries a path that nests or uses an axis as a tree
(:class:`PathTriple`), evaluated here as a binary relation over a static graph
(:func:`evaluate_path`, :func:`match_path_triples`), the one evaluation the oracle
(``rsep.semantics.nested_path`` re-exports it) and the engine share.

The tree keeps both vocabularies under their own names: the SPARQL 1.1 algebra's
``link``, ``inv``, ``seq``, ``alt``, ``ZeroOrMorePath``/``OneOrMorePath``/``ZeroOrOnePath``
and ``NPS`` (sec. 18.2.2.4: :class:`Link`, :class:`Inverse`, :class:`PathSequence`,
:class:`Alternative`, :class:`Repeat`, :class:`NegatedSet`), nSPARQL's axis steps
(:class:`Axis`) and CQELS-CEP's nested test (:class:`Nested`). ``str()`` prints CQELS-CEP
syntax with full IRIs, which the ``cqelscep`` grammar reads back.

Every node is a frozen dataclass: equality and hashing are structural.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from pyoxigraph import Literal, NamedNode, Triple, Variable

from rsep.rdf.sparql import Mu
from rsep.rdf.terms import Term

__all__ = [
    "AXES",
    "Alternative",
    "Axis",
    "Link",
    "NegatedSet",
    "Nested",
    "PathEnd",
    "PathExpr",
    "PathGraph",
    "PathSequence",
    "PathTriple",
    "Relation",
    "Repeat",
    "evaluate_path",
    "is_nested",
    "match_path_triple",
    "match_path_triples",
]

AXES = ("self", "next", "edge", "node")
"""nSPARQL's navigation axes (seed 001, Sect. 2.3; nSPARQL, Sect. 3)."""

PathEnd = Variable | NamedNode | Literal
"""The subject or object of a path triple: a variable, an IRI or a literal (``sp, op ∈ I ∪
L ∪ V``, seed 001, Sect. 2.3, extended triple patterns)."""

# Precedence of the SPARQL 1.1 path grammar (sec. 19.8, [88]-[94]), loosest first: a node
# is printed in parentheses where its context needs a tighter one.
_ALTERNATIVE, _SEQUENCE, _ELT_OR_INVERSE, _ELT, _PRIMARY = range(5)


class PathExpr(ABC):
    """A nested regular expression (seed 001, Sect. 2.3; nSPARQL, Sect. 3)."""

    @property
    @abstractmethod
    def precedence(self) -> int:
        """How tightly the printed form binds (SPARQL 1.1 sec. 19.8, [88]-[94])."""

    @abstractmethod
    def text(self) -> str:
        """The expression in CQELS-CEP syntax, full IRIs."""

    def operand(self, context: int) -> str:
        """The text of this node as an operand of a node of precedence ``context``."""
        inner = self.text()
        return f"({inner})" if self.precedence < context else inner

    def __str__(self) -> str:
        return self.text()

    def children(self) -> tuple[PathExpr, ...]:
        """The sub-expressions, in order."""
        return ()

    def walk(self) -> tuple[PathExpr, ...]:
        """This node and all its descendants, pre-order."""
        found: list[PathExpr] = [self]
        for child in self.children():
            found.extend(child.walk())
        return tuple(found)


@dataclass(frozen=True)
class Link(PathExpr):
    """An IRI as a path, SPARQL's ``link(iri)``: one edge labelled ``iri`` forward; nSPARQL's
    ``next::iri``."""

    iri: NamedNode

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        return str(self.iri)


@dataclass(frozen=True)
class Inverse(PathExpr):
    """``^path``, SPARQL's ``inv(path)``: the pairs of ``path`` reversed."""

    path: PathExpr

    @property
    def precedence(self) -> int:
        return _ELT_OR_INVERSE

    def text(self) -> str:
        return "^" + self.path.operand(_ELT)

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


@dataclass(frozen=True)
class PathSequence(PathExpr):
    """``p1/p2/…``, SPARQL's ``seq`` and nSPARQL's ``exp/exp``: composition of relations."""

    steps: tuple[PathExpr, ...]

    def __post_init__(self) -> None:
        if len(self.steps) < 2:
            raise ValueError("a path sequence needs at least two steps")

    @property
    def precedence(self) -> int:
        return _SEQUENCE

    def text(self) -> str:
        return "/".join(step.operand(_ELT_OR_INVERSE) for step in self.steps)

    def children(self) -> tuple[PathExpr, ...]:
        return self.steps


@dataclass(frozen=True)
class Alternative(PathExpr):
    """``p1|p2|…``, SPARQL's ``alt`` and nSPARQL's ``exp|exp``: union of relations."""

    options: tuple[PathExpr, ...]

    def __post_init__(self) -> None:
        if len(self.options) < 2:
            raise ValueError("a path alternative needs at least two options")

    @property
    def precedence(self) -> int:
        return _ALTERNATIVE

    def text(self) -> str:
        return "|".join(option.operand(_SEQUENCE) for option in self.options)

    def children(self) -> tuple[PathExpr, ...]:
        return self.options


@dataclass(frozen=True)
class Repeat(PathExpr):
    """``p*``, ``p+`` or ``p?``: nSPARQL's ``exp*`` (and ``exp+``), SPARQL's
    ``ZeroOrMorePath``, ``OneOrMorePath`` and ``ZeroOrOnePath``."""

    path: PathExpr
    modifier: str

    def __post_init__(self) -> None:
        if self.modifier not in {"*", "+", "?"}:
            raise ValueError(f"not a path modifier: {self.modifier!r}")

    @property
    def precedence(self) -> int:
        return _ELT

    def text(self) -> str:
        return self.path.operand(_PRIMARY) + self.modifier

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


@dataclass(frozen=True)
class NegatedSet(PathExpr):
    """``!(a|^b|…)``, SPARQL's negated property set ``NPS``: one edge forward whose label is
    none of ``forward``, or one edge backward whose label is none of ``backward``."""

    forward: tuple[NamedNode, ...] = ()
    backward: tuple[NamedNode, ...] = ()

    def __post_init__(self) -> None:
        if not self.forward and not self.backward:
            raise ValueError("a negated property set names at least one IRI")

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        items = [str(iri) for iri in self.forward] + ["^" + str(iri) for iri in self.backward]
        return "!" + (items[0] if len(items) == 1 else "(" + "|".join(items) + ")")


@dataclass(frozen=True)
class Axis(PathExpr):
    """An nSPARQL axis step (seed 001, Sect. 2.3 and Table 1; nSPARQL, Sect. 3): ``axis``,
    ``axis::a`` (``label``), ``axis::[exp]`` (``nested``), and ``axis::a[exp]`` (both:
    ``axis::a/self::[exp]``, as in Example 5's ``next⁻¹::beg[next::means/self::subway]``).
    ``inverse`` is ``axis⁻¹``, written ``next-1``."""

    axis: str
    inverse: bool = False
    label: NamedNode | None = None
    nested: PathExpr | None = None

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ValueError(f"not an nSPARQL axis: {self.axis!r} (one of {', '.join(AXES)})")

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        out = self.axis + ("-1" if self.inverse else "")
        if self.label is None and self.nested is None:
            return out
        out += "::"
        if self.label is not None:
            out += str(self.label)
        if self.nested is not None:
            out += f"[{self.nested.text()}]"
        return out

    def children(self) -> tuple[PathExpr, ...]:
        return () if self.nested is None else (self.nested,)


@dataclass(frozen=True)
class Nested(PathExpr):
    """CQELS-CEP's nested test ``[path term]`` (seed 001, Sect. 3.1, ``elt ::= elt [elt]``):
    the nodes from which ``path`` leads somewhere (to ``term`` when it is given), staying
    there: nSPARQL's ``self::[exp]`` with ``exp = path`` (``path/self::term``). Example 6's
    ``[:means :subway]`` is Example 5's ``self::[next::means/self::subway]``."""

    path: PathExpr
    term: NamedNode | Literal | None = None

    @property
    def precedence(self) -> int:
        return _PRIMARY

    def text(self) -> str:
        term = "" if self.term is None else " " + str(self.term)
        return f"[{self.path.text()}{term}]"

    def children(self) -> tuple[PathExpr, ...]:
        return (self.path,)


def is_nested(path: PathExpr) -> bool:
    """Whether ``path`` uses what SPARQL 1.1 lacks: a nested test or an nSPARQL axis."""
    return any(isinstance(node, Axis | Nested) for node in path.walk())


@dataclass(frozen=True)
class PathTriple:
    """An extended triple pattern ``(sp, exp, op)`` (seed 001, Sect. 2.3): the pairs of
    ``[[exp]]_G`` whose ends match ``subject`` and ``object``."""

    subject: PathEnd
    path: PathExpr
    object: PathEnd

    @property
    def variables(self) -> frozenset[str]:
        """The variables of the two ends, without ``?``."""
        return frozenset(
            end.value for end in (self.subject, self.object) if isinstance(end, Variable)
        )

    def __str__(self) -> str:
        return f"{self.subject} {self.path.text()} {self.object} ."


# Evaluation: nested regular expressions over a static graph, as binary relations ------------
#
# nSPARQL (Pérez, Arenas, Gutierrez, J. Web Sem. 8(4), 2010, Sect. 3; seed 001, Sect. 2.3,
# Table 1), with voc(G) every term of G in any position:
#
# - [[self]]_G = {(x, x) | x ∈ voc(G)}; [[self::a]]_G = {(a, a)};
# - [[next]]_G = {(x, y) | ∃z (x, z, y) ∈ G}; [[next::a]]_G = {(x, y) | (x, a, y) ∈ G};
# - [[edge]]_G = {(x, y) | ∃z (x, y, z) ∈ G}; [[edge::a]]_G = {(x, y) | (x, y, a) ∈ G};
# - [[node]]_G = {(x, y) | ∃z (z, x, y) ∈ G}; [[node::a]]_G = {(x, y) | (a, x, y) ∈ G};
# - [[axis⁻¹]]_G, [[axis⁻¹::a]]_G, [[axis⁻¹::[exp]]]_G: the forward pairs reversed;
# - [[self::[exp]]]_G = {(x, x) | x ∈ voc(G), ∃z (x, z) ∈ [[exp]]_G};
#   [[next::[exp]]]_G = {(x, y) | ∃z, w (x, z, y) ∈ G, (z, w) ∈ [[exp]]_G} (edge, node alike);
# - [[exp1/exp2]]_G = [[exp1]]_G ∘ [[exp2]]_G; [[exp1|exp2]]_G = [[exp1]]_G ∪ [[exp2]]_G;
#   [[exp*]]_G = [[self]]_G ∪ [[exp]]_G ∪ [[exp/exp]]_G ∪ …; [[exp+]]_G without [[self]]_G.
#
# The SPARQL 1.1 forms CQELS-CEP writes (Example 6) read into the same relations: an IRI p is
# next::p, ^e the reversed relation, e? is self | e (nSPARQL has no ?), !(p|^q) the edges
# whose label is not listed (SPARQL 1.1 sec. 9.1); the nested test [e t] is
# self::[e/self::t] and axis::a[e] is axis::a/self::[e] (Example 5 against Example 6).
# Relations are sets, as nSPARQL defines them.

Relation = frozenset[tuple[Term, Term]]
"""A binary relation over the terms of a graph: the value ``[[exp]]_G``."""


@dataclass(frozen=True)
class PathGraph:
    """An RDF graph ``G`` as nSPARQL navigates it: its triples and its vocabulary."""

    triples: frozenset[Triple]

    @classmethod
    def of(cls, triples: Iterable[Triple]) -> PathGraph:
        """The graph of ``triples``."""
        return cls(frozenset(triples))

    @cached_property
    def vocabulary(self) -> frozenset[Term]:
        """``voc(G)``: every term in a subject, predicate or object position."""
        found: set[Term] = set()
        for triple in self.triples:
            found.update(_terms(triple))
        return frozenset(found)

    @cached_property
    def identity(self) -> Relation:
        """``[[self]]_G``."""
        return frozenset((x, x) for x in self.vocabulary)


def _terms(triple: Triple) -> tuple[Term, Term, Term]:
    s, p, o = triple.subject, triple.predicate, triple.object
    assert not isinstance(s, Triple) and not isinstance(o, Triple), "RDF-star is not supported"
    return (s, p, o)


def _inverse(relation: Relation) -> Relation:
    """``{(x, y) | (y, x) ∈ relation}``."""
    return frozenset((y, x) for x, y in relation)


def _compose(left: Relation, right: Relation) -> Relation:
    """``[[exp1/exp2]]``: ``{(x, y) | ∃z (x, z) ∈ left, (z, y) ∈ right}``."""
    following: dict[Term, set[Term]] = {}
    for z, y in right:
        following.setdefault(z, set()).add(y)
    return frozenset((x, y) for x, z in left for y in following.get(z, ()))


def _closure(relation: Relation) -> Relation:
    """``[[exp+]] = [[exp]] ∪ [[exp/exp]] ∪ …``: the transitive closure, by iterating
    ``R ∪ R/step`` to its fixpoint (a finite graph has finitely many pairs)."""
    closed = set(relation)
    frontier = set(relation)
    while frontier:
        found = _compose(frozenset(frontier), relation) - closed
        closed |= found
        frontier = set(found)
    return frozenset(closed)


def _domain(relation: Relation) -> frozenset[Term]:
    """``{x | ∃z (x, z) ∈ relation}``: where a nested expression leads somewhere."""
    return frozenset(x for x, _ in relation)


def _axis(axis: str, graph: PathGraph, label: Term | None) -> Relation:
    """``[[axis]]_G`` and ``[[axis::a]]_G`` for ``next``, ``edge`` and ``node`` (nSPARQL,
    Sect. 3; seed 001, Table 1): a triple ``(s, p, o)`` read as a step between two of its
    positions, the third being the label."""
    pairs: set[tuple[Term, Term]] = set()
    for triple in graph.triples:
        s, p, o = _terms(triple)
        start, through, end = {"next": (s, p, o), "edge": (s, o, p), "node": (p, s, o)}[axis]
        if label is None or through == label:
            pairs.add((start, end))
    return frozenset(pairs)


def _nested_axis(axis: str, graph: PathGraph, test: Relation) -> Relation:
    """``[[axis::[exp]]]_G`` (nSPARQL, Sect. 3): the steps of ``axis`` whose label ``z`` has
    some ``(z, w) ∈ [[exp]]_G``; for ``self``, the nodes of ``voc(G)`` that have one."""
    starts = _domain(test)
    if axis == "self":
        return frozenset((x, x) for x in graph.vocabulary if x in starts)
    pairs: set[tuple[Term, Term]] = set()
    for triple in graph.triples:
        s, p, o = _terms(triple)
        start, through, end = {"next": (s, p, o), "edge": (s, o, p), "node": (p, s, o)}[axis]
        if through in starts:
            pairs.add((start, end))
    return frozenset(pairs)


def _axis_step(step: Axis, graph: PathGraph) -> Relation:
    """An nSPARQL axis step: ``axis``, ``axis::a``, ``axis::[exp]``, or ``axis::a[exp]``
    read as ``axis::a/self::[exp]`` (seed 001, Example 5 against Example 6)."""
    if step.label is not None and step.nested is not None:
        labelled = Axis(step.axis, step.inverse, step.label)
        return _compose(evaluate_path(labelled, graph), evaluate_path(Nested(step.nested), graph))
    if step.nested is not None:
        relation = _nested_axis(step.axis, graph, evaluate_path(step.nested, graph))
    elif step.axis == "self":
        relation = graph.identity if step.label is None else frozenset({(step.label, step.label)})
    else:
        relation = _axis(step.axis, graph, step.label)
    # self⁻¹ is self: the identity is its own inverse (nSPARQL lists no self⁻¹)
    return _inverse(relation) if step.inverse else relation


def _negated(path: NegatedSet, graph: PathGraph) -> Relation:
    """``!(a|^b)`` (SPARQL 1.1 sec. 9.1, 18.2.2.4 ``NPS``): forward edges whose label is not
    in ``forward``, and backward edges whose label is not in ``backward``."""
    pairs: set[tuple[Term, Term]] = set()
    for triple in graph.triples:
        s, p, o = _terms(triple)
        if path.forward and p not in path.forward:
            pairs.add((s, o))
        if path.backward and p not in path.backward:
            pairs.add((o, s))
    return frozenset(pairs)


def evaluate_path(path: PathExpr, graph: PathGraph) -> Relation:
    """``[[exp]]_G``: the pairs ``(x, y)`` such that ``y`` is reachable from ``x`` in ``G``
    by a path that conforms to ``exp`` (nSPARQL, Sect. 3; seed 001, Sect. 2.3, Table 1)."""
    if isinstance(path, Axis):
        return _axis_step(path, graph)
    if isinstance(path, Link):
        return _axis("next", graph, path.iri)
    if isinstance(path, Inverse):
        return _inverse(evaluate_path(path.path, graph))
    if isinstance(path, PathSequence):
        relation = evaluate_path(path.steps[0], graph)
        for step in path.steps[1:]:
            relation = _compose(relation, evaluate_path(step, graph))
        return relation
    if isinstance(path, Alternative):
        return frozenset().union(*(evaluate_path(option, graph) for option in path.options))
    if isinstance(path, Repeat):
        inner = evaluate_path(path.path, graph)
        if path.modifier == "+":
            return _closure(inner)
        if path.modifier == "*":
            return graph.identity | _closure(inner)
        return graph.identity | inner  # ?: self | exp
    if isinstance(path, Nested):
        test = evaluate_path(path.path, graph)
        if path.term is not None:  # path/self::term
            test = _compose(test, frozenset({(path.term, path.term)}))
        return _nested_axis("self", graph, test)
    if isinstance(path, NegatedSet):
        return _negated(path, graph)
    raise TypeError(f"unknown path expression {type(path).__name__}")


def _bind(end: PathEnd, term: Term, mapping: dict[str, Term]) -> bool:
    """Match one end of a path triple against ``term``, extending ``mapping``."""
    if isinstance(end, Variable):
        known = mapping.get(end.value)
        if known is None:
            mapping[end.value] = term
            return True
        return known == term
    assert isinstance(end, NamedNode | Literal)
    return end == term


def match_path_triple(triple: PathTriple, graph: PathGraph) -> list[Mu]:
    """The mappings of an extended triple pattern ``(sp, exp, op)`` over ``G`` (seed 001,
    Sect. 2.3): one ``μ`` with ``dom(μ) = var({sp, op})`` for each ``(x, y) ∈ [[exp]]_G``
    with ``μ(sp) = x`` and ``μ(op) = y``; a set, in a stable order."""
    found: set[Mu] = set()
    for x, y in evaluate_path(triple.path, graph):
        mapping: dict[str, Term] = {}
        if _bind(triple.subject, x, mapping) and _bind(triple.object, y, mapping):
            found.add(Mu(mapping))
    return sorted(found, key=repr)


def match_path_triples(triples: Iterable[PathTriple], graph: PathGraph) -> list[Mu]:
    """The join of the mappings of several extended triple patterns over ``G`` (a basic
    pattern's triples join, SPARQL 1.1 sec. 18.5); with none, the one empty mapping."""
    joined = [Mu()]
    for triple in triples:
        found = match_path_triple(triple, graph)
        joined = [a.join(b) for a in joined for b in found if a.compatible(b)]
    return joined
