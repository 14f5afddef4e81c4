"""Nested regular expressions over an RDF graph (rsep.semantics.nested_path): nSPARQL's
axes, nesting and closure as binary relations (Pérez, Arenas, Gutierrez 2010, Sect. 3;
CQELS-CEP, seed 001, Sect. 2.3 and Table 1), CQELS-CEP's Examples 5, 6 and 9 on the Vienna
map of Example 2, and the agreement with SPARQL 1.1 property paths (pyoxigraph) on the
fragment without nesting.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import (
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QuerySolutions,
    Store,
    Triple,
    Variable,
)

from rsep.algebra.compile import compile_query
from rsep.algebra.events import GraphPatternRef
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
)
from rsep.algebra.plan import EventJoin
from rsep.lang import get_dialect, parse_query
from rsep.semantics.event_mapping import Mu
from rsep.semantics.graph import read_graph
from rsep.semantics.nested_path import (
    PathGraph,
    evaluate_path,
    match_path_triple,
    match_path_triples,
)

EX = "http://example.org/"
DATA = Path(__file__).parent / "data" / "cqelscep"


def n(local: str) -> NamedNode:
    return NamedNode(EX + local)


def pairs(*items: tuple[str, str]) -> frozenset[tuple[NamedNode, NamedNode]]:
    return frozenset((n(a), n(b)) for a, b in items)


# A small graph: a -p-> b -p-> c, a -q-> c, c -r-> a; and the predicate p is described
G = PathGraph.of(
    [
        Triple(n("a"), n("p"), n("b")),
        Triple(n("b"), n("p"), n("c")),
        Triple(n("a"), n("q"), n("c")),
        Triple(n("c"), n("r"), n("a")),
        Triple(n("p"), n("kind"), n("transitive")),
    ]
)
VOC = ["a", "b", "c", "p", "q", "r", "kind", "transitive"]

MAP = PathGraph.of(read_graph(DATA / "vienna_map.ttl"))
"""Example 2's background dataset D."""


def background(text: str) -> GraphPatternRef:
    """The graph pattern ``text`` beside an event clause, as the compiler puts it in the
    plan (``:`` is ``http://example.org/``)."""
    query = (
        f"PREFIX : <{EX}> SELECT * FROM NAMED WINDOW :W ON :s [RANGE 1ms] "
        f"WHERE {{ WINDOW :W {{ SEQ ({{?x :e ?y}}, {{?x :e ?y}}) }} {text} }}"
    )
    dialect = get_dialect("cqelscep")
    plan = compile_query(parse_query(query, dialect), dialect)
    assert isinstance(plan.r2r, EventJoin)
    return plan.r2r.graph


def path_triple(text: str) -> PathTriple:
    """The one extended triple pattern of ``text`` as the compiler puts it in the plan."""
    [triple] = background(text).paths
    return triple


# nSPARQL's axes (Sect. 3; seed 001, Table 1) ----------------------------------------------------


def test_self_is_the_identity_on_the_vocabulary_of_the_graph() -> None:
    """[[self]]_G = {(x, x) | x ∈ voc(G)}: subjects, predicates and objects."""
    assert evaluate_path(Axis("self"), G) == pairs(*((x, x) for x in VOC))


def test_self_with_a_label_is_that_one_pair_even_outside_the_graph() -> None:
    """[[self::a]]_G = {(a, a)} (seed 001, Table 1; nSPARQL, Sect. 3)."""
    assert evaluate_path(Axis("self", label=n("zzz")), G) == pairs(("zzz", "zzz"))
    assert evaluate_path(Axis("self", True, n("a")), G) == pairs(("a", "a"))  # self⁻¹ = self


def test_next_edge_node_and_their_labels() -> None:
    """next: subject to object; edge: subject to predicate; node: predicate to object; the
    label fixes the third position."""
    everything = [("a", "p", "b"), ("b", "p", "c"), ("a", "q", "c"), ("c", "r", "a")]
    everything.append(("p", "kind", "transitive"))
    assert evaluate_path(Axis("next"), G) == pairs(*((s, o) for s, _, o in everything))
    assert evaluate_path(Axis("edge"), G) == pairs(*((s, p) for s, p, _ in everything))
    assert evaluate_path(Axis("node"), G) == pairs(*((p, o) for _, p, o in everything))
    assert evaluate_path(Axis("next", label=n("p")), G) == pairs(("a", "b"), ("b", "c"))
    assert evaluate_path(Axis("edge", label=n("c")), G) == pairs(("b", "p"), ("a", "q"))
    assert evaluate_path(Axis("node", label=n("a")), G) == pairs(("p", "b"), ("q", "c"))


def test_inverse_axes_reverse_the_pairs() -> None:
    """[[axis⁻¹]]_G = {(x, y) | (y, x) ∈ [[axis]]_G}, also with a label or nesting."""
    for axis in ("next", "edge", "node"):
        forward = evaluate_path(Axis(axis), G)
        assert evaluate_path(Axis(axis, True), G) == {(y, x) for x, y in forward}
        labelled = evaluate_path(Axis(axis, False, n("p")), G)
        assert evaluate_path(Axis(axis, True, n("p")), G) == {(y, x) for x, y in labelled}
    nested = Axis("next", nested=Axis("next", label=n("kind")))
    assert evaluate_path(Axis("next", True, nested=nested.nested), G) == {
        (y, x) for x, y in evaluate_path(nested, G)
    }


def test_nested_axes_test_the_middle_position() -> None:
    """[[next::[exp]]]_G: the edges whose label z has (z, w) ∈ [[exp]]_G; edge::[exp] and
    node::[exp] test the object and the subject; self::[exp] the node itself."""
    is_transitive = Axis("next", label=n("kind"))  # leads from p only
    assert evaluate_path(Axis("next", nested=is_transitive), G) == pairs(("a", "b"), ("b", "c"))
    leads_to_a = PathSequence((Axis("next"), Axis("self", label=n("a"))))  # from c only
    assert evaluate_path(Axis("edge", nested=leads_to_a), G) == pairs(("a", "q"), ("b", "p"))
    assert evaluate_path(Axis("node", nested=leads_to_a), G) == pairs(("r", "a"))
    assert evaluate_path(Axis("self", nested=leads_to_a), G) == pairs(("c", "c"))


def test_labelled_and_nested_axis_is_the_label_then_a_self_test() -> None:
    """``axis::a[exp]`` = ``axis::a/self::[exp]``, as Example 5's ``next⁻¹::beg[…]`` reads
    against Example 6's ``^:beg/[…]``."""
    test = Axis("next", label=n("q"))
    both = Axis("next", True, n("p"), test)
    spelled = PathSequence((Axis("next", True, n("p")), Axis("self", nested=test)))
    assert evaluate_path(both, G) == evaluate_path(spelled, G) == pairs(("b", "a"))


def test_cqelscep_nested_step_is_self_with_a_nested_expression() -> None:
    """``[e]`` = ``self::[e]`` and ``[e t]`` = ``self::[e/self::t]`` (seed 001, Sect. 3.1,
    Example 6's ``[:means :subway]`` against Example 5's ``[next::means/self::subway]``)."""
    assert evaluate_path(Nested(Link(n("p"))), G) == pairs(("a", "a"), ("b", "b"))
    assert evaluate_path(Nested(Link(n("p")), n("c")), G) == pairs(("b", "b"))
    spelled = Axis(
        "self", nested=PathSequence((Axis("next", label=n("p")), Axis("self", label=n("c"))))
    )
    assert evaluate_path(Nested(Link(n("p")), n("c")), G) == evaluate_path(spelled, G)
    assert evaluate_path(Nested(Link(n("dur")), Literal("3")), G) == frozenset()


def test_concatenation_alternation_and_closures() -> None:
    """exp1/exp2 composes, exp1|exp2 unites, exp+ is the transitive closure and exp* adds
    [[self]]_G (nSPARQL, Sect. 3)."""
    p, q = Link(n("p")), Link(n("q"))
    assert evaluate_path(PathSequence((p, p)), G) == pairs(("a", "c"))
    assert evaluate_path(Alternative((p, q)), G) == pairs(("a", "b"), ("b", "c"), ("a", "c"))
    cycle = Alternative((p, Link(n("r"))))
    plus = evaluate_path(Repeat(cycle, "+"), G)
    assert plus == pairs(*((x, y) for x in "abc" for y in "abc"))
    assert evaluate_path(Repeat(cycle, "*"), G) == plus | evaluate_path(Axis("self"), G)
    assert evaluate_path(Repeat(p, "?"), G) == evaluate_path(p, G) | evaluate_path(Axis("self"), G)


def test_negated_property_sets() -> None:
    """``!(a|^b)`` (SPARQL 1.1 sec. 9.1): forward edges not labelled a, backward not b."""
    assert evaluate_path(NegatedSet((n("p"), n("kind"))), G) == pairs(("a", "c"), ("c", "a"))
    assert evaluate_path(NegatedSet((), (n("p"), n("q"), n("kind"))), G) == pairs(("a", "c"))
    both = NegatedSet((n("p"), n("q"), n("kind")), (n("p"), n("r"), n("kind")))
    assert evaluate_path(both, G) == pairs(("c", "a"))


def test_a_general_inverse_reverses_any_path() -> None:
    """``^e`` on a compound path: SPARQL's ``inv(path)``."""
    forward = evaluate_path(PathSequence((Link(n("p")), Link(n("r")))), G)
    assert forward == pairs(("b", "a"))
    assert evaluate_path(Inverse(PathSequence((Link(n("p")), Link(n("r"))))), G) == pairs(
        ("a", "b")
    )


# Matching extended triple patterns --------------------------------------------------------------


def test_matching_a_path_triple_binds_its_ends() -> None:
    """One mapping per pair; constants select; one variable at both ends needs (x, x)."""
    p_plus = Repeat(Alternative((Link(n("p")), Link(n("r")))), "+")
    found = match_path_triple(PathTriple(Variable("x"), p_plus, n("a")), G)
    assert found == [Mu({"x": n(v)}) for v in "abc"]
    loops = match_path_triple(PathTriple(Variable("x"), p_plus, Variable("x")), G)
    assert loops == [Mu({"x": n(v)}) for v in "abc"]
    assert match_path_triple(PathTriple(n("a"), Link(n("p")), n("b")), G) == [Mu()]
    assert match_path_triple(PathTriple(n("b"), Link(n("p")), n("a")), G) == []


def test_several_path_triples_join() -> None:
    first = PathTriple(Variable("x"), Link(n("p")), Variable("y"))
    second = PathTriple(Variable("y"), Link(n("p")), Variable("z"))
    assert match_path_triples([first, second], G) == [Mu({"x": n("a"), "y": n("b"), "z": n("c")})]
    assert match_path_triples([], G) == [Mu()]


# The paper's examples ----------------------------------------------------------------------------


def test_example_5_stops_from_which_the_centre_is_reached_by_subway() -> None:
    """Example 5: ``?s (next⁻¹::beg[next::means/self::subway]/next::end)+ :c`` over D of
    Example 2: m (m -> b -> c) and b (b -> c); not h (h -> g by subway, g -> c by tram)."""
    triple = path_triple("?s (next-1::beg[next::means/self::subway]/next::end)+ :c .")
    assert match_path_triple(triple, MAP) == [Mu({"s": n("b")}), Mu({"s": n("m")})]
    step = triple.path
    assert isinstance(step, Repeat)
    assert evaluate_path(step.path, MAP) == pairs(("m", "b"), ("b", "c"), ("h", "g"))


def test_example_6_writes_example_5_in_sparql_syntax() -> None:
    """Example 6, line 9: ``?s (^:beg/[:means :subway]/:end)+ :c`` is Example 5's
    expression in SPARQL 1.1 syntax extended with nesting: the same relation."""
    ex6 = path_triple("?s (^:beg/[:means :subway]/:end)+ :c .")
    ex5 = path_triple("?s (next-1::beg[next::means/self::subway]/next::end)+ :c .")
    assert evaluate_path(ex6.path, MAP) == evaluate_path(ex5.path, MAP)
    assert evaluate_path(ex6.path, MAP) == pairs(("m", "b"), ("b", "c"), ("h", "g"), ("m", "c"))


def test_example_9_background_pattern_over_d() -> None:
    """Example 9: "{?v ↦ d1, ?s ↦ h} is not in Ω5 because there is no all-subway path from
    h to c"; the path part of P gives s ∈ {m, b}."""
    found = match_path_triples([path_triple("?s (^:beg/[:means :subway]/:end)+ :c .")], MAP)
    assert {mu["s"] for mu in found} == {n("m"), n("b")}


def test_zero_length_paths_differ_from_sparql_on_predicates() -> None:
    """nSPARQL's ``exp*`` contains ``[[self]]_G`` over ``voc(G)``, predicates included;
    SPARQL 1.1's zero-length path pairs only the subjects and objects (sec. 18.4), and
    pairs a constant with itself even outside the graph. docs/semantics.md, CQELS-CEP."""
    star = Repeat(Link(n("p")), "*")
    ours = evaluate_path(star, G)
    assert (n("q"), n("q")) in ours and (n("r"), n("r")) in ours
    assert sparql_pairs(star, G) == {
        (x, y) for x, y in ours if x not in {n("q"), n("r"), n("kind")}
    }
    assert match_path_triple(PathTriple(n("zzz"), star, Variable("y")), G) == []


# Without nesting, a nested regular expression is a SPARQL 1.1 property path ---------------------

NODES = [n(x) for x in ("a", "b", "c", "d")]
PREDICATES = [n(x) for x in ("p", "q", "r")]


def sparql_pairs(path: PathExpr, graph: PathGraph) -> set[tuple[object, object]]:
    """``SELECT DISTINCT ?x ?y WHERE { ?x path ?y }`` by pyoxigraph."""
    store = Store()
    store.extend(Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in graph.triples)
    rows = store.query(f"SELECT DISTINCT ?x ?y WHERE {{ ?x {path} ?y }}")
    assert isinstance(rows, QuerySolutions)
    return {(row["x"], row["y"]) for row in rows}


def plain_paths(zero_length: bool) -> st.SearchStrategy[PathExpr]:
    """Random SPARQL 1.1 paths (no nesting, no axis)."""
    links = st.sampled_from(PREDICATES).map(Link)
    iris = st.lists(st.sampled_from(PREDICATES), max_size=2, unique=True).map(tuple)
    negated = (
        st.tuples(iris, iris)
        .filter(lambda sides: bool(sides[0] or sides[1]))
        .map(lambda sides: NegatedSet(*sides))
    )
    modifiers = ["+", "*", "?"] if zero_length else ["+"]

    def extend(inner: st.SearchStrategy[PathExpr]) -> st.SearchStrategy[PathExpr]:
        return st.one_of(
            inner.map(Inverse),
            st.lists(inner, min_size=2, max_size=3).map(lambda s: PathSequence(tuple(s))),
            st.lists(inner, min_size=2, max_size=3).map(lambda s: Alternative(tuple(s))),
            st.builds(Repeat, inner, st.sampled_from(modifiers)),
        )

    return st.recursive(st.one_of(links, negated), extend, max_leaves=5)


graphs = st.lists(
    st.tuples(st.sampled_from(NODES), st.sampled_from(PREDICATES), st.sampled_from(NODES)),
    max_size=8,
).map(lambda ts: PathGraph.of(Triple(s, p, o) for s, p, o in ts))


@settings(max_examples=150, deadline=None)
@given(plain_paths(zero_length=False), graphs)
def test_without_nesting_and_zero_length_the_relation_is_sparqls(
    path: PathExpr, graph: PathGraph
) -> None:
    """Seed 001, Sect. 2.3: SPARQL 1.1 property paths cover a fragment of nSPARQL without
    nesting; on it our relation is pyoxigraph's answer (as a set)."""
    assert evaluate_path(path, graph) == sparql_pairs(path, graph)


@settings(max_examples=150, deadline=None)
@given(plain_paths(zero_length=True), graphs)
def test_with_zero_length_paths_the_relation_is_sparqls_on_the_graphs_nodes(
    path: PathExpr, graph: PathGraph
) -> None:
    """With ``*`` and ``?``, nSPARQL's ``self`` also pairs each predicate with itself: on
    the pairs of subjects and objects the two agree (docs/semantics.md, CQELS-CEP)."""
    nodes = {t.subject for t in graph.triples} | {t.object for t in graph.triples}
    ours = {(x, y) for x, y in evaluate_path(path, graph) if x in nodes and y in nodes}
    assert ours == sparql_pairs(path, graph)


def test_a_path_without_nesting_stays_in_the_sparql_text() -> None:
    """Only paths with a nested step or an axis leave the text: pyoxigraph evaluates the
    others, with SPARQL 1.1's semantics."""
    ref = background("?s :beg/:end :c . ?s (^:beg/[:means :subway]/:end)+ :c .")
    assert "<http://example.org/beg>/<http://example.org/end>" in ref.text.replace(" ", "")
    assert len(ref.paths) == 1 and "means" not in ref.text
