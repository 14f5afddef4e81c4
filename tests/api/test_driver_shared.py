"""Queries that share one term dictionary (:meth:`rsep.Query.incremental` with
``dictionary=``, :meth:`rsep.Incremental.encode`): a table encoded once into batches of the
shared ids and pushed to every query gives each query the answers it gives alone, and the
oracle's (SPAseq Def. 12 over a drop in price, the first half of examples/uc4-stock's V
shape, in variants; an RSP-QL window query fed the same batches as events)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from pyoxigraph import Literal, NamedNode, Triple

import rsep
from rsep.engine.terms import TermDictionary
from rsep.rdf.event import Event
from rsep.rdf.formats import write_events
from rsep.spark.job import StreamInput

STREAM = "http://example.org/stream/nasdaq"
EX = "http://example/"
INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")
V_SHAPE = """PREFIX pred: <http://example/>
SELECT ?company ?p1 ?p2
WITHIN {within} SECONDS
PARTITION BY ?company
FROM STREAM S1 <http://example.org/stream/nasdaq>
WHERE {{
  SEQ (A{sep} B)
  DEFINE GPM A ON S1 {{ ?company pred:price ?p1 . ?company pred:volume ?v1 . }}
  DEFINE GPM B ON S1 {{ ?company pred:price ?p2 . FILTER (?p2 < ?p1 * {factor}) }}
}}
"""
RSPQL = """PREFIX pred: <http://example/>
SELECT ?company ?price
FROM NAMED WINDOW <http://example.org/w> ON <http://example.org/stream/nasdaq>
  [RANGE PT2S STEP PT1S]
WHERE { WINDOW <http://example.org/w> { ?company pred:price ?price . ?company pred:volume ?v .
  FILTER (?v > 130) } }
"""


def variants() -> list[str]:
    """The 16 drops: strict or skip-till-next, WITHIN 1 or 3 s, four drops."""
    return [
        V_SHAPE.format(sep=sep, within=within, factor=factor)
        for sep in (",", ";")
        for within in (1, 3)
        for factor in ("0.999", "0.998", "0.997", "0.996")
    ]


def market(companies: int = 6, bars: int = 60, seed: int = 3) -> list[Event]:
    """Bars of ``companies`` companies every 100 ms (a price on a random walk and a
    volume, two triples an event), in time order."""
    rng = np.random.default_rng(seed)
    prices = rng.integers(1_000, 2_000, companies)
    out: list[Event] = []
    for bar in range(bars):
        for c in range(companies):
            step = int(rng.integers(-6, 7))
            prices[c] += step
            company = NamedNode(f"{EX}company{c}")
            graph = frozenset(
                {
                    Triple(
                        company, NamedNode(EX + "price"), Literal(str(prices[c]), datatype=INTEGER)
                    ),
                    Triple(
                        company,
                        NamedNode(EX + "volume"),
                        Literal(str(125 + step), datatype=INTEGER),
                    ),
                }
            )
            t = 1_000 + bar * 100
            out.append(Event(STREAM, t, t, graph))
    return out


def table_of(events: list[Event], folder: Path) -> pa.Table:
    """``events`` as a table of triples (:func:`rsep.read_table` of their N-Quads)."""
    path = folder / "market.nq"
    with path.open("w", encoding="utf-8") as out:
        write_events(events, out, "nquads")
    return rsep.read_table(StreamInput(path, STREAM))


def canonical(results: list[rsep.Result]) -> list[str]:
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in results)


def shared_answers(texts: list[str], table: pa.Table, pushes: int) -> list[list[str]]:
    """Each query's answers, all given one dictionary and fed ``table`` in ``pushes``
    parts, each part encoded once."""
    terms = TermDictionary()
    running = [rsep.Query(text).incremental(dictionary=terms) for text in texts]
    found: list[list[rsep.Result]] = [[] for _ in texts]
    bounds = np.linspace(0, table.num_rows, pushes + 1).astype(int)
    bounds -= bounds % 2  # an event's two triples in one part
    for lo, hi in itertools.pairwise(bounds):
        for batch in running[0].encode(table.slice(lo, hi - lo)):
            for i, query in enumerate(running):
                found[i] += query.push(batch)
    for i, query in enumerate(running):
        assert query.dictionary is terms
        found[i] += query.finish()
    return [canonical(f) for f in found]


@pytest.mark.parametrize("count", [2, 16])
def test_queries_sharing_a_dictionary_answer_as_alone(count: int, tmp_path: Path) -> None:
    """``count`` V shapes sharing one dictionary, fed one encoding of each push: each
    query's answers equal its answers alone (the columnar engine over the whole table),
    and the first two equal the oracle's."""
    events = market()
    table = table_of(events, tmp_path)
    texts = variants()[:: 16 // count][:count] if count < 16 else variants()
    together = shared_answers(texts, table, pushes=7)
    assert sum(map(len, together)) > 0
    for text, found in zip(texts, together, strict=True):
        assert found == canonical(list(rsep.Query(text).run(table, engine="local")))
    for text, found in list(zip(texts, together, strict=True))[:2]:
        assert found == canonical(list(rsep.Query(text).run(events, engine="reference")))


def test_a_query_on_events_takes_the_shared_batches(tmp_path: Path) -> None:
    """An RSP-QL query (its engine takes events) given the shared dictionary and fed the
    batches a V shape is fed gives the oracle's answers, and so does the V shape."""
    events = market(companies=3, bars=30)
    table = table_of(events, tmp_path)
    texts = [RSPQL, variants()[9]]
    together = shared_answers(texts, table, pushes=4)
    assert together[0]
    for text, found in zip(texts, together, strict=True):
        assert found == canonical(list(rsep.Query(text).run(events, engine="reference")))


def test_share_takes_a_dictionary_that_extends_its_own(tmp_path: Path) -> None:
    """:meth:`rsep.Incremental.share`: a query restored with a copy of the shared
    dictionary takes the shared one again (a checkpoint's restart); a smaller one is
    refused."""
    import pickle

    table = table_of(market(companies=2, bars=20), tmp_path)
    text = variants()[12]
    terms = TermDictionary()
    query = rsep.Query(text).incremental(dictionary=terms)
    half = table.slice(0, table.num_rows // 2)
    found = [r for b in query.encode(half) for r in query.push(b)]
    restored = pickle.loads(pickle.dumps(query))
    assert restored.dictionary is not terms and len(restored.dictionary) == len(terms)
    other = rsep.Query(variants()[0]).incremental(dictionary=terms)
    rest = other.encode(table.slice(table.num_rows // 2))  # the shared one grows
    restored.share(terms)
    assert restored.dictionary is terms
    found += [r for b in rest for r in restored.push(b)] + restored.finish()
    assert canonical(found) == canonical(list(rsep.Query(text).run(table, engine="local")))
    with pytest.raises(ValueError, match="extends"):
        restored.share(TermDictionary())
