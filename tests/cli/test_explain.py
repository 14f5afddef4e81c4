"""``rsep explain``: dialect, plan, parameters with their sources, automaton; errors exit 1."""

from __future__ import annotations

import io
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lang"))

from test_dialect_grammars import KNOWN_BAD, SHARED_CASES
from test_stream_checks import KNOWN_INVALID

from rsep.cli import main as cli

RSPQL = """PREFIX : <http://example.org/>
PRAGMA window.report = content_change
REGISTER ISTREAM :out AS
SELECT ?s
FROM NAMED WINDOW :w ON :S [RANGE PT10S STEP PT2S]
WHERE { WINDOW :w { ?s :p ?o } }
"""

SPASEQ = """PREFIX : <http://e/>
SELECT ?h
WITHIN 10 SECONDS
FROM STREAM S1 <http://e/s1>
WHERE {
  SEQ (A; B)
  DEFINE GPM A ON S1 { ?h :a ?x . }
  DEFINE GPM B ON S1 { ?h :b ?y . }
}
"""


def explain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *args: str
) -> tuple[int, str, str]:
    query = tmp_path / "query.rq"
    query.write_text(text, encoding="utf-8")
    code = cli.main(["explain", str(query), *args])
    out, err = capsys.readouterr()
    return code, out, err


def row(out: str, name: str) -> str:
    """The row of parameter ``name``: value, source and note, single-spaced."""
    section = out.split("\nparameters\n", 1)[1]
    line = next(x for x in section.splitlines() if x.startswith(f"  {name} "))
    return " ".join(line.split()[1:])


def test_explain_prints_dialect_plan_and_every_parameter_with_its_source(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = explain(capsys, tmp_path, RSPQL, "--set", "window.t0=2s")
    assert (code, err) == (0, "")
    first = out.splitlines()[0]
    assert first.startswith("dialect rspql (RSP-QL): detected from the text, cue ")
    assert "window        <http://example.org/w> on <http://example.org/S>" in out
    assert "output   stream <http://example.org/out>" in out
    assert row(out, "window.report") == (
        "content_change query text line 2, column 1: PRAGMA window.report = content_change"
    )
    assert row(out, "r2s") == "istream query text line 3, column 1: ISTREAM"
    assert row(out, "window.t0") == "2000 command line --set window.t0=2s"
    assert row(out, "window.present").startswith("closing dialect default RSP-QL: ")
    assert row(out, "window.bounds").startswith("open_closed built-in RSP-QL Def. 12")
    assert row(out, "profile").startswith("none dialect default RSP-QL: RSP-QL's own definitions")
    assert row(out, "selection").startswith("unrestricted dialect default RSP-QL: ")
    assert row(out, "max_runs").startswith("100000 built-in ")


def test_profile_and_dialect_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = explain(capsys, tmp_path, RSPQL, "--profile", "none", "--dialect", "rsepql")
    assert code == 0
    assert out.splitlines()[0] == "dialect rsepql (RSEP-QL): given by --dialect"
    assert row(out, "profile") == "none command line --profile none"
    assert row(out, "window.present").startswith("last_ended dialect default RSEP-QL: ")


@pytest.mark.parametrize(
    ("args", "pragma", "source"),
    [
        (("--profile", "csparql"), "", "command line --profile csparql"),
        ((), "PRAGMA profile = csparql\n", "query text line 2, column 1: PRAGMA profile = csparql"),
    ],
)
def test_an_engine_profile_is_explicit_and_shown(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: tuple[str, ...],
    pragma: str,
    source: str,
) -> None:
    """C-SPARQL's conventions apply to an RSP-QL query only when asked for, and explain
    names the profile's source and the parameters it sets."""
    text = RSPQL.replace(
        "PREFIX : <http://example.org/>\n", "PREFIX : <http://example.org/>\n" + pragma
    )
    code, out, _ = explain(capsys, tmp_path, text, *args)
    assert code == 0
    assert row(out, "profile") == "csparql " + source
    assert row(out, "window.bounds").startswith("closed_open profile profile csparql: ")
    assert row(out, "output.empty").startswith("true profile profile csparql: ")


def test_spaseq_explain_shows_the_automaton(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = explain(capsys, tmp_path, SPASEQ)
    assert code == 0 and out.startswith("dialect spaseq (SPAseq)")
    automaton = out.split("\nautomaton\n", 1)[1]
    assert "SEQ(A; B) (within 10s)" in automaton
    assert "-take->" in automaton and "-ignore->" in automaton


def test_whether_the_columnar_engine_takes_a_sequence_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repo_root: Path
) -> None:
    """The V shape runs on the columnar engine, its steps' FILTERs in the kernel and C's
    GRAPH joined by term ids; UC5's conjunction too."""
    examples = repo_root / "examples"
    code, out, _ = explain(
        capsys, tmp_path, (examples / "uc4-stock" / "v-shape.spaseq").read_text()
    )
    local = out.split("\nin this process (rsep run --engine local)\n", 1)[1]
    assert code == 0 and "columnar      yes" in local
    assert "partitions    by ?company" in local
    assert "step 3        , C" in local
    assert "GPM C         2 triple pattern(s) joined; GRAPH <http://example.org/kb/sp500>" in local
    traffic = (examples / "uc5-traffic" / "congestion-propagation.spaseq").read_text()
    code, out, _ = explain(capsys, tmp_path, traffic)
    local = out.split("\nin this process (rsep run --engine local)\n", 1)[1]
    assert "step 2        ; (B & C)" in local


def test_how_spark_runs_a_sequence_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repo_root: Path
) -> None:
    """The last section: the V shape runs on the columnar engine in Spark tasks,
    partitioned by its key; without PARTITION BY one task, and why; a negation runs on the
    columnar engine, and a GPM that is not a basic graph pattern there by the exact path;
    an EP-SPARQL plan without WITHIN in one task, and why; CityBench Q1 over time ranges."""
    vshape = (repo_root / "examples" / "uc4-stock" / "v-shape.spaseq").read_text("utf-8")
    code, out, _ = explain(capsys, tmp_path, vshape)
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert code == 0 and "partitions    by ?company: an event to the task owning" in spark
    assert "evaluated by  the columnar engine in Spark tasks" in spark
    code, out, _ = explain(capsys, tmp_path, SPASEQ)
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert "partitions    one task (no PARTITION BY): a sequence relates" in spark
    negated = SPASEQ.replace("SEQ (A; B)", "SEQ (A; B!; C)").replace(
        "  DEFINE GPM B", "  DEFINE GPM C ON S1 { ?h :c ?z . }\n  DEFINE GPM B"
    )
    code, out, _ = explain(capsys, tmp_path, negated)
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert code == 0 and "evaluated by  the columnar engine in Spark tasks" in spark
    bound = SPASEQ.replace("?h :b ?y . }", "?h :b ?y . BIND (1 AS ?one) }")
    assert bound != SPASEQ
    code, out, _ = explain(capsys, tmp_path, bound)
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert code == 0 and "evaluated by  the columnar engine in Spark tasks" in spark
    assert "GPM B         exact path: evaluated by pyoxigraph" in out
    code, out, _ = explain(capsys, tmp_path, _paper_query("query4.epsparql"))
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert (
        code == 0
        and "one task (EP-SPARQL without WITHIN over the whole pattern: a solution may join "
        "occurrences of any age)"
        in spark
    )
    citybench = (repo_root / "examples" / "citybench" / "Q1.rspql").read_text("utf-8")
    code, out, _ = explain(capsys, tmp_path, citybench)
    spark = out.split("\non Spark (rsep run --engine spark)\n", 1)[1]
    assert code == 0 and "partitions    time ranges: each task reads its range and the" in spark


def test_which_filters_may_go_to_the_exact_path_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repo_root: Path
) -> None:
    """ "In this process" names each FILTER and its path: the V shape's two FILTERs under
    the run's bindings in the kernel; a FILTER on a GPM's own values compiled, its
    undecided rows to pyoxigraph; STRENDS with no program, decided exactly per binding."""
    vshape = (repo_root / "examples" / "uc4-stock" / "v-shape.spaseq").read_text("utf-8")
    code, out, _ = explain(capsys, tmp_path, vshape)
    local = out.split("\nin this process (rsep run --engine local)\n", 1)[1]
    local = local.split("\non Spark", 1)[0]
    assert code == 0
    assert "FILTER of B   ?p2 < ?p1 * 0.998: compiled into the kernel" in local
    assert "FILTER of C   ?p3 > ?p1: compiled into the kernel" in local
    own = vshape.replace("FILTER (?p2 < ?p1 * 0.998)", "FILTER (?p2 < 10)")
    code, out, _ = explain(capsys, tmp_path, own)
    assert "FILTER of B   ?p2 < 10: compiled; the rows it cannot decide go to pyoxigraph" in out
    ends = vshape.replace("FILTER (?p2 < ?p1 * 0.998)", 'FILTER (STRENDS(STR(?company), "x"))')
    code, out, _ = explain(capsys, tmp_path, ends)
    assert "no program: decided exactly on each distinct binding" in out, out


def _paper_query(name: str) -> str:
    """An EP-SPARQL query of tests/lang/paper_queries/epsparql with its prefixes declared."""
    paper = Path(__file__).resolve().parents[1] / "lang" / "paper_queries" / "epsparql"
    prefixes = "PREFIX : <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
    return prefixes + (paper / name).read_text("utf-8")


def test_rules_of_other_queries_are_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--rules``: the EP-SPARQL rule the plan reads (query (4) of the paper) is part of the
    plan ``rsep explain`` prints, and a query that is no CONSTRUCT is refused naming it."""
    four = tmp_path / "query4.epsparql"
    four.write_text(_paper_query("query4.epsparql"), encoding="utf-8")
    two = _paper_query("query2.epsparql")
    code, out, _ = explain(capsys, tmp_path, two, "--rules", str(four))
    assert code == 0
    assert "  rule 1 " in out and "EP-SPARQL Q-closure" in out
    code, alone, _ = explain(capsys, tmp_path, two)
    assert code == 0 and "  rule 1 " not in alone
    code, _, err = explain(capsys, tmp_path, two, "--rules", str(tmp_path / "query.rq"))
    assert code == 1 and f"--rules {tmp_path / 'query.rq'}" in err


def test_a_rule_over_a_sub_select_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """EP-SPARQL query (5) as printed, a CONSTRUCT over a sub-select (Sect. 4.1), as the
    rule query (6) reads: the sub-select with its ``(e AS ?v)`` above its event pattern."""
    five = tmp_path / "query5.epsparql"
    five.write_text(_paper_query("query5.epsparql"), encoding="utf-8")
    six = _paper_query("query6.epsparql")
    code, out, _ = explain(capsys, tmp_path, six, "--rules", str(five))
    assert code == 0
    rule = out[out.index("  rule 1   CONSTRUCT { _:aaa <http://example.org/hasCount> ?count") :]
    assert rule.splitlines()[1:3] == [
        "    SubSelect SELECT (?prevcount + 1 AS ?count) (?prevsum + ?price AS ?sum)",
        "      EventFilter(expression=!BOUND(?inbetween) && getDURATION() < "
        '"P10D"^^<http://www.w3.org/2001/XMLSchema#duration>)',
    ]


def test_query_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT * WHERE { ?s ?p ?o }"))
    assert cli.main(["explain", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dialect sparql (SPARQL 1.1): no cue of a streaming dialect\nplan\n")


def test_syntax_error_with_caret_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = explain(capsys, tmp_path, "SELECT * WHERE {\n  ?s ?p \n}")
    assert code == cli.EXIT_USER_ERROR and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("rsep: error: line 3, column 1: found '}'")
    assert lines[1:] == ["  }", "  ^"]


def test_semantic_error_is_one_sentence_with_position(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = explain(capsys, tmp_path, "PRAGMA r2s = xstream\nSELECT * WHERE { ?s ?p ?o }")
    assert code == cli.EXIT_USER_ERROR
    assert err == (
        "rsep: error: line 1, column 1: PRAGMA r2s = xstream: 'xstream' is not allowed "
        "(unknown R2S 'xstream'); allowed: rstream | istream | dstream\n"
    )


def test_bad_set_value_and_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = explain(capsys, tmp_path, RSPQL, "--set", "r2s=xstream")
    assert code == cli.EXIT_USER_ERROR
    assert err == (
        "rsep: error: parameter r2s: 'xstream' is not allowed (unknown R2S 'xstream'); "
        "allowed: rstream | istream | dstream\n"
    )
    code, _, err = explain(capsys, tmp_path, RSPQL, "--set", "r2s")
    assert code == cli.EXIT_USER_ERROR
    assert err == "rsep: error: --set takes NAME=VALUE, e.g. --set r2s=istream, not 'r2s'\n"
    assert cli.main(["explain", str(tmp_path / "missing.rq")]) == cli.EXIT_USER_ERROR
    assert "cannot read the query" in capsys.readouterr().err


CORPUS = [c for c in SHARED_CASES if c.start == "query_unit" and c.dialect]


def test_explain_every_shared_corpus_query(
    shared_data: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each query of the shared corpus, through the command line with its dialect detected:
    explained (exit 0), or, for the known-invalid ones, their asserted message (exit 1)."""
    counts: Counter[tuple[str, str]] = Counter()
    for case in CORPUS:
        if case.id in KNOWN_BAD:
            continue
        code, out, err = explain(capsys, tmp_path, case.text())
        if case.id in KNOWN_INVALID:
            assert (code, err) == (1, f"rsep: error: {KNOWN_INVALID[case.id]}\n"), case.id
            counts[case.folder, "invalid"] += 1
            continue
        assert code == 0, (case.id, err)
        assert out.startswith(f"dialect {case.dialect} "), case.id
        counts[case.folder, "explained"] += 1
    folders = sorted({folder for folder, _ in counts})
    print(
        "\n".join(f"{f:34} {counts[f, 'explained']:>4} {counts[f, 'invalid']:>3}" for f in folders)
    )
    assert sum(counts[f, "explained"] for f in folders) >= 100


def test_the_explain_example_in_the_docs_is_current(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repo_root: Path
) -> None:
    """docs/languages.md, "How parameters are layered": the query and its explain output."""
    docs = (repo_root / "docs" / "languages.md").read_text(encoding="utf-8")
    section = docs.split("### How parameters are layered", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```\n")[1::2]
    query, shown = blocks[0], blocks[1]
    command, expected = shown.split("\n", 1)
    assert command == "$ rsep explain qex.rspql --set window.present=latest"
    code, out, _ = explain(capsys, tmp_path, query, "--set", "window.present=latest")
    assert code == 0 and out == expected
