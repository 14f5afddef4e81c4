"""What a query runs over: stream files, events in memory, tables of triples, and graphs.

A query reads its streams from one of three kinds of data, all giving the same events:

- stream files, as ``rsep run --stream`` takes them (:class:`rsep.spark.job.StreamInput`:
  a file in any format of :mod:`rsep.rdf.formats`, a folder of part files or of CSR-Bench
  ``data_NN.ttl`` files, a SPAseq description, a Parquet event store; with a stream IRI,
  every event of the file is on that stream);
- :class:`~rsep.rdf.event.Event` objects (a list, a generator);
- an Arrow table or a pandas DataFrame of triples in the event store's schema
  (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`: one row per triple, terms in N-Triples
  syntax, the rows of one event adjacent or told apart by ``event_id``). The columnar
  engine reads it in memory by the store's kernels (:func:`rsep.engine.batch.
  table_batches`, no Python object per triple); the other evaluators and Spark read it
  written once to a temporary Parquet event store (:meth:`Inputs.stream_files`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from pyoxigraph import Triple

from rsep.errors import BadRecords, UserError
from rsep.rdf.event import Event, Stream, StreamSet
from rsep.rdf.time import TimeUnit
from rsep.semantics.graph import Graph, TimeVaryingGraph
from rsep.spark.eventstore import TABLE_COLUMNS, write_store
from rsep.spark.job import StreamInput

if TYPE_CHECKING:
    import pyarrow as pa

    from rsep.engine.batch import TripleBatch
    from rsep.engine.terms import TermDictionary

GraphData: TypeAlias = Graph | TimeVaryingGraph | str | Path
"""A graph a query reads: a set of triples, a time-varying graph, or a file (Turtle,
N-Triples, RDF/XML… by its extension; a ``.trig`` file is a time-varying graph)."""


@dataclass
class Inputs:
    """Data a query runs over, in one of three forms: stream files (``files``), events
    (``events``) or a table of triples (``table``); ``folder`` keeps the temporary event
    store a table was written to alive as long as the inputs are read."""

    files: list[StreamInput] | None = None
    events: list[Event] | None = None
    table: pa.Table | None = None
    folder: tempfile.TemporaryDirectory[str] | None = None

    def stream_files(self) -> list[StreamInput] | None:
        """The stream files (``None`` for events): a table is written to a temporary
        one-file event store the first time it is asked for."""
        if self.table is not None and self.files is None:
            self.folder = tempfile.TemporaryDirectory(prefix="rsep-table-")
            self.files = [StreamInput(write_store(self.table, Path(self.folder.name)))]
        return self.files


def inputs_of(data: object) -> Inputs:
    """The inputs of ``data``: a file (``str``, ``Path``, :class:`StreamInput`; a string
    may be ``IRI=FILE``), a mapping of stream IRIs to files, a sequence of files, an Arrow
    table or record batch, a pandas DataFrame, or an iterable of events."""
    if isinstance(data, str | Path | StreamInput):
        return Inputs(files=[_file(data)])
    if isinstance(data, Mapping):
        return Inputs(files=[StreamInput(Path(path), str(iri)) for iri, path in data.items()])
    table = table_of(data)
    if table is not None:
        return Inputs(table=table)
    if not isinstance(data, Iterable):
        raise UserError(
            f"a query runs over stream files, events, or a table of triples, not "
            f"{type(data).__name__}"
        )
    items = list(data)
    if all(isinstance(item, str | Path | StreamInput) for item in items):
        return Inputs(files=[_file(item) for item in items])
    if all(isinstance(item, Event) for item in items):
        return Inputs(events=items)
    raise UserError("a query runs over a list of stream files or a list of events, not a mix")


def _file(item: str | Path | StreamInput) -> StreamInput:
    """One stream file: ``IRI=FILE`` or ``FILE`` as ``--stream`` takes them."""
    if isinstance(item, StreamInput):
        return item
    if isinstance(item, Path):
        return StreamInput(item)
    return StreamInput.parse(item)


def table_of(data: object) -> pa.Table | None:
    """``data`` as an Arrow table when it is one, a record batch or a pandas DataFrame
    (neither library imported for other data)."""
    module = type(data).__module__.partition(".")[0]
    if module == "pyarrow":
        import pyarrow as pa

        if isinstance(data, pa.Table):
            return data
        if isinstance(data, pa.RecordBatch):
            return pa.Table.from_batches([data])
    if module == "pandas":
        import pandas as pd
        import pyarrow as pa

        if isinstance(data, pd.DataFrame):
            return pa.Table.from_pandas(data, preserve_index=False)
    return None


def read_streams(
    items: Sequence[str | Path | StreamInput],
    time_unit: TimeUnit = TimeUnit.MILLISECONDS,
    bad: BadRecords | None = None,
) -> StreamSet:
    """The events of stream files (module docstring) as a stream set, each stream in time
    order (files given for one IRI merged); integer timestamps count ``time_unit`` (the
    plan's parameter ``time_unit``); bad records go to ``bad`` (default: stop at the
    first)."""
    from rsep.engine.batch import is_store
    from rsep.rdf.formats import read_events
    from rsep.semantics.csrbench import is_csrbench_data, read_stream
    from rsep.spark.eventstore import read_store_events

    grouped: dict[str, list[Event]] = {}
    for item in map(_file, items):
        path, iri = item.path, item.stream
        if iri is not None and is_csrbench_data(path):
            events: Iterable[Event] = read_stream(path, iri)[iri]
        elif is_store(path):
            events = read_store_events(path)
        else:
            events = read_events(path, stream=iri, time_unit=time_unit, bad=bad, **item.options)
        for event in events:
            if iri is not None and event.stream != iri:  # a format that names its stream
                event = Event(iri, event.t_start, event.t_end, event.graph, event.id)
            grouped.setdefault(event.stream, []).append(event)
    return StreamSet(
        Stream(iri, tuple(sorted(events, key=lambda e: e.t_start)))
        for iri, events in grouped.items()
    )


def reads_as_batches(files: Sequence[StreamInput]) -> bool:
    """Whether the columnar engine's readers read every one of the stream files: all
    but a CSR-Bench data folder given a stream IRI (:func:`read_streams` reads those)."""
    from rsep.semantics.csrbench import is_csrbench_data

    return not any(item.stream is not None and is_csrbench_data(item.path) for item in files)


def batch_sources(
    files: Sequence[StreamInput],
    terms: TermDictionary,
    time_unit: TimeUnit,
    bad: BadRecords | None = None,
) -> list[Iterator[TripleBatch]]:
    """Each stream file read straight into batches of ``terms``' ids
    (:func:`rsep.engine.batch.read_batches`), every event on the stream ``IRI=FILE``
    names, as :func:`rsep.engine.batch.merge_batches` takes them; bad records go to
    ``bad`` (default: stop at the first)."""
    from rsep.engine.batch import is_store, read_batches, store_files
    from rsep.spark.columnar import on_stream

    sources = []
    for item in files:
        streams: Sequence[str | None] = [item.stream]
        if item.stream is None and is_store(Path(item.path)):
            # a store keeps each stream's files apart, in time order within a stream: one
            # source per stream, which merge_batches puts in time order
            named = {values.get("stream") for _, values in store_files(Path(item.path))}
            if None not in named and len(named) > 1:
                streams = sorted(name for name in named if name is not None)
        for stream in streams:
            batches = read_batches(
                item.path, stream, terms, time_unit=time_unit, bad=bad, **item.options
            )
            sources.append(on_stream(batches, stream))
    return sources


def read_table(
    data: object,
    time_unit: TimeUnit = TimeUnit.MILLISECONDS,
    *,
    dictionary: TermDictionary | None = None,
) -> pa.Table:
    """Stream files (as :meth:`rsep.Query.run` takes them) as one Arrow table of triples in
    the event store's schema (:data:`~rsep.spark.eventstore.TABLE_COLUMNS`), in time
    order: what ``Query.run`` and ``Query.transform`` take, so any stream format becomes a
    pandas or Spark DataFrame. Read by the columnar engine's readers
    (:func:`rsep.engine.batch.read_batches`, merged in time order) and written column by
    column from its term dictionary (``dictionary``, a new one when not given: a caller
    reading many small inputs keeps one, so that each term is parsed and typed once), with
    no Python object per triple; each event gets a blank node of its own as ``event_id``
    (``_:e0``, ``_:e1``… in time order)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rsep.engine.batch import merge_batches
    from rsep.engine.terms import TermDictionary
    from rsep.spark.eventstore import arrow_schema

    files = inputs_of(data).files
    if files is None:
        raise UserError("read_table reads stream files (a table of triples is one already)")
    if not reads_as_batches(files):
        raise UserError("read_table does not read CSR-Bench data folders; run them with Query.run")
    terms = TermDictionary() if dictionary is None else dictionary
    sources = batch_sources(files, terms, time_unit)
    parts = []
    seen = 0
    for batch in merge_batches(sources):
        event = batch.triple_event
        ids = pa.array(np.arange(seen, seen + len(batch))[event]).cast(pa.string())
        seen += len(batch)
        columns = {
            "stream": pa.array(batch.streams, pa.string()).take(batch.event_stream[event]),
            "event_id": pc.binary_join_element_wise("_:e", ids, ""),
            "t_start": batch.event_start[event],
            "t_end": batch.event_end[event],
        }
        columns.update((name, terms.text_array(getattr(batch, name))) for name in "spo")
        parts.append(pa.table(columns))
    schema = pa.schema([arrow_schema().field(name) for name in TABLE_COLUMNS])
    return pa.concat_tables(parts).cast(schema) if parts else schema.empty_table()


def read_graphs(graphs: Mapping[str, GraphData] | None) -> dict[str, Graph | TimeVaryingGraph]:
    """The graphs a query reads, by IRI (:data:`GraphData`): files are read (a ``.trig``
    file as a time-varying graph), sets of triples and time-varying graphs kept."""
    from rsep.semantics import read_graph, read_time_varying_graph

    out: dict[str, Graph | TimeVaryingGraph] = {}
    for iri, graph in (graphs or {}).items():
        if isinstance(graph, str | Path):
            path = Path(graph)
            if not path.exists():
                raise UserError(f"{path}: no such file")
            name = path.name.lower().removesuffix(".gz")
            out[iri] = read_time_varying_graph(path) if name.endswith(".trig") else read_graph(path)
        elif isinstance(graph, TimeVaryingGraph):
            out[iri] = graph
        else:
            out[iri] = frozenset(graph)
    return out


def engine_graphs(
    graphs: Mapping[str, Graph | TimeVaryingGraph],
) -> dict[str, frozenset[Triple] | TimeVaryingGraph]:
    """The graphs as the engine takes them: a static graph as a set of triples, a
    time-varying graph that changes as its versions (RSP-QL Def. 10), one that never
    changes as its one graph."""
    out: dict[str, frozenset[Triple] | TimeVaryingGraph] = {}
    for iri, graph in graphs.items():
        if isinstance(graph, TimeVaryingGraph):
            out[iri] = graph if graph.changes() else graph.at(0)
        else:
            out[iri] = frozenset(graph)
    return out
