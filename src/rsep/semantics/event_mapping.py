"""Solution mappings and event mappings, the values every event pattern evaluates to.

- :class:`~rsep.rdf.sparql.Mu` (from ``rsep.rdf``, which the engine shares): a SPARQL
  solution mapping ``μ``, immutable and hashable;
- :class:`EventMapping`: a mapping with the interval in which its events occurred:
  RSEP-QL's event mapping ``(μ, t1, t2)`` (Sect. 4.2), EP-SPARQL's solution
  ``⟨μ, tα, tω⟩`` (Sect. 4.2), CQELS-CEP's mapping with interval ``(μ, [t1, t2])``
  (Sect. 4.2), and one SPAseq match ``(τ, Ω)`` reduced to its first and last event times;
- :class:`EventEvaluation`: what the oracle asks of each language's evaluator: the
  answer of its event pattern at an evaluation instant.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from rsep.rdf.sparql import Mu

__all__ = ["EventEvaluation", "EventMapping", "Mu", "compatible_pairs"]


@dataclass(frozen=True)
class EventMapping:
    """``(μ, t1, t2)``: a mapping and the interval ``[t1, t2]`` spanned by the stream items
    it was found in (RSEP-QL Sect. 4.2; EP-SPARQL's ``⟨μ, tα, tω⟩``; CQELS-CEP's mapping
    with interval). A point ``t1 == t2`` is an atomic event (CQELS-CEP, footnote 3)."""

    mu: Mu
    t1: int
    t2: int

    def __post_init__(self) -> None:
        if self.t1 > self.t2:
            raise ValueError(f"an event mapping ends before it starts: [{self.t1}, {self.t2}]")

    @property
    def interval(self) -> tuple[int, int]:
        """``(t1, t2)``."""
        return (self.t1, self.t2)

    def __repr__(self) -> str:
        return f"({self.mu!r}, {self.t1}, {self.t2})"


def compatible_pairs(
    left: Sequence[EventMapping], right: Sequence[EventMapping]
) -> Iterator[tuple[EventMapping, EventMapping]]:
    """Every pair ``(m1, m2)`` with ``m1.mu ∼ m2.mu``, in the order of ``left`` then
    ``right``: the candidates every binary event operator starts from."""
    for a in left:
        for b in right:
            if a.mu.compatible(b.mu):
                yield a, b


class EventEvaluation(Protocol):
    """An event pattern of one language bound to its data: the oracle's step 1 (RSP-QL
    Def. 24) for plans whose r2r is an event pattern.

    ``at(t, previous)`` is the answer at the evaluation instant ``t`` (``previous`` is the
    instant before, or ``None``): event mappings, or plain mappings where the language
    drops the time annotations (RSEP-QL's ``MATCH``). ``instants()`` are the times at which
    the answer may change, used as ET when the plan has no window whose report policy
    gives one.
    """

    def at(self, t: int, previous: int | None) -> Sequence[EventMapping | Mu]:
        """The answer at ``t``."""
        ...

    def instants(self) -> Sequence[int]:
        """The instants at which the answer may change, ascending."""
        ...
