"""Event time of live queries (rsep.spark.live, module docstring 3) against the oracle:
events at one instant arriving in several micro-batches, the last instant kept open until
the watermark passes it, out-of-order events within the allowed lateness, late events
counted and written to the late-data sink, bad records to the dead-letter sink, and the
watermark of several sources with an idle timeout."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyoxigraph import Literal, NamedNode, Triple
from test_live import KEYED, arrive, tick
from test_replay import NEWS, STOCKS, XSD_INTEGER, canonical, compiled, market, oracle

from rsep.errors import OnError
from rsep.rdf.event import Event
from rsep.spark.live import read_output, start_live
from rsep.spark.sink import TextSink
from rsep.spark.source import FolderSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

EX = "http://example.org/"


def price(company: int, value: int, t: int, k: int) -> Event:
    triples = [
        Triple(
            NamedNode(f"{EX}c{company}"),
            NamedNode(EX + "price"),
            Literal(str(value), datatype=XSD_INTEGER),
        )
    ]
    return Event.point(STOCKS, t, triples, NamedNode(f"{EX}e{k}"))


def alert(t: int, k: int) -> Event:
    triples = [Triple(NamedNode(f"{EX}n{k}"), NamedNode(EX + "alert"), NamedNode(EX + "hi"))]
    return Event.point(NEWS, t, triples, NamedNode(f"{EX}e{k}"))


def five_at_one_instant() -> tuple[list[Event], list[Event]]:
    """Five companies' high prices, an alert, then five lower prices at one instant (3000):
    the market query's five answers, all at 3000."""
    before = [price(c, 4, 1000, c) for c in range(5)] + [alert(2000, 9)]
    same = [price(c, 1, 3000, 10 + c) for c in range(5)]
    return before, same


def test_equal_timestamps_across_files(spark: SparkSession, tmp_path: Path) -> None:
    """Five events at one instant arriving as five files, one a micro-batch (lateness 0):
    each is on time (an event at the watermark's instant is); the instant stays open, so
    no answer at it is written until a tick passes it; then the oracle's five answers."""
    plan = compiled(KEYED)
    before, same = five_at_one_instant()
    arrive(tmp_path / "in", "part-0.nq", before)
    for index, event in enumerate(same, start=1):
        arrive(tmp_path / "in", f"part-{index}.nq", [event])
    args = (spark, plan, tmp_path / "in", tmp_path / "ck", tmp_path / "out")
    first = start_live(*args, partitions=2, max_files_per_trigger=1, available_now=True)
    first.wait()
    assert first.tally.batches == 6 and first.tally.late == 0
    assert first.watermark == 2999
    assert read_output(tmp_path / "out") == []
    arrive(tmp_path / "in", "part-6.nq", [tick(4000)])
    second = start_live(*args, available_now=True)
    second.wait()
    expected = oracle(plan, [*before, *same])
    assert len(expected) == 5
    assert canonical(read_output(tmp_path / "out")) == expected
    assert second.watermark == 3999


def test_out_of_order_within_lateness(spark: SparkSession, tmp_path: Path) -> None:
    """Files of two events each (2 s), each pair of files arriving swapped: events come
    up to 3 s out of order; with lateness 3 s nothing is late and the answers are the
    oracle's over every event."""
    plan = compiled(KEYED, lateness="3000ms")
    events = market(5, 32)
    files = [events[i : i + 2] for i in range(0, len(events), 2)]
    for index in range(0, len(files), 2):
        files[index : index + 2] = reversed(files[index : index + 2])
    for index, chunk in enumerate(files):
        arrive(tmp_path / "in", f"part-{index:03d}.nq", chunk)
    arrive(tmp_path / "in", "part-999.nq", [tick(10**7)])
    live = start_live(
        spark, plan, tmp_path / "in", tmp_path / "ck", tmp_path / "out", partitions=2,
        max_files_per_trigger=1, available_now=True,
    )  # fmt: skip
    live.wait()
    assert live.tally.late == 0
    expected = oracle(plan, events)
    assert expected and canonical(live.results()) == expected


def test_late_events_are_counted_and_written(spark: SparkSession, tmp_path: Path) -> None:
    """Lateness 0: three events the query reads (prices, alerts) arrive after the watermark
    passed their time. They are counted and written to the late-data sink (source, stream,
    times, triples, the watermark missed); the answers are the oracle's over the others
    (none good lost)."""
    plan = compiled(KEYED)
    events = market(4, 60)
    read = [
        e
        for e in events
        if any(str(t.predicate) in (f"<{EX}price>", f"<{EX}alert>") for t in e.graph)
    ]
    late = [read[8], read[20], read[30]]
    on_time = [e for e in events if e not in late]
    for index in range(0, len(on_time), 10):
        arrive(tmp_path / "in", f"part-{index:03d}.nq", on_time[index : index + 10])
    arrive(tmp_path / "in", "part-900.nq", late)
    arrive(tmp_path / "in", "part-999.nq", [tick(10**7)])
    late_file = tmp_path / "late.jsonl"
    live = start_live(
        spark, plan, tmp_path / "in", tmp_path / "ck", tmp_path / "out", partitions=2,
        max_files_per_trigger=1, available_now=True, late=TextSink(late_file),
    )  # fmt: skip
    live.wait()
    assert canonical(live.results()) == oracle(plan, on_time)
    assert live.tally.late == 3
    entries = [json.loads(line) for line in late_file.read_text().splitlines()]
    assert sorted(e["t_end"] for e in entries) == sorted(e.t_end for e in late)
    assert {e["event_id"] for e in entries} == {str(e.id) for e in late}
    assert all(e["watermark"] > e["t_end"] and e["source"] for e in entries)
    triples = {tuple(e["triples"]) for e in entries}
    assert triples == {tuple(f"{t} ." for t in e.graph) for e in late}


def test_bad_records_become_dead_letters(spark: SparkSession, tmp_path: Path) -> None:
    """A file with two bad lines among good ones, ``errors=skip``: each bad line is a dead
    letter naming the file, the line and the reason, counted; every good event counts."""
    plan = compiled(KEYED)
    events = market(6, 40)
    arrive(tmp_path / "in", "part-0.nq", events[:20])
    good = tmp_path / "in" / "part-0.nq"
    lines = good.read_text().splitlines()
    lines.insert(3, "<http://example.org/broken> <http://example.org/p> .")
    lines.insert(8, "not a quad at all")
    good.write_text("\n".join(lines) + "\n")
    arrive(tmp_path / "in", "part-1.nq", [*events[20:], tick(10**7)])
    dead = tmp_path / "dead.jsonl"
    source = FolderSource(tmp_path / "in", on_error=OnError.SKIP)
    live = start_live(
        spark, plan, source, tmp_path / "ck", tmp_path / "out", available_now=True,
        dead_letters=TextSink(dead),
    )  # fmt: skip
    live.wait()
    assert live.tally.bad == 2
    letters = [json.loads(line) for line in dead.read_text().splitlines()]
    assert sorted(letter["position"] for letter in letters) == [f"{good}:4", f"{good}:9"]
    assert all(letter["reason"] and letter["source"] == str(tmp_path / "in") for letter in letters)
    assert canonical(live.results()) == oracle(plan, events)


def test_bad_record_stops_by_default(spark: SparkSession, tmp_path: Path) -> None:
    """``errors=stop`` (the default): the query fails naming the file and line."""
    from rsep.errors import UserError

    arrive(tmp_path / "in", "part-0.nq", market(6, 5))
    bad = tmp_path / "in" / "part-0.nq"
    text = bad.read_text()
    bad.write_text(text + "not a quad\n")
    line = len(text.splitlines()) + 1
    live = start_live(
        spark, compiled(KEYED), tmp_path / "in", tmp_path / "ck", tmp_path / "out",
        available_now=True,
    )  # fmt: skip
    with pytest.raises(UserError, match=rf"part-0\.nq:{line}: syntax error"):
        live.wait()


def test_sources_watermark_is_their_least_and_idle_ones_drop_out(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Two folders, news in one, stocks in the other: the query's watermark is the least of
    theirs, so the stocks running ahead make no news late. When the news stop, their folder
    holds the watermark back until the idle timeout leaves it out."""
    plan = compiled(KEYED)
    events = market(7, 60)
    news = [e for e in events if e.stream == NEWS]
    stocks = [e for e in events if e.stream != NEWS]
    arrive(tmp_path / "stocks", "part-0.nq", [e for e in stocks if e.t_end < 50_000])
    arrive(tmp_path / "news", "part-0.nq", [e for e in news if e.t_end < 20_000])
    arrive(tmp_path / "news", "part-1.nq", [e for e in news if 20_000 <= e.t_end < 40_000])
    sources = [FolderSource(tmp_path / "news"), FolderSource(tmp_path / "stocks")]
    both = start_live(
        spark, plan, sources, tmp_path / "ck", tmp_path / "out", partitions=2,
        available_now=True,
    )  # fmt: skip
    both.wait()
    assert both.tally.late == 0  # the news behind the stocks are on time
    least = max(e.t_end for e in news if e.t_end < 40_000)
    assert both.watermark == least - 1
    kept = [e for e in events if e.t_end < (40_000 if e.stream == NEWS else 50_000)]
    expected = [a for a in oracle(plan, kept) if json.loads(a)["time"] < least]
    assert expected and canonical(both.results()) == expected

    for idle, name in ((None, "never"), (1.0, "idle")):
        folders = [tmp_path / f"{name}-news", tmp_path / f"{name}-stocks"]
        arrive(folders[0], "part-0.nq", [e for e in news if e.t_end < 20_000])
        arrive(folders[1], "part-0.nq", [e for e in stocks if e.t_end < 20_000])
        run = [FolderSource(folder) for folder in folders]
        args = (spark, plan, run, tmp_path / f"ck-{name}", tmp_path / f"out-{name}")
        start_live(*args, idle=idle, available_now=True).wait()
        time.sleep(2.5)  # the news fall silent for longer than the idle timeout
        arrive(folders[1], "part-1.nq", [*[e for e in stocks if e.t_end >= 20_000], tick(10**7)])
        second = start_live(*args, idle=idle, available_now=True)
        second.wait()
        marks = second.watermark
        if idle is None:
            assert marks is not None and marks < 20_000
        else:
            assert marks == 10**7 - 1
            early = [e for e in events if e.stream != NEWS or e.t_end < 20_000]
            assert canonical(second.results()) == oracle(plan, early)
