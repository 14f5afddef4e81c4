"""RSEP-QL: RSP-QL with event patterns (``grammar/rsepql.lark``, on top of RSP-QL's).

Paper: A Query Model to Capture Event Pattern Matching in RDF Stream Processing Query
Languages (seed 000). The paper gives an algebra, not a concrete syntax; rsep's syntax is
documented in docs/languages.md and ``rsepql.lark``: ``MATCH [SELECTION s CONSUMPTION c] (E)``
is a graph pattern (the event graph pattern, Sect. 3.3) over basic event patterns ``EVENT
w { BGP }``, ``FIRST E``, ``LAST E`` and ``E1 SEQ E2``; landmark and interval windows (Sect.
3.1) are written ``[LANDMARK T0 t]`` and ``[FROM t1 TO t2]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from lark import v_args
from lark.tree import Meta

from rsep.lang import ast
from rsep.lang.build import Builder, Children, _pos
from rsep.lang.dialects import Cues, Default, keyword_cue
from rsep.lang.dialects.rspql import RspQl, RspQlBuilder, RspQlPrinter
from rsep.lang.dialects.stream import semantic_error
from rsep.lang.printer import INDENT, Printer

SELECTION_POLICIES = ("unrestricted", "chronological", "recent", "naive")
"""Sect. 4.3: the selection policies of SEQ (C-SPARQL's naive one included)."""
CONSUMPTION_POLICIES = ("none", "chronological", "recent")
"""Sect. 4.4: the consumption policies (``none`` is P^u)."""


# The event patterns (Sect. 3.3) -----------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class EventPattern(ast.Node):
    """An event pattern E (Sect. 3.3): basic, FIRST, LAST or SEQ."""


@dataclass(frozen=True, slots=True, eq=False)
class BasicEvent(EventPattern):
    """``EVENT w { BGP }``: the basic event pattern (EVENT w P), matched against each item of
    window ``w`` on its own (Sect. 3.3)."""

    window: ast.Var | ast.Iri
    triples: tuple[ast.Triples, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class First(EventPattern):
    """``FIRST E``: the earliest matches of E (Sect. 3.3)."""

    event: EventPattern


@dataclass(frozen=True, slots=True, eq=False)
class Last(EventPattern):
    """``LAST E``: the latest matches of E (Sect. 3.3)."""

    event: EventPattern


@dataclass(frozen=True, slots=True, eq=False)
class EventSeq(EventPattern):
    """``E1 SEQ E2``: a match of E1 followed by a compatible match of E2 (Sect. 3.3, Eq.
    (7)); left-associative."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True, eq=False)
class Match(ast.Pattern):
    """``MATCH [SELECTION s CONSUMPTION c] ( E )``: the event graph pattern (MATCH E) of
    Sect. 3.3, a graph pattern; its selection (Sect. 4.3) and consumption (Sect. 4.4)
    policies, None when not written (then PRAGMA or the defaults apply)."""

    event: EventPattern
    selection: str | None = field(default=None, kw_only=True)
    consumption: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.selection is not None and self.selection not in SELECTION_POLICIES:
            raise ValueError(f"not a selection policy: {self.selection!r}")
        if self.consumption is not None and self.consumption not in CONSUMPTION_POLICIES:
            raise ValueError(f"not a consumption policy: {self.consumption!r}")


@dataclass(frozen=True, slots=True)
class _Policy:
    kind: str
    value: str
    meta: Meta


@v_args(meta=True)
class RsepQlBuilder(RspQlBuilder):
    """The AST of ``rsepql.lark``."""

    def event_graph_pattern(self, meta: Meta, children: Children) -> Match:
        """``MATCH [policies] ( E )`` (Sect. 3.3, 4.3, 4.4)."""
        *policies, event = children
        given: dict[str, str] = {}
        for policy in policies[0] if policies else ():
            if policy.kind in given:
                raise semantic_error(f"{policy.kind.upper()} is given twice", policy.meta)
            given[policy.kind] = policy.value
        return Match(event, pos=_pos(meta), **given)

    def event_policies(self, meta: Meta, children: Children) -> list[_Policy]:
        """``[SELECTION s CONSUMPTION c]``, in any order."""
        return list(children)

    def selection_policy(self, meta: Meta, children: Children) -> _Policy:
        """``SELECTION s`` (Sect. 4.3)."""
        return _Policy("selection", str(children[0]).lower(), meta)

    def consumption_policy(self, meta: Meta, children: Children) -> _Policy:
        """``CONSUMPTION c`` (Sect. 4.4)."""
        return _Policy("consumption", str(children[0]).lower(), meta)

    def event_seq(self, meta: Meta, children: Children) -> EventSeq:
        """``E1 SEQ E2``."""
        return EventSeq(children[0], children[1], pos=_pos(meta))

    def first_event(self, meta: Meta, children: Children) -> First:
        """``FIRST E``."""
        return First(children[0], pos=_pos(meta))

    def last_event(self, meta: Meta, children: Children) -> Last:
        """``LAST E``."""
        return Last(children[0], pos=_pos(meta))

    def basic_event_pattern(self, meta: Meta, children: Children) -> BasicEvent:
        """``EVENT w { BGP }``."""
        window, *block = children
        triples = block[0].triples if block else ()
        return BasicEvent(window, triples, pos=_pos(meta))


class RsepQlPrinter(RspQlPrinter):
    """RSEP-QL text: ``MATCH [SELECTION s CONSUMPTION c] ( … )``."""

    def pattern_match(self, match: Match, depth: int) -> str:
        """``MATCH [policies] ( E )``."""
        policies = []
        if match.selection is not None:
            policies.append(f"SELECTION {match.selection}")
        if match.consumption is not None:
            policies.append(f"CONSUMPTION {match.consumption}")
        head = f"MATCH [{' '.join(policies)}] " if policies else "MATCH "
        return f"{head}( {self.event(match.event, depth)} )"

    def event(self, event: EventPattern, depth: int) -> str:
        """An event pattern; the right operand of SEQ in parentheses when it is a SEQ."""
        if isinstance(event, EventSeq):
            right = self.event(event.right, depth)
            if isinstance(event.right, EventSeq):
                right = f"( {right} )"
            return f"{self.event(event.left, depth)} SEQ {right}"
        if isinstance(event, First | Last):
            inner = self.event(event.event, depth)
            if isinstance(event.event, EventSeq):
                inner = f"( {inner} )"
            return f"{'FIRST' if isinstance(event, First) else 'LAST'} {inner}"
        if isinstance(event, BasicEvent):
            if not event.triples:
                return f"EVENT {self.name(event.window)} {{ }}"
            lines = self._triples_lines(event.triples, depth + 1)
            close = INDENT * depth
            return f"EVENT {self.name(event.window)} {{\n{INDENT * (depth + 1)}{lines}\n{close}}}"
        raise NotImplementedError(f"no event printer for {type(event).__name__}")


_RSPQL = RspQl.defaults.items()


class RsepQl(RspQl):
    """RSP-QL plus ``MATCH [...] ( EVENT <w1> {...} SEQ FIRST EVENT <w2> {...} )``."""

    name = "rsepql"
    title = "RSEP-QL"
    grammar = "rsepql.lark"
    keywords = RspQl.keywords | frozenset(
        {"MATCH", "EVENT", "FIRST", "LAST", "SEQ", "SELECTION", "CONSUMPTION", "LANDMARK"}
    )
    cues: ClassVar[Cues] = (
        keyword_cue("MATCH", then=r" ?[\[(]"),
        keyword_cue("EVENT", then=r" ?(?:<>|[?$]\w|[\w.-]*:)"),
    )
    defaults: ClassVar[Mapping[str, Default]] = {
        **{name: (value, f"as RSP-QL (seed 003): {why}") for name, (value, why) in _RSPQL},
        "window.report": (
            "window_close,non_empty",
            "ET is left to report policies (Def. 5 and the text after it); rsep keeps "
            "RSP-QL's, on which RSEP-QL builds (Sect. 3)",
        ),
        "window.present": (
            "last_ended",
            "the time-based window W^τ reads the last window that has closed (Sect. 3.1, "
            "Examples 2, 5, 7; docs/semantics.md, item 3)",
        ),
        "profile": (
            "none",
            "RSEP-QL is a query model, not an engine: its windows and policies are the "
            "paper's (Sect. 3-4), under no engine's reporting conventions",
        ),
        "strategy": (
            "skip_till_any",
            "E1 SEQ E2 pairs a match of E2 with every compatible earlier match of E1, "
            "whatever lies between them (Eq. (7), Sect. 4.2)",
        ),
        "selection": (
            "unrestricted",
            "plain SEQ takes all possible matches, EP-SPARQL's unrestricted setting "
            "(Sect. 4.3, first paragraph; Table 1)",
        ),
        "consumption": (
            "none",
            "the unrestricted policy P^u returns the full input at every evaluation "
            "(Sect. 4.4, Def. 10)",
        ),
        "timestamps": (
            "point",
            "a stream item is a timestamped graph (G, t) (Def. 1); event mappings (μ, t1, t2) "
            "are derived, not input",
        ),
    }

    builder: ClassVar[type[Builder]] = RsepQlBuilder
    printer: ClassVar[type[Printer]] = RsepQlPrinter


DIALECT = RsepQl()
