"""What ``rsep explain`` prints for a query: how its dialect was chosen, its plan with every
parameter and its source (:func:`rsep.algebra.plan.explain`), and, for an event sequence,
how the engine in this process and the Spark job run it.

The text is :meth:`rsep.api.Query.explain`'s; the command line prints it as it is.
"""

from __future__ import annotations

from pyoxigraph import Triple

from rsep.algebra.plan import Plan, explain
from rsep.lang.dialects import Dialect, all_dialects, cue_text, get_dialect


def detection(text: str, name: str | None) -> tuple[Dialect, str]:
    """The dialect to read ``text`` in (``name``, or detected from the text's cues,
    docs/languages.md "Detection") and a line saying how it was chosen."""
    if name is not None:
        dialect = get_dialect(name)
        return dialect, f"dialect {dialect.name} ({dialect.title}): given by --dialect"
    cues = cue_text(text)
    for dialect in all_dialects():
        for cue in dialect.cues:
            found = cue.search(cues)
            if found is not None:
                return dialect, (
                    f"dialect {dialect.name} ({dialect.title}): detected from the text, "
                    f"cue {found.group(0).strip()!r}"
                )
    dialect = get_dialect("sparql")
    return dialect, f"dialect sparql ({dialect.title}): no cue of a streaming dialect"


def explanation(how: str, plan: Plan) -> str:
    """The whole text: the dialect line ``how``, the plan, then how the engine in this
    process (:func:`engine`) and on Spark (:func:`physical`) run it."""
    return how + "\n" + explain(plan) + engine(plan) + physical(plan)


def engine(plan: Plan) -> str:
    """How ``rsep run --engine local`` evaluates a plan with an event sequence (empty for
    others): the columnar engine step by step, or why not
    (:func:`rsep.engine.sequence.describe`), and which FILTERs may go to the exact path
    (:func:`exact_path`)."""
    from rsep.engine.sequence import describe

    if not plan.sequences():
        return window_path(plan) or event_path(plan)
    return "in this process (rsep run --engine local)\n" + describe(plan) + exact_path(plan)


def window_path(plan: Plan) -> str:
    """How the engine in this process evaluates an RSP-QL graph pattern over windows (empty
    for other plans): by the columnar solver (:mod:`rsep.engine.dataset`: each block of
    triple patterns matched on its graph's term ids at every evaluation instant of a
    micro-batch at once, blocks joined, FILTERs by programs), or by pyoxigraph at each
    instant, and why."""
    from rsep.algebra.events import GraphPatternRef
    from rsep.engine.continuous import ContinuousWindowQuery
    from rsep.lang.printer import to_sparql

    if not isinstance(plan.r2r, GraphPatternRef):
        return ""
    dataset = plan.dataset
    graphs: dict[str, frozenset[Triple]] = {
        iri: frozenset() for iri in (*dataset.default_graphs, *dataset.named_graphs)
    }
    query = ContinuousWindowQuery(plan, graphs)
    head = "in this process (rsep run --engine local)\n"
    solver = query.solver
    if solver is None:
        return (
            head + "  graph pattern  evaluated by pyoxigraph at each evaluation instant "
            f"(counted): {query.exact_reason}\n"
        )
    lines = [
        "  graph pattern  columnar: each block matched on its graph's term ids at every "
        "evaluation instant of a push at once, the blocks joined on the instant and their "
        "shared variables"
    ]
    for block in solver.group.blocks:
        where = "default graph" if block.graph is None else f"GRAPH <{block.graph}>"
        lines.append(f"  block          {where}: {len(block.patterns)} triple pattern(s)")
    for f in (*(f for b in solver.group.blocks for f in b.filters), *solver.group.filters):
        how = (
            "no program: decided exactly on each distinct binding"
            if f.program is None
            else "compiled; the rows it cannot decide go to pyoxigraph (counted)"
        )
        lines.append(f"  FILTER         {to_sparql(f.expr)}: {how}")
    return head + "\n".join(lines) + "\n"


def event_path(plan: Plan) -> str:
    """How the engine in this process evaluates RSEP-QL's ``MATCH`` (empty for other
    plans): each basic event pattern matched in columns or by the exact matcher (and why),
    the instants evaluated many at once or one after the other (consumption), and the
    graph pattern beside it by the columnar solver or by pyoxigraph."""
    from rsep.algebra.events import Match
    from rsep.algebra.plan import EventJoin
    from rsep.engine.rsepql import RsepqlQuery

    r2r = plan.r2r
    if not isinstance(r2r.event if isinstance(r2r, EventJoin) else r2r, Match):
        return ""
    dataset = plan.dataset
    graphs: dict[str, frozenset[Triple]] = {
        iri: frozenset() for iri in (*dataset.default_graphs, *dataset.named_graphs)
    }
    query = RsepqlQuery(plan, graphs)
    lines = ["in this process (rsep run --engine local)"]
    for candidates in query._events.values():
        event = candidates.event
        how = (
            "matched in columns, a batch of items at a time"
            if candidates.exact_reason is None
            else f"matched item by item by the exact matcher: {candidates.exact_reason}"
        )
        lines.append(f"  EVENT          <{event.window}> {event.pattern.text}: {how}")
    lines.append(
        "  operators      columnar event operators (SEQ, FIRST, LAST, selection policies), "
        + (
            "every pending evaluation instant at once"
            if query._batched()
            else "one instant after the other (consumption carries the potential input)"
        )
    )
    if query.graph_pattern is not None:
        lines.append(
            "  graph pattern  "
            + (
                "columnar, at every evaluation instant at once, joined on the instant"
                if query.solver is not None
                else f"evaluated by pyoxigraph at each evaluation instant: {query.exact_reason}"
            )
        )
    return "\n".join(lines) + "\n"


def exact_path(plan: Plan) -> str:
    """Which FILTERs of a plan the columnar engine takes may leave its compiled programs
    (empty for the other plans): a program over the typed values decides most rows and
    sends the rows it cannot decide (decimals beyond a double, unusual datatypes) to
    pyoxigraph, counted in the run summary; a FILTER without program is decided exactly
    on the distinct bindings; a FILTER under a run's bindings (in the kernel) that a
    program cannot decide is decided by pyoxigraph for those values; a GPM that is not
    compiled is evaluated by pyoxigraph under each run (SPARQL 1.1 sec. 17.2: the exact
    value semantics in every case)."""
    from rsep.engine.sequence import SequenceQuery, columnar_reason
    from rsep.lang.printer import to_sparql

    if columnar_reason(plan) is not None:
        return ""
    query = SequenceQuery(plan, {kb: frozenset() for kb in _kb_graphs(plan)})
    lines: list[str] = []
    for gpm, compiled in zip(query.gpms, query.compiled, strict=True):
        name = gpm.name
        if compiled is None:
            lines.append(
                f"  GPM {name:<9} not compiled: evaluated by pyoxigraph on each event under "
                "each run's values of the variables it names (counted)"
            )
            continue
        for f in (*compiled.local, *compiled.kb_local):
            text = to_sparql(f.expr)
            if f.program is None:
                how = "no program: decided exactly on each distinct binding"
            else:
                how = "compiled; the rows it cannot decide go to pyoxigraph (counted)"
            lines.append(f"  FILTER of {name:<3} {text}: {how}")
        for f in compiled.deferred:
            lines.append(
                f"  FILTER of {name:<3} {to_sparql(f.expr)}: compiled into the kernel (the "
                "run's bindings); a row it cannot decide is decided by pyoxigraph (counted)"
            )
    if not lines:
        return "  FILTERs       none: no row goes to the exact path\n"
    return "\n".join(lines) + "\n"


def physical(plan: Plan) -> str:
    """How ``rsep run --engine spark`` runs a plan: a SPAseq sequence by the columnar
    engine in Spark tasks (:mod:`rsep.spark.columnar`), or by none when that engine does
    not take it, partitioned by key (:func:`rsep.spark.partition.choose_scheme`) or in
    one task and why; any other plan by the engine's evaluator in Spark tasks
    (:mod:`rsep.spark.replay`), over time ranges (:func:`rsep.spark.partition.time_ranges`)
    or in one task and why."""
    from rsep.engine.sequence import columnar_reason
    from rsep.spark.partition import TimeRanges, choose_scheme, time_ranges

    if not plan.sequences():
        ranges = time_ranges(plan)
        if isinstance(ranges, TimeRanges):
            split = (
                f"{ranges.reason}: one task per range (spark.sql.shuffle.partitions of them), "
                "each keeping the answers at the range's instants"
            )
        else:
            split = f"one task ({ranges}): every item is evaluated in one process"
        return (
            "on Spark (rsep run --engine spark)\n"
            "  evaluated by  the engine's evaluator in Spark tasks, fed the events in time "
            "order\n"
            f"  partitions    {split}\n"
            "  answers       streamed to the driver in time order\n"
        )
    scheme = choose_scheme(plan, 1)
    if scheme.partitioned:
        keys = ", ".join("?" + n for n in scheme.by)
        split = (
            f"by {keys}: an event to the task owning each of its keys, an event without a "
            "key to every task (SPAseq choice 9)"
        )
    else:
        split = (
            f"one task ({scheme.reason.removesuffix(': one partition')}): a sequence relates "
            "consecutive instants of the whole streamset (SPAseq Def. 12), so no event is "
            "evaluated apart from the others"
        )
    reason = columnar_reason(plan)
    runner = (
        "the columnar engine in Spark tasks (mapInArrow), reading the files in parallel tasks"
        if reason is None
        else f"none: the columnar engine does not take it ({reason}; the oracle: "
        "--engine reference)"
    )
    return (
        "on Spark (rsep run --engine spark)\n"
        f"  evaluated by  {runner}\n"
        f"  partitions    {split}\n"
        "  answers       merged in Spark (an answer two tasks give kept once, at its "
        "earliest time), streamed to the driver in time order\n"
    )


def _kb_graphs(plan: Plan) -> set[str]:
    """The knowledge base graphs the plan's GPMs name (SPAseq Def. 15)."""
    from rsep.algebra.events import Gpm

    return {
        node.graph_kb.graph
        for node in plan.r2r.walk()
        if isinstance(node, Gpm) and node.graph_kb is not None
    }
