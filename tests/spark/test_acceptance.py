"""The acceptance examples of the oracle issues on Spark (issue 6): RSEP-QL (Examples 7-11,
Fig. 1's policies, Table 1, Example 4), EP-SPARQL (queries (1)-(4), rule (13), the ETALIS
tests), CQELS-CEP (cases (1)-(17), Examples 6-9, the Vienna query) and SPAseq (Examples 4-11,
Fig. 1, the shipped folders, the oracle's choices, the use cases), each written to N-Quads
part files (``rsep.rdf.formats.write_events``) and run

- as a batch replay (:func:`rsep.spark.replay.run_on_spark`: the engine inside Spark tasks,
  over a folder of two part files),
- live (:func:`rsep.spark.live.start_live`: a Structured Streaming query over a folder
  holding the events, read to its end; the evaluator waits in the state store for the
  watermark's trigger),

and compared with the oracle (``rsep.semantics.evaluate``), whose results the engine tests
pin to the papers' numbers. The examples are the ones the engine tests run
(tests/spark/acceptance.py records them), so an example added there is run here too.

A live query answers up to its watermark: where the oracle answers after the last event
(a window closing, a NO_TAIL that holds on), a clock event of a stream no window reads
moves the watermark to the oracle's last instant; the live answers are compared with the
oracle's up to the final watermark.

Every example takes a batch job and a streaming query (seconds each on a loaded 2-core
machine), so the normal run takes :data:`SAMPLE`, the examples that exercise what Spark
adds beyond tests/cli/test_run_events.py's four; ``-m exhaustive`` (or
``RSEP_EXHAUSTIVE=1``) runs every example (141; a quarter to half an hour on a loaded machine).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from acceptance import (
    ACCEPTANCE,
    LANGUAGES,
    USE_CASES,
    Example,
    clock_event,
    collect,
    results_of,
    write_parts,
)

from rsep.errors import UserError
from rsep.spark.job import StreamInput
from rsep.spark.live import LiveQuery, start_live
from rsep.spark.replay import run_on_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.slow]

LIVE_AT_ONCE = 8
"""Live queries running at the same time (each its own streaming query, one session)."""
LIVE_TIMEOUT = 600.0
"""Seconds a live query may run before it counts as hung (and is stopped)."""

SAMPLE: dict[str, tuple[str, ...]] = {
    "rsepql": (
        # consumption carried across instants: the evaluator in the state store
        "test_figure_1_consumption_across_instants[recent-recent-expected1-triple]",
        "test_csparql_window_and_table_1 #1",  # W^τ(7, 1), last ended; answers after the data
        "test_match_joined_with_a_graph_pattern #1",  # a static graph
        "test_event_pattern_over_two_streams #1",  # two streams, two files' streams
        # the plan's input_unit: a triple that arrives again is new per stream item
        "test_consumption_of_triples_that_arrive_again[occurrence-expected1]",
    ),
    "epsparql": (
        "test_paper_queries[query4.epsparql-ratings.trig-2]",  # CONSTRUCT fed back
        "test_etalis_ep_sparql_07_recursion_through_the_stream",  # 998 triples in one answer
        "test_etalis_ep_sparql_12_and_consumption_policies #2",
        "test_query_2_over_the_closure_of_query_4",  # the plan's rules: another query's
    ),
    "cqelscep": (
        "test_case_2_a_seq_window_joined_with_another_window",  # lateness 6, an interval item
        "test_cases_3_to_8_sequences_of_window_specifications"
        "[:W1, :W2, !:W3-first4-4-intervals4]",  # NO_TAIL over three streams
        "test_interval_items_as_input",  # items longer than the window
        "test_an_arrival_between_delay_and_now_cancels_the_report",  # minutes, a map
    ),
    "spaseq": (
        "test_shipped_folders[1-multistreams-powergeneration-queryMultiStream.q-"
        "streamMulti.txt-options8-2]",  # a SPAseq description read with period 100
        "test_folder_conjunction_repaired",  # two streams at one instant
        "test_paper_examples[pattern8-events8-2]",  # Example 11: WITHIN
        "test_partition_by_keys_contiguity #2",  # PARTITION BY, an event without the key
        "test_uc3_credit_card_big_after_small",  # 250 events of card10k
    ),
}
"""The normal run's examples (module docstring), by the names tests/spark/acceptance.py
gives them."""


@pytest.fixture(scope="module")
def recorded() -> dict[tuple[str, bool], list[Example]]:
    """The examples recorded so far, by language and whether all or the sample."""
    return {}


def examples(
    language: str,
    every: bool,
    recorded: dict[tuple[str, bool], list[Example]],
    request: pytest.FixtureRequest,
) -> list[Example]:
    """``language``'s examples, all of them or :data:`SAMPLE`'s (recorded once); SPAseq's
    folders and use cases need ../shared (the test skips without it)."""
    if (language, every) not in recorded:
        fixtures: dict[str, object] = {}
        if language == "spaseq":
            fixtures["shared_data"] = request.getfixturevalue("shared_data")
            fixtures["spark"] = request.getfixturevalue("spark")
            fixtures["tmp_path"] = request.getfixturevalue("tmp_path_factory").mktemp("cases")
        only = None if every else {name.split("[")[0].split(" #")[0] for name in SAMPLE[language]}
        with pytest.MonkeyPatch.context() as patch:
            found = collect(language, fixtures, patch, only)
        if not every:
            found = [e for e in found if e.source in SAMPLE[language]]
            assert sorted(e.source for e in found) == sorted(SAMPLE[language])
        recorded[(language, every)] = found
    return recorded[(language, every)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_replay_and_live(
    spark: SparkSession,
    recorded: dict[tuple[str, bool], list[Example]],
    request: pytest.FixtureRequest,
    tmp_path: Path,
    language: str,
) -> None:
    """:data:`SAMPLE`'s examples replayed and live: the oracle's results."""
    assert_replay_and_live(spark, examples(language, False, recorded, request), tmp_path)


@pytest.mark.exhaustive
@pytest.mark.parametrize("language", LANGUAGES)
def test_replay_and_live_every_example(
    spark: SparkSession,
    recorded: dict[tuple[str, bool], list[Example]],
    request: pytest.FixtureRequest,
    tmp_path: Path,
    language: str,
) -> None:
    """Every example (each a plan alone: none is left out) replayed and live: the
    oracle's results."""
    found = examples(language, True, recorded, request)
    assert {e.source.split("[")[0].split(" #")[0] for e in found} == {
        *ACCEPTANCE[language][2],
        *(USE_CASES if language == "spaseq" else ()),
    }
    started = time.perf_counter()
    assert_replay_and_live(spark, found, tmp_path)
    print(f"{language}: {len(found)} examples in {time.perf_counter() - started:.0f} s")


def assert_replay_and_live(spark: SparkSession, found: list[Example], tmp_path: Path) -> None:
    """Each example replayed by ``run_on_spark`` while the live queries run (up to
    :data:`LIVE_AT_ONCE` at a time): both give the oracle's results, and each live query's
    final watermark reaches the oracle's last instant."""
    live = LivePool(spark, tmp_path / "live")
    wrong = []
    try:
        for index, example in enumerate(found):
            live.add(example)
            wrong += replayed(example, tmp_path / f"batch-{index}")
            wrong += live.poll()
        wrong += live.drain()
    finally:
        live.stop()
    assert not wrong, "\n".join(wrong)


def replayed(example: Example, folder: Path) -> list[str]:
    """What is wrong with ``example``'s batch replay (nothing: ``[]``)."""
    write_parts(example.events, folder, 2)
    try:
        found = results_of(run_on_spark(example.plan, [StreamInput(folder)], example.graphs))
    except UserError as exc:
        return [f"{example.source} (spark): {exc}"]
    expected = example.expected()
    if found != expected:
        return [f"{example.source} (spark):\n  spark  {found}\n  oracle {expected}"]
    return []


class LivePool:
    """Live queries over the examples' events, :data:`LIVE_AT_ONCE` running at a time, each
    checked against the oracle when it ends."""

    def __init__(self, spark: SparkSession, folder: Path) -> None:
        self.spark = spark
        self.folder = folder
        self.pending: list[Example] = []
        self.running: list[tuple[Example, LiveQuery, int, float]] = []
        self.count = 0

    def add(self, example: Example) -> None:
        """Run ``example`` live when a place is free."""
        self.pending.append(example)
        self.poll()

    def poll(self) -> list[str]:
        """Check the queries that ended, start waiting ones; what is wrong so far."""
        wrong = []
        for item in list(self.running):
            example, live, end, started = item
            if live.query.isActive and time.monotonic() - started < LIVE_TIMEOUT:
                continue
            self.running.remove(item)
            if live.query.isActive:
                live.stop()
                wrong.append(f"{example.source} (live): still running after {LIVE_TIMEOUT} s")
                continue
            wrong += self.check(example, live, end)
        while self.pending and len(self.running) < LIVE_AT_ONCE:
            self.running.append(self.start(self.pending.pop(0)))
        return wrong

    def drain(self) -> list[str]:
        """Wait for every query; what is wrong."""
        wrong = []
        while self.pending or self.running:
            wrong += self.poll()
            time.sleep(0.1)
        return wrong

    def stop(self) -> None:
        """Stop the queries still running (after a failure: none leaks into later tests)."""
        for _, live, _, _ in self.running:
            live.stop()
        self.running.clear()
        self.pending.clear()

    def start(self, example: Example) -> tuple[Example, LiveQuery, int, float]:
        """A live query over ``example``'s events in one part file (with the clock event
        where one is needed), with the oracle's last instant and the time it started."""
        end = example.end()
        lateness = example.plan.parameters.lateness
        events = list(example.events)
        # the watermark passes ``end`` (the instant it reaches stays open) once an event
        # comes at ``end + lateness + 1``
        if end + lateness + 1 > max((e.t_end for e in events), default=end + lateness):
            events.append(clock_event(end + lateness + 1))
        folder = self.folder / f"example-{self.count}"
        self.count += 1
        write_parts(events, folder / "in", 1)
        live = start_live(
            self.spark,
            example.plan,
            folder / "in",
            folder / "checkpoint",
            folder / "out",
            example.graphs,
            available_now=True,
        )
        return example, live, end, time.monotonic()

    @staticmethod
    def check(example: Example, live: LiveQuery, end: int) -> list[str]:
        """What is wrong with an ended live query's answers."""
        try:
            live.wait()
        except UserError as exc:
            return [f"{example.source} (live): {exc}"]
        mark = live.watermark
        if mark is None or mark < end:
            return [f"{example.source} (live): watermark {mark} before the last instant {end}"]
        found = results_of(live.results())
        expected = example.expected(mark)
        if found != expected:
            return [f"{example.source} (live):\n  live   {found}\n  oracle {expected}"]
        return []
