"""Report policies (RSP-QL Def. 23, SECRET's conditions): parsing, printing, evaluation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rsep.algebra.report import (
    CONTENT_CHANGE,
    NON_EMPTY,
    PERIODIC,
    WINDOW_CLOSE,
    Periodic,
    ReportPolicy,
)


def test_parse_and_print() -> None:
    policy = ReportPolicy.parse("window_close+non_empty")
    assert policy == ReportPolicy.of(WINDOW_CLOSE, NON_EMPTY)
    assert ReportPolicy.parse("NON_EMPTY, window_close") == policy
    assert ReportPolicy.parse("window_close non_empty") == policy
    assert str(policy) == "window_close+non_empty"
    assert str(ReportPolicy.parse("non_empty+content_change")) == "content_change+non_empty"
    assert WINDOW_CLOSE in policy and CONTENT_CHANGE not in policy


def test_periodic() -> None:
    policy = ReportPolicy.parse("periodic(5s) + non_empty")
    assert policy == ReportPolicy.of(PERIODIC(5000), NON_EMPTY)
    assert policy.period == 5000
    assert str(policy) == "non_empty+periodic(5s)"
    assert ReportPolicy.parse("periodic(PT0.5S)").period == 500
    assert ReportPolicy.parse("periodic(250)").period == 250
    assert ReportPolicy.parse("content_change").period is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("window_closes", "unknown condition 'window_closes'.*allowed: content_change"),
        ("", "empty report policy"),
        ("periodic(5s)+periodic(6s)", "at most one periodic"),
        ("periodic(fast)", "not a duration"),
        ("periodic(0)", "positive period"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ReportPolicy.parse(text)


conditions = st.sampled_from([CONTENT_CHANGE, WINDOW_CLOSE, NON_EMPTY]) | st.builds(
    Periodic, st.integers(1, 10**9)
)


@given(st.frozensets(conditions, min_size=1, max_size=4))
def test_print_parse_round_trip(found: frozenset[object]) -> None:
    periodic = [c for c in found if isinstance(c, Periodic)]
    chosen = frozenset(c for c in found if not isinstance(c, Periodic)) | frozenset(periodic[:1])
    policy = ReportPolicy(chosen)  # type: ignore[arg-type]
    assert ReportPolicy.parse(str(policy)) == policy


def test_triggers_is_a_conjunction() -> None:
    """Example 9: P = WC ∧ NC holds only where the window closes with content."""
    policy = ReportPolicy.parse("window_close+non_empty")
    kwargs = {"content_changed": True, "periodic_tick": False}
    assert policy.triggers(window_closed=True, non_empty=True, **kwargs)
    assert not policy.triggers(window_closed=True, non_empty=False, **kwargs)
    assert not policy.triggers(window_closed=False, non_empty=True, **kwargs)
    periodic = ReportPolicy.of(PERIODIC(10))
    assert periodic.triggers(
        content_changed=False, window_closed=False, non_empty=False, periodic_tick=True
    )
