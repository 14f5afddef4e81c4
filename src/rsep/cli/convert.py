"""``rsep convert``: CSV data sets to RDF event streams with a declarative mapping, on Spark."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rsep.api.convert import convert
from rsep.cli.options import pair
from rsep.errors import UserError


def add_parser(commands: Any) -> None:
    """Register ``rsep convert``."""
    p = commands.add_parser(
        "convert",
        help="convert CSV data to an RDF event stream (Parquet event store, N-Quads or TriG)",
        description=(
            "Convert CSV files (plain, .gz, .xz, or inside .tar.xz/.tar.gz/.zip archives) into "
            "an RDF event stream with a declarative mapping, as a Spark job, and print counts "
            "and rate. See docs/mappings.md."
        ),
    )
    p.add_argument(
        "inputs", nargs="*", type=Path, metavar="INPUT", help="CSV files, folders or archives"
    )
    p.add_argument("-m", "--mapping", help="mapping file, or the name of a shipped mapping")
    p.add_argument("-o", "--output", type=Path, help="output folder (or .nq/.trig file for text)")
    p.add_argument(
        "-f",
        "--format",
        default="parquet",
        choices=["parquet", "nquads", "trig"],
        help="parquet: the columnar event store (default); nquads/trig: text",
    )
    p.add_argument(
        "--on-error",
        default="stop",
        choices=["stop", "skip"],
        help="stop at the first bad record (default) or skip bad records",
    )
    p.add_argument(
        "--dead-letter",
        type=Path,
        help="where skipped records go (JSON Lines; default OUTPUT.rejected.jsonl)",
    )
    p.add_argument(
        "--lookup",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="background RDF file for a lookup table of the mapping",
    )
    p.add_argument(
        "--master",
        help="Spark master: local[N] (default local[2]), spark://host:port, sc://host:port",
    )
    p.add_argument(
        "--work-dir", type=Path, help="where archives are extracted (reused across runs)"
    )
    p.add_argument("--compression", choices=["gzip"], help="compress text output")
    p.add_argument(
        "--list-mappings", action="store_true", help="list the shipped mappings and exit"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the conversion and print its summary."""
    from rsep.rdf.mapping import available_mappings, load_mapping

    if args.list_mappings:
        for name in available_mappings():
            print(f"{name:22} {load_mapping(name).description}")
        return 0
    if not args.mapping or not args.inputs or not args.output:
        raise UserError("convert needs --mapping, --output and at least one INPUT")
    mapping = load_mapping(args.mapping)
    lookups: dict[str, Path] = {}
    for item in args.lookup:
        name, path = pair(item, "--lookup", "NAME=PATH")
        lookups[name] = Path(path)

    def starting(count: int) -> None:
        if not args.quiet:
            print(
                f"mapping {mapping.name}: {count:,} input file(s); starting Spark", file=sys.stderr
            )

    result = convert(
        mapping,
        args.inputs,
        args.output,
        args.format,
        lookups=lookups,
        on_error=args.on_error,
        dead_letter=args.dead_letter,
        master=args.master,
        work_dir=args.work_dir,
        compression=args.compression,
        progress=not args.quiet,
        starting=starting,
    )
    if mapping.synthetic:
        print("note: this data set is SYNTHETIC (generated), not real data")
    print(result.summary())
    return 0
