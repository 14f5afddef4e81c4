"""A continuous RSP-QL query over windows, evaluated incrementally (RSP-QL Def. 17-24).

:class:`ContinuousWindowQuery` runs a plan whose r2r is a SPARQL graph pattern
(:class:`~rsep.algebra.events.GraphPatternRef`) over windows and graphs, as events arrive:

1. each arriving item goes into its stream's buffer (:mod:`rsep.engine.window`: times and
   the items' triples as term ids, a batch of ids appended at once) and makes its
   candidate instants known (:class:`~rsep.engine.report.Candidates`);
2. once the watermark passes an instant (and every item it reads has arrived), the instant
   is decided: it is an evaluation instant when a reporting window's policy holds there
   (RSP-QL Def. 23; :class:`~rsep.engine.report.Reporter`); for time-based windows under
   ``window_close`` and ``non_empty`` policies every candidate instant up to the watermark
   is decided at once, as arrays;
3. at the evaluation instants the windows' contents make the instantaneous dataset (Def.
   18) and the group pattern is evaluated over it, as SPARQL 1.1 defines it: by the
   columnar solver (:mod:`rsep.engine.dataset`) at all the instants of a push at once, or,
   for a pattern it does not take (:attr:`ContinuousWindowQuery.exact_reason`), by
   pyoxigraph over one store updated by the items that entered and left each window
   (:class:`InstantDataset`), instant by instant;
4. the streaming operator compares each answer with the previous evaluation's (Def. 20-22,
   :meth:`rsep.algebra.r2s.R2S.apply`, the plan's own) and the query form formats it
   (Def. 24), with ``output.empty`` deciding whether an empty answer is reported;
5. the items no future content can read are evicted.

The answers are the oracle's (``rsep.semantics.evaluate``) exactly: the same evaluation
instants, the same solutions, the same streamed results (tests/engine, differential
tests). The oracle's range is not known while a stream goes on, so the engine reads it so:
the range starts at the first item a window reads (before it, nothing is decided);
``advance`` makes every instant up to the watermark part of it (the oracle's answers with
``until`` at least the watermark); ``finish`` ends it where the oracle's default range
ends, or at the watermark when that is later.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from itertools import pairwise
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QuerySolutions,
    Store,
    Triple,
)

from rsep.algebra.events import GraphPatternRef
from rsep.algebra.params import Entailment, Parameters
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, Construct, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.algebra.report import CONTENT_CHANGE, NEW_CONTENT, NON_EMPTY
from rsep.algebra.window import NowWindow, PresentRule, TimeWindow
from rsep.engine.batch import TripleBatch, batches_of, in_time_order
from rsep.engine.dataset import Group, InstantSolver, compile_group, spans_of
from rsep.engine.query import IncrementalQuery
from rsep.engine.report import Candidates, Reporter, reporting_windows
from rsep.engine.terms import TermDictionary
from rsep.engine.window import (
    FOREVER,
    Ranges,
    Reading,
    StreamBuffer,
    WindowState,
    difference,
    horizon,
    interval_ends,
    origin,
    reads_up_to,
)
from rsep.errors import UserError
from rsep.rdf.event import Event
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult
from rsep.rdf.sparql import LiteralForms, instantiate
from rsep.rdf.terms import RDF_LANG_STRING, XSD_STRING, Term
from rsep.reasoning.closure import entail_events
from rsep.reasoning.regime import MaterialisedGraph, background, engine_closure

__all__ = ["ContinuousWindowQuery", "InstantDataset", "TimeVarying", "background_source"]

_EVENTS_AS_BATCH = 16
"""Events pushed as objects at once from which they go in as one batch of ids."""

_INSTANTS_AT_ONCE = 4096
"""The most evaluation instants the columnar solver takes at once (its tables hold each
window's content at each of them)."""

_ITEMS_AT_ONCE = 1 << 20
"""The most window items (summed over the pending instants' contents) evaluated at once:
the tables of a flush grow with them."""

_SPAN_AT_ONCE = 1 << 20
"""The longest stretch of time whose candidate instants are decided at once (ms)."""

_ON_CONTENT = frozenset({NON_EMPTY, CONTENT_CHANGE, NEW_CONTENT})
"""Report conditions that never hold while a window stays empty (RSP-QL Def. 23)."""


@runtime_checkable
class TimeVarying(Protocol):
    """A time-varying graph (RSP-QL Def. 10): ``at(t)`` is the instantaneous graph, and
    ``changes()`` the instants at which it may differ from the instant before
    (``rsep.semantics.graph.TimeVaryingGraph`` is one)."""

    def at(self, t: int) -> frozenset[Triple]:
        """The instantaneous graph at ``t``."""
        ...

    def changes(self) -> frozenset[int]:
        """The instants at which the graph may change."""
        ...


GraphSource = AbstractSet[Triple] | TimeVarying
"""A static graph (a set of triples) or a time-varying graph."""


class _Row(dict[str, str]):
    """One solution mapping as N-Triples text by variable (the form R2S compares; empty for
    the previous answer of a SELECT under RStream, which compares none), with the terms
    themselves (``terms``) for the results."""

    terms: dict[str, Term]


# The instantaneous dataset ------------------------------------------------------------------


class InstantDataset:
    """The instantaneous RDF dataset ``SDS(t)`` (RSP-QL Def. 14, 18) as one pyoxigraph store,
    kept up to date by what enters and leaves each window and graph between evaluations.

    The default graph is the union of the default graphs and the snapshots of the windows
    in ``default_windows``; every other window and named graph is the named graph of its
    IRI. A snapshot is the union of its items' graphs (RSEP-QL Sect. 4.1), so each triple of
    each graph is counted and stored while its count is positive.

    pyoxigraph normalises literals (oxigraph issue #526): the literals of the dataset are
    counted by stored form too, so that a result literal comes back as the data wrote it
    and a dataset holding two literals the store cannot tell apart is refused, as the oracle
    does (docs/semantics.md, "pyoxigraph normalises literals"). The store keeps removed
    quads (its versioning), so it is rebuilt when removals outnumber the quads it holds.
    Not pickled: an unpickled dataset is empty and the next update loads everything.
    """

    def __init__(self, plan: Plan, forms: LiteralForms) -> None:
        dataset = plan.dataset
        self._defaults = frozenset(dataset.default_windows)
        self._default_graphs = tuple(dataset.default_graphs)
        self._named = (
            *dataset.named_graphs,
            *(w.iri for w in dataset.windows if w.iri not in self._defaults),
        )
        self._forms = forms
        self._reset()

    @property
    def defaults(self) -> frozenset[str]:
        """The windows whose snapshots are part of the default graph."""
        return self._defaults

    def _reset(self) -> None:
        self._store = Store()
        for iri in self._named:
            self._store.add_graph(NamedNode(iri))
        self._nodes: dict[str, NamedNode | DefaultGraph] = {"": DefaultGraph()}
        self._counts: dict[Quad, int] = {}
        self._windows: dict[str, tuple[Ranges, dict[int, list[Quad]]]] = {}
        self._graphs: dict[tuple[str, str], frozenset[Triple]] = {}
        self._literals: Counter[Literal] = Counter()
        self._by_form: dict[Literal, set[Literal]] = {}
        self._clashes: set[Literal] = set()
        self._removed = 0
        self._fresh = True  # nothing loaded yet: the first update changes the dataset

    def __getstate__(self) -> dict[str, Any]:
        return {
            "_defaults": self._defaults,
            "_default_graphs": self._default_graphs,
            "_named": self._named,
            "_forms": self._forms,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    def update(
        self,
        windows: Iterable[tuple[WindowState, Ranges]],
        graphs: Mapping[str, frozenset[Triple]],
    ) -> bool:
        """Make the store hold each window's content (positions of its buffer) and each
        graph's instantaneous graph: every quad that left is removed before any that
        entered is added (two windows may share the default graph). Return whether the
        dataset changed."""
        leaving: list[list[Quad]] = []
        entering: list[list[Quad]] = []
        for state, now in windows:
            node = self._node("" if state.iri in self._defaults else state.iri)
            before, loaded = self._windows.get(state.iri, ((), {}))
            if before == now:
                continue
            leaving.extend(loaded.pop(position) for position in difference(before, now))
            for position in difference(now, before):
                graph = state.buffer.event(position).graph
                quads = [Quad(x.subject, x.predicate, x.object, node) for x in graph]
                loaded[position] = quads
                entering.append(quads)
            self._windows[state.iri] = (now, loaded)
        for iri, graph in graphs.items():
            targets = [""] if iri in self._default_graphs else []
            targets += [iri] if iri in self._named else []
            for target in targets:
                old = self._graphs.get((target, iri), frozenset())
                if old is graph:
                    continue
                node = self._node(target)
                leaving.append([Quad(x.subject, x.predicate, x.object, node) for x in old - graph])
                entering.append([Quad(x.subject, x.predicate, x.object, node) for x in graph - old])
                self._graphs[(target, iri)] = graph
        counts, store = self._counts, self._store
        for quads in leaving:
            for quad in quads:
                count = counts[quad]
                if count > 1:
                    counts[quad] = count - 1
                    continue
                del counts[quad]
                store.remove(quad)
                self._removed += 1
                if isinstance(quad.object, Literal):
                    self._leave(quad.object)
        added: list[Quad] = []
        for quads in entering:
            for quad in quads:
                count = counts.get(quad, 0)
                counts[quad] = count + 1
                if count == 0:
                    added.append(quad)
                    if isinstance(quad.object, Literal):
                        self._enter(quad.object)
        if self._removed > 2 * len(counts) + 1000:
            self._rebuild()
        elif added:
            store.extend(added)
        changed = self._fresh or any(leaving) or any(entering)
        self._fresh = False
        return changed

    def _node(self, target: str) -> NamedNode | DefaultGraph:
        node = self._nodes.get(target)
        if node is None:
            node = self._nodes[target] = NamedNode(target)
        return node

    def _enter(self, literal: Literal) -> None:
        if literal.datatype.value in (XSD_STRING, RDF_LANG_STRING):
            return  # stored as written
        self._literals[literal] += 1
        if self._literals[literal] == 1:
            stored = self._forms.stored_form(literal)
            group = self._by_form.setdefault(stored, set())
            group.add(literal)
            if len(group) > 1:
                self._clashes.add(stored)

    def _leave(self, literal: Literal) -> None:
        if literal.datatype.value in (XSD_STRING, RDF_LANG_STRING):
            return
        self._literals[literal] -= 1
        if self._literals[literal] == 0:
            del self._literals[literal]
            stored = self._forms.stored_form(literal)
            group = self._by_form[stored]
            group.discard(literal)
            if len(group) <= 1:
                self._clashes.discard(stored)
            if not group:
                del self._by_form[stored]

    def _rebuild(self) -> None:
        store = Store()
        for iri in self._named:
            store.add_graph(NamedNode(iri))
        store.extend(self._counts)
        self._store = store
        self._removed = 0

    def original(self, term: Term) -> Term:
        """``term`` as the data wrote it (a literal the store gave back normalised)."""
        if isinstance(term, Literal):
            group = self._by_form.get(term)
            if group is not None and len(group) == 1:
                return next(iter(group))
        return term

    def query(self, sparql: str, t: int) -> list[dict[str, Term]]:
        """The solutions of a SELECT query over the dataset, with the data's own terms; a
        :class:`~rsep.errors.UserError` if two of its literals are one term in the store."""
        if self._clashes:
            stored = min(self._clashes, key=str)
            one, other = sorted(self._by_form[stored], key=str)[:2]
            raise UserError(
                f"at {t} the dataset holds {one} and {other}, which pyoxigraph stores as one "
                f"term, {stored} (it normalises literals: oxigraph issue #526); the engine "
                "cannot evaluate this data exactly"
            )
        try:
            found = self._store.query(sparql)
        except SyntaxError as exc:
            raise UserError(f"the plan's graph pattern is not SPARQL 1.1: {exc}") from None
        if not isinstance(found, QuerySolutions):  # pragma: no cover - a SELECT query
            raise TypeError("a SELECT query returned no solutions")
        names = [variable.value for variable in found.variables]
        rows: list[dict[str, Term]] = []
        for solution in found:
            row: dict[str, Term] = {}
            for name in names:
                term = solution[name]
                if term is None:
                    continue  # unbound: outside dom(μ) (RSP-QL Def. 3)
                if not isinstance(term, NamedNode | BlankNode | Literal):
                    raise UserError(f"?{name} is bound to an RDF-star triple, not supported")
                row[name] = self.original(term)
            rows.append(row)
        return rows


# The query ----------------------------------------------------------------------------------


class _Pending:
    """Evaluation instants waiting for the columnar solver: their times and, per window,
    the ranges of positions its content holds, each with the index of its instant."""

    def __init__(self, windows: Iterable[str]) -> None:
        self._windows = tuple(windows)
        self._reset()

    def _reset(self) -> None:
        self.count = 0
        self.items = 0
        """The items of the pending instants' contents, summed."""
        self._times: list[np.ndarray] = []
        self._ranges: dict[str, list[np.ndarray]] = {iri: [] for iri in self._windows}

    def add(self, t: int, contents: Mapping[str, Ranges]) -> None:
        """One instant and each window's content there."""
        for iri in self._windows:
            for lo, hi in contents[iri]:
                self._ranges[iri].append(np.array([[self.count, lo, hi]], np.int64))
                self.items += hi - lo
        self._times.append(np.array([t], np.int64))
        self.count += 1

    def extend(self, times: np.ndarray, spans: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Instants and each window's content at each, one range ``[lo, hi)`` per instant."""
        at = self.count + np.arange(len(times), dtype=np.int64)
        for iri in self._windows:
            lo, hi = spans[iri]
            kept = hi > lo
            self._ranges[iri].append(np.stack([at[kept], lo[kept], hi[kept]], axis=1))
            self.items += int((hi[kept] - lo[kept]).sum())
        self._times.append(np.asarray(times, np.int64))
        self.count += len(times)

    def take(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The instants' times and each window's ranges as rows ``(instant, lo, hi)``; the
        queue is empty after."""
        times = np.concatenate(self._times) if self._times else np.zeros(0, np.int64)
        ranges = {
            iri: np.concatenate(found) if found else np.zeros((0, 3), np.int64)
            for iri, found in self._ranges.items()
        }
        self._reset()
        return times, ranges


class ContinuousWindowQuery(IncrementalQuery):
    """A plan whose r2r is a SPARQL graph pattern over windows and graphs, evaluated
    incrementally with the oracle's answers (module docstring).

    ``graphs`` gives the content of every default and named graph of the plan: a set of
    triples, or a time-varying graph (:class:`TimeVarying`). ``start`` is the oracle's
    ``start`` (default: the first item a window reads).
    """

    dictionary: TermDictionary

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, GraphSource] | None = None,
        *,
        start: int | None = None,
        dictionary: TermDictionary | None = None,
    ) -> None:
        plan = apply_profile(plan)
        pattern = self._graph_pattern(plan)
        given = dict(graphs or {})
        dataset, params = plan.dataset, plan.parameters
        wanted = [*dataset.default_graphs, *dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in given]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        self._sources: dict[str, frozenset[Triple] | TimeVarying] = {
            iri: background_source(params, given[iri]) for iri in wanted
        }
        self.closure = engine_closure(params, given)
        """The ontology stream items are entailed with (``entailment``), or None."""
        static = {k: v for k, v in self._sources.items() if isinstance(v, frozenset)}
        super().__init__(plan, static)
        self.pattern = pattern
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        """The term ids of the batches it takes and of its windows' items."""
        self._buffers: dict[str, StreamBuffer] = {}
        self._states: list[WindowState] = []
        for named in dataset.windows:
            reading = Reading(plan.present(named.iri), params.bounds, params.t0)
            buffer = self._buffers.setdefault(
                named.stream, StreamBuffer(named.stream, self.dictionary)
            )
            self._states.append(WindowState(named, reading, buffer))
        reporting = {w.iri for w in reporting_windows(dataset.windows)}
        self._reporters = [
            Reporter(state, plan.report(state.iri))
            for state in self._states
            if state.iri in reporting
        ]
        self._candidates = Candidates(
            (r.state.named, r.policy, r.state.reading) for r in self._reporters
        )
        changes: set[int] = set()
        for source in self._sources.values():
            if not isinstance(source, frozenset):
                changes.update(source.changes())
        self._changes = sorted(changes)
        ahead = [reads_up_to(state.window) for state in self._states]
        self._ahead = max((a for a in ahead if a is not None), default=None)
        self._start = start
        if start is None and not self._states:
            self._start = self._changes[0] if self._changes else 0
        self._decided: int | None = None
        self._previous: int | None = None
        self._before: list[_Row] | None = None
        self._latest: int | None = None
        self._last_item: dict[str, int] = {}
        self._keep: dict[str, int] = {}
        self._forms = LiteralForms()
        self._dataset = InstantDataset(plan, self._forms)
        group = self._columnar_group()
        self.exact_reason = group if isinstance(group, str) else None
        """Why the pattern is evaluated by pyoxigraph at each instant (``None``: by the
        columnar solver, :mod:`rsep.engine.dataset`)."""
        self.solver: InstantSolver | None = None
        """The columnar solver of the pattern (``None``: pyoxigraph evaluates it)."""
        if not isinstance(group, str):
            self.solver = InstantSolver(
                group,
                self.dictionary,
                self._states,
                self._dataset.defaults,
                static,
                dataset.default_graphs,
                dataset.named_graphs,
            )
        self._pending = _Pending(state.iri for state in self._states)
        self._texts: dict[int, str] = {}
        self._terms: dict[int, Term] = {}
        self._output_empty = params.output_empty
        self._r2s, self._form = plan.r2s, plan.form
        self._at_once = self._decides_at_once()
        self._max_items = params.max_window_events
        self.exact_instants = 0
        """Instants evaluated by pyoxigraph."""

    def _batched(self) -> bool:
        """Whether reported instants wait to be evaluated many at once
        (:meth:`_answer_instants`): by the columnar solver."""
        return self.solver is not None

    def _learns_forms(self) -> bool:
        """Whether the items' literals are learned as pyoxigraph stores them
        (:class:`~rsep.rdf.sparql.LiteralForms`): when pyoxigraph evaluates the pattern."""
        return self.solver is None

    def _decides_at_once(self) -> bool:
        """Whether instants are decided many at once (:meth:`_decide_at_once`): each window
        is time-based and read under a rule naming one extent, each reporting policy is
        of ``window_close`` and ``non_empty`` only, and the instants are evaluated many at
        once."""
        none = np.zeros(0, np.int64)
        return (
            self._batched()
            and bool(self._states)
            and all(r.reports_at(none) is not None for r in self._reporters)
            and all(state.spans_at(none) is not None for state in self._states)
        )

    def _columnar_group(self) -> Group | str:
        """The pattern as the columnar solver takes it, or why it goes to pyoxigraph."""
        if self.closure is not None:
            return "entailment over the stream items"
        if any(not isinstance(v, frozenset) for v in self._sources.values()):
            return "a time-varying graph"
        if self.pattern.paths:
            return "extended path triples"
        try:
            Store().query(self._sparql())
        except SyntaxError as exc:  # refused where it is evaluated, as the oracle does
            return f"not SPARQL 1.1: {exc}"
        return compile_group(self.pattern.text, self.dictionary)

    def share(self, dictionary: TermDictionary) -> None:
        """Take ``dictionary``, which extends :attr:`dictionary`, in its place (its
        windows' items and the solver's tables keep their ids)."""
        self.dictionary = dictionary
        for buffer in self._buffers.values():
            buffer.dictionary = dictionary
        if self.solver is not None:
            self.solver.dictionary = dictionary

    def _full(self) -> bool:
        """Whether the pending instants are as many, or hold as many items, as are
        evaluated at once."""
        return self._pending.count >= _INSTANTS_AT_ONCE or self._pending.items >= _ITEMS_AT_ONCE

    @property
    def inexact_rows(self) -> int:
        """Rows whose FILTER the columnar solver's programs could not decide, evaluated
        exactly."""
        return 0 if self.solver is None else self.solver.inexact

    def _graph_pattern(self, plan: Plan) -> GraphPatternRef:
        """The SPARQL graph pattern evaluated over the windows and graphs at each instant:
        the plan's r2r (a subclass evaluating another r2r names the pattern beside it)."""
        if not isinstance(plan.r2r, GraphPatternRef):
            raise UserError(
                f"the plan's r2r is {type(plan.r2r).__name__}, not a SPARQL graph pattern "
                "over windows"
            )
        return plan.r2r

    # the contract ---------------------------------------------------------------------------

    def push(self, events: Iterable[Event] | TripleBatch) -> list[Result]:
        """Take a batch of events (non-decreasing time), as objects or a batch of
        :attr:`dictionary`'s ids; return the answers that became final: those at instants
        before the last event's time."""
        self._check_open()
        if isinstance(events, TripleBatch):
            if self.closure is None:
                return self._push_batch(events)
            events = events.events(self.dictionary)
        batch = list(events)
        if self.closure is not None:
            batch = entail_events(batch, self.closure)
        if self._as_batch(batch):
            # many, in time order, none late: their terms encoded at once, as a file's are;
            # the events of streams no window reads only move time on
            out: list[Result] = []
            read = [event for event in batch if event.stream in self._buffers]
            for piece in batches_of(read, self.dictionary):
                out.extend(self._push_batch(piece))
            out.extend(self._arrive(batch[-1].stream, batch[-1].t_end))
            self._check_bounds()
            return out
        if self._learns_forms():
            self._forms.learn(
                x.object
                for event in batch
                if event.stream in self._buffers
                for x in event.graph
                if isinstance(x.object, Literal)
            )
        out = []
        for event in batch:
            self._check_order(event)
            out.extend(self._arrive(event.stream, event.t_end))
            buffer = self._buffers.get(event.stream)
            if buffer is None:
                continue  # no window reads this stream
            buffer.append(event)
            self._item(event.stream, event.t_start)
        self._check_bounds()
        return out

    def _as_batch(self, events: list[Event]) -> bool:
        """Whether events pushed as objects go in as one batch of ids
        (:meth:`_push_batch`): enough of them (a few go one by one, cheaper), in time
        order, the first neither before the latest event nor at or before the watermark
        (those are refused one by one, naming the event)."""
        if len(events) < _EVENTS_AS_BATCH:
            return False
        first = events[0].t_end
        if self._latest is not None and first < self._latest:
            return False
        if self.watermark is not None and first <= self.watermark:
            return False
        return all(a.t_end <= b.t_end for a, b in pairwise(events))

    def _push_batch(self, batch: TripleBatch) -> list[Result]:
        """:meth:`push` of a batch of ids: its items appended to their streams' buffers at
        once, the instants before its last time decided once (an instant's answer reads
        no item after it, so deciding it before or after later items arrive is the same)."""
        if not len(batch):
            return []
        if bool(np.any(batch.event_end[1:] < batch.event_end[:-1])):
            batch = in_time_order([batch])  # a file's events in the order written
        end = batch.event_end
        stream_of = np.asarray(batch.streams, object)
        first = int(end[0])
        if self._latest is not None and first < self._latest:
            raise UserError(
                f"an event at {first} arrived after one at {self._latest}: events must come "
                "in time order"
            )
        if self.watermark is not None and first <= self.watermark:
            self._check_order(
                Event(str(stream_of[batch.event_stream[0]]), first, first, frozenset())
            )
        out = self._arrive(None, first)  # the instants before the batch, as before it
        read = np.isin(stream_of[batch.event_stream], list(self._buffers))
        spans = np.flatnonzero(read & (batch.event_start != end))
        if len(spans):
            i = int(spans[0])
            raise UserError(
                f"an item of stream <{stream_of[batch.event_stream[i]]}> spans "
                f"[{batch.event_start[i]}, {end[i]}]; RSP-QL windows take point timestamps "
                "(Def. 9; parameter timestamps = point)"
            )
        if self._learns_forms():
            literals = np.unique(batch.o[read[batch.triple_event]])
            nodes = self.dictionary.nodes(literals)
            self._forms.learn(x for x in nodes if isinstance(x, Literal))
        bounds = np.searchsorted(batch.triple_event, np.arange(len(batch) + 1))
        spo = np.stack([batch.s, batch.p, batch.o], axis=1)
        for code in np.unique(batch.event_stream[read]).tolist():
            rows = np.flatnonzero(batch.event_stream == code)
            sizes = bounds[rows + 1] - bounds[rows]
            triples = spans_of(bounds[rows], bounds[rows + 1])
            self._buffers[batch.streams[code]].extend(batch.event_start[rows], sizes, spo[triples])
        codes, times = batch.event_stream[read], batch.event_start[read]
        new = np.ones(len(times), bool)
        new[1:] = (times[1:] != times[:-1]) | (codes[1:] != codes[:-1])
        for code, t in zip(codes[new].tolist(), times[new].tolist(), strict=True):
            self._item(batch.streams[code], t)
        out.extend(self._arrive(None, int(end[-1])))
        self._check_bounds()
        return out

    def _arrive(self, stream: str | None, t: int) -> list[Result]:
        """An event at ``t`` arrived: every instant before it is known (no item before it
        will come any more) and decided."""
        if self._latest is not None and t < self._latest:
            raise UserError(
                f"an event of <{stream}> at {t} arrived after one at {self._latest}: "
                "events must come in time order"
            )
        out: list[Result] = []
        if self._latest is not None and t > self._latest:
            out = self._decide(t - 1)
            self._check_bounds()
        self._latest = t
        return out

    def _item(self, stream: str, t: int) -> None:
        """Items of ``stream`` at ``t`` were appended to its buffer."""
        self._last_item[stream] = t
        if self._start is None:
            self._start = t  # the range starts at the first item
        self._candidates.add_item(stream, t)

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``; return every answer at an instant ``≤ t`` not yet
        returned (an answer at ``t`` that reads an interval window ending later waits for
        its end)."""
        self._check_open()
        if self.watermark is not None and t <= self.watermark:
            return []
        self.watermark = t
        known = t if self._latest is None else max(t, self._latest - 1)
        out = self._decide(known)
        self._check_bounds()
        return out

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the answers still due up to ``until`` (or the watermark, when that is
        later); by default up to the end of the oracle's default range (:meth:`_range_end`)."""
        if self._finished:
            return []
        self._finished = True
        if self._start is None:
            # no window read an item: the range starts at the earliest origin or change
            earliest = [origin(s.window, s.reading) for s in self._states]
            self._start = min([*self._changes[:1], *earliest], default=0)
        if until is None:
            until = self._range_end(self._start)
        elif until < self._start:
            raise UserError(f"the time range ends ({until}) before it starts ({self._start})")
        elif self.watermark is not None:
            until = max(until, self.watermark)  # the watermark put its instants in the range
        return self._decide(FOREVER, until)

    # deciding instants ------------------------------------------------------------------------

    def _range_end(self, start: int) -> int:
        """The end of the oracle's default range over the items so far (the last instant at
        which a window's content or its window close can change: the last item's time plus
        the window's horizon; an interval window's end; a graph's last change), or the
        watermark when that is later. Items of a stream no window reads do not count."""
        latest = [start, *self._changes[-1:]]
        for state in self._states:
            last = self._last_item.get(state.named.stream)
            if last is not None:
                latest.append(last + horizon(state.window))
            latest.extend(interval_ends(state.window))
        if self.watermark is not None:
            latest.append(self.watermark)
        return max(latest)

    def _decide(self, known: int, end: int | None = None) -> list[Result]:
        """Decide every candidate instant up to ``known`` (every item up to it has arrived)
        and ``end`` (the range's end; default: the default range's end so far), in time
        order; return the answers."""
        out: list[Result] = []
        start = self._start
        if start is None:
            return out  # no item yet: the range has not started
        if self._ahead is not None and self._ahead > known:
            return out  # an interval window still waits for items up to its end
        limit = min(known, self._range_end(start) if end is None else end)
        decided = start - 1 if self._decided is None else max(self._decided, start - 1)
        quiet = self._quiet_after(start)
        top = limit if quiet is None else min(limit, quiet)
        if top > decided and self._at_once:
            out.extend(self._decide_at_once(decided, top))
            decided = top
        while True:
            t = self._next_instant(decided)
            if t is None or t > limit:
                break
            if quiet is not None and t > quiet:
                out.extend(self._flush())  # _silent reads the previous answer
                if self._silent(t, quiet):
                    decided = limit  # the instants left up to the limit answer nothing
                    break
            out.extend(self._instant(t))
            decided = t
        out.extend(self._flush())
        self._decided = max(decided, limit)
        self._evict()
        return out

    def _decide_at_once(self, after: int, until: int) -> list[Result]:
        """Decide every candidate instant in ``(after, until]`` at once (:attr:`_at_once`):
        the reports and contents of all of them computed as arrays, the same as
        :meth:`_instant`'s instant by instant, and the reported ones evaluated together."""
        out: list[Result] = []
        while after < until:
            last = min(until, after + _SPAN_AT_ONCE)
            times = self._candidates.between(after, last)
            reported = np.zeros(len(times), bool)
            for reporter in self._reporters:
                found = reporter.reports_at(times)
                assert found is not None  # _at_once
                reported |= found
            chosen = times[reported]
            spans: dict[str, tuple[np.ndarray, np.ndarray]] = {}
            for state in self._states:
                span = state.spans_at(chosen)
                assert span is not None  # _at_once
                lo, hi = span
                over = np.flatnonzero(hi - lo > self._max_items)
                if len(over):
                    raise UserError(
                        f"window <{state.iri}> holds {int(hi[over[0]] - lo[over[0]])} items at "
                        f"{int(chosen[over[0]])}, more than max_window_events = "
                        f"{self._max_items}"
                    )
                spans[state.iri] = span
            sizes = sum((b - a for a, b in spans.values()), np.zeros(len(chosen), np.int64))
            first = 0
            while first < len(chosen):
                # as many instants as fit, at least one
                room = _ITEMS_AT_ONCE - self._pending.items
                fit = int(np.searchsorted(np.cumsum(sizes[first:]), room, "right"))
                end = first + max(1, min(fit, _INSTANTS_AT_ONCE - self._pending.count))
                cut = slice(first, end)
                self._pending.extend(
                    chosen[cut], {i: (a[cut], b[cut]) for i, (a, b) in spans.items()}
                )
                if self._full():
                    out.extend(self._flush())
                first = end
            if len(chosen):
                self._previous = int(chosen[-1])
            after = last
        return out

    def _quiet_after(self, start: int) -> int | None:
        """An instant after which, up to the next item, every window is empty and every
        graph constant, so each instant's dataset is the same (RSP-QL Def. 18): the last
        item of a window's stream plus its horizon (and its candidate instants, up to two
        after it), the last change of a graph. ``None`` when a window's content need not
        empty out (landmark, count-based, interval windows), when one reads every window
        closed since the previous evaluation (``all_ended``: that instant then matters), or
        there is none."""
        if not self._states or not all(
            isinstance(s.window, TimeWindow | NowWindow)
            and s.reading.rule is not PresentRule.ALL_ENDED
            for s in self._states
        ):
            return None
        latest = [start, *self._changes[-1:]]
        for state in self._states:
            last = self._last_item.get(state.named.stream)
            if last is not None:
                latest.append(last + max(horizon(state.window), 2))
        return max(latest)

    def _silent(self, t: int, quiet: int) -> bool:
        """Whether no instant from ``t`` on, in the quiet stretch after ``quiet``
        (:meth:`_quiet_after`), gives an answer, so that deciding them one by one can be skipped
        (a far watermark): every window's content is empty at ``t - 1``, and either
        no reporting window reports on empty content (Def. 23: ``non_empty``,
        ``content_change`` or ``new_content`` among its conditions), or the previous
        evaluation was on this same dataset and the streaming operator gives nothing on
        it again (Def. 20-22: IStream, DStream, or RStream of an empty answer), the form is
        no ASK and ``output.empty`` is off. The previous evaluation instant stays where it
        is: no window's content depends on it (no ``all_ended``), and the stretch's
        contents are all empty."""
        previous = self._previous
        for state in self._states:
            if any(hi > lo for lo, hi in state.content(t - 1, previous)):
                return False
        if all(r.policy.conditions & _ON_CONTENT for r in self._reporters):
            return True
        if previous is None or previous <= quiet or self._before is None:
            return False
        if isinstance(self.plan.form, Ask) or self._output_empty:
            return False
        return not self.plan.r2s.apply(self._before, self._before, t)

    def _next_instant(self, after: int) -> int | None:
        if not self._states:
            # no windows: the start of the range and each change of a graph
            for t in (self._start, *self._changes):
                if t is not None and t > after:
                    return t
            return None
        return self._candidates.next_after(after)

    def _instant(self, t: int) -> list[Result]:
        """Decide ``t``: evaluate the query there if a reporting window reports (or, without
        windows, always), and return the reported answer."""
        previous = self._previous
        contents: dict[str, Ranges] = {}

        def content(state: WindowState) -> Callable[[], Ranges]:
            def read() -> Ranges:
                if state.iri not in contents:
                    contents[state.iri] = state.content(t, previous)
                return contents[state.iri]

            return read

        reported = not self._states or any(
            reporter.reports(t, previous, content(reporter.state)) for reporter in self._reporters
        )
        if not reported:
            return []
        limit = self._max_items
        for state in self._states:
            if state.iri not in contents:
                contents[state.iri] = state.content(t, previous)
            size = sum(hi - lo for lo, hi in contents[state.iri])
            if size > limit:
                raise UserError(
                    f"window <{state.iri}> holds {size} items at {t}, more than "
                    f"max_window_events = {limit}"
                )
        self._previous = t
        if self._batched():
            self._pending.add(t, contents)  # evaluated with the others (_flush)
            if self._full():
                return self._flush()
            return []
        self.exact_instants += 1
        return self._answer(t, self._evaluate(t, contents))

    def _flush(self) -> list[Result]:
        """Evaluate the pending instants at once, in time order, and return their answers."""
        if not self._pending.count:
            return []
        times, spans = self._pending.take()
        return self._answer_instants(times, spans)

    def _answer_instants(self, times: np.ndarray, spans: Mapping[str, np.ndarray]) -> list[Result]:
        """The answers at instants ``times`` (in time order) whose windows hold ``spans``
        (by window IRI, rows ``(instant, lo, hi)``), by the columnar solver."""
        assert self.solver is not None
        found = self.solver.solve(len(times), spans)
        instants = times.tolist()
        if self._r2s is R2S.RSTREAM and isinstance(self._form, Select):
            # RStream streams every solution of every instant (Def. 20): the results at
            # once, the rows of the last instant kept for the next comparison
            bindings = self._bindings(found, len(instants))
            out: list[Result] = [
                SelectResult(t, mu)
                for t, rows in zip(instants, bindings, strict=True)
                for mu in rows
            ]
            self._before = [_Row() for _ in bindings[-1]]
            for row, mu in zip(self._before, bindings[-1], strict=True):
                row.terms = mu
            return out
        out = []
        for t, psi in zip(instants, self._rows(found, len(instants)), strict=True):
            out.extend(self._answer(t, psi))
        return out

    def _columns(
        self, found: Mapping[str, np.ndarray]
    ) -> tuple[list[str], np.ndarray, list[list[int]]]:
        """The solutions' projection (the SELECT's variables, DISTINCT applied): the names,
        each row's instant, and a list of term ids per name; the terms of new ids made."""
        form = self._form
        names = list(self.solver.group.variables) if self.solver else []
        distinct = False
        if isinstance(form, Select):
            if form.variables:
                names = [v for v in form.variables if v in found]
            distinct = form.distinct
        event = found["event"]
        if distinct and len(event):
            table = np.unique(np.stack([event, *(found[n] for n in names)], axis=1), axis=0)
            event = table[:, 0]
            columns = [table[:, i + 1] for i in range(len(names))]
        else:
            columns = [found[n] for n in names]
        terms = self._terms
        if columns:
            new = [i for i in np.unique(np.concatenate(columns)).tolist() if i not in terms]
            if new:
                terms.update(zip(new, self.dictionary.nodes(np.asarray(new)), strict=True))  # type: ignore[arg-type]
        return names, event, [column.tolist() for column in columns]

    def _bindings(self, found: Mapping[str, np.ndarray], k: int) -> list[list[dict[str, Term]]]:
        """The solutions of each of ``k`` instants (columns of ids, ``event`` the instant,
        in instant order), projected, as mappings of terms."""
        names, event, lists = self._columns(found)
        terms = self._terms
        if lists:
            by_term = zip(*([terms[i] for i in ids] for ids in lists), strict=True)
            mappings = [dict(zip(names, row, strict=True)) for row in by_term]
        else:  # no variable: one empty solution per row
            mappings = [{} for _ in range(len(event))]
        bounds = np.searchsorted(event, np.arange(k + 1)).tolist()
        return [mappings[lo:hi] for lo, hi in pairwise(bounds)]

    def _rows(self, found: Mapping[str, np.ndarray], k: int) -> list[list[_Row]]:
        """:meth:`_bindings` as rows R2S compares (their texts)."""
        names, event, lists = self._columns(found)
        terms, texts = self._terms, self._texts
        rows: list[_Row] = []
        for ids in zip(*lists, strict=True) if lists else [() for _ in range(len(event))]:
            for i in ids:
                if i not in texts:
                    texts[i] = str(terms[i])
            row = _Row(zip(names, (texts[i] for i in ids), strict=True))
            row.terms = dict(zip(names, (terms[i] for i in ids), strict=True))
            rows.append(row)
        bounds = np.searchsorted(event, np.arange(k + 1)).tolist()
        return [rows[lo:hi] for lo, hi in pairwise(bounds)]

    def _evaluate(self, t: int, contents: Mapping[str, Ranges]) -> list[_Row]:
        """The answer at a reported instant ``t`` over the windows' ``contents`` (by IRI):
        the graph pattern over the instantaneous dataset (RSP-QL Def. 23)."""
        windows = [(state, contents[state.iri]) for state in self._states]
        graphs = {iri: _at(source, t) for iri, source in self._sources.items()}
        psi = self._before
        if self._dataset.update(windows, graphs) or psi is None:
            psi = [self._row(mu) for mu in self._dataset.query(self._sparql(), t)]
        # else: the dataset of the previous evaluation gives its answer again (a query
        # calling RAND(), BNODE() or NOW() would differ: the oracle evaluates it again)
        return psi

    # answers ------------------------------------------------------------------------------------

    def _sparql(self) -> str:
        """The query evaluated at each instant: the group pattern under the SELECT head (for
        CONSTRUCT and ASK, ``SELECT *``: R2S works on solution mappings, the form applies
        after it, Def. 24)."""
        form = self.plan.form
        head = "SELECT *"
        if isinstance(form, Select):
            names = " ".join("?" + v for v in form.variables) or "*"
            head = ("SELECT DISTINCT " if form.distinct else "SELECT ") + names
        return f"{head}\nWHERE {{\n{self.pattern.text}\n}}"

    @staticmethod
    def _row(mu: Mapping[str, Term]) -> _Row:
        row = _Row((name, str(term)) for name, term in mu.items())
        row.terms = dict(mu)
        return row

    def _answer(self, t: int, psi: list[_Row]) -> list[Result]:
        """R2S over the answers at ``t`` and at the previous evaluation (Def. 20-22), then
        the query form (Def. 24, step 3); an empty answer only under ``output.empty``."""
        streamed = [cast(_Row, mu) for mu, _ in self._r2s.apply(self._before, psi, t)]
        self._before = psi
        form = self._form
        results: list[Result]
        if isinstance(form, Select):
            results = [SelectResult(t, row.terms) for row in streamed]  # rows are not changed
            empty = not results
        elif isinstance(form, Construct):
            triples: set[Triple] = set()
            for row in streamed:
                triples.update(self._instantiate(form, row))
            results = [ConstructResult(t, frozenset(triples))]
            empty = not triples
        elif isinstance(form, Ask):
            results = [AskResult(t, bool(streamed))]
            empty = False
        else:  # pragma: no cover
            raise TypeError(f"unknown query form {type(form).__name__}")
        if empty and not self._output_empty:
            return []
        return results

    def _instantiate(self, form: Construct, row: _Row) -> list[Triple]:
        """The CONSTRUCT template instantiated with one row (SPARQL 1.1 sec. 16.2;
        :func:`rsep.rdf.sparql.instantiate`)."""
        return instantiate(form.template, row.terms, self._forms.stored_form)

    # state ------------------------------------------------------------------------------------

    def _evict(self) -> None:
        """Forget the items no window reads at the instants still to decide."""
        if self._decided is None:
            return
        d = self._decided + 1
        keep: dict[str, int] = {}
        for state in self._states:
            position = state.keep_from(d, self._previous)
            iri = state.buffer.iri
            keep[iri] = min(keep.get(iri, position), position)
        for iri, position in keep.items():
            self._buffers[iri].evict(position)
        self._keep = keep

    def _check_bounds(self) -> None:
        """The items kept for a stream (those a window may still read, and those not yet
        final) are bounded by ``max_window_events`` (DESIGN.md: bound every state that can
        grow): beyond it, a clear error instead of running out of memory."""
        limit = self._max_items
        for iri, buffer in self._buffers.items():
            kept = buffer.end - max(buffer.offset, self._keep.get(iri, 0))
            if kept > limit:
                names = ", ".join(f"<{s.iri}>" for s in self._states if s.buffer is buffer)
                raise UserError(
                    f"window(s) {names} over stream <{iri}> keep {kept} items, more than "
                    f"max_window_events = {limit} (set it higher, or narrow the window)"
                )

    @property
    def kept(self) -> int:
        """How many items the windows keep, over all streams (for tests and progress)."""
        return sum(
            buffer.end - max(buffer.offset, self._keep.get(iri, 0))
            for iri, buffer in self._buffers.items()
        )


def background_source(params: Parameters, graph: GraphSource) -> frozenset[Triple] | TimeVarying:
    """A background graph, static or time-varying (RSP-QL Def. 10), as ``entailment`` reads
    it: each instantaneous graph materialised."""
    source = graph if isinstance(graph, TimeVarying) else frozenset(graph)
    if params.entailment is Entailment.NONE or not params.entailment_scope.background:
        return source
    if isinstance(source, frozenset):
        return background(params, source)
    return MaterialisedGraph(params, source)


def _at(source: frozenset[Triple] | TimeVarying, t: int) -> frozenset[Triple]:
    if isinstance(source, frozenset):
        return source
    return source.at(t)
