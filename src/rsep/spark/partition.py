"""How a plan's events are spread over the engine's partitions, and what is done to the
answers the partitions give back (plain Python: it runs in Spark tasks and in tests).

Three questions, answered from the plan once on the driver (:func:`choose_scheme`,
:func:`vocabulary`) and per event inside Spark tasks (:class:`Router`):

1. **Which events can matter** (:class:`Vocabulary`). A GPM ``(u, P)`` (SPAseq Def. 7)
   matches an event only if the event's graph holds a triple for each triple pattern of
   ``P``'s required part (its top-level triples block) whose predicate is an IRI: the
   pattern's *atoms*, ``(p, o)`` with ``o`` an IRI or any object. An event of stream ``u``
   that lacks an atom of every GPM on ``u`` can be taken by no step, negated or not, so
   the engine need not see it. Where instants matter (strict contiguity ends a run at the
   streamset's next instant, SPAseq Def. 12; ASK and RStream answer at every instant) the
   event is replaced by an empty one at its time instead of dropped.
2. **How events are partitioned** (:class:`Scheme`). With ``PARTITION BY`` (docs/
   semantics.md, SPAseq choice 9) the sequence is evaluated per key value ``c`` over
   ``Σ_c``, the events of key ``c`` and those without a key; so an event goes to the
   partition that owns each of its keys, an event without a key to every partition. A
   partition's evaluator also sees keys it does not own (an event with two keys), so it
   runs the plan as ``SELECT *`` and keeps only answers of its own keys; the user's
   projection and IStream are applied after (:class:`PartitionOutput`), and the driver
   keeps each projected answer once, at its earliest time. Keys found only through a
   match of the sequence without partitioning (choice 9's second source) would escape
   this routing, so the scheme is used only when every first step binds the key variables
   in its required part (then every match's key is a key of its first event); otherwise,
   and for every plan without ``PARTITION BY``, one partition evaluates everything.
   The keys are found per GPM, on the event alone: by the columnar engine's joins
   (:meth:`rsep.engine.sequence.SequenceQuery.event_keys`, :mod:`rsep.spark.columnar`)
   or by pyoxigraph event by event (:class:`Router`, :mod:`rsep.spark.replay`).
3. **Which partition owns a key**: a CRC-32 of the key's terms in N-Triples form, the same
   in every process (Python's ``hash`` of a string is not).

An RSP-QL graph pattern (or CQELS-CEP's event clauses, or EP-SPARQL WITHIN d) has no key,
but its answer at an instant reads only items of a bounded past (RSP-QL Def. 12-19,
CQELS-CEP Sect. 4.1, EP-SPARQL Sect. 4.2): such a plan is spread over consecutive time ranges
instead (:func:`time_ranges`), each range's task reading the items of its range and of the
window's extent before it (:class:`TimeRanges`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from math import lcm
from typing import TYPE_CHECKING, Any

from pyoxigraph import Triple

from rsep.algebra.events import (
    CepWindow,
    Conjunction,
    ConsumptionPolicy,
    Disjunction,
    EqJoin,
    EventFilter,
    EventPattern,
    Gpm,
    GraphPatternRef,
    Match,
    OptionalSeq,
    Or,
    Strategy,
    StreamBgp,
    Within,
)
from rsep.algebra.gpm import (
    group_of,
    inner_group,
)
from rsep.algebra.nfa import Nfa, StateKind, TransitionKind, When
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, Construct, EventJoin, Plan, Select, SubSelect
from rsep.algebra.r2s import R2S
from rsep.algebra.report import NON_EMPTY, WINDOW_CLOSE, Periodic, ReportPolicy
from rsep.algebra.window import PresentRule, TimeWindow, horizon
from rsep.errors import UserError
from rsep.lang import ast
from rsep.rdf.event import Event
from rsep.rdf.results import Result, SelectResult
from rsep.rdf.sparql import GraphMatcher, Mu

if TYPE_CHECKING:
    pass

__all__ = [
    "Atom",
    "PartitionOutput",
    "Router",
    "Scheme",
    "TimeRanges",
    "Vocabulary",
    "choose_scheme",
    "owner",
    "required_part",
    "time_ranges",
    "vocabulary",
]

Key = tuple[str, ...]
"""A key value: the terms of the key variables, in ``PARTITION BY`` order, as N-Triples."""


@dataclass(frozen=True)
class Atom:
    """A triple an event must hold for a GPM to match it: predicate ``p`` and, when the
    pattern names one, object ``o`` (IRIs in N-Triples form, ``<…>``)."""

    p: str
    o: str | None = None


# What a graph pattern needs ---------------------------------------------------------------


@cache
def required_part(text: str) -> tuple[frozenset[Atom], frozenset[str]]:
    """The atoms and the always-bound variables of a SPARQL group pattern ``{ … }``: those
    of the triple patterns of its top-level triples blocks (and nested plain groups), whose
    every solution needs a matching triple. OPTIONAL, UNION, MINUS, paths, blank-node
    property lists and literals add nothing (conservative: fewer atoms keep more events;
    literals are left out because pyoxigraph compares some by value, not by term)."""
    from rsep.lang import ast

    atoms: set[Atom] = set()
    variables: set[str] = set()

    def group(node: object) -> None:
        elements = getattr(node, "elements", None)
        if elements is None:  # a sub-select or another wrapper: nothing required known
            return
        for element in elements:
            if isinstance(element, ast.TriplesBlock):
                for triples in element.triples:
                    subject = triples.subject
                    for prop in triples.properties:
                        simple = isinstance(prop.verb, ast.Iri | ast.Var)
                        if simple and isinstance(subject, ast.Var):
                            variables.add(subject.name)
                        if isinstance(prop.verb, ast.Var):
                            variables.add(prop.verb.name)
                        for obj in prop.objects:
                            if simple and isinstance(obj, ast.Var):
                                variables.add(obj.name)
                            if isinstance(prop.verb, ast.Iri):
                                o = f"<{obj.value}>" if isinstance(obj, ast.Iri) else None
                                atoms.add(Atom(f"<{prop.verb.value}>", o))
            elif isinstance(element, ast.GroupPattern):
                group(element)

    group(group_of(text))
    return frozenset(atoms), frozenset(variables)


def _gpm_variables(gpm: Gpm) -> frozenset[str]:
    """The variables every solution of a GPM binds (its event part and its ``Graph (v,
    P_D)`` part, SPAseq Def. 15)."""
    found = required_part(gpm.pattern.text)[1]
    if gpm.graph_kb is not None:
        found |= required_part(gpm.graph_kb.pattern.text)[1]
    return found


def _gpms(plan: Plan) -> tuple[Gpm, ...]:
    """Every GPM of the plan, positive or negated, once, in order."""
    return tuple(dict.fromkeys(n for n in plan.r2r.walk() if isinstance(n, Gpm)))


# The prefilter ------------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """What an event needs to reach the engine (module docstring, 1).

    ``patterns`` are the GPMs' atoms by stream (one entry per GPM); events of
    ``open_streams`` (a GPM there needs no atom) always pass; ``streams`` are the plan's
    streams (``None``: every stream is read); with ``markers``, an event that does not pass
    leaves an empty event at its time."""

    patterns: tuple[tuple[str, int, frozenset[Atom]], ...]
    open_streams: frozenset[str]
    streams: frozenset[str] | None
    markers: bool

    def passes(self, event: Event) -> bool:
        """Whether ``event`` may match a GPM (the Python form of the Spark SQL filter)."""
        if self.streams is not None and event.stream not in self.streams:
            return False
        if event.stream in self.open_streams:
            return True
        held = {str(t.predicate) for t in event.graph}
        pairs = {(str(t.predicate), str(t.object)) for t in event.graph}
        return any(
            stream == event.stream
            and all((a.p, a.o) in pairs if a.o is not None else a.p in held for a in atoms)
            for stream, _, atoms in self.patterns
        )


def vocabulary(plan: Plan) -> Vocabulary | None:
    """The prefilter of a SPAseq plan; ``None`` for other plans (a window's content is a
    set of events whose every triple may join, and whose number drives report policies:
    nothing can be left out event by event), nor when stream items are entailed (an event
    may hold an atom only its entailed triples state: ``entailment``)."""
    from rsep.reasoning.regime import entails_items

    plan = apply_profile(plan)
    if not plan.sequences() or entails_items(plan.parameters):
        return None
    patterns: list[tuple[str, int, frozenset[Atom]]] = []
    open_streams: set[str] = set()
    for index, gpm in enumerate(_gpms(plan)):
        atoms = required_part(gpm.pattern.text)[0]
        if atoms:
            patterns.append((gpm.stream, index, atoms))
        else:
            open_streams.add(gpm.stream)
    streams = frozenset(plan.dataset.streams) or None
    return Vocabulary(tuple(patterns), frozenset(open_streams), streams, _instants_matter(plan))


def _instants_matter(plan: Plan) -> bool:
    """Whether an instant with no matching event still changes the answer: a strict
    contiguity edge (a run waiting there dies at the streamset's next instant, SPAseq Def.
    12), or an output at every evaluation instant (ASK, RStream, CONSTRUCT with empty
    answers reported)."""
    if isinstance(plan.form, Ask) or plan.r2s is R2S.RSTREAM:
        return True
    if isinstance(plan.form, Construct) and plan.parameters.output_empty:
        return True
    for nfa in plan.nfas():
        for state in nfa.states:
            if state.kind in (StateKind.START, StateKind.FINAL, StateKind.STOP):
                continue  # a run in x0 took nothing yet: it waits on every event
            edges = nfa.outgoing(state.name)
            if any(e.kind is TransitionKind.TAKE for e in edges) and not any(
                e.kind is TransitionKind.IGNORE for e in edges
            ):
                return True
    return _strict(plan)


def _strict(plan: Plan) -> bool:
    """Whether a strategy of the plan is strict contiguity (belt and braces beside the
    automaton's edges: a Kleene+ step first iterates strictly)."""
    return any(
        getattr(node, "strategy", None) is Strategy.STRICT
        or Strategy.STRICT in getattr(node, "strategies", ())
        for node in plan.r2r.walk()
    )


# The partitioning scheme ---------------------------------------------------------------


@dataclass(frozen=True)
class Scheme:
    """How a plan runs over partitions: ``plan`` is what each partition's evaluator runs
    (the user's plan, or it as ``SELECT *`` when partitioned), ``final`` the user's plan
    (profile applied), ``by`` the key variables (empty: one partition), ``partitions``
    their number, ``within`` the sequence's WITHIN (bounds how late a match is known), and
    ``reason`` why this scheme (for notes and ``explain``)."""

    plan: Plan
    final: Plan
    by: tuple[str, ...]
    partitions: int
    within: int | None
    reason: str
    ranges: TimeRanges | None = None
    """Events spread over time ranges instead (:func:`time_ranges`), one task each."""

    @property
    def partitioned(self) -> bool:
        """Whether events are spread over several partitions by key."""
        return bool(self.by)


def choose_scheme(plan: Plan, partitions: int, *, keys_projected: bool = False) -> Scheme:
    """Partition by the plan's ``PARTITION BY`` keys when that gives the oracle's answers
    exactly (module docstring, 2), else one partition. ``keys_projected``: partition only
    if the SELECT keeps every key variable, so that no two partitions can give one answer
    (live queries, which cannot keep each answer once across partitions and batches)."""
    plan = apply_profile(plan)
    single = Scheme(plan, plan, (), 1, None, "")
    if not plan.sequences():
        return replace(single, reason="not a SPAseq sequence: one partition")
    nfas = plan.nfas()
    if len(nfas) != 1 or not nfas[0].partition_by:
        return replace(single, reason="no PARTITION BY: one partition")
    nfa = nfas[0]
    form = plan.form
    if not isinstance(form, Select) or plan.r2s is not R2S.ISTREAM:
        return replace(single, reason="PARTITION BY with ASK, CONSTRUCT or RStream: one partition")
    by = nfa.partition_by
    if keys_projected and form.variables and not set(by) <= set(form.variables):
        return replace(single, reason="PARTITION BY keys not projected: one partition (live)")
    first = _initial_patterns(nfa)
    if not first or not all(_binds(pattern, by) for pattern in first):
        return replace(
            single,
            reason="PARTITION BY keys not bound by every first step's required part: one partition",
        )
    star = replace(plan, form=Select())
    return Scheme(
        star, plan, by, max(1, partitions), nfa.within, f"PARTITION BY {by}: {partitions}"
    )


@dataclass(frozen=True)
class TimeRanges:
    """A windowed plan over consecutive time ranges, one task each: range ``j`` is
    ``[origin + j·length, origin + (j+1)·length)``, the last one open. Its task reads the
    items of the range and of the ``overlap`` before it (every window's extent the
    answers in the range read, RSP-QL Def. 12, and ``lead``), evaluates from ``lead``
    before it (the evaluation IStream and DStream compare the range's first one with,
    Def. 21) and keeps the answers inside it. With ``intervals`` (CQELS-CEP's interval
    items, a window holds an item from its start, Sect. 4.1) an item also goes to the
    ranges from its start's on, and a task reads the items ending up to ``reach`` after
    its range (the longest item's duration). ``reason`` says why this is exact."""

    lead: int
    overlap: int
    reason: str
    origin: int = 0
    length: int = 1
    count: int = 1
    intervals: bool = False
    reach: int = 0
    accumulates: bool = False
    """The answer is the union of the solutions so far (EP-SPARQL, RSEP-QL Def. 16), each
    new at the instant it ends: a range's task evaluates from its items' start, keeping
    the answers from its range's first instant (nothing to compare with before it)."""

    @staticmethod
    def streams(plan: Plan) -> frozenset[str] | None:
        """The streams whose items the ranges span: those the plan's windows read, else
        the plan's streams (``None``: every stream)."""
        read = frozenset(named.stream for named in plan.dataset.windows)
        return read or frozenset(plan.dataset.streams) or None

    def spanning(self, low: int, high: int, count: int, reach: int = 0) -> TimeRanges:
        """At most ``count`` ranges of equal length over the times ``low..high`` of the
        windows' items, each starting at or before ``high``: the last range's task then
        ends where the whole run does (the last item's time plus the window's horizon),
        not at a start of its own past it. ``reach``: the items' longest duration."""
        count = max(1, min(count, high - low + 1))
        length = -(-(high - low + 1) // count)
        count = -(-(high - low + 1) // length)
        reach = reach if self.intervals else 0
        return replace(self, origin=low, length=length, count=count, reach=reach)

    def bounds(self, part: int) -> tuple[int | None, int | None]:
        """Range ``part``'s first instant and the instant after its last (``None``: the
        first range reaches back to the data's start, the last one to its end)."""
        low = self.origin + part * self.length
        return (None if part == 0 else low), (None if part == self.count - 1 else low + self.length)

    def index(self, t: int) -> int:
        """The range holding instant ``t`` (the first and last reach outwards)."""
        return min(max((t - self.origin) // self.length, 0), self.count - 1)

    def parts_of(self, t: int, t_start: int | None = None) -> range:
        """The ranges an item at ``t`` goes to: its own, and those starting less than
        ``overlap`` after it; with ``intervals``, also those from its start's
        (``t_start``)."""
        first = t if t_start is None or not self.intervals else min(t, t_start)
        return range(self.index(first), self.index(t + self.overlap - 1) + 1)

    def run(
        self, part: int, start: int | None, until: int | None
    ) -> tuple[int | None, int | None, int | None]:
        """How range ``part``'s task runs a query from ``start`` to ``until``: the start
        and end it evaluates over, and the first instant whose answers it keeps
        (``None``: all). From a ``start`` after the range's lead, the task starts there
        too (the whole run's first instant compares with ∅, RSP-QL Def. 21)."""
        first, after = self.bounds(part)
        begins = start if first is None else first - self.lead
        if start is not None and begins is not None:
            begins = max(begins, start)
        if self.accumulates and first is not None:
            begins = None
        ends = until
        if after is not None:
            ends = after - 1 if until is None else min(until, after - 1)
        return begins, ends, first

    def reads(self, part: int, until: int | None) -> int | None:
        """The last item time range ``part``'s task reads (``None``: all): the range's
        end, and ``reach`` more for interval items that start by it."""
        _, ends, _ = self.run(part, None, until)
        if ends is None or ends == until:
            return ends
        return ends + self.reach if until is None else min(until, ends + self.reach)

    def keep(self, part: int, answers: Iterable[Result], until: int | None) -> Iterator[Result]:
        """The answers (in time order) of range ``part``'s task, run as :meth:`run` and
        :meth:`reads` say, that are inside its range."""
        _, ends, first = self.run(part, None, until)
        for answer in answers:
            if ends is not None and answer.time > ends:
                return
            if first is None or answer.time >= first:
                yield answer


def time_ranges(plan: Plan) -> TimeRanges | str:
    """How an RSP-QL graph pattern, RSEP-QL's MATCH without consumption, CQELS-CEP's event
    clauses (:func:`_cqelscep_ranges`) over windows, or EP-SPARQL WITHIN d
    (:func:`_epsparql_ranges`) is spread over time ranges, or why it runs in one task.
    For RSP-QL and RSEP-QL, exact when the answer at ``t`` and whether ``t`` is an
    evaluation instant read only the windows' items in ``(t - width - slide, t]`` and
    the static graphs: time windows (RSP-QL Def. 12), report policies of window close,
    non-empty content and periodic conditions (Def. 23; content change compares with the
    instant before, arbitrarily far back); under IStream and DStream also evaluation
    instants that do not depend on the data (window close, periodic), so that the
    evaluation before a range is within ``lead`` of it (Def. 21); and no answer at an
    instant without items (a range no item reaches has no task): every reporting window
    reports only when non-empty, or the form is not ASK, empty relations are not
    reported and no solution exists without a window's item."""
    plan = apply_profile(plan)
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    if isinstance(root, EventPattern) and any(isinstance(n, CepWindow) for n in root.walk()):
        return _cqelscep_ranges(plan, root)
    if (
        isinstance(root, EventPattern)
        and not isinstance(root, Match)
        and any(isinstance(n, StreamBgp) for n in root.walk())
    ):
        return _epsparql_ranges(plan, root)
    if isinstance(root, Match):  # RSEP-QL: MATCH over the windows' contents at t (Sect. 4)
        consumption = root.consumption or plan.parameters.consumption
        if consumption is not ConsumptionPolicy.NONE:
            return (
                f"RSEP-QL consumption {consumption}: what one evaluation consumes changes "
                "every later one (Sect. 4.4)"
            )
    elif not isinstance(r2r, GraphPatternRef):
        return "not an RSP-QL graph pattern or RSEP-QL MATCH over windows"
    windows = plan.dataset.windows
    if not windows:
        return "no window"
    params = plan.parameters
    own = [named for named in windows if named.report is not None]
    reporting = own or list(windows)
    lead = 0
    allowed = {WINDOW_CLOSE, NON_EMPTY} if plan.r2s is R2S.RSTREAM else {WINDOW_CLOSE}
    for named in windows:
        if type(named.window) is not TimeWindow:
            return (
                f"window <{named.iri}> is not a time window ({named.window.describe()}): its "
                "content at an instant depends on items of any age"
            )
        if (named.present or params.present) is PresentRule.ALL_ENDED:
            return (
                f"window <{named.iri}> reads every window ended since the previous "
                "evaluation (present rule all_ended), which may be arbitrarily far back"
            )
    for named in reporting:
        policy: ReportPolicy = named.report or params.report
        fixed = {c for c in policy.conditions if not isinstance(c, Periodic)}
        if not fixed <= allowed:
            what = "window close, non-empty content" if plan.r2s is R2S.RSTREAM else "window close"
            return (
                f"report policy {policy} of <{named.iri}>: only {what} and periodic conditions "
                f"decide an instant from the items before it alone under {plan.r2s}"
            )
        if plan.r2s is not R2S.RSTREAM:
            assert isinstance(named.window, TimeWindow)
            gaps = [named.window.slide] if WINDOW_CLOSE in fixed else []
            if policy.period is not None:
                gaps.append(policy.period)
            gap = lcm(*gaps)
            lead = max(lead, gap)
    # a range no item reaches has no task: it must have no answer either, as when every
    # reporting window reports only when non-empty, or when nothing answers without an item
    if not all(NON_EMPTY in (n.report or params.report).conditions for n in reporting):
        if _answers_without_items(plan):
            return _NO_ITEM_ANSWERS
        if not _needs_window_item(plan):
            return (
                "a solution may need no window's item (a static graph alone, OPTIONAL, "
                "UNION, a sub-select): every instant of a range without items would be "
                "evaluated"
            )
    extent = max(horizon(w.window) for w in windows)
    return TimeRanges(
        lead,
        lead + extent + 1,
        f"time ranges: each task reads its range and the {lead + extent + 1} before it "
        "(the windows' width, slide and delay"
        + (
            ", and the evaluation before the range, which IStream/DStream compare with)"
            if lead
            else ")"
        ),
    )


_NO_ITEM_ANSWERS = (
    "an ASK, or an empty relation reported (output.empty), answers at instants with no "
    "item: every instant of a range without items would be evaluated"
)


def _answers_without_items(plan: Plan) -> bool:
    """Whether the plan answers at an instant where nothing matched (ASK's false, an empty
    relation reported): a range no item reaches, which has no task, would then miss it."""
    return isinstance(plan.form, Ask) or plan.parameters.output_empty


def _cqelscep_ranges(plan: Plan, clauses: EventPattern) -> TimeRanges | str:
    """CQELS-CEP's event clauses over time ranges (:func:`time_ranges`). Exact when every
    window is ``[RANGE T]`` (or ``[NOW]``): the content at ``t`` is the items meeting
    ``[t - T, t]``, cut (Sect. 4.1), and the evaluation instants are where an item's cut
    changes (within ``[t1, t2 + T + 1]``), so the answer is constant between them; an
    answer needs a window's item (every operator of Sect. 4.2 keeps a positive one), so
    an instant more than ``T + 1`` after every item answers ∅ and the evaluation before a
    range's first is within ``lead = T + 1`` of it or compares with ∅ (RSP-QL Def. 21);
    a task reads the items meeting ``[first - lead - T - 1, …]``."""
    from rsep.algebra.window import interval_width

    widths = []
    for node in clauses.walk():
        if isinstance(node, CepWindow):
            width = interval_width(node.window)
            if width is None:
                return (
                    f"window {node.name} is [ALL]: its content at an instant depends on items "
                    "of any age"
                )
            widths.append(width)
    if _answers_without_items(plan):
        return _NO_ITEM_ANSWERS
    modifiers = plan.modifiers
    if modifiers is not None and modifiers.grouped and not modifiers.group_by:
        return (
            "an aggregate without GROUP BY answers with no item (COUNT 0): every instant of a "
            "range without items would be evaluated"
        )
    width = max(widths)
    lead = width + 1
    overlap = lead + width + 2
    return TimeRanges(
        lead,
        overlap,
        f"time ranges: each task reads its range and the {overlap} instants before it (the "
        f"windows' RANGE {width} twice, and the evaluation before the range, which IStream/"
        "DStream compare with), and the interval items that start by its end",
        intervals=True,
    )


def _epsparql_ranges(plan: Plan, pattern: EventPattern) -> TimeRanges | str:
    """EP-SPARQL over time ranges (:func:`time_ranges`). Its answer at ``T`` adds the
    solutions ending at ``T``, each read from occurrences ending by ``T`` (timewise
    monotonicity, Sect. 4.2); when every solution lasts at most ``d`` (:func:`extent`:
    ETALIS's ``WITHIN d``), they start after ``T - d``, so a range's task needs the items
    of its range and of the ``d`` before it. Exact under IStream (RStream repeats every
    solution so far, DStream reports none), without solution modifiers (they read the
    whole answer so far), other queries' rules (their solutions need not be bounded), a
    pattern beside it over a graph (a time-varying one joins every solution so far again
    where it changes) or OPTIONALSEQ (an optional solution of any age decides whether a
    mandatory one is alone, which WITHIN does not bound). From a ``start``, the first
    instant from it reports every solution before it (Def. 16's union), which may fall in
    any range: such a run is not spread (``rsep.spark.replay._over_time_ranges`` checks
    :attr:`TimeRanges.accumulates`)."""
    d = extent(pattern)
    if d is None:
        return (
            "EP-SPARQL without WITHIN over the whole pattern: a solution may join occurrences "
            "of any age"
        )
    if plan.r2s is not R2S.ISTREAM:
        return f"EP-SPARQL under {plan.r2s}: the answer at an instant repeats every solution so far"
    if _answers_without_items(plan):
        return _NO_ITEM_ANSWERS
    if plan.modifiers is not None:
        return "solution modifiers read the whole answer so far (Def. 16's union)"
    if plan.rules:
        return "other queries' rules feed the closure with solutions of any extent"
    if isinstance(plan.r2r, EventJoin):
        return (
            "a graph pattern beside the event pattern: where its graph changes (RSP-QL Def. "
            "10) every solution so far is joined again, however old"
        )
    if any(isinstance(n, OptionalSeq) for n in pattern.walk()):
        return (
            "OPTIONALSEQ: an optional solution of any age decides whether a mandatory one is "
            "alone (Sect. 4.2)"
        )
    return TimeRanges(
        0,
        d + 1,
        f"time ranges: each task reads its range and the {d + 1} before it (every solution "
        f"lasts at most WITHIN {d} and is new at its end)",
        accumulates=True,
    )


def extent(pattern: EventPattern) -> int | None:
    """The longest a solution of an EP-SPARQL pattern can last (``None``: unbounded):
    ``WITHIN d`` bounds it (ETALIS), a FILTER or sub-select keeps its operand's, a union
    the longer of its operands', an EQUALS join (one interval) the shorter."""
    if isinstance(pattern, Within):
        inner = extent(pattern.pattern)
        return pattern.duration if inner is None else min(inner, pattern.duration)
    if isinstance(pattern, EventFilter | SubSelect):
        return extent(pattern.pattern)
    if isinstance(pattern, Or):
        left, right = extent(pattern.left), extent(pattern.right)
        return None if left is None or right is None else max(left, right)
    if isinstance(pattern, EqJoin):
        bounds = [b for b in (extent(pattern.left), extent(pattern.right)) if b is not None]
        return min(bounds) if bounds else None
    return None


def _needs_window_item(plan: Plan) -> bool:
    """Whether the plan's group pattern joins a block of triples read from windows only:
    a ``GRAPH <w>`` of a named window, or the default graph when only windows make it; or
    is RSEP-QL's MATCH."""
    if not isinstance(plan.r2r, GraphPatternRef):
        return True  # MATCH: an event mapping is made of items (RSEP-QL Sect. 4.2)
    # a sub-select without aggregates answers only where its pattern does
    where = inner_group(group_of("{\n" + plan.r2r.text + "\n}"), lambda sub: not _aggregates(sub))
    if not isinstance(where, ast.GroupPattern):
        return False
    ds = plan.dataset
    named = {w.iri for w in ds.windows} - set(ds.default_windows)
    for element in where.elements:
        if isinstance(element, ast.TriplesBlock) and not ds.default_graphs and ds.default_windows:
            return True
        if (
            isinstance(element, ast.Graph)
            and isinstance(element.name, ast.Iri)
            and element.name.value in named
            and isinstance(element.pattern, ast.GroupPattern)
            and any(isinstance(e, ast.TriplesBlock) for e in element.pattern.elements)
        ):
            return True
    return False


def _aggregates(sub: ast.SubSelect) -> bool:
    """Whether a sub-select may answer where its pattern has no solution: an aggregate
    without GROUP BY (one group, ``COUNT`` 0; with GROUP BY no solution makes no group,
    SPARQL 1.1 sec. 18.5.1) or VALUES."""
    if sub.values is not None:
        return True
    if sub.group_by:
        return False
    nodes = [*sub.select.walk(), *(n for h in sub.having for n in h.walk())]
    return any(isinstance(n, ast.Aggregate) for n in nodes)


def _initial_patterns(nfa: Nfa) -> list[EventPattern]:
    """The patterns a run that took no event waits for: the ``TAKE`` edges of ``x0`` and
    of the states its ``PROCEED`` edges reach (an optional first step read as absent)."""
    stop = {s.name for s in nfa.states if s.kind is StateKind.STOP}
    seen = [nfa.start.name]
    todo = list(seen)
    while todo:
        for edge in nfa.outgoing(todo.pop()):
            proceed = edge.kind is TransitionKind.PROCEED and edge.guard.when is When.ALWAYS
            if proceed and edge.target not in seen:
                seen.append(edge.target)
                todo.append(edge.target)
    found: list[EventPattern] = []
    for name in seen:
        for edge in nfa.outgoing(name):
            pattern = edge.guard.pattern
            take = edge.kind is TransitionKind.TAKE and edge.target not in stop
            if take and pattern is not None and pattern not in found:
                found.append(pattern)
    return found


def _binds(pattern: EventPattern, by: tuple[str, ...]) -> bool:
    """Whether every pair of ``pattern`` taken alone binds all of ``by`` on one event."""
    if isinstance(pattern, Gpm):
        return set(by) <= _gpm_variables(pattern)
    if isinstance(pattern, Disjunction):
        return all(_binds(operand, by) for operand in pattern.operands)
    if isinstance(pattern, Conjunction):
        return any(_binds(operand, by) for operand in pattern.operands)
    return False


def owner(key: Key, partitions: int) -> int:
    """The partition that owns ``key`` (module docstring, 3)."""
    return zlib.crc32("\x00".join(key).encode()) % partitions


# Routing events -------------------------------------------------------------------------


@dataclass
class Router:
    """The keys of events and the partitions they go to (module docstring, 2): an event's
    keys are the key variables in the solutions of each GPM of its stream on it, alone
    (SPAseq choice 9; ``SequenceQuery.event_keys`` computes them the same way)."""

    scheme: Scheme
    graphs: Mapping[str, Any]
    _matcher: GraphMatcher | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "graphs": self.graphs, "_matcher": None}

    @property
    def matcher(self) -> GraphMatcher:
        """The pyoxigraph matcher, made in the process that uses it."""
        if self._matcher is None:
            self._matcher = GraphMatcher()
        return self._matcher

    def keys(self, event: Event) -> frozenset[Key]:
        """The key values of ``event`` (empty: no key)."""
        by = self.scheme.by
        found: set[Key] = set()
        for gpm in _gpms(self.scheme.plan):
            if gpm.stream != event.stream:
                continue
            for mu in self._solutions(gpm, event):
                if all(name in mu for name in by):
                    found.add(tuple(str(mu[name]) for name in by))
        return frozenset(found)

    def parts(self, event: Event) -> list[int]:
        """The partitions ``event`` goes to: the owners of its keys, or all."""
        if not self.scheme.partitioned:
            return [0]
        keys = self.keys(event)
        if not keys:
            return list(range(self.scheme.partitions))
        return sorted({owner(key, self.scheme.partitions) for key in keys})

    def _solutions(self, gpm: Gpm, event: Event) -> list[Mu]:
        """``⟦P⟧_G`` on the event alone, joined with ``⟦P_D⟧`` on the knowledge base
        (SPAseq Def. 7, 15)."""
        found = self.matcher.match(gpm.pattern, event.graph)
        if gpm.graph_kb is None or not found:
            return found
        kb = self.graphs.get(gpm.graph_kb.graph)
        if kb is None:
            raise UserError(
                f"GPM {gpm.name} reads the knowledge base graph <{gpm.graph_kb.graph}>, which "
                "the dataset does not hold (SPAseq Definition 15: Γ(v) must name a graph of D)"
            )
        return [
            nu
            for partial in found
            for nu in self.matcher.match(gpm.graph_kb.pattern, _triples(kb), partial)
        ]


def _triples(graph: Any) -> frozenset[Triple]:
    return graph if isinstance(graph, frozenset) else frozenset(graph)


# What a partition gives back -----------------------------------------------------------


class PartitionOutput:
    """A partition's answers made the user's (module docstring, 2): the ``SELECT *``
    answers of keys the partition owns, through the user's SELECT expressions, projection
    and IStream (:class:`rsep.engine.projection.Output`). Without partitioning, the
    answers pass unchanged."""

    def __init__(self, scheme: Scheme, part: int) -> None:
        from rsep.engine.projection import Output

        self.scheme = scheme
        self.part = part
        self._output = Output(scheme.final, answer_set=True) if scheme.partitioned else None
        self._matcher = GraphMatcher()

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the matcher (pyoxigraph stores do not pickle): live queries keep
        this in Spark's state store."""
        return {name: value for name, value in self.__dict__.items() if name != "_matcher"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._matcher = GraphMatcher()

    def take(self, results: Iterable[Result]) -> list[Result]:
        """The answers among ``results`` (in time order) that this partition reports."""
        if self._output is None:
            return list(results)
        out: list[Result] = []
        batch: list[tuple[Mu, int, int]] = []
        time: int | None = None
        for result in results:
            if not isinstance(result, SelectResult) or result.interval is None:
                raise TypeError("a partitioned plan answers SELECT results with intervals")
            key = tuple(str(result.bindings[name]) for name in self.scheme.by)
            if owner(key, self.scheme.partitions) != self.part:
                continue
            if time is not None and result.time != time:
                out += self._instant(time, batch)
                batch = []
            time = result.time
            batch.append((Mu(result.bindings), *result.interval))
        if time is not None:
            out += self._instant(time, batch)
        return out

    def _instant(self, t: int, answers: list[tuple[Mu, int, int]]) -> list[Result]:
        assert self._output is not None
        found = self._output.instant(t, answers, self._matcher)
        # a match is known at its last event or, past a negated last step, at the end of
        # its window: at most WITHIN after it; nothing older can be reported again
        self._output.forget(t - self.scheme.within if self.scheme.within else t)
        return found
