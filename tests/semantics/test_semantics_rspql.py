"""The oracle on RSP-QL's running example (seed 003, Examples 1-13 and Figure 5).

Data: S_nearby (Example 3), S_coupon (Example 5), g_shops (Example 1) and the time-varying
G_shops (Example 4), in ``tests/semantics/data``. Where an example departs from the
definitions, the test asserts what the definitions give and names the reading that
reproduces the example (docs/semantics.md).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from semantics_data import (
    DATA,
    EX,
    Q_EX_RSPQL,
    S_COUPON,
    S_NEARBY,
    graphs_by_time,
    plan,
    rspql_streams,
    short,
    table,
    triples_stream,
)

from rsep.algebra.compile import compile_query
from rsep.algebra.passes import apply_profile
from rsep.algebra.plan import Construct, Plan, Select
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import IntervalWindow, NamedWindow, TimeWindow
from rsep.lang import get_dialect, parse_query
from rsep.rdf.event import StreamSet
from rsep.semantics import (
    ContinuousQuery,
    Graph,
    TimeVaryingGraph,
    evaluate,
    read_graph,
    read_time_varying_graph,
    unnamed_window,
)

W1 = NamedWindow(EX + "w1", S_NEARBY, TimeWindow(5, 2, 1))
"""𝕎1 over S_nearby, (α = 5, β = 2, t0 = 1) (Example 7)."""
WC_NC = ReportPolicy.parse("window_close+non_empty")
W2 = NamedWindow(EX + "w2", S_COUPON, TimeWindow(2, 2, 0), report=WC_NC)
"""𝕎2 over S_coupon, (α = 2, β = 2, t0 = 0), with P = WC[𝕎2] ∧ NC[𝕎2] (Examples 8-10)."""

Q_EX = """
    GRAPH :w1 { ?shopper :isNearby ?shop }
    GRAPH :w2 { ?shop_owner :offers ?coupon }
    ?shop_owner :owns ?shop
"""
"""The WHERE clause of Q^ex (Example 10)."""

ALL = "SELECT ?s ?p ?o WHERE { GRAPH <w> { ?s ?p ?o } }"


def shops() -> dict[str, Graph | TimeVaryingGraph]:
    return {EX + "G_shops": read_time_varying_graph(DATA / "G_shops.trig")}


def q_ex(present: str, r2s: str = "rstream") -> Plan:
    """Q^ex = (SE, SDS, ET, QF) of Example 10: SDS = {G_0 = G_shops, (w1, 𝕎1(S_nearby)),
    (w2, 𝕎2(S_coupon))}, Rstream, SELECT of all variables, ET by P on 𝕎2."""
    return plan(
        Q_EX,
        [W1, W2],
        form=Select(("shopper", "shop", "shop_owner", "coupon")),
        default_graphs=[EX + "G_shops"],
        params={"window.present": present, "r2s": r2s},
    )


def window_items(window: NamedWindow, t: int, present: str) -> list[str]:
    """The statements of ``window`` at ``t``, read through a one-window query."""
    query = ContinuousQuery(
        plan("GRAPH ?w { ?s ?p ?o }", [window], params={"window.present": present}),
        rspql_streams(),
    )
    return sorted(" ".join(short(mu[v]) for v in ("s", "p", "o")) for mu in query.eval(t))


# Example 4 ---------------------------------------------------------------------------


def test_rspql_example_4_time_varying_graph() -> None:
    """G_shops is empty before 2, g_shops (Example 1) on [2, 13] and g'_shops (shop B
    only) after 13; the default graph of the dataset follows it."""
    g_shops = read_time_varying_graph(DATA / "G_shops.trig")
    assert g_shops.at(1) == frozenset()
    assert g_shops.at(2) == g_shops.at(13) == read_graph(DATA / "g_shops.ttl")
    assert len(g_shops.at(14)) == 2 and g_shops.at(14) == g_shops.at(10**6)
    query = ContinuousQuery(
        plan("?owner :owns ?shop", [W1], default_graphs=[EX + "G_shops"]),
        rspql_streams(),
        shops(),
    )
    owners = {t: sorted(short(mu["owner"]) for mu in query.eval(t)) for t in (1, 8, 16)}
    assert owners == {1: [], 8: [":alice", ":bob"], 16: [":bob"]}


# Example 6 ---------------------------------------------------------------------------


def test_rspql_example_6_time_based_window() -> None:
    """Def. 12: the time-based window (o, c] = (4, 8] over S_nearby holds ``:carl
    :isNearby :a`` and ``:eve :isNearby :a``: as an interval window ``[5, 8]`` (the same
    instants on discrete time) at any instant, and as the tumbling window (α = β = 4,
    t0 = 4) that closes at 8."""
    expected = [":carl :isNearby :a", ":eve :isNearby :a"]
    fixed = NamedWindow(EX + "w", S_NEARBY, IntervalWindow(5, 8))
    assert window_items(fixed, 8, "latest") == window_items(fixed, 100, "latest") == expected
    sliding = NamedWindow(EX + "w", S_NEARBY, TimeWindow(4, 4, 4))
    assert window_items(sliding, 8, "closing") == expected


# Example 7 ---------------------------------------------------------------------------


def test_rspql_example_7_present_window_by_definition() -> None:
    """At 9, the present window of 𝕎1 by the definition after Def. 13 is W4 = (7, 12]
    (the most recent opening before 9), read as (7, 9]: no statement. Example 7 says W3
    (discrepancy 1 in docs/semantics.md)."""
    assert window_items(W1, 9, "latest") == []


def test_rspql_example_7_present_window_as_the_example_reads_it() -> None:
    """Example 7's answer, W3 = (5, 10] holding ``:eve :isNearby :a``, is the ``closing``
    reading."""
    assert window_items(W1, 9, "closing") == [":eve :isNearby :a"]


# Example 10 --------------------------------------------------------------------------


EX_10_ANSWER = [
    (8, ("coupon", "10% discount on ..."), ("shop", ":a"), ("shop_owner", ":alice"),
     ("shopper", ":carl")),
    (8, ("coupon", "10% discount on ..."), ("shop", ":a"), ("shop_owner", ":alice"),
     ("shopper", ":eve")),
    (16, ("coupon", "free coffee at ..."), ("shop", ":b"), ("shop_owner", ":bob"),
     ("shopper", ":diana")),
]  # fmt: skip
"""Example 10's table, with ``:alice`` where the paper prints ``:adam`` (discrepancy 16)."""


def test_rspql_example_10_evaluation_instants() -> None:
    """P = WC[𝕎2] ∧ NC[𝕎2]: "the evaluation occurs at time 8 and 16", under both
    present-window rules (𝕎2 is tumbling, so its closing window is also the latest)."""
    for present in ("closing", "latest"):
        query = ContinuousQuery(q_ex(present), rspql_streams(), shops())
        assert query.evaluation_instants() == [8, 16]


def test_rspql_example_10_answer_with_the_closing_window() -> None:
    """Ans(Q^ex) as Example 10 prints it: Carl and Eve near :a with Alice's coupon at 8,
    Diana near :b with Bob's at 16. It needs the ``closing`` reading of 𝕎1 ((3, 8] and
    (11, 16]) and the time-varying G_shops (g'_shops at 16)."""
    results = list(evaluate(q_ex("closing"), rspql_streams(), shops()))
    assert table(results) == EX_10_ANSWER


def test_rspql_example_10_answer_by_the_definition() -> None:
    """Under the definition's present window, 𝕎1 reads (7, 8] at 8 and (15, 16] at 16:
    nobody is nearby, so Q^ex has no answer (discrepancy 1 in docs/semantics.md)."""
    assert list(evaluate(q_ex("latest"), rspql_streams(), shops())) == []


def q_ex_in_rspql(pragma: str) -> Plan:
    """The plan of :data:`Q_EX_RSPQL` with ``pragma`` lines, compiled as RSP-QL."""
    rspql = get_dialect("rspql")
    return compile_query(parse_query(Q_EX_RSPQL.format(pragma=pragma), rspql), rspql)


def test_rspql_example_10_written_in_rspql_gives_the_paper_answer_by_default() -> None:
    """Q^ex written in the RSP-QL dialect with only the paper's parameters: RSP-QL's own
    definitions apply (no engine profile, windows (o, c], the examples' present window), and
    the answer is Example 10's table."""
    plan = q_ex_in_rspql("")
    assert str(plan.parameters.profile) == "none"
    assert table(evaluate(plan, rspql_streams(), shops())) == EX_10_ANSWER


def test_rspql_example_10_under_the_csparql_profile_gives_csparqls_answer() -> None:
    """The same query with ``PRAGMA profile = csparql``: C-SPARQL's windows [o, c)
    (docs/semantics.md, 22) put Alice's coupon at 8 into 𝕎2's window [8, 10), so Carl and
    Eve get it at 10; Diana gets Bob's at 16 as in the paper."""
    plan = q_ex_in_rspql("PRAGMA profile = csparql\n")
    at_10 = [(10, *row[1:]) for row in EX_10_ANSWER[:2]]
    assert table(evaluate(plan, rspql_streams(), shops())) == [*at_10, EX_10_ANSWER[2]]


def test_rspql_example_10_istream_and_dstream() -> None:
    """The same evaluations under Def. 21-22: IStream streams out what is new at each
    instant (all of it here), DStream what is gone: Carl's and Eve's matches at 16."""
    istream = table(evaluate(q_ex("closing", "istream"), rspql_streams(), shops()))
    assert istream == EX_10_ANSWER
    dstream = table(evaluate(q_ex("closing", "dstream"), rspql_streams(), shops()))
    assert [(row[0], row[-1]) for row in dstream] == [
        (16, ("shopper", ":carl")),
        (16, ("shopper", ":eve")),
    ]


def test_rspql_example_10_as_construct() -> None:
    """The same query with CONSTRUCT: each evaluation instant gives a graph (an RDF stream
    with R2S; RSP-QL, "Query Form")."""
    construct = replace(q_ex("closing"), form=Construct(f"?shopper <{EX}gets> ?coupon"))
    graphs = graphs_by_time(evaluate(construct, rspql_streams(), shops()))
    assert graphs == {
        8: {":carl :gets 10% discount on ...", ":eve :gets 10% discount on ..."},
        16: {":diana :gets free coffee at ..."},
    }


# Example 11 --------------------------------------------------------------------------


def first_window(stream: StreamSet, t0: int) -> tuple[int, set[str]]:
    """The first answer of a C-SPARQL query reading the whole window (α = 5, β = 2) with
    the given t0: the instant and the statements of the first window. The paper's windows
    are RSP-QL's (o, c], not the ``csparql`` profile's [o, c) (docs/semantics.md, 22)."""
    window = NamedWindow(unnamed_window(1), S_NEARBY, TimeWindow(5, 2))
    query = plan(
        "?s ?p ?o",
        [window],
        form=Construct("?s ?p ?o"),
        default_windows=[window.iri],
        params={"profile": "csparql", "window.t0": t0, "window.bounds": "open_closed"},
    )
    first = next(iter(graphs_by_time(evaluate(query, stream)).items()))
    return first


def test_rspql_example_11_t0_changes_the_first_window() -> None:
    """Fig. 4 (lost): with t0 = 0 the first window holds s1 and s2; with t0 = 1 s1, s2 and
    s3; with t0 = 2 s3 only. The figure's stream has s1, s2 at 2 and s3 at 6: S_nearby,
    which the text names, does not give these contents (it has Carl at 5; see below)."""
    figure = StreamSet(
        [triples_stream(S_NEARBY, [(":s1 :p :o", 2), (":s2 :p :o", 2), (":s3 :p :o", 6)])]
    )
    firsts = [first_window(figure, t0) for t0 in (0, 1, 2)]
    assert firsts == [
        (5, {":s1 :p :o", ":s2 :p :o"}),
        (6, {":s1 :p :o", ":s2 :p :o", ":s3 :p :o"}),
        (7, {":s3 :p :o"}),
    ]


def test_rspql_example_11_on_s_nearby() -> None:
    """On S_nearby itself the first windows are (0, 5] and (1, 6] (Diana, Eve, Carl) and
    (2, 7] (Carl and Eve at :a): the figure's contents need another stream (docs)."""
    firsts = [first_window(rspql_streams(), t0) for t0 in (0, 1, 2)]
    three = {":diana :isNearby :a", ":eve :isNearby :b", ":carl :isNearby :a"}
    assert firsts == [
        (5, three),
        (6, three),
        (7, {":carl :isNearby :a", ":eve :isNearby :a"}),
    ]


# Example 13 and Figure 5 ---------------------------------------------------------------


def figure_5_instants(report: str | None, present: str | None, profile: str = "none") -> list[int]:
    """ET of a query over 𝕎 = (α = 5, β = 2, t0 = 1) on S_nearby (Example 13); ``None``
    leaves a parameter to the profile."""
    params: dict[str, object] = {"profile": profile}
    if report is not None:
        params["window.report"] = report
    if present is not None:
        params["window.present"] = present
    query = plan(
        "GRAPH <w> { ?s ?p ?o }",
        [NamedWindow(EX + "w", S_NEARBY, TimeWindow(5, 2, 1))],
        params=params,
    )
    return ContinuousQuery(query, rspql_streams()).evaluation_instants()


def test_rspql_figure_5_csparql_and_sparqlstream() -> None:
    """C-SPARQL and SPARQLstream "report every time the windows close (except for the
    cases where windows are empty)": WC ∧ NC at the closings 6, 8, …, 16; the window
    (13, 18] is empty. The engine profiles give the same instants."""
    assert figure_5_instants("window_close+non_empty", "closing") == [6, 8, 10, 12, 14, 16]
    assert figure_5_instants(None, None, "csparql") == [6, 8, 10, 12, 14, 16]
    assert figure_5_instants(None, None, "sparqlstream") == [6, 8, 10, 12, 14, 16]


def test_rspql_figure_5_window_close_by_the_definition() -> None:
    """Under the definition's present window, the window present at a closing instant is
    the one that has just opened ((5, 6] at 6, …), so WC ∧ NC holds only at 12, when
    Diana's statement arrives as its window opens (discrepancy 1)."""
    assert figure_5_instants("window_close+non_empty", "latest") == [12]


def test_rspql_figure_5_cqels_content_change_by_the_definition() -> None:
    """CQELS's policy is content change (the comparison table). By the definition, "the
    window reports if the content changes": when statements enter (2, 5, 7, 12) and when
    they leave (9: Carl's; 11: Eve's; 17: Diana's). The figure and text show CQELS at
    arrivals only (discrepancy 17 in docs/semantics.md)."""
    assert figure_5_instants("content_change", "closing") == [2, 5, 7, 9, 11, 12, 17]


def test_rspql_figure_5_cqels_as_the_figure_reads_it() -> None:
    """ "CQELS evaluates the query as soon as it receives new timestamped RDF statements":
    the ``new_content`` condition, at 2, 5, 7 and 12."""
    assert figure_5_instants("new_content", "closing") == [2, 5, 7, 12]


def test_rspql_figure_5_cqels_profile() -> None:
    """The ``cqels`` profile (CSR-Bench's cqels.properties: content change, read as arrivals,
    and non-empty content; docs/semantics.md, 17) gives the figure's instants; content change
    by the definition, with non-empty content, would keep 9 (Carl's statement leaving)."""
    assert figure_5_instants(None, None, "cqels") == [2, 5, 7, 12]
    assert figure_5_instants("content_change+non_empty", None, "cqels") == [2, 5, 7, 9, 12]


def test_evaluation_applies_the_profile() -> None:
    """The oracle applies the plan's engine profile (idempotent): C-SPARQL reads the
    closing window, Rstream, and reports empty relations (with the paper's (o, c] windows,
    not the profile's [o, c))."""
    params = {"profile": "csparql", "window.bounds": "open_closed"}
    query = plan(Q_EX, [W1, W2], default_graphs=[EX + "G_shops"], params=params)
    bound = ContinuousQuery(query, rspql_streams(), shops())
    assert bound.plan == apply_profile(query) == apply_profile(bound.plan)
    assert str(bound.plan.parameters.present) == "closing"
    assert bound.plan.parameters.output_empty is True
    assert table(evaluate(query, rspql_streams(), shops())) == EX_10_ANSWER


@pytest.mark.parametrize("present", ["closing", "latest"])
def test_rspql_example_10_answers_are_deterministic(present: str) -> None:
    first = list(evaluate(q_ex(present), rspql_streams(), shops()))
    assert first == list(evaluate(q_ex(present), rspql_streams(), shops()))
