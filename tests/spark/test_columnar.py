"""The columnar engine in Spark tasks (rsep.spark.columnar, ``rsep run --engine spark`` for
the plans rsep.engine.sequence takes): the shipped SPAseq folders, PARTITION BY with events
without a key, one partition without PARTITION BY, several streams and the V shape on
NASDAQ bars, against the oracle and the in-process engine (``--engine local``)."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from pyoxigraph import Triple
from test_replay import (
    EX,
    NEWS,
    PARTITIONED,
    STOCKS,
    canonical,
    compiled,
    market,
    oracle,
    write_parts,
)

from rsep.algebra.events import EventPattern, PartitionBy, unwrap_bounds
from rsep.algebra.plan import Plan
from rsep.api.driver import run_files
from rsep.engine.batch import merge_batches, read_batches
from rsep.engine.sequence import columnar_reason
from rsep.engine.terms import TermDictionary
from rsep.errors import BadRecords, OnError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events, write_events
from rsep.semantics.graph import read_graph
from rsep.spark.columnar import (
    ReaderTerms,
    _Merge,
    _piece_schema,
    _predicates,
    _Router,
    columnar_replay,
)
from rsep.spark.job import Job, StreamInput
from rsep.spark.partition import choose_scheme
from rsep.spark.replay import run_on_spark

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS / "engine") not in sys.path:
    sys.path.insert(0, str(TESTS / "engine"))

from test_sequence_oracle import FOLDERS  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

REPO = TESTS.parent
VSHAPE = REPO / "examples" / "uc4-stock" / "v-shape.spaseq"
SP500 = "http://example.org/kb/sp500"
KB = "http://www.example.com/kb"


def run(
    spark: SparkSession,
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, frozenset[Triple]] | None = None,
    partitions: int | None = None,
    until: int | None = None,
) -> Job:
    found = columnar_replay(spark, plan, inputs, graphs, until, partitions=partitions)
    assert found is not None, "the columnar path should take this plan and these inputs"
    assert [r.time for r in found.results] == sorted(r.time for r in found.results)
    return found


def local(
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Any] | None = None,
    until: int | None = None,
) -> list[str]:
    """The in-process columnar engine's answers (``rsep run --engine local``)."""
    done = run_files(plan, inputs, graphs or {}, until)
    assert done is not None
    return canonical(done)


# The shipped folders ----------------------------------------------------------------------

TAKEN = [f for f in FOLDERS if f[0] != "traffic"]  # its description names a missing file


@pytest.mark.parametrize(("folder", "query", "stream", "options", "count"), TAKEN)
def test_shipped_folders(
    spark: SparkSession,
    shared_data: Path,
    folder: str,
    query: str,
    stream: str,
    options: dict[str, int],
    count: int,
) -> None:
    """Each folder of shared/data/spaseq/tests whose sequence the columnar engine takes,
    read and evaluated in Spark tasks: the oracle's results (and the count derived by
    hand); the others are left to the per-event path (``columnar_replay`` gives None)."""
    base = shared_data / "spaseq" / "tests" / folder
    plan = compiled((base / query).read_text(encoding="utf-8"))
    inputs = [StreamInput(base / stream, options=options)]
    if columnar_reason(plan) is not None:
        assert columnar_replay(spark, plan, inputs) is None
        pytest.skip(f"not taken by the columnar engine: {columnar_reason(plan)}")
    found = run(spark, plan, inputs)
    events = list(read_events(base / stream, bad=BadRecords(OnError.SKIP), **options))
    expected = oracle(plan, events)
    assert canonical(found.results) == expected
    assert len(expected) == count
    assert found.events == len(events)


def test_external_knowledge_base(spark: SparkSession, shared_data: Path) -> None:
    """PARTITION BY ?company over 3 partitions, C joined with the knowledge base (Def. 15):
    the oracle's one match; ``run_on_spark`` takes this path."""
    base = shared_data / "spaseq" / "tests" / "externalknowledgebase"
    plan = compiled((base / "queryKB.q").read_text(encoding="utf-8"))
    kb = {KB: frozenset(read_graph(base / "externalKB.nt"))}
    inputs = [StreamInput(base / "streamKB.txt")]
    expected = oracle(plan, list(read_events(base / "streamKB.txt")), kb)
    assert len(expected) == 1
    found = run(spark, plan, inputs, kb, partitions=3)
    assert found.scheme.partitioned
    assert canonical(found.results) == expected
    assert canonical(run_on_spark(plan, inputs, kb)) == expected
    with pytest.raises(UserError, match="no content given for graph"):
        columnar_replay(spark, plan, inputs, {})


# PARTITION BY, events without a key, one partition, several streams -----------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_partition_by_with_events_without_a_key(
    spark: SparkSession, tmp_path: Path, seed: int
) -> None:
    """SEQ (A; N; B) partitioned by ?company over stocks and news in three part files:
    a news event has no key and goes to every partition; the projection drops the key, so
    two partitions may give one answer, kept once (IStream across partitions). The
    oracle's and the local engine's answers with 1, 2 and 5 partitions."""
    plan = compiled(PARTITIONED)
    assert columnar_reason(plan) is None
    events = market(seed, 80)
    folder = write_parts(events, tmp_path / "market", 3)
    expected = oracle(plan, events)
    assert expected, "the random market should give matches"
    inputs = [StreamInput(folder)]
    assert local(plan, inputs) == expected
    for partitions in (1, 2, 5):
        found = run(spark, plan, inputs, partitions=partitions)
        assert found.scheme.partitioned and found.scheme.partitions == partitions
        assert canonical(found.results) == expected
        assert found.events == len(events)


STRICT_KEYLESS = """
PREFIX ex: <http://example.org/>
SELECT *
WITHIN 30 SECONDS
PARTITION BY (?company)
FROM STREAM S1 <http://example.org/stocks>
FROM STREAM S2 <http://example.org/news>
WHERE SEQ (A, B)
{
  DEFINE GPM A ON S1 { ?company ex:price ?p1 . }
  DEFINE GPM B ON S1 { ?company ex:price ?p2 . FILTER (?p2 < ?p1) }
}
"""


@pytest.mark.parametrize("seed", [4, 5])
def test_events_without_a_key_break_strict_contiguity(
    spark: SparkSession, tmp_path: Path, seed: int
) -> None:
    """SEQ (A, B) by ?company: news (no key) are in every partition and end every run
    waiting there (SPAseq Def. 12, choice 9), as in the oracle."""
    plan = compiled(STRICT_KEYLESS)
    events = market(seed, 80)
    assert {e.stream for e in events} == {STOCKS, NEWS}
    inputs = [StreamInput(write_parts(events, tmp_path / "all", 2))]
    expected = oracle(plan, events)
    stocks = [e for e in events if e.stream == STOCKS]
    assert expected != oracle(plan, stocks), "the news should change the answers"
    assert canonical(run(spark, plan, inputs, partitions=3).results) == expected
    assert local(plan, inputs) == expected


HEAD_NEGATION = """
PREFIX ex: <http://example.org/>
SELECT ?company ?p1 ?p2
WITHIN 1 HOURS
PARTITION BY (?company)
FROM STREAM S1 <http://example.org/stocks>
FROM STREAM S2 <http://example.org/news>
WHERE SEQ (N!, A; B)
{
  DEFINE GPM N ON %s
  DEFINE GPM A ON S1 { ?company ex:price ?p1 . }
  DEFINE GPM B ON S1 { ?company ex:price ?p2 . FILTER (?p2 < ?p1) }
}
"""


@pytest.mark.parametrize(
    "negated",
    [
        "S1 { ?company ex:volume ?v . FILTER (?v > 80) }",  # keyed: in its partition only
        "S2 { ?n ex:alert ?level . }",  # without a key: in every partition
    ],
)
def test_head_negation_without_within(spark: SparkSession, tmp_path: Path, negated: str) -> None:
    """A negated first step without WITHIN looks back to the stream's start (the window is
    the whole stream, Def. 16). A task starts at its own first event, later than the
    stream's, yet holds every negated event its runs can meet (its keys' and the keyless
    ones): the oracle's answers with 1, 3 and 5 partitions."""

    def unbounded(text: str) -> Plan:  # SPAseq's grammar asks for WITHIN: taken off the plan
        plan = compiled(text)
        assert isinstance(plan.r2r, EventPattern)
        core, within, by = unwrap_bounds(plan.r2r)
        assert within is not None
        return dataclasses.replace(plan, r2r=PartitionBy(core, by))

    plan = unbounded(HEAD_NEGATION % negated)
    assert columnar_reason(plan) is None
    events = market(7, 120)
    expected = oracle(plan, events)
    assert expected, "the random market should give matches"
    plain = (HEAD_NEGATION % negated).replace("SEQ (N!, A; B)", "SEQ (A; B)")
    plain = "\n".join(line for line in plain.splitlines() if "GPM N " not in line)
    assert expected != oracle(unbounded(plain), events), "the negation should drop answers"
    inputs = [StreamInput(write_parts(events, tmp_path / "market", 3))]
    assert local(plan, inputs) == expected
    for partitions in (1, 3, 5):
        assert canonical(run(spark, plan, inputs, partitions=partitions).results) == expected


def test_without_partition_by_one_partition(spark: SparkSession, tmp_path: Path) -> None:
    """Without PARTITION BY the sequence reads the whole streamset in time order: one
    partition, the oracle's answers."""
    plan = compiled(PARTITIONED.replace("PARTITION BY (?company)", ""))
    events = market(6, 60)
    inputs = [StreamInput(write_parts(events, tmp_path / "all", 3))]
    found = run(spark, plan, inputs, partitions=4)
    assert not found.scheme.partitioned and found.scheme.partitions == 1
    expected = oracle(plan, events)
    assert expected and canonical(found.results) == expected
    assert local(plan, inputs) == expected


def test_several_stream_files_and_until(spark: SparkSession, tmp_path: Path) -> None:
    """Stocks and news in two files given as ``IRI=FILE`` (every event of a file on that
    stream), read by two tasks and merged in time order by the sort; ``until`` cuts the
    answers as the local engine does."""
    plan = compiled(PARTITIONED)
    events = market(7, 90)
    files = []
    for iri, name in ((STOCKS, "stocks"), (NEWS, "news")):
        path = tmp_path / f"{name}.nq"
        write_events([e for e in events if e.stream == iri], path, "nquads", with_stream=False)
        files.append(StreamInput(path, iri))
    expected = oracle(plan, events)
    assert expected
    assert canonical(run(spark, plan, files, partitions=2).results) == expected
    until = 50_000
    cut = canonical(run(spark, plan, files, partitions=2, until=until).results)
    assert cut == local(plan, files, until=until)
    assert cut == [line for line in expected if _time(line) <= until]


def _time(line: str) -> int:
    import json

    return int(json.loads(line)["time"])


def test_gpm_by_the_exact_path_in_spark_tasks(spark: SparkSession, tmp_path: Path) -> None:
    """A GPM that is not a basic graph pattern (a BIND) is taken too: the tasks evaluate
    it by pyoxigraph under each run (the exact path), with the oracle's results."""
    plan = compiled(
        PARTITIONED.replace("?n ex:alert ?level . }", "?n ex:alert ?level . BIND (1 AS ?one) }")
    )
    assert columnar_reason(plan) is None
    events = market(8, 40)
    inputs = [StreamInput(write_parts(events, tmp_path / "all", 1))]
    assert canonical(run(spark, plan, inputs).results) == oracle(plan, events)


# The V shape ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("source", ["nquads", "store"])
def test_vshape_on_bars(spark: SparkSession, tmp_path: Path, source: str) -> None:
    """The V shape (examples/uc4-stock) over 3,017 bars (the NASDAQ bars of 2008-02-01, or
    the stand-in bars with planted V shapes without ../shared), from the N-Quads file and
    from the event store (a task per store file): the local engine's answers, partitioned
    by ?company over 3 partitions."""
    from rsep.workloads.bench import prepare

    data = prepare(tmp_path, 3017)
    plan = compiled(VSHAPE.read_text(encoding="utf-8"))
    graphs = {SP500: frozenset(read_graph(data.kb))}
    inputs = [StreamInput(data.nquads if source == "nquads" else data.store)]
    found = run(spark, plan, inputs, graphs, partitions=3)
    assert found.scheme.partitioned and found.events == data.events
    expected = local(plan, inputs, graphs)
    assert expected and canonical(found.results) == expected


def test_vshape_small_against_the_oracle(spark: SparkSession, tmp_path: Path) -> None:
    """The V shape over 300 bars: the oracle's answers."""
    from rsep.workloads.bench import prepare

    data = prepare(tmp_path, 300)
    plan = compiled(VSHAPE.read_text(encoding="utf-8"))
    graphs = {SP500: frozenset(read_graph(data.kb))}
    found = run(spark, plan, [StreamInput(data.nquads)], graphs, partitions=2)
    events = list(read_events(data.nquads))
    assert canonical(found.results) == oracle(plan, events, graphs)


def test_triples_no_pattern_matches_are_not_shipped() -> None:
    """Only triples whose predicate some GPM's pattern names are shipped to the engine's
    tasks (no other can be in a solution, Def. 7); a variable predicate ships them all."""
    assert _predicates(compiled(PARTITIONED)) == frozenset({f"<{EX}price>", f"<{EX}alert>"})
    anything = PARTITIONED.replace("?n ex:alert ?level", "?n ?what ?level")
    assert _predicates(compiled(anything)) is None


def test_filter_rows_no_program_decides(spark: SparkSession, tmp_path: Path) -> None:
    """Decimal prices a double cannot tell apart: the programs cannot decide ``?p2 < ?p1``,
    so those rows are decided exactly inside the tasks (and counted): the oracle's
    results on the columnar path."""
    from pyoxigraph import Literal, NamedNode

    decimal = NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
    prices = ["1.00000000000000003", "1.00000000000000002", "1.00000000000000001"]
    events = [
        Event.point(
            STOCKS,
            1000 * k,
            [Triple(NamedNode(EX + "c"), NamedNode(EX + "price"), Literal(v, datatype=decimal))],
        )
        for k, v in enumerate(prices)
    ]
    plan = compiled(STRICT_KEYLESS)
    inputs = [StreamInput(write_parts(events, tmp_path / "decimals", 1))]
    found = run(spark, plan, inputs)
    expected = oracle(plan, events)
    assert len(expected) == 2
    assert canonical(found.results) == expected
    assert found.answers.inexact_rows


# Pieces of several read tasks ------------------------------------------------------------


def interleaved(seed: int, files: int, tmp_path: Path) -> tuple[list[Event], list[StreamInput]]:
    """The random market with three events an instant, each event written to one of
    ``files`` N-Quads files chosen at random (each file in time order, the files
    interleaving in time and sharing instants)."""
    rng = random.Random(seed)
    events = [
        Event.point(e.stream, 1000 * (k // 3), e.graph, e.id)
        for k, e in enumerate(market(seed, 150))
    ]
    chosen: list[list[Event]] = [[] for _ in range(files)]
    for event in events:
        chosen[rng.randrange(files)].append(event)
    inputs = []
    for index, part in enumerate(chosen):
        path = tmp_path / f"input-{index}.nq"
        write_events(part, path, "nquads", with_stream=True)
        inputs.append(StreamInput(path))
    return events, inputs


def test_pieces_merge_into_time_order(tmp_path: Path) -> None:
    """Pieces of three read tasks (each its own dictionary, batches of 4 events), sorted by
    least time, task and rank as the job's sort puts them, come out of ``_Merge`` in
    batches of about 5 events as every event once, in order of time, task and position:
    the order in which the in-process engine reads the three inputs
    (``merge_batches``), each event with the triples whose predicate a GPM names."""
    events, inputs = interleaved(11, 3, tmp_path)
    plan = compiled(PARTITIONED.replace("PARTITION BY (?company)", ""))
    scheme = choose_scheme(plan, 1)
    rows: list[dict[str, Any]] = []
    for task, item in enumerate(inputs):
        router = _Router(scheme, {}, None)
        for seq, batch in enumerate(
            read_batches(item.path, None, router.dictionary, batch_events=4)
        ):
            pieces = router.pieces(batch, task, seq, task)
            terms = router.terms(task)
            for table in (terms, pieces):
                rows += [] if table is None else table.to_pylist()
    assert len({row["task"] for row in rows if row["terms"] is None}) == 3
    rows.sort(key=lambda row: (row["part"], row["t_min"], row["task"], row["seq"]))
    dictionary = TermDictionary()
    merge = _Merge(ReaderTerms(dictionary), batch_events=5)
    slices = (
        pa.RecordBatch.from_pylist(rows[i : i + 7], _piece_schema()) for i in range(0, len(rows), 7)
    )
    merged = list(merge.batches(slices))
    assert len(merged) > 10, "the merge should pass events on before the last piece"
    assert merge.events == len(events)
    local = TermDictionary()
    used = _predicates(plan)
    assert used is not None
    expected = [
        Event(
            e.stream, e.t_start, e.t_end, frozenset(t for t in e.graph if str(t.predicate) in used)
        )
        for b in merge_batches([read_batches(i.path, None, local) for i in inputs])
        for e in b.events(local)
    ]  # with only the triples some GPM can match
    found = [e for b in merged for e in b.events(dictionary)]
    assert found == expected
    assert [e.t_end for e in found] == sorted(e.t_end for e in events)


@pytest.mark.parametrize("partitions", [1, 3])
def test_interleaving_read_tasks(spark: SparkSession, tmp_path: Path, partitions: int) -> None:
    """Three inputs read by their own tasks in batches of 3 events, interleaving in time
    and sharing instants, their pieces merged in each partition: the in-process engine's
    answers and the oracle's, with and without PARTITION BY."""
    events, inputs = interleaved(12, 3, tmp_path)
    text = PARTITIONED if partitions > 1 else PARTITIONED.replace("PARTITION BY (?company)", "")
    plan = compiled(text)
    expected = oracle(plan, events)
    assert expected, "the random market should give matches"
    assert local(plan, inputs) == expected
    found = columnar_replay(spark, plan, inputs, partitions=partitions, batch_events=3)
    assert found is not None and found.scheme.partitions == partitions
    assert canonical(found.results) == expected
    assert found.events == len(events)


def test_large_n_quads_file_read_by_byte_ranges(spark: SparkSession, tmp_path: Path) -> None:
    """The V shape's N-Quads file (about 9 MB, three reader blocks) cut in three byte
    ranges, each read by its own task: the in-process engine's answers and every event
    read once."""
    from rsep.spark.columnar import read_listing
    from rsep.workloads.bench import prepare

    data = prepare(tmp_path, 8000)
    plan = compiled(VSHAPE.read_text(encoding="utf-8"))
    graphs = {SP500: frozenset(read_graph(data.kb))}
    inputs = [StreamInput(data.nquads)]
    listing = read_listing(inputs, 3)
    assert listing is not None and [task[1] for task in listing] == ["range"] * 3
    found = run(spark, plan, inputs, graphs, partitions=3)
    assert found.events == data.events
    expected = local(plan, inputs, graphs)
    assert expected and canonical(found.results) == expected


def test_bad_lines_skipped_in_read_tasks(spark: SparkSession, tmp_path: Path) -> None:
    """``--on-error skip`` in Spark's read tasks: the V shape's N-Quads file with bad lines
    spread over its three byte ranges (one in an event, between events, at the end), read
    by three tasks: the answers and the events read are the in-process engine's with
    skip, and the dead letters, gathered from the tasks, are its own, in the same order."""
    from rsep.spark.columnar import read_listing
    from rsep.workloads.bench import prepare

    data = prepare(tmp_path, 8000)
    lines = data.nquads.read_text(encoding="utf-8").splitlines(keepends=True)
    for at in (len(lines), 2 * len(lines) // 3, len(lines) // 3 + 1, 7):
        lines.insert(at, f"<http://example.org/bad{at}> not a quad .\n")
    damaged = tmp_path / "damaged.nq"
    damaged.write_text("".join(lines), encoding="utf-8")
    plan = compiled(VSHAPE.read_text(encoding="utf-8"))
    graphs = {SP500: frozenset(read_graph(data.kb))}
    inputs = [StreamInput(damaged.resolve())]
    listing = read_listing(inputs, 3)
    assert listing is not None and [task[1] for task in listing] == ["range"] * 3
    with pytest.raises(Exception, match="bad"):
        run(spark, plan, inputs, graphs, partitions=3)
    on_spark = BadRecords(OnError.SKIP, tmp_path / "spark.jsonl")
    found = columnar_replay(spark, plan, inputs, graphs, partitions=3, bad=on_spark)
    assert found is not None
    in_process = BadRecords(OnError.SKIP, tmp_path / "local.jsonl")
    expected = run_files(plan, inputs, graphs, None, None, in_process)
    assert expected is not None
    answers = canonical(expected)
    assert answers and canonical(found.results) == answers
    assert found.events == expected.events
    on_spark.close()
    in_process.close()
    assert on_spark.count == in_process.count == 4
    letters = (tmp_path / "spark.jsonl").read_text(encoding="utf-8").splitlines()
    assert letters == (tmp_path / "local.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(letter)["file"] for letter in letters] == [str(damaged.resolve())] * 4
