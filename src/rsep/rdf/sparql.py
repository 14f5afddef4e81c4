"""SPARQL over one RDF graph, by pyoxigraph: solution mappings and graph pattern matching.

Event patterns match a SPARQL graph pattern against one graph at a time (an event's graph,
a window's snapshot, a background knowledge base) and test expressions that cross events
(a FILTER comparing ``?p2`` of one event with ``?p1`` of an earlier one). SPARQL over one
graph is a solved problem: pyoxigraph does it exactly (DESIGN.md). This module, shared by
the oracle (``rsep.semantics``) and the engine (``rsep.engine``), gives it the graphs and the
bindings:

- :class:`Mu`: a solution mapping ``μ`` (SPARQL 1.1 sec. 18.1; RSP-QL Def. 3), immutable and
  hashable, with compatibility and join (sec. 18.3);
- :class:`LiteralForms`: pyoxigraph normalises typed literals as it stores them (oxigraph
  issue #526); the terms it returns are mapped back to the data's own;
- :class:`GraphMatcher`: ``⟦P⟧_G`` for a group pattern ``P`` and a graph ``G``, optionally
  under a mapping ``μ`` already bound (``⟦μ(P)⟧_G`` joined with ``μ``, RSEP-QL Eq. (7)'s
  ``μ2(E1)``), an expression's value and effective boolean value under ``μ``.

A mapping is bound as a ``VALUES`` row of its terms at the start of every group of the
pattern (:func:`_scopes`): each FILTER sees the terms and compares them by value (SPARQL 1.1
sec. 17.3), exactly as it would compare the terms written in their variables' place
(``μ(P)``, SPAseq Def. 7). pyoxigraph 0.5's SEP-0007 substitutions do not: for a
substituted variable the pattern does not bind, ``=``, ``!=`` and ``IN`` compare terms and
``FILTER(?v)`` keeps nothing (docs/semantics.md). Blank nodes, which ``VALUES`` cannot
write, are still substituted; for them the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Protocol

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QuerySolutions,
    QueryTriples,
    Store,
    Triple,
    Variable,
)

from rsep.errors import UserError
from rsep.rdf.terms import RDF_LANG_STRING, XSD_STRING, Term

__all__ = [
    "STRING_OR_IRI",
    "GraphMatcher",
    "LiteralForms",
    "Mu",
    "Pattern",
    "instantiate",
    "select",
]

STRING_OR_IRI = r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|<[^<>\"\s]*>)"
"""A string or IRI in a query's text: rewrites of the text leave these alone."""

_BOUND = re.compile(STRING_OR_IRI + r"|\bBOUND\s*\(\s*[?$](\w+)\s*\)", re.IGNORECASE)
_SCOPES = re.compile(
    r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'|'
    + STRING_OR_IRI
    + r"|#[^\n]*|(?<![\w?$:])(?P<keyword>VALUES|SELECT)\b"
    + r"|(?<![\w?$:])AS\s*[?$](?P<target>\w+)|(?P<brace>[{}])",
    re.IGNORECASE,
)
_SUBSELECT = re.compile(r"\s*(?:#[^\n]*\s*)*SELECT\b", re.IGNORECASE)


_BLANK_TEXT = re.compile(r"(?:\s|#[^\n]*)*")


@dataclass(frozen=True)
class _Scopes:
    """A group pattern's text cut where a mapping's ``VALUES`` row goes (:func:`_scopes`)."""

    pieces: tuple[str, ...]
    """The text cut right after the brace that opens each of its groups."""
    targets: frozenset[str]
    """The variables the text BINDs (``AS ?v``)."""
    group: bool
    """The text is one group (``{ … }``): the query's own; the last piece ends before its
    closing brace (``tail`` is that brace and what follows it)."""
    tail: str


@lru_cache(maxsize=4096)
def _scopes(text: str) -> _Scopes:
    """``text`` cut right after the brace that opens each of its groups, where a mapping's
    ``VALUES`` row goes so that the group's FILTERs, BINDs and OPTIONALs see it (a FILTER
    constrains its whole group, SPARQL 1.1 sec. 18.2.2.6; a ``VALUES`` in a group joins
    in, sec. 18.2.4.3), and the variables the text BINDs, which a row must not precede
    (sec. 18.2.1). A sub-select's groups and a ``VALUES`` block are not cut: the
    sub-select's variables are its own (sec. 18.2.1), as pyoxigraph's substitutions leave
    them."""
    cuts: list[int] = []
    targets: set[str] = set()
    opened: list[bool] = []  # per open brace: a group of the pattern (cut)
    data = False  # the next brace opens a VALUES block
    first = close = -1  # the outermost group: its braces
    for found in _SCOPES.finditer(text):
        keyword, target, brace = found.group("keyword", "target", "brace")
        if keyword is not None:
            data = data or keyword.upper() == "VALUES"
        elif target is not None:
            targets.add(target)
        elif brace == "{":
            cut = not data and all(opened) and not _SUBSELECT.match(text, found.end())
            if first < 0:
                first = found.start()
            opened.append(cut)
            data = False
            if cut:
                cuts.append(found.end())
        elif brace == "}" and opened:
            opened.pop()
            if not opened and close < 0:
                close = found.start()
    group = (
        0 <= first < close
        and _BLANK_TEXT.fullmatch(text, 0, first) is not None
        and _BLANK_TEXT.fullmatch(text, close + 1) is not None
    )
    end = close if group else len(text)
    bounds = [0, *cuts, end]
    pieces = tuple(text[a:b] for a, b in pairwise(bounds))
    return _Scopes(pieces, frozenset(targets), group, text[end:])


def _row(names: Iterable[str], mu: Mapping[str, Term]) -> str:
    """``VALUES (?a …) { (t …) }`` of ``μ``'s terms for ``names`` (``UNDEF`` for a blank
    node, which is substituted instead); empty for no names."""
    names = list(names)
    if not names:
        return ""
    terms = " ".join("UNDEF" if isinstance(mu[n], BlankNode) else str(mu[n]) for n in names)
    return f"VALUES ({' '.join('?' + n for n in names)}) {{ ({terms}) }} "


def _bound_as_true(text: str, bound: Mapping[str, object]) -> str:
    """``text`` with ``BOUND(?v)`` written ``true`` for each variable ``v`` of ``bound``
    (SPARQL 1.1 sec. 17.4.1.1: true iff ``?v`` is bound, and a substitution binds it
    everywhere). pyoxigraph 0.5 evaluates ``BOUND`` of a substituted variable to false;
    ``!BOUND`` is EP-SPARQL's negation idiom (queries (3), (5), (6))."""
    if not bound or "bound" not in text.lower():
        return text

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        return "true" if match.group(2) in bound else match.group(0)

    return _BOUND.sub(replace, text)


_UNCHANGED = frozenset({XSD_STRING, RDF_LANG_STRING})
_PROBE = NamedNode("urn:rsep:probe")
_MAX_CACHED_STORES = 4096


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


def select(
    store: Store,
    query: str,
    back: Callable[[str, Term], Term],
    *,
    substitutions: Mapping[Variable, NamedNode | BlankNode | Literal | Triple] | None = None,
    what: str = "the plan's graph pattern",
) -> list[Mu]:
    """The solutions of a SELECT ``query`` over ``store`` as mappings (a bag), each term
    passed through ``back(name, term)`` (to give the data's own literal back); an unbound
    variable is outside ``dom(μ)`` (RSP-QL Def. 3). ``what`` names the query in errors."""
    try:
        found = store.query(query, substitutions=dict(substitutions or {}))
    except SyntaxError as exc:
        raise UserError(f"{what} is not SPARQL 1.1: {exc}") from None
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
            mapping[name] = back(name, term)
        out.append(Mu(mapping))
    return out


_EMPTY: list[Store] = []
"""One empty store per process for :func:`instantiate` (a store does not pickle, so it is
never kept on an evaluator)."""


def instantiate(
    template: str, mu: Mapping[str, Term], stored_form: Callable[[Literal], Literal]
) -> list[Triple]:
    """A CONSTRUCT template instantiated with one mapping (SPARQL 1.1 sec. 16.2): variables
    replaced, template blank nodes fresh, triples with an unbound variable or an illegal
    term left out. pyoxigraph does it, given the mapping as SEP-0007 substitutions (a
    ``VALUES`` row of ``UNDEF`` puts the mapping's variables in scope); the literals it
    normalises (``stored_form``) are mapped back to the mapping's own."""
    substitutions: dict[Variable, NamedNode | BlankNode | Literal | Triple] = {
        Variable(name): term for name, term in mu.items()
    }
    names = " ".join("?" + name for name in mu)
    undefined = " ".join("UNDEF" for _ in mu)
    scope = f"VALUES ({names}) {{ ({undefined}) }}" if mu else ""
    if not _EMPTY:
        _EMPTY.append(Store())
    found = _EMPTY[0].query(
        f"CONSTRUCT {{\n{template}\n}} WHERE {{ {scope} }}", substitutions=substitutions
    )
    if not isinstance(found, QueryTriples):  # pragma: no cover - a CONSTRUCT query
        raise TypeError("a CONSTRUCT query returned no triples")
    back = {stored_form(term): term for term in mu.values() if isinstance(term, Literal)}
    return [
        Triple(x.subject, x.predicate, back[x.object])
        if isinstance(x.object, Literal) and x.object in back
        else x
        for x in found
    ]


class Pattern(Protocol):
    """A graph pattern with its text (``rsep.algebra.events.GraphPatternRef``)."""

    @property
    def text(self) -> str:
        """The group pattern's SPARQL text, full IRIs."""
        ...


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


_Named = tuple[tuple[str, frozenset[Triple]], ...]
"""Named graphs by IRI, sorted: part of a store's key."""
_Key = tuple[frozenset[Triple], _Named]


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
        self._stores: dict[_Key, _GraphStore] = {}
        self._empty = Store()

    def _graph(self, graph: frozenset[Triple], named: _Named = ()) -> _GraphStore:
        key = (graph, named)
        known = self._stores.get(key)
        if known is not None:
            return known
        store = Store()
        store.extend(Quad(x.subject, x.predicate, x.object, DefaultGraph()) for x in graph)
        literals = [x.object for x in graph if isinstance(x.object, Literal)]
        for iri, triples in named:
            node = NamedNode(iri)
            store.extend(Quad(x.subject, x.predicate, x.object, node) for x in triples)
            literals += [x.object for x in triples if isinstance(x.object, Literal)]
        built = _GraphStore(store, self.forms.originals(literals, "a graph"))
        if len(self._stores) >= _MAX_CACHED_STORES:
            self._stores.clear()
        self._stores[key] = built
        return built

    def match(
        self,
        pattern: Pattern | str,
        graph: frozenset[Triple] | Iterable[Triple],
        bound: Mapping[str, Term] | None = None,
        named: Mapping[str, frozenset[Triple]] | None = None,
    ) -> list[Mu]:
        """``⟦P⟧_G`` as a list of mappings (a bag, SPARQL 1.1 sec. 18.5), each joined with
        ``bound``: the solutions of ``μ(P)`` where ``μ = bound``. ``pattern`` is a group
        pattern's text (``{ … }``) or a graph pattern (``GraphPatternRef``). ``named`` are
        the dataset's named graphs by IRI, which ``GRAPH`` reads (SPARQL 1.1 sec. 13.3);
        ``graph`` is the default graph."""
        text = pattern if isinstance(pattern, str) else pattern.text
        frozen = graph if isinstance(graph, frozenset) else frozenset(graph)
        stored = self._graph(frozen, tuple(sorted(named.items())) if named else ())
        return self._select(stored.store, stored.originals, text, bound or {})

    def _select(
        self,
        store: Store,
        originals: Mapping[Literal, Literal],
        text: str,
        bound: Mapping[str, Term],
        what: str = "the plan's graph pattern",
    ) -> list[Mu]:
        """The solutions of ``μ(P)`` for ``P = text`` and ``μ = bound``, joined with ``μ``:
        ``μ`` as a ``VALUES`` row at the start of every group of ``P`` (:func:`_scopes`); a
        variable ``P`` BINDs is joined after ``P`` (``BIND`` must come first), a blank node
        substituted (``VALUES`` cannot write one)."""
        blank = {n: t for n, t in bound.items() if isinstance(t, BlankNode)}
        scopes = _scopes(_bound_as_true(text, blank) if blank else text)
        targets = scopes.targets
        row = _row(sorted(n for n in bound if n not in targets and n not in blank), bound)
        late = _row(sorted(n for n in bound if n in targets or n in blank), bound)
        pattern = row.join(scopes.pieces)
        if scopes.group:  # the text's group is the query's: one row per group
            query = f"SELECT * WHERE {pattern}\n{late}{scopes.tail}"
        else:
            query = f"SELECT * WHERE {{ {row}{pattern}\n{late}}}"
        substitutions: dict[Variable, NamedNode | BlankNode | Literal | Triple] = {
            Variable(n): t for n, t in blank.items()
        }

        def back(name: str, term: Term) -> Term:
            if name in bound:
                return bound[name]  # the caller's own term, not the normalised one
            return originals.get(term, term) if isinstance(term, Literal) else term

        return select(store, query, back, substitutions=substitutions, what=what)

    def value(self, expression: str, mu: Mapping[str, Term]) -> Term | None:
        """The value of a SPARQL expression under ``μ`` (``BIND(e AS ?v)``), or ``None``
        when it raises an error (unbound variable, type error)."""
        rows = self._expression(f"BIND(({expression}) AS ?_value)", mu)
        found = rows[0].get("_value") if rows else None
        if isinstance(found, Literal):
            known = {self.forms.stored_form(t): t for t in mu.values() if isinstance(t, Literal)}
            return known.get(found, found)
        return found

    def holds(self, expression: str, mu: Mapping[str, Term]) -> bool:
        """Whether ``FILTER(expression)`` keeps ``μ``: its effective boolean value is true
        (an error counts as false, SPARQL 1.1 sec. 17.2)."""
        return bool(self._expression(f"FILTER({expression})", mu))

    def _expression(self, clause: str, mu: Mapping[str, Term]) -> list[Mu]:
        """``clause`` (a FILTER or BIND) in one group under ``μ`` (:meth:`_select`)."""
        return self._select(self._empty, {}, f"{{ {clause} }}", mu, "the expression")
