"""CSR-Bench: its data, queries and recorded engine answers, and its correctness test
(Dell'Aglio et al., "On correctness in RDF stream processor benchmarking", ISWC 2013; the
RSP-QL paper, "Correctness of RDF stream processing systems"). docs/csrbench.md has the
verdicts.

The suite (``shared/data/csrbench``):

- ``data/data_NN.ttl``: the LinkedSensorData graph streamed at application time NN
  (``config/setup.properties``: ``importer.data.interval = 1000`` ms between files,
  ``system.timeunit = 1000``); :func:`read_stream` makes it one event at ``NN × 1000`` ms;
- ``config/srbench-queries.properties``: the seven queries as SPARQL 1.1 WHERE clauses
  (``booleanquery``) with the window's size, slide and first t0 in ms; the 2013 version,
  the one the recorded answers were produced with (``aligned/`` is the 2023 version, whose
  windows differ for queries 1, 2 and 6); :func:`read_queries`;
- ``config/{csparql,cqels,sparqlstream}.properties``: each engine's report policy, the
  ``profile`` parameter of rsep (:data:`rsep.algebra.passes.PROFILES`);
- ``answers/<engine>-answer-<q>.json``: what each engine answered (:func:`read_answer`).

A query is run as the C-SPARQL text of its WHERE clause over one stream window
(:func:`csparql_text`): with one window over one stream the dataset shapes of the three
engines (window in the default graph, or named) give the same answers, and the profile
gives the engine's report policy, streaming operator and empty-relation reporting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.errors import InputError, UserError
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.results import SelectResult
from rsep.rdf.terms import Term
from rsep.semantics.check import (
    Relation,
    Verdict,
    admissible_t0,
    compare,
    correct_answers,
    relations_from_results,
    row_key,
)

__all__ = [
    "ENGINES",
    "STREAM",
    "SUITE_TIME_UNIT",
    "CsrQuery",
    "csparql_text",
    "is_csrbench_answer",
    "is_csrbench_data",
    "plan_of",
    "read_answer",
    "read_properties",
    "read_queries",
    "read_stream",
    "verdict",
]

STREAM = "http://localhost:12345/CSRBenchDataStream/datastream#1"
"""The stream IRI of the 2023 suite's queries; the 2013 queries name no stream."""

ENGINES = ("csparql", "cqels", "sparqlstream")
"""The engines whose answers CSR-Bench records, by profile name."""

SUITE_TIME_UNIT = 1000
"""``system.timeunit`` and ``importer.data.interval`` of ``config/setup.properties`` (ms):
one data file per second, t0 stepped by a second, engine times mapped to their second."""

_DATA_FILE = re.compile(r"data_(\d+)\.ttl$")


@dataclass(frozen=True)
class CsrQuery:
    """One query of ``srbench-queries.properties``: the SPARQL text and its window."""

    number: int
    text: str
    width: int
    slide: int
    first_t0: int


def read_properties(text: str) -> dict[str, str]:
    """A Java ``.properties`` text as Apache Commons Configuration (CSR-Bench's) reads
    it: ``key = value``, a trailing backslash continues the line (the next line's leading
    blanks dropped), ``\\n`` is a newline, ``#`` and ``!`` start comments."""
    out: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if pending else raw.strip()
        if not pending and (not line or line[0] in "#!"):
            continue
        stripped = line.rstrip()
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            pending += stripped[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        found = re.match(r"\s*([^=:\s]+)\s*[=:]?\s*(.*)$", line, re.S)
        if found is None:
            continue
        value = found.group(2).replace("\\n", "\n").replace("\\t", "\t").strip()
        out[found.group(1)] = value
    return out


def read_queries(root: Path) -> dict[int, CsrQuery]:
    """The seven queries of ``root/config/srbench-queries.properties`` (the 2013 suite,
    with which the answers were recorded), by number."""
    path = Path(root) / "config" / "srbench-queries.properties"
    try:
        props = read_properties(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    queries: dict[int, CsrQuery] = {}
    for key, value in props.items():
        found = re.fullmatch(r"srb\.query(\d+)\.booleanquery", key)
        if found is None:
            continue
        n = int(found.group(1))
        prefix = f"srb.query{n}.window."
        try:
            queries[n] = CsrQuery(
                n,
                value,
                int(props[prefix + "size"]),
                int(props[prefix + "slide"]),
                int(props[prefix + "firstt0"]),
            )
        except (KeyError, ValueError) as exc:
            raise UserError(f"{path}: query {n} has no usable window ({exc})") from None
    return dict(sorted(queries.items()))


def csparql_text(query: CsrQuery, stream: str = STREAM) -> str:
    """The query in C-SPARQL: its SPARQL text with ``FROM STREAM <stream> [RANGE α STEP
    β]`` before ``WHERE`` (widths in ms) under ``REGISTER QUERY qN AS``."""
    text = query.text
    where = re.search(r"\bWHERE\s*\{", text, re.I)
    if where is None:
        raise UserError(f"CSR-Bench query {query.number} has no WHERE clause")
    window = f"FROM STREAM <{stream}> [RANGE {query.width}ms STEP {query.slide}ms]\n"
    body = text[: where.start()] + window + text[where.start() :]
    head = re.match(r"(\s*PREFIX\s+\S*\s*<[^>]*>\s*)*", body, re.I)
    split = head.end() if head is not None else 0
    prefixes = body[:split].strip()
    prefixes = re.sub(r"\s+(?=PREFIX\b)", "\n", prefixes) + "\n" if prefixes else ""
    return f"{prefixes}REGISTER QUERY q{query.number} AS\n{body[split:].strip()}\n"


def plan_of(query: CsrQuery, profile: str, stream: str = STREAM) -> Plan:
    """The plan of ``query`` under an engine profile, its first t0 the suite's."""
    dialect = get_dialect("csparql")
    ast = parse_query(csparql_text(query, stream), dialect)
    overrides = {"window.t0": str(query.first_t0)}
    return compile_query(ast, dialect, overrides=overrides, profile=profile)


def is_csrbench_data(path: Path) -> bool:
    """Whether ``path`` is a folder of CSR-Bench ``data_NN.ttl`` files."""
    path = Path(path)
    return path.is_dir() and any(_DATA_FILE.search(p.name) for p in path.iterdir())


def read_stream(data: Path, stream: str = STREAM, interval: int = SUITE_TIME_UNIT) -> StreamSet:
    """The suite's stream: each ``data_NN.ttl`` of ``data`` one event at ``NN × interval``
    ms (the importer streams one file per ``importer.data.interval``)."""
    events: list[Event] = []
    for path in sorted(Path(data).iterdir()):
        found = _DATA_FILE.search(path.name)
        if found is None:
            continue
        try:
            triples = [q.triple for q in parse(path=str(path), format=RdfFormat.TURTLE)]
        except SyntaxError as exc:
            raise UserError(f"{path}: not Turtle: {exc}") from None
        events.append(Event.point(stream, int(found.group(1)) * interval, triples))
    if not events:
        raise UserError(f"{data}: no data_NN.ttl files")
    events.sort(key=lambda e: e.t_start)
    return StreamSet([Stream(stream, tuple(events))])


def is_csrbench_answer(text: str) -> bool:
    """Whether a file's text is a CSR-Bench answer (a JSON object with ``relations``)."""
    return re.match(r'\s*\{\s*"relations"\s*:', text) is not None


def _term(value: dict[str, str]) -> Term:
    kind = value.get("type")
    if kind == "uri":
        return NamedNode(value["value"])
    if kind == "bnode":
        return BlankNode(value["value"])
    if kind in ("literal", "typed-literal"):
        lang = value.get("xml:lang")
        if lang:
            return Literal(value["value"], language=lang)
        datatype = value.get("datatype")
        return Literal(value["value"], datatype=NamedNode(datatype) if datatype else None)
    raise ValueError(f"unknown term type {kind!r}")


def read_answer(
    path: Path, text: str | None = None, granularity: int = SUITE_TIME_UNIT
) -> list[Relation]:
    """An engine's recorded answer, ``{"relations": [{"timestamp": ms, "results":
    {"bindings": [{"timestamp": ms, "binding": {var: SPARQL JSON term}}]}}]}``, as
    relations: one per relation of the file (an empty one included, as C-SPARQL reports
    them), its time mapped to the start of its ``granularity`` and relations with one
    mapped time merged (:func:`rsep.semantics.check.relations_from_results`: CQELS emits
    the rows of one evaluation one by one, a few ms after the data's second)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"not JSON: {exc.msg}") from None
    relations: list[Relation] = []
    try:
        for number, relation in enumerate(data["relations"], 1):
            try:
                time = int(relation["timestamp"])
                rows = frozenset(
                    row_key(
                        SelectResult(time, {name: _term(v) for name, v in b["binding"].items()})
                    )
                    for b in relation["results"]["bindings"]
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(path, None, f"relation {number}: {exc!r}") from None
            relations.append(Relation(time, rows))
    except (KeyError, TypeError) as exc:
        raise InputError(path, None, f"not a CSR-Bench answer: {exc!r}") from None
    return relations_from_results(relations, granularity)


def _iter_answers(root: Path) -> Iterator[tuple[str, int, Path]]:
    for engine in ENGINES:
        for n in range(1, 8):
            yield engine, n, Path(root) / "answers" / f"{engine}-answer-{n}.json"


def verdict(
    root: Path,
    number: int,
    engine: str,
    *,
    cache: MutableMapping[tuple[int, str, int], list[Relation]] | None = None,
) -> Verdict:
    """CSR-Bench's verdict on ``answers/<engine>-answer-<number>.json``: the query of the
    2013 suite under the engine's profile over ``data``, every admissible t0 (RSP-QL
    Theorem 1, stepped by the suite's second; :func:`rsep.semantics.check.admissible_t0`).
    ``cache`` keeps the oracle's relations by (query, profile, t0)."""
    root = Path(root)
    query = read_queries(root)[number]
    plan = plan_of(query, engine)
    streams = _stream(root)
    t0s = admissible_t0(plan, streams, granularity=SUITE_TIME_UNIT)
    store = cache if cache is not None else {}
    mine = {t0: store[(number, engine, t0)] for t0 in t0s if (number, engine, t0) in store}
    correct = correct_answers(plan, streams, None, t0s, cache=mine)
    for t0, relations in correct.items():
        store[(number, engine, t0)] = relations
    answer = read_answer(root / "answers" / f"{engine}-answer-{number}.json")
    return compare(answer, correct)


_STREAMS: dict[Path, StreamSet] = {}


def _stream(root: Path) -> StreamSet:
    key = root.resolve()
    if key not in _STREAMS:
        _STREAMS[key] = read_stream(root / "data")
    return _STREAMS[key]
