"""Queries under ``entailment``: the oracle (``engine="reference"``) and the engine
(``engine="local"``) give the same answers, which entailment changes: an EP-SPARQL sequence
that joins on a class membership only the ontology gives (EP-SPARQL Sect. 5, Test 2), and an
RSP-QL window query over a background graph, per ``entailment.scope``."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Triple

import rsep
from rsep.engine.query import drive, incremental_query
from rsep.rdf.event import Event, StreamSet
from rsep.reasoning.reasoner import RDF, RDFS

EX = "http://e.org/"


def t(s: str, p: str, o: str) -> Triple:
    return Triple(*(NamedNode(x if ":" in x else EX + x) for x in (s, p, o)))


ONTOLOGY = {
    t("Bus", RDFS + "subClassOf", "Vehicle"),
    t("Vehicle", RDFS + "subClassOf", "Thing"),
    t("drives", RDFS + "range", "Vehicle"),
    t("fleet1", "has", "b1"),
    t("has", RDFS + "range", "Vehicle"),
}
GRAPHS = {EX + "onto": ONTOLOGY}


def answers(query: rsep.Query, events: list[Event], engine: str) -> list[tuple[object, ...]]:
    found = query.run(events, graphs=GRAPHS, engine=engine)
    return sorted(
        (r.time, tuple(sorted((k, v.value) for k, v in r.bindings.items())), r.interval)
        for r in found
    )


SEQ = "PREFIX : <http://e.org/>\nSELECT ?x ?y WHERE { ?x a :Vehicle } SEQ { ?x :at ?y }"
SEQ_EVENTS = [
    Event.point(EX + "s", 1, [t("b1", RDF + "type", "Bus")]),
    Event.point(EX + "s", 2, [t("b1", "at", "stop1")]),
    Event.point(EX + "s", 3, [t("p", "drives", "c1")]),
    Event.point(EX + "s", 4, [t("c1", "at", "stop2")]),
    Event.point(EX + "s", 5, [t("x", "at", "stop3")]),
]


@pytest.mark.parametrize("entailment", ["none", "rdfs", "owl_rl"])
def test_epsparql_sequence_joins_on_an_entailed_class(entailment: str) -> None:
    query = rsep.Query(SEQ, "epsparql", entailment=entailment)
    oracle = answers(query, SEQ_EVENTS, "reference")
    assert answers(query, SEQ_EVENTS, "local") == oracle
    found = {dict(bindings)["x"] for _, bindings, _ in oracle}
    if entailment == "none":
        assert found == set()
    else:  # b1 by rdfs9 (Bus ⊑ Vehicle), c1 by rdfs3 (range of :drives)
        assert found == {EX + "b1", EX + "c1"}


WINDOW = """PREFIX : <http://e.org/>
SELECT ?x ?f
FROM :onto
FROM NAMED WINDOW :w ON :s [RANGE PT10S STEP PT10S]
WHERE { WINDOW :w { ?x a :Vehicle } OPTIONAL { ?f :has ?x . ?x a :Thing } }"""
WINDOW_EVENTS = [
    Event.point(EX + "s", 1000, [t("b1", RDF + "type", "Bus")]),
    Event.point(EX + "s", 3000, [t("p", "drives", "c1")]),
    Event.point(EX + "s", 12000, [t("x", "at", "stop3")]),
]


@pytest.mark.parametrize(
    ("entailment", "scope", "expected"),
    [
        ("none", "both", set()),
        ("rdfs", "background", set()),  # the window's items are not entailed
        ("rdfs", "stream", {("b1", None), ("c1", None)}),
        ("rdfs", "both", {("b1", "fleet1"), ("c1", None)}),  # b1 a :Thing in the background
        ("owl_rl", "both", {("b1", "fleet1"), ("c1", None)}),
    ],
)
def test_rspql_window_under_entailment_scope(
    entailment: str, scope: str, expected: set[tuple[str, str | None]]
) -> None:
    query = rsep.Query(WINDOW, "rspql", entailment=entailment, entailment_scope=scope)
    oracle = answers(query, WINDOW_EVENTS, "reference")
    assert answers(query, WINDOW_EVENTS, "local") == oracle
    rows = [dict(bindings) for _, bindings, _ in oracle]
    got = {
        (row["x"].removeprefix(EX), row["f"].removeprefix(EX) if "f" in row else None)
        for row in rows
    }
    assert got == expected


def test_pragma_sets_entailment() -> None:
    query = rsep.Query("PRAGMA entailment = rdfs\n" + SEQ, "epsparql")
    assert str(query.parameters["entailment"].value) == "rdfs"
    assert "entailment         rdfs" in query.explain()
    assert answers(query, SEQ_EVENTS, "reference") == answers(
        rsep.Query(SEQ, "epsparql", entailment="rdfs"), SEQ_EVENTS, "reference"
    )


MATCH = """PREFIX : <http://e.org/>
SELECT ?x ?y
FROM NAMED WINDOW :w1 ON :s [RANGE 10 STEP 10]
WHERE { MATCH ( EVENT :w1 { ?x a :Vehicle } SEQ EVENT :w1 { ?x :at ?y } ) }"""


@pytest.mark.parametrize("entailment", ["none", "rdfs"])
def test_rsepql_match_on_entailed_items(entailment: str) -> None:
    """RSEP-QL's engine (a window engine) reads entailed items as the oracle does."""
    events = [*SEQ_EVENTS[:4], Event.point(EX + "s", 25, [t("z", "at", "q")])]
    query = rsep.Query(MATCH, "rsepql", entailment=entailment)
    oracle = answers(query, events, "reference")
    assert answers(query, events, "local") == oracle
    found = {dict(bindings)["x"] for _, bindings, _ in oracle}
    assert found == (set() if entailment == "none" else {EX + "b1", EX + "c1"})


SPASEQ = """PREFIX : <http://e.org/>
SELECT ?x ?y
WITHIN 30 MINUTES
FROM STREAM S1 <http://e.org/s>
WHERE { SEQ (A; B) DEFINE GPM A ON S1 { ?x a :Vehicle } DEFINE GPM B ON S1 { ?x :at ?y } }"""


@pytest.mark.parametrize("entailment", ["rdfs", "owl_rl"])
def test_spaseq_oracle_and_the_columnar_engine_under_entailment(entailment: str) -> None:
    """SPAseq's oracle reads entailed items; the columnar engine entails its batches
    (:func:`entail_batch`) and gives the same answers, which only the ontology gives; its
    state, closure included, pickles mid-stream and goes on with the same answers."""
    events = [replace(e, t_start=e.t_start * 1000, t_end=e.t_end * 1000) for e in SEQ_EVENTS]
    query = rsep.Query(SPASEQ, "spaseq", entailment=entailment)
    oracle = answers(query, events, "reference")
    assert {dict(bindings)["x"] for _, bindings, _ in oracle} == {EX + "b1", EX + "c1"}
    assert answers(query, events, "local") == oracle
    assert answers(rsep.Query(SPASEQ, "spaseq"), events, "local") == []
    engine = incremental_query(query.plan, GRAPHS)
    first = list(drive(engine, events[:2], finish=False))
    rest = list(drive(pickle.loads(pickle.dumps(engine)), events[2:]))
    assert sorted(map(str, first + rest)) == sorted(
        map(str, drive(incremental_query(query.plan, GRAPHS), events))
    )


def test_epsparql_engine_with_entailment_resumes_from_a_checkpoint() -> None:
    """The engine's state, closure tables and their dictionary included, pickles mid-stream
    (Spark's live state) and goes on with the same answers."""
    plan = rsep.Query(SEQ, "epsparql", entailment="owl_rl").plan
    whole = list(drive(incremental_query(plan, GRAPHS), SEQ_EVENTS))
    engine = incremental_query(plan, GRAPHS)
    first = list(drive(engine, SEQ_EVENTS[:2], finish=False))
    resumed = pickle.loads(pickle.dumps(engine))
    rest = list(drive(resumed, SEQ_EVENTS[2:]))
    assert first + rest == whole and len(whole) == 2


def test_time_varying_background_materialised_per_snapshot() -> None:
    """Each snapshot of a time-varying graph is materialised on its own (RSP-QL Def. 10):
    until 10 s the graph says :b1 is :fleet1's (so a :Vehicle, by the range of :has),
    after it says nothing; oracle and window engine agree."""
    from rsep.engine.continuous import ContinuousWindowQuery
    from rsep.semantics import Snapshot, TimeVaryingGraph, evaluate

    schema = frozenset({t("has", RDFS + "range", "Vehicle")})
    graph = TimeVaryingGraph(
        (
            Snapshot(schema | {t("fleet1", "has", "b1")}, None, 10_000),
            Snapshot(schema, 10_001, None),
        )
    )
    text = """PREFIX : <http://e.org/>
SELECT ?x
FROM :onto
FROM NAMED WINDOW :w ON :s [RANGE PT10S STEP PT10S]
WHERE { WINDOW :w { ?x :at ?y } ?x a :Vehicle }"""
    events = [
        Event.point(EX + "s", 1_000, [t("b1", "at", "stop1")]),
        Event.point(EX + "s", 11_000, [t("b1", "at", "stop2")]),
        Event.point(EX + "s", 25_000, [t("z", "at", "q")]),
    ]
    for scope, expected in (("stream", []), ("background", [10_000])):
        plan = rsep.Query(text, "rspql", entailment="rdfs", entailment_scope=scope).plan
        graphs = {EX + "onto": graph}
        oracle = list(evaluate(plan, StreamSet.from_events(events), graphs))
        engine = list(drive(ContinuousWindowQuery(plan, graphs), events))
        assert [(r.time, str(r)) for r in engine] == [(r.time, str(r)) for r in oracle]
        assert [r.time for r in oracle] == expected, scope


CQELSCEP = (
    "PREFIX : <http://e.org/>\nSELECT ?x ?y FROM :onto "
    "FROM NAMED WINDOW :W ON :s [RANGE 10ms] "
    "WHERE { WINDOW :W { SEQ ({?x a :Vehicle}, {?x :at ?y}) } }"
)


@pytest.mark.parametrize("entailment", ["rdfs", "owl_rl"])
def test_cqelscep_sequence_on_an_entailed_class(entailment: str) -> None:
    """A CQELS-CEP sequence of triple patterns in a window whose first element only the
    ontology gives (:Bus below :Vehicle, the range of :drives): the engine entails its
    items as the oracle does, with the same answers."""
    query = rsep.Query(CQELSCEP, "cqelscep", entailment=entailment)
    oracle = answers(query, SEQ_EVENTS, "reference")
    assert {dict(bindings)["x"] for _, bindings, _ in oracle} == {EX + "b1", EX + "c1"}
    assert answers(query, SEQ_EVENTS, "local") == oracle
    assert answers(rsep.Query(CQELSCEP, "cqelscep"), SEQ_EVENTS, "local") == []


@pytest.mark.spark
def test_spaseq_on_spark_partitioned_under_entailment(spark: object, tmp_path: Path) -> None:
    """On Spark, partitioned by ``?x``, an event that holds a GPM's atom only through
    entailment (``:p :drives :c1`` gives ``:c1 a :Vehicle``) passes the prefilter, and each
    task's engine entails its batches: the answers are the oracle's."""
    stream = tmp_path / "s.tnt"
    stream.write_text(
        "".join(f"{triple} {e.t_end * 1000} .\n" for e in SEQ_EVENTS for triple in e.graph),
        encoding="utf-8",
    )
    onto = tmp_path / "onto.nt"
    onto.write_text("".join(f"{x} .\n" for x in ONTOLOGY), encoding="utf-8")
    text = SPASEQ.replace("WITHIN 30 MINUTES", "WITHIN 30 MINUTES\nPARTITION BY ?x")
    query = rsep.Query(text, "spaseq", entailment="rdfs")
    streams = {EX + "s": stream}
    graphs = {EX + "onto": onto}
    oracle = sorted(map(str, query.run(streams, graphs, engine="reference")))
    assert len(oracle) == 2
    assert sorted(map(str, query.run(streams, graphs, engine="spark"))) == oracle
