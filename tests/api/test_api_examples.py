"""The scripts of examples/api run as a user runs them (from the repository's root) and say
what they found; the one on real data skips when ../shared is absent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"

SCRIPTS = {
    "rspql_background_graph.py": "11 answers",
    "epsparql_rules.py": "0 agencies without the rule",
    "incremental_feed.py": "400 events pushed, 176 answers",
    "stock_vshape_table.py": "8 V shapes",
}
"""Each script and a line its output holds (the stock example: examples/uc4-stock's 8)."""


def test_every_script_is_run() -> None:
    assert {p.name for p in (REPO / "examples" / "api").glob("*.py")} == set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_example_runs(script: str) -> None:
    path = REPO / "examples" / "api" / script
    if "../shared" in path.read_text(encoding="utf-8") and not SHARED.is_dir():
        pytest.skip(f"{script} reads ../shared/data, which is absent")
    done = subprocess.run(
        [sys.executable, str(path)], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert SCRIPTS[script] in done.stdout
    if script == "epsparql_rules.py":
        assert "<http://example.org/acme> <http://example.org/moodys>" in done.stdout
