"""SPAseq's NFA_scep (Sect. 6, Fig. 3-10, 24-25) as compiled by compile_nfa."""

from __future__ import annotations

import pytest

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    GraphPatternRef,
    KleenePlus,
    Negation,
    Optional,
    PartitionBy,
    Seq,
    Sequence,
    Strategy,
    Within,
)
from rsep.algebra.nfa import (
    Guard,
    Nfa,
    NfaCompileError,
    Op,
    State,
    StateKind,
    Transition,
    TransitionKind,
    When,
    compile_nfa,
)

TAKE, IGNORE, PROCEED = TransitionKind.TAKE, TransitionKind.IGNORE, TransitionKind.PROCEED
STRICT, NEXT, ANY = Strategy.STRICT, Strategy.SKIP_TILL_NEXT, Strategy.SKIP_TILL_ANY
U1, U2, U3 = (f"http://smartgrid.org/{s}" for s in ("mainSource", "weather", "storageSource"))


def gpm(name: str, stream: str) -> Gpm:
    return Gpm(name, stream, GraphPatternRef(f"?h :{name.lower()} ?l", frozenset({"h", "l"})))


A, B, C = gpm("A", U1), gpm("B", U2), gpm("C", U3)


def edges(nfa: Nfa) -> set[tuple[str, str, str, str, str | None, str]]:
    return {
        (
            t.source,
            str(t.kind),
            t.target,
            str(t.guard.op),
            label(t.guard.pattern),
            str(t.guard.when),
        )
        for t in nfa.transitions
    }


def label(pattern: EventPattern | None) -> str | None:
    """A guard's pattern as the query writes it."""
    if pattern is None:
        return None
    if isinstance(pattern, Gpm):
        return pattern.name
    assert isinstance(pattern, Conjunction | Disjunction)
    sign = " & " if isinstance(pattern, Conjunction) else " | "
    return "(" + sign.join(str(label(p)) for p in pattern.operands) + ")"


def states(nfa: Nfa) -> list[tuple[str, StateKind]]:
    return [(s.name, s.kind) for s in nfa.states]


def test_figure_3_query_1_strict() -> None:
    """SEQ(A, B+, C): four states; x1 has a Kleene loop and a Kleene edge to x2."""
    nfa = compile_nfa(Sequence.of(A, STRICT, KleenePlus(B), STRICT, C))
    assert states(nfa) == [
        ("x0", StateKind.START),
        ("x1", StateKind.NORMAL),
        ("x2", StateKind.NORMAL),
        ("xf", StateKind.FINAL),
    ]
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x1", "+", "B", "match"),
        ("x1", "take", "x2", "+", "B", "match"),
        ("x2", "take", "xf", "∅", "C", "match"),
    }
    assert nfa.start.name == "x0" and nfa.final.name == "xf"
    assert nfa.streams == (U1, U2, U3)


def test_figure_4_gpm() -> None:
    nfa = compile_nfa(A)
    assert edges(nfa) == {("x0", "take", "xf", "∅", "A", "match")}


def test_figure_5_kleene_plus() -> None:
    nfa = compile_nfa(KleenePlus(A))
    assert edges(nfa) == {
        ("x0", "take", "x0", "+", "A", "match"),
        ("x0", "take", "xf", "+", "A", "match"),
    }


def test_figure_6_strict_contiguity() -> None:
    nfa = compile_nfa(Sequence.of(A, STRICT, B))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "xf", "∅", "B", "match"),
    }


@pytest.mark.parametrize(("strategy", "op", "when"), [(NEXT, ";", "no_take"), (ANY, ":", "any")])
def test_figure_7_skip_till_next_and_any(strategy: Strategy, op: str, when: str) -> None:
    """One shape for both: an ignore loop over U = {u1, u2} on the waiting state."""
    nfa = compile_nfa(Sequence.of(A, strategy, B))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "ignore", "x1", op, None, when),
        ("x1", "take", "xf", op, "B", "match"),
    }
    ignore = next(t for t in nfa.transitions if t.kind is IGNORE)
    assert ignore.guard.streams == {U1, U2}


def test_figure_8_conjunction() -> None:
    """Fig. 8 draws one edge per operand; rsep keeps the conjunction on one edge, matched
    by events of one timestamp and evaluated lazily (Sect. 7.3): a state waits for one
    pattern, which is what makes the runtime equal the oracle's Def. 8."""
    nfa = compile_nfa(Conjunction((A, B)))
    assert edges(nfa) == {("x0", "take", "xf", "&", "(A & B)", "match")}
    take = nfa.transitions[0]
    assert take.guard.streams == {U1, U2}
    assert nfa.conjunction_states == {"x0"}


def test_figure_9_disjunction() -> None:
    nfa = compile_nfa(Disjunction((A, B)))
    assert edges(nfa) == {("x0", "take", "xf", "|", "(A | B)", "match")}
    assert nfa.conjunction_states == frozenset()


def test_nested_bops_on_one_edge() -> None:
    """Def. 4's BOps nest (``(A & B) | C``) and Kleene+ applies to them (``(A & B)+``), as
    the oracle accepts: the whole BOp labels the edge."""
    nfa = compile_nfa(Sequence.of(KleenePlus(Conjunction((A, B))), NEXT, Disjunction((A, C))))
    assert edges(nfa) == {
        ("x0", "take", "x0", "+", "(A & B)", "match"),
        ("x0", "take", "x1", "+", "(A & B)", "match"),
        ("x1", "take", "xf", "|", "(A | C)", "match"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
    }


def test_figure_10_skip_till_next_then_kleene() -> None:
    """(σ ; (u, P)+): the last state of σ is the Kleene state, with the skip loop."""
    nfa = compile_nfa(Sequence.of(A, NEXT, KleenePlus(B)))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x1", "+", "B", "match"),
        ("x1", "take", "xf", "+", "B", "match"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
    }


def test_kleene_iterating_with_its_own_strategy() -> None:
    """A, B+ with skip-till-next iterations (Def. 13's ';'): a loop state left by PROCEED."""
    nfa = compile_nfa(Sequence.of(A, STRICT, KleenePlus(B, NEXT), STRICT, C))
    assert [s.name for s in nfa.states] == ["x0", "x1", "x1'", "x2", "xf"]
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x1'", "∅", "B", "match"),
        ("x1'", "take", "x1'", "+", "B", "match"),
        ("x1'", "ignore", "x1'", ";", None, "no_take"),
        ("x1'", "proceed", "x2", "∅", None, "always"),
        ("x2", "take", "xf", "∅", "C", "match"),
    }


def test_kleene_after_a_negation_loops_apart() -> None:
    """A ; !N ; B+: the negation guards the first iteration only (the oracle's gap lies
    between A and the first B), so the iterations loop in a state of their own."""
    nfa = compile_nfa(Sequence.of(A, NEXT, Negation(C), NEXT, KleenePlus(B)))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x1'", ";", "B", "match"),
        ("x1", "take", "stop", "!", "C", "match"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
        ("x1'", "take", "x1'", "+", "B", "match"),
        ("x1'", "ignore", "x1'", ";", None, "no_take"),
        ("x1'", "proceed", "xf", "∅", None, "always"),
    }


def test_figure_24_optional() -> None:
    """A ; B? , C is App. B.0.2's ⟦A ; B , C⟧ ∪ ⟦A ; !B , C⟧ (the oracle's reading): x1
    takes B into x2 (C strictly next), or proceeds to x3, which waits for C under the more
    permissive ';' with B negated. Fig. 24's ε-edge into x2 would also match A with a C
    that follows a B (the regular-expression reading, docs/semantics.md item 4)."""
    nfa = compile_nfa(Sequence.of(A, NEXT, Optional(B), STRICT, C))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x2", "?", "B", "match"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
        ("x1", "proceed", "x3", "∅", None, "always"),
        ("x2", "take", "xf", "∅", "C", "match"),
        ("x3", "take", "xf", ";", "C", "match"),
        ("x3", "take", "stop", "!", "B", "match"),
        ("x3", "ignore", "x3", ";", None, "no_take"),
    }


def test_optional_readings_share_states() -> None:
    """A ; B? ; C? ; A: four readings in three states that wait for the last A: x3 after a
    C (shared by the readings with and without B), x4 with C negated, x6 with both
    negated; x5 waits for C with B negated. A negation before an optional step (refused
    before as ambiguous) is one more gap of the reading without it."""
    nfa = compile_nfa(Sequence.of(A, NEXT, Optional(B), NEXT, Optional(C), NEXT, A))
    takes = sorted(
        (t.source, label(t.guard.pattern), t.target)
        for t in nfa.transitions
        if t.kind is TAKE and t.target != "stop"
    )
    assert [t for t in takes if t[1] == "A" and t[0] != "x0"] == [
        ("x3", "A", "xf"),
        ("x4", "A", "xf"),
        ("x6", "A", "xf"),
    ]
    assert ("x5", "C", "x3") in takes
    assert sorted(t.source for t in nfa.transitions if t.target == "stop") == [
        "x4",
        "x5",
        "x6",
        "x6",
    ]
    mixed = compile_nfa(Sequence.of(A, STRICT, Negation(B), STRICT, Optional(C), STRICT, A))
    assert {e for e in edges(mixed) if e[2] == "stop"} == {
        ("x1", "take", "stop", "!", "B", "match"),
        ("x3", "take", "stop", "!", "B", "match"),
        ("x3", "take", "stop", "!", "C", "match"),
    }


def test_negation_between_steps() -> None:
    """A ; !B ; C: B kills a run waiting for C (CQELS-CEP's SEQ_WO)."""
    nfa = compile_nfa(Sequence.of(A, NEXT, Negation(B), NEXT, C))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "xf", ";", "C", "match"),
        ("x1", "take", "stop", "!", "B", "match"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
    }
    assert nfa.state("stop").kind is StateKind.STOP
    assert not nfa.eager_start


def test_negation_first_and_last() -> None:
    """!A ; B (NO_HEAD): runs wait in x0 from the window's opening (a run that took no
    event waits on every event, so x0 needs no ignore edge). A , !B (NO_TAIL): the run
    ignores every event but a B, and proceeds to xf once the window has ended."""
    head = compile_nfa(Sequence.of(Negation(A), NEXT, B))
    assert head.eager_start
    assert edges(head) == {
        ("x0", "take", "xf", "∅", "B", "match"),
        ("x0", "take", "stop", "!", "A", "match"),
    }
    tail = compile_nfa(Within(Sequence.of(A, STRICT, Negation(B)), 60_000))
    assert edges(tail) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "stop", "!", "B", "match"),
        ("x1", "ignore", "x1", "∅", None, "any"),
        ("x1", "proceed", "xf", "∅", None, "window_end"),
    }
    with pytest.raises(NfaCompileError, match="needs WITHIN"):
        compile_nfa(Sequence.of(A, STRICT, Negation(B)))


def test_negation_takes_the_more_permissive_strategy() -> None:
    nfa = compile_nfa(Sequence.of(A, STRICT, Negation(B), ANY, C))
    assert ("x1", "ignore", "x1", ":", None, "any") in edges(nfa)


def test_within_and_partition_are_kept() -> None:
    pattern = PartitionBy(Within(Sequence.of(A, NEXT, B), 1_800_000), ("h",))
    nfa = compile_nfa(pattern)
    assert (nfa.within, nfa.partition_by) == (1_800_000, ("h",))


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (KleenePlus(KleenePlus(A)), "Kleene\\+ '\\+' applies to a graph pattern"),
        (Negation(A), "at least one step that is not negated"),
        (Sequence.of(Negation(A), STRICT, Negation(B)), "at least one step that is not negated"),
        (Sequence.of(A, STRICT, Seq(A, B)), "not a SPAseq sequence step"),
        (Sequence.of(A, STRICT, Optional(KleenePlus(B))), "optional '\\?' applies"),
        (Within(Within(A, 5), 5), "WITHIN is given twice"),
        (Conjunction((A, KleenePlus(B))), "a sequence step applies to a graph pattern"),
    ],
)
def test_compile_errors(pattern: object, message: str) -> None:
    with pytest.raises(NfaCompileError, match=message):
        compile_nfa(pattern)  # type: ignore[arg-type]


def test_nfa_validation() -> None:
    x0, xf = State("x0", StateKind.START), State("xf", StateKind.FINAL)
    guard = Guard(frozenset({U1}), Op.NONE, A, When.MATCH)
    Nfa((x0, xf), (Transition(TAKE, "x0", "xf", guard),))
    with pytest.raises(ValueError, match="two states named"):
        Nfa((x0, xf, x0), ())
    with pytest.raises(ValueError, match="exactly one start state"):
        Nfa((xf,), ())
    with pytest.raises(ValueError, match="unknown state 'x9'"):
        Nfa((x0, xf), (Transition(TAKE, "x0", "x9", guard),))


def test_render_query_1() -> None:
    """SPAseq Query 1, SEQ(A; B+, C) WITHIN 30 MINUTES, as ``rsep explain`` lists it."""
    nfa = compile_nfa(Within(Sequence.of(A, NEXT, KleenePlus(B), STRICT, C), 1_800_000))
    assert nfa.render() == "\n".join(
        [
            "NFA_scep SEQ(A; B+, C) (within 30m)",
            "  streams",
            "    u1 = <http://smartgrid.org/mainSource>",
            "    u2 = <http://smartgrid.org/weather>",
            "    u3 = <http://smartgrid.org/storageSource>",
            "  states",
            "    x0   start",
            "    x1",
            "    x2",
            "    xf   final",
            "  transitions",
            "    x0 -take-> x1    ({u1}, ∅, A)",
            "    x1 -take-> x1    ({u2}, +, B)",
            "    x1 -take-> x2    ({u2}, +, B)",
            "    x1 -ignore-> x1  ({u1, u2, u3}, ;, ∅) unless a take edge matches",
            "    x2 -take-> xf    ({u3}, ∅, C)",
        ]
    )
    assert PROCEED not in {t.kind for t in nfa.transitions}
