"""The oracle's parts: query forms, empty answers, each window function and report
condition, the default graph, literal normalisation, time-varying graph files, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Triple
from semantics_data import (
    EX,
    S_NEARBY,
    column,
    graphs_by_time,
    parameters,
    plan,
    rspql_streams,
    short,
    triples_stream,
)

from rsep.algebra.events import GraphPatternRef
from rsep.algebra.plan import Ask, Construct, Dataset, Plan, Select
from rsep.algebra.report import NEW_CONTENT, ReportPolicy
from rsep.algebra.window import (
    CountWindow,
    LandmarkWindow,
    NamedWindow,
    NowWindow,
    TimeWindow,
)
from rsep.errors import UserError
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.results import AskResult
from rsep.rdf.time import TimeUnit
from rsep.semantics import (
    ContinuousQuery,
    Snapshot,
    TimeVaryingGraph,
    evaluate,
    read_graph,
    read_time_varying_graph,
    unnamed_window,
)
from rsep.semantics.report import MAX_INSTANTS

XSD = "http://www.w3.org/2001/XMLSchema#"
W = NamedWindow(EX + "w", S_NEARBY, TimeWindow(5, 2, 1))
NEAR = "GRAPH :w { ?who :isNearby ?shop }"


def instants(query: Plan) -> list[int]:
    return ContinuousQuery(query, rspql_streams()).evaluation_instants()


def who(query: Plan) -> dict[int, list[str]]:
    """``?who`` of each SELECT result, by time."""
    return column(evaluate(query, rspql_streams()), "who")


# Report conditions ------------------------------------------------------------------


def test_new_content_condition_text() -> None:
    """``new_content`` is a condition of the plan's report policies (rsep.algebra.report)."""
    policy = ReportPolicy.parse("non_empty+new_content")
    assert NEW_CONTENT in policy and str(policy) == "new_content+non_empty"
    assert policy.triggers(
        content_changed=False, window_closed=False, non_empty=True, new_content=True
    )


def test_output_empty_reports_empty_relations() -> None:
    """C-SPARQL reports empty relations (``output.empty``): at the window closings 8 and
    10 nobody is near :b, and the answer is there, empty."""
    params = {"window.report": "window_close+non_empty", "window.present": "closing"}
    quiet = plan(NEAR + " FILTER(?shop = :b)", [W], params=params)
    loud = plan(NEAR + " FILTER(?shop = :b)", [W], params={**params, "output.empty": True})
    assert [a.time for a in ContinuousQuery(quiet, rspql_streams()).answers()] == [6, 12, 14, 16]
    answers = list(ContinuousQuery(loud, rspql_streams()).answers())
    assert [(a.time, a.empty) for a in answers] == [
        (6, False),
        (8, True),
        (10, True),
        (12, False),
        (14, False),
        (16, False),
    ]
    assert who(loud) == {6: [":eve"], 12: [":diana"], 14: [":diana"], 16: [":diana"]}


def test_ask_reports_a_boolean_at_every_instant() -> None:
    """ASK: at each evaluation instant, whether the streamed answer has a mapping."""
    params = {"window.report": "window_close", "window.present": "closing"}
    query = plan(NEAR + " FILTER(?shop = :b)", [W], form=Ask(), params=params)
    results = list(evaluate(query, rspql_streams(), until=18))
    assert all(isinstance(r, AskResult) for r in results)
    assert [(r.time, r.boolean) for r in results] == [  # type: ignore[union-attr]
        (6, True),
        (8, False),
        (10, False),
        (12, True),
        (14, True),
        (16, True),
        (18, False),
    ]


def test_construct_with_empty_graphs_and_fresh_blank_nodes() -> None:
    """CONSTRUCT: the template's blank nodes are fresh for each mapping; an empty graph is
    a result with no triples under ``output.empty``."""
    params = {
        "window.report": "window_close",
        "window.present": "closing",
        "output.empty": True,
    }
    form = Construct(f"_:visit <{EX}by> ?who ; <{EX}at> ?shop .")
    query = plan(NEAR + " FILTER(?shop = :b)", [W], form=form, params=params)
    results = list(evaluate(query, rspql_streams(), until=12))
    assert [(r.time, len(r.triples)) for r in results] == [  # type: ignore[union-attr]
        (6, 2),
        (8, 0),
        (10, 0),
        (12, 2),
    ]
    first, last = results[0].triples, results[-1].triples  # type: ignore[union-attr]
    assert {t.subject for t in first}.isdisjoint({t.subject for t in last})


def test_periodic_report_on_a_landmark_window() -> None:
    """P: every 5 instants from t0 = 0, over a landmark window that keeps everything."""
    window = NamedWindow(EX + "w", S_NEARBY, LandmarkWindow(0))
    query = plan(NEAR, [window], params={"window.report": "periodic(5)"})
    assert instants(query) == [5, 10]
    assert who(query) == {
        5: [":carl", ":diana", ":eve"],
        10: [":carl", ":diana", ":eve", ":eve"],
    }
    assert ContinuousQuery(query, rspql_streams()).evaluation_instants(until=22) == [5, 10, 15, 20]


def test_count_window_closes_on_the_item_that_completes_it() -> None:
    """A tumbling count window of two items closes when the second and the fourth item
    arrive (times 2 and 7); the closing window then holds items 3 and 4."""
    window = NamedWindow(EX + "w", S_NEARBY, CountWindow(2, 2))
    query = plan(NEAR, [window], params={"window.report": "window_close"})
    assert instants(query) == [2, 7]
    query = plan(
        NEAR, [window], params={"window.report": "window_close", "window.present": "closing"}
    )
    assert who(query) == {2: [":diana", ":eve"], 7: [":carl", ":eve"]}


def test_now_window_reads_the_current_instant() -> None:
    """CQELS's [NOW]: only the statements of the current instant."""
    window = NamedWindow(EX + "w", S_NEARBY, NowWindow())
    query = plan(NEAR, [window], params={"window.report": "new_content"})
    assert who(query) == {2: [":diana", ":eve"], 5: [":carl"], 7: [":eve"], 12: [":diana"]}


def test_all_ended_reads_every_window_closed_since_the_previous_evaluation() -> None:
    """``all_ended`` with a periodic report sparser than the closings: at 6 the windows
    (0, 2], (2, 4], (4, 6]; at 12 (6, 8], (8, 10], (10, 12]."""
    window = NamedWindow(EX + "w", S_NEARBY, TimeWindow(2, 2, 0))
    params = {"window.report": "periodic(6)", "window.present": "all_ended"}
    assert who(plan(NEAR, [window], params=params)) == {
        6: [":carl", ":diana", ":eve"],
        12: [":diana", ":eve"],
    }


def test_non_empty_alone_is_tested_at_every_instant() -> None:
    """NC alone holds on stretches of time: every instant with content is in ET."""
    query = plan(NEAR, [W], params={"window.report": "non_empty", "window.present": "closing"})
    assert instants(query) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16]
    assert ContinuousQuery(query, rspql_streams()).evaluation_instants(
        every_instant=True
    ) == instants(query)


def test_epoch_timestamps_with_the_default_t0() -> None:
    """Epoch milliseconds and window.t0 = 0: the range starts at the first item, so the
    oracle does not walk the windows of the decades before it."""
    day = 1_400_000_000_000
    stream = triples_stream(
        S_NEARBY, [(":a :isNearby :b", day + 500), (":c :isNearby :d", day + 2500)]
    )
    window = NamedWindow(EX + "w", S_NEARBY, TimeWindow(1000, 1000))
    query = plan(NEAR, [window], params={"profile": "csparql"})
    bound = ContinuousQuery(query, StreamSet([stream]))
    assert bound.time_range().start == day + 500
    assert bound.evaluation_instants() == [day + 1000, day + 3000]


def test_non_empty_alone_over_too_long_a_range() -> None:
    query = plan(NEAR, [W], params={"window.report": "non_empty"})
    with pytest.raises(UserError, match="add an event condition"):
        ContinuousQuery(query, rspql_streams()).evaluation_instants(until=MAX_INSTANTS + 5)


def test_windows_with_their_own_policy_decide_et() -> None:
    """Windows stating their own policy are the reporting windows; when none does, every
    window reports under ``window.report`` and ET is the union."""
    other = NamedWindow(EX + "v", S_NEARBY, TimeWindow(3, 3, 0))
    both = plan(NEAR, [W, other], params={"window.report": "window_close"})
    assert instants(both) == [3, 6, 8, 9, 10, 12, 14, 15, 16, 18]
    own = NamedWindow(
        EX + "v", S_NEARBY, TimeWindow(3, 3, 0), report=ReportPolicy.parse("window_close")
    )
    assert instants(plan(NEAR, [W, own])) == [3, 6, 9, 12, 15, 18]


def test_a_query_without_windows() -> None:
    """No window: evaluated at the start and wherever a time-varying graph changes."""
    shops = read_graph(Path(__file__).parent / "data" / "g_shops.ttl")
    query = Plan(
        Select(("o",)),
        Dataset(default_graphs=(EX + "G",)),
        GraphPatternRef(f"?o <{EX}owns> ?s", frozenset({"o", "s"})),
        parameters=parameters({"output.empty": True}),
    )
    graphs = {EX + "G": TimeVaryingGraph((Snapshot(shops, 2, 13),))}
    bound = ContinuousQuery(query, StreamSet(), graphs)
    assert bound.evaluation_instants(start=0) == [0, 2, 14]
    assert [(a.time, len(a.results)) for a in bound.answers(start=0)] == [(0, 0), (2, 2), (14, 0)]


# The dataset ------------------------------------------------------------------------


def test_unnamed_windows_and_static_graphs_form_the_default_graph() -> None:
    """C-SPARQL's dataset: the window and the static graph merged into the default graph;
    a named static graph is read with GRAPH."""
    window = NamedWindow(unnamed_window(1), S_NEARBY, TimeWindow(5, 2, 1))
    shops = read_graph(Path(__file__).parent / "data" / "g_shops.ttl")
    query = plan(
        "?who :isNearby ?shop . ?owner :owns ?shop . GRAPH :names { ?owner :name ?name }",
        [window],
        default_graphs=[EX + "shops"],
        named_graphs=[EX + "names"],
        default_windows=[window.iri],
        params={"window.present": "closing", "window.report": "window_close+non_empty"},
    )
    names = {triples_stream("x", [(':alice :name "Alice"', 0)]).events[0].graph}
    graphs = {EX + "shops": shops, EX + "names": next(iter(names))}
    assert column(evaluate(query, rspql_streams(), graphs), "who") == {
        6: [":carl", ":diana"],
        8: [":carl", ":eve"],
        10: [":eve"],
    }
    bound = ContinuousQuery(query, rspql_streams(), graphs)
    assert unnamed_window(1) not in bound.dataset.named_graphs(6)


def test_normalised_literals_come_back_as_written() -> None:
    """pyoxigraph normalises "+05"^^xsd:int to "5"^^xsd:integer in its store; the oracle
    returns the data's own term, and FILTER still compares values."""
    value = Literal("+05", datatype=NamedNode(XSD + "int"))
    item = Event.point(S_NEARBY, 1, [Triple(NamedNode(EX + "m"), NamedNode(EX + "v"), value)])
    stream = Stream(S_NEARBY, (item,))
    window = NamedWindow(EX + "w", S_NEARBY, LandmarkWindow(0))
    query = plan(
        "GRAPH :w { ?m :v ?v FILTER(?v > 4) }", [window], params={"window.report": "new_content"}
    )
    [result] = list(evaluate(query, StreamSet([stream])))
    assert result.bindings["v"] == value  # type: ignore[union-attr]
    construct = plan(
        "GRAPH :w { ?m :v ?v }",
        [window],
        form=Construct("?m <http://example.org/copy> ?v"),
        params={"window.report": "new_content"},
    )
    [graph] = list(evaluate(construct, StreamSet([stream])))
    assert {t.object for t in graph.triples} == {value}  # type: ignore[union-attr]


def test_literals_the_store_cannot_tell_apart_are_refused() -> None:
    s, p = NamedNode(EX + "m"), NamedNode(EX + "v")
    one = Literal("1", datatype=NamedNode(XSD + "integer"))
    other = Literal("01", datatype=NamedNode(XSD + "integer"))
    stream = Stream(
        S_NEARBY,
        (
            Event.point(S_NEARBY, 1, [Triple(s, p, one)]),
            Event.point(S_NEARBY, 2, [Triple(s, p, other)]),
        ),
    )
    window = NamedWindow(EX + "w", S_NEARBY, LandmarkWindow(0))
    query = plan("GRAPH :w { ?m :v ?v }", [window], params={"window.report": "new_content"})
    with pytest.raises(UserError, match="normalises literals"):
        list(evaluate(query, StreamSet([stream])))


# Time-varying graph files ------------------------------------------------------------


def test_time_varying_graph_file(tmp_path: Path) -> None:
    path = tmp_path / "g.trig"
    path.write_text(
        "@prefix : <http://example.org/> .\n"
        "@prefix rsep: <http://w3id.org/rsep/vocab#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        ":s1 { :a :p :b . }\n"
        ':s1 rsep:validUntil "1970-01-01T00:00:01Z"^^xsd:dateTime .\n'
        ":s2 { :a :p :c . }\n"
        ":s2 rsep:validFrom 2 ; rsep:validUntil 4 .\n"
        ":empty rsep:validFrom 5 ; rsep:validUntil 5 .\n",
        encoding="utf-8",
    )
    graph = read_time_varying_graph(path, time_unit=TimeUnit.SECONDS)
    assert [(len(s.graph), s.valid_from, s.valid_until) for s in graph.snapshots] == [
        (1, None, 1000),
        (1, 2000, 4000),
        (0, 5000, 5000),
    ]
    times = (-(10**9), 1000, 1500, 3000, 5000, 6000)
    assert [len(graph.at(t)) for t in times] == [1, 1, 0, 1, 0, 0]
    assert graph.changes() == {1001, 2000, 4001, 5000, 5001}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (":s { :a :p :b }\n:a :p :b .\n", "holds only rsep:validFrom"),
        (":s { :a :p :b }\n:s rsep:validFrom 1 , 2 .\n", "two values"),
        (':s { :a :p :b }\n:s rsep:validFrom "soon" .\n', "bad time"),
        (":s { :a :p :b }\n:s rsep:validFrom 3 ; rsep:validUntil 2 .\n", "before it is valid"),
        (":s { :a :p :b }\n:t { :a :p :c }\n:t rsep:validFrom 3 .\n", "common instant"),
        (":s { :a :p :b \n", "not TriG"),
    ],
)
def test_time_varying_graph_file_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.trig"
    header = "@prefix : <http://example.org/> .\n@prefix rsep: <http://w3id.org/rsep/vocab#> .\n"
    path.write_text(header + text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        read_time_varying_graph(path)


def test_static_graph_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "g.trig"
    path.write_text("<http://e/a> { <http://e/a> <http://e/p> <http://e/b> }\n", encoding="utf-8")
    with pytest.raises(UserError, match="no named graphs"):
        read_graph(path)
    bad = tmp_path / "g.ttl"
    bad.write_text("<http://e/a> <http://e/p> .\n", encoding="utf-8")
    with pytest.raises(UserError, match="not Turtle"):
        read_graph(bad)


# Errors -----------------------------------------------------------------------------


def test_missing_inputs() -> None:
    query = plan(NEAR, [W], default_graphs=[EX + "shops"])
    with pytest.raises(UserError, match="no content given for graph"):
        ContinuousQuery(query, rspql_streams())
    with pytest.raises(UserError, match="no stream given"):
        ContinuousQuery(plan(NEAR, [W]), StreamSet())


def test_interval_items_are_refused() -> None:
    item = triples_stream(S_NEARBY, [(":a :p :b", 1)]).events[0]
    stream = Stream(S_NEARBY, (Event(S_NEARBY, 1, 3, item.graph),))
    with pytest.raises(UserError, match="point timestamps"):
        list(evaluate(plan(NEAR, [W]), StreamSet([stream])))


def test_window_bound() -> None:
    query = plan(NEAR, [W], params={"max_window_events": 1, "window.present": "closing"})
    with pytest.raises(UserError, match="max_window_events"):
        list(evaluate(query, rspql_streams()))


def test_bad_sparql() -> None:
    query = plan("?s ?p", [W])
    with pytest.raises(UserError, match=r"not SPARQL 1\.1"):
        ContinuousQuery(query, rspql_streams()).eval(5)


def test_bad_range() -> None:
    with pytest.raises(UserError, match="before it starts"):
        ContinuousQuery(plan(NEAR, [W]), rspql_streams()).evaluation_instants(5, 4)


def test_short_names() -> None:
    assert short(NamedNode("http://other.org/x")) == "<http://other.org/x>"
    assert graphs_by_time([]) == {}
