"""Hypothesis strategies for small random event lists, shared by the format tests.

Imported as a plain module (pytest puts this folder on ``sys.path``; tests/ has no
``__init__.py`` on purpose).
"""

from __future__ import annotations

import string

from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from rsep.rdf.event import Event
from rsep.rdf.time import TimeUnit

XSD = "http://www.w3.org/2001/XMLSchema#"

_IRI_CHARS = string.ascii_letters + string.digits + "-._~/é"

iris = st.builds(
    lambda path: NamedNode(f"http://ex.org/{path}"),
    st.text(alphabet=_IRI_CHARS, min_size=1, max_size=8),
)
blank_nodes = st.builds(BlankNode, st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,5}", fullmatch=True))
_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)
literals = st.one_of(
    st.builds(Literal, _text),
    st.builds(
        lambda value, lang: Literal(value, language=lang),
        _text,
        st.sampled_from(["en", "fr", "en-gb", "de-ch-1996"]),
    ),
    st.builds(
        lambda n: Literal(str(n), datatype=NamedNode(XSD + "integer")),
        st.integers(-(10**12), 10**12),
    ),
    st.builds(
        lambda value: Literal(value, datatype=NamedNode("http://ex.org/dt")),
        _text,
    ),
    st.builds(
        lambda x: Literal(repr(x), datatype=NamedNode(XSD + "double")),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
)
subjects = st.one_of(iris, blank_nodes)
triples = st.builds(Triple, subjects, iris, st.one_of(iris, blank_nodes, literals))
graphs = st.frozensets(triples, min_size=1, max_size=4)

STREAMS = ["http://ex.org/stream/a", "http://ex.org/stream/b", "http://ex.org/stream/c"]


@st.composite
def event_lists(
    draw: st.DrawFn,
    *,
    streams: int = 1,
    intervals: bool = True,
    ids: bool = True,
    unit: TimeUnit = TimeUnit.MILLISECONDS,
    min_triples: int = 1,
    max_size: int = 6,
) -> list[Event]:
    """Events on up to ``streams`` streams, time non-decreasing per stream, unique ids."""
    count = draw(st.integers(0, max_size))
    clocks = dict.fromkeys(STREAMS[:streams], draw(st.integers(0, 10**9)))
    events: list[Event] = []
    for index in range(count):
        stream = draw(st.sampled_from(STREAMS[:streams]))
        start = clocks[stream] + draw(st.integers(0, 10**7))
        clocks[stream] = start
        length = draw(st.integers(0, 10**6)) if intervals and draw(st.booleans()) else 0
        graph = draw(st.frozensets(triples, min_size=min_triples, max_size=4))
        kind = draw(st.sampled_from(["iri", "bnode", "none"])) if ids else "none"
        name: NamedNode | BlankNode | None = (
            NamedNode(f"http://ex.org/graph/{index}")
            if kind == "iri"
            else BlankNode(f"g{index}")
            if kind == "bnode"
            else None
        )
        events.append(
            Event(
                stream,
                start * unit.value,
                (start + length) * unit.value,
                graph,
                name,
            )
        )
    return events
