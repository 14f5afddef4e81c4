"""A plan evaluated over its inputs by the oracle, the engine in this process, or the
engine in Spark tasks, and the incremental form an application feeds.

Every caller runs a query through here (``rsep run``, ``rsep bench``, the Python API):

- ``reference``: the oracle (:func:`rsep.semantics.evaluate`, the papers' definitions);
- ``local``: the engine in this process. A plan whose evaluator takes batches of term ids
  (:func:`rsep.engine.query.batch_reason`: SPAseq sequences, RSP-QL graph patterns over
  windows, CQELS-CEP event clauses, EP-SPARQL event patterns) over stream files reads them
  straight into batches
  (:func:`rsep.engine.batch.read_batches`, merged in time order); any other plan or input
  goes to :func:`rsep.engine.incremental_query`'s evaluator, fed by the one
  driver loop (:func:`rsep.engine.query.drive`);
- ``spark``: the engine in Spark tasks over stream files
  (:func:`rsep.spark.replay.run_streamed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from pyoxigraph import Triple

from rsep.algebra.plan import Plan
from rsep.api.answers import Answers
from rsep.api.inputs import (
    Inputs,
    batch_sources,
    engine_graphs,
    read_streams,
    reads_as_batches,
    table_of,
)
from rsep.engine.query import drive
from rsep.errors import BadRecords, UserError
from rsep.rdf.event import Event, StreamSet
from rsep.rdf.results import Result
from rsep.semantics.graph import Graph, TimeVaryingGraph
from rsep.spark.job import StreamInput

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from rsep.engine.batch import TripleBatch
    from rsep.engine.query import IncrementalQuery
    from rsep.engine.terms import TermDictionary

ENGINES = ("reference", "local", "spark")
"""The engines a query runs on: the oracle, the incremental engine in this process, and the
same engine inside Spark tasks."""


def check_engine(name: str) -> None:
    """Refuse an engine rsep does not have."""
    if name not in ENGINES:
        raise UserError(
            f"unknown engine {name!r}: 'reference' (the oracle), 'local' (the incremental "
            "engine in one process) or 'spark' (the engine inside Spark tasks)"
        )


def evaluate(
    plan: Plan,
    inputs: Inputs,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    *,
    engine: str = "local",
    until: int | None = None,
    start: int | None = None,
    master: str | None = None,
    pushed: Callable[[int], None] | None = None,
    bad: BadRecords | None = None,
) -> Answers:
    """The answers of ``plan`` over ``inputs`` and ``graphs`` on ``engine`` (module
    docstring), from ``start`` (default: the oracle's, the first item a window reads) up
    to ``until``; ``master`` is Spark's; ``pushed`` hears the count of events read so far;
    bad records of stream files go to ``bad`` (default: stop at the first; on Spark the
    columnar engine's read tasks skip them, the per-event replay stops). Time-varying graphs (RSP-QL
    Def. 10) are read at each evaluation instant on every engine."""
    check_engine(engine)
    if engine == "local" and inputs.table is not None:
        done = run_table(plan, inputs.table, graphs, until, start)
        if done is not None:
            return _counted(done, pushed)
    if engine == "spark":
        stored = inputs.stream_files()
        if stored is None:
            raise UserError(
                "the Spark engine reads stream files or tables; run events in memory on the "
                "engine 'local' or 'reference'"
            )
        from rsep.spark.replay import run_streamed

        files = [StreamInput(p.path.resolve(), p.stream, p.options) for p in stored]
        found = run_streamed(
            plan, files, engine_graphs(graphs), until, master, start=start, bad=bad
        )
        keep = inputs.folder
        return _counted(
            Answers(plan.form, found.lines, found.events, found.inexact_rows, keep, bad)
        )
    if engine == "local" and inputs.files is not None:
        done = run_files(plan, inputs.files, graphs, until, inputs.folder, bad, start)
        if done is not None:
            return _counted(done, pushed)
    if inputs.events is not None:
        events = inputs.events
        streams = StreamSet.from_events(events)
    else:
        streams = read_streams(inputs.stream_files() or [], plan.parameters.time_unit, bad)
        events = streams.events()
    keep = inputs.folder
    if engine == "local":
        from rsep.engine import incremental_query

        query = incremental_query(plan, engine_graphs(graphs), start=start)
        ordered = sorted(events, key=lambda e: (e.t_end, e.t_start))
        answers = drive(query, ordered, until, pushed=pushed)
        return Answers(plan.form, answers, len(events), keep=keep, bad=bad)
    from rsep.semantics import evaluate as oracle

    results = oracle(plan, streams, graphs, until, start=start)
    return _counted(Answers(plan.form, results, len(events), keep=keep, bad=bad), pushed)


def _counted(answers: Answers, pushed: Callable[[int], None] | None = None) -> Answers:
    """``answers``, their count of events told to ``pushed`` (known before the first)."""
    if pushed is not None:
        pushed(answers.events)
    return answers


def run_files(
    plan: Plan,
    inputs: Sequence[StreamInput],
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    until: int | None = None,
    keep: object = None,
    bad: BadRecords | None = None,
    start: int | None = None,
) -> Answers | None:
    """The answers of a plan the columnar engine takes over stream files read straight
    into batches (N-Quads and the event store by vectorised readers), in this process;
    ``None`` when the plan or an input needs the other path. ``keep`` is what must outlive
    the answers (:class:`Answers`); bad records go to ``bad``."""
    if not reads_as_batches(inputs):
        return None
    unit = plan.parameters.time_unit
    sources = partial(batch_sources, inputs, time_unit=unit, bad=bad)
    return _run_columnar(plan, graphs, until, sources, keep, bad, start)


def run_table(
    plan: Plan,
    table: pa.Table,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    until: int | None = None,
    start: int | None = None,
) -> Answers | None:
    """The answers of a plan the columnar engine takes over a table of triples in memory
    (:func:`rsep.engine.batch.table_batches`: the store's kernels, no file between);
    ``None`` when the plan needs the other path."""
    from rsep.engine.batch import table_batches

    def sources(terms: TermDictionary) -> list[Iterator[TripleBatch]]:
        return [table_batches(table, terms)]

    return _run_columnar(plan, graphs, until, sources, start=start)


def _run_columnar(
    plan: Plan,
    graphs: Mapping[str, Graph | TimeVaryingGraph],
    until: int | None,
    sources: Callable[[TermDictionary], list[Iterator[TripleBatch]]],
    keep: object = None,
    bad: BadRecords | None = None,
    start: int | None = None,
) -> Answers | None:
    """The engine's evaluator of a plan that takes batches of term ids
    (:func:`rsep.engine.query.batch_reason`) fed the ``sources`` of its dictionary's
    batches, merged in time order, by the one driver loop; ``None`` when it does not take
    the plan."""
    from rsep.engine import incremental_query
    from rsep.engine.batch import merge_batches
    from rsep.engine.query import batch_reason

    if batch_reason(plan) is not None:
        return None
    query = incremental_query(plan, engine_graphs(graphs), start=start)
    if query.dictionary is None:  # pragma: no cover - batch_reason's contract
        raise TypeError(f"a plan for batches went to {type(query).__name__}")
    count = [0]

    def pushed(events: int) -> None:
        count[0] = events

    results = list(drive(query, merge_batches(sources(query.dictionary)), until, pushed=pushed))
    inexact = getattr(query, "inexact_rows", None)
    exact = getattr(query, "exact_instants", None)
    return Answers(plan.form, results, count[0], inexact, keep, bad, exact)


class Incremental:
    """A query fed as its events arrive, on the engine in this process
    (:class:`rsep.engine.query.IncrementalQuery`): :meth:`push` events in time order,
    :meth:`advance` the watermark (no event at or before it comes any more), :meth:`finish`
    the input; each call returns the answers that became final, each exactly once, in time
    order: together, the oracle's answers over all the events.

    Queries given one ``dictionary`` share it: a table encoded once into
    :class:`~rsep.engine.batch.TripleBatch` es of its term ids (:meth:`encode`) is pushed
    to each of them as it is."""

    def __init__(
        self,
        plan: Plan,
        graphs: Mapping[str, frozenset[Triple] | TimeVaryingGraph] | None = None,
        dictionary: TermDictionary | None = None,
    ) -> None:
        from rsep.engine import incremental_query
        from rsep.engine.kernels import warm
        from rsep.engine.terms import TermDictionary

        self.plan = plan
        self.events = 0
        """Events pushed so far."""
        self.dictionary = TermDictionary() if dictionary is None else dictionary
        """The term ids of the batches it takes (the columnar engine's own)."""
        self._engine: IncrementalQuery = incremental_query(plan, graphs, dictionary=self.dictionary)
        warm()  # a live query's first batches wait for no compiler

    def share(self, dictionary: TermDictionary) -> None:
        """Take ``dictionary`` in place of :attr:`dictionary`: one that extends it (every
        term under the same id, as a dictionary only grows), so that queries restored
        from checkpoints of one shared dictionary share one again."""
        if len(dictionary) < len(self.dictionary):
            raise ValueError("a shared dictionary extends the query's own, it is smaller")
        self.dictionary = dictionary
        if self._engine.dictionary is not None:
            self._engine.share(dictionary)

    def __getstate__(self) -> dict[str, object]:
        """The query for a checkpoint: its engine carries the columnar engine's dictionary
        (:meth:`rsep.engine.sequence.SequenceQuery.__getstate__`)."""
        state = dict(self.__dict__)
        del state["dictionary"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        from rsep.engine.kernels import warm
        from rsep.engine.terms import TermDictionary

        self.__dict__.update(state)
        engine = self._engine
        self.dictionary = engine.dictionary if engine.dictionary is not None else TermDictionary()
        warm()  # a query restored from its checkpoint starts as a new one does

    @property
    def watermark(self) -> int | None:
        """The latest time :meth:`advance` moved to (``None``: not yet)."""
        return self._engine.watermark

    @property
    def exact_instants(self) -> int | None:
        """Evaluation instants whose graph pattern pyoxigraph evaluated, the columnar
        solver not taking it (``None``: not an RSP-QL graph pattern)."""
        exact: int | None = getattr(self._engine, "exact_instants", None)
        return exact

    @property
    def inexact_rows(self) -> int | None:
        """Rows whose FILTER the columnar engine's programs could not decide and were
        evaluated exactly (``None``: the plan runs on another evaluator)."""
        inexact: int | None = getattr(self._engine, "inexact_rows", None)
        return inexact

    def push(self, events: Iterable[Event] | pa.Table | pd.DataFrame | TripleBatch) -> list[Result]:
        """Take events in non-decreasing time, as objects, a table of triples
        (:data:`rsep.spark.eventstore.TABLE_COLUMNS`, Arrow or pandas) or a batch of
        :attr:`dictionary`'s ids (:meth:`encode`); the answers of every instant they
        complete."""
        out: list[Result] = []
        for chunk in self._pushes([events]):
            self.events += len(chunk)
            out += self._engine.push(chunk) if isinstance(chunk, list) else self._columnar(chunk)
        return out

    def encode(self, table: pa.Table) -> list[TripleBatch]:
        """A table of triples as batches of :attr:`dictionary`'s term ids
        (:func:`rsep.engine.batch.table_batches`): encoded once, pushed to every query
        that shares the dictionary."""
        from rsep.engine.batch import table_batches

        return list(table_batches(table, self.dictionary))

    def feed(
        self,
        arriving: Iterable[Iterable[Event] | pa.Table | pd.DataFrame | TripleBatch],
        until: int | None = None,
    ) -> Iterator[Result]:
        """Take micro-batches as they arrive (each events in time order, as :meth:`push`
        takes them) through the one driver loop (:func:`rsep.engine.query.drive`): each
        pushed as it comes, the watermark moved to just before its first event, the input
        finished when ``arriving`` ends (up to ``until``); the answers as they become
        final, each once."""
        before = self.events

        def counted(count: int) -> None:
            self.events = before + count

        return drive(self._engine, self._pushes(arriving), until, pushed=counted)

    def _pushes(
        self, arriving: Iterable[Iterable[Event] | pa.Table | pd.DataFrame | TripleBatch]
    ) -> Iterator[list[Event] | TripleBatch]:
        """What each of ``arriving`` gives the engine: events as a list; a table of
        triples in memory to the columnar engine (:func:`rsep.engine.batch.table_batches`),
        else as events read through a temporary event store (:mod:`rsep.api.inputs`); a
        batch of :attr:`dictionary`'s ids to the columnar engine as it is, else as its
        events."""
        from rsep.engine.batch import TripleBatch, table_batches

        engine = self._engine
        for item in arriving:
            if isinstance(item, TripleBatch):
                if engine.dictionary is not None:
                    yield item
                else:
                    events = item.events(self.dictionary)
                    yield sorted(events, key=lambda e: (e.t_end, e.t_start))
                continue
            table = table_of(item)
            if table is None:
                if not isinstance(item, Iterable):
                    raise UserError(f"push takes events or a table of triples, not {item!r}")
                yield list(item)
            elif engine.dictionary is not None:
                yield from table_batches(table, engine.dictionary)
            else:
                stored = Inputs(table=table)  # its temporary store lives while it is read
                events = read_streams(stored.stream_files() or []).events()
                yield sorted(events, key=lambda e: (e.t_end, e.t_start))

    def _columnar(self, batch: TripleBatch) -> list[Result]:
        """A batch of the columnar engine's term ids pushed to it."""
        if self._engine.dictionary is None:
            raise TypeError(f"{type(self._engine).__name__} takes events, not term ids")
        return self._engine.push(batch)  # type: ignore[arg-type]

    def advance(self, t: int) -> list[Result]:
        """Move the watermark to ``t``; every answer at an instant ``≤ t`` not yet given."""
        return self._engine.advance(t)

    def finish(self, until: int | None = None) -> list[Result]:
        """End of input: the answers still due (up to ``until``, default: the oracle's
        end of the time range)."""
        return self._engine.finish(until)
