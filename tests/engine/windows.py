"""Hypothesis strategies for window functions and report policies, shared by the window,
report and continuous-query tests (RSP-QL Sect. 4: every S2R operator and report policy
rsep implements)."""

from __future__ import annotations

from hypothesis import strategies as st

from rsep.algebra.window import (
    Composed,
    CountWindow,
    IdentityWindow,
    IntervalWindow,
    LandmarkWindow,
    NowWindow,
    TimeWindow,
    WindowFunction,
)

POLICIES = [
    "window_close",
    "window_close+non_empty",
    "content_change",
    "content_change+non_empty",
    "new_content",
    "new_content+non_empty",
    "non_empty",
    "periodic(3)",
    "periodic(4)+non_empty",
    "periodic(2)+new_content",
    "periodic(5)+content_change",
    "window_close+content_change",
    "window_close+new_content",
]
"""Report policies (RSP-QL Def. 3.8, rsep's combinations): single conditions and
conjunctions of two."""


DELAYS = st.sampled_from([0, 0, 0, 1, 2, 5])
"""A time window's delay: mostly none, or read in the past (``[FROM NOW-d TO NOW-d']``)."""


def simple_windows(*, identity: bool = True) -> st.SearchStrategy[WindowFunction]:
    """Small windows of every kind (time, in the present or the past, count, landmark,
    interval, NOW and, with
    ``identity``, the identity window), with parameters that make them slide past items."""
    kinds: list[st.SearchStrategy[WindowFunction]] = [
        st.builds(
            TimeWindow,
            st.integers(1, 6),
            st.integers(1, 6),
            st.one_of(st.none(), st.integers(-3, 5)),
            DELAYS,
        ),
        st.builds(CountWindow, st.integers(1, 4), st.integers(1, 4)),
        st.builds(LandmarkWindow, st.one_of(st.none(), st.integers(-2, 12))),
        st.tuples(st.integers(0, 20), st.integers(-1, 10)).map(
            lambda p: IntervalWindow(p[0], p[0] + p[1])
        ),
        st.just(NowWindow()),
    ]
    if identity:
        kinds.append(st.just(IdentityWindow()))
    return st.one_of(*kinds)


def window_functions(*, identity: bool = True) -> st.SearchStrategy[WindowFunction]:
    """A simple window or the composition of two (:class:`Composed`)."""
    simple = simple_windows(identity=identity)
    return st.one_of(simple, st.builds(Composed, simple, simple))
