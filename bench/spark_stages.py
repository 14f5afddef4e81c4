"""Profile ``rsep.spark.replay`` on the stock V shape: where Spark's time goes, stage by stage.

Run on demand (not in CI):
    python bench/spark_stages.py [--events N] [--source nquads|parquet] [--strict]
        [--master local[2]] [--partitions 4] [--top 20]
It prepares the NASDAQ bars replicated to N events (rsep.workloads.bench.prepare), runs the
replay once with the Spark UI on, and prints the wall time, the answers, then the stages
with the most executor time (summed over tasks: on 2 cores up to twice the wall time),
each with the line of rsep that made it (from the stage's call site), from the UI's REST
API (``/api/v1/applications/<id>/stages``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from rsep.spark.replay import StreamInput, replay
from rsep.spark.session import get_session
from rsep.workloads.baselines import KB_GRAPH, VShape
from rsep.workloads.bench import _plan, prepare, read_kb


def stages(ui: str, app: str) -> list[dict[str, Any]]:
    """The completed stages of application ``app`` from the UI at ``ui``."""
    url = f"{ui}/api/v1/applications/{app}/stages?status=complete"
    with urllib.request.urlopen(url, timeout=30) as response:
        out: list[dict[str, Any]] = json.load(response)
    return out


def call_site(stage: dict[str, Any]) -> str:
    """The first line of rsep (else the stage's name) in the stage's call site."""
    for line in str(stage.get("details", "")).splitlines():
        if "/rsep/" in line:
            return line.strip().split("/rsep/", 1)[1]
    return str(stage.get("name", ""))


def operators(ui: str, app: str, top: int) -> None:
    """Print the physical operators of the SQL executions with the most time in their
    metrics (sort, aggregation build, shuffle write, broadcast, Python evaluation...),
    summed over the executions and tasks, each once (a persisted frame's plan is shown
    under every scan of it); whole-stage code generation containers, whose duration holds
    their operators', are left out."""
    url = f"{ui}/api/v1/applications/{app}/sql?details=true&planDescription=false&length=1000"
    with urllib.request.urlopen(url, timeout=60) as response:
        executions = json.load(response)
    totals: dict[str, list[float]] = {}
    seen: set[tuple[object, ...]] = set()
    for execution in executions:
        for node in execution.get("nodes", []):
            if str(node.get("nodeName", "")).startswith("WholeStageCodegen"):
                continue  # a container: its duration holds its operators' times
            for metric in node.get("metrics", []):
                name = metric.get("name", "")
                if "time" not in name and "duration" not in name:
                    continue
                # a cached plan is shown under each scan of it, with the same metric
                # (its text names the stage and task): count it once
                shown = (execution.get("id"), node.get("nodeName"), name, metric.get("value"))
                if shown in seen:
                    continue
                seen.add(shown)
                value = _seconds(str(metric.get("value", "")))
                if value:
                    key = f"{node.get('nodeName', '')}: {name}"
                    totals.setdefault(key, []).append(value)
    ranked = sorted(totals.items(), key=lambda item: -sum(item[1]))
    print(f"{'seconds':>8} {'nodes':>5}  operator: metric (total over tasks)")
    for key, values in ranked[:top]:
        print(f"{sum(values):8.1f} {len(values):5d}  {key}")


def _seconds(text: str) -> float:
    """The total of a timing metric as the UI prints it (``total (min, med, max ...)`` then
    ``12.3 s (...)`` or ``450 ms``), in seconds; 0 when it is not one."""
    import re

    found = re.search(r"([\d.,]+) (ms|s|m|h)\b", text.split("\n")[-1])
    if found is None:
        return 0.0
    value = float(found.group(1).replace(",", ""))
    return value * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[found.group(2)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=30170)
    parser.add_argument("--source", default="parquet", choices=["nquads", "parquet"])
    parser.add_argument("--strict", action="store_true", help="the strict-sequence joins")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--data", type=Path, default=Path("/tmp/rsep-bench-data"))
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    data = prepare(args.data, args.events)
    plan = _plan(VShape())
    spark = get_session(args.master, conf={"spark.ui.enabled": "true"})
    source = data.store if args.source == "parquet" else data.nquads
    kb = {KB_GRAPH: read_kb(data.kb)}
    started = time.perf_counter()
    done = replay(
        spark, plan, [StreamInput(source)], kb, partitions=args.partitions, strict=args.strict
    )
    wall = time.perf_counter() - started
    print(
        f"{args.events} events from {args.source}: {len(done.results)} results in {wall:.1f} s "
        f"({args.events / wall:,.0f} events/s), operator {done.operator}"
        + (f" ({done.reason})" if done.reason else "")
    )
    ui = spark.sparkContext.uiWebUrl or "http://127.0.0.1:4040"
    found = stages(ui, spark.sparkContext.applicationId)
    total = sum(s.get("executorRunTime", 0) for s in found) / 1000
    print(f"{len(found)} stages, executor time {total:.1f} s in all")
    by_site: dict[str, list[float]] = {}
    for stage in found:
        by_site.setdefault(call_site(stage), []).append(stage.get("executorRunTime", 0) / 1000)
    ranked = sorted(by_site.items(), key=lambda item: -sum(item[1]))
    print(f"{'executor s':>10} {'stages':>6}  call site")
    for site, times in ranked[: args.top]:
        print(f"{sum(times):10.1f} {len(times):6d}  {site}")
    operators(ui, spark.sparkContext.applicationId, args.top)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
