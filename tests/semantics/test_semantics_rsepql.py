"""The oracle on RSEP-QL Section 3 (seed 000): window functions over a graph stream
(Example 2), the snapshot of a temporal sub-dataset (Example 5) and the window graph
pattern (Example 6).

S = (G1, 2), (G2, 4), (G3, 6), (G4, 8), (G5, 10) of Example 1 is in
``tests/semantics/data/rsepql_s.trig``; Fig. 1 is lost, so its graphs are rebuilt from the
examples that quote them (see the file and docs/semantics.md).
"""

from __future__ import annotations

from semantics_data import EX, S_RSEPQL, plan, read_stream, short

from rsep.algebra.plan import Select
from rsep.algebra.window import (
    Composed,
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    PresentRule,
    TimeWindow,
    WindowFunction,
)
from rsep.rdf.event import StreamSet
from rsep.semantics import ContinuousQuery, StreamingDataset
from rsep.semantics.window import Reading, content

S = read_stream("rsepql_s.trig", S_RSEPQL)

W1 = NamedWindow(EX + "w1", S_RSEPQL, LandmarkWindow(1))
"""Example 3: W^λ_1 with p_1 = (1)."""
W2 = NamedWindow(EX + "w2", S_RSEPQL, TimeWindow.rsepql(5, 1), present=PresentRule.LAST_ENDED)
"""Example 3: W^τ_2 with p_2 = (5, 1): closings on multiples of β, the last ended window."""


def names(window: WindowFunction, t: int, rule: PresentRule = PresentRule.LATEST) -> list[str]:
    """The graph names of the substream ``W(S, t)``."""
    return [short(event.id) for event in content(window, S, t, Reading(rule))]  # type: ignore[arg-type]


def sds() -> StreamingDataset:
    """SDS = {(w1, W^λ_1(S)), (w2, W^τ_2(S))} of Example 3."""
    return StreamingDataset.of(plan("?s ?p ?o", [W1, W2]), StreamSet([S]), {})


def test_rsepql_example_2_window_functions() -> None:
    """Example 2 applies W^τ, W^λ and W^⊔ to S; its list is lost in extraction, so these
    are the definitions' values that Examples 5, 7 and 8 quote:

    - W^τ[(5, 1)](S, 12) keeps 12 - 5 < t_i ≤ 12: (G4, 8), (G5, 10) (Example 5);
    - W^τ[(5, 1)](S, 8) keeps 3 < t_i ≤ 8: G2, G3, G4 (Example 7 lists G1 too:
      discrepancy 4 in docs/semantics.md);
    - W^τ[(5, 2)](S, 9) reads t' = ⌊9/2⌋·2 = 8: G2, G3, G4;
    - W^λ[(1)](S, 8) keeps 1 ≤ t_i ≤ 8: G1 … G4 (Example 8);
    - W^⊔[(0, 5)](S, t) keeps 0 ≤ t_i ≤ 5 whatever t: G1, G2;
    - W^id(S, t) = S; W^⊔[0, 5] • W^λ_1 (S, 8) = (G1, 2), (G2, 4) (Example 8).
    """
    ended = PresentRule.LAST_ENDED
    assert names(TimeWindow.rsepql(5, 1), 12, ended) == [":G4", ":G5"]
    assert names(TimeWindow.rsepql(5, 1), 8, ended) == [":G2", ":G3", ":G4"]
    assert names(TimeWindow.rsepql(5, 2), 9, ended) == [":G2", ":G3", ":G4"]
    assert names(LandmarkWindow(1), 8) == [":G1", ":G2", ":G3", ":G4"]
    assert names(IntervalWindow(0, 5), 8) == names(IntervalWindow(0, 5), 100) == [":G1", ":G2"]
    assert names(IdentityWindow(), 0) == [":G1", ":G2", ":G3", ":G4", ":G5"]
    assert names(Composed(IntervalWindow(0, 5), LandmarkWindow(1)), 8) == [":G1", ":G2"]


def test_rsepql_example_5_snapshot() -> None:
    """SDS_w2(12) = ∪ G_k over W^τ_2[(5, 1)](S, 12) = G4 ∪ G5 = {:a3 :p :b3, :b1 :q :c1,
    :b2 :q :c2}."""
    snapshot = sds().snapshot(W2, 12)
    assert sorted(" ".join(short(x) for x in t) for t in snapshot) == [
        ":a3 :p :b3",
        ":b1 :q :c1",
        ":b2 :q :c2",
    ]


def test_rsepql_example_5_landmark_snapshot() -> None:
    """The landmark window of the same dataset at 8: SDS_w1(8) = G1 ∪ … ∪ G4."""
    snapshot = sds().snapshot(W1, 8)
    assert sorted(" ".join(short(x) for x in t) for t in snapshot) == [
        ":a1 :p :b1",
        ":a2 :p :b2",
        ":b1 :q :c1",
        ":b2 :q :c2",
    ]


def test_rsepql_example_6_window_graph_pattern() -> None:
    """⟦WINDOW w2 P⟧^12 = ⟦?x :p ?y⟧ over SDS_w2(12) = {{?x ↦ :a3, ?y ↦ :b3}}; the window
    graph pattern is ``GRAPH <w2> { … }`` in the plan's SPARQL."""
    query = ContinuousQuery(
        plan("GRAPH :w2 { ?x :p ?y }", [W1, W2], form=Select(("x", "y"))), StreamSet([S])
    )
    assert [{v: short(term) for v, term in mu.items()} for mu in query.eval(12)] == [
        {"x": ":a3", "y": ":b3"}
    ]


def test_rsepql_example_6_against_the_landmark_window() -> None:
    """The same pattern on w1 at 12 sees every :p statement since 1."""
    query = ContinuousQuery(plan("GRAPH :w1 { ?x :p ?y }", [W1, W2]), StreamSet([S]))
    found = sorted(short(mu["x"]) for mu in query.eval(12))
    assert found == [":a1", ":a2", ":a3"]
