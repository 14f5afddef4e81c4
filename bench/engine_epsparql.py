"""Benchmark: EP-SPARQL on the engine (rsep.engine.epsparql) against the oracle.

Run on demand (not in CI):  python bench/engine_epsparql.py [--events N] [--oracle-events M]

A synthetic stock stream (one price a second for each of 10 companies in turn, random walk
prices) and four queries of the paper's kinds: a rise within 5 s (SEQ, FILTER, WITHIN,
query (1) and ETALIS's ep_sparql_12), a drop with the price just before it if any
(OPTIONALSEQ), two simultaneous facts (EQUALS) and a CONSTRUCT rule fed back (Q-closure).
The engine takes N events (batches of 50, as a micro-batch would); the oracle, which
re-evaluates the whole stream at every instant, takes the first M; both are timed on the
first M and their results compared there. Prints events per second.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence

from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.engine import incremental_query
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.results import Result
from rsep.semantics import evaluate

EX = "http://example.org/"
S = EX + "S"
PRICE, VOLUME = NamedNode(EX + "price"), NamedNode(EX + "volume")

QUERIES = {
    "seq-filter-within": (
        "SELECT ?c ?p1 ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p2 > ?p1 * 1.05) WITHIN 5"
    ),
    "optionalseq": ("SELECT * WHERE { { ?c :price ?p0 } OPTIONALSEQ { ?c :volume ?v } } WITHIN 3"),
    "equals": "SELECT * WHERE { ?c :price ?p } EQUALS { ?c :volume ?v }",
    "construct-closure": (
        "CONSTRUCT ?c :rise ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p1 < ?p2) WITHIN 4"
    ),
}


def stream(count: int, seed: int = 7) -> list[Event]:
    """``count`` events, one a second: a company's price, and every third event its
    volume at the same instant."""
    rng = random.Random(seed)
    prices = [100] * 10
    events = []
    for k in range(count):
        c = k % 10
        prices[c] = max(1, prices[c] + rng.randint(-6, 6))
        company = NamedNode(f"{EX}c{c}")
        triples = [Triple(company, PRICE, Literal(prices[c]))]
        if k % 3 == 0:
            triples.append(Triple(company, VOLUME, Literal(rng.randint(1, 9))))
        events.append(Event(S, 1000 * k, 1000 * k, frozenset(triples)))
    return events


def canonical(results: Sequence[Result]) -> list[str]:
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def run_engine(plan: object, events: Sequence[Event]) -> tuple[float, list[Result]]:
    query = incremental_query(plan)  # type: ignore[arg-type]
    start = time.perf_counter()
    out: list[Result] = []
    for i in range(0, len(events), 50):
        out += query.push(events[i : i + 50])
    out += query.finish()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--oracle-events", type=int, default=300)
    args = parser.parse_args()
    dialect = get_dialect("epsparql")
    events = stream(args.events)
    prefix = events[: args.oracle_events]
    print(
        f"{'query':<20} {'engine ev/s':>12} {'(N)':>6} {'engine ev/s':>12} "
        f"{'oracle ev/s':>12} {'(M)':>5} {'speed-up':>9} equal"
    )
    for name, text in QUERIES.items():
        plan = compile_query(parse_query(text, dialect, prefixes={"": EX}), dialect)
        seconds, _ = run_engine(plan, events)
        small, found = run_engine(plan, prefix)
        start = time.perf_counter()
        expected = list(evaluate(plan, StreamSet.from_events(prefix)))
        oracle = time.perf_counter() - start
        equal = canonical(found) == canonical(expected)
        print(
            f"{name:<20} {len(events) / seconds:>12.0f} {len(events):>6} "
            f"{len(prefix) / small:>12.0f} {len(prefix) / oracle:>12.1f} {len(prefix):>5} "
            f"{oracle / small:>8.0f}x {equal}"
        )


if __name__ == "__main__":
    main()
