"""Basic graph patterns with FILTERs, matched in Python over one graph: the engine's fast
path for SPAseq's GPMs (Def. 7, ``⟦μ(P)⟧_G`` on an event's graph; Def. 15, ``Graph (v, P_D)``
on the background knowledge base).

pyoxigraph evaluates any group pattern exactly, but a query costs a store per event and a
parse per evaluation (0.1-2.5 ms); most GPMs are a handful of triple patterns and a
comparison. For those this module gives the very answers of
:meth:`rsep.rdf.sparql.GraphMatcher.match` (same bag of mappings, the data's own terms):

- :func:`compile_bgp` reads a group pattern's text (triple patterns whose terms are
  variables, IRIs, literals and blank nodes, ``;`` and ``,`` lists, FILTERs over comparison,
  arithmetic, ``&&``, ``||``, ``!``, ``IN``, ``BOUND``, ``STR``, ``LANG``, ``DATATYPE``,
  ``sameTerm``, ``isIRI``, ``isBlank``, ``isLiteral``, ``isNumeric``) into a :class:`Bgp`,
  or ``None`` for anything else (the caller keeps pyoxigraph for it);
- :class:`BgpMatcher` indexes each graph once (by predicate, predicate and subject, ...),
  joins the triple patterns in an order that starts from bound terms, and evaluates each
  FILTER as soon as its variables are bound, with SPARQL 1.1's operator semantics from
  :mod:`rsep.rdf.values` and its error rules (sec. 17.2: an error rejects the solution;
  ``||`` and ``&&`` as in the truth table of sec. 17.2).

It works on terms as pyoxigraph holds them: pyoxigraph normalises typed literals
(``"01"^^xsd:integer`` is ``"1"``; :class:`~rsep.rdf.sparql.LiteralForms`) and compares,
joins and computes on the normalised form, so every literal of the graph, of the pattern and
of the bindings is taken in its stored form, and the results carry the data's own terms
back (the bindings' own terms for bound variables, as :class:`~rsep.rdf.sparql.GraphMatcher`
gives them).

Where :mod:`rsep.rdf.values` follows the specifications and oxigraph 0.5 does not (ordering
of booleans, NaN, language-tagged strings; 64-bit integers and 18-digit decimals; EBV of
language-tagged strings; literals oxigraph does not read as their datatype), the evaluator
does not guess: it gives up (:meth:`BgpMatcher.match` returns ``None``) and the caller asks
pyoxigraph. So the fast path is exact wherever it answers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property, lru_cache
from operator import itemgetter

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.rdf.sparql import GraphMatcher, LiteralForms, Mu, Pattern
from rsep.rdf.terms import (
    RDF_LANG_STRING,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    Term,
)
from rsep.rdf.values import (
    BooleanValue,
    DateTimeValue,
    LangStringValue,
    NumericType,
    NumericValue,
    Resource,
    SparqlTypeError,
    Value,
    add,
    compare_values,
    divide,
    effective_boolean_value,
    multiply,
    subtract,
    unary_minus,
    unary_plus,
    value_of,
)

__all__ = [
    "Bgp",
    "BgpMatcher",
    "Call",
    "Constant",
    "GroupMatcher",
    "TriplePattern",
    "VariableRef",
    "as_stored",
    "compile_bgp",
    "exact_double",
]

_NUMERIC = frozenset({XSD_INTEGER, XSD_DECIMAL, XSD_FLOAT, XSD_DOUBLE})
_TYPED = _NUMERIC | {XSD_BOOLEAN, XSD_DATETIME}
"""The datatypes the evaluator computes with; a literal of another datatype (but strings)
in a FILTER makes it give up."""
_TRUE = Literal("true", datatype=NamedNode(XSD_BOOLEAN))
_FALSE = Literal("false", datatype=NamedNode(XSD_BOOLEAN))

Position = str | NamedNode | BlankNode | Literal
"""A term of a triple pattern: a variable's name (a ``str``), or an RDF term."""


class Unsure(Exception):
    """The fast path cannot tell what pyoxigraph answers here: ask pyoxigraph."""


class _Unsupported(Exception):
    """The pattern's text is outside what :func:`compile_bgp` reads."""


# The compiled pattern ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TriplePattern:
    """A triple pattern (SPARQL 1.1 sec. 18.1.3); a blank node is a variable named ``_:…``
    that no solution shows (sec. 18.2.1)."""

    subject: Position
    predicate: Position
    object: Position

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(
            t for t in (self.subject, self.predicate, self.object) if isinstance(t, str)
        )


@dataclass(frozen=True, slots=True)
class VariableRef:
    """A variable in an expression."""

    name: str


@dataclass(frozen=True, slots=True)
class Constant:
    """An IRI or literal in an expression."""

    term: NamedNode | Literal


@dataclass(frozen=True, slots=True)
class Call:
    """An operator or built-in function applied to its arguments (SPARQL 1.1 sec. 17.3,
    17.4): ``op`` is the operator (``"||"``, ``"<"``, ``"neg"``, ``"in"``, ...) or the
    function's name in lower case."""

    op: str
    args: tuple[Expression, ...]


Expression = VariableRef | Constant | Call


def _expression_variables(expr: Expression) -> frozenset[str]:
    if isinstance(expr, VariableRef):
        return frozenset({expr.name})
    if isinstance(expr, Constant):
        return frozenset()
    return frozenset().union(*(_expression_variables(a) for a in expr.args))


@dataclass(frozen=True)
class Bgp:
    """A group pattern made of triple patterns and FILTERs: ``Filter(F1 && …, BGP)``
    (SPARQL 1.1 sec. 18.2.2.6)."""

    triples: tuple[TriplePattern, ...]
    filters: tuple[Expression, ...] = ()
    _plans: dict[frozenset[str], _Plan] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @property
    def variables(self) -> frozenset[str]:
        """The variables the pattern binds (in scope for ``SELECT *``)."""
        names: set[str] = set()
        for pattern in self.triples:
            names |= pattern.variables
        return frozenset(n for n in names if not n.startswith("_:"))

    @cached_property
    def skeleton(self) -> Bgp:
        """The pattern without its FILTERs."""
        return Bgp(self.triples)

    def plan(self, bound: frozenset[str]) -> _Plan:
        """How to join the triple patterns when ``bound`` are bound beforehand."""
        plan = self._plans.get(bound)
        if plan is None:
            plan = self._plans[bound] = _plan(self, bound)
        return plan


@dataclass(frozen=True, slots=True)
class _Step:
    """One triple pattern in the join: the positions (0-2: subject, predicate, object)
    whose term is known, a constant or a variable bound before (``lookup``, looked up in
    the index), the positions of the variables it binds, and then the FILTERs whose
    variables are all bound."""

    positions: tuple[int, ...]
    lookup: tuple[Position, ...]
    binds: tuple[tuple[int, str], ...]
    filters: tuple[Expression, ...]


@dataclass(frozen=True, slots=True)
class _Plan:
    """The FILTERs to check before any join, the join's steps, and whether a FILTER errs
    on every solution (it needs a variable that nothing binds: no solution at all)."""

    before: tuple[Expression, ...]
    steps: tuple[_Step, ...]
    empty: bool = False


def _score(pattern: TriplePattern, known: set[str]) -> tuple[int, int]:
    """How selective a triple pattern is once ``known`` are bound: its known terms, a
    known predicate counting twice."""
    fixed = [
        not isinstance(t, str) or t in known
        for t in (pattern.subject, pattern.predicate, pattern.object)
    ]
    return (2 * fixed[1] + fixed[0] + fixed[2], fixed[0] + fixed[2])


def _errs_without(expr: Expression, unbound: frozenset[str]) -> bool:
    """Whether ``expr`` is an error whenever the variables ``unbound`` are unbound (sec.
    17.2: an unbound variable is an error, which operators and functions pass on, but
    ``BOUND``, and ``||``, ``&&`` and ``IN`` when another operand decides)."""
    if isinstance(expr, VariableRef):
        return expr.name in unbound
    if isinstance(expr, Constant) or expr.op == "bound":
        return False
    if expr.op in ("||", "&&"):
        return all(_errs_without(a, unbound) for a in expr.args)
    if expr.op in ("in", "notin"):
        return False  # ``?x IN (1, ?x)`` may be true
    return any(_errs_without(a, unbound) for a in expr.args)


def _plan(bgp: Bgp, bound: frozenset[str]) -> _Plan:
    """A join order: next the pattern with the most known terms (a known predicate counts
    most), then the FILTERs as soon as the variables of the pattern they name are bound."""
    known = set(bound)
    todo = list(bgp.triples)
    bgp_names = set().union(*(t.variables for t in bgp.triples)) if bgp.triples else set()
    pending = list(bgp.filters)

    def ready(expr: Expression) -> bool:
        return all(n in known or n not in bgp_names for n in _expression_variables(expr))

    unbound = (
        frozenset(n for f in bgp.filters for n in _expression_variables(f) if n not in bgp_names)
        - bound
    )
    if any(_errs_without(f, unbound) for f in bgp.filters):
        return _Plan((), (), empty=True)
    before = tuple(f for f in pending if ready(f))
    pending = [f for f in pending if not ready(f)]
    steps: list[_Step] = []
    while todo:
        best = max(todo, key=lambda pattern: _score(pattern, known))
        todo.remove(best)
        terms = (best.subject, best.predicate, best.object)
        positions = tuple(i for i, t in enumerate(terms) if not isinstance(t, str) or t in known)
        binds = tuple((i, t) for i, t in enumerate(terms) if isinstance(t, str) and t not in known)
        known |= best.variables
        now = tuple(f for f in pending if ready(f))
        pending = [f for f in pending if not ready(f)]
        steps.append(_Step(positions, tuple(terms[i] for i in positions), binds, now))
    assert not pending  # every variable of the pattern is bound after the last step
    return _Plan(before, tuple(steps))


# Reading the pattern's text ---------------------------------------------------------------

_SPACE = re.compile(r"(?:\s+|#[^\n]*)*")
_IRIREF = re.compile(r"<([^<>\"{}|^`\\\x00-\x20]*)>")
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_VAR = re.compile(r"[?$]([A-Za-z0-9_]+)")
_BNODE = re.compile(r"_:([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)")
_ANON = re.compile(r"\[(?:\s+|#[^\n]*)*\]")
_LANGTAG = re.compile(r"@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)")
_DOUBLE = re.compile(r"[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.[0-9]+[eE][+-]?[0-9]+|[0-9]+[eE][+-]?[0-9]+")
_DECIMAL = re.compile(r"[0-9]*\.[0-9]+")
_INTEGER = re.compile(r"[0-9]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILTER = re.compile(r"FILTER\b", re.IGNORECASE)
_STRINGS = (
    re.compile(r'"""((?:(?:"|"")?(?:[^"\\]|\\[tbnrf"\'\\]))*)"""'),
    re.compile(r"'''((?:(?:'|'')?(?:[^'\\]|\\[tbnrf\"'\\]))*)'''"),
    re.compile(r'"((?:[^"\\\n\r]|\\[tbnrf"\'\\])*)"'),
    re.compile(r"'((?:[^'\\\n\r]|\\[tbnrf\"'\\])*)'"),
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)")
_COMPARISONS = ("!=", "<=", ">=", "=", "<", ">")
_UNARY_TESTS = {"isiri": "isiri", "isuri": "isiri", "isblank": "isblank", "isliteral": "isliteral"}
_BUILT_INS = {
    "str": 1,
    "lang": 1,
    "datatype": 1,
    "isnumeric": 1,
    "sameterm": 2,
    **dict.fromkeys(_UNARY_TESTS, 1),
}


class _Reader:
    """A recursive-descent reader of the group patterns :func:`compile_bgp` takes (SPARQL
    1.1 grammar, sec. 19.8, rules [53]-[55], [75]-[82], [110]-[121]: the part without
    paths, collections, nested groups and prefixed names); anything else is
    :class:`_Unsupported`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.blocks: list[set[str]] = [set()]
        self.anonymous = 0

    # lexical helpers
    def skip(self) -> None:
        found = _SPACE.match(self.text, self.i)
        if found is not None:
            self.i = found.end()

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.i)

    def eat(self, literal: str) -> bool:
        if self.peek(literal):
            self.i += len(literal)
            return True
        return False

    def expect(self, literal: str) -> None:
        if not self.eat(literal):
            raise _Unsupported(f"expected {literal!r} at {self.i}")

    def keyword(self, word: str) -> bool:
        self.skip()
        found = _WORD.match(self.text, self.i)
        if found is not None and found.group().lower() == word.lower():
            self.i = found.end()
            return True
        return False

    def at_filter(self) -> bool:
        self.skip()
        return bool(_FILTER.match(self.text, self.i))

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        self.skip()
        found = pattern.match(self.text, self.i)
        if found is not None:
            self.i = found.end()
        return found

    # the group
    def group(self) -> Bgp:
        self.expect("{")
        triples: list[TriplePattern] = []
        filters: list[Expression] = []
        while not self.eat("}"):
            if self.keyword("FILTER"):
                filters.append(self.constraint())
                self.blocks.append(set())
                self.eat(".")
                continue
            triples.extend(self.triples_same_subject())
            if not self.eat("."):
                self.skip()
                if not (self.peek("}") or self.at_filter()):
                    raise _Unsupported("a triple is not followed by '.', FILTER or '}'")
        self.skip()
        if self.i != len(self.text):
            raise _Unsupported("text after the group")
        labels = [label for block in self.blocks for label in block]
        if len(labels) != len(set(labels)):  # sec. 4.1.4: one BGP per label
            raise _Unsupported("a blank node label in two basic graph patterns")
        return Bgp(tuple(triples), tuple(filters))

    def triples_same_subject(self) -> list[TriplePattern]:
        subject = self.node()
        out: list[TriplePattern] = []
        while True:
            verb = self.verb()
            while True:
                out.append(TriplePattern(subject, verb, self.node()))
                if not self.eat(","):
                    break
            if not self.eat(";"):
                return out
            while self.eat(";"):
                pass
            if self.peek(".") or self.peek("}") or self.at_filter():
                return out

    def verb(self) -> Position:
        """A variable, an IRI or ``a`` (rule [78]); a property path is :class:`_Unsupported`."""
        self.skip()
        after = self.text[self.i + 1 : self.i + 2]
        if self.text.startswith("a", self.i) and (
            after == "" or after.isspace() or after in "<?$\"'_[(#"
        ):
            self.i += 1
            return NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
        verb = self.node()
        if not isinstance(verb, NamedNode) and not (
            isinstance(verb, str) and not verb.startswith("_:")
        ):
            raise _Unsupported("a verb must be a variable or an IRI")
        self.skip()
        follows = self.text[self.i : self.i + 2]
        if follows[:1] in ("/", "|", "^", "*") or (
            follows[:1] == "+" and not (follows[1:].isdigit() or follows[1:] == ".")
        ):
            raise _Unsupported("a property path")
        if follows[:1] == "?" and not _VAR.match(self.text, self.i):
            raise _Unsupported("a property path")
        return verb

    def node(self) -> Position:
        """A variable, IRI, literal or blank node in a triple pattern."""
        self.skip()
        found = self.match(_VAR)
        if found is not None:
            return self.name(found)
        found = self.match(_BNODE)
        if found is not None:
            label = "_:" + found.group(1)
            self.blocks[-1].add(label)
            return label
        if self.match(_ANON) is not None:
            self.anonymous += 1
            return f"_:#{self.anonymous}"
        term = self.term()
        if term is None:
            raise _Unsupported(f"no term at {self.i}")
        return term

    def name(self, found: re.Match[str]) -> str:
        if self.i < len(self.text) and (self.text[self.i].isalnum() or self.text[self.i] in "·‿⁀"):
            raise _Unsupported("a variable name beyond ASCII")
        return found.group(1)

    def term(self) -> NamedNode | Literal | None:
        """An IRI or a literal (RDF literal, number, boolean), or ``None``."""
        self.skip()
        found = self.match(_IRIREF)
        if found is not None:
            return _iri(found.group(1))
        for pattern in _STRINGS:
            found = self.match(pattern)
            if found is not None:
                return self.literal(_ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], found.group(1)))
        sign = ""
        if self.text.startswith(("+", "-"), self.i):
            sign = self.text[self.i]
            self.i += 1
        for pattern, datatype in (
            (_DOUBLE, XSD_DOUBLE),
            (_DECIMAL, XSD_DECIMAL),
            (_INTEGER, XSD_INTEGER),
        ):
            found = pattern.match(self.text, self.i)
            if found is not None:
                self.i = found.end()
                return Literal(sign + found.group(), datatype=NamedNode(datatype))
        if sign:
            self.i -= 1
            return None
        for word, value in (("true", _TRUE), ("false", _FALSE)):
            if self.text.startswith(word, self.i) and not _WORD.match(
                self.text, self.i + len(word)
            ):
                if self.i + len(word) < len(self.text) and self.text[self.i + len(word)] == ":":
                    raise _Unsupported("a prefixed name")
                self.i += len(word)
                return value
        return None

    def literal(self, lexical: str) -> Literal:
        found = _LANGTAG.match(self.text, self.i)
        if found is not None:
            self.i = found.end()
            return Literal(lexical, language=found.group(1))
        if self.text.startswith("^^", self.i):
            self.i += 2
            iri = _IRIREF.match(self.text, self.i)
            if iri is None:
                raise _Unsupported("a datatype that is not an IRI")
            self.i = iri.end()
            return Literal(lexical, datatype=_iri(iri.group(1)))
        return Literal(lexical)

    # expressions
    def constraint(self) -> Expression:
        """``FILTER ( e )`` or ``FILTER f(...)`` with a built-in ``f`` (rule [69])."""
        if self.peek("("):
            return self.bracketted()
        call = self.built_in()
        if call is None:
            raise _Unsupported("a FILTER that is not a bracketted expression or built-in")
        return call

    def bracketted(self) -> Expression:
        self.expect("(")
        expr = self.expression()
        self.expect(")")
        return expr

    def expression(self) -> Expression:
        left = self.conjunction()
        while self.eat("||"):
            left = Call("||", (left, self.conjunction()))
        return left

    def conjunction(self) -> Expression:
        left = self.relational()
        while self.eat("&&"):
            left = Call("&&", (left, self.relational()))
        return left

    def relational(self) -> Expression:
        left = self.additive()
        self.skip()
        for op in _COMPARISONS:
            if self.text.startswith(op, self.i):
                self.i += len(op)
                return Call(op, (left, self.additive()))
        if self.keyword("NOT"):
            if not self.keyword("IN"):
                raise _Unsupported("NOT without IN")
            return Call("notin", (left, *self.expression_list()))
        if self.keyword("IN"):
            return Call("in", (left, *self.expression_list()))
        return left

    def expression_list(self) -> tuple[Expression, ...]:
        self.expect("(")
        if self.eat(")"):
            return ()
        items = [self.expression()]
        while self.eat(","):
            items.append(self.expression())
        self.expect(")")
        return tuple(items)

    def additive(self) -> Expression:
        left = self.multiplicative()
        while True:
            self.skip()
            if self.text.startswith(("+", "-"), self.i):
                op = self.text[self.i]
                self.i += 1
                left = Call(op, (left, self.multiplicative()))
            else:
                return left

    def multiplicative(self) -> Expression:
        left = self.unary()
        while True:
            self.skip()
            if self.text.startswith(("*", "/"), self.i):
                op = self.text[self.i]
                self.i += 1
                left = Call(op, (left, self.unary()))
            else:
                return left

    def unary(self) -> Expression:
        self.skip()
        if self.text.startswith("!", self.i) and not self.text.startswith("!=", self.i):
            self.i += 1
            return Call("!", (self.unary(),))
        if self.text.startswith(("+", "-"), self.i):
            follows = self.text[self.i + 1 : self.i + 2]
            if not (follows.isdigit() or follows == "."):  # else a signed number literal
                op = "neg" if self.text[self.i] == "-" else "pos"
                self.i += 1
                return Call(op, (self.primary(),))
        return self.primary()

    def primary(self) -> Expression:
        self.skip()
        if self.peek("("):
            return self.bracketted()
        found = self.match(_VAR)
        if found is not None:
            return VariableRef(self.name(found))
        call = self.built_in()
        if call is not None:
            return call
        term = self.term()
        if term is None:
            raise _Unsupported(f"no expression at {self.i}")
        if isinstance(term, NamedNode) and self.peek("("):
            raise _Unsupported("a function call")
        return Constant(term)

    def built_in(self) -> Call | None:
        self.skip()
        found = _WORD.match(self.text, self.i)
        if found is None:
            return None
        word = found.group().lower()
        if word != "bound" and word not in _BUILT_INS:
            if found.group() in ("true", "false"):
                return None
            raise _Unsupported(f"{found.group()} is not a supported built-in")
        self.i = found.end()
        self.expect("(")
        if word == "bound":
            var = self.match(_VAR)
            if var is None:
                raise _Unsupported("BOUND of a non-variable")
            self.expect(")")
            return Call("bound", (VariableRef(self.name(var)),))
        args = [self.argument()]
        while self.eat(","):
            args.append(self.argument())
        self.expect(")")
        if len(args) != _BUILT_INS[word]:
            raise _Unsupported(f"{word} with {len(args)} arguments")
        return Call(_UNARY_TESTS.get(word, word), tuple(args))

    def argument(self) -> Expression:
        """A built-in's argument: a variable or a constant (a computed term's lexical form
        is oxigraph's to choose)."""
        found = self.match(_VAR)
        if found is not None:
            return VariableRef(self.name(found))
        term = self.term()
        if term is None:
            raise _Unsupported("a built-in's argument is an expression")
        return Constant(term)


def _iri(value: str) -> NamedNode:
    if not _ABSOLUTE.match(value):
        raise _Unsupported("a relative IRI")
    try:
        return NamedNode(value)
    except ValueError:
        raise _Unsupported("an invalid IRI") from None


@lru_cache(maxsize=1024)
def compile_bgp(text: str) -> Bgp | None:
    """The :class:`Bgp` of a group pattern's text (``{ … }``, full IRIs, as the plan prints
    it), or ``None`` when the text holds anything else (OPTIONAL, UNION, GRAPH, paths,
    prefixed names, functions beyond the built-ins above, ``\\u`` escapes, ...)."""
    if "\\u" in text or "\\U" in text:
        return None
    try:
        bgp = _Reader(text).group()
    except (_Unsupported, ValueError):
        return None
    forms = LiteralForms()
    return Bgp(
        tuple(
            TriplePattern(*(_stored_constant(forms, t) for t in (p.subject, p.predicate, p.object)))
            for p in bgp.triples
        ),
        tuple(_stored_expression(forms, f) for f in bgp.filters),
    )


def _stored_constant(forms: LiteralForms, term: Position) -> Position:
    if isinstance(term, Literal):
        return stored(forms, term)
    return term


def _stored_expression(forms: LiteralForms, expr: Expression) -> Expression:
    if isinstance(expr, Constant):
        term = expr.term
        return Constant(stored(forms, term) if isinstance(term, Literal) else term)
    if isinstance(expr, Call):
        return Call(expr.op, tuple(_stored_expression(forms, a) for a in expr.args))
    return expr


# Stored forms -----------------------------------------------------------------------------

_CANONICAL_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_PLAIN_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")
_CANONICAL_DATETIME = re.compile(
    r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]*[1-9])?(?:Z|[+-](?:0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)?"
)
_I64 = (-(2**63), 2**63 - 1)
_I128 = (-(2**127), 2**127 - 1)
_SCALE = 10**18


@lru_cache(maxsize=1 << 16)
def as_stored(literal: Literal) -> bool:
    """Whether pyoxigraph stores ``literal`` unchanged: a string, or a valid literal of a
    datatype it normalises, already in the form it writes (``"1"^^xsd:integer``, not
    ``"01"``), within its ranges (64-bit integers, 18-digit decimals). ``False`` means
    "not known": ask :class:`LiteralForms`."""
    datatype = literal.datatype.value
    if datatype in (XSD_STRING, RDF_LANG_STRING):
        return True
    lexical = literal.value
    if datatype == XSD_INTEGER:
        return (
            bool(_CANONICAL_INTEGER.fullmatch(lexical))
            and lexical != "-0"
            and (_I64[0] <= int(lexical) <= _I64[1])
        )
    if datatype == XSD_BOOLEAN:
        return lexical in ("true", "false")
    if datatype == XSD_DATETIME:
        zone = lexical[-6:]
        return (
            bool(_CANONICAL_DATETIME.fullmatch(lexical))
            and zone not in ("+00:00", "-00:00")
            and isinstance(value_of(literal), DateTimeValue)
        )
    if datatype == XSD_DECIMAL and _PLAIN_DECIMAL.fullmatch(lexical) and lexical != "-0":
        return _fits_decimal(Decimal(lexical))  # no leading or trailing zero, no "+"
    if datatype == XSD_DOUBLE and _PLAIN_DECIMAL.fullmatch(lexical):
        # the shortest digits that round-trip, without exponent: Python's repr when there
        # are at most 15 (then no other string of as many digits rounds to the same double)
        digits = len(lexical.lstrip("-0.").replace(".", ""))
        shown = repr(float(lexical))
        if digits <= 15 and (shown == lexical or shown == lexical + ".0"):
            return True
    if datatype in (XSD_DECIMAL, XSD_FLOAT, XSD_DOUBLE):
        try:
            canonical = unary_plus(literal)
        except SparqlTypeError:
            return False
        if canonical != literal:
            return False
        if datatype == XSD_DECIMAL:
            return _fits_decimal(Decimal(lexical))
        return True
    return False


def stored(forms: LiteralForms, literal: Literal) -> Literal:
    """``literal`` as pyoxigraph stores it (:meth:`LiteralForms.stored_form`, without a
    probe store when it is already in that form)."""
    return literal if as_stored(literal) else forms.stored_form(literal)


def _fits_decimal(number: Decimal) -> bool:
    """Whether oxigraph's decimal (an ``i128`` counting 10⁻¹⁸) holds ``number`` exactly."""
    scaled = number.scaleb(18)
    if scaled != scaled.to_integral_value():
        return False
    return _I128[0] <= int(scaled) <= _I128[1]


# The index of a graph ----------------------------------------------------------------------

StoredTriple = tuple[Term, Term, Term]


class _Index:
    """A graph's triples in stored form, indexed on demand by the terms a join looks up,
    and the way back from a stored literal to the graph's own."""

    __slots__ = ("_by", "graph", "originals", "triples")

    def __init__(
        self,
        graph: frozenset[Triple],
        triples: list[StoredTriple],
        originals: dict[Literal, Literal],
    ) -> None:
        self.graph = graph  # kept alive: the cache is keyed by its id
        self.triples = triples
        self.originals = originals
        self._by: dict[tuple[int, ...], dict[object, list[StoredTriple]]] = {}

    def candidates(self, positions: tuple[int, ...], key: object) -> Sequence[StoredTriple]:
        """The triples that hold ``key`` at ``positions`` (a term for one position, a tuple
        of terms for several)."""
        if not positions:
            return self.triples
        table = self._by.get(positions)
        if table is None:
            table = self._by[positions] = {}
            get = itemgetter(*positions)
            for triple in self.triples:
                table.setdefault(get(triple), []).append(triple)
        return table.get(key, ())


# The matcher ------------------------------------------------------------------------------

_MAX_INDEXES = 1024
"""Graphs whose index is kept (events repeat within an instant and a replay)."""

Row = dict[str, Term]


class BgpMatcher:
    """``⟦μ(P)⟧_G`` joined with ``μ`` for a :class:`Bgp` ``P`` (the answers of
    :meth:`rsep.rdf.sparql.GraphMatcher.match`), each graph indexed once (the last
    ``1024`` graphs are kept)."""

    def __init__(self, forms: LiteralForms) -> None:
        self.forms = forms
        self._indexes: dict[int, _Index] = {}
        self._kept: dict[int, frozenset[Triple]] = {}

    def keep(self, graph: frozenset[Triple]) -> None:
        """Keep ``graph``'s index for good once built (a knowledge base graph), whatever
        the graphs matched after it."""
        self._kept[id(graph)] = graph

    def match(
        self, bgp: Bgp, graph: frozenset[Triple], bound: Mapping[str, Term] | None = None
    ) -> list[Mu] | None:
        """The solutions as a bag of mappings with the data's own terms (the bindings' own
        for bound variables), or ``None`` when only pyoxigraph can tell (:class:`Unsure`)."""
        bound = bound or {}
        try:
            index = self._index(graph)
            start: Row = {}
            for name, term in bound.items():
                start[name] = stored(self.forms, term) if isinstance(term, Literal) else term
            rows = self._join(bgp.plan(frozenset(bound)), index, start)
        except Unsure:
            return None
        originals = index.originals
        out = []
        for row in rows:
            mapping: dict[str, Term] = {}
            for name, term in row.items():
                if name.startswith("_:"):
                    continue
                if name in bound:
                    mapping[name] = bound[name]
                elif originals and isinstance(term, Literal):
                    mapping[name] = originals.get(term, term)
                else:
                    mapping[name] = term
            out.append(Mu(mapping))
        return out

    def _index(self, graph: frozenset[Triple]) -> _Index:
        key = id(graph)
        index = self._indexes.get(key)
        if index is None or index.graph is not graph:
            index = self._build(graph)
            if len(self._indexes) >= _MAX_INDEXES:  # the oldest quarter goes, but kept ones
                for old in list(self._indexes)[: _MAX_INDEXES // 4]:
                    if self._kept.get(old) is not self._indexes[old].graph:
                        del self._indexes[old]
            self._indexes[key] = index
        return index

    def _build(self, graph: frozenset[Triple]) -> _Index:
        triples: list[StoredTriple] = []
        literals: list[Literal] = []
        changed = False
        for triple in graph:
            s, p, o = triple.subject, triple.predicate, triple.object
            if isinstance(o, Literal):
                literals.append(o)
                if not as_stored(o):
                    changed = True
            elif isinstance(o, Triple) or isinstance(s, Triple):
                raise Unsure  # RDF-star: pyoxigraph's business
            triples.append((s, p, o))  # type: ignore[arg-type]  # no triple terms here
        if not changed:
            return _Index(graph, triples, {})
        # the error GraphMatcher gives for two literals stored as one
        originals = self.forms.originals(literals, "a graph")
        forms = self.forms
        triples = [(s, p, stored(forms, o) if isinstance(o, Literal) else o) for s, p, o in triples]
        return _Index(graph, triples, originals)

    def _join(self, plan: _Plan, index: _Index, start: Row) -> list[Row]:
        if plan.empty or not all(_holds(f, start) for f in plan.before):
            return []
        rows = [start]
        for step in plan.steps:
            lookup, binds, filters = step.lookup, step.binds, step.filters
            single = lookup[0] if len(lookup) == 1 else None
            out: list[Row] = []
            for row in rows:
                key: object
                if single is not None:
                    key = row[single] if isinstance(single, str) else single
                else:
                    key = tuple((row[t] if isinstance(t, str) else t) for t in lookup)
                for triple in index.candidates(step.positions, key):
                    new = row
                    if binds:
                        new = dict(row)
                        clash = False
                        for position, name in binds:  # a name twice: the same term twice
                            value = triple[position]
                            if new.setdefault(name, value) != value:
                                clash = True
                                break
                        if clash:
                            continue
                    if not filters or all(_holds(f, new) for f in filters):
                        out.append(new)
            rows = out
            if not rows:
                break
        return rows


class GroupMatcher:
    """``⟦P⟧_G`` joined with ``μ`` for any group pattern, as
    :meth:`GraphMatcher.match <rsep.rdf.sparql.GraphMatcher.match>` gives it: by
    :class:`BgpMatcher` when the pattern is a :class:`Bgp` and it can tell, else by
    pyoxigraph. A drop-in for ``GraphMatcher.match`` in an evaluator."""

    def __init__(self, matcher: GraphMatcher) -> None:
        self.matcher = matcher
        self.fast = BgpMatcher(matcher.forms)
        self._compiled: dict[int, tuple[Pattern, Bgp | None]] = {}

    def keep(self, graph: frozenset[Triple]) -> None:
        """Keep ``graph``'s index (a knowledge base graph): :meth:`BgpMatcher.keep`."""
        self.fast.keep(graph)

    def compiled(self, pattern: Pattern | str) -> Bgp | None:
        """The pattern as a :class:`Bgp`, or ``None`` (by identity of a plan's pattern)."""
        if isinstance(pattern, str):
            return compile_bgp(pattern)
        known = self._compiled.get(id(pattern))
        if known is None or known[0] is not pattern:
            known = self._compiled[id(pattern)] = (pattern, compile_bgp(pattern.text))
        return known[1]

    def match(
        self,
        pattern: Pattern | str,
        graph: frozenset[Triple],
        bound: Mapping[str, Term] | None = None,
        named: Mapping[str, frozenset[Triple]] | None = None,
    ) -> list[Mu]:
        """``GraphMatcher.match(pattern, graph, bound, named)``, faster where it can be (a
        basic graph pattern reads the default graph only)."""
        bgp = self.compiled(pattern)
        if bgp is not None:
            found = self.fast.match(bgp, graph, bound)
            if found is not None:
                return found
        return self.matcher.match(pattern, graph, bound=bound, named=named)

    def holds(self, expression: str, mu: Mapping[str, Term]) -> bool:
        """``GraphMatcher.holds(expression, mu)`` (whether ``{ FILTER(e) }`` over the empty
        graph keeps ``μ``, the very query it makes), in Python where it can tell."""
        return bool(self.match(f"{{ FILTER({expression}) }}", _NO_GRAPH, mu))


_NO_GRAPH: frozenset[Triple] = frozenset()
"""The graph an expression is tested over: it reads only its mapping."""


# FILTERs -----------------------------------------------------------------------------------

Result = Term | bool | NumericValue
"""An expression's value: a term, a boolean (an xsd:boolean), or a double computed by
:func:`_arithmetic` (its term, written once it is needed)."""


def _holds(expr: Expression, row: Row) -> bool:
    """``FILTER(expr)`` keeps the row: its effective boolean value is true; an error makes
    it false (SPARQL 1.1 sec. 17.2)."""
    try:
        return _ebv(_evaluate(expr, row))
    except SparqlTypeError:
        return False


def _evaluate(expr: Expression, row: Row) -> Result:
    """The value of an expression on a row of stored terms (sec. 17.3-17.4); a
    :class:`SparqlTypeError` for an error, :class:`Unsure` where oxigraph may differ."""
    if isinstance(expr, VariableRef):
        found = row.get(expr.name)
        if found is None:
            raise SparqlTypeError(f"?{expr.name} is unbound")
        return found
    if isinstance(expr, Constant):
        return expr.term
    op, args = expr.op, expr.args
    if op == "||" or op == "&&":
        return _logical(op == "||", args[0], args[1], row)
    if op == "!":
        return not _ebv(_evaluate(args[0], row))
    if op in _ORDERS or op == "=" or op == "!=":
        return _compare(op, _evaluate(args[0], row), _evaluate(args[1], row))
    if op in _ARITHMETIC:
        return _arithmetic(op, _evaluate(args[0], row), _evaluate(args[1], row))
    if op == "neg" or op == "pos":
        return _sign(op, _evaluate(args[0], row))
    if op == "in" or op == "notin":
        member = _member(_evaluate(args[0], row), args[1:], row)
        return member if op == "in" else not member
    if op == "bound":
        name = args[0]
        assert isinstance(name, VariableRef)
        return name.name in row
    if op == "sameterm":
        return _term(_evaluate(args[0], row)) == _term(_evaluate(args[1], row))
    return _function(op, _evaluate(args[0], row))


def _logical(disjunction: bool, left: Expression, right: Expression, row: Row) -> bool:
    """``||`` / ``&&`` with errors (sec. 17.2, truth table): an error on one side is
    decided by a true (``||``) or false (``&&``) other side, else stays an error."""
    try:
        first: bool | None = _ebv(_evaluate(left, row))
    except SparqlTypeError:
        first = None
    if first is disjunction:
        return disjunction
    try:
        second: bool | None = _ebv(_evaluate(right, row))
    except SparqlTypeError:
        second = None
    if second is disjunction:
        return disjunction
    if first is None or second is None:
        raise SparqlTypeError("error in an operand of || or && (sec. 17.2)")
    return not disjunction


def _member(term: Result, items: tuple[Expression, ...], row: Row) -> bool:
    """``term IN (items)`` (sec. 17.4.1.9): true if one is equal, else an error if one
    comparison errs, else false. oxigraph 0.5 makes ``IN ()`` an error, not false."""
    if not items:
        raise Unsure
    error = False
    for item in items:
        try:
            if _compare("=", term, _evaluate(item, row)):
                return True
        except SparqlTypeError:
            error = True
    if error:
        raise SparqlTypeError("error in IN (sec. 17.4.1.9)")
    return False


def _term(result: Result) -> Term:
    """The term of a value, a computed double in the form oxigraph writes it."""
    if isinstance(result, bool):
        return _TRUE if result else _FALSE
    if isinstance(result, NumericValue):
        return unary_plus(result.term)
    return result


def _operand(result: Result) -> Value:
    """The typed value of a stored term, for a datatype the evaluator knows in the form
    oxigraph gives it; :class:`Unsure` otherwise."""
    if isinstance(result, NumericValue):
        return result
    value = _known_value(_term(result))
    if value is None:
        raise Unsure
    return value


@lru_cache(maxsize=1 << 16)
def _known_value(term: Term) -> Value | None:
    """:func:`value_of` for a term the evaluator computes with, else ``None``."""
    if isinstance(term, Literal):
        datatype = term.datatype.value
        if datatype in (XSD_STRING, RDF_LANG_STRING) or (datatype in _TYPED and as_stored(term)):
            return value_of(term)
        return None
    return value_of(term)


def _ebv(result: Result) -> bool:
    """The effective boolean value (sec. 17.2.2) where oxigraph agrees."""
    if isinstance(result, bool):
        return result
    value = _operand(result)
    if isinstance(value, LangStringValue):
        raise Unsure  # oxigraph 0.5 and the specification differ
    return effective_boolean_value(value.term)


_ORDERS = frozenset({"<", "<=", ">", ">="})
_ARITHMETIC = frozenset({"+", "-", "*", "/"})


def _compare(op: str, a: Result, b: Result) -> bool:
    x, y = _operand(a), _operand(b)
    if isinstance(x, NumericValue) and isinstance(y, NumericValue):
        _check_promotion(x, y)
    elif op in _ORDERS and (
        isinstance(x, BooleanValue | LangStringValue | Resource)
        or isinstance(y, BooleanValue | LangStringValue | Resource)
    ):
        raise Unsure  # oxigraph 0.5 orders these; the specification does not
    return compare_values(op, x, y)


def _check_promotion(x: NumericValue, y: NumericValue) -> None:
    """Give up where oxigraph's promotion of a decimal to a float or double may round
    otherwise than the exact one of :mod:`rsep.rdf.values`; and on NaN."""
    for value in (x.value, y.value):
        if isinstance(value, float) and value != value:
            raise Unsure
    target = max(x.type, y.type)
    if target in (NumericType.FLOAT, NumericType.DOUBLE):
        for number in (x, y):
            if number.type == NumericType.DECIMAL and (
                target == NumericType.FLOAT or not exact_double(Decimal(number.value))
            ):
                raise Unsure


@lru_cache(maxsize=1 << 12)
def exact_double(number: Decimal) -> bool:
    """Whether oxigraph's decimal-to-double conversion (its ``i128`` count, trailing zeros
    dropped, as ``f64``, divided by a power of ten) is one correctly rounded division, as
    Python's ``float(number)``: the count has at most 53 bits."""
    scaled, _ = _strip(int(number.scaleb(18)))
    return abs(scaled) < 2**53


_OPERATIONS: dict[str, Callable[[Term, Term], Literal]] = {
    "+": add,
    "-": subtract,
    "*": multiply,
    "/": divide,
}


@lru_cache(maxsize=1 << 16)
def _arithmetic(op: str, a: Result, b: Result) -> Literal | NumericValue:
    """``a op b`` (sec. 17.3, F&O sec. 6.2) as oxigraph computes it: 64-bit integers,
    decimals in ``i128`` units of 10⁻¹⁸ (multiplication and division as its algorithm),
    IEEE floats; elsewhere :class:`Unsure`. A double is computed here (IEEE, after
    promotion: what :mod:`rsep.rdf.values` does) without writing its canonical form."""
    x, y = _operand(a), _operand(b)
    if not (isinstance(x, NumericValue) and isinstance(y, NumericValue)):
        raise SparqlTypeError("arithmetic on a non-number (sec. 17.3)")
    _check_promotion(x, y)
    kind = max(x.type, y.type)
    if kind == NumericType.DOUBLE and (op != "/" or y.value != 0):
        first, second = float(x.value), float(y.value)  # exact: see _check_promotion
        number = (
            first + second
            if op == "+"
            else first - second
            if op == "-"
            else first * second
            if op == "*"
            else first / second
        )
        return NumericValue(Literal(_double_lexical(number), datatype=_DOUBLE_IRI), kind, number)
    result = _OPERATIONS[op](x.term, y.term)
    if kind == NumericType.INTEGER and op != "/":
        if not _I64[0] <= int(result.value) <= _I64[1]:
            raise Unsure
    elif kind in (NumericType.INTEGER, NumericType.DECIMAL):
        left, right = Decimal(x.value), Decimal(y.value)
        expected = _decimal_operation(op, left, right)
        if expected is None or Decimal(result.value) != expected:
            raise Unsure
    return result


_DOUBLE_IRI = NamedNode(XSD_DOUBLE)


def _double_lexical(number: float) -> str:
    """A lexical form of the double (XSD 1.1 sec. 3.3.5), not necessarily canonical."""
    if number != number:
        return "NaN"
    if number in (math.inf, -math.inf):
        return "INF" if number > 0 else "-INF"
    return repr(number)


def _decimal_operation(op: str, left: Decimal, right: Decimal) -> Decimal | None:
    """oxigraph's decimal operation (``oxsdatatypes::Decimal``: ``checked_add``, ...,
    ``checked_div``) on the ``i128`` counts of 10⁻¹⁸; ``None`` where it fails."""
    if not (_fits_decimal(left) and _fits_decimal(right)):
        return None
    a, b = int(left.scaleb(18)), int(right.scaleb(18))
    if op in ("+", "-"):
        value = a + b if op == "+" else a - b
    elif op == "*":
        (la, sa), (lb, sb) = _strip(a), _strip(b)
        shift = sa + sb - 18
        if shift < 0:
            return None
        value = la * lb * 10**shift
        if not _I128[0] <= la * lb <= _I128[1]:
            return None
    else:
        k = 0
        if a != 0:
            while _I128[0] <= a * 10 ** (k + 1) <= _I128[1]:
                k += 1
        rb, sb = _strip(b)
        shift = k + sb - 18
        if shift < 0 or rb == 0:
            return None
        value = _truncate(_truncate(a * 10**k, rb), 10**shift)
    if not _I128[0] <= value <= _I128[1]:
        return None
    return Decimal(value).scaleb(-18)


def _strip(value: int) -> tuple[int, int]:
    """``value`` without its trailing decimal zeros, and how many there were."""
    shift = 0
    if value != 0:
        while value % 10 == 0:
            value //= 10
            shift += 1
    return value, shift


def _truncate(a: int, b: int) -> int:
    """Integer division toward zero (Rust's ``/``)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def _sign(op: str, a: Result) -> Literal:
    x = _operand(a)
    if not isinstance(x, NumericValue):
        raise SparqlTypeError("unary arithmetic on a non-number (sec. 17.3)")
    if isinstance(x.value, float) and x.value != x.value:
        raise Unsure
    result = unary_minus(x.term) if op == "neg" else unary_plus(x.term)
    if x.type == NumericType.INTEGER and not _I64[0] <= int(result.value) <= _I64[1]:
        raise Unsure
    if x.type == NumericType.DECIMAL and not _fits_decimal(Decimal(result.value)):
        raise Unsure
    return result


def _function(op: str, a: Result) -> Result:
    """The one-argument built-ins (sec. 17.4.2) on a stored term."""
    term = _term(a)
    if op == "isiri":
        return isinstance(term, NamedNode)
    if op == "isblank":
        return isinstance(term, BlankNode)
    if op == "isliteral":
        return isinstance(term, Literal)
    if op == "isnumeric":
        if not isinstance(term, Literal) or term.datatype.value not in _NUMERIC:
            return False
        if not as_stored(term):
            raise Unsure
        return True
    if op == "str":
        if isinstance(term, BlankNode):
            raise SparqlTypeError("STR of a blank node (sec. 17.4.2.5)")
        return Literal(term.value)
    if not isinstance(term, Literal):
        raise SparqlTypeError(f"{op.upper()} of a non-literal (sec. 17.4.2)")
    if op == "lang":
        return Literal(term.language or "")
    if op == "datatype":
        return NamedNode(term.datatype.value)
    raise AssertionError(op)  # pragma: no cover - compile_bgp reads only these
