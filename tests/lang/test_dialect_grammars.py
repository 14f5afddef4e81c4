"""The streaming dialects (rsep.lang.dialects): every real query parses, in the right dialect.

Corpora (each query its own test id; the shared folder comes from the ``shared_data``
fixture, which skips when it is absent):

- ``csrbench/config`` and ``csrbench/aligned``: the queries inside the ``.properties`` files,
  read the way Apache Commons Configuration reads them (CSR-Bench's oracle uses it: ``include
  = ...`` is its feature): each physical line is trimmed, then a trailing backslash joins the
  next line, then escapes (``\\n``) are decoded;
- ``citybench-queries`` in its three syntaxes (CQELS-QL, C-SPARQL, RSP-QL);
- ``spaseq/tests/*/*.q`` and ``spaseq/engine-data/*.q``; ``spaseq/grammar/Spaseq-grammar.txt``
  holds the engine's ANTLR grammar and no example query, so its SPAseq-specific productions
  are exercised by queries written here instead;
- ``etalis/EP-SPARQL-tests.txt``: the ETALIS regression queries;
- every concrete-syntax file under ``tests/lang/paper_queries`` (INDEX.md): abstract-syntax
  and fragment files are skipped with their reason, and retyped here in concrete syntax.

A query with an actual error in the shipped file is listed in :data:`KNOWN_BAD` with the
error rsep must report, and why rsep does not accept it. Then: detection cues, parameters,
and the W3C SPARQL 1.1 syntax suites read by every dialect (downward compatibility).
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Token, Tree
from lark import logger as lark_logger

from rsep.errors import UserError
from rsep.lang.checks import QuerySemanticError, check_sparql
from rsep.lang.dialects import (
    DETECTION_ORDER,
    PARAMETER_NAMES,
    Dialect,
    all_dialects,
    cue_text,
    detect_dialect,
    get_dialect,
    parse,
)
from rsep.lang.parser import QuerySyntaxError

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RSEP_SHARED", REPO.parent / "shared"))
DATA = SHARED / "data"
PAPER = REPO / "tests" / "lang" / "paper_queries"
GROUP = "group_graph_pattern"


# Reading the corpora ---------------------------------------------------------------------


def read_properties(text: str) -> dict[str, str]:
    """Key/value pairs of a ``.properties`` file as Apache Commons Configuration 1.x reads
    them: comment lines (``#``, ``!``) are skipped, each line is trimmed, an odd number of
    trailing backslashes continues the value on the next line, and escapes are decoded."""
    pairs: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not logical and (not line or line[0] in "#!"):
            continue
        slashes = len(line) - len(line.rstrip("\\"))
        if slashes % 2 == 1:
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"([^=:\s]+)\s*[=:]?\s*(.*)", logical, re.S)
        assert match is not None, logical
        pairs[match.group(1)] = _unescape(match.group(2))
        logical = ""
    return pairs


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f"}


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), value)


@dataclass(frozen=True)
class Case:
    """One query of a corpus: where it is, what dialect it must be read in, its start rule."""

    id: str
    folder: str
    dialect: str
    path: Path
    key: str = ""  # a .properties key or an ETALIS test name, for queries inside a file
    start: str = "query_unit"

    def text(self) -> str:
        """The query text."""
        if self.path.suffix == ".properties":
            return read_properties(_read(self.path))[self.key]
        if self.key:
            return etalis_queries(self.path)[self.key]
        return _read(self.path)


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def etalis_queries(path: Path) -> dict[str, str]:
    """``## name`` then ``QUERY: text`` blocks of the ETALIS test list, by name."""
    queries: dict[str, str] = {}
    name = ""
    for line in _read(path).splitlines():
        if line.startswith("## "):
            name = line[3:].split(":")[0].strip()
        elif line.startswith("QUERY: "):
            queries[name] = line[len("QUERY: ") :]
    return queries


# The kinds of query the CSR-Bench property files carry, by the last part of the key.
PROPERTY_QUERIES: dict[str, tuple[str, str]] = {
    "booleanquery": ("sparql", "query_unit"),  # the oracle's one-shot SPARQL query
    "unsupportedquery": ("sparql", "query_unit"),  # ... its SELECT with an empty WHERE
    "unsupportedqueryWindow": ("sparql", GROUP),  # ... and the window's group pattern
    "rspqlquery": ("rspql", "query_unit"),
    "csparqlquery": ("csparql", "query_unit"),
    "rdfoxquery": ("rdfox", "query_unit"),  # FROM dynamic stream <s> [range ...] SELECT ...
}

CITYBENCH = {"cqels_query": "cqels", "csparql_query": "csparql", "rspql_query": "rspql"}


def property_cases(folder: str) -> Iterator[Case]:
    """Every query-valued key of the .properties files of ``csrbench/<folder>``."""
    root = DATA / "csrbench" / folder
    for path in sorted(root.glob("*.properties")):
        for key in read_properties(_read(path)):
            kind = key.rsplit(".", 1)[-1]
            if not re.search(r"query(?:Window)?$", kind):
                continue  # window.size, queryset, staticdata, ...
            assert kind in PROPERTY_QUERIES, f"{path.name}:{key}: unknown kind of query"
            dialect, start = PROPERTY_QUERIES[kind]
            name = f"csrbench/{folder}/{path.name}:{key}"
            yield Case(name, f"csrbench/{folder}", dialect, path, key, start)


def shared_cases() -> list[Case]:
    """Every query of the shared data (none when the folder is absent)."""
    if not DATA.is_dir():
        return []
    cases = [*property_cases("config"), *property_cases("aligned")]
    for sub, dialect in CITYBENCH.items():
        for path in sorted((DATA / "citybench-queries" / sub).glob("*.txt")):
            name = f"citybench-queries/{sub}/{path.name}"
            cases.append(Case(name, f"citybench-queries/{sub}", dialect, path))
    for folder, pattern in (("spaseq/tests", "*/*.q"), ("spaseq/engine-data", "*.q")):
        for path in sorted((DATA / folder).glob(pattern)):
            name = f"{folder}/{path.relative_to(DATA / folder).as_posix()}"
            cases.append(Case(name, folder, "spaseq", path))
    etalis = DATA / "etalis" / "EP-SPARQL-tests.txt"
    for test in etalis_queries(etalis):
        name = f"etalis/EP-SPARQL-tests.txt:{test}"
        cases.append(Case(name, "etalis", "epsparql", etalis, test))
    return cases


# tests/lang/paper_queries: the dialect of each concrete-syntax file, or why it is skipped.
PAPER_DIALECTS: dict[str, str] = {
    "rspql/example2.rq": "sparql",
    "cqelscep/example4.cqels": "cqelscep",  # RSP-QL-style windows with CQELS durations
    "cqelscep/example6.cqelscep": "cqelscep",
    **{f"epsparql/query{n}.epsparql": "epsparql" for n in range(1, 7)},
    "epsparql/query7_sequentional.epsparql": "epsparql",  # deliberately invalid
    **{
        f"spaseq/{name}.spaseq": "spaseq"
        for name in (
            "query1_smartgrid",
            "query2_creditcard_big_after_small",
            "query3_stock_head_and_shoulders",
            "query4_stock_vshape",
            "query5_traffic",
            "query6_trajectory",
        )
    },
}
PAPER_SKIPS: dict[str, str] = {
    "rspql/example10.rspql": "fragment: only the WHERE clause, in the paper's notation "
    "(Rstream{ GRAPH w_1 ... }); retyped as a complete RSP-QL query below",
    "rsepql/example4.rsepql": "abstract syntax of RSEP-QL Sect. 3.3; retyped in rsep's "
    "RSEP-QL syntax below",
    "cqelscep/example7_model.cqelscep": "abstract model Q = (V, P, D, EC)",
    "spaseq/example11_abstract.spaseq": "abstract syntax Q = (V, ω, SeqExp)",
}


def paper_cases() -> list[Case]:
    """Every file under tests/lang/paper_queries that is not skipped."""
    cases = []
    for path in sorted(PAPER.glob("*/*")):
        name = path.relative_to(PAPER).as_posix()
        if name in PAPER_SKIPS:
            continue
        assert name in PAPER_DIALECTS, f"{name}: add it to PAPER_DIALECTS or PAPER_SKIPS"
        folder = f"paper_queries/{name.split('/')[0]}"
        cases.append(Case(name, folder, PAPER_DIALECTS[name], path))
    return cases


# Queries with an actual error in the shipped file: the first line of the error rsep must
# report. None is accepted by the grammar of its language; the reason is in the comment.
KNOWN_BAD: dict[str, str] = {
    # The value ends "FILTER(?value > 75) }\" and the next line is "}": one brace too many.
    # SPARQL's QueryUnit ends with the query (SPARQL 1.1, 19.8 [1]); rsep does not guess
    # which brace was meant.
    "csrbench/aligned/srbench-queries.properties:srb.query6.csparqlquery": (
        "line 11, column 22: found '}', expected one of: GROUP, HAVING, LIMIT, OFFSET, "
        "ORDER, VALUES, end of input"
    ),
    # The RDFox text of query 6 has the same slip, at the same place.
    "csrbench/aligned/srbench-queries.properties:srb.query6.rdfoxquery": (
        "line 11, column 22: found '}', expected one of: GROUP, HAVING, LIMIT, OFFSET, "
        "ORDER, VALUES, end of input"
    ),
    # "ssn:observedBy> ses:..." (twice): a stray '>' after a prefixed name, which no
    # SPARQL grammar, RSP4J's included, reads as part of a path or a term.
    "citybench-queries/rspql_query/Q9.txt": (
        "line 30, column 30: found '>', expected one of: false, true, blank node, IRI, "
        "number, prefixed name, string, variable, '(', '()', …"
    ),
    # "SEQ (A, B, C,)": a trailing comma, which Definition 4 (SeqExp ::= SeqExp ',' Atom)
    # and the engine's grammar (eventPattList) do not allow; INDEX.md notes it as a paper error.
    "spaseq/query4_stock_vshape.spaseq": (
        "line 25, column 16: found ')', expected one of: NAME, '!', '('"
    ),
    # The paper's hypothetical SEQUENTIONAL operator, which EP-SPARQL rejects (Sect. 4.2,
    # timewise monotonicity): INDEX.md marks the file as a negative test.
    "epsparql/query7_sequentional.epsparql": (
        "line 21, column 3: found 'SEQUENTIONAL', expected one of: DO, EQUALS, EQUALSOPTIONAL, "
        "FILTER, GROUP, HAVING, LIMIT, OFFSET, OPTIONALSEQ, ORDER, …"
    ),
}

SHARED_CASES = shared_cases()
PAPER_CASES = paper_cases()
ALL_CASES = SHARED_CASES + PAPER_CASES


def _check(case: Case) -> Tree[Token] | None:
    """What a corpus test requires: the detected dialect, then the parse (or its error)."""
    text = case.text()
    if case.start == "query_unit":
        assert detect_dialect(text).name == case.dialect, case.id
    dialect = get_dialect(case.dialect)
    if case.id in KNOWN_BAD:
        with pytest.raises(QuerySyntaxError) as caught:
            dialect.parse(text, case.start)
        assert str(caught.value).splitlines()[0] == KNOWN_BAD[case.id]
        return None
    return dialect.parse(text, case.start)


@pytest.mark.parametrize("case", SHARED_CASES, ids=[c.id for c in SHARED_CASES])
def test_shared_query_parses_in_its_dialect(shared_data: Path, case: Case) -> None:
    _check(case)


@pytest.mark.parametrize("case", PAPER_CASES, ids=[c.id for c in PAPER_CASES])
def test_paper_query_parses_in_its_dialect(case: Case) -> None:
    _check(case)


@pytest.mark.parametrize("name", sorted(PAPER_SKIPS))
def test_paper_query_in_abstract_syntax_is_skipped(name: str) -> None:
    assert (PAPER / name).is_file()
    pytest.skip(PAPER_SKIPS[name])


def test_known_bad_files_exist() -> None:
    ids = {case.id for case in ALL_CASES}
    missing = [name for name in KNOWN_BAD if name not in ids]
    if missing and not SHARED_CASES:
        pytest.skip("shared data not found")
    assert not missing


def test_corpus_report(shared_data: Path) -> None:
    """Per folder: parsed / total, known-bad (rejected as expected), skipped; printed."""
    counts: Counter[tuple[str, str]] = Counter()
    for case in ALL_CASES:
        counts[case.folder, "total"] += 1
        try:
            get_dialect(case.dialect).parse(case.text(), case.start)
            detected = case.start != "query_unit" or detect_dialect(case.text()).name
            counts[case.folder, "parsed"] += detected in (True, case.dialect)
        except QuerySyntaxError:
            counts[case.folder, "known-bad"] += case.id in KNOWN_BAD
    for name in PAPER_SKIPS:
        folder = f"paper_queries/{name.split('/')[0]}"
        counts[folder, "total"] += 1
        counts[folder, "skipped"] += 1
    folders = sorted({folder for folder, _ in counts})
    lines = [f"{'folder':34} {'parsed':>7} {'known-bad':>9} {'skipped':>7} {'total':>6}"]
    for folder in folders:
        row = [counts[folder, k] for k in ("parsed", "known-bad", "skipped", "total")]
        lines.append(f"{folder:34} {row[0]:>7} {row[1]:>9} {row[2]:>7} {row[3]:>6}")
    report = "\n".join(lines)
    print(report)
    for folder in folders:
        done = sum(counts[folder, k] for k in ("parsed", "known-bad", "skipped"))
        assert done == counts[folder, "total"], report
    assert sum(counts[f, "known-bad"] for f in folders) == len(KNOWN_BAD), report
    assert sum(counts[f, "parsed"] for f in folders) >= 140, report


# Paper queries retyped in concrete syntax --------------------------------------------------

# RSEP-QL, Example 4 (seed 000, Sect. 3.4; rsepql/example4.rsepql): MATCH (E1 SEQ E2) with
# E1 = EVENT w1 (?x :p ?y) on the landmark window W^λ(1) and E2 = EVENT w2 (?y :q ?z) on the
# time-based window W^τ(5, 1) of Example 3, over the stream S of Example 1. The query form
# (SELECT of ?x ?y ?z) follows Example 9; the stream IRI :S is invented.
RSEPQL_EXAMPLE_4 = """
PREFIX : <http://example.org/>
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :S [LANDMARK T0 1]
FROM NAMED WINDOW :w2 ON :S [RANGE 5 STEP 1]
WHERE {
  MATCH ( EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 { ?y :q ?z } )
}
"""

# RSP-QL, Example 10 (seed 003; rspql/example10.rspql): the WHERE clause as printed (with
# WINDOW for the paper's GRAPH over a window name), the dataset of Example 8 with W1 = (α 5,
# β 2, t0 1) and W2 = (α 2, β 2, t0 0), the policy WC ∧ NC on W2, and Rstream. The graph
# and stream IRIs are invented.
RSPQL_EXAMPLE_10 = """
PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS
SELECT *
FROM :shops
FROM NAMED WINDOW :w_1 ON :S_nearby [RANGE 5 STEP 2 T0 1]
FROM NAMED WINDOW :w_2 ON :S_coupon [RANGE 2 STEP 2 T0 0 REPORT WINDOW_CLOSE NON_EMPTY]
WHERE {
  WINDOW :w_1 { ?shopper :isNearby ?shop }
  WINDOW :w_2 { ?shop_owner :offers ?coupon }
  ?shop_owner :owns ?shop
}
"""


def _only(tree: Tree[Token], rule: str) -> Tree[Token]:
    found = list(tree.find_data(rule))
    assert len(found) == 1, tree.pretty()
    return found[0]


def _kinds(tree: Tree[Token]) -> list[str]:
    """The rule names of the subtrees directly under ``tree``."""
    return [str(child.data) for child in tree.children if isinstance(child, Tree)]


def _values(tree: Tree[Token] | Token) -> list[str]:
    if isinstance(tree, Token):
        return [str(tree)]
    return [str(t) for t in tree.scan_values(lambda v: isinstance(v, Token))]


def test_rsepql_example_4_in_rsep_syntax() -> None:
    dialect, tree = parse(RSEPQL_EXAMPLE_4)
    assert dialect.name == "rsepql"
    match = _only(tree, "event_graph_pattern")
    seq = _only(match, "event_seq")
    events = [child for child in seq.children if isinstance(child, Tree)]
    assert [e.data for e in events] == ["basic_event_pattern", "basic_event_pattern"]
    assert [_values(e)[:4] for e in events] == [
        [":w1", "?x", ":p", "?y"],
        [":w2", "?y", ":q", "?z"],
    ]
    windows = list(tree.find_data("window_spec"))
    assert [_kinds(w)[0] for w in windows] == ["landmark_window", "time_window"]
    assert _values(_only(tree, "window_t0")) == ["1"]
    check_sparql(tree)


def test_rspql_example_10_in_concrete_syntax() -> None:
    dialect, tree = parse(RSPQL_EXAMPLE_10)
    assert dialect.name == "rspql"
    assert _values(_only(tree, "r2s")) == ["RSTREAM"]
    assert [_values(t) for t in tree.find_data("window_t0")] == [["1"], ["0"]]
    assert _values(_only(tree, "window_report")) == ["WINDOW_CLOSE", "NON_EMPTY"]
    assert len(list(tree.find_data("window_graph_pattern"))) == 2
    check_sparql(tree)


# The SPAseq engine grammar's own productions (Spaseq-grammar.txt has no example query) ----


def _spaseq(seq: str, head: str = "", gpm_b: str = "DEFINE GPM B ON S1 { ?c <p> ?y }") -> str:
    return (
        f"PREFIX p: <http://example/> SELECT ?c WITHIN 10 SECONDS {head} "
        f"FROM STREAM S1 <http://example.org/main> FROM STREAM S2 <http://example.org/b> "
        f"WHERE SEQ ({seq}) {{ DEFINE GPM A ON S1 {{ ?c p:price ?x }} {gpm_b} }}"
    )


@pytest.mark.parametrize(
    "text",
    [
        _spaseq("A, B", "PARTITION BY (?c, ?x)"),
        _spaseq("A; B", "PARTITION BY ?c"),
        _spaseq("A : B", gpm_b="DEFINE GPM B ON S1, S2 { ?c <p> ?y }"),
        _spaseq("A, B+", gpm_b="DEFINE GPM B ON S1 { ?c <p> ?y } GROUP BY ?c HAVING (?c)"),
        _spaseq("(A | B), (A & B)"),
        _spaseq("A?, B!, !A"),
        _spaseq("((A; B)+ : A)"),
        "CONSTRUCT { ?c <q> ?x } WITHIN 1 HOURS FROM STREAM S1 <http://s> "
        "WHERE { SEQ (A) DEFINE GPM A ON S1 { ?c <p> ?x } }",
        "SELECT * WITHIN PT30M FROM STREAM S1 <http://s> WHERE SEQ (A) "
        "{ DEFINE GPM A ON S1 { ?c <p> ?x GRAPH <http://kb> { ?c <n> ?n } } }",
    ],
    ids=[
        "partition-list",
        "partition-vars",
        "skip-till-any-multi-stream",
        "group-having",
        "or-and",
        "optional-negation",
        "nested-kleene",
        "construct",
        "iso-within-graph",
    ],
)
def test_spaseq_engine_grammar_forms(text: str) -> None:
    dialect, tree = parse(text)
    assert dialect.name == "spaseq"
    assert _only(tree, "spaseq_query")


def test_spaseq_sequence_operators_and_precedence() -> None:
    tree = get_dialect("spaseq").parse(_spaseq("A; B+, C & A | B : !C"))
    expression = _only(tree, "seq_clause").children[0]
    assert isinstance(expression, Tree)
    assert expression.data == "seq_expression"
    assert _kinds(expression) == [
        *["gpm_name", "seq_strategy", "kleene_plus", "seq_strategy", "seq_disjunction"],
        *["seq_strategy", "negated_event"],
    ]
    strategies = [_values(c) for c in expression.find_data("seq_strategy")]
    assert strategies == [[";"], [","], [":"]]
    disjunction = _only(expression, "seq_disjunction")
    assert _kinds(disjunction) == ["seq_conjunction", "gpm_name"]


def test_spaseq_grammar_file_has_no_example_query(shared_data: Path) -> None:
    """Spaseq-grammar.txt is the engine's ANTLR parser grammar: rules, no query text."""
    text = _read(shared_data / "spaseq" / "grammar" / "Spaseq-grammar.txt")
    assert "parser grammar Spaseq;" in text
    assert not re.search(r"^\s*(PREFIX|SELECT|CONSTRUCT)\s+[?<\w]", text, re.M | re.I)


# Syntax of each dialect ----------------------------------------------------------------------

DIALECT_EXAMPLES = {
    "rspql": [
        "REGISTER ISTREAM <out> AS SELECT * FROM NAMED WINDOW <w> ON STREAM <s> [RANGE PT1M] "
        "WHERE { WINDOW <w> { ?s ?p ?o } }",
        "REGISTER DSTREAM <out> AS SELECT * FROM NAMED WINDOW <w> ON <s> [ELEMENTS 10 STEP 5] "
        "WHERE { WINDOW <w> { ?s ?p ?o } }",
        "REGISTER RSTREAM <out> AS SELECT * FROM NAMED WINDOW ON <s> [RANGE P1D STEP PT12H] "
        "AS <w> WHERE { WINDOW <w> { ?s ?p ?o } }",
        "REGISTER STREAM <out> AS CONSTRUCT ISTREAM { ?s ?p ?o } FROM NAMED WINDOW ?w ON ?s "
        "[ITEM 10] WHERE { WINDOW ?w { ?s ?p ?o } }",
        "PREFIX : <http://e/> REGISTER RSTREAM :out AS SELECT RSTREAM ?s FROM NAMED WINDOW :w "
        "ON :s [FROM NOW-PT2H TO NOW-PT1H STEP PT1H] WHERE { WINDOW :w { ?s ?p ?o } }",
    ],
    "csparql": [
        "REGISTER QUERY q AS PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#> SELECT ?s "
        "FROM STREAM <http://s> [RANGE 10s STEP 1s] WHERE { ?s ?p ?o "
        "FILTER (f:timestamp(?s, ?p, ?o) > 5) }",
        "REGISTER QUERY q COMPUTED EVERY 5s AS SELECT * FROM STREAM <http://s> "
        "[RANGE 5s TUMBLING] WHERE { ?s ?p ?o }",
        "REGISTER STREAM out AS CONSTRUCT { ?s <p> ?o } FROM STREAM <http://s> "
        "[RANGE TRIPLES 10] WHERE { ?s ?p ?o }",
        "SELECT * FROM STREAM <http://s> [RANGE 1h STEP 30m] FROM <http://static> "
        "WHERE { ?s ?p ?o }",
    ],
    "rdfox": [
        "FROM dynamic stream <http://s> [range 1000ms step 1000ms] SELECT ?s WHERE { ?s ?p ?o }",
        "PREFIX : <http://e/> FROM DYNAMIC STREAM :s1 [RANGE 5s STEP 1s] "
        "from Dynamic Stream :s2 [range 3000ms step 3000ms] SELECT * FROM <http://static> "
        "WHERE { ?s :p ?o }",
    ],
    "cqels": [
        "SELECT * WHERE { STREAM <http://s> [NOW] { ?s ?p ?o } }",
        "SELECT * WHERE { STREAM <http://s> [ALL] { ?s ?p ?o } }",
        "SELECT * WHERE { STREAM ?stream [TRIPLES 5] { ?s ?p ?o } }",
        "SELECT * WHERE { STREAM <http://s> [RANGE 3000ms SLIDE 1s] { ?s ?p ?o } ?s <q> ?z }",
    ],
    "cqelscep": [
        "PREFIX : <http://e/> SELECT ?s FROM NAMED WINDOW :W ON :s [RANGE 10m] WHERE { "
        "WINDOW :W { SEQ ({?v :d ?s}, {?v :d ?s}, !{?v :a ?s}) } }",
        "PREFIX : <http://e/> SELECT ?s WHERE { SEQ (:W1, !:W2, :W3) }",
        "PREFIX : <http://e/> SELECT ?s WHERE { "
        "?s (next-1::beg[next::means/self::subway]/next::end)+ :c }",
        "PREFIX : <http://e/> SELECT ?s WHERE { ?s next:::p/edge^-1/node ?o . ?s :p [ :q ?o ] }",
        "PREFIX : <http://e/> SELECT ?s WHERE { ?s self::[ :p ] ?o . ?s (:p/[:q/:r :x])* ?o }",
        "SELECT * WHERE { STREAM <http://s> [RANGE 3s] { SEQ ({?a <p> ?b}, {?b <q> ?c}) } }",
    ],
    "rsepql": [
        "PREFIX : <http://e/> SELECT * FROM NAMED WINDOW :w ON :s [RANGE PT5S] WHERE { "
        "MATCH [SELECTION recent CONSUMPTION recent] "
        "( FIRST EVENT :w { ?a :p ?b } SEQ LAST (EVENT :w { ?b :q ?c }) ) ?a :r ?c }",
        "PREFIX : <http://e/> SELECT * FROM NAMED WINDOW :w ON :s [FROM 2 TO 10] WHERE { "
        "MATCH [SELECTION naive] ( EVENT :w { } SEQ EVENT :w { } SEQ EVENT :w { } ) }",
        "PREFIX : <http://e/> REGISTER ISTREAM :o AS SELECT * FROM NAMED WINDOW :w ON :s "
        "[LANDMARK] WHERE { MATCH [CONSUMPTION none SELECTION unrestricted] "
        "((EVENT :w { ?a :p ?b })) }",
    ],
    "epsparql": [
        "PREFIX : <http://e/> SELECT ?c WHERE { ?c :p ?x } EQUALS { ?c :q ?y } "
        "FILTER (getSTARTTIME() < getENDTIME())",
        "PREFIX : <http://e/> SELECT ?c WHERE { { ?c :p ?x } OPTIONALSEQ { ?c :q ?y } "
        "UNION { ?c :r ?z } }",
        "PREFIX : <http://e/> CONSTRUCT { ?c :s ?x } WHERE { ?c :p ?x } SEQ { ?c :q ?y }",
        "SELECT ?c (?x + 1 AS ?y) ?x * 2 AS ?z WHERE { ?c <p> ?x } SEQ { ?c <q> ?x }",
    ],
    "spaseq": [
        "SELECT ?c WITHIN 10 SECONDS FROM STREAM S1 <http://s> WHERE SEQ (A; B) "
        "{ DEFINE GPM A ON S1 { ?c <p> ?x } DEFINE GPM B ON S1 { ?c <p> ?y } }",
        "SELECT ?c WITHIN 5 MINUTES FROM STREAM S1 <http://s> WHERE { SEQ (A+) "
        "DEFINE GPM A ON S1 { ?c <p> ?x } }",
    ],
}


@pytest.mark.parametrize(
    ("name", "text"),
    [(name, text) for name, texts in DIALECT_EXAMPLES.items() for text in texts],
    ids=[f"{name}-{i}" for name, texts in DIALECT_EXAMPLES.items() for i in range(len(texts))],
)
def test_dialect_syntax(name: str, text: str) -> None:
    dialect, tree = parse(text)
    assert dialect.name == name
    assert tree.data == "query_unit"


WINDOWS = {
    "[RANGE PT10S STEP PT2S]": ("time_window", ["PT10S", "PT2S"]),
    "[RANGE 10s SLIDE 2s]": ("time_window", ["10s", "2s"]),
    "[RANGE 3000ms]": ("time_window", ["3000ms"]),
    "[RANGE 5 STEP 1]": ("time_window", ["5", "1"]),
    "[range 1.5h step 1d]": ("time_window", ["1.5h", "1d"]),
    "[RANGE 5s TUMBLING]": ("tumbling_window", ["5s"]),
    "[RANGE TRIPLES 10]": ("count_window", ["10"]),
    "[TRIPLES 10]": ("count_window", ["10"]),
    "[ELEMENTS 10 STEP 2]": ("count_window", ["10", "2"]),
    "[ITEM 4]": ("count_window", ["4"]),
    "[NOW]": ("now_window", []),
    "[ALL]": ("all_window", []),
    "[LANDMARK]": ("landmark_window", []),
    "[FROM 2 TO 10]": ("interval_window", ["2", "10"]),
    "[FROM '2020-01-01T00:00:00Z' TO PT1H]": (
        "interval_window",
        ["'2020-01-01T00:00:00Z'", "PT1H"],
    ),
    "[FROM NOW - PT2H TO NOW]": ("past_window", ["PT2H"]),
}


@pytest.mark.parametrize("spec", WINDOWS, ids=list(WINDOWS))
def test_window_specifications(spec: str) -> None:
    kind, values = WINDOWS[spec]
    for name in ("rspql", "csparql", "cqels", "cqelscep", "rsepql"):
        dialect = get_dialect(name)
        tree = dialect.parse(_with_window(name, spec))
        window = _only(tree, "window_spec").children[0]
        assert isinstance(window, Tree)
        assert window.data == kind
        assert _values(window) == values


def _with_window(dialect: str, spec: str) -> str:
    if dialect == "csparql":
        return f"SELECT * FROM STREAM <http://s> {spec} WHERE {{ ?s ?p ?o }}"
    if dialect == "cqels":
        return f"SELECT * WHERE {{ STREAM <http://s> {spec} {{ ?s ?p ?o }} }}"
    return f"SELECT * FROM NAMED WINDOW <w> ON <http://s> {spec} WHERE {{ WINDOW <w> {{ }} }}"


def test_window_modifiers() -> None:
    text = _with_window(
        "rspql",
        "[RANGE PT10S STEP PT2S T0 0 REPORT WINDOW_CLOSE NON_EMPTY, CONTENT_CHANGE PERIODIC PT5S]",
    )
    tree = get_dialect("rspql").parse(text)
    assert _values(_only(tree, "window_t0")) == ["0"]
    report = _only(tree, "window_report")
    assert _values(report) == ["WINDOW_CLOSE", "NON_EMPTY", "CONTENT_CHANGE", "PERIODIC", "PT5S"]
    for bad in ("[T0 0]", "[RANGE PT1S REPORT]", "[RANGE PT1S REPORT SOMETIMES]", "[RANGE PT]"):
        with pytest.raises(QuerySyntaxError):
            get_dialect("rspql").parse(_with_window("rspql", bad))


def test_pragma_clauses() -> None:
    text = (
        "PRAGMA window.present = latest\n"
        "PREFIX : <http://e/>\n"
        "PRAGMA window.report = window_close, non_empty, periodic(PT5S)\n"
        "PRAGMA lateness = 500ms\n"
        "PRAGMA window.t0 = '2020-01-01T00:00:00Z'\n"
        "PRAGMA profile = :csparql\n"
        "PRAGMA time_unit = s\n"
        "SELECT * WHERE { ?s ?p ?o }"
    )
    for dialect in all_dialects():
        tree = dialect.parse(text)
        pragmas = list(tree.find_data("pragma"))
        assert [_values(p)[0] for p in pragmas] == [
            *["window.present", "window.report", "lateness", "window.t0", "profile"],
            "time_unit",
        ]
    report = list(tree.find_data("pragma"))[1]
    assert _kinds(report) == ["pragma_word", "pragma_word", "pragma_call"]
    with pytest.raises(QuerySyntaxError):
        get_dialect("rspql").parse("PRAGMA = 1 SELECT * {}")


def test_csparql_query_name_and_prologue_after_as() -> None:
    tree = get_dialect("csparql").parse(DIALECT_EXAMPLES["csparql"][0])
    register = _only(tree, "register_clause")
    assert _values(register) == ["QUERY", "q"]
    assert len(list(tree.find_data("prefix_decl"))) == 1
    check_sparql(tree)


def test_epsparql_operators_are_left_to_right_like_union() -> None:
    text = "SELECT * WHERE { {?a <p> 1} SEQ {?a <p> 2} UNION {?a <p> 3} EQUALSOPTIONAL {} }"
    tree = get_dialect("epsparql").parse(text)
    group = _only(tree, "group_or_union_graph_pattern")
    tokens = [c.type for c in group.children if isinstance(c, Token)]
    assert tokens == ["SEQ", "UNION", "EQUALSOPTIONAL"]
    where = _only(get_dialect("epsparql").parse(DIALECT_EXAMPLES["epsparql"][0]), "where_clause")
    assert [c.data if isinstance(c, Tree) else c.type for c in where.children] == [
        *["group_graph_pattern", "EQUALS", "group_graph_pattern", "filter"],
    ]


def test_epsparql_projection_needs_as() -> None:
    dialect = get_dialect("epsparql")
    assert _only(dialect.parse(DIALECT_EXAMPLES["epsparql"][3]), "bare_select_expression")
    with pytest.raises(QuerySyntaxError) as caught:
        dialect.parse("SELECT ?a ?b + 1 WHERE { }")
    assert str(caught.value).splitlines()[0] == "line 1, column 17: found '?b + 1', expected AS"


def test_etalis_forms() -> None:
    tree = get_dialect("epsparql").parse(
        "CONSTRUCT ?c hasPrice ?p WHERE { ?c hasStockPrice ?p } SEQ "
        "{ aggregate(sum(?p), rdf(?c, hasStockPrice, ?p), ?s) } "
        "DO ( ?q is ?p + 1 && write(?q) ) WITHIN 30"
    )
    assert _values(_only(tree, "construct_triples")) == ["?c", "hasPrice", "?p"]
    assert _only(tree, "etalis_aggregate")
    assert _values(_only(tree, "within_clause")) == ["30"]
    assert "is" in _values(_only(tree, "do_clause"))


def test_cqelscep_nested_path_of_example_6() -> None:
    tree = get_dialect("cqelscep").parse(_read(PAPER / "cqelscep" / "example6.cqelscep"))
    nested = _only(tree, "nested_path")
    assert _values(nested) == [":means", ":subway"]
    seq = _only(tree, "seq_pattern")
    assert _kinds(seq) == ["event_template", "event_template", "negated_event"]


def test_rsepql_policies_and_precedence() -> None:
    tree = get_dialect("rsepql").parse(DIALECT_EXAMPLES["rsepql"][0])
    policies = _only(tree, "event_policies")
    assert [(c.data, _values(c)) for c in policies.children if isinstance(c, Tree)] == [
        ("selection_policy", ["recent"]),
        ("consumption_policy", ["recent"]),
    ]
    seq = _only(tree, "event_seq")  # FIRST binds tighter than SEQ
    assert _kinds(seq) == ["first_event", "last_event"]
    with pytest.raises(QuerySyntaxError):
        get_dialect("rsepql").parse(
            "SELECT * WHERE { MATCH [SELECTION sometimes] ( EVENT <w> { } ) }"
        )


def test_rejected_with_clean_errors() -> None:
    cases = {
        "epsparql": "SELECT ?x WHERE { ?x ?x ?x } SEQUENTIONAL { ?y ?y ?y }",
        "spaseq": "SELECT ?x WITHIN 3 WEEKS FROM STREAM S1 <s> WHERE SEQ (A) { }",
        "rspql": "REGISTER RSTREAM <o> AS SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE] {}",
        "cqels": "SELECT * WHERE { STREAM <s> { ?s ?p ?o } }",
        "csparql": "REGISTER QUERY AS SELECT * WHERE { }",
    }
    for name, text in cases.items():
        with pytest.raises(QuerySyntaxError) as caught:
            get_dialect(name).parse(text)
        assert isinstance(caught.value, UserError)
        assert re.match(r"line \d+, column \d+: found .+, expected ", str(caught.value))


# Detection -----------------------------------------------------------------------------------

DETECTION = {
    "SELECT * WHERE { ?s ?p ?o }": "sparql",
    "SELECT * WHERE { ?s <p> 'REGISTER RSTREAM' } # FROM NAMED WINDOW": "sparql",
    "SELECT * WHERE { ?s <http://x/STREAM#a> ?o . ?s ex:MATCH ?o }": "sparql",
    "SELECT ?x WHERE { ?x a ?y }": "sparql",
    "REGISTER RSTREAM <o> AS SELECT * WHERE { }": "rspql",
    "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] WHERE { }": "rspql",
    "SELECT * WHERE { WINDOW <w> { ?s ?p ?o } }": "rspql",
    "REGISTER STREAM <o> AS SELECT * WHERE { }": "rspql",
    "REGISTER QUERY q AS SELECT * WHERE { }": "csparql",
    "register stream out as CONSTRUCT { } WHERE { }": "csparql",
    "select * from stream <s> [range 1s step 1s] where { }": "csparql",
    "FROM dynamic stream <s> [range 1000ms step 1000ms] SELECT * WHERE { }": "rdfox",
    "PREFIX : <e> from DYNAMIC stream :s [range 1s] SELECT * WHERE { }": "rdfox",
    "SELECT * WHERE { stream <s> [range 3s] { } }": "cqels",
    "SELECT * WHERE { STREAM ?s [NOW] { } }": "cqels",
    "SELECT * WHERE { ?s ?p ?o } SEQ { ?s ?p ?x }": "epsparql",
    "SELECT * WHERE { ?s ?p ?o FILTER(getDURATION() < 1) }": "epsparql",
    "SELECT ?c WHERE { ?c hasStockPrice ?p }": "epsparql",
    "SELECT * WHERE { SEQ ({?a <p> ?b}, !{?b <q> ?c}) }": "cqelscep",
    "SELECT * WHERE { ?s (<p>/[<q> <r>]) ?o }": "cqelscep",
    "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE 10m] WHERE { }": "cqelscep",
    "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] WHERE { MATCH (EVENT <w> {}) }": ("rsepql"),
    "SELECT * WITHIN 1 SECONDS FROM STREAM S1 <s> WHERE SEQ (A) { DEFINE GPM A ON S1 {} }": (
        "spaseq"
    ),
}


@pytest.mark.parametrize("text", DETECTION, ids=list(DETECTION))
def test_detect_dialect(text: str) -> None:
    assert detect_dialect(text).name == DETECTION[text]


def test_detection_order_is_explicit_and_complete() -> None:
    assert DETECTION_ORDER[-1] == "sparql"
    assert sorted(DETECTION_ORDER) == sorted(d.name for d in all_dialects())
    assert [d.name for d in all_dialects()] == list(DETECTION_ORDER)


def test_cue_text_hides_iris_strings_and_comments() -> None:
    text = 'SELECT * # REGISTER QUERY\n WHERE  {\t<http://a#b> <p> \'x #y\' ; <q> """z\n""" }'
    assert cue_text(text) == 'SELECT * WHERE { <> <> "" ; <> "" }'


def test_explicit_dialect_overrides_detection() -> None:
    text = "SELECT * WHERE { ?s ?p ?o }"
    names = ("rsp-ql", "C-SPARQL", "CQELS-QL", "CQELS-CEP", "ep-sparql", "SPAseq", "RSEP-QL")
    names += ("RDFox",)
    for name in names:
        dialect, _ = parse(text, name)
        assert dialect is get_dialect(name)
    with pytest.raises(UserError, match="unknown dialect 'tachyon'"):
        get_dialect("tachyon")


# Dialect modules and parameters ---------------------------------------------------------------


@pytest.mark.parametrize("dialect", all_dialects(), ids=lambda d: d.name)
def test_dialect_declares_every_default(dialect: Dialect) -> None:
    """Every parameter a PRAGMA may set has a default with its reason; that the values are
    allowed is checked where the allowed values are (tests/algebra/test_compile.py)."""
    assert set(dialect.defaults) == set(PARAMETER_NAMES)
    for name, (_, why) in dialect.defaults.items():
        assert len(why) > 20, (dialect.name, name)


@pytest.mark.parametrize("dialect", all_dialects(), ids=lambda d: d.name)
def test_dialect_module_is_small_and_its_keywords_are_in_its_grammar(dialect: Dialect) -> None:
    files = dialect.grammar_files()
    assert files[0] == "stream.lark"
    grammar = "\n".join(
        (REPO / "src" / "rsep" / "lang" / "grammar" / f).read_text(encoding="utf-8")
        for f in ("sparql.lark", *files)
    ).upper()
    for keyword in dialect.keywords:
        assert keyword.upper() in grammar, (dialect.name, keyword)
    assert dialect.title and (dialect.name == "sparql" or dialect.cues)


@pytest.mark.parametrize(
    ("dialect", "parameter", "value"),
    [
        ("csparql", "window.report", "window_close,non_empty"),
        ("csparql", "r2s", "rstream"),
        ("csparql", "selection", "naive"),
        ("cqels", "window.report", "content_change,non_empty"),
        ("cqels", "r2s", "istream"),
        ("spaseq", "strategy", "per_operator"),
        ("epsparql", "selection", "unrestricted"),
        ("epsparql", "timestamps", "interval"),
        ("cqelscep", "timestamps", "interval"),
        ("rspql", "window.present", "closing"),
        ("rspql", "profile", "none"),
        ("rspql", "window.report", "window_close,non_empty"),
        ("rspql", "r2s", "rstream"),
        ("rdfox", "window.report", "window_close,non_empty"),
        ("rdfox", "r2s", "rstream"),
        ("rdfox", "profile", "none"),
    ],
)
def test_engine_defaults(dialect: str, parameter: str, value: str) -> None:
    assert get_dialect(dialect).parameter(parameter) == value


# The grammars: built once, and with only the documented LALR choices ---------------------------

# Shift/reduce conflicts Lark resolves as shift, by dialect; each is documented in the
# dialect's grammar file and in docs/languages.md. (Reduce/reduce conflicts fail the build.)
RESOLVED_CONFLICTS = {
    "cqelscep": {"LSQB"},  # '[' after a labelled axis step opens a nested expression
    "epsparql": {  # an expression right after a bare projection continues it
        *["PLUS", "-", "INTEGER_POSITIVE", "DECIMAL_POSITIVE", "DOUBLE_POSITIVE"],
        *["INTEGER_NEGATIVE", "DECIMAL_NEGATIVE", "DOUBLE_NEGATIVE", "NOT", "LPAR"],
    },
}


def test_grammar_conflicts_are_the_documented_ones(caplog: pytest.LogCaptureFixture) -> None:
    from lark import Lark

    from rsep.lang.dialects import _grammar
    from rsep.lang.parser import grammar_text

    old = lark_logger.level
    lark_logger.setLevel(logging.DEBUG)
    try:
        for dialect in all_dialects():
            caplog.clear()
            text = "\n".join([grammar_text(), *(_grammar(f) for f in dialect.grammar_files())])
            with caplog.at_level(logging.DEBUG, logger="lark"):
                parser = Lark(text, parser="lalr", lexer="contextual", start="query_unit")
            # anonymous terminals by their text ('-'), the others by their name
            label = {
                t.name: t.pattern.value if t.name.startswith("__ANON") else t.name
                for t in parser.terminals
            }
            found = re.findall(r"Shift/Reduce conflict for terminal (\w+)", caplog.text)
            labels = {label.get(name, name).replace("\\", "") for name in found}
            assert labels == RESOLVED_CONFLICTS.get(dialect.name, set()), dialect.name
    finally:
        lark_logger.setLevel(old)


def test_parsers_are_built_once() -> None:
    for dialect in all_dialects():
        assert dialect.parser() is dialect.parser()


# Downward compatibility: every dialect reads SPARQL 1.1 ----------------------------------------


@cache
def _w3c_queries() -> tuple[tuple[str, str, bool], ...]:
    from test_sparql_grammar import FILES, NEGATIVE, SUITE, is_update

    out = []
    for path in FILES:
        text = (DATA / SUITE / path).read_text(encoding="utf-8")
        if not is_update(path, text):
            out.append((path, text, path.startswith(NEGATIVE)))
    return tuple(out)


@pytest.mark.parametrize("dialect", all_dialects(), ids=lambda d: d.name)
def test_dialect_reads_the_w3c_syntax_suites(shared_data: Path, dialect: Dialect) -> None:
    """Every positive query of the W3C suites parses and passes the checks in every
    dialect (EP-SPARQL states this downward compatibility, Sect. 4.2), and every negative
    one is still rejected by the grammar or the checks."""
    wrong = []
    for path, text, negative in _w3c_queries():
        prefixes = ("rdf", "rdfs", "xsd", "fn", "", "ex") if "spec_examples" in path else ()
        try:
            check_sparql(dialect.parse(text), prefixes=prefixes)
            accepted = True
        except (QuerySyntaxError, QuerySemanticError):
            accepted = False
        if accepted == negative:
            wrong.append(path)
    assert not wrong, wrong[:10]
    assert len(_w3c_queries()) > 900


# Fuzzing: detection and parsing end in a tree or in a clean error -----------------------------

_SOUP = [
    *"{}()[]<>?:;,.!+&|^/*-=#'\" \n0123456789",
    *["SELECT ", "WHERE ", "?x ", "<s> ", ":p ", "a ", "FILTER(", "PREFIX : <e> "],
    *["REGISTER RSTREAM <o> AS ", "REGISTER QUERY q AS ", "FROM NAMED WINDOW <w> ON <s> "],
    *["FROM STREAM <s> ", "FROM STREAM S1 <s> ", "STREAM <s> ", "WINDOW <w> ", "[RANGE 3s] "],
    *["[RANGE PT5S STEP PT1S T0 0 REPORT WINDOW_CLOSE] ", "[NOW]", "PRAGMA r2s = istream "],
    *["MATCH ", "EVENT <w> ", "FIRST ", "SEQ ", "SEQ (", "EQUALS ", "OPTIONALSEQ ", " AS "],
    *["getDURATION()", "WITHIN 3 SECONDS ", "DEFINE GPM A ON S1 ", "next::", "is ", "DO ("],
]


@settings(max_examples=300, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(_SOUP), max_size=40))
def test_fuzz_dialect_token_soup(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        parse(text)
    except QuerySyntaxError as error:
        assert str(error).startswith("line ")


@settings(max_examples=200, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_mutated_corpus_queries(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(PAPER_CASES), label="query")
    text = case.text()
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, max(len(text) - 1, 0)), label="at")
        piece = data.draw(st.sampled_from(_SOUP) | st.characters(), label="piece")
        text = text[:at] + piece + text[at + 1 :]
    for dialect in (detect_dialect(text), get_dialect(case.dialect)):
        try:
            dialect.parse(text)
        except QuerySyntaxError as error:
            assert str(error).startswith("line ")


# docs/languages.md stays in step with the code ------------------------------------------------

DOCS = REPO / "docs" / "languages.md"
_SECTION = re.compile(r"^## .*\(`(\w+)`\)$", re.M)
_FENCE = re.compile(r"^```\n(.*?)^```$", re.M | re.S)


def test_docs_examples_parse_in_their_section_dialect() -> None:
    text = DOCS.read_text(encoding="utf-8")
    sections = list(_SECTION.finditer(text))
    assert sorted(m.group(1) for m in sections) == sorted(set(DETECTION_ORDER) - {"sparql"})
    for i, section in enumerate(sections):
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        blocks = _FENCE.findall(text, section.end(), end)
        queries = [b for b in blocks if not b.lstrip().startswith(("MATCH [", "event pattern"))]
        assert queries, section.group(1)
        for query in queries:
            dialect, _ = parse(query)
            assert dialect.name == section.group(1), query


def test_docs_defaults_table_matches_the_dialects() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("| parameter | RSP-QL |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()
    titles = [cell.strip() for cell in rows[0].strip("|").split("|")][1:]
    by_title = {d.title: d for d in all_dialects()}
    for row in rows[2:]:
        cells = [cell.strip().strip("`") for cell in row.strip("|").split("|")]
        name, values = cells[0], cells[1:]
        assert [by_title[t].parameter(name) for t in titles] == values, name
    assert len(rows) - 2 == len(PARAMETER_NAMES)
