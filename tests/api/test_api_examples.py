"""The scripts of examples/api run as a user runs them (from the repository's root) and say
what they found; the use cases' scripts are run and checked by
tests/examples/test_api_use_cases.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPTS = {
    "rspql_background_graph.py": "10 answers",
    "epsparql_rules.py": "0 agencies without the rule",
    "incremental_feed.py": "400 events pushed, 176 answers",
}
"""Each script and a line its output holds."""
USE_CASES = REPO / "tests" / "examples" / "test_api_use_cases.py"


def test_every_script_is_run() -> None:
    """Each script of examples/api is run here or by the use cases' test module."""
    others = {p.name for p in (REPO / "examples" / "api").glob("*.py")} - set(SCRIPTS)
    assert others
    assert all(f'"{name}"' in USE_CASES.read_text(encoding="utf-8") for name in others)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_example_runs(script: str) -> None:
    path = REPO / "examples" / "api" / script
    done = subprocess.run(
        [sys.executable, str(path)], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert SCRIPTS[script] in done.stdout
    if script == "epsparql_rules.py":
        assert "<http://example.org/acme> <http://example.org/moodys>" in done.stdout
