"""Properties the definitions imply, checked on random finite streams (hypothesis):

- Def. 20-22: RStream at each instant equals what IStream added minus what DStream
  removed, accumulated over ET;
- a tumbling window's snapshots at its closings partition the stream (RSP-QL Def. 13 with
  α = β);
- Theorem 1: windows with the same (α, β) whose t0 differ by a multiple of β give the same
  answers once both have started and a window of each has closed;
- Def. 23: the oracle's candidate instants find the same ET as testing every instant.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import NamedNode, Triple
from semantics_data import EX, plan

from rsep.algebra.plan import Construct, Select
from rsep.algebra.window import (
    Composed,
    CountWindow,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    NowWindow,
    TimeWindow,
    WindowFunction,
)
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.results import ConstructResult
from rsep.semantics import ContinuousQuery, evaluate

STREAM = EX + "s"
P = NamedNode(EX + "p")
WHERE = "GRAPH :w { ?s :p ?o }"

Items = list[tuple[int, int, int]]
"""(time, subject number, object number) of each item."""

items = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 2), st.integers(0, 2)), min_size=0, max_size=10
).map(sorted)
policies = st.sampled_from(
    [
        "window_close",
        "window_close+non_empty",
        "content_change",
        "content_change+non_empty",
        "new_content",
        "non_empty",
        "periodic(3)",
        "periodic(4)+non_empty",
    ]
)


def streams(found: Items, *, unique: bool = False) -> StreamSet:
    """One stream; with ``unique`` every item's object is its own (no two equal triples)."""
    events = []
    for number, (t, s, o) in enumerate(found):
        obj = NamedNode(f"{EX}o{number if unique else o}")
        events.append(Event.point(STREAM, t, [Triple(NamedNode(f"{EX}s{s}"), P, obj)]))
    return StreamSet([Stream(STREAM, tuple(events))])


def by_time(query: ContinuousQuery, until: int) -> dict[int, Counter[frozenset[tuple[str, str]]]]:
    """Each answer at each instant of ET as a multiset of mappings."""
    out: dict[int, Counter[frozenset[tuple[str, str]]]] = {}
    for answer in query.answers(until=until):
        out[answer.time] = Counter(
            frozenset((v, str(t)) for v, t in r.bindings.items())  # type: ignore[union-attr]
            for r in answer.results
        )
    return out


@settings(max_examples=60, deadline=None)
@given(
    items,
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(-3, 3),
    policies,
    st.sampled_from(["latest", "closing"]),
)
def test_rstream_is_istream_minus_dstream(
    found: Items, width: int, slide: int, t0: int, report: str, present: str
) -> None:
    """Def. 20-22 on sets (SELECT DISTINCT): the state built by adding IStream's mappings
    and removing DStream's at each instant of ET is RStream's answer there."""
    window = NamedWindow(EX + "w", STREAM, TimeWindow(width, slide, t0))
    until = 40
    answers = {}
    for r2s in ("rstream", "istream", "dstream"):
        query = plan(
            WHERE,
            [window],
            form=Select(("s", "o"), distinct=True),
            params={
                "r2s": r2s,
                "window.report": report,
                "window.present": present,
                "output.empty": True,
            },
        )
        answers[r2s] = by_time(ContinuousQuery(query, streams(found)), until)
    assert answers["rstream"].keys() == answers["istream"].keys() == answers["dstream"].keys()
    state: set[frozenset[tuple[str, str]]] = set()
    for t in sorted(answers["rstream"]):
        state |= set(answers["istream"][t])
        state -= set(answers["dstream"][t])
        assert state == set(answers["rstream"][t]), t


@settings(max_examples=60, deadline=None)
@given(
    items,
    st.integers(1, 6),
    st.integers(-3, 3),
    st.sampled_from(["open_closed", "closed_open"]),
    st.sampled_from(["closing", "last_ended"]),
)
def test_tumbling_window_snapshots_partition_the_stream(
    found: Items, width: int, t0: int, bounds: str, present: str
) -> None:
    """α = β: the windows' contents at their closings are disjoint and together hold every
    item after t0 (at or after it, for [o, c))."""
    window = NamedWindow(EX + "w", STREAM, TimeWindow.tumbling(width, t0))
    query = plan(
        WHERE,
        [window],
        form=Construct(f"?s <{EX}p> ?o"),
        params={
            "window.report": "window_close",
            "window.present": present,
            "window.bounds": bounds,
            "output.empty": True,
        },
    )
    data = streams(found, unique=True)
    last = max((t for t, _, _ in found), default=t0)
    results = list(evaluate(query, data, until=max(last, t0) + width))
    graphs = [r.triples for r in results if isinstance(r, ConstructResult)]
    assert len(graphs) == len(results)
    union: set[Triple] = set().union(*graphs)
    assert sum(len(g) for g in graphs) == len(union)
    kept = [
        e for e in data[STREAM] if (e.t_start > t0 if bounds == "open_closed" else e.t_start >= t0)
    ]
    assert union == {t for e in kept for t in e.graph}


@settings(max_examples=60, deadline=None)
@given(
    items,
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(-5, 5),
    st.integers(0, 3),
    st.sampled_from(["window_close+non_empty", "content_change", "new_content", "window_close"]),
    st.sampled_from(["latest", "closing"]),
)
def test_theorem_1_t0_modulo_the_slide(
    found: Items, width: int, slide: int, a: int, n: int, report: str, present: str
) -> None:
    """RSP-QL Theorem 1: 𝕎(α, β, a) and 𝕎(α, β, a + nβ) give the same answers from
    a + nβ + α + 1 on (the warm-up: the later window has started and one of its windows
    has closed; docs/semantics.md, discrepancy 2)."""
    answers = []
    for t0 in (a, a + n * slide):
        window = NamedWindow(EX + "w", STREAM, TimeWindow(width, slide, t0))
        query = plan(
            WHERE,
            [window],
            form=Select(("s", "o")),
            params={"window.report": report, "window.present": present, "output.empty": True},
        )
        answers.append(by_time(ContinuousQuery(query, streams(found)), 45))
    warm = a + n * slide + width + 1
    after = [{t: a for t, a in found_at.items() if t >= warm} for found_at in answers]
    assert after[0] == after[1]


def window_functions() -> st.SearchStrategy[WindowFunction]:
    delays = st.sampled_from([0, 0, 1, 4])  # [FROM NOW-d TO NOW-d']
    times = st.builds(TimeWindow, st.integers(1, 6), st.integers(1, 6), st.integers(-3, 3), delays)
    return st.one_of(
        times,
        st.builds(CountWindow, st.integers(1, 4), st.integers(1, 4)),
        st.builds(LandmarkWindow, st.integers(-2, 10)),
        st.builds(IntervalWindow, st.integers(0, 10), st.integers(10, 25)),
        st.just(NowWindow()),
        st.builds(Composed, st.builds(IntervalWindow, st.integers(0, 10), st.just(20)), times),
    )


@settings(max_examples=150, deadline=None)
@given(
    items,
    window_functions(),
    policies,
    st.sampled_from(["latest", "closing", "last_ended", "all_ended"]),
    st.sampled_from(["open_closed", "closed_open", "closed"]),
)
def test_candidate_instants_find_et(
    found: Items, function: WindowFunction, report: str, present: str, bounds: str
) -> None:
    """Def. 23 read literally (test every instant of the range) and the oracle's candidate
    instants give the same ET, for every window function, condition, rule and bounds."""
    window = NamedWindow(EX + "w", STREAM, function)
    query = plan(
        WHERE,
        [window],
        params={"window.report": report, "window.present": present, "window.bounds": bounds},
    )
    bound = ContinuousQuery(query, streams(found))
    span = bound.time_range(until=40)
    assert bound.evaluation_instants(span.start, 40) == bound.evaluation_instants(
        span.start, 40, every_instant=True
    )


@settings(max_examples=100, deadline=None)
@given(
    items,
    st.builds(
        TimeWindow, st.integers(1, 6), st.integers(2, 8), st.integers(-3, 3), st.integers(1, 7)
    ),
    st.sampled_from(["content_change", "new_content", "window_close", "content_change+non_empty"]),
    st.sampled_from(["latest", "closing", "last_ended", "all_ended"]),
    st.sampled_from(["open_closed", "closed_open", "closed"]),
)
def test_candidate_instants_find_et_of_past_windows(
    found: Items, function: TimeWindow, report: str, present: str, bounds: str
) -> None:
    """As above for windows in the past (``[FROM NOW-d TO NOW-d']``), whose items enter and
    whose windows close ``delay`` after their own instants: slides of 2 or more, so that
    the windows' sides alone do not hold every instant."""
    test_candidate_instants_find_et.hypothesis.inner_test(  # type: ignore[attr-defined]
        found, function, report, present, bounds
    )


def test_construct_results_are_construct_results() -> None:
    query = plan(
        WHERE, [NamedWindow(EX + "w", STREAM, LandmarkWindow(0))], form=Construct("?s ?p ?o")
    )
    results = list(evaluate(query, streams([(1, 0, 0)]), until=3))
    assert all(isinstance(r, ConstructResult) for r in results)
