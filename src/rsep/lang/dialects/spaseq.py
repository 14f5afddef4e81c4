"""SPAseq (``grammar/spaseq.lark``): sequences of graph-pattern matches over named streams.

Paper: A Query Language for Semantic Complex Event Processing: Syntax, Semantics and
Implementation (seed 004). Sect. 4.2, Definition 4 and Query 1: ``SELECT ... WITHIN 30
MINUTES FROM STREAM S1 <iri> WHERE { SEQ (A; B+, C) DEFINE GPM A ON S1 {...} ... }`` with
the selection strategies ',' (strict contiguity), ';' (skip till next) and ':' (skip till
any) written per operator, Kleene '+', conjunction '&', disjunction '|', and (Appendix B)
negation '!' and optional '?'; GPMs may enrich events with ``GRAPH <kb> {...}``. The engine
grammar (shared/data/spaseq/grammar) writes ``WHERE SEQ (...) { DEFINE GPM ... }`` and
``PARTITION BY (?x)``; both forms are read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lark import v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import Duration, duration_text
from rsep.lang.build import Builder, Children, _Form, _pos
from rsep.lang.dialects import Cues, Default, StreamingDialect, keyword_cue
from rsep.lang.dialects.stream import StreamBuilder, StreamPrinter
from rsep.lang.printer import Printer

STRATEGIES = {",": "strict", ";": "skip_till_next", ":": "skip_till_any"}
"""The event selection strategies of the sequence operators (Sect. 4.2.2, 5.3)."""
_SYMBOLS = {name: symbol for symbol, name in STRATEGIES.items()}
_UNITS = {"SECONDS": 1000, "MINUTES": 60_000, "HOURS": 3_600_000}
_WITHIN = re.compile(r"([0-9]+) (SECONDS|MINUTES|HOURS)", re.I)


# Nodes (Definition 4, Sect. 4.2) ----------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SpaseqQuery(ast.Query):
    """Q = (V, ω, SeqExp) (Definition 4): ``within`` is ω, the longest duration of a match
    (Sect. 4.2.4); ``partition_by`` the engine's ``PARTITION BY`` keys. The WHERE group holds
    the :class:`SeqClause` and the :class:`DefineGpm` definitions, the paper's layout
    (``WHERE { SEQ (…) DEFINE GPM … }``, Query 1); the streams are :class:`NamedStream`
    dataset clauses."""

    within: Duration
    partition_by: tuple[ast.Var, ...] = ()

    @property
    def seq(self) -> SeqExpr | None:
        """The sequence expression of the query."""
        elements = self.where.elements if isinstance(self.where, ast.GroupPattern) else ()
        return next((e.expr for e in elements if isinstance(e, SeqClause)), None)

    @property
    def gpms(self) -> tuple[DefineGpm, ...]:
        """The GPM definitions, in order."""
        elements = self.where.elements if isinstance(self.where, ast.GroupPattern) else ()
        return tuple(e for e in elements if isinstance(e, DefineGpm))


@dataclass(frozen=True, slots=True, eq=False)
class NamedStream(ast.DatasetClause):
    """``FROM STREAM S1 <iri>``: the named stream (u, S) (Sect. 4.1, Definition 2)."""

    name: str
    iri: ast.Iri


@dataclass(frozen=True, slots=True, eq=False)
class StreamName(ast.Node):
    """A stream name in ``DEFINE GPM A ON S1``."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class SeqExpr(ast.Node):
    """A sequence expression SeqExp (Definition 4, Appendix B)."""


@dataclass(frozen=True, slots=True, eq=False)
class GpmRef(SeqExpr):
    """A GPM named in a sequence expression (``A``)."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Sequence(SeqExpr):
    """``SeqExp s Atom``: ``right`` after ``left`` under the event selection strategy
    ``strategy`` (``strict`` for ',', ``skip_till_next`` for ';', ``skip_till_any`` for
    ':', Sect. 4.2.2); left-associative."""

    strategy: str
    left: SeqExpr
    right: SeqExpr

    def __post_init__(self) -> None:
        if self.strategy not in _SYMBOLS:
            raise ValueError(f"not an event selection strategy: {self.strategy!r}")


@dataclass(frozen=True, slots=True, eq=False)
class Conjunction(SeqExpr):
    """``A & B & …``: the events happen at the same time (Sect. 4.2.3, 5.2)."""

    operands: tuple[SeqExpr, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("a conjunction has two operands or more")


@dataclass(frozen=True, slots=True, eq=False)
class Disjunction(SeqExpr):
    """``A | B | …``: at least one of the events happens (Sect. 4.2.3, 5.2)."""

    operands: tuple[SeqExpr, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("a disjunction has two operands or more")


@dataclass(frozen=True, slots=True, eq=False)
class KleenePlus(SeqExpr):
    """``A+``: one or more events of the kind (Sect. 4.2.1, 5.4)."""

    operand: SeqExpr


@dataclass(frozen=True, slots=True, eq=False)
class OptionalEvent(SeqExpr):
    """``A?``: zero or one such event (Appendix B)."""

    operand: SeqExpr


@dataclass(frozen=True, slots=True, eq=False)
class NegatedEvent(SeqExpr):
    """``!A`` (also written ``A!``): no such event (Appendix B)."""

    operand: SeqExpr


@dataclass(frozen=True, slots=True, eq=False)
class SeqClause(ast.Pattern):
    """``SEQ (SeqExp)`` in the WHERE clause (Definition 4, Query 1)."""

    expr: SeqExpr


@dataclass(frozen=True, slots=True, eq=False)
class DefineGpm(ast.Pattern):
    """``DEFINE GPM A ON S1[, S2] { P }``: the graph pattern matching expression (u, P),
    named (Definition 4); ``GRAPH <kb> { … }`` inside it reads a knowledge base. The engine
    grammar adds GROUP BY and HAVING."""

    name: str
    streams: tuple[StreamName, ...]
    pattern: ast.Group
    group_by: tuple[ast.Expr | ast.Alias, ...] = field(default=(), kw_only=True)
    having: tuple[ast.Expr, ...] = field(default=(), kw_only=True)


# Precedence of sequence expressions: higher binds tighter.
_SEQUENCE, _DISJUNCTION, _CONJUNCTION, _UNARY, _PRIMARY = range(1, 6)


@v_args(meta=True)
class SpaseqBuilder(StreamBuilder):
    """The AST of ``spaseq.lark``."""

    def _plain_query(self, fields: dict[str, Any]) -> ast.Query:
        if "within" in fields:
            return SpaseqQuery(**fields)
        return super()._plain_query(fields)

    def spaseq_query(self, meta: Meta, children: Children) -> _Form:
        """Definition 4: form, WITHIN ω, PARTITION BY, FROM STREAM, WHERE."""
        form, within, *rest = children
        partition: list[ast.Var] = []
        dataset: list[ast.DatasetClause] = []
        where: ast.Group | None = None
        for child in rest[:-1]:
            if isinstance(child, tuple):
                partition.extend(child)
            elif isinstance(child, ast.DatasetClause):
                dataset.append(child)
            else:
                where = child
        modifiers = {**rest[-1], "within": within, "partition_by": tuple(partition)}
        return _Form(form, tuple(dataset), where, modifiers)

    def spaseq_construct(self, meta: Meta, children: Children) -> ast.Construct:
        """``CONSTRUCT { template }`` of the engine grammar."""
        construct = children[0]
        assert isinstance(construct, ast.Construct)
        return construct

    def within_clause(self, meta: Meta, children: Children) -> Duration:
        """``WITHIN n SECONDS|MINUTES|HOURS`` or ``WITHIN duration``: ω (Definition 4)."""
        if len(children) == 1:
            duration = children[0]
            assert isinstance(duration, Duration)
            return duration
        count, unit = children
        written = f"{count} {str(unit).upper()}"
        return Duration(int(count) * _UNITS[str(unit).upper()], written=written, pos=_pos(meta))

    def partition_clause(self, meta: Meta, children: Children) -> tuple[ast.Var, ...]:
        """``PARTITION BY ?x`` or ``PARTITION BY (?x, ?y)``."""
        return tuple(children)

    def stream_clause(self, meta: Meta, children: Children) -> NamedStream:
        """``FROM STREAM S1 <iri>``."""
        name, iri = children
        return NamedStream(name.name, iri, pos=_pos(meta))

    def stream_name(self, meta: Meta, children: Children) -> StreamName:
        """A stream name."""
        return StreamName(str(children[0]), pos=_pos(meta))

    def gpm_name(self, meta: Meta, children: Children) -> GpmRef:
        """A GPM name."""
        return GpmRef(str(children[0]), pos=_pos(meta))

    def spaseq_where(self, meta: Meta, children: Children) -> ast.GroupPattern:
        """``WHERE SEQ (…) { DEFINE GPM … }`` (engine) or ``WHERE { SEQ (…) DEFINE GPM … }``
        (paper): the same group."""
        return ast.GroupPattern(tuple(children), pos=_pos(meta))

    def seq_clause(self, meta: Meta, children: Children) -> SeqClause:
        """``SEQ (SeqExp)``."""
        return SeqClause(children[0], pos=_pos(meta))

    def seq_expression(self, meta: Meta, children: Children) -> SeqExpr:
        """``a s b s c …``, left to right (Definition 4: SeqExp ::= SeqExp s Atom)."""
        result: SeqExpr = children[0]
        for strategy, right in zip(children[1::2], children[2::2], strict=True):
            pos = _pos(meta)
            if result.pos is not None and right.pos is not None:
                pos = ast.Position(
                    result.pos.line, result.pos.column, right.pos.end_line, right.pos.end_column
                )
            result = Sequence(strategy, result, right, pos=pos)
        return result

    def seq_strategy(self, meta: Meta, children: Children) -> str:
        """',' strict, ';' skip till next, ':' skip till any (Sect. 4.2.2)."""
        return STRATEGIES[str(children[0])]

    def seq_disjunction(self, meta: Meta, children: Children) -> Disjunction:
        """``A | B``."""
        return Disjunction(tuple(children), pos=_pos(meta))

    def seq_conjunction(self, meta: Meta, children: Children) -> Conjunction:
        """``A & B``."""
        return Conjunction(tuple(children), pos=_pos(meta))

    def kleene_plus(self, meta: Meta, children: Children) -> KleenePlus:
        """``A+``."""
        return KleenePlus(children[0], pos=_pos(meta))

    def optional_event(self, meta: Meta, children: Children) -> OptionalEvent:
        """``A?``."""
        return OptionalEvent(children[0], pos=_pos(meta))

    def negated_event(self, meta: Meta, children: Children) -> NegatedEvent:
        """``!A`` or ``A!``."""
        return NegatedEvent(children[0], pos=_pos(meta))

    def gpm_definition(self, meta: Meta, children: Children) -> DefineGpm:
        """``DEFINE GPM A ON S1, S2 { … } [GROUP BY …] [HAVING …]``."""
        name, *rest = children
        streams = tuple(c for c in rest if isinstance(c, StreamName))
        pattern = next(c for c in rest if isinstance(c, ast.GroupPattern | ast.SubSelect))
        clauses: dict[str, Any] = dict(c for c in rest if isinstance(c, tuple))
        return DefineGpm(name.name, streams, pattern, pos=_pos(meta), **clauses)


class SpaseqPrinter(StreamPrinter):
    """SPAseq text in the paper's layout (Query 1)."""

    def query_clauses(self, query: ast.Query) -> list[str]:
        """``WITHIN ω`` and ``PARTITION BY (…)``."""
        if not isinstance(query, SpaseqQuery):
            return []
        lines = ["WITHIN " + self.within(query.within)]
        if query.partition_by:
            keys = ", ".join(self.expr(v, 0) for v in query.partition_by)
            lines.append(f"PARTITION BY ({keys})")
        return lines

    def within(self, duration: Duration) -> str:
        """ω as written (``30 MINUTES``, ``PT30M``), else in the largest unit word."""
        written = duration.written
        match = _WITHIN.fullmatch(written or "")
        if match is not None and not duration.counted:
            value = int(match.group(1)) * _UNITS[match.group(2).upper()]
            if value == duration.value:
                return written or ""
        if duration.counted:
            return duration_text(duration)
        for unit in ("HOURS", "MINUTES", "SECONDS"):
            if duration.value % _UNITS[unit] == 0:
                return f"{duration.value // _UNITS[unit]} {unit}"
        return duration_text(duration)

    def dataset_named_stream(self, clause: NamedStream) -> str:
        """``FROM STREAM S1 <iri>``."""
        return f"FROM STREAM {clause.name} {self.expr(clause.iri, 0)}"

    def pattern_seq_clause(self, clause: SeqClause, depth: int) -> str:
        """``SEQ (SeqExp)``."""
        return f"SEQ ({self.seq(clause.expr)})"

    def pattern_define_gpm(self, gpm: DefineGpm, depth: int) -> str:
        """``DEFINE GPM A ON S1 { … }`` and its GROUP BY and HAVING."""
        streams = ", ".join(s.name for s in gpm.streams)
        text = f"DEFINE GPM {gpm.name} ON {streams} {self.group(gpm.pattern, depth)}"
        if gpm.group_by:
            text += " GROUP BY " + " ".join(self.group_condition(c, depth) for c in gpm.group_by)
        if gpm.having:
            text += " HAVING " + " ".join(self.constraint(c, depth) for c in gpm.having)
        return text

    def seq(self, expr: SeqExpr, minimum: int = 0) -> str:
        """A sequence expression, in parentheses where precedence requires them."""
        level, text = self._seq(expr)
        return f"({text})" if level < minimum else text

    def _seq(self, expr: SeqExpr) -> tuple[int, str]:
        if isinstance(expr, GpmRef):
            return _PRIMARY, expr.name
        if isinstance(expr, Sequence):
            left, right = self.seq(expr.left, _SEQUENCE), self.seq(expr.right, _DISJUNCTION)
            symbol = _SYMBOLS[expr.strategy]
            return _SEQUENCE, f"{left}{' : ' if symbol == ':' else symbol + ' '}{right}"
        if isinstance(expr, Disjunction):
            return _DISJUNCTION, " | ".join(self.seq(o, _CONJUNCTION) for o in expr.operands)
        if isinstance(expr, Conjunction):
            return _CONJUNCTION, " & ".join(self.seq(o, _UNARY) for o in expr.operands)
        if isinstance(expr, KleenePlus):
            return _UNARY, self.seq(expr.operand, _PRIMARY) + "+"
        if isinstance(expr, OptionalEvent):
            return _UNARY, self.seq(expr.operand, _PRIMARY) + "?"
        if isinstance(expr, NegatedEvent):
            return _UNARY, "!" + self.seq(expr.operand, _PRIMARY)
        raise NotImplementedError(f"no sequence printer for {type(expr).__name__}")


class Spaseq(StreamingDialect):
    """``SELECT ... WITHIN 10 SECONDS FROM STREAM S1 <s> WHERE SEQ (A; B) { DEFINE GPM ... }``."""

    name = "spaseq"
    title = "SPAseq"
    grammar = "spaseq.lark"
    keywords = frozenset(
        {"WITHIN", "SECONDS", "MINUTES", "HOURS", "PARTITION", "BY", "STREAM", "SEQ"}
        | {"DEFINE", "GPM", "ON"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("DEFINE GPM"),
        keyword_cue("WITHIN", then=r" \d+ (?:SECONDS|MINUTES|HOURS)\b"),
        keyword_cue("FROM STREAM", then=r" [A-Za-z_]\w* ?<>"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        "window.t0": (
            "0",
            "WITHIN bounds each match, not a window over the stream (Definition 4, ω); no "
            "origin is involved",
        ),
        "window.present": (
            "latest",
            "a match's events lie within ω of each other (Sect. 4.2.4, Definition 16); there "
            "is no window to choose",
        ),
        "window.report": (
            "content_change",
            "a match is output when its last event arrives (Sect. 6, the NFA's final state)",
        ),
        "r2s": ("istream", "each match is reported once, when it completes (Sect. 6)"),
        "time_unit": (
            "ms",
            "WITHIN counts SECONDS, MINUTES or HOURS; event timestamps are rsep's clock",
        ),
        "lateness": ("PT0S", "a graph event stream is read in timestamp order (Definition 2)"),
        "strategy": (
            "per_operator",
            "each operator names its own: ',' strict, ';' skip till next, ':' skip till any "
            "(Sect. 4.2.2 and 5.3)",
        ),
        "selection": (
            "unrestricted",
            "which events a match takes is fixed by the operators' strategies (Sect. 5.3)",
        ),
        "consumption": (
            "none",
            "an event may take part in several matches (Sect. 6, the NFA runs share events)",
        ),
        "timestamps": ("point", "an RDF graph event is a pair (τ, G) (Definition 1)"),
        "profile": (
            "cqels",
            "event-driven output with Istream is the CQELS engine profile "
            "(csrbench/config/cqels.properties)",
        ),
    }

    builder: ClassVar[type[Builder]] = SpaseqBuilder
    printer: ClassVar[type[Printer]] = SpaseqPrinter


DIALECT = Spaseq()
