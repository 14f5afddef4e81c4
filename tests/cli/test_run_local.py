"""``rsep run --engine local`` and ``--engine spark``: the incremental engine, in one
process or inside Spark tasks, writes the oracle's results (``--engine reference``) for the
plans of every language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_run import DATA, EX, lines, query, stream
from test_run_events import RSEPQL_EXAMPLE_4

from rsep.cli import main as cli


def both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[list[str], list[str]]:
    """The results of the oracle and of the local engine for ``rsep run args``, in time
    order; the answers of one instant are a bag, compared in a canonical order."""
    out = []
    for engine in ("reference", "local"):
        assert cli.main(["run", *args, "--engine", engine]) == 0, capsys.readouterr().err
        found = lines(capsys.readouterr().out)
        times = [r["time"] for r in found]
        assert times == sorted(times)  # type: ignore[type-var]
        out.append(sorted(json.dumps(r, sort_keys=True) for r in found))
    return out[0], out[1]


SHOPS = f"""PREFIX : <{EX}>
SELECT ?who ?owner
FROM <{EX}shops>
FROM NAMED WINDOW :w ON :S_nearby [RANGE 5 STEP 2]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} ?owner :owns ?shop }}
"""


def test_local_engine_on_rspql_windows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A C-SPARQL window query, and an RSP-QL window joined with a static graph (RSP-QL
    Example 1's shops): the engine's incremental window state gives the oracle's answers,
    instant by instant."""
    reference, local = both([query(tmp_path), "--stream", stream()], capsys)
    assert local == reference and reference
    shops = ["--graph", f"{EX}shops={DATA / 'g_shops.ttl'}"]
    reference, local = both([query(tmp_path, SHOPS), "--stream", stream(), *shops], capsys)
    assert local == reference and reference


def test_instants_pyoxigraph_evaluates_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shops query with its owner OPTIONAL, which the columnar solver does not take:
    the oracle's answers, and a summary line counting the instants pyoxigraph evaluated;
    the plain join (columnar) has no such line, and ``--quiet`` none either."""
    shops = ["--graph", f"{EX}shops={DATA / 'g_shops.ttl'}"]
    optional = SHOPS.replace("?owner :owns ?shop", "OPTIONAL { ?owner :owns ?shop }")
    args = [query(tmp_path, optional), "--stream", stream(), *shops]
    reference, local = both(args, capsys)
    assert local == reference and reference
    assert cli.main(["run", *args, "--engine", "local"]) == 0
    err = capsys.readouterr().err
    assert "evaluation instant(s) whose graph pattern the columnar solver does not take" in err
    assert cli.main(["run", *args, "--engine", "local", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    plain = [query(tmp_path, SHOPS), "--stream", stream(), *shops, "--engine", "local"]
    assert cli.main(["run", *plain]) == 0
    assert "evaluated by pyoxigraph" not in capsys.readouterr().err


def test_local_engine_on_spaseq_folders(
    shared_data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPAseq's kleeneplus and externalknowledgebase folders: the NFA runtime's results are
    the oracle's (three matches; one match joined with the knowledge base)."""
    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    kleene = ["kleeneplus/queryKleene.q", "--stream", "kleeneplus/streamKleene.txt"]
    reference, local = both(kleene, capsys)
    assert local == reference and len(reference) == 3
    kb = "externalknowledgebase"
    args = [f"{kb}/queryKB.q", "--stream", f"{kb}/streamKB.txt"]
    args += ["--graph", f"http://www.example.com/kb={kb}/externalKB.nt"]
    reference, local = both(args, capsys)
    assert local == reference and len(reference) == 1


def test_local_engine_on_an_rsepql_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RSEP-QL Example 4 (EVENT w1 SEQ EVENT w2 over Fig. 1's stream): the engine's selection
    state over its windows gives the oracle's answers, instant by instant (Example 9's bag
    at 8 among them)."""
    trig = DATA / "rsepql_s.trig"
    args = [query(tmp_path, RSEPQL_EXAMPLE_4), "--stream", f"http://example.org/S={trig}"]
    reference, local = both([*args, "--until", "10"], capsys)
    assert local == reference and len(reference) > 3


@pytest.mark.spark
def test_spark_engine_on_the_kleene_plus_folder(
    spark: object,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--engine spark`` (the engine inside Spark tasks, on the tests' local session) writes
    the oracle's results on SPAseq's kleeneplus folder."""
    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    args = ["kleeneplus/queryKleene.q", "--stream", "kleeneplus/streamKleene.txt"]
    assert cli.main(["run", *args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)
    assert cli.main(["run", *args, "--engine", "spark"]) == 0, capsys.readouterr().err
    assert lines(capsys.readouterr().out) == reference and len(reference) == 3


@pytest.mark.spark
def test_spark_engine_runs_the_columnar_engine_on_the_strict_folder(
    spark: object,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--engine spark`` on the strict-contiguity folder: the columnar engine in Spark
    tasks (the per-event replay is not run) writes the oracle's results; the old
    ``--columnar`` option (Spark SQL joins) is gone."""
    from rsep.spark import replay

    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    args = ["strict-contiguity/queryIF.q", "--stream", "strict-contiguity/streamIF.txt"]
    assert cli.main(["run", *args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)

    def no_replay(*_: object, **__: object) -> None:
        raise AssertionError("the per-event replay ran")

    monkeypatch.setattr(replay, "evaluate_rows", no_replay)
    assert cli.main(["run", *args, "--engine", "spark"]) == 0, capsys.readouterr().err
    assert lines(capsys.readouterr().out) == reference and len(reference) == 1
    with pytest.raises(SystemExit):
        cli.main(["run", *args, "--engine", "spark", "--columnar"])
    assert "--columnar" in capsys.readouterr().err


@pytest.mark.spark
def test_spark_engine_honours_until_on_windows(
    spark: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--until`` on ``--engine spark``: a window query's answers stop at ``until`` as the
    oracle's do (the Spark tasks once pushed later events, whose arrival completed later
    instants), and the RSEP-QL Example 4 answers run inside Spark tasks too."""
    (tmp_path / "rsepql").mkdir()
    for args in (
        [query(tmp_path), "--stream", stream(), "--until", "6"],
        [
            query(tmp_path / "rsepql", RSEPQL_EXAMPLE_4),
            "--stream",
            f"http://example.org/S={DATA / 'rsepql_s.trig'}",
            "--until",
            "8",
        ],
    ):
        out = []
        for engine in ("reference", "spark"):
            assert cli.main(["run", *args, "--engine", engine]) == 0, capsys.readouterr().err
            found = lines(capsys.readouterr().out)
            out.append(sorted(json.dumps(r, sort_keys=True) for r in found))
        assert out[0] == out[1] and out[0]
        assert max(json.loads(r)["time"] for r in out[1]) <= int(args[-1])


def test_local_engine_reads_the_event_store_and_n_quads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repo_root: Path
) -> None:
    """The V shape over planted bars (``rsep bench``'s stand-in data), read from the
    N-Quads file and from the Parquet event store (the columnar engine reads both straight
    into batches): the oracle's 14 answers from either."""
    from rsep.workloads.bench import KB_GRAPH, prepare_bars
    from rsep.workloads.stock import planted_vshapes, write_vshape_bars

    data = prepare_bars(write_vshape_bars(tmp_path, 200), tmp_path)
    vshape = repo_root / "examples" / "uc4-stock" / "v-shape.spaseq"
    kb = ["--graph", f"{KB_GRAPH}={data.kb}"]
    stream = "http://example.org/stream/nasdaq"
    reference, local = both([str(vshape), "--stream", f"{stream}={data.nquads}", *kb], capsys)
    assert local == reference and len(reference) == planted_vshapes(200) == 14
    parts = sorted(p for p in data.store.iterdir() if p.is_dir())
    args = [str(vshape), "--stream", f"{stream}={parts[0]}", *kb, "--engine", "local"]
    assert cli.main(["run", *args]) == 0
    from_store = sorted(json.dumps(r, sort_keys=True) for r in lines(capsys.readouterr().out))
    assert from_store == reference


# Rows evaluated exactly ------------------------------------------------------------------

DECIMALS = """PREFIX ex: <http://example.org/>
SELECT ?c ?p1 ?p2
WITHIN 60 SECONDS
FROM STREAM S1 <http://example.org/stocks>
WHERE SEQ (A, B)
{
  DEFINE GPM A ON S1 { ?c ex:price ?p1 . FILTER (?p1 > 1.00000000000000001) }
  DEFINE GPM B ON S1 { ?c ex:price ?p2 . }
}
"""


def _decimal_prices(path: Path) -> int:
    """Prices a double cannot tell from the FILTER's constant (so the compiled program
    cannot decide them) alternating with plain ones; the count of undecidable rows."""
    from pyoxigraph import Literal, NamedNode, Triple

    from rsep.rdf.event import Event
    from rsep.rdf.formats import write_events

    decimal = NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
    prices = ["1.00000000000000003", "2.5", "1.00000000000000000", "3", "1.00000000000000002"]
    events = [
        Event.point(
            "http://example.org/stocks",
            1000 * k,
            [Triple(NamedNode(EX + "c"), NamedNode(EX + "price"), Literal(v, datatype=decimal))],
        )
        for k, v in enumerate(prices)
    ]
    write_events(events, path, "nquads", with_stream=True)
    return 3


def test_rows_evaluated_exactly_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FILTER on a GPM's own values that its program cannot decide for three rows: the
    columnar engine evaluates them by pyoxigraph (the oracle's answers) and says so in the
    ``--progress`` line and, without it, in a summary line; ``--quiet`` says nothing."""
    data = tmp_path / "prices.nq"
    undecided = _decimal_prices(data)
    args = ["run", query(tmp_path, DECIMALS), "--stream", str(data)]
    assert cli.main([*args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)
    assert len(reference) == 3, reference  # A at 0, 1000 and 3000 (1.0 fails it), B next
    assert cli.main([*args, "--engine", "local", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert lines(out) == reference
    assert "records read, " in err and f"{undecided} FILTER rows evaluated exactly" in err
    assert cli.main([*args, "--engine", "local"]) == 0
    err = capsys.readouterr().err
    assert f"rsep: {undecided} solution row(s) whose FILTER the compiled programs" in err
    assert cli.main([*args, "--engine", "local", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.spark
def test_rows_evaluated_exactly_are_shown_on_spark(
    spark: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same count from the columnar engine in Spark tasks, in the ``--progress`` line,
    with the oracle's answers; a negation (on the columnar engine too) shows its count."""
    data = tmp_path / "prices.nq"
    undecided = _decimal_prices(data)
    args = ["run", query(tmp_path, DECIMALS), "--stream", str(data)]
    assert cli.main([*args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)
    assert cli.main([*args, "--engine", "spark", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert lines(out) == reference
    assert "rsep: 5 records read, " in err and f"{undecided} FILTER rows evaluated exactly" in err
    negated = DECIMALS.replace("SEQ (A, B)", "SEQ (A, B!, B)")
    args = ["run", query(tmp_path, negated), "--stream", str(data)]
    assert cli.main([*args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)
    assert cli.main([*args, "--engine", "spark", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert lines(out) == reference
    assert "rsep: 5 records read, " in err and "FILTER rows evaluated exactly" in err
