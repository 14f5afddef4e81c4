"""Reading into batches: ``read_batches`` gives exactly the events (and bad records) of
``read_events`` for every format, and of ``read_store_events`` for the event store."""

from __future__ import annotations

import gzip
import json
import sys
from datetime import UTC
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.engine.batch import (
    STORE,
    TripleBatch,
    batches_of,
    merge_batches,
    read_batches,
    split_ranges,
)
from rsep.engine.terms import TermDictionary
from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, read_events, write_events
from rsep.rdf.formats import nquads as nquads_module
from rsep.rdf.time import TimeUnit, zone
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


@SETTINGS
@given(
    events=event_lists(streams=3, max_size=10),
    times=st.lists(st.integers(0, 2), min_size=10, max_size=10),
    names=st.lists(st.sampled_from(["iri", "iri", "null", "empty"]), min_size=10, max_size=10),
    group=st.integers(1, 9),
    seed=st.integers(0, 99),
)
def test_event_store_in_time_order(
    tmp_path: Path,
    events: list[Event],
    times: list[int],
    names: list[str],
    group: int,
    seed: int,
) -> None:
    """A store file in time order whose events of one time come in any order, their rows
    even interleaved (``rsep convert`` writes them in input order), in row groups of a few
    rows (a dictionary each), with null and empty event ids: the events of
    ``read_store_events``, which sorts by time and event id."""
    if not events:
        return
    table = store_table(events)
    owner = np.repeat(np.arange(len(events)), [len(event.graph) for event in events])
    ids = [
        None if names[k] == "null" else "" if names[k] == "empty" else f"<{EX}e{k}>"
        for k in owner.tolist()
    ]
    start = np.array(times)[owner] * 1000
    table = table.set_column(2, "event_id", pa.array(ids, pa.string()))
    table = table.set_column(3, "t_start", pa.array(start, pa.int64()))
    table = table.set_column(4, "t_end", pa.array(start + 5, pa.int64()))
    shuffled = np.random.default_rng(seed).permutation(table.num_rows)
    in_time = shuffled[np.argsort(start[shuffled], kind="stable")]
    store = tmp_path / "store"
    store.mkdir(exist_ok=True)
    pq.write_table(table.take(pa.array(in_time)), store / "part-0.parquet", row_group_size=group)
    expected = list(read_store_events(store))
    got, batches = batched(store, 2)
    assert got == expected
    check_batches(batches, 2)


def test_store_dictionaries_that_repeat_a_text() -> None:
    """Parquet allows a dictionary page to hold a text twice (pyarrow's writer never does):
    rows with the two indices are one event id and one stream, as their texts are."""
    ids = ["<http://ex.org/b>", "<http://ex.org/a>", "<http://ex.org/b>"]
    streams = ["http://ex.org/s", "http://ex.org/s"]

    def column(texts: list[str], chunks: list[list[int]]) -> pa.ChunkedArray:
        dictionary = pa.array(texts)
        return pa.chunked_array(
            [pa.DictionaryArray.from_arrays(pa.array(c, pa.int32()), dictionary) for c in chunks]
        )

    event_id = column(ids, [[0, 1, 2], [2, 0]])
    rows = 5
    triple = [f"<{EX}s>", f"<{EX}p>", '"1"']
    table = pa.table(
        {
            "stream": column(streams, [[0, 1, 0], [1, 1]]),
            "event_id": event_id,
            "t_start": pa.array([1, 1, 1, 1, 1], pa.int64()),
            "t_end": pa.array([1, 1, 1, 1, 1], pa.int64()),
            "s": pa.array([triple[0]] * rows),
            "p": pa.array([f"<{EX}p{k}>" for k in range(rows)]),
            "o": pa.array([triple[2]] * rows),
        }
    )
    from rsep.engine import batch as batch_module

    dictionary = TermDictionary()
    piece = batch_module._store_piece(Path("f"), table, None, batch_module._StoreTerms(dictionary))
    # sorted by event id: a's row, then b's four rows (one event, from both chunks)
    assert piece.start.tolist() == [1, 1]
    assert piece.triple_event.tolist() == [0, 1, 1, 1, 1]
    assert dictionary.texts(piece.p) == [f"<{EX}p{k}>" for k in (1, 0, 2, 3, 4)]
    assert piece.codes is not None
    assert [piece.stream[code] for code in piece.codes.tolist()] == [streams[0]] * 2


@SETTINGS
@given(
    sources=st.lists(event_lists(streams=2, max_size=8), min_size=1, max_size=3),
    sizes=st.lists(st.integers(1, 4), min_size=3, max_size=3),
)
def test_merged_inputs_in_time_order(sources: list[list[Event]], sizes: list[int]) -> None:
    """Inputs each in order of end time, merged: every event once, by end time, an
    earlier input's first among events ending together, each with its own triples."""
    dictionary = TermDictionary()
    inputs = [sorted(events, key=lambda e: e.t_end) for events in sources]
    merged = merge_batches(
        [batches_of(events, dictionary, size) for events, size in zip(inputs, sizes, strict=False)]
    )
    got = [event for batch in merged for event in batch.events(dictionary)]
    keyed = [(e.t_end, k, i, e) for k, events in enumerate(inputs) for i, e in enumerate(events)]
    expected = [event for *_, event in sorted(keyed, key=lambda x: x[:3])]
    assert [(e.stream, e.t_start, e.t_end, e.graph) for e in got] == [
        (e.stream, e.t_start, e.t_end, e.graph) for e in expected
    ]


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


# --------------------------------------------------------------------------- the N-Quads fast path

PROV = "http://www.w3.org/ns/prov#"
RSEP_STREAM_P = "<http://w3id.org/rsep/vocab#stream>"
XSD = "http://www.w3.org/2001/XMLSchema#"
GENERATED = f"<{PROV}generatedAtTime>"


def read_both(
    tmp_path: Path, path: Path, size: int = 3, **options: Any
) -> tuple[list[Event], list[dict[str, Any]]]:
    """``read_events`` and ``read_batches`` on ``path``: the same first error when stopping,
    the same events and dead letters when skipping; returns those."""
    error = None
    try:
        list(read_events(path, **options))
    except InputError as exc:
        error = str(exc)
    try:
        batched(path, size, **options)
        assert error is None
    except InputError as exc:
        assert str(exc) == error
    results: list[list[Event]] = []
    letters: list[list[dict[str, Any]]] = []
    for reader in ("events", "batches"):
        dead = tmp_path / f"{reader}.jsonl"
        dead.unlink(missing_ok=True)
        bad = BadRecords(OnError.SKIP, dead)
        if reader == "events":
            results.append(list(read_events(path, bad=bad, **options)))
        else:
            events, batches = batched(path, size, bad=bad, **options)
            check_batches(batches, size) if events else None
            results.append(events)
        bad.close()
        text = dead.read_text() if dead.exists() else ""
        letters.append([json.loads(line) for line in text.splitlines()])
    assert results[0] == results[1]
    assert letters[0] == letters[1]
    return results[0], letters[0]


def dt(seconds: int, form: str = "Z") -> str:
    """A time literal ``seconds`` after 2024-01-01 in one of the forms writers and users
    give (``form``)."""
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    lexical = f"2024-01-{1 + days:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if form == "int":
        return f'"{seconds}"^^<{XSD}integer>'
    if form == "string":
        return f'"{seconds}"'
    extra = {"Z": "Z", "none": "", "frac": ".25Z", "micro": ".123456Z", "zone": "+01:00"}
    if form in extra:
        return f'"{lexical}{extra[form]}"^^<{XSD}dateTime>'
    bad = {
        "month": "2024-13-01T00:00:00Z",
        "hour24": "2024-01-01T24:00:00Z",
        "day": "2023-02-29T00:00:00Z",
    }
    return f'"{bad[form]}"^^<{XSD}dateTime>'


def event_lines(graph: str, seconds: int, triples: int = 3, stream: str | None = "a") -> list[str]:
    """An event in the writers' layout: time, stream, triples."""
    lines = [f"{graph} {GENERATED} {dt(seconds)} ."]
    if stream is not None:
        lines.append(f"{graph} {RSEP_STREAM_P} <{EX}stream/{stream}> .")
    lines += [
        f'<{EX}s{k}> <{EX}p{k % 2}> "{seconds + k}"^^<{XSD}double> {graph} .'
        for k in range(triples)
    ]
    return lines


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("block", [150, 400, 1000, 4000])
def test_nquads_fast_path_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Events across block boundaries, several events at one time, a graph named again
    after its event (with a time of its own, and without), time statements after the
    triples and a block before them, a non-canonical spelling and comments between: the
    events and dead letters of ``read_events``."""
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", block)
    lines: list[str] = []
    for index in range(30):
        lines += event_lines(f"<{EX}e{index}>", 100 + index // 4, triples=1 + index % 4)
    lines += event_lines(f"<{EX}e3>", 200)  # named again, with a time: a second event
    lines += [f"<{EX}s> <{EX}p> <{EX}o> <{EX}e5> ."]  # named again, no time
    lines += [f"<{EX}s> <{EX}p> <{EX}o> _:late .", f"_:late {GENERATED} {dt(201)} ."]
    lines += [f"_:late {RSEP_STREAM_P} <{EX}stream/b> ."]
    early = event_lines("_:early", 202)
    lines += [*early[:2], *[f"# {'x' * 200}"] * 3, *early[2:]]
    lines += [f'<{EX}s> <{EX}p> "v"^^<{XSD}string> <{EX}f1> .', *event_lines(f"<{EX}f1>", 203)]
    lines += [f'<{EX}s> <{EX}p> "a b <x> ." <{EX}f2> .', "", *event_lines(f"<{EX}f2>", 203)]
    for index in range(30, 60):
        lines += event_lines(f"<{EX}e{index}>", 300 + index)
    path = write_lines(tmp_path / "s.nq", lines)
    events, letters = read_both(tmp_path, path, 4)
    assert len(events) >= 60 and letters
    assert len([e for e in events if e.id == NamedNode(f"{EX}e3")]) == 2
    events, letters = read_both(tmp_path, path, 5, stream=f"{EX}given")
    assert len(events) >= 60


def test_nquads_fast_path_reads_canonical_blocks_in_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file in the writers' layout never reaches the reader's own path, nor its close."""
    from rsep.engine import batch as batch_module

    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 2000)
    lines = [line for i in range(200) for line in event_lines(f"<{EX}e{i}>", i // 3, 2)]
    path = write_lines(tmp_path / "s.nq", lines)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("not read in columns")

    monkeypatch.setattr(batch_module, "_read_block", refuse)
    monkeypatch.setattr(batch_module._Columns, "close", refuse)
    events, batches = batched(path, 64)
    assert len(events) == 200
    check_batches(batches, 64)


def test_nquads_fast_path_time_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Times read from their bytes (UTC, without zone, fractions, integer counts) or by the
    reader's own path (zones, strings, impossible dates, hour 24), intervals, streams
    missing or not IRIs, time going backwards: as ``read_events``."""
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 700)
    forms = ["Z", "none", "frac", "micro", "int", "string", "zone", "month", "hour24", "day"]
    lines = []
    for index in range(60):
        graph = f"<{EX}g{index}>"
        form = forms[index % len(forms)]
        seconds = 1000 + 10 * index - (500 if index % 17 == 5 else 0)
        if index % 7 == 3:
            lines.append(f"{graph} <{PROV}startedAtTime> {dt(seconds, form)} .")
            lines.append(
                f"{graph} <{PROV}endedAtTime> {dt(seconds + (5 if index % 2 else -5), form)} ."
            )
        else:
            lines.append(f"{graph} {GENERATED} {dt(seconds, form)} .")
        if index % 11 == 4:
            lines.append(f"{graph} {GENERATED} {dt(seconds + 1, form)} .")
        if index % 13 != 6:
            stream = '"not an IRI"' if index % 19 == 9 else f"<{EX}stream/{index % 3}>"
            lines.append(f"{graph} {RSEP_STREAM_P} {stream} .")
        lines.append(f"<{EX}s> <{EX}p> <{EX}o{index}> {graph} .")
    path = write_lines(tmp_path / "s.nq", lines)
    for unit in (TimeUnit.MILLISECONDS, TimeUnit.SECONDS):
        for tz in (UTC, zone("Europe/Copenhagen")):
            events, letters = read_both(tmp_path, path, 7, time_unit=unit, tz=tz)
            assert events and letters


_LINE_KINDS = ["event", "event", "event", "late time", "split", "bad", "spaced", "comment"]


def _mangled(kind: str, event: list[str], other: str) -> list[str]:
    """The lines of ``event`` as the line kind ``kind`` writes them (``other``: the graph of
    the lines written between a split event's parts)."""
    if kind == "late time":
        return event[2:] + event[:2]
    if kind == "split":
        return event[2:] + [f"<{EX}x> <{EX}p> <{EX}o> {other} ."] * 3 + event[:2]
    if kind == "bad":
        return [*event[:-1], event[-1][:-2]]
    if kind == "spaced":
        return [*event[:-1], event[-1].replace("> <", ">  <", 1)]
    if kind == "comment":
        return [event[0], "  # a comment", *event[1:]]
    return event


@st.composite
def messy_files(draw: st.DrawFn) -> list[str]:
    """N-Quads lines mostly in the writers' layout, with graphs named again, time
    statements before or after their triples, lines that are not canonical or not
    N-Quads, and times that go back."""
    lines: list[str] = []
    clock = 0
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(_LINE_KINDS))
        graph = draw(st.sampled_from([f"<{EX}g{i}>" for i in range(8)] + ["_:b1", "_:b2"]))
        clock += draw(st.integers(-2, 30))
        event = event_lines(
            graph, clock, draw(st.integers(1, 3)), draw(st.sampled_from(["a", "b", None]))
        )
        lines += _mangled(kind, event, f"<{EX}other>")
    return lines


@SETTINGS
@given(lines=messy_files(), size=st.integers(1, 5), block=st.integers(100, 3000))
def test_nquads_messy_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], size: int, block: int
) -> None:
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", block)
    path = write_lines(tmp_path / "s.nq", lines)
    read_both(tmp_path, path, size)
    read_both(tmp_path, path, size, stream=f"{EX}given")


@SETTINGS
@given(
    path=st.text(alphabet="abcAZ09-._~!$&'()*+,;=:@/?#%[] <>\"{}|\\^`é", max_size=12),
    scheme=st.sampled_from(["http", "urn", "a+b", "1x", ""]),
    slashes=st.sampled_from(["", "/", "//", "///"]),
)
def test_plain_names_are_names(path: str, scheme: str, slashes: str) -> None:
    """A graph name the kernel finds plain is one that ``Texts.name`` takes."""
    from rsep.engine.terms import plain_names
    from rsep.rdf.formats.ntriples import name_term

    texts = [f"<{scheme}:{slashes}{path}>", f"_:{path}", f"<{scheme}:{path}>"]
    data = b"".join(text.encode() for text in texts)
    words = np.zeros(len(data) // 8 + 3, np.uint64)
    words.view(np.uint8)[: len(data)] = np.frombuffer(data, np.uint8)
    ends = np.cumsum([len(text.encode()) for text in texts])
    plain = plain_names(words, np.concatenate([[0], ends[:-1]]), ends)
    for text, found in zip(texts, plain.tolist(), strict=True):
        if found:
            assert name_term(text) is not None, text
    assert plain_names(words[:0], np.zeros(0, np.int64), np.zeros(0, np.int64)).size == 0


def test_writers_names_are_plain() -> None:
    from rsep.engine.terms import plain_names

    texts = [f"<{EX}g1>", "_:b1", "<urn:x:y>", "<http://h:80/a/b?q=1#f>", "_:a.b-c", "<file:///x>"]
    texts += ["<http://a b>", "_:.a", "_:a.", "<1x:y>", "<http://h:x/>", "<http://%41>"]
    data = "".join(texts).encode()
    words = np.zeros(len(data) // 8 + 3, np.uint64)
    words.view(np.uint8)[: len(data)] = np.frombuffer(data, np.uint8)
    ends = np.cumsum([len(text) for text in texts])
    plain = plain_names(words, np.concatenate([[0], ends[:-1]]), ends)
    assert plain.tolist() == [True] * 6 + [False] * 6


def test_bounded_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The statements kept are emptied past their bound, with the same events."""
    from rsep.engine import batch as batch_module

    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 600)
    monkeypatch.setattr(batch_module, "CACHE_LIMIT", 16)
    lines = [line for i in range(120) for line in event_lines(f"<{EX}e{i}>", i, 2 + i % 3)]
    lines += [f'<{EX}e{i}> <{EX}note> "{i}" .' for i in range(40)]
    path = write_lines(tmp_path / "s.nq", lines)
    events, _ = read_both(tmp_path, path, 16)
    assert len(events) == 120


@pytest.mark.parametrize("window", [5, 40])
def test_nquads_bad_lines_between_canonical_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """A bad line drops its event, also when the event goes on in canonical blocks read in
    columns, and the blocks after the bad line's window are read in columns again."""
    from rsep.rdf.formats import _common

    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 900)
    monkeypatch.setattr(_common, "WINDOW", window)
    lines: list[str] = []
    for index in range(80):
        graph = f"<{EX}e{index}>"
        lines += event_lines(graph, index)
        if index % 20 == 7:
            lines.append(f"<{EX}s> <{EX}p> <{EX}o> {graph}")  # no final dot
            lines += event_lines(f"<{EX}k{index}>", index, 6)
            lines.append(f"<{EX}s> <{EX}p> <{EX}late> {graph} .")
    path = write_lines(tmp_path / "s.nq", lines)
    events, letters = read_both(tmp_path, path, 8)
    assert len(events) == 80 and len(letters) == 4


# --------------------------------------------------------------------------- byte ranges


def by_ranges(
    path: Path, ranges: list[tuple[int, int]], bad: BadRecords | None = None
) -> list[Event]:
    """The events of each range's read (a dictionary per range, as Spark tasks have),
    one range after the other."""
    events: list[Event] = []
    for byte_range in ranges:
        dictionary = TermDictionary()
        for batch in read_batches(path, None, dictionary, bad=bad, byte_range=byte_range):
            events += batch.events(dictionary)
    return events


def cut_at(size: int, points: list[int]) -> list[tuple[int, int]]:
    cuts = [0, *sorted(points), size]
    return list(pairwise(cuts))


def same_by_ranges(tmp_path: Path, path: Path, ranges: list[tuple[int, int]]) -> list[Event]:
    """The ranges' events, each once, are the whole file's; so are the bad records (once
    each, at their true lines)."""
    events = []
    letters = []
    for name, reader in (("whole", None), ("ranges", ranges)):
        dead = tmp_path / f"{name}.jsonl"
        dead.unlink(missing_ok=True)
        bad = BadRecords(OnError.SKIP, dead)
        events.append(
            list(read_events(path, bad=bad)) if reader is None else by_ranges(path, reader, bad)
        )
        bad.close()
        text = dead.read_text() if dead.exists() else ""
        letters.append(sorted(text.splitlines()))
    assert events[0] == events[1]
    assert letters[0] == letters[1]
    return events[0]


@pytest.mark.parametrize("seed", range(4))
def test_byte_ranges_of_generated_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random split points over a file in the writers' layout (blocks of 2,000 bytes, so
    events straddle blocks and ranges): the whole file's events, each read once."""
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 2000)
    data = prepare_bars(write_vshape_bars(tmp_path, 400, seed=seed), tmp_path / "d")
    size = data.nquads.stat().st_size
    rng = np.random.default_rng(seed)
    for parts in (2, 3, 7):
        points = rng.choice(np.arange(1, size), parts - 1, replace=False).tolist()
        assert len(same_by_ranges(tmp_path, data.nquads, cut_at(size, points))) == 400
    assert len(by_ranges(data.nquads, split_ranges(data.nquads, 5))) == 400


def test_byte_ranges_of_shared_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_data: Path
) -> None:
    """The shipped NASDAQ bars mapped to N-Quads, read by the ranges of ``split_ranges``
    and by ranges cut at random: the whole file's events."""
    csv = shared_data / "stocks" / "opencep_nasdaq_2008-02-01" / "NASDAQ_MEDIUM.txt"
    data = prepare_bars(csv, tmp_path / "d")
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 20_000)
    size = data.nquads.stat().st_size
    for parts in (1, 2, 9):
        ranges = split_ranges(data.nquads, parts)
        assert len(ranges) == min(parts, -(-size // 20_000))
        assert ranges[0][0] == 0 and ranges[-1][1] == size
        assert all(a[1] == b[0] for a, b in pairwise(ranges))
        assert len(same_by_ranges(tmp_path, data.nquads, ranges)) == 1652
    points = np.random.default_rng(1).choice(np.arange(1, size), 5, replace=False).tolist()
    same_by_ranges(tmp_path, data.nquads, cut_at(size, points))


@st.composite
def straddling_files(draw: st.DrawFn) -> list[str]:
    """Events with names of their own and times going forward, in the writers' layout,
    with time statements after their triples or lines of other events between, bad
    lines, lines not canonical and comments."""
    lines: list[str] = []
    clock = 0
    for index in range(draw(st.integers(1, 50))):
        kind = draw(st.sampled_from(_LINE_KINDS))
        graph = f"<{EX}g{index}>" if index % 3 else f"_:b{index}"
        clock += draw(st.integers(0, 30))
        event = event_lines(graph, clock, draw(st.integers(1, 4)))
        lines += _mangled(kind, event, f"<{EX}other{index}>")
    return lines


@SETTINGS
@given(
    lines=straddling_files(),
    block=st.integers(1000, 3000),
    points=st.lists(st.floats(0, 1), max_size=5),
    window=st.sampled_from([3, 20, 65_536]),
)
def test_byte_ranges_of_messy_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lines: list[str],
    block: int,
    points: list[float],
    window: int,
) -> None:
    """Any split points, blocks of any size that holds an event's lines (the reader's
    condition), bad lines judged with few or many lines after them (blocks that wait
    across places): the whole file's events and bad records."""
    from rsep.rdf.formats import _common

    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", block)
    monkeypatch.setattr(_common, "WINDOW", window)
    path = write_lines(tmp_path / "s.nq", lines)
    size = path.stat().st_size
    same_by_ranges(tmp_path, path, cut_at(size, [int(p * size) for p in points]))


def test_byte_range_refusals(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.nq", event_lines(f"<{EX}e>", 1))
    dictionary = TermDictionary()
    with pytest.raises(UserError, match="0 <= start <= stop"):
        list(read_batches(path, None, dictionary, byte_range=(5, 2)))
    gz = tmp_path / "s.nq.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(UserError, match="uncompressed"):
        list(read_batches(gz, None, dictionary, fmt=Format.NQUADS, byte_range=(0, 10)))
    tnt = tmp_path / "s.tnt"
    tnt.write_text(f"<{EX}s> <{EX}p> <{EX}o> 1 .\n")
    with pytest.raises(UserError, match="not tnt"):
        list(read_batches(tnt, f"{EX}a", dictionary, byte_range=(0, 10)))
    with pytest.raises(UserError, match="parts"):
        split_ranges(path, 0)
    assert by_ranges(path, [(0, 0), (0, path.stat().st_size), (10, 10)]) == list(read_events(path))


def test_reading_ahead_keeps_order_errors_and_stops_with_its_consumer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces read by the reader thread come in order, its error after the pieces before
    it, and the thread ends when the consumer stops early."""
    import threading

    from rsep.engine import batch as batch_module

    def pieces() -> Any:
        yield from range(5)
        raise UserError("broken at 5")

    got: list[Any] = []
    with pytest.raises(UserError, match="broken at 5"):
        for item in batch_module._ahead(pieces()):
            got.append(item)
    assert got == list(range(5))
    monkeypatch.setattr(nquads_module, "BLOCK_BYTES", 500)
    lines = [line for i in range(200) for line in event_lines(f"<{EX}e{i}>", i)]
    path = write_lines(tmp_path / "s.nq", lines)
    batches = read_batches(path, None, TermDictionary(), batch_events=2)
    assert len(next(batches)) == 2
    del batches  # the consumer stops: its generators close
    assert not [t for t in threading.enumerate() if t.name == "rsep-reader"]


def test_names_matched_by_hashes_then_texts() -> None:
    """Names are found among others by the hashes of their bytes, then their texts: a
    hash shared by other texts finds nothing, and two of the others sharing a hash leave
    the texts alone to decide."""
    from rsep.engine import batch as batch_module

    among = pa.array(["<a>", "<b>", "_:c"])
    values = pa.array(["_:c", "<x>", "<a>", "<b>"])
    real = batch_module._text_hashes(among)
    found = batch_module._matches(values, batch_module._text_hashes(values), among, real)
    assert found.tolist() == [2, -1, 0, 1]
    clashing = np.array([real[2], real[0], real[0], real[1]], np.uint64)  # <x> as <a>
    assert batch_module._matches(values, clashing, among, real).tolist() == [2, -1, 0, 1]
    shared = np.array([real[0], real[0], real[2]], np.uint64)  # <a> and <b> share one
    values_hashes = np.array([real[2], real[1], real[0], real[0]], np.uint64)
    found = batch_module._matches(values, values_hashes, among, shared)
    assert found.tolist() == [2, -1, 0, 1]
    empty = pa.array([], pa.string())
    none = np.empty(0, np.uint64)
    assert batch_module._matches(values, real[[0, 0, 0, 0]], empty, none).tolist() == [-1] * 4


def test_repeated_triples_of_small_and_large_events(tmp_path: Path) -> None:
    """A graph is a set: a line repeated in an event of a few triples and in one of many
    (compared another way) gives the triple once, as ``read_events`` does."""
    small = event_lines(f"<{EX}e1>", 1, 4)
    large = event_lines(f"<{EX}e2>", 2, 40)
    lines = [*small, small[-2], *large, large[20], large[-1]]
    path = write_lines(tmp_path / "s.nq", lines)
    events = same_as_read_events(path, 1)
    assert [len(event.graph) for event in events] == [4, 40]
