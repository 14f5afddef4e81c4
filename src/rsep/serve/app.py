"""The HTTP and WebSocket face of :class:`rsep.serve.service.Service`: JSON endpoints under
``/api``, answers over WebSocket and Server-Sent Events, health, readiness, Prometheus
metrics and the OpenAPI description (docs/serve.md, "HTTP API").

Every write (POST, DELETE, a WebSocket that pushes) needs the bearer token when the
operator set one (401 without, 403 wrong), a body within ``--max-body`` (413) and a client
within ``--rate`` requests per second (429); every refusal is a 4xx ``{"error": …}`` and
leaves the other queries running.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from rsep.errors import UserError
from rsep.serve import dashboard
from rsep.serve.openapi import openapi
from rsep.serve.service import FORMATS, RequestError, Service, format_of
from rsep.serve.settings import Settings

WAKE = 1.0
"""Seconds a WebSocket or SSE client waits for answers before it looks whether its client
is gone (SSE sends a comment then, which also keeps proxies from closing it)."""


class Hub:
    """Wakes the WebSocket and SSE clients waiting for answers: each takes :attr:`event`
    before it reads, and :meth:`wake` sets it after answers were added."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    def wake(self) -> None:
        """Set the current event (from any thread) and start a new one."""
        loop = self.loop
        if loop is None:
            return
        if _running_loop() is loop:
            self._swap()
        else:
            loop.call_soon_threadsafe(self._swap)

    def _swap(self) -> None:
        old, self.event = self.event, asyncio.Event()
        old.set()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Limits:
    """The token, the request rate and the body size every write is checked against."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._buckets: dict[str, tuple[float, float]] = {}

    def check(self, connection: HTTPConnection) -> None:
        """Refuse a write without the token (401), with a wrong one (403), or from a
        client above ``--rate`` requests per second (429)."""
        token = self.settings.token
        if token is not None:
            given = connection.headers.get("authorization", "")
            if not given.lower().startswith("bearer "):
                given = connection.query_params.get("token", "")
                if not given:
                    raise RequestError(401, "this write needs Authorization: Bearer TOKEN")
            else:
                given = given[7:].strip()
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise RequestError(403, "the token is wrong")
        rate = self.settings.rate
        if rate > 0:
            client = connection.client.host if connection.client else "-"
            now = time.monotonic()
            level, then = self._buckets.get(client, (float(self.settings.burst), now))
            level = min(float(self.settings.burst), level + (now - then) * rate)
            if level < 1:
                raise RequestError(429, f"more than {rate:g} writes per second; slow down")
            self._buckets[client] = (level - 1, now)

    async def body(self, request: Request) -> bytes:
        """The request's body, refused with 413 as soon as it passes ``--max-body``."""
        limit = self.settings.max_body
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise RequestError(413, f"the body is over {limit} bytes (--max-body)")
        chunks = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise RequestError(413, f"the body is over {limit} bytes (--max-body)")
            chunks.append(chunk)
        return b"".join(chunks)

    async def json(self, request: Request) -> dict[str, Any]:
        """The request's body as a JSON object (400 otherwise)."""
        body = await self.body(request)
        try:
            value = json.loads(body or b"{}")
        except ValueError as exc:
            raise RequestError(400, f"the body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise RequestError(400, "the body is a JSON object")
        return value


def create_app(settings: Settings, service: Service | None = None) -> Starlette:
    """The ASGI application of ``rsep serve`` over ``service`` (default: a new one on
    ``settings``, its state read from ``--state``)."""
    service = service if service is not None else Service(settings)
    hub = Hub()
    limits = Limits(settings)
    service.changed = hub.wake
    ready = {"ready": False}

    def handler(
        call: Callable[[Request], Awaitable[Any]], write: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                if write:
                    limits.check(request)
                result = await call(request)
            except RequestError as exc:
                return _error(exc.status, str(exc))
            except UserError as exc:
                return _error(400, str(exc))
            if isinstance(result, Response):
                return result
            return JSONResponse(result, status_code=201 if request.method == "POST" else 200)

        return endpoint

    def since(request: Request) -> int:
        """``?since=N``, or for SSE a reconnecting client's ``Last-Event-ID``."""
        text = request.headers.get("last-event-id") or request.query_params.get("since", "0")
        try:
            return int(text)
        except ValueError:
            raise RequestError(400, f"since is a sequence number, not {text!r}") from None

    async def list_queries(request: Request) -> Any:
        return [q.describe() for q in list(service.queries.values())]

    async def add_query(request: Request) -> Any:
        spec = await limits.json(request)
        return await run_in_threadpool(service.add_query, spec)

    async def get_query(request: Request) -> Any:
        return await run_in_threadpool(service.explain, request.path_params["name"])

    async def remove_query(request: Request) -> Any:
        await run_in_threadpool(service.remove_query, request.path_params["name"])
        return {"removed": request.path_params["name"]}

    async def pause(request: Request) -> Any:
        return await run_in_threadpool(service.pause, request.path_params["name"])

    async def resume(request: Request) -> Any:
        return await run_in_threadpool(service.resume, request.path_params["name"])

    async def answers(request: Request) -> Any:
        name = request.path_params["name"]
        return await run_in_threadpool(service.answers_since, name, since(request))

    async def list_streams(request: Request) -> Any:
        return [s.describe() for s in list(service.streams.values())]

    async def add_stream(request: Request) -> Any:
        return await run_in_threadpool(service.add_stream, await limits.json(request))

    async def get_stream(request: Request) -> Any:
        return service.stream(request.path_params["name"]).describe()

    async def remove_stream(request: Request) -> Any:
        await run_in_threadpool(service.remove_stream, request.path_params["name"])
        return {"removed": request.path_params["name"]}

    async def push(request: Request) -> Any:
        name = request.path_params["name"]
        service.stream(name)
        fmt = request.query_params.get("format") or format_of(request.headers.get("content-type"))
        body = await limits.body(request)
        return await run_in_threadpool(service.push, name, body, fmt)

    async def events(request: Request) -> Any:
        name = request.path_params["name"]
        return await run_in_threadpool(service.events_since, name, since(request))

    async def get_watermark(request: Request) -> Any:
        return {"watermark": service.watermark, "clock": service.clock}

    async def advance(request: Request) -> Any:
        spec = await limits.json(request)
        t = spec.get("time")
        if not isinstance(t, int) or isinstance(t, bool):
            raise RequestError(400, 'the watermark\'s "time" is an integer (ms)')
        return await run_in_threadpool(service.advance, t)

    async def sse(request: Request) -> Any:
        name = request.path_params["name"]
        service.query(name)
        start = since(request)

        async def stream() -> AsyncIterator[str]:
            async for items in _answers(service, hub, name, start, request.is_disconnected):
                if items is None:
                    yield ": keep-alive\n\n"
                    continue
                for answer in items:
                    yield f"id: {answer['seq']}\ndata: {_dumps(answer)}\n\n"
            yield "event: end\ndata: {}\n\n"

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readiness(request: Request) -> Response:
        if not ready["ready"]:
            return _error(503, "starting")
        return JSONResponse(
            {"status": "ready", "streams": len(service.streams), "queries": len(service.queries)}
        )

    async def metrics(request: Request) -> Response:
        text = await run_in_threadpool(service.metrics)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    async def describe(request: Request) -> Response:
        return JSONResponse(openapi())

    async def answers_ws(socket: WebSocket) -> None:
        name = socket.path_params["name"]
        if name not in service.queries:
            await _refuse(socket, 404, f"no query named {name}")
            return
        try:
            start = int(socket.query_params.get("since", "0"))
        except ValueError:
            await _refuse(socket, 400, "since is a sequence number")
            return
        await socket.accept()
        gone = asyncio.Event()

        async def watch() -> None:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                while True:
                    message = await socket.receive()
                    if message["type"] == "websocket.disconnect":
                        break
            gone.set()

        async def is_gone() -> bool:
            return gone.is_set()

        watcher = asyncio.create_task(watch())
        try:
            async for items in _answers(service, hub, name, start, is_gone):
                for answer in items or []:
                    await socket.send_text(_dumps(answer))
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                await socket.close(code=1000, reason="the query was removed")
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            watcher.cancel()

    async def push_ws(socket: WebSocket) -> None:
        name = socket.path_params["name"]
        try:
            limits.check(socket)
            service.stream(name)
            fmt = socket.query_params.get("format", "nquads")
            if fmt not in FORMATS:
                raise RequestError(400, f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
        except RequestError as exc:
            await _refuse(socket, exc.status, str(exc))
            return
        await socket.accept()
        try:
            while True:
                message = await socket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("bytes")
                if data is None:
                    data = (message.get("text") or "").encode("utf-8")
                try:
                    if len(data) > settings.max_body:
                        raise RequestError(413, f"a message is over {settings.max_body} bytes")
                    limits.check(socket)
                    reply = await run_in_threadpool(service.push, name, data, fmt)
                except RequestError as exc:
                    reply = {"error": str(exc), "status": exc.status}
                except UserError as exc:
                    reply = {"error": str(exc), "status": 400}
                await socket.send_text(_dumps(reply))
        except WebSocketDisconnect:
            return

    routes: list[BaseRoute] = [
        Route("/healthz", health),
        Route("/readyz", readiness),
        Route("/metrics", metrics),
        Route("/openapi.json", describe),
        Route("/api/queries", handler(list_queries), methods=["GET"]),
        Route("/api/queries", handler(add_query, write=True), methods=["POST"]),
        Route("/api/queries/{name}", handler(get_query), methods=["GET"]),
        Route("/api/queries/{name}", handler(remove_query, write=True), methods=["DELETE"]),
        Route("/api/queries/{name}/pause", handler(pause, write=True), methods=["POST"]),
        Route("/api/queries/{name}/resume", handler(resume, write=True), methods=["POST"]),
        Route("/api/queries/{name}/answers", handler(answers), methods=["GET"]),
        Route("/api/queries/{name}/sse", handler(sse), methods=["GET"]),
        WebSocketRoute("/api/queries/{name}/ws", answers_ws),
        Route("/api/streams", handler(list_streams), methods=["GET"]),
        Route("/api/streams", handler(add_stream, write=True), methods=["POST"]),
        Route("/api/streams/{name}", handler(get_stream), methods=["GET"]),
        Route("/api/streams/{name}", handler(remove_stream, write=True), methods=["DELETE"]),
        Route("/api/streams/{name}/events", handler(push, write=True), methods=["POST"]),
        Route("/api/streams/{name}/events", handler(events), methods=["GET"]),
        WebSocketRoute("/api/streams/{name}/ws", push_ws),
        Route("/api/watermark", handler(get_watermark), methods=["GET"]),
        Route("/api/watermark", handler(advance, write=True), methods=["POST"]),
    ]
    routes += dashboard.routes(service)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.loop = asyncio.get_running_loop()
        hub.event = asyncio.Event()
        service.start()
        poller = asyncio.create_task(_poll(service, settings.poll))
        ready["ready"] = True
        try:
            yield
        finally:
            ready["ready"] = False
            poller.cancel()
            service.close()

    async def not_found(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            return _error(exc.status_code, str(exc.detail))
        return _error(500, "internal error")

    return Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={HTTPException: not_found}
    )


async def _answers(
    service: Service,
    hub: Hub,
    name: str,
    start: int,
    is_gone: Callable[[], Awaitable[bool]],
) -> AsyncIterator[list[dict[str, Any]] | None]:
    """The answers of query ``name`` after ``start`` as they come (``None``: nothing for
    :data:`WAKE` seconds), until the query is removed or the client is gone."""
    last = start
    while name in service.queries and not await is_gone():
        event = hub.event
        try:
            items = await run_in_threadpool(service.answers_since, name, last)
        except RequestError:
            return
        if items:
            last = items[-1]["seq"]
            yield items
            continue
        try:
            await asyncio.wait_for(event.wait(), timeout=WAKE)
        except TimeoutError:
            yield None


async def _poll(service: Service, every: float) -> None:
    """Read the streams' folders every ``every`` seconds (:meth:`Service.poll`)."""
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(service.poll)
        except Exception as exc:  # a folder's trouble must not stop the service
            print(f"rsep serve: reading the sources: {exc!r}", file=sys.stderr)


async def _refuse(socket: WebSocket, status: int, message: str) -> None:
    """Close a WebSocket the service refuses with code 4000 + the HTTP status and the
    reason (accepted first: a browser reads no reason from a refused handshake)."""
    await socket.accept()
    await socket.close(code=4000 + status, reason=message[:120])


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
