"""N-Quads read by blocks of lines (rsep.rdf.formats.nquads): the same events and dead
letters whatever the block size, events and bad lines across block bounds, and lines the
writers would not write (tabs, comments, escapes, CRLF) read as pyoxigraph reads them."""

from __future__ import annotations

import gzip
import io
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from format_strategies import STREAMS, event_lists
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from rsep.errors import BadRecords, OnError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, nquads, read_events, write_events

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EX = "http://ex.org/"
WHOLE = 1 << 30
"""A block size larger than any file here: the file is read as one block."""


def written(events: list[Event], **options: Any) -> str:
    out = io.StringIO()
    write_events(events, out, Format.NQUADS, **options)
    return out.getvalue()


def read(
    data: str | bytes, block: int, name: str = "events.nq", **options: Any
) -> tuple[list[Event], list[tuple[Any, ...]]]:
    """Events and dead letters (file name, line, reason, record) of ``data`` read under SKIP
    with blocks of ``block`` bytes."""
    dead: list[tuple[Any, ...]] = []

    class Letters(BadRecords):
        def report(self, file: str | Path, line: int | None, reason: str, record: str = "") -> None:
            super().report(file, line, reason, record)
            dead.append((Path(file).name, line, reason, record))

    with tempfile.TemporaryDirectory() as folder, mock.patch.object(nquads, "BLOCK_BYTES", block):
        path = Path(folder) / name
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8", newline="")
        else:
            path.write_bytes(data)
        events = list(read_events(path, Format.NQUADS, bad=Letters(OnError.SKIP), **options))
    return events, dead


def same_events(read_back: list[Event], expected: list[Event]) -> None:
    """The same events, with the same ids where they had one (the writer names the others)."""
    assert read_back == expected
    assert [e.id for e in expected] == [
        e.id if w.id is not None else None for e, w in zip(read_back, expected, strict=True)
    ]


blocks = st.one_of(st.sampled_from([1, 2, 17, 64, 200, nquads.BLOCK_BYTES]), st.integers(1, 4000))


@SETTINGS
@given(events=event_lists(streams=3), block=blocks)
def test_any_block_size_reads_the_written_events(events: list[Event], block: int) -> None:
    events_back, dead = read(written(events, with_stream=True), block)
    same_events(events_back, events)
    assert dead == []


def event(k: int, *objects: str) -> Event:
    triples = [
        Triple(NamedNode(EX + "s"), NamedNode(EX + f"p{i}"), Literal(o))
        for i, o in enumerate(objects)
    ]
    return Event.point(STREAMS[0], 1000 * k, triples, NamedNode(f"{EX}e{k}"))


def test_an_event_whose_lines_span_a_block_bound() -> None:
    events = [event(0, "a"), event(1, "b", "c", "d"), event(2, "e")]
    text = written(events)
    lines = text.splitlines(keepends=True)
    # the first block ends inside event 1: after its time line and first triple
    cut = len("".join(lines[:4]))
    assert lines[2].startswith(f"<{EX}e1>") and lines[4].endswith(f"<{EX}e1> .\n")
    for block in (cut, cut - 3, cut + 3):
        same_events(read(text, block, stream=STREAMS[0])[0], events)


@SETTINGS
@given(events=event_lists(streams=1, min_triples=2).filter(lambda e: len(e) >= 2), data=st.data())
def test_a_bad_line_reads_the_same_at_any_block_bound(
    events: list[Event], data: st.DataObject
) -> None:
    """Damage one line; wherever the blocks split the file (the bad line last in a block,
    first in the next, cut in two), the events kept and the dead letters (line, reason,
    record) are those of the file read as one block."""
    lines = written(events).split("\n")
    i = data.draw(st.integers(0, len(lines) - 2), label="damaged line")
    damage = data.draw(st.sampled_from(["junk", "no dot", "cut", "comment after"]))
    if damage == "junk":
        lines[i] = lines[i].replace(" ", " ^^ ", 1)
    elif damage == "no dot":
        lines[i] = lines[i][:-2]
    elif damage == "cut":
        lines[i] = lines[i][: len(lines[i]) // 2]
    else:
        lines[i] = lines[i][:-2] + " # no dot\n# a comment line"
    text = "\n".join(lines)
    start = len("\n".join(lines[:i])) + (1 if i else 0)
    end = start + len(lines[i]) + 1
    block = data.draw(
        st.one_of(st.sampled_from([start, end, start + 1, end - 1, max(1, start - 1)]), blocks),
        label="block",
    )
    whole = read(text, WHOLE, stream=STREAMS[0])
    assert whole[1] != []
    assert read(text, max(1, block), stream=STREAMS[0]) == whole


def test_event_errors_name_their_line_across_blocks() -> None:
    """An event without a time, far into the file, is reported at its first line."""
    events = [event(k, "x", "y") for k in range(40)]
    lines = written(events).split("\n")
    missing = 3 * 25  # event 25's time line
    assert lines[missing].startswith(f"<{EX}e25> ")
    lines[missing] = f'<{EX}e25> <{EX}note> "no time" .'
    text = "\n".join(lines)
    for block in (WHOLE, 100, 333, 1000):
        events_back, dead = read(text, block, stream=STREAMS[0])
        assert events_back == events[:25] + events[26:]
        assert [(d[1], d[2].split(":")[0]) for d in dead] == [(missing + 1, "missing timestamp")]


def test_lines_farther_apart_than_a_block_are_other_events() -> None:
    """The limit of reading by blocks: an event is complete once a whole block went by
    without its lines, so time statements a block after their graph's triples leave
    those events without a time (read as one block, the file is fine)."""
    events = [event(k, "x") for k in range(30)]
    lines = [line for line in written(events).split("\n") if line]
    times = [line for line in lines if "generatedAtTime" in line]
    text = "\n".join([line for line in lines if line not in times] + times) + "\n"
    same_events(read(text, WHOLE, stream=STREAMS[0])[0], events)
    events_back, dead = read(text, 200, stream=STREAMS[0])
    assert len(events_back) < len(events)
    assert dead and all(d[2].startswith("missing timestamp") for d in dead)


@SETTINGS
@given(events=event_lists(streams=2), block=st.sampled_from([3000, 9000, WHOLE]), data=st.data())
def test_lines_the_writers_do_not_write_read_as_pyoxigraph_reads_them(
    events: list[Event], block: int, data: st.DataObject
) -> None:
    """Tabs and runs of spaces between terms, comments, blank lines, CRLF ends and
    escaped characters take the general path for their block; the events are the same
    (blocks longer than an event's lines, comments included)."""
    lines = written(events, with_stream=True).split("\n")
    out = []
    for line in lines:
        kind = data.draw(st.sampled_from(["same", "same", "tabs", "comment", "crlf", "escape"]))
        if kind == "tabs" and line:
            head, _, rest = line.partition(" ")
            line = f"{head}\t  {rest}"
        elif kind == "comment":
            out.append("# a comment")
            out.append("   ")
        elif kind == "crlf" and line:
            line += "\r"
        elif kind == "escape" and line.startswith("<http://ex.org/"):
            line = (
                line.replace("<http://ex.org/", "<http://ex.org/\\u0041", 1)
                .replace("<http://ex.org/\\u0041", "<http://ex.org/", 1)
                .replace("ex.org", "ex\\u002Eorg", 1)
            )
        out.append(line)
    events_back, dead = read("\n".join(out), block)
    same_events(events_back, events)
    assert dead == []


def test_escapes_are_undone_as_pyoxigraph_does() -> None:
    text = (
        f'<{EX}e0> <http://www.w3.org/ns/prov#generatedAtTime> "1970-01-01T00:00:01Z"'
        "^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n"
        f'<{EX}s> <{EX}p> "caf\\u00E9 \\"x\\"" <{EX}e0> .\n'
        f'<{EX}s> <{EX}p> "tab\\there" <{EX}e0> .\n'
    )
    events_back, dead = read(text, WHOLE, stream=STREAMS[0])
    assert dead == []
    assert {t.object for t in events_back[0].graph} == {Literal('café "x"'), Literal("tab\there")}


def test_a_gzip_file_cut_short_keeps_the_events_of_earlier_blocks() -> None:
    events = [event(k, "x", "y") for k in range(200)]
    packed = gzip.compress(written(events).encode())[:-30]
    whole, dead = read(packed, WHOLE, name="events.nq.gz", stream=STREAMS[0])
    assert whole == [] and [(d[1], d[2].split(":")[0]) for d in dead] == [
        (None, "corrupt gzip data")
    ]
    by_blocks, dead = read(packed, 512, name="events.nq.gz", stream=STREAMS[0])
    assert 0 < len(by_blocks) < len(events) and by_blocks == events[: len(by_blocks)]
    assert [(d[1], d[2].split(":")[0]) for d in dead] == [(None, "corrupt gzip data")]


def test_repeated_triples_share_one_object() -> None:
    events = [event(k, "same") for k in range(3)]
    events_back, _ = read(written(events), WHOLE, stream=STREAMS[0])
    assert len({id(next(iter(e.graph))) for e in events_back}) == 1
