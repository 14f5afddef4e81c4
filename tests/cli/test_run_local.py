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
def test_spark_engine_columnar_on_the_strict_folder(
    spark: object,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--columnar``: the strict-contiguity folder's sequence is evaluated whole by Spark
    SQL joins (the engine's task is not run) and writes the oracle's results; the option
    is refused for the other engines."""
    from rsep.spark import replay

    monkeypatch.chdir(shared_data / "spaseq" / "tests")
    args = ["strict-contiguity/queryIF.q", "--stream", "strict-contiguity/streamIF.txt"]
    assert cli.main(["run", *args, "--engine", "reference"]) == 0
    reference = lines(capsys.readouterr().out)

    def no_engine(*_: object, **__: object) -> None:
        raise AssertionError("the engine path ran")

    monkeypatch.setattr(replay, "evaluate_rows", no_engine)
    assert cli.main(["run", *args, "--engine", "spark", "--columnar"]) == 0, capsys.readouterr().err
    assert lines(capsys.readouterr().out) == reference and len(reference) == 1
    assert cli.main(["run", *args, "--engine", "local", "--columnar"]) == 1
    assert "--columnar is for --engine spark" in capsys.readouterr().err


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
