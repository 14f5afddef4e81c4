"""Triple occurrences and the incremental ``BGP`` of EP-SPARQL (seed 002, Sect. 4.2).

An RDF stream is a set of triple occurrences ``⟨⟨s, p, o⟩, t, t'⟩`` (:class:`Occurrence`).
The engine keeps the occurrences that can still take part in a solution in an
:class:`OccurrenceIndex` (by predicate, and by predicate with subject or object, so a
triple pattern with a bound term reads one bucket), and evaluates ``BGP(P)`` only for the
occurrences that just arrived (:func:`bgp_delta`): ``BGP`` is monotone in the stream, so the
solutions over ``S ∪ Δ`` are the old ones plus those choosing at least one occurrence of
``Δ``. A pattern's triples are read by :class:`rsep.algebra.occurrences.TriplePatterns`, which
the oracle reads them with too (a pattern's blank node is a non-distinguished variable,
footnote 4).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import NamedTuple

from pyoxigraph import Literal, Triple

from rsep.algebra.occurrences import PatternTriple, Slot, TriplePatterns, Variable, choose
from rsep.errors import UserError
from rsep.rdf.sparql import LiteralForms, Mu
from rsep.rdf.terms import Term

__all__ = ["Occurrence", "OccurrenceIndex", "bgp_delta"]


class Occurrence(NamedTuple):
    """A triple occurrence ``⟨⟨s, p, o⟩, t, t'⟩``: the triple holds over ``[t, t']``
    (EP-SPARQL Sect. 4.2)."""

    triple: Triple
    t_start: int
    t_end: int


class OccurrenceIndex:
    """The occurrences of one stream that may still be used, indexed for triple patterns:
    by predicate, by (predicate, subject) and by (predicate, object); literals are keyed
    by the form pyoxigraph stores them in (the oracle matches constants so)."""

    def __init__(self, forms: LiteralForms) -> None:
        self.forms = forms
        self.members: set[Occurrence] = set()
        self._all: list[Occurrence] = []
        self._by_p: dict[object, list[Occurrence]] = {}
        self._by_ps: dict[tuple[object, object], list[Occurrence]] = {}
        self._by_po: dict[tuple[object, object], list[Occurrence]] = {}
        self._kept = 0

    def __len__(self) -> int:
        return len(self.members)

    def __getstate__(self) -> dict[str, object]:
        return {"members": sorted(self.members, key=lambda o: (o.t_end, o.t_start, str(o)))}

    def __setstate__(self, state: dict[str, object]) -> None:
        members = state["members"]
        assert isinstance(members, list)
        self.__init__(LiteralForms())  # type: ignore[misc]
        self.add(members)

    def key(self, term: Term) -> object:
        """What matching compares: a literal's stored form, any other term itself."""
        return self.forms.stored_form(term) if isinstance(term, Literal) else term

    def add(self, found: Iterable[Occurrence]) -> list[Occurrence]:
        """Add the occurrences not held yet (``S`` is a set); return those added."""
        added = []
        for occurrence in found:
            if occurrence in self.members:
                continue
            self.members.add(occurrence)
            added.append(occurrence)
            s, p, o = occurrence.triple
            self._all.append(occurrence)
            self._by_p.setdefault(p, []).append(occurrence)
            self._by_ps.setdefault((p, self.key(s)), []).append(occurrence)
            self._by_po.setdefault((p, self.key(o)), []).append(occurrence)
        return added

    def keep(self, floor: int, force: bool = False) -> None:
        """Keep only the occurrences starting at or after ``floor`` (amortised: when
        their number doubled since the last time, or ``force``)."""
        if not force and len(self._all) < max(64, 2 * self._kept):
            return
        kept = [o for o in self._all if o.t_start >= floor]
        forms = self.forms
        self.__init__(forms)  # type: ignore[misc]
        self.add(kept)
        self._kept = len(kept)

    def candidates(self, pattern: PatternTriple, binding: dict[str, Term]) -> list[Occurrence]:
        """The occurrences that may match ``pattern`` under ``binding`` (a superset)."""
        s, p, o = (_bound(slot, binding) for slot in pattern)
        if p is None:
            return self._all
        if s is not None:
            return self._by_ps.get((p, self.key(s)), [])
        if o is not None:
            return self._by_po.get((p, self.key(o)), [])
        return self._by_p.get(p, [])


def _bound(slot: Slot, binding: dict[str, Term]) -> Term | None:
    if isinstance(slot, Variable):
        return binding.get(slot.name)
    return slot


Solution = tuple[Mu, int, int]
"""``⟨μ, tα, tω⟩``."""


def bgp_delta(
    patterns: TriplePatterns, index: OccurrenceIndex, fresh: Collection[Occurrence]
) -> set[Solution]:
    """The solutions of ``BGP(P)`` (EP-SPARQL Sect. 4.2) over ``index`` (which holds
    ``fresh`` already) that choose at least one occurrence of ``fresh``: for the first
    pattern that takes a fresh occurrence, the patterns before it take old ones and those
    after it any. ``⟨μ, min tᵢ, max t'ᵢ⟩``; ``μ(P)`` is a set, so two patterns that ``μ``
    makes one triple take one occurrence of it."""
    count = len(patterns.triples)
    if not count:
        raise UserError("an empty stream pattern has no interval (EP-SPARQL Sect. 4.2, BGP)")
    found: set[Solution] = set()
    if not fresh:
        return found
    delta = fresh if isinstance(fresh, set | frozenset) else set(fresh)
    key = index.key
    triples = patterns.triples
    names = patterns.variables

    def extend(
        first: int, position: int, binding: dict[str, Term], chosen: dict[Triple, Occurrence]
    ) -> None:
        if position == count:
            used = chosen.values()
            mu = Mu((k, v) for k, v in binding.items() if k in names)
            found.add((mu, min(o.t_start for o in used), max(o.t_end for o in used)))
            return
        pattern = triples[position]
        pool: Iterable[Occurrence]
        if position == first:
            pool = delta
        elif position < first:
            pool = [o for o in index.candidates(pattern, binding) if o not in delta]
        else:
            pool = index.candidates(pattern, binding)
        for occurrence in pool:
            taken = choose(pattern, occurrence, binding, chosen, key)
            if taken is not None:
                extend(first, position + 1, *taken)

    for first in range(count):
        extend(first, 0, {}, {})
    return found
