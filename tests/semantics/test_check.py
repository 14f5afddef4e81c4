"""The correctness checker (RSP-QL Def. 25-26, Theorem 1; CSR-Bench's oracle) on small data."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from rsep.algebra.compile import compile_query
from rsep.algebra.plan import Plan
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.results import SelectResult
from rsep.semantics.check import (
    Relation,
    admissible_t0,
    check,
    compare,
    correct_answers,
    relations_from_results,
    row_key,
    term_key,
)

EX = "http://example.org/"
S = EX + "s"
XSD = "http://www.w3.org/2001/XMLSchema#"


def plan(width: int = 4, slide: int = 4, profile: str = "csparql") -> Plan:
    text = (
        f"REGISTER QUERY q AS SELECT ?x FROM STREAM <{S}> "
        f"[RANGE {width}ms STEP {slide}ms] WHERE {{ ?x <{EX}p> ?y }}"
    )
    dialect = get_dialect("csparql")
    return compile_query(parse_query(text, dialect), dialect, profile=profile)


def stream(*times: int) -> StreamSet:
    events = [
        Event.point(S, t, [Triple(NamedNode(f"{EX}e{t}"), NamedNode(EX + "p"), Literal(t))])
        for t in times
    ]
    return StreamSet([Stream(S, tuple(events))])


def rel(time: int, *names: str) -> Relation:
    return Relation(
        time, frozenset(row_key(SelectResult(time, {"x": NamedNode(EX + n)})) for n in names)
    )


def test_admissible_t0_is_theorem_1_bound_on_the_data_grid() -> None:
    """T0 = {a, ..., a + β − 1} (RSP-QL, Correctness in practice), stepped by the grid of
    the item times and window parameters."""
    assert admissible_t0(plan(4, 4), stream(0, 2, 6)) == [0, 2]
    assert admissible_t0(plan(4, 4), stream(0, 1, 2)) == [0, 1, 2, 3]
    assert admissible_t0(plan(4, 4), stream(0, 1), granularity=2) == [0, 2]
    assert admissible_t0(plan(6, 3), stream(0, 3), registration=9) == [9]
    assert admissible_t0(plan(6, 3), stream(0, 3), registration=10) == [10, 11, 12]
    with pytest.raises(ValueError):
        admissible_t0(plan(), stream(0), granularity=0)


def test_the_answer_for_one_t0_is_correct_and_another_departs() -> None:
    p, data = plan(4, 4), stream(1, 2, 5, 6)
    correct = correct_answers(p, data)
    assert set(correct) == {0, 1, 2, 3}
    # C-SPARQL [o, c), t0 = 0: windows [0, 4) and [4, 8) close at 4 and 8
    assert correct[0] == [rel(4, "e1", "e2"), rel(8, "e5", "e6")]
    assert [r.time for r in correct[0]] == [4, 8]
    verdict = compare(correct[2], correct)
    assert verdict.correct and verdict.t0 == 2 and "correct" in verdict.describe()
    wrong = [rel(4, "e1", "e2"), rel(8, "e5")]
    verdict = compare(wrong, correct)
    assert not verdict.correct and verdict.t0 == 0 and verdict.agreed == 1
    assert verdict.departure is not None and verdict.departure.time == 8
    assert verdict.departure.expected == rel(8, "e5", "e6")
    text = verdict.describe()
    assert (
        "first departure: relation 1 of the answer, at 8" in text
        and "<http://example.org/e6>" in text
    )


def test_a_later_run_of_a_correct_answer_is_correct_and_times_are_not_compared() -> None:
    """CSR-Bench's ``contains`` (Def. 26: equal from t_s on): the answer may start late;
    relation equality ignores timestamps."""
    correct = {0: [rel(4, "a"), rel(8, "b"), rel(12, "c")]}
    assert compare([rel(99, "b"), rel(100, "c")], correct).correct
    assert compare([], correct).correct
    verdict = compare([rel(8, "b"), rel(12, "c"), rel(16, "d")], correct)
    assert not verdict.correct and verdict.offset == 1 and verdict.agreed == 2
    assert verdict.departure is not None and verdict.departure.expected is None
    assert "correct answer has ended" in verdict.describe()


def test_empty_relations_can_be_dropped_for_json_lines() -> None:
    correct = {0: [rel(4), rel(8, "b")]}
    assert not compare([rel(8, "b"), rel(12)], correct).correct
    assert compare([rel(8, "b")], correct, empty_relations=False).correct


def test_engine_times_map_to_their_unit_and_merge() -> None:
    """CQELS emits each row of an evaluation on its own, a few ms after the data."""
    rows = [
        SelectResult(26086, {"x": NamedNode(EX + "a")}),
        SelectResult(26111, {"x": NamedNode(EX + "b")}),
        SelectResult(27002, {"x": NamedNode(EX + "c")}),
    ]
    assert relations_from_results(rows, 1000) == [rel(0, "a", "b"), rel(0, "c")]
    assert [r.time for r in relations_from_results(rows, 1000)] == [26000, 27000]
    assert len(relations_from_results(rows)) == 3
    with pytest.raises(ValueError):
        relations_from_results(rows, 0)


def test_numbers_compare_by_value() -> None:
    """CSR-Bench compares numeric literals as doubles."""
    double = NamedNode(XSD + "double")
    assert term_key(Literal("83.0e0", datatype=double)) == term_key(Literal("83", datatype=double))
    assert term_key(Literal("87.66666666666667", datatype=double)) == term_key(
        Literal("87.666666666666666666", datatype=NamedNode(XSD + "decimal"))
    )
    assert term_key(Literal("83")) != term_key(Literal("83", datatype=double))
    assert term_key(Literal("a", language="en")) == ("literal", "a", "@en")


def test_check_runs_the_whole_test() -> None:
    p, data = plan(4, 4, "sparqlstream"), stream(1, 2, 5, 6)
    answer = correct_answers(p, data, t0s=[2])[2]  # (2, 6]: items 5 and 6; 1 and 2 precede t0
    assert answer == [rel(6, "e5", "e6")]
    verdict = check(p, data, answer)
    assert verdict.correct and verdict.tried == (0, 1, 2, 3)
    # also a run of t0 = 0's answer, (0, 4] and (4, 8]: the earliest t0 is named
    assert verdict.t0 == 0 and verdict.offset == 1
