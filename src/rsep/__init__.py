"""rsep: continuous queries and complex event patterns over RDF streams.

The public API (docs/api.md): :class:`Query` reads a query in any of rsep's dialects,
explains it and runs it over stream files, events or tables of triples, on the oracle, the
engine in this process or Spark; :class:`Answers` are its results as typed objects, Arrow or
pandas; :class:`Incremental` is the query fed as events arrive; :func:`read_table` reads
stream files as a table of triples. Every error a user can fix is a :class:`UserError`.

Layers (imports point down only): cli, api, spark, engine, semantics, algebra, lang, rdf.
See docs/architecture.md.
"""

from importlib.metadata import PackageNotFoundError, version

from rsep.algebra.params import ParameterError
from rsep.api import (
    ENGINES,
    TABLE_COLUMNS,
    Answers,
    Incremental,
    Query,
    StreamInput,
    read_table,
)
from rsep.errors import InputError, UserError
from rsep.lang import QuerySemanticError, QuerySyntaxError
from rsep.rdf.event import Event
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult

try:
    __version__ = version("rsep")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "ENGINES",
    "TABLE_COLUMNS",
    "Answers",
    "AskResult",
    "ConstructResult",
    "Event",
    "Incremental",
    "InputError",
    "ParameterError",
    "Query",
    "QuerySemanticError",
    "QuerySyntaxError",
    "Result",
    "SelectResult",
    "StreamInput",
    "UserError",
    "__version__",
    "read_table",
]
