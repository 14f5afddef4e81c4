"""Report policies: when a continuous query is evaluated (RSP-QL Def. 23, after SECRET).

RSP-QL does not list the evaluation instants ET of a query; it states a *policy*, "a
combination of one or more boolean conditions (shortly strategy, according to the SECRET
model)", and ET is the set of instants at which the policy is satisfied. SECRET (Botan et
al., PVLDB 2010) names four conditions, kept here under their names:

- ``CONTENT_CHANGE`` (CC): the window reports if its content changes;
- ``NEW_CONTENT``: the window reports if an item enters its content: the reading of CC in
  RSP-QL's comparison ("every time new statements enter the window"), in the CSR-Bench
  oracle and in YABench (docs/semantics.md); unlike CC it ignores items that leave;
- ``WINDOW_CLOSE`` (WC): the window reports if the active window closes;
- ``NON_EMPTY`` (NC): the window reports only if the active window is not empty;
- ``PERIODIC(period)`` (P): the window reports at regular intervals.

The conditions of a policy are combined by conjunction, as RSP-QL Example 9 writes
``P = WC[W2] ∧ NC[W2]``: :meth:`ReportPolicy.triggers` is true at an instant where every
condition holds. (The word *strategy* is SECRET's; rsep keeps it for SPAseq's event selection
strategies, :class:`rsep.algebra.events.Strategy`, and calls SECRET's strategies
*conditions*.)

Text form: condition names joined by ``+`` (or ``,``, as ``PRAGMA window.report`` writes
them), e.g. ``window_close+non_empty`` or ``content_change, periodic(5s)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from rsep.rdf.time import format_duration, parse_duration

__all__ = [
    "CONTENT_CHANGE",
    "EVENT_CONDITIONS",
    "NEW_CONTENT",
    "NON_EMPTY",
    "PERIODIC",
    "WINDOW_CLOSE",
    "Condition",
    "Periodic",
    "ReportCondition",
    "ReportPolicy",
]


class Condition(Enum):
    """The SECRET conditions without a parameter (RSP-QL Def. 23 and the list after it), and
    ``NEW_CONTENT``, the arrival-only reading of content change."""

    CONTENT_CHANGE = "content_change"
    NEW_CONTENT = "new_content"
    WINDOW_CLOSE = "window_close"
    NON_EMPTY = "non_empty"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Periodic:
    """SECRET's periodic condition P: the window reports every ``period`` ms (RSP-QL Def. 23)."""

    period: int

    def __post_init__(self) -> None:
        if self.period <= 0:
            raise ValueError(f"a periodic report needs a positive period, not {self.period} ms")

    def __str__(self) -> str:
        return f"periodic({format_duration(self.period)})"


ReportCondition = Condition | Periodic

CONTENT_CHANGE = Condition.CONTENT_CHANGE
NEW_CONTENT = Condition.NEW_CONTENT
WINDOW_CLOSE = Condition.WINDOW_CLOSE
EVENT_CONDITIONS = frozenset({CONTENT_CHANGE, NEW_CONTENT, WINDOW_CLOSE})
"""The conditions that are events (they hold at an instant, not over a stretch of time)."""
NON_EMPTY = Condition.NON_EMPTY
PERIODIC = Periodic

_PERIODIC = re.compile(r"periodic\s*\(\s*(.*?)\s*\)", re.IGNORECASE)
_SPLIT = re.compile(r"\s*[+,]\s*|\s+")
_ORDER = {
    Condition.CONTENT_CHANGE: 0,
    Condition.NEW_CONTENT: 1,
    Condition.WINDOW_CLOSE: 2,
    Condition.NON_EMPTY: 3,
}


def _key(condition: ReportCondition) -> tuple[int, int]:
    if isinstance(condition, Periodic):
        return (4, condition.period)
    return (_ORDER[condition], 0)


@dataclass(frozen=True)
class ReportPolicy:
    """A report policy: a non-empty set of SECRET conditions, all of which must hold
    (RSP-QL Def. 23; Example 9's ``P = WC ∧ NC``).

    >>> str(ReportPolicy.parse("non_empty, window_close"))
    'window_close+non_empty'
    """

    conditions: frozenset[ReportCondition]

    ALLOWED: ClassVar[str] = (
        "content_change, new_content, window_close, non_empty, periodic(<duration>)"
    )

    def __post_init__(self) -> None:
        if not self.conditions:
            raise ValueError(f"a report policy needs at least one condition ({self.ALLOWED})")
        for condition in self.conditions:
            if not isinstance(condition, Condition | Periodic):
                raise TypeError(f"not a report condition: {condition!r}")
        if sum(isinstance(c, Periodic) for c in self.conditions) > 1:
            raise ValueError("a report policy has at most one periodic condition")

    @classmethod
    def of(cls, *conditions: ReportCondition) -> ReportPolicy:
        """The policy made of ``conditions``."""
        return cls(frozenset(conditions))

    @classmethod
    def parse(cls, text: str, unit_ms: int = 1) -> ReportPolicy:
        """Read ``window_close+non_empty``, ``content_change, non_empty``, ``periodic(5s)``…

        Names are case-insensitive and joined by ``+``, ``,`` or blanks; a periodic period
        is a duration (``5s``, ``PT5S``, ``5000ms``; a bare number counts ``unit_ms``-long
        units, milliseconds unless the caller says otherwise).
        Raises :class:`ValueError` naming the allowed conditions.
        """
        conditions: list[ReportCondition] = []
        rest = text.strip()
        for match in _PERIODIC.finditer(rest):
            try:
                conditions.append(Periodic(parse_duration(match.group(1), unit_ms)))
            except ValueError as exc:
                raise ValueError(f"report policy {text!r}: {exc}") from None
        rest = _PERIODIC.sub(" ", rest)
        for word in _SPLIT.split(rest.strip()):
            if not word:
                continue
            try:
                conditions.append(Condition(word.lower()))
            except ValueError:
                raise ValueError(
                    f"report policy {text!r}: unknown condition {word!r} (allowed: {cls.ALLOWED})"
                ) from None
        if not conditions:
            raise ValueError(f"empty report policy {text!r} (allowed: {cls.ALLOWED})")
        return cls(frozenset(conditions))

    def __str__(self) -> str:
        return "+".join(str(c) for c in sorted(self.conditions, key=_key))

    def __contains__(self, condition: object) -> bool:
        return condition in self.conditions

    @property
    def period(self) -> int | None:
        """The period of the periodic condition, in ms, or ``None``."""
        for condition in self.conditions:
            if isinstance(condition, Periodic):
                return condition.period
        return None

    def triggers(
        self,
        *,
        content_changed: bool,
        window_closed: bool,
        non_empty: bool,
        periodic_tick: bool = False,
        new_content: bool = False,
    ) -> bool:
        """Whether this policy is satisfied at an instant (RSP-QL Def. 23: ``t ∈ ET_P``
        iff P is satisfied at t), given what holds of the window there."""
        holds = {
            Condition.CONTENT_CHANGE: content_changed,
            Condition.NEW_CONTENT: new_content,
            Condition.WINDOW_CLOSE: window_closed,
            Condition.NON_EMPTY: non_empty,
        }
        return all(
            periodic_tick if isinstance(condition, Periodic) else holds[condition]
            for condition in self.conditions
        )
