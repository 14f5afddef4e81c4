"""``rsep.algebra.modifiers``: SPARQL 1.1's solution modifiers over the answer of one
evaluation, each row with its interval, as the oracle and the engine apply them."""

from __future__ import annotations

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode

from rsep.algebra.modifiers import Modifiers, Row, apply
from rsep.errors import UserError
from rsep.rdf.sparql import LiteralForms, Mu

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"


def row(company: str, price: str, span: tuple[int, int] | None = (1, 2)) -> Row:
    """A solution ``?c ?p`` (a price as the data wrote it, ``xsd:double``)."""
    mu = Mu({"c": NamedNode(EX + company), "p": Literal(price, datatype=NamedNode(XSD + "double"))})
    return (mu, span)


ROWS = [row("a", "14.0", (1, 4)), row("b", "9.50", (2, 3)), row("a", "3.0", (3, 5))]


def values(rows: list[Row], name: str) -> list[str]:
    return [mu[name].value for mu, _ in rows]


def test_without_grouping_each_row_keeps_its_interval_and_its_literals() -> None:
    """ORDER BY and LIMIT over the rows: each row keeps its interval; the literals are the
    data's (``14.0``, not pyoxigraph's ``14``)."""
    found = apply(
        Modifiers("SELECT ?c ?p", "ORDER BY DESC(?p) LIMIT 2", False), ROWS, LiteralForms()
    )
    assert values(found, "p") == ["14.0", "9.50"]
    assert [span for _, span in found] == [(1, 4), (2, 3)]


def test_distinct_sees_the_interval() -> None:
    """Two answers of one mapping over two intervals are two rows, under DISTINCT too."""
    twice = [row("a", "1.0", (1, 2)), row("a", "1.0", (3, 4)), row("a", "1.0", (3, 4))]
    found = apply(Modifiers("SELECT DISTINCT ?c", "", False), twice, LiteralForms())
    assert sorted(span for _, span in found if span is not None) == [(1, 2), (3, 4)]


def test_a_grouped_row_has_no_interval() -> None:
    """GROUP BY with an aggregate: one row per group, without interval; HAVING keeps :a."""
    modifiers = Modifiers(
        "SELECT ?c (COUNT(*) AS ?n) (MAX(?p) AS ?top)", "GROUP BY ?c HAVING (COUNT(*) > 1)", True
    )
    [(mu, span)] = apply(modifiers, ROWS, LiteralForms())
    assert (mu["c"], mu["n"].value, mu["top"].value, span) == (
        NamedNode(EX + "a"),
        "2",
        "14.0",
        None,
    )


def test_no_rows_no_solution_but_one_aggregate_row() -> None:
    """An empty answer has no solution to slice; an aggregate without GROUP BY still gives
    its one row (COUNT 0), as SPARQL 1.1 groups an empty multiset (sec. 18.5)."""
    assert apply(Modifiers("SELECT ?c", "LIMIT 1", False), [], LiteralForms()) == []
    [(mu, _)] = apply(Modifiers("SELECT (COUNT(*) AS ?n)", "", True), [], LiteralForms())
    assert mu["n"].value == "0"


def test_trailing_values_joins_and_offset_slices() -> None:
    """A trailing VALUES joins with the rows; OFFSET skips the first after ORDER BY."""
    modifiers = Modifiers("SELECT ?c ?p", f"ORDER BY ?p OFFSET 1 VALUES ?c {{ <{EX}a> }}", False)
    assert values(apply(modifiers, ROWS, LiteralForms()), "p") == ["14.0"]


def test_a_blank_node_is_refused() -> None:
    blank = (Mu({"c": BlankNode("x")}), None)
    with pytest.raises(UserError, match="blank node"):
        apply(Modifiers("SELECT ?c", "LIMIT 1", False), [blank], LiteralForms())
