"""C-SPARQL (``grammar/csparql.lark``): registered queries over windowed streams.

Papers: RSP-QL Semantics (seed 003), section "Explaining heterogeneity of RSP systems"
(C-SPARQL merges its windows into the default graph, evaluates on window close with
non-empty content and streams out with Rstream only) and RSEP-QL (seed 000), Sect. 4.3
(C-SPARQL's naive sequencing with f:timestamp: the latest matches of each pattern are
compared). Syntax: ``REGISTER QUERY q AS SELECT ... FROM STREAM <s> [RANGE 10s STEP 2s]
WHERE {...}``, also ``[RANGE 5s TUMBLING]``, ``[RANGE TRIPLES n]``, ``REGISTER STREAM q AS
CONSTRUCT ...``; ``f:timestamp(?s, ?p, ?o)`` is an ordinary function call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from lark import Token, v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import Duration, FromStream, Register, StreamQuery
from rsep.lang.build import Builder, Children, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue
from rsep.lang.dialects.stream import Registration, StreamBuilder, StreamPrinter
from rsep.lang.printer import Printer

_QUERY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


@v_args(meta=True)
class CSparqlBuilder(StreamBuilder):
    """The AST of ``csparql.lark``: ``REGISTER QUERY|STREAM name AS`` and ``FROM STREAM``."""

    def register_clause(self, meta: Meta, children: Children) -> Registration:
        """``REGISTER QUERY q [COMPUTED EVERY d] AS`` or ``REGISTER STREAM q AS`` (the
        constructed triples are streamed out)."""
        kind, name = children[0], children[1]
        every = children[2] if len(children) > 2 else None
        assert isinstance(kind, Token) and isinstance(name, Token)
        query = kind.type == "QUERY"
        return Registration(Register(str(name), query=query, every=every, pos=_pos(meta)))

    def computed_every(self, meta: Meta, children: Children) -> Duration:
        """``COMPUTED EVERY d``: the period of evaluation."""
        every = children[0]
        assert isinstance(every, Duration)
        return every

    def stream_clause(self, meta: Meta, children: Children) -> FromStream:
        """``FROM STREAM <s> [window]``: a window merged into the default graph."""
        return FromStream(children[1], children[2], pos=_pos(meta))


class CSparqlPrinter(StreamPrinter):
    """C-SPARQL text: ``REGISTER QUERY q AS``, ``FROM STREAM <s> [RANGE … STEP …]``."""

    count_keyword = "RANGE TRIPLES"

    def query_head(self, query: ast.Query) -> list[str]:
        """``REGISTER QUERY|STREAM name [COMPUTED EVERY d] AS``."""
        if not isinstance(query, StreamQuery):
            return []
        register = query.register
        if query.r2s is not None or register is None:
            raise ValueError("C-SPARQL has no R2S operator in its syntax (it streams Rstream)")
        if not isinstance(register.name, str) or not _QUERY_NAME.fullmatch(register.name):
            raise ValueError("C-SPARQL registers a query under a bare name")
        kind = "QUERY" if register.query else "STREAM"
        every = "" if register.every is None else f" COMPUTED EVERY {self.duration(register.every)}"
        return [f"REGISTER {kind} {register.name}{every} AS"]

    def dataset_from_stream(self, clause: FromStream) -> str:
        """``FROM STREAM <s> [window]``."""
        return f"FROM STREAM {self.name(clause.stream)} {self.window(clause.window)}"


class CSparql(StreamingDialect):
    """``REGISTER QUERY q AS SELECT ... FROM STREAM <s> [RANGE 1s STEP 1s] WHERE {...}``."""

    name = "csparql"
    title = "C-SPARQL"
    grammar = "csparql.lark"
    keywords = frozenset(
        {"REGISTER", "QUERY", "STREAM", "COMPUTED", "EVERY", "RANGE", "STEP", "TUMBLING"}
        | {"TRIPLES"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("REGISTER", then=r" ?(?:QUERY|STREAM) [A-Za-z_][\w-]* (?:AS|COMPUTED)\b"),
        keyword_cue("FROM STREAM", then=" ?<>"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "t0 is internal to the engine, not in the language (RSP-QL paper, 'Sliding "
            "window operator for C-SPARQL, CQELS and SPARQLstream'); CSR-Bench fixes "
            "firstt0 = 0 (csrbench/config/srbench-queries.properties)",
        ),
        "window.present": (
            "closing",
            "C-SPARQL reports every time a window closes (RSP-QL paper, Example 13): the "
            "content reported is the window that closes",
        ),
        "window.report": (
            "window_close,non_empty",
            "RSP-QL paper, comparison table and 'Evaluation time instants in C-SPARQL...'; "
            "csrbench/config/csparql.properties",
        ),
        "r2s": (
            "rstream",
            "C-SPARQL permits only Rstream (RSP-QL paper, 'Streaming operators'); "
            "csparql.properties output = rstream",
        ),
        "time_unit": ("ms", "C-SPARQL durations go down to ms (RANGE 500ms); rsep's clock"),
        "lateness": ("PT0S", "C-SPARQL consumes streams in arrival order (RSP-QL paper, Def. 9)"),
        "strategy": (
            "skip_till_any",
            "patterns over a window join any of its triples, adjacent or not (RSP-QL, Def. 18)",
        ),
        "selection": (
            "naive",
            "C-SPARQL's naive CEP picks the latest match of each pattern and compares their "
            "timestamps (RSEP-QL paper, Sect. 4.3, Eq. (9))",
        ),
        "consumption": (
            "none",
            "C-SPARQL has no consumption; windows evict (RSEP-QL paper, Sect. 4.4, Table 1)",
        ),
        "timestamps": ("point", "one timestamp per triple, read by f:timestamp (RSP-QL, Def. 9)"),
        "profile": ("csparql", "csrbench/config/csparql.properties"),
    }

    builder: ClassVar[type[Builder]] = CSparqlBuilder
    printer: ClassVar[type[Printer]] = CSparqlPrinter


DIALECT = CSparql()
