"""The JSON Lines results format (rsep.rdf.results)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.errors import InputError
from rsep.rdf.results import (
    _ESCAPE,
    AskResult,
    ConstructResult,
    SelectResult,
    json_line,
    read_results,
    write_results,
)

XSD = "http://www.w3.org/2001/XMLSchema#"


def roundtrip(results):  # type: ignore[no-untyped-def]
    buffer = io.StringIO()
    write_results(results, buffer)
    return buffer.getvalue(), list(read_results(buffer.getvalue().splitlines()))


def test_select_with_interval_is_written_as_specified() -> None:
    result = SelectResult(
        16,
        {"s": NamedNode("http://ex.org/m"), "v": Literal("2", datatype=NamedNode(XSD + "integer"))},
        (10, 16),
    )
    text, back = roundtrip([result])
    assert json.loads(text) == {
        "time": 16,
        "bindings": {"s": "<http://ex.org/m>", "v": f'"2"^^<{XSD}integer>'},
        "interval": [10, 16],
    }
    assert back == [result]


def test_construct_and_ask() -> None:
    triple = Triple(
        NamedNode("http://ex.org/a"), NamedNode("http://ex.org/p"), Literal("x", language="en")
    )
    text, back = roundtrip([ConstructResult(5, frozenset({triple})), AskResult(6, True)])
    assert text.splitlines() == [
        '{"time":5,"triples":["<http://ex.org/a> <http://ex.org/p> \\"x\\"@en ."]}',
        '{"time":6,"boolean":true}',
    ]
    assert back == [ConstructResult(5, frozenset({triple})), AskResult(6, True)]


def test_bad_line_names_file_and_line() -> None:
    with pytest.raises(InputError, match=r"^answers\.jsonl:2: not a result"):
        list(read_results(['{"time": 1, "boolean": false}', '{"time": "x"}'], "answers.jsonl"))


terms = st.one_of(
    st.from_regex(r"http://ex\.org/[a-z]{1,5}", fullmatch=True).map(NamedNode),
    st.from_regex(r"b[0-9]{1,3}", fullmatch=True).map(BlankNode),
    st.text(max_size=8).map(Literal),
    st.integers().map(lambda i: Literal(str(i), datatype=NamedNode(XSD + "integer"))),
)


@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**12),
            st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), terms, max_size=4),
        ),
        max_size=5,
    )
)
def test_select_results_roundtrip(rows: list[tuple[int, dict[str, object]]]) -> None:
    results = [SelectResult(t, b) for t, b in rows]  # type: ignore[arg-type]
    _, back = roundtrip(results)
    assert back == results


def test_line_breaking_characters_stay_on_one_line() -> None:
    result = SelectResult(0, {"a": Literal("x\x85y\u2028z\x0c")})
    text, back = roundtrip([result])
    assert len(text.splitlines()) == 1
    assert back == [result]


_TEXTS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@given(
    time=st.integers(-(2**62), 2**62),
    bindings=st.dictionaries(_TEXTS, _TEXTS, max_size=4),
    interval=st.none() | st.tuples(st.integers(0, 2**62), st.integers(0, 2**62)),
)
def test_json_line_is_json_dumps_escaped(
    time: int, bindings: dict[str, str], interval: tuple[int, int] | None
) -> None:
    """The SELECT path of ``json_line`` writes exactly what ``json.dumps`` with compact
    separators writes (quotes, backslashes, control characters, any code point), with the
    characters that break lines escaped; other objects go through the encoder itself."""
    obj: dict[str, object] = {"time": time, "bindings": bindings}
    if interval is not None:
        obj["interval"] = list(interval)
    expected = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).translate(_ESCAPE)
    line = json_line(obj)
    assert line == expected
    assert len(line.splitlines()) == 1 and json.loads(line) == obj
    ask = {"time": time, "boolean": bool(bindings)}
    assert json_line(ask) == json.dumps(ask, separators=(",", ":"))
