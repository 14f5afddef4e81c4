"""Entailment by a maintained reasoner: background graphs materialised once, stream items
entailed with the ontology's schema (the oracle's computation, and the engine's exact path).

``reasonable`` (a Rust OWL 2 RL/RDF reasoner) computes the closure; rsep only chooses what
it reads and what of its output a regime keeps (docs/reasoning.md):

- ``owl_rl``: the OWL 2 RL/RDF rules (OWL 2 Profiles Sect. 4.3) as the reasoner applies them;
- ``rdfs``: the rules rdfs2, rdfs3, rdfs5, rdfs7, rdfs9 and rdfs11 (RDF 1.1 Semantics
  Sect. 9.2.1): triples in the OWL vocabulary are carried but withheld from the reasoner, so
  only its rules shared with RDFS (prp-dom, prp-rng, prp-spo1, cax-sco, scm-sco, scm-spo)
  fire, and only their conclusions (``rdf:type``, ``rdfs:subClassOf``,
  ``rdfs:subPropertyOf`` and data triples) are kept.

Both drop what every individual or class trivially entails (:func:`_trivial`): ``x rdf:type
owl:Thing``, ``owl:Thing``/``owl:Nothing`` typed as classes, reflexive ``owl:sameAs``,
``rdfs:subClassOf`` and ``rdfs:subPropertyOf``, as the RDFS axiomatic triples and rdfs4,
rdfs6, rdfs8, rdfs10, rdfs12, rdfs13 are not entailed either.

A stream item ``G`` is entailed with the schema ``T`` of the background graphs
(:func:`schema`) as ``G ∪ (M(G ∪ T) ∖ M(T))`` (:meth:`Ontology.entail`): the triples the item
adds to the ontology's own consequences, EP-SPARQL Sect. 5's "background knowledge" reasoned
with each event.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.algebra.params import Entailment
from rsep.errors import UserError

if TYPE_CHECKING:
    import rdflib

__all__ = [
    "OWL",
    "RDF",
    "RDFS",
    "TYPE",
    "Ontology",
    "is_schema",
    "materialise",
    "schema",
]

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"

TYPE = RDF + "type"
_NOT_SCHEMA = frozenset({OWL + "sameAs", OWL + "differentFrom"})
_OWL_ONLY = frozenset({RDFS + "domain", RDFS + "range"})  # scm-dom*/scm-rng*: not RDFS rules
_REFLEXIVE = frozenset({OWL + "sameAs", RDFS + "subClassOf", RDFS + "subPropertyOf"})
_VOCABULARY = (RDFS, OWL)


def _iri(term: object) -> str | None:
    return term.value if isinstance(term, NamedNode) else None


def _in_vocabulary(iri: str | None, spaces: tuple[str, ...] = _VOCABULARY) -> bool:
    return iri is not None and iri.startswith(spaces)


def is_schema(triple: Triple) -> bool:
    """Whether ``triple`` states schema (TBox), not instance data: its predicate is an RDFS
    or OWL term other than ``owl:sameAs``/``owl:differentFrom``, ``rdf:first``/``rdf:rest``
    (an OWL list), or it types a subject with an RDFS or OWL class (``owl:Class``,
    ``owl:TransitiveProperty`` …)."""
    predicate = triple.predicate.value
    if predicate == TYPE:
        return _in_vocabulary(_iri(triple.object))
    if predicate in (RDF + "first", RDF + "rest"):
        return True
    return _in_vocabulary(predicate) and predicate not in _NOT_SCHEMA


def schema(graphs: Iterable[Iterable[Triple]]) -> frozenset[Triple]:
    """The schema triples (:func:`is_schema`) of ``graphs``: the ontology stream items are
    entailed with (an individual of a background graph takes no part)."""
    return frozenset(t for graph in graphs for t in graph if is_schema(t))


def _owl_vocabulary(triple: Triple) -> bool:
    """Whether ``triple`` uses the OWL vocabulary as predicate or as a type."""
    predicate = triple.predicate.value
    if predicate == TYPE:
        return _in_vocabulary(_iri(triple.object), (OWL,))
    return predicate.startswith(OWL)


def _rdfs_conclusion(triple: Triple) -> bool:
    """Whether the reasoner's ``triple`` may conclude an RDFS rule: no OWL term in it, and
    not a domain or range the RDFS rules never derive."""
    if triple.predicate.value in _OWL_ONLY:
        return False
    return not any(_in_vocabulary(_iri(term), (OWL,)) for term in triple)


def _to_rdflib(term: object) -> rdflib.term.Node:
    import rdflib  # loaded when entailment is asked: the reasoner reads rdflib terms

    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language, normalize=False)
        return rdflib.Literal(
            term.value, datatype=rdflib.URIRef(term.datatype.value), normalize=False
        )
    raise UserError(f"entailment takes IRIs, blank nodes and literals, not {term}")


def _from_rdflib(term: rdflib.term.Node) -> NamedNode | BlankNode | Literal:
    import rdflib

    if isinstance(term, rdflib.URIRef):
        return NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return Literal(str(term), language=term.language)
        datatype = term.datatype
        if datatype is None:
            return Literal(str(term))
        return Literal(str(term), datatype=NamedNode(str(datatype)))
    raise UserError(f"the reasoner gave an unexpected term {term!r}")


def _trivial(triple: Triple) -> bool:
    """What every individual or class trivially entails (the module's docstring)."""
    predicate = triple.predicate.value
    if predicate in _REFLEXIVE and triple.subject == triple.object:
        return True
    if predicate != TYPE:
        return False
    kind = _iri(triple.object)
    if kind == OWL + "Thing":
        return True
    return _iri(triple.subject) in (OWL + "Thing", OWL + "Nothing") and kind == OWL + "Class"


def _reason(triples: Iterable[Triple]) -> set[Triple]:
    """The OWL 2 RL closure of ``triples`` by ``reasonable``."""
    import rdflib
    import reasonable  # type: ignore[import-untyped]

    reasoner = reasonable.PyReasoner()
    graph = rdflib.Graph()
    for t in triples:
        graph.add((_to_rdflib(t.subject), _to_rdflib(t.predicate), _to_rdflib(t.object)))
    if not len(graph):
        return set()
    reasoner.from_graph(graph)
    out: set[Triple] = set()
    for s, p, o in reasoner.reason():
        subject = _from_rdflib(s)
        if isinstance(subject, Literal) or not isinstance(p, rdflib.URIRef):
            continue  # a generalised triple: a literal subject, a predicate not an IRI
        out.add(Triple(subject, NamedNode(str(p)), _from_rdflib(o)))
    return out


def materialise(graph: Set[Triple], entailment: Entailment) -> frozenset[Triple]:
    """``graph`` with its consequences under ``entailment`` (the module's docstring): the
    reasoner's closure, less the trivial triples; under ``rdfs`` the OWL vocabulary is
    withheld from the reasoner and only the RDFS rules' conclusions kept. The last few
    graphs' closures are kept (a background graph that is also the ontology is reasoned
    once)."""
    if entailment is Entailment.NONE:
        return frozenset(graph)
    return _materialised(frozenset(graph), entailment)


@lru_cache(maxsize=4)
def _materialised(graph: frozenset[Triple], entailment: Entailment) -> frozenset[Triple]:
    return _closure(graph, entailment)


def _closure(graph: frozenset[Triple], entailment: Entailment) -> frozenset[Triple]:
    """:func:`materialise`, not kept."""
    plain = [t for t in graph if not isinstance(t.object, Triple)]  # RDF 1.2 triple terms
    if entailment is Entailment.RDFS:
        reasoned = [t for t in plain if not _owl_vocabulary(t)]
        derived = {t for t in _reason(reasoned) if _rdfs_conclusion(t)}
    else:
        derived = _reason(plain)
    return frozenset(graph) | frozenset(t for t in derived if not _trivial(t) or t in graph)


@dataclass(frozen=True)
class Ontology:
    """The schema stream items are entailed with (:func:`schema` of the background graphs),
    its consequences ``M(T)`` computed once, and the regime."""

    triples: frozenset[Triple]
    entailment: Entailment
    closed: frozenset[Triple] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "closed", materialise(self.triples, self.entailment))

    @classmethod
    def of(cls, graphs: Iterable[Iterable[Triple]], entailment: Entailment) -> Ontology:
        """The ontology of background ``graphs`` under ``entailment``."""
        return cls(schema(graphs), entailment)

    def entail(self, graph: Set[Triple]) -> frozenset[Triple]:
        """Stream item ``graph`` entailed with the schema: ``G ∪ (M(G ∪ T) ∖ M(T))``."""
        if self.entailment is Entailment.NONE:
            return frozenset(graph)
        closed = _closure(frozenset(graph) | self.triples, self.entailment)
        return frozenset(graph) | (closed - self.closed)
