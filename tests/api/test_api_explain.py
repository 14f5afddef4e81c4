"""``rsep explain``'s account of how the engine in this process evaluates RSEP-QL's MATCH
(``rsep.api.explain.event_path``): which basic event patterns are matched in columns and
which by the exact matcher (with the reason), whether instants are evaluated at once or
one after the other (consumption), and how the graph pattern beside MATCH is evaluated."""

from __future__ import annotations

from rsep.algebra.events import (
    ConsumptionPolicy,
    Event,
    GraphPatternRef,
    Match,
    SelectionPolicy,
    Seq,
)
from rsep.algebra.params import Parameters
from rsep.algebra.plan import Dataset, EventJoin, Plan, Select
from rsep.algebra.window import NamedWindow, PresentRule, TimeWindow
from rsep.api.explain import engine, event_path

EX = "http://example.org/"
S = EX + "S"
W = NamedWindow(EX + "w", S, TimeWindow.rsepql(10, 2), present=PresentRule.LAST_ENDED)
E1 = Event(W.iri, GraphPatternRef(f"{{ ?x <{EX}p> ?y }}", frozenset({"x", "y"})))
E2 = Event(W.iri, GraphPatternRef(f"{{ ?y <{EX}q> ?z }}", frozenset({"y", "z"})))
OPTIONAL = Event(
    W.iri,
    GraphPatternRef(f"{{ ?y <{EX}q> ?z OPTIONAL {{ ?z <{EX}r> ?w }} }}", frozenset("yzw")),
)


def plan_of(r2r: Match | EventJoin, graphs: tuple[str, ...] = ()) -> Plan:
    return Plan(
        Select(),
        Dataset(named_graphs=graphs, streams=(S,), windows=(W,)),
        r2r,
        Parameters.defaults(),
    )


def test_columns_and_instants_at_once() -> None:
    """BGP events in columns; without consumption every pending instant at once; the
    text is what ``engine`` gives for the plan."""
    plan = plan_of(Match(Seq(E1, E2)))
    text = event_path(plan)
    assert text == engine(plan)
    assert text.count("matched in columns") == 2
    assert "every pending evaluation instant at once" in text
    assert "graph pattern" not in text


def test_exact_matcher_and_consumption_are_named() -> None:
    """An event pattern with OPTIONAL goes to the exact matcher, named with its reason;
    under consumption the instants are evaluated one after the other."""
    match = Match(Seq(E1, OPTIONAL), SelectionPolicy.CHRONOLOGICAL, ConsumptionPolicy.CHRONOLOGICAL)
    text = event_path(plan_of(match))
    assert "by the exact matcher: a Optional element" in text
    assert "one instant after the other" in text


def test_graph_pattern_beside_match() -> None:
    """A graph pattern beside MATCH: columnar when the solver takes it, else pyoxigraph
    with the reason."""
    labels = EX + "labels"
    columnar = GraphPatternRef(
        f"{{ GRAPH <{labels}> {{ ?y <{EX}label> ?l }} }}", frozenset({"y", "l"})
    )
    text = event_path(plan_of(EventJoin(Match(Seq(E1, E2)), columnar), (labels,)))
    assert "graph pattern  columnar" in text
    literal = GraphPatternRef(f'{{ GRAPH <{labels}> {{ ?y <{EX}label> "x" }} }}', frozenset({"y"}))
    text = event_path(plan_of(EventJoin(Match(Seq(E1, E2)), literal), (labels,)))
    assert "graph pattern  evaluated by pyoxigraph" in text
