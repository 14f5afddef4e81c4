"""rsep's public API (docs/api.md) used as a newcomer would, through ``import rsep`` alone:
every engine's answers equal the oracle's, over files, events and tables, in one call or
fed in batches."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyoxigraph import Literal, NamedNode, Triple

import rsep
from rsep.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "semantics" / "data"
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"

DOC = REPO / "docs" / "api.md"


SPASEQ = f"""PREFIX ex: <{EX}>
SELECT ?c ?p1 ?p2 ?name
WITHIN 10 SECONDS
FROM STREAM S1 <{EX}S>
WHERE SEQ (A; B)
{{
  DEFINE GPM A ON S1 {{ ?c ex:price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?c ex:price ?p2 . GRAPH <{EX}kb> {{ ?c ex:name ?name . }}
                       FILTER (?p2 < ?p1) }}
}}
"""
"""A price event of a company, then its next lower one (skip-till-next) within 10 s, with the
company's name from the knowledge base graph (SPAseq Def. 15)."""

PRICES = [("c1", 14, 0), ("c2", 5, 500), ("c1", 12, 1000), ("c2", 3, 1500), ("c1", 11, 2000)]
PRICES += [("c1", 15, 3000), ("c2", 7, 3500), ("c1", 10, 4000), ("c2", 6, 4000)]

RSPQL = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?who ?owner
FROM <{EX}shops>
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} ?owner :owns ?shop }}
"""
"""RSP-QL Example 3's window joined with the background graph of Example 1."""


def canonical(results: Any) -> list[str]:
    """Results as sorted JSON texts (the answers of one instant are a bag)."""
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def price(company: str, value: int, t: int) -> rsep.Event:
    triple = Triple(
        NamedNode(EX + company), NamedNode(EX + "price"), Literal(str(value), datatype=_INT)
    )
    return rsep.Event.point(EX + "S", t, [triple])


_INT = NamedNode(XSD + "integer")


def price_table() -> pa.Table:
    """The price events as a table of triples (rsep.TABLE_COLUMNS, no event_id)."""
    rows = [
        (EX + "S", t, t, f"<{EX}{c}>", f"<{EX}price>", f'"{v}"^^<{XSD}integer>')
        for c, v, t in PRICES
    ]
    names = ("stream", "t_start", "t_end", "s", "p", "o")
    return pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})


@pytest.fixture
def spaseq_files(tmp_path: Path) -> tuple[Path, Path]:
    """The price stream as timestamped N-Triples, and the knowledge base as N-Triples."""
    stream = tmp_path / "prices.tnt"
    stream.write_text(
        "".join(f'<{EX}{c}> <{EX}price> "{v}"^^<{XSD}integer> {t} .\n' for c, v, t in PRICES),
        encoding="utf-8",
    )
    kb = tmp_path / "kb.nt"
    kb.write_text(f'<{EX}c1> <{EX}name> "one" .\n<{EX}c2> <{EX}name> "two" .\n', encoding="utf-8")
    return stream, kb


def test_all_lists_the_public_names_and_the_doc_tells_each() -> None:
    """``rsep.__all__`` holds the API's names, each defined and told in docs/api.md; every
    error it lists is a :class:`rsep.UserError` (exit code 1 on the command line)."""
    names = set(rsep.__all__)
    assert {"Query", "Answers", "Incremental", "Event", "Result", "UserError"} <= names
    assert len(names) == len(rsep.__all__)
    doc = DOC.read_text(encoding="utf-8")
    for name in names - {"__version__"}:
        assert getattr(rsep, name) is not None
        assert f"`{name}`" in doc or f"rsep.{name}" in doc, name
    errors = [getattr(rsep, n) for n in names if n.endswith("Error")]
    assert len(errors) >= 5 and all(issubclass(e, rsep.UserError) for e in errors)
    namespace: dict[str, object] = {}
    exec("from rsep import *", namespace)
    assert names <= set(namespace)


def test_the_package_ships_its_type_information() -> None:
    """``pip install`` builds a wheel with ``rsep/py.typed`` (PEP 561): the marker is in
    the package and in the data setuptools puts in the wheel."""
    import tomllib
    from importlib.resources import files

    assert files("rsep").joinpath("py.typed").is_file()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["rsep"]


def test_spaseq_over_a_file_equals_the_oracle(spaseq_files: tuple[Path, Path]) -> None:
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    assert query.dialect.name == "spaseq"
    graphs = {EX + "kb": kb}
    expected = canonical(query.run({EX + "S": stream}, graphs, engine="reference"))
    answers = query.run({EX + "S": stream}, graphs, engine="local")
    assert canonical(answers) == expected
    assert answers.events == len(PRICES)
    prices = {(json.loads(r)["bindings"]["p1"], json.loads(r)["bindings"]["p2"]) for r in expected}
    assert (f'"14"^^<{XSD}integer>', f'"12"^^<{XSD}integer>') in prices
    assert len(expected) == 6  # c1: 14>12, 12>11, 11>10, 15>10; c2: 5>3, 7>6


def test_spaseq_over_events_equals_the_oracle_over_the_file(
    spaseq_files: tuple[Path, Path],
) -> None:
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    events = [price(c, v, t) for c, v, t in PRICES]
    kb_triples = {
        Triple(NamedNode(EX + c), NamedNode(EX + "name"), Literal(n))
        for c, n in (("c1", "one"), ("c2", "two"))
    }
    expected = canonical(query.run(f"{EX}S={stream}", {EX + "kb": kb}, engine="reference"))
    for engine in ("local", "reference"):
        found = query.run(iter(events), {EX + "kb": kb_triples}, engine=engine)
        assert canonical(found) == expected


def test_a_table_of_triples_gives_the_answers_of_its_events(
    spaseq_files: tuple[Path, Path],
) -> None:
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    expected = canonical(query.run({EX + "S": stream}, {EX + "kb": kb}, engine="reference"))
    table = price_table()
    for engine in ("local", "reference"):
        assert canonical(query.run(table, {EX + "kb": kb}, engine=engine)) == expected
    frame = table.to_pandas()
    assert canonical(query.run(frame, {EX + "kb": kb})) == expected
    with pytest.raises(rsep.UserError, match="missing: o"):
        query.run(table.drop_columns(["o"]), {EX + "kb": kb})


def test_read_table_gives_a_table_of_the_files_events(spaseq_files: tuple[Path, Path]) -> None:
    """``rsep.read_table``: stream files as one table of triples in the event store's
    schema, in time order, each event its own ``event_id`` (two events at one time stay
    two); every engine's answers over it are the oracle's over the files."""
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    expected = canonical(query.run({EX + "S": stream}, {EX + "kb": kb}, engine="reference"))
    table = rsep.read_table(f"{EX}S={stream}")
    assert tuple(table.column_names) == rsep.TABLE_COLUMNS
    assert table.num_rows == len(PRICES) == len(set(table.column("event_id").to_pylist()))
    assert table.column("t_end").to_pylist() == sorted(t for _, _, t in PRICES)
    for engine in ("local", "reference"):
        assert canonical(query.run(table, {EX + "kb": kb}, engine=engine)) == expected
    rspql = rsep.Query(RSPQL)
    nearby = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    shops = {EX + "shops": DATA / "g_shops.ttl"}
    oracle = canonical(rspql.run(nearby, shops, engine="reference"))
    assert canonical(rspql.run(rsep.read_table(nearby), shops)) == oracle
    assert rsep.read_table([]).num_rows == 0
    with pytest.raises(rsep.UserError, match="reads stream files"):
        rsep.read_table(table)


def test_a_table_reaches_the_columnar_engine_with_no_file(
    spaseq_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An Arrow table or pandas DataFrame of triples goes to the columnar engine in memory
    (no temporary event store is written), in one call and pushed to the incremental form
    a DataFrame at a time: the oracle's answers."""
    import rsep.api.inputs

    def no_store(*_: object) -> Path:
        raise AssertionError("a table for the columnar engine was written to a store")

    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    expected = canonical(query.run({EX + "S": stream}, {EX + "kb": kb}, engine="reference"))
    monkeypatch.setattr(rsep.api.inputs, "write_store", no_store)
    table = price_table()
    assert canonical(query.run(table, {EX + "kb": kb})) == expected
    assert canonical(query.run(table.to_pandas(), {EX + "kb": kb})) == expected
    running = query.incremental({EX + "kb": kb})
    found: list[rsep.Result] = []
    frame = table.to_pandas()
    for t in sorted(set(frame["t_end"])):
        found += running.push(frame[frame["t_end"] == t])
        found += running.advance(int(t))
    found += running.finish()
    assert canonical(found) == expected
    assert running.events == len({t for _, _, t in PRICES})  # no event_id: an event a time


def test_rspql_with_a_background_graph_equals_the_oracle() -> None:
    query = rsep.Query(RSPQL)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    graphs = {EX + "shops": DATA / "g_shops.ttl"}
    expected = canonical(query.run(streams, graphs, engine="reference"))
    assert (
        len(expected) == 10
    )  # windows (o, c] (RSP-QL Def. 12): Diana's item at 12 is not in (12, 17]
    assert canonical(query.run(streams, graphs, engine="local")) == expected


def _epsparql(name: str) -> rsep.Query:
    text = (REPO / "tests" / "lang" / "paper_queries" / "epsparql" / name).read_text("utf-8")
    return rsep.Query(f"PREFIX : <{EX}>\nPREFIX xsd: <{XSD}>\n{text}")


def test_epsparql_with_rules_equals_the_oracle() -> None:
    """EP-SPARQL query (2) reading what the downratings rule (4) derives (Sect. 4.2), as
    ``rsep run --rules``: :acme's drop comes with :moodys."""
    two = _epsparql("query2.epsparql")
    query = two.with_rules(_epsparql("query4.epsparql"))
    stream = {EX + "S": DATA / "epsparql" / "ratings.trig"}
    expected = canonical(query.run(stream, engine="reference"))
    assert canonical(query.run(stream, engine="local")) == expected
    agencies = {json.loads(r)["bindings"].get("ratingagency") for r in expected}
    assert agencies == {f"<{EX}moodys>", None}
    alone = canonical(two.run(stream, engine="reference"))
    assert all("ratingagency" not in json.loads(r)["bindings"] for r in alone)
    rules = rsep.Query(two.text, rules=[_epsparql("query4.epsparql")])
    assert canonical(rules.run(stream)) == expected


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_incremental_in_batches_equals_one_call(spaseq_files: tuple[Path, Path], size: int) -> None:
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    expected = canonical(query.run({EX + "S": stream}, {EX + "kb": kb}, engine="reference"))
    events = [price(c, v, t) for c, v, t in PRICES]
    running = query.incremental({EX + "kb": kb})
    found: list[rsep.Result] = []
    for start in range(0, len(events), size):
        chunk = events[start : start + size]
        found += running.push(chunk)
        found += running.advance(chunk[-1].t_end - 1)  # instants before the last are done
    found += running.finish()
    assert canonical(found) == expected
    assert running.events == len(events)
    times = [r.time for r in found]
    assert times == sorted(times)


@pytest.mark.parametrize("until", [None, 2000])
def test_incremental_feed_takes_micro_batches_as_they_arrive(
    spaseq_files: tuple[Path, Path], until: int | None
) -> None:
    """``Incremental.feed``: micro-batches (lists of events, tables) through the one driver
    loop, answers read as they come: the oracle's answers up to ``until``; an answer comes
    out before the micro-batches after its instant are taken."""
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    oracle = query.run({EX + "S": stream}, {EX + "kb": kb}, engine="reference", until=until)
    expected = canonical(oracle)
    events = [price(c, v, t) for c, v, t in PRICES]
    taken: list[int] = []

    def arriving() -> Any:
        for start in range(0, len(events), 2):
            taken.append(start)
            chunk = events[start : start + 2]
            yield chunk if start % 4 else price_table().slice(start, len(chunk))

    running = query.incremental({EX + "kb": kb})
    found = []
    for result in running.feed(arriving(), until):
        found.append(result)
        assert taken[-1] <= 2 + max(i for i, (_, _, t) in enumerate(PRICES) if t <= result.time)
    assert canonical(found) == expected
    assert running.events == len([t for _, _, t in PRICES if until is None or t <= until])


def test_incremental_rspql_fed_a_table_per_instant_equals_one_call() -> None:
    query = rsep.Query(RSPQL)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    graphs = {EX + "shops": DATA / "g_shops.ttl"}
    expected = canonical(query.run(streams, graphs, engine="reference"))
    table = pa.table(
        {
            "stream": [EX + "S_nearby"] * 5,
            "t_start": [2, 2, 5, 7, 12],
            "t_end": [2, 2, 5, 7, 12],
            "s": [f"<{EX}{w}>" for w in ("diana", "eve", "carl", "eve", "diana")],
            "p": [f"<{EX}isNearby>"] * 5,
            "o": [f"<{EX}{s}>" for s in ("a", "b", "a", "a", "b")],
        }
    )
    one = canonical(query.run(table, graphs, engine="reference"))
    assert one == expected  # the table holds the file's events
    running = query.incremental(graphs)
    found: list[rsep.Result] = []
    for t in (2, 5, 7, 12):
        found += running.push(table.filter(pa.compute.equal(table["t_end"], t)))
        found += running.advance(t)
    found += running.finish()
    assert canonical(found) == expected


def test_answers_as_arrow_pandas_and_json_lines(spaseq_files: tuple[Path, Path]) -> None:
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    run = {"data": {EX + "S": stream}, "graphs": {EX + "kb": kb}}
    table = query.run(**run).to_arrow()
    assert table.column_names == ["time", "interval_start", "interval_end", "c", "p1", "p2", "name"]
    assert table.num_rows == 6 and table.column("name").to_pylist().count('"one"') == 4
    frame = query.run(**run).to_pandas()
    assert list(frame["time"]) == table.column("time").to_pylist()
    out = io.StringIO()
    assert query.run(**run).write(out) == 6
    expected = canonical(query.run(**run))
    lines = [json.dumps(json.loads(line), sort_keys=True) for line in out.getvalue().splitlines()]
    assert sorted(lines) == expected


def test_explain_is_the_text_of_rsep_explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "q.spaseq"
    path.write_text(SPASEQ, encoding="utf-8")
    assert cli.main(["explain", str(path), "--set", "max_runs=50"]) == 0
    assert rsep.Query.read(path, max_runs=50).explain() == capsys.readouterr().out


def test_parameters_with_their_sources() -> None:
    query = rsep.Query(RSPQL, window_t0=1, parameters={"output.empty": True})
    assert query.parameters["window.t0"].value == 1
    assert str(query.parameters["window.t0"].source) == "command line"
    assert query.parameters["output.empty"].value is True
    assert str(query.parameters["max_runs"].source) == "built-in"
    with pytest.raises(rsep.ParameterError):
        rsep.Query(RSPQL, window_t0="soon")


def test_errors_name_file_line_and_reason(tmp_path: Path) -> None:
    with pytest.raises(rsep.QuerySyntaxError) as syntax:
        rsep.Query("SELECT ?x WHERE {\n  ?x ?y \n}")
    assert syntax.value.line == 3
    bad = tmp_path / "bad.tnt"
    bad.write_text(f"<{EX}a> <{EX}isNearby> <{EX}b> 1 .\nnot a triple\n", encoding="utf-8")
    with pytest.raises(rsep.InputError) as read:
        list(rsep.Query(RSPQL).run({EX + "S_nearby": bad}, {EX + "shops": DATA / "g_shops.ttl"}))
    assert (read.value.file, read.value.line) == (str(bad), 2)
    with pytest.raises(rsep.UserError, match="unknown engine 'flink'"):
        rsep.Query(RSPQL).run([], engine="flink")
    with pytest.raises(rsep.UserError, match="cannot read the query"):
        rsep.Query.read(tmp_path / "none.rq")


@pytest.mark.spark
def test_the_spark_engine_over_files_and_tables_equals_the_oracle(
    spark: Any, spaseq_files: tuple[Path, Path]
) -> None:
    """``engine="spark"``: the engine in Spark tasks (the tests' shared session) over a
    stream file and over a table of triples; events in memory are for the other engines."""
    stream, kb = spaseq_files
    query = rsep.Query(SPASEQ)
    graphs = {EX + "kb": kb}
    expected = canonical(query.run({EX + "S": stream}, graphs, engine="reference"))
    assert canonical(query.run({EX + "S": stream}, graphs, engine="spark")) == expected
    assert canonical(query.run(price_table(), graphs, engine="spark")) == expected
    rspql = rsep.Query(RSPQL)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    shops = {EX + "shops": DATA / "g_shops.ttl"}
    oracle = canonical(rspql.run(streams, shops, engine="reference"))
    assert canonical(rspql.run(streams, shops, engine="spark")) == oracle
    with pytest.raises(rsep.UserError, match="Spark engine reads stream files or tables"):
        query.run([price("c1", 1, 0)], graphs, engine="spark")


@pytest.mark.spark
def test_a_live_query_over_a_folder_of_arriving_files_equals_the_oracle(
    spark: Any, spaseq_files: tuple[Path, Path], tmp_path: Path
) -> None:
    """``Query.live``: the price stream split into files of a folder read as they arrive
    (``folders=True``), processed as available: the answers written are the oracle's up to
    the watermark (the last instant stays open: a later event may still come at it); a
    later file, read by the query started again from its checkpoint, closes it, and the
    folder sink then holds exactly the oracle's answers, none repeated."""
    stream, kb = spaseq_files
    lines = stream.read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path / "arriving"
    folder.mkdir()
    half = len(lines) // 2
    (folder / "1.tnt").write_text("".join(lines[:half]), encoding="utf-8")
    (folder / "2.tnt").write_text("".join(lines[half:]), encoding="utf-8")
    query = rsep.Query(SPASEQ)
    graphs = {EX + "kb": kb}
    expected = canonical(query.run({EX + "S": stream}, graphs, engine="reference"))

    def run() -> tuple[list[str], int | None]:
        live = query.live(
            [f"{EX}S={folder}"],
            folders=True,
            graphs=graphs,
            output=str(tmp_path / "answers"),
            checkpoint=tmp_path / "checkpoint",
            available_now=True,
        )
        try:
            assert live.wait(600)
            return canonical(live.results()), live.watermark
        finally:
            live.stop()

    first, watermark = run()
    assert watermark is not None and 2000 <= watermark < 4000
    assert first == [a for a in expected if json.loads(a)["time"] <= watermark] != []
    (folder / "3.tnt").write_text(f'<{EX}c3> <{EX}price> "1"^^<{XSD}integer> 9000 .\n')
    second, _ = run()
    assert second == expected
