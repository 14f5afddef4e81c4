"""The columnar instantaneous dataset (rsep.engine.dataset): which group patterns it takes and
why not the others, and its solutions at several evaluation instants at once (RSP-QL Def. 18,
23; SPARQL 1.1 sec. 18.5). The differential tests against the oracle are
tests/engine/test_continuous.py's (``test_differential_*``, ``test_differential_share``)."""

from __future__ import annotations

import numpy as np
import pytest
from pyoxigraph import NamedNode, Triple

from rsep.algebra.window import NamedWindow, Reading, TimeWindow
from rsep.engine.dataset import InstantSolver, compile_group, spans_of
from rsep.engine.terms import TermDictionary
from rsep.engine.window import StreamBuffer, WindowState
from rsep.rdf.event import Event

EX = "http://example.org/"
W = EX + "w"


def _iri(name: str) -> NamedNode:
    return NamedNode(EX + name)


def test_blocks_of_citybench_q1() -> None:
    """CityBench Q1's shape: triples of the default graph (the sensor repository) and one
    block per named window, joined on ``?p1`` and ``?p2``."""
    text = f"""
      ?p1 a <{EX}CongestionLevel> .
      GRAPH <{EX}w1> {{ ?ob1 <{EX}property> ?p1 ; <{EX}value> ?v1 . FILTER(?v1 > 2) }}
      GRAPH <{EX}w2> {{ ?ob2 <{EX}property> ?p1 ; <{EX}value> ?v2 . }}
      FILTER(?v1 != ?v2)
    """
    group = compile_group(text, TermDictionary())
    assert not isinstance(group, str)
    assert [(b.graph, len(b.patterns), len(b.filters)) for b in group.blocks] == [
        (None, 1, 0),
        (EX + "w1", 2, 1),
        (EX + "w2", 2, 0),
    ]
    assert len(group.filters) == 1
    assert group.variables == ("ob1", "ob2", "p1", "v1", "v2")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f"?s <{EX}p> ?o OPTIONAL {{ ?o <{EX}q> ?x }}", "Optional element"),
        ("GRAPH ?g { ?s ?p ?o }", "Graph element"),
        (f'?s <{EX}p> "7"', "not a variable or IRI"),
        (f"?s <{EX}p> _:b", "blank node"),
        (f"?s <{EX}p> ?o FILTER(?o < NOW())", "NOW()"),
        (f"?s <{EX}p> ?o FILTER EXISTS {{ ?o ?p ?x }}", "EXISTS"),
        (f"?s <{EX}p> ?o FILTER(?x > 1)", "does not bind"),
        (f"?o <{EX}q> ?x GRAPH <{W}> {{ ?s <{EX}p> ?o FILTER(?x > 1) }}", "does not bind"),
        (f"{{ SELECT ?s WHERE {{ ?s <{EX}p> ?o }} }} ?s <{EX}p> ?o", "SubSelect element"),
    ],
)
def test_what_goes_to_pyoxigraph(text: str, reason: str) -> None:
    """Every pattern outside the solver's reach is named with the reason ``rsep explain``
    shows (a FILTER inside a ``GRAPH`` block sees that block's variables only)."""
    found = compile_group(text, TermDictionary())
    assert isinstance(found, str)
    assert reason in found


def test_solutions_at_several_instants() -> None:
    """One call, three instants over a window's items: a triple in two items of one content
    is one triple of the snapshot (a set); the static default graph joins at each instant;
    the FILTER program keeps what it holds."""
    dictionary = TermDictionary()
    buffer = StreamBuffer(EX + "s", dictionary)
    a, p, q = _iri("a"), _iri("p"), _iri("q")
    buffer.append(Event.point(EX + "s", 1, [Triple(a, p, _iri("b"))]))
    buffer.append(Event.point(EX + "s", 2, [Triple(a, p, _iri("b")), Triple(a, p, _iri("c"))]))
    buffer.append(Event.point(EX + "s", 3, [Triple(_iri("d"), p, _iri("c"))]))
    named = NamedWindow(W, EX + "s", TimeWindow(10, 1))
    state = WindowState(named, Reading(), buffer)
    kb = frozenset({Triple(a, q, _iri("k")), Triple(_iri("d"), q, _iri("k"))})
    text = f"?s <{EX}q> ?k GRAPH <{W}> {{ ?s <{EX}p> ?o }} FILTER(?o != <{EX}c> || ?s = <{EX}d>)"
    group = compile_group(text, dictionary)
    assert not isinstance(group, str)
    solver = InstantSolver(group, dictionary, [state], frozenset(), {"kb": kb}, ["kb"], [])
    # instant 0 holds item 0, instant 1 items 0 and 1, instant 2 items 1 and 2
    contents = {W: np.array([[0, 0, 1], [1, 0, 2], [2, 1, 3]], np.int64)}
    found = solver.solve(3, contents)
    rows = sorted(
        (int(e), str(dictionary.term(int(s))), str(dictionary.term(int(o))))
        for e, s, o in zip(found["event"], found["s"], found["o"], strict=True)
    )
    assert rows == [
        (0, f"<{EX}a>", f"<{EX}b>"),
        (1, f"<{EX}a>", f"<{EX}b>"),
        (2, f"<{EX}a>", f"<{EX}b>"),
        (2, f"<{EX}d>", f"<{EX}c>"),
    ]
    assert list(found["event"]) == sorted(found["event"])
    empty = solver.solve(1, {W: np.zeros((0, 3), np.int64)})
    assert len(empty["event"]) == 0


def test_spans() -> None:
    """The positions of spans one after the other, an empty span giving none."""
    starts, ends = np.asarray([0, 5, 9]), np.asarray([2, 5, 12])
    assert spans_of(starts, ends).tolist() == [0, 1, 9, 10, 11]
