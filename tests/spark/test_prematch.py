"""GPMs matched as joins over the columnar rows (rsep.spark.partition.prematches,
rsep.spark.replay.solution_rows): the solutions Spark SQL gives each event against the
Python matcher's (GroupMatcher, event by event) on the shipped SPAseq folders and on
generated events and queries, and the engine taking them instead of matching those GPMs
(every matcher refusing them) with the oracle's answers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyoxigraph import Triple
from test_partition import (
    BODIES,
    CASES,
    FOLDERS,
    KB,
    KB_TRIPLES,
    S1,
    S2,
    frame_of,
    query,
    triples,
)
from test_replay import canonical, compiled, oracle, partitioned

from rsep.algebra.plan import Plan
from rsep.engine.bgp import GroupMatcher
from rsep.engine.nfa_runtime import PrematchedEvent
from rsep.errors import BadRecords, OnError
from rsep.lang.checks import QuerySemanticError
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events
from rsep.rdf.results import read_results
from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.semantics.graph import read_graph
from rsep.spark.partition import KeyJoin, Scheme, choose_scheme, prematches
from rsep.spark.replay import (
    StreamInput,
    _engine_task,
    events_of,
    merge,
    replay,
    route,
    solution_rows,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

ORDER = ("part", "t_end", "t_start", "stream", "ev", "g")
"""The order of the rows in an evaluation task (rsep.spark.replay.evaluate_rows)."""


def routed(
    spark: SparkSession, plan: Plan, events: Sequence[Event], graphs: Mapping[str, Any], parts: int
) -> tuple[DataFrame, tuple[KeyJoin, ...]]:
    """The rows of ``events`` with the solutions of the plan's prematched GPMs, routed over
    ``parts`` partitions (one: not partitioned) and sorted as an evaluation task reads
    them; and those GPMs."""
    scheme = choose_scheme(plan, parts) if parts > 1 else Scheme(plan, plan, (), 1, None, "")
    joins = prematches(scheme.plan, graphs)
    frame = frame_of(spark, events)
    rows = route(frame, scheme, graphs, solution_rows(frame, joins, graphs))
    return rows.orderBy(*(c for c in ORDER if c in rows.columns)), joins


def solutions_of(
    spark: SparkSession, plan: Plan, events: Sequence[Event], graphs: Mapping[str, Any]
) -> dict[str, PrematchedEvent]:
    """The events as the engine's tasks receive them (one partition), by ``ev``."""
    rows, joins = routed(spark, plan, events, graphs, 1)
    batches = rows.toArrow().to_batches()
    out: dict[str, PrematchedEvent] = {}
    for _, ev, event in events_of(batches, joins):
        assert isinstance(event, PrematchedEvent)
        out[ev] = event
    return out


def compare(
    spark: SparkSession, plan: Plan, events: Sequence[Event], graphs: Mapping[str, Any]
) -> int:
    """The solutions of each prematched GPM on each event against GroupMatcher's (with the
    knowledge base part joined, as the engine evaluates it): 0 disagreements. Returns how
    many (event, GPM) pairs had solutions."""
    joins = prematches(plan, graphs)
    found = solutions_of(spark, plan, events, graphs)
    gpms = {gpm.name: gpm for gpm in plan.r2r.walk() if hasattr(gpm, "graph_kb")}
    matcher = GroupMatcher(GraphMatcher())
    disagreements = []
    solved = 0
    for index, event in enumerate(events):
        got = found[f"e{index}"]
        assert (got.stream, got.t_end, got.graph) == (event.stream, event.t_end, event.graph)
        for join in joins:
            gpm = gpms[join.gpm]
            expected: set[Mu] = set()
            if gpm.stream == event.stream:
                expected = set(matcher.match(gpm.pattern, event.graph))
                if gpm.graph_kb is not None:
                    kb = graphs[gpm.graph_kb.graph]
                    expected = {
                        nu
                        for partial in expected
                        for nu in matcher.match(gpm.graph_kb.pattern, kb, partial)
                    }
            if got.solutions[join.gpm] != expected:
                disagreements.append((index, join.gpm, got.solutions[join.gpm], expected))
            solved += bool(expected)
    assert not disagreements
    return solved


# Solutions against the Python matcher -------------------------------------------------------


@pytest.mark.parametrize(("folder", "name", "stream", "options", "key"), FOLDERS)
def test_folders_solutions_as_the_python_matcher(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    name: str,
    stream: str,
    options: dict[str, int],
    key: str,
) -> None:
    """The shipped SPAseq folders: the solutions joins give each event are GroupMatcher's,
    for every GPM they evaluate (and some events have some)."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled(partitioned((base / name).read_text(encoding="utf-8"), key))
    graphs = (
        {"http://www.example.com/kb": read_graph(base / "externalKB.nt")} if "KB" in name else {}
    )
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    assert prematches(plan, graphs)
    assert compare(spark, plan, events, graphs)


NO_VARIABLE = ["[] ex:knows ex:c1 .", "ex:c0 ex:price [] ."]
"""GPMs whose solutions bind no variable: the empty mapping, once, when the event matches."""


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=st.lists(
        st.tuples(st.sampled_from([S1, S2]), st.lists(triples, max_size=5)),
        min_size=1,
        max_size=25,
    ),
    bodies=st.lists(
        st.tuples(
            st.sampled_from(["S1", "S2"]),
            st.sampled_from([b for b, kind in CASES if kind == "joins"] + BODIES + NO_VARIABLE),
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_generated_events_solutions_as_the_python_matcher(
    spark: SparkSession, spec: list[tuple[str, list[Triple]]], bodies: list[tuple[str, str]]
) -> None:
    """Random events over a small vocabulary (IRIs, a blank node, literals) and random
    queries of up to five GPMs of every kind (joins over the event and the knowledge base,
    blank nodes, variables as predicates, FILTERs, literals, OPTIONAL...): for every GPM
    joins evaluate, 0 disagreements with GroupMatcher."""
    try:
        plan = compiled(query(*bodies))
    except (QuerySemanticError, ValueError):  # a blank node label in two GPMs, no key
        assume(False)
    assume(prematches(plan, {KB: KB_TRIPLES}))
    events = [Event.point(stream, 1000 * i, graph) for i, (stream, graph) in enumerate(spec)]
    compare(spark, plan, events, {KB: KB_TRIPLES})


def test_prematches_are_the_exact_joins() -> None:
    """Which GPMs are prematched: the basic graph patterns without FILTER that key_join
    evaluates exactly, also one that does not bind the key (not those with no key alone
    because a FILTER names a variable a run binds); V-shape: only its first step."""
    from rsep.workloads.baselines import VShape, vshape_query

    for body, kind in CASES:
        plan = compiled(query(("S1", "?k ex:price ?p0 ."), ("S1", body)))
        names = [join.gpm for join in prematches(plan, {KB: frozenset()})]
        exact = kind == "joins" or body == "?a ex:knows ?b ."  # no key, but joins
        assert names == (["A", "B"] if exact else ["A"]), body
    vshape = compiled(vshape_query(VShape(steps=4)))
    (join,) = prematches(vshape, {"http://example.org/kb/sp500": frozenset()})
    assert (join.gpm, join.variables) == ("A", ("company", "p1", "vol1"))


# The engine takes them ---------------------------------------------------------------------


@contextmanager
def refused(texts: set[str]) -> Iterator[None]:
    """The engine's matchers (GroupMatcher, and pyoxigraph behind it) raise for the
    patterns ``texts``."""
    group, graph = GroupMatcher.match, GraphMatcher.match

    def guard(original: Any) -> Any:
        def run(self: Any, pattern: Any, *args: Any, **kwargs: Any) -> Any:
            text = pattern if isinstance(pattern, str) else getattr(pattern, "text", None)
            if text in texts:
                raise AssertionError(f"matched in Python: {text}")
            return original(self, pattern, *args, **kwargs)

        return run

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GroupMatcher, "match", guard(group))
        patch.setattr(GraphMatcher, "match", guard(graph))
        yield


@pytest.mark.parametrize(
    ("folder", "name", "stream", "options", "key"),
    [case for case in FOLDERS if case[0] in ("kleeneplus", "strict-contiguity", "negation")],
)
def test_engine_takes_the_solutions(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    name: str,
    stream: str,
    options: dict[str, int],
    key: str,
) -> None:
    """A folder's query partitioned over 3 partitions, its rows routed with the solutions
    by Spark and each partition run through the evaluation task's own function here, with
    every matcher refusing the prematched GPMs: the oracle's answers; without the
    solutions the same run reaches the matcher (the guard works)."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled(partitioned((base / name).read_text(encoding="utf-8"), key))
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    scheme = choose_scheme(plan, 3)
    rows, joins = routed(spark, plan, events, {}, 3)
    batches = rows.toArrow().to_batches()
    gpms = {g.name: g for g in scheme.plan.r2r.walk() if hasattr(g, "graph_kb")}
    texts = {gpms[join.gpm].pattern.text for join in joins}
    assert texts
    expected = oracle(plan, events)
    with refused(texts):
        answers = [
            (r["time"], r["part"], r["seq"], r["key"], r["line"])
            for batch in _engine_task(scheme, {}, None, joins)(iter(batches))
            for r in batch.to_pylist()
        ]
        found = list(read_results(merge(answers, scheme)))
        assert canonical(found) == expected
        with pytest.raises(AssertionError, match="matched in Python"):
            list(_engine_task(scheme, {}, None, ())(iter(batches)))


def test_replay_with_and_without_prematching(spark: SparkSession, shared_data: Path) -> None:
    """externalknowledgebase over 3 partitions (C joined with the knowledge base): the
    oracle's answer with the GPMs prematched and with every GPM matched by the engine."""
    base = shared_data / "spaseq" / "tests" / "externalknowledgebase"
    plan = compiled((base / "queryKB.q").read_text(encoding="utf-8"))
    kb = {"http://www.example.com/kb": read_graph(base / "externalKB.nt")}
    expected = oracle(plan, list(read_events(base / "streamKB.txt")), kb)
    assert len(expected) == 1
    for prematch in (True, False):
        inputs = [StreamInput(base / "streamKB.txt")]
        run = replay(spark, plan, inputs, kb, partitions=3, prematch=prematch)
        assert canonical(run.results) == expected, json.dumps(prematch)
