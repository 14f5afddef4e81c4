"""The dashboard in a real headless browser (Debian's Chromium through Playwright) against a
running ``rsep serve`` over real HTTP and WebSocket connections: RSEP-QL's Example 4 is
registered, Fig. 1's stream pushed, and the page shows the query's explain and parameters
and its timeline with every answer drawn; clicking an answer shows its bindings, its
intervals (Example 8's e2 and e3) and the events that justify it; an answer to events
pushed while the page is open appears on it. A screenshot is kept under ``$RSEP_ARTIFACTS``
(or the test's temporary folder) and its path printed.

Without Chromium the test is skipped, unless ``CI`` is set (CI installs it): then it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.exceptions import StarletteDeprecationWarning
from test_timeline import DATA, EX, EXAMPLE_4, FakeQuery, FakeService, FakeStream, records

from rsep import Query
from rsep.rdf.formats import read_events
from rsep.serve import dashboard
from rsep.serve.timeline import MAX_LIMIT

with warnings.catch_warnings():  # Starlette's TestClient over httpx warns that it is deprecated
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from conftest import Server

LATER = f"""@prefix : <{EX}> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:G6 {{ :a4 :p :b4 . }}
:G6 prov:generatedAtTime 14 .
:G7 {{ :b4 :q :c4 . }}
:G7 prov:generatedAtTime 16 .
"""
WAIT_MS = 20_000


def chromium() -> str:
    """Chromium's executable; skip without it, fail without it under CI."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but no chromium is installed (the dashboard test needs it)")
        pytest.skip("no chromium on this machine (apt install chromium) for the dashboard test")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but playwright is not installed")
        pytest.skip("playwright is not installed (pip install playwright)")
    return found


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Page]:
    """A page of headless Chromium, 1400 pixels wide."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable)
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            browser.close()


@pytest.fixture
def server(serve: type[Server], tmp_path: Path) -> Server:
    """``rsep serve`` with Example 4 registered over stream ``s`` and Fig. 1's stream pushed,
    the watermark at 12."""
    running = serve(tmp_path / "state").start()
    with running.client() as client:
        created = client.post("/api/streams", json={"name": "s", "iri": EX + "S"})
        assert created.status_code == 201, created.text
        spec = {"name": "fig1", "query": EXAMPLE_4, "parameters": {"window.bounds": "open_closed"}}
        created = client.post("/api/queries", json=spec)
        assert created.status_code == 201, created.text
        body = (DATA / "rsepql_s.trig").read_bytes()
        pushed = client.post(
            "/api/streams/s/events", content=body, headers={"Content-Type": "application/trig"}
        )
        assert pushed.status_code == 201, pushed.text
        assert client.post("/api/watermark", json={"time": 12}).status_code == 201
    return running


@pytest.fixture
def figure_1_service() -> FakeService:
    """A service holding Example 4 (as ``q``) with its three answers at 8 over Fig. 1."""
    query = Query(EXAMPLE_4, window_bounds="open_closed")
    events = list(read_events(DATA / "rsepql_s.trig", stream=EX + "S"))
    found = [r.to_json() for r in query.run(events, engine="reference", until=8) if r.time == 8]
    answers = [{"seq": n, **a} for n, a in enumerate(found, 1)]
    stream = FakeStream("s", EX + "S", records(events))
    return FakeService({"s": stream}, {"q": FakeQuery(query, (EX + "S",), answers)})


def artifact(tmp_path: Path, name: str) -> Path:
    """Where a screenshot is kept: ``$RSEP_ARTIFACTS`` or the test's temporary folder."""
    folder = Path(os.environ.get("RSEP_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def answers(server: Server) -> list[dict[str, Any]]:
    """The query's answers as the service lists them."""
    found: list[dict[str, Any]] = httpx.get(f"{server.url}/api/queries/fig1/answers").json()
    return found


def test_dashboard(server: Server, page: Page, tmp_path: Path) -> None:
    """The page shows the query, its explain and parameters, the stream's five items and
    every answer on the timeline; an a2 b2 c2 answer at 8 is justified by G2 (4), G3 (6)
    and G4 (8) with intervals [4, 6] and [4, 8]; a4 b4 c4 appears when its events arrive."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url + "/")
    page.wait_for_selector("#query-name:has-text('fig1')", timeout=WAIT_MS)

    detail = httpx.get(f"{server.url}/api/queries/fig1").json()
    explain = page.inner_text("#explain")
    assert "Match" in explain and "window.present" in explain and "last_ended" in explain
    for name, parameter in detail["parameters"].items():
        row = page.locator(f"#parameters tr[data-parameter='{name}'] td")
        value = parameter["value"]
        assert row.nth(1).inner_text() == (value if isinstance(value, str) else json.dumps(value))
        assert row.nth(2).inner_text() == parameter["source"]

    listed = answers(server)
    assert len(listed) == 18  # Example 4 over Fig. 1 at 6 … 12 (tests/semantics)
    page.wait_for_function(
        "n => document.querySelectorAll('#timeline g.answer').length === n",
        arg=len(listed),
        timeout=WAIT_MS,
    )
    assert page.locator("#timeline g.event").count() == 5

    chosen = next(a["seq"] for a in listed if a["time"] == 8 and a["bindings"]["x"] == f"<{EX}a2>")
    page.click(f"#timeline g.answer[data-answer='{chosen}']")
    page.wait_for_selector("#answer-details:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#answer-number") == f"#{chosen} at 8"
    bindings = page.locator("#answer-bindings tr[data-variable='x'] td").nth(1).inner_text()
    assert bindings == f"<{EX}a2>"
    assert "intervals [4, 6], [4, 8]" in page.inner_text("#answer-spans")
    justifying = page.locator("#answer-events li")
    assert justifying.count() == 3
    assert f"<{EX}a2> <{EX}p> <{EX}b2> ." in justifying.nth(0).inner_text()
    marked = page.locator("#timeline g.event.justifying")
    assert sorted(int(marked.nth(i).get_attribute("data-seq") or 0) for i in range(3)) == [2, 3, 4]
    assert marked.count() == 3

    shot = artifact(tmp_path, "dashboard.png")
    page.screenshot(path=str(shot), full_page=True)
    print(f"dashboard screenshot: {shot}")

    with server.client() as client:
        pushed = client.post(
            "/api/streams/s/events",
            content=LATER.encode(),
            headers={"Content-Type": "application/trig"},
        )
        assert pushed.status_code == 201, pushed.text
        assert client.post("/api/watermark", json={"time": 16}).status_code == 201
    new = [a for a in answers(server) if a["bindings"]["x"] == f"<{EX}a4>"]
    assert new, "a4 b4 c4 answers once its events arrived"
    page.wait_for_selector(f"#timeline g.answer[data-answer='{new[0]['seq']}']", timeout=WAIT_MS)
    assert page.locator("#timeline g.event").count() == 7
    # the charts read /metrics every two seconds: the push shows as events per second and
    # as the query's push-to-answers latency
    page.wait_for_function(
        "/events in \\(all streams\\): (?!0\\.0(?!\\d))\\d/.test("
        "document.querySelector('#throughput-legend').textContent)",
        timeout=WAIT_MS,
    )
    page.wait_for_function(
        "/mean \\(fig1\\): [0-9]/.test(document.querySelector('#latency-legend').textContent)",
        timeout=WAIT_MS,
    )
    assert page.locator("#throughput-chart path.series").count() == 2
    live = artifact(tmp_path, "dashboard-live.png")
    page.screenshot(path=str(live), full_page=True)
    print(f"dashboard screenshot after a live push: {live}")
    assert errors == []


V_SHAPE = f"""PREFIX : <{EX}>
SELECT ?company ?p1 ?p2 ?p3
WITHIN 1 MINUTES
PARTITION BY ?company
FROM STREAM S1 <{EX}stocks>
WHERE {{
  SEQ (A; B; C)
  DEFINE GPM A ON S1 {{ ?company :price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?company :price ?p2 . FILTER (?p2 < ?p1) }}
  DEFINE GPM C ON S1 {{ ?company :price ?p3 . FILTER (?p3 > ?p1) }}
}}"""
PRICES = "".join(
    f'<{EX}{company}> <{EX}price> "{price}"^^<http://www.w3.org/2001/XMLSchema#integer> {t} .\n'
    for company, price, t in [
        ("acme", 100, 1000),
        ("initech", 50, 1500),
        ("acme", 95, 2000),
        ("initech", 55, 2500),
        ("acme", 104, 3000),
    ]
)


def test_dashboard_event_match(server: Server, page: Page) -> None:
    """docs/serve.md's walkthrough beside Example 4: SPAseq's V shape over stream
    ``stocks``; its one match (acme 100, 95, 104) is drawn with its interval [1000, 3000] as
    scope and interval, and justified by acme's three prices, one per GPM (A, B, C), not by
    initech's prices inside the interval."""
    with server.client() as client:
        created = client.post("/api/streams", json={"name": "stocks", "iri": EX + "stocks"})
        assert created.status_code == 201, created.text
        created = client.post("/api/queries", json={"name": "v-shape", "query": V_SHAPE})
        assert created.status_code == 201, created.text
        pushed = client.post(
            "/api/streams/stocks/events", content=PRICES, headers={"Content-Type": "text/plain"}
        )
        assert pushed.status_code == 201, pushed.text
        assert client.post("/api/watermark", json={"time": 3000}).status_code == 201
    page.goto(server.url + "/#query=v-shape")
    page.wait_for_selector("#query-name:has-text('v-shape')", timeout=WAIT_MS)
    assert page.locator("#query-list li").count() == 2
    assert "automaton" in page.inner_text("#explain")
    page.wait_for_selector("#timeline g.answer", timeout=WAIT_MS)
    assert page.locator("#timeline g.answer").count() == 1
    assert page.locator("#timeline g.answer rect.scope.match").count() == 1
    page.click("#timeline g.answer")
    page.wait_for_selector("#answer-details:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#answer-spans") == "intervals [1000, 3000] · match [1000, 3000]"
    steps = [
        li.split("·")[-1].split("\n")[0].strip()
        for li in page.locator("#answer-events li").all_inner_texts()
    ]
    assert steps == ["A", "B", "C"]
    marked = page.locator("#timeline g.event.justifying")
    assert [marked.nth(i).get_attribute("data-seq") for i in range(marked.count())] == [
        "1",
        "3",
        "5",
    ]


def routed(service: object) -> TestClient:
    """A client of an app made of the dashboard's routes alone."""
    return TestClient(Starlette(routes=dashboard.routes(service)))


def test_page_and_files_offline() -> None:
    """``/`` is the page, its script and style come from ``/static`` and nothing is fetched
    from another host (the page works offline)."""
    with routed(object()) as client:
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sorted(sources) == ["/static/app.js", "/static/style.css", "data:,"]
        for source in ("/static/app.js", "/static/style.css"):
            assert client.get(source).status_code == 200
        code = [line for line in client.get("/static/app.js").text.splitlines()]
        code = [line for line in code if not line.strip().startswith("//")]
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", "\n".join(code))
        assert client.get("/static/nothing.js").status_code == 404
        assert client.get("/api/queries/q/timeline").status_code == 404  # no timeline source


def test_timeline_route(figure_1_service: FakeService) -> None:
    """With a service the timeline route serves :func:`rsep.serve.timeline.query_timeline`;
    an unknown query is a 404, a bad ``since`` a 400."""
    with routed(figure_1_service) as client:
        body = client.get("/api/queries/q/timeline", params={"since": 0}).json()
        assert [a["number"] for a in body["answers"]] == [1, 2, 3]
        assert client.get("/api/queries/nothing/timeline").status_code == 404
        bad = client.get("/api/queries/q/timeline", params={"since": "x"})
        assert bad.status_code == 400 and "since" in bad.json()["error"]
        first = client.get("/api/queries/q/timeline", params={"since": 1, "limit": 1}).json()
        assert [a["number"] for a in first["answers"]] == [2]
        for limit in (0, MAX_LIMIT + 1):
            refused = client.get("/api/queries/q/timeline", params={"limit": limit})
            assert refused.status_code == 400 and "limit" in refused.json()["error"]


def test_missing_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An installation without the page's files says so at ``/`` (503) and keeps serving."""
    monkeypatch.setattr(dashboard, "STATIC", tmp_path / "static")
    with routed(object()) as client:
        missing = client.get("/")
        assert missing.status_code == 503 and "not installed" in missing.text
