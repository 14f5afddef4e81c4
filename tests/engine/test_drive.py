"""The one driver loop (:func:`rsep.engine.query.drive`): events or batches of term ids fed
to the engine's evaluator in pushes, the watermark moved between them, the input ended or
left open; the answers equal the oracle's however the input is cut."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from driving import canonical, oracle
from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.engine import incremental_query
from rsep.engine.batch import batches_of
from rsep.engine.query import drive
from rsep.engine.sequence import SequenceQuery
from rsep.lang import detect_dialect, parse_query
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.formats import read_events
from rsep.semantics import evaluate
from rsep.semantics.graph import read_graph

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS / "api") not in sys.path:
    sys.path.insert(0, str(TESTS / "api"))

from test_public_api import DATA, EX, RSPQL  # noqa: E402

SPASEQ = f"""PREFIX ex: <{EX}>
SELECT ?c ?p1 ?p2
WITHIN 10 SECONDS
FROM STREAM S1 <{EX}S>
WHERE SEQ (A; B)
{{
  DEFINE GPM A ON S1 {{ ?c ex:price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?c ex:price ?p2 . FILTER (?p2 < ?p1) }}
}}
"""
"""A company's price, then its next lower one (skip-till-next) within 10 s. RSPQL is RSP-QL
Example 3's window joined with the background graph of Example 1: answers at window closes,
which the watermark makes final between events."""

PRICES = [("c1", 14, 0), ("c2", 5, 500), ("c1", 12, 1000), ("c2", 3, 1500), ("c1", 11, 2000)]
PRICES += [("c1", 15, 3000), ("c2", 7, 3500), ("c1", 10, 4000), ("c2", 6, 4000)]


def plan_of(text: str, **overrides: str) -> Plan:
    dialect = detect_dialect(text)
    return compile_query(parse_query(text, dialect), dialect, overrides=overrides)


def prices() -> list[Event]:
    integer = NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    return [
        Event.point(
            EX + "S",
            t,
            [Triple(NamedNode(EX + c), NamedNode(EX + "price"), Literal(str(v), datatype=integer))],
        )
        for c, v, t in PRICES
    ]


def nearby() -> tuple[list[Event], dict[str, frozenset[Triple]]]:
    events = list(read_events(DATA / "s_nearby.tnt", stream=EX + "S_nearby"))
    events.sort(key=lambda e: (e.t_end, e.t_start))
    return events, {EX + "shops": read_graph(DATA / "g_shops.ttl")}


@pytest.mark.parametrize("size", [1, 2, 1024])
def test_events_in_pushes_equal_the_oracle(size: int) -> None:
    events = prices()
    plan = plan_of(SPASEQ)
    found = list(drive(incremental_query(plan), events, batch=size))
    assert canonical(found) == oracle(plan, events)
    assert [r.time for r in found] == sorted(r.time for r in found)

    windows, graphs = nearby()
    plan = plan_of(RSPQL, **{"window.t0": "0"})
    found = list(drive(incremental_query(plan, graphs), windows, batch=size))
    assert canonical(found) == oracle(plan, windows, graphs)
    assert found, "the window query answers over this stream"


def test_answers_come_before_the_input_ends() -> None:
    """A window's answer is given once the next push shows its instant complete, not at
    ``finish``."""
    events, graphs = nearby()
    query = incremental_query(plan_of(RSPQL, **{"window.t0": "0"}), graphs)
    seen: list[int] = []
    early: list[int] = []

    def pushed(count: int) -> None:
        seen.append(count)

    for result in drive(query, events, batch=1, pushed=pushed):
        if len(seen) < len(events):
            early.append(result.time)
    assert seen == list(range(1, len(events) + 1))
    assert early, "no answer before the last push"


def test_batches_cut_at_until() -> None:
    events = prices()
    plan = plan_of(SPASEQ)
    for until in (1500, 3500, 4000):
        query = SequenceQuery(plan)
        found = list(drive(query, batches_of(events, query.dictionary, 4), until))
        expected = canonical(evaluate(plan, StreamSet.from_events(events), {}, until))
        assert canonical(found) == expected
        assert all(r.time <= until for r in found)


def test_open_input_then_finished() -> None:
    """Without ``finish`` the input stays open (a live partition between triggers): the
    answers up to the watermark, then the rest once it ends."""
    events = prices()
    plan = plan_of(SPASEQ)
    query = incremental_query(plan)
    first = list(drive(query, events[:4], watermark=1500, finish=False))
    assert all(r.time <= 1500 for r in first)
    assert {r.time for r in first} == {1000, 1500}
    rest = list(drive(query, events[4:]))
    assert canonical(first + rest) == oracle(plan, events)


def test_batches_of_ids_are_for_evaluators_that_take_them() -> None:
    """RSP-QL's window evaluator takes batches of its own dictionary's ids (in pushes of 1,
    3 and all events) with the oracle's answers; an evaluator that takes events refuses
    them."""
    events, graphs = nearby()
    plan = plan_of(RSPQL, **{"window.t0": "0"})
    truth = oracle(plan, events, graphs)
    assert truth
    for size in (1, 3, len(events)):
        query = incremental_query(plan, graphs)
        assert query.dictionary is not None
        found = list(drive(query, batches_of(events, query.dictionary, size)))
        assert canonical(found) == truth
    reasoning = incremental_query(plan_of(RSPQL, **{"window.t0": "0"}), graphs)
    reasoning.dictionary = None  # as the EP-SPARQL and CQELS-CEP evaluators
    with pytest.raises(TypeError, match="takes events"):
        list(drive(reasoning, batches_of(events, SequenceQuery(plan_of(SPASEQ)).dictionary)))
