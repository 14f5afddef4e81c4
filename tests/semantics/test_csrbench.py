"""CSR-Bench's correctness test on the 21 recorded answers (docs/csrbench.md).

The 7 queries of ``csrbench/config/srbench-queries.properties`` (the 2013 suite the answers
were recorded with; its windows, not ``aligned/``'s) run under the csparql, cqels and
sparqlstream profiles over ``csrbench/data``; :func:`rsep.semantics.csrbench.verdict`
checks ``answers/<engine>-answer-<q>.json`` against every admissible t0 (RSP-QL Theorem 1).
The oracle's relations are cached per query, profile and t0 for the whole module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsep.semantics.check import Relation, Verdict
from rsep.semantics.csrbench import (
    ENGINES,
    csparql_text,
    read_answer,
    read_queries,
    read_stream,
    verdict,
)

# (engine, query): None when the answer is correct, else the answer's time (ms, mapped to
# its second) of the first relation that departs from the closest correct answer.
EXPECTED: dict[tuple[str, int], int | None] = {
    ("csparql", 1): None,
    ("csparql", 2): None,
    ("csparql", 3): 28000,
    ("csparql", 4): None,
    ("csparql", 5): 9000,
    ("csparql", 6): 5000,
    ("csparql", 7): None,
    ("cqels", 1): None,
    ("cqels", 2): None,
    ("cqels", 3): None,
    ("cqels", 4): 17000,
    ("cqels", 5): None,
    ("cqels", 6): 3000,
    ("cqels", 7): 0,
    ("sparqlstream", 1): None,
    ("sparqlstream", 2): None,
    ("sparqlstream", 3): None,
    ("sparqlstream", 4): 39000,
    ("sparqlstream", 5): None,
    ("sparqlstream", 6): 18000,
    ("sparqlstream", 7): None,
}

_CACHE: dict[tuple[int, str, int], list[Relation]] = {}


@pytest.fixture(scope="module")
def csr(shared_data: Path) -> Path:
    root = shared_data / "csrbench"
    if not (root / "answers").is_dir():
        pytest.skip(f"CSR-Bench not found at {root}")
    return root


def test_all_21_answers_are_there(csr: Path) -> None:
    found = {
        (engine, n)
        for engine in ENGINES
        for n in range(1, 8)
        if (csr / "answers" / f"{engine}-answer-{n}.json").is_file()
    }
    assert found == set(EXPECTED)


def test_the_suite_is_read_as_recorded(csr: Path) -> None:
    queries = read_queries(csr)
    assert sorted(queries) == [1, 2, 3, 4, 5, 6, 7]
    windows = {n: (q.width, q.slide, q.first_t0) for n, q in queries.items()}
    assert windows[1] == (10000, 10000, 0)  # aligned/: 1 s
    assert windows[2] == (1000, 1000, 0)  # aligned/: 3 s
    assert windows[5] == (5000, 1000, 0)
    assert windows[6] == (50000, 50000, 0)  # aligned/: 5 s
    assert "[RANGE 10000ms STEP 10000ms]" in csparql_text(queries[1])
    stream = next(iter(read_stream(csr / "data").values()))
    assert [e.t_start for e in stream][:3] == [0, 1000, 2000] and len(stream) == 34
    cqels = read_answer(csr / "answers" / "cqels-answer-3.json")
    # rows stamped 26086 and 26111 are one evaluation at 26 s
    assert [len(r.rows) for r in cqels if r.time == 26000] == [2]


@pytest.mark.parametrize(("engine", "number"), sorted(EXPECTED))
def test_verdict(csr: Path, engine: str, number: int) -> None:
    found: Verdict = verdict(csr, number, engine, cache=_CACHE)
    departs = EXPECTED[(engine, number)]
    assert found.correct is (departs is None), found.describe()
    if departs is not None:
        assert found.departure is not None and found.departure.time == departs
