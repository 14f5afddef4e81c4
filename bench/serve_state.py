"""Benchmark: the size and cost of one ``rsep serve`` checkpoint with many queries.

Run on demand (not in CI):  python bench/serve_state.py [--queries 16] [--triples 20000]

Registers ``--queries`` copies of tests/api/test_driver.py's SPAseq query (two people near
one shop, without its graph) on one stream, pushes ``--triples`` timestamped triples with a
new subject each (a dictionary that grows with the stream), checkpoints once and prints the
bytes of the queries' files and of the shared dictionary's file, and the checkpoint's CPU
seconds (pickling under the service's lock, and writing the files).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "api"), str(TESTS / "semantics")]

from test_driver import EX, SPASEQ  # noqa: E402

from rsep.serve.service import Service  # noqa: E402
from rsep.serve.settings import Settings  # noqa: E402

NEARBY = SPASEQ.replace(f" GRAPH <{EX}G_shops> {{ ?owner :owns ?shop }}", "")


def main(argv: list[str] | None = None) -> int:
    """Measure one checkpoint and print it."""
    parser = argparse.ArgumentParser(prog="python bench/serve_state.py", description=__doc__)
    parser.add_argument("--queries", type=int, default=16)
    parser.add_argument("--triples", type=int, default=20000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rsep-state-") as folder:
        measure(args.queries, args.triples, Path(folder) / "state")
    return 0


def measure(queries: int, triples: int, state: Path) -> None:
    """One checkpoint of ``queries`` queries after ``triples`` triples, under ``state``."""
    service = Service(Settings(state=state, checkpoint_every=3600))
    service.add_stream({"name": "near", "iri": EX + "S_nearby"})
    for number in range(queries):
        service.add_query({"name": f"q{number}", "query": NEARBY})
    body = "".join(f"<{EX}p{i}> <{EX}isNearby> <{EX}shop{i % 50}> {i} .\n" for i in range(triples))
    service.push("near", body.encode(), "tnt")
    began = time.process_time()
    service._save(force=True)
    cpu = time.process_time() - began
    files = sum(f.stat().st_size for f in (state / "queries").glob("*.pickle"))
    terms = state / "terms.pickle"
    shared = terms.stat().st_size if terms.exists() else 0
    print(
        f"{queries} queries, {triples} triples, {len(service.terms)} terms: "
        f"queries' files {files:,} B, dictionary file {shared:,} B, "
        f"total {files + shared:,} B; checkpoint {cpu:.2f} CPU s"
    )
    service.close()


if __name__ == "__main__":
    sys.exit(main())
