"""Benchmark: CQELS-CEP and EP-SPARQL replayed on Spark in one task against over time ranges.

Run on demand (not in CI):  python bench/spark_ranges.py [--events N] [--runs R] [--ranges K]
[--query NAME]

The synthetic streams of bench/engine_cqelscep.py (Vienna transport, one report a second,
RANGE 20 s windows, the map's nested path) and bench/engine_epsparql.py (stock prices, one a
second; queries WITHIN 25 s), N events each, written to one N-Quads file. Each query is replayed
by ``rsep.spark.replay.replay`` (the engine's evaluator in Spark tasks, ``local[2]``) with
one partition (one task: what every CQELS-CEP and EP-SPARQL query ran as before) and with K
(``rsep.spark.partition.time_ranges``: K tasks, each its range and the windows' extent or
WITHIN before it), alternately R times, in one session. Prints the results, whether they are
equal, wall seconds and the CPU seconds of the process tree (driver, JVM, Python workers).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_cqelscep
import engine_epsparql
from engine_common import canonical

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event
from rsep.rdf.formats import write_events
from rsep.spark.job import StreamInput
from rsep.spark.replay import replay
from rsep.spark.session import get_session
from rsep.workloads.bench import tree_cpu_seconds

EPSPARQL = {
    "seq-rise-within-25s": (
        "SELECT ?c ?p1 ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p2 > ?p1 * 1.05) WITHIN 25"
    ),
    "construct-closure-within-25s": (
        "CONSTRUCT ?c :rise ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p1 < ?p2) WITHIN 25"
    ),
}
"""EP-SPARQL queries over the stock stream, whose company reports every 10 s: a rise of 5 %
within 25 s (query (1)'s kind) and a CONSTRUCT rule fed back (the Q-closure)."""


def plans() -> list[tuple[str, Plan, str]]:
    """(name, plan, stream kind) of the queries measured."""
    out = []
    cqels = get_dialect("cqelscep")
    for name in ("example6-no_tail+path", "seq_wo"):
        text = engine_cqelscep.QUERIES[name]
        query = parse_query(text, cqels, prefixes=engine_cqelscep.PREFIXES)
        out.append((f"cqelscep {name}", compile_query(query, cqels), "vienna"))
    ep = get_dialect("epsparql")
    for name, text in EPSPARQL.items():
        query = parse_query(text, ep, prefixes={"": engine_epsparql.EX})
        out.append((f"epsparql {name}", compile_query(query, ep), "stock"))
    return out


def write(events: list[Event], folder: Path) -> Path:
    """``events`` as one N-Quads file naming their streams."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "part-0000.nq"
    write_events(sorted(events, key=lambda e: e.t_start), path, "nquads", with_stream=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--ranges", type=int, default=4)
    parser.add_argument("--query", default="", help="only the queries whose name holds this")
    args = parser.parse_args()
    spark = get_session(None)
    with tempfile.TemporaryDirectory() as tmp:
        folders = {
            "vienna": write(engine_cqelscep.stream(args.events), Path(tmp) / "vienna"),
            "stock": write(engine_epsparql.stream(args.events), Path(tmp) / "stock"),
        }
        graphs = {"vienna": {engine_cqelscep.MAP: engine_cqelscep.city_map()}, "stock": {}}
        print("| query | tasks | run | results | equal | wall (s) | CPU (s) |")
        print("| --- | ---: | ---: | ---: | --- | ---: | ---: |")
        for name, plan, kind in plans():
            if args.query not in name:
                continue
            first: list[str] | None = None
            for run in range(1, args.runs + 1):
                for tasks in (1, args.ranges):
                    cpu, wall = tree_cpu_seconds(), time.perf_counter()
                    inputs = [StreamInput(folders[kind])]
                    job = replay(spark, plan, inputs, graphs[kind], partitions=tasks)
                    found = canonical(list(job.results))
                    wall, cpu = time.perf_counter() - wall, tree_cpu_seconds() - cpu
                    first = found if first is None else first
                    spread = job.scheme.ranges.count if job.scheme.ranges else 1
                    print(
                        f"| {name} | {spread} | {run} | {len(found):,} | {found == first} "
                        f"| {wall:.2f} | {cpu:.2f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
