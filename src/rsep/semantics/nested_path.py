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

The evaluation is a pure function of the path and a static graph, shared with the engine,
so it lives in :mod:`rsep.algebra.paths` (one piece of code per concept, DESIGN.md); this
module names it under the oracle's own package.
"""

from __future__ import annotations

from rsep.algebra.paths import (
    PathGraph,
    Relation,
    evaluate_path,
    match_path_triple,
    match_path_triples,
)

__all__ = ["PathGraph", "Relation", "evaluate_path", "match_path_triple", "match_path_triples"]
