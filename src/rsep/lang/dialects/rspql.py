"""RSP-QL as the W3C RSP Community Group and RSP4J write it (``grammar/rspql.lark``).

Paper: RSP-QL Semantics, a Unifying Query Model to Explain Heterogeneity of RDF Stream
Processing Systems (seed 003). The query is (SE, SDS, ET, QF): named time-based sliding
windows (w, W(S)) with width α, slide β and origin t0 (Definitions 13 and 14), the WINDOW
graph pattern over a window's content, report policies that fix the evaluation times ET
("Evaluation time instants"), and the R2S operators RStream, IStream, DStream (Definitions
20-22) named after REGISTER.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from lark import Token, Tree, v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import NamedWindow, Register, StreamQuery, Window, WindowPattern
from rsep.lang.build import Builder, Children, _Form, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue
from rsep.lang.dialects.stream import Registration, StreamBuilder, StreamPrinter, semantic_error
from rsep.lang.printer import Printer


@dataclass(frozen=True, slots=True)
class _R2s:
    """An R2S operator as written (RSP-QL Def. 20-22), before the query takes it."""

    name: str
    pos: ast.Position | None


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class _SelectR2s(ast.Select):
    """A SELECT clause written with an R2S operator (W3C RSP CG draft), before the query
    takes the operator and keeps the plain :class:`ast.Select`."""

    r2s: _R2s

    def plain(self) -> ast.Select:
        """The SELECT clause without its R2S operator."""
        return ast.Select(self.projection, self.distinct, self.reduced, pos=self.pos)


@dataclass(frozen=True, slots=True)
class _StreamRef:
    """The stream of a window declaration (``ON [STREAM] s``)."""

    stream: ast.Var | ast.Iri


@v_args(meta=True)
class RspQlBuilder(StreamBuilder):
    """The AST of ``rspql.lark``: registration, named windows, ``WINDOW`` patterns."""

    def register_clause(self, meta: Meta, children: Children) -> Registration:
        """``REGISTER RSTREAM|ISTREAM|DSTREAM name AS`` (RSP4J) or ``REGISTER STREAM name
        AS`` (W3C RSP CG draft): the output stream and the R2S operator (Def. 20-22)."""
        r2s = children[0].name if isinstance(children[0], _R2s) else None
        return Registration(Register(children[-1], pos=_pos(meta)), r2s)

    def r2s(self, meta: Meta, children: Children) -> _R2s:
        """RSTREAM, ISTREAM or DSTREAM (Def. 20-22)."""
        return _R2s(str(children[0]).lower(), _pos(meta))

    def select_clause(self, meta: Meta, children: Children) -> ast.Select:
        """``SELECT r2s? …``: the SPARQL clause, with the R2S operator set aside."""
        r2s = [c for c in children if isinstance(c, _R2s)]
        select = super().select_clause(meta, [c for c in children if not isinstance(c, _R2s)])
        if not r2s:
            return select
        return _SelectR2s(
            projection=select.projection,
            distinct=select.distinct,
            reduced=select.reduced,
            r2s=r2s[0],
            pos=select.pos,
        )

    def select_query(self, meta: Meta, children: Children) -> _Form:
        """[7] SelectQuery, the R2S operator of its clause kept for ``query``."""
        clause = children[0]
        if not isinstance(clause, _SelectR2s):
            return super().select_query(meta, children)
        form = super().select_query(meta, [clause.plain(), *children[1:]])
        form.modifiers["r2s"] = (clause.r2s.name, clause.r2s.pos)
        return form

    def construct_query(self, meta: Meta, children: Children) -> _Form:
        """[10] ConstructQuery with ``CONSTRUCT r2s? …``."""
        r2s = [c for c in children if isinstance(c, _R2s)]
        rest = [c for c in children if not isinstance(c, _R2s)]
        form = super().construct_query(meta, rest)
        if r2s:
            form.modifiers["r2s"] = (r2s[0].name, r2s[0].pos)
        return form

    def sub_select(self, meta: Meta, children: Children) -> ast.SubSelect:
        """[8] SubSelect: an R2S operator streams a query's answers out, so only the
        outer query has one (Def. 20-22)."""
        clause = children[0]
        if isinstance(clause, _SelectR2s):
            raise semantic_error("a sub-select has no R2S operator", clause.r2s.pos)
        return super().sub_select(meta, children)

    def window_clause(self, meta: Meta, children: Children) -> NamedWindow:
        """``FROM NAMED WINDOW w ON [STREAM] s [window]`` or ``… ON s [window] AS w``: the
        named window (w, W(S)) (Def. 14)."""
        stream = next(c for c in children if isinstance(c, _StreamRef))
        window = next(c for c in children if isinstance(c, Window))
        name = next(c for c in children if isinstance(c, ast.Var | ast.Iri))
        return NamedWindow(name, stream.stream, window, pos=_pos(meta))

    def window_name(self, meta: Meta, children: Children) -> ast.Var | ast.Iri:
        """The name w of a named window."""
        name = children[0]
        assert isinstance(name, ast.Var | ast.Iri)
        return name

    def stream_ref(self, meta: Meta, children: Children) -> _StreamRef:
        """The stream S of a named window (Def. 14)."""
        return _StreamRef(children[-1])

    def window_graph_pattern(self, meta: Meta, children: Children) -> WindowPattern:
        """``WINDOW w { … }``: a pattern over the window's content ("RSP-QL dataset")."""
        return WindowPattern(children[0], children[1], pos=_pos(meta))


class RspQlPrinter(StreamPrinter):
    """RSP-QL text: ``REGISTER r2s <out> AS``, named windows, ``WINDOW`` patterns."""

    count_keyword = "ELEMENTS"

    def query_head(self, query: ast.Query) -> list[str]:
        """``REGISTER RSTREAM <out> AS``, or ``REGISTER STREAM <out> AS`` without R2S."""
        if not isinstance(query, StreamQuery) or query.register is None:
            return []
        register = query.register
        if isinstance(register.name, str) or register.query or register.every is not None:
            raise ValueError("RSP-QL registers a stream named by an IRI or a variable")
        operator = (query.r2s or "stream").upper()
        return [f"REGISTER {operator} {self.name(register.name)} AS"]

    def query_form(self, query: ast.Query) -> str:
        """The form, with ``SELECT r2s`` / ``CONSTRUCT r2s`` when nothing is registered."""
        text = super().query_form(query)
        if not isinstance(query, StreamQuery) or query.register is not None or not query.r2s:
            return text
        keyword = "SELECT" if isinstance(query.form, ast.Select) else "CONSTRUCT"
        if not isinstance(query.form, ast.Select | ast.Construct):
            raise ValueError("an R2S operator without REGISTER goes with SELECT or CONSTRUCT")
        return f"{keyword} {query.r2s.upper()}{text[len(keyword) :]}"

    def dataset_named_window(self, clause: NamedWindow) -> str:
        """``FROM NAMED WINDOW w ON s [window]`` (Def. 14)."""
        name, stream = self.name(clause.name), self.name(clause.stream)
        return f"FROM NAMED WINDOW {name} ON {stream} {self.window(clause.window)}"

    def pattern_window_pattern(self, pattern: WindowPattern, depth: int) -> str:
        """``WINDOW w { … }``."""
        return f"WINDOW {self.name(pattern.name)} {self.group(pattern.pattern, depth)}"


class RspQl(StreamingDialect):
    """``REGISTER RSTREAM <out> AS SELECT ... FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP
    PT2S] WHERE { WINDOW <w> { ... } }``."""

    name = "rspql"
    title = "RSP-QL"
    grammar = "rspql.lark"
    keywords = frozenset(
        {"REGISTER", "RSTREAM", "ISTREAM", "DSTREAM", "STREAM", "WINDOW", "ON", "RANGE", "STEP"}
        | {"ELEMENTS", "ITEM"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("REGISTER", then=" ?(?:RSTREAM|ISTREAM|DSTREAM)(?![\\w-])"),
        keyword_cue("REGISTER STREAM", then=" ?(?:<>|[?$]|[\\w.-]*:)"),
        keyword_cue("FROM NAMED WINDOW"),
        keyword_cue("WINDOW", then=" ?(?:<>|[?$][\\w]+|[\\w.-]*:[\\w.-]*) ?\\{"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "Def. 13 makes t0 a window parameter; CSR-Bench runs every query with "
            "window.firstt0 = 0 (csrbench/config/srbench-queries.properties)",
        ),
        "window.present": (
            "closing",
            "the present window as Examples 7 and 10 read it: the window that closes at or "
            "next after now, read up to now (the formula after Def. 13 is garbled; its prose "
            "reading, latest, gives Q^ex no answer: docs/semantics.md, items 1 and 18)",
        ),
        "window.report": (
            "window_close,non_empty",
            "the policy of the paper's query Q^ex, P = WC ∧ NC (Example 10), also RSP4J's "
            "default (csrbench/aligned/csparqlsetup.properties)",
        ),
        "r2s": ("rstream", "Q^ex streams its answers out with Rstream (Example 10)"),
        "time_unit": (
            "ms",
            "the paper's instants are unit-less; ISO 8601 durations are exact and rsep's "
            "clock counts milliseconds (DESIGN.md, Data model)",
        ),
        "lateness": (
            "PT0S",
            "an RDF stream is in non-decreasing time order (Def. 9): no item arrives late",
        ),
        "strategy": (
            "skip_till_any",
            "a BGP is evaluated over the window's graph (Def. 18), so it joins any items "
            "of the window, adjacent or not",
        ),
        "selection": (
            "unrestricted",
            "every solution mapping over the window is kept (Def. 16 and 19, JOIN)",
        ),
        "consumption": (
            "none",
            "each evaluation reads the whole present window; nothing is consumed (Def. 24)",
        ),
        "timestamps": ("point", "a timestamped RDF statement carries one time instant (Def. 9)"),
        "profile": (
            "none",
            "RSP-QL's own definitions: windows (o, c] (Def. 12-13), no engine's conventions; "
            "PRAGMA profile or --profile picks C-SPARQL's, CQELS's or SPARQLstream's",
        ),
    }

    builder: ClassVar[type[Builder]] = RspQlBuilder
    printer: ClassVar[type[Printer]] = RspQlPrinter

    def sparql_tree(self, tree: Tree[Token]) -> Tree[Token]:
        """The R2S operator of ``SELECT ISTREAM …`` is no projection (SPARQL 1.1, 18.2.1)."""
        for clause in tree.find_data("select_clause"):
            clause.children = [
                c for c in clause.children if not (isinstance(c, Tree) and c.data == "r2s")
            ]
        return tree


DIALECT = RspQl()
