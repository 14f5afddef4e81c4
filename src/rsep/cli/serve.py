"""``rsep serve``: register streams and continuous queries of any dialect on a running
engine, push events over HTTP or WebSocket, and read answers over WebSocket or
Server-Sent Events (:mod:`rsep.serve`; docs/serve.md)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

from rsep.errors import UserError


def add_parser(commands: Any) -> None:
    """Register ``rsep serve``."""
    p = commands.add_parser(
        "serve",
        help="serve continuous queries over HTTP and WebSocket, with a dashboard",
        description=(
            "Start the HTTP and WebSocket service: register streams and queries (any "
            "dialect), push events, read answers as they come (docs/serve.md)."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free)")
    p.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="keep registered streams and queries and each query's engine state here: a "
        "server started again with DIR continues (default: nothing kept)",
    )
    p.add_argument(
        "--token",
        default=os.environ.get("RSEP_TOKEN"),
        help="bearer token every write (POST, DELETE, pushing WebSocket) must carry "
        "(default: $RSEP_TOKEN; none: writes are open, for a loopback address)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="FILE|DIR|kafka://HOST:PORT",
        help="a file or folder queries may read graphs from, streams may read arriving "
        "files from, and file sinks may write to; or a Kafka broker sinks may write to "
        "(repeatable; default: none)",
    )
    p.add_argument(
        "--max-body",
        type=int,
        default=16 * 1024 * 1024,
        metavar="BYTES",
        help="largest request body (default 16 MiB; beyond: 413)",
    )
    p.add_argument(
        "--rate",
        type=float,
        default=100.0,
        metavar="N",
        help="writes per second per client (default 100, bursts of --burst; "
        "beyond: 429; 0: no limit)",
    )
    p.add_argument(
        "--burst",
        type=int,
        default=200,
        metavar="N",
        help="writes a client may make at once (default 200)",
    )
    p.add_argument(
        "--max-runs",
        type=int,
        default=100_000,
        metavar="N",
        help="the most partial matches a query may hold (its max_runs; default "
        "100000): a query asking more is refused, one reaching it fails alone",
    )
    p.add_argument(
        "--max-backlog",
        type=int,
        default=1_000_000,
        metavar="TRIPLES",
        help="triples kept for a paused query (default 1000000; beyond, it fails)",
    )
    p.add_argument(
        "--max-jump",
        type=int,
        default=3_600_000,
        metavar="MS",
        help="the furthest a push or the watermark may move time ahead of the latest event "
        "(default 3600000, an hour; beyond: 400): a query decides every instant a window "
        "closes at on the way",
    )
    p.add_argument(
        "--checkpoint-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how often pushes checkpoint the queries' state under --state (default 10; "
        "0: after every push; a clean stop always does; after a kill the pushes since the "
        "last checkpoint are lost)",
    )
    p.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often the streams' folders are read (default 1)",
    )
    p.set_defaults(run=run)


def settings_of(args: argparse.Namespace) -> Any:
    """The service's settings from the command's options."""
    from rsep.serve.settings import Settings

    return Settings(
        host=args.host,
        port=args.port,
        state=args.state,
        token=args.token or None,
        allow=tuple(args.allow),
        max_body=args.max_body,
        rate=args.rate,
        burst=args.burst,
        max_runs=args.max_runs,
        max_backlog=args.max_backlog,
        max_jump=args.max_jump,
        checkpoint_every=args.checkpoint_every,
        poll=args.poll,
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; the state is kept under ``--state`` at the end."""
    import uvicorn

    from rsep.serve import create_app

    settings = settings_of(args)
    if settings.token is None and not _loopback(settings.host):
        raise UserError(
            f"--host {settings.host} reaches other machines: give --token (or $RSEP_TOKEN) "
            "so that only its holders write"
        )
    for item in settings.allow:
        if not item.startswith("kafka:") and not Path(item).exists():
            raise UserError(f"--allow {item}: no such file or folder")
    app = create_app(settings)
    print(
        f"rsep serve: http://{settings.host}:{settings.port}/ (API under /api, "
        f"state {settings.state or 'not kept'})",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", ws="websockets")
    return 0


def _loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
