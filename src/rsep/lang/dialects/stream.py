"""Builder and printer of ``grammar/stream.lark``, the part every streaming dialect shares:
durations and time points, window specifications with their modifiers, ``PRAGMA``, and the
query with an optional registration (whose ``REGISTER`` clause each dialect writes its way).

The nodes are those of :mod:`rsep.lang.ast_stream`; docs/languages.md ("What all streaming
dialects share") has the syntax, and RSP-QL Semantics (003) Def. 13 (windows, t0), its
"Evaluation time instants" (report policies, after SECRET) and RSEP-QL (000) Sect. 3.1
(landmark and interval windows) the meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lark import Token, v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.ast_stream import (
    AllWindow,
    CountWindow,
    DateTime,
    Duration,
    IntervalWindow,
    LandmarkWindow,
    NowWindow,
    PastWindow,
    Pragma,
    PragmaCall,
    PragmaValue,
    PragmaWord,
    Register,
    ReportStrategy,
    StreamQuery,
    TimePoint,
    TimeWindow,
    Window,
    duration,
    duration_text,
    pragma_value_text,
)
from rsep.lang.build import Builder, Children, _Form, _pos, _token_pos
from rsep.lang.checks import QuerySemanticError
from rsep.lang.printer import Printer, quote_string
from rsep.rdf.time import ms_to_datetime

__all__ = ["Registration", "StreamBuilder", "StreamPrinter", "semantic_error"]


def semantic_error(message: str, where: ast.Position | Meta | Token | None) -> QuerySemanticError:
    """A :class:`QuerySemanticError` at a node's position, a rule's or a token's."""
    if isinstance(where, Token):
        return QuerySemanticError(message, where.line or 1, where.column or 1)
    if isinstance(where, Meta):
        if where.empty:
            return QuerySemanticError(message, 1, 1)
        return QuerySemanticError(message, where.line, where.column)
    if where is None:
        return QuerySemanticError(message, 1, 1)
    return QuerySemanticError(message, where.line, where.column)


@dataclass(frozen=True, slots=True)
class Registration:
    """What a dialect's ``register_clause`` gives ``query``: the registration and the R2S
    operator written with it (RSP-QL ``REGISTER RSTREAM <o> AS``), if any."""

    register: Register
    r2s: str | None = None


@dataclass(frozen=True, slots=True)
class _Modifier:
    """A window modifier (``T0 t`` or ``REPORT …``) before ``window_spec`` applies it."""

    name: str
    value: Any
    meta: Meta


@v_args(meta=True)
class StreamBuilder(Builder):
    """The AST of ``stream.lark``'s rules, and of a query with a registration."""

    # The query: prologue (registration prologue)? form values ------------------------------

    def query(self, meta: Meta, children: Children) -> ast.Query:
        """[2] Query, with a dialect's optional ``REGISTER … AS`` and the prologue after it
        (joined to the first: RSP-QL Def. 20-22 name the R2S operator, wherever written)."""
        prologue: list[ast.Declaration] = []
        registration: Registration | None = None
        form: _Form | None = None
        for child in children[:-1]:
            if isinstance(child, tuple):
                prologue.extend(child)
            elif isinstance(child, Registration):
                registration = child
            elif isinstance(child, _Form):
                form = child
        assert form is not None
        modifiers = dict(form.modifiers)
        r2s = registration.r2s if registration is not None else None
        written: tuple[str, ast.Position | None] | None = modifiers.pop("r2s", None)
        if written is not None:
            if r2s is not None and r2s != written[0]:
                raise semantic_error(
                    f"two R2S operators, {r2s.upper()} after REGISTER and "
                    f"{written[0].upper()} in the query form",
                    written[1],
                )
            r2s = written[0]
        fields: dict[str, Any] = {
            "prologue": tuple(prologue),
            "form": form.form,
            "dataset": form.dataset,
            "where": form.where,
            "values": children[-1],
            "pos": _pos(meta),
            **modifiers,
        }
        if registration is None and r2s is None:
            return self._plain_query(fields)
        register = registration.register if registration is not None else None
        return StreamQuery(register=register, r2s=r2s, **fields)

    def _plain_query(self, fields: dict[str, Any]) -> ast.Query:
        """A query without registration (a dialect may return its own kind of query)."""
        return ast.Query(**fields)

    # PRAGMA ------------------------------------------------------------------------------

    def pragma(self, meta: Meta, children: Children) -> Pragma:
        """``PRAGMA name = value, …`` (docs/languages.md, "Explicit operational parameters")."""
        name, *values = children
        built: list[PragmaValue] = []
        for value in values:
            if isinstance(value, Token):  # DECIMAL
                built.append(
                    ast.Literal(
                        str(value), ast.XSD_DECIMAL, written=str(value), pos=_token_pos(value)
                    )
                )
            elif isinstance(value, str):  # a string
                built.append(ast.Literal(value))
            else:
                built.append(value)
        return Pragma(str(name), tuple(built), pos=_pos(meta))

    def pragma_word(self, meta: Meta, children: Children) -> PragmaWord:
        """A word value (``latest``)."""
        return PragmaWord(str(children[0]), pos=_pos(meta))

    def pragma_call(self, meta: Meta, children: Children) -> PragmaCall:
        """``periodic(d)``."""
        return PragmaCall(str(children[0]), children[1], pos=_pos(meta))

    # Durations and time points -------------------------------------------------------------

    def duration(self, meta: Meta, children: Children) -> Duration:
        """A duration: ISO 8601, a number with a unit, or a count of the time unit."""
        return _duration(children[0])

    def time_point(self, meta: Meta, children: Children) -> TimePoint:
        """A time instant: a count of the time unit, a duration from the epoch, or an
        ``xsd:dateTime`` string (RSP-QL Def. 8)."""
        child = children[0]
        if isinstance(child, Token):
            return _duration(child)
        try:
            return DateTime.parse(child).replace(pos=_pos(meta))
        except ValueError:
            raise semantic_error(f"{quote_string(child)} is not an xsd:dateTime", meta) from None

    # Windows ---------------------------------------------------------------------------------

    def window_spec(self, meta: Meta, children: Children) -> Window:
        """``[size modifiers]``: the window with its ``T0`` and ``REPORT`` modifiers."""
        window, *modifiers = children
        assert isinstance(window, Window)
        given: dict[str, Any] = {}
        for modifier in modifiers:
            if modifier.name in given:
                keyword = "T0" if modifier.name == "t0" else "REPORT"
                raise semantic_error(f"{keyword} is given twice in one window", modifier.meta)
            given[modifier.name] = modifier.value
        return window.replace(**given, pos=_pos(meta))

    def time_window(self, meta: Meta, children: Children) -> TimeWindow:
        """``RANGE α [STEP|SLIDE β]`` (RSP-QL Def. 13)."""
        slide = children[1] if len(children) > 1 else None
        return TimeWindow(children[0], slide, pos=_pos(meta))

    def tumbling_window(self, meta: Meta, children: Children) -> TimeWindow:
        """C-SPARQL ``RANGE α TUMBLING``: the slide is the width."""
        return TimeWindow(children[0], children[0], pos=_pos(meta))

    def count_window(self, meta: Meta, children: Children) -> CountWindow:
        """``[RANGE] TRIPLES n``, ``ELEMENTS n STEP m``, ``ITEM n``: the last n items."""
        slide = int(children[1]) if len(children) > 1 else None
        return CountWindow(int(children[0]), slide, pos=_pos(meta))

    def now_window(self, meta: Meta, children: Children) -> NowWindow:
        """CQELS-QL ``NOW``."""
        return NowWindow(pos=_pos(meta))

    def all_window(self, meta: Meta, children: Children) -> AllWindow:
        """CQELS-QL ``ALL``."""
        return AllWindow(pos=_pos(meta))

    def landmark_window(self, meta: Meta, children: Children) -> LandmarkWindow:
        """RSEP-QL's landmark window W^λ (Sect. 3.1)."""
        return LandmarkWindow(pos=_pos(meta))

    def interval_window(self, meta: Meta, children: Children) -> IntervalWindow:
        """RSEP-QL's interval window W^⊔(t′, t″) (Sect. 3.1): ``FROM t′ TO t″``."""
        return IntervalWindow(children[0], children[1], pos=_pos(meta))

    def past_window(self, meta: Meta, children: Children) -> PastWindow:
        """W3C RSP CG ``FROM NOW-d TO NOW[-d] [STEP d]``."""
        start, *rest = children
        end = rest.pop(0)[0] if rest and isinstance(rest[0], tuple) else None
        slide = rest[0] if rest else None
        return PastWindow(start, end, slide, pos=_pos(meta))

    def past_end(self, meta: Meta, children: Children) -> tuple[Duration]:
        """``TO NOW - d`` of a past window."""
        return (children[0],)

    def window_t0(self, meta: Meta, children: Children) -> _Modifier:
        """``T0 t``: the window's origin t0 (RSP-QL Def. 13)."""
        return _Modifier("t0", children[0], meta)

    def window_report(self, meta: Meta, children: Children) -> _Modifier:
        """``REPORT s, …``: the window's report policy (RSP-QL, "Evaluation time instants")."""
        return _Modifier("report", tuple(children), meta)

    def report_item(self, meta: Meta, children: Children) -> ReportStrategy:
        """``CONTENT_CHANGE``, ``WINDOW_CLOSE``, ``NON_EMPTY`` or ``PERIODIC d`` (SECRET)."""
        name = str(children[0]).lower()
        period = children[1] if len(children) > 1 else None
        return ReportStrategy(name, period, pos=_pos(meta))


def _duration(token: Token) -> Duration:
    try:
        return duration(str(token)).replace(pos=_token_pos(token))
    except ValueError as error:
        raise semantic_error(str(error), token) from None


class StreamPrinter(Printer):
    """Text for ``stream.lark``'s nodes, and a query in hooks a dialect overrides: the
    ``REGISTER`` line (:meth:`query_head`), the query form (:meth:`query_form`), clauses after
    the form (:meth:`query_clauses`) and the WHERE clause (:meth:`query_where`)."""

    slide_keyword = "STEP"
    count_keyword = "TRIPLES"

    def query(self, query: ast.Query) -> str:
        """A whole query (SPARQL 1.1 Sec. 2, 16) with its streaming clauses."""
        lines = [self._method("declaration", d)(d) for d in query.prologue]
        lines.extend(self.query_head(query))
        lines.append(self.query_form(query))
        lines.extend(self.query_clauses(query))
        lines.extend(self._method("dataset", d)(d) for d in query.dataset)
        lines.extend(self.query_where(query))
        lines.extend(self._modifiers(query, 0))
        return "\n".join(lines) + "\n"

    def query_head(self, query: ast.Query) -> list[str]:
        """Lines before the query form: a dialect's ``REGISTER … AS``."""
        if isinstance(query, StreamQuery) and (query.register is not None or query.r2s):
            raise ValueError(f"{type(self).__name__} cannot print a registration or R2S")
        return []

    def query_form(self, query: ast.Query) -> str:
        """The query form (Sec. 16)."""
        return str(self._method("form", query.form)(query.form))

    def query_clauses(self, query: ast.Query) -> list[str]:
        """Clauses between the form and the dataset (SPAseq's WITHIN, PARTITION BY)."""
        return []

    def query_where(self, query: ast.Query) -> list[str]:
        """``WHERE { … }`` (Sec. 2.1, 5.2)."""
        return [] if query.where is None else ["WHERE " + self.group(query.where, 0)]

    # PRAGMA ------------------------------------------------------------------------------

    def declaration_pragma(self, pragma: Pragma) -> str:
        """``PRAGMA name = value, …``."""
        return f"PRAGMA {pragma.name} = " + ", ".join(self.pragma_value(v) for v in pragma.values)

    def pragma_value(self, value: PragmaValue) -> str:
        """One PRAGMA value; terms are printed like any term (prefixed names where they fit)."""
        if isinstance(value, Duration | PragmaWord | PragmaCall):
            return pragma_value_text(value)
        return self.expr(value, 0)

    # Durations, time points, windows ----------------------------------------------------------

    def duration(self, duration: Duration) -> str:
        """A duration, as written when that reads back the same (``ast_stream``)."""
        return duration_text(duration)

    def time_point(self, point: TimePoint) -> str:
        """A duration from the epoch, or a dateTime string."""
        if isinstance(point, Duration):
            return duration_text(point)
        lexical = point.lexical
        if lexical is None or DateTime.parse(lexical) != point:
            lexical = ms_to_datetime(point.ms)
        return quote_string(lexical)

    def window(self, window: Window) -> str:
        """``[size modifiers]`` (docs/languages.md, "Windows")."""
        parts = [self.window_size(window)]
        if window.t0 is not None:
            parts.append("T0 " + self.time_point(window.t0))
        if window.report:
            parts.append("REPORT " + ", ".join(self.report(r) for r in window.report))
        return "[" + " ".join(parts) + "]"

    def report(self, strategy: ReportStrategy) -> str:
        """One report strategy."""
        if strategy.period is not None:
            return "PERIODIC " + duration_text(strategy.period)
        return strategy.name.upper()

    def window_size(self, window: Window) -> str:
        """The size of a window: its kind and its parameters."""
        slide = f" {self.slide_keyword} "
        if isinstance(window, TimeWindow):
            text = "RANGE " + duration_text(window.width)
            return text if window.slide is None else text + slide + duration_text(window.slide)
        if isinstance(window, CountWindow):
            text = f"{self.count_keyword} {window.size}"
            return text if window.slide is None else f"{text}{slide}{window.slide}"
        if isinstance(window, IntervalWindow):
            return f"FROM {self.time_point(window.start)} TO {self.time_point(window.end)}"
        if isinstance(window, PastWindow):
            text = f"FROM NOW-{duration_text(window.start)} TO NOW"
            if window.end is not None:
                text += "-" + duration_text(window.end)
            return text if window.slide is None else text + slide + duration_text(window.slide)
        keywords = {NowWindow: "NOW", AllWindow: "ALL", LandmarkWindow: "LANDMARK"}
        keyword = keywords.get(type(window))
        if keyword is None:
            raise NotImplementedError(f"no window printer for {type(window).__name__}")
        return keyword

    def name(self, name: ast.Var | ast.Iri | str) -> str:
        """A window, stream or query name: a variable, an IRI, or a bare word."""
        return name if isinstance(name, str) else self.expr(name, 0)

    def names(self, names: Sequence[ast.Var | ast.Iri | str]) -> str:
        """Names separated by commas."""
        return ", ".join(self.name(n) for n in names)
