"""``rsep check QUERY --profile ENGINE --answers FILE``: CSR-Bench's correctness test.

RSP-QL Def. 25-26 and Theorem 1 (:mod:`rsep.semantics.check`): the query is compiled under
the engine's profile, the oracle computes the answer for every admissible t0
(``T0 = {a, …, a + β − 1}``, ``a`` the registration time, ``--registration``, default the
plan's ``window.t0``; stepped by ``--granularity``, default the grid of the data), and the
engine's answer is correct iff it equals a contiguous run of one of them (relations
compared by content, as CSR-Bench's oracle does). Otherwise the closest correct answer
(the one agreeing longest from the answer's start) and the first relation where the answer
departs from it are printed, both sides in full.

``--answers`` is rsep's JSON Lines results (:mod:`rsep.rdf.results`) or a CSR-Bench answer
(``{"relations": [...]}``, docs/csrbench.md). Engine times are mapped to the start of their
``--answer-granularity`` (default: 1000 ms for a CSR-Bench answer, the suite's
``system.timeunit``; 1 ms for JSON Lines) and rows with one mapped time form one relation.

Exit codes: 0 the answer is correct; 1 user error; 2 internal error; 3 the answer departs
from every correct answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rsep.algebra.params import Profile
from rsep.cli.run import add_data_arguments, graph_files, query_of

EXIT_CORRECT = 0
EXIT_DEPARTS = 3


def add_parser(commands: Any) -> None:
    """Register ``rsep check``."""
    p = commands.add_parser(
        "check",
        help="CSR-Bench correctness test: is an engine's answer one of the correct answers?",
        description=(
            "Compute every correct answer of QUERY under the engine profile (one per "
            "admissible t0, RSP-QL Theorem 1) and say whether the answer in --answers equals "
            "one of them; if not, print where it departs from the closest. Exit codes: 0 "
            "correct, 1 user error, 2 internal error, 3 the answer departs. See "
            "docs/csrbench.md."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_arguments(p)
    p.add_argument(
        "--profile",
        required=True,
        choices=[profile.value for profile in Profile],
        help="the engine whose answer is checked (its report policy, R2S, empty relations)",
    )
    p.add_argument(
        "--answers",
        required=True,
        type=Path,
        metavar="FILE",
        help="the engine's answer: JSON Lines results, or a CSR-Bench answer JSON",
    )
    p.add_argument(
        "--registration",
        type=int,
        metavar="MS",
        help="the query registration time a: T0 = {a, ..., a + slide - 1} (default window.t0)",
    )
    p.add_argument(
        "--granularity",
        type=int,
        metavar="MS",
        help="step of t0 through T0 (default: the grid of item times, widths and slides)",
    )
    p.add_argument(
        "--answer-granularity",
        type=int,
        metavar="MS",
        help="map answer times to the start of this unit (default 1000 for CSR-Bench, else 1)",
    )
    p.add_argument("--until", type=int, metavar="MS", help="last instant evaluated (ms)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Check the answer; print the verdict; exit 0 (correct) or 3 (departs)."""
    verdict = query_of(args).check(
        args.streams,
        args.answers,
        graph_files(args.graphs),
        registration=args.registration,
        granularity=args.granularity,
        until=args.until,
        answer_granularity=args.answer_granularity,
    )
    sys.stdout.write(verdict.describe() + "\n")
    return EXIT_CORRECT if verdict.correct else EXIT_DEPARTS
