"""The dialects' ASTs (rsep.lang.ast_stream and the nodes of each dialect module): building,
printing and reading back.

- Every query of the corpus that ``test_dialect_grammars.py`` parses (the same discovery,
  imported; each file its own test id) builds into an AST and round-trips under its dialect:
  ``build(parse(print(q))) == q``, and printing is idempotent.
- ``validate_identity``-style tests per dialect and construct, with the expected tree (the
  sqlglot model, STYLE.md), and ``validate_all``-style tests: the same CityBench query in
  RSP-QL, C-SPARQL and CQELS-QL builds the same windows.
- A property test over random dialect trees (print, parse, equal), and fuzzing: whatever the
  input, ``parse_query`` returns a tree or raises QuerySyntaxError or QuerySemanticError.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_dialect_grammars import (
    _FENCE,
    _SECTION,
    _SOUP,
    DIALECT_EXAMPLES,
    DOCS,
    KNOWN_BAD,
    PAPER_CASES,
    RSEPQL_EXAMPLE_4,
    RSPQL_EXAMPLE_10,
    SHARED_CASES,
    Case,
)
from test_printer import PROLOGUES, canonical, expressions, group_patterns, tuples_of
from test_printer import iris as sparql_iris

from rsep.lang import QuerySemanticError, QuerySyntaxError, ast, parse_query, to_text
from rsep.lang.ast import (
    XSD_DECIMAL,
    XSD_INTEGER,
    Alias,
    Binary,
    BuiltIn,
    Construct,
    Filter,
    GroupPattern,
    Iri,
    Literal,
    Prefix,
    Property,
    Query,
    Select,
    Triples,
    TriplesBlock,
    Var,
)
from rsep.lang.ast_stream import (
    AllWindow,
    CountWindow,
    DateTime,
    Duration,
    FromStream,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    NowWindow,
    PastWindow,
    Pragma,
    PragmaCall,
    PragmaWord,
    Register,
    ReportStrategy,
    StreamPattern,
    StreamQuery,
    TimeWindow,
    Window,
    WindowPattern,
    duration,
    duration_text,
    stream_windows,
)
from rsep.lang.build import build
from rsep.lang.dialects import DETECTION_ORDER, Dialect, all_dialects, get_dialect
from rsep.lang.dialects.cqelscep import AxisStep, NestedPath, SeqPattern, SeqTemplate, SeqWindow
from rsep.lang.dialects.epsparql import Do, EtalisAggregate, Is, TemporalJoin, Within
from rsep.lang.dialects.rsepql import BasicEvent, EventSeq, First, Last, Match
from rsep.lang.dialects.spaseq import (
    Conjunction,
    DefineGpm,
    Disjunction,
    GpmRef,
    KleenePlus,
    NamedStream,
    NegatedEvent,
    OptionalEvent,
    SeqClause,
    Sequence,
    SpaseqQuery,
    StreamName,
)

EX = "http://example.org/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PRE = f"PREFIX : <{EX}>\n"

# The papers use ':' and 'ex:' without declaring them and give no IRI (INDEX.md); rdf: and
# xsd: are the W3C namespaces. Queries of the papers are read with these.
PAPER_PREFIXES = {"": EX, "ex": "http://example.org/ex#", "rdf": RDF, "xsd": XSD}


def i(local: str) -> Iri:
    return Iri(EX + local)


def v(name: str) -> Var:
    return Var(name)


def t(s: ast.GraphNode, p: ast.Var | ast.Iri | ast.Path, o: ast.GraphNode) -> Triples:
    return Triples(s, (Property(p, (o,)),))


def bgp(*triples: Triples) -> TriplesBlock:
    return TriplesBlock(triples)


def group(*elements: ast.Pattern) -> GroupPattern:
    return GroupPattern(elements)


def ms(value: int) -> Duration:
    return Duration(value)


# The corpus -------------------------------------------------------------------------------

CASES = [*SHARED_CASES, *PAPER_CASES]


def _prefixes(case: Case) -> dict[str, str] | None:
    return PAPER_PREFIXES if case.folder.startswith("paper_queries") else None


def _build(dialect: Dialect, text: str, start: str, prefixes: dict[str, str] | None) -> Any:
    """The AST of ``text`` (a query, or a group for a CSR-Bench window pattern)."""
    return build(dialect.parse(text, start), prefixes=prefixes, builder=dialect.builder)


def round_trip(dialect: Dialect, node: Any, start: str = "query_unit", **kw: Any) -> str:
    """Print ``node``; assert that the text builds back to it and prints the same."""
    printed = dialect.print(node)
    again = _build(dialect, printed, start, kw.get("prefixes"))
    assert again == node, printed
    assert dialect.print(again) == printed, printed
    return printed


def _corpus_case(case: Case) -> tuple[Dialect, Any]:
    if case.id in KNOWN_BAD:
        pytest.skip(f"rejected by the grammar: {KNOWN_BAD[case.id]}")
    dialect = get_dialect(case.dialect)
    return dialect, _build(dialect, case.text(), case.start, _prefixes(case))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_query_builds_and_round_trips(case: Case) -> None:
    dialect, node = _corpus_case(case)
    assert isinstance(node, Query if case.start == "query_unit" else GroupPattern)
    round_trip(dialect, node, case.start, prefixes=_prefixes(case))


def test_corpus_round_trip_report(shared_data: Path) -> None:
    """Per folder: built / round-tripped / queries (known-bad ones not counted)."""
    counts: Counter[tuple[str, str]] = Counter()
    for case in CASES:
        if case.id in KNOWN_BAD:
            continue
        counts[case.folder, "total"] += 1
        dialect = get_dialect(case.dialect)
        node = _build(dialect, case.text(), case.start, _prefixes(case))
        counts[case.folder, "built"] += 1
        round_trip(dialect, node, case.start, prefixes=_prefixes(case))
        counts[case.folder, "round-tripped"] += 1
    folders = sorted({folder for folder, _ in counts})
    lines = [f"{'folder':34} {'built':>6} {'round-tripped':>13} {'total':>6}"]
    for folder in folders:
        row = [counts[folder, k] for k in ("built", "round-tripped", "total")]
        lines.append(f"{folder:34} {row[0]:>6} {row[1]:>13} {row[2]:>6}")
    print("\n".join(lines))
    assert sum(counts[f, "round-tripped"] for f in folders) >= 140


EXAMPLES = [
    *[(name, text) for name, texts in DIALECT_EXAMPLES.items() for text in texts],
    ("rsepql", RSEPQL_EXAMPLE_4),
    ("rspql", RSPQL_EXAMPLE_10),
]


@pytest.mark.parametrize(
    ("name", "text"), EXAMPLES, ids=[f"{n}-{k}" for k, (n, _) in enumerate(EXAMPLES)]
)
def test_grammar_test_examples_round_trip(name: str, text: str) -> None:
    dialect = get_dialect(name)
    round_trip(dialect, dialect.parse_query(text, check=False))


def test_docs_examples_build_check_and_round_trip() -> None:
    """The example of each dialect's section of docs/languages.md (with the papers' prefixes,
    which the examples use without declaring them, as the papers do)."""
    text = DOCS.read_text(encoding="utf-8")
    sections = list(_SECTION.finditer(text))
    for k, section in enumerate(sections):
        end = sections[k + 1].start() if k + 1 < len(sections) else len(text)
        for block in _FENCE.findall(text, section.end(), end):
            if block.lstrip().startswith(("MATCH [", "event pattern")):
                continue
            dialect = get_dialect(section.group(1))
            query = parse_query(block, prefixes=PAPER_PREFIXES)
            assert query == dialect.parse_query(block, prefixes=PAPER_PREFIXES)
            round_trip(dialect, query, prefixes=PAPER_PREFIXES)


# validate_identity: each construct, its tree, its round trip ----------------------------------


def identity(
    name: str, text: str, expected: Any = None, printed: str | None = None, check: bool = True
) -> Query:
    """Parse ``text`` in dialect ``name``, compare with ``expected``, and round-trip it;
    with ``printed``, the canonical text too (sqlglot's ``validate_identity``)."""
    dialect = get_dialect(name)
    query = dialect.parse_query(text, check=check)
    if expected is not None:
        assert query == expected
    out = round_trip(dialect, query)
    if printed is not None:
        assert out == printed
    return query


def elements(query: Query) -> tuple[ast.Pattern, ...]:
    assert isinstance(query.where, GroupPattern)
    return query.where.elements


SPO = bgp(t(v("s"), v("p"), v("o")))


# Durations and windows (stream.lark) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "counted"),
    [
        ("PT3S", 3000, False),
        ("3s", 3000, False),
        ("3000ms", 3000, False),
        ("PT0.5S", 500, False),
        ("1.5h", 5_400_000, False),
        ("10m", 600_000, False),
        ("P1DT1H", 90_000_000, False),
        ("P1W", 604_800_000, False),
        ("1d", 86_400_000, False),
        ("5", 5, True),
    ],
)
def test_durations_keep_milliseconds(text: str, value: int, counted: bool) -> None:
    node = duration(text)
    assert node == Duration(value, counted)
    assert node.written == text
    assert duration_text(node) == text  # as written
    assert duration_text(Duration(value, counted)) == duration_text(
        duration(duration_text(Duration(value, counted)))
    )


def test_duration_equality_and_canonical_form() -> None:
    assert duration("PT3S") == duration("3s") == duration("3000ms")
    assert duration("5") != duration("5ms")  # a count of PRAGMA time_unit
    assert duration("5").milliseconds(1000) == 5000
    assert [duration_text(ms(n)) for n in (0, 500, 3000, 600_000, 7_200_000, 86_400_000)] == [
        *["0ms", "500ms", "3s", "10m", "2h", "1d"]
    ]
    with pytest.raises(ValueError, match="no fixed length"):
        duration("P1M")
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        duration("0.5ms")
    with pytest.raises(ValueError):
        Duration(-1)


def _window(spec: str) -> Window:
    query = identity("rspql", f"SELECT * FROM NAMED WINDOW <w> ON <s> {spec} WHERE {{ }}")
    (clause,) = query.dataset
    assert isinstance(clause, NamedWindow)
    return clause.window


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("[RANGE PT10S STEP PT2S]", TimeWindow(ms(10_000), ms(2000))),
        ("[RANGE 10s SLIDE 2s]", TimeWindow(ms(10_000), ms(2000))),
        ("[RANGE 3000ms]", TimeWindow(ms(3000))),
        ("[RANGE 5 STEP 1]", TimeWindow(Duration(5, True), Duration(1, True))),
        ("[RANGE 5s TUMBLING]", TimeWindow(ms(5000), ms(5000))),
        ("[RANGE TRIPLES 10]", CountWindow(10)),
        ("[TRIPLES 10]", CountWindow(10)),
        ("[ELEMENTS 10 STEP 2]", CountWindow(10, 2)),
        ("[ITEM 4]", CountWindow(4)),
        ("[NOW]", NowWindow()),
        ("[ALL]", AllWindow()),
        ("[LANDMARK T0 1]", LandmarkWindow(t0=Duration(1, True))),
        ("[FROM 2 TO 10]", IntervalWindow(Duration(2, True), Duration(10, True))),
        (
            "[FROM '1970-01-01T00:00:01Z' TO PT1H]",
            IntervalWindow(DateTime(1000), ms(3_600_000)),
        ),
        ("[FROM NOW-PT2H TO NOW]", PastWindow(ms(7_200_000))),
        ("[FROM NOW - PT2H TO NOW - PT1H]", PastWindow(ms(7_200_000), ms(3_600_000))),
        ("[FROM NOW-PT2H TO NOW STEP PT1H]", PastWindow(ms(7_200_000), None, ms(3_600_000))),
        (
            "[RANGE PT10S STEP PT2S T0 0 REPORT WINDOW_CLOSE NON_EMPTY]",
            TimeWindow(
                ms(10_000),
                ms(2000),
                t0=Duration(0, True),
                report=(ReportStrategy("window_close"), ReportStrategy("non_empty")),
            ),
        ),
        (
            "[RANGE 3s REPORT PERIODIC PT5S, CONTENT_CHANGE T0 '2020-01-01T00:00:00Z']",
            TimeWindow(
                ms(3000),
                t0=DateTime(1_577_836_800_000),
                report=(ReportStrategy("content_change"), ReportStrategy("periodic", ms(5000))),
            ),
        ),
    ],
)
def test_windows(spec: str, expected: Window) -> None:
    assert _window(spec) == expected


def test_report_policy_is_a_set() -> None:
    first = _window("[RANGE 1s REPORT NON_EMPTY WINDOW_CLOSE NON_EMPTY]")
    assert first == _window("[RANGE 1s REPORT WINDOW_CLOSE, NON_EMPTY]")
    assert [r.name for r in first.report] == ["window_close", "non_empty"]


def test_window_prints_as_written() -> None:
    query = get_dialect("rspql").parse_query(
        "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP 2000ms T0 0 "
        "REPORT NON_EMPTY, PERIODIC 5s] WHERE { }"
    )
    assert "[RANGE PT10S STEP 2000ms T0 0 REPORT NON_EMPTY, PERIODIC 5s]" in to_text(query, "rspql")
    (clause,) = query.dataset
    assert isinstance(clause, NamedWindow)
    cqels = Query(form=Select(), where=group(StreamPattern(i("s"), clause.window, group())))
    assert "[RANGE PT10S SLIDE 2000ms T0 0 REPORT" in to_text(cqels, "cqels")


def test_pragmas() -> None:
    query = identity(
        "sparql",
        "PRAGMA window.present = Latest\nPREFIX : <http://e/>\n"
        "PRAGMA window.report = window_close, non_empty, periodic(PT5S)\n"
        "PRAGMA lateness = 500ms\nPRAGMA window.t0 = '2020-01-01T00:00:00Z'\n"
        "PRAGMA time_unit = s\nSELECT * WHERE { ?s ?p ?o }",
    )
    assert query.prologue == (
        Pragma("window.present", (PragmaWord("latest"),)),
        Prefix("", "http://e/"),
        Pragma(
            "window.report",
            (
                PragmaWord("window_close"),
                PragmaWord("non_empty"),
                PragmaCall("periodic", ms(5000)),
            ),
        ),
        Pragma("lateness", (ms(500),)),
        Pragma("window.t0", (Literal("2020-01-01T00:00:00Z"),)),
        Pragma("time_unit", (PragmaWord("s"),)),
    )
    pragma = query.prologue[2]
    assert isinstance(pragma, Pragma)
    assert pragma.text() == "window_close, non_empty, periodic(PT5S)"
    other = identity("rspql", "PRAGMA profile = <http://p>, 1.5 SELECT * { }", check=False)
    assert other.prologue == (Pragma("profile", (Iri("http://p"), Literal("1.5", XSD_DECIMAL))),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE P1M] WHERE { }",
            "line 1, column 46: the duration P1M has no fixed length (years, months); "
            "write it in days",
        ),
        (
            "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE 0.5ms] WHERE { }",
            "line 1, column 46: the duration 0.5ms is not a whole number of milliseconds",
        ),
        (
            "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE 1s T0 1 T0 2] WHERE { }",
            "line 1, column 54: T0 is given twice in one window",
        ),
        (
            "SELECT * FROM NAMED WINDOW <w> ON <s> [NOW REPORT NON_EMPTY REPORT NON_EMPTY] "
            "WHERE { }",
            "line 1, column 61: REPORT is given twice in one window",
        ),
        (
            "SELECT * FROM NAMED WINDOW <w> ON <s> [FROM 'yesterday' TO 5] WHERE { }",
            'line 1, column 45: "yesterday" is not an xsd:dateTime',
        ),
        (
            "REGISTER ISTREAM <o> AS SELECT RSTREAM * WHERE { }",
            "line 1, column 32: two R2S operators, ISTREAM after REGISTER and RSTREAM in the "
            "query form",
        ),
        (
            "SELECT * WHERE { { SELECT ISTREAM * WHERE { } } }",
            "line 1, column 27: a sub-select has no R2S operator",
        ),
        (
            "SELECT * WHERE { MATCH [SELECTION recent SELECTION naive] (EVENT <w> { }) }",
            "line 1, column 42: SELECTION is given twice",
        ),
        (
            "SELECT * WHERE { ?s next::beg ?o }",
            "line 1, column 27: the label beg means :beg, but the prefix ':' is not declared",
        ),
    ],
)
def test_errors_found_while_building(text: str, message: str) -> None:
    dialect = "cqelscep" if "next::" in text else "rsepql"
    with pytest.raises(QuerySemanticError) as caught:
        parse_query(text, dialect, check=False)
    assert str(caught.value) == message


# RSP-QL ----------------------------------------------------------------------------------------


def test_rspql_registration_windows_and_window_patterns() -> None:
    query = identity(
        "rspql",
        PRE + "REGISTER ISTREAM :out AS SELECT ?s FROM :g "
        "FROM NAMED WINDOW :w ON STREAM :s [RANGE PT1M STEP PT10S] "
        "WHERE { WINDOW :w { ?s ?p ?o } ?s :q ?z }",
    )
    assert query == StreamQuery(
        prologue=(Prefix("", EX),),
        register=Register(i("out")),
        r2s="istream",
        form=Select((v("s"),)),
        dataset=(
            ast.From(i("g")),
            NamedWindow(i("w"), i("s"), TimeWindow(ms(60_000), ms(10_000))),
        ),
        where=group(WindowPattern(i("w"), group(SPO)), bgp(t(v("s"), i("q"), v("z")))),
    )
    assert list(stream_windows(query)) == [(i("w"), i("s"), TimeWindow(ms(60_000), ms(10_000)))]


def test_rspql_r2s_wherever_written_is_one_tree() -> None:
    rsp4j = identity("rspql", "REGISTER RSTREAM <o> AS SELECT * WHERE { ?s ?p ?o }")
    draft = identity("rspql", "REGISTER STREAM <o> AS SELECT RSTREAM * WHERE { ?s ?p ?o }")
    assert rsp4j == draft
    assert to_text(draft, "rspql").startswith("REGISTER RSTREAM <o> AS\nSELECT *\n")
    registered = identity("rspql", "REGISTER STREAM <o> AS SELECT * WHERE { }")
    assert isinstance(registered, StreamQuery) and registered.r2s is None
    assert to_text(registered, "rspql").startswith("REGISTER STREAM <o> AS\n")
    unregistered = identity(
        "rspql",
        "SELECT DSTREAM DISTINCT ?s WHERE { ?s ?p ?o }",
        printed="SELECT DSTREAM DISTINCT ?s\nWHERE {\n  ?s ?p ?o .\n}\n",
    )
    assert isinstance(unregistered, StreamQuery) and unregistered.register is None
    construct = identity(
        "rspql", "CONSTRUCT ISTREAM { ?s ?p ?o } FROM NAMED WINDOW ?w ON ?st [ITEM 10] WHERE {}"
    )
    assert isinstance(construct, StreamQuery) and construct.r2s == "istream"
    assert construct.dataset == (NamedWindow(v("w"), v("st"), CountWindow(10)),)


def test_rspql_named_window_as_form_and_plain_sparql() -> None:
    on = identity("rspql", "SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE P1D STEP PT12H] {}")
    as_ = identity(
        "rspql", "SELECT * FROM NAMED WINDOW ON STREAM <s> [RANGE P1D STEP PT12H] AS <w> {}"
    )
    assert on == as_
    plain = identity("rspql", "SELECT * WHERE { ?s ?p ?o }")
    assert type(plain) is Query  # no registration: the same tree as in SPARQL
    assert plain == get_dialect("sparql").parse_query("SELECT * WHERE { ?s ?p ?o }")


def test_rspql_paper_example_10() -> None:
    query = identity("rspql", RSPQL_EXAMPLE_10)
    assert isinstance(query, StreamQuery) and query.r2s == "rstream"
    windows = [clause.window for clause in query.dataset if isinstance(clause, NamedWindow)]
    assert windows == [
        TimeWindow(Duration(5, True), Duration(2, True), t0=Duration(1, True)),
        TimeWindow(
            Duration(2, True),
            Duration(2, True),
            t0=Duration(0, True),
            report=(ReportStrategy("window_close"), ReportStrategy("non_empty")),
        ),
    ]


# C-SPARQL ------------------------------------------------------------------------------------


def test_csparql_registration_and_from_stream() -> None:
    query = identity(
        "csparql",
        "REGISTER QUERY q COMPUTED EVERY 5s AS PREFIX : <http://example.org/> SELECT ?s "
        "FROM STREAM <http://s> [RANGE 5s TUMBLING] FROM <http://g> WHERE { ?s :p ?o }",
    )
    assert query == StreamQuery(
        prologue=(Prefix("", EX),),
        register=Register("q", query=True, every=ms(5000)),
        form=Select((v("s"),)),
        dataset=(
            FromStream(Iri("http://s"), TimeWindow(ms(5000), ms(5000))),
            ast.From(Iri("http://g")),
        ),
        where=group(bgp(t(v("s"), i("p"), v("o")))),
    )
    assert to_text(query, "csparql").startswith(
        "PREFIX : <http://example.org/>\nREGISTER QUERY q COMPUTED EVERY 5s AS\nSELECT ?s\n"
        "FROM STREAM <http://s> [RANGE 5s STEP 5s]\n"
    )
    stream = identity(
        "csparql",
        "REGISTER STREAM out AS CONSTRUCT { ?s <p> ?o } "
        "FROM STREAM <http://s> [RANGE TRIPLES 10] WHERE { ?s ?p ?o }",
    )
    assert isinstance(stream, StreamQuery) and stream.register == Register("out")
    assert stream.dataset == (FromStream(Iri("http://s"), CountWindow(10)),)
    unregistered = identity("csparql", "SELECT ?s FROM STREAM <http://s> [RANGE 1s] { ?s ?p ?o }")
    assert type(unregistered) is Query


# RDFox (CSR-Bench-Aligned) ----------------------------------------------------------------------


def test_rdfox_dynamic_streams_are_csparql_from_stream() -> None:
    """``FROM dynamic stream <s> [range … step …]`` before SELECT builds C-SPARQL's
    FROM STREAM node, first in the dataset, and prints before the query form."""
    query = identity(
        "rdfox",
        "PREFIX : <http://example.org/> FROM dynamic stream <http://s> "
        "[range 1000ms step 1000ms] FROM DYNAMIC STREAM <http://t> [RANGE 5s STEP 1s] "
        "SELECT ?s FROM <http://g> WHERE { ?s :p ?o }",
        printed="PREFIX : <http://example.org/>\n"
        "FROM dynamic stream <http://s> [RANGE 1000ms STEP 1000ms]\n"
        "FROM dynamic stream <http://t> [RANGE 5s STEP 1s]\n"
        "SELECT ?s\nFROM <http://g>\nWHERE {\n  ?s :p ?o .\n}\n",
    )
    assert query == Query(
        prologue=(Prefix("", EX),),
        form=Select((v("s"),)),
        dataset=(
            FromStream(Iri("http://s"), TimeWindow(ms(1000), ms(1000))),
            FromStream(Iri("http://t"), TimeWindow(ms(5000), ms(1000))),
            ast.From(Iri("http://g")),
        ),
        where=group(bgp(t(v("s"), i("p"), v("o")))),
    )
    csparql = get_dialect("csparql").parse_query(
        "REGISTER QUERY q AS PREFIX : <http://example.org/> SELECT ?s "
        "FROM STREAM <http://s> [RANGE 1s STEP 1s] FROM STREAM <http://t> [RANGE 5s STEP 1s] "
        "FROM <http://g> WHERE { ?s :p ?o }"
    )
    assert csparql.dataset == query.dataset
    with pytest.raises(ValueError, match="before the other dataset clauses"):
        to_text(query.replace(dataset=tuple(reversed(query.dataset))), "rdfox")


# CQELS-QL ------------------------------------------------------------------------------------


def test_cqels_stream_patterns() -> None:
    query = identity(
        "cqels",
        "SELECT * WHERE { STREAM <http://s> [RANGE 3000ms SLIDE 1s] { ?s ?p ?o } "
        "STREAM ?x [NOW] { } STREAM <http://t> [ALL] { } STREAM <http://u> [TRIPLES 5] { } }",
    )
    assert elements(query) == (
        StreamPattern(Iri("http://s"), TimeWindow(ms(3000), ms(1000)), group(SPO)),
        StreamPattern(v("x"), NowWindow(), group()),
        StreamPattern(Iri("http://t"), AllWindow(), group()),
        StreamPattern(Iri("http://u"), CountWindow(5), group()),
    )
    assert "STREAM <http://s> [RANGE 3000ms SLIDE 1s] {" in to_text(query, "cqels")


# RSEP-QL ---------------------------------------------------------------------------------------


def test_rsepql_paper_example_4() -> None:
    query = identity("rsepql", RSEPQL_EXAMPLE_4)
    assert query.dataset == (
        NamedWindow(i("w1"), i("S"), LandmarkWindow(t0=Duration(1, True))),
        NamedWindow(i("w2"), i("S"), TimeWindow(Duration(5, True), Duration(1, True))),
    )
    assert elements(query) == (
        Match(
            EventSeq(
                BasicEvent(i("w1"), (t(v("x"), i("p"), v("y")),)),
                BasicEvent(i("w2"), (t(v("y"), i("q"), v("z")),)),
            )
        ),
    )


def test_rsepql_policies_and_precedence() -> None:
    a, b = BasicEvent(i("w"), (t(v("a"), i("p"), v("b")),)), BasicEvent(i("w"), ())
    query = identity(
        "rsepql",
        PRE + "SELECT * FROM NAMED WINDOW :w ON :s [RANGE PT5S] WHERE { "
        "MATCH [CONSUMPTION recent SELECTION chronological] "
        "( FIRST EVENT :w { ?a :p ?b } SEQ LAST (EVENT :w { } SEQ EVENT :w { }) SEQ EVENT :w {} )}",
    )
    assert elements(query) == (
        Match(
            EventSeq(EventSeq(First(a), Last(EventSeq(b, b))), b),
            selection="chronological",
            consumption="recent",
        ),
    )
    right = identity(
        "rsepql",
        PRE + "SELECT * FROM NAMED WINDOW :w ON :s [FROM 2 TO 10] "
        "WHERE { MATCH ( EVENT :w {} SEQ ( EVENT :w {} SEQ FIRST EVENT :w {} ) ) }",
    )
    assert elements(right) == (Match(EventSeq(b, EventSeq(b, First(b)))),)
    assert "MATCH ( EVENT :w { } SEQ ( EVENT :w { } SEQ FIRST EVENT :w { } ) )" in to_text(
        right, "rsepql"
    )


# EP-SPARQL ---------------------------------------------------------------------------------------

P = i("hasStockPrice")


def test_epsparql_operators_group_left_to_right() -> None:
    query = identity(
        "epsparql",
        PRE + "SELECT ?c WHERE { ?c :hasStockPrice ?p1 } SEQ { ?c :hasStockPrice ?p2 } "
        "EQUALSOPTIONAL { ?c :hasStockPrice ?p3 } "
        'FILTER (?p2 < ?p1 * 0.7 && getDURATION() < "P30D"^^<http://www.w3.org/2001/XMLSchema#duration>)',
    )
    one, two, three = (group(bgp(t(v("c"), P, v(f"p{n}")))) for n in (1, 2, 3))
    seven = Literal("0.7", XSD_DECIMAL)
    duration = Literal("P30D", XSD + "duration")
    assert elements(query) == (
        TemporalJoin("EQUALSOPTIONAL", TemporalJoin("SEQ", one, two), three),
        Filter(
            Binary(
                "&&",
                Binary("<", v("p2"), Binary("*", v("p1"), seven)),
                Binary("<", BuiltIn("GETDURATION"), duration),
            )
        ),
    )
    printed = to_text(query, "epsparql")
    assert "} SEQ {" in printed and "getDURATION() <" in printed
    assert printed.split("\n")[-2].startswith("FILTER (")  # the paper's layout
    mixed = identity(
        "epsparql",
        "SELECT * WHERE { {?a <p> 1} SEQ {?a <p> 2} UNION {?a <p> 3} OPTIONALSEQ {?a <p> 4} }",
    )
    g = [group(bgp(t(v("a"), Iri("p"), Literal(str(n), XSD_INTEGER)))) for n in range(1, 5)]
    (element,) = elements(mixed)
    assert element == TemporalJoin(
        "OPTIONALSEQ", ast.Union((group(TemporalJoin("SEQ", g[0], g[1])), g[2])), g[3]
    )


def test_epsparql_projection_without_parentheses() -> None:
    query = identity(
        "epsparql", "SELECT ?c ?x * 2 AS ?z WHERE { ?c <p> ?x } SEQ { ?c <q> ?x }", check=False
    )
    assert query.form == Select(
        (v("c"), Alias(Binary("*", v("x"), Literal("2", XSD_INTEGER)), v("z")))
    )
    braced = get_dialect("epsparql").parse_query(
        "SELECT ?c (?x * 2 AS ?z) WHERE { ?c <p> ?x } SEQ { ?c <q> ?x }", check=False
    )
    assert braced == query


def test_etalis_forms() -> None:
    query = identity(
        "epsparql",
        "CONSTRUCT ?c hasPrice ?q WHERE { ?c hasStockPrice ?p } SEQ "
        "{ aggregate(sum(?p), rdf(?c, hasStockPrice, ?p), ?s) } "
        "DO ( ?q is ?p + 1 && write(?q) ) WITHIN 30",
    )
    price = Iri("hasStockPrice")
    assert query.form == Construct((t(v("c"), Iri("hasPrice"), v("q")),))
    goal = ast.FunctionCall(Iri("rdf"), (v("c"), price, v("p")))
    assert elements(query) == (
        TemporalJoin(
            "SEQ",
            group(bgp(t(v("c"), price, v("p")))),
            group(EtalisAggregate(ast.Aggregate("SUM", v("p")), goal, v("s"))),
        ),
        Do(
            Binary(
                "&&",
                Is(v("q"), Binary("+", v("p"), Literal("1", XSD_INTEGER))),
                ast.FunctionCall(Iri("write"), (v("q"),)),
            )
        ),
        Within(Duration(30, True)),
    )
    printed = to_text(query, "epsparql")
    assert "?c hasPrice ?q ." in printed and "?q is ?p + 1" in printed
    assert printed.endswith("DO (?q is ?p + 1 && write(?q))\nWITHIN 30\n")
    braced = get_dialect("epsparql").parse_query(
        "CONSTRUCT { ?c hasPrice ?q } WHERE { ?c hasStockPrice ?p } SEQ "
        "{ aggregate(sum(?p), rdf(?c, hasStockPrice, ?p), ?s) } "
        "DO ( ?q is ?p + 1 && write(?q) ) WITHIN 30"
    )
    assert braced == query
    counted = identity("epsparql", "SELECT ?n WHERE { aggregate(count, rdf(?c, p, ?x), ?n) }")
    assert elements(counted) == (
        EtalisAggregate(None, ast.FunctionCall(Iri("rdf"), (v("c"), Iri("p"), v("x"))), v("n")),
    )


def test_epsparql_keywords_are_not_printed_as_bare_names() -> None:
    query = identity("epsparql", "SELECT * WHERE { ?s <a> <seq>, <true>, <x1> }")
    printed = to_text(query, "epsparql")
    assert "<a> <seq>, <true>, x1 ." in printed


# CQELS-CEP ---------------------------------------------------------------------------------------


def test_cqelscep_sequences() -> None:
    query = identity(
        "cqelscep",
        PRE + "SELECT ?s FROM NAMED WINDOW :W ON :s [RANGE 10m] WHERE { "
        "WINDOW :W { SEQ ({?v :d ?s}, {?v :d ?s}, !{?v :a ?s}) } }",
    )
    delay, arrive = t(v("v"), i("d"), v("s")), t(v("v"), i("a"), v("s"))
    assert query.dataset == (NamedWindow(i("W"), i("s"), TimeWindow(ms(600_000))),)
    assert elements(query) == (
        WindowPattern(
            i("W"),
            group(
                SeqPattern(
                    (
                        SeqTemplate((delay,)),
                        SeqTemplate((delay,)),
                        SeqTemplate((arrive,), negated=True),
                    )
                )
            ),
        ),
    )
    clauses = identity(
        "cqelscep", PRE + "SELECT * WHERE { SEQ (:W1, !:W2, ?w) SEQ ({ }) }", check=False
    )
    assert elements(clauses) == (
        SeqPattern((SeqWindow(i("W1")), SeqWindow(i("W2"), negated=True), SeqWindow(v("w")))),
        SeqPattern((SeqTemplate(()),)),
    )


def test_cqelscep_nested_paths_and_axes() -> None:
    query = identity(
        "cqelscep",
        PRE + "SELECT ?s WHERE { ?s (^:beg/[:means :subway]/:end)+ :c . "
        "?s (next-1::beg[next::means/self::subway]/next^-1)* ?o . ?s next::[:p] ?o }",
    )
    (block,) = elements(query)
    assert isinstance(block, TriplesBlock)
    verbs = [triple.properties[0].verb for triple in block.triples]
    assert verbs == [
        ast.PathModified(
            ast.PathSequence(
                (
                    ast.PathInverse(i("beg")),
                    NestedPath(i("means"), i("subway")),
                    i("end"),
                )
            ),
            "+",
        ),
        ast.PathModified(
            ast.PathSequence(
                (
                    AxisStep(
                        "next",
                        inverse=True,
                        label=i("beg"),
                        nested=ast.PathSequence(
                            (
                                AxisStep("next", label=i("means")),
                                AxisStep("self", label=i("subway")),
                            )
                        ),
                    ),
                    AxisStep("next", inverse=True),
                )
            ),
            "*",
        ),
        AxisStep("next", nested=i("p")),
    ]
    printed = to_text(query, "cqelscep")
    assert "(next-1:::beg[next:::means / self:::subway] / next-1)*" in printed


def test_cqelscep_labelled_axis_before_a_blank_node_is_parenthesised() -> None:
    query = identity("cqelscep", PRE + "SELECT * WHERE { ?s (next::p) [ :q ?o ] }")
    assert "?s (next:::p) [ :q ?o ] ." in to_text(query, "cqelscep")


# SPAseq ---------------------------------------------------------------------------------------

SPASEQ_ENGINE = """PREFIX p: <http://example/>
SELECT ?c ?x ?y WITHIN 10 SECONDS PARTITION BY ?c
FROM STREAM S1 <http://example.org/main> FROM STREAM S2 <http://example.org/b>
WHERE SEQ (A; B+, C & A | B : !C) {
  DEFINE GPM A ON S1 { ?c p:price ?x }
  DEFINE GPM B ON S1, S2 { ?c p:price ?y GRAPH <http://kb> { ?c p:name ?n } } GROUP BY ?c
  DEFINE GPM C ON S2 { ?c p:volume ?v } HAVING (?v > 1)
}"""
SPASEQ_PAPER = SPASEQ_ENGINE.replace(
    "WITHIN 10 SECONDS PARTITION BY ?c", "WITHIN PT10S PARTITION BY (?c)"
).replace("WHERE SEQ (A; B+, C & A | B : !C) {", "WHERE { SEQ ((A; B+), ((C & A) | B) : C!)")


def test_spaseq_query_and_both_layouts() -> None:
    query = identity("spaseq", SPASEQ_ENGINE)
    assert query == identity("spaseq", SPASEQ_PAPER)
    assert isinstance(query, SpaseqQuery)
    assert query.within == ms(10_000)
    assert query.partition_by == (v("c"),)
    assert query.dataset == (
        NamedStream("S1", Iri("http://example.org/main")),
        NamedStream("S2", Iri("http://example.org/b")),
    )
    a, b, c = GpmRef("A"), GpmRef("B"), GpmRef("C")
    assert query.seq == Sequence(
        "skip_till_any",
        Sequence(
            "strict",
            Sequence("skip_till_next", a, KleenePlus(b)),
            Disjunction((Conjunction((c, a)), b)),
        ),
        NegatedEvent(c),
    )
    assert [gpm.name for gpm in query.gpms] == ["A", "B", "C"]
    gpm_b = query.gpms[1]
    assert gpm_b.streams == (StreamName("S1"), StreamName("S2"))
    assert gpm_b.group_by == (v("c"),)
    printed = to_text(query, "spaseq")
    assert "WITHIN 10 SECONDS\nPARTITION BY (?c)\n" in printed
    assert "  SEQ (A; B+, C & A | B : !C)\n  DEFINE GPM A ON S1 {" in printed


def test_spaseq_sequence_operators() -> None:
    def seq(expression: str) -> Any:
        text = (
            "SELECT ?x WITHIN 1 HOURS FROM STREAM S1 <http://s> WHERE "
            f"SEQ ({expression}) {{ DEFINE GPM A ON S1 {{ ?x ?p ?o }} }}"
        )
        query = identity("spaseq", text, check=False)
        assert isinstance(query, SpaseqQuery)
        return query.seq

    a, b = GpmRef("A"), GpmRef("B")
    assert seq("A?, B!") == Sequence("strict", OptionalEvent(a), NegatedEvent(b))
    assert seq("A!") == seq("!A") == NegatedEvent(a)
    assert seq("(A; B)+") == KleenePlus(Sequence("skip_till_next", a, b))
    assert seq("A; (B, A)") == Sequence("skip_till_next", a, Sequence("strict", b, a))
    assert seq("(A; B), A") == seq("A; B, A")
    assert seq("((A))") == a
    assert seq("(A | B) | A") == Disjunction((Disjunction((a, b)), a))


def test_spaseq_within_forms() -> None:
    def within(text: str) -> Duration:
        query = get_dialect("spaseq").parse_query(
            f"SELECT ?x WITHIN {text} FROM STREAM S1 <http://s> WHERE "
            "{ SEQ (A) DEFINE GPM A ON S1 { ?x ?p ?o } }"
        )
        assert isinstance(query, SpaseqQuery)
        return query.within

    assert within("30 MINUTES") == within("PT30M") == within("1800s") == ms(1_800_000)
    assert within("2 HOURS") == ms(7_200_000)
    assert within("5") == Duration(5, True)


# validate_all: one query in three dialects ------------------------------------------------------


def _citybench(shared: Path, name: str) -> dict[str, list[tuple[str, Window]]]:
    """Per dialect, (stream name, window) of a CityBench query (the RSP-QL files register
    the streams under localhost IRIs, the others under insight-centre.org: the fragment is
    the stream's name)."""
    out = {}
    for folder, dialect in (("rspql", "rspql"), ("csparql", "csparql"), ("cqels", "cqels")):
        text = (shared / "citybench-queries" / f"{folder}_query" / name).read_text("utf-8")
        query = parse_query(text, dialect)
        out[dialect] = [(s.value.split("#")[-1], w) for _, s, w in stream_windows(query)]
    return out


@pytest.mark.parametrize("name", ["Q10_5.txt", "Q10_8.txt"])
def test_same_windows_in_three_dialects(shared_data: Path, name: str) -> None:
    found = _citybench(shared_data, name)
    assert found["rspql"] == found["csparql"] == found["cqels"]
    assert {w for _, w in found["rspql"]} == {TimeWindow(ms(3000), ms(1000))}


def test_citybench_q1_in_three_dialects(shared_data: Path) -> None:
    """Width and streams agree; RSP-QL and C-SPARQL slide by 1s, CQELS-QL with every item
    (its Q1 writes no SLIDE): the choice the plan makes explicit."""
    found = _citybench(shared_data, "Q1.txt")
    streams = ["AarhusTrafficData182955", "AarhusTrafficData158505"]
    for dialect in ("rspql", "csparql", "cqels"):
        assert [s for s, _ in found[dialect]] == streams
        assert all(isinstance(w, TimeWindow) and w.width == ms(3000) for _, w in found[dialect])
    assert found["rspql"] == found["csparql"]
    assert {w for _, w in found["rspql"]} == {TimeWindow(ms(3000), ms(1000))}
    assert {w for _, w in found["cqels"]} == {TimeWindow(ms(3000))}


def test_one_tree_printed_in_every_window_dialect() -> None:
    """An RSP-QL window prints in CQELS-QL's and C-SPARQL's notation with the same value."""
    window = TimeWindow(ms(3000), ms(1000), t0=Duration(0, True))
    query = Query(
        form=Select((v("s"),)),
        where=group(StreamPattern(Iri("http://s"), window, group(SPO))),
    )
    for name in ("cqels", "cqelscep"):
        assert get_dialect(name).parse_query(to_text(query, name)) == query
    c = Query(form=Select(), dataset=(FromStream(Iri("http://s"), window),), where=group(SPO))
    assert get_dialect("csparql").parse_query(to_text(c, "csparql")) == c
    with pytest.raises(ValueError, match="C-SPARQL registers a query under a bare name"):
        to_text(StreamQuery(register=Register(Iri("http://o")), form=Select()), "csparql")
    with pytest.raises(ValueError, match="RSP-QL registers a stream named by an IRI"):
        to_text(StreamQuery(register=Register("q"), form=Select()), "rspql")


# Random dialect trees: print, parse, equal ------------------------------------------------------

words = st.sampled_from(["a", "b", "x", "c"]).map(Var)
names = st.sampled_from([EX + n for n in ("w", "w1", "s", "S2", "out")]).map(Iri)


@st.composite
def durations(draw: st.DrawFn, counted: bool | None = None) -> Duration:
    is_counted = draw(st.booleans()) if counted is None else counted
    value = draw(st.sampled_from([0, 1, 5, 500, 1000, 3000, 60_000]) | st.integers(0, 10**10))
    if is_counted:
        return Duration(value, True)
    seconds = Decimal(value) / 1000
    written = draw(st.sampled_from([None, f"{value}ms", f"PT{seconds}S"]))
    return Duration(value, written=written)


time_points = st.one_of(durations(), st.integers(0, 4 * 10**12).map(DateTime))
reports = tuples_of(
    st.one_of(
        st.sampled_from(["content_change", "window_close", "non_empty"]).map(ReportStrategy),
        durations().map(lambda d: ReportStrategy("periodic", d)),
    )
)
slides = st.none() | st.integers(0, 100)


@st.composite
def windows(draw: st.DrawFn) -> Window:
    size = draw(
        st.one_of(
            st.builds(TimeWindow, durations(), st.none() | durations()),
            st.builds(CountWindow, st.integers(0, 10**6), slides),
            st.builds(NowWindow),
            st.builds(AllWindow),
            st.builds(LandmarkWindow),
            st.builds(IntervalWindow, time_points, time_points),
            st.builds(PastWindow, durations(), st.none() | durations(), st.none() | durations()),
        )
    )
    return size.replace(t0=draw(st.none() | time_points), report=draw(reports))


pragma_values = st.one_of(
    durations(),
    st.sampled_from(["latest", "window_close", "istream", "s"]).map(PragmaWord),
    durations().map(lambda d: PragmaCall("periodic", d)),
    st.text(max_size=5).map(Literal),
    st.sampled_from(["0.5", "12.25"]).map(lambda s: Literal(s, XSD_DECIMAL)),
    sparql_iris,
)
pragmas = st.builds(
    Pragma, st.sampled_from(["r2s", "window.report", "x.y_z"]), tuples_of(pragma_values, 1)
)
prologues = st.tuples(st.sampled_from(PROLOGUES), tuples_of(pragmas, 0, 2)).map(
    lambda p: p[0] + p[1]
)
fillers = group_patterns(0)


def groups_with(special: st.SearchStrategy[ast.Pattern]) -> st.SearchStrategy[GroupPattern]:
    """A group of the dialect's own patterns among SPARQL ones (adjacent BGPs merged)."""
    return st.lists(
        st.one_of(special, fillers.map(lambda g: g.elements[0] if g.elements else g)), max_size=4
    ).map(canonical)


def queries(
    where: st.SearchStrategy[GroupPattern],
    dataset: st.SearchStrategy[ast.DatasetClause] | None = None,
    register: st.SearchStrategy[Register | None] | None = None,
    r2s: st.SearchStrategy[str | None] | None = None,
) -> st.SearchStrategy[Query]:
    forms = st.one_of(
        st.builds(Select, st.none() | tuples_of(words, 1)),
        tuples_of(st.builds(t, words, names, words)).map(Construct),
    )

    def make(parts: tuple[Any, ...]) -> Query:
        prologue, form, data, group_, reg, op = parts
        fields: dict[str, Any] = {
            "prologue": prologue,
            "form": form,
            "dataset": data,
            "where": group_,
        }
        if reg is None and op is None:
            return Query(**fields)
        return StreamQuery(register=reg, r2s=op, **fields)

    datasets = st.just(()) if dataset is None else tuples_of(dataset, 0, 2)
    registers = st.none() if register is None else register
    operators = st.none() if r2s is None else r2s
    return st.tuples(prologues, forms, datasets, where, registers, operators).map(make)


r2s_operators = st.none() | st.sampled_from(["rstream", "istream", "dstream"])
named_windows = st.builds(NamedWindow, names | words, names | words, windows())
window_patterns = st.builds(WindowPattern, names | words, fillers)
rspql_queries = queries(
    groups_with(window_patterns),
    named_windows,
    st.none() | st.builds(Register, names | words),
    r2s_operators,
)
csparql_queries = queries(
    fillers,
    st.builds(FromStream, names, windows()),
    st.none()
    | st.builds(
        Register,
        st.sampled_from(["q", "Q_1", "out-2", "AS"]),
        st.booleans(),
        st.none() | durations(),
    ),
)
rdfox_queries = queries(fillers, st.builds(FromStream, names, windows()))
cqels_queries = queries(groups_with(st.builds(StreamPattern, names | words, windows(), fillers)))

triple_lists = tuples_of(st.builds(t, words, names | words, words))
basic_events = st.builds(BasicEvent, names | words, triple_lists)
event_patterns = st.recursive(
    basic_events,
    lambda inner: st.one_of(
        st.builds(First, inner), st.builds(Last, inner), st.builds(EventSeq, inner, inner)
    ),
    max_leaves=6,
)
matches = st.builds(
    Match,
    event_patterns,
    selection=st.none() | st.sampled_from(["unrestricted", "chronological", "recent", "naive"]),
    consumption=st.none() | st.sampled_from(["none", "chronological", "recent"]),
)
rsepql_queries = queries(groups_with(matches), named_windows, r2s=r2s_operators)

leaf_groups = fillers


def _union(branches: list[ast.Pattern]) -> ast.Union:
    return ast.Union(tuple(b if isinstance(b, GroupPattern) else group(b) for b in branches))


chains: st.SearchStrategy[ast.Pattern] = st.recursive(
    leaf_groups,
    lambda inner: st.one_of(
        st.builds(
            TemporalJoin,
            st.sampled_from(["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"]),
            inner,
            leaf_groups,
        ),
        st.lists(inner, min_size=2, max_size=3).map(_union),
    ),
    max_leaves=5,
)
ep_expressions = st.one_of(
    expressions(0),
    st.builds(Is, words, expressions(0)),
    st.sampled_from(["GETDURATION", "GETSTARTTIME", "GETENDTIME"]).map(BuiltIn),
)
trailers = st.one_of(
    st.builds(Filter, ep_expressions),
    st.builds(Do, ep_expressions),
    st.builds(Within, durations()),
)
bare_iris = st.sampled_from(["hasPrice", "p", "rdf", "x_1"]).map(Iri)
etalis = st.builds(EtalisAggregate, st.none() | expressions(0), expressions(0), words)
epsparql_queries = queries(
    st.one_of(
        st.tuples(chains, tuples_of(trailers)).map(lambda c: group(c[0], *c[1])),
        groups_with(st.one_of(chains, etalis, st.builds(t, words, bare_iris, bare_iris).map(bgp))),
    )
)

gpm_refs = st.sampled_from("ABCD").map(GpmRef)
seq_expressions = st.recursive(
    gpm_refs,
    lambda inner: st.one_of(
        st.builds(
            Sequence, st.sampled_from(["strict", "skip_till_next", "skip_till_any"]), inner, inner
        ),
        tuples_of(inner, 2, 3).map(Conjunction),
        tuples_of(inner, 2, 3).map(Disjunction),
        st.builds(KleenePlus, inner),
        st.builds(OptionalEvent, inner),
        st.builds(NegatedEvent, inner),
    ),
    max_leaves=8,
)
gpms = st.builds(
    DefineGpm,
    st.sampled_from("ABCD"),
    tuples_of(st.sampled_from(["S1", "S2"]).map(StreamName), 1, 2),
    fillers,
    group_by=tuples_of(words, 0, 2),
    having=tuples_of(expressions(0), 0, 1),
)


@st.composite
def within_durations(draw: st.DrawFn) -> Duration:
    duration = draw(durations())
    if duration.counted or duration.value % 1000:
        return duration
    unit, size = draw(
        st.sampled_from([("SECONDS", 1000), ("MINUTES", 60_000), ("HOURS", 3_600_000)])
    )
    if duration.value % size:
        return duration
    return Duration(duration.value, written=f"{duration.value // size} {unit}")


spaseq_queries = st.builds(
    lambda prologue, select, within, keys, streams, seq, defs: SpaseqQuery(
        prologue=prologue,
        form=select,
        within=within,
        partition_by=keys,
        dataset=streams,
        where=group(SeqClause(seq), *defs),
    ),
    prologues,
    st.builds(Select, st.none() | tuples_of(words, 1)),
    within_durations(),
    tuples_of(words),
    tuples_of(st.builds(NamedStream, st.sampled_from(["S1", "S2", "SEQ"]), names)),
    seq_expressions,
    tuples_of(gpms, 1),
)

path_leaves = st.one_of(
    names,
    st.builds(AxisStep, st.sampled_from(["self", "next", "edge", "node"]), st.booleans()),
)
cep_paths: st.SearchStrategy[ast.Iri | ast.Path] = st.recursive(
    path_leaves,
    lambda inner: st.one_of(
        tuples_of(inner, 2).map(ast.PathAlternative),
        tuples_of(inner, 2).map(ast.PathSequence),
        inner.map(ast.PathInverse),
        st.builds(ast.PathModified, inner, st.sampled_from(["?", "*", "+"])),
        st.builds(NestedPath, inner, st.none() | names | words),
        st.builds(
            AxisStep,
            st.sampled_from(["self", "next", "edge", "node"]),
            st.booleans(),
            names,
            st.none() | inner,
        ),
        st.builds(AxisStep, st.sampled_from(["next", "edge"]), st.booleans(), st.none(), inner),
    ),
    max_leaves=5,
)
objects = st.one_of(
    words,
    names,
    st.builds(
        ast.BlankNodePropertyList,
        tuples_of(st.builds(Property, names, tuples_of(words, 1, 1)), 1, 1),
    ),
)
cep_triples = st.builds(
    lambda s, p, o: Triples(s, (Property(p, (o,)),)), words, cep_paths, objects
).map(lambda tr: bgp(tr))
seq_elements = st.one_of(
    st.builds(SeqTemplate, triple_lists, negated=st.booleans()),
    st.builds(SeqWindow, names | words, negated=st.booleans()),
)
cqelscep_queries = queries(
    groups_with(
        st.one_of(
            st.builds(SeqPattern, tuples_of(seq_elements, 1)),
            cep_triples,
            window_patterns,
            st.builds(StreamPattern, names, windows(), fillers),
        )
    ),
    named_windows,
)

RANDOM = {
    "rspql": rspql_queries,
    "csparql": csparql_queries,
    "rdfox": rdfox_queries,
    "cqels": cqels_queries,
    "rsepql": rsepql_queries,
    "epsparql": epsparql_queries,
    "cqelscep": cqelscep_queries,
    "spaseq": spaseq_queries,
    "sparql": queries(fillers),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_dialect_trees_round_trip(name: str, data: st.DataObject) -> None:
    query = data.draw(RANDOM[name], label="query")
    round_trip(get_dialect(name), query)


# Fuzzing: a tree or one of the two errors, whatever the input -------------------------------------


@pytest.fixture(scope="module", autouse=True)
def parsers_built() -> None:
    """Every dialect's parser built before the fuzz tests start (the 2 s deadline is per
    example, and building an LALR(1) parser is not part of parsing one query)."""
    for dialect in all_dialects():
        dialect.parser()
        dialect.print(Query(form=Select(), where=group(bgp(t(v("s"), Iri("p"), v("o"))))))


def _parse_or_clean_error(text: str, dialect: Dialect | None = None) -> None:
    try:
        parse_query(text, dialect)
    except (QuerySyntaxError, QuerySemanticError) as error:
        assert str(error).startswith("line ")


def _keyword_soup(dialect: Dialect) -> list[str]:
    punctuation = [*"{}()[]<>?:;,.!+&|^/*-=", " ", "\n", "'", '"', "#"]
    keywords = [f"{word} " for word in sorted(dialect.keywords)]
    return [*punctuation, *keywords, *_SOUP]


@pytest.mark.parametrize("name", DETECTION_ORDER)
@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_keyword_sequences(name: str, data: st.DataObject) -> None:
    dialect = get_dialect(name)
    pieces = data.draw(st.lists(st.sampled_from(_keyword_soup(dialect)), max_size=40))
    text = "".join(pieces)
    _parse_or_clean_error(text, dialect)
    _parse_or_clean_error(text)


CORPUS_TEXTS = [c.text() for c in [*SHARED_CASES, *PAPER_CASES] if c.start == "query_unit"]


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_mutated_queries(data: st.DataObject) -> None:
    """Corpus queries and printed random trees, with pieces replaced, cut or inserted."""
    source = data.draw(st.sampled_from(["corpus", *RANDOM]), label="source")
    if source == "corpus":
        text = data.draw(st.sampled_from(CORPUS_TEXTS), label="query")
    else:
        text = get_dialect(source).print(data.draw(RANDOM[source], label="tree"))
    soup = _keyword_soup(all_dialects()[data.draw(st.integers(0, len(DETECTION_ORDER) - 1))])
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, len(text)), label="at")
        cut = data.draw(st.integers(0, 8), label="cut")
        piece = data.draw(st.sampled_from(soup) | st.text(max_size=3), label="piece")
        text = text[:at] + piece + text[at + cut :]
    _parse_or_clean_error(text)
    _parse_or_clean_error(text, get_dialect(data.draw(st.sampled_from(DETECTION_ORDER))))


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=200), name=st.none() | st.sampled_from(DETECTION_ORDER))
def test_fuzz_bytes(raw: bytes, name: str | None) -> None:
    text = raw.decode("utf-8", errors="replace")
    _parse_or_clean_error(text, None if name is None else get_dialect(name))
    _parse_or_clean_error(raw.decode("latin-1"))
