"""``rsep.api.driver``: time-varying graphs (RSP-QL Def. 10) and ``start`` on every engine,
equal to the oracle's; the event evaluators' reasons where they take neither.

Data: S_nearby (RSP-QL Example 3), S_coupon (Example 5) and the time-varying G_shops
(Example 4: g_shops on [2, 13], then g'_shops with shop B only), in ``tests/semantics/data``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantics"))

from semantics_data import DATA, EX, Q_EX_RSPQL

import rsep
from rsep.cli import main as cli
from rsep.rdf.results import Result

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STREAMS = {EX + "S_nearby": DATA / "s_nearby.tnt", EX + "S_coupon": DATA / "s_coupon.tnt"}
SHOPS = {EX + "G_shops": DATA / "G_shops.trig"}
STATIC_SHOPS = {EX + "G_shops": DATA / "g_shops.ttl"}

EX_10 = [
    (8, "carl", "a", "alice", "10% discount on ..."),
    (8, "eve", "a", "alice", "10% discount on ..."),
    (16, "diana", "b", "bob", "free coffee at ..."),
]
"""Example 10's table (with ``:alice`` where the paper prints ``:adam``: docs/semantics.md,
16): ``(time, ?shopper, ?shop, ?shop_owner, ?coupon)``."""

NEARBY = f"""PREFIX : <{EX}>
REGISTER {{r2s}} :out AS
SELECT ?who ?owner
FROM :G_shops
FROM NAMED WINDOW :w ON :S_nearby [RANGE 10 STEP 2]
WHERE {{{{ WINDOW :w {{{{ ?who :isNearby ?shop }}}} ?owner :owns ?shop }}}}
"""
"""Who is near a shop of whom, over the last 10 instants, every 2: at 14 the window (4, 14]
holds Carl and Eve near :a and Diana near :b, while G_shops is g'_shops, where only Bob owns
a shop."""


def short(term: object) -> str:
    """A term's local name, or a literal's lexical form."""
    text = str(term)
    return text.strip("<>").rsplit("/", 1)[-1] if text.startswith("<") else text.split('"')[1]


def rows(results: object, names: tuple[str, ...]) -> list[tuple[object, ...]]:
    """SELECT results as sorted ``(time, value of each of names)``."""
    out: list[tuple[object, ...]] = []
    for result in results:  # type: ignore[attr-defined]
        assert isinstance(result, Result)
        bindings = result.to_json()["bindings"]
        out.append((result.time, *(short(bindings[name]) for name in names)))
    return sorted(out)


def q_ex() -> rsep.Query:
    """Q^ex (Example 10) written in RSP-QL, under the dialect's defaults."""
    return rsep.Query(Q_EX_RSPQL.format(pragma=""))


EX_10_NAMES = ("shopper", "shop", "shop_owner", "coupon")


@pytest.mark.parametrize("engine", ["reference", "local"])
def test_example_10_with_the_time_varying_shops_graph(engine: str) -> None:
    """Q^ex over S_nearby, S_coupon and the time-varying G_shops: the paper's answers."""
    answers = q_ex().run(STREAMS, SHOPS, engine=engine)
    assert rows(answers, EX_10_NAMES) == EX_10


@pytest.mark.spark
def test_example_10_with_the_time_varying_shops_graph_on_spark(spark: SparkSession) -> None:
    """The same on Spark replay (the engine's evaluator inside a Spark task)."""
    answers = q_ex().run(STREAMS, SHOPS, engine="spark")
    assert rows(answers, EX_10_NAMES) == EX_10


def test_rsep_run_local_reads_the_time_varying_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rsep run --engine local`` with ``--graph IRI=FILE.trig``: the paper's answers."""
    query = tmp_path / "qex.rspql"
    query.write_text(Q_EX_RSPQL.format(pragma=""), encoding="utf-8")
    args = ["run", str(query), "--engine", "local", "--quiet"]
    for iri, path in STREAMS.items():
        args += ["--stream", f"{iri}={path}"]
    args += ["--graph", f"{EX}G_shops={DATA / 'G_shops.trig'}"]
    assert cli.main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    found = sorted(
        (line["time"], *(short(line["bindings"][name]) for name in EX_10_NAMES)) for line in lines
    )
    assert found == EX_10


def test_each_instant_reads_the_graph_valid_then() -> None:
    """At 14 the window holds Carl and Eve near :a and Diana near :b; G_shops(14) is
    g'_shops, so only Diana's match holds, where the static g_shops gives all three. The
    engine's answers are the oracle's at every instant."""
    query = rsep.Query(NEARBY.format(r2s="RSTREAM"))
    expected = rows(query.run(STREAMS, SHOPS, engine="reference"), ("who", "owner"))
    assert rows(query.run(STREAMS, SHOPS, engine="local"), ("who", "owner")) == expected
    assert [row for row in expected if row[0] == 14] == [(14, "diana", "bob")]
    static = rows(query.run(STREAMS, STATIC_SHOPS, engine="local"), ("who", "owner"))
    assert [row for row in static if row[0] == 14] == [
        (14, "carl", "alice"),
        (14, "diana", "bob"),
        (14, "eve", "alice"),
    ]


def test_start_gives_the_oracles_answers_from_start() -> None:
    """From ``start`` = 16 the first evaluation's IStream compares with ∅ (RSP-QL Def. 21),
    so Diana's match, not new at 16 in a run from the data's start, is streamed at 16."""
    query = rsep.Query(NEARBY.format(r2s="ISTREAM"))
    names = ("who", "owner")
    expected = rows(query.run(STREAMS, SHOPS, engine="reference", start=16), names)
    assert expected == [(16, "diana", "bob")]
    assert rows(query.run(STREAMS, SHOPS, engine="local", start=16), names) == expected
    whole = rows(query.run(STREAMS, SHOPS, engine="local"), names)
    assert (16, "diana", "bob") not in whole and whole


def test_start_under_the_csparql_profile() -> None:
    """Under the ``csparql`` profile (windows [o, c), empty relations reported) with a
    report at every close, ``start`` = 13: the engine's answers are the oracle's; Diana's
    item at 12 stays in [12, 22) up to 22, and G_shops has only Bob's shop from 14."""
    text = NEARBY.format(r2s="RSTREAM").replace(
        "REGISTER", "PRAGMA profile = csparql\nPRAGMA window.report = window_close\nREGISTER"
    )
    query = rsep.Query(text)
    oracle = list(query.run(STREAMS, SHOPS, engine="reference", start=13))
    local = list(query.run(STREAMS, SHOPS, engine="local", start=13))
    assert [(r.time, r.to_json()) for r in local] == [(r.time, r.to_json()) for r in oracle]
    assert rows(oracle, ("who", "owner")) == [(t, "diana", "bob") for t in range(14, 23, 2)]


PAST = NEARBY.format(r2s="RSTREAM").replace("[RANGE 10 STEP 2]", "[FROM NOW-10 TO NOW-6 STEP 2]")
"""NEARBY over a window in the past (W3C RSP CG draft): at ``t`` the items of ``(t - 10, t -
6]``, as ``[RANGE 4 STEP 2]`` reads them at ``t - 6``, joined with G_shops at ``t``."""

PAST_ANSWERS = [
    (10, "diana", "alice"),
    (10, "eve", "bob"),
    (12, "carl", "alice"),
    (18, "diana", "bob"),
    (20, "diana", "bob"),
]
"""The window (0, 4] closes at 4 and is read at 10 (Diana at :a and Eve at :b at 2), (2, 6]
at 12 (Carl at :a at 5); at 14 and 16 (4, 8] and (6, 10] hold only people near :a, which
nobody owns in g'_shops; then Diana near Bob's :b at 12, in (8, 12] and (10, 14]."""


@pytest.mark.parametrize("engine", ["reference", "local"])
def test_a_window_in_the_past(engine: str) -> None:
    query = rsep.Query(PAST)
    assert rows(query.run(STREAMS, SHOPS, engine=engine), ("who", "owner")) == PAST_ANSWERS
    assert "time window (α=4, β=2, t0=window.t0, read 6 late)" in query.explain()


@pytest.mark.spark
def test_start_on_spark(spark: SparkSession) -> None:
    """Spark replay from ``start``: the oracle's answers from ``start``."""
    query = rsep.Query(NEARBY.format(r2s="ISTREAM"))
    names = ("who", "owner")
    found = rows(query.run(STREAMS, SHOPS, engine="spark", start=16), names)
    assert found == [(16, "diana", "bob")]


SPASEQ = f"""PREFIX : <{EX}>
SELECT ?who
WITHIN 10 SECONDS
FROM STREAM S1 <{EX}S_nearby>
WHERE {{
  SEQ (A; B)
  DEFINE GPM A ON S1 {{ ?who :isNearby ?shop . }}
  DEFINE GPM B ON S1 {{ ?other :isNearby ?shop . GRAPH <{EX}G_shops> {{ ?owner :owns ?shop }} }}
}}
"""


SPASEQ_FROM = {
    None: [(5, "diana"), (7, "carl"), (12, "eve")],
    6: [(7, "carl"), (7, "diana"), (12, "eve")],
    8: [(12, "carl"), (12, "diana"), (12, "eve")],
    14: [],
}
"""The oracle's answers of SPASEQ from ``start``: the first instant from it streams every
answer known so far (IStream compares with ∅, RSP-QL Def. 21): Diana again at 7 from 6, all
three at 12 from 8; nothing from 14, past the last event."""


@pytest.mark.parametrize("start", sorted(SPASEQ_FROM, key=lambda s: -1 if s is None else s))
def test_spaseq_from_start(start: int | None) -> None:
    """SPAseq's evaluator from ``start`` (events before it evaluated, answers streamed from
    it): the oracle's answers, on every start from 0 to 18."""
    query = rsep.Query(SPASEQ)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    expected = rows(query.run(streams, STATIC_SHOPS, engine="reference", start=start), ("who",))
    assert expected == SPASEQ_FROM[start]
    assert rows(query.run(streams, STATIC_SHOPS, engine="local", start=start), ("who",)) == expected
    if start is None:
        for other in range(0, 19):
            oracle = rows(
                query.run(streams, STATIC_SHOPS, engine="reference", start=other), ("who",)
            )
            local = rows(query.run(streams, STATIC_SHOPS, engine="local", start=other), ("who",))
            assert local == oracle, other


@pytest.mark.spark
def test_spaseq_from_start_on_spark(spark: SparkSession) -> None:
    """The same on Spark (the per-event replay, which gives each task the start)."""
    query = rsep.Query(SPASEQ)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    found = rows(query.run(streams, STATIC_SHOPS, engine="spark", start=8), ("who",))
    assert found == SPASEQ_FROM[8]


NEARBY_LATER = [("diana", "a", 0), ("carl", "a", 1), ("eve", "a", 5)]
NEARBY_LATER += [("bob", "b", 12), ("eve", "a", 14), ("frank", "b", 14)]
"""People near shops before G_shops holds (0, 1), while g_shops does (5, 12) and after, when
g'_shops does (14): who owns the shop changes with the instant."""

SPASEQ_TV = {
    None: [(5, "carl", "eve", "alice"), (5, "diana", "eve", "alice"), (14, "bob", "frank", "bob")],
    14: [(14, "bob", "frank", "bob"), (14, "carl", "eve", "alice"), (14, "diana", "eve", "alice")],
}
"""The oracle's answers of SPASEQ (with ?other and ?owner) over the time-varying G_shops:
GRAPH reads ``Γ(v)`` at B's event (SPAseq Def. 15), so Carl at 1 (G_shops empty) and Eve
at 14 at shop a (Alice owns no shop in g'_shops) have no owner; the static g_shops gives
both."""


def _nearby_later(tmp_path: Path) -> dict[str, Path]:
    path = tmp_path / "near.tnt"
    path.write_text(
        "".join(f"<{EX}{w}> <{EX}isNearby> <{EX}{s}> {t} .\n" for w, s, t in NEARBY_LATER)
    )
    return {EX + "S_nearby": path}


def test_spaseq_reads_the_time_varying_graph(tmp_path: Path) -> None:
    """SPAseq's GRAPH part over the time-varying G_shops: the engine's answers are the
    oracle's, from every start 0-15, and differ from a static reading."""
    query = rsep.Query(SPASEQ.replace("SELECT ?who", "SELECT ?who ?other ?owner"))
    streams = _nearby_later(tmp_path)
    names = ("who", "other", "owner")
    for start in (None, *range(16)):
        expected = rows(query.run(streams, SHOPS, engine="reference", start=start), names)
        if start in SPASEQ_TV:
            assert expected == SPASEQ_TV[start]
        assert rows(query.run(streams, SHOPS, engine="local", start=start), names) == expected
    static = rows(query.run(streams, STATIC_SHOPS, engine="local"), names)
    assert (1, "diana", "carl", "alice") in static and (14, "eve", "eve", "alice") in static


@pytest.mark.spark
def test_spaseq_reads_the_time_varying_graph_on_spark(spark: SparkSession, tmp_path: Path) -> None:
    """The same on Spark (the per-event replay, which ships the graph's versions)."""
    query = rsep.Query(SPASEQ.replace("SELECT ?who", "SELECT ?who ?other ?owner"))
    streams = _nearby_later(tmp_path)
    names = ("who", "other", "owner")
    for start in (None, 14):
        found = rows(query.run(streams, SHOPS, engine="spark", start=start), names)
        assert found == SPASEQ_TV[start]


RSEPQL = f"""PREFIX : <{EX}>
REGISTER {{r2s}} :out AS
SELECT ?who ?other ?owner
FROM :G_shops
FROM NAMED WINDOW :w ON :S_nearby [RANGE 10 STEP 2]
WHERE {{{{
  MATCH ( EVENT :w {{{{ ?who :isNearby ?shop }}}} SEQ EVENT :w {{{{ ?other :isNearby ?shop }}}} )
  ?owner :owns ?shop
}}}}
"""
"""RSEP-QL: two people near one shop, one after the other (Eq. (7)), joined with the
time-varying G_shops beside MATCH."""


RSEPQL_ANSWERS = {
    ("RSTREAM", None): [
        (10, "carl", "eve", "alice"),
        (10, "diana", "carl", "alice"),
        (10, "diana", "eve", "alice"),
        (12, "carl", "eve", "alice"),
    ],
    ("ISTREAM", None): [
        (10, "carl", "eve", "alice"),
        (10, "diana", "carl", "alice"),
        (10, "diana", "eve", "alice"),
    ],
    ("RSTREAM", 11): [(12, "carl", "eve", "alice")],
    ("ISTREAM", 11): [(12, "carl", "eve", "alice")],
}
"""The oracle's answers: from 11, IStream streams Carl then Eve again at 12 (compared with
∅); 14 and later have none, Alice owning no shop in g'_shops."""


@pytest.mark.parametrize(("r2s", "start"), sorted(RSEPQL_ANSWERS, key=str))
def test_rsepql_reads_the_time_varying_graph_from_start(r2s: str, start: int | None) -> None:
    """RSEP-QL's MATCH beside a pattern over the time-varying G_shops, from ``start``: the
    engine's answers are the oracle's."""
    query = rsep.Query(RSEPQL.format(r2s=r2s))
    names = ("who", "other", "owner")
    expected = rows(query.run(STREAMS, SHOPS, engine="reference", start=start), names)
    assert expected == RSEPQL_ANSWERS[r2s, start]
    assert rows(query.run(STREAMS, SHOPS, engine="local", start=start), names) == expected


def test_rsepql_from_14_reads_g_shops_prime() -> None:
    """From 14 the window (4, 14] still pairs Carl and Eve near :a, but G_shops(14) has no
    owner of :a: no answer, where the static g_shops gives Alice at 14."""
    query = rsep.Query(RSEPQL.format(r2s="ISTREAM"))
    names = ("who", "other", "owner")
    assert rows(query.run(STREAMS, SHOPS, engine="local", start=14), names) == []
    static = rows(query.run(STREAMS, STATIC_SHOPS, engine="local", start=14), names)
    assert static[:1] == [(14, "carl", "eve", "alice")]


@pytest.mark.spark
def test_solution_modifiers_beside_match_on_spark(spark: SparkSession) -> None:
    """GROUP BY, HAVING, ORDER BY and LIMIT beside RSEP-QL's MATCH on Spark replay (the
    plan in one task): the oracle's answers, the shop with most people nearby."""
    text = (
        f"PREFIX : <{EX}>\nREGISTER RSTREAM :out AS\nSELECT ?shop (COUNT(?who) AS ?n)\n"
        "FROM NAMED WINDOW :w ON :S_nearby [RANGE 10 STEP 2]\n"
        "WHERE { MATCH ( EVENT :w { ?who :isNearby ?shop } ) }\n"
        "GROUP BY ?shop HAVING (COUNT(?who) > 1) ORDER BY DESC(?n) LIMIT 1"
    )
    query = rsep.Query(text)
    streams = {EX + "S_nearby": DATA / "s_nearby.tnt"}
    expected = rows(query.run(streams, engine="reference"), ("shop", "n"))
    assert expected == [(10, "a", "3"), (12, "a", "2"), (14, "a", "2")]
    assert rows(query.run(streams, engine="spark"), ("shop", "n")) == expected


def test_a_store_of_several_streams_is_read_stream_by_stream(tmp_path: Path) -> None:
    """An event store keeps each stream's files apart (``stream=…`` folders, in time order
    within a stream): the engine reads one batch source per stream, merged in time order,
    and gives Example 10's answers over the store as over the stream files."""
    from urllib.parse import quote

    import numpy as np

    from rsep.api import StreamInput, read_table
    from rsep.api.inputs import batch_sources
    from rsep.engine.terms import TermDictionary
    from rsep.rdf.time import TimeUnit
    from rsep.spark.eventstore import write_store

    store = tmp_path / "store"
    for iri, path in STREAMS.items():
        folder = store / f"stream={quote(iri, safe='')}"
        folder.mkdir(parents=True)
        write_store(read_table({iri: path}), folder)
    sources = batch_sources([StreamInput(store)], TermDictionary(), TimeUnit.MILLISECONDS)
    streams = []
    for source in sources:
        batches = list(source)
        ends = np.concatenate([b.event_end for b in batches])
        assert bool(np.all(ends[1:] >= ends[:-1]))  # each source in time order
        streams.append({b.streams[i] for b in batches for i in set(b.event_stream.tolist())})
    assert sorted(map(sorted, streams)) == [[EX + "S_coupon"], [EX + "S_nearby"]]
    answers = q_ex().run(store, SHOPS, engine="local")
    expected = q_ex().run(STREAMS, SHOPS, engine="reference")
    assert rows(answers, EX_10_NAMES) == rows(expected, EX_10_NAMES) != []
