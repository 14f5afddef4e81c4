"""The JSON-LD event stream of the W3C RSP Community Group and TripleWave.

Each element is one event: ``{"@context": {...}, "@id": g, "prov:generatedAtTime": T,
"@graph": [...]}``. A file holds a JSON array of elements, an object ``{"@context": C,
"@graph": [elements]}`` whose context applies to every element, or a sequence of
elements (JSON Lines). Each element is parsed with pyoxigraph's JSON-LD parser, so the
whole of JSON-LD 1.1 is understood; errors name the line where the element starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from rsep.errors import BadRecords, InputError, UserError
from rsep.rdf.event import Event, EventId
from rsep.rdf.formats._common import (
    BadEvent,
    ReadOptions,
    TimeOrder,
    WriteChecks,
    build_event,
    clip,
    collect,
    datetime_text,
    decode_text,
    sorted_triples,
    syntax_reason,
    unit_count,
)
from rsep.rdf.terms import PROV, RDF, RSEP, XSD, XSD_STRING
from rsep.rdf.time import TimeUnit

CONTEXT = {"prov": PROV, "xsd": XSD, "rsep": RSEP}
"""The ``@context`` the writer puts in every element."""

_DECODER = json.JSONDecoder()
_WS = re.compile(r"\s*")
_RDF_TYPE = RDF + "type"


class _Element:
    """One element as found in the file: where it starts, its value, the outer context."""

    __slots__ = ("context", "line", "value")

    def __init__(self, line: int, value: Any, context: Any) -> None:
        self.line = line
        self.value = value
        self.context = context


class _Text:
    """The file text with line lookup and JSON scanning that reports positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._pos = 0
        self._line = 1

    def line(self, pos: int) -> int:
        """The 1-based line of ``pos``; cheap when asked in increasing order."""
        if pos < self._pos:
            self._pos, self._line = 0, 1
        self._line += self.text.count("\n", self._pos, pos)
        self._pos = pos
        return self._line

    def skip(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        return match.end() if match else pos

    def at(self, pos: int) -> str:
        return self.text[pos] if pos < len(self.text) else ""

    def column(self, pos: int) -> int:
        return pos - (self.text.rfind("\n", 0, pos) + 1)

    def resync(self, start: int) -> int | None:
        """Where the element after a bad one (starting at ``start``) probably starts: the
        next line that opens an object no deeper than the bad element's column (a sibling
        in pretty-printed JSON or JSON Lines; deeper ones are nested objects)."""
        column = self.column(start)
        for match in _OBJECT_LINE.finditer(self.text, start + 1):
            pos = match.end() - 1
            if self.column(pos) <= column:
                return pos
        return None


_OBJECT_LINE = re.compile(r"(?m)^[ \t,]*\{")
_CONTAINER_HEAD = re.compile(
    r'\{\s*(?:"@context"\s*:\s*(?P<ctx>\{[^{}]*\}|"[^"\\]*"|\[[^\[\]{}]*\])\s*,\s*)?'
    r'"@graph"\s*:\s*\['
)


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


def _elements(file: Path, text: _Text, bad: BadRecords) -> Iterator[_Element]:
    """The elements of the file in order; invalid JSON is reported and skipped."""
    pos = text.skip(0)
    first = text.at(pos)
    if first == "[":
        yield from _array(file, text, pos, None, bad)
        return
    if first != "{":
        if first:
            bad.report(file, text.line(pos), "invalid JSON: expected '[' or '{'", clip(text.text))
        return
    while pos < len(text.text):
        try:
            value, end = _DECODER.raw_decode(text.text, pos)
        except json.JSONDecodeError as exc:
            head = _CONTAINER_HEAD.match(text.text, pos)
            if head is not None:  # a container with a bad element: recover inside it
                context = None
                if head["ctx"] is not None:
                    context = _DECODER.raw_decode(text.text, head.start("ctx"))[0]
                yield from _array(file, text, head.end() - 1, context, bad)
                return
            bad.report(file, text.line(pos), _json_error(exc), clip(text.text[pos : exc.pos + 1]))
            resume = text.resync(pos)
            if resume is None:
                return
            pos = resume
            continue
        if isinstance(value, dict) and _is_container(value):
            match = _CONTAINER_HEAD.match(text.text, pos)
            array = re.compile(r'"@graph"\s*:\s*\[').search(text.text, pos, end)
            start = match.end() - 1 if match else array.end() - 1 if array else None
            if start is None:  # pragma: no cover - the object was decoded with an @graph key
                yield _Element(text.line(pos), value, None)
            else:
                yield from _array(file, text, start, value.get("@context"), bad)
        else:
            yield _Element(text.line(pos), value, None)
        pos = text.skip(end)
        if text.at(pos) == ",":
            pos = text.skip(pos + 1)


def _is_container(value: dict[str, Any]) -> bool:
    """A top-level ``{"@context": C, "@graph": [elements]}`` rather than one element."""
    return (
        "@graph" in value
        and set(value) <= {"@context", "@graph"}
        and all(isinstance(item, dict) and "@graph" in item for item in _as_list(value["@graph"]))
    )


def _array(file: Path, text: _Text, pos: int, context: Any, bad: BadRecords) -> Iterator[_Element]:
    """The elements of the array opening at ``pos``; a bad one is reported and skipped."""
    pos = text.skip(pos + 1)
    if text.at(pos) == "]":
        return
    while pos < len(text.text):
        try:
            value, end = _DECODER.raw_decode(text.text, pos)
        except json.JSONDecodeError as exc:
            bad.report(file, text.line(pos), _json_error(exc), clip(text.text[pos : exc.pos + 1]))
            resume = text.resync(pos)
            if resume is None:
                return
            pos = resume
            continue
        yield _Element(text.line(pos), value, context)
        pos = text.skip(end)
        sep = text.at(pos)
        if sep == ",":
            pos = text.skip(pos + 1)
        elif sep == "]":
            return
        elif sep == "{":
            bad.report(file, text.line(pos), "invalid JSON: missing ',' between elements")
        else:
            bad.report(file, text.line(pos), "invalid JSON: expected ',' or ']' after an element")
            return


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def read_jsonld(file: Path, data: bytes, opts: ReadOptions, bad: BadRecords) -> Iterator[Event]:
    """The events of one JSON-LD file, one per element, in file order.

    An element that is not valid JSON or JSON-LD, has no ``@graph``, holds more than one
    named graph, or lacks a valid time or stream is reported at its first line.
    """
    try:
        text = _Text(decode_text(data, file))
    except InputError as exc:
        bad.report(exc.file, exc.line, exc.reason)
        return
    base = file.resolve().as_uri()
    order = TimeOrder()
    for element in _elements(file, text, bad):
        try:
            event = _element_event(element, opts, base)
            reason = order.check(event.stream, event.t_start)
            if reason is not None:
                raise BadEvent(reason)
        except BadEvent as exc:
            bad.report(file, element.line, str(exc), clip(json.dumps(element.value)))
            continue
        yield event


def _element_event(element: _Element, opts: ReadOptions, base: str) -> Event:
    value = element.value
    if not isinstance(value, dict):
        raise BadEvent("an element must be a JSON object")
    if "@graph" not in value:
        raise BadEvent("element has no @graph")
    document = dict(value)
    if element.context is not None:
        own = document.get("@context")
        document["@context"] = (
            element.context if own is None else [*_as_list(element.context), *_as_list(own)]
        )
    try:
        quads = list(parse(input=json.dumps(document), format=RdfFormat.JSON_LD, base_iri=base))
    except SyntaxError as exc:
        reason = syntax_reason(exc).removeprefix("syntax error: ")
        raise BadEvent(f"invalid JSON-LD: {reason}") from exc
    graphs: dict[EventId, list[Triple]] = {}
    meta: dict[object, dict[str, dict[object, None]]] = {}
    collect(quads, graphs, meta)
    if len(graphs) > 1:
        raise BadEvent(f"element holds {len(graphs)} named graphs; an event is one graph")
    if graphs:
        name, triples = next(iter(graphs.items()))
    else:
        names = [s for s in meta if isinstance(s, NamedNode | BlankNode)]
        if len(names) != 1:
            raise BadEvent("missing timestamp: element has no @id with prov:generatedAtTime")
        name, triples = names[0], []
    return build_event(name, triples, meta.get(name, {}), opts)


# --------------------------------------------------------------------------- writing


def _term(term: object) -> dict[str, Any]:
    if isinstance(term, NamedNode):
        return {"@id": term.value}
    if isinstance(term, BlankNode):
        return {"@id": f"_:{term.value}"}
    if isinstance(term, Literal):
        if term.language is not None:
            return {"@value": term.value, "@language": term.language}
        if term.datatype.value == XSD_STRING:
            return {"@value": term.value}
        return {"@value": term.value, "@type": term.datatype.value}
    raise UserError(f"JSON-LD cannot hold the term {term}")


def _nodes(triples: list[Triple]) -> list[dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    for triple in triples:
        subject = _term(triple.subject)["@id"]
        node = nodes.setdefault(subject, {"@id": subject})
        obj = triple.object
        if triple.predicate.value == _RDF_TYPE and isinstance(obj, NamedNode):
            node.setdefault("@type", []).append(obj.value)
        else:
            node.setdefault(triple.predicate.value, []).append(_term(obj))
    return list(nodes.values())


def event_element(
    event: Event, name: str, *, time_unit: TimeUnit | None = None, with_stream: bool = False
) -> dict[str, Any]:
    """The JSON-LD element of one event, graph name ``name`` in N-Triples syntax."""
    graph_id = name[1:-1] if name.startswith("<") else name

    def stamp(ms: int) -> Any:
        if time_unit is None:
            return {"@value": datetime_text(ms), "@type": "xsd:dateTime"}
        return unit_count(ms, time_unit)

    element: dict[str, Any] = {"@context": dict(CONTEXT), "@id": graph_id}
    if event.is_point:
        element["prov:generatedAtTime"] = stamp(event.t_start)
    else:
        element["prov:startedAtTime"] = stamp(event.t_start)
        element["prov:endedAtTime"] = stamp(event.t_end)
    if with_stream:
        element["rsep:stream"] = {"@id": event.stream}
    element["@graph"] = _nodes(sorted_triples(event))
    return element


def write_jsonld(
    events: Iterable[Event],
    out: TextIO,
    *,
    time_unit: TimeUnit | None = None,
    with_stream: bool = False,
) -> int:
    """Write events as a pretty-printed JSON array, one element per event; returns the
    number written. Times are ``xsd:dateTime`` values unless ``time_unit`` is given."""
    checks = WriteChecks("JSON-LD")
    count = 0
    out.write("[")
    for index, event in enumerate(events):
        checks.check(index, event, needs_triples=False)
        element = event_element(
            event, checks.name(index, event), time_unit=time_unit, with_stream=with_stream
        )
        body = json.dumps(element, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        out.write(("," if count else "") + "\n  " + body)
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count
