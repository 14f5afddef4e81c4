"""The Flink baseline: the V shape as ``MATCH_RECOGNIZE`` in Flink SQL through PyFlink, over
the same bars as a table (issue 7, deliverable 4).

PyFlink's pins conflict with rsep's dependencies, so it lives in its own interpreter: the
harness runs this file as a script with that interpreter (``--flink-python`` or the
``RSEP_FLINK_PYTHON`` environment variable) and reads one JSON line back. The script part
imports only the standard library and PyFlink, never rsep.

The pattern is the one of :func:`rsep.workloads.baselines.vshape_query`: per ticker
(``PARTITION BY``, rows ordered by event time), ``V1 V2 … Vn`` with ``V2.c < V1.c * 0.998``,
``Vi.c < V(i-1).c`` in between and ``Vn.c > V1.c``; SPAseq's tumbling window (Def. 16,
``[k·d, (k+1)·d]`` from the epoch) is the condition ``Vn.ms <= V1.ms - MOD(V1.ms, d) + d``.
Strict contiguity is SQL's default (consecutive rows of the partition); skip-till-next
puts ``Zi*`` before each ``Vi`` with ``Zi`` defined as *not* ``Vi``'s condition, so ``Vi`` is
the next row that fits. ``AFTER MATCH SKIP TO NEXT ROW`` lets every row start a match, as
every bar starts an NFA run. The last step joins the KB table (ticker, name, sector).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rsep.workloads.bench import Data, Measurement, Point

FALL = 0.998
COMPANY = "http://example/company#"


def match_recognize(steps: int, strategy: str, window_ms: int) -> str:
    """The Flink SQL query of the V shape (module docstring) over tables ``bars`` and ``kb``."""
    names = [f"V{i + 1}" for i in range(steps)]
    conditions = {}
    for i, name in enumerate(names[1:], 1):
        if i == 1:
            conditions[name] = f"{name}.c < V1.c * {FALL}"
        elif i < steps - 1:
            conditions[name] = f"{name}.c < {names[i - 1]}.c"
        else:
            conditions[name] = (
                f"{name}.c > V1.c AND {name}.ms <= V1.ms - MOD(V1.ms, {window_ms}) + {window_ms}"
            )
    if strategy == "strict":
        pattern = " ".join(names)
        define = [f"{n} AS {c}" for n, c in conditions.items()]
    else:
        pattern = " ".join(["V1"] + [f"Z{n[1:]}* {n}" for n in names[1:]])
        define = []
        for n, c in conditions.items():
            define.append(f"Z{n[1:]} AS NOT ({c.replace(n + '.', 'Z' + n[1:] + '.')})")
            define.append(f"{n} AS {c}")
    measures = [f"{n}.c AS p{i + 1}" for i, n in enumerate(names)] + [f"{names[-1]}.ms AS t"]
    within = window_ms // 1000 + 60
    return (
        "SELECT m.ticker, "
        + ", ".join(f"m.p{i + 1}" for i in range(steps))
        + ", m.t, kb.name, kb.sector FROM bars MATCH_RECOGNIZE (\n"
        "  PARTITION BY ticker ORDER BY ts\n"
        f"  MEASURES {', '.join(measures)}\n"
        "  ONE ROW PER MATCH\n"
        "  AFTER MATCH SKIP TO NEXT ROW\n"
        f"  PATTERN ({pattern}) WITHIN INTERVAL '{within}' SECOND({len(str(within))})\n"
        f"  DEFINE {', '.join(define)}\n"
        ") AS m JOIN kb ON m.ticker = kb.ticker"
    )


def _ddl(bars: str, kb: str) -> list[str]:
    stamp = "UNIX_TIMESTAMP(`minute`, 'yyyyMMddHHmm') * 1000"
    return [
        "CREATE TABLE bars (ticker STRING, `minute` STRING, o DOUBLE, h DOUBLE, l DOUBLE, "
        f"c DOUBLE, v DOUBLE, ms AS {stamp}, ts AS TO_TIMESTAMP_LTZ({stamp}, 3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
        f"'connector' = 'filesystem', 'path' = '{bars}', 'format' = 'csv')",
        "CREATE TABLE kb (ticker STRING, name STRING, sector STRING) WITH ("
        f"'connector' = 'filesystem', 'path' = '{kb}', 'format' = 'csv')",
    ]


def job(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the query of ``spec`` (paths, steps, strategy, window) in a local Flink mini
    cluster (the bars' times read in America/New_York, as the ``nasdaq-bars`` mapping
    does); write the answers to ``spec['answers']``; return counts and times."""
    from pyflink.table import (  # type: ignore[import-not-found,unused-ignore]
        EnvironmentSettings,
        TableEnvironment,
    )

    started = time.perf_counter()
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("table.local-time-zone", "America/New_York")
    config.set("parallelism.default", str(spec.get("parallelism", 1)))
    for statement in _ddl(spec["csv"], spec["kb_csv"]):
        env.execute_sql(statement)
    query = match_recognize(spec["steps"], spec["strategy"], spec["window_ms"])
    ready = time.perf_counter()
    count = 0
    with (
        Path(spec["answers"]).open("w", encoding="utf-8") as out,
        env.execute_sql(query).collect() as rows,
    ):
        for row in rows:
            values = list(row)
            out.write(json.dumps(values) + "\n")
            count += 1
    done = time.perf_counter()
    return {"results": count, "seconds": done - ready, "setup_seconds": ready - started}


def flink_python(given: str | None = None) -> str | None:
    """The interpreter with PyFlink: ``given``, else ``RSEP_FLINK_PYTHON``; None if unset
    or not there."""
    path = given or os.environ.get("RSEP_FLINK_PYTHON")
    return path if path and Path(path).exists() else None


def run_flink(point: Point, data: Data, timeout: float = 900.0) -> Measurement:
    """Measure ``point`` on Flink (module docstring) in a child process of the PyFlink
    interpreter, sampling the RSS of its process tree (the JVM included)."""
    from rsep.errors import UserError
    from rsep.workloads.baselines import Answer
    from rsep.workloads.bench import Measurement, RssSampler, sort_answers

    if point.shape.strategy not in ("strict", "next"):
        raise UserError("MATCH_RECOGNIZE has no skip-till-any: Flink runs strict and next only")
    python = flink_python()
    if python is None:
        raise UserError(
            "Flink needs an interpreter with PyFlink (pip install apache-flink in its own "
            "venv): give it with --flink-python or RSEP_FLINK_PYTHON"
        )
    with tempfile.TemporaryDirectory(prefix="rsep-flink-") as tmp:
        answers_file = Path(tmp) / "answers.jsonl"
        spec = {
            "csv": str(data.csv),
            "kb_csv": str(data.kb_csv),
            "steps": point.shape.steps,
            "strategy": point.shape.strategy,
            "window_ms": point.shape.window_ms,
            "answers": str(answers_file),
        }
        started = time.perf_counter()
        process = subprocess.Popen(
            [python, __file__, json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with RssSampler(process.pid, every=0.1) as rss:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                return Measurement(
                    point, note=f"stopped after {timeout:.0f} s", load=os.getloadavg()
                )
        total = time.perf_counter() - started
        if process.returncode != 0:
            tail = " / ".join(stderr.strip().splitlines()[-3:])
            return Measurement(point, note=f"failed: {tail}", load=os.getloadavg())
        report = json.loads(stdout.strip().splitlines()[-1])
        answers = []
        steps = point.shape.steps
        for line in answers_file.read_text(encoding="utf-8").splitlines():
            values = json.loads(line)
            prices = tuple(float(p) for p in values[1 : 1 + steps])
            t, name, sector = values[1 + steps :]
            answers.append(Answer(COMPANY + values[0], prices, int(t), name, sector))
    out = Measurement(point)
    out.events, out.triples = data.events, data.triples
    out.answers = sort_answers(answers)
    out.results = len(out.answers)
    out.seconds = float(report["seconds"])
    out.total_seconds = total
    out.peak_rss_mib = rss.peak_mib
    out.load = os.getloadavg()
    out.note = f"job only; JVM and setup {report['setup_seconds']:.1f} s"
    return out


if __name__ == "__main__":
    print(json.dumps(job(json.loads(sys.argv[1]))))
