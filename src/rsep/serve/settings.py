"""What the operator of ``rsep serve`` configures: address, state folder, token, the files
and brokers queries may touch, and the limits every request and query runs under."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from rsep.errors import UserError


@dataclass(frozen=True)
class Settings:
    """The service's settings (``rsep serve --help`` tells each; docs/serve.md, "HTTP
    API"). ``allow`` holds the files and folders a query's graphs and file sinks may name,
    and the ``kafka://host:port`` brokers its sources and sinks may reach: nothing else is
    read or written on a request's behalf."""

    host: str = "127.0.0.1"
    port: int = 8080
    state: Path | None = None
    token: str | None = None
    allow: tuple[str, ...] = ()
    max_body: int = 16 * 1024 * 1024
    rate: float = 100.0
    burst: int = 200
    max_runs: int = 100_000
    max_backlog: int = 1_000_000
    max_jump: int = 3_600_000
    recent_events: int = 1_000
    recent_answers: int = 10_000
    checkpoint_every: float = 10.0
    poll: float = 1.0

    def __post_init__(self) -> None:
        for name in ("max_body", "burst", "max_runs", "max_backlog", "max_jump"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be positive")
        if self.rate < 0 or self.checkpoint_every < 0 or self.poll <= 0:
            raise UserError("--rate and --checkpoint-every are >= 0, --poll > 0")

    def allowed_path(self, path: str) -> Path:
        """``path`` resolved, when it lies in a file or folder of ``allow``; else a
        :class:`UserError` naming the option that would allow it."""
        resolved = Path(path).expanduser().resolve()
        for item in self.allow:
            if item.startswith("kafka:"):
                continue
            root = Path(item).expanduser().resolve()
            if resolved == root or resolved.is_relative_to(root):
                return resolved
        raise UserError(f"{path} is not under a file or folder the server allows (--allow)")

    def allowed_kafka(self, url: str) -> str:
        """``url`` (``kafka://host:port/topic``) when its broker is one of ``allow``."""
        from rsep.spark.kafka import KafkaAddress

        address = KafkaAddress.parse(url)
        for item in self.allow:
            if item.startswith("kafka:") and urlparse(item).netloc == address.bootstrap:
                return url
        raise UserError(f"the broker of {url} is not one the server allows (--allow kafka://…)")
