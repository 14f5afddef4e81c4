"""The code quality bar as tests, so the one test command checks it: ruff and mypy clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return [found]


def test_ruff_clean() -> None:
    done = subprocess.run(
        [*_tool("ruff"), "check", "src", "tests", "bench"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_clean() -> None:
    done = subprocess.run(_tool("mypy"), cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
