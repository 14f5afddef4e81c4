"""Benchmark: ``rsep serve`` under load (issue 19): QUERIES SPAseq queries (default 16)
registered over one stream, stock events pushed over loopback HTTP at RATE triples per
second (default 100,000) for SECONDS (default 60).

Run on demand:  python bench/serve_load.py [--queries 16] [--rate 100000] [--seconds 60]
[--interval 0.1] [--companies 200] [--keep DIR]

The server runs in a process of its own (``python -m rsep serve --rate 0``); this process
generates the events (one event per company bar: a price and a volume, two triples, as
N-Quads with integer times), pushes one body every INTERVAL seconds on schedule (as fast as
it can once behind), moves the watermark past the last event, and then checks:

- no loss: the server took every event pushed, none late, none bad;
- answers: each query's answers, written by the server to a file sink, equal those of the
  same query run alone over all the pushed events (``Query.run(engine="local")``, the
  columnar engine, itself equal to the oracle by tests/engine);
- memory: the server's resident set size, sampled every second from /proc.

It prints the rate reached, the push latency (median, p99), the server's CPU seconds and
RSS (first, peak, last), the load average, and one line per query (answers, equal or not);
the exit status is 1 if anything was lost or differs. The queries are the V shape of
SPAseq's Query 4 (examples/uc4-stock) in variants: strict (``,``) or skip-till-next
(``;``), WITHIN 1 or 3 seconds, a drop of 0.1, 0.2, 0.3 or 0.4 % (``FILTER (?p2 < ?p1 *
f)``), all PARTITION BY ?company; COMPANIES companies (default 5,000) with prices from
10,000 to 20,000 moving by at most 60 a bar, each push INTERVAL seconds of event time.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import rsep

STREAM = "http://example.org/stream/nasdaq"
PREDICATES = "http://example/"
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
GENERATED = "http://www.w3.org/ns/prov#generatedAtTime"
QUERY = """PREFIX pred: <http://example/>
SELECT ?company ?p1 ?p2 ?p3
WITHIN {within} SECONDS
PARTITION BY ?company
FROM STREAM S1 <http://example.org/stream/nasdaq>
WHERE {{
  SEQ (A{sep} B{sep} C)
  DEFINE GPM A ON S1 {{ ?company pred:price ?p1 . ?company pred:volume ?v1 . }}
  DEFINE GPM B ON S1 {{ ?company pred:price ?p2 . ?company pred:volume ?v2 .
    FILTER (?p2 < ?p1 * {factor}) }}
  DEFINE GPM C ON S1 {{ ?company pred:price ?p3 . ?company pred:volume ?v3 .
    FILTER (?p3 > ?p1) }}
}}
"""


def queries(count: int) -> dict[str, str]:
    """``count`` variants of the V shape (module docstring), by name (beyond 16 the same
    texts again under new names)."""
    variants: list[tuple[str, str]] = []
    for sep in (",", ";"):
        for within in (1, 3):
            for factor in ("0.999", "0.998", "0.997", "0.996"):
                name = f"v{'strict' if sep == ',' else 'next'}-{within}s-{factor}"
                variants.append((name, QUERY.format(sep=sep, within=within, factor=factor)))
    out: dict[str, str] = {}
    for i in range(count):
        name, text = variants[i % len(variants)]
        out[name if i < len(variants) else f"{name}-{i // len(variants)}"] = text
    return out


class Market:
    """Bars of ``companies`` companies: integer prices on a random walk, in time order,
    made a body at a time with Arrow's string kernels (the client must not be the limit)."""

    def __init__(self, companies: int, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        self.names = pa.array([f"<{PREDICATES}company{i}>" for i in range(companies)])
        self.prices = self.rng.integers(10_000, 20_000, companies)
        self.event = 0

    def body(self, events: int, start: int, span: int) -> str:
        """``events`` bars with times spread over ``[start, start + span)`` ms, as N-Quads."""
        who = self.rng.integers(0, len(self.names), events)
        steps = self.rng.integers(-60, 61, events)
        times = start + np.sort(self.rng.integers(0, max(span, 1), events))
        order = np.argsort(who, kind="stable")  # each company's bars in time order
        walked = np.cumsum(steps[order])
        first = np.r_[True, who[order][1:] != who[order][:-1]]
        before = (walked - steps[order])[first]  # the sum of the companies sorted before
        walked -= before[np.cumsum(first) - 1]
        prices = np.empty(events, np.int64)
        prices[order] = self.prices[who[order]] + walked
        self.prices[who[order]] = prices[order]  # the last bar of each company stays
        graphs = pc.binary_join_element_wise(
            "_:e", pa.array(np.arange(self.event, self.event + events)).cast(pa.string()), ""
        )
        self.event += events
        names = self.names.take(pa.array(who))
        text = pa.array(prices).cast(pa.string())
        volume = pa.array(100 + steps).cast(pa.string())
        typed = f'"^^<{INTEGER}>'
        join = pc.binary_join_element_wise
        lines = [
            join(graphs, f' <{GENERATED}> "', pa.array(times).cast(pa.string()), typed + " .", ""),
            join(names, f' <{PREDICATES}price> "', text, typed + " ", graphs, " .", ""),
            join(names, f' <{PREDICATES}volume> "', volume, typed + " ", graphs, " .", ""),
        ]
        rows = np.stack([np.asarray(line.to_numpy(zero_copy_only=False)) for line in lines], 1)
        return "\n".join(rows.ravel().tolist()) + "\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def proc_stat(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system) and resident bytes of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    return cpu, rss


def canonical(lines: list[str]) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines if line.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=16)
    parser.add_argument("--rate", type=int, default=100_000, help="triples per second")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between pushes")
    parser.add_argument("--companies", type=int, default=5000)
    parser.add_argument("--keep", type=Path, help="keep the work folder here")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="rsep-serve-load-"))
    work.mkdir(parents=True, exist_ok=True)
    sinks = work / "sinks"
    sinks.mkdir(exist_ok=True)
    pushed_file = work / "pushed.nq"
    port = free_port()
    command = [sys.executable, "-m", "rsep", "serve", "--port", str(port), "--rate", "0"]
    command += ["--max-body", str(256 * 1024 * 1024), "--allow", str(work)]
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    samples: list[tuple[float, float, int]] = []
    stop = threading.Event()
    try:
        began = time.monotonic()
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() - began > 60:
                print((work / "server.log").read_text(), file=sys.stderr)
                return 1
            time.sleep(0.1)
        started_in = time.monotonic() - began
        client = httpx.Client(base_url=url, timeout=600)
        client.post("/api/streams", json={"name": "nasdaq", "iri": STREAM}).raise_for_status()
        texts = queries(args.queries)
        for name, text in texts.items():
            spec = {"name": name, "query": text, "sink": f"file:{sinks / name}.jsonl"}
            client.post("/api/queries", json=spec).raise_for_status()

        def sample() -> None:
            while not stop.is_set():
                cpu, rss = proc_stat(server.pid)
                samples.append((time.monotonic(), cpu, rss))
                stop.wait(1.0)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        market = Market(args.companies)
        events_per_push = max(1, round(args.rate * args.interval / 2))  # two triples each
        span = round(args.interval * 1000)
        ready: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        done = threading.Event()

        def generate() -> None:  # the next bodies made while a push is in flight
            made = 0
            while not done.is_set():
                ready.put(market.body(events_per_push, made * span, span).encode("utf-8"))
                made += 1
            ready.put(None)

        latencies: list[float] = []
        taken = late = pushes = 0
        maker = threading.Thread(target=generate, daemon=True)
        maker.start()
        kept = pushed_file.open("wb")  # what was pushed, for the queries run alone
        cpu0 = proc_stat(server.pid)[0]
        began = time.monotonic()
        while time.monotonic() - began < args.seconds:  # on schedule, or behind it
            body = ready.get()
            assert body is not None
            wait = began + pushes * args.interval - time.monotonic()
            pushes += 1
            if wait > 0:
                time.sleep(wait)
            sent = time.monotonic()
            reply = client.post(
                "/api/streams/nasdaq/events",
                content=body,
                headers={"Content-Type": "application/n-quads"},
            )
            latencies.append(time.monotonic() - sent)
            reply.raise_for_status()
            taken += reply.json()["events"]
            late += reply.json()["late"]
            kept.write(body)
        done.set()
        while ready.get() is not None:  # made, never pushed
            pass
        maker.join()
        kept.close()
        elapsed = time.monotonic() - began
        cpu1 = proc_stat(server.pid)[0]
        end = pushes * span + 60_000
        client.post("/api/watermark", json={"time": end}).raise_for_status()
        stream = client.get("/api/streams/nasdaq").json()
        stop.set()
        sampler.join()
        pushed = pushes * events_per_push
        triples = 2 * pushed
        print(
            f"rsep serve: {args.queries} queries, {pushed:,} events ({triples:,} triples) in "
            f"{pushes} pushes over {elapsed:.1f} s: {triples / elapsed:,.0f} triples/s "
            f"(asked {args.rate:,}); server ready in {started_in:.1f} s"
        )
        print(
            f"push latency median {statistics.median(latencies) * 1000:.1f} ms, p99 "
            f"{np.percentile(latencies, 99) * 1000:.1f} ms; server CPU {cpu1 - cpu0:.1f} s "
            f"while pushing ({(cpu1 - cpu0) / elapsed:.2f} cores)"
        )
        rss = [r for _, _, r in samples]
        print(
            f"server RSS first {rss[0] / 2**20:.0f} MiB, peak {max(rss) / 2**20:.0f} MiB, last "
            f"{rss[-1] / 2**20:.0f} MiB ({len(rss)} samples); load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        lost = pushed - taken
        ok = lost == 0 and late == 0 and stream["bad"] == 0 and stream["events"] == pushed
        print(f"events taken {taken:,} of {pushed:,}, late {late}, bad {stream['bad']}")
        for name, text in texts.items():
            alone = rsep.Query(text).run({STREAM: pushed_file}, engine="local", until=end)
            expected = sorted(json.dumps(r.to_json(), sort_keys=True) for r in alone)
            sink = sinks / f"{name}.jsonl"  # written at the first answer
            found = canonical(sink.read_text("utf-8").splitlines() if sink.exists() else [])
            same = found == expected
            ok = ok and same
            print(f"  {name}: {len(found):,} answers, {'equal' if same else 'DIFFERENT'}")
        print("all equal, nothing lost" if ok else "LOSS OR DIFFERENCE")
        return 0 if ok else 1
    finally:
        stop.set()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
