"""CQELS-CEP's semantics (seed 001, Sect. 4; rsep.semantics.cqelscep): window functions on
interval streams (4.1), the operators on mappings with intervals (4.2), every evaluation
case (1)-(17) (4.3), and Examples 8-9 on the Vienna transport scenario, end to end from
the query text of Example 6: ``?s = :m`` at 16.

The Vienna data (``data/cqelscep/``) is rebuilt from Examples 1-3 and Figure 1's prose
(the files say how). Times of the scenario are the paper's, in minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, RdfFormat, Triple, parse

from rsep.algebra.compile import compile_query
from rsep.algebra.events import CepJoin, CepSeq, CepWindow, GraphPatternRef, Or
from rsep.algebra.plan import Plan
from rsep.algebra.window import (
    CountWindow,
    LandmarkWindow,
    NowWindow,
    PresentRule,
    TimeWindow,
    WindowBounds,
)
from rsep.errors import UserError
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import read_events
from rsep.rdf.time import TimeUnit
from rsep.semantics import ContinuousQuery, StreamingDataset
from rsep.semantics.cqelscep import (
    TIME_MIN,
    CqelscepEvaluation,
    Omega,
    background_pattern,
    event_clauses,
    join,
    negated_sequence,
    no_head,
    no_tail,
    or_,
    query,
    seq,
    seq_wo,
    sequence,
    stream_pattern,
    w_all,
    w_range,
    window_content,
    window_specification,
)
from rsep.semantics.evaluate import INTERVAL
from rsep.semantics.event_mapping import EventMapping, Mu
from rsep.semantics.graph import Snapshot, TimeVaryingGraph, read_graph
from rsep.semantics.store import GraphMatcher
from rsep.semantics.window import Reading, content

EX = "http://example.org/"
EXNS = "http://example.org/ex#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
DATA = Path(__file__).parent / "data" / "cqelscep"
QUERIES = Path(__file__).resolve().parents[1] / "lang" / "paper_queries" / "cqelscep"
PREFIXES = {"": EX, "ex": EXNS, "rdf": RDF}
MIN = 60_000
"""One minute in ms: the scenario's time unit."""

PUBLIC_TRANSPORT = EXNS + "publicTransport"
TRANSPORTATION_MAP = EXNS + "transportationMap"


def n(local: str) -> NamedNode:
    return NamedNode(EX + local)


def em(t1: int, t2: int, **bindings: str) -> EventMapping:
    """``⟨{?k ↦ :v, …}, [t1, t2]⟩``."""
    return EventMapping(Mu({k: n(v) for k, v in bindings.items()}), t1, t2)


def omega(*items: EventMapping) -> Omega:
    return frozenset(items)


def graph(text: str) -> frozenset[Triple]:
    """Triples in Turtle with ``:`` for ``http://example.org/``."""
    quads = parse(input=f"@prefix : <{EX}> . {text}".encode(), format=RdfFormat.TURTLE)
    return frozenset(q.triple for q in quads)


def item(stream: str, t1: int, t2: int, text: str) -> Event:
    return Event(stream, t1, t2, graph(text))


def compiled(text: str) -> Plan:
    dialect = get_dialect("cqelscep")
    return compile_query(parse_query(text, dialect, prefixes=PREFIXES), dialect)


def evaluation(
    text: str,
    streams: dict[str, list[Event]],
    graphs: dict[str, frozenset[Triple] | TimeVaryingGraph] | None = None,
) -> CqelscepEvaluation:
    """The CQELS-CEP query ``text`` bound to ``streams`` (by local name) and ``graphs``."""
    plan = compiled(text)
    data = StreamSet(Stream(EX + name, tuple(items)) for name, items in streams.items())
    dataset = StreamingDataset.of(plan, data, graphs or {})
    return CqelscepEvaluation(plan, dataset, GraphMatcher(dataset.forms))


# The Vienna transport scenario (Examples 1-3, 6-9) ------------------------------------------------


def vienna_stream() -> Stream:
    """Example 3's S (data/cqelscep/vienna_stream.trig), minutes to ms."""
    events = read_events(
        DATA / "vienna_stream.trig", stream=PUBLIC_TRANSPORT, time_unit=TimeUnit.MINUTES
    )
    return Stream(PUBLIC_TRANSPORT, tuple(events))


def vienna_plan() -> Plan:
    """Example 6, from the paper's query file, through the compiler."""
    return compiled((QUERIES / "example6.cqelscep").read_text())


def vienna() -> CqelscepEvaluation:
    plan = vienna_plan()
    graphs = {TRANSPORTATION_MAP: read_graph(DATA / "vienna_map.ttl")}
    dataset = StreamingDataset.of(plan, StreamSet([vienna_stream()]), graphs)
    return CqelscepEvaluation(plan, dataset, GraphMatcher(dataset.forms))


OMEGA_1 = omega(em(10, 10, v="a1", s="m"), em(12, 12, v="d1", s="h"))
OMEGA_2 = omega(em(16, 16, v="a1", s="m"), em(14, 14, v="d1", s="h"))
OMEGA_4 = omega(em(10, 16, v="a1", s="m"), em(12, 14, v="d1", s="h"))
"""Example 8's Ω1, Ω2 and Ω4 (Ω3 = ∅)."""


def test_example_8_no_tail_of_a_sequence() -> None:
    """Example 8: Ω4 = NO_TAIL(SEQ(Ω1, Ω2), Ω3, 16) with Ω3 = ∅."""
    assert no_tail(seq(OMEGA_1, OMEGA_2), frozenset(), 16) == OMEGA_4


def test_example_9_event_clause_at_16_is_omega_4() -> None:
    """Example 9: "Ω4 in Example 8 is the result of [[EC, 16]]". The definition reads the
    window's four delays into both P1's of SEQ(P1, P1, !P2) (Example 8 splits them into Ω1
    and Ω2 for the illustration); compatible pairs in order give the same Ω4."""
    ev = vienna()
    scaled = frozenset(EventMapping(m.mu, m.t1 * MIN, m.t2 * MIN) for m in OMEGA_4)
    assert ev.event_clause(ev.clauses, 16 * MIN) == scaled


def test_example_9_background_pattern_at_16() -> None:
    """Example 9 writes Ω5 = [[P, t]]_D = {{?v ↦ a1, ?s ↦ m}}; by Eq. (17) P over D gives
    every subway (a1, d1) with every stop that reaches :c by subway (m, b): four mappings,
    each over [TIME_MIN, 16] (D never changes). Only {a1, m} joins with Ω4, so the answer is
    the paper's (docs/semantics.md, CQELS-CEP: Ω5 is shown after the join)."""
    ev = vienna()
    found = ev.background_at(ev.background, 16 * MIN)
    assert found == omega(
        *(em(TIME_MIN, 16 * MIN, v=v, s=s) for v in ("a1", "d1") for s in ("m", "b"))
    )


def test_example_9_the_query_returns_m_at_16() -> None:
    """Example 9: joining Ω4 and Ω5 and projecting to V = {?s} gives the single answer
    ?s ↦ m (Eq. (1)), over [10, 16]."""
    ev = vienna()
    t = 16 * MIN
    assert ev.at(t) == [em(10 * MIN, 16 * MIN, v="a1", s="m")]
    clauses, background = ev.event_clause(ev.clauses, t), ev.background_at(ev.background, t)
    assert query(clauses, background, ["s"]) == omega(em(10 * MIN, 16 * MIN, s="m"))


def test_example_1_at_14_the_repeated_delay_of_d1_is_not_reported() -> None:
    """Example 1: "At time point 14, a repeated delay for the subway d1 on the way to h is
    detected, but this is not reported as getting from h to c needs the tram line l3"."""
    ev = vienna()
    assert ev.event_clause(ev.clauses, 14 * MIN) == omega(em(12 * MIN, 14 * MIN, v="d1", s="h"))
    assert ev.at(14 * MIN) == []


def test_the_window_forgets_the_first_delay_after_ten_minutes() -> None:
    """[RANGE 10m] at 21: the window [11, 21] no longer holds the delay at 10."""
    ev = vienna()
    assert ev.event_clause(ev.clauses, 21 * MIN) == omega(em(12 * MIN, 14 * MIN, v="d1", s="h"))
    assert ev.at(21 * MIN) == []
    assert ev.at(20 * MIN) == [em(10 * MIN, 16 * MIN, v="a1", s="m")]


def test_an_arrival_between_delay_and_now_cancels_the_report() -> None:
    """The negated tail !{?v :arriveAt ?s}: an arrival of a1 at m at 17 (after the second
    delay, by the evaluation time) removes the sequence (NO_TAIL, Eq. (14))."""
    stream = vienna_stream()
    arrival = item(PUBLIC_TRANSPORT, 17 * MIN, 17 * MIN, ":a1 :arriveAt :m .")
    plan = vienna_plan()
    graphs = {TRANSPORTATION_MAP: read_graph(DATA / "vienna_map.ttl")}
    data = StreamSet([Stream(PUBLIC_TRANSPORT, (*stream.events, arrival))])
    dataset = StreamingDataset.of(plan, data, graphs)
    ev = CqelscepEvaluation(plan, dataset, GraphMatcher(dataset.forms))
    assert ev.at(16 * MIN) == [em(10 * MIN, 16 * MIN, v="a1", s="m")]
    assert ev.at(17 * MIN) == []


def test_the_oracle_evaluates_example_6_at_its_instants() -> None:
    """Through ``ContinuousQuery`` (the evaluator chosen by the plan, the projection to V =
    {?s}): ?s ↦ m at 16 over [10, 16], nothing at 10, 12 and 14. (``answers()`` would also
    run the report policy's scan of every millisecond of the 10-minute window: slow, and
    not CQELS-CEP's; the instants are the evaluator's.)"""
    graphs = {TRANSPORTATION_MAP: read_graph(DATA / "vienna_map.ttl")}
    cq = ContinuousQuery(vienna_plan(), StreamSet([vienna_stream()]), graphs)
    assert isinstance(cq.events, CqelscepEvaluation)
    found = {t: cq.solutions(t * MIN, None) for t in (10, 12, 14, 16)}
    assert found == {
        10: [],
        12: [],
        14: [],
        16: [{"s": str(n("m")), INTERVAL: f"{10 * MIN} {16 * MIN}"}],
    }
    assert cq.eval(16 * MIN) == [{"s": n("m")}]


def test_the_answer_may_change_where_items_enter_and_leave_the_window() -> None:
    """Point items enter at t and leave at t + T + 1 (the window is [t - T, t])."""
    assert vienna().instants() == sorted(
        [t * MIN for t in (10, 12, 14, 16)] + [t * MIN + 10 * MIN + 1 for t in (10, 12, 14, 16)]
    )


# Sect. 4.1: window functions on interval streams --------------------------------------------------

S = EX + "s"


def test_w_range_cuts_interval_items_to_the_window() -> None:
    """w_RANGE(S, t, T): items that meet [t - T, t], cut to it; later items are not there."""
    stream = [
        item(S, 2, 4, ":a :p :b ."),
        item(S, 5, 9, ":a :p :c ."),
        item(S, 9, 12, ":a :p :d ."),
        item(S, 3, 20, ":a :p :e ."),
        item(S, 13, 13, ":a :p :f ."),
    ]
    found = [(e.t_start, e.t_end) for e in w_range(stream, 10, 5)]
    assert found == [(5, 9), (9, 10), (5, 10)]


def test_w_range_holds_its_lower_bound_unlike_rspqls_window() -> None:
    """The paper's t'1 = max(t1, t - T) puts t - T in the window; RSP-QL's time window
    (t - α, t] (rsep.semantics.window, CQELS's closing window) leaves it out."""
    stream = [item(S, 5, 5, ":a :p :b ."), item(S, 6, 6, ":a :p :c .")]
    assert [e.t_start for e in w_range(stream, 10, 5)] == [5, 6]
    reading = Reading(PresentRule.CLOSING, WindowBounds.OPEN_CLOSED, 0)
    rspql = content(TimeWindow(5, 1), Stream(S, tuple(stream)), 10, reading)
    assert [e.t_start for e in rspql] == [6]


def test_now_and_all_windows() -> None:
    """[NOW] is RANGE 0 ([t, t]); [ALL] holds everything since t0, cut at t."""
    stream = [item(S, 2, 4, ":a :p :b ."), item(S, 6, 9, ":a :p :c .")]
    assert [(e.t_start, e.t_end) for e in window_content(NowWindow(), stream, 7)] == [(7, 7)]
    assert [(e.t_start, e.t_end) for e in w_all(stream, 8, 3)] == [(3, 4), (6, 8)]
    landmark = window_content(LandmarkWindow(), stream, 8, t0=0)
    assert [(e.t_start, e.t_end) for e in landmark] == [(2, 4), (6, 8)]
    assert w_all(stream, 2, 3) == ()


def test_windows_the_paper_does_not_define_on_intervals_are_refused() -> None:
    with pytest.raises(UserError, match="RANGE T"):
        window_content(CountWindow(3, 1), [], 5)
    with pytest.raises(UserError, match="RANGE T"):
        window_content(TimeWindow(10, 5), [], 5)


# Sect. 4.2: operators on mappings with intervals --------------------------------------------------


def test_join_takes_the_intersection_of_the_intervals() -> None:
    """JOIN: compatible pairs whose intervals meet, over [max(t1, t3), min(t2, t4)]; not
    ETALIS's AND, which would span [1, 8]."""
    left = omega(em(1, 5, x="a"), em(6, 7, x="b"))
    right = omega(em(3, 8, x="a", y="c"), em(5, 9, y="d"), em(8, 9, x="b"))
    assert join(left, right) == omega(
        em(3, 5, x="a", y="c"), em(5, 5, x="a", y="d"), em(6, 7, x="b", y="d")
    )


def test_or_is_the_union() -> None:
    assert or_(omega(em(1, 2, x="a")), omega(em(1, 2, x="a"), em(3, 3, x="b"))) == omega(
        em(1, 2, x="a"), em(3, 3, x="b")
    )


def test_seq_needs_the_first_to_end_strictly_before_the_second_starts() -> None:
    left = omega(em(1, 2, x="a"), em(1, 3, x="a"), em(1, 2, x="b"))
    right = omega(em(3, 4, x="a", y="c"))
    assert seq(left, right) == omega(em(1, 4, x="a", y="c"))


def test_seq_wo_drops_sequences_with_a_compatible_negative_strictly_between() -> None:
    """SEQ_WO(Ω1, Ω2, Ω3): a negative mapping compatible with μ1 ∪ μ3 strictly between
    (t2 < t3 ∧ t4 < t5) blocks; one touching t2 or t5, or incompatible, does not (the
    open reading, docs/semantics.md, CQELS-CEP)."""
    first, last = omega(em(1, 2, x="a")), omega(em(8, 9, x="a", y="c"))
    both = omega(em(1, 9, x="a", y="c"))
    assert seq_wo(first, omega(em(4, 5, x="a")), last) == frozenset()
    assert seq_wo(first, omega(em(4, 5, y="c")), last) == frozenset()
    assert seq_wo(first, omega(em(4, 5, x="b")), last) == both
    assert seq_wo(first, omega(em(2, 5, x="a")), last) == both
    assert seq_wo(first, omega(em(5, 8, x="a")), last) == both
    assert seq_wo(first, omega(em(3, 7)), last) == frozenset()  # the empty mapping


def test_no_head_and_no_tail() -> None:
    """NO_HEAD: no compatible negative mapping ending before the start; NO_TAIL: none
    starting after the end and ending by t."""
    positive = omega(em(5, 6, x="a"), em(5, 6, x="b"))
    assert no_head(omega(em(1, 4, x="a")), positive) == omega(em(5, 6, x="b"))
    assert no_head(omega(em(1, 5, x="a")), positive) == positive
    assert no_tail(positive, omega(em(7, 8, x="b")), 8) == omega(em(5, 6, x="a"))
    assert no_tail(positive, omega(em(7, 8, x="b")), 7) == positive
    assert no_tail(positive, omega(em(6, 8, x="b")), 9) == positive


# Sect. 4.3: the evaluation cases (1)-(17) on small inputs -----------------------------------------

A = omega(em(1, 1, x="a"), em(5, 5, x="b"))
B = omega(em(2, 2, x="a"), em(6, 6, x="a"))
C = omega(em(3, 3, x="a"), em(7, 7, x="b"))


def test_case_1_joins_event_clauses_with_the_background_and_projects() -> None:
    """(1): {⟨μ|V, [t1, t2]⟩ | ⟨μ, [t1, t2]⟩ ∈ JOIN([[EC, t]], [[P, t]]_D)}."""
    background = omega(em(0, 9, x="a", y="c"), em(0, 9, x="b", y="d"))
    assert query(A, background, ["y"]) == omega(em(1, 1, y="c"), em(5, 5, y="d"))
    assert query(A, background, []) == join(A, background)


def test_case_2_joins_the_event_clauses() -> None:
    """(2): [[{EC1, EC2, EC3}, t]] = JOIN([[EC1, t]], JOIN([[EC2, t]], [[EC3, t]]))."""
    spans = [omega(em(1, 6, x="a")), omega(em(4, 9, y="b")), omega(em(5, 5, x="a", z="c"))]
    assert event_clauses(spans) == omega(em(5, 5, x="a", y="b", z="c"))
    assert event_clauses(spans[:1]) == spans[0]


def test_case_2_end_to_end_a_seq_window_and_another_window() -> None:
    """Every window beside the SEQ is an event clause, joined with it over the intervals'
    intersection: the delay sequence [1, 3] of ?v meets the 'full' report of ?v at 2..3."""
    ev = evaluation(
        "SELECT * FROM NAMED WINDOW :W ON :s [RANGE 10ms] "
        "FROM NAMED WINDOW :V ON :t [RANGE 10ms] WHERE { "
        "WINDOW :W { SEQ ({?v :delayAt ?s}, {?v :delayAt ?s}) } WINDOW :V { ?v :state :full } }",
        {
            "s": [item(S, 1, 1, ":b1 :delayAt :m ."), item(S, 3, 3, ":b1 :delayAt :m .")],
            "t": [
                item(EX + "t", 2, 8, ":b1 :state :full ."),
                item(EX + "t", 4, 4, ":x :state :full ."),
            ],
        },
    )
    assert isinstance(ev.clauses, CepJoin)
    assert ev.at(5) == [em(2, 3, v="b1", s="m")]


THREE_WINDOWS = (
    "SELECT * FROM NAMED WINDOW :W1 ON :s1 [RANGE 20ms] FROM NAMED WINDOW :W2 ON :s2 "
    "[RANGE 20ms] FROM NAMED WINDOW :W3 ON :s3 [RANGE 20ms] WHERE {{ SEQ ({seq}) "
    "WINDOW :W1 {{ ?v :a ?s }} WINDOW :W2 {{ ?v :b ?s }} WINDOW :W3 {{ ?v :c ?s }} }}"
)


def three_streams() -> dict[str, list[Event]]:
    """a at 1 and 9, b at 4, c at 6 and 12 (one vehicle ?v = :u at stop ?s = :m)."""
    return {
        "s1": [item(EX + "s1", t, t, ":u :a :m .") for t in (1, 9)],
        "s2": [item(EX + "s2", 4, 4, ":u :b :m .")],
        "s3": [item(EX + "s3", t, t, ":u :c :m .") for t in (6, 12)],
    }


def at(ev: CqelscepEvaluation, t: int) -> list[tuple[int, int]]:
    return [(m.t1, m.t2) for m in ev.at(t)]


def test_cases_3_and_4_positive_sequences_of_window_specifications() -> None:
    """(3) SEQ(W1, W2, …, Wn) = SEQ(W1, SEQ(W2, …, Wn)); (4) SEQ(W1, W2) = SEQ([[W1]],
    [[W2]]); the n-ary value equals the nested one (SEQ is associative)."""
    assert sequence([A, B, C]) == seq(A, seq(B, C)) == seq(seq(A, B), C)
    assert sequence([A, B, C]) == omega(em(1, 3, x="a"))
    ev = evaluation(THREE_WINDOWS.format(seq=":W1, :W2, :W3"), three_streams())
    assert isinstance(ev.clauses, CepSeq)
    assert at(ev, 12) == [(1, 6), (1, 12)]


def test_cases_5_and_8_a_negated_window_in_the_middle() -> None:
    """(5) SEQ(W1, !W2, W3) = SEQ_WO(SEQ(W1), W2, SEQ(W3)) and (8) SEQ_WO(W1, W2, W3) =
    SEQ_WO([[W1]], [[W2]], [[W3]]): b at 4 lies between a at 1 and c at 6 or 12, not
    between a at 9 and c at 12."""
    assert negated_sequence([A, B, C], 1, 9) == seq_wo(A, B, C) == omega(em(5, 7, x="b"))
    ev = evaluation(THREE_WINDOWS.format(seq=":W1, !:W2, :W3"), three_streams())
    assert at(ev, 12) == [(9, 12)]


def test_case_6_a_negated_first_window() -> None:
    """(6) SEQ(!W1, W2, …, Wn) = NO_HEAD([[W1]], [[SEQ(W2, …, Wn)]]): b-then-c with no a
    before b: a at 1 precedes b at 4, so nothing."""
    assert negated_sequence([A, B, C], 0, 9) == no_head(A, seq(B, C))
    ev = evaluation(THREE_WINDOWS.format(seq="!:W1, :W2, :W3"), three_streams())
    assert at(ev, 12) == []
    later = three_streams()
    later["s1"] = [item(EX + "s1", 5, 5, ":u :a :m .")]
    ev = evaluation(THREE_WINDOWS.format(seq="!:W1, :W2, :W3"), later)
    assert at(ev, 12) == [(4, 6), (4, 12)]


def test_case_7_a_negated_last_window() -> None:
    """(7) SEQ(W1, …, Wn-1, !Wn) = NO_TAIL([[SEQ(W1, …, Wn-1)]], [[Wn]], t): a-then-b with
    no c after b by t: at 5 the pair (1, 4) stands; at 6 the c at 6 removes it."""
    assert negated_sequence([A, B, C], 2, 9) == no_tail(seq(A, B), C, 9)
    ev = evaluation(THREE_WINDOWS.format(seq=":W1, :W2, !:W3"), three_streams())
    assert at(ev, 5) == [(1, 4)]
    assert at(ev, 6) == []


def test_case_9_a_window_specification_reads_its_stream_through_its_window() -> None:
    """(9) [[(s, ω, TSP), t]] = [[TSP, t]]^ω_{S_s}."""
    stream = [item(S, 1, 1, ":a :p :b ."), item(S, 8, 8, ":a :p :c .")]
    pattern = GraphPatternRef(f"{{ ?x <{EX}p> ?y }}", frozenset({"x", "y"}))
    matcher = GraphMatcher()
    found = window_specification(
        lambda items: stream_pattern(pattern, items, matcher), TimeWindow(5, 1), stream, 9
    )
    assert found == omega(em(8, 8, x="a", y="c"))


ONE_WINDOW = (
    "SELECT * FROM NAMED WINDOW :W ON :s [RANGE 20ms] WHERE {{ WINDOW :W {{ SEQ ({seq}) }} }}"
)


def one_stream() -> dict[str, list[Event]]:
    """a at 1 and 9, b at 4, c at 6 and 12 on one stream."""
    items = [(1, ":u :a :m ."), (4, ":u :b :m ."), (6, ":u :c :m ."), (9, ":u :a :m .")]
    items.append((12, ":u :c :m ."))
    return {"s": [item(S, t, t, text) for t, text in items]}


def test_cases_10_and_11_positive_sequences_of_graph_patterns() -> None:
    """(10) SEQ(P1, …, Pℓ) = SEQ(P1, SEQ(P2, …, Pℓ)) and (11) SEQ(P1, P2) = SEQ([[P1]],
    [[P2]]) over one window."""
    ev = evaluation(ONE_WINDOW.format(seq="{?v :a ?s}, {?v :b ?s}, {?v :c ?s}"), one_stream())
    assert at(ev, 12) == [(1, 6), (1, 12)]
    ev = evaluation(ONE_WINDOW.format(seq="{?v :a ?s}, {?v :c ?s}"), one_stream())
    assert at(ev, 12) == [(1, 6), (1, 12), (9, 12)]


def test_cases_12_and_15_a_negated_graph_pattern_in_the_middle() -> None:
    """(12) SEQ(P1, …, !Pi, …, Pℓ) = SEQ_WO(SEQ(P1 … Pi-1), Pi, SEQ(Pi+1 … Pℓ)), (15)
    SEQ_WO(P1, P2, P3) = SEQ_WO([[P1]], [[P2]], [[P3]])."""
    ev = evaluation(ONE_WINDOW.format(seq="{?v :a ?s}, !{?v :b ?s}, {?v :c ?s}"), one_stream())
    assert at(ev, 12) == [(9, 12)]


def test_case_13_a_negated_first_graph_pattern() -> None:
    """(13) SEQ(!P1, P2, …, Pℓ) = NO_HEAD([[P1]], [[SEQ(P2, …, Pℓ)]]): c with no b before."""
    ev = evaluation(ONE_WINDOW.format(seq="!{?v :b ?s}, {?v :c ?s}"), one_stream())
    assert at(ev, 5) == []
    ev = evaluation(ONE_WINDOW.format(seq="!{?v :c ?s}, {?v :b ?s}"), one_stream())
    assert at(ev, 12) == [(4, 4)]


def test_case_14_a_negated_last_graph_pattern() -> None:
    """(14) SEQ(P1, …, !Pℓ) = NO_TAIL([[SEQ(P1, …, Pℓ-1)]], [[Pℓ]], t): a with no c after
    it by t."""
    ev = evaluation(ONE_WINDOW.format(seq="{?v :a ?s}, !{?v :c ?s}"), one_stream())
    assert at(ev, 5) == [(1, 1)]
    assert at(ev, 9) == [(9, 9)]
    assert at(ev, 12) == []


def test_case_16_a_pattern_matches_within_one_item() -> None:
    """(16): μ(P) ⊆ g for one item ⟨g, [t1, t2]⟩ of the window: a pattern of two triples
    does not match across items, and each mapping keeps its item's (cut) interval."""
    items = [
        item(S, 1, 3, ":u :a :m . :u :b :m ."),
        item(S, 2, 2, ":w :a :m ."),
        item(S, 4, 4, ":w :b :m ."),
    ]
    pattern = GraphPatternRef(f"{{ ?v <{EX}a> ?s . ?v <{EX}b> ?s }}", frozenset({"v", "s"}))
    assert stream_pattern(pattern, w_range(items, 5, 3), GraphMatcher()) == omega(
        em(2, 3, v="u", s="m")
    )


def test_case_17_the_background_is_labelled_since_its_last_change() -> None:
    """(17): ⟨μ, [t1, t]⟩ for μ ∈ [[P]]_{D(t)}, D unchanged since t1; a D that never changed
    gives TIME_MIN. The label takes part in JOIN (1): a D that changed at 5 cuts an event
    mapping over [2, 6] to [5, 6]."""
    pattern = GraphPatternRef(f"{{ ?v <{EX}type> <{EX}subway> }}", frozenset({"v"}))
    d = graph(":a1 :type :subway .")
    assert background_pattern(pattern, d, TIME_MIN, 7, GraphMatcher()) == omega(
        em(TIME_MIN, 7, v="a1")
    )
    varying = TimeVaryingGraph((Snapshot(graph(":x :type :tram ."), None, 4), Snapshot(d, 5, None)))
    ev = evaluation(
        "SELECT * FROM :map FROM NAMED WINDOW :W ON :s [RANGE 10ms] WHERE { "
        "WINDOW :W { SEQ ({?v :delayAt ?s}, {?v :delayAt ?s}) } ?v :type :subway }",
        {"s": [item(S, 2, 2, ":a1 :delayAt :m ."), item(S, 6, 6, ":a1 :delayAt :m .")]},
        {EX + "map": varying},
    )
    assert ev.unchanged_since(7) == 5 and ev.unchanged_since(3) == TIME_MIN
    assert ev.background_at(ev.background, 7) == omega(em(5, 7, v="a1"))
    assert ev.at(7) == [em(5, 6, v="a1", s="m")]
    assert 5 in ev.instants()


def test_case_17_nested_paths_join_the_group_and_its_filters() -> None:
    """The background's nested path triples are joined with the rest of the group, whose
    FILTER sees their variables."""
    ev = vienna()
    text = (QUERIES / "example6.cqelscep").read_text().replace(":c.", ":c. FILTER (?s != :m)")
    plan = compiled(text)
    dataset = StreamingDataset.of(
        plan, StreamSet([vienna_stream()]), {TRANSPORTATION_MAP: ev.default_graph(0)}
    )
    filtered = CqelscepEvaluation(plan, dataset, GraphMatcher(dataset.forms))
    found = filtered.background_at(filtered.background, 16 * MIN)
    assert {m.mu["s"] for m in found} == {n("b")}
    assert filtered.at(16 * MIN) == []


def test_interval_items_as_input() -> None:
    """Footnote 3: a query's output (non-atomic events) fed to another query. SEQ over
    interval items cut by the window: [1, 4] then [6, 9] at 8 with RANGE 5: the first is cut
    to [3, 4], the second to [6, 8]."""
    ev = evaluation(
        "SELECT * FROM NAMED WINDOW :W ON :s [RANGE 5ms] WHERE { WINDOW :W { "
        "SEQ ({?v :delayedTwiceAt ?s}, {?v :delayedTwiceAt ?s}) } }",
        {
            "s": [
                item(S, 1, 4, ":a1 :delayedTwiceAt :m ."),
                item(S, 6, 9, ":a1 :delayedTwiceAt :m ."),
            ]
        },
    )
    assert ev.at(8) == [em(3, 8, v="a1", s="m")]
    assert ev.at(10) == []  # [1, 4] left the window [5, 10]
    assert ev.instants()[:4] == [1, 2, 3, 4]


def test_or_and_join_nodes_of_the_plan() -> None:
    """The plan's Or (OR) and CepJoin with a background pattern (JOIN with Eq. (17))."""
    ev = evaluation(
        "SELECT * FROM :map FROM NAMED WINDOW :W ON :s [RANGE 10ms] WHERE { "
        "WINDOW :W { SEQ ({?v :a ?s}, {?v :b ?s}) } }",
        {"s": [item(S, 1, 1, ":u :a :m ."), item(S, 3, 3, ":u :b :m .")]},
        {EX + "map": graph(":u :type :bus .")},
    )
    window = ev.clauses
    assert isinstance(window, CepWindow) and isinstance(window.pattern, CepSeq)
    bus = GraphPatternRef(f"{{ ?v <{EX}type> <{EX}bus> }}", frozenset({"v"}))
    assert ev.event_clause(CepJoin(window, bus), 5) == omega(em(1, 3, v="u", s="m"))
    assert ev.event_clause(Or(window, window), 5) == ev.event_clause(window, 5)
    items = window_content(window.window, ev.dataset.streams[S], 5)
    inner = window.pattern
    assert ev.triple_sequence(Or(inner, inner), items, 5) == omega(em(1, 3, v="u", s="m"))


def test_what_is_not_an_event_clause_is_refused() -> None:
    """An event clause SEQ holds window specifications; a window holds patterns."""
    ev = evaluation(ONE_WINDOW.format(seq="{?v :a ?s}, {?v :b ?s}"), one_stream())
    window = ev.clauses
    assert isinstance(window, CepWindow)
    pattern = GraphPatternRef("{ }")
    with pytest.raises(UserError, match="window specifications"):
        ev.event_clause(CepSeq.of(pattern, pattern), 5)
    with pytest.raises(UserError, match="triple sequence pattern"):
        ev.triple_sequence(window, (), 5)


# Properties ---------------------------------------------------------------------------------------

TERMS = ["a", "b"]


@st.composite
def mappings(draw: st.DrawFn) -> EventMapping:
    bound = draw(st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(TERMS)))
    t1 = draw(st.integers(0, 8))
    t2 = draw(st.integers(t1, 10))
    return em(t1, t2, **bound)


omegas = st.frozensets(mappings(), max_size=5)


@settings(max_examples=200, deadline=None)
@given(omegas, omegas)
def test_or_and_join_are_commutative(left: Omega, right: Omega) -> None:
    assert or_(left, right) == or_(right, left)
    assert join(left, right) == join(right, left)


@settings(max_examples=200, deadline=None)
@given(omegas, omegas)
def test_joins_interval_is_the_intersection(left: Omega, right: Omega) -> None:
    """Every JOIN result lies in both operands' intervals: it comes from a compatible pair
    and spans exactly the intersection of their intervals."""
    for m in join(left, right):
        assert any(
            a.mu.compatible(b.mu)
            and a.mu.join(b.mu) == m.mu
            and (m.t1, m.t2) == (max(a.t1, b.t1), min(a.t2, b.t2))
            for a in left
            for b in right
        )
    pairs = {(a, b) for a in left for b in right if a.mu.compatible(b.mu)}
    meeting = {(a, b) for a, b in pairs if max(a.t1, b.t1) <= min(a.t2, b.t2)}
    assert {(a.mu.join(b.mu), max(a.t1, b.t1), min(a.t2, b.t2)) for a, b in meeting} == {
        (m.mu, m.t1, m.t2) for m in join(left, right)
    }


@settings(max_examples=200, deadline=None)
@given(omegas, omegas, omegas)
def test_seq_is_associative(a: Omega, b: Omega, c: Omega) -> None:
    """So nesting n-ary sequences to the right (Eq. (3), (10)) or to the left gives one
    value."""
    assert seq(seq(a, b), c) == seq(a, seq(b, c))


@settings(max_examples=200, deadline=None)
@given(omegas, omegas, omegas, st.integers(0, 12))
def test_a_negation_that_never_matches_changes_nothing(
    first: Omega, negative: Omega, last: Omega, t: int
) -> None:
    """SEQ_WO with a negated pattern that has no (compatible) match equals SEQ without it;
    so do NO_HEAD and NO_TAIL; with matches, SEQ_WO keeps a subset of SEQ."""
    assert seq_wo(first, frozenset(), last) == seq(first, last)
    assert no_head(frozenset(), last) == last
    assert no_tail(first, frozenset(), t) == first
    assert seq_wo(first, negative, last) <= seq(first, last)
    assert no_head(negative, last) <= last and no_tail(first, negative, t) <= first
    # ?x ↦ :c conflicts with every mapping that binds ?x (to :a or :b)
    binds_x = [frozenset(m for m in o if "x" in m.mu) for o in (first, last)]
    never = frozenset(EventMapping(Mu({"x": n("c")}), m.t1, m.t2) for m in negative)
    assert seq_wo(binds_x[0], never, binds_x[1]) == seq(binds_x[0], binds_x[1])
    assert no_head(never, binds_x[1]) == binds_x[1]
    assert no_tail(binds_x[0], never, t) == binds_x[0]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(0, 5)), max_size=6),
    st.integers(0, 25),
    st.integers(0, 8),
)
def test_w_range_keeps_exactly_the_items_meeting_the_window(
    spans: list[tuple[int, int]], t: int, width: int
) -> None:
    stream = [item(S, start, start + length, ":a :p :b .") for start, length in spans]
    kept = w_range(stream, t, width)
    assert all(t - width <= e.t_start <= e.t_end <= t for e in kept)
    meeting = [e for e in stream if e.t_start <= t and e.t_end >= t - width]
    assert len(kept) == len(meeting)
