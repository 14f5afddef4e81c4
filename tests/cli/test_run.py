"""``rsep run`` and ``rsep check`` on small files; errors exit 1, a departing answer 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsep.cli import main as cli

DATA = Path(__file__).resolve().parents[1] / "semantics" / "data"
EX = "http://example.org/"
QUERY = f"""REGISTER QUERY q AS
SELECT ?who ?shop
FROM STREAM <{EX}S_nearby> [RANGE 5ms STEP 2ms]
WHERE {{ ?who <{EX}isNearby> ?shop }}
"""
OWNED = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?who ?owner
FROM NAMED WINDOW :w ON :S_nearby [RANGE PT0.005S STEP PT0.002S]
WHERE {{ WINDOW :w {{ ?who :isNearby ?shop }} ?owner :owns ?shop }}
"""


def query(tmp_path: Path, text: str = QUERY) -> str:
    path = tmp_path / "q.rq"
    path.write_text(text, encoding="utf-8")
    return str(path)


def stream() -> str:
    return f"{EX}S_nearby={DATA / 's_nearby.tnt'}"


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_run_writes_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "run",
            "--engine",
            "reference",
            query(tmp_path),
            "--stream",
            stream(),
            "--set",
            "window.t0=1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    rows = lines(out)
    # windows [1 + 2k, 6 + 2k) close at 6, 8, …: C-SPARQL's window close + non-empty
    assert rows and {row["time"] for row in rows} == {6, 8, 10, 12, 14, 16}
    assert {"who", "shop"} == set(rows[0]["bindings"])  # type: ignore[arg-type]
    target = tmp_path / "out.jsonl"
    args = [
        "run",
        "--engine",
        "reference",
        query(tmp_path),
        "--stream",
        stream(),
        "--set",
        "window.t0=1",
    ]
    assert cli.main([*args, "--out", str(target)]) == 0
    assert lines(target.read_text()) == rows
    assert "result(s) written" in capsys.readouterr().err


def test_run_with_a_static_and_a_time_varying_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = query(tmp_path, OWNED)
    static = f"{EX}shops={DATA / 'g_shops.ttl'}"
    assert (
        cli.main(["run", "--engine", "reference", q, "--stream", stream()]) == 0
    )  # default graph not needed
    capsys.readouterr()
    for graph in (static, f"{EX}shops={DATA / 'G_shops.trig'}"):
        assert (
            cli.main(["run", "--engine", "reference", q, "--stream", stream(), "--graph", graph])
            == 0
        )
        capsys.readouterr()


def test_run_user_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = query(tmp_path)
    assert cli.main(["run", q, "--engine", "flink", "--stream", stream()]) == 1
    assert "unknown engine 'flink'" in capsys.readouterr().err
    assert cli.main(["run", "--engine", "reference", q, "--stream", "nofile"]) == 1
    assert "nofile: no such file" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "run",
                "--engine",
                "reference",
                q,
                "--stream",
                f"{EX}S_nearby={tmp_path / 'missing.tnt'}",
            ]
        )
        == 1
    )
    capsys.readouterr()
    bad = tmp_path / "bad.tnt"
    bad.write_text(f"<{EX}a> <{EX}isNearby> <{EX}b> 2 .\n<{EX}a> <{EX}isNearby> oops 3 .\n")
    assert cli.main(["run", "--engine", "reference", q, "--stream", f"{EX}S_nearby={bad}"]) == 1
    assert f"{bad}:2:" in capsys.readouterr().err
    assert cli.main(["run", "--engine", "reference", q]) == 1  # the window's stream is not given
    assert "no stream given" in capsys.readouterr().err
    assert (
        cli.main(["run", "--engine", "reference", str(tmp_path / "none.rq"), "--stream", stream()])
        == 1
    )
    capsys.readouterr()


def test_check_says_correct_or_where_the_answer_departs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = query(tmp_path)
    answer = tmp_path / "answer.jsonl"
    args = [
        "run",
        "--engine",
        "reference",
        q,
        "--stream",
        stream(),
        "--set",
        "window.t0=1",
        "--out",
        str(answer),
    ]
    assert cli.main(args) == 0
    capsys.readouterr()
    check = ["check", q, "--profile", "csparql", "--stream", stream(), "--answers", str(answer)]
    assert cli.main(check) == 0
    out = capsys.readouterr().out
    assert out.startswith("correct") and "t0 = 1" in out
    rows = answer.read_text().splitlines()
    answer.write_text("\n".join(rows[:1] + rows[2:]) + "\n")
    assert cli.main(check) == 3
    out = capsys.readouterr().out
    assert out.startswith("incorrect") and "first departure" in out and "correct at" in out


def test_check_reads_a_csrbench_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "csparql-answer.json"
    relation = {
        "head": {"vars": ["who", "shop"]},
        "timestamp": 5,
        "results": {
            "bindings": [
                {
                    "timestamp": 5,
                    "binding": {
                        "who": {"type": "uri", "value": f"{EX}nobody"},
                        "shop": {"type": "uri", "value": f"{EX}a"},
                    },
                }
            ]
        },
    }
    answer.write_text(json.dumps({"relations": [relation]}))
    args = ["check", query(tmp_path), "--profile", "csparql", "--stream", stream()]
    assert cli.main([*args, "--answers", str(answer), "--answer-granularity", "1"]) == 3
    assert "<http://example.org/nobody>" in capsys.readouterr().out
    answer.write_text('{"relations": [ {"timestamp": }')
    assert cli.main([*args, "--answers", str(answer)]) == 1
    assert f"{answer}:1:" in capsys.readouterr().err


def test_progress_lines_are_throttled_and_silent_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Progress shows counts and rates at most every few seconds, only when enabled;
    ``--progress`` adds a last line even to a short run, ``--quiet`` silences it."""
    import io

    from rsep.cli.run import Progress

    out = io.StringIO()
    progress = Progress(True, out, every=3600)
    progress.update(records=10, results=2)
    assert out.getvalue() == ""  # too soon
    progress.every = 0
    progress.update(records=20)
    line = out.getvalue()
    assert line.startswith("rsep: 20 records read, ") and "records/s, 2 results, 0:00:" in line
    silent = io.StringIO()
    Progress(False, silent, every=0).update(records=5)
    assert silent.getvalue() == ""
    args = [
        "run", "--engine", "local", query(tmp_path), "--stream", stream(), "--set", "window.t0=1",
    ]  # fmt: skip
    assert cli.main([*args, "--progress"]) == 0
    assert "records read" in capsys.readouterr().err
    assert cli.main([*args, "--progress", "--quiet", "--output", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().err == ""


def test_relative_iris_resolve_against_the_query_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CityBench's and CSR-Bench's queries name windows ``<w1>`` with no BASE: the query
    file's URI is the base (RFC 3986 sec. 5.1.3), so the plan has absolute names and the
    answers are those of the same query with absolute names; a BASE in the text wins."""
    relative = f"""SELECT ?who FROM NAMED WINDOW <w1> ON <{EX}S_nearby> [RANGE 5 STEP 2]
WHERE {{ WINDOW <w1> {{ ?who <{EX}isNearby> ?shop }} }}
"""
    absolute = relative.replace("<w1>", f"<{EX}w1>")
    out = []
    for text in (relative, absolute, f"BASE <{EX}>\n{relative}"):
        args = ["run", query(tmp_path, text), "--engine", "reference", "--stream", stream()]
        assert cli.main(args) == 0, capsys.readouterr().err
        out.append(lines(capsys.readouterr().out))
    assert out[0] == out[1] == out[2] and out[0]
    assert cli.main(["explain", query(tmp_path, relative)]) == 0
    assert (tmp_path / "w1").as_uri() in capsys.readouterr().out
