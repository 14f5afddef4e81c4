"""GPMs as vectorised joins over a batch (rsep.engine.pattern) against pyoxigraph's
answers on each event (SPAseq Def. 7): triple patterns with repeated and shared variables,
blank nodes, FILTERs compiled or evaluated per distinct binding, string tests on terms."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.algebra.events import Gpm, GraphPatternRef
from rsep.engine.batch import batches_of
from rsep.engine.pattern import compile_gpm, solutions
from rsep.engine.terms import TermDictionary
from rsep.rdf.event import Event
from rsep.rdf.sparql import GraphMatcher

EX = "http://example.org/"
STREAM = EX + "stream"

_NODES = [NamedNode(EX + n) for n in ("a", "b-x", "c-x")]
_OBJECTS = [
    *_NODES,
    BlankNode("z"),
    Literal("1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    Literal("hello-x"),
    Literal("x-hello", language="en"),
]
_PATTERNS = [
    "?s <http://example.org/p> ?o",
    "?s <http://example.org/p> ?o . ?s <http://example.org/q> ?o2",
    "?s <http://example.org/p> ?s",
    "?s <http://example.org/p> _:b . _:b <http://example.org/q> ?o",
    '?s ?p ?o FILTER (STRENDS(STR(?o), "-x"))',
    '?s ?p ?o FILTER (STRSTARTS(STR(?s), "http://example.org/b") && CONTAINS(STR(?o), "ell"))',
    "?s <http://example.org/p> ?o FILTER (?o > 0 || ISIRI(?o))",
    '?s ?p ?o FILTER (LANG(?o) = "en")',
]


@st.composite
def events(draw: st.DrawFn) -> list[Event]:
    out = []
    for t in range(draw(st.integers(1, 5))):
        triples = [
            Triple(
                draw(st.sampled_from(_NODES)),
                NamedNode(EX + draw(st.sampled_from(["p", "q"]))),
                draw(st.sampled_from(_OBJECTS)),
            )
            for _ in range(draw(st.integers(0, 5)))
        ]
        out.append(Event.point(STREAM, t, triples))
    return out


@settings(max_examples=200, deadline=None)
@given(found=events(), text=st.sampled_from(_PATTERNS))
def test_solutions_equal_pyoxigraphs(found: list[Event], text: str) -> None:
    """Every event's solutions, as a set of mappings, are pyoxigraph's."""
    gpm = Gpm("A", STREAM, GraphPatternRef("{ " + text + " }"))
    dictionary = TermDictionary()
    names = ("s", "p", "o", "o2")
    slots = {n: i for i, n in enumerate(names)}
    compiled = compile_gpm(gpm, slots, dictionary)
    assert not isinstance(compiled, str)
    batch = next(batches_of(found, dictionary, len(found)))
    matcher = GraphMatcher()
    got = solutions(compiled, batch, 0, dictionary, slots, len(slots), None, matcher)
    by_event: dict[int, set[str]] = {}
    for event, row in zip(got.event.tolist(), got.rows.tolist(), strict=True):
        mu = {n: dictionary.text(row[slots[n]]) for n in names if row[slots[n]] >= 0}
        by_event.setdefault(event, set()).add(json.dumps(mu, sort_keys=True))
    for i, event in enumerate(found):
        expected = {
            json.dumps({n: str(t) for n, t in mu.items()}, sort_keys=True)
            for mu in matcher.match(gpm.pattern, event.graph)
        }
        assert by_event.get(i, set()) == expected, (i, text)
