"""``rsep explain QUERY``: the dialect a query is read in, and its plan with every parameter.

Prints how the dialect was chosen (``--dialect``, or the cue of the text that detection
found, docs/languages.md "Detection"), then :func:`rsep.algebra.plan.explain`: the plan tree,
every operational parameter with its value and where the value came from (query text with
its line, dialect default, profile, command line, built-in), and the automaton of each event
sequence. A syntax error prints the message with line, column and caret; a semantic error one
sentence with its position; both exit with code 1. ``--rules QUERY`` shows the EP-SPARQL rules
of other queries the plan reads, as ``rsep run --rules`` runs it. Last, for an event sequence,
how the engine in this process runs it (:func:`engine`: the columnar engine, or why not, and
which FILTERs may go to the exact path) and how ``rsep run --engine spark`` runs it
(:func:`physical`): by which engine, partitioned by key or in one task, and why.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rsep.algebra.compile import compile_query
from rsep.algebra.params import Profile
from rsep.algebra.plan import Plan, explain
from rsep.cli.options import add_query_arguments, query_base, read_query, settings
from rsep.cli.run import add_rules_argument, attach_rules
from rsep.lang import parse_query
from rsep.lang.dialects import Dialect, all_dialects, cue_text, get_dialect


def add_parser(commands: Any) -> None:
    """Register ``rsep explain``."""
    p = commands.add_parser(
        "explain",
        help="print a query's plan: windows, patterns, every parameter and where it came from",
        description=(
            "Read a query in any of rsep's dialects and print the detected dialect and the "
            "logical plan, with every operational parameter, its value and its source "
            "(query text, dialect default, profile, command line, built-in). See "
            "docs/languages.md."
        ),
    )
    add_query_arguments(p)
    p.add_argument(
        "--profile",
        choices=[profile.value for profile in Profile],
        help="engine profile whose reporting conventions to follow (default: the dialect's)",
    )
    add_rules_argument(p)
    p.set_defaults(run=run)


def detection(text: str, name: str | None) -> tuple[Dialect, str]:
    """The dialect to read ``text`` in and how it was chosen."""
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


def run(args: argparse.Namespace) -> int:
    """Print the dialect and the plan of the query."""
    text = read_query(args.query)
    overrides = settings(args.settings)
    dialect, how = detection(text, args.dialect)
    query = parse_query(text, dialect, base=query_base(args.query))
    plan = compile_query(query, dialect, overrides=overrides, profile=args.profile)
    plan = attach_rules(plan, args.rules, args.dialect)
    sys.stdout.write(how + "\n" + explain(plan) + engine(plan) + physical(plan))
    return 0


def engine(plan: Plan) -> str:
    """How ``rsep run --engine local`` evaluates a plan with an event sequence (empty for
    others): the columnar engine step by step, or why not
    (:func:`rsep.engine.sequence.describe`), and which FILTERs may go to the exact path
    (:func:`exact_path`)."""
    from rsep.engine.sequence import describe

    if not plan.sequences():
        return ""
    return "in this process (rsep run --engine local)\n" + describe(plan) + exact_path(plan)


def exact_path(plan: Plan) -> str:
    """Which FILTERs of a plan the columnar engine takes may leave its compiled programs
    (empty for the other plans): a program over the typed values decides most rows and
    sends the rows it cannot decide (decimals beyond a double, unusual datatypes) to
    pyoxigraph, counted in the run summary; a FILTER without program is decided exactly
    on the distinct bindings; a FILTER under a run's bindings (in the kernel) that a
    program cannot decide sends the whole run to the per-event engine (SPARQL 1.1 sec.
    17.2: the exact value semantics in every case)."""
    from rsep.engine.sequence import SequenceQuery, columnar_reason
    from rsep.lang.printer import to_sparql

    if columnar_reason(plan) is not None:
        return ""
    query = SequenceQuery(plan, {kb: frozenset() for kb in _kb_graphs(plan)})
    lines: list[str] = []
    for compiled in query.compiled:
        name = compiled.gpm.name
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
                "run's bindings); a row it cannot decide sends the run to the per-event engine"
            )
    if not lines:
        return "  FILTERs       none: no row goes to the exact path\n"
    return "\n".join(lines) + "\n"


def physical(plan: Plan) -> str:
    """How ``rsep run --engine spark`` runs a plan with an event sequence (empty for
    others): by the columnar engine in Spark tasks (:mod:`rsep.spark.columnar`) or the
    per-event engine (:mod:`rsep.spark.replay`), and its partitioning
    (:func:`rsep.spark.partition.choose_scheme`): by key, or one Spark task and why."""
    from rsep.engine.sequence import columnar_reason
    from rsep.spark.partition import choose_scheme

    if not plan.sequences():
        return ""
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
        else "the per-event engine in Spark tasks (rsep.spark.replay)"
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
