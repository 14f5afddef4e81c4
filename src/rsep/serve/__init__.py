"""``rsep serve``: continuous queries of any dialect behind HTTP and WebSocket (docs/serve.md).

- :mod:`~rsep.serve.settings`: what the operator configures (address, state, token,
  allowed files and brokers, limits);
- :mod:`~rsep.serve.service`: the registry of streams and queries, each query an
  :class:`rsep.Incremental` fed every push parsed once, with its state kept for a restart;
- :mod:`~rsep.serve.app`: the Starlette application (JSON under ``/api``, answers over
  WebSocket and Server-Sent Events, health, metrics, OpenAPI);
- :mod:`~rsep.serve.openapi`: the OpenAPI description.
"""

from __future__ import annotations

from rsep.serve.app import create_app
from rsep.serve.service import Service
from rsep.serve.settings import Settings

__all__ = ["Service", "Settings", "create_app"]
