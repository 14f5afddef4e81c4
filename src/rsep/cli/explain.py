"""``rsep explain QUERY``: the dialect a query is read in, and its plan with every parameter.

Prints :meth:`rsep.api.Query.explain`: how the dialect was chosen (``--dialect``, or the
cue of the text that detection found, docs/languages.md "Detection"), the plan tree, every
operational parameter with its value and where the value came from (query text with its
line, dialect default, profile, command line, built-in), the automaton of each event
sequence, and for an event sequence how the engine in this process and ``rsep run --engine
spark`` run it. A syntax error prints the message with line, column and caret; a semantic
error one sentence with its position; both exit with code 1. ``--rules QUERY`` shows the
EP-SPARQL rules of other queries the plan reads, as ``rsep run --rules`` runs it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rsep.algebra.params import Profile
from rsep.cli.options import add_query_arguments
from rsep.cli.run import add_rules_argument, query_of


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


def run(args: argparse.Namespace) -> int:
    """Print the dialect and the plan of the query."""
    sys.stdout.write(query_of(args).explain())
    return 0
