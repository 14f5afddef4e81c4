"""A query applied to a Spark DataFrame of triples, batch or streaming, giving a DataFrame of
answers (:meth:`rsep.api.Query.transform`; docs/api.md, "Spark DataFrames").

The input has the event store's columns (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`:
``stream, event_id, t_start, t_end, s, p, o``, one row per triple, terms in N-Triples
syntax, times in the plan's time unit; ``event_id`` may be left out, other columns are
ignored). An event is the rows of one stream, event id and time.

- **Batch**: the plan runs as ``rsep run --engine spark`` runs it over files, lazily, as
  the rest of the user's job: the columnar engine for the plans it takes
  (:func:`rsep.spark.columnar.columnar_frame`: rows hashed by time over read tasks that
  read them as the event store's reader does), else the per-event engine
  (:func:`rsep.spark.replay.replay_frame`); the answers merged in Spark, in one partition
  in time order. Nothing is collected on the driver.
- **Streaming**: the rows of each micro-batch are put together into events in tasks (an
  event's rows must come in one micro-batch; rows at or before the watermark are late),
  prefiltered and routed as a live query's records are
  (:class:`rsep.spark.live.EventRows`), and evaluated by the live query's state function
  (:func:`rsep.spark.live.evaluated`: event-time watermark, the evaluators in the RocksDB
  state store); the answers of each micro-batch, in append mode, for the user's
  ``writeStream`` and checkpoint.

Answers are columns (:func:`answer_columns`): ``time``, then for SELECT the match's
``interval_start`` and ``interval_end`` and a column per projected variable (``SELECT *``:
one ``bindings`` map), for CONSTRUCT a row per triple ``s, p, o``, for ASK ``boolean``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rsep.algebra.plan import Ask, Construct, Plan, QueryForm, Select
from rsep.engine import incremental_query
from rsep.errors import UserError
from rsep.spark.job import marked_errors, shuffle_partitions
from rsep.spark.partition import Router, Scheme, Vocabulary, choose_scheme, vocabulary

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = ["ANSWER_JSON", "answer_columns", "transform"]

ANSWER_JSON = (
    "time long, bindings map<string,string>, interval array<long>, "
    "triples array<string>, boolean boolean"
)
"""An answer's JSON Lines text (docs/results.md) as Spark reads it, for every query form."""

_TRIPLE = r"^(\S+) (\S+) (.*) \.$"
"""An N-Triples statement: subject and predicate hold no space (IRIs and blank nodes; a
triple term is only an object in RDF 1.2), the object is the rest."""

_REQUIRED = ("stream", "t_start", "t_end", "s", "p", "o")


def transform(
    plan: Plan,
    frame: DataFrame,
    graphs: Mapping[str, Any] | None = None,
    *,
    until: int | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """The answers of ``plan`` over the triples of ``frame`` (module docstring), a
    streaming DataFrame when ``frame`` is one. ``graphs`` are the graphs by IRI, static or
    time-varying as :func:`rsep.engine.incremental_query` takes them;
    ``until`` the last instant evaluated (batch only); ``partitions`` the engine
    partitions (default ``spark.sql.shuffle.partitions``; a streaming query restarted
    from its checkpoint must keep the number)."""
    missing = [name for name in _REQUIRED if name not in frame.columns]
    if missing:
        raise UserError(
            "a DataFrame of triples needs the columns stream, event_id, t_start, t_end, s, p, "
            f"o (event_id may be left out); missing: {', '.join(missing)}"
        )
    static = dict(graphs or {})
    incremental_query(plan, static)  # refuse a plan or missing graphs before Spark starts
    count = partitions or shuffle_partitions(frame.sparkSession)
    if frame.isStreaming:
        if until is not None:
            raise UserError("until is for a batch DataFrame; a streaming query runs on")
        return answer_columns(_streamed(plan, frame, static, count), plan.form)
    from pyspark.sql import functions as F

    from rsep.engine.sequence import columnar_reason
    from rsep.spark.columnar import columnar_frame
    from rsep.spark.replay import replay_frame

    scheme = choose_scheme(plan, count)
    if columnar_reason(plan) is None:
        rows = columnar_frame(frame, scheme, static, until)
    else:
        rows = replay_frame(frame, scheme, static, until)
    return answer_columns(rows.where(F.col("line").isNotNull()), plan.form)


def _streamed(plan: Plan, frame: DataFrame, graphs: Mapping[str, Any], count: int) -> DataFrame:
    """The answers of ``plan`` over a streaming DataFrame of triples, rows
    :data:`rsep.spark.live.OUTPUT_SCHEMA` (module docstring)."""
    from pyspark.sql import functions as F

    from rsep.spark.live import EVENT_SCHEMA, evaluated

    scheme = choose_scheme(plan, count, keys_projected=True)
    if "event_id" not in frame.columns:
        frame = frame.withColumn("event_id", F.lit(None).cast("string"))
    together = frame.repartition(count, "stream", "event_id", "t_start", "t_end")
    task = _events_task(scheme, vocabulary(scheme.final), graphs)
    return evaluated(together.mapInArrow(task, EVENT_SCHEMA), scheme, graphs)


def _events_task(
    scheme: Scheme, vocab: Vocabulary | None, graphs: Mapping[str, Any]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each task of a micro-batch runs over its triple rows: sorted by time
    and event, read into events as the event store's rows are
    (:func:`rsep.spark.eventstore.events_from_table`), each event's rows
    :data:`rsep.spark.live.EVENT_SCHEMA` with a tick row at the latest time."""
    router = Router(scheme, graphs)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        from rsep.rdf.formats.ntriples import TermTexts
        from rsep.spark.eventstore import TABLE_COLUMNS, events_from_table
        from rsep.spark.live import EventRows

        found = [batch for batch in batches if batch.num_rows]
        if not found:
            return
        with marked_errors():
            table = pa.Table.from_batches(found).select(list(TABLE_COLUMNS))
            order = [(name, "ascending") for name in ("t_end", "t_start", "stream", "event_id")]
            rows = EventRows(vocab, router)
            for event in events_from_table(table.sort_by(order), TermTexts()):
                rows.add(event, f"{event.stream}\u0001{event.id}\u0001{event.t_end}")
            yield rows.batch()

    return run


def answer_columns(answers: DataFrame, form: QueryForm) -> DataFrame:
    """Answers as JSON Lines texts (a ``line`` column) as columns by query form (module
    docstring), read by Spark SQL (:data:`ANSWER_JSON`), in their order."""
    from pyspark.sql import functions as F

    parsed = answers.select(F.from_json("line", ANSWER_JSON).alias("a")).select("a.*")
    if isinstance(form, Construct):
        triples = parsed.select("time", F.explode("triples").alias("triple"))
        return triples.select(
            "time",
            *(F.regexp_extract("triple", _TRIPLE, i).alias(n) for i, n in enumerate("spo", 1)),
        )
    if isinstance(form, Ask):
        return parsed.select("time", "boolean")
    if not isinstance(form, Select):
        raise UserError(f"no columns for answers of {type(form).__name__}")
    interval = [
        F.col("interval").getItem(0).alias("interval_start"),
        F.col("interval").getItem(1).alias("interval_end"),
    ]
    if not form.variables:
        return parsed.select("time", *interval, "bindings")
    values = [F.col("bindings").getItem(name).alias(name) for name in form.variables]
    return parsed.select("time", *interval, *values)
