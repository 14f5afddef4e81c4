"""The justification of an answer (:mod:`rsep.serve.timeline`) on the papers' examples: the
events and intervals equal what the figures and definitions give.

- RSEP-QL Fig. 1 (Example 4 over Example 1's stream, ``tests/semantics/data/rsepql_s.trig``):
  at 8 the answers' event mappings are e1 = (a1 b1 c1, 2, 6), e2 = (a2 b2 c2, 4, 6) and
  e3 = (a2 b2 c2, 4, 8) (Examples 8-9), at 10 also e4 = (a1 b1 c1, 2, 10) (Sect. 2's table);
  each justified by the items of W^λ_1 and W^τ_2 that match its BEPs.
- SPAseq Fig. 1: SEQ(A; B; C) over a1 b1 c1 a2 a3 b2 c2 at 1…7 (skip-till-next): each match's
  interval and its three events, a3 inside [4, 7] but not matching A under ?a = a2.
- RSP-QL Example 3's window (RANGE 5 STEP 2, closing present window, (o, c]) over the stream
  ``s_nearby.tnt``: the window's extent at the answer's time and the items in it that match.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyoxigraph import Literal, NamedNode, Triple

from rsep import AskResult, Event, Query, SelectResult, UserError
from rsep.rdf.event import StreamSet
from rsep.rdf.formats import read_events
from rsep.serve.timeline import (
    EVENT_COLUMNS,
    MATCH,
    Justification,
    Scope,
    event_table,
    justify,
    query_timeline,
    records_table,
    steps,
    timeline,
)

EX = "http://example.org/"
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "semantics" / "data"

EXAMPLE_4 = f"""
PREFIX : <{EX}>
PRAGMA window.present = last_ended
PRAGMA window.t0 = "-5"
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :S [LANDMARK T0 1]
FROM NAMED WINDOW :w2 ON :S [RANGE 5 STEP 1]
WHERE {{
  MATCH ( EVENT :w1 {{ ?x :p ?y }} SEQ EVENT :w2 {{ ?y :q ?z }} )
}}
"""


def short(term: str) -> str:
    """``<http://example.org/a1>`` as ``a1``."""
    return term.removeprefix(f"<{EX}").removesuffix(">")


def answers_at(query: Query, data: object, t: int) -> list[SelectResult]:
    """The oracle's SELECT answers of ``query`` over ``data`` at ``t``."""
    found = [r for r in query.run(data, engine="reference", until=t) if r.time == t]
    assert all(isinstance(r, SelectResult) for r in found)
    return found  # type: ignore[return-value]


def event_times(justification: Justification) -> list[tuple[int, tuple[str, ...]]]:
    """The justifying events as (time, steps)."""
    return [(e.t_start, e.steps) for e in justification.events]


@pytest.fixture(scope="module")
def figure_1() -> tuple[Query, list[Event], pa.Table]:
    """Example 4 (RSP-QL's (o, c] bounds, as the oracle's tests read it) and Fig. 1's stream."""
    query = Query(EXAMPLE_4, window_bounds="open_closed")
    events = list(read_events(DATA / "rsepql_s.trig", stream=EX + "S"))
    return query, events, event_table(enumerate(events))


def test_event_table_columns(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """One row per triple of Fig. 1's five items (G3 and G5 hold two), terms as N-Triples."""
    _, _, table = figure_1
    assert tuple(table.column_names) == EVENT_COLUMNS
    assert table.num_rows == 7
    assert Counter(table["seq"].to_pylist()) == {0: 1, 1: 1, 2: 2, 3: 1, 4: 2}
    assert table["t_start"].to_pylist()[:2] == [2, 4]
    assert f"<{EX}a1>" in table["s"].to_pylist()


def test_rsepql_steps_are_the_basic_event_patterns(
    figure_1: tuple[Query, list[Event], pa.Table],
) -> None:
    """E1 = EVENT w1 (?x :p ?y) and E2 = EVENT w2 (?y :q ?z), each on one item."""
    query, _, _ = figure_1
    found = steps(query.plan)
    assert [(s.window, s.patterns, s.whole) for s in found] == [
        (EX + "w1", (("?x", f"<{EX}p>", "?y"),), True),
        (EX + "w2", (("?y", f"<{EX}q>", "?z"),), True),
    ]


def test_rsepql_figure_1_at_8(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """At 8: a1 b1 c1 by G1 (2, via E1) and G3 (6, via E2), interval (2, 6) = e1; a2 b2 c2
    (twice, a bag) by G2 (4) and G3, G4 (6, 8), intervals (4, 6) = e2 and (4, 8) = e3. The
    scopes are W^λ_1(S, 8) = [1, 8] = (0, 8] and W^τ_2(S, 8) = (3, 8] (Example 7)."""
    query, events, table = figure_1
    answers = answers_at(query, events, 8)
    by_x: dict[str, list[Justification]] = {}
    for answer in answers:
        by_x.setdefault(short(str(answer.bindings["x"])), []).append(justify(query, answer, table))
    assert sorted((x, len(j)) for x, j in by_x.items()) == [("a1", 1), ("a2", 2)]
    [a1] = by_x["a1"]
    assert a1.intervals == ((2, 6),)
    assert event_times(a1) == [(2, ("E1",)), (6, ("E2",))]
    assert a1.events[1].triples == (f"<{EX}b1> <{EX}q> <{EX}c1> .",)
    w1, w2 = f"<{EX}w1>", f"<{EX}w2>"
    assert a1.scopes == (Scope(w1, EX + "S", 0, 8, "(]"), Scope(w2, EX + "S", 3, 8, "(]"))
    for a2 in by_x["a2"]:
        assert a2.intervals == ((4, 6), (4, 8))
        assert event_times(a2) == [(4, ("E1",)), (6, ("E2",)), (8, ("E2",))]


def test_rsepql_figure_1_at_10(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """At 10 (unrestricted, Sect. 2's table): a1 b1 c1 is justified by e1 = (2, 6) and
    e4 = (2, 10), (:b1 :q :c1) arriving again in G5; W^τ_2(S, 10) = (5, 10]."""
    query, events, table = figure_1
    a1 = [a for a in answers_at(query, events, 10) if short(str(a.bindings["x"])) == "a1"]
    assert len(a1) == 2
    justification = justify(query, a1[0], table)
    assert justification.intervals == ((2, 6), (2, 10))
    assert [e.t_start for e in justification.events] == [2, 6, 10]
    assert justification.scopes[1].start == 5


def test_justification_of_a_json_answer(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """The answer's JSON object (what the service stores) justifies as the result does."""
    query, events, table = figure_1
    [answer] = [a for a in answers_at(query, events, 8) if short(str(a.bindings["x"])) == "a1"]
    assert justify(query, answer.to_json(), table) == justify(query, answer, table)


def test_two_events_on_one_window(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """E1 and E2 over one landmark window are two steps (E1, E2): at 10 a1 b1 c1 is (2, 6)
    and (2, 10), E1's item at 2 before E2's at 6 and 10 (Eq. (7)), not (6, 10) as mixing the
    two patterns' items would give."""
    _, events, table = figure_1
    query = Query(
        f"""PREFIX : <{EX}>
PRAGMA window.report = content_change
SELECT ?x ?y ?z
FROM NAMED WINDOW :w ON :S [LANDMARK T0 1]
WHERE {{ MATCH ( EVENT :w {{ ?x :p ?y }} SEQ EVENT :w {{ ?y :q ?z }} ) }}
"""
    )
    assert [s.label for s in steps(query.plan)] == ["E1", "E2"]
    [answer, _] = [a for a in answers_at(query, events, 10) if short(str(a.bindings["x"])) == "a1"]
    justification = justify(query, answer, table)
    assert justification.intervals == ((2, 6), (2, 10))
    assert event_times(justification) == [(2, ("E1",)), (6, ("E2",)), (10, ("E2",))]
    assert justification.scopes == (Scope(f"<{EX}w>", EX + "S", 0, 10, "(]"),)


def test_epsparql_query_3() -> None:
    """EP-SPARQL query (3) over ``epsparql/stock.trig`` (tests/cli/test_run_events.py):
    :umbrella's rise is justified by its prices on 1 and 10 March, the match's interval; its
    acquisition on the 12th lies outside. The BGPs of ``EQUALSOPTIONAL``'s right side are
    marked optional; ``?price1``, ``?price2`` are not projected, so either price matches
    both BGPs."""
    text = (REPO / "tests/lang/paper_queries/epsparql/query3.epsparql").read_text()
    prefixes = f"PREFIX : <{EX}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
    query = Query(prefixes + "\n".join(line for line in text.splitlines() if line[:1] != "#"))
    assert [s.label for s in steps(query.plan)] == [
        "BGP1",
        "BGP2",
        "BGP3 (optional)",
        "BGP4 (optional)",
        "BGP5 (optional)",
    ]
    events = list(read_events(DATA / "epsparql" / "stock.trig", stream=EX + "s"))
    table = event_table(enumerate(events))
    found = {}
    for answer in query.run(events, engine="reference"):
        assert isinstance(answer, SelectResult)
        found[short(str(answer.bindings["company"]))] = justify(query, answer, table)
    march_1, march_10 = 1298937600000, 1299715200000
    umbrella = found["umbrella"]
    assert umbrella.scopes == (Scope(MATCH, None, march_1, march_10, "[]"),)
    assert [e.t_start for e in umbrella.events] == [march_1, march_10]
    assert all(f"<{EX}hasStockPrice>" in e.triples[0] for e in umbrella.events)
    assert umbrella.events[0].steps == ("BGP1", "BGP2", "BGP3 (optional)", "BGP5 (optional)")


def test_cqelscep_vienna() -> None:
    """CQELS-CEP Examples 6-9 (tests/cli/test_run_events.py): ?s = :m over [10, 16] minutes
    is justified by :a1's two delays at :m; :d1's delays at :h (12, 14) lie inside but do not
    match under ?s = :m, and the negated arrival is no step."""
    text = (REPO / "tests/lang/paper_queries/cqelscep/example6.cqelscep").read_text()
    prefixes = (
        f"PREFIX : <{EX}>\nPREFIX ex: <{EX}ex#>\n"
        "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nPRAGMA time_unit = min\n"
    )
    query = Query(prefixes + text)
    stream = EX + "ex#publicTransport"
    assert [(s.label, s.stream, s.patterns) for s in steps(query.plan)] == [
        ("P1", stream, (("?v", f"<{EX}delayAt>", "?s"),)),
        ("P2", stream, (("?v", f"<{EX}delayAt>", "?s"),)),
    ]
    vienna = DATA / "cqelscep"
    events = list(
        read_events(
            vienna / "vienna_stream.trig", stream=stream, time_unit=query.parameters.time_unit
        )
    )
    graphs = {EX + "ex#transportationMap": vienna / "vienna_map.ttl"}
    [answer] = list(query.run(events, graphs, engine="reference"))
    assert isinstance(answer, SelectResult) and answer.interval == (600_000, 960_000)
    justification = justify(query, answer, event_table(enumerate(events)))
    assert event_times(justification) == [(600_000, ("P1", "P2")), (960_000, ("P1", "P2"))]
    assert justification.events[0].triples == (f"<{EX}a1> <{EX}delayAt> <{EX}m> .",)


def spaseq_figure_1() -> tuple[Query, list[Event]]:
    """SPAseq Fig. 1's query (skip-till-next) and stream a1 b1 c1 a2 a3 b2 c2 at 1…7."""
    stream = EX + "u1"
    names = ["a1", "b1", "c1", "a2", "a3", "b2", "c2"]
    events = [
        Event.point(
            stream, t, [Triple(NamedNode(EX + n), NamedNode(EX + "type"), NamedNode(EX + n[0]))]
        )
        for t, n in enumerate(names, 1)
    ]
    text = f"""PREFIX : <{EX}>
SELECT ?a ?b ?c
WITHIN 1 MINUTES
FROM STREAM S1 <{stream}>
WHERE {{
  SEQ (A; B; C)
  DEFINE GPM A ON S1 {{ ?a :type :a }}
  DEFINE GPM B ON S1 {{ ?b :type :b }}
  DEFINE GPM C ON S1 {{ ?c :type :c }}
}}"""
    return Query(text, "spaseq"), events


def test_spaseq_figure_1() -> None:
    """Skip-till-next's three matches (the figure's table): each justified by its interval
    and the events of A, B and C under its bindings; a3 at 5 lies in [4, 7] but is not A's
    event for ?a = a2."""
    query, events = spaseq_figure_1()
    table = event_table(enumerate(events))
    found = {}
    for answer in query.run(events, engine="reference"):
        assert isinstance(answer, SelectResult)
        j = justify(query, answer, table)
        found[short(str(answer.bindings["a"]))] = j
    assert sorted(found) == ["a1", "a2", "a3"]
    assert found["a1"].intervals == ((1, 3),)
    assert event_times(found["a1"]) == [(1, ("A",)), (2, ("B",)), (3, ("C",))]
    assert found["a2"].scopes == (Scope("match", None, 4, 7, "[]"),)
    assert event_times(found["a2"]) == [(4, ("A",)), (6, ("B",)), (7, ("C",))]
    assert [e.seq for e in found["a3"].events] == [4, 5, 6]


def test_rspql_window() -> None:
    """RSP-QL Example 3's window ``[RANGE 5 STEP 2]`` read at the closing present window
    under (o, c] (the dialect's defaults): at 7 the window is W_2 = (2, 7]; (eve, alice) is
    justified by (:eve :isNearby :a) at 7, not by (:eve :isNearby :b) at 2, which the
    window's open start leaves out; at 5, W_1 = (0, 5] holds (:diana :isNearby :a) at 2."""
    query = Query(
        f"""PREFIX : <{EX}>
SELECT ?who ?owner
FROM <{EX}shops>
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} ?owner :owns ?shop }}
"""
    )
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    graphs = {EX + "shops": DATA / "g_shops.ttl"}
    events = StreamSet.from_events(read_events(DATA / "s_nearby.tnt", stream=EX + "S_nearby"))
    table = event_table(enumerate(events.events()))
    [window_step] = steps(query.plan)
    assert window_step.window == EX + "w" and not window_step.whole
    answers = [r for r in query.run(streams, graphs, engine="reference")]
    selects = [r for r in answers if isinstance(r, SelectResult)]
    assert len(selects) == len(answers) == 10

    def justification(t: int, who: str) -> Justification:
        [answer] = [r for r in selects if r.time == t and short(str(r.bindings["who"])) == who]
        return justify(query, answer, table)

    eve = justification(7, "eve")
    assert eve.scopes == (Scope(f"<{EX}w>", EX + "S_nearby", 2, 7, "(]"),)
    assert [(e.t_start, e.triples) for e in eve.events] == [
        (7, (f"<{EX}eve> <{EX}isNearby> <{EX}a> .",))
    ]
    assert eve.intervals == ()
    diana = justification(5, "diana")
    assert diana.scopes[0].start == 0 and diana.scopes[0].end == 5
    assert [e.t_start for e in diana.events] == [2]


def test_window_bounds_closed_open() -> None:
    """With ``window.bounds = closed_open`` the extent is drawn [o, c) and an item at c is
    left out: W_2 at 7 read as [2, 7) holds (:eve :isNearby :b) at 2, not the one at 7."""
    text = f"""PREFIX : <{EX}>
SELECT ?who
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} }}
"""
    query = Query(text, window_bounds="closed_open")
    events = list(read_events(DATA / "s_nearby.tnt", stream=EX + "S_nearby"))
    table = event_table(enumerate(events))
    answer = {"time": 7, "bindings": {"who": f"<{EX}eve>"}}
    j = justify(query, answer, table)
    assert j.scopes == (Scope(f"<{EX}w>", EX + "S_nearby", 2, 7, "[)"),)
    assert [e.t_start for e in j.events] == [2]


def test_timeline_body(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """The timeline route's body: every event once with its triples, every answer with its
    justification, numbered as given."""
    query, events, table = figure_1
    answers = answers_at(query, events, 8)
    body = timeline(query, list(enumerate(answers, start=10)), table)
    assert [e["time"] for e in body["events"]] == [2, 4, 6, 8, 10]
    assert len(body["events"][2]["triples"]) == 2
    assert [a["number"] for a in body["answers"]] == [10, 11, 12]
    intervals = sorted(tuple(map(tuple, a["justification"]["intervals"])) for a in body["answers"])
    assert intervals == [((2, 6),), ((4, 6), (4, 8)), ((4, 6), (4, 8))]
    ask = timeline(query, [(1, AskResult(8, True))], table)["answers"]
    assert ask == [{"number": 1, "answer": {"time": 8, "boolean": True}}]  # nothing to justify


class Unknown(UserError):
    """What the service raises for an unknown name: a 404."""

    status = 404


@dataclass
class FakeStream:
    """A registered stream as the service keeps it: its name, IRI and recent events."""

    name: str
    iri: str
    recent: list[dict[str, Any]]


@dataclass
class FakeQuery:
    """A registered query: the query and the stream IRIs it reads."""

    query: Query
    streams: tuple[str, ...]
    answers: list[dict[str, Any]]


@dataclass
class FakeService:
    """The part of the service the timeline reads (:class:`rsep.serve.timeline.TimelineSource`)."""

    streams: dict[str, FakeStream]
    queries: dict[str, FakeQuery]

    def query(self, name: str) -> FakeQuery:
        if name not in self.queries:
            raise Unknown(f"no query named {name}")
        return self.queries[name]

    def events_since(self, name: str, since: int, limit: int = 1000) -> list[dict[str, Any]]:
        return [e for e in self.streams[name].recent if e["seq"] > since][:limit]

    def answers_since(self, name: str, since: int, limit: int = 1000) -> list[dict[str, Any]]:
        return [a for a in self.queries[name].answers if a["seq"] > since][:limit]


def records(events: list[Event]) -> list[dict[str, Any]]:
    """Events as the service keeps them (seq from 1, times, triples as N-Triples lines)."""
    return [
        {
            "seq": seq,
            "t_start": e.t_start,
            "t_end": e.t_end,
            "graph": None,
            "triples": sorted(f"{t} ." for t in e.graph),
        }
        for seq, e in enumerate(events, start=1)
    ]


def test_records_table(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """The service's records read back into the events table :func:`event_table` gives (a
    literal with spaces and a final dot survives)."""
    _, events, _ = figure_1
    odd = Event.point(
        EX + "S", 12, [Triple(NamedNode(EX + "a"), NamedNode(EX + "l"), Literal("x ."))]
    )
    every = [*events, odd]
    key = [("seq", "ascending"), ("s", "ascending"), ("p", "ascending"), ("o", "ascending")]
    expected = event_table(enumerate(every, start=1)).sort_by(key)
    assert records_table(EX + "S", records(every)).sort_by(key).equals(expected)


def test_query_timeline(figure_1: tuple[Query, list[Event], pa.Table]) -> None:
    """The route's body over the service: the answers after ``since`` with their
    justifications over the recent events of the streams the query reads, and the streams."""
    query, events, _ = figure_1
    answers = [{"seq": n, **a.to_json()} for n, a in enumerate(answers_at(query, events, 8), 1)]
    other = FakeStream("other", EX + "other", [])
    stream = FakeStream("s", EX + "S", records(events))
    service = FakeService(
        {"s": stream, "other": other}, {"q": FakeQuery(query, (EX + "S",), answers)}
    )
    body = query_timeline(service, "q", since=1)
    assert body["streams"] == [{"name": "s", "iri": EX + "S"}]
    assert [e["seq"] for e in body["events"]] == [1, 2, 3, 4, 5]
    assert [a["number"] for a in body["answers"]] == [2, 3]
    for entry in body["answers"]:
        justification = entry["justification"]
        assert justification["intervals"] == [[4, 6], [4, 8]]
        assert [e["seq"] for e in justification["events"]] == [2, 3, 4]
    service.queries["q"] = FakeQuery(query, (), answers)  # names no stream: reads them all
    assert [s["name"] for s in query_timeline(service, "q")["streams"]] == ["s", "other"]


def test_all_ended_reads_since_the_previous_answer() -> None:
    """``window.present = all_ended`` reads every window closed since the previous
    evaluation: the timeline takes the previous answer's time for it, so each answer of
    Example 3's window (closing at 5, 7, 9, …, each an evaluation) is bounded by the one
    window that closed at its time, (t - 5, t]."""
    query = Query(
        f"""PREFIX : <{EX}>
SELECT ?who
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} }}""",
        window_present="all_ended",
    )
    events = list(read_events(DATA / "s_nearby.tnt", stream=EX + "S_nearby"))
    answers = list(query.run(events, engine="reference"))
    body = timeline(query, list(enumerate(answers, 1)), event_table(enumerate(events, 1)))
    assert {a["answer"]["time"] for a in body["answers"]} == {5, 7, 9, 11, 13, 15}
    for entry in body["answers"]:
        t = entry["answer"]["time"]
        scopes = [(s["start"], s["end"]) for s in entry["justification"]["scopes"]]
        assert scopes == [(t - 5, t)]
