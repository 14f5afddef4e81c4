"""The command line sits on the public API (issue 16, DESIGN.md's layers): no module under
rsep/cli imports the oracle, the engine or Spark; each goes through :mod:`rsep.api`
(``rsep bench`` reaches the baselines through :mod:`rsep.workloads`, whose rsep runs call
the API)."""

from __future__ import annotations

import ast
from pathlib import Path

import rsep.cli

BELOW_THE_API = ("rsep.engine", "rsep.semantics", "rsep.spark")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_cli_module_imports_below_the_api() -> None:
    folder = Path(rsep.cli.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert {p.stem for p in modules} >= {"main", "run", "explain", "check", "convert", "bench"}
    offending = {
        f"{p.stem}: {name}"
        for p in modules
        for name in _imports(p)
        if name.startswith(BELOW_THE_API)
    }
    assert not offending


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from rsep.engine.sequence import describe\n")
    assert "rsep.engine.sequence" in _imports(module)
