"""The engine's EP-SPARQL evaluator (rsep.engine.epsparql) against the oracle
(rsep.semantics.evaluate, rsep.semantics.epsparql): the paper's queries (1)-(6) and the
ETALIS tests the oracle's tests run (tests/semantics/test_semantics_epsparql.py), random
streams and random operator trees per family (differential tests), the Q-closure, bounded
state, checkpoints (pickling mid-stream) and the input contract.

Events are pushed in random batches and the watermark advances at random points, as Spark
would drive it; results must equal the oracle's: same times, bindings and intervals.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantics"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import driving
import test_semantics_epsparql as paper
from driving import FAST, ONE_BATCH, SLOW, Driver, answered, canonical, feed, spy_matchers
from semantics_data import EX, expand
from test_sequence_oracle import drivers

from rsep.algebra.compile import with_rules
from rsep.algebra.events import (
    And,
    EqJoin,
    EqualsOptional,
    EventFilter,
    EventPattern,
    GraphPatternRef,
    OptionalSeq,
    Or,
    SeqJoin,
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
    QueryForm,
    Select,
    SubSelect,
)
from rsep.engine import incremental_query
from rsep.engine.epsparql import sigma
from rsep.errors import UserError
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.terms import XSD
from rsep.semantics import epsparql as oracle_epsparql
from rsep.semantics import evaluate
from rsep.semantics.graph import Snapshot, TimeVaryingGraph

S = paper.S
S2 = EX + "S2"
SECOND = paper.SECOND


# Running both -----------------------------------------------------------------------------


def oracle(plan: Plan, events: Sequence[Event]) -> list[str]:
    """The oracle's results, canonical (the rules of other queries are the plan's)."""
    return driving.oracle(plan, events)


def engine(plan: Plan, events: Sequence[Event], driver: Driver | None = None) -> list[str]:
    """The engine's results, fed as ``driver`` says (``driving.feed``), canonical: the
    dispatcher's evaluator, built from the plan alone, as Spark's tasks build it."""
    query = incremental_query(plan)
    return canonical(feed(query, events, driver or ONE_BATCH)[0])


BATCHES = (Driver(), Driver(batches=(1,)), Driver(batches=(2,), pickles=(True,) * 40))


def same(plan: Plan, events: Sequence[Event]) -> list[str]:
    """The engine equals the oracle under every driver of ``BATCHES``; returns the results."""
    expected = oracle(plan, events)
    for driver in BATCHES:
        assert engine(plan, events, driver) == expected, driver
    return expected


def events_of(streams: StreamSet) -> list[Event]:
    return sorted(streams.events(), key=lambda e: e.t_end)


def etalis_events(items: Sequence[tuple[str, str, object]] = paper.TWO_PRICES) -> list[Event]:
    """The ETALIS tests' events, event k at k seconds."""
    occurrences = [paper.occ(s, p, o, k, k) for k, (s, p, o) in enumerate(items, start=1) if s]
    return events_of(paper.stream_of(occurrences))


# The paper's queries (Sect. 4.1) and the ETALIS tests -----------------------------------------


@pytest.mark.parametrize(
    ("query", "data", "count"),
    [
        ("query1.epsparql", "stock.trig", 1),
        ("query3.epsparql", "stock.trig", 2),
        ("query4.epsparql", "ratings.trig", 2),
        ("query2.epsparql", "ratings.trig", 3),
    ],
)
def test_paper_queries(query: str, data: str, count: int) -> None:
    """Queries (1)-(4) on the oracle's fixtures (query (4) is a CONSTRUCT fed back: one
    graph per instant with derivations)."""
    expected = same(paper.paper_plan(query), events_of(paper.fixture(data)))
    assert len(expected) == count


def test_query_1_with_the_condition_of_rule_13() -> None:
    text = (paper.PAPER / "query1.epsparql").read_text(encoding="utf-8")
    rule_13 = text.replace("?price3 > ?price2 * 1.05", "?price3 > ?price1 * 0.5")
    assert len(same(paper.compiled(rule_13), events_of(paper.fixture("stock.trig")))) == 2


def test_query_2_over_the_closure_of_query_4() -> None:
    """Query (2) reads query (4)'s derivations (``clos_{(4)}(S)``): :acme with :moodys;
    query (4)'s rule is part of (2)'s plan (``with_rules``, as ``rsep run --rules``)."""
    two = with_rules(paper.paper_plan("query2.epsparql"), [paper.paper_plan("query4.epsparql")])
    expected = same(two, events_of(paper.fixture("ratings.trig")))
    assert len(expected) == 3 and sum("moodys" in line for line in expected) == 1


def unlabelled(lines: Sequence[str]) -> list[str]:
    """Canonical results with each answer's blank nodes renamed in order of appearance: a
    CONSTRUCT template's blank nodes are fresh in every engine (SPARQL 1.1 sec. 16.2)."""
    out = []
    for line in lines:
        result = json.loads(line)
        names: dict[str, str] = {}
        triples = []
        for text in result.get("triples", []):
            for label in re.findall(r"_:\w+", text):
                text = text.replace(label, names.setdefault(label, f"_:b{len(names)}"))
            triples.append(text)
        out.append(json.dumps({**result, "triples": sorted(triples)}, sort_keys=True))
    return sorted(out)


def test_query_5_running_count_and_sum() -> None:
    """Query (5) as printed over acme.trig: a CONSTRUCT over a sub-select, fed back (its
    own rule): one graph per derived point, with a fresh blank node (compared up to its
    label, so not through ``engine``, whose calls tests/spark/acceptance.py replays on
    Spark and compares literally); and a SELECT reading the rule gets the four solutions
    of its pattern, ``?count`` and ``?sum`` only."""
    five = paper.paper_plan("query5.epsparql")
    events = events_of(paper.fixture("acme.trig"))
    expected = unlabelled(oracle(five, events))
    for driver in BATCHES:
        found = canonical(feed(incremental_query(five), events, driver)[0])
        assert unlabelled(found) == expected, driver
    assert [json.loads(line)["time"] for line in expected] == [
        paper.day(d) for d in ("03-02", "03-04", "03-07", "03-10T12")
    ]
    rule = paper.query_5_rule()
    answers = same(replace(paper.plan_of(rule.pattern), rules=(rule,)), events)
    found = {
        (json.dumps(r["bindings"], sort_keys=True), *r["interval"])
        for r in map(json.loads, answers)
    }
    assert len(found) == 4 and all('"count"' in b and '"point"' not in b for b, *_ in found)


def test_query_6_over_the_closure_of_query_5() -> None:
    """Query (6) with query (5) as printed in its rules (``with_rules``, as ``rsep run
    --rules``): the one answer, when the 10-day window is exceeded."""
    six = with_rules(paper.paper_plan("query6.epsparql"), [paper.paper_plan("query5.epsparql")])
    assert six.rules == (paper.query_5_rule(),)
    expected = same(six, events_of(paper.fixture("acme.trig")))
    assert len(expected) == 1


@pytest.mark.parametrize("name", sorted(paper.ETALIS))
def test_etalis(name: str) -> None:
    """ETALIS's EP-SPARQL tests as the oracle's tests retype them."""
    assert len(same(paper.compiled(paper.ETALIS[name]), etalis_events())) in (1, 2)


def test_etalis_ep_sparql_07_recursion_through_the_stream() -> None:
    """07: each derived price derives the next at the same instant, up to 999: one graph at
    1 s of the prices 2 … 999 (the oracle's test checks its closure; running the oracle
    here would take half a minute)."""
    plan = paper.compiled(paper.ETALIS_07[1])
    events = etalis_events(paper.TWO_PRICES[:1])
    integer = f"<{XSD}integer>"
    triples = sorted(
        f'<{EX}company1> <{EX}hasStockPrice> "{n}"^^{integer} .' for n in range(2, 1000)
    )
    expected = [json.dumps({"time": SECOND, "triples": triples}, sort_keys=True)]
    for driver in (Driver(), Driver(batches=(1,), pickles=(True,))):
        assert engine(plan, events, driver) == expected


def test_etalis_ep_sparql_12_and_consumption_policies() -> None:
    apart = (paper.TWO_PRICES[0], ("", "", None), paper.TWO_PRICES[1])
    assert same(paper.compiled(paper.ETALIS["ep_sparql_12"]), etalis_events(apart)) == []
    stream = [(":e", ":a", 1), (":e", ":a", 1), (":e", ":b", 1), (":e", ":b", 1)]
    plan = paper.compiled("SELECT * WHERE { ?e :a ?x } SEQ { ?e :b ?y }")
    assert len(same(plan, etalis_events(stream))) == 4


def test_sigma_is_the_oracles() -> None:
    for text in ("getDURATION() < 3", "getSTARTTIME() = getendtime ( )", '"getDURATION()" = ?x'):
        for t1, t2 in ((0, 0), (1500, 4000), (86_400_000, 90_000_001)):
            assert sigma(text, t1, t2) == oracle_epsparql.sigma(text, t1, t2)


# Random streams and operator trees (differential) ---------------------------------------------

SUBJECTS = ["?x", "?x", "?y", ":a", "_:b"]
PREDICATES = [":p", ":q"]
OBJECTS = ["?y", "?z", "?z", ":a", "1"]
FILTERS = [
    "!BOUND(?z)",
    "?x = :a",
    "?y != :b",
    "?z < 2",
    f'getDURATION() <= "PT2S"^^<{XSD}duration>',
    f'getSTARTTIME() >= "1970-01-01T00:00:01Z"^^<{XSD}dateTime>',
    f'getENDTIME() > "1970-01-01T00:00:03Z"^^<{XSD}dateTime>',
]
MONOTONE_FILTERS = FILTERS[1:]


def bgp(rng: random.Random) -> EventPattern:
    """A stream pattern of one or two triple patterns, sometimes with a BIND."""
    triples = [
        " ".join((rng.choice(SUBJECTS), rng.choice(PREDICATES), rng.choice(OBJECTS)))
        for _ in range(rng.randint(1, 2))
    ]
    text = " . ".join(triples)
    variables = frozenset(re.findall(r"\?(\w+)", text))
    binds = None
    if rng.random() < 0.15 and variables:
        source = sorted(variables)[0]
        binds = ((f"{source}2", f"STR(?{source})"),)
    return StreamBgp(GraphPatternRef(expand("{ " + text + " }"), variables), binds=binds)


def operator(kind: str, rng: random.Random, a: EventPattern, b: EventPattern) -> EventPattern:
    """``kind``'s node over ``a`` and ``b`` (``a`` alone for a unary one)."""
    filters = MONOTONE_FILTERS if kind.startswith("monotone") else FILTERS
    condition = expand(rng.choice(filters)) if rng.random() < 0.6 else None
    name = kind.removeprefix("monotone-")
    if name == "join":
        return And(a, b)
    if name == "union":
        return Or(a, b)
    if name == "seq":
        return SeqJoin(a, b)
    if name == "equals":
        return EqJoin(a, b)
    if name == "optionalseq":
        return OptionalSeq(a, b, condition)
    if name == "equalsoptional":
        return EqualsOptional(a, b, condition)
    if name == "filter":
        return EventFilter(a, expand(rng.choice(filters)))
    if name == "within":
        return Within(a, rng.randint(1, 3) * SECOND)
    if name == "subselect":
        return sub_select(rng, a)
    raise AssertionError(kind)


def sub_select(rng: random.Random, pattern: EventPattern) -> SubSelect:
    """A sub-select over ``pattern``: some of its variables, and sometimes an expression
    over one (``?z + 1`` errs on an IRI: unbound) or over the one before it."""
    names = sorted(pattern.variables)
    kept = tuple(name for name in names if rng.random() < 0.6)
    expressions: list[tuple[str, str]] = []
    if names and rng.random() < 0.5:
        expressions.append(("e1", f"?{rng.choice(names)} + 1"))
        if rng.random() < 0.5:
            expressions.append(("e2", "STR(?e1)"))
    projection = kept + tuple(name for name, _ in expressions)
    return SubSelect(pattern, projection or tuple(names[:1]) or ("x",), tuple(expressions))


BINARY = ("join", "union", "seq", "equals", "optionalseq", "equalsoptional")
UNARY = ("filter", "within", "subselect")
MONOTONE = ("join", "union", "seq", "equals", "filter", "within", "subselect")
FAMILIES: dict[str, tuple[str, ...]] = {
    "bgp_filter": ("filter",),
    "subselect": ("subselect",),
    "seq": ("seq",),
    "equals": ("equals",),
    "optionalseq": ("optionalseq",),
    "equalsoptional": ("equalsoptional",),
    "join_union": ("join", "union"),
    "within": ("within",),
    "mixed": BINARY + UNARY,
}


def pattern_of(
    rng: random.Random, kinds: Sequence[str], depth: int, monotone: bool = False
) -> EventPattern:
    """A random tree: one of ``kinds`` at the root, random operators below (a third of
    the operands), stream patterns elsewhere."""
    if depth == 0:
        return bgp(rng)
    kind = rng.choice(kinds)
    below = MONOTONE if monotone else BINARY + UNARY

    def child() -> EventPattern:
        if rng.random() < 1 / 3:
            return pattern_of(rng, [rng.choice(below)], depth - 1, monotone)
        return bgp(rng)

    a = child()
    b = child() if kind in BINARY else a
    return operator(("monotone-" if monotone else "") + kind, rng, a, b)


def triple(s: str, p: str, o: object) -> Triple:
    return paper.occ(s, p, o, 0, 0).triple


CODE_COUNT = 6 * 3 * 2 * 2 * 2 * 4 * 5
CODES = st.lists(st.integers(0, CODE_COUNT - 1), min_size=1, max_size=20)
"""One integer per event (cheap to draw and to shrink)."""


def stream_of(codes: Sequence[int]) -> list[Event]:
    """Up to 20 events on S (one or two triples each, over intervals of up to 2 s at times
    0-5 s), so that patterns match often."""
    events = []
    subjects = [":a", ":b"]
    values: list[object] = [":a", ":b", 1, 2]
    for code in codes:
        code, start = divmod(code, 6)
        code, length = divmod(code, 3)
        code, two = divmod(code, 2)
        code, subject = divmod(code, 2)
        code, predicate = divmod(code, 2)
        code, value = divmod(code, 4)
        other = code % 5
        triples = [paper.occ(subjects[subject], PREDICATES[predicate], values[value], 0, 0).triple]
        if two:
            triples.append(
                paper.occ(
                    subjects[other % 2], PREDICATES[other % 2], values[other % 4], 0, 0
                ).triple
            )
        events.append(Event(S, start * SECOND, (start + length) * SECOND, frozenset(triples)))
    return sorted(events, key=lambda e: e.t_end)


def plan_of(family: str, seed: int) -> Plan:
    """A plan around ``family``, built from one seed (cheap to draw): SELECT * (or a
    projection, DISTINCT), ASK or CONSTRUCT; IStream or RStream; for ``closure`` a
    CONSTRUCT fed back (the Q-closure) whose pattern is monotone (docs/semantics.md: a
    non-monotone rule's closure is the inflationary fixpoint of the oracle's rounds)."""
    rng = random.Random(seed)
    values = {"r2s": rng.choice(["istream", "istream", "rstream"])}
    params = Parameters.defaults().with_values(values, Source.QUERY_TEXT)
    if family == "closure":
        pattern = pattern_of(rng, MONOTONE, 1, monotone=True)
        names = sorted(pattern.variables)
        subject = "?" + names[0] if names else ":a"
        target = "?" + names[-1] if names else ":b"
        template = expand(rng.choice([f"{subject} :p {target} .", f"{subject} :q :a ."]))
        return Plan(Construct(template), Dataset(streams=(S,)), pattern, params, Output(None, True))
    pattern = pattern_of(rng, FAMILIES[family], 2)
    variables = sorted(pattern.variables)
    form: QueryForm = rng.choice(
        [
            Select(),
            Select(),
            Select(tuple(variables[:1]), distinct=True),
            Select(tuple(variables[-1:])),
            Ask(),
            Construct(expand("?x :r ?y .")),
        ]
    )
    return Plan(form, Dataset(streams=(S,)), pattern, params)


SEEN: Counter[str] = Counter()


def differential(family: str, seed: int, codes: list[int], driver: Driver) -> None:
    """The engine equals the oracle on one generated case (or both refuse it)."""
    plan, events = plan_of(family, seed), stream_of(codes)
    try:
        expected = oracle(plan, events)
    except UserError:
        with pytest.raises(UserError):
            engine(plan, events, driver)
        return
    found = engine(plan, events, driver)
    assert found == expected, f"{plan.r2r}\nengine {found}\noracle {expected}"
    SEEN[family] += 1


ALL_FAMILIES = [*FAMILIES, "closure"]
NORMAL_FAMILIES = [f for f in ALL_FAMILIES if f != "mixed"]
"""The normal run leaves out ``mixed`` (every family's operands are random trees of every
operator already); the exhaustive run has it."""


@pytest.mark.parametrize("family", NORMAL_FAMILIES)
@FAST
@given(seed=st.integers(0, 2**32), codes=CODES, driver=drivers())
def test_differential(family: str, seed: int, codes: list[int], driver: Driver) -> None:
    """1,000 random streams and operator trees per family: engine == oracle."""
    differential(family, seed, codes, driver)


@pytest.mark.parametrize("family", NORMAL_FAMILIES)
def test_differential_share(family: str) -> None:
    """The differential cases are not trivial: of the first 100 seeds of each family, each
    with a stream of 20 events drawn from the seed, at least half give answers (engine ==
    oracle, neither refused); odd seeds push batches of term ids."""
    count = 0
    for seed in range(100):
        rng = random.Random(seed)
        events = stream_of([rng.randrange(CODE_COUNT) for _ in range(20)])
        plan = plan_of(family, seed)
        expected = oracle(plan, events)
        driver = Driver(batches=(rng.choice([1, 2, 7, 20]),), ids=seed % 2 == 1)
        assert engine(plan, events, driver) == expected
        count += answered(expected)
    # these seeds: 56 to 87 of 100 answered per family
    assert count >= 50, count


@pytest.mark.exhaustive
@pytest.mark.parametrize("family", ALL_FAMILIES)
@SLOW
@given(seed=st.integers(0, 2**32), codes=CODES, driver=drivers())
def test_differential_exhaustive(family: str, seed: int, codes: list[int], driver: Driver) -> None:
    """10,000 per family (marked exhaustive)."""
    differential(family, seed, codes, driver)


# Bounded state, checkpoints, the input contract ------------------------------------------------


def _prices(count: int) -> list[Event]:
    """Rising prices of :c, one a second."""
    c, price = NamedNode(EX + "c"), NamedNode(EX + "price")
    return [
        Event(S, t * SECOND, t * SECOND, frozenset([Triple(c, price, Literal(t))]))
        for t in range(count)
    ]


def _with(plan: Plan, **values: object) -> Plan:
    params = plan.parameters.with_values(values, Source.COMMAND_LINE)
    return Plan(plan.form, plan.dataset, plan.r2r, params, plan.output)


SEQ_QUERY = "SELECT * WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } FILTER (?p1 < ?p2)"


def test_bounded_state_names_the_limit() -> None:
    """Without WITHIN every price is kept (a SEQ may pair it with any later one): with
    max_runs = 20 the engine stops with an error naming it; max_window_events bounds the
    occurrences and the Q-closure; WITHIN keeps the state small however long the stream."""
    plan = paper.compiled(SEQ_QUERY)
    query = incremental_query(_with(plan, max_runs=20))
    with pytest.raises(UserError, match="max_runs = 20"):
        for event in _prices(60):
            query.push([event])
    query = incremental_query(_with(plan, max_window_events=30))
    with pytest.raises(UserError, match="max_window_events = 30"):
        for event in _prices(60):
            query.push([event])
    endless = paper.compiled(
        "CONSTRUCT ?c :hasStockPrice ?p2 WHERE { ?c :hasStockPrice ?p1 BIND (?p1 + 1 AS ?p2) }"
    )
    query = incremental_query(_with(endless, max_window_events=50))
    with pytest.raises(UserError, match="max_window_events = 50"):
        query.push(etalis_events(paper.TWO_PRICES[:1]))
        query.finish()
    within = paper.compiled(SEQ_QUERY + " WITHIN 3")
    query = incremental_query(_with(within, max_runs=20, max_window_events=20))
    results = query.push(_prices(400)) + query.finish()
    assert len(results) == 0 + 1 + 2 + 3 * 397  # each price with the up to 3 before it
    events = _prices(40)
    assert engine(within, events) == oracle(within, events)


def test_filters_are_evaluated_in_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FILTER over a solution (``σ``, Sect. 4.2; here SEQ's ``?p1 < ?p2``) is decided by
    its program over the solutions' term ids (:mod:`rsep.engine.expression`): neither the
    Python matcher nor pyoxigraph is asked; a timed one (``getDURATION()``) is evaluated
    exactly, once per distinct ``σ``-substituted expression and binding. The answers stay
    the oracle's."""
    plan, events = paper.compiled(SEQ_QUERY), _prices(6)
    expected = oracle(plan, events)
    spy = spy_matchers(monkeypatch)
    query = incremental_query(plan)
    assert canonical(query.push(events) + query.finish()) == expected != []
    assert spy.asked == [] and spy.fast == []
    assert query.exact_filters == 0  # type: ignore[attr-defined]
    duration = f'getDURATION() <= "PT2S"^^<{XSD}duration>'
    timed_plan = paper.compiled(SEQ_QUERY.replace("?p1 < ?p2", duration))
    expected = oracle(timed_plan, events)
    query = incremental_query(timed_plan)
    assert canonical(query.push(events) + query.finish()) == expected != []
    # the SEQ's 15 pairs last 1 to 5 s: σ makes 5 distinct expressions, each evaluated once
    assert query.exact_filters == 5  # type: ignore[attr-defined]


def _items(*items: tuple[int, str, str, object]) -> list[Event]:
    """One event per ``(second, s, p, o)``."""
    return events_of(paper.stream_of(paper.occ(s, p, o, t, t) for t, s, p, o in items))


def test_a_closure_over_many_instants_pairs_a_later_round_with_an_earlier_solution() -> None:
    """Instants evaluated at once (a monotone Q-closure): the rule derives ``:a :d 1`` at
    1 s in the second round, after SEQ's right solution at 2 s was found in the first; SEQ
    still pairs them, as evaluating 1 s then 2 s does. Inside a rule, the chained
    derivation is not lost either (a review's case)."""
    rule = paper.compiled("CONSTRUCT { ?x :d ?y } WHERE { ?x :p ?y }")
    events = _items((1, ":a", ":p", 1), (2, ":a", ":q", 2), (3, ":b", ":z", 2))
    plan = with_rules(paper.compiled("SELECT * WHERE { ?x :d ?y } SEQ { ?x :q ?z }"), [rule])
    assert len(same(plan, events)) == 1
    chained = paper.compiled("CONSTRUCT { ?x :e ?z } WHERE { ?x :d ?y } SEQ { ?x :q ?z }")
    plan = with_rules(paper.compiled("SELECT * WHERE { ?x :e ?z }"), [rule, chained])
    assert len(same(plan, events)) == 1


def test_pushes_in_time_order_are_taken_whole() -> None:
    """Pushes of 16 events or more in time order skip the event-by-event checks: every
    instant before the push's last is evaluated at once, the last held, an instant split
    across pushes kept whole; the answers are the oracle's however the stream is cut."""
    plan = paper.compiled("SELECT * WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } WITHIN 3")
    events = _items(*((t // 3, f":c{t % 2}", ":price", t) for t in range(60)))
    expected = oracle(plan, events)
    assert len(expected) > 60
    for size in (16, 17, 25, 60):
        assert engine(plan, events, Driver(batches=(size,))) == expected, size


def test_one_expression_over_other_variables_is_evaluated_for_each() -> None:
    """The same FILTER text in two UNION branches binding other variables (evaluated
    exactly: COALESCE has no program) is remembered per variable, not per ids alone."""
    plan = paper.compiled(
        "SELECT * WHERE { { ?x :p ?y FILTER(COALESCE(?y, :z) = :a || COALESCE(?w, :z) = :b) } "
        "UNION { ?x :q ?w FILTER(COALESCE(?y, :z) = :a || COALESCE(?w, :z) = :b) } }"
    )
    events = _items((1, ":a", ":p", ":a"), (1, ":a", ":q", ":a"), (2, ":a", ":q", ":b"))
    assert len(same(plan, events)) == 2


def test_max_runs_counts_what_an_optional_side_keeps_after_compaction() -> None:
    """OPTIONALSEQ's optional side under WITHIN keeps one old solution per mapping: a push
    of 300 optional solutions stays under ``max_runs = 100`` however it is pushed (the
    oracle, which holds the whole stream's solutions, answers without the limit)."""
    plan = paper.compiled("SELECT * WHERE { { ?c :opt ?v } OPTIONALSEQ { ?c :m ?w } } WITHIN 2")
    events = _items(*((t, ":c", ":opt", 1) for t in range(300)), (300, ":c", ":m", 5))
    expected = oracle(plan, events)
    assert len(expected) == 2
    for driver in BATCHES:
        assert engine(_with(plan, max_runs=100), events, driver) == expected, driver


def test_pickling_mid_stream_gives_the_same_results() -> None:
    events = events_of(paper.fixture("stock.trig"))
    for name in ("query1.epsparql", "query3.epsparql"):
        plan = paper.paper_plan(name)
        expected = oracle(plan, events)
        for size in (1, 3):
            driver = Driver(batches=(size,), pickles=(True,) * len(events))
            assert engine(plan, events, driver) == expected


def test_input_contract() -> None:
    """Events come in time order, never at or before the watermark; the watermark makes
    an instant final; a finished query takes nothing more; ``finish(until)`` leaves later
    answers out; events of every stream form ``S`` (the oracle merges them), a pattern
    naming a stream reads that one only."""
    plan = paper.compiled(paper.ETALIS["ep_sparql_01"])
    events = etalis_events((*paper.TWO_PRICES, (":company1", ":hasStockPrice", 3)))
    query = incremental_query(plan)
    assert query.push(events[:2]) == []
    assert [r.time for r in query.advance(2 * SECOND)] == [2 * SECOND]
    with pytest.raises(UserError, match="watermark"):
        query.push(events[1:2])
    query.push(events[2:])
    assert query.finish(until=2 * SECOND) == []
    with pytest.raises(UserError, match="finished"):
        query.push(events)
    query = incremental_query(plan)
    query.push(events[1:])
    with pytest.raises(UserError, match="time order"):
        query.push(events[:1])
    merged = [replace(events[0], stream=S2), *events[1:]]
    assert engine(plan, merged) == oracle(plan, merged)
    named = StreamBgp(
        GraphPatternRef(expand("{ ?c :hasStockPrice ?p }"), frozenset({"c", "p"})), stream=S2
    )
    later = StreamBgp(GraphPatternRef(expand("{ ?c :hasStockPrice ?q }"), frozenset({"c", "q"})))
    # the price 1 (on S2 only) before 2 and 3; RStream (the plan's default) repeats [1, 2]
    assert len(same(paper.plan_of(SeqJoin(named, later)), merged)) == 3


KB = EX + "kb"
SECTORS = frozenset(
    Triple(NamedNode(EX + company), NamedNode(EX + "sector"), Literal(sector))
    for company, sector in [
        ("umbrella", "pharma"),
        ("cyberdyne", "robotics"),
        ("cyberdyne", "defence"),
        ("acme", "tech"),
    ]
)
"""A background graph: each company's sectors (Cyberdyne has two, Globex none)."""


@pytest.mark.parametrize("graphs", ["default", "named"])
def test_a_pattern_beside_the_event_pattern_joins_its_solutions(graphs: str) -> None:
    """Query (3) joined with a graph pattern over the dataset (an ``EventJoin``): each
    solution with each compatible solution of the group beside it, over its interval, as
    the oracle joins them at the instant: :umbrella with one sector, :cyberdyne with two;
    the graph read as the default graph or through ``GRAPH <kb>``."""
    base = paper.paper_plan("query3.epsparql")
    assert isinstance(base.r2r, EventPattern)
    if graphs == "default":
        dataset = replace(base.dataset, default_graphs=(KB,))
        text = "{ ?company :sector ?sector }"
    else:
        dataset = replace(base.dataset, named_graphs=(KB,))
        text = "{ GRAPH :kb { ?company :sector ?sector } }"
    beside = GraphPatternRef(expand(text), frozenset({"company", "sector"}))
    plan = replace(
        base,
        r2r=EventJoin(base.r2r, beside),
        dataset=dataset,
        form=Select(("company", "sector")),
    )
    events = events_of(paper.fixture("stock.trig"))
    expected = driving.oracle(plan, events, {KB: SECTORS})
    for driver in BATCHES:
        found = feed(incremental_query(plan, {KB: SECTORS}), events, driver)[0]
        assert canonical(found) == expected, driver
    pairs = sorted(
        (line["bindings"]["company"], line["bindings"]["sector"])
        for line in map(json.loads, expected)
    )
    assert pairs == [
        (f"<{EX}cyberdyne>", '"defence"'),
        (f"<{EX}cyberdyne>", '"robotics"'),
        (f"<{EX}umbrella>", '"pharma"'),
    ]


STOCK_TIMES = (1298937600000, 1299283200000, 1299715200000, 1299888000000, 1300579200000)
"""The instants of stock.trig: the 1st, 5th, 10th, 12th and 20th of March 2011."""


def sectors_changing(
    change: int, r2s: str = "istream"
) -> tuple[Plan, list[Event], dict[str, TimeVaryingGraph]]:
    """Query (3) under ``r2s`` joined with ``GRAPH :kb { ?company :sector ?sector }`` over a
    time-varying ``:kb`` (RSP-QL Def. 10) whose second snapshot (Cyberdyne in defence only,
    Umbrella in biotech) holds from the ``change``-th instant of stock.trig: the plan, events
    and graphs."""
    base = paper.paper_plan("query3.epsparql")
    base = replace(base, parameters=base.parameters.with_values({"r2s": r2s}, Source.QUERY_TEXT))
    gone = {Literal("pharma"), Literal("robotics")}
    biotech = Triple(NamedNode(EX + "umbrella"), NamedNode(EX + "sector"), Literal("biotech"))
    later = frozenset(t for t in SECTORS if t.object not in gone) | {biotech}
    at = STOCK_TIMES[change]
    kb = TimeVaryingGraph((Snapshot(SECTORS, None, at - 1), Snapshot(later, at, None)))
    beside = GraphPatternRef(
        expand("{ GRAPH :kb { ?company :sector ?sector } }"), frozenset({"company", "sector"})
    )
    plan = replace(
        base,
        r2r=EventJoin(base.r2r, beside),
        dataset=replace(base.dataset, named_graphs=(KB,)),
        form=Select(("company", "sector")),
    )
    return plan, events_of(paper.fixture("stock.trig")), {KB: kb}


SECTORS_CHANGING = {
    (2, "istream"): [(2, "cyberdyne", "defence"), (2, "umbrella", "biotech")],
    (3, "istream"): [
        (2, "cyberdyne", "defence"),
        (2, "cyberdyne", "robotics"),
        (2, "umbrella", "pharma"),
        (3, "umbrella", "biotech"),
    ],
    (3, "dstream"): [(3, "cyberdyne", "robotics"), (3, "umbrella", "pharma")],
    (4, "rstream"): [
        *((i, "cyberdyne", "defence") for i in (2, 3, 4)),
        *((i, "cyberdyne", "robotics") for i in (2, 3)),
        *((i, "umbrella", "pharma") for i in (2, 3)),
        (4, "umbrella", "biotech"),
    ],
}
"""The answers of :func:`sectors_changing` by the instant the graph changes at and the
streaming operator, as (instant of stock.trig, company, sector): every answer is the
solution ending on the 10th (instant 2), joined at each later instant with the graph then,
so IStream streams Umbrella's biotech at the change, DStream what the change removed, and
RStream the pairs of the graph at each instant."""


@pytest.mark.parametrize(("change", "r2s"), sorted(SECTORS_CHANGING))
def test_the_pattern_beside_reads_a_time_varying_graph(change: int, r2s: str) -> None:
    """The group is evaluated over the graph at each evaluation instant and joined with the
    whole answer so far (the oracle's ``Join`` at the instant): the answers of
    :data:`SECTORS_CHANGING`, the oracle's, fed in every way."""
    plan, events, graphs = sectors_changing(change, r2s)
    expected = driving.oracle(plan, events, graphs)
    pairs = sorted(
        (
            STOCK_TIMES.index(line["time"]),
            line["bindings"]["company"].removeprefix(f"<{EX}").removesuffix(">"),
            line["bindings"]["sector"].strip('"'),
        )
        for line in map(json.loads, expected)
    )
    assert pairs == sorted(SECTORS_CHANGING[change, r2s])
    for driver in BATCHES:
        found = feed(incremental_query(plan, graphs), events, driver)[0]
        assert canonical(found) == expected, driver


@pytest.mark.parametrize("r2s", ["istream", "rstream", "dstream"])
@pytest.mark.parametrize("form", ["select", "ask"])
def test_start_gives_the_oracles_answers_from_start(r2s: str, form: str) -> None:
    """From every ``start`` (before, at, between and after the instants), the engine's
    answers are the oracle's from ``start``: no instant before it is reported, and the
    first one at or after it compares with ∅ (RSP-QL Def. 21-22), so under IStream
    :cyberdyne (the 10th) is streamed again at the 12th from a start on the 11th."""
    base = paper.paper_plan("query3.epsparql")
    params = base.parameters.with_values({"r2s": r2s}, Source.COMMAND_LINE)
    plan = replace(base, parameters=params)
    if form == "ask":
        plan = replace(plan, form=Ask())
    events = events_of(paper.fixture("stock.trig"))
    streams = StreamSet.from_events(events)
    day = 86_400_000
    starts = sorted({t + shift for t in STOCK_TIMES for shift in (-day, 0, 1)})
    for start in starts:
        expected = canonical(evaluate(plan, streams, {}, start=start))
        for driver in BATCHES:
            found = feed(incremental_query(plan, start=start), events, driver)[0]
            assert canonical(found) == expected, (start, driver)
    eleventh = STOCK_TIMES[2] + day
    answers = [json.loads(line) for line in canonical(evaluate(plan, streams, {}, start=eleventh))]
    if (r2s, form) == ("istream", "select"):
        assert sorted((a["time"], a["bindings"]["company"]) for a in answers) == [
            (STOCK_TIMES[3], f"<{EX}cyberdyne>"),
            (STOCK_TIMES[3], f"<{EX}umbrella>"),
        ]


@pytest.mark.parametrize(
    ("query", "select", "tail", "count"),
    [
        ("query3.epsparql", "", "ORDER BY DESC(?company) LIMIT 1", 1),
        ("query3.epsparql", "", "ORDER BY ?company OFFSET 1", 1),
        ("query3.epsparql", "(COUNT(*) AS ?n)", "GROUP BY ?company", 2),
        ("query1.epsparql", "(COUNT(*) AS ?n)", "GROUP BY ?company HAVING (COUNT(*) > 0)", 1),
    ],
)
def test_solution_modifiers_on_the_answer_so_far(
    query: str, select: str, tail: str, count: int
) -> None:
    """Solution modifiers beside the pattern (``rsep.algebra.modifiers``) over the answer so
    far at each instant, then IStream: the engine's results are the oracle's under three
    drivers (a grouped row has no interval)."""
    text = (paper.PAPER / query).read_text(encoding="utf-8")
    text = text.replace("SELECT ?company", f"SELECT ?company {select}".rstrip())
    plan = paper.compiled(f"{text}\n{tail}")
    assert plan.modifiers is not None
    assert len(same(plan, events_of(paper.fixture("stock.trig")))) == count


def test_equals_tells_apart_intervals_equal_modulo_two_to_the_32() -> None:
    """EQUALS joins on both ends of the intervals: [0, T] and [2^32, T] (about 49.7 days
    apart in ms) are different intervals, whatever the key packing does with wide
    values."""
    stream = EX + "S"

    def bgp(p: str, o: str) -> StreamBgp:
        return StreamBgp(GraphPatternRef(f"{{ ?x <{EX}{p}> ?{o} }}", frozenset({"x", o})))

    def event(t: int, p: str, o: str) -> Event:
        triple = Triple(NamedNode(EX + "u"), NamedNode(EX + p), NamedNode(EX + o))
        return Event(stream, t, t, frozenset({triple}))

    left = SeqJoin(bgp("a", "y"), bgp("c", "w"))
    right = SeqJoin(bgp("b", "z"), bgp("c", "w"))
    plan = Plan(Select(), Dataset(streams=(stream,)), EqJoin(left, right), Parameters.defaults())
    far = 2**32
    events = [event(0, "a", "m"), event(far, "b", "h"), event(far + 10, "c", "k")]
    assert oracle(plan, events) == []
    assert engine(plan, events) == []
    near = [event(far, "a", "m"), event(far, "b", "h"), event(far + 10, "c", "k")]
    assert engine(plan, near) == oracle(plan, near) != []
