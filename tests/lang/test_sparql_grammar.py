"""The SPARQL 1.1 Query grammar and checks (rsep.lang) against the W3C syntax suites.

Every positive query of ``shared/data/sparql11-syntax`` must parse and pass
:func:`check_sparql`; every negative one must be rejected by one of them. SPARQL 1.1 Update
requests (``.ru``, from the rdf-tests copy) are out of scope (issue 3 asks for SPARQL 1.1
Query) and are skipped, one counted skip reason. Then: the error message format, the tree
shape the AST builder relies on, a toy dialect extending the grammar, and fuzzing.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Lark, Token, Tree

from rsep.errors import UserError
from rsep.lang.checks import QuerySemanticError, check_sparql
from rsep.lang.parser import (
    QuerySyntaxError,
    build_parser,
    grammar_text,
    parse_sparql,
    parse_with,
    sparql_parser,
)

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RSEP_SHARED", REPO.parent / "shared"))
SUITE = "sparql11-syntax"
NEGATIVE = "sparql11_syntax_query_test_suite/negative/"
SPEC_EXAMPLES = "sparql_spec_examples/"
# The spec's examples assume rdf:, rdfs:, xsd: and fn: (SPARQL 1.1 Query, 1.2.1); the ones
# extracted from section 4.1.4 and 9 also use ':' and 'ex:' from the surrounding text.
SPEC_PREFIXES = ("rdf", "rdfs", "xsd", "fn", "", "ex")
UPDATE_SKIP = "SPARQL 1.1 Update request: out of scope (issue 3 covers SPARQL 1.1 Query)"
QUERY_ERRORS = (QuerySyntaxError, QuerySemanticError)

_PROLOGUE = re.compile(r"(?:\s+|#[^\n]*|BASE\s*<[^>]*>|PREFIX\s*[^\s:]*:\s*<[^>]*>)*", re.I)
_UPDATE_VERB = re.compile(r"(?:INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.I)


def _suite_files() -> list[str]:
    """Suite-relative paths of every query and update file (empty when data is absent)."""
    root = SHARED / "data" / SUITE
    if not root.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.r[qu]"))


FILES = _suite_files()
POSITIVE_FILES = [f for f in FILES if not f.startswith(NEGATIVE)]
NEGATIVE_FILES = [f for f in FILES if f.startswith(NEGATIVE)]


def is_update(path: str, text: str) -> bool:
    """An Update request: by the suite's file extension, or by its first verb after the
    prologue (so an Update saved as ``.rq`` is caught too)."""
    prologue = _PROLOGUE.match(text)
    start = prologue.end() if prologue else 0
    return path.endswith(".ru") or bool(_UPDATE_VERB.match(text, start))


def parse_and_check(path: str, text: str) -> Tree[Token]:
    """What a positive test requires: the query parses and passes the checks."""
    tree = parse_sparql(text)
    check_sparql(tree, prefixes=SPEC_PREFIXES if path.startswith(SPEC_EXAMPLES) else ())
    return tree


def _read(root: Path, path: str) -> str:
    return (root / SUITE / path).read_text(encoding="utf-8")


# The W3C suites ------------------------------------------------------------------------


@pytest.mark.parametrize("path", POSITIVE_FILES)
def test_positive_query_is_accepted(shared_data: Path, path: str) -> None:
    text = _read(shared_data, path)
    if is_update(path, text):
        pytest.skip(UPDATE_SKIP)
    parse_and_check(path, text)


@pytest.mark.parametrize("path", NEGATIVE_FILES)
def test_negative_query_is_rejected(shared_data: Path, path: str) -> None:
    with pytest.raises(QUERY_ERRORS):
        parse_and_check(path, _read(shared_data, path))


def test_suite_report(shared_data: Path) -> None:
    """Per folder: positives accepted / total, negatives rejected / total, updates skipped."""
    counts: Counter[tuple[str, str]] = Counter()
    for path in FILES:
        folder = path.rsplit("/", 1)[0]
        text = _read(shared_data, path)
        if is_update(path, text):
            counts[folder, "update"] += 1
            assert path.endswith(".ru"), f"{path}: an Update request saved as a query"
            continue
        negative = path.startswith(NEGATIVE)
        try:
            parse_and_check(path, text)
            accepted = True
        except QUERY_ERRORS:
            accepted = False
        counts[folder, "total"] += 1
        counts[folder, "ok"] += accepted != negative
    folders = sorted({folder for folder, _ in counts})
    lines = [f"{'folder':66} {'ok/total':>10} {'update':>7}"]
    for folder in folders:
        ok, total, update = (counts[folder, k] for k in ("ok", "total", "update"))
        lines.append(f"{folder:66} {f'{ok}/{total}':>10} {update:>7}")
    report = "\n".join(lines)
    print(report)
    assert all(counts[f, "ok"] == counts[f, "total"] for f in folders), report
    assert sum(counts[f, "total"] for f in folders) >= 900, report
    assert sum(counts[f, "update"] for f in folders) == sum(f.endswith(".ru") for f in FILES)


# Rules the checks enforce, beyond the suites' negatives ---------------------------------

SEMANTIC_NEGATIVES = {
    "agg09: ungrouped projection": "SELECT ?P (COUNT(?O) AS ?C) { ?S ?P ?O } GROUP BY ?S",
    "agg10: implicit group": "SELECT ?P (COUNT(?O) AS ?C) { ?S ?P ?O }",
    "agg11: ungrouped var in expression": "SELECT ((?x + ?y) AS ?z) { ?x ?p ?y } GROUP BY ?x",
    "agg08: group by expression": (
        "SELECT ((?a + ?b) AS ?c) (COUNT(?a) AS ?n) { ?s <p> ?a ; <q> ?b } GROUP BY (?a + ?b)"
    ),
    "later AS is not a key": "SELECT (COUNT(*) AS ?c) (?s AS ?t) { ?s ?p ?o }",
    "aggregate in FILTER": "SELECT * { ?s ?p ?o FILTER(COUNT(?o) > 1) }",
    "aggregate in BIND": "SELECT * { ?s ?p ?o BIND(SUM(?o) AS ?x) }",
    "aggregate in GROUP BY": "SELECT ?s { ?s ?p ?o } GROUP BY (COUNT(?o))",
    "nested aggregate": "SELECT (SUM(COUNT(?o)) AS ?x) { ?s ?p ?o }",
    "ORDER BY aggregate makes a group": "SELECT * { ?s ?p ?o } ORDER BY COUNT(?o)",
    "SELECT * in grouped sub-select": "SELECT * { SELECT * { ?s ?p ?o } GROUP BY ?s }",
    "bnode across OPTIONAL": "SELECT * { _:a ?p ?v . OPTIONAL { ?s ?p ?v } _:a ?q 1 }",
    "bnode across group": "SELECT * { _:a ?p ?v . { _:a ?q 1 } }",
    "bnode across UNION": "SELECT * { { _:a ?p ?v } UNION { _:a ?q 1 } }",
    "bnode across GRAPH": "SELECT * { GRAPH ?g { _:a ?p ?v } _:a ?q 1 }",
    "bnode across BIND": "SELECT * { _:a ?p ?v . BIND(1 AS ?x) _:a ?q 1 }",
    "bnode in sub-select": "SELECT * { _:a ?p ?v { SELECT * { _:a ?q 1 } } }",
    "undeclared prefix": "SELECT * { ?s ex:p ?o }",
    "VALUES row too short": "SELECT * { } VALUES (?x ?y) { (1) }",
    "AS rebinds a projection": "SELECT ?x (1 AS ?x) { }",
    "AS rebinds an in-scope var": "SELECT (?o AS ?s) { ?s ?p ?o }",
    "BIND over OPTIONAL": "SELECT * { ?s ?p ?o OPTIONAL { ?s ?q ?z } BIND(1 AS ?z) }",
    "BIND over VALUES": "SELECT * { VALUES ?s { <a> } BIND(<b> AS ?s) }",
    "BIND over GRAPH var": "SELECT * { GRAPH ?g { ?s ?p ?o } BIND(<b> AS ?g) }",
}

SEMANTIC_POSITIVES = {
    "FILTER keeps the BGP": "SELECT * { _:a ?p ?v . FILTER(true) . _:a ?q ?v }",
    "count star": "SELECT (COUNT(*) AS ?c) { ?s ?p ?o }",
    "group, having, order": (
        "SELECT ?s (COUNT(?o) AS ?c) { ?s ?p ?o } GROUP BY ?s "
        "HAVING (COUNT(?o) > 1) ORDER BY DESC(COUNT(?o))"
    ),
    "group by AS": "SELECT ?k (SUM(?v) AS ?t) { ?s ?p ?v } GROUP BY (STR(?s) AS ?k)",
    "earlier AS in later expression": "SELECT (COUNT(*) AS ?c) (?c + 1 AS ?d) { ?s ?p ?o }",
    "MINUS binds nothing": "SELECT * { ?s ?p ?o MINUS { ?s ?q ?z } BIND(1 AS ?z) }",
    "FILTER binds nothing": "SELECT * { ?s ?p ?o FILTER(?z) BIND(1 AS ?z) }",
    "BIND before use": "SELECT * { BIND(1 AS ?x) ?s ?p ?x }",
    "bnode in EXISTS": "SELECT * { ?s ?p ?o FILTER EXISTS { _:b ?p ?o } }",
    "same label in two templates' scope": "CONSTRUCT { _:a <p> ?o } WHERE { _:a ?p ?o }",
    "VALUES of width zero": "SELECT * { } VALUES () { () () }",
    "BIND of a variable": "SELECT * { ?s ?p ?o BIND(?o AS ?z) }",
    "sub-select projects the AS": "SELECT ?y { { SELECT (?x AS ?y) { ?x ?p ?o } } BIND(1 AS ?x) }",
}


@pytest.mark.parametrize("text", SEMANTIC_NEGATIVES.values(), ids=SEMANTIC_NEGATIVES.keys())
def test_semantic_rule_rejects(text: str) -> None:
    tree = parse_sparql(text)
    with pytest.raises(QuerySemanticError) as caught:
        check_sparql(tree)
    assert re.fullmatch(r"line \d+, column \d+: [^\n]+", str(caught.value))


@pytest.mark.parametrize("text", SEMANTIC_POSITIVES.values(), ids=SEMANTIC_POSITIVES.keys())
def test_semantic_rule_accepts(text: str) -> None:
    check_sparql(parse_sparql(text))


def test_semantic_error_names_line_and_column() -> None:
    text = "PREFIX : <http://example/>\nSELECT * {\n  :s :p ?o .\n  BIND (1 AS ?o)\n}"
    with pytest.raises(QuerySemanticError) as caught:
        check_sparql(parse_sparql(text))
    error = caught.value
    assert isinstance(error, UserError)
    assert (error.line, error.column) == (4, 14)
    assert str(error) == "line 4, column 14: BIND assigns ?o, which is already in scope"


def test_prefixes_declared_outside_the_query() -> None:
    tree = parse_sparql("SELECT * { ?s rdf:type ?o }")
    with pytest.raises(QuerySemanticError, match="'rdf:' is not declared"):
        check_sparql(tree)
    check_sparql(tree, prefixes=["rdf"])


# Syntax errors ---------------------------------------------------------------------------


def _syntax_error(text: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_sparql(text)
    return caught.value


def test_syntax_error_message_format() -> None:
    error = _syntax_error("PREFIX : <http://example/>\n\nSELECT ?x WHRE { ?x ?p ?o }")
    assert isinstance(error, UserError)
    assert (error.line, error.column, error.found) == (3, 11, "'WHRE'")
    assert error.expected == ["FROM", "WHERE", "variable", "'('", "'{'"]
    assert str(error) == (
        "line 3, column 11: found 'WHRE', expected one of: FROM, WHERE, variable, '(', '{'\n"
        "  SELECT ?x WHRE { ?x ?p ?o }\n"
        "            ^"
    )


def test_syntax_error_shows_whole_word_and_precise_expectations() -> None:
    # 'BIND' is a keyword, but the word found is 'BINDINGS' (SPARQL 1.1 drafts only).
    error = _syntax_error("SELECT * { } BINDINGS ?x { (1) }")
    assert error.found == "'BINDINGS'"
    assert error.expected == [
        *["GROUP", "HAVING", "LIMIT", "OFFSET", "ORDER", "VALUES"],
        "end of input",
    ]


def test_syntax_error_at_end_of_input() -> None:
    error = _syntax_error("SELECT * {\n  ?s ?p ?o\n\n")
    assert (error.line, error.column, error.found) == (2, 11, "end of input")
    assert str(error).endswith("\n    ?s ?p ?o\n            ^")


def test_syntax_error_expected_list_is_short_sorted_and_deduplicated() -> None:
    error = _syntax_error("SELECT * { ?s ?p ?o FILTER( }")
    first_line = str(error).splitlines()[0]
    shown = first_line.split("expected one of: ", 1)[1]
    assert shown.endswith(", …")
    assert len(shown.split(", ")) == 11  # ten names and the ellipsis
    assert error.expected.count("variable") == 1  # VAR1 and VAR2
    assert "function name" in error.expected  # not forty function keywords
    # keywords, then token classes, then punctuation; each group sorted
    assert error.expected == [
        *["EXISTS", "false", "NOT", "true"],
        *["function name", "IRI", "number", "prefixed name", "string", "variable"],
        *["'!'", "'('", "'+'", "'-'"],
    ]


def test_syntax_error_caret_follows_tabs() -> None:
    error = _syntax_error("SELECT *\n\t{ ?s ?p ?o ) }")
    assert (error.line, error.column) == (2, 13)
    assert str(error).splitlines()[1:] == ["  \t{ ?s ?p ?o ) }", "  \t           ^"]


def test_syntax_error_on_bad_character() -> None:
    error = _syntax_error("SELECT * { ?s ?p ?o } \x00")
    assert error.found == "'\\x00'"
    assert str(error).splitlines()[1] == "  SELECT * { ?s ?p ?o } ?"


# Tree shape ------------------------------------------------------------------------------


def _only(tree: Tree[Token], rule: str) -> Tree[Token]:
    found = list(tree.find_data(rule))
    assert len(found) == 1, tree.pretty()
    return found[0]


def _values(tree: Tree[Token]) -> list[str]:
    return [str(t) for t in tree.scan_values(lambda v: isinstance(v, Token))]


def test_keywords_are_case_insensitive_except_a() -> None:
    lower = parse_sparql("select distinct ?s where { ?s a ?o } order by desc(?s) limit 1")
    upper = parse_sparql("SELECT DISTINCT ?s WHERE { ?s a ?o } ORDER BY DESC(?s) LIMIT 1")
    assert lower.data == upper.data == "query_unit"
    assert [t.type for t in lower.scan_values(lambda v: isinstance(v, Token))] == [
        t.type for t in upper.scan_values(lambda v: isinstance(v, Token))
    ]
    _syntax_error("SELECT * { ?s A ?o }")


def test_signed_literal_after_an_operand_is_the_right_operand() -> None:
    tree = parse_sparql("SELECT (?x +1 * 2 AS ?y) {}")  # [116]: ?x + (1 * 2)
    assert _values(_only(tree, "additive_expression")) == ["?x", "+1", "*", "2"]
    tree = parse_sparql("SELECT (?x - 1 AS ?y) {}")
    assert _values(_only(tree, "additive_expression")) == ["?x", "-", "1"]


def test_property_paths() -> None:
    tree = parse_sparql("SELECT * { ?s ^<p>/<q>*|!(a|^<r>)|(<t>)+ ?o . ?s <u>? ?o . ?s !() ?o }")
    assert sorted(_values(t)[0] for t in tree.find_data("path_mod")) == ["*", "+", "?"]
    assert len(list(tree.find_data("path_alternative"))) == 1
    sets = list(tree.find_data("path_negated_property_set"))
    assert [len(s.children) for s in sets] == [2, 1]  # '!(a|^<r>)' and '!()'


def test_literal_forms() -> None:
    tree = parse_sparql(
        "SELECT * { ?s ?p '''a'b''c''' , \"\"\"x\"y\"\"z\"\"\" , 'e\\n\\u00e9'@en-GB ,"
        " '1'^^<http://t> , -1.5e+3 , +.5 , 1 , TRUE , 'x\\U0001F46A' }"
    )
    kinds = [t.type for t in tree.scan_values(lambda v: isinstance(v, Token))]
    assert kinds[3:] == [  # after STAR, ?s and ?p
        *["STRING_LITERAL_LONG1", "STRING_LITERAL_LONG2", "STRING_LITERAL1", "LANGTAG"],
        *["STRING_LITERAL1", "IRIREF", "DOUBLE_NEGATIVE", "DECIMAL_POSITIVE", "INTEGER"],
        *["TRUE", "STRING_LITERAL1"],
    ]


def test_query_forms_and_clauses() -> None:
    queries = [
        "BASE <http://x/> PREFIX a: <y> ASK FROM <g> FROM NAMED <h> { <s> a a:b } OFFSET 1",
        "CONSTRUCT { ?s ?p [ <q> ( 1 ?o ) ] } WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 5",
        "CONSTRUCT WHERE { ?s ?p ?o . ?o ?p ?s }",
        "DESCRIBE * WHERE { ?s ?p ?o }",
        "DESCRIBE <a> ?x",
        "SELECT * { ?s ?p ?o SERVICE SILENT ?g { ?s ?p ?o } GRAPH <g> { } MINUS { ?s ?p 1 } }",
        "SELECT * { { ?s ?p ?o } UNION { SELECT ?s { ?s ?p ?o } LIMIT 1 VALUES ?s { <a> } } }",
        "SELECT * { } VALUES (?x ?y) { (1 UNDEF) (UNDEF 'b') }",
        "SELECT (GROUP_CONCAT(DISTINCT ?o; SEPARATOR=', ') AS ?g) { ?s ?p ?o }",
        "SELECT * { FILTER(?o NOT IN (1) && ?o IN () || !BOUND(?x) && NOT EXISTS {}) }",
        "SELECT * { FILTER(REGEX(STR(?o), 'a', 'i') && SUBSTR(?o, 1) = REPLACE(?o, 'a', 'b')) }",
        "SELECT * { FILTER(<f>(DISTINCT ?o, 1) && <g>() && STRUUID() != BNODE()) } # end",
    ]
    for text in queries:
        check_sparql(parse_sparql(text))


def test_build_is_cached() -> None:
    """One parser per process; its speed is measured by benchmarks, not asserted here."""
    assert sparql_parser() is sparql_parser()
    fresh = Lark(grammar_text(), parser="lalr", start="query_unit", propagate_positions=True)
    assert fresh.parse("SELECT * { ?s ?p ?o }").data == "query_unit"


def test_dialect_extends_the_grammar() -> None:
    """A dialect appends rules and ``%extend``s or ``%override``s the base ones."""
    dialect = build_parser(
        """
        window_graph_pattern: "WINDOW"i var_or_iri group_graph_pattern
        %extend graph_pattern_not_triples: window_graph_pattern
        %override limit_clause: "LIMIT"i (INTEGER | "ALL"i)
        """
    )
    tree = parse_with(dialect, "SELECT * { WINDOW <w> { ?s ?p ?o } } LIMIT ALL")
    assert _only(tree, "window_graph_pattern")
    with pytest.raises(QuerySemanticError, match="BIND assigns"):
        check_sparql(parse_with(dialect, "SELECT * { WINDOW <w> { ?s ?p ?o } BIND(1 AS ?o) }"))
    with pytest.raises(QuerySyntaxError):
        parse_sparql("SELECT * { WINDOW <w> { ?s ?p ?o } }")


# Fuzzing ---------------------------------------------------------------------------------

_ALPHABET = [
    *"{}()[]<>?$:._-+*/|^!#'\"@,;=&\\ \t\n0123456789aeEsSxX",
    *["SELECT ", "WHERE ", "FILTER", "OPTIONAL ", "UNION ", "BIND", " AS ", "GROUP BY "],
    *["COUNT", "_:b", "?x", "ex:", "'''", "\\u00", "é", "\u2028"],
]


@cache
def _corpus(root: Path) -> tuple[str, ...]:
    texts = []
    for path in POSITIVE_FILES:
        text = _read(root, path)
        if not is_update(path, text):
            texts.append(text)
    return tuple(texts)


def _parse_and_check_anything(text: str) -> None:
    """Parsing and checking arbitrary text ends in a tree or in one of the two errors."""
    try:
        check_sparql(parse_sparql(text))
    except QUERY_ERRORS as error:
        message = str(error)
        assert message.startswith("line ")
        message.encode("utf-8")  # printable by the CLI, even from broken input


@pytest.fixture(scope="module")
def warm_parser() -> Lark:
    """Built before the fuzz tests, so the build does not count against their deadline."""
    return sparql_parser()


FUZZ = settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.binary(max_size=400))
def test_fuzz_random_bytes(warm_parser: Lark, data: bytes) -> None:
    _parse_and_check_anything(data.decode("utf-8", errors="surrogateescape"))


@FUZZ
@given(pieces=st.lists(st.sampled_from(_ALPHABET), max_size=60))
def test_fuzz_token_soup(warm_parser: Lark, pieces: list[str]) -> None:
    _parse_and_check_anything("".join(pieces))


@st.composite
def _mutated(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "swap"]))
        at = draw(st.integers(0, max(len(text) - 1, 0)))
        if kind == "insert":
            piece = draw(st.sampled_from(_ALPHABET) | st.characters())
            text = text[:at] + piece + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + 1 :]
        elif at + 1 < len(text):
            text = text[:at] + text[at + 1] + text[at] + text[at + 2 :]
    return text


@FUZZ
@given(data=st.data())
def test_fuzz_mutated_suite_queries(
    warm_parser: Lark, shared_data: Path, data: st.DataObject
) -> None:
    text = data.draw(st.sampled_from(_corpus(shared_data)), label="query")
    _parse_and_check_anything(data.draw(_mutated(text), label="mutated"))
