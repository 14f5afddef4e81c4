"""``rsep serve`` over real HTTP and WebSocket connections (issue 19): SPAseq's test
folders' queries and an RSP-QL query registered over one stream, the folders' events
pushed (HTTP and WebSocket), exactly the oracle's answers (:meth:`rsep.Query.run` with
``engine="reference"``) read back over HTTP, WebSocket and Server-Sent Events; a query
unregistered; the server stopped or killed and started again on its state, continuing;
concurrent clients; and every bad request a clear 4xx with the other queries running."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

import rsep
from rsep.rdf.event import Event
from rsep.rdf.formats import write_events

Server = Any
"""A running ``rsep serve`` (the ``serve`` fixture of ``conftest.py`` makes them)."""
MAIN = "http://example.org/main"
FOLDERS = (
    "kleeneplus",
    "externalknowledgebase",
    "strict-contiguity",
    "skip-till-next",
    "conjunction",
    "disjunction",
    "negation",
    "optional",
)
"""SPAseq's test folders whose stream is ``<http://example.org/main>``."""
SHIFT = 1_000_000
"""Each folder's events are moved this far (ms) past the previous folder's, beyond every
query's WITHIN, so that one stream carries them all in time order."""
KB = "http://www.example.com/kb"
RSPQL = """PREFIX pred: <http://example/>
SELECT ?company ?price
FROM NAMED WINDOW <http://example.org/w> ON <http://example.org/main> [RANGE PT2S STEP PT1S]
WHERE { WINDOW <http://example.org/w> { ?company pred:price ?price . ?company pred:volume ?v .
  FILTER (?v > 50) } }
"""


def folder_events(tests: Path) -> list[Event]:
    """The events of every folder of :data:`FOLDERS`, folder ``i`` moved ``i * SHIFT``."""
    from rsep.api.inputs import read_streams

    out: list[Event] = []
    for i, name in enumerate(FOLDERS):
        [description] = (tests / name).glob("stream*.txt")
        for e in read_streams([description]).events():
            out.append(Event(MAIN, e.t_start + i * SHIFT, e.t_end + i * SHIFT, e.graph))
    return out


def nquads(events: list[Event]) -> bytes:
    """``events`` as an N-Quads body."""
    out = io.StringIO()
    write_events(events, out, "nquads")
    return out.getvalue().encode("utf-8")


def queries(tests: Path) -> dict[str, str]:
    """The folders' queries and the RSP-QL query, by the name they are registered under."""
    found = {name: next((tests / name).glob("query*.q")).read_text("utf-8") for name in FOLDERS}
    found["rspql"] = RSPQL
    return found


def canonical(answers: list[dict[str, Any]]) -> list[str]:
    """Answers as sorted JSON texts, without the service's ``seq``."""
    return sorted(
        json.dumps({k: v for k, v in a.items() if k != "seq"}, sort_keys=True) for a in answers
    )


def oracle(text: str, events: list[Event], graphs: dict[str, Path], until: int) -> list[str]:
    """The oracle's answers of ``text`` over ``events`` up to ``until``."""
    found = rsep.Query(text).run(events, graphs, engine="reference", until=until)
    return sorted(json.dumps(r.to_json(), sort_keys=True) for r in found)


@pytest.fixture
def spaseq_tests(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SPAseq's test folders (their descriptions name data files relative to here)."""
    tests = shared_data / "spaseq" / "tests"
    monkeypatch.chdir(tests)
    return tests


def register(client: httpx.Client, tests: Path, names: Iterator[str] | list[str]) -> None:
    """Register the stream (once) and the named queries."""
    if client.get("/api/streams/main").status_code == 404:
        reply = client.post("/api/streams", json={"name": "main", "iri": MAIN})
        assert reply.status_code == 201, reply.text
    texts = queries(tests)
    for name in names:
        spec: dict[str, Any] = {"name": name, "query": texts[name]}
        if name == "externalknowledgebase":
            spec["graphs"] = {KB: str(tests / name / "externalKB.nt")}
        reply = client.post("/api/queries", json=spec)
        assert reply.status_code == 201, reply.text


def push_http(client: httpx.Client, events: list[Event], stream: str = "main") -> int:
    """Push ``events`` one body per instant over HTTP to ``stream``; the answers the pushes
    gave."""
    answers = 0
    for event in events:
        reply = client.post(
            f"/api/streams/{stream}/events",
            content=nquads([event]),
            headers={"Content-Type": "application/n-quads"},
        )
        assert reply.status_code == 201, reply.text
        assert reply.json()["late"] == 0
        answers += reply.json()["answers"]
    return answers


async def push_ws(server: Server, events: list[Event]) -> None:
    """Push ``events`` over the stream's WebSocket, one message each."""
    url = f"{server.ws}/api/streams/main/ws?format=nquads"
    headers = {"Authorization": f"Bearer {server.TOKEN}"}
    async with websockets.connect(url, additional_headers=headers) as socket:
        for event in events:
            await socket.send(nquads([event]).decode("utf-8"))
            reply = json.loads(await socket.recv())
            assert "error" not in reply and reply["events"] == 1, reply


class Listener:
    """Answers of one query read over WebSocket or SSE in a thread, as they come."""

    def __init__(self, server: Server, name: str, kind: str) -> None:
        self.answers: list[dict[str, Any]] = []
        self.ready = threading.Event()
        self._stop = threading.Event()
        target = self._ws if kind == "ws" else self._sse
        self.thread = threading.Thread(target=target, args=(server, name), daemon=True)
        self.thread.start()
        assert self.ready.wait(30)

    def _ws(self, server: Server, name: str) -> None:
        async def listen() -> None:
            async with websockets.connect(f"{server.ws}/api/queries/{name}/ws") as socket:
                self.ready.set()
                while not self._stop.is_set():
                    try:
                        text = await asyncio.wait_for(socket.recv(), timeout=0.2)
                    except TimeoutError:
                        continue
                    self.answers.append(json.loads(text))

        asyncio.run(listen())

    def _sse(self, server: Server, name: str) -> None:
        url = f"{server.url}/api/queries/{name}/sse"
        with httpx.stream("GET", url, timeout=None) as reply:
            self.ready.set()
            for line in reply.iter_lines():  # a comment at least every second
                if line.startswith("data: ") and line != "data: {}":
                    self.answers.append(json.loads(line[6:]))
                if self._stop.is_set():
                    return

    def wait_for(self, count: int, seconds: float = 30) -> list[dict[str, Any]]:
        """The answers once ``count`` have come (or the time is up)."""
        for _ in range(int(seconds / 0.1)):
            if len(self.answers) >= count:
                break
            threading.Event().wait(0.1)
        self._stop.set()
        self.thread.join(10)
        return self.answers


def test_queries_over_one_stream_give_the_oracles_answers(
    serve: Any, spaseq_tests: Path, tmp_path: Path
) -> None:
    """Eight SPAseq folders' queries and an RSP-QL query over one stream, the folders' events
    pushed half over HTTP and half over WebSocket: every query's answers, read over HTTP,
    WebSocket and SSE, are the oracle's; unregistering one leaves the others."""
    server = serve(tmp_path / "state", "--allow", str(spaseq_tests)).start()
    events = folder_events(spaseq_tests)
    end = events[-1].t_end + SHIFT
    texts = queries(spaseq_tests)
    with server.client() as client:
        register(client, spaseq_tests, list(texts))
        listeners = {"ws": Listener(server, "kleeneplus", "ws")}
        listeners["sse"] = Listener(server, "rspql", "sse")
        half = len(events) // 2
        push_http(client, events[:half])
        asyncio.run(push_ws(server, events[half:]))
        assert client.post("/api/watermark", json={"time": end}).status_code == 201
        graphs = {KB: spaseq_tests / "externalknowledgebase" / "externalKB.nt"}
        total = 0
        for name, text in texts.items():
            expected = oracle(text, events, graphs, end)
            found = client.get(f"/api/queries/{name}/answers").json()
            assert canonical(found) == expected, name
            assert [a["seq"] for a in found] == list(range(1, len(found) + 1))
            total += len(expected)
        assert total >= 10
        assert len(oracle(texts["kleeneplus"], events, graphs, end)) >= 3
        ws = listeners["ws"].wait_for(len(client.get("/api/queries/kleeneplus/answers").json()))
        assert canonical(ws) == oracle(texts["kleeneplus"], events, graphs, end)
        sse = listeners["sse"].wait_for(len(client.get("/api/queries/rspql/answers").json()))
        assert canonical(sse) == oracle(texts["rspql"], events, graphs, end)
        resumed = {"Last-Event-ID": "2"}  # a reconnecting SSE client goes on after it
        with httpx.stream("GET", f"{server.url}/api/queries/rspql/sse", headers=resumed) as reply:
            ids = (line for line in reply.iter_lines() if line.startswith("id: "))
            assert next(ids) == "id: 3"
        timeline = client.get("/api/streams/main/events", params={"since": 0}).json()
        assert [e["seq"] for e in timeline] == list(range(1, len(events) + 1))
        assert timeline[0]["triples"] and timeline[0]["t_end"] == events[0].t_end
        explained = client.get("/api/queries/kleeneplus").json()
        assert "SEQ" in explained["explain"] or "seq" in explained["explain"].lower()
        shown = {k: v["value"] for k, v in explained["parameters"].items()}
        assert shown["max_runs"] == "100000"  # as --set writes it
        assert (shown["time_unit"], shown["strategy"]) == ("ms", "per_operator")
        metrics = httpx.get(f"{server.url}/metrics").text
        assert f'rsep_events_in_total{{stream="main"}} {len(events)}' in metrics
        assert 'rsep_answers_out_total{query="kleeneplus"}' in metrics
        assert client.delete("/api/queries/negation").status_code == 200
        assert client.get("/api/queries/negation").status_code == 404
        assert "negation" not in {q["name"] for q in client.get("/api/queries").json()}
        assert len(client.get("/api/queries").json()) == len(texts) - 1


def test_an_epsparql_query_reads_every_stream(serve: Any, tmp_path: Path) -> None:
    """An EP-SPARQL query names no stream (its one input stream, Anicic et al. Sect. 4):
    registered and fed over HTTP, it reads the events pushed to any stream and gives the
    oracle's answers (query (3) over ``epsparql/stock.trig``, tests/serve/test_timeline.py);
    its explain shows the parameters as ``--set`` writes them."""
    from rsep.rdf.formats import read_events

    repo = Path(__file__).resolve().parents[2]
    ex = "http://example.org/"
    text = (repo / "tests/lang/paper_queries/epsparql/query3.epsparql").read_text("utf-8")
    body = "\n".join(line for line in text.splitlines() if line[:1] != "#")
    text = f"PREFIX : <{ex}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n{body}"
    data = repo / "tests/semantics/data/epsparql/stock.trig"
    events = list(read_events(data, stream=ex + "s"))
    server = serve(tmp_path / "state", "--max-jump", str(10**11)).start()
    with server.client() as client:
        reply = client.post("/api/streams", json={"name": "s", "iri": ex + "s"})
        assert reply.status_code == 201, reply.text
        reply = client.post("/api/queries", json={"name": "rise", "query": text})
        assert reply.status_code == 201, reply.text
        assert reply.json()["streams"] == []
        explained = client.get("/api/queries/rise").json()
        assert explained["parameters"]["time_unit"]["value"] == "s"  # EP-SPARQL's default
        push_http(client, events, "s")
        end = events[-1].t_end
        client.post("/api/watermark", json={"time": end})
        found = client.get("/api/queries/rise/answers").json()
        expected = oracle(text, events, {}, end)
        assert expected and canonical(found) == expected
        assert client.get("/api/queries/rise").json()["counters"]["events"] == len(events)


@pytest.mark.parametrize("kill", [False, True], ids=["stopped", "killed"])
def test_a_restarted_server_continues(
    serve: Any, spaseq_tests: Path, tmp_path: Path, kill: bool
) -> None:
    """Half the events pushed, the server stopped (or killed, checkpointing every push) and
    started again on its state folder, the other half pushed: each query's answers are the
    oracle's over all the events, numbered on from where they were."""
    options = ("--allow", str(spaseq_tests), "--checkpoint-every", "0")
    state = tmp_path / "state"
    events = folder_events(spaseq_tests)
    end = events[-1].t_end + SHIFT
    half = len(events) // 2
    names = ["kleeneplus", "externalknowledgebase", "skip-till-next", "rspql"]
    first = serve(state, *options).start()
    with first.client() as client:
        register(client, spaseq_tests, names)
        push_http(client, events[:half])
        before = {n: client.get(f"/api/queries/{n}/answers").json() for n in names}
    first.stop(kill=kill)
    second = serve(state, *options).start()
    texts = queries(spaseq_tests)
    graphs = {KB: spaseq_tests / "externalknowledgebase" / "externalKB.nt"}
    with second.client() as client:
        assert {q["name"] for q in client.get("/api/queries").json()} == set(names)
        push_http(client, events[half:])
        client.post("/api/watermark", json={"time": end})
        for name in names:
            found = client.get(f"/api/queries/{name}/answers").json()
            assert found[: len(before[name])] == before[name]
            assert canonical(found) == oracle(texts[name], events, graphs, end), name


def test_concurrent_clients(serve: Any, spaseq_tests: Path, tmp_path: Path) -> None:
    """Clients at once: eight register a query each and read its answers over WebSocket
    while one pushes; each query's answers are the oracle's."""
    server = serve(tmp_path / "state", "--allow", str(spaseq_tests)).start()
    events = folder_events(spaseq_tests)
    end = events[-1].t_end + SHIFT
    texts = queries(spaseq_tests)
    with server.client() as client:
        register(client, spaseq_tests, [])
    names = [n for n in texts if n != "negation"]
    errors: list[BaseException] = []

    def one(name: str) -> None:
        try:
            with server.client() as client:
                register(client, spaseq_tests, [name])
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    listeners = {name: Listener(server, name, "ws") for name in names}
    with server.client() as client:
        push_http(client, events)
        client.post("/api/watermark", json={"time": end})
        graphs = {KB: spaseq_tests / "externalknowledgebase" / "externalKB.nt"}
        for name, listener in listeners.items():
            expected = oracle(texts[name], events, graphs, end)
            assert canonical(listener.wait_for(len(expected))) == expected, name


def test_bad_requests_get_a_clear_4xx_and_disturb_nothing(
    serve: Any, spaseq_tests: Path, tmp_path: Path
) -> None:
    """Malformed events (400 naming the line), an oversized body (413), unknown queries
    and streams (404), a missing or wrong token (401, 403), a SERVICE call, a graph outside
    --allow (403), a bad query (400), time moved too far ahead (400), a late event (counted,
    set aside): each refused with ``{"error": …}`` while the registered query keeps
    answering the oracle's answers."""
    server = serve(tmp_path / "state", "--allow", str(spaseq_tests), "--max-body", "4096").start()
    events = folder_events(spaseq_tests)[:8]
    texts = queries(spaseq_tests)
    with server.client() as client:
        register(client, spaseq_tests, ["kleeneplus"])
        push_http(client, events[:4])

        def refused(reply: httpx.Response, status: int, words: str) -> None:
            assert reply.status_code == status, reply.text
            assert words in reply.json()["error"], reply.json()

        nq = {"Content-Type": "application/n-quads"}
        bad = b"<http://a> <http://b> <http://c> _:g .\n<http://a> <http://b> .\n"
        refused(client.post("/api/streams/main/events", content=bad, headers=nq), 400, "line 2")
        big = nquads(events[4:5]) + b"# " + b"x" * 5000 + b"\n"
        refused(client.post("/api/streams/main/events", content=big, headers=nq), 413, "over")
        refused(client.get("/api/queries/nothing"), 404, "no query named nothing")
        refused(client.get("/api/queries/nothing/answers"), 404, "no query")
        refused(client.post("/api/streams/nothing/events", content=b"", headers=nq), 404, "no")
        refused(
            client.post("/api/streams/main/events", content=b"x", headers={"Content-Type": "a/b"}),
            415,
            "Content-Type",
        )
        with server.client(token=None) as anonymous:
            refused(anonymous.post("/api/streams", json={"name": "x"}), 401, "Bearer")
        with server.client(token="wrong") as stranger:
            refused(stranger.delete("/api/queries/kleeneplus"), 403, "token")
        service = texts["rspql"].replace(
            "FILTER (?v > 50) }",
            "FILTER (?v > 50) SERVICE <http://example.org/sparql> { ?a ?b ?c } }",
        )
        refused(client.post("/api/queries", json={"name": "s", "query": service}), 403, "SERVICE")
        kb = {"name": "kb", "query": texts["externalknowledgebase"], "graphs": {KB: "/etc/passwd"}}
        refused(client.post("/api/queries", json=kb), 403, "--allow")
        refused(client.post("/api/queries", json={"name": "q", "query": "SELECT"}), 400, "")
        refused(client.post("/api/queries", content=b"{", headers={}), 400, "JSON")
        refused(
            client.post("/api/queries", json={"name": "../x", "query": texts["rspql"]}), 400, "name"
        )
        many = {"name": "m", "query": texts["rspql"], "parameters": {"max_runs": 10**9}}
        refused(client.post("/api/queries", json=many), 400, "max_runs")
        refused(client.post("/api/queries", json={"name": "kleeneplus", "query": RSPQL}), 409, "")
        other = texts["rspql"].replace("example.org/main", "example.org/other")
        refused(client.post("/api/queries", json={"name": "o", "query": other}), 400, "register")
        refused(client.post("/api/watermark", json={"time": "soon"}), 400, "integer")
        hours = 2 * 3_600_000
        far = Event(MAIN, events[3].t_end + hours, events[3].t_end + hours, events[3].graph)
        jump = client.post("/api/streams/main/events", content=nquads([far]), headers=nq)
        refused(jump, 400, "--max-jump")
        refused(client.post("/api/watermark", json={"time": far.t_end}), 400, "--max-jump")
        late = client.post("/api/streams/main/events", content=nquads(events[:1]), headers=nq)
        assert late.status_code == 201 and late.json()["late"] == 1
        push_http(client, events[4:])
        end = events[-1].t_end + SHIFT
        client.post("/api/watermark", json={"time": end})
        found = client.get("/api/queries/kleeneplus/answers").json()
        assert canonical(found) == oracle(texts["kleeneplus"], events, {}, end)
        assert client.get("/api/queries/kleeneplus").json()["state"] == "running"
        assert client.get("/api/streams/main").json()["bad"] == 1
        assert client.get("/healthz").json() == {"status": "ok"}


def test_rate_limit_and_pause(serve: Any, spaseq_tests: Path, tmp_path: Path) -> None:
    """Writes beyond --rate are refused with 429; a paused query keeps what is pushed
    meanwhile and, resumed, gives the oracle's answers."""
    server = serve(tmp_path / "state", "--rate", "2", "--burst", "40").start()
    events = folder_events(spaseq_tests)[:8]
    texts = queries(spaseq_tests)
    with server.client() as client:
        register(client, spaseq_tests, ["kleeneplus"])
        assert client.post("/api/queries/kleeneplus/pause").json()["state"] == "paused"
        push_http(client, events)
        end = events[-1].t_end + SHIFT
        client.post("/api/watermark", json={"time": end})
        assert client.get("/api/queries/kleeneplus/answers").json() == []
        assert client.post("/api/queries/kleeneplus/resume").json()["state"] == "running"
        found = client.get("/api/queries/kleeneplus/answers").json()
        assert canonical(found) == oracle(texts["kleeneplus"], events, {}, end)
        statuses = [
            client.post("/api/watermark", json={"time": end}).status_code for _ in range(60)
        ]
        assert 429 in statuses
        reply = client.post("/api/watermark", json={"time": end})
        assert reply.status_code == 429 and "per second" in reply.json()["error"]


def test_a_query_over_its_bounds_fails_alone(
    serve: Any, spaseq_tests: Path, tmp_path: Path
) -> None:
    """A query whose partial matches pass its max_runs fails with the reason, and a pushed
    WebSocket message that is malformed or over --max-body gets an error reply: the
    connection, the stream and the other query go on (the oracle's answers)."""
    server = serve(tmp_path / "state", "--max-body", "4096").start()
    events = folder_events(spaseq_tests)
    end = events[-1].t_end + SHIFT
    texts = queries(spaseq_tests)
    with server.client() as client:
        register(client, spaseq_tests, ["kleeneplus"])
        small = {"name": "small", "query": texts["kleeneplus"], "parameters": {"max_runs": 1}}
        assert client.post("/api/queries", json=small).status_code == 201

        async def push() -> list[dict[str, Any]]:
            url = f"{server.ws}/api/streams/main/ws?format=nquads"
            headers = {"Authorization": f"Bearer {server.TOKEN}"}
            replies = []
            async with websockets.connect(url, additional_headers=headers) as socket:
                for i, event in enumerate(events):
                    if i == 2:
                        await socket.send("<http://a> <http://b> .\n")
                        replies.append(json.loads(await socket.recv()))
                        await socket.send("#" * 5000)
                        replies.append(json.loads(await socket.recv()))
                    await socket.send(nquads([event]))
                    assert "error" not in json.loads(await socket.recv())
            return replies

        malformed, oversized = asyncio.run(push())
        assert malformed["status"] == 400 and "line 1" in malformed["error"]
        assert oversized["status"] == 413 and "4096" in oversized["error"]
        client.post("/api/watermark", json={"time": end})
        failed = client.get("/api/queries/small").json()
        assert failed["state"] == "failed" and "max_runs = 1" in failed["error"]
        assert client.post("/api/queries/small/resume").status_code == 409
        found = client.get("/api/queries/kleeneplus/answers").json()
        assert canonical(found) == oracle(texts["kleeneplus"], events, {}, end)
        assert 'rsep_query_running{query="small"} 0' in httpx.get(f"{server.url}/metrics").text


def test_a_websocket_push_needs_the_token(serve: Any, tmp_path: Path) -> None:
    """A pushing WebSocket without the token, or with a wrong one, is closed with 4401 or
    4403 (4000 + the HTTP status) before it takes anything; one for an unknown stream or
    query with 4404."""
    server = serve(tmp_path / "state").start()
    with server.client() as client:
        assert client.post("/api/streams", json={"name": "main", "iri": MAIN}).status_code == 201

    async def close_code(path: str, token: str | None) -> int | None:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        try:
            async with websockets.connect(f"{server.ws}{path}", additional_headers=headers) as ws:
                await ws.recv()
        except websockets.exceptions.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        return None

    assert asyncio.run(close_code("/api/streams/main/ws", None)) == 4401
    assert asyncio.run(close_code("/api/streams/main/ws", "wrong")) == 4403
    assert asyncio.run(close_code("/api/streams/nothing/ws", server.TOKEN)) == 4404
    assert asyncio.run(close_code("/api/queries/nothing/ws", None)) == 4404
