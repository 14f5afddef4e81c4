"""GPMs as vectorised joins over a batch (rsep.engine.pattern) against pyoxigraph's
answers on each event (SPAseq Def. 7): triple patterns with repeated and shared variables,
blank nodes, stars (one subject, constant predicates) with constant subjects and objects
and repeated predicates, FILTERs compiled or evaluated per distinct binding, string tests
on terms; GPMs that differ only in variable names sharing one match in a batch; the
knowledge base joined on one, two or no shared variables (Def. 15)."""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.algebra.events import Gpm, GraphPatternRef
from rsep.engine.batch import batches_of
from rsep.engine.pattern import Solutions, compile_gpm, solutions
from rsep.engine.terms import TermDictionary
from rsep.rdf.event import Event
from rsep.rdf.sparql import GraphMatcher

EX = "http://example.org/"
STREAM = EX + "stream"

_NODES = [NamedNode(EX + n) for n in ("a", "b-x", "c-x")]
_OBJECTS: list[NamedNode | BlankNode | Literal] = [
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
    "?s <http://example.org/p> ?o . ?s <http://example.org/q> <http://example.org/a>",
    "<http://example.org/a> <http://example.org/p> ?o . <http://example.org/a> "
    "<http://example.org/q> ?o2",
    "?s <http://example.org/p> ?o . ?s <http://example.org/q> ?o2 . ?s <http://example.org/p> ?o3",
    "?s <http://example.org/p> ?o . ?s <http://example.org/q> ?o",
    "?s <http://example.org/p> ?o . ?s <http://example.org/q> ?o2 FILTER (?o2 > 0)",
    "?s <http://example.org/p> <http://example.org/nowhere>",
    "?s <http://example.org/q> ?o . ?o <http://example.org/p> ?o2",
    "?o <http://example.org/p> ?s . ?o2 <http://example.org/q> ?s "
    'FILTER (STRENDS(STR(?o), "-x") && ?o2 != <http://example.org/a>)',
    '?s <http://example.org/p> ?o . ?s <http://example.org/q> _:b FILTER (STRSTARTS(STR(?o), "1"))',
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
    names = ("s", "p", "o", "o2", "o3")
    slots = {n: i for i, n in enumerate(names)}
    compiled = compile_gpm(gpm, slots, dictionary)
    assert not isinstance(compiled, str)
    batch = next(batches_of(found, dictionary, len(found)))
    matcher = GraphMatcher()
    got = solutions(compiled, batch, 0, dictionary, slots, len(slots), None, matcher)
    by_event = _by_event(got, names, slots, dictionary)
    for i, event in enumerate(found):
        expected = {
            json.dumps({n: str(t) for n, t in mu.items()}, sort_keys=True)
            for mu in matcher.match(gpm.pattern, event.graph)
        }
        assert set(by_event.get(i, [])) == expected, (i, text)


def _by_event(
    got: Solutions, names: Sequence[str], slots: dict[str, int], dictionary: TermDictionary
) -> dict[int, list[str]]:
    """Each event's solution rows as JSON mappings of the bound slots' texts."""
    out: dict[int, list[str]] = {}
    for event, row in zip(got.event.tolist(), got.rows.tolist(), strict=True):
        mu = {n: dictionary.text(row[slots[n]]) for n in names if row[slots[n]] >= 0}
        out.setdefault(event, []).append(json.dumps(mu, sort_keys=True))
    return out


KB_GRAPH = EX + "kb"
_KB = [
    Triple(NamedNode(EX + "a"), NamedNode(EX + "name"), Literal("A")),
    Triple(NamedNode(EX + "a"), NamedNode(EX + "name"), Literal("A2")),
    Triple(NamedNode(EX + "b-x"), NamedNode(EX + "name"), Literal("B")),
    Triple(NamedNode(EX + "a"), NamedNode(EX + "p"), NamedNode(EX + "b-x")),
    Triple(NamedNode(EX + "c-x"), NamedNode(EX + "p"), NamedNode(EX + "c-x")),
]
_KB_CASES = [
    # stream pattern, GRAPH pattern: one shared variable, two, none (twice)
    ("?s <http://example.org/p> ?o", "?s <http://example.org/name> ?n"),
    ("?s <http://example.org/p> ?o", "?s <http://example.org/p> ?o"),
    ("?s <http://example.org/q> ?o", "?x <http://example.org/name> ?n"),
    ("?s <http://example.org/q> ?o", "<http://example.org/a> <http://example.org/p> ?_k"),
    # no variable: one empty solution where the KB holds the triple, none elsewhere
    (
        "?s <http://example.org/p> ?o",
        "<http://example.org/a> <http://example.org/p> <http://example.org/b-x>",
    ),
]


@settings(max_examples=200, deadline=None)
@given(
    found=events(),
    case=st.sampled_from(_KB_CASES),
    changes=st.lists(st.integers(0, 5), max_size=3, unique=True).map(sorted),
    cuts=st.lists(st.integers(0, len(_KB)), min_size=4, max_size=4),
)
def test_the_knowledge_base_is_joined(
    found: list[Event], case: tuple[str, str], changes: list[int], cuts: list[int]
) -> None:
    """Each event's solutions joined with the GRAPH part's over the KB (Def. 15) at the
    event's time are the compatible unions of pyoxigraph's solutions of both: a static KB
    (no changes) or one that changes at ``changes`` (RSP-QL Def. 10), each version a
    different part of it; after pickling (a GRAPH part without variables kept its one
    empty solution)."""
    from rsep.algebra.events import KbPattern
    from rsep.engine.pattern import KnowledgeBase

    text, kb_text = case
    kb_part = KbPattern(KB_GRAPH, GraphPatternRef("{ " + kb_text + " }"))
    gpm = Gpm("A", STREAM, GraphPatternRef("{ " + text + " }"), kb_part)
    dictionary = TermDictionary()
    names = ("s", "o", "n", "x", "_k")
    slots = {n: i for i, n in enumerate(names)}
    compiled = compile_gpm(gpm, slots, dictionary)
    assert not isinstance(compiled, str)
    graphs = [frozenset(_KB[cut:] if i % 2 else _KB[:cut]) for i, cut in enumerate(cuts)]
    graphs = graphs[: len(changes) + 1]
    kb = KnowledgeBase.of(changes, graphs, compiled, dictionary, slots)
    kb = pickle.loads(pickle.dumps(kb))  # as a checkpoint keeps it
    batch = next(batches_of(found, dictionary, len(found)))
    matcher = GraphMatcher()
    got = solutions(compiled, batch, 0, dictionary, slots, len(slots), kb, matcher)
    assert (np.diff(got.event) >= 0).all()  # in the events' order
    by_event = _by_event(got, names, slots, dictionary)
    for i, event in enumerate(found):
        version = sum(1 for c in changes if c <= event.t_start)
        assert kb.graph_at(event.t_start) == graphs[version]
        kb_mus = matcher.match(kb_part.pattern, graphs[version])
        expected = set()
        for mu in matcher.match(gpm.pattern, event.graph):
            for nu in kb_mus:
                if all(mu[k] == nu[k] for k in mu.keys() & nu.keys()):
                    union = {**mu, **nu}
                    expected.add(json.dumps({n: str(union[n]) for n in union}, sort_keys=True))
        assert sorted(by_event.get(i, [])) == sorted(expected), (i, case)


def test_gpms_differing_in_names_share_one_match() -> None:
    """Two GPMs whose patterns differ only in variable names: the second reuses the first's
    match in the batch, under its own names."""
    dictionary = TermDictionary()
    names = ("c", "p1", "p2", "v1", "v2")
    slots = {n: i for i, n in enumerate(names)}
    a = compile_gpm(
        Gpm(
            "A",
            STREAM,
            GraphPatternRef("{ ?c <http://example.org/p> ?p1 . ?c <http://example.org/q> ?v1 }"),
        ),
        slots,
        dictionary,
    )
    b = compile_gpm(
        Gpm(
            "B",
            STREAM,
            GraphPatternRef("{ ?c <http://example.org/p> ?p2 . ?c <http://example.org/q> ?v2 }"),
        ),
        slots,
        dictionary,
    )
    assert not isinstance(a, str) and not isinstance(b, str)
    p, q = NamedNode(EX + "p"), NamedNode(EX + "q")
    found = [
        Event.point(STREAM, 0, [Triple(_NODES[0], p, _NODES[1]), Triple(_NODES[0], q, _NODES[2])]),
        Event.point(STREAM, 1, [Triple(_NODES[1], p, _NODES[0])]),
        Event.point(STREAM, 2, [Triple(_NODES[2], p, _NODES[0]), Triple(_NODES[2], q, _NODES[0])]),
    ]
    batch = next(batches_of(found, dictionary, len(found)))
    skeletons: dict[tuple[object, ...], pa.Table | None] = {}
    args = (batch, 0, dictionary, slots, len(slots), None, GraphMatcher(), skeletons)
    first = solutions(a, *args)
    assert len(skeletons) == 1
    second = solutions(b, *args)
    assert len(skeletons) == 1
    assert first.event.tolist() == second.event.tolist() == [0, 2]
    for mine, theirs in (("p1", "p2"), ("v1", "v2")):
        assert (first.rows[:, slots[mine]] == second.rows[:, slots[theirs]]).all()
        assert (first.rows[:, slots[theirs]] == -1).all()
        assert (second.rows[:, slots[mine]] == -1).all()
