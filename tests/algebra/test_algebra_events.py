"""The event algebra: construction, validation, variables, Table 1 and tree rewriting."""

from __future__ import annotations

import pytest

from rsep.algebra.events import (
    CSPARQL_SEQ,
    CSPARQL_TIME_WINDOW,
    EPSPARQL_CHRONOLOGICAL,
    EPSPARQL_RECENT,
    EPSPARQL_UNRESTRICTED,
    TABLE_1,
    CepItem,
    CepSeq,
    CepSeqKind,
    CepWindow,
    Conjunction,
    ConsumptionPolicy,
    EqJoin,
    EqualsOptional,
    Event,
    EventFilter,
    First,
    Gpm,
    GraphPatternRef,
    KbPattern,
    KleenePlus,
    Last,
    Match,
    Negation,
    Node,
    Optional,
    OptionalSeq,
    PartitionBy,
    SelectionPolicy,
    Seq,
    SeqJoin,
    Sequence,
    Strategy,
    StreamBgp,
    Within,
    transform,
)
from rsep.algebra.window import LandmarkWindow, TimeWindow


def gp(text: str, *names: str) -> GraphPatternRef:
    return GraphPatternRef(text, frozenset(names))


def test_graph_pattern_ref() -> None:
    ref = gp("?x  :p\n ?y", "x", "y")
    assert str(ref) == "?x :p ?y"
    assert ref == gp("?x  :p\n ?y", "y", "x")
    with pytest.raises(ValueError, match="without '\\?'"):
        gp("?x :p ?y", "?x")


def test_rsepql_example_4() -> None:
    """MATCH (E1 SEQ E2), E1 = EVENT w1 (?x :p ?y), E2 = EVENT w2 (?y :q ?z)."""
    e1 = Event("http://ex.org/w1", gp("?x :p ?y", "x", "y"))
    e2 = Event("http://ex.org/w2", gp("?y :q ?z", "y", "z"))
    match = Match(Seq(e1, e2))
    assert match.variables == {"x", "y", "z"}
    assert [type(n).__name__ for n in match.walk()] == [
        "Match",
        "Seq",
        "Event",
        "GraphPatternRef",
        "Event",
        "GraphPatternRef",
    ]
    assert Seq(e1, e2) != Seq(e1, e2, SelectionPolicy.RECENT)
    assert First(e1).variables == {"x", "y"}
    assert Last(e2).variables == {"y", "z"}


def test_seq_chain_nests_to_the_left() -> None:
    a, b, c = (Event("w", gp(f"?{v} :p ?o", v, "o")) for v in "abc")
    assert Seq.chain(a, b, c) == Seq(Seq(a, b), c)
    with pytest.raises(ValueError, match="two event patterns"):
        Seq.chain(a)


def test_table_1() -> None:
    """RSEP-QL Table 1: five configurations."""
    assert [c.name for c in TABLE_1] == [
        "EP-SPARQL unrestricted",
        "EP-SPARQL chronological",
        "EP-SPARQL recent",
        "C-SPARQL SEQ (timestamp)",
        "C-SPARQL time-window",
    ]
    assert {c.window for c in TABLE_1[:3]} == {LandmarkWindow}
    assert {c.window for c in TABLE_1[3:]} == {TimeWindow}
    assert (EPSPARQL_CHRONOLOGICAL.selection, EPSPARQL_CHRONOLOGICAL.consumption) == (
        SelectionPolicy.CHRONOLOGICAL,
        ConsumptionPolicy.CHRONOLOGICAL,
    )
    assert EPSPARQL_RECENT.consumption is ConsumptionPolicy.RECENT
    assert EPSPARQL_UNRESTRICTED.consumption is ConsumptionPolicy.NONE
    assert CSPARQL_SEQ.selection is SelectionPolicy.NAIVE
    e = Event("w", gp("?x :p ?y", "x", "y"))
    configured = EPSPARQL_RECENT.apply(Match(Seq(e, e)))
    assert configured == Match(Seq(e, e), SelectionPolicy.RECENT, ConsumptionPolicy.RECENT)
    assert CSPARQL_TIME_WINDOW.apply(Match(e)).selection is None
    with pytest.raises(ValueError, match="has no SEQ"):
        CSPARQL_TIME_WINDOW.apply(Match(Seq(e, e)))


def test_epsparql_operators() -> None:
    drop = StreamBgp(gp("?c :price ?p1", "c", "p1"))
    rise = StreamBgp(gp("?c :price ?p2", "c", "p2"))
    rating = StreamBgp(gp("?agency :downrates ?c", "agency", "c"))
    assert SeqJoin(drop, rise).variables == {"c", "p1", "p2"}
    assert EqJoin(drop, rise).variables == {"c", "p1", "p2"}
    # "in case some rating agency previously downrated this company": the optional is first
    optional = OptionalSeq(rating, drop)
    assert optional.left is rating and optional.variables == {"agency", "c", "p1"}
    assert EqualsOptional(drop, rise, "?p2 > ?p1").filter == "?p2 > ?p1"
    timed = EventFilter(SeqJoin(drop, rise), 'getDURATION() < "P30D"^^xsd:duration')
    assert timed.variables == {"c", "p1", "p2"}


def test_cqels_cep_sequences() -> None:
    """CQELS-CEP Example 7: SEQ(P1, P1, !P2), P1 = {?v :delayAt ?s}, P2 = {?v :arriveAt ?s}."""
    p1, p2 = gp("?v :delayAt ?s", "v", "s"), gp("?v :arriveAt ?s", "v", "s")
    seq = CepSeq.of(p1, p1, CepItem(p2, negated=True))
    assert seq.kind is CepSeqKind.NO_TAIL and seq.no_tail and seq.negated_index == 2
    assert CepSeq.of(CepItem(p2, True), p1).no_head
    assert CepSeq.of(p1, CepItem(p2, True), p1).seq_wo
    assert CepSeq.of(p1, p1).kind is CepSeqKind.SEQ
    assert CepSeq.of(p1, CepItem(gp("?w :x ?v", "w", "v"), True)).variables == {"v", "s"}
    window = CepWindow(
        "http://ex.org/W", "http://ex.org/publicTransport", TimeWindow(600_000, 1), seq
    )
    assert window.variables == {"v", "s"}
    with pytest.raises(ValueError, match="at most one negated"):
        CepSeq.of(CepItem(p1, True), CepItem(p2, True))
    with pytest.raises(ValueError, match="at least two"):
        CepSeq.of(p1)
    assert str(CepItem(p2, True)) == "!?v :arriveAt ?s"


def spaseq(name: str, stream: str, *names: str) -> Gpm:
    return Gpm(name, f"http://smartgrid.org/{stream}", gp(f"?{names[0]} :p ?o", *names))


def test_spaseq_expressions() -> None:
    a = Gpm(
        "A",
        "http://smartgrid.org/mainSource",
        gp("?house :loc ?l", "house", "l"),
        KbPattern("http://smartgrid.org/db", gp("?house :ownerName ?oname", "house", "oname")),
    )
    b, c = spaseq("B", "weather", "wther", "l"), spaseq("C", "storageSource", "storage", "l")
    query1 = Sequence.of(a, Strategy.SKIP_TILL_NEXT, KleenePlus(b), Strategy.STRICT, c)
    assert str(query1) == "SEQ(A; B+, C)"
    assert query1.strategies == (Strategy.SKIP_TILL_NEXT, Strategy.STRICT)
    assert query1.variables == {"house", "l", "oname", "wther", "storage"}
    assert Within(query1, 1_800_000).variables == query1.variables
    assert PartitionBy(query1, ("l",)).by == ("l",)
    with pytest.raises(ValueError, match="does not bind: \\?city"):
        PartitionBy(query1, ("city",))
    with pytest.raises(ValueError, match="needs 2 strategies"):
        Sequence((a, b, c), (Strategy.STRICT,))
    with pytest.raises(ValueError, match="alternates"):
        Sequence.of(a, b)
    with pytest.raises(ValueError, match="positive duration"):
        Within(query1, 0)
    assert Negation(b).variables == frozenset()
    assert Optional(b).variables == b.variables
    mixed = Sequence.of(
        Conjunction((a, b)), Strategy.SKIP_TILL_ANY, Negation(c), Strategy.STRICT, Optional(b)
    )
    assert str(mixed) == "SEQ((A & B): !C, B?)"
    assert [Strategy.parse(s) for s in (",", ";", ":", "skip_till_next")] == [
        Strategy.STRICT,
        Strategy.SKIP_TILL_NEXT,
        Strategy.SKIP_TILL_ANY,
        Strategy.SKIP_TILL_NEXT,
    ]
    with pytest.raises(ValueError, match="unknown event selection strategy"):
        Strategy.parse("greedy")


def test_transform_rebuilds_bottom_up() -> None:
    b, c = spaseq("B", "weather", "w", "l"), spaseq("C", "storage", "s", "l")
    tree = Within(Sequence.of(b, Strategy.STRICT, KleenePlus(c)), 10)

    def rename(node: Node) -> Node:
        if isinstance(node, Gpm):
            return Gpm(node.name.lower(), node.stream, node.pattern)
        return node

    renamed = transform(tree, rename)
    assert str(renamed.pattern) == "SEQ(b, c+)"  # type: ignore[attr-defined]
    assert transform(tree, lambda n: n) is tree
    assert tree.pattern.steps[0].name == "B"  # type: ignore[attr-defined]
