"""The ``rsep`` command line: help, version, exit codes, ``rsep convert``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rsep
from rsep.cli import main as cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rsep.cli.main", *args], capture_output=True, text=True
    )


def test_help_lists_the_commands_and_exit_codes() -> None:
    done = run("--help")
    assert done.returncode == 0
    assert "convert" in done.stdout
    assert "1  user error" in done.stdout and "2  internal error" in done.stdout


def test_version() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"rsep {rsep.__version__}"


def test_python_m_rsep_is_the_command(tmp_path: Path) -> None:
    """``python -m rsep`` runs the same command, with its exit codes."""
    done = subprocess.run(
        [sys.executable, "-m", "rsep", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"rsep {rsep.__version__}"
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x WHERE {\n  ?x ?y \n}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rsep", "explain", str(query)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "line 3" in done.stderr and "Traceback" not in done.stderr


def test_user_error_exits_1_with_a_message_and_no_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["convert", "--mapping", "no-such-mapping", "x.csv", "-o", "out"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_USER_ERROR
    assert err.startswith("rsep: error: no mapping file 'no-such-mapping'")
    assert "Traceback" not in err


def test_internal_error_exits_2_with_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(name: object) -> object:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr("rsep.rdf.mapping.load_mapping", boom)
    code = cli.main(["convert", "--mapping", "x", "in.csv", "-o", "out"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_INTERNAL_ERROR
    assert "Traceback" in err and "internal error" in err


def test_list_mappings(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["convert", "--list-mappings"]) == 0
    assert "aarhus-traffic" in capsys.readouterr().out


def test_lookup_needs_name_equals_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = cli.main(
        ["convert", "-m", "aarhus-traffic", str(tmp_path), "-o", "o", "--lookup", "oops"]
    )
    assert code == 1 and "NAME=PATH" in capsys.readouterr().err


@pytest.mark.spark
def test_convert_bad_input_via_the_cli(
    spark: object, tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "AarhusTrafficData182955.stream"
    src.write_text(
        "status,avgMeasuredTime,avgSpeed,extID,medianMeasuredTime,TIMESTAMP,vehicleCount,_id,REPORT_ID\n"
        "OK,74,50,668,74,2014-08-01T07:50:00,5,1,182955\n"
        "OK,74,50,668,74,not-a-time,5,2,182955\n"
    )
    lookup = f"property={repo_root / 'data/aarhus/kb/SensorRepository-extract.nt'}"
    args = ["convert", "-m", "aarhus-traffic", str(src), "--lookup", lookup, "-q"]
    assert cli.main([*args, "-o", str(tmp_path / "a")]) == 1
    assert f"{src}:3: unparsable timestamp 'not-a-time'" in capsys.readouterr().err
    assert (
        cli.main([*args, "-o", str(tmp_path / "b.nq"), "-f", "nquads", "--on-error", "skip"]) == 0
    )
    out = capsys.readouterr().out
    assert "rejected   1 (dead letters in" in out and "events     1 on 1 stream(s)" in out
    assert (tmp_path / "b.nq.rejected.jsonl").read_text().count("\n") == 1
