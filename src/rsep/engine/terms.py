"""The term dictionary: RDF terms as int32 ids, with a side table of typed values computed
once per term (DESIGN.md, Data model; ENGINE.md, "Terms as integers").

A term is known by its N-Triples text. Each distinct new text is parsed by pyoxigraph and
re-serialised once, so two spellings of one term (``"a"^^xsd:string`` and ``"a"``,
``@EN`` and ``@en``) share an id: id equality is RDF term equality. Typed values come from
:func:`rsep.rdf.values.value_of`, the project's exact SPARQL value semantics, so a
vectorised FILTER over :class:`TypedValues` agrees with the exact path wherever
``exact`` says the double is the value.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from rsep.rdf.terms import Term, to_nt
from rsep.rdf.values import NumericValue, value_of

__all__ = [
    "KIND_BLANK",
    "KIND_IRI",
    "KIND_LITERAL",
    "KIND_TRIPLE",
    "NOT_NUMERIC",
    "TermDictionary",
    "TypedValues",
]

KIND_IRI, KIND_BLANK, KIND_LITERAL, KIND_TRIPLE = 0, 1, 2, 3
"""Term kinds (``TypedValues.kind``); a triple term is RDF 1.2's ``<<( s p o )>>``."""

NOT_NUMERIC = -1
"""``TypedValues.numeric`` of a term that is not a valid numeric literal; numeric literals
hold their :class:`~rsep.rdf.values.NumericType` value (0 integer to 3 double), so
``np.maximum`` of two codes is the promoted type (XPath 2.0 sec. B.1)."""

_PROBE = "<urn:rsep:s> <urn:rsep:p> {} ."

Node = Term | Triple
"""What an id stands for: an IRI, blank node, literal or triple term."""


@dataclass
class TypedValues:
    """Per-term typed values, numpy arrays indexed by term id (SPARQL 1.1 sec. 17.1)."""

    kind: np.ndarray
    """int8: ``KIND_*``."""
    numeric: np.ndarray
    """int8: :data:`NOT_NUMERIC` (not numeric, or ill-typed), else the NumericType value."""
    number: np.ndarray
    """float64: the value cast to xsd:double (F&O sec. 17.1), NaN/INF as written; 0.0 when
    not numeric."""
    exact: np.ndarray
    """bool: ``number`` is exactly the literal's value (always for float and double)."""


class TermDictionary:
    """RDF terms in N-Triples form dictionary-encoded to int32 ids, with a side table of
    typed values computed once per term. Ids are stable for the dictionary's lifetime."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}  # every spelling seen -> id
        self._texts: list[str] = []  # canonical text by id
        self._nodes: list[Node] = []
        self._size = 0
        capacity = 1024
        self._kind = np.zeros(capacity, np.int8)
        self._numeric = np.full(capacity, NOT_NUMERIC, np.int8)
        self._number = np.zeros(capacity, np.float64)
        self._exact = np.zeros(capacity, np.bool_)

    def __len__(self) -> int:
        return self._size

    def encode(self, texts: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        """The int32 ids of ``texts``, one per text: distinct texts found by Arrow, and only
        the new ones parsed; a ``ValueError`` names a text that is not a term (or a null)."""
        array = texts if isinstance(texts, pa.Array | pa.ChunkedArray) else pa.array(texts)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if len(array) == 0:
            return np.empty(0, np.int32)
        if array.null_count:
            raise ValueError("a null is not an RDF term")
        if pa.types.is_dictionary(array.type):
            codes = array
        else:
            if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
                array = array.cast(pa.string())
            codes = pc.dictionary_encode(array)
        distinct: list[str] = codes.dictionary.to_pylist()
        ids = self._ids
        found = [ids.get(text, -1) for text in distinct]
        new = [text for text, ident in zip(distinct, found, strict=True) if ident < 0]
        if new:
            self._add(new)
            found = [ids[text] for text in distinct]
        lookup = np.array(found, np.int32)
        result: np.ndarray = lookup[codes.indices.to_numpy(zero_copy_only=False)]
        return result

    def intern(self, text: str) -> int:
        """The id of one term text (a FILTER's constant, a pattern's IRI), added if new."""
        ident = self._ids.get(text)
        if ident is None:
            self._add([text])
            ident = self._ids[text]
        return ident

    def lookup(self, text: str) -> int:
        """The id of ``text``, or -1 when that term was never added (adds nothing)."""
        ident = self._ids.get(text)
        if ident is not None:
            return ident
        try:
            canonical = _canonical([text])[0][1]
        except ValueError:
            return -1
        return self._ids.get(canonical, -1)

    def text(self, ident: int) -> str:
        """The canonical N-Triples text of id ``ident``."""
        return self._texts[ident]

    def texts(self, ids: np.ndarray) -> list[str]:
        """The canonical texts of ``ids``."""
        texts = self._texts
        return [texts[i] for i in np.asarray(ids).tolist()]

    def term(self, ident: int) -> Term:
        """The pyoxigraph term of id ``ident``; a ``TypeError`` for a triple term (see
        :meth:`node`)."""
        node = self._nodes[ident]
        if isinstance(node, Triple):
            raise TypeError(f"id {ident} is a triple term: {node}")
        return node

    def node(self, ident: int) -> Node:
        """The pyoxigraph term or triple term of id ``ident``."""
        return self._nodes[ident]

    def nodes(self, ids: np.ndarray) -> list[Node]:
        """The pyoxigraph terms of ``ids``."""
        nodes = self._nodes
        return [nodes[i] for i in np.asarray(ids).tolist()]

    @property
    def values(self) -> TypedValues:
        """The typed values of every id so far (views: later additions do not show)."""
        n = self._size
        return TypedValues(self._kind[:n], self._numeric[:n], self._number[:n], self._exact[:n])

    def _add(self, texts: list[str]) -> None:
        """Add distinct texts not yet known: canonicalise each, share ids between spellings."""
        ids = self._ids
        fresh: list[Node] = []
        for text, (node, canonical) in zip(texts, _canonical(texts), strict=True):
            ident = ids.get(canonical)
            if ident is None:
                ident = len(self._texts)
                ids[canonical] = ident
                self._texts.append(canonical)
                self._nodes.append(node)
                fresh.append(node)
            ids[text] = ident
        if fresh:
            self._values(fresh)

    def _values(self, nodes: list[Node]) -> None:
        start = self._size
        end = start + len(nodes)
        if end > len(self._kind):
            capacity = max(end, 2 * len(self._kind))
            self._kind = _grown(self._kind, capacity, 0)
            self._numeric = _grown(self._numeric, capacity, NOT_NUMERIC)
            self._number = _grown(self._number, capacity, 0.0)
            self._exact = _grown(self._exact, capacity, False)
        for index, node in enumerate(nodes, start):
            if isinstance(node, NamedNode):
                self._kind[index] = KIND_IRI
            elif isinstance(node, BlankNode):
                self._kind[index] = KIND_BLANK
            elif isinstance(node, Triple):
                self._kind[index] = KIND_TRIPLE
            else:
                self._kind[index] = KIND_LITERAL
                value = value_of(node)
                if isinstance(value, NumericValue):
                    number, exact = _double(value.value)
                    self._numeric[index] = value.type
                    self._number[index] = number
                    self._exact[index] = exact
        self._size = end


def _grown(array: np.ndarray, capacity: int, fill: object) -> np.ndarray:
    grown = np.full(capacity, fill, array.dtype)
    grown[: len(array)] = array
    return grown


def _double(value: int | Decimal | float) -> tuple[float, bool]:
    """``value`` cast to xsd:double (correctly rounded, beyond range to ±INF) and whether
    that double is exactly ``value``."""
    if isinstance(value, float):
        return value, True
    try:
        number = float(value)
    except OverflowError:  # an int beyond the double range
        number = math.inf if value > 0 else -math.inf
    return number, math.isfinite(number) and Fraction(number) == Fraction(value)


def _canonical(texts: list[str]) -> list[tuple[Node, str]]:
    """Each text's term and its canonical N-Triples form, in one pyoxigraph parse where all
    are canonical already; a ``ValueError`` naming the first text that is not a term."""
    data = "\n".join(_PROBE.format(text) for text in texts).encode()
    batch: list[Node] = []
    with contextlib.suppress(SyntaxError):
        batch = [quad.object for quad in parse(input=data, format=RdfFormat.N_TRIPLES)]
    out: list[tuple[Node, str]] = []
    for index, text in enumerate(texts):
        # A parsed term that reads back as its text is that text's term, whatever the
        # alignment of the batch; anything else is parsed on its own.
        node = batch[index] if index < len(batch) and len(batch) == len(texts) else None
        if node is None or _text_of(node) != text:
            node = _one(text)
        out.append((node, _text_of(node)))
    return out


def _one(text: str) -> Node:
    try:
        quads = list(parse(input=_PROBE.format(text).encode(), format=RdfFormat.N_TRIPLES))
    except SyntaxError as exc:
        raise ValueError(f"not an RDF term in N-Triples syntax: {text!r} ({exc})") from None
    if len(quads) != 1:
        raise ValueError(f"not one RDF term in N-Triples syntax: {text!r}")
    node = quads[0].object
    if not isinstance(node, NamedNode | BlankNode | Literal | Triple):
        raise ValueError(f"not an RDF term in N-Triples syntax: {text!r}")
    return node


def _text_of(node: Node) -> str:
    return f"<<( {node} )>>" if isinstance(node, Triple) else to_nt(node)
