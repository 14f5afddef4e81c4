"""rsep's public Python API: the layer every caller of a query goes through (the command
line, ``rsep bench``, applications), above the oracle, the engine and Spark (DESIGN.md,
``rsep.api``; docs/api.md).

- :mod:`~rsep.api.query`: :class:`Query`, a query's text read in its dialect, compiled,
  explained and run;
- :mod:`~rsep.api.inputs`: what a query runs over (stream files, events, tables of
  triples), the graphs it reads, and stream files as a table (:func:`read_table`);
- :mod:`~rsep.api.driver`: the one driver loop (the oracle, the engine in this process,
  Spark) and :class:`Incremental`, the query fed as events arrive;
- :mod:`~rsep.api.answers`: :class:`Answers`, as typed results, JSON Lines, Arrow or
  pandas, or written to a sink;
- :mod:`~rsep.api.live`: a query live on Spark Structured Streaming;
- :mod:`~rsep.api.check`: the answer files CSR-Bench's correctness test reads
  (:meth:`Query.check`);
- :mod:`~rsep.api.convert`: CSV data sets to event streams with a mapping, on Spark;
- :mod:`~rsep.api.explain`: the text ``rsep explain`` prints.
"""

from __future__ import annotations

from rsep.api.answers import Answers
from rsep.api.driver import ENGINES, Incremental, check_engine
from rsep.api.inputs import engine_graphs, read_graphs, read_streams, read_table
from rsep.api.query import Query
from rsep.spark.eventstore import TABLE_COLUMNS
from rsep.spark.job import StreamInput

__all__ = [
    "ENGINES",
    "TABLE_COLUMNS",
    "Answers",
    "Incremental",
    "Query",
    "StreamInput",
    "check_engine",
    "engine_graphs",
    "read_graphs",
    "read_streams",
    "read_table",
]
