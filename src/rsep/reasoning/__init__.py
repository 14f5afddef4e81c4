"""Entailment regimes over background graphs and stream items (parameters ``entailment`` and
``entailment.scope``; docs/reasoning.md).

- :mod:`~rsep.reasoning.reasoner`: the reasoner (``reasonable``, OWL 2 RL/RDF) materialises
  background graphs once and, for the oracle, each stream item with the ontology's schema;
- :mod:`~rsep.reasoning.closure`: the engine's closure tables and :func:`entail_batch`, the
  same entailment of stream items as vectorised joins on term ids;
- :mod:`~rsep.reasoning.regime`: what a plan's parameters ask of its graphs and streams.

The oracle imports only the reasoner; the closure module (which reads the engine's
batches) is loaded when one of its names is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rsep.reasoning.reasoner import Ontology, materialise, schema
from rsep.reasoning.regime import background, ontology_of

if TYPE_CHECKING:
    from rsep.reasoning.closure import Closure, entail_batch, entail_events

__all__ = [
    "Closure",
    "Ontology",
    "background",
    "entail_batch",
    "entail_events",
    "materialise",
    "ontology_of",
    "schema",
]


def __getattr__(name: str) -> Any:
    if name in ("Closure", "entail_batch", "entail_events"):
        from rsep.reasoning import closure

        return getattr(closure, name)
    raise AttributeError(name)
