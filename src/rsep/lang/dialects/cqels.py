"""CQELS-QL (``grammar/cqels.lark``): windows over streams as graph patterns.

Paper: RSP-QL Semantics (seed 003), section "Explaining heterogeneity of RSP systems": a
CQELS window is a named time-varying graph reached with ``STREAM``, analogous to ``GRAPH``,
never merged into the default graph; CQELS evaluates on content change and streams out with
Istream only. Syntax: ``STREAM <s> [RANGE 3s] { ... }`` inside WHERE, with ``[RANGE 3s SLIDE
1s]``, ``[NOW]``, ``[ALL]``, ``[TRIPLES n]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from lark import v_args
from lark.tree import Meta

from rsep.lang.ast_stream import StreamPattern
from rsep.lang.build import Builder, Children, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, cue
from rsep.lang.dialects.stream import StreamBuilder, StreamPrinter
from rsep.lang.printer import Printer


@v_args(meta=True)
class CqelsBuilder(StreamBuilder):
    """The AST of ``cqels.lark``: ``STREAM s [window] { … }``."""

    def stream_graph_pattern(self, meta: Meta, children: Children) -> StreamPattern:
        """``STREAM s [window] { … }``: a pattern over a window's content, like GRAPH."""
        return StreamPattern(children[0], children[1], children[2], pos=_pos(meta))


class CqelsPrinter(StreamPrinter):
    """CQELS-QL text: ``STREAM <s> [RANGE 3s SLIDE 1s] { … }``."""

    slide_keyword = "SLIDE"

    def pattern_stream_pattern(self, pattern: StreamPattern, depth: int) -> str:
        """``STREAM s [window] { … }``."""
        window = self.window(pattern.window)
        group = self.group(pattern.pattern, depth)
        return f"STREAM {self.name(pattern.stream)} {window} {group}"


class Cqels(StreamingDialect):
    """``SELECT ... WHERE { STREAM <s> [RANGE 3s] { ... } }``."""

    name = "cqels"
    title = "CQELS-QL"
    grammar = "cqels.lark"
    keywords = frozenset({"STREAM", "RANGE", "SLIDE", "NOW", "ALL", "TRIPLES"})
    # STREAM <s> [ ... ], but not C-SPARQL's FROM STREAM <s> [ ... ]
    cues: ClassVar[Cues] = (
        cue(r"(?<![\w:?$-])(?<!FROM )STREAM ?(?:<>|[?$]\w+|[\w.-]*:[\w.-]*) ?\["),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "t0 is internal to the engine (RSP-QL paper, 'Sliding window operator for "
            "C-SPARQL, CQELS and SPARQLstream'); CSR-Bench fixes firstt0 = 0",
        ),
        "window.present": (
            "closing",
            "CQELS re-evaluates as items arrive over the last α time units, the window "
            "(now − α, now] (RSP-QL paper, Example 13)",
        ),
        "window.report": (
            "content_change,non_empty",
            "CQELS implements Content-Change (RSP-QL paper, comparison table and 'Evaluation "
            "time instants'); csrbench/config/cqels.properties adds nonemptycontent",
        ),
        "r2s": (
            "istream",
            "CQELS admits only Istream (RSP-QL paper, 'Streaming operators'); "
            "cqels.properties output = istream",
        ),
        "time_unit": ("ms", "CQELS durations go down to ms ([RANGE 3000ms]); rsep's clock"),
        "lateness": ("PT0S", "CQELS consumes streams in arrival order (RSP-QL paper, Def. 9)"),
        "strategy": (
            "skip_till_any",
            "patterns over a window join any of its triples, adjacent or not (RSP-QL, Def. 18)",
        ),
        "selection": ("unrestricted", "every solution over the window is kept (RSP-QL, Def. 16)"),
        "consumption": ("none", "windows evict; nothing is consumed (RSP-QL, Def. 24)"),
        "timestamps": ("point", "one timestamp per triple (RSP-QL, Def. 9)"),
        "profile": ("cqels", "csrbench/config/cqels.properties"),
    }

    builder: ClassVar[type[Builder]] = CqelsBuilder
    printer: ClassVar[type[Printer]] = CqelsPrinter


DIALECT = Cqels()
