"""The abstract syntax tree of SPARQL 1.1 Query: one tree that every dialect extends.

Every node is a small frozen dataclass with named fields (the sqlglot model). Equality and
hashing are structural, so "these two texts mean the same query" is one ``==``, and a node
can be a dictionary key or a set member. A sequence is a tuple, so it hashes too.

Decisions, each with the section of the SPARQL 1.1 Query Recommendation it rests on:

- **Positions.** Every node has ``pos``, the :class:`Position` (1-based line and column, and
  where the construct ends) of the text it was built from, or ``None`` for a node built in
  code. ``pos`` takes no part in equality, hashing or ``repr``: the same query written on one
  line or on ten gives equal trees.
- **IRIs (4.1.1, 4.1.1.1, 4.1.1.2, 19.5).** An :class:`Iri` holds the *resolved* IRI: a
  prefixed name is expanded with its prologue declaration, a relative IRI is resolved
  against the ``BASE`` in effect (RFC 3986, Sec. 5.2; see ``rsep.lang.build.resolve_iri``).
  An IRI with a scheme is kept as written, and so is a relative IRI when there is no
  ``BASE`` (SPARQL leaves its meaning to the application). Equality is therefore on meaning:
  ``ex:p``, ``<http://example/p>`` and ``<p>`` under ``BASE <http://example/>`` are the same
  node. The written form is not kept; the prologue is (:attr:`Query.prologue`, declarations
  in order, their IRIs resolved), and the printer uses it to compact IRIs back into
  prefixed names (or relative IRIs). ``a`` is ``rdf:type``.
- **Literals (4.1.2, RDF 1.1 Concepts 3.3).** A :class:`Literal` compares by
  ``(lexical, datatype, lang)``, the RDF term: ``"1"^^xsd:integer`` equals ``1``, and
  ``"a"`` equals ``"a"^^xsd:string`` (every literal has a datatype; a language-tagged one has
  ``rdf:langString``). Lexical forms are kept as written (``01`` is not ``1``: they are
  different RDF terms), language tags are lower-cased (they compare case-insensitively).
  ``written`` keeps the source text of a number or boolean (``TRUE``, ``1.0e3``) for faithful
  printing and takes no part in equality. Strings hold their value, escapes decoded.
- **Variables (4.1.3).** ``?x`` and ``$x`` are the same :class:`Var` (``name`` has no sigil).
- **Blank nodes and RDF collections (4.1.4, 4.2.3).** Kept as syntax: a labelled
  :class:`BlankNode`, ``[]`` (``BlankNode(None)``), ``[ :p :o ]``
  (:class:`BlankNodePropertyList`) and ``( … )`` (:class:`Collection`; ``()`` is the empty
  one, ``rdf:nil``). Nothing is expanded into ``rdf:first``/``rdf:rest`` here; that is the
  algebra's job (18.2.2.6).
- **Triples (4.2).** :class:`Triples` is one ``TriplesSameSubject``: a subject and its
  predicate-object list, as written; so ``?s :p ?o ; :q ?r`` and ``?s :p ?o . ?s :q ?r`` are
  different trees for the same pattern (the tree keeps the grouping a reader wrote).
- **Property paths (9.1).** :class:`PathAlternative`, :class:`PathSequence`,
  :class:`PathInverse`, :class:`PathModified` (``?``, ``*``, ``+``) and
  :class:`PathNegated`; a one-step path is its :class:`Iri`. Parentheses make no node.
- **Expressions (17, 18.2.1).** The tree encodes precedence, so brackets make no node; ``||``,
  ``&&`` and the arithmetic operators are left-associative :class:`Binary` nodes, as the
  grammar reads them. ``?x +1`` is ``?x + 1`` (19.8, production [116]).
- **Group graph patterns (5.2, 12).** Elements stay in the order written (a FILTER between
  two triples blocks stays between them); ``{ SELECT … }`` is a :class:`SubSelect` wherever
  braces may stand (:data:`Group`); ``UNION`` is one node with all its branches.
- **Canonical choices.** ``ORDER BY ASC(?x)`` equals ``ORDER BY ?x``;
  ``VALUES ?x { 1 }`` equals ``VALUES (?x) { (1) }``; ``CONSTRUCT WHERE { T }`` equals
  ``CONSTRUCT { T } WHERE { T }`` (16.2.4).

- **Deep trees.** ``==``, ``hash`` and :meth:`Node.walk` use an explicit stack, so a
  5000-term ``||`` chain or a thousand nested groups compare and hash without recursion.

Extension points for the dialects: every node derives from :class:`Node`; group graph pattern
elements from :class:`Pattern`, expressions from :class:`Expr`, query forms from
:class:`QueryForm`, dataset clauses from :class:`DatasetClause`, graph nodes from
:class:`GraphNode` and property paths from :class:`Path`. These are open: a dialect module
defines, say, ``class Window(Pattern)`` or ``class FromStream(DatasetClause)`` with the
decorator every node here has, ``@dataclass(frozen=True, slots=True, eq=False)``, plus a
builder method (``rsep.lang.build.Builder``) and a printer method
(``rsep.lang.printer.Printer``) for it; :meth:`Node.children` and :meth:`Node.walk` know it
at once. A query-level addition (``REGISTER QUERY … AS``, a stream clause) subclasses
:class:`Query` or :class:`Select` with ``kw_only`` fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Self

from rsep.rdf.terms import (
    RDF,
    RDF_LANG_STRING,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    XSD_STRING,
)

__all__ = [
    "AGGREGATES",
    "BINARY_OPERATORS",
    "PATH_MODIFIERS",
    "RDF_LANG_STRING",
    "RDF_TYPE",
    "UNARY_OPERATORS",
    "XSD_BOOLEAN",
    "XSD_DECIMAL",
    "XSD_DOUBLE",
    "XSD_INTEGER",
    "XSD_STRING",
    "Aggregate",
    "Alias",
    "Ask",
    "Base",
    "Binary",
    "Bind",
    "BlankNode",
    "BlankNodePropertyList",
    "BuiltIn",
    "Collection",
    "Construct",
    "DatasetClause",
    "Declaration",
    "Describe",
    "Exists",
    "Expr",
    "Filter",
    "From",
    "FunctionCall",
    "Graph",
    "GraphNode",
    "Group",
    "GroupPattern",
    "In",
    "Iri",
    "Literal",
    "Minus",
    "Node",
    "Optional",
    "OrderCondition",
    "Path",
    "PathAlternative",
    "PathInverse",
    "PathModified",
    "PathNegated",
    "PathSequence",
    "Pattern",
    "Position",
    "Prefix",
    "Property",
    "Query",
    "QueryForm",
    "Select",
    "Service",
    "SubSelect",
    "Term",
    "Triples",
    "TriplesBlock",
    "Unary",
    "Union",
    "Values",
    "Var",
]

RDF_TYPE = RDF + "type"


@dataclass(frozen=True, slots=True)
class Position:
    """Where a node's text starts and ends: 1-based line and column (end is exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """The base of every node: fields are named, ``pos`` is the source position (or None).

    ``==`` and ``hash`` are structural: two nodes are equal when they are of the same class
    and their fields are equal, ``pos`` and any other field declared with ``compare=False``
    aside. They walk the tree with a stack, not by recursion, so a query nested thousands of
    levels deep (a long ``||`` chain) still compares. Subclasses are declared with
    ``@dataclass(frozen=True, slots=True, eq=False)`` to keep these two methods; with
    ``eq=True`` the dataclass methods take over for that class, still structural but
    recursive.
    """

    pos: Position | None = field(default=None, kw_only=True, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return _equal(self, other)

    def __hash__(self) -> int:
        return _hash(self)

    def children(self) -> Iterator[Node]:
        """The nodes directly below this one, in field order (tuples are entered)."""
        for name in _field_names(type(self)):
            yield from _nodes_in(getattr(self, name))

    def walk(self) -> Iterator[Node]:
        """This node and every node below it, depth first, in document order."""
        stack: list[Node] = [self]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(list(current.children())))

    def replace(self, **changes: object) -> Self:
        """A copy with some fields changed (``dataclasses.replace``; ``pos`` is kept)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def _nodes_in(value: object) -> Iterator[Node]:
    if isinstance(value, Node):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _nodes_in(item)


_FIELD_NAMES: dict[type[Node], tuple[str, ...]] = {}


def _field_names(cls: type[Node]) -> tuple[str, ...]:
    """The fields of ``cls`` that take part in equality, in declaration order (cached)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.compare)
        _FIELD_NAMES[cls] = names
    return names


def _components(value: Node | tuple[object, ...]) -> tuple[object, ...]:
    if isinstance(value, Node):
        return tuple(getattr(value, name) for name in _field_names(type(value)))
    return value


def _equal(left: Node, right: Node) -> bool:
    """Structural equality of two trees, with an explicit stack."""
    stack: list[tuple[object, object]] = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        if isinstance(a, Node | tuple):
            if type(a) is not type(b):
                return False
            assert isinstance(b, Node | tuple)
            parts_a, parts_b = _components(a), _components(b)
            if len(parts_a) != len(parts_b):
                return False
            stack.extend(zip(parts_a, parts_b, strict=True))
        elif a != b:
            return False
    return True


def _hash(root: Node) -> int:
    """A hash that agrees with :func:`_equal`, computed bottom-up with an explicit stack."""
    done: dict[int, int] = {}
    stack: list[tuple[Node | tuple[object, ...], bool]] = [(root, False)]
    while stack:
        value, expanded = stack.pop()
        parts = _components(value)
        if not expanded:
            stack.append((value, True))
            stack.extend(
                (part, False)
                for part in parts
                if isinstance(part, Node | tuple) and id(part) not in done
            )
            continue
        hashes = tuple(
            done[id(part)] if isinstance(part, Node | tuple) else hash(part) for part in parts
        )
        done[id(value)] = hash((type(value), hashes))
    return done[id(root)]


# The open families (dialects add subclasses) -------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Expr(Node):
    """An expression (SPARQL 1.1 Sec. 17; productions [110]..[134])."""


@dataclass(frozen=True, slots=True, eq=False)
class GraphNode(Node):
    """A subject or object of a triple pattern: a term or a triples node (Sec. 4.2, [104])."""


@dataclass(frozen=True, slots=True, eq=False)
class Term(GraphNode):
    """An RDF term or a variable, as written in a pattern (Sec. 4.1; [106] VarOrTerm)."""


@dataclass(frozen=True, slots=True, eq=False)
class Pattern(Node):
    """An element of a group graph pattern (Sec. 5.2, 18.2.2; [53]..[68])."""


@dataclass(frozen=True, slots=True, eq=False)
class Path(Node):
    """A property path of more than one step (Sec. 9.1; [88]..[96]); one step is an Iri."""


@dataclass(frozen=True, slots=True, eq=False)
class QueryForm(Node):
    """The query form: SELECT, CONSTRUCT, DESCRIBE or ASK (Sec. 16)."""


@dataclass(frozen=True, slots=True, eq=False)
class DatasetClause(Node):
    """A clause that names the data a query runs over (Sec. 13.2; [13] DatasetClause)."""


@dataclass(frozen=True, slots=True, eq=False)
class Declaration(Node):
    """A prologue declaration, BASE or PREFIX (Sec. 4.1.1; [4] Prologue)."""


# Terms -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Var(Term, Expr):
    """A query variable ``?name`` or ``$name`` (Sec. 4.1.3; [108]); ``name`` has no sigil."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Iri(Term, Expr):
    """An IRI, resolved: prefixed names expanded, relative IRIs resolved (Sec. 4.1.1)."""

    value: str


@dataclass(frozen=True, slots=True, eq=False)
class Literal(Term, Expr):
    """An RDF literal (Sec. 4.1.2): equal when lexical form, datatype and language are.

    A simple literal has datatype xsd:string, a language-tagged one rdf:langString (the
    datatype is filled in when ``lang`` is given and ``datatype`` is not). ``lang`` is
    lower case. ``written`` is the source text of a number or boolean, for printing only.
    """

    lexical: str
    datatype: str = ""
    lang: str | None = None
    written: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.lang is not None:
            object.__setattr__(self, "lang", self.lang.lower())
        if not self.datatype:
            datatype = XSD_STRING if self.lang is None else RDF_LANG_STRING
            object.__setattr__(self, "datatype", datatype)


@dataclass(frozen=True, slots=True, eq=False)
class BlankNode(Term):
    """A blank node in a pattern (Sec. 4.1.4): ``_:label``, or ``[]`` when ``label`` is None."""

    label: str | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Collection(GraphNode):
    """An RDF collection ``( item … )`` (Sec. 4.2.3; [102]); ``()`` is ``rdf:nil``."""

    items: tuple[GraphNode, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Property(Node):
    """One verb and its objects in a property list (Sec. 4.2.1, 4.2.2; [77], [83])."""

    verb: Var | Iri | Path
    objects: tuple[GraphNode, ...]


@dataclass(frozen=True, slots=True, eq=False)
class BlankNodePropertyList(GraphNode):
    """``[ verb object … ]``: a blank node with properties (Sec. 4.1.4; [99], [101])."""

    properties: tuple[Property, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Triples(Node):
    """A subject and its property list, ``TriplesSameSubject`` (Sec. 4.2; [75], [81]).

    ``properties`` is empty only when the subject is a triples node (``[ :p 1 ] .``).
    """

    subject: GraphNode
    properties: tuple[Property, ...] = ()


# Property paths (Sec. 9.1) ---------------------------------------------------------------

PATH_MODIFIERS = frozenset({"?", "*", "+"})


@dataclass(frozen=True, slots=True, eq=False)
class PathAlternative(Path):
    """``p1 | p2 | …`` (Sec. 9.1, [89] PathAlternative)."""

    options: tuple[Iri | Path, ...]


@dataclass(frozen=True, slots=True, eq=False)
class PathSequence(Path):
    """``p1 / p2 / …`` (Sec. 9.1, [90] PathSequence)."""

    steps: tuple[Iri | Path, ...]


@dataclass(frozen=True, slots=True, eq=False)
class PathInverse(Path):
    """``^p`` (Sec. 9.1, [92] PathEltOrInverse)."""

    path: Iri | Path


@dataclass(frozen=True, slots=True, eq=False)
class PathModified(Path):
    """``p?``, ``p*`` or ``p+`` (Sec. 9.1, [91] PathElt, [93] PathMod)."""

    path: Iri | Path
    modifier: str

    def __post_init__(self) -> None:
        if self.modifier not in PATH_MODIFIERS:
            raise ValueError(f"not a path modifier: {self.modifier!r}")


@dataclass(frozen=True, slots=True, eq=False)
class PathNegated(Path):
    """``!iri``, ``!^iri`` or ``!(i1 | ^i2 | …)`` (Sec. 9.1, [95], [96]); items are IRIs or
    inverted IRIs."""

    items: tuple[Iri | PathInverse, ...] = ()


# Expressions (Sec. 17) -------------------------------------------------------------------

BINARY_OPERATORS = frozenset({"||", "&&", "=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/"})
UNARY_OPERATORS = frozenset({"!", "+", "-"})
AGGREGATES = frozenset({"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"})


@dataclass(frozen=True, slots=True, eq=False)
class Binary(Expr):
    """``left op right`` for the logical, relational and arithmetic operators (Sec. 17.3;
    [111]..[117])."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in BINARY_OPERATORS:
            raise ValueError(f"not a binary operator: {self.op!r}")


@dataclass(frozen=True, slots=True, eq=False)
class Unary(Expr):
    """``!e``, ``+e`` or ``-e`` (Sec. 17.3; [118] UnaryExpression)."""

    op: str
    operand: Expr

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPERATORS:
            raise ValueError(f"not a unary operator: {self.op!r}")


@dataclass(frozen=True, slots=True, eq=False)
class In(Expr):
    """``e IN (…)`` or ``e NOT IN (…)`` (Sec. 17.4.1.9, 17.4.1.10; [114])."""

    expr: Expr
    items: tuple[Expr, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class FunctionCall(Expr):
    """A call of a function named by an IRI, ``iri(DISTINCT? args)`` (Sec. 17.6; [70])."""

    iri: Iri
    args: tuple[Expr, ...] = ()
    distinct: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class BuiltIn(Expr):
    """A built-in function call (Sec. 17.4; [121]..[124]); ``name`` is upper case (``STR``,
    ``SAMETERM``, ``REGEX``, ``BOUND``…). ``BNODE()`` and ``BNODE(e)`` differ in ``args``."""

    name: str
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Aggregate(Expr):
    """An aggregate (Sec. 11, 18.5; [127]): ``arg`` is None for ``COUNT(*)``; ``separator``
    is the ``GROUP_CONCAT`` separator when one is written."""

    name: str
    arg: Expr | None
    distinct: bool = False
    separator: str | None = None

    def __post_init__(self) -> None:
        if self.name not in AGGREGATES:
            raise ValueError(f"not an aggregate: {self.name!r}")


@dataclass(frozen=True, slots=True, eq=False)
class Exists(Expr):
    """``EXISTS { … }`` or ``NOT EXISTS { … }`` (Sec. 8.1, 17.4.1.4; [125], [126])."""

    pattern: Group
    negated: bool = False


# Graph patterns (Sec. 5..8, 10) ----------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class TriplesBlock(Pattern):
    """Consecutive triple patterns of a group, ``TriplesBlock`` (Sec. 5.1; [55])."""

    triples: tuple[Triples, ...]


@dataclass(frozen=True, slots=True, eq=False)
class GroupPattern(Pattern):
    """``{ element … }``, a group graph pattern (Sec. 5.2; [53], [54]), elements in order."""

    elements: tuple[Pattern, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Union(Pattern):
    """``{ … } UNION { … } …``, two or more branches (Sec. 7; [67])."""

    branches: tuple[Group, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Optional(Pattern):
    """``OPTIONAL { … }`` (Sec. 6; [57])."""

    pattern: Group


@dataclass(frozen=True, slots=True, eq=False)
class Minus(Pattern):
    """``MINUS { … }`` (Sec. 8.2; [66])."""

    pattern: Group


@dataclass(frozen=True, slots=True, eq=False)
class Graph(Pattern):
    """``GRAPH name { … }`` (Sec. 13.3; [58])."""

    name: Var | Iri
    pattern: Group


@dataclass(frozen=True, slots=True, eq=False)
class Service(Pattern):
    """``SERVICE SILENT? name { … }`` (SPARQL 1.1 Federated Query; [59])."""

    name: Var | Iri
    pattern: Group
    silent: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Filter(Pattern):
    """``FILTER constraint`` (Sec. 5.2.2, 17; [68])."""

    expr: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Bind(Pattern):
    """``BIND (expr AS ?var)`` (Sec. 10.1; [60])."""

    expr: Expr
    var: Var


@dataclass(frozen=True, slots=True, eq=False)
class Values(Pattern):
    """Inline data, ``VALUES`` (Sec. 10.2; [61]..[65], and [28] after a query): one tuple per
    row, one value per variable, None for ``UNDEF``."""

    vars: tuple[Var, ...]
    rows: tuple[tuple[Iri | Literal | None, ...], ...] = ()


# Projections and solution modifiers (Sec. 15, 16.1, 11) ----------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Alias(Node):
    """``(expr AS ?var)`` in SELECT (Sec. 16.1.2; [9]) or GROUP BY (Sec. 11.2; [20])."""

    expr: Expr
    var: Var


@dataclass(frozen=True, slots=True, eq=False)
class OrderCondition(Node):
    """One ORDER BY key (Sec. 15.1; [24]); ``ASC(e)`` and ``e`` are the same condition."""

    expr: Expr
    descending: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Select(QueryForm):
    """``SELECT DISTINCT|REDUCED? (var | (expr AS var))+`` or ``SELECT *`` (``projection``
    None) (Sec. 16.1, 15.3, 15.4; [9])."""

    projection: tuple[Var | Alias, ...] | None = None
    distinct: bool = False
    reduced: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Construct(QueryForm):
    """``CONSTRUCT { template }`` (Sec. 16.2; [10], [73]); the short form ``CONSTRUCT WHERE``
    is read as its long form."""

    template: tuple[Triples, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Describe(QueryForm):
    """``DESCRIBE (var | iri)+`` or ``DESCRIBE *`` (``targets`` None) (Sec. 16.4; [11])."""

    targets: tuple[Var | Iri, ...] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Ask(QueryForm):
    """``ASK`` (Sec. 16.3; [12])."""


@dataclass(frozen=True, slots=True, eq=False)
class From(DatasetClause):
    """``FROM iri`` or ``FROM NAMED iri`` (Sec. 13.2; [13]..[16])."""

    iri: Iri
    named: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Base(Declaration):
    """``BASE <iri>`` (Sec. 4.1.1; [5]); ``iri`` resolved against the BASE before it."""

    iri: str


@dataclass(frozen=True, slots=True, eq=False)
class Prefix(Declaration):
    """``PREFIX name: <iri>`` (Sec. 4.1.1.1; [6]); ``name`` without the colon, ``iri``
    resolved against the BASE in effect."""

    name: str
    iri: str


@dataclass(frozen=True, slots=True, eq=False)
class SubSelect(Pattern):
    """A query inside a pattern, ``{ SELECT … }`` (Sec. 12; [8] SubSelect)."""

    select: Select
    where: Group
    group_by: tuple[Expr | Alias, ...] = field(default=(), kw_only=True)
    having: tuple[Expr, ...] = field(default=(), kw_only=True)
    order_by: tuple[OrderCondition, ...] = field(default=(), kw_only=True)
    limit: int | None = field(default=None, kw_only=True)
    offset: int | None = field(default=None, kw_only=True)
    values: Values | None = field(default=None, kw_only=True)


Group = GroupPattern | SubSelect
"""What braces enclose: a group graph pattern or a sub-select (Sec. 5.2, 12; [53])."""


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Query(Node):
    """A query (Sec. 2, 16; [1], [2]): prologue, form, dataset, WHERE, solution modifiers
    (GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET; Sec. 11, 15) and trailing VALUES (10.2).

    ``where`` is None only for a DESCRIBE without a WHERE clause.
    """

    prologue: tuple[Declaration, ...] = ()
    form: QueryForm
    dataset: tuple[DatasetClause, ...] = ()
    where: Group | None = None
    group_by: tuple[Expr | Alias, ...] = ()
    having: tuple[Expr, ...] = ()
    order_by: tuple[OrderCondition, ...] = ()
    limit: int | None = None
    offset: int | None = None
    values: Values | None = None

    @property
    def base(self) -> str | None:
        """The BASE IRI in effect after the prologue (the last BASE), or None."""
        bases = [d.iri for d in self.prologue if isinstance(d, Base)]
        return bases[-1] if bases else None

    @property
    def prefixes(self) -> dict[str, str]:
        """Prefix name to namespace IRI, as in effect after the prologue (the last wins)."""
        return {d.name: d.iri for d in self.prologue if isinstance(d, Prefix)}
