"""The SPARQL 1.1 AST (rsep.lang.ast) and its builder (rsep.lang.build).

Building: a selection of constructs with the tree they must give; source positions; prefix
and BASE resolution (RFC 3986 Sec. 5.4, checked against pyoxigraph too); structural equality
and hashing (differently written texts of one query give equal trees); errors; and how a
dialect extends the tree, the builder and the printer.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest
from lark import Token, v_args
from lark.tree import Meta
from pyoxigraph import QuerySolutions, Store

from rsep.lang import ast
from rsep.lang.ast import (
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    XSD_STRING,
    Aggregate,
    Alias,
    Binary,
    Bind,
    BlankNode,
    BlankNodePropertyList,
    BuiltIn,
    Collection,
    Exists,
    Filter,
    FunctionCall,
    GroupPattern,
    In,
    Iri,
    Literal,
    OrderCondition,
    PathAlternative,
    PathInverse,
    PathModified,
    PathNegated,
    PathSequence,
    Property,
    Query,
    Select,
    SubSelect,
    Triples,
    TriplesBlock,
    Unary,
    Var,
)
from rsep.lang.build import Builder, build, parse_query, remove_dot_segments, resolve_iri
from rsep.lang.checks import QuerySemanticError
from rsep.lang.parser import build_parser, parse_sparql, parse_with
from rsep.lang.printer import Printer, to_sparql
from rsep.rdf.terms import RDF

EX = "http://example.org/"
PRE = f"PREFIX : <{EX}>\n"


def q(text: str) -> Query:
    """Parse, check and build, with ``:`` declared."""
    return parse_query(PRE + text)


def where(text: str) -> tuple[ast.Pattern, ...]:
    """The elements of ``SELECT * { text }``."""
    group = q(f"SELECT * {{ {text} }}").where
    assert isinstance(group, GroupPattern)
    return group.elements


def block_of(query: Query) -> TriplesBlock:
    """The one triples block of a query's WHERE clause."""
    assert isinstance(query.where, GroupPattern)
    (block,) = query.where.elements
    assert isinstance(block, TriplesBlock)
    return block


def expr(text: str) -> ast.Expr:
    """The expression of ``FILTER (text)``."""
    (element,) = where(f"FILTER ({text})")
    assert isinstance(element, Filter)
    return element.expr


def i(local: str) -> Iri:
    return Iri(EX + local)


def v(name: str) -> Var:
    return Var(name)


def num(lexical: str, datatype: str = XSD_INTEGER) -> Literal:
    return Literal(lexical, datatype)


def triple(s: ast.GraphNode, p: ast.Var | ast.Iri | ast.Path, *o: ast.GraphNode) -> Triples:
    return Triples(s, (Property(p, o),))


# Building: constructs and their trees ---------------------------------------------------


def test_select_query_with_every_clause() -> None:
    query = q(
        "SELECT DISTINCT ?s (COUNT(?o) AS ?n) FROM <http://g> FROM NAMED :h\n"
        "WHERE { ?s :p ?o } GROUP BY ?s HAVING (COUNT(?o) > 1) ORDER BY DESC(?n) ?s\n"
        "LIMIT 10 OFFSET 5 VALUES ?s { :a UNDEF }"
    )
    count = Aggregate("COUNT", v("o"))
    assert query == Query(
        prologue=(ast.Prefix("", EX),),
        form=Select((v("s"), Alias(count, v("n"))), distinct=True),
        dataset=(ast.From(Iri("http://g")), ast.From(i("h"), named=True)),
        where=GroupPattern((TriplesBlock((triple(v("s"), i("p"), v("o")),)),)),
        group_by=(v("s"),),
        having=(Binary(">", count, num("1")),),
        order_by=(OrderCondition(v("n"), descending=True), OrderCondition(v("s"))),
        limit=10,
        offset=5,
        values=ast.Values((v("s"),), ((i("a"),), (None,))),
    )
    assert query.base is None
    assert query.prefixes == {"": EX}


def test_query_forms() -> None:
    construct = q("CONSTRUCT { ?s :p [ :q 1 ] } WHERE { ?s :p ?o }")
    blank = BlankNodePropertyList((Property(i("q"), (num("1"),)),))
    assert construct.form == ast.Construct((triple(v("s"), i("p"), blank),))
    assert q("ASK { }").form == ast.Ask()
    assert q("ASK { }").where == GroupPattern()
    described = q("DESCRIBE ?x :a")
    assert described.form == ast.Describe((v("x"), i("a")))
    assert described.where is None
    assert q("DESCRIBE * WHERE { ?x ?p ?o }").form == ast.Describe(None)


def test_construct_where_is_the_long_form() -> None:
    """16.2.4: ``CONSTRUCT WHERE { T }`` is ``CONSTRUCT { T } WHERE { T }``."""
    short = q("CONSTRUCT WHERE { ?s :p ?o . ?o :q ?s }")
    long = q("CONSTRUCT { ?s :p ?o . ?o :q ?s } WHERE { ?s :p ?o . ?o :q ?s }")
    assert short == long
    assert q("CONSTRUCT WHERE { }") == q("CONSTRUCT { } WHERE { }")


def test_triples_keep_their_syntax() -> None:
    (block,) = where("?s :p ?o, ?o2 ; a :C ; . [ :q ( 1 ?x () ) ] . [] :r _:b1")
    assert block == TriplesBlock(
        (
            Triples(
                v("s"),
                (Property(i("p"), (v("o"), v("o2"))), Property(Iri(RDF_TYPE), (i("C"),))),
            ),
            Triples(
                BlankNodePropertyList(
                    (Property(i("q"), (Collection((num("1"), v("x"), Collection())),)),)
                )
            ),
            triple(BlankNode(), i("r"), BlankNode("b1")),
        )
    )


def test_property_paths() -> None:
    (block,) = where("?s :a/^:b*|!(a|^:c)|(:d)+ ?o . ?s !:e ?o . ?s !() ?o . ?s ^(:f/:g)? ?o")
    assert isinstance(block, TriplesBlock)
    verbs = [t.properties[0].verb for t in block.triples]
    assert verbs == [
        PathAlternative(
            (
                PathSequence((i("a"), PathInverse(PathModified(i("b"), "*")))),
                PathNegated((Iri(RDF_TYPE), PathInverse(i("c")))),
                PathModified(i("d"), "+"),
            )
        ),
        PathNegated((i("e"),)),
        PathNegated(()),
        PathInverse(PathModified(PathSequence((i("f"), i("g"))), "?")),
    ]


def test_group_elements_in_order() -> None:
    elements = where(
        "?s :p ?o . FILTER(?o) ?s :q ?z OPTIONAL { ?s :r ?r } { ?a :b ?c } UNION { } UNION "
        "{ SELECT ?a { } } MINUS { ?s :t 1 } GRAPH ?g { } SERVICE SILENT :svc { } "
        "BIND (1 AS ?one) VALUES (?x ?y) { (1 UNDEF) } { } { SELECT * { } }"
    )
    kinds = [type(e).__name__ for e in elements]
    assert kinds == [
        *["TriplesBlock", "Filter", "TriplesBlock", "Optional", "Union", "Minus", "Graph"],
        *["Service", "Bind", "Values", "GroupPattern", "SubSelect"],
    ]
    union = elements[4]
    assert isinstance(union, ast.Union)
    assert union.branches[1:] == (GroupPattern(), SubSelect(Select((v("a"),)), GroupPattern()))
    assert elements[7] == ast.Service(i("svc"), GroupPattern(), silent=True)
    assert elements[8] == Bind(num("1"), v("one"))
    assert elements[9] == ast.Values((v("x"), v("y")), ((num("1"), None),))


def test_sub_select_with_modifiers() -> None:
    (sub,) = where("{ SELECT ?s { ?s ?p ?o } ORDER BY ?s LIMIT 1 VALUES ?s { :a } }")
    assert sub == SubSelect(
        Select((v("s"),)),
        GroupPattern((TriplesBlock((triple(v("s"), v("p"), v("o")),)),)),
        order_by=(OrderCondition(v("s")),),
        limit=1,
        values=ast.Values((v("s"),), ((i("a"),),)),
    )


def test_literals() -> None:
    (block,) = where(
        "?s ?p 'a', \"b\"@EN-gb, '1'^^:t, 1, -2.5, +1e3, true, FALSE, '''x\ny''', 'e\\t\\u00e9'"
    )
    assert isinstance(block, TriplesBlock)
    assert block.triples[0].properties[0].objects == (
        Literal("a"),
        Literal("b", lang="en-gb"),
        Literal("1", EX + "t"),
        num("1"),
        num("-2.5", XSD_DECIMAL),
        num("+1e3", XSD_DOUBLE),
        Literal("true", XSD_BOOLEAN),
        Literal("false", XSD_BOOLEAN),
        Literal("x\ny"),
        Literal("e\té"),
    )
    false = block.triples[0].properties[0].objects[7]
    assert isinstance(false, Literal)
    assert false.written == "FALSE"  # kept for printing, not compared
    assert Literal("a").datatype == XSD_STRING
    assert Literal("a", lang="EN").datatype == ast.RDF_LANG_STRING


def test_expression_precedence_is_the_tree() -> None:
    x, y, z = v("x"), v("y"), v("z")
    assert expr("?x + ?y * ?z") == Binary("+", x, Binary("*", y, z))
    assert expr("(?x + ?y) * ?z") == Binary("*", Binary("+", x, y), z)
    assert expr("?x - ?y - ?z") == Binary("-", Binary("-", x, y), z)
    assert expr("?x || ?y && ?z") == Binary("||", x, Binary("&&", y, z))
    assert expr("?x && ?y || ?z") == Binary("||", Binary("&&", x, y), z)
    assert expr("?x + 1 < ?y * 2") == Binary(
        "<", Binary("+", x, num("1")), Binary("*", y, num("2"))
    )
    assert expr("!?x && -?y") == Binary("&&", Unary("!", x), Unary("-", y))
    assert expr("?x NOT IN (1, ?y) || ?z IN ()") == Binary(
        "||", In(x, (num("1"), y), negated=True), In(z, ())
    )


def test_signed_number_after_an_operand_is_an_operator_and_a_number() -> None:
    """19.8, [116]: ``?x +1 * 2`` is ``?x + (1 * 2)``, equal to ``?x + 1 * 2``."""
    x = v("x")
    assert expr("?x +1 * 2") == Binary("+", x, Binary("*", num("1"), num("2")))
    assert expr("?x +1 * 2") == expr("?x + 1 * 2")
    assert expr("?x -1") == expr("?x - 1") == Binary("-", x, num("1"))
    assert expr("?x - -1") == Binary("-", x, num("-1"))
    assert expr("?x * -1") == Binary("*", x, num("-1"))
    assert expr("-1") == num("-1")
    assert expr("- 1") == Unary("-", num("1"))


def test_calls_aggregates_and_exists() -> None:
    x = v("x")
    assert expr("STR(?x)") == BuiltIn("STR", (x,))
    assert expr("sameterm(?x, ?x)") == BuiltIn("SAMETERM", (x, x))
    assert expr("BNODE()") == BuiltIn("BNODE")
    assert expr("BNODE(?x)") == BuiltIn("BNODE", (x,))
    assert expr("CONCAT()") == BuiltIn("CONCAT")
    assert expr("COALESCE(?x, 1)") == BuiltIn("COALESCE", (x, num("1")))
    assert expr("REGEX(?x, 'a', 'i')") == BuiltIn("REGEX", (x, Literal("a"), Literal("i")))
    assert expr("SUBSTR(?x, 1)") == BuiltIn("SUBSTR", (x, num("1")))
    assert expr("REPLACE(?x, 'a', 'b')") == BuiltIn("REPLACE", (x, Literal("a"), Literal("b")))
    assert expr("BOUND(?x)") == BuiltIn("BOUND", (x,))
    assert expr("IF(?x, 1, 2)") == BuiltIn("IF", (x, num("1"), num("2")))
    assert expr("RAND()") == BuiltIn("RAND")
    assert expr(":f(DISTINCT ?x, 1)") == FunctionCall(i("f"), (x, num("1")), distinct=True)
    assert expr(":f()") == FunctionCall(i("f"))
    assert expr(":f") == i("f")
    assert expr("NOT EXISTS { ?x ?p ?o }") == Exists(
        GroupPattern((TriplesBlock((triple(x, v("p"), v("o")),)),)), negated=True
    )
    select = q(
        "SELECT (COUNT(DISTINCT *) AS ?a) (GROUP_CONCAT(?x; SEPARATOR='|') AS ?b) "
        "(SAMPLE(?x) AS ?c) {}"
    ).form
    assert isinstance(select, Select) and select.projection is not None
    assert [p.expr for p in select.projection if isinstance(p, Alias)] == [
        Aggregate("COUNT", None, distinct=True),
        Aggregate("GROUP_CONCAT", x, separator="|"),
        Aggregate("SAMPLE", x),
    ]


def test_group_by_and_order_by_forms() -> None:
    query = q("SELECT ?k { } GROUP BY ?k (?k) STR(?k) :f(?k) (?k + 1) (?k AS ?j)")
    k = v("k")
    assert query.group_by == (
        k,
        k,
        BuiltIn("STR", (k,)),
        FunctionCall(i("f"), (k,)),
        Binary("+", k, num("1")),
        Alias(k, v("j")),
    )
    ordered = q("SELECT * { } ORDER BY ASC(?k) ?k DESC(?k + 1) STR(?k)").order_by
    assert ordered == (
        OrderCondition(k),
        OrderCondition(k),
        OrderCondition(Binary("+", k, num("1")), descending=True),
        OrderCondition(BuiltIn("STR", (k,))),
    )


# Source positions --------------------------------------------------------------------------


def test_positions_point_into_the_text() -> None:
    text = "PREFIX : <http://example.org/>\nSELECT ?s\nWHERE {\n  ?s :p 'o' .\n  FILTER (?s)\n}"
    query = parse_query(text)
    assert query.pos is not None and (query.pos.line, query.pos.column) == (1, 1)
    assert query.prologue[0].pos == ast.Position(1, 1, 1, 31)
    assert str(query.form.pos) == "2:1"
    group = query.where
    assert isinstance(group, GroupPattern)
    assert str(group.pos) == "3:7"
    block, filter_ = group.elements
    assert isinstance(block, TriplesBlock) and isinstance(filter_, Filter)
    subject = block.triples[0].subject
    prop = block.triples[0].properties[0]
    assert (str(subject.pos), str(prop.verb.pos), str(prop.objects[0].pos)) == ("4:3", "4:6", "4:9")
    assert prop.pos == ast.Position(4, 6, 4, 12)
    assert str(filter_.pos) == "5:3"
    assert str(filter_.expr.pos) == "5:11"


def test_positions_of_operators_span_their_operands() -> None:
    e = expr("?a +1 * ?b")
    assert isinstance(e, Binary) and e.pos is not None
    right = e.right
    assert isinstance(right, Binary) and isinstance(right.left, Literal)
    assert right.left.pos is not None
    assert e.pos.end_column - e.pos.column == len("?a +1 * ?b")
    # the '1' of '+1' starts one column after the sign
    assert right.left.pos.column == e.pos.column + len("?a +")


def test_positions_take_no_part_in_equality() -> None:
    here = Var("x", pos=ast.Position(1, 1, 1, 3))
    there = Var("x", pos=ast.Position(9, 9, 9, 11))
    assert here == there == Var("x")
    assert hash(here) == hash(there)
    assert "pos" not in repr(here)


# Prefix and BASE resolution ----------------------------------------------------------------

RFC_BASE = "http://a/b/c/d;p?q"
# RFC 3986, Sec. 5.4.1 (normal) and 5.4.2 (abnormal) examples.
RFC_EXAMPLES = {
    **{"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/"},
    **{"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y"},
    **{"g?y": "http://a/b/c/g?y", "#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s"},
    **{"g?y#s": "http://a/b/c/g?y#s", ";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x"},
    **{"g;x?y#s": "http://a/b/c/g;x?y#s", "": "http://a/b/c/d;p?q", ".": "http://a/b/c/"},
    **{"./": "http://a/b/c/", "..": "http://a/b/", "../": "http://a/b/", "../g": "http://a/b/g"},
    **{"../..": "http://a/", "../../": "http://a/", "../../g": "http://a/g"},
    **{"../../../g": "http://a/g", "../../../../g": "http://a/g", "/./g": "http://a/g"},
    **{"/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g"},
    **{"g..": "http://a/b/c/g..", "..g": "http://a/b/c/..g", "./../g": "http://a/b/g"},
    **{"./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h", "g/../h": "http://a/b/c/h"},
    **{"g;x=1/./y": "http://a/b/c/g;x=1/y", "g;x=1/../y": "http://a/b/c/y"},
    **{"g?y/./x": "http://a/b/c/g?y/./x", "g?y/../x": "http://a/b/c/g?y/../x"},
    **{"g#s/./x": "http://a/b/c/g#s/./x", "g#s/../x": "http://a/b/c/g#s/../x"},
    **{"http:g": "http:g"},
}


@pytest.mark.parametrize(("reference", "expected"), RFC_EXAMPLES.items())
def test_rfc3986_resolution(reference: str, expected: str) -> None:
    assert resolve_iri(reference, RFC_BASE) == expected
    built = parse_query(f"BASE <{RFC_BASE}> SELECT * {{ <{reference}> ?p ?o }}")
    assert block_of(built).triples[0].subject == Iri(expected)


def test_resolution_agrees_with_pyoxigraph() -> None:
    store = Store()
    for reference in [*RFC_EXAMPLES, "http://x/a/../b", "a/./b/../c?d#e"]:
        found = store.query(f"SELECT (<{reference}> AS ?x) {{}}", base_iri=RFC_BASE)
        assert isinstance(found, QuerySolutions)
        solution = next(iter(found))
        assert solution["x"].value == resolve_iri(reference, RFC_BASE), reference


def test_absolute_iris_and_no_base_are_left_alone() -> None:
    assert resolve_iri("http://x/a/../b", RFC_BASE) == "http://x/a/../b"
    assert resolve_iri("a/../b", None) == "a/../b"
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("mid/content=5/../6") == "mid/6"


def test_prefixes_and_base_in_document_order() -> None:
    query = parse_query(
        "PREFIX r: <rel/> BASE <http://b/x/> PREFIX a: <abs/> BASE <y/> PREFIX b: <z#>\n"
        "SELECT * { r:1 a:2 b:3 . <q> <#f> <//h/p> }"
    )
    assert query.prologue == (
        ast.Prefix("r", "rel/"),  # before any BASE: relative, as written
        ast.Base("http://b/x/"),
        ast.Prefix("a", "http://b/x/abs/"),
        ast.Base("http://b/x/y/"),  # a BASE is resolved against the one before
        ast.Prefix("b", "http://b/x/y/z#"),
    )
    assert query.base == "http://b/x/y/"
    first, second = block_of(query).triples
    assert first == triple(Iri("rel/1"), Iri("http://b/x/abs/2"), Iri("http://b/x/y/z#3"))
    assert second == triple(Iri("http://b/x/y/q"), Iri("http://b/x/y/#f"), Iri("http://h/p"))


def test_prefixed_names_and_escapes() -> None:
    (block,) = where(r":a\.b\-c :%41\~ :x.y . <http://e/\u00E9\U0001F600> : :_1")
    assert isinstance(block, TriplesBlock)
    first, second = block.triples
    assert first == triple(i("a.b-c"), i("%41~"), i("x.y"))
    assert second == triple(Iri("http://e/é😀"), Iri(EX), i("_1"))


def test_prefixes_declared_outside_the_text() -> None:
    query = parse_query("SELECT * { ?s rdf:type ?o }", prefixes={"rdf": RDF})
    assert query.prologue == ()
    assert block_of(query) == TriplesBlock((triple(v("s"), Iri(RDF_TYPE), v("o")),))
    relative = parse_query("SELECT * { <a> ?p ?o }", base="http://b/")
    assert block_of(relative).triples[0].subject == Iri("http://b/a")


def test_undeclared_prefix_is_a_semantic_error_with_position() -> None:
    tree = parse_sparql("SELECT * {\n  ?s ex:p ?o }")  # parses; build() alone must catch it
    with pytest.raises(QuerySemanticError) as caught:
        build(tree)
    assert (caught.value.line, caught.value.column) == (2, 6)
    assert "'ex:' is not declared" in str(caught.value)


def test_bad_code_point_is_a_semantic_error() -> None:
    with pytest.raises(QuerySemanticError, match="not a Unicode code point"):
        parse_query("SELECT * { ?s ?p '\\UFFFFFFFF' }")


# Structural equality and hashing -----------------------------------------------------------

SAME_QUERY = [
    (
        f"PREFIX ex: <{EX}> SELECT ?s ?o WHERE {{ ?s a ex:C ; ex:p ?o . FILTER(?o > 1) }}",
        f"""prefix ex: <{EX}>
            # the same query, written differently
            select $s ?o where {{
              $s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}C> ;
                 ex:p ?o ;
              FILTER ( (?o) > 1 )
            }}""",
    ),
    (
        f"BASE <{EX}> SELECT * {{ <a> <b> 'x' }} ORDER BY ?x VALUES ?x {{ 1 }}",
        f"BASE <{EX}> SELECT * {{ <{EX}a> <{EX}b> 'x'^^<http://www.w3.org/2001/XMLSchema#string> }}"
        " ORDER BY ASC(?x) VALUES (?x) { (1) }",
    ),
    (
        "SELECT * { ?s (<p>)/!(<q>) ?o FILTER(?a * (?b * ?c) = (1)) }",
        "SELECT * { ?s <p>/!<q> ?o . FILTER((?a * (?b * ?c)) = 1) . }",
    ),
    (
        "SELECT (COUNT(*) AS ?n) { } GROUP BY (?x)",
        "SELECT (count(*) as ?n) {} group by ?x",
    ),
]

DIFFERENT_QUERIES = [
    ("SELECT * { ?s ?p 1 }", "SELECT * { ?s ?p 1.0 }"),
    ("SELECT * { ?s ?p 1 }", "SELECT * { ?s ?p '1' }"),
    ("SELECT * { ?s ?p 'a'@en }", "SELECT * { ?s ?p 'a' }"),
    ("SELECT * { FILTER(?a + (?b + ?c)) }", "SELECT * { FILTER(?a + ?b + ?c) }"),
    ("SELECT * { ?s ?p ?o ; ?q ?r }", "SELECT * { ?s ?p ?o . ?s ?q ?r }"),
    ("SELECT * { ?s ?p ?o }", "SELECT * { { ?s ?p ?o } }"),
    ("SELECT * { ?s ?p ?o }", "SELECT DISTINCT * { ?s ?p ?o }"),
    ("SELECT * { _:a ?p ?o }", "SELECT * { _:b ?p ?o }"),
    ("SELECT * { ?s ?p ?o } LIMIT 0", "SELECT * { ?s ?p ?o }"),
]


@pytest.mark.parametrize(("first", "second"), SAME_QUERY)
def test_differently_written_texts_give_equal_trees(first: str, second: str) -> None:
    a, b = parse_query(first), parse_query(second)
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


@pytest.mark.parametrize(("first", "second"), DIFFERENT_QUERIES)
def test_different_queries_give_different_trees(first: str, second: str) -> None:
    assert parse_query(first) != parse_query(second)


def test_equality_is_per_class() -> None:
    sequence: ast.Path = PathSequence((i("a"),))
    assert sequence != PathAlternative((i("a"),))
    assert Literal("1", XSD_INTEGER, written="01") == Literal("1", XSD_INTEGER)
    assert Literal("01", XSD_INTEGER) != Literal("1", XSD_INTEGER)  # different RDF terms
    assert Literal("a", lang="EN") == Literal("a", lang="en")


def test_equality_and_hashing_do_not_recurse() -> None:
    """A 5000-term ``||`` chain and 1000 nested groups compare and hash (the builder and
    ``==`` walk with a stack, not Python's recursion)."""
    chain = " || ".join(f"?o = {n}" for n in range(5000))
    nested = "{ " * 1000 + "?s ?p ?o" + " }" * 1000
    for text in (f"SELECT * {{ FILTER ({chain}) }}", f"SELECT * {{ {nested} }}"):
        first, second = parse_query(text), parse_query(text)
        assert first == second and hash(first) == hash(second)
        assert first != parse_query(text.replace("?o", "?z"))


def test_equality_compares_classes_and_lengths() -> None:
    assert v("x") != "x"
    assert v("x") != Iri("x")
    assert GroupPattern((Filter(v("x")),)) != GroupPattern((Filter(v("x")), Filter(v("x"))))
    assert ast.Values((v("x"),), ((None,),)) != ast.Values((v("x"),), ((i("a"),),))
    assert len({Literal("1", XSD_INTEGER), Literal("1", XSD_INTEGER, written="1"), num("2")}) == 2


def test_nodes_are_frozen_and_validated() -> None:
    with pytest.raises(FrozenInstanceError):
        v("x").name = "y"  # type: ignore[misc]
    with pytest.raises(ValueError, match="binary operator"):
        Binary("**", v("x"), v("y"))
    with pytest.raises(ValueError, match="unary operator"):
        Unary("~", v("x"))
    with pytest.raises(ValueError, match="path modifier"):
        PathModified(i("p"), "{2}")
    with pytest.raises(ValueError, match="aggregate"):
        Aggregate("MEDIAN", v("x"))


def test_walk_children_and_replace() -> None:
    query = q("SELECT ?s { ?s :p ?o FILTER (?o > 1) }")
    names = {n.name for n in query.walk() if isinstance(n, Var)}
    assert names == {"s", "o"}
    assert [type(n).__name__ for n in Binary(">", v("o"), num("1")).children()] == [
        "Var",
        "Literal",
    ]
    values = ast.Values((v("x"),), ((i("a"),), (None,)))
    assert list(values.children()) == [v("x"), i("a")]
    limited = query.replace(limit=3)
    assert isinstance(limited, Query)
    assert limited.limit == 3 and limited.pos == query.pos and limited != query


# Extension by a dialect --------------------------------------------------------------------

WINDOW_GRAMMAR = """
window_graph_pattern: "WINDOW"i var_or_iri "[" "RANGE"i INTEGER "]" group_graph_pattern
%extend graph_pattern_not_triples: window_graph_pattern
"""


@dataclass(frozen=True, slots=True)
class Window(ast.Pattern):
    """A toy stream window pattern, as a dialect module would define it."""

    name: Var | Iri
    width: int
    pattern: ast.Group


@v_args(meta=True)
class WindowBuilder(Builder):
    def window_graph_pattern(self, meta: Meta, children: list[object]) -> Window:
        name, width, group = children
        assert isinstance(name, Var | Iri) and isinstance(width, Token)
        assert isinstance(group, GroupPattern | SubSelect)
        return Window(name, int(width), group)


class WindowPrinter(Printer):
    def pattern_window(self, window: Window, depth: int) -> str:
        name = self.expr(window.name, depth)
        return f"WINDOW {name} [RANGE {window.width}] {self.group(window.pattern, depth)}"


def test_a_dialect_extends_tree_builder_and_printer() -> None:
    parser = build_parser(WINDOW_GRAMMAR)
    text = "PREFIX : <http://example.org/> SELECT * { WINDOW :w [RANGE 10] { ?s :p ?o } }"
    query = build(parse_with(parser, text), builder=WindowBuilder)
    group = query.where
    assert isinstance(group, GroupPattern)
    assert group.elements == (
        Window(i("w"), 10, GroupPattern((TriplesBlock((triple(v("s"), i("p"), v("o")),)),))),
    )
    assert {type(n).__name__ for n in query.walk()} >= {"Window", "Triples", "Var"}
    printed = to_sparql(query, printer=WindowPrinter)
    assert "WINDOW :w [RANGE 10] {" in printed
    assert build(parse_with(parser, printed), builder=WindowBuilder) == query


def test_a_rule_without_a_builder_method_is_named() -> None:
    parser = build_parser(WINDOW_GRAMMAR)
    tree = parse_with(parser, "SELECT * { WINDOW ?w [RANGE 1] { } }")
    with pytest.raises(NotImplementedError, match="'window_graph_pattern' at line 1, column 12"):
        build(tree)
    with pytest.raises(NotImplementedError, match="no pattern printer for Window"):
        to_sparql(Query(form=Select(), where=GroupPattern((Window(v("w"), 1, GroupPattern()),))))
