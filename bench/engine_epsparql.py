"""Benchmark: EP-SPARQL on the engine (rsep.engine.epsparql) against the oracle.

Run on demand (not in CI):  python bench/engine_epsparql.py [--events N] [--oracle-events M]

A synthetic stock stream (one price a second for each of 10 companies in turn, random walk
prices) and four queries of the paper's kinds: a rise of 5% within 30 s (SEQ, FILTER, WITHIN,
query (1) and ETALIS's ep_sparql_12), a drop with the price just before it if any
(OPTIONALSEQ), two simultaneous facts (EQUALS) and a CONSTRUCT rule fed back (Q-closure).
The engine takes N events (batches of 50, as a micro-batch would); the oracle, which
re-evaluates the whole stream at every instant, takes the first M; both are timed on the
first M and their results compared there. Prints events per CPU-second (process time: the
machine is shared, wall-clock would measure the others).
"""

from __future__ import annotations

import random
import time

from engine_common import arguments, compare, print_header
from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event

EX = "http://example.org/"
S = EX + "S"
PRICE, VOLUME = NamedNode(EX + "price"), NamedNode(EX + "volume")

QUERIES = {
    "seq-filter-within": (
        "SELECT ?c ?p1 ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p2 > ?p1 * 1.05) WITHIN 30"
    ),
    "optionalseq": ("SELECT * WHERE { { ?c :price ?p0 } OPTIONALSEQ { ?c :volume ?v } } WITHIN 3"),
    "equals": "SELECT * WHERE { ?c :price ?p } EQUALS { ?c :volume ?v }",
    "construct-closure": (
        "CONSTRUCT ?c :rise ?p2 WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
        "FILTER (?p1 < ?p2) WITHIN 20"
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


def main() -> None:
    count, oracle_count, batch = arguments(__doc__ or "", 300)
    dialect = get_dialect("epsparql")
    events = stream(count)
    prefix = events[:oracle_count]
    print_header(20)
    for name, text in QUERIES.items():
        plan = compile_query(parse_query(text, dialect, prefixes={"": EX}), dialect)
        compare(
            name,
            plan,
            events,
            prefix,
            width=20,
            batch=batch,
            clock=time.process_time,
        )


if __name__ == "__main__":
    main()
