"""An incremental query: a plan evaluated as its events arrive, answers out as soon as they
are final.

The contract every evaluator of the engine keeps (and the differential tests check against
``rsep.semantics.evaluate``):

- :meth:`IncrementalQuery.push` takes events of any of the plan's streams, in batches, in
  non-decreasing time (an event's time is its ``t_end``); events at one instant may be
  spread over several batches;
- :meth:`IncrementalQuery.advance` moves the watermark to ``t``: no event at or before ``t``
  will come any more, so every answer the oracle gives at an instant ``≤ t`` is final and
  returned, in time order, each exactly once;
- :meth:`IncrementalQuery.finish` ends the input: the answers up to ``until`` (default: the
  last instant at which the oracle's answer can change, as
  :func:`rsep.semantics.report.time_range` gives it);
- an evaluator is picklable between calls (Spark keeps it in its state store and
  checkpoints), and bounds its state (``max_runs``, ``max_window_events``: a clear error,
  never an out-of-memory kill).

Results are :mod:`rsep.rdf.results` values, equal to the oracle's
(:func:`rsep.semantics.evaluate`): same times, same bindings, same intervals.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.events import (
    CepSeq,
    CepWindow,
    EventPattern,
    GraphPatternRef,
    Match,
    StreamBgp,
)
from rsep.algebra.plan import EventJoin, Plan
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import Result

if TYPE_CHECKING:
    from rsep.engine.batch import TripleBatch
    from rsep.engine.continuous import TimeVarying
    from rsep.engine.terms import TermDictionary

__all__ = ["BATCH_EVENTS", "IncrementalQuery", "InstantQuery", "drive", "incremental_query"]

BATCH_EVENTS = 1024
"""Events :func:`drive` pushes at a time when it is given events one by one."""


class IncrementalQuery(ABC):
    """A plan bound to its static graphs, evaluated incrementally (module docstring)."""

    dictionary: TermDictionary | None = None
    reads_after: int = 0
    """How long after an instant an event may still change its answer (CQELS-CEP: an
    interval item arrives at its end): :func:`drive` reads that much past ``until``."""
    """The term ids of the :class:`~rsep.engine.batch.TripleBatch` es it takes (``None``: it
    takes event objects only)."""

    def __init__(self, plan: Plan, graphs: Mapping[str, frozenset[Triple]] | None = None) -> None:
        self.plan = plan
        self.graphs: Mapping[str, frozenset[Triple]] = dict(graphs or {})
        self.watermark: int | None = None
        self._finished = False

    @abstractmethod
    def push(self, events: Iterable[Event]) -> list[Result]:
        """Take a batch of events (non-decreasing time); return the answers that became
        final: those of every instant the batch completes (an instant is complete once a
        later event has arrived)."""

    @abstractmethod
    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``; return every answer at an instant ``≤ t`` not yet
        returned, in time order."""

    @abstractmethod
    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the answers still due up to ``until`` (default: the oracle's
        default end of the time range)."""

    def share(self, dictionary: TermDictionary) -> None:
        """Take ``dictionary``, which extends :attr:`dictionary` (every term under the same
        id), in its place: queries restored from checkpoints share one again."""
        self.dictionary = dictionary

    def _check_open(self) -> None:
        """Refuse input after :meth:`finish`."""
        if self._finished:
            raise UserError("the query has finished: no more input")

    def _check_order(self, event: Event) -> None:
        """Refuse an event at or before the watermark (it would change final answers)."""
        if self.watermark is not None and event.t_end <= self.watermark:
            raise UserError(
                f"an event of <{event.stream}> at {event.t_end} arrived after the watermark "
                f"{self.watermark}: events must come in time order (parameter lateness)"
            )


class InstantQuery(IncrementalQuery):
    """An evaluator whose instants are its events' times (SPAseq's NFA, EP-SPARQL's
    detection instants): the events of the latest instant are held until a later event or
    the watermark completes it, then :meth:`_instant` evaluates them together."""

    def __init__(self, plan: Plan, graphs: Mapping[str, frozenset[Triple]] | None = None) -> None:
        super().__init__(plan, graphs)
        self._pending: list[Event] = []
        self._pending_time: int | None = None
        self._last_time: int | None = None

    @abstractmethod
    def _instant(self, t: int, events: list[Event]) -> list[Result]:
        """The answers of instant ``t``, whose events are ``events`` (all of them)."""

    def _hold(self, event: Event) -> list[Result]:
        """Hold ``event`` in its instant; the answers of the held instant if ``event`` is
        later and so completes it. An event before the held instant is refused."""
        t = event.t_end
        floor = self._pending_time if self._pending_time is not None else self._last_time
        if floor is not None and t < floor:
            raise UserError(
                f"an event of <{event.stream}> at {t} came after one at {floor}: events "
                "must come in time order"
            )
        out = self._flush() if self._pending_time is not None and t > self._pending_time else []
        self._pending.append(event)
        self._pending_time = t
        return out

    def _release(self, t: int) -> list[Result]:
        """Move the watermark to ``t``: the held instant, if at or before ``t``, is final."""
        if self.watermark is None or t > self.watermark:
            self.watermark = t
        if self._pending_time is not None and self._pending_time <= t:
            return self._flush()
        return []

    def _flush(self) -> list[Result]:
        """Evaluate the held instant (none: no answers)."""
        if self._pending_time is None:
            return []
        t, events = self._pending_time, self._pending
        self._pending, self._pending_time = [], None
        self._last_time = t
        return self._instant(t, events)


def incremental_query(
    plan: Plan,
    graphs: Mapping[str, frozenset[Triple] | TimeVarying] | None = None,
    *,
    start: int | None = None,
    dictionary: TermDictionary | None = None,
) -> IncrementalQuery:
    """The engine's evaluator of ``plan``, by the language its operators belong to (as
    ``rsep.semantics.evaluate.event_evaluation`` picks the oracle's): SPAseq sequences on
    the columnar engine (:class:`rsep.engine.sequence.SequenceQuery`: negated and optional
    steps, and GPMs that are not basic graph patterns by its exact path); RSEP-QL MATCH
    with its selection and consumption policies (:mod:`rsep.engine.rsepql`), CQELS-CEP
    and EP-SPARQL interval operators (:mod:`rsep.engine.cqelscep`,
    :mod:`rsep.engine.epsparql`), RSP-QL graph patterns over windows on incremental
    window state (:mod:`rsep.engine.continuous`).

    ``graphs`` holds static graphs or time-varying ones (RSP-QL Def. 10), and ``start``
    is the oracle's start of the time range; every evaluator reads both.
    ``dictionary`` is the term ids of the batches it takes, shared with other queries pushed
    the same batches: every evaluator takes batches."""
    if plan.sequences():
        from rsep.engine.sequence import SequenceQuery

        return SequenceQuery(plan, graphs, dictionary, start=start)
    if isinstance(plan.r2r, GraphPatternRef):
        from rsep.engine.continuous import ContinuousWindowQuery

        return ContinuousWindowQuery(plan, graphs, start=start, dictionary=dictionary)
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    kinds = {type(node) for node in root.walk()} if isinstance(root, EventPattern) else set()
    if Match in kinds:
        from rsep.engine.rsepql import RsepqlQuery

        return RsepqlQuery(plan, graphs, start=start, dictionary=dictionary)
    if kinds & {CepSeq, CepWindow}:
        from rsep.engine.cqelscep import CqelscepQuery

        return CqelscepQuery(plan, graphs, start=start, dictionary=dictionary)
    if StreamBgp in kinds:
        from rsep.engine.epsparql import EpsparqlQuery

        return EpsparqlQuery(plan, graphs, start=start, dictionary=dictionary)
    raise UserError(
        f"the engine does not evaluate a plan whose r2r is {type(root).__name__}; "
        "use --engine reference"
    )


def drive(
    query: IncrementalQuery,
    events: Iterable[Event | list[Event] | TripleBatch],
    until: int | None = None,
    *,
    watermark: int | None = None,
    finish: bool = True,
    batch: int = BATCH_EVENTS,
    pushed: Callable[[int], None] | None = None,
) -> Iterator[Result]:
    """The one driver loop (the API, Spark's replay tasks and live state): feed ``query``
    ``events`` in time order, as objects (pushed ``batch`` at a time), lists of objects
    (an application's micro-batches, each pushed as it comes) or
    :class:`~rsep.engine.batch.TripleBatch`es (pushed as they come, to the columnar
    engine), and give its answers as they become final. Before each push the watermark
    moves to just before its first event (every earlier instant is complete); nothing
    after ``until`` is read (an answer at ``t <= until`` reads no later event), but for
    :attr:`IncrementalQuery.reads_after` more. At the
    end the watermark moves to ``watermark`` when given, and with ``finish`` the input
    ends at ``until``. ``pushed`` hears the count of events pushed so far."""
    count = 0
    last: int | None = None
    horizon = None if until is None else until + query.reads_after
    for chunk in _chunks(events, horizon, batch):
        first = _first_time(chunk)
        if last is not None and first > last:
            yield from _upto(query.advance(first - 1), until)
        if isinstance(chunk, list):
            yield from _upto(query.push(chunk), until)
        else:
            yield from _upto(_columnar(query).push(chunk), until)  # type: ignore[arg-type]
        count += len(chunk)
        if pushed is not None:
            pushed(count)
        last = _last_time(chunk)
    if watermark is not None:
        yield from _upto(query.advance(watermark), until)
    if finish:
        yield from query.finish(until)


def _upto(results: Iterable[Result], until: int | None) -> Iterator[Result]:
    """The results at or before ``until`` (events read past it answer later instants)."""
    return iter(results) if until is None else (r for r in results if r.time <= until)


def _chunks(
    events: Iterable[Event | list[Event] | TripleBatch], until: int | None, size: int
) -> Iterator[list[Event] | TripleBatch]:
    """The non-empty pushes of :func:`drive`: events gathered ``size`` at a time, lists
    and batches as they are, all cut at the first event after ``until``."""
    if size < 1:
        raise UserError(f"a push needs at least one event, not {size}")
    chunk: list[Event] = []
    for item in events:
        if isinstance(item, Event):
            if until is not None and item.t_end > until:
                break
            chunk.append(item)
            if len(chunk) >= size:
                yield chunk
                chunk = []
            continue
        if chunk:
            yield chunk
            chunk = []
        if isinstance(item, list):
            kept = [e for e in item if until is None or e.t_end <= until]
            if kept:
                yield kept
            if len(kept) < len(item):
                break
            continue
        if until is not None and len(item) and int(item.event_end.max()) > until:
            head = _before(item, until)
            if len(head):
                yield head
            break
        if len(item):
            yield item
    if chunk:
        yield chunk


def _columnar(query: IncrementalQuery) -> IncrementalQuery:
    """``query``, which takes :class:`~rsep.engine.batch.TripleBatch`es (of its
    dictionary's term ids)."""
    if query.dictionary is None:
        raise TypeError(f"{type(query).__name__} takes events, not batches of term ids")
    return query


def batch_reason(plan: Plan) -> str | None:
    """Why the engine's evaluator of ``plan`` does not take batches of term ids read
    straight from files (``None``: it does): SPAseq sequences on the columnar engine
    (:func:`rsep.engine.sequence.columnar_reason`), RSP-QL graph patterns over windows,
    CQELS-CEP event clauses and EP-SPARQL event patterns do."""
    if plan.sequences():
        from rsep.engine.sequence import columnar_reason

        return columnar_reason(plan)
    if isinstance(plan.r2r, GraphPatternRef):
        return None
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    kinds = {type(node) for node in root.walk()} if isinstance(root, EventPattern) else set()
    if Match not in kinds and kinds & {CepSeq, CepWindow, StreamBgp}:
        return None
    return f"the evaluator of a {type(plan.r2r).__name__} takes events"


def _before(batch: TripleBatch, until: int) -> TripleBatch:
    """The events of ``batch`` at or before ``until``, in time order."""
    from rsep.engine.batch import _split, in_time_order

    ordered = in_time_order([batch])
    return _split(ordered, int(np.searchsorted(ordered.event_end, until, side="right")))[0]


def _first_time(chunk: list[Event] | TripleBatch) -> int:
    """The time of the earliest event of a push."""
    if isinstance(chunk, list):
        return min(event.t_end for event in chunk)
    return int(chunk.event_end.min())


def _last_time(chunk: list[Event] | TripleBatch) -> int:
    """The time of the latest event of a push."""
    if isinstance(chunk, list):
        return max(event.t_end for event in chunk)
    return int(chunk.event_end.max())
