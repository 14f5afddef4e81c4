"""A query applied to a Spark DataFrame of triples (rsep.Query.transform, rsep.spark.frame):
a DataFrame in, a DataFrame of answers out, batch and streaming, for a SPAseq query (the
columnar engine, with and without PARTITION BY) and an RSP-QL query (the per-event engine;
SELECT, and in batch CONSTRUCT and ASK too); the answers equal the oracle's, as rows of the
same columns as rsep.Answers.to_arrow. Only the public API is used (``import rsep``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rsep

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS / "api") not in sys.path:
    sys.path.insert(0, str(TESTS / "api"))

from test_public_api import DATA, EX, RSPQL, SPASEQ, XSD  # noqa: E402
from test_public_api import PRICES as SOME_PRICES  # noqa: E402

KEYED = SPASEQ.replace("WITHIN 10 SECONDS", "WITHIN 10 SECONDS\nPARTITION BY (?c)")
"""The API's SPAseq query (a company's price, then its next lower one within 10 s, named
by the knowledge base) per company: the columnar engine's partitions; without PARTITION BY
it runs in one. RSPQL is RSP-QL Example 3 with the background graph: the per-event engine."""

PRICES = [*SOME_PRICES, ("c3", 9, 4500), ("c2", 4, 5000), ("c3", 8, 5500)]
"""The API tests' prices and a company the knowledge base does not name."""

SCHEMA = "stream string, event_id string, t_start long, t_end long, s string, p string, o string"


def price_table() -> pa.Table:
    """The price events as a table of triples, one event id per event."""
    rows = [
        (EX + "S", f"<{EX}e{i}>", t, t, f"<{EX}{c}>", f"<{EX}price>", f'"{v}"^^<{XSD}integer>')
        for i, (c, v, t) in enumerate(PRICES)
    ]
    return _table(rows)


def nearby_table() -> pa.Table:
    """RSP-QL Example 3's stream file as a table of triples (rsep.read_table), its event
    ids null (an event is the rows of one stream and time)."""
    table = rsep.read_table({EX + "S_nearby": DATA / "s_nearby.tnt"})
    return table.set_column(1, "event_id", pa.nulls(table.num_rows, pa.string()))


def partitioned(query: rsep.Query) -> bool:
    """Whether the query's events are spread over Spark tasks by a key, as ``explain``
    says (its Spark section's partitions: ``by ?c``)."""
    return "\n  partitions    by ?c:" in query.explain().split("on Spark")[-1]


def _table(rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    names = ("stream", "event_id", "t_start", "t_end", "s", "p", "o")
    kinds = [pa.int64() if name.startswith("t_") else pa.string() for name in names]
    return pa.table(
        [pa.array([row[i] for row in rows], kind) for i, kind in enumerate(kinds)],
        names=list(names),
    )


def kb_file(tmp_path: Path) -> Path:
    path = tmp_path / "kb.nt"
    path.write_text(
        "".join(f'<{EX}{c}> <{EX}name> "{n}" .\n' for c, n in [("c1", "one"), ("c2", "two")])
    )
    return path


CONSTRUCT = RSPQL.replace(
    "SELECT ?who ?owner",
    f'CONSTRUCT {{ ?who <{EX}meets> ?owner . ?who <{EX}note> "near a shop"@en }}',
)
"""The RSP-QL query's answers as triples (one row each: s, p, o; an object with spaces)."""
ASK = RSPQL.replace("SELECT ?who ?owner", "ASK")
"""The RSP-QL query's answers as booleans."""

CASES = {
    "spaseq": (SPASEQ, price_table, "kb"),
    "spaseq-keyed": (KEYED, price_table, "kb"),
    "rspql": (RSPQL, nearby_table, "shops"),
    "rspql-construct": (CONSTRUCT, nearby_table, "shops"),
    "rspql-ask": (ASK, nearby_table, "shops"),
}


def case(name: str, tmp_path: Path) -> tuple[rsep.Query, pa.Table, dict[str, Path]]:
    text, table, graph = CASES[name]
    if graph == "kb":
        return rsep.Query(text), table(), {EX + "kb": kb_file(tmp_path)}
    return rsep.Query(text, window_t0=0), table(), {EX + "shops": DATA / "g_shops.ttl"}


def rows(frame: pa.Table) -> list[tuple[Any, ...]]:
    """A table's rows as tuples, sorted (the answers of one instant are a bag)."""
    return sorted(zip(*(c.to_pylist() for c in frame.columns), strict=True), key=repr)


def oracle_rows(
    query: rsep.Query, table: pa.Table, graphs: dict[str, Path], until: int | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The oracle's answers as the columns and rows of rsep.Answers.to_arrow."""
    found = query.run(table, graphs, engine="reference", until=until).to_arrow()
    return found.column_names, rows(found)


def frame_rows(frame: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


@pytest.mark.parametrize("name", sorted(CASES))
def test_batch_dataframe_in_dataframe_out(spark: SparkSession, tmp_path: Path, name: str) -> None:
    """``spark.read.parquet(...)`` in, ``transform``, ``write.parquet`` out: the oracle's
    answers, in time order, with the columns of Answers.to_arrow; the engine partitions
    of a keyed query really used."""
    query, table, graphs = case(name, tmp_path)
    assert partitioned(query) == (name == "spaseq-keyed")
    pq.write_table(table, tmp_path / "triples.parquet")
    triples = spark.read.parquet(str(tmp_path / "triples.parquet"))
    answers = triples.transform(lambda df: query.transform(df, graphs, partitions=2))
    columns, expected = oracle_rows(query, table, graphs)
    assert answers.columns == columns
    assert expected, "the query answers over its data"
    answers.write.parquet(str(tmp_path / "answers"))
    written = spark.read.parquet(str(tmp_path / "answers"))
    assert frame_rows(written) == expected
    times = [row["time"] for row in answers.collect()]
    assert times == sorted(times)


def test_batch_until(spark: SparkSession, tmp_path: Path) -> None:
    query, table, graphs = case("spaseq", tmp_path)
    frame = spark.createDataFrame(table.to_pandas(), SCHEMA)
    for until in (1500, 4000):
        _, expected = oracle_rows(query, table, graphs, until)
        assert frame_rows(query.transform(frame, graphs, until=until)) == expected


def test_transform_runs_no_job(spark: SparkSession, tmp_path: Path) -> None:
    """The answers are a plan, run by the user's action: ``transform`` itself starts no
    Spark job (nothing is read, nor collected on the driver)."""
    for name in sorted(CASES):
        query, table, graphs = case(name, tmp_path)
        frame = spark.createDataFrame(table.to_pandas(), SCHEMA)
        tracker = spark.sparkContext.statusTracker()
        group = f"rsep-transform-{name}"
        spark.sparkContext.setJobGroup(group, "rsep transform")
        try:
            query.transform(frame, graphs, partitions=2)
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        assert list(tracker.getJobIdsForGroup(group)) == []


def test_missing_column_is_a_user_error(spark: SparkSession, tmp_path: Path) -> None:
    query, table, graphs = case("spaseq", tmp_path)
    frame = spark.createDataFrame(table.drop(["o"]).to_pandas())
    with pytest.raises(rsep.UserError, match="missing: o"):
        query.transform(frame, graphs)


@pytest.mark.parametrize("name", ["spaseq-keyed", "rspql"])
def test_streaming_dataframe_in_dataframe_out(
    spark: SparkSession, tmp_path: Path, name: str
) -> None:
    """Parquet files of triples arriving in a folder, read as a streaming DataFrame, the
    answers a streaming DataFrame written by the user's ``writeStream`` (a memory table,
    three triggers): the oracle's answers up to the final watermark (the last event's
    time, lateness 0)."""
    query, table, graphs = case(name, tmp_path)
    folder = tmp_path / "in"
    for index, part in enumerate(thirds(table)):
        arrive(folder, index, part)
    assert partitioned(query) == (name != "rspql")
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder))
    answers = query.transform(stream, graphs, partitions=2)
    assert answers.isStreaming
    sink = f"rsep_answers_{name.replace('-', '_')}"
    running = (
        answers.writeStream.format("memory")
        .queryName(sink)
        .outputMode("append")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    running.awaitTermination()
    mark = max(table.column("t_end").to_pylist())
    columns, expected = oracle_rows(query, table, graphs, mark)
    found = spark.table(sink)
    assert found.columns == columns
    assert frame_rows(found) == expected
    assert expected


def test_streaming_restarts_from_the_checkpoint(spark: SparkSession, tmp_path: Path) -> None:
    """The user's checkpoint keeps the offsets, the watermark and the evaluators' state: a
    keyed query stopped after two files and started again after a third writes, into a
    Parquet sink, the oracle's answers over all three, none twice."""
    query, table, graphs = case("spaseq-keyed", tmp_path)
    parts = thirds(table)
    folder, out = tmp_path / "in", tmp_path / "out"
    mark = max(table.column("t_end").to_pylist())
    _, expected = oracle_rows(query, table, graphs, mark)
    for run, taken in enumerate(([0, 1], [2])):
        for index in taken:
            arrive(folder, index, parts[index])
        source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
        stream = source.parquet(str(folder))
        (
            query.transform(stream, graphs, partitions=2)
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
            .awaitTermination()
        )
        found = frame_rows(spark.read.parquet(str(out)))
        if run == 0:
            assert 0 < len(found) < len(expected)
            assert set(found) <= set(expected)
    assert found == expected


def thirds(table: pa.Table) -> list[pa.Table]:
    """A table of triples in time order, cut in three between instants: an instant's rows
    come in one file, since a file read after the watermark passed their time is late
    (lateness 0) and its rows dropped."""
    ordered = table.sort_by([("t_end", "ascending")])
    ends = ordered.column("t_end").to_numpy()
    times = np.unique(ends)
    cuts = [int(np.searchsorted(ends, times[len(times) * i // 3])) for i in (1, 2)]
    bounds = [0, *cuts, ordered.num_rows]
    assert all(lo < hi for lo, hi in pairwise(bounds))
    return [ordered.slice(lo, hi - lo) for lo, hi in pairwise(bounds)]


def arrive(folder: Path, index: int, part: pa.Table) -> None:
    """A Parquet file of triples arriving in ``folder``, younger than those before it (the
    file source takes files by modification time)."""
    folder.mkdir(exist_ok=True)
    path = folder / f"part-{index}.parquet"
    pq.write_table(part, path)
    stamp = time.time() + index
    os.utime(path, (stamp, stamp))


def test_streaming_until_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    query, _, graphs = case("spaseq", tmp_path)
    stream = spark.readStream.schema(SCHEMA).parquet(str(tmp_path))
    with pytest.raises(rsep.UserError, match="until is for a batch DataFrame"):
        query.transform(stream, graphs, until=10)


def test_select_star_gives_a_map_of_bindings(spark: SparkSession, tmp_path: Path) -> None:
    """``SELECT *``: the variables are known only from the answers, so the bindings come as
    one map column (each variable's term in N-Triples syntax), equal to the oracle's."""
    _, table, graphs = case("spaseq", tmp_path)
    star = rsep.Query(SPASEQ.replace("SELECT ?c ?p1 ?p2 ?name", "SELECT *"))
    frame = spark.createDataFrame(table.to_pandas(), SCHEMA)
    answers = star.transform(frame, graphs)
    assert answers.columns == ["time", "interval_start", "interval_end", "bindings"]
    found = sorted(
        ((row["time"], row["interval_start"], row["interval_end"], sorted(row["bindings"].items()))
         for row in answers.collect()),
        key=repr,
    )  # fmt: skip
    oracle = star.run(table, graphs, engine="reference")
    expected = sorted(
        ((r.time, *r.interval, sorted((k, str(v)) for k, v in r.bindings.items()))
         for r in oracle if isinstance(r, rsep.SelectResult) and r.interval is not None),
        key=repr,
    )  # fmt: skip
    assert expected and found == expected
    assert {name for _, _, _, pairs in found for name, _ in pairs} == {"c", "p1", "p2", "name"}
