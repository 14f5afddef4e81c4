"""The rules of SPARQL 1.1 Query that the grammar cannot express, checked on the parse tree.

Each rule cites the section of the Recommendation that states it:

- a prefixed name uses a declared prefix (4.1.1.1);
- a blank node label belongs to one basic graph pattern only (4.1.4); a FILTER does not
  end a basic graph pattern, every other non-triples pattern does (18.2.2.6);
- the variable of ``BIND (… AS ?v)`` is not in scope in the group before it (10.1, 18.2.1);
- the variable of ``SELECT (… AS ?v)`` is neither in scope in the WHERE clause nor projected
  already (18.2.1);
- in an aggregate query (GROUP BY, or an aggregate in SELECT, HAVING or ORDER BY) there is
  no ``SELECT *``, and every projected variable, and every variable a projected expression
  uses outside an aggregate, is a GROUP BY key or an earlier ``AS`` (11.4, 18.2.4.1);
- aggregates appear only in SELECT, HAVING and ORDER BY, never nested (11, 18.2.4.1);
- every row of ``VALUES`` has one value per variable (10.2).

:func:`check_sparql` raises :class:`QuerySemanticError` at the first violation. The walks are
iterative, so a deeply nested query cannot exhaust Python's stack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from lark import Token, Tree

from rsep.errors import UserError

__all__ = ["QuerySemanticError", "check_sparql"]

Node = Tree[Token]

_PNAME = frozenset({"PNAME_LN", "PNAME_NS"})
_VAR = frozenset({"VAR1", "VAR2"})
_LABEL = frozenset({"BLANK_NODE_LABEL"})
# Where an aggregate may appear (11, 18.2.4.1), and where it may not.
_AGGREGATE_ALLOWED = frozenset({"select_expression", "having_clause", "order_clause"})
_AGGREGATE_FORBIDDEN = frozenset({"group_graph_pattern", "group_clause", "values_clause"})


class QuerySemanticError(UserError):
    """A query the grammar accepts but the Recommendation forbids; names line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")


def check_sparql(tree: Node, *, prefixes: Iterable[str] = ()) -> None:
    """Check a SPARQL 1.1 query tree (from ``parse_sparql``) against the rules above.

    ``prefixes`` names prefixes (without the colon) declared outside the query text, for
    example by an engine's default prologue; they count as declared.
    """
    try:
        _check_prefixes(tree, set(prefixes))
        _check_blank_node_labels(tree)
        _check_aggregate_places(tree)
        scopes = _Scopes()
        # Deepest first (Lark's order), so a group's scope is memoised before its parent's
        # asks for it, and the recursion between scopes stays shallow.
        for group in tree.find_data("group_graph_pattern"):
            scopes.of_group(group)
        for select in tree.find_pred(lambda t: t.data in ("select_query", "sub_select")):
            _check_select(select, scopes)
        for values in tree.find_data("inline_data_full"):
            _check_values_arity(values)
    except RecursionError:  # pragma: no cover - a guard; the walks are iterative
        raise QuerySemanticError("the query nests too deeply to check", 1, 1) from None


# Tree helpers --------------------------------------------------------------------------


def _error(message: str, where: Node | Token) -> QuerySemanticError:
    if isinstance(where, Token):
        return QuerySemanticError(message, where.line or 1, where.column or 1)
    if where.meta.empty:  # pragma: no cover - every node we report on has a token
        return QuerySemanticError(message, 1, 1)
    return QuerySemanticError(message, where.meta.line, where.meta.column)


def _children(tree: Node) -> Iterator[Node]:
    return (child for child in tree.children if isinstance(child, Tree))


def _child(tree: Node, name: str) -> Node:
    for child in _children(tree):
        if child.data == name:
            return child
    raise LookupError(name)  # pragma: no cover - the grammar guarantees the child


def _last(tree: Node) -> Node:
    """The last subtree of ``tree``: the variable of ``(… AS ?v)`` forms."""
    *_, last = _children(tree)
    return last


def _tokens(
    tree: Node | Token, types: frozenset[str], prune: Callable[[Node], bool] | None = None
) -> Iterator[Token]:
    """Tokens of ``types`` in document order, not entering subtrees ``prune`` selects."""
    stack: list[Node | Token] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Token):
            if node.type in types:
                yield node
        elif prune is None or node is tree or not prune(node):
            stack.extend(reversed(node.children))


def _var_name(token: Token) -> str:
    return "?" + token[1:]


def _vars(tree: Node | Token) -> set[str]:
    return {_var_name(token) for token in _tokens(tree, _VAR)}


def _the_var(tree: Node) -> str:
    """The name of the variable of a ``var`` node."""
    return _var_name(next(_tokens(tree, _VAR)))


# 4.1.1.1 -------------------------------------------------------------------------------


def _check_prefixes(tree: Node, declared: set[str]) -> None:
    for decl in tree.find_data("prefix_decl"):
        namespace = decl.children[0]
        assert isinstance(namespace, Token)
        declared.add(namespace[:-1])
    for token in _tokens(tree, _PNAME, prune=lambda t: t.data == "prologue"):
        prefix = token.split(":", 1)[0]
        if prefix not in declared:
            raise _error(f"the prefix '{prefix}:' is not declared (add a PREFIX)", token)


# 4.1.4, 18.2.2.6 -----------------------------------------------------------------------


def _check_blank_node_labels(tree: Node) -> None:
    owner: dict[str, int] = {}
    bgps = 0

    def claim(block: Node, bgp: int) -> None:
        for token in _tokens(block, _LABEL):
            if owner.setdefault(str(token), bgp) != bgp:
                raise _error(
                    f"the blank node label {token} is used in two basic graph patterns", token
                )

    stack = [tree]
    while stack:
        node = stack.pop()
        if node.data == "group_graph_pattern_sub":
            bgps += 1
            for child in _children(node):
                if child.data == "triples_block":
                    claim(child, bgps)
                    continue
                if child.data != "filter":
                    bgps += 1  # the pattern ends the basic graph pattern
                stack.append(child)
        elif node.data == "triples_template":
            bgps += 1
            claim(node, bgps)
        elif node.data != "construct_template":  # a template's labels are its own
            stack.extend(_children(node))


# 11, 18.2.4.1 --------------------------------------------------------------------------


def _check_aggregate_places(tree: Node) -> None:
    stack = [(tree, False)]
    while stack:
        node, allowed = stack.pop()
        if node.data == "aggregate":
            if not allowed:
                raise _error("an aggregate is allowed only in SELECT, HAVING and ORDER BY", node)
            allowed = False  # no aggregate inside an aggregate
        elif node.data in _AGGREGATE_ALLOWED:
            allowed = True
        elif node.data in _AGGREGATE_FORBIDDEN:
            allowed = False
        stack.extend((child, allowed) for child in _children(node))


def _has_aggregate(tree: Node) -> bool:
    """Whether ``tree`` holds an aggregate outside the graph patterns it contains."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.data == "aggregate":
            return True
        stack.extend(c for c in _children(node) if c.data != "group_graph_pattern")
    return False


def _vars_outside_aggregates(tree: Node) -> Iterator[Token]:
    return _tokens(tree, _VAR, prune=lambda t: t.data in ("aggregate", "group_graph_pattern"))


# 10.1, 18.2.1 --------------------------------------------------------------------------


class _Scopes:
    """In-scope variables of graph patterns (18.2.1), checking BIND on the way (10.1)."""

    def __init__(self) -> None:
        self._memo: dict[int, set[str]] = {}

    def of_group(self, group: Node) -> set[str]:
        """``group_graph_pattern``: a sub-select's projection, or its elements' union."""
        key = id(group)
        if key not in self._memo:
            inner = next(_children(group), None)
            if inner is None:
                self._memo[key] = set()
            elif inner.data == "sub_select":
                self._memo[key] = self.projected(inner)
            else:
                self._memo[key] = self.of_sub(inner)
        return self._memo[key]

    def of_sub(self, sub: Node) -> set[str]:
        """``group_graph_pattern_sub``, in order; a BIND must not rebind an in-scope var."""
        key = id(sub)
        if key in self._memo:
            return self._memo[key]
        scope: set[str] = set()
        for element in _children(sub):
            kind = element.data
            if kind == "bind":
                var = _last(element)  # BIND(expression AS var)
                name = _the_var(var)
                if name in scope:
                    raise _error(f"BIND assigns {name}, which is already in scope", var)
                scope.add(name)
            elif kind in ("triples_block", "inline_data"):
                scope |= _vars(element)
            elif kind == "group_or_union_graph_pattern":
                for group in _children(element):
                    scope |= self.of_group(group)
            elif kind == "optional_graph_pattern":
                scope |= self.of_group(_child(element, "group_graph_pattern"))
            elif kind in ("graph_graph_pattern", "service_graph_pattern"):
                *head, inner = element.children
                for part in head:
                    scope |= _vars(part)
                assert isinstance(inner, Tree)
                scope |= self.of_group(inner)
            elif kind not in ("filter", "minus_graph_pattern"):
                scope |= self._of_other(element)
        self._memo[key] = scope
        return scope

    def _of_other(self, element: Node) -> set[str]:
        """A pattern a dialect adds: the variables outside its filters and MINUS."""
        return _vars(element) - set().union(
            *(_vars(t) for t in element.find_pred(lambda t: t.data in _NOT_BINDING))
        )

    def projected(self, select: Node) -> set[str]:
        """The variables a ``select_query`` or ``sub_select`` projects."""
        clause = _child(select, "select_clause")
        if _star(clause) is not None:
            return self.of_where(select)
        names: set[str] = set()
        for item in _children(clause):
            names.add(_the_var(_last(item) if item.data == "select_expression" else item))
        return names

    def of_where(self, select: Node) -> set[str]:
        """In-scope variables of the WHERE clause of a query or sub-select."""
        where = _child(select, "where_clause")
        return self.of_group(_child(where, "group_graph_pattern"))


_NOT_BINDING = frozenset({"filter", "minus_graph_pattern"})


def _star(clause: Node) -> Token | None:
    return next((c for c in clause.children if isinstance(c, Token) and c.type == "STAR"), None)


def _check_select(select: Node, scopes: _Scopes) -> None:
    """18.2.1 and 18.2.4.1 for one SELECT: AS rebinding, SELECT * and grouping."""
    clause = _child(select, "select_clause")
    modifier = _child(select, "solution_modifier")
    group = next((c for c in _children(modifier) if c.data == "group_clause"), None)
    aggregating = group is not None or any(
        _has_aggregate(part) for part in [clause, *_children(modifier)]
    )
    star = _star(clause)
    if star is not None and aggregating:
        raise _error("SELECT * is not allowed with GROUP BY or aggregates", star)
    keys: set[str] = set()
    for condition in [] if group is None else list(_children(group)):
        parts = list(_children(condition))
        if parts and parts[-1].data == "var" and len(parts) <= 2:
            keys.add(_the_var(parts[-1]))  # GROUP BY ?v, or GROUP BY (… AS ?v)
    in_scope = scopes.of_where(select) | keys
    projected: set[str] = set()
    for item in _children(clause):
        if item.data == "var":
            name = _the_var(item)
            if aggregating and name not in keys:
                raise _error(f"{name} is projected but is not a GROUP BY key", item)
            projected.add(name)
            continue
        expression, var = list(_children(item))
        name = _the_var(var)
        if name in in_scope or name in projected:
            raise _error(f"SELECT assigns {name}, which is already in scope or projected", var)
        if aggregating:
            for token in _vars_outside_aggregates(expression):
                used = _var_name(token)
                if used not in keys and used not in projected:
                    raise _error(f"{used} is used outside an aggregate but not grouped", token)
        projected.add(name)


# 10.2 ----------------------------------------------------------------------------------


def _check_values_arity(values: Node) -> None:
    width = sum(1 for c in _children(values) if c.data == "var")
    for row in _children(values):
        if row.data != "data_block_row":
            continue
        count = sum(1 for c in _children(row) if c.data == "data_block_value")
        if count != width:
            raise _error(f"a VALUES row has {count} values for {width} variables", row)
