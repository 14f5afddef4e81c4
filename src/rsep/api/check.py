"""CSR-Bench's correctness test through the API (RSP-QL Def. 25-26, Theorem 1;
:mod:`rsep.semantics.check`): is an engine's answer one of the correct answers of a query?

An answer file is rsep's JSON Lines results (:mod:`rsep.rdf.results`) or a CSR-Bench answer
(``{"relations": [...]}``, docs/csrbench.md). Engine times are mapped to the start of their
``answer_granularity`` (default: 1000 ms for a CSR-Bench answer, the suite's
``system.timeunit``; 1 ms for JSON Lines) and rows with one mapped time form one relation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rsep.errors import UserError

if TYPE_CHECKING:
    from rsep.semantics.check import Relation


def read_answer_file(path: Path, granularity: int | None) -> tuple[list[Relation], bool]:
    """The relations of an answer file, JSON Lines or CSR-Bench JSON (module docstring),
    and whether the format shows empty relations (CSR-Bench's does, JSON Lines not)."""
    from rsep.rdf.results import read_results
    from rsep.semantics.check import relations_from_results
    from rsep.semantics.csrbench import SUITE_TIME_UNIT, is_csrbench_answer, read_answer

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read the answers {path}: {exc.strerror or exc}") from None
    if granularity is not None and granularity < 1:
        raise UserError("--answer-granularity must be a positive number of ms")
    if is_csrbench_answer(text):
        return read_answer(path, text, granularity or SUITE_TIME_UNIT), True
    results = list(read_results(text.splitlines(), str(path)))
    return relations_from_results(results, granularity or 1), False
