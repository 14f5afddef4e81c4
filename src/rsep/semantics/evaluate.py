"""Continuous evaluation of a plan over finite streams: the oracle (RSP-QL Def. 17-24).

A continuous query ``Q = (SE, SDS, ET, QF)`` (RSP-QL Def. 11) is answered so (Def. 24):
for each ``t ∈ ET``,

1. evaluate the algebraic expression over the dataset at ``t``: every window and
   time-varying graph becomes its instantaneous graph (Def. 18) and the SPARQL part is
   evaluated over them as SPARQL 1.1 defines it, by pyoxigraph (:meth:`ContinuousQuery.eval`);
2. apply the streaming operator to the answers at ``t`` and at the previous instant of ET
   (RStream, IStream, DStream; Def. 20-22; :meth:`rsep.algebra.r2s.R2S.apply`);
3. format the output by the query form: SELECT bindings, a CONSTRUCT graph, an ASK
   boolean, each stamped with ``t`` ("Query Form"; :class:`Answer`).

The plan's r2r is a :class:`~rsep.algebra.events.GraphPatternRef` whose text is a SPARQL
1.1 group pattern with full IRIs, reading each window as ``GRAPH <w> { … }``
(docs/semantics.md, "The oracle"), or an event pattern of one of the four event languages
(alone, or joined with a graph pattern: :class:`~rsep.algebra.plan.EventJoin`). Step 1 is
then the language's own evaluator (:func:`event_evaluation`): RSEP-QL's ``MATCH``
(:mod:`~rsep.semantics.rsepql`), EP-SPARQL's temporal joins (:mod:`~rsep.semantics.epsparql`),
CQELS-CEP's event clauses (:mod:`~rsep.semantics.cqelscep`) and SPAseq's sequence expressions
(:mod:`~rsep.semantics.spaseq`). Event mappings keep their interval ``[t1, t2]`` through the
streaming operator (two matches of one mapping over different intervals are two answers) and
into the results; the SELECT's projection and its ``(e AS ?v)`` expressions apply to each.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pyoxigraph import (
    Triple,
)

from rsep.algebra.events import (
    CepSeq,
    CepWindow,
    EventPattern,
    Gpm,
    GraphPatternRef,
    Match,
    StreamBgp,
)
from rsep.algebra.modifiers import apply as apply_modifiers
from rsep.algebra.params import Entailment
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, Construct, EventJoin, Plan, Select
from rsep.algebra.r2s import Solution
from rsep.errors import UserError
from rsep.rdf.event import Stream, StreamSet
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult
from rsep.rdf.sparql import instantiate, select
from rsep.rdf.terms import Term
from rsep.reasoning.regime import background, ontology_of
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.event_mapping import EventEvaluation, EventMapping, Mu
from rsep.semantics.graph import Graph, TimeVaryingGraph
from rsep.semantics.report import TimeRange, evaluation_instants, time_range
from rsep.semantics.store import GraphMatcher

__all__ = ["Answer", "ContinuousQuery", "evaluate"]


@dataclass(frozen=True)
class Answer:
    """The output of the evaluation at one instant of ET (RSP-QL Def. 24, step 3): the
    SELECT results (one per streamed mapping), the one CONSTRUCT graph, or the one ASK
    boolean, all stamped with ``time``. ``empty`` is an empty relation or graph; an ASK
    answer is never empty."""

    time: int
    results: tuple[Result, ...]
    empty: bool = field(default=False)


class ContinuousQuery:
    """A plan bound to its streams and graphs: RSP-QL's ``Q = (SE, SDS, ET, QF)``
    (Def. 11) over finite data.

    The plan's engine profile is applied first (:func:`~rsep.algebra.passes.apply_profile`,
    idempotent), so the parameters ``window.present``, ``window.bounds``, ``window.t0``,
    ``window.report``, ``r2s`` and ``output.empty`` are the ones the profile sets unless
    the query or the command line set them.
    """

    def __init__(
        self,
        plan: Plan,
        streams: StreamSet | Mapping[str, Stream],
        graphs: Mapping[str, Graph | TimeVaryingGraph] | None = None,
    ) -> None:
        self.plan = apply_profile(plan)
        streams, graphs = _entailed(self.plan, streams, graphs or {})
        self.dataset = StreamingDataset.of(self.plan, streams, graphs)
        self.matcher = GraphMatcher(self.dataset.forms)
        r2r = self.plan.r2r
        self.events: EventEvaluation | None = None
        self.pattern: GraphPatternRef | None = None
        if isinstance(r2r, GraphPatternRef):
            self.pattern = r2r
        else:
            self.events = event_evaluation(self.plan, self.dataset, self.matcher)
            if isinstance(r2r, EventJoin) and not _flag(self.events, "joins_graph"):
                self.pattern = None if r2r.graph.empty else r2r.graph
        self._terms: dict[str, Term] = {}

    # Def. 17-19: one evaluation -------------------------------------------------------

    def sparql(self) -> str:
        """The SPARQL 1.1 query evaluated at each instant: the plan's group pattern under
        the SELECT head (for CONSTRUCT and ASK, ``SELECT *``: the streaming operator works
        on solution mappings, and the query form is applied after it, Def. 24). Beside an
        event pattern, the group's own solutions (``SELECT *``), joined with the event
        pattern's afterwards."""
        if self.pattern is None:
            raise UserError("this plan's r2r is an event pattern, not a SPARQL graph pattern")
        form = self.plan.form
        head = "SELECT *"
        if isinstance(form, Select) and self.events is None:
            names = " ".join("?" + v for v in form.variables) or "*"
            head = ("SELECT DISTINCT " if form.distinct else "SELECT ") + names
        return f"{head}\nWHERE {{\n{self.pattern.text}\n}}"

    def solutions(self, t: int, previous: int | None) -> list[Solution]:
        """Ψ(t) (RSP-QL Def. 17-19) as mappings to N-Triples text, the form R2S compares;
        each term is remembered so that results carry the term itself. An event mapping's
        interval is kept under the key :data:`INTERVAL` (``"t1 t2"``).

        Every evaluation goes through this method, so a subclass may memoise it (the
        correctness checker does, across the t0 values it tries)."""
        if self.events is None:
            return [self._remember(mu) for mu in self._graph_solutions(t, previous)]
        found = self.events.at(t, previous)
        if self.pattern is not None:
            found = self._join_graph(found, t, previous)
        found = self._join_filtered(found)
        modified = self.plan.modifiers is not None
        found = self._modified(found) if modified else self._project(found)
        return [self._solution(item) for item in found]

    def _modified(self, found: Sequence[EventMapping | Mu]) -> list[EventMapping | Mu]:
        """The solution modifiers beside the event pattern over the answer of this
        evaluation (:mod:`rsep.algebra.modifiers`: SPARQL 1.1 sec. 18.2.4-18.2.5 on Ψ(t));
        a row keeps its interval unless it is grouped."""
        assert self.plan.modifiers is not None
        rows = [
            (item.mu, (item.t1, item.t2)) if isinstance(item, EventMapping) else (item, None)
            for item in found
        ]
        out = apply_modifiers(self.plan.modifiers, rows, self.matcher.forms)
        return [mu if span is None else EventMapping(mu, *span) for mu, span in out]

    def _graph_solutions(self, t: int, previous: int | None) -> list[Mu]:
        """The solutions of the plan's SPARQL query over the instantaneous dataset at t."""
        instant = self.dataset.instant(t, previous)
        return select(instant.store, self.sparql(), lambda _, term: instant.original(term))

    def _join_graph(
        self, found: Sequence[EventMapping | Mu], t: int, previous: int | None
    ) -> list[EventMapping | Mu]:
        """The event pattern's answers joined with the graph pattern beside it over the
        dataset at ``t`` (RSEP-QL Sect. 4.2: ``MATCH E`` is a graph pattern whose solutions
        join with the group's). An event mapping keeps its interval."""
        graph = self._graph_solutions(t, previous)
        joined: list[EventMapping | Mu] = []
        for item in found:
            mu = item.mu if isinstance(item, EventMapping) else item
            for other in graph:
                if mu.compatible(other):
                    both = mu.join(other)
                    joined.append(
                        EventMapping(both, item.t1, item.t2)
                        if isinstance(item, EventMapping)
                        else both
                    )
        return joined

    def _join_filtered(self, found: Sequence[EventMapping | Mu]) -> Sequence[EventMapping | Mu]:
        """The answers the group's FILTERs over the event pattern keep (SPARQL 1.1 sec.
        18.2.2.6: ``Filter(F, Join(MATCH E, P))``)."""
        r2r = self.plan.r2r
        if not isinstance(r2r, EventJoin) or not r2r.filters:
            return found
        return [  # an error is false (sec. 17.2)
            item
            for item in found
            if all(
                self.matcher.holds(f, item.mu if isinstance(item, EventMapping) else item)
                for f in r2r.filters
            )
        ]

    def _project(self, found: Sequence[EventMapping | Mu]) -> list[EventMapping | Mu]:
        """The SELECT's ``(e AS ?v)`` expressions, projection and DISTINCT applied to each
        answer of an event pattern (SPARQL 1.1 sec. 18.2.4-18.2.5; EP-SPARQL's
        ``SELECT ?sum / ?count AS ?average``)."""
        form = self.plan.form
        if not isinstance(form, Select):
            return list(found)
        out: list[EventMapping | Mu] = []
        seen: set[EventMapping | Mu] = set()
        for item in found:
            mu = item.mu if isinstance(item, EventMapping) else item
            for name, expression in form.expressions:
                value = self.matcher.value(expression, mu)
                if value is not None and name not in mu:
                    mu = mu.join({name: value})
            if form.variables:
                mu = mu.project(form.variables)
            projected = EventMapping(mu, item.t1, item.t2) if isinstance(item, EventMapping) else mu
            if form.distinct or _flag(self.events, "answer_set"):
                if projected in seen:
                    continue
                seen.add(projected)
            out.append(projected)
        return out

    def _remember(self, mu: Mapping[str, Term]) -> dict[str, str]:
        """``μ`` as N-Triples text; each term remembered for the results."""
        mapping: dict[str, str] = {}
        for name, term in mu.items():
            text = str(term)
            self._terms.setdefault(text, term)
            mapping[name] = text
        return mapping

    def _solution(self, item: EventMapping | Mu) -> Solution:
        if isinstance(item, EventMapping):
            solution = self._remember(item.mu)
            solution[INTERVAL] = f"{item.t1} {item.t2}"
            return solution
        return self._remember(item)

    def eval(self, t: int, previous: int | None = None) -> list[dict[str, Term]]:
        """``eval(SDS(G_0), SE, t)`` without the streaming operator: the sequence of
        solution mappings ``Ψ(t)`` of the graph pattern over the instantaneous dataset at
        ``t`` (RSP-QL Def. 17-19; RSEP-QL Def. 6). ``previous`` is the previous evaluation
        instant, which only the ``all_ended`` present rule reads."""
        return [
            {name: self._terms[text] for name, text in mu.items() if name != INTERVAL}
            for mu in self.solutions(t, previous)
        ]

    # Def. 23: when ----------------------------------------------------------------------

    def time_range(self, start: int | None = None, until: int | None = None) -> TimeRange:
        """The range ``[start, until]`` evaluated (:func:`rsep.semantics.report.time_range`)."""
        return time_range(self.dataset, start, until)

    def evaluation_instants(
        self, start: int | None = None, until: int | None = None, *, every_instant: bool = False
    ) -> list[int]:
        """ET over the range (RSP-QL Def. 23; :func:`rsep.semantics.report.evaluation_instants`).

        An event pattern without windows (EP-SPARQL, SPAseq) is evaluated wherever its
        answer may change (:meth:`EventEvaluation.instants`): each arrival, as both
        languages detect a match when its last event arrives."""
        if self.events is not None and (
            not self.dataset.windows or _flag(self.events, "own_instants")
        ):
            times = sorted(set(self.events.instants()))
            low = start if start is not None else (times[0] if times else 0)
            high = until if until is not None else (times[-1] if times else low)
            return [t for t in times if low <= t <= high]
        return evaluation_instants(self.dataset, start, until, every_instant=every_instant)

    # Def. 20-24: what is reported --------------------------------------------------------

    def answers(self, start: int | None = None, until: int | None = None) -> Iterator[Answer]:
        """``Ans(Q)`` over the range (RSP-QL Def. 24): for each ``t ∈ ET`` the streaming
        operator (parameter ``r2s``) applied to ``Ψ(t)`` and ``Ψ`` at the previous instant
        of ET (Def. 20-22), formatted by the query form. An empty answer is yielded only
        under ``output.empty = true`` (C-SPARQL reports empty relations)."""
        report_empty = self.plan.parameters.output_empty
        r2s = self.plan.r2s
        before: list[Solution] | None = None
        previous: int | None = None
        for t in self.evaluation_instants(start, until):
            psi = self.solutions(t, previous)
            streamed = [mu for mu, _ in r2s.apply(before, psi, t)]
            answer = self._format(streamed, t)
            if report_empty or not answer.empty:
                yield answer
            before, previous = psi, t

    def _format(self, streamed: list[Solution], t: int) -> Answer:
        """The query form applied to the streamed mappings at ``t`` (RSP-QL, "Query Form")."""
        form = self.plan.form
        if isinstance(form, Select):
            results = tuple(
                SelectResult(
                    t,
                    {name: self._terms[text] for name, text in mu.items() if name != INTERVAL},
                    _interval(mu),
                )
                for mu in streamed
            )
            return Answer(t, results, empty=not results)
        if isinstance(form, Construct):
            triples: set[Triple] = set()
            for mu in streamed:
                triples.update(self._instantiate(form, mu))
            return Answer(t, (ConstructResult(t, frozenset(triples)),), empty=not triples)
        if isinstance(form, Ask):
            return Answer(t, (AskResult(t, bool(streamed)),))
        raise TypeError(f"unknown query form {type(form).__name__}")  # pragma: no cover

    def _instantiate(self, form: Construct, mu: Solution) -> list[Triple]:
        """The CONSTRUCT template instantiated with one mapping (SPARQL 1.1 sec. 16.2;
        :func:`rsep.rdf.sparql.instantiate`)."""
        terms = {name: self._terms[text] for name, text in mu.items() if name != INTERVAL}
        return instantiate(form.template, terms, self.dataset.stored_form)


INTERVAL = "@interval"
"""The key under which a solution carries its event mapping's interval, ``"t1 t2"`` (not a
variable name, so it never clashes with one)."""


def _entailed(
    plan: Plan,
    streams: StreamSet | Mapping[str, Stream],
    graphs: Mapping[str, Graph | TimeVaryingGraph],
) -> tuple[StreamSet | Mapping[str, Stream], dict[str, Graph | TimeVaryingGraph]]:
    """The streams and graphs as the plan's ``entailment`` reads them (docs/reasoning.md):
    each background graph, and each snapshot of a time-varying one, materialised by the
    reasoner; each stream item ``G`` replaced by ``G ∪ (M(G ∪ T) ∖ M(T))`` with the schema
    ``T`` of the background graphs (:meth:`rsep.reasoning.Ontology.entail`)."""
    params = plan.parameters
    if params.entailment is Entailment.NONE:
        return streams, dict(graphs)
    ontology = ontology_of(params, graphs.values())
    out: dict[str, Graph | TimeVaryingGraph] = {}
    for iri, graph in graphs.items():
        if isinstance(graph, TimeVaryingGraph):
            snapshots = (replace(s, graph=background(params, s.graph)) for s in graph.snapshots)
            out[iri] = TimeVaryingGraph(tuple(snapshots))
        else:
            out[iri] = background(params, graph)
    if ontology is None:
        return streams, out
    entailed = StreamSet(
        Stream(iri, tuple(replace(e, graph=ontology.entail(e.graph)) for e in stream.events))
        for iri, stream in streams.items()
    )
    return entailed, out


def _interval(solution: Solution) -> tuple[int, int] | None:
    text = solution.get(INTERVAL)
    if text is None:
        return None
    t1, t2 = text.split()
    return int(t1), int(t2)


def _flag(evaluation: EventEvaluation | None, name: str) -> bool:
    """A language's flag on its evaluator (false when absent):

    - ``joins_graph``: it joins the graph pattern beside the event pattern itself
      (CQELS-CEP's ``JOIN([[EC, t]], [[P, t]]_D)`` keeps intervals and reads nested paths);
    - ``own_instants``: ET is its :meth:`~EventEvaluation.instants`, even with windows;
    - ``answer_set``: the language's answer is a set (CQELS-CEP Eq. (1), SPAseq Def. 16),
      so duplicate answers after the projection are removed.
    """
    return bool(getattr(evaluation, name, False))


def event_evaluation(
    plan: Plan, dataset: StreamingDataset, matcher: GraphMatcher
) -> EventEvaluation:
    """The evaluator of the plan's event pattern, by the language its operators belong to:
    a ``Gpm`` is SPAseq's, a ``Match`` RSEP-QL's, a ``CepSeq``/``CepWindow`` CQELS-CEP's, a
    ``StreamBgp`` EP-SPARQL's (the four algebras are kept apart, rsep.algebra.events)."""
    r2r = plan.r2r
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    if not isinstance(root, EventPattern):
        raise UserError(f"the plan's r2r is {type(root).__name__}, not an event pattern")
    kinds = {type(node) for node in root.walk()}
    if Gpm in kinds:
        from rsep.semantics.spaseq import SpaseqEvaluation

        return SpaseqEvaluation(plan, dataset, matcher)
    if Match in kinds:
        from rsep.semantics.rsepql import RsepqlEvaluation

        return RsepqlEvaluation(plan, dataset, matcher)
    if kinds & {CepSeq, CepWindow}:
        from rsep.semantics.cqelscep import CqelscepEvaluation

        return CqelscepEvaluation(plan, dataset, matcher)
    if StreamBgp in kinds:
        from rsep.semantics.epsparql import EpsparqlEvaluation

        return EpsparqlEvaluation(plan, dataset, matcher)
    raise UserError(f"no evaluator for the event pattern {type(root).__name__}")


def evaluate(
    plan: Plan,
    streams: StreamSet | Mapping[str, Stream],
    graphs: Mapping[str, Graph | TimeVaryingGraph] | None = None,
    until: int | None = None,
    *,
    start: int | None = None,
) -> Iterator[Result]:
    """The answer of ``plan`` over finite ``streams`` and ``graphs`` (static graphs or
    time-varying graphs by IRI) from ``start`` to ``until`` (defaults:
    :func:`rsep.semantics.report.time_range`), as results in time order (RSP-QL Def. 24).

    An empty SELECT relation has no row in the results format; reported empty answers
    (``output.empty``) are visible in :meth:`ContinuousQuery.answers`, and an empty
    CONSTRUCT graph is a result with no triples.
    """
    query = ContinuousQuery(plan, streams, graphs)
    for answer in query.answers(start, until):
        yield from answer.results
