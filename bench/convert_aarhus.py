"""Benchmark: convert the full Aarhus traffic set (449 segments, 7.1 M rows) on local Spark.

Run on demand (not in CI):  python bench/convert_aarhus.py [--format parquet|nquads] [--record]
It needs ../shared/data/aarhus. With --record it appends the figures, with machine and date,
to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from rsep.rdf.mapping import load_mapping
from rsep.spark.convert import convert, resolve_inputs
from rsep.spark.session import get_session

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RSEP_SHARED", REPO.parent / "shared")) / "data" / "aarhus"
ARCHIVE = SHARED / "traffic" / "AarhusTrafficData_449segments_2014-08-01_2014-09-30.tar.xz"


def machine() -> str:
    """One line naming the machine the figures were taken on."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[
        0
    ]
    import pyspark

    return (
        f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, {java}, PySpark {pyspark.__version__}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--format", default="parquet", choices=["parquet", "nquads"])
    parser.add_argument("--work", type=Path, default=Path("/tmp/rsep-bench"))
    parser.add_argument(
        "--record", action="store_true", help="append the result to docs/benchmarks.md"
    )
    args = parser.parse_args()
    if not ARCHIVE.exists():
        print(f"needs {ARCHIVE}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    files = resolve_inputs([ARCHIVE], "*.stream", args.work / "extract")
    extract_s = time.perf_counter() - t0
    mapper = load_mapping("aarhus-traffic").bind(base=SHARED / "traffic")
    out = args.work / ("aarhus-store" if args.format == "parquet" else "aarhus.nq.gz")
    if out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    t1 = time.perf_counter()
    spark = get_session()
    start_s = time.perf_counter() - t1
    result = convert(
        spark,
        mapper,
        files,
        out,
        args.format,
        compression="gzip" if args.format == "nquads" else None,
    )
    size = (
        sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        if out.is_dir()
        else out.stat().st_size
    )
    print(result.summary())
    print(f"extract    {extract_s:.1f} s (cached after the first run)")
    print(f"spark up   {start_s:.1f} s")
    print(f"size       {size / 2**20:,.0f} MiB")
    if args.record:
        lines = [
            "",
            f"### Aarhus traffic, full set, CSV to {args.format} ({date.today().isoformat()})",
            "",
            f"Machine: {machine()}. Master `local[2]`, "
            f"`bench/convert_aarhus.py --format {args.format}`.",
            "",
            "| files | rows | events | triples | rejected | convert (s) | rows/s | triples/s "
            "| output |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            f"| {result.files:,} | {result.rows:,} | {result.events:,} | {result.triples:,} | "
            f"{result.rejected:,} | {result.seconds:.0f} | {result.rows_per_second:,.0f} | "
            f"{result.triples_per_second:,.0f} | {size / 2**20:,.0f} MiB |",
            "",
            f"Archive extraction before the job: {extract_s:.0f} s (skipped when cached); "
            f"Spark session start: {start_s:.1f} s (not in the convert time).",
            "",
        ]
        with (REPO / "docs" / "benchmarks.md").open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
