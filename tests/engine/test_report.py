"""Report policies decided incrementally (``rsep.engine.report``): the candidate instants are
the oracle's (``rsep.semantics.report``), and a window's policy holds at an instant exactly
when the oracle says it does, for every window function, condition and conjunction,
present rule and bounds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, Triple
from windows import POLICIES, window_functions

from rsep.algebra.events import GraphPatternRef
from rsep.algebra.params import Parameters, Source
from rsep.algebra.plan import Dataset, Plan, Select
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import (
    NamedWindow,
    NowWindow,
    PresentRule,
    WindowBounds,
    WindowFunction,
)
from rsep.engine.report import Candidates, Progression, Reporter, reporting_windows
from rsep.engine.window import Reading, StreamBuffer, WindowState
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.report import TimeRange, _candidates, reports
from rsep.semantics.report import reporting_windows as oracle_reporting

EX = "http://example.org/"
STREAM = EX + "s"

functions = window_functions(identity=False)
items = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 2)), max_size=10).map(sorted)


def stream_of(found: list[tuple[int, int]]) -> Stream:
    """Items at the given times; equal objects make equal items (content change compares
    multisets of items)."""
    return Stream(
        STREAM,
        tuple(
            Event.point(
                STREAM,
                t,
                [Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), NamedNode(f"{EX}o{o}"))],
            )
            for t, o in found
        ),
    )


def setup(
    found: list[tuple[int, int]],
    window: WindowFunction,
    policy: str,
    rule: PresentRule,
    bounds: WindowBounds,
    t0: int,
) -> tuple[StreamingDataset, NamedWindow, Reporter]:
    """The oracle's dataset and the engine's reporter for one window over the items."""
    named = NamedWindow(EX + "w", STREAM, window)
    params = Parameters.defaults().with_values(
        {
            "window.report": policy,
            "window.present": str(rule),
            "window.bounds": str(bounds),
            "window.t0": t0,
        },
        Source.QUERY_TEXT,
    )
    plan = Plan(
        Select(),
        Dataset(streams=(STREAM,), windows=(named,)),
        GraphPatternRef(f"GRAPH <{EX}w> {{ ?s ?p ?o }}"),
        parameters=params,
    )
    stream = stream_of(found)
    sds = StreamingDataset.of(plan, StreamSet([stream]), {})
    buffer = StreamBuffer(STREAM)
    for event in stream:
        buffer.append(event)
    state = WindowState(named, Reading(rule, bounds, t0), buffer)
    return sds, named, Reporter(state, ReportPolicy.parse(policy))


@settings(max_examples=500, deadline=None)
@given(
    items,
    functions,
    st.sampled_from(POLICIES),
    st.sampled_from(list(PresentRule)),
    st.sampled_from(list(WindowBounds)),
    st.integers(-3, 5),
)
def test_candidates_are_the_oracles(
    found: list[tuple[int, int]],
    window: WindowFunction,
    policy: str,
    rule: PresentRule,
    bounds: WindowBounds,
    t0: int,
) -> None:
    """Over a range, the candidate instants are the oracle's (or every instant, when the
    oracle visits every instant)."""
    sds, named, reporter = setup(found, window, policy, rule, bounds, t0)
    candidates = Candidates([(named, reporter.policy, reporter.state.reading)])
    for t, _ in found:
        candidates.add_item(STREAM, t)
    span = TimeRange(min([t for t, _ in found], default=0), 45)
    want = _candidates(sds, named, span)
    got: set[int] = set()
    t = span.start - 1
    while True:
        found_next = candidates.next_after(t)
        if found_next is None or found_next > span.until:
            break
        got.add(found_next)
        t = found_next
    if want is None:
        assert candidates.every_instant and got == set(range(span.start, span.until + 1))
    else:
        assert not candidates.every_instant and got == want


@settings(max_examples=500, deadline=None)
@given(
    items,
    functions,
    st.sampled_from(POLICIES),
    st.sampled_from(list(PresentRule)),
    st.sampled_from(list(WindowBounds)),
    st.integers(-3, 5),
    st.lists(st.booleans(), min_size=1, max_size=6),
)
def test_reports_are_the_oracles(
    found: list[tuple[int, int]],
    window: WindowFunction,
    policy: str,
    rule: PresentRule,
    bounds: WindowBounds,
    t0: int,
    evaluated: list[bool],
) -> None:
    """At every instant of a range, with a varying previous evaluation instant, the
    window's policy holds exactly when the oracle's ``reports`` says so."""
    sds, named, reporter = setup(found, window, policy, rule, bounds, t0)
    previous = None
    for t in range(-2, 45):
        want = reports(sds, named, t, previous)
        now = reporter.state.content(t, previous)
        assert reporter.reports(t, previous, lambda now=now: now) == want, t
        if want and evaluated[t % len(evaluated)]:
            previous = t


def test_reporting_windows() -> None:
    """The windows with their own policy report; when none has one, all do."""
    own = ReportPolicy.parse("window_close")
    a = NamedWindow(EX + "a", STREAM, NowWindow())
    b = NamedWindow(EX + "b", STREAM, NowWindow(), report=own)
    dataset = Plan(
        Select(),
        Dataset(streams=(STREAM,), windows=(a, b)),
        GraphPatternRef("{}"),
    )
    sds = StreamingDataset.of(dataset, StreamSet([stream_of([])]), {})
    assert reporting_windows([a, b]) == oracle_reporting(sds) == (b,)
    assert reporting_windows([a]) == (a,)


def test_progression() -> None:
    p = Progression(3, 5)
    assert [p.next_after(t) for t in (-10, 2, 3, 7, 8)] == [3, 3, 8, 8, 13]
