"""The pure pieces of EP-SPARQL's evaluation over triple occurrences (seed 002, Sect. 4.2),
shared by the oracle (``rsep.semantics.epsparql``) and the engine (``rsep.engine.epsparql``),
which may not import each other (DESIGN.md):

- :class:`TriplePatterns`: a group's triple patterns (a BGP's ``P``, a CONSTRUCT template
  ``P_q``), a pattern's blank node being a non-distinguished variable (footnote 4), and
  :func:`choose`, one occurrence taken for a triple pattern (``BGP``);
- :func:`sigma`: ``σ_{tα tω}(F)``, the time functions of a FILTER replaced by the interval;
- :func:`derived_triples`: ``μ(P_q)`` of the Q-closure, with one skolem blank node per rule,
  blank node of ``P_q`` and solution.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pyoxigraph import BlankNode, NamedNode, QuerySolutions, QueryTriples, Store, Triple

from rsep.errors import UserError
from rsep.rdf.sparql import STRING_OR_IRI, Mu
from rsep.rdf.terms import XSD, Term
from rsep.rdf.time import ms_to_datetime

__all__ = [
    "PatternTriple",
    "Slot",
    "TriplePatterns",
    "Variable",
    "choose",
    "derived_triples",
    "sigma",
    "timed",
]

_MARKER = "urn:rsep:epsparql:variable:"
"""Variables are substituted by IRIs under this stem to read a pattern's triples back."""


@dataclass(frozen=True)
class Variable:
    """A variable of a triple pattern; ``distinguished`` is false for a blank node of the
    pattern (footnote 4: a non-distinguished variable, matched but not in ``dom(μ)``)."""

    name: str
    distinguished: bool = True


Slot = Term | Variable
PatternTriple = tuple[Slot, Slot, Slot]


@dataclass(frozen=True)
class TriplePatterns:
    """The triple patterns of a group ``{ … }`` (a BGP's ``P`` or a CONSTRUCT template
    ``P_q``), read back from pyoxigraph: the pattern is used as a CONSTRUCT template with
    every variable bound to a marker IRI, so SPARQL's own parser expands ``;``, ``,``,
    ``a`` and prefixed names. Its blank nodes are non-distinguished variables (footnote 4),
    numbered in a fixed order (so a mapping binds the same term in every run); in a
    template, fresh per solution."""

    triples: tuple[PatternTriple, ...]
    variables: frozenset[str]

    @classmethod
    def parse(cls, text: str, where: str) -> TriplePatterns:
        """The triple patterns of the group ``text``; a :class:`~rsep.errors.UserError`
        naming ``where`` if it is not a list of triples (each text read once per process)."""
        return _parse(text, where)

    @classmethod
    def read(cls, text: str, where: str) -> TriplePatterns:
        """:meth:`parse`, uncached."""
        store = Store()
        try:
            selected = store.query(f"SELECT * WHERE {text}")
            if not isinstance(selected, QuerySolutions):  # pragma: no cover - a SELECT
                raise TypeError("a SELECT query returned no solutions")
            names = [v.value for v in selected.variables]
            markers = " ".join(f"<{_MARKER}{n}>" for n in names)
            values = f"VALUES ({' '.join('?' + n for n in names)}) {{ ({markers}) }}"
            built = store.query(f"CONSTRUCT {text} WHERE {{ {values if names else ''} }}")
        except SyntaxError as exc:
            raise UserError(
                f"{where} is not a list of triple patterns (EP-SPARQL Sect. 4.2 defines "
                f"BGP, Join, Union, LeftJoin, Filter and the temporal joins): "
                f"{' '.join(text.split())} ({exc})"
            ) from None
        if not isinstance(built, QueryTriples):  # pragma: no cover - a CONSTRUCT
            raise TypeError("a CONSTRUCT query returned no triples")
        found = sorted(built, key=_shape)
        blanks: dict[BlankNode, Variable] = {}

        def slot(term: Term) -> Slot:
            if isinstance(term, NamedNode) and term.value.startswith(_MARKER):
                return Variable(term.value.removeprefix(_MARKER))
            if isinstance(term, BlankNode):
                return blanks.setdefault(term, Variable(f"_b{len(blanks)}", distinguished=False))
            return term

        triples = tuple((slot(x.subject), slot(x.predicate), slot(x.object)) for x in found)
        return cls(triples, frozenset(names))


@functools.lru_cache(maxsize=1024)
def _parse(text: str, where: str) -> TriplePatterns:
    return TriplePatterns.read(text, where)


def _shape(triple: Triple) -> str:
    """A triple's text with blank nodes blanked: the order in which a pattern's blank
    nodes are numbered, the same in every run."""
    return " ".join("_" if isinstance(t, BlankNode) else str(t) for t in triple)


class Occurring(Protocol):
    """A triple occurrence ``⟨⟨s, p, o⟩, t, t'⟩`` as the oracle or the engine holds it."""

    @property
    def triple(self) -> Triple:
        """``⟨s, p, o⟩``."""
        ...


OccurrenceT = TypeVar("OccurrenceT", bound=Occurring)


def choose(
    pattern: PatternTriple,
    occurrence: OccurrenceT,
    binding: dict[str, Term],
    chosen: dict[Triple, OccurrenceT],
    key: Callable[[Term], object],
) -> tuple[dict[str, Term], dict[Triple, OccurrenceT]] | None:
    """``occurrence`` taken for ``pattern`` in a ``BGP`` solution (Sect. 4.2): ``binding``
    extended so that the pattern is the occurrence's triple, and ``chosen`` (the occurrence
    taken for each triple of ``μ(P)``) with it; ``None`` if the terms differ or another
    occurrence of the triple was taken (``μ(P)`` is a set). Two terms match when equal or
    when ``key`` (a literal's stored form, as matching compares it) makes them equal."""
    triple = occurrence.triple
    out = binding
    for slot, term in zip(pattern, triple, strict=True):
        if isinstance(slot, Variable):
            bound = out.get(slot.name)
            if bound is None:
                out = {**out, slot.name: term}
            elif bound != term and key(bound) != key(term):
                return None
        elif slot != term and key(slot) != key(term):
            return None
    taken = chosen.get(triple)
    if taken is not None and taken != occurrence:
        return None  # one occurrence per triple of the set μ(P)
    return out, {**chosen, triple: occurrence}


# σ (Sect. 4.2) ------------------------------------------------------------------------------

_TIME_FUNCTION = re.compile(
    STRING_OR_IRI + r"|\bget(DURATION|STARTTIME|ENDTIME)\s*\(\s*\)",
    re.IGNORECASE,
)


def _duration(ms: int) -> str:
    seconds = str(ms // 1000) if ms % 1000 == 0 else f"{ms // 1000}.{ms % 1000:03d}"
    return f'"PT{seconds}S"^^<{XSD}duration>'


def _datetime(ms: int) -> str:
    return f'"{ms_to_datetime(ms)}"^^<{XSD}dateTime>'


def sigma(expression: str, t_alpha: int, t_omega: int) -> str:
    """``σ_{tα tω}(F)`` (EP-SPARQL Sect. 4.2): ``F`` with ``getDURATION()`` replaced by
    ``tω - tα`` (an ``xsd:duration``, Sect. 4.1), ``getSTARTTIME()`` by ``tα`` and
    ``getENDTIME()`` by ``tω`` (``xsd:dateTime``); strings and IRIs in ``F`` are left alone."""

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        name = match.group(2).upper()
        if name == "DURATION":
            return _duration(t_omega - t_alpha)
        return _datetime(t_alpha if name == "STARTTIME" else t_omega)

    return _TIME_FUNCTION.sub(replace, expression)


def timed(expression: str) -> bool:
    """Whether ``σ`` changes ``expression`` (it names a time function, Sect. 4.2)."""
    return any(m.group(2) is not None for m in _TIME_FUNCTION.finditer(expression))


# The Q-closure's derived triples (Sect. 4.2) -------------------------------------------------


def derived_triples(
    index: int, template: TriplePatterns, mu: Mu, t_alpha: int, t_omega: int
) -> list[Triple]:
    """``μ(P_q)`` for one solution ``⟨μ, tα, tω⟩`` of rule ``index`` (the Q-closure,
    Sect. 4.2), or nothing unless ``μ`` binds every variable of ``P_q`` (condition (1)). A
    blank node of ``P_q`` is one skolem blank node per rule and solution, the same in every
    round (so the iteration ends); a triple with a literal as subject or predicate is no
    RDF triple and is left out (SPARQL 1.1 sec. 16.2)."""
    if not template.variables <= mu.domain:
        return []
    digest = hashlib.sha1(
        repr((sorted(mu.text().items()), t_alpha, t_omega)).encode(), usedforsecurity=False
    ).hexdigest()[:16]

    def term(slot: Slot) -> Term:
        if isinstance(slot, Variable):
            if slot.distinguished:
                return mu[slot.name]
            return BlankNode(f"ep{index}{slot.name.lstrip('_')}x{digest}")
        return slot

    out = []
    for s, p, o in template.triples:
        try:
            triple = Triple(term(s), term(p), term(o))  # type: ignore[arg-type]
        except TypeError:
            continue  # a literal as subject or predicate: no RDF triple (SPARQL sec. 16.2)
        out.append(triple)
    return out
