"""The dashboard ``rsep serve`` serves at ``/``: one page of plain HTML, CSS and JavaScript
(``static/``, no build step, nothing fetched from elsewhere) that reads the service's JSON
API. It lists the queries with their explain and every parameter with where it came from,
draws live throughput and latency from ``/metrics``, and per query an event timeline that
draws the streams' events and, for each answer, the events and intervals that justify it
(RSEP-QL Fig. 1; :mod:`rsep.serve.timeline`); clicking an answer shows its bindings and
events."""

from __future__ import annotations

from pathlib import Path
from typing import TypeGuard

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from rsep.serve.timeline import TimelineSource, timeline_routes

__all__ = ["STATIC", "routes"]

STATIC = Path(__file__).resolve().parent / "static"
"""The page's files: ``index.html``, ``app.js``, ``style.css``."""

MISSING = (
    f"the dashboard's files are not installed ({STATIC} is missing: the package data "
    "rsep/serve/static/* was left out); the JSON API under /api still serves\n"
)


def routes(service: object) -> list[BaseRoute]:
    """The dashboard's routes over ``service`` (:class:`rsep.serve.service.Service`): ``/``
    (the page), ``/static/…`` (its files) and ``GET /api/queries/{name}/timeline``
    (:func:`rsep.serve.timeline.timeline_routes`), which only the page reads."""

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def missing(request: Request) -> Response:
        return PlainTextResponse(MISSING, status_code=503)

    found: list[BaseRoute]
    if (STATIC / "index.html").is_file():
        static = StaticFiles(directory=STATIC)
        found = [Route("/", page, methods=["GET"]), Mount("/static", app=static, name="static")]
    else:  # an installation without the package's data: the API still serves
        found = [Route("/", missing, methods=["GET"])]
    if _reads_timeline(service):
        found += timeline_routes(service)
    return found


def _reads_timeline(service: object) -> TypeGuard[TimelineSource]:
    """Whether ``service`` offers what the timeline reads (:class:`TimelineSource`)."""
    wanted = ("streams", "query", "events_since", "answers_since")
    return all(hasattr(service, name) for name in wanted)
