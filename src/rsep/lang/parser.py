"""Parse SPARQL 1.1 Query text into a Lark tree, and turn Lark's errors into user errors.

The grammar is ``grammar/sparql.lark``, written from the W3C Recommendation's EBNF
(SPARQL 1.1 Query Language, section 19.8). The parser is LALR(1) with Lark's contextual
lexer, built once per process. A :class:`QuerySyntaxError` names the line, the column, what
was found and what the grammar expected there, and shows the line with a caret under the
column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from rsep.errors import UserError

__all__ = [
    "QuerySyntaxError",
    "build_parser",
    "expected_names",
    "grammar_text",
    "parse_sparql",
    "parse_with",
    "sparql_parser",
    "syntax_error",
]

GRAMMAR_PACKAGE = "rsep.lang"
GRAMMAR_FILE = "grammar/sparql.lark"
MAX_EXPECTED = 10

# Readable names for the token classes of the grammar (19.8, productions [139]..[163]).
_TOKEN_NAMES: dict[str, str] = {
    "IRIREF": "IRI",
    "PNAME_LN": "prefixed name",
    "PNAME_NS": "prefixed name",
    "BLANK_NODE_LABEL": "blank node",
    "VAR1": "variable",
    "VAR2": "variable",
    "LANGTAG": "language tag",
    "INTEGER": "number",
    "DECIMAL": "number",
    "DOUBLE": "number",
    "INTEGER_POSITIVE": "number",
    "DECIMAL_POSITIVE": "number",
    "DOUBLE_POSITIVE": "number",
    "INTEGER_NEGATIVE": "number",
    "DECIMAL_NEGATIVE": "number",
    "DOUBLE_NEGATIVE": "number",
    "STRING_LITERAL1": "string",
    "STRING_LITERAL2": "string",
    "STRING_LITERAL_LONG1": "string",
    "STRING_LITERAL_LONG2": "string",
    "NIL": "'()'",
    "ANON": "'[]'",
    "$END": "end of input",
}
_CLASS_NAMES = frozenset(_TOKEN_NAMES.values()) | {"function name"}
_WORD = re.compile(r"\w+|\S")


class QuerySyntaxError(UserError):
    """Query text the grammar rejects: where (1-based line and column), what, what instead."""

    def __init__(
        self,
        line: int,
        column: int,
        found: str,
        expected: Iterable[str],
        source_line: str = "",
    ) -> None:
        self.line = line
        self.column = column
        self.found = found
        self.expected = sorted(set(expected), key=_expected_order)
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        head = f"line {self.line}, column {self.column}: found {self.found}"
        if self.expected:
            shown = self.expected[:MAX_EXPECTED]
            more = ", …" if len(self.expected) > MAX_EXPECTED else ""
            head += f", expected {'one of: ' if len(self.expected) > 1 else ''}"
            head += ", ".join(shown) + more
        if not self.source_line:
            return head
        # Tabs keep their width in the caret line, so the caret sits under the column.
        pad = "".join(c if c == "\t" else " " for c in self.source_line[: self.column - 1])
        return f"{head}\n  {self.source_line}\n  {pad}^"


def _expected_order(name: str) -> tuple[int, str]:
    """Keywords first, then token classes, then punctuation, then the end of input."""
    if name == "end of input":
        return (3, name)
    if name.startswith("'"):
        return (2, name)
    if name in _CLASS_NAMES:
        return (1, name.casefold())
    return (0, name.casefold())


def grammar_text() -> str:
    """The text of ``grammar/sparql.lark``, the SPARQL 1.1 Query grammar (19.8)."""
    return resources.files(GRAMMAR_PACKAGE).joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")


@cache
def build_parser(*extensions: str, start: str = "query_unit") -> Lark:
    """An LALR(1) parser for SPARQL 1.1 Query followed by ``extensions``, built once.

    An extension is Lark grammar text appended to the base grammar: new rules, and
    ``%override`` or ``%extend`` of the base rules (a dialect's differences only).
    """
    text = "\n".join([grammar_text(), *extensions])
    # cache=True: Lark keeps the built tables in the temp folder, keyed by a hash of the
    # grammar and options, so a new process (a Spark worker, a bench run) loads them
    # instead of building them again (0.65 s → 0.09 s for SPAseq here)
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        start=start,
        propagate_positions=True,
        cache=True,
    )


def sparql_parser() -> Lark:
    """The LALR(1) parser for SPARQL 1.1 Query (19.8), built once and then shared."""
    return build_parser()


def expected_names(parser: Lark, terminals: Iterable[str]) -> set[str]:
    """Readable names for terminal names: keywords bare, punctuation quoted, classes named.

    Where an expression may start, the forty-odd built-in function names (19.8, [121] and
    [127]) are shown as one entry, "function name".
    """
    by_name = {t.name: t for t in parser.terminals}
    terminals = set(terminals)
    functions = _function_names(parser)
    if len(terminals & functions) > 3:
        terminals -= functions
        terminals.add("function name")
    names: set[str] = set()
    for name in terminals:
        terminal = by_name.get(name)
        if name in _TOKEN_NAMES:
            names.add(_TOKEN_NAMES[name])
        elif terminal is not None and isinstance(terminal.pattern, PatternStr):
            value = terminal.pattern.value
            names.add(value if _is_word(value) else f"'{value}'")
        else:
            names.add(name)
    return names


_FUNCTION_RULES = ("built_in_call", "aggregate", "regex_expression", "substring_expression")


@cache
def _function_names(parser: Lark) -> frozenset[str]:
    """The terminals that name a built-in function or aggregate in ``parser``'s grammar."""
    names = set()
    for rule in parser.rules:
        origin = rule.origin.name
        if origin in _FUNCTION_RULES or origin.startswith(("_function", "str_replace")):
            first = rule.expansion[0] if rule.expansion else None
            if first is not None and first.is_term:
                names.add(first.name)
    return frozenset(names)


def syntax_error(text: str, error: UnexpectedInput, parser: Lark) -> QuerySyntaxError:
    """Translate a Lark error into a :class:`QuerySyntaxError` pointing into ``text``."""
    line, column = error.line, error.column
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            found = "end of input"
            line, column = _end_position(text)
        elif token.start_pos is not None and _is_word(token.value):
            # A keyword the lexer cut from a longer word ('BIND' of 'BINDINGS'): show it all.
            found = _quote(_word_at(text, token.start_pos) or token.value)
        else:
            found = _quote(token.value)
        fallback: Iterable[str] = error.expected
    elif isinstance(error, UnexpectedCharacters):
        pos = error.pos_in_stream or 0
        found = _quote(_word_at(text, pos) or text[pos:])
        fallback = error.allowed or ()
    else:  # pragma: no cover - the LALR front end raises only the two above
        found, fallback = "?", ()
    if not isinstance(line, int) or line < 1:
        line, column = _end_position(text)
    lines = text.split("\n")
    source = _printable(lines[line - 1].rstrip("\r")) if line <= len(lines) else ""
    expected = _accepted(error, fallback)
    return QuerySyntaxError(line, column, found, expected_names(parser, expected), source)


def _accepted(error: UnexpectedInput, fallback: Iterable[str]) -> set[str]:
    """The terminals the parser would really shift here (LALR merges lookaheads, so the
    table row over-approximates); the table row when that cannot be computed."""
    interactive = getattr(error, "interactive_parser", None)
    if interactive is not None:
        try:
            return set(interactive.accepts())
        except Exception:  # a better list is not worth a crash: use the table row
            pass
    return set(fallback)


def _is_word(value: str) -> bool:
    return value.replace("_", "").isalnum()


def _word_at(text: str, pos: int) -> str:
    match = _WORD.match(text, pos)
    return match.group() if match else ""


def _end_position(text: str) -> tuple[int, int]:
    """The line and column just after the last non-blank character of ``text``."""
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, column


def _quote(found: str) -> str:
    if len(found) > 30:
        found = found[:29] + "…"
    return repr(found)


def _printable(line: str) -> str:
    """``line`` with control characters shown as '?', one character each (for the caret)."""
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def parse_with(parser: Lark, text: str) -> Tree[Token]:
    """Parse ``text`` with ``parser`` (see :func:`build_parser`); raise QuerySyntaxError."""
    try:
        return parser.parse(text)
    except UnexpectedInput as error:
        raise syntax_error(text, error, parser) from None


def parse_sparql(text: str) -> Tree[Token]:
    """Parse a SPARQL 1.1 query (19.8, ``QueryUnit``); raise :class:`QuerySyntaxError`."""
    return parse_with(sparql_parser(), text)
