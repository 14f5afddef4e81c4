"""The term dictionary: RDF terms as int32 ids, with a side table of typed values computed
once per term (DESIGN.md, Data model; ENGINE.md, "Terms as integers").

A term is known by its N-Triples text. Each distinct new text is parsed by pyoxigraph and
re-serialised once, so two spellings of one term (``"a"^^xsd:string`` and ``"a"``,
``@EN`` and ``@en``) share an id: id equality is RDF term equality. Known canonical texts
are found by their UTF-8 bytes in a hash table of numpy arrays that numba kernels read
(:class:`TextIndex`), so encoding a column costs Python work only for its new texts.
Typed values come from :func:`rsep.rdf.values.value_of`, the project's exact SPARQL
value semantics, so a vectorised FILTER over :class:`TypedValues` agrees with the exact
path wherever ``exact`` says the double is the value.
"""

from __future__ import annotations

import contextlib
import math
import string
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit, types
from numba.extending import intrinsic
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
    "TextIndex",
    "TypedValues",
    "compare_bytes",
    "plain_names",
    "put_word",
    "rehash",
    "strings",
    "text_bytes",
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


_FOUND_LIMIT = 4096
"""Texts :meth:`TermDictionary.lookup` and :meth:`TermDictionary.encode` remember at most."""
_FEW = 64
"""Texts :meth:`TermDictionary.encode` looks up one by one before calling Arrow."""


class TermDictionary:
    """RDF terms in N-Triples form dictionary-encoded to int32 ids, with a side table of
    typed values computed once per term. Ids are stable for the dictionary's lifetime."""

    def __init__(self) -> None:
        self.index = TextIndex()
        """The canonical texts by their bytes; a text's number in it is its id."""
        self.lock = threading.RLock()
        """Held while the index is searched or terms added (a reader thread encodes while
        the engine interns its constants)."""
        self._spellings: dict[str, int] = {}  # the other spellings met -> id
        self._found: dict[str, int] = {}  # texts looked up -> id
        self._nodes: list[Node | None] = []  # None: made from the text when asked
        self._size = 0
        capacity = 1024
        self._kind = np.zeros(capacity, np.int8)
        self._numeric = np.full(capacity, NOT_NUMERIC, np.int8)
        self._number = np.zeros(capacity, np.float64)
        self._exact = np.zeros(capacity, np.bool_)

    def __getstate__(self) -> dict[str, Any]:
        """The dictionary for a checkpoint or a Spark task: everything but its lock."""
        state = dict(self.__dict__)
        del state["lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_found", {})
        self.__dict__.update(state)
        self.lock = threading.RLock()

    def __len__(self) -> int:
        return self._size

    def encode(self, texts: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        """The int32 ids of ``texts``, one per text: distinct texts found by Arrow, and only
        the new ones parsed (a few texts met before: from the texts remembered); a
        ``ValueError`` names a text that is not a term (or a null)."""
        if isinstance(texts, list) and len(texts) <= _FEW:
            found = self._found
            known = [found.get(text, -1) for text in texts]
            if -1 not in known:  # a few texts met before: no Arrow call
                return np.array(known, np.int32)
            ids = self.encode(pa.array(texts, pa.string()))
            if len(found) + len(texts) > _FOUND_LIMIT:
                found.clear()
            found.update(zip(texts, ids.tolist(), strict=True))
            return ids
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
        lookup = self.ids(codes.dictionary)
        result: np.ndarray = lookup[codes.indices.to_numpy(zero_copy_only=False)]
        return result

    def find_bytes(
        self, words: np.ndarray, lo: np.ndarray, hi: np.ndarray, depths: np.ndarray
    ) -> np.ndarray:
        """The ids of the canonical texts from ``lo[r, i]`` to ``hi[r, i]`` of ``words``,
        -1 for a text not known or not canonical (``TextIndex.find``)."""
        with self.lock:
            return self.index.find(words, lo, hi, depths)

    def ids(self, distinct: pa.Array) -> np.ndarray:
        """The ids of distinct texts (a string array: an Arrow dictionary's), the new ones
        added: the canonical ones found by their bytes, the others among the spellings
        met, then parsed; a ``ValueError`` names a text that is not a term."""
        if not (pa.types.is_string(distinct.type) or pa.types.is_large_string(distinct.type)):
            distinct = distinct.cast(pa.string())
        with self.lock:
            return self._ids_held(distinct)

    def _ids_held(self, distinct: pa.Array) -> np.ndarray:
        words, lo, hi = text_bytes(distinct)
        found: np.ndarray = self.index.find(words, lo[None, :], hi[None, :], _NO_DEPTHS)[0]
        missing = np.flatnonzero(found < 0)
        if not len(missing):
            return found
        # IRIs and blank nodes written canonically are added as they are, with no parse
        # nor Python object; the others are parsed first (a text that is not a term
        # refuses the whole call) and added by their canonical texts, in the same order
        other = missing[~plain_names(words, lo[missing], hi[missing])]
        parsed: dict[int, tuple[str, Node, str]] = {}  # position: text, term, canonical
        if len(other):
            texts: list[str] = distinct.take(pa.array(other)).to_pylist()
            known = [self._spellings.get(text, -1) for text in texts]
            found[other] = known
            fresh = [k for k, ident in enumerate(known) if ident < 0]
            terms = _canonical([texts[k] for k in fresh]) if fresh else []
            for k, (node, canonical) in zip(fresh, terms, strict=True):
                parsed[int(other[k])] = (texts[k], node, canonical)
            if terms:
                more = text_bytes(pa.array([canonical for _, canonical in terms], pa.string()))
                at = other[fresh]
                lo, hi = lo.copy(), hi.copy()
                lo[at] = more[1] + 8 * len(words)
                hi[at] = more[2] + 8 * len(words)
                words = np.concatenate([words, more[0]])
        add = np.flatnonzero(found < 0)
        size = self._size
        ids = self.index.add(words, lo[add], hi[add])
        found[add] = ids
        self._fill(size, words, lo[add], ids, add, parsed)
        return found

    def _fill(
        self,
        size: int,
        words: np.ndarray,
        lo: np.ndarray,
        ids: np.ndarray,
        positions: np.ndarray,
        parsed: dict[int, tuple[str, Node, str]],
    ) -> None:
        """Give the ids the index added past ``size`` (``ids`` of the texts at ``positions``
        starting at byte ``lo`` of ``words``) their terms and typed values: IRIs or blank
        nodes by their first byte, the ``parsed`` ones by their terms."""
        count = self.index.size - size
        self._grow(count)
        new = np.flatnonzero(ids >= size)
        _, first = np.unique(ids[new], return_index=True)
        firsts = new[first]  # the first text of each new id, in id order
        blank = words.view(np.uint8)[lo[firsts]] == _LOW
        self._kind[size : size + count] = np.where(blank, KIND_BLANK, KIND_IRI)
        nodes: list[Node | None] = [None] * count
        for position, (text, node, canonical) in parsed.items():
            ident = int(ids[np.searchsorted(positions, position)])
            if ident >= size and nodes[ident - size] is None:
                nodes[ident - size] = node
                self._value(ident, node)
            if text != canonical:
                self._spellings[text] = ident
        self._nodes.extend(nodes)
        self._size = size + count

    def intern(self, text: str) -> int:
        """The id of one term text (a FILTER's constant, a pattern's IRI), added if new."""
        return int(self.ids(pa.array([text], pa.string()))[0])

    def lookup(self, text: str) -> int:
        """The id of ``text``, or -1 when that term was never added (adds nothing); ids
        found are remembered (a pattern's constants are looked up at every batch)."""
        found = self._found.get(text)
        if found is not None:
            return found
        ident = self._known(text)
        if ident < 0:
            try:
                canonical = _canonical([text])[0][1]
            except ValueError:
                return -1
            ident = self._known(canonical)
        if ident >= 0:
            if len(self._found) >= _FOUND_LIMIT:
                self._found.clear()
            self._found[text] = ident
        return ident

    def _known(self, text: str) -> int:
        """The id of a spelling met, or -1."""
        words, lo, hi = text_bytes(pa.array([text], pa.string()))
        with self.lock:
            ident = int(self.index.find(words, lo[None, :], hi[None, :], _NO_DEPTHS)[0, 0])
            return ident if ident >= 0 else self._spellings.get(text, -1)

    def text(self, ident: int) -> str:
        """The canonical N-Triples text of id ``ident``."""
        with self.lock:
            starts, arena = self.index.starts, self.index.arena
        begin, end = int(starts[ident]), int(starts[ident + 1])
        return arena.view(np.uint8)[begin:end].tobytes().decode()

    def texts(self, ids: np.ndarray) -> list[str]:
        """The canonical texts of ``ids``."""
        texts: list[str] = self.text_array(ids).to_pylist()
        return texts

    def text_array(self, ids: np.ndarray, trim: int = 0) -> pa.Array:
        """The canonical texts of ``ids`` as an Arrow string array (no Python object),
        without their first and last ``trim`` bytes (1: an IRI without its brackets)."""
        ids = np.asarray(ids, np.int64)
        with self.lock:
            starts, arena = self.index.starts, self.index.arena
        return strings(arena, starts[ids] + trim, starts[ids + 1] - trim)

    def term(self, ident: int) -> Term:
        """The pyoxigraph term of id ``ident``; a ``TypeError`` for a triple term (see
        :meth:`node`)."""
        node = self.node(ident)
        if isinstance(node, Triple):
            raise TypeError(f"id {ident} is a triple term: {node}")
        return node

    def node(self, ident: int) -> Node:
        """The pyoxigraph term or triple term of id ``ident``."""
        node = self._nodes[ident]
        if node is None:  # an IRI or blank node added without parsing
            text = self.text(ident)
            node = NamedNode(text[1:-1]) if text[0] == "<" else BlankNode(text[2:])
            self._nodes[ident] = node
        return node

    def nodes(self, ids: np.ndarray) -> list[Node]:
        """The pyoxigraph terms of ``ids`` (the texts of those not made yet read at once)."""
        nodes = self._nodes
        wanted = np.asarray(ids).tolist()
        missing = list(dict.fromkeys(i for i in wanted if nodes[i] is None))
        if missing:
            for ident, text in zip(missing, self.texts(np.asarray(missing)), strict=True):
                nodes[ident] = NamedNode(text[1:-1]) if text[0] == "<" else BlankNode(text[2:])
        return [nodes[i] for i in wanted]

    @property
    def values(self) -> TypedValues:
        """The typed values of every id so far (views: later additions do not show)."""
        n = self._size
        return TypedValues(self._kind[:n], self._numeric[:n], self._number[:n], self._exact[:n])

    def _grow(self, count: int) -> None:
        """Room for ``count`` more ids (their values not numeric until set; ``_size``
        counts them once they are)."""
        end = self._size + count
        if end > len(self._kind):
            capacity = max(end, 2 * len(self._kind))
            self._kind = _grown(self._kind, capacity, 0)
            self._numeric = _grown(self._numeric, capacity, NOT_NUMERIC)
            self._number = _grown(self._number, capacity, 0.0)
            self._exact = _grown(self._exact, capacity, False)

    def _value(self, index: int, node: Node) -> None:
        """Set the typed values of id ``index``, term ``node``."""
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


def text_bytes(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A string array's UTF-8 bytes as words (padded for the kernels' word reads) and each
    text's first and end byte."""
    if len(texts) == 0:
        return np.zeros(2, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    wide = pa.types.is_large_string(texts.type)
    _, offsets_buffer, data = texts.buffers()
    raw = np.frombuffer(offsets_buffer, np.int64 if wide else np.int32)
    window = raw[texts.offset : texts.offset + len(texts) + 1]
    first, end = int(window[0]), int(window[-1])
    offsets: np.ndarray = window.astype(np.int64) - first
    words = np.zeros((end - first) // 8 + 2, np.uint64)
    if end > first:
        words.view(np.uint8)[: end - first] = np.frombuffer(data, np.uint8, end - first, first)
    return words, offsets[:-1], offsets[1:]


_LOW, _COLON, _LT, _GT, _DOT, _HASH = (ord(c) for c in "_:<>.#")
_SLASH, _QUERY_MARK = ord("/"), ord("?")


def _bytes_of(chars: str) -> np.ndarray:
    """A table of the bytes ``chars``."""
    table = np.zeros(256, np.bool_)
    table[list(chars.encode())] = True
    return table


_ALNUM = string.ascii_letters + string.digits
_SEGMENT_CHARS = _ALNUM + "-._~!$&'()*+,;=:@"
_NAME_BYTES = np.stack(
    [
        _bytes_of(_ALNUM + "+.-"),  # scheme
        _bytes_of(_ALNUM + "-._~"),  # host
        _bytes_of(_SEGMENT_CHARS),
        _bytes_of(_SEGMENT_CHARS + "/"),  # path
        _bytes_of(_SEGMENT_CHARS + "/?"),  # query, fragment
        _bytes_of(_ALNUM + "_.-"),  # blank node label
        _bytes_of(_ALNUM + "_"),  # its first byte
    ]
)
"""Bytes of the plain graph names (``_plain``): IRIs of RFC 3987 in ASCII without
percent-encoding, user information nor IP literal, and blank node labels."""


def plain_names(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each text from ``lo[i]`` to ``hi[i]`` of ``words`` is a plain IRI or blank
    node (``_plain``): one written canonically, its own N-Triples form."""
    return _plain(words, lo, hi, _NAME_BYTES)


@njit(inline="always")
def _skip(buf: np.ndarray, k: int, end: int, allowed: np.ndarray) -> int:
    """The first byte from ``k`` (before ``end``) that ``allowed`` does not take."""
    while k < end and allowed[buf[k]]:
        k += 1
    return k


@njit(cache=True, nogil=True)
def _plain(words: np.ndarray, lo: np.ndarray, hi: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """Whether each name from ``lo[i]`` to ``hi[i]`` is a plain one that ``Texts.name``
    takes: an IRI (``tables``: the scheme, host, segment, path and query bytes) or a blank
    node label of ``rsep.rdf.formats.ntriples.name_term``; the others are asked."""
    buf = words.view(np.uint8)
    scheme, host, segment, path, query = tables[0], tables[1], tables[2], tables[3], tables[4]
    label, label_first = tables[5], tables[6]
    out = np.zeros(lo.shape[0], np.bool_)
    for i in range(lo.shape[0]):
        a = lo[i]
        end = hi[i] - 1
        if end - a >= 2 and buf[a] == _LOW and buf[a + 1] == _COLON:
            k = _skip(buf, a + 2, end + 1, label)
            out[i] = k == end + 1 and label_first[buf[a + 2]] and buf[end] != _DOT
            continue
        if end - a < 3 or buf[a] != _LT or buf[end] != _GT:
            continue
        first = buf[a + 1]
        if not ((65 <= first <= 90) or (97 <= first <= 122)):
            continue
        k = _skip(buf, a + 2, end, scheme)
        if k == end or buf[k] != _COLON:
            continue
        k += 1
        if k + 1 < end and buf[k] == _SLASH and buf[k + 1] == _SLASH:
            k = _skip(buf, k + 2, end, host)
            if k < end and buf[k] == _COLON:
                k += 1
                while k < end and 48 <= buf[k] <= 57:
                    k += 1
            if k < end and buf[k] == _SLASH:
                k = _skip(buf, k, end, path)
        elif k < end and buf[k] == _SLASH:
            if k + 1 < end and segment[buf[k + 1]]:
                k = _skip(buf, k + 1, end, path)
            else:
                k += 1
        elif k < end and segment[buf[k]]:
            k = _skip(buf, k, end, path)
        if k < end and buf[k] == _QUERY_MARK:
            k = _skip(buf, k + 1, end, query)
        if k < end and buf[k] == _HASH:
            k = _skip(buf, k + 1, end, query)
        out[i] = k == end
    return out


@njit(cache=True, nogil=True)
def _gather(buf: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte strings ``buf[lo[i]:hi[i]]`` packed as an Arrow string column: offsets and
    data."""
    n = lo.shape[0]
    offsets = np.empty(n + 1, np.int64)
    offsets[0] = 0
    for i in range(n):
        offsets[i + 1] = offsets[i] + hi[i] - lo[i]
    data = np.empty(offsets[n] + 8, np.uint8)  # a word at a time, the next text after
    for i in range(n):
        at = offsets[i]
        for k in range(0, hi[i] - lo[i], 8):
            put_word(data, at + k, word_at(buf, lo[i] + k))
    return offsets, data[: offsets[n]]


def strings(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """The byte strings from ``lo[i]`` to ``hi[i]`` of ``words`` (whole UTF-8 texts) as an
    Arrow string array."""
    offsets, data = _gather(words.view(np.uint8), lo, hi)
    if offsets[-1] < 1 << 31:
        small = offsets.astype(np.int32)
        return pa.StringArray.from_buffers(len(lo), pa.py_buffer(small), pa.py_buffer(data))
    texts = pa.LargeStringArray.from_buffers(len(lo), pa.py_buffer(offsets), pa.py_buffer(data))
    return texts.cast(pa.string())


class TextIndex:
    """Byte strings (term texts) numbered in order of addition: an open-addressing hash
    table of numpy arrays (slots, each entry's hash, its bytes in an arena) that numba
    kernels search without a Python object per text."""

    def __init__(self) -> None:
        self.slots = np.full(1 << 12, -1, np.int64)
        """Each used slot holds an entry's number and, above it, the top bits of its hash
        (``_slot_of``), so a search reads one array before the candidate's bytes."""
        self.hashes = np.empty(1 << 11, np.uint64)
        self.starts = np.zeros((1 << 11) + 1, np.int64)
        """Entry ``e``'s bytes are ``arena`` bytes ``starts[e]`` to ``starts[e + 1]``."""
        self.arena = np.zeros(1 << 13, np.uint64)
        self.size = 0

    def find(
        self, words: np.ndarray, lo: np.ndarray, hi: np.ndarray, depths: np.ndarray
    ) -> np.ndarray:
        """The number of each byte string from ``lo[r, i]`` to ``hi[r, i]`` of ``words``,
        -1 if absent (row ``r`` compared first with its ``depths[r]`` rows before)."""
        return _find(words, lo, hi, self.table(), depths)

    def table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The arrays the kernels read (``probe``): slots, hashes, starts, arena; read them
        under the dictionary's lock, as additions change them."""
        return self.slots, self.hashes, self.starts, self.arena

    def add(self, words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The number of each byte string from ``lo[i]`` to ``hi[i]`` of ``words``, those
        not in the table added (numbered in order of first appearance)."""
        count = len(lo)
        length = int((hi - lo).sum())
        size = self.size
        need = size + count
        if need > len(self.hashes):
            room = max(need, 2 * len(self.hashes))
            self.hashes = np.resize(self.hashes, room)
            self.starts = np.resize(self.starts, room + 1)
        words_needed = (int(self.starts[size]) + length) // 8 + 2
        if words_needed > len(self.arena):
            arena = np.zeros(max(words_needed, 2 * len(self.arena)), np.uint64)
            arena[: len(self.arena)] = self.arena
            self.arena = arena
        if 2 * need > len(self.slots):
            self.slots = np.full(1 << (2 * need).bit_length(), -1, np.int64)
            _rehash_tagged(self.slots, self.hashes, size)
        numbers, self.size = _insert(words, lo, hi, self.table(), size)
        return numbers


_NO_DEPTHS = np.zeros(1, np.int64)


def _load_word(typingctx: Any, words: Any, at: Any) -> Any:
    """Typing and code of ``word_at``: one unaligned 8-byte load."""
    if not isinstance(words, types.Array) or not isinstance(at, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array = context.make_array(signature.args[0])(context, builder, args[0])
        byte = context.get_value_type(types.uint8).as_pointer()
        word = context.get_value_type(types.uint64).as_pointer()
        offset = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = builder.bitcast(builder.gep(builder.bitcast(array.data, byte), [offset]), word)
        return builder.load(pointer, align=1)

    return types.uint64(words, at), codegen


word_at: Any = intrinsic(_load_word)
"""``word_at(words, at)``: the 8 bytes from byte ``at`` of the array ``words`` as one
little-endian word, by one unaligned load (x86-64 and AArch64 allow them); the caller
keeps ``at + 8`` within the array."""


def _store_word(typingctx: Any, words: Any, at: Any, word: Any) -> Any:
    """Typing and code of ``put_word``: one unaligned 8-byte store."""
    if not (
        isinstance(words, types.Array)
        and isinstance(at, types.Integer)
        and isinstance(word, types.Integer)
    ):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array = context.make_array(signature.args[0])(context, builder, args[0])
        byte = context.get_value_type(types.uint8).as_pointer()
        pointee = context.get_value_type(types.uint64)
        offset = context.cast(builder, args[1], signature.args[1], types.intp)
        value = context.cast(builder, args[2], signature.args[2], types.uint64)
        pointer = builder.gep(builder.bitcast(array.data, byte), [offset])
        builder.store(value, builder.bitcast(pointer, pointee.as_pointer()), align=1)
        return context.get_dummy_value()

    return types.none(words, at, word), codegen


put_word: Any = intrinsic(_store_word)
"""``put_word(words, at, word)``: write the 8 bytes of ``word`` (little-endian) from
byte ``at`` of the array ``words``, by one unaligned store; the caller keeps ``at + 8``
within the array."""


@njit(inline="always")
def head_at(words: np.ndarray, at: int, n: int) -> np.uint64:
    """The first ``n`` (< 8) bytes from byte ``at`` as a word."""
    head: np.uint64 = word_at(words, at) & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1))
    return head


@njit(inline="always")
def same_bytes(one: np.ndarray, a: int, other: np.ndarray, b: int, n: int) -> bool:
    """Whether the ``n`` bytes from byte ``a`` of ``one`` and ``b`` of ``other`` agree."""
    k = 0
    while k + 8 <= n:
        if word_at(one, a + k) != word_at(other, b + k):
            return False
        k += 8
    return k == n or head_at(one, a + k, n - k) == head_at(other, b + k, n - k)


@njit(inline="always")
def compare_bytes(one: np.ndarray, a: int, n: int, other: np.ndarray, b: int, m: int) -> int:
    """-1, 0 or 1 as the ``n`` bytes from byte ``a`` of ``one`` sort before, with or after
    the ``m`` bytes from ``b`` of ``other`` (unsigned bytes, a prefix first: the order of
    UTF-8 texts by code point, as Arrow sorts strings)."""
    common = min(n, m)
    k = 0
    while k + 8 <= common and word_at(one, a + k) == word_at(other, b + k):
        k += 8
    while k < common:
        x = word_at(one, a + k) & np.uint64(0xFF)
        y = word_at(other, b + k) & np.uint64(0xFF)
        if x != y:
            return -1 if x < y else 1
        k += 1
    return -1 if n < m else (1 if n > m else 0)


@njit(inline="always")
def hash_bytes(words: np.ndarray, a: int, n: int) -> np.uint64:
    """A 64-bit hash of the ``n`` bytes from ``a``, a word at a time."""
    h = np.uint64(n) * np.uint64(0x9E3779B97F4A7C15)
    k = 0
    while k + 8 <= n:
        h = (h ^ word_at(words, a + k)) * np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(29)
        k += 8
    if k < n:
        h = (h ^ head_at(words, a + k, n - k)) * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(32))


@njit(inline="always")
def recent_same(words: np.ndarray, lo: np.ndarray, hi: np.ndarray, i: int, depth: int) -> int:
    """A row at most ``depth`` before ``i`` with the same bytes (a graph's lines, an
    event's statements, its time and stream alternating, the predicates of a schema), or
    -1."""
    a = lo[i]
    length = hi[i] - a
    for back in range(1, depth + 1):
        j = i - back
        if j >= 0 and hi[j] - lo[j] == length and same_bytes(words, lo[j], words, a, length):
            return j
    return -1


@njit(inline="always")
def _slot_of(entry: int, h: np.uint64) -> np.int64:
    """A ``TextIndex`` slot's value: the entry's number (below 2**32) under the hash's top
    31 bits."""
    tagged: np.int64 = (np.int64(h >> np.uint64(33)) << np.int64(32)) | np.int64(entry)
    return tagged


@njit(inline="always")
def _probe(
    words: np.ndarray,
    a: int,
    length: int,
    h: np.uint64,
    slots: np.ndarray,
    starts: np.ndarray,
    arena: np.ndarray,
) -> tuple[int, np.uint64]:
    """The number of the ``length`` bytes from byte ``a`` of ``words`` (hash ``h``) in a
    ``TextIndex`` (its arrays, ``TextIndex.table``), or -1, and the slot where the search
    ended: the hash's top bits find the candidates, bytes decide."""
    mask = np.uint64(slots.shape[0] - 1)
    tag = np.int64(h >> np.uint64(33))
    slot = h & mask
    while True:
        value = slots[slot]
        if value < 0:
            return -1, slot
        if value >> np.int64(32) == tag:
            entry = value & np.int64(0xFFFFFFFF)
            at = starts[entry]
            if starts[entry + 1] - at == length and same_bytes(arena, at, words, a, length):
                found: int = entry
                return found, slot
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def _find(
    words: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    table: tuple[np.ndarray, ...],
    depths: np.ndarray,
) -> np.ndarray:
    """The value of each byte string from ``lo[r, i]`` to ``hi[r, i]`` in a ``TextIndex``
    (``table``: its arrays), or -1 (rows of ``r`` first compared with the ``depths[r]`` rows
    before)."""
    slots, _, starts, arena = table
    out = np.empty(lo.shape, np.int32)
    for r in range(lo.shape[0]):
        row_lo = lo[r]
        row_hi = hi[r]
        for i in range(lo.shape[1]):
            same = recent_same(words, row_lo, row_hi, i, depths[r])
            if same >= 0:
                out[r, i] = out[r, same]
                continue
            a = row_lo[i]
            length = row_hi[i] - a
            h = hash_bytes(words, a, length)
            out[r, i] = _probe(words, a, length, h, slots, starts, arena)[0]
    return out


@njit(cache=True, nogil=True)
def _insert(
    words: np.ndarray, lo: np.ndarray, hi: np.ndarray, table: tuple[np.ndarray, ...], size: int
) -> tuple[np.ndarray, int]:
    """The number of each byte string from ``lo[i]`` to ``hi[i]`` in a ``TextIndex`` of
    ``size`` entries (``table``: its arrays, with room for every string), the absent ones
    added; and the new size."""
    slots, hashes, starts, arena = table
    bytes_in = words.view(np.uint8)
    bytes_out = arena.view(np.uint8)
    numbers = np.empty(lo.shape[0], np.int32)
    for i in range(lo.shape[0]):
        a = lo[i]
        length = hi[i] - a
        h = hash_bytes(words, a, length)
        found, slot = _probe(words, a, length, h, slots, starts, arena)
        if found >= 0:
            numbers[i] = found
            continue
        at = starts[size]
        bytes_out[at : at + length] = bytes_in[a : a + length]
        slots[slot] = _slot_of(size, h)
        hashes[size] = h
        numbers[i] = size
        size += 1
        starts[size] = at + length
    return numbers, size


@njit(cache=True, nogil=True)
def _rehash_tagged(slots: np.ndarray, hashes: np.ndarray, size: int) -> None:
    """Put the ``size`` entries of ``hashes`` in empty ``slots`` of a ``TextIndex``."""
    mask = np.uint64(slots.shape[0] - 1)
    for entry in range(size):
        slot = hashes[entry] & mask
        while slots[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = _slot_of(entry, hashes[entry])


@njit(cache=True, nogil=True)
def rehash(slots: np.ndarray, hashes: np.ndarray, size: int) -> None:
    """Put the ``size`` entries of ``hashes`` in empty ``slots``."""
    mask = np.uint64(slots.shape[0] - 1)
    for entry in range(size):
        slot = hashes[entry] & mask
        while slots[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = entry


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
