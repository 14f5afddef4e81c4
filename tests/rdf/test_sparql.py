"""SPARQL over one graph (rsep.rdf.sparql): solution mappings, matching under a mapping,
expressions, literals given back as the data wrote them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.rdf.terms import XSD, Term

EX = "http://example.org/"
P = NamedNode(EX + "p")
DEC = NamedNode(XSD + "decimal")
BOOL = NamedNode(XSD + "boolean")
TWO = Literal("2", datatype=NamedNode(XSD + "integer"))


def n(local: str) -> NamedNode:
    return NamedNode(EX + local)


def test_mu_is_an_immutable_hashable_mapping() -> None:
    a = Mu({"x": n("a"), "y": n("b")})
    assert a == Mu([("y", n("b")), ("x", n("a"))]) and hash(a) == hash(Mu(dict(a)))
    assert a.domain == frozenset({"x", "y"}) and len(a) == 2 and a["x"] == n("a")
    assert a.compatible({"x": n("a"), "z": n("c")}) and not a.compatible({"x": n("b")})
    assert a.join({"z": n("c")}) == Mu({"x": n("a"), "y": n("b"), "z": n("c")})
    assert a.project(["x"]) == Mu({"x": n("a")})
    assert a.text() == {"x": f"<{EX}a>", "y": f"<{EX}b>"}
    with pytest.raises(ValueError, match="incompatible"):
        a.join({"x": n("z")})


terms = st.sampled_from([n("a"), n("b"), Literal("1"), Literal("1", language="en")])
mappings = st.dictionaries(st.sampled_from("xyz"), terms, max_size=3).map(Mu)


@given(mappings, mappings)
@settings(max_examples=200, deadline=None)
def test_compatibility_is_symmetric_and_join_extends_both(a: Mu, b: Mu) -> None:
    """SPARQL 1.1 sec. 18.3: μ1 ∼ μ2 iff they agree on shared variables; μ1 ∪ μ2 then
    extends both."""
    assert a.compatible(b) == b.compatible(a)
    if a.compatible(b):
        joined = a.join(b)
        assert joined == b.join(a)
        assert all(joined[k] == v for k, v in [*a.items(), *b.items()])


def test_match_under_a_bound_mapping_keeps_the_data_literals() -> None:
    """``⟦μ(P)⟧_G``: a FILTER of the pattern sees ``μ``; the literal comes back as the data
    wrote it ("3.0", not pyoxigraph's normalised "3")."""
    graph = frozenset({Triple(n("a"), P, Literal("3.0", datatype=DEC))})
    matcher = GraphMatcher()
    found = matcher.match(f"{{ ?x <{EX}p> ?o FILTER(?o > ?min) }}", graph, {"min": TWO})
    assert found == [Mu({"x": n("a"), "o": Literal("3.0", datatype=DEC), "min": TWO})]
    assert matcher.match(f"{{ ?x <{EX}p> ?o FILTER(?o > 4) }}", graph) == []


def test_bound_of_a_bound_variable_is_true() -> None:
    """``BOUND(?v)`` is true for a variable of ``μ`` (SPARQL 1.1 sec. 17.4.1.1), also in
    nested groups: by the ``VALUES`` row, and for a blank node (substituted, where
    pyoxigraph 0.5 says false) by writing it ``true``, leaving strings and unbound
    variables alone."""
    matcher = GraphMatcher()
    for mu in ({"a": Literal("1")}, {"a": BlankNode("b1")}):
        assert matcher.holds("BOUND(?a)", mu) and not matcher.holds("!bound( ?a )", mu)
        assert matcher.holds("!BOUND(?b)", mu)
        text = '{ { FILTER(BOUND(?a) && "BOUND(?a)" != "") } }'
        assert matcher.match(text, [], mu) == [Mu(mu)]


FOURTEEN = Literal("14.0", datatype=NamedNode(XSD + "double"))
PRICES = frozenset(
    {
        Triple(n("a"), P, Literal("14", datatype=NamedNode(XSD + "integer"))),
        Triple(n("b"), P, Literal("14.00", datatype=NamedNode(XSD + "double"))),
        Triple(n("c"), P, TWO),
    }
)


def subjects(text: str, mu: dict[str, Term] | None = None) -> list[str]:
    """The ``?t`` of each solution of ``text`` over :data:`PRICES` under ``μ``."""
    found = GraphMatcher().match(text.replace(":p", f"<{EX}p>"), PRICES, mu or {"v": FOURTEEN})
    return sorted(str(x["t"]).removeprefix(f"<{EX}").removesuffix(">") for x in found)


def test_a_bound_term_is_compared_by_value_in_every_group() -> None:
    """``⟦μ(P)⟧_G`` (SPAseq Def. 7): ``μ``'s term stands in its variable's place, so a
    FILTER compares it by value (SPARQL 1.1 sec. 17.3: ``"14.0"^^xsd:double`` equals
    ``"14"^^xsd:integer``) in the pattern's group and in every group inside it (nested,
    OPTIONAL, UNION, EXISTS), and ``FILTER(?v)`` is its effective boolean value;
    pyoxigraph 0.5's substitutions compared terms there and made ``FILTER(?v)`` false. A
    triple pattern still matches by term (the integer is not the double)."""
    assert subjects("{ ?t :p ?q FILTER (?q = ?v) }") == ["a", "b"]
    assert subjects("{ ?t :p ?q FILTER (?q IN (?v)) }") == ["a", "b"]
    assert subjects("{ ?t :p ?q FILTER (?q != ?v) }") == ["c"]
    assert subjects("{ ?t :p ?v }") == ["b"]
    assert subjects("{ ?t :p ?q { ?t :p ?r FILTER (?r = ?v) } }") == ["a", "b"]
    assert subjects("{ ?t :p ?q OPTIONAL { ?t :p ?r FILTER (?r = ?v) } FILTER BOUND(?r) }") == [
        "a",
        "b",
    ]
    assert subjects("{ { ?t :p ?q FILTER (?q = ?v) } UNION { ?t :p ?v } }") == ["a", "b", "b"]
    assert subjects("{ ?t :p ?q FILTER EXISTS { ?t :p ?r FILTER (?r = ?v) } }") == ["a", "b"]
    assert subjects("{ ?t :p ?q FILTER (?v) }", {"v": Literal("true", datatype=BOOL)}) == [
        "a",
        "b",
        "c",
    ]
    assert subjects("{ ?t :p ?q FILTER (?v) }", {"v": Literal("0", datatype=DEC)}) == []


def test_a_bound_variable_keeps_sparql_scopes() -> None:
    """``μ`` is bound where pyoxigraph's substitutions bound it, and no further: a
    sub-select's variables are its own (SPARQL 1.1 sec. 18.2.1), a ``VALUES`` block of the
    pattern joins with ``μ``, a variable the pattern BINDs is joined with ``μ`` (it cannot
    be bound before the ``BIND``), and a BIND reads ``μ``'s term. Braces in strings and
    comments are text; a pattern given without its braces gets the query's group."""
    inner = "{ ?t :p ?q { SELECT ?t WHERE { ?t :p ?r FILTER (?r = ?v) } } }"
    assert subjects(inner) == []
    assert subjects("{ ?t :p ?q VALUES ?q { 14 2 } FILTER (?q = ?v) }") == ["a"]
    assert subjects("{ ?t :p ?q BIND (?q AS ?v) }") == ["b"]
    assert subjects("{ ?t :p ?q BIND (?v + 0 AS ?w) FILTER (?w = 14) }") == ["a", "b", "c"]
    text = '{ ?t :p ?q # { a comment\n FILTER (?q = ?v && "{" != "}") }'
    assert subjects(text) == ["a", "b"]
    assert subjects("?t :p ?q FILTER (?q = ?v)") == ["a", "b"]  # triples, not a group


def test_value_and_holds() -> None:
    matcher = GraphMatcher()
    mu = {"a": Literal("1.5", datatype=DEC), "b": Literal("x")}
    assert matcher.value("?a * 2", mu) == Literal("3", datatype=DEC)  # computed: canonical
    assert matcher.value("?a", mu) == Literal("1.5", datatype=DEC)
    assert matcher.value("?a + ?b", mu) is None  # a type error: no value
    assert matcher.holds("?a < 2", mu) and not matcher.holds("?a + ?b", mu)
