"""Solution modifiers beside an event pattern, applied to the answer of one evaluation.

SPARQL 1.1 puts GROUP BY, HAVING, the SELECT's aggregates and ``(e AS ?v)``, ORDER BY,
DISTINCT, LIMIT, OFFSET and a trailing VALUES in the algebraic expression of the query
(sec. 18.2.4-18.2.5); RSP-QL evaluates that expression at each evaluation instant and
streams its result (Def. 24), and RSEP-QL keeps SPARQL's query around ``MATCH`` (Sect. 3.3).
So beside an event pattern they apply to ``Ψ(t)``, the solutions of one evaluation, before
the streaming operator. The papers give a solution with an interval no meaning in a group:
a grouped row has no interval; without grouping each row keeps its own, and DISTINCT,
ORDER BY and the slice see it as part of the row.

:class:`Modifiers` is the plan's form of them (SPARQL text, full IRIs); :func:`apply`
evaluates them exactly, with pyoxigraph, over the answer written as ``VALUES`` rows. The
oracle and the engine both call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import BlankNode, Literal, Store

from rsep.errors import UserError
from rsep.rdf.sparql import LiteralForms, Mu, select
from rsep.rdf.terms import Term

__all__ = ["Interval", "Modifiers", "Row", "apply"]

Interval = tuple[int, int]
Row = tuple[Mu, Interval | None]
"""A solution and its interval (``None``: a solution without one, as RSEP-QL's MATCH
gives, or a grouped row)."""

_T1, _T2 = "_rsep_t1", "_rsep_t2"
"""The variables that carry a row's interval through the modifiers."""

_STORE = Store()


@dataclass(frozen=True)
class Modifiers:
    """``head`` is the SELECT clause (``SELECT [DISTINCT] …`` with its aggregates and
    ``(e AS ?v)``), ``tail`` the text after WHERE (GROUP BY … VALUES …); ``grouped`` whether
    the solutions are grouped (GROUP BY, or an aggregate), so that rows lose intervals."""

    head: str
    tail: str
    grouped: bool
    group_by: bool = False
    """A GROUP BY clause: no solution makes no group (SPARQL 1.1 sec. 18.5.1), where an
    aggregate alone makes one group of no solution."""

    def __str__(self) -> str:
        return f"{self.head} … {' '.join(self.tail.split())}"


def apply(modifiers: Modifiers, rows: Sequence[Row], forms: LiteralForms) -> list[Row]:
    """The modifiers over ``rows`` (a bag): ``head WHERE { VALUES … } tail`` evaluated by
    pyoxigraph, each literal given back as the rows wrote it, the rows listed in one
    order (:func:`_order`) so that ties are broken alike everywhere. A blank node in a row
    is refused (``VALUES`` cannot write one)."""
    names = sorted({name for mu, _ in rows for name in mu})
    rows = sorted(rows, key=_order)  # one order for ties under ORDER BY and a slice
    timed = not modifiers.grouped and any(interval is not None for _, interval in rows)
    columns = [*names, _T1, _T2] if timed else names
    lines: list[str] = []
    literals: list[Literal] = []
    for mu, span in rows:
        terms = [_term(mu.get(name), literals) for name in names]
        if timed:
            terms += ["UNDEF", "UNDEF"] if span is None else [str(i) for i in span]
        lines.append("(" + " ".join(terms) + ")")
    originals = forms.originals(literals, "the answer the solution modifiers read")
    head = modifiers.head
    if timed and not head.rstrip().endswith("*"):
        head = f"{head} ?{_T1} ?{_T2}"
    variables = " ".join("?" + name for name in columns)  # no rows: no solution at all
    values = f"VALUES ({variables}) {{\n{chr(10).join(lines)}\n}}"
    query = f"{head}\nWHERE {{ {values} }}\n{modifiers.tail}"

    def back(_: str, term: Term) -> Term:
        return originals.get(term, term) if isinstance(term, Literal) else term

    found = select(_STORE, query, back, what="the solution modifiers")
    out: list[Row] = []
    for mu in found:
        interval: Interval | None = None
        if timed and _T1 in mu:
            interval = (int(mu[_T1].value), int(mu[_T2].value))
        out.append((mu.project(n for n in mu if n not in (_T1, _T2)), interval))
    return out


def _order(row: Row) -> tuple[int, int, list[tuple[str, str]]]:
    """Rows enter by interval, then by their terms' text: SPARQL leaves the order of rows
    that ORDER BY ties open (sec. 15.1), and a slice of them must not depend on how an
    evaluator happened to list the answer."""
    mu, span = row
    first, last = span if span is not None else (-(2**63), -(2**63))
    return (first, last, sorted((name, str(term)) for name, term in mu.items()))


def _term(term: Term | None, literals: list[Literal]) -> str:
    if term is None:
        return "UNDEF"
    if isinstance(term, BlankNode):
        raise UserError(
            "an answer with a blank node goes through solution modifiers only as an IRI or a "
            "literal (VALUES cannot write a blank node)"
        )
    if isinstance(term, Literal):
        literals.append(term)
    return str(term)
