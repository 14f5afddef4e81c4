"""``rsep run --engine reference`` on queries of the four event languages, from files: the
query text, stream files and background graphs go in, JSON Lines results (with each match's
interval) come out, equal to what the oracle's tests derive from the definitions."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode, Triple

from rsep.api import Query
from rsep.cli import main as cli
from rsep.rdf.event import Event
from rsep.rdf.formats import read_events, write_events
from rsep.rdf.terms import XSD

ENGINES = [
    "reference",
    "local",
    pytest.param("spark", marks=pytest.mark.spark),
    pytest.param("live", marks=[pytest.mark.spark, pytest.mark.slow]),
]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each acceptance example runs on the oracle, on the engine in one process and on the
    engine inside Spark tasks (the tests' shared local session), and live (a Structured
    Streaming query over a folder holding the stream files): the same results."""
    if request.param in ("spark", "live"):
        request.getfixturevalue("spark")
    return str(request.param)


def ordered(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results in time order; the answers of one instant (a bag) by interval, then
    canonically."""
    return sorted(
        found, key=lambda r: (r["time"], r.get("interval") or [], json.dumps(r, sort_keys=True))
    )


def run(
    args: list[str], capsys: pytest.CaptureFixture[str], engine: str = "reference"
) -> list[dict[str, Any]]:
    """The results ``rsep run --engine engine`` writes for ``args``, in time order; the
    answers of one instant (a bag) by interval, then canonically."""
    if engine == "live":
        return live(args, capsys)
    assert cli.main(["run", "--engine", engine, *args]) == 0, capsys.readouterr().err
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    times = [r["time"] for r in found]
    assert times == sorted(times)
    return ordered(found)


def short(result: dict[str, Any]) -> tuple[int, list[int], dict[str, str]]:
    """``(time, interval, bindings)`` with literals reduced to their lexical form."""
    bindings = {
        name: term.split('"')[1] if term.startswith('"') else term.rsplit("#", 1)[-1].rstrip(">")
        for name, term in result["bindings"].items()
    }
    return result["time"], result["interval"], bindings


def live(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """``rsep run --live`` on ``args``: each ``--stream IRI=FILE`` becomes a folder holding
    the file and then a tick (an event of another stream) just after the last instant
    (``--until N``: N), which moves the folder's watermark past it, read to its end
    (``--available-now``); the answers at instants up to that one (a live query does not
    take ``--until``)."""
    work = Path(tempfile.mkdtemp(prefix="rsep-live-"))
    rest, until = list(args), None
    if "--until" in rest:
        at = rest.index("--until")
        until = int(rest[at + 1])
        del rest[at : at + 2]
    settings = dict(rest[i + 1].split("=", 1) for i, item in enumerate(rest) if item == "--set")
    unit = Query(Path(rest[0]).read_text(), parameters=settings).plan.parameters.time_unit
    folders: list[Path] = []
    last = 0
    for i, item in enumerate(rest):
        if i and rest[i - 1] == "--stream" and "=" not in item:
            pytest.skip("a SPAseq description names its stream files; live reads folders")
        if i and rest[i - 1] == "--stream":
            iri, path = item.split("=", 1)
            folder = work / f"in{i}"
            folder.mkdir()
            shutil.copy(path, folder)
            events = read_events(Path(path), stream=iri, time_unit=unit)
            last = max([last, *(e.t_end for e in events)])
            folders.append(folder)
            rest[i] = f"{iri}={folder}"
    end = last if until is None else until
    node = NamedNode("http://example.org/tick")
    for folder in folders:
        ticks = [Event.point("http://example.org/clock", end + 1, [Triple(node, node, node)])]
        write_events(ticks, folder / "zz-tick.nq", "nquads", with_stream=True)
        later = time.time() + 5  # the file source takes files in order of modification
        os.utime(folder / "zz-tick.nq", (later, later))
    out = work / "out.jsonl"
    command = ["run", *rest, "--live", "--available-now", "--quiet"]
    command += ["--checkpoint", str(work / "ck"), "--output", str(out)]
    assert cli.main(command) == 0, capsys.readouterr().err
    capsys.readouterr()
    found = [json.loads(line) for line in out.read_text().splitlines()]
    return ordered([r for r in found if r["time"] <= end])


# SPAseq ---------------------------------------------------------------------------------


def test_spaseq_kleene_plus_folder(
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    engine: str,
) -> None:
    """spaseq/tests/kleeneplus: SEQ (A; B+; C) with FILTER (?p2 < ?p1) and ?p3 = 16 over
    prices 14, 88, 11, 10, 16 (one event a second). Iterations of B+ join their mappings
    (Def. 13-14), so each match has one B event (tests/semantics/test_semantics_spaseq.py
    derives the matches); the description file names its stream (``--stream FILE``)."""
    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    found = run(
        ["kleeneplus/queryKleene.q", "--stream", "kleeneplus/streamKleene.txt"], capsys, engine
    )
    assert [short(r) for r in found] == [
        (4000, [0, 4000], {"company": "eBay", "p1": "14.0", "p2": "11.0", "p3": "16.0"}),
        (4000, [1000, 4000], {"company": "eBay", "p1": "88.0", "p2": "11.0", "p3": "16.0"}),
        (4000, [2000, 4000], {"company": "eBay", "p1": "11.0", "p2": "10.0", "p3": "16.0"}),
    ]


def test_spaseq_external_knowledge_base_folder(
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    engine: str,
) -> None:
    """spaseq/tests/externalknowledgebase: GPM C's ``GRAPH <kb>`` joins eBay's name and
    location from the ``--graph`` file (Def. 15)."""
    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    folder = "externalknowledgebase"
    args = [f"{folder}/queryKB.q", "--stream", f"{folder}/streamKB.txt"]
    args += ["--graph", f"http://www.example.com/kb={folder}/externalKB.nt"]
    found = run(args, capsys, engine)
    assert [short(r) for r in found] == [
        (
            2000,
            [0, 2000],
            {
                "company": "eBay",
                "loc": "usa",
                "name": "ebay",
                "p1": "14.0",
                "p2": "12.0",
                "p3": "11.0",
            },
        )
    ]
    assert (
        cli.main(["run", "--engine", "reference", *args[:3]]) == 1
    )  # the knowledge base graph is not given
    assert "<http://www.example.com/kb>" in capsys.readouterr().err


# RSEP-QL --------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
EX = "http://example.org/"
RSEPQL_EXAMPLE_4 = """PREFIX : <http://example.org/>
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :S [LANDMARK T0 1]
FROM NAMED WINDOW :w2 ON :S [RANGE 5 STEP 1]
WHERE {
  MATCH ( EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 { ?y :q ?z } )
}
"""


def test_rsepql_example_4_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """RSEP-QL Example 4 in rsep's syntax over Fig. 1's stream (rebuilt in
    tests/semantics/data/rsepql_s.trig), under the dialect's defaults (W^τ reads the last
    closed window, no engine profile): at 8 the answer is Example 9's bag, a2 b2 c2 twice
    (from G3 at 6 and G4 at 8), Rstream at every window close with content."""
    query = tmp_path / "example4.rsepql"
    query.write_text(RSEPQL_EXAMPLE_4, encoding="utf-8")
    stream = f"http://example.org/S={REPO / 'tests/semantics/data/rsepql_s.trig'}"
    found = run([str(query), "--stream", stream, "--until", "10"], capsys, engine)
    at_8 = sorted((r["bindings"]["x"], r["bindings"]["z"]) for r in found if r["time"] == 8)
    ex = "http://example.org/"
    assert at_8 == [
        (f"<{ex}a1>", f"<{ex}c1>"),
        (f"<{ex}a2>", f"<{ex}c2>"),
        (f"<{ex}a2>", f"<{ex}c2>"),
    ]
    assert all("interval" not in r for r in found)  # MATCH drops the time annotations
    assert sorted({r["time"] for r in found}) == [6, 7, 8, 9, 10]


# EP-SPARQL ------------------------------------------------------------------------------

EPSPARQL_QUERY_3 = """PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT ?company
WHERE {{ ?company :hasStockPrice ?price1 }
  SEQ { ?company :hasStockPrice ?price2 }}
  EQUALSOPTIONAL
     {{ ?company :hasStockPrice ?price1 }
  SEQ { ?company :acquired ?othercompany }
  SEQ { ?company :hasStockPrice ?price2 }}
FILTER ( ?price2 > ?price1 * 1.5 &&
         !BOUND(?othercompany) &&
         getDURATION() < "P15D"^^xsd:duration )
"""


def test_epsparql_query_3_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """EP-SPARQL query (3) (tests/lang/paper_queries/epsparql/query3.epsparql) over the
    invented stock stream of tests/semantics/data/epsparql/stock.trig: a rise of more than
    50% in under 15 days with no acquisition in between holds for :umbrella (its
    acquisition comes later) and :cyberdyne (at the same instant as the first price: SEQ is
    strict), each reported once, at the second price, with the match's interval (1 to 10
    March 2011)."""
    query = tmp_path / "query3.epsparql"
    query.write_text(EPSPARQL_QUERY_3, encoding="utf-8")
    stream = f"http://example.org/s={REPO / 'tests/semantics/data/epsparql/stock.trig'}"
    found = run([str(query), "--stream", stream], capsys, engine)
    march_1, march_10 = 1298937600000, 1299715200000
    assert found == [
        {
            "time": march_10,
            "bindings": {"company": f"<http://example.org/{name}>"},
            "interval": [march_1, march_10],
        }
        for name in ("cyberdyne", "umbrella")
    ]


def _paper_query(tmp_path: Path, name: str) -> str:
    """A query of tests/lang/paper_queries/epsparql with its prefixes, as a file."""
    text = (REPO / "tests" / "lang" / "paper_queries" / "epsparql" / name).read_text("utf-8")
    path = tmp_path / name
    path.write_text(f"PREFIX : <{EX}>\nPREFIX xsd: <{XSD}>\n{text}", encoding="utf-8")
    return str(path)


def test_epsparql_query_2_reads_the_rules_of_query_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """``--rules``: EP-SPARQL query (2) over tests/semantics/data/epsparql/ratings.trig reads
    the downratings query (4) derives (``clos_{(4)}(S)``, Sect. 4.2; the oracle's
    test_query_2_over_the_closure_of_query_4): :acme's drop comes with :moodys, which
    downrated it before; :globex has no agency, and :initech's downrating comes after its
    drop. The rule is part of the plan, so every engine reads it."""
    two, four = _paper_query(tmp_path, "query2.epsparql"), _paper_query(tmp_path, "query4.epsparql")
    stream = f"{EX}S={REPO / 'tests/semantics/data/epsparql/ratings.trig'}"
    found = run([two, "--stream", stream, "--rules", four], capsys, engine)
    agencies = sorted(
        (r["bindings"]["company"], r["bindings"].get("ratingagency", "")) for r in found
    )
    assert agencies == [
        (f"<{EX}acme>", f"<{EX}moodys>"),
        (f"<{EX}globex>", ""),
        (f"<{EX}initech>", ""),
    ]
    if engine == "reference":
        alone = run([two, "--stream", stream], capsys, engine)
        assert all("ratingagency" not in r["bindings"] for r in alone) and len(alone) == 3


def test_epsparql_query_6_reads_the_rules_of_query_5_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """``--rules``: EP-SPARQL query (6) over tests/semantics/data/epsparql/acme.trig reads
    the running count and sum query (5) derives, (5) as printed, a CONSTRUCT over a
    sub-select (Sect. 4.1): the one answer, the price of 28 February before the point (4,
    100) that ends on 10 March at noon, more than 10 days later. Its one projection,
    ``?average``, reads variables (6)'s pattern does not bind, so it is unbound (the
    oracle's test_query_6_outputs_once_the_window_is_exceeded_but_reads_unbound_variables)."""
    six, five = _paper_query(tmp_path, "query6.epsparql"), _paper_query(tmp_path, "query5.epsparql")
    stream = f"{EX}S={REPO / 'tests/semantics/data/epsparql/acme.trig'}"
    [found] = run([six, "--stream", stream, "--rules", five], capsys, engine)
    march_10_noon, february_28 = 1_299_758_400_000, 1_298_851_200_000
    assert short(found) == (march_10_noon, [february_28, march_10_noon], {})
    if engine == "reference":
        assert run([six, "--stream", stream], capsys, engine) == []


def test_rules_that_are_no_epsparql_construct_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``--rules`` query must be an EP-SPARQL CONSTRUCT, and only an EP-SPARQL query reads
    rules: both refused with the file named (exit 1)."""
    two = _paper_query(tmp_path, "query2.epsparql")
    stream = f"{EX}S={REPO / 'tests/semantics/data/epsparql/ratings.trig'}"
    assert cli.main(["run", two, "--stream", stream, "--rules", two]) == 1
    assert f"--rules {two}: a CONSTRUCT rule needs a CONSTRUCT query" in capsys.readouterr().err
    four = _paper_query(tmp_path, "query4.epsparql")
    rsepql = tmp_path / "example4.rsepql"
    rsepql.write_text(RSEPQL_EXAMPLE_4, encoding="utf-8")
    assert cli.main(["run", str(rsepql), "--stream", stream, "--rules", four]) == 1
    assert "not an EP-SPARQL event pattern" in capsys.readouterr().err


# RSEP-QL's input unit ---------------------------------------------------------------------

RSEPQL_EXAMPLE_11 = RSEPQL_EXAMPLE_4.replace(
    "MATCH (", "MATCH [SELECTION chronological CONSUMPTION chronological] ("
)


@pytest.mark.parametrize("how", ["default", "pragma", "set"])
def test_rsepql_input_unit_from_pragma_or_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, how: str
) -> None:
    """Example 4 under Example 11's policies (SEQ^c, P^c) over Fig. 1's stream continued
    (tests/semantics/data/rsepql/s_continued.trig: (a1 p b1) again at 12, (b1 q c1) again at
    14). At 6 the answer uses a1 b1 c1 and a2 b2 c2. Under Def. 8-9's sets of triples
    (``input_unit`` triple, the default) the repeated triples are not new and were consumed:
    only a4 b4 c4 at 14; counted per stream item (``PRAGMA input_unit = occurrence`` or
    ``--set input_unit=occurrence``, Sect. 2 and Example 11's reading) a1 b1 c1 matches
    again at 14."""
    text = RSEPQL_EXAMPLE_11
    args = []
    if how == "pragma":
        text = text.replace("SELECT", "PRAGMA input_unit = occurrence\nSELECT", 1)
    elif how == "set":
        args = ["--set", "input_unit=occurrence"]
    query = tmp_path / "example11.rsepql"
    query.write_text(text, encoding="utf-8")
    stream = f"{EX}S={REPO / 'tests/semantics/data/rsepql/s_continued.trig'}"
    found = run([str(query), "--stream", stream, *args], capsys, engine)
    rows = sorted((r["time"], r["bindings"]["x"], r["bindings"]["z"]) for r in found)
    again = [(14, f"<{EX}a1>", f"<{EX}c1>")] if how != "default" else []
    assert rows == sorted(
        [
            (6, f"<{EX}a1>", f"<{EX}c1>"),
            (6, f"<{EX}a2>", f"<{EX}c2>"),
            *again,
            (14, f"<{EX}a4>", f"<{EX}c4>"),
        ]
    )


# CQELS-CEP ------------------------------------------------------------------------------

PAPER = REPO / "tests" / "lang" / "paper_queries"
CQELSCEP = REPO / "tests" / "semantics" / "data" / "cqelscep"


def test_cqelscep_vienna_example_6_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """CQELS-CEP Examples 6-9: the Vienna transport query (the paper's text, with the
    prefixes it leaves undeclared and the paper's minutes as the time unit) over Example
    3's stream and Example 2's map: two delays of subway :a1 at :m (10 and 16) with no
    arrival in between, and :m reaches :c by subway only: ``?s = :m`` at 16, over [10, 16],
    and nothing else."""
    prefixes = (
        "PREFIX : <http://example.org/>\nPREFIX ex: <http://example.org/ex#>\n"
        "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nPRAGMA time_unit = min\n"
    )
    query = tmp_path / "example6.cqelscep"
    query.write_text(prefixes + (PAPER / "cqelscep" / "example6.cqelscep").read_text())
    ex = "http://example.org/ex#"
    args = [str(query), "--stream", f"{ex}publicTransport={CQELSCEP / 'vienna_stream.trig'}"]
    args += ["--graph", f"{ex}transportationMap={CQELSCEP / 'vienna_map.ttl'}"]
    minute = 60_000
    assert run(args, capsys, engine) == [
        {
            "time": 16 * minute,
            "bindings": {"s": "<http://example.org/m>"},
            "interval": [10 * minute, 16 * minute],
        }
    ]
