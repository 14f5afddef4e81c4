"""The logical plan of a continuous query, and ``explain``, which prints all of it.

An RSP-QL query is ``(SE, SDS, ET, QF)`` (RSP-QL Def. 11; RSEP-QL Def. 5): an algebraic
expression, a streaming dataset, the evaluation instants and a query form. rsep's
:class:`Plan` holds the same, with CQL's three operator classes named (RSP-QL, "Streaming
operators"):

- ``dataset``: static graphs, streams and the named windows over them (S2R; RSP-QL
  Def. 14, RSEP-QL Def. 4);
- ``r2r``: the algebraic expression: an opaque SPARQL graph pattern, an event pattern
  tree, or an event pattern joined with graph patterns (RSEP-QL's ``MATCH E`` among graph
  patterns; CQELS-CEP's ``JOIN([[EC, t]], [[P, t]]_D)``, Eq. (1));
- ``r2s``: the streaming operator (RSP-QL Def. 20-22);
- ET as report policies: each window's own, or the parameter ``window.report``;
- ``form``: SELECT, CONSTRUCT or ASK (RSP-QL, "Query Form");
- ``parameters``: every operational choice, with where its value came from.

The plan keeps one source of truth per choice: ``r2s`` and the default report policy are
read from ``parameters``; a window's own report policy or present rule (from the query
text) overrides the parameter for that window.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum

from rsep.algebra.events import (
    Conjunction,
    Disjunction,
    EventPattern,
    Gpm,
    GraphPatternRef,
    KleenePlus,
    Node,
    PartitionBy,
    Sequence,
    Within,
    check_variable,
)
from rsep.algebra.modifiers import Modifiers
from rsep.algebra.nfa import Nfa, compile_nfa
from rsep.algebra.params import PARAMETERS, Parameters
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import NamedWindow, PresentRule, WindowFunction
from rsep.errors import UserError
from rsep.rdf.terms import RSEP
from rsep.rdf.time import format_duration

__all__ = [
    "R2R",
    "UNNAMED_WINDOW",
    "Ask",
    "Construct",
    "Dataset",
    "EventJoin",
    "Output",
    "Plan",
    "QueryForm",
    "Rule",
    "Select",
    "SubSelect",
    "explain",
    "unnamed_window",
]


@dataclass(frozen=True)
class Select:
    """``SELECT v1 … vn`` (RSP-QL, "Query Form"); no variables is ``SELECT *``.

    ``expressions`` are the projections ``(e AS ?v)`` computed from each answer of an event
    pattern, as ``(v, text of e)`` (EP-SPARQL's ``SELECT ?sum / ?count AS ?average``); over a
    graph pattern they are part of the pattern's sub-select instead.
    """

    variables: tuple[str, ...] = ()
    distinct: bool = False
    expressions: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        head = "SELECT DISTINCT" if self.distinct else "SELECT"
        computed = dict(self.expressions)
        names = [f"({computed[v]} AS ?{v})" if v in computed else "?" + v for v in self.variables]
        return head + " " + (" ".join(names) or "*")


@dataclass(frozen=True)
class Construct:
    """``CONSTRUCT { template }``: each evaluation yields a graph; with an R2S operator the
    answer is an RDF stream (RSP-QL, "Query Form"), which EP-SPARQL feeds back into its
    input (Sect. 4.2, Q-closure)."""

    template: str

    def __str__(self) -> str:
        return "CONSTRUCT { " + " ".join(self.template.split()) + " }"


@dataclass(frozen=True)
class Ask:
    """``ASK``: each evaluation yields a boolean (RSP-QL, "Query Form")."""

    def __str__(self) -> str:
        return "ASK"


QueryForm = Select | Construct | Ask


UNNAMED_WINDOW = RSEP + "unnamedWindow"
"""The IRI stem of unnamed windows: ``<http://w3id.org/rsep/vocab#unnamedWindow1>``, …"""


def unnamed_window(number: int) -> str:
    """The reserved IRI of the ``number``-th unnamed window of a query (from 1): a window
    C-SPARQL's ``FROM STREAM <s> [RANGE …]`` merges into the default graph, listed in
    :attr:`Dataset.default_windows` (docs/semantics.md, "What the plan must give")."""
    return f"{UNNAMED_WINDOW}{number}"


@dataclass(frozen=True)
class Dataset:
    """An RSP-QL dataset (Def. 14) / RSEP-QL streaming dataset (Def. 4).

    ``default_graphs`` are merged into the default graph, ``named_graphs`` are named
    (static or time-varying) graphs, ``streams`` the input streams, ``windows`` the named
    windows over them; ``default_windows`` lists the windows merged into the default graph
    (C-SPARQL and SPARQLstream; CQELS names every window: RSP-QL, comparison table).
    """

    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()
    streams: tuple[str, ...] = ()
    windows: tuple[NamedWindow, ...] = ()
    default_windows: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [w.iri for w in self.windows]
        if len(set(names)) != len(names):
            raise ValueError(f"two windows with one name: {names}")
        unknown = [iri for iri in self.default_windows if iri not in names]
        if unknown:
            raise ValueError(f"default_windows names unknown windows: {unknown}")

    def window(self, iri: str) -> NamedWindow:
        """The named window ``iri``."""
        for named in self.windows:
            if named.iri == iri:
                return named
        raise KeyError(iri)


@dataclass(frozen=True)
class EventJoin(Node):
    """An event pattern joined with a graph pattern evaluated over the dataset: RSEP-QL's
    ``MATCH E`` beside other graph patterns (Sect. 3.3, 4.2), CQELS-CEP's
    ``JOIN([[EC, t]], [[P, t]]_D)`` (Eq. (1)).

    ``filters`` are the group's FILTERs over the event pattern's variables, applied to each
    solution of the join (SPARQL 1.1 sec. 18.2.2.6: a group's filters constrain the whole
    group, ``MATCH E`` a graph pattern of it, RSEP-QL Sect. 4.2); a FILTER over the graph
    pattern's variables only stays in ``graph`` (the same solutions)."""

    event: EventPattern
    graph: GraphPatternRef
    filters: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubSelect(EventPattern):
    """A sub-select over an EP-SPARQL event pattern, ``{ SELECT V WHERE { P } }`` (query (5)
    of Sect. 4.1): SPARQL 1.1's ``Project(Extend(P, v, e)…, V)`` (sec. 18.2.1 sub-select,
    18.2.4.1, 18.2.5.2) on solutions with intervals. Each solution ``⟨μ, tα, tω⟩`` of
    ``pattern`` is extended by ``expressions`` (``(v, text of e)``, in order, each reading
    the ones before it; an error leaves ``v`` unbound) and restricted to ``projection``,
    keeping its interval; as every function of Sect. 4.2 it yields a set. The outer pattern
    and the query form see the projected variables only."""

    pattern: EventPattern
    projection: tuple[str, ...]
    expressions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.projection:
            raise ValueError("a sub-select projects a variable at least (SELECT * is its pattern)")
        for name in self.projection:
            check_variable(name)
        missing = [name for name, _ in self.expressions if name not in self.projection]
        if missing:
            raise ValueError(f"a sub-select's expressions bind unprojected variables: {missing}")

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(self.projection) & (
            self.pattern.variables | {name for name, _ in self.expressions}
        )

    def __str__(self) -> str:
        return str(Select(self.projection, expressions=self.expressions))


R2R = GraphPatternRef | EventPattern | EventJoin


@dataclass(frozen=True)
class Output:
    """Where answers go: ``stream`` names the output stream (``REGISTER … <out>``);
    ``feedback`` feeds CONSTRUCT answers back into the input streams (EP-SPARQL Sect. 4.2)."""

    stream: str | None = None
    feedback: bool = False


@dataclass(frozen=True)
class Rule:
    """A CONSTRUCT statement ``q`` of EP-SPARQL's query set ``Q`` (Sect. 4.2): its WHERE
    pattern and its template ``P_q`` (triples with full IRIs). A sub-select around the WHERE
    part (query (5)) is part of the pattern (:class:`SubSelect`), so its ``(e AS ?v)`` are
    computed from each solution before ``P_q`` is instantiated. The triples its solutions
    derive re-enter the stream: ``clos_Q(S)``."""

    pattern: EventPattern
    template: str

    @classmethod
    def of(cls, plan: Plan) -> Rule:
        """The rule of a CONSTRUCT plan whose WHERE part is an event pattern: the one place
        a plan becomes a rule (the engine and the oracle both read :attr:`Plan.rules`)."""
        if not isinstance(plan.form, Construct):
            raise UserError(f"a CONSTRUCT rule needs a CONSTRUCT query, not {plan.form}")
        if not isinstance(plan.r2r, EventPattern):
            raise UserError(
                "a CONSTRUCT rule's WHERE part is an event pattern over the stream "
                f"(EP-SPARQL Sect. 4.2), not {type(plan.r2r).__name__}"
            )
        return cls(plan.r2r, plan.form.template)

    def __str__(self) -> str:
        return str(Construct(self.template))


@dataclass(frozen=True)
class Plan:
    """A continuous query ``(SE, SDS, ET, QF)`` with every operational choice explicit
    (RSP-QL Def. 11 and 24; RSEP-QL Def. 5).

    ``rules`` are the CONSTRUCT statements of other queries of EP-SPARQL's query set ``Q``
    whose derivations this query reads (``clos_Q(S)``, Sect. 4.2): part of the plan, so that
    every evaluator built from it (the oracle, the engine in this process or in Spark
    tasks) reads them. ``modifiers`` are the solution modifiers beside an event pattern,
    applied to each evaluation's answer (:mod:`rsep.algebra.modifiers`)."""

    form: QueryForm
    dataset: Dataset
    r2r: R2R
    parameters: Parameters = field(default_factory=Parameters.defaults)
    output: Output = field(default_factory=Output)
    rules: tuple[Rule, ...] = ()
    modifiers: Modifiers | None = None

    @property
    def closure_rules(self) -> tuple[Rule, ...]:
        """The rules of ``Q`` whose closure the pattern is evaluated over (EP-SPARQL
        Sect. 4.2): the plan itself when it is a CONSTRUCT fed back into its input, then
        :attr:`rules`."""
        own = (Rule.of(self),) if self.output.feedback and isinstance(self.form, Construct) else ()
        return (*own, *self.rules)

    @property
    def r2s(self) -> R2S:
        """The streaming operator (parameter ``r2s``)."""
        return self.parameters.r2s

    def report(self, window: str) -> ReportPolicy:
        """The report policy of the named window ``window``: its own, else ``window.report``."""
        named = self.dataset.window(window)
        return named.report if named.report is not None else self.parameters.report

    def present(self, window: str) -> PresentRule:
        """The present-window rule of ``window``: its own, else ``window.present``."""
        named = self.dataset.window(window)
        return named.present if named.present is not None else self.parameters.present

    @property
    def reports(self) -> dict[str, ReportPolicy]:
        """The report policy of every named window."""
        return {w.iri: self.report(w.iri) for w in self.dataset.windows}

    def sequences(self) -> tuple[EventPattern, ...]:
        """The SPAseq sequence expressions of ``r2r``, outermost (with their WITHIN and
        PARTITION BY): the patterns that run as automata (SPAseq Sect. 6)."""
        found: list[EventPattern] = []

        def visit(node: Node) -> None:
            if isinstance(node, _SPASEQ_ROOTS) and any(isinstance(n, Gpm) for n in node.walk()):
                found.append(node)
                return
            for child in node.children():
                visit(child)

        visit(self.r2r)
        return tuple(found)

    def nfas(self) -> tuple[Nfa, ...]:
        """The automaton of each sequence expression (:func:`compile_nfa`)."""
        return tuple(compile_nfa(pattern) for pattern in self.sequences())


_SPASEQ_ROOTS = (PartitionBy, Within, Sequence, Gpm, KleenePlus, Conjunction, Disjunction)


# explain -------------------------------------------------------------------------------


def _scalar(value: object) -> str:
    if isinstance(value, WindowFunction):
        return value.describe()
    if isinstance(value, Enum):
        return str(value)
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(str(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_scalar(v) for v in value) + ")"
    if isinstance(value, str):
        return value
    return repr(value)


def _pattern_text(ref: GraphPatternRef) -> str:
    names = " ".join("?" + v for v in sorted(ref.variables))
    return "{ " + str(ref) + " }" + (f"  binds {names}" if names else "")


def _tree(node: Node, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    if isinstance(node, GraphPatternRef):
        lines.append(f"{pad}graph pattern {_pattern_text(node)}")
        lines += [f"{pad}  joined with nested path {triple}" for triple in node.paths]
        return
    if isinstance(node, Gpm):
        lines.append(f"{pad}Gpm {node.name} on <{node.stream}> {_pattern_text(node.pattern)}")
        if node.graph_kb is not None:
            kb = node.graph_kb
            lines.append(f"{pad}  GRAPH <{kb.graph}> {_pattern_text(kb.pattern)}")
        return
    if isinstance(node, EventJoin):
        lines.append(pad + "EventJoin")
        _tree(node.event, depth + 1, lines)
        if not node.graph.empty:
            _tree(node.graph, depth + 1, lines)
        lines += [f"{pad}  FILTER ({text})  over the join" for text in node.filters]
        return
    parts = []
    for f in fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        if value is None or isinstance(value, Node):
            continue
        if isinstance(value, tuple) and any(isinstance(v, Node) for v in value):
            continue
        parts.append(f"{f.name}={_scalar(value)}")
    head = type(node).__name__
    if isinstance(node, Sequence | SubSelect):
        head += f" {node}"
    elif isinstance(node, Within):
        head += f" {format_duration(node.duration)}"
    elif parts:
        head += "(" + ", ".join(parts) + ")"
    lines.append(pad + head)
    for child in node.children():
        _tree(child, depth + 1, lines)


def _param_origin(plan: Plan, name: str) -> str:
    param = plan.parameters[name]
    return f"parameter {name}, {param.source}"


def explain(plan: Plan) -> str:
    """The plan as text: query form, dataset (each window with its report policy and
    present rule, and where they come from), the R2R tree, the R2S operator, the output,
    every parameter with its value, source and note, and the automaton of each sequence."""
    params = plan.parameters
    lines = ["plan", f"  form     {plan.form}"]
    lines.append("  dataset")
    ds = plan.dataset
    lines += [f"    default graph <{g}>" for g in ds.default_graphs]
    lines += [f"    named graph   <{g}>" for g in ds.named_graphs]
    lines += [f"    stream        <{s}>" for s in ds.streams]
    for named in ds.windows:
        where = " (in the default graph)" if named.iri in ds.default_windows else ""
        lines.append(f"    window        <{named.iri}> on <{named.stream}>{where}")
        lines.append(f"      {named.window.describe()}")
        if named.report is not None:
            lines.append(f"      report  {named.report}  (query text)")
        else:
            lines.append(f"      report  {params.report}  ({_param_origin(plan, 'window.report')})")
        if named.present is not None:
            lines.append(f"      present {named.present}  (query text)")
        else:
            origin = _param_origin(plan, "window.present")
            lines.append(f"      present {params.present}  ({origin})")
    if len(lines) == 3:
        lines.append("    (empty)")
    lines.append("  r2r")
    _tree(plan.r2r, 2, lines)
    if plan.modifiers is not None:
        lines.append(f"  modifiers {plan.modifiers}  (per evaluation, before R2S)")
    lines.append(f"  r2s      {plan.r2s}  ({_param_origin(plan, 'r2s')})")
    out = plan.output
    target = f"stream <{out.stream}>" if out.stream is not None else "answers"
    if out.feedback:
        target += ", fed back into the input"
    lines.append(f"  output   {target}")
    for number, rule in enumerate(plan.rules, start=1):
        lines.append(f"  rule {number}   {rule}  (EP-SPARQL Q-closure, Sect. 4.2)")
        _tree(rule.pattern, 2, lines)
    lines.append("parameters")
    rows = [
        (name, params.show(name), str(params.source(name)), params[name].note)
        for name in PARAMETERS
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for name, value, source, note in rows:
        line = f"  {name:<{widths[0]}}  {value:<{widths[1]}}  {source:<{widths[2]}}  {note}"
        lines.append(line.rstrip())
    for nfa in plan.nfas():
        lines.append("automaton")
        lines += ["  " + line for line in nfa.render().splitlines()]
    return "\n".join(lines) + "\n"
