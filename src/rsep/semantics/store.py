"""SPARQL over one RDF graph for the oracle: :class:`~rsep.rdf.sparql.GraphMatcher` and
:class:`~rsep.rdf.sparql.LiteralForms` live in ``rsep.rdf`` (the engine uses them too) and
are named here under the oracle's own module."""

from __future__ import annotations

from rsep.rdf.sparql import GraphMatcher, LiteralForms

__all__ = ["GraphMatcher", "LiteralForms"]
