"""RDF terms (RSP-QL Def. 1): pyoxigraph's immutable terms, plus the vocabularies rsep uses.

Terms travel between layers and processes in N-Triples syntax (``str(term)``), the form
the JSON Lines results and the columnar event store use.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

Term = NamedNode | BlankNode | Literal
Subject = NamedNode | BlankNode

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
PROV = "http://www.w3.org/ns/prov#"
RSEP = "http://w3id.org/rsep/vocab#"

XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_FLOAT = XSD + "float"
XSD_DOUBLE = XSD + "double"
XSD_DATETIME = XSD + "dateTime"
RDF_LANG_STRING = RDF + "langString"
"""Datatype IRIs (XSD 1.1 Part 2 sec. 3; RDF 1.1 Concepts sec. 3.3), as strings: what
``Literal.datatype.value`` gives."""

PROV_GENERATED_AT = NamedNode(PROV + "generatedAtTime")
PROV_STARTED_AT = NamedNode(PROV + "startedAtTime")
PROV_ENDED_AT = NamedNode(PROV + "endedAtTime")
RSEP_STREAM = NamedNode(RSEP + "stream")
"""``<g> rsep:stream <s>`` in a default graph puts the event of graph ``g`` on stream ``s``."""

_PROBE_S = "<urn:rsep:s>"
_PROBE_P = "<urn:rsep:p>"


def parse_term(text: str) -> Term:
    """Read one term in N-Triples syntax (``<iri>``, ``_:b``, ``"lex"@en``, ``"1"^^<dt>``)."""
    quads = list(
        parse(input=f"{_PROBE_S} {_PROBE_P} {text} .".encode(), format=RdfFormat.N_TRIPLES)
    )
    if len(quads) != 1:
        raise ValueError(f"not one N-Triples term: {text!r}")
    obj = quads[0].object
    if not isinstance(obj, NamedNode | BlankNode | Literal):
        raise ValueError(f"quoted triples are not supported: {text!r}")
    return obj


def parse_terms(texts: Sequence[str]) -> list[Term]:
    """Read many terms in N-Triples syntax at once (one pyoxigraph document: equal texts
    give equal terms), in order; a ``ValueError`` if one is not an IRI, blank node or
    literal, pyoxigraph's ``SyntaxError`` if one does not parse."""
    if not texts:
        return []
    data = "\n".join(f"{_PROBE_S} {_PROBE_P} {text} ." for text in texts).encode()
    out = [quad.object for quad in parse(input=data, format=RdfFormat.N_TRIPLES)]
    if len(out) != len(texts) or not all(
        isinstance(term, NamedNode | BlankNode | Literal) for term in out
    ):
        raise ValueError("not one IRI, blank node or literal per text")
    return out


def to_nt(term: Term) -> str:
    """The N-Triples form of a term (the inverse of :func:`parse_term`)."""
    return str(term)
