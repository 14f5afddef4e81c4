"""The results format every query writes: JSON Lines, one object per result.

- SELECT: ``{"time": ms, "bindings": {"var": "<N-Triples term>", ...}}``, plus
  ``"interval": [start, end]`` when the result is an event match;
- CONSTRUCT: ``{"time": ms, "triples": ["<s> <p> <o> .", ...]}``;
- ASK: ``{"time": ms, "boolean": true}``.

Terms are written in N-Triples syntax so that results compare exactly across engines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from pyoxigraph import Triple

from rsep.errors import InputError
from rsep.rdf.terms import Term, parse_term


@dataclass(frozen=True)
class SelectResult:
    """One solution mapping produced at ``time`` (RSP-QL Def. 17's timestamped mapping)."""

    time: int
    bindings: Mapping[str, Term]
    interval: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this result."""
        out: dict[str, Any] = {
            "time": self.time,
            "bindings": {var: str(term) for var, term in sorted(self.bindings.items())},
        }
        if self.interval is not None:
            out["interval"] = list(self.interval)
        return out


@dataclass(frozen=True)
class ConstructResult:
    """The graph a CONSTRUCT query produced at ``time``."""

    time: int
    triples: frozenset[Triple] = field(default_factory=frozenset)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this result (triples sorted, for stable output)."""
        return {"time": self.time, "triples": sorted(f"{t} ." for t in self.triples)}


@dataclass(frozen=True)
class AskResult:
    """The answer of an ASK query at ``time``."""

    time: int
    boolean: bool

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this result."""
        return {"time": self.time, "boolean": self.boolean}


Result = SelectResult | ConstructResult | AskResult


# Characters that str.splitlines() and other readers take as line breaks; JSON allows them
# raw inside strings, so they are escaped to keep one result per line.
_LINE_BREAKS = {c: f"\\u{ord(c):04x}" for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}
_ESCAPE = str.maketrans(_LINE_BREAKS)
_BREAK = re.compile("[" + "".join(_LINE_BREAKS) + "]")


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_STRING = json.encoder.encode_basestring  # what the encoder writes a str as (C when built)
_SELECT = (("time", "bindings"), ("time", "bindings", "interval"))


def json_line(obj: Mapping[str, Any]) -> str:
    """A result's JSON object (``to_json``) as its line of JSON Lines: the text of
    ``json.dumps`` with compact separators, and no line break inside whatever the terms
    hold. A SELECT result's object, the common one, is written without the general
    encoder."""
    keys = tuple(obj)
    if keys in _SELECT:
        bindings = ",".join(
            f"{_STRING(name)}:{_STRING(term)}" for name, term in obj["bindings"].items()
        )
        tail = ""
        if len(keys) == 3:
            start, end = obj["interval"]
            tail = f',"interval":[{int(start)},{int(end)}]'
        text = f'{{"time":{int(obj["time"])},"bindings":{{{bindings}}}{tail}}}'
    else:
        text = _ENCODE(obj)
    return text.translate(_ESCAPE) if _BREAK.search(text) else text


def write_results(results: Iterable[Result], out: IO[str]) -> int:
    """Write results as JSON Lines, one per line whatever the terms hold; return the count."""
    count = 0
    for result in results:
        out.write(json_line(result.to_json()) + "\n")
        count += 1
    return count


def read_results(lines: Iterable[str], file: str = "<results>") -> Iterator[Result]:
    """Parse JSON Lines results; a bad line is an :class:`InputError` naming file and line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield _result(json.loads(line))
        except (ValueError, KeyError, TypeError, SyntaxError) as exc:
            raise InputError(file, number, f"not a result: {exc}") from None


def _result(data: dict[str, Any]) -> Result:
    time = data["time"]
    if not isinstance(time, int):
        raise TypeError("'time' must be an integer (ms)")
    if "bindings" in data:
        bindings = {var: parse_term(text) for var, text in data["bindings"].items()}
        interval = data.get("interval")
        span = (int(interval[0]), int(interval[1])) if interval is not None else None
        return SelectResult(time, bindings, span)
    if "triples" in data:
        triples = set()
        for text in data["triples"]:
            s, p, o = (parse_term(part) for part in _split_triple(text))
            triples.add(Triple(s, p, o))  # type: ignore[arg-type]
        return ConstructResult(time, frozenset(triples))
    if "boolean" in data:
        if not isinstance(data["boolean"], bool):
            raise TypeError("'boolean' must be true or false")
        return AskResult(time, data["boolean"])
    raise KeyError("one of 'bindings', 'triples' or 'boolean'")


def _split_triple(text: str) -> tuple[str, str, str]:
    from pyoxigraph import RdfFormat, parse

    [quad] = list(parse(input=text.encode(), format=RdfFormat.N_TRIPLES))
    return str(quad.subject), str(quad.predicate), str(quad.object)
