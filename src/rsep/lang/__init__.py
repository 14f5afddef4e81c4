"""Query languages: the SPARQL 1.1 grammar, its dialect extensions, parsers and checks.

The flow of one query text: :func:`parse_query` detects (or is given) the dialect, parses
with its grammar, builds the AST (``rsep.lang.ast`` with ``rsep.lang.ast_stream`` and the
dialect's own nodes) and checks it (``rsep.lang.checks`` for SPARQL 1.1, and
``rsep.lang.stream_checks`` for the streaming parts); :func:`to_text` prints a tree back in
a dialect. docs/languages.md describes the syntax of every dialect.
"""

from __future__ import annotations

from collections.abc import Mapping

from rsep.lang.ast import Node, Query
from rsep.lang.checks import QuerySemanticError
from rsep.lang.dialects import Dialect, detect_dialect, get_dialect
from rsep.lang.parser import QuerySyntaxError

__all__ = [
    "Dialect",
    "QuerySemanticError",
    "QuerySyntaxError",
    "detect_dialect",
    "get_dialect",
    "parse_query",
    "to_text",
]


def _dialect(dialect: str | Dialect) -> Dialect:
    return dialect if isinstance(dialect, Dialect) else get_dialect(dialect)


def parse_query(
    text: str,
    dialect: str | Dialect | None = None,
    *,
    prefixes: Mapping[str, str] | None = None,
    base: str | None = None,
    check: bool = True,
) -> Query:
    """The checked AST of ``text`` in ``dialect`` (a name such as ``"rspql"``, a
    :class:`Dialect`, or detected from the text when None; docs/languages.md, "Detection").

    Raises :class:`QuerySyntaxError` or :class:`QuerySemanticError`, each with line and
    column. ``prefixes`` and ``base`` are declared outside the text; ``check=False`` only
    parses and builds.
    """
    chosen = detect_dialect(text) if dialect is None else _dialect(dialect)
    return chosen.parse_query(text, prefixes=prefixes, base=base, check=check)


def to_text(node: Node, dialect: str | Dialect) -> str:
    """``node`` (a query, or a pattern, expression…) as text of ``dialect``; parsed back in
    that dialect it builds an equal tree. Raises :class:`ValueError` for a construct the
    dialect cannot write (a C-SPARQL query name in RSP-QL, say)."""
    return _dialect(dialect).print(node)
