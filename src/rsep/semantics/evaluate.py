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

The plan's r2r must be a :class:`~rsep.algebra.events.GraphPatternRef` whose text is a
SPARQL 1.1 group pattern with full IRIs, reading each window as ``GRAPH <w> { … }``
(docs/semantics.md, "The oracle"). Event patterns are not evaluated here yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QuerySolutions,
    QueryTriples,
    Store,
    Triple,
    Variable,
)

from rsep.algebra.events import GraphPatternRef
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Ask, Construct, Plan, Select
from rsep.algebra.r2s import Solution
from rsep.errors import UserError
from rsep.rdf.event import Stream, StreamSet
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult
from rsep.rdf.terms import Term
from rsep.semantics.dataset import StreamingDataset
from rsep.semantics.graph import Graph, TimeVaryingGraph
from rsep.semantics.report import TimeRange, evaluation_instants, time_range

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
        if not isinstance(self.plan.r2r, GraphPatternRef):
            raise UserError(
                f"the oracle evaluates graph patterns; this plan's r2r is "
                f"{type(self.plan.r2r).__name__} (event patterns are not supported yet)"
            )
        self.pattern: GraphPatternRef = self.plan.r2r
        self.dataset = StreamingDataset.of(self.plan, streams, graphs or {})
        self._terms: dict[str, Term] = {}
        self._empty = Store()

    # Def. 17-19: one evaluation -------------------------------------------------------

    def sparql(self) -> str:
        """The SPARQL 1.1 query evaluated at each instant: the plan's group pattern under
        the SELECT head (for CONSTRUCT and ASK, ``SELECT *``: the streaming operator works
        on solution mappings, and the query form is applied after it, Def. 24)."""
        form = self.plan.form
        head = "SELECT *"
        if isinstance(form, Select):
            names = " ".join("?" + v for v in form.variables) or "*"
            head = ("SELECT DISTINCT " if form.distinct else "SELECT ") + names
        return f"{head}\nWHERE {{\n{self.pattern.text}\n}}"

    def solutions(self, t: int, previous: int | None) -> list[Solution]:
        """Ψ(t) (RSP-QL Def. 17-19) as mappings to N-Triples text, the form R2S compares;
        each term is remembered so that results carry the term itself.

        Every evaluation goes through this method, so a subclass may memoise it (the
        correctness checker does, across the t0 values it tries)."""
        instant = self.dataset.instant(t, previous)
        try:
            found = instant.store.query(self.sparql())
        except SyntaxError as exc:
            raise UserError(f"the plan's graph pattern is not SPARQL 1.1: {exc}") from None
        if not isinstance(found, QuerySolutions):  # pragma: no cover - a SELECT query
            raise TypeError("a SELECT query returned no solutions")
        names = [variable.value for variable in found.variables]
        psi: list[Solution] = []
        for row in found:
            mapping: dict[str, str] = {}
            for name in names:
                term = row[name]
                if term is None:
                    continue  # unbound: outside dom(μ) (RSP-QL Def. 3)
                if not isinstance(term, Term):
                    raise UserError(f"?{name} is bound to an RDF-star triple, not supported")
                term = instant.original(term)
                text = str(term)
                self._terms.setdefault(text, term)
                mapping[name] = text
            psi.append(mapping)
        return psi

    def eval(self, t: int, previous: int | None = None) -> list[dict[str, Term]]:
        """``eval(SDS(G_0), SE, t)`` without the streaming operator: the sequence of
        solution mappings ``Ψ(t)`` of the graph pattern over the instantaneous dataset at
        ``t`` (RSP-QL Def. 17-19; RSEP-QL Def. 6). ``previous`` is the previous evaluation
        instant, which only the ``all_ended`` present rule reads."""
        return [
            {name: self._terms[text] for name, text in mu.items()}
            for mu in self.solutions(t, previous)
        ]

    # Def. 23: when ----------------------------------------------------------------------

    def time_range(self, start: int | None = None, until: int | None = None) -> TimeRange:
        """The range ``[start, until]`` evaluated (:func:`rsep.semantics.report.time_range`)."""
        return time_range(self.dataset, start, until)

    def evaluation_instants(
        self, start: int | None = None, until: int | None = None, *, every_instant: bool = False
    ) -> list[int]:
        """ET over the range (RSP-QL Def. 23; :func:`rsep.semantics.report.evaluation_instants`)."""
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
                SelectResult(t, {name: self._terms[text] for name, text in mu.items()})
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
        """The CONSTRUCT template instantiated with one mapping (SPARQL 1.1 sec. 16.2):
        variables replaced, template blank nodes fresh, triples with an unbound variable
        or an illegal term left out. pyoxigraph does it, given the mapping as SEP-0007
        substitutions (a ``VALUES`` row of ``UNDEF`` puts the mapping's variables in
        scope); the literals it normalises are mapped back to the mapping's own."""
        substitutions: dict[Variable, NamedNode | BlankNode | Literal | Triple] = {
            Variable(name): self._terms[text] for name, text in mu.items()
        }
        names = " ".join("?" + name for name in mu)
        undefined = " ".join("UNDEF" for _ in mu)
        scope = f"VALUES ({names}) {{ ({undefined}) }}" if mu else ""
        found = self._empty.query(
            f"CONSTRUCT {{\n{form.template}\n}} WHERE {{ {scope} }}", substitutions=substitutions
        )
        if not isinstance(found, QueryTriples):  # pragma: no cover - a CONSTRUCT query
            raise TypeError("a CONSTRUCT query returned no triples")
        back = {
            self.dataset.stored_form(term): term
            for term in substitutions.values()
            if isinstance(term, Literal)
        }
        return [
            Triple(x.subject, x.predicate, back[x.object])
            if isinstance(x.object, Literal) and x.object in back
            else x
            for x in found
        ]


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
