"""The rules of the streaming dialects that their grammars cannot express, checked on the AST.

``rsep.lang.checks`` checks SPARQL 1.1's own rules on the parse tree; these are the rules of
the streaming parts, each stated by the paper that defines the construct:

- ``WINDOW w { … }`` names a window the dataset declares (RSP-QL Semantics (003): a window
  graph pattern reads a named window (w, W(S)) of the dataset, Def. 14 and "RSP-QL dataset");
- ``EVENT w { … }`` names a declared window (RSEP-QL (000) Sect. 3.3: a basic event
  pattern (EVENT w P) matches the items of the window w);
- a SPAseq sequence names only GPMs the query defines, and a GPM reads only streams the
  query names (SPAseq (004) Definition 4 and Query 1: GPMs and named streams are referred
  to by their names);
- a CQELS-CEP ``SEQ`` negates at most one element (CQELS-CEP (001) Sect. 2.4 and 3.1, SEQ
  WITHOUT: ``SEQ(A1, …, !Ai, …, An)``);
- in a streaming dialect, every projected variable is bound somewhere in the query, by a
  triple pattern, a window, stream or event pattern, a GPM, BIND, VALUES, an alias or
  ETALIS's ``?x is e`` (such a variable is unbound in every answer, SPARQL 1.1 Sec. 18.5,
  Projection; in a continuous query it is a typo that would go unnoticed: CityBench's
  RSP-QL Q3 projects ``?obId3`` where its pattern says ``?obId2``). Plain SPARQL 1.1 allows
  it, and the ``sparql`` dialect reads SPARQL 1.1 unchanged, so it is not checked there;
- every ``PRAGMA name = value`` names a parameter (docs/languages.md, "Explicit operational
  parameters"; :data:`~rsep.lang.dialects.PARAMETER_NAMES`). Whether the parameter takes the
  value is the plan's to say (``rsep.algebra.params``, the one list of allowed values), so
  ``rsep.algebra.compile`` checks it, with the PRAGMA's line and column.

:func:`check_query` raises :class:`QuerySemanticError` at the first violation, with one
sentence and the line and column of the offending name. The walks are iterative.
"""

from __future__ import annotations

from collections.abc import Iterator

from rsep.lang import ast
from rsep.lang.ast_stream import NamedWindow, Pragma, WindowPattern
from rsep.lang.dialects import PARAMETER_NAMES, Dialect
from rsep.lang.dialects.cqelscep import SeqPattern
from rsep.lang.dialects.epsparql import Do, Is
from rsep.lang.dialects.rsepql import BasicEvent
from rsep.lang.dialects.spaseq import GpmRef, NamedStream, SpaseqQuery
from rsep.lang.dialects.stream import semantic_error

__all__ = ["check_query"]


def check_query(query: ast.Query, dialect: Dialect | None = None) -> None:
    """Check the streaming rules above on ``query`` (built by any dialect's builder); raise
    :class:`QuerySemanticError` at the first violation. ``dialect`` is the dialect the query
    was read in: the projection rule is not checked for plain SPARQL (``sparql``)."""
    _check_pragmas(query)
    _check_window_names(query)
    _check_spaseq_names(query)
    _check_negations(query)
    if dialect is None or dialect.name != "sparql":
        _check_projection(query)


def _name(node: ast.Var | ast.Iri) -> str:
    return f"?{node.name}" if isinstance(node, ast.Var) else f"<{node.value}>"


# PRAGMA ------------------------------------------------------------------------------------


def _check_pragmas(query: ast.Query) -> None:
    for pragma in query.prologue:
        if not isinstance(pragma, Pragma):
            continue
        if pragma.name not in PARAMETER_NAMES:
            known = ", ".join(PARAMETER_NAMES)
            raise semantic_error(
                f"PRAGMA {pragma.name} names no parameter (known: {known})", pragma.pos
            )


# WINDOW w, EVENT w ----------------------------------------------------------------------------


def _check_window_names(query: ast.Query) -> None:
    names = [clause.name for clause in query.dataset if isinstance(clause, NamedWindow)]
    if any(isinstance(name, ast.Var) for name in names):
        return  # a variable window name may be any window
    declared = {name.value for name in names if isinstance(name, ast.Iri)}
    for node in query.walk():
        if isinstance(node, WindowPattern):
            name, keyword = node.name, "WINDOW"
        elif isinstance(node, BasicEvent):
            name, keyword = node.window, "EVENT"
        else:
            continue
        if isinstance(name, ast.Iri) and name.value not in declared:
            text = _name(name)
            raise semantic_error(
                f"{keyword} {text} names a window the query does not declare "
                f"(add FROM NAMED WINDOW {text} ON …)",
                name.pos or node.pos,
            )


# SPAseq names ---------------------------------------------------------------------------------


def _check_spaseq_names(query: ast.Query) -> None:
    if not isinstance(query, SpaseqQuery):
        return
    streams = {clause.name for clause in query.dataset if isinstance(clause, NamedStream)}
    gpms = query.gpms
    for gpm in gpms:
        for stream in gpm.streams:
            if stream.name not in streams:
                raise semantic_error(
                    f"GPM {gpm.name} reads the stream {stream.name}, which no FROM STREAM "
                    f"{stream.name} <iri> declares",
                    stream.pos,
                )
    defined = {gpm.name for gpm in gpms}
    expr = query.seq
    for node in [] if expr is None else expr.walk():
        if isinstance(node, GpmRef) and node.name not in defined:
            raise semantic_error(
                f"the sequence names the GPM {node.name}, which no DEFINE GPM {node.name} defines",
                node.pos,
            )


# CQELS-CEP SEQ WITHOUT ------------------------------------------------------------------------


def _check_negations(query: ast.Query) -> None:
    for node in query.walk():
        if not isinstance(node, SeqPattern):
            continue
        negated = [element for element in node.elements if element.negated]
        if len(negated) > 1:
            raise semantic_error(
                "a SEQ negates at most one of its elements (SEQ WITHOUT, CQELS-CEP Sect. 2.4)",
                negated[1].pos,
            )


# Projected variables ----------------------------------------------------------------------


def _check_projection(query: ast.Query) -> None:
    select = query.form
    if not isinstance(select, ast.Select) or select.projection is None:
        return
    bound = _bound(query)
    for item in select.projection:
        if isinstance(item, ast.Alias):
            bound.add(item.var.name)
        elif item.name not in bound:
            raise semantic_error(
                f"?{item.name} is projected but bound nowhere in the query", item.pos
            )


def _bound(query: ast.Query) -> set[str]:
    """The variables something in ``query`` binds (not its projection)."""
    roots: list[ast.Node] = [*query.dataset]
    if query.where is not None:
        roots.append(query.where)
    if query.values is not None:
        roots.append(query.values)
    names: set[str] = set()
    for key in query.group_by:
        if isinstance(key, ast.Alias):
            names.add(key.var.name)
    stack = roots
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Var):
            names.add(node.name)
        elif isinstance(node, ast.Filter | Do):
            names.update(_assigned(node))
        elif isinstance(node, ast.Bind):
            names.add(node.var.name)
            names.update(_assigned(node.expr))
        elif isinstance(node, ast.SubSelect):
            projection = node.select.projection
            if projection is None:
                stack.append(node.where)
            else:
                names.update(i.name if isinstance(i, ast.Var) else i.var.name for i in projection)
        elif not isinstance(node, ast.Minus):
            stack.extend(node.children())
    return names


def _assigned(node: ast.Node) -> Iterator[str]:
    """Variables an expression assigns: the left side of ETALIS's ``?x is e``."""
    for inner in node.walk():
        if isinstance(inner, Is) and isinstance(inner.left, ast.Var):
            yield inner.left.name
