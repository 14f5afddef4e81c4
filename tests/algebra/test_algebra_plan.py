"""The plan and ``explain``."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from rsep.algebra.events import (
    Event,
    Gpm,
    GraphPatternRef,
    KleenePlus,
    Match,
    Seq,
    Sequence,
    Strategy,
    StreamBgp,
    Within,
)
from rsep.algebra.params import Parameters, Source
from rsep.algebra.plan import (
    Ask,
    Construct,
    Dataset,
    EventJoin,
    Output,
    Plan,
    Rule,
    Select,
    SubSelect,
    explain,
)
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import LandmarkWindow, NamedWindow, PresentRule, TimeWindow
from rsep.errors import UserError

EX = "http://example.org/"


def example_10() -> Plan:
    """RSP-QL Example 10's query Q^ex (shortened), with W2 reporting on WC ∧ NC."""
    return Plan(
        form=Select(("shopper", "coupon")),
        dataset=Dataset(
            default_graphs=(EX + "shops",),
            streams=(EX + "nearby", EX + "coupon"),
            windows=(
                NamedWindow(EX + "w1", EX + "nearby", TimeWindow(5, 2, 1)),
                NamedWindow(
                    EX + "w2",
                    EX + "coupon",
                    TimeWindow(2, 2, 0),
                    report=ReportPolicy.parse("window_close+non_empty"),
                ),
            ),
        ),
        r2r=GraphPatternRef(
            "GRAPH :w1 { ?shopper :isNearby ?shop } GRAPH :w2 { ?owner :offers ?coupon }",
            frozenset({"shopper", "shop", "owner", "coupon"}),
        ),
        parameters=Parameters.defaults()
        .with_value("window.report", "content_change", Source.DIALECT_DEFAULT, "as CQELS")
        .with_value("r2s", "rstream", Source.QUERY_TEXT, "Rstream{...}"),
        output=Output(EX + "out"),
    )


SNAPSHOT = Path(__file__).parent / "snapshots" / "explain_example_10.txt"


def test_explain_snapshot() -> None:
    assert explain(example_10()) == SNAPSHOT.read_text(encoding="utf-8")


def test_plan_reads_its_parameters() -> None:
    plan = example_10()
    assert plan.r2s is R2S.RSTREAM
    assert plan.report(EX + "w1") == ReportPolicy.parse("content_change")
    assert plan.report(EX + "w2") == ReportPolicy.parse("window_close+non_empty")
    assert plan.reports == {
        EX + "w1": ReportPolicy.parse("content_change"),
        EX + "w2": ReportPolicy.parse("window_close+non_empty"),
    }
    assert plan.present(EX + "w1") is PresentRule.LATEST
    assert plan.sequences() == () and plan.nfas() == ()
    with pytest.raises(KeyError):
        plan.report(EX + "w3")


def test_dataset_validation() -> None:
    window = NamedWindow(EX + "w", EX + "s", LandmarkWindow())
    with pytest.raises(ValueError, match="two windows with one name"):
        Dataset(windows=(window, window))
    with pytest.raises(ValueError, match="unknown windows"):
        Dataset(windows=(window,), default_windows=(EX + "v",))
    merged = Dataset(windows=(window,), default_windows=(EX + "w",))
    text = explain(Plan(Ask(), merged, GraphPatternRef("?s ?p ?o", frozenset({"s", "p", "o"}))))
    assert (
        "window        <http://example.org/w> on <http://example.org/s> (in the default graph)"
        in text
    )
    assert "landmark window W^λ (t0=window.t0)" in text


def test_explain_event_patterns_and_automaton() -> None:
    """An RSEP-QL event graph pattern joined with a graph pattern, and a SPAseq sequence."""
    e1 = Event(EX + "w1", GraphPatternRef("?x :p ?y", frozenset({"x", "y"})))
    e2 = Event(EX + "w2", GraphPatternRef("?y :q ?z", frozenset({"y", "z"})))
    rsepql = Plan(
        Construct("?x :r ?z"),
        Dataset(),
        EventJoin(Match(Seq(e1, e2)), GraphPatternRef("?z a :Thing", frozenset({"z"}))),
        output=Output(feedback=True),
    )
    text = explain(rsepql)
    assert "    (empty)" in text
    assert "  form     CONSTRUCT { ?x :r ?z }" in text
    assert (
        "\n".join(
            [
                "  r2r",
                "    EventJoin",
                "      Match",
                "        Seq",
                "          Event(window=http://example.org/w1)",
                "            graph pattern { ?x :p ?y }  binds ?x ?y",
            ]
        )
        in text
    )
    assert "  output   answers, fed back into the input" in text
    assert "automaton" not in text

    def gpm(name: str) -> Gpm:
        return Gpm(name, EX + name, GraphPatternRef(f"?h :{name} ?v", frozenset({"h", "v"})))

    sequence = Within(Sequence.of(gpm("A"), Strategy.SKIP_TILL_NEXT, KleenePlus(gpm("B"))), 60_000)
    spaseq = Plan(Select(("h",), distinct=True), Dataset(streams=(EX + "A", EX + "B")), sequence)
    assert spaseq.sequences() == (sequence,)
    text = explain(spaseq)
    assert "  form     SELECT DISTINCT ?h" in text
    assert (
        "    Within 1m\n      Sequence SEQ(A; B+)\n        Gpm A on <http://example.org/A>" in text
    )
    assert "automaton\n  NFA_scep SEQ(A; B+) (within 1m)" in text
    assert "    x1 -take-> x1    ({u2}, +, B)" in text


def _epsparql(template: str | None, *, feedback: bool = False) -> Plan:
    """A one-pattern EP-SPARQL plan: ``?c :down ?a`` over the stream, as SELECT or as a
    CONSTRUCT of ``template``."""
    bgp = StreamBgp(GraphPatternRef(f"{{ ?c <{EX}down> ?a }}", frozenset("ca")))
    form: Select | Construct = Select() if template is None else Construct(template)
    return Plan(form, Dataset(streams=(EX + "S",)), bgp, output=Output(None, feedback))


def test_a_construct_plan_is_a_rule_and_the_plan_carries_the_rules_of_others() -> None:
    """EP-SPARQL Sect. 4.2's query set Q: a CONSTRUCT plan is a rule (its pattern and
    template), a CONSTRUCT fed back is its own first rule, the rules of other queries
    follow; a plan with rules pickles (Spark ships it to its tasks) and compares by them."""
    other = _epsparql(f"?a <{EX}rated> ?c .")
    rule = Rule.of(other)
    assert (rule.pattern, rule.template) == (other.r2r, other.form.template)  # type: ignore[union-attr]
    reading = replace(_epsparql(None), rules=(rule,))
    assert reading.closure_rules == (rule,)
    fed = replace(_epsparql(f"?c <{EX}bad> ?a .", feedback=True), rules=(rule,))
    assert fed.closure_rules == (Rule.of(fed), rule)
    assert _epsparql(f"?c <{EX}bad> ?a .").closure_rules == ()  # not fed back: no rule
    assert pickle.loads(pickle.dumps(fed)) == fed and fed != replace(fed, rules=())


def test_what_is_no_rule_is_refused() -> None:
    with pytest.raises(UserError, match="needs a CONSTRUCT query, not SELECT"):
        Rule.of(_epsparql(None))
    joined = replace(
        _epsparql("?c <http://example.org/x> ?a ."),
        r2r=EventJoin(_epsparql(None).r2r, GraphPatternRef("{ ?a ?p ?o }")),  # type: ignore[arg-type]
    )
    with pytest.raises(UserError, match=r"event pattern over the stream.*not EventJoin"):
        Rule.of(joined)


def test_explain_prints_the_rules_of_other_queries() -> None:
    """Each rule: its template and its pattern tree, a sub-select around the pattern with
    its ``(e AS ?v)`` (EP-SPARQL query (5))."""
    bgp = _epsparql(None).r2r
    assert isinstance(bgp, StreamBgp)
    sub = SubSelect(bgp, ("a", "n"), (("n", "?a + 1"),))
    rule = Rule(sub, f"?a <{EX}rated> ?n .")
    text = explain(replace(_epsparql(None), rules=(rule,)))
    at = text.index("  rule 1   CONSTRUCT { ?a <http://example.org/rated> ?n . }")
    assert text[at:].splitlines()[1:4] == [
        "    SubSelect SELECT ?a (?a + 1 AS ?n)",
        "      StreamBgp",
        "        graph pattern { { ?c <http://example.org/down> ?a } }  binds ?a ?c",
    ]
    assert "  rule " not in explain(_epsparql(None))


def test_a_sub_select_binds_its_projection() -> None:
    """SPARQL 1.1 sec. 18.2.1: the outer pattern sees the projected variables only (those
    the pattern or an expression binds); a projection is not empty (``SELECT *`` is the
    pattern itself) and an expression binds a projected variable."""
    bgp = _epsparql(None).r2r
    assert isinstance(bgp, StreamBgp)
    assert SubSelect(bgp, ("a", "n", "q"), (("n", "?a + 1"),)).variables == {"a", "n"}
    with pytest.raises(ValueError, match="at least"):
        SubSelect(bgp, ())
    with pytest.raises(ValueError, match=r"unprojected variables: \['n'\]"):
        SubSelect(bgp, ("a",), (("n", "?a + 1"),))
    with pytest.raises(ValueError, match="not a variable name"):
        SubSelect(bgp, ("?a",))
