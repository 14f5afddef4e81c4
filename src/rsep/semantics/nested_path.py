"""Nested regular expressions over an RDF graph, as binary relations (nSPARQL).

CQELS-CEP (seed 001, Sect. 2.3) adopts nSPARQL's nested regular expressions (Pérez,
Arenas, Gutierrez, "nSPARQL: A navigational language for RDF", J. Web Sem. 8(4), 2010,
Sect. 3; the paper's reference [16]; its Table 1 restates part of them). The evaluation of
an expression ``exp`` over a graph ``G`` is the binary relation ``[[exp]]_G``: the pairs
``(x, y)`` such that ``y`` is reached from ``x`` by a path that conforms to ``exp``. With
``voc(G)`` the terms that occur in ``G`` (subjects, predicates and objects):

- ``[[self]]_G = {(x, x) | x ∈ voc(G)}``; ``[[self::a]]_G = {(a, a)}``;
- ``[[next]]_G = {(x, y) | ∃z (x, z, y) ∈ G}``; ``[[next::a]]_G = {(x, y) | (x, a, y) ∈ G}``;
- ``[[edge]]_G = {(x, y) | ∃z (x, y, z) ∈ G}``; ``[[edge::a]]_G = {(x, y) | (x, y, a) ∈ G}``;
- ``[[node]]_G = {(x, y) | ∃z (z, x, y) ∈ G}``; ``[[node::a]]_G = {(x, y) | (a, x, y) ∈ G}``;
- ``[[axis⁻¹]]_G = {(x, y) | (y, x) ∈ [[axis]]_G}``, the same for ``axis⁻¹::a`` and
  ``axis⁻¹::[exp]``;
- ``[[self::[exp]]]_G = {(x, x) | x ∈ voc(G), ∃z (x, z) ∈ [[exp]]_G}``;
  ``[[next::[exp]]]_G = {(x, y) | ∃z, w (x, z, y) ∈ G, (z, w) ∈ [[exp]]_G}``;
  ``[[edge::[exp]]]_G = {(x, y) | ∃z, w (x, y, z) ∈ G, (z, w) ∈ [[exp]]_G}``;
  ``[[node::[exp]]]_G = {(x, y) | ∃z, w (z, x, y) ∈ G, (z, w) ∈ [[exp]]_G}``;
- ``[[exp1/exp2]]_G = {(x, y) | ∃z (x, z) ∈ [[exp1]]_G, (z, y) ∈ [[exp2]]_G}``;
  ``[[exp1|exp2]]_G = [[exp1]]_G ∪ [[exp2]]_G``;
  ``[[exp*]]_G = [[self]]_G ∪ [[exp]]_G ∪ [[exp/exp]]_G ∪ …``; ``[[exp+]]_G = [[exp]]_G ∪
  [[exp/exp]]_G ∪ …``.

CQELS-CEP writes these in SPARQL 1.1 syntax (Example 6), so the SPARQL 1.1 path forms are
read into the same relations: an IRI ``p`` is ``next::p``, ``^e`` the reversed relation,
``e?`` is ``self | e`` (nSPARQL has no ``?``), ``!(p|^q)`` the edges whose label is not
listed (SPARQL 1.1 sec. 9.1); the nested test ``[e t]`` is ``self::[e/self::t]`` and
``axis::a[e]`` is ``axis::a/self::[e]`` (Example 5 against Example 6). Relations are sets,
as nSPARQL defines them (SPARQL 1.1's non-recursive paths give bags).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from pyoxigraph import Literal, NamedNode, Triple, Variable

from rsep.algebra.paths import (
    Alternative,
    Axis,
    Inverse,
    Link,
    NegatedSet,
    Nested,
    PathEnd,
    PathExpr,
    PathSequence,
    PathTriple,
    Repeat,
)
from rsep.rdf.terms import Term
from rsep.semantics.event_mapping import Mu

__all__ = ["PathGraph", "Relation", "evaluate_path", "match_path_triple", "match_path_triples"]

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
