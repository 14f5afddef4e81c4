"""``rsep bench WORKLOAD``: measure a workload on one or more systems over a parameter sweep
(issues 7 and 15): throughput, CPU time, peak memory and, live, detection latency; results
as JSON, a Markdown table, a plot per varied parameter, and optionally a section of
docs/benchmarks.md. The harness is :mod:`rsep.workloads.bench`, the workloads
:mod:`rsep.workloads.catalog`.

Each list option (``--events``, ``--window``, ``--steps``, ``--strategy``, ``--kb``) takes
one or more values; the first of each is the base point, and each option with more values
is varied alone around it (SPAseq Sec. 8 varies one parameter at a time). ``--window``,
``--steps`` and ``--strategy`` apply to the V-shape workloads only.

Points that differ in system or source only are checked to give the same answers (a hash
of each point's sorted answers, :func:`rsep.workloads.bench.check_answers`): a difference
is told on standard error, noted in the table, and the command exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsep.errors import UserError

if TYPE_CHECKING:
    from rsep.workloads.bench import Measurement


def add_parser(commands: Any) -> None:
    """Register ``rsep bench``."""
    from rsep.workloads.catalog import POINTS, WORKLOADS

    listing = "\n".join(
        f"  {w.name:<22} {w.summary}\n  {'':<22} systems: {', '.join(w.systems)}; "
        f"smallest point {w.smallest:,} events"
        for w in WORKLOADS.values()
    )
    p = commands.add_parser(
        "bench",
        help="benchmark a workload on rsep and baselines over a parameter sweep",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Measure WORKLOAD on each --system, one point per process, over its events made\n"
            "from ../shared/data (replicated to N events), and write JSON, a Markdown table\n"
            "and plots (docs/benchmarks.md)."
        ),
        epilog=(
            f"workloads:\n{listing}\n\nissue 15's points: the smallest, then "
            f"{', '.join(f'{n:,}' for n in POINTS)} events (--events)."
        ),
    )
    p.add_argument("workload", metavar="WORKLOAD", help=", ".join(WORKLOADS))
    p.add_argument(
        "--system",
        dest="systems",
        action="append",
        metavar="NAME",
        help="rsep (engine in one process), rsep-live (paced, latency), read (reading only), "
        "spark, oracle, naive, flink, vectorised (the V shape by hand over the event store) "
        "(each workload lists its own); repeatable (default: rsep)",
    )
    p.add_argument(
        "--source",
        dest="sources",
        action="append",
        choices=["nquads", "parquet"],
        help="what rsep reads: the N-Quads file or the Parquet event store; repeatable "
        "(default nquads)",
    )
    p.add_argument(
        "--events", type=int, nargs="+", metavar="N", help="default: the workload's smallest point"
    )
    p.add_argument("--window", type=int, nargs="+", metavar="MINUTES", help="V shapes (60)")
    p.add_argument("--steps", type=int, nargs="+", metavar="K", help="V shapes (3)")
    p.add_argument(
        "--strategy", nargs="+", metavar="S", help="V shapes: strict (,), next (;) or any (:)"
    )
    p.add_argument("--kb", type=int, nargs="+", default=[0], metavar="TRIPLES")
    p.add_argument("--rate", type=int, default=100_000, help="rsep-live: triples per second fed")
    p.add_argument(
        "--data", type=Path, default=Path("/tmp/rsep-bench-data"), help="where data is made"
    )
    p.add_argument("--out", type=Path, default=Path("bench-results"), help="output folder")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per point")
    p.add_argument("--flink-python", help="interpreter with PyFlink (or RSEP_FLINK_PYTHON)")
    p.add_argument(
        "--in-process", action="store_true", help="measure in this process (no child per point)"
    )
    p.add_argument("--record", type=Path, metavar="DOC", help="append or update a section of DOC")
    p.add_argument("--title", help="the section's title (default: workload and parameters)")
    p.add_argument("--image-format", default="png", choices=["png", "svg"])
    p.add_argument("--quiet", action="store_true", help="no line per point on standard error")
    p.set_defaults(run=run)


READERS = ("rsep", "rsep-live", "read", "spark")
"""Systems that read rsep's files, N-Quads or the event store (``--source``); the others
read the N-Quads (oracle, naive), the CSV (flink) or the event store (vectorised)."""

VARIED = (
    ("events", "events"),
    ("window", "window_ms"),
    ("steps", "steps"),
    ("strategy", "strategy"),
    ("kb", "kb_triples"),
)
"""Options that take several values, with the :class:`~rsep.workloads.bench.Point` field
each varies."""


def run(args: argparse.Namespace) -> int:
    """Build the points, measure them, write the outputs."""
    from rsep.workloads.baselines import VShape
    from rsep.workloads.bench import (
        SYSTEMS,
        Point,
        check_answers,
        markdown_table,
        record,
        run_sweep,
        sweep,
    )
    from rsep.workloads.catalog import workload
    from rsep.workloads.flink import flink_python

    chosen = workload(args.workload)
    systems = args.systems or ["rsep"]
    for system in systems:
        if system not in SYSTEMS:
            raise UserError(f"unknown system {system!r}: {', '.join(SYSTEMS)}")
        if system not in chosen.systems:
            raise UserError(
                f"workload {chosen.name!r} runs on {', '.join(chosen.systems)}, not {system!r}"
            )
    if args.flink_python:
        os.environ["RSEP_FLINK_PYTHON"] = args.flink_python
    if "flink" in systems and flink_python() is None:
        raise UserError(
            "--system flink needs an interpreter with PyFlink: --flink-python PATH or "
            "RSEP_FLINK_PYTHON (none found)"
        )
    args.events = args.events or [chosen.smallest]
    if any(n < 1 for n in args.events):
        raise UserError("--events takes positive counts")
    default = chosen.shape or VShape()
    if chosen.shape is None and (args.window or args.steps or args.strategy):
        raise UserError(
            f"workload {chosen.name!r} has a fixed query: no --window, --steps, --strategy"
        )
    args.window = args.window or [default.window_ms // 60_000]
    args.steps = args.steps or [default.steps]
    args.strategy = args.strategy or [default.strategy]
    shape = VShape(args.window[0] * 60_000, args.steps[0], args.strategy[0])
    values: dict[str, list[Any]] = {}
    for option, name in VARIED:
        given = list(getattr(args, option))
        if len(given) > 1:
            values[name] = [v * 60_000 for v in given] if option == "window" else given
    for strategy in args.strategy:
        VShape(shape.window_ms, shape.steps, strategy)  # refuse a bad one before measuring
    points: list[Point] = []
    for system in systems:
        sources = (args.sources or ["nquads"]) if system in READERS else ["nquads"]
        for source in sources:
            base = Point(
                args.workload, system, args.events[0], shape, args.kb[0], source, args.rate
            )
            points += [p for p in sweep(base, **values) if p not in points]

    def data_of(point: Point) -> Any:
        return chosen.prepare(args.data, point.events, point.kb_triples)

    def show(m: Measurement) -> None:
        if not args.quiet:
            print(
                f"rsep bench: {m.point.label()}: {m.results:,} results, {m.seconds:.2f} s "
                f"({m.cpu_seconds:.2f} s CPU), "
                f"{m.events_per_second:,.0f} events/s, {m.triples_per_second:,.0f} triples/s, "
                f"{m.peak_rss_mib:,.0f} MiB, load {m.load[0]:.1f} {m.note}",
                file=sys.stderr,
                flush=True,
            )

    measurements = run_sweep(
        points, data_of, isolate=not args.in_process, progress=show, timeout=args.timeout
    )
    differ = check_answers(measurements)
    for text in differ:
        print(f"rsep bench: {text}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / args.workload
    stem.with_suffix(".json").write_text(
        json.dumps([m.to_json() for m in measurements], indent=1), encoding="utf-8"
    )
    table = markdown_table(measurements)
    stem.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
    figures = args.record.parent / "img" if args.record is not None else args.out
    centre = {"events": args.events[0], "kb_triples": args.kb[0], **asdict(shape)}
    prefix = f"{args.workload}-{'-'.join(systems)}"
    drawn = draw(measurements, values, centre, figures, prefix, args.image_format)
    images = [image for image in drawn if image is not None]
    print(table)
    if args.record is not None:
        varied = ", ".join(f"{k} {' '.join(str(v) for v in vs)}" for k, vs in values.items())
        title = args.title or (f"{args.workload}: {varied}" if varied else args.workload)
        command = shlex.join(["rsep", *sys.argv[1:]])
        record(args.record, title, command, measurements, images)
    if values and not images:
        print("rsep bench: no plot (pip install rsep[bench] for matplotlib)", file=sys.stderr)
    return 1 if differ else 0


def draw(
    measurements: list[Measurement],
    values: dict[str, list[Any]],
    base: dict[str, Any],
    folder: Path,
    prefix: str,
    image_format: str = "png",
) -> list[Path | None]:
    """One plot per varied parameter, of the points that differ from the base in that
    parameter only (None where matplotlib is missing)."""
    from rsep.workloads.bench import plot

    def value(m: Measurement, name: str) -> Any:
        p = m.point
        return getattr(p.shape, name) if hasattr(p.shape, name) else getattr(p, name)

    out: list[Path | None] = []
    for name, options in values.items():
        chosen = [
            m for m in measurements if all(value(m, k) == v for k, v in base.items() if k != name)
        ]
        tag = "-".join(str(v) for v in options)
        out.append(plot(chosen, folder / f"{prefix}-{name}-{tag}.{image_format}", name))
    return out
