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
the first M and their results compared there. Prints events per second.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Mapping, Sequence

from pyoxigraph import NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.results import Result
from rsep.semantics import evaluate

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


def canonical(results: Sequence[Result]) -> list[str]:
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def run_engine(
    plan: Plan, events: Sequence[Event], graphs: Mapping[str, frozenset[Triple]]
) -> tuple[float, list[Result]]:
    query = incremental_query(plan, graphs)
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
    dialect = get_dialect("cqelscep")
    events = stream(args.events)
    prefix = events[: args.oracle_events]
    graphs = {MAP: city_map()}
    streams = StreamSet(Stream(s, tuple(e for e in prefix if e.stream == s)) for s in (S, T))
    print(
        f"{'query':<24} {'engine ev/s':>12} {'(N)':>6} {'engine ev/s':>12} "
        f"{'oracle ev/s':>12} {'(M)':>5} {'speed-up':>9} {'results':>8} equal"
    )
    for name, text in QUERIES.items():
        plan = compile_query(parse_query(text, dialect, prefixes=PREFIXES), dialect)
        seconds, _ = run_engine(plan, events, graphs)
        small, found = run_engine(plan, prefix, graphs)
        start = time.perf_counter()
        expected = list(evaluate(plan, streams, graphs))  # type: ignore[arg-type]
        oracle = time.perf_counter() - start
        equal = canonical(found) == canonical(expected)
        print(
            f"{name:<24} {len(events) / seconds:>12.0f} {len(events):>6} "
            f"{len(prefix) / small:>12.0f} {len(prefix) / oracle:>12.1f} {len(prefix):>5} "
            f"{oracle / small:>8.0f}x {len(expected):>8} {equal}"
        )


if __name__ == "__main__":
    main()
