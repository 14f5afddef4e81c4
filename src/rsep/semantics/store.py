"""SPARQL over one RDF graph, by pyoxigraph: the part of the oracle that is not about time.

Event patterns match a SPARQL graph pattern against one graph at a time (an event's graph,
a window's snapshot, a background knowledge base) and test expressions that cross events
(a FILTER comparing ``?p2`` of one event with ``?p1`` of an earlier one). pyoxigraph does
both exactly (DESIGN.md); this module gives it the graphs and the bindings:

- :class:`LiteralForms`: pyoxigraph normalises typed literals as it stores them (oxigraph
  issue #526); the terms it returns are mapped back to the data's own;
- :class:`GraphMatcher`: ``⟦P⟧_G`` for a graph pattern ``P`` and a graph ``G``, optionally
  under a mapping ``μ`` already bound (``⟦μ(P)⟧_G`` joined with ``μ``, RSEP-QL Eq. (7)'s
  ``μ2(E1)``), an expression's value and effective boolean value under ``μ``.

Bindings are given as SEP-0007 substitutions: the variable is bound before evaluation, so a
FILTER inside the pattern sees it, and the result carries it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QuerySolutions,
    Store,
    Triple,
    Variable,
)

from rsep.algebra.events import GraphPatternRef
from rsep.errors import UserError
from rsep.rdf.terms import XSD, Term
from rsep.semantics.event_mapping import Mu

__all__ = ["GraphMatcher", "LiteralForms"]

_UNCHANGED = frozenset({XSD + "string", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"})
_PROBE = NamedNode("urn:rsep:probe")
_MAX_CACHED_STORES = 4096


@dataclass
class LiteralForms:
    """How pyoxigraph stores each literal, learned by loading it and reading it back, and
    the way back from a stored form to the data's literal."""

    _stored: dict[Literal, Literal] = field(default_factory=dict)

    def stored_form(self, literal: Literal) -> Literal:
        """``literal`` as pyoxigraph's store and query results give it back."""
        if literal.datatype.value in _UNCHANGED:
            return literal
        if literal not in self._stored:
            self.learn([literal])
        return self._stored[literal]

    def learn(self, literals: Iterable[Literal]) -> None:
        """Learn the stored form of each literal not known yet."""
        todo = [x for x in dict.fromkeys(literals) if x not in self._stored]
        todo = [x for x in todo if x.datatype.value not in _UNCHANGED]
        if not todo:
            return
        probe = Store()
        probe.extend(
            Quad(NamedNode(f"urn:rsep:literal:{i}"), _PROBE, literal, DefaultGraph())
            for i, literal in enumerate(todo)
        )
        for quad in probe:
            index = int(quad.subject.value.rsplit(":", 1)[1])
            stored = quad.object
            if isinstance(stored, Literal):
                self._stored[todo[index]] = stored

    def originals(self, literals: Iterable[Literal], where: str) -> dict[Literal, Literal]:
        """Stored form -> data's literal, for the literals normalisation changes; a
        :class:`~rsep.errors.UserError` (naming ``where``) if two literals get one stored
        form, since the store could no longer tell them apart."""
        typed = [x for x in literals if x.datatype.value not in _UNCHANGED]
        self.learn(typed)
        found: dict[Literal, Literal] = {}
        for literal in typed:
            stored = self._stored[literal]
            other = found.setdefault(stored, literal)
            if other != literal:
                raise UserError(
                    f"{where} holds {other} and {literal}, which pyoxigraph stores as one "
                    f"term, {stored} (it normalises literals: oxigraph issue #526); the "
                    "oracle cannot evaluate this data exactly"
                )
        return {stored: literal for stored, literal in found.items() if stored != literal}


@dataclass
class _GraphStore:
    store: Store
    originals: dict[Literal, Literal]


class GraphMatcher:
    """Evaluates SPARQL graph patterns and expressions over single RDF graphs, with
    pyoxigraph; the terms it returns are the data's own (:class:`LiteralForms`).

    Stores are built once per distinct graph and kept (a graph is a ``frozenset`` of
    triples: events and windows repeat)."""

    def __init__(self, forms: LiteralForms | None = None) -> None:
        self.forms = forms if forms is not None else LiteralForms()
        self._stores: dict[frozenset[Triple], _GraphStore] = {}
        self._empty = Store()

    def _graph(self, graph: frozenset[Triple]) -> _GraphStore:
        known = self._stores.get(graph)
        if known is not None:
            return known
        store = Store()
        store.extend(Quad(x.subject, x.predicate, x.object, DefaultGraph()) for x in graph)
        literals = [x.object for x in graph if isinstance(x.object, Literal)]
        built = _GraphStore(store, self.forms.originals(literals, "a graph"))
        if len(self._stores) >= _MAX_CACHED_STORES:
            self._stores.clear()
        self._stores[graph] = built
        return built

    def match(
        self,
        pattern: GraphPatternRef | str,
        graph: frozenset[Triple] | Iterable[Triple],
        bound: Mapping[str, Term] | None = None,
    ) -> list[Mu]:
        """``⟦P⟧_G`` as a list of mappings (a bag, SPARQL 1.1 sec. 18.5), each joined with
        ``bound``: the solutions of ``μ(P)`` where ``μ = bound``. ``pattern`` is a group
        pattern's text (``{ … }``) or a :class:`GraphPatternRef`."""
        text = pattern.text if isinstance(pattern, GraphPatternRef) else pattern
        frozen = graph if isinstance(graph, frozenset) else frozenset(graph)
        stored = self._graph(frozen)
        return self._select(stored.store, stored.originals, text, bound or {})

    def _select(
        self,
        store: Store,
        originals: Mapping[Literal, Literal],
        text: str,
        bound: Mapping[str, Term],
    ) -> list[Mu]:
        names = sorted(bound)
        scope = ""
        if names:
            variables = " ".join("?" + n for n in names)
            scope = f"VALUES ({variables}) {{ ({' '.join('UNDEF' for _ in names)}) }} "
        query = f"SELECT * WHERE {{ {scope}{text} }}"
        substitutions: dict[Variable, NamedNode | BlankNode | Literal | Triple] = {
            Variable(n): bound[n] for n in names
        }
        try:
            found = store.query(query, substitutions=substitutions)
        except SyntaxError as exc:
            raise UserError(f"the plan's graph pattern is not SPARQL 1.1: {exc}") from None
        if not isinstance(found, QuerySolutions):  # pragma: no cover - a SELECT query
            raise TypeError("a SELECT query returned no solutions")
        columns = [v.value for v in found.variables]
        out: list[Mu] = []
        for row in found:
            mapping: dict[str, Term] = {}
            for name in columns:
                term = row[name]
                if term is None:
                    continue
                if not isinstance(term, NamedNode | BlankNode | Literal):
                    raise UserError(f"?{name} is bound to an RDF-star triple, not supported")
                if name in bound:
                    term = bound[name]  # the caller's own term, not the normalised one
                elif isinstance(term, Literal):
                    term = originals.get(term, term)
                mapping[name] = term
            out.append(Mu(mapping))
        return out

    def value(self, expression: str, mu: Mapping[str, Term]) -> Term | None:
        """The value of a SPARQL expression under ``μ`` (``BIND(e AS ?v)``), or ``None``
        when it raises an error (unbound variable, type error)."""
        rows = self._select(self._empty, {}, f"{{ BIND(({expression}) AS ?_value) }}", mu)
        found = rows[0].get("_value") if rows else None
        if isinstance(found, Literal):
            known = {self.forms.stored_form(t): t for t in mu.values() if isinstance(t, Literal)}
            return known.get(found, found)
        return found

    def holds(self, expression: str, mu: Mapping[str, Term]) -> bool:
        """Whether ``FILTER(expression)`` keeps ``μ``: its effective boolean value is true
        (an error counts as false, SPARQL 1.1 sec. 17.2)."""
        return bool(self._select(self._empty, {}, f"{{ FILTER({expression}) }}", mu))
