"""docs/api.md's examples run as written: each ``python`` block, in order, in one namespace,
from the repository's root (``python spark`` blocks need a Spark session: not run here)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_examples_of_docs_api_run() -> None:
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"__name__": "api_doc"}
    out = io.StringIO()
    here = Path.cwd()
    os.chdir(REPO)
    try:
        for number, code in enumerate(blocks, 1):
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{DOC.name} block {number}", "exec"), namespace)
    finally:
        os.chdir(here)
    printed = out.getvalue()
    assert "0 command line" in printed
    matches = "[((0, 1000), '14', '12'), ((500, 1500), '5', '3'), ((1000, 2000), '12', '11')]"
    assert matches in printed
    assert "5 events pushed, 3 answers" in printed
    assert "3 1\n" in printed
