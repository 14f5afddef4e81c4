"""RDFox as CSR-Bench-Aligned writes it (``grammar/rdfox.lark``): windowed streams declared
before the query form.

Source: ``csrbench/aligned/srbench-queries.properties`` (the seven ``srb.queryN.rdfoxquery``
values): ``FROM dynamic stream <s> [range 1000ms step 1000ms]`` (keywords in any case, one
clause per stream) then ``SELECT … WHERE {…}``. Each clause is a time-based sliding window
over the stream merged into the default graph, as C-SPARQL's ``FROM STREAM <s> [RANGE …
STEP …]`` (RSP-QL Semantics (003), "RSP-QL dataset for C-SPARQL, CQELS and SPARQLstream"):
the same :class:`~rsep.lang.ast_stream.FromStream` node, compiled the same way (an unnamed
default window). No source documents RDFox's evaluation policies, so its defaults are
C-SPARQL's, and say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from lark import v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import FromStream, StreamQuery
from rsep.lang.build import Builder, Children, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue
from rsep.lang.dialects.csparql import CSparql
from rsep.lang.dialects.stream import StreamBuilder, StreamPrinter
from rsep.lang.printer import Printer

_AS_CSPARQL = "no RDFox source states it; C-SPARQL's default, whose FROM STREAM it mirrors: "


@v_args(meta=True)
class RdfoxBuilder(StreamBuilder):
    """The AST of ``rdfox.lark``: the ``FROM dynamic stream`` clauses lead the dataset."""

    def query(self, meta: Meta, children: Children) -> ast.Query:
        """The query, with its stream clauses first in its dataset."""
        streams = tuple(c for c in children if isinstance(c, FromStream))
        query = super().query(meta, [c for c in children if not isinstance(c, FromStream)])
        return query.replace(dataset=streams + query.dataset) if streams else query

    def dynamic_stream_clause(self, meta: Meta, children: Children) -> FromStream:
        """``FROM dynamic stream <s> [window]``: a window merged into the default graph."""
        return FromStream(children[0], children[1], pos=_pos(meta))


class RdfoxPrinter(StreamPrinter):
    """RDFox text: ``FROM dynamic stream <s> [RANGE … STEP …]`` before the query form."""

    def query(self, query: ast.Query) -> str:
        """The prologue, the stream clauses, then the query as SPARQL 1.1 prints it."""
        streams: list[FromStream] = []
        for clause in query.dataset:
            if not isinstance(clause, FromStream):
                break
            streams.append(clause)
        rest = query.dataset[len(streams) :]
        if any(isinstance(clause, FromStream) for clause in rest):
            raise ValueError("RDFox declares its streams before the other dataset clauses")
        lines = [self._method("declaration", d)(d) for d in query.prologue]
        lines.extend(self.query_head(query))
        lines.extend(self.dynamic_stream(clause) for clause in streams)
        lines.append(self.query_form(query))
        lines.extend(self._method("dataset", d)(d) for d in rest)
        lines.extend(self.query_where(query))
        lines.extend(self._modifiers(query, 0))
        return "\n".join(lines) + "\n"

    def query_head(self, query: ast.Query) -> list[str]:
        """Nothing: RDFox registers no query and writes no R2S operator."""
        if isinstance(query, StreamQuery):
            raise ValueError("RDFox has no registration or R2S operator in its syntax")
        return []

    def dynamic_stream(self, clause: FromStream) -> str:
        """``FROM dynamic stream <s> [window]``."""
        return f"FROM dynamic stream {self.name(clause.stream)} {self.window(clause.window)}"


class Rdfox(StreamingDialect):
    """``FROM dynamic stream <s> [range 1000ms step 1000ms] SELECT ... WHERE {...}``."""

    name = "rdfox"
    title = "RDFox"
    grammar = "rdfox.lark"
    keywords = frozenset({"DYNAMIC", "STREAM"})
    cues: ClassVar[Cues] = (keyword_cue("FROM DYNAMIC STREAM"),)
    defaults: ClassVar[Mapping[str, Default]] = {
        name: (value, _AS_CSPARQL + why)
        for name, (value, why) in CSparql.defaults.items()
        if name != "profile"
    } | {
        "profile": (
            "none",
            "no CSR-Bench engine profile for RDFox (csrbench/config has csparql, cqels and "
            "sparqlstream .properties only)",
        ),
    }

    builder: ClassVar[type[Builder]] = RdfoxBuilder
    printer: ClassVar[type[Printer]] = RdfoxPrinter


DIALECT = Rdfox()
