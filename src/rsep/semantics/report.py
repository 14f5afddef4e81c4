"""The evaluation instants ET of a continuous query, from its report policies (RSP-QL Def. 23).

"Given a policy P, the evaluation time instant set ET_P is the set of time instants on
which the policy in P is satisfied" (Def. 23). Each condition of a policy is bound to a
window (Example 9: ``P = WC[𝕎2] ∧ NC[𝕎2]``); in the plan every window carries a policy,
its own (from the query text) or the parameter ``window.report``. The oracle reads them so:

- the *reporting windows* are the windows that state their own policy, or every window
  when none does (RSP-QL Example 10 binds P to 𝕎2 alone, and 𝕎1 does not report);
- a window reports at ``t`` when every condition of its policy holds there
  (:func:`reports`, a conjunction: Example 9);
- ET is the set of instants at which some reporting window reports (each window reports
  on its own, as SECRET describes a window; CQELS evaluates when any stream brings data).

The conditions at ``t`` (SECRET's, RSP-QL Def. 23 and the list after it):

- content change (CC): the window's items at ``t`` differ from those at ``t - 1``;
- new content (``new_content``): some item at ``t`` was not there at ``t - 1``;
- window close (WC): a window of the window function closes at ``t``;
- non-empty content (NC): the window holds an item at ``t``;
- periodic (P): ``t`` is ``k ≥ 1`` periods after the window's origin.

A query without windows is evaluated at the start of the range and wherever one of its
time-varying graphs changes.

Time is discrete (Def. 8), so ET over a finite range is finite. The oracle does not visit
every instant: CC, new content and WC can only hold at an item's time or one or two
instants after it, or at (or just after) an opening or closing of the window, and P at its
ticks (a property test checks this against visiting every instant). A
policy made of NC alone holds on whole stretches of time, so it is evaluated at every
instant (at most :data:`MAX_INSTANTS` of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from rsep.algebra.report import (
    CONTENT_CHANGE,
    NEW_CONTENT,
    WINDOW_CLOSE,
)
from rsep.algebra.window import (
    NamedWindow,
    delays,
    interval_ends,
    visits_every_instant,
)
from rsep.algebra.window import (
    reporting_windows as windows_that_report,
)
from rsep.errors import UserError
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.window import (
    boundaries,
    closes,
    content_changed,
    horizon,
    new_content,
    origin,
    ticks,
)

__all__ = [
    "MAX_INSTANTS",
    "TimeRange",
    "evaluation_instants",
    "reporting_windows",
    "reports",
    "time_range",
]

MAX_INSTANTS = 1_000_000
"""The most instants the oracle visits one by one (a policy of non-empty content alone)."""


@dataclass(frozen=True)
class TimeRange:
    """The finite stretch ``[start, until]`` of time over which a query is evaluated."""

    start: int
    until: int

    def __post_init__(self) -> None:
        if self.until < self.start:
            raise UserError(f"the time range ends ({self.until}) before it starts ({self.start})")

    def __contains__(self, t: object) -> bool:
        return isinstance(t, int) and self.start <= t <= self.until

    def __len__(self) -> int:
        return self.until - self.start + 1


def time_range(
    sds: StreamingDataset, start: int | None = None, until: int | None = None
) -> TimeRange:
    """The range a query is evaluated over. ``start`` defaults to the time of the first
    item the windows read (before it every window is empty), or without items to the
    earliest window origin or time-varying graph change; ``until`` to the last instant at
    which a window's content or its window-close condition can still change (the last
    item's time plus the window's :func:`~rsep.semantics.window.horizon`), or at which a
    time-varying graph changes."""
    first_items: list[int] = []
    earliest: list[int] = sorted(sds.changes())[:1]
    latest: list[int] = sorted(sds.changes())[-1:]
    for window in sds.windows:
        times = [event.t_start for event in sds.stream(window)]
        if times:
            first_items.append(times[0])
            latest.append(times[-1] + horizon(window.window))
        earliest.append(origin(window.window, sds.reading(window)))
        latest.extend(interval_ends(window.window))
    if start is None:
        start = min(first_items) if first_items else min(earliest, default=0)
    last = until if until is not None else max([start, *latest])
    return TimeRange(start, last)


def reporting_windows(sds: StreamingDataset) -> tuple[NamedWindow, ...]:
    """The windows whose policies define ET: those with their own report policy, or all
    windows when none has one (module docstring)."""
    return windows_that_report(sds.windows)


def reports(sds: StreamingDataset, window: NamedWindow, t: int, previous: int | None) -> bool:
    """Whether ``window``'s report policy is satisfied at ``t`` (RSP-QL Def. 23): every
    condition holds. ``previous`` is the previous evaluation instant (for ``all_ended``)."""
    policy = sds.plan.report(window.iri)
    reading = sds.reading(window)
    now = sds.content(window, t, previous)
    before = sds.content(window, t - 1, previous)
    period = policy.period
    return policy.triggers(
        content_changed=content_changed(now, before),
        new_content=new_content(now, before),
        window_closed=closes(window.window, sds.stream(window), t, reading),
        non_empty=bool(now),
        periodic_tick=period is not None and ticks(period, window.window, t, reading),
    )


def _candidates(sds: StreamingDataset, window: NamedWindow, span: TimeRange) -> set[int] | None:
    """A superset of the instants of ``span`` at which ``window`` can report, or ``None``
    when every instant must be visited."""
    policy = sds.plan.report(window.iri)
    if visits_every_instant(policy, window.window):
        return None
    reading = sds.reading(window)
    found: set[int] = set()
    if policy.conditions & {CONTENT_CHANGE, NEW_CONTENT, WINDOW_CLOSE}:
        late = delays(window.window)
        for event in sds.stream(window):
            # an item enters at its time or the instant after (bounds [o, c) cut at t);
            # [NOW] = (t - 1, t] under [o, c] or [o, c) lets it go two instants after it;
            # a past window reads it that much later
            for delay in late:
                t = event.t_start + delay
                found.update((t, t + 1, t + 2))
        for side in boundaries(window.window, reading, span.start, span.until):
            found.update((side, side + 1))
    period = policy.period
    if period is not None:
        begin = origin(window.window, reading)
        k = max(1, (span.start - begin) // period)
        while begin + k * period <= span.until:
            found.add(begin + k * period)
            k += 1
    return {t for t in found if t in span}


def evaluation_instants(
    sds: StreamingDataset,
    start: int | None = None,
    until: int | None = None,
    *,
    every_instant: bool = False,
) -> list[int]:
    """ET over ``[start, until]`` (defaults: :func:`time_range`), in time order (RSP-QL
    Def. 23; module docstring). ``every_instant`` tests every instant of the range, as
    the definition reads, instead of the candidate instants (for tests; slow)."""
    span = time_range(sds, start, until)
    windows = reporting_windows(sds)
    if not windows:
        return sorted({span.start} | {t for t in sds.changes() if t in span})
    candidates: set[int] | None = None if every_instant else set()
    if candidates is not None:
        for window in windows:
            found = _candidates(sds, window, span)
            if found is None or candidates is None:
                candidates = None
            else:
                candidates |= found
    if candidates is None:
        if len(span) > MAX_INSTANTS:
            raise UserError(
                f"the report policy must be tested at each of {len(span)} instants "
                f"(more than {MAX_INSTANTS}): add an event condition (content_change, "
                "new_content, window_close, periodic) or shorten the time range"
            )
        candidates = set(range(span.start, span.until + 1))
    instants: list[int] = []
    previous: int | None = None
    for t in sorted(candidates):
        if any(reports(sds, window, t, previous) for window in windows):
            instants.append(t)
            previous = t
    return instants
