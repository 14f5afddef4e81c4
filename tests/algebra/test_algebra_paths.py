"""Nested regular expressions in the plan (rsep.algebra.paths): construction, printing in
CQELS-CEP syntax, what the compiler takes out of the SPARQL text (seed 001, Sect. 2.3, 3.1,
Example 6) and what it refuses, and ``explain``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Variable

from rsep.algebra.compile import compile_query
from rsep.algebra.events import CepJoin, CepSeq, CepWindow, GraphPatternRef
from rsep.algebra.paths import (
    Alternative,
    Axis,
    Inverse,
    Link,
    NegatedSet,
    Nested,
    PathExpr,
    PathSequence,
    PathTriple,
    Repeat,
    is_nested,
)
from rsep.algebra.plan import EventJoin, Plan, explain
from rsep.lang import QuerySemanticError, get_dialect, parse_query

EX = "http://example.org/"
PREFIXES = (
    f"PREFIX : <{EX}> PREFIX ex: <http://example.org/ex#> "
    "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
)

EXAMPLE_6 = (
    PREFIXES
    + """SELECT ?s
FROM ex:transportationMap
FROM NAMED WINDOW :W ON ex:publicTransport [RANGE 10m]
WHERE {
  WINDOW :W {
    SEQ ({?v :delayAt ?s}, {?v :delayAt ?s}, !{?v :arriveAt ?s})
  }
  ?v rdf:type :subway .
  ?s (^:beg/[:means :subway]/:end)+ :c.
}
"""
)


def n(local: str) -> NamedNode:
    return NamedNode(EX + local)


def compiled(text: str, **kw: Any) -> Plan:
    dialect = get_dialect("cqelscep")
    return compile_query(parse_query(text, dialect), dialect, **kw)


def with_background(body: str) -> str:
    """A CQELS-CEP query whose graph pattern beside the event clause is ``body``."""
    return (
        PREFIXES + "SELECT * FROM NAMED WINDOW :W ON :s [RANGE 1ms] "
        "WHERE { WINDOW :W { SEQ ({?x :e ?y}, {?x :e ?y}) } " + body + " }"
    )


def background(body: str) -> GraphPatternRef:
    plan = compiled(with_background(body))
    assert isinstance(plan.r2r, EventJoin)
    return plan.r2r.graph


# The tree ---------------------------------------------------------------------------------------

EXAMPLE_6_PATH = Repeat(
    PathSequence((Inverse(Link(n("beg"))), Nested(Link(n("means")), n("subway")), Link(n("end")))),
    "+",
)


def test_nodes_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="two steps"):
        PathSequence((Link(n("p")),))
    with pytest.raises(ValueError, match="two options"):
        Alternative((Link(n("p")),))
    with pytest.raises(ValueError, match="modifier"):
        Repeat(Link(n("p")), "{2}")
    with pytest.raises(ValueError, match="nSPARQL axis"):
        Axis("child")
    with pytest.raises(ValueError, match="at least one IRI"):
        NegatedSet()


def test_structural_equality_and_hashing() -> None:
    again = Repeat(
        PathSequence(
            (Inverse(Link(n("beg"))), Nested(Link(n("means")), n("subway")), Link(n("end")))
        ),
        "+",
    )
    assert again == EXAMPLE_6_PATH and hash(again) == hash(EXAMPLE_6_PATH)
    assert again != Repeat(again.path, "*")


def test_printing_in_cqelscep_syntax() -> None:
    """Example 6's path, nSPARQL's axes, and parentheses only where the SPARQL 1.1 path
    grammar needs them (sec. 19.8, [88]-[94])."""
    p, q = Link(n("p")), Link(n("q"))
    assert str(EXAMPLE_6_PATH) == f"(^<{EX}beg>/[<{EX}means> <{EX}subway>]/<{EX}end>)+"
    test = PathSequence((Axis("next", label=n("means")), Axis("self", label=n("subway"))))
    example_5_step = Axis("next", True, n("beg"), test)
    assert str(example_5_step) == f"next-1::<{EX}beg>[next::<{EX}means>/self::<{EX}subway>]"
    assert str(Axis("edge", nested=p)) == f"edge::[<{EX}p>]"
    assert str(Axis("node", True)) == "node-1"
    assert str(Inverse(Repeat(p, "+"))) == f"^<{EX}p>+"
    assert str(Repeat(Inverse(p), "+")) == f"(^<{EX}p>)+"
    assert str(Inverse(Inverse(p))) == f"^(^<{EX}p>)"
    assert str(Alternative((PathSequence((p, q)), q))) == f"<{EX}p>/<{EX}q>|<{EX}q>"
    assert str(PathSequence((Alternative((p, q)), q))) == f"(<{EX}p>|<{EX}q>)/<{EX}q>"
    assert str(NegatedSet((n("p"),), (n("q"),))) == f"!(<{EX}p>|^<{EX}q>)"
    assert str(NegatedSet((n("p"),))) == f"!<{EX}p>"
    assert str(Nested(p, Literal("3"))) == f'[<{EX}p> "3"]'
    triple = PathTriple(Variable("s"), EXAMPLE_6_PATH, n("c"))
    assert str(triple) == f"?s {EXAMPLE_6_PATH} <{EX}c> ."
    assert triple.variables == {"s"}


def test_is_nested() -> None:
    assert is_nested(EXAMPLE_6_PATH)
    assert is_nested(Alternative((Link(n("p")), Axis("self"))))
    assert not is_nested(Repeat(PathSequence((Inverse(Link(n("p"))), Link(n("q")))), "*"))


# The compiler ---------------------------------------------------------------------------------


def test_example_6_background_carries_the_nested_path() -> None:
    """Example 7's P = {?v rdf:type :subway. ?s (^:beg/[:means :subway]/:end)+ :c.}: the
    first triple stays SPARQL text, the second is a path triple of the plan."""
    plan = compiled(EXAMPLE_6)
    assert isinstance(plan.r2r, EventJoin)
    graph = plan.r2r.graph
    assert graph.paths == (PathTriple(Variable("s"), EXAMPLE_6_PATH, n("c")),)
    assert "means" not in graph.text and f"<{EX}subway>" in graph.text
    assert graph.variables == {"s", "v"}
    text = explain(plan)
    assert f"joined with nested path ?s {EXAMPLE_6_PATH} <{EX}c> ." in text


def test_several_objects_and_a_shared_subject() -> None:
    ref = background("?s :name ?n ; :a/[:b] :c, ?o .")
    assert [str(t.object) for t in ref.paths] == [f"<{EX}c>", "?o"]
    assert "name" in ref.text and ref.variables == {"s", "n", "o"}


def test_the_axes_of_example_5_compile() -> None:
    ref = background("?s (next-1::beg[next::means/self::subway]/next::end)+ :c .")
    [triple] = ref.paths
    step = Axis(
        "next",
        True,
        n("beg"),
        PathSequence((Axis("next", label=n("means")), Axis("self", label=n("subway")))),
    )
    assert triple.path == Repeat(PathSequence((step, Axis("next", label=n("end")))), "+")
    assert ref.text.split() == ["{", "}"]


def test_filters_stay_beside_path_triples() -> None:
    ref = background("?s :a/[:b] ?o . FILTER (?o != :c)")
    assert len(ref.paths) == 1 and "FILTER" in ref.text


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("OPTIONAL { ?s :a/[:b] ?o }", "not compiled yet"),
        ("?s :a/[:b] ?o . OPTIONAL { ?s :c ?d }", "beside anything but triples and FILTERs"),
        ("{ ?s :a/[:b] ?o } UNION { ?s :c ?o }", "not compiled yet"),
        ("?s :a/[:b ?z] ?o .", "a variable or blank node inside a nested path"),
        ("[] :a/[:b] ?o .", "blank node or collection at the end"),
        ("FILTER EXISTS { ?s next ?o }", "not compiled yet"),
        ("OPTIONAL { WINDOW :W { ?s :p ?o } }", "a window inside another pattern"),
    ],
)
def test_what_is_not_compiled_yet(body: str, message: str) -> None:
    with pytest.raises(QuerySemanticError, match=message):
        compiled(with_background(body))


def test_a_nested_path_outside_the_background_of_an_event_clause_is_refused() -> None:
    """Without an event clause the plan is a SPARQL pattern pyoxigraph evaluates; a nested
    path there is not compiled yet (rather than silently read as something else)."""
    query = PREFIXES + "SELECT ?s FROM ex:map WHERE { ?s (^:beg/[:means :subway]/:end)+ :c }"
    with pytest.raises(QuerySemanticError, match="not compiled yet") as caught:
        compiled(query)
    assert "line 2" in str(caught.value)


def test_other_windows_beside_a_seq_are_event_clauses_joined_with_it() -> None:
    """Sect. 3.1-3.2: ``WINDOW :W2 { P }`` is a window specification with a triples
    template, an event clause of EC, joined with the others (Eq. (2))."""
    query = (
        PREFIXES + "SELECT * FROM NAMED WINDOW :W ON :s [RANGE 1ms] "
        "FROM NAMED WINDOW :W2 ON :t [RANGE 5ms] WHERE { "
        "WINDOW :W { SEQ ({?x :e ?y}, {?x :e ?y}) } WINDOW :W2 { ?x :f ?z } ?z :g ?w }"
    )
    plan = compiled(query)
    assert isinstance(plan.r2r, EventJoin)
    clauses = plan.r2r.event
    assert isinstance(clauses, CepJoin) and isinstance(clauses.left, CepWindow)
    assert isinstance(clauses.left.pattern, CepSeq)
    right = clauses.right
    assert isinstance(right, CepWindow) and right.stream == EX + "t"
    assert isinstance(right.pattern, GraphPatternRef) and right.pattern.variables == {"x", "z"}
    assert "GRAPH" not in plan.r2r.graph.text


# Round trip: printed paths read back --------------------------------------------------------------

IRIS = [n(x) for x in ("p", "q", "r")]


def paths() -> st.SearchStrategy[PathExpr]:
    """Random trees of every kind of node."""
    links = st.sampled_from(IRIS).map(Link)
    axes = st.builds(
        Axis,
        st.sampled_from(["self", "next", "edge", "node"]),
        st.booleans(),
        st.one_of(st.none(), st.sampled_from(IRIS)),
    )
    iris = st.lists(st.sampled_from(IRIS), max_size=2, unique=True).map(tuple)
    negated = (
        st.tuples(iris, iris)
        .filter(lambda sides: bool(sides[0] or sides[1]))
        .map(lambda sides: NegatedSet(*sides))
    )

    def extend(inner: st.SearchStrategy[PathExpr]) -> st.SearchStrategy[PathExpr]:
        return st.one_of(
            inner.map(Inverse),
            st.lists(inner, min_size=2, max_size=3).map(lambda s: PathSequence(tuple(s))),
            st.lists(inner, min_size=2, max_size=3).map(lambda s: Alternative(tuple(s))),
            st.builds(Repeat, inner, st.sampled_from(["*", "+", "?"])),
            st.builds(Nested, inner, st.one_of(st.none(), st.sampled_from(IRIS))),
            st.builds(
                Axis,
                st.sampled_from(["self", "next", "edge", "node"]),
                st.booleans(),
                st.one_of(st.none(), st.sampled_from(IRIS)),
                inner,
            ),
        )

    return st.recursive(st.one_of(links, axes, negated), extend, max_leaves=5)


@settings(max_examples=60, deadline=None)
@given(paths().filter(is_nested))
def test_a_printed_path_compiles_back_to_itself(path: PathExpr) -> None:
    """``str()`` is CQELS-CEP syntax: the compiler reads it back into the same tree."""
    ref = background(f"?s {path} ?o .")
    assert ref.paths == (PathTriple(Variable("s"), path, Variable("o")),)
