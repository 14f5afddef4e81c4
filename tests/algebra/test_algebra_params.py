"""The parameter registry: documentation, validation and provenance."""

from __future__ import annotations

import pytest

from rsep.algebra.events import ConsumptionPolicy, InputUnit, SelectionPolicy, Strategy
from rsep.algebra.params import (
    PARAMETERS,
    Entailment,
    EntailmentScope,
    Param,
    ParameterError,
    Parameters,
    Profile,
    Source,
    Timestamps,
)
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import PresentRule, WindowBounds
from rsep.errors import UserError
from rsep.rdf.time import TimeUnit

NAMES = [
    "window.t0",
    "window.present",
    "window.bounds",
    "window.report",
    "r2s",
    "output.empty",
    "time_unit",
    "lateness",
    "strategy",
    "selection",
    "consumption",
    "input_unit",
    "timestamps",
    "profile",
    "entailment",
    "entailment.scope",
    "max_runs",
    "max_window_events",
]


def test_registry_documents_every_parameter() -> None:
    assert list(PARAMETERS) == NAMES
    for spec in PARAMETERS.values():
        assert spec.meaning and spec.paper and spec.allowed and spec.type_name
        assert spec.check(spec.default), spec.name
        assert spec.coerce(spec.show(spec.default)) == spec.default, spec.name


def test_defaults() -> None:
    params = Parameters.defaults()
    assert list(params) == NAMES and len(params) == len(NAMES)
    assert {params.source(name) for name in params} == {Source.BUILT_IN}
    assert all(params[name].note for name in params)
    assert params.t0 == 0
    assert params.present is PresentRule.LATEST
    assert params.bounds is WindowBounds.OPEN_CLOSED
    assert params.report == ReportPolicy.parse("window_close+non_empty")
    assert params.r2s is R2S.RSTREAM
    assert params.output_empty is False
    assert params.time_unit is TimeUnit.MILLISECONDS
    assert params.lateness == 0
    assert params.strategy is Strategy.SKIP_TILL_ANY
    assert params.selection is SelectionPolicy.UNRESTRICTED
    assert params.consumption is ConsumptionPolicy.NONE
    assert params.input_unit is InputUnit.TRIPLE
    assert params.timestamps is Timestamps.POINT
    assert params.profile is Profile.NONE
    assert params.max_runs == 100_000 and params.max_window_events == 1_000_000


def test_with_value_records_provenance_and_copies() -> None:
    base = Parameters.defaults()
    changed = base.with_value("r2s", "ISTREAM", Source.QUERY_TEXT, "REGISTER ISTREAM")
    assert changed["r2s"] == Param("r2s", R2S.ISTREAM, Source.QUERY_TEXT, "REGISTER ISTREAM")
    assert base.r2s is R2S.RSTREAM  # unchanged
    assert changed != base and changed == base.with_value(
        "r2s", R2S.ISTREAM, Source.QUERY_TEXT, "REGISTER ISTREAM"
    )
    assert hash(changed) == hash(
        base.with_value("r2s", "istream", Source.QUERY_TEXT, "REGISTER ISTREAM")
    )


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("window.t0", "1000", 1000),
        ("window.t0", "PT1S", 1000),
        ("window.t0", "'1970-01-01T00:00:01Z'", 1000),
        ("window.present", "closing", PresentRule.CLOSING),
        ("window.present", "all_ended", PresentRule.ALL_ENDED),
        ("window.bounds", "closed", WindowBounds.CLOSED),
        ("window.report", "window_close, non_empty", ReportPolicy.parse("window_close+non_empty")),
        ("window.report", "periodic(PT5S)", ReportPolicy.parse("periodic(5s)")),
        ("r2s", "dstream", R2S.DSTREAM),
        ("output.empty", "true", True),
        ("time_unit", "s", TimeUnit.SECONDS),
        ("lateness", "PT2S", 2000),
        ("strategy", "per_operator", None),
        ("strategy", ";", Strategy.SKIP_TILL_NEXT),
        ("selection", "naive", SelectionPolicy.NAIVE),
        ("consumption", "recent", ConsumptionPolicy.RECENT),
        ("input_unit", "occurrence", InputUnit.OCCURRENCE),
        ("input_unit", "TRIPLE", InputUnit.TRIPLE),
        ("timestamps", "interval", Timestamps.INTERVAL),
        ("profile", "sparqlstream", Profile.SPARQLSTREAM),
        ("max_runs", "1_000", 1000),
    ],
)
def test_text_values(name: str, text: str, value: object) -> None:
    params = Parameters.defaults().with_value(name, text, Source.COMMAND_LINE)
    assert params.value(name) == value
    assert params.source(name) is Source.COMMAND_LINE


def test_dialect_default_vocabulary() -> None:
    """Every value docs/languages.md gives as a dialect default is accepted."""
    table = {
        "window.t0": ["0"],
        "window.present": ["latest", "closing"],
        "window.report": ["window_close,non_empty", "content_change,non_empty", "content_change"],
        "r2s": ["rstream", "istream"],
        "time_unit": ["ms", "s"],
        "lateness": ["PT0S"],
        "strategy": ["skip_till_any", "per_operator"],
        "selection": ["unrestricted", "naive"],
        "consumption": ["none"],
        "input_unit": ["triple"],
        "timestamps": ["point", "interval"],
        "profile": ["csparql", "cqels"],
    }
    params = Parameters.defaults()
    for name, texts in table.items():
        for text in texts:
            params = params.with_value(name, text, Source.DIALECT_DEFAULT)


def test_bare_numbers_count_the_time_unit() -> None:
    params = Parameters.defaults().with_values(
        {"lateness": "2", "window.t0": "5", "time_unit": "s"}, Source.QUERY_TEXT
    )
    assert (params.lateness, params.t0) == (2000, 5000)
    assert params.show("lateness") == "2s" and params.show("time_unit") == "s"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "window.present",
            "newest",
            "parameter window.present: 'newest' is not allowed.*"
            "allowed: latest \\| closing \\| last_ended \\| all_ended",
        ),
        ("r2s", "xstream", "allowed: rstream \\| istream \\| dstream"),
        ("window.report", "on_close", "allowed: a set of content_change"),
        ("lateness", "-PT1S", "cannot be negative"),
        ("max_runs", "0", "positive integer"),
        ("max_runs", 2.5, "parameter max_runs: 2.5 is not allowed; allowed: a positive integer"),
        ("output.empty", "maybe", "expected true or false"),
        ("strategy", "greedy", "allowed: strict \\| skip_till_next"),
        (
            "input_unit",
            "item",
            "parameter input_unit: 'item' is not allowed.*triple \\| occurrence",
        ),
        ("r2s", "istream ", None),
        ("window.t0", True, "window.t0: True is not allowed"),
        ("profile", Profile, "profile"),
    ],
)
def test_invalid_values(name: str, value: object, message: str | None) -> None:
    params = Parameters.defaults()
    if message is None:
        params.with_value(name, value, Source.QUERY_TEXT)
        return
    with pytest.raises(ParameterError, match=message) as caught:
        params.with_value(name, value, Source.QUERY_TEXT)
    assert isinstance(caught.value, UserError)


def test_unknown_name() -> None:
    with pytest.raises(
        ParameterError, match=r"unknown parameter 'window\.slide' \(known: window\.t0, "
    ):
        Parameters.defaults().with_value("window.slide", "1", Source.COMMAND_LINE)
    with pytest.raises(ParameterError, match="unknown parameter"):
        Parameters.defaults().value("nope")


def test_parameters_must_be_complete() -> None:
    with pytest.raises(ValueError, match="exactly"):
        Parameters(Parameters.defaults().params[1:])


def test_source_ranks() -> None:
    assert [s.rank for s in Source] == [0, 1, 2, 3, 4]
    assert str(Source.COMMAND_LINE) == "command line"


def test_entailment_and_its_scope() -> None:
    """``entailment`` (none | rdfs | owl_rl) and ``entailment.scope`` (background | stream |
    both) read from text as PRAGMA and --set give them; a bad value names the allowed ones."""
    params = Parameters.defaults()
    assert params.entailment is Entailment.NONE
    assert params.entailment_scope is EntailmentScope.BOTH
    params = params.with_value("entailment", "OWL_RL", Source.QUERY_TEXT).with_value(
        "entailment.scope", "stream", Source.COMMAND_LINE
    )
    assert params.entailment is Entailment.OWL_RL and params.show("entailment") == "owl_rl"
    assert params.entailment_scope is EntailmentScope.STREAM
    assert params.entailment_scope.stream and not params.entailment_scope.background
    assert EntailmentScope.BOTH.stream and EntailmentScope.BOTH.background
    with pytest.raises(ParameterError, match=r"allowed: none \| rdfs \| owl_rl"):
        params.with_value("entailment", "owl_dl", Source.COMMAND_LINE)
