"""Solution mappings and event mappings, the values every event pattern evaluates to.

- :class:`Mu`: a SPARQL solution mapping ``μ`` (a partial function from variables to RDF
  terms), immutable and hashable so that bags and sets of them can be kept;
  compatibility and join as SPARQL 1.1 defines them (sec. 18.5; RSP-QL Def. 3);
- :class:`EventMapping`: a mapping with the interval in which its events occurred:
  RSEP-QL's event mapping ``(μ, t1, t2)`` (Sect. 4.2), EP-SPARQL's solution
  ``⟨μ, tα, tω⟩`` (Sect. 4.2), CQELS-CEP's mapping with interval ``(μ, [t1, t2])``
  (Sect. 4.2), and one SPAseq match ``(τ, Ω)`` reduced to its first and last event times;
- :class:`EventEvaluation`: what the oracle asks of each language's evaluator: the
  answer of its event pattern at an evaluation instant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rsep.rdf.terms import Term

__all__ = ["EventEvaluation", "EventMapping", "Mu", "compatible_pairs"]


class Mu(Mapping[str, Term]):
    """A solution mapping ``μ``: variables (named without ``?``) to RDF terms.

    Immutable and hashable; two mappings are equal when they bind the same variables to
    the same terms (RDF term equality, so ``"1"^^xsd:integer`` and ``"01"^^xsd:integer``
    differ, as in SPARQL's compatibility, sec. 18.5).
    """

    __slots__ = ("_hash", "_items", "_map")

    def __init__(self, items: Mapping[str, Term] | Iterable[tuple[str, Term]] = ()) -> None:
        pairs = dict(items.items() if isinstance(items, Mapping) else items)
        self._map: dict[str, Term] = pairs
        self._items: tuple[tuple[str, Term], ...] = tuple(sorted(pairs.items()))
        self._hash = hash(self._items)

    def __getitem__(self, name: str) -> Term:
        return self._map[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mu):
            return self._items == other._items
        return NotImplemented

    def __repr__(self) -> str:
        inner = ", ".join(f"?{k}: {v}" for k, v in self._items)
        return "{" + inner + "}"

    @property
    def domain(self) -> frozenset[str]:
        """``dom(μ)``, the variables bound."""
        return frozenset(self._map)

    def compatible(self, other: Mapping[str, Term]) -> bool:
        """``μ1 ∼ μ2``: every shared variable bound to the same term (SPARQL 1.1 sec. 18.3)."""
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        for name, term in small.items():
            found = large.get(name)
            if found is not None and found != term:
                return False
        return True

    def join(self, other: Mapping[str, Term]) -> Mu:
        """``μ1 ∪ μ2`` of two compatible mappings; a ``ValueError`` if they are not."""
        if not self.compatible(other):
            raise ValueError(f"incompatible mappings {self!r} and {Mu(other)!r}")
        merged = dict(self._map)
        merged.update(other)
        return Mu(merged)

    def project(self, names: Iterable[str]) -> Mu:
        """``μ`` restricted to ``names`` (SPARQL's projection)."""
        wanted = set(names)
        return Mu((k, v) for k, v in self._map.items() if k in wanted)

    def text(self) -> dict[str, str]:
        """The mapping with terms in N-Triples syntax (the oracle's comparable form)."""
        return {name: str(term) for name, term in self._items}


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
