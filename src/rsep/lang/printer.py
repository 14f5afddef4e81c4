"""Print an AST (:mod:`rsep.lang.ast`) as SPARQL 1.1 Query text that parses back to it.

The output is canonical and meant for people: keywords in upper case, two-space indentation,
one predicate-object pair per line (``;`` ends a line), one group element per line, IRIs as
prefixed names where a prologue prefix fits (Sec. 4.1.1.1) or relative to the BASE where
that resolves back to the same IRI (Sec. 4.1.1; a prefixed name that needs ``\\`` escapes
comes after the relative IRI), ``a`` for ``rdf:type`` as a verb, numbers and
booleans in their short form (Sec. 4.1.2), strings in double quotes unless the value holds a
double quote and no single one, and only the parentheses that operator precedence requires
(Sec. 17.3 and the grammar, 19.8, [110]..[121]; [88]..[96] for property paths).

The promise, tested over the W3C syntax suites and random trees: for a tree ``q`` built from
text, ``build(parse_sparql(to_sparql(q))) == q``, and printing is idempotent.

:class:`Printer` finds the method for a node by its class: ``expr_binary`` for
:class:`ast.Binary`, ``pattern_optional`` for :class:`ast.Optional`, and so on, walking the
class's MRO, so a dialect's printer subclasses :class:`Printer` and adds ``pattern_window``
for its ``Window(Pattern)``; a node of a new kind of expression prints as a primary unless
the dialect overrides :meth:`Printer.precedence`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from rsep.lang import ast
from rsep.lang.build import resolve_iri

__all__ = ["Printer", "quote_string", "to_sparql"]

INDENT = "  "

# Expression precedence (Sec. 19.8, [111]..[119]): higher binds tighter.
OR, AND, RELATIONAL, ADDITIVE, MULTIPLICATIVE, UNARY, PRIMARY = range(1, 8)
_BINARY_PRECEDENCE = {
    "||": OR,
    "&&": AND,
    **dict.fromkeys(("=", "!=", "<", ">", "<=", ">="), RELATIONAL),
    "+": ADDITIVE,
    "-": ADDITIVE,
    "*": MULTIPLICATIVE,
    "/": MULTIPLICATIVE,
}
# Property path precedence (Sec. 9.1, [89]..[94]).
P_ALTERNATIVE, P_SEQUENCE, P_INVERSE, P_MODIFIED, P_PRIMARY = range(1, 6)

_BUILTIN_SPELLING = {
    "SAMETERM": "sameTerm",
    "ISIRI": "isIRI",
    "ISURI": "isURI",
    "ISBLANK": "isBLANK",
    "ISLITERAL": "isLITERAL",
    "ISNUMERIC": "isNUMERIC",
}

# Short forms of literals (Sec. 4.1.2; [131]..[134]).
_SHORT_FORMS = {
    ast.XSD_INTEGER: re.compile(r"[+-]?[0-9]+"),
    ast.XSD_DECIMAL: re.compile(r"[+-]?[0-9]*\.[0-9]+"),
    ast.XSD_DOUBLE: re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+"),
    ast.XSD_BOOLEAN: re.compile(r"true|false"),
}

# Prefixed names (Sec. 19.8, [164]..[173]).
_PN_CHARS_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_PN_CHARS_U = _PN_CHARS_BASE + "_"
_PN_CHARS = _PN_CHARS_U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_LOCAL = re.compile(
    rf"(?:[{_PN_CHARS_U}:0-9]|{_PLX})(?:(?:[{_PN_CHARS}.:]|{_PLX})*(?:[{_PN_CHARS}:]|{_PLX}))?"
)
_PN_CHAR = re.compile(rf"[{_PN_CHARS}:]")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")

# Characters an IRIREF cannot hold as themselves (Sec. 19.8, [139]).
_IRI_FORBIDDEN = frozenset('<>"{}|^`\\')
_STRING_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f", "\\": "\\\\"}


def quote_string(value: str) -> str:
    """A SPARQL string literal for ``value`` (Sec. 19.7, [156], [157]): double quotes unless
    ``value`` holds a double quote and no single one; escapes for the quote, the backslash,
    line breaks and characters that are not printable."""
    quote = "'" if '"' in value and "'" not in value else '"'
    out = []
    for char in value:
        if char == quote:
            out.append("\\" + char)
        elif char in _STRING_ESCAPES:
            out.append(_STRING_ESCAPES[char])
        elif not char.isprintable():
            out.append(_codepoint_escape(char))
        else:
            out.append(char)
    return quote + "".join(out) + quote


def _codepoint_escape(char: str) -> str:
    """``\\uXXXX`` or ``\\UXXXXXXXX`` (Sec. 19.2)."""
    code = ord(char)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _iri_text(value: str) -> str:
    """``<value>`` with codepoint escapes where IRIREF forbids the character (Sec. 19.8)."""
    body = "".join(
        _codepoint_escape(c) if c in _IRI_FORBIDDEN or ord(c) <= 0x20 or not c.isprintable() else c
        for c in value
    )
    return f"<{body}>"


def _local_name(local: str) -> str | None:
    """The PN_LOCAL text that reads as ``local`` (Sec. 19.8, [169]..[173]), or None."""
    if local == "":
        return ""
    out = []
    i = 0
    last = len(local) - 1
    while i <= last:
        char = local[i]
        if char == "%" and _HEX2.fullmatch(local, i + 1, i + 3):
            out.append(local[i : i + 3])
            i += 3
            continue
        if char in "~!$&'()*+,;=/?#@%" or (char == "." and i in (0, last)):
            out.append("\\" + char)
        elif char == "-" and i == 0:
            out.append("\\-")
        elif char == "." or _PN_CHAR.fullmatch(char):
            out.append(char)
        else:
            return None
        i += 1
    text = "".join(out)
    return text if _PN_LOCAL.fullmatch(text) else None


@cache
def _method_name(family: str, class_name: str) -> str:
    """``expr_binary`` for (``expr``, ``Binary``); ``path_inverse`` for ``PathInverse``."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()
    return snake if snake.startswith(family + "_") else f"{family}_{snake}"


class Printer:
    """SPARQL text for AST nodes, given the prologue whose prefixes and BASE it may use.

    Methods are named ``<family>_<node class in snake_case>`` (``expr_binary``,
    ``pattern_optional``; ``path_inverse`` for :class:`ast.PathInverse`); the families are
    ``expr``, ``pattern``, ``graph_node``, ``path``, ``form``, ``dataset`` and
    ``declaration``. The first method found along the node class's MRO prints it.
    """

    def __init__(self, prologue: Iterable[ast.Declaration] = ()) -> None:
        self.prologue = tuple(prologue)
        self.base: str | None = None
        prefixes: dict[str, str] = {}
        for declaration in self.prologue:
            if isinstance(declaration, ast.Base):
                self.base = declaration.iri
            elif isinstance(declaration, ast.Prefix):
                prefixes[declaration.name] = declaration.iri
        # Longest namespace first, so ex:a/b is not printed with a shorter namespace.
        self._namespaces = sorted(prefixes.items(), key=lambda kv: -len(kv[1]))

    # Dispatch ------------------------------------------------------------------------

    def _method(self, family: str, node: ast.Node) -> Callable[..., str]:
        for cls in type(node).__mro__:
            method = getattr(self, _method_name(family, cls.__name__), None)
            if method is not None:
                return method  # type: ignore[no-any-return]
        raise NotImplementedError(f"no {family} printer for {type(node).__name__}")

    # Queries (Sec. 16) -------------------------------------------------------------------

    def query(self, query: ast.Query) -> str:
        """A whole query (Sec. 2, 16; [2]): prologue, form, dataset, WHERE, modifiers."""
        lines = [self._method("declaration", d)(d) for d in query.prologue]
        lines.append(self._method("form", query.form)(query.form))
        lines.extend(self._method("dataset", d)(d) for d in query.dataset)
        if query.where is not None:
            lines.append("WHERE " + self.group(query.where, 0))
        lines.extend(self._modifiers(query, 0))
        return "\n".join(lines) + "\n"

    def declaration_base(self, base: ast.Base) -> str:
        """``BASE <iri>`` (Sec. 4.1.1)."""
        return f"BASE {_iri_text(base.iri)}"

    def declaration_prefix(self, prefix: ast.Prefix) -> str:
        """``PREFIX name: <iri>`` (Sec. 4.1.1.1)."""
        return f"PREFIX {prefix.name}: {_iri_text(prefix.iri)}"

    def form_select(self, select: ast.Select) -> str:
        """``SELECT DISTINCT? …`` (Sec. 16.1; [9])."""
        head = "SELECT"
        if select.distinct:
            head += " DISTINCT"
        if select.reduced:
            head += " REDUCED"
        if select.projection is None:
            return head + " *"
        if not select.projection:
            raise ValueError("a SELECT projects at least one variable or is SELECT *")
        items = [self.projection(item) for item in select.projection]
        return head + " " + " ".join(items)

    def projection(self, item: ast.Var | ast.Alias) -> str:
        """A projected variable or ``(expr AS ?var)`` (Sec. 16.1.2)."""
        if isinstance(item, ast.Var):
            return self.expr(item, 0)
        return f"({self.expr(item.expr, 0)} AS {self.expr(item.var, 0)})"

    def form_construct(self, construct: ast.Construct) -> str:
        """``CONSTRUCT { template }`` (Sec. 16.2; [10], [73])."""
        lines = [self._triples_lines(construct.template, 1)] if construct.template else []
        return "CONSTRUCT " + self._braces(lines, 0)

    def form_describe(self, describe: ast.Describe) -> str:
        """``DESCRIBE (var | iri)+`` or ``DESCRIBE *`` (Sec. 16.4; [11])."""
        if describe.targets is None:
            return "DESCRIBE *"
        return "DESCRIBE " + " ".join(self.expr(t, 0) for t in describe.targets)

    def form_ask(self, ask: ast.Ask) -> str:
        """``ASK`` (Sec. 16.3; [12])."""
        return "ASK"

    def dataset_from(self, clause: ast.From) -> str:
        """``FROM iri`` or ``FROM NAMED iri`` (Sec. 13.2; [13])."""
        return ("FROM NAMED " if clause.named else "FROM ") + self.iri(clause.iri.value)

    def _modifiers(self, query: ast.Query | ast.SubSelect, depth: int) -> list[str]:
        """GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET and VALUES (Sec. 11, 15, 10.2)."""
        lines = []
        if query.group_by:
            keys = (self.group_condition(c, depth) for c in query.group_by)
            lines.append("GROUP BY " + " ".join(keys))
        if query.having:
            lines.append("HAVING " + " ".join(self.constraint(c, depth) for c in query.having))
        if query.order_by:
            keys = (self.order_condition(c, depth) for c in query.order_by)
            lines.append("ORDER BY " + " ".join(keys))
        if query.limit is not None:
            lines.append(f"LIMIT {query.limit}")
        if query.offset is not None:
            lines.append(f"OFFSET {query.offset}")
        if query.values is not None:
            lines.append(self.pattern(query.values, depth))
        return lines

    def group_condition(self, condition: ast.Expr | ast.Alias, depth: int) -> str:
        """``?v``, a call, ``(expr)`` or ``(expr AS ?v)`` (Sec. 11.2; [20])."""
        if isinstance(condition, ast.Alias):
            return f"({self.expr(condition.expr, depth)} AS {self.expr(condition.var, depth)})"
        if isinstance(condition, ast.Var):
            return self.expr(condition, depth)
        return self.constraint(condition, depth)

    def order_condition(self, condition: ast.OrderCondition, depth: int) -> str:
        """``?v``, a constraint, or ``DESC(expr)`` (Sec. 15.1; [24])."""
        if condition.descending:
            return f"DESC({self.expr(condition.expr, depth)})"
        if isinstance(condition.expr, ast.Var):
            return self.expr(condition.expr, depth)
        return self.constraint(condition.expr, depth)

    def constraint(self, expr: ast.Expr, depth: int) -> str:
        """A built-in or function call as it is, anything else in brackets ([69])."""
        text = self.expr(expr, depth)
        if isinstance(expr, ast.BuiltIn | ast.FunctionCall | ast.Aggregate | ast.Exists):
            return text
        return f"({text})"

    # Graph patterns (Sec. 5..10) --------------------------------------------------------

    def group(self, group: ast.Group, depth: int) -> str:
        """``{ … }`` around a group's elements or a sub-select (Sec. 5.2, 12; [53])."""
        if isinstance(group, ast.SubSelect):
            return self._braces([self.sub_select(group, depth + 1)], depth)
        return self._braces([self.pattern(e, depth + 1) for e in group.elements], depth)

    def _braces(self, items: list[str], depth: int) -> str:
        if not items:
            return "{ }"
        inner = "\n".join(INDENT * (depth + 1) + item for item in items)
        return "{\n" + inner + "\n" + INDENT * depth + "}"

    def sub_select(self, query: ast.SubSelect, depth: int) -> str:
        """``SELECT … WHERE { … } modifiers`` inside a pattern (Sec. 12; [8])."""
        lines = [self.form_select(query.select), "WHERE " + self.group(query.where, depth)]
        lines.extend(self._modifiers(query, depth))
        return ("\n" + INDENT * depth).join(lines)

    def pattern(self, pattern: ast.Pattern, depth: int) -> str:
        """A group element at ``depth``; lines after the first carry their indentation."""
        return self._method("pattern", pattern)(pattern, depth)

    def pattern_triples_block(self, block: ast.TriplesBlock, depth: int) -> str:
        """Triple patterns, each ending with `` .`` (Sec. 5.1; [55])."""
        return self._triples_lines(block.triples, depth)

    def _triples_lines(self, triples: Iterable[ast.Triples], depth: int) -> str:
        return ("\n" + INDENT * depth).join(self.triples(t, depth) + " ." for t in triples)

    def pattern_group_pattern(self, group: ast.GroupPattern, depth: int) -> str:
        """A nested group (Sec. 5.2)."""
        return self.group(group, depth)

    def pattern_sub_select(self, query: ast.SubSelect, depth: int) -> str:
        """A sub-select in braces (Sec. 12)."""
        return self.group(query, depth)

    def pattern_union(self, union: ast.Union, depth: int) -> str:
        """``{ … } UNION { … }`` (Sec. 7; [67])."""
        return " UNION ".join(self.group(branch, depth) for branch in union.branches)

    def pattern_optional(self, optional: ast.Optional, depth: int) -> str:
        """``OPTIONAL { … }`` (Sec. 6; [57])."""
        return "OPTIONAL " + self.group(optional.pattern, depth)

    def pattern_minus(self, minus: ast.Minus, depth: int) -> str:
        """``MINUS { … }`` (Sec. 8.2; [66])."""
        return "MINUS " + self.group(minus.pattern, depth)

    def pattern_graph(self, graph: ast.Graph, depth: int) -> str:
        """``GRAPH name { … }`` (Sec. 13.3; [58])."""
        return f"GRAPH {self.expr(graph.name, depth)} {self.group(graph.pattern, depth)}"

    def pattern_service(self, service: ast.Service, depth: int) -> str:
        """``SERVICE SILENT? name { … }`` (Federated Query; [59])."""
        silent = "SILENT " if service.silent else ""
        name = self.expr(service.name, depth)
        return f"SERVICE {silent}{name} {self.group(service.pattern, depth)}"

    def pattern_filter(self, filter_: ast.Filter, depth: int) -> str:
        """``FILTER constraint`` (Sec. 5.2.2; [68])."""
        return "FILTER " + self.constraint(filter_.expr, depth)

    def pattern_bind(self, bind: ast.Bind, depth: int) -> str:
        """``BIND (expr AS ?var)`` (Sec. 10.1; [60])."""
        return f"BIND ({self.expr(bind.expr, depth)} AS {self.expr(bind.var, depth)})"

    def pattern_values(self, values: ast.Values, depth: int) -> str:
        """``VALUES ?x { … }`` for one variable, ``VALUES (?x …) { (…) … }`` otherwise, one row
        per line (Sec. 10.2; [61]..[65])."""
        if len(values.vars) == 1:
            cells = "".join(self._data_value(row[0]) + " " for row in values.rows)
            return f"VALUES {self.expr(values.vars[0], depth)} {{ {cells}}}"
        names = " ".join(self.expr(v, depth) for v in values.vars)
        rows = ["(" + " ".join(self._data_value(v) for v in row) + ")" for row in values.rows]
        return f"VALUES ({names}) " + self._braces(rows, depth)

    def _data_value(self, value: ast.Iri | ast.Literal | None) -> str:
        return "UNDEF" if value is None else self.expr(value, 0)

    # Triples and graph nodes (Sec. 4.2) -------------------------------------------------

    def triples(self, triples: ast.Triples, depth: int) -> str:
        """A subject and its property list, one verb per line (Sec. 4.2; [75], [81])."""
        subject = self.graph_node(triples.subject)
        if not triples.properties:
            return subject
        parts = [self.property(p) for p in triples.properties]
        return subject + " " + (" ;\n" + INDENT * (depth + 1)).join(parts)

    def property(self, prop: ast.Property) -> str:
        """``verb object, object…`` (Sec. 4.2.1, 4.2.2)."""
        objects = ", ".join(self.graph_node(o) for o in prop.objects)
        return f"{self.verb(prop.verb)} {objects}"

    def verb(self, verb: ast.Var | ast.Iri | ast.Path) -> str:
        """A predicate: a variable, ``a``, an IRI or a property path (Sec. 4.2, 9.1)."""
        if isinstance(verb, ast.Var):
            return self.expr(verb, 0)
        return self.path(verb)

    def graph_node(self, node: ast.GraphNode) -> str:
        """A subject or object: a term, ``[ … ]`` or ``( … )`` (Sec. 4.1, 4.1.4, 4.2.3)."""
        return self._method("graph_node", node)(node)

    def graph_node_term(self, term: ast.Term) -> str:
        """A variable, IRI or literal as in expressions (Sec. 4.1)."""
        assert isinstance(term, ast.Expr), term
        return self.expr(term, 0)

    def graph_node_blank_node(self, node: ast.BlankNode) -> str:
        """``_:label`` or ``[]`` (Sec. 4.1.4)."""
        return "[]" if node.label is None else f"_:{node.label}"

    def graph_node_collection(self, collection: ast.Collection) -> str:
        """``( item … )``, or ``()`` (Sec. 4.2.3)."""
        if not collection.items:
            return "()"
        return "( " + " ".join(self.graph_node(i) for i in collection.items) + " )"

    def graph_node_blank_node_property_list(self, node: ast.BlankNodePropertyList) -> str:
        """``[ verb object ; … ]`` on one line (Sec. 4.1.4)."""
        return "[ " + " ; ".join(self.property(p) for p in node.properties) + " ]"

    # Property paths (Sec. 9.1) ----------------------------------------------------------

    def path(self, path: ast.Iri | ast.Path, minimum: int = 0) -> str:
        """A path in brackets when its operator binds less tightly than ``minimum``."""
        if isinstance(path, ast.Iri):
            return self.iri(path.value, verb=True)
        text = self._method("path", path)(path)
        return f"({text})" if self.path_precedence(path) < minimum else text

    def path_precedence(self, path: ast.Path) -> int:
        """How tightly a path operator binds (Sec. 19.8, [88]..[94])."""
        kinds: list[tuple[type[ast.Path], int]] = [
            (ast.PathAlternative, P_ALTERNATIVE),
            (ast.PathSequence, P_SEQUENCE),
            (ast.PathInverse, P_INVERSE),
            (ast.PathModified, P_MODIFIED),
        ]
        return next((p for kind, p in kinds if isinstance(path, kind)), P_PRIMARY)

    def path_alternative(self, path: ast.PathAlternative) -> str:
        """``p | q`` ([89])."""
        return " | ".join(self.path(p, P_SEQUENCE) for p in path.options)

    def path_sequence(self, path: ast.PathSequence) -> str:
        """``p / q`` ([90])."""
        return " / ".join(self.path(p, P_INVERSE) for p in path.steps)

    def path_inverse(self, path: ast.PathInverse) -> str:
        """``^p`` ([92])."""
        return "^" + self.path(path.path, P_MODIFIED)

    def path_modified(self, path: ast.PathModified) -> str:
        """``p?``, ``p*``, ``p+`` ([91], [93])."""
        return self.path(path.path, P_PRIMARY) + path.modifier

    def path_negated(self, path: ast.PathNegated) -> str:
        """``!p``, ``!^p`` or ``!(p | ^q …)`` ([95], [96])."""
        items = []
        for item in path.items:
            if isinstance(item, ast.PathInverse):
                if not isinstance(item.path, ast.Iri):
                    raise ValueError("a negated property set holds IRIs and inverted IRIs")
                items.append("^" + self.iri(item.path.value, verb=True))
            else:
                items.append(self.iri(item.value, verb=True))
        if len(items) == 1:
            return "!" + items[0]
        return "!(" + " | ".join(items) + ")"

    # Expressions (Sec. 17) --------------------------------------------------------------

    def precedence(self, expr: ast.Expr) -> int:
        """How tightly an expression binds (Sec. 19.8, [110]..[119]); calls and terms are
        primaries."""
        if isinstance(expr, ast.Binary):
            return _BINARY_PRECEDENCE[expr.op]
        if isinstance(expr, ast.In):
            return RELATIONAL
        if isinstance(expr, ast.Unary):
            return UNARY
        return PRIMARY

    def expr(self, expr: ast.Expr, depth: int, minimum: int = 0) -> str:
        """An expression, in brackets when it binds less tightly than ``minimum``; ``depth``
        indents the groups of EXISTS."""
        text = self._method("expr", expr)(expr, depth)
        return f"({text})" if self.precedence(expr) < minimum else text

    def expr_var(self, var: ast.Var, depth: int) -> str:
        """``?name`` (Sec. 4.1.3)."""
        return "?" + var.name

    def expr_iri(self, iri: ast.Iri, depth: int) -> str:
        """An IRI (Sec. 4.1.1)."""
        return self.iri(iri.value)

    def expr_literal(self, literal: ast.Literal, depth: int) -> str:
        """A literal, short where the grammar has a short form (Sec. 4.1.2)."""
        if literal.lang is not None:
            return f"{quote_string(literal.lexical)}@{literal.lang}"
        if literal.datatype == ast.XSD_STRING:
            return quote_string(literal.lexical)
        short = _SHORT_FORMS.get(literal.datatype)
        if short is not None and short.fullmatch(literal.lexical):
            written = literal.written
            if written is not None and written.lower() == literal.lexical.lower():
                return written
            return literal.lexical
        return f"{quote_string(literal.lexical)}^^{self.iri(literal.datatype)}"

    def expr_binary(self, expr: ast.Binary, depth: int) -> str:
        """``left op right``; relational operators do not chain ([114]). A left-nested chain
        of one precedence (``a || b || c …``) is printed in a loop, however long."""
        level = _BINARY_PRECEDENCE[expr.op]
        if level == RELATIONAL:
            left = self.expr(expr.left, depth, level + 1)
            return f"{left} {expr.op} {self.expr(expr.right, depth, level + 1)}"
        chain = [expr]
        leftmost = expr.left
        while (
            type(leftmost) is type(expr)
            and isinstance(leftmost, ast.Binary)
            and _BINARY_PRECEDENCE[leftmost.op] == level
        ):
            chain.append(leftmost)
            leftmost = leftmost.left
        parts = [self.expr(leftmost, depth, level)]
        for link in reversed(chain):
            parts.append(f"{link.op} {self.expr(link.right, depth, level + 1)}")
        return " ".join(parts)

    def expr_unary(self, expr: ast.Unary, depth: int) -> str:
        """``!e``, ``+e``, ``-e`` ([118]); ``- 1`` keeps its space, as ``-1`` is a number."""
        operand = self.expr(expr.operand, depth, PRIMARY)
        gap = " " if operand[:1] in ("+", "-", ".") or operand[:1].isdigit() else ""
        return f"{expr.op}{gap}{operand}"

    def expr_in(self, expr: ast.In, depth: int) -> str:
        """``e IN (…)``, ``e NOT IN (…)`` ([114])."""
        left = self.expr(expr.expr, depth, RELATIONAL + 1)
        keyword = "NOT IN" if expr.negated else "IN"
        return f"{left} {keyword} {self._arguments(expr.items, depth)}"

    def _arguments(self, args: Iterable[ast.Expr], depth: int, distinct: bool = False) -> str:
        texts = [self.expr(a, depth) for a in args]
        return "(" + ("DISTINCT " if distinct else "") + ", ".join(texts) + ")"

    def expr_function_call(self, call: ast.FunctionCall, depth: int) -> str:
        """``iri(args)`` (Sec. 17.6; [70])."""
        return self.iri(call.iri.value) + self._arguments(call.args, depth, call.distinct)

    def expr_built_in(self, call: ast.BuiltIn, depth: int) -> str:
        """``NAME(args)`` (Sec. 17.4; [121])."""
        name = _BUILTIN_SPELLING.get(call.name, call.name)
        return name + self._arguments(call.args, depth)

    def expr_aggregate(self, aggregate: ast.Aggregate, depth: int) -> str:
        """``COUNT(DISTINCT *)``, ``GROUP_CONCAT(e; SEPARATOR="…")``… (Sec. 11; [127])."""
        arg = "*" if aggregate.arg is None else self.expr(aggregate.arg, depth)
        distinct = "DISTINCT " if aggregate.distinct else ""
        separator = ""
        if aggregate.separator is not None:
            separator = f"; SEPARATOR={quote_string(aggregate.separator)}"
        return f"{aggregate.name}({distinct}{arg}{separator})"

    def expr_exists(self, exists: ast.Exists, depth: int) -> str:
        """``EXISTS { … }``, ``NOT EXISTS { … }`` (Sec. 8.1; [125], [126])."""
        keyword = "NOT EXISTS " if exists.negated else "EXISTS "
        return keyword + self.group(exists.pattern, depth)

    # IRIs (Sec. 4.1.1) ------------------------------------------------------------------

    def iri(self, value: str, *, verb: bool = False) -> str:
        """``a`` (a verb's rdf:type), else the first of: a prefixed name without escapes, an
        IRI relative to the BASE, a prefixed name with escapes, the full IRI."""
        if verb and value == ast.RDF_TYPE:
            return "a"
        prefixed = None
        for name, namespace in self._namespaces:
            if value.startswith(namespace):
                local = _local_name(value[len(namespace) :])
                if local is not None:
                    prefixed = f"{name}:{local}"
                    break
        if prefixed is not None and "\\" not in prefixed:
            return prefixed
        if self.base is not None:
            relative = self._relative(value, self.base)
            if relative is not None:
                return _iri_text(relative)
        return prefixed if prefixed is not None else _iri_text(value)

    @staticmethod
    def _relative(value: str, base: str) -> str | None:
        """A shorter reference that resolves against ``base`` to ``value`` (RFC 3986)."""
        candidates = []
        document = base.split("#", 1)[0]
        if value.startswith(document + "#"):
            candidates.append(value[len(document) :])
        directory = base[: base.rfind("/") + 1]
        if directory and value.startswith(directory) and len(value) > len(directory):
            candidates.append(value[len(directory) :])
        for candidate in candidates:  # each is kept only if it resolves back to ``value``
            if resolve_iri(candidate, base) == value:
                return candidate
        return None


def to_sparql(node: ast.Node, *, printer: type[Printer] = Printer) -> str:
    """SPARQL text for a query (or for any node: an expression, a pattern, a term).

    A query prints with its own prologue (Sec. 4.1.1); other nodes print with full IRIs.
    """
    try:
        return _to_sparql(node, printer)
    except RecursionError:
        raise ValueError("the query nests too deeply to print (about 200 levels)") from None


def _to_sparql(node: ast.Node, printer: type[Printer]) -> str:
    if isinstance(node, ast.Query):
        return printer(node.prologue).query(node)
    out = printer()
    if isinstance(node, ast.Expr):
        return out.expr(node, 0)
    if isinstance(node, ast.Pattern):
        return out.pattern(node, 0)
    if isinstance(node, ast.GraphNode):
        return out.graph_node(node)
    if isinstance(node, ast.Path):
        return out.path(node)
    if isinstance(node, ast.QueryForm | ast.DatasetClause | ast.Declaration):
        family = {ast.QueryForm: "form", ast.DatasetClause: "dataset"}
        kind = next((f for k, f in family.items() if isinstance(node, k)), "declaration")
        return out._method(kind, node)(node)
    raise TypeError(f"cannot print a {type(node).__name__} on its own")
