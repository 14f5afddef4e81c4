"""EP-SPARQL (``grammar/epsparql.lark``): temporal joins of graph patterns.

Paper: EP-SPARQL: A Unified Language for Event Processing and Stream Reasoning (seed 002).
Sect. 4.1: SPARQL with the binary operators SEQ, EQUALS, OPTIONALSEQ and EQUALSOPTIONAL
between group graph patterns (like UNION), the filter functions getDURATION(),
getSTARTTIME() and getENDTIME(), and CONSTRUCT rules whose output re-enters the stream.
Sect. 4.2: triples occur over intervals [t, t'], answers are reported as soon as detected
(timewise monotonicity). ETALIS's Prolog-flavoured forms (bare names, ``is``, ``DO (...)``,
``WITHIN n``, ``aggregate(...)``) are read as well (see ``epsparql.lark``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from lark import Token, Tree, v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import Duration, PragmaValue
from rsep.lang.build import Builder, Children, _Form, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, cue, keyword_cue
from rsep.lang.dialects.stream import StreamBuilder, StreamPrinter
from rsep.lang.parser import QuerySyntaxError
from rsep.lang.printer import ADDITIVE, RELATIONAL, Printer

_OPERATOR = r"(?:SEQ|EQUALS|OPTIONALSEQ|EQUALSOPTIONAL)(?![\w-])"
_PROJECTIONS = frozenset({"var", "select_expression", "bare_select_expression"})

TEMPORAL_OPERATORS = ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL")
"""Sect. 4.1: the binary operators between graph patterns, besides UNION."""
TIME_FUNCTIONS: Mapping[str, str] = {
    "GETDURATION": "getDURATION",
    "GETSTARTTIME": "getSTARTTIME",
    "GETENDTIME": "getENDTIME",
}
"""Sect. 4.1: the functions "to be used inside filter expressions", which read the interval
of the pattern the FILTER is placed in (the AST's name and the paper's spelling)."""
_BARE_NAME = re.compile(r"[a-z][A-Za-z0-9_]*")


# Nodes (Sect. 4.1, and ETALIS's forms) ---------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class TemporalJoin(ast.Pattern):
    """``P1 op P2`` for op in SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL: evaluated by SeqJoin,
    EqJoin, SeqRightJoin and EqLeftJoin (Sect. 4.2). The operators share one precedence level
    with UNION and group left to right (Sect. 4.1), so ``left`` is a group, a UNION or
    another temporal join, and ``right`` a group."""

    op: str
    left: ast.Pattern
    right: ast.Group

    def __post_init__(self) -> None:
        if self.op not in TEMPORAL_OPERATORS:
            raise ValueError(f"not an EP-SPARQL operator: {self.op!r}")


@dataclass(frozen=True, slots=True, eq=False)
class Is(ast.Expr):
    """ETALIS ``?x is expression``: Prolog arithmetic, binding ``left`` to the value."""

    left: ast.Expr
    right: ast.Expr


@dataclass(frozen=True, slots=True, eq=False)
class Do(ast.Pattern):
    """ETALIS ``DO (expression)`` after the WHERE clause: evaluated after a match."""

    expr: ast.Expr


@dataclass(frozen=True, slots=True, eq=False)
class Within(ast.Pattern):
    """ETALIS ``WITHIN n`` after the WHERE clause: the longest duration of a match, in the
    query's time unit (the second, by default)."""

    duration: Duration


@dataclass(frozen=True, slots=True, eq=False)
class EtalisAggregate(ast.Pattern):
    """ETALIS ``aggregate(f, goal, ?result)``: ``function`` is ``count`` (None) or an
    aggregate over the solutions of the Prolog ``goal``, bound to ``result``."""

    function: ast.Expr | None
    goal: ast.Expr
    result: ast.Var


_TRAILERS = (ast.Filter, Do, Within)


@v_args(meta=True)
class EpSparqlBuilder(StreamBuilder):
    """The AST of ``epsparql.lark``."""

    def group_or_union_graph_pattern(self, meta: Meta, children: Children) -> ast.Pattern:
        """[67], with SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL besides UNION (Sect. 4.1)."""
        return _chain(children, meta)

    def where_clause(self, meta: Meta, children: Children) -> ast.Group:
        """``WHERE {P1} op {P2} … FILTER (…)``: with operators or trailers, the group of the
        chain and its trailers (a FILTER after the chain constrains the whole of it)."""
        trailers = [c for c in children if isinstance(c, _TRAILERS)]
        chain = [c for c in children if not isinstance(c, _TRAILERS)]
        if len(chain) == 1 and not trailers:
            group = chain[0]
            assert isinstance(group, ast.GroupPattern | ast.SubSelect)
            return group
        return ast.GroupPattern((_chain(chain, meta), *trailers), pos=_pos(meta))

    def do_clause(self, meta: Meta, children: Children) -> Do:
        """ETALIS ``DO (expression)``."""
        return Do(children[0], pos=_pos(meta))

    def within_clause(self, meta: Meta, children: Children) -> Within:
        """ETALIS ``WITHIN n``."""
        return Within(children[0], pos=_pos(meta))

    def bare_select_expression(self, meta: Meta, children: Children) -> ast.Alias:
        """``SELECT ?sum / ?count AS ?average``: an alias without parentheses."""
        return ast.Alias(children[0], children[1], pos=_pos(meta))

    def construct_query(self, meta: Meta, children: Children) -> _Form:
        """ETALIS ``CONSTRUCT ?s p ?o WHERE …``: a template without braces."""
        if isinstance(children[0], tuple) and isinstance(
            children[-2], ast.GroupPattern | ast.SubSelect
        ):
            template = ast.Construct(children[0], pos=_pos(meta))
            dataset = tuple(c for c in children if isinstance(c, ast.DatasetClause))
            return _Form(template, dataset, children[-2], children[-1])
        return super().construct_query(meta, children)

    def relational_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[114], and ETALIS ``?x is expression``."""
        if len(children) == 3 and str(children[1]).lower() == "is":
            return Is(children[0], children[2], pos=_pos(meta))
        return super().relational_expression(meta, children)

    def etalis_aggregate(self, meta: Meta, children: Children) -> EtalisAggregate:
        """ETALIS ``aggregate(count | f(?x), goal, ?result)``."""
        function, goal, result = children
        if isinstance(function, Token):  # COUNT
            function = None
        return EtalisAggregate(function, goal, result, pos=_pos(meta))

    def iri(self, meta: Meta, children: Children) -> ast.Iri:
        """[136], and a Prolog atom (a bare lower-case name) as the IRI of that name."""
        child = children[0]
        if isinstance(child, Token) and child.type == "BARE_NAME":
            return ast.Iri(str(child), pos=_pos(meta))
        return super().iri(meta, children)


def _chain(children: Children, meta: Meta) -> ast.Pattern:
    """``G1 op G2 op G3 …`` grouped left to right (Sect. 4.1). A run of UNIONs is one
    :class:`ast.Union`; a temporal join that is a UNION branch is put in a group."""
    current: ast.Pattern = children[0]
    for operator, group in zip(children[1::2], children[2::2], strict=True):
        op = str(operator).upper()
        if op != "UNION":
            current = TemporalJoin(op, current, group, pos=_pos(meta))
        elif isinstance(current, ast.Union):
            current = ast.Union((*current.branches, group), pos=_pos(meta))
        elif isinstance(current, ast.GroupPattern | ast.SubSelect):
            current = ast.Union((current, group), pos=_pos(meta))
        else:
            branch = ast.GroupPattern((current,), pos=current.pos)
            current = ast.Union((branch, group), pos=_pos(meta))
    return current


class EpSparqlPrinter(StreamPrinter):
    """EP-SPARQL text: ``WHERE {P1} SEQ {P2} FILTER (…)`` in the paper's layout, and the
    ETALIS forms (bare names, ``is``, ``DO``, ``WITHIN``, ``aggregate``)."""

    def query_where(self, query: ast.Query) -> list[str]:
        """The paper's layout, ``WHERE {P1} SEQ {P2}`` then the trailers one per line, when
        the WHERE group is a chain and its trailers; else the group in braces."""
        where = query.where
        if not isinstance(where, ast.GroupPattern) or not where.elements:
            return super().query_where(query)
        head, *rest = where.elements
        chain = isinstance(head, ast.GroupPattern | ast.SubSelect | ast.Union | TemporalJoin)
        if not chain or not all(isinstance(e, _TRAILERS) for e in rest):
            return super().query_where(query)
        if not isinstance(head, TemporalJoin) and not any(isinstance(e, Do | Within) for e in rest):
            return super().query_where(query)
        return ["WHERE " + self.pattern(head, 0), *(self.pattern(e, 0) for e in rest)]

    def pattern_temporal_join(self, join: TemporalJoin, depth: int) -> str:
        """``left op {right}``."""
        return f"{self.pattern(join.left, depth)} {join.op} {self.group(join.right, depth)}"

    def pattern_do(self, do: Do, depth: int) -> str:
        """``DO (expression)``."""
        return f"DO ({self.expr(do.expr, depth)})"

    def pattern_within(self, within: Within, depth: int) -> str:
        """``WITHIN n``."""
        return f"WITHIN {self.duration(within.duration)}"

    def pattern_etalis_aggregate(self, aggregate: EtalisAggregate, depth: int) -> str:
        """``aggregate(f, goal, ?result)``."""
        function = "count" if aggregate.function is None else self.expr(aggregate.function, 0)
        goal, result = self.expr(aggregate.goal, depth), self.expr(aggregate.result, depth)
        return f"aggregate({function}, {goal}, {result})"

    def precedence(self, expr: ast.Expr) -> int:
        """``is`` binds as a comparison does."""
        return RELATIONAL if isinstance(expr, Is) else super().precedence(expr)

    def expr_is(self, expr: Is, depth: int) -> str:
        """``left is right``."""
        left, right = self.expr(expr.left, depth, ADDITIVE), self.expr(expr.right, depth, ADDITIVE)
        return f"{left} is {right}"

    def expr_built_in(self, call: ast.BuiltIn, depth: int) -> str:
        """``getDURATION()``, ``getSTARTTIME()``, ``getENDTIME()`` as the paper spells them."""
        if call.name in TIME_FUNCTIONS:
            return TIME_FUNCTIONS[call.name] + self._arguments(call.args, depth)
        return super().expr_built_in(call, depth)

    def iri(self, value: str, *, verb: bool = False) -> str:
        """A Prolog atom (an IRI that is a bare lower-case name, not a keyword) as written."""
        if _BARE_NAME.fullmatch(value) and not _reserved(value):
            return value
        return super().iri(value, verb=verb)

    def pragma_value(self, value: PragmaValue) -> str:
        """A PRAGMA value; an IRI never as a bare name (a bare word there is a word)."""
        if isinstance(value, ast.Iri):
            return super().iri(value.value)
        return super().pragma_value(value)


# Terminals that match any word, but only where a PRAGMA or the bare name itself is read.
_NAME_TERMINALS = frozenset({"BARE_NAME", "PARAMETER_NAME", "PARAMETER_WORD"})


@cache
def _terminals() -> tuple[re.Pattern[str], ...]:
    """The other terminals of EP-SPARQL's grammar, as regular expressions."""
    return tuple(
        re.compile(terminal.pattern.to_regexp())
        for terminal in DIALECT.parser().terminals
        if terminal.name not in _NAME_TERMINALS
    )


@cache
def _reserved(name: str) -> bool:
    """Whether another terminal (a keyword) reads ``name``: then it is no bare name."""
    return any(pattern.fullmatch(name) for pattern in _terminals())


class EpSparql(StreamingDialect):
    """``SELECT ?c WHERE { ?c :p ?x } SEQ { ?c :p ?y } FILTER (getDURATION() < "P30D"^^...)``."""

    name = "epsparql"
    title = "EP-SPARQL"
    grammar = "epsparql.lark"
    keywords = frozenset(
        {"SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"}
        | {"getDURATION", "getSTARTTIME", "getENDTIME", "DO", "WITHIN", "IS", "AGGREGATE"}
    )
    cues: ClassVar[Cues] = (
        cue(rf"\}} ?{_OPERATOR} ?\{{"),
        # any other upper-case word between two groups reads as a temporal operator, so a
        # misspelt one (the paper's SEQUENTIONAL) is reported against EP-SPARQL's list
        cue(r"\} ?(?!(?:UNION|OPTIONAL|MINUS|GRAPH|SERVICE|WHERE|EXISTS)\b)[A-Z]{3,} ?\{", 0),
        keyword_cue("OPTIONALSEQ"),
        keyword_cue("EQUALSOPTIONAL"),
        keyword_cue("getDURATION", then=r" ?\("),
        keyword_cue("getSTARTTIME", then=r" ?\("),
        keyword_cue("getENDTIME", then=r" ?\("),
        # ETALIS forms: CONSTRUCT without braces, DO (...), a trailing WITHIN n, and a
        # triple pattern whose predicate is a bare Prolog atom
        keyword_cue("CONSTRUCT", then=r" (?!WHERE\b)[?$]"),
        cue(r"\} ?DO ?\("),
        cue(r"\} ?WITHIN \d+ ?$"),
        cue(r"[{.] ?[?$]\w+ (?!a )[a-z]\w* [?$\w]", 0),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "EP-SPARQL has no windows: patterns range over the whole stream, a landmark "
            "window from the start (RSEP-QL paper, Table 1: W^λ)",
        ),
        "window.present": (
            "latest",
            "the landmark window (t0, now] is the only window (RSEP-QL paper, Sect. 3.1)",
        ),
        "window.report": (
            "content_change",
            "results are output as soon as detected (Sect. 4.2, timewise monotonicity); "
            "RSEP-QL paper, Sect. 3.4: EP-SPARQL is regulated by content change",
        ),
        "r2s": (
            "istream",
            "each answer is reported once, when it is detected, and never invalidated "
            "(Sect. 4.2, timewise monotonicity)",
        ),
        "time_unit": (
            "s",
            "the paper fixes no unit; ETALIS stamps events with datime terms whose finest "
            "field is the second, and reads WITHIN n (etalis ep_sparql_12) in it",
        ),
        "lateness": ("PT0S", "triples enter in the order of their time stamps (Sect. 4.2)"),
        "strategy": (
            "skip_till_any",
            "SeqJoin joins every compatible pair with t_ω < t'_α, whatever lies between "
            "(Sect. 4.2)",
        ),
        "selection": (
            "unrestricted",
            "the formal semantics (Sect. 4.2) is EP-SPARQL's unrestricted setting (RSEP-QL "
            "paper, Sect. 4.3 and Table 1)",
        ),
        "consumption": (
            "none",
            "unrestricted: no input is consumed (RSEP-QL paper, Sect. 4.4, P^u)",
        ),
        "timestamps": (
            "interval",
            "a triple occurrence is <<s, p, o>, t, t'> with an interval [t, t'] (Sect. 4.2)",
        ),
        "profile": (
            "cqels",
            "content change with Istream is the CQELS engine profile "
            "(csrbench/config/cqels.properties)",
        ),
    }

    builder: ClassVar[type[Builder]] = EpSparqlBuilder
    printer: ClassVar[type[Printer]] = EpSparqlPrinter

    def sparql_tree(self, tree: Tree[Token]) -> Tree[Token]:
        """An alias without parentheses is SPARQL's ``(e AS ?v)``; the function of ETALIS's
        ``aggregate(sum(?x), goal, ?r)`` is no SPARQL aggregate (Sect. 11 places them)."""
        for node in tree.find_data("bare_select_expression"):
            node.data = "select_expression"
        for node in tree.find_data("etalis_aggregate"):
            for inner in node.find_data("aggregate"):
                inner.data = "etalis_function"
        return tree

    def validate(self, tree: Tree[Token], text: str) -> None:
        """A projection is a variable or ``expression AS ?var``, with or without parentheses
        (Sect. 4.1 and the SPARQL 1.1 SELECT clause): the grammar reads any expression there
        to stay LALR(1), so a bare expression without AS is rejected here."""
        for clause in tree.find_data("select_clause"):
            for item in clause.children:
                if isinstance(item, Tree) and item.data not in _PROJECTIONS:
                    raise _missing_as(item, text)


def _missing_as(item: Tree[Token], text: str) -> QuerySyntaxError:
    """The error for a projected expression without ``AS ?var``, pointing at its end."""
    meta = item.meta
    found = text[meta.start_pos : meta.end_pos]
    found = repr(found if len(found) <= 30 else found[:29] + "…")
    lines = text.split("\n")
    line = lines[meta.end_line - 1] if meta.end_line <= len(lines) else ""
    return QuerySyntaxError(meta.end_line, meta.end_column, found, ["AS"], line.rstrip("\r"))


DIALECT = EpSparql()
