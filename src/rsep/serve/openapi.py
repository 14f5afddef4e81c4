"""The OpenAPI 3.0 description of ``rsep serve``'s HTTP API (``GET /openapi.json``), written
out so that clients and schemathesis read every request and response shape."""

from __future__ import annotations

from typing import Any

from rsep.serve.timeline import LIMIT, MAX_LIMIT

_NAME = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}
_ERROR = {
    "description": "the request is refused; the body says why",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["error"],
                "properties": {"error": {"type": "string"}},
            }
        }
    },
}
_ANY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}
_ANSWER = {
    "type": "object",
    "description": "an answer in rsep's results format (docs/semantics.md) and its seq",
    "required": ["seq", "time"],
    "properties": {
        "seq": {"type": "integer"},
        "time": {"type": "integer"},
        "interval": {"type": "array", "items": {"type": "integer"}},
        "bindings": {"type": "object", "additionalProperties": {"type": "string"}},
        "triples": {"type": "array", "items": {"type": "string"}},
        "boolean": {"type": "boolean"},
    },
}
_QUERY = {
    "type": "object",
    "required": ["name", "dialect", "state", "streams", "counters"],
    "properties": {
        "name": {"type": "string"},
        "dialect": {"type": "string"},
        "state": {"type": "string", "enum": ["running", "paused", "failed"]},
        "error": {"type": "string", "nullable": True},
        "streams": {"type": "array", "items": {"type": "string"}},
        "sink": {"type": "string", "nullable": True},
        "counters": _ANY_OBJECT,
    },
}
_STREAM = {
    "type": "object",
    "required": ["name", "iri"],
    "properties": {
        "name": {"type": "string"},
        "iri": {"type": "string"},
        "source": {"type": "string", "nullable": True},
        "format": {"type": "string", "nullable": True},
        "events": {"type": "integer"},
        "triples": {"type": "integer"},
        "late": {"type": "integer"},
        "bad": {"type": "integer"},
        "last_error": {"type": "string", "nullable": True},
    },
}
_EVENT = {
    "type": "object",
    "required": ["seq", "t_start", "t_end", "triples"],
    "properties": {
        "seq": {"type": "integer"},
        "t_start": {"type": "integer"},
        "t_end": {"type": "integer"},
        "graph": {"type": "string"},
        "triples": {"type": "array", "items": {"type": "string"}},
    },
}
_PUSHED = {
    "type": "object",
    "required": ["events", "triples", "late", "answers"],
    "properties": {
        "events": {"type": "integer"},
        "triples": {"type": "integer"},
        "late": {"type": "integer"},
        "answers": {"type": "integer"},
        "clock": {"type": "integer", "nullable": True},
    },
}


def _json(schema: dict[str, Any], description: str = "done") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): _ERROR for code in codes}


_WRITE = (400, 401, 403, 413, 429)
_SINCE = {
    "name": "since",
    "in": "query",
    "required": False,
    "schema": {"type": "integer"},
    "description": "only what came after this sequence number",
}

_LIMIT = {
    "name": "limit",
    "in": "query",
    "required": False,
    "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": LIMIT},
    "description": f"at most this many answers justified (1 … {MAX_LIMIT}, else 400)",
}
_TIMELINE = {
    "type": "object",
    "required": ["events", "answers", "streams"],
    "properties": {
        "events": {"type": "array", "items": _ANY_OBJECT},
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["number", "answer"],
                "properties": {
                    "number": {"type": "integer"},
                    "answer": _ANY_OBJECT,
                    "justification": _ANY_OBJECT,
                },
            },
        },
        "streams": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "iri"],
                "properties": {"name": {"type": "string"}, "iri": {"type": "string"}},
            },
        },
    },
}


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": _NAME}


def openapi() -> dict[str, Any]:
    """The description (docs/serve.md, "HTTP API", tells the same in prose)."""
    query_path = [_path("name")]
    bodies = {
        kind: {"schema": {"type": "string"}}
        for kind in (
            "application/n-quads",
            "application/trig",
            "application/ld+json",
            "text/plain",
        )
    }
    security: list[dict[str, list[str]]] = [{"bearer": []}]
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "rsep serve",
            "version": "1",
            "description": "Continuous queries and complex event patterns over RDF streams "
            "(RSP-QL, C-SPARQL, CQELS-QL, RSEP-QL, EP-SPARQL, CQELS-CEP, SPAseq) as a "
            "service. Answers also come over WebSocket (/api/queries/{name}/ws) and events "
            "go in over WebSocket (/api/streams/{name}/ws).",
        },
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/healthz": {"get": {"responses": {"200": _json(_ANY_OBJECT, "alive")}}},
            "/readyz": {"get": {"responses": {"200": _json(_ANY_OBJECT, "ready"), **_errors(503)}}},
            "/metrics": {
                "get": {
                    "responses": {
                        "200": {
                            "description": "Prometheus text exposition",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        }
                    }
                }
            },
            "/api/queries": {
                "get": {"responses": {"200": _json({"type": "array", "items": _QUERY})}},
                "post": {
                    "security": security,
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["name", "query"],
                            "properties": {
                                "name": _NAME,
                                "query": {"type": "string"},
                                "dialect": {"type": "string"},
                                "profile": {"type": "string"},
                                "parameters": _ANY_OBJECT,
                                "graphs": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                                "sink": {"type": "string"},
                            },
                        }
                    ),
                    "responses": {"201": _json(_QUERY, "registered"), **_errors(*_WRITE, 409)},
                },
            },
            "/api/queries/{name}": {
                "parameters": query_path,
                "get": {
                    "responses": {
                        "200": _json(
                            {
                                **_QUERY,
                                "properties": {
                                    **_QUERY["properties"],  # type: ignore[dict-item]
                                    "query": {"type": "string"},
                                    "explain": {"type": "string"},
                                    "parameters": _ANY_OBJECT,
                                },
                            }
                        ),
                        **_errors(404),
                    }
                },
                "delete": {
                    "security": security,
                    "responses": {"200": _json(_ANY_OBJECT), **_errors(*_WRITE, 404)},
                },
            },
            "/api/queries/{name}/pause": {
                "parameters": query_path,
                "post": {
                    "security": security,
                    "responses": {"201": _json(_QUERY), **_errors(*_WRITE, 404, 409)},
                },
            },
            "/api/queries/{name}/resume": {
                "parameters": query_path,
                "post": {
                    "security": security,
                    "responses": {"201": _json(_QUERY), **_errors(*_WRITE, 404, 409)},
                },
            },
            "/api/queries/{name}/answers": {
                "parameters": query_path,
                "get": {
                    "parameters": [_SINCE],
                    "responses": {
                        "200": _json({"type": "array", "items": _ANSWER}),
                        **_errors(400, 404),
                    },
                },
            },
            "/api/queries/{name}/sse": {
                "parameters": query_path,
                "get": {
                    "parameters": [_SINCE],
                    "responses": {
                        "200": {
                            "description": "answers as Server-Sent Events (id: seq)",
                            "content": {"text/event-stream": {"schema": {"type": "string"}}},
                        },
                        **_errors(400, 404),
                    },
                },
            },
            "/api/queries/{name}/timeline": {
                "parameters": query_path,
                "get": {
                    "description": "the events of the streams the query reads and its "
                    "answers after since, each with the events and intervals that justify "
                    "it (RSEP-QL Fig. 1), at most limit answers",
                    "parameters": [_SINCE, _LIMIT],
                    "responses": {"200": _json(_TIMELINE), **_errors(400, 404)},
                },
            },
            "/api/streams": {
                "get": {"responses": {"200": _json({"type": "array", "items": _STREAM})}},
                "post": {
                    "security": security,
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": _NAME,
                                "iri": {"type": "string"},
                                "source": {"type": "string"},
                                "format": {
                                    "type": "string",
                                    "enum": ["nquads", "trig", "jsonld", "tnt"],
                                },
                            },
                        }
                    ),
                    "responses": {"201": _json(_STREAM, "registered"), **_errors(*_WRITE, 409)},
                },
            },
            "/api/streams/{name}": {
                "parameters": query_path,
                "get": {"responses": {"200": _json(_STREAM), **_errors(404)}},
                "delete": {
                    "security": security,
                    "responses": {"200": _json(_ANY_OBJECT), **_errors(*_WRITE, 404, 409)},
                },
            },
            "/api/streams/{name}/events": {
                "parameters": query_path,
                "get": {
                    "parameters": [_SINCE],
                    "responses": {
                        "200": _json({"type": "array", "items": _EVENT}),
                        **_errors(400, 404),
                    },
                },
                "post": {
                    "security": security,
                    "parameters": [
                        {
                            "name": "format",
                            "in": "query",
                            "required": False,
                            "schema": {
                                "type": "string",
                                "enum": ["nquads", "trig", "jsonld", "tnt"],
                            },
                        }
                    ],
                    "requestBody": {"required": True, "content": bodies},
                    "responses": {"201": _json(_PUSHED, "taken"), **_errors(*_WRITE, 404, 415)},
                },
            },
            "/api/watermark": {
                "get": {"responses": {"200": _json(_ANY_OBJECT)}},
                "post": {
                    "security": security,
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["time"],
                            "properties": {"time": {"type": "integer"}},
                        }
                    ),
                    "responses": {"201": _json(_ANY_OBJECT), **_errors(*_WRITE, 409)},
                },
            },
        },
    }
