"""The SPARQL printer (rsep.lang.printer): print, parse, build gives the same tree.

Over every positive query of the W3C syntax suites (``shared/data/sparql11-syntax``, found as
the grammar tests find them; SPARQL 1.1 Update requests are skipped the same way):
``build(parse(to_sparql(q))) == q`` and printing is idempotent. Then the layout and the
choices the printer makes (quotes, escapes, prefixed names, parentheses), and a property
test over random trees.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sparql_grammar import (
    POSITIVE_FILES,
    SPEC_EXAMPLES,
    SPEC_PREFIXES,
    SUITE,
    UPDATE_SKIP,
    is_update,
)

from rsep.lang import ast
from rsep.lang.ast import (
    BINARY_OPERATORS,
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    Binary,
    Iri,
    Literal,
    Query,
    Unary,
    Var,
)
from rsep.lang.build import build, parse_query
from rsep.lang.parser import parse_sparql
from rsep.lang.printer import Printer, quote_string, to_sparql

T = TypeVar("T")

# The spec's examples use prefixes they do not declare (SPARQL 1.1 Query, 1.2.1).
SPEC_NAMESPACES = {name: f"http://prefix.example/{name or 'default'}/" for name in SPEC_PREFIXES}


def rebuild(text: str, prefixes: dict[str, str] | None = None) -> Query:
    """Parse and build, without the semantic checks (the printer's promise is syntax)."""
    return build(parse_sparql(text), prefixes=prefixes)


def round_trip(query: Query, prefixes: dict[str, str] | None = None) -> str:
    """Print ``query``; assert that the text builds back to it and prints the same."""
    printed = to_sparql(query)
    again = rebuild(printed, prefixes)
    assert again == query, printed
    assert to_sparql(again) == printed, printed
    return printed


# The W3C suites ----------------------------------------------------------------------------


def _suite_query(root: Path, path: str) -> tuple[Query, dict[str, str] | None] | None:
    """The built query of a suite file and the prefixes it needs; None for an Update."""
    text = (root / SUITE / path).read_text(encoding="utf-8")
    if is_update(path, text):
        return None
    prefixes = SPEC_NAMESPACES if path.startswith(SPEC_EXAMPLES) else None
    return rebuild(text, prefixes), prefixes


@pytest.mark.parametrize("path", POSITIVE_FILES)
def test_suite_query_round_trips(shared_data: Path, path: str) -> None:
    found = _suite_query(shared_data, path)
    if found is None:
        pytest.skip(UPDATE_SKIP)
    round_trip(*found)


def test_suite_round_trip_report(shared_data: Path) -> None:
    """Per folder: files that round-trip / query files (Update requests not counted)."""
    counts: Counter[tuple[str, str]] = Counter()
    for path in POSITIVE_FILES:
        found = _suite_query(shared_data, path)
        if found is None:
            continue
        folder = path.rsplit("/", 1)[0]
        counts[folder, "total"] += 1
        try:
            round_trip(*found)
            counts[folder, "ok"] += 1
        except AssertionError:
            pass
    folders = sorted({folder for folder, _ in counts})
    lines = [f"{'folder':66} {'ok/total':>10}"]
    for f in folders:
        share = f"{counts[f, 'ok']}/{counts[f, 'total']}"
        lines.append(f"{f:66} {share:>10}")
    ok, total = (sum(counts[f, k] for f in folders) for k in ("ok", "total"))
    lines.append(f"{'all':66} {f'{ok}/{total}':>10}")
    report = "\n".join(lines)
    print(report)
    assert ok == total >= 900, report


# Layout --------------------------------------------------------------------------------------

LAYOUT_IN = """prefix ex: <http://example.org/> select distinct ?s (count(*) as ?n)
from <http://example.org/g> where { ?s a ex:C ; ex:p ?o , [ ex:q 1 ] . optional { ?s ex:r ?r
filter(?r != 'x') } { ?s ex:t ?t } union { ?s ex:u ?t } minus { ?s ex:v 2 } bind(?o + 1 as ?z)
filter not exists { ?s ex:w ( 1 2 ) } values ?o { 1 undef } } group by ?s having (count(*) > 1)
order by desc(?n) ?s limit 10 offset 2 values (?s ?n) { (ex:a 1) (undef undef) }"""

LAYOUT_OUT = """PREFIX ex: <http://example.org/>
SELECT DISTINCT ?s (COUNT(*) AS ?n)
FROM ex:g
WHERE {
  ?s a ex:C ;
    ex:p ?o, [ ex:q 1 ] .
  OPTIONAL {
    ?s ex:r ?r .
    FILTER (?r != "x")
  }
  {
    ?s ex:t ?t .
  } UNION {
    ?s ex:u ?t .
  }
  MINUS {
    ?s ex:v 2 .
  }
  BIND (?o + 1 AS ?z)
  FILTER NOT EXISTS {
    ?s ex:w ( 1 2 ) .
  }
  VALUES ?o { 1 UNDEF }
}
GROUP BY ?s
HAVING (COUNT(*) > 1)
ORDER BY DESC(?n) ?s
LIMIT 10
OFFSET 2
VALUES (?s ?n) {
  (ex:a 1)
  (UNDEF UNDEF)
}
"""


def test_layout_is_canonical_and_readable() -> None:
    assert to_sparql(parse_query(LAYOUT_IN)) == LAYOUT_OUT
    assert to_sparql(parse_query(LAYOUT_OUT)) == LAYOUT_OUT


def test_other_forms_and_sub_select_layout() -> None:
    printed = to_sparql(parse_query("CONSTRUCT WHERE { ?s ?p ?o }"))
    assert printed == "CONSTRUCT {\n  ?s ?p ?o .\n}\nWHERE {\n  ?s ?p ?o .\n}\n"
    assert to_sparql(parse_query("ask from named <g> { graph ?g {} service silent <s> {} }")) == (
        "ASK\nFROM NAMED <g>\nWHERE {\n  GRAPH ?g { }\n  SERVICE SILENT <s> { }\n}\n"
    )
    assert to_sparql(parse_query("DESCRIBE <a> ?b")) == "DESCRIBE <a> ?b\n"
    assert to_sparql(parse_query("select * { { select ?s { ?s ?p ?o } limit 1 } }")) == (
        "SELECT *\nWHERE {\n  {\n    SELECT ?s\n    WHERE {\n      ?s ?p ?o .\n    }\n"
        "    LIMIT 1\n  }\n}\n"
    )
    assert to_sparql(parse_query("SELECT * WHERE { SELECT * {} }")) == (
        "SELECT *\nWHERE {\n  SELECT *\n  WHERE { }\n}\n"
    )


# Choices ----------------------------------------------------------------------------------


def expression(text: str) -> str:
    """``text`` as a FILTER expression, printed."""
    query = parse_query(f"PREFIX ex: <http://example.org/> SELECT * {{ FILTER ({text}) }}")
    assert isinstance(query.where, ast.GroupPattern)
    (filter_,) = query.where.elements
    assert isinstance(filter_, ast.Filter)
    round_trip(query)
    return Printer(query.prologue).expr(filter_.expr, 0)


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("((?a + ?b)) * ?c", "(?a + ?b) * ?c"),
        ("?a + (?b * ?c)", "?a + ?b * ?c"),
        ("?a - (?b - ?c)", "?a - (?b - ?c)"),
        ("(?a - ?b) - ?c", "?a - ?b - ?c"),
        ("(?a = ?b) = ?c", "(?a = ?b) = ?c"),
        ("?a = (?b < ?c)", "?a = (?b < ?c)"),
        ("(?a || ?b) && ?c", "(?a || ?b) && ?c"),
        ("?a || (?b && ?c)", "?a || ?b && ?c"),
        ("!(?a && ?b)", "!(?a && ?b)"),
        ("-(-?a)", "-(-?a)"),
        ("-(1)", "- 1"),
        ("-(-1)", "- -1"),
        ("?a +1", "?a + 1"),
        ("?a - -1", "?a - -1"),
        ("(?a IN (1)) = ?b", "(?a IN (1)) = ?b"),
        ("(?a + 1) NOT IN ()", "?a + 1 NOT IN ()"),
        (
            "BOUND(?a) && sameTerm(?a, ?b) && isIRI(?a)",
            "BOUND(?a) && sameTerm(?a, ?b) && isIRI(?a)",
        ),
        ("ex:f(distinct ?a, 1) + <http://x/g>()", "ex:f(DISTINCT ?a, 1) + <http://x/g>()"),
        ("true && TRUE && 1.0e0 && .5", "true && TRUE && 1.0e0 && .5"),
        ("'1'^^ex:integer && '1'^^<http://www.w3.org/2001/XMLSchema#integer>", None),
    ],
)
def test_minimal_parentheses_and_short_forms(written: str, printed: str | None) -> None:
    expected = printed or '"1"^^ex:integer && 1'
    assert expression(written) == expected


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        ("plain", '"plain"'),
        ('say "hi"', "'say \"hi\"'"),
        ("it's", '"it\'s"'),
        ("both ' and \"", '"both \' and \\""'),
        ("line\nbreak\r\ttab\\", '"line\\nbreak\\r\\ttab\\\\"'),
        ("bell\x07 nul\x00 del\x7f", '"bell\\u0007 nul\\u0000 del\\u007F"'),
        ("é😀\u2028", '"é😀\\u2028"'),
    ],
)
def test_strings_choose_quotes_and_escape(value: str, printed: str) -> None:
    assert quote_string(value) == printed
    query = Query(
        form=ast.Select(),
        where=ast.GroupPattern((ast.Bind(Literal(value), Var("x")),)),
    )
    assert f"BIND ({printed} AS ?x)" in round_trip(query)


@pytest.mark.parametrize(
    ("iri", "printed"),
    [
        ("http://example.org/a", "ex:a"),
        ("http://example.org/", "ex:"),
        ("http://example.org/a.b-c_d", "ex:a.b-c_d"),
        ("http://example.org/a.", "ex:a\\."),
        ("http://example.org/.a", "ex:\\.a"),
        ("http://example.org/-a", "ex:\\-a"),
        ("http://example.org/0a", "ex:0a"),
        ("http://example.org/a/b?c#d", "ex:a\\/b\\?c\\#d"),
        ("http://example.org/%41%", "ex:%41\\%"),
        ("http://example.org/ns#x", "ns:x"),  # the longest namespace wins
        ("http://example.org/base/doc", "<doc>"),
        ("http://example.org/base/doc#x", "<doc#x>"),
        ("http://example.org/a b", "<http://example.org/a\\u0020b>"),
        ("http://example.org/a<b>{|}^`\\", "<http://example.org/a\\u003Cb\\u003E\\u007B"),
        ("urn:x:y", "<urn:x:y>"),
        (RDF_TYPE, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"),
    ],
)
def test_iris_print_as_prefixed_relative_or_full(iri: str, printed: str) -> None:
    prologue = (
        ast.Prefix("ex", "http://example.org/"),
        ast.Prefix("ns", "http://example.org/ns#"),
        ast.Base("http://example.org/base/"),
    )
    query = Query(
        prologue=prologue,
        form=ast.Select(),
        where=ast.GroupPattern((ast.Filter(Iri(iri)),)),
    )
    text = round_trip(query)
    assert f"FILTER ({printed}" in text


def test_rdf_type_is_a_only_as_a_verb() -> None:
    text = "SELECT * { ?s a ?o ; ^a/a* ?t ; !(a|^a) ?u FILTER(?o = <" + RDF_TYPE + ">) }"
    printed = round_trip(rebuild(text))
    assert "?s a ?o ;\n    ^a / a* ?t ;\n    !(a | ^a) ?u ." in printed
    assert f"FILTER (?o = <{RDF_TYPE}>)" in printed


def test_paths_take_minimal_parentheses() -> None:
    text = "SELECT * { ?s (<a>|<b>)/(<c>/<d>)|^(<e>*)|(^<f>)+|((<g>?)+)|!^<h> ?o }"
    printed = round_trip(rebuild(text))
    assert "?s (<a> | <b>) / (<c> / <d>) | ^<e>* | (^<f>)+ | (<g>?)+ | !^<h> ?o ." in printed


def test_literals_keep_their_written_form() -> None:
    printed = round_trip(rebuild("SELECT * { ?s ?p 1.50, +01, -2E+3, TRUE, 'x'@EN-gb, '7'^^<t> }"))
    assert '?s ?p 1.50, +01, -2E+3, TRUE, "x"@en-gb, "7"^^<t> .' in printed
    built = Query(
        form=ast.Select(),
        where=ast.GroupPattern(
            (
                ast.Bind(Literal("5", XSD_INTEGER), Var("a")),
                ast.Bind(Literal("x5", XSD_INTEGER), Var("b")),
                ast.Bind(Literal("true", XSD_BOOLEAN), Var("c")),
            )
        ),
    )
    printed = round_trip(built)
    assert 'BIND (5 AS ?a)\n  BIND ("x5"^^<http://www.w3.org/2001/XMLSchema#integer> AS ?b)' in (
        printed
    )


def test_prologue_keeps_its_order() -> None:
    text = "PREFIX r: <rel/> BASE <http://b/> PREFIX s: <sub/> SELECT * { r:x s:y <z> }"
    printed = round_trip(parse_query(text))
    assert printed.startswith("PREFIX r: <rel/>\nBASE <http://b/>\nPREFIX s: <http://b/sub/>\n")
    assert "r:x s:y <z> ." in printed


def test_long_chains_print_and_deep_nesting_is_a_clear_error() -> None:
    chain = " || ".join(f"?o = {n}" for n in range(3000))
    query = rebuild(f"SELECT * {{ FILTER ({chain} && ?a + 1 - 2 + 3) }}")
    printed = round_trip(query)
    assert "?o = 0 || ?o = 1 || ?o = 2" in printed
    nested = rebuild("SELECT * {" + "{ " * 1000 + " }" * 1000 + "}")
    with pytest.raises(ValueError, match="nests too deeply to print"):
        to_sparql(nested)


def test_other_nodes_print_alone() -> None:
    assert to_sparql(Binary("+", Var("a"), Unary("-", Literal("1", XSD_INTEGER)))) == "?a + - 1"
    assert to_sparql(ast.Optional(ast.GroupPattern())) == "OPTIONAL { }"
    assert to_sparql(ast.PathInverse(Iri(RDF_TYPE))) == "^a"
    assert to_sparql(ast.Collection((Var("x"),))) == "( ?x )"
    assert to_sparql(ast.Ask()) == "ASK"
    assert to_sparql(ast.From(Iri("http://g"), named=True)) == "FROM NAMED <http://g>"
    assert to_sparql(ast.Prefix("p", "http://p/")) == "PREFIX p: <http://p/>"
    with pytest.raises(TypeError):
        to_sparql(ast.OrderCondition(Var("x")))


# Random trees ------------------------------------------------------------------------------

EX = "http://example.org/"
BASE = EX + "base/"
PROLOGUES = [
    (),
    (ast.Base(BASE), ast.Prefix("ex", EX), ast.Prefix("", "http://other.example/ns#")),
]
IRI_VALUES = [
    *[EX + local for local in ("p", "q", "a.b", "c-", "x.", "_", "%41", "a/b", "é", "")],
    *[BASE + "rel", BASE + "#frag", "http://other.example/ns#z", "urn:x:y", RDF_TYPE],
    *[EX + "sp ace", EX + 'q"uote>', XSD_INTEGER],
]
ONE_ARGUMENT = [
    *["STR", "LANG", "DATATYPE", "IRI", "URI", "ABS", "CEIL", "FLOOR", "ROUND", "STRLEN"],
    *["UCASE", "LCASE", "ENCODE_FOR_URI", "YEAR", "MONTH", "DAY", "HOURS", "MINUTES"],
    *["SECONDS", "TIMEZONE", "TZ", "MD5", "SHA1", "SHA256", "SHA384", "SHA512", "ISIRI"],
    *["ISURI", "ISBLANK", "ISLITERAL", "ISNUMERIC"],
]
TWO_ARGUMENTS = [
    *["LANGMATCHES", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE", "STRAFTER", "STRLANG"],
    *["STRDT", "SAMETERM"],
]
# name -> the numbers of arguments the grammar allows (19.8, [121]..[124])
BUILT_INS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(ONE_ARGUMENT, (1,)),
    **dict.fromkeys(TWO_ARGUMENTS, (2,)),
    **dict.fromkeys(["RAND", "NOW", "UUID", "STRUUID"], (0,)),
    **dict.fromkeys(["CONCAT", "COALESCE"], (0, 1, 2, 3)),
    **{"IF": (3,), "BNODE": (0, 1), "REGEX": (2, 3), "SUBSTR": (2, 3), "REPLACE": (3, 4)},
}

variables = st.sampled_from(["a", "b", "x", "y1", "_z", "ü", "0"]).map(Var)
iris = st.sampled_from(IRI_VALUES).map(Iri)
strings = st.text(max_size=6)
literals = st.one_of(
    strings.map(Literal),
    st.tuples(strings, st.sampled_from(["en", "en-gb", "fr-be-x1"])).map(
        lambda t: Literal(t[0], lang=t[1])
    ),
    st.from_regex(r"[+-]?[0-9]{1,3}", fullmatch=True).map(lambda s: Literal(s, XSD_INTEGER)),
    st.from_regex(r"[+-]?[0-9]{0,2}\.[0-9]{1,2}", fullmatch=True).map(
        lambda s: Literal(s, XSD_DECIMAL)
    ),
    st.from_regex(r"[+-]?[0-9]{1,2}(\.[0-9]?)?[eE][+-]?[0-9]{1,2}", fullmatch=True).map(
        lambda s: Literal(s, XSD_DOUBLE)
    ),
    st.sampled_from(["true", "false"]).map(lambda s: Literal(s, XSD_BOOLEAN)),
    st.tuples(strings, st.sampled_from(IRI_VALUES)).map(lambda t: Literal(t[0], t[1])),
)
blank_nodes = st.one_of(
    st.just(ast.BlankNode()), st.sampled_from(["b0", "b.1", "x"]).map(ast.BlankNode)
)
terms: st.SearchStrategy[ast.Term] = st.one_of(variables, iris, literals)
atoms: st.SearchStrategy[ast.Expr] = st.one_of(variables, iris, literals)


def tuples_of(
    strategy: st.SearchStrategy[T], min_size: int = 0, max_size: int = 3
) -> st.SearchStrategy[tuple[T, ...]]:
    return st.lists(strategy, min_size=min_size, max_size=max_size).map(tuple)


def built_in_calls(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    @st.composite
    def draw_call(draw: st.DrawFn) -> ast.Expr:
        name = draw(st.sampled_from(sorted(BUILT_INS)))
        count = draw(st.sampled_from(BUILT_INS[name]))
        if name == "BOUND":
            return ast.BuiltIn(name, (draw(variables),))
        return ast.BuiltIn(name, tuple(draw(inner) for _ in range(count)))

    return st.one_of(draw_call(), variables.map(lambda v: ast.BuiltIn("BOUND", (v,))))


def aggregates(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Aggregate]:
    return st.one_of(
        st.builds(ast.Aggregate, st.just("COUNT"), st.none() | inner, st.booleans()),
        st.builds(
            ast.Aggregate,
            st.sampled_from(["SUM", "MIN", "MAX", "AVG", "SAMPLE"]),
            inner,
            st.booleans(),
        ),
        st.builds(
            ast.Aggregate, st.just("GROUP_CONCAT"), inner, st.booleans(), st.none() | strings
        ),
    )


def function_calls(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.FunctionCall]:
    return st.builds(ast.FunctionCall, iris, tuples_of(inner)).flatmap(
        lambda call: st.booleans().map(
            lambda distinct: ast.FunctionCall(call.iri, call.args, distinct and bool(call.args))
        )
    )


def expressions(depth: int) -> st.SearchStrategy[ast.Expr]:
    """Every operator and precedence, calls, aggregates and (above depth 0) EXISTS."""

    def extend(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
        options: list[st.SearchStrategy[ast.Expr]] = [
            st.builds(Binary, st.sampled_from(sorted(BINARY_OPERATORS)), inner, inner),
            st.builds(Unary, st.sampled_from(["!", "+", "-"]), inner),
            st.builds(ast.In, inner, tuples_of(inner), st.booleans()),
            built_in_calls(inner),
            function_calls(inner),
            aggregates(inner),
        ]
        if depth > 0:
            options.append(st.builds(ast.Exists, groups(depth - 1), st.booleans()))
        return st.one_of(options)

    return st.recursive(atoms, extend, max_leaves=6)


negated_items = st.one_of(iris, iris.map(ast.PathInverse))
paths: st.SearchStrategy[ast.Iri | ast.Path] = st.recursive(
    st.one_of(iris, tuples_of(negated_items).map(ast.PathNegated)),
    lambda inner: st.one_of(
        tuples_of(inner, 2).map(ast.PathAlternative),
        tuples_of(inner, 2).map(ast.PathSequence),
        inner.map(ast.PathInverse),
        st.builds(ast.PathModified, inner, st.sampled_from(["?", "*", "+"])),
    ),
    max_leaves=5,
)


def graph_nodes(
    depth: int, verbs: st.SearchStrategy[ast.Var | ast.Iri | ast.Path]
) -> st.SearchStrategy[ast.GraphNode]:
    """Terms, blank nodes, and (above depth 0) collections and ``[ … ]``."""
    simple = st.one_of(terms, blank_nodes)
    if depth == 0:
        return simple
    inner = graph_nodes(depth - 1, verbs)
    return st.one_of(
        simple,
        tuples_of(inner).map(ast.Collection),
        tuples_of(properties(depth - 1, verbs), 1, 2).map(ast.BlankNodePropertyList),
    )


def properties(
    depth: int, verbs: st.SearchStrategy[ast.Var | ast.Iri | ast.Path]
) -> st.SearchStrategy[ast.Property]:
    return st.builds(ast.Property, verbs, tuples_of(graph_nodes(depth, verbs), 1))


def triples(
    verbs: st.SearchStrategy[ast.Var | ast.Iri | ast.Path],
) -> st.SearchStrategy[ast.Triples]:
    """A subject with a property list; or ``[ … ]`` / ``( … )`` alone, as the grammar allows."""
    triples_nodes = st.one_of(
        tuples_of(properties(1, verbs), 1, 2).map(ast.BlankNodePropertyList),
        tuples_of(graph_nodes(1, verbs), 1).map(ast.Collection),
    )
    return st.one_of(
        st.builds(
            ast.Triples,
            st.one_of(terms, blank_nodes, triples_nodes),
            tuples_of(properties(1, verbs), 1),
        ),
        st.builds(ast.Triples, triples_nodes, st.just(())),
    )


pattern_verbs: st.SearchStrategy[ast.Var | ast.Iri | ast.Path] = st.one_of(variables, paths)
template_verbs: st.SearchStrategy[ast.Var | ast.Iri | ast.Path] = st.one_of(variables, iris)
triples_blocks = tuples_of(triples(pattern_verbs), 1, 2).map(ast.TriplesBlock)
values = st.lists(variables, unique=True, max_size=3).flatmap(
    lambda vs: tuples_of(tuples_of(st.none() | iris | literals, len(vs), len(vs))).map(
        lambda rows: ast.Values(tuple(vs), rows)
    )
)


def canonical(elements: list[ast.Pattern]) -> ast.GroupPattern:
    """Adjacent triples blocks are one block, as the grammar reads them ([54], [55])."""
    merged: list[ast.Pattern] = []
    for element in elements:
        if (
            merged
            and isinstance(element, ast.TriplesBlock)
            and isinstance(merged[-1], ast.TriplesBlock)
        ):
            merged[-1] = ast.TriplesBlock(merged[-1].triples + element.triples)
        else:
            merged.append(element)
    return ast.GroupPattern(tuple(merged))


def group_patterns(depth: int) -> st.SearchStrategy[ast.GroupPattern]:
    """Groups of BGPs, FILTER, BIND, VALUES and, above depth 0, OPTIONAL, UNION, MINUS, GRAPH,
    SERVICE, nested groups and sub-selects."""
    options: list[st.SearchStrategy[ast.Pattern]] = [
        triples_blocks,
        st.builds(ast.Filter, expressions(depth)),
        st.builds(ast.Bind, expressions(depth), variables),
        values,
    ]
    if depth > 0:
        inner = groups(depth - 1)
        var_or_iri = st.one_of(variables, iris)
        options += [
            st.builds(ast.Optional, inner),
            st.builds(ast.Minus, inner),
            tuples_of(inner, 2).map(ast.Union),
            st.builds(ast.Graph, var_or_iri, inner),
            st.builds(ast.Service, var_or_iri, inner, st.booleans()),
            inner,
        ]
    return st.lists(st.one_of(options), max_size=4).map(canonical)


def groups(depth: int) -> st.SearchStrategy[ast.Group]:
    if depth <= 0:
        return group_patterns(0)
    return st.one_of(group_patterns(depth), sub_selects(depth))


def selects(depth: int) -> st.SearchStrategy[ast.Select]:
    item = st.one_of(variables, st.builds(ast.Alias, expressions(depth), variables))
    return st.builds(
        ast.Select,
        st.none() | tuples_of(item, 1),
        st.booleans(),
    ).flatmap(
        lambda s: st.booleans().map(
            lambda reduced: ast.Select(s.projection, s.distinct, reduced and not s.distinct)
        )
    )


def modifiers(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    e = expressions(depth)
    return st.fixed_dictionaries(
        {
            "group_by": tuples_of(
                st.one_of(variables, e, st.builds(ast.Alias, e, variables)), 0, 2
            ),
            "having": tuples_of(e, 0, 2),
            "order_by": tuples_of(st.builds(ast.OrderCondition, e, st.booleans()), 0, 2),
            "limit": st.none() | st.integers(0, 100),
            "offset": st.none() | st.integers(0, 100),
            "values": st.none() | values,
        }
    )


def sub_selects(depth: int) -> st.SearchStrategy[ast.SubSelect]:
    return st.builds(
        lambda select, where, mods: ast.SubSelect(select, where, **mods),
        selects(depth - 1),
        groups(depth - 1),
        modifiers(depth - 1),
    )


def _query(
    prologue: tuple[ast.Declaration, ...],
    form: ast.QueryForm,
    dataset: tuple[ast.From, ...],
    where: ast.Group,
    mods: dict[str, Any],
    drop_where: bool,
) -> Query:
    """A query; a DESCRIBE may have no WHERE clause (16.4)."""
    if drop_where and isinstance(form, ast.Describe):
        return Query(prologue=prologue, form=form, dataset=dataset, **mods)
    return Query(prologue=prologue, form=form, dataset=dataset, where=where, **mods)


forms: st.SearchStrategy[ast.QueryForm] = st.one_of(
    selects(1),
    selects(1),
    tuples_of(triples(template_verbs)).map(ast.Construct),
    st.just(ast.Ask()),
    st.builds(ast.Describe, st.none() | tuples_of(st.one_of(variables, iris), 1)),
)
queries = st.builds(
    _query,
    st.sampled_from(PROLOGUES),
    forms,
    tuples_of(st.builds(ast.From, iris, st.booleans()), 0, 2),
    groups(2),
    modifiers(1),
    st.booleans(),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries)
def test_random_trees_round_trip(query: Query) -> None:
    round_trip(query)
