"""Command-line values every sub-command reads the same way: ``NAME=VALUE`` pairs, queries."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rsep.errors import UserError


def pair(item: str, option: str, shape: str = "IRI=FILE") -> tuple[str, str]:
    """Split ``NAME=VALUE`` of ``option`` (an IRI name may be written in ``<…>``)."""
    name, sep, value = item.partition("=")
    name = name.strip().removeprefix("<").removesuffix(">")
    if not sep or not name or not value.strip():
        raise UserError(f"{option} takes {shape}, not {item!r}")
    return name, value.strip()


def settings(pairs: list[str]) -> dict[str, str]:
    """``--set NAME=VALUE`` pairs as a mapping (the last one for a name wins)."""
    return dict(pair(item, "--set", "NAME=VALUE, e.g. --set r2s=istream") for item in pairs)


def read_query(query: str) -> str:
    """The text of the query file (``-``: standard input)."""
    if query == "-":
        return sys.stdin.read()
    try:
        return Path(query).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read the query {query}: {exc.strerror or exc}") from None


def query_base(query: str) -> str | None:
    """The base IRI of a query read from a file: the file's URI (RFC 3986 sec. 5.1.3, the
    retrieval URI), so that relative IRIs such as CityBench's window names ``<w1>`` name
    something; a ``BASE`` in the text wins. Standard input has none."""
    return None if query == "-" else Path(query).resolve().as_uri()


def add_query_arguments(p: Any) -> None:
    """The query file, ``--dialect`` and ``--set`` options every command that reads a query
    shares."""
    p.add_argument("query", metavar="QUERY", help="query file, or - for standard input")
    p.add_argument("--dialect", metavar="NAME", help="read the query in this dialect")
    p.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set an operational parameter (repeatable); beats the query text",
    )
