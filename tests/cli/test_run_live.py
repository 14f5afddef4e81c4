"""``rsep run`` live (a folder with ``--live``): late events and bad records counted in
the summary and written to ``--late`` and ``--dead-letter``, every good answer in
``--output``; the options a batch run does not take are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rsep.cli import main as cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spark"))

from test_live import KEYED, arrive, tick
from test_replay import canonical, compiled, market, oracle

from rsep.rdf.results import read_results


@pytest.mark.spark
def test_late_and_bad_records_go_to_their_files(
    spark: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file with a bad line, then (a second run from the checkpoint) a file whose events
    come after the watermark passed them: ``--on-error skip`` keeps the good events, the
    bad line goes to the dead-letter file with file:line and reason, the late events to the
    late file, the summaries count both; the answers are the oracle's over the events on
    time."""
    query = tmp_path / "q.rq"
    query.write_text(KEYED, encoding="utf-8")
    events = market(31, 40)
    late = [e for e in events[5:20] if "price" in str(next(iter(e.graph)).predicate)][:2]
    on_time = [e for e in events if e not in late]
    arrive(tmp_path / "in", "part-0.nq", on_time[:20])
    first = tmp_path / "in" / "part-0.nq"
    first.write_text(first.read_text() + "<http://example.org/x> oops .\n")
    bad_line = len(first.read_text().splitlines())
    arrive(tmp_path / "in", "part-1.nq", on_time[20:])
    out, lost, dead = tmp_path / "out.jsonl", tmp_path / "late.jsonl", tmp_path / "dead.jsonl"
    args = ["run", str(query), "--live", "--stream", str(tmp_path / "in"), "--available-now"]
    args += ["--on-error", "skip", "--dead-letter", str(dead), "--late", str(lost)]
    args += ["--output", str(out), "--checkpoint", str(tmp_path / "ck")]
    assert cli.main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert f"1 bad record(s) skipped (written to {dead})" in err
    assert f"{first}:{bad_line}: " in err and "late event" not in err
    arrive(tmp_path / "in", "part-2.nq", late)
    arrive(tmp_path / "in", "part-3.nq", [tick(10**7)])
    assert cli.main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert f"{len(late)} late event(s) left out (written to {lost})" in err
    (letter,) = [json.loads(line) for line in dead.read_text().splitlines()]
    assert letter["position"] == f"{first}:{bad_line}" and letter["reason"]
    assert len(lost.read_text().splitlines()) == len(late)
    answers = list(read_results(out.read_text().splitlines()))
    assert canonical(answers) == oracle(compiled(KEYED), on_time)


def test_live_options_are_refused_in_a_batch_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = tmp_path / "q.rq"
    query.write_text(KEYED, encoding="utf-8")
    data = tmp_path / "s.nq"
    from rsep.rdf.formats import write_events

    write_events(market(1, 5), data, "nquads", with_stream=True)
    for extra in (["--late", "x.jsonl"], ["--idle", "3"]):
        args = ["run", str(query), "--stream", str(data), "--engine", "local", *extra]
        assert cli.main(args) == 1
        assert "are for live queries" in capsys.readouterr().err
    args = ["run", str(query), "--stream", str(data), "--dead-letter", "x.jsonl"]
    assert cli.main(args) == 1
    assert "--on-error skip" in capsys.readouterr().err


@pytest.mark.parametrize(
    "engine", ["local", "reference", pytest.param("spark", marks=pytest.mark.spark)]
)
def test_bad_records_skipped_in_a_run_over_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, request: pytest.FixtureRequest
) -> None:
    """``rsep run --on-error skip`` over stream files (engines in this process, and Spark's
    read tasks): the bad lines are counted in the summary with file:line and written to
    ``--dead-letter`` (file, line, reason, record), every good event is read, and the
    answers are the oracle's over the good events; without ``skip`` the run stops at the
    first."""
    if engine == "spark":
        request.getfixturevalue("spark")
    query = tmp_path / "q.rq"
    query.write_text(KEYED, encoding="utf-8")
    events = market(31, 40)
    from rsep.rdf.formats import write_events

    data = tmp_path / "s.nq"
    write_events(events, data, "nquads", with_stream=True)
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = ["<http://example.org/x> oops .\n", '<http://example.org/y> <http://example.org/p> "\n']
    lines[len(lines) // 3 : len(lines) // 3] = [bad[0]]
    lines[2 * len(lines) // 3 : 2 * len(lines) // 3] = [bad[1]]
    data.write_text("".join(lines), encoding="utf-8")
    numbers = [i + 1 for i, line in enumerate(lines) if line in bad]
    out, dead = tmp_path / "out.jsonl", tmp_path / "dead.jsonl"
    args = ["run", str(query), "--stream", str(data), "--engine", engine, "--output", str(out)]
    assert cli.main(args) == 1
    if engine != "spark":  # Spark's task error names the record in its stack trace
        assert f"{data}:{numbers[0]}: " in capsys.readouterr().err
    capsys.readouterr()
    args += ["--on-error", "skip", "--dead-letter", str(dead)]
    assert cli.main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert f"2 bad record(s) skipped (written to {dead})" in err
    assert all(f"{data}:{n}: " in err for n in numbers)
    letters = [json.loads(line) for line in dead.read_text(encoding="utf-8").splitlines()]
    assert [(x["file"], x["line"]) for x in letters] == [(str(data), n) for n in numbers]
    answers = list(read_results(out.read_text(encoding="utf-8").splitlines()))
    expected = oracle(compiled(KEYED), events)
    assert expected and canonical(answers) == expected
