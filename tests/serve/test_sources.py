"""Streams that read on their own (:mod:`rsep.serve.sources`) and answers to a sink: a
folder of arriving files and a Kafka topic (the noida-db test broker of
``tests/spark/broker.py``), each feeding SPAseq's kleeneplus query and an RSP-QL query
whose answers also go to a file; the answers are the oracle's, and a restarted server reads
the topic on from the offsets it kept."""

from __future__ import annotations

import importlib.util
import io
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import rsep
from rsep.rdf.event import Event
from rsep.rdf.formats import write_events

MAIN = "http://example.org/main"
RSPQL = """PREFIX pred: <http://example/>
SELECT ?company ?price
FROM NAMED WINDOW <http://example.org/w> ON <http://example.org/main> [RANGE PT2S STEP PT1S]
WHERE { WINDOW <http://example.org/w> { ?company pred:price ?price } }
"""


def kleene(shared_data: Path) -> tuple[str, list[Event]]:
    """SPAseq's kleeneplus query and its events."""
    from rsep.api.inputs import read_streams

    folder = shared_data / "spaseq" / "tests" / "kleeneplus"
    events = read_streams([folder / "streamKleene.txt"]).events()
    return (folder / "queryKleene.q").read_text("utf-8"), events


def nquads(events: list[Event]) -> str:
    out = io.StringIO()
    write_events(events, out, "nquads")
    return out.getvalue()


def canonical(answers: list[dict[str, Any]]) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in a.items() if k != "seq"}, sort_keys=True) for a in answers
    )


def oracle(text: str, events: list[Event], until: int) -> list[str]:
    found = rsep.Query(text).run(events, engine="reference", until=until)
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in found)


def eventually(check: Callable[[], bool], seconds: float = 30) -> None:
    """Wait until ``check()`` holds."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


def register(client: httpx.Client, source: str, sink: Path, text: str) -> None:
    reply = client.post("/api/streams", json={"name": "main", "iri": MAIN, "source": source})
    assert reply.status_code == 201, reply.text
    for name, query in (("kleene", text), ("rspql", RSPQL)):
        spec = {"name": name, "query": query, "sink": f"file:{sink / (name + '.jsonl')}"}
        reply = client.post("/api/queries", json=spec)
        assert reply.status_code == 201, reply.text


def check_answers(client: httpx.Client, sink: Path, text: str, events: list[Event]) -> None:
    """Each query's answers, over HTTP and in its sink file, are the oracle's."""
    end = events[-1].t_end + 100_000
    assert client.post("/api/watermark", json={"time": end}).status_code == 201
    for name, query in (("kleene", text), ("rspql", RSPQL)):
        expected = oracle(query, events, end)
        assert expected
        assert canonical(client.get(f"/api/queries/{name}/answers").json()) == expected
        lines = (sink / f"{name}.jsonl").read_text("utf-8").splitlines()
        assert canonical([json.loads(line) for line in lines]) == expected


def test_a_folder_of_arriving_files(serve: Any, shared_data: Path, tmp_path: Path) -> None:
    """Files written into the stream's folder one after another (a malformed one among
    them, counted and left out) are read once each, in name order."""
    text, events = kleene(shared_data)
    arriving, sink = tmp_path / "arriving", tmp_path / "sink"
    arriving.mkdir()
    sink.mkdir()
    server = serve(tmp_path / "state", "--allow", str(tmp_path), "--poll", "0.2").start()
    with server.client() as client:
        register(client, str(arriving), sink, text)
        (arriving / "00-bad.nq").write_text("<http://a> <http://b> .\n", encoding="utf-8")
        for i, event in enumerate(events):
            (arriving / f"{i + 1:02d}.nq").write_text(nquads([event]), encoding="utf-8")

        def read() -> bool:
            return int(client.get("/api/streams/main").json()["events"]) == len(events)

        eventually(read)
        stream = client.get("/api/streams/main").json()
        assert stream["bad"] == 1 and "00-bad.nq" in stream["last_error"]
        check_answers(client, sink, text, events)
        outside = {"name": "x", "source": "/etc"}
        assert client.post("/api/streams", json=outside).status_code == 403


def _broker_module() -> Any:
    path = Path(__file__).resolve().parents[1] / "spark" / "broker.py"
    spec = importlib.util.spec_from_file_location("serve_test_broker", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[str]:
    """A noida-db broker (``host:port``): skipped without it, failed in CI."""
    started = _broker_module().Broker(tmp_path / "noida")
    (tmp_path / "noida").mkdir()
    try:
        started.start()
        yield started.bootstrap
    finally:
        started.stop()


def test_a_kafka_topic_read_on_after_a_restart(
    serve: Any, shared_data: Path, tmp_path: Path, broker: str
) -> None:
    """One N-Quads event per message: the first half read, the server stopped, the second
    half produced meanwhile and read by the server started again from its offsets: the
    answers are the oracle's, each once; a broker not under --allow is refused."""
    from rsep.spark.kafka import KafkaAddress, create_topic, produce

    text, events = kleene(shared_data)
    address = KafkaAddress(broker, "prices")
    create_topic(address)
    sink = tmp_path / "sink"
    sink.mkdir()
    options = ("--allow", str(tmp_path), "--allow", f"kafka://{broker}")
    half = len(events) // 2
    first = serve(tmp_path / "state", *options).start()
    with first.client() as client:
        # a query is fed what arrives after it is registered: the producer starts after
        register(client, address.url, sink, text)
        produce(address, [nquads([e]) for e in events[:half]])
        eventually(lambda: client.get("/api/streams/main").json()["events"] == half)
        other = {"name": "o", "source": "kafka://127.0.0.1:1/t"}
        assert client.post("/api/streams", json=other).status_code == 403
    first.stop()
    produce(address, [nquads([e]) for e in events[half:]])
    second = serve(tmp_path / "state", *options).start()
    with second.client() as client:
        eventually(lambda: client.get("/api/streams/main").json()["events"] == len(events))
        check_answers(client, sink, text, events)
