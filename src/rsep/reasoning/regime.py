"""What a plan's ``entailment`` and ``entailment.scope`` ask of its background graphs and
its stream items, for the oracle and the engines alike (docs/reasoning.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from pyoxigraph import Triple

from rsep.algebra.params import Entailment, Parameters
from rsep.reasoning.reasoner import Ontology, materialise
from rsep.semantics.graph import versions

if TYPE_CHECKING:
    from rsep.engine.terms import TermDictionary
    from rsep.reasoning.closure import Closure

__all__ = [
    "MaterialisedGraph",
    "background",
    "engine_closure",
    "graph_triples",
    "graphs_of",
    "ontology_of",
]


def graph_triples(graph: object) -> frozenset[Triple]:
    """Every triple a background graph ever holds: a static graph itself, a time-varying
    graph the union of its snapshots (``snapshots``, or ``at`` each instant it changes)."""
    snapshots = getattr(graph, "snapshots", None)
    if snapshots is not None:
        return frozenset(t for snapshot in snapshots for t in snapshot.graph)
    return frozenset(t for one in versions(graph)[1] for t in one)


def background(parameters: Parameters, graph: AbstractSet[Triple]) -> frozenset[Triple]:
    """A background graph (or one snapshot of a time-varying graph) as the plan reads it:
    materialised once when ``entailment`` applies to background graphs."""
    entailment = parameters.entailment
    if entailment is Entailment.NONE or not parameters.entailment_scope.background:
        return frozenset(graph)
    return materialise(frozenset(graph), entailment)


def entails_items(parameters: Parameters) -> bool:
    """Whether ``entailment`` applies to stream items: an item then matches a pattern by
    triples it does not state."""
    return parameters.entailment is not Entailment.NONE and parameters.entailment_scope.stream


def ontology_of(parameters: Parameters, graphs: Iterable[object]) -> Ontology | None:
    """The ontology stream items are entailed with (the schema of every background graph),
    or None when ``entailment`` does not apply to stream items."""
    entailment = parameters.entailment
    if not entails_items(parameters):
        return None
    return Ontology.of((graph_triples(g) for g in graphs), entailment)


def graphs_of(graphs: Mapping[str, object] | None) -> list[object]:
    """The background graphs of a query's ``graphs`` argument."""
    return list((graphs or {}).values())


class MaterialisedGraph:
    """A time-varying background graph (``at``, ``changes``) read under ``entailment``: each
    distinct instantaneous graph materialised once, when first read."""

    def __init__(self, parameters: Parameters, source: object) -> None:
        self.parameters = parameters
        self.source = source
        self._done: dict[frozenset[Triple], frozenset[Triple]] = {}

    def at(self, t: int) -> frozenset[Triple]:
        """The instantaneous graph at ``t``, materialised."""
        graph: frozenset[Triple] = self.source.at(t)  # type: ignore[attr-defined]
        found = self._done.get(graph)
        if found is None:
            found = self._done[graph] = background(self.parameters, graph)
        return found

    def changes(self) -> frozenset[int]:
        """The instants at which the source may change."""
        changes: frozenset[int] = self.source.changes()  # type: ignore[attr-defined]
        return changes


def engine_closure(
    parameters: Parameters,
    graphs: Mapping[str, object] | None,
    dictionary: TermDictionary | None = None,
) -> Closure | None:
    """The closure tables an engine entails stream items with, in ``dictionary``'s ids (the
    columnar engine's, whose batches go through
    :func:`~rsep.reasoning.closure.entail_batch`; by default one of their own, for the
    engines that take events: :func:`~rsep.reasoning.closure.entail_events`), or None when
    ``entailment`` does not apply to stream items."""
    ontology = ontology_of(parameters, graphs_of(graphs))
    if ontology is None:
        return None
    from rsep.engine.terms import TermDictionary
    from rsep.reasoning.closure import Closure

    return Closure(ontology, dictionary if dictionary is not None else TermDictionary())
