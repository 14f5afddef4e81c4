"""A query's answers, in time order: typed results (:mod:`rsep.rdf.results`), their JSON
Lines texts, an Arrow table, a pandas DataFrame, or written to a file or a Kafka topic.

The answers of a run are read once, as they come: the Spark job streams their texts to the
driver unparsed (:class:`rsep.spark.job.Streamed`), the engine in this process and the
oracle give result objects, and each form is made from either.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rsep.algebra.plan import Ask, Construct, QueryForm, Select
from rsep.errors import BadRecords, UserError
from rsep.rdf.results import (
    ConstructResult,
    Result,
    SelectResult,
    json_line,
    read_results,
    write_results,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


class Answers(Iterator[Result]):
    """The answers of one run (module docstring): iterate for :data:`~rsep.rdf.results.
    Result` objects, or take them all as :meth:`lines`, :meth:`to_arrow`,
    :meth:`to_pandas`, or :meth:`write` them. ``events`` counts the events the run read
    (all of them before the first answer); ``inexact_rows`` the rows whose FILTER the
    columnar engine's programs could not decide and were evaluated exactly (``None``:
    another engine ran); ``exact_instants`` the evaluation instants whose graph pattern
    the columnar solver does not take and pyoxigraph evaluated (``None``: not an RSP-QL
    graph pattern on the engine); ``bad`` the bad records skipped (``on_error``
    ``skip``: their count, the first of them, the dead-letter file), ``None`` when none
    could be."""

    def __init__(
        self,
        form: QueryForm,
        answers: Iterable[Result | str],
        events: int,
        inexact_rows: int | None = None,
        keep: object = None,
        bad: BadRecords | None = None,
        exact_instants: int | None = None,
    ) -> None:
        self.form = form
        self.events = events
        self.inexact_rows = inexact_rows
        self.exact_instants = exact_instants
        self.bad = bad
        self._answers = iter(answers)
        self._keep = keep  # what must outlive the reading (a table's temporary store)

    def __iter__(self) -> Answers:
        return self

    def __next__(self) -> Result:
        answer = next(self._answers)
        if isinstance(answer, str):
            [result] = read_results([answer])
            return result
        return answer

    def lines(self) -> Iterator[str]:
        """The answers as JSON Lines texts (:mod:`rsep.rdf.results`), without line ends."""
        for answer in self._answers:
            if isinstance(answer, str):
                yield answer
            else:
                out = io.StringIO()
                write_results([answer], out)
                yield out.getvalue().removesuffix("\n")

    def write(self, target: str | Path | IO[str]) -> int:
        """Write the answers as JSON Lines to an open text stream, a file, or a Kafka topic
        (``kafka://host:port/topic``, one answer per message); return the count."""
        if not isinstance(target, str | Path):
            count = 0
            for line in self.lines():
                target.write(line + "\n")
                count += 1
            return count
        if isinstance(target, str) and target.startswith("kafka:"):
            from rsep.spark.kafka import KafkaAddress, produce

            return produce(KafkaAddress.parse(target), self._messages())
        try:
            with Path(target).open("w", encoding="utf-8") as out:
                return self.write(out)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None

    def _messages(self) -> Iterator[str]:
        """The answers as Kafka messages: their JSON texts."""
        for answer in self._answers:
            if isinstance(answer, str):
                yield answer
            else:
                yield json_line(answer.to_json())

    def to_arrow(self) -> pa.Table:
        """The answers as an Arrow table (:func:`table_schema` gives its columns)."""
        import pyarrow as pa

        results = list(self)
        schema = table_schema(self.form, results)
        columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        for result in results:
            for row in _rows(result):
                for name in schema.names:
                    columns[name].append(row.get(name))
        return pa.table(columns, schema=schema)

    def to_pandas(self) -> pd.DataFrame:
        """The answers as a pandas DataFrame (the columns of :meth:`to_arrow`)."""
        frame: pd.DataFrame = self.to_arrow().to_pandas()
        return frame


def table_schema(form: QueryForm, results: Iterable[Result] = ()) -> pa.Schema:
    """The columns of a table of answers: ``time`` (int64), then for SELECT the match's
    interval (``interval_start``, ``interval_end``; null for a relation's row) and a
    string column per variable (a term in N-Triples syntax, null where unbound: the
    projected variables, or those the results bind for ``SELECT *``); for CONSTRUCT one
    row per triple, ``s``, ``p``, ``o``; for ASK ``boolean``."""
    import pyarrow as pa

    fields = [pa.field("time", pa.int64(), nullable=False)]
    if isinstance(form, Construct):
        fields += [pa.field(name, pa.string()) for name in ("s", "p", "o")]
    elif isinstance(form, Ask):
        fields.append(pa.field("boolean", pa.bool_()))
    elif isinstance(form, Select):
        names = list(form.variables)
        if not names:
            seen = {v for r in results if isinstance(r, SelectResult) for v in r.bindings}
            names = sorted(seen)
        fields += [pa.field("interval_start", pa.int64()), pa.field("interval_end", pa.int64())]
        fields += [pa.field(name, pa.string()) for name in names]
    return pa.schema(fields)


def _rows(result: Result) -> list[dict[str, Any]]:
    """The table rows of one result (:func:`table_schema`)."""
    if isinstance(result, SelectResult):
        row: dict[str, Any] = {"time": result.time}
        if result.interval is not None:
            row["interval_start"], row["interval_end"] = result.interval
        row.update((name, str(term)) for name, term in result.bindings.items())
        return [row]
    if isinstance(result, ConstructResult):
        triples = sorted(result.triples, key=str)
        return [
            {"time": result.time, "s": str(t.subject), "p": str(t.predicate), "o": str(t.object)}
            for t in triples
        ]
    return [{"time": result.time, "boolean": result.boolean}]
