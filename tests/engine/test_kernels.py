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
from rsep.spark.eventstore import write_store
table = table_of(market(companies=3, bars=40), Path({folder!r}))
if {mode!r} == "store":  # the table an event store gives, in chunks (Parquet's row groups)
    import pyarrow as pa
    (Path({folder!r}) / "store").mkdir()
    table = rsep.read_table(write_store(table, Path({folder!r}) / "store").parent)
    table = pa.concat_tables([table.slice(0, 100), table.slice(100)])  # columns in chunks
if {mode!r} == "restored":  # from a checkpoint another process wrote
    import pickle
    running = pickle.loads(Path({folder!r}, "checkpoint").read_bytes())
else:
    running = rsep.Query({text!r}, {dialect!r}).incremental()
warmed = observed()
parts = [table.slice(i, 37) for i in range(0, table.num_rows, 37)]  # micro-batches
answers = list(running.feed(parts))
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
    text = "u8[1C] i8[2A] (i8[1C],u8[1Cr]) (i8,i8) b1 =-1 =True"
    assert encode(decode(text)) == text
    with pytest.raises(ValueError, match="unknown type code 'x9'"):
        decode("i8 x9[1C]")


@pytest.mark.parametrize(
    ("language", "mode"),
    [(language, "nquads") for language in sorted(QUERIES)]
    + [("spaseq", "store"), ("spaseq", "restored"), ("rspql", "restored")],
)
def test_no_kernel_compiles_inside_the_stream(language: str, mode: str, tmp_path: Path) -> None:
    """In a fresh process: after ``incremental()`` (which warms the kernels), or after the
    query is restored from a checkpoint, the query's answers over a market of three
    companies (micro-batches of N-Quads' triples, or of an event store's chunked columns)
    compile nothing more."""
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    if mode == "restored":
        save = (
            "import pickle, sys, rsep; from pathlib import Path; "
            "Path(sys.argv[3], 'checkpoint').write_bytes("
            "pickle.dumps(rsep.Query(sys.argv[1], sys.argv[2]).incremental()))"
        )
        args = [sys.executable, "-c", save, QUERIES[language], language, str(tmp_path)]
        subprocess.run(args, check=True, env=env, timeout=600)
    script = RUN.format(
        tests=str(TESTS),
        text=QUERIES[language],
        dialect=language,
        folder=str(tmp_path),
        mode=mode,
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["answers"] > 0
    assert report["in_stream"] == {}, "add these to rsep.engine.kernels.SIGNATURES"
