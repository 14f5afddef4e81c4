"""The oracle with solution modifiers beside an event pattern: SPARQL 1.1's GROUP BY,
HAVING, ORDER BY, LIMIT applied to the answer of each evaluation, before the streaming
operator (RSP-QL Def. 24; RSEP-QL Sect. 3.3; docs/semantics.md). Data: S_nearby (RSP-QL
Example 3) and EP-SPARQL's stock fixture."""

from __future__ import annotations

import json

import test_semantics_epsparql as paper
from semantics_data import DATA, EX, S_NEARBY

import rsep
from rsep.rdf.event import StreamSet
from rsep.semantics import evaluate

COUNTS = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?shop (COUNT(?who) AS ?n)
FROM NAMED WINDOW :w ON :S_nearby [RANGE 10 STEP 2]
WHERE {{ MATCH ( EVENT :w {{ ?who :isNearby ?shop }} ) }}
GROUP BY ?shop HAVING (COUNT(?who) > 1) ORDER BY DESC(?n) LIMIT 1
"""
"""RSEP-QL: the shop with most people nearby in the last closed window, if more than one."""


def table(results: object) -> list[tuple[int, str, str]]:
    out = []
    for result in results:  # type: ignore[attr-defined]
        bindings = result.to_json()["bindings"]
        out.append((result.time, bindings["shop"], bindings["n"].split('"')[1]))
    return sorted(out)


def test_rsepql_group_by_having_order_limit_at_each_evaluation() -> None:
    """W^τ (10, 2) on S_nearby: at 10 the window (0, 10] holds Diana, Carl and Eve near :a
    and Eve near :b: :a with 3; at 12 and 14 ((2, 12], (4, 14]) Carl and Eve near :a and
    Diana near :b: :a with 2; from 16 :a has Eve alone and :b Diana alone: no group passes
    HAVING."""
    query = rsep.Query(COUNTS)
    found = query.run({S_NEARBY: DATA / "s_nearby.tnt"}, engine="reference")
    assert table(found) == [(10, f"<{EX}a>", "3"), (12, f"<{EX}a>", "2"), (14, f"<{EX}a>", "2")]


def test_epsparql_order_limit_on_the_answer_so_far() -> None:
    """EP-SPARQL query (3) with ``ORDER BY DESC(?company) LIMIT 1``: its answer at an
    instant is every solution so far (Sect. 4.2), so the top row is :umbrella from the 10th
    on, with its interval, and IStream streams it once."""
    text = (paper.PAPER / "query3.epsparql").read_text(encoding="utf-8")
    plan = paper.compiled(text + "\nORDER BY DESC(?company) LIMIT 1")
    events = sorted(paper.fixture("stock.trig").events(), key=lambda e: e.t_end)
    [result] = [r.to_json() for r in evaluate(plan, StreamSet.from_events(events), {})]
    tenth, first = 1299715200000, 1298937600000
    assert json.dumps(result, sort_keys=True) == json.dumps(
        {"bindings": {"company": f"<{EX}umbrella>"}, "interval": [first, tenth], "time": tenth},
        sort_keys=True,
    )
