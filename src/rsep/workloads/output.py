"""Writing a generated workload: line by line to a file, the file named as synthetic."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rsep.errors import UserError

SYNTHETIC = "synthetic"
"""The marker that every generated file name and every generated event carries."""


def check_count(n_events: int) -> None:
    """A generator is asked for at least one event."""
    if n_events < 1:
        raise UserError(f"a workload needs at least one event, not {n_events}")


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    """Write ``lines`` (each ending with a newline) to ``path`` as they come; the name must
    say that the file is synthetic, so that generated data is never taken for real data."""
    if SYNTHETIC not in path.name:
        raise UserError(f"{path}: a generated file's name must contain {SYNTHETIC!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as out:
        out.writelines(lines)
    return path
