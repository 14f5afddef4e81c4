"""What the engine benchmarks (bench/engine_*.py) share: feeding a query in micro-batches,
timing it, and comparing its results with the oracle's (``rsep.semantics.evaluate``), one
printed row per query.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence

from pyoxigraph import Triple

from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.results import Result
from rsep.semantics import evaluate

Clock = Callable[[], float]


def canonical(results: Sequence[Result]) -> list[str]:
    """Results as sorted JSON lines: a multiset, comparable across engines."""
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def arguments(doc: str, oracle_events: int) -> tuple[int, int, int]:
    """The command line's ``--events N`` (default 5000), ``--oracle-events M`` and
    ``--batch B`` (events per push, default 50)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--oracle-events", type=int, default=oracle_events)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    return args.events, args.oracle_events, args.batch


def run_engine(
    plan: Plan,
    events: Sequence[Event],
    graphs: Mapping[str, frozenset[Triple]] | None = None,
    clock: Clock = time.perf_counter,
    batch: int = 50,
) -> tuple[float, list[Result]]:
    """The engine's results and the seconds it took, fed in batches of ``batch`` events (as
    a micro-batch would) and finished."""
    query = incremental_query(plan, graphs)
    start = clock()
    out: list[Result] = []
    for i in range(0, len(events), batch):
        out += query.push(events[i : i + batch])
    out += query.finish()
    return clock() - start, out


def print_header(width: int, results: bool = True) -> None:
    """The table's header: query names ``width`` wide; a results column if ``results``."""
    print(
        f"{'query':<{width}} {'engine ev/s':>12} {'(N)':>6} {'engine ev/s':>12} "
        f"{'oracle ev/s':>12} {'(M)':>5} {'speed-up':>9}"
        + (f" {'results':>8}" if results else "")
        + " equal"
    )


def compare(
    name: str,
    plan: Plan,
    events: Sequence[Event],
    prefix: Sequence[Event],
    *,
    graphs: Mapping[str, frozenset[Triple]] | None = None,
    streams: StreamSet | None = None,
    clock: Clock = time.perf_counter,
    width: int = 20,
    digits: int = 0,
    results: bool = True,
    batch: int = 50,
) -> None:
    """Time the engine on all ``events`` and on ``prefix``, the oracle on ``prefix`` (or on
    ``streams`` when given: its streams laid out), and print one row: events per second,
    the speed-up and whether the results are equal; the engine fed ``batch`` events a push,
    after a warm-up on the first push (numba loads its compiled kernels once per process,
    some 2 CPU seconds, which a running engine pays once)."""
    run_engine(plan, events[:batch], graphs, clock, batch)  # warm-up: numba's kernels load
    seconds, _ = run_engine(plan, events, graphs, clock, batch)
    small, found = run_engine(plan, prefix, graphs, clock, batch)
    start = clock()
    laid_out = streams if streams is not None else StreamSet.from_events(prefix)
    expected = list(evaluate(plan, laid_out, graphs))
    oracle = clock() - start
    equal = canonical(found) == canonical(expected)
    print(
        f"{name:<{width}} {len(events) / seconds:>12.0f} {len(events):>6} "
        f"{len(prefix) / small:>12.0f} {len(prefix) / oracle:>12.1f} {len(prefix):>5} "
        f"{oracle / small:>8.{digits}f}x"
        + (f" {len(expected):>8}" if results else "")
        + f" {equal}"
    )
