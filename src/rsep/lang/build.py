"""Build the AST (:mod:`rsep.lang.ast`) from the parse tree of ``parse_sparql``.

:class:`Builder` is a Lark transformer with one method per grammar rule (the rules are the
productions of SPARQL 1.1 Query, Sec. 19.8, in snake_case), called bottom-up in document
order. The prologue comes first in the text, so each ``BASE`` and ``PREFIX`` is known before
the IRIs that use it: prefixed names are expanded (Sec. 4.1.1.1; an undeclared prefix is a
:class:`~rsep.lang.checks.QuerySemanticError` at its line and column) and relative IRIs are
resolved against the BASE in effect (Sec. 4.1.1, RFC 3986 Sec. 5.2, :func:`resolve_iri`).
Escapes are decoded (Sec. 19.2 codepoint escapes in IRIs and strings, 19.7 string escapes,
PN_LOCAL_ESC in local names).

A dialect adds rules to the grammar; its builder subclasses :class:`Builder`, is decorated
with ``@v_args(meta=True)`` as this one is, and adds one method per new rule
(``def window_graph_pattern(self, meta, children) -> Window``). A rule without a method is
an error that names it, never a silent :class:`lark.Tree` inside the AST.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from lark import Token, Tree, v_args
from lark.exceptions import VisitError
from lark.tree import Meta
from lark.visitors import Transformer_NonRecursive

from rsep.lang import ast
from rsep.lang.checks import QuerySemanticError, check_sparql
from rsep.lang.parser import parse_sparql

__all__ = ["Builder", "build", "parse_query", "remove_dot_segments", "resolve_iri"]

Children = list[Any]
"""What a rule method receives: built nodes, helper values and the tokens the rule keeps."""

_NUMERIC_TYPES = {
    "INTEGER": ast.XSD_INTEGER,
    "DECIMAL": ast.XSD_DECIMAL,
    "DOUBLE": ast.XSD_DOUBLE,
}
_STRING_QUOTES = {
    "STRING_LITERAL1": 1,
    "STRING_LITERAL2": 1,
    "STRING_LITERAL_LONG1": 3,
    "STRING_LITERAL_LONG2": 3,
}
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_STRING_ESCAPE = re.compile(r"\\(?:([tbnrf\"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_CODEPOINT_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_LOCAL_ESCAPE = re.compile(r"\\(.)")
_COMPARISONS = frozenset({"=", "!=", "<", ">", "<=", ">="})


# IRI resolution (RFC 3986, Sec. 5.2) -------------------------------------------------

_IRI_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)


def resolve_iri(reference: str, base: str | None) -> str:
    """``reference`` resolved against ``base`` by RFC 3986, Sec. 5.2.2 (SPARQL 1.1 Sec. 4.1.1).

    Only a relative reference is resolved: SPARQL combines *relative* IRIs with the base,
    so an IRI with a scheme is returned unchanged (dot segments and all), as oxigraph does.
    Without a base, ``reference`` is returned unchanged too.
    """
    match = _IRI_PARTS.fullmatch(reference)
    assert match is not None  # every string matches
    scheme, authority, path, query, fragment = match.groups()
    if base is None or scheme is not None:
        return reference
    base_match = _IRI_PARTS.fullmatch(base)
    assert base_match is not None
    b_scheme, b_authority, b_path, b_query, _ = base_match.groups()
    if authority is not None:
        path = remove_dot_segments(path)
    else:
        if path == "":
            path = b_path
            query = b_query if query is None else query
        elif path.startswith("/"):
            path = remove_dot_segments(path)
        else:
            path = remove_dot_segments(_merge(b_authority, b_path, path))
        authority = b_authority
    return _recompose(b_scheme, authority, path, query, fragment)


def _merge(base_authority: str | None, base_path: str, path: str) -> str:
    """RFC 3986, Sec. 5.2.3."""
    if base_authority is not None and base_path == "":
        return "/" + path
    return base_path[: base_path.rfind("/") + 1] + path


def remove_dot_segments(path: str) -> str:
    """RFC 3986, Sec. 5.2.4: ``.`` and ``..`` segments removed from ``path``."""
    output: list[str] = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith(("./", "/./")):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../"):
            path = path[3:]
            if output:
                output.pop()
        elif path == "/..":
            path = "/"
            if output:
                output.pop()
        elif path in (".", ".."):
            path = ""
        else:
            end = path.find("/", 1)
            if end < 0:
                end = len(path)
            output.append(path[:end])
            path = path[end:]
    return "".join(output)


def _recompose(
    scheme: str | None, authority: str | None, path: str, query: str | None, fragment: str | None
) -> str:
    """RFC 3986, Sec. 5.3."""
    text = ""
    if scheme is not None:
        text += scheme + ":"
    if authority is not None:
        text += "//" + authority
    text += path
    if query is not None:
        text += "?" + query
    if fragment is not None:
        text += "#" + fragment
    return text


# Helpers ------------------------------------------------------------------------------


def _pos(meta: Meta) -> ast.Position | None:
    if meta.empty:
        return None
    return ast.Position(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_pos(token: Token) -> ast.Position | None:
    if token.line is None or token.column is None:
        return None
    end_line = token.end_line if token.end_line is not None else token.line
    end_column = token.end_column if token.end_column is not None else token.column
    return ast.Position(token.line, token.column, end_line, end_column)


def _span(first: ast.Node, last: ast.Node, meta: Meta) -> ast.Position | None:
    """From the start of ``first`` to the end of ``last`` (the rule's span as a fallback)."""
    if first.pos is None or last.pos is None:
        return _pos(meta)
    return ast.Position(first.pos.line, first.pos.column, last.pos.end_line, last.pos.end_column)


def _error(message: str, token: Token) -> QuerySemanticError:
    return QuerySemanticError(message, token.line or 1, token.column or 1)


def _codepoint(digits: str, token: Token) -> str:
    value = int(digits, 16)
    if value > 0x10FFFF:
        raise _error(f"\\U{digits} is not a Unicode code point", token)
    return chr(value)


def _is(child: object, kind: str) -> bool:
    """Whether ``child`` is a token of terminal ``kind``."""
    return isinstance(child, Token) and child.type == kind


def _nodes(children: Iterable[object], kind: type[ast.Node]) -> list[Any]:
    return [child for child in children if isinstance(child, kind)]


@dataclass(slots=True)
class _Form:
    """A query form with its dataset, WHERE and modifiers, before ``query`` assembles them."""

    form: ast.QueryForm
    dataset: tuple[ast.DatasetClause, ...]
    where: ast.Group | None
    modifiers: dict[str, Any] = field(default_factory=dict)


# The builder -------------------------------------------------------------------------


@v_args(meta=True)
class Builder(Transformer_NonRecursive[Token, ast.Query]):
    """Parse tree (``parse_sparql``) to :class:`ast.Query`, one method per rule (Sec. 19.8).

    ``prefixes`` and ``base`` are declared outside the query text (an engine's default
    prologue); the query's own declarations come after them. One builder builds one tree.
    """

    def __init__(self, prefixes: Mapping[str, str] | None = None, base: str | None = None) -> None:
        super().__init__(visit_tokens=False)
        self.prefixes: dict[str, str] = dict(prefixes or {})
        self.base: str | None = base

    def __default__(self, data: str, children: Children, meta: Meta) -> NoReturn:
        where = "" if meta.empty else f" at line {meta.line}, column {meta.column}"
        raise NotImplementedError(f"no AST for the grammar rule '{data}'{where}")

    # Helpers shared by the rules -----------------------------------------------------

    def _graph_node(self, child: object) -> ast.GraphNode:
        """A subject or object: ``()`` is the empty collection (rdf:nil), Sec. 4.2.3."""
        if _is(child, "NIL"):
            assert isinstance(child, Token)
            return ast.Collection((), pos=_token_pos(child))
        assert isinstance(child, ast.GraphNode), child
        return child

    def _path(self, child: object) -> ast.Iri | ast.Path:
        """A path step: ``a`` is rdf:type (Sec. 9.1, [94])."""
        if _is(child, "A"):
            assert isinstance(child, Token)
            return ast.Iri(ast.RDF_TYPE, pos=_token_pos(child))
        assert isinstance(child, ast.Iri | ast.Path), child
        return child

    def _properties(self, children: Children) -> tuple[ast.Property, ...]:
        """Verb, objects, verb, objects… as :class:`ast.Property` nodes (Sec. 4.2.1)."""
        properties = []
        for verb, objects in zip(children[::2], children[1::2], strict=True):
            last = objects[-1] if objects else verb
            start, end = verb.pos, last.pos
            pos = None
            if start is not None and end is not None:
                pos = ast.Position(start.line, start.column, end.end_line, end.end_column)
            properties.append(ast.Property(verb, tuple(objects), pos=pos))
        return tuple(properties)

    def _fold(self, children: Children, meta: Meta, op: str | None = None) -> ast.Expr:
        """Left-associative binary chain: ``a op b op c`` is ``(a op b) op c`` (Sec. 17.3).

        With ``op`` the operators are not in ``children`` (``||``, ``&&``); otherwise
        operands and operator tokens alternate.
        """
        result: ast.Expr = children[0]
        if op is not None:
            for right in children[1:]:
                result = ast.Binary(op, result, right, pos=_span(result, right, meta))
            return result
        for operator, right in zip(children[1::2], children[2::2], strict=True):
            result = ast.Binary(str(operator), result, right, pos=_span(result, right, meta))
        return result

    # Prologue and query forms (Sec. 4.1.1, 16) ---------------------------------------

    def query_unit(self, meta: Meta, children: Children) -> ast.Query:
        """[1] QueryUnit (Sec. 2, 16)."""
        query = children[0]
        assert isinstance(query, ast.Query)
        return query

    def query(self, meta: Meta, children: Children) -> ast.Query:
        """[2] Query (Sec. 2, 16)."""
        prologue, form, values = children
        assert isinstance(form, _Form)
        return ast.Query(
            prologue=prologue,
            form=form.form,
            dataset=form.dataset,
            where=form.where,
            values=values,
            pos=_pos(meta),
            **form.modifiers,
        )

    def prologue(self, meta: Meta, children: Children) -> tuple[ast.Declaration, ...]:
        """[4] Prologue (Sec. 4.1.1)."""
        return tuple(children)

    def base_decl(self, meta: Meta, children: Children) -> ast.Base:
        """[5] BaseDecl (Sec. 4.1.1.2)."""
        self.base = self._iriref(children[0])
        return ast.Base(self.base, pos=_pos(meta))

    def prefix_decl(self, meta: Meta, children: Children) -> ast.Prefix:
        """[6] PrefixDecl (Sec. 4.1.1.1)."""
        name = str(children[0])[:-1]
        iri = self._iriref(children[1])
        self.prefixes[name] = iri
        return ast.Prefix(name, iri, pos=_pos(meta))

    def select_query(self, meta: Meta, children: Children) -> _Form:
        """[7] SelectQuery (Sec. 16.1)."""
        select, *dataset, where, modifiers = children
        return _Form(select, tuple(dataset), where, modifiers)

    def sub_select(self, meta: Meta, children: Children) -> ast.SubSelect:
        """[8] SubSelect (Sec. 12)."""
        select, where, modifiers, values = children
        return ast.SubSelect(select, where, values=values, pos=_pos(meta), **modifiers)

    def select_clause(self, meta: Meta, children: Children) -> ast.Select:
        """[9] SelectClause (Sec. 16.1, 15.3)."""
        star = any(_is(c, "STAR") for c in children)
        items = tuple(c for c in children if isinstance(c, ast.Var | ast.Alias))
        return ast.Select(
            None if star else items,
            distinct=any(_is(c, "DISTINCT") for c in children),
            reduced=any(_is(c, "REDUCED") for c in children),
            pos=_pos(meta),
        )

    def select_expression(self, meta: Meta, children: Children) -> ast.Alias:
        """[9] SelectClause (part): ``(expression AS ?var)`` (Sec. 16.1.2)."""
        return ast.Alias(children[0], children[1], pos=_pos(meta))

    def construct_query(self, meta: Meta, children: Children) -> _Form:
        """[10] ConstructQuery (Sec. 16.2, 16.2.4)."""
        modifiers = children[-1]
        dataset = tuple(_nodes(children, ast.DatasetClause))
        if isinstance(children[0], ast.Construct):  # CONSTRUCT { template } … WHERE …
            return _Form(children[0], dataset, children[-2], modifiers)
        # CONSTRUCT WHERE { T } is CONSTRUCT { T } WHERE { T } (Sec. 16.2.4)
        template: tuple[ast.Triples, ...] = next(
            (c for c in children[:-1] if isinstance(c, tuple)), ()
        )
        elements = (ast.TriplesBlock(template, pos=_pos(meta)),) if template else ()
        where = ast.GroupPattern(elements, pos=_pos(meta))
        return _Form(ast.Construct(template, pos=_pos(meta)), dataset, where, modifiers)

    def construct_template(self, meta: Meta, children: Children) -> ast.Construct:
        """[73] ConstructTemplate (Sec. 16.2)."""
        return ast.Construct(children[0] if children else (), pos=_pos(meta))

    def construct_triples(self, meta: Meta, children: Children) -> tuple[ast.Triples, ...]:
        """[74] ConstructTriples (Sec. 16.2)."""
        return tuple(children)

    def triples_template(self, meta: Meta, children: Children) -> tuple[ast.Triples, ...]:
        """[52] TriplesTemplate (Sec. 16.2.4)."""
        return tuple(children)

    def describe_query(self, meta: Meta, children: Children) -> _Form:
        """[11] DescribeQuery (Sec. 16.4)."""
        star = any(_is(c, "STAR") for c in children)
        targets = tuple(c for c in children if isinstance(c, ast.Var | ast.Iri))
        where = next((c for c in children if isinstance(c, ast.GroupPattern | ast.SubSelect)), None)
        # The form's span is the DESCRIBE keyword and its targets.
        end = targets[-1].pos if targets and targets[-1].pos else None
        pos = _pos(meta)
        if pos is not None and end is not None:
            pos = ast.Position(pos.line, pos.column, end.end_line, end.end_column)
        form = ast.Describe(None if star else targets, pos=pos)
        return _Form(form, tuple(_nodes(children, ast.DatasetClause)), where, children[-1])

    def ask_query(self, meta: Meta, children: Children) -> _Form:
        """[12] AskQuery (Sec. 16.3)."""
        *dataset, where, modifiers = children
        return _Form(ast.Ask(pos=_pos(meta)), tuple(dataset), where, modifiers)

    def dataset_clause(self, meta: Meta, children: Children) -> ast.DatasetClause:
        """[13] DatasetClause (Sec. 13.2); a dialect's own clauses (``%extend``) too."""
        clause = children[0]
        assert isinstance(clause, ast.DatasetClause)
        return dataclasses.replace(clause, pos=_pos(meta))

    def default_graph_clause(self, meta: Meta, children: Children) -> ast.From:
        """[14] DefaultGraphClause (Sec. 13.2.1)."""
        return ast.From(children[0], pos=_pos(meta))

    def named_graph_clause(self, meta: Meta, children: Children) -> ast.From:
        """[15] NamedGraphClause (Sec. 13.2.2)."""
        return ast.From(children[-1], named=True, pos=_pos(meta))

    def source_selector(self, meta: Meta, children: Children) -> ast.Iri:
        """[16] SourceSelector (Sec. 13.2)."""
        iri = children[0]
        assert isinstance(iri, ast.Iri)
        return iri

    def where_clause(self, meta: Meta, children: Children) -> ast.Group:
        """[17] WhereClause (Sec. 2.1, 5.2)."""
        group = children[0]
        assert isinstance(group, ast.GroupPattern | ast.SubSelect)
        return group

    # Solution modifiers (Sec. 11, 15) -------------------------------------------------

    def solution_modifier(self, meta: Meta, children: Children) -> dict[str, Any]:
        """[18] SolutionModifier (Sec. 15)."""
        modifiers: dict[str, Any] = {}
        for child in children:
            for key, value in child if isinstance(child, list) else [child]:
                modifiers[key] = value
        return modifiers

    def group_clause(self, meta: Meta, children: Children) -> tuple[str, tuple[Any, ...]]:
        """[19] GroupClause (Sec. 11.2)."""
        return ("group_by", tuple(children))

    def group_condition(self, meta: Meta, children: Children) -> ast.Expr | ast.Alias:
        """[20] GroupCondition (Sec. 11.2)."""
        if len(children) == 2:
            return ast.Alias(children[0], children[1], pos=_pos(meta))
        condition = children[0]
        assert isinstance(condition, ast.Expr)
        return condition

    def having_clause(self, meta: Meta, children: Children) -> tuple[str, tuple[Any, ...]]:
        """[21] HavingClause (Sec. 11.3)."""
        return ("having", tuple(children))

    def having_condition(self, meta: Meta, children: Children) -> ast.Expr:
        """[22] HavingCondition (Sec. 11.3)."""
        condition = children[0]
        assert isinstance(condition, ast.Expr)
        return condition

    def order_clause(self, meta: Meta, children: Children) -> tuple[str, tuple[Any, ...]]:
        """[23] OrderClause (Sec. 15.1)."""
        return ("order_by", tuple(children))

    def order_condition(self, meta: Meta, children: Children) -> ast.OrderCondition:
        """[24] OrderCondition (Sec. 15.1)."""
        descending = _is(children[0], "DESC")
        return ast.OrderCondition(children[-1], descending, pos=_pos(meta))

    def limit_offset_clauses(self, meta: Meta, children: Children) -> list[tuple[str, int]]:
        """[25] LimitOffsetClauses (Sec. 15.4, 15.5)."""
        return list(children)

    def limit_clause(self, meta: Meta, children: Children) -> tuple[str, int]:
        """[26] LimitClause (Sec. 15.5)."""
        return ("limit", int(children[0]))

    def offset_clause(self, meta: Meta, children: Children) -> tuple[str, int]:
        """[27] OffsetClause (Sec. 15.4)."""
        return ("offset", int(children[0]))

    def values_clause(self, meta: Meta, children: Children) -> ast.Values | None:
        """[28] ValuesClause (Sec. 10.2)."""
        if not children:
            return None
        values = children[0]
        assert isinstance(values, ast.Values)
        return dataclasses.replace(values, pos=_pos(meta))

    # Graph patterns (Sec. 5..10) -------------------------------------------------------

    def group_graph_pattern(self, meta: Meta, children: Children) -> ast.Group:
        """[53] GroupGraphPattern (Sec. 5.2, 12)."""
        inner = children[0]
        if isinstance(inner, ast.SubSelect):
            return inner
        return ast.GroupPattern(tuple(inner), pos=_pos(meta))

    def group_graph_pattern_sub(self, meta: Meta, children: Children) -> list[ast.Pattern]:
        """[54] GroupGraphPatternSub (Sec. 5.2)."""
        return list(children)

    def triples_block(self, meta: Meta, children: Children) -> ast.TriplesBlock:
        """[55] TriplesBlock (Sec. 5.1)."""
        return ast.TriplesBlock(tuple(children), pos=_pos(meta))

    def group_or_union_graph_pattern(self, meta: Meta, children: Children) -> ast.Pattern:
        """[67] GroupOrUnionGraphPattern (Sec. 5.2, 7)."""
        if len(children) == 1:
            group = children[0]
            assert isinstance(group, ast.Pattern)
            return group
        return ast.Union(tuple(children), pos=_pos(meta))

    def optional_graph_pattern(self, meta: Meta, children: Children) -> ast.Optional:
        """[57] OptionalGraphPattern (Sec. 6)."""
        return ast.Optional(children[0], pos=_pos(meta))

    def minus_graph_pattern(self, meta: Meta, children: Children) -> ast.Minus:
        """[66] MinusGraphPattern (Sec. 8.2)."""
        return ast.Minus(children[0], pos=_pos(meta))

    def graph_graph_pattern(self, meta: Meta, children: Children) -> ast.Graph:
        """[58] GraphGraphPattern (Sec. 13.3)."""
        return ast.Graph(children[0], children[1], pos=_pos(meta))

    def service_graph_pattern(self, meta: Meta, children: Children) -> ast.Service:
        """[59] ServiceGraphPattern (SPARQL 1.1 Federated Query 3)."""
        silent = _is(children[0], "SILENT")
        name, group = children[-2:]
        return ast.Service(name, group, silent=silent, pos=_pos(meta))

    def filter(self, meta: Meta, children: Children) -> ast.Filter:
        """[68] Filter (Sec. 5.2.2, 17)."""
        return ast.Filter(children[0], pos=_pos(meta))

    def bind(self, meta: Meta, children: Children) -> ast.Bind:
        """[60] Bind (Sec. 10.1)."""
        return ast.Bind(children[0], children[1], pos=_pos(meta))

    def inline_data(self, meta: Meta, children: Children) -> ast.Values:
        """[61] InlineData (Sec. 10.2)."""
        values = children[0]
        assert isinstance(values, ast.Values)
        return dataclasses.replace(values, pos=_pos(meta))

    def inline_data_one_var(self, meta: Meta, children: Children) -> ast.Values:
        """[63] InlineDataOneVar (Sec. 10.2.1)."""
        var, *values = children
        return ast.Values((var,), tuple((value,) for value in values), pos=_pos(meta))

    def inline_data_full(self, meta: Meta, children: Children) -> ast.Values:
        """[64] InlineDataFull (Sec. 10.2.1)."""
        variables = tuple(_nodes(children, ast.Var))
        rows = tuple(c for c in children if isinstance(c, tuple))
        return ast.Values(variables, rows, pos=_pos(meta))

    def data_block_row(self, meta: Meta, children: Children) -> tuple[Any, ...]:
        """[64] InlineDataFull (part): one row (Sec. 10.2.1)."""
        return tuple(c for c in children if not _is(c, "NIL"))

    def data_block_value(self, meta: Meta, children: Children) -> ast.Iri | ast.Literal | None:
        """[65] DataBlockValue (Sec. 10.2.1)."""
        value = children[0]
        if _is(value, "UNDEF"):
            return None
        assert isinstance(value, ast.Iri | ast.Literal)
        return value

    # Triple patterns and property paths (Sec. 4.2, 9) ---------------------------------

    def triples_same_subject(self, meta: Meta, children: Children) -> ast.Triples:
        """[75] TriplesSameSubject (Sec. 4.2)."""
        subject, properties = children
        return ast.Triples(self._graph_node(subject), properties, pos=_pos(meta))

    triples_same_subject_path = triples_same_subject

    def property_list(self, meta: Meta, children: Children) -> tuple[ast.Property, ...]:
        """[76] PropertyList (Sec. 4.2.1)."""
        return children[0] if children else ()

    property_list_path = property_list

    def property_list_not_empty(self, meta: Meta, children: Children) -> tuple[ast.Property, ...]:
        """[77] PropertyListNotEmpty (Sec. 4.2.1, 4.2.2)."""
        return self._properties(children)

    property_list_path_not_empty = property_list_not_empty

    def verb(self, meta: Meta, children: Children) -> ast.Var | ast.Iri:
        """[78] Verb (Sec. 4.2.1, 4.2.4)."""
        verb = children[0]
        if isinstance(verb, ast.Var):
            return verb
        path = self._path(verb)
        assert isinstance(path, ast.Iri)
        return path

    def verb_path(self, meta: Meta, children: Children) -> ast.Iri | ast.Path:
        """[84] VerbPath (Sec. 9.1)."""
        return self._path(children[0])

    def verb_simple(self, meta: Meta, children: Children) -> ast.Var:
        """[85] VerbSimple (Sec. 4.2)."""
        var = children[0]
        assert isinstance(var, ast.Var)
        return var

    def object_list(self, meta: Meta, children: Children) -> tuple[ast.GraphNode, ...]:
        """[79] ObjectList (Sec. 4.2.2)."""
        return tuple(self._graph_node(c) for c in children)

    object_list_path = object_list

    def path_alternative(self, meta: Meta, children: Children) -> ast.PathAlternative:
        """[89] PathAlternative (Sec. 9.1)."""
        return ast.PathAlternative(tuple(self._path(c) for c in children), pos=_pos(meta))

    def path_sequence(self, meta: Meta, children: Children) -> ast.PathSequence:
        """[90] PathSequence (Sec. 9.1)."""
        return ast.PathSequence(tuple(self._path(c) for c in children), pos=_pos(meta))

    def path_elt(self, meta: Meta, children: Children) -> ast.PathModified:
        """[91] PathElt (Sec. 9.1)."""
        return ast.PathModified(self._path(children[0]), children[1], pos=_pos(meta))

    def path_elt_or_inverse(self, meta: Meta, children: Children) -> ast.PathInverse:
        """[92] PathEltOrInverse (Sec. 9.1)."""
        return ast.PathInverse(self._path(children[1]), pos=_pos(meta))

    def path_mod(self, meta: Meta, children: Children) -> str:
        """[93] PathMod (Sec. 9.1)."""
        return str(children[0])

    def path_negated_property_set(self, meta: Meta, children: Children) -> ast.PathNegated:
        """[95] PathNegatedPropertySet (Sec. 9.1)."""
        items = tuple(c for c in children if not _is(c, "NIL"))
        return ast.PathNegated(items, pos=_pos(meta))

    def path_one_in_property_set(self, meta: Meta, children: Children) -> ast.Iri | ast.PathInverse:
        """[96] PathOneInPropertySet (Sec. 9.1)."""
        iri = self._path(children[-1])
        assert isinstance(iri, ast.Iri)
        if len(children) == 2:  # '^' iri
            return ast.PathInverse(iri, pos=_pos(meta))
        return iri

    def integer(self, meta: Meta, children: Children) -> int:
        """[97] Integer (Sec. 19.8)."""
        return int(children[0])

    def blank_node_property_list(self, meta: Meta, children: Children) -> ast.BlankNodePropertyList:
        """[99] BlankNodePropertyList (Sec. 4.1.4)."""
        return ast.BlankNodePropertyList(children[0], pos=_pos(meta))

    blank_node_property_list_path = blank_node_property_list

    def collection(self, meta: Meta, children: Children) -> ast.Collection:
        """[102] Collection (Sec. 4.2.3)."""
        return ast.Collection(tuple(self._graph_node(c) for c in children), pos=_pos(meta))

    collection_path = collection

    def var(self, meta: Meta, children: Children) -> ast.Var:
        """[108] Var (Sec. 4.1.3)."""
        return ast.Var(str(children[0])[1:], pos=_pos(meta))

    # Expressions (Sec. 17) -----------------------------------------------------------

    def conditional_or_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[111] ConditionalOrExpression (Sec. 17.3, 17.4.1.6)."""
        return self._fold(children, meta, "||")

    def conditional_and_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[112] ConditionalAndExpression (Sec. 17.3, 17.4.1.7)."""
        return self._fold(children, meta, "&&")

    def relational_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[114] RelationalExpression (Sec. 17.3, 17.4.1.9, 17.4.1.10)."""
        left, operator = children[0], str(children[1])
        if operator in _COMPARISONS:
            return ast.Binary(operator, left, children[2], pos=_pos(meta))
        negated = operator.upper() == "NOT"
        return ast.In(left, children[-1], negated=negated, pos=_pos(meta))

    def additive_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[116]: after an operand, a signed number is the next operand and its sign the
        operator (``?x +1 * 2`` is ``?x + (1 * 2)``)."""
        result: ast.Expr = children[0]
        i = 1
        while i < len(children):
            child = children[i]
            if isinstance(child, Token):  # '+' or '-' and a multiplicative expression
                right = children[i + 1]
                result = ast.Binary(str(child), result, right, pos=_span(result, right, meta))
                i += 2
                continue
            assert isinstance(child, ast.Literal) and child.lexical[:1] in ("+", "-")
            operand: ast.Expr = _unsigned(child)
            i += 1
            while i < len(children) and str(children[i]) in ("*", "/"):
                right = children[i + 1]
                operand = ast.Binary(
                    str(children[i]), operand, right, pos=_span(operand, right, meta)
                )
                i += 2
            result = ast.Binary(child.lexical[0], result, operand, pos=_span(result, operand, meta))
        return result

    def multiplicative_expression(self, meta: Meta, children: Children) -> ast.Expr:
        """[117] MultiplicativeExpression (Sec. 17.3)."""
        return self._fold(children, meta)

    def unary_expression(self, meta: Meta, children: Children) -> ast.Unary:
        """[118] UnaryExpression (Sec. 17.3)."""
        return ast.Unary(str(children[0]), children[1], pos=_pos(meta))

    def function_call(self, meta: Meta, children: Children) -> ast.FunctionCall:
        """[70] FunctionCall (Sec. 17.6)."""
        return _call(children, meta)

    def arg_list(self, meta: Meta, children: Children) -> tuple[tuple[ast.Expr, ...], bool]:
        """[71] ArgList (Sec. 17.6)."""
        args = tuple(c for c in children if isinstance(c, ast.Expr))
        return args, any(_is(c, "DISTINCT") for c in children)

    def expression_list(self, meta: Meta, children: Children) -> tuple[ast.Expr, ...]:
        """[72] ExpressionList (Sec. 17.4)."""
        return tuple(c for c in children if isinstance(c, ast.Expr))

    def iri_or_function(self, meta: Meta, children: Children) -> ast.Iri | ast.FunctionCall:
        """[128] iriOrFunction (Sec. 17.6)."""
        if len(children) == 1:
            iri = children[0]
            assert isinstance(iri, ast.Iri)
            return iri
        return _call(children, meta)

    def built_in_call(self, meta: Meta, children: Children) -> ast.Expr:
        """[121] BuiltInCall (Sec. 17.4)."""
        first = children[0]
        if not isinstance(first, Token):  # aggregate, REGEX, SUBSTR, REPLACE, EXISTS
            assert isinstance(first, ast.Expr)
            return first
        args: list[ast.Expr] = []
        for child in children[1:]:
            if isinstance(child, tuple):  # CONCAT and COALESCE take an expression list
                args.extend(child)
            elif isinstance(child, ast.Expr):
                args.append(child)
        return ast.BuiltIn(str(first).upper(), tuple(args), pos=_pos(meta))

    def regex_expression(self, meta: Meta, children: Children) -> ast.BuiltIn:
        """[122] RegexExpression (Sec. 17.4.3.14)."""
        return ast.BuiltIn("REGEX", tuple(children), pos=_pos(meta))

    def substring_expression(self, meta: Meta, children: Children) -> ast.BuiltIn:
        """[123] SubstringExpression (Sec. 17.4.3.3)."""
        return ast.BuiltIn("SUBSTR", tuple(children), pos=_pos(meta))

    def str_replace_expression(self, meta: Meta, children: Children) -> ast.BuiltIn:
        """[124] StrReplaceExpression (Sec. 17.4.3.15)."""
        return ast.BuiltIn("REPLACE", tuple(children), pos=_pos(meta))

    def exists_func(self, meta: Meta, children: Children) -> ast.Exists:
        """[125] ExistsFunc (Sec. 8.1, 17.4.1.4)."""
        return ast.Exists(children[0], pos=_pos(meta))

    def not_exists_func(self, meta: Meta, children: Children) -> ast.Exists:
        """[126] NotExistsFunc (Sec. 8.1, 17.4.1.4)."""
        return ast.Exists(children[0], negated=True, pos=_pos(meta))

    def aggregate(self, meta: Meta, children: Children) -> ast.Aggregate:
        """[127] Aggregate (Sec. 11, 18.5)."""
        name = str(children[0]).upper()
        arg = next((c for c in children if isinstance(c, ast.Expr)), None)
        separator = next((c for c in children if type(c) is str), None)
        distinct = any(_is(c, "DISTINCT") for c in children)
        return ast.Aggregate(name, arg, distinct, separator, pos=_pos(meta))

    # Terms (Sec. 4.1, 19.5..19.8) -------------------------------------------------------

    def rdf_literal(self, meta: Meta, children: Children) -> ast.Literal:
        """[129] RDFLiteral (Sec. 4.1.2)."""
        lexical = children[0]
        if len(children) == 1:
            return ast.Literal(lexical, pos=_pos(meta))
        annotation = children[1]
        if isinstance(annotation, ast.Iri):
            return ast.Literal(lexical, annotation.value, pos=_pos(meta))
        return ast.Literal(lexical, lang=str(annotation)[1:], pos=_pos(meta))

    def numeric_literal_unsigned(self, meta: Meta, children: Children) -> ast.Literal:
        """[131] NumericLiteralUnsigned (Sec. 4.1.2)."""
        token = children[0]
        datatype = _NUMERIC_TYPES[token.type.split("_")[0]]
        return ast.Literal(str(token), datatype, written=str(token), pos=_pos(meta))

    numeric_literal_positive = numeric_literal_unsigned
    numeric_literal_negative = numeric_literal_unsigned

    def boolean_literal(self, meta: Meta, children: Children) -> ast.Literal:
        """[134] BooleanLiteral (Sec. 4.1.2)."""
        token = str(children[0])
        return ast.Literal(token.lower(), ast.XSD_BOOLEAN, written=token, pos=_pos(meta))

    def string(self, meta: Meta, children: Children) -> str:
        """[135] String (Sec. 19.7)."""
        token = children[0]
        quotes = _STRING_QUOTES[token.type]
        body = str(token)[quotes:-quotes]

        def decode(match: re.Match[str]) -> str:
            echar, short, long = match.groups()
            if echar is not None:
                return _ECHARS[echar]
            return _codepoint(short or long, token)

        return _STRING_ESCAPE.sub(decode, body)

    def iri(self, meta: Meta, children: Children) -> ast.Iri:
        """[136] iri (Sec. 4.1.1)."""
        child = children[0]
        if _is(child, "IRIREF"):
            return ast.Iri(self._iriref(child), pos=_pos(meta))
        assert isinstance(child, str)
        return ast.Iri(child, pos=_pos(meta))

    def _iriref(self, token: Token) -> str:
        """An IRIREF token: brackets off, codepoint escapes decoded, resolved (Sec. 4.1.1)."""

        def decode(match: re.Match[str]) -> str:
            return _codepoint(match.group(1) or match.group(2), token)

        return resolve_iri(_CODEPOINT_ESCAPE.sub(decode, str(token)[1:-1]), self.base)

    def prefixed_name(self, meta: Meta, children: Children) -> str:
        """The IRI of ``prefix:local`` (Sec. 4.1.1.1): the namespace and the local part with
        its ``\\`` escapes decoded (``%hh`` stays as written, Sec. 19.5)."""
        token = children[0]
        prefix, local = str(token).split(":", 1)
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            raise _error(f"the prefix '{prefix}:' is not declared (add a PREFIX)", token)
        return namespace + _LOCAL_ESCAPE.sub(r"\1", local)

    def blank_node(self, meta: Meta, children: Children) -> ast.BlankNode:
        """[138] BlankNode (Sec. 4.1.4)."""
        token = children[0]
        label = str(token)[2:] if token.type == "BLANK_NODE_LABEL" else None
        return ast.BlankNode(label, pos=_pos(meta))


def _call(children: Children, meta: Meta) -> ast.FunctionCall:
    """``iri(DISTINCT? args)``, from an IRI and an ``arg_list`` (Sec. 17.6; [70], [128])."""
    iri, (args, distinct) = children
    return ast.FunctionCall(iri, args, distinct, pos=_pos(meta))


def _unsigned(literal: ast.Literal) -> ast.Literal:
    """``+1`` or ``-1`` after an operand, without its sign (the sign is the operator)."""
    pos = literal.pos
    if pos is not None:
        pos = ast.Position(pos.line, pos.column + 1, pos.end_line, pos.end_column)
    written = None if literal.written is None else literal.written[1:]
    return ast.Literal(literal.lexical[1:], literal.datatype, written=written, pos=pos)


def build(
    tree: Tree[Token],
    *,
    prefixes: Mapping[str, str] | None = None,
    base: str | None = None,
    builder: type[Builder] = Builder,
) -> ast.Query:
    """The AST of a parse tree from ``parse_sparql`` (or a dialect parser with ``builder``).

    ``prefixes`` (name without colon to namespace IRI) and ``base`` are declared outside the
    text. Raises :class:`QuerySemanticError` for an undeclared prefix (Sec. 4.1.1.1) or an
    escape that is no code point (Sec. 19.2).
    """
    try:
        return builder(prefixes, base).transform(tree)
    except VisitError as error:
        raise error.orig_exc from None


def parse_query(
    text: str, *, prefixes: Mapping[str, str] | None = None, base: str | None = None
) -> ast.Query:
    """Parse, check (``check_sparql``) and build a SPARQL 1.1 query (Sec. 19.8)."""
    tree = parse_sparql(text)
    check_sparql(tree, prefixes=(prefixes or {}).keys())
    return build(tree, prefixes=prefixes, base=base)
