"""Terms and triples read from their canonical N-Triples text, each distinct text once.

Line-based stores of RDF (N-Quads files, the columnar event store's ``s``, ``p``, ``o``
and ``event_id`` columns) repeat the same texts: a company, a predicate, a price. Parsing
each line with pyoxigraph builds Python objects per term, which costs more than the parse
itself (DESIGN.md, Performance stance). Here each distinct text is parsed once, the new
texts of a batch in one pyoxigraph call, and kept in a bounded cache; so repeated triples
share one ``Triple``. A text is taken only if it reads back identically
(``str(triple)``): then it is the canonical serialisation of that triple, and what a
reader gets is exactly what pyoxigraph's own parse gives; anything else is left to the
caller's general path.
"""

from __future__ import annotations

import re
from typing import Any

from pyoxigraph import BlankNode, NamedNode, RdfFormat, Triple, parse

from rsep.rdf.event import EventId

CACHE_LIMIT = 1 << 17
"""Distinct texts kept per cache (a cache is emptied when it would grow past this)."""

_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?")
"""Blank node labels that pyoxigraph's parsers and ``BlankNode`` read alike (the
constructor also takes labels a parser splits, such as ``a:b``)."""


def canonical_triples(lines: list[str]) -> list[Triple] | None:
    """The triples of N-Triples lines (each ending in ``" ."``), parsed in one batch, or
    ``None`` unless each line is exactly the canonical form of one triple."""
    if not lines:
        return []
    data = "\n".join(lines).encode()
    try:
        triples = [quad.triple for quad in parse(input=data, format=RdfFormat.N_TRIPLES)]
    except SyntaxError:
        return None
    if len(triples) != len(lines):
        return None
    for triple, line in zip(triples, lines, strict=True):
        if f"{triple} ." != line:
            return None
    return triples


def parse_missing(
    cache: dict[str, Any], keys: list[str], line: str
) -> list[tuple[str, Triple]] | None:
    """The texts of ``keys`` that ``cache`` lacks, each with the triple of its N-Triples
    line ``line.format(text)``, or ``None`` if one is not canonical. Empties the cache
    first if they would make it outgrow :data:`CACHE_LIMIT`."""
    missing = set(keys).difference(cache)
    if not missing:
        return []
    if len(cache) + len(missing) > CACHE_LIMIT:
        cache.clear()
        missing = set(keys)
    texts = list(missing)
    parsed = canonical_triples([line.format(text) for text in texts])
    return None if parsed is None else list(zip(texts, parsed, strict=True))


class TermTexts:
    """Triples and graph names by their canonical text, parsed once (module docstring)."""

    def __init__(self) -> None:
        self.triples: dict[str, Triple] = {}
        self.names: dict[str, EventId] = {}

    def triples_of(self, keys: list[str]) -> list[Triple] | None:
        """The triples of texts ``keys`` (``"s p o"``, no final dot), or ``None`` if one
        is not the canonical text of a triple."""
        found = parse_missing(self.triples, keys, "{} .")
        if found is None:
            return None
        self.triples.update(found)
        return list(map(self.triples.__getitem__, keys))

    def name(self, text: str) -> EventId | None:
        """The graph name written ``text`` (:func:`name_term`), kept for the next time."""
        found = self.names.get(text)
        if found is None:
            found = name_term(text)
            if found is None:
                return None
            if len(self.names) >= CACHE_LIMIT:
                self.names.clear()
            self.names[text] = found
        return found


def name_term(text: str) -> EventId | None:
    """The graph name written ``text`` (``<iri>`` or ``_:label``), or ``None`` if it is not
    an IRI nor a plain ASCII label (such names are left to pyoxigraph's parse)."""
    try:
        if text[:1] == "<" and text[-1:] == ">":
            return NamedNode(text[1:-1])  # refuses what the parser refuses in an IRI
        if text[:2] == "_:" and _LABEL.fullmatch(text, 2):
            return BlankNode(text[2:])
    except ValueError:
        pass
    return None
