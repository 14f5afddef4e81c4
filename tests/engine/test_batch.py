"""Reading into batches: ``read_batches`` gives exactly the events (and bad records) of
``read_events`` for every format, and of ``read_store_events`` for the event store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.engine.batch import STORE, TripleBatch, read_batches
from rsep.engine.terms import TermDictionary
from rsep.errors import BadRecords, InputError, OnError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, read_events, write_events
from rsep.rdf.formats import nquads as nquads_module
from rsep.spark.eventstore import arrow_schema, read_store_events
from rsep.workloads.bench import prepare_bars
from rsep.workloads.stock import write_vshape_bars

sys.path.insert(0, str(Path(__file__).parents[1] / "rdf" / "formats"))
from format_strategies import event_lists

EX = "http://ex.org/"
GEN = "<http://www.w3.org/ns/prov#generatedAtTime>"
DT = "<http://www.w3.org/2001/XMLSchema#dateTime>"
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def batched(path: Path, size: int = 3, **options: Any) -> tuple[list[Event], list[TripleBatch]]:
    dictionary = TermDictionary()
    stream = options.pop("stream", None)
    batches = list(read_batches(path, stream, dictionary, batch_events=size, **options))
    events = [event for batch in batches for event in batch.events(dictionary)]
    return events, batches


def check_batches(batches: list[TripleBatch], size: int) -> None:
    """Every batch but the last holds ``size`` events; ordinals count events; stream
    indices mean the same stream in every batch; an event's triples are distinct."""
    ordinal = 0
    streams: tuple[str, ...] = ()
    for index, batch in enumerate(batches):
        assert len(batch) == size or (index == len(batches) - 1 and 0 < len(batch) <= size)
        assert batch.event_ordinal.tolist() == list(range(ordinal, ordinal + len(batch)))
        ordinal += len(batch)
        assert batch.streams[: len(streams)] == streams
        streams = batch.streams
        assert batch.event_stream.dtype == np.int32 and batch.s.dtype == np.int32
        assert batch.event_start.dtype == np.int64
        assert np.all(np.diff(batch.triple_event) >= 0)
        rows = set(zip(batch.triple_event.tolist(), batch.s, batch.p, batch.o, strict=True))
        assert len(rows) == len(batch.s)


def same_as_read_events(path: Path, size: int = 3, **options: Any) -> list[Event]:
    expected = list(read_events(path, **options))
    got, batches = batched(path, size, **options)
    assert got == expected
    check_batches(batches, size)
    return expected


@pytest.mark.parametrize(
    ("fmt", "name", "options"),
    [
        (Format.NQUADS, "s.nq", {"with_stream": True}),
        (Format.TRIG, "s.trig", {"with_stream": True}),
        (Format.JSONLD, "s.jsonld", {"with_stream": True}),
    ],
)
@SETTINGS
@given(events=event_lists(streams=3), size=st.integers(1, 4))
def test_formats_with_streams(
    tmp_path: Path, fmt: Format, name: str, options: dict[str, Any], events: list[Event], size: int
) -> None:
    path = tmp_path / name
    if not events:
        return
    write_events(events, path, fmt, **options)
    assert same_as_read_events(path, size) == events


@SETTINGS
@given(events=event_lists(streams=1, intervals=False, ids=False), size=st.integers(1, 4))
def test_timestamped_and_spaseq(tmp_path: Path, events: list[Event], size: int) -> None:
    if not events:
        return
    stream = events[0].stream
    write_events(events, tmp_path / "s.tnt", Format.TIMESTAMPED_NT)
    same_as_read_events(tmp_path / "s.tnt", size, stream=stream)
    same_as_read_events(tmp_path / "s.tnt", size, stream=stream, group_by_time=True)
    counts = {len(event.graph) for event in events}
    if len(counts) == 1:
        write_events(events, tmp_path / "s.txt", Format.SPASEQ)
        same_as_read_events(tmp_path / "s.txt", size, start=5, period=7)


@SETTINGS
@given(events=event_lists(streams=2), size=st.integers(1, 5), block=st.integers(120, 2000))
def test_nquads_by_small_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: list[Event], size: int, block: int
) -> None:
    """Events cut across blocks, completed a block later, as the N-Quads reader does."""
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", block)
    if not events:
        return
    path = tmp_path / "s.nq"
    write_events(events, path, Format.NQUADS, with_stream=True)
    assert same_as_read_events(path, size) == events


def test_nquads_edge_cases_and_bad_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Duplicates, comments, spellings that are not canonical, a graph whose lines lie far
    apart, syntax errors and events without time: same events, same dead letters."""
    t = f'"2024-01-01T00:00:0{{}}Z"^^{DT}'
    lines = [
        "# a comment",
        f"<{EX}g1> {GEN} {t.format(1)} .",
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g1> .",
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g1> .",  # a repeated triple
        "",
        f'<{EX}s> <{EX}p> "v"^^<http://www.w3.org/2001/XMLSchema#string> <{EX}g1> .',
        f"_:g2 {GEN} {t.format(2)} .",
        f'_:b <{EX}p> "a b <{EX}x> ." _:g2 .',
        f"<{EX}g3> {GEN} {t.format(3)} .",
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g3>",  # no final dot
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g4> .",  # no time
        f"<{EX}g5> {GEN} {t.format(0)} .",
        f'<{EX}s> <{EX}p> "1"@EN <{EX}g5> .',  # time going backwards
        f"<{EX}g6> {GEN} {t.format(6)} .",
        f'<{EX}s>  <{EX}p> "x" <{EX}g6> .',
        *(f'<{EX}s> <{EX}q> "{i}" <{EX}g7> .' for i in range(40)),
        f"<{EX}g7> {GEN} {t.format(7)} .",
        f"<{EX}s> <{EX}p> <{EX}o> <{EX}g1> .",  # g1 named again
    ]
    path = tmp_path / "s.nq"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for block in (nquads_module.BLOCK_BYTES, 300, 1000):
        monkeypatch.setattr(nquads_module, "BLOCK_BYTES", block)
        with pytest.raises(InputError) as expected:
            list(read_events(path, stream=EX + "s"))
        with pytest.raises(InputError) as got:
            batched(path, stream=EX + "s")
        assert str(got.value) == str(expected.value)
        letters = []
        results = []
        for reader in ("events", "batches"):
            dead = tmp_path / f"{reader}.jsonl"
            dead.unlink(missing_ok=True)
            bad = BadRecords(OnError.SKIP, dead)
            if reader == "events":
                results.append(list(read_events(path, stream=EX + "s", bad=bad)))
            else:
                events, batches = batched(path, 2, stream=EX + "s", bad=bad)
                check_batches(batches, 2)
                results.append(events)
            bad.close()
            letters.append([json.loads(line) for line in dead.read_text().splitlines()])
        assert results[0] == results[1]
        assert letters[0] == letters[1]
        assert len(letters[0]) >= 3
        assert len(results[0]) >= 3


def test_nquads_folder_of_parts_and_gzip(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    for part in range(3):
        events = [
            Event.point(
                EX + "a",
                1000 * (10 * part + i),
                [Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal(str(i)))],
                NamedNode(f"{EX}g{part}-{i}"),
            )
            for i in range(10)
        ]
        name = f"part-{part:05d}.nq" + (".gz" if part == 1 else "")
        write_events(events, folder / name, Format.NQUADS, with_stream=True)
    (folder / "_SUCCESS").write_text("")
    expected = same_as_read_events(folder, 4)
    assert len(expected) == 30


def store_table(events: list[Event]) -> pa.Table:
    rows: dict[str, list[Any]] = {name: [] for name in arrow_schema().names}
    for index, event in enumerate(events):
        for triple in sorted(event.graph, key=str):
            rows["stream"].append(event.stream)
            rows["day"].append("2024-01-01")
            rows["event_id"].append(f"<{EX}e{index}>")
            rows["t_start"].append(event.t_start)
            rows["t_end"].append(event.t_end)
            rows["s"].append(str(triple.subject))
            rows["p"].append(str(triple.predicate))
            rows["o"].append(str(triple.object))
    return pa.table(rows, schema=arrow_schema())


@SETTINGS
@given(events=event_lists(streams=3, max_size=8), size=st.integers(1, 4), seed=st.integers(0, 99))
def test_event_store(tmp_path: Path, events: list[Event], size: int, seed: int) -> None:
    """A store file with rows out of order (as old stores have them): the events of
    ``read_store_events``; ``stream`` keeps one stream's events."""
    if not events:
        return
    table = store_table(events)
    order = np.random.default_rng(seed).permutation(table.num_rows)
    store = tmp_path / "store"
    store.mkdir(exist_ok=True)
    pq.write_table(table.take(pa.array(order)), store / "part-0.parquet")
    expected = list(read_store_events(store))
    got, batches = batched(store, size)
    assert got == expected
    check_batches(batches, size)
    got_fmt, _ = batched(store / "part-0.parquet", size, fmt=STORE)
    assert got_fmt == expected
    one = events[0].stream
    only, _ = batched(store, size, stream=one)
    assert only == [event for event in expected if event.stream == one]


def test_event_store_from_the_converter(tmp_path: Path) -> None:
    """The Hive-partitioned store ``rsep convert`` writes (stream from the folder name, a
    file per chunk of bars) and the N-Quads written beside it."""
    csv = write_vshape_bars(tmp_path, 3000)
    data = prepare_bars(csv, tmp_path / "data", chunk=700)
    expected = list(read_store_events(data.store))
    assert len(expected) == 3000
    got, batches = batched(data.store, 1024)
    assert got == expected
    check_batches(batches, 1024)
    same_as_read_events(data.nquads, 1024)


def test_generated_stream_nquads_and_store_agree(tmp_path: Path) -> None:
    """A generated workload read from N-Quads and from its store: the same batches."""
    data = prepare_bars(write_vshape_bars(tmp_path, 2000, seed=3), tmp_path / "d")
    dictionary = TermDictionary()
    from_nq = list(read_batches(data.nquads, None, dictionary, batch_events=500))
    from_store = list(read_batches(data.store, None, dictionary, batch_events=500))
    for a, b in zip(from_nq, from_store, strict=True):
        assert set(a.events(dictionary)) == set(b.events(dictionary))
        assert a.event_start.tolist() == sorted(a.event_start.tolist())


def test_spaseq_shared_descriptions(shared_data: Path) -> None:
    """SPAseq's own test streams (``../shared/data/spaseq``), as read_events reads them."""
    descriptions = sorted((shared_data / "spaseq" / "tests").rglob("*.txt"))
    read = 0
    for description in descriptions:
        try:
            expected = list(read_events(description, Format.SPASEQ, bad=BadRecords(OnError.SKIP)))
        except Exception:  # not a stream description
            continue
        got, _ = batched(description, 5, fmt=Format.SPASEQ, bad=BadRecords(OnError.SKIP))
        assert got == expected, description
        read += 1
    assert read > 0
