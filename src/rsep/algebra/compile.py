"""Compile a query's AST (``rsep.lang``) into its logical plan (:class:`~rsep.algebra.plan.Plan`).

One function per layer (STYLE.md): :func:`compile_query` takes the checked AST of any of the
seven dialects and gives one plan, in which every operational choice is a parameter with its
value and where the value came from (DESIGN.md, "The plan makes hidden choices explicit").

**Parameters, in layers** (docs/languages.md, "How parameters are layered"), weakest first:
the built-in default (``Source.BUILT_IN``), the dialect's default (``DIALECT_DEFAULT``), the
engine profile (``PROFILE``: the dialect's default profile, or the one ``--profile``, ``--set
profile=…`` or ``PRAGMA profile`` names), the query text (``QUERY_TEXT``: ``PRAGMA name =
value``, an R2S operator written in the query, C-SPARQL's ``COMPUTED EVERY``) and the command
line (``COMMAND_LINE``: ``--set name=value``). A window's own ``T0`` and ``REPORT`` are part
of that window (its ``TimeWindow.t0``, its ``NamedWindow.report``) and beat the parameters for
it. Values are checked against the one registry of allowed values,
:data:`rsep.algebra.params.PARAMETERS`: a bad ``PRAGMA`` value is a
:class:`~rsep.lang.QuerySemanticError` at the PRAGMA's line and column, a bad ``--set`` value a
:class:`~rsep.algebra.params.ParameterError`; both name the parameter and its allowed values.

**Dataset.** ``FROM`` / ``FROM NAMED`` graphs; the streams; one named window per window
declaration: RSP-QL's (and RSEP-QL's, CQELS-CEP's) ``FROM NAMED WINDOW``; C-SPARQL's ``FROM
STREAM <s> [..]``, an unnamed window merged into the default graph
(:func:`~rsep.algebra.plan.unnamed_window`, listed in ``default_windows``); CQELS-QL's inline
``STREAM <s> [..] { .. }``, a named window with a generated IRI (:func:`stream_window`).
SPAseq names streams (``FROM STREAM S1 <iri>``) and bounds matches with ``WITHIN``, which is
part of its event pattern.

**R2R.** The graph pattern is printed, with full IRIs, as a SPARQL 1.1 group in which every
window is read with ``GRAPH <w> { … }`` (RSP-QL's ``WINDOW <w>`` and CQELS's ``STREAM``
rewritten; C-SPARQL's windows are in the default graph): the oracle's contract
(docs/semantics.md, "What the plan must give"). A SELECT's aggregates, aliases and solution
modifiers go into a sub-select inside that group. Event patterns become the event algebra
(:mod:`rsep.algebra.events`) with the graph patterns inside as
:class:`~rsep.algebra.events.GraphPatternRef`: RSEP-QL's ``MATCH``, EP-SPARQL's temporal
joins, CQELS-CEP's ``SEQ``, SPAseq's sequence of GPMs; an event pattern beside other graph
patterns is an :class:`~rsep.algebra.plan.EventJoin`. n-ary sequences are then nested by
:func:`~rsep.algebra.passes.binarise_sequences` in the dialect's direction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from pyoxigraph import Literal, NamedNode, Variable

from rsep.algebra import events
from rsep.algebra import paths as nre
from rsep.algebra.modifiers import Modifiers
from rsep.algebra.params import ParameterError, Parameters, Source
from rsep.algebra.passes import Associativity, apply_profile, binarise_sequences
from rsep.algebra.plan import (
    R2R,
    Ask,
    Construct,
    Dataset,
    EventJoin,
    Output,
    Plan,
    QueryForm,
    Rule,
    Select,
    SubSelect,
    unnamed_window,
)
from rsep.algebra.report import Condition, Periodic, ReportCondition, ReportPolicy
from rsep.algebra.window import (
    CountWindow,
    IntervalWindow,
    LandmarkWindow,
    NamedWindow,
    NowWindow,
    TimeWindow,
    WindowFunction,
)
from rsep.errors import UserError
from rsep.lang import ast
from rsep.lang import ast_stream as s
from rsep.lang.dialects import PARAMETER_NAMES, Dialect
from rsep.lang.dialects import cqelscep as cep
from rsep.lang.dialects import epsparql as ep
from rsep.lang.dialects import rsepql as rsep
from rsep.lang.dialects import spaseq as spa
from rsep.lang.dialects.stream import semantic_error
from rsep.lang.printer import Printer
from rsep.rdf.terms import RSEP

__all__ = [
    "ASSOCIATIVITY",
    "STREAM_WINDOW",
    "compile_parameters",
    "compile_query",
    "stream_window",
    "window_function",
    "with_rules",
]

STREAM_WINDOW = RSEP + "streamWindow"
"""The IRI stem of the windows CQELS-QL writes inline (``STREAM <s> [..] { .. }``)."""

ASSOCIATIVITY: Mapping[str, Associativity] = {"epsparql": Associativity.LEFT}
"""How a dialect nests n-ary sequences (docs/semantics.md, 13): EP-SPARQL binarises to the
left (Sect. 5, rule (9)); CQELS-CEP, and every other dialect, to the right (Eq. (3))."""


def stream_window(number: int) -> str:
    """The generated IRI of the ``number``-th inline CQELS-QL window of a query (from 1)."""
    return f"{STREAM_WINDOW}{number}"


def compile_query(
    query: ast.Query,
    dialect: Dialect,
    *,
    overrides: Mapping[str, str] = {},
    profile: str | None = None,
) -> Plan:
    """The plan of ``query`` (the checked AST of ``dialect``), with ``overrides`` (``--set
    name=value``) and ``profile`` (``--profile``) from the command line.

    Raises :class:`~rsep.lang.QuerySemanticError` (with line and column) for a construct or
    a PRAGMA value the plan cannot take, and :class:`~rsep.algebra.params.ParameterError`
    for a bad ``--set`` or ``--profile``.
    """
    params = compile_parameters(query, dialect, overrides=overrides, profile=profile)
    compiler = _Compiler(query, dialect, params.time_unit.value)
    r2r, form = compiler.r2r_and_form()
    plan = Plan(
        form=form,
        dataset=compiler.dataset(),
        r2r=r2r,
        parameters=params,
        output=_output(query, dialect),
        modifiers=compiler.modifiers,
    )
    plan = apply_profile(plan)
    return binarise_sequences(plan, ASSOCIATIVITY.get(dialect.name, Associativity.RIGHT))


def with_rules(plan: Plan, others: Iterable[Plan]) -> Plan:
    """``plan`` reading the derivations of the CONSTRUCT queries ``others``: EP-SPARQL's
    query set ``Q``, whose rules make the closure ``clos_Q(S)`` the pattern is evaluated
    over (Sect. 4.2). Only an EP-SPARQL pattern reads a closure, and a rule is an EP-SPARQL
    CONSTRUCT: anything else is a :class:`~rsep.errors.UserError`."""
    if not _is_epsparql(plan.r2r):
        raise UserError(
            "rules of other queries feed EP-SPARQL's Q-closure (Sect. 4.2); this query's "
            "pattern is not an EP-SPARQL event pattern"
        )
    rules = []
    for other in others:
        rule = Rule.of(other)
        if not _is_epsparql(rule.pattern):
            raise UserError("a rule of the Q-closure is an EP-SPARQL CONSTRUCT query")
        rules.append(rule)
    return replace(plan, rules=(*plan.rules, *rules))


def _is_epsparql(r2r: R2R) -> bool:
    """Whether ``r2r`` is (or joins) an EP-SPARQL event pattern: one over the stream's
    triple occurrences (:class:`~rsep.algebra.events.StreamBgp`)."""
    root = r2r.event if isinstance(r2r, EventJoin) else r2r
    return isinstance(root, events.EventPattern) and any(
        isinstance(node, events.StreamBgp) for node in root.walk()
    )


# Parameters ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setting:
    """One value for one parameter from one layer; ``pos`` where the query text gives it."""

    name: str
    value: str
    source: Source
    label: str
    pos: ast.Position | None = None

    @property
    def note(self) -> str:
        """What ``rsep explain`` shows beside the value: where it came from."""
        return f"{_where(self.pos)}{self.label}"


def compile_parameters(
    query: ast.Query,
    dialect: Dialect,
    *,
    overrides: Mapping[str, str] = {},
    profile: str | None = None,
) -> Parameters:
    """Every parameter of ``query``'s plan with its source, before the profile's settings
    are applied (:func:`~rsep.algebra.passes.apply_profile` does that)."""
    settings = [*_dialect_settings(dialect), *_query_settings(query)]
    for name, value in overrides.items():
        settings.append(_Setting(name, value, Source.COMMAND_LINE, f"--set {name}={value}"))
    if profile is not None:
        settings.append(_Setting("profile", profile, Source.COMMAND_LINE, f"--profile {profile}"))
    # time_unit first, at its final value: bare numbers in every other value count it
    params = Parameters.defaults()
    units = [setting for setting in settings if setting.name == "time_unit"]
    if units:
        params = _set(params, units[-1])
    for setting in settings:
        if setting.name != "time_unit":
            params = _set(params, setting)
    return params


def _dialect_settings(dialect: Dialect) -> Iterator[_Setting]:
    for name in PARAMETER_NAMES:
        value, why = dialect.defaults[name]
        yield _Setting(name, value, Source.DIALECT_DEFAULT, f"{dialect.title}: {why}")


def _query_settings(query: ast.Query) -> Iterator[_Setting]:
    for declaration in query.prologue:
        if isinstance(declaration, s.Pragma):
            text = declaration.text()
            label = f"PRAGMA {declaration.name} = {text}"
            yield _Setting(declaration.name, text, Source.QUERY_TEXT, label, declaration.pos)
    if not isinstance(query, s.StreamQuery):
        return
    register = query.register
    if query.r2s is not None:
        keyword = query.r2s.upper()
        pos = register.pos if register is not None else query.form.pos
        yield _Setting("r2s", query.r2s, Source.QUERY_TEXT, keyword, pos)
    if register is not None and register.every is not None:
        every = register.every
        text = f"periodic({s.duration_text(every)})"  # a bare number counts time_unit
        label = f"COMPUTED EVERY {s.duration_text(every)}"
        yield _Setting("window.report", text, Source.QUERY_TEXT, label, every.pos)


def _where(pos: ast.Position | None) -> str:
    return "" if pos is None else f"line {pos.line}, column {pos.column}: "


def _set(params: Parameters, setting: _Setting) -> Parameters:
    if setting.source is not Source.QUERY_TEXT:
        return params.with_value(setting.name, setting.value, setting.source, setting.note)
    try:
        return params.with_value(setting.name, setting.value, setting.source, setting.note)
    except ParameterError as error:
        reason = str(error).removeprefix(f"parameter {setting.name}: ")
        raise semantic_error(f"{setting.label}: {reason}", setting.pos) from None


# Windows -------------------------------------------------------------------------------


def _iri(node: ast.Var | ast.Iri, what: str) -> str:
    if isinstance(node, ast.Var):
        raise semantic_error(
            f"{what} ?{node.name} is a variable; a plan needs an IRI for it", node.pos
        )
    return node.value


def _policy(window: s.Window, unit_ms: int) -> ReportPolicy | None:
    if not window.report:
        return None
    conditions: list[ReportCondition] = []
    for strategy in window.report:
        if strategy.period is not None:
            conditions.append(Periodic(strategy.period.milliseconds(unit_ms)))
        else:
            conditions.append(Condition(strategy.name))
    return ReportPolicy.of(*conditions)


def _point(point: s.TimePoint, unit_ms: int) -> int:
    if isinstance(point, s.DateTime):
        return point.ms
    return point.milliseconds(unit_ms)


def window_function(window: s.Window, unit_ms: int) -> WindowFunction:
    """The window function of a window specification (docs/languages.md, "Windows"); a
    bare integer counts ``unit_ms``-long units. A window without a slide slides with every
    tick of rsep's clock (1 ms); CQELS's ``[ALL]`` is the landmark window from ``window.t0``."""
    t0 = None if window.t0 is None else _point(window.t0, unit_ms)
    if isinstance(window, s.TimeWindow):
        width = window.width.milliseconds(unit_ms)
        slide = 1 if window.slide is None else window.slide.milliseconds(unit_ms)
        return TimeWindow(width, slide, t0)
    if isinstance(window, s.LandmarkWindow | s.AllWindow):
        return LandmarkWindow(t0)
    if isinstance(window, s.PastWindow):
        start = window.start.milliseconds(unit_ms)
        delay = 0 if window.end is None else window.end.milliseconds(unit_ms)
        if delay >= start:
            raise semantic_error(
                f"the window [FROM NOW-{start} ms TO NOW-{delay} ms] ends before it starts",
                window.pos,
            )
        slide = 1 if window.slide is None else window.slide.milliseconds(unit_ms)
        return TimeWindow(start - delay, slide, t0, delay)
    if t0 is not None:
        raise semantic_error("T0 applies to time-based and landmark windows only", window.pos)
    if isinstance(window, s.CountWindow):
        return CountWindow(window.size, window.slide or 1)
    if isinstance(window, s.NowWindow):
        return NowWindow()
    if isinstance(window, s.IntervalWindow):
        return IntervalWindow(_point(window.start, unit_ms), _point(window.end, unit_ms))
    raise TypeError(f"unknown window {type(window).__name__}")


# The compiler ------------------------------------------------------------------------------


class _Compiler:
    """The state of one compilation: the dataset as it is found, and the printer."""

    def __init__(self, query: ast.Query, dialect: Dialect, unit_ms: int) -> None:
        self.query = query
        self.dialect = dialect
        self.unit_ms = unit_ms
        self.printer = dialect.printer()  # no prologue: full IRIs
        self.modifiers: Modifiers | None = None
        self.default_graphs: list[str] = []
        self.named_graphs: list[str] = []
        self.streams: list[str] = []
        self.windows: list[NamedWindow] = []
        self.default_windows: list[str] = []
        self.named_streams: dict[str, str] = {}
        self._dataset_clauses()

    # Dataset ------------------------------------------------------------------------------

    def _add_stream(self, iri: str) -> None:
        if iri not in self.streams:
            self.streams.append(iri)

    def _add_window(self, iri: str, stream: str, window: s.Window, pos: Any) -> None:
        if any(named.iri == iri for named in self.windows):
            raise semantic_error(f"the window <{iri}> is declared twice", pos)
        function = window_function(window, self.unit_ms)
        self.windows.append(NamedWindow(iri, stream, function, _policy(window, self.unit_ms)))
        self._add_stream(stream)

    def _dataset_clauses(self) -> None:
        for clause in self.query.dataset:
            if isinstance(clause, ast.From):
                graphs = self.named_graphs if clause.named else self.default_graphs
                if clause.iri.value not in graphs:
                    graphs.append(clause.iri.value)
            elif isinstance(clause, s.NamedWindow):
                name = _iri(clause.name, "the window name")
                stream = _iri(clause.stream, "the stream")
                self._add_window(name, stream, clause.window, clause.pos)
            elif isinstance(clause, s.FromStream):
                iri = unnamed_window(len(self.default_windows) + 1)
                self._add_window(iri, clause.stream.value, clause.window, clause.pos)
                self.default_windows.append(iri)
            elif isinstance(clause, spa.NamedStream):
                self.named_streams[clause.name] = clause.iri.value
                self._add_stream(clause.iri.value)

    def dataset(self) -> Dataset:
        """The dataset found in the dataset clauses and the WHERE clause."""
        return Dataset(
            default_graphs=tuple(self.default_graphs),
            named_graphs=tuple(self.named_graphs),
            streams=tuple(self.streams),
            windows=tuple(self.windows),
            default_windows=tuple(self.default_windows),
        )

    def window(self, name: str, pos: ast.Position | None) -> NamedWindow:
        """The declared window ``name``."""
        for named in self.windows:
            if named.iri == name:
                return named
        raise semantic_error(f"<{name}> names no window of the query", pos)

    # Graph patterns -----------------------------------------------------------------------

    def rewrite(self, node: ast.Node) -> ast.Node:
        """``node`` with every window pattern written ``GRAPH <w> { … }``: RSP-QL's ``WINDOW
        <w> {…}``, and CQELS-QL's ``STREAM <s> [..] {…}``, whose window is added to the
        dataset under a generated IRI."""
        if isinstance(node, s.WindowPattern):
            pattern = self.rewrite(node.pattern)
            return ast.Graph(node.name, pattern, pos=node.pos)  # type: ignore[arg-type]
        if isinstance(node, s.StreamPattern):
            iri = stream_window(sum(w.iri.startswith(STREAM_WINDOW) for w in self.windows) + 1)
            self._add_window(iri, _iri(node.stream, "the stream"), node.window, node.pos)
            pattern = self.rewrite(node.pattern)
            return ast.Graph(ast.Iri(iri), pattern, pos=node.pos)  # type: ignore[arg-type]
        changes: dict[str, object] = {}
        for f in fields(node):
            if f.name == "pos":
                continue
            value = getattr(node, f.name)
            if isinstance(value, ast.Node):
                new = self.rewrite(value)
                if new is not value:
                    changes[f.name] = new
            elif isinstance(value, tuple) and any(isinstance(v, ast.Node) for v in value):
                items = tuple(self.rewrite(v) if isinstance(v, ast.Node) else v for v in value)
                if any(a is not b for a, b in zip(items, value, strict=True)):
                    changes[f.name] = items
        return node.replace(**changes) if changes else node

    def ref(self, group: ast.Group) -> events.GraphPatternRef:
        """The group (rewritten) as an opaque SPARQL 1.1 group pattern with full IRIs."""
        rewritten = self.rewrite(group)
        assert isinstance(rewritten, ast.GroupPattern | ast.SubSelect)
        _no_nested_paths(rewritten)
        text = self.printer.group(rewritten, 0)
        return events.GraphPatternRef(text, frozenset(_bound(rewritten)))

    def expression(self, expr: ast.Expr) -> str:
        """The text of an expression, full IRIs."""
        return self.printer.expr(expr, 0)

    # The algebraic expression and the query form -------------------------------------------

    def r2r_and_form(self) -> tuple[R2R, QueryForm]:
        """The R2R expression and the query form."""
        query = self.query
        form = _form(query, self.printer)
        where = query.where
        if where is None:
            raise semantic_error("a continuous query needs a WHERE clause", query.pos)
        if isinstance(query, spa.SpaseqQuery):
            return self._spaseq(query), form
        if self.dialect.name == "epsparql":
            _time_functions_in_filters(query)
            pattern = self._epsparql(where)
            self.modifiers = self._modifiers(query)
            return pattern, form if self.modifiers is None else _plain(form)
        found, rest = self._events(where)
        if found is None:
            return self._graph(query, where), _plain(form)
        self.modifiers = self._modifiers(query)
        if self.modifiers is not None:  # they compute the SELECT's expressions
            form = _plain(form)
        if self.dialect.name == "cqelscep":
            found, rest = self._cep_clauses(found, rest)
        _no_nested_events(rest)
        filters: tuple[str, ...] = ()
        if self.dialect.name != "cqelscep":  # CQELS-CEP's P is one pattern (Eq. (1))
            rest, filters = self._join_filters(rest, found.variables)
        if not rest.elements and not filters:
            return found, form
        graph = self.background(rest) if rest.elements else events.GraphPatternRef("{}")
        return EventJoin(found, graph, filters), form

    def _join_filters(
        self, group: ast.GroupPattern, matched: frozenset[str]
    ) -> tuple[ast.GroupPattern, tuple[str, ...]]:
        """The group's FILTERs that read a variable of the event pattern (``matched``),
        taken out of the group to constrain the join (SPARQL 1.1 sec. 18.2.2.6), and the
        group without them; a FILTER over the group's own variables stays in it."""
        kept: list[ast.Pattern] = []
        taken: list[str] = []
        for element in group.elements:
            if not isinstance(element, ast.Filter) or not (_mentioned(element) & matched):
                kept.append(element)
                continue
            if any(isinstance(n, ast.Exists) for n in element.walk()):
                raise semantic_error(
                    "a FILTER with EXISTS over the event pattern's variables is not "
                    "compiled yet (MATCH's bindings inside EXISTS)",
                    element.pos,
                )
            rewritten = self.rewrite(element)
            assert isinstance(rewritten, ast.Filter)
            taken.append(self.expression(rewritten.expr))
        return ast.GroupPattern(tuple(kept), pos=group.pos), tuple(taken)

    def background(self, group: ast.GroupPattern) -> events.GraphPatternRef:
        """The graph pattern beside the event pattern. For CQELS-CEP it is the extended
        graph pattern ``P`` of ``Q = (V, P, D, EC)`` (seed 001, Sect. 2.3, 3.2): the triples
        whose path nests or uses an nSPARQL axis are taken out of the SPARQL text and kept
        as :class:`~rsep.algebra.paths.PathTriple` (pyoxigraph cannot evaluate them)."""
        if self.dialect.name != "cqelscep":
            return self.ref(group)
        kept, found = _path_triples(group)
        ref = self.ref(kept)
        if not found:
            return ref
        names = frozenset().union(*(triple.variables for triple in found))
        return events.GraphPatternRef(ref.text, ref.variables | names, tuple(found))

    def _modifiers(self, query: ast.Query) -> Modifiers | None:
        """The solution modifiers beside an event pattern (:mod:`rsep.algebra.modifiers`):
        the SELECT clause and what follows WHERE, as SPARQL text with full IRIs; None when
        the query has none (its projection's ``(e AS ?v)`` are the form's expressions)."""
        if not _has_modifiers(query):
            return None
        sub = _sub_select(query, ast.GroupPattern(()))
        head = sub.select
        rewritten = self.rewrite(sub)
        assert isinstance(rewritten, ast.SubSelect)
        text = self.printer.group(rewritten, 0)
        inner = text.strip()[1:-1]  # the sub-select's braces
        parts = inner.split("\n  WHERE { }\n", 1)
        if len(parts) != 2:  # pragma: no cover - the printer's layout
            raise AssertionError(f"unexpected sub-select text {text!r}")
        aggregates = any(isinstance(n, ast.Aggregate) for n in head.walk()) or any(
            isinstance(n, ast.Aggregate) for c in (*query.having, *query.order_by) for n in c.walk()
        )
        grouped = bool(query.group_by) or aggregates
        return Modifiers(parts[0].strip(), parts[1].strip(), grouped, bool(query.group_by))

    def _graph(self, query: ast.Query, where: ast.Group) -> events.GraphPatternRef:
        """The WHERE group; a SELECT's aliases, aggregates and solution modifiers in a
        sub-select inside it (the oracle runs ``SELECT vars WHERE { text }``)."""
        select = query.form
        aliases = isinstance(select, ast.Select) and any(
            isinstance(item, ast.Alias) for item in select.projection or ()
        )
        if not (aliases or _has_modifiers(query)):
            return self.ref(where)
        return self.ref(ast.GroupPattern((_sub_select(query, where),)))

    def _events(self, where: ast.Group) -> tuple[events.EventPattern | None, ast.GroupPattern]:
        """The one event pattern among the elements of the WHERE group, and the rest."""
        if not isinstance(where, ast.GroupPattern):
            return None, ast.GroupPattern((where,))
        found: list[tuple[events.EventPattern, ast.Node]] = []
        rest: list[ast.Pattern] = []
        for element in where.elements:
            pattern = self._event(element)
            if pattern is None:
                rest.append(element)
            else:
                found.append((pattern, element))
        if len(found) > 1:
            raise semantic_error(
                "a query has one event pattern in the plan; join the others into it",
                found[1][1].pos,
            )
        if not found:
            return None, where
        # CQELS-CEP: the windows whose patterns an event clause SEQ (:W1, :W2) took
        taken = {
            w.window.value
            for w in found[0][1].walk()
            if isinstance(w, cep.SeqWindow) and isinstance(w.window, ast.Iri)
        }
        kept = [
            e
            for e in rest
            if not (
                isinstance(e, s.WindowPattern)
                and isinstance(e.name, ast.Iri)
                and e.name.value in taken
            )
        ]
        return found[0][0], ast.GroupPattern(tuple(kept), pos=where.pos)

    def _event(self, element: ast.Pattern) -> events.EventPattern | None:
        """The event pattern ``element`` is, if it is one."""
        if isinstance(element, rsep.Match):
            selection = element.selection
            consumption = element.consumption
            return events.Match(
                self._rsepql(element.event),
                None if selection is None else events.SelectionPolicy(selection),
                None if consumption is None else events.ConsumptionPolicy(consumption),
            )
        if isinstance(element, s.WindowPattern) and _has(element.pattern, cep.SeqPattern):
            return self._cep_window(element)
        if isinstance(element, cep.SeqPattern):
            return self._cep_seq(element, None)
        return None

    # RSEP-QL ------------------------------------------------------------------------------

    def _rsepql(self, event: rsep.EventPattern) -> events.EventPattern:
        if isinstance(event, rsep.BasicEvent):
            name = _iri(event.window, "the window name")
            block = ast.GroupPattern((ast.TriplesBlock(event.triples),) if event.triples else ())
            return events.Event(name, self.ref(block))
        if isinstance(event, rsep.First):
            return events.First(self._rsepql(event.event))
        if isinstance(event, rsep.Last):
            return events.Last(self._rsepql(event.event))
        assert isinstance(event, rsep.EventSeq)
        return events.Seq(self._rsepql(event.left), self._rsepql(event.right))

    # CQELS-CEP ----------------------------------------------------------------------------

    def _cep_window(self, element: s.WindowPattern) -> events.EventPattern:
        """``WINDOW :W { SEQ (…) }``: the triple sequence pattern over the window (Sect. 3.2,
        ``W = (s, ω, TSP)``)."""
        name = _iri(element.name, "the window name")
        named = self.window(name, element.pos)
        group = element.pattern
        assert isinstance(group, ast.GroupPattern)
        seqs = [e for e in group.elements if isinstance(e, cep.SeqPattern)]
        others = [e for e in group.elements if not isinstance(e, cep.SeqPattern)]
        if len(seqs) > 1 or others:
            where = seqs[1].pos if len(seqs) > 1 else others[0].pos
            raise semantic_error("a window with a SEQ holds that SEQ alone", where)
        pattern = self._cep_seq(seqs[0], named)
        return events.CepWindow(name, named.stream, named.window, pattern)

    def _cep_clauses(
        self, found: events.EventPattern, rest: ast.GroupPattern
    ) -> tuple[events.EventPattern, ast.GroupPattern]:
        """The event clauses: beside the one with a SEQ, every other ``WINDOW :W { P }`` is
        an event clause too (a window specification whose triple sequence pattern is a
        triples template, Sect. 3.1-3.2), joined with it (Eq. (2)); the rest of the group."""
        kept: list[ast.Pattern] = []
        for element in rest.elements:
            if isinstance(element, s.WindowPattern) and isinstance(element.name, ast.Iri):
                name = element.name.value
                named = self.window(name, element.pos)
                clause = events.CepWindow(
                    name, named.stream, named.window, self.ref(element.pattern)
                )
                found = events.CepJoin(found, clause)
            else:
                kept.append(element)
        for element in kept:
            for node in element.walk():
                if isinstance(node, s.WindowPattern | s.StreamPattern):
                    raise semantic_error(
                        "a window inside another pattern beside a CQELS-CEP event clause is "
                        "not compiled yet (the background pattern reads D, Sect. 3.2)",
                        node.pos,
                    )
        return found, ast.GroupPattern(tuple(kept), pos=rest.pos)

    def _cep_seq(self, seq: cep.SeqPattern, window: NamedWindow | None) -> events.CepSeq:
        items = []
        for element in seq.elements:
            operand: events.CepOperand
            if isinstance(element, cep.SeqTemplate):
                block = (ast.TriplesBlock(element.triples),) if element.triples else ()
                operand = self.ref(ast.GroupPattern(block))
            else:
                assert isinstance(element, cep.SeqWindow)
                name = _iri(element.window, "the window name")
                named = self.window(name, element.pos)
                operand = events.CepWindow(
                    name, named.stream, named.window, self._window_pattern(name)
                )
            items.append(events.CepItem(operand, element.negated))
        return events.CepSeq(tuple(items))

    def _window_pattern(self, name: str) -> events.GraphPatternRef:
        """The pattern of ``WINDOW <name> { … }`` in the WHERE group (an event clause's
        window names its triple pattern so); an empty group if there is none."""
        where = self.query.where
        elements = where.elements if isinstance(where, ast.GroupPattern) else ()
        for element in elements:
            if (
                isinstance(element, s.WindowPattern)
                and isinstance(element.name, ast.Iri)
                and element.name.value == name
            ):
                return self.ref(element.pattern)
        return self.ref(ast.GroupPattern())

    # EP-SPARQL ----------------------------------------------------------------------------

    def _epsparql(self, group: ast.Group) -> events.EventPattern:
        """Temporal joins of stream BGPs (Sect. 4.2); FILTER, ETALIS's ``DO`` and ``WITHIN``
        after them constrain the whole pattern.

        A group is translated as SPARQL 1.1 translates one (sec. 18.2.2.6), with the
        paper's functions (Sect. 4.2): its triples blocks are one ``BGP`` (a
        :class:`~rsep.algebra.events.StreamBgp`; a ``BIND`` right after them extends it),
        a nested group, UNION or temporal join is joined to it with ``Join``
        (:class:`~rsep.algebra.events.And`), and its FILTERs apply to the whole group.
        A sub-select is a :class:`~rsep.algebra.plan.SubSelect` over the pattern of its
        WHERE part (:meth:`_ep_sub_select`). A group with anything else (OPTIONAL, MINUS,
        VALUES, GRAPH, ETALIS's ``aggregate``) stays one opaque StreamBgp, which the oracle
        refuses to evaluate."""
        if isinstance(group, ast.SubSelect):
            return self._ep_sub_select(group)
        trailers = [e for e in group.elements if isinstance(e, ast.Filter | ep.Do | ep.Within)]
        body = [e for e in group.elements if not isinstance(e, ast.Filter | ep.Do | ep.Within)]
        pattern: events.EventPattern | None = None
        block: list[ast.Pattern] = []  # the triples blocks of the current BGP
        binds: list[tuple[str, str]] = []  # BIND (e AS ?v) right after them
        opaque = False

        def bgp() -> events.EventPattern | None:
            """The current BGP (extended by its BINDs) joined to the pattern so far."""
            if not block:
                return pattern
            ref = self.ref(ast.GroupPattern(tuple(block), pos=group.pos))
            found = events.StreamBgp(ref, binds=tuple(binds) or None)
            block.clear()
            binds.clear()
            return found if pattern is None else events.And(pattern, found)

        for element in body:
            if isinstance(element, ast.TriplesBlock):
                if binds:
                    pattern = bgp()
                block.append(element)
            elif isinstance(element, ast.Bind) and block and pattern is None:
                binds.append((element.var.name, self.expression(element.expr)))
            elif isinstance(element, ep.TemporalJoin | ast.Union | ast.Group):
                pattern = bgp()
                operand = self._ep_operand(element)
                pattern = operand if pattern is None else events.And(pattern, operand)
            else:
                opaque = True
                break
        pattern = bgp()
        if opaque or pattern is None:
            pattern = events.StreamBgp(self.ref(ast.GroupPattern(tuple(body), pos=group.pos)))
        for trailer in trailers:
            if isinstance(trailer, ep.Within):
                pattern = events.Within(pattern, trailer.duration.milliseconds(self.unit_ms))
            else:
                pattern = events.EventFilter(pattern, self.expression(trailer.expr))
        return pattern

    def _ep_sub_select(self, sub: ast.SubSelect) -> events.EventPattern:
        """``{ SELECT V WHERE { P } }`` over an event pattern (query (5) of Sect. 4.1, which
        uses the sub-queries and ``expression AS ?var`` of the SPARQL draft the paper cites):
        ``Project(Extend(P, v, e)…, V)`` (SPARQL 1.1 sec. 18.2.1), a
        :class:`~rsep.algebra.plan.SubSelect` over ``P``'s event pattern. ``SELECT *``
        projects every variable in scope, so it is ``P`` itself; DISTINCT and REDUCED change
        nothing, the solutions of Sect. 4.2 being sets. Solution modifiers and aggregates
        have no node over solutions with intervals: an error names them."""
        _no_modifiers(sub, "in a sub-select over an EP-SPARQL event pattern")
        pattern = self._epsparql(sub.where)
        projection = sub.select.projection
        if projection is None:
            return pattern
        for item in projection:
            for node in item.walk():
                if isinstance(node, ast.Aggregate):
                    raise semantic_error(
                        f"the aggregate {node.name} in a sub-select over an EP-SPARQL event "
                        "pattern is not compiled yet (Sect. 4.2 defines no aggregation of "
                        "solutions with intervals)",
                        node.pos,
                    )
        names = tuple(
            item.name if isinstance(item, ast.Var) else item.var.name for item in projection
        )
        expressions = tuple(
            (item.var.name, self.expression(item.expr))
            for item in projection
            if isinstance(item, ast.Alias)
        )
        return SubSelect(pattern, names, expressions)

    def _ep_operand(self, node: ast.Pattern) -> events.EventPattern:
        """An operand of a temporal join. The FILTERs of the optional operand of
        OPTIONALSEQ (its left) and EQUALSOPTIONAL (its right) are the ``F`` of
        ``SeqRightJoin``/``EqLeftJoin`` (Sect. 4.2), as SPARQL 1.1 makes the FILTERs of
        ``OPTIONAL { P FILTER (F) }`` the ``F`` of ``LeftJoin`` (sec. 18.2.2.6)."""
        if isinstance(node, ep.TemporalJoin):
            optional = {"OPTIONALSEQ": node.left, "EQUALSOPTIONAL": node.right}.get(node.op)
            condition: str | None = None
            if (
                isinstance(optional, ast.GroupPattern)
                and any(isinstance(e, ast.Filter) for e in optional.elements)
                and not any(isinstance(e, ep.Do | ep.Within) for e in optional.elements)
            ):
                filters = [e for e in optional.elements if isinstance(e, ast.Filter)]
                texts = [self.expression(f.expr) for f in filters]
                condition = texts[0] if len(texts) == 1 else " && ".join(f"({x})" for x in texts)
                rest = tuple(e for e in optional.elements if not isinstance(e, ast.Filter))
                optional = ast.GroupPattern(rest, pos=optional.pos)
            if node.op == "OPTIONALSEQ":
                assert optional is not None
                return events.OptionalSeq(
                    self._ep_operand(optional), self._ep_operand(node.right), condition
                )
            if node.op == "EQUALSOPTIONAL":
                assert optional is not None
                return events.EqualsOptional(
                    self._ep_operand(node.left), self._ep_operand(optional), condition
                )
            left, right = self._ep_operand(node.left), self._ep_operand(node.right)
            if node.op == "SEQ":
                return events.SeqJoin(left, right)
            return events.EqJoin(left, right)
        if isinstance(node, ast.Union):
            branches = [self._ep_operand(branch) for branch in node.branches]
            out = branches[0]
            for branch in branches[1:]:
                out = events.Or(out, branch)
            return out
        assert isinstance(node, ast.GroupPattern | ast.SubSelect)
        return self._epsparql(node)

    # SPAseq -------------------------------------------------------------------------------

    def _spaseq(self, query: spa.SpaseqQuery) -> events.EventPattern:
        """``SEQ (…)`` over the GPMs (Definition 4), within ω, partitioned by the keys."""
        _no_modifiers(query)
        gpms = {gpm.name: self._gpm(gpm) for gpm in query.gpms}
        expr = query.seq
        if expr is None:
            raise semantic_error("a SPAseq query needs SEQ (…)", query.pos)
        pattern = self._seq_expr(expr, gpms)
        if not isinstance(pattern, events.Sequence):
            pattern = events.Sequence((pattern,), ())
        out: events.EventPattern = events.Within(pattern, query.within.milliseconds(self.unit_ms))
        if query.partition_by:
            out = events.PartitionBy(out, tuple(v.name for v in query.partition_by))
        return out

    def _gpm(self, gpm: spa.DefineGpm) -> events.Gpm:
        if len(gpm.streams) != 1:
            raise semantic_error(
                f"GPM {gpm.name} reads {len(gpm.streams)} streams; a GPM of the plan reads one "
                "(SPAseq Definition 4: (u, P))",
                gpm.pos,
            )
        if gpm.group_by or gpm.having:
            raise semantic_error(
                f"GPM {gpm.name}: GROUP BY and HAVING in a GPM are not compiled yet", gpm.pos
            )
        group = gpm.pattern
        elements = group.elements if isinstance(group, ast.GroupPattern) else (group,)
        graphs = [e for e in elements if isinstance(e, ast.Graph)]
        rest = tuple(e for e in elements if not isinstance(e, ast.Graph))
        if len(graphs) > 1:
            raise semantic_error(
                f"GPM {gpm.name} reads one knowledge base graph (Definition 15)", graphs[1].pos
            )
        kb = None
        if graphs:
            kb = events.KbPattern(_iri(graphs[0].name, "the graph"), self.ref(graphs[0].pattern))
            if kb.graph not in self.named_graphs:  # Definition 15: Γ(v) names a graph of D
                self.named_graphs.append(kb.graph)
        stream = self.named_streams[gpm.streams[0].name]
        return events.Gpm(gpm.name, stream, self.ref(ast.GroupPattern(rest)), kb)

    def _seq_expr(self, expr: spa.SeqExpr, gpms: Mapping[str, events.Gpm]) -> events.EventPattern:
        if isinstance(expr, spa.GpmRef):
            return gpms[expr.name]
        if isinstance(expr, spa.Sequence):
            steps: list[events.EventPattern] = []
            strategies: list[events.Strategy] = []
            node: spa.SeqExpr = expr
            while isinstance(node, spa.Sequence):
                steps.append(self._seq_expr(node.right, gpms))
                strategies.append(events.Strategy(node.strategy))
                node = node.left
            steps.append(self._seq_expr(node, gpms))
            return events.Sequence(tuple(reversed(steps)), tuple(reversed(strategies)))
        if isinstance(expr, spa.KleenePlus):
            return events.KleenePlus(self._seq_expr(expr.operand, gpms))
        if isinstance(expr, spa.OptionalEvent):
            return events.Optional(self._seq_expr(expr.operand, gpms))
        if isinstance(expr, spa.NegatedEvent):
            return events.Negation(self._seq_expr(expr.operand, gpms))
        if isinstance(expr, spa.Conjunction):
            return events.Conjunction(tuple(self._seq_expr(o, gpms) for o in expr.operands))
        assert isinstance(expr, spa.Disjunction)
        return events.Disjunction(tuple(self._seq_expr(o, gpms) for o in expr.operands))


# CQELS-CEP nested paths ------------------------------------------------------------------

_NESTING = (cep.NestedPath, cep.AxisStep)


def _nests(verb: ast.Var | ast.Iri | ast.Path) -> bool:
    return any(isinstance(node, _NESTING) for node in verb.walk())


def _no_nested_paths(group: ast.Node) -> None:
    for node in group.walk():
        if isinstance(node, _NESTING):
            raise semantic_error(
                "a nested path (nSPARQL axis or [ ] step) is compiled only in the triples of "
                "the graph pattern beside a CQELS-CEP event clause (Sect. 3.2, P of Q = "
                "(V, P, D, EC)); here it is not compiled yet",
                node.pos,
            )


def _path_triples(group: ast.GroupPattern) -> tuple[ast.GroupPattern, list[nre.PathTriple]]:
    """``group`` without its triples whose path nests, and those triples as the plan's
    :class:`~rsep.algebra.paths.PathTriple`. Only a group of triples and FILTERs may hold
    them (``P`` is a set of extended triple patterns, seed 001, Sect. 2.3; a FILTER applies
    to the whole group): beside OPTIONAL, MINUS, BIND, … their join would depend on where
    they stand, which is not compiled yet."""
    found: list[nre.PathTriple] = []
    elements: list[ast.Pattern] = []
    for element in group.elements:
        if not isinstance(element, ast.TriplesBlock):
            elements.append(element)
            continue
        kept: list[ast.Triples] = []
        for triples in element.triples:
            plain = [p for p in triples.properties if not _nests(p.verb)]
            for prop in triples.properties:
                if _nests(prop.verb):
                    path = _nested_path(prop.verb)
                    subject = _path_end(triples.subject)
                    found.extend(nre.PathTriple(subject, path, _path_end(o)) for o in prop.objects)
            if plain or not triples.properties:
                kept.append(triples.replace(properties=tuple(plain)))
        if kept:
            elements.append(element.replace(triples=tuple(kept)))
    if found:
        for element in elements:
            if not isinstance(element, ast.TriplesBlock | ast.Filter):
                raise semantic_error(
                    "a nested path beside anything but triples and FILTERs in one group is "
                    "not compiled yet (CQELS-CEP Sect. 2.3: P is a set of extended triple "
                    "patterns)",
                    element.pos,
                )
    return group.replace(elements=tuple(elements)), found


def _path_end(node: ast.GraphNode) -> nre.PathEnd:
    """The subject or object of an extended triple pattern: ``sp, op ∈ I ∪ L ∪ V`` (seed
    001, Sect. 2.3); a blank node or collection there is not compiled yet."""
    if isinstance(node, ast.Var):
        return Variable(node.name)
    if isinstance(node, ast.Iri | ast.Literal):
        return _path_term(node)
    raise semantic_error(
        "a blank node or collection at the end of a nested path is not compiled yet "
        "(CQELS-CEP Sect. 2.3: sp, op ∈ I ∪ L ∪ V)",
        node.pos,
    )


def _path_term(node: ast.Iri | ast.Literal) -> NamedNode | Literal:
    if isinstance(node, ast.Iri):
        return NamedNode(node.value)
    if node.lang is not None:
        return Literal(node.lexical, language=node.lang)
    return Literal(node.lexical, datatype=NamedNode(node.datatype))


def _nested_path(path: ast.Var | ast.Iri | ast.Path) -> nre.PathExpr:
    """The plan's tree of a CQELS-CEP property path (:mod:`rsep.algebra.paths`)."""
    if isinstance(path, ast.Iri):
        return nre.Link(NamedNode(path.value))
    if isinstance(path, ast.PathInverse):
        return nre.Inverse(_nested_path(path.path))
    if isinstance(path, ast.PathSequence):
        return nre.PathSequence(tuple(_nested_path(step) for step in path.steps))
    if isinstance(path, ast.PathAlternative):
        return nre.Alternative(tuple(_nested_path(option) for option in path.options))
    if isinstance(path, ast.PathModified):
        return nre.Repeat(_nested_path(path.path), path.modifier)
    if isinstance(path, ast.PathNegated):
        forward = tuple(NamedNode(i.value) for i in path.items if isinstance(i, ast.Iri))
        backward = tuple(
            NamedNode(i.path.value)
            for i in path.items
            if isinstance(i, ast.PathInverse) and isinstance(i.path, ast.Iri)
        )
        return nre.NegatedSet(forward, backward)
    if isinstance(path, cep.NestedPath):
        term = path.term
        if term is not None and not isinstance(term, ast.Iri | ast.Literal):
            raise semantic_error(
                "a variable or blank node inside a nested path [path term] is not compiled "
                "yet: nSPARQL's nested expressions test constants (self::a)",
                term.pos,
            )
        return nre.Nested(_nested_path(path.path), None if term is None else _path_term(term))
    if isinstance(path, cep.AxisStep):
        label = None if path.label is None else NamedNode(path.label.value)
        nested = None if path.nested is None else _nested_path(path.nested)
        return nre.Axis(path.axis, path.inverse, label, nested)
    raise semantic_error("a variable inside a property path is not SPARQL 1.1", path.pos)


# Helpers -------------------------------------------------------------------------------


def _has(node: ast.Node, kind: type[ast.Node]) -> bool:
    return any(isinstance(inner, kind) for inner in node.walk())


_EVENT_NODES = (rsep.Match, cep.SeqPattern, ep.TemporalJoin, spa.SeqClause)


def _no_nested_events(rest: ast.GroupPattern) -> None:
    for node in rest.walk():
        if isinstance(node, _EVENT_NODES):
            raise semantic_error(
                "an event pattern stands in the WHERE group itself, not inside another pattern",
                node.pos,
            )


def _sub_select(query: ast.Query, where: ast.Group) -> ast.SubSelect:
    """``{ SELECT … WHERE { where } modifiers }``: the query's SELECT clause (``SELECT *``
    for another form) and solution modifiers around ``where``."""
    head = query.form if isinstance(query.form, ast.Select) else ast.Select()
    return ast.SubSelect(
        head,
        where,
        group_by=query.group_by,
        having=query.having,
        order_by=query.order_by,
        limit=query.limit,
        offset=query.offset,
        values=query.values,
    )


def _has_modifiers(query: ast.Query) -> bool:
    """Whether the query has solution modifiers (SPARQL 1.1 sec. 18.2.4-18.2.5), or an
    aggregate in its projection."""
    select = query.form
    aggregates = isinstance(select, ast.Select) and any(
        isinstance(n, ast.Aggregate) for item in select.projection or () for n in item.walk()
    )
    return bool(
        query.group_by
        or query.having
        or query.order_by
        or query.limit is not None
        or query.offset is not None
        or query.values is not None
        or aggregates
    )


def _no_modifiers(query: ast.Query | ast.SubSelect, where: str = "with an event pattern") -> None:
    """Refuse the solution modifiers the plan has no node for, naming them: in a SPAseq
    query and a sub-select over an EP-SPARQL pattern (``where``) only the projection and
    its ``(e AS ?v)`` are compiled."""
    present = [
        name
        for name, given in (
            ("GROUP BY", query.group_by),
            ("HAVING", query.having),
            ("ORDER BY", query.order_by),
            ("LIMIT", query.limit is not None),
            ("OFFSET", query.offset is not None),
            ("VALUES", query.values is not None),
        )
        if given
    ]
    if present:
        names = " and ".join(present) if len(present) < 3 else ", ".join(present)
        verb = "is" if len(present) == 1 else "are"
        raise semantic_error(f"{names} {where} {verb} not compiled yet", query.pos)


def _time_functions_in_filters(query: ast.Query) -> None:
    """EP-SPARQL's getDURATION(), getSTARTTIME() and getENDTIME() are "used inside filter
    expressions" and read the interval of the pattern the FILTER is placed in (Sect. 4.1;
    ``σ``, Sect. 4.2): anywhere else (a projection, a BIND) they have no interval, so an
    error names them."""
    stack: list[ast.Node] = [query]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Filter | ep.Do):
            continue
        if isinstance(node, ast.BuiltIn) and node.name in ep.TIME_FUNCTIONS:
            raise semantic_error(
                f"{ep.TIME_FUNCTIONS[node.name]}() is a filter function (EP-SPARQL Sect. 4.1: "
                "it reads the interval of the pattern a FILTER is placed in); here it is "
                "outside a FILTER",
                node.pos,
            )
        stack.extend(node.children())


def _mentioned(node: ast.Node) -> frozenset[str]:
    """Every variable written in ``node``, inside EXISTS too."""
    return frozenset(n.name for n in node.walk() if isinstance(n, ast.Var))


def _bound(group: ast.Group) -> set[str]:
    """The variables a group may bind: those of its patterns, not of its FILTERs or MINUS;
    a sub-select binds its projection."""
    names: set[str] = set()
    stack: list[ast.Node] = [group]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Var):
            names.add(node.name)
        elif isinstance(node, ast.SubSelect):
            projection = node.select.projection
            if projection is None:
                stack.append(node.where)
            else:
                names.update(i.name if isinstance(i, ast.Var) else i.var.name for i in projection)
        elif isinstance(node, ast.Bind):
            names.add(node.var.name)
        elif isinstance(node, ep.Is) and isinstance(node.left, ast.Var):
            names.add(node.left.name)
        elif not isinstance(node, ast.Filter | ast.Minus | ast.Exists):
            stack.extend(node.children())
        elif isinstance(node, ast.Filter):
            stack.extend(n for n in node.walk() if isinstance(n, ep.Is))
    return names


def _form(query: ast.Query, printer: Printer) -> QueryForm:
    """The query form; a SELECT's aliases as expressions (used when the R2R is an event
    pattern: over a graph pattern they are in its sub-select and :func:`_plain` drops them)."""
    form = query.form
    if isinstance(form, ast.Select):
        names = tuple(
            item.name if isinstance(item, ast.Var) else item.var.name
            for item in form.projection or ()
        )
        expressions = tuple(
            (item.var.name, printer.expr(item.expr, 0))
            for item in form.projection or ()
            if isinstance(item, ast.Alias)
        )
        return Select(names, form.distinct, expressions)
    if isinstance(form, ast.Construct):
        return Construct("\n".join(printer.triples(t, 0) + " ." for t in form.template))
    if isinstance(form, ast.Ask):
        return Ask()
    raise semantic_error(
        "DESCRIBE is not a form of continuous query (RSP-QL, Query Form: SELECT, CONSTRUCT, ASK)",
        form.pos,
    )


def _plain(form: QueryForm) -> QueryForm:
    """``form`` without a SELECT's expressions (a graph pattern's sub-select computes them)."""
    return Select(form.variables, form.distinct) if isinstance(form, Select) else form


def _output(query: ast.Query, dialect: Dialect) -> Output:
    feedback = dialect.name == "epsparql" and isinstance(query.form, ast.Construct)
    register = query.register if isinstance(query, s.StreamQuery) else None
    if register is None or register.query:
        return Output(None, feedback)
    name = register.name
    if isinstance(name, ast.Var):
        raise semantic_error(
            f"the output stream ?{name.name} is a variable; a plan needs an IRI", name.pos
        )
    return Output(name.value if isinstance(name, ast.Iri) else name, feedback)
