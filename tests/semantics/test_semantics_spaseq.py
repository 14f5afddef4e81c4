"""The oracle on SPAseq (seed 004): Examples 3-11 and Fig. 1 with the paper's data, every
test folder SPAseq ships (``shared/data/spaseq/tests``) with its expected matches derived
by hand, the choices the paper leaves open (negation, optional, Kleene+ iterations, FILTERs
naming earlier GPMs, PARTITION BY) and property tests.

Where an example contradicts the definitions, the test asserts the definitions and says
so (docs/semantics.md, "SPAseq"). The data folders' events carry no time: the stream
description reader puts event k of each stream at ``k * 1000`` ms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, RdfFormat, parse
from semantics_data import DATA, EX, expand, pattern, short

from rsep.algebra.compile import compile_query
from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    KbPattern,
    KleenePlus,
    Negation,
    Optional,
    PartitionBy,
    Strategy,
    Within,
)
from rsep.algebra.events import (
    Sequence as Seq,
)
from rsep.algebra.plan import Dataset, Plan, Select
from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.lang import detect_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import read_events
from rsep.rdf.terms import Term
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import Mu
from rsep.semantics.graph import read_graph
from rsep.semantics.spaseq import SpaseqEvaluation, SpaseqMatch, evaluate_bounds, find_matches
from rsep.semantics.store import GraphMatcher

ANY, NEXT, STRICT = Strategy.SKIP_TILL_ANY, Strategy.SKIP_TILL_NEXT, Strategy.STRICT
U1, U2, U3 = EX + "u1", EX + "u2", EX + "u3"
MATCHER = GraphMatcher()


def event(stream: str, t: int, text: str) -> Event:
    """An event of ``stream`` at ``t`` whose graph is the Turtle ``text`` (``:name`` terms)."""
    triples = [q.triple for q in parse(input=expand(text), format=RdfFormat.TURTLE)]
    return Event.point(stream, t, triples)


def stream(iri: str, *items: tuple[int, str]) -> Stream:
    """A named stream (Def. 3) from ``(τ, graph text)`` pairs."""
    return Stream(iri, tuple(event(iri, t, text) for t, text in items))


def gpm(name: str, stream: str, text: str) -> Gpm:
    """A GPM expression ``(u, P)`` (Def. 4) with ``:name`` terms in ``P``."""
    return Gpm(name, stream, pattern(text))


Row = tuple[int, dict[str, str]]


def rows(matches: Iterable[SpaseqMatch], names: Iterable[str] | None = None) -> list[Row]:
    """The paper's tables: ``(τ, mapping)`` for each mapping of each match, short terms,
    projected on ``names`` when given."""
    out = []
    for match in matches:
        for mu in match.mappings:
            kept = mu if names is None else mu.project(names)
            out.append((match.t2, {k: short(v) for k, v in kept.items()}))
    return sorted(out, key=lambda row: (row[0], sorted(row[1].items())))


def used(matches: Iterable[SpaseqMatch]) -> list[list[tuple[str, int]]]:
    """The events each match used, as ``(stream's last IRI segment, τ)``."""
    return sorted([(e.stream.rsplit("/", 1)[-1], e.t_start) for e in m.events] for m in matches)


# The paper's named streams ---------------------------------------------------------------

P1 = gpm("P1", U1, "{ ?h :pow ?p . ?h :loc ?l }")
"""``(u1, P1) := (u1, {(?h, pow, ?p), (?h, loc, ?l)})`` of Examples 3-11."""
P2 = gpm("P2", U2, "{ ?w :value ?v . ?w :loc ?l }")
"""``(u2, P2) := (u2, {(?w, value, ?v), (?w, loc, ?l)})`` of Examples 4-11."""


def power(*items: tuple[int, str, str, str]) -> Stream:
    """The power-related stream ``(u1, S1)``: ``(τ, house, power, location)``."""
    return stream(U1, *((t, f":{h} :pow :{p} . :{h} :loc :{loc} .") for t, h, p, loc in items))


def weather(*items: tuple[int, str, str, str]) -> Stream:
    """The weather-related stream ``(u2, S2)``: ``(τ, weather, value, location)``."""
    return stream(U2, *((t, f":{w} :value :{v} . :{w} :loc :{loc} .") for t, w, v, loc in items))


def row(t: int, **values: str) -> Row:
    return (t, {k: ":" + v for k, v in values.items()})


# Example 4's streams (Examples 4 and 5)
S1_EX4 = power((10, "H1", "Pw1", "L1"), (25, "H2", "Pw2", "L2"))
S2_EX4 = weather((10, "W1", "Vl1", "L1"), (20, "W2", "Vl2", "L1"))
# Example 6's streams (Examples 6, 7 and 8)
S1_EX6 = power((10, "H1", "Pw1", "L1"), (15, "H2", "Pw2", "L1"))
S2_EX6 = weather((15, "W1", "Vl1", "L2"), (20, "W1", "Vl1", "L1"), (25, "W2", "Vl2", "L1"))
# Example 9's streams (Examples 9 and 10)
S1_EX9 = power((10, "H1", "Pw1", "L1"), (25, "H2", "Pw2", "L2"))
S2_EX9 = weather((15, "W1", "Vl1", "L1"), (20, "W2", "Vl2", "L1"))


def test_example_3_gpm_within_bounds() -> None:
    """Def. 7: ``⟦(u1, P1)⟧^[5,15]`` gives the events at 10 and 15; 25 is outside."""
    s1 = power((10, "H1", "Pw1", "L1"), (15, "H2", "Pw2", "L2"), (25, "H3", "Pw3", "L3"))
    assert rows(evaluate_bounds(P1, [s1], (5, 15))) == [
        row(10, h="H1", p="Pw1", l="L1"),
        row(15, h="H2", p="Pw2", l="L2"),
    ]


def test_example_4_conjunction() -> None:
    """Def. 8: ``⟦(u1, P1) & (u2, P2)⟧^[10,25]``: only τ = 10 has events of both, compatible
    on ``?l``."""
    found = evaluate_bounds(Conjunction((P1, P2)), [S1_EX4, S2_EX4], (10, 25))
    assert rows(found) == [row(10, h="H1", p="Pw1", l="L1", w="W1", v="Vl1")]
    assert used(found) == [[("u1", 10), ("u2", 10)]]


def test_example_5_disjunction() -> None:
    """Def. 9: the union of both GPMs' pairs; two at τ = 10. The paper's table also has a
    row (15, :L1, :W1, :Vl1) that no event of Example 4's streams gives (docs/semantics.md)."""
    found = evaluate_bounds(Disjunction((P1, P2)), [S1_EX4, S2_EX4], (10, 25))
    assert rows(found) == [
        row(10, h="H1", p="Pw1", l="L1"),
        row(10, w="W1", v="Vl1", l="L1"),
        row(20, w="W2", v="Vl2", l="L1"),
        row(25, h="H2", p="Pw2", l="L2"),
    ]


def test_example_6_skip_till_any() -> None:
    """Def. 10: each power event with each later compatible weather event. The paper's
    fourth row reads (25, :H2, :W1, :Vl1); the event at 25 is :W2 with :Vl2."""
    found = evaluate_bounds(Seq.of(P1, ANY, P2), [S1_EX6, S2_EX6], (10, 25))
    assert rows(found) == [
        row(20, h="H1", p="Pw1", l="L1", w="W1", v="Vl1"),
        row(20, h="H2", p="Pw2", l="L1", w="W1", v="Vl1"),
        row(25, h="H1", p="Pw1", l="L1", w="W2", v="Vl2"),
        row(25, h="H2", p="Pw2", l="L1", w="W2", v="Vl2"),
    ]


def test_example_7_skip_till_next() -> None:
    """Def. 11: both power events take the first compatible weather event after them,
    (20, :W1); the one at 15 is in :L2, so it neither matches nor blocks."""
    found = evaluate_bounds(Seq.of(P1, NEXT, P2), [S1_EX6, S2_EX6], (10, 25))
    assert rows(found) == [
        row(20, h="H1", p="Pw1", l="L1", w="W1", v="Vl1"),
        row(20, h="H2", p="Pw2", l="L1", w="W1", v="Vl1"),
    ]
    assert used(found) == [[("u1", 10), ("u2", 20)], [("u1", 15), ("u2", 20)]]


def test_example_8_strict_contiguity() -> None:
    """Def. 12: after :H1 at 10 the next events of the streamset are at 15 (:H2 and the
    weather event in :L2), so :H1 has no match; :H2 at 15 is followed by (20, :W1)."""
    found = evaluate_bounds(Seq.of(P1, STRICT, P2), [S1_EX6, S2_EX6], (10, 25))
    assert rows(found) == [row(20, h="H2", p="Pw2", l="L1", w="W1", v="Vl1")]


@pytest.mark.parametrize("iterations", [None, STRICT, NEXT, ANY])
def test_example_9_kleene_plus(iterations: Strategy | None) -> None:
    """Def. 13-14: ``⟦(u1, P1) ; (u2, P2)+⟧^[10,20]``. The first iteration takes (15, :W1);
    a second would join :W1 with :W2 on ``?w`` and ``?v``, which conflict, whatever the
    iteration strategy. The paper's second row (20, :H1, :W2, :Vl2) cannot be derived
    (docs/semantics.md, item 7); it is what skip-till-any gives for the first iteration."""
    sequence = Seq.of(P1, NEXT, KleenePlus(P2, iterations))
    found = evaluate_bounds(sequence, [S1_EX9, S2_EX9], (10, 20))
    assert rows(found) == [row(15, h="H1", p="Pw1", l="L1", w="W1", v="Vl1")]
    relaxed = evaluate_bounds(Seq.of(P1, ANY, KleenePlus(P2)), [S1_EX9, S2_EX9], (10, 20))
    assert rows(relaxed) == [
        row(15, h="H1", p="Pw1", l="L1", w="W1", v="Vl1"),
        row(20, h="H1", p="Pw1", l="L1", w="W2", v="Vl2"),
    ]


KB = EX + "uD"
G_D = [
    q.triple
    for q in parse(
        input=expand(":H1 :owner :john ; :address :paris . :H2 :owner :smith ; :address :lyon ."),
        format=RdfFormat.TURTLE,
    )
]


def test_example_10_graph_operator() -> None:
    """Def. 15: ``⟦(u1, P1) Graph (uD, PD)⟧^[10,20]``: the event at 10 joined with the
    knowledge base's owner and address of :H1 (:H2 at 25 is outside the bounds)."""
    with_kb = replace(P1, graph_kb=KbPattern(KB, pattern("{ ?h :owner ?n . ?h :address ?a }")))
    found = evaluate_bounds(with_kb, [S1_EX9], (10, 20), {KB: G_D})
    assert rows(found) == [row(10, h="H1", p="Pw1", l="L1", n="john", a="paris")]


def test_example_10_knowledge_base_must_be_given() -> None:
    """Γ(v) must name a graph of the dataset: a missing one is an error, not an empty
    result."""
    with_kb = replace(P1, graph_kb=KbPattern(KB, pattern("{ ?h :owner ?n }")))
    with pytest.raises(UserError, match=r"knowledge base graph <http://example\.org/uD>"):
        evaluate_bounds(with_kb, [S1_EX9], (10, 20))


def example_11_plan() -> Plan:
    """``Q = ({?h, ?p, ?v}, 50, ((u1, P1) ; (u2, P2)))`` (Example 11), time in ms."""
    return Plan(
        form=Select(("h", "p", "v")),
        dataset=Dataset(streams=(U1, U2)),
        r2r=Within(Seq.of(P1, NEXT, P2), 50),
    )


def test_example_11_query_at_20() -> None:
    """Def. 16: at τ = 20 the answer is (15, :H1, :Pw1, :Vl1); (25, :H2) with (40, :W2) in
    :L2 joins the answer at 40. The windows start at ``window.t0`` = 0 ([0, 50]); read with
    ``t = 20`` as Def. 16's origin (windows [20 + 50k, 20 + 50(k+1)], k ∈ ℕ), the first row
    would lie before every window, so the example's "at τ = 20" is the evaluation instant,
    not the origin (docs/semantics.md)."""
    s1 = power((10, "H1", "Pw1", "L1"), (25, "H2", "Pw2", "L2"))
    s2 = weather((15, "W1", "Vl1", "L1"), (40, "W2", "Vl2", "L2"))
    plan = example_11_plan()
    evaluation = SpaseqEvaluation(plan, StreamingDataset.of(plan, StreamSet([s1, s2]), {}), MATCHER)

    def answer(t: int) -> list[tuple[int, int, dict[str, str]]]:
        return [
            (m.t1, m.t2, {k: short(v) for k, v in m.mu.project(("h", "p", "v")).items()})
            for m in evaluation.at(t, None)
        ]

    assert answer(20) == [(10, 15, {"h": ":H1", "p": ":Pw1", "v": ":Vl1"})]
    assert answer(39) == answer(20)
    assert answer(40) == [
        (10, 15, {"h": ":H1", "p": ":Pw1", "v": ":Vl1"}),
        (25, 40, {"h": ":H2", "p": ":Pw2", "v": ":Vl2"}),
    ]
    assert evaluation.instants() == [10, 15, 25, 40]
    from_20 = find_matches(plan.r2r, [s1, s2], origin=20)  # type: ignore[arg-type]
    assert rows(from_20, ("h", "p", "v")) == [row(40, h="H2", p="Pw2", v="Vl2")]


def test_figure_1_event_selection_strategies() -> None:
    """Fig. 1: SEQ(A, B, C) over a1 b1 c1 a2 a3 b2 c2 at 1…7. The definitions give what the
    figure's table gives for skip-till-next; strict contiguity (Def. 12) also matches
    {a3, b2, c2}, contiguous at 5, 6, 7, and skip-till-any (Def. 10) also {a1, b1, c2}: the
    figure lists neither (docs/semantics.md)."""
    names = ["a1", "b1", "c1", "a2", "a3", "b2", "c2"]
    s = stream(U1, *((t, f":{n} :type :{n[0].upper()} .") for t, n in enumerate(names, 1)))
    a, b, c = (gpm(x, U1, f"{{ ?{x.lower()} :type :{x} }}") for x in "ABC")

    def found(strategy: Strategy) -> list[list[str]]:
        matches = evaluate_bounds(Seq.of(a, strategy, b, strategy, c), [s], (1, 7))
        return sorted([names[e.t_start - 1] for e in m.events] for m in matches)

    assert found(STRICT) == [["a1", "b1", "c1"], ["a3", "b2", "c2"]]
    assert found(NEXT) == [["a1", "b1", "c1"], ["a2", "b2", "c2"], ["a3", "b2", "c2"]]
    assert found(ANY) == [
        ["a1", "b1", "c1"],
        ["a1", "b1", "c2"],
        ["a1", "b2", "c2"],
        ["a2", "b2", "c2"],
        ["a3", "b2", "c2"],
    ]


# Choices the paper leaves open -------------------------------------------------------------

PRICES = EX + "prices"


def prices(*values: int) -> Stream:
    """One stock's prices at 1, 2, 3, …: ``:s :price n``."""
    return stream(PRICES, *((t, f":s :price {v} .") for t, v in enumerate(values, 1)))


A = gpm("A", PRICES, "{ ?s :price ?p1 }")
B_BELOW = gpm("B", PRICES, "{ ?s :price ?p2 FILTER (?p2 < ?p1) }")
C_ABOVE = gpm("C", PRICES, "{ ?s :price ?p3 FILTER (?p3 > ?p1) }")


def test_filter_naming_an_earlier_gpm_sees_the_run() -> None:
    """Def. 7 alone evaluates ``FILTER (?p2 < ?p1)`` with ``?p1`` unbound (an error, hence
    false): B matches nothing. After A it is evaluated under the run's bindings,
    ``⟦μ(P)⟧_G`` (the NFA's ``Gpm(G_e, P_θ, H)``)."""
    s = prices(5, 7, 3)
    assert evaluate_bounds(B_BELOW, [s], (1, 3)) == []
    found = evaluate_bounds(Seq.of(A, NEXT, B_BELOW), [s], (1, 3))
    assert rows(found, ("p1", "p2")) == [(3, {"p1": "5", "p2": "3"}), (3, {"p1": "7", "p2": "3"})]


def test_a_run_binding_is_compared_by_value_in_a_filter() -> None:
    """Def. 7 under the run's mapping, ``⟦μ(P)⟧_G``: the earlier step's term replaces its
    variable. With ``?p = "14.0"^^xsd:double`` from A, C's ``FILTER (?q = ?p)`` reads
    ``FILTER (?q = "14.0"^^xsd:double)``, true for ``?q = "14"^^xsd:integer`` (SPARQL 1.1
    sec. 17.3, ``op:numeric-equal``; pyoxigraph's substitutions compared the two terms and
    kept nothing). B's triple pattern ``?t :price ?p`` matches by term: the integer never
    joins the double, the double written ``"1.4E1"`` (one value and type) does."""
    double = "<http://www.w3.org/2001/XMLSchema#double>"
    s = stream(
        PRICES,
        (1, f':a :price "14.0"^^{double} .'),
        (2, ':b :price "14"^^<http://www.w3.org/2001/XMLSchema#integer> .'),
        (3, f':c :price "1.4E1"^^{double} .'),
    )
    a = gpm("A", PRICES, "{ ?s :price ?p }")
    b = gpm("B", PRICES, "{ ?t :price ?p }")
    c = gpm("C", PRICES, "{ ?t :price ?q FILTER (?q = ?p) }")
    compared = evaluate_bounds(Seq.of(a, NEXT, c), [s], (1, 3))
    assert rows(compared, ("s", "t", "q")) == [
        (2, {"s": ":a", "t": ":b", "q": "14"}),
        (3, {"s": ":b", "t": ":c", "q": "1.4E1"}),
    ]
    joined = evaluate_bounds(Seq.of(a, ANY, b), [s], (1, 3))
    assert rows(joined, ("s", "t")) == [(3, {"s": ":a", "t": ":c"})]
    below = gpm("D", PRICES, "{ ?t :price ?q FILTER (?q IN (?p) && !(?q != ?p)) }")
    assert len(evaluate_bounds(Seq.of(a, ANY, below), [s], (1, 3))) == 3


def test_matches_are_sets_of_mappings() -> None:
    """An event with two solutions is one pair ``(τ, Ω)`` (Def. 7); skip-till-next stops
    the whole set at the first event compatible with one of its mappings (Def. 11): :y's
    mapping is not continued at 3, although only :x matched at 2."""
    s = stream(U1, (1, ":x :a 1 . :y :a 1 ."), (2, ":x :b 2 ."), (3, ":y :b 3 . :x :b 3 ."))
    a = gpm("A", U1, "{ ?k :a ?n }")
    b = gpm("B", U1, "{ ?k :b ?m }")
    [first, *rest] = evaluate_bounds(Seq.of(a, NEXT, b), [s], (1, 3))
    assert rest == []
    assert rows([first], ("k", "m")) == [(2, {"k": ":x", "m": "2"})]
    assert len(evaluate_bounds(Seq.of(a, ANY, b), [s], (1, 3))) == 2


def test_kleene_iterations() -> None:
    """Kleene+ iterations join their mappings (Def. 13-14), so iterations that rebind a
    variable to another term never chain. After a step they follow that step's strategy
    (Fig. 10); first, strict contiguity (Fig. 5); ``KleenePlus.strategy`` chooses another
    (Def. 13's ``;``, Def. 14's ``,``)."""
    s = prices(5, 9, 4, 6, 3)
    low = gpm("L", PRICES, "{ ?s :price ?q FILTER (?q < 7) }")

    def chains(node: EventPattern) -> list[list[int]]:
        return sorted([e.t_start for e in m.events] for m in evaluate_bounds(node, [s], (1, 5)))

    # (?q is rebound per event, so two iterations never join: only 1-event matches)
    assert chains(Seq.of(KleenePlus(low))) == [[1], [3], [4], [5]]
    steps = Seq.of(A, NEXT, KleenePlus(B_BELOW))
    # A at 1 (5): B's first iteration is 3 (4 < 5); a second needs ?p2 = 4 again: none.
    # A at 2 (9): 3 (4). A at 3 (4): 5 (3). A at 4 (6): 5 (3).
    assert chains(steps) == [[1, 3], [2, 3], [3, 5], [4, 5]]
    same = stream(PRICES, (1, ":s :price 5 ."), (2, ":s :price 1 ."), (3, ":t :price 1 ."))
    b_any = gpm("B", PRICES, "{ ?t :price ?p2 FILTER (?p2 < ?p1) }")
    # ?t differs between 2 and 3: joined iterations conflict.
    found = evaluate_bounds(Seq.of(A, STRICT, KleenePlus(b_any)), [same], (1, 3))
    assert [[e.t_start for e in m.events] for m in found] == [[1, 2]]
    repeat = stream(
        PRICES, (1, ":s :price 5 ."), (2, ":s :price 1 ."), (3, ":u :v 0 ."), (4, ":s :price 1 .")
    )
    kleene = gpm("K", PRICES, "{ ?s :price 1 }")
    five = gpm("F", PRICES, "{ ?s :price 5 }")

    def with_strategy(first: Strategy, iterations: Strategy | None) -> list[list[int]]:
        node = Seq.of(five, first, KleenePlus(kleene, iterations))
        matches = evaluate_bounds(node, [repeat], (1, 4))
        return sorted([e.t_start for e in m.events] for m in matches)

    # Fig. 10: iterations follow ';', so 2 and 4 chain over the event at 3; strict does not.
    assert with_strategy(NEXT, None) == [[1, 2], [1, 2, 4]]
    assert with_strategy(NEXT, STRICT) == [[1, 2]]
    assert with_strategy(STRICT, None) == [[1, 2]]
    assert with_strategy(STRICT, NEXT) == [[1, 2], [1, 2, 4]]
    # first: strict (Fig. 5, the plan's rule) unless told; Def. 13 says ';'
    alone = evaluate_bounds(Seq.of(KleenePlus(kleene)), [repeat], (1, 4))
    assert sorted([e.t_start for e in m.events] for m in alone) == [[2], [4]]
    def_13 = evaluate_bounds(Seq.of(KleenePlus(kleene, NEXT)), [repeat], (1, 4))
    assert sorted([e.t_start for e in m.events] for m in def_13) == [[2], [2, 4], [4]]


def test_conjunction_needs_one_timestamp() -> None:
    """Def. 8 pairs events of one timestamp; on one stream (one graph per timestamp,
    Def. 2) both operands must match the same event."""
    s1 = stream(U1, (1, ":s :price 5 ."), (2, ":s :price 6 ."))
    s2 = stream(U2, (1, ":s :volume 9 ."), (3, ":s :volume 8 ."))
    vol = gpm("V", U2, "{ ?s :volume ?v }")
    price = gpm("P", U1, "{ ?s :price ?p }")
    found = evaluate_bounds(Conjunction((price, vol)), [s1, s2], (1, 3))
    assert rows(found, ("p", "v")) == [(1, {"p": "5", "v": "9"})]
    small = gpm("S", U1, "{ ?s :price ?p FILTER (?p < 6) }")
    same = evaluate_bounds(Conjunction((price, small)), [s1], (1, 3))
    assert used(same) == [[("u1", 1)]]


NOT_B = Negation(gpm("N", PRICES, "{ ?s :price ?n FILTER (?n < ?p1) }"))


def test_negation_between_steps() -> None:
    """SEQ_WO: ``A ; !N ; C`` keeps A and the next C with no N-event strictly between,
    N evaluated under the match's mapping (here: a price below A's)."""
    s = prices(5, 4, 8, 6, 9)
    found = evaluate_bounds(Seq.of(A, NEXT, NOT_B, NEXT, C_ABOVE), [s], (1, 5))
    # A at 1 (5): the next C is 3 (8), but 4 at 2 is below 5: dropped.
    # A at 2 (4): C at 3, nothing between. A at 3 (8): C at 5 (9); 6 at 4 is below 8.
    # A at 4 (6): C at 5 (9), nothing between.
    assert used(found) == [[("prices", 2), ("prices", 3)], [("prices", 4), ("prices", 5)]]


def test_negation_takes_the_more_permissive_strategy() -> None:
    """Around a negation the two neighbours are related by the more permissive strategy
    (the NFA's rule); with strict contiguity on both sides nothing lies between them, so
    the negation holds trivially (docs/semantics.md)."""
    s = prices(5, 4, 8)
    strict = evaluate_bounds(Seq.of(A, STRICT, NOT_B, STRICT, C_ABOVE), [s], (1, 3))
    assert used(strict) == [[("prices", 2), ("prices", 3)]]
    mixed = evaluate_bounds(Seq.of(A, STRICT, NOT_B, NEXT, C_ABOVE), [s], (1, 3))
    assert used(mixed) == [[("prices", 2), ("prices", 3)]]


def test_negation_uses_the_later_steps_bindings() -> None:
    """CQELS-CEP's ``μ2 ~ μ1 ∪ μ3``: the negated GPM may share variables with the step
    after it. ``A ; !N(?k) ; C(?k)``: only events on C's key count."""
    s = stream(U1, (1, ":go :a 1 ."), (2, ":x :n 1 ."), (3, ":y :c 1 ."), (4, ":x :c 1 ."))
    a = gpm("A", U1, "{ ?g :a ?one }")
    n = Negation(gpm("N", U1, "{ ?k :n ?z }"))
    c = gpm("C", U1, "{ ?k :c ?w }")
    found = evaluate_bounds(Seq.of(a, ANY, n, ANY, c), [s], (1, 4))
    assert rows(found, ("k",)) == [(3, {"k": ":y"})]


def test_negation_first_and_last() -> None:
    """NO_HEAD: no N-event from the window's start to the first step; NO_TAIL: none after
    the last step until the window's end, so such a match is known only then."""
    s = prices(5, 2, 8, 7, 1)
    a_high = gpm("A", PRICES, "{ ?s :price ?p1 FILTER (?p1 > 6) }")
    low = Negation(gpm("N", PRICES, "{ ?s :price ?n FILTER (?n < 3) }"))
    head = find_matches(Within(Seq.of(low, NEXT, a_high), 10), [s], origin=0)
    # window [0, 10]: the price 2 at 2 precedes both 8 and 7.
    assert head == []
    head_late = find_matches(Within(Seq.of(low, NEXT, a_high), 3), [s], origin=0)
    # windows [0, 3], [3, 6]: 8 at 3 is in both; in [3, 6] nothing low precedes it.
    assert used(head_late) == [[("prices", 3)], [("prices", 4)]]
    below = Negation(gpm("N", PRICES, "{ ?s :price ?n FILTER (?n < ?p1) }"))
    tail = find_matches(Within(Seq.of(a_high, NEXT, below), 10), [s], origin=0)
    # 8 at 3 is followed by 7 and 1; 7 at 4 by 1: no match.
    assert tail == []
    tail_short = find_matches(Within(Seq.of(a_high, NEXT, below), 4), [s], origin=0)
    # windows [0, 4], [4, 8]: in [0, 4], 8 at 3 is followed by 7 at 4, and 7 at 4 by
    # nothing up to the window's end; in [4, 8] the 1 at 5 follows 7. Windows are separate
    # (Def. 16's union), so 7 at 4 matches, known at the end of [0, 4].
    assert [(m.t1, m.t2, m.known) for m in tail_short] == [(4, 4, 4)]
    tail_known = find_matches(Within(Seq.of(a_high, NEXT, below), 5), [s], origin=0)
    # windows [0, 5], [5, 10]: 7 at 4 is followed by 1 at 5; alone in [5, 10], 1 is no A.
    assert tail_known == []
    no_drop = prices(5, 2, 8, 7)
    tail_known = find_matches(Within(Seq.of(a_high, NEXT, below), 5), [no_drop], origin=0)
    assert [(m.t1, m.t2, m.known) for m in tail_known] == [(4, 4, 5)]


def test_optional_is_present_or_negated() -> None:
    """``N? = ⟦N⟧ ∪ ⟦!N⟧`` (App. B.0.2): ``A ; B? ; C`` takes a B when one lies between A
    and the next C, and matches A and C directly only when none does."""
    s = prices(5, 3, 8, 6, 9)
    b = Optional(B_BELOW)
    found = evaluate_bounds(Seq.of(A, NEXT, b, NEXT, C_ABOVE), [s], (1, 5))
    assert used(found) == [
        [("prices", 1), ("prices", 2), ("prices", 3)],
        [("prices", 2), ("prices", 3)],
        [("prices", 3), ("prices", 4), ("prices", 5)],
        [("prices", 4), ("prices", 5)],
    ]


def test_partition_by_keys_contiguity() -> None:
    """PARTITION BY ?s (not in the paper): matches are sought per value, on the events of
    that value (and those with none), so another stock's event does not break strict
    contiguity."""
    s = stream(
        PRICES, (1, ":s :price 5 ."), (2, ":t :price 1 ."), (3, ":s :price 4 ."), (4, ":u :v 0 .")
    )
    sequence = Within(Seq.of(A, STRICT, B_BELOW), 10)
    assert find_matches(sequence, [s]) == []
    found = find_matches(PartitionBy(sequence, ("s",)), [s])
    assert used(found) == [[("prices", 1), ("prices", 3)]]


def test_windows_are_tumbling_and_closed() -> None:
    """Def. 16: windows [t0 + kω, t0 + (k+1)ω] share their ends; a match must fit in one.
    Events before t0 are in no window."""
    s = prices(1, 2, 3, 4, 5)
    seq = Seq.of(A, STRICT, C_ABOVE)
    assert used(find_matches(Within(seq, 2), [s], origin=1)) == [
        [("prices", 1), ("prices", 2)],
        [("prices", 2), ("prices", 3)],
        [("prices", 3), ("prices", 4)],
        [("prices", 4), ("prices", 5)],
    ]
    # [0, 2], [2, 4], [4, 6]: (2, 3) and (4, 5) fit; (1, 2) and (3, 4) too; nothing spans.
    assert len(find_matches(Within(seq, 2), [s], origin=0)) == 4
    assert used(find_matches(Within(seq, 1), [s], origin=3)) == [
        [("prices", 3), ("prices", 4)],
        [("prices", 4), ("prices", 5)],
    ]
    three = Seq.of(A, STRICT, C_ABOVE, STRICT, gpm("D", PRICES, "{ ?s :price ?p4 }"))
    assert find_matches(Within(three, 1), [s]) == []


def test_evaluation_answer_grows_and_instants() -> None:
    """``at(t)``: the matches known at ``t``; a NO_TAIL match appears at its window's end,
    which is an instant of :meth:`SpaseqEvaluation.instants`."""
    s = prices(5, 8, 9)
    below = Negation(gpm("N", PRICES, "{ ?s :price ?n FILTER (?n < ?p1) }"))
    plan = Plan(
        form=Select(("p1",)),
        dataset=Dataset(streams=(PRICES,)),
        r2r=Within(Seq.of(A, NEXT, below), 10),
    )
    evaluation = SpaseqEvaluation(plan, StreamingDataset.of(plan, StreamSet([s]), {}), MATCHER)
    assert evaluation.at(9, None) == []
    assert [(m.t1, short(m.mu["p1"])) for m in evaluation.at(10, 9)] == [
        (1, "5"),
        (2, "8"),
        (3, "9"),
    ]
    assert evaluation.instants() == [1, 2, 3, 10]


def test_errors() -> None:
    """Steps outside Def. 4 and App. B, interval events, all-negated sequences and a
    negated last step without WITHIN are refused with a reason."""
    s = prices(1, 2)
    with pytest.raises(UserError, match="not a step of a SPAseq sequence"):
        evaluate_bounds(Seq.of(Seq.of(A, NEXT, C_ABOVE), NEXT, A), [s], (1, 2))
    with pytest.raises(UserError, match="Kleene"):
        evaluate_bounds(Seq.of(KleenePlus(KleenePlus(A))), [s], (1, 2))
    with pytest.raises(UserError, match="no step that is not negated"):
        evaluate_bounds(Seq.of(Negation(A)), [s], (1, 2))
    with pytest.raises(UserError, match="needs WITHIN"):
        find_matches(Seq.of(A, NEXT, Negation(C_ABOVE)), [s])
    interval = Stream(PRICES, (Event(PRICES, 1, 2, frozenset()),))
    with pytest.raises(UserError, match="one timestamp"):
        evaluate_bounds(A, [interval], (0, 3))


# SPAseq's own test folders ----------------------------------------------------------------

DOUBLE = "http://www.w3.org/2001/XMLSchema#double"
MAIN = "http://example.org/main"


def folder_plan(path: Path) -> Plan:
    """The query file compiled as rsep compiles it (query text -> AST -> plan)."""
    text = path.read_text(encoding="utf-8")
    dialect = detect_dialect(text)
    return compile_query(parse_query(text, dialect), dialect)


def folder_streams(description: Path, **options: int) -> StreamSet:
    """The streams of a stream description (missing data files skipped)."""
    events = read_events(description, bad=BadRecords(OnError.SKIP), **options)
    return StreamSet.from_events(events)


def answer(
    plan: Plan, streams: StreamSet, graphs: dict[str, object] | None = None
) -> list[tuple[int, int, dict[str, str]]]:
    """The evaluator's answer after the last instant, projected on the SELECT variables:
    ``(t1, t2, {var: value})`` with doubles written as their lexical form."""
    dataset = StreamingDataset.of(plan, streams, graphs or {})  # type: ignore[arg-type]
    evaluation = SpaseqEvaluation(plan, dataset, MATCHER)
    last = max(evaluation.instants(), default=0)
    assert isinstance(plan.form, Select)
    out = []
    for m in evaluation.at(last, None):
        values = {k: _value(v) for k, v in m.mu.project(plan.form.variables).items()}
        out.append((m.t1, m.t2, values))
    return out


SHORT = (
    ("http://example/company#", "c:"),
    ("http://example/card#", "card:"),
    ("http://www.smart.com/", "s:"),
)


def _value(term: Term) -> str:
    """A literal's lexical form; an IRI with the folders' namespaces shortened."""
    if isinstance(term, NamedNode):
        text = term.value
        for long, prefix in SHORT:
            text = text.replace(long, prefix)
        return text
    return short(term)


def folder_matches(
    plan: Plan, streams: StreamSet, graphs: dict[str, object] | None = None
) -> list[list[int]]:
    """The times of the events each match used."""
    found = find_matches(plan.r2r, streams, graphs)  # type: ignore[arg-type]
    return sorted([e.t_start for e in m.events] for m in found)


def spaseq_folder(shared_data: Path, name: str) -> Path:
    return shared_data / "spaseq" / "tests" / name


def test_folder_strict_contiguity(shared_data: Path) -> None:
    """SEQ (A, B, C) on prices 14, 12, 14 at 0, 1000, 2000; B: ``?p2 < ?p1``, C: any.
    A at 0, B at 1000 (12 < 14), C at 2000: one match. A at 1000: 14 < 12 fails."""
    folder = spaseq_folder(shared_data, "strict-contiguity")
    plan = folder_plan(folder / "queryIF.q")
    streams = folder_streams(folder / "streamIF.txt")
    assert folder_matches(plan, streams) == [[0, 1000, 2000]]
    assert answer(plan, streams) == [
        (
            0,
            2000,
            {
                "company": "c:eBay",
                "vol1": "65.61",
                "p3": "14.0",
                "p1": "14.0",
                "p2": "12.0",
                "vol3": "69.61",
                "vol2": "68.61",
            },
        )
    ]


def test_folder_skip_till_next(shared_data: Path) -> None:
    """SEQ (A; B; C) on 14, 16, 12, 14; B: ``?p2 < ?p1``, C: ``?p3 = ?p1``. A at 0: the
    first B is 12 at 2000 (16 is no B), then C = 14 at 3000. A at 1000 (16): B at 2000,
    then no 16. A at 2000 (12): no lower price follows. One match."""
    folder = spaseq_folder(shared_data, "skip-till-next")
    plan = folder_plan(folder / "queryFB.q")
    streams = folder_streams(folder / "streamFB.txt")
    assert folder_matches(plan, streams) == [[0, 2000, 3000]]
    assert answer(plan, streams) == [(0, 3000, {"company": "c:eBay", "vol1": "65.61"})]


def test_folder_kleene_plus(shared_data: Path) -> None:
    """SEQ (A; B+; C) on 14, 88, 11, 10, 16; B: ``?p2 < ?p1``, C: 16. B's iterations join,
    so a second iteration needs the same ``?company2 ?p2 ?vol2``: none (11 then 10 differ).
    A at 0 (14): B = 11 at 2000 (88 is no B; 10 at 3000 comes after the first B), C at
    4000. A at 1000 (88): B at 2000, C at 4000. A at 2000 (11): B = 10 at 3000, C at 4000.
    A at 3000 (10): 16 is no B."""
    folder = spaseq_folder(shared_data, "kleeneplus")
    plan = folder_plan(folder / "queryKleene.q")
    streams = folder_streams(folder / "streamKleene.txt")
    assert folder_matches(plan, streams) == [
        [0, 2000, 4000],
        [1000, 2000, 4000],
        [2000, 3000, 4000],
    ]
    assert answer(plan, streams) == [
        (0, 4000, {"company": "c:eBay", "p1": "14.0", "p2": "11.0", "p3": "16.0"}),
        (1000, 4000, {"company": "c:eBay", "p1": "88.0", "p2": "11.0", "p3": "16.0"}),
        (2000, 4000, {"company": "c:eBay", "p1": "11.0", "p2": "10.0", "p3": "16.0"}),
    ]


def test_folder_disjunction(shared_data: Path) -> None:
    """SEQ (A, (B | C), D) on 14, 12, 18; B: ``?p2 < ?p1``, C: 16, D: ``?p4 > ?p1``. A at 0,
    B at 1000, D at 2000 (18 > 14). A at 1000 (12): 18 is neither B nor C. The engine's
    recorded answer (result/queryResults.txt) is the same match, printed as ?company
    c:eBay, ?p1 14.0, ?p4 18.0 (it omits ?p2) with wall-clock times."""
    folder = spaseq_folder(shared_data, "disjunction")
    plan = folder_plan(folder / "queryDisjunction.q")
    streams = folder_streams(folder / "streamDisjunction.txt")
    assert folder_matches(plan, streams) == [[0, 1000, 2000]]
    assert answer(plan, streams) == [
        (0, 2000, {"company": "c:eBay", "p1": "14.0", "p2": "12.0", "p4": "18.0"})
    ]
    recorded = (folder.parent / "result" / "queryResults.txt").read_text()
    assert "?company http://example/company#eBay" in recorded
    assert "?p1 14.0" in recorded and "?p4 18.0" in recorded


def test_folder_conjunction(shared_data: Path) -> None:
    """SEQ (A, (B & C), D): the data's second and third events both say ``occursat 15``,
    but a stream holds one graph per timestamp (Def. 2): the reader puts them at 1000 and
    2000, and B (``?p2 < ?p1``) and C (``?p3 > ?p1``) cannot both match one event: no match.

    Repaired copy (the data's intent): times from ``occursat`` (10, 15, 15, 20 s) with the
    third event on a second stream, and C ``ON S2``. A at 10 s (14), B = 12 and C = 18 at
    15 s, D = 16 at 20 s, each strictly next in the streamset."""
    folder = spaseq_folder(shared_data, "conjunction")
    plan = folder_plan(folder / "queryConjunction.q")
    streams = folder_streams(folder / "streamConjunction.txt")
    assert [e.t_start for e in streams[MAIN]] == [0, 1000, 2000, 3000]
    assert folder_matches(plan, streams) == []
    assert answer(plan, streams) == []
    main2 = MAIN + "2"
    text = (folder / "queryConjunction.q").read_text()
    text = text.replace(
        "FROM STREAM S1 <http://example.org/main>",
        f"FROM STREAM S1 <{MAIN}> FROM STREAM S2 <{main2}>",
    ).replace("DEFINE GPM C ON S1", "DEFINE GPM C ON S2")
    dialect = detect_dialect(text)
    repaired = compile_query(parse_query(text, dialect), dialect)
    e0, e1, e2, e3 = streams[MAIN].events
    retimed = StreamSet(
        [
            Stream(
                MAIN,
                tuple(
                    replace(e, t_start=t, t_end=t)
                    for e, t in ((e0, 10_000), (e1, 15_000), (e3, 20_000))
                ),
            ),
            Stream(main2, (replace(e2, stream=main2, t_start=15_000, t_end=15_000),)),
        ]
    )
    assert folder_matches(repaired, retimed) == [[10_000, 15_000, 15_000, 20_000]]
    assert answer(repaired, retimed) == [
        (
            10_000,
            20_000,
            {"company": "c:Google", "p1": "14.0", "p2": "12.0", "p3": "18.0", "p4": "16.0"},
        )
    ]


def test_folder_negation(shared_data: Path) -> None:
    """SEQ (A, B!, C) on 14, 88, 16; B: ``?p2 < ?p1``, C: 16. rsep's negation (CQELS-CEP's
    SEQ_WO, docs/semantics.md): A and C strictly contiguous (the more permissive of ',' and
    ','), no B strictly between: A at 1000 (88), C at 2000. A at 0: 88 at 1000 is no C.

    Other readings give other answers: SPAseq's Algorithm 9 lets ``B!`` take one event that
    is no B (88 at 1000), so A at 0 with C at 2000 (``?p1`` 14); App. B's formula the same;
    the NFA of rsep.algebra.nfa also drops A at 1000, since C's event itself matches B
    (16 < 88)."""
    folder = spaseq_folder(shared_data, "negation")
    plan = folder_plan(folder / "queryNegation.q")
    streams = folder_streams(folder / "streamNegation.txt")
    assert folder_matches(plan, streams) == [[1000, 2000]]
    assert answer(plan, streams) == [
        (1000, 2000, {"company": "c:eBay", "p1": "88.0", "p3": "16.0"})
    ]


def test_folder_optional(shared_data: Path) -> None:
    """SEQ (A, B?, C) on 14, 10, 16 = SEQ (A, B, C) ∪ SEQ (A, B!, C). With B: A at 0,
    B = 10 at 1000 (10 < 14), C = 16 at 2000. Without: A and C strictly contiguous with no
    B between: A at 1000 (10), C at 2000; A at 0 is followed by 10, which is no C.
    SPAseq's Algorithm 7 gives the same two matches."""
    folder = spaseq_folder(shared_data, "optional")
    plan = folder_plan(folder / "queryOptional.q")
    streams = folder_streams(folder / "streamOptional.txt")
    assert folder_matches(plan, streams) == [[0, 1000, 2000], [1000, 2000]]
    assert answer(plan, streams) == [
        (0, 2000, {"company": "c:eBay", "p1": "14.0", "p2": "10.0", "p3": "16.0"}),
        (1000, 2000, {"company": "c:eBay", "p1": "10.0", "p3": "16.0"}),
    ]


def test_folder_external_knowledge_base(shared_data: Path) -> None:
    """SEQ (A, B, C) PARTITION BY ?company on 14, 12, 11 with C's GRAPH <kb>: A at 0, B at
    1000 (12 < 14), C at 2000 (11 < 12) joined with eBay's name and location. The compiled
    plan lists <kb> among its named graphs (Definition 15: Γ(v) names a graph of D)."""
    folder = spaseq_folder(shared_data, "externalknowledgebase")
    plan = folder_plan(folder / "queryKB.q")
    kb = "http://www.example.com/kb"
    assert plan.dataset.named_graphs == (kb,)
    graph = read_graph(folder / "externalKB.nt")
    streams = folder_streams(folder / "streamKB.txt")
    assert folder_matches(plan, streams, {kb: graph}) == [[0, 1000, 2000]]
    assert answer(plan, streams, {kb: graph}) == [
        (
            0,
            2000,
            {
                "company": "c:eBay",
                "p1": "14.0",
                "p2": "12.0",
                "p3": "11.0",
                "name": "ebay",
                "loc": "usa",
            },
        )
    ]


def test_folder_multistreams(shared_data: Path) -> None:
    """SEQ (A; B; C) over power, weather and generation streams WITHIN 1 SECONDS. As read
    (event k of each stream at k s), a window [k s, (k+1) s] holds two instants and the
    sequence needs three: no match.

    Read with 100 ms between events (all in [0, 1 s]): power prices 34.99, 32.23, 34.99,
    32.23; wind speeds 1, 0, 3, 2 (B needs ≥ 1); generation prices 30.23, 31.46, 30.23,
    31.46 (C: ``?p2 <= ?p1``). A at 0: B = 3 at 200 (1 at 0 is not after A), C = 31.46 at
    300. A at 100: the same B and C. A at 200: B at 300, then no C."""
    folder = spaseq_folder(shared_data, "multistreams-powergeneration")
    plan = folder_plan(folder / "queryMultiStream.q")
    assert folder_matches(plan, folder_streams(folder / "streamMulti.txt")) == []
    streams = folder_streams(folder / "streamMulti.txt", period=100)
    assert folder_matches(plan, streams) == [[0, 200, 300], [100, 200, 300]]
    assert answer(plan, streams) == [
        (
            0,
            300,
            {
                "house1": "s:power#houseC",
                "p1": "34.98861718034252",
                "p2": "31.46465722874301",
                "v": "s:environmental#value",
            },
        ),
        (
            100,
            300,
            {
                "house1": "s:power#houseC",
                "p1": "32.22947245672444",
                "p2": "31.46465722874301",
                "v": "s:environmental#value",
            },
        ),
    ]


def test_folder_credit_card(shared_data: Path) -> None:
    """SEQ (A; B): the description names ./card20k.n3, which is not shipped (card10k.n3 is),
    and B's ``FILTER (?id2 = ?id1 && …)`` names ``?id1``, bound nowhere (A binds ``?id``):
    the FILTER is an error, so no match, whatever the data (here card10k's first 15 events).

    Repaired copy (``?id1`` → ``?id``): for each card, the next event of the same card with
    a smaller amount. Cards 2 3 3 4 4 5 6 6 6 7 7 8 9 9 9 with amounts 28.45, 68.22,
    267.74, 25.23, 309.04, 101.6, 350.99, 35.66, 246.85, 276.62, 189.11, 37.65, 264.76,
    167.46, 85.97 at 0 … 14 s: 350.99 → 35.66 (6, 7 s), 276.62 → 189.11 (9, 10 s), 264.76
    → 167.46 (12, 13 s; 85.97 at 14 s comes after the first smaller one), 167.46 → 85.97."""
    folder = spaseq_folder(shared_data, "credit-card")
    with pytest.raises(InputError, match=r"card20k\.n3"):
        list(read_events(folder / "streamCardFB.txt"))
    plan = folder_plan(folder / "queryCardFB.q")
    first = _first_card_events(folder / "card10k.n3", 15)
    assert folder_matches(plan, first) == []
    text = (folder / "queryCardFB.q").read_text().replace("?id1", "?id")
    dialect = detect_dialect(text)
    repaired = compile_query(parse_query(text, dialect), dialect)
    assert folder_matches(repaired, first) == [
        [6000, 7000],
        [9000, 10000],
        [12000, 13000],
        [13000, 14000],
    ]
    assert answer(repaired, first) == [
        (6000, 7000, {"card": "card:6", "amount1": "350.99", "amount2": "35.66"}),
        (9000, 10000, {"card": "card:7", "amount1": "276.62", "amount2": "189.11"}),
        (12000, 13000, {"card": "card:9", "amount1": "264.76", "amount2": "167.46"}),
        (13000, 14000, {"card": "card:9", "amount1": "167.46", "amount2": "85.97"}),
    ]


def test_folder_traffic(shared_data: Path) -> None:
    """SEQ (A; B) WITHIN 1000 SECONDS over sensor1 and sensor2: the data files ./sensor1.n3
    and ./sensor2.n3 are not shipped, so the streams are empty and nothing matches. On
    rsep's fixture (tests/semantics/data/spaseq/traffic: values 2, 5, 3, 1 and 4, 1, 6, 7
    at 0 … 3 s; both need ≥ 3): A at 1 s (5) with the first B after it, 6 at 2 s; A at 2 s
    (3) with 7 at 3 s."""
    folder = spaseq_folder(shared_data, "traffic")
    plan = folder_plan(folder / "queryTraffic.q")
    assert folder_matches(plan, folder_streams(folder / "streamTraffic.txt")) == []
    streams = folder_streams(DATA / "spaseq" / "traffic" / "streamTraffic.txt")
    assert folder_matches(plan, streams) == [[1000, 2000], [2000, 3000]]
    assert answer(plan, streams) == [
        (1000, 2000, {"v1": "5", "v2": "6"}),
        (2000, 3000, {"v1": "3", "v2": "7"}),
    ]


def _first_card_events(path: Path, count: int) -> StreamSet:
    """The first ``count`` events of the card data (two triples each) on the stream
    ``<http://example.org/main>`` at 0, 1000, … ms."""
    triples = [q.triple for q in parse(path=str(path), format=RdfFormat.TURTLE)]
    events = [Event.point(MAIN, 1000 * k, triples[2 * k : 2 * k + 2]) for k in range(count)]
    return StreamSet([Stream(MAIN, tuple(events))])


def test_every_folder_is_covered(shared_data: Path) -> None:
    """Each folder of spaseq/tests has its test above (result/ holds the engine's output)."""
    covered = {
        "conjunction",
        "credit-card",
        "disjunction",
        "externalknowledgebase",
        "kleeneplus",
        "multistreams-powergeneration",
        "negation",
        "optional",
        "result",
        "skip-till-next",
        "strict-contiguity",
        "traffic",
    }
    folders = {p.name for p in (shared_data / "spaseq" / "tests").iterdir() if p.is_dir()}
    assert folders == covered


# Property tests ---------------------------------------------------------------------------

KINDS = ("A", "B")


@st.composite
def streamsets(draw: st.DrawFn) -> list[Stream]:
    """Two streams of one to six events at distinct times in 0…9; each event is
    ``:k<key> :kind :<A|B>``, so GPMs sharing ``?x`` join only events of one key."""
    out = []
    for iri in (U1, U2):
        times = sorted(draw(st.sets(st.integers(0, 9), min_size=1, max_size=6)))
        items = [
            (t, f":k{draw(st.integers(0, 1))} :kind :{draw(st.sampled_from(KINDS))} .")
            for t in times
        ]
        out.append(stream(iri, *items))
    return out


def kind(name: str, iri: str) -> Gpm:
    return gpm(f"{name}{iri[-1]}", iri, f"{{ ?x :kind :{name} }}")


@st.composite
def steps(draw: st.DrawFn) -> list[Gpm]:
    count = draw(st.integers(2, 3))
    return [
        kind(draw(st.sampled_from(KINDS)), draw(st.sampled_from([U1, U2]))) for _ in range(count)
    ]


def keys(matches: Sequence[SpaseqMatch]) -> set[tuple[tuple[Event, ...], frozenset[Mu]]]:
    return {(m.events, m.mappings) for m in matches}


def sequence(gpms: Sequence[Gpm], strategy: Strategy) -> Seq:
    return Seq(tuple(gpms), tuple(strategy for _ in gpms[1:]))


@settings(max_examples=40, deadline=None)
@given(streams=streamsets(), gpms=steps())
def test_strict_within_next_within_any(streams: list[Stream], gpms: list[Gpm]) -> None:
    """Def. 12 ⊆ Def. 11 ⊆ Def. 10: each strategy adds a condition to the next."""
    found = {
        s: keys(evaluate_bounds(sequence(gpms, s), streams, (0, 9), matcher=MATCHER))
        for s in Strategy
    }
    assert found[STRICT] <= found[NEXT] <= found[ANY]


@settings(max_examples=40, deadline=None)
@given(streams=streamsets(), gpms=steps())
def test_disjunction_is_union(streams: list[Stream], gpms: list[Gpm]) -> None:
    """Def. 9: ``⟦Ψ1 | Ψ2⟧ = ⟦Ψ1⟧ ∪ ⟦Ψ2⟧``."""
    left, right = gpms[0], gpms[1]
    both = evaluate_bounds(Disjunction((left, right)), streams, (0, 9), matcher=MATCHER)
    each = [evaluate_bounds(g, streams, (0, 9), matcher=MATCHER) for g in (left, right)]
    assert keys(both) == keys(each[0]) | keys(each[1])


@settings(max_examples=40, deadline=None)
@given(streams=streamsets(), gpms=steps())
def test_conjunction_at_both_operands_times(streams: list[Stream], gpms: list[Gpm]) -> None:
    """Def. 8: a conjunction's pair is at a time where both operands have one, and its
    mappings are joins of theirs."""
    left, right = gpms[0], gpms[1]
    both = evaluate_bounds(Conjunction((left, right)), streams, (0, 9), matcher=MATCHER)
    l_found, r_found = (evaluate_bounds(g, streams, (0, 9), matcher=MATCHER) for g in (left, right))
    for match in both:
        assert match.t1 == match.t2
        lefts = [m for m in l_found if m.t2 == match.t2]
        rights = [m for m in r_found if m.t2 == match.t2]
        assert lefts and rights
        joins = {
            a.join(b)
            for x in lefts
            for y in rights
            for a in x.mappings
            for b in y.mappings
            if a.compatible(b)
        }
        assert match.mappings <= joins


@settings(max_examples=40, deadline=None)
@given(
    streams=streamsets(),
    gpms=steps(),
    strategy=st.sampled_from(list(Strategy)),
    width=st.integers(1, 6),
    origin=st.integers(0, 3),
)
def test_matches_lie_within_one_window(
    streams: list[Stream], gpms: list[Gpm], strategy: Strategy, width: int, origin: int
) -> None:
    """Def. 16: every match lies in one window [t0 + kω, t0 + (k+1)ω], k ∈ ℕ, so it lasts
    at most ω; and it is a match of that window's bounded evaluation."""
    pattern = Within(sequence(gpms, strategy), width)
    for match in find_matches(pattern, streams, origin=origin, matcher=MATCHER):
        assert match.t2 - match.t1 <= width
        k = (match.t1 - origin) // width
        begin = origin + k * width
        assert k >= 0 and match.t2 <= begin + width
        bounded = evaluate_bounds(
            sequence(gpms, strategy), streams, (begin, begin + width), matcher=MATCHER
        )
        assert (match.events, match.mappings) in keys(bounded)
