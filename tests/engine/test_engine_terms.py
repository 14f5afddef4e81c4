"""The term dictionary: one id per RDF term whatever its spelling, stable ids, and typed
values that agree with ``rsep.rdf.values.value_of`` (the exact SPARQL value semantics)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.engine.terms import (
    KIND_BLANK,
    KIND_IRI,
    KIND_LITERAL,
    KIND_TRIPLE,
    NOT_NUMERIC,
    TermDictionary,
    plain_names,
    put_word,
    text_bytes,
    word_at,
)
from rsep.rdf.terms import XSD, parse_term, to_nt
from rsep.rdf.values import NumericValue, value_of

NUMERIC_TYPES = [
    "integer",
    "decimal",
    "float",
    "double",
    "long",
    "int",
    "byte",
    "unsignedByte",
    "nonNegativeInteger",
    "negativeInteger",
]

lexicals = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
    st.sampled_from(["INF", "-INF", "NaN", "+INF", "inf", "1e400", "-1e-400", "0.1", "abc", ""]),
    st.from_regex(r"[+-]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)
numeric_literals = st.builds(
    lambda lexical, name: Literal(lexical, datatype=NamedNode(XSD + name)),
    lexicals,
    st.sampled_from(NUMERIC_TYPES),
)

_IRI_CHARS = "abcxyz0123/-._~é"
iris = st.text(_IRI_CHARS, min_size=1, max_size=8).map(lambda p: NamedNode(f"http://ex.org/{p}"))
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
terms = st.one_of(
    iris,
    st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,5}", fullmatch=True).map(BlankNode),
    texts.map(Literal),
    st.builds(
        lambda v, lang: Literal(v, language=lang), texts, st.sampled_from(["en", "en-gb", "fr"])
    ),
    numeric_literals,
)


def spellings(term: NamedNode | BlankNode | Literal, data: st.DataObject) -> list[str]:
    """Other N-Triples spellings of ``term``: escaped characters, an explicit xsd:string,
    a language tag in other case."""
    canonical = to_nt(term)
    out = [canonical]
    if isinstance(term, NamedNode):
        out.append("<" + "".join(f"\\u{ord(c):04X}" if c in "ab" else c for c in term.value) + ">")
    elif isinstance(term, Literal):
        escaped = "".join(
            f"\\u{ord(c):04x}" if data.draw(st.booleans()) and ord(c) < 0x10000 else _plain(c)
            for c in term.value
        )
        if term.language is not None:
            out.append(f'"{escaped}"@{term.language.upper()}')
        elif term.datatype.value == XSD + "string":
            out.append(f'"{escaped}"^^<{XSD}string>')
        else:
            out.append(f'"{escaped}"^^<{term.datatype.value}>')
    return out


def _plain(char: str) -> str:
    return {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r"}.get(char, char)


@settings(max_examples=300, deadline=None)
@given(st.lists(terms, min_size=1, max_size=8), st.data())
def test_spellings_of_one_term_get_one_id(found: list[Literal], data: st.DataObject) -> None:
    dictionary = TermDictionary()
    for term in found:
        variants = spellings(term, data)
        ids = dictionary.encode(variants)
        assert len(set(ids.tolist())) == 1, variants
        ident = int(ids[0])
        assert dictionary.text(ident) == to_nt(term)
        assert dictionary.term(ident) == term
        assert dictionary.intern(variants[-1]) == ident
        assert dictionary.lookup(variants[-1]) == ident
    # distinct terms, distinct ids
    canonical = {to_nt(term) for term in found}
    ids = dictionary.encode(sorted(canonical))
    assert len(set(ids.tolist())) == len(canonical)
    assert len(dictionary) == len(canonical)


@settings(max_examples=500, deadline=None)
@given(st.lists(numeric_literals, min_size=1, max_size=20))
def test_typed_values_agree_with_value_of(literals: list[Literal]) -> None:
    dictionary = TermDictionary()
    ids = dictionary.encode([to_nt(term) for term in literals])
    values = dictionary.values
    for term, ident in zip(literals, ids.tolist(), strict=True):
        value = value_of(parse_term(to_nt(term)))
        assert values.kind[ident] == KIND_LITERAL
        if not isinstance(value, NumericValue):
            assert values.numeric[ident] == NOT_NUMERIC
            assert values.number[ident] == 0.0
            continue
        assert values.numeric[ident] == int(value.type)
        number = float(values.number[ident])
        exact = value.value
        if isinstance(exact, float):
            assert number == exact or (math.isnan(number) and math.isnan(exact))
            assert values.exact[ident]
            continue
        if abs(Fraction(exact)) > Fraction(np.finfo(np.float64).max):
            assert math.isinf(number) and (number > 0) == (exact > 0)
            assert not values.exact[ident]
            continue
        # the double nearest to the exact value (F&O cast to xsd:double)
        assert number == float(Fraction(exact))
        assert bool(values.exact[ident]) == (Fraction(number) == Fraction(exact))


def test_exactness_of_large_integers_and_decimals() -> None:
    dictionary = TermDictionary()
    cases = {
        f'"{2**53}"^^<{XSD}integer>': True,
        f'"{2**53 + 1}"^^<{XSD}integer>': False,
        f'"0.5"^^<{XSD}decimal>': True,
        f'"0.1"^^<{XSD}decimal>': False,
        f'"0.1"^^<{XSD}double>': True,
        f'"0.1"^^<{XSD}float>': True,
        f'"{10**400}"^^<{XSD}integer>': False,
    }
    ids = dictionary.encode(list(cases))
    assert dictionary.values.exact[ids].tolist() == list(cases.values())
    assert math.isinf(dictionary.values.number[ids[-1]])


def test_kinds_and_non_numeric_literals() -> None:
    dictionary = TermDictionary()
    texts = [
        "<http://ex.org/a>",
        "_:b1",
        '"x"',
        f'"abc"^^<{XSD}integer>',  # ill-typed
        f'"300"^^<{XSD}byte>',  # out of range
        f'"2024-01-01T00:00:00Z"^^<{XSD}dateTime>',
        "<<( <http://ex.org/a> <http://ex.org/p> <http://ex.org/b> )>>",
    ]
    ids = dictionary.encode(pa.chunked_array([texts[:3], texts[3:]]))
    values = dictionary.values
    assert values.kind[ids].tolist() == [KIND_IRI, KIND_BLANK] + [KIND_LITERAL] * 4 + [KIND_TRIPLE]
    assert (values.numeric[ids] == NOT_NUMERIC).all()
    assert isinstance(dictionary.node(int(ids[-1])), Triple)
    with pytest.raises(TypeError):
        dictionary.term(int(ids[-1]))
    assert dictionary.texts(ids) == texts


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["http", "urn", "a+b", "1x", "", "_"]),
            st.sampled_from(["", ":", "://", ":/", ":///"]),
            st.text(alphabet="abcAZ09-._~!$&'()*+,;=:@/?#%[] <>\"{}|\\^`é", max_size=10),
        ),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_texts_written_canonically_are_added_unparsed(
    parts: list[tuple[str, str, str]], data: st.DataObject
) -> None:
    """IRIs and blank nodes the byte kernel finds written canonically (``plain_names``)
    are added with no parse: each is the N-Triples text of the term pyoxigraph reads, and a
    call mixing them with other spellings of the same terms, repeats and texts that are no
    term gives the ids of the texts met one by one, in order of first appearance."""
    candidates = [f"<{a}{b}{c}>" if a != "_" else f"_:{c}" for a, b, c in parts]
    words, lo, hi = text_bytes(pa.array(candidates))
    plain = plain_names(words, lo, hi).tolist()
    terms: list[NamedNode | BlankNode] = []
    for text, found in zip(candidates, plain, strict=True):
        if found:
            term = parse_term(text)
            assert isinstance(term, NamedNode | BlankNode) and to_nt(term) == text
            terms.append(term)
    texts = [t for t in candidates if parse_term_or_none(t) is not None]
    texts += [data.draw(st.sampled_from(spellings(term, data))) for term in terms]
    texts = data.draw(st.permutations(texts + texts[:3]))
    one_by_one = TermDictionary()
    expected = [one_by_one.intern(text) for text in texts]
    dictionary = TermDictionary()
    ids = dictionary.ids(pa.array(texts, pa.string())).tolist()
    assert ids == expected
    assert sorted(set(ids)) == list(range(len(dictionary)))
    assert [ids.index(i) for i in range(len(dictionary))] == sorted(set(map(ids.index, ids)))
    for text, ident in zip(texts, ids, strict=True):
        term = parse_term(text)
        assert dictionary.node(ident) == term and dictionary.text(ident) == to_nt(term)
        kind = KIND_IRI if isinstance(term, NamedNode) else KIND_BLANK
        assert dictionary.values.kind[ident] == kind
    assert dictionary.texts(np.array(ids)) == [to_nt(parse_term(text)) for text in texts]


def parse_term_or_none(text: str) -> object:
    try:
        return parse_term(text)
    except (SyntaxError, ValueError):
        return None


def test_bad_texts_are_refused_naming_the_text() -> None:
    dictionary = TermDictionary()
    for text in ["<not an iri>", '"open', "<http://ex.org/a> <http://ex.org/b>", "?x", ""]:
        with pytest.raises(ValueError, match=re.escape(repr(text))):
            dictionary.encode(["<http://ex.org/ok>", text])
        assert dictionary.lookup(text) == -1
    with pytest.raises(ValueError, match="null"):
        dictionary.encode(pa.array(["<http://ex.org/ok>", None]))
    # a refused batch adds nothing, not even its good texts
    assert len(dictionary) == 0


def test_lookup_adds_nothing_and_ids_stay_stable() -> None:
    dictionary = TermDictionary()
    assert dictionary.lookup("<http://ex.org/x>") == -1
    assert len(dictionary) == 0
    first = dictionary.encode([f"<http://ex.org/{i}>" for i in range(3000)])
    assert first.dtype == np.int32
    assert first.tolist() == list(range(3000))
    again = dictionary.encode(pa.array([f"<http://ex.org/{i}>" for i in range(2999, -1, -1)]))
    assert again.tolist() == list(range(2999, -1, -1))
    more = dictionary.encode([f'"{i}"^^<{XSD}integer>' for i in range(5000)])
    assert more.tolist() == list(range(3000, 8000))
    values = dictionary.values
    assert len(values.kind) == len(dictionary) == 8000
    assert values.number[3000:].tolist() == [float(i) for i in range(5000)]
    assert dictionary.encode([]).tolist() == []


@settings(max_examples=200, deadline=None)
@given(st.lists(terms, min_size=1, max_size=30), st.integers(0, 5), st.data())
def test_columns_of_any_layout_get_the_ids_of_their_texts(
    found: list[Literal], skip: int, data: st.DataObject
) -> None:
    """Plain, large, sliced, chunked and dictionary columns of canonical texts and other
    spellings: the ids of their texts one by one; the index holds the canonical texts only
    (a hit means the text is the canonical one)."""
    dictionary = TermDictionary()
    texts = [data.draw(st.sampled_from(spellings(term, data))) for term in found]
    expected = [dictionary.intern(text) for text in texts]
    for column in (
        pa.array(["<http://ex.org/pad>"] * skip + texts).slice(skip),
        pa.array(texts, pa.large_string()),
        pa.chunked_array([texts[: len(texts) // 2], texts[len(texts) // 2 :]], pa.string()),
        pa.array(texts).dictionary_encode(),
    ):
        assert dictionary.encode(column).tolist() == expected
    words, lo, hi = text_bytes(pa.array(texts))
    hits = dictionary.index.find(words, lo[None, :], hi[None, :], np.zeros(1, np.int64))[0]
    for text, ident, hit in zip(texts, expected, hits.tolist(), strict=True):
        assert hit == (ident if dictionary.text(ident) == text else -1)


def test_a_fresh_dictionary_meets_texts_of_every_length() -> None:
    """Texts of 1 to 80 bytes (word boundaries), multi-byte characters, many at once so
    the index grows and rehashes: each found again by its bytes."""
    dictionary = TermDictionary()
    texts = [f'"{"é" * (k % 7)}{"x" * k}"' for k in range(80)]
    texts += [f"<http://ex.org/{k}>" for k in range(20_000)]
    ids = dictionary.encode(texts)
    assert ids.tolist() == list(range(len(texts)))
    assert dictionary.encode(texts[::-1]).tolist() == list(range(len(texts)))[::-1]
    assert [dictionary.lookup(text) for text in texts[:100]] == list(range(100))


@njit
def _words_moved(source: np.ndarray, target: np.ndarray, at: int, to: int) -> int:
    word = word_at(source, at)
    put_word(target, to, word)
    result: int = word
    return result


def test_unaligned_words_read_and_written_at_every_offset() -> None:
    """``word_at`` reads the 8 bytes from any byte as a little-endian word and ``put_word``
    writes them at any byte, leaving the others as they were."""
    source = np.arange(40, dtype=np.uint8) * 7 + 1
    for at in range(32):
        for to in range(32):
            target = np.zeros(40, np.uint8)
            word = _words_moved(source, target, at, to)
            assert word == int.from_bytes(source[at : at + 8].tobytes(), "little")
            expected = np.zeros(40, np.uint8)
            expected[to : to + 8] = source[at : at + 8]
            assert target.tolist() == expected.tolist()
