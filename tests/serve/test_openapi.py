"""The OpenAPI description of ``rsep serve`` (:mod:`rsep.serve.openapi`) checked by
schemathesis against a running server over HTTP: generated requests to every endpoint (a
registered stream and query among the names) get no 5xx and only the statuses and bodies the
description gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from conftest import Server

TIMESTAMPED = (
    '<http://example/a> <http://example/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> 5 .\n'
)
RSPQL = """PREFIX : <http://example/>
SELECT ?s ?o
FROM NAMED WINDOW :w ON <http://example.org/main> [RANGE PT2S STEP PT1S]
WHERE { WINDOW :w { ?s :p ?o } }
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server (no rate limit) with a stream ``main``, a query ``q`` and one event."""
    folder = tmp_path_factory.mktemp("openapi")
    running = Server(folder / "state", "--rate", "0", "--max-body", "65536").start()
    with running.client() as client:
        assert (
            client.post(
                "/api/streams", json={"name": "main", "iri": "http://example.org/main"}
            ).status_code
            == 201
        )
        assert client.post("/api/queries", json={"name": "q", "query": RSPQL}).status_code == 201
        pushed = client.post(
            "/api/streams/main/events", content=TIMESTAMPED, headers={"Content-Type": "text/plain"}
        )
        assert pushed.status_code == 201, pushed.text
    yield running
    running.stop()


@pytest.fixture(scope="module")
def api(server: Server) -> Any:
    """The description the running server gives, its streaming SSE endpoint left out (a
    request to it does not end)."""
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json").exclude(path_regex="/sse$")


def test_no_server_error_and_the_described_answers(api: Any, server: Server) -> None:
    """Each operation with generated parameters and bodies (schemathesis's strategies, 25
    examples each): no 5xx, a status the description lists, a body of its schema."""
    checks = [not_a_server_error, status_code_conformance, response_schema_conformance]
    headers = {"Authorization": f"Bearer {server.TOKEN}"}
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 15

    for operation in operations:

        @given(operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: Any) -> None:
            case.call_and_validate(base_url=server.url, headers=headers, checks=checks)

        check()


def test_the_description_names_every_route(server: Server) -> None:
    """Every JSON route of the application is in the description."""
    from starlette.routing import Route

    from rsep.serve import Settings, create_app

    described = httpx.get(f"{server.url}/openapi.json").json()["paths"]
    app = create_app(Settings(state=None))
    paths = {
        r.path for r in app.routes if isinstance(r, Route) and r.path not in ("/", "/openapi.json")
    }
    assert paths <= set(described), sorted(paths - set(described))
