"""Profile (cProfile) the stock V-shape workload on one system: where the time goes.

Run on demand (not in CI):
    python bench/vshape_profile.py [--system rsep|naive|oracle] [--source nquads|parquet]
        [--events N] [--strategy strict|next] [--top 25]
It prepares the NASDAQ bars replicated to N events (rsep.workloads.bench.prepare) and
prints the measurement, then the functions with the most time of their own and the most
cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
from pathlib import Path

from rsep.workloads.baselines import VShape
from rsep.workloads.bench import Point, measure, prepare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--system", default="rsep", choices=["rsep", "naive", "oracle"])
    parser.add_argument("--source", default="nquads", choices=["nquads", "parquet"])
    parser.add_argument("--events", type=int, default=3017)
    parser.add_argument("--strategy", default="strict", choices=["strict", "next"])
    parser.add_argument("--data", type=Path, default=Path("/tmp/rsep-bench-data"))
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    data = prepare(args.data, args.events)
    point = Point(
        "stock-vshape", args.system, args.events, VShape(strategy=args.strategy), source=args.source
    )
    profiler = cProfile.Profile()
    profiler.enable()
    m = measure(point, data)
    profiler.disable()
    print(
        f"{point.label()}: {m.results} results, {m.seconds:.2f} s, "
        f"{m.events_per_second:,.0f} events/s, {m.triples_per_second:,.0f} triples/s, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
