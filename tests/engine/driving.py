"""Driving an engine query as Spark would, for the differential tests of tests/engine: events
pushed in batches, the watermark advanced at chosen points, the query pickled and read back
mid-stream (a checkpoint), and results put in one canonical form to compare with the oracle's
(``rsep.semantics.evaluate``).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from pyoxigraph import Triple

from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.engine.batch import batches_of
from rsep.engine.bgp import BgpMatcher
from rsep.engine.query import IncrementalQuery
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher
from rsep.semantics import evaluate

FAST = settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""The normal differential run: 1,000 cases per family."""
SLOW = settings(
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""The exhaustive differential run: 10,000 cases per family."""


@dataclass(frozen=True)
class Driver:
    """How the engine is fed: batch sizes (cycled; one batch when none given), the watermark
    advance after each batch (a fraction of the room before the next event, ``None`` for
    none), after which batches the query is pickled and read back, and whether batches go
    in as term ids."""

    batches: tuple[int, ...] = ()
    advances: tuple[float | None, ...] = ()
    pickles: tuple[bool, ...] = ()
    ids: bool = False
    """Whether each batch is pushed as a :class:`~rsep.engine.batch.TripleBatch` of the
    query's dictionary (when it takes them), as a file read straight into ids is."""


ONE_BATCH = Driver()
"""Every event in one batch, no watermark before the end, no pickling."""


@dataclass
class MatcherSpy:
    """Who matched, while :func:`spy_matchers` watches: the bindings of each call of the
    Python path (``BgpMatcher.match``; ``None`` when unbound) and the pattern or expression
    of each call of pyoxigraph (``GraphMatcher.match`` and ``.holds``)."""

    fast: list[Mapping[str, object] | None] = field(default_factory=list)
    asked: list[object] = field(default_factory=list)


def spy_matchers(monkeypatch: pytest.MonkeyPatch) -> MatcherSpy:
    """Record in a :class:`MatcherSpy` the calls of both matchers, which still answer."""
    spy = MatcherSpy()
    in_python, by_pyoxigraph, holds = BgpMatcher.match, GraphMatcher.match, GraphMatcher.holds

    def python(self: BgpMatcher, *args: Any, **kwargs: Any) -> Any:
        spy.fast.append(args[2] if len(args) > 2 else kwargs.get("bound"))
        return in_python(self, *args, **kwargs)

    def pyoxigraph(self: GraphMatcher, *args: Any, **kwargs: Any) -> Any:
        spy.asked.append(args[0])
        return by_pyoxigraph(self, *args, **kwargs)

    def pyoxigraph_holds(self: GraphMatcher, expression: str, mu: Mapping[str, Any]) -> bool:
        spy.asked.append(expression)
        return holds(self, expression, mu)

    monkeypatch.setattr(BgpMatcher, "match", python)
    monkeypatch.setattr(GraphMatcher, "match", pyoxigraph)
    monkeypatch.setattr(GraphMatcher, "holds", pyoxigraph_holds)
    return spy


def answered(results: Sequence[str]) -> bool:
    """Whether canonical results hold an answer: a SELECT row, a true ASK, a non-empty
    CONSTRUCT graph (a differential case that counts, not one both sides leave empty)."""
    for line in results:
        found = json.loads(line)
        if found.get("boolean") is not False and found.get("triples") != []:
            return True
    return False


def canonical(results: Iterable[Result]) -> list[str]:
    """Results as sorted JSON lines: a multiset, comparable across engines."""
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def oracle(
    plan: Plan,
    events: Sequence[Event] | StreamSet,
    graphs: Mapping[str, Any] | None = None,
) -> list[str]:
    """The oracle's results (``rsep.semantics.evaluate``) over ``events`` (or the given
    stream set), canonical."""
    streams = events if isinstance(events, StreamSet) else StreamSet.from_events(events)
    return canonical(evaluate(plan, streams, dict(graphs or {})))


def engine(
    plan: Plan,
    events: Sequence[Event],
    graphs: Mapping[str, frozenset[Triple]] | None = None,
    driver: Driver = ONE_BATCH,
    *,
    expect: type[IncrementalQuery] = IncrementalQuery,
) -> list[Result]:
    """The results of the dispatcher's query for ``plan`` (an ``expect``), fed as ``driver``
    says."""
    query = incremental_query(plan, graphs)
    assert isinstance(query, expect)
    return feed(query, events, driver)[0]


def feed(
    query: IncrementalQuery,
    events: Sequence[Event],
    driver: Driver = ONE_BATCH,
    *,
    room: int = 20,
    rising: bool = False,
    until: int | None = None,
) -> tuple[list[Result], int | None]:
    """The results of ``query`` fed ``events`` as ``driver`` says, then finished (up to
    ``until``), and the last watermark given. After the last event the watermark may move
    up to ``room`` further. With ``rising`` a watermark not past the last one given is
    skipped (streams interleaved, so batches may end earlier than the last mark). Checks
    the contract on the way: results in time order, none after the watermark."""
    out: list[Result] = []
    watermark: int | None = None
    sizes = list(driver.batches) or [max(1, len(events))]
    position = step = 0
    while position < len(events):
        batch = events[position : position + sizes[step % len(sizes)]]
        position += len(batch)
        if driver.ids and query.dictionary is not None:
            out += query.push(next(batches_of(batch, query.dictionary, len(batch))))
        else:
            out += query.push(batch)
        advance = driver.advances[step] if step < len(driver.advances) else None
        if advance is not None:
            last = batch[-1].t_end
            following = events[position].t_end if position < len(events) else last + room
            if following > last:
                mark = last + int(advance * (following - 1 - last))
                if not rising or watermark is None or mark > watermark:
                    watermark = mark
                    found = query.advance(mark)
                    assert all(r.time <= mark for r in found)
                    out += found
        if step < len(driver.pickles) and driver.pickles[step]:
            query = pickle.loads(pickle.dumps(query))
        step += 1
    out += query.finish(until)
    times = [r.time for r in out]
    assert times == sorted(times), "results out of time order"
    return out, watermark
