"""Window functions against the papers' worked examples and definitions (RSP-QL Def. 12-13,
RSEP-QL Sect. 3.2) and the YABench window fixtures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import (
    Composed,
    CountWindow,
    Extent,
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NowWindow,
    PresentRule,
    TimeWindow,
    WindowBounds,
    horizon,
)

# RSP-QL Example 3: the stream S_nearby.
S_NEARBY = [
    (":diana :isNearby :a", 2),
    (":eve :isNearby :b", 2),
    (":carl :isNearby :a", 5),
    (":eve :isNearby :a", 7),
    (":diana :isNearby :b", 12),
]
# RSP-QL Example 5: the stream S_coupon.
S_COUPON = [(':alice :offers "10% discount on ..."', 8), (':bob :offers "free coffee at ..."', 15)]
# RSEP-QL Example 1: S = (G1, 2), (G2, 4), (G3, 6), (G4, 8), (G5, 10).
S_RSEPQL = [("G1", 2), ("G2", 4), ("G3", 6), ("G4", 8), ("G5", 10)]


def items(stream: list[tuple[str, int]], extents: tuple[Extent, ...]) -> list[str]:
    return [d for d, t in stream if any(e.contains(t) for e in extents)]


# RSP-QL --------------------------------------------------------------------------------


def test_rspql_example_6_time_based_window() -> None:
    """Def. 12: the window (4, 8] over S_nearby holds Carl's and Eve's statements at 5, 7."""
    assert items(S_NEARBY, (Extent(4, 8),)) == [":carl :isNearby :a", ":eve :isNearby :a"]


def test_rspql_example_7_windows() -> None:
    """W1 with α = 5, β = 2, t0 = 1 generates (1, 6], (3, 8], (5, 10], …"""
    w1 = TimeWindow(5, 2, 1)
    assert w1.windows(3) == (Extent(1, 6), Extent(3, 8), Extent(5, 10))
    assert w1.window(3) == Extent(7, 12)


def test_rspql_example_7_present_window_by_definition() -> None:
    """The definition after Def. 13: the present window has the most recent opening before
    t_now. At 9 that is (7, 12] (W4), read as (7, 9]: empty. The paper's Example 7 says W3;
    the discrepancy is recorded (docs/semantics.md)."""
    w1 = TimeWindow(5, 2, 1)
    assert w1.present(9, PresentRule.LATEST) == (Extent(7, 12),)
    assert w1.content(9, PresentRule.LATEST) == (Extent(7, 9),)
    assert items(S_NEARBY, w1.content(9, PresentRule.LATEST)) == []


def test_rspql_example_7_present_window_as_the_example_reads_it() -> None:
    """Example 7's answer (W3, holding ``:eve :isNearby :a``) is the ``closing`` rule."""
    w1 = TimeWindow(5, 2, 1)
    assert w1.present(9, PresentRule.CLOSING) == (Extent(5, 10),)
    assert items(S_NEARBY, w1.content(9, PresentRule.CLOSING)) == [":eve :isNearby :a"]


def test_rspql_example_10_evaluation_instants() -> None:
    """P = WC[W2] ∧ NC[W2] with W2 = (α = 2, β = 2, t0 = 0) over S_coupon: ET = {8, 16}."""
    w2 = TimeWindow(2, 2, 0)
    policy = ReportPolicy.parse("window_close+non_empty")
    instants = [
        c
        for c in w2.closings(None, 20)
        if policy.triggers(
            content_changed=False,
            window_closed=True,
            non_empty=bool(items(S_COUPON, w2.present(c, PresentRule.CLOSING))),
        )
    ]
    assert instants == [8, 16]


def test_rspql_example_10_answers_need_the_closing_window() -> None:
    """Q^ex's answers: Carl and Eve near :a at 8, Diana near :b at 16, read through W1
    (α = 5, β = 2, t0 = 1). The closing window gives them; the definition's latest window
    ((7, 8] and (15, 16]) would give none (discrepancy recorded in docs/semantics.md)."""
    w1 = TimeWindow(5, 2, 1)
    closing = {t: items(S_NEARBY, w1.content(t, PresentRule.CLOSING)) for t in (8, 16)}
    assert closing[8] == [":carl :isNearby :a", ":eve :isNearby :a"]
    assert closing[16] == [":diana :isNearby :b"]
    assert [items(S_NEARBY, w1.content(t, PresentRule.LATEST)) for t in (8, 16)] == [[], []]


def test_rspql_example_11_t0_changes_the_first_window() -> None:
    """α = 5, β = 2 with t0 = 0, 1, 2 (Fig. 4). The figure is lost; its claims hold with
    s1 = s2 = 2 and s3 = 6: the first window holds s1, s2; s1, s2, s3; s3 only."""
    stream = [("s1", 2), ("s2", 2), ("s3", 6)]
    firsts = [TimeWindow(5, 2, t0).window(0) for t0 in (0, 1, 2)]
    assert [items(stream, (w,)) for w in firsts] == [["s1", "s2"], ["s1", "s2", "s3"], ["s3"]]


@given(
    st.integers(1, 20),
    st.integers(1, 20),
    st.integers(-50, 50),
    st.integers(0, 5),
    st.integers(1, 200),
)
def test_rspql_theorem_1(width: int, slide: int, a: int, n: int, dt: int) -> None:
    """Theorem 1: 𝕎(α, β, a) and 𝕎(α, β, a + nβ) agree once the second has started (under
    the definition's present window); with ``closing`` only once the older windows of the
    first have closed."""
    one, other = TimeWindow(width, slide, a), TimeWindow(width, slide, a + n * slide)
    t = a + n * slide + dt
    assert one.content(t, PresentRule.LATEST) == other.content(t, PresentRule.LATEST)
    t = a + n * slide + width + dt
    assert one.content(t, PresentRule.CLOSING) == other.content(t, PresentRule.CLOSING)


def brute(w: TimeWindow, t: int, rule: PresentRule, previous: int | None) -> tuple[Extent, ...]:
    windows = [w.window(k) for k in range(400)]
    if rule is PresentRule.LATEST:
        opened = [x for x in windows if x.opening is not None and x.opening < t]
        return (max(opened),) if opened else ()
    if rule is PresentRule.CLOSING:
        holding = [
            x for x in windows if x.opening is not None and x.opening < t <= (x.closing or 0)
        ]
        return (min(holding),) if holding else ()
    ended = [x for x in windows if x.closing is not None and x.closing <= t]
    if rule is PresentRule.LAST_ENDED:
        return (max(ended),) if ended else ()
    return tuple(x for x in ended if previous is None or (x.closing or 0) > previous)


@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.integers(-20, 20),
    st.integers(-30, 120),
    st.sampled_from(list(PresentRule)),
    st.one_of(st.none(), st.integers(-30, 120)),
)
def test_present_rules_against_enumeration(
    width: int, slide: int, t0: int, t: int, rule: PresentRule, previous: int | None
) -> None:
    """Each rule's closed form equals its definition over the enumerated windows W_k."""
    w = TimeWindow(width, slide, t0)
    assert w.present(t, rule, previous=previous) == brute(w, t, rule, previous)


@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.integers(-20, 20),
    st.integers(1, 30),
    st.integers(-30, 120),
    st.sampled_from(list(PresentRule)),
    st.one_of(st.none(), st.integers(-30, 120)),
)
def test_a_window_in_the_past_reads_what_it_read_delay_before(
    width: int, slide: int, t0: int, delay: int, t: int, rule: PresentRule, previous: int | None
) -> None:
    """``[FROM NOW-d TO NOW-d']``: at ``t`` the windows, content and closings of the same
    window at ``t - delay`` (``previous`` shifted alike); the extents are not shifted."""
    past, now = TimeWindow(width, slide, t0, delay), TimeWindow(width, slide, t0)
    before = None if previous is None else previous - delay
    assert past.present(t, rule, previous=previous) == now.present(t - delay, rule, previous=before)
    assert past.content(t, rule, previous=previous) == now.content(t - delay, rule, previous=before)
    assert past.closings(t - 10, t) == tuple(
        c + delay for c in now.closings(t - 10 - delay, t - delay)
    )
    assert horizon(past) == horizon(now) + delay


def test_a_window_in_the_past_at_rsp_ql_example_7() -> None:
    """Example 7's windows (α = 5, β = 2, t0 = 1) read 3 late: at 13 the window W3 = (5, 10]
    is read whole under ``closing``, as the undelayed window reads it at 10 (Example 10's
    instant), at 12 up to 9; each window closes 3 after its extent ends."""
    past = TimeWindow(5, 2, 1, 3)
    assert past.content(12, PresentRule.CLOSING) == (Extent(5, 9),)
    assert past.content(13, PresentRule.CLOSING) == (Extent(5, 10),)
    assert past.closings(None, 16) == (9, 11, 13, 15)
    assert past.describe() == "time window (α=5, β=2, t0=1, read 3 late)"
    with pytest.raises(ValueError, match="delay of zero or more"):
        TimeWindow(5, 2, 1, -1)


# RSEP-QL -------------------------------------------------------------------------------


@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 500))
def test_rsepql_time_based_window_is_last_ended(width: int, slide: int, t: int) -> None:
    """W^τ[(α, β)](S, t) keeps t' - α < t_i ≤ t' with t' = ⌊t/β⌋·β (Sect. 3.2)."""
    t_prime = (t // slide) * slide
    window = TimeWindow.rsepql(width, slide)
    assert window.content(t, PresentRule.LAST_ENDED) == (Extent(t_prime - width, t_prime),)


def test_rsepql_example_5_snapshot() -> None:
    """SDS_w2(12) with W^τ_2[(5, 1)] is G4 ∪ G5."""
    w2 = TimeWindow.rsepql(5, 1)
    assert items(S_RSEPQL, w2.content(12, PresentRule.LAST_ENDED)) == ["G4", "G5"]


def test_rsepql_example_7_follows_the_definition() -> None:
    """Example 7 lists W^τ_2(S, 8) as G1 … G4, but G1 (at 2) is outside (8 - 5, 8]: the
    definition gives G2, G3, G4 (discrepancy recorded in docs/semantics.md)."""
    w2 = TimeWindow.rsepql(5, 1)
    assert items(S_RSEPQL, w2.content(8, PresentRule.LAST_ENDED)) == ["G2", "G3", "G4"]
    nested = Composed(IdentityWindow(), w2)  # W^id • W^τ_2 = W^τ_2
    assert nested.content(8, PresentRule.LAST_ENDED) == w2.content(8, PresentRule.LAST_ENDED)


def test_rsepql_example_8_interval_after_landmark() -> None:
    """W^⊔[0, 5] • W^λ_1(S, 8) = (G1, 2), (G2, 4); W^λ_1 alone holds G1 … G4 at 8."""
    landmark = LandmarkWindow(1)
    assert items(S_RSEPQL, landmark.content(8)) == ["G1", "G2", "G3", "G4"]
    nested = Composed(IntervalWindow(0, 5), landmark)
    assert items(S_RSEPQL, nested.content(8)) == ["G1", "G2"]


def test_composed_windows_with_unbounded_sides() -> None:
    nested = Composed(IdentityWindow(), TimeWindow(4, 2, 0))
    assert nested.present(9, PresentRule.ALL_ENDED) == (Extent(0, 4), Extent(2, 6), Extent(4, 8))
    assert Composed(IdentityWindow(), IdentityWindow()).content(3) == (Extent(None, None),)
    assert Composed(IntervalWindow(10, 12), TimeWindow(2, 2, 0)).content(4) == ()


def test_landmark_interval_identity_now_count() -> None:
    assert LandmarkWindow().present(3, t0=5) == ()
    assert LandmarkWindow().content(7, t0=5) == (Extent(4, 7),)
    assert LandmarkWindow(1).present(100) == (Extent(0, None),)
    assert IntervalWindow(3, 9).content(1) == IntervalWindow(3, 9).content(50) == (Extent(2, 9),)
    assert IdentityWindow().content(5) == (Extent(None, None),)
    assert NowWindow().content(7, PresentRule.ALL_ENDED) == (Extent(6, 7),)
    # C-SPARQL [TRIPLES 3]: the last three items, on the axis of positions
    assert CountWindow(3).present(5, PresentRule.CLOSING) == (Extent(2, 5),)
    assert CountWindow(3).present(2, PresentRule.CLOSING) == (Extent(0, 3),)
    assert CountWindow(3, 3).present(7, PresentRule.LAST_ENDED) == (Extent(3, 6),)


def test_window_validation_and_text() -> None:
    with pytest.raises(ValueError, match="positive width"):
        TimeWindow(0, 1)
    with pytest.raises(ValueError, match="positive slide"):
        TimeWindow(1, 0)
    with pytest.raises(ValueError, match="closes before it opens"):
        Extent(5, 4)
    assert TimeWindow.tumbling(10).tumbling_window
    assert str(Extent(1, 6)) == "(1, 6]"
    assert str(Extent(None, None)) == "(-∞, +∞]"
    assert TimeWindow(5, 2, 1).describe() == "time window (α=5, β=2, t0=1)"
    assert TimeWindow(5, 5).describe() == "tumbling time window (α=5, β=5, t0=window.t0)"
    assert Composed(IntervalWindow(0, 5), LandmarkWindow(1)).describe() == (
        "interval window W^⊔[0, 5] • landmark window W^λ (t0=1)"
    )


def test_extent_bounds() -> None:
    window = Extent(0, 10)
    assert [window.contains(t) for t in (0, 10)] == [False, True]
    assert [window.contains(t, WindowBounds.CLOSED_OPEN) for t in (0, 10)] == [True, False]
    assert [window.contains(t, WindowBounds.CLOSED) for t in (0, 10)] == [True, True]
    assert window.upto(4) == Extent(0, 4)
    assert window.upto(-3) == Extent(0, 0)
    assert Extent(0, 0).empty
    assert window.intersect(Extent(5, None)) == Extent(5, 10)


# YABench -------------------------------------------------------------------------------

WINDOW_CLOSE = [(0, 30000), (0, 60000), (30000, 90000), (60000, 120000), (90000, 150000)]
WINDOW_CLOSE += [(120000, 180000)]
CONTENT_CHANGE = [0, 32434, 34125, 37047, 42365, 62434, 94125]

# Range 60 s, slide 30 s: YABench's windows close on multiples of 30 s, the first window
# starting (clamped) at 0. In RSP-QL terms t0 = -30 s.
YABENCH = TimeWindow(60000, 30000, -30000)


def test_yabench_window_listing() -> None:
    """The windows of range 60 s, slide 30 s, and the load() ranges of TripleWindowReaderTest."""
    closings = YABENCH.closings(None, 180000)
    assert closings == (30000, 60000, 90000, 120000, 150000, 180000)
    windows = [YABENCH.present(c, PresentRule.CLOSING)[0] for c in closings]
    assert windows == [Extent(c - 60000, c) for c in closings]
    assert [(max(0, w.opening or 0), w.closing) for w in windows] == WINDOW_CLOSE
    assert [YABENCH.content(t, PresentRule.CLOSING)[0].opening for t in CONTENT_CHANGE] == [
        -30000,
        0,
        0,
        0,
        0,
        30000,
        60000,
    ]


def _lines(path: Path) -> list[tuple[str, int]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append((line.strip(), int(line.rsplit(None, 2)[-2].strip('"'))))
    return out


def _select(stream: list[tuple[str, int]], extent: Extent, bounds: WindowBounds) -> Counter[str]:
    return Counter(line for line, t in stream if extent.contains(t, bounds))


def test_yabench_fixtures(shared_data: Path) -> None:
    """YABench's expected windows are exactly the present windows with bounds [o, c];
    RSP-QL's (o, c] differs only at the instant 0, the opening of the second window."""
    base = shared_data / "yabench" / "window-fixtures"
    close_input = _lines(base / "testOnWindowClose" / "input.stream")
    for number, closing in enumerate(YABENCH.closings(None, 180000), start=1):
        extent = YABENCH.present(closing, PresentRule.CLOSING)[0]
        expected = Counter(
            line for line, _ in _lines(base / "testOnWindowClose" / f"{number}.window")
        )
        assert _select(close_input, extent, WindowBounds.CLOSED) == expected
        rspql = _select(close_input, extent, WindowBounds.OPEN_CLOSED)
        missing = {line for line in expected - rspql}
        assert all(line.endswith('"0" .') for line in missing)
        assert bool(missing) == (extent.opening == 0)
    change_input = _lines(base / "testOnContentChange" / "input.stream")
    for number, t in enumerate(CONTENT_CHANGE, start=1):
        extent = YABENCH.content(t, PresentRule.CLOSING)[0]
        fixture = base / "testOnContentChange" / f"{number}.window"
        expected = Counter(line for line, _ in _lines(fixture))
        assert _select(change_input, extent, WindowBounds.CLOSED) == expected


def test_facts_of_window_functions_shared_by_oracle_and_engine() -> None:
    """origin, horizon, interval ends, [NOW], ticks and the every-instant rule (RSP-QL
    Defs. 13 and 23; RSEP-QL Def. 3): one function each, read by both evaluators."""
    from rsep.algebra.window import (
        NamedWindow,
        Reading,
        has_now,
        horizon,
        interval_ends,
        origin,
        reporting_windows,
        ticks,
        visits_every_instant,
    )

    reading = Reading(PresentRule.LATEST, WindowBounds.OPEN_CLOSED, 3)
    sliding = TimeWindow(10, 2, None)
    anchored = TimeWindow(10, 2, 7)
    nested = Composed(IntervalWindow(4, 20), NowWindow())
    assert origin(sliding, reading) == 3  # window.t0
    assert origin(anchored, reading) == 7  # the window's own t0
    assert origin(LandmarkWindow(5), reading) == 5
    assert horizon(sliding) == 12  # α + β
    assert horizon(NowWindow()) == 1
    assert horizon(nested) == 1
    assert horizon(IdentityWindow()) == 0
    assert interval_ends(nested) == [20]
    assert interval_ends(sliding) == []
    assert has_now(nested) and not has_now(sliding)
    # periodic: t = origin + k·period, k ≥ 1
    assert [t for t in range(0, 16) if ticks(4, anchored, t, reading)] == [11, 15]
    assert visits_every_instant(ReportPolicy.parse("non_empty"), sliding)
    assert not visits_every_instant(ReportPolicy.parse("window_close"), sliding)
    assert visits_every_instant(ReportPolicy.parse("window_close"), NowWindow())
    a = NamedWindow("urn:a", "urn:s", sliding)
    b = NamedWindow("urn:b", "urn:s", sliding, report=ReportPolicy.parse("window_close"))
    assert reporting_windows((a, b)) == (b,)
    assert reporting_windows((a,)) == (a,)
