"""Batch replay on Spark (rsep.spark.replay) against the oracle (rsep.semantics.evaluate):
the shipped SPAseq folders, PARTITION BY over several partitions, the prefilter, the event
store, and errors raised in tasks coming back as the user's errors."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.lang import detect_dialect, parse_query
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.formats import read_events, write_events
from rsep.rdf.results import Result
from rsep.semantics import evaluate
from rsep.semantics.graph import read_graph
from rsep.spark.eventstore import COLUMNS, arrow_schema
from rsep.spark.job import StreamInput, buckets, spark_hash_long
from rsep.spark.partition import Atom, choose_scheme, owner, required_part, vocabulary
from rsep.spark.replay import replay, run_on_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

EX = "http://example.org/"
STOCKS, NEWS = EX + "stocks", EX + "news"
XSD_INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def canonical(results: Iterable[Result]) -> list[str]:
    """Results as sorted JSON lines: a multiset, comparable across engines."""
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def compiled(text: str, **overrides: str) -> Plan:
    dialect = detect_dialect(text)
    return compile_query(parse_query(text, dialect), dialect, overrides=overrides)


def oracle(
    plan: Plan, events: Sequence[Event], graphs: Mapping[str, Any] | None = None
) -> list[str]:
    ordered = sorted(events, key=lambda e: e.t_end)
    return canonical(evaluate(plan, StreamSet.from_events(ordered), graphs or {}))


# The shipped SPAseq folders --------------------------------------------------------------

FOLDERS = [
    ("strict-contiguity", "queryIF.q", "streamIF.txt", {}, 1),
    ("skip-till-next", "queryFB.q", "streamFB.txt", {}, 1),
    ("kleeneplus", "queryKleene.q", "streamKleene.txt", {}, 3),
    ("disjunction", "queryDisjunction.q", "streamDisjunction.txt", {}, 1),
    ("negation", "queryNegation.q", "streamNegation.txt", {}, 1),
    ("optional", "queryOptional.q", "streamOptional.txt", {}, 2),
    ("multistreams-powergeneration", "queryMultiStream.q", "streamMulti.txt", {"period": 100}, 2),
]


@pytest.mark.parametrize(("folder", "query", "stream", "options", "count"), FOLDERS)
def test_shipped_folders(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    query: str,
    stream: str,
    options: dict[str, int],
    count: int,
) -> None:
    """Each folder of shared/data/spaseq/tests, read and evaluated by Spark tasks, gives the
    oracle's results (the matches derived by hand in docs/semantics.md) on the per-event
    engine, whether or not the columnar engine takes the plan."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled((base / query).read_text(encoding="utf-8"))
    inputs = [StreamInput(base / stream, options=options)]
    found = replay(spark, plan, inputs).results
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    expected = oracle(plan, events)
    assert canonical(found) == expected
    assert len(expected) == count
    assert [r.time for r in found] == sorted(r.time for r in found)


def partitioned(text: str, key: str) -> str:
    """A shipped query with ``PARTITION BY (?key)`` and every GPM on that key (its
    ``?company2``, ``?company3``… renamed)."""
    text = re.sub(r"\?company\d", "?company", text)
    return re.sub(r"(WITHIN \d+ SECONDS)", rf"\1 PARTITION BY (?{key})", text, count=1)


@pytest.mark.parametrize(
    ("folder", "query", "stream", "options", "key", "count"),
    [
        ("kleeneplus", "queryKleene.q", "streamKleene.txt", {}, "company", 3),
        ("optional", "queryOptional.q", "streamOptional.txt", {}, "company", 2),
        (
            "multistreams-powergeneration",
            "queryMultiStream.q",
            "streamMulti.txt",
            {"period": 100},
            "house1",
            2,
        ),
    ],
)
def test_shipped_folders_partitioned(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    query: str,
    stream: str,
    options: dict[str, int],
    key: str,
    count: int,
) -> None:
    """The folders' queries partitioned by their first step's subject over 3 partitions,
    events routed by pyoxigraph's keys (rsep.spark.partition.Router): the oracle's
    results."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled(partitioned((base / query).read_text(encoding="utf-8"), key))
    inputs = [StreamInput(base / stream, options=options)]
    run = replay(spark, plan, inputs, partitions=3)
    assert run.scheme.partitioned
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    expected = oracle(plan, events)
    assert canonical(run.results) == expected
    assert len(expected) == count


def test_external_knowledge_base_partitioned(spark: SparkSession, shared_data: Path) -> None:
    """externalknowledgebase: PARTITION BY ?company, C joined with the knowledge base graph
    (SPAseq Def. 15), over three partitions; the one match of the oracle."""
    base = shared_data / "spaseq" / "tests" / "externalknowledgebase"
    plan = compiled((base / "queryKB.q").read_text(encoding="utf-8"))
    kb = {"http://www.example.com/kb": read_graph(base / "externalKB.nt")}
    run = replay(spark, plan, [StreamInput(base / "streamKB.txt")], kb, partitions=3)
    assert run.scheme.partitioned and run.scheme.partitions == 3
    expected = oracle(plan, list(read_events(base / "streamKB.txt")), kb)
    assert canonical(run.results) == expected
    assert len(expected) == 1
    with pytest.raises(UserError, match="no content given for graph"):
        replay(spark, plan, [StreamInput(base / "streamKB.txt")], {})


def test_csrbench_window_queries(spark: SparkSession, shared_data: Path) -> None:
    """RSP-QL windows (ContinuousWindowQuery) in one Spark task over the CSR-Bench data
    folder (one event per data_NN.ttl), under two engine profiles: the oracle's results."""
    from rsep.semantics.csrbench import plan_of, read_queries, read_stream

    root = shared_data / "csrbench"
    if not (root / "config").is_dir():
        pytest.skip(f"CSR-Bench not found at {root}")
    streams = read_stream(root / "data")
    queries = read_queries(root)
    for number, profile in ((1, "csparql"), (4, "cqels")):
        plan = plan_of(queries[number], profile)
        expected = canonical(evaluate(plan, streams, {}))
        run = replay(spark, plan, [StreamInput(root / "data")])
        assert not run.scheme.partitioned
        assert canonical(run.results) == expected
        assert expected


# PARTITION BY over several partitions ----------------------------------------------------

PARTITIONED = """
PREFIX ex: <http://example.org/>
SELECT ?p1 ?p2
WITHIN 30 SECONDS
PARTITION BY (?company)
FROM STREAM S1 <http://example.org/stocks>
FROM STREAM S2 <http://example.org/news>
WHERE SEQ (A; N; B)
{
  DEFINE GPM A ON S1 { ?company ex:price ?p1 . }
  DEFINE GPM N ON S2 { ?n ex:alert ?level . }
  DEFINE GPM B ON S1 { ?company ex:price ?p2 . FILTER (?p2 < ?p1) }
}
"""


def market(seed: int, count: int = 60) -> list[Event]:
    """Random stocks and news: prices of five companies (small, so that projections
    without the key collide across partitions), volume-only events and news of two kinds
    (the prefilter drops those without ex:alert), an event every second."""
    rng = random.Random(seed)
    events: list[Event] = []
    for k in range(count):
        t = 1000 * k
        roll = rng.random()
        if roll < 0.6:
            company = NamedNode(f"{EX}c{rng.randrange(5)}")
            price = Literal(str(rng.randrange(1, 5)), datatype=XSD_INTEGER)
            triples = [Triple(company, NamedNode(EX + "price"), price)]
            events.append(Event.point(STOCKS, t, triples, NamedNode(f"{EX}e{k}")))
        elif roll < 0.75:
            company = NamedNode(f"{EX}c{rng.randrange(5)}")
            volume = Literal(str(rng.randrange(100)), datatype=XSD_INTEGER)
            triples = [Triple(company, NamedNode(EX + "volume"), volume)]
            events.append(Event.point(STOCKS, t, triples, NamedNode(f"{EX}e{k}")))
        else:
            kind = "alert" if rng.random() < 0.5 else "rumour"
            triples = [Triple(NamedNode(f"{EX}n{k}"), NamedNode(EX + kind), NamedNode(EX + "hi"))]
            events.append(Event.point(NEWS, t, triples, NamedNode(f"{EX}e{k}")))
    return events


def write_parts(events: Sequence[Event], folder: Path, parts: int) -> Path:
    """The events as N-Quads part files naming their streams, ``parts`` files in time
    order (a folder as Spark writes it: one read task per file)."""
    folder.mkdir(parents=True)
    size = -(-len(events) // parts)
    for index in range(parts):
        chunk = events[index * size : (index + 1) * size]
        write_events(chunk, folder / f"part-{index:05d}.nq", "nquads", with_stream=True)
    (folder / "_SUCCESS").touch()
    return folder


@pytest.mark.parametrize("seed", [1, 2])
def test_partition_by_over_partitions(spark: SparkSession, tmp_path: Path, seed: int) -> None:
    """PARTITION BY ?company over 1 and 3 partitions, news without a key sent to every
    partition, a projection without the key (answers of two partitions kept once): the
    oracle's results either way."""
    plan = compiled(PARTITIONED)
    events = market(seed)
    folder = write_parts(events, tmp_path / "market", 3)
    expected = oracle(plan, events)
    assert expected, "the random market should give matches"
    for partitions in (1, 3):
        run = replay(spark, plan, [StreamInput(folder)], partitions=partitions)
        assert run.scheme.partitioned
        assert canonical(run.results) == expected


def test_scheme_falls_back_to_one_partition() -> None:
    """Without PARTITION BY, with RStream, or when a first step does not bind the keys, one
    partition evaluates everything (a key found only by a match would escape routing)."""
    assert choose_scheme(compiled(PARTITIONED), 4).partitions == 4
    assert not choose_scheme(compiled(PARTITIONED.replace("PARTITION BY (?company)", "")), 4).by
    assert not choose_scheme(compiled(PARTITIONED, r2s="rstream"), 4).by
    news_first = PARTITIONED.replace("SEQ (A; N; B)", "SEQ (N; A; B)")
    assert "first step" in choose_scheme(compiled(news_first), 4).reason


def test_buckets_follow_sparks_hash() -> None:
    """Spark's hash() of 0L, 1L, 2L (read from Spark 4.3) and one bucket per partition."""
    assert [spark_hash_long(v) for v in (0, 1, 2)] == [-1670924195, -1712319331, -797927272]
    for count in (1, 2, 3, 8):
        found = buckets(count)
        assert [spark_hash_long(b) % count for b in found] == list(range(count))


def test_owner_is_stable() -> None:
    """A key's partition is a CRC of its terms: the same in every process."""
    assert owner(("<http://example.org/c1>",), 3) == owner(("<http://example.org/c1>",), 3)
    assert {owner((f"<{EX}c{i}>",), 3) for i in range(20)} == {0, 1, 2}


# The prefilter ---------------------------------------------------------------------------


def test_required_part() -> None:
    """Atoms and always-bound variables come from the top-level triples only."""
    atoms, bound = required_part(
        "{ ?s <http://p> ?o . ?s a <http://C> . OPTIONAL { ?s <http://q> ?x } FILTER (?o > ?y) }"
    )
    kind = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    assert atoms == {Atom("<http://p>"), Atom(kind, "<http://C>")}
    assert bound == {"s", "o"}
    assert required_part("{ ?s ?p ?o }") == (frozenset(), frozenset({"s", "p", "o"}))


def test_prefilter_drops_events_no_gpm_can_take(spark: SparkSession, tmp_path: Path) -> None:
    """Volume-only stock events and rumours are dropped before the engine (rows kept <
    rows read); results are the same with and without the prefilter."""
    plan = compiled(PARTITIONED)
    events = market(3)
    folder = write_parts(events, tmp_path / "market", 2)
    with_filter = replay(spark, plan, [StreamInput(folder)], measure=True)
    without = replay(spark, plan, [StreamInput(folder)], use_prefilter=False, measure=True)
    assert with_filter.rows_read == without.rows_read == len(events)
    vocab = vocabulary(plan)
    assert vocab is not None and not vocab.markers
    kept = sum(len(e.graph) for e in events if vocab.passes(e))
    assert with_filter.rows_kept == kept < len(events)
    assert canonical(with_filter.results) == canonical(without.results) == oracle(plan, events)


def test_prefilter_keeps_instants_for_strict_contiguity(
    spark: SparkSession, tmp_path: Path
) -> None:
    """SEQ (A, B) with strict contiguity: a volume-only event between two prices ends the
    run (Def. 12), so the prefilter leaves an empty event in its place."""
    plan = compiled(PARTITIONED.replace("SEQ (A; N; B)", "SEQ (A, B)"))
    vocab = vocabulary(plan)
    assert vocab is not None and vocab.markers
    events = market(4)
    folder = write_parts(events, tmp_path / "market", 2)
    run = replay(spark, plan, [StreamInput(folder)], measure=True)
    assert canonical(run.results) == oracle(plan, events)
    # every event is there: those that pass with their one triple, the others as one
    # empty row each
    assert run.rows_kept == len(events)


# The event store and other inputs ---------------------------------------------------------


def write_store(events: Sequence[Event], path: Path) -> None:
    """The events in the columnar event store's layout (rsep.spark.eventstore)."""
    rows: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for event in events:
        for triple in event.graph:
            rows["stream"].append(event.stream)
            rows["day"].append("1970-01-01")
            rows["event_id"].append(str(event.id))
            rows["t_start"].append(event.t_start)
            rows["t_end"].append(event.t_end)
            rows["s"].append(str(triple.subject))
            rows["p"].append(str(triple.predicate))
            rows["o"].append(str(triple.object))
    path.mkdir(parents=True)
    pq.write_table(pa.table(rows, schema=arrow_schema()), path / "part-00000.parquet")


def test_event_store_and_stream_file_together(spark: SparkSession, tmp_path: Path) -> None:
    """Stocks from the Parquet event store, news from a TriG file given as ``IRI=FILE``
    (run_on_spark, the entry point of ``rsep run --engine spark``): the oracle's results."""
    plan = compiled(PARTITIONED)
    events = market(5)
    write_store([e for e in events if e.stream == STOCKS], tmp_path / "store")
    write_events([e for e in events if e.stream == NEWS], tmp_path / "news.trig", "trig")
    inputs: list[StreamInput | str | Path] = [
        tmp_path / "store",
        f"{NEWS}={tmp_path / 'news.trig'}",
    ]
    found = list(run_on_spark(plan, inputs, None, None))
    assert canonical(found) == oracle(plan, events)


def test_until_cuts_the_answers(spark: SparkSession, shared_data: Path) -> None:
    """``until``: answers after it are left out, as the oracle's."""
    base = shared_data / "spaseq" / "tests" / "kleeneplus"
    plan = compiled((base / "queryKleene.q").read_text(encoding="utf-8"))
    events = sorted(read_events(base / "streamKleene.txt"), key=lambda e: e.t_end)
    found = replay(spark, plan, [StreamInput(base / "streamKleene.txt")], until=3000).results
    expected = canonical(evaluate(plan, StreamSet.from_events(events), {}, 3000))
    assert canonical(found) == expected
    assert found == []  # every match ends at 4000


# Errors from tasks ------------------------------------------------------------------------


def test_bad_input_names_file_and_line(spark: SparkSession, tmp_path: Path) -> None:
    """A bad record, found by a read task, is the reader's InputError on the driver."""
    bad = tmp_path / "bad.nq"
    bad.write_text(f'<{EX}a> <{EX}price> "1" <{EX}g1> .\nthis is not a quad\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        replay(spark, compiled(PARTITIONED), [StreamInput(bad, STOCKS)])
    assert caught.value.file.endswith("bad.nq") and caught.value.line == 2


def test_engine_limit_is_a_user_error(spark: SparkSession, tmp_path: Path) -> None:
    """The engine's bound on runs (max_runs), hit inside a task, is a UserError naming it."""
    plan = compiled(PARTITIONED, max_runs="3")
    folder = write_parts(market(6), tmp_path / "market", 1)
    with pytest.raises(UserError, match="max_runs"):
        replay(spark, plan, [StreamInput(folder)], partitions=1)


# Time-varying graphs beside an event pattern -----------------------------------------------


@pytest.mark.parametrize(("change", "r2s"), [(2, "istream"), (3, "dstream")])
def test_epsparql_beside_a_time_varying_graph(
    spark: SparkSession, tmp_path: Path, change: int, r2s: str
) -> None:
    """EP-SPARQL's query (3) joined with a pattern over a time-varying graph, replayed on
    Spark (the graph's versions go to the task): the oracle's answers, which depend on the
    snapshot at each evaluation instant (tests/engine/test_engine_epsparql.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from acceptance import write_parts
    from test_engine_epsparql import SECTORS_CHANGING, sectors_changing

    plan, events, graphs = sectors_changing(change, r2s)
    expected = oracle(plan, events, graphs)
    assert len(expected) == len(SECTORS_CHANGING[change, r2s])
    assert len(write_parts(events, tmp_path / "parts", 2)) == 2
    assert canonical(run_on_spark(plan, [tmp_path / "parts"], graphs)) == expected


def test_cqelscep_from_named_graphs(spark: SparkSession, tmp_path: Path) -> None:
    """CQELS-CEP reading ``FROM NAMED`` graphs through ``GRAPH ?g`` beside its background
    graph, replayed on Spark: the oracle's answer (tests/engine/test_engine_cqelscep.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from acceptance import write_parts
    from test_engine_cqelscep import FROM_NAMED, from_named

    plan, events, graphs = from_named()
    assert oracle(plan, events, graphs) == FROM_NAMED
    write_parts(events, tmp_path / "parts", 2)
    assert canonical(run_on_spark(plan, [tmp_path / "parts"], graphs)) == FROM_NAMED
