"""Error recovery as a property: damage one event of a random stream file, read it under
SKIP, and get exactly the other events back with one dead letter."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from unittest import mock

from format_strategies import STREAMS, event_lists
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsep.errors import BadRecords, OnError
from rsep.rdf.event import Event
from rsep.rdf.formats import Format, _common, read_events, write_events

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SUFFIX = {Format.TRIG: ".trig", Format.NQUADS: ".nq", Format.JSONLD: ".jsonld"}
several = event_lists(streams=1, min_triples=1).filter(lambda events: len(events) >= 2)


def written(events: list[Event], fmt: Format) -> str:
    out = io.StringIO()
    write_events(events, out, fmt)
    return out.getvalue()


def read_skipping(
    text: str, fmt: Format, window: int = _common.WINDOW
) -> tuple[list[Event], BadRecords]:
    """Read ``text`` under SKIP; ``window`` shrinks the recovery window to test its edges."""
    bad = BadRecords(OnError.SKIP)
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(_common, "WINDOW", window):
        path = Path(folder) / f"events{SUFFIX.get(fmt, '.tnt')}"
        path.write_text(text)
        return list(read_events(path, fmt, stream=STREAMS[0], bad=bad)), bad


windows = st.sampled_from([_common.WINDOW, 1, 2, 5])


def names(text: str, fmt: Format) -> list[str]:
    events, _ = read_skipping(text, fmt)
    return [str(e.id) for e in events]


@SETTINGS
@given(events=several, data=st.data())
def test_nquads_bad_line(events: list[Event], data: st.DataObject) -> None:
    text = written(events, Format.NQUADS)
    k = data.draw(st.integers(0, len(events) - 1), label="damaged event")
    name = names(text, Format.NQUADS)[k]
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if line.endswith(f" {name} .")]
    i = data.draw(st.sampled_from(candidates), label="damaged line")
    damage = data.draw(st.sampled_from(["junk", "no dot", "pname"]))
    if damage == "junk":
        lines[i] = lines[i].replace(" ", " ^^ ", 1)
    elif damage == "no dot":
        lines[i] = lines[i][:-2]
    else:
        lines[i] = lines[i].replace(" ", " ex:p ", 1)
    kept, bad = read_skipping("\n".join(lines), Format.NQUADS, data.draw(windows))
    assert kept == events[:k] + events[k + 1 :]
    assert [(e.line, e.reason.startswith("syntax error")) for e in bad.first] == [(i + 1, True)]


@SETTINGS
@given(events=several, data=st.data())
def test_trig_bad_block(events: list[Event], data: st.DataObject) -> None:
    text = written(events, Format.TRIG)
    k = data.draw(st.integers(0, len(events) - 1), label="damaged event")
    name = names(text, Format.TRIG)[k]
    lines = text.split("\n")
    header = lines.index(f"{name} {{")
    close = lines.index("}", header)
    damage = data.draw(st.sampled_from(["junk", "undeclared prefix", "unclosed"]))
    if damage == "unclosed":
        del lines[close]
    else:
        i = data.draw(st.integers(header + 1, close - 1), label="damaged line")
        replacement = "    <http://ex.org/s> <http://ex.org/p> foo:bar ."
        lines[i] = lines[i].replace(" ", " ^^ ", 5) if damage == "junk" else replacement
    kept, bad = read_skipping("\n".join(lines), Format.TRIG, data.draw(windows))
    assert kept == events[:k] + events[k + 1 :]
    assert bad.count == 1
    assert header < (bad.first[0].line or 0) <= close + 1


@SETTINGS
@given(events=several, data=st.data())
def test_jsonld_bad_element(events: list[Event], data: st.DataObject) -> None:
    text = written(events, Format.JSONLD)
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line == "  {"]
    k = data.draw(st.integers(0, len(events) - 1), label="damaged event")
    end = starts[k + 1] if k + 1 < len(starts) else len(lines) - 1
    keyed = [i for i in range(starts[k], end) if '": ' in lines[i]]
    i = data.draw(st.sampled_from(keyed), label="damaged line")
    lines[i] = lines[i].replace('": ', '" ', 1)
    kept, bad = read_skipping("\n".join(lines), Format.JSONLD)
    assert kept == events[:k] + events[k + 1 :]
    assert [(e.line, e.reason.startswith("invalid JSON")) for e in bad.first] == [
        (starts[k] + 1, True)
    ]


@SETTINGS
@given(events=several, data=st.data())
def test_timestamped_bad_line(events: list[Event], data: st.DataObject) -> None:
    events = [Event.point(e.stream, e.t_start, [min(e.graph, key=str)]) for e in events]
    text = written(events, Format.TIMESTAMPED_NT)
    lines = text.split("\n")
    k = data.draw(st.integers(0, len(events) - 1), label="damaged line")
    lines[k] = lines[k].replace(" ", " ^^ ", 1)
    kept, bad = read_skipping("\n".join(lines), Format.TIMESTAMPED_NT, data.draw(windows))
    assert kept == events[:k] + events[k + 1 :]
    assert [e.line for e in bad.first] == [k + 1]
