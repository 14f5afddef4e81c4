"""The oracle on RSEP-QL's event patterns (seed 000, Sect. 4.2-4.4): Examples 7-11 with the
paper's numbers, Fig. 1's stream under the four selection policies and the consumption
policies across evaluation instants, Table 1's five configurations, MATCH joined with a
graph pattern, event patterns over two streams, and properties of the definitions.

S = (G1, 2) … (G5, 10) of Example 1 is ``data/rsepql_s.trig`` (Fig. 1 is lost; rebuilt
as docs/semantics.md says). The event mappings of E1 SEQ E2 over it are called as in
Sect. 2's table:

- e1 = ({?x ↦ :a1, ?y ↦ :b1, ?z ↦ :c1}, 2, 6)
- e2 = ({?x ↦ :a2, ?y ↦ :b2, ?z ↦ :c2}, 4, 6)
- e3 = ({?x ↦ :a2, ?y ↦ :b2, ?z ↦ :c2}, 4, 8)
- e4 = ({?x ↦ :a1, ?y ↦ :b1, ?z ↦ :c1}, 2, 10)

Where an example disagrees with the definitions the test asserts the definition and says
so (the numbered discrepancies of docs/semantics.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple
from semantics_data import EX, S_RSEPQL, parameters, pattern, read_stream, short

from rsep.algebra.compile import compile_query
from rsep.algebra.events import (
    TABLE_1,
    Configuration,
    ConsumptionPolicy,
    Event,
    First,
    Last,
    Match,
    SelectionPolicy,
    Seq,
)
from rsep.algebra.plan import Dataset, EventJoin, Plan, Select
from rsep.algebra.window import (
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    PresentRule,
    TimeWindow,
    WindowFunction,
)
from rsep.errors import UserError
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event as Item
from rsep.rdf.event import Stream, StreamSet
from rsep.semantics import ContinuousQuery, StreamingDataset
from rsep.semantics.event_mapping import EventMapping, Mu
from rsep.semantics.rsepql import (
    Input,
    InputUnit,
    RsepqlEvaluation,
    before,
    first,
    last,
    precedes,
)
from rsep.semantics.store import GraphMatcher

S = read_stream("rsepql_s.trig", S_RSEPQL)
S_CONTINUED = read_stream("rsepql/s_continued.trig", S_RSEPQL)

W1 = NamedWindow(EX + "w1", S_RSEPQL, LandmarkWindow(1))
"""Example 3: w1 = W^λ_1 with p_1 = (1)."""
W2 = NamedWindow(EX + "w2", S_RSEPQL, TimeWindow.rsepql(5, 1), present=PresentRule.LAST_ENDED)
"""Example 3: w2 = W^τ_2 with p_2 = (5, 1) (RSEP-QL's W^τ: the last ended window)."""

E1 = Event(EX + "w1", pattern("{ ?x :p ?y }"))
"""Example 4: E1 = EVENT w1 (?x :p ?y)."""
E2 = Event(EX + "w2", pattern("{ ?y :q ?z }"))
"""Example 4: E2 = EVENT w2 (?y :q ?z)."""

Row = tuple[tuple[tuple[str, str], ...], int, int]


def row(bindings: str, t1: int, t2: int) -> Row:
    """``("x=a1 y=b1", 2, 6)`` as a comparable row."""
    pairs = (pair.split("=") for pair in bindings.split())
    return (tuple(sorted((name, ":" + value) for name, value in pairs)), t1, t2)


E_1 = row("x=a1 y=b1 z=c1", 2, 6)
E_2 = row("x=a2 y=b2 z=c2", 4, 6)
E_3 = row("x=a2 y=b2 z=c2", 4, 8)
E_4 = row("x=a1 y=b1 z=c1", 2, 10)


def rows(found: Iterable[EventMapping]) -> list[Row]:
    """Event mappings as sorted rows with short terms."""
    return sorted(
        (tuple(sorted((v, short(term)) for v, term in m.mu.items())), m.t1, m.t2) for m in found
    )


def bag(found: Iterable[Mu]) -> Counter[tuple[tuple[str, str], ...]]:
    """Solution mappings as a bag of sorted ``(variable, short term)`` tuples."""
    return Counter(tuple(sorted((v, short(term)) for v, term in mu.items())) for mu in found)


def mu(text: str) -> Mu:
    """``"x=a1 y=b1"`` as a mapping to example.org IRIs."""
    return Mu((name, NamedNode(EX + value)) for name, value in (p.split("=") for p in text.split()))


def make_plan(
    match: Match,
    windows: Sequence[NamedWindow] = (W1, W2),
    *,
    params: Mapping[str, object] | None = None,
) -> Plan:
    """A plan whose r2r is ``match`` over ``windows``."""
    return Plan(
        form=Select(),
        dataset=Dataset(
            streams=tuple(dict.fromkeys(w.stream for w in windows)),
            windows=tuple(windows),
        ),
        r2r=match,
        parameters=parameters(params),
    )


def evaluation(
    match: Match,
    windows: Sequence[NamedWindow] = (W1, W2),
    streams: Sequence[Stream] = (S,),
    *,
    params: Mapping[str, object] | None = None,
    unit: InputUnit = InputUnit.TRIPLE,
) -> RsepqlEvaluation:
    """The evaluator of ``match`` over ``streams``; ``unit`` is the parameter
    ``input_unit``."""
    plan = make_plan(match, windows, params={**(params or {}), "input_unit": unit})
    dataset = StreamingDataset.of(plan, StreamSet(streams), {})
    return RsepqlEvaluation(plan, dataset, GraphMatcher())


def run(evaluator: RsepqlEvaluation, instants: Sequence[int]) -> list[list[Row]]:
    """The Match's event mappings at each instant of ET, in order."""
    out: list[list[Row]] = []
    previous: int | None = None
    for t in instants:
        out.append(rows(evaluator.mappings(t, previous)))
        previous = t
    return out


def triples(*texts: str) -> frozenset[Triple]:
    """``":a1 :p :b1"`` … as triples."""
    out = set()
    for text in texts:
        s, p, o = (NamedNode(EX + part[1:]) for part in text.split())
        out.add(Triple(s, p, o))
    return frozenset(out)


# Examples 7-11 ------------------------------------------------------------------------------


def test_example_7_basic_event_pattern() -> None:
    """⟨⟨E2⟩⟩_{W^id}^8 (Example 7): the BGP on each item of W^id • W^τ_2(S, 8), one (μ, t_k,
    t_k) per solution: μ2 = {?y ↦ :b1, ?z ↦ :c1} at 6 and μ2′ = {?y ↦ :b2, ?z ↦ :c2} at 6
    and 8 (Example 8 quotes (μ2′, 6, 6) and (μ2′, 8, 8)).

    Example 7 lists W^τ_2(S, 8) as G1 … G4; the definition keeps 3 < t_i ≤ 8, G2 … G4
    (docs/semantics.md, 4). G1 matches nothing, so the event mappings are the same.
    """
    evaluator = evaluation(Match(Seq(E1, E2)))
    items = evaluator.active_items(W2, IdentityWindow(), 8, None)
    assert [short(item.id) for item in items if item.id is not None] == [":G2", ":G3", ":G4"]
    assert rows(evaluator.evaluate(E2, 8)) == [
        row("y=b1 z=c1", 6, 6),
        row("y=b2 z=c2", 6, 6),
        row("y=b2 z=c2", 8, 8),
    ]


def test_example_8_substituted_left_operand() -> None:
    """Example 8: for (μ2, 6, 6), ⟨⟨μ2(E1)⟩⟩ within W^⊔[0, 5] • W^id: W^⊔[0, 5] • W^λ_1(S, 8)
    = (G1, 2), (G2, 4), and ⟦?x :p :b1⟧ matches only in G1: (μ1, 2, 2) with μ1 = {?x ↦ :a1,
    ?y ↦ :b1}."""
    evaluator = evaluation(Match(Seq(E1, E2)))
    active = before(6, IdentityWindow())
    items = evaluator.active_items(W1, active, 8, None)
    assert [short(item.id) for item in items if item.id is not None] == [":G1", ":G2"]
    found = evaluator.evaluate(E1, 8, active=active, bound=mu("y=b1 z=c1"))
    assert rows(found) == [row("x=a1 y=b1", 2, 2)]


def test_example_8_seq() -> None:
    """⟨⟨E1 SEQ E2⟩⟩_{W^id}^8 by Eq. (7): e1 = (a1 b1 c1, 2, 6) from (μ2, 6, 6); from (μ2′, 6,
    6) and (μ2′, 8, 8) with the earlier (a2 b2, 4, 4), e2 = (…, 4, 6) and e3 = (…, 4, 8).

    Example 8 prints the last two as (…, 4, 8) and (…, 6, 8); Eq. (7) gives (μ1 ∪ μ2, t1,
    t4) with t1 = 4 from E1's match and t4 from E2's, so (…, 6, 8) is not an event mapping
    of the definition (docs/semantics.md, RSEP-QL Example 8)."""
    evaluator = evaluation(Match(Seq(E1, E2)))
    assert rows(evaluator.mappings(8)) == [E_1, E_2, E_3]


def test_example_9_match_is_a_bag() -> None:
    """⟦MATCH (E1 SEQ E2)⟧^8 drops the time annotations: "a bag of solution mappings" (Sect.
    4.2). Example 9 writes the set {{?x ↦ :a_i, ?y ↦ :b_i, ?z ↦ :c_i} | i = 1, 2}; as a bag,
    i = 2 comes twice (from e2 and e3). Its distinct mappings are the example's set."""
    answer = evaluation(Match(Seq(E1, E2))).at(8, None)
    found = bag(answer)
    assert found == Counter(
        {
            (("x", ":a1"), ("y", ":b1"), ("z", ":c1")): 1,
            (("x", ":a2"), ("y", ":b2"), ("z", ":c2")): 2,
        }
    )
    assert set(found) == {(("x", f":a{i}"), ("y", f":b{i}"), ("z", f":c{i}")) for i in (1, 2)}


def test_example_10_selection_policies() -> None:
    """Example 10 (its formulas are lost) and Sect. 2's table at 8:

    - ``SEQ^c`` (Eq. (10)): the first E2 mappings with a compatible earlier E1 mapping are
      (μ2, 6, 6) and (μ2′, 6, 6); each with the first of those: e1 and e2, as the table says;
    - ``SEQ^r`` (Eq. (11)): the last such E2 mapping is (μ2′, 8, 8), with the last earlier
      (a2 b2, 4, 4): e3 alone. The table says e2 and e3, which pairs *every* E2 mapping with
      the latest E1 mapping when compatible (ETALIS's recent); Eq. (11), "the same principle
      as Eq. (10) [selecting] the last instead of the first", does not (docs/semantics.md);
    - ``SEQ^n`` (Eq. (9)): the latest E1 mapping (a2 b2, 4) and the latest E2 mapping
      (b2 c2, 8): e3.
    """
    chronological = evaluation(Match(Seq(E1, E2, SelectionPolicy.CHRONOLOGICAL)))
    recent = evaluation(Match(Seq(E1, E2, SelectionPolicy.RECENT)))
    naive = evaluation(Match(Seq(E1, E2, SelectionPolicy.NAIVE)))
    assert rows(chronological.mappings(8)) == [E_1, E_2]
    assert rows(recent.mappings(8)) == [E_3]
    assert rows(naive.mappings(8)) == [E_3]


def test_example_11_chronological_consumption() -> None:
    """Example 11: E1 SEQ^c E2 under P^c gives e1 and e2 at 8 and consumes G1, G2 and G3;
    at 10 nothing is produced.

    Under Def. 8-9's sets of triples (the default), (:b1 :q :c1) at 10 is not even new
    input: it was in SDS_w2(8) (from G3) and was consumed. Counted per stream item, as the
    example reasons, it is new, but (:a1 :p :b1) is consumed, so nothing matches it."""
    match = Match(Seq(E1, E2), SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL)
    evaluator = evaluation(match)
    assert run(evaluator, [8, 10]) == [[E_1, E_2], []]
    g1, g2, g3 = triples(":a1 :p :b1"), triples(":a2 :p :b2"), triples(":b1 :q :c1", ":b2 :q :c2")
    used = evaluator.used(8)
    assert {x.triple for x in used[W1.iri]} | {x.triple for x in used[W2.iri]} == g1 | g2 | g3
    inputs = evaluator.inputs(10)
    assert inputs is not None
    assert {x.triple for x in inputs[W2.iri]} == triples(":a3 :p :b3")

    per_item = evaluation(match, unit=InputUnit.OCCURRENCE)
    assert run(per_item, [8, 10]) == [[E_1, E_2], []]
    later = per_item.inputs(10)
    assert later is not None
    [b1c1] = triples(":b1 :q :c1")
    [a1b1] = triples(":a1 :p :b1")
    assert Input(10, b1c1) in later[W2.iri]
    assert Input(2, a1b1) not in later[W1.iri]


# Fig. 1 under all policies -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (SelectionPolicy.UNRESTRICTED, [[E_1, E_2, E_3], [E_1, E_4, E_2, E_3], [E_4, E_3]]),
        (SelectionPolicy.CHRONOLOGICAL, [[E_1, E_2], [E_1, E_2], [E_3]]),
        (SelectionPolicy.RECENT, [[E_3], [E_4], [E_4]]),
        (SelectionPolicy.NAIVE, [[E_3], [], []]),
    ],
)
def test_figure_1_selection_policies(selection: SelectionPolicy, expected: list[list[Row]]) -> None:
    """E1 SEQ E2 over Example 3's dataset at 8, 10 and 12 with the full input (P^u).

    Sect. 2: unrestricted returns e1, e2, e3 at 8 and e4 at 10; under P^u the whole input is
    read at every evaluation (Def. 10), so the answer at 10 holds e1 … e4 (e4 is what is new,
    which is what the table shows: EP-SPARQL outputs matches as they appear). At 12, W^τ_2
    holds G4 and G5: e3 and e4. Chronological at 10 is e1, e2 again without consumption.
    """
    evaluator = evaluation(Match(Seq(E1, E2), selection))
    assert run(evaluator, [8, 10, 12]) == expected


def test_figure_1_csparql_window() -> None:
    """Sect. 2's C-SPARQL run: a sliding window of length 7 sliding by 1, SEQ^n: e3 at 8;
    nothing at 10, where the latest triples are (:b1 :q :c1) and (:a3 :p :b3)."""
    w = NamedWindow(EX + "w", S_RSEPQL, TimeWindow.rsepql(7, 1), present=PresentRule.LAST_ENDED)
    e1 = Event(w.iri, E1.pattern)
    e2 = Event(w.iri, E2.pattern)
    evaluator = evaluation(Match(Seq(e1, e2), SelectionPolicy.NAIVE), [w])
    assert run(evaluator, [8, 10]) == [[E_3], []]
    latest = evaluator.evaluate(Last(e1), 10) + evaluator.evaluate(Last(e2), 10)
    assert rows(latest) == [row("x=a3 y=b3", 10, 10), row("y=b1 z=c1", 10, 10)]


@pytest.mark.parametrize("unit", list(InputUnit))
@pytest.mark.parametrize(
    ("selection", "consumption", "expected"),
    [
        (
            SelectionPolicy.UNRESTRICTED,
            ConsumptionPolicy.NONE,
            [[E_1, E_2, E_3], [E_1, E_4, E_2, E_3], [E_4, E_3]],
        ),
        (SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL, [[E_1, E_2], [], []]),
        (SelectionPolicy.RECENT, ConsumptionPolicy.RECENT, [[E_3], [E_4], []]),
        (SelectionPolicy.UNRESTRICTED, ConsumptionPolicy.CHRONOLOGICAL, [[E_1, E_2, E_3], [], []]),
        (SelectionPolicy.NAIVE, ConsumptionPolicy.RECENT, [[E_3], [], []]),
    ],
)
def test_figure_1_consumption_across_instants(
    unit: InputUnit,
    selection: SelectionPolicy,
    consumption: ConsumptionPolicy,
    expected: list[list[Row]],
) -> None:
    """Consumption carried over ET = 8, 10, 12 (Def. 8-10, Eq. (12)).

    Recent under P^r: e3 at 8 uses (:a2 :p :b2) and (:b2 :q :c2) only, so at 10 (:a1 :p :b1)
    is still there for (:b1 :q :c1) at 10: e4. Sect. 2 says neither chronological nor recent
    returns anything at 10 "because (:a1 :p :b1) [was] already consumed"; that holds for
    chronological, whose answer at 8 (e1) used it, but by Eq. (11) recent never used it
    (docs/semantics.md, RSEP-QL Sect. 2). Both units agree on Fig. 1's stream."""
    match = Match(Seq(E1, E2), selection, consumption)
    assert run(evaluation(match, unit=unit), [8, 10, 12]) == expected


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        (InputUnit.TRIPLE, [[E_1, E_2], [], [], [row("x=a4 y=b4 z=c4", 12, 14)]]),
        (
            InputUnit.OCCURRENCE,
            [[E_1, E_2], [], [], [row("x=a1 y=b1 z=c1", 12, 14), row("x=a4 y=b4 z=c4", 12, 14)]],
        ),
    ],
)
def test_consumption_of_triples_that_arrive_again(
    unit: InputUnit, expected: list[list[Row]]
) -> None:
    """Fig. 1 continued (``data/rsepql/s_continued.trig``): (:a1 :p :b1) again at 12 with
    (:a4 :p :b4), (:b1 :q :c1) again at 14 with (:b4 :q :c4); SEQ^c under P^c at 8, 10, 12,
    14. Under Def. 8-9's sets of triples the repeated triples are neither new (Δ is a set
    difference of snapshots) nor available (consumed at 8): only a4 b4 c4 at 14. Counted per
    stream item they are new: a1 b1 c1 (12, 14) too."""
    match = Match(Seq(E1, E2), SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL)
    evaluator = evaluation(match, streams=[S_CONTINUED], unit=unit)
    assert run(evaluator, [8, 10, 12, 14]) == expected


@pytest.mark.parametrize("selection", list(SelectionPolicy))
def test_one_item_is_no_sequence(selection: SelectionPolicy) -> None:
    """E1 and E2 matched in one item (both at 3) are no sequence under any policy: Eq. (7)
    reads E1 within W^⊔[0, t3 - 1], and Eq. (9) compares t2 < t3."""
    stream = Stream(S_RSEPQL, (Item.point(S_RSEPQL, 3, triples(":a1 :p :b1", ":b1 :q :c1")),))
    windows = random_windows(5)
    evaluator = evaluation(Match(Seq(E1, E2, selection)), windows, [stream])
    assert len(evaluator.evaluate(E1, 4)) == len(evaluator.evaluate(E2, 4)) == 1
    assert evaluator.mappings(4) == []


@pytest.mark.parametrize("unit", list(InputUnit))
def test_consumption_removes_the_matched_triples_only(unit: InputUnit) -> None:
    """What an answer "used" is μ(P) of each basic event, not the whole item: with one
    landmark window read by E1 and E2, (a1 p b1, 1), (b1 q c1 + a2 p b2, 2), (b2 q c2, 3),
    SEQ^c under P^c at 2 and 3 consumes (:b1 :q :c1) of the second item but leaves (:a2 :p
    :b2), which matches (:b2 :q :c2) at 3."""
    w = NamedWindow(EX + "w", S_RSEPQL, LandmarkWindow(0))
    stream = Stream(
        S_RSEPQL,
        (
            point(S_RSEPQL, 1, ":a1 :p :b1"),
            Item.point(S_RSEPQL, 2, triples(":b1 :q :c1", ":a2 :p :b2")),
            point(S_RSEPQL, 3, ":b2 :q :c2"),
        ),
    )
    seq = Seq(Event(w.iri, E1.pattern), Event(w.iri, E2.pattern))
    match = Match(seq, SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL)
    evaluator = evaluation(match, [w], [stream], unit=unit)
    assert run(evaluator, [2, 3]) == [[row("x=a1 y=b1 z=c1", 1, 2)], [row("x=a2 y=b2 z=c2", 2, 3)]]
    assert {x.triple for x in evaluator.used(2)[w.iri]} == triples(":a1 :p :b1", ":b1 :q :c1")


def test_consumption_needs_increasing_instants() -> None:
    """P^c carries I_{i-1} to t_i: an instant before the last one is refused; an instant
    already evaluated gives its answer again."""
    match = Match(Seq(E1, E2), SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL)
    evaluator = evaluation(match)
    assert run(evaluator, [8, 10]) == [[E_1, E_2], []]
    assert rows(evaluator.mappings(8)) == [E_1, E_2]
    with pytest.raises(UserError, match="carries state"):
        evaluator.mappings(9)
    assert evaluator.inputs(10) is not None
    unrestricted = evaluation(Match(Seq(E1, E2)))
    assert rows(unrestricted.mappings(10)) == [E_1, E_4, E_2, E_3]
    assert rows(unrestricted.mappings(8)) == [E_1, E_2, E_3]


# FIRST and LAST ------------------------------------------------------------------------------


def test_first_and_last_of_basic_events() -> None:
    """FIRST E2 and LAST E2 at 8: the mappings at the earliest (6) and latest (8) item."""
    evaluator = evaluation(Match(Seq(E1, E2)))
    assert rows(evaluator.evaluate(First(E2), 8)) == [
        row("y=b1 z=c1", 6, 6),
        row("y=b2 z=c2", 6, 6),
    ]
    assert rows(evaluator.evaluate(Last(E2), 8)) == [row("y=b2 z=c2", 8, 8)]


def test_first_and_last_of_sequences_use_the_partial_order() -> None:
    """At 10, E1 SEQ E2 spans (2, 6), (4, 6), (4, 8), (2, 10). Under ≺ (starts no later and
    ends no later) (2, 6) precedes all others, so FIRST is e1; (4, 8) and (2, 10) are
    incomparable and nothing follows either, so LAST is e3 and e4."""
    evaluator = evaluation(Match(Seq(E1, E2)))
    assert rows(evaluator.evaluate(First(Seq(E1, E2)), 10)) == [E_1]
    assert rows(evaluator.evaluate(Last(Seq(E1, E2)), 10)) == [E_4, E_3]
    assert precedes((2, 6), (4, 6)) and not precedes((4, 8), (2, 10))
    assert not precedes((2, 10), (4, 8)) and not precedes((3, 3), (3, 3))


def test_first_and_last_in_a_sequence() -> None:
    """FIRST inside SEQ is evaluated within the narrowed window: (FIRST E1) SEQ E2 at 10
    pairs each E2 mapping with the first E1 mapping before it only if compatible: μ2(FIRST
    E1) substitutes first, so (FIRST E1) with ?y ↦ :b2 is (a2 b2, 4)."""
    evaluator = evaluation(Match(Seq(E1, E2)))
    assert rows(evaluator.evaluate(Seq(First(E1), E2), 10)) == [E_1, E_4, E_2, E_3]
    assert rows(evaluator.evaluate(Seq(E1, Last(E2)), 10)) == [E_4]


# Table 1 ---------------------------------------------------------------------------------------


def _windows(config: Configuration) -> tuple[NamedWindow, NamedWindow]:
    """The two windows of Example 4 of the kind the configuration names: W^λ(1) for
    EP-SPARQL (which has no windows: the whole stream since 1), W^τ(7, 1) for C-SPARQL
    (Sect. 2's window)."""
    if config.window is LandmarkWindow:
        function: WindowFunction = LandmarkWindow(1)
        present = None
    else:
        function, present = TimeWindow.rsepql(7, 1), PresentRule.LAST_ENDED
    return (
        NamedWindow(EX + "w1", S_RSEPQL, function, present=present),
        NamedWindow(EX + "w2", S_RSEPQL, function, present=present),
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("EP-SPARQL unrestricted", [[E_1, E_2, E_3], [E_1, E_4, E_2, E_3], [E_1, E_4, E_2, E_3]]),
        ("EP-SPARQL chronological", [[E_1, E_2], [], []]),
        ("EP-SPARQL recent", [[E_3], [E_4], []]),
        ("C-SPARQL SEQ (timestamp)", [[E_3], [], []]),
    ],
)
def test_table_1_sequence_presets(name: str, expected: list[list[Row]]) -> None:
    """Table 1's rows with a SEQ: W^λ + SEQ (+ P^u), W^λ + SEQ^c + P^c, W^λ + SEQ^r + P^r,
    W^τ + SEQ^n, applied to MATCH (E1 SEQ E2) over Fig. 1 at 8, 10, 12."""
    [config] = [c for c in TABLE_1 if c.name == name]
    match = config.apply(Match(Seq(E1, E2)))
    assert match.selection is config.selection and match.consumption is config.consumption
    assert run(evaluation(match, _windows(config)), [8, 10, 12]) == expected


def test_table_1_csparql_time_window() -> None:
    """Table 1's last row, W^τ alone (C-SPARQL's time window): a MATCH of one basic event
    pattern gives, without time annotations, what the window graph pattern gives over the
    snapshot for a one-triple BGP: at 8 W^τ(7, 1) holds G1 … G4, at 10 G2 … G5. The preset
    refuses a pattern with a SEQ."""
    [config] = [c for c in TABLE_1 if c.selection is None]
    w1, _ = _windows(config)
    match = config.apply(Match(Event(w1.iri, E1.pattern)))
    evaluator = evaluation(match, [w1])
    window = Plan(
        Select(),
        Dataset(streams=(S_RSEPQL,), windows=(w1,)),
        pattern("{ GRAPH :w1 { ?x :p ?y } }"),
        parameters(),
    )
    query = ContinuousQuery(window, StreamSet([S]))
    for t, expected in [(8, {"a1", "a2"}), (10, {"a2", "a3"})]:
        found = bag(evaluator.at(t, None))
        assert found == bag(Mu(m) for m in query.eval(t))
        assert {dict(key)["x"][1:] for key in found} == expected
    with pytest.raises(ValueError, match="has no SEQ"):
        config.apply(Match(Seq(E1, E2)))


# MATCH with graph patterns, several streams, compiled queries ----------------------------------


LABELS = EX + "labels"


def test_match_joined_with_a_graph_pattern() -> None:
    """MATCH is a graph pattern (Sect. 4.2): its bag joins with the others (Sect. 4.1,
    ``P1 Join P2``). MATCH (E1 SEQ E2) ⋈ GRAPH :labels { ?z :label ?l } at 8, with :c1
    labelled "one" and :c2 "two": a1 b1 c1 "one" once, a2 b2 c2 "two" twice (e2, e3). The
    join is done here on the bags; the plan's EventJoin gives the same through the oracle."""
    labels = triples_with_literals()
    match = Match(Seq(E1, E2))
    evaluator = evaluation(match)
    graph_part = GraphMatcher().match(pattern("{ ?z :label ?l }"), labels)
    joined = [a.join(b) for a in evaluator.at(8, None) for b in graph_part if a.compatible(b)]
    expected = Counter(
        {
            (("l", "one"), ("x", ":a1"), ("y", ":b1"), ("z", ":c1")): 1,
            (("l", "two"), ("x", ":a2"), ("y", ":b2"), ("z", ":c2")): 2,
        }
    )
    assert bag(joined) == expected
    plan = Plan(
        Select(),
        Dataset(named_graphs=(LABELS,), streams=(S_RSEPQL,), windows=(W1, W2)),
        EventJoin(match, pattern("{ GRAPH :labels { ?z :label ?l } }")),
        parameters(),
    )
    query = ContinuousQuery(plan, StreamSet([S]), {LABELS: labels})
    assert bag(Mu(m) for m in query.eval(8)) == expected


def triples_with_literals() -> frozenset[Triple]:
    """The static graph :labels: :c1 :label "one", :c2 :label "two"."""
    label = NamedNode(EX + "label")
    return frozenset(
        {
            Triple(NamedNode(EX + "c1"), label, Literal("one")),
            Triple(NamedNode(EX + "c2"), label, Literal("two")),
        }
    )


def test_event_pattern_over_two_streams() -> None:
    """RSEP-QL lets E1 and E2 read windows on different streams (Sect. 5): S1 carries the
    :p statements, S2 the :q statements; W^⊔[0, t3 - 1] compares their timestamps across
    streams. At 10: (a1 p b1, 2) precedes (b1 q c1, 5); (a2 p b2, 7) comes after (b2 q c2,
    6) but before (b2 q c2, 9)."""
    s1 = Stream(EX + "S1", (point(EX + "S1", 2, ":a1 :p :b1"), point(EX + "S1", 7, ":a2 :p :b2")))
    s2 = Stream(
        EX + "S2",
        (
            point(EX + "S2", 5, ":b1 :q :c1"),
            point(EX + "S2", 6, ":b2 :q :c2"),
            point(EX + "S2", 9, ":b2 :q :c2"),
        ),
    )
    v1, v2 = EX + "v1", EX + "v2"
    windows = [
        NamedWindow(v1, s1.iri, LandmarkWindow(0)),
        NamedWindow(v2, s2.iri, LandmarkWindow(0)),
    ]
    seq = Seq(Event(v1, E1.pattern), Event(v2, E2.pattern))
    evaluator = evaluation(Match(seq), windows, [s1, s2])
    assert run(evaluator, [6, 10]) == [
        [row("x=a1 y=b1 z=c1", 2, 5)],
        [row("x=a1 y=b1 z=c1", 2, 5), row("x=a2 y=b2 z=c2", 7, 9)],
    ]
    chronological = evaluation(Match(seq, SelectionPolicy.CHRONOLOGICAL), windows, [s1, s2])
    assert rows(chronological.mappings(10)) == [row("x=a1 y=b1 z=c1", 2, 5)]


def point(stream: str, t: int, text: str) -> Item:
    """A stream item of one triple."""
    return Item.point(stream, t, triples(text))


EXAMPLE_4 = """
PREFIX : <http://example.org/>
PRAGMA window.present = last_ended
PRAGMA window.t0 = "-5"
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :S [LANDMARK T0 1]
FROM NAMED WINDOW :w2 ON :S [RANGE 5 STEP 1]
WHERE {
  MATCH %s ( EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 { ?y :q ?z } )
}
"""


def compiled(policies: str = "") -> RsepqlEvaluation:
    """Example 4 in rsep's RSEP-QL syntax (docs/languages.md), compiled. W^τ(5, 1) is
    RSP-QL's window with t0 = -α read with the last ended window (docs/semantics.md, 3),
    under RSP-QL's (o, c] bounds."""
    dialect = get_dialect("rsepql")
    query = parse_query(EXAMPLE_4 % policies, dialect)
    plan = compile_query(query, dialect, overrides={"window.bounds": "open_closed"})
    dataset = StreamingDataset.of(plan, StreamSet([S]), {})
    return RsepqlEvaluation(plan, dataset, GraphMatcher())


def test_compiled_example_4() -> None:
    """The compiled Example 4 gives Example 8's event mappings at 8 and Example 11's answers
    with ``MATCH [SELECTION chronological CONSUMPTION chronological]``; through the oracle's
    ContinuousQuery the SELECT answers are Example 9's bag."""
    assert rows(compiled().mappings(8)) == [E_1, E_2, E_3]
    evaluator = compiled("[SELECTION chronological CONSUMPTION chronological]")
    assert evaluator.selection is SelectionPolicy.CHRONOLOGICAL
    assert evaluator.consumption is ConsumptionPolicy.CHRONOLOGICAL
    assert run(evaluator, [8, 10]) == [[E_1, E_2], []]
    assert {8, 10} <= set(evaluator.instants())
    query = ContinuousQuery(compiled().plan, StreamSet([S]))
    assert sum(bag(Mu(m) for m in query.eval(8)).values()) == 3


@pytest.mark.parametrize("where", ["pragma", "set"])
def test_compiled_example_11_counts_stream_items(where: str) -> None:
    """Example 4 with Example 11's policies and ``PRAGMA input_unit = occurrence`` (or
    ``--set input_unit=occurrence``), parsed, compiled and evaluated: e1, e2 at 8 and
    nothing at 10, where "the new coming triple (:b1 :q :c1)" of G5 is available input, as
    Example 11 reads it (Def. 9's sets do not count it as new: the default ``triple`` has
    it consumed); over Fig. 1 continued, a1 b1 c1 matches again at 14."""
    dialect = get_dialect("rsepql")
    text = EXAMPLE_4 % "[SELECTION chronological CONSUMPTION chronological]"
    overrides = {"window.bounds": "open_closed"}
    if where == "pragma":
        text = "PRAGMA input_unit = occurrence\n" + text
    else:
        overrides["input_unit"] = "occurrence"
    plan = compile_query(parse_query(text, dialect), dialect, overrides=overrides)
    triple = compile_query(
        parse_query(EXAMPLE_4 % "[SELECTION chronological CONSUMPTION chronological]", dialect),
        dialect,
        overrides={"window.bounds": "open_closed"},
    )
    assert plan.parameters.input_unit is InputUnit.OCCURRENCE
    assert triple.parameters.input_unit is InputUnit.TRIPLE
    [b1c1] = triples(":b1 :q :c1")
    for chosen, available in ((plan, True), (triple, False)):
        evaluator = RsepqlEvaluation(
            chosen, StreamingDataset.of(chosen, StreamSet([S]), {}), GraphMatcher()
        )
        assert run(evaluator, [8, 10]) == [[E_1, E_2], []]
        inputs = evaluator.inputs(10)
        assert inputs is not None
        assert (Input(10, b1c1) in inputs[W2.iri]) is available
    continued = RsepqlEvaluation(
        plan, StreamingDataset.of(plan, StreamSet([S_CONTINUED]), {}), GraphMatcher()
    )
    assert run(continued, [8, 10, 12, 14]) == [
        [E_1, E_2],
        [],
        [],
        [row("x=a1 y=b1 z=c1", 12, 14), row("x=a4 y=b4 z=c4", 12, 14)],
    ]


def test_selection_and_consumption_from_the_parameters() -> None:
    """A SEQ's policy is its own, else the Match's, else the parameter ``selection``; the
    consumption policy the Match's, else the parameter ``consumption``."""
    params = {"selection": "recent", "consumption": "recent"}
    assert run(evaluation(Match(Seq(E1, E2)), params=params), [8, 10, 12]) == [[E_3], [E_4], []]
    own = Match(Seq(E1, E2, SelectionPolicy.CHRONOLOGICAL), SelectionPolicy.NAIVE)
    assert rows(evaluation(own, params=params).mappings(8)) == [E_1, E_2]
    assert rows(
        evaluation(Match(Seq(E1, E2), SelectionPolicy.NAIVE), params=params).mappings(8)
    ) == [E_3]


def test_errors() -> None:
    """A plan whose event pattern is not a MATCH, a MATCH inside an event pattern and an
    unknown window are refused with one sentence."""
    plan = make_plan(Match(Seq(E1, E2)))
    dataset = StreamingDataset.of(plan, StreamSet([S]), {})
    bare = Plan(plan.form, plan.dataset, Seq(E1, E2), plan.parameters)
    with pytest.raises(UserError, match="is a MATCH, not Seq"):
        RsepqlEvaluation(bare, dataset, GraphMatcher())
    evaluator = RsepqlEvaluation(plan, dataset, GraphMatcher())
    with pytest.raises(UserError, match="MATCH is a graph pattern"):
        evaluator.evaluate(Seq(E1, Match(E2)), 8)
    with pytest.raises(UserError, match="does not declare"):
        evaluator.evaluate(Event(EX + "nowhere", E1.pattern), 8)
    with pytest.raises(KeyError):
        evaluator.used(8)


# Properties -----------------------------------------------------------------------------------

POOL = (
    ":a1 :p :b1",
    ":a2 :p :b1",
    ":a1 :p :b2",
    ":b1 :q :c1",
    ":b2 :q :c1",
    ":b1 :q :c2",
    ":c1 :r :d1",
    ":c2 :r :d1",
)
P = NamedNode(EX + "p")
Q = NamedNode(EX + "q")

items_strategy = st.lists(
    st.tuples(st.integers(0, 10), st.sets(st.sampled_from(POOL), min_size=1, max_size=2)),
    min_size=2,
    max_size=8,
).map(lambda found: sorted(found, key=lambda item: item[0]))
"""Items ``(time, statements of POOL)``; about a third of them give a SEQ match at the end."""
instants_strategy = st.lists(st.integers(0, 13), min_size=1, max_size=4, unique=True).map(sorted)
offsets = st.integers(0, 3)
"""How long after the last item ``t`` lies."""


def random_stream(found: list[tuple[int, set[str]]]) -> Stream:
    """A stream of the items ``(time, statements of POOL)``."""
    return Stream(S_RSEPQL, tuple(Item.point(S_RSEPQL, t, triples(*texts)) for t, texts in found))


def random_windows(width: int) -> tuple[NamedWindow, NamedWindow]:
    """w1 = W^λ(0), w2 = W^τ(width, 1) read as RSEP-QL's W^τ."""
    return (
        NamedWindow(EX + "w1", S_RSEPQL, LandmarkWindow(0)),
        NamedWindow(
            EX + "w2", S_RSEPQL, TimeWindow.rsepql(width, 1), present=PresentRule.LAST_ENDED
        ),
    )


def brute_force(
    stream: Stream, windows: Sequence[NamedWindow], t: int, policy: SelectionPolicy
) -> list[Row]:
    """E1 SEQ E2 of BEPs computed directly from the definitions with Python loops: the :p
    statements of w1's items and the :q statements of w2's items (Eq. (7), (9)-(11))."""
    plan = make_plan(Match(Seq(E1, E2)), windows)
    dataset = StreamingDataset.of(plan, StreamSet([stream]), {})
    w1, w2 = windows
    lefts = [
        (x.subject, x.object, item.t_start)
        for item in dataset.content(w1, t)
        for x in item.graph
        if x.predicate == P
    ]
    rights = [
        (x.subject, x.object, item.t_start)
        for item in dataset.content(w2, t)
        for x in item.graph
        if x.predicate == Q
    ]

    def out(x: object, y: object, z: object, t1: int, t2: int) -> Row:
        values = {"x": x, "y": y, "z": z}
        return (tuple(sorted((v, short(term)) for v, term in values.items())), t1, t2)  # type: ignore[arg-type]

    found: set[Row] = set()
    if policy is SelectionPolicy.NAIVE:
        if lefts and rights:
            t_left = max(tl for _, _, tl in lefts)
            t_right = max(tr for _, _, tr in rights)
            for x, y, tl in lefts:
                for y2, z, tr in rights:
                    if tl == t_left and tr == t_right and y == y2 and tl < tr:
                        found.add(out(x, y, z, tl, tr))
        return sorted(found)
    earlier = {
        (y, z, tr): [(x, tl) for x, y1, tl in lefts if y1 == y and 0 <= tl < tr]
        for y, z, tr in rights
    }
    earlier = {key: value for key, value in earlier.items() if value}
    if policy is SelectionPolicy.UNRESTRICTED:
        chosen = list(earlier)
    else:
        pick = min if policy is SelectionPolicy.CHRONOLOGICAL else max
        extreme = pick((tr for _, _, tr in earlier), default=None)
        chosen = [key for key in earlier if key[2] == extreme]
    for y, z, tr in chosen:
        candidates = earlier[(y, z, tr)]
        if policy is not SelectionPolicy.UNRESTRICTED:
            pick = min if policy is SelectionPolicy.CHRONOLOGICAL else max
            best = pick(tl for _, tl in candidates)
            candidates = [(x, tl) for x, tl in candidates if tl == best]
        for x, tl in candidates:
            found.add(out(x, y, z, tl, tr))
    return sorted(found)


@settings(max_examples=60, deadline=None)
@given(items_strategy, st.integers(2, 12), offsets, st.sampled_from(list(SelectionPolicy)))
def test_sequences_agree_with_a_direct_reading(
    found: list[tuple[int, set[str]]], width: int, offset: int, policy: SelectionPolicy
) -> None:
    """SEQ, SEQ^n, SEQ^c and SEQ^r of two basic event patterns equal a direct computation of
    Eq. (7), (9), (10), (11) over the windows' items (no SPARQL, no window composition)."""
    t = found[-1][0] + offset
    stream = random_stream(found)
    windows = random_windows(width)
    evaluator = evaluation(Match(Seq(E1, E2, policy)), windows, [stream])
    assert rows(evaluator.mappings(t)) == brute_force(stream, windows, t, policy)


E3 = Event(EX + "w2", pattern("{ ?z :r ?w }"))


@settings(max_examples=30, deadline=None)
@given(items_strategy, st.integers(2, 12), offsets)
def test_selected_sequences_are_among_the_unrestricted_ones(
    found: list[tuple[int, set[str]]], width: int, offset: int
) -> None:
    """(E1 SEQ E2) SEQ E3 under SEQ^c, SEQ^r and SEQ^n: every event mapping is one of the
    unrestricted SEQ's (Eq. (9)-(11) select among Eq. (7)'s), and SEQ^c and SEQ^r find one
    whenever SEQ does."""
    t = found[-1][0] + offset
    windows = random_windows(width)
    evaluator = evaluation(Match(Seq.chain(E1, E2, E3)), windows, [random_stream(found)])
    everything = set(rows(evaluator.evaluate(Seq.chain(E1, E2, E3), t)))
    for policy in (SelectionPolicy.CHRONOLOGICAL, SelectionPolicy.RECENT, SelectionPolicy.NAIVE):
        chosen = rows(evaluator.evaluate(Seq.chain(E1, E2, E3, selection=policy), t))
        assert set(chosen) <= everything
        if policy is not SelectionPolicy.NAIVE:
            assert bool(chosen) == bool(everything)


@settings(max_examples=25, deadline=None)
@given(items_strategy, st.integers(2, 12), instants_strategy)
def test_unrestricted_consumption_is_evaluation_from_scratch(
    found: list[tuple[int, set[str]]], width: int, instants: list[int]
) -> None:
    """Under P^u (Def. 10: the full input at each evaluation), the answers at successive
    instants equal fresh evaluations at each instant."""
    stream = random_stream(found)
    windows = random_windows(width)
    match = Match(Seq(E1, E2), SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.NONE)
    carried = run(evaluation(match, windows, [stream]), instants)
    fresh = [rows(evaluation(match, windows, [stream]).mappings(t)) for t in instants]
    assert carried == fresh


@settings(max_examples=30, deadline=None)
@given(items_strategy, offsets)
def test_first_and_last_pick_the_extremes(found: list[tuple[int, set[str]]], offset: int) -> None:
    """FIRST and LAST keep exactly the event mappings no other precedes / follows in ≺: for a
    basic event pattern, those at the earliest / latest item time; for a SEQ, the minimal /
    maximal intervals."""
    t = found[-1][0] + offset
    windows = random_windows(8)
    evaluator = evaluation(Match(Seq(E1, E2)), windows, [random_stream(found)])
    events = evaluator.evaluate(E1, t)
    times = [m.t1 for m in events]
    assert rows(evaluator.evaluate(First(E1), t)) == rows(m for m in events if m.t1 == min(times))
    assert rows(evaluator.evaluate(Last(E1), t)) == rows(m for m in events if m.t1 == max(times))
    seqs = evaluator.evaluate(Seq(E1, E2), t)
    minimal = [
        m
        for m in seqs
        if not any(o.t1 <= m.t1 and o.t2 <= m.t2 and o.interval != m.interval for o in seqs)
    ]
    maximal = [
        m
        for m in seqs
        if not any(o.t1 >= m.t1 and o.t2 >= m.t2 and o.interval != m.interval for o in seqs)
    ]
    assert rows(evaluator.evaluate(First(Seq(E1, E2)), t)) == rows(minimal) == rows(first(seqs))
    assert rows(evaluator.evaluate(Last(Seq(E1, E2)), t)) == rows(maximal) == rows(last(seqs))


@settings(max_examples=30, deadline=None)
@given(
    items_strategy,
    instants_strategy,
    st.sampled_from(
        [
            (SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL),
            (SelectionPolicy.RECENT, ConsumptionPolicy.RECENT),
            (SelectionPolicy.UNRESTRICTED, ConsumptionPolicy.CHRONOLOGICAL),
        ]
    ),
    st.sampled_from(list(InputUnit)),
)
def test_consumed_input_is_not_used_again(
    found: list[tuple[int, set[str]]],
    instants: list[int],
    policies: tuple[SelectionPolicy, ConsumptionPolicy],
    unit: InputUnit,
) -> None:
    """Under P^c and P^r over landmark windows (nothing leaves them), the inputs used at
    different instants are disjoint, what is used was in the input, and each answer is among
    the unrestricted answers with the full input at that instant (Eq. (12) only removes
    triples, and a BGP is monotone)."""
    stream = random_stream(found)
    windows = (
        NamedWindow(EX + "w1", S_RSEPQL, LandmarkWindow(0)),
        NamedWindow(EX + "w2", S_RSEPQL, LandmarkWindow(0)),
    )
    selection, consumption = policies
    evaluator = evaluation(Match(Seq(E1, E2), selection, consumption), windows, [stream], unit=unit)
    full = evaluation(Match(Seq(E1, E2)), windows, [stream])
    seen: dict[str, set[Input]] = {}
    for t, answer in zip(instants, run(evaluator, instants), strict=True):
        assert set(answer) <= set(rows(full.mappings(t)))
        inputs = evaluator.inputs(t)
        assert inputs is not None
        for iri, used in evaluator.used(t).items():
            assert used <= inputs[iri]
            assert not used & seen.get(iri, set())
            seen.setdefault(iri, set()).update(used)
        assert bool(answer) == any(evaluator.used(t).values())


def test_active_window_is_the_interval_before_t3() -> None:
    """W^⊔[0, t3 - 1] • W keeps the items at 0 … t3 - 1 of W's items; before 0 nothing."""
    assert before(6, IdentityWindow()).content(8) == (IntervalWindow(0, 5).content(8)[0],)
    assert before(0, IdentityWindow()).content(8) == ()
