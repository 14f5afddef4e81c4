"""Bad input in every format: under STOP an InputError naming file, line and reason; under
SKIP a dead letter per bad record and every good event kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rsep.errors import BadRecords, InputError, OnError
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events

EX = "http://ex.org/"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
DT = f"<{XSD}dateTime>"
GEN = f"<{PROV}generatedAtTime>"
STREAM = EX + "stream"


def stop(path: Path, **options: Any) -> InputError:
    """The error reading ``path`` raises under the default policy (STOP)."""
    with pytest.raises(InputError) as caught:
        list(read_events(path, **options))
    error = caught.value
    assert error.file == str(path) or Path(error.file).parent == path.parent
    where = error.file if error.line is None else f"{error.file}:{error.line}"
    assert str(error) == f"{where}: {error.reason}"
    return error


def skip(path: Path, **options: Any) -> tuple[list[Event], list[dict[str, Any]]]:
    """Events read under SKIP and the dead letters written for the bad records."""
    dead = path.parent / "dead.jsonl"
    dead.unlink(missing_ok=True)
    bad = BadRecords(OnError.SKIP, dead)
    events = list(read_events(path, bad=bad, **options))
    bad.close()
    entries = [json.loads(line) for line in dead.read_text().splitlines()] if dead.exists() else []
    assert bad.count == len(entries)
    return events, entries


def ids(events: list[Event]) -> list[str]:
    return [str(e.id) for e in events]


# --------------------------------------------------------------------------- N-Quads


def nquads(tmp_path: Path, replace: dict[int, str]) -> Path:
    lines = [
        f'<{EX}g1> {GEN} "1970-01-01T00:00:01Z"^^{DT} .',
        f'<{EX}s> <{EX}p> "a" <{EX}g1> .',
        f'<{EX}g2> {GEN} "1970-01-01T00:00:02Z"^^{DT} .',
        f'<{EX}s> <{EX}p> "b" <{EX}g2> .',
        f'<{EX}s> <{EX}q> "b2" <{EX}g2> .',
        f'<{EX}g3> {GEN} "1970-01-01T00:00:03Z"^^{DT} .',
        f'<{EX}s> <{EX}p> "c" <{EX}g3> .',
    ]
    for number, text in replace.items():
        lines[number - 1] = text
    path = tmp_path / "events.nq"
    path.write_text("\n".join(lines) + "\n")
    return path


NQUADS_CASES = {
    "malformed line": ({5: f'<{EX}s> <{EX}q> "b2 <{EX}g2> .'}, 5, "syntax error"),
    "missing dot": ({4: f'<{EX}s> <{EX}p> "b" <{EX}g2>'}, 4, "syntax error"),
    "missing timestamp": ({3: f'<{EX}g2> <{EX}note> "no time" .'}, 3, "missing timestamp"),
    "unparsable timestamp": ({3: f'<{EX}g2> {GEN} "yesterday"^^{DT} .'}, 3, "unparsable timestamp"),
    "time going backwards": (
        {3: f'<{EX}g2> {GEN} "1970-01-01T00:00:00Z"^^{DT} .'},
        3,
        "time going backwards",
    ),
}


@pytest.mark.parametrize("case", NQUADS_CASES)
def test_nquads(tmp_path: Path, case: str) -> None:
    replace, line, reason = NQUADS_CASES[case]
    path = nquads(tmp_path, replace)
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith(reason)) == (line, True), error
    events, dead = skip(path, stream=STREAM)
    assert ids(events) == [f"<{EX}g1>", f"<{EX}g3>"]
    assert [e.t_start for e in events] == [1000, 3000]
    assert [(d["line"], d["reason"].startswith(reason)) for d in dead] == [(line, True)]
    assert dead[0]["file"] == str(path)


def test_nquads_every_good_line_is_kept(tmp_path: Path) -> None:
    path = nquads(tmp_path, {2: "garbage", 7: f"<{EX}s> <{EX}p> ."})
    events, dead = skip(path, stream=STREAM)
    # g1 and g3 lost their only triple (lines 2 and 7); g2 is whole
    assert ids(events) == [f"<{EX}g2>"]
    assert len(events[0].graph) == 2
    assert [d["line"] for d in dead] == [2, 7]


def test_nquads_no_stream_given(tmp_path: Path) -> None:
    path = nquads(tmp_path, {})
    error = stop(path)
    assert (error.line, error.reason.split(" ")[:3]) == (1, ["no", "stream", "given"])


# --------------------------------------------------------------------------- TriG

TRIG = """\
@prefix ex: <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:g1 prov:generatedAtTime "1970-01-01T00:00:01Z"^^xsd:dateTime .
ex:g1 {
    ex:s ex:p "a" .
}
ex:g2 prov:generatedAtTime "1970-01-01T00:00:02Z"^^xsd:dateTime .
ex:g2 {
    ex:s ex:p "b" .
    ex:s ex:q "b2" .
}
ex:g3 prov:generatedAtTime "1970-01-01T00:00:03Z"^^xsd:dateTime .
ex:g3 {
    ex:s ex:p "c" .
}
"""


def trig(tmp_path: Path, replace: dict[int, str | None]) -> Path:
    lines: list[str | None] = list(TRIG.splitlines())
    for number, text in replace.items():
        lines[number - 1] = text
    path = tmp_path / "events.trig"
    path.write_text("\n".join(line for line in lines if line is not None) + "\n")
    return path


TRIG_CASES: dict[str, tuple[dict[int, str | None], int, str]] = {
    "undeclared prefix": ({12: '    ex:s foo:q "b2" .'}, 12, "syntax error"),
    "malformed line": ({11: '    ex:s ex:p "b .'}, 11, "syntax error"),
    "unclosed block": ({13: None}, 12, "syntax error"),
    "missing timestamp": ({9: None}, 9, "missing timestamp"),
    "unparsable timestamp": (
        {9: 'ex:g2 prov:generatedAtTime "2 pm"^^xsd:dateTime .'},
        9,
        "unparsable timestamp",
    ),
    "time going backwards": ({9: "ex:g2 prov:generatedAtTime 5 ."}, 9, "time going backwards"),
}


@pytest.mark.parametrize("case", TRIG_CASES)
def test_trig(tmp_path: Path, case: str) -> None:
    replace, line, reason = TRIG_CASES[case]
    path = trig(tmp_path, replace)
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith(reason)) == (line, True), error
    events, dead = skip(path, stream=STREAM)
    assert ids(events) == [f"<{EX}g1>", f"<{EX}g3>"]
    assert [len(e.graph) for e in events] == [1, 1]
    assert [(d["line"], d["reason"].startswith(reason)) for d in dead] == [(line, True)]


def test_trig_undeclared_prefix_reason_and_record(tmp_path: Path) -> None:
    path = trig(tmp_path, {12: '    ex:s foo:q "b2" .'})
    assert "The prefix foo: has not been declared" in stop(path, stream=STREAM).reason
    _, (dead,) = skip(path, stream=STREAM)
    assert dead["record"].startswith("ex:g2 {")
    assert "dropped" in dead["reason"]


def test_trig_bad_prefix_line_then_later_use(tmp_path: Path) -> None:
    # a broken declaration is skipped, and every statement that needs it fails
    path = trig(tmp_path, {3: "@prefix xsd <http://www.w3.org/2001/XMLSchema#> ."})
    events, dead = skip(path, stream=STREAM)
    # each time statement using xsd: fails too, and drops its event (no second report)
    assert [d["line"] for d in dead] == [3, 5, 9, 14]
    assert events == []


# --------------------------------------------------------------------------- tnt


def tnt(tmp_path: Path, replace: dict[int, str]) -> Path:
    lines = [f'<{EX}s> <{EX}p> "{v}" "{t}" .' for v, t in (("a", 1000), ("b", 2000), ("c", 3000))]
    for number, text in replace.items():
        lines[number - 1] = text
    path = tmp_path / "events.tnt"
    path.write_text("\n".join(lines) + "\n")
    return path


TNT_CASES = {
    "malformed line": ({2: f'<{EX}s> <{EX}p "b" "2000" .'}, "syntax error"),
    "missing timestamp": ({2: f'<{EX}s> <{EX}p> "b" .'}, "missing timestamp"),
    "missing timestamp after an IRI": ({2: f"<{EX}s> <{EX}p> <{EX}o> ."}, "missing timestamp"),
    "unparsable timestamp": ({2: f'<{EX}s> <{EX}p> "b" "yesterday" .'}, "unparsable timestamp"),
    "unparsable typed timestamp": (
        {2: f'<{EX}s> <{EX}p> "b" "2.5"^^<{XSD}decimal> .'},
        "unparsable timestamp",
    ),
    "time going backwards": ({2: f'<{EX}s> <{EX}p> "b" "500" .'}, "time going backwards"),
}


@pytest.mark.parametrize("case", TNT_CASES)
def test_timestamped(tmp_path: Path, case: str) -> None:
    replace, reason = TNT_CASES[case]
    path = tnt(tmp_path, replace)
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith(reason)) == (2, True), error
    events, dead = skip(path, stream=STREAM)
    assert [e.t_start for e in events] == [1000, 3000]
    assert [(d["line"], d["reason"].startswith(reason)) for d in dead] == [(2, True)]
    assert dead[0]["record"] == replace[2]


def test_timestamped_many_bad_lines_in_line_order(tmp_path: Path) -> None:
    path = tmp_path / "events.tnt"
    path.write_text(
        f'<{EX}s> <{EX}p> "a" "1" .\n'
        "junk\n"
        f'<{EX}s> <{EX}p "b" "2" .\n'
        f'<{EX}s> <{EX}p> "c" "3" .\n'
        f'<{EX}s> <{EX}p> "d" "x" .\n'
        f'<{EX}s> <{EX}p> "e" "0" .\n'
        f'<{EX}s> <{EX}p> "f" "4" .\n'
    )
    events, dead = skip(path, stream=STREAM)
    assert [e.t_start for e in events] == [1, 3, 4]
    assert [d["line"] for d in dead] == [2, 3, 5, 6]


# --------------------------------------------------------------------------- JSON-LD


def jsonld_elements() -> list[dict[str, Any]]:
    return [
        {
            "@context": {"prov": PROV, "ex": EX},
            "@id": f"ex:g{i}",
            "prov:generatedAtTime": f"1970-01-01T00:00:0{i}Z",
            "@graph": [{"@id": "ex:s", "ex:p": str(i)}],
        }
        for i in (1, 2, 3)
    ]


def jsonld(tmp_path: Path, second: dict[str, Any] | str) -> tuple[Path, int]:
    """A three-element file whose second element is replaced; returns its start line."""
    elements = jsonld_elements()
    marker = {"@id": "MARKER"}
    parts = [*elements]
    parts[1] = marker if isinstance(second, str) else second
    text = json.dumps(parts, indent=2)
    if isinstance(second, str):
        text = text.replace('{\n    "@id": "MARKER"\n  }', second)
    path = tmp_path / "events.jsonld"
    path.write_text(text)
    line = text.splitlines().index("  {", 2) + 1
    return path, line


def _without(key: str) -> dict[str, Any]:
    element = jsonld_elements()[1]
    del element[key]
    return element


JSONLD_CASES: dict[str, tuple[dict[str, Any] | str, str]] = {
    "invalid JSON": ('{\n    "@id": "ex:g2",\n    "@graph": [}\n  }', "invalid JSON"),
    "invalid JSON-LD": ({**jsonld_elements()[1], "@context": 5}, "invalid JSON-LD"),
    "no @graph": (_without("@graph"), "element has no @graph"),
    "missing timestamp": (_without("prov:generatedAtTime"), "missing timestamp"),
    "unparsable timestamp": (
        {**jsonld_elements()[1], "prov:generatedAtTime": "soon"},
        "unparsable timestamp",
    ),
    "time going backwards": (
        {**jsonld_elements()[1], "prov:generatedAtTime": 0},
        "time going backwards",
    ),
}


@pytest.mark.parametrize("case", JSONLD_CASES)
def test_jsonld(tmp_path: Path, case: str) -> None:
    second, reason = JSONLD_CASES[case]
    path, line = jsonld(tmp_path, second)
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith(reason)) == (line, True), error
    events, dead = skip(path, stream=STREAM)
    assert ids(events) == [f"<{EX}g1>", f"<{EX}g3>"]
    assert [(d["line"], d["reason"].startswith(reason)) for d in dead] == [(line, True)]


def test_jsonld_two_named_graphs_in_one_element(tmp_path: Path) -> None:
    element = {**jsonld_elements()[1]}
    element["@graph"] = [
        {"@id": "ex:h", "@graph": [{"@id": "ex:s", "ex:p": "x"}]},
        {"@id": "ex:s", "ex:p": "y"},
    ]
    path, _ = jsonld(tmp_path, element)
    assert "named graphs" in stop(path, stream=STREAM).reason


# --------------------------------------------------------------------------- SPAseq


def spaseq(tmp_path: Path, data_name: str, data: str, size: int = 2) -> Path:
    (tmp_path / data_name).write_text(data)
    description = tmp_path / "stream.txt"
    description.write_text(f"<{STREAM}> <./{data_name}> {size}\n")
    return description


NT_DATA = "".join(
    f'# event {k}\n<{EX}s{k}> <{EX}p> "{k}" .\n<{EX}s{k}> <{EX}q> "{k}" .\n' for k in range(3)
)


def test_spaseq_malformed_line_drops_its_event_only(tmp_path: Path) -> None:
    data = NT_DATA.replace(f'<{EX}s1> <{EX}q> "1" .', f'<{EX}s1> <{EX}q> "1 .')
    description = spaseq(tmp_path, "data.nt", data)
    error = stop(description)
    assert (Path(error.file).name, error.line) == ("data.nt", 6)
    events, dead = skip(description)
    assert [e.t_start for e in events] == [0, 2000]  # event 3 keeps its time
    assert [(Path(d["file"]).name, d["line"]) for d in dead] == [("data.nt", 6)]
    assert "event 2" in dead[0]["reason"]


N3_DATA = """\
@prefix ex: <http://ex.org/> .
ex:a ex:p 1 .
ex:a ex:q 2 .
ex:b ex:p 3 .
ex:b foo:q 4 .
ex:c ex:p 5 .
ex:c ex:q 6 .
"""


def test_spaseq_undeclared_prefix_in_n3(tmp_path: Path) -> None:
    description = spaseq(tmp_path, "data.n3", N3_DATA)
    error = stop(description)
    assert (Path(error.file).name, error.line) == ("data.n3", 5)
    assert "foo:" in error.reason
    events, dead = skip(description)
    assert [len(e.graph) for e in events] == [2]  # only the event before the bad statement
    assert [d["line"] for d in dead] == [5]
    assert "not read" in dead[0]["reason"]


def test_spaseq_incomplete_trailing_event(tmp_path: Path) -> None:
    data = NT_DATA + f'<{EX}s3> <{EX}p> "3" .\n'
    description = spaseq(tmp_path, "data.nt", data)
    error = stop(description)
    assert (error.line, error.reason.startswith("incomplete event")) == (10, True)
    events, dead = skip(description)
    assert len(events) == 3
    assert [d["line"] for d in dead] == [10]


def test_spaseq_bad_description_lines(tmp_path: Path) -> None:
    description = spaseq(tmp_path, "data.nt", NT_DATA)
    description.write_text(
        f"# streams\n<{STREAM}> data.nt 2\n<{STREAM}> <./data.nt> two\n<{STREAM}> <./data.nt> 2\n"
    )
    error = stop(description)
    assert (error.line, error.reason.startswith("not a stream line")) == (2, True)
    events, dead = skip(description)
    assert len(events) == 3
    assert [d["line"] for d in dead] == [2, 3]


# --------------------------------------------------------------------------- files


def test_corrupt_gzip_is_a_file_level_error(tmp_path: Path) -> None:
    path = tmp_path / "events.nq.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00broken")
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith("corrupt gzip data")) == (None, True)
    assert skip(path, stream=STREAM)[0] == []


def test_xz_compressed_file_reads_and_corrupt_xz_is_a_file_level_error(tmp_path: Path) -> None:
    import lzma

    plain = tnt(tmp_path, {})
    packed = tmp_path / "events.tnt.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    assert skip(packed, stream=STREAM)[0] == skip(plain, stream=STREAM)[0] != []
    broken = tmp_path / "broken.tnt.xz"
    broken.write_bytes(b"\xfd7zXZ\x00broken")
    error = stop(broken, stream=STREAM)
    assert (error.line, error.reason.startswith("corrupt xz data")) == (None, True)


def test_line_that_is_not_utf8(tmp_path: Path) -> None:
    path = tnt(tmp_path, {})
    lines = path.read_bytes().split(b"\n")
    lines[1] = b'<http://ex.org/s> <http://ex.org/p> "\xff" "2000" .'
    path.write_bytes(b"\n".join(lines))
    error = stop(path, stream=STREAM)
    assert (error.line, error.reason.startswith("not UTF-8")) == (2, True)
    events, dead = skip(path, stream=STREAM)
    assert [e.t_start for e in events] == [1000, 3000]
    assert [d["line"] for d in dead] == [2]


@pytest.mark.parametrize("name", ["e.trig", "e.nq", "e.tnt", "e.jsonld", "e.txt"])
def test_empty_files_hold_no_events(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("")
    fmt = "spaseq" if name.endswith(".txt") else None
    assert list(read_events(path, fmt, stream=STREAM if fmt is None else None)) == []
