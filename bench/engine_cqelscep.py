"""Benchmark: CQELS-CEP on the engine (rsep.engine.cqelscep) against the oracle.

Run on demand (not in CI):  python bench/engine_cqelscep.py [--events N] [--oracle-events M]

A synthetic Vienna transport stream (seed 001, Example 1-3): one report a second, a delay or
an arrival of one of 8 vehicles at one of 6 stops; a map where stops reach the centre :c
through connections of a means of transport (Example 6's nested path). Five queries of the
paper's kinds: Example 6 itself (SEQ with a negated tail, NO_TAIL, joined with the nested
path background), a negation in the middle (SEQ_WO), a negated head (NO_HEAD), two windows
joined (Eq. (2), interval intersection) and a SEQ of window specifications. The engine
takes N events (batches of 50, as a micro-batch would); the oracle, which re-reads every
stream and re-matches every item at every instant, takes the first M; both are timed on
the first M and their results compared there. Prints events per CPU-second (process time:
the machine is shared, wall-clock would measure the others).
"""

from __future__ import annotations

import random
import time

from engine_common import arguments, compare, print_header
from pyoxigraph import NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet

EX = "http://example.org/"
S, T, MAP = EX + "s", EX + "t", EX + "map"
PREFIXES = {"": EX, "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}

HEAD = (
    "SELECT {v} FROM :map FROM NAMED WINDOW :W ON :s [RANGE 20s] "
    "FROM NAMED WINDOW :V ON :t [RANGE 20s] WHERE {{ {body} }}"
)
QUERIES = {
    "example6-no_tail+path": HEAD.format(
        v="?s",
        body="WINDOW :W { SEQ ({?v :delayAt ?s}, {?v :delayAt ?s}, !{?v :arriveAt ?s}) } "
        "?v rdf:type :subway . ?s (^:beg/[:means :subway]/:end)+ :c .",
    ),
    "seq_wo": HEAD.format(
        v="*",
        body="WINDOW :W { SEQ ({?v :delayAt ?s}, !{?v :arriveAt ?s}, {?v :delayAt ?s}) }",
    ),
    "no_head": HEAD.format(v="*", body="WINDOW :W { SEQ (!{?v :arriveAt ?s}, {?v :delayAt ?s}) }"),
    "join-two-windows": HEAD.format(
        v="*",
        body="WINDOW :W { SEQ ({?v :delayAt ?s}, {?v :delayAt ?s}) } WINDOW :V { ?v :state :full }",
    ),
    "seq-of-windows": HEAD.format(
        v="*", body="SEQ (:W, :V) WINDOW :W { ?v :delayAt ?s } WINDOW :V { ?v :state :full }"
    ),
}


def node(local: str) -> NamedNode:
    return NamedNode(EX + local)


def stream(count: int, seed: int = 7) -> list[Event]:
    """``count`` events one a second: on :s a delay (2 in 3) or an arrival of a vehicle at
    a stop; every fourth second on :t a vehicle reported full."""
    rng = random.Random(seed)
    events = []
    for k in range(count):
        vehicle, stop = node(f"v{rng.randrange(8)}"), node(f"stop{rng.randrange(6)}")
        if k % 4 == 3:
            triple = Triple(vehicle, node("state"), node("full"))
            events.append(Event(T, 1000 * k, 1000 * k, frozenset([triple])))
            continue
        kind = "delayAt" if rng.random() < 0.67 else "arriveAt"
        triple = Triple(vehicle, node(kind), stop)
        events.append(Event(S, 1000 * k, 1000 * k, frozenset([triple])))
    return events


def city_map() -> frozenset[Triple]:
    """Connections stop_i → stop_{i+1} → :c by subway or tram; the vehicles' types."""
    rdf_type = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    triples = []
    stops = [f"stop{i}" for i in range(6)] + ["c"]
    for i in range(6):
        link = node(f"link{i}")
        means = "subway" if i % 3 else "tram"
        triples += [
            Triple(link, node("beg"), node(stops[i])),
            Triple(link, node("end"), node(stops[i + 1])),
            Triple(link, node("means"), node(means)),
        ]
    triples += [Triple(node(f"v{i}"), rdf_type, node("subway")) for i in range(0, 8, 2)]
    return frozenset(triples)


def main() -> None:
    count, oracle_count, batch = arguments(__doc__ or "", 300)
    dialect = get_dialect("cqelscep")
    events = stream(count)
    prefix = events[:oracle_count]
    graphs = {MAP: city_map()}
    streams = StreamSet(Stream(s, tuple(e for e in prefix if e.stream == s)) for s in (S, T))
    print_header(24)
    for name, text in QUERIES.items():
        plan = compile_query(parse_query(text, dialect, prefixes=PREFIXES), dialect)
        compare(
            name,
            plan,
            events,
            prefix,
            graphs=graphs,
            streams=streams,
            width=24,
            batch=batch,
            clock=time.process_time,
        )


if __name__ == "__main__":
    main()
