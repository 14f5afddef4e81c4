"""Benchmark: RSEP-QL's MATCH on the engine (rsep.engine.rsepql) against the oracle.

Run on demand (not in CI):  python bench/engine_rsepql.py [--events N] [--oracle-events M]
[--batch B]

A synthetic stream after Fig. 1 of the paper: one item per instant, alternately ``?x :p ?y``
and ``?y :q ?z`` statements over 20 values of ``?y``, read by two windows (a sliding
``W^τ(20, 5)``, RSEP-QL's "last ended" reading, and a landmark window), and six queries:
``E1 SEQ E2`` under the four selection policies (Eq. (7), (9)-(11)), ``SEQ^c`` under the
chronological consumption policy ``P^c`` (Def. 10), and ``LAST (E1 SEQ E2)`` joined with a
static graph (EventJoin). The engine takes N events (B a push, 50 by default, as a
micro-batch would); the oracle, which recomputes every window's content from the whole
stream at each instant, takes the first M; both are timed on the first M and their
results compared there. Prints events per CPU-second (process time: the machine is
shared, wall-clock would measure the others).
"""

from __future__ import annotations

import random
import time

from engine_common import arguments, compare, print_header
from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.events import (
    ConsumptionPolicy,
    Event,
    EventPattern,
    GraphPatternRef,
    Last,
    Match,
    SelectionPolicy,
    Seq,
)
from rsep.algebra.params import Parameters, Source
from rsep.algebra.plan import Dataset, EventJoin, Plan, Select
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import LandmarkWindow, NamedWindow, PresentRule, TimeWindow
from rsep.rdf.event import Event as Item

EX = "http://example.org/"
S = EX + "S"
P, Q, LABEL = NamedNode(EX + "p"), NamedNode(EX + "q"), NamedNode(EX + "label")
LABELS = EX + "labels"
W1 = NamedWindow(EX + "w1", S, TimeWindow.rsepql(20, 5), present=PresentRule.LAST_ENDED)
W2 = NamedWindow(EX + "w2", S, LandmarkWindow(0), report=ReportPolicy.parse("periodic(5)"))
E1 = Event(W1.iri, GraphPatternRef(f"{{ ?x <{EX}p> ?y }}", frozenset({"x", "y"})))
E2 = Event(W1.iri, GraphPatternRef(f"{{ ?y <{EX}q> ?z }}", frozenset({"y", "z"})))


def stream(count: int, seed: int = 7) -> list[Item]:
    """``count`` items, one per instant: even instants a ``:p`` statement, odd ones a
    ``:q`` statement, over 20 values of ``?y``."""
    rng = random.Random(seed)
    items = []
    for t in range(count):
        y = NamedNode(f"{EX}b{rng.randrange(20)}")
        if t % 2 == 0:
            triple = Triple(NamedNode(f"{EX}a{rng.randrange(50)}"), P, y)
        else:
            triple = Triple(y, Q, NamedNode(f"{EX}c{rng.randrange(50)}"))
        items.append(Item.point(S, t, frozenset({triple})))
    return items


def plan_of(pattern: EventPattern, consumption: ConsumptionPolicy | None = None) -> Plan:
    """``SELECT * WHERE { MATCH pattern }`` over W1 and W2 (W2 sets ET: every 5)."""
    return Plan(
        Select(),
        Dataset(streams=(S,), windows=(W1, W2)),
        Match(pattern, consumption=consumption),
        Parameters.defaults().with_values({"r2s": "istream"}, Source.QUERY_TEXT),
    )


def queries() -> dict[str, Plan]:
    """The six queries of the module docstring."""
    out = {
        f"seq-{policy.value}": plan_of(Seq(E1, E2, policy))
        for policy in (
            SelectionPolicy.UNRESTRICTED,
            SelectionPolicy.NAIVE,
            SelectionPolicy.CHRONOLOGICAL,
            SelectionPolicy.RECENT,
        )
    }
    chronological = Seq(E1, E2, SelectionPolicy.CHRONOLOGICAL)
    out["seq-c-consumed"] = plan_of(chronological, ConsumptionPolicy.CHRONOLOGICAL)
    joined = plan_of(Last(Seq(E1, E2)))
    label = GraphPatternRef(
        f"{{ GRAPH <{LABELS}> {{ ?y <{EX}label> ?l }} }}", frozenset({"y", "l"})
    )
    out["last-seq-join"] = Plan(
        joined.form,
        Dataset(named_graphs=(LABELS,), streams=(S,), windows=(W1, W2)),
        EventJoin(Match(Last(Seq(E1, E2))), label),
        joined.parameters,
    )
    return out


GRAPHS = {
    LABELS: frozenset(
        Triple(NamedNode(f"{EX}b{i}"), LABEL, Literal(f"label {i}")) for i in range(0, 20, 2)
    )
}


def main() -> None:
    count, oracle_count, batch = arguments(__doc__ or "", 1000)
    events = stream(count)
    prefix = events[:oracle_count]
    print_header(16)
    for name, plan in queries().items():
        graphs = GRAPHS if plan.dataset.named_graphs else None
        compare(
            name,
            plan,
            events,
            prefix,
            graphs=graphs,
            clock=time.process_time,
            width=16,
            digits=1,
            batch=batch,
        )


if __name__ == "__main__":
    main()
