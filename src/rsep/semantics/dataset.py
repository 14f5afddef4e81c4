"""The RSP-QL dataset bound to data, and its instantaneous RDF dataset at an instant.

An RSP-QL dataset (Def. 14; RSEP-QL Def. 4) holds a default time-varying graph, named
time-varying graphs and named windows over streams. At an evaluation instant ``t`` every
element becomes an RDF graph (RSP-QL Def. 18, ``SDS(G, t)``; RSEP-QL Sect. 4.1, the
snapshot of a temporal sub-dataset), so the whole dataset becomes an ordinary SPARQL
dataset, which pyoxigraph queries exactly (DESIGN.md):

- the default graph is the union of the instantaneous graphs of ``default_graphs`` and the
  snapshots of the windows in ``default_windows`` ("the default graph is composed by
  merging together the unnamed graphs and unnamed time-based sliding windows", after
  Def. 14; C-SPARQL and SPARQLstream put every window there);
- each named graph ``u`` of ``named_graphs`` is the named graph ``(u, G_u(t))``;
- each other window ``w`` is the named graph ``(w, SDS_w(t))``, which the query reads with
  ``GRAPH <w> { … }`` (RSEP-QL's ``WINDOW w P`` and CQELS's ``STREAM``, Sect. 3.3).

An unnamed window (C-SPARQL's ``FROM STREAM <s> [RANGE …]``) still needs an identifier in
the plan; the compiler gives it :func:`unnamed_window` and lists it in
``default_windows``, so it is never a named graph.

pyoxigraph's store normalises typed literals as it loads them (``"62.0"^^xsd:float``
becomes ``"62"``, ``"+1"^^xsd:int`` becomes ``"1"^^xsd:integer``; oxigraph issue #526), and
so does its query evaluation. The values stay, so patterns and filters evaluate the same;
the terms that come back are mapped back to the data's own (:class:`Instant`), and a
dataset in which two distinct literals normalise to one term is refused, since the store
could no longer tell them apart (docs/semantics.md, "The oracle").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, Store, Triple

from rsep.algebra.plan import UNNAMED_WINDOW, Plan, unnamed_window
from rsep.algebra.window import NamedWindow
from rsep.errors import UserError
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.terms import Term
from rsep.semantics.graph import Graph, TimeVaryingGraph, as_time_varying
from rsep.semantics.store import LiteralForms
from rsep.semantics.window import Reading, content, snapshot

__all__ = ["UNNAMED_WINDOW", "Instant", "StreamingDataset", "unnamed_window"]

_MAX_CACHED_INSTANTS = 256


@dataclass(frozen=True)
class Instant:
    """The instantaneous dataset at one instant as pyoxigraph holds it: the ``store`` to
    query, and ``originals``, which maps each literal as the store gives it back to the
    literal of the data it came from (where normalisation changed it)."""

    time: int
    store: Store
    originals: Mapping[Literal, Literal] = field(default_factory=dict)

    def original(self, term: Term) -> Term:
        """``term`` as the data wrote it."""
        if isinstance(term, Literal):
            return self.originals.get(term, term)
        return term

    def original_triple(self, triple: Triple) -> Triple:
        """``triple`` with its object as the data wrote it."""
        found = triple.object
        if isinstance(found, Literal) and found in self.originals:
            return Triple(triple.subject, triple.predicate, self.originals[found])
        return triple


@dataclass(frozen=True)
class StreamingDataset:
    """An RSP-QL dataset ``SDS`` (Def. 14) with its data: the plan's dataset description,
    the streams, and the static or time-varying graphs by IRI.

    Build it with :meth:`of`, which checks that every stream and graph the plan names is
    given.
    """

    plan: Plan
    streams: Mapping[str, Stream]
    graphs: Mapping[str, TimeVaryingGraph]
    _forms: LiteralForms = field(default_factory=LiteralForms, compare=False, repr=False)
    _instants: dict[object, Instant] = field(default_factory=dict, compare=False, repr=False)
    _quads: dict[tuple[Triple, str], Quad] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        plan: Plan,
        streams: StreamSet | Mapping[str, Stream],
        graphs: Mapping[str, Graph | TimeVaryingGraph],
    ) -> StreamingDataset:
        """Bind ``plan.dataset`` to data; a :class:`~rsep.errors.UserError` names a
        stream or graph the plan reads but the caller did not give."""
        dataset = plan.dataset
        wanted = [*dataset.default_graphs, *dataset.named_graphs]
        missing = [iri for iri in wanted if iri not in graphs]
        if missing:
            raise UserError(
                "no content given for graph(s) " + ", ".join(f"<{iri}>" for iri in missing)
            )
        absent = sorted({w.stream for w in dataset.windows if w.stream not in streams})
        if absent:
            raise UserError("no stream given for " + ", ".join(f"<{iri}>" for iri in absent))
        return cls(
            plan,
            {iri: streams[iri] for iri in streams},
            {iri: as_time_varying(graphs[iri]) for iri in wanted},
        )

    @property
    def windows(self) -> tuple[NamedWindow, ...]:
        """The windows of the dataset (RSP-QL Def. 14's ``(w_q, 𝕎_q(S_r))``)."""
        return self.plan.dataset.windows

    def reading(self, window: NamedWindow) -> Reading:
        """How ``window`` is read: its present rule (own or ``window.present``),
        ``window.bounds`` and ``window.t0``."""
        params = self.plan.parameters
        return Reading(self.plan.present(window.iri), params.bounds, params.t0)

    def stream(self, window: NamedWindow) -> Stream:
        """The stream ``window`` reads."""
        return self.streams[window.stream]

    def content(
        self, window: NamedWindow, t: int, previous: int | None = None
    ) -> tuple[Event, ...]:
        """``W(S, t)`` for the named window (:func:`rsep.semantics.window.content`),
        bounded by ``max_window_events`` (DESIGN.md: bound every state that can grow)."""
        items = content(window.window, self.stream(window), t, self.reading(window), previous)
        limit = self.plan.parameters.max_window_events
        if len(items) > limit:
            raise UserError(
                f"window <{window.iri}> holds {len(items)} items at {t}, more than "
                f"max_window_events = {limit}"
            )
        return items

    def snapshot(
        self, window: NamedWindow, t: int, previous: int | None = None
    ) -> frozenset[Triple]:
        """The window's instantaneous graph ``SDS_w(t)`` (RSEP-QL Sect. 4.1; RSP-QL
        Def. 13's ``G_𝕎(t)``)."""
        return snapshot(self.content(window, t, previous))

    def default_graph(self, t: int, previous: int | None = None) -> frozenset[Triple]:
        """The instantaneous default graph: the union of the default graphs at ``t`` and
        the snapshots of the windows merged into it (RSP-QL Def. 14, after the list)."""
        dataset = self.plan.dataset
        graph: set[Triple] = set()
        for iri in dataset.default_graphs:
            graph.update(self.graphs[iri].at(t))
        for window in self.windows:
            if window.iri in dataset.default_windows:
                graph.update(self.snapshot(window, t, previous))
        return frozenset(graph)

    def named_graphs(self, t: int, previous: int | None = None) -> dict[str, frozenset[Triple]]:
        """The instantaneous named graphs: each static or time-varying named graph at ``t``
        and each window not merged into the default graph (RSP-QL Def. 18)."""
        dataset = self.plan.dataset
        named = {iri: self.graphs[iri].at(t) for iri in dataset.named_graphs}
        for window in self.windows:
            if window.iri not in dataset.default_windows:
                named[window.iri] = self.snapshot(window, t, previous)
        return named

    def store(self, t: int, previous: int | None = None) -> Store:
        """The instantaneous dataset ``SDS(t)`` as an in-memory pyoxigraph store: the
        default graph and every named graph at ``t`` (RSP-QL Def. 18: the BGPs of the
        query are evaluated over these RDF graphs)."""
        return self.instant(t, previous).store

    def instant(self, t: int, previous: int | None = None) -> Instant:
        """The instantaneous dataset at ``t`` (:meth:`store`) with the map back from
        normalised literals to the data's own; a :class:`~rsep.errors.UserError` if two
        distinct literals of the data would become one term in the store."""
        default = self.default_graph(t, previous)
        named = self.named_graphs(t, previous)
        # The same contents recur across instants (and across the t0 values `rsep check`
        # tries); a store is only queried, so one built for equal graphs is reused.
        key = (default, frozenset(named.items()))
        known = self._instants.get(key)
        if known is not None:
            return Instant(t, known.store, known.originals)
        store = Store()
        quads = [self._quad(triple, "") for triple in default]
        literals = {x.object for x in default if isinstance(x.object, Literal)}
        for iri, graph in named.items():
            store.add_graph(NamedNode(iri))
            quads.extend(self._quad(triple, iri) for triple in graph)
            literals.update(x.object for x in graph if isinstance(x.object, Literal))
        store.extend(quads)
        instant = Instant(t, store, self._forms.originals(literals, f"at {t} the dataset"))
        if len(self._instants) >= _MAX_CACHED_INSTANTS:
            self._instants.clear()
        self._instants[key] = instant
        return instant

    def _quad(self, triple: Triple, graph: str) -> Quad:
        """``triple`` in graph ``graph`` ("" for the default graph), built once: windows
        overlap, so the same quads enter the stores of many instants."""
        key = (triple, graph)
        quad = self._quads.get(key)
        if quad is None:
            name = NamedNode(graph) if graph else DefaultGraph()
            quad = self._quads[key] = Quad(triple.subject, triple.predicate, triple.object, name)
        return quad

    @property
    def forms(self) -> LiteralForms:
        """How pyoxigraph stores each literal of this dataset (shared with the matchers of
        event patterns, :class:`~rsep.semantics.store.GraphMatcher`)."""
        return self._forms

    def stored_form(self, literal: Literal) -> Literal:
        """``literal`` as pyoxigraph's store and query results give it back."""
        return self._forms.stored_form(literal)

    def changes(self) -> frozenset[int]:
        """The instants at which a time-varying graph of the dataset changes."""
        found: set[int] = set()
        for graph in self.graphs.values():
            found.update(graph.changes())
        return frozenset(found)
