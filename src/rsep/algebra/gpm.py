"""A GPM's graph pattern as a basic graph pattern: its triple patterns and FILTERs (SPARQL
1.1 sec. 18.2), read once from the pattern's text, and what they tell without any data:
FILTERs that are never true while some variables are unbound (sec. 17.2), hence the GPMs
that give no ``PARTITION BY`` key on an event alone (SPAseq choice 9, docs/semantics.md).

Both the engine (:mod:`rsep.engine.sequence`, which then does not match such a GPM
for keys) and Spark (:mod:`rsep.spark.partition`, which routes keys by joins) read
patterns through this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING

from rsep.algebra.events import Gpm

if TYPE_CHECKING:
    from rsep.lang import ast

__all__ = [
    "TriplePattern",
    "basic_pattern",
    "event_part",
    "expression_variables",
    "group_of",
    "inner_group",
    "never_true",
    "no_key_alone",
    "pattern_variables",
]


TriplePattern = tuple[str, str, str]
"""A triple pattern of a basic graph pattern: each position a variable ``?name`` (a blank
node of the pattern is the variable ``?_:…``, which no SPARQL name can clash with) or an
IRI in N-Triples form ``<…>``, as the columnar rows write terms."""


@cache
def group_of(text: str) -> ast.Group | None:
    """The AST of a SPARQL group pattern ``{ … }`` (its ``GroupPattern``)."""
    from rsep.lang import parse_query

    return parse_query("SELECT * WHERE " + text, "sparql", check=False).where


def inner_group(
    where: ast.Node | None, through: Callable[[ast.SubSelect], bool] | None = None
) -> ast.Node | None:
    """``{ { P } }`` as ``P`` (SPARQL 1.1 sec. 18.2.2.6), as deep as it nests; with
    ``through``, a lone sub-select it accepts stands for its pattern too."""
    from rsep.lang import ast

    while isinstance(where, ast.GroupPattern) and len(where.elements) == 1:
        inner = where.elements[0]
        if isinstance(inner, ast.GroupPattern):
            where = inner
        elif isinstance(inner, ast.SubSelect) and through is not None and through(inner):
            where = inner.where
        else:
            break
    return where


def event_part(gpm: Gpm) -> tuple[tuple[TriplePattern, ...], tuple[ast.Expr, ...]] | str:
    """The triple patterns and FILTERs of a GPM's stream part (:func:`basic_pattern`), or why it is
    not a basic graph pattern."""
    if gpm.pattern.paths:
        return "extended path triples"
    return basic_pattern(group_of(gpm.pattern.text), "?_:e")


def basic_pattern(
    where: ast.Group | None, blank: str
) -> tuple[tuple[TriplePattern, ...], tuple[ast.Expr, ...]] | str:
    """The triple patterns and FILTER expressions of a group made only of triples blocks and
    FILTERs, or why it is not one (blank nodes become variables named from ``blank``)."""
    from rsep.lang import ast

    if not isinstance(where, ast.GroupPattern):
        return "not a group pattern"
    patterns: list[TriplePattern] = []
    filters: list[ast.Expr] = []
    fresh = iter(range(1 << 30))

    def position(node: object) -> str | None:
        if isinstance(node, ast.Var):
            return "?" + node.name
        if isinstance(node, ast.Iri):
            return f"<{node.value}>"
        if isinstance(node, ast.BlankNode):
            return f"{blank}:{node.label if node.label is not None else f'#{next(fresh)}'}"
        return None

    for element in where.elements:
        if isinstance(element, ast.Filter):
            filters.append(element.expr)
            continue
        if not isinstance(element, ast.TriplesBlock):
            return f"not a basic graph pattern ({type(element).__name__})"
        for triples in element.triples:
            subject = position(triples.subject)
            if subject is None or not triples.properties:
                return f"a subject that is not a term ({type(triples.subject).__name__})"
            for prop in triples.properties:
                verb = position(prop.verb)
                if verb is None:
                    return "a property path"
                for obj in prop.objects:
                    o = position(obj)
                    if o is None:
                        return f"an object that is not a variable or IRI ({type(obj).__name__})"
                    patterns.append((subject, verb, o))
    return tuple(patterns), tuple(filters)


def pattern_variables(patterns: Iterable[TriplePattern]) -> set[str]:
    """The names of the variables of triple patterns (blank nodes as ``_:…``)."""
    return {x[1:] for pattern in patterns for x in pattern if x.startswith("?")}


def expression_variables(expr: ast.Expr) -> frozenset[str]:
    """The names of the variables ``expr`` mentions."""
    from rsep.lang import ast

    return frozenset(node.name for node in expr.walk() if isinstance(node, ast.Var))


def never_true(expr: ast.Expr, unbound: frozenset[str]) -> bool:
    """Whether a FILTER's expression is never true when the variables ``unbound`` are
    unbound, whatever the others hold: ``A && B`` if either is never true, ``A || B`` if
    both are, else if it is always an error (:func:`always_error`; a FILTER keeps a
    solution only when the value is true, SPARQL 1.1 sec. 17.2)."""
    from rsep.lang import ast

    if isinstance(expr, ast.Binary) and expr.op == "&&":
        return never_true(expr.left, unbound) or never_true(expr.right, unbound)
    if isinstance(expr, ast.Binary) and expr.op == "||":
        return never_true(expr.left, unbound) and never_true(expr.right, unbound)
    return always_error(expr, unbound)


def always_error(expr: ast.Expr, unbound: frozenset[str]) -> bool:
    """Whether ``expr`` is an error whatever the bound variables hold (SPARQL 1.1 sec.
    17.2, 17.3): an unbound variable is; a comparison, arithmetic or unary operator is when
    an operand is; ``||`` and ``&&`` only when both operands are. Anything else (functions,
    ``BOUND``, ``COALESCE``, ``IF``, ``IN``, ``EXISTS``) is not known to be."""
    from rsep.lang import ast

    if isinstance(expr, ast.Var):
        return expr.name in unbound
    if isinstance(expr, ast.Unary):
        return always_error(expr.operand, unbound)
    if isinstance(expr, ast.Binary):
        left, right = always_error(expr.left, unbound), always_error(expr.right, unbound)
        return left and right if expr.op in ("&&", "||") else left or right
    return False


def no_key_alone(gpm: Gpm) -> str | None:
    """Why ``gpm`` has no solution on an event alone, whatever the event holds (then it
    gives no ``PARTITION BY`` key, SPAseq choice 9), or ``None`` when it may have one: its
    stream part is a basic graph pattern with a FILTER never true while the variables the
    pattern does not bind are unbound (V shape's ``FILTER (?p2 < ?p1 * 0.998)``, where
    ``?p1`` comes from an earlier step). A pattern that is not a basic one may have
    solutions: ``None``."""
    event = event_part(gpm)
    if isinstance(event, str):
        return None
    patterns, filters = event
    bound = pattern_variables(patterns)
    if any(never_true(f, expression_variables(f) - bound) for f in filters):
        return "a FILTER names a variable the pattern does not bind"
    return None
