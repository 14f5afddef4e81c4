"""Compiling a query into its plan (rsep.algebra.compile): every corpus query, the layers of
parameters with their provenance, windows across dialects, event patterns, and CSR-Bench's
query 1 compiled and evaluated by the oracle against the recorded C-SPARQL answers.

The corpus is the one ``tests/lang/test_dialect_grammars.py`` discovers (imported): every
query that the lang tests build and check compiles and explains; the queries with an actual
error (``KNOWN_BAD``: the grammar rejects them; ``KNOWN_INVALID``: the checks do) are not
compiled, and the checked ones still fail with their asserted message.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import RdfFormat, parse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lang"))

from test_dialect_ast import PAPER_PREFIXES
from test_dialect_grammars import KNOWN_BAD, PAPER_CASES, SHARED_CASES, Case
from test_stream_checks import KNOWN_INVALID

from rsep.algebra.compile import compile_query, stream_window, with_rules
from rsep.algebra.events import (
    And,
    CepSeq,
    CepWindow,
    Event,
    EventFilter,
    Gpm,
    GraphPatternRef,
    InputUnit,
    Match,
    PartitionBy,
    Seq,
    SeqJoin,
    Sequence,
    StreamBgp,
    Within,
)
from rsep.algebra.params import PARAMETERS, ParameterError, Parameters, Source
from rsep.algebra.plan import (
    Construct,
    EventJoin,
    Plan,
    Rule,
    Select,
    SubSelect,
    explain,
    unnamed_window,
)
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import CountWindow, TimeWindow, WindowBounds
from rsep.errors import UserError
from rsep.lang import QuerySemanticError, get_dialect, parse_query
from rsep.lang.dialects import PARAMETER_NAMES, all_dialects
from rsep.rdf.event import Event as StreamEvent
from rsep.rdf.event import Stream, StreamSet
from rsep.rdf.results import SelectResult
from rsep.semantics import ContinuousQuery

EX = "http://example.org/"
QUERY_CASES = [c for c in [*SHARED_CASES, *PAPER_CASES] if c.start == "query_unit"]


def _prefixes(case: Case) -> dict[str, str] | None:
    return PAPER_PREFIXES if case.folder.startswith("paper_queries") else None


def compiled(text: str, dialect: str | None = None, **kw: Any) -> Plan:
    """The plan of ``text`` (dialect detected unless given)."""
    from rsep.lang import detect_dialect

    chosen = get_dialect(dialect) if dialect else detect_dialect(text)
    return compile_query(parse_query(text, chosen), chosen, **kw)


# The corpus ---------------------------------------------------------------------------------


def _compile_case(case: Case) -> Plan:
    dialect = get_dialect(case.dialect)
    query = parse_query(case.text(), dialect, prefixes=_prefixes(case))
    return compile_query(query, dialect)


@pytest.mark.parametrize("case", QUERY_CASES, ids=[c.id for c in QUERY_CASES])
def test_corpus_query_compiles_and_explains(case: Case) -> None:
    if case.id in KNOWN_BAD:
        pytest.skip(f"rejected by the grammar: {KNOWN_BAD[case.id]}")
    if case.id in KNOWN_INVALID:
        with pytest.raises(QuerySemanticError) as caught:
            _compile_case(case)
        assert str(caught.value) == KNOWN_INVALID[case.id]
        return
    plan = _compile_case(case)
    text = explain(plan)
    assert text.startswith("plan\n") and "\nparameters\n" in text
    for name in PARAMETERS:
        assert f"\n  {name} " in text, name
    if plan.sequences():
        assert "\nautomaton\n" in text


def test_corpus_compile_report(shared_data: Path) -> None:
    """Per folder: compiled and explained / queries (known-bad and invalid ones apart)."""
    counts: Counter[tuple[str, str]] = Counter()
    for case in QUERY_CASES:
        if case.id in KNOWN_BAD or case.id in KNOWN_INVALID:
            counts[case.folder, "rejected"] += 1
            continue
        counts[case.folder, "total"] += 1
        explain(_compile_case(case))
        counts[case.folder, "explained"] += 1
    folders = sorted({folder for folder, _ in counts})
    lines = [f"{'folder':34} {'explained':>9} {'total':>6} {'rejected':>8}"]
    for folder in folders:
        row = [counts[folder, k] for k in ("explained", "total", "rejected")]
        lines.append(f"{folder:34} {row[0]:>9} {row[1]:>6} {row[2]:>8}")
    print("\n".join(lines))
    assert all(counts[f, "explained"] == counts[f, "total"] for f in folders)
    assert sum(counts[f, "explained"] for f in folders) >= 120


def test_every_dialect_default_is_an_allowed_value() -> None:
    """The dialects give defaults as text; the one registry of allowed values reads them."""
    assert set(PARAMETERS) == set(PARAMETER_NAMES) | {
        "window.bounds",
        "output.empty",
        "max_runs",
        "max_window_events",
    }
    for dialect in all_dialects():
        params = Parameters.defaults()
        for name, (value, _) in dialect.defaults.items():
            params = params.with_value(name, value, Source.DIALECT_DEFAULT)
            spec = PARAMETERS[name]
            assert spec.coerce(params.show(name), params.time_unit) == params.value(name)


# Parameters in layers -------------------------------------------------------------------------

RSPQL = """PREFIX : <http://example.org/>
{pragmas}SELECT ?s
FROM NAMED WINDOW :w ON :s [RANGE PT10S STEP PT2S{own}]
WHERE {{ WINDOW :w {{ ?s ?p ?o }} }}
"""


def rspql(pragmas: str = "", own: str = "", **kw: Any) -> Plan:
    return compiled(RSPQL.format(pragmas=pragmas, own=own), "rspql", **kw)


def test_each_source_wins_over_the_lower_ones() -> None:
    base = rspql().parameters  # RSP-QL's own definitions: no engine profile
    assert (str(base.profile), base.source("profile")) == ("none", Source.DIALECT_DEFAULT)
    assert (str(base.bounds), base.source("window.bounds")) == ("open_closed", Source.BUILT_IN)
    assert (str(base.present), base.source("window.present")) == (
        "closing",
        Source.DIALECT_DEFAULT,
    )
    assert base["window.present"].note.startswith("RSP-QL: ")
    assert (str(base.report), base.source("window.report")) == (
        "window_close+non_empty",
        Source.DIALECT_DEFAULT,
    )
    assert (str(base.r2s), base.output_empty) == ("rstream", False)

    profiled = rspql(profile="csparql").parameters
    assert (str(profiled.profile), profiled.source("profile")) == (
        "csparql",
        Source.COMMAND_LINE,
    )
    assert (str(profiled.present), profiled.source("window.present")) == ("closing", Source.PROFILE)
    assert (str(profiled.bounds), profiled.source("window.bounds")) == (
        "closed_open",
        Source.PROFILE,
    )
    assert profiled.output_empty is True

    pragma = rspql("PRAGMA window.present = all_ended\n").parameters
    assert (str(pragma.present), pragma.source("window.present")) == (
        "all_ended",
        Source.QUERY_TEXT,
    )
    assert pragma["window.present"].note == "line 2, column 1: PRAGMA window.present = all_ended"

    cli = rspql(
        "PRAGMA window.present = all_ended\n", overrides={"window.present": "latest"}
    ).parameters
    assert (str(cli.present), cli.source("window.present")) == ("latest", Source.COMMAND_LINE)
    assert cli["window.present"].note == "--set window.present=latest"


def test_a_pragma_note_names_its_line() -> None:
    plan = rspql("PRAGMA r2s = istream\n")
    assert (str(plan.r2s), plan.parameters.source("r2s")) == ("istream", Source.QUERY_TEXT)
    assert plan.parameters["r2s"].note == "line 2, column 1: PRAGMA r2s = istream"


def test_the_profile_chosen_in_the_text_or_on_the_command_line() -> None:
    text = rspql("PRAGMA profile = cqels\n").parameters
    assert str(text.report) == "new_content+non_empty" and text.source("window.report") is (
        Source.PROFILE
    )
    assert text.bounds is WindowBounds.OPEN_CLOSED  # not the csparql profile's
    cli = rspql("PRAGMA profile = cqels\n", profile="sparqlstream").parameters
    assert (str(cli.profile), cli.source("profile")) == ("sparqlstream", Source.COMMAND_LINE)
    assert str(cli.report) == "window_close+non_empty" and cli.output_empty is False
    text_csparql = rspql("PRAGMA profile = csparql\n").parameters
    assert (str(text_csparql.bounds), text_csparql.source("window.bounds")) == (
        "closed_open",
        Source.PROFILE,
    )
    assert rspql(overrides={"window.present": "latest"}).parameters.present.value == "latest"


def test_a_window_own_report_and_t0_beat_the_parameters() -> None:
    plan = rspql(
        "PRAGMA window.report = content_change\nPRAGMA window.t0 = 1000\n",
        own=" T0 500 REPORT WINDOW_CLOSE",
        overrides={"window.report": "periodic(5s)"},
    )
    [window] = plan.dataset.windows
    assert window.window == TimeWindow(10_000, 2000, 500)
    assert plan.parameters.t0 == 1000
    assert plan.report(window.iri) == ReportPolicy.parse("window_close")
    assert plan.parameters.report == ReportPolicy.parse("periodic(5s)")
    assert "report  window_close  (query text)" in explain(plan)


def test_time_unit_counts_bare_numbers_everywhere() -> None:
    text = (
        "PREFIX : <http://example.org/>\nPRAGMA lateness = 2\nPRAGMA time_unit = s\n"
        "PRAGMA window.report = periodic(4)\n"
        "SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1 T0 3]\n"
        "WHERE { WINDOW :w { ?s ?p ?o } }"
    )
    plan = compiled(text, "rspql")
    assert plan.dataset.windows[0].window == TimeWindow(5000, 1000, 3000)
    assert plan.parameters.lateness == 2000
    assert plan.parameters.report == ReportPolicy.parse("periodic(4s)")
    minutes = compiled(text, "rspql", overrides={"time_unit": "min"})
    assert minutes.dataset.windows[0].window == TimeWindow(300_000, 60_000, 180_000)
    assert minutes.parameters.source("time_unit") is Source.COMMAND_LINE


@pytest.mark.parametrize(
    ("window", "function"),
    [
        ("[FROM NOW-PT10S TO NOW]", TimeWindow(10_000, 1)),
        ("[FROM NOW-PT10S TO NOW-PT4S STEP PT2S]", TimeWindow(6000, 2000, None, 4000)),
        ("[FROM NOW-10 TO NOW-0 STEP 3]", TimeWindow(10, 3)),
    ],
)
def test_a_window_in_the_past_is_a_time_window_read_late(window: str, function: TimeWindow) -> None:
    """W3C RSP CG ``[FROM NOW-d TO NOW-d' STEP β]``: at ``t`` the window ``(t - d, t - d']``,
    a time window ``α = d - d'`` read ``d'`` late."""
    text = RSPQL.format(pragmas="", own="").replace("[RANGE PT10S STEP PT2S]", window)
    [named] = compiled(text, "rspql").dataset.windows
    assert named.window == function


@pytest.mark.parametrize("window", ["[FROM NOW-PT4S TO NOW-PT4S]", "[FROM NOW-2 TO NOW-5]"])
def test_a_window_in_the_past_that_ends_before_it_starts_is_refused(window: str) -> None:
    text = RSPQL.format(pragmas="", own="").replace("[RANGE PT10S STEP PT2S]", window)
    with pytest.raises(QuerySemanticError, match="ends before it starts"):
        compiled(text, "rspql")


@pytest.mark.parametrize(
    ("pragma", "message"),
    [
        (
            "PRAGMA r2s = xstream",
            "PRAGMA r2s = xstream: 'xstream' is not allowed (unknown R2S 'xstream'); "
            "allowed: rstream | istream | dstream",
        ),
        (
            "PRAGMA window.report = window_close, whenever",
            "PRAGMA window.report = window_close, whenever: 'window_close, whenever' is not "
            "allowed (report policy 'window_close, whenever': unknown condition 'whenever'",
        ),
        ("PRAGMA lateness = latest", "PRAGMA lateness = latest: 'latest' is not allowed"),
        ("PRAGMA window.t0 = <http://t>", "PRAGMA window.t0 = <http://t>: '<http://t>' is not"),
        ("PRAGMA r2s = istream, rstream", "PRAGMA r2s = istream, rstream: 'istream, rstream'"),
        ("PRAGMA profile = cquels", "allowed: csparql | cqels | sparqlstream | none"),
    ],
)
def test_bad_pragma_values_name_the_parameter_and_the_position(pragma: str, message: str) -> None:
    text = f"PREFIX : <http://e/>\n  {pragma}\nSELECT * WHERE {{ ?s ?p ?o }}"
    for dialect in ("sparql", "rspql", "csparql"):
        query = parse_query(text, dialect)  # the name is known: lang accepts it
        with pytest.raises(QuerySemanticError) as caught:
            compile_query(query, get_dialect(dialect))
        assert str(caught.value).startswith("line 2, column 3: "), caught.value
        assert message in str(caught.value)


def test_set_bad_value_error_text() -> None:
    query = parse_query("SELECT * WHERE { ?s ?p ?o }", "rspql")
    with pytest.raises(ParameterError) as caught:
        compile_query(query, get_dialect("rspql"), overrides={"window.present": "soon"})
    assert str(caught.value) == (
        "parameter window.present: 'soon' is not allowed (unknown PresentRule 'soon'); "
        "allowed: latest | closing | last_ended | all_ended"
    )
    with pytest.raises(ParameterError, match=r"unknown parameter 'speed' \(known: window\.t0"):
        compile_query(query, get_dialect("rspql"), overrides={"speed": "fast"})
    with pytest.raises(ParameterError, match=r"allowed: csparql \| cqels"):
        compile_query(query, get_dialect("rspql"), profile="flink")


# Datasets and graph patterns -------------------------------------------------------------------


def test_csparql_windows_are_unnamed_and_in_the_default_graph() -> None:
    plan = compiled(
        "REGISTER QUERY q COMPUTED EVERY 2s AS SELECT ?s FROM <http://g> "
        "FROM STREAM <http://s1> [RANGE 10s STEP 5s] FROM STREAM <http://s2> [TRIPLES 5] "
        "WHERE { ?s ?p ?o }"
    )
    names = [unnamed_window(1), unnamed_window(2)]
    assert [w.iri for w in plan.dataset.windows] == names
    assert plan.dataset.default_windows == tuple(names)
    assert plan.dataset.default_graphs == ("http://g",)
    assert plan.dataset.windows[1].window == CountWindow(5, 1)
    assert plan.r2r == GraphPatternRef("{\n  ?s ?p ?o .\n}", frozenset({"s", "p", "o"}))
    assert plan.parameters.report == ReportPolicy.parse("periodic(2s)")
    assert plan.parameters["window.report"].note == "line 1, column 33: COMPUTED EVERY 2s"
    assert plan.output.stream is None


def test_cqels_stream_patterns_become_named_windows() -> None:
    plan = compiled(
        "PREFIX : <http://e/> SELECT ?s WHERE { STREAM :s [RANGE 3s] { ?s :p ?o } "
        "STREAM :t [NOW] { ?o :q ?x } }"
    )
    assert [w.iri for w in plan.dataset.windows] == [stream_window(1), stream_window(2)]
    assert plan.dataset.windows[0].window == TimeWindow(3000, 1)  # slides every tick
    assert isinstance(plan.r2r, GraphPatternRef)
    assert f"GRAPH <{stream_window(1)}> {{" in plan.r2r.text
    assert "<http://e/p>" in plan.r2r.text and "STREAM" not in plan.r2r.text
    assert plan.dataset.default_windows == ()


def test_select_modifiers_go_into_a_sub_select() -> None:
    plan = compiled(
        "PREFIX : <http://e/> SELECT ?s (COUNT(?o) AS ?n) FROM NAMED WINDOW :w ON :s [RANGE 5s] "
        "WHERE { WINDOW :w { ?s :p ?o } } GROUP BY ?s ORDER BY ?s LIMIT 3",
        "rspql",
    )
    assert plan.form == Select(("s", "n"))
    assert isinstance(plan.r2r, GraphPatternRef)
    assert plan.r2r.variables == {"s", "n"}
    text = " ".join(plan.r2r.text.split())
    assert text.startswith("{ { SELECT ?s (COUNT(?o) AS ?n) WHERE { GRAPH <http://e/w> {")
    assert text.endswith("GROUP BY ?s ORDER BY ?s LIMIT 3 } }")


def test_registration_gives_r2s_and_output() -> None:
    plan = compiled(
        "REGISTER ISTREAM <http://out> AS SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE 1s] "
        "WHERE { WINDOW <w> { ?s ?p ?o } }",
        "rspql",
    )
    assert plan.output.stream == "http://out"
    assert (str(plan.r2s), plan.parameters["r2s"].note) == (
        "istream",
        "line 1, column 1: ISTREAM",
    )


def test_same_windows_and_parameters_in_three_dialects(shared_data: Path) -> None:
    """CityBench Q10_5 in C-SPARQL, CQELS-QL and RSP-QL: the same window functions on the same
    streams (the RSP-QL files name the streams under localhost, the others under
    insight-centre.org: the fragment is the stream's name), and under one profile the same
    parameters, except C-SPARQL's naive selection, which only SEQ reads (Q10_5 has none)."""
    plans = {}
    for folder, dialect in (("rspql", "rspql"), ("csparql", "csparql"), ("cqels", "cqels")):
        text = (shared_data / "citybench-queries" / f"{folder}_query" / "Q10_5.txt").read_text()
        plans[dialect] = compiled(text, dialect, profile="cqels")

    def windows(plan: Plan) -> list[tuple[str, object, object]]:
        return [(w.stream.split("#")[-1], w.window, w.report) for w in plan.dataset.windows]

    assert windows(plans["rspql"]) == windows(plans["csparql"]) == windows(plans["cqels"])
    assert len(windows(plans["rspql"])) == 5
    assert {w for _, w, _ in windows(plans["rspql"])} == {TimeWindow(3000, 1000)}
    values = {d: {n: plan.parameters.show(n) for n in PARAMETERS} for d, plan in plans.items()}
    differ = {n for n in PARAMETERS if len({values[d][n] for d in values}) > 1}
    assert differ == {"selection", "r2s"}, differ
    assert plans["rspql"].parameters.source("r2s") is Source.QUERY_TEXT
    assert {plans[d].parameters.source("r2s") for d in ("csparql", "cqels")} == {Source.PROFILE}
    assert {plan.reports[w.iri] for plan in plans.values() for w in plan.dataset.windows} == {
        ReportPolicy.parse("new_content+non_empty")
    }


# Event patterns --------------------------------------------------------------------------------


def test_rsepql_match_beside_a_graph_pattern() -> None:
    plan = compiled(
        "PREFIX : <http://example.org/> SELECT ?x ?z "
        "FROM NAMED WINDOW :w1 ON :S [LANDMARK T0 1] FROM NAMED WINDOW :w2 ON :S [RANGE 5 STEP 1] "
        "WHERE { MATCH [SELECTION chronological] (EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 "
        "{ ?y :q ?z }) ?z :r ?v }"
    )
    assert isinstance(plan.r2r, EventJoin)
    match = plan.r2r.event
    assert isinstance(match, Match) and str(match.selection) == "chronological"
    assert isinstance(match.pattern, Seq)
    assert match.pattern.left == Event(
        EX + "w1", GraphPatternRef("{\n  ?x <http://example.org/p> ?y .\n}", frozenset("xy"))
    )
    assert plan.r2r.graph.variables == {"z", "v"}


def test_epsparql_temporal_joins_and_filters() -> None:
    plan = compiled(
        "PREFIX : <http://e/> SELECT ?c WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "SEQ { ?c :price ?p3 } FILTER (?p2 < ?p1)"
    )
    assert isinstance(plan.r2r, EventFilter) and plan.r2r.expression == "?p2 < ?p1"
    seq = plan.r2r.pattern
    assert isinstance(seq, SeqJoin) and isinstance(seq.left, SeqJoin)  # to the left
    assert isinstance(seq.right, StreamBgp)


EP_PRICES = "{ ?c :price ?p1 } SEQ { ?c :price ?p2 }"


def test_epsparql_sub_select_is_a_node_over_its_event_pattern() -> None:
    """EP-SPARQL query (5) (Sect. 4.1): a group that is one sub-select over an event
    pattern is ``Project(Extend(P, v, e), V)`` (SPARQL 1.1 sec. 18.2.1), a SubSelect over
    the pattern its WHERE part compiles to; the CONSTRUCT's rule is the plan's r2r."""
    plan = compiled(
        "PREFIX : <http://e/> CONSTRUCT { _:p :count ?n } "
        f"{{ SELECT ?c (?p1 + 1 AS ?n) WHERE {EP_PRICES} FILTER (?p1 < ?p2) }}",
        "epsparql",
    )
    inner = compiled(f"PREFIX : <http://e/> SELECT * WHERE {EP_PRICES} FILTER (?p1 < ?p2)")
    assert plan.r2r == SubSelect(inner.r2r, ("c", "n"), (("n", "?p1 + 1"),))  # type: ignore[arg-type]
    assert plan.r2r.variables == {"c", "n"}
    assert Rule.of(plan) == Rule(plan.r2r, plan.form.template)  # type: ignore[arg-type, union-attr]
    assert "    SubSelect SELECT ?c (?p1 + 1 AS ?n)\n      EventFilter" in explain(plan)


def test_epsparql_sub_selects_inside_a_pattern() -> None:
    """A sub-select is a group like any other: an operand of a temporal join, or joined
    (Join) with the triples beside it; ``SELECT *`` is its pattern itself."""
    inner = compiled(f"PREFIX : <http://e/> SELECT * WHERE {EP_PRICES}").r2r
    assert isinstance(inner, SeqJoin)
    sub = SubSelect(inner, ("c",))
    operand = compiled(
        f"PREFIX : <http://e/> SELECT * WHERE {{ {{ SELECT ?c WHERE {EP_PRICES} }} }} "
        "SEQ { ?c :q ?y }"
    ).r2r
    assert isinstance(operand, SeqJoin) and operand.left == sub
    joined = compiled(
        f"PREFIX : <http://e/> SELECT * WHERE {{ ?c :q ?y {{ SELECT ?c WHERE {EP_PRICES} }} }}",
        "epsparql",
    ).r2r
    assert isinstance(joined, And) and joined.right == sub
    star = compiled(f"PREFIX : <http://e/> SELECT * WHERE {{ SELECT * WHERE {EP_PRICES} }}")
    assert star.r2r == inner


@pytest.mark.parametrize(
    ("modifier", "message", "column"),
    [
        ("GROUP BY ?c", "GROUP BY in a sub-select over an EP-SPARQL event pattern is not", 40),
        ("ORDER BY ?c LIMIT 1", "ORDER BY and LIMIT in a sub-select over an EP-SPARQL", 40),
        ("VALUES ?c { :a }", "VALUES in a sub-select", 40),
    ],
)
def test_epsparql_sub_select_modifiers_are_refused_naming_them(
    modifier: str, message: str, column: int
) -> None:
    query = f"PREFIX : <http://e/> SELECT ?c WHERE {{ SELECT ?c WHERE {EP_PRICES} {modifier} }}"
    with pytest.raises(QuerySemanticError, match=message) as caught:
        compiled(query, "epsparql")
    assert (caught.value.line, caught.value.column) == (1, column)


def test_epsparql_sub_select_aggregates_are_refused_naming_them() -> None:
    query = f"PREFIX : <http://e/> SELECT ?n WHERE {{ SELECT (COUNT(?c) AS ?n) WHERE {EP_PRICES} }}"
    with pytest.raises(QuerySemanticError, match="the aggregate COUNT in a sub-select") as caught:
        compiled(query, "epsparql")
    assert (caught.value.line, caught.value.column) == (1, 48)


@pytest.mark.parametrize(
    ("where", "name"),
    [
        (f"{{ SELECT ?c (getDURATION() AS ?d) WHERE {EP_PRICES} }}", "getDURATION"),
        ("{ ?c :price ?p BIND (getENDTIME() AS ?d) }", "getENDTIME"),
    ],
)
def test_epsparql_time_functions_outside_a_filter_are_refused(where: str, name: str) -> None:
    """Sect. 4.1: getDURATION(), getSTARTTIME() and getENDTIME() are filter functions,
    reading the interval of the pattern the FILTER is placed in; a FILTER (and ETALIS's
    DO) may use them, a projection or a BIND may not."""
    query = f"PREFIX : <http://e/> SELECT ?c WHERE {where}"
    with pytest.raises(QuerySemanticError, match=rf"{name}\(\) is a filter function") as caught:
        compiled(query, "epsparql")
    assert (caught.value.line, caught.value.column) == (1, query.index(name) + 1)
    compiled(
        f"PREFIX : <http://e/> SELECT ?c WHERE {EP_PRICES} "
        'FILTER (getDURATION() < "PT1S"^^<http://www.w3.org/2001/XMLSchema#duration>)',
        "epsparql",
    )


EP_DOWN = "PREFIX : <http://e/> SELECT ?c ?a WHERE { ?a :downrates ?c }"
EP_RULE = (
    "PREFIX : <http://e/> CONSTRUCT { ?c :downratedBy ?a } "
    "WHERE { ?a :rates ?c } SEQ { ?a :cuts ?c }"
)


def test_with_rules_gives_an_epsparql_plan_the_rules_of_other_construct_queries() -> None:
    """EP-SPARQL's query set Q (Sect. 4.2): the CONSTRUCT queries' rules join the plan's,
    in order; a rule must be an EP-SPARQL CONSTRUCT, and only an EP-SPARQL pattern reads
    a closure."""
    plan, rule = compiled(EP_DOWN, "epsparql"), compiled(EP_RULE, "epsparql")
    once = with_rules(plan, [rule])
    assert once.rules == (Rule.of(rule),) and once.r2r == plan.r2r
    assert with_rules(once, [rule]).rules == (Rule.of(rule), Rule.of(rule))
    with pytest.raises(UserError, match="needs a CONSTRUCT query"):
        with_rules(plan, [plan])
    rsepql = compiled(
        "PREFIX : <http://example.org/> SELECT ?x FROM NAMED WINDOW :w ON :S [RANGE 5 STEP 1] "
        "WHERE { MATCH (EVENT :w { ?x :p ?y }) }"
    )
    with pytest.raises(UserError, match="not an EP-SPARQL event pattern"):
        with_rules(rsepql, [rule])
    construct = replace(rsepql, form=Construct("?x <http://e/q> ?x ."))
    with pytest.raises(UserError, match="is an EP-SPARQL CONSTRUCT"):
        with_rules(plan, [construct])


@pytest.mark.parametrize(
    ("pragma", "overrides", "source"),
    [
        ("", {}, Source.DIALECT_DEFAULT),
        ("PRAGMA input_unit = occurrence\n", {}, Source.QUERY_TEXT),
        ("PRAGMA input_unit = triple\n", {"input_unit": "occurrence"}, Source.COMMAND_LINE),
    ],
)
def test_input_unit_from_pragma_or_set(
    pragma: str, overrides: dict[str, str], source: Source
) -> None:
    """RSEP-QL's input unit (Def. 8-10 vs. Example 11) is a plan parameter: ``PRAGMA
    input_unit`` and ``--set input_unit=…`` choose it, the dialect gives ``triple``."""
    plan = compiled(
        pragma + "PREFIX : <http://example.org/> SELECT ?x "
        "FROM NAMED WINDOW :w ON :S [RANGE 5 STEP 1] WHERE { MATCH (EVENT :w { ?x :p ?y }) }",
        "rsepql",
        overrides=overrides,
    )
    expected = InputUnit.TRIPLE if source is Source.DIALECT_DEFAULT else InputUnit.OCCURRENCE
    assert plan.parameters.input_unit is expected
    assert plan.parameters.source("input_unit") is source


def test_cqelscep_sequence_in_a_window_nests_to_the_right() -> None:
    plan = compiled(
        "PREFIX : <http://e/> SELECT ?s FROM NAMED WINDOW :W ON :t [RANGE 10m] WHERE { "
        "WINDOW :W { SEQ ({?v :a ?s}, {?v :b ?s}, {?v :c ?s}) } ?v :type :subway }",
        "cqelscep",
    )
    assert isinstance(plan.r2r, EventJoin)
    window = plan.r2r.event
    assert isinstance(window, CepWindow) and window.window == TimeWindow(600_000, 1)
    assert isinstance(window.pattern, CepSeq) and len(window.pattern.items) == 2
    assert isinstance(window.pattern.items[1].pattern, CepSeq)  # SEQ(A, SEQ(B, C))


SPASEQ = """PREFIX : <http://e/>
SELECT ?h ?f1 ?f2
WITHIN 30 MINUTES
PARTITION BY ?h
FROM STREAM S1 <http://e/s1>
FROM STREAM S2 <http://e/s2>
WHERE {
  SEQ (A; B+, C)
  DEFINE GPM A ON S1 { ?h :fare ?f1 . }
  DEFINE GPM B ON S2 { ?h :wind ?w . GRAPH <http://e/kb> { ?h :loc ?l } }
  DEFINE GPM C ON S1 { ?h :fare ?f2 . FILTER (?f2 < ?f1) }
}
"""


def test_spaseq_sequence_within_partition_and_its_automaton() -> None:
    plan = compiled(SPASEQ)
    assert plan.dataset.streams == ("http://e/s1", "http://e/s2")
    assert isinstance(plan.r2r, PartitionBy) and plan.r2r.by == ("h",)
    within = plan.r2r.pattern
    assert isinstance(within, Within) and within.duration == 1_800_000
    sequence = within.pattern
    assert isinstance(sequence, Sequence) and str(sequence) == "SEQ(A; B+, C)"
    gpm = sequence.steps[1].step  # type: ignore[attr-defined]
    assert isinstance(gpm, Gpm) and gpm.graph_kb is not None
    assert gpm.graph_kb.graph == "http://e/kb" and gpm.stream == "http://e/s2"
    text = explain(plan)
    assert "\nautomaton\n" in text
    automaton = text.split("\nautomaton\n", 1)[1]
    assert "-take->" in automaton and "-ignore->" in automaton and "(within 30m" in automaton


# CSR-Bench query 1 on the oracle -----------------------------------------------------------------

STREAM = "http://localhost:12345/CSRBenchDataStream/datastream#1"


def read_properties(path: Path) -> dict[str, str]:
    from test_dialect_grammars import read_properties as read

    return read(path.read_text(encoding="utf-8"))


def csrbench_stream(data: Path) -> StreamSet:
    """``data_NN.ttl`` is the stream's graph at application time NN (``system.timeunit =
    1000``: seconds): one event at NN s per file."""
    events = []
    for path in sorted(data.glob("data_*.ttl")):
        seconds = int(path.stem.split("_")[1])
        triples = [q.triple for q in parse(path=str(path), format=RdfFormat.TURTLE)]
        events.append(StreamEvent.point(STREAM, seconds * 1000, triples))
    return StreamSet([Stream(STREAM, tuple(events))])


def test_csrbench_query_1_reproduces_the_csparql_answers(shared_data: Path) -> None:
    """The aligned C-SPARQL text of query 1 with the window of the configuration the answers
    were recorded with (``config/srbench-queries.properties``: size = slide = 10 s, first t0
    = 0), compiled under the csparql profile and evaluated by the oracle over ``data``: the
    answers of ``answers/csparql-answer-1.json``, instant by instant."""
    csr = shared_data / "csrbench"
    config = read_properties(csr / "config" / "srbench-queries.properties")
    size, slide = config["srb.query1.window.size"], config["srb.query1.window.slide"]
    assert config["srb.query1.window.firstt0"] == "0"
    text = read_properties(csr / "aligned" / "srbench-queries.properties")[
        "srb.query1.csparqlquery"
    ]
    assert "[RANGE 1s STEP 1s]" in text
    text = text.replace("[RANGE 1s STEP 1s]", f"[RANGE {size}ms STEP {slide}ms]")
    plan = compiled(text, "csparql", profile="csparql")
    assert plan.parameters.bounds is WindowBounds.CLOSED_OPEN
    assert plan.parameters.output_empty is True

    answers = list(ContinuousQuery(plan, csrbench_stream(csr / "data")).answers())
    got = {
        answer.time: sorted(
            tuple(str(r.bindings[v].value) for v in ("sensor", "obs"))
            for r in answer.results
            if isinstance(r, SelectResult)
        )
        for answer in answers
    }
    recorded = json.loads((csr / "answers" / "csparql-answer-1.json").read_text())
    expected = {
        relation["timestamp"]: sorted(
            (b["binding"]["sensor"]["value"], b["binding"]["obs"]["value"])
            for b in relation["results"]["bindings"]
        )
        for relation in recorded["relations"]
    }
    assert [len(v) for v in expected.values()] == [0, 5, 7, 3]
    assert got == expected


def test_modifiers_beside_an_event_pattern_are_in_the_plan() -> None:
    """GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET and VALUES beside an event pattern become
    the plan's :class:`~rsep.algebra.modifiers.Modifiers` (SPARQL text, full IRIs), the
    form keeping the projected names only (the modifiers compute the aggregates); a SPAseq
    query still refuses them."""
    text = (
        "PREFIX : <http://e/>\nSELECT ?x (COUNT(?y) AS ?n)\n"
        "FROM NAMED WINDOW :w ON :S [RANGE 5 STEP 1]\n"
        "WHERE { MATCH ( EVENT :w { ?x :p ?y } ) }\n"
        "GROUP BY ?x HAVING (COUNT(?y) > 1) ORDER BY DESC(?n) LIMIT 2 OFFSET 1 "
        "VALUES ?x { :a }"
    )
    plan = compiled(text, "rsepql")
    assert plan.modifiers is not None and plan.modifiers.grouped
    assert plan.modifiers.head == "SELECT ?x (COUNT(?y) AS ?n)"
    assert " ".join(plan.modifiers.tail.split()) == (
        "GROUP BY ?x HAVING (COUNT(?y) > 1) ORDER BY DESC(?n) LIMIT 2 OFFSET 1 "
        "VALUES ?x { <http://e/a> }"
    )
    assert str(plan.form) == "SELECT ?x ?n"
    assert "modifiers SELECT ?x (COUNT(?y) AS ?n) … GROUP BY ?x" in explain(plan)
    plain = text.split("\nGROUP BY")[0].replace("(COUNT(?y) AS ?n)", "?y")
    ordered = compiled(plain + "\nORDER BY ?y LIMIT 1", "rsepql")
    assert ordered.modifiers is not None and not ordered.modifiers.grouped
    assert compiled(plain, "rsepql").modifiers is None
    spaseq = (
        "PREFIX : <http://e/>\nSELECT ?h\nWITHIN 10 SECONDS\nFROM STREAM S1 <http://e/s1>\n"
        "WHERE {\n SEQ (A; B)\n DEFINE GPM A ON S1 { ?h :a ?x . }\n"
        " DEFINE GPM B ON S1 { ?h :b ?y . }\n}\nORDER BY ?h LIMIT 1"
    )
    with pytest.raises(QuerySemanticError, match="ORDER BY and LIMIT with an event pattern"):
        compiled(spaseq, "spaseq")
