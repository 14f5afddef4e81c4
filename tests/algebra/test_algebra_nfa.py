"""SPAseq's NFA_scep (Sect. 6, Fig. 3-10, 24-25) as compiled by compile_nfa."""

from __future__ import annotations

import pytest

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
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
            t.guard.gpm.name if t.guard.gpm else None,
            str(t.guard.when),
        )
        for t in nfa.transitions
    }


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
    nfa = compile_nfa(Conjunction((A, B)))
    assert edges(nfa) == {
        ("x0", "take", "xf", "&", "A", "match"),
        ("x0", "take", "xf", "&", "B", "match"),
    }
    assert nfa.conjunction_states == {"x0"}


def test_figure_9_disjunction() -> None:
    nfa = compile_nfa(Disjunction((A, B)))
    assert edges(nfa) == {
        ("x0", "take", "xf", "|", "A", "match"),
        ("x0", "take", "xf", "|", "B", "match"),
    }
    assert nfa.conjunction_states == frozenset()


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
        ("x1", "take", "x1'", "+", "B", "match"),
        ("x1'", "take", "x1'", "+", "B", "match"),
        ("x1'", "ignore", "x1'", ";", None, "no_take"),
        ("x1'", "proceed", "x2", "∅", None, "always"),
        ("x2", "take", "xf", "∅", "C", "match"),
    }


def test_figure_24_optional() -> None:
    nfa = compile_nfa(Sequence.of(A, NEXT, Optional(B), STRICT, C))
    assert edges(nfa) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "x2", "?", "B", "match"),
        ("x1", "proceed", "x2", "∅", None, "always"),
        ("x1", "ignore", "x1", ";", None, "no_take"),
        ("x2", "take", "xf", "∅", "C", "match"),
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
    """!A ; B (NO_HEAD): runs wait in x0 from the window's opening. A ; !B (NO_TAIL): the
    run proceeds to xf once WITHIN has passed without B."""
    head = compile_nfa(Sequence.of(Negation(A), NEXT, B))
    assert head.eager_start
    assert edges(head) == {
        ("x0", "take", "xf", ";", "B", "match"),
        ("x0", "take", "stop", "!", "A", "match"),
        ("x0", "ignore", "x0", ";", None, "no_take"),
    }
    tail = compile_nfa(Within(Sequence.of(A, STRICT, Negation(B)), 60_000))
    assert edges(tail) == {
        ("x0", "take", "x1", "∅", "A", "match"),
        ("x1", "take", "stop", "!", "B", "match"),
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
        (KleenePlus(Conjunction((A, B))), "Kleene\\+ '\\+' applies to a graph pattern"),
        (Negation(A), "at least one step that is not negated"),
        (Sequence.of(A, STRICT, Seq(A, B)), "not a SPAseq sequence step"),
        (Sequence.of(A, STRICT, Negation(B), STRICT, Optional(C)), "ambiguous"),
        (Within(Within(A, 5), 5), "WITHIN is given twice"),
        (Conjunction((A, Disjunction((B, C)))), "conjunction '&' applies to a graph pattern"),
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
