"""The plan's operational parameters: every hidden choice, with its value and where it came from.

RSP-QL shows that C-SPARQL, CQELS and SPARQLstream answer the same query differently
because of choices their query languages do not state (t0, the report policy, the
streaming operator; RSP-QL, "Explaining heterogeneity"); RSEP-QL adds the selection and
consumption policies of event patterns, SPAseq the event selection strategies. rsep makes
each such choice a named parameter of the plan (:data:`PARAMETERS`), and records for each
value its :class:`Source`, so that ``rsep explain`` can say why a query runs as it does.

Values are typed (enums, :class:`~rsep.algebra.report.ReportPolicy`, integers of
milliseconds). :meth:`Parameters.with_value` also takes the text of ``PRAGMA name = value``
or ``--set name=value`` and parses it; a bare number in a time parameter counts the
``time_unit`` in force. A value outside the allowed ones raises :class:`ParameterError`
naming the parameter and the allowed values.

This registry is the one list of allowed values and their typed reading: ``rsep.lang`` only
knows the parameter names (``rsep.lang.dialects.PARAMETER_NAMES``, checked against this
registry at import), and ``rsep.algebra.compile`` checks the values a query's ``PRAGMA``, a
dialect default, a profile or ``--set`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Generic, TypeVar, cast

from rsep.algebra.events import ConsumptionPolicy, InputUnit, SelectionPolicy, Strategy
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import PresentRule, WindowBounds
from rsep.errors import UserError
from rsep.lang.dialects import PARAMETER_NAMES
from rsep.rdf.time import TimeUnit, datetime_to_ms, format_duration, parse_duration

__all__ = [
    "PARAMETERS",
    "PLAN_ONLY",
    "Entailment",
    "EntailmentScope",
    "Param",
    "ParameterError",
    "ParameterSpec",
    "Parameters",
    "Profile",
    "Source",
    "Timestamps",
]

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


class ParameterError(UserError):
    """A parameter with an unknown name, or a value it does not take."""


class _Named(Enum):
    """An enum whose text is its value, as ``PRAGMA`` and ``--set`` write it."""

    def __str__(self) -> str:
        return str(self.value)


class Source(_Named):
    """Where a parameter's value came from, weakest first (``rank``)."""

    BUILT_IN = "built-in"
    DIALECT_DEFAULT = "dialect default"
    PROFILE = "profile"
    QUERY_TEXT = "query text"
    COMMAND_LINE = "command line"

    @property
    def rank(self) -> int:
        """0 for ``BUILT_IN`` … 4 for ``COMMAND_LINE``."""
        return list(Source).index(self)


class Timestamps(_Named):
    """Whether stream items carry a time instant or an interval (``timestamps``): points in
    RSP-QL (Def. 9), RSEP-QL (Def. 1) and SPAseq (Def. 1); intervals ``[t, t']`` in EP-SPARQL
    (Sect. 4.2) and CQELS-CEP (Sect. 2.2)."""

    POINT = "point"
    INTERVAL = "interval"


class Entailment(_Named):
    """Which consequences of the background ontology a query reads (``entailment``): none
    (simple entailment, SPARQL 1.1 Sect. 18), the RDFS rules rdfs2, rdfs3, rdfs5, rdfs7,
    rdfs9, rdfs11 (RDF 1.1 Semantics Sect. 9.2), or the OWL 2 RL/RDF rules (OWL 2 Profiles
    Sect. 4.3); ``rsep.reasoning`` and docs/reasoning.md say which rules apply where."""

    NONE = "none"
    RDFS = "rdfs"
    OWL_RL = "owl_rl"


class EntailmentScope(_Named):
    """What ``entailment`` applies to (``entailment.scope``): the background graphs (each
    materialised once, each snapshot of a time-varying graph on its own), each stream item
    with the ontology's schema (EP-SPARQL Sect. 5, "Background knowledge"), or both."""

    BACKGROUND = "background"
    STREAM = "stream"
    BOTH = "both"

    @property
    def background(self) -> bool:
        """Whether the background graphs are materialised."""
        return self is not EntailmentScope.STREAM

    @property
    def stream(self) -> bool:
        """Whether each stream item is entailed."""
        return self is not EntailmentScope.BACKGROUND


class Profile(_Named):
    """An engine whose reporting conventions the query follows (``profile``): the CSR-Bench
    engine profiles, ``shared/data/csrbench/config/{csparql,cqels,sparqlstream}.properties``;
    ``none`` leaves the other parameters alone (``rsep.algebra.passes.apply_profile``)."""

    CSPARQL = "csparql"
    CQELS = "cqels"
    SPARQLSTREAM = "sparqlstream"
    NONE = "none"


@dataclass(frozen=True)
class Param(Generic[T]):
    """One parameter's value, its :class:`Source`, and a note saying why (e.g. the paper
    section or configuration file a default comes from)."""

    name: str
    value: T
    source: Source
    note: str = ""


@dataclass(frozen=True)
class ParameterSpec:
    """The documentation and validation of one parameter: name, value type, allowed values,
    built-in default, one-line meaning and the paper (section) that defines it."""

    name: str
    type_name: str
    allowed: str
    default: Any
    meaning: str
    paper: str
    parse: Callable[[str, TimeUnit], Any]
    check: Callable[[Any], bool]
    show: Callable[[Any], str] = str

    def coerce(self, raw: object, unit: TimeUnit = TimeUnit.MILLISECONDS) -> Any:
        """``raw`` as a value of this parameter: text is parsed, a typed value checked."""
        if isinstance(raw, str):
            try:
                return self.parse(raw, unit)
            except (ValueError, TypeError) as exc:
                raise ParameterError(
                    f"parameter {self.name}: {raw!r} is not allowed ({exc}); "
                    f"allowed: {self.allowed}"
                ) from None
        if not self.check(raw):
            raise ParameterError(
                f"parameter {self.name}: {raw!r} is not allowed; allowed: {self.allowed}"
            )
        return raw


def _enum_parser(cls: type[E]) -> Callable[[str, TimeUnit], E]:
    def parse(text: str, unit: TimeUnit) -> E:
        key = text.strip().strip("'\"").lower()
        for member in cls:
            if key in {str(member.value).lower(), member.name.lower()}:
                return member
        raise ValueError(f"unknown {cls.__name__} {text!r}")

    return parse


def _choices(cls: type[Enum]) -> str:
    return " | ".join(str(member.value) for member in cls)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _time_point(text: str, unit: TimeUnit) -> int:
    value = text.strip().strip("'\"")
    if "T" in value[1:] and "-" in value[1:]:
        return datetime_to_ms(value)
    return parse_duration(value, unit.value)


def _duration(text: str, unit: TimeUnit) -> int:
    ms = parse_duration(text.strip().strip("'\""), unit.value)
    if ms < 0:
        raise ValueError("a duration here cannot be negative")
    return ms


def _positive(text: str, unit: TimeUnit) -> int:
    number = int(text.strip().replace("_", ""))
    if number <= 0:
        raise ValueError("it must be a positive integer")
    return number


def _strategy(text: str, unit: TimeUnit) -> Strategy | None:
    if text.strip().lower() == "per_operator":
        return None
    return Strategy.parse(text)


def _boolean(text: str, unit: TimeUnit) -> bool:
    key = text.strip().lower()
    if key in {"true", "yes", "1", "on"}:
        return True
    if key in {"false", "no", "0", "off"}:
        return False
    raise ValueError("expected true or false")


def _time_unit(text: str, unit: TimeUnit) -> TimeUnit:
    return TimeUnit.parse(text.strip().strip("'\""))


_UNIT_NAMES = {
    TimeUnit.MILLISECONDS: "ms",
    TimeUnit.SECONDS: "s",
    TimeUnit.MINUTES: "min",
    TimeUnit.HOURS: "h",
}


def _spec_enum(
    name: str, cls: type[Enum], default: Enum, meaning: str, paper: str
) -> ParameterSpec:
    return ParameterSpec(
        name=name,
        type_name=cls.__name__,
        allowed=_choices(cls),
        default=default,
        meaning=meaning,
        paper=paper,
        parse=_enum_parser(cls),
        check=lambda value: isinstance(value, cls),
    )


_SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        name="window.t0",
        type_name="int (ms)",
        allowed="a time point: an integer count of time_unit, a duration, or a dateTime",
        default=0,
        meaning="the instant at which a sliding window's first window opens",
        paper="RSP-QL Def. 13 (t0); Def. 25-26 and CSR-Bench's firstt0",
        parse=_time_point,
        check=_is_int,
        show=str,
    ),
    _spec_enum(
        "window.present",
        PresentRule,
        PresentRule.LATEST,
        "which window(s) of a sliding window an evaluation at t_now reads",
        "RSP-QL, present window after Def. 13 (latest) and Example 7 (closing); "
        "RSEP-QL Sect. 3.2, W^τ (last_ended)",
    ),
    _spec_enum(
        "window.bounds",
        WindowBounds,
        WindowBounds.OPEN_CLOSED,
        "which boundary instants of a window (o, c] hold its items",
        "RSP-QL Def. 12 ((o, c]); the YABench oracle reads [o, c]",
    ),
    ParameterSpec(
        name="window.report",
        type_name="ReportPolicy",
        allowed="a set of " + ReportPolicy.ALLOWED + ", joined by + or ,",
        default=ReportPolicy.parse("window_close+non_empty"),
        meaning="when a window reports, i.e. the evaluation instants ET",
        paper="RSP-QL Def. 23 (after SECRET); Example 9-10 (WC ∧ NC)",
        parse=lambda text, unit: ReportPolicy.parse(text, unit.value),
        check=lambda value: isinstance(value, ReportPolicy),
    ),
    _spec_enum(
        "r2s",
        R2S,
        R2S.RSTREAM,
        "the streaming operator that turns each evaluation's answer into a stream",
        "RSP-QL Def. 20-22",
    ),
    ParameterSpec(
        name="output.empty",
        type_name="bool",
        allowed="true | false",
        default=False,
        meaning="whether an evaluation whose answer is empty is reported (an empty relation)",
        paper="CSR-Bench engine profiles, system.output.emptyrelation (RSP-QL, Correctness)",
        parse=_boolean,
        check=lambda value: isinstance(value, bool),
        show=lambda value: "true" if value else "false",
    ),
    ParameterSpec(
        name="time_unit",
        type_name="TimeUnit",
        allowed="ms | s | min | h",
        default=TimeUnit.MILLISECONDS,
        meaning="the unit of bare numbers in durations and time points, and of integer "
        "timestamps in the stream files rsep run reads",
        paper="RSP-QL Def. 8 (time unit)",
        parse=_time_unit,
        check=lambda value: isinstance(value, TimeUnit),
        show=lambda value: _UNIT_NAMES[value],
    ),
    ParameterSpec(
        name="lateness",
        type_name="int (ms)",
        allowed="a non-negative duration (PT2S, 2s, 2000ms, or a count of time_unit)",
        default=0,
        meaning="how late an item may arrive after the watermark of event time",
        paper="RSP-QL Def. 9 (streams in time order: lateness 0) and Conclusions",
        parse=_duration,
        check=lambda value: _is_int(value) and value >= 0,
        show=format_duration,
    ),
    ParameterSpec(
        name="strategy",
        type_name="Strategy",
        allowed="strict | skip_till_next | skip_till_any | per_operator",
        default=Strategy.SKIP_TILL_ANY,
        meaning="event selection strategy of sequences that do not state their own",
        paper="SPAseq Sect. 2.3, 4.2.2, Def. 10-12",
        parse=_strategy,
        check=lambda value: value is None or isinstance(value, Strategy),
        show=lambda value: "per_operator" if value is None else str(value),
    ),
    _spec_enum(
        "selection",
        SelectionPolicy,
        SelectionPolicy.UNRESTRICTED,
        "which matches of its operands a SEQ selects",
        "RSEP-QL Sect. 4.3, Eq. (7), (9)-(11)",
    ),
    _spec_enum(
        "consumption",
        ConsumptionPolicy,
        ConsumptionPolicy.NONE,
        "whether items that contributed to an answer are used again",
        "RSEP-QL Sect. 4.4, Def. 8-10",
    ),
    _spec_enum(
        "input_unit",
        InputUnit,
        InputUnit.TRIPLE,
        "what a consumption policy consumes: a triple of the window (from every item that "
        "holds it), or the triple of one stream item",
        "RSEP-QL Def. 8-10 (sets of triples) vs. Sect. 2 and Example 11 (stream items)",
    ),
    _spec_enum(
        "timestamps",
        Timestamps,
        Timestamps.POINT,
        "whether stream items carry a time instant or an interval",
        "RSP-QL Def. 9, RSEP-QL Def. 1; EP-SPARQL Sect. 4.2, CQELS-CEP Sect. 2.2",
    ),
    _spec_enum(
        "profile",
        Profile,
        Profile.NONE,
        "the engine whose report policy, streaming operator and present window to follow",
        "RSP-QL, comparison of C-SPARQL, CQELS and SPARQLstream; CSR-Bench profiles",
    ),
    _spec_enum(
        "entailment",
        Entailment,
        Entailment.NONE,
        "which consequences of the background ontology the patterns read: none, the RDFS "
        "rules or the OWL 2 RL rules",
        "EP-SPARQL Sect. 5 (background knowledge) and Sect. 6 Test 2; RDF 1.1 Semantics "
        "Sect. 9.2; OWL 2 Profiles Sect. 4.3",
    ),
    _spec_enum(
        "entailment.scope",
        EntailmentScope,
        EntailmentScope.BOTH,
        "what entailment applies to: the background graphs, each stream item with the "
        "ontology's schema, or both",
        "EP-SPARQL Sect. 5: streams reasoned with background knowledge",
    ),
    ParameterSpec(
        name="max_runs",
        type_name="int",
        allowed="a positive integer",
        default=100_000,
        meaning="bound on live partial matches (runs); the engine fails with an error beyond",
        paper="SPAseq Sect. 7.1, Theorem 3 (Kleene+ runs grow quadratically)",
        parse=_positive,
        check=lambda value: _is_int(value) and value > 0,
    ),
    ParameterSpec(
        name="max_window_events",
        type_name="int",
        allowed="a positive integer",
        default=1_000_000,
        meaning="bound on the items one window or landmark may hold; an error beyond",
        paper="RSEP-QL Sect. 3.2 (landmark windows have no eviction)",
        parse=_positive,
        check=lambda value: _is_int(value) and value > 0,
    ),
)

_BUILT_IN_NOTES = {
    "window.t0": "CSR-Bench runs every query with window.firstt0 = 0",
    "window.present": "RSP-QL's definition of the present window (after Def. 13)",
    "window.bounds": "RSP-QL Def. 12: t ∈ (o, c]",
    "window.report": "the policy of RSP-QL's query Q^ex, P = WC ∧ NC (Example 10)",
    "r2s": "Q^ex streams its answers out with Rstream (RSP-QL Example 10)",
    "output.empty": "RSP-QL Def. 20-22: an empty answer streams out no mapping (only the "
    "csparql profile reports an empty relation)",
    "time_unit": "rsep's clock counts milliseconds (DESIGN.md, Data model)",
    "lateness": "an RDF stream is in non-decreasing time order (RSP-QL Def. 9)",
    "strategy": "SEQ as RSEP-QL Eq. (7), EP-SPARQL SeqJoin and CQELS-CEP SEQ define it: "
    "every compatible ordered combination",
    "selection": "RSEP-QL Eq. (7) takes all possible matches",
    "consumption": "P^u returns the full input at every evaluation (RSEP-QL Sect. 4.4)",
    "input_unit": "RSEP-QL Def. 8-9 literally: I_i and Δ_i are sets of triples",
    "timestamps": "a stream item is (d, t) or (G, t) (RSP-QL Def. 9, RSEP-QL Def. 1)",
    "profile": "no engine profile: the other parameters apply as they are",
    "entailment": "SPARQL 1.1 evaluates basic graph patterns under simple entailment",
    "entailment.scope": "when entailment is asked, the background graphs and the stream items",
    "max_runs": "DESIGN.md: bound every state that can grow",
    "max_window_events": "DESIGN.md: bound every state that can grow",
}

PARAMETERS: Mapping[str, ParameterSpec] = {spec.name: spec for spec in _SPECS}

PLAN_ONLY = frozenset({"window.bounds", "output.empty", "max_runs", "max_window_events"})
"""The parameters a query cannot set with ``PRAGMA`` and no dialect gives a default for:
``--set`` and the engine profiles set them. Every other name is one of
:data:`rsep.lang.dialects.PARAMETER_NAMES`, the names ``PRAGMA`` takes."""

if set(PARAMETERS) != set(PARAMETER_NAMES) | PLAN_ONLY:  # pragma: no cover - a coding error
    raise AssertionError(
        "rsep.algebra.params.PARAMETERS must be rsep.lang's PARAMETER_NAMES plus "
        f"{sorted(PLAN_ONLY)}; they differ in "
        f"{sorted(set(PARAMETERS) ^ (set(PARAMETER_NAMES) | PLAN_ONLY))}"
    )


def _spec(name: str) -> ParameterSpec:
    try:
        return PARAMETERS[name]
    except KeyError:
        known = ", ".join(PARAMETERS)
        raise ParameterError(f"unknown parameter {name!r} (known: {known})") from None


@dataclass(frozen=True)
class Parameters(Mapping[str, Param[Any]]):
    """An immutable mapping from every parameter name of :data:`PARAMETERS` to its
    :class:`Param`, in registry order."""

    params: tuple[Param[Any], ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if names != list(PARAMETERS):
            raise ValueError(f"parameters must be exactly {list(PARAMETERS)}, not {names}")

    @classmethod
    def defaults(cls) -> Parameters:
        """Every parameter at its built-in default."""
        return cls(
            tuple(
                Param(spec.name, spec.default, Source.BUILT_IN, _BUILT_IN_NOTES.get(spec.name, ""))
                for spec in _SPECS
            )
        )

    def __getitem__(self, name: str) -> Param[Any]:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (param.name for param in self.params)

    def __len__(self) -> int:
        return len(self.params)

    def value(self, name: str) -> Any:
        """The value of parameter ``name``."""
        return self[_spec(name).name].value

    def source(self, name: str) -> Source:
        """Where the value of parameter ``name`` came from."""
        return self[_spec(name).name].source

    def show(self, name: str) -> str:
        """The value of ``name`` as text, in the form ``--set name=value`` takes."""
        return _spec(name).show(self.value(name))

    def with_value(self, name: str, value: object, source: Source, note: str = "") -> Parameters:
        """A copy with ``name`` set to ``value`` (typed, or text to parse) from ``source``."""
        spec = _spec(name)
        coerced = spec.coerce(value, self.time_unit)
        return replace(
            self,
            params=tuple(
                Param(name, coerced, source, note) if p.name == name else p for p in self.params
            ),
        )

    def with_values(
        self, values: Mapping[str, object], source: Source, note: str = ""
    ) -> Parameters:
        """A copy with every ``name: value`` of ``values`` set; ``time_unit`` first, so that
        bare numbers in the others count the new unit."""
        out = self
        ordered = sorted(values.items(), key=lambda item: item[0] != "time_unit")
        for name, value in ordered:
            out = out.with_value(name, value, source, note)
        return out

    # Typed access ------------------------------------------------------------------

    @property
    def t0(self) -> int:
        """``window.t0`` in ms."""
        return cast(int, self.value("window.t0"))

    @property
    def present(self) -> PresentRule:
        """``window.present``."""
        return cast(PresentRule, self.value("window.present"))

    @property
    def bounds(self) -> WindowBounds:
        """``window.bounds``."""
        return cast(WindowBounds, self.value("window.bounds"))

    @property
    def report(self) -> ReportPolicy:
        """``window.report``."""
        return cast(ReportPolicy, self.value("window.report"))

    @property
    def r2s(self) -> R2S:
        """``r2s``."""
        return cast(R2S, self.value("r2s"))

    @property
    def output_empty(self) -> bool:
        """``output.empty``."""
        return cast(bool, self.value("output.empty"))

    @property
    def time_unit(self) -> TimeUnit:
        """``time_unit``."""
        return cast(TimeUnit, self.value("time_unit"))

    @property
    def lateness(self) -> int:
        """``lateness`` in ms."""
        return cast(int, self.value("lateness"))

    @property
    def strategy(self) -> Strategy | None:
        """``strategy``; ``None`` is ``per_operator``."""
        return cast("Strategy | None", self.value("strategy"))

    @property
    def selection(self) -> SelectionPolicy:
        """``selection``."""
        return cast(SelectionPolicy, self.value("selection"))

    @property
    def consumption(self) -> ConsumptionPolicy:
        """``consumption``."""
        return cast(ConsumptionPolicy, self.value("consumption"))

    @property
    def input_unit(self) -> InputUnit:
        """``input_unit``."""
        return cast(InputUnit, self.value("input_unit"))

    @property
    def timestamps(self) -> Timestamps:
        """``timestamps``."""
        return cast(Timestamps, self.value("timestamps"))

    @property
    def profile(self) -> Profile:
        """``profile``."""
        return cast(Profile, self.value("profile"))

    @property
    def entailment(self) -> Entailment:
        """``entailment``."""
        return cast(Entailment, self.value("entailment"))

    @property
    def entailment_scope(self) -> EntailmentScope:
        """``entailment.scope``."""
        return cast(EntailmentScope, self.value("entailment.scope"))

    @property
    def max_runs(self) -> int:
        """``max_runs``."""
        return cast(int, self.value("max_runs"))

    @property
    def max_window_events(self) -> int:
        """``max_window_events``."""
        return cast(int, self.value("max_window_events"))
