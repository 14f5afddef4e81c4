"""A continuous query: its text read in one of rsep's dialects, compiled to a plan with every
parameter and its source, explained, and run over streams on the oracle, the engine in
this process, or Spark (:mod:`rsep.api.driver`)."""

from __future__ import annotations

import copy
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from rsep.algebra.compile import compile_query, with_rules
from rsep.algebra.params import PARAMETERS, Parameters
from rsep.algebra.plan import Plan
from rsep.api.answers import Answers
from rsep.api.driver import Incremental, evaluate
from rsep.api.explain import detection, explanation
from rsep.api.inputs import GraphData, engine_graphs, inputs_of, read_graphs, read_streams
from rsep.errors import BadRecords, UserError
from rsep.lang import parse_query
from rsep.lang.dialects import Dialect
from rsep.rdf.event import StreamSet

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rsep.api.live import Live
    from rsep.engine.terms import TermDictionary
    from rsep.semantics.check import Verdict


class Query:
    """A query of any of rsep's dialects (RSP-QL, C-SPARQL, CQELS-QL, RSEP-QL, EP-SPARQL,
    CQELS-CEP, SPAseq, SPARQL), compiled to its plan.

    ``dialect`` is a dialect's name, or ``None`` to detect it from the text
    (docs/languages.md, "Detection"); ``base`` resolves relative IRIs; ``profile`` is an
    engine profile whose reporting conventions to follow; ``rules`` are EP-SPARQL CONSTRUCT
    queries whose derived triples this query reads (its Q-closure, EP-SPARQL Sect. 4.2).
    Operational parameters (``rsep explain`` lists them) come as ``parameters`` by their
    names, or as keywords with ``_`` for the dot (``window_t0=0``, ``r2s="istream"``);
    they beat the query text, as ``rsep run --set`` does. A bad query raises
    :class:`~rsep.lang.QuerySyntaxError` or :class:`~rsep.lang.QuerySemanticError` (line
    and column), a bad parameter :class:`~rsep.algebra.params.ParameterError`: all
    :class:`rsep.errors.UserError`.
    """

    def __init__(
        self,
        text: str,
        dialect: str | None = None,
        *,
        base: str | None = None,
        profile: str | None = None,
        rules: Sequence[Query] = (),
        parameters: Mapping[str, object] | None = None,
        **settings: object,
    ) -> None:
        self.text = text
        found, self.detection = detection(text, dialect)
        self.dialect: Dialect = found
        """The dialect the text was read in."""
        overrides = {name: _text(value) for name, value in (parameters or {}).items()}
        overrides.update((_name(name), _text(value)) for name, value in settings.items())
        ast = parse_query(text, found, base=base)
        self.plan: Plan = compile_query(ast, found, overrides=overrides, profile=profile)
        """The logical plan (:class:`rsep.algebra.plan.Plan`)."""
        if rules:
            self.plan = self.with_rules(*rules).plan

    @classmethod
    def read(cls, path: str | Path, dialect: str | None = None, **options: object) -> Query:
        """The query in file ``path``, its relative IRIs resolved against the file's URI
        (RFC 3986 sec. 5.1.3; a ``BASE`` in the text wins); ``options`` as the
        constructor's."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot read the query {path}: {exc.strerror or exc}") from None
        options.setdefault("base", path.resolve().as_uri())
        return cls(text, dialect, **options)  # type: ignore[arg-type]

    def with_rules(self, *rules: Query) -> Query:
        """This query reading the derivations of the EP-SPARQL CONSTRUCT queries ``rules``
        (:func:`rsep.algebra.compile.with_rules`)."""
        out = copy.copy(self)
        out.plan = with_rules(self.plan, [rule.plan for rule in rules])
        return out

    @property
    def parameters(self) -> Parameters:
        """Every operational parameter: a mapping of names to their value, source (query
        text, dialect default, profile, command line or keyword, built-in) and note."""
        return self.plan.parameters

    def explain(self) -> str:
        """What ``rsep explain`` prints: how the dialect was chosen, the plan with every
        parameter and its source, and how the engine runs it."""
        return explanation(self.detection, self.plan)

    def run(
        self,
        data: object,
        graphs: Mapping[str, GraphData] | None = None,
        *,
        engine: str = "local",
        until: int | None = None,
        start: int | None = None,
        master: str | None = None,
        pushed: Callable[[int], None] | None = None,
        on_error: str = "stop",
        dead_letters: str | Path | None = None,
    ) -> Answers:
        """The answers over ``data``: stream files (a path, ``"IRI=FILE"``, a
        :class:`rsep.spark.job.StreamInput`, a mapping of stream IRIs to files, or a list
        of these), events (:class:`rsep.rdf.event.Event`), or an Arrow table or pandas
        DataFrame of triples (:data:`rsep.spark.eventstore.TABLE_COLUMNS`); ``graphs`` by IRI
        (files, sets of triples, time-varying graphs). ``engine``: ``local`` (the engine in
        this process), ``reference`` (the oracle) or ``spark`` (stream files and tables;
        ``master`` its Spark master). ``until`` is the last instant evaluated, ``start``
        the oracle's first; ``pushed`` hears the count of events read so far. A bad
        record of a stream file stops the run with ``file:line: reason``
        (:class:`rsep.errors.InputError`), or with ``on_error`` ``skip`` (engines
        ``local`` and ``reference``) is skipped, counted in :attr:`Answers.bad` and
        written to ``dead_letters`` (JSON Lines: file, line, reason, record) when given."""
        return evaluate(
            self.plan,
            inputs_of(data),
            read_graphs(graphs),
            engine=engine,
            until=until,
            start=start,
            master=master,
            pushed=pushed,
            bad=BadRecords.of(on_error, dead_letters),
        )

    def transform(
        self,
        frame: DataFrame,
        graphs: Mapping[str, GraphData] | None = None,
        *,
        until: int | None = None,
        partitions: int | None = None,
    ) -> DataFrame:
        """The answers over a Spark DataFrame of triples (the event store's columns,
        :data:`rsep.spark.eventstore.TABLE_COLUMNS`) as a Spark DataFrame, computed by
        Spark tasks when the user's job runs (:func:`rsep.spark.frame.transform`): a
        DataFrame in time order for a batch DataFrame, a streaming DataFrame (append mode)
        for a streaming one. So ``frame.transform(query.transform)`` composes with the rest
        of a PySpark job. ``graphs`` as :meth:`run` takes them (static); ``until`` the last
        instant evaluated (batch); ``partitions`` the engine partitions (default
        ``spark.sql.shuffle.partitions``)."""
        from rsep.spark.frame import transform

        static = engine_graphs(read_graphs(graphs))
        return transform(self.plan, frame, static, until=until, partitions=partitions)

    def incremental(
        self,
        graphs: Mapping[str, GraphData] | None = None,
        *,
        dictionary: TermDictionary | None = None,
    ) -> Incremental:
        """The query on the engine in this process, fed as events arrive
        (:class:`rsep.api.driver.Incremental`: ``push``, ``advance``, ``finish``); queries
        given one ``dictionary`` take the same encoded batches (``Incremental.encode``)."""
        return Incremental(self.plan, engine_graphs(read_graphs(graphs)), dictionary)

    def live(
        self,
        sources: Sequence[str],
        *,
        folders: bool = False,
        graphs: Mapping[str, GraphData] | None = None,
        output: str | None = None,
        checkpoint: Path | None = None,
        available_now: bool = False,
        trigger: str | None = None,
        master: str | None = None,
        late: str | None = None,
        dead_letters: str | None = None,
        idle: float | None = None,
        on_error: str = "stop",
    ) -> Live:
        """The query live on Spark Structured Streaming (:func:`rsep.spark.live.start_live`)
        over ``sources`` (:mod:`rsep.api.live`; with ``folders``, folders of arriving
        files), its answers to ``output`` as the watermark passes them (``None`` or ``-``:
        standard output; a file, a folder, ``kafka://…``: :func:`rsep.spark.sink.sink_of`).
        ``checkpoint`` keeps offsets, watermark and state (default: a temporary folder);
        ``available_now`` processes what the sources hold and ends; ``trigger`` is the time
        between triggers (``"1 second"``); ``master`` is Spark's. Late events go to
        ``late``, bad records (``on_error`` ``skip``) to ``dead_letters`` (addresses as
        ``output`` takes them; counted in :attr:`Live.tally` always); ``idle`` (seconds)
        leaves a silent source out of the watermark (docs/live.md)."""
        from rsep.api.live import Live, sources_of
        from rsep.spark.live import start_live
        from rsep.spark.session import get_session
        from rsep.spark.sink import TextSink, sink_of

        live_sources = sources_of(sources, folders, on_error)
        static = engine_graphs(read_graphs(graphs))
        sink = sink_of(output)
        temporary = checkpoint is None
        folder = checkpoint or Path(tempfile.mkdtemp(prefix="rsep-checkpoint-"))
        try:
            new = not (folder / "commits").is_dir()
            if isinstance(sink, TextSink) and sink.path is not None and new:
                try:
                    sink.path.parent.mkdir(parents=True, exist_ok=True)
                    sink.path.write_text("", encoding="utf-8")  # a new query: a new file
                except OSError as exc:
                    raise UserError(f"cannot write {sink.path}: {exc.strerror or exc}") from None
            query = start_live(
                get_session(master),
                self.plan,
                live_sources,
                folder,
                sink,
                static,
                available_now=available_now,
                interval=trigger,
                late=None if late is None else sink_of(late),
                dead_letters=None if dead_letters is None else sink_of(dead_letters),
                idle=idle,
            )
        except BaseException:
            if temporary:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        return Live(query, folder, temporary)

    def check(
        self,
        data: object,
        answer: str | Path,
        graphs: Mapping[str, GraphData] | None = None,
        *,
        registration: int | None = None,
        granularity: int | None = None,
        until: int | None = None,
        answer_granularity: int | None = None,
    ) -> Verdict:
        """CSR-Bench's correctness test (RSP-QL Def. 25-26, :mod:`rsep.semantics.check`):
        whether the answer an engine wrote to file ``answer`` (:mod:`rsep.api.check`) is
        one of this query's correct answers over ``data`` (as :meth:`run` takes it), one per
        admissible t0 (``registration``: the registration time, default ``window.t0``;
        stepped by ``granularity``, default the data's grid). Compile the query under that
        engine's ``profile``."""
        from rsep.api.check import read_answer_file
        from rsep.semantics.check import check

        if granularity is not None and granularity < 1:
            raise UserError("--granularity must be a positive number of ms")
        inputs = inputs_of(data)
        if inputs.events is not None:
            streams = StreamSet.from_events(inputs.events)
        else:
            streams = read_streams(inputs.stream_files() or [], self.plan.parameters.time_unit)
        relations, empty_relations = read_answer_file(Path(answer), answer_granularity)
        return check(
            self.plan,
            streams,
            relations,
            read_graphs(graphs),
            registration=registration,
            granularity=granularity,
            until=until,
            empty_relations=empty_relations,
        )

    def __repr__(self) -> str:
        return f"Query(dialect={self.dialect.name!r}, form={self.plan.form})"


def _name(keyword: str) -> str:
    """The parameter a keyword names: itself, or with its first ``_`` read as ``.``
    (``window_t0``: ``window.t0``; ``max_runs`` stays)."""
    if keyword in PARAMETERS:
        return keyword
    dotted = keyword.replace("_", ".", 1)
    return dotted if dotted in PARAMETERS else keyword


def _text(value: object) -> str:
    """A parameter's value as ``--set`` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)
