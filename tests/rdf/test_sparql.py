"""SPARQL over one graph (rsep.rdf.sparql): solution mappings, matching under a mapping,
expressions, literals given back as the data wrote them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.rdf.terms import XSD

EX = "http://example.org/"
P = NamedNode(EX + "p")
DEC = NamedNode(XSD + "decimal")
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


def test_bound_of_a_substituted_variable_is_true() -> None:
    """pyoxigraph 0.5 evaluates ``BOUND(?v)`` of a substituted variable to false; the matcher
    writes it ``true`` (SPARQL 1.1 sec. 17.4.1.1), also in nested groups, and leaves strings
    and unbound variables alone."""
    matcher = GraphMatcher()
    mu = {"a": Literal("1")}
    assert matcher.holds("BOUND(?a)", mu) and not matcher.holds("!bound( ?a )", mu)
    assert matcher.holds("!BOUND(?b)", mu)
    assert matcher.match('{ { FILTER(BOUND(?a) && "BOUND(?a)" != "") } }', [], mu) == [Mu(mu)]


def test_value_and_holds() -> None:
    matcher = GraphMatcher()
    mu = {"a": Literal("1.5", datatype=DEC), "b": Literal("x")}
    assert matcher.value("?a * 2", mu) == Literal("3", datatype=DEC)  # computed: canonical
    assert matcher.value("?a", mu) == Literal("1.5", datatype=DEC)
    assert matcher.value("?a + ?b", mu) is None  # a type error: no value
    assert matcher.holds("?a < 2", mu) and not matcher.holds("?a + ?b", mu)
