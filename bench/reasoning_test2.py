"""EP-SPARQL Sect. 6, Test 2 (stream reasoning) on rsep: a class of concern with 40,080
subclasses and a maximum depth of 8 (the shape of EthanPlants.owl#Tracheobionta; that
ontology is not in ../shared nor on PyPI, so a hierarchy of the same shape is generated),
streaming ``?x rdf:type ?C`` triples, each classified: is ``?x`` an instance of the class of
concern? Measures the closure tables' build (the reasoner on the hierarchy, once) and the
entailment of the stream by ``rsep.reasoning.entail_batch`` (delay per triple, triples/s,
wall and CPU seconds), and checks each classification against the hierarchy.

Run: ``.venv/bin/python bench/reasoning_test2.py [--triples N] [--batch B]``.
"""

from __future__ import annotations

import argparse
import random
import resource
import time

import numpy as np
from pyoxigraph import NamedNode, Triple

from rsep.algebra.params import Entailment
from rsep.engine.batch import TripleBatch
from rsep.engine.terms import TermDictionary
from rsep.reasoning import Ontology
from rsep.reasoning.closure import Closure, entail_batch
from rsep.reasoning.reasoner import RDFS, TYPE

EX = "http://spire.umbc.edu/ontologies/EthanPlants.owl#"
LEVELS = (4, 16, 64, 256, 1024, 3000, 10000, 25716)  # 40,080 subclasses over 8 levels


def hierarchy() -> tuple[frozenset[Triple], list[int]]:
    """The subclass triples and each class's depth (class 0 is Tracheobionta)."""
    sub = NamedNode(RDFS + "subClassOf")
    triples: list[Triple] = []
    depth = [0]
    previous = [0]
    for level, count in enumerate(LEVELS, start=1):
        current = list(range(len(depth), len(depth) + count))
        for k, child in enumerate(current):
            parent = previous[k % len(previous)]
            triples.append(Triple(NamedNode(f"{EX}C{child}"), sub, NamedNode(f"{EX}C{parent}")))
            depth.append(level)
        previous = current
    return frozenset(triples), depth


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=65_536)
    parser.add_argument("--outside", type=float, default=0.2, help="share of classes outside")
    parser.add_argument(
        "--query", type=int, default=20_000, help="triples through the EP-SPARQL engine"
    )
    args = parser.parse_args()
    schema, depth = hierarchy()
    classes = len(depth)
    print(f"hierarchy: {len(schema):,} subclasses of C0, depth {max(depth)}")

    wall, cpu0 = time.perf_counter(), cpu()
    ontology = Ontology(schema, Entailment.RDFS)
    reasoned = time.perf_counter() - wall
    dictionary = TermDictionary()
    closure = Closure(ontology, dictionary)
    build, build_cpu = time.perf_counter() - wall, cpu() - cpu0
    print(
        f"closure: reasoner {reasoned:.2f} s, tables {build - reasoned:.2f} s "
        f"(wall {build:.2f} s, CPU {build_cpu:.2f} s); {len(closure.sub_class.keys):,} pairs"
    )

    rng = random.Random(7)
    n = args.triples
    outside = dictionary.encode([f"<http://example.org/Other{k}>" for k in range(1000)])
    inside = dictionary.encode([f"<{EX}C{k}>" for k in range(classes)])
    pick_inside = np.array([rng.random() >= args.outside for _ in range(n)])
    chosen = np.array([rng.randrange(classes) for _ in range(n)])
    objects = np.where(pick_inside, inside[chosen], outside[chosen % len(outside)])
    subjects = dictionary.encode([f"<http://example.org/item{k}>" for k in range(n)])
    type_id, root = closure.type_id, int(inside[0])

    batches = []
    for lo in range(0, n, args.batch):
        hi = min(n, lo + args.batch)
        m = hi - lo
        batches.append(
            TripleBatch(
                streams=("http://example.org/s",),
                event_stream=np.zeros(m, np.int32),
                event_start=np.arange(lo, hi, dtype=np.int64),
                event_end=np.arange(lo, hi, dtype=np.int64),
                event_ordinal=np.arange(lo, hi, dtype=np.int64),
                triple_event=np.arange(m, dtype=np.int32),
                s=subjects[lo:hi].astype(np.int32),
                p=np.full(m, type_id, np.int32),
                o=objects[lo:hi].astype(np.int32),
            )
        )
    entail_batch(batches[0], closure)  # warm-up (numpy, caches of term flags)

    wall, cpu0 = time.perf_counter(), cpu()
    classified = np.zeros(n, np.bool_)
    rows = 0
    for k, batch in enumerate(batches):
        out = entail_batch(batch, closure)
        rows += len(out.s)
        hit = (out.p == type_id) & (out.o == root)
        classified[k * args.batch + out.triple_event[hit]] = True
    elapsed, used = time.perf_counter() - wall, cpu() - cpu0
    assert (classified == pick_inside).all(), "a triple was classified wrongly"
    print(
        f"stream: {n:,} triples in batches of {args.batch:,}: wall {elapsed:.2f} s, "
        f"CPU {used:.2f} s; {n / elapsed:,.0f} triples/s; delay {elapsed / n * 1e6:.2f} µs "
        f"per triple; {rows:,} entailed rows; {int(classified.sum()):,} instances of C0"
    )

    single = batches[0]
    one = TripleBatch(
        streams=single.streams,
        event_stream=single.event_stream[:1],
        event_start=single.event_start[:1],
        event_end=single.event_end[:1],
        event_ordinal=single.event_ordinal[:1],
        triple_event=single.triple_event[:1],
        s=single.s[:1],
        p=single.p[:1],
        o=np.array([inside[len(depth) - 1]], np.int32),  # a class at depth 8
    )
    runs = 2000
    wall = time.perf_counter()
    for _ in range(runs):
        entail_batch(one, closure)
    print(
        f"one triple alone (a class at depth 8): {(time.perf_counter() - wall) / runs * 1e6:.1f} µs"
    )
    if args.query:
        through_query(schema, classes, args.query)


def through_query(schema: frozenset[Triple], classes: int, n: int) -> None:
    """The same classification as an EP-SPARQL query on the engine (``engine="local"``):
    ``SELECT ?x WHERE { ?x a <C0> }`` with ``entailment = rdfs``, one event per triple."""
    import rsep
    from rsep.engine.query import drive, incremental_query
    from rsep.rdf.event import Event

    rng = random.Random(11)
    type_ = NamedNode(TYPE)
    chosen = [rng.randrange(classes) for _ in range(n)]
    events = [
        Event.point(
            "http://example.org/s",
            k,
            [Triple(NamedNode(f"http://example.org/i{k}"), type_, NamedNode(f"{EX}C{c}"))],
        )
        for k, c in enumerate(chosen)
    ]
    graphs = {"http://example.org/onto": schema}
    for entailment in ("none", "rdfs"):
        query = rsep.Query(
            f"SELECT ?x WHERE {{ ?x a <{EX}C0> }}", "epsparql", entailment=entailment
        )
        wall, cpu0 = time.perf_counter(), cpu()
        engine = incremental_query(query.plan, graphs)
        built, built_cpu = time.perf_counter() - wall, cpu() - cpu0
        wall, cpu0 = time.perf_counter(), cpu()
        found = sum(1 for _ in drive(engine, events))
        elapsed, used = time.perf_counter() - wall, cpu() - cpu0
        assert found == (n if entailment == "rdfs" else chosen.count(0)), (found, n)
        print(
            f"EP-SPARQL engine, entailment={entailment}: built in {built:.2f} s (CPU "
            f"{built_cpu:.2f} s); {n:,} triples, {found:,} answers: wall {elapsed:.2f} s, "
            f"CPU {used:.2f} s; {n / elapsed:,.0f} triples/s"
        )


if __name__ == "__main__":
    main()
