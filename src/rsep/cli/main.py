"""``rsep``: the console command.

Exit codes: 0 success; 1 user error (bad input or arguments: a message, no traceback);
2 internal error (a bug: the traceback is printed).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

import rsep
from rsep.cli import bench, check, convert, explain, run, serve
from rsep.errors import UserError

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_INTERNAL_ERROR = 2

EPILOG = """exit codes:
  0  success
  1  user error: bad input or arguments (a message naming file, line and reason)
  2  internal error: a bug in rsep (please report it with the traceback)
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per module of :mod:`rsep.cli`."""
    parser = argparse.ArgumentParser(
        prog="rsep",
        description="Continuous queries and complex event patterns over RDF streams, on Spark.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rsep {rsep.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    convert.add_parser(commands)
    explain.add_parser(commands)
    run.add_parser(commands)
    check.add_parser(commands)
    bench.add_parser(commands)
    serve.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except UserError as exc:
        print(f"rsep: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("rsep: interrupted", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception:
        traceback.print_exc()
        print("rsep: internal error (this is a bug in rsep)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
