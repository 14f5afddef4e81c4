"""Windowed plans spread over time ranges on Spark (:func:`rsep.spark.partition.time_ranges`,
:mod:`rsep.spark.replay`): which plans, with what overlap and lead, and why the others run
in one task; split as the tasks split them, the answers are the whole run's on random
RSP-QL, CQELS-CEP and EP-SPARQL cases, and at the ranges' bounds; on Spark they are the
oracle's (RSP-QL Example 10 with the time-varying shops graph; who is near whose shop under
RStream, and under IStream and DStream with window-close reports; RSEP-QL's MATCH beside
the shops graph; CQELS-CEP's SEQ_WO, interval items and nested paths; EP-SPARQL WITHIN d)."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantics"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from acceptance import write_parts
from driving import canonical as texts
from pyoxigraph import Triple
from semantics_data import Q_EX_RSPQL
from semantics_data import expand as ep_expand
from test_continuous import Case, canonical, cases, dense_items, merged, time_windows
from test_driver import (
    EX_10,
    EX_10_NAMES,
    NEARBY,
    PAST,
    PAST_ANSWERS,
    RSEPQL,
    RSEPQL_ANSWERS,
    SHOPS,
    STREAMS,
    rows,
)
from test_engine_cqelscep import BASE, EX, MAP, S1, Generator, compiled, graph, item, oracle
from test_engine_cqelscep import FAMILIES as CQELSCEP_FAMILIES
from test_engine_cqelscep import Case as CepCase
from test_engine_epsparql import SECOND, S, sectors_changing
from test_engine_epsparql import oracle as ep_oracle
from test_engine_epsparql import plan_of as ep_plan_of
from test_engine_epsparql import stream_of as ep_stream_of
from test_engine_epsparql import triple as ep_triple

import rsep
from rsep.algebra.events import CepJoin, CepWindow, GraphPatternRef, SeqJoin, StreamBgp, Within
from rsep.algebra.passes import override
from rsep.algebra.plan import EventJoin, Plan, Select
from rsep.algebra.window import LandmarkWindow, TimeWindow
from rsep.api.inputs import engine_graphs, read_graphs
from rsep.engine import incremental_query
from rsep.engine.continuous import ContinuousWindowQuery
from rsep.engine.query import drive
from rsep.errors import UserError
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.results import Result
from rsep.semantics import evaluate
from rsep.spark.job import StreamInput
from rsep.spark.partition import TimeRanges, time_ranges
from rsep.spark.replay import replay

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

WINDOW_CLOSE = "PRAGMA window.report = window_close\n"
RSTREAM = NEARBY.format(r2s="RSTREAM")


def nearby(r2s: str, pragma: str = "") -> rsep.Query:
    return rsep.Query(pragma + NEARBY.format(r2s=r2s))


def test_windowed_plans_get_time_ranges() -> None:
    """RStream under window close and non-empty content: no lead, the window's width and
    slide (10 + 2) and one instant of overlap; IStream and DStream under window close: a
    lead of one slide before each range, and that much more overlap; COUNT grouped by
    owner (no item, no group)."""
    found = time_ranges(nearby("RSTREAM").plan)
    assert isinstance(found, TimeRanges) and (found.lead, found.overlap) == (0, 13)
    for r2s in ("ISTREAM", "DSTREAM"):
        found = time_ranges(nearby(r2s, WINDOW_CLOSE).plan)
        assert isinstance(found, TimeRanges) and (found.lead, found.overlap) == (2, 15)
    grouped = RSTREAM.replace("?who ?owner", "?owner (COUNT(?who) AS ?n)") + "GROUP BY ?owner"
    assert isinstance(time_ranges(rsep.Query(grouped).plan), TimeRanges)  # no group, no answer
    example_10 = time_ranges(rsep.Query(Q_EX_RSPQL.format(pragma="")).plan)
    assert isinstance(example_10, TimeRanges) and example_10.overlap == 8  # w_1: 5 + 2 + 1


def test_ranges_split_the_span_and_bound_each_task() -> None:
    """Three ranges over 0..29 from 0: [0, 10), [10, 20), [20, ...); the first reaches back
    to the data's start, the last to its end; an item at 5 goes to the first and, within
    the overlap of 13, the second; no range starts after the last item."""
    ranges = TimeRanges(0, 13, "").spanning(0, 29, 3)
    assert (ranges.origin, ranges.length, ranges.count) == (0, 10, 3)
    assert [ranges.bounds(p) for p in range(3)] == [(None, 10), (10, 20), (20, None)]
    assert list(ranges.parts_of(5)) == [0, 1] and list(ranges.parts_of(28)) == [2]
    assert ranges.run(1, None, None) == (10, 19, 10)
    assert ranges.run(2, None, 40) == (20, 40, 20)
    few = TimeRanges(0, 3, "").spanning(0, 1, 3)  # no range starts after the last item
    assert (few.length, few.count) == (1, 2)
    uneven = TimeRanges(0, 3, "").spanning(0, 9, 4)  # length 3: the fourth starts at 9
    assert (uneven.length, uneven.count) == (3, 4)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (NEARBY.format(r2s="ISTREAM"), "report policy window_close+non_empty"),
        ("PRAGMA window.report = content_change\n" + RSTREAM, "content_change"),
        (RSTREAM.replace("[RANGE 10 STEP 2]", "[LANDMARK T0 1]"), "is not a time window"),
        (
            WINDOW_CLOSE
            + RSTREAM.replace("WINDOW :w { ?who :isNearby ?shop } ", "").replace(
                "?who ?owner", "?owner"
            ),
            "may need no window's item",
        ),
        (
            WINDOW_CLOSE + RSTREAM.replace("?who ?owner", "(COUNT(?who) AS ?n)"),
            "may need no window's item",
        ),
        (
            "PRAGMA profile = csparql\n" + WINDOW_CLOSE + RSTREAM,  # C-SPARQL reports empty
            "an empty relation reported",
        ),
        (
            RSEPQL.format(r2s="RSTREAM").replace("MATCH (", "MATCH [CONSUMPTION chronological] ("),
            "RSEP-QL consumption chronological",
        ),
        (
            "PREFIX : <http://example.org/>\nSELECT ?x WHERE { ?x :p ?y } SEQ { ?y :q ?z }",
            "EP-SPARQL without WITHIN",
        ),
        (
            "PREFIX : <http://example.org/>\nSELECT ?x WHERE { ?x :p ?y } OPTIONALSEQ "
            "{ ?y :q ?z } WITHIN 5",
            "OPTIONALSEQ",
        ),
    ],
)
def test_other_plans_run_in_one_task_and_say_why(text: str, reason: str) -> None:
    """IStream under non-empty reports (the evaluation before a range may be far back),
    content change, a landmark window, and under window-close reports without non-empty
    content a pattern that reads no window, COUNT without GROUP BY (one answer, 0, over no
    item) or empty relations reported; RSEP-QL's consumption, EP-SPARQL: one task, and
    why."""
    found = time_ranges(rsep.Query(text).plan)
    assert isinstance(found, str) and reason in found, found


def spark_rows(
    spark: SparkSession, query: rsep.Query, names: tuple[str, ...], partitions: int = 3
) -> tuple[list[tuple[object, ...]], TimeRanges | None]:
    """The query's answers over S_nearby, S_coupon and the time-varying G_shops on Spark
    replay over ``partitions`` ranges, and the ranges it used."""
    inputs = [StreamInput(path, iri) for iri, path in STREAMS.items()]
    graphs = engine_graphs(read_graphs(SHOPS))
    job = replay(spark, query.plan, inputs, graphs, partitions=partitions)
    return rows(job.results, names), job.scheme.ranges


@pytest.mark.spark
def test_example_10_over_three_time_ranges(spark: SparkSession) -> None:
    """Q^ex (Example 10) over three time ranges: the paper's answers."""
    found, ranges = spark_rows(spark, rsep.Query(Q_EX_RSPQL.format(pragma="")), EX_10_NAMES)
    assert ranges is not None and ranges.count == 3
    assert found == EX_10


@pytest.mark.spark
@pytest.mark.parametrize(
    ("r2s", "pragma"),
    [
        ("RSTREAM", ""),
        ("ISTREAM", WINDOW_CLOSE),
        ("DSTREAM", WINDOW_CLOSE),
        ("RSTREAM", WINDOW_CLOSE),
    ],
)
def test_nearby_over_time_ranges(spark: SparkSession, r2s: str, pragma: str) -> None:
    """Who is near whose shop over three and four time ranges (a range boundary inside a
    window's extent): the oracle's answers, some."""
    query = nearby(r2s, pragma)
    names = ("who", "owner")
    expected = rows(query.run(STREAMS, SHOPS, engine="reference"), names)
    assert expected
    for partitions in (3, 4):
        found, ranges = spark_rows(spark, query, names, partitions)
        assert ranges is not None and ranges.count == partitions
        assert found == expected


@pytest.mark.spark
def test_a_window_in_the_past_over_time_ranges(spark: SparkSession) -> None:
    """A window in the past (``[FROM NOW-10 TO NOW-6 STEP 2]``) over three and four time
    ranges: each task reads back over the window's width, slide and delay (13 instants), and
    gives the oracle's answers (tests/api/test_driver.py)."""
    query = rsep.Query(PAST)
    for partitions in (3, 4):
        found, ranges = spark_rows(spark, query, ("who", "owner"), partitions)
        assert ranges is not None and ranges.count == partitions
        assert found == PAST_ANSWERS
    assert "reads its range and the 13 before it" in query.explain()


@pytest.mark.spark
def test_rsepql_match_over_time_ranges(spark: SparkSession) -> None:
    """RSEP-QL's MATCH (two people near one shop, one after the other) joined with the
    time-varying G_shops, without consumption, over three time ranges: the oracle's
    answers."""
    query = rsep.Query(RSEPQL.format(r2s="RSTREAM"))
    found, ranges = spark_rows(spark, query, ("who", "other", "owner"))
    assert ranges is not None and ranges.count == 3
    assert found == RSEPQL_ANSWERS["RSTREAM", None]


def split_run(
    plan: Plan,
    graphs: Mapping[str, Any],
    events: Sequence[Event],
    ranges: TimeRanges,
    start: int | None = None,
) -> list[Result]:
    """The answers as Spark's tasks over ``ranges`` give them: each range's task fed the
    items routed to it (:meth:`TimeRanges.parts_of`), run as :meth:`TimeRanges.run` and
    :meth:`TimeRanges.reads` say, its answers inside its range kept
    (:meth:`TimeRanges.keep`); a range no item reaches has no task."""
    out: list[Result] = []
    for part in range(ranges.count):
        mine = [e for e in events if part in ranges.parts_of(e.t_end, e.t_start)]
        if not mine:
            continue
        query = incremental_query(plan, graphs, start=ranges.run(part, start, None)[0])
        out += ranges.keep(part, drive(query, mine, ranges.reads(part, None)), None)
    return out


def spread_cases(examples: int, fixed: bool) -> list[tuple[bool, bool]]:
    """Over ``examples`` differential cases (the same every run when ``fixed``), whether
    each was spread over time ranges and answered; every spread one compared."""
    seen: list[tuple[bool, bool]] = []

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=fixed,
        database=None,
    )
    @given(cases(time_windows(), max_windows=2, data=dense_items))
    def run(case: Case) -> None:
        ranges = time_ranges(case.plan)
        read = {w.stream for w in case.plan.dataset.windows}
        times = [t for stream, t, _ in case.items if stream in read]
        low = case.start if case.start is not None or not times else min(times)
        if isinstance(ranges, str) or not times or low is None or max(times) <= low:
            seen.append((False, False))
            return
        try:
            query = ContinuousWindowQuery(case.plan, case.graphs, start=case.start)
            whole = [*query.push(merged(case.streams)), *query.finish()]
        except UserError:
            seen.append((True, False))
            return
        for count in (2, 3):
            spread = ranges.spanning(low, max(times), count)
            split = split_run(case.plan, case.graphs, merged(case.streams), spread, case.start)
            assert canonical(split) == canonical(whole), (count, case)
        seen.append((True, bool(whole)))

    run()
    return seen


def test_time_ranges_give_the_whole_run_answers() -> None:
    """On the RSP-QL differential cases (time windows, every report policy, present rule,
    R2S, form, shape and profile drawn; 1,000, the same every run) that
    :func:`time_ranges` spreads, the answers over two and three ranges of the items' span,
    each range's task fed what ``parts_of`` routes to it, are the whole run's (itself the
    oracle's, tests/engine); at least 100 such cases, most of them with answers."""
    seen = spread_cases(1000, fixed=True)
    spread = [answered for taken, answered in seen if taken]
    # this sample: 141 of the 1,000 cases spread (the others draw content-change policies,
    # all_ended windows, OPTIONAL...), 111 of them with answers
    assert len(spread) >= 100, (len(spread), len(seen))
    assert sum(spread) >= 0.5 * len(spread), (sum(spread), len(spread))


@pytest.mark.exhaustive
def test_time_ranges_give_the_whole_run_answers_exhaustive() -> None:
    """The same over 10,000 random cases (``-m exhaustive`` or RSEP_EXHAUSTIVE=1)."""
    seen = spread_cases(10_000, fixed=False)
    spread = [answered for taken, answered in seen if taken]
    assert len(spread) >= 1_000 and sum(spread) >= 0.5 * len(spread), (len(spread), sum(spread))


class Longer(Generator):
    """The differential cases' queries over longer streams: 30-60 items at 0-30 (so that
    ranges are longer than the windows), interval items as the family draws them."""

    def events(self) -> list[Event]:
        found = []
        for _ in range(self.rng.randint(30, 60)):
            drawn = super().events()[0]
            t1 = self.rng.randint(0, 30)
            found.append(Event(drawn.stream, t1, t1 + drawn.t_end - drawn.t_start, drawn.graph))
        return sorted(found, key=lambda e: e.t_end)

    def background(self) -> tuple[GraphPatternRef, frozenset[Triple]]:
        """The drawn path pattern over a map of five draws (more paths hold)."""
        pattern, triples = super().background()
        for _ in range(4):
            triples |= super().background()[1]
        return pattern, triples


def split_share(
    cases: Iterable[tuple[Plan, Mapping[str, Any], list[Event]]],
) -> tuple[int, int]:
    """Over the ``cases`` (plan, graphs, events in time order) that :func:`time_ranges`
    spreads, run over two, three and five ranges of their items' span (reaching the
    longest item's duration): the whole run's answers (itself the oracle's, tests/engine).
    The number spread and the number of those with answers."""
    spread = answered = 0
    for number, (plan, graphs, events) in enumerate(cases):
        ranges = time_ranges(plan)
        times = [e.t_end for e in events]
        if isinstance(ranges, str) or max(times) <= min(times):
            continue
        try:
            whole = list(drive(incremental_query(plan, graphs), events))
        except UserError:
            continue
        reach = max(e.t_end - e.t_start for e in events)
        for count in (2, 3, 5):
            part = ranges.spanning(min(times), max(times), count, reach)
            split = split_run(plan, graphs, events, part)
            assert canonical(split) == canonical(whole), (number, count, plan.r2r)
        spread += 1
        answered += bool(whole)
    return spread, answered


def cqelscep_spread(family: str, seeds: range) -> tuple[int, int]:
    """:func:`split_share` over the CQELS-CEP differential cases of ``family`` (tests/
    engine/test_engine_cqelscep.py: random event clauses, windows, interval items, R2S)."""
    cases = (Longer(family, random.Random(seed)).case() for seed in seeds)
    return split_share((case.plan, case.graphs, case.events) for case in cases)


def boundary_plan(r2s: str) -> Plan:
    """``SELECT ?v`` of the items of :s1 in ``[RANGE 5]`` (``{ ?v :a ?s }``) joined with
    the map's ``{ ?v :type ?k }``, lateness 4."""
    window = CepWindow(
        f"{EX}W1", S1, TimeWindow(5, 1), GraphPatternRef(f"{{ ?v <{EX}a> ?s }}", frozenset("vs"))
    )
    background = GraphPatternRef(f"{{ ?v <{EX}type> ?k }}", frozenset("vk"))
    base = compiled(BASE.format(head="SELECT ?v"))
    return override(replace(base, r2r=CepJoin(window, background)), {"lateness": 4, "r2s": r2s})


BOUNDARY_EVENTS = [
    item(S1, t1, t2, f":{v} :a :m .") for t1, t2, v in [(0, 0, "u"), (9, 13, "w"), (20, 20, "u")]
]


@pytest.mark.parametrize("r2s", ["istream", "dstream", "rstream"])
def test_cqelscep_ranges_at_their_bounds(r2s: str) -> None:
    """CQELS-CEP over ranges whose bounds fall where an item enters and leaves its window
    (RANGE 5: a point item at 0 holds until 5 and leaves at 6, a range starts at 6); an
    interval item over [9, 13] that starts in one range and ends in the next. DStream
    reports the item at 0 leaving at 6 only when the range's task compares with the
    evaluation at 0 (``lead = T + 1``); the interval item is in its first range's windows
    though it ends in the next. The whole run's answers, and the oracle's."""
    plan = boundary_plan(r2s)
    ranges = time_ranges(plan)
    assert isinstance(ranges, TimeRanges) and ranges.lead == 6
    events = BOUNDARY_EVENTS
    graphs = {MAP: graph(":u :type :bus . :w :type :tram .")}
    whole = list(drive(incremental_query(plan, graphs), events))
    assert texts(whole) == oracle(plan, events, graphs)
    spread = ranges.spanning(0, 20, 4, reach=4)
    assert [spread.bounds(p)[0] for p in range(4)] == [None, 6, 12, 18]
    assert canonical(split_run(plan, graphs, events, spread)) == canonical(whole)
    assert len(whole) >= 3


def answered_case(family: str) -> CepCase:
    """The first longer differential case of ``family`` that :func:`time_ranges` spreads
    and whose oracle answers at least five times."""
    for seed in range(100):
        case = Longer(family, random.Random(seed)).case()
        if isinstance(time_ranges(case.plan), str):
            continue
        try:
            expected = oracle(case.plan, case.events, case.graphs)
        except UserError:
            continue
        if len(expected) >= 5:
            return case
    raise AssertionError(f"no {family} case answers")


@pytest.mark.spark
@pytest.mark.parametrize("family", ["windows", "seq_wo", "paths"])
def test_cqelscep_over_time_ranges_on_spark(
    spark: SparkSession, tmp_path: Path, family: str
) -> None:
    """A CQELS-CEP case of each family (interval items; SEQ_WO; a nested path over the
    background) replayed on Spark over three and four time ranges: the oracle's answers."""
    case = answered_case(family)
    expected = oracle(case.plan, case.events, case.graphs)
    write_parts(case.events, tmp_path / "parts", 2)
    for partitions in (3, 4):
        inputs = [StreamInput(tmp_path / "parts")]
        job = replay(spark, case.plan, inputs, case.graphs, partitions=partitions)
        assert job.scheme.ranges is not None and job.scheme.ranges.count == partitions
        assert texts(job.results) == expected


@pytest.mark.spark
def test_cqelscep_interval_item_across_ranges_on_spark(spark: SparkSession, tmp_path: Path) -> None:
    """:func:`test_cqelscep_ranges_at_their_bounds`'s items on Spark over four ranges: the
    item over [9, 13] goes to the range of its start too (Spark's routing), and DStream
    sees the item at 0 leave at 6; the oracle's answers."""
    plan = boundary_plan("dstream")
    graphs = {MAP: graph(":u :type :bus . :w :type :tram .")}
    write_parts(BOUNDARY_EVENTS, tmp_path / "parts", 2)
    job = replay(spark, plan, [StreamInput(tmp_path / "parts")], graphs, partitions=4)
    assert job.scheme.ranges is not None and job.scheme.ranges.length == 6
    assert texts(job.results) == oracle(plan, BOUNDARY_EVENTS, graphs)


def test_cqelscep_plans_that_run_in_one_task_say_why() -> None:
    """CQELS-CEP over an [ALL] window (its content reaches back to the start), as ASK (an
    answer at instants without items), or with COUNT and no GROUP BY: one task, and why."""
    plan = boundary_plan("istream")
    window = next(n for n in plan.r2r.walk() if isinstance(n, CepWindow))
    landmark = replace(plan, r2r=CepJoin(replace(window, window=LandmarkWindow()), window))
    assert "is [ALL]" in str(time_ranges(landmark))
    assert "an ASK" in str(time_ranges(compiled(BASE.format(head="ASK"))))
    count = compiled(BASE.format(head="SELECT (COUNT(*) AS ?n)"))
    assert "an aggregate without GROUP BY" in str(time_ranges(count))
    grouped = compiled(BASE.format(head="SELECT ?v (COUNT(*) AS ?n)") + " GROUP BY ?v")
    assert isinstance(time_ranges(grouped), TimeRanges)
    named = compiled(BASE.format(head="SELECT (COUNT(*) AS ?groupSize)") + " ORDER BY ?groupSize")
    assert "an aggregate without GROUP BY" in str(time_ranges(named))  # a name is no GROUP BY


# EP-SPARQL over time ranges ------------------------------------------------------------------


def epsparql_case(family: str, seed: int) -> tuple[Plan, list[Event]]:
    """A differential case of ``family`` (tests/engine/test_engine_epsparql.py) under IStream
    with its pattern WITHIN 2-5 s, over 30-60 events of its stream spread over 0-20 s."""
    rng = random.Random(seed)
    plan = ep_plan_of(family, seed)
    plan = replace(plan, r2r=Within(plan.r2r, rng.randint(2, 5) * SECOND))
    plan = override(plan, {"r2s": "istream"})
    events = []
    for code in (rng.randrange(6 * 3 * 2 * 2 * 2 * 4 * 5) for _ in range(rng.randint(30, 60))):
        drawn = ep_stream_of([code])[0]
        shift = rng.randint(0, 20) * SECOND
        events.append(replace(drawn, t_start=drawn.t_start + shift, t_end=drawn.t_end + shift))
    return plan, sorted(events, key=lambda e: e.t_end)


def epsparql_spread(family: str, seeds: range) -> tuple[int, int]:
    """:func:`split_share` over :func:`epsparql_case`'s cases of ``family``."""
    cases = (epsparql_case(family, seed) for seed in seeds)
    return split_share((plan, {}, events) for plan, events in cases)


EP_FAMILIES = ["bgp_filter", "subselect", "seq", "equals", "equalsoptional", "join_union"]


SPREADS = {"cqelscep": (cqelscep_spread, 150), "epsparql": (epsparql_spread, 100)}
LANGUAGE_FAMILIES = [
    *(("cqelscep", family) for family in CQELSCEP_FAMILIES),
    *(("epsparql", family) for family in EP_FAMILIES),
]


@pytest.mark.parametrize(("language", "family"), LANGUAGE_FAMILIES)
def test_event_patterns_over_time_ranges_give_the_whole_run_answers(
    language: str, family: str
) -> None:
    """CQELS-CEP's event clauses over RANGE and NOW windows (150 random cases per operator
    family: SEQ, SEQ_WO, NO_HEAD, NO_TAIL, OR, JOIN, interval items, nested paths over a
    background) and EP-SPARQL patterns WITHIN d (100 per family) over time ranges
    (:func:`time_ranges`): the whole run's answers; a third of the cases spread at least
    (not ASK, [ALL] windows, OPTIONALSEQ inside), at least half of them with answers."""
    spread_of, count = SPREADS[language]
    spread, answered = spread_of(family, range(count))
    assert spread >= count // 3, spread
    assert answered >= 0.5 * spread, (answered, spread)


@pytest.mark.exhaustive
@pytest.mark.parametrize(("language", "family"), LANGUAGE_FAMILIES)
def test_event_patterns_over_time_ranges_exhaustive(language: str, family: str) -> None:
    """The same over 10,000 cases per family (``-m exhaustive`` or RSEP_EXHAUSTIVE=1)."""
    spread, answered = SPREADS[language][0](family, range(10_000))
    assert spread >= 3_000 and answered >= 0.5 * spread, (spread, answered)


def test_epsparql_ranges_at_their_bounds() -> None:
    """``SEQ`` of ``?x :p ?y`` then ``?x :q ?z`` WITHIN 2 s, two ranges starting at 0 and
    2 s: the solution over [0, 2 s] (exactly WITHIN's bound) ends in the second range and
    reads an item at its range's start less 2 s; one over [3 s, 3.999 s], not the one over
    [1 s, 3.999 s] (too long); all as the whole run finds them."""
    plan = epsparql_seq(2 * SECOND)
    events = points(
        (0, ":p", 1), (1000, ":p", 2), (1500, ":q", 3), (2000, ":q", 4), (3000, ":p", 6),
        (3999, ":q", 5),
    )  # fmt: skip
    ranges = time_ranges(plan)
    assert isinstance(ranges, TimeRanges) and ranges.overlap == 2 * SECOND + 1
    whole = list(drive(incremental_query(plan), events))
    # (0, 1.5), (1, 1.5), (0, 2), (1, 2), (3, 3.999); not (1, 3.999): 2.999 s
    assert len(whole) == 5
    spread = ranges.spanning(0, 3999, 2)
    assert [spread.bounds(p)[0] for p in range(2)] == [None, 2000]
    assert canonical(split_run(plan, {}, events, spread)) == canonical(whole)


def epsparql_seq(within: int) -> Plan:
    """``?x :p ?y`` then ``?x :q ?z`` WITHIN ``within`` ms, SELECT * under IStream."""

    def bgp(text: str) -> StreamBgp:
        return StreamBgp(GraphPatternRef(ep_expand("{ " + text + " }"), frozenset("xyz")))

    pattern = Within(SeqJoin(bgp("?x :p ?y"), bgp("?x :q ?z")), within)
    return override(replace(ep_plan_of("seq", 0), form=Select(), r2r=pattern), {"r2s": "istream"})


def points(*items: tuple[int, str, int]) -> list[Event]:
    """Point events of ``:a p o`` on the EP-SPARQL cases' stream."""
    return [Event(S, t, t, frozenset({ep_triple(":a", p, o)})) for t, p, o in items]


def test_epsparql_beside_a_graph_runs_in_one_task() -> None:
    """EP-SPARQL WITHIN d joined with a pattern over a graph: where a time-varying graph
    changes, every solution so far is joined again, however old (query (3) beside the
    changing sectors, tests/engine/test_engine_epsparql.py, re-reports a solution ten days
    old): one task, and why."""
    plan, _, _ = sectors_changing(4, "istream")
    assert isinstance(plan.r2r, EventJoin)
    bounded = replace(plan.r2r, event=Within(plan.r2r.event, 14 * 86_400_000))
    within = replace(plan, r2r=bounded)
    assert "a graph pattern beside the event pattern" in str(time_ranges(within))


@pytest.mark.spark
def test_epsparql_from_start_runs_in_one_task(spark: SparkSession, tmp_path: Path) -> None:
    """From a ``start``, EP-SPARQL's first instant reports every solution before it (Def.
    16's union), which may fall in any range (here the solution over [0, 1 s] reported at
    5 s from a start at 1.5 s): replayed from the start over two partitions, it runs in one
    task and gives the oracle's answers."""
    plan = epsparql_seq(2 * SECOND)
    events = points((0, ":p", 1), (1000, ":q", 2), (5000, ":p", 3), (6000, ":q", 4))
    expected = texts(evaluate(plan, StreamSet.from_events(events), {}, start=1500))
    assert len(expected) == 2
    write_parts(events, tmp_path / "parts", 2)
    job = replay(spark, plan, [StreamInput(tmp_path / "parts")], partitions=2, start=1500)
    assert job.scheme.ranges is None and "not spread from --start" in job.scheme.reason
    assert texts(job.results) == expected


@pytest.mark.spark
@pytest.mark.parametrize("family", ["seq", "equalsoptional"])
def test_epsparql_over_time_ranges_on_spark(
    spark: SparkSession, tmp_path: Path, family: str
) -> None:
    """An EP-SPARQL case WITHIN d of each family replayed on Spark over three time ranges
    (the first seed whose oracle answers ten times or more): the oracle's answers."""
    plan, events = next(
        (plan, events)
        for plan, events in (epsparql_case(family, seed) for seed in range(100))
        if not isinstance(time_ranges(plan), str) and len(ep_oracle(plan, events)) >= 10
    )
    write_parts(events, tmp_path / "parts", 2)
    job = replay(spark, plan, [StreamInput(tmp_path / "parts")], partitions=3)
    assert job.scheme.ranges is not None and job.scheme.ranges.count == 3
    assert texts(job.results) == ep_oracle(plan, events)


def test_explain_says_how_event_patterns_are_spread() -> None:
    """``rsep explain`` of CQELS-CEP over a RANGE window and of EP-SPARQL WITHIN d says they
    run over time ranges and what each task reads; without WITHIN, why one task."""
    cqels = rsep.Query(BOUNDARY_SEQ, dialect="cqelscep").explain()
    assert "time ranges: each task reads its range and the 13 instants before it" in cqels
    ep = "PREFIX : <http://example.org/>\nSELECT ?x WHERE { ?x :p ?y } SEQ { ?y :q ?z }"
    assert (
        "the 5001 before it (every solution lasts at most WITHIN 5000"
        in rsep.Query(ep + " WITHIN 5", dialect="epsparql").explain()
    )
    assert "EP-SPARQL without WITHIN" in rsep.Query(ep, dialect="epsparql").explain()


BOUNDARY_SEQ = """PREFIX : <http://example.org/>
SELECT ?v FROM NAMED WINDOW :W1 ON :s1 [RANGE 5ms]
WHERE { WINDOW :W1 { SEQ ({?v :a ?s}, {?v :b ?s}) } }"""
