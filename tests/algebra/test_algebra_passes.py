"""Plan rewrites: binarise_sequences, apply_profile, override."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rsep.algebra.events import CepItem, CepSeq, CepWindow, GraphPatternRef
from rsep.algebra.params import ParameterError, Parameters, Profile, Source
from rsep.algebra.passes import (
    PROFILES,
    Associativity,
    apply_profile,
    binarise,
    binarise_sequences,
    override,
)
from rsep.algebra.plan import R2R, Dataset, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import PresentRule, TimeWindow

P1 = GraphPatternRef("?v :delayAt ?s", frozenset({"v", "s"}))
P2 = GraphPatternRef("?v :arriveAt ?s", frozenset({"v", "s"}))


def ref(i: int) -> GraphPatternRef:
    return GraphPatternRef(f"?x{i} :p ?y", frozenset({f"x{i}", "y"}))


def plan_of(r2r: R2R, params: Parameters | None = None) -> Plan:
    return Plan(
        Select(),
        Dataset(),
        r2r,
        params if params is not None else Parameters.defaults(),
    )


def test_cqels_cep_example_8_shape() -> None:
    """SEQ(P1, P1, !P2) is NO_TAIL(SEQ(P1, P1), P2) (Eq. (14), Example 8)."""
    seq = CepSeq.of(P1, P1, CepItem(P2, negated=True))
    out = binarise(seq)
    assert out == CepSeq((CepItem(CepSeq.of(P1, P1)), CepItem(P2, negated=True)))
    assert isinstance(out, CepSeq) and out.no_tail


def test_positive_sequences_nest() -> None:
    """SEQ(W1, …, Wn) = SEQ(W1, SEQ(W2, …, Wn)) (Eq. (3), (10)); EP-SPARQL's is left."""
    a, b, c, d = (ref(i) for i in range(4))
    seq = CepSeq.of(a, b, c, d)
    right = CepSeq.of(a, CepItem(CepSeq.of(b, CepItem(CepSeq.of(c, d)))))
    left = CepSeq.of(CepItem(CepSeq.of(CepItem(CepSeq.of(a, b)), c)), d)
    assert binarise(seq) == right
    assert binarise(seq, Associativity.LEFT) == left
    assert binarise(CepSeq.of(a, b)) == CepSeq.of(a, b)


def test_seq_without_and_no_head() -> None:
    """Eq. (5), (6): SEQ_WO(SEQ(W1 … Wi-1), Wi, SEQ(Wi+1 … Wn)); NO_HEAD(W1, SEQ(W2 … Wn))."""
    a, b, c, d, e = (ref(i) for i in range(5))
    neg = CepItem(c, negated=True)
    out = binarise(CepSeq.of(a, b, neg, d, e))
    assert out == CepSeq((CepItem(CepSeq.of(a, b)), neg, CepItem(CepSeq.of(d, e))))
    assert isinstance(out, CepSeq) and out.seq_wo
    head = binarise(CepSeq.of(CepItem(a, negated=True), b, c))
    assert head == CepSeq((CepItem(a, negated=True), CepItem(CepSeq.of(b, c))))
    assert binarise(CepSeq.of(a, neg, d)) == CepSeq.of(a, neg, d)


def flatten(item: CepItem) -> list[tuple[str, bool]]:
    if isinstance(item.pattern, CepSeq) and not item.negated:
        return [x for i in item.pattern.items for x in flatten(i)]
    return [(str(item.pattern), item.negated)]


@given(
    st.integers(2, 9),
    st.one_of(st.none(), st.integers(0, 8)),
    st.sampled_from(list(Associativity)),
)
def test_binarise_is_binary_order_preserving_and_idempotent(
    n: int, negated: int | None, associativity: Associativity
) -> None:
    items = tuple(CepItem(ref(i), negated=(i == negated)) for i in range(n))
    seq = CepSeq(items)
    out = binarise(seq, associativity)
    for node in out.walk():
        if isinstance(node, CepSeq):
            assert len(node.items) == 2 or (len(node.items) == 3 and node.items[1].negated)
    assert isinstance(out, CepSeq)
    assert flatten(CepItem(out)) == [(str(i.pattern), i.negated) for i in items]
    assert binarise(out, associativity) == out


def test_binarise_sequences_on_a_plan() -> None:
    window = CepWindow(
        "http://ex.org/W",
        "http://ex.org/transport",
        TimeWindow(600_000, 1),
        CepSeq.of(P1, P1, CepItem(P2, True)),
    )
    plan = plan_of(window)
    out = binarise_sequences(plan)
    nested = binarise(window.pattern)
    assert isinstance(nested, CepSeq)
    assert out.r2r == CepWindow(window.name, window.stream, window.window, nested)
    assert plan.r2r == window  # the input is unchanged
    assert binarise_sequences(out) is out
    untouched = plan_of(P1)
    assert binarise_sequences(untouched) is untouched


def with_profile(profile: str, source: Source) -> Plan:
    return plan_of(P1, Parameters.defaults().with_value("profile", profile, source))


@pytest.mark.parametrize(
    ("profile", "report", "r2s", "empty"),
    [
        ("csparql", "window_close+non_empty", R2S.RSTREAM, True),
        ("cqels", "new_content+non_empty", R2S.ISTREAM, False),
        ("sparqlstream", "window_close+non_empty", R2S.RSTREAM, False),
    ],
)
def test_profiles(profile: str, report: str, r2s: R2S, empty: bool) -> None:
    """csrbench/config/<engine>.properties: policy, output operator, empty relations."""
    out = apply_profile(with_profile(profile, Source.COMMAND_LINE)).parameters
    assert out.report == ReportPolicy.parse(report)
    assert out.r2s is r2s
    assert out.output_empty is empty
    assert out.present is PresentRule.CLOSING
    for name in ("window.report", "r2s", "window.present", "output.empty"):
        assert out.source(name) is Source.PROFILE
        assert out[name].note.startswith(f"profile {profile}: ")
    assert out.source("window.t0") is Source.BUILT_IN


def test_profile_files_agree(shared_data: object) -> None:
    """The settings follow the CSR-Bench property files."""
    from pathlib import Path

    config = Path(str(shared_data)) / "csrbench" / "config"
    for profile, (settings, _) in PROFILES.items():
        if profile is Profile.NONE:
            assert settings == {}
            continue
        props = {}
        for line in (config / f"{profile.value}.properties").read_text().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.split("=", 1)
                props[key.strip()] = value.strip()
        report = settings["window.report"]
        assert isinstance(report, ReportPolicy)
        assert ("window_close" in str(report)) == (props["system.policy.windowclose"] == "true")
        assert ("non_empty" in str(report)) == (props["system.policy.nonemptycontent"] == "true")
        # contentchange is read as arrivals, new_content (docs/semantics.md, item 17)
        assert ("new_content" in str(report)) == (props["system.policy.contentchange"] == "true")
        assert settings["output.empty"] == (props["system.output.emptyrelation"] == "true")
        outputs = {v for k, v in props.items() if k.endswith(".output")}
        assert outputs == {str(settings["r2s"])}


def test_profile_precedence() -> None:
    """Query text and command line values stay; a profile replaces built-in values and
    dialect defaults, wherever the profile itself was chosen (docs/languages.md)."""
    params = (
        Parameters.defaults()
        .with_value("profile", "cqels", Source.COMMAND_LINE)
        .with_value("r2s", "rstream", Source.QUERY_TEXT)
        .with_value("window.report", "window_close", Source.DIALECT_DEFAULT)
    )
    out = apply_profile(plan_of(P1, params)).parameters
    assert (out.r2s, out.source("r2s")) == (R2S.RSTREAM, Source.QUERY_TEXT)
    assert out.report == ReportPolicy.parse("new_content+non_empty")
    dialect = (
        Parameters.defaults()
        .with_value("profile", "csparql", Source.DIALECT_DEFAULT)
        .with_value("window.present", "latest", Source.DIALECT_DEFAULT)
    )
    out = apply_profile(plan_of(P1, dialect)).parameters
    assert (out.present, out.source("window.present")) == (PresentRule.CLOSING, Source.PROFILE)
    assert (out.output_empty, out.source("output.empty")) == (True, Source.PROFILE)
    assert (str(out.bounds), out.source("window.bounds")) == ("closed_open", Source.PROFILE)


def test_apply_profile_is_idempotent_and_none_is_a_no_op() -> None:
    plan = with_profile("csparql", Source.QUERY_TEXT)
    once = apply_profile(plan)
    assert apply_profile(once) is once
    plain = plan_of(P1)
    assert apply_profile(plain) is plain
    switched = apply_profile(override(once, {"profile": "cqels"}))
    assert switched.parameters.r2s is R2S.ISTREAM


def test_override() -> None:
    plan = plan_of(P1)
    out = override(plan, {"r2s": "istream", "window.t0": "10", "time_unit": "s"})
    assert out.parameters.r2s is R2S.ISTREAM
    assert out.parameters.t0 == 10_000
    assert {out.parameters.source(n) for n in ("r2s", "window.t0", "time_unit")} == {
        Source.COMMAND_LINE
    }
    assert out.parameters["r2s"].note == "--set"
    assert plan.parameters.r2s is R2S.RSTREAM
    assert override(plan, {}) is plan
    with pytest.raises(ParameterError, match="parameter r2s: 'xstream' is not allowed"):
        override(plan, {"r2s": "xstream"})
