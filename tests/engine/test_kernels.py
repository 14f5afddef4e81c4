"""``rsep.engine.kernels``: a query started with :meth:`rsep.Query.incremental` has every
numba kernel its evaluator calls compiled before its first batch, so that no batch waits for
the compiler: the table of signatures is complete for a query of each evaluator that calls
kernels, each run in a fresh process where nothing compiled a kernel before it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rsep.engine.kernels import SIGNATURES, decode, encode

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent

PREFIX = "PREFIX pred: <http://example/>\n"
QUERIES = {
    "spaseq": PREFIX
    + """SELECT ?company ?p1 ?p2
WITHIN 3 SECONDS
PARTITION BY ?company
FROM STREAM S1 <http://example.org/stream/nasdaq>
WHERE {
  SEQ (A; B)
  DEFINE GPM A ON S1 { ?company pred:price ?p1 . ?company pred:volume ?v1 . }
  DEFINE GPM B ON S1 { ?company pred:price ?p2 . FILTER (?p2 < ?p1 * 0.997) }
}""",
    "rspql": PREFIX
    + """SELECT ?company ?price
FROM NAMED WINDOW <http://example.org/w> ON <http://example.org/stream/nasdaq>
  [RANGE PT2S STEP PT1S]
WHERE { WINDOW <http://example.org/w> { ?company pred:price ?price . ?company pred:volume ?v .
  FILTER (?v > 130) } }""",
    "rsepql": PREFIX
    + """REGISTER ISTREAM <http://example/out> AS
SELECT ?company ?p1 ?p2
FROM NAMED WINDOW <http://example.org/w> ON <http://example.org/stream/nasdaq>
  [RANGE PT1S STEP PT1S]
WHERE { MATCH ( EVENT <http://example.org/w> { ?company pred:price ?p1 }
  SEQ EVENT <http://example.org/w> { ?company pred:price ?p2 } ) }""",
    "epsparql": PREFIX
    + """SELECT ?company ?p1 ?p2
WHERE { ?company pred:price ?p1 } SEQ { ?company pred:price ?p2 }
FILTER (?p2 < ?p1 * 0.997)""",
}
"""A query of each evaluator that calls kernels over the market of
``tests/api/test_driver_shared.py`` (a V shape's drop, a window with a FILTER, RSEP-QL's
and EP-SPARQL's SEQ)."""

RUN = """
import json, sys
sys.path.insert(0, {tests!r})
import rsep
from api.test_driver_shared import market, table_of
from pathlib import Path
from rsep.engine.kernels import observed
running = rsep.Query({text!r}, {dialect!r}).incremental()
warmed = observed()
answers = list(running.feed([table_of(market(companies=3, bars=40), Path({folder!r}))]))
after = observed()
print(json.dumps({{
    "answers": len(answers),
    "in_stream": {{k: sorted(v - warmed.get(k, set())) for k, v in after.items()
                   if v - warmed.get(k, set())}},
}}))
"""


def test_notation_round_trips() -> None:
    """Every listed signature reads back to itself; a type with no notation is refused."""
    for signatures in SIGNATURES.values():
        for text in signatures:
            assert encode(decode(text)) == text
    assert encode(decode("u8[1C] i8[2A] (i8[1C],u8[1Cr]) (i8,i8) b1")) == (
        "u8[1C] i8[2A] (i8[1C],u8[1Cr]) (i8,i8) b1"
    )
    with pytest.raises(ValueError, match="unknown type code 'x9'"):
        decode("i8 x9[1C]")


@pytest.mark.parametrize("language", sorted(QUERIES))
def test_no_kernel_compiles_inside_the_stream(language: str, tmp_path: Path) -> None:
    """In a fresh process: after ``incremental()`` (which warms the kernels) the query's
    answers over a market of three companies compile nothing more."""
    script = RUN.format(
        tests=str(TESTS),
        text=QUERIES[language],
        dialect=language,
        folder=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["answers"] > 0
    assert report["in_stream"] == {}, "add these to rsep.engine.kernels.SIGNATURES"
