"""A SPAseq sequence whose every step follows the previous one with strict contiguity
(Def. 12, ``SEQ (A, B, C)``), evaluated as a whole by Spark SQL joins over the columnar
form, not event by event (issues 6, 7): the physical operator ``replay`` uses for such
plans (:func:`rsep.spark.replay.replay`).

Under strict contiguity a match is a chain of events, each at the *next instant* of the
streamset after the previous one (SPAseq Def. 12: no event of ``Σ`` strictly between), so
the sequence is a join on instants' ranks:

1. **Partitions and ranks.** With ``PARTITION BY`` (docs/semantics.md, SPAseq choice 9)
   each event belongs to the partition of each of its keys (every GPM alone,
   :func:`~rsep.spark.replay.event_keys`); without, all events are one partition. Per
   partition the *distinct* timestamps of its events are ranked (``dense_rank``; several
   events may share an instant), over every event of the streamset (choice 8), the
   prefilter's empty events included (they are instants too).
2. **Skeleton solutions.** Each step's GPM without its FILTERs is a basic graph pattern
   (:func:`~rsep.spark.partition.skeleton_join`) whose solutions on each event joins give
   exactly (:func:`~rsep.spark.replay.solution_frame`), its ``Graph (v, P_D)`` part joined
   (Def. 15); a solution is in the partition of its key variables' values.
3. **Chaining.** Step ``j+1``'s solutions join step ``j``'s matches on the partition, on
   rank ``r_j + 1`` and on the variables they share (IRIs or blank nodes, by eligibility:
   compared as terms), within the match's window (Def. 16: ``[t0 + kω, t0 + (k+1)ω]``
   holding the first event).
4. **FILTERs** of step ``j`` are evaluated on each candidate ``μ ∪ ν`` (choice 1: the GPM
   under the match so far, ``{μ} ⋈ ⟦μ(P)⟧_G``; with strict contiguity evaluating per
   mapping equals the set semantics of choice 2) by the engine's own evaluator
   (:meth:`rsep.engine.bgp.GroupMatcher.match` on ``{ FILTER(e) … }``: Python, pyoxigraph
   where it cannot tell) in a Python task over the joined rows; the mapping holds the
   earlier steps' variables and the stream part's (choice 10: not the knowledge base's).
5. **Answers** ``(μ, t1, t2)``, known at ``t2`` (choice 7), go to the driver and through
   the user's projection and IStream (:class:`rsep.engine.projection.Output`), as the
   engine's answers do (:func:`rsep.spark.replay.merge`).

What is decided from the plan (:func:`strict_sequence`, a reason otherwise) and what only
the data can tell (:func:`blockers`: events without a key, which belong to every
partition; interval events; triple terms; literals pyoxigraph may store in another form,
where the engine refuses a graph holding two of one stored form) send the replay back to
the engine's automaton, which then answers or raises exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, Triple

from rsep.algebra.events import EventPattern, Gpm, Strategy, unwrap_bounds
from rsep.algebra.events import Sequence as SeqExpr
from rsep.algebra.plan import Select
from rsep.algebra.r2s import R2S
from rsep.engine.bgp import GroupMatcher, as_stored, exact_double
from rsep.engine.projection import Answer, Output
from rsep.rdf.results import Result
from rsep.rdf.sparql import GraphMatcher, Mu
from rsep.rdf.terms import Term, parse_terms
from rsep.spark.partition import KeyJoin, Scheme, skeleton_join

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame

    from rsep.lang import ast


__all__ = [
    "Step",
    "StrictSequence",
    "answer_rows",
    "blocked",
    "blockers",
    "decided",
    "matches",
    "strict_sequence",
]


@dataclass(frozen=True)
class Step:
    """One step of the sequence: its GPM's skeleton (:class:`KeyJoin` without key), the
    text of its FILTERs' conjunction as one group (``None``: no FILTER) and the variables
    of its stream part (what the FILTERs may see beside the earlier steps')."""

    join: KeyJoin
    filters: str | None
    stream_variables: frozenset[str]
    exprs: tuple[ast.Expr, ...] = ()


@dataclass(frozen=True)
class StrictSequence:
    """A strict sequence the joins evaluate (module docstring): its steps, the
    ``PARTITION BY`` keys (empty: one partition), ``WITHIN`` (ms, ``None``: one window
    over everything) and the windows' origin ``t0``."""

    steps: tuple[Step, ...]
    by: tuple[str, ...]
    within: int | None
    t0: int

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable of a match's mapping, in order of first occurrence."""
        names = (name for step in self.steps for name in step.join.variables)
        return tuple(dict.fromkeys(names))


# Which plans ------------------------------------------------------------------------------

_CONTEXTUAL = frozenset({"NOW", "RAND", "UUID", "STRUUID", "BNODE"})
"""Built-ins whose value is not a function of the mapping: evaluated elsewhere, they may
differ from the engine's."""


def strict_sequence(scheme: Scheme, graphs: Mapping[str, Any]) -> StrictSequence | str:
    """The operator for the plan of ``scheme`` (the user's, profile applied:
    ``scheme.final``), or why the joins cannot give its answers exactly (then the
    engine's automaton runs, module docstring)."""
    plan = scheme.final
    if not plan.sequences():
        return "not a SPAseq sequence"
    nfas = plan.nfas()
    if len(nfas) != 1:
        return "not one sequence"
    if not isinstance(plan.form, Select) or plan.r2s is not R2S.ISTREAM:
        return "not SELECT with ISTREAM"
    r2r = plan.r2r
    if not isinstance(r2r, EventPattern):
        return "not one sequence expression"
    node, within, by = unwrap_bounds(r2r)
    steps = node.steps if isinstance(node, SeqExpr) else (node,)
    strategies = node.strategies if isinstance(node, SeqExpr) else ()
    if any(strategy is not Strategy.STRICT for strategy in strategies):
        return "a strategy other than strict contiguity ','"
    streams = frozenset(plan.dataset.streams)
    found: list[Step] = []
    for step in steps:
        if not isinstance(step, Gpm):
            return f"a step that is not a GPM ({type(step).__name__})"
        if streams and step.stream not in streams:
            return f"GPM {step.name}'s stream is not a FROM STREAM"
        made = _step(step, graphs)
        if isinstance(made, str):
            return f"GPM {step.name}: {made}"
        found.append(made)
    if by and scheme.by != by:
        return "PARTITION BY not partitioned by the scheme"
    shared = _shared_by_term(found, by)
    if shared is not None:
        return shared
    return StrictSequence(tuple(found), by, within, plan.parameters.t0)


def _step(gpm: Gpm, graphs: Mapping[str, Any]) -> Step | str:
    """The :class:`Step` of a GPM, or why joins cannot give its skeleton's solutions or
    why its FILTERs cannot be evaluated on a mapping alone."""
    from rsep.lang import ast
    from rsep.lang.printer import to_sparql

    made = skeleton_join(gpm, graphs)
    if isinstance(made, str):
        return made
    join, filters = made
    if not join.event:
        return "no triple pattern"
    for expr in filters:
        for node in expr.walk():
            if isinstance(node, ast.Exists):
                return "a FILTER with EXISTS (it reads the event's graph)"
            if isinstance(node, ast.BuiltIn) and node.name in _CONTEXTUAL:
                return f"a FILTER with {node.name}()"
    text = None
    if filters:
        text = "{ " + " ".join(f"FILTER({to_sparql(f)})" for f in filters) + " }"
    names = {x[1:] for pattern in join.event for x in pattern if x[0] == "?"}
    variables = frozenset(n for n in names if not n.startswith("_:"))
    return Step(join, text, variables, tuple(filters))


def _shared_by_term(steps: Sequence[Step], by: tuple[str, ...]) -> str | None:
    """Why the steps' shared variables cannot be joined by term, if so: a variable a step
    binds that an earlier step (or the partition key) bound must be a subject or predicate
    in the step or in the step that first bound it (then it is an IRI or a blank node,
    whose term is its value); the key variables must be bound by every step, so."""
    first: dict[str, Step] = {}
    for step in steps:
        mine = _positions(step.join)
        for name in by:
            if name not in mine:
                return f"GPM {step.join.gpm} does not bind the PARTITION BY key ?{name}"
            if not mine[name]:
                return f"GPM {step.join.gpm} binds the key ?{name} only as an object"
        for name, resource in mine.items():
            if name.startswith("_:"):
                continue
            earlier = first.get(name)
            if earlier is None:
                first[name] = step
            elif not resource and not _positions(earlier.join)[name]:
                return f"?{name} is shared as an object only (a literal compares by value)"
    return None


def _positions(join: KeyJoin) -> dict[str, bool]:
    """For each variable of a skeleton: whether it is a subject or predicate somewhere."""
    out: dict[str, bool] = {}
    for s, p, o in (*join.event, *join.kb):
        for term, resource in ((s, True), (p, True), (o, False)):
            if term.startswith("?"):
                out[term[1:]] = out.get(term[1:], False) or resource
    return out


# What only the data tells ---------------------------------------------------------------

_XSD = "http://www.w3.org/2001/XMLSchema#"
_SURELY_STORED = "|".join(
    (
        r'"(?:[^"\\]|\\.)*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*)?',
        rf'"(?:0|-?[1-9][0-9]{{0,17}})"\^\^<{_XSD}integer>',
        rf'"(?:0|-?[1-9][0-9]{{0,17}}|-?(?:0|[1-9][0-9]{{0,17}})\.[0-9]{{0,17}}[1-9])"\^\^<{_XSD}decimal>',
        rf'"-?(?:[1-9][0-9]{{0,6}}(?:\.[0-9]{{0,7}}[1-9])?|0\.0{{0,3}}[1-9](?:[0-9]{{0,9}}[1-9])?)"\^\^<{_XSD}double>',
        rf'"(?:true|false)"\^\^<{_XSD}boolean>',
        r'"[1-9][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:'
        r"[0-5][0-9](?:\.[0-9]*[1-9])?(?:Z|[+-](?:0[1-9]|1[0-3]):[0-5][0-9]|[+-]00:(?:0[1-9]|[1-5][0-9])"
        rf'|[+-]14:00)?"\^\^<{_XSD}dateTime>',
    )
)
SURELY_STORED = re.compile(f"^(?:{_SURELY_STORED})$")
"""Literals (N-Triples) that pyoxigraph surely stores as written (each alternative a
sufficient condition of :func:`rsep.engine.bgp.as_stored`): strings, canonical integers
and decimals of at most 18 digits a side, doubles of at most 15 digits in fixed notation
(Python's ``repr`` writes them back so), booleans, canonical ``dateTime`` on days 1-28.
Spark SQL tests it; the other literals go to ``as_stored`` itself."""


def blockers(graphs: Mapping[str, Any], counts: Iterable[tuple[str, int]] = ()) -> list[str]:
    """What the joins cannot evaluate as the engine does (empty: nothing): in the knowledge
    base graphs (:func:`_graph_blockers`), and in the events, ``counts`` of
    :func:`blocked`'s reasons. Then the engine's path runs, which answers or raises as
    before."""
    found = [f"knowledge base <{iri}>: {why}" for iri, why in _graph_blockers(graphs)]
    return found + [f"{count} {reason}" for reason, count in sorted(counts)]


def blocked(frame: DataFrame, keys: DataFrame | None, runs: str | None = None) -> DataFrame:
    """Rows ``run, r``: each thing in the events of ``frame`` the joins cannot evaluate as
    the engine does, ``r`` saying what: an event without a key (``keys``: rows ``ev, key``
    when partitioned; such an event is in every partition, choice 9), an event that lasts
    (SPAseq events have one timestamp, the engine refuses others), a triple term, a graph
    holding two literals pyoxigraph stores as one (the engine refuses it:
    ``LiteralForms.originals``); ``run`` is the column ``runs`` of the event (independent
    runs, :func:`matches`), else empty."""
    from pyspark.sql import functions as F

    run = (F.col(runs) if runs is not None else F.lit("")).alias("run")
    literal = F.col("o").startswith('"')
    unsure = frame.where(literal & ~F.col("o").rlike(SURELY_STORED.pattern)).select("ev")
    # few events hold a literal not surely stored as written: only theirs are grouped
    literals = frame.where(literal).join(F.broadcast(unsure.distinct()), "ev", "left_semi")
    collisions = (
        literals.groupBy("ev", run)
        .agg(F.collect_set("o").alias("o"))
        .mapInArrow(_collisions, "ev string, run string")
    )
    checks = [
        frame.where(F.col("t_start") != F.col("t_end")).select(
            run, F.lit("interval events").alias("r")
        ),
        frame.where(F.col("s").startswith("<<") | F.col("o").startswith("<<")).select(
            run, F.lit("triple terms").alias("r")
        ),
        collisions.select(
            "run", F.lit("graphs with two literals pyoxigraph stores as one").alias("r")
        ),
    ]
    if keys is not None:
        events = frame.select("ev", run).distinct()
        keyless = events.join(keys.select("ev"), "ev", "left_anti")
        checks.append(keyless.select("run", F.lit("events without a PARTITION BY key").alias("r")))
    union = checks[0]
    for more in checks[1:]:
        union = union.unionByName(more)
    return union


def _graph_blockers(graphs: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The knowledge base graphs given as triples that hold a triple term or two literals
    pyoxigraph stores as one (:func:`blockers`)."""
    for iri, graph in graphs.items():
        if not isinstance(graph, frozenset | set):
            continue
        if any(isinstance(t.object, Triple) or isinstance(t.subject, Triple) for t in graph):
            yield iri, "a triple term"
        elif _collide([t.object for t in graph if isinstance(t.object, Literal)]):
            yield iri, "two literals pyoxigraph stores as one"


def _collide(literals: Sequence[Literal]) -> bool:
    """Whether two of ``literals`` have one stored form (the engine's check, which raises
    then: :meth:`~rsep.rdf.sparql.LiteralForms.originals`)."""
    from rsep.errors import UserError
    from rsep.rdf.sparql import LiteralForms

    if all(as_stored(literal) for literal in literals):
        return False
    try:
        LiteralForms().originals(literals, "a graph")
    except UserError:
        return True
    return False


def _collisions(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The events (rows ``ev, run`` and the set ``o`` of their literals, N-Triples) whose
    graph holds two literals pyoxigraph stores as one, or a literal that does not parse
    (the engine's reading decides then), as rows ``ev, run``."""
    import pyarrow as pa

    schema = pa.schema([("ev", pa.string()), ("run", pa.string())])
    for batch in batches:
        found: dict[str, list[str]] = {"ev": [], "run": []}
        for ev, run, texts in zip(
            *(batch.column(n).to_pylist() for n in ("ev", "run", "o")), strict=True
        ):
            try:
                terms = parse_terms(texts)
            except (SyntaxError, ValueError):
                terms = None
            if terms is None or _collide([t for t in terms if isinstance(t, Literal)]):
                found["ev"].append(ev)
                found["run"].append(run)
        if found["ev"]:
            yield pa.RecordBatch.from_pydict(found, schema=schema)


# The joins --------------------------------------------------------------------------------


def matches(
    frame: DataFrame,
    sequence: StrictSequence,
    keys: DataFrame | None,
    graphs: Mapping[str, Any],
    runs: str | None = None,
) -> DataFrame:
    """The matches of ``sequence`` over the events of ``frame`` (the streamset, with the
    prefilter's empty events; module docstring): rows ``t1, t2`` and ``v_<name>`` for each
    of :attr:`StrictSequence.variables` (N-Triples). ``keys``: the events' keys, rows
    ``ev, key``, when partitioned. ``runs``: a column of ``frame`` that splits its events
    into independent streamsets, each evaluated on its own (its value is then the first
    column of the matches): several replays in one Spark job."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from rsep.spark.replay import solution_frame

    run = F.col(runs) if runs is not None else F.lit("")
    events = frame.select("ev", F.col("t_start").alias("t"), run.alias("run")).distinct()
    if sequence.by:
        assert keys is not None
        timed = keys.select("ev", "key").distinct().join(events, "ev")
    else:
        timed = events.withColumn("key", F.lit(""))
    # a partition is a run's key value: its key in the skeletons after the run's name
    timed = timed.select("ev", "t", F.concat_ws("\x01", "run", "key").alias("key"))
    # the distinct instants of each partition, ranked: equal times share a rank (Def. 12)
    rank = F.dense_rank().over(Window.partitionBy("key").orderBy("t"))
    ranked = timed.withColumn("rank", rank)
    # every event's triples with its partitions and ranks, once for all steps; the
    # skeletons group or join by event, which this partitioning already serves
    rows = frame.where(F.col("s").isNotNull()).join(ranked, "ev")
    bound: list[str] = []
    out: DataFrame | None = None
    for step in sequence.steps:
        base = ("ev", "key", "rank", "t")
        solutions, columns = solution_frame(rows, step.join, base, graphs)
        names = step.join.variables
        found = solutions.select(
            *base, *(F.col(columns["?" + name]).alias(f"n_{name}") for name in names)
        )
        if sequence.by:  # the solution's key is its partition's
            key = F.concat_ws("\x00", *(F.col(f"n_{name}") for name in sequence.by))
            found = found.where(F.substring_index("key", "\x01", -1) == key)
        if out is None:
            out = found.select(
                "key",
                "rank",
                F.col("t").alias("t1"),
                F.col("t").alias("t2"),
                *(F.col(f"n_{name}").alias(f"v_{name}") for name in names),
            )
            if sequence.within is not None:
                width, origin = sequence.within, sequence.t0
                window = F.floor((F.col("t1") - origin) / width)
                end = (window + 1) * width + origin
                out = out.where(F.col("t1") >= origin).withColumn("end", end.cast("long"))
        else:
            found = found.select(
                F.col("key").alias("n_key"),
                F.col("rank").alias("n_rank"),
                F.col("t").alias("n_t"),
                *(f"n_{name}" for name in names),
            )
            condition = (F.col("key") == F.col("n_key")) & (F.col("n_rank") == F.col("rank") + 1)
            for name in names:
                if name in bound:
                    condition = condition & (F.col(f"v_{name}") == F.col(f"n_{name}"))
            if sequence.within is not None:
                condition = condition & (F.col("n_t") <= F.col("end"))
            kept = [c for c in out.columns if c not in ("rank", "t2")]
            out = out.join(found, condition).select(
                *kept,
                F.col("n_rank").alias("rank"),
                F.col("n_t").alias("t2"),
                *(F.col(f"n_{name}").alias(f"v_{name}") for name in names if name not in bound),
            )
        if step.filters is not None:
            # choice 10: the earlier steps' variables and the stream part's
            visible = tuple(dict.fromkeys([*bound, *names]))
            visible = tuple(n for n in visible if n in bound or n in step.stream_variables)
            sure = decided(step.exprs, visible)
            if sure is None:
                out = out.mapInArrow(_FilterTask(step.filters, visible), out.schema)
            else:  # SQL keeps the rows it knows true; the engine tells the others
                known = F.col(_DECIDED)
                out = out.withColumn(_DECIDED, sure).where(known.isNull() | known)
                task = _FilterTask(step.filters, visible, _DECIDED)
                out = out.mapInArrow(task, out.schema).drop(_DECIDED)
        bound += [name for name in names if name not in bound]
    assert out is not None
    first = [F.substring_index("key", "\x01", 1).alias(runs)] if runs is not None else []
    return out.select(*first, "t1", "t2", *(f"v_{name}" for name in sequence.variables))


class _FilterTask:
    """A Python task keeping the candidate rows on which a step's FILTERs hold: the group
    ``{ FILTER(e1) … }`` matched on the empty graph under the row's mapping by the
    engine's matcher (:meth:`GroupMatcher.match`: the Python evaluator, pyoxigraph where
    it cannot tell), so exactly the engine's ``⟦μ(P)⟧_G`` for these solutions. With
    ``known``, the column :func:`decided` filled: a row it says true is kept as it is,
    only the others are evaluated."""

    def __init__(self, text: str, names: tuple[str, ...], known: str | None = None) -> None:
        self.text = text
        self.names = names
        self.known = known

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        matcher = GroupMatcher(GraphMatcher())
        empty: frozenset[Triple] = frozenset()
        for batch in batches:
            sure = (
                batch.column(self.known).to_pylist()
                if self.known is not None
                else [None] * batch.num_rows
            )
            if all(sure):
                yield batch
                continue
            open_rows = [i for i, known in enumerate(sure) if not known]
            rows = batch if len(open_rows) == batch.num_rows else batch.take(open_rows)
            columns = [rows.column(f"v_{name}").to_pylist() for name in self.names]
            texts = list({text for column in columns for text in column})
            terms = _readable(texts)
            verdicts: list[bool] = []
            for row in zip(*columns, strict=True):
                mu: dict[str, Term] = {}
                for name, text in zip(self.names, row, strict=True):
                    term = terms[text]
                    if term is None:  # a triple term: blocked() sends the data away
                        break
                    mu[name] = term
                else:
                    verdicts.append(bool(matcher.match(self.text, empty, mu)))
                    continue
                verdicts.append(False)
            if not columns:  # FILTERs over constants only
                verdicts = [bool(matcher.match(self.text, empty, {}))] * len(open_rows)
            mask = [bool(known) for known in sure]
            for i, verdict in zip(open_rows, verdicts, strict=True):
                mask[i] = verdict
            yield batch.filter(pa.array(mask, pa.bool_()))


def _readable(texts: Sequence[str]) -> dict[str, Term | None]:
    """The terms of ``texts`` (:func:`parse_terms`); ``None`` for one that is not an IRI,
    blank node or literal (a triple term)."""
    try:
        return dict(zip(texts, parse_terms(texts), strict=True))
    except (SyntaxError, ValueError):
        out: dict[str, Term | None] = {}
        for text in texts:
            try:
                (out[text],) = parse_terms([text])
            except (SyntaxError, ValueError):
                out[text] = None
        return out


# FILTERs Spark SQL can tell ----------------------------------------------------------------

_DECIDED = "_decided"
_FINITE = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
"""A finite number in the lexical space of ``xsd:double`` (XSD 1.1 sec. 3.3.5)."""
_DOUBLE_TEXT = f'^"({_FINITE})"\\^\\^<{re.escape(_XSD)}double>$'
"""An ``xsd:double`` literal (N-Triples) written as a finite number: its lexical form
(group 1), which Spark, Python and pyoxigraph all read as the nearest double."""


def decided(exprs: Sequence[ast.Expr], names: Sequence[str]) -> Column | None:
    """A Spark SQL column over the rows' ``v_<name>`` columns that is true where the
    conjunction of ``exprs`` surely holds, false where it surely does not, and null where
    only the engine can tell; ``None`` when it has a part SQL does not compute.

    SQL computes comparisons (``= != < > <= >=``) of arithmetic (``+ - *``, unary ``-``
    and ``+``) over variables bound to ``xsd:double`` literals written as finite numbers and
    over numeric constants a double holds exactly, combined by ``&& || !``: IEEE doubles,
    as the engine does after promotion (XPath F&O sec. 6.2, SPARQL 1.1 sec. 17.3). A
    variable bound otherwise (another datatype, ``NaN``, ``INF``, an IRI) or unbound, and
    a NaN operand of a comparison, make the value null. SQL's three-valued ``AND``/``OR``
    with null as "true, false or an error" is SPARQL's logic for ``&&``/``||``
    (sec. 17.2: ``F && E`` is false, ``T || E`` true), so a true or false here is the
    engine's, and each null row goes to it."""
    from pyspark.sql import functions as F

    def number(expr: ast.Expr) -> Column | None:
        from rsep.lang import ast

        if isinstance(expr, ast.Var):
            if expr.name not in names:
                return F.lit(None).cast("double")
            # regexp_extract gives "" where the text does not match: not a double to read
            lexical = F.regexp_extract(F.col(f"v_{expr.name}"), _DOUBLE_TEXT, 1)
            return F.when(lexical != "", lexical.cast("double"))
        if isinstance(expr, ast.Literal):
            value = _constant(expr)
            return None if value is None else F.lit(value).cast("double")
        if isinstance(expr, ast.Unary) and expr.op in ("-", "+"):
            inner = number(expr.operand)
            return None if inner is None else (-inner if expr.op == "-" else inner)
        if isinstance(expr, ast.Binary) and expr.op in ("+", "-", "*"):
            left, right = number(expr.left), number(expr.right)
            if left is None or right is None:
                return None
            return (
                left + right if expr.op == "+" else left - right if expr.op == "-" else left * right
            )
        return None

    def truth(expr: ast.Expr) -> Column | None:
        from rsep.lang import ast

        if isinstance(expr, ast.Binary) and expr.op in ("&&", "||"):
            left, right = truth(expr.left), truth(expr.right)
            if left is None or right is None:
                return None
            return left & right if expr.op == "&&" else left | right
        if isinstance(expr, ast.Unary) and expr.op == "!":
            inner = truth(expr.operand)
            return None if inner is None else ~inner
        if isinstance(expr, ast.Binary) and expr.op in _COMPARISONS:
            left, right = number(expr.left), number(expr.right)
            if left is None or right is None:
                return None
            compared = _COMPARISONS[expr.op](left, right)
            return F.when(~F.isnan(left) & ~F.isnan(right), compared)
        return None

    out: Column | None = None
    for expr in exprs:
        part = truth(expr)
        if part is None:
            return None
        out = part if out is None else out & part
    return out


_COMPARISONS: dict[str, Any] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
}


def _constant(literal: ast.Literal) -> float | None:
    """The double a numeric constant is promoted to, when the engine's promotion is the
    nearest double (integers of at most 53 bits, :func:`exact_double` decimals, doubles
    written as finite numbers); ``None`` otherwise."""
    from decimal import Decimal, InvalidOperation

    kind = literal.datatype.removeprefix(_XSD)
    try:
        if kind == "integer":
            value = int(literal.lexical)
            return float(value) if abs(value) < 2**53 else None
        if kind == "decimal":
            number = Decimal(literal.lexical)
            return float(number) if number.is_finite() and exact_double(number) else None
        if kind == "double" and re.fullmatch(_FINITE, literal.lexical):
            return float(literal.lexical)
    except (ValueError, InvalidOperation):
        return None
    return None


# Answers ----------------------------------------------------------------------------------


def answer_rows(
    found: Iterable[tuple[int, int, Sequence[str]]], sequence: StrictSequence, scheme: Scheme
) -> list[Result]:
    """The results of the matches ``(t1, t2, terms of the variables)``: each mapping
    ``(μ, t1, t2)`` known at ``t2`` (SPAseq choice 7), the answers of an instant in a
    fixed order, through the user's SELECT expressions, projection and IStream
    (:class:`Output`, a set: Def. 16), instant by instant."""
    rows = list(found)
    texts = list({t for _, _, values in rows for t in values})
    terms = dict(zip(texts, parse_terms(texts), strict=True))
    by_time: dict[int, set[tuple[tuple[tuple[str, str], ...], int]]] = {}
    for t1, t2, values in rows:
        pairs = tuple(zip(sequence.variables, values, strict=True))
        by_time.setdefault(t2, set()).add((pairs, t1))
    output = Output(scheme.final, answer_set=True)
    matcher = GraphMatcher()
    out: list[Result] = []
    for t2 in sorted(by_time):
        answers: list[Answer] = [
            (Mu({name: terms[value] for name, value in pairs}), t1, t2)
            for pairs, t1 in sorted(by_time[t2])
        ]
        out += output.instant(t2, answers, matcher)
        output.forget(t2)
    return out
