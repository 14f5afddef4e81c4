"""Routing by key in the per-event replay (rsep.spark.replay.key_parts, route): the partitions
Spark gives each event from its columnar rows against those of the Python router
(rsep.spark.partition.Router, pyoxigraph on the event itself) on the shipped SPAseq folders
and on generated events and queries of every kind of GPM."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple
from test_replay import compiled, partitioned

from rsep.errors import BadRecords, OnError
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events
from rsep.semantics.graph import read_graph
from rsep.spark.partition import Router, Scheme, choose_scheme
from rsep.spark.replay import _ROW_NAMES, ROW_SCHEMA, _append, key_parts, route

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EX = "http://example.org/"
S1, S2, KB = EX + "s1", EX + "s2", EX + "kb"
XSD = "http://www.w3.org/2001/XMLSchema#"


def query(*bodies: tuple[str, str], key: str = "k") -> str:
    """A SPAseq query ``SEQ (A; B; …)`` over streams s1 and s2 with ``PARTITION BY
    (?key)``, a GPM per ``(stream, body)``."""
    names = [chr(ord("A") + i) for i in range(len(bodies))]
    gpms = "\n".join(
        f"  DEFINE GPM {name} ON {stream} {{ {body} }}"
        for name, (stream, body) in zip(names, bodies, strict=True)
    )
    return (
        f"PREFIX ex: <{EX}>\nSELECT * WITHIN 10 SECONDS PARTITION BY (?{key})\n"
        f"FROM STREAM S1 <{S1}>\nFROM STREAM S2 <{S2}>\n"
        f"WHERE SEQ ({'; '.join(names)}) {{\n{gpms}\n}}\n"
    )


# GPMs of every kind ------------------------------------------------------------------------------

CASES = [
    # a basic graph pattern of IRIs and variables: joins
    ("?k ex:price ?p . ?k ex:volume ?v .", "joins"),
    ("?k ex:knows ?x . ?x ex:price ?p .", "joins"),
    ("?x ex:knows ?k .", "joins"),
    ("?k ?pred ex:c1 .", "joins"),
    ("?k ex:knows ?k .", "joins"),
    ("_:b ex:knows ?k . _:b ex:price ?p . [] ex:volume ?x .", "joins"),
    (f"?k ex:price ?p . GRAPH <{KB}> {{ ?k ex:name ?n . }}", "joins"),
    # a FILTER that is never true on the event alone: no key
    ("?k ex:price ?p . FILTER (?p < ?q * 0.998)", "no key"),
    ("?k ex:price ?p . FILTER (!(?q = 1) && ?p > 0)", "no key"),
    ("?k ex:price ?p . FILTER (-?q < 1 || ?q + ?p > 2)", "no key"),
    (f"?k ex:price ?p . FILTER (?p > ?q) GRAPH <{KB}> {{ ?k ex:name ?q . }}", "no key"),
    ("?a ex:knows ?b .", "no key"),
    # value comparisons, literals, paths, OPTIONAL: pyoxigraph
    ("?k ex:price ?p . FILTER (?p > 1)", "python"),
    ("?k ex:price ?p . FILTER (?p < ?q || ?p > 0)", "python"),
    ("?k ex:price ?p . FILTER (BOUND(?q) || ?p > 0)", "python"),
    ("?k ex:price ?p . FILTER (COALESCE(?q, 1) = 1)", "python"),
    ("?k ex:price ?p . ?y ex:volume ?p .", "python"),
    ("?k ex:price 1 .", "python"),
    ('?k ex:name "a" .', "python"),
    ("?k ex:knows/ex:knows ?x .", "python"),
    ("?k ex:price ?p . OPTIONAL { ?k ex:name ?n }", "python"),
    ("{ ?k ex:price ?p . } UNION { ?k ex:volume ?p . }", "python"),
    ("?k ex:price ?p . BIND (?p AS ?q)", "python"),
    (f"?x ex:price ?p . GRAPH <{KB}> {{ ?k ex:name ?p . }}", "python"),
    (f"?k ex:price ?p . GRAPH <{KB}> {{ ?k ex:name ?n . FILTER (?n > 1) }}", "python"),
]


# The partitions of events: Spark's rows against the Python router --------------------------------


def frame_of(spark: SparkSession, events: Sequence[Event]) -> Any:
    """The columnar rows (ROW_SCHEMA) of ``events``, event ``i`` named ``e{i}``."""
    columns: dict[str, list[Any]] = {name: [] for name in _ROW_NAMES}
    for index, event in enumerate(events):
        _append(columns, event, event.stream, f"e{index}")
    return spark.createDataFrame(list(zip(*columns.values(), strict=True)), ROW_SCHEMA)


def compare(
    spark: SparkSession, scheme: Scheme, events: Sequence[Event], graphs: Mapping[str, Any]
) -> dict[str, list[int]]:
    """The partitions Spark gives each event from its rows, checked against
    :class:`Router`'s on the event itself."""
    assert scheme.partitioned
    found: dict[str, list[int]] = defaultdict(list)
    for row in key_parts(frame_of(spark, events), scheme, graphs).collect():
        found[row["ev"]].append(row["part"])
    every = list(range(scheme.partitions))
    router = Router(scheme, graphs)
    expected = {f"e{index}": router.parts(event) for index, event in enumerate(events)}
    disagreements = {
        ev: (sorted(found.get(ev, every)), parts)
        for ev, parts in expected.items()
        if sorted(found.get(ev, every)) != parts
    }
    assert not disagreements
    return expected


FOLDERS = [
    ("strict-contiguity", "queryIF.q", "streamIF.txt", {}, "company"),
    ("skip-till-next", "queryFB.q", "streamFB.txt", {}, "company"),
    ("kleeneplus", "queryKleene.q", "streamKleene.txt", {}, "company"),
    ("disjunction", "queryDisjunction.q", "streamDisjunction.txt", {}, "company"),
    ("conjunction", "queryConjunction.q", "streamConjunction.txt", {}, "company"),
    ("negation", "queryNegation.q", "streamNegation.txt", {}, "company"),
    ("optional", "queryOptional.q", "streamOptional.txt", {}, "company"),
    ("externalknowledgebase", "queryKB.q", "streamKB.txt", {}, "company"),
    (
        "multistreams-powergeneration",
        "queryMultiStream.q",
        "streamMulti.txt",
        {"period": 100},
        "house1",
    ),
]


@pytest.mark.spark
@pytest.mark.parametrize(("folder", "name", "stream", "options", "key"), FOLDERS)
def test_folders_route_as_the_python_router(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    name: str,
    stream: str,
    options: dict[str, int],
    key: str,
) -> None:
    """The shipped SPAseq folders, their queries partitioned by their first step's subject
    over 3 partitions: every event goes to the partitions the Python router gives it, and
    some events have a key (so not every event goes everywhere)."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled(partitioned((base / name).read_text(encoding="utf-8"), key))
    graphs = (
        {"http://www.example.com/kb": read_graph(base / "externalKB.nt")} if "KB" in name else {}
    )
    scheme = choose_scheme(plan, 3)
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    expected = compare(spark, scheme, events, graphs)
    assert any(len(parts) < 3 for parts in expected.values())


@pytest.mark.spark
def test_route_joins_each_event_with_its_partitions(spark: SparkSession) -> None:
    """route: an event's rows once per partition it goes to; an event without a key (no
    price, and the empty event) in every partition."""
    plan = compiled(query(("S1", "?k ex:price ?p . ?k ex:volume ?v .")))
    scheme = choose_scheme(plan, 3)
    c1, price, volume = (NamedNode(EX + n) for n in ("c1", "price", "volume"))
    one = Literal("1", datatype=NamedNode(XSD + "integer"))
    events = [
        Event.point(S1, 0, [Triple(c1, price, one), Triple(c1, volume, one)]),
        Event.point(S1, 1000, [Triple(c1, volume, one)]),
        Event.point(S1, 2000, []),
    ]
    rows = route(frame_of(spark, events), scheme, {}).collect()
    by_event: dict[str, list[tuple[int, str | None]]] = defaultdict(list)
    for row in rows:
        by_event[row["ev"]].append((row["part"], row["p"]))
    compare(spark, scheme, events, {})
    assert len(by_event["e0"]) == 2 and len({part for part, _ in by_event["e0"]}) == 1
    assert sorted(part for part, _ in by_event["e1"]) == [0, 1, 2]
    assert sorted(by_event["e2"]) == [(0, None), (1, None), (2, None)]


# Generated events and queries -------------------------------------------------------------

BODIES = [body for body, _ in CASES if "ex:knows/ex:knows" not in body] + [
    "?k ex:price ?p . ?k ex:volume ?v . FILTER (?v > ?p)",
    f"?x ex:knows ?k . GRAPH <{KB}> {{ ?k ex:name ?n . ?n ex:knows ?m . }}",
]
NODES = [NamedNode(f"{EX}c{i}") for i in range(3)] + [BlankNode("b0")]
PREDICATES = [NamedNode(EX + n) for n in ("price", "volume", "knows", "name")]
OBJECTS = [
    *NODES,
    Literal("1", datatype=NamedNode(XSD + "integer")),
    Literal("2.5", datatype=NamedNode(XSD + "decimal")),
    Literal("a"),
    Literal("a", language="en"),
]
KB_TRIPLES = frozenset(
    {
        Triple(NODES[0], PREDICATES[3], Literal("a")),
        Triple(NODES[1], PREDICATES[3], NODES[2]),
        Triple(NODES[2], PREDICATES[2], NODES[0]),
        Triple(NODES[2], PREDICATES[3], NODES[1]),
    }
)

triples = st.builds(
    Triple, st.sampled_from(NODES), st.sampled_from(PREDICATES), st.sampled_from(OBJECTS)
)
event_lists = st.lists(
    st.tuples(st.sampled_from([S1, S2]), st.lists(triples, max_size=4)), max_size=25
)
bodies = st.lists(
    st.tuples(st.sampled_from(["S1", "S2"]), st.sampled_from(BODIES)), min_size=1, max_size=4
)


@pytest.mark.spark
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=event_lists,
    first=st.sampled_from([b for b, kind in CASES if kind == "joins" and "?k ex:" in b]),
    rest=bodies,
    partitions=st.integers(2, 4),
)
def test_generated_events_route_as_the_python_router(
    spark: SparkSession,
    spec: list[tuple[str, list[Triple]]],
    first: str,
    rest: list[tuple[str, str]],
    partitions: int,
) -> None:
    """Random events over a small vocabulary (IRIs, a blank node, literals) and random
    partitioned queries of up to five GPMs mixing every kind of CASES: 0 disagreements
    between Spark's routing of the rows and the Python router on the events."""
    plan = compiled(query(("S1", first), *rest))
    scheme = choose_scheme(plan, partitions)
    assume(scheme.partitioned)
    events = [Event.point(stream, 1000 * i, graph) for i, (stream, graph) in enumerate(spec)]
    compare(spark, scheme, events, {KB: KB_TRIPLES})
