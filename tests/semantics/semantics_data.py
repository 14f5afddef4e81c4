"""The papers' data and small plan builders shared by the oracle's tests.

The queries are written with ``:name`` for ``<http://example.org/name>`` and expanded by
:func:`expand`, because the compiler's contract gives the oracle full IRIs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pyoxigraph import Literal, NamedNode

from rsep.algebra.events import GraphPatternRef
from rsep.algebra.params import Parameters, Source
from rsep.algebra.plan import Dataset, Plan, QueryForm, Select
from rsep.algebra.window import NamedWindow
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.formats import read_events
from rsep.rdf.results import ConstructResult, Result, SelectResult
from rsep.rdf.terms import Term

EX = "http://example.org/"
DATA = Path(__file__).parent / "data"

S_NEARBY = EX + "S_nearby"
S_COUPON = EX + "S_coupon"
S_RSEPQL = EX + "S"

_NAME = re.compile(r"(?<![\w<>/#:])(:)([A-Za-z_][\w]*)")
_VARIABLE = re.compile(r"\?([A-Za-z_]\w*)")


def expand(text: str) -> str:
    """``text`` with every ``:name`` written as ``<http://example.org/name>``."""
    return _NAME.sub(lambda m: f"<{EX}{m.group(2)}>", text)


def pattern(text: str) -> GraphPatternRef:
    """A graph pattern from query text with ``:name`` shorthands."""
    return GraphPatternRef(expand(text), frozenset(_VARIABLE.findall(text)))


def read_stream(file: str, iri: str) -> Stream:
    """The stream ``iri`` read from ``tests/semantics/data/<file>``."""
    return Stream(iri, tuple(read_events(DATA / file, stream=iri)))


def rspql_streams() -> StreamSet:
    """S_nearby (RSP-QL Example 3) and S_coupon (Example 5)."""
    return StreamSet([read_stream("s_nearby.tnt", S_NEARBY), read_stream("s_coupon.tnt", S_COUPON)])


def triples_stream(iri: str, items: Iterable[tuple[str, int]]) -> Stream:
    """A triple stream from ``(":s :p :o", t)`` pairs."""
    events = []
    for text, t in items:
        [event] = list(_parse_events(text, t, iri))
        events.append(event)
    return Stream(iri, tuple(events))


def _parse_events(text: str, t: int, iri: str) -> Iterable[Event]:
    from pyoxigraph import RdfFormat, parse

    triples = [q.triple for q in parse(input=expand(text) + " .", format=RdfFormat.N_TRIPLES)]
    yield Event.point(iri, t, triples)


def parameters(values: Mapping[str, object] | None = None) -> Parameters:
    """The built-in parameters with ``values`` set as if the query text gave them."""
    return Parameters.defaults().with_values(dict(values or {}), Source.QUERY_TEXT)


def plan(
    where: str,
    windows: Sequence[NamedWindow],
    *,
    form: QueryForm | None = None,
    default_graphs: Sequence[str] = (),
    named_graphs: Sequence[str] = (),
    default_windows: Sequence[str] = (),
    params: Mapping[str, object] | None = None,
) -> Plan:
    """A plan over ``windows`` whose r2r is the group pattern ``where``."""
    return Plan(
        form=form if form is not None else Select(),
        dataset=Dataset(
            default_graphs=tuple(default_graphs),
            named_graphs=tuple(named_graphs),
            streams=tuple(dict.fromkeys(w.stream for w in windows)),
            windows=tuple(windows),
            default_windows=tuple(default_windows),
        ),
        r2r=pattern(where),
        parameters=parameters(params),
    )


def short(term: Term) -> str:
    """``:name`` for an example.org IRI, the lexical form of a literal, else N-Triples."""
    if isinstance(term, NamedNode) and term.value.startswith(EX):
        return ":" + term.value[len(EX) :]
    if isinstance(term, Literal):
        return term.value
    return str(term)


def table(results: Iterable[Result]) -> list[tuple[object, ...]]:
    """SELECT results as sorted rows ``(time, (var, value), ...)`` with short values."""
    rows: list[tuple[object, ...]] = []
    for result in results:
        assert isinstance(result, SelectResult)
        cells = tuple(sorted((v, short(t)) for v, t in result.bindings.items()))
        rows.append((result.time, *cells))
    return sorted(rows, key=lambda row: (row[0], repr(row[1:])))


def column(results: Iterable[Result], variable: str) -> dict[int, list[str]]:
    """The short values of ``variable`` in SELECT results, sorted, by time."""
    out: dict[int, list[str]] = {}
    for result in results:
        assert isinstance(result, SelectResult)
        out.setdefault(result.time, []).append(short(result.bindings[variable]))
    return {t: sorted(values) for t, values in out.items()}


def graphs_by_time(results: Iterable[Result]) -> dict[int, set[str]]:
    """CONSTRUCT results as ``time -> {"s p o", ...}`` with short terms."""
    out: dict[int, set[str]] = {}
    for result in results:
        assert isinstance(result, ConstructResult)
        out.setdefault(result.time, set()).update(
            " ".join(short(term) for term in (t.subject, t.predicate, t.object))  # type: ignore[arg-type]
            for t in result.triples
        )
    return out


Q_EX_RSPQL = """PREFIX : <http://example.org/>
{pragma}REGISTER RSTREAM :out AS
SELECT ?shopper ?shop ?shop_owner ?coupon
FROM :G_shops
FROM NAMED WINDOW :w_1 ON :S_nearby [RANGE 5 STEP 2 T0 1]
FROM NAMED WINDOW :w_2 ON :S_coupon [RANGE 2 STEP 2 T0 0 REPORT WINDOW_CLOSE NON_EMPTY]
WHERE {{
  WINDOW :w_1 {{ ?shopper :isNearby ?shop }}
  WINDOW :w_2 {{ ?shop_owner :offers ?coupon }}
  ?shop_owner :owns ?shop
}}
"""
"""RSP-QL's query Q^ex (Example 10) in the RSP-QL dialect, nothing but the paper's
parameters stated: the dataset of Example 8 over the time-varying G_shops (Example 4), the
policy P = WC[𝕎2] ∧ NC[𝕎2], Rstream; ``{pragma}`` takes PRAGMA lines."""
